//! What an [`Environment`](crate::env::Environment) is asked to start and
//! what it hands back: plain data shared by every backend and the syscall layer.

use std::os::fd::OwnedFd;
use std::path::PathBuf;

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
    /// The task the command belongs to: remote backends run it over the
    /// task's own connection or in its own container (`""`: `"default"`).
    pub task: &'a str,
    /// Keep what the process leaves behind when it ends (a background
    /// launcher that started a server): the tree ends when its last process
    /// does. Otherwise (foreground commands) leftovers are killed when the
    /// process ends. Either way, everything dies with the host.
    pub linger: bool,
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
    pub(crate) fd: OwnedFd,
}

/// What a sandbox needs to know.
#[derive(Clone, Debug, Default)]
pub struct SandboxConfig {
    /// The writable root (the working directory of the task).
    pub root: PathBuf,
    /// Keep the network (off by default).
    pub network: bool,
    /// Extra read-only binds.
    pub ro_binds: Vec<PathBuf>,
    /// Extra writable binds.
    pub rw_binds: Vec<PathBuf>,
}
