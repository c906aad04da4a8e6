//! C functions for the built-in `terminal` toolset: type into a running
//! command, and per-task working directory and environment overrides.

use std::ffi::c_char;
use std::sync::Arc;

use super::api::{ht_runtime, rt_ref};
use super::{ht_error, status_boundary, str_arg};
use crate::status::Status;
use hermes_builtins::terminal::Terminal;
use hermes_core::error::{Error, ErrorKind};
use hermes_runtime::Runtime;

fn terminal_of(rt: &Runtime) -> Result<Arc<Terminal>, Error> {
    if rt.is_closed() {
        return Err(Error::closed());
    }
    rt.terminal().cloned().ok_or_else(|| {
        Error::new(
            ErrorKind::Unsupported,
            "the terminal toolset is not enabled (add \"terminal\" to builtin_toolsets)",
        )
    })
}

/// Type into a running command: `id` is a background process id
/// (`"proc_..."` from `terminal(background=true)`) or the `tool_call_id` of a
/// foreground command that runs with `pty=true` (the `id` of its
/// `terminal.started` / `terminal.output` events). `data` is `data_len` raw
/// bytes (not NUL-terminated, need not be UTF-8; send `"\r"` for Enter on a
/// PTY); NULL is allowed only with `data_len == 0`. Only PTY commands have an
/// input (pipe-mode stdin is /dev/null so commands can never wait on it):
/// others give `HT_STATUS_INVALID_ARGUMENT`; an unknown or finished id gives
/// `HT_STATUS_NOT_FOUND`; without the terminal toolset
/// `HT_STATUS_UNSUPPORTED`. `*out_written` (NULL ok) receives the bytes
/// written. Any thread; blocks at most 5 s when the command is not reading.
///
/// # Safety
/// - `rt` is NULL or a runtime from `ht_runtime_new` that no thread frees before this returns.
/// - Each of `id`, `data` is NULL with its length 0, or points at that many bytes that stay
///   readable and unchanged until this returns.
/// - `out_written`, `out_err` are each NULL or point at a writable, aligned variable of the pointee
///   type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_runtime_process_write(
    rt: *mut ht_runtime,
    id: *const c_char,
    id_len: usize,
    data: *const c_char,
    data_len: usize,
    out_written: *mut usize,
    out_err: *mut *mut ht_error,
) -> Status {
    status_boundary(out_err, || {
        // SAFETY: `rt` is NULL (rt_ref rejects it) or, by this export's # Safety, a live runtime
        // that no thread frees before we return.
        let rt = unsafe { rt_ref(rt) }?;
        // SAFETY: by this export's # Safety, `(id, id_len)` is NULL/0 or id_len bytes readable and
        // unchanged until we return; the &str is not kept past the call (what is kept is copied).
        let id = unsafe { str_arg(id, id_len, "id") }?;
        if data.is_null() && data_len != 0 {
            return Err(Error::invalid(format!(
                "data is NULL but its length is {data_len}"
            )));
        }
        let bytes: &[u8] = if data_len == 0 {
            &[]
        } else {
            // SAFETY: `data_len` > 0 here, so `data` is non-NULL (checked above) and, by this
            // export's # Safety, points at `data_len` bytes readable and unchanged until we return;
            // u8 needs no alignment and write_input copies what it keeps.
            unsafe { std::slice::from_raw_parts(data as *const u8, data_len) }
        };
        let n = terminal_of(rt)?.write_input(id, bytes)?;
        if !out_written.is_null() {
            // SAFETY: non-NULL (checked above); by this export's # Safety it points at a writable
            // size_t.
            unsafe { *out_written = n };
        }
        Ok(())
    })
}

/// Set the working directory of a task (`task_id` from the dispatch context;
/// `""` is the default task). `cwd` must be an absolute path to an existing
/// directory (`~` is expanded). The next command of the task starts there;
/// a `cd` in a later command moves it again as usual. Strings are borrowed
/// for the call. Without the terminal toolset `HT_STATUS_UNSUPPORTED`.
///
/// # Safety
/// - `rt` is NULL or a runtime from `ht_runtime_new` that no thread frees before this returns.
/// - Each of `task_id`, `cwd` is NULL with its length 0, or points at that many bytes that stay
///   readable and unchanged until this returns.
/// - `out_err` is NULL or points at a writable, aligned variable of the pointee type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_runtime_set_task_cwd(
    rt: *mut ht_runtime,
    task_id: *const c_char,
    task_id_len: usize,
    cwd: *const c_char,
    cwd_len: usize,
    out_err: *mut *mut ht_error,
) -> Status {
    status_boundary(out_err, || {
        // SAFETY: `rt` is NULL (rt_ref rejects it) or, by this export's # Safety, a live runtime
        // that no thread frees before we return.
        let rt = unsafe { rt_ref(rt) }?;
        // SAFETY: by this export's # Safety, `(task_id, task_id_len)` is NULL/0 or task_id_len
        // bytes readable and unchanged until we return; the &str is not kept past the call (what is
        // kept is copied).
        let task = unsafe { str_arg(task_id, task_id_len, "task_id") }?;
        // SAFETY: by this export's # Safety, `(cwd, cwd_len)` is NULL/0 or cwd_len bytes readable
        // and unchanged until we return; the &str is not kept past the call (what is kept is
        // copied).
        let cwd = unsafe { str_arg(cwd, cwd_len, "cwd") }?;
        terminal_of(rt)?.set_task_cwd(task, cwd)
    })
}

/// Give a task its own network setting in place of `terminal.network`:
/// `network_json` is `"off"`, `"on"`, an allow-list object as
/// `terminal.network` takes (`{"allow":["pypi.org"]}`: the task gets its
/// own proxy, with the configured secrets), or `null` (back to
/// `terminal.network`). On the sandbox backend it applies from the task's
/// next command; on docker and podman to the task's container, which must
/// not be running yet (`HT_STATUS_INVALID_ARGUMENT` naming it otherwise:
/// call `ht_runtime_cleanup_task` first). Other backends:
/// `HT_STATUS_UNSUPPORTED`. The approval engine judges the task's commands
/// with that network from then on (a task given the network loses the
/// sandbox's "no network" containment). The setting goes with the task's
/// state (`ht_runtime_cleanup_task`). Strings are borrowed for the call;
/// any thread. Without the terminal toolset `HT_STATUS_UNSUPPORTED`.
///
/// # Safety
/// - `rt` is NULL or a runtime from `ht_runtime_new` that no thread frees before this returns.
/// - Each of `task_id`, `network_json` is NULL with its length 0, or points at that many bytes
///   that stay readable and unchanged until this returns.
/// - `out_err` is NULL or points at a writable, aligned variable of the pointee type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_runtime_set_task_network(
    rt: *mut ht_runtime,
    task_id: *const c_char,
    task_id_len: usize,
    network_json: *const c_char,
    network_len: usize,
    out_err: *mut *mut ht_error,
) -> Status {
    status_boundary(out_err, || {
        // SAFETY: `rt` is NULL (rt_ref rejects it) or, by this export's # Safety, a live runtime
        // that no thread frees before we return.
        let rt = unsafe { rt_ref(rt) }?;
        // SAFETY: by this export's # Safety, `(task_id, task_id_len)` is NULL/0 or task_id_len
        // bytes readable and unchanged until we return; the &str is not kept past the call (what is
        // kept is copied).
        let task = unsafe { str_arg(task_id, task_id_len, "task_id") }?;
        // SAFETY: by this export's # Safety, `(network_json, network_len)` is NULL/0 or
        // network_len bytes readable and unchanged until we return; the &str is not kept past the
        // call (what is kept is copied).
        let text = unsafe { str_arg(network_json, network_len, "network_json") }?;
        let v: serde_json::Value =
            serde_json::from_str(text).map_err(|e| Error::json(format!("network_json: {e}")))?;
        if rt.is_closed() {
            return Err(Error::closed());
        }
        rt.set_task_network(task, &v)
    })
}

/// Set environment variables for every later command of a task: `env_json`
/// is a JSON object whose values are strings (set) or `null` (unset), e.g.
/// `{"API_BASE":"http://localhost:8080","DEBUG":null}`. Overrides accumulate
/// across calls and win over what commands export. Strings are borrowed for
/// the call. Without the terminal toolset `HT_STATUS_UNSUPPORTED`.
///
/// # Safety
/// - `rt` is NULL or a runtime from `ht_runtime_new` that no thread frees before this returns.
/// - Each of `task_id`, `env_json` is NULL with its length 0, or points at that many bytes that
///   stay readable and unchanged until this returns.
/// - `out_err` is NULL or points at a writable, aligned variable of the pointee type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_runtime_set_task_env(
    rt: *mut ht_runtime,
    task_id: *const c_char,
    task_id_len: usize,
    env_json: *const c_char,
    env_len: usize,
    out_err: *mut *mut ht_error,
) -> Status {
    status_boundary(out_err, || {
        // SAFETY: `rt` is NULL (rt_ref rejects it) or, by this export's # Safety, a live runtime
        // that no thread frees before we return.
        let rt = unsafe { rt_ref(rt) }?;
        // SAFETY: by this export's # Safety, `(task_id, task_id_len)` is NULL/0 or task_id_len
        // bytes readable and unchanged until we return; the &str is not kept past the call (what is
        // kept is copied).
        let task = unsafe { str_arg(task_id, task_id_len, "task_id") }?;
        // SAFETY: by this export's # Safety, `(env_json, env_len)` is NULL/0 or env_len bytes
        // readable and unchanged until we return; the &str is not kept past the call (what is kept
        // is copied).
        let text = unsafe { str_arg(env_json, env_len, "env_json") }?;
        let v: serde_json::Value =
            serde_json::from_str(text).map_err(|e| Error::json(format!("env_json: {e}")))?;
        terminal_of(rt)?.set_task_env(task, &v)
    })
}
