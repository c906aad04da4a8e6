//! The runtime's tokio engine: one multi-thread runtime per `Core`, with a
//! small worker count, created on first use (a host that only dispatches
//! synchronously never starts it) and shut down on close. Timers of async
//! calls, blocking work of async native calls, batch concurrency and
//! availability checks run here: no thread is created per call, per check
//! or per batch chunk. Host code never runs on a worker thread.

use parking_lot::Mutex;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

struct Inner {
    workers: usize,
    rt: Mutex<Option<tokio::runtime::Runtime>>,
    handle: once_cell::sync::OnceCell<tokio::runtime::Handle>,
    closed: AtomicBool,
}

/// A cheap handle to the engine (clones share it).
#[derive(Clone)]
pub struct Engine(Arc<Inner>);

impl Engine {
    pub fn new(workers: usize) -> Engine {
        Engine(Arc::new(Inner {
            workers: workers.max(1),
            rt: Mutex::new(None),
            handle: once_cell::sync::OnceCell::new(),
            closed: AtomicBool::new(false),
        }))
    }

    /// The runtime handle, starting the runtime on first use; `None` once
    /// shut down (or when it cannot start: the caller then runs inline).
    pub fn handle(&self) -> Option<&tokio::runtime::Handle> {
        if self.0.closed.load(Ordering::Acquire) {
            return None;
        }
        self.0
            .handle
            .get_or_try_init(|| {
                // tokio panics (rather than erring) when the OS refuses a
                // worker thread: that is an error here, quietly, and the next
                // use tries again.
                let built = crate::threads::quietly(|| {
                    tokio::runtime::Builder::new_multi_thread()
                        .worker_threads(self.0.workers)
                        .max_blocking_threads(64)
                        .thread_name("ht-engine")
                        .enable_time()
                        .enable_io()
                        .build()
                });
                let rt = match built {
                    Ok(Ok(rt)) => rt,
                    Ok(Err(e)) => {
                        tracing::error!("could not start the tokio engine: {e}");
                        return Err(());
                    }
                    Err(_) => {
                        tracing::error!(
                            "could not start the tokio engine: the system cannot create threads"
                        );
                        return Err(());
                    }
                };
                let h = rt.handle().clone();
                *self.0.rt.lock() = Some(rt);
                Ok::<_, ()>(h)
            })
            .ok()
    }

    /// Whether the engine was ever started (tests count threads with this).
    pub fn started(&self) -> bool {
        self.0.handle.get().is_some()
    }

    /// Run blocking work on the engine's blocking pool (threads are reused).
    /// After shutdown, or when the engine cannot start, it runs right here.
    pub fn spawn_blocking(&self, f: impl FnOnce() + Send + 'static) {
        match self.handle() {
            Some(h) => {
                // tokio panics when it has no thread and cannot create one:
                // the work then runs here, so it is never lost.
                let slot = Arc::new(Mutex::new(Some(f)));
                let theirs = slot.clone();
                let spawned = crate::threads::quietly(|| {
                    h.spawn_blocking(move || {
                        if let Some(f) = theirs.lock().take() {
                            f();
                        }
                    });
                });
                if spawned.is_err() {
                    tracing::warn!("no thread for blocking work; running it on the caller");
                    let f = slot.lock().take();
                    if let Some(f) = f {
                        f();
                    }
                }
            }
            None => f(),
        }
    }

    /// Spawn a future; `None` after shutdown.
    pub fn spawn<F>(&self, fut: F) -> Option<tokio::task::AbortHandle>
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let h = self.handle()?;
        // A task spawn allocates no thread, but stay on the safe side: a
        // panic here would lose the caller's continuation.
        crate::threads::quietly(|| h.spawn(fut).abort_handle()).ok()
    }

    /// Run `job` at `at` (a timer that wakes, no polling thread). Returns a
    /// handle that cancels it; `None` after shutdown (the job never runs).
    pub fn at(
        &self,
        at: Instant,
        job: impl FnOnce() + Send + 'static,
    ) -> Option<tokio::task::AbortHandle> {
        self.spawn(async move {
            tokio::time::sleep_until(at.into()).await;
            job();
        })
    }

    /// Stop the runtime: timers are dropped, blocking work still running is
    /// left to finish on its own (bounded wait).
    pub fn shutdown(&self) {
        self.0.closed.store(true, Ordering::Release);
        let rt = self.0.rt.lock().take();
        if let Some(rt) = rt {
            if tokio::runtime::Handle::try_current().is_ok() {
                // Closed from async code (a Rust host on its own tokio
                // runtime, the MCP server): waiting would panic there.
                rt.shutdown_background();
            } else {
                rt.shutdown_timeout(Duration::from_millis(100));
            }
        }
    }
}
