//! Exported C functions. Doc comments here are the C documentation in
//! `include/hermes_tools.h`: ownership, lifetime, thread and NULL behaviour.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use super::{boundary, ht_error, opt_str_arg, put_text, require, status_boundary, str_arg};
use crate::host::{HostCheck, HostData, HostEvents, HostHook, HostTool, SendPtr, ht_call, ht_hook};
use crate::status::Status;
use crate::text::Text;
use hermes_core::dispatch::{CallContext, Completed};
use hermes_core::error::{Error, ErrorKind};
use hermes_core::pending::{self, Answer, Field, Kind, RespondOutcome};
use hermes_runtime::Runtime;

/// A runtime: registry, hooks, built-in tools and threads. Thread-safe.
pub struct ht_runtime {
    /// Shared with the MCP servers serving it (serve.rs), which stop at free.
    pub(crate) rt: Arc<Runtime>,
    /// MCP servers started on this runtime (stopped and joined at free).
    pub(crate) servers: parking_lot::Mutex<Vec<std::sync::Weak<crate::serve::Serving>>>,
    /// Plugins loaded from the config; dropped after `rt` (field order), and
    /// each registration they made holds its library too (host.rs).
    plugins: parking_lot::Mutex<Vec<crate::plugin::Plugin>>,
}

/// A host handler and optional check sharing one registration's user_data.
fn host_tool(
    data: &Arc<HostData>,
    handler: unsafe extern "C" fn(*mut c_void, *mut ht_call),
    check: ht_check_fn,
) -> (
    Arc<HostTool>,
    Option<Arc<dyn hermes_core::availability::Check>>,
) {
    let check = check.map(|func| {
        Arc::new(HostCheck {
            func,
            data: data.clone(),
        }) as Arc<dyn hermes_core::availability::Check>
    });
    let tool = Arc::new(HostTool {
        func: handler,
        data: data.clone(),
    });
    (tool, check)
}

/// Wrap a host's user_data for a registration on `rt`.
fn host_data(rt: &Runtime, user_data: *mut c_void, free: ht_free_fn) -> Arc<HostData> {
    HostData::new(user_data, free, rt.core().callbacks.clone())
}

impl ht_runtime {
    /// The Rust runtime behind a C handle (for Rust hosts and tests mixing both APIs).
    pub fn runtime(&self) -> &Runtime {
        &self.rt
    }
}

/// Frees a registration's `user_data`; called exactly once, on the callback thread.
pub type ht_free_fn = Option<unsafe extern "C" fn(user_data: *mut c_void)>;
/// A host tool handler: read the call, then answer it once with `ht_call_respond`
/// (now, or later from any thread).
pub type ht_tool_handler_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, call: *mut ht_call)>;
/// An availability check: true when the tool can be offered. Must be fast;
/// runs on a library thread with a deadline.
pub type ht_check_fn = Option<unsafe extern "C" fn(user_data: *mut c_void) -> bool>;
/// Completion of an async dispatch: `result` is borrowed for this invocation only.
pub type ht_completion_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        status: Status,
        result: *const c_char,
        result_len: usize,
    ),
>;
/// A hook: read the event, then answer once with `ht_hook_respond`.
pub type ht_hook_fn = Option<unsafe extern "C" fn(user_data: *mut c_void, hook: *mut ht_hook)>;
/// Library events (JSON object text, borrowed for this invocation only).
pub type ht_event_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, event_json: *const c_char, len: usize)>;
/// Log lines: level 1 error, 2 warn, 3 info, 4 debug, 5 trace; `message` borrowed for this invocation.
pub type ht_log_fn = Option<
    unsafe extern "C" fn(user_data: *mut c_void, level: i32, message: *const c_char, len: usize),
>;

const VERSION: &str = concat!("hermes-tools/", env!("CARGO_PKG_VERSION"), "\0");
/// The ABI version; equals `HT_ABI_VERSION` in the header this library was built with.
pub(crate) const ABI_VERSION: u32 = 1;

static DEFAULT_ENGINE: once_cell::sync::Lazy<Arc<hermes_approval::Engine>> =
    once_cell::sync::Lazy::new(|| Arc::new(hermes_approval::Engine::default()));

/// The Rust runtime behind a C handle, or an invalid-argument error for NULL.
///
/// # Safety
/// `rt` must be NULL or a runtime from `ht_runtime_new` that is not freed
/// (no `ht_runtime_free` starts) while the returned borrow `'a` lives; every
/// caller is an export whose own `# Safety` demands this for the call.
pub(crate) unsafe fn rt_ref<'a>(rt: *mut ht_runtime) -> Result<&'a Runtime, Error> {
    require(rt, "runtime")?;
    // SAFETY: `rt` is non-NULL (checked above) and, by our caller's contract, a live `ht_runtime`
    // from ht_runtime_new that is not freed during 'a; ht_runtime is Sync and only ever borrowed
    // shared, so the shared reference aliases nothing mutable.
    Ok(unsafe { &(*rt).rt }.as_ref())
}

/// The ABI version of the loaded library. Compare with `HT_ABI_VERSION` and refuse to run on a mismatch.
#[unsafe(no_mangle)]
pub extern "C" fn ht_abi_version() -> u32 {
    boundary(|| ABI_VERSION)
}

/// The library version as `"hermes-tools/X.Y.Z"`. Static: never free it.
#[unsafe(no_mangle)]
pub extern "C" fn ht_version() -> *const c_char {
    boundary(|| VERSION.as_ptr() as *const c_char)
}

/// Optional features of this build as a static JSON object, e.g.
/// `{"pty":true,"sandbox":"bubblewrap","builtin_toolsets":[...]}`. Never free it.
#[unsafe(no_mangle)]
pub extern "C" fn ht_features() -> *const c_char {
    boundary(|| crate::features_json().as_ptr())
}

/// Create a runtime from a JSON config (`{}` or NULL/0 means defaults).
/// On success `*out_rt` owns a runtime to free with `ht_runtime_free`.
/// Unknown config keys are errors naming the key.
///
/// # Safety
/// - `config_json` is NULL with `config_len` 0, or points at `config_len` bytes that stay readable
///   and unchanged until this returns.
/// - `out_rt`, `out_err` are each NULL or point at a writable, aligned variable of the pointee
///   type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_runtime_new(
    config_json: *const c_char,
    config_len: usize,
    out_rt: *mut *mut ht_runtime,
    out_err: *mut *mut ht_error,
) -> Status {
    status_boundary(out_err, || {
        require(out_rt, "out_rt")?;
        // SAFETY: by this export's # Safety, `(config_json, config_len)` is NULL/0 or config_len
        // bytes readable and unchanged until we return; the &str is not kept past the call (what is
        // kept is copied).
        let cfg = unsafe { str_arg(config_json, config_len, "config_json") }?;
        let raw = new_runtime(cfg, Vec::new())?;
        // SAFETY: `out_rt` is non-NULL (required above) and, by this export's # Safety, points at a
        // writable `ht_runtime *`. The Box's ownership passes to the host, who frees it once with
        // ht_runtime_free.
        unsafe { *out_rt = raw };
        Ok(())
    })
}

/// A runtime for the host (from Box::into_raw), its plugins loaded.
pub(crate) fn new_runtime(
    cfg: &str,
    envs: Vec<Arc<hermes_exec::host::HostEnv>>,
) -> Result<*mut ht_runtime, Error> {
    {
        let rt = Runtime::with_environments(cfg, envs)?;
        if let Some(level) = &rt.config().log_level {
            crate::logging::set_level(level);
        }
        let files = rt.config().plugins.files()?;
        let b = Box::new(ht_runtime {
            rt: Arc::new(rt),
            servers: parking_lot::Mutex::new(Vec::new()),
            plugins: parking_lot::Mutex::new(Vec::new()),
        });
        let raw = Box::into_raw(b);
        if let Err(e) = load_plugins(raw, &files) {
            // SAFETY: `raw` comes from Box::into_raw just above and was never given to the host;
            // the plugins that ran saw it only during their init, so we own it and free it once.
            let b = unsafe { Box::from_raw(raw) };
            b.rt.close();
            drop(b);
            return Err(e);
        }
        Ok(raw)
    }
}

/// Load the config's plugins into a runtime that the host does not hold yet.
fn load_plugins(raw: *mut ht_runtime, files: &[std::path::PathBuf]) -> Result<(), Error> {
    for path in files {
        let cpath = std::ffi::CString::new(path.to_string_lossy().as_bytes())
            .map_err(|_| Error::invalid(format!("plugin '{}': NUL in path", path.display())))?;
        let host = ht_plugin_host {
            abi_version: crate::plugin::PLUGIN_ABI_VERSION,
            struct_size: std::mem::size_of::<ht_plugin_host>(),
            runtime: raw,
            plugin_path: cpath.as_ptr(),
            register_tool: ht_runtime_register_tool,
            register_tools: ht_runtime_register_tools,
            deregister_tool: ht_runtime_deregister_tool,
            define_toolset: ht_runtime_define_toolset,
            alias_toolset: ht_runtime_alias_toolset,
            call_args_json: ht_call_args_json,
            call_context_json: ht_call_context_json,
            call_tool_name: ht_call_tool_name,
            call_respond: ht_call_respond,
            string_free: ht_string_free,
            error_message: ht_error_message,
            error_free: ht_error_free,
        };
        // SAFETY: `host` lives on this frame for the whole call; its runtime is the live one we are
        // building, its path a CString held above, its functions our exports.
        let plugin =
            unsafe { crate::plugin::load(path, &host as *const ht_plugin_host as *const c_void) }?;
        // SAFETY: `raw` is the live runtime ht_runtime_new is building (from Box::into_raw, not
        // freed); shared access only, as for any export.
        unsafe { &*raw }.plugins.lock().push(plugin);
    }
    Ok(())
}

/// What a plugin's `ht_plugin_init` receives: the runtime and the C functions
/// it registers and answers through (the plugin links against nothing). The
/// table is borrowed for the init call only: copy what you keep. The function
/// pointers stay valid while the plugin is loaded (the library keeps a plugin
/// mapped until the last of its registrations is gone and its free functions
/// ran); `runtime` stays valid until the host frees it. Register during init,
/// on the calling thread: those registrations are what keep the plugin mapped.
/// Fields are appended only; `struct_size` is the size the library built.
#[repr(C)]
pub struct ht_plugin_host {
    /// `HT_PLUGIN_ABI_VERSION` of the loading library.
    pub abi_version: u32,
    /// `sizeof(ht_plugin_host)` as the loading library built it.
    pub struct_size: usize,
    /// The runtime being created.
    pub runtime: *mut ht_runtime,
    /// The plugin's path as configured (NUL-terminated, borrowed for the init call).
    pub plugin_path: *const c_char,
    /// `ht_runtime_register_tool`.
    pub register_tool: unsafe extern "C" fn(
        *mut ht_runtime,
        *const c_char,
        usize,
        ht_tool_handler_fn,
        ht_check_fn,
        *mut c_void,
        ht_free_fn,
        *mut *mut ht_error,
    ) -> Status,
    /// `ht_runtime_register_tools`.
    pub register_tools: unsafe extern "C" fn(
        *mut ht_runtime,
        *const c_char,
        usize,
        ht_tool_handler_fn,
        ht_check_fn,
        *mut c_void,
        ht_free_fn,
        *mut usize,
        *mut *mut ht_error,
    ) -> Status,
    /// `ht_runtime_deregister_tool`.
    pub deregister_tool:
        unsafe extern "C" fn(*mut ht_runtime, *const c_char, usize, *mut *mut ht_error) -> Status,
    /// `ht_runtime_define_toolset`.
    pub define_toolset:
        unsafe extern "C" fn(*mut ht_runtime, *const c_char, usize, *mut *mut ht_error) -> Status,
    /// `ht_runtime_alias_toolset`.
    pub alias_toolset: unsafe extern "C" fn(
        *mut ht_runtime,
        *const c_char,
        usize,
        *const c_char,
        usize,
        *mut *mut ht_error,
    ) -> Status,
    /// `ht_call_args_json`.
    pub call_args_json: unsafe extern "C" fn(*const ht_call, *mut usize) -> *const c_char,
    /// `ht_call_context_json`.
    pub call_context_json: unsafe extern "C" fn(*const ht_call, *mut usize) -> *const c_char,
    /// `ht_call_tool_name`.
    pub call_tool_name: unsafe extern "C" fn(*const ht_call, *mut usize) -> *const c_char,
    /// `ht_call_respond`.
    pub call_respond: unsafe extern "C" fn(*mut ht_call, bool, *const c_char, usize) -> Status,
    /// `ht_string_free`.
    pub string_free: unsafe extern "C" fn(*mut c_char),
    /// `ht_error_message`.
    pub error_message: unsafe extern "C" fn(*const ht_error) -> *const c_char,
    /// `ht_error_free`.
    pub error_free: unsafe extern "C" fn(*mut ht_error),
}

/// The entry point a plugin exports as `ht_plugin_init` (declared in this
/// header; the plugin also declares `HT_PLUGIN_DECLARE_ABI`). Return
/// `HT_STATUS_OK`, or another status after writing a one-line NUL-terminated
/// message of at most `err_cap` bytes to `err_buf`: runtime creation then
/// fails with that message and the plugin's path. Must not unwind.
pub type ht_plugin_init_fn = Option<
    unsafe extern "C" fn(
        host: *const ht_plugin_host,
        err_buf: *mut c_char,
        err_cap: usize,
    ) -> Status,
>;

/// Free a runtime (NULL is a no-op). Rejects new work, completes pending
/// async calls with `HT_STATUS_CANCELLED`, kills built-in processes, runs
/// every free function, joins library threads, then returns. Events still
/// queued for the event handler are dropped, not delivered.
///
/// Bound: it returns within about one second plus the terminal's
/// `kill_grace`, whatever host callbacks are doing. Host code that has not
/// returned by then (a handler or hook blocking the callback thread, a hung
/// availability check) is not waited for: that is logged, its thread is left
/// to finish on its own, and the `free_user_data` of its registration (and
/// any completion still queued behind it) runs when that code returns.
/// Requests the host still holds stay readable and answerable (see
/// `ht_call_respond`). Must not be called twice, nor concurrently with other
/// calls on the same runtime. Called from the callback thread it does not
/// wait for that thread.
///
/// # Safety
/// - `rt` is NULL or a runtime from `ht_runtime_new` that was not freed before; no other thread
///   uses it during this call, and nobody uses it after.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_runtime_free(rt: *mut ht_runtime) {
    boundary(|| {
        if rt.is_null() {
            return;
        }
        // SAFETY: non-NULL (checked above), and by this export's # Safety a pointer from
        // ht_runtime_new (Box::into_raw) that was not freed and that no other thread uses, so we
        // own the Box exclusively and it is dropped once.
        let b = unsafe { Box::from_raw(rt) };
        crate::serve::stop_all(&b.servers);
        b.rt.close();
        drop(b);
    })
}

/// Register a host tool from a JSON spec (`{"name","toolset","schema",...}`).
/// `handler` is required; `check` may be NULL. On success the library owns
/// `user_data` until it calls `free_user_data` exactly once (at deregistration,
/// replacement or runtime free, on the callback thread, after the last callback).
/// On failure `free_user_data` is never called. A name owned by another toolset
/// gives `HT_STATUS_CONFLICT` unless the spec says `"override": true`.
/// The spec's JSON, fields, names and the top-level `type` of its parameters
/// schema are checked here. The rest of the schema compiles on the tool's
/// first call by default (registration then costs about what reading the
/// spec costs); a schema that does not compile makes each call of the tool
/// return an error result naming the fault, and logs a warning once. With
/// the config's `"dispatch": {"compile_schemas": "at_registration"}` it
/// compiles here and such a spec is refused with `HT_STATUS_INVALID_ARGUMENT`.
///
/// # Safety
/// - `rt` is NULL or a runtime from `ht_runtime_new` that no thread frees before this returns.
/// - `spec_json` is NULL with `spec_len` 0, or points at `spec_len` bytes that stay readable and
///   unchanged until this returns.
/// - `out_err` is NULL or points at a writable, aligned variable of the pointee type.
/// - `handler`, `check`, `free_user_data` are each NULL or a function of the declared type that
///   does not unwind. They are called with `user_data` on library threads (see Thread safety at the
///   top of the header), so `user_data` must stay usable from any thread until `free_user_data` has
///   run.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_runtime_register_tool(
    rt: *mut ht_runtime,
    spec_json: *const c_char,
    spec_len: usize,
    handler: ht_tool_handler_fn,
    check: ht_check_fn,
    user_data: *mut c_void,
    free_user_data: ht_free_fn,
    out_err: *mut *mut ht_error,
) -> Status {
    status_boundary(out_err, || {
        // SAFETY: `rt` is NULL (rt_ref rejects it) or, by this export's # Safety, a live runtime
        // that no thread frees before we return.
        let rt = unsafe { rt_ref(rt) }?;
        // SAFETY: by this export's # Safety, `(spec_json, spec_len)` is NULL/0 or spec_len bytes
        // readable and unchanged until we return; the &str is not kept past the call (what is kept
        // is copied).
        let spec = unsafe { str_arg(spec_json, spec_len, "spec_json") }?;
        let handler = handler.ok_or_else(|| Error::invalid("handler is NULL"))?;
        let data = host_data(rt, user_data, free_user_data);
        let (tool, check) = host_tool(&data, handler, check);
        rt.register_tool(spec, tool, check)?;
        data.arm();
        Ok(())
    })
}

/// Register many tools at once from a JSON array of specs, all served by one
/// `handler` (which learns each call's tool with `ht_call_tool_name`) and one
/// optional `check`. All or nothing: on any error nothing is registered and
/// `free_user_data` is never called; on success it runs once, when the last
/// of these tools is gone (deregistration, replacement or runtime free).
/// `*out_count` (NULL ok) receives the number registered. Registration cost is
/// O(log n) per tool: 10 000 specs in one call take about 10 milliseconds.
/// Each spec's JSON, fields, names and the top-level `type` of its parameters
/// schema are checked here; the schema itself compiles when the tool is first
/// called (most tools of a large registry never are). A schema that does not
/// compile makes each call of that tool return an error result that names the
/// fault (and logs a warning once); with `dispatch.compile_schemas` set to
/// `"at_registration"` each schema compiles here and such a spec is refused.
///
/// # Safety
/// - `rt` is NULL or a runtime from `ht_runtime_new` that no thread frees before this returns.
/// - `specs_json` is NULL with `specs_len` 0, or points at `specs_len` bytes that stay readable and
///   unchanged until this returns.
/// - `out_count`, `out_err` are each NULL or point at a writable, aligned variable of the pointee
///   type.
/// - `handler`, `check`, `free_user_data` are each NULL or a function of the declared type that
///   does not unwind. They are called with `user_data` on library threads (see Thread safety at the
///   top of the header), so `user_data` must stay usable from any thread until `free_user_data` has
///   run.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_runtime_register_tools(
    rt: *mut ht_runtime,
    specs_json: *const c_char,
    specs_len: usize,
    handler: ht_tool_handler_fn,
    check: ht_check_fn,
    user_data: *mut c_void,
    free_user_data: ht_free_fn,
    out_count: *mut usize,
    out_err: *mut *mut ht_error,
) -> Status {
    status_boundary(out_err, || {
        // SAFETY: `rt` is NULL (rt_ref rejects it) or, by this export's # Safety, a live runtime
        // that no thread frees before we return.
        let rt = unsafe { rt_ref(rt) }?;
        // SAFETY: by this export's # Safety, `(specs_json, specs_len)` is NULL/0 or specs_len bytes
        // readable and unchanged until we return; the &str is not kept past the call (what is kept
        // is copied).
        let specs = unsafe { str_arg(specs_json, specs_len, "specs_json") }?;
        let handler = handler.ok_or_else(|| Error::invalid("handler is NULL"))?;
        let data = host_data(rt, user_data, free_user_data);
        let (tool, check) = host_tool(&data, handler, check);
        let n = rt.register_tools(specs, tool, check)?;
        data.arm();
        if !out_count.is_null() {
            // SAFETY: non-NULL (checked above); by this export's # Safety it points at a writable
            // size_t.
            unsafe { *out_count = n };
        }
        Ok(())
    })
}

/// Remove a tool. `HT_STATUS_NOT_FOUND` when no such tool is registered.
///
/// # Safety
/// - `rt` is NULL or a runtime from `ht_runtime_new` that no thread frees before this returns.
/// - `name` is NULL with `name_len` 0, or points at `name_len` bytes that stay readable and
///   unchanged until this returns.
/// - `out_err` is NULL or points at a writable, aligned variable of the pointee type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_runtime_deregister_tool(
    rt: *mut ht_runtime,
    name: *const c_char,
    name_len: usize,
    out_err: *mut *mut ht_error,
) -> Status {
    status_boundary(out_err, || {
        // SAFETY: `rt` is NULL (rt_ref rejects it) or, by this export's # Safety, a live runtime
        // that no thread frees before we return.
        let rt = unsafe { rt_ref(rt) }?;
        // SAFETY: by this export's # Safety, `(name, name_len)` is NULL/0 or name_len bytes
        // readable and unchanged until we return; the &str is not kept past the call (what is kept
        // is copied).
        let name = unsafe { str_arg(name, name_len, "name") }?;
        rt.deregister_tool(name)
    })
}

/// Define (or replace) a host toolset: `{"name","description"?,"tools"?:[..],"includes"?:[..]}`.
/// Unknown includes and cycles are refused with a message naming them.
///
/// # Safety
/// - `rt` is NULL or a runtime from `ht_runtime_new` that no thread frees before this returns.
/// - `toolset_json` is NULL with `len` 0, or points at `len` bytes that stay readable and unchanged
///   until this returns.
/// - `out_err` is NULL or points at a writable, aligned variable of the pointee type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_runtime_define_toolset(
    rt: *mut ht_runtime,
    toolset_json: *const c_char,
    len: usize,
    out_err: *mut *mut ht_error,
) -> Status {
    status_boundary(out_err, || {
        // SAFETY: `rt` is NULL (rt_ref rejects it) or, by this export's # Safety, a live runtime
        // that no thread frees before we return.
        let rt = unsafe { rt_ref(rt) }?;
        // SAFETY: by this export's # Safety, `(toolset_json, len)` is NULL/0 or len bytes readable
        // and unchanged until we return; the &str is not kept past the call (what is kept is
        // copied).
        let json = unsafe { str_arg(toolset_json, len, "toolset_json") }?;
        rt.define_toolset(json)
    })
}

/// Make `alias` name the toolset `target` (e.g. an MCP server name for `mcp-<server>`).
///
/// # Safety
/// - `rt` is NULL or a runtime from `ht_runtime_new` that no thread frees before this returns.
/// - Each of `alias`, `target` is NULL with its length 0, or points at that many bytes that stay
///   readable and unchanged until this returns.
/// - `out_err` is NULL or points at a writable, aligned variable of the pointee type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_runtime_alias_toolset(
    rt: *mut ht_runtime,
    alias: *const c_char,
    alias_len: usize,
    target: *const c_char,
    target_len: usize,
    out_err: *mut *mut ht_error,
) -> Status {
    status_boundary(out_err, || {
        // SAFETY: `rt` is NULL (rt_ref rejects it) or, by this export's # Safety, a live runtime
        // that no thread frees before we return.
        let rt = unsafe { rt_ref(rt) }?;
        // SAFETY: by this export's # Safety, `(alias, alias_len)` is NULL/0 or alias_len bytes
        // readable and unchanged until we return; the &str is not kept past the call (what is kept
        // is copied).
        let alias = unsafe { str_arg(alias, alias_len, "alias") }?;
        // SAFETY: by this export's # Safety, `(target, target_len)` is NULL/0 or target_len bytes
        // readable and unchanged until we return; the &str is not kept past the call (what is kept
        // is copied).
        let target = unsafe { str_arg(target, target_len, "target") }?;
        rt.alias_toolset(alias, target)
    })
}

/// Every toolset with its direct tools, includes, resolved tools and
/// availability, as a JSON array. `*out_json` is owned: free with `ht_string_free`.
///
/// # Safety
/// - `rt` is NULL or a runtime from `ht_runtime_new` that no thread frees before this returns.
/// - `out_json`, `out_len`, `out_err` are each NULL or point at a writable, aligned variable of the
///   pointee type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_runtime_toolsets_json(
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
        let s = rt.toolsets_json()?;
        put_text(Text::new(&s), out_json, out_len);
        Ok(())
    })
}

/// The state of every MCP server named in the config's `mcp_servers`, as a JSON object keyed
/// by server name (`{}` without servers; shape in docs/json-shapes.md): `state` (`connecting`,
/// `ready`, `disconnected`, `failed`, `disabled`, `closed`), its tools, process id, connection
/// count, last error. `*out_json` is owned by the caller: free it with `ht_string_free`.
/// Callable from any thread while the runtime lives; it never waits for a server (a server
/// still connecting is reported as `connecting`). A NULL `rt` or `out_json` gives `HT_STATUS_INVALID_ARGUMENT`.
///
/// # Safety
/// - `rt` is NULL or a runtime from `ht_runtime_new` that no thread frees before this returns.
/// - `out_json`, `out_len`, `out_err` are each NULL or point at a writable, aligned variable of the
///   pointee type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_runtime_mcp_status(
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
        let s = rt.mcp_status();
        put_text(Text::new(&s), out_json, out_len);
        Ok(())
    })
}

/// Add an MCP server at run time, for hosts whose users edit server lists: `config_json` is
/// one server's entry as in the config's `mcp_servers` (docs/json-shapes.md). Blocks the calling
/// thread for the server's first connection attempt (at most twice its `connect_timeout`): its
/// tools are registered when this returns, or it keeps retrying in the background (see
/// `ht_runtime_mcp_status`); either way `HT_STATUS_OK`. A name already in use gives
/// `HT_STATUS_CONFLICT`; a bad config `HT_STATUS_INVALID_JSON` or `HT_STATUS_INVALID_ARGUMENT`
/// (also for a NULL `rt` or an empty name); `HT_STATUS_CLOSED` after the runtime closed. Any thread; not from a tool handler of the
/// same runtime if the server may take long to start (it would hold that call).
///
/// # Safety
/// - `rt` is NULL or a runtime from `ht_runtime_new` that no thread frees before this returns.
/// - Each of `name`, `config_json` is NULL with its length 0, or points at that many bytes that
///   stay readable and unchanged until this returns.
/// - `out_err` is NULL or points at a writable, aligned variable of the pointee type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_runtime_add_mcp_server(
    rt: *mut ht_runtime,
    name: *const c_char,
    name_len: usize,
    config_json: *const c_char,
    config_len: usize,
    out_err: *mut *mut ht_error,
) -> Status {
    status_boundary(out_err, || {
        // SAFETY: `rt` is NULL (rt_ref rejects it) or, by this export's # Safety, a live runtime
        // that no thread frees before we return.
        let rt = unsafe { rt_ref(rt) }?;
        // SAFETY: by this export's # Safety, `(name, name_len)` is NULL/0 or name_len bytes
        // readable and unchanged until we return; the &str is not kept past the call (what is kept
        // is copied).
        let name = unsafe { str_arg(name, name_len, "name") }?;
        // SAFETY: by this export's # Safety, `(config_json, config_len)` is NULL/0 or config_len
        // bytes readable and unchanged until we return; the &str is not kept past the call.
        let config = unsafe { str_arg(config_json, config_len, "config_json") }?;
        rt.add_mcp_server(name, config)
    })
}

/// Accept the changed definitions of an MCP server's tools: a tool whose
/// description, input schema or annotations changed since it was first listed
/// (event `mcp.tool_changed`, status `held_tools`) is held out of the registry
/// while the server's `pin` is on (the default); this makes the current
/// definitions the new pins and lists the tools again, so they come back.
/// Blocks until that listing ends (at most the server's `connect_timeout` plus
/// 1 s; then `HT_STATUS_TIMEOUT`, and the tools return in the background). An
/// unknown name gives `HT_STATUS_NOT_FOUND`. Any thread.
///
/// # Safety
/// - `rt` is NULL or a runtime from `ht_runtime_new` that no thread frees before this returns.
/// - `name` is NULL with `name_len` 0, or points at that many bytes that stay readable and
///   unchanged until this returns.
/// - `out_err` is NULL or points at a writable, aligned variable of the pointee type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_runtime_mcp_accept_tools(
    rt: *mut ht_runtime,
    name: *const c_char,
    name_len: usize,
    out_err: *mut *mut ht_error,
) -> Status {
    status_boundary(out_err, || {
        // SAFETY: `rt` is NULL (rt_ref rejects it) or, by this export's # Safety, a live runtime
        // that no thread frees before we return.
        let rt = unsafe { rt_ref(rt) }?;
        // SAFETY: by this export's # Safety, `(name, name_len)` is NULL/0 or name_len bytes
        // readable and unchanged until we return; the &str is not kept past the call.
        let name = unsafe { str_arg(name, name_len, "name") }?;
        rt.accept_mcp_tools(name).map(|_| ())
    })
}

/// Remove an MCP server (configured or added): its process tree is stopped (TERM, then KILL
/// after 0.5 s), its tools deregistered; calls in flight to it end with an error. An unknown
/// (or empty) name gives `HT_STATUS_NOT_FOUND`, a NULL `rt` `HT_STATUS_INVALID_ARGUMENT`. Any
/// thread; blocks at most about 0.5 s.
///
/// # Safety
/// - `rt` is NULL or a runtime from `ht_runtime_new` that no thread frees before this returns.
/// - `name` is NULL with `name_len` 0, or points at that many bytes that stay readable and
///   unchanged until this returns.
/// - `out_err` is NULL or points at a writable, aligned variable of the pointee type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_runtime_remove_mcp_server(
    rt: *mut ht_runtime,
    name: *const c_char,
    name_len: usize,
    out_err: *mut *mut ht_error,
) -> Status {
    status_boundary(out_err, || {
        // SAFETY: `rt` is NULL (rt_ref rejects it) or, by this export's # Safety, a live runtime
        // that no thread frees before we return.
        let rt = unsafe { rt_ref(rt) }?;
        // SAFETY: by this export's # Safety, `(name, name_len)` is NULL/0 or name_len bytes
        // readable and unchanged until we return; the &str is not kept past the call.
        let name = unsafe { str_arg(name, name_len, "name") }?;
        rt.remove_mcp_server(name)
    })
}

/// The registry generation: changes on every registration, removal, toolset or alias change.
/// 0 for a NULL runtime.
///
/// # Safety
/// - `rt` is NULL or a runtime from `ht_runtime_new` that no thread frees before this returns.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_runtime_generation(rt: *mut ht_runtime) -> u64 {
    // SAFETY: `rt` is NULL (rt_ref rejects it) or, by this export's # Safety, a live runtime that
    // no thread frees before we return.
    boundary(|| match unsafe { rt_ref(rt) } {
        Ok(rt) => rt.generation(),
        Err(_) => 0,
    })
}

/// Forget cached availability-check results; the next definitions call probes again.
///
/// # Safety
/// - `rt` is NULL or a runtime from `ht_runtime_new` that no thread frees before this returns.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_runtime_invalidate_availability(rt: *mut ht_runtime) -> Status {
    // SAFETY: `rt` is NULL (rt_ref rejects it) or, by this export's # Safety, a live runtime that
    // no thread frees before we return.
    boundary(|| match unsafe { rt_ref(rt) } {
        Ok(rt) => {
            rt.core().availability.invalidate();
            Status::Ok
        }
        Err(e) => Status::from(e.kind),
    })
}

/// Tool definitions for the model. `query_json` (NULL/0 = all tools, OpenAI
/// format): `{"enabled_toolsets"?,"disabled_toolsets"?,"format"?:"openai"|"anthropic"|"mcp"}`.
/// Output: a JSON array sorted by name, never mentioning an unavailable tool.
/// `*out_json` is owned (read-only): free with `ht_string_free`. Availability
/// checks may run on library threads while this waits (bounded by the config's
/// `availability.check_timeout_ms`).
///
/// # Safety
/// - `rt` is NULL or a runtime from `ht_runtime_new` that no thread frees before this returns.
/// - `query_json` is NULL with `query_len` 0, or points at `query_len` bytes that stay readable and
///   unchanged until this returns.
/// - `out_json`, `out_len`, `out_err` are each NULL or point at a writable, aligned variable of the
///   pointee type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_runtime_definitions_json(
    rt: *mut ht_runtime,
    query_json: *const c_char,
    query_len: usize,
    out_json: *mut *mut c_char,
    out_len: *mut usize,
    out_err: *mut *mut ht_error,
) -> Status {
    status_boundary(out_err, || {
        require(rt, "runtime")?;
        // SAFETY: non-NULL (required above) and, by this export's # Safety, a live runtime no
        // thread frees before we return; ht_runtime is Sync, so a shared
        // borrow is fine while other threads use it.
        let handle = unsafe { &*rt };
        require(out_json, "out_json")?;
        // SAFETY: by this export's # Safety, `(query_json, query_len)` is NULL/0 or query_len bytes
        // readable and unchanged until we return; the &str is not kept past the call (what is kept
        // is copied).
        let q = unsafe { str_arg(query_json, query_len, "query_json") }?;
        let shared = handle.rt.definitions_with(q, &|pieces: &[&str]| {
            Arc::new(Text::concat(pieces)) as hermes_core::definitions::Text
        })?;
        // Built by us (above, now or for an earlier call): shared as is. Built
        // by the Rust API (an MCP server of this runtime): copied once.
        let block = match shared.as_any().downcast_ref::<Text>() {
            Some(t) => t.clone(),
            None => Text::new(&shared),
        };
        put_text(block, out_json, out_len);
        Ok(())
    })
}

/// Dispatch one tool call and wait for its result. The handler runs on this
/// thread; do not call this from the thread the handler's answer depends on.
/// Returns `HT_STATUS_OK` whenever there is text for the model, including
/// error results (unknown tool, bad arguments, handler failure, timeout):
/// those are JSON objects with an `"error"` key. `context_json` may be NULL/0.
/// `*out_result` is owned: free with `ht_string_free`.
///
/// # Safety
/// - `rt` is NULL or a runtime from `ht_runtime_new` that no thread frees before this returns.
/// - Each of `name`, `args_json`, `context_json` is NULL with its length 0, or points at that many
///   bytes that stay readable and unchanged until this returns.
/// - `out_result`, `out_len`, `out_err` are each NULL or point at a writable, aligned variable of
///   the pointee type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_runtime_dispatch(
    rt: *mut ht_runtime,
    name: *const c_char,
    name_len: usize,
    args_json: *const c_char,
    args_len: usize,
    context_json: *const c_char,
    context_len: usize,
    out_result: *mut *mut c_char,
    out_len: *mut usize,
    out_err: *mut *mut ht_error,
) -> Status {
    status_boundary(out_err, || {
        // SAFETY: `rt` is NULL (rt_ref rejects it) or, by this export's # Safety, a live runtime
        // that no thread frees before we return.
        let rt = unsafe { rt_ref(rt) }?;
        require(out_result, "out_result")?;
        // SAFETY: by this export's # Safety, `(name, name_len)` is NULL/0 or name_len bytes
        // readable and unchanged until we return; the &str is not kept past the call (what is kept
        // is copied).
        let name = unsafe { str_arg(name, name_len, "name") }?;
        // SAFETY: by this export's # Safety, `(args_json, args_len)` is NULL/0 or args_len bytes
        // readable and unchanged until we return; the &str is not kept past the call (what is kept
        // is copied).
        let args = unsafe { str_arg(args_json, args_len, "args_json") }?;
        // SAFETY: by this export's # Safety, `(context_json, context_len)` is NULL/0 or context_len
        // bytes readable and unchanged until we return; the &str is not kept past the call (what is
        // kept is copied).
        let ctx =
            CallContext::parse(unsafe { opt_str_arg(context_json, context_len, "context_json") }?)?;
        let text = rt.dispatch(name, args, ctx)?;
        put_text(Text::new(&text), out_result, out_len);
        Ok(())
    })
}

/// Start a tool call and return at once. If this returns an error, `on_done`
/// never runs. Otherwise `on_done` runs exactly once, never inside this call,
/// on the library callback thread: with `HT_STATUS_OK` and the result text,
/// or `HT_STATUS_CANCELLED` (and an error result) after `ht_runtime_cancel`
/// or `ht_runtime_free`. Host handlers of async calls run on the callback thread.
/// `*out_call_id` (may be NULL) receives the id for `ht_runtime_cancel`.
/// With `limits.max_calls_in_flight` async calls already in flight it fails
/// with `HT_STATUS_UNSUPPORTED` (retry when some complete).
///
/// # Safety
/// - `rt` is NULL or a runtime from `ht_runtime_new` that no thread frees before this returns.
/// - Each of `name`, `args_json`, `context_json` is NULL with its length 0, or points at that many
///   bytes that stay readable and unchanged until this returns.
/// - `out_call_id`, `out_err` are each NULL or point at a writable, aligned variable of the pointee
///   type.
/// - `on_done` is NULL or a function of the declared type that does not unwind. It is called with
///   `user_data` on library threads (see Thread safety at the top of the header), so `user_data`
///   must stay usable from any thread until `on_done` has run.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_runtime_dispatch_async(
    rt: *mut ht_runtime,
    name: *const c_char,
    name_len: usize,
    args_json: *const c_char,
    args_len: usize,
    context_json: *const c_char,
    context_len: usize,
    on_done: ht_completion_fn,
    user_data: *mut c_void,
    out_call_id: *mut u64,
    out_err: *mut *mut ht_error,
) -> Status {
    status_boundary(out_err, || {
        // SAFETY: `rt` is NULL (rt_ref rejects it) or, by this export's # Safety, a live runtime
        // that no thread frees before we return.
        let rt = unsafe { rt_ref(rt) }?;
        let on_done = on_done.ok_or_else(|| Error::invalid("on_done is NULL"))?;
        // SAFETY: by this export's # Safety, `(name, name_len)` is NULL/0 or name_len bytes
        // readable and unchanged until we return; the &str is not kept past the call (what is kept
        // is copied).
        let name = unsafe { str_arg(name, name_len, "name") }?;
        // SAFETY: by this export's # Safety, `(args_json, args_len)` is NULL/0 or args_len bytes
        // readable and unchanged until we return; the &str is not kept past the call (what is kept
        // is copied).
        let args = unsafe { str_arg(args_json, args_len, "args_json") }?;
        // SAFETY: by this export's # Safety, `(context_json, context_len)` is NULL/0 or context_len
        // bytes readable and unchanged until we return; the &str is not kept past the call (what is
        // kept is copied).
        let ctx =
            CallContext::parse(unsafe { opt_str_arg(context_json, context_len, "context_json") }?)?;
        let ud = SendPtr(user_data);
        let done = Box::new(move |c: Completed| {
            let ud = ud;
            let status = if c.cancelled {
                Status::Cancelled
            } else {
                Status::Ok
            };
            // SAFETY: `on_done` is the host's completion passed with this user_data (this export's
            // # Safety); the core runs `done` at most once. `(ptr, len)` come from `c.text`, which
            // lives across the call, matching "borrowed for this invocation only".
            unsafe { on_done(ud.0, status, c.text.as_ptr() as *const c_char, c.text.len()) };
        });
        let id = rt.dispatch_async(name, args, ctx, done)?;
        if !out_call_id.is_null() {
            // SAFETY: non-NULL (checked above); by this export's # Safety it points at a writable
            // uint64_t.
            unsafe { *out_call_id = id };
        }
        Ok(())
    })
}

/// Cancel an async call: its completion runs with `HT_STATUS_CANCELLED`
/// (a built-in tool's process is killed). `HT_STATUS_NOT_FOUND` when the call
/// already completed or never existed.
///
/// # Safety
/// - `rt` is NULL or a runtime from `ht_runtime_new` that no thread frees before this returns.
/// - `out_err` is NULL or points at a writable, aligned variable of the pointee type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_runtime_cancel(
    rt: *mut ht_runtime,
    call_id: u64,
    out_err: *mut *mut ht_error,
) -> Status {
    // SAFETY: `rt` is NULL (rt_ref rejects it) or, by this export's # Safety, a live runtime that
    // no thread frees before we return.
    status_boundary(out_err, || unsafe { rt_ref(rt) }?.cancel(call_id))
}

/// Dispatch a model's `tool_calls` array (`[{"id","type":"function","function":{"name","arguments"}}]`;
/// `arguments` a JSON string or object), Anthropic `tool_use` blocks, OpenAI
/// Responses `function_call` items or MCP `tools/call` params, or an assistant
/// message holding them. Parallel-safe tools run concurrently, others in
/// order; results `[{"tool_call_id","name","is_error","content"}]` keep input
/// order and one failing call never loses the others. `"answer_format"`
/// (`openai`, `openai_responses`, `anthropic`, `mcp`, `auto`; in the batch
/// object or the context) answers in the model's shape (docs/json-shapes.md).
/// Blocks like `ht_runtime_dispatch`.
/// `*out_json` is owned: free with `ht_string_free`.
///
/// # Safety
/// - `rt` is NULL or a runtime from `ht_runtime_new` that no thread frees before this returns.
/// - Each of `tool_calls_json`, `context_json` is NULL with its length 0, or points at that many
///   bytes that stay readable and unchanged until this returns.
/// - `out_json`, `out_len`, `out_err` are each NULL or point at a writable, aligned variable of the
///   pointee type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_runtime_dispatch_batch(
    rt: *mut ht_runtime,
    tool_calls_json: *const c_char,
    len: usize,
    context_json: *const c_char,
    context_len: usize,
    out_json: *mut *mut c_char,
    out_len: *mut usize,
    out_err: *mut *mut ht_error,
) -> Status {
    status_boundary(out_err, || {
        // SAFETY: `rt` is NULL (rt_ref rejects it) or, by this export's # Safety, a live runtime
        // that no thread frees before we return.
        let rt = unsafe { rt_ref(rt) }?;
        require(out_json, "out_json")?;
        // SAFETY: by this export's # Safety, `(tool_calls_json, len)` is NULL/0 or len bytes
        // readable and unchanged until we return; the &str is not kept past the call (what is kept
        // is copied).
        let calls = unsafe { str_arg(tool_calls_json, len, "tool_calls_json") }?;
        // SAFETY: by this export's # Safety, `(context_json, context_len)` is NULL/0 or context_len
        // bytes readable and unchanged until we return; the &str is not kept past the call (what is
        // kept is copied).
        let ctx =
            CallContext::parse(unsafe { opt_str_arg(context_json, context_len, "context_json") }?)?;
        let s = rt.dispatch_batch(calls, &ctx)?;
        put_text(Text::new(&s), out_json, out_len);
        Ok(())
    })
}

/// A borrowed text of a live host request, or NULL (and length 0).
/// `out_len` must be NULL or valid for a `usize` write: every caller passes
/// its export's `out_len`, which that export's `# Safety` guarantees.
pub(crate) fn borrow_field(
    id: u64,
    kind: Kind,
    field: Field,
    out_len: *mut usize,
) -> *const c_char {
    match pending::borrow(id, kind, field) {
        Some((p, n)) => {
            if !out_len.is_null() {
                // SAFETY: non-NULL (checked above); every caller passes its export's `out_len`,
                // which that export's # Safety makes NULL or a writable size_t.
                unsafe { *out_len = n };
            }
            p as *const c_char
        }
        None => {
            if !out_len.is_null() {
                // SAFETY: as above: non-NULL, and the export's `out_len` is NULL or a writable
                // size_t.
                unsafe { *out_len = 0 };
            }
            std::ptr::null()
        }
    }
}

/// The call's arguments (JSON object text, repaired and validated). Borrowed:
/// valid until `ht_call_respond`, even after the call timed out or its
/// runtime was freed (then for at most 60 s). Not NUL-terminated: use
/// `*out_len`. NULL for a NULL, answered or unknown call.
///
/// # Safety
/// - `call` may be any value: it is an id, never dereferenced.
/// - `out_len` is NULL or points at a writable, aligned variable of the pointee type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_call_args_json(
    call: *const ht_call,
    out_len: *mut usize,
) -> *const c_char {
    boundary(|| borrow_field(call as u64, Kind::Call, Field::Payload, out_len))
}

/// The dispatch context of the call (JSON object text, `{}` when none was given).
/// Borrowed: valid until `ht_call_respond`, even after the call timed out or
/// its runtime was freed (then for at most 60 s). Not NUL-terminated: use `*out_len`.
///
/// # Safety
/// - `call` may be any value: it is an id, never dereferenced.
/// - `out_len` is NULL or points at a writable, aligned variable of the pointee type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_call_context_json(
    call: *const ht_call,
    out_len: *mut usize,
) -> *const c_char {
    boundary(|| borrow_field(call as u64, Kind::Call, Field::Extra, out_len))
}

/// The called tool's name. Borrowed: valid until `ht_call_respond`, even after
/// the call timed out or its runtime was freed (then for at most 60 s).
/// Not NUL-terminated.
///
/// # Safety
/// - `call` may be any value: it is an id, never dereferenced.
/// - `out_len` is NULL or points at a writable, aligned variable of the pointee type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_call_tool_name(
    call: *const ht_call,
    out_len: *mut usize,
) -> *const c_char {
    boundary(|| borrow_field(call as u64, Kind::Call, Field::Name, out_len))
}

/// The status a host gets for its answer to a pending request.
fn outcome_status(outcome: RespondOutcome) -> Status {
    match outcome {
        RespondOutcome::Delivered => Status::Ok,
        // The wait had ended: the answer is dropped; the status says how it ended.
        RespondOutcome::Late => Status::Timeout,
        RespondOutcome::LateCancelled => Status::Cancelled,
        // Answered before, its runtime freed, or never issued.
        RespondOutcome::Unknown => Status::NotFound,
        // A handle of another kind (an ht_hook given to ht_approval_respond...).
        RespondOutcome::WrongKind => Status::InvalidArgument,
    }
}

/// Answer a hook or approval with a JSON decision. Unreadable text still ends
/// the wait (as an empty decision) and its problem is the returned status.
/// `(decision_json, len)` must be NULL/0 or `len` readable bytes: every caller
/// passes its export's input, which that export's `# Safety` guarantees.
pub(crate) fn answer_decision(
    id: u64,
    kind: Kind,
    decision_json: *const c_char,
    len: usize,
) -> Status {
    if id == 0 {
        return Status::InvalidArgument;
    }
    // SAFETY: by this export's # Safety, `(decision_json, len)` is NULL/0 or len bytes readable and
    // unchanged until we return; the &str is not kept past the call (what is kept is copied).
    let (text, bad) = match unsafe { str_arg(decision_json, len, "decision_json") } {
        Ok(s) => (s.to_string(), None),
        Err(e) => (String::new(), Some(Status::from(e.kind))),
    };
    let answer = Answer::Responded {
        is_error: false,
        text,
    };
    match outcome_status(pending::respond(id, kind, answer)) {
        Status::Ok => bad.unwrap_or(Status::Ok),
        other => other,
    }
}

/// Answer a call exactly once, from any thread, now or later; this also frees
/// the call. `result` (copied) is the tool's text for the model; with
/// `is_error` it is wrapped as a sanitised `{"error": ...}`. Invalid UTF-8 is
/// delivered with replacement characters and reported as `HT_STATUS_INVALID_UTF8`.
/// A second answer gives `HT_STATUS_NOT_FOUND`; an answer after the wait
/// ended is dropped (the model already got the timeout or cancelled result)
/// and gives `HT_STATUS_TIMEOUT` after a timeout, `HT_STATUS_CANCELLED` after
/// `ht_runtime_cancel` or `ht_runtime_free` (within 60 s of the wait ending;
/// later, `HT_STATUS_NOT_FOUND`). All are harmless. See `ht_call_is_cancelled`
/// and `ht_call_on_cancel` to stop work early.
///
/// # Safety
/// - `call` may be any value: it is an id, never dereferenced.
/// - `result` is NULL with `result_len` 0, or points at `result_len` bytes that stay readable and
///   unchanged until this returns.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_call_respond(
    call: *mut ht_call,
    is_error: bool,
    result: *const c_char,
    result_len: usize,
) -> Status {
    boundary(|| {
        if call.is_null() || (result.is_null() && result_len > 0) {
            return Status::InvalidArgument;
        }
        let bytes: &[u8] = if result.is_null() {
            &[]
        } else {
            // SAFETY: `result` is non-NULL here and, by this export's # Safety, points at
            // `result_len` bytes readable and unchanged until we return; u8 needs no alignment. The
            // bytes are copied into `text` below before we return.
            unsafe { std::slice::from_raw_parts(result as *const u8, result_len) }
        };
        let (text, bad) = match std::str::from_utf8(bytes) {
            Ok(s) => (s.to_string(), false),
            Err(_) => (String::from_utf8_lossy(bytes).into_owned(), true),
        };
        let st = outcome_status(pending::respond(
            call as u64,
            Kind::Call,
            Answer::Responded { is_error, text },
        ));
        if st == Status::Ok && bad {
            Status::InvalidUtf8
        } else {
            st
        }
    })
}

/// Add a hook for `event`: `pre_tool_call` (answer `{}` to continue,
/// `{"action":"block","message":"..."}`, or `{"action":"rewrite","args":{...}}`),
/// `post_tool_call` (observe; answer `{}`), `transform_tool_result` (answer
/// `{"result":"..."}` to replace the text, `{}` to keep it). Hooks run on the
/// dispatching thread (sync) or the callback thread (async), in the order added.
/// `free_user_data` runs exactly once at runtime free, only if this succeeded.
///
/// # Safety
/// - `rt` is NULL or a runtime from `ht_runtime_new` that no thread frees before this returns.
/// - `event` is NULL with `event_len` 0, or points at `event_len` bytes that stay readable and
///   unchanged until this returns.
/// - `out_err` is NULL or points at a writable, aligned variable of the pointee type.
/// - `hook_fn`, `free_user_data` are each NULL or a function of the declared type that does not
///   unwind. They are called with `user_data` on library threads (see Thread safety at the top of
///   the header), so `user_data` must stay usable from any thread until `free_user_data` has run.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_runtime_add_hook(
    rt: *mut ht_runtime,
    event: *const c_char,
    event_len: usize,
    hook_fn: ht_hook_fn,
    user_data: *mut c_void,
    free_user_data: ht_free_fn,
    out_err: *mut *mut ht_error,
) -> Status {
    status_boundary(out_err, || {
        // SAFETY: `rt` is NULL (rt_ref rejects it) or, by this export's # Safety, a live runtime
        // that no thread frees before we return.
        let rt = unsafe { rt_ref(rt) }?;
        // SAFETY: by this export's # Safety, `(event, event_len)` is NULL/0 or event_len bytes
        // readable and unchanged until we return; the &str is not kept past the call (what is kept
        // is copied).
        let event = unsafe { str_arg(event, event_len, "event") }?;
        let f = hook_fn.ok_or_else(|| Error::invalid("hook_fn is NULL"))?;
        let data = host_data(rt, user_data, free_user_data);
        let hook = Arc::new(HostHook {
            func: f,
            data: data.clone(),
        });
        rt.add_hook(event, hook)?;
        data.arm();
        Ok(())
    })
}

/// Handle agent-loop tools (specs with `"agent_loop": true`, such as `todo`,
/// `memory` or `delegate_task` that the host's own loop owns) with `handler`:
/// their calls are repaired and validated as usual, then handed to it as an
/// `ht_call`, without hooks. NULL removes it; without one such calls answer
/// `{"error": "<name> must be handled by the agent loop"}`. `free_user_data`
/// runs exactly once when replaced or at runtime free.
///
/// # Safety
/// - `rt` is NULL or a runtime from `ht_runtime_new` that no thread frees before this returns.
/// - `out_err` is NULL or points at a writable, aligned variable of the pointee type.
/// - `handler`, `free_user_data` are each NULL or a function of the declared type that does not
///   unwind. They are called with `user_data` on library threads (see Thread safety at the top of
///   the header), so `user_data` must stay usable from any thread until `free_user_data` has run.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_runtime_set_interceptor(
    rt: *mut ht_runtime,
    handler: ht_tool_handler_fn,
    user_data: *mut c_void,
    free_user_data: ht_free_fn,
    out_err: *mut *mut ht_error,
) -> Status {
    status_boundary(out_err, || {
        // SAFETY: `rt` is NULL (rt_ref rejects it) or, by this export's # Safety, a live runtime
        // that no thread frees before we return.
        let rt = unsafe { rt_ref(rt) }?;
        let tool = match handler {
            Some(func) => {
                let data = host_data(rt, user_data, free_user_data);
                data.arm();
                Some(Arc::new(HostTool { func, data }) as Arc<dyn hermes_core::Tool>)
            }
            None => None,
        };
        rt.set_interceptor(tool)
    })
}

/// The hook event (JSON object text: `event`, `tool_name`, `args`, ids, and for
/// result events `result`, `status`, `duration_ms`). Borrowed: valid until
/// `ht_hook_respond`, even after the wait timed out or the runtime was freed
/// (then for at most 60 s). Not NUL-terminated.
///
/// # Safety
/// - `hook` may be any value: it is an id, never dereferenced.
/// - `out_len` is NULL or points at a writable, aligned variable of the pointee type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_hook_event_json(
    hook: *const ht_hook,
    out_len: *mut usize,
) -> *const c_char {
    boundary(|| borrow_field(hook as u64, Kind::Hook, Field::Payload, out_len))
}

/// Answer a hook exactly once (any thread); frees it. `decision_json` NULL/0 means `{}`.
///
/// # Safety
/// - `hook` may be any value: it is an id, never dereferenced.
/// - `decision_json` is NULL with `len` 0, or points at `len` bytes that stay readable and
///   unchanged until this returns.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_hook_respond(
    hook: *mut ht_hook,
    decision_json: *const c_char,
    len: usize,
) -> Status {
    boundary(|| answer_decision(hook as u64, Kind::Hook, decision_json, len))
}

/// Receive library events (background process completion, watch-pattern
/// matches, ...) as JSON on the callback thread. NULL `event_fn` removes the
/// handler. The previous handler's free function runs on the callback thread.
/// At most `limits.max_queued_events` events wait for a slow handler; newer
/// ones are dropped and counted, reported by an `{"type":"events_dropped",
/// "count":n}` event before the next one delivered.
///
/// # Safety
/// - `rt` is NULL or a runtime from `ht_runtime_new` that no thread frees before this returns.
/// - `out_err` is NULL or points at a writable, aligned variable of the pointee type.
/// - `event_fn`, `free_user_data` are each NULL or a function of the declared type that does not
///   unwind. They are called with `user_data` on library threads (see Thread safety at the top of
///   the header), so `user_data` must stay usable from any thread until `free_user_data` has run.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_runtime_set_event_handler(
    rt: *mut ht_runtime,
    event_fn: ht_event_fn,
    user_data: *mut c_void,
    free_user_data: ht_free_fn,
    out_err: *mut *mut ht_error,
) -> Status {
    status_boundary(out_err, || {
        // SAFETY: `rt` is NULL (rt_ref rejects it) or, by this export's # Safety, a live runtime
        // that no thread frees before we return.
        let rt = unsafe { rt_ref(rt) }?;
        // SAFETY: the two fn pointer types differ only in `*const c_char` vs `*const u8`, which
        // have the same size and ABI (c_char is i8 or u8), so calling through the transmuted
        // pointer is calling the host's function with its declared signature.
        let f = event_fn.map(|f| unsafe {
            std::mem::transmute::<
                unsafe extern "C" fn(*mut c_void, *const c_char, usize),
                unsafe extern "C" fn(*mut c_void, *const u8, usize),
            >(f)
        });
        let sink = match f {
            Some(func) => {
                let data = host_data(rt, user_data, free_user_data);
                data.arm();
                Some(Arc::new(HostEvents { func, data }) as Arc<dyn hermes_runtime::EventSink>)
            }
            None => None,
        };
        rt.set_event_sink(sink)
    })
}

/// Drop the state of a task (`task_id` from the dispatch context): its shell
/// state and its background processes (killed).
///
/// # Safety
/// - `rt` is NULL or a runtime from `ht_runtime_new` that no thread frees before this returns.
/// - `task_id` is NULL with `task_id_len` 0, or points at `task_id_len` bytes that stay readable
///   and unchanged until this returns.
/// - `out_err` is NULL or points at a writable, aligned variable of the pointee type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_runtime_cleanup_task(
    rt: *mut ht_runtime,
    task_id: *const c_char,
    task_id_len: usize,
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
        rt.cleanup_task(task);
        Ok(())
    })
}

/// Analyse a shell command without running it: `{"verdict":"allow"|"ask"|"block",
/// "reasons":[{"rule","description","tier","command"}],"commands":[[argv...]],"normalized":[...]}`.
/// A NULL runtime uses the default rules. Secrets are redacted in the output.
/// `*out_json` is owned: free with `ht_string_free`.
///
/// # Safety
/// - `rt` is NULL (NULL selects the default rules) or a runtime from `ht_runtime_new` that no
///   thread frees before this returns.
/// - `command` is NULL with `command_len` 0, or points at `command_len` bytes that stay readable
///   and unchanged until this returns.
/// - `out_json`, `out_len`, `out_err` are each NULL or point at a writable, aligned variable of the
///   pointee type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_command_check(
    rt: *mut ht_runtime,
    command: *const c_char,
    command_len: usize,
    out_json: *mut *mut c_char,
    out_len: *mut usize,
    out_err: *mut *mut ht_error,
) -> Status {
    status_boundary(out_err, || {
        require(out_json, "out_json")?;
        // SAFETY: by this export's # Safety, `(command, command_len)` is NULL/0 or command_len
        // bytes readable and unchanged until we return; the &str is not kept past the call (what is
        // kept is copied).
        let cmd = unsafe { str_arg(command, command_len, "command") }?;
        let engine: Arc<hermes_approval::Engine> = if rt.is_null() {
            DEFAULT_ENGINE.clone()
        } else {
            // SAFETY: `rt` is non-NULL here and, by this export's # Safety, a live runtime no
            // thread frees before we return.
            unsafe { rt_ref(rt) }?.services().approval_engine.clone()
        };
        let result = engine.check(cmd);
        let s = serde_json::to_string(&result)
            .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?;
        put_text(Text::new(&s), out_json, out_len);
        Ok(())
    })
}

/// Install a process-wide log handler (NULL `log_fn` removes it). `level` is
/// the most verbose level delivered (1 error .. 5 trace; 0 keeps the current).
/// Lines come from a library thread (`ht-log`), never while a library lock is
/// held. `free_user_data` of the previous handler runs after its last line.
///
/// # Safety
/// - `log_fn`, `free_user_data` are each NULL or a function of the declared type that does not
///   unwind. They are called with `user_data` on library threads (see Thread safety at the top of
///   the header), so `user_data` must stay usable from any thread until `free_user_data` has run.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_set_log_handler(
    log_fn: ht_log_fn,
    level: i32,
    user_data: *mut c_void,
    free_user_data: ht_free_fn,
) -> Status {
    boundary(|| {
        if !(0..=5).contains(&level) {
            return Status::InvalidArgument;
        }
        // SAFETY: `ht_log_fn`'s function and `LogFn` differ only in `*const c_char` vs `*const u8`,
        // which have the same size and ABI, so the transmuted pointer calls the host's function
        // with its declared signature.
        let f = log_fn.map(|f| unsafe {
            std::mem::transmute::<
                unsafe extern "C" fn(*mut c_void, i32, *const c_char, usize),
                crate::logging::LogFn,
            >(f)
        });
        crate::logging::set_handler(
            f,
            user_data,
            free_user_data,
            (level > 0).then_some(level as u8),
        );
        Status::Ok
    })
}

/// Free a string returned by the library (NULL is a no-op). Never pass
/// strings from elsewhere; never `free()` ours.
///
/// # Safety
/// - `s` is NULL or a string this library returned whose reference was not freed yet. Any other
///   pointer, or a second free, is undefined behaviour (it is detected only sometimes).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_string_free(s: *mut c_char) {
    boundary(|| {
        // SAFETY: free_raw's contract (NULL, or a live pointer from Text::into_raw) is exactly this
        // export's # Safety: every string the library hands out comes from into_raw.
        if !unsafe { Text::free_raw(s) } {
            tracing::error!(
                "ht_string_free: not a live string from this library; ignored (a double free is a host bug that cannot always be detected)"
            );
        }
    })
}

/// The status of an error (`HT_STATUS_INVALID_ARGUMENT` for NULL).
///
/// # Safety
/// - `err` is NULL or an error from this library not yet freed with `ht_error_free`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_error_code(err: *const ht_error) -> Status {
    boundary(|| {
        if err.is_null() {
            Status::InvalidArgument
        } else {
            // SAFETY: non-NULL (checked above) and, by this export's # Safety, a live `ht_error`
            // that set_err boxed; we only read a Copy field.
            unsafe { (*err).status }
        }
    })
}

/// The error message (one line, NUL-terminated). Borrowed: valid until `ht_error_free`.
/// NULL for a NULL error.
///
/// # Safety
/// - `err` is NULL or an error from this library not yet freed with `ht_error_free`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_error_message(err: *const ht_error) -> *const c_char {
    boundary(|| {
        if err.is_null() {
            std::ptr::null()
        } else {
            // SAFETY: non-NULL (checked above) and a live `ht_error` (this export's # Safety); the
            // returned pointer is into its CString, valid until ht_error_free, as documented.
            unsafe { (*err).message.as_ptr() }
        }
    })
}

/// Free an error (NULL is a no-op).
///
/// # Safety
/// - `err` is NULL or an error from this library not yet freed; it is not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_error_free(err: *mut ht_error) {
    boundary(|| {
        if !err.is_null() {
            // SAFETY: non-NULL (checked above) and, by this export's # Safety, a pointer set_err
            // made with Box::into_raw that was not freed yet and is not used afterwards, so the Box
            // is rebuilt and dropped exactly once.
            drop(unsafe { Box::from_raw(err) });
        }
    })
}

/// Serve the runtime's enabled tools (host callback tools, built-ins, plugin
/// and MCP-sourced tools) as an MCP server, on a thread of the library's, until
/// the client disconnects, `ht_mcp_server_free` or `ht_runtime_free`.
///
/// `options_json` (NULL/0 or `{}` = stdio on descriptors 0 and 1):
/// - `"transport": "stdio"` with `"read_fd"`, `"write_fd"` (default 0 and 1):
///   newline-delimited JSON-RPC over those descriptors. The library serves on
///   duplicates; the host keeps, and may close, its own.
/// - `"transport": "http"` with `"address"` (default `"127.0.0.1:0"`, a free
///   port): streamable HTTP at `/mcp`, loopback addresses only. Every request
///   must carry `Authorization: Bearer <token>`: the host's (`"token"`, or
///   `"token_file"`: its first line; at least 16 characters) or, by default,
///   one generated into a file only this user can read.
///   `ht_mcp_server_address` tells the URL and that file as JSON.
///   `"auth": "none"` turns authentication off (every local user can then
///   run commands). Also: `"allowed_origins"` (browser origins besides
///   loopback ones; `"null"` only when listed), `"token_dir"`, and the limits
///   `header_timeout_s` (10), `idle_timeout_s` (60), `max_connections`
///   (256), `max_sessions` (64), `session_idle_timeout_s` (600),
///   `max_body_bytes` (4 MiB), `session_max_calls` (16),
///   `session_max_processes` (8); README, MCP server.
/// - `"approvals"`: `"client"` (default: a command that needs approval is put
///   to the calling MCP client through elicitation, and denied when it cannot
///   answer; approvals of the host's own dispatches still go to its handler)
///   or `"host"` (the runtime's approval handler answers every call).
///
/// Each MCP session's calls run as a task of their own (cwd, environment and
/// background processes), which are also listed as `process://<id>` resources.
/// A host tool reaches the client that made its call with `ht_call_progress`,
/// `ht_call_log` and `ht_call_client_request` (sampling, elicitation, roots);
/// a tool whose spec has `"mcp_content": true` answers MCP content blocks.
///
/// On success `*out_server` owns a handle the host frees once with
/// `ht_mcp_server_free` (before or after `ht_runtime_free`, which stops the
/// server but leaves the handle to the host). Errors: bad options
/// (`HT_STATUS_INVALID_ARGUMENT`, `HT_STATUS_INVALID_JSON`), an address in use
/// (`HT_STATUS_INTERNAL`), a closed runtime (`HT_STATUS_CLOSED`). Any thread.
///
/// # Safety
/// - `rt` is NULL or a runtime from `ht_runtime_new` that no thread frees before this returns.
/// - `options_json` is NULL with `options_len` 0, or points at `options_len` bytes that stay
///   readable and unchanged until this returns.
/// - `out_server`, `out_err` are each NULL or point at a writable, aligned variable of the
///   pointee type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_runtime_serve_mcp(
    rt: *mut ht_runtime,
    options_json: *const c_char,
    options_len: usize,
    out_server: *mut *mut crate::serve::ht_mcp_server,
    out_err: *mut *mut ht_error,
) -> Status {
    status_boundary(out_err, || {
        require(rt, "runtime")?;
        require(out_server, "out_server")?;
        // SAFETY: `rt` is non-NULL (required above) and, by this export's # Safety, a live runtime
        // that no thread frees before we return; only shared borrows are taken.
        let handle = unsafe { &*rt };
        if handle.rt.is_closed() {
            return Err(Error::new(ErrorKind::Closed, "the runtime is closed"));
        }
        // SAFETY: by this export's # Safety, `(options_json, options_len)` is NULL/0 or
        // options_len bytes readable and unchanged until we return; the &str is not kept.
        let text = unsafe { str_arg(options_json, options_len, "options_json") }?;
        let serving = crate::serve::start(handle.rt.clone(), text)?;
        {
            let mut list = handle.servers.lock();
            list.retain(|w| w.strong_count() > 0);
            list.push(Arc::downgrade(&serving));
        }
        // SAFETY: `out_server` is non-NULL (required above) and, by this export's # Safety, points
        // at a writable `ht_mcp_server *`. Ownership passes to the host (ht_mcp_server_free).
        unsafe { *out_server = crate::serve::into_handle(serving) };
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ptr::null_mut;

    /// The definitions block the host gets is the one the core built and
    /// cached: no second copy (the C layer once copied every new text and
    /// kept its last 8 blocks alive, megabytes each at 10 000 tools).
    #[test]
    fn definitions_reach_the_host_without_a_copy() {
        let cfg = r#"{"builtin_toolsets":["todo"]}"#;
        let mut rt = std::ptr::null_mut();
        // SAFETY: the config is a live &str; `rt` is a local out-variable.
        let st = unsafe {
            ht_runtime_new(
                cfg.as_ptr() as *const c_char,
                cfg.len(),
                &mut rt,
                null_mut(),
            )
        };
        assert_eq!(st, Status::Ok);
        let (mut p, mut n) = (null_mut(), 0usize);
        // SAFETY: `rt` is live; the query is a live &str; outputs are locals.
        let st = unsafe {
            ht_runtime_definitions_json(
                rt,
                "{}".as_ptr() as *const c_char,
                2,
                &mut p,
                &mut n,
                null_mut(),
            )
        };
        assert_eq!(st, Status::Ok);
        // SAFETY: `rt` is live until the free below.
        let cached = unsafe { &*rt }.rt.definitions("{}").unwrap();
        assert!(cached.contains("\"todo\""));
        assert_eq!(
            cached.as_ptr(),
            p as *const u8,
            "the host's block is the cached one"
        );
        assert_eq!(cached.len(), n);
        // SAFETY: `p` came from ht_runtime_definitions_json; `rt` from ht_runtime_new.
        unsafe {
            ht_string_free(p);
            ht_runtime_free(rt);
        }
    }
}
