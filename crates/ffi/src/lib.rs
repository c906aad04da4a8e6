//! The C ABI: the only unsafe boundary. Every exported function runs its body
//! inside [`boundary`], checks its pointers, validates UTF-8, and reports
//! problems through a status plus an optional owned `ht_error`.

#![allow(non_camel_case_types)]
// Every `unsafe` block and `unsafe impl` says why it is sound; every public
// `unsafe fn` (each export) says what its caller must guarantee.
#![warn(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]

pub mod api;
pub mod approval;
pub mod builtins;
pub mod cancel;
pub mod client;
pub mod environment;
pub mod host;
pub mod logging;
pub mod plugin;
pub mod progress;
pub mod serve;
pub mod status;
pub mod terminal;
pub mod text;

use std::ffi::{CString, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};

use hermes_core::error::{Error, ErrorKind};
pub use status::Status;

/// `ht_features()`: this build's optional parts as JSON (NUL-terminated,
/// made once, never freed). `features` names the Cargo features the library
/// was built with; `pty` and `mcp` say the same in the older shape.
pub fn features_json() -> &'static std::ffi::CStr {
    static JSON: std::sync::OnceLock<CString> = std::sync::OnceLock::new();
    JSON.get_or_init(|| {
        let mcp_client = cfg!(feature = "mcp-client");
        let https = cfg!(feature = "https");
        let mut transports = Vec::new();
        if mcp_client {
            transports.push("stdio");
            if https {
                transports.push("streamable_http");
            }
        }
        let v = serde_json::json!({
            "version": env!("CARGO_PKG_VERSION"),
            "abi": 1,
            "features": {
                "mcp-client": mcp_client,
                "mcp-server": cfg!(feature = "mcp-server"),
                "https": https,
                "pty": cfg!(feature = "pty"),
                "modal": cfg!(feature = "modal"),
            },
            "formats": ["openai", "anthropic", "mcp"],
            "hooks": ["pre_tool_call", "post_tool_call", "transform_tool_result"],
            "builtin_toolsets": ["terminal", "file", "todo", "memory", "skills", "tool_search", "code_execution"],
            "pty": cfg!(feature = "pty"),
            "sandbox": "bubblewrap",
            "bulk_registration": true,
            "mcp": {"transports": transports, "list_changed": mcp_client, "cancellation": mcp_client,
                    "serve": cfg!(feature = "mcp-server")},
            "plugins": {"abi": 1, "entry": "ht_plugin_init"},
        });
        CString::new(v.to_string()).expect("JSON has no NUL")
    })
}

/// Error details for a failed call. Owned by the caller; free with `ht_error_free`.
pub struct ht_error {
    pub(crate) status: Status,
    pub(crate) message: CString,
}

/// What an export returns when a panic is caught.
pub trait PanicDefault {
    fn panic_value() -> Self;
}
impl PanicDefault for Status {
    fn panic_value() -> Self {
        Status::Panic
    }
}
impl<T> PanicDefault for *const T {
    fn panic_value() -> Self {
        std::ptr::null()
    }
}
impl<T> PanicDefault for *mut T {
    fn panic_value() -> Self {
        std::ptr::null_mut()
    }
}
impl PanicDefault for u32 {
    fn panic_value() -> Self {
        0
    }
}
impl PanicDefault for u64 {
    fn panic_value() -> Self {
        0
    }
}
impl PanicDefault for bool {
    fn panic_value() -> Self {
        false
    }
}
impl PanicDefault for () {
    fn panic_value() -> Self {}
}

/// Run an export's body; a panic becomes the type's panic value.
pub fn boundary<R: PanicDefault>(f: impl FnOnce() -> R) -> R {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            // Formatting the payload can itself panic: guard it too.
            let _ = catch_unwind(AssertUnwindSafe(|| {
                let msg = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".into());
                tracing::error!("internal error (bug): panic at the C boundary: {msg}");
            }));
            R::panic_value()
        }
    }
}

/// Like [`boundary`] for status-returning exports with `out_err`: a panic is
/// reported as `HT_STATUS_PANIC` with an "internal error (bug)" message.
pub fn status_boundary(
    out_err: *mut *mut ht_error,
    f: impl FnOnce() -> Result<(), Error>,
) -> Status {
    let r = boundary(|| match f() {
        Ok(()) => {
            clear_err(out_err);
            Status::Ok
        }
        Err(e) => {
            let s = Status::from(e.kind);
            set_err(out_err, e);
            s
        }
    });
    if r == Status::Panic {
        set_err(
            out_err,
            Error::new(
                ErrorKind::Panic,
                "internal error (bug): a panic was caught; please report it",
            ),
        );
    }
    r
}

/// Set `*out_err` to NULL. `out_err` must be NULL or valid for a pointer
/// write: every caller passes the `out_err` parameter of an export, which the
/// C contract requires to be NULL or to point at an `ht_error *` variable.
pub(crate) fn clear_err(out_err: *mut *mut ht_error) {
    if !out_err.is_null() {
        // SAFETY: non-NULL, so by the export's contract (see above) it points
        // at a writable, aligned `ht_error *`; we overwrite it without reading
        // or freeing the old value, which the header says is ignored.
        unsafe { *out_err = std::ptr::null_mut() };
    }
}

/// Store an owned `ht_error` in `*out_err`. Same pointer contract as [`clear_err`].
pub(crate) fn set_err(out_err: *mut *mut ht_error, e: Error) {
    if out_err.is_null() {
        return;
    }
    let message = CString::new(e.message.replace('\0', "\\0")).unwrap_or_default();
    let b = Box::new(ht_error {
        status: Status::from(e.kind),
        message,
    });
    // SAFETY: non-NULL (checked above), so by the export's contract it points
    // at a writable, aligned `ht_error *`. The Box's ownership moves to the
    // host, who frees it once with ht_error_free (Box::from_raw there).
    unsafe { *out_err = Box::into_raw(b) };
}

/// Borrow a `(ptr, len)` UTF-8 input. NULL is allowed only with `len == 0`.
///
/// # Safety
/// If `ptr` is not NULL it must point at `len` initialised bytes that stay
/// readable and unmodified for `'a` (in practice: the export's call, since
/// every caller uses the borrow only before returning to the host).
pub(crate) unsafe fn str_arg<'a>(
    ptr: *const c_char,
    len: usize,
    what: &str,
) -> Result<&'a str, Error> {
    if ptr.is_null() {
        if len == 0 {
            return Ok("");
        }
        return Err(Error::invalid(format!(
            "{what} is NULL but its length is {len}"
        )));
    }
    // SAFETY: `ptr` is non-NULL (checked above) and, by this function's
    // contract, points at `len` readable bytes that live and stay unchanged
    // for 'a; being one allocation they cannot exceed isize::MAX bytes, and
    // u8 needs no alignment. UTF-8 is validated below before we hand out a str.
    let bytes = unsafe { std::slice::from_raw_parts(ptr as *const u8, len) };
    std::str::from_utf8(bytes).map_err(|e| {
        Error::new(
            ErrorKind::InvalidUtf8,
            format!(
                "{what} is not valid UTF-8 (invalid byte at offset {})",
                e.valid_up_to()
            ),
        )
    })
}

/// Like [`str_arg`] but NULL means "not given".
///
/// # Safety
/// As for [`str_arg`].
pub(crate) unsafe fn opt_str_arg<'a>(
    ptr: *const c_char,
    len: usize,
    what: &str,
) -> Result<Option<&'a str>, Error> {
    if ptr.is_null() && len == 0 {
        return Ok(None);
    }
    // SAFETY: our caller gives the same guarantee about `(ptr, len)` that
    // str_arg requires.
    unsafe { str_arg(ptr, len, what) }.map(Some)
}

/// Write a library string to `(out, out_len)`. `out` must be valid for a
/// pointer write and `out_len` NULL or valid for a `usize` write: every caller
/// passes its export's out-parameters after `require(out, ..)` rejected a NULL
/// `out`, and the C contract makes non-NULL out-parameters writable.
pub(crate) fn put_text(text: crate::text::Text, out: *mut *mut c_char, out_len: *mut usize) {
    let (p, n) = text.into_raw();
    // SAFETY: `out` is non-NULL (the callers checked it with `require`) and
    // `out_len` is written only when non-NULL; by the export's contract both
    // point at writable, aligned variables of the host. The reference that
    // `into_raw` released is now the host's, freed by ht_string_free.
    unsafe {
        *out = p;
        if !out_len.is_null() {
            *out_len = n;
        }
    }
}

pub(crate) fn require<T>(p: *const T, what: &str) -> Result<(), Error> {
    if p.is_null() {
        Err(Error::invalid(format!("{what} is NULL")))
    } else {
        Ok(())
    }
}
