//! The local backend: `/bin/bash -c script` on this machine, in a new
//! session, with stdin from /dev/null (pipe mode) or a PTY.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

use super::{Backend, Input, SpawnRequest, Spawned, pipe, set_nonblocking};

pub const BASH: &str = "/bin/bash";

pub struct Local;

impl Backend for Local {
    fn name(&self) -> &'static str {
        "local"
    }

    fn spawn(&self, req: &SpawnRequest<'_>) -> io::Result<Spawned> {
        let argv = vec![BASH.to_string(), "-c".to_string(), req.script.to_string()];
        spawn_argv(&argv, req)
    }
}

/// Start `argv` as described by `req` (pipe or PTY), in its own session.
pub fn spawn_argv(argv: &[String], req: &SpawnRequest<'_>) -> io::Result<Spawned> {
    if req.pty {
        spawn_pty(argv, req)
    } else {
        spawn_pipe(argv, req)
    }
}

fn spawn_pipe(argv: &[String], req: &SpawnRequest<'_>) -> io::Result<Spawned> {
    let (r, w) = pipe()?;
    let w2 = w.try_clone()?;
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .env_clear()
        .envs(req.env.iter().map(|(k, v)| (k, v)))
        .current_dir(req.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::from(w))
        .stderr(Stdio::from(w2));
    unsafe {
        cmd.pre_exec(|| {
            reset_signals();
            if libc::setsid() == -1 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd.spawn()?;
    drop(cmd); // closes our copies of the write end
    set_nonblocking(r.as_raw_fd());
    Ok(Spawned {
        pid: child.id() as i32,
        output: r,
        input: None,
        pty: None,
    })
}

/// Async-signal-safe: default dispositions and an empty mask, whatever the host set.
unsafe fn reset_signals() {
    unsafe {
        for s in [
            libc::SIGPIPE,
            libc::SIGINT,
            libc::SIGQUIT,
            libc::SIGTERM,
            libc::SIGHUP,
            libc::SIGCHLD,
            libc::SIGALRM,
            libc::SIGUSR1,
            libc::SIGUSR2,
        ] {
            libc::signal(s, libc::SIG_DFL);
        }
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
    }
}

fn spawn_pty(argv: &[String], req: &SpawnRequest<'_>) -> io::Result<Spawned> {
    use portable_pty::{CommandBuilder, PtySize, native_pty_system};
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
        pty: Some(master),
    })
}

fn dup_cloexec(fd: i32) -> io::Result<OwnedFd> {
    let d = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
    if d < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(unsafe { OwnedFd::from_raw_fd(d) })
}
