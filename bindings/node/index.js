'use strict';
// hermes-tools: Node.js binding of the hermes-tools C library, through koffi.
//
// Threading model (see README.md and shared/design/bindings.md):
// * Library callbacks may come from library threads. koffi queues them to the
//   JS thread and blocks the calling thread until the JS function returns, so
//   every trampoline here is quick, never throws, and hands real work to
//   Promises that answer later (ht_call_respond / ht_hook_respond from JS).
// * Calls go through ht_runtime_dispatch_async (dispatch, dispatchAsync, and
//   dispatchBatch, which is built on it in JS): no libuv worker thread ever
//   waits while a handler, hook or approval callback does asynchronous JS
//   work, so handlers can use fs and friends freely, and long terminal
//   commands run on library threads, not on the libuv pool.
// * The few calls left on koffi's `.async` (a libuv worker) wait for the JS
//   thread only to run *synchronous* trampolines (availability checks, free
//   functions, cancelled completions): definitions/toolsets, cleanupTask and
//   ht_runtime_free. They cannot deadlock on the pool: no pool work is needed
//   to run a synchronous function. Process exit during ht_runtime_free is
//   handled by an 'exit' guard (see installExitGuard).
// * Each pending call holds its own ref'd timer (koffi's queued callbacks do
//   not keep the loop alive), released by its completion, cancel() or close().
// * user_data is an integer id into a Map, never a pointer to JS memory.

const fs = require('node:fs');
const path = require('node:path');
const koffi = require('koffi');

/** The ABI this binding was written for (HT_ABI_VERSION in hermes_tools.h). */
const ABI_VERSION = 1;

const Status = Object.freeze({
  OK: 0,
  INVALID_ARGUMENT: 1,
  INVALID_UTF8: 2,
  INVALID_JSON: 3,
  NOT_FOUND: 4,
  CONFLICT: 5,
  CLOSED: 6,
  CANCELLED: 7,
  TIMEOUT: 8,
  TOOL_ERROR: 9,
  PANIC: 10,
  INTERNAL: 11,
  UNSUPPORTED: 12,
});
/**
 * Every event type the library sends to Runtime.setEventHandler (the
 * object's `type`). Streaming events (terminal.started/output,
 * process.output) come only when terminal.stream_output is on.
 */
const EVENT_TYPES = Object.freeze([
  'terminal.started',
  'terminal.output',
  'terminal.finished',
  'process.output',
  'process.completed',
  'process.watch_match',
  'process.watch_disabled',
  'tool.progress',
]);

const STATUS_NAMES = Object.fromEntries(Object.entries(Status).map(([k, v]) => [v, k]));

class HermesToolsError extends Error {
  /**
   * @param {number} status ht_status code
   * @param {string} message the library's one-line message
   * @param {string} [result] for a cancelled call: the error text for the model
   */
  constructor(status, message, result) {
    const name = STATUS_NAMES[status] || `STATUS_${status}`;
    super(`${name}: ${message}`);
    this.name = 'HermesToolsError';
    this.status = status;
    this.statusName = name;
    this.detail = message;
    if (result !== undefined) this.result = result;
  }
}

// ---------------------------------------------------------------------------
// Loading and the ABI check
// ---------------------------------------------------------------------------

// koffi runs each C call on a stack it allocates itself: 128 KiB for `.async`
// calls by default. Our blocking calls run tool handlers inline (the built-in
// terminal, hooks, approval), which needs a normal thread-sized stack, above
// all in a debug build of the library. 8 MiB is what Linux gives a main thread.
const STACK_SIZE = 8 * 1024 * 1024;
try {
  const cfg = koffi.config();
  const want = {};
  if (cfg.async_stack_size < STACK_SIZE) want.async_stack_size = STACK_SIZE;
  if (cfg.sync_stack_size < STACK_SIZE) want.sync_stack_size = STACK_SIZE;
  if (Object.keys(want).length) koffi.config({ ...cfg, ...want });
} catch (e) {
  process.emitWarning(`hermes-tools: cannot raise koffi's stack sizes (${e.message}); deep calls may crash`);
}

function candidates() {
  if (process.env.HERMES_TOOLS_LIB) return [process.env.HERMES_TOOLS_LIB];
  const out = [];
  // An installed npm package carries the library next to this file.
  const bundled = path.join(__dirname, 'native', 'libhermes_tools.so');
  if (fs.existsSync(bundled)) out.push(bundled);
  const root = path.resolve(__dirname, '..', '..');
  for (const base of [root, process.cwd()]) {
    for (const profile of ['debug', 'release']) {
      const p = path.join(base, 'target', profile, 'libhermes_tools.so');
      if (fs.existsSync(p)) out.push(p);
    }
  }
  out.push('libhermes_tools.so');
  return out;
}

function loadLibrary() {
  const errors = [];
  for (const p of candidates()) {
    try {
      return { lib: koffi.load(p), path: p };
    } catch (e) {
      errors.push(`${p}: ${e.message}`);
    }
  }
  throw new Error(
    'hermes-tools: cannot load libhermes_tools.so (set HERMES_TOOLS_LIB or run `cargo build`): ' +
      errors.join('; '),
  );
}

const { lib, path: libraryPath } = loadLibrary();
{
  const abi = lib.func('uint32_t ht_abi_version(void)')();
  if (abi !== ABI_VERSION) {
    throw new Error(
      `hermes-tools: ABI mismatch: this binding needs ABI ${ABI_VERSION} but ${libraryPath} ` +
        `has ABI ${abi}; rebuild the library or use a matching binding`,
    );
  }
}

// Callback prototypes. user_data is uintptr_t: plain integer ids.
const HandlerFn = koffi.proto('void ht_tool_handler_fn(uintptr_t user_data, void *call)');
const CheckFn = koffi.proto('bool ht_check_fn(uintptr_t user_data)');
const FreeFn = koffi.proto('void ht_free_fn(uintptr_t user_data)');
const CompletionFn = koffi.proto(
  'void ht_completion_fn(uintptr_t user_data, int32_t status, const void *result, size_t result_len)',
);
const HookFn = koffi.proto('void ht_hook_fn(uintptr_t user_data, void *hook)');
const EventFn = koffi.proto('void ht_event_fn(uintptr_t user_data, const void *event_json, size_t len)');
const ApprovalFn = koffi.proto('void ht_approval_fn(uintptr_t user_data, void *approval)');
const CancelFn = koffi.proto('void ht_cancel_fn(uintptr_t user_data, void *call)');
const LogFn = koffi.proto('void ht_log_fn(uintptr_t user_data, int32_t level, const void *message, size_t len)');

// Every function of the header. Strings go in as (Buffer, length); outputs as
// raw pointers (BigInt) that we decode with their length and free.
const C = {
  abiVersion: lib.func('uint32_t ht_abi_version(void)'),
  version: lib.func('const char *ht_version(void)'),
  features: lib.func('const char *ht_features(void)'),
  runtimeNew: lib.func(
    'int32_t ht_runtime_new(const uint8_t *config, size_t len, _Out_ void **out_rt, _Out_ void **out_err)',
  ),
  runtimeFree: lib.func('void ht_runtime_free(void *rt)'),
  registerTool: lib.func(
    'int32_t ht_runtime_register_tool(void *rt, const uint8_t *spec, size_t len, ht_tool_handler_fn *handler, ' +
      'ht_check_fn *check, uintptr_t user_data, ht_free_fn *free_user_data, _Out_ void **out_err)',
  ),
  deregisterTool: lib.func(
    'int32_t ht_runtime_deregister_tool(void *rt, const uint8_t *name, size_t len, _Out_ void **out_err)',
  ),
  defineToolset: lib.func(
    'int32_t ht_runtime_define_toolset(void *rt, const uint8_t *json, size_t len, _Out_ void **out_err)',
  ),
  aliasToolset: lib.func(
    'int32_t ht_runtime_alias_toolset(void *rt, const uint8_t *alias, size_t alias_len, ' +
      'const uint8_t *target, size_t target_len, _Out_ void **out_err)',
  ),
  toolsetsJson: lib.func(
    'int32_t ht_runtime_toolsets_json(void *rt, _Out_ void **out_json, _Out_ size_t *out_len, _Out_ void **out_err)',
  ),
  generation: lib.func('uint64_t ht_runtime_generation(void *rt)'),
  invalidateAvailability: lib.func('int32_t ht_runtime_invalidate_availability(void *rt)'),
  definitionsJson: lib.func(
    'int32_t ht_runtime_definitions_json(void *rt, const uint8_t *query, size_t len, ' +
      '_Out_ void **out_json, _Out_ size_t *out_len, _Out_ void **out_err)',
  ),
  dispatch: lib.func(
    'int32_t ht_runtime_dispatch(void *rt, const uint8_t *name, size_t name_len, const uint8_t *args, ' +
      'size_t args_len, const uint8_t *ctx, size_t ctx_len, _Out_ void **out_result, _Out_ size_t *out_len, ' +
      '_Out_ void **out_err)',
  ),
  dispatchAsync: lib.func(
    'int32_t ht_runtime_dispatch_async(void *rt, const uint8_t *name, size_t name_len, const uint8_t *args, ' +
      'size_t args_len, const uint8_t *ctx, size_t ctx_len, ht_completion_fn *on_done, uintptr_t user_data, ' +
      '_Out_ uint64_t *out_call_id, _Out_ void **out_err)',
  ),
  cancel: lib.func('int32_t ht_runtime_cancel(void *rt, uint64_t call_id, _Out_ void **out_err)'),
  dispatchBatch: lib.func(
    'int32_t ht_runtime_dispatch_batch(void *rt, const uint8_t *calls, size_t len, const uint8_t *ctx, ' +
      'size_t ctx_len, _Out_ void **out_json, _Out_ size_t *out_len, _Out_ void **out_err)',
  ),
  callArgsJson: lib.func('const void *ht_call_args_json(const void *call, _Out_ size_t *out_len)'),
  callContextJson: lib.func('const void *ht_call_context_json(const void *call, _Out_ size_t *out_len)'),
  callToolName: lib.func('const void *ht_call_tool_name(const void *call, _Out_ size_t *out_len)'),
  callRespond: lib.func('int32_t ht_call_respond(void *call, bool is_error, const uint8_t *result, size_t len)'),
  addHook: lib.func(
    'int32_t ht_runtime_add_hook(void *rt, const uint8_t *event, size_t len, ht_hook_fn *hook_fn, ' +
      'uintptr_t user_data, ht_free_fn *free_user_data, _Out_ void **out_err)',
  ),
  hookEventJson: lib.func('const void *ht_hook_event_json(const void *hook, _Out_ size_t *out_len)'),
  hookRespond: lib.func('int32_t ht_hook_respond(void *hook, const uint8_t *decision, size_t len)'),
  setEventHandler: lib.func(
    'int32_t ht_runtime_set_event_handler(void *rt, ht_event_fn *event_fn, uintptr_t user_data, ' +
      'ht_free_fn *free_user_data, _Out_ void **out_err)',
  ),
  cleanupTask: lib.func(
    'int32_t ht_runtime_cleanup_task(void *rt, const uint8_t *task_id, size_t len, _Out_ void **out_err)',
  ),
  commandCheck: lib.func(
    'int32_t ht_command_check(void *rt, const uint8_t *command, size_t len, _Out_ void **out_json, ' +
      '_Out_ size_t *out_len, _Out_ void **out_err)',
  ),
  setLogHandler: lib.func(
    'int32_t ht_set_log_handler(ht_log_fn *log_fn, int32_t level, uintptr_t user_data, ht_free_fn *free_user_data)',
  ),
  stringFree: lib.func('void ht_string_free(void *s)'),
  errorCode: lib.func('int32_t ht_error_code(const void *err)'),
  errorMessage: lib.func('const char *ht_error_message(const void *err)'),
  errorFree: lib.func('void ht_error_free(void *err)'),
};

// The approval round trip: bound when the loaded library exports it, so the
// binding still loads against an older build of the same ABI.
function optional(decl) {
  try {
    return lib.func(decl);
  } catch (_) {
    return null;
  }
}
Object.assign(C, {
  callOnCancel: optional(
    'int32_t ht_call_on_cancel(void *call, ht_cancel_fn *cb, uintptr_t user_data, ht_free_fn *free_user_data)',
  ),
  callIsCancelled: optional('bool ht_call_is_cancelled(const void *call)'),
  callProgress: optional(
    'int32_t ht_call_progress(void *call, double progress, double total, const uint8_t *message, size_t len)',
  ),
  setApprovalHandler: optional(
    'int32_t ht_runtime_set_approval_handler(void *rt, ht_approval_fn *fn, uintptr_t user_data, ' +
      'ht_free_fn *free_user_data, _Out_ void **out_err)',
  ),
  setApprovalReviewer: optional(
    'int32_t ht_runtime_set_approval_reviewer(void *rt, ht_approval_fn *fn, uintptr_t user_data, ' +
      'ht_free_fn *free_user_data, _Out_ void **out_err)',
  ),
  approvalRequestJson: optional('const void *ht_approval_request_json(const void *approval, _Out_ size_t *out_len)'),
  approvalRespond: optional('int32_t ht_approval_respond(void *approval, const uint8_t *decision, size_t len)'),
  allowlistJson: optional(
    'int32_t ht_runtime_allowlist_json(void *rt, _Out_ void **out_json, _Out_ size_t *out_len, _Out_ void **out_err)',
  ),
  setInterceptor: optional(
    'int32_t ht_runtime_set_interceptor(void *rt, ht_tool_handler_fn *handler, uintptr_t user_data, ' +
      'ht_free_fn *free_user_data, _Out_ void **out_err)',
  ),
  allowlistSet: optional(
    'int32_t ht_runtime_allowlist_set(void *rt, const uint8_t *json, size_t len, _Out_ void **out_err)',
  ),
  clearSessionApprovals: optional(
    'int32_t ht_runtime_clear_session_approvals(void *rt, const uint8_t *session_id, size_t len, _Out_ void **out_err)',
  ),
  setOAuthHandler: optional(
    'int32_t ht_runtime_set_oauth_handler(void *rt, ht_approval_fn *fn, uintptr_t user_data, ' +
      'ht_free_fn *free_user_data, _Out_ void **out_err)',
  ),
  mcpStatus: optional(
    'int32_t ht_runtime_mcp_status(void *rt, _Out_ void **out_json, _Out_ size_t *out_len, _Out_ void **out_err)',
  ),
  addMcpServer: optional(
    'int32_t ht_runtime_add_mcp_server(void *rt, const uint8_t *name, size_t name_len, ' +
      'const uint8_t *config, size_t config_len, _Out_ void **out_err)',
  ),
  removeMcpServer: optional(
    'int32_t ht_runtime_remove_mcp_server(void *rt, const uint8_t *name, size_t name_len, _Out_ void **out_err)',
  ),
  mcpAcceptTools: optional(
    'int32_t ht_runtime_mcp_accept_tools(void *rt, const uint8_t *name, size_t name_len, _Out_ void **out_err)',
  ),
  serveMcp: optional(
    'int32_t ht_runtime_serve_mcp(void *rt, const uint8_t *options, size_t options_len, ' +
      '_Out_ void **out_server, _Out_ void **out_err)',
  ),
  mcpServerAddress: optional('const char *ht_mcp_server_address(const void *server)'),
  mcpServerWait: optional('int32_t ht_mcp_server_wait(const void *server, uint64_t timeout_ms, _Out_ void **out_err)'),
  mcpServerFree: optional('void ht_mcp_server_free(void *server)'),
});

function need(fn, name) {
  if (!fn) throw new HermesToolsError(Status.UNSUPPORTED, `${name} is not exported by the loaded library`);
  return fn;
}

/** Normalise a host approval answer (see Runtime.setApprovalHandler / setApprovalReviewer). */
function approvalAnswer(kind, value, request) {
  if (value && typeof value === 'object') return value;
  if (kind === 'oauth') {
    // A string is the redirect URL; nothing means: no tokens saved (load),
    // done (save, clear), or giving the sign-in up (authorize).
    if (typeof value === 'string') return { redirect_url: value };
    const what = request && request.kind;
    if (what === 'oauth_tokens_load') return { tokens: null };
    if (what === 'oauth_tokens_save' || what === 'oauth_tokens_clear') return {};
    return { error: "the host's OAuth handler gave no redirect URL" };
  }
  if (kind === 'review') {
    if (value === true) return { decision: 'approve' };
    if (value === false) return { decision: 'deny' };
    if (typeof value === 'string') return { decision: value };
    return { decision: 'escalate' };
  }
  if (value === true) return { choice: 'once' };
  if (typeof value === 'string') return { choice: value };
  return { choice: 'deny' };
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/** (Buffer|null, length) for a string input. */
function bytes(value) {
  if (value === null || value === undefined) return [null, 0];
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) {
    const b = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    return [b, b.length];
  }
  if (typeof value !== 'string') {
    throw new TypeError(`hermes-tools: expected a string or Buffer, got ${typeof value}`);
  }
  const b = Buffer.from(value, 'utf8');
  return [b, b.length];
}

/** JSON text for a value: strings/Buffers pass through as JSON text. */
function jsonArg(value) {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string' || Buffer.isBuffer(value) || value instanceof Uint8Array) return value;
  return JSON.stringify(value);
}

function resultText(value) {
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (value === undefined) return 'null';
  const s = JSON.stringify(value);
  return s === undefined ? 'null' : s;
}

function takeError(status, errBox) {
  const err = errBox[0];
  if (err) {
    const code = C.errorCode(err);
    const message = C.errorMessage(err) || '';
    C.errorFree(err);
    errBox[0] = null;
    return new HermesToolsError(code, message);
  }
  return new HermesToolsError(status, (STATUS_NAMES[status] || 'error').toLowerCase().replace(/_/g, ' '));
}

function check(status, errBox) {
  if (status !== Status.OK) throw takeError(status, errBox || [null]);
}

/** Copy an owned library string and free it with ht_string_free. */
function takeString(ptrBox, lenBox) {
  const p = ptrBox[0];
  if (!p) return '';
  try {
    return koffi.decode(p, 'char', Number(lenBox[0]));
  } finally {
    C.stringFree(p);
  }
}

function borrowed(fn, obj) {
  const n = [0];
  const p = fn(obj, n);
  if (!p) return null;
  return koffi.decode(p, 'char', Number(n[0]));
}

/** Run a koffi function on a worker thread; resolves with its return value. */
function callAsync(fn, ...args) {
  return new Promise((resolve, reject) => {
    fn.async(...args, (err, res) => (err ? reject(err) : resolve(res)));
  });
}

function errText(e) {
  try {
    if (e instanceof Error) return e.message ? `${e.name}: ${e.message}` : e.name;
    if (e === undefined || e === null) return 'failed without an error value';
    return String(e);
  } catch (_) {
    return 'failed with an error that cannot be printed';
  }
}

function reportUncaught(where, e) {
  try {
    process.emitWarning(`hermes-tools: exception in ${where}: ${e && e.stack ? e.stack : e}`);
  } catch (_) {
    /* nothing more we can do */
  }
}

// ---------------------------------------------------------------------------
// Keeping the event loop alive, per call
// ---------------------------------------------------------------------------

// Completions that koffi queues from the library's callback thread do not
// keep Node's event loop alive by themselves. Each pending async call holds
// its own ref'd timer from dispatch until its completion, cancel() or close()
// releases it. Nothing else holds the loop: a handler whose Promise never
// settles keeps nothing alive once the library has timed its call out.
const KEEP_ALIVE_MS = 2 ** 30; // ~12 days; setInterval's limit is 2^31-1
function keepAlive() {
  let timer = setInterval(() => {}, KEEP_ALIVE_MS);
  return () => {
    if (timer !== null) {
      clearInterval(timer);
      timer = null;
    }
  };
}

/** Warn once per message kind on stderr (process warning), never throw. */
function warn(message, code) {
  try {
    process.emitWarning(message, { code: code || 'HERMES_TOOLS' });
  } catch (_) {
    /* nothing more we can do */
  }
}

// ht_runtime_free runs on a libuv worker thread (it waits for the library's
// callback thread, which runs our free and completion trampolines on the JS
// thread). Node joins its worker threads when the process exits; if the
// process exits while a free still waits for JS callbacks that can no longer
// run, that join would never return. So while a free is in flight an 'exit'
// listener ends the process with _exit(2) instead of hanging.
let freesInFlight = 0;
let exitGuard = null;
function installExitGuard() {
  if (exitGuard !== null) return;
  let _exit = null;
  try {
    _exit = koffi.load('libc.so.6').func('void _exit(int)');
  } catch (_) {
    _exit = null; // not glibc: no guard
  }
  exitGuard = (code) => {
    if (freesInFlight === 0 || !_exit) return;
    try {
      fs.writeSync(
        2,
        'hermes-tools: the process is exiting while Runtime.close() is still running; ending it at once ' +
          '(await close() before exiting)\n',
      );
    } catch (_) {
      /* ignore */
    }
    _exit(typeof code === 'number' ? code : Number(process.exitCode) || 0);
  };
  process.on('exit', exitGuard);
}

// ---------------------------------------------------------------------------
// Library facts and process-wide functions
// ---------------------------------------------------------------------------

function abiVersion() {
  return C.abiVersion();
}
function version() {
  return C.version();
}
function features() {
  return JSON.parse(C.features());
}

function commandCheckWith(rt, command) {
  const [b, n] = bytes(command);
  const out = [null];
  const len = [0];
  const err = [null];
  check(C.commandCheck(rt, b, n, out, len, err), err);
  return JSON.parse(takeString(out, len));
}

/** Analyse a shell command with the default rules, without running it. */
function commandCheck(command) {
  return commandCheckWith(null, command);
}

// Log handler: process-wide, so its trampolines live for the whole process.
const logHandlers = new Map();
let logIds = 1;
const logFreeTramp = koffi.register((ud) => {
  logHandlers.delete(Number(ud));
}, koffi.pointer(FreeFn));
const logTramp = koffi.register((ud, level, msg, len) => {
  try {
    const fn = logHandlers.get(Number(ud));
    if (fn) fn(level, msg ? koffi.decode(msg, 'char', Number(len)) : '');
  } catch (e) {
    reportUncaught('log handler', e);
  }
}, koffi.pointer(LogFn));

/**
 * Install a process-wide log handler fn(level, message) (1 error .. 5 trace);
 * null removes it. Returns a Promise for compatibility; ht_set_log_handler
 * never waits for host code, so it runs on the JS thread (no worker thread).
 * The previous handler is released after its last line. Remove the handler
 * before the process exits.
 */
async function setLogHandler(fn, level = 3) {
  if (fn === null || fn === undefined) {
    check(C.setLogHandler(null, level, 0, null));
    return;
  }
  if (typeof fn !== 'function') throw new TypeError('hermes-tools: log handler must be a function');
  const id = logIds++;
  logHandlers.set(id, fn);
  const st = C.setLogHandler(logTramp, level, id, logFreeTramp);
  if (st !== Status.OK) {
    logHandlers.delete(id);
    check(st);
  }
}

// ---------------------------------------------------------------------------
// ToolCall
// ---------------------------------------------------------------------------

// Call cancellation: one AbortController per call whose `signal` was read,
// registered with ht_call_on_cancel; the library's free callback drops it
// (after the abort, or when the call is answered).
const callAborts = new Map();
let nextAbortId = 1;
let cancelTramps = null;
function callCancelTramps() {
  if (cancelTramps) return cancelTramps;
  cancelTramps = {
    cancel: koffi.register((ud, _call) => {
      try {
        const ac = callAborts.get(Number(ud));
        if (ac && !ac.signal.aborted) ac.abort(callCancelledError());
      } catch (e) {
        reportUncaught('call cancellation', e);
      }
    }, koffi.pointer(CancelFn)),
    free: koffi.register((ud) => {
      callAborts.delete(Number(ud));
    }, koffi.pointer(FreeFn)),
  };
  return cancelTramps;
}
function callCancelledError() {
  return new HermesToolsError(
    Status.CANCELLED,
    'the library stopped waiting for this call (timeout, cancel or close); its answer is dropped',
    CANCELLED_RESULT,
  );
}

class ToolCall {
  constructor(ptr) {
    this._ptr = ptr;
    this._ac = null;
    this._deferred = false;
    /** The called tool's name. */
    this.name = borrowed(C.callToolName, ptr) || '';
    /** The arguments as JSON text (repaired and validated by the library). */
    this.argsJson = borrowed(C.callArgsJson, ptr) || '{}';
    /** The dispatch context as JSON text. */
    this.contextJson = borrowed(C.callContextJson, ptr) || '{}';
  }
  get args() {
    return JSON.parse(this.argsJson);
  }
  get context() {
    return JSON.parse(this.contextJson);
  }
  get answered() {
    return this._ptr === null;
  }
  /**
   * An AbortSignal that aborts (reason: HermesToolsError(CANCELLED)) when the
   * library stops waiting for this call: it timed out, was cancelled, or the
   * runtime closed. It does not abort when the call is answered.
   */
  get signal() {
    if (this._ac) return this._ac.signal;
    const ac = new AbortController();
    this._ac = ac;
    if (this._ptr === null || !C.callOnCancel) return ac.signal;
    const id = nextAbortId++;
    callAborts.set(id, ac);
    const t = callCancelTramps();
    // The callback may run inside this call (already cancelled).
    const st = C.callOnCancel(this._ptr, t.cancel, id, t.free);
    if (st !== Status.OK) {
      callAborts.delete(id); // refused: neither callback runs
      if (!ac.signal.aborted) ac.abort(callCancelledError());
    }
    return ac.signal;
  }
  /**
   * Report progress (total <= 0 or omitted: unknown): the event handler gets
   * a 'tool.progress' event with this call's ids. Returns the ht_status
   * (NOT_FOUND once answered, timed out or cancelled).
   */
  progress(progress, total = 0, message = '') {
    if (this._ptr === null || !C.callProgress) return Status.NOT_FOUND;
    const [b, n] = bytes(message == null ? '' : String(message));
    return C.callProgress(this._ptr, Number(progress), Number(total) || 0, b, n);
  }
  /** True once the library stopped waiting for this call (timeout, cancel, close). */
  get cancelled() {
    if (this._ac && this._ac.signal.aborted) return true;
    return this._ptr !== null && !!C.callIsCancelled && C.callIsCancelled(this._ptr);
  }
  get deferred() {
    return this._deferred;
  }
  /** Promise to answer later with respond(); the handler's return value is then ignored. */
  defer() {
    this._deferred = true;
    return this;
  }
  /**
   * Answer the call (once). Strings are sent as is, other values as JSON.
   * A value JSON cannot encode (a BigInt, a circular object, a throwing
   * toJSON) is answered at once with an error result naming the problem, and
   * a process warning is logged. Returns the ht_status (OK; TIMEOUT or
   * NOT_FOUND when too late: harmless).
   */
  respond(result, isError = false) {
    if (this._ptr === null) return Status.NOT_FOUND;
    let text;
    let error = !!isError;
    try {
      text = resultText(result);
    } catch (e) {
      text = unserializable(this.name, e);
      error = true;
    }
    const ptr = this._ptr;
    this._ptr = null;
    const [b, n] = bytes(text);
    return C.callRespond(ptr, error, b, n);
  }
  /** Answer with an error result (the library wraps it as {"error": ...}). */
  respondError(message) {
    if (typeof message === 'string') return this.respond(message, true);
    let text;
    try {
      text = resultText(message);
    } catch (_) {
      text = String(message);
    }
    return this.respond(text, true);
  }
}

/** The error text for a handler result JSON cannot encode; logs a warning. */
function unserializable(toolName, e) {
  const text =
    `tool '${toolName}' returned a result that cannot be encoded as JSON (${errText(e)}); ` +
    'the handler must return a string or plain JSON data';
  warn(`hermes-tools: ${text}`, 'HERMES_TOOLS_UNSERIALIZABLE_RESULT');
  return text;
}

/** Send a handler's outcome, unless the call was answered or deferred already. Never throws. */
function finishCall(call, failed, value) {
  try {
    if (call.answered) return;
    if (failed) call.respondError(errText(value));
    else if (!call.deferred) call.respond(value);
  } catch (e) {
    reportUncaught('tool handler', e);
  }
}

/** The model text of a call cancelled by close() (the library's wording for cancelled calls). */
const CANCELLED_RESULT = JSON.stringify({ error: 'Tool execution cancelled', status: 'cancelled' });

function hookFailure(event, e) {
  if (event && event.event === 'pre_tool_call') {
    return { action: 'block', message: `hook failed: ${errText(e)}` };
  }
  return {};
}


// ---------------------------------------------------------------------------
// Batches: the model's tool calls in, results in the matching shape out
// ---------------------------------------------------------------------------

const BATCH_FORMATS = new Set(['plain', 'openai', 'anthropic', 'mcp', 'auto']);
// Entry types that are tool calls; entries with any other `type` (an
// Anthropic text or thinking block, ...) are skipped.
const CALL_TYPES = new Set(['function', 'tool_use', 'function_call']);

function parseJsonInput(value, what) {
  if (typeof value === 'string' || Buffer.isBuffer(value) || value instanceof Uint8Array) {
    try {
      return JSON.parse(Buffer.isBuffer(value) || value instanceof Uint8Array ? Buffer.from(value).toString('utf8') : value);
    } catch (e) {
      throw new HermesToolsError(Status.INVALID_JSON, `${what}: ${e.message}`);
    }
  }
  return value;
}

/** The calls of a batch: [{id, name, args (JSON text), problem, shape}]. */
function parseToolCalls(toolCalls) {
  let list = parseJsonInput(toolCalls, 'tool_calls');
  if (list && typeof list === 'object' && !Array.isArray(list)) {
    if (Array.isArray(list.tool_calls)) list = list.tool_calls; // OpenAI assistant message
    else if (Array.isArray(list.content)) list = list.content; // Anthropic assistant message
    else if (list.method === 'tools/call' || typeof list.name === 'string' || (list.function && typeof list.function === 'object')) {
      list = [list]; // a single call
    }
  }
  if (!Array.isArray(list)) {
    throw new HermesToolsError(Status.INVALID_JSON, 'tool_calls: must be a JSON array of tool calls');
  }
  const items = [];
  list.forEach((v, i) => {
    if (v && typeof v === 'object' && typeof v.type === 'string' && !CALL_TYPES.has(v.type)) return;
    items.push(parseCall(i, v));
  });
  return items;
}

function parseCall(i, v) {
  if (!v || typeof v !== 'object' || Array.isArray(v)) {
    return { id: `call_${i}`, name: '', args: '{}', shape: 'plain', problem: `tool call #${i} is not an object; it was not run` };
  }
  let shape = 'plain';
  let func = v;
  let rawId = v.id;
  if (v.method === 'tools/call' && v.params && typeof v.params === 'object') {
    shape = 'jsonrpc'; // an MCP JSON-RPC request
    func = v.params;
  } else if (v.type === 'tool_use') {
    shape = 'anthropic';
  } else if (v.type === 'function_call') {
    shape = 'responses';
    if (v.call_id !== undefined) rawId = v.call_id;
  } else if (v.function && typeof v.function === 'object') {
    shape = 'openai';
    func = v.function;
  } else if (v.type === 'function') {
    shape = 'openai';
  } else if ('arguments' in v) {
    shape = 'mcp'; // tools/call params
  }
  const id = typeof rawId === 'string' ? rawId : typeof rawId === 'number' ? String(rawId) : `call_${i}`;
  const name = typeof func.name === 'string' ? func.name : '';
  // OpenAI and MCP put the arguments in `arguments`, Anthropic in `input`.
  const raw = func.arguments !== undefined && func.arguments !== null ? func.arguments : func.input;
  let args;
  if (raw === undefined || raw === null) args = '{}';
  else if (typeof raw === 'string') args = raw;
  else args = JSON.stringify(raw);
  const problem = name ? null : `tool call #${i} has no function name; it was not run`;
  return { id, rawId, name, args, shape, problem };
}

function parseContext(context) {
  const c = parseJsonInput(context, 'context');
  if (c === null || c === undefined) return {};
  if (typeof c !== 'object' || Array.isArray(c)) {
    throw new HermesToolsError(Status.INVALID_JSON, 'context: must be a JSON object');
  }
  return c;
}

/** True for an error result: a JSON object whose "error" is set. */
function isErrorResult(text) {
  if (typeof text !== 'string' || text.charCodeAt(0) !== 123 /* { */) return false;
  try {
    const v = JSON.parse(text);
    return !!(v && typeof v === 'object' && !Array.isArray(v) && v.error !== undefined && v.error !== null && v.error !== false && v.error !== '');
  } catch (_) {
    return false;
  }
}

/** An MCP CallToolResult; a JSON object result is also its structuredContent. */
function callToolResult(r) {
  const out = { content: [{ type: 'text', text: r.text }], isError: r.error };
  if (!r.error) {
    try {
      const v = JSON.parse(r.text);
      if (v && typeof v === 'object' && !Array.isArray(v)) out.structuredContent = v;
    } catch (_) {
      /* plain text */
    }
  }
  return out;
}

function batchResult(format, item, r) {
  const shape = format === 'auto' ? item.shape : format;
  switch (shape) {
    case 'openai':
      return { role: 'tool', tool_call_id: item.id, content: r.text };
    case 'responses':
      return { type: 'function_call_output', call_id: item.id, output: r.text };
    case 'anthropic':
      return { type: 'tool_result', tool_use_id: item.id, content: r.text, is_error: r.error };
    case 'mcp':
      return callToolResult(r);
    case 'jsonrpc':
      return { jsonrpc: '2.0', id: item.rawId === undefined ? null : item.rawId, result: callToolResult(r) };
    default:
      return { tool_call_id: item.id, name: item.name, content: r.text, is_error: r.error };
  }
}

// ---------------------------------------------------------------------------
// Host-defined environments
// ---------------------------------------------------------------------------

const EnvSpawnFn = koffi.proto('void ht_env_spawn_fn(uintptr_t user_data, void *exec)');
const EnvKillFn = koffi.proto('void ht_env_kill_fn(uintptr_t user_data, uint64_t exec_id, int32_t signal)');
const EnvFileFn = koffi.proto('void ht_env_file_fn(uintptr_t user_data, void *op)');
const EnvCleanupFn = koffi.proto('void ht_env_cleanup_fn(uintptr_t user_data, const void *task, size_t len)');
Object.assign(C, {
  environmentNew: optional(
    'int32_t ht_environment_new(const uint8_t *spec, size_t len, ht_env_spawn_fn *spawn, ht_env_kill_fn *kill, ' +
      'ht_env_file_fn *files, ht_env_cleanup_fn *cleanup, uintptr_t user_data, ht_free_fn *free_user_data, ' +
      '_Out_ void **out_env, _Out_ void **out_err)',
  ),
  environmentFree: optional('void ht_environment_free(void *env)'),
  runtimeNewWithEnvironments: optional(
    'int32_t ht_runtime_new_with_environments(const uint8_t *config, size_t len, void **envs, size_t n, ' +
      '_Out_ void **out_rt, _Out_ void **out_err)',
  ),
  execRequestJson: optional('const void *ht_exec_request_json(const void *exec, _Out_ size_t *out_len)'),
  execStdin: optional('const void *ht_exec_stdin(const void *exec, _Out_ size_t *out_len)'),
  execOutput: optional('int32_t ht_exec_output(void *exec, int32_t stream, const uint8_t *data, size_t len)'),
  execFinish: optional('int32_t ht_exec_finish(void *exec, int32_t code, const uint8_t *message, size_t len)'),
  fileOpJson: optional('const void *ht_env_file_op_json(const void *op, _Out_ size_t *out_len)'),
  fileOpData: optional('const void *ht_env_file_op_data(const void *op, _Out_ size_t *out_len)'),
  fileOpRespond: optional('int32_t ht_env_file_op_respond(void *op, int32_t error, const uint8_t *data, size_t len)'),
});

/** One command for a host environment to run (see Environment.run). */
class Exec {
  constructor(ptr) {
    this._ptr = ptr;
    const n = [0];
    const p = C.execRequestJson(ptr, n);
    const req = JSON.parse(koffi.decode(p, 'char', Number(n[0])));
    /** What kill() names. */
    this.id = Number(req.id);
    /** The task: keep one sandbox per task. */
    this.task = req.task;
    /** ['bash', '-c', script]: run it where the task's commands run. */
    this.argv = req.argv;
    /** A script of the library's own (file tools, state): report stdout (1) and stderr (2) apart. */
    this.capture = req.capture;
    /** Bytes to feed the command's stdin, then close it. */
    this.stdin = Buffer.alloc(0);
    if (req.stdin) {
      const sp = C.execStdin(ptr, n);
      this.stdin = Buffer.from(koffi.decode(sp, 'uint8_t', Number(n[0])));
    }
    this._done = false;
  }

  get script() {
    return this.argv[this.argv.length - 1];
  }

  /** Report output; false when nobody reads any more (the call timed out or was cancelled): stop the command. */
  output(data, stream = 1) {
    if (this._done) return false;
    const [b, n] = bytes(data);
    if (n === 0) return true;
    return C.execOutput(this._ptr, stream, b, n) === Status.OK;
  }

  /** End the command once: its exit status (-N: killed by signal N) and, when the provider ended it, why. */
  finish(code, message) {
    if (this._done) return;
    this._done = true;
    const [b, n] = bytes(message ? String(message) : null);
    C.execFinish(this._ptr, code | 0, b, n);
  }
}

const environments = new Map(); // user_data id -> Environment
let envIds = 1;

const envSpawnTramp = koffi.register((ud, execPtr) => {
  let ex;
  try {
    ex = new Exec(execPtr);
  } catch (e) {
    const [b, n] = bytes(`host environment: unreadable request: ${errText(e)}`);
    C.execFinish(execPtr, 255, b, n);
    return;
  }
  const env = environments.get(Number(ud));
  if (!env) {
    ex.finish(255, 'host environment is gone');
    return;
  }
  // Start the provider's work and return at once; it answers later.
  Promise.resolve()
    .then(() => env.run(ex))
    .then(
      (code) => ex.finish(code === undefined || code === null ? 0 : code),
      (e) => ex.finish(255, `host environment '${env.name}': ${errText(e)}`),
    );
}, koffi.pointer(EnvSpawnFn));

const envKillTramp = koffi.register((ud, id, sig) => {
  const env = environments.get(Number(ud));
  try {
    if (env) env.kill(Number(id), sig);
  } catch (e) {
    reportUncaught('host environment kill', e);
  }
}, koffi.pointer(EnvKillFn));

const envFileTramp = koffi.register((ud, opPtr) => {
  const env = environments.get(Number(ud));
  const respond = (errno, data) => {
    const [b, n] = bytes(data);
    C.fileOpRespond(opPtr, errno, b, n);
  };
  let req;
  try {
    const n = [0];
    req = JSON.parse(koffi.decode(C.fileOpJson(opPtr, n), 'char', Number(n[0])));
  } catch (e) {
    respond(5, errText(e));
    return;
  }
  Promise.resolve()
    .then(() => {
      if (!env) throw Object.assign(new Error('host environment is gone'), { errno: -5 });
      if (req.op === 'read') return env.readFile(req.task, req.path);
      if (req.op === 'write') {
        const n = [0];
        const p = C.fileOpData(opPtr, n);
        const data = Number(n[0]) ? Buffer.from(koffi.decode(p, 'uint8_t', Number(n[0]))) : Buffer.alloc(0);
        return Promise.resolve(env.writeFile(req.task, req.path, data, req.mode)).then(() => '');
      }
      return Promise.resolve(env.listDir(req.task, req.path)).then((entries) =>
        JSON.stringify(entries.map(([name, isDir]) => ({ name, is_dir: !!isDir }))),
      );
    })
    .then(
      (data) => respond(0, data === undefined ? '' : data),
      // Node's fs errors carry a negative errno (-2 for ENOENT).
      (e) => respond(Math.abs(e && typeof e.errno === 'number' ? e.errno : 5) || 5, e && e.message ? e.message : String(e)),
    );
}, koffi.pointer(EnvFileFn));

const envCleanupTramp = koffi.register((ud, task, len) => {
  const env = environments.get(Number(ud));
  try {
    if (env) env.cleanup(task ? koffi.decode(task, 'char', Number(len)) : null);
  } catch (e) {
    reportUncaught('host environment cleanup', e);
  }
}, koffi.pointer(EnvCleanupFn));

const envFreeTramp = koffi.register((ud) => {
  environments.delete(Number(ud));
}, koffi.pointer(FreeFn));

/**
 * A host-defined environment: the runtime's terminal and file tools run
 * through your provider (a cloud sandbox SDK, a VM pool, child processes)
 * when `terminal.backend` names it. Subclass and implement run(exec) (start
 * exec.argv where exec.task's commands run, stream with exec.output(data,
 * stream), resolve with the exit status) and kill(id, signal); optionally
 * readFile/writeFile/listDir (all three) and cleanup(task). Approval,
 * limits, timeouts and cancellation stay the runtime's: they arrive as
 * kill(). Create the runtime with Runtime.create(config, {environments}).
 */
class Environment {
  constructor(name, { location } = {}) {
    this.name = name;
    this.location = location;
    this._ptr = null;
  }

  /** @returns {number|Promise<number>} */
  run(_exec) {
    throw new Error('Environment.run is not implemented');
  }

  kill(_id, _signal) {
    throw new Error('Environment.kill is not implemented');
  }

  cleanup(_task) {}

  _handle() {
    if (this._ptr !== null) return this._ptr;
    need(C.environmentNew, 'ht_environment_new');
    const id = envIds++;
    environments.set(id, this);
    const spec = { name: this.name };
    if (this.location) spec.location = this.location;
    const [b, n] = bytes(JSON.stringify(spec));
    const files = ['readFile', 'writeFile', 'listDir'].every((k) => typeof this[k] === 'function');
    const out = [null];
    const err = [null];
    const st = C.environmentNew(b, n, envSpawnTramp, envKillTramp, files ? envFileTramp : null, envCleanupTramp, id,
      envFreeTramp, out, err);
    if (st !== Status.OK) environments.delete(id);
    check(st, err);
    this._ptr = out[0];
    return this._ptr;
  }

  /** Release the handle (runtimes created with it keep it until they close). */
  close() {
    if (this._ptr !== null) {
      C.environmentFree(this._ptr);
      this._ptr = null;
    }
  }
}

// ---------------------------------------------------------------------------
// Runtime
// ---------------------------------------------------------------------------

/** dispatch.max_parallel from a runtime config (the library's default is 8). */
function maxParallel(config) {
  try {
    const c = typeof config === 'string' || Buffer.isBuffer(config) ? JSON.parse(String(config)) : config;
    const n = c && c.dispatch && c.dispatch.max_parallel;
    if (Number.isInteger(n) && n > 0) return n;
  } catch (_) {
    /* the library validated the config already */
  }
  return 8;
}

/**
 * A server of Runtime.serveMcp. `address` is ht_mcp_server_address's JSON
 * ({transport, url, auth, token_file}). close() stops it (calls in flight are
 * cancelled); it may outlive its runtime (closing the runtime stops it, the
 * handle stays until close()).
 */
class McpServer {
  constructor(ptr) {
    this._ptr = ptr;
    this._waits = new Set();
    this._closing = null;
    const raw = C.mcpServerAddress(ptr);
    this.address = raw ? JSON.parse(raw) : {};
  }

  /** The streamable HTTP URL (undefined for stdio). */
  get url() {
    return this.address.url;
  }

  /** The generated bearer token (null when the host gave one or auth is off). */
  token() {
    if (!this.address.token_file) return null;
    return fs.readFileSync(this.address.token_file, 'utf8').split('\n')[0].trim();
  }

  /**
   * Wait up to timeoutMs (0: just look; null: for ever) for the server to
   * end: true when it ended (or was closed), false while it still serves.
   * Rejects when it ended with an error. Waits on a worker thread.
   */
  async wait(timeoutMs = null) {
    const deadline = timeoutMs === null ? Infinity : Date.now() + Math.max(0, timeoutMs);
    for (;;) {
      if (this._ptr === null || this._closing) return true;
      const step = Math.max(0, Math.min(200, deadline - Date.now()));
      const err = [null];
      const p = callAsync(C.mcpServerWait, this._ptr, step, err);
      this._waits.add(p);
      let st;
      try {
        st = await p;
      } finally {
        this._waits.delete(p);
      }
      if (st !== Status.TIMEOUT) {
        check(st, err);
        return true;
      }
      takeError(st, err); // frees the error object
      if (Date.now() >= deadline) return false;
    }
  }

  /** Stop serving and free the handle, on a worker thread (waits up to 5 s for the server's thread). Idempotent. */
  close() {
    if (this._closing) return this._closing;
    if (this._ptr === null) return Promise.resolve();
    const ptr = this._ptr;
    this._closing = (async () => {
      await Promise.allSettled([...this._waits]);
      await callAsync(C.mcpServerFree, ptr);
      this._ptr = null;
    })();
    return this._closing;
  }

  async [Symbol.asyncDispose]() {
    await this.close();
  }
}

class Runtime {
  /**
   * @param {object|string} [config] ht_runtime_new config, e.g. {builtin_toolsets: ["terminal"]}
   */
  constructor(config, _internal) {
    if (_internal && _internal.ptr) {
      this._ptr = _internal.ptr;
    } else {
      const [b, n] = bytes(jsonArg(config === undefined ? null : config));
      const out = [null];
      const err = [null];
      check(C.runtimeNew(b, n, out, err), err);
      this._ptr = out[0];
    }
    this._closing = null;
    this._handles = new Map(); // id -> {kind, fn, check, freeCount}
    this._pending = new Map(); // id -> {resolve, reject, release}
    // Which tools this binding registered as parallel-safe, for dispatchBatch
    // (built-in tools are not parallel-safe).
    this._parallelSafe = new Map();
    this._maxParallel = maxParallel(config);
    this._ids = 1;
    /** Number of times a free function ran (for tests and diagnostics). */
    this.releasedCount = 0;
    this._trampolines = this._makeTrampolines();
  }

  /**
   * Create a runtime off the JS thread: needed with host environments
   * (`options.environments`, Environment instances), whose callbacks run on
   * the JS thread while the library prepares the terminal.
   * @returns {Promise<Runtime>}
   */
  static async create(config, options = {}) {
    const envs = options.environments || [];
    if (envs.length === 0) return new Runtime(config);
    need(C.runtimeNewWithEnvironments, 'ht_runtime_new_with_environments');
    const handles = envs.map((e) => e._handle());
    const [b, n] = bytes(jsonArg(config === undefined ? null : config));
    const out = [null];
    const err = [null];
    const st = await callAsync(C.runtimeNewWithEnvironments, b, n, handles, handles.length, out, err);
    check(st, err);
    return new Runtime(config, { ptr: out[0] });
  }

  _makeTrampolines() {
    const handles = this._handles;
    const pending = this._pending;
    const runtime = this;

    const handler = koffi.register((ud, callPtr) => {
      // Quick and never throws: start the user's function, answer later.
      let call;
      try {
        call = new ToolCall(callPtr);
      } catch (e) {
        reportUncaught('tool handler', e);
        try {
          const [b, n] = bytes('internal binding error');
          C.callRespond(callPtr, true, b, n);
        } catch (_) {
          /* ignore */
        }
        return;
      }
      try {
        const entry = handles.get(Number(ud));
        if (!entry) {
          finishCall(call, true, new Error('tool handler is gone'));
          return;
        }
        const value = entry.fn(call.args, call);
        if (value && typeof value.then === 'function') {
          Promise.resolve(value).then(
            (v) => finishCall(call, false, v),
            (e) => finishCall(call, true, e),
          );
          return;
        }
        finishCall(call, false, value);
      } catch (e) {
        finishCall(call, true, e);
      }
    }, koffi.pointer(HandlerFn));

    const checkT = koffi.register((ud) => {
      try {
        const entry = handles.get(Number(ud));
        if (!entry || !entry.check) return false;
        const v = entry.check();
        if (v && typeof v.then === 'function') return false; // checks must be synchronous
        return !!v;
      } catch (_) {
        return false;
      }
    }, koffi.pointer(CheckFn));

    const free = koffi.register((ud) => {
      try {
        const id = Number(ud);
        const entry = handles.get(id);
        if (entry) {
          entry.freeCount += 1;
          handles.delete(id);
          if (entry.onRelease) entry.onRelease();
        }
        runtime.releasedCount += 1;
      } catch (e) {
        reportUncaught('free function', e);
      }
    }, koffi.pointer(FreeFn));

    const completion = koffi.register((ud, status, result, len) => {
      try {
        const text = result ? koffi.decode(result, 'char', Number(len)) : '';
        const id = Number(ud);
        const p = pending.get(id);
        if (!p) return; // settled already by close(): a late completion is ignored
        pending.delete(id);
        p.release();
        if (status === Status.OK) p.resolve(text);
        else p.reject(new HermesToolsError(status, text, text));
      } catch (e) {
        reportUncaught('completion', e);
      }
    }, koffi.pointer(CompletionFn));

    const hook = koffi.register((ud, hookPtr) => {
      let event = {};
      let answered = false;
      const answer = (value, failed, exc) => {
        if (answered) return;
        answered = true;
        let text;
        try {
          if (failed) value = hookFailure(event, exc);
          if (value === null || value === undefined) value = {};
          text = typeof value === 'string' ? value : JSON.stringify(value);
        } catch (e) {
          warn(
            `hermes-tools: a ${event.event || ''} hook returned a decision that cannot be encoded as JSON ` +
              `(${errText(e)})`,
            'HERMES_TOOLS_UNSERIALIZABLE_RESULT',
          );
          text = JSON.stringify(hookFailure(event, e));
        }
        const [b, n] = bytes(text === undefined ? '{}' : text);
        C.hookRespond(hookPtr, b, n);
      };
      try {
        const text = borrowed(C.hookEventJson, hookPtr);
        event = text ? JSON.parse(text) : {};
        const entry = handles.get(Number(ud));
        if (!entry) {
          answer({});
          return;
        }
        const v = entry.fn(event);
        if (v && typeof v.then === 'function') {
          Promise.resolve(v)
            .then(
              (d) => answer(d),
              (e) => answer(null, true, e),
            )
            .catch((e) => reportUncaught('hook', e));
          return;
        }
        answer(v);
      } catch (e) {
        try {
          answer(null, true, e);
        } catch (e2) {
          reportUncaught('hook', e2);
        }
      }
    }, koffi.pointer(HookFn));

    const event = koffi.register((ud, data, len) => {
      try {
        const entry = handles.get(Number(ud));
        if (!entry) return;
        const text = data ? koffi.decode(data, 'char', Number(len)) : '{}';
        const r = entry.fn(JSON.parse(text));
        if (r && typeof r.then === 'function') r.then(null, (e) => reportUncaught('event handler', e));
      } catch (e) {
        reportUncaught('event handler', e);
      }
    }, koffi.pointer(EventFn));

    const approval = C.approvalRespond
      ? koffi.register((ud, approvalPtr) => {
          const entry = handles.get(Number(ud));
          let kind = entry && entry.kind === 'reviewer' ? 'review' : entry && entry.kind === 'oauth' ? 'oauth' : 'approval';
          let answered = false;
          let request = {};
          const answer = (value, failed, exc) => {
            if (answered) return;
            answered = true;
            let text;
            try {
              // Fail closed: a broken handler denies, a broken reviewer
              // escalates, a broken OAuth handler gives the sign-in up.
              const v = failed
                ? kind === 'review'
                  ? { decision: 'escalate' }
                  : kind === 'oauth'
                    ? { error: `the OAuth handler failed: ${exc === undefined ? 'unknown error' : errText(exc)}` }
                    : { choice: 'deny' }
                : value;
              text = JSON.stringify(approvalAnswer(kind, v, request));
            } catch (e) {
              warn(
                `hermes-tools: the approval ${kind === 'review' ? 'reviewer' : 'handler'} returned an answer ` +
                  `that cannot be encoded as JSON (${errText(e)}); failing closed`,
                'HERMES_TOOLS_UNSERIALIZABLE_RESULT',
              );
              text =
                kind === 'review'
                  ? '{"decision":"escalate"}'
                  : kind === 'oauth'
                    ? '{"error":"the OAuth handler gave an answer that is not JSON"}'
                    : '{"choice":"deny"}';
            }
            const [b, n] = bytes(text);
            C.approvalRespond(approvalPtr, b, n);
          };
          try {
            const text = borrowed(C.approvalRequestJson, approvalPtr);
            request = text ? JSON.parse(text) : {};
            if (request.kind === 'review') kind = 'review';
            if (!entry) {
              answer(undefined);
              return;
            }
            const v = entry.fn(request);
            if (v && typeof v.then === 'function') {
              Promise.resolve(v)
                .then(
                  (d) => answer(d),
                  (e) => answer(undefined, true, e),
                )
                .catch((e) => reportUncaught('approval handler', e));
              return;
            }
            answer(v);
          } catch (e) {
            try {
              answer(undefined, true, e);
            } catch (e2) {
              reportUncaught('approval handler', e2);
            }
          }
        }, koffi.pointer(ApprovalFn))
      : null;

    const all = { handler, check: checkT, free, completion, hook, event };
    if (approval) all.approval = approval;
    return all;
  }

  _rt() {
    if (this._ptr === null || this._closing) throw new HermesToolsError(Status.CLOSED, 'runtime is closed');
    return this._ptr;
  }

  _add(entry) {
    const id = this._ids++;
    entry.freeCount = 0;
    this._handles.set(id, entry);
    return id;
  }

  /** True once close() has started. */
  get closed() {
    return this._ptr === null || this._closing !== null;
  }

  /** The raw ht_runtime* (a BigInt), for advanced use with `lib`. */
  get pointer() {
    return this._ptr;
  }

  /**
   * Free the runtime: ht_runtime_free runs on a worker thread (it kills
   * built-in processes, runs every free function and joins the library's
   * threads), the trampolines are unregistered, then pending calls reject
   * with HermesToolsError(CANCELLED). Their keep-alives are released at once
   * and their late completions ignored. Handlers still running are not
   * waited for: their answers are ignored. Idempotent.
   */
  close() {
    if (this._closing) return this._closing;
    if (this._ptr === null) return Promise.resolve();
    const ptr = this._ptr;
    let started;
    this._closing = new Promise((resolve) => {
      started = resolve;
    }).then(async () => {
      // From here on the library's completions of these calls are ignored;
      // they stop holding the event loop (the free below holds it).
      const cancelled = [...this._pending.values()];
      this._pending.clear();
      for (const p of cancelled) p.release();
      installExitGuard();
      freesInFlight += 1;
      try {
        await callAsync(C.runtimeFree, ptr);
      } finally {
        freesInFlight -= 1;
        this._ptr = null;
        for (const t of Object.values(this._trampolines)) koffi.unregister(t);
        this._trampolines = null;
        this._handles.clear();
        this._parallelSafe.clear();
        // Rejected only now, with no worker thread inside ht_runtime_free: if
        // nobody handles a rejection, Node may end the process at once.
        for (const p of cancelled) {
          p.reject(new HermesToolsError(Status.CANCELLED, 'runtime closed', CANCELLED_RESULT));
        }
      }
    });
    started();
    return this._closing;
  }

  async [Symbol.asyncDispose]() {
    await this.close();
  }

  /** Number of live callback registrations (tools, hooks, event handler). */
  get liveHandles() {
    return this._handles.size;
  }

  // -- registration -------------------------------------------------------

  /**
   * Register a host tool from a spec ({name, toolset, schema, ...}).
   * handler(args, call) returns the result (string sent as is, other values
   * as JSON) or a Promise of it; a throw/rejection becomes an error result.
   * options.check() -> boolean hides the tool when false (must be synchronous).
   * Returns the tool name.
   */
  registerTool(spec, handler, options = {}) {
    if (typeof handler !== 'function') throw new TypeError('hermes-tools: handler must be a function');
    const checkFn = options.check || null;
    if (checkFn !== null && typeof checkFn !== 'function') {
      throw new TypeError('hermes-tools: check must be a function');
    }
    const text = jsonArg(spec);
    const [b, n] = bytes(text);
    const rt = this._rt();
    const id = this._add({ kind: 'tool', fn: handler, check: checkFn });
    const err = [null];
    const st = C.registerTool(
      rt,
      b,
      n,
      this._trampolines.handler,
      checkFn ? this._trampolines.check : null,
      id,
      this._trampolines.free,
      err,
    );
    if (st !== Status.OK) {
      this._handles.delete(id); // on failure the library never calls free
      check(st, err);
    }
    let parsed = null;
    try {
      parsed = typeof spec === 'object' && !Buffer.isBuffer(spec) && !(spec instanceof Uint8Array) ? spec : JSON.parse(
        Buffer.from(b).toString('utf8'),
      );
    } catch (_) {
      parsed = null;
    }
    const name = parsed && typeof parsed.name === 'string' ? parsed.name : '';
    if (name) this._parallelSafe.set(name, parsed.parallel_safe === true);
    return name;
  }

  /**
   * Register a tool from a name, a definition and a handler:
   * rt.tool('get_weather', {toolset, description, parameters, parallelSafe, check}, async (args) => ...)
   */
  tool(name, def, handler) {
    const { toolset = 'default', description = '', parameters, check: checkFn, parallelSafe, ...rest } = def || {};
    const spec = {
      name,
      toolset,
      schema: { name, description, parameters: parameters || { type: 'object', properties: {} } },
      ...rest,
    };
    if (parallelSafe !== undefined) spec.parallel_safe = !!parallelSafe;
    return this.registerTool(spec, handler, { check: checkFn });
  }

  /**
   * Register a typed tool whose parameters are a zod (v4) schema:
   * rt.typedTool('get_weather', {schema: z.object({...}), toolset, description,
   *   parallelSafe, check}, async (args, call) => ...)
   * The schema is converted to JSON Schema for the model (zod's own
   * toJSONSchema, input side: defaults are optional), and each call's
   * arguments, already repaired and validated by the library, are parsed with
   * schema.safeParse, so the handler gets zod's output (defaults applied,
   * transforms run) and refinements the JSON Schema cannot express are
   * checked: a failure answers the model with a one-line error result and
   * the handler is not called. zod is the caller's own package (an optional
   * peer dependency): this binding never loads it.
   */
  typedTool(name, def, handler) {
    if (typeof name !== 'string' || !name) throw new TypeError('hermes-tools: typedTool needs a tool name');
    if (typeof handler !== 'function') throw new TypeError('hermes-tools: handler must be a function');
    const { schema, toJSONSchema, parameters, ...rest } = def || {};
    if (!schema || typeof schema.safeParse !== 'function') {
      throw new TypeError('hermes-tools: typedTool needs def.schema, a zod schema (z.object({...}))');
    }
    if (parameters !== undefined) {
      throw new TypeError('hermes-tools: typedTool takes def.schema, not def.parameters');
    }
    let json;
    if (typeof toJSONSchema === 'function') json = toJSONSchema(schema);
    else if (typeof schema.toJSONSchema === 'function') json = schema.toJSONSchema({ io: 'input' });
    else {
      throw new TypeError(
        'hermes-tools: this schema has no toJSONSchema() (zod >= 4 has it); pass def.toJSONSchema, e.g. from zod-to-json-schema',
      );
    }
    if (!json || typeof json !== 'object' || json.type !== 'object') {
      throw new TypeError(`hermes-tools: the parameters of typed tool '${name}' must be an object schema (z.object)`);
    }
    const { $schema, ...parametersJson } = json;
    const typed = (args, call) => {
      const r = schema.safeParse(args);
      if (!r.success) {
        const issues = (r.error && r.error.issues) || [];
        const text = issues
          .slice(0, 5)
          .map((i) => `${i.path && i.path.length ? i.path.join('.') + ': ' : ''}${i.message}`)
          .join('; ');
        throw new Error(`invalid arguments for ${name}: ${text || 'rejected by the schema'}`.replace(/[\r\n]+/g, ' '));
      }
      return handler(r.data, call);
    };
    return this.tool(name, { ...rest, parameters: parametersJson }, typed);
  }

  /** Remove a tool (its handler is released). NOT_FOUND when unknown. */
  deregisterTool(name) {
    const [b, n] = bytes(name);
    const err = [null];
    check(C.deregisterTool(this._rt(), b, n, err), err);
    this._parallelSafe.delete(String(name));
  }

  /** Define or replace a toolset: defineToolset({name, description, tools, includes}) or defineToolset(name, {...}). */
  defineToolset(toolset, opts) {
    if (typeof toolset === 'string' && !toolset.trimStart().startsWith('{')) {
      toolset = { name: toolset, ...(opts || {}) };
    }
    const [b, n] = bytes(jsonArg(toolset));
    const err = [null];
    check(C.defineToolset(this._rt(), b, n, err), err);
  }

  /** Make alias name the toolset target. */
  aliasToolset(alias, target) {
    const [a, an] = bytes(alias);
    const [t, tn] = bytes(target);
    const err = [null];
    check(C.aliasToolset(this._rt(), a, an, t, tn, err), err);
  }

  /** Every toolset with its tools, includes, resolved tools and availability. */
  async toolsets() {
    const out = [null];
    const len = [0];
    const err = [null];
    const st = await callAsync(C.toolsetsJson, this._rt(), out, len, err);
    check(st, err);
    return JSON.parse(takeString(out, len));
  }

  /** The registry generation (a BigInt-safe number). */
  get generation() {
    return Number(C.generation(this._rt()));
  }

  /** Forget cached availability results. */
  invalidateAvailability() {
    check(C.invalidateAvailability(this._rt()));
  }

  // -- definitions --------------------------------------------------------

  /**
   * Tool definitions for the model.
   * @param {{enabledToolsets?: string[], disabledToolsets?: string[], format?: 'openai'|'anthropic'|'mcp'}} [query]
   */
  async definitions(query = {}) {
    const q = {};
    const enabled = query.enabledToolsets ?? query.enabled_toolsets;
    const disabled = query.disabledToolsets ?? query.disabled_toolsets;
    if (enabled !== undefined) q.enabled_toolsets = enabled;
    if (disabled !== undefined) q.disabled_toolsets = disabled;
    if (query.format !== undefined) q.format = query.format;
    return JSON.parse(await this.definitionsJson(Object.keys(q).length ? q : null));
  }

  /** Raw JSON text of definitions() for a query object. */
  async definitionsJson(query = null) {
    const [b, n] = bytes(jsonArg(query));
    const out = [null];
    const len = [0];
    const err = [null];
    const st = await callAsync(C.definitionsJson, this._rt(), b, n, out, len, err);
    check(st, err);
    return takeString(out, len);
  }

  // -- dispatch -----------------------------------------------------------

  /**
   * Run one tool call and resolve with its result text (error results are
   * text too: a JSON object with an "error" key). Runs through
   * ht_runtime_dispatch_async, so no worker thread waits for the handler.
   * Rejects with TypeError for a name that is not a string, and with
   * HermesToolsError(CANCELLED) when options.signal aborts or close() runs.
   */
  async dispatch(name, args = {}, context = null, options = {}) {
    return this.dispatchAsync(name, args, context, options);
  }

  /**
   * Start a call with ht_runtime_dispatch_async; the Promise resolves with the
   * result text, or rejects with HermesToolsError(CANCELLED) after cancel()
   * or close(). The Promise has a `callId`; options.signal (AbortSignal)
   * cancels the call.
   */
  dispatchAsync(name, args = {}, context = null, options = {}) {
    if (typeof name !== 'string' && !Buffer.isBuffer(name) && !(name instanceof Uint8Array)) {
      throw new TypeError(`hermes-tools: the tool name must be a string, got ${name === null ? 'null' : typeof name}`);
    }
    const [nb, nn] = bytes(name);
    const [ab, an] = bytes(jsonArg(args === undefined || args === null ? {} : args));
    const [cb, cn] = bytes(jsonArg(context));
    const signal = options && options.signal;
    if (signal && signal.aborted) {
      const p = Promise.reject(new HermesToolsError(Status.CANCELLED, 'aborted before start', CANCELLED_RESULT));
      p.callId = 0;
      return p;
    }
    const rt = this._rt();
    const id = this._ids++;
    let resolve;
    let reject;
    const promise = new Promise((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const release = keepAlive();
    this._pending.set(id, { resolve, reject, release });
    const callId = [0];
    const err = [null];
    let st;
    try {
      st = C.dispatchAsync(rt, nb, nn, ab, an, cb, cn, this._trampolines.completion, id, callId, err);
    } catch (e) {
      this._pending.delete(id);
      release();
      throw e;
    }
    if (st !== Status.OK) {
      this._pending.delete(id); // on_done will never run
      release();
      check(st, err);
    }
    promise.callId = Number(callId[0]);
    if (signal) {
      const onAbort = () => {
        try {
          this.cancel(promise.callId);
        } catch (_) {
          /* already done */
        }
      };
      signal.addEventListener('abort', onAbort, { once: true });
      const off = () => signal.removeEventListener('abort', onAbort);
      promise.then(off, off);
    }
    return promise;
  }

  /** Cancel an async call: its Promise rejects with CANCELLED. NOT_FOUND when already done. */
  cancel(callId) {
    const err = [null];
    check(C.cancel(this._rt(), BigInt(callId), err), err);
  }

  /**
   * Dispatch a model's tool calls and resolve with one result per call, in
   * input order. Accepts an array (or an assistant message holding one) of
   * OpenAI `tool_calls` entries, OpenAI Responses `function_call` items,
   * Anthropic `tool_use` blocks (other content blocks are skipped) and MCP
   * `tools/call` params or requests. Consecutive parallel-safe tools run
   * concurrently (at most `dispatch.max_parallel` at a time), all others in
   * order; one failing call never loses the others.
   *
   * options.format picks the result shape: 'plain' (the default:
   * {tool_call_id, name, content, is_error}), 'openai' ({role: 'tool',
   * tool_call_id, content}), 'anthropic' ({type: 'tool_result', tool_use_id,
   * content, is_error}), 'mcp' (CallToolResult: {content, isError,
   * structuredContent?}) or 'auto' (each call answered in its own input shape).
   *
   * Built in JS over ht_runtime_dispatch_async (ht_runtime_dispatch_batch
   * would hold a worker thread while handlers run).
   */
  async dispatchBatch(toolCalls, context = null, options = {}) {
    this._rt();
    const format = (options && options.format) || 'plain';
    if (!BATCH_FORMATS.has(format)) {
      throw new TypeError(`hermes-tools: unknown batch format '${format}' (${[...BATCH_FORMATS].join(', ')})`);
    }
    const items = parseToolCalls(toolCalls);
    const ctx = parseContext(context);
    const runOne = async (item) => {
      if (item.problem) return { text: JSON.stringify({ error: item.problem }), error: true };
      const c = { ...ctx, tool_call_id: item.id };
      try {
        const text = await this.dispatchAsync(item.name, item.args, c);
        return { text, error: isErrorResult(text) };
      } catch (e) {
        if (e instanceof HermesToolsError) {
          return { text: e.result !== undefined ? e.result : JSON.stringify({ error: e.detail }), error: true };
        }
        return { text: JSON.stringify({ error: errText(e) }), error: true };
      }
    };
    const results = new Array(items.length);
    const width = this._maxParallel;
    let i = 0;
    while (i < items.length) {
      // A run of consecutive parallel-safe calls.
      let j = i;
      while (j < items.length && !items[j].problem && this._parallelSafe.get(items[j].name) === true) j++;
      if (j - i >= 2) {
        for (let start = i; start < j; start += width) {
          const end = Math.min(start + width, j);
          const outs = await Promise.all(items.slice(start, end).map(runOne));
          for (let k = start; k < end; k++) results[k] = outs[k - start];
        }
        i = j;
      } else {
        results[i] = await runOne(items[i]);
        i += 1;
      }
    }
    return items.map((item, k) => batchResult(format, item, results[k]));
  }

  // -- hooks, events, tasks, command check ---------------------------------

  /**
   * Add a hook. fn(event) returns a decision object (or a Promise of one;
   * undefined means {}). pre_tool_call: {} | {action:'block', message} |
   * {action:'rewrite', args}; post_tool_call: observe; transform_tool_result:
   * {result}. A pre_tool_call hook that throws blocks the call.
   */
  addHook(event, fn) {
    if (typeof fn !== 'function') throw new TypeError('hermes-tools: hook must be a function');
    const [b, n] = bytes(event);
    const rt = this._rt();
    const id = this._add({ kind: 'hook', fn });
    const err = [null];
    const st = C.addHook(rt, b, n, this._trampolines.hook, id, this._trampolines.free, err);
    if (st !== Status.OK) {
      this._handles.delete(id);
      check(st, err);
    }
  }

  /** Receive library events (objects); null removes the handler. */
  setEventHandler(fn) {
    const rt = this._rt();
    const err = [null];
    if (fn === null || fn === undefined) {
      check(C.setEventHandler(rt, null, 0, null, err), err);
      return;
    }
    if (typeof fn !== 'function') throw new TypeError('hermes-tools: event handler must be a function');
    const id = this._add({ kind: 'event', fn });
    const st = C.setEventHandler(rt, this._trampolines.event, id, this._trampolines.free, err);
    if (st !== Status.OK) {
      this._handles.delete(id);
      check(st, err);
    }
  }

  /**
   * Handle agent-loop tools (specs with agent_loop: true) with handler(args, call),
   * called like a tool handler, without hooks. null removes it (their calls
   * then answer "must be handled by the agent loop").
   */
  setInterceptor(handler) {
    need(C.setInterceptor, 'ht_runtime_set_interceptor');
    const rt = this._rt();
    const err = [null];
    if (handler === null || handler === undefined) {
      check(C.setInterceptor(rt, null, 0, null, err), err);
      return;
    }
    if (typeof handler !== 'function') throw new TypeError('hermes-tools: interceptor must be a function');
    const id = this._add({ kind: 'tool', fn: handler, check: null });
    const st = C.setInterceptor(rt, this._trampolines.handler, id, this._trampolines.free, err);
    if (st !== Status.OK) {
      this._handles.delete(id);
      check(st, err);
    }
  }

  // -- approvals ------------------------------------------------------------

  _setApprovalFn(setter, name, kind, fn) {
    need(setter, name);
    const rt = this._rt();
    const err = [null];
    if (fn === null || fn === undefined) {
      check(setter(rt, null, 0, null, err), err);
      return;
    }
    if (typeof fn !== 'function') throw new TypeError('hermes-tools: approval handler must be a function');
    const id = this._add({ kind, fn });
    const st = setter(rt, this._trampolines.approval, id, this._trampolines.free, err);
    if (st !== Status.OK) {
      this._handles.delete(id);
      check(st, err);
    }
  }

  /**
   * Ask fn(request) when a command needs approval (the command waits up to
   * approvals.timeout). Return {choice: 'once'|'session'|'always'|'deny', scope?},
   * one of those strings, true (once) / false (deny), or a Promise of these.
   * A throw or rejection denies. null removes the handler.
   */
  setApprovalHandler(fn) {
    this._setApprovalFn(C.setApprovalHandler, 'ht_runtime_set_approval_handler', 'approval', fn);
  }

  /**
   * The smart reviewer (approvals.mode = 'smart'), asked first: return
   * {decision: 'approve'|'deny'|'escalate'}, a string, a boolean, or
   * undefined (escalate), or a Promise. A throw escalates. null removes it.
   */
  setApprovalReviewer(fn) {
    this._setApprovalFn(C.setApprovalReviewer, 'ht_runtime_set_approval_reviewer', 'reviewer', fn);
  }

  /**
   * The browser step of MCP servers' OAuth 2.1 sign-in (the library does
   * discovery, registration, PKCE, tokens and refresh). fn(request) gets
   * {kind: 'oauth_authorize', server, authorization_url, redirect_uri, scopes,
   * step_up, timeout_s}: show the user the URL and return (or resolve with)
   * the full URL the browser was redirected to, {code}, or {error: reason}.
   * Servers with oauth.token_store 'host' also ask 'oauth_tokens_load'
   * (return {tokens} or nothing), 'oauth_tokens_save' (keep request.tokens,
   * secret) and 'oauth_tokens_clear'. A throw or rejection gives the sign-in
   * up. Set it before addMcpServer; null removes it.
   */
  setOAuthHandler(fn) {
    this._setApprovalFn(C.setOAuthHandler, 'ht_runtime_set_oauth_handler', 'oauth', fn);
  }

  // -- MCP servers ------------------------------------------------------------

  /**
   * Each MCP server's state, keyed by name ({} without servers): state
   * ('connecting'|'ready'|'disconnected'|'failed'|'disabled'|'closed'),
   * transport, toolset, tools, pid, connects, failures, last_error, ...
   * Never waits for a server.
   */
  mcpStatus() {
    need(C.mcpStatus, 'ht_runtime_mcp_status');
    const out = [null];
    const len = [0];
    const err = [null];
    check(C.mcpStatus(this._rt(), out, len, err), err);
    return JSON.parse(takeString(out, len));
  }

  /**
   * Start an MCP server at run time (config: one mcp_servers entry, an object
   * or JSON text). Resolves after its first connection attempt, on a worker
   * thread (the OAuth handler runs on this thread meanwhile): its tools
   * (mcp__<name>__<tool>) are registered, or the server is 'failed' in
   * mcpStatus() and retries in the background. Rejects with
   * HermesToolsError INVALID_JSON / INVALID_ARGUMENT (bad config), CONFLICT
   * (name in use).
   */
  async addMcpServer(name, config) {
    need(C.addMcpServer, 'ht_runtime_add_mcp_server');
    const [nb, nn] = bytes(name);
    const [cb, cn] = bytes(jsonArg(config));
    const err = [null];
    const st = await callAsync(C.addMcpServer, this._rt(), nb, nn, cb, cn, err);
    check(st, err);
  }

  /** Stop an MCP server and deregister its tools; rejects with NOT_FOUND when unknown. */
  async removeMcpServer(name) {
    need(C.removeMcpServer, 'ht_runtime_remove_mcp_server');
    const [b, n] = bytes(name);
    const err = [null];
    const st = await callAsync(C.removeMcpServer, this._rt(), b, n, err);
    check(st, err);
  }

  /** Accept the changed definitions of a server's held tools (status held_tools). */
  async acceptMcpTools(name) {
    need(C.mcpAcceptTools, 'ht_runtime_mcp_accept_tools');
    const [b, n] = bytes(name);
    const err = [null];
    const st = await callAsync(C.mcpAcceptTools, this._rt(), b, n, err);
    check(st, err);
  }

  /**
   * Serve this runtime's tools (host tools included) as an MCP server on a
   * library thread. options: null / {} for stdio on descriptors 0 and 1;
   * {transport: 'http'} for streamable HTTP on a free loopback port with a
   * generated bearer token (server.url, server.token()). Close the returned
   * McpServer when done.
   */
  serveMcp(options = null) {
    need(C.serveMcp, 'ht_runtime_serve_mcp');
    const [b, n] = bytes(jsonArg(options));
    const out = [null];
    const err = [null];
    check(C.serveMcp(this._rt(), b, n, out, err), err);
    return new McpServer(out[0]);
  }

  /** The persistent allowlist ('always' answers). */
  allowlist() {
    need(C.allowlistJson, 'ht_runtime_allowlist_json');
    const out = [null];
    const len = [0];
    const err = [null];
    check(C.allowlistJson(this._rt(), out, len, err), err);
    return JSON.parse(takeString(out, len));
  }

  /** Replace the allowlist (validated; saved to approvals.allowlist_path when configured). */
  setAllowlist(entries) {
    need(C.allowlistSet, 'ht_runtime_allowlist_set');
    const [b, n] = bytes(jsonArg(entries));
    const err = [null];
    check(C.allowlistSet(this._rt(), b, n, err), err);
  }

  /** Forget the 'session' approvals given in sessionId. */
  clearSessionApprovals(sessionId) {
    need(C.clearSessionApprovals, 'ht_runtime_clear_session_approvals');
    const [b, n] = bytes(sessionId);
    const err = [null];
    check(C.clearSessionApprovals(this._rt(), b, n, err), err);
  }

  /** Drop a task's shell state and kill its background processes. */
  async cleanupTask(taskId) {
    const [b, n] = bytes(taskId);
    const err = [null];
    const st = await callAsync(C.cleanupTask, this._rt(), b, n, err);
    check(st, err);
  }

  /** Analyse a shell command with this runtime's rules, without running it. */
  commandCheck(command) {
    return commandCheckWith(this._rt(), command);
  }
}

module.exports = {
  ABI_VERSION,
  Environment,
  Exec,
  Status,
  EVENT_TYPES,
  HermesToolsError,
  McpServer,
  Runtime,
  ToolCall,
  abiVersion,
  version,
  features,
  commandCheck,
  setLogHandler,
  libraryPath,
  /** The raw koffi function table, for advanced use and tests. */
  lib: C,
};
