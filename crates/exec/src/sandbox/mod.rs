//! The sandbox backend: the local backend's bash inside bubblewrap. The
//! system directories are bound read-only, the working root (the configured
//! cwd) read-write, `/tmp` is a private tmpfs, and the network is cut off
//! unless `terminal.network` is on (with an allow-list, the one way out is
//! the runtime's proxy: [`crate::netproxy`]). The sandbox gets its own pid
//! namespace and dies with its parent (`--die-with-parent`), so killing the
//! bwrap process (what the runtime does on timeout, kill and close) ends
//! everything inside.
//!
//! Defence in depth on top of the mounts, each closing a whole class of
//! attack a model's command could try:
//! - a seccomp filter ([`seccomp`]) against tracing, the mount family, new
//!   namespaces (`--disable-userns` too), keyrings, BPF and terminal input
//!   injection;
//! - every root-only entry under the read-only binds masked ([`masks`]), so
//!   a root host's secrets are not readable just because root owns them;
//! - resource limits ([`limits`]): processes, memory, CPU, file size and
//!   the size of every memory-backed directory;
//! - the repository metadata and the other files that make a later host
//!   action run code ([`PROTECTED`]) bound read-only.
//!
//! - Landlock, applied by the process shim bound read-only inside (bubblewrap
//!   has no hook between its setup and the exec): the same read-only /
//!   writable split in the kernel's terms, and (ABI 6) signals and abstract
//!   unix sockets scoped to the command's own processes, which matters when
//!   the network (and so the host's abstract sockets) is on. [`landlock_abi`]
//!   reports what the kernel offers (`doctor`).

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::env::{Environment, Files};
use crate::local::{BASH, spawn_argv_unsupervised, spawn_bwrap_supervised};
use crate::spawn::{SandboxLimits, SpawnRequest, Spawned};

pub mod limits;
pub mod masks;
pub mod seccomp;

pub use masks::Mask;

const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
];

/// The system directories whose root-only entries are looked for and
/// masked on every sandbox built (small, and often changed).
const WALKED_DIRS: &[&str] = &["/etc", "/opt"];

/// The root-only entries of the other system directories (`/usr` and, where
/// they are folders of their own, `/bin`, `/lib`, ...): only a root host's
/// sandbox could read them (a user's cannot anyway), so only a root host
/// walks them, once per process (a few hundred milliseconds for a full
/// `/usr`; package managers rarely add root-only files there).
fn system_root_only() -> &'static [Mask] {
    static MASKS: std::sync::OnceLock<Vec<Mask>> = std::sync::OnceLock::new();
    MASKS.get_or_init(|| {
        if !rustix::process::geteuid().is_root() {
            return Vec::new();
        }
        let dirs: Vec<PathBuf> = SYSTEM_DIRS
            .iter()
            .filter(|d| !WALKED_DIRS.contains(d))
            .filter(|d| std::fs::symlink_metadata(d).is_ok_and(|m| m.is_dir()))
            .map(PathBuf::from)
            .collect();
        masks::root_only_entries(&dirs, &[])
    })
}

/// Host files a sandboxed command never reads whatever their mode (belt and
/// braces over the mode walk: these are root's own secrets), masked when
/// this process can read them.
const MASKED: &[&str] = &[
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/shadow-",
    "/etc/gshadow-",
    "/etc/sudoers",
];

pub use crate::fs::beneath::PROTECTED;

/// Where a background command's process shim is bound inside the sandbox.
const SHIM_INSIDE: &str = "/run/ht-shim";

/// `/run` is small whatever the configured tmpfs size.
const RUN_SIZE: u64 = 16 << 20;

/// The descriptor number a spawner that places the seccomp program itself
/// (see [`Sandbox::prepare`]) should give it, and the one the PTY path uses.
pub const SECCOMP_FD: i32 = 3;

pub use crate::spawn::SandboxConfig;

pub struct Sandbox {
    bwrap: PathBuf,
    root: PathBuf,
    network: bool,
    proxy: Option<std::sync::Arc<crate::netproxy::NetProxy>>,
    ro_binds: Vec<PathBuf>,
    rw_binds: Vec<PathBuf>,
    limits: SandboxLimits,
    features: BwrapFeatures,
    masked: Vec<Mask>,
    /// The BPF program, `None` on an architecture without a syscall table.
    seccomp: Option<Vec<u8>>,
    /// The program as a file, for the PTY path (whose spawner closes every
    /// inherited descriptor): made on first use (again if a temp cleaner
    /// removed it), removed on drop.
    seccomp_file: Mutex<Option<PathBuf>>,
    pids: Option<limits::PidsCgroup>,
    ulimits: Option<String>,
    /// The folders below the writable areas that hold a [`PROTECTED`]
    /// entry (nested repositories: vendored clones, submodules, worktrees)
    /// and the git directories under other names ([`is_git_dir`]), found by
    /// [`nested_protected`] when the sandbox was built and found again
    /// whenever one of them has moved (a command renamed its parent: the
    /// read-only mount moves with it in that command, but the next one
    /// must find the repository where it is now).
    nested: Mutex<(Vec<PathBuf>, Vec<PathBuf>)>,
    /// Tasks given a network setting of their own by the host (in place of
    /// `network` and `proxy`), by task key.
    task_net: Mutex<std::collections::HashMap<String, crate::env::TaskNetwork>>,
}

/// Whether `dir` still holds a [`PROTECTED`] entry (not following links).
fn holds_protected(dir: &Path) -> bool {
    PROTECTED
        .iter()
        .any(|n| std::fs::symlink_metadata(dir.join(n)).is_ok())
}

/// Whether `dir` is a git directory (what a `.git` holds), whatever its
/// name: a `HEAD` file beside `objects` and `refs` folders.
pub fn is_git_dir(dir: &Path) -> bool {
    dir.join("HEAD").is_file() && dir.join("objects").is_dir() && dir.join("refs").is_dir()
}

/// `path` lexically normalised: `.` and `..` taken out (`..` above `/`
/// stays at `/`), no file system access.
fn lexical(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// A small regular file's text (at most 4 KiB), never following a final
/// symlink and never blocking: the workspace's files are the command's to
/// plant (a FIFO named `commondir` would hang the host, `/dev/zero` flood
/// it).
fn read_small_regular(path: &Path) -> Option<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    let mut buf = String::new();
    f.take(4096).read_to_string(&mut buf).ok()?;
    Some(buf)
}

/// The repository folders a `.git` file points at (`gitdir: PATH`, and
/// the `commondir` of a worktree's), canonical.
fn gitdir_targets(dot_git: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Some(text) = read_small_regular(dot_git) else {
        return out;
    };
    let Some(target) = text.lines().find_map(|l| l.strip_prefix("gitdir:")) else {
        return out;
    };
    let base = dot_git.parent().unwrap_or(Path::new("/"));
    let Ok(dir) = std::fs::canonicalize(base.join(target.trim())) else {
        return out;
    };
    if let Some(common) = read_small_regular(&dir.join("commondir"))
        && let Ok(c) = std::fs::canonicalize(dir.join(common.trim()))
    {
        out.push(c);
    }
    out.push(dir);
    out
}

/// Directories [`nested_protected`] looks into at most: a bound on the
/// sandbox's start for a huge tree (past it a warning says which entries
/// may be unprotected).
const NESTED_WALK_DIRS: usize = 20_000;

/// The folders under `roots` (not following symlinks, not entering the
/// protected entries themselves) that hold a [`PROTECTED`] entry, at any
/// depth below the top (the top's own are found per command).
fn nested_protected(roots: &[&Path]) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut out = Vec::new();
    let mut git_dirs = Vec::new();
    let mut queue: std::collections::VecDeque<PathBuf> =
        roots.iter().map(|r| r.to_path_buf()).collect();
    let mut seen = 0usize;
    while let Some(dir) = queue.pop_front() {
        seen += 1;
        if seen > NESTED_WALK_DIRS {
            tracing::warn!(
                "sandbox: more than {NESTED_WALK_DIRS} folders in the workspace: repository metadata nested deeper than the first {NESTED_WALK_DIRS} folders is not made read-only"
            );
            break;
        }
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        if !roots.contains(&dir.as_path()) && is_git_dir(&dir) {
            git_dirs.push(dir);
            continue; // protected whole, never walked into
        }
        let mut has = false;
        for e in rd.flatten() {
            let name = e.file_name();
            if PROTECTED.iter().any(|p| std::ffi::OsStr::new(p) == name) {
                has = true;
                continue; // never walked into
            }
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                queue.push_back(e.path());
            }
        }
        if has && !roots.contains(&dir.as_path()) {
            out.push(dir);
        }
    }
    (out, git_dirs)
}

/// What [`Sandbox::prepare`] hands a spawner: the argv, and descriptors that
/// must be open in the spawned bwrap under the numbers the argv names
/// (today: the seccomp program, named by `--seccomp N`). They are
/// close-on-exec in this process; a spawner either dup2()s each onto its own
/// number in the child (posix_spawn's adddup2 with equal numbers clears
/// close-on-exec in the child only) or clears the flag around the spawn.
pub struct Prepared {
    pub argv: Vec<String>,
    pub inherit: Vec<OwnedFd>,
}

/// The host entries a sandbox built from `cfg` hides (what
/// [`Sandbox::masked`] returns), for a file tool that mirrors the sandbox's
/// view without building one: the root-only entries of `/etc`, `/opt` and
/// the read-only binds outside the workspace, walked now.
pub fn masks_for(cfg: &SandboxConfig) -> Vec<Mask> {
    // What the sandbox may write anyway (the workspace, the writable
    // binds) is the user's own: not walked.
    let mut skip = vec![cfg.root.clone()];
    skip.extend(cfg.rw_binds.iter().cloned());
    let mut walked: Vec<PathBuf> = WALKED_DIRS.iter().map(PathBuf::from).collect();
    walked.extend(
        cfg.ro_binds
            .iter()
            .filter(|p| !p.starts_with(&cfg.root))
            .cloned(),
    );
    let mut masked = masks::root_only_entries(&walked, &skip);
    masked.extend(
        system_root_only()
            .iter()
            .filter(|m| !skip.iter().any(|s| m.path().starts_with(s)))
            .cloned(),
    );
    for m in MASKED {
        let p = Path::new(m);
        if std::fs::File::open(p).is_ok() && !masked.iter().any(|x| x.path() == p) {
            masked.push(Mask::File(p.to_path_buf()));
        }
    }
    masked
}

/// The [`PROTECTED`] name `path` lies in or is, if any, for a path inside
/// `root` (at any depth, so nested repositories count): what a file tool
/// asks about before writing, naming why.
pub fn protected_name(root: &Path, path: &Path) -> Option<&'static str> {
    let rel = path.strip_prefix(root).ok()?;
    rel.components().find_map(|c| {
        let c = c.as_os_str();
        PROTECTED
            .iter()
            .copied()
            .find(|p| c == std::ffi::OsStr::new(p))
    })
}

/// Whether the host's dynamic loader or C library acts on variable `name`
/// in a process it starts (code loaded, files read or written): every
/// `LD_*`, and glibc's others (`GLIBC_TUNABLES`, `GCONV_PATH`, `LOCPATH`,
/// `NLSPATH`, `MALLOC_*`, `HOSTALIASES`, `RES_OPTIONS`, `LOCALDOMAIN`,
/// `TZDIR`), and the start-up variables of a shell.
pub fn is_loader_var(name: &str) -> bool {
    name.starts_with("LD_")
        || name.starts_with("MALLOC_")
        || matches!(
            name,
            "GLIBC_TUNABLES"
                | "GCONV_PATH"
                | "LOCPATH"
                | "NLSPATH"
                | "HOSTALIASES"
                | "RES_OPTIONS"
                | "LOCALDOMAIN"
                | "TZDIR"
                | "GETCONF_DIR"
                // and a shell's (the PTY path starts bwrap through sh)
                | "BASH_ENV"
                | "ENV"
                | "SHELLOPTS"
                | "BASHOPTS"
                | "PS4"
        )
}

/// Refuse writable areas that hold the runtime's own host-side helpers:
/// the temporary folder (the state, seccomp and execute_code folders of
/// every runtime of this user), the process shim's folder and
/// `$XDG_RUNTIME_DIR`. The sandbox runs as the host's uid, so a workspace of
/// `/tmp` (or `/`, or the home holding the runtime folder) would let a
/// command replace the shim that the next command runs outside the
/// sandbox. A workspace below them is fine.
pub fn check_helpers_out_of_reach(cfg: &SandboxConfig) -> Result<(), String> {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let mut helpers: Vec<PathBuf> = vec![canon(&std::env::temp_dir()), PathBuf::from("/tmp")];
    if let Some(shim) = crate::supervisor::shim_path()
        && let Some(dir) = shim.parent()
    {
        helpers.push(canon(dir));
    }
    if let Some(run) = std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        helpers.push(canon(Path::new(&run)));
    }
    for w in std::iter::once(&cfg.root).chain(cfg.rw_binds.iter()) {
        let cw = canon(w);
        if let Some(h) = helpers.iter().find(|h| h.starts_with(&cw)) {
            return Err(format!(
                "sandbox: the writable folder {} holds {}, where the runtime keeps its own helpers (the process shim, state captures): a command could replace what runs outside the sandbox. Use a folder below it (e.g. {}/work) as terminal.cwd or in sandbox_rw_binds",
                w.display(),
                h.display(),
                w.display().to_string().trim_end_matches('/')
            ));
        }
    }
    Ok(())
}

/// How [`Sandbox::argv_inner`] binds the protected entries.
enum Binds<'a> {
    /// By path (diagnostics, tests; and where no descriptor can be kept).
    Paths,
    /// Opened here and bound by descriptor, the descriptors kept for the spawn.
    Fds(&'a mut Vec<OwnedFd>),
    /// `@O:PATH` for the shim's trampoline mode to open and check.
    Placeholders,
}

/// What the installed bubblewrap supports beyond the basics (0.8.0 has all;
/// an older one runs without them rather than not at all).
#[derive(Clone, Copy, Debug)]
struct BwrapFeatures {
    /// `--disable-userns` (0.8.0).
    disable_userns: bool,
    /// `--size` for a tmpfs.
    size: bool,
}

impl BwrapFeatures {
    fn probe(bwrap: &Path) -> BwrapFeatures {
        let help = std::process::Command::new(bwrap)
            .arg("--help")
            .stdin(std::process::Stdio::null())
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        let f = BwrapFeatures {
            disable_userns: help.contains("--disable-userns"),
            size: help.contains("--size"),
        };
        if !f.disable_userns || !f.size {
            tracing::warn!(
                "sandbox: {} lacks --disable-userns or --size (bubblewrap 0.8.0 has both): nested user namespaces are refused by seccomp only, or the memory-backed directories are unbounded",
                bwrap.display()
            );
        }
        f
    }
}

/// Find bubblewrap on PATH (or the usual places).
pub fn find_bwrap() -> Option<PathBuf> {
    crate::env::find_program("bwrap")
}

/// Whether the sandbox works on this machine (bubblewrap installed, and
/// allowed to make its namespaces here), found once per process by running
/// `true` in a sandbox over a scratch folder: `Err` says why not. What the
/// `auto` backend (the default) decides on, and what `doctor` reports.
pub fn usable() -> Result<(), String> {
    static PROBE: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    PROBE
        .get_or_init(|| {
            // A scratch folder of its own below the temporary folder (the
            // temporary folder itself holds the runtime's helpers, and a
            // sandbox over it is refused).
            let scratch = tempfile::Builder::new()
                .prefix("hermes-tools-probe-")
                .tempdir()
                .map_err(|e| format!("cannot make a scratch folder for the probe: {e}"))?;
            let root = scratch.path().to_path_buf();
            let sb = Sandbox::new(&SandboxConfig {
                root: root.clone(),
                ..Default::default()
            })?;
            let env = [("PATH".to_string(), "/usr/bin:/bin".to_string())];
            let req = SpawnRequest {
                script: "exit 0",
                cwd: &root,
                env: &env,
                pty: false,
                extra_rw: &[],
                task: "",
                linger: false,
            };
            let argv = sb.argv(&req, None);
            let out = std::process::Command::new(&argv[0])
                .args(&argv[1..])
                .env_clear()
                .envs(env.iter().cloned())
                .stdin(std::process::Stdio::null())
                .output()
                .map_err(|e| format!("cannot run {}: {e}", argv[0]))?;
            if out.status.success() {
                Ok(())
            } else {
                Err(format!(
                    "bubblewrap cannot make its namespaces here ({}): {}",
                    out.status,
                    String::from_utf8_lossy(&out.stderr).trim()
                ))
            }
        })
        .clone()
}

/// For tests: [`usable`], except that with `HT_REQUIRE_SANDBOX` set (CI
/// sets it) a sandbox that does not work here fails the test instead of
/// skipping it, so a regression in the probe cannot turn every sandbox
/// test into a silent skip.
#[doc(hidden)]
pub fn usable_or_required() -> Result<(), String> {
    let r = usable();
    if let Err(why) = &r
        && std::env::var_os("HT_REQUIRE_SANDBOX").is_some()
    {
        panic!("HT_REQUIRE_SANDBOX is set, and the sandbox does not work here: {why}");
    }
    r
}

/// The Landlock ABI version the kernel offers (`None`: not built in, or
/// disabled at boot). Reported by `doctor`; the shim applies the rules.
#[allow(unsafe_code)]
pub fn landlock_abi() -> Option<u32> {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_ulong = 1;
    // SAFETY: landlock_create_ruleset(NULL, 0, VERSION) reads no memory
    // (the attribute pointer is NULL and its size 0) and creates nothing:
    // it returns the ABI version or -1 with errno set.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    (v > 0).then_some(v as u32)
}

impl Sandbox {
    /// A sandbox whose writable root is `root` (the working directory).
    pub fn new(cfg: &SandboxConfig) -> Result<Sandbox, String> {
        let bwrap = find_bwrap().ok_or_else(|| {
            "terminal.backend 'sandbox' needs bubblewrap (bwrap), which is not installed"
                .to_string()
        })?;
        let seccomp = match seccomp::native_table() {
            Some(t) => Some(seccomp::program(t)),
            None => {
                tracing::warn!(
                    "sandbox: no seccomp filter for this architecture ({}); commands run without one",
                    std::env::consts::ARCH
                );
                None
            }
        };
        if cfg.proxy.is_some() && (cfg.network || crate::supervisor::shim_path().is_none()) {
            return Err(
                "sandbox: a network allow-list needs the network off and the process shim (which hands the proxy its listener)"
                    .to_string(),
            );
        }
        check_helpers_out_of_reach(cfg)?;
        let masked = masks_for(cfg);
        let features = BwrapFeatures::probe(&bwrap);
        let pids = if crate::sys::geteuid() == 0 && cfg.limits.max_processes > 0 {
            limits::PidsCgroup::new(cfg.limits.max_processes, cfg.limits.memory_bytes)
        } else {
            None
        };
        if crate::sys::geteuid() == 0 && cfg.limits.max_processes > 0 && pids.is_none() {
            tracing::warn!(
                "sandbox: running as root without a writable cgroup v1 pids hierarchy: the process limit does not hold (RLIMIT_NPROC does not apply to root)"
            );
        }
        let (nested, git_dirs) = {
            let roots: Vec<&Path> = std::iter::once(cfg.root.as_path())
                .chain(cfg.rw_binds.iter().map(PathBuf::as_path))
                .collect();
            nested_protected(&roots)
        };
        Ok(Sandbox {
            nested: Mutex::new((nested, git_dirs)),
            task_net: Mutex::new(std::collections::HashMap::new()),
            bwrap,
            root: cfg.root.clone(),
            network: cfg.network,
            proxy: cfg.proxy.clone(),
            ro_binds: cfg.ro_binds.clone(),
            rw_binds: cfg.rw_binds.clone(),
            limits: cfg.limits,
            features,
            masked,
            seccomp,
            seccomp_file: Mutex::new(None),
            pids,
            ulimits: limits::ulimit_prefix(&cfg.limits),
        })
    }

    /// The seccomp program bubblewrap installs (`struct sock_filter[]`);
    /// empty on an architecture the filter does not know.
    pub fn seccomp_program(&self) -> &[u8] {
        self.seccomp.as_deref().unwrap_or(&[])
    }

    /// The host entries hidden in the sandbox (root-only files and
    /// directories under the read-only binds): the file tools refuse them too.
    pub fn masked(&self) -> &[Mask] {
        &self.masked
    }

    /// The limits every command gets.
    pub fn limits(&self) -> &SandboxLimits {
        &self.limits
    }

    /// Task `task`'s network: its own setting if the host gave it one,
    /// else the sandbox's.
    fn net_for(&self, task: &str) -> (bool, Option<std::sync::Arc<crate::netproxy::NetProxy>>) {
        let nets = self.task_net.lock().unwrap_or_else(|e| e.into_inner());
        match nets.get(crate::env::task_key(task)) {
            Some(n) => n.parts(),
            None => (self.network, self.proxy.clone()),
        }
    }

    /// The argv and the descriptors a spawner must pass (see [`Prepared`]).
    pub fn prepare(&self, req: &SpawnRequest<'_>) -> io::Result<Prepared> {
        let mut inherit = Vec::new();
        let fd = match &self.seccomp {
            Some(bpf) => {
                let fd = sealed_memfd(bpf)?;
                let n = fd.as_raw_fd();
                inherit.push(fd);
                Some(n)
            }
            None => None,
        };
        let argv = self.argv_inner(req, fd.map(|n| n.to_string()), Binds::Fds(&mut inherit));
        Ok(Prepared { argv, inherit })
    }

    /// The bwrap argv that runs `script`, reading the seccomp program from
    /// descriptor `seccomp_fd` (`None`: no filter). Pure: exposed for tests
    /// and diagnostics.
    pub fn argv(&self, req: &SpawnRequest<'_>, seccomp_fd: Option<i32>) -> Vec<String> {
        self.argv_inner(req, seccomp_fd.map(|n| n.to_string()), Binds::Paths)
    }

    /// [`Sandbox::argv`]; with `fds`, each protected entry is opened here
    /// (`O_PATH | O_NOFOLLOW`), checked through its descriptor to lie in a
    /// writable area, and bound by descriptor (`--ro-bind-fd`), so a
    /// command swapping the entry for a symlink between the check and
    /// bwrap's mount cannot make bwrap bind what the link names; the
    /// descriptors go into `fds` for the spawn. Without (the PTY path,
    /// whose spawner closes every descriptor), by path.
    fn argv_inner(
        &self,
        req: &SpawnRequest<'_>,
        seccomp_fd: Option<String>,
        mut binds: Binds<'_>,
    ) -> Vec<String> {
        let (network, proxy) = self.net_for(req.task);
        let mut a: Vec<String> = vec![self.bwrap.display().to_string()];
        let mut push = |xs: &[&str]| a.extend(xs.iter().map(|s| s.to_string()));
        for d in SYSTEM_DIRS {
            let p = Path::new(d);
            if let Ok(target) = std::fs::read_link(p) {
                push(&["--symlink", &target.display().to_string(), d]);
            } else if p.is_dir() {
                push(&["--ro-bind", d, d]);
            }
        }
        // A private home unless the home lies inside the writable root.
        let home = req
            .env
            .iter()
            .find(|(k, _)| k == "HOME")
            .map(|(_, v)| PathBuf::from(v))
            .filter(|h| !h.starts_with(&self.root) && h.is_absolute() && h != Path::new("/"));
        // Mounts are stacked in argv order: a read-only bind under a fresh
        // tmpfs (/tmp, /run, the private home) goes after that tmpfs, or the
        // tmpfs would hide it.
        let under_tmpfs = |p: &Path| {
            p.starts_with("/tmp")
                || p.starts_with("/run")
                || home.as_ref().is_some_and(|h| p.starts_with(h))
        };
        for p in self.ro_binds.iter().filter(|p| !under_tmpfs(p)) {
            if p.exists() {
                let s = p.display().to_string();
                push(&["--ro-bind", &s, &s]);
            }
        }
        let tmp_size = if self.features.size {
            self.limits.tmp_size_bytes
        } else {
            0
        };
        let sized = |size: u64| -> Vec<String> {
            if size == 0 {
                vec![]
            } else {
                vec!["--size".into(), size.to_string()]
            }
        };
        push(&["--proc", "/proc", "--dev", "/dev"]);
        // /dev is a tmpfs the sandbox's root would own: a sized /dev/shm
        // inside, then the rest read-only (device nodes still work).
        a.extend(sized(tmp_size));
        let mut push = |xs: &[&str]| a.extend(xs.iter().map(|s| s.to_string()));
        push(&[
            "--perms",
            "1777",
            "--tmpfs",
            "/dev/shm",
            "--remount-ro",
            "/dev",
        ]);
        a.extend(sized(tmp_size));
        a.extend(["--tmpfs".into(), "/tmp".into()]);
        a.extend(sized(match (self.features.size, tmp_size) {
            (false, _) => 0,
            (true, 0) => RUN_SIZE,
            (true, t) => t.min(RUN_SIZE),
        }));
        a.extend(["--tmpfs".into(), "/run".into()]);
        let mut push = |xs: &[&str]| a.extend(xs.iter().map(|s| s.to_string()));
        // Kernel knobs read-only whatever the capabilities (bubblewrap
        // already sets no_new_privs, so nothing can gain them back).
        for knob in ["/proc/sys", "/proc/sysrq-trigger"] {
            if Path::new(knob).exists() {
                push(&["--ro-bind", knob, knob]);
            }
        }
        if let Some(h) = &home {
            let s = h.display().to_string();
            a.extend(sized(tmp_size));
            a.extend(["--tmpfs".into(), s]);
        }
        let mut push = |xs: &[&str]| a.extend(xs.iter().map(|s| s.to_string()));
        for p in self.ro_binds.iter().filter(|p| under_tmpfs(p)) {
            if p.exists() {
                let s = p.display().to_string();
                push(&["--ro-bind", &s, &s]);
            }
        }
        // Root-only host entries: after every read-only bind that could
        // show them, before the writable binds (which the walk skipped).
        // An entry removed since the walk is skipped (bwrap cannot mount
        // over a path that is gone, and would refuse every command); one
        // that changed kind is masked as what it is now.
        for m in &self.masked {
            let s = m.path().display().to_string();
            match std::fs::symlink_metadata(m.path()) {
                Ok(md) if md.is_dir() => push(&["--perms", "0000", "--tmpfs", &s]),
                Ok(md) if !md.file_type().is_symlink() => push(&["--ro-bind", "/dev/null", &s]),
                _ => {}
            }
        }
        let root = self.root.display().to_string();
        push(&["--bind", &root, &root]);
        for p in self.rw_binds.iter().chain(req.extra_rw.iter()) {
            if p.exists() {
                let s = p.display().to_string();
                push(&["--bind", &s, &s]);
            }
        }
        // The cwd comes from the task's captured state, which the command
        // wrote (`PWD=$PWD/../../../root/x`): `..` taken out lexically first
        // (Path::starts_with does not), so a forged path cannot pass for one
        // inside the workspace.
        let normal = lexical(req.cwd);
        let cwd = if normal.starts_with(&self.root) {
            normal
        } else {
            self.root.clone()
        };
        // Repository metadata and the like, read-only over the writable
        // binds.
        let areas: Vec<PathBuf> = std::iter::once(&self.root)
            .chain(self.rw_binds.iter())
            .chain(req.extra_rw.iter())
            .map(|w| std::fs::canonicalize(w).unwrap_or_else(|_| w.clone()))
            .collect();
        for p in self.protected_entries(&cwd, req.extra_rw) {
            let s = p.display().to_string();
            match &mut binds {
                // The PTY path: its spawner closes every descriptor, so the
                // shim (trampoline mode, `-T`) opens and checks each entry
                // right before it becomes bwrap, as below.
                Binds::Placeholders => push(&["--ro-bind-fd", &format!("@O:{s}"), &s]),
                Binds::Fds(fds) => {
                    let Ok(fd) = rustix::fs::open(
                        &p,
                        rustix::fs::OFlags::PATH
                            | rustix::fs::OFlags::NOFOLLOW
                            | rustix::fs::OFlags::CLOEXEC,
                        rustix::fs::Mode::empty(),
                    ) else {
                        continue;
                    };
                    // What the descriptor is, not what the name says now.
                    let real = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()));
                    let inside = real.is_ok_and(|r| areas.iter().any(|w| r.starts_with(w)));
                    let is_link = rustix::fs::fstat(&fd)
                        .is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFLNK);
                    if !inside || is_link {
                        continue;
                    }
                    let n = fd.as_raw_fd().to_string();
                    fds.push(fd);
                    push(&["--ro-bind-fd", &n, &s]);
                }
                Binds::Paths => push(&["--ro-bind", &s, &s]),
            }
        }
        let cwd = cwd.display().to_string();
        push(&[
            "--chdir",
            &cwd,
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--die-with-parent",
            // Its own user namespace whatever the host's uid, and no
            // further ones inside (seccomp refuses them too).
            "--unshare-user",
        ]);
        if self.features.disable_userns {
            push(&["--disable-userns"]);
        }
        if !network {
            push(&["--unshare-net"]);
        }
        // The allow-list proxy: its socket, its variables (after the
        // command's own, which they override), no secret's source.
        if let Some(p) = &proxy {
            push(&[
                "--ro-bind",
                &p.socket().display().to_string(),
                crate::netproxy::SOCKET_INSIDE,
            ]);
            if let Some(ca) = p.ca_bundle() {
                push(&[
                    "--ro-bind",
                    &ca.display().to_string(),
                    crate::netproxy::CA_INSIDE,
                ]);
            }
            for (k, v) in p.sandbox_env() {
                push(&["--setenv", &k, &v]);
            }
            for k in p.unset_env() {
                push(&["--unsetenv", &k]);
            }
        }
        if crate::sys::geteuid() == 0 {
            // bwrap run by root keeps root's capabilities unless told
            // otherwise: a command could remount the read-only binds, write
            // /proc/sys or read the kernel log. Drop every capability; the
            // files root could read only because it owns them are masked.
            push(&["--uid", "0", "--gid", "0", "--cap-drop", "ALL"]);
        }
        if !req.pty {
            // A PTY command needs its controlling terminal; a pipe one must not get any.
            push(&["--new-session"]);
        }
        if let Some(fd) = &seccomp_fd {
            push(&["--seccomp", fd]);
        }
        let script = match &self.ulimits {
            Some(prefix) => format!("{prefix}{}", req.script),
            None => req.script.to_string(),
        };
        // The command runs under the process shim bound in read-only: a
        // background command's tree lingers after its launcher ends (a
        // script that starts a server), and bwrap's init ends the PID
        // namespace with its first child, so the shim runs inside as that
        // child, a subreaper that waits for the last process (-l); a
        // foreground one is waited for by bwrap, and the shim only applies
        // Landlock and becomes the command (-e). Landlock (-L) repeats the
        // mounts' policy in the kernel's own terms (read-only everywhere but
        // the writable areas) and, where the kernel scopes them, keeps the
        // command's signals and abstract unix sockets inside its domain.
        // Variables the host's dynamic loader and libc act on reach the
        // command only through bubblewrap (`--setenv`), never the
        // environment of the host-side processes (bwrap, the shim, sh).
        for (k, v) in req.env.iter().filter(|(k, _)| is_loader_var(k)) {
            push(&["--setenv", k, v]);
        }
        match crate::supervisor::shim_path() {
            Some(shim) => {
                let s = shim.display().to_string();
                push(&["--ro-bind", &s, SHIM_INSIDE, "--", SHIM_INSIDE]);
                if proxy.is_some() {
                    let fwd = format!(
                        "{}:{}",
                        crate::netproxy::PORT_INSIDE,
                        crate::netproxy::SOCKET_INSIDE
                    );
                    push(&["-P", &fwd]);
                }
                push(&[if req.linger { "-l" } else { "-e" }, "-L", "-D", "/dev"]);
                let writable = [&self.root]
                    .into_iter()
                    .chain(self.rw_binds.iter())
                    .chain(req.extra_rw.iter())
                    .map(|p| p.display().to_string())
                    .chain(["/tmp", "/run", "/dev/shm"].map(String::from))
                    .chain(home.iter().map(|h| h.display().to_string()));
                for w in writable {
                    push(&["-W", &w]);
                }
                push(&["--", BASH, "-c", &script]);
            }
            // Fail closed: no Landlock, no scoping and no owner is not a
            // sandbox this runtime promises.
            None => push(&[
                "--",
                BASH,
                "-c",
                "echo 'hermes-tools: the process shim could not be installed (see the log); the sandbox does not run commands without it' >&2; exit 126",
            ]),
        }
        a
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The existing [`PROTECTED`] entries a command started in `cwd` gets
    /// read-only: in the workspace root, in the writable binds and in every
    /// directory from the root down to `cwd`. A runtime can compare the
    /// list before and after a command: an entry that appeared (a `.git`
    /// made by `git init` where there was none) was not protected.
    pub fn protected_entries(&self, cwd: &Path, extra_rw: &[PathBuf]) -> Vec<PathBuf> {
        let cwd_normal = lexical(cwd);
        let cwd = cwd_normal.as_path();
        let mut dirs: Vec<&Path> = vec![&self.root];
        dirs.extend(
            self.rw_binds
                .iter()
                .chain(extra_rw.iter())
                .map(PathBuf::as_path),
        );
        let mut d = cwd;
        while d.starts_with(&self.root) && d != self.root {
            dirs.push(d);
            match d.parent() {
                Some(p) => d = p,
                None => break,
            }
        }
        // Nested repositories and git directories: found again when one
        // of those known has moved or gone.
        let (nested, git_dirs) = {
            let mut known = self.nested.lock().unwrap_or_else(|e| e.into_inner());
            let moved = known.0.iter().any(|d| !holds_protected(d))
                || known.1.iter().any(|g| !is_git_dir(g));
            if moved {
                let roots: Vec<&Path> = std::iter::once(self.root.as_path())
                    .chain(self.rw_binds.iter().map(PathBuf::as_path))
                    .collect();
                *known = nested_protected(&roots);
            }
            known.clone()
        };
        for n in &nested {
            if !dirs.contains(&n.as_path()) {
                dirs.push(n);
            }
        }
        // Writable areas as configured (the sandbox's paths) and resolved.
        let areas: Vec<(&Path, PathBuf)> = std::iter::once(self.root.as_path())
            .chain(self.rw_binds.iter().map(PathBuf::as_path))
            .chain(extra_rw.iter().map(PathBuf::as_path))
            .map(|w| {
                (
                    w,
                    std::fs::canonicalize(w).unwrap_or_else(|_| w.to_path_buf()),
                )
            })
            .collect();
        let mut out = Vec::new();
        for dir in dirs {
            for name in PROTECTED {
                let p = dir.join(name);
                let Ok(md) = std::fs::symlink_metadata(&p) else {
                    continue;
                };
                // A symlinked entry (`.git -> elsewhere`): what must not
                // change is its target, protected where the sandbox sees it
                // if it lies in a writable area (elsewhere it is read-only
                // or invisible already).
                // A `.git` file (`gitdir: PATH`: a separate git dir, a
                // worktree's, a submodule's) points at the repository: that
                // is what a later git runs, so it is protected too.
                if md.is_file() && *name == ".git" {
                    for g in gitdir_targets(&p) {
                        if let Some(seen) = areas.iter().find_map(|(w, canon)| {
                            g.strip_prefix(canon).ok().map(|rest| w.join(rest))
                        }) && !out.contains(&seen)
                        {
                            out.push(seen);
                        }
                    }
                }
                // Only what lies, on the host, inside a writable area is
                // bound (where the sandbox sees it): a bind of anything else
                // would show the sandbox a host entry it cannot see (or one
                // it masks) rather than protect one it can write.
                let Ok(real) = std::fs::canonicalize(&p) else {
                    continue;
                };
                let Some(p) = areas
                    .iter()
                    .find_map(|(w, canon)| real.strip_prefix(canon).ok().map(|rest| w.join(rest)))
                else {
                    continue;
                };
                if !out.contains(&p) {
                    out.push(p);
                }
            }
        }
        // Git directories found under any name when the sandbox was built
        // (`git init --separate-git-dir`, bare repositories).
        // The same check as above: a git directory's parent swapped for a
        // symlink must not bind what the link names.
        for g in &git_dirs {
            let Ok(real) = std::fs::canonicalize(g) else {
                continue;
            };
            if let Some(p) = areas
                .iter()
                .find_map(|(w, canon)| real.strip_prefix(canon).ok().map(|rest| w.join(rest)))
                && !out.contains(&p)
            {
                out.push(p);
            }
        }
        out
    }

    /// The seccomp program as a file of its own (PTY path).
    fn seccomp_file(&self, bpf: &[u8]) -> io::Result<PathBuf> {
        let mut f = self.seccomp_file.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = f.as_ref().filter(|p| p.is_file()) {
            return Ok(p.clone());
        }
        let p = write_private_file(bpf)
            .map_err(|e| io::Error::other(format!("sandbox: seccomp program file: {e}")))?;
        *f = Some(p.clone());
        Ok(p)
    }

    /// The argv that starts `req` and the descriptors that must stay open
    /// (close-on-exec cleared) until it has started.
    fn launch(&self, req: &SpawnRequest<'_>) -> io::Result<(Vec<String>, Vec<OwnedFd>)> {
        match (&self.seccomp, req.pty) {
            (None, _) => Ok((self.argv(req, None), Vec::new())),
            (Some(bpf), true) => {
                // The PTY spawner closes every descriptor above 2: the
                // process shim in trampoline mode (`-T`) opens the program
                // and each protected entry (checked, through its
                // descriptor, to lie in a writable area `-A`) and becomes
                // bwrap with their numbers in place of the `@` arguments.
                let Some(shim) = crate::supervisor::shim_path() else {
                    return Err(io::Error::other(
                        "sandbox: the process shim could not be installed (see the log); a PTY command cannot start without it",
                    ));
                };
                let file = self.seccomp_file(bpf)?;
                let mut argv = vec![shim.display().to_string(), "-T".to_string()];
                for w in std::iter::once(&self.root)
                    .chain(self.rw_binds.iter())
                    .chain(req.extra_rw.iter())
                {
                    let canon = std::fs::canonicalize(w).unwrap_or_else(|_| w.clone());
                    argv.push("-A".into());
                    argv.push(canon.display().to_string());
                }
                argv.push("--".into());
                argv.extend(self.argv_inner(
                    req,
                    Some(format!("@R:{}", file.display())),
                    Binds::Placeholders,
                ));
                Ok((argv, Vec::new()))
            }
            (Some(_), false) => {
                let p = self.prepare(req)?;
                // The pipe spawner keeps inherited descriptors: clear
                // close-on-exec on the program's memfd for the spawn. Another
                // thread spawning meanwhile inherits it too: it holds only
                // this public, sealed program, and bwrap reads its own copy.
                for fd in &p.inherit {
                    rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::empty())?;
                }
                Ok((p.argv, p.inherit))
            }
        }
    }
}

/// A sealed, close-on-exec memfd holding `bytes`, positioned at its start.
fn sealed_memfd(bytes: &[u8]) -> io::Result<OwnedFd> {
    use rustix::fs::{MemfdFlags, SealFlags};
    use std::io::{Seek, Write};
    let fd = rustix::fs::memfd_create(
        "hermes-seccomp",
        MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING,
    )?;
    let mut f = std::fs::File::from(fd);
    f.write_all(bytes)?;
    f.seek(io::SeekFrom::Start(0))?;
    let fd = OwnedFd::from(f);
    rustix::fs::fcntl_add_seals(
        &fd,
        SealFlags::WRITE | SealFlags::GROW | SealFlags::SHRINK | SealFlags::SEAL,
    )?;
    Ok(fd)
}

/// `bytes` in a new file of a new 0700 directory under the temp dir.
fn write_private_file(bytes: &[u8]) -> io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let base = std::env::temp_dir();
    for i in 0..100u32 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let dir = base.join(format!(
            "hermes-sandbox-{}-{nanos:x}-{i}",
            std::process::id()
        ));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => {
                let f = dir.join("seccomp.bpf");
                std::fs::write(&f, bytes)?;
                return Ok(f);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other("no fresh temporary directory"))
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        if let Some(f) = self
            .seccomp_file
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
        {
            let _ = std::fs::remove_file(&*f);
            if let Some(d) = f.parent() {
                let _ = std::fs::remove_dir(d);
            }
        }
    }
}

impl Environment for Sandbox {
    fn name(&self) -> &'static str {
        "sandbox"
    }

    fn set_task_network(&self, task: &str, net: Option<crate::env::TaskNetwork>) -> io::Result<()> {
        if matches!(net, Some(crate::env::TaskNetwork::Proxy(_)))
            && crate::supervisor::shim_path().is_none()
        {
            return Err(io::Error::other(
                "sandbox: a network allow-list needs the process shim (which hands the proxy its listener), and it is missing",
            ));
        }
        let mut nets = self.task_net.lock().unwrap_or_else(|e| e.into_inner());
        let key = crate::env::task_key(task).to_string();
        match net {
            Some(n) => nets.insert(key, n),
            None => nets.remove(&key),
        };
        Ok(())
    }

    fn cleanup_task(&self, task: &str) {
        // The task's own setting (and its proxy) goes with the task.
        let mut nets = self.task_net.lock().unwrap_or_else(|e| e.into_inner());
        nets.remove(crate::env::task_key(task));
    }

    fn spawn(&self, req: &SpawnRequest<'_>) -> io::Result<Spawned> {
        let (argv, keep_open) = self.launch(req)?;
        // The host-side processes (bwrap, the shim, the PTY path's sh) run
        // with the host's rights before any sandboxing: a variable the
        // command exported (captured as the task's state) that the dynamic
        // loader acts on (`LD_PRELOAD=$PWD/evil.so`) would run the
        // command's code there. They get the environment without them; the
        // command gets them through `--setenv` (see `argv`).
        // A task without a proxy keeps no proxy variables from its
        // captured state (it had one before its network was changed).
        let proxied = self.net_for(req.task).1.is_some();
        let host_env: Vec<(String, String)> = req
            .env
            .iter()
            .filter(|(k, _)| !is_loader_var(k))
            .filter(|(k, v)| proxied || !crate::netproxy::NetProxy::is_proxy_variable(k, v))
            .cloned()
            .collect();
        let req = &SpawnRequest {
            env: &host_env,
            ..*req
        };
        let r = match &self.pids {
            Some(cg) => cg.spawn(argv, req),
            // A foreground command is waited for by the thread that
            // started it, so bwrap's `--die-with-parent` and its PID
            // namespace hold it; a background one outlives that thread and
            // needs the shim.
            None if !req.linger => spawn_argv_unsupervised(&argv, req),
            None => spawn_bwrap_supervised(&argv, req),
        };
        drop(keep_open);
        r
    }
}

impl Files for Sandbox {}

#[cfg(test)]
mod tests {
    use super::*;

    fn req<'a>(cwd: &'a Path, env: &'a [(String, String)], pty: bool) -> SpawnRequest<'a> {
        SpawnRequest {
            script: "echo hi",
            cwd,
            env,
            pty,
            extra_rw: &[],
            task: "",
            linger: false,
        }
    }

    fn position(argv: &[String], window: &[&str]) -> Option<usize> {
        argv.windows(window.len())
            .position(|w| w.iter().zip(window).all(|(a, b)| a == b))
    }

    #[test]
    fn argv_orders_masks_rw_bind_and_protected_binds() {
        if find_bwrap().is_none() {
            return;
        }
        let t = std::env::temp_dir().join(format!("hermes-argv-{}", std::process::id()));
        std::fs::create_dir_all(t.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(t.join("a/b/.git")).unwrap();
        std::fs::write(t.join(".envrc"), "").unwrap();
        let sb = Sandbox::new(&SandboxConfig {
            root: t.clone(),
            ..SandboxConfig::default()
        })
        .unwrap();
        let cwd = t.join("a/b");
        let argv = sb.argv(&req(&cwd, &[], false), Some(7));
        let s = |p: &Path| p.display().to_string();
        let root_bind = position(&argv, &["--bind", &s(&t), &s(&t)]).unwrap();
        for p in [t.join(".git"), t.join(".envrc"), t.join("a/b/.git")] {
            let at = position(&argv, &["--ro-bind", &s(&p), &s(&p)])
                .unwrap_or_else(|| panic!("{p:?} not protected: {argv:?}"));
            assert!(at > root_bind, "{p:?} bound before the workspace");
        }
        for m in sb.masked() {
            let at = position(&argv, &[&s(m.path())]).unwrap();
            assert!(at < root_bind, "{m:?} after the workspace");
        }
        assert!(position(&argv, &["--seccomp", "7"]).is_some(), "{argv:?}");
        assert!(position(&argv, &["--unshare-user"]).is_some(), "{argv:?}");
        assert!(
            position(&argv, &["--remount-ro", "/dev"]).is_some(),
            "{argv:?}"
        );
        let tmp = position(&argv, &["--tmpfs", "/tmp"]).unwrap();
        assert_eq!(argv[tmp - 2], "--size", "{argv:?}");
        // The limits run in the sandboxed bash, on the script's own line.
        let script = argv.last().unwrap();
        assert!(
            script.starts_with("ulimit -S -H ") && script.ends_with("; echo hi"),
            "{script}"
        );
        assert_eq!(sb.protected_entries(&cwd, &[]).len(), 3);
        std::fs::remove_dir_all(&t).unwrap();
    }

    #[test]
    fn a_symlinked_entry_protects_its_target_inside_the_workspace() {
        if find_bwrap().is_none() {
            return;
        }
        let t = std::env::temp_dir().join(format!("hermes-protect-{}", std::process::id()));
        let outside = std::env::temp_dir().join(format!("hermes-outside-{}", std::process::id()));
        std::fs::create_dir_all(t.join("sub/gitdir")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink("gitdir", t.join("sub/.git")).unwrap();
        std::os::unix::fs::symlink(&outside, t.join(".vscode")).unwrap();
        let sb = Sandbox::new(&SandboxConfig {
            root: t.clone(),
            ..SandboxConfig::default()
        })
        .unwrap();
        let got = sb.protected_entries(&t.join("sub"), &[]);
        std::fs::remove_dir_all(&t).unwrap();
        std::fs::remove_dir_all(&outside).unwrap();
        assert_eq!(got, vec![t.join("sub/gitdir")]);
    }

    #[test]
    fn protected_names_are_found_at_any_depth_inside_the_root() {
        let root = Path::new("/w");
        assert_eq!(
            protected_name(root, Path::new("/w/.git/config")),
            Some(".git")
        );
        assert_eq!(
            protected_name(root, Path::new("/w/x/.git/hooks/pre-commit")),
            Some(".git")
        );
        assert_eq!(
            protected_name(root, Path::new("/w/.vscode/tasks.json")),
            Some(".vscode")
        );
        assert_eq!(protected_name(root, Path::new("/w/.envrc")), Some(".envrc"));
        assert_eq!(protected_name(root, Path::new("/w/src/main.rs")), None);
        assert_eq!(protected_name(root, Path::new("/w/.gitignore")), None);
        assert_eq!(protected_name(root, Path::new("/elsewhere/.git")), None);
    }

    #[test]
    fn landlock_abi_matches_the_enabled_security_modules() {
        // The list of active modules, or failing securityfs, the kernel's
        // configured default (when the boot line does not override it).
        let lsm = std::fs::read_to_string("/sys/kernel/security/lsm")
            .ok()
            .or_else(|| {
                let cmdline = std::fs::read_to_string("/proc/cmdline").unwrap_or_default();
                if cmdline.contains("lsm=") || cmdline.contains("landlock") {
                    return None;
                }
                let out = std::process::Command::new("zcat")
                    .arg("/proc/config.gz")
                    .output()
                    .ok()?;
                let config = String::from_utf8_lossy(&out.stdout).into_owned();
                if !config.contains("CONFIG_SECURITY_LANDLOCK=y") {
                    return Some(String::new());
                }
                config
                    .lines()
                    .find_map(|l| l.strip_prefix("CONFIG_LSM=\""))
                    .map(|l| l.trim_end_matches('"').to_string())
            });
        let Some(lsm) = lsm else {
            return;
        };
        let enabled = lsm.trim().split(',').any(|m| m == "landlock");
        assert_eq!(landlock_abi().is_some(), enabled, "lsm list: {lsm}");
        if let Some(v) = landlock_abi() {
            assert!(v >= 1);
        }
    }
}
