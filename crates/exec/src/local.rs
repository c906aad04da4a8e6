//! The local backend: `/bin/bash -c script` on this machine, in a new
//! session, with stdin from /dev/null (pipe mode) or a PTY.

use std::io;

use crate::env::{Environment, Files};
use crate::spawn::{SpawnRequest, Spawned};
use crate::sys::{posix_spawn_pipe, spawn_pipe_fork};

pub const BASH: &str = "/bin/bash";

pub struct Local;

impl Environment for Local {
    fn name(&self) -> &'static str {
        "local"
    }

    fn spawn(&self, req: &SpawnRequest<'_>) -> io::Result<Spawned> {
        let argv = vec![BASH.to_string(), "-c".to_string(), req.script.to_string()];
        spawn_argv(&argv, req)
    }
}

/// Start `argv` as described by `req` (pipe or PTY), in its own session,
/// under the process shim (`supervisor`: its orphans stay below it and it
/// dies with the host), marked (`HERMES_TOOLS_TREE`) as a second net.
pub fn spawn_argv(argv: &[String], req: &SpawnRequest<'_>) -> io::Result<Spawned> {
    spawn_argv_unsupervised(&crate::supervisor::wrap(argv, req.linger), req)
}

/// [`spawn_argv`] of bubblewrap: the shim keeps the descriptors bubblewrap
/// is handed (its seccomp program); the shim inside the sandbox closes the
/// rest before the command starts.
pub fn spawn_bwrap_supervised(argv: &[String], req: &SpawnRequest<'_>) -> io::Result<Spawned> {
    spawn_argv_unsupervised(&crate::supervisor::wrap_with(argv, req.linger, true), req)
}

/// [`spawn_argv`] without the process shim, for a process whose lifetime
/// something else already holds: a foreground sandboxed command, whose
/// bwrap dies with the thread that waits for it (`--die-with-parent`) and
/// whose PID namespace holds every descendant. Saves the shim's exec
/// (about 0.7 ms) on the common path.
pub fn spawn_argv_unsupervised(argv: &[String], req: &SpawnRequest<'_>) -> io::Result<Spawned> {
    let (env, mark) = marked_env(req);
    let marked = SpawnRequest { env: &env, ..*req };
    let sp = if req.pty {
        spawn_pty(argv, &marked)
    } else {
        spawn_pipe(argv, &marked)
    }?;
    crate::tree::remember_mark(sp.pid, mark);
    Ok(sp)
}

/// Start `argv` in pipe mode as [`spawn_argv`] does, but with stdin from a
/// pipe whose write end is returned: the caller feeds the process, and its
/// end-of-file is the caller's drop of that end.
pub fn spawn_argv_fed(
    argv: &[String],
    req: &SpawnRequest<'_>,
) -> io::Result<(Spawned, std::os::fd::OwnedFd)> {
    let argv = &crate::supervisor::wrap(argv, req.linger);
    let (env, mark) = marked_env(req);
    let marked = SpawnRequest { env: &env, ..*req };
    let (r, w) = crate::sys::pipe()?;
    let sp = posix_spawn_pipe(argv, &marked, Some(&r))?;
    crate::tree::remember_mark(sp.pid, mark);
    Ok((sp, w))
}

/// [`spawn_argv_fed`] without the process shim, for a process that starts
/// nothing and ends by itself when the write end closes (whoever holds it
/// dies): a host environment's proxy (host.rs). Saves the shim's exec.
pub fn spawn_argv_fed_unsupervised(
    argv: &[String],
    req: &SpawnRequest<'_>,
) -> io::Result<(Spawned, std::os::fd::OwnedFd)> {
    let (env, mark) = marked_env(req);
    let marked = SpawnRequest { env: &env, ..*req };
    let (r, w) = crate::sys::pipe()?;
    let sp = posix_spawn_pipe(argv, &marked, Some(&r))?;
    crate::tree::remember_mark(sp.pid, mark);
    Ok((sp, w))
}

/// `req`'s environment with a new tree mark, and the mark.
fn marked_env(req: &SpawnRequest<'_>) -> (Vec<(String, String)>, String) {
    let mark = crate::tree::new_mark();
    let mut env: Vec<(String, String)> = req
        .env
        .iter()
        .filter(|(k, _)| k != crate::tree::MARK_VAR)
        .cloned()
        .collect();
    env.push((crate::tree::MARK_VAR.to_string(), mark.clone()));
    (env, mark)
}

fn spawn_pipe(argv: &[String], req: &SpawnRequest<'_>) -> io::Result<Spawned> {
    match posix_spawn_pipe(argv, req, None) {
        Ok(sp) => Ok(sp),
        // Not expected on Linux/glibc; the fork path below is equivalent, only slower.
        Err(e)
            if e.raw_os_error() == Some(libc::ENOSYS) || e.raw_os_error() == Some(libc::EINVAL) =>
        {
            spawn_pipe_fork(argv, req)
        }
        Err(e) => Err(e),
    }
}

#[cfg(not(feature = "pty"))]
fn spawn_pty(_: &[String], _: &SpawnRequest<'_>) -> io::Result<Spawned> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "this build of hermes-tools has no pseudo-terminal support (Cargo feature `pty`): run the command with pty false",
    ))
}

#[cfg(feature = "pty")]
fn spawn_pty(argv: &[String], req: &SpawnRequest<'_>) -> io::Result<Spawned> {
    use crate::spawn::Input;
    use crate::sys::{dup_cloexec, set_nonblocking};
    use portable_pty::{CommandBuilder, PtySize, native_pty_system};
    use std::os::fd::AsRawFd;
    let pair = native_pty_system()
        .openpty(PtySize {
            rows: 30,
            cols: 120,
            pixel_width: 0,
            pixel_height: 0,
        })
        .map_err(|e| io::Error::other(format!("openpty: {e}")))?;
    let mut cb = CommandBuilder::from_argv(argv.iter().map(Into::into).collect());
    cb.env_clear();
    for (k, v) in req.env {
        cb.env(k, v);
    }
    cb.cwd(req.cwd);
    let child = pair
        .slave
        .spawn_command(cb)
        .map_err(|e| io::Error::other(format!("spawn on a pty: {e}")))?;
    drop(pair.slave);
    let pid = child
        .process_id()
        .ok_or_else(|| io::Error::other("pty child has no pid"))? as i32;
    drop(child); // a std::process::Child inside: dropping neither waits nor kills
    let master = pair.master;
    let raw = master
        .as_raw_fd()
        .ok_or_else(|| io::Error::other("pty master has no fd"))?;
    let out = dup_cloexec(raw)?;
    let inp = dup_cloexec(raw)?;
    set_nonblocking(out.as_raw_fd());
    Ok(Spawned {
        pid,
        output: out,
        input: Some(Input::from_fd(inp)),
        pty: Some(Box::new(master)),
    })
}

impl Files for Local {}
