//! The one module of this crate that talks to the kernel directly: every
//! `unsafe` block of the execution layer lives here, each with the reason it
//! is sound, so the rest of the crate is safe Rust.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::spawn::{Input, SpawnRequest, Spawned};

/// Poll one fd for `events`; returns the revents (0 on timeout).
pub fn poll_one(fd: RawFd, events: i16, timeout_ms: i32) -> i16 {
    let mut p = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    // SAFETY: `p` is a live, exclusively borrowed pollfd and nfds is 1, so the
    // kernel writes only `p.revents`. An fd that is not open is reported in
    // revents (POLLNVAL), not undefined behaviour.
    let r = unsafe { libc::poll(&mut p, 1, timeout_ms) };
    if r > 0 { p.revents } else { 0 }
}

pub fn set_nonblocking(fd: RawFd) {
    // SAFETY: F_GETFL/F_SETFL take and return plain integers and no memory is
    // passed, so this is sound for any `fd` (a bad one gives -1, EBADF). The
    // callers pass descriptors they own (a pipe end or PTY master they created).
    unsafe {
        let fl = libc::fcntl(fd, libc::F_GETFL);
        if fl >= 0 {
            libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK);
        }
    }
}

/// A pipe with both ends close-on-exec.
pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: `fds` is a writable array of exactly the two ints pipe2 fills.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 succeeded, so both are fresh open descriptors that nothing
    // else in the process refers to: each OwnedFd becomes their sole owner.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// A non-blocking, close-on-exec eventfd: a descriptor `poll(2)` can wait
/// on, made readable from any thread by [`eventfd_signal`].
pub fn eventfd() -> io::Result<OwnedFd> {
    // SAFETY: eventfd takes two integers and touches no memory of ours.
    let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: eventfd succeeded, so `fd` is a fresh open descriptor that
    // nothing else in the process refers to: the OwnedFd is its sole owner.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Make an eventfd readable (adds 1 to its counter; errors are ignored: a
/// full counter is readable already).
pub fn eventfd_signal(fd: &OwnedFd) {
    let one: u64 = 1;
    // SAFETY: `one` is a live 8-byte value and write reads exactly 8 bytes
    // from it; `fd` is borrowed from its OwnedFd, so it is open for the call.
    unsafe { libc::write(fd.as_raw_fd(), &one as *const u64 as *const libc::c_void, 8) };
}

/// Watches a child for exit without reaping it (so its pid, and so its
/// process group id, stay reserved until we have signalled the group).
pub struct ExitWatch {
    pub pid: i32,
    pub pidfd: Option<OwnedFd>,
}

impl ExitWatch {
    pub fn new(pid: i32) -> ExitWatch {
        // SAFETY: pidfd_open takes two integers and touches no memory of ours;
        // an unknown pid (or an old kernel) just returns -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        let pidfd = if fd >= 0 {
            // SAFETY: a non-negative result is a new descriptor the kernel just
            // opened for us (it fits in an int); nothing else owns it.
            Some(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
        } else {
            None
        };
        ExitWatch { pid, pidfd }
    }

    /// True once the child has exited (it stays a zombie until [`reap`]).
    pub fn exited(&self) -> bool {
        // SAFETY: siginfo_t is a plain C struct (integers and a union of
        // integers/pointers) for which all-zero bytes are a valid value.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is a live, exclusively borrowed siginfo_t for waitid
        // to fill. WNOWAIT leaves the child unreaped, so its pid stays ours.
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                self.pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            )
        };
        if r != 0 {
            // ECHILD: already reaped (or not ours): treat as exited.
            return true;
        }
        // SAFETY: waitid returned 0, so `info` holds either the SIGCHLD-style
        // record of a state change (whose si_pid field is what si_pid() reads)
        // or, under WNOHANG with no change, our zeroes (si_pid 0).
        unsafe { info.si_pid() != 0 }
    }

    /// Reap the child; returns its exit code in shell convention (128+signal).
    pub fn reap(&self) -> i32 {
        let mut status = 0;
        loop {
            // SAFETY: `status` is a live, exclusively borrowed int for waitpid to
            // write. A pid that is not our child gives ECHILD, not UB.
            let r = unsafe { libc::waitpid(self.pid, &mut status, 0) };
            if r == -1 && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            if r == -1 {
                return -1;
            }
            break;
        }
        if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else if libc::WIFSIGNALED(status) {
            128 + libc::WTERMSIG(status)
        } else {
            -1
        }
    }
}

impl Input {
    pub fn from_fd(fd: OwnedFd) -> Input {
        Input { fd }
    }

    /// Write everything (waits up to 5 s for room in the tty buffer).
    pub fn write_all(&self, mut data: &[u8]) -> io::Result<usize> {
        let total = data.len();
        let until = Instant::now() + Duration::from_secs(5);
        while !data.is_empty() {
            // SAFETY: the pointer and length come from the live slice `data`,
            // which write only reads; `self.fd` is owned by this Input and
            // stays open for the call.
            let n = unsafe {
                libc::write(
                    self.fd.as_raw_fd(),
                    data.as_ptr() as *const libc::c_void,
                    data.len(),
                )
            };
            if n < 0 {
                let e = io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::EINTR) => continue,
                    Some(libc::EAGAIN) => {
                        if Instant::now() > until {
                            return Err(io::Error::new(
                                io::ErrorKind::TimedOut,
                                "the process is not reading its input",
                            ));
                        }
                        poll_one(self.fd.as_raw_fd(), libc::POLLOUT, 20);
                        continue;
                    }
                    _ => return Err(e),
                }
            }
            data = &data[n as usize..];
        }
        Ok(total)
    }

    /// Send end-of-file (the tty's EOF character at a line start).
    pub fn send_eof(&self) -> io::Result<()> {
        // SAFETY: termios is a plain C struct of integers and arrays of
        // integers; all-zero bytes are a valid value.
        let mut t: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: `t` is a live, exclusively borrowed termios for tcgetattr to
        // fill; `self.fd` is owned by this Input and open.
        let eof = if unsafe { libc::tcgetattr(self.fd.as_raw_fd(), &mut t) } == 0 {
            t.c_cc[libc::VEOF]
        } else {
            4
        };
        self.write_all(&[b'\n', eof]).map(|_| ())
    }
}

/// The fast path: `posix_spawn` (a vfork-style clone, no page-table copy)
/// with a new session, default signal dispositions and an empty mask,
/// stdin from /dev/null (or `stdin`, a descriptor the child gets as fd 0)
/// and stdout+stderr on one pipe.
pub fn posix_spawn_pipe(
    argv: &[String],
    req: &SpawnRequest<'_>,
    stdin: Option<&OwnedFd>,
) -> io::Result<Spawned> {
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
    // SAFETY:
    // - `fa` and `at` are plain C structs zeroed, then initialised by their
    //   `_init` functions before any other use; each is destroyed exactly once
    //   (the early return destroys the one initialised so far).
    // - Every pointer handed to libc lives across the calls: `c"/dev/null"`
    //   and `cwd` are NUL-terminated CStrings; `argp`/`envp` are
    //   NULL-terminated arrays of pointers into `args`/`envs`, which outlive
    //   posix_spawn (the `*mut` casts only match the C prototype: posix_spawn
    //   never writes through them). `args[0]` exists: `argv` is never empty,
    //   and indexing would panic, not read out of bounds.
    // - The sigsets are zeroed plain structs initialised by sigemptyset.
    // - `w` (owned by this function, open until after posix_spawn) and
    //   `stdin` (borrowed for the call) are only named by fd number in dup2
    //   actions that run in the child.
    let pid = unsafe {
        let mut fa: libc::posix_spawn_file_actions_t = std::mem::zeroed();
        let mut at: libc::posix_spawnattr_t = std::mem::zeroed();
        check(libc::posix_spawn_file_actions_init(&mut fa))?;
        if let Err(e) = check(libc::posix_spawnattr_init(&mut at)) {
            libc::posix_spawn_file_actions_destroy(&mut fa);
            return Err(e);
        }
        let result = (|| -> io::Result<libc::pid_t> {
            match stdin {
                Some(fd) => check(libc::posix_spawn_file_actions_adddup2(
                    &mut fa,
                    fd.as_raw_fd(),
                    0,
                ))?,
                None => check(libc::posix_spawn_file_actions_addopen(
                    &mut fa,
                    0,
                    c"/dev/null".as_ptr(),
                    libc::O_RDONLY,
                    0,
                ))?,
            }
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
        result
    }?;
    drop(w);
    set_nonblocking(r.as_raw_fd());
    Ok(Spawned {
        pid,
        output: r,
        input: None,
        pty: None,
    })
}

pub fn spawn_pipe_fork(argv: &[String], req: &SpawnRequest<'_>) -> io::Result<Spawned> {
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
    // SAFETY: the hook runs in the forked child before exec, where another
    // thread of the host may have held a lock (malloc's included) at fork
    // time, so it must be async-signal-safe. It captures nothing, allocates
    // nothing and calls only signal, sigemptyset, sigprocmask (in
    // reset_signals) and setsid, all on POSIX's async-signal-safe list;
    // `io::Error::last_os_error` only reads errno into an integer. Resetting
    // signal dispositions is reset_signals' contract: this is a fresh child
    // about to exec, not the host process.
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
///
/// # Safety
/// Call only in a forked child before exec (a `pre_exec` hook): it replaces
/// process-wide signal dispositions and the thread's signal mask, which in the
/// host process would silently undo handlers the host (or its runtime)
/// installed and that other threads rely on.
unsafe fn reset_signals() {
    // SAFETY: signal() with SIG_DFL installs no handler code; `set` is a zeroed
    // plain sigset_t that sigemptyset initialises, then lives across
    // sigprocmask, which may be given NULL for the old mask. The caller
    // guarantees we are in a child about to exec (see # Safety).
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

pub fn dup_cloexec(fd: i32) -> io::Result<OwnedFd> {
    // SAFETY: F_DUPFD_CLOEXEC takes integers only; duplicating `fd` does not
    // affect it (a bad fd gives -1/EBADF).
    let d = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
    if d < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `d` is the new descriptor fcntl just created: open, and owned by
    // nothing else, so the OwnedFd is its sole owner.
    Ok(unsafe { OwnedFd::from_raw_fd(d) })
}

/// `poll(2)` on a small set of descriptors; returns poll's result.
pub fn poll_fds(fds: &mut [libc::pollfd], timeout_ms: i32) -> i32 {
    // SAFETY: `fds` is a live, exclusively borrowed slice of `fds.len()`
    // pollfd structs, so poll reads and writes (revents) only inside it; a
    // slice cannot be longer than isize::MAX elements, so the count fits nfds_t.
    // Descriptors that are not open are reported as POLLNVAL.
    unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) }
}

/// `read(2)` into `buf`; returns read's result (bytes, 0 at EOF, -1 on error).
pub fn read_fd(fd: RawFd, buf: &mut [u8]) -> isize {
    // SAFETY: `buf` is a live, exclusively borrowed buffer of `buf.len()`
    // bytes and read writes at most that many. The callers (pump, Inotify)
    // pass a descriptor they own, which stays open for the call.
    unsafe { libc::read(fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) }
}

/// `kill(2)`: `pid` may be negative (a process group). Errors are ignored:
/// the target may be gone already.
pub fn kill(pid: i32, signal: i32) {
    // SAFETY: kill takes two integers and touches no memory of ours, so it is
    // sound for any arguments. (Which processes get signalled is the callers'
    // concern: they keep a group leader unreaped until its group is killed, so
    // `-pgid` cannot name a recycled group.)
    unsafe {
        libc::kill(pid, signal);
    }
}

/// The effective user id of this process.
pub fn geteuid() -> u32 {
    // SAFETY: geteuid takes no arguments, touches no memory and cannot fail.
    unsafe { libc::geteuid() }
}

/// A descriptor registered with the tokio reactor for readability, borrowed
/// from its owner for `'a` (the registration cannot outlive the descriptor).
pub struct ReadableFd<'a> {
    inner: tokio::io::unix::AsyncFd<BorrowedRaw>,
    _owner: std::marker::PhantomData<&'a OwnedFd>,
}

struct BorrowedRaw(RawFd);

impl std::os::fd::AsRawFd for BorrowedRaw {
    fn as_raw_fd(&self) -> RawFd {
        self.0
    }
}

impl ReadableFd<'_> {
    /// Wait until the descriptor is readable; the guard's `clear_ready`
    /// re-arms after a read that would block.
    pub async fn readable(
        &self,
    ) -> io::Result<tokio::io::unix::AsyncFdReadyGuard<'_, impl std::os::fd::AsRawFd>> {
        self.inner.readable().await
    }
}

/// Register `fd` with the current tokio runtime's reactor (call inside a
/// runtime with I/O enabled).
pub fn register_readable(fd: &OwnedFd) -> io::Result<ReadableFd<'_>> {
    use std::os::fd::AsRawFd;
    // SAFETY: tokio requires the raw descriptor to stay open and name the same
    // file description for the registration's whole life. It is borrowed from
    // `fd` for the returned value's lifetime, so the OwnedFd can neither be
    // closed nor replaced before the registration is dropped (which
    // deregisters it).
    let inner = unsafe {
        tokio::io::unix::AsyncFd::register_with_interest(
            BorrowedRaw(fd.as_raw_fd()),
            tokio::io::Interest::READABLE,
        )
    }
    .map_err(io::Error::from)?;
    Ok(ReadableFd {
        inner,
        _owner: std::marker::PhantomData,
    })
}

/// An inotify instance (non-blocking, close-on-exec): the search index
/// learns from it which files and folders changed since it last looked.
/// Closing it (drop) removes every watch.
pub struct Inotify {
    fd: OwnedFd,
}

/// One inotify event: the watch it came from, what happened, and the name
/// of the entry inside the watched folder (empty for the folder itself).
#[derive(Debug, Clone)]
pub struct InotifyEvent {
    pub wd: i32,
    pub mask: u32,
    pub name: std::ffi::OsString,
}

impl Inotify {
    pub fn new() -> io::Result<Inotify> {
        // SAFETY: inotify_init1 takes one integer and touches no memory of ours.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: inotify_init1 succeeded, so `fd` is a fresh open descriptor
        // that nothing else in the process refers to: the OwnedFd owns it.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Inotify { fd })
    }

    /// Watch `dir` for `mask`; returns the watch descriptor (the same one
    /// again when the inode is watched already).
    pub fn add_watch(&self, dir: &std::path::Path, mask: u32) -> io::Result<i32> {
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(dir.as_os_str().as_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in path"))?;
        // SAFETY: `c` is a live NUL-terminated string for the call, the fd is
        // open (owned by self), and the kernel only reads the string.
        let wd = unsafe { libc::inotify_add_watch(self.fd.as_raw_fd(), c.as_ptr(), mask) };
        if wd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(wd)
    }

    /// Stop watching `wd` (errors ignored: the watch may be gone already).
    pub fn rm_watch(&self, wd: i32) {
        // SAFETY: integers only; a stale wd gives EINVAL, nothing else.
        unsafe { libc::inotify_rm_watch(self.fd.as_raw_fd(), wd) };
    }

    /// The events queued now, without waiting: reading stops once the
    /// queue is seen empty (a short read) or `max` events were read, so a
    /// busy writer cannot keep it going. `Err` only for a read error other
    /// than "nothing queued".
    pub fn drain(&self, max: usize) -> io::Result<Vec<InotifyEvent>> {
        use std::os::unix::ffi::OsStrExt;
        let mut out = Vec::new();
        let mut buf = vec![0u8; 64 * 1024];
        while out.len() < max {
            let n = read_fd(self.fd.as_raw_fd(), &mut buf);
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::WouldBlock {
                    return Ok(out);
                }
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            if n == 0 {
                return Ok(out);
            }
            // struct inotify_event { int wd; u32 mask; u32 cookie; u32 len; char name[len]; }
            let mut b = &buf[..n as usize];
            while b.len() >= 16 {
                let wd = i32::from_ne_bytes(b[0..4].try_into().unwrap_or_default());
                let mask = u32::from_ne_bytes(b[4..8].try_into().unwrap_or_default());
                let len = u32::from_ne_bytes(b[12..16].try_into().unwrap_or_default()) as usize;
                let end = (16 + len).min(b.len());
                let raw = &b[16..end];
                let name = &raw[..raw.iter().position(|&c| c == 0).unwrap_or(raw.len())];
                out.push(InotifyEvent {
                    wd,
                    mask,
                    name: std::ffi::OsStr::from_bytes(name).to_os_string(),
                });
                b = &b[end..];
            }
            // room left for the largest event (16 + NAME_MAX + 1): the
            // queue was empty when the kernel filled this buffer
            if (n as usize) < buf.len() - 512 {
                return Ok(out);
            }
        }
        Ok(out)
    }
}

/// The file system type (`statfs(2)`'s `f_type`) of the file system that
/// holds `path`.
pub fn fs_type(path: &std::path::Path) -> io::Result<i64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in path"))?;
    // SAFETY: an all-zero statfs is a valid value of this plain C struct.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a live NUL-terminated string and `st` a live, exclusively
    // borrowed statfs that the kernel fills; neither outlives the call.
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    #[allow(clippy::unnecessary_cast)]
    Ok(st.f_type as i64)
}
