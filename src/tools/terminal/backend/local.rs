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
    match posix_spawn_pipe(argv, req) {
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

/// The fast path: `posix_spawn` (a vfork-style clone, no page-table copy)
/// with a new session, default signal dispositions and an empty mask,
/// stdin from /dev/null and stdout+stderr on one pipe.
fn posix_spawn_pipe(argv: &[String], req: &SpawnRequest<'_>) -> io::Result<Spawned> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let cstr = |s: &[u8]| {
        CString::new(s)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL byte in argument"))
    };
    let args: Vec<CString> = argv
        .iter()
        .map(|a| cstr(a.as_bytes()))
        .collect::<io::Result<_>>()?;
    let envs: Vec<CString> = req
        .env
        .iter()
        .map(|(k, v)| cstr(format!("{k}={v}").as_bytes()))
        .collect::<io::Result<_>>()?;
    let cwd = cstr(req.cwd.as_os_str().as_bytes())?;
    let mut argp: Vec<*mut libc::c_char> = args.iter().map(|a| a.as_ptr() as *mut _).collect();
    argp.push(std::ptr::null_mut());
    let mut envp: Vec<*mut libc::c_char> = envs.iter().map(|a| a.as_ptr() as *mut _).collect();
    envp.push(std::ptr::null_mut());
    let (r, w) = pipe()?;
    let check = |rc: libc::c_int| {
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::from_raw_os_error(rc))
        }
    };
    unsafe {
        let mut fa: libc::posix_spawn_file_actions_t = std::mem::zeroed();
        let mut at: libc::posix_spawnattr_t = std::mem::zeroed();
        check(libc::posix_spawn_file_actions_init(&mut fa))?;
        if let Err(e) = check(libc::posix_spawnattr_init(&mut at)) {
            libc::posix_spawn_file_actions_destroy(&mut fa);
            return Err(e);
        }
        let result = (|| -> io::Result<libc::pid_t> {
            check(libc::posix_spawn_file_actions_addopen(
                &mut fa,
                0,
                c"/dev/null".as_ptr(),
                libc::O_RDONLY,
                0,
            ))?;
            check(libc::posix_spawn_file_actions_adddup2(
                &mut fa,
                w.as_raw_fd(),
                1,
            ))?;
            check(libc::posix_spawn_file_actions_adddup2(
                &mut fa,
                w.as_raw_fd(),
                2,
            ))?;
            check(libc::posix_spawn_file_actions_addchdir_np(
                &mut fa,
                cwd.as_ptr(),
            ))?;
            let mut empty: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut empty);
            check(libc::posix_spawnattr_setsigmask(&mut at, &empty))?;
            let mut defaults: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut defaults);
            for sig in [
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
                libc::sigaddset(&mut defaults, sig);
            }
            check(libc::posix_spawnattr_setsigdefault(&mut at, &defaults))?;
            let flags = libc::POSIX_SPAWN_SETSID as libc::c_int
                | libc::POSIX_SPAWN_SETSIGMASK as libc::c_int
                | libc::POSIX_SPAWN_SETSIGDEF as libc::c_int;
            check(libc::posix_spawnattr_setflags(
                &mut at,
                flags as libc::c_short,
            ))?;
            let mut pid: libc::pid_t = 0;
            check(libc::posix_spawn(
                &mut pid,
                args[0].as_ptr(),
                &fa,
                &at,
                argp.as_ptr(),
                envp.as_ptr(),
            ))?;
            Ok(pid)
        })();
        libc::posix_spawn_file_actions_destroy(&mut fa);
        libc::posix_spawnattr_destroy(&mut at);
        let pid = result?;
        drop(w);
        set_nonblocking(r.as_raw_fd());
        Ok(Spawned {
            pid,
            output: r,
            input: None,
            pty: None,
        })
    }
}

fn spawn_pipe_fork(argv: &[String], req: &SpawnRequest<'_>) -> io::Result<Spawned> {
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
