"""Host-defined environments: run the terminal's commands and the file tools
where your own provider runs them (a cloud sandbox SDK, a VM pool, a
subprocess), selected by ``terminal.backend`` naming the environment.

Subclass :class:`Environment` and implement :meth:`Environment.run` (start
``exec.argv`` where ``exec.task``'s commands run, stream its output with
:meth:`Exec.output`, return its exit status) and :meth:`Environment.kill`.
Optionally implement ``read_file``/``write_file``/``list_dir`` (all three)
with the provider's own file API; without them the file tools run small
shell scripts through :meth:`run`. ``cleanup(task)`` releases a task's
sandbox (``task`` is ``None`` when the runtime closes).

Commands reach :meth:`run` only after the runtime's approval policy, with
its limits; timeouts and cancellation arrive as :meth:`kill` (15 = TERM,
then 9 = KILL after the grace). Each :meth:`run` is called on a thread of
its own, so it may block until the command ends.
"""

from __future__ import annotations

import ctypes
import json
import threading
import traceback
from ctypes import CFUNCTYPE, byref, c_char_p, c_int32, c_size_t, c_uint64, c_void_p
from typing import Iterable, Optional, Tuple

from ._errors import _check
from ._ffi import FREE_FN, lib

SPAWN_FN = CFUNCTYPE(None, c_void_p, c_void_p)  # (user_data, ht_exec*)
KILL_FN = CFUNCTYPE(None, c_void_p, c_uint64, c_int32)  # (user_data, exec_id, signal)
FILE_FN = CFUNCTYPE(None, c_void_p, c_void_p)  # (user_data, ht_env_file_op*)
CLEANUP_FN = CFUNCTYPE(None, c_void_p, c_void_p, c_size_t)  # (user_data, task, len)

_P = ctypes.POINTER(c_void_p)
_SZ = ctypes.POINTER(c_size_t)
_SIGS = {
    "ht_environment_new": (
        c_int32,
        [c_char_p, c_size_t, SPAWN_FN, KILL_FN, FILE_FN, CLEANUP_FN, c_void_p, FREE_FN, _P, _P],
    ),
    "ht_environment_free": (None, [c_void_p]),
    "ht_runtime_new_with_environments": (
        c_int32,
        [c_char_p, c_size_t, ctypes.POINTER(c_void_p), c_size_t, _P, _P],
    ),
    "ht_exec_request_json": (c_void_p, [c_void_p, _SZ]),
    "ht_exec_stdin": (c_void_p, [c_void_p, _SZ]),
    "ht_exec_output": (c_int32, [c_void_p, c_int32, c_char_p, c_size_t]),
    "ht_exec_finish": (c_int32, [c_void_p, c_int32, c_char_p, c_size_t]),
    "ht_env_file_op_json": (c_void_p, [c_void_p, _SZ]),
    "ht_env_file_op_data": (c_void_p, [c_void_p, _SZ]),
    "ht_env_file_op_respond": (c_int32, [c_void_p, c_int32, c_char_p, c_size_t]),
}
for _name, (_res, _args) in _SIGS.items():
    _fn = getattr(lib, _name, None)
    if _fn is not None:
        _fn.restype = _res
        _fn.argtypes = _args


def available() -> bool:
    """Whether the loaded library supports host-defined environments."""
    return getattr(lib, "ht_environment_new", None) is not None


class Exec:
    """One command to run: ``argv`` (``["bash", "-c", script]``) where
    ``task``'s commands run, ``stdin`` bytes to feed (then close stdin).
    ``capture`` is true for the library's own scripts (file tools, state),
    whose stdout and stderr must be reported apart (streams 1 and 2)."""

    def __init__(self, ptr: int):
        self._ptr = ptr
        n = c_size_t()
        p = lib.ht_exec_request_json(ptr, byref(n))
        req = json.loads(ctypes.string_at(p, n.value).decode())
        self.id: int = req["id"]
        self.task: str = req["task"]
        self.argv: list = req["argv"]
        self.capture: bool = req["capture"]
        self.stdin = b""
        if req.get("stdin"):
            p = lib.ht_exec_stdin(ptr, byref(n))
            self.stdin = ctypes.string_at(p, n.value) if n.value else b""
        self._done = False
        self._lock = threading.Lock()

    @property
    def script(self) -> str:
        return self.argv[-1]

    def output(self, data: bytes, stream: int = 1) -> bool:
        """Report output; False when nobody reads any more (the call timed
        out or was cancelled): stop the command."""
        if not data:
            return True
        with self._lock:
            if self._done:
                return False
            return lib.ht_exec_output(self._ptr, stream, data, len(data)) == 0

    def finish(self, exit_code: int, message: Optional[str] = None) -> None:
        """End the command (once; later calls do nothing). ``message``: why,
        when the provider ended it (a sandbox that disappeared)."""
        with self._lock:
            if self._done:
                return
            self._done = True
            m = message.encode() if message else None
            lib.ht_exec_finish(self._ptr, int(exit_code), m, len(m) if m else 0)


# user_data -> Environment (keeps the object alive while the library holds it)
_live: dict = {}
_live_lock = threading.Lock()
_next = [1]


def _env_of(ud) -> Optional["Environment"]:
    with _live_lock:
        return _live.get(ud or 0)


@SPAWN_FN
def _spawn_tramp(ud, exec_ptr):
    env = _env_of(ud)
    try:
        ex = Exec(exec_ptr)
    except BaseException:
        lib.ht_exec_finish(exec_ptr, 255, b"host environment: unreadable request", 37)
        return
    if env is None:
        ex.finish(255, "host environment is gone")
        return

    def body():
        try:
            code = env.run(ex)
            ex.finish(0 if code is None else int(code))
        except BaseException as e:  # the provider failed: say so to the model
            ex.finish(255, f"host environment '{env.name}': {type(e).__name__}: {e}")

    threading.Thread(target=body, name=f"ht-env-{env.name}-{ex.id}", daemon=True).start()


@KILL_FN
def _kill_tramp(ud, exec_id, signal):
    env = _env_of(ud)
    if env is not None:
        try:
            env.kill(int(exec_id), int(signal))
        except BaseException:
            traceback.print_exc()


@FILE_FN
def _file_tramp(ud, op_ptr):
    env = _env_of(ud)
    n = c_size_t()
    try:
        p = lib.ht_env_file_op_json(op_ptr, byref(n))
        req = json.loads(ctypes.string_at(p, n.value).decode())
        op, task, path = req["op"], req["task"], req["path"]
        if env is None:
            raise OSError(5, "host environment is gone")
        if op == "read":
            data = bytes(env.read_file(task, path))
        elif op == "write":
            p = lib.ht_env_file_op_data(op_ptr, byref(n))
            payload = ctypes.string_at(p, n.value) if n.value else b""
            env.write_file(task, path, payload, req.get("mode"))
            data = b""
        else:
            entries = [{"name": name, "is_dir": bool(is_dir)} for name, is_dir in env.list_dir(task, path)]
            data = json.dumps(entries).encode()
        lib.ht_env_file_op_respond(op_ptr, 0, data, len(data))
    except OSError as e:
        msg = (f"{e.strerror or e}" + (f": {e.filename}" if e.filename else "")).encode()
        lib.ht_env_file_op_respond(op_ptr, e.errno or 5, msg, len(msg))
    except BaseException as e:
        msg = f"{type(e).__name__}: {e}".encode()
        lib.ht_env_file_op_respond(op_ptr, 5, msg, len(msg))


@CLEANUP_FN
def _cleanup_tramp(ud, task, n):
    env = _env_of(ud)
    if env is None:
        return
    try:
        env.cleanup(ctypes.string_at(task, n).decode() if task else None)
    except BaseException:
        traceback.print_exc()


@FREE_FN
def _free_tramp(ud):
    with _live_lock:
        _live.pop(ud or 0, None)


class Environment:
    """A host-defined environment named ``name`` (what ``terminal.backend``
    names); ``location`` says where commands run in approval prompts."""

    def __init__(self, name: str, location: Optional[str] = None):
        self.name = name
        self.location = location
        self._ptr: Optional[int] = None

    # -- what a provider implements -----------------------------------------

    def run(self, exec: Exec) -> int:
        """Run ``exec.argv`` where ``exec.task``'s commands run; stream output
        with ``exec.output``; return the exit status (``-N``: killed by signal N)."""
        raise NotImplementedError

    def kill(self, exec_id: int, signal: int) -> None:
        """Signal the command ``exec_id`` and what it started."""
        raise NotImplementedError

    def cleanup(self, task: Optional[str]) -> None:
        """A task's state is dropped (``None``: the runtime closes)."""

    # Optional, all three or none: the provider's own file API.
    read_file = None  # (task, path) -> bytes
    write_file = None  # (task, path, data, mode) -> None
    list_dir = None  # (task, path) -> iterable of (name, is_dir)

    # -- plumbing -------------------------------------------------------------

    def _handle(self) -> int:
        if self._ptr is not None:
            return self._ptr
        if not available():
            raise RuntimeError("this libhermes_tools has no host-defined environments")
        with _live_lock:
            ud = _next[0]
            _next[0] += 1
            _live[ud] = self
        spec = {"name": self.name}
        if self.location:
            spec["location"] = self.location
        data = json.dumps(spec).encode()
        files = all(getattr(self, f) is not None for f in ("read_file", "write_file", "list_dir"))
        out, err = c_void_p(), c_void_p()
        st = lib.ht_environment_new(
            data,
            len(data),
            _spawn_tramp,
            _kill_tramp,
            _file_tramp if files else FILE_FN(),
            _cleanup_tramp,
            ud,
            _free_tramp,
            byref(out),
            byref(err),
        )
        if st != 0:
            with _live_lock:
                _live.pop(ud, None)
        _check(st, err)
        self._ptr = out.value
        return self._ptr

    def close(self) -> None:
        """Release the handle (runtimes created with it keep it until freed)."""
        ptr, self._ptr = self._ptr, None
        if ptr is not None:
            lib.ht_environment_free(ptr)

    def __del__(self):
        try:
            self.close()
        except BaseException:
            pass


def _handles(envs: Iterable[Environment]) -> Tuple[ctypes.Array, int]:
    hs = [e._handle() for e in envs]
    arr = (c_void_p * max(len(hs), 1))(*hs)
    return arr, len(hs)
