// C++ contract test: the header compiles as C++17, callbacks can be lambdas
// without captures, answers come from std::thread, exceptions never cross.
#include "hermes_tools.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

#define CHECK(cond)                                                             \
  do {                                                                          \
    if (!(cond)) {                                                              \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      std::exit(1);                                                             \
    }                                                                           \
  } while (0)

static std::atomic<int> frees{0};

struct Counter {
  std::atomic<int> calls{0};
};

int main() {
  CHECK(ht_abi_version() == HT_ABI_VERSION);
  ht_runtime *rt = nullptr;
  ht_error *err = nullptr;
  CHECK(ht_runtime_new("{}", 2, &rt, &err) == HT_STATUS_OK);

  auto *counter = new Counter();
  std::string spec =
      R"({"name":"echo","toolset":"cpp","parallel_safe":true,"schema":{"description":"Echo text",)"
      R"("parameters":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}})";
  auto handler = [](void *ud, ht_call *call) {
    static_cast<Counter *>(ud)->calls++;
    size_t n = 0;
    const char *args = ht_call_args_json(call, &n);
    std::string copy(args, n);  // borrowed: copy before answering elsewhere
    std::thread([call, copy]() {
      try {
        if (copy.find("throw") != std::string::npos) throw std::runtime_error("boom");
        ht_call_respond(call, false, copy.data(), copy.size());
      } catch (const std::exception &e) {
        ht_call_respond(call, true, e.what(), std::strlen(e.what()));
      }
    }).detach();
  };
  auto free_fn = [](void *ud) {
    delete static_cast<Counter *>(ud);
    frees++;
  };
  CHECK(ht_runtime_register_tool(rt, spec.data(), spec.size(), handler, nullptr, counter, free_fn, &err) ==
        HT_STATUS_OK);

  char *out = nullptr;
  size_t n = 0;
  std::string args = R"({"text":"hi"})";
  CHECK(ht_runtime_dispatch(rt, "echo", 4, args.data(), args.size(), nullptr, 0, &out, &n, &err) ==
        HT_STATUS_OK);
  CHECK(std::string(out, n) == args);
  ht_string_free(out);

  args = R"({"text":"throw"})";
  CHECK(ht_runtime_dispatch(rt, "echo", 4, args.data(), args.size(), nullptr, 0, &out, &n, &err) ==
        HT_STATUS_OK);
  CHECK(std::string(out, n).find("[TOOL_ERROR] boom") != std::string::npos);
  ht_string_free(out);

  // Many threads dispatching at once.
  std::atomic<int> ok{0};
  std::thread workers[4];
  for (auto &w : workers) {
    w = std::thread([&] {
      for (int i = 0; i < 50; i++) {
        char *o = nullptr;
        size_t len = 0;
        std::string a = R"({"text":"x"})";
        if (ht_runtime_dispatch(rt, "echo", 4, a.data(), a.size(), nullptr, 0, &o, &len, nullptr) ==
                HT_STATUS_OK &&
            std::string(o, len) == a)
          ok++;
        ht_string_free(o);
      }
    });
  }
  for (auto &w : workers) w.join();
  CHECK(ok == 200);

  ht_runtime_free(rt);
  CHECK(frees == 1);
  std::printf("cpp contract: ok\n");
  return 0;
}
