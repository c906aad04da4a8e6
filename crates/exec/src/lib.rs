//! Where commands run: the execution layer of hermes-tools (a leaf engine).
//!
//! An [`Environment`] starts a bash script and hands back a
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

#![deny(unsafe_code)]

pub mod fs;
pub mod local;
pub mod pump;
pub mod sandbox;
#[allow(unsafe_code)]
pub mod sys;

pub use portable_pty::MasterPty;
pub use pump::{Ended, PumpOpts, pump};
pub use sys::{ExitWatch, pipe, poll_one, set_nonblocking};
/// Cancellation shared with the core: wakes waiters, clones cheaply.
pub use tokio_util::sync::CancellationToken as CancelToken;

use std::io;
use std::os::fd::OwnedFd;
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

/// The interface every execution environment implements: start processes,
/// signal their trees, and reach files where the commands run. `local` and
/// `sandbox` live here; ssh and docker are one module each.
pub trait Environment: Send + Sync {
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

/// Send `signal` to the process group and session of `root`, and to every
/// descendant of `root` (which catches children that started their own
/// session or group while their parent still runs).
pub fn kill_tree(root: i32, signal: i32) {
    if root <= 1 {
        return;
    }
    sys::kill(-root, signal);
    for pid in tree_members(root) {
        sys::kill(pid, signal);
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
pub fn terminate_tree(backend: &dyn Environment, root: i32, grace: Duration) {
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

/// Files where the commands run. Local and sandbox environments share the
/// host's file system for the paths they bind, so they read and write
/// directly; remote environments implement these over their connection.
pub trait Files: Send + Sync {
    /// Read a whole file.
    fn read(&self, path: &std::path::Path) -> io::Result<Vec<u8>> {
        std::fs::read(path)
    }
    /// Replace a file atomically (a temporary file in the same folder, then rename).
    fn write_atomic(&self, path: &std::path::Path, data: &[u8]) -> io::Result<()> {
        let dir = path.parent().unwrap_or(std::path::Path::new("."));
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = dir.join(format!(".{name}.ht-tmp-{}", std::process::id()));
        std::fs::write(&tmp, data)?;
        std::fs::rename(&tmp, path).inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
    }
}

impl Files for local::Local {}
impl Files for sandbox::Sandbox {}
