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
//! - a `pids` cgroup per command when the host runs as root: the kernel
//!   never applies `RLIMIT_NPROC` to the init namespace's root user, and a
//!   sandbox run by root maps its uid 0 to that user. The spawning thread
//!   moves itself into a fresh cgroup (cgroup v1 moves single threads),
//!   spawns, and moves back, so the whole command is born inside the
//!   cgroup: there is no window in which it runs unlimited. On a pure
//!   cgroup v2 host this needs `CLONE_INTO_CGROUP` in the spawn code
//!   (not done here); the rlimits still apply.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::spawn::SandboxLimits;

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

/// A cgroup v1 `pids` hierarchy this process may create cgroups in.
pub struct PidsCgroups {
    /// Mount point of the hierarchy.
    mount: PathBuf,
    /// Where this sandbox's per-command cgroups go.
    parent: PathBuf,
    seq: AtomicU64,
    /// Cgroups created and not yet removed (removed once empty).
    live: Mutex<Vec<PathBuf>>,
}

impl PidsCgroups {
    /// Find a writable v1 `pids` hierarchy (root only in practice).
    pub fn detect() -> Option<PidsCgroups> {
        let mounts = std::fs::read_to_string("/proc/self/mounts").ok()?;
        let mount = mounts.lines().find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() >= 4 && f[2] == "cgroup" && f[3].split(',').any(|o| o == "pids"))
                .then(|| PathBuf::from(f[1]))
        })?;
        let own = own_pids_cgroup("/proc/self/cgroup")?;
        // One directory per sandbox (a process may hold several).
        static SANDBOXES: AtomicU64 = AtomicU64::new(0);
        let parent = mount.join(own.trim_start_matches('/')).join(format!(
            "hermes-sandbox-{}-{}",
            std::process::id(),
            SANDBOXES.fetch_add(1, Ordering::Relaxed)
        ));
        match std::fs::create_dir(&parent) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(_) => return None,
        }
        Some(PidsCgroups {
            mount,
            parent,
            seq: AtomicU64::new(0),
            live: Mutex::new(Vec::new()),
        })
    }

    /// Run `spawn` with the calling thread inside a new cgroup limited to
    /// `max` tasks: everything it starts is born there. The thread moves
    /// back before this returns.
    pub fn spawn_inside<T>(
        &self,
        max: u64,
        spawn: impl FnOnce() -> io::Result<T>,
    ) -> io::Result<T> {
        self.sweep();
        let n = self.seq.fetch_add(1, Ordering::Relaxed);
        let cg = self.parent.join(format!("cmd-{n}"));
        std::fs::create_dir(&cg)?;
        self.live.lock().unwrap_or_else(|e| e.into_inner()).push(cg.clone());
        std::fs::write(cg.join("pids.max"), max.to_string())?;
        let home = own_pids_cgroup("/proc/thread-self/cgroup")
            .map(|p| self.mount.join(p.trim_start_matches('/')))
            .ok_or_else(|| io::Error::other("cannot read this thread's pids cgroup"))?;
        let tid = rustix::thread::gettid().as_raw_nonzero().get().to_string();
        std::fs::write(cg.join("tasks"), &tid)?;
        let result = spawn();
        let back = std::fs::write(home.join("tasks"), &tid);
        if let Err(e) = back {
            // Stuck in a cgroup of 1024 tasks: not dangerous, but say so.
            tracing::warn!("sandbox: could not move thread {tid} back to {}: {e}", home.display());
        }
        result
    }

    /// Remove the per-command cgroups whose processes have all ended.
    fn sweep(&self) {
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        live.retain(|cg| std::fs::remove_dir(cg).is_err() && cg.exists());
    }
}

impl Drop for PidsCgroups {
    fn drop(&mut self) {
        self.sweep();
        let _ = std::fs::remove_dir(&self.parent);
    }
}

/// The `pids` line of a `/proc/.../cgroup` file (the cgroup's path).
fn own_pids_cgroup(file: impl AsRef<Path>) -> Option<String> {
    let text = std::fs::read_to_string(file).ok()?;
    text.lines().find_map(|l| {
        let mut f = l.splitn(3, ':');
        let (_, ctrl, path) = (f.next()?, f.next()?, f.next()?);
        ctrl.split(',').any(|c| c == "pids").then(|| path.to_string())
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
        assert!(p.contains("-t ") && p.contains("-f ") && p.contains("-d "), "{p}");
        assert!(p.contains("exit 126"), "{p}");
        assert!(!p.contains('\n'), "the prefix must not shift the script's lines");
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
