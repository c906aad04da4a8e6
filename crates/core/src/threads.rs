//! The callbacks thread: every asynchronous call into host code happens
//! here, in order (completions, free functions, events, async tool calls).
//! Each job runs under `catch_unwind`, so one bad job cannot kill the thread
//! and silently break "exactly once". Timers live in the engine.

use parking_lot::Mutex;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc::{Sender, channel};
use std::thread::{JoinHandle, ThreadId};

pub type Job = Box<dyn FnOnce() + Send>;

/// The `ht-callbacks` thread.
pub struct CallbackThread {
    tx: Mutex<Option<Sender<Job>>>,
    handle: Mutex<Option<JoinHandle<()>>>,
    thread_id: ThreadId,
}

impl CallbackThread {
    /// Start the thread; fails cleanly (no panic) when the system cannot create it.
    pub fn start(name: &str) -> crate::error::Result<CallbackThread> {
        let (tx, rx) = channel::<Job>();
        let handle = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                while let Ok(job) = rx.recv() {
                    if catch_unwind(AssertUnwindSafe(job)).is_err() {
                        tracing::error!("a callback-thread job panicked (bug); continuing");
                    }
                }
            })
            .map_err(|e| {
                crate::error::Error::new(
                    crate::error::ErrorKind::Internal,
                    format!("could not start the {name} thread: {e}"),
                )
            })?;
        let thread_id = handle.thread().id();
        Ok(CallbackThread {
            tx: Mutex::new(Some(tx)),
            handle: Mutex::new(Some(handle)),
            thread_id,
        })
    }

    /// Queue a job; if the thread has stopped, run it here (shutdown path).
    pub fn post(&self, job: Job) {
        let sender = self.tx.lock().clone();
        match sender {
            Some(tx) => {
                if let Err(e) = tx.send(job) {
                    (e.0)();
                }
            }
            None => job(),
        }
    }

    pub fn is_current(&self) -> bool {
        std::thread::current().id() == self.thread_id
    }

    /// Stop accepting jobs, run what is queued, join (unless called from the
    /// callback thread itself, which cannot join itself).
    pub fn shutdown(&self) {
        let tx = self.tx.lock().take();
        drop(tx);
        let handle = self.handle.lock().take();
        if let Some(h) = handle {
            if self.is_current() {
                // Detached: it exits once the current job returns and the queue drains.
                return;
            }
            let _ = h.join();
        }
    }
}
