# C++ binding (bindings/cpp/hermes_tools.hpp): tests and example.
#   make test-cpp      build the C++ test plain and with ASan/UBSan, run both
#   make example-cpp   build and run examples/cpp/agent_host.cpp

CXX      ?= c++
CPP_STD  := -std=c++17
CPP_WARN := -Wall -Wextra -Werror
CPP_INC  := -Iinclude -Ibindings/cpp
CPP_LINK := -L$(LIBDIR) -Wl,-rpath,$(CURDIR)/$(LIBDIR) -lhermes_tools -pthread
CPP_TEST_SRC := bindings/cpp/test/test_hermes_tools.cpp
CPP_DEPS := bindings/cpp/hermes_tools.hpp include/hermes_tools.h

.PHONY: test-cpp test-cpp-plain test-cpp-asan test-cpp20 test-cpp-no-json example-cpp

test-cpp: test-cpp-plain test-cpp-asan test-cpp20 test-cpp-no-json

# The same test without nlohmann/json (HERMES_TOOLS_NO_NLOHMANN): the
# binding's core API must not depend on it.
test-cpp-no-json: ht-lib
	$(CXX) $(CPP_STD) $(CPP_WARN) -g -DHERMES_TOOLS_NO_NLOHMANN $(CPP_INC) $(CPP_TEST_SRC) -o $(BUILD)/test_cpp_binding_nojson $(CPP_LINK)
	./$(BUILD)/test_cpp_binding_nojson

# The same test as C++20: Call::stop_token() (std::stop_token) instead of on_cancel.
test-cpp20: ht-lib
	$(CXX) -std=c++20 $(CPP_WARN) -g $(CPP_INC) $(CPP_TEST_SRC) -o $(BUILD)/test_cpp20_binding $(CPP_LINK)
	./$(BUILD)/test_cpp20_binding

test-cpp-plain: ht-lib
	$(CXX) $(CPP_STD) $(CPP_WARN) -g $(CPP_INC) $(CPP_TEST_SRC) -o $(BUILD)/test_cpp_binding $(CPP_LINK)
	./$(BUILD)/test_cpp_binding

# LSan reports leaks in the Rust library's process-lifetime statics; the
# binding's own leaks are covered by the release-exactly-once tests.
test-cpp-asan: ht-lib
	$(CXX) $(CPP_STD) $(CPP_WARN) -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined \
	  $(CPP_INC) $(CPP_TEST_SRC) -o $(BUILD)/test_cpp_binding_asan $(CPP_LINK)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ./$(BUILD)/test_cpp_binding_asan

example-cpp: ht-lib
	$(CXX) $(CPP_STD) $(CPP_WARN) $(CPP_INC) examples/cpp/agent_host.cpp -o $(BUILD)/agent_host_cpp $(CPP_LINK)
	./$(BUILD)/agent_host_cpp

BINDING_TESTS += test-cpp

# Optional (slow, not part of make test): the plain build under valgrind;
# fails on memory errors and definite leaks.
.PHONY: test-cpp-valgrind
test-cpp-valgrind: test-cpp-plain
	valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite -q ./$(BUILD)/test_cpp_binding

# Eight async calls of a 300 ms sync handler against the batch (issue 29).
.PHONY: bench-cpp-handlers
bench-cpp-handlers: ht-lib
	$(CXX) $(CPP_STD) $(CPP_WARN) -O2 $(CPP_INC) benches/cpp/sync_handlers.cpp -o $(BUILD)/bench_cpp_handlers $(CPP_LINK)
	./$(BUILD)/bench_cpp_handlers
