# The minimal library (Cargo features off: no MCP, no HTTPS, no PTY) builds,
# keeps the whole C ABI, and refuses what a missing feature would do with a
# message naming it (tests/c/features_minimal.c). A target folder of its own,
# so target/debug keeps the full library the other suites load.
#   make test-features
MINIMAL_DIR := target/minimal

.PHONY: test-features

test-features: | setup-check
	$(CARGO) build -p hermes-tools --no-default-features --target-dir $(MINIMAL_DIR)
	mkdir -p $(BUILD)
	$(CC) -std=c11 -Wall -Wextra -Werror -Iinclude tests/c/features_minimal.c -o $(BUILD)/features_minimal \
	  -L$(MINIMAL_DIR)/debug -Wl,-rpath,$(CURDIR)/$(MINIMAL_DIR)/debug -lhermes_tools
	./$(BUILD)/features_minimal

BINDING_TESTS += test-features
