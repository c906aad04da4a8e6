//! C functions for command approval: the host's approval handler and smart
//! reviewer, the `ht_approval` object, and the persistent allowlist.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use super::api::{answer_decision, borrow_field, ht_free_fn, ht_runtime, rt_ref};
use super::{boundary, ht_error, put_text, require, status_boundary, str_arg};
use crate::host::{HostApproval, HostData, ht_approval};
use crate::status::Status;
use crate::text::Text;
use hermes_approval::AllowEntry;
use hermes_core::error::{Error, ErrorKind};
use hermes_core::pending::{Field, Kind};

/// An approval request for the host: read it with `ht_approval_request_json`,
/// answer it once (any thread, now or later) with `ht_approval_respond`.
pub type ht_approval_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, approval: *mut ht_approval)>;

/// Which host sink a setter replaces.
#[derive(Clone, Copy)]
enum Which {
    Handler,
    Reviewer,
    Sampler,
    OAuth,
}

/// Install or remove an approval sink. `rt` and `out_err` are the exports'
/// parameters, under their `# Safety` (NULL or a live runtime; NULL or writable).
fn set_sink(
    rt: *mut ht_runtime,
    which: Which,
    f: ht_approval_fn,
    user_data: *mut c_void,
    free_user_data: ht_free_fn,
    out_err: *mut *mut ht_error,
) -> Status {
    status_boundary(out_err, || {
        // SAFETY: `rt` is NULL (rt_ref rejects it) or, by the calling export's # Safety, a live
        // runtime that no thread frees before we return.
        let rt = unsafe { rt_ref(rt) }?;
        let sink = f.map(|func| {
            let data = HostData::new(user_data, free_user_data, rt.core().callbacks.clone());
            data.arm();
            Arc::new(HostApproval { func, data }) as Arc<dyn hermes_runtime::ApprovalSink>
        });
        match which {
            Which::Sampler => rt.set_sampling_sink(sink),
            Which::OAuth => rt.set_oauth_sink(sink),
            _ => rt.set_approval_sink(matches!(which, Which::Reviewer), sink),
        }
    })
}

/// Set (or with NULL `approval_fn`, remove) the handler asked when a command
/// needs approval. It runs on the callback thread; the command waits (up to
/// `approvals.timeout` seconds, then it is denied). Answer with
/// `{"choice":"once"|"session"|"always"|"deny","scope"?:[...]}`. Without a
/// handler, `ask` commands are denied unless `approvals.non_interactive` is
/// `"allow"`. `free_user_data` runs exactly once when the handler is replaced
/// or the runtime is freed.
///
/// # Safety
/// - `rt` is NULL or a runtime from `ht_runtime_new` that no thread frees before this returns.
/// - `out_err` is NULL or points at a writable, aligned variable of the pointee type.
/// - `approval_fn`, `free_user_data` are each NULL or a function of the declared type that does not
///   unwind. They are called with `user_data` on library threads (see Thread safety at the top of
///   the header), so `user_data` must stay usable from any thread until `free_user_data` has run.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_runtime_set_approval_handler(
    rt: *mut ht_runtime,
    approval_fn: ht_approval_fn,
    user_data: *mut c_void,
    free_user_data: ht_free_fn,
    out_err: *mut *mut ht_error,
) -> Status {
    boundary(|| {
        set_sink(
            rt,
            Which::Handler,
            approval_fn,
            user_data,
            free_user_data,
            out_err,
        )
    })
}

/// Set (or remove) the smart reviewer (`approvals.mode = "smart"`): it is asked
/// first with the structured analysis and the raw text marked as untrusted
/// data, and answers `{"decision":"approve"|"deny"|"escalate"}`; anything
/// unreadable escalates to the approval handler. It can never allow a
/// `block`-tier command. Same threading and lifetime rules as the handler.
///
/// # Safety
/// - `rt` is NULL or a runtime from `ht_runtime_new` that no thread frees before this returns.
/// - `out_err` is NULL or points at a writable, aligned variable of the pointee type.
/// - `reviewer_fn`, `free_user_data` are each NULL or a function of the declared type that does not
///   unwind. They are called with `user_data` on library threads (see Thread safety at the top of
///   the header), so `user_data` must stay usable from any thread until `free_user_data` has run.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_runtime_set_approval_reviewer(
    rt: *mut ht_runtime,
    reviewer_fn: ht_approval_fn,
    user_data: *mut c_void,
    free_user_data: ht_free_fn,
    out_err: *mut *mut ht_error,
) -> Status {
    boundary(|| {
        set_sink(
            rt,
            Which::Reviewer,
            reviewer_fn,
            user_data,
            free_user_data,
            out_err,
        )
    })
}

/// Set (or with NULL `sampling_fn`, remove) the handler that answers MCP
/// servers' sampling requests (`sampling/createMessage`: a server asks the
/// host's model for a completion). Each request is an `ht_approval` object
/// whose JSON is `{"kind":"sampling","server":NAME,"params":{messages,
/// systemPrompt, maxTokens (capped by the server's
/// `sampling.max_tokens_cap`), temperature, modelPreferences, ...},
/// "timeout_s":N}`; answer it once with `ht_approval_respond` and an MCP
/// `CreateMessageResult` (`{"role":"assistant","content":{"type":"text",
/// "text":...},"model":...,"stopReason":...}`) or `{"error":"reason"}` to
/// refuse. Without a handler, or after `timeout_s` (the server's
/// `sampling.timeout`), the server gets an error. Servers are limited to
/// `sampling.max_rpm` requests a minute. Same threading and lifetime rules
/// as the approval handler. (Elicitation requests, `elicitation/create`,
/// go to the approval handler: see `ht_approval_request_json`.)
///
/// # Safety
/// - `rt` is NULL or a runtime from `ht_runtime_new` that no thread frees before this returns.
/// - `out_err` is NULL or points at a writable, aligned variable of the pointee type.
/// - `sampling_fn`, `free_user_data` are each NULL or a function of the declared type that does not
///   unwind. They are called with `user_data` on library threads (see Thread safety at the top of
///   the header), so `user_data` must stay usable from any thread until `free_user_data` has run.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_runtime_set_sampling_handler(
    rt: *mut ht_runtime,
    sampling_fn: ht_approval_fn,
    user_data: *mut c_void,
    free_user_data: ht_free_fn,
    out_err: *mut *mut ht_error,
) -> Status {
    boundary(|| {
        set_sink(
            rt,
            Which::Sampler,
            sampling_fn,
            user_data,
            free_user_data,
            out_err,
        )
    })
}

/// Set (or with NULL `oauth_fn`, remove) the host's OAuth handler: the
/// browser step of an MCP HTTP server's OAuth 2.1 authorization (the runtime
/// does discovery, client registration, PKCE, token requests and refresh).
/// Each request is an `ht_approval` object; read its JSON with
/// `ht_approval_request_json` and answer it once with `ht_approval_respond`:
///
/// - `{"kind":"oauth_authorize","server":NAME,"authorization_url":URL,
///   "redirect_uri":URI,"scopes":[...],"step_up":bool,"timeout_s":N}`: show
///   the user `authorization_url` (open a browser); when the authorization
///   server sends the browser to `redirect_uri`, answer
///   `{"redirect_url":"<the full URL it was sent to>"}` (or
///   `{"code":"..."}`), or `{"error":"reason"}` to give up. A redirect to
///   another address, with an `error`, or with a `state` other than the one
///   issued is refused. No answer within `timeout_s` (the server's
///   `oauth.timeout`, default 300) fails the authorization.
/// - Only for servers with `"oauth": {"token_store": "host"}`:
///   `{"kind":"oauth_tokens_load","server":NAME}` (answer
///   `{"tokens":<what was saved>}` or `{"tokens":null}`),
///   `{"kind":"oauth_tokens_save","server":NAME,"tokens":{...}}` (keep the
///   object as it is, secret; answer `{}`) and
///   `{"kind":"oauth_tokens_clear","server":NAME}` (answer `{}`); answer
///   `{"error":"reason"}` when the store fails. Other servers keep their
///   tokens in a file only the user can read (`oauth.token_dir`).
///
/// The request JSON of `oauth_tokens_save` holds secrets: never log it.
/// Without a handler, a server that requires authorization fails with the
/// reason (`ht_runtime_mcp_status`). Same threading and lifetime rules as
/// the approval handler: called on the callback thread, answered from any
/// thread; `free_user_data` runs exactly once when the handler is replaced
/// or the runtime is freed.
///
/// # Safety
/// - `rt` is NULL or a runtime from `ht_runtime_new` that no thread frees before this returns.
/// - `out_err` is NULL or points at a writable, aligned variable of the pointee type.
/// - `oauth_fn`, `free_user_data` are each NULL or a function of the declared type that does not
///   unwind. They are called with `user_data` on library threads (see Thread safety at the top of
///   the header), so `user_data` must stay usable from any thread until `free_user_data` has run.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_runtime_set_oauth_handler(
    rt: *mut ht_runtime,
    oauth_fn: ht_approval_fn,
    user_data: *mut c_void,
    free_user_data: ht_free_fn,
    out_err: *mut *mut ht_error,
) -> Status {
    boundary(|| {
        set_sink(
            rt,
            Which::OAuth,
            oauth_fn,
            user_data,
            free_user_data,
            out_err,
        )
    })
}

/// The request (JSON object: `kind` "approval" or "review", `verdict`,
/// `rules`, `reasons`, `commands`, `untrusted_command_text` (secrets
/// redacted), `suggested_scope`, `choices`, `session_id`, `task_id`,
/// `tool_call_id`, `timeout_s`). Borrowed: valid until `ht_approval_respond`.
/// Two other kinds reach the approval handler's objects: `"elicitation"`
/// (an MCP server asks the user for input: `server`, `message`,
/// `requested_schema`, `choices` ["once","deny"]; answer
/// `{"choice":"once","content":{...}}` to accept with the user's values,
/// `{"choice":"deny"}` to decline; no answer cancels) and, for the sampling
/// handler, `"sampling"` (see `ht_runtime_set_sampling_handler`).
/// Not NUL-terminated: use `*out_len`. NULL for an answered or unknown request.
///
/// # Safety
/// - `approval` may be any value: it is an id, never dereferenced.
/// - `out_len` is NULL or points at a writable, aligned variable of the pointee type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_approval_request_json(
    approval: *const ht_approval,
    out_len: *mut usize,
) -> *const c_char {
    boundary(|| borrow_field(approval as u64, Kind::Approval, Field::Payload, out_len))
}

/// Answer an approval request exactly once (any thread); frees it. An
/// unreadable answer is a deny (for the reviewer: escalate). A second answer
/// gives `HT_STATUS_NOT_FOUND`; an answer after the wait ended (timeout:
/// already denied) gives `HT_STATUS_TIMEOUT` (`HT_STATUS_CANCELLED` when it
/// ended by `ht_runtime_free`).
///
/// # Safety
/// - `approval` may be any value: it is an id, never dereferenced.
/// - `decision_json` is NULL with `len` 0, or points at `len` bytes that stay readable and
///   unchanged until this returns.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_approval_respond(
    approval: *mut ht_approval,
    decision_json: *const c_char,
    len: usize,
) -> Status {
    boundary(|| answer_decision(approval as u64, Kind::Approval, decision_json, len))
}

/// The persistent allowlist (`always` answers) as a JSON array of
/// `{"rule","argv_prefix":[...],"exact","added_at","note"}`. `*out_json` is
/// owned: free with `ht_string_free`.
///
/// # Safety
/// - `rt` is NULL or a runtime from `ht_runtime_new` that no thread frees before this returns.
/// - `out_json`, `out_len`, `out_err` are each NULL or point at a writable, aligned variable of the
///   pointee type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_runtime_allowlist_json(
    rt: *mut ht_runtime,
    out_json: *mut *mut c_char,
    out_len: *mut usize,
    out_err: *mut *mut ht_error,
) -> Status {
    status_boundary(out_err, || {
        // SAFETY: `rt` is NULL (rt_ref rejects it) or, by this export's # Safety, a live runtime
        // that no thread frees before we return.
        let rt = unsafe { rt_ref(rt) }?;
        require(out_json, "out_json")?;
        let list = rt.services().policy.allowlist();
        let s = serde_json::to_string(&list)
            .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?;
        put_text(Text::new(&s), out_json, out_len);
        Ok(())
    })
}

/// Replace the allowlist with a JSON array in the shape of
/// `ht_runtime_allowlist_json` (entries are validated: no bare shells,
/// interpreters or privilege wrappers) and save it atomically to
/// `approvals.allowlist_path` when one is configured.
///
/// # Safety
/// - `rt` is NULL or a runtime from `ht_runtime_new` that no thread frees before this returns.
/// - `allowlist_json` is NULL with `len` 0, or points at `len` bytes that stay readable and
///   unchanged until this returns.
/// - `out_err` is NULL or points at a writable, aligned variable of the pointee type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_runtime_allowlist_set(
    rt: *mut ht_runtime,
    allowlist_json: *const c_char,
    len: usize,
    out_err: *mut *mut ht_error,
) -> Status {
    status_boundary(out_err, || {
        // SAFETY: `rt` is NULL (rt_ref rejects it) or, by this export's # Safety, a live runtime
        // that no thread frees before we return.
        let rt = unsafe { rt_ref(rt) }?;
        // SAFETY: by this export's # Safety, `(allowlist_json, len)` is NULL/0 or len bytes
        // readable and unchanged until we return; the &str is not kept past the call (what is kept
        // is copied).
        let text = unsafe { str_arg(allowlist_json, len, "allowlist_json") }?;
        let entries: Vec<AllowEntry> = hermes_core::error::parse_json("allowlist", text)?;
        rt.services()
            .policy
            .set_allowlist(entries)
            .map_err(|e| Error::invalid(format!("allowlist: {e}")))
    })
}

/// Forget the `session` approvals given in `session_id`.
///
/// # Safety
/// - `rt` is NULL or a runtime from `ht_runtime_new` that no thread frees before this returns.
/// - `session_id` is NULL with `session_id_len` 0, or points at `session_id_len` bytes that stay
///   readable and unchanged until this returns.
/// - `out_err` is NULL or points at a writable, aligned variable of the pointee type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_runtime_clear_session_approvals(
    rt: *mut ht_runtime,
    session_id: *const c_char,
    session_id_len: usize,
    out_err: *mut *mut ht_error,
) -> Status {
    status_boundary(out_err, || {
        // SAFETY: `rt` is NULL (rt_ref rejects it) or, by this export's # Safety, a live runtime
        // that no thread frees before we return.
        let rt = unsafe { rt_ref(rt) }?;
        // SAFETY: by this export's # Safety, `(session_id, session_id_len)` is NULL/0 or
        // session_id_len bytes readable and unchanged until we return; the &str is not kept past
        // the call (what is kept is copied).
        let s = unsafe { str_arg(session_id, session_id_len, "session_id") }?;
        rt.services().policy.clear_session(s);
        Ok(())
    })
}
