//! The callbacks thread: every asynchronous call into host code happens
//! here, in order (completions, free functions, events, async tool calls).
//! Each job runs under `catch_unwind`, so one bad job cannot kill the thread
//! and silently break "exactly once". Timers live in the engine.

use parking_lot::{Condvar, Mutex};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Sender, channel};
use std::thread::{JoinHandle, ThreadId};
use std::time::{Duration, Instant};

pub type Job = Box<dyn FnOnce() + Send>;

thread_local! {
    /// Set while [`quietly`] runs: a panic caught there is not printed.
    static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}
static QUIET_HOOK: std::sync::Once = std::sync::Once::new();

/// Run `f`, catching a panic without printing it (the previous panic hook
/// still runs for every other panic). For library code that can panic on
/// resource exhaustion (tokio panics when the OS cannot create a thread),
/// where the failure is handled and reported as an error instead.
pub fn quietly<T>(f: impl FnOnce() -> T) -> std::thread::Result<T> {
    QUIET_HOOK.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(|q| q.get()) {
                prev(info);
            }
        }));
    });
    let was = QUIET.with(|q| q.replace(true));
    let out = catch_unwind(AssertUnwindSafe(f));
    QUIET.with(|q| q.set(was));
    out
}

/// What the thread shares with its owner: jobs queued and not yet finished,
/// and whether the thread has exited.
#[derive(Default)]
struct State {
    queued: AtomicUsize,
    exited: Mutex<bool>,
    exit: Condvar,
}

/// The `ht-callbacks` thread.
pub struct CallbackThread {
    tx: Mutex<Option<Sender<Job>>>,
    handle: Mutex<Option<JoinHandle<()>>>,
    thread_id: ThreadId,
    state: Arc<State>,
}

/// Marks the thread exited even if it unwinds.
struct ExitMark(Arc<State>);
impl Drop for ExitMark {
    fn drop(&mut self) {
        *self.0.exited.lock() = true;
        self.0.exit.notify_all();
    }
}

impl CallbackThread {
    /// Start the thread; fails cleanly (no panic) when the system cannot create it.
    pub fn start(name: &str) -> crate::error::Result<CallbackThread> {
        let (tx, rx) = channel::<Job>();
        let state = Arc::new(State::default());
        let st = state.clone();
        let handle = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let _mark = ExitMark(st.clone());
                while let Ok(job) = rx.recv() {
                    if catch_unwind(AssertUnwindSafe(job)).is_err() {
                        tracing::error!("a callback-thread job panicked (bug); continuing");
                    }
                    st.queued.fetch_sub(1, Ordering::AcqRel);
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
            state,
        })
    }

    /// Queue a job; if the thread has stopped, run it here (shutdown path).
    pub fn post(&self, job: Job) {
        let sender = self.tx.lock().clone();
        match sender {
            Some(tx) => {
                self.state.queued.fetch_add(1, Ordering::AcqRel);
                if let Err(e) = tx.send(job) {
                    self.state.queued.fetch_sub(1, Ordering::AcqRel);
                    (e.0)();
                }
            }
            None => job(),
        }
    }

    pub fn is_current(&self) -> bool {
        std::thread::current().id() == self.thread_id
    }

    /// Jobs queued or running (diagnostics).
    pub fn queued(&self) -> usize {
        self.state.queued.load(Ordering::Acquire)
    }

    /// Stop accepting jobs, run what is queued, join (unless called from the
    /// callback thread itself, which cannot join itself).
    pub fn shutdown(&self) {
        self.shutdown_within(None);
    }

    /// Like [`shutdown`](Self::shutdown), but wait at most `limit`: a thread
    /// still busy then (a host callback that does not return) is detached and
    /// finishes its queue on its own; it only holds what its jobs own, never
    /// the runtime handle. Returns false when it was detached.
    pub fn shutdown_within(&self, limit: Option<Duration>) -> bool {
        let tx = self.tx.lock().take();
        drop(tx);
        let handle = self.handle.lock().take();
        let Some(h) = handle else {
            return true;
        };
        if self.is_current() {
            // Detached: it exits once the current job returns and the queue drains.
            return true;
        }
        if let Some(limit) = limit {
            let until = Instant::now() + limit;
            let mut exited = self.state.exited.lock();
            while !*exited {
                if self.state.exit.wait_until(&mut exited, until).timed_out() {
                    break;
                }
            }
            if !*exited {
                drop(exited);
                tracing::warn!(
                    "the callbacks thread is still in host code after {limit:?}; detached with {} job(s) left (completions and free functions run when that code returns)",
                    self.queued()
                );
                drop(h);
                return false;
            }
        }
        let _ = h.join();
        true
    }
}
