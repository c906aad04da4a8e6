//! `ht_call_log` and `ht_call_client_request`: a host tool talks to the MCP
//! client that made its call (crates/runtime/src/client.rs). A log message
//! goes to the client as `notifications/message` (at the level it chose);
//! a request (sampling, an elicitation form, the client's roots) is sent to
//! it while the call waits, and its result comes back as JSON. Its own
//! module so the call object's exports stay apart from the other ffi
//! modules edited in parallel.

use std::ffi::c_char;
use std::time::Duration;

use hermes_core::error::Error;
use serde_json::Value;

use crate::host::ht_call;
use crate::status::Status;
use crate::text::Text;
use crate::{ht_error, opt_str_arg, put_text, require, status_boundary, str_arg};

/// Log a message of a waiting call at `level` (`"debug"`, `"info"`,
/// `"notice"`, `"warning"`, `"error"`, `"critical"`, `"alert"`,
/// `"emergency"`): the runtime's event handler gets
/// `{"type":"tool.log","call","tool_name","tool_call_id","task_id","level","message"}`,
/// and an MCP server (`ht_runtime_serve_mcp`) sends it to the client that
/// made the call as `notifications/message` when that client asked for this
/// level or a lower one (`logging/setLevel`). Any thread, before the answer.
/// Returns `HT_STATUS_OK`, `HT_STATUS_INVALID_ARGUMENT` (NULL call or an
/// unknown level), `HT_STATUS_INVALID_UTF8`, or `HT_STATUS_NOT_FOUND` (the
/// call was answered, timed out or cancelled, or its runtime is freed).
///
/// # Safety
/// - `call` may be any value: it is an id, never dereferenced.
/// - `level` is NULL with `level_len` 0, or points at `level_len` bytes that stay readable and
///   unchanged until this returns; the same for `message` and `message_len`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_call_log(
    call: *mut ht_call,
    level: *const c_char,
    level_len: usize,
    message: *const c_char,
    message_len: usize,
) -> Status {
    crate::boundary(|| {
        if call.is_null() {
            return Status::InvalidArgument;
        }
        // SAFETY: by this export's # Safety, `(level, level_len)` is NULL/0 or level_len
        // bytes readable and unchanged until we return; the &str is copied before we return.
        let level = match unsafe { str_arg(level, level_len, "level") } {
            Ok(l) => l,
            Err(e) => return Status::from(e.kind),
        };
        // SAFETY: as for `level`, for `(message, message_len)`.
        let message = match unsafe { opt_str_arg(message, message_len, "message") } {
            Ok(m) => m.unwrap_or_default(),
            Err(e) => return Status::from(e.kind),
        };
        match hermes_runtime::client::call_log(call as u64, level, message) {
            Ok(()) => Status::Ok,
            Err(e) => Status::from(e.kind),
        }
    })
}

/// Send a request to the MCP client that made this waiting call and wait
/// for its result: `request_json` is `{"method": M, "params": {...}}` with M
/// one of `"sampling/createMessage"` (the client's model writes a
/// completion: `{"messages":[...],"maxTokens":N,...}`), `"elicitation/create"`
/// (the client asks its user to fill a form: `{"message","requestedSchema"}`)
/// or `"roots/list"`. Blocks the calling thread until the client answers, at
/// most `timeout_ms` (0: 120 s; capped at 600 s); the call's own timeout
/// still runs. On `HT_STATUS_OK` `*out_json` is the client's result
/// (`CreateMessageResult`, `ElicitResult` `{"action","content"?}`,
/// `ListRootsResult`), owned: free with `ht_string_free`.
///
/// Only calls served by `ht_runtime_serve_mcp` have a client. Errors:
/// `HT_STATUS_INVALID_ARGUMENT` (NULL call, another method, params that are
/// not an object or not the method's shape), `HT_STATUS_INVALID_JSON`,
/// `HT_STATUS_NOT_FOUND` (the call is not waiting), `HT_STATUS_UNSUPPORTED`
/// (no MCP client made the call, or the client did not declare the
/// capability: `sampling`, `elicitation`, `roots`), `HT_STATUS_TIMEOUT` (no
/// answer in time), `HT_STATUS_CANCELLED` (the call stopped waiting first:
/// its timeout, a cancel, `ht_runtime_free`; or the server stopped),
/// `HT_STATUS_INTERNAL` (the client answered with an error); the reason is
/// in `*out_err`. Never from the thread that serves the MCP
/// client (the library's own); any thread of the host's.
///
/// # Safety
/// - `call` may be any value: it is an id, never dereferenced.
/// - `request_json` is NULL with `request_len` 0, or points at `request_len` bytes that stay
///   readable and unchanged until this returns.
/// - `out_json`, `out_len`, `out_err` are each NULL or point at a writable, aligned variable of the
///   pointee type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_call_client_request(
    call: *mut ht_call,
    request_json: *const c_char,
    request_len: usize,
    timeout_ms: u64,
    out_json: *mut *mut c_char,
    out_len: *mut usize,
    out_err: *mut *mut ht_error,
) -> Status {
    status_boundary(out_err, || {
        require(call, "call")?;
        require(out_json, "out_json")?;
        // SAFETY: by this export's # Safety, `(request_json, request_len)` is NULL/0 or
        // request_len bytes readable and unchanged until we return; parsed before we return.
        let text = unsafe { str_arg(request_json, request_len, "request_json") }?;
        let v: Value =
            serde_json::from_str(text).map_err(|e| Error::json(format!("client request: {e}")))?;
        let method = v
            .get("method")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::invalid("client request: \"method\" (a string) is missing"))?;
        let params = v
            .get("params")
            .cloned()
            .unwrap_or_else(|| Value::Object(Default::default()));
        let timeout = (timeout_ms > 0).then(|| Duration::from_millis(timeout_ms));
        let out = hermes_runtime::client::client_request(call as u64, method, params, timeout)?;
        put_text(Text::new(&out), out_json, out_len);
        Ok(())
    })
}
