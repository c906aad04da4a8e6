//! Host-defined environments (`ht_environment`): a host's own provider of
//! commands and files (a cloud sandbox SDK, a VM pool, a subprocess) as a
//! terminal backend, selected by `terminal.backend` naming it.
//!
//! The host gives callbacks: `spawn` (run `bash -c <script>` where the
//! task's commands run, stream the output through `ht_exec_output`, end with
//! `ht_exec_finish`), `kill` (signal a command it started), optionally
//! `files` (read, write and list with the provider's own file API; without
//! it the file tools run small shell scripts through `spawn`) and `cleanup`
//! (a task's state dropped, or the runtime closing). Commands reach `spawn`
//! only after the terminal's approval, with its limits; timeouts and
//! cancellation arrive as `kill`.
//!
//! `ht_exec*` and `ht_env_file_op*` are ids (never dereferenced): an answer
//! to a finished or unknown one is a harmless `HT_STATUS_NOT_FOUND`.

use std::collections::HashMap;
use std::ffi::{CString, c_char, c_void};
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use hermes_core::error::Error;
use hermes_exec::fs::Entry;
use hermes_exec::host::{FileOp, FileReply, HostCommand, HostEnv, HostExec, HostProvider};
use once_cell::sync::Lazy;

use crate::api::{ht_free_fn, ht_runtime};
use crate::{Status, boundary, ht_error, require, status_boundary, str_arg};

/// A host-defined environment (opaque): made with `ht_environment_new`,
/// given to `ht_runtime_new_with_environments`, freed with
/// `ht_environment_free`.
pub struct ht_environment {
    env: Arc<HostEnv>,
}

/// One command a host environment runs (opaque id, never dereferenced).
pub struct ht_exec {
    _private: [u8; 0],
}

/// One file operation a host environment answers (opaque id, never dereferenced).
pub struct ht_env_file_op {
    _private: [u8; 0],
}

/// Run a command: read it with `ht_exec_request_json` (and `ht_exec_stdin`),
/// stream its output with `ht_exec_output`, end it once with
/// `ht_exec_finish`, now or later, from any thread.
pub type ht_env_spawn_fn = Option<unsafe extern "C" fn(user_data: *mut c_void, exec: *mut ht_exec)>;
/// Signal command `exec_id` (the `"id"` of its request) and what it started
/// (`signal`: 15 TERM, then 9 KILL after the grace). Must not block long.
pub type ht_env_kill_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, exec_id: u64, signal: i32)>;
/// Answer a file operation once with `ht_env_file_op_respond`, now or later,
/// from any thread.
pub type ht_env_file_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, op: *mut ht_env_file_op)>;
/// A task's state is dropped (`task`, borrowed for the call), or the runtime
/// closes (`task` NULL, `task_len` 0): release the task's sandbox, or all.
pub type ht_env_cleanup_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, task: *const c_char, task_len: usize)>;

/// The host's user_data and its free function, which runs once when the
/// last holder (the handle, a runtime, a running command) lets go.
struct UserData {
    ptr: *mut c_void,
    free: ht_free_fn,
}
// SAFETY: the library never dereferences `ptr`; it passes it back to the
// host's callbacks, which the header says run on library threads, so giving
// it is the host's promise that it may cross threads.
unsafe impl Send for UserData {}
// SAFETY: shared access only copies `ptr` out; see Send.
unsafe impl Sync for UserData {}
impl Drop for UserData {
    fn drop(&mut self) {
        if let Some(f) = self.free {
            // SAFETY: the free function the host gave with this user_data;
            // Drop runs once, after every callback that shared the data (they
            // held the Arc this lives in).
            unsafe { f(self.ptr) }
        }
    }
}

struct CProvider {
    spawn: unsafe extern "C" fn(*mut c_void, *mut ht_exec),
    kill: unsafe extern "C" fn(*mut c_void, u64, i32),
    files: ht_env_file_fn,
    cleanup: ht_env_cleanup_fn,
    data: UserData,
}

/// A command the host holds.
struct ExecEntry {
    json: CString,
    stdin: Vec<u8>,
    exec: Mutex<Option<HostExec>>,
}

/// A file operation the host holds.
struct OpEntry {
    json: CString,
    data: Vec<u8>,
    reply: Arc<OpReply>,
    kind: u8,
}

#[derive(Default)]
struct OpReply {
    answer: Mutex<Option<io::Result<FileReply>>>,
    done: Condvar,
}

static NEXT_HANDLE: AtomicU64 = AtomicU64::new(1);
static EXECS: Lazy<Mutex<HashMap<u64, Arc<ExecEntry>>>> = Lazy::new(Default::default);
static OPS: Lazy<Mutex<HashMap<u64, Arc<OpEntry>>>> = Lazy::new(Default::default);

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl HostProvider for CProvider {
    fn start(&self, cmd: HostCommand, exec: HostExec) {
        let json = serde_json::json!({
            "id": cmd.id,
            "task": cmd.task,
            "argv": ["bash", "-c", cmd.script],
            "capture": cmd.capture,
            "stdin": !cmd.stdin.is_empty(),
            "mark": cmd.mark,
        })
        .to_string();
        let handle = NEXT_HANDLE.fetch_add(1, Ordering::Relaxed);
        lock(&EXECS).insert(
            handle,
            Arc::new(ExecEntry {
                json: CString::new(json).unwrap_or_default(),
                stdin: cmd.stdin,
                exec: Mutex::new(Some(exec)),
            }),
        );
        // SAFETY: the host's spawn callback with its own user_data; the
        // handle is an id the accessors look up, valid until ht_exec_finish.
        unsafe { (self.spawn)(self.data.ptr, handle as *mut ht_exec) }
    }

    fn kill(&self, id: u64, signal: i32) {
        // SAFETY: the host's kill callback with its own user_data.
        unsafe { (self.kill)(self.data.ptr, id, signal) }
    }

    fn cleanup(&self, task: Option<&str>) {
        let Some(f) = self.cleanup else { return };
        match task {
            // SAFETY: the host's cleanup callback; `t` is borrowed for the call.
            Some(t) => unsafe { f(self.data.ptr, t.as_ptr() as *const c_char, t.len()) },
            // SAFETY: as above, NULL/0 meaning "the runtime closes".
            None => unsafe { f(self.data.ptr, std::ptr::null(), 0) },
        }
    }

    fn has_files(&self) -> bool {
        self.files.is_some()
    }

    fn file(&self, op: FileOp) -> io::Result<FileReply> {
        let Some(f) = self.files else {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "no file callback",
            ));
        };
        let (json, data, kind) = match op {
            FileOp::Read { task, path } => (
                serde_json::json!({"op": "read", "task": task, "path": path}),
                Vec::new(),
                0,
            ),
            FileOp::Write {
                task,
                path,
                data,
                mode,
            } => (
                serde_json::json!({"op": "write", "task": task, "path": path, "mode": mode}),
                data,
                1,
            ),
            FileOp::List { task, path } => (
                serde_json::json!({"op": "list", "task": task, "path": path}),
                Vec::new(),
                2,
            ),
        };
        let reply = Arc::new(OpReply::default());
        let handle = NEXT_HANDLE.fetch_add(1, Ordering::Relaxed);
        lock(&OPS).insert(
            handle,
            Arc::new(OpEntry {
                json: CString::new(json.to_string()).unwrap_or_default(),
                data,
                reply: reply.clone(),
                kind,
            }),
        );
        // SAFETY: the host's file callback with its own user_data; the handle
        // is an id, valid until ht_env_file_op_respond.
        unsafe { f(self.data.ptr, handle as *mut ht_env_file_op) };
        let until = Instant::now() + hermes_exec::host::CAPTURE_TIMEOUT;
        let mut g = lock(&reply.answer);
        while g.is_none() {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                drop(g);
                lock(&OPS).remove(&handle);
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "the host environment did not answer a file operation",
                ));
            }
            g = reply
                .done
                .wait_timeout(g, left.min(Duration::from_secs(1)))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        g.take().expect("checked above")
    }
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Spec {
    name: String,
    location: Option<String>,
}

/// Create a host-defined environment. `spec_json`: `{"name": "...",
/// "location"?: "..."}`; `name` (1-64 letters, digits, `-`, `_`, `.`, not a
/// built-in backend's) is what `terminal.backend` names; `location` says
/// where commands run in approval prompts and messages (default `in host
/// environment '<name>'`).
///
/// `spawn` and `kill` are required; `files` and `cleanup` may be NULL.
/// Callbacks run on library threads (the dispatching thread, the engine's
/// threads), never while the library holds a lock, and may call back into
/// the library (not `ht_runtime_free`). `free_user_data` (NULL ok) runs
/// exactly once, if this succeeds, when the handle was freed and the last
/// runtime created with it was freed, on whichever thread let go last.
///
/// On success `*out_env` owns the handle: free it with `ht_environment_free`
/// (a runtime created with it keeps what it needs).
///
/// # Safety
/// - `(spec_json, spec_len)`: `spec_len` readable bytes, unchanged until this returns.
/// - The callbacks are valid function pointers until `free_user_data` ran.
/// - `out_env`, `out_err` are each NULL or writable, aligned pointers of the pointee type.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn ht_environment_new(
    spec_json: *const c_char,
    spec_len: usize,
    spawn: ht_env_spawn_fn,
    kill: ht_env_kill_fn,
    files: ht_env_file_fn,
    cleanup: ht_env_cleanup_fn,
    user_data: *mut c_void,
    free_user_data: ht_free_fn,
    out_env: *mut *mut ht_environment,
    out_err: *mut *mut ht_error,
) -> Status {
    status_boundary(out_err, || {
        require(out_env, "out_env")?;
        // SAFETY: by this export's # Safety; the text is copied by serde.
        let text = unsafe { str_arg(spec_json, spec_len, "spec_json") }?;
        let spec: Spec = serde_json::from_str(text)
            .map_err(|e| Error::json(format!("environment spec: {e}")))?;
        let spawn = spawn.ok_or_else(|| Error::invalid("spawn is NULL"))?;
        let kill = kill.ok_or_else(|| Error::invalid("kill is NULL"))?;
        hermes_exec::host::valid_env_name(&spec.name).map_err(Error::invalid)?;
        let provider = Arc::new(CProvider {
            spawn,
            kill,
            files,
            cleanup,
            data: UserData {
                ptr: user_data,
                free: free_user_data,
            },
        });
        let env = HostEnv::new(&spec.name, spec.location, provider).map_err(Error::invalid)?;
        let b = Box::new(ht_environment { env: Arc::new(env) });
        // SAFETY: `out_env` is non-NULL and writable by # Safety; the Box
        // passes to the host, who frees it once with ht_environment_free.
        unsafe { *out_env = Box::into_raw(b) };
        Ok(())
    })
}

/// Free an environment handle (NULL is a no-op). Runtimes created with it
/// keep using it; the host's `free_user_data` runs when the last of them
/// was freed too.
///
/// # Safety
/// - `env` is NULL or a handle from `ht_environment_new` not freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_environment_free(env: *mut ht_environment) {
    boundary(|| {
        if !env.is_null() {
            // SAFETY: by # Safety, from Box::into_raw in ht_environment_new, freed once.
            drop(unsafe { Box::from_raw(env) });
        }
    })
}

/// `ht_runtime_new` with environments the host brought: the config's
/// `terminal.backend` may name one of them (`envs`: `n_envs` handles,
/// borrowed for the call; NULL when `n_envs` is 0). Commands run there
/// through the terminal's approval, limits, timeouts and cancellation,
/// and the file tools reach the same environment.
///
/// # Safety
/// - As `ht_runtime_new`; `envs` is NULL with `n_envs` 0 or points at
///   `n_envs` live `ht_environment *` (none NULL).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_runtime_new_with_environments(
    config_json: *const c_char,
    config_len: usize,
    envs: *const *const ht_environment,
    n_envs: usize,
    out_rt: *mut *mut ht_runtime,
    out_err: *mut *mut ht_error,
) -> Status {
    status_boundary(out_err, || {
        require(out_rt, "out_rt")?;
        if envs.is_null() && n_envs > 0 {
            return Err(Error::invalid("envs is NULL"));
        }
        let mut list = Vec::with_capacity(n_envs);
        for i in 0..n_envs {
            // SAFETY: by # Safety `envs` points at n_envs readable pointers.
            let p = unsafe { *envs.add(i) };
            require(p, "envs[i]")?;
            // SAFETY: by # Safety each is a live handle; shared access only.
            list.push(unsafe { &*p }.env.clone());
        }
        // SAFETY: by # Safety, as for ht_runtime_new.
        let cfg = unsafe { str_arg(config_json, config_len, "config_json") }?;
        let raw = crate::api::new_runtime(cfg, list)?;
        // SAFETY: `out_rt` is non-NULL and writable; ownership passes to the
        // host, who frees it with ht_runtime_free.
        unsafe { *out_rt = raw };
        Ok(())
    })
}

fn exec_entry(exec: *const ht_exec) -> Option<Arc<ExecEntry>> {
    lock(&EXECS).get(&(exec as u64)).cloned()
}

/// The command (JSON object text): `{"id": <u64, what kill names>, "task":
/// "...", "argv": ["bash", "-c", "<script>"], "capture": bool, "stdin":
/// bool, "mark": "..."|null}` (`mark`: the `HERMES_TOOLS_TREE` value a
/// terminal command's processes carry, for a provider that kills by it). Run `argv` where `task`'s commands run (one sandbox per task).
/// `capture` true: a script of the library's own (file tools, state), whose
/// stdout and stderr must be reported apart (streams 1 and 2); otherwise a
/// terminal command whose script already merges stderr. `stdin`: feed
/// `ht_exec_stdin`'s bytes, then close its stdin. Borrowed until
/// `ht_exec_finish`; NUL-terminated; NULL for a finished or unknown exec.
///
/// # Safety
/// - `exec` may be any value (an id); `out_len` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_exec_request_json(
    exec: *const ht_exec,
    out_len: *mut usize,
) -> *const c_char {
    boundary(|| match exec_entry(exec) {
        Some(e) => {
            if !out_len.is_null() {
                // SAFETY: non-NULL and writable by # Safety.
                unsafe { *out_len = e.json.as_bytes().len() };
            }
            // Lives in the table until ht_exec_finish removes it.
            e.json.as_ptr()
        }
        None => std::ptr::null(),
    })
}

/// The bytes to feed the command's stdin (`*out_len` may be 0). Borrowed
/// until `ht_exec_finish`; NULL for a finished or unknown exec.
///
/// # Safety
/// - `exec` may be any value (an id); `out_len` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_exec_stdin(exec: *const ht_exec, out_len: *mut usize) -> *const u8 {
    boundary(|| match exec_entry(exec) {
        Some(e) => {
            if !out_len.is_null() {
                // SAFETY: non-NULL and writable by # Safety.
                unsafe { *out_len = e.stdin.len() };
            }
            if e.stdin.is_empty() {
                c"".as_ptr() as *const u8
            } else {
                e.stdin.as_ptr()
            }
        }
        None => std::ptr::null(),
    })
}

/// Report output of the command: `stream` 1 (stdout) or 2 (stderr),
/// `(data, len)` copied. Blocks while the reader is behind (back-pressure).
/// `HT_STATUS_CANCELLED`: nobody reads any more (the call timed out, was
/// cancelled or its runtime closed): stop the command and finish it.
/// `HT_STATUS_NOT_FOUND`: finished or unknown exec. Any thread; calls for
/// one exec must not overlap with each other or with its `ht_exec_finish`.
///
/// # Safety
/// - `exec` may be any value (an id); `data` NULL with `len` 0 or `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_exec_output(
    exec: *mut ht_exec,
    stream: i32,
    data: *const u8,
    len: usize,
) -> Status {
    boundary(|| {
        if data.is_null() && len > 0 {
            return Status::InvalidArgument;
        }
        let Some(e) = exec_entry(exec) else {
            return Status::NotFound;
        };
        let bytes: &[u8] = if len == 0 {
            &[]
        } else {
            // SAFETY: non-NULL with `len` readable bytes by # Safety, for this call only.
            unsafe { std::slice::from_raw_parts(data, len) }
        };
        let mut g = lock(&e.exec);
        match g.as_mut() {
            None => Status::NotFound,
            Some(x) => match x.output(stream, bytes) {
                Ok(()) => Status::Ok,
                Err(_) => Status::Cancelled,
            },
        }
    })
}

/// End the command with `exit_code` (0-255; `-N`, killed by signal N, is
/// reported as 128+N) and, when the end was the provider's doing (the
/// sandbox disappeared, the connection was lost), a one-line `message`
/// (NULL/0: none) shown to the model with the result. Exactly once per
/// exec, from any thread; it frees the exec (later calls on it:
/// `HT_STATUS_NOT_FOUND`).
///
/// # Safety
/// - `exec` may be any value (an id); `message` NULL with `message_len` 0 or readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_exec_finish(
    exec: *mut ht_exec,
    exit_code: i32,
    message: *const c_char,
    message_len: usize,
) -> Status {
    boundary(|| {
        // SAFETY: by # Safety; copied.
        let msg = match unsafe { crate::opt_str_arg(message, message_len, "message") } {
            Ok(m) => m.filter(|m| !m.is_empty()).map(|m| m.to_string()),
            Err(_) => return Status::InvalidUtf8,
        };
        let Some(e) = lock(&EXECS).remove(&(exec as u64)) else {
            return Status::NotFound;
        };
        let x = lock(&e.exec).take();
        match x {
            Some(x) => {
                x.finish(exit_code, msg);
                Status::Ok
            }
            None => Status::NotFound,
        }
    })
}

/// The file operation (JSON object text): `{"op": "read"|"write"|"list",
/// "task": "...", "path": "/abs/path", "mode"?: int|null}` (for write:
/// the data is `ht_env_file_op_data`, replace the file atomically, with
/// `mode` when given). Borrowed until `ht_env_file_op_respond`; NULL for
/// an answered or unknown op.
///
/// # Safety
/// - `op` may be any value (an id); `out_len` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_env_file_op_json(
    op: *const ht_env_file_op,
    out_len: *mut usize,
) -> *const c_char {
    boundary(|| match lock(&OPS).get(&(op as u64)).cloned() {
        Some(e) => {
            if !out_len.is_null() {
                // SAFETY: non-NULL and writable by # Safety.
                unsafe { *out_len = e.json.as_bytes().len() };
            }
            e.json.as_ptr()
        }
        None => std::ptr::null(),
    })
}

/// The data to write (write operations; empty otherwise). Borrowed until
/// `ht_env_file_op_respond`; NULL for an answered or unknown op.
///
/// # Safety
/// - `op` may be any value (an id); `out_len` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_env_file_op_data(
    op: *const ht_env_file_op,
    out_len: *mut usize,
) -> *const u8 {
    boundary(|| match lock(&OPS).get(&(op as u64)).cloned() {
        Some(e) => {
            if !out_len.is_null() {
                // SAFETY: non-NULL and writable by # Safety.
                unsafe { *out_len = e.data.len() };
            }
            if e.data.is_empty() {
                c"".as_ptr() as *const u8
            } else {
                e.data.as_ptr()
            }
        }
        None => std::ptr::null(),
    })
}

/// Answer a file operation, once, from any thread; frees the op.
/// `error` 0: success, and `(data, len)` is the file's content (read),
/// ignored (write), or a JSON array `[{"name": "...", "is_dir": bool}]`
/// (list). Otherwise `error` is a POSIX errno (2 ENOENT, 13 EACCES, 21
/// EISDIR, ...) and `data` a one-line UTF-8 message (may be empty).
/// `HT_STATUS_NOT_FOUND`: answered, timed out (300 s) or unknown op.
///
/// # Safety
/// - `op` may be any value (an id); `data` NULL with `len` 0 or `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_env_file_op_respond(
    op: *mut ht_env_file_op,
    error: i32,
    data: *const u8,
    len: usize,
) -> Status {
    boundary(|| {
        if data.is_null() && len > 0 {
            return Status::InvalidArgument;
        }
        let Some(e) = lock(&OPS).remove(&(op as u64)) else {
            return Status::NotFound;
        };
        let bytes: Vec<u8> = if len == 0 {
            Vec::new()
        } else {
            // SAFETY: non-NULL with `len` readable bytes by # Safety; copied.
            unsafe { std::slice::from_raw_parts(data, len) }.to_vec()
        };
        let answer = if error != 0 {
            let kind = io::Error::from_raw_os_error(error).kind();
            let msg = String::from_utf8_lossy(&bytes).trim().to_string();
            Err(if msg.is_empty() {
                io::Error::from_raw_os_error(error)
            } else {
                io::Error::new(kind, msg)
            })
        } else {
            match e.kind {
                0 => Ok(FileReply::Data(bytes)),
                1 => Ok(FileReply::Done),
                _ => parse_entries(&bytes).map(FileReply::Entries),
            }
        };
        *lock(&e.reply.answer) = Some(answer);
        e.reply.done.notify_all();
        Status::Ok
    })
}

fn parse_entries(bytes: &[u8]) -> io::Result<Vec<Entry>> {
    #[derive(serde::Deserialize)]
    struct E {
        name: String,
        #[serde(default)]
        is_dir: bool,
    }
    let v: Vec<E> = serde_json::from_slice(bytes).map_err(|e| {
        io::Error::other(format!("host environment: unreadable directory list: {e}"))
    })?;
    Ok(v.into_iter()
        .filter(|e| !e.name.is_empty() && !e.name.contains('/'))
        .map(|e| Entry {
            name: e.name,
            is_dir: e.is_dir,
        })
        .collect())
}
