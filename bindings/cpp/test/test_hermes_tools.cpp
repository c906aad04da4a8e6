// Tests for the C++ binding (bindings/cpp/hermes_tools.hpp).
// Built with -Wall -Wextra -Werror, plain and with -fsanitize=address,undefined
// (make test-cpp). Each TEST prints one line; any failed CHECK exits non-zero.
#include "hermes_tools.hpp"

#include <atomic>
#include <cstdlib>
#include <unistd.h>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>
#include <map>
#include <spawn.h>
#include <sys/wait.h>
#include <signal.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <cctype>

extern char **environ;

namespace ht = hermes_tools;
using namespace std::chrono_literals;

static int g_checks = 0;
static int g_tests = 0;

#define CHECK(cond)                                                                    \
  do {                                                                                 \
    ++g_checks;                                                                        \
    if (!(cond)) {                                                                     \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);    \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)

#define CONTAINS(hay, needle) CHECK(std::string(hay).find(needle) != std::string::npos)

template <class F>
static void expect_error(ht::Status want, F &&f, const char *needle = nullptr) {
  try {
    f();
  } catch (const ht::Error &e) {
    if (e.status() != want)
      std::fprintf(stderr, "got %s: %s\n", ht::status_name(e.status()), e.what());
    CHECK(e.status() == want);
    if (needle != nullptr) CONTAINS(e.what(), needle);
    return;
  }
  std::fprintf(stderr, "expected an ht::Error(%s)\n", ht::status_name(want));
  CHECK(false);
}

#define TEST(name) static void name()
#define RUN(name)                                \
  do {                                           \
    name();                                      \
    ++g_tests;                                   \
    std::printf("ok - %s\n", #name);             \
    std::fflush(stdout);                         \
  } while (0)

static const std::string ECHO_PARAMS =
    R"({"type":"object","properties":{"text":{"type":"string"}},"required":["text"]})";

// Counts how often a tracked object is destroyed: proves the heap std::function
// (and everything it captured) is released exactly once.
struct Tracker {
  std::atomic<int> *destroyed;
  explicit Tracker(std::atomic<int> *d) : destroyed(d) {}
  ~Tracker() { ++*destroyed; }
};

TEST(versions_and_features) {
  ht::check_abi();
  CHECK(ht::version() == std::string("hermes-tools/") + HT_VERSION);
  CONTAINS(ht::features(), "\"abi\":1");
  CHECK(std::string(ht::status_name(ht::Status::NotFound)) == "not_found");
}

TEST(json_helpers) {
  CHECK(ht::json_string("a\"b\\c\n\x01") == "\"a\\\"b\\\\c\\n\\u0001\"");
  std::string spec = ht::tool_spec("t", "s", "say \"hi\"", ECHO_PARAMS, true);
  CONTAINS(spec, R"("description":"say \"hi\"")");
  CONTAINS(spec, R"("parallel_safe":true)");
  ht::Runtime rt;
  rt.register_tool(spec, [](const ht::Call &) { return std::string("\"x\""); });
}

TEST(config_errors_carry_status) {
  expect_error(ht::Status::InvalidJson, [] { ht::Runtime rt(R"({"dispatch":{"timeoutt":1}})"); }, "timeoutt");
  expect_error(ht::Status::InvalidJson, [] { ht::Runtime rt("{"); });
}

TEST(sync_handler_and_call_accessors) {
  ht::Runtime rt;
  std::string seen_name, seen_ctx;
  rt.register_tool(ht::tool_spec("echo", "cpp", "Echo", ECHO_PARAMS, true), [&](const ht::Call &c) {
    seen_name = std::string(c.tool_name());
    seen_ctx = std::string(c.context_json());
    return std::string(c.args_json());
  });
  CHECK(rt.dispatch("echo", R"({"text":"hi"})") == R"({"text":"hi"})");
  CHECK(seen_name == "echo");
  CHECK(seen_ctx == "{}");
  CHECK(rt.dispatch("echo", R"({"text":"x"})", R"({"task_id":"t1"})") == R"({"text":"x"})");
  CONTAINS(seen_ctx, "\"task_id\":\"t1\"");
  // Argument validation and unknown tools come back as error text, not exceptions.
  CONTAINS(rt.dispatch("echo", "{}"), "missing required property 'text'");
  CONTAINS(rt.dispatch("ech", "{}"), "Unknown tool: ech");
  // Invalid UTF-8 in the name is an API error.
  expect_error(ht::Status::InvalidUtf8, [&] { rt.dispatch(std::string("e\xff"), "{}"); });
}

TEST(exceptions_never_cross) {
  ht::Runtime rt;
  rt.register_tool(ht::tool_spec("boom", "cpp", "throws"),
                   [](const ht::Call &) -> std::string { throw std::runtime_error("disk full"); });
  rt.register_tool(ht::tool_spec("boom2", "cpp", "throws an int"),
                   [](const ht::Call &) -> std::string { throw 42; });
  rt.register_tool_async(ht::tool_spec("boom3", "cpp", "async throws"),
                         [](ht::Call &&) { throw std::logic_error("async fail"); });
  CONTAINS(rt.dispatch("boom"), "[TOOL_ERROR] disk full");
  CONTAINS(rt.dispatch("boom2"), "unknown C++ exception");
  CONTAINS(rt.dispatch("boom3"), "async fail");
  // A throwing check means "unavailable".
  rt.register_tool(
      ht::tool_spec("hidden", "cpp", "never offered"), [](const ht::Call &) { return std::string("{}"); },
      []() -> bool { throw std::runtime_error("check broke"); });
  rt.register_tool(
      ht::tool_spec("shown", "cpp", "offered"), [](const ht::Call &) { return std::string("{}"); },
      [] { return true; });
  std::string defs = rt.definitions();
  CHECK(defs.find("hidden") == std::string::npos);
  CONTAINS(defs, "\"shown\"");
}

TEST(async_handler_answers_from_thread) {
  ht::Runtime rt;
  rt.register_tool_async(ht::tool_spec("later", "cpp", "answers later", ECHO_PARAMS), [](ht::Call &&call) {
    std::thread([c = std::move(call)]() mutable {
      std::this_thread::sleep_for(10ms);
      std::string args(c.args_json());
      CHECK(c.respond(args) == ht::Status::Ok);
      CHECK(!c.pending());
      CHECK(c.respond("again") == ht::Status::NotFound);
    }).detach();
  });
  CHECK(rt.dispatch("later", R"({"text":"a"})") == R"({"text":"a"})");
  auto fut = rt.dispatch_async("later", R"({"text":"b"})");
  CHECK(fut.wait_for(5s) == std::future_status::ready);
  CHECK(fut.get() == R"({"text":"b"})");
  // A dropped call answers with an error instead of hanging the dispatch.
  rt.register_tool_async(ht::tool_spec("drops", "cpp", "drops the call"), [](ht::Call &&) {});
  CONTAINS(rt.dispatch("drops"), "without answering");
  // respond_error is wrapped as {"error": ...}.
  rt.register_tool_async(ht::tool_spec("err", "cpp", "answers with error"),
                         [](ht::Call &&c) { c.respond_error("nope"); });
  CONTAINS(rt.dispatch("err"), "\"error\"");
  CONTAINS(rt.dispatch("err"), "nope");
}

// Issue 11: a handler waiting on its cancellation returns promptly when the
// call times out (on_cancel in C++17, std::stop_token in C++20).
TEST(cancellation_reaches_the_handler) {
  ht::Runtime rt(R"({"dispatch":{"timeout":0.1}})");
  auto woke = std::make_shared<std::promise<std::pair<double, ht::Status>>>();
  auto fut = woke->get_future();
  rt.register_tool_async(ht::tool_spec("waits", "cpp", "waits for its cancellation"), [woke](ht::Call &&call) {
    CHECK(!call.cancelled());
    auto mu = std::make_shared<std::mutex>();
    auto cv = std::make_shared<std::condition_variable>();
    auto flag = std::make_shared<bool>(false);
#ifdef HT_CPP_HAS_STOP_TOKEN
    std::stop_token tok = call.stop_token();
    auto cb = std::make_shared<std::stop_callback<std::function<void()>>>(tok, std::function<void()>([mu, cv, flag] {
      std::lock_guard<std::mutex> g(*mu);
      *flag = true;
      cv->notify_all();
    }));
    std::shared_ptr<void> keep = cb;  // the stop_callback lives as long as the worker
#else
    std::shared_ptr<void> keep;
    CHECK(call.on_cancel([mu, cv, flag] {
      std::lock_guard<std::mutex> g(*mu);
      *flag = true;
      cv->notify_all();
    }) == ht::Status::Ok);
#endif
    std::thread([c = std::move(call), woke, mu, cv, flag, keep]() mutable {
      auto t0 = std::chrono::steady_clock::now();
      {
        std::unique_lock<std::mutex> l(*mu);
        cv->wait_for(l, 20s, [&] { return *flag; });
      }
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      CHECK(c.cancelled());
      woke->set_value({secs, c.respond("too late")});
    }).detach();
  });
  CONTAINS(rt.dispatch("waits"), "\"status\":\"timeout\"");
  CHECK(fut.wait_for(5s) == std::future_status::ready);
  auto got = fut.get();
  CHECK(got.first < 2.0);
  CHECK(got.second == ht::Status::Timeout);
}

TEST(progress_reaches_the_event_handler) {
  ht::Runtime rt;
  auto got = std::make_shared<std::promise<std::string>>();
  auto fut = got->get_future();
  auto once = std::make_shared<std::atomic<bool>>(false);
  rt.set_event_handler([got, once](std::string_view e) {
    if (e.find("\"tool.progress\"") != std::string_view::npos && !once->exchange(true)) got->set_value(std::string(e));
  });
  rt.register_tool(ht::tool_spec("long", "cpp", "reports progress"), [](const ht::Call &c) {
    CHECK(c.progress(1, 4, "a quarter") == ht::Status::Ok);
    return std::string("done");
  });
  CHECK(rt.dispatch("long", "{}", R"({"tool_call_id":"call_1"})") == "done");
  CHECK(fut.wait_for(5s) == std::future_status::ready);
  std::string e = fut.get();
  CONTAINS(e, "\"tool_call_id\":\"call_1\"");
  CONTAINS(e, "\"message\":\"a quarter\"");
}

TEST(callback_resources_released_exactly_once) {
  std::atomic<int> destroyed{0};
  {
    ht::Runtime rt;
    auto a = std::make_shared<Tracker>(&destroyed);
    auto b = std::make_shared<Tracker>(&destroyed);
    auto c = std::make_shared<Tracker>(&destroyed);
    auto d = std::make_shared<Tracker>(&destroyed);
    auto e = std::make_shared<Tracker>(&destroyed);
    rt.register_tool(
        ht::tool_spec("t1", "cpp", "one"), [a](const ht::Call &) { return std::string("1"); },
        [a] { return true; });
    rt.register_tool(ht::tool_spec("t2", "cpp", "two"), [b](const ht::Call &) { return std::string("2"); });
    rt.add_hook("post_tool_call", [c](std::string_view) { return std::string(); });
    rt.set_event_handler([d](std::string_view) {});
    rt.register_tool_async(ht::tool_spec("t3", "cpp", "three"), [e](ht::Call &&call) { call.respond("3"); });
    a.reset();
    b.reset();
    c.reset();
    d.reset();
    e.reset();
    CHECK(destroyed == 0);
    CHECK(rt.dispatch("t1") == "1");
    CHECK(rt.dispatch("t3") == "3");
    // Deregistration releases t1's closure (handler + check share one heap block).
    rt.deregister_tool("t1");
    for (int i = 0; i < 200 && destroyed < 1; i++) std::this_thread::sleep_for(5ms);
    CHECK(destroyed == 1);
    // Replacing t2 in the same toolset releases the old closure.
    std::atomic<int> destroyed2{0};
    auto f = std::make_shared<Tracker>(&destroyed2);
    rt.register_tool(ht::tool_spec("t2", "cpp", "two again"),
                     [f](const ht::Call &) { return std::string("2b"); });
    f.reset();
    for (int i = 0; i < 200 && destroyed < 2; i++) std::this_thread::sleep_for(5ms);
    CHECK(destroyed == 2);
    CHECK(rt.dispatch("t2") == "2b");
    // Clearing the event handler releases it.
    rt.set_event_handler({});
    for (int i = 0; i < 200 && destroyed < 3; i++) std::this_thread::sleep_for(5ms);
    CHECK(destroyed == 3);
    rt.close();  // releases the hook, t3 and the replacement t2
    CHECK(destroyed == 5);
    CHECK(destroyed2 == 1);
    rt.close();  // idempotent
  }
  CHECK(destroyed == 5);
  // A failed registration does not take (or leak, or double-free) the closure.
  std::atomic<int> destroyed3{0};
  {
    ht::Runtime rt;
    auto g = std::make_shared<Tracker>(&destroyed3);
    expect_error(ht::Status::InvalidJson, [&] {
      rt.register_tool("{not json", [g](const ht::Call &) { return std::string(); });
    });
    CHECK(g.use_count() == 1);  // the temporary std::function was destroyed by us, once
  }
  CHECK(destroyed3 == 1);
}

TEST(dispatch_async_future_and_callback) {
  ht::Runtime rt(R"({"dispatch":{"timeout":5}})");
  rt.register_tool(ht::tool_spec("echo", "cpp", "Echo", ECHO_PARAMS, true),
                   [](const ht::Call &c) { return std::string(c.args_json()); });
  std::vector<std::future<std::string>> futs;
  for (int i = 0; i < 50; i++) futs.push_back(rt.dispatch_async("echo", R"({"text":")" + std::to_string(i) + "\"}"));
  for (int i = 0; i < 50; i++) CHECK(futs[i].get() == R"({"text":")" + std::to_string(i) + "\"}");

  std::mutex mu;
  std::promise<std::pair<ht::Status, std::string>> done;
  auto caller = std::this_thread::get_id();
  std::atomic<int> calls{0};
  std::thread::id cb_thread;
  uint64_t id = rt.dispatch_async_cb("echo", R"({"text":"cb"})", {}, [&](ht::Status st, std::string_view r) {
    std::lock_guard<std::mutex> lock(mu);
    cb_thread = std::this_thread::get_id();
    ++calls;
    done.set_value({st, std::string(r)});
  });
  CHECK(id != 0);
  auto res = done.get_future().get();
  CHECK(res.first == ht::Status::Ok);
  CHECK(res.second == R"({"text":"cb"})");
  std::this_thread::sleep_for(10ms);
  CHECK(calls == 1);
  {
    std::lock_guard<std::mutex> lock(mu);
    CHECK(cb_thread != caller);
  }
  expect_error(ht::Status::InvalidArgument, [&] { rt.dispatch_async_cb("echo", "{}", {}, {}); });
}

// Issue 29: eight dispatch_async calls of a 300 ms sync handler ran one at
// a time on the callbacks thread (2.4 s; the batch: 0.3 s). Judged by how
// many ran at once, not by time.
static int max_overlap(bool concurrent) {
  ht::Runtime rt(R"({"dispatch":{"timeout":10}})");
  std::mutex mu;
  int now = 0, most = 0;
  rt.register_tool(
      ht::tool_spec("wait", "cpp", "Wait 300 ms"),
      [&](const ht::Call &) {
        {
          std::lock_guard<std::mutex> l(mu);
          most = std::max(most, ++now);
        }
        std::this_thread::sleep_for(300ms);
        {
          std::lock_guard<std::mutex> l(mu);
          --now;
        }
        return std::string("\"done\"");
      },
      {}, concurrent);
  std::vector<std::future<std::string>> futs;
  for (int i = 0; i < 8; i++) futs.push_back(rt.dispatch_async("wait", "{}"));
  for (auto &f : futs) CHECK(f.get() == "\"done\"");
  return most;
}

TEST(sync_handlers_of_async_calls_overlap) {
  CHECK(max_overlap(true) >= 4);
  CHECK(max_overlap(false) == 1);
  // A sync dispatch still runs the handler on the calling thread.
  ht::Runtime rt;
  std::thread::id seen;
  rt.register_tool(ht::tool_spec("where", "cpp", "Where"), [&](const ht::Call &) {
    seen = std::this_thread::get_id();
    return std::string("\"x\"");
  });
  CHECK(rt.dispatch("where", "{}") == "\"x\"");
  CHECK(seen == std::this_thread::get_id());
}

TEST(cancel_and_close_with_pending_calls) {
  std::vector<ht::Call> parked;
  std::mutex mu;
  auto rt = std::make_unique<ht::Runtime>(R"({"dispatch":{"timeout":100}})");
  rt->register_tool_async(ht::tool_spec("never", "cpp", "never answers"), [&](ht::Call &&c) {
    std::lock_guard<std::mutex> lock(mu);
    parked.push_back(std::move(c));
  });
  uint64_t id = 0;
  auto fut = rt->dispatch_async("never", "{}", {}, &id);
  CHECK(id != 0);
  std::this_thread::sleep_for(20ms);
  CHECK(rt->cancel(id));
  try {
    fut.get();
    CHECK(false);
  } catch (const ht::Error &e) {
    CHECK(e.status() == ht::Status::Cancelled);
    CONTAINS(e.message(), "cancelled");
  }
  CHECK(!rt->cancel(id));  // already completed
  // Closing with calls pending completes them (cancelled) before close returns.
  auto f2 = rt->dispatch_async("never", "{}");
  std::atomic<int> cb{0};
  ht::Status cb_status = ht::Status::Ok;
  rt->dispatch_async_cb("never", "{}", {}, [&](ht::Status st, std::string_view) {
    cb_status = st;
    ++cb;
  });
  std::this_thread::sleep_for(20ms);
  rt->close();
  CHECK(cb == 1);
  CHECK(cb_status == ht::Status::Cancelled);
  CHECK(f2.wait_for(0s) == std::future_status::ready);
  expect_error(ht::Status::Cancelled, [&] { f2.get(); });
  // Late answers after close are harmless (the parked Calls answer on destruction).
  {
    std::lock_guard<std::mutex> lock(mu);
    for (auto &c : parked) c.respond("late");
    parked.clear();
  }
  // A closed runtime refuses work with Status::Closed.
  expect_error(ht::Status::Closed, [&] { rt->dispatch("never"); });
  expect_error(ht::Status::Closed, [&] { rt->definitions(); });
}

TEST(batch_keeps_order) {
  ht::Runtime rt;
  rt.register_tool(ht::tool_spec("echo", "cpp", "Echo", ECHO_PARAMS, true),
                   [](const ht::Call &c) { return std::string(c.args_json()); });
  rt.register_tool(ht::tool_spec("fails", "cpp", "fails"),
                   [](const ht::Call &) -> std::string { throw std::runtime_error("bad day"); });
  std::string calls = R"([
    {"id":"a","type":"function","function":{"name":"echo","arguments":"{\"text\":\"1\"}"}},
    {"id":"b","type":"function","function":{"name":"fails","arguments":"{}"}},
    {"id":"c","type":"function","function":{"name":"echo","arguments":{"text":"3"}}}])";
  std::string out = rt.dispatch_batch(calls);
  auto a = out.find("\"a\""), b = out.find("\"b\""), c = out.find("\"c\"");
  CHECK(a != std::string::npos && b != std::string::npos && c != std::string::npos);
  CHECK(a < b && b < c);
  CONTAINS(out, "bad day");
  expect_error(ht::Status::InvalidJson, [&] { rt.dispatch_batch("{"); });
}

TEST(hooks) {
  ht::Runtime rt;
  rt.register_tool(ht::tool_spec("echo", "cpp", "Echo", ECHO_PARAMS, true),
                   [](const ht::Call &c) { return std::string(c.args_json()); });
  rt.add_hook("pre_tool_call", [](std::string_view ev) -> std::string {
    if (ev.find("devil") != std::string_view::npos) return R"({"action":"block","message":"no devils"})";
    if (ev.find("explode") != std::string_view::npos) throw std::runtime_error("hook bug");
    return "";
  });
  // The async hook answers from its own thread; the counter is shared so a
  // late thread never touches this stack frame.
  auto post = std::make_shared<std::atomic<int>>(0);
  auto post_ok = std::make_shared<std::atomic<int>>(0);
  rt.add_hook_async("post_tool_call", [post, post_ok](ht::Hook &&h) {
    std::string ev(h.event_json());  // borrowed: copy before handing off
    std::thread([h = std::move(h), ev, post, post_ok]() mutable {
      if (ev.find("post_tool_call") != std::string::npos) ++*post_ok;
      ++*post;
      h.respond("{}");
    }).detach();
  });
  rt.add_hook("transform_tool_result", [](std::string_view ev) -> std::string {
    if (ev.find("shout") != std::string_view::npos) return R"({"result":"SHOUTED"})";
    return "{}";
  });
  CHECK(rt.dispatch("echo", R"({"text":"hi"})") == R"({"text":"hi"})");
  CHECK(rt.dispatch("echo", R"({"text":"devil"})") == R"({"error":"no devils"})");
  CONTAINS(rt.dispatch("echo", R"({"text":"explode"})"), "hook failed: hook bug");
  CHECK(rt.dispatch("echo", R"({"text":"shout"})") == "SHOUTED");
  for (int i = 0; i < 200 && *post < 2; i++) std::this_thread::sleep_for(5ms);
  CHECK(*post >= 2);
  CHECK(*post_ok == *post);
  expect_error(ht::Status::InvalidArgument, [&] { rt.add_hook("pre_tool_cal", [](std::string_view) { return std::string(); }); });
}

TEST(command_check) {
  std::string v = ht::command_check("rm -rf /");
  CONTAINS(v, "\"verdict\"");
  CHECK(v.find("\"allow\"") == std::string::npos);
  CONTAINS(ht::command_check("ls -la"), "\"verdict\":\"allow\"");
  ht::Runtime rt;
  CONTAINS(rt.command_check("echo hi"), "\"verdict\":\"allow\"");
}

TEST(registry_management) {
  ht::Runtime rt;
  uint64_t g0 = rt.generation();
  rt.register_tool(ht::tool_spec("a", "alpha", "A"), [](const ht::Call &) { return std::string("a"); });
  CHECK(rt.generation() > g0);
  rt.define_toolset(R"({"name":"bundle","description":"all of alpha","includes":["alpha"]})");
  rt.alias_toolset("mcp-x", "bundle");
  std::string sets = rt.toolsets_json();
  CONTAINS(sets, "\"bundle\"");
  CONTAINS(rt.definitions(R"({"enabled_toolsets":["mcp-x"]})"), "\"a\"");
  CONTAINS(rt.definitions(R"({"format":"anthropic"})"), "input_schema");
  expect_error(ht::Status::NotFound, [&] { rt.definitions(R"({"enabled_toolsets":["nope"]})"); });
  expect_error(ht::Status::NotFound, [&] { rt.deregister_tool("missing"); });
  expect_error(ht::Status::Conflict,
               [&] { rt.register_tool(ht::tool_spec("a", "beta", "A"), [](const ht::Call &) { return std::string(); }); },
               "override");
  expect_error(ht::Status::InvalidArgument,
               [&] { rt.register_tool(ht::tool_spec("e", "beta", "E"), ht::Handler{}); });
  rt.invalidate_availability();
  rt.cleanup_task("task-1");
  expect_error(ht::Status::InvalidArgument, [&] { rt.define_toolset(R"({"name":"c","includes":["c"]})"); });
}

TEST(move_semantics) {
  ht::Runtime a;
  a.register_tool(ht::tool_spec("x", "m", "X"), [](const ht::Call &) { return std::string("x"); });
  ht::Runtime b = std::move(a);
  CHECK(!a);
  CHECK(static_cast<bool>(b));
  CHECK(b.dispatch("x") == "x");
  expect_error(ht::Status::Closed, [&] { a.dispatch("x"); });
  ht::Runtime c;
  c = std::move(b);  // c's old runtime is freed
  CHECK(c.dispatch("x") == "x");
  ht_runtime *raw = c.capi_release();
  ht::Runtime d = ht::Runtime::adopt(raw);
  CHECK(d.dispatch("x") == "x");
}

TEST(concurrent_dispatch) {
  ht::Runtime rt;
  std::atomic<int> calls{0};
  rt.register_tool(ht::tool_spec("echo", "cpp", "Echo", ECHO_PARAMS, true), [&](const ht::Call &c) {
    ++calls;
    return std::string(c.args_json());
  });
  std::atomic<int> ok{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; t++) {
    ts.emplace_back([&, t] {
      for (int i = 0; i < 50; i++) {
        std::string a = R"({"text":")" + std::to_string(t * 100 + i) + "\"}";
        if (rt.dispatch("echo", a) == a) ++ok;
      }
    });
  }
  for (auto &t : ts) t.join();
  CHECK(ok == 200);
  CHECK(calls == 200);
}

TEST(log_handler) {
  std::atomic<int> destroyed{0};
  auto t = std::make_shared<Tracker>(&destroyed);
  ht::set_log_handler([t](int, std::string_view) {}, 5);
  t.reset();
  {
    ht::Runtime rt;
    rt.dispatch("nothing");
  }
  ht::set_log_handler({});  // releases the previous handler after its last line
  for (int i = 0; i < 200 && destroyed < 1; i++) std::this_thread::sleep_for(5ms);
  CHECK(destroyed == 1);
}

// The built-in terminal (when this build has it): a foreground command, and a
// background one whose completion arrives through the event handler.
TEST(builtin_terminal_and_events) {
  std::unique_ptr<ht::Runtime> rt;
  try {
    rt = std::make_unique<ht::Runtime>(R"({"builtin_toolsets":["terminal"],"terminal":{"backend":"local"}})");
  } catch (const ht::Error &e) {
    if (e.status() != ht::Status::Unsupported) throw;
    std::printf("# skip: built-in terminal not in this build\n");
    return;
  }
  auto state = std::make_shared<std::pair<std::mutex, std::vector<std::string>>>();
  rt->set_event_handler([state](std::string_view ev) {
    std::lock_guard<std::mutex> lock(state->first);
    state->second.emplace_back(ev);
  });
  CONTAINS(rt->definitions(), "\"terminal\"");
  CONTAINS(rt->dispatch("terminal", R"({"command":"echo hello-cpp"})", R"({"task_id":"cpp-test"})"), "hello-cpp");
  CONTAINS(rt->dispatch("terminal", R"({"command":"echo bg-done","background":true,"notify_on_complete":true})",
                        R"({"task_id":"cpp-test"})"),
           "proc_");
  bool completed = false;
  for (int i = 0; i < 1000 && !completed; i++) {
    {
      std::lock_guard<std::mutex> lock(state->first);
      for (auto &ev : state->second)
        if (ev.find("\"process.completed\"") != std::string::npos && ev.find("bg-done") != std::string::npos)
          completed = true;
    }
    if (!completed) std::this_thread::sleep_for(10ms);
  }
  CHECK(completed);
  rt->cleanup_task("cpp-test");
}

// The built-in file toolset (when this build has it): write a file in a
// temporary folder and read it back as numbered lines.
TEST(builtin_file_tools) {
  char tmpl[] = "/tmp/ht-cpp-file-XXXXXX";
  const char *dir = mkdtemp(tmpl);
  CHECK(dir != nullptr);
  std::string d(dir);
  std::unique_ptr<ht::Runtime> rt;
  try {
    rt = std::make_unique<ht::Runtime>("{\"builtin_toolsets\":[\"file\"],\"terminal\":{\"cwd\":\"" + d +
                                       "\"},\"data_dir\":\"" + d + "/data\"}");
  } catch (const ht::Error &e) {
    if (e.status() != ht::Status::Unsupported && e.status() != ht::Status::InvalidArgument) throw;
    std::printf("# skip: built-in file toolset not in this build\n");
    return;
  }
  CONTAINS(rt->dispatch("write_file", R"({"path":"cpp.txt","content":"hello\ncpp\n"})"), "\"bytes_written\":10");
  CONTAINS(rt->dispatch("read_file", R"({"path":"cpp.txt"})"), "\"content\":\"1|hello\\n2|cpp\"");
  std::remove((d + "/cpp.txt").c_str());
  rmdir(dir);
}

// Approvals with the built-in terminal: an async handler answering from its
// own thread approves one command and denies another; block-tier commands
// never reach it; the handler's closure is released exactly once.
TEST(approval_handler) {
  std::unique_ptr<ht::Runtime> rt;
  try {
    rt = std::make_unique<ht::Runtime>(R"({"builtin_toolsets":["terminal"],"terminal":{"backend":"local"}})");
  } catch (const ht::Error &e) {
    if (e.status() != ht::Status::Unsupported) throw;
    std::printf("# skip: built-in terminal not in this build\n");
    return;
  }
  std::atomic<int> destroyed{0};
  auto asked = std::make_shared<std::pair<std::mutex, std::vector<std::string>>>();
  {
    auto t = std::make_shared<Tracker>(&destroyed);
    rt->set_approval_handler_async([t, asked](ht::Approval &&a) {
      CHECK(!a.is_reviewer());
      std::string req(a.request_json());
      {
        std::lock_guard<std::mutex> lock(asked->first);
        asked->second.push_back(req);
      }
      std::thread([a = std::move(a), req]() mutable {
        if (req.find("ht-cpp-deny") != std::string::npos)
          CHECK(a.deny() == ht::Status::Ok);
        else
          CHECK(a.approve_once() == ht::Status::Ok);
      }).detach();
    });
  }
  std::string ok = rt->dispatch("terminal", R"({"command":"rm -rf /tmp/ht-cpp-allow-nonexistent && echo approved-ran"})");
  CONTAINS(ok, "approved-ran");
  std::string denied = rt->dispatch("terminal", R"({"command":"rm -rf /tmp/ht-cpp-deny-nonexistent && echo denied-ran"})");
  CHECK(denied.find("denied-ran") == std::string::npos);
  CONTAINS(denied, "\"error\"");
  std::string blocked = rt->dispatch("terminal", R"({"command":"rm -rf /"})");
  CONTAINS(blocked, "\"error\"");
  {
    std::lock_guard<std::mutex> lock(asked->first);
    CHECK(asked->second.size() == 2);
    CONTAINS(asked->second[0], "\"verdict\":\"ask\"");
    CONTAINS(asked->second[0], "ht-cpp-allow");
  }
  // A throwing sync handler denies; replacing the handler releases the old one.
  rt->set_approval_handler([](std::string_view) -> std::string { throw std::runtime_error("ui crashed"); });
  for (int i = 0; i < 200 && destroyed < 1; i++) std::this_thread::sleep_for(5ms);
  CHECK(destroyed == 1);
  CHECK(rt->dispatch("terminal", R"({"command":"rm -rf /tmp/ht-cpp-x-nonexistent && echo ran"})").find("ran\"") ==
        std::string::npos);
  rt->set_approval_handler({});
  // Allowlist and session approvals.
  CHECK(rt->allowlist_json().front() == '[');
  rt->set_allowlist("[]");
  rt->clear_session_approvals("session-1");
  expect_error(ht::Status::InvalidJson, [&] { rt->set_allowlist("{"); });
}

// Terminal helpers: typing into a background PTY command, per-task cwd and env.
TEST(terminal_process_write_cwd_env) {
  {
    ht::Runtime plain;
    expect_error(ht::Status::Unsupported, [&] { plain.set_task_cwd("t", "/tmp"); });
  }
  std::unique_ptr<ht::Runtime> rt;
  try {
    rt = std::make_unique<ht::Runtime>(R"({"builtin_toolsets":["terminal"],"terminal":{"backend":"local"}})");
  } catch (const ht::Error &e) {
    if (e.status() != ht::Status::Unsupported) throw;
    std::printf("# skip: built-in terminal not in this build\n");
    return;
  }
  rt->set_task_cwd("cpp-t", "/tmp");
  CONTAINS(rt->dispatch("terminal", R"({"command":"pwd"})", R"({"task_id":"cpp-t"})"), "/tmp");
  rt->set_task_env("cpp-t", R"({"HT_CPP_VAR":"forty-two"})");
  CONTAINS(rt->dispatch("terminal", R"({"command":"echo v=$HT_CPP_VAR"})", R"({"task_id":"cpp-t"})"), "v=forty-two");
  expect_error(ht::Status::InvalidJson, [&] { rt->set_task_env("cpp-t", "{"); });
  expect_error(ht::Status::InvalidJson, [&] { rt->set_task_network("cpp-t", "{"); });

  auto state = std::make_shared<std::pair<std::mutex, std::vector<std::string>>>();
  rt->set_event_handler([state](std::string_view ev) {
    std::lock_guard<std::mutex> lock(state->first);
    state->second.emplace_back(ev);
  });
  std::string started = rt->dispatch(
      "terminal", R"({"command":"read line; echo got:$line","background":true,"pty":true,"notify_on_complete":true})",
      R"({"task_id":"cpp-t"})");
  const std::string key = "\"session_id\":\"";
  size_t at = started.find(key);
  CHECK(at != std::string::npos);
  at += key.size();
  std::string id = started.substr(at, started.find('"', at) - at);
  CHECK(id.rfind("proc_", 0) == 0);
  size_t written = 0;
  for (int i = 0; i < 100; i++) {  // the PTY may not be ready at once
    try {
      written = rt->process_write(id, "hello\r");
      break;
    } catch (const ht::Error &e) {
      if (e.status() != ht::Status::NotFound) throw;
      std::this_thread::sleep_for(10ms);
    }
  }
  CHECK(written == 6);
  bool got = false;
  for (int i = 0; i < 1000 && !got; i++) {
    {
      std::lock_guard<std::mutex> lock(state->first);
      for (auto &ev : state->second)
        if (ev.find("process.completed") != std::string::npos && ev.find("got:hello") != std::string::npos) got = true;
    }
    if (!got) std::this_thread::sleep_for(10ms);
  }
  CHECK(got);
  expect_error(ht::Status::NotFound, [&] { rt->process_write("proc_nope", "x"); });
  rt->cleanup_task("cpp-t");
}

// Agent-loop tools go to the interceptor (validated, without hooks).
TEST(interceptor) {
  ht::Runtime rt;
  std::string spec =
      R"({"name":"todo_list","toolset":"loop","agent_loop":true,"schema":{"description":"The loop's todo list",)"
      R"("parameters":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}}})";
  rt.register_tool(spec, [](const ht::Call &) -> std::string { throw std::logic_error("must not run"); });
  rt.add_hook("pre_tool_call", [](std::string_view) { return std::string(R"({"action":"block","message":"hooked"})"); });
  CONTAINS(rt.dispatch("todo_list", R"({"n":1})"), "must be handled by the agent loop");
  std::atomic<int> destroyed{0};
  {
    auto t = std::make_shared<Tracker>(&destroyed);
    rt.set_interceptor([t](const ht::Call &c) {
      return "{\"loop\":" + ht::json_string(c.tool_name()) + ",\"args\":" + std::string(c.args_json()) + "}";
    });
  }
  CHECK(rt.dispatch("todo_list", R"({"n":"2"})") == R"({"loop":"todo_list","args":{"n":2}})");
  CONTAINS(rt.dispatch("todo_list", R"({})"), "missing required property 'n'");
  rt.set_interceptor_async([](ht::Call &&c) {
    std::thread([c = std::move(c)]() mutable { c.respond("\"async loop\""); }).detach();
  });
  for (int i = 0; i < 200 && destroyed < 1; i++) std::this_thread::sleep_for(5ms);
  CHECK(destroyed == 1);
  CHECK(rt.dispatch("todo_list", R"({"n":3})") == "\"async loop\"");
  rt.set_interceptor({});
  CONTAINS(rt.dispatch("todo_list", R"({"n":1})"), "must be handled by the agent loop");
}

#ifdef HT_CPP_HAS_NLOHMANN
namespace weather {
struct Args {
  std::string city;
  int days = 3;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Args, city, days)
struct Strict {
  std::string city;
  int days;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Strict, city, days)
}  // namespace weather

TEST(typed_tools_with_nlohmann) {
  ht::Runtime rt;
  const nlohmann::json params = {
      {"type", "object"},
      {"properties", {{"city", {{"type", "string"}}}, {"days", {{"type", "integer"}}}}},
      {"required", {"city"}}};
  auto spec = [&](const char *name) {
    return nlohmann::json{{"name", name}, {"toolset", "typed"},
                          {"schema", {{"description", "forecast"}, {"parameters", params}}}};
  };
  rt.register_typed<weather::Args>(spec("forecast"), [](const weather::Args &a, const ht::Call &) {
    return nlohmann::json{{"city", a.city}, {"days", a.days}};
  });
  auto out = rt.dispatch_json("forecast", {{"city", "Oslo"}});
  CHECK(out["city"] == "Oslo");
  CHECK(out["days"] == 3);  // the struct's default
  out = rt.dispatch_json("forecast", {{"city", "Rome"}, {"days", 5}});
  CHECK(out["days"] == 5);

  // The schema allows a missing "days"; the strict struct needs it: an error
  // result the model reads, and the handler is not called.
  std::atomic<int> calls{0};
  rt.register_typed<weather::Strict>(spec("strict"), [&](const weather::Strict &a, const ht::Call &) {
    ++calls;
    return nlohmann::json(a.city);
  });
  std::string text = rt.dispatch("strict", R"({"city":"Oslo"})");
  CONTAINS(text, "invalid arguments for strict");
  CONTAINS(text, "days");
  CHECK(text.find('\n') == std::string::npos);
  CHECK(calls == 0);
  // A JSON string result is plain text.
  CHECK(rt.dispatch("strict", R"({"city":"Oslo","days":1})") == "Oslo");
  CHECK(calls == 1);

  // A throwing handler and the untyped JSON form.
  rt.register_typed<weather::Args>(spec("boom"), [](const weather::Args &, const ht::Call &) -> nlohmann::json {
    throw std::runtime_error("it broke");
  });
  CONTAINS(rt.dispatch("boom", R"({"city":"x"})"), "it broke");
  rt.register_json(spec("echo"), [](const nlohmann::json &args, const ht::Call &call) {
    return nlohmann::json{{"tool", std::string(call.tool_name())}, {"args", args}};
  });
  out = rt.dispatch_json("echo", {{"city", "Lima"}});
  CHECK(out["tool"] == "echo");
  CHECK(out["args"]["city"] == "Lima");
  auto defs = rt.definitions_json({{"enabled_toolsets", {"typed"}}});
  CHECK(defs.is_array() && defs.size() == 4);
  CHECK(defs[0]["function"]["parameters"]["required"][0] == "city");
  expect_error(ht::Status::InvalidArgument, [&] { rt.register_json(spec("empty"), {}); });
}
#endif


// A host environment whose provider runs each command as a bash child in its
// own process group (posix_spawn), streaming from a thread.
TEST(host_environment) {
  struct Prov {
    std::mutex mu;
    std::map<uint64_t, pid_t> pids;
    std::atomic<int> spawns{0}, kills{0}, cleanups{0};
  };
  auto prov = std::make_shared<Prov>();
  std::atomic<int> destroyed{0};
  auto tracker = std::make_shared<Tracker>(&destroyed);
  hermes_tools::EnvironmentCallbacks cb;
  cb.spawn = [prov, tracker](std::shared_ptr<hermes_tools::Exec> ex) {
    ++prov->spawns;
    int out[2], err[2], in[2];
    CHECK(pipe(out) == 0 && pipe(err) == 0 && pipe(in) == 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err[1], 2);
    for (int fd : {in[1], out[0], err[0], in[0], out[1], err[1]}) posix_spawn_file_actions_addclose(&fa, fd);
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&at, 0);
    std::string script = ex->script();
    char *argv[] = {const_cast<char *>("bash"), const_cast<char *>("-c"), script.data(), nullptr};
    pid_t pid = 0;
    CHECK(posix_spawnp(&pid, "bash", &fa, &at, argv, environ) == 0);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(in[0]);
    close(out[1]);
    close(err[1]);
    if (!ex->stdin_data().empty()) CHECK(write(in[1], ex->stdin_data().data(), ex->stdin_data().size()) > 0);
    close(in[1]);
    {
      std::lock_guard<std::mutex> g(prov->mu);
      prov->pids[ex->id()] = pid;
    }
    std::thread([ex, pid, o = out[0], e = err[0]] {
      char buf[4096];
      ssize_t n;
      while ((n = read(o, buf, sizeof buf)) > 0)
        if (!ex->output(std::string_view(buf, static_cast<size_t>(n)), 1)) break;
      while ((n = read(e, buf, sizeof buf)) > 0) ex->output(std::string_view(buf, static_cast<size_t>(n)), 2);
      int st = 0;
      waitpid(pid, &st, 0);
      ex->finish(WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st));
      close(o);
      close(e);
    }).detach();
  };
  cb.kill = [prov](uint64_t id, int sig) {
    ++prov->kills;
    std::lock_guard<std::mutex> g(prov->mu);
    auto it = prov->pids.find(id);
    if (it != prov->pids.end()) kill(-it->second, sig);
  };
  cb.cleanup = [prov](std::optional<std::string>) { ++prov->cleanups; };
  tracker.reset();
  char dir[] = "/tmp/ht-cpp-env-XXXXXX";
  CHECK(mkdtemp(dir) != nullptr);
  {
    hermes_tools::Environment env(R"({"name":"cpp-sub"})", std::move(cb));
    std::string cfg = std::string(R"({"builtin_toolsets":["terminal","file"],"terminal":{"backend":"cpp-sub","cwd":")") +
                      dir + R"(","kill_grace":0.5}})";
    hermes_tools::Runtime rt(cfg, {&env});
    std::string out = rt.dispatch("terminal", R"({"command":"echo \"hi\" \u00e9; exit 4"})");
    CHECK(out.find("\"output\":\"hi é\"") != std::string::npos);
    CHECK(out.find("\"exit_code\":4") != std::string::npos);
    rt.dispatch("terminal", R"({"command":"mkdir -p k && cd k && export KV=3"})");
    out = rt.dispatch("terminal", R"({"command":"basename $(pwd); echo $KV"})");
    CHECK(out.find("\"output\":\"k\\n3\"") != std::string::npos);
    std::string args = std::string(R"({"path":")") + dir + R"(/w.txt","content":"cpp"})";
    out = rt.dispatch("write_file", args);
    CHECK(out.find("\"bytes_written\":3") != std::string::npos);
    out = rt.dispatch("terminal", R"({"command":"echo a; sleep 30","timeout":1})");
    CHECK(prov->kills.load() >= 1);
  }
  CHECK(prov->cleanups.load() >= 1);
  for (int i = 0; i < 500 && destroyed.load() == 0; i++) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(destroyed.load() == 1);
  std::string rm = std::string("rm -rf ") + dir;
  CHECK(std::system(rm.c_str()) == 0);
}

// A path in the repository: HT_REPO_ROOT, else this file's own (relative or
// absolute) path with bindings/cpp/test/... cut off.
static std::string repo_path(const std::string &rel) {
  if (const char *root = std::getenv("HT_REPO_ROOT")) return std::string(root) + "/" + rel;
  std::string here = __FILE__;
  auto at = here.rfind("bindings/cpp/test/");
  return (at == std::string::npos ? std::string() : here.substr(0, at)) + rel;
}

// A stdio MCP server (crates/runtime/tests/fixtures/versioned_server.py, one
// tool "offered") added at run time, listed with its tools, called, removed.
TEST(mcp_servers_add_status_call_remove) {
  ht::Runtime rt("{}");
  CHECK(rt.mcp_status() == "{}");
  expect_error(ht::Status::InvalidJson, [&] { rt.add_mcp_server("bad", "{not json"); });
  expect_error(ht::Status::InvalidArgument, [&] { rt.add_mcp_server("", R"({"command":"python3"})"); });
  expect_error(ht::Status::NotFound, [&] { rt.remove_mcp_server("nobody"); }, "nobody");
  std::string cfg = R"({"command":"python3","args":[)" +
                    ht::json_string(repo_path("crates/runtime/tests/fixtures/versioned_server.py")) +
                    R"(],"connect_timeout":20})";
  rt.add_mcp_server("v", cfg);
  std::string st = rt.mcp_status();
  CONTAINS(st, "\"v\":{");
  CONTAINS(st, "\"state\":\"ready\"");
  CONTAINS(st, "\"mcp__v__offered\"");
  CONTAINS(rt.definitions(), "mcp__v__offered");
  expect_error(ht::Status::Conflict, [&] { rt.add_mcp_server("v", cfg); });
  // The tool reports the protocol version the client offered.
  CONTAINS(rt.dispatch("mcp__v__offered"), "2025-11-25");
  CONTAINS(rt.dispatch_async("mcp__v__offered").get(), "2025-11-25");
  rt.remove_mcp_server("v");
  CHECK(rt.mcp_status().find("\"v\"") == std::string::npos);
  CHECK(rt.definitions().find("mcp__v__offered") == std::string::npos);
  expect_error(ht::Status::NotFound, [&] { rt.remove_mcp_server("v"); });
  // A server that cannot start is visible: failed, with the cause.
  rt.add_mcp_server("broken", R"({"command":"ht-no-such-command-xyz","connect_timeout":5})");
  st = rt.mcp_status();
  CONTAINS(st, "\"broken\":{");
  CONTAINS(st, "\"state\":\"failed\"");
  CHECK(st.find("\"last_error\":null") == std::string::npos);
  rt.remove_mcp_server("broken");
  rt.close();
  expect_error(ht::Status::Closed, [&] { rt.mcp_status(); });
#ifdef HT_CPP_HAS_NLOHMANN
  ht::Runtime rt2("{}");
  CHECK(rt2.mcp_status_json().empty());
#endif
}

// One runtime serves a host tool over streamable HTTP (serve_mcp); a second
// runtime adds it as an MCP server with the generated bearer token and calls it.
TEST(serve_mcp_round_trip) {
  ht::Runtime host("{}");
  host.register_tool(ht::tool_spec("shout", "demo", "Upper-cases text", ECHO_PARAMS), [](const ht::Call &c) {
    std::string a(c.args_json());
    for (auto &ch : a) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    return a;
  });
  expect_error(ht::Status::InvalidJson, [&] { host.serve_mcp("{nope"); });
  ht::McpServer server = host.serve_mcp(R"({"transport":"http"})");
  CHECK(static_cast<bool>(server));
  std::string addr = server.address();
  CONTAINS(addr, "\"transport\":\"http\"");
  CONTAINS(addr, "\"auth\":\"bearer\"");
  CHECK(!server.wait(std::chrono::milliseconds(0)));  // still serving
  auto field = [&](const std::string &key) {
    auto at = addr.find("\"" + key + "\":\"");
    CHECK(at != std::string::npos);
    at += key.size() + 4;
    return addr.substr(at, addr.find('"', at) - at);
  };
  std::string url = field("url"), token_file = field("token_file");
  std::string token;
  {
    FILE *f = std::fopen(token_file.c_str(), "r");
    CHECK(f != nullptr);
    char buf[256] = {0};
    CHECK(std::fgets(buf, sizeof buf, f) != nullptr);
    std::fclose(f);
    token = buf;
    while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
  }
  ht::Runtime client("{}");
  client.add_mcp_server("loop", R"({"url":)" + ht::json_string(url) + R"(,"headers":{"Authorization":)" +
                                    ht::json_string("Bearer " + token) + "}}");
  CONTAINS(client.mcp_status(), "\"mcp__loop__shout\"");
  CONTAINS(client.dispatch("mcp__loop__shout", R"({"text":"quiet"})"), "QUIET");
  client.remove_mcp_server("loop");
  server.close();
  CHECK(!server);
  CHECK(server.wait());
  CHECK(server.address().empty());
  // A server handle outlives its runtime: closing the runtime stops it.
  ht::McpServer s2 = host.serve_mcp(R"({"transport":"http"})");
  host.close();
  CHECK(s2.wait(std::chrono::milliseconds(5000)));
}

// A one-shot HTTP server on 127.0.0.1 that answers every request 401 with a
// bearer challenge (an MCP server behind OAuth, minus the authorization server).
struct Http401 {
  int fd = -1;
  int port = 0;
  std::thread th;
  std::atomic<bool> stop{false};
  Http401() {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(::bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0);
    CHECK(::listen(fd, 16) == 0);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len);
    port = ntohs(a.sin_port);
    th = std::thread([this] {
      for (;;) {
        int c = ::accept(fd, nullptr, nullptr);
        if (c < 0 || stop) {
          if (c >= 0) ::close(c);
          return;
        }
        char buf[8192];
        (void)::recv(c, buf, sizeof buf, 0);
        static const char resp[] =
            "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer realm=\"mcp\"\r\n"
            "Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}";
        (void)::send(c, resp, sizeof resp - 1, MSG_NOSIGNAL);
        ::close(c);
      }
    });
  }
  ~Http401() {
    stop = true;
    ::shutdown(fd, SHUT_RDWR);
    ::close(fd);
    th.join();
  }
};

TEST(oauth_handler_set_replace_clear) {
  ht::Runtime rt("{}");
  std::atomic<int> destroyed{0};
  {
    auto t = std::make_shared<Tracker>(&destroyed);
    rt.set_oauth_handler([t](std::string_view) { return ht::oauth_error("no browser here"); });
  }
  CHECK(destroyed == 0);
  {
    auto t = std::make_shared<Tracker>(&destroyed);
    rt.set_oauth_handler_async([t](ht::Approval &&a) {
      CHECK(a.is_oauth());
      a.respond_error("no browser here");
    });
  }
  for (int i = 0; i < 200 && destroyed < 1; i++) std::this_thread::sleep_for(5ms);
  CHECK(destroyed == 1);  // replaced: the first handler was released
  rt.set_oauth_handler({});
  for (int i = 0; i < 200 && destroyed < 2; i++) std::this_thread::sleep_for(5ms);
  CHECK(destroyed == 2);  // cleared
  CHECK(ht::oauth_redirect("http://127.0.0.1:1/cb?code=a\"b") == R"({"redirect_url":"http://127.0.0.1:1/cb?code=a\"b"})");
  // A handler still set when the runtime closes is released by the close.
  {
    auto t = std::make_shared<Tracker>(&destroyed);
    rt.set_oauth_handler([t](std::string_view) { return std::string("{}"); });
  }
  rt.close();
  CHECK(destroyed == 3);
}

// A server that answers 401 and offers no working authorization server:
// add_mcp_server still returns, and mcp_status shows the failure and why.
TEST(oauth_server_without_handler_fails) {
  Http401 srv;
  std::string url = "http://127.0.0.1:" + std::to_string(srv.port) + "/mcp";
  std::string cfg = R"({"url":)" + ht::json_string(url) + R"(,"connect_timeout":5,"oauth":{"token_store":"memory","timeout":5}})";
  ht::Runtime rt("{}");
  rt.add_mcp_server("secure", cfg);
  std::string st = rt.mcp_status();
  CONTAINS(st, "\"state\":\"failed\"");
  // This server has no authorization server behind its challenge, so the
  // sign-in fails before the browser step: visibly, with the reason.
  CONTAINS(st, "authorization failed");
  rt.remove_mcp_server("secure");
}

int main() {
  RUN(versions_and_features);
  RUN(json_helpers);
  RUN(config_errors_carry_status);
  RUN(sync_handler_and_call_accessors);
  RUN(exceptions_never_cross);
  RUN(async_handler_answers_from_thread);
  RUN(cancellation_reaches_the_handler);
  RUN(progress_reaches_the_event_handler);
  RUN(callback_resources_released_exactly_once);
  RUN(dispatch_async_future_and_callback);
  RUN(sync_handlers_of_async_calls_overlap);
  RUN(cancel_and_close_with_pending_calls);
  RUN(batch_keeps_order);
  RUN(hooks);
  RUN(command_check);
  RUN(registry_management);
  RUN(move_semantics);
  RUN(concurrent_dispatch);
  RUN(log_handler);
  RUN(builtin_terminal_and_events);
  RUN(builtin_file_tools);
  RUN(approval_handler);
  RUN(terminal_process_write_cwd_env);
  RUN(interceptor);
  RUN(host_environment);
  RUN(mcp_servers_add_status_call_remove);
  RUN(serve_mcp_round_trip);
  RUN(oauth_handler_set_replace_clear);
  RUN(oauth_server_without_handler_fails);
#ifdef HT_CPP_HAS_NLOHMANN
  RUN(typed_tools_with_nlohmann);
#else
  std::printf("typed tools: nlohmann/json not used in this build\n");
#endif
  std::printf("cpp binding: %d tests, %d checks passed\n", g_tests, g_checks);
  return 0;
}
