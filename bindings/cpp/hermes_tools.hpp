// hermes_tools.hpp: header-only C++17 binding for the hermes-tools C ABI.
//
//   #include "hermes_tools.hpp"       // also includes hermes_tools.h
//   hermes_tools::Runtime rt(R"({"builtin_toolsets":["terminal"]})");
//   rt.register_tool(spec_json, [](const hermes_tools::Call &call) {
//     return std::string(R"({"ok":true})");
//   });
//   std::string defs = rt.definitions();
//   std::string out = rt.dispatch("my_tool", R"({"x":1})");
//
// Rules this wrapper keeps (see design/bindings.md, c-abi-conventions.md):
// * RAII: Runtime is move-only; its destructor calls ht_runtime_free, which
//   cancels pending async calls and runs every free function before it returns.
// * Every callback crosses the C boundary through a noexcept trampoline. A C++
//   exception thrown by a handler becomes an error result for the model; a
//   throwing check counts as "unavailable"; a throwing pre_tool_call hook
//   blocks the call; a throwing approval handler denies. No exception ever
//   unwinds into the library.
// * Callables are copied to the heap and passed as user_data; the library's
//   free function deletes them exactly once (after the last callback).
// * Every string the library returns is copied into a std::string and freed
//   with ht_string_free at once; borrowed views (Call::args_json, ...) are
//   valid only until the call is answered.
// * API failures (bad JSON, unknown toolset, closed runtime, ...) throw
//   hermes_tools::Error, which carries the ht_status. Tool failures are not
//   API failures: dispatch returns their {"error": ...} text.
//
// Threads: handlers of sync dispatches run on the dispatching thread. Handlers
// of async dispatches registered with register_tool run on a pool of at most
// 32 threads of this binding (concurrent = true, the default), so async
// calls overlap: eight dispatch_async calls of a handler that waits 300 ms
// take about 0.3 s, not 2.4 s; with concurrent = false they run one at a
// time on the library's "ht-callbacks" thread, which also runs completions,
// events and free functions. Callables must therefore be thread-safe.
// register_tool_async hands you the Call to answer later from any thread.
#ifndef HERMES_TOOLS_HPP
#define HERMES_TOOLS_HPP

#include "hermes_tools.h"

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
#if __cplusplus >= 202002L && __has_include(<stop_token>)
#include <stop_token>
#define HT_CPP_HAS_STOP_TOKEN 1
#endif
// nlohmann/json, when the host has it (Debian: nlohmann-json3-dev), adds
// typed tools (register_typed) and JSON-value forms of the calls. Define
// HERMES_TOOLS_NO_NLOHMANN to leave them out.
#if !defined(HERMES_TOOLS_NO_NLOHMANN) && defined(__has_include)
#if __has_include(<nlohmann/json.hpp>)
#include <nlohmann/json.hpp>
#define HT_CPP_HAS_NLOHMANN 1
#endif
#endif

/// The C ABI version this wrapper was written against.
#define HERMES_TOOLS_HPP_ABI 1
static_assert(HT_ABI_VERSION == HERMES_TOOLS_HPP_ABI,
              "hermes_tools.hpp does not match hermes_tools.h: update the C++ binding");

namespace hermes_tools {

/// Mirrors ht_status (values are ABI and never change).
enum class Status : int32_t {
  Ok = HT_STATUS_OK,
  InvalidArgument = HT_STATUS_INVALID_ARGUMENT,
  InvalidUtf8 = HT_STATUS_INVALID_UTF8,
  InvalidJson = HT_STATUS_INVALID_JSON,
  NotFound = HT_STATUS_NOT_FOUND,
  Conflict = HT_STATUS_CONFLICT,
  Closed = HT_STATUS_CLOSED,
  Cancelled = HT_STATUS_CANCELLED,
  Timeout = HT_STATUS_TIMEOUT,
  ToolError = HT_STATUS_TOOL_ERROR,
  Panic = HT_STATUS_PANIC,
  Internal = HT_STATUS_INTERNAL,
  Unsupported = HT_STATUS_UNSUPPORTED,
};

/// A stable name for a status ("not_found", ...).
inline const char *status_name(Status s) noexcept {
  switch (s) {
    case Status::Ok: return "ok";
    case Status::InvalidArgument: return "invalid_argument";
    case Status::InvalidUtf8: return "invalid_utf8";
    case Status::InvalidJson: return "invalid_json";
    case Status::NotFound: return "not_found";
    case Status::Conflict: return "conflict";
    case Status::Closed: return "closed";
    case Status::Cancelled: return "cancelled";
    case Status::Timeout: return "timeout";
    case Status::ToolError: return "tool_error";
    case Status::Panic: return "panic";
    case Status::Internal: return "internal";
    case Status::Unsupported: return "unsupported";
  }
  return "unknown";
}

/// An API error: the status plus the library's one-line message.
class Error : public std::runtime_error {
 public:
  Error(Status status, const std::string &message)
      : std::runtime_error(std::string(status_name(status)) + ": " + message), status_(status),
        message_(message) {}
  Status status() const noexcept { return status_; }
  /// The library's message without the status prefix.
  const std::string &message() const noexcept { return message_; }

 private:
  Status status_;
  std::string message_;
};

namespace detail {

/// Throws Error when `st` is not OK; always frees `err`. `err` is taken by
/// reference so that `check(ht_x(..., &err), err)` reads it after the call
/// (function arguments are evaluated in an unspecified order).
inline void check(ht_status st, ht_error *const &err) {
  if (st == HT_STATUS_OK) {
    ht_error_free(err);
    return;
  }
  std::string msg;
  if (err != nullptr) {
    ht_status code = ht_error_code(err);  // same as st; the error object is authoritative
    if (code != HT_STATUS_OK) st = code;
    const char *m = ht_error_message(err);
    msg = m != nullptr ? m : "";
    ht_error_free(err);
  }
  if (msg.empty()) msg = "hermes-tools call failed";
  throw Error(static_cast<Status>(st), msg);
}

/// Copies a library-owned string and frees it.
inline std::string take(char *s, size_t n) {
  struct Guard {
    char *p;
    ~Guard() { ht_string_free(p); }
  } g{s};
  return s != nullptr ? std::string(s, n) : std::string();
}

inline std::string_view view(const char *p, size_t n) noexcept {
  return p != nullptr ? std::string_view(p, n) : std::string_view();
}

}  // namespace detail

/// Throws Error(Unsupported) when the loaded library's ABI differs from the header's.
inline void check_abi() {
  if (ht_abi_version() != HT_ABI_VERSION) {
    throw Error(Status::Unsupported,
                "hermes-tools ABI mismatch: compiled against ABI " + std::to_string(HT_ABI_VERSION) +
                    ", loaded library has ABI " + std::to_string(ht_abi_version()));
  }
}

/// "hermes-tools/X.Y.Z" of the loaded library.
inline std::string version() { return ht_version(); }

/// The build's optional features as a JSON object.
inline std::string features() { return ht_features(); }

/// Quotes a string as a JSON string literal (helper for building specs and results).
inline std::string json_string(std::string_view s) {
  static const char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back('"');
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out.push_back(hex[c >> 4]);
          out.push_back(hex[c & 15]);
        } else {
          out.push_back(ch);
        }
    }
  }
  out.push_back('"');
  return out;
}

/// Builds a tool spec: {"name","toolset","parallel_safe","schema":{"description","parameters"}}.
inline std::string tool_spec(std::string_view name, std::string_view toolset, std::string_view description,
                             std::string_view parameters_json = R"({"type":"object","properties":{}})",
                             bool parallel_safe = false) {
  std::string s = "{\"name\":" + json_string(name) + ",\"toolset\":" + json_string(toolset) +
                  ",\"parallel_safe\":" + (parallel_safe ? "true" : "false") +
                  ",\"schema\":{\"description\":" + json_string(description) + ",\"parameters\":";
  s.append(parameters_json.data(), parameters_json.size());
  s += "}}";
  return s;
}

/// An OAuth handler's answer: the full URL the browser was redirected to.
inline std::string oauth_redirect(std::string_view redirect_url) {
  return "{\"redirect_url\":" + json_string(redirect_url) + "}";
}
/// An OAuth handler's answer giving the sign-in (or a token-store request) up.
inline std::string oauth_error(std::string_view reason) { return "{\"error\":" + json_string(reason) + "}"; }

/// A tool call handed to a host handler. Move-only. Answer it exactly once
/// with respond() or respond_error(), from any thread, now or later. The
/// borrowed views are valid until then. A Call destroyed without an answer
/// answers with an error, so a dispatch never waits forever on a lost call.
/// One Call object must not be used from two threads at once.
class Call {
 public:
  Call() noexcept = default;
  explicit Call(ht_call *call) noexcept : call_(call) {}
  Call(Call &&o) noexcept : call_(std::exchange(o.call_, nullptr)) {}
  Call &operator=(Call &&o) noexcept {
    if (this != &o) {
      abandon();
      call_ = std::exchange(o.call_, nullptr);
    }
    return *this;
  }
  Call(const Call &) = delete;
  Call &operator=(const Call &) = delete;
  ~Call() { abandon(); }

  /// Arguments (JSON object text, repaired and validated). Borrowed until answered.
  std::string_view args_json() const noexcept {
    size_t n = 0;
    const char *p = call_ ? ht_call_args_json(call_, &n) : nullptr;
    return detail::view(p, n);
  }
  /// The dispatch context (JSON object text, "{}" when none). Borrowed until answered.
  std::string_view context_json() const noexcept {
    size_t n = 0;
    const char *p = call_ ? ht_call_context_json(call_, &n) : nullptr;
    return detail::view(p, n);
  }
  /// The called tool's name. Borrowed until answered.
  std::string_view tool_name() const noexcept {
    size_t n = 0;
    const char *p = call_ ? ht_call_tool_name(call_, &n) : nullptr;
    return detail::view(p, n);
  }
  /// True until answered (or moved from).
  bool pending() const noexcept { return call_ != nullptr; }

  /// Answers with the tool's text for the model. Ok, or Timeout/Cancelled/NotFound (harmless).
  Status respond(std::string_view result) noexcept { return finish(false, result); }
  /// Answers with an error; the library wraps it as a sanitised {"error": ...}.
  Status respond_error(std::string_view message) noexcept { return finish(true, message); }

  /// Reports progress (total <= 0: unknown): the event handler gets a
  /// "tool.progress" event with this call's ids. NotFound once answered,
  /// timed out or cancelled.
  Status progress(double progress, double total = 0, std::string_view message = {}) const noexcept {
    if (call_ == nullptr) return Status::NotFound;
    return static_cast<Status>(ht_call_progress(call_, progress, total, message.data(), message.size()));
  }

  /// True once the library stopped waiting for this call (timeout, cancel,
  /// runtime freed): an answer now is dropped. Also true once answered.
  bool cancelled() const noexcept { return ht_call_is_cancelled(call_); }

  /// Runs `fn()` once when the library stops waiting for this call (timeout,
  /// cancel, runtime freed), on the library thread that ended the wait, or at
  /// once (inside this call) if it already has. Never runs once the call is
  /// answered. Keep it quick; exceptions are swallowed. Returns Ok, or
  /// NotFound for a call that is answered (fn is then dropped unrun).
  Status on_cancel(std::function<void()> fn) {
    if (call_ == nullptr || !fn) return Status::NotFound;
    auto *heap = new std::function<void()>(std::move(fn));
    ht_status st = ht_call_on_cancel(call_, &Call::cancel_tramp, heap, &Call::cancel_free);
    if (st != HT_STATUS_OK) delete heap;  // refused: neither callback runs
    return static_cast<Status>(st);
  }

#ifdef HT_CPP_HAS_STOP_TOKEN
  /// (C++20) A stop token whose stop is requested when the library stops
  /// waiting for this call (timeout, cancel, runtime freed); already stopped
  /// if it has. Not stopped when the call is answered.
  std::stop_token stop_token() {
    if (!stop_) {
      stop_ = std::make_shared<std::stop_source>();
      auto src = stop_;
      if (on_cancel([src] { src->request_stop(); }) != Status::Ok && cancelled()) stop_->request_stop();
    }
    return stop_->get_token();
  }
#endif

  ht_call *capi() const noexcept { return call_; }
  /// Gives up ownership: the caller must answer with ht_call_respond.
  ht_call *release() noexcept { return std::exchange(call_, nullptr); }

 private:
  Status finish(bool is_error, std::string_view text) noexcept {
    ht_call *c = std::exchange(call_, nullptr);
    if (c == nullptr) return Status::NotFound;
    return static_cast<Status>(ht_call_respond(c, is_error, text.data(), text.size()));
  }
  void abandon() noexcept {
    if (call_ != nullptr) finish(true, "the host dropped this call without answering");
  }
  static void cancel_tramp(void *ud, ht_call *) noexcept {
    try {
      (*static_cast<std::function<void()> *>(ud))();
    } catch (...) {
    }
  }
  static void cancel_free(void *ud) noexcept { delete static_cast<std::function<void()> *>(ud); }
  ht_call *call_ = nullptr;
#ifdef HT_CPP_HAS_STOP_TOKEN
  std::shared_ptr<std::stop_source> stop_;
#endif
};

/// A hook invocation (see Runtime::add_hook_async). Move-only; answer once
/// with respond(decision_json). Destroyed unanswered it answers "{}".
class Hook {
 public:
  Hook() noexcept = default;
  explicit Hook(ht_hook *hook) noexcept : hook_(hook) {}
  Hook(Hook &&o) noexcept : hook_(std::exchange(o.hook_, nullptr)) {}
  Hook &operator=(Hook &&o) noexcept {
    if (this != &o) {
      abandon();
      hook_ = std::exchange(o.hook_, nullptr);
    }
    return *this;
  }
  Hook(const Hook &) = delete;
  Hook &operator=(const Hook &) = delete;
  ~Hook() { abandon(); }

  /// The event JSON (event, tool_name, args, ids; result events add result,
  /// status, duration_ms). Borrowed until answered.
  std::string_view event_json() const noexcept {
    size_t n = 0;
    const char *p = hook_ ? ht_hook_event_json(hook_, &n) : nullptr;
    return detail::view(p, n);
  }
  bool pending() const noexcept { return hook_ != nullptr; }
  /// Answers with a decision ("" or "{}" = continue / keep).
  Status respond(std::string_view decision_json = {}) noexcept {
    ht_hook *h = std::exchange(hook_, nullptr);
    if (h == nullptr) return Status::NotFound;
    return static_cast<Status>(ht_hook_respond(h, decision_json.data(), decision_json.size()));
  }
  ht_hook *capi() const noexcept { return hook_; }
  ht_hook *release() noexcept { return std::exchange(hook_, nullptr); }

 private:
  void abandon() noexcept {
    if (hook_ != nullptr) respond();
  }
  ht_hook *hook_ = nullptr;
};

/// A request for the host: a command approval (Runtime::set_approval_handler_async),
/// a smart-review request (is_reviewer()) or an OAuth request
/// (Runtime::set_oauth_handler_async, is_oauth()). Move-only; answer once
/// with respond() or a shortcut, from any thread, now or later. Destroyed
/// unanswered it denies (a reviewer escalates; an OAuth request gives the
/// sign-in up with {"error":...}).
class Approval {
 public:
  Approval() noexcept = default;
  Approval(ht_approval *a, bool reviewer, bool oauth = false) noexcept
      : approval_(a), reviewer_(reviewer), oauth_(oauth) {}
  Approval(Approval &&o) noexcept
      : approval_(std::exchange(o.approval_, nullptr)), reviewer_(o.reviewer_), oauth_(o.oauth_) {}
  Approval &operator=(Approval &&o) noexcept {
    if (this != &o) {
      abandon();
      approval_ = std::exchange(o.approval_, nullptr);
      reviewer_ = o.reviewer_;
      oauth_ = o.oauth_;
    }
    return *this;
  }
  Approval(const Approval &) = delete;
  Approval &operator=(const Approval &) = delete;
  ~Approval() { abandon(); }

  /// The request JSON (kind, verdict, rules, reasons, commands,
  /// untrusted_command_text, suggested_scope, choices, ids, timeout_s; for
  /// OAuth: kind, server, authorization_url, redirect_uri, scopes, step_up,
  /// timeout_s, or tokens for "oauth_tokens_save": secret, never log it).
  /// Borrowed until answered.
  std::string_view request_json() const noexcept {
    size_t n = 0;
    const char *p = approval_ ? ht_approval_request_json(approval_, &n) : nullptr;
    return detail::view(p, n);
  }
  bool pending() const noexcept { return approval_ != nullptr; }
  /// True for a smart-reviewer request (answer {"decision":...}).
  bool is_reviewer() const noexcept { return reviewer_; }
  /// True for a request of the OAuth handler (answer with redirect(),
  /// respond_error() or, for the token kinds, respond()).
  bool is_oauth() const noexcept { return oauth_; }
  /// Answers with a decision: {"choice":"once"|"session"|"always"|"deny","scope"?:[...]}
  /// for the handler, {"decision":"approve"|"deny"|"escalate"} for the reviewer,
  /// {"redirect_url":...}, {"code":...}, {"tokens":...}, {} or {"error":...} for OAuth.
  Status respond(std::string_view decision_json) noexcept {
    ht_approval *a = std::exchange(approval_, nullptr);
    if (a == nullptr) return Status::NotFound;
    return static_cast<Status>(ht_approval_respond(a, decision_json.data(), decision_json.size()));
  }
  Status approve_once() noexcept { return respond(reviewer_ ? R"({"decision":"approve"})" : R"({"choice":"once"})"); }
  Status approve_session() noexcept { return respond(R"({"choice":"session"})"); }
  Status approve_always() noexcept { return respond(R"({"choice":"always"})"); }
  Status deny() noexcept {
    if (oauth_) return respond(R"({"error":"the host declined the sign-in"})");
    return respond(reviewer_ ? R"({"decision":"deny"})" : R"({"choice":"deny"})");
  }
  Status escalate() noexcept { return respond(R"({"decision":"escalate"})"); }
  /// OAuth: the full URL the authorization server redirected the browser to.
  Status redirect(std::string_view redirect_url) noexcept {
    try {
      return respond("{\"redirect_url\":" + json_string(redirect_url) + "}");
    } catch (...) {
      return respond(R"({"error":"out of memory"})");
    }
  }
  /// OAuth: give the sign-in (or a token-store request) up with a reason.
  Status respond_error(std::string_view reason) noexcept {
    try {
      return respond("{\"error\":" + json_string(reason) + "}");
    } catch (...) {
      return respond(R"({"error":"out of memory"})");
    }
  }
  ht_approval *capi() const noexcept { return approval_; }
  ht_approval *release() noexcept { return std::exchange(approval_, nullptr); }

 private:
  void abandon() noexcept {
    if (approval_ != nullptr) {
      if (oauth_) respond(R"({"error":"the host's OAuth handler gave no answer"})");
      else if (reviewer_) escalate();
      else deny();
    }
  }
  ht_approval *approval_ = nullptr;
  bool reviewer_ = false;
  bool oauth_ = false;
};

/// A server of Runtime::serve_mcp. Move-only; the destructor (or close())
/// stops it (calls in flight are cancelled) and frees the handle, waiting up
/// to 5 s for its thread: never from a tool call this same server is serving.
/// It may outlive its Runtime (closing the runtime stops the server, the
/// handle stays valid until freed). address() and wait() are thread-safe.
class McpServer {
 public:
  McpServer() noexcept = default;
  explicit McpServer(ht_mcp_server *s) noexcept : server_(s) {}
  McpServer(McpServer &&) noexcept = default;
  McpServer &operator=(McpServer &&) noexcept = default;
  McpServer(const McpServer &) = delete;
  McpServer &operator=(const McpServer &) = delete;
  ~McpServer() = default;

  /// Where to reach it (JSON): {"transport":"http","url":...,"auth":"bearer"|"none",
  /// "token_file":PATH|null} or {"transport":"stdio"}. "" once closed.
  std::string address() const {
    const char *a = server_ ? ht_mcp_server_address(server_.get()) : nullptr;
    return a != nullptr ? std::string(a) : std::string();
  }
  /// Waits up to `timeout` (0: just look) for the server to end: true when it
  /// ended (or is closed), false while it still serves; throws Error when it
  /// ended with an error.
  bool wait(std::chrono::milliseconds timeout = std::chrono::milliseconds(0)) const {
    if (!server_) return true;
    ht_error *err = nullptr;
    ht_status st = ht_mcp_server_wait(server_.get(), static_cast<uint64_t>(timeout.count() < 0 ? 0 : timeout.count()),
                                      &err);
    if (st == HT_STATUS_TIMEOUT) {
      ht_error_free(err);
      return false;
    }
    detail::check(st, err);
    return true;
  }
  /// Stops serving and frees the handle (idempotent).
  void close() noexcept { server_.reset(); }
  explicit operator bool() const noexcept { return server_ != nullptr; }
  ht_mcp_server *capi() const noexcept { return server_.get(); }
  ht_mcp_server *capi_release() noexcept { return server_.release(); }

 private:
  struct Deleter {
    void operator()(ht_mcp_server *s) const noexcept { ht_mcp_server_free(s); }
  };
  std::unique_ptr<ht_mcp_server, Deleter> server_;
};

/// Sync handler: return the result text; throw to report an error to the model.
using Handler = std::function<std::string(const Call &)>;
/// Async handler: take the Call (std::move it into your thread/executor) and
/// answer it later. An exception thrown before the call was moved answers it
/// with the exception's message.
using AsyncHandler = std::function<void(Call &&)>;
/// Availability check: fast, thread-safe; an exception means "unavailable".
using Check = std::function<bool()>;
/// Sync hook: return the decision JSON ("" = {}).
using HookHandler = std::function<std::string(std::string_view event_json)>;
using AsyncHookHandler = std::function<void(Hook &&)>;
/// Completion of dispatch_async_cb: status Ok or Cancelled, result text (borrowed).
using Completion = std::function<void(Status, std::string_view result)>;
/// Sync approval handler / reviewer: return the decision JSON. It runs on the
/// library's callback thread while the command waits: for a human in the
/// loop use the async form and answer later. An exception denies (reviewer:
/// escalates).
using ApprovalHandler = std::function<std::string(std::string_view request_json)>;
using AsyncApprovalHandler = std::function<void(Approval &&)>;
/// Sync OAuth handler: gets the request JSON ("kind": "oauth_authorize",
/// or for servers with oauth.token_store "host" "oauth_tokens_load" /
/// "oauth_tokens_save" / "oauth_tokens_clear") and returns the answer JSON
/// (oauth_redirect(url), {"code":...}, {"tokens":...}, {} or
/// oauth_error(reason)). It runs on the library's callback thread while the
/// sign-in waits, holding up events and completions: for a browser step that
/// takes a human, use set_oauth_handler_async. An exception gives the
/// sign-in up ({"error": what()}).
using OAuthHandler = std::function<std::string(std::string_view request_json)>;
using EventHandler = std::function<void(std::string_view event_json)>;
/// level: 1 error, 2 warn, 3 info, 4 debug, 5 trace.
using LogHandler = std::function<void(int level, std::string_view message)>;

namespace detail {

struct ToolData {
  Handler sync;
  AsyncHandler async;
  Check check;
  /// Run `sync` for async calls on the HandlerPool (shared: a call may
  /// outlive the registration's data while it runs there).
  std::shared_ptr<const Handler> pooled;
};

/// Whether this is the library's callbacks thread ("ht-callbacks"), where
/// the handlers of async calls are started (read once per thread).
inline bool on_callbacks_thread() noexcept {
  thread_local int on = -1;
  if (on < 0) {
    char name[32] = {0};
    on = pthread_getname_np(pthread_self(), name, sizeof name) == 0 &&
                 std::string_view(name) == "ht-callbacks"
             ? 1
             : 0;
  }
  return on == 1;
}

/// A bounded pool (at most 32 threads, started on demand) for the
/// handlers of async calls. Never destroyed: its idle threads may still be
/// waiting when static destructors run.
class HandlerPool {
 public:
  static HandlerPool &get() {
    static HandlerPool *pool = new HandlerPool();
    return *pool;
  }
  /// Queue `job`; false when no thread could be started for it.
  bool submit(std::function<void()> job) {
    std::unique_lock<std::mutex> lock(mu_);
    if (idle_ == 0 && threads_ < kMaxThreads) {
      try {
        std::thread([this] { work(); }).detach();
        ++threads_;
      } catch (...) {
        if (threads_ == 0) return false;
      }
    }
    queue_.push_back(std::move(job));
    cv_.notify_one();
    return true;
  }

 private:
  static constexpr int kMaxThreads = 32;
  void work() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      while (queue_.empty()) {
        ++idle_;
        cv_.wait(lock);
        --idle_;
      }
      auto job = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      job();
      lock.lock();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  int threads_ = 0;
  int idle_ = 0;
};

inline const char *what_of(std::exception_ptr e) noexcept {
  try {
    std::rethrow_exception(std::move(e));
  } catch (const std::exception &x) {
    return x.what();
  } catch (...) {
  }
  return "unknown C++ exception";
}

inline void tool_trampoline(void *ud, ht_call *raw) noexcept {
  auto *d = static_cast<ToolData *>(ud);
  Call call(raw);
  try {
    if (d->pooled && on_callbacks_thread()) {
      auto fn = d->pooled;
      auto shared = std::make_shared<Call>(std::move(call));
      bool queued = HandlerPool::get().submit([fn, shared] {
        try {
          std::string out = (*fn)(static_cast<const Call &>(*shared));
          shared->respond(out);
        } catch (...) {
          if (shared->pending()) shared->respond_error(what_of(std::current_exception()));
        }
      });
      if (queued) return;
      call = std::move(*shared);  // no thread: run it here
    }
    if (d->sync) {
      std::string out = d->sync(static_cast<const Call &>(call));
      call.respond(out);
    } else {
      d->async(std::move(call));
    }
  } catch (...) {
    if (call.pending()) call.respond_error(what_of(std::current_exception()));
  }
}

inline bool check_trampoline(void *ud) noexcept {
  try {
    return static_cast<ToolData *>(ud)->check();
  } catch (...) {
    return false;
  }
}

template <class T>
void delete_trampoline(void *ud) noexcept {
  delete static_cast<T *>(ud);
}

struct HookData {
  HookHandler sync;
  AsyncHookHandler async;
  bool blocks_on_error;
};

inline void hook_trampoline(void *ud, ht_hook *raw) noexcept {
  auto *d = static_cast<HookData *>(ud);
  Hook hook(raw);
  try {
    if (d->sync) {
      std::string decision = d->sync(hook.event_json());
      hook.respond(decision);
    } else {
      d->async(std::move(hook));
    }
  } catch (...) {
    if (hook.pending()) {
      if (d->blocks_on_error) {
        try {
          hook.respond("{\"action\":\"block\",\"message\":" +
                       json_string(std::string("hook failed: ") + what_of(std::current_exception())) + "}");
        } catch (...) {
          hook.respond("{\"action\":\"block\",\"message\":\"hook failed\"}");
        }
      } else {
        hook.respond();
      }
    }
  }
}

struct ApprovalData {
  ApprovalHandler sync;
  AsyncApprovalHandler async;
  bool reviewer = false;
  bool oauth = false;
};

inline void approval_trampoline(void *ud, ht_approval *raw) noexcept {
  auto *d = static_cast<ApprovalData *>(ud);
  Approval a(raw, d->reviewer, d->oauth);
  try {
    if (d->sync) {
      std::string decision = d->sync(a.request_json());
      a.respond(decision);
    } else {
      d->async(std::move(a));
    }
  } catch (...) {
    // ~Approval denies (reviewer: escalates) if still unanswered; an OAuth
    // request is given up with the exception's message.
    if (d->oauth && a.pending()) {
      try {
        a.respond_error(std::string("the OAuth handler threw: ") + what_of(std::current_exception()));
      } catch (...) {
      }
    }
  }
}

inline void promise_done(void *ud, ht_status st, const char *result, size_t len) noexcept {
  std::unique_ptr<std::promise<std::string>> p(static_cast<std::promise<std::string> *>(ud));
  try {
    std::string text = result != nullptr ? std::string(result, len) : std::string();
    if (st == HT_STATUS_OK) {
      p->set_value(std::move(text));
    } else {
      p->set_exception(std::make_exception_ptr(Error(static_cast<Status>(st), text)));
    }
  } catch (...) {
    try {
      p->set_exception(std::current_exception());
    } catch (...) {
    }
  }
}

inline void completion_done(void *ud, ht_status st, const char *result, size_t len) noexcept {
  std::unique_ptr<Completion> f(static_cast<Completion *>(ud));
  try {
    (*f)(static_cast<Status>(st), view(result, len));
  } catch (...) {
  }
}

inline void event_trampoline(void *ud, const char *json, size_t len) noexcept {
  try {
    (*static_cast<EventHandler *>(ud))(view(json, len));
  } catch (...) {
  }
}

inline void log_trampoline(void *ud, int32_t level, const char *msg, size_t len) noexcept {
  try {
    (*static_cast<LogHandler *>(ud))(static_cast<int>(level), view(msg, len));
  } catch (...) {
  }
}

}  // namespace detail

/// Analyses a shell command with the default rules (no runtime): the verdict JSON.
inline std::string command_check(std::string_view command) {
  char *out = nullptr;
  size_t n = 0;
  ht_error *err = nullptr;
  detail::check(ht_command_check(nullptr, command.data(), command.size(), &out, &n, &err), err);
  return detail::take(out, n);
}

/// Installs the process-wide log handler (an empty function removes it).
/// `level` is the most verbose level delivered (1..5; 0 keeps the current one).
inline void set_log_handler(LogHandler handler, int level = 3) {
  if (!handler) {
    auto st = ht_set_log_handler(nullptr, level, nullptr, nullptr);
    detail::check(st, nullptr);
    return;
  }
  auto data = std::make_unique<LogHandler>(std::move(handler));
  detail::check(ht_set_log_handler(&detail::log_trampoline, level, data.get(),
                                   &detail::delete_trampoline<LogHandler>),
                nullptr);
  data.release();
}

namespace detail {

/// The JSON string that starts at `at` (a quote) in text the library
/// wrote, escapes decoded (\u escapes to UTF-8); empty when there is none.
inline std::string json_str_at(std::string_view j, size_t at) {
  if (at >= j.size() || j[at] != '"') return {};
  std::string out;
  for (size_t i = at + 1; i < j.size() && j[i] != '"'; i++) {
    char c = j[i];
    if (c != '\\') {
      out.push_back(c);
      continue;
    }
    c = j[++i];
    switch (c) {
      case 'n': out.push_back('\n'); break;
      case 't': out.push_back('\t'); break;
      case 'r': out.push_back('\r'); break;
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'u': {
        unsigned cp = static_cast<unsigned>(std::stoul(std::string(j.substr(i + 1, 4)), nullptr, 16));
        i += 4;
        if (cp >= 0xD800 && cp < 0xDC00 && i + 6 < j.size() && j[i + 1] == '\\' && j[i + 2] == 'u') {
          unsigned lo = static_cast<unsigned>(std::stoul(std::string(j.substr(i + 3, 4)), nullptr, 16));
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          i += 6;
        }
        if (cp < 0x80) {
          out.push_back(static_cast<char>(cp));
        } else if (cp < 0x800) {
          out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
          out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        } else if (cp < 0x10000) {
          out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
          out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
          out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        } else {
          out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
          out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
          out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
          out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        }
        break;
      }
      default: out.push_back(c);
    }
  }
  return out;
}

/// The value of string field `key` of a flat JSON object the library wrote.
inline std::string json_str(std::string_view j, std::string_view key) {
  std::string pat = "\"" + std::string(key) + "\":";
  size_t at = j.find(pat);
  return at == std::string_view::npos ? std::string() : json_str_at(j, at + pat.size());
}

}  // namespace detail

/// One command of a host environment: run `bash -c script()` where task()'s
/// commands run, stream with output(), end once with finish() (from any
/// thread). Destroyed unfinished, it ends the command with status 255.
class Exec {
 public:
  explicit Exec(ht_exec *raw) : raw_(raw) {
    size_t n = 0;
    const char *j = ht_exec_request_json(raw, &n);
    if (!j) throw Error(Status::NotFound, "exec: unknown or finished");
    json_.assign(j, n);
    size_t at = json_.find("\"id\":");
    id_ = at == std::string::npos ? 0 : std::stoull(json_.substr(at + 5));
    task_ = detail::json_str(json_, "task");
    size_t argv = json_.find("\"argv\":[\"bash\",\"-c\",");
    if (argv != std::string::npos) script_ = detail::json_str_at(json_, argv + 20);
    capture_ = json_.find("\"capture\":true") != std::string::npos;
    mark_ = detail::json_str(json_, "mark");
    const uint8_t *in = ht_exec_stdin(raw, &n);
    if (in && n) stdin_.assign(reinterpret_cast<const char *>(in), n);
  }
  Exec(const Exec &) = delete;
  Exec &operator=(const Exec &) = delete;
  ~Exec() {
    if (!done_.exchange(true)) ht_exec_finish(raw_, 255, "the host dropped the command", 28);
  }
  uint64_t id() const noexcept { return id_; }
  const std::string &task() const noexcept { return task_; }
  const std::string &script() const noexcept { return script_; }
  /// A script of the library's own: report stdout (1) and stderr (2) apart.
  bool capture() const noexcept { return capture_; }
  /// Bytes to feed the command's stdin (then close it).
  const std::string &stdin_data() const noexcept { return stdin_; }
  /// The HERMES_TOOLS_TREE value of a terminal command's processes (empty otherwise).
  const std::string &mark() const noexcept { return mark_; }
  /// The raw request (JSON object text).
  const std::string &request_json() const noexcept { return json_; }
  /// false: nobody reads any more (timeout, cancellation): stop the command.
  bool output(std::string_view data, int stream = 1) {
    if (done_) return false;
    return ht_exec_output(raw_, stream, reinterpret_cast<const uint8_t *>(data.data()), data.size()) ==
           HT_STATUS_OK;
  }
  /// Ends the command (-N: killed by signal N); `message`: why, when the provider ended it.
  void finish(int exit_code, std::string_view message = {}) {
    if (done_.exchange(true)) return;
    ht_exec_finish(raw_, exit_code, message.data(), message.size());
  }

 private:
  ht_exec *raw_;
  std::string json_, task_, script_, mark_, stdin_;
  uint64_t id_ = 0;
  bool capture_ = false;
  std::atomic<bool> done_{false};
};

/// What a host environment does. `spawn` starts the command and returns at
/// once (answer later through the Exec, from any thread); `kill` signals a
/// command by id; `cleanup` (optional) drops a task's sandbox (nullopt: the
/// runtime closes).
struct EnvironmentCallbacks {
  std::function<void(std::shared_ptr<Exec>)> spawn;
  std::function<void(uint64_t id, int signal)> kill;
  std::function<void(std::optional<std::string> task)> cleanup;
};

namespace detail {
inline void env_spawn_tramp(void *ud, ht_exec *raw) noexcept {
  try {
    auto exec = std::make_shared<Exec>(raw);
    try {
      static_cast<EnvironmentCallbacks *>(ud)->spawn(exec);
    } catch (...) {
      exec->finish(255, what_of(std::current_exception()));
    }
  } catch (...) {
    ht_exec_finish(raw, 255, nullptr, 0);
  }
}
inline void env_kill_tramp(void *ud, uint64_t id, int32_t sig) noexcept {
  try {
    static_cast<EnvironmentCallbacks *>(ud)->kill(id, sig);
  } catch (...) {
  }
}
inline void env_cleanup_tramp(void *ud, const char *task, size_t n) noexcept {
  try {
    auto *c = static_cast<EnvironmentCallbacks *>(ud);
    if (c->cleanup) c->cleanup(task ? std::optional<std::string>(std::string(task, n)) : std::nullopt);
  } catch (...) {
  }
}
}  // namespace detail

/// A host-defined environment (`terminal.backend` names it). Move-only;
/// runtimes created with it keep what they need after it is destroyed.
class Environment {
 public:
  /// spec: {"name": "...", "location"?: "..."}.
  Environment(std::string_view spec_json, EnvironmentCallbacks callbacks) {
    if (!callbacks.spawn || !callbacks.kill)
      throw Error(Status::InvalidArgument, "Environment: spawn and kill are required");
    auto d = std::make_unique<EnvironmentCallbacks>(std::move(callbacks));
    ht_environment *env = nullptr;
    ht_error *err = nullptr;
    detail::check(ht_environment_new(spec_json.data(), spec_json.size(), &detail::env_spawn_tramp,
                                     &detail::env_kill_tramp, nullptr, &detail::env_cleanup_tramp, d.get(),
                                     &detail::delete_trampoline<EnvironmentCallbacks>, &env, &err),
                  err);
    d.release();
    env_.reset(env);
  }
  const ht_environment *capi() const noexcept { return env_.get(); }

 private:
  struct Deleter {
    void operator()(ht_environment *e) const noexcept { ht_environment_free(e); }
  };
  std::unique_ptr<ht_environment, Deleter> env_;
};

/// A runtime. Move-only; the destructor frees it (blocking until pending work
/// is cancelled and every free function has run). Thread-safe: every method
/// may be called from any thread, including from handlers.
class Runtime {
 public:
  /// Creates a runtime from a JSON config ("{}" = defaults). Checks the ABI.
  explicit Runtime(std::string_view config_json = "{}") {
    check_abi();
    ht_runtime *rt = nullptr;
    ht_error *err = nullptr;
    detail::check(ht_runtime_new(config_json.data(), config_json.size(), &rt, &err), err);
    rt_.reset(rt);
  }
  /// A runtime whose terminal.backend may name one of `envs`.
  Runtime(std::string_view config_json, const std::vector<const Environment *> &envs) {
    check_abi();
    std::vector<const ht_environment *> raw_envs;
    for (auto *e : envs) raw_envs.push_back(e->capi());
    ht_runtime *rt = nullptr;
    ht_error *err = nullptr;
    detail::check(ht_runtime_new_with_environments(config_json.data(), config_json.size(), raw_envs.data(),
                                                   raw_envs.size(), &rt, &err),
                  err);
    rt_.reset(rt);
  }
  /// Takes ownership of a runtime created through the C API.
  static Runtime adopt(ht_runtime *rt) noexcept { return Runtime(rt); }

  Runtime(Runtime &&) noexcept = default;
  Runtime &operator=(Runtime &&) noexcept = default;
  Runtime(const Runtime &) = delete;
  Runtime &operator=(const Runtime &) = delete;
  ~Runtime() = default;

  /// Frees the runtime now (idempotent). Do not call from a handler.
  void close() noexcept { rt_.reset(); }
  explicit operator bool() const noexcept { return rt_ != nullptr; }
  ht_runtime *capi() const noexcept { return rt_.get(); }
  ht_runtime *capi_release() noexcept { return rt_.release(); }

  /// Registers a tool whose handler returns the result (or throws). With
  /// `concurrent` (the default) the handler of an async call runs on the
  /// binding's pool, so async calls overlap; false runs them one at a time
  /// on the library's callbacks thread (for a handler that is not
  /// thread-safe). Sync dispatches run it on the dispatching thread.
  void register_tool(std::string_view spec_json, Handler handler, Check check = {}, bool concurrent = true) {
    if (!handler) throw Error(Status::InvalidArgument, "register_tool: empty handler");
    auto d = std::make_unique<detail::ToolData>();
    if (concurrent) d->pooled = std::make_shared<const Handler>(handler);
    d->sync = std::move(handler);
    d->check = std::move(check);
    register_data(spec_json, std::move(d));
  }
  /// Registers a tool whose handler takes the Call and answers it later.
  void register_tool_async(std::string_view spec_json, AsyncHandler handler, Check check = {}) {
    if (!handler) throw Error(Status::InvalidArgument, "register_tool_async: empty handler");
    auto d = std::make_unique<detail::ToolData>();
    d->async = std::move(handler);
    d->check = std::move(check);
    register_data(spec_json, std::move(d));
  }
  /// Handles agent-loop tools (specs with "agent_loop": true, e.g. todo,
  /// memory, delegate_task owned by the host's loop): their calls are
  /// repaired and validated, then handed to this handler, without hooks. An
  /// empty handler removes it (such calls then answer an error).
  void set_interceptor(Handler handler) {
    auto d = std::make_unique<detail::ToolData>();
    d->sync = std::move(handler);
    set_interceptor_data(std::move(d));
  }
  /// Async form: take the Call and answer it later from any thread.
  void set_interceptor_async(AsyncHandler handler) {
    auto d = std::make_unique<detail::ToolData>();
    d->async = std::move(handler);
    set_interceptor_data(std::move(d));
  }

  void deregister_tool(std::string_view name) {
    ht_error *err = nullptr;
    detail::check(ht_runtime_deregister_tool(raw(), name.data(), name.size(), &err), err);
  }
  /// Defines or replaces a host toolset ({"name","description"?,"tools"?,"includes"?}).
  void define_toolset(std::string_view toolset_json) {
    ht_error *err = nullptr;
    detail::check(ht_runtime_define_toolset(raw(), toolset_json.data(), toolset_json.size(), &err), err);
  }
  void alias_toolset(std::string_view alias, std::string_view target) {
    ht_error *err = nullptr;
    detail::check(
        ht_runtime_alias_toolset(raw(), alias.data(), alias.size(), target.data(), target.size(), &err), err);
  }
  /// Every toolset with its tools and availability (JSON array).
  std::string toolsets_json() const {
    char *out = nullptr;
    size_t n = 0;
    ht_error *err = nullptr;
    detail::check(ht_runtime_toolsets_json(raw(), &out, &n, &err), err);
    return detail::take(out, n);
  }
  uint64_t generation() const noexcept { return ht_runtime_generation(rt_.get()); }
  void invalidate_availability() { detail::check(ht_runtime_invalidate_availability(raw()), nullptr); }

  /// Tool definitions for the model (query: {"enabled_toolsets"?,"disabled_toolsets"?,"format"?}).
  std::string definitions(std::string_view query_json = {}) const {
    char *out = nullptr;
    size_t n = 0;
    ht_error *err = nullptr;
    detail::check(ht_runtime_definitions_json(raw(), query_json.data(), query_json.size(), &out, &n, &err),
                  err);
    return detail::take(out, n);
  }

#ifdef HT_CPP_HAS_NLOHMANN
  /// Registers a typed tool: each call's arguments (repaired and validated
  /// against the spec's schema by the library) are converted to `Args` with
  /// nlohmann's from_json (e.g. NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE), and the
  /// handler's returned JSON is the result (a JSON string is sent as plain
  /// text). A conversion failure answers the model with
  /// "invalid arguments for <tool>: ..." and the handler is not called; an
  /// exception from the handler answers with its message. The schema stays
  /// explicit in `spec` (C++ has no reflection).
  template <class Args, class F>
  void register_typed(const nlohmann::json &spec, F handler, Check check = {}) {
    register_tool(
        spec.dump(),
        [h = std::move(handler)](const Call &call) -> std::string {
          Args args{};
          try {
            nlohmann::json::parse(call.args_json()).get_to(args);
          } catch (const nlohmann::json::exception &e) {
            throw std::invalid_argument("invalid arguments for " + std::string(call.tool_name()) + ": " + e.what());
          }
          nlohmann::json out = h(static_cast<const Args &>(args), call);
          return out.is_string() ? out.get<std::string>() : out.dump();
        },
        std::move(check));
  }
  /// Registers a tool whose handler takes and returns JSON values.
  void register_json(const nlohmann::json &spec,
                     std::function<nlohmann::json(const nlohmann::json &args, const Call &call)> handler,
                     Check check = {}) {
    if (!handler) throw Error(Status::InvalidArgument, "register_json: empty handler");
    register_tool(
        spec.dump(),
        [h = std::move(handler)](const Call &call) -> std::string {
          nlohmann::json out = h(nlohmann::json::parse(call.args_json()), call);
          return out.is_string() ? out.get<std::string>() : out.dump();
        },
        std::move(check));
  }
  /// definitions() as a JSON value.
  nlohmann::json definitions_json(const nlohmann::json &query = nlohmann::json::object()) const {
    return nlohmann::json::parse(definitions(query.dump()));
  }
  /// dispatch() with JSON values: the result parsed when it is JSON, else a JSON string.
  nlohmann::json dispatch_json(std::string_view name, const nlohmann::json &args = nlohmann::json::object(),
                               const nlohmann::json &context = nlohmann::json::object()) const {
    std::string text = dispatch(name, args.dump(), context.dump());
    nlohmann::json v = nlohmann::json::parse(text, nullptr, false);
    return v.is_discarded() ? nlohmann::json(text) : v;
  }
#endif

  /// Runs one call and waits. The handler runs on this thread. Returns the
  /// text for the model (error results are {"error": ...} text, not exceptions).
  std::string dispatch(std::string_view name, std::string_view args_json = "{}",
                       std::string_view context_json = {}) const {
    char *out = nullptr;
    size_t n = 0;
    ht_error *err = nullptr;
    detail::check(ht_runtime_dispatch(raw(), name.data(), name.size(), args_json.data(), args_json.size(),
                                      context_json.data(), context_json.size(), &out, &n, &err),
                  err);
    return detail::take(out, n);
  }

  /// Starts a call; the future gets the result text, or an Error(Cancelled)
  /// carrying the error result after cancel() or runtime close.
  std::future<std::string> dispatch_async(std::string_view name, std::string_view args_json = "{}",
                                          std::string_view context_json = {},
                                          uint64_t *out_call_id = nullptr) const {
    auto p = std::make_unique<std::promise<std::string>>();
    auto fut = p->get_future();
    ht_error *err = nullptr;
    detail::check(ht_runtime_dispatch_async(raw(), name.data(), name.size(), args_json.data(), args_json.size(),
                                            context_json.data(), context_json.size(), &detail::promise_done,
                                            p.get(), out_call_id, &err),
                  err);
    p.release();  // owned by the completion now
    return fut;
  }

  /// Starts a call; `on_done` runs exactly once on the callback thread. Returns the call id.
  uint64_t dispatch_async_cb(std::string_view name, std::string_view args_json, std::string_view context_json,
                             Completion on_done) const {
    if (!on_done) throw Error(Status::InvalidArgument, "dispatch_async_cb: empty completion");
    auto f = std::make_unique<Completion>(std::move(on_done));
    uint64_t id = 0;
    ht_error *err = nullptr;
    detail::check(ht_runtime_dispatch_async(raw(), name.data(), name.size(), args_json.data(), args_json.size(),
                                            context_json.data(), context_json.size(), &detail::completion_done,
                                            f.get(), &id, &err),
                  err);
    f.release();
    return id;
  }

  /// Cancels an async call. False when it already completed (or never existed).
  bool cancel(uint64_t call_id) {
    ht_error *err = nullptr;
    ht_status st = ht_runtime_cancel(raw(), call_id, &err);
    if (st == HT_STATUS_NOT_FOUND) {
      ht_error_free(err);
      return false;
    }
    detail::check(st, err);
    return true;
  }

  /// Dispatches a model's tool_calls array; returns [{"tool_call_id","name","content"}].
  std::string dispatch_batch(std::string_view tool_calls_json, std::string_view context_json = {}) const {
    char *out = nullptr;
    size_t n = 0;
    ht_error *err = nullptr;
    detail::check(ht_runtime_dispatch_batch(raw(), tool_calls_json.data(), tool_calls_json.size(),
                                            context_json.data(), context_json.size(), &out, &n, &err),
                  err);
    return detail::take(out, n);
  }

  /// Adds a hook (pre_tool_call, post_tool_call, transform_tool_result) that
  /// returns its decision JSON. If it throws, a pre_tool_call hook blocks the
  /// call; other events continue unchanged.
  void add_hook(std::string_view event, HookHandler hook) {
    if (!hook) throw Error(Status::InvalidArgument, "add_hook: empty hook");
    auto d = std::make_unique<detail::HookData>();
    d->sync = std::move(hook);
    add_hook_data(event, std::move(d));
  }
  /// Adds a hook that takes the Hook and answers it later from any thread.
  void add_hook_async(std::string_view event, AsyncHookHandler hook) {
    if (!hook) throw Error(Status::InvalidArgument, "add_hook_async: empty hook");
    auto d = std::make_unique<detail::HookData>();
    d->async = std::move(hook);
    add_hook_data(event, std::move(d));
  }

  /// Receives library events (JSON) on the callback thread; empty removes it.
  void set_event_handler(EventHandler handler) {
    ht_error *err = nullptr;
    if (!handler) {
      detail::check(ht_runtime_set_event_handler(raw(), nullptr, nullptr, nullptr, &err), err);
      return;
    }
    auto d = std::make_unique<EventHandler>(std::move(handler));
    detail::check(ht_runtime_set_event_handler(raw(), &detail::event_trampoline, d.get(),
                                               &detail::delete_trampoline<EventHandler>, &err),
                  err);
    d.release();
  }

  /// Sets the handler asked when a command needs approval (empty removes it;
  /// then `ask` commands are denied unless approvals.non_interactive is "allow").
  void set_approval_handler(ApprovalHandler handler) {
    set_approval_data(Kind::Approval, std::move(handler), {});
  }
  /// Async approval handler: take the Approval and answer it later (e.g. after asking a human).
  void set_approval_handler_async(AsyncApprovalHandler handler) {
    set_approval_data(Kind::Approval, {}, std::move(handler));
  }
  /// Sets the smart reviewer (approvals.mode "smart"): answers
  /// {"decision":"approve"|"deny"|"escalate"}; it can never allow a block-tier command.
  void set_approval_reviewer(ApprovalHandler reviewer) {
    set_approval_data(Kind::Reviewer, std::move(reviewer), {});
  }
  void set_approval_reviewer_async(AsyncApprovalHandler reviewer) {
    set_approval_data(Kind::Reviewer, {}, std::move(reviewer));
  }

  /// Sets the OAuth handler: the browser step of MCP HTTP servers' OAuth 2.1
  /// sign-in (the library does discovery, registration, PKCE, tokens and
  /// refresh). It gets {"kind":"oauth_authorize","server","authorization_url",
  /// "redirect_uri","scopes","step_up","timeout_s"}: show the user the URL and
  /// answer oauth_redirect(<the URL the browser was sent back to>) or
  /// oauth_error(reason). Servers with oauth.token_store "host" also send
  /// "oauth_tokens_load" (answer {"tokens":<saved>|null}), "oauth_tokens_save"
  /// (keep "tokens" secret, answer {}) and "oauth_tokens_clear" (answer {}).
  /// Set it before add_mcp_server. Empty removes it (a server that needs
  /// authorization then fails, see mcp_status()). The previous handler is
  /// released when replaced or when the runtime closes.
  void set_oauth_handler(OAuthHandler handler) { set_approval_data(Kind::OAuth, std::move(handler), {}); }
  /// Async OAuth handler: take the Approval (is_oauth()) and answer it later
  /// from any thread with redirect(), respond_error() or respond(); the
  /// sign-in waits up to the request's timeout_s.
  void set_oauth_handler_async(AsyncApprovalHandler handler) {
    set_approval_data(Kind::OAuth, {}, std::move(handler));
  }

  /// The state of every MCP server as a JSON object keyed by name ("{}" without
  /// servers): state ("connecting"|"ready"|"disconnected"|"failed"|"disabled"|
  /// "closed"), transport, toolset, tools, pid, connects, failures, last_error,
  /// protocol_version, ... (docs/json-shapes.md). Never waits for a server.
  std::string mcp_status() const {
    char *out = nullptr;
    size_t n = 0;
    ht_error *err = nullptr;
    detail::check(ht_runtime_mcp_status(raw(), &out, &n, &err), err);
    return detail::take(out, n);
  }
  /// Adds an MCP server at run time: `config_json` is one mcp_servers entry
  /// ({"command","args",...} or {"url","headers","oauth",...}). Blocks for the
  /// server's first connection attempt (its tools, named mcp__<name>__<tool>,
  /// are registered when it returns), or leaves it retrying in the background
  /// (see mcp_status()). Throws Error(Conflict) for a name in use,
  /// Error(InvalidJson) / Error(InvalidArgument) for a bad config. Not from a
  /// tool handler of this runtime (that call would wait for the server).
  void add_mcp_server(std::string_view name, std::string_view config_json) {
    ht_error *err = nullptr;
    detail::check(
        ht_runtime_add_mcp_server(raw(), name.data(), name.size(), config_json.data(), config_json.size(), &err),
        err);
  }
  /// Stops an MCP server (configured or added) and deregisters its tools;
  /// calls in flight to it end with an error. Error(NotFound) when unknown.
  /// Blocks at most about 0.5 s.
  void remove_mcp_server(std::string_view name) {
    ht_error *err = nullptr;
    detail::check(ht_runtime_remove_mcp_server(raw(), name.data(), name.size(), &err), err);
  }
  /// Accepts the changed definitions of a server's held tools (status
  /// "held_tools", pin on). Error(NotFound) when unknown, Error(Timeout) when
  /// the new listing takes longer (the tools then come back in the background).
  void accept_mcp_tools(std::string_view name) {
    ht_error *err = nullptr;
    detail::check(ht_runtime_mcp_accept_tools(raw(), name.data(), name.size(), &err), err);
  }
  /// Serves this runtime's enabled tools (host tools included) as an MCP
  /// server on a library thread. `options_json`: "" or "{}" for stdio on
  /// descriptors 0 and 1 ({"read_fd","write_fd"} for others);
  /// {"transport":"http"} for streamable HTTP on a free loopback port with a
  /// generated bearer token (McpServer::address() names the URL and the token
  /// file); the header documents the rest (address, token, auth, limits,
  /// approvals). Throws Error(InvalidJson / InvalidArgument) for bad options,
  /// Error(Internal) for an address in use.
  McpServer serve_mcp(std::string_view options_json = {}) const {
    ht_mcp_server *server = nullptr;
    ht_error *err = nullptr;
    detail::check(ht_runtime_serve_mcp(raw(), options_json.data(), options_json.size(), &server, &err), err);
    return McpServer(server);
  }
#ifdef HT_CPP_HAS_NLOHMANN
  /// mcp_status() as a JSON value.
  nlohmann::json mcp_status_json() const { return nlohmann::json::parse(mcp_status()); }
#endif

  /// The persistent allowlist (JSON array of {"rule","argv_prefix","exact","added_at","note"}).
  std::string allowlist_json() const {
    char *out = nullptr;
    size_t n = 0;
    ht_error *err = nullptr;
    detail::check(ht_runtime_allowlist_json(raw(), &out, &n, &err), err);
    return detail::take(out, n);
  }
  /// Replaces the allowlist (validated; saved when approvals.allowlist_path is set).
  void set_allowlist(std::string_view allowlist_json) {
    ht_error *err = nullptr;
    detail::check(ht_runtime_allowlist_set(raw(), allowlist_json.data(), allowlist_json.size(), &err), err);
  }
  /// Forgets the "session" approvals given in session_id.
  void clear_session_approvals(std::string_view session_id) {
    ht_error *err = nullptr;
    detail::check(ht_runtime_clear_session_approvals(raw(), session_id.data(), session_id.size(), &err), err);
  }

  /// Types into a running PTY command (`id`: "proc_..." of a background
  /// process, or the tool_call_id of a foreground pty=true command); `data`
  /// is raw bytes ("\r" is Enter). Returns the bytes written. NotFound for an
  /// unknown or finished id; Unsupported without the terminal toolset.
  size_t process_write(std::string_view id, std::string_view data) {
    size_t written = 0;
    ht_error *err = nullptr;
    detail::check(
        ht_runtime_process_write(raw(), id.data(), id.size(), data.data(), data.size(), &written, &err), err);
    return written;
  }
  /// Sets the working directory of a task ("" = the default task); an absolute existing path.
  void set_task_cwd(std::string_view task_id, std::string_view cwd) {
    ht_error *err = nullptr;
    detail::check(ht_runtime_set_task_cwd(raw(), task_id.data(), task_id.size(), cwd.data(), cwd.size(), &err),
                  err);
  }
  /// Sets environment variables for a task's later commands: {"NAME":"value"|null}.
  void set_task_env(std::string_view task_id, std::string_view env_json) {
    ht_error *err = nullptr;
    detail::check(
        ht_runtime_set_task_env(raw(), task_id.data(), task_id.size(), env_json.data(), env_json.size(), &err),
        err);
  }

  /// Gives a task its own network setting in place of terminal.network: "\"off\"", "\"on\"",
  /// an allow-list object ({"allow":["pypi.org"]}) or "null" (back to terminal.network). Sandbox:
  /// from the task's next command; docker/podman: before the task's container starts
  /// (InvalidArgument otherwise). Unsupported on other backends.
  void set_task_network(std::string_view task_id, std::string_view network_json) {
    ht_error *err = nullptr;
    detail::check(ht_runtime_set_task_network(raw(), task_id.data(), task_id.size(), network_json.data(),
                                              network_json.size(), &err),
                  err);
  }

  /// Drops a task's state (shell state, background processes).
  void cleanup_task(std::string_view task_id) {
    ht_error *err = nullptr;
    detail::check(ht_runtime_cleanup_task(raw(), task_id.data(), task_id.size(), &err), err);
  }

  /// Analyses a shell command with this runtime's rules (verdict JSON).
  std::string command_check(std::string_view command) const {
    char *out = nullptr;
    size_t n = 0;
    ht_error *err = nullptr;
    detail::check(ht_command_check(raw(), command.data(), command.size(), &out, &n, &err), err);
    return detail::take(out, n);
  }

 private:
  struct Deleter {
    void operator()(ht_runtime *rt) const noexcept { ht_runtime_free(rt); }
  };
  explicit Runtime(ht_runtime *rt) noexcept : rt_(rt) {}

  ht_runtime *raw() const {
    if (!rt_) throw Error(Status::Closed, "the runtime is closed");
    return rt_.get();
  }

  void register_data(std::string_view spec_json, std::unique_ptr<detail::ToolData> d) {
    ht_error *err = nullptr;
    ht_check_fn chk = d->check ? &detail::check_trampoline : nullptr;
    detail::check(ht_runtime_register_tool(raw(), spec_json.data(), spec_json.size(), &detail::tool_trampoline,
                                           chk, d.get(), &detail::delete_trampoline<detail::ToolData>, &err),
                  err);
    d.release();  // the library owns it until the free function runs
  }

  void set_interceptor_data(std::unique_ptr<detail::ToolData> d) {
    ht_error *err = nullptr;
    if (!d->sync && !d->async) {
      detail::check(ht_runtime_set_interceptor(raw(), nullptr, nullptr, nullptr, &err), err);
      return;
    }
    detail::check(ht_runtime_set_interceptor(raw(), &detail::tool_trampoline, d.get(),
                                             &detail::delete_trampoline<detail::ToolData>, &err),
                  err);
    d.release();
  }

  void add_hook_data(std::string_view event, std::unique_ptr<detail::HookData> d) {
    d->blocks_on_error = event == "pre_tool_call";
    ht_error *err = nullptr;
    detail::check(ht_runtime_add_hook(raw(), event.data(), event.size(), &detail::hook_trampoline, d.get(),
                                      &detail::delete_trampoline<detail::HookData>, &err),
                  err);
    d.release();
  }

  enum class Kind { Approval, Reviewer, OAuth };

  void set_approval_data(Kind kind, ApprovalHandler sync, AsyncApprovalHandler async) {
    auto setter = kind == Kind::Reviewer ? &ht_runtime_set_approval_reviewer
                  : kind == Kind::OAuth  ? &ht_runtime_set_oauth_handler
                                         : &ht_runtime_set_approval_handler;
    ht_error *err = nullptr;
    if (!sync && !async) {
      detail::check(setter(raw(), nullptr, nullptr, nullptr, &err), err);
      return;
    }
    auto d = std::make_unique<detail::ApprovalData>();
    d->sync = std::move(sync);
    d->async = std::move(async);
    d->reviewer = kind == Kind::Reviewer;
    d->oauth = kind == Kind::OAuth;
    detail::check(setter(raw(), &detail::approval_trampoline, d.get(),
                         &detail::delete_trampoline<detail::ApprovalData>, &err),
                  err);
    d.release();
  }

  std::unique_ptr<ht_runtime, Deleter> rt_;
};

}  // namespace hermes_tools

#endif  // HERMES_TOOLS_HPP
