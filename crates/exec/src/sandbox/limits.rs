//! Resource limits of a sandboxed command, so that a fork bomb, a runaway
//! allocation, a spinning loop or a huge file ends with an error message
//! instead of taking the host down.
//!
//! Two mechanisms, because neither holds alone:
//! - rlimits, set (soft and hard, so they cannot be raised again) by the
//!   sandboxed bash itself before it runs the script: the spawn code is not
//!   ours to change and the rlimits must not touch the host process. Values
//!   are clamped to the host's own hard limits so that setting them cannot
//!   fail.
//! - a `pids` cgroup per sandbox when the host runs as root: the kernel
//!   never applies `RLIMIT_NPROC` to the init namespace's root user, and a
//!   sandbox run by root maps its uid 0 to that user. A spawner thread
//!   enters the cgroup once (cgroup v1 moves single threads) and starts
//!   every command, so each is born inside the cgroup: there is no window
//!   in which it runs unlimited. On a pure cgroup v2 host this needs
//!   `CLONE_INTO_CGROUP` in the spawn code (not done here): a root host
//!   there has no process limit, and the sandbox says so in a warning.
//! - with it, where a v1 `memory` hierarchy is writable, a `memory` cgroup
//!   the same spawner thread enters: `memory_bytes` then also bounds the
//!   sandbox's memory as a whole, shared memory included (`memfd`,
//!   `MAP_SHARED` anonymous mappings and `/dev/shm`, which `RLIMIT_DATA`
//!   does not count); past it the kernel's OOM killer ends a process of the
//!   sandbox, never the host.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, mpsc};

use crate::local::{spawn_argv_unsupervised, spawn_bwrap_supervised};
use crate::spawn::{SandboxLimits, SpawnRequest, Spawned};

/// The `ulimit` prefix the sandboxed bash runs before the script, on the
/// script's first line (so the script's line numbers do not change).
/// `None` when there is nothing to limit.
pub fn ulimit_prefix(l: &SandboxLimits) -> Option<String> {
    use rustix::process::{Resource, getrlimit};
    let clamp = |want: u64, r: Resource| -> Option<u64> {
        if want == 0 {
            return None;
        }
        Some(match getrlimit(r).maximum {
            Some(hard) => want.min(hard),
            None => want,
        })
    };
    let kib = |b: u64| b.div_ceil(1024).max(1);
    let mut parts = Vec::new();
    if let Some(n) = clamp(l.max_processes, Resource::Nproc) {
        parts.push(format!("-u {n}"));
    }
    if let Some(b) = clamp(l.memory_bytes, Resource::Data) {
        parts.push(format!("-d {}", kib(b)));
    }
    if let Some(s) = clamp(l.cpu_seconds, Resource::Cpu) {
        parts.push(format!("-t {s}"));
    }
    if let Some(b) = clamp(l.file_size_bytes, Resource::Fsize) {
        // bash's -f counts 1024-byte blocks outside POSIX mode.
        parts.push(format!("-f {}", kib(b)));
    }
    if parts.is_empty() {
        return None;
    }
    Some(format!(
        "ulimit -S -H {} || {{ echo 'hermes sandbox: could not set the resource limits' >&2; exit 126; }}; ",
        parts.join(" ")
    ))
}

/// A `pids` cgroup (cgroup v1) of one sandbox and the thread that starts
/// its commands from inside it.
///
/// Moving a task between v1 cgroups waits for an RCU grace period (several
/// milliseconds, more than the whole bwrap start), so no thread moves per
/// command: one spawner thread enters the cgroup once, when the sandbox is
/// built, and every command is started by it, born inside. The limit is
/// therefore the sandbox's, shared by its concurrent commands (plus one for
/// the spawner thread itself).
pub struct PidsCgroup {
    path: PathBuf,
    /// The sandbox's `memory` cgroup, when one could be made.
    memory: Option<PathBuf>,
    jobs: Mutex<Option<mpsc::Sender<Job>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// One spawn, as owned data (the spawner thread outlives any borrow).
struct Job {
    argv: Vec<String>,
    script: String,
    cwd: PathBuf,
    env: Vec<(String, String)>,
    pty: bool,
    extra_rw: Vec<PathBuf>,
    task: String,
    linger: bool,
    reply: mpsc::Sender<io::Result<Spawned>>,
}

impl PidsCgroup {
    /// A cgroup limited to `max` processes under a writable v1 `pids`
    /// hierarchy, with its spawner thread inside. `None` when there is no
    /// such hierarchy (not root, or cgroup v2 only) or it cannot be used.
    pub fn new(max: u64, memory_bytes: u64) -> Option<PidsCgroup> {
        let mounts = std::fs::read_to_string("/proc/self/mounts").ok()?;
        let mount_of = |ctrl: &str| {
            mounts.lines().find_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                (f.len() >= 4 && f[2] == "cgroup" && f[3].split(',').any(|o| o == ctrl))
                    .then(|| PathBuf::from(f[1]))
            })
        };
        let mount = mount_of("pids")?;
        let own = own_cgroup("/proc/self/cgroup", "pids")?;
        // One directory per sandbox (a process may hold several).
        static SANDBOXES: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "hermes-sandbox-{}-{}",
            std::process::id(),
            SANDBOXES.fetch_add(1, Ordering::Relaxed)
        );
        let path = mount.join(own.trim_start_matches('/')).join(&name);
        sweep_stale(path.parent()?);
        std::fs::create_dir(&path).ok()?;
        let memory = (memory_bytes > 0)
            .then(|| {
                let m = mount_of("memory")?
                    .join(own_cgroup("/proc/self/cgroup", "memory")?.trim_start_matches('/'))
                    .join(&name);
                sweep_stale(m.parent()?);
                std::fs::create_dir(&m).ok()?;
                match std::fs::write(m.join("memory.limit_in_bytes"), memory_bytes.to_string()) {
                    Ok(()) => Some(m),
                    Err(e) => {
                        tracing::warn!("sandbox: memory cgroup {}: {e}", m.display());
                        let _ = std::fs::remove_dir(&m);
                        None
                    }
                }
            })
            .flatten();
        let cleanup = |e: &dyn std::fmt::Display| {
            tracing::warn!("sandbox: pids cgroup {}: {e}", path.display());
            let _ = std::fs::remove_dir(&path);
        };
        // The spawner thread itself is one of the cgroup's tasks.
        if let Err(e) = std::fs::write(path.join("pids.max"), (max + 1).to_string()) {
            cleanup(&e);
            return None;
        }
        let (tx, rx) = mpsc::channel::<Job>();
        let (ready_tx, ready_rx) = mpsc::channel::<io::Result<()>>();
        let tasks = path.join("tasks");
        let memory_tasks = memory.as_ref().map(|m| m.join("tasks"));
        let thread = std::thread::Builder::new()
            .name("hermes-sandbox-spawner".into())
            .spawn(move || {
                let tid = rustix::thread::gettid().as_raw_nonzero().get().to_string();
                let entered = std::fs::write(&tasks, &tid);
                if let Some(m) = &memory_tasks
                    && let Err(e) = std::fs::write(m, &tid)
                {
                    tracing::warn!("sandbox: cannot enter the memory cgroup: {e}");
                }
                let ok = entered.is_ok();
                let _ = ready_tx.send(entered);
                if !ok {
                    return;
                }
                for job in rx {
                    let req = SpawnRequest {
                        script: &job.script,
                        cwd: &job.cwd,
                        env: &job.env,
                        pty: job.pty,
                        extra_rw: &job.extra_rw,
                        task: &job.task,
                        linger: job.linger,
                    };
                    // This thread lives as long as the sandbox: a foreground
                    // command's bwrap may die with it (see Sandbox::spawn).
                    let spawned = if job.linger {
                        spawn_bwrap_supervised(&job.argv, &req)
                    } else {
                        spawn_argv_unsupervised(&job.argv, &req)
                    };
                    let _ = job.reply.send(spawned);
                }
            });
        let thread = match thread {
            Ok(t) => t,
            Err(e) => {
                cleanup(&e);
                return None;
            }
        };
        match ready_rx.recv() {
            Ok(Ok(())) => Some(PidsCgroup {
                path,
                memory,
                jobs: Mutex::new(Some(tx)),
                thread: Some(thread),
            }),
            Ok(Err(e)) => {
                let _ = thread.join();
                cleanup(&e);
                None
            }
            Err(e) => {
                let _ = thread.join();
                cleanup(&e);
                None
            }
        }
    }

    /// Start `argv` (bubblewrap, as the sandbox does) from inside the cgroup.
    pub fn spawn(&self, argv: Vec<String>, req: &SpawnRequest<'_>) -> io::Result<Spawned> {
        let (reply, answer) = mpsc::channel();
        let job = Job {
            argv,
            script: req.script.to_string(),
            cwd: req.cwd.to_path_buf(),
            env: req.env.to_vec(),
            pty: req.pty,
            extra_rw: req.extra_rw.to_vec(),
            task: req.task.to_string(),
            linger: req.linger,
            reply,
        };
        let gone = || io::Error::other("sandbox: the spawner thread has ended");
        self.jobs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .ok_or_else(gone)?
            .send(job)
            .map_err(|_| gone())?;
        answer.recv().map_err(|_| gone())?
    }
}

impl Drop for PidsCgroup {
    fn drop(&mut self) {
        // Closing the channel ends the thread; then the cgroup can go once
        // its commands' processes have (an empty leftover is harmless).
        self.jobs.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let _ = std::fs::remove_dir(&self.path);
        if let Some(m) = &self.memory {
            let _ = std::fs::remove_dir(m);
        }
    }
}

/// Remove the empty sandbox cgroups under `parent` whose process is gone
/// (a host killed before its sandboxes were dropped leaves them behind).
fn sweep_stale(parent: &Path) {
    let Ok(rd) = std::fs::read_dir(parent) else {
        return;
    };
    for e in rd.flatten() {
        let name = e.file_name();
        let Some(rest) = name
            .to_str()
            .and_then(|n| n.strip_prefix("hermes-sandbox-"))
        else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            // rmdir fails while tasks remain: only empty ones go.
            let _ = std::fs::remove_dir(e.path());
        }
    }
}

/// The `ctrl` line of a `/proc/.../cgroup` file (the cgroup's path).
fn own_cgroup(file: impl AsRef<Path>, want: &str) -> Option<String> {
    let text = std::fs::read_to_string(file).ok()?;
    text.lines().find_map(|l| {
        let mut f = l.splitn(3, ':');
        let (_, ctrl, path) = (f.next()?, f.next()?, f.next()?);
        ctrl.split(',').any(|c| c == want).then(|| path.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_sets_hard_and_soft_limits_and_stops_on_failure() {
        let p = ulimit_prefix(&SandboxLimits {
            max_processes: 64,
            memory_bytes: 1 << 30,
            cpu_seconds: 5,
            file_size_bytes: 1 << 20,
            tmp_size_bytes: 0,
        })
        .unwrap();
        assert!(p.starts_with("ulimit -S -H -u "), "{p}");
        assert!(
            p.contains("-t ") && p.contains("-f ") && p.contains("-d "),
            "{p}"
        );
        assert!(p.contains("exit 126"), "{p}");
        assert!(
            !p.contains('\n'),
            "the prefix must not shift the script's lines"
        );
    }

    #[test]
    fn zero_means_unlimited() {
        let none = SandboxLimits {
            max_processes: 0,
            memory_bytes: 0,
            cpu_seconds: 0,
            file_size_bytes: 0,
            tmp_size_bytes: 0,
        };
        assert_eq!(ulimit_prefix(&none), None);
    }
}
