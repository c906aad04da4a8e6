// Issue 29: eight concurrent calls of a sync handler that waits 300 ms,
// through dispatch_async, against the same eight calls in one batch (goal:
// within 1.2x of the batch), and with concurrent = false (one at a time).
//
//   make bench-cpp-handlers
#include "hermes_tools.hpp"

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace ht = hermes_tools;
using Clock = std::chrono::steady_clock;

static double run_async(bool concurrent) {
  ht::Runtime rt(R"({"dispatch":{"timeout":10}})");
  rt.register_tool(
      ht::tool_spec("wait", "cpp", "Wait 300 ms"),
      [](const ht::Call &) {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        return std::string("\"done\"");
      },
      {}, concurrent);
  auto t = Clock::now();
  std::vector<std::future<std::string>> futs;
  for (int i = 0; i < 8; i++) futs.push_back(rt.dispatch_async("wait", "{}"));
  for (auto &f : futs) f.get();
  return std::chrono::duration<double>(Clock::now() - t).count();
}

int main() {
  ht::Runtime rt(R"({"dispatch":{"timeout":10}})");
  rt.register_tool(ht::tool_spec("wait", "cpp", "Wait 300 ms", "{}", true), [](const ht::Call &) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    return std::string("\"done\"");
  });
  std::string calls = "[";
  for (int i = 0; i < 8; i++) {
    if (i) calls += ",";
    calls += R"({"id":"c)" + std::to_string(i) + R"(","type":"function","function":{"name":"wait","arguments":"{}"}})";
  }
  calls += "]";
  auto t = Clock::now();
  rt.dispatch_batch(calls);
  double batch = std::chrono::duration<double>(Clock::now() - t).count();
  double conc = run_async(true);
  double serial = run_async(false);
  std::printf("8 x 300 ms sync handler: batch %.3f s, dispatch_async %.3f s (%.2fx the batch, goal <= 1.2x), concurrent=false %.3f s\n",
              batch, conc, conc / batch, serial);
}
