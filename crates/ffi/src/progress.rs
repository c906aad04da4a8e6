//! `ht_call_progress`: a host tool reports how far it got. The report reaches
//! the runtime's event handler as a `tool.progress` event (which an MCP
//! server forwards as a progress notification). Its own module so the call
//! object's exports stay apart from the other ffi modules edited in parallel.

use std::ffi::c_char;

use crate::host::ht_call;
use crate::status::Status;
use crate::{boundary, opt_str_arg};

/// Report progress of a waiting call: the runtime's event handler gets
/// `{"type":"tool.progress","call":<this handle as an integer>,"tool_name",
/// "tool_call_id","task_id","progress_token"?,"progress","total"?,"message"?}`
/// (queued, on the callback thread; dropped without an event handler).
/// `total` is left out when it is not a positive finite number (unknown).
/// `message` (copied; may be NULL/0) is optional text for a person.
/// Any thread, any number of times before the answer. Returns
/// `HT_STATUS_OK`, `HT_STATUS_INVALID_ARGUMENT` (NULL call, non-finite
/// `progress`), `HT_STATUS_INVALID_UTF8`, or `HT_STATUS_NOT_FOUND` (the call
/// was answered, timed out or cancelled, or its runtime is freed).
///
/// # Safety
/// - `call` may be any value: it is an id, never dereferenced.
/// - `message` is NULL with `message_len` 0, or points at `message_len` bytes that stay readable
///   and unchanged until this returns.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_call_progress(
    call: *mut ht_call,
    progress: f64,
    total: f64,
    message: *const c_char,
    message_len: usize,
) -> Status {
    boundary(|| {
        if call.is_null() {
            return Status::InvalidArgument;
        }
        // SAFETY: by this export's # Safety, `(message, message_len)` is NULL/0 or message_len
        // bytes readable and unchanged until we return; the &str is copied before we return.
        let message = match unsafe { opt_str_arg(message, message_len, "message") } {
            Ok(m) => m,
            Err(e) => return Status::from(e.kind),
        };
        let total = (total.is_finite() && total > 0.0).then_some(total);
        match hermes_runtime::progress::call_progress(call as u64, progress, total, message) {
            Ok(()) => Status::Ok,
            Err(e) => Status::from(e.kind),
        }
    })
}
