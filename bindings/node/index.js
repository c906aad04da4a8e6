'use strict';
// hermes-tools: Node.js binding of the hermes-tools C library, through koffi.
//
// Threading model (see README.md and shared/design/bindings.md):
// * Library callbacks may come from library threads. koffi queues them to the
//   JS thread and blocks the calling thread until the JS function returns, so
//   every trampoline here is quick, never throws, and hands real work to
//   Promises that answer later (ht_call_respond / ht_hook_respond from JS).
// * Every library function that can wait for host code (dispatch, batch,
//   definitions, toolsets, runtime free) is called through koffi's `.async`
//   (a worker thread), so the JS thread stays free to run the callbacks the
//   library is waiting for. Nothing here blocks the event loop on the library.
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
});

function need(fn, name) {
  if (!fn) throw new HermesToolsError(Status.UNSUPPORTED, `${name} is not exported by the loaded library`);
  return fn;
}

/** Normalise a host approval answer (see Runtime.setApprovalHandler / setApprovalReviewer). */
function approvalAnswer(kind, value) {
  if (value && typeof value === 'object') return value;
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
  if (e instanceof Error) return e.message ? `${e.name}: ${e.message}` : e.name;
  return String(e);
}

function reportUncaught(where, e) {
  try {
    process.emitWarning(`hermes-tools: exception in ${where}: ${e && e.stack ? e.stack : e}`);
  } catch (_) {
    /* nothing more we can do */
  }
}

// ---------------------------------------------------------------------------
// Keep the event loop alive while library work is pending: calls koffi queues
// from foreign threads do not hold the loop open by themselves.
// ---------------------------------------------------------------------------

let pendingWork = 0;
let keepAlive = null;
function track(delta) {
  pendingWork += delta;
  if (pendingWork > 0 && keepAlive === null) {
    keepAlive = setInterval(() => {}, 1 << 30);
  } else if (pendingWork <= 0 && keepAlive !== null) {
    clearInterval(keepAlive);
    keepAlive = null;
    pendingWork = 0;
  }
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
 * null removes it. Returns a Promise: the library first delivers the lines
 * already queued (to the JS thread), so the call runs on a worker thread.
 * Remove the handler before the process exits.
 */
async function setLogHandler(fn, level = 3) {
  if (fn === null || fn === undefined) {
    check(await callAsync(C.setLogHandler, null, level, 0, null));
    return;
  }
  if (typeof fn !== 'function') throw new TypeError('hermes-tools: log handler must be a function');
  const id = logIds++;
  logHandlers.set(id, fn);
  const st = await callAsync(C.setLogHandler, logTramp, level, id, logFreeTramp);
  if (st !== Status.OK) {
    logHandlers.delete(id);
    check(st);
  }
}

// ---------------------------------------------------------------------------
// ToolCall
// ---------------------------------------------------------------------------

class ToolCall {
  constructor(ptr) {
    this._ptr = ptr;
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
   * Returns the ht_status (OK; TIMEOUT or NOT_FOUND when too late: harmless).
   */
  respond(result, isError = false) {
    const ptr = this._ptr;
    if (ptr === null) return Status.NOT_FOUND;
    this._ptr = null;
    const [b, n] = bytes(resultText(result));
    return C.callRespond(ptr, !!isError, b, n);
  }
  /** Answer with an error result (the library wraps it as {"error": ...}). */
  respondError(message) {
    return this.respond(typeof message === 'string' ? message : resultText(message), true);
  }
}

function hookFailure(event, e) {
  if (event && event.event === 'pre_tool_call') {
    return { action: 'block', message: `hook failed: ${errText(e)}` };
  }
  return {};
}

// ---------------------------------------------------------------------------
// Runtime
// ---------------------------------------------------------------------------

class Runtime {
  /**
   * @param {object|string} [config] ht_runtime_new config, e.g. {builtin_toolsets: ["terminal"]}
   */
  constructor(config) {
    const [b, n] = bytes(jsonArg(config === undefined ? null : config));
    const out = [null];
    const err = [null];
    check(C.runtimeNew(b, n, out, err), err);
    this._ptr = out[0];
    this._closing = null;
    this._handles = new Map(); // id -> {kind, fn, check, freeCount}
    this._pending = new Map(); // id -> {resolve, reject}
    this._ids = 1;
    /** Number of times a free function ran (for tests and diagnostics). */
    this.releasedCount = 0;
    this._trampolines = this._makeTrampolines();
  }

  _makeTrampolines() {
    const handles = this._handles;
    const pending = this._pending;
    const runtime = this;

    const handler = koffi.register((ud, callPtr) => {
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
          call.respondError('tool handler is gone');
          return;
        }
        let value;
        try {
          value = entry.fn(call.args, call);
        } catch (e) {
          if (!call.answered) call.respondError(errText(e));
          return;
        }
        if (value && typeof value.then === 'function') {
          track(+1);
          Promise.resolve(value)
            .then(
              (v) => {
                if (!call.answered && !call.deferred) call.respond(v);
              },
              (e) => {
                if (!call.answered) call.respondError(errText(e));
              },
            )
            .catch((e) => reportUncaught('tool handler', e))
            .finally(() => track(-1));
          return;
        }
        if (!call.answered && !call.deferred) call.respond(value);
      } catch (e) {
        try {
          if (!call.answered) call.respondError(errText(e));
        } catch (e2) {
          reportUncaught('tool handler', e2);
        }
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
        if (!p) return;
        pending.delete(id);
        track(-1);
        if (status === Status.OK) p.resolve(text);
        else p.reject(new HermesToolsError(status, text, text));
      } catch (e) {
        reportUncaught('completion', e);
      }
    }, koffi.pointer(CompletionFn));

    const hook = koffi.register((ud, hookPtr) => {
      let event = {};
      let answered = false;
      const answer = (value, exc) => {
        if (answered) return;
        answered = true;
        try {
          if (exc !== undefined) value = hookFailure(event, exc);
          if (value === null || value === undefined) value = {};
          const [b, n] = bytes(typeof value === 'string' ? value : JSON.stringify(value));
          C.hookRespond(hookPtr, b, n);
        } catch (e) {
          const [b, n] = bytes(JSON.stringify(hookFailure(event, e)));
          C.hookRespond(hookPtr, b, n);
        }
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
          track(+1);
          Promise.resolve(v)
            .then(
              (d) => answer(d),
              (e) => answer(null, e),
            )
            .catch((e) => reportUncaught('hook', e))
            .finally(() => track(-1));
          return;
        }
        answer(v);
      } catch (e) {
        try {
          answer(null, e);
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
          let kind = entry && entry.kind === 'reviewer' ? 'review' : 'approval';
          let answered = false;
          const answer = (value, failed) => {
            if (answered) return;
            answered = true;
            let text;
            try {
              // Fail closed: a broken handler denies, a broken reviewer escalates.
              const v = failed ? (kind === 'review' ? { decision: 'escalate' } : { choice: 'deny' }) : value;
              text = JSON.stringify(approvalAnswer(kind, v));
            } catch (_) {
              text = kind === 'review' ? '{"decision":"escalate"}' : '{"choice":"deny"}';
            }
            const [b, n] = bytes(text);
            C.approvalRespond(approvalPtr, b, n);
          };
          try {
            const text = borrowed(C.approvalRequestJson, approvalPtr);
            const request = text ? JSON.parse(text) : {};
            if (request.kind === 'review') kind = 'review';
            if (!entry) {
              answer(undefined);
              return;
            }
            const v = entry.fn(request);
            if (v && typeof v.then === 'function') {
              track(+1);
              Promise.resolve(v)
                .then(
                  (d) => answer(d),
                  () => answer(undefined, true),
                )
                .catch((e) => reportUncaught('approval handler', e))
                .finally(() => track(-1));
              return;
            }
            answer(v);
          } catch (e) {
            try {
              answer(undefined, true);
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
   * Free the runtime: pending async calls reject with CANCELLED, every free
   * function runs, library threads are joined; then the trampolines are
   * unregistered. Runs ht_runtime_free on a worker thread. Idempotent.
   */
  close() {
    if (this._closing) return this._closing;
    if (this._ptr === null) return Promise.resolve();
    const ptr = this._ptr;
    this._closing = (async () => {
      track(+1);
      try {
        await callAsync(C.runtimeFree, ptr);
      } finally {
        this._ptr = null;
        for (const t of Object.values(this._trampolines)) koffi.unregister(t);
        this._trampolines = null;
        for (const [id, p] of this._pending) {
          this._pending.delete(id);
          track(-1);
          p.reject(new HermesToolsError(Status.CANCELLED, 'runtime closed'));
        }
        this._handles.clear();
        track(-1);
      }
    })();
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
    try {
      return typeof spec === 'object' && !Buffer.isBuffer(spec) ? spec.name : JSON.parse(String(text)).name;
    } catch (_) {
      return '';
    }
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

  /** Remove a tool (its handler is released). NOT_FOUND when unknown. */
  deregisterTool(name) {
    const [b, n] = bytes(name);
    const err = [null];
    check(C.deregisterTool(this._rt(), b, n, err), err);
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
   * text too: a JSON object with an "error" key). Runs ht_runtime_dispatch
   * on a worker thread.
   */
  async dispatch(name, args = {}, context = null) {
    const [nb, nn] = bytes(name);
    const [ab, an] = bytes(jsonArg(args === undefined || args === null ? {} : args));
    const [cb, cn] = bytes(jsonArg(context));
    const out = [null];
    const len = [0];
    const err = [null];
    const st = await callAsync(C.dispatch, this._rt(), nb, nn, ab, an, cb, cn, out, len, err);
    check(st, err);
    return takeString(out, len);
  }

  /**
   * Start a call with ht_runtime_dispatch_async; the Promise resolves with the
   * result text, or rejects with HermesToolsError(CANCELLED) after cancel()
   * or close(). The Promise has a `callId`; options.signal (AbortSignal)
   * cancels the call.
   */
  dispatchAsync(name, args = {}, context = null, options = {}) {
    const [nb, nn] = bytes(name);
    const [ab, an] = bytes(jsonArg(args === undefined || args === null ? {} : args));
    const [cb, cn] = bytes(jsonArg(context));
    const rt = this._rt();
    const id = this._ids++;
    let resolve;
    let reject;
    const promise = new Promise((res, rej) => {
      resolve = res;
      reject = rej;
    });
    this._pending.set(id, { resolve, reject });
    track(+1);
    const callId = [0];
    const err = [null];
    let st;
    try {
      st = C.dispatchAsync(rt, nb, nn, ab, an, cb, cn, this._trampolines.completion, id, callId, err);
    } catch (e) {
      this._pending.delete(id);
      track(-1);
      throw e;
    }
    if (st !== Status.OK) {
      this._pending.delete(id); // on_done will never run
      track(-1);
      check(st, err);
    }
    promise.callId = Number(callId[0]);
    const signal = options && options.signal;
    if (signal) {
      const onAbort = () => {
        try {
          this.cancel(promise.callId);
        } catch (_) {
          /* already done */
        }
      };
      if (signal.aborted) onAbort();
      else {
        signal.addEventListener('abort', onAbort, { once: true });
        promise.then(
          () => signal.removeEventListener('abort', onAbort),
          () => signal.removeEventListener('abort', onAbort),
        );
      }
    }
    return promise;
  }

  /** Cancel an async call: its Promise rejects with CANCELLED. NOT_FOUND when already done. */
  cancel(callId) {
    const err = [null];
    check(C.cancel(this._rt(), BigInt(callId), err), err);
  }

  /**
   * Dispatch a model's tool_calls array; resolves with
   * [{tool_call_id, name, content}] in input order.
   */
  async dispatchBatch(toolCalls, context = null) {
    const [tb, tn] = bytes(jsonArg(toolCalls));
    const [cb, cn] = bytes(jsonArg(context));
    const out = [null];
    const len = [0];
    const err = [null];
    const st = await callAsync(C.dispatchBatch, this._rt(), tb, tn, cb, cn, out, len, err);
    check(st, err);
    return JSON.parse(takeString(out, len));
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
  Status,
  HermesToolsError,
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
