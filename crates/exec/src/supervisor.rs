//! Process lifetime: every process the runtime starts (commands, background
//! processes, the clients of remote backends, MCP stdio servers) is started
//! through a small shim (`shim/ht_shim.c`), so that nothing outlives its
//! owner on any exit path of the host.
//!
//! Why a shim process and not only signals from the runtime: the runtime
//! cannot act when the host is killed (SIGKILL, a crash, Go's `os.Exit`,
//! Node's `process.exit()` without `close()`), and a command's descendants
//! that double-fork, `setsid` or clear their environment are reparented to
//! init, where no walk of the command's tree finds them. The shim is a child
//! subreaper (orphans of the command are reparented to it, so the command's
//! whole tree stays below it), watches the host through a pidfd (the host's
//! death, by any signal, kills the tree within milliseconds), and when the
//! command ends kills what it left behind and exits with its status. A
//! sandboxed command's bwrap runs under the shim too, so bwrap's
//! `--die-with-parent` follows the single-threaded shim, not whichever host
//! thread happened to start it.
//!
//! The shim is compiled by build.rs, embedded in the library, and written
//! once per process to a private folder (`$XDG_RUNTIME_DIR/hermes-tools.shim` or
//! `/tmp/hermes-tools.shim-<uid>`, mode 0700, owned by the effective user and
//! checked; when another user planted a folder under that name, a fresh
//! folder of an unguessable name instead). Where that fails (no writable,
//! executable folder), local commands run unwrapped and a warning is logged
//! once: the runtime's own timeouts, kills and close still end them, but a
//! host killed outright leaves them running. The sandbox refuses to run
//! without it (fail closed: no Landlock, no owner).

use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

/// The shim's executable image, built from `shim/ht_shim.c`.
static SHIM: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/ht-shim"));

static PATH: Mutex<Option<PathBuf>> = Mutex::new(None);
static WARNED: OnceLock<()> = OnceLock::new();

/// The shim's path on this machine, written on first use and again if it
/// was removed since (a cleaned temporary folder); `None`: it could not be
/// written (see the module docs).
pub fn shim_path() -> Option<PathBuf> {
    let mut g = PATH.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = g.as_ref()
        && p.is_file()
    {
        return Some(p.clone());
    }
    match install() {
        Ok(p) => {
            *g = Some(p.clone());
            Some(p)
        }
        Err(e) => {
            WARNED.get_or_init(|| {
                tracing::warn!(
                    "hermes-tools: the process shim could not be installed ({e}); commands \
                     will not be killed if this process dies without closing its runtime"
                )
            });
            None
        }
    }
}

/// `argv` run under the shim (unchanged when the shim is unavailable);
/// `linger` keeps the process's leftovers until they end (see the shim).
pub fn wrap(argv: &[String], linger: bool) -> Vec<String> {
    wrap_with(argv, linger, false)
}

/// [`wrap`]; `keep_fds`: the program needs the descriptors it is handed
/// (bubblewrap's seccomp program) and passes the rest to a shim of its own
/// that closes them; otherwise the shim closes every descriptor above
/// stderr before the command starts.
pub fn wrap_with(argv: &[String], linger: bool, keep_fds: bool) -> Vec<String> {
    match shim_path() {
        Some(shim) => {
            let mut out = Vec::with_capacity(argv.len() + 3);
            out.push(shim.display().to_string());
            if linger {
                out.push("-l".into());
            }
            if keep_fds {
                out.push("-K".into());
            }
            out.extend(argv.iter().cloned());
            out
        }
        None => argv.to_vec(),
    }
}

/// Make this process non-dumpable (`PR_SET_DUMPABLE` 0): its
/// `/proc/PID/environ`, `mem`, `maps` and `fd` become root's, and
/// `ptrace` needs `CAP_SYS_PTRACE`, so a command of the same (non-root)
/// user, however it finds the pid, can neither read the host's environment
/// or memory nor attach a debugger to it. One kernel switch for the whole
/// class the approval rules can only list examples of (a path computed at
/// run time, a script that opens it). Costs the host its core dumps; a
/// process started later (a command, the shim) is dumpable again by exec.
/// Root holds `CAP_SYS_PTRACE` and is not stopped by it.
pub fn protect_host() -> io::Result<()> {
    rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)
        .map_err(io::Error::from)
}

/// Whether `pid` is a process shim (of this or another runtime).
pub fn is_shim(pid: i32) -> bool {
    std::fs::read_link(format!("/proc/{pid}/exe"))
        .ok()
        .and_then(|exe| Some(exe.file_name()?.to_str()?.starts_with("ht-shim-")))
        .unwrap_or(false)
}

/// The process the shim `shim_pid` runs (its first child), waiting up to
/// 200 ms for the shim to have started it; `shim_pid` itself when the
/// command was not started through the shim or is already gone. What a
/// status report calls the server's or command's pid.
pub fn command_pid(shim_pid: i32) -> i32 {
    if !is_shim(shim_pid) {
        return shim_pid;
    }
    for _ in 0..100 {
        let children =
            std::fs::read_to_string(format!("/proc/{shim_pid}/task/{shim_pid}/children"))
                .unwrap_or_default();
        if let Some(first) = children
            .split_whitespace()
            .next()
            .and_then(|p| p.parse().ok())
        {
            return first;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    shim_pid
}

/// The shim's folder: the usual name, or, when another user planted a
/// folder under that name first (`/tmp` is everyone's), a fresh folder of
/// an unguessable name, made by this process (a planted name can delay
/// nothing and switch off nothing).
fn private_dir() -> io::Result<PathBuf> {
    let uid = crate::sys::geteuid();
    let dir = match std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        Some(run) => PathBuf::from(run).join("hermes-tools.shim"),
        // Not $TMPDIR: a host (or a test) may point it at a folder it
        // deletes later.
        None => PathBuf::from(format!("/tmp/hermes-tools.shim-{uid}")),
    };
    match checked_dir(&dir, uid) {
        Ok(d) => Ok(d),
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
            let parent = dir.parent().unwrap_or(std::path::Path::new("/tmp"));
            for _ in 0..16 {
                let mut r = [0u8; 12];
                std::fs::File::open("/dev/urandom")
                    .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut r))?;
                let name: String = r.iter().map(|b| format!("{b:02x}")).collect();
                let fresh = parent.join(format!("hermes-tools.shim-{uid}-{name}"));
                match std::fs::DirBuilder::new().mode(0o700).create(&fresh) {
                    Ok(()) => {
                        tracing::warn!(
                            "hermes-tools: {e}; the process shim goes to {} instead",
                            fresh.display()
                        );
                        return checked_dir(&fresh, uid);
                    }
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                    Err(e) => return Err(e),
                }
            }
            Err(e)
        }
        Err(e) => Err(e),
    }
}

/// `dir`, made (0700) if missing, when it is a folder of `uid` that no one
/// else can write.
fn checked_dir(dir: &std::path::Path, uid: u32) -> io::Result<PathBuf> {
    let dir = dir.to_path_buf();
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    // Never trust a folder another user could have planted or can write.
    let m = std::fs::symlink_metadata(&dir)?;
    if !m.is_dir() || m.uid() != uid || m.mode() & 0o022 != 0 {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} is not a private folder of this user (owner {}, mode {:o})",
                dir.display(),
                m.uid(),
                m.mode() & 0o7777
            ),
        ));
    }
    Ok(dir)
}

fn install() -> io::Result<PathBuf> {
    let dir = private_dir()?;
    // FNV-1a of the image: a new build never runs an old shim.
    let hash = SHIM.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
    });
    let path = dir.join(format!("ht-shim-{hash:016x}"));
    if let Ok(existing) = std::fs::read(&path)
        && existing == SHIM
        && std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file() && m.mode() & 0o022 == 0)
    {
        return Ok(path);
    }
    let tmp = dir.join(format!(".ht-shim.{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o700)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&tmp)?;
    f.write_all(SHIM)?;
    f.set_permissions(std::fs::Permissions::from_mode(0o500))?;
    f.sync_all()?;
    drop(f);
    std::fs::rename(&tmp, &path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })?;
    // A folder on a `noexec` mount would make every command fail: prove it runs.
    let ran = std::process::Command::new(&path)
        .arg("/bin/true")
        .env_clear()
        .stdin(std::process::Stdio::null())
        .status()?;
    if !ran.success() {
        return Err(io::Error::other(format!(
            "{} does not run here ({ran})",
            path.display()
        )));
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shim_is_installed_privately_and_runs_a_command() {
        let p = shim_path().expect("shim installed");
        let m = std::fs::metadata(&p).unwrap();
        assert_eq!(m.mode() & 0o077, 0, "only the owner may touch the shim");
        let out = std::process::Command::new(&p)
            .args(["/bin/sh", "-c", "exit 7"])
            .status()
            .unwrap();
        assert_eq!(
            out.code(),
            Some(7),
            "the shim exits with the command's status"
        );
    }
}
