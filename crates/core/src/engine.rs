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
                let rt = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(self.0.workers)
                    .max_blocking_threads(64)
                    .thread_name("ht-engine")
                    .enable_time()
                    .enable_io()
                    .build()
                    .map_err(|e| {
                        tracing::error!("could not start the tokio engine: {e}");
                    })?;
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
                h.spawn_blocking(f);
            }
            None => f(),
        }
    }

    /// Spawn a future; `None` after shutdown.
    pub fn spawn<F>(&self, fut: F) -> Option<tokio::task::AbortHandle>
    where
        F: Future<Output = ()> + Send + 'static,
    {
        self.handle().map(|h| h.spawn(fut).abort_handle())
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
            rt.shutdown_timeout(Duration::from_millis(100));
        }
    }
}
