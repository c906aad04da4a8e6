//! C functions for the built-in `todo` and `skills` toolsets: a host reads
//! a task's todo list to show it, and scans a skill folder with the skills
//! guard before installing it.

#![allow(clippy::missing_safety_doc)]

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
        let rt = unsafe { rt_ref(rt) }?;
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
        let dir = unsafe { str_arg(dir, dir_len, "dir") }?;
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
