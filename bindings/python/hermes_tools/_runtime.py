"""The Pythonic layer over the C ABI: Runtime, ToolCall, errors, trampolines."""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import ctypes
import functools
import inspect
import itertools
import json
import os
import sys
import threading
import time
import traceback
import weakref
from ctypes import byref, c_size_t, c_uint64, c_void_p
from typing import Any, Awaitable, Callable, Iterable, Optional, Union

from . import _ffi
from ._ffi import lib
from ._schema import CALL_TYPES, _is_call_param, _is_optional, function_schema

from ._errors import (  # noqa: F401  (re-exported: the binding's public names)
    CANCELLED,
    CLOSED,
    CONFLICT,
    INTERNAL,
    INVALID_ARGUMENT,
    INVALID_JSON,
    INVALID_UTF8,
    NOT_FOUND,
    OK,
    PANIC,
    TIMEOUT,
    TOOL_ERROR,
    UNSUPPORTED,
    HermesToolsError,
    _check,
    _take_error,
)

def _take_string(ptr: c_void_p, n: c_size_t) -> str:
    """Copy an owned library string and free it with ht_string_free."""
    try:
        return ctypes.string_at(ptr.value, n.value).decode("utf-8") if ptr.value else ""
    finally:
        lib.ht_string_free(ptr)


def _borrowed(fn, obj) -> Optional[str]:
    n = c_size_t(0)
    p = fn(obj, byref(n))
    if not p:
        return None
    return ctypes.string_at(p, n.value).decode("utf-8", "replace")


def _b(value: Union[str, bytes, None]) -> tuple[Optional[bytes], int]:
    """(pointer, length) arguments for a string input."""
    if value is None:
        return None, 0
    if isinstance(value, str):
        value = value.encode("utf-8")
    elif not isinstance(value, (bytes, bytearray)):
        raise TypeError(f"hermes_tools: expected str or bytes, got {type(value).__name__}")
    return bytes(value), len(value)


def _json_arg(value: Any) -> Union[str, bytes, None]:
    """Dicts/lists are serialised; str/bytes are passed through as JSON text."""
    if value is None or isinstance(value, (str, bytes, bytearray)):
        return value
    return json.dumps(value, ensure_ascii=False)


def _result_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")
    return json.dumps(value, ensure_ascii=False, default=str)


# ---------------------------------------------------------------------------
# Library facts
# ---------------------------------------------------------------------------


def abi_version() -> int:
    """The ABI version of the loaded library (checked at import)."""
    return int(lib.ht_abi_version())


def version() -> str:
    """``"hermes-tools/X.Y.Z"`` of the loaded library."""
    return lib.ht_version().decode()


def features() -> dict:
    """Optional features of the loaded library build."""
    return json.loads(lib.ht_features().decode())


def command_check(command: Union[str, bytes]) -> dict:
    """Analyse a shell command with the default rules, without running it."""
    return _command_check(None, command)


def _command_check(rt: Optional[int], command) -> dict:
    p, n = _b(command)
    out, out_len, err = c_void_p(), c_size_t(), c_void_p()
    _check(lib.ht_command_check(rt, p, n, byref(out), byref(out_len), byref(err)), err)
    return json.loads(_take_string(out, out_len))


# ---------------------------------------------------------------------------
# Handle table: user_data is an integer id, never a pointer to Python memory
# ---------------------------------------------------------------------------


class _Entry:
    __slots__ = ("kind", "obj", "runtime", "free_count", "id", "__weakref__")

    def __init__(self, kind: str, obj: Any, runtime: Optional["Runtime"]):
        self.kind = kind
        self.obj = obj
        self.runtime = runtime
        self.free_count = 0
        self.id = 0


class _HandleTable:
    def __init__(self):
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._items: dict[int, _Entry] = {}
        self.double_frees = 0  # a free for an unknown id: must stay 0

    def add(self, entry: _Entry) -> int:
        with self._lock:
            hid = next(self._ids)
            entry.id = hid
            self._items[hid] = entry
            return hid

    def get(self, hid: Optional[int]) -> Optional[_Entry]:
        with self._lock:
            return self._items.get(hid or 0)

    def pop(self, hid: Optional[int]) -> Optional[_Entry]:
        with self._lock:
            entry = self._items.pop(hid or 0, None)
            if entry is None:
                self.double_frees += 1
            else:
                entry.free_count += 1
            return entry

    def discard(self, hid: int) -> None:
        """Forget an id whose registration failed (no free fn will come)."""
        with self._lock:
            self._items.pop(hid, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def count(self, runtime: "Runtime") -> int:
        with self._lock:
            return sum(1 for e in self._items.values() if e.runtime is runtime)


_handles = _HandleTable()


def _report(where: str) -> None:
    """Last resort for an exception we cannot hand to anybody: print it."""
    try:
        sys.stderr.write(f"hermes_tools: exception in {where}:\n{traceback.format_exc()}")
    except BaseException:
        pass


# ---------------------------------------------------------------------------
# ToolCall
# ---------------------------------------------------------------------------


class ToolCall:
    """One invocation of a host tool.

    ``args``, ``context`` and ``name`` are copied at once, so they stay valid
    after the answer. Answer exactly once with :meth:`respond` (any thread, now
    or later). A handler that returns normally is answered with its return
    value, unless it already answered or called :meth:`defer`.
    """

    __slots__ = ("name", "args_json", "context_json", "_ptr", "_lock", "_deferred", "_cancel")

    def __init__(self, ptr: int):
        self._ptr = ptr
        self._lock = threading.Lock()
        self._deferred = False
        self._cancel: Optional[_CancelState] = None
        self.name = _borrowed(lib.ht_call_tool_name, ptr) or ""
        self.args_json = _borrowed(lib.ht_call_args_json, ptr) or "{}"
        self.context_json = _borrowed(lib.ht_call_context_json, ptr) or "{}"

    @property
    def args(self) -> dict:
        return json.loads(self.args_json)

    @property
    def context(self) -> dict:
        return json.loads(self.context_json)

    @property
    def answered(self) -> bool:
        return self._ptr is None

    @property
    def deferred(self) -> bool:
        return self._deferred

    def defer(self) -> "ToolCall":
        """Promise to answer later (e.g. from another thread); the handler's return value is ignored."""
        self._deferred = True
        return self

    # -- cancellation ------------------------------------------------------

    def _cancel_state(self) -> "_CancelState":
        with self._lock:
            if self._cancel is not None:
                return self._cancel
            st = self._cancel = _CancelState()
            ptr = self._ptr
        if ptr is None or not hasattr(lib, "ht_call_on_cancel"):
            return st
        uid = next(_cancel_ids)
        _cancel_regs[uid] = st
        # The callback may run inside this call (already cancelled).
        rc = int(lib.ht_call_on_cancel(ptr, _cancel_tramp, uid, _cancel_free_tramp))
        if rc != OK:
            _cancel_regs.pop(uid, None)  # refused: neither callback runs
            if self._ptr is not None:  # not answered by us: the wait is over
                st.fire()
        return st

    @property
    def cancel_event(self) -> threading.Event:
        """A :class:`threading.Event` set when the library stops waiting for
        this call (timeout, :meth:`Runtime.cancel`, close). Not set when the
        call is answered. Sync handlers can ``wait`` on it or poll it."""
        return self._cancel_state().event

    @property
    def cancelled(self) -> bool:
        """True once the library stopped waiting for this call (its answer would be dropped)."""
        st = self._cancel
        if st is not None and st.event.is_set():
            return True
        ptr = self._ptr
        return ptr is not None and hasattr(lib, "ht_call_is_cancelled") and bool(lib.ht_call_is_cancelled(ptr))

    def progress(self, progress: float, total: Optional[float] = None, message: Optional[str] = None) -> int:
        """Report progress (``total`` None or <= 0: unknown): the event handler
        gets a ``tool.progress`` event with this call's ids. Returns the
        ht_status (NOT_FOUND once answered, timed out or cancelled)."""
        ptr = self._ptr
        if ptr is None or not hasattr(lib, "ht_call_progress"):
            return NOT_FOUND
        data = (message or "").encode("utf-8", "replace")
        return int(lib.ht_call_progress(ptr, float(progress), float(total or 0), data, len(data)))

    def log(self, level: str, message: str) -> int:
        """Log a message of this call at ``level`` (``"debug"``, ``"info"``,
        ``"notice"``, ``"warning"``, ``"error"``, ``"critical"``, ``"alert"``,
        ``"emergency"``): the event handler gets a ``tool.log`` event, and when
        the call came through :meth:`Runtime.serve_mcp` the MCP client gets a
        ``notifications/message`` if it asked for that level. Returns the
        ht_status (INVALID_ARGUMENT for an unknown level, NOT_FOUND once answered)."""
        ptr = self._ptr
        if ptr is None:
            return NOT_FOUND
        _need("ht_call_log")
        lv, ln = _b(level)
        data = (message or "").encode("utf-8", "replace")
        return int(lib.ht_call_log(ptr, lv, ln, data, len(data)))

    def client_request(self, method: str, params: Optional[dict] = None, timeout: Optional[float] = None) -> dict:
        """Send a request to the MCP client that made this call (served by
        :meth:`Runtime.serve_mcp`) and wait for its result: ``method`` is
        ``"sampling/createMessage"`` (the client's model answers),
        ``"elicitation/create"`` (the client's user fills a form) or
        ``"roots/list"``. Blocks this thread up to ``timeout`` seconds (None:
        120); from a coroutine handler use ``await asyncio.to_thread(...)``.
        Raises :class:`HermesToolsError` (UNSUPPORTED: no MCP client made the
        call or it lacks the capability; TIMEOUT; CANCELLED: the call stopped
        waiting first; INVALID_ARGUMENT: params not of the method's shape;
        INTERNAL: the client's error)."""
        ptr = self._ptr
        if ptr is None:
            raise HermesToolsError(NOT_FOUND, "the call was already answered")
        _need("ht_call_client_request")
        req, n = _b(json.dumps({"method": method, "params": params or {}}, ensure_ascii=False))
        ms = 0 if timeout is None else max(1, int(timeout * 1000))
        out, out_len, err = c_void_p(), c_size_t(0), c_void_p()
        _check(lib.ht_call_client_request(ptr, req, n, ms, byref(out), byref(out_len), byref(err)), err)
        return json.loads(_take_string(out, out_len))

    def on_cancel(self, fn: Callable[[], Any]) -> None:
        """Run ``fn()`` once when the library stops waiting for this call (at
        once if it already has), on a library thread: keep it quick. Async
        handlers need nothing: their task is cancelled (``asyncio.CancelledError``)."""
        self._cancel_state().add(fn)

    def respond(self, result: Any, is_error: bool = False) -> int:
        """Answer the call. ``result``: str (sent as is) or any JSON-serialisable value.
        Returns the ht_status (OK; TIMEOUT or NOT_FOUND when too late: harmless)."""
        text = result if is_error and isinstance(result, str) else _result_text(result)
        data = text.encode("utf-8", "replace")
        with self._lock:
            ptr, self._ptr = self._ptr, None
        if ptr is None:
            return NOT_FOUND
        return int(lib.ht_call_respond(ptr, bool(is_error), data, len(data)))

    def respond_error(self, message: Any) -> int:
        """Answer with an error result (the library wraps it as ``{"error": ...}``)."""
        return self.respond(message if isinstance(message, str) else _result_text(message), is_error=True)

    def __repr__(self) -> str:
        return f"ToolCall(name={self.name!r}, args={self.args_json})"


CALL_TYPES.append(ToolCall)


class _CancelState:
    """A call's cancellation: an event plus callbacks, fired at most once."""

    __slots__ = ("event", "_fns", "_lock")

    def __init__(self) -> None:
        self.event = threading.Event()
        self._fns: list = []
        self._lock = threading.Lock()

    def add(self, fn: Callable[[], Any]) -> None:
        with self._lock:
            if not self.event.is_set():
                self._fns.append(fn)
                return
        _call_quietly(fn)

    def fire(self) -> None:
        with self._lock:
            if self.event.is_set():
                return
            self.event.set()
            fns, self._fns = self._fns, []
        for fn in fns:
            _call_quietly(fn)


def _call_quietly(fn: Callable[[], Any]) -> None:
    try:
        fn()
    except BaseException:
        _report("cancellation callback")


# Registrations with ht_call_on_cancel, by user_data id; the free callback drops them.
_cancel_regs: dict = {}
_cancel_ids = itertools.count(1)


@_ffi.CANCEL_FN
def _cancel_tramp(user_data, call_ptr):
    try:
        st = _cancel_regs.get(user_data)
        if st is not None:
            st.fire()
    except BaseException:
        _report("call cancellation")


@_ffi.FREE_FN
def _cancel_free_tramp(user_data):
    _cancel_regs.pop(user_data, None)


# ---------------------------------------------------------------------------
# Trampolines: one per signature, module level, alive for the whole process
# ---------------------------------------------------------------------------


def _exc_text(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}" if str(e) else type(e).__name__


def _answer_from(call: ToolCall, fn: Callable[[], Any], runtime: "Runtime") -> None:
    """Run ``fn`` (which may return an awaitable) and answer ``call`` with the outcome."""
    try:
        value = fn()
    except BaseException as e:  # never let an exception reach C
        if not call.answered:
            call.respond_error(_exc_text(e))
        return
    if inspect.isawaitable(value):
        runtime._run_awaitable(value, call)
        return
    if call.answered or call.deferred:
        return
    call.respond(value)


# Plain (``def``) handlers of calls started with dispatch_async run on a
# pool of at most 32 threads (handlers mostly wait: on I/O, on a person),
# not on the library's single callbacks thread: eight calls of a handler
# that waits 300 ms take 0.3 s, not 2.4 s. Calls made with
# dispatch() run inline on the calling thread, as before.
_POOL_LOCK = threading.Lock()
_POOL: Optional[concurrent.futures.ThreadPoolExecutor] = None
_ON_CALLBACKS = threading.local()


def _pool() -> concurrent.futures.ThreadPoolExecutor:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = concurrent.futures.ThreadPoolExecutor(
                max_workers=32,
                thread_name_prefix="hermes-tools-handler",
            )
        return _POOL


def _on_callbacks_thread() -> bool:
    """Whether this is the library's callbacks thread (``ht-callbacks``),
    where async calls' handlers are started (read once per thread)."""
    v = getattr(_ON_CALLBACKS, "v", None)
    if v is None:
        try:
            with open(f"/proc/self/task/{threading.get_native_id()}/comm") as f:
                v = f.read().strip() == "ht-callbacks"
        except OSError:
            v = False
        _ON_CALLBACKS.v = v
    return v


@_ffi.HANDLER_FN
def _handler_tramp(user_data, call_ptr):
    try:
        call = ToolCall(call_ptr)
    except BaseException:
        _report("tool handler")
        lib.ht_call_respond(call_ptr, True, b"internal binding error", 22)
        return
    try:
        entry = _handles.get(user_data)
        if entry is None or entry.runtime is None:
            call.respond_error("tool handler is gone")
            return
        handler, _check_fn, concurrent_ok = entry.obj
        runtime = entry.runtime
        if concurrent_ok and _on_callbacks_thread():
            # Answered from the pool thread (the library waits for it).
            try:
                _pool().submit(_answer_from, call, lambda: handler(call), runtime)
                return
            except RuntimeError:
                pass  # the pool is shut down (interpreter exit): run here
        _answer_from(call, lambda: handler(call), runtime)
    except BaseException as e:
        if not call.answered:
            call.respond_error(_exc_text(e))


@_ffi.CHECK_FN
def _check_tramp(user_data):
    try:
        entry = _handles.get(user_data)
        if entry is None or entry.obj[1] is None:
            return False
        return bool(entry.obj[1]())
    except BaseException:
        return False


@_ffi.FREE_FN
def _free_tramp(user_data):
    try:
        entry = _handles.pop(user_data)
        if entry is not None:
            entry.obj = None
    except BaseException:
        _report("free function")


@_ffi.COMPLETION_FN
def _completion_tramp(user_data, status, result, result_len):
    try:
        text = ctypes.string_at(result, result_len).decode("utf-8", "replace") if result else ""
        entry = _handles.pop(user_data)
        if entry is None:
            return
        settle = entry.obj
        entry.obj = None
        settle(int(status), text)
    except BaseException:
        _report("completion")


@_ffi.HOOK_FN
def _hook_tramp(user_data, hook_ptr):
    decision: Any = {}
    event: dict = {}
    try:
        n = c_size_t(0)
        p = lib.ht_hook_event_json(hook_ptr, byref(n))
        event = json.loads(ctypes.string_at(p, n.value)) if p else {}
    except BaseException:
        _report("hook")
    answered = False

    def answer(value: Any, exc: Optional[BaseException] = None):
        nonlocal answered
        if answered:
            return
        answered = True
        if exc is not None:
            value = _hook_failure(event, exc)
        if value is None:
            value = {}
        try:
            data = _json_arg(value)
            data = data.encode() if isinstance(data, str) else data
        except BaseException as e:
            data = json.dumps(_hook_failure(event, e)).encode()
        lib.ht_hook_respond(hook_ptr, data, len(data))

    try:
        entry = _handles.get(user_data)
        if entry is None or entry.runtime is None:
            answer({})
            return
        decision = entry.obj(event)
        if inspect.isawaitable(decision):
            entry.runtime._run_hook_awaitable(decision, answer)
            return
        answer(decision)
    except BaseException as e:
        answer(None, e)


def _hook_failure(event: dict, exc: BaseException) -> dict:
    # Fail closed before a call runs; observe-only events just continue.
    if event.get("event") == "pre_tool_call":
        return {"action": "block", "message": f"hook failed: {_exc_text(exc)}"}
    return {}


@_ffi.EVENT_FN
def _event_tramp(user_data, data, n):
    try:
        text = ctypes.string_at(data, n).decode("utf-8", "replace") if data else "{}"
        entry = _handles.get(user_data)
        if entry is not None and entry.obj is not None:
            entry.obj(json.loads(text))
    except BaseException:
        _report("event handler")


@_ffi.LOG_FN
def _log_tramp(user_data, level, msg, n):
    try:
        text = ctypes.string_at(msg, n).decode("utf-8", "replace") if msg else ""
        entry = _handles.get(user_data)
        if entry is not None and entry.obj is not None:
            entry.obj(int(level), text)
    except BaseException:
        _report("log handler")


def _approval_answer(kind: str, value: Any) -> dict:
    """Normalise a host answer: dicts pass through; for the OAuth handler a
    string is the redirect URL and None gives up; for the approval handler
    True/"once"/"session"/"always" and False/"deny"; for the reviewer
    True/"approve", False/"deny", None/"escalate"."""
    if isinstance(value, dict):
        return value
    if kind == "oauth":
        if isinstance(value, str):
            return {"redirect_url": value}
        return {"error": "the host's OAuth handler gave no redirect"}
    if kind == "review":
        if value is True:
            return {"decision": "approve"}
        if value is False:
            return {"decision": "deny"}
        if isinstance(value, str):
            return {"decision": value}
        return {"decision": "escalate"}
    if value is True:
        return {"choice": "once"}
    if isinstance(value, str):
        return {"choice": value}
    return {"choice": "deny"}


@_ffi.APPROVAL_FN
def _approval_tramp(user_data, approval_ptr):
    request: dict = {}
    answered = False
    kind = "approval"

    def answer(value: Any, exc: Optional[BaseException] = None):
        nonlocal answered
        if answered:
            return
        answered = True
        if exc is not None:
            # Fail closed: a broken approval handler denies; a broken reviewer
            # escalates; a broken OAuth handler gives up the sign-in.
            value = ({"decision": "escalate"} if kind == "review" else
                     {"error": f"the OAuth handler raised {type(exc).__name__}"} if kind == "oauth" else
                     {"choice": "deny"})
        try:
            data = json.dumps(_approval_answer(kind, value)).encode()
        except BaseException:
            data = b'{"choice":"deny"}' if kind != "review" else b'{"decision":"escalate"}'
        lib.ht_approval_respond(approval_ptr, data, len(data))

    try:
        n = c_size_t(0)
        p = lib.ht_approval_request_json(approval_ptr, byref(n))
        request = json.loads(ctypes.string_at(p, n.value)) if p else {}
        entry = _handles.get(user_data)
        kind = ("review" if (entry is not None and entry.kind == "reviewer") or request.get("kind") == "review"
                else "oauth" if entry is not None and entry.kind == "oauth" else "approval")
        if entry is None or entry.runtime is None or entry.obj is None:
            answer(None)
            return
        value = entry.obj(request)
        if inspect.isawaitable(value):
            entry.runtime._run_hook_awaitable(value, answer)
            return
        answer(value)
    except BaseException as e:
        answer(None, e)


_NULL_HANDLER = ctypes.cast(None, _ffi.HANDLER_FN)
_NULL_CHECK = ctypes.cast(None, _ffi.CHECK_FN)
_NULL_EVENT = ctypes.cast(None, _ffi.EVENT_FN)
_NULL_LOG = ctypes.cast(None, _ffi.LOG_FN)
_NULL_FREE = ctypes.cast(None, _ffi.FREE_FN)
_NULL_APPROVAL = ctypes.cast(None, _ffi.APPROVAL_FN)


def _need(name: str) -> None:
    if not _ffi.has(name):
        raise HermesToolsError(UNSUPPORTED, f"{name} is not exported by the loaded library")


def set_log_handler(fn: Optional[Callable[[int, str], None]], level: int = 3) -> None:
    """Install a process-wide log handler ``fn(level, message)`` (1 error .. 5 trace).
    ``None`` removes it. Lines arrive on a library thread. A handler still
    installed at interpreter exit is removed by an ``atexit`` hook."""
    global _log_installed, _log_hid
    if fn is None:
        _log_installed = False
        status = lib.ht_set_log_handler(_NULL_LOG, int(level), None, _NULL_FREE)
        _check(status, c_void_p())
        return
    hid = _handles.add(_Entry("log", fn, None))
    status = lib.ht_set_log_handler(_log_tramp, int(level), hid, _free_tramp)
    if status != OK:
        _handles.discard(hid)
        _check(status, c_void_p())
    _log_installed = True
    _log_hid = hid


# ---------------------------------------------------------------------------
# Background event loop for coroutine handlers when no host loop is usable
# ---------------------------------------------------------------------------


class _LoopThread:
    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._run, name="hermes-tools-asyncio", daemon=True)
        self.thread.start()

    def _run(self):
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def stop(self):
        def _shutdown():
            for t in asyncio.all_tasks(self.loop):
                t.cancel()
            self.loop.stop()

        try:
            self.loop.call_soon_threadsafe(_shutdown)
        except RuntimeError:
            return
        if threading.current_thread() is not self.thread:
            self.thread.join(timeout=5)
            if not self.thread.is_alive():
                self.loop.close()


async def _await_it(aw):
    return await aw


# ---------------------------------------------------------------------------
# Runtime
# ---------------------------------------------------------------------------

_live_runtimes: "weakref.WeakSet[Runtime]" = weakref.WeakSet()


_log_installed = False
# The handle of the installed log handler: the library frees it (our
# _free_tramp) once the last line queued for it was delivered.
_log_hid: Optional[int] = None


@atexit.register
def _close_all() -> None:
    for rt in list(_live_runtimes):
        try:
            rt.close()
        except BaseException:
            pass
    # No library thread may call into Python after the interpreter is gone:
    # remove the handler, then wait (the GIL free) until the library has
    # delivered the lines already queued for it and released it. A log line
    # delivered during finalization would end the log thread by
    # pthread_exit, whose unwinding the library's panic boundary cannot let
    # through ("FATAL: exception not rethrown", SIGABRT at exit).
    if _log_installed:
        hid = _log_hid
        try:
            set_log_handler(None)
        except BaseException:
            pass
        deadline = time.monotonic() + 2.0
        while hid is not None and _handles.get(hid) is not None and time.monotonic() < deadline:
            time.sleep(0.002)


class McpServer:
    """An MCP server of a runtime (:meth:`Runtime.serve_mcp`). ``address`` is
    ``ht_mcp_server_address``'s JSON as a dict (``url``, ``auth``,
    ``token_file`` for HTTP). Stop it with :meth:`close` (or a ``with``
    block); closing its runtime stops it too."""

    def __init__(self, ptr: int, runtime: "Runtime"):
        self._ptr: Optional[int] = ptr
        self._runtime = runtime  # the runtime outlives the handle's use
        raw = lib.ht_mcp_server_address(ptr)
        self.address: dict = json.loads(raw.decode("utf-8")) if raw else {}

    @property
    def url(self) -> Optional[str]:
        return self.address.get("url")

    @property
    def token(self) -> Optional[str]:
        """The bearer token of a generated token file (None otherwise)."""
        path = self.address.get("token_file")
        if not path:
            return None
        with open(path, encoding="utf-8") as f:
            return f.readline().strip()

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Wait up to ``timeout`` seconds (None: for ever) for the server to
        end; True when it ended, False while it still serves. Raises when it
        ended with an error."""
        ptr = self._ptr
        if ptr is None:
            return True
        while True:
            step = 1000 if timeout is None else max(0, int(timeout * 1000))
            err = c_void_p()
            rc = lib.ht_mcp_server_wait(ptr, step, byref(err))
            if rc == OK:
                return True
            if rc != TIMEOUT:
                raise _take_error(rc, err)
            if timeout is not None:
                return False

    def close(self) -> None:
        """Stop serving (calls in flight are cancelled) and free the handle. Idempotent."""
        ptr, self._ptr = self._ptr, None
        if ptr is not None:
            lib.ht_mcp_server_free(ptr)

    def __enter__(self) -> "McpServer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        try:
            self.close()
        except BaseException:
            pass

    def __repr__(self) -> str:
        return f"<hermes_tools.McpServer {self.address}>"


class Runtime:
    """A hermes-tools runtime. Use as a context manager or call :meth:`close`.

    ``config``: dict (or JSON text) for ``ht_runtime_new``, e.g.
    ``{"builtin_toolsets": ["terminal"]}``. ``loop``: the asyncio loop on which
    coroutine handlers and hooks run (default: the running loop seen by
    :meth:`dispatch_async`, else a private background loop).
    """

    def __init__(
        self,
        config: Union[dict, str, None] = None,
        *,
        loop: Optional[asyncio.AbstractEventLoop] = None,
        environments: Optional[list] = None,
    ):
        data, n = _b(_json_arg(config) if config is not None else None)
        out, err = c_void_p(), c_void_p()
        if environments:
            # Host-defined environments (hermes_tools.Environment): the
            # config's terminal.backend may name one.
            from ._environment import _handles

            arr, count = _handles(environments)
            _check(lib.ht_runtime_new_with_environments(data, n, arr, count, byref(out), byref(err)), err)
        else:
            _check(lib.ht_runtime_new(data, n, byref(out), byref(err)), err)
        self._ptr: Optional[int] = out.value
        self._loop = loop
        self._bg: Optional[_LoopThread] = None
        self._bg_lock = threading.Lock()
        self._closing = False
        _live_runtimes.add(self)

    # -- lifecycle ---------------------------------------------------------

    def __enter__(self) -> "Runtime":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    async def __aenter__(self) -> "Runtime":
        return self

    async def __aexit__(self, *exc) -> None:
        # ht_runtime_free blocks until handlers answer; run it off the loop so
        # coroutine handlers scheduled on this loop can still finish.
        await asyncio.get_running_loop().run_in_executor(None, self.close)

    @property
    def closed(self) -> bool:
        return self._ptr is None

    def close(self) -> None:
        """Free the runtime: pending async calls complete with CANCELLED, every
        free function runs, library threads are joined. Idempotent."""
        ptr, self._ptr = self._ptr, None
        if ptr is None:
            return
        self._closing = True
        lib.ht_runtime_free(ptr)  # GIL released: library threads may call Python
        _live_runtimes.discard(self)
        with self._bg_lock:
            bg, self._bg = self._bg, None
        if bg is not None:
            bg.stop()

    def __del__(self):
        try:
            if getattr(self, "_ptr", None) is not None:
                self.close()
        except BaseException:
            pass

    def _rt(self) -> int:
        ptr = self._ptr
        if ptr is None:
            raise HermesToolsError(CLOSED, "runtime is closed")
        return ptr

    @property
    def pointer(self) -> Optional[int]:
        """The raw ``ht_runtime*`` (for calling the C API through ``hermes_tools.lib``)."""
        return self._ptr

    # -- asyncio plumbing --------------------------------------------------

    def _target_loop(self) -> asyncio.AbstractEventLoop:
        loop = self._loop
        if loop is not None and loop.is_running() and not loop.is_closed():
            try:
                running_here = asyncio.get_running_loop() is loop
            except RuntimeError:
                running_here = False
            # A sync dispatch from the loop's own thread would deadlock.
            if not running_here and getattr(loop, "_thread_id", None) != threading.get_ident():
                return loop
        with self._bg_lock:
            if self._bg is None:
                self._bg = _LoopThread()
            return self._bg.loop

    def _run_awaitable(self, aw: Awaitable, call: ToolCall) -> None:
        def done(fut: concurrent.futures.Future):
            if call.answered:
                return
            try:
                if fut.cancelled():
                    call.respond_error("handler was cancelled")
                    return
                exc = fut.exception()
                if exc is not None:
                    call.respond_error(_exc_text(exc))
                elif not call.deferred:
                    call.respond(fut.result())
            except BaseException as e:
                if not call.answered:
                    call.respond_error(_exc_text(e))

        try:
            fut = asyncio.run_coroutine_threadsafe(_await_it(aw), self._target_loop())
        except BaseException as e:
            if inspect.iscoroutine(aw):
                aw.close()
            call.respond_error(_exc_text(e))
            return
        fut.add_done_callback(done)
        # A timeout, cancel or close cancels the handler's task (CancelledError in it).
        call.on_cancel(fut.cancel)

    def _run_hook_awaitable(self, aw: Awaitable, answer: Callable) -> None:
        def done(fut: concurrent.futures.Future):
            try:
                if fut.cancelled():
                    answer(None, asyncio.CancelledError())
                elif fut.exception() is not None:
                    answer(None, fut.exception())
                else:
                    answer(fut.result())
            except BaseException as e:
                answer(None, e)

        try:
            fut = asyncio.run_coroutine_threadsafe(_await_it(aw), self._target_loop())
        except BaseException as e:
            if inspect.iscoroutine(aw):
                aw.close()
            answer(None, e)
            return
        fut.add_done_callback(done)

    # -- registration ------------------------------------------------------

    def register_tool(
        self,
        spec: Union[dict, str],
        handler: Callable[[ToolCall], Any],
        check: Optional[Callable[[], bool]] = None,
        *,
        concurrent: bool = True,
    ) -> str:
        """Register a host tool from a spec (``{"name","toolset","schema",...}``).

        ``handler(call: ToolCall)`` may return the result (str, or any
        JSON-serialisable value), return an awaitable (coroutine handlers run
        on an asyncio loop), raise (the model gets an error result), or call
        ``call.defer()`` and answer later with ``call.respond`` from any
        thread. ``check()`` -> bool hides the tool when false (must be fast).
        A plain (``def``) handler of a call started with :meth:`dispatch_async`
        runs on a bounded thread pool, so such calls overlap (the handler must
        then be thread-safe); ``concurrent=False`` runs them one at a time on
        the library's callbacks thread instead. Returns the tool name."""
        if not callable(handler):
            raise TypeError("hermes_tools: handler must be callable")
        if check is not None and not callable(check):
            raise TypeError("hermes_tools: check must be callable or None")
        spec_text = _json_arg(spec)
        data, n = _b(spec_text)
        rt = self._rt()
        plain = not inspect.iscoroutinefunction(handler)
        hid = _handles.add(_Entry("tool", (handler, check, bool(concurrent) and plain), self))
        err = c_void_p()
        status = lib.ht_runtime_register_tool(
            rt, data, n, _handler_tramp, _check_tramp if check else _NULL_CHECK, hid, _free_tramp, byref(err)
        )
        if status != OK:
            _handles.discard(hid)  # on failure the library never calls free
            _check(status, err)
        try:
            return json.loads(spec_text)["name"] if isinstance(spec, (str, bytes)) else spec["name"]
        except Exception:
            return ""

    def tool(
        self,
        fn: Optional[Callable] = None,
        *,
        toolset: str = "default",
        name: Optional[str] = None,
        description: Optional[str] = None,
        check: Optional[Callable[[], bool]] = None,
        concurrent: bool = True,
        **spec_extra: Any,
    ):
        """Decorator: register a function as a tool. The schema comes from the
        type hints and docstring; the function is called with the arguments as
        keyword arguments (plus ``call`` if it has a parameter named ``call``
        or annotated ``ToolCall``). It may be ``async def``. Extra keywords go
        into the spec (``parallel_safe=True``, ``emoji=...``, ``override=True``,
        ``max_result_size_chars=...``, ``requires_env=[...]``). ``concurrent``:
        see :meth:`register_tool`."""

        def deco(f: Callable) -> Callable:
            schema = function_schema(f, name=name, description=description)
            sig = inspect.signature(f)
            try:
                import typing

                hints = typing.get_type_hints(f)
            except Exception:
                hints = {}
            call_param = next((p.name for p in sig.parameters.values() if _is_call_param(p, hints)), None)
            accepts_kwargs = any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values())
            known = {
                p.name
                for p in sig.parameters.values()
                if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL) and p.name != call_param
            }
            optional_none = {
                p.name
                for p in sig.parameters.values()
                if p.name in known and p.default is inspect.Parameter.empty and _is_optional(hints.get(p.name))
            }

            def handler(call: ToolCall):
                args = call.args
                if not isinstance(args, dict):
                    raise TypeError("tool arguments must be a JSON object")
                kwargs = {k: v for k, v in args.items() if accepts_kwargs or k in known}
                for k in optional_none:
                    kwargs.setdefault(k, None)
                if call_param:
                    kwargs[call_param] = call
                return f(**kwargs)

            spec = {"name": schema["name"], "toolset": toolset, "schema": schema}
            spec.update(spec_extra)
            self.register_tool(spec, handler, check, concurrent=concurrent and not inspect.iscoroutinefunction(f))
            f.__hermes_tool_spec__ = spec  # type: ignore[attr-defined]
            return f

        return deco(fn) if fn is not None else deco

    def deregister_tool(self, name: str) -> None:
        """Remove a tool (its handler is released). NOT_FOUND if unknown."""
        p, n = _b(name)
        err = c_void_p()
        _check(lib.ht_runtime_deregister_tool(self._rt(), p, n, byref(err)), err)

    def define_toolset(
        self,
        toolset: Union[dict, str],
        description: Optional[str] = None,
        tools: Optional[Iterable[str]] = None,
        includes: Optional[Iterable[str]] = None,
    ) -> None:
        """Define or replace a toolset: ``define_toolset("research", tools=[...], includes=[...])``
        or ``define_toolset({...})``."""
        if isinstance(toolset, str) and not toolset.lstrip().startswith("{"):
            obj: dict = {"name": toolset}
            if description is not None:
                obj["description"] = description
            if tools is not None:
                obj["tools"] = list(tools)
            if includes is not None:
                obj["includes"] = list(includes)
            toolset = obj
        p, n = _b(_json_arg(toolset))
        err = c_void_p()
        _check(lib.ht_runtime_define_toolset(self._rt(), p, n, byref(err)), err)

    def alias_toolset(self, alias: str, target: str) -> None:
        """Make ``alias`` name the toolset ``target``."""
        a, an = _b(alias)
        t, tn = _b(target)
        err = c_void_p()
        _check(lib.ht_runtime_alias_toolset(self._rt(), a, an, t, tn, byref(err)), err)

    def toolsets(self) -> list:
        """Every toolset with its tools, includes, resolved tools and availability."""
        out, n, err = c_void_p(), c_size_t(), c_void_p()
        _check(lib.ht_runtime_toolsets_json(self._rt(), byref(out), byref(n), byref(err)), err)
        return json.loads(_take_string(out, n))

    @property
    def generation(self) -> int:
        """The registry generation (changes on every registry change)."""
        return int(lib.ht_runtime_generation(self._rt()))

    def invalidate_availability(self) -> None:
        """Forget cached availability-check results."""
        _check(lib.ht_runtime_invalidate_availability(self._rt()), c_void_p())

    # -- definitions -------------------------------------------------------

    def definitions(
        self,
        enabled_toolsets: Optional[Iterable[str]] = None,
        disabled_toolsets: Optional[Iterable[str]] = None,
        format: Optional[str] = None,
    ) -> list:
        """Tool definitions for the model (``format``: "openai" | "anthropic" | "mcp")."""
        query: dict = {}
        if enabled_toolsets is not None:
            query["enabled_toolsets"] = list(enabled_toolsets)
        if disabled_toolsets is not None:
            query["disabled_toolsets"] = list(disabled_toolsets)
        if format is not None:
            query["format"] = format
        return json.loads(self.definitions_json(query or None))

    def definitions_json(self, query: Union[dict, str, None] = None) -> str:
        """Raw JSON text of :meth:`definitions` for a query object."""
        p, n = _b(_json_arg(query))
        out, out_len, err = c_void_p(), c_size_t(), c_void_p()
        _check(lib.ht_runtime_definitions_json(self._rt(), p, n, byref(out), byref(out_len), byref(err)), err)
        return _take_string(out, out_len)

    # -- dispatch ----------------------------------------------------------

    def dispatch(self, name: str, args: Any = None, context: Optional[dict] = None) -> str:
        """Run one tool call and wait for its result text (error results are
        text too: a JSON object with an ``"error"`` key). The handler runs on
        this thread; from inside a running event loop use :meth:`dispatch_async`."""
        np_, nn = _b(name)
        ap, an = _b(_json_arg(args if args is not None else {}))
        cp, cn = _b(_json_arg(context))
        out, out_len, err = c_void_p(), c_size_t(), c_void_p()
        status = lib.ht_runtime_dispatch(self._rt(), np_, nn, ap, an, cp, cn, byref(out), byref(out_len), byref(err))
        _check(status, err)
        return _take_string(out, out_len)

    def _start(self, name, args, context, settle: Callable[[int, str], None]) -> int:
        np_, nn = _b(name)
        ap, an = _b(_json_arg(args if args is not None else {}))
        cp, cn = _b(_json_arg(context))
        rt = self._rt()
        hid = _handles.add(_Entry("completion", settle, self))
        call_id, err = c_uint64(0), c_void_p()
        status = lib.ht_runtime_dispatch_async(
            rt, np_, nn, ap, an, cp, cn, _completion_tramp, hid, byref(call_id), byref(err)
        )
        if status != OK:
            _handles.discard(hid)  # on_done will never run
            _check(status, err)
        return int(call_id.value)

    def dispatch_async(self, name: str, args: Any = None, context: Optional[dict] = None) -> "asyncio.Future[str]":
        """Start a call and return an asyncio Future of its result text. Must be
        called with a running loop (or one set with ``Runtime(loop=...)``).
        The future has a ``call_id`` attribute; cancelling the future cancels
        the call. A call cancelled by the library raises HermesToolsError(CANCELLED)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = self._loop
            if loop is None:
                raise RuntimeError("hermes_tools: dispatch_async needs a running event loop") from None
        if self._loop is None:
            self._loop = loop
        fut: asyncio.Future = loop.create_future()

        def set_outcome(status: int, text: str) -> None:
            if fut.done():
                return
            if status == OK:
                fut.set_result(text)
            else:
                fut.set_exception(HermesToolsError(status, text, result=text))

        def settle(status: int, text: str) -> None:  # on the library callback thread
            try:
                loop.call_soon_threadsafe(set_outcome, status, text)
            except RuntimeError:
                pass  # the loop is closed: nobody is waiting

        call_id = self._start(name, args, context, settle)
        fut.call_id = call_id  # type: ignore[attr-defined]

        def on_cancel(f: asyncio.Future) -> None:
            if f.cancelled() and self._ptr is not None:
                try:
                    self.cancel(call_id)
                except HermesToolsError:
                    pass

        fut.add_done_callback(on_cancel)
        return fut

    def dispatch_future(self, name: str, args: Any = None, context: Optional[dict] = None) -> concurrent.futures.Future:
        """Like :meth:`dispatch_async` but returns a ``concurrent.futures.Future``
        (no event loop needed); ``future.call_id`` is set."""
        fut: concurrent.futures.Future = concurrent.futures.Future()

        def settle(status: int, text: str) -> None:
            if not fut.set_running_or_notify_cancel():
                return
            if status == OK:
                fut.set_result(text)
            else:
                fut.set_exception(HermesToolsError(status, text, result=text))

        fut.call_id = self._start(name, args, context, settle)  # type: ignore[attr-defined]
        return fut

    def cancel(self, call_id: int) -> None:
        """Cancel an async call (its completion runs with CANCELLED). NOT_FOUND when already done."""
        err = c_void_p()
        _check(lib.ht_runtime_cancel(self._rt(), int(call_id), byref(err)), err)

    def dispatch_batch(self, tool_calls: Union[list, str], context: Optional[dict] = None) -> list:
        """Dispatch a model's ``tool_calls`` array; returns ``[{"tool_call_id","name","content"}]``
        in input order. Blocks like :meth:`dispatch`."""
        tp, tn = _b(_json_arg(tool_calls))
        cp, cn = _b(_json_arg(context))
        out, out_len, err = c_void_p(), c_size_t(), c_void_p()
        _check(lib.ht_runtime_dispatch_batch(self._rt(), tp, tn, cp, cn, byref(out), byref(out_len), byref(err)), err)
        return json.loads(_take_string(out, out_len))

    async def dispatch_batch_async(self, tool_calls: Union[list, str], context: Optional[dict] = None) -> list:
        """:meth:`dispatch_batch` run in a worker thread, so coroutine handlers on this loop can run."""
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        return await asyncio.get_running_loop().run_in_executor(None, self.dispatch_batch, tool_calls, context)

    # -- hooks, events, checks ---------------------------------------------

    def add_hook(self, event: str, fn: Callable[[dict], Any]) -> None:
        """Add a hook. ``fn(event: dict)`` returns a decision dict (or None for
        ``{}``), or an awaitable of one. ``pre_tool_call``: ``{}`` continue,
        ``{"action":"block","message":..}``, ``{"action":"rewrite","args":{..}}``;
        ``post_tool_call``: observe; ``transform_tool_result``: ``{"result": "..."}``.
        A pre_tool_call hook that raises blocks the call."""
        if not callable(fn):
            raise TypeError("hermes_tools: hook must be callable")
        p, n = _b(event)
        rt = self._rt()
        hid = _handles.add(_Entry("hook", fn, self))
        err = c_void_p()
        status = lib.ht_runtime_add_hook(rt, p, n, _hook_tramp, hid, _free_tramp, byref(err))
        if status != OK:
            _handles.discard(hid)
            _check(status, err)

    def set_event_handler(self, fn: Optional[Callable[[dict], None]]) -> None:
        """Receive library events (dicts) on the callback thread; ``None`` removes the handler."""
        rt = self._rt()
        err = c_void_p()
        if fn is None:
            _check(lib.ht_runtime_set_event_handler(rt, _NULL_EVENT, None, _NULL_FREE, byref(err)), err)
            return
        hid = _handles.add(_Entry("event", fn, self))
        status = lib.ht_runtime_set_event_handler(rt, _event_tramp, hid, _free_tramp, byref(err))
        if status != OK:
            _handles.discard(hid)
            _check(status, err)

    # -- approvals -----------------------------------------------------------

    def _set_approval_fn(self, cname: str, kind: str, fn) -> None:
        _need(cname)
        setter = getattr(lib, cname)
        rt = self._rt()
        err = c_void_p()
        if fn is None:
            _check(setter(rt, _NULL_APPROVAL, None, _NULL_FREE, byref(err)), err)
            return
        if not callable(fn):
            raise TypeError("hermes_tools: approval handler must be callable or None")
        hid = _handles.add(_Entry(kind, fn, self))
        status = setter(rt, _approval_tramp, hid, _free_tramp, byref(err))
        if status != OK:
            _handles.discard(hid)
            _check(status, err)

    def set_interceptor(self, handler: Optional[Callable[["ToolCall"], Any]]) -> None:
        """Handle agent-loop tools (specs with ``"agent_loop": True``) with
        ``handler(call)``, called like a tool handler, without hooks. ``None``
        removes it (their calls then answer "must be handled by the agent loop")."""
        _need("ht_runtime_set_interceptor")
        rt = self._rt()
        err = c_void_p()
        if handler is None:
            _check(lib.ht_runtime_set_interceptor(rt, _NULL_HANDLER, None, _NULL_FREE, byref(err)), err)
            return
        if not callable(handler):
            raise TypeError("hermes_tools: interceptor must be callable or None")
        hid = _handles.add(_Entry("tool", (handler, None, False), self))
        status = lib.ht_runtime_set_interceptor(rt, _handler_tramp, hid, _free_tramp, byref(err))
        if status != OK:
            _handles.discard(hid)
            _check(status, err)

    def set_approval_handler(self, fn: Optional[Callable[[dict], Any]]) -> None:
        """Ask ``fn(request: dict)`` when a command needs approval (on the
        callback thread; the command waits up to ``approvals.timeout``).
        Return ``{"choice": "once"|"session"|"always"|"deny", "scope"?: [...]}``,
        one of those strings, ``True`` (once) / ``False`` (deny), or an
        awaitable of any of these. An exception denies. ``None`` removes it."""
        self._set_approval_fn("ht_runtime_set_approval_handler", "approval", fn)

    def set_approval_reviewer(self, fn: Optional[Callable[[dict], Any]]) -> None:
        """The smart reviewer (``approvals.mode = "smart"``), asked first:
        return ``{"decision": "approve"|"deny"|"escalate"}``, one of those
        strings, ``True``/``False``, or ``None`` (escalate), or an awaitable.
        An exception escalates. ``None`` removes it."""
        self._set_approval_fn("ht_runtime_set_approval_reviewer", "reviewer", fn)

    def set_oauth_handler(self, fn: Optional[Callable[[dict], Any]]) -> None:
        """The browser step of MCP servers' OAuth sign-in: ``fn(request)`` gets
        ``{"kind": "oauth_authorize", "server", "authorization_url",
        "redirect_uri", "scopes", "step_up", "timeout_s"}`` (on the callback
        thread), shows the user the URL and returns the URL the browser was
        sent back to (a string), ``{"code": ...}``, ``{"error": reason}``, or
        an awaitable of one of these. For servers with ``oauth.token_store =
        "host"`` it also gets ``oauth_tokens_load`` (return ``{"tokens": ...}``),
        ``oauth_tokens_save`` (keep ``request["tokens"]`` secret; return ``{}``)
        and ``oauth_tokens_clear``. An exception gives the sign-in up.
        ``None`` removes it. Set it before ``add_mcp_server``."""
        self._set_approval_fn("ht_runtime_set_oauth_handler", "oauth", fn)

    # -- MCP servers -----------------------------------------------------------

    def mcp_status(self) -> dict:
        """Each MCP server's state: ``{name: {"state", "tools", "last_error",
        "protocol_version", ...}}``."""
        _need("ht_runtime_mcp_status")
        out, n, err = c_void_p(), c_size_t(), c_void_p()
        _check(lib.ht_runtime_mcp_status(self._rt(), byref(out), byref(n), byref(err)), err)
        return json.loads(_take_string(out, n))

    def add_mcp_server(self, name: str, config: Union[dict, str]) -> None:
        """Start an MCP server (an ``mcp_servers`` entry) at run time; returns
        after its first connection attempt (see ``mcp_status``)."""
        _need("ht_runtime_add_mcp_server")
        np, nn = _b(name)
        cp, cn = _b(_json_arg(config))
        err = c_void_p()
        _check(lib.ht_runtime_add_mcp_server(self._rt(), np, nn, cp, cn, byref(err)), err)

    def remove_mcp_server(self, name: str) -> None:
        """Stop an MCP server and drop its tools."""
        _need("ht_runtime_remove_mcp_server")
        np, nn = _b(name)
        err = c_void_p()
        _check(lib.ht_runtime_remove_mcp_server(self._rt(), np, nn, byref(err)), err)

    def allowlist(self) -> list:
        """The persistent allowlist (``always`` answers)."""
        _need("ht_runtime_allowlist_json")
        out, n, err = c_void_p(), c_size_t(), c_void_p()
        _check(lib.ht_runtime_allowlist_json(self._rt(), byref(out), byref(n), byref(err)), err)
        return json.loads(_take_string(out, n))

    def set_allowlist(self, entries: Union[list, str]) -> None:
        """Replace the allowlist (validated; saved to ``approvals.allowlist_path`` if configured)."""
        _need("ht_runtime_allowlist_set")
        p, n = _b(_json_arg(entries))
        err = c_void_p()
        _check(lib.ht_runtime_allowlist_set(self._rt(), p, n, byref(err)), err)

    def clear_session_approvals(self, session_id: str) -> None:
        """Forget the ``session`` approvals given in ``session_id``."""
        _need("ht_runtime_clear_session_approvals")
        p, n = _b(session_id)
        err = c_void_p()
        _check(lib.ht_runtime_clear_session_approvals(self._rt(), p, n, byref(err)), err)

    def cleanup_task(self, task_id: str) -> None:
        """Drop a task's shell state and kill its background processes."""
        p, n = _b(task_id)
        err = c_void_p()
        _check(lib.ht_runtime_cleanup_task(self._rt(), p, n, byref(err)), err)

    def command_check(self, command: Union[str, bytes]) -> dict:
        """Analyse a shell command with this runtime's rules, without running it."""
        return _command_check(self._rt(), command)

    def serve_mcp(self, options: Union[dict, str, None] = None) -> McpServer:
        """Serve this runtime's tools (host tools included) as an MCP server on
        a library thread (``ht_runtime_serve_mcp``). ``options``: ``None`` or
        ``{}`` for stdio on descriptors 0 and 1; ``{"transport": "http"}`` for
        streamable HTTP on a free loopback port with a generated bearer token
        (``server.url``, ``server.token``); the header documents the rest
        (``address``, ``token``, ``auth``, limits, ``approvals``)."""
        _need("ht_runtime_serve_mcp")
        data, n = _b(_json_arg(options) if options is not None else None)
        out, err = c_void_p(), c_void_p()
        _check(lib.ht_runtime_serve_mcp(self._rt(), data, n, byref(out), byref(err)), err)
        return McpServer(out.value, self)

    def __repr__(self) -> str:
        return f"<hermes_tools.Runtime {'closed' if self._ptr is None else hex(self._ptr)}>"
