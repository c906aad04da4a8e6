"""Low-level ctypes declarations for libhermes_tools (the C ABI in hermes_tools.h).

Everything here mirrors the header one to one. Pointers to opaque objects and
to library-owned strings are ``c_void_p`` so that we can read them with an
exact length (``ctypes.string_at(p, n)``) and give them back to
``ht_string_free``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from ctypes import (
    CFUNCTYPE,
    POINTER,
    c_bool,
    c_char_p,
    c_double,
    c_int32,
    c_size_t,
    c_uint32,
    c_uint64,
    c_void_p,
)
from pathlib import Path

#: The ABI this binding was written for (``HT_ABI_VERSION`` in the header).
ABI_VERSION = 1

# ht_status values (append-only in the header).
STATUS_NAMES = {
    0: "OK",
    1: "INVALID_ARGUMENT",
    2: "INVALID_UTF8",
    3: "INVALID_JSON",
    4: "NOT_FOUND",
    5: "CONFLICT",
    6: "CLOSED",
    7: "CANCELLED",
    8: "TIMEOUT",
    9: "TOOL_ERROR",
    10: "PANIC",
    11: "INTERNAL",
    12: "UNSUPPORTED",
}

# Callback types. user_data arrives as an int (or None for 0).
HANDLER_FN = CFUNCTYPE(None, c_void_p, c_void_p)  # (user_data, ht_call*)
CHECK_FN = CFUNCTYPE(c_bool, c_void_p)  # (user_data) -> bool
FREE_FN = CFUNCTYPE(None, c_void_p)  # (user_data)
COMPLETION_FN = CFUNCTYPE(None, c_void_p, c_int32, c_void_p, c_size_t)
HOOK_FN = CFUNCTYPE(None, c_void_p, c_void_p)  # (user_data, ht_hook*)
EVENT_FN = CFUNCTYPE(None, c_void_p, c_void_p, c_size_t)
LOG_FN = CFUNCTYPE(None, c_void_p, c_int32, c_void_p, c_size_t)
APPROVAL_FN = CFUNCTYPE(None, c_void_p, c_void_p)  # (user_data, ht_approval*)
CANCEL_FN = CFUNCTYPE(None, c_void_p, c_void_p)  # (user_data, ht_call*)

_P = POINTER(c_void_p)
_SZ = POINTER(c_size_t)

# name: (restype, argtypes). Every function of the header.
_SIGNATURES = {
    "ht_abi_version": (c_uint32, []),
    "ht_version": (c_char_p, []),
    "ht_features": (c_char_p, []),
    "ht_runtime_new": (c_int32, [c_char_p, c_size_t, _P, _P]),
    "ht_runtime_free": (None, [c_void_p]),
    "ht_runtime_register_tool": (
        c_int32,
        [c_void_p, c_char_p, c_size_t, HANDLER_FN, CHECK_FN, c_void_p, FREE_FN, _P],
    ),
    "ht_runtime_deregister_tool": (c_int32, [c_void_p, c_char_p, c_size_t, _P]),
    "ht_runtime_define_toolset": (c_int32, [c_void_p, c_char_p, c_size_t, _P]),
    "ht_runtime_alias_toolset": (
        c_int32,
        [c_void_p, c_char_p, c_size_t, c_char_p, c_size_t, _P],
    ),
    "ht_runtime_toolsets_json": (c_int32, [c_void_p, _P, _SZ, _P]),
    "ht_runtime_generation": (c_uint64, [c_void_p]),
    "ht_runtime_invalidate_availability": (c_int32, [c_void_p]),
    "ht_runtime_definitions_json": (c_int32, [c_void_p, c_char_p, c_size_t, _P, _SZ, _P]),
    "ht_runtime_dispatch": (
        c_int32,
        [c_void_p, c_char_p, c_size_t, c_char_p, c_size_t, c_char_p, c_size_t, _P, _SZ, _P],
    ),
    "ht_runtime_dispatch_async": (
        c_int32,
        [
            c_void_p,
            c_char_p,
            c_size_t,
            c_char_p,
            c_size_t,
            c_char_p,
            c_size_t,
            COMPLETION_FN,
            c_void_p,
            POINTER(c_uint64),
            _P,
        ],
    ),
    "ht_runtime_cancel": (c_int32, [c_void_p, c_uint64, _P]),
    "ht_runtime_dispatch_batch": (
        c_int32,
        [c_void_p, c_char_p, c_size_t, c_char_p, c_size_t, _P, _SZ, _P],
    ),
    "ht_call_args_json": (c_void_p, [c_void_p, _SZ]),
    "ht_call_context_json": (c_void_p, [c_void_p, _SZ]),
    "ht_call_tool_name": (c_void_p, [c_void_p, _SZ]),
    "ht_call_respond": (c_int32, [c_void_p, c_bool, c_char_p, c_size_t]),
    "ht_runtime_add_hook": (
        c_int32,
        [c_void_p, c_char_p, c_size_t, HOOK_FN, c_void_p, FREE_FN, _P],
    ),
    "ht_hook_event_json": (c_void_p, [c_void_p, _SZ]),
    "ht_hook_respond": (c_int32, [c_void_p, c_char_p, c_size_t]),
    "ht_runtime_set_event_handler": (c_int32, [c_void_p, EVENT_FN, c_void_p, FREE_FN, _P]),
    "ht_runtime_cleanup_task": (c_int32, [c_void_p, c_char_p, c_size_t, _P]),
    "ht_command_check": (c_int32, [c_void_p, c_char_p, c_size_t, _P, _SZ, _P]),
    "ht_set_log_handler": (c_int32, [LOG_FN, c_int32, c_void_p, FREE_FN]),
    "ht_string_free": (None, [c_void_p]),
    "ht_error_code": (c_int32, [c_void_p]),
    "ht_error_message": (c_char_p, [c_void_p]),
    "ht_error_free": (None, [c_void_p]),
}

# The approval round trip (bound when the loaded library exports it, so the
# binding still loads against an older build of the same ABI).
_OPTIONAL_SIGNATURES = {
    "ht_runtime_set_approval_handler": (c_int32, [c_void_p, APPROVAL_FN, c_void_p, FREE_FN, _P]),
    "ht_runtime_set_approval_reviewer": (c_int32, [c_void_p, APPROVAL_FN, c_void_p, FREE_FN, _P]),
    "ht_approval_request_json": (c_void_p, [c_void_p, _SZ]),
    "ht_approval_respond": (c_int32, [c_void_p, c_char_p, c_size_t]),
    "ht_runtime_allowlist_json": (c_int32, [c_void_p, _P, _SZ, _P]),
    "ht_runtime_allowlist_set": (c_int32, [c_void_p, c_char_p, c_size_t, _P]),
    "ht_runtime_clear_session_approvals": (c_int32, [c_void_p, c_char_p, c_size_t, _P]),
    "ht_runtime_set_interceptor": (c_int32, [c_void_p, HANDLER_FN, c_void_p, FREE_FN, _P]),
    "ht_call_on_cancel": (c_int32, [c_void_p, CANCEL_FN, c_void_p, FREE_FN]),
    "ht_call_is_cancelled": (c_bool, [c_void_p]),
    "ht_call_progress": (c_int32, [c_void_p, c_double, c_double, c_char_p, c_size_t]),
    "ht_call_log": (c_int32, [c_void_p, c_char_p, c_size_t, c_char_p, c_size_t]),
    "ht_call_client_request": (c_int32, [c_void_p, c_char_p, c_size_t, c_uint64, _P, _SZ, _P]),
    "ht_runtime_serve_mcp": (c_int32, [c_void_p, c_char_p, c_size_t, _P, _P]),
    "ht_runtime_mcp_status": (c_int32, [c_void_p, _P, _SZ, _P]),
    "ht_runtime_add_mcp_server": (c_int32, [c_void_p, c_char_p, c_size_t, c_char_p, c_size_t, _P]),
    "ht_runtime_remove_mcp_server": (c_int32, [c_void_p, c_char_p, c_size_t, _P]),
    "ht_runtime_set_oauth_handler": (c_int32, [c_void_p, APPROVAL_FN, c_void_p, FREE_FN, _P]),
    "ht_mcp_server_address": (c_char_p, [c_void_p]),
    "ht_mcp_server_wait": (c_int32, [c_void_p, c_uint64, _P]),
    "ht_mcp_server_free": (None, [c_void_p]),
}


def _candidates() -> list[str]:
    env = os.environ.get("HERMES_TOOLS_LIB")
    if env:
        return [env]
    out = []
    here = Path(__file__).resolve()
    # The copy an installed wheel bundles (bindings/python/setup.py): built
    # together with this binding, so it comes before any other library.
    bundled = here.with_name("libhermes_tools.so")
    if bundled.exists():
        out.append(str(bundled))
    # bindings/python/hermes_tools/_ffi.py -> repo root is parents[3]
    # A source checkout only (never the current directory: a planted
    # target/debug/libhermes_tools.so there would run its constructor).
    for root in (here.parents[3],):
        for profile in ("debug", "release"):
            p = root / "target" / profile / "libhermes_tools.so"
            if p.exists():
                out.append(str(p))
    found = ctypes.util.find_library("hermes_tools")
    if found:
        out.append(found)
    out.append("libhermes_tools.so")
    return out


class LibraryLoadError(ImportError):
    """The shared library could not be found, or has the wrong ABI."""


def _load() -> ctypes.CDLL:
    errors = []
    lib = None
    for path in _candidates():
        try:
            # CDLL (not PyDLL): the GIL is released during every foreign call,
            # so library threads can run Python callbacks while we wait.
            lib = ctypes.CDLL(path)
            break
        except OSError as e:
            errors.append(f"{path}: {e}")
    if lib is None:
        raise LibraryLoadError(
            "hermes_tools: cannot load libhermes_tools.so (set HERMES_TOOLS_LIB "
            "or run `cargo build`): " + "; ".join(errors)
        )
    lib.ht_abi_version.restype = c_uint32
    lib.ht_abi_version.argtypes = []
    got = lib.ht_abi_version()
    if got != ABI_VERSION:
        raise LibraryLoadError(
            f"hermes_tools: ABI mismatch: this binding needs ABI {ABI_VERSION} but "
            f"{getattr(lib, '_name', '?')} has ABI {got}; rebuild the library or "
            "use a matching binding"
        )
    for name, (res, args) in _SIGNATURES.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
    for name, (res, args) in _OPTIONAL_SIGNATURES.items():
        fn = getattr(lib, name, None)
        if fn is not None:
            fn.restype = res
            fn.argtypes = args
    return lib


lib = _load()


def has(name: str) -> bool:
    """Whether the loaded library exports ``name``."""
    return getattr(lib, name, None) is not None
