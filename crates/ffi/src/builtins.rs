//! C functions for the built-in `todo` and `skills` toolsets: a host reads
//! a task's todo list to show it, and scans a skill folder with the skills
//! guard before installing it.

use std::ffi::c_char;

use super::api::{ht_runtime, rt_ref};
use super::{ht_error, opt_str_arg, put_text, require, status_boundary, str_arg};
use crate::status::Status;
use crate::text::Text;
use hermes_core::error::{Error, ErrorKind};

/// A task's todo list as JSON (`{"todos": [...], "summary": {...}}`, the
/// `todo` tool's answer). `task_id` may be NULL/0 for the default task.
/// Without the todo toolset `HT_STATUS_UNSUPPORTED`. `*out_json` is freed
/// with `ht_string_free`. Any thread.
///
/// # Safety
/// - `rt` is NULL or a runtime from `ht_runtime_new` that no thread frees before this returns.
/// - `task_id` is NULL with its length 0, or points at that many bytes that stay readable and
///   unchanged until this returns.
/// - `out_json`, `out_len`, `out_err` are each NULL or point at a writable, aligned variable of
///   the pointee type (`out_json` must not be NULL).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_runtime_todo_json(
    rt: *mut ht_runtime,
    task_id: *const c_char,
    task_id_len: usize,
    out_json: *mut *mut c_char,
    out_len: *mut usize,
    out_err: *mut *mut ht_error,
) -> Status {
    status_boundary(out_err, || {
        require(out_json, "out_json")?;
        // SAFETY: `rt` is NULL (rt_ref rejects it) or, by this export's # Safety, a live runtime
        // that no thread frees before we return.
        let rt = unsafe { rt_ref(rt) }?;
        // SAFETY: by this export's # Safety, `(task_id, task_id_len)` is NULL/0 or that many
        // readable bytes, unchanged until we return; the &str is not kept past the call.
        let task = unsafe { opt_str_arg(task_id, task_id_len, "task_id") }?.unwrap_or("");
        if rt.is_closed() {
            return Err(Error::closed());
        }
        let v = rt.todo_list(task).ok_or_else(|| {
            Error::new(
                ErrorKind::Unsupported,
                "the todo toolset is not enabled (add \"todo\" to builtin_toolsets)",
            )
        })?;
        put_text(Text::new(&v.to_string()), out_json, out_len);
        Ok(())
    })
}

/// Scan a skill folder with the skills guard before installing it. `trust`
/// is `builtin`, `trusted`, `community` or `agent-created` (NULL/0 or
/// anything else: `community`). `*out_json` receives the report
/// `{"verdict": "safe"|"caution"|"dangerous", "trust", "decision":
/// "allow"|"block"|"ask", "findings": [{id, category, severity, file, line,
/// description, excerpt}]}`, freed with `ht_string_free`. Needs no runtime.
///
/// # Safety
/// - `dir` points at `dir_len` bytes, and `trust` is NULL with its length 0 or points at that
///   many bytes; both stay readable and unchanged until this returns.
/// - `out_json`, `out_len`, `out_err` are each NULL or point at a writable, aligned variable of
///   the pointee type (`out_json` must not be NULL).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_skill_scan(
    dir: *const c_char,
    dir_len: usize,
    trust: *const c_char,
    trust_len: usize,
    out_json: *mut *mut c_char,
    out_len: *mut usize,
    out_err: *mut *mut ht_error,
) -> Status {
    status_boundary(out_err, || {
        require(out_json, "out_json")?;
        // SAFETY: by this export's # Safety, `(dir, dir_len)` is readable and unchanged until we
        // return; the &str is not kept past the call.
        let dir = unsafe { str_arg(dir, dir_len, "dir") }?;
        // SAFETY: as for `dir`: NULL/0 or `trust_len` readable bytes, not kept past the call.
        let trust = unsafe { opt_str_arg(trust, trust_len, "trust") }?.unwrap_or("community");
        let path = std::path::Path::new(dir);
        if !path.is_dir() {
            return Err(Error::new(
                ErrorKind::NotFound,
                format!("skill folder '{dir}' does not exist"),
            ));
        }
        let report = hermes_builtins::skills::scan_folder(path, trust);
        put_text(Text::new(&report.to_string()), out_json, out_len);
        Ok(())
    })
}
