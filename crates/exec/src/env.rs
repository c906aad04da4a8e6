//! The interfaces every execution environment implements: [`Environment`]
//! (start processes, signal their trees) and [`Files`] (reach files where
//! the commands run).

use std::io;
use std::time::{Duration, Instant};

use crate::spawn::{SpawnRequest, Spawned};
use crate::tree::{kill_tree, tree_alive};

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
