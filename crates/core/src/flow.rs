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
        self.token.cancel();
        let w = self.waiting.load(Ordering::SeqCst);
        if w != 0 {
            pending::abandon(w, Answer::Cancelled);
        }
    }
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }
}
