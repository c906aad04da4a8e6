//! Drive a started process to completion: read its merged output as it
//! comes (event driven on the output fd and a pidfd), enforce the timeout
//! and cancellation by killing the whole tree (TERM, then KILL after a grace
//! period), stop reading shortly after the main process exited even if a
//! backgrounded grandchild still holds the pipe, then kill leftovers of the
//! group and reap the child (no zombies).
//!
//! One state machine ([`Pump`]) with two drivers: [`pump`] waits with
//! `poll(2)` on the calling thread (foreground commands of a synchronous
//! dispatch run inline), [`pump_async`] waits on the tokio reactor (a
//! background process is a task on the engine, not a thread of its own).

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use crate::env::Environment;
use crate::sys::{self, ExitWatch};
use tokio_util::sync::CancellationToken as CancelToken;

/// How the run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    Exited,
    TimedOut,
    Cancelled,
}

pub struct PumpOpts<'a> {
    pub timeout: Option<Duration>,
    pub cancel: Option<&'a CancelToken>,
    pub grace: Duration,
    /// How long to keep reading after the main process exited while the
    /// output is still open (a grandchild holds it) and quiet.
    pub drain_idle: Duration,
    /// Hard cap on reading after the main process exited.
    pub drain_max: Duration,
    /// Background processes: after the main process exited, keep going
    /// while other members of its session/group still live (a script that
    /// started a server and returned), so they stay tracked and killable.
    /// The main process is reaped at once (no zombie); the kernel keeps its
    /// pid reserved while it is still the id of a live group or session.
    pub follow_group: bool,
}

impl Default for PumpOpts<'_> {
    fn default() -> Self {
        PumpOpts {
            timeout: None,
            cancel: None,
            grace: Duration::from_secs(1),
            drain_idle: Duration::from_millis(60),
            drain_max: Duration::from_millis(1000),
            follow_group: false,
        }
    }
}

/// What the driver waits for next.
struct Wait {
    ms: i64,
    read: bool,
    exit: bool,
}

/// The state of one run, shared by both drivers.
struct Pump<'a> {
    pid: i32,
    opts: &'a PumpOpts<'a>,
    watch: ExitWatch,
    deadline: Option<Instant>,
    buf: Vec<u8>,
    eof: bool,
    exited_at: Option<Instant>,
    last_data: Instant,
    ended: Ended,
    term_at: Option<Instant>,
    killed_hard: bool,
    group_alive: bool,
    group_checked: Option<Instant>,
    reaped: Option<i32>,
    /// The driver wakes at once when `opts.cancel` fires, so the wait need
    /// not be cut short to notice it.
    cancel_wakes: bool,
}

impl<'a> Pump<'a> {
    fn new(pid: i32, opts: &'a PumpOpts<'a>) -> Pump<'a> {
        let start = Instant::now();
        Pump {
            pid,
            opts,
            watch: ExitWatch::new(pid),
            deadline: opts.timeout.map(|t| start + t),
            buf: vec![0u8; 64 * 1024],
            eof: false,
            exited_at: None,
            last_data: start,
            ended: Ended::Exited,
            term_at: None,
            killed_hard: false,
            group_alive: false,
            group_checked: None,
            reaped: None,
            cancel_wakes: false,
        }
    }

    /// Advance timers and kills; `None` when the run is over.
    fn step(&mut self, backend: &dyn Environment) -> Option<Wait> {
        let opts = self.opts;
        let now = Instant::now();
        if self.exited_at.is_none()
            && (self.watch.pidfd.is_none() || self.eof)
            && self.watch.exited()
        {
            self.exited_at = Some(now);
        }
        if self.exited_at.is_some() && opts.follow_group && self.reaped.is_none() {
            self.reaped = Some(self.watch.reap());
        }
        if let Some(at) = self.exited_at {
            if opts.follow_group
                && self
                    .group_checked
                    .is_none_or(|t| now.duration_since(t) >= Duration::from_millis(250))
            {
                self.group_alive = crate::tree::tree_alive(self.pid);
                self.group_checked = Some(now);
            }
            if !self.group_alive
                && (self.eof
                    || now.duration_since(at) >= opts.drain_max
                    || now.duration_since(self.last_data.max(at)) >= opts.drain_idle)
            {
                return None;
            }
        }
        // Timeout and cancellation: kill the tree, keep reading what it prints while dying.
        if self.term_at.is_none() && (self.exited_at.is_none() || self.group_alive) {
            let timed_out = self.deadline.is_some_and(|d| now >= d);
            let cancelled = opts.cancel.is_some_and(|c| c.is_cancelled());
            if timed_out || cancelled {
                self.ended = if timed_out {
                    Ended::TimedOut
                } else {
                    Ended::Cancelled
                };
                backend.kill(self.pid, libc::SIGTERM);
                self.term_at = Some(now);
            }
        }
        if let Some(t) = self.term_at
            && !self.killed_hard
            && now.duration_since(t) >= opts.grace
        {
            backend.kill(self.pid, libc::SIGKILL);
            self.killed_hard = true;
        }
        // Long waits only when every event that matters wakes the driver:
        // exit (a pidfd), cancellation, and no kill grace running.
        let wakes = opts.cancel.is_none() || self.cancel_wakes;
        let mut ms: i64 = if self.watch.pidfd.is_some() && wakes && self.term_at.is_none() {
            1000
        } else {
            50
        };
        if let Some(d) = self.deadline
            && self.term_at.is_none()
        {
            ms = ms.min(d.saturating_duration_since(now).as_millis() as i64 + 1);
        }
        if let Some(at) = self.exited_at {
            if self.group_alive {
                ms = ms.min(250);
            } else {
                let idle_left = opts
                    .drain_idle
                    .saturating_sub(now.duration_since(self.last_data.max(at)));
                ms = ms.min(idle_left.as_millis() as i64 + 1);
            }
        }
        Some(Wait {
            ms: ms.max(0),
            read: !self.eof,
            exit: self.watch.pidfd.is_some() && self.exited_at.is_none(),
        })
    }

    /// The pidfd became readable.
    fn exit_signalled(&mut self) {
        if self.watch.exited() {
            self.exited_at = Some(Instant::now());
        }
    }

    /// Read what is there (bounded per round so exit and timers are seen).
    /// Returns false when the fd would block (the async driver re-arms).
    fn read_ready(&mut self, fd: RawFd, on_data: &mut dyn FnMut(&[u8])) -> bool {
        let mut budget = 4 * 1024 * 1024usize;
        loop {
            let n = sys::read_fd(fd, &mut self.buf);
            if n > 0 {
                let n = n as usize;
                on_data(&self.buf[..n]);
                self.last_data = Instant::now();
                budget = budget.saturating_sub(n);
                if budget == 0 {
                    return true;
                }
                continue;
            }
            if n == 0 {
                self.eof = true;
                return true;
            }
            let e = std::io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EAGAIN) => return false,
                // EIO: the PTY's slave side is closed (everyone exited).
                _ => {
                    self.eof = true;
                    return true;
                }
            }
        }
    }

    /// Kill leftovers, reap, and say how it ended.
    fn finish(self, backend: &dyn Environment) -> (i32, Ended) {
        // Leftovers of the group (a backgrounded grandchild): kill them before
        // reaping, while the pid (and so the group id) is still reserved.
        if self.exited_at.is_none() {
            // Drain cap reached without exit can only follow a kill; make sure.
            backend.kill(self.pid, libc::SIGKILL);
        } else {
            sys::kill(-self.pid, libc::SIGKILL);
        }
        let code = self.reaped.unwrap_or_else(|| self.watch.reap());
        let code = match self.ended {
            Ended::TimedOut => 124,
            Ended::Cancelled => 130,
            Ended::Exited => code,
        };
        (code, self.ended)
    }
}

/// Run until the process ends, waiting with `poll(2)` on this thread;
/// returns (exit code, how it ended).
pub fn pump(
    pid: i32,
    output: &OwnedFd,
    backend: &dyn Environment,
    opts: &PumpOpts<'_>,
    on_data: &mut dyn FnMut(&[u8]),
) -> (i32, Ended) {
    let fd = output.as_raw_fd();
    let mut p = Pump::new(pid, opts);
    // Cancellation wakes the poll through an eventfd: the token's waiter is
    // a waker that signals it (no thread, no polling interval).
    let wake = opts.cancel.and_then(|_| CancelWake::new());
    let mut cancelled = opts.cancel.map(|c| Box::pin(c.cancelled()));
    if let (Some(w), Some(fut)) = (&wake, cancelled.as_mut()) {
        let waker = std::task::Waker::from(w.clone());
        let mut cx = std::task::Context::from_waker(&waker);
        // Ready already: the step below sees `is_cancelled()`.
        let _ = fut.as_mut().poll(&mut cx);
        p.cancel_wakes = true;
    }
    while let Some(w) = p.step(backend) {
        POLL_ROUNDS.with(|c| c.set(c.get() + 1));
        let mut fds: [libc::pollfd; 3] = [
            libc::pollfd {
                fd: if w.read { fd } else { -1 },
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: match (&p.watch.pidfd, w.exit) {
                    (Some(pf), true) => pf.as_raw_fd(),
                    _ => -1,
                },
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: match &wake {
                    Some(w) if p.term_at.is_none() => w.fd.as_raw_fd(),
                    _ => -1,
                },
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        let r = sys::poll_fds(&mut fds, w.ms as i32);
        if r < 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EINTR) {
                std::thread::sleep(Duration::from_millis(5));
            }
            continue;
        }
        if fds[1].revents != 0 {
            p.exit_signalled();
        }
        if fds[0].revents != 0 {
            p.read_ready(fd, on_data);
        }
    }
    p.finish(backend)
}

thread_local! {
    /// Rounds of the synchronous driver's wait on this thread, for tests
    /// that check it sleeps until something happens instead of polling.
    static POLL_ROUNDS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Rounds of `poll(2)` the synchronous driver has made on this thread.
#[doc(hidden)]
pub fn poll_rounds() -> u64 {
    POLL_ROUNDS.with(|c| c.get())
}

/// Wakes the synchronous driver's `poll(2)` when a cancel token fires: the
/// waker of the token's `cancelled()` future signals an eventfd.
struct CancelWake {
    fd: OwnedFd,
}

impl CancelWake {
    fn new() -> Option<std::sync::Arc<CancelWake>> {
        sys::eventfd()
            .ok()
            .map(|fd| std::sync::Arc::new(CancelWake { fd }))
    }
}

impl std::task::Wake for CancelWake {
    fn wake(self: std::sync::Arc<Self>) {
        sys::eventfd_signal(&self.fd);
    }
    fn wake_by_ref(self: &std::sync::Arc<Self>) {
        sys::eventfd_signal(&self.fd);
    }
}

/// Run until the process ends, waiting on the tokio reactor (call from a
/// task on a runtime with I/O enabled): output, the pidfd, cancellation and
/// timers wake it; no thread waits. The output fd must be non-blocking.
pub async fn pump_async(
    pid: i32,
    output: &OwnedFd,
    backend: &dyn Environment,
    opts: &PumpOpts<'_>,
    on_data: &mut (dyn FnMut(&[u8]) + Send),
) -> (i32, Ended) {
    let fd = output.as_raw_fd();
    let mut p = Pump::new(pid, opts);
    // The select below wakes on cancellation.
    p.cancel_wakes = true;
    // A duplicate of the pidfd for the reactor: the state machine keeps its own.
    let pidfd = p
        .watch
        .pidfd
        .as_ref()
        .and_then(|pf| sys::dup_cloexec(pf.as_raw_fd()).ok());
    let out = sys::register_readable(output).ok();
    let exit = pidfd
        .as_ref()
        .and_then(|pf| sys::register_readable(pf).ok());
    let never = std::future::pending::<()>;
    while let Some(w) = p.step(backend) {
        let sleep = tokio::time::sleep(Duration::from_millis(w.ms as u64));
        let cancelled = async {
            match opts.cancel {
                Some(c) => c.cancelled().await,
                None => never().await,
            }
        };
        tokio::select! {
            r = async { out.as_ref().unwrap().readable().await }, if w.read && out.is_some() => {
                if let Ok(mut guard) = r
                    && !p.read_ready(fd, on_data)
                {
                    guard.clear_ready();
                }
            }
            r = async { exit.as_ref().unwrap().readable().await }, if w.exit && exit.is_some() => {
                if let Ok(mut guard) = r {
                    p.exit_signalled();
                    if p.exited_at.is_none() {
                        guard.clear_ready();
                    }
                }
            }
            _ = cancelled, if p.term_at.is_none() => {}
            _ = sleep => {}
        }
        if w.read && out.is_none() {
            // No reactor registration (not expected for pipes and PTYs): read on the tick.
            p.read_ready(fd, on_data);
        }
    }
    drop(out);
    drop(exit);
    drop(pidfd);
    p.finish(backend)
}
