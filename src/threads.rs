//! Library-owned threads: the callback thread (every asynchronous call into
//! host code happens here, in order) and a timer thread (deadlines of async
//! calls). Both run each job under `catch_unwind`, so one bad job cannot kill
//! the thread and silently break "exactly once".

use parking_lot::{Condvar, Mutex};
use std::collections::{BTreeMap, HashMap};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::mpsc::{Sender, channel};
use std::thread::{JoinHandle, ThreadId};
use std::time::Instant;

pub type Job = Box<dyn FnOnce() + Send>;

/// The `ht-callbacks` thread.
pub struct CallbackThread {
    tx: Mutex<Option<Sender<Job>>>,
    handle: Mutex<Option<JoinHandle<()>>>,
    thread_id: ThreadId,
}

impl CallbackThread {
    pub fn start(name: &str) -> CallbackThread {
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
            .expect("spawn callback thread");
        let thread_id = handle.thread().id();
        CallbackThread {
            tx: Mutex::new(Some(tx)),
            handle: Mutex::new(Some(handle)),
            thread_id,
        }
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

struct TimerState {
    due: BTreeMap<(Instant, u64), Job>,
    index: HashMap<u64, Instant>,
    stop: bool,
    next_key: u64,
}

/// A single thread firing deadline jobs. Jobs must only queue work.
pub struct Timer {
    state: Arc<(Mutex<TimerState>, Condvar)>,
    handle: Mutex<Option<JoinHandle<()>>>,
}

impl Timer {
    pub fn start(name: &str) -> Timer {
        let state = Arc::new((
            Mutex::new(TimerState {
                due: BTreeMap::new(),
                index: HashMap::new(),
                stop: false,
                next_key: 1,
            }),
            Condvar::new(),
        ));
        let st = state.clone();
        let handle = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let (lock, cv) = &*st;
                let mut g = lock.lock();
                loop {
                    if g.stop {
                        return;
                    }
                    let now = Instant::now();
                    let first = g.due.keys().next().copied();
                    match first {
                        Some((at, key)) if at <= now => {
                            let job = g.due.remove(&(at, key)).expect("present");
                            g.index.remove(&key);
                            drop(g);
                            if catch_unwind(AssertUnwindSafe(job)).is_err() {
                                tracing::error!("a timer job panicked (bug); continuing");
                            }
                            g = lock.lock();
                        }
                        Some((at, _)) => {
                            cv.wait_until(&mut g, at);
                        }
                        None => cv.wait(&mut g),
                    }
                }
            })
            .expect("spawn timer thread");
        Timer {
            state,
            handle: Mutex::new(Some(handle)),
        }
    }

    /// Run `job` at `at`; returns a key for `cancel`.
    pub fn schedule(&self, at: Instant, job: Job) -> u64 {
        let (lock, cv) = &*self.state;
        let mut g = lock.lock();
        let key = g.next_key;
        g.next_key += 1;
        g.due.insert((at, key), job);
        g.index.insert(key, at);
        drop(g);
        cv.notify_one();
        key
    }

    pub fn cancel(&self, key: u64) {
        let (lock, _) = &*self.state;
        let mut g = lock.lock();
        if let Some(at) = g.index.remove(&key) {
            let job = g.due.remove(&(at, key));
            drop(g);
            drop(job);
        }
    }

    /// Stop the thread; pending jobs are dropped without running.
    pub fn shutdown(&self) {
        let (lock, cv) = &*self.state;
        let jobs = {
            let mut g = lock.lock();
            g.stop = true;
            g.index.clear();
            std::mem::take(&mut g.due)
        };
        cv.notify_all();
        drop(jobs);
        if let Some(h) = self.handle.lock().take() {
            let _ = h.join();
        }
    }
}
