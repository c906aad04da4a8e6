//! [`FlowCtl`]: the cancellation control block of one asynchronous call.
//! Its own module because both the core (which cancels every flow at close)
//! and dispatch (which runs the flow) hold it, and neither should import the other for it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::pending::{self, Answer};
use crate::tool::CancelToken;

/// Control block of an async flow (cancellation).
#[derive(Default)]
pub struct FlowCtl {
    cancelled: AtomicBool,
    pub(crate) waiting: AtomicU64,
    pub token: CancelToken,
}

impl FlowCtl {
    /// SeqCst pairs with the flow's `waiting` store then `cancelled` load, so
    /// at least one side sees the other: a cancel is never lost.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
        let w = self.waiting.load(Ordering::SeqCst);
        if w != 0 {
            pending::abandon(w, Answer::Cancelled);
        }
        // After the wait ended: a built-in tool that answers at once when its
        // token fires (a killed terminal command, exit 130) must not win the
        // race, so every cancelled call ends the same way, as cancelled.
        self.token.cancel();
    }
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }
}
