//! Where commands run. A [`Backend`] starts a bash script and hands back a
//! [`Spawned`] process: one readable fd carrying stdout and stderr merged in
//! order (a pipe, or a PTY master), an optional writer for its stdin, and a
//! process id that is also its process group and session id, so the whole
//! tree can be signalled.
//!
//! `local` runs `/bin/bash -c` on this machine; `sandbox` wraps the same in
//! bubblewrap. Backends for ssh, docker, singularity (a local client process
//! that runs the script elsewhere) fit the same trait by building a
//! different argv in `spawn`; SDK backends (modal, daytona) can implement
//! `spawn` with a thread that feeds a pipe.

pub mod local;
pub mod sandbox;

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// What to start.
pub struct SpawnRequest<'a> {
    /// The bash script (run as `bash -c script`).
    pub script: &'a str,
    /// Starting directory (the script `cd`s itself too).
    pub cwd: &'a std::path::Path,
    /// The complete environment of the process.
    pub env: &'a [(String, String)],
    /// Run on a pseudo-terminal (stdin, stdout and stderr are the tty).
    pub pty: bool,
    /// Directories that must be writable inside a sandbox (state files).
    pub extra_rw: &'a [PathBuf],
}

/// A started process.
pub struct Spawned {
    /// Process id; also the process group and session id.
    pub pid: i32,
    /// Merged stdout+stderr (or the PTY master), non-blocking.
    pub output: OwnedFd,
    /// The process's stdin (PTY mode only; pipe mode uses /dev/null).
    pub input: Option<Input>,
    /// Keeps the PTY alive (resize and so on).
    pub pty: Option<Box<dyn portable_pty::MasterPty + Send>>,
}

/// A writer into a PTY master that copes with a non-blocking descriptor.
pub struct Input {
    fd: OwnedFd,
}

impl Input {
    pub fn from_fd(fd: OwnedFd) -> Input {
        Input { fd }
    }

    /// Write everything (waits up to 5 s for room in the tty buffer).
    pub fn write_all(&self, mut data: &[u8]) -> io::Result<usize> {
        let total = data.len();
        let until = Instant::now() + Duration::from_secs(5);
        while !data.is_empty() {
            let n = unsafe {
                libc::write(
                    self.fd.as_raw_fd(),
                    data.as_ptr() as *const libc::c_void,
                    data.len(),
                )
            };
            if n < 0 {
                let e = io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::EINTR) => continue,
                    Some(libc::EAGAIN) => {
                        if Instant::now() > until {
                            return Err(io::Error::new(
                                io::ErrorKind::TimedOut,
                                "the process is not reading its input",
                            ));
                        }
                        poll_one(self.fd.as_raw_fd(), libc::POLLOUT, 20);
                        continue;
                    }
                    _ => return Err(e),
                }
            }
            data = &data[n as usize..];
        }
        Ok(total)
    }

    /// Send end-of-file (the tty's EOF character at a line start).
    pub fn send_eof(&self) -> io::Result<()> {
        let mut t: libc::termios = unsafe { std::mem::zeroed() };
        let eof = if unsafe { libc::tcgetattr(self.fd.as_raw_fd(), &mut t) } == 0 {
            t.c_cc[libc::VEOF]
        } else {
            4
        };
        self.write_all(&[b'\n', eof]).map(|_| ())
    }
}

/// The interface every backend implements.
pub trait Backend: Send + Sync {
    fn name(&self) -> &'static str;
    /// Start `req`. The process must be a session leader (own process group).
    fn spawn(&self, req: &SpawnRequest<'_>) -> io::Result<Spawned>;
    /// Signal the whole tree of `pid` (group, session and descendants).
    fn kill(&self, pid: i32, signal: i32) {
        kill_tree(pid, signal);
    }
    /// A task's state is dropped.
    fn cleanup_task(&self, _task_id: &str) {}
    /// The runtime closes.
    fn cleanup(&self) {}
}

/// Poll one fd for `events`; returns the revents (0 on timeout).
pub fn poll_one(fd: RawFd, events: i16, timeout_ms: i32) -> i16 {
    let mut p = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    let r = unsafe { libc::poll(&mut p, 1, timeout_ms) };
    if r > 0 { p.revents } else { 0 }
}

pub fn set_nonblocking(fd: RawFd) {
    unsafe {
        let fl = libc::fcntl(fd, libc::F_GETFL);
        if fl >= 0 {
            libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK);
        }
    }
}

/// A pipe with both ends close-on-exec.
pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Watches a child for exit without reaping it (so its pid, and so its
/// process group id, stay reserved until we have signalled the group).
pub struct ExitWatch {
    pub pid: i32,
    pub pidfd: Option<OwnedFd>,
}

impl ExitWatch {
    pub fn new(pid: i32) -> ExitWatch {
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        let pidfd = if fd >= 0 {
            Some(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
        } else {
            None
        };
        ExitWatch { pid, pidfd }
    }

    /// True once the child has exited (it stays a zombie until [`reap`]).
    pub fn exited(&self) -> bool {
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                self.pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            )
        };
        if r != 0 {
            // ECHILD: already reaped (or not ours): treat as exited.
            return true;
        }
        unsafe { info.si_pid() != 0 }
    }

    /// Reap the child; returns its exit code in shell convention (128+signal).
    pub fn reap(&self) -> i32 {
        let mut status = 0;
        loop {
            let r = unsafe { libc::waitpid(self.pid, &mut status, 0) };
            if r == -1 && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            if r == -1 {
                return -1;
            }
            break;
        }
        if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else if libc::WIFSIGNALED(status) {
            128 + libc::WTERMSIG(status)
        } else {
            -1
        }
    }
}

/// Send `signal` to the process group and session of `root`, and to every
/// descendant of `root` (which catches children that started their own
/// session or group while their parent still runs).
pub fn kill_tree(root: i32, signal: i32) {
    if root <= 1 {
        return;
    }
    unsafe {
        libc::kill(-root, signal);
    }
    for pid in tree_members(root) {
        unsafe {
            libc::kill(pid, signal);
        }
    }
}

/// Processes in `root`'s session or group, plus descendants of `root`.
pub fn tree_members(root: i32) -> Vec<i32> {
    let mut procs: Vec<(i32, i32, i32, i32)> = Vec::new(); // pid, ppid, pgrp, session
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    for entry in dir.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // comm may contain spaces and parentheses: parse after the last ')'.
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        if f.len() < 4 {
            continue;
        }
        let ppid = f[1].parse().unwrap_or(0);
        let pgrp = f[2].parse().unwrap_or(0);
        let sess = f[3].parse().unwrap_or(0);
        procs.push((pid, ppid, pgrp, sess));
    }
    let mut out: Vec<i32> = Vec::new();
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for &(pid, ppid, _, _) in &procs {
            if ppid == p && pid != root && !out.contains(&pid) {
                out.push(pid);
                frontier.push(pid);
            }
        }
    }
    for &(pid, _, pgrp, sess) in &procs {
        if (pgrp == root || sess == root) && pid != root && !out.contains(&pid) {
            out.push(pid);
        }
    }
    out
}

/// True while any process of `root`'s tree (other than zombies) is alive.
pub fn tree_alive(root: i32) -> bool {
    let alive = |pid: i32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| {
                s.rfind(')')
                    .map(|i| s[i + 1..].trim_start().starts_with('Z'))
            })
            .is_some_and(|zombie| !zombie)
    };
    alive(root) || tree_members(root).into_iter().any(alive)
}

/// Terminate a tree: TERM, then KILL after `grace` if anything is left.
pub fn terminate_tree(backend: &dyn Backend, root: i32, grace: Duration) {
    backend.kill(root, libc::SIGTERM);
    let until = Instant::now() + grace;
    while Instant::now() < until {
        if !tree_alive(root) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    backend.kill(root, libc::SIGKILL);
}

/// Pick the backend named in the config.
pub fn from_config(cfg: &crate::config::TerminalConfig) -> Result<Box<dyn Backend>, String> {
    match cfg.backend.as_str() {
        "local" => Ok(Box::new(local::Local)),
        "sandbox" => sandbox::Sandbox::new(cfg).map(|s| Box::new(s) as Box<dyn Backend>),
        other => Err(format!("unknown terminal backend '{other}'")),
    }
}
