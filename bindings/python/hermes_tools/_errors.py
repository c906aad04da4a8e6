"""Status codes and the library's errors, below every other module of the
binding (``_runtime`` and ``_environment`` both raise them)."""

from __future__ import annotations

from ctypes import c_void_p
from typing import Optional

from . import _ffi
from ._ffi import lib

# ---------------------------------------------------------------------------
# Status codes and errors
# ---------------------------------------------------------------------------

OK = 0
INVALID_ARGUMENT = 1
INVALID_UTF8 = 2
INVALID_JSON = 3
NOT_FOUND = 4
CONFLICT = 5
CLOSED = 6
CANCELLED = 7
TIMEOUT = 8
TOOL_ERROR = 9
PANIC = 10
INTERNAL = 11
UNSUPPORTED = 12


class HermesToolsError(Exception):
    """A library call failed. ``status`` is the ``ht_status`` code, ``status_name``
    its name (``"NOT_FOUND"``...), ``message`` the library's one-line message.
    For a cancelled async dispatch, ``result`` holds the error text for the model."""

    def __init__(self, status: int, message: str, result: Optional[str] = None):
        self.status = int(status)
        self.status_name = _ffi.STATUS_NAMES.get(self.status, f"STATUS_{self.status}")
        self.message = message
        self.result = result
        super().__init__(f"{self.status_name}: {message}")


def _take_error(status: int, err: c_void_p) -> HermesToolsError:
    if err.value:
        msg_b = lib.ht_error_message(err)
        msg = msg_b.decode("utf-8", "replace") if msg_b else ""
        code = lib.ht_error_code(err)
        lib.ht_error_free(err)
        err.value = None
        return HermesToolsError(code, msg)
    return HermesToolsError(status, _ffi.STATUS_NAMES.get(status, "error").lower().replace("_", " "))


def _check(status: int, err: c_void_p) -> None:
    if status != OK:
        raise _take_error(status, err)
