//! The built-in `terminal` toolset: the `terminal` tool (foreground and
//! background commands, pipes or a PTY) and the `process` tool (background
//! process registry).
//!
//! Every command is a fresh `bash -c` in its own session (process group),
//! run by a [`backend::Backend`]. State that should persist per task (the
//! working directory and exported variables) is captured by the wrapper
//! script at the end of each foreground command into a snapshot file that
//! the next command of the same task sources first. Nothing waits on stdin
//! (it is /dev/null, or a PTY), timeouts kill the whole tree, output is
//! captured within a fixed memory budget, and the runtime's close kills
//! everything that is still running.

pub mod backend;
pub mod exec;
pub mod guard;
pub mod output;
pub mod process;
pub mod tool;

use once_cell::sync::Lazy;
use parking_lot::Mutex;
use regex::Regex;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use crate::config::TerminalConfig;
use crate::error::{Error, Result};
use crate::runtime::Shared;
use crate::tools::Lifecycle;
use backend::{Backend, Input};

/// The terminal toolset's state, one per runtime.
pub struct Terminal {
    pub(crate) shared: Weak<Shared>,
    pub cfg: TerminalConfig,
    pub backend: Box<dyn Backend>,
    base_env: Vec<(String, String)>,
    default_cwd: PathBuf,
    state_dir: PathBuf,
    tasks: Mutex<HashMap<String, TaskState>>,
    next_task: AtomicU64,
    pub procs: process::Registry,
    live: Mutex<HashMap<String, LiveFg>>,
    closed: AtomicBool,
}

/// Per-task state.
#[derive(Clone, Debug)]
pub struct TaskState {
    pub cwd: PathBuf,
    /// Snapshot file (exported variables) written by the last foreground command.
    pub snapshot: Option<PathBuf>,
    /// Host overrides (`None` unsets), applied to every command of the task.
    pub env: BTreeMap<String, Option<String>>,
    index: u64,
}

/// A foreground command that is running now.
struct LiveFg {
    pid: i32,
    task_id: String,
    input: Option<Arc<Input>>,
}

static TERMINALS: Lazy<Mutex<HashMap<u64, Weak<Terminal>>>> =
    Lazy::new(|| Mutex::new(HashMap::new()));

static SECRET_NAME: Lazy<Regex> = Lazy::new(|| {
    Regex::new(r"(?i)(^|_)(API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?)($|_)")
        .expect("secret name regex")
});

/// Non-interactive defaults: nothing prompts, nothing pages.
pub const NONINTERACTIVE_ENV: &[(&str, &str)] = &[
    ("CI", "1"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("GIT_PAGER", "cat"),
    ("PAGER", "cat"),
    ("MANPAGER", "cat"),
    ("SYSTEMD_PAGER", "cat"),
    ("GIT_EDITOR", "true"),
    ("EDITOR", "true"),
    ("VISUAL", "true"),
    ("DEBIAN_FRONTEND", "noninteractive"),
    ("NPM_CONFIG_YES", "true"),
    ("npm_config_yes", "true"),
    ("PIP_NO_INPUT", "1"),
    ("PYTHONUNBUFFERED", "1"),
    ("HOMEBREW_NO_AUTO_UPDATE", "1"),
    ("GIT_SSH_COMMAND", "ssh -o BatchMode=yes"),
    ("SUDO_ASKPASS", "/bin/false"),
];

static UNIQUE: AtomicU64 = AtomicU64::new(1);

/// A short unique hex string (process-wide counter mixed with time and pid).
pub(crate) fn unique_suffix() -> String {
    let n = UNIQUE.fetch_add(1, Ordering::Relaxed);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let mut x = n.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ t.rotate_left(17)
        ^ (u64::from(std::process::id()) << 40);
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    format!("{:012x}", x & 0xffff_ffff_ffff)
}

/// Single-quote for bash.
pub fn sq(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

fn expand_home(p: &str) -> PathBuf {
    if let Some(rest) = p.strip_prefix("~") {
        if let Ok(home) = std::env::var("HOME") {
            return PathBuf::from(format!("{home}{rest}"));
        }
    }
    PathBuf::from(p)
}

/// The configured working directory (or the process's own).
pub fn default_cwd(cfg: &TerminalConfig) -> PathBuf {
    cfg.cwd
        .as_deref()
        .map(expand_home)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("/"))
}

fn valid_env_name(k: &str) -> bool {
    !k.is_empty()
        && !k.as_bytes()[0].is_ascii_digit()
        && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

fn base_env(cfg: &TerminalConfig) -> Vec<(String, String)> {
    let mut m: BTreeMap<String, String> = BTreeMap::new();
    for (k, v) in std::env::vars_os() {
        let (Some(k), Some(v)) = (k.to_str(), v.to_str()) else {
            continue;
        };
        if SECRET_NAME.is_match(k) && !cfg.env_passthrough.iter().any(|p| p == k) {
            continue;
        }
        m.insert(k.to_string(), v.to_string());
    }
    for (k, v) in NONINTERACTIVE_ENV {
        m.insert((*k).to_string(), (*v).to_string());
    }
    m.insert("TERM".into(), "dumb".into());
    if !m.contains_key("PATH") {
        m.insert(
            "PATH".into(),
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".into(),
        );
    }
    for (k, v) in &cfg.env {
        m.insert(k.clone(), v.clone());
    }
    m.into_iter().collect()
}

/// Register the terminal toolset (called by `tools::install`).
pub fn install(shared: &Arc<Shared>) -> Result<()> {
    let cfg = shared.config.terminal.clone();
    let backend = backend::from_config(&cfg).map_err(Error::invalid)?;
    let default_cwd = default_cwd(&cfg);
    if !default_cwd.is_dir() {
        return Err(Error::invalid(format!(
            "runtime config: terminal.cwd: '{}' is not a directory",
            default_cwd.display()
        )));
    }
    let state_dir = std::env::temp_dir().join(format!(
        "hermes-tools-{}-{}-{}",
        std::process::id(),
        shared.id,
        unique_suffix()
    ));
    {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .mode(0o700)
            .recursive(true)
            .create(&state_dir)
            .map_err(|e| {
                internal_err(format!(
                    "terminal: cannot create state dir {}: {e}",
                    state_dir.display()
                ))
            })?;
    }
    let term = Arc::new(Terminal {
        shared: Arc::downgrade(shared),
        base_env: base_env(&cfg),
        procs: process::Registry::new(&cfg),
        cfg,
        backend,
        default_cwd,
        state_dir,
        tasks: Mutex::new(HashMap::new()),
        next_task: AtomicU64::new(1),
        live: Mutex::new(HashMap::new()),
        closed: AtomicBool::new(false),
    });
    shared.register_native_tool(
        &tool::terminal_spec(),
        Arc::new(tool::TerminalTool(term.clone())),
    )?;
    shared.register_native_tool(
        &tool::process_spec(),
        Arc::new(tool::ProcessTool(term.clone())),
    )?;
    shared
        .lifecycles
        .lock()
        .push(Arc::new(TerminalLifecycle(term.clone())));
    TERMINALS.lock().insert(shared.id, Arc::downgrade(&term));
    Ok(())
}

/// The terminal toolset of a runtime, if it is switched on.
pub fn of(shared: &Shared) -> Option<Arc<Terminal>> {
    TERMINALS.lock().get(&shared.id).and_then(Weak::upgrade)
}

fn task_key(task_id: &str) -> &str {
    if task_id.is_empty() {
        "default"
    } else {
        task_id
    }
}

/// What a command needs to start: its script, environment and directory.
pub struct Prepared {
    pub script: String,
    pub env: Vec<(String, String)>,
    pub cwd: PathBuf,
    /// Where the wrapper writes the new snapshot (foreground only).
    pub capture: Option<PathBuf>,
    pub task_index: u64,
}

impl Terminal {
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// A copy of the task's state (created on first use).
    pub fn task(&self, task_id: &str) -> TaskState {
        let mut tasks = self.tasks.lock();
        tasks
            .entry(task_key(task_id).to_string())
            .or_insert_with(|| TaskState {
                cwd: self.default_cwd.clone(),
                snapshot: None,
                env: BTreeMap::new(),
                index: self.next_task.fetch_add(1, Ordering::Relaxed),
            })
            .clone()
    }

    /// Set a task's working directory (the host's per-task override).
    pub fn set_task_cwd(&self, task_id: &str, cwd: &str) -> Result<()> {
        let p = expand_home(cwd);
        if !p.is_absolute() {
            return Err(Error::invalid(format!(
                "cwd must be an absolute path: '{cwd}'"
            )));
        }
        if !p.is_dir() {
            return Err(Error::invalid(format!("cwd is not a directory: '{cwd}'")));
        }
        self.task(task_id);
        if let Some(t) = self.tasks.lock().get_mut(task_key(task_id)) {
            t.cwd = p;
        }
        Ok(())
    }

    /// Set (string) or unset (null) environment variables for a task.
    pub fn set_task_env(&self, task_id: &str, env: &Value) -> Result<()> {
        let Value::Object(map) = env else {
            return Err(Error::invalid(
                "env must be a JSON object of strings (or null to unset)",
            ));
        };
        let mut parsed = Vec::new();
        for (k, v) in map {
            if !valid_env_name(k) {
                return Err(Error::invalid(format!(
                    "invalid environment variable name '{k}'"
                )));
            }
            match v {
                Value::String(s) => parsed.push((k.clone(), Some(s.clone()))),
                Value::Null => parsed.push((k.clone(), None)),
                _ => {
                    return Err(Error::invalid(format!(
                        "env value of '{k}' must be a string or null"
                    )));
                }
            }
        }
        self.task(task_id);
        if let Some(t) = self.tasks.lock().get_mut(task_key(task_id)) {
            t.env.extend(parsed);
        }
        Ok(())
    }

    /// Build the wrapper script for `command` in `task_id`.
    /// `foreground` adds the state capture at the end.
    pub fn prepare(
        &self,
        task_id: &str,
        command: &str,
        workdir: Option<&Path>,
        pty: bool,
        foreground: bool,
    ) -> Prepared {
        let t = self.task(task_id);
        let mut s = String::with_capacity(command.len() + 512);
        let env = if let Some(snap) = &t.snapshot {
            s.push_str(&format!(
                "builtin source {} >/dev/null 2>&1\n",
                sq(&snap.display().to_string())
            ));
            Vec::new()
        } else {
            self.base_env.clone()
        };
        s.push_str(if pty {
            "builtin export TERM=xterm-256color\n"
        } else {
            "builtin export TERM=dumb\n"
        });
        for (k, v) in &t.env {
            match v {
                Some(v) => s.push_str(&format!("builtin export {k}={}\n", sq(v))),
                None => s.push_str(&format!("builtin unset {k}\n")),
            }
        }
        s.push_str(&format!(
            "builtin cd -- {} 2>/dev/null || builtin cd -- {} 2>/dev/null\n",
            sq(&t.cwd.display().to_string()),
            sq(&self.default_cwd.display().to_string())
        ));
        if let Some(w) = workdir {
            let w = sq(&w.display().to_string());
            s.push_str(&format!(
                "builtin cd -- {w} || {{ builtin echo \"workdir not found: \"{w}; builtin exit 126; }}\n"
            ));
        }
        s.push_str("builtin eval -- ");
        s.push_str(&sq(command));
        s.push('\n');
        let capture = if foreground {
            let p = self
                .state_dir
                .join(format!("task-{}.{}.new", t.index, unique_suffix()));
            s.push_str(&format!(
                "__ht_ec=$?\nbuiltin umask 077\n{{ builtin printf '# %s\\n' \"$PWD\"; builtin export -p; }} > {} 2>/dev/null\nbuiltin exit $__ht_ec\n",
                sq(&p.display().to_string())
            ));
            Some(p)
        } else {
            None
        };
        let cwd = if t.cwd.is_dir() {
            t.cwd.clone()
        } else {
            self.default_cwd.clone()
        };
        Prepared {
            script: s,
            env,
            cwd,
            capture,
            task_index: t.index,
        }
    }

    /// After a foreground command: adopt the snapshot it wrote (if it got
    /// that far) as the task's state.
    pub fn adopt_snapshot(&self, task_id: &str, prepared: &Prepared) {
        let Some(newp) = &prepared.capture else {
            return;
        };
        let Ok(text) = std::fs::read_to_string(newp) else {
            return;
        };
        let cwd = text
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("# "))
            .map(PathBuf::from);
        let dest = self
            .state_dir
            .join(format!("task-{}.sh", prepared.task_index));
        if std::fs::rename(newp, &dest).is_err() {
            let _ = std::fs::remove_file(newp);
            return;
        }
        let mut tasks = self.tasks.lock();
        if let Some(t) = tasks.get_mut(task_key(task_id)) {
            if t.index == prepared.task_index {
                t.snapshot = Some(dest);
                if let Some(c) = cwd.filter(|c| c.is_absolute()) {
                    t.cwd = c;
                }
            }
        }
    }

    pub fn state_dir(&self) -> &Path {
        &self.state_dir
    }

    pub(crate) fn live_add(&self, key: &str, pid: i32, task_id: &str, input: Option<Arc<Input>>) {
        self.live.lock().insert(
            key.to_string(),
            LiveFg {
                pid,
                task_id: task_key(task_id).to_string(),
                input,
            },
        );
    }

    pub(crate) fn live_remove(&self, key: &str) {
        self.live.lock().remove(key);
    }

    /// Type into a running command: a background process id or the call
    /// id of a running foreground PTY command.
    pub fn write_input(&self, id: &str, data: &[u8]) -> Result<usize> {
        let live = self.live.lock().get(id).map(|l| l.input.clone());
        match live {
            Some(Some(input)) => input
                .write_all(data)
                .map_err(|e| internal_err(format!("write to '{id}' failed: {e}"))),
            Some(None) => Err(Error::invalid(format!(
                "'{id}' has no input: it was not started with pty=true (its stdin is /dev/null)"
            ))),
            None => {
                let p = self.procs.get(id).ok_or_else(|| {
                    Error::not_found(format!("no running command with id '{id}'"))
                })?;
                p.write(data).map_err(|e| {
                    if p.status() == "exited" {
                        Error::not_found(format!("'{id}': {e}"))
                    } else {
                        Error::invalid(format!("'{id}': {e}"))
                    }
                })
            }
        }
    }

    /// Emit an event to the host (no-op without a handler or after close).
    pub(crate) fn emit(&self, event: Value) {
        if let Some(s) = self.shared.upgrade() {
            s.emit_event(event);
        }
    }

    pub(crate) fn has_event_handler(&self) -> bool {
        self.shared
            .upgrade()
            .is_some_and(|s| s.events.read().is_some())
    }

    fn grace(&self) -> Duration {
        Duration::from_secs_f64(self.cfg.kill_grace.clamp(0.0, 60.0))
    }

    fn cleanup_task(&self, task_id: &str) {
        let key = task_key(task_id);
        let fg: Vec<i32> = self
            .live
            .lock()
            .values()
            .filter(|l| l.task_id == key)
            .map(|l| l.pid)
            .collect();
        for pid in fg {
            backend::terminate_tree(&*self.backend, pid, self.grace());
        }
        self.procs.kill_task(self, key);
        let removed = self.tasks.lock().remove(key);
        if let Some(t) = removed.and_then(|t| t.snapshot) {
            let _ = std::fs::remove_file(t);
        }
        self.backend.cleanup_task(key);
    }

    fn shutdown(&self) {
        if self.closed.swap(true, Ordering::AcqRel) {
            return;
        }
        let fg: Vec<i32> = self.live.lock().values().map(|l| l.pid).collect();
        for &pid in &fg {
            self.backend.kill(pid, libc::SIGTERM);
        }
        self.procs.kill_all(self);
        let until = std::time::Instant::now() + self.grace();
        while std::time::Instant::now() < until && fg.iter().any(|&p| backend::tree_alive(p)) {
            std::thread::sleep(Duration::from_millis(10));
        }
        for &pid in &fg {
            self.backend.kill(pid, libc::SIGKILL);
        }
        self.procs.join_all(Duration::from_secs(5));
        self.backend.cleanup();
        let _ = std::fs::remove_dir_all(&self.state_dir);
        if let Some(s) = self.shared.upgrade() {
            TERMINALS.lock().remove(&s.id);
        }
    }
}

struct TerminalLifecycle(Arc<Terminal>);

impl Lifecycle for TerminalLifecycle {
    fn cleanup_task(&self, task_id: &str) {
        self.0.cleanup_task(task_id);
    }
    fn shutdown(&self) {
        self.0.shutdown();
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.state_dir);
    }
}

fn internal_err(msg: String) -> Error {
    Error::new(crate::error::Status::Internal, msg)
}
