//! Host callbacks as the library holds them: function pointers plus the
//! registration's `user_data` and its free function, which runs exactly once,
//! on the callback thread, after the last callback that shares it. Each kind
//! of callback is an implementation of a core or runtime trait (`Tool`,
//! `Hook`, `Check`, `ApprovalSink`, `EventSink`), so nothing below the C ABI
//! knows about function pointers.

use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use hermes_core::hooks::{Hook, HookReply};
use hermes_core::threads::CallbackThread;
use hermes_core::{Tool, ToolCall};
use hermes_runtime::{ApprovalSink, EventSink};

/// Opaque handle for a tool call (`ht_call*`); its value is an id, never dereferenced.
pub struct ht_call {
    _private: [u8; 0],
}

/// Opaque handle for a hook event (`ht_hook*`).
pub struct ht_hook {
    _private: [u8; 0],
}

/// Opaque handle for an approval request (`ht_approval*`).
pub struct ht_approval {
    _private: [u8; 0],
}

pub type FreeFn = unsafe extern "C" fn(user_data: *mut c_void);
pub type HandlerFn = unsafe extern "C" fn(user_data: *mut c_void, call: *mut ht_call);
pub type CheckFn = unsafe extern "C" fn(user_data: *mut c_void) -> bool;
pub type HookFn = unsafe extern "C" fn(user_data: *mut c_void, hook: *mut ht_hook);

/// What keeps a plugin library mapped: registrations made while its
/// `ht_plugin_init` runs hold one, so its code outlives every callback.
pub type KeepAlive = Arc<dyn std::any::Any + Send + Sync>;

thread_local! {
    /// The plugin whose `ht_plugin_init` runs on this thread, if any.
    static LOADING: std::cell::RefCell<Option<KeepAlive>> = const { std::cell::RefCell::new(None) };
}

/// Run `f` with `keep` attached to every registration made on this thread
/// meanwhile (a plugin's init; see plugin.rs).
pub fn while_loading<R>(keep: KeepAlive, f: impl FnOnce() -> R) -> R {
    struct Reset(Option<KeepAlive>);
    impl Drop for Reset {
        fn drop(&mut self) {
            let old = self.0.take();
            LOADING.with(|l| *l.borrow_mut() = old);
        }
    }
    let _reset = Reset(LOADING.with(|l| l.borrow_mut().replace(keep)));
    f()
}

/// `user_data` plus its free function. Dropping the last reference queues the
/// free function on the callback thread (or runs it here once that thread is gone).
pub struct HostData {
    pub user_data: *mut c_void,
    free: Option<FreeFn>,
    armed: AtomicBool,
    callbacks: Arc<CallbackThread>,
    /// The plugin library whose code `free` and the callbacks are, if any:
    /// released only after `free` ran.
    keep: Option<KeepAlive>,
}

// SAFETY: the library never dereferences `user_data`; it only passes it back to
// the host's callbacks and free function, which the header says run on library
// threads (the callback thread, check workers, any dispatching thread), so
// registering it is the host's promise that it may cross threads. `free` is a
// plain fn pointer, and the other fields are Send.
unsafe impl Send for HostData {}
// SAFETY: shared access only reads `user_data`/`free` (copied out, never
// written after `new`) and the atomic `armed`; concurrent callbacks with the
// same user_data are allowed by the header's thread-safety rules.
unsafe impl Sync for HostData {}

impl HostData {
    pub fn new(
        user_data: *mut c_void,
        free: Option<FreeFn>,
        callbacks: Arc<CallbackThread>,
    ) -> Arc<Self> {
        Arc::new(HostData {
            user_data,
            free,
            armed: AtomicBool::new(false),
            callbacks,
            keep: LOADING.with(|l| l.borrow().clone()),
        })
    }
    /// Registration succeeded: from now on the free function will run on drop.
    pub fn arm(&self) {
        self.armed.store(true, Ordering::Release);
    }
}

impl Drop for HostData {
    fn drop(&mut self) {
        let keep = self.keep.take();
        if !self.armed.load(Ordering::Acquire) {
            return;
        }
        if let Some(free) = self.free {
            let ud = SendPtr(self.user_data);
            self.callbacks.post(Box::new(move || {
                let ud = ud;
                // Dropped after `free` returned: the plugin stays mapped until then.
                let _keep = keep;
                // SAFETY: `free` is the function the host registered for this
                // user_data. It runs once: Drop runs once per HostData and only
                // when armed (the registration succeeded), and it is queued
                // after every callback sharing the data (they held this Arc).
                unsafe { free(ud.0) }
            }));
        }
    }
}

/// A raw pointer that we promise to move between threads (host user_data).
#[derive(Clone, Copy)]
pub struct SendPtr(pub *mut c_void);
// SAFETY: only host user_data pointers are wrapped; the library never
// dereferences them and hands them back to host callbacks that the header
// says run on library threads, so the host has agreed they cross threads.
unsafe impl Send for SendPtr {}
// SAFETY: `&SendPtr` only allows copying the pointer value out; see Send.
unsafe impl Sync for SendPtr {}

/// A host tool handler: the call's id is its `ht_call*` handle.
pub struct HostTool {
    pub func: HandlerFn,
    pub data: Arc<HostData>,
}

impl Tool for HostTool {
    fn call(&self, call: ToolCall<'_>) {
        let id = call.reply.id();
        // SAFETY: `func` is the handler the host registered together with
        // `user_data` (kept alive by `self.data`), called with exactly that
        // pointer as the C contract allows. The `ht_call*` is the pending
        // call's id, never a real address: the host only passes it back to
        // ht_call_* functions, which treat it as an integer.
        unsafe { (self.func)(self.data.user_data, id as *mut ht_call) };
    }
    fn wants_value(&self) -> bool {
        false
    }
}

/// A host hook: the event's id is its `ht_hook*` handle.
pub struct HostHook {
    pub func: HookFn,
    pub data: Arc<HostData>,
}

impl Hook for HostHook {
    fn call(&self, _event: &Arc<str>, reply: HookReply) {
        // SAFETY: `func` is the hook the host registered together with
        // `user_data` (kept alive by `self.data`); the `ht_hook*` is the
        // pending event's id, only ever passed back to ht_hook_* functions.
        unsafe { (self.func)(self.data.user_data, reply.id() as *mut ht_hook) };
    }
}

/// A host availability check.
pub struct HostCheck {
    pub func: CheckFn,
    pub data: Arc<HostData>,
}

impl hermes_core::availability::Check for HostCheck {
    fn check(&self) -> bool {
        // SAFETY: `func` is the check the host registered together with
        // `user_data` (kept alive by `self.data`), called with that pointer.
        unsafe { (self.func)(self.data.user_data) }
    }
    fn key(&self) -> (usize, usize) {
        (self.func as usize, self.data.user_data as usize)
    }
}

pub type ApprovalFn = unsafe extern "C" fn(user_data: *mut c_void, approval: *mut ht_approval);

/// A host approval handler or reviewer: the request's id is its `ht_approval*` handle.
pub struct HostApproval {
    pub func: ApprovalFn,
    pub data: Arc<HostData>,
}

impl ApprovalSink for HostApproval {
    fn ask(&self, _request: &Arc<str>, id: u64) {
        // SAFETY: `func` is the approval handler or reviewer the host set
        // together with `user_data` (kept alive by `self.data`); the
        // `ht_approval*` is the request's id, only passed back to
        // ht_approval_* functions.
        unsafe { (self.func)(self.data.user_data, id as *mut ht_approval) };
    }
}

pub type EventFn = unsafe extern "C" fn(*mut c_void, *const u8, usize);

/// The host's event handler.
pub struct HostEvents {
    pub func: EventFn,
    pub data: Arc<HostData>,
}

impl EventSink for HostEvents {
    fn event(&self, json: &str) {
        // SAFETY: `func` is the event handler the host set together with
        // `user_data` (kept alive by `self.data`). `(ptr, len)` come from the
        // live `json` borrow, which outlives the call, as the header promises
        // ("borrowed for this invocation only").
        unsafe { (self.func)(self.data.user_data, json.as_ptr(), json.len()) };
    }
}
