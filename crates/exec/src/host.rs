//! Host-defined environments: commands and files where a host's own
//! provider runs them (a cloud sandbox SDK, a Firecracker pool, a
//! subprocess), reached through a [`HostProvider`] that the C ABI implements
//! with the host's callbacks.
//!
//! The contract is the one the ssh and container backends meet, moved to the
//! host: the provider runs `bash -c <script>` where the task's commands run
//! and streams what it prints; the library builds the script (environment,
//! directory, state capture, the tree mark), and the terminal's approval,
//! limits, timeouts and cancellation apply before and around it exactly as
//! for the built-in backends.
//!
//! A command the terminal starts is backed by a local *proxy* process (one
//! `sh` that waits for the exit status the host reports), so the pump, the
//! process tool and the supervisor see a real process: its pid is the
//! command's id, a timeout or a kill signals the host's command through
//! [`HostProvider::kill`] and, when SIGKILL follows, the proxy itself, so a
//! host that never answers cannot hold a call. The output does not pass
//! through the proxy: the host writes it into a socket the pump reads.
//!
//! Short scripts of the library's own (the environment's boot, the state
//! files, the file tools over [`RemoteFs`]) run in *capture* mode: stdout and
//! stderr kept apart in memory, no proxy.

use std::collections::HashMap;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::env::{Environment, Remote, task_key};
use crate::fs::{Entry, FileSystem, Meta, WalkedFile};
use crate::remote_fs::{
    BOOT_SCRIPT, Boot, RemoteFs, RemoteShell, ScriptOutput, command_script, parse_boot, shq,
};
use crate::spawn::{SpawnRequest, Spawned};
use crate::tree::{MARK_VAR, kill_tree};

/// Variables of the far side that are not a command's state.
const NOT_STATE: &[&str] = &["_", "SHLVL", "PWD", "OLDPWD", MARK_VAR];

/// How long a capture-mode script (a file operation, a state file) may take
/// before it is killed and reported as timed out.
pub const CAPTURE_TIMEOUT: Duration = Duration::from_secs(300);

/// The proxy: exits with the status the library writes on its stdin (255
/// when the line never comes).
const PROXY_SCRIPT: &str = "IFS= read -r c; case $c in ''|*[!0-9]*) exit 255;; esac; exit \"$c\"";

/// One command for the host to run.
#[derive(Clone, Debug)]
pub struct HostCommand {
    /// Unique within the library: [`HostProvider::kill`] names it.
    pub id: u64,
    /// The task (`"default"` for the empty one): the host keeps one sandbox,
    /// VM or session per task.
    pub task: String,
    /// Run as `bash -c script` where the task's commands run.
    pub script: String,
    /// Fed to the command's stdin (empty: no input).
    pub stdin: Vec<u8>,
    /// A script of the library's own (files, state): stdout and stderr are
    /// read apart. Otherwise a terminal command whose stderr is already
    /// merged by its script.
    pub capture: bool,
    /// The tree mark a terminal command's processes carry
    /// (`HERMES_TOOLS_TREE=<mark>`), for a provider that kills by it.
    pub mark: Option<String>,
}

/// A file operation a provider may answer natively (its SDK's file API)
/// instead of the shell scripts of [`RemoteFs`].
#[derive(Clone, Debug)]
pub enum FileOp {
    Read {
        task: String,
        path: PathBuf,
    },
    Write {
        task: String,
        path: PathBuf,
        data: Vec<u8>,
        mode: Option<u32>,
    },
    List {
        task: String,
        path: PathBuf,
    },
}

/// What answers a [`FileOp`].
#[derive(Debug)]
pub enum FileReply {
    Data(Vec<u8>),
    Done,
    Entries(Vec<Entry>),
}

/// A host's provider of commands and files.
pub trait HostProvider: Send + Sync {
    /// Start `cmd`; report its output and end through `exec`, from any
    /// thread, now or later ([`HostExec::finish`] exactly once; dropping
    /// `exec` unfinished ends the command with status 255).
    fn start(&self, cmd: HostCommand, exec: HostExec);
    /// Signal command `id` (and what it started) with `signal`.
    fn kill(&self, id: u64, signal: i32);
    /// A task's state is dropped (`Some`), or the runtime closes (`None`).
    fn cleanup(&self, _task: Option<&str>) {}
    /// Whether [`HostProvider::file`] answers read, write and list.
    fn has_files(&self) -> bool {
        false
    }
    /// Answer a file operation natively.
    fn file(&self, _op: FileOp) -> io::Result<FileReply> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "no file callback",
        ))
    }
}

/// How a command's output reaches the library.
enum Sink {
    /// A terminal command: output into the pump's socket, the status to the proxy.
    Stream {
        out: Option<UnixStream>,
        ctl: std::fs::File,
        pid: i32,
        env: Arc<Shared>,
    },
    /// A script of the library's own.
    Capture(Arc<Capture>),
}

#[derive(Default)]
struct CaptureState {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    code: Option<i32>,
    message: Option<String>,
}

#[derive(Default)]
struct Capture {
    state: Mutex<CaptureState>,
    done: Condvar,
}

/// The host's handle on one running command: its output and its end.
pub struct HostExec {
    id: u64,
    sink: Option<Sink>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// An exit status as a process reports it: 0-255 as is, `-N` (killed by
/// signal N, as Python's and Node's subprocess APIs say) as `128+N`,
/// anything else 255.
pub fn exit_status(code: i32) -> i32 {
    match code {
        0..=255 => code,
        -64..=-1 => 128 - code,
        _ => 255,
    }
}

impl HostExec {
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Output of the command on `stream` (1 stdout, 2 stderr). An error
    /// means nobody reads any more (the call ended: timeout, cancellation):
    /// the host should stop the command.
    pub fn output(&mut self, stream: i32, data: &[u8]) -> io::Result<()> {
        match self.sink.as_mut() {
            None => Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "already finished",
            )),
            Some(Sink::Stream { out: Some(s), .. }) => send_all(s, data),
            Some(Sink::Stream { out: None, .. }) => Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "already finished",
            )),
            Some(Sink::Capture(c)) => {
                let mut st = lock(&c.state);
                if st.code.is_some() {
                    return Err(io::Error::new(
                        io::ErrorKind::BrokenPipe,
                        "already finished",
                    ));
                }
                let buf = if stream == 2 {
                    &mut st.stderr
                } else {
                    &mut st.stdout
                };
                if buf.len() + data.len() > MAX_CAPTURE {
                    return Err(io::Error::other(
                        "more output than a file operation may return",
                    ));
                }
                buf.extend_from_slice(data);
                Ok(())
            }
        }
    }

    /// The command ended with `code` (see [`exit_status`]); `message`, when
    /// the provider's doing (a sandbox that disappeared, a lost connection),
    /// is shown to the model with the result.
    pub fn finish(mut self, code: i32, message: Option<String>) {
        self.end(code, message);
    }

    fn end(&mut self, code: i32, message: Option<String>) {
        match self.sink.take() {
            None => {}
            Some(Sink::Stream {
                out,
                mut ctl,
                pid,
                env,
            }) => {
                // End of output first, so the pump reads everything before it
                // sees the proxy's exit.
                drop(out);
                if let Some(m) = message {
                    lock(&env.messages).insert(pid, m);
                }
                let _ = writeln!(ctl, "{}", exit_status(code));
            }
            Some(Sink::Capture(c)) => {
                let mut st = lock(&c.state);
                if st.code.is_none() {
                    st.code = Some(exit_status(code));
                    st.message = message;
                }
                drop(st);
                c.done.notify_all();
            }
        }
    }
}

impl Drop for HostExec {
    fn drop(&mut self) {
        if self.sink.is_some() {
            self.end(
                255,
                Some("the host environment dropped the command without reporting its end".into()),
            );
        }
    }
}

/// Capture-mode output cap (a file the file tools read is capped far below).
const MAX_CAPTURE: usize = 256 << 20;

/// Write all of `data` without SIGPIPE (the pump may have closed its end).
fn send_all(s: &UnixStream, mut data: &[u8]) -> io::Result<()> {
    while !data.is_empty() {
        match rustix::net::send(s, data, rustix::net::SendFlags::NOSIGNAL) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => data = &data[n..],
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// What the environment and its commands' handles share.
#[derive(Default)]
struct Shared {
    /// Why a command ended, when the provider said so (by proxy pid).
    messages: Mutex<HashMap<i32, String>>,
}

/// A command the terminal started, by proxy pid.
struct Started {
    id: u64,
}

/// Interned environment names (the trait wants `&'static str`; a host
/// creates a handful of environments, each name is kept once).
fn intern(name: &str) -> &'static str {
    static NAMES: OnceLock<Mutex<Vec<&'static str>>> = OnceLock::new();
    let mut v = lock(NAMES.get_or_init(Default::default));
    if let Some(n) = v.iter().find(|n| **n == name) {
        return n;
    }
    let n: &'static str = Box::leak(name.to_string().into_boxed_str());
    v.push(n);
    n
}

/// A host-defined environment: the [`Environment`] the terminal and file
/// tools use, over a [`HostProvider`].
pub struct HostEnv {
    name: &'static str,
    location: String,
    provider: Arc<dyn HostProvider>,
    shared: Arc<Shared>,
    started: Mutex<HashMap<i32, Started>>,
    next: AtomicU64,
    boot: OnceLock<Boot>,
    closed: AtomicBool,
}

/// Names the built-in backends answer to: a host environment may not take one.
pub const RESERVED_NAMES: &[&str] = &[
    "auto",
    "local",
    "sandbox",
    "ssh",
    "docker",
    "podman",
    "swarm",
    "apptainer",
    "singularity",
    "modal",
    "daytona",
];

/// Whether `name` may name a host environment: letters, digits, `-`, `_`,
/// `.`, at most 64 bytes, not a built-in backend's name.
pub fn valid_env_name(name: &str) -> Result<(), String> {
    if name.is_empty()
        || name.len() > 64
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
    {
        return Err(format!(
            "environment name '{name}': 1-64 letters, digits, '-', '_' or '.'"
        ));
    }
    if RESERVED_NAMES.contains(&name) {
        return Err(format!(
            "environment name '{name}' is a built-in backend's name"
        ));
    }
    Ok(())
}

impl HostEnv {
    /// `location`: where commands run, for approval prompts and messages
    /// (default `in host environment '<name>'`).
    pub fn new(
        name: &str,
        location: Option<String>,
        provider: Arc<dyn HostProvider>,
    ) -> Result<HostEnv, String> {
        valid_env_name(name)?;
        Ok(HostEnv::builtin(name, location, provider))
    }

    /// A built-in backend written as a [`HostProvider`] (daytona): the name
    /// is the backend's own.
    pub fn builtin(
        name: &str,
        location: Option<String>,
        provider: Arc<dyn HostProvider>,
    ) -> HostEnv {
        HostEnv {
            name: intern(name),
            location: location.unwrap_or_else(|| format!("in host environment '{name}'")),
            provider,
            shared: Arc::default(),
            started: Mutex::new(HashMap::new()),
            next: AtomicU64::new(1),
            boot: OnceLock::new(),
            closed: AtomicBool::new(false),
        }
    }

    fn next_id(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    fn boot(&self) -> io::Result<&Boot> {
        if let Some(b) = self.boot.get() {
            return Ok(b);
        }
        // No lock while the host's callback runs (it may call back into the
        // library): two first uses may both boot, the first answer is kept.
        let out = self.run_script("default", BOOT_SCRIPT, b"")?;
        if out.code != 0 {
            return Err(io::Error::other(format!(
                "host environment '{}': cannot prepare the far side (exit {}): {}",
                self.name,
                out.code,
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        let boot = parse_boot(&out.stdout, NOT_STATE)?;
        let _ = self.boot.set(boot);
        Ok(self.boot.get().expect("set above"))
    }
}

impl RemoteShell for HostEnv {
    fn run_script(&self, task: &str, script: &str, stdin: &[u8]) -> io::Result<ScriptOutput> {
        if self.closed.load(Ordering::Acquire) {
            return Err(io::Error::other(format!(
                "host environment '{}' is closed",
                self.name
            )));
        }
        let id = self.next_id();
        let cap = Arc::new(Capture::default());
        let exec = HostExec {
            id,
            sink: Some(Sink::Capture(cap.clone())),
        };
        self.provider.start(
            HostCommand {
                id,
                task: task_key(task).to_string(),
                script: script.to_string(),
                stdin: stdin.to_vec(),
                capture: true,
                mark: None,
            },
            exec,
        );
        let until = Instant::now() + CAPTURE_TIMEOUT;
        let mut st = lock(&cap.state);
        while st.code.is_none() {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                drop(st);
                self.provider.kill(id, libc::SIGKILL);
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "host environment '{}': no answer within {}s",
                        self.name,
                        CAPTURE_TIMEOUT.as_secs()
                    ),
                ));
            }
            st = cap
                .done
                .wait_timeout(st, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        let code = st.code.unwrap_or(255);
        let mut stderr = std::mem::take(&mut st.stderr);
        if let Some(m) = st.message.take() {
            if !stderr.is_empty() && !stderr.ends_with(b"\n") {
                stderr.push(b'\n');
            }
            stderr.extend_from_slice(m.as_bytes());
        }
        Ok(ScriptOutput {
            code,
            stdout: std::mem::take(&mut st.stdout),
            stderr,
        })
    }
    fn label(&self) -> String {
        format!("host environment '{}'", self.name)
    }
}

impl Environment for HostEnv {
    fn name(&self) -> &'static str {
        self.name
    }

    fn spawn(&self, req: &SpawnRequest<'_>) -> io::Result<Spawned> {
        if self.closed.load(Ordering::Acquire) {
            return Err(io::Error::other(format!(
                "host environment '{}' is closed",
                self.name
            )));
        }
        if req.pty {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "host environment '{}' runs commands without a terminal (pty is not supported); run the command without pty",
                    self.name
                ),
            ));
        }
        let id = self.next_id();
        let mark = crate::tree::new_mark();
        // The mark the far side's processes carry, for a provider that
        // finds a command's leftovers by it (as the built-in remote backends do).
        let script = format!(
            "builtin export {MARK_VAR}={}\n{}",
            shq(&mark),
            command_script(req)
        );
        // The local proxy: a process the pump and the process tool follow,
        // ending with the host command's status. No shim: it starts
        // nothing, and its stdin's end of file (this library's write end
        // closed, by finish, a drop, or this process's death) ends it.
        let proxy_req = SpawnRequest {
            script: "",
            cwd: Path::new("/"),
            env: &[],
            pty: false,
            extra_rw: &[],
            task: req.task,
            linger: false,
        };
        let argv = ["/bin/sh".to_string(), "-c".into(), PROXY_SCRIPT.into()];
        let (mut sp, ctl) = crate::local::spawn_argv_fed_unsupervised(&argv, &proxy_req)?;
        let (reader, writer) = UnixStream::pair()?;
        reader.set_nonblocking(true)?;
        let _ = rustix::net::shutdown(&reader, rustix::net::Shutdown::Write);
        let _ = rustix::net::shutdown(&writer, rustix::net::Shutdown::Read);
        sp.output = OwnedFd::from(reader);
        debug_assert!(sp.output.as_raw_fd() >= 0);
        lock(&self.started).insert(sp.pid, Started { id });
        let exec = HostExec {
            id,
            sink: Some(Sink::Stream {
                out: Some(writer),
                ctl: std::fs::File::from(ctl),
                pid: sp.pid,
                env: self.shared.clone(),
            }),
        };
        self.provider.start(
            HostCommand {
                id,
                task: task_key(req.task).to_string(),
                script,
                stdin: Vec::new(),
                capture: false,
                mark: Some(mark),
            },
            exec,
        );
        Ok(sp)
    }

    fn kill(&self, pid: i32, signal: i32) {
        let id = lock(&self.started).get(&pid).map(|s| s.id);
        if let Some(id) = id {
            self.provider.kill(id, signal);
        }
        // SIGKILL (the grace is over) ends the proxy whatever the host does,
        // so an unresponsive provider cannot hold the call.
        if id.is_none() || signal == libc::SIGKILL {
            kill_tree(pid, signal);
        }
    }

    fn cleanup_task(&self, task: &str) {
        self.provider.cleanup(Some(task_key(task)));
    }

    fn cleanup(&self) {
        if self.closed.swap(true, Ordering::AcqRel) {
            return;
        }
        self.provider.cleanup(None);
    }

    fn location(&self) -> String {
        self.location.clone()
    }

    fn remote(&self) -> Option<&dyn Remote> {
        Some(self)
    }
}

impl Remote for HostEnv {
    fn base_env(&self) -> io::Result<Vec<(String, String)>> {
        Ok(self.boot()?.env.clone())
    }
    fn home(&self) -> io::Result<String> {
        Ok(self.boot()?.home.clone())
    }
    fn state_dir(&self) -> io::Result<PathBuf> {
        Ok(self.boot()?.dir.clone())
    }
    fn take_file(&self, task: &str, path: &Path, max: u64) -> Option<Vec<u8>> {
        crate::remote_fs::take_file(self, task, path, max)
    }
    fn is_dir(&self, task: &str, path: &Path) -> bool {
        crate::remote_fs::is_dir(self, task, path)
    }
    fn explain_exit(&self, pid: i32, _code: i32) -> Option<String> {
        lock(&self.started).remove(&pid);
        lock(&self.shared.messages).remove(&pid)
    }
}

/// The backend as the terminal holds it: one [`HostEnv`] shared with the
/// file tools.
pub struct HostBackend(pub Arc<HostEnv>);

impl Environment for HostBackend {
    fn name(&self) -> &'static str {
        self.0.name
    }
    fn spawn(&self, req: &SpawnRequest<'_>) -> io::Result<Spawned> {
        self.0.spawn(req)
    }
    fn kill(&self, pid: i32, signal: i32) {
        Environment::kill(&*self.0, pid, signal)
    }
    fn cleanup_task(&self, task: &str) {
        Environment::cleanup_task(&*self.0, task)
    }
    fn cleanup(&self) {
        Environment::cleanup(&*self.0)
    }
    fn location(&self) -> String {
        self.0.location()
    }
    fn remote(&self) -> Option<&dyn Remote> {
        Some(&*self.0)
    }
    fn files(&self, task: &str) -> Option<Arc<dyn FileSystem>> {
        let shell = RemoteFs::new(self.0.clone(), task_key(task), self.0.name);
        Some(Arc::new(HostFiles {
            shell,
            env: self.0.clone(),
            task: task_key(task).to_string(),
        }))
    }
}

/// A task's files: the provider's own file API for read, write and list
/// when it has one, the shell scripts of [`RemoteFs`] for the rest.
struct HostFiles {
    shell: RemoteFs,
    env: Arc<HostEnv>,
    task: String,
}

impl HostFiles {
    fn native(&self) -> bool {
        self.env.provider.has_files()
    }
}

impl FileSystem for HostFiles {
    fn name(&self) -> &'static str {
        self.env.name
    }
    fn host_paths(&self) -> bool {
        false
    }
    fn check_read(&self, path: &Path) -> io::Result<()> {
        self.shell.check_read(path)
    }
    fn check_write(&self, path: &Path) -> io::Result<()> {
        self.shell.check_write(path)
    }
    fn metadata(&self, path: &Path) -> io::Result<Meta> {
        self.shell.metadata(path)
    }
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        if !self.native() {
            return self.shell.read(path);
        }
        match self.env.provider.file(FileOp::Read {
            task: self.task.clone(),
            path: path.to_path_buf(),
        })? {
            FileReply::Data(d) => Ok(d),
            other => Err(io::Error::other(format!(
                "unexpected answer to read: {other:?}"
            ))),
        }
    }
    fn read_head(&self, path: &Path, n: usize) -> io::Result<Vec<u8>> {
        self.shell.read_head(path, n)
    }
    fn write_atomic(&self, path: &Path, data: &[u8], mode: Option<u32>) -> io::Result<()> {
        if !self.native() {
            return self.shell.write_atomic(path, data, mode);
        }
        self.env
            .provider
            .file(FileOp::Write {
                task: self.task.clone(),
                path: path.to_path_buf(),
                data: data.to_vec(),
                mode,
            })
            .map(|_| ())
    }
    fn create_dir_all(&self, path: &Path) -> io::Result<bool> {
        self.shell.create_dir_all(path)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.shell.remove_file(path)
    }
    fn remove_dir(&self, path: &Path) -> io::Result<()> {
        self.shell.remove_dir(path)
    }
    fn remove_dir_all(&self, path: &Path) -> io::Result<()> {
        self.shell.remove_dir_all(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.shell.rename(from, to)
    }
    fn read_dir(&self, path: &Path) -> io::Result<Vec<Entry>> {
        if !self.native() {
            return self.shell.read_dir(path);
        }
        match self.env.provider.file(FileOp::List {
            task: self.task.clone(),
            path: path.to_path_buf(),
        })? {
            FileReply::Entries(mut v) => {
                v.sort_by(|a, b| a.name.cmp(&b.name));
                Ok(v)
            }
            other => Err(io::Error::other(format!(
                "unexpected answer to list: {other:?}"
            ))),
        }
    }
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        self.shell.canonicalize(path)
    }
    fn walk(&self, root: &Path, contents: bool, max_file: u64) -> io::Result<Vec<WalkedFile>> {
        self.shell.walk(root, contents, max_file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::process::{Command, Stdio};

    /// A provider that runs every command in a local `bash` subprocess:
    /// what a host's subprocess provider does, in Rust.
    struct Subprocess {
        pids: Mutex<HashMap<u64, i32>>,
        cleaned: Mutex<Vec<Option<String>>>,
    }

    impl HostProvider for Subprocess {
        fn start(&self, cmd: HostCommand, mut exec: HostExec) {
            use std::os::unix::process::CommandExt;
            let mut child = Command::new("bash")
                .arg("-c")
                .arg(&cmd.script)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .process_group(0)
                .spawn()
                .expect("bash");
            lock(&self.pids).insert(cmd.id, child.id() as i32);
            let mut sin = child.stdin.take().unwrap();
            let data = cmd.stdin.clone();
            std::thread::spawn(move || {
                let _ = sin.write_all(&data);
            });
            std::thread::spawn(move || {
                let mut err = child.stderr.take().unwrap();
                let errt = std::thread::spawn(move || {
                    let mut v = Vec::new();
                    let _ = err.read_to_end(&mut v);
                    v
                });
                let mut out = child.stdout.take().unwrap();
                let mut buf = [0u8; 4096];
                loop {
                    match out.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            if exec.output(1, &buf[..n]).is_err() {
                                break;
                            }
                        }
                    }
                }
                let e = errt.join().unwrap();
                let _ = exec.output(2, &e);
                let st = child.wait().unwrap();
                use std::os::unix::process::ExitStatusExt;
                let code = st.code().unwrap_or_else(|| -st.signal().unwrap_or(9));
                exec.finish(code, None);
            });
        }
        fn kill(&self, id: u64, signal: i32) {
            if let Some(pid) = lock(&self.pids).get(&id) {
                kill_tree(*pid, signal);
            }
        }
        fn cleanup(&self, task: Option<&str>) {
            lock(&self.cleaned).push(task.map(String::from));
        }
    }

    fn env() -> Arc<HostEnv> {
        Arc::new(
            HostEnv::new(
                "subproc",
                None,
                Arc::new(Subprocess {
                    pids: Mutex::default(),
                    cleaned: Mutex::default(),
                }),
            )
            .unwrap(),
        )
    }

    #[test]
    fn names_are_checked() {
        assert!(valid_env_name("e2b-pool").is_ok());
        assert!(valid_env_name("docker").unwrap_err().contains("built-in"));
        assert!(valid_env_name("a b").is_err());
        assert!(valid_env_name("").is_err());
    }

    #[test]
    fn exit_statuses() {
        assert_eq!(exit_status(0), 0);
        assert_eq!(exit_status(3), 3);
        assert_eq!(exit_status(-15), 143);
        assert_eq!(exit_status(1000), 255);
    }

    #[test]
    fn boot_and_capture_through_the_provider() {
        let e = env();
        let home = e.home().unwrap();
        assert!(!home.is_empty());
        assert!(e.is_dir("t", Path::new("/")));
        let out = e
            .run_script("t", "cat; echo err >&2; exit 4", b"fed")
            .unwrap();
        assert_eq!(
            (out.code, &out.stdout[..], &out.stderr[..]),
            (4, &b"fed"[..], &b"err\n"[..])
        );
        let fs = HostBackend(e.clone()).files("t").unwrap();
        let dir = std::env::temp_dir().join(format!("ht-host-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("a.txt");
        fs.write_atomic(&f, b"hello", None).unwrap();
        assert_eq!(fs.read(&f).unwrap(), b"hello");
        assert_eq!(fs.read_dir(&dir).unwrap()[0].name, "a.txt");
        assert_eq!(
            fs.read(&dir.join("missing")).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_command_streams_and_ends_with_its_status() {
        let e = env();
        let env_vars = vec![("PATH".to_string(), "/usr/bin:/bin".to_string())];
        let req = SpawnRequest {
            script: "echo hi; echo oops >&2; exit 7",
            cwd: Path::new("/"),
            env: &env_vars,
            pty: false,
            extra_rw: &[],
            task: "t",
            linger: false,
        };
        let sp = e.spawn(&req).unwrap();
        let mut out = Vec::new();
        let opts = crate::pump::PumpOpts {
            timeout: Some(Duration::from_secs(20)),
            ..Default::default()
        };
        let backend = HostBackend(e.clone());
        let (code, ended) = crate::pump::pump(sp.pid, &sp.output, &backend, &opts, &mut |d| {
            out.extend_from_slice(d)
        });
        assert_eq!(ended, crate::pump::Ended::Exited);
        assert_eq!(code, 7);
        assert_eq!(String::from_utf8_lossy(&out), "hi\noops\n");
    }

    #[test]
    fn a_timeout_kills_the_hosts_command() {
        let e = env();
        let env_vars = vec![("PATH".to_string(), "/usr/bin:/bin".to_string())];
        let req = SpawnRequest {
            script: "echo start; sleep 30; echo never",
            cwd: Path::new("/"),
            env: &env_vars,
            pty: false,
            extra_rw: &[],
            task: "t",
            linger: false,
        };
        let t0 = Instant::now();
        let sp = e.spawn(&req).unwrap();
        let opts = crate::pump::PumpOpts {
            timeout: Some(Duration::from_millis(500)),
            ..Default::default()
        };
        let backend = HostBackend(e.clone());
        let mut out = Vec::new();
        let (_, ended) = crate::pump::pump(sp.pid, &sp.output, &backend, &opts, &mut |d| {
            out.extend_from_slice(d)
        });
        assert_eq!(ended, crate::pump::Ended::TimedOut);
        assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
        assert_eq!(String::from_utf8_lossy(&out), "start\n");
    }
}
