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
/// What holds a PTY command's terminal open: opaque, dropped to close it.
pub type PtyKeepAlive = Box<dyn std::any::Any + Send>;

pub struct Spawned {
    /// Process id; also the process group and session id.
    pub pid: i32,
    /// Merged stdout+stderr (or the PTY master), non-blocking.
    pub output: OwnedFd,
    /// The process's stdin (PTY mode only; pipe mode uses /dev/null).
    pub input: Option<Input>,
    /// Keeps the PTY alive while held (`Some` only for a PTY command).
    pub pty: Option<PtyKeepAlive>,
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
    /// With `network` off: the one way out, the allow-list proxy (see
    /// [`crate::netproxy`]), reached from inside at 127.0.0.1:3128.
    pub proxy: Option<std::sync::Arc<crate::netproxy::NetProxy>>,
    /// Extra read-only binds.
    pub ro_binds: Vec<PathBuf>,
    /// Extra writable binds.
    pub rw_binds: Vec<PathBuf>,
    /// Resource limits of every command (defaults: [`SandboxLimits::default`]).
    pub limits: SandboxLimits,
}

/// Resource limits of one sandboxed command (the whole tree it starts).
/// `0` means "no limit of this kind". They are hard limits: nothing inside
/// can raise them again. (The runtime's config does not expose them yet:
/// the intended keys are `terminal.sandbox_limits.<field>`.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SandboxLimits {
    /// Processes (and threads): default 1024. When the host runs as root
    /// and a cgroup v1 `pids` hierarchy is writable, a `pids` cgroup per
    /// sandbox enforces it (shared by the sandbox's concurrent commands):
    /// `RLIMIT_NPROC` never applies to root, not even inside a user
    /// namespace. Otherwise `RLIMIT_NPROC` per command, which the kernel
    /// counts per user *within the sandbox's own user namespace* (the
    /// user's processes outside do not count). A fork past it fails with
    /// "Resource temporarily unavailable".
    pub max_processes: u64,
    /// Data memory of each process (`RLIMIT_DATA`: heap and private
    /// writable mappings, not address space reservations, so runtimes that
    /// reserve large ranges still start): default 4 GiB. Past it,
    /// allocations fail with "Cannot allocate memory".
    pub memory_bytes: u64,
    /// CPU time of each process (`RLIMIT_CPU`), default 3600 s: a spinning
    /// process gets "CPU time limit exceeded" (SIGXCPU, then SIGKILL).
    pub cpu_seconds: u64,
    /// Largest file a process may write (`RLIMIT_FSIZE`): default 1 GiB,
    /// past it "File size limit exceeded" (SIGXFSZ).
    pub file_size_bytes: u64,
    /// Size of each memory-backed directory of the sandbox (`/tmp`,
    /// `/dev/shm`, the private home): default 512 MiB; full gives "No space
    /// left on device". `/run` gets at most 16 MiB.
    pub tmp_size_bytes: u64,
}

impl Default for SandboxLimits {
    fn default() -> Self {
        SandboxLimits {
            max_processes: 1024,
            memory_bytes: 4 << 30,
            cpu_seconds: 3600,
            file_size_bytes: 1 << 30,
            tmp_size_bytes: 512 << 20,
        }
    }
}
