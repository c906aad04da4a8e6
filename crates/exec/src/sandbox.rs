//! The sandbox backend: the local backend's bash inside bubblewrap. The
//! system directories are bound read-only, the working root (the configured
//! cwd) read-write, `/tmp` is a private tmpfs, and the network is cut off
//! unless `terminal.network` is true. The sandbox gets its own pid
//! namespace and dies with its parent (`--die-with-parent`), so killing the
//! bwrap process (what the runtime does on timeout, kill and close) ends
//! everything inside.

use std::io;
use std::path::{Path, PathBuf};

use crate::env::{Environment, Files};
use crate::local::{BASH, spawn_argv};
use crate::spawn::{SpawnRequest, Spawned};

const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
];

/// Host files a sandboxed command never reads, even when the host runs as
/// root (they are root's own: ownership alone would let it read them).
const MASKED: &[&str] = &[
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/shadow-",
    "/etc/gshadow-",
    "/etc/sudoers",
];

pub use crate::spawn::SandboxConfig;

pub struct Sandbox {
    bwrap: PathBuf,
    root: PathBuf,
    network: bool,
    ro_binds: Vec<PathBuf>,
    rw_binds: Vec<PathBuf>,
}

/// Find bubblewrap on PATH (or the usual places).
pub fn find_bwrap() -> Option<PathBuf> {
    let path = std::env::var("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(
            ["/usr/bin", "/usr/local/bin", "/bin"]
                .iter()
                .map(PathBuf::from),
        )
        .map(|d| d.join("bwrap"))
        .find(|p| p.is_file())
}

impl Sandbox {
    /// A sandbox whose writable root is `root` (the working directory).
    pub fn new(cfg: &SandboxConfig) -> Result<Sandbox, String> {
        let bwrap = find_bwrap().ok_or_else(|| {
            "terminal.backend 'sandbox' needs bubblewrap (bwrap), which is not installed"
                .to_string()
        })?;
        Ok(Sandbox {
            bwrap,
            root: cfg.root.clone(),
            network: cfg.network,
            ro_binds: cfg.ro_binds.clone(),
            rw_binds: cfg.rw_binds.clone(),
        })
    }

    /// The bwrap argv that runs `script` (exposed for tests and diagnostics).
    pub fn argv(&self, req: &SpawnRequest<'_>) -> Vec<String> {
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
        push(&[
            "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/run",
        ]);
        // Kernel knobs read-only whatever the capabilities (bubblewrap
        // already sets no_new_privs, so nothing can gain them back).
        for knob in ["/proc/sys", "/proc/sysrq-trigger"] {
            if Path::new(knob).exists() {
                push(&["--ro-bind", knob, knob]);
            }
        }
        if let Some(h) = &home {
            let s = h.display().to_string();
            push(&["--tmpfs", &s]);
        }
        for p in self.ro_binds.iter().filter(|p| under_tmpfs(p)) {
            if p.exists() {
                let s = p.display().to_string();
                push(&["--ro-bind", &s, &s]);
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
        let cwd = if req.cwd.starts_with(&self.root) {
            req.cwd.display().to_string()
        } else {
            root.clone()
        };
        push(&[
            "--chdir",
            &cwd,
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--die-with-parent",
        ]);
        if !self.network {
            push(&["--unshare-net"]);
        }
        if crate::sys::geteuid() == 0 {
            // bwrap run by root keeps root's capabilities unless told
            // otherwise: a command could remount the read-only binds, write
            // /proc/sys or read the kernel log. Drop every capability, in
            // a user namespace of its own; root-owned files root may read
            // only because it owns them (the shadow files) are masked.
            push(&[
                "--unshare-user",
                "--uid",
                "0",
                "--gid",
                "0",
                "--cap-drop",
                "ALL",
            ]);
            for secret in MASKED {
                if Path::new(secret).exists() {
                    push(&["--ro-bind", "/dev/null", secret]);
                }
            }
        }
        if !req.pty {
            // A PTY command needs its controlling terminal; a pipe one must not get any.
            push(&["--new-session"]);
        }
        push(&["--", BASH, "-c", req.script]);
        a
    }

    pub fn root(&self) -> &Path {
        &self.root
    }
}

impl Environment for Sandbox {
    fn name(&self) -> &'static str {
        "sandbox"
    }

    fn spawn(&self, req: &SpawnRequest<'_>) -> io::Result<Spawned> {
        let argv = self.argv(req);
        spawn_argv(&argv, req)
    }
}

impl Files for Sandbox {}
