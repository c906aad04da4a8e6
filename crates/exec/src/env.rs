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
    /// A task's state is dropped: remote backends close the task's own
    /// connection or remove its container.
    fn cleanup_task(&self, _task: &str) {}
    /// The runtime closes.
    fn cleanup(&self) {}
    /// Give task `task` its own network setting in place of the backend's
    /// (`None`: back to the backend's). Backends that cut the network off
    /// (sandbox, containers) apply it from the task's next command (a
    /// container: from its next start); the others cannot and say so.
    fn set_task_network(&self, _task: &str, _net: Option<TaskNetwork>) -> io::Result<()> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!(
                "the {} backend has no network setting of its own (it is the sandbox's, docker's and podman's)",
                self.name()
            ),
        ))
    }

    /// Where commands run, for approval prompts and messages
    /// (`"on this machine"`, `"on ssh root@host:22"`).
    fn location(&self) -> String {
        "on this machine".into()
    }
    /// Remote backends (ssh, containers): commands see another machine's
    /// files and environment, so the terminal neither checks paths here nor
    /// passes this process's environment on.
    fn remote(&self) -> Option<&dyn Remote> {
        None
    }
    /// Files where task `task`'s commands run, over the task's own
    /// connection or container, when they are not this machine's (`None`:
    /// the host's files).
    fn files(&self, _task: &str) -> Option<std::sync::Arc<dyn crate::fs::FileSystem>> {
        None
    }
}

/// A task's own network setting, which the host may give a task in place
/// of `terminal.network` (a per-task override).
#[derive(Clone)]
pub enum TaskNetwork {
    /// No network: the command's own namespace, loopback only.
    Off,
    /// The host's network.
    On,
    /// No route out but this allow-list proxy (its own rules and secrets).
    Proxy(std::sync::Arc<crate::netproxy::NetProxy>),
}

impl TaskNetwork {
    /// `(network on, proxy)`, the two switches a backend applies.
    pub fn parts(&self) -> (bool, Option<std::sync::Arc<crate::netproxy::NetProxy>>) {
        match self {
            TaskNetwork::Off => (false, None),
            TaskNetwork::On => (true, None),
            TaskNetwork::Proxy(p) => (false, Some(p.clone())),
        }
    }
}

/// What a remote backend adds to [`Environment`], for the terminal's
/// per-task state (directory and exported variables) which lives on the
/// far side. Each task has its own connection (ssh) or container: methods
/// that touch the far side name the task (`""` is `"default"`); what every
/// task shares (the login's environment, home and the state folder's
/// path) is learnt once.
pub trait Remote: Send + Sync {
    /// The environment a command gets there before any state was captured
    /// (the remote login's exported variables).
    fn base_env(&self) -> io::Result<Vec<(String, String)>>;
    /// The remote home directory (the default working directory).
    fn home(&self) -> io::Result<String>;
    /// A private directory on the far side where a command may write its
    /// captured state.
    fn state_dir(&self) -> io::Result<std::path::PathBuf>;
    /// Read and delete a state file a command of `task` wrote there (at
    /// most `max` bytes).
    fn take_file(&self, task: &str, path: &std::path::Path, max: u64) -> Option<Vec<u8>>;
    /// Whether `path` is a directory where `task`'s commands run.
    fn is_dir(&self, task: &str, path: &std::path::Path) -> bool;
    /// Why a command that ended with `code` ended so, when it was the
    /// connection's doing (`None`: the command's own exit status).
    fn explain_exit(&self, pid: i32, code: i32) -> Option<String>;
    /// A folder on this machine that `task`'s commands see at another path
    /// (a bind mount its container got when it started), as `(here,
    /// there)`: a run's files and socket are made in it directly, with no
    /// transfer and no forwarding. Starts the task's environment if needed.
    /// Default: none.
    fn shared_dir(
        &self,
        _task: &str,
    ) -> io::Result<Option<(std::path::PathBuf, std::path::PathBuf)>> {
        Ok(None)
    }
    /// Make the Unix socket `local` (on this machine) reachable at `remote`
    /// where `task`'s commands run, until the returned guard is dropped
    /// (ssh: streamlocal forwarding over the task's connection). Default:
    /// not supported.
    fn forward_socket(
        &self,
        _task: &str,
        _local: &std::path::Path,
        _remote: &std::path::Path,
    ) -> io::Result<Box<dyn std::any::Any + Send>> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "this backend cannot forward a socket",
        ))
    }
}

/// `name` on this process's PATH, or in the usual system folders (a host
/// may run with a bare PATH): the one program lookup of every backend.
pub fn find_program(name: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(
            ["/usr/bin", "/usr/local/bin", "/bin"]
                .iter()
                .map(std::path::PathBuf::from),
        )
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The key a task's connection or container is kept under (`""` is `"default"`).
pub fn task_key(task: &str) -> &str {
    if task.is_empty() { "default" } else { task }
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
