//! The ssh backend: every command is `bash -c` on a remote host, through
//! the system `ssh` client multiplexed over one master connection per task
//! (ControlMaster, the sockets in a private 0700 folder here), so one
//! task's long transfer or dropped connection does not stall another's,
//! and a task's cleanup closes its connection.
//!
//! Why the system client and not a Rust ssh crate: it reads the user's
//! `~/.ssh/config`, agent, ProxyJump/ProxyCommand, certificates and
//! known_hosts exactly as the user's own `ssh` does, and we carry no
//! cryptography of our own; a multiplexed call costs a few milliseconds.
//!
//! Host keys are checked (`StrictHostKeyChecking=yes`, or `accept-new`
//! when the config says so), `BatchMode=yes` never prompts, and agent and
//! X11 forwarding are off. The master is started on first use and again on
//! the next call after it died; a call cut by a lost connection is told
//! apart from the command's own exit status 255 ([`Remote::explain_exit`]).
//!
//! Remote processes are marked like local ones (`HERMES_TOOLS_TREE=<token>`
//! in their environment, set before the wrapper starts), and killed on the
//! remote side by that mark and their process group: killing the local
//! `ssh` client alone would leave a non-PTY command running there. After a
//! task reconnects and at its cleanup, everything of that task's is killed
//! (its marks carry the task's slot number); at the runtime's cleanup,
//! everything this runtime marked.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::env::{Environment, Remote, task_key};
use crate::local::spawn_argv;
use crate::remote_fs::{
    BOOT_SCRIPT, Boot, RemoteShell, ScriptOutput, command_script, parse_boot, run_capture, shq,
};
use crate::spawn::{SpawnRequest, Spawned};
use crate::tree::{MARK_VAR, kill_tree};

/// Where and how to connect.
#[derive(Clone, Debug)]
pub struct SshConfig {
    pub host: String,
    pub port: u16,
    pub user: Option<String>,
    pub identity_file: Option<PathBuf>,
    /// `UserKnownHostsFile` (else the user's own).
    pub known_hosts: Option<PathBuf>,
    /// `StrictHostKeyChecking=accept-new` instead of `yes`.
    pub accept_new_host_keys: bool,
    /// Extra `-o` options (`Name=value`). They come after ours, and ssh
    /// keeps the first value of an option, so they cannot loosen host key
    /// checking or the multiplexing settings.
    pub options: Vec<String>,
    /// Seconds (`ConnectTimeout`).
    pub connect_timeout: u64,
    /// Seconds the master stays up without clients (`ControlPersist`).
    pub control_persist: u64,
    /// Masters (one per task) kept up at once; past it the least recently
    /// used idle one is closed and reconnects on its task's next command.
    pub max_connections: usize,
}

impl Default for SshConfig {
    fn default() -> Self {
        SshConfig {
            host: String::new(),
            port: 22,
            user: None,
            identity_file: None,
            known_hosts: None,
            accept_new_host_keys: false,
            options: Vec::new(),
            connect_timeout: 10,
            control_persist: 600,
            max_connections: 16,
        }
    }
}

impl SshConfig {
    /// One-line errors for what cannot work.
    pub fn validate(&self) -> Result<(), String> {
        let bad = |c: char| c.is_whitespace() || c.is_control();
        if self.host.is_empty() {
            return Err("terminal.ssh.host is required for the ssh backend".into());
        }
        if self.host.starts_with('-') || self.host.chars().any(bad) {
            return Err(format!(
                "terminal.ssh.host: '{}' is not a host name",
                self.host
            ));
        }
        if self.port == 0 {
            return Err("terminal.ssh.port must be 1-65535".into());
        }
        if let Some(u) = &self.user
            && (u.is_empty() || u.starts_with('-') || u.chars().any(bad) || u.contains('@'))
        {
            return Err(format!("terminal.ssh.user: '{u}' is not a user name"));
        }
        for (key, f) in [
            ("identity_file", &self.identity_file),
            ("known_hosts", &self.known_hosts),
        ] {
            if let Some(f) = f
                && !f.is_file()
            {
                return Err(format!(
                    "terminal.ssh.{key}: '{}' is not a readable file",
                    f.display()
                ));
            }
        }
        for o in &self.options {
            let name = o.split(['=', ' ']).next().unwrap_or("");
            if name.is_empty() || !o.contains(['=', ' ']) || o.chars().any(|c| c.is_control()) {
                return Err(format!(
                    "terminal.ssh.options: '{o}' is not an ssh option (Name=value)"
                ));
            }
        }
        if self.max_connections == 0 {
            return Err("terminal.ssh.max_connections must be at least 1".into());
        }
        if self.connect_timeout == 0 {
            return Err("terminal.ssh.connect_timeout must be at least 1 second".into());
        }
        Ok(())
    }

    /// `user@host:port` for messages.
    pub fn label(&self) -> String {
        match &self.user {
            Some(u) => format!("{u}@{}:{}", self.host, self.port),
            None => format!("{}:{}", self.host, self.port),
        }
    }
}

/// One task's master connection.
struct Master {
    /// The master's pid, when it was started.
    pid: Option<i32>,
    /// Bumped on every (re)connection.
    generation: u64,
    /// Its control socket.
    ctl: PathBuf,
    /// The slot's number: in the socket's name and the marks of its commands.
    n: u64,
    last_used: Instant,
}

/// A started command: its task, mark and the master it went through.
struct Started {
    task: String,
    token: String,
    generation: u64,
}

pub struct Ssh {
    /// The client binary (a full path: the spawn does not search PATH).
    ssh: PathBuf,
    cfg: SshConfig,
    ctl_dir: PathBuf,
    /// Prefix of this runtime's marks.
    id: String,
    /// One master per task, each behind its own lock so one task's
    /// (re)connection does not hold up another's commands.
    masters: Mutex<HashMap<String, Arc<Mutex<Master>>>>,
    next_slot: AtomicU64,
    boot: OnceLock<Boot>,
    boot_lock: Mutex<()>,
    started: Mutex<HashMap<i32, Started>>,
    next: AtomicU64,
    closed: AtomicBool,
    /// This process's environment, for the local `ssh` client (agent, HOME).
    client_env: Vec<(String, String)>,
    /// Kills this runtime's remote commands if this process dies without
    /// closing (see [`Ssh::watch`]).
    watcher: Mutex<Option<std::process::Child>>,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Variables of the remote login that are not the command's to keep.
const NOT_STATE: &[&str] = &[
    "_",
    "SHLVL",
    "PWD",
    "OLDPWD",
    "SSH_CLIENT",
    "SSH_CONNECTION",
    "SSH_TTY",
    MARK_VAR,
];

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Ssh {
    pub fn new(cfg: SshConfig) -> Result<Ssh, String> {
        cfg.validate()?;
        let Some(ssh) = find_ssh() else {
            return Err(
                "terminal.backend 'ssh' needs the OpenSSH client (ssh), which is not installed"
                    .into(),
            );
        };
        let n = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let id = format!("ht{}x{n}x{nanos:x}", std::process::id());
        // Short: a unix socket path is at most 107 bytes.
        let ctl_dir = std::env::temp_dir().join(format!("ht-ssh-{id}"));
        {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .mode(0o700)
                .create(&ctl_dir)
                .map_err(|e| format!("ssh: cannot create {}: {e}", ctl_dir.display()))?;
        }
        Ok(Ssh {
            ssh,
            ctl_dir,
            cfg,
            id,
            masters: Mutex::new(HashMap::new()),
            next_slot: AtomicU64::new(1),
            boot: OnceLock::new(),
            boot_lock: Mutex::new(()),
            started: Mutex::new(HashMap::new()),
            next: AtomicU64::new(1),
            closed: AtomicBool::new(false),
            client_env: std::env::vars().collect(),
            watcher: Mutex::new(None),
        })
        .inspect(Ssh::watch)
    }

    /// Start the watcher that ends this runtime's remote commands should
    /// this process die without closing it (SIGKILL, a crash, an exit
    /// without cleanup): the process shim in watch mode (`ht-shim -w`). When
    /// the host is gone it runs, over each task's master connection that is
    /// still up, the same kill of everything marked with this runtime's id
    /// that a close runs, then stops the master and removes the socket
    /// folder. A remote command without a terminal would otherwise outlive
    /// its connection. Closing the runtime stops the watcher instead.
    fn watch(&self) {
        let Some(shim) = crate::supervisor::shim_path() else {
            return;
        };
        const CTL: &str = "/__hermes_tools_ctl__";
        // Every argument quoted, the socket's path as the loop's "$s".
        let q = |argv: Vec<String>| -> String {
            argv.iter()
                .map(|a| match a.find(CTL) {
                    Some(i) => format!("{}\"$s\"{}", shq(&a[..i]), shq(&a[i + CTL.len()..])),
                    None => shq(a),
                })
                .collect::<Vec<_>>()
                .join(" ")
        };
        let kill = q(self.client_argv(
            Path::new(CTL),
            false,
            format!(
                "exec bash --norc -c {}",
                shq(&self.kill_script("-", false, libc::SIGKILL))
            ),
        ));
        let mut exit = vec![self.ssh.display().to_string()];
        exit.extend(self.common_args(Path::new(CTL)));
        exit.extend(["-O".into(), "exit".into(), self.cfg.host.clone()]);
        let exit = q(exit);
        let dir = shq(&self.ctl_dir.to_string_lossy());
        let script = format!(
            "for s in {dir}/m*; do [ -S \"$s\" ] || continue; {kill} </dev/null >/dev/null 2>&1; \
             {exit} >/dev/null 2>&1; done; rm -rf -- {dir}"
        );
        let child = std::process::Command::new(shim)
            .args(["-w", "/bin/sh", "-c", &script])
            .env_clear()
            .envs(self.client_env.iter().cloned())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        match child {
            Ok(c) => *lock(&self.watcher) = Some(c),
            Err(e) => tracing::warn!("ssh backend: no watcher for a crash of this process: {e}"),
        }
    }

    /// Stop the watcher: the runtime ends its remote commands itself.
    fn unwatch(&self) {
        if let Some(mut c) = lock(&self.watcher).take() {
            crate::sys::kill(c.id() as i32, libc::SIGTERM);
            let _ = c.wait();
        }
    }

    /// Task `task`'s control socket, once its master was started (for
    /// tests and the bench).
    pub fn control_path(&self, task: &str) -> Option<PathBuf> {
        let slot = lock(&self.masters).get(task_key(task)).cloned()?;
        let m = lock(&slot);
        m.pid.map(|_| m.ctl.clone())
    }

    /// Task `task`'s master pid, when it runs.
    pub fn master_pid(&self, task: &str) -> Option<i32> {
        let slot = lock(&self.masters).get(task_key(task)).cloned()?;
        let m = lock(&slot);
        m.pid.filter(|p| alive(*p))
    }

    /// How many masters run now (one per task in use).
    pub fn connections(&self) -> usize {
        let slots: Vec<_> = lock(&self.masters).values().cloned().collect();
        slots
            .iter()
            .filter(|s| lock(s).pid.is_some_and(alive))
            .count()
    }

    /// Options every invocation shares (ours first: ssh keeps the first value).
    pub fn common_args(&self, ctl: &Path) -> Vec<String> {
        let c = &self.cfg;
        let mut a: Vec<String> = Vec::new();
        let mut o = |s: String| {
            a.push("-o".into());
            a.push(s);
        };
        o("BatchMode=yes".into());
        o(format!(
            "StrictHostKeyChecking={}",
            if c.accept_new_host_keys {
                "accept-new"
            } else {
                "yes"
            }
        ));
        if let Some(k) = &c.known_hosts {
            o(format!("UserKnownHostsFile={}", k.display()));
        }
        o(format!("ConnectTimeout={}", c.connect_timeout));
        o(format!("ControlPath={}", ctl.display()));
        o("ForwardAgent=no".into());
        o("ForwardX11=no".into());
        o("LogLevel=ERROR".into());
        o("ServerAliveInterval=15".into());
        if c.identity_file.is_some() {
            o("IdentitiesOnly=yes".into());
        }
        for x in &c.options {
            o(x.clone());
        }
        a.push("-p".into());
        a.push(c.port.to_string());
        if let Some(u) = &c.user {
            a.push("-l".into());
            a.push(u.clone());
        }
        if let Some(i) = &c.identity_file {
            a.push("-i".into());
            a.push(i.display().to_string());
        }
        a
    }

    /// The argv of a client call over master `ctl` running `remote` there.
    fn client_argv(&self, ctl: &Path, pty: bool, remote: String) -> Vec<String> {
        let mut a = vec![self.ssh.display().to_string()];
        a.extend(self.common_args(ctl));
        a.extend(
            [
                "-o",
                "ControlMaster=no",
                "-e",
                "none",
                if pty { "-tt" } else { "-T" },
            ]
            .map(String::from),
        );
        a.push(self.cfg.host.clone());
        a.push(remote);
        a
    }

    /// Task `task`'s slot, made on first use.
    fn slot(&self, task: &str) -> Arc<Mutex<Master>> {
        let key = task_key(task);
        let mut map = lock(&self.masters);
        if let Some(s) = map.get(key) {
            return s.clone();
        }
        let n = self.next_slot.fetch_add(1, Ordering::Relaxed);
        let slot = Arc::new(Mutex::new(Master {
            pid: None,
            generation: 0,
            ctl: self.ctl_dir.join(format!("m{n}")),
            n,
            last_used: Instant::now(),
        }));
        map.insert(key.to_string(), slot.clone());
        slot
    }

    /// Before a master starts for `me`: past `max_connections` running
    /// masters, close the least recently used idle ones (no command of
    /// their task running, not busy connecting); their tasks reconnect on
    /// their next command.
    fn make_room(&self, me: &Arc<Mutex<Master>>) {
        let others: Vec<(String, Arc<Mutex<Master>>)> = lock(&self.masters)
            .iter()
            .filter(|(_, v)| !Arc::ptr_eq(v, me))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut running: Vec<(Instant, String, Arc<Mutex<Master>>)> = others
            .into_iter()
            .filter_map(|(k, s)| {
                let m = s.try_lock().ok()?;
                let up = m.pid.is_some_and(alive);
                let t = m.last_used;
                drop(m);
                up.then_some((t, k, s))
            })
            .collect();
        let max = self.cfg.max_connections.max(1);
        if running.len() < max {
            return;
        }
        running.sort_by_key(|r| r.0);
        let busy: std::collections::HashSet<String> = lock(&self.started)
            .iter()
            .filter(|(pid, _)| alive(**pid))
            .map(|(_, s)| s.task.clone())
            .collect();
        let excess = running.len() + 1 - max;
        for (_, k, s) in running.iter().filter(|r| !busy.contains(&r.1)).take(excess) {
            if let Ok(mut m) = s.try_lock() {
                tracing::debug!(task = %k, "ssh: closing an idle task's connection (max_connections)");
                self.exit_master(&mut m);
            }
        }
    }

    /// The `ssh` client for master socket `ctl` with `args` then the host
    /// (stdin closed, this process's environment).
    fn client(&self, ctl: &Path, args: &[&str]) -> Command {
        let mut c = Command::new(&self.ssh);
        c.args(self.common_args(ctl))
            .args(args)
            .arg(&self.cfg.host)
            .stdin(Stdio::null())
            .env_clear()
            .envs(self.client_env.iter().cloned());
        c
    }

    /// Close a master (its clients are gone or go with it).
    fn exit_master(&self, m: &mut Master) {
        if let Some(p) = m.pid.take() {
            let _ = self
                .client(&m.ctl, &["-O", "exit"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
            if alive(p) {
                std::thread::sleep(Duration::from_millis(50));
                if alive(p) {
                    crate::sys::kill(p, libc::SIGTERM);
                }
            }
        }
        let _ = std::fs::remove_file(&m.ctl);
    }

    /// Start task `task`'s master unless it runs; returns its control
    /// socket, generation and slot number.
    fn ensure_master(&self, task: &str) -> io::Result<(PathBuf, u64, u64)> {
        if self.closed.load(Ordering::Acquire) {
            return Err(io::Error::other("the ssh backend is closed"));
        }
        let slot = self.slot(task);
        let (ctl, generation, n, reconnected) = {
            let mut m = lock(&slot);
            m.last_used = Instant::now();
            if let Some(p) = m.pid
                && alive(p)
                && m.ctl.exists()
            {
                return Ok((m.ctl.clone(), m.generation, m.n));
            }
            self.make_room(&slot);
            let ctl = m.ctl.clone();
            let _ = std::fs::remove_file(&ctl);
            let log = self.ctl_dir.join(format!("master{}.log", m.n));
            let _ = std::fs::remove_file(&log);
            let persist = format!("ControlPersist={}", self.cfg.control_persist.max(1));
            let log_arg = log.display().to_string();
            let status = self
                .client(
                    &ctl,
                    &[
                        "-M",
                        "-N",
                        "-f",
                        "-o",
                        "ControlMaster=yes",
                        "-o",
                        &persist,
                        "-E",
                        &log_arg,
                    ],
                )
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()?;
            if !status.success() {
                let why = std::fs::read_to_string(&log).unwrap_or_default();
                let why = why.trim().lines().last().unwrap_or("").to_string();
                return Err(io::Error::new(
                    io::ErrorKind::ConnectionRefused,
                    format!(
                        "ssh: cannot connect to {}: {}",
                        self.cfg.label(),
                        if why.is_empty() {
                            format!("ssh exited with {status}")
                        } else {
                            why
                        }
                    ),
                ));
            }
            let out = self.client(&ctl, &["-O", "check"]).output()?;
            let text = String::from_utf8_lossy(&out.stderr);
            m.pid = text
                .split("pid=")
                .nth(1)
                .and_then(|r| r.split(')').next())
                .and_then(|p| p.trim().parse().ok());
            if m.pid.is_none() {
                return Err(io::Error::other(format!(
                    "ssh: the master connection to {} did not start: {}",
                    self.cfg.label(),
                    text.trim()
                )));
            }
            m.generation += 1;
            (ctl, m.generation, m.n, m.generation > 1)
        };
        if reconnected {
            // Every client of the old master died with it: what they
            // started there runs on without anyone reading it.
            let _ = self.run_script(
                task,
                &format!(
                    "{}\n{}",
                    self.kill_script(&format!("-{n}-"), false, libc::SIGKILL),
                    self.mkdir_script()
                ),
                b"",
            );
            tracing::info!(host = %self.cfg.label(), task = %task_key(task), "ssh: reconnected");
        }
        Ok((ctl, generation, n))
    }

    fn mkdir_script(&self) -> String {
        match self.boot.get() {
            Some(b) => format!("mkdir -p -m 700 -- {}", shq(&b.dir.to_string_lossy())),
            None => String::new(),
        }
    }

    /// A script that signals every remote process whose mark is this
    /// runtime's id followed by `suffix` (`exact`) or starting so, and
    /// each one's process group.
    fn kill_script(&self, suffix: &str, exact: bool, signal: i32) -> String {
        let pat = format!("{MARK_VAR}={}{suffix}", self.id);
        let grep = if exact {
            format!("grep -lsxzF {}", shq(&pat))
        } else {
            format!("grep -lszE {}", shq(&format!("^{pat}")))
        };
        format!(
            "for f in $({grep} /proc/[0-9]*/environ 2>/dev/null); do p=${{f#/proc/}}; p=${{p%/environ}}; \
             kill -{signal} -- -$p 2>/dev/null; kill -{signal} $p 2>/dev/null; done; true"
        )
    }

    /// Learn the remote environment, home and a private folder (once, over
    /// the default task's connection).
    fn boot(&self) -> io::Result<&Boot> {
        if let Some(b) = self.boot.get() {
            return Ok(b);
        }
        let _g = lock(&self.boot_lock);
        if let Some(b) = self.boot.get() {
            return Ok(b);
        }
        // A login shell, so profile additions to PATH count (as in the
        // original's snapshot); whatever the profile prints comes before the marker.
        let out = self.run_remote(
            "default",
            &format!("exec bash -l -c {}", shq(BOOT_SCRIPT)),
            b"",
        )?;
        if out.code != 0 {
            return Err(io::Error::other(format!(
                "ssh {}: cannot prepare the remote side: {}",
                self.cfg.label(),
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        let boot = parse_boot(&out.stdout, NOT_STATE)?;
        let _ = self.boot.set(boot);
        Ok(self.boot.get().expect("set above"))
    }

    /// Run `remote` (a command line for the remote login shell) over task
    /// `task`'s master.
    fn run_remote(&self, task: &str, remote: &str, stdin: &[u8]) -> io::Result<ScriptOutput> {
        let (ctl, _, _) = self.ensure_master(task)?;
        let argv = self.client_argv(&ctl, false, remote.to_string());
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .env_clear()
            .envs(self.client_env.iter().cloned());
        run_capture(cmd, stdin)
    }

    fn forget_dead(&self, started: &mut HashMap<i32, Started>) {
        if started.len() > 1024 {
            started.retain(|pid, _| alive(*pid));
        }
    }
}

/// Is `pid` a live process (not a zombie)?
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !s
            .rsplit_once(')')
            .is_some_and(|(_, r)| r.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// The OpenSSH client on PATH.
pub fn find_ssh() -> Option<PathBuf> {
    crate::env::find_program("ssh")
}

impl RemoteShell for Ssh {
    fn run_script(&self, task: &str, script: &str, stdin: &[u8]) -> io::Result<ScriptOutput> {
        let out = self.run_remote(task, &format!("exec bash --norc -c {}", shq(script)), stdin)?;
        if out.code == 255 && self.master_pid(task).is_none() {
            return Err(io::Error::new(
                io::ErrorKind::ConnectionAborted,
                format!("ssh connection to {} lost", self.cfg.label()),
            ));
        }
        Ok(out)
    }
    fn label(&self) -> String {
        format!("ssh {}", self.cfg.label())
    }
}

impl Environment for Ssh {
    fn name(&self) -> &'static str {
        "ssh"
    }

    fn spawn(&self, req: &SpawnRequest<'_>) -> io::Result<Spawned> {
        let (ctl, generation, n) = self.ensure_master(req.task)?;
        let suffix = format!("-{n}-{}", self.next.fetch_add(1, Ordering::Relaxed));
        let token = format!("{}{suffix}", self.id);
        let s = command_script(req);
        let remote = format!("export {MARK_VAR}={token}; exec bash --norc -c {}", shq(&s));
        let argv = self.client_argv(&ctl, req.pty, remote);
        let local = SpawnRequest {
            script: "",
            cwd: Path::new("/"),
            env: &self.client_env,
            pty: req.pty,
            extra_rw: &[],
            task: req.task,
            linger: req.linger,
        };
        let sp = spawn_argv(&argv, &local)?;
        let mut started = lock(&self.started);
        self.forget_dead(&mut started);
        started.insert(
            sp.pid,
            Started {
                task: task_key(req.task).to_string(),
                token: suffix,
                generation,
            },
        );
        Ok(sp)
    }

    fn kill(&self, pid: i32, signal: i32) {
        let found = lock(&self.started)
            .get(&pid)
            .map(|s| (s.task.clone(), s.token.clone()));
        let Some((task, token)) = found else {
            kill_tree(pid, signal);
            return;
        };
        let remote_ok = self
            .run_script(&task, &self.kill_script(&token, true, signal), b"")
            .is_ok_and(|o| o.code == 0);
        if !remote_ok || signal == libc::SIGKILL {
            kill_tree(pid, signal);
        }
    }

    fn cleanup_task(&self, task: &str) {
        let slot = lock(&self.masters).remove(task_key(task));
        if let Some(slot) = slot {
            let mut m = lock(&slot);
            if m.pid.is_some_and(alive) {
                // The terminal killed the task's commands; anything of the
                // task still marked there goes with its connection.
                let argv = self.client_argv(
                    &m.ctl,
                    false,
                    format!(
                        "exec bash --norc -c {}",
                        shq(&self.kill_script(&format!("-{}-", m.n), false, libc::SIGKILL))
                    ),
                );
                let mut cmd = Command::new(&argv[0]);
                cmd.args(&argv[1..])
                    .env_clear()
                    .envs(self.client_env.iter().cloned());
                let _ = run_capture(cmd, b"");
            }
            self.exit_master(&mut m);
            let _ = std::fs::remove_file(self.ctl_dir.join(format!("master{}.log", m.n)));
        }
    }

    fn cleanup(&self) {
        if self.closed.load(Ordering::Acquire) {
            return;
        }
        let slots: Vec<(String, Arc<Mutex<Master>>)> = lock(&self.masters)
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        // Kill what this runtime started and remove its folder, over any
        // connection that is still up.
        if let Some((task, _)) = slots.iter().find(|(_, s)| lock(s).pid.is_some_and(alive)) {
            let rm = match self.boot.get() {
                Some(b) => format!("; rm -rf -- {}", shq(&b.dir.to_string_lossy())),
                None => String::new(),
            };
            let _ = self.run_script(
                task,
                &format!("{}{rm}", self.kill_script("-", false, libc::SIGKILL)),
                b"",
            );
        }
        self.closed.store(true, Ordering::Release);
        for (_, s) in &slots {
            self.exit_master(&mut lock(s));
        }
        lock(&self.masters).clear();
        let _ = std::fs::remove_dir_all(&self.ctl_dir);
        self.unwatch();
    }

    fn location(&self) -> String {
        format!("on ssh {}", self.cfg.label())
    }

    fn remote(&self) -> Option<&dyn Remote> {
        Some(self)
    }
}

impl Remote for Ssh {
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
    fn explain_exit(&self, pid: i32, code: i32) -> Option<String> {
        let s = lock(&self.started).remove(&pid)?;
        if code != 255 {
            return None;
        }
        let slot = lock(&self.masters).get(&s.task).cloned();
        let now = slot.and_then(|slot| {
            let m = lock(&slot);
            m.pid
                .filter(|p| alive(*p))
                .map(|_| (m.generation, m.ctl.clone()))
        });
        // A master killed a moment ago can still look alive (it closes its
        // sockets, which ends our client, before it is a zombie): ask it.
        let now = now.and_then(|(generation, ctl)| {
            let answers = generation == s.generation
                && self
                    .client(&ctl, &["-O", "check"])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .is_ok_and(|st| st.success());
            answers.then_some(generation)
        });
        (now != Some(s.generation)).then(|| {
            format!(
                "ssh connection to {} lost during the command; it may have partly run. The next command reconnects.",
                self.cfg.label()
            )
        })
    }
    fn forward_socket(
        &self,
        task: &str,
        local: &Path,
        remote: &Path,
    ) -> io::Result<Box<dyn std::any::Any + Send>> {
        let (ctl, _, _) = self.ensure_master(task_key(task))?;
        let spec = format!("{}:{}", remote.display(), local.display());
        let out = self
            .client(&ctl, &["-O", "forward", "-R", &spec])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()?;
        if !out.status.success() {
            let why = String::from_utf8_lossy(&out.stderr);
            return Err(io::Error::other(format!(
                "ssh: cannot forward a socket to {}: {}",
                self.cfg.label(),
                why.trim()
            )));
        }
        Ok(Box::new(Forward(
            self.client(&ctl, &["-O", "cancel", "-R", &spec]),
        )))
    }
}

/// A socket forwarded by [`Remote::forward_socket`]: cancelled when dropped.
struct Forward(Command);

impl Drop for Forward {
    fn drop(&mut self) {
        let _ = self.0.stdout(Stdio::null()).stderr(Stdio::null()).status();
    }
}

impl Drop for Ssh {
    fn drop(&mut self) {
        self.cleanup();
    }
}

/// The backend as the terminal holds it: one [`Ssh`] (a connection per
/// task) shared with the file tools ([`Environment::files`]).
pub struct SshBackend(pub Arc<Ssh>);

impl SshBackend {
    pub fn new(cfg: SshConfig) -> Result<SshBackend, String> {
        Ok(SshBackend(Arc::new(Ssh::new(cfg)?)))
    }
}

impl Environment for SshBackend {
    fn name(&self) -> &'static str {
        "ssh"
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
    fn files(&self, task: &str) -> Option<Arc<dyn crate::fs::FileSystem>> {
        Some(Arc::new(crate::remote_fs::RemoteFs::new(
            self.0.clone(),
            task_key(task),
            "ssh",
        )))
    }
}
