//! Cancellation of host tool calls, seen from the handler: `ht_call_is_cancelled`
//! to poll and `ht_call_on_cancel` to be told. Its own module so the call
//! object's cancellation contract reads in one place (and stays clear of the
//! other ffi modules edited in parallel).
//!
//! "Cancelled" means the library stopped waiting for the answer without
//! getting one: the call timed out, was cancelled with `ht_runtime_cancel`,
//! or its runtime was freed. Every such call ends the same way for the model
//! (an error result with `"status": "timeout"` or `"cancelled"`), and an
//! answer sent afterwards is dropped.

use std::ffi::c_void;

use hermes_core::pending::{self, Kind, State};

use crate::api::ht_free_fn;
use crate::boundary;
use crate::host::{SendPtr, ht_call};
use crate::status::Status;

/// A cancellation callback: `user_data` as given to `ht_call_on_cancel`, and the call.
pub type ht_cancel_fn = Option<unsafe extern "C" fn(user_data: *mut c_void, call: *mut ht_call)>;

/// One registration: runs `cb` then `free` when fired, only `free` when dropped unfired.
struct OnCancel {
    cb: unsafe extern "C" fn(*mut c_void, *mut ht_call),
    free: ht_free_fn,
    ud: SendPtr,
    call: u64,
}

impl OnCancel {
    fn fire(self) {
        // SAFETY: `cb` is the host's callback registered with this user_data and
        // call by `ht_call_on_cancel` (whose # Safety makes both usable from any
        // thread until `free_user_data` ran); it runs once: `fire` consumes self.
        unsafe { (self.cb)(self.ud.0, self.call as *mut ht_call) };
        // `free` runs in Drop, right after.
    }
}

impl Drop for OnCancel {
    fn drop(&mut self) {
        if let Some(free) = self.free {
            // SAFETY: the free function registered with this user_data; Drop runs
            // once, after `cb` ran (or when it never will), as the header says.
            unsafe { free(self.ud.0) };
        }
    }
}

/// Whether the library has stopped waiting for this call's answer: true after
/// a timeout, `ht_runtime_cancel` or `ht_runtime_free` (the answer would be
/// dropped), and for a handle that is no longer a waiting call (answered,
/// forgotten 60 s after the wait ended, never issued, NULL, or an `ht_hook` /
/// `ht_approval`). False only while the call waits for its answer, so a
/// handler may poll it and stop working when it turns true. Never blocks.
///
/// Thread: any. Note that a synchronous `ht_runtime_dispatch` waits (and so
/// can time out) only after the handler returns: a handler that wants to
/// notice its timeout must return and answer later from another thread.
///
/// # Safety
/// - `call` may be any value: it is an id, never dereferenced.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_call_is_cancelled(call: *const ht_call) -> bool {
    boundary(|| {
        let id = call as u64;
        id == 0 || pending::state(id, Kind::Call) != State::Waiting
    })
}

/// Ask to be told when the library stops waiting for this call's answer
/// (timeout, `ht_runtime_cancel`, `ht_runtime_free`): `cb(user_data, call)` runs
/// at most once, on the thread that ended the wait (an engine thread at an
/// async call's timeout, the dispatching thread at a synchronous call's,
/// the thread calling `ht_runtime_cancel` or `ht_runtime_free`), never while
/// the library holds a lock, so it may call any `ht_call_*` function. If the
/// call is already cancelled, `cb` runs at once, inside this call. If the
/// call is answered first (`ht_call_respond` returns `HT_STATUS_OK`), `cb`
/// never runs. `cb` must be quick and must not block (signal a condition,
/// cancel a context). Several registrations on one call all run, in order.
///
/// `free_user_data` (may be NULL) runs exactly once if this returns
/// `HT_STATUS_OK`: right after `cb`, or when `cb` will never run (inside the
/// `ht_call_respond` that answered the call). On any other status neither
/// function runs and the caller keeps `user_data`.
///
/// Returns `HT_STATUS_OK`, `HT_STATUS_INVALID_ARGUMENT` (NULL `cb` or `call`,
/// or a handle of another kind) or `HT_STATUS_NOT_FOUND` (already answered,
/// forgotten, or never issued).
///
/// # Safety
/// - `call` may be any value: it is an id, never dereferenced.
/// - `cb`, `free_user_data` are each NULL or a function of the declared type that does not unwind.
///   They are called with `user_data` on library threads (see Thread safety at the top of the
///   header), so `user_data` must stay usable from any thread until `free_user_data` has run (or,
///   without one, until the call is answered or `cb` has returned).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_call_on_cancel(
    call: *mut ht_call,
    cb: ht_cancel_fn,
    user_data: *mut c_void,
    free_user_data: ht_free_fn,
) -> Status {
    boundary(|| {
        let id = call as u64;
        let Some(cb) = cb else {
            return Status::InvalidArgument;
        };
        if id == 0 {
            return Status::InvalidArgument;
        }
        let reg = OnCancel {
            cb,
            free: free_user_data,
            ud: SendPtr(user_data),
            call: id,
        };
        // Kept in a slot so a refusal can hand the registration back unrun
        // (and without running `free`: the caller keeps user_data).
        let slot = std::sync::Arc::new(parking_lot::Mutex::new(Some(reg)));
        let s2 = slot.clone();
        let f: pending::OnAbandon = Box::new(move || {
            if let Some(r) = s2.lock().take() {
                r.fire();
            }
        });
        match pending::on_abandon(id, Kind::Call, f) {
            Ok(()) => Status::Ok,
            Err((State::Abandoned, f)) => {
                f();
                Status::Ok
            }
            Err((state, f)) => {
                drop(f);
                if let Some(mut r) = slot.lock().take() {
                    r.free = None;
                }
                match state {
                    State::WrongKind => Status::InvalidArgument,
                    _ => Status::NotFound,
                }
            }
        }
    })
}
