//! Host callbacks as the library holds them: function pointers plus the
//! registration's `user_data` and its free function, which runs exactly once,
//! on the callback thread, after the last callback that shares it.

use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::threads::CallbackThread;

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

/// `user_data` plus its free function. Dropping the last reference queues the
/// free function on the callback thread (or runs it here once that thread is gone).
pub struct HostData {
    pub user_data: *mut c_void,
    free: Option<FreeFn>,
    armed: AtomicBool,
    callbacks: Arc<CallbackThread>,
}

// The host promises user_data is usable from any thread (documented in the header).
unsafe impl Send for HostData {}
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
        })
    }
    /// Registration succeeded: from now on the free function will run on drop.
    pub fn arm(&self) {
        self.armed.store(true, Ordering::Release);
    }
}

impl Drop for HostData {
    fn drop(&mut self) {
        if !self.armed.load(Ordering::Acquire) {
            return;
        }
        if let Some(free) = self.free {
            let ud = SendPtr(self.user_data);
            self.callbacks.post(Box::new(move || {
                let ud = ud;
                unsafe { free(ud.0) }
            }));
        }
    }
}

/// A raw pointer that we promise to move between threads (host user_data).
#[derive(Clone, Copy)]
pub struct SendPtr(pub *mut c_void);
unsafe impl Send for SendPtr {}
unsafe impl Sync for SendPtr {}
