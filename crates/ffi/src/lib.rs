//! The C ABI: the only unsafe boundary. Every exported function runs its body
//! inside [`boundary`], checks its pointers, validates UTF-8, and reports
//! problems through a status plus an optional owned `ht_error`.

#![allow(non_camel_case_types)]

pub mod api;
pub mod approval;
pub mod builtins;
pub mod host;
pub mod logging;
pub mod status;
pub mod terminal;
pub mod text;

use std::ffi::{CString, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};

use hermes_core::error::{Error, ErrorKind};
pub use status::Status;

/// `ht_features()`: static JSON, NUL-terminated.
pub const FEATURES_JSON: &str = concat!(
    r#"{"version":""#,
    env!("CARGO_PKG_VERSION"),
    r#"","abi":1,"formats":["openai","anthropic","mcp"],"hooks":["pre_tool_call","post_tool_call","transform_tool_result"],"builtin_toolsets":["terminal","file","todo","memory","skills"],"pty":true,"sandbox":"bubblewrap","bulk_registration":true}"#,
    "\0"
);

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

pub(crate) fn clear_err(out_err: *mut *mut ht_error) {
    if !out_err.is_null() {
        unsafe { *out_err = std::ptr::null_mut() };
    }
}

pub(crate) fn set_err(out_err: *mut *mut ht_error, e: Error) {
    if out_err.is_null() {
        return;
    }
    let message = CString::new(e.message.replace('\0', "\\0")).unwrap_or_default();
    let b = Box::new(ht_error {
        status: Status::from(e.kind),
        message,
    });
    unsafe { *out_err = Box::into_raw(b) };
}

/// Borrow a `(ptr, len)` UTF-8 input. NULL is allowed only with `len == 0`.
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
pub(crate) unsafe fn opt_str_arg<'a>(
    ptr: *const c_char,
    len: usize,
    what: &str,
) -> Result<Option<&'a str>, Error> {
    if ptr.is_null() && len == 0 {
        return Ok(None);
    }
    unsafe { str_arg(ptr, len, what) }.map(Some)
}

/// Write a library string to `(out, out_len)`.
pub(crate) fn put_text(text: crate::text::Text, out: *mut *mut c_char, out_len: *mut usize) {
    let (p, n) = text.into_raw();
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
