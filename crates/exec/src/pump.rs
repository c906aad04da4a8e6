//! Drive a started process to completion: read its merged output as it
//! comes (event driven: poll on the output fd and a pidfd), enforce the
//! timeout and cancellation by killing the whole tree (TERM, then KILL after
//! a grace period), stop reading shortly after the main process exited even
//! if a backgrounded grandchild still holds the pipe, then kill leftovers of
//! the group and reap the child (no zombies).

use std::os::fd::{AsRawFd, OwnedFd};
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

/// Run until the process ends; returns (exit code, how it ended).
pub fn pump(
    pid: i32,
    output: &OwnedFd,
    backend: &dyn Environment,
    opts: &PumpOpts<'_>,
    on_data: &mut dyn FnMut(&[u8]),
) -> (i32, Ended) {
    let watch = ExitWatch::new(pid);
    let start = Instant::now();
    let deadline = opts.timeout.map(|t| start + t);
    let fd = output.as_raw_fd();
    let mut buf = vec![0u8; 64 * 1024];
    let mut eof = false;
    let mut exited_at: Option<Instant> = None;
    let mut last_data = Instant::now();
    let mut ended = Ended::Exited;
    let mut term_at: Option<Instant> = None;
    let mut killed_hard = false;
    let mut group_alive = false;
    let mut group_checked: Option<Instant> = None;
    let mut reaped: Option<i32> = None;
    loop {
        let now = Instant::now();
        if exited_at.is_none() && (watch.pidfd.is_none() || eof) && watch.exited() {
            exited_at = Some(now);
        }
        if exited_at.is_some() && opts.follow_group && reaped.is_none() {
            reaped = Some(watch.reap());
        }
        if let Some(at) = exited_at {
            if opts.follow_group
                && group_checked.is_none_or(|t| now.duration_since(t) >= Duration::from_millis(250))
            {
                group_alive = crate::tree::tree_alive(pid);
                group_checked = Some(now);
            }
            if !group_alive
                && (eof
                    || now.duration_since(at) >= opts.drain_max
                    || now.duration_since(last_data.max(at)) >= opts.drain_idle)
            {
                break;
            }
        }
        // Timeout and cancellation: kill the tree, keep reading what it prints while dying.
        if term_at.is_none() && (exited_at.is_none() || group_alive) {
            let timed_out = deadline.is_some_and(|d| now >= d);
            let cancelled = opts.cancel.is_some_and(|c| c.is_cancelled());
            if timed_out || cancelled {
                ended = if timed_out {
                    Ended::TimedOut
                } else {
                    Ended::Cancelled
                };
                backend.kill(pid, libc::SIGTERM);
                term_at = Some(now);
            }
        }
        if let Some(t) = term_at
            && !killed_hard
            && now.duration_since(t) >= opts.grace
        {
            backend.kill(pid, libc::SIGKILL);
            killed_hard = true;
        }
        // Wait for output or exit.
        let mut wait_ms: i64 = 50;
        if let Some(d) = deadline
            && term_at.is_none()
        {
            wait_ms = wait_ms.min(d.saturating_duration_since(now).as_millis() as i64 + 1);
        }
        if let Some(at) = exited_at {
            if group_alive {
                wait_ms = wait_ms.min(250);
            } else {
                let idle_left = opts
                    .drain_idle
                    .saturating_sub(now.duration_since(last_data.max(at)));
                wait_ms = wait_ms.min(idle_left.as_millis() as i64 + 1);
            }
        }
        if opts.cancel.is_none() && deadline.is_none() && term_at.is_none() && exited_at.is_none() {
            wait_ms = if watch.pidfd.is_some() { 1000 } else { 50 };
        }
        let mut fds: [libc::pollfd; 2] = [
            libc::pollfd {
                fd: if eof { -1 } else { fd },
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: match (&watch.pidfd, exited_at) {
                    (Some(p), None) => p.as_raw_fd(),
                    _ => -1,
                },
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        let r = sys::poll_fds(&mut fds, wait_ms.max(0) as i32);
        if r < 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EINTR) {
                std::thread::sleep(Duration::from_millis(5));
            }
            continue;
        }
        if fds[1].revents != 0 && watch.exited() {
            exited_at = Some(Instant::now());
        }
        if fds[0].revents != 0 {
            // Read what is there (bounded per round so exit and timers are seen).
            let mut budget = 4 * 1024 * 1024usize;
            loop {
                let n = sys::read_fd(fd, &mut buf);
                if n > 0 {
                    let n = n as usize;
                    on_data(&buf[..n]);
                    last_data = Instant::now();
                    budget = budget.saturating_sub(n);
                    if budget == 0 {
                        break;
                    }
                    continue;
                }
                if n == 0 {
                    eof = true;
                    break;
                }
                let e = std::io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::EINTR) => continue,
                    Some(libc::EAGAIN) => break,
                    // EIO: the PTY's slave side is closed (everyone exited).
                    _ => {
                        eof = true;
                        break;
                    }
                }
            }
        }
    }
    // Leftovers of the group (a backgrounded grandchild): kill them before
    // reaping, while the pid (and so the group id) is still reserved.
    if exited_at.is_none() {
        // Drain cap reached without exit can only follow a kill; make sure.
        backend.kill(pid, libc::SIGKILL);
    } else {
        sys::kill(-pid, libc::SIGKILL);
    }
    let code = reaped.unwrap_or_else(|| watch.reap());
    let code = match ended {
        Ended::TimedOut => 124,
        Ended::Cancelled => 130,
        Ended::Exited => code,
    };
    (code, ended)
}
