//! The built-in `terminal` toolset: the `terminal` tool (foreground and
//! background commands, pipes or a PTY) and the `process` tool (background
//! process registry).
//!
//! Every command is a fresh `bash -c` in its own session (process group),
//! run by a [`backend::Backend`]. State that should persist per task (the
//! working directory and exported variables) is captured at the end of
//! each foreground command that may change it (`cd`, `export`, `source`,
//! assignments, ...) and becomes the directory and environment the next
//! command of the task starts with; other commands run verbatim, as fast
//! as a plain `bash -c`. Nothing waits on stdin
//! (it is /dev/null, or a PTY), timeouts kill the whole tree, output is
//! captured within a fixed memory budget, and the runtime's close kills
//! everything that is still running.

pub mod config;
pub mod guard;
pub mod ids;
pub mod output;
pub mod process;
pub mod tool;

use once_cell::sync::Lazy;
use parking_lot::Mutex;
use regex::Regex;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

pub use config::{HostEnvs, TerminalConfig};
use hermes_core::error::{Error, ErrorKind, Result};
use hermes_core::{Lifecycle, ToolServices};
use hermes_exec::{Environment, Input};
use ids::{task_key, unique_suffix};
pub use tool::install;

/// The terminal toolset's state, one per runtime.
pub struct Terminal {
    services: Arc<dyn ToolServices>,
    pub cfg: TerminalConfig,
    pub backend: Arc<dyn Environment>,
    base_env: Vec<(String, String)>,
    default_cwd: PathBuf,
    state_dir: PathBuf,
    /// Remote backends: where commands write their captured state there.
    capture_dir: Option<PathBuf>,
    tasks: Mutex<HashMap<String, TaskState>>,
    next_task: AtomicU64,
    pub procs: process::Registry,
    /// The runtime's engine: background readers run on it as tasks.
    engine: Option<hermes_core::engine::Engine>,
    live: Mutex<HashMap<String, LiveFg>>,
    closed: AtomicBool,
    /// Told of every call, so the file tools' read guards reset.
    activity: once_cell::sync::OnceCell<Arc<crate::activity::Activity>>,
}

/// Per-task state.
#[derive(Clone, Debug)]
pub struct TaskState {
    pub cwd: PathBuf,
    /// Exported variables captured after the last state-changing foreground
    /// command (`None`: the runtime's base environment).
    pub exported: Option<Arc<Vec<(String, String)>>>,
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

/// Single-quote for bash.
pub fn sq(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

fn expand_home(p: &str) -> PathBuf {
    if let Some(rest) = p.strip_prefix("~")
        && let Ok(home) = std::env::var("HOME")
    {
        return PathBuf::from(format!("{home}{rest}"));
    }
    PathBuf::from(p)
}

/// Resolve `terminal.backend: "auto"` in `cfg`: the sandbox where it works
/// (bubblewrap runs, and the working root is neither `/` nor a folder that
/// holds the runtime's own helpers, such as `/tmp`), else local. Returns
/// why the sandbox was not chosen, when it was not (the runtime warns once,
/// `doctor` shows it).
pub fn resolve_auto_backend(cfg: &mut TerminalConfig) -> Option<String> {
    if cfg.backend != "auto" {
        return None;
    }
    let root = default_cwd(cfg);
    let why = if root == Path::new("/") {
        Some("the working directory is / (set terminal.cwd to the workspace)".to_string())
    } else {
        hermes_exec::sandbox::check_helpers_out_of_reach(&hermes_exec::sandbox::SandboxConfig {
            root,
            rw_binds: cfg.sandbox_rw_binds.iter().map(PathBuf::from).collect(),
            ..Default::default()
        })
        .err()
        .or_else(|| hermes_exec::sandbox::usable().err())
    };
    cfg.backend = if why.is_none() { "sandbox" } else { "local" }.into();
    why
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

/// How much of the host's environment commands inherit (`env_inherit`).
pub fn inherit_mode(cfg: &TerminalConfig) -> hermes_exec::inherit::Inherit {
    match cfg.env_inherit.as_str() {
        "all" => hermes_exec::inherit::Inherit::All,
        _ => hermes_exec::inherit::Inherit::Core,
    }
}

/// The environment a command starts with: this process's allow-listed
/// variables (`hermes_exec::inherit`) on local backends, the remote login's
/// (`remote`, secret-looking names left out) on remote ones; then the
/// non-interactive defaults and the configured variables.
fn base_env(cfg: &TerminalConfig, remote: Option<Vec<(String, String)>>) -> Vec<(String, String)> {
    let mut m: BTreeMap<String, String> = BTreeMap::new();
    let secret = |n: &str| hermes_approval::redact::is_secret_name(n);
    let own: Vec<(String, String)> = match remote {
        Some(r) => r
            .into_iter()
            // A brokered secret's variable holds its placeholder (set on
            // the container by the proxy), never the value: kept.
            .filter(|(k, _)| {
                !secret(k)
                    || cfg.env_passthrough.iter().any(|p| p == k)
                    || cfg.secrets.contains_key(k)
            })
            .collect(),
        None => hermes_exec::inherit::host_env(inherit_mode(cfg), &cfg.env_passthrough, &secret),
    };
    for (k, v) in own {
        m.insert(k, v);
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

/// Where the swarm backend placed a task's container, and a node lost:
/// `swarm.placed` and `swarm.lost` events.
struct SwarmServices(Arc<dyn ToolServices>);

impl hermes_exec::swarm::SwarmEvents for SwarmServices {
    fn placed(&self, task: &str, at: &hermes_exec::container::Placed, node_name: &str) {
        self.0.emit_event(serde_json::json!({
            "type": "swarm.placed",
            "task_id": task,
            "service": at.service,
            "node": node_name,
            "node_id": at.node,
            "container": at.id,
        }));
    }

    fn lost(&self, at: &hermes_exec::container::Placed, why: &str) {
        self.0.emit_event(serde_json::json!({
            "type": "swarm.lost",
            "service": at.service,
            "node_id": at.node,
            "container": at.id,
            "message": why,
        }));
    }
}

/// What the network proxy tells and asks the host: `network.refused`
/// events, and with `ask` on, the approval handler (one prompt per host).
struct NetServices(Arc<dyn ToolServices>);

impl hermes_exec::netproxy::NetEvents for NetServices {
    fn refused(&self, r: &hermes_exec::netproxy::Refusal) {
        self.0.emit_event(serde_json::json!({
            "type": "network.refused",
            "host": r.host,
            "port": r.port,
            "rule": r.rule,
            "message": r.message,
        }));
    }

    fn ask(&self, host: &str, port: u16) -> bool {
        use hermes_approval::{CheckResult, Reason, Verdict};
        let subject = format!("network: connect to {host}:{port} from the sandbox");
        let check = CheckResult {
            verdict: Verdict::Ask,
            reasons: vec![Reason {
                rule: "network-host".into(),
                description: format!(
                    "the sandbox connects to {host}, which terminal.network.allow does not list (approved: reachable for this session)"
                ),
                tier: Verdict::Ask,
                command: subject.clone(),
                pack: "builtin".into(),
                sandbox: None,
                argv: Vec::new(),
            }],
            commands: Vec::new(),
            normalized: Vec::new(),
            contained: Vec::new(),
        };
        matches!(
            self.0.approve_check(
                check,
                &subject,
                &hermes_core::dispatch::CallContext::default(),
                &hermes_core::CancelToken::new(),
            ),
            hermes_core::CommandDecision::Allow
        )
    }
}

/// The allow-list proxy of a sandbox (`None`: the network is on or off),
/// with the configured secrets loaded.
pub fn net_proxy(
    cfg: &TerminalConfig,
    services: Option<Arc<dyn ToolServices>>,
) -> Result<Option<Arc<hermes_exec::netproxy::NetProxy>>> {
    let Some(policy) = cfg.network.allow_list() else {
        if !cfg.secrets.is_empty() {
            return Err(Error::invalid(
                "runtime config: terminal.secrets needs terminal.network to be an allow-list ({\"allow\": [...]}): only the proxy puts a secret in place",
            ));
        }
        return Ok(None);
    };
    start_proxy(policy, cfg, services).map(Some)
}

/// Start an allow-list proxy with `policy`'s rules and the configured
/// secrets.
fn start_proxy(
    policy: &config::NetworkPolicySection,
    cfg: &TerminalConfig,
    services: Option<Arc<dyn ToolServices>>,
) -> Result<Arc<hermes_exec::netproxy::NetProxy>> {
    let rules = policy
        .rules()
        .map_err(|e| Error::invalid(format!("runtime config: {e}")))?;
    let mut secrets = Vec::new();
    for (name, s) in &cfg.secrets {
        secrets.push(
            s.load(name)
                .map_err(|e| Error::invalid(format!("runtime config: {e}")))?,
        );
    }
    let events =
        services.map(|s| Arc::new(NetServices(s)) as Arc<dyn hermes_exec::netproxy::NetEvents>);
    hermes_exec::netproxy::NetProxy::start(rules, secrets, events)
        .map_err(|e| internal_err(format!("terminal.network: cannot start the proxy: {e}")))
}

/// The execution environment named in the config.
fn environment(
    cfg: &TerminalConfig,
    services: Option<Arc<dyn ToolServices>>,
) -> Result<Arc<dyn Environment>> {
    if (cfg.network.allow_list().is_some() || !cfg.secrets.is_empty())
        && !matches!(
            cfg.backend.as_str(),
            "auto" | "sandbox" | "docker" | "podman"
        )
    {
        return Err(Error::invalid(format!(
            "runtime config: terminal.network as an allow-list and terminal.secrets work on the sandbox, docker and podman backends only, not '{}'",
            cfg.backend
        )));
    }
    match cfg.backend.as_str() {
        "auto" => {
            let mut resolved = cfg.clone();
            let why = resolve_auto_backend(&mut resolved);
            if resolved.backend != "sandbox" && cfg.network.allow_list().is_some() {
                // Never "on" in place of a list: fail closed.
                return Err(Error::invalid(format!(
                    "runtime config: terminal.network is an allow-list, which needs the sandbox, and the sandbox is not usable here: {}",
                    why.unwrap_or_default()
                )));
            }
            environment(&resolved, services)
        }
        "local" => {
            if cfg.protect_host {
                hermes_exec::supervisor::protect_host().map_err(|e| {
                    Error::invalid(format!(
                        "terminal.protect_host: cannot make this process non-dumpable: {e}"
                    ))
                })?;
            }
            Ok(Arc::new(hermes_exec::local::Local))
        }
        "sandbox" => hermes_exec::sandbox::Sandbox::new(&hermes_exec::sandbox::SandboxConfig {
            root: default_cwd(cfg),
            network: cfg.network.host_network(),
            proxy: net_proxy(cfg, services)?,
            ro_binds: cfg.sandbox_ro_binds.iter().map(PathBuf::from).collect(),
            rw_binds: cfg.sandbox_rw_binds.iter().map(PathBuf::from).collect(),
            limits: cfg.sandbox_limits.to_exec(),
        })
        .map(|s| Arc::new(s) as Arc<dyn Environment>)
        .map_err(Error::invalid),
        "ssh" => {
            let section = cfg.ssh.as_ref().ok_or_else(|| {
                Error::invalid(
                    "runtime config: terminal.backend 'ssh' needs a terminal.ssh section",
                )
            })?;
            hermes_exec::ssh::SshBackend::new(section.to_exec())
                .map(|s| Arc::new(s) as Arc<dyn Environment>)
                .map_err(|e| Error::invalid(format!("runtime config: {e}")))
        }
        "docker" | "podman" => {
            let section = cfg.docker.as_ref().ok_or_else(|| {
                Error::invalid(
                    "runtime config: terminal.backend 'docker'/'podman' needs a terminal.docker section with at least \"image\"",
                )
            })?;
            let mut c = section
                .to_exec(&cfg.backend, cfg.cwd.as_deref())
                .map_err(|e| Error::invalid(format!("runtime config: {e}")))?;
            // An allow-list applies to containers too ("on"/"off" are the
            // sandbox's; a container's own switch is terminal.docker.network).
            c.proxy = net_proxy(cfg, services)?;
            if let Some(binds) = &cfg.code_runs {
                c.share_runs = true;
                c.ro_binds = binds.clone();
            }
            hermes_exec::container::ContainerBackend::new(c)
                .map(|s| Arc::new(s) as Arc<dyn Environment>)
                .map_err(|e| Error::invalid(format!("runtime config: {e}")))
        }
        "swarm" => {
            let docker = cfg.docker.as_ref().ok_or_else(|| {
                Error::invalid(
                    "runtime config: terminal.backend 'swarm' needs a terminal.docker section with at least \"image\" (and \"host\": a swarm manager)",
                )
            })?;
            let mut c = cfg
                .swarm
                .clone()
                .unwrap_or_default()
                .to_exec(docker, cfg.cwd.as_deref())
                .map_err(|e| Error::invalid(format!("runtime config: {e}")))?;
            c.events = services
                .map(|s| Arc::new(SwarmServices(s)) as Arc<dyn hermes_exec::swarm::SwarmEvents>);
            hermes_exec::swarm::backend(c)
                .map(|s| Arc::new(s) as Arc<dyn Environment>)
                .map_err(|e| Error::invalid(format!("runtime config: {e}")))
        }
        "apptainer" | "singularity" => {
            let section = cfg.apptainer.as_ref().ok_or_else(|| {
                Error::invalid(
                    "runtime config: terminal.backend 'apptainer'/'singularity' needs a terminal.apptainer section with at least \"image\"",
                )
            })?;
            let mut c = section.to_exec(cfg.cwd.as_deref());
            if let Some(binds) = &cfg.code_runs {
                c.share_runs = true;
                c.ro_binds = binds.clone();
            }
            hermes_exec::apptainer::ApptainerBackend::new(c)
                .map(|s| Arc::new(s) as Arc<dyn Environment>)
                .map_err(|e| Error::invalid(format!("runtime config: {e}")))
        }
        "daytona" => {
            let section = cfg.daytona.clone().unwrap_or_default();
            hermes_exec::daytona::backend(section.to_exec())
                .map(|(env, _)| {
                    Arc::new(hermes_exec::host::HostBackend(env)) as Arc<dyn Environment>
                })
                .map_err(|e| Error::invalid(format!("runtime config: {e}")))
        }
        #[cfg(feature = "modal")]
        "modal" => {
            let section = cfg.modal.clone().unwrap_or_default();
            hermes_exec::modal::backend(section.to_exec())
                .map(|(env, _)| {
                    Arc::new(hermes_exec::host::HostBackend(env)) as Arc<dyn Environment>
                })
                .map_err(|e| Error::invalid(format!("runtime config: {e}")))
        }
        #[cfg(not(feature = "modal"))]
        "modal" => Err(Error::invalid(format!(
            "runtime config: {}",
            config::MODAL_MISSING
        ))),
        other => match cfg.host_env(other) {
            Some(env) => Ok(Arc::new(hermes_exec::host::HostBackend(env.clone()))),
            None => Err(Error::invalid(format!(
                "runtime config: terminal.backend: unknown backend '{other}' (auto, local, sandbox, ssh, docker, podman, swarm, apptainer, singularity, modal, daytona, or an environment the host registered)"
            ))),
        },
    }
}

impl Terminal {
    /// The terminal's state for runtime `core_id`: its environment (local or
    /// sandbox), base environment, default directory and private state dir.
    pub fn new(
        cfg: TerminalConfig,
        services: Arc<dyn ToolServices>,
        core_id: u64,
        engine: Option<hermes_core::engine::Engine>,
    ) -> Result<Arc<Terminal>> {
        let backend = environment(&cfg, Some(services.clone()))?;
        let (remote_env, default_cwd, capture_dir) = match backend.remote() {
            Some(r) => {
                let unreachable = |e: std::io::Error| {
                    Error::new(
                        ErrorKind::Internal,
                        format!("terminal.backend '{}': {e}", backend.name()),
                    )
                };
                let env = r.base_env().map_err(unreachable)?;
                let home = r.home().map_err(unreachable)?;
                let cwd = match cfg.cwd.as_deref() {
                    Some(c) if c == "~" || c.starts_with("~/") => {
                        PathBuf::from(format!("{home}{}", &c[1..]))
                    }
                    Some(c) => PathBuf::from(c),
                    None => PathBuf::from(&home),
                };
                if !cwd.is_absolute() || !r.is_dir("default", &cwd) {
                    return Err(Error::invalid(format!(
                        "runtime config: terminal.cwd: '{}' is not a directory {}",
                        cwd.display(),
                        backend.location()
                    )));
                }
                (Some(env), cwd, Some(r.state_dir().map_err(unreachable)?))
            }
            None => (None, default_cwd(&cfg), None),
        };
        if capture_dir.is_none() && !default_cwd.is_dir() {
            return Err(Error::invalid(format!(
                "runtime config: terminal.cwd: '{}' is not a directory",
                default_cwd.display()
            )));
        }
        sweep_stale_state_dirs();
        let state_dir = std::env::temp_dir().join(format!(
            "hermes-tools-{}-{}-{}",
            std::process::id(),
            core_id,
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
            services,
            base_env: base_env(&cfg, remote_env),
            capture_dir,
            procs: process::Registry::new(&cfg),
            engine,
            cfg,
            backend,
            default_cwd,
            state_dir,
            tasks: Mutex::new(HashMap::new()),
            next_task: AtomicU64::new(1),
            live: Mutex::new(HashMap::new()),
            closed: AtomicBool::new(false),
            activity: once_cell::sync::OnceCell::new(),
        });
        Ok(term)
    }
}

/// What a command needs to start: its script, environment and directory.
pub struct Prepared {
    pub script: String,
    pub env: Vec<(String, String)>,
    pub cwd: PathBuf,
    /// Where the wrapper writes the captured state (foreground commands
    /// that may change it).
    pub capture: Option<PathBuf>,
    pub task_index: u64,
    pub workdir: Option<PathBuf>,
    /// The one folder of this machine a sandboxed command may write
    /// besides its workspace: this call's own capture folder (never the
    /// runtime's state folder, which would let one task's command read and
    /// rewrite another task's captured environment).
    pub rw: Vec<PathBuf>,
}

impl Terminal {
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Share the runtime's record of calls (set once, by the runtime).
    pub fn set_activity(&self, activity: Arc<crate::activity::Activity>) {
        let _ = self.activity.set(activity);
    }

    pub(crate) fn note_activity(&self, task_id: &str) {
        if let Some(a) = self.activity.get() {
            a.bump(task_id);
        }
    }

    /// A copy of the task's state (created on first use).
    pub fn task(&self, task_id: &str) -> TaskState {
        let mut tasks = self.tasks.lock();
        tasks
            .entry(task_key(task_id).to_string())
            .or_insert_with(|| TaskState {
                cwd: self.default_cwd.clone(),
                exported: None,
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
        if !self.dir_exists(task_id, &p) {
            return Err(Error::invalid(format!("cwd is not a directory: '{cwd}'")));
        }
        self.task(task_id);
        if let Some(t) = self.tasks.lock().get_mut(task_key(task_id)) {
            t.cwd = p;
        }
        Ok(())
    }

    /// Give a task its own network setting in place of `terminal.network`:
    /// `"off"`, `"on"` or an allow-list object (its own proxy, with the
    /// configured secrets), as `terminal.network` takes; `null`: back to
    /// `terminal.network`. Applies from the task's next command (on docker
    /// and podman, to the task's container, which must not run yet).
    /// Returns whether some network now reaches out (for the approval
    /// engine), `None` for `null`.
    pub fn set_task_network(&self, task_id: &str, net: &Value) -> Result<Option<bool>> {
        use serde::Deserialize as _;
        let setting = match net {
            Value::Null => None,
            v => Some(config::NetworkSetting::deserialize(v).map_err(|e| {
                Error::invalid(format!(
                    "network must be \"off\", \"on\", an allow-list object ({{\"allow\": [...]}}) or null: {e}"
                ))
            })?),
        };
        let any = setting.as_ref().map(config::NetworkSetting::any);
        let exec = match &setting {
            None => None,
            Some(config::NetworkSetting::Off) => Some(hermes_exec::TaskNetwork::Off),
            Some(config::NetworkSetting::On) => Some(hermes_exec::TaskNetwork::On),
            Some(config::NetworkSetting::AllowList(p)) => Some(hermes_exec::TaskNetwork::Proxy(
                start_proxy(p, &self.cfg, Some(self.services.clone()))?,
            )),
        };
        self.backend
            .set_task_network(task_key(task_id), exec)
            .map_err(|e| {
                let kind = match e.kind() {
                    std::io::ErrorKind::Unsupported => ErrorKind::Unsupported,
                    std::io::ErrorKind::ResourceBusy => ErrorKind::InvalidArgument,
                    _ => ErrorKind::Internal,
                };
                Error::new(kind, format!("terminal: {e}"))
            })?;
        Ok(any)
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

    /// Build what runs `command` in `task_id`: the environment (the task's
    /// exported variables, then host overrides), the directory (`workdir`,
    /// else the task's), and the script. A foreground command that may
    /// change state (`needs_capture`) is wrapped so it writes its final
    /// directory and exported variables to a capture file; other commands
    /// run verbatim, exactly like `bash -c command`.
    pub fn prepare(
        &self,
        task_id: &str,
        command: &str,
        workdir: Option<&Path>,
        pty: bool,
        foreground: bool,
    ) -> Prepared {
        let t = self.task(task_id);
        let mut env: Vec<(String, String)> = match &t.exported {
            Some(e) => e.as_ref().clone(),
            None => self.base_env.clone(),
        };
        let term = if pty { "xterm-256color" } else { "dumb" };
        let mut set = |k: &str, v: Option<&str>| {
            env.retain(|(n, _)| n != k);
            if let Some(v) = v {
                env.push((k.to_string(), v.to_string()));
            }
        };
        set("TERM", Some(term));
        for (k, v) in &t.env {
            set(k, v.as_deref());
        }
        let cwd = match workdir {
            Some(w) => w.to_path_buf(),
            None if self.capture_dir.is_some() || t.cwd.is_dir() => t.cwd.clone(),
            None => self.default_cwd.clone(),
        };
        if let Some((_, pwd)) = env.iter_mut().find(|(k, _)| k == "PWD") {
            *pwd = cwd.display().to_string();
        }
        let mut rw = Vec::new();
        let (script, capture) = if foreground && needs_capture(command) {
            let name = format!("task-{}.{}.new", t.index, unique_suffix());
            let p = match &self.capture_dir {
                Some(far) => far.join(name),
                None => {
                    // A folder of this call's own (0700), the only part of
                    // the state folder its command can reach.
                    use std::os::unix::fs::DirBuilderExt;
                    let d = self.state_dir.join(format!("c-{}", unique_suffix()));
                    let _ = std::fs::DirBuilder::new().mode(0o700).create(&d);
                    rw.push(d.clone());
                    d.join(name)
                }
            };
            let s = format!(
                "builtin eval -- {}
__ht_ec=$?
builtin umask 077
{{ builtin printf '# %s\\n' \"$PWD\"; builtin export -p; }} > {} 2>/dev/null
builtin exit $__ht_ec
",
                sq(command),
                sq(&p.display().to_string())
            );
            (s, Some(p))
        } else {
            (command.to_string(), None)
        };
        Prepared {
            script,
            env,
            cwd,
            capture,
            task_index: t.index,
            workdir: workdir.map(Path::to_path_buf),
            rw,
        }
    }

    /// After a foreground command: adopt the directory and exported
    /// variables it captured (if it got that far) as the task's state. A
    /// per-call `workdir` does not stick unless the command moved away from it.
    pub fn adopt_capture(&self, task_id: &str, prepared: &Prepared) {
        let Some(path) = &prepared.capture else {
            return;
        };
        let text = match self.backend.remote() {
            Some(r) => r.take_file(task_key(task_id), path, CAPTURE_MAX),
            None => {
                let text = read_capture(path);
                let _ = std::fs::remove_file(path);
                for d in &prepared.rw {
                    let _ = std::fs::remove_dir_all(d);
                }
                text
            }
        };
        let Some(text) = text else { return };
        let text = String::from_utf8_lossy(&text);
        let Some((first, rest)) = text.split_once('\n') else {
            return;
        };
        let cwd = first.strip_prefix("# ").map(PathBuf::from);
        let mut exported = parse_export_p(rest);
        exported.retain(|(k, _)| k != "_" && k != "SHLVL" && k != hermes_exec::tree::MARK_VAR);
        let mut tasks = self.tasks.lock();
        if let Some(t) = tasks.get_mut(task_key(task_id))
            && t.index == prepared.task_index
        {
            t.exported = Some(Arc::new(exported));
            if let Some(c) = cwd.filter(|c| c.is_absolute()) {
                let remote = self.capture_dir.is_some();
                let stayed_in_workdir = prepared
                    .workdir
                    .as_ref()
                    .is_some_and(|w| w == &c || (!remote && same_dir(w, &c)));
                if !stayed_in_workdir {
                    t.cwd = c;
                }
            }
        }
    }

    pub fn state_dir(&self) -> &Path {
        &self.state_dir
    }

    /// Whether `p` is a directory where `task_id`'s commands run.
    pub fn dir_exists(&self, task_id: &str, p: &Path) -> bool {
        match self.backend.remote() {
            Some(r) => r.is_dir(task_key(task_id), p),
            None => p.is_dir(),
        }
    }

    /// Drop a capture file a command did not get to adopt.
    pub(crate) fn discard_capture(&self, prepared: &Prepared) {
        if let Some(p) = &prepared.capture {
            if self.capture_dir.is_some() {
                // left for the backend's cleanup of its folder
            } else {
                let _ = std::fs::remove_file(p);
            }
        }
        for d in &prepared.rw {
            let _ = std::fs::remove_dir_all(d);
        }
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
        // A command that started while close ran: close set `closed` before
        // it looked at `live`, so either it saw this entry or we see `closed`.
        if self.closed.load(Ordering::Acquire) {
            self.backend.kill(pid, libc::SIGKILL);
        }
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
    pub fn emit(&self, event: Value) {
        if !self.closed.load(Ordering::Acquire) {
            self.services.emit_event(event);
        }
    }

    pub fn has_event_handler(&self) -> bool {
        self.services.has_event_handler()
    }

    /// Decide whether `command` may run (the runtime's approval policy).
    pub(crate) fn approve(
        &self,
        command: &str,
        ctx: &hermes_core::dispatch::CallContext,
        cancel: &hermes_core::CancelToken,
    ) -> hermes_core::CommandDecision {
        self.services.approve_command(command, ctx, cancel)
    }

    /// The approval of a command asked to run outside the sandbox.
    pub(crate) fn approve_escalation(
        &self,
        command: &str,
        why: &str,
        ctx: &hermes_core::dispatch::CallContext,
        cancel: &hermes_core::CancelToken,
    ) -> hermes_core::CommandDecision {
        self.services.approve_escalation(command, why, ctx, cancel)
    }

    pub fn grace(&self) -> Duration {
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
            hermes_exec::terminate_tree(&*self.backend, pid, self.grace());
        }
        self.procs.kill_task(self, key);
        self.tasks.lock().remove(key);
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
        while std::time::Instant::now() < until && fg.iter().any(|&p| hermes_exec::tree_alive(p)) {
            std::thread::sleep(Duration::from_millis(10));
        }
        for &pid in &fg {
            self.backend.kill(pid, libc::SIGKILL);
        }
        self.procs.join_all(Duration::from_secs(5));
        self.backend.cleanup();
        let _ = std::fs::remove_dir_all(&self.state_dir);
    }
}

impl Lifecycle for Terminal {
    fn cleanup_task(&self, task_id: &str) {
        Terminal::cleanup_task(self, task_id);
    }
    fn shutdown(&self) {
        Terminal::shutdown(self);
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.state_dir);
    }
}

/// Largest state capture read back (directory + `export -p`).
const CAPTURE_MAX: u64 = 4 * 1024 * 1024;

/// Read the state a command captured. The file lies in a directory the
/// command can write (a sandboxed one too), so it is untrusted: a symlink
/// (to `/dev/zero`, a FIFO, a host secret) is refused without following it,
/// a non-regular file is refused without blocking on it, and at most
/// [`CAPTURE_MAX`] bytes are read.
fn read_capture(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    if !meta.file_type().is_file() {
        tracing::warn!(path = %path.display(), "terminal: state capture is not a regular file; ignored");
        return None;
    }
    let mut out = Vec::new();
    file.take(CAPTURE_MAX).read_to_end(&mut out).ok()?;
    Some(out)
}

fn internal_err(msg: String) -> Error {
    Error::new(ErrorKind::Internal, msg)
}

fn same_dir(a: &Path, b: &Path) -> bool {
    a == b
        || std::fs::canonicalize(a)
            .ok()
            .zip(std::fs::canonicalize(b).ok())
            .is_some_and(|(x, y)| x == y)
}

/// Could `command` change the directory or the exported variables? A cheap,
/// conservative text test: anything that looks like an assignment or a
/// state-changing builtin is captured.
pub fn needs_capture(command: &str) -> bool {
    const WORDS: &[&str] = &[
        "=", "cd", "export", "unset", "source", "declare", "typeset", "eval", "exec", "read",
        "set", "pushd", "popd", "shopt", "alias", "local", "mapfile", "getopts", "shift", "let",
        "printf", "function", "()", "activate", "enable", "hash",
    ];
    static DOT: Lazy<Regex> = Lazy::new(|| Regex::new(r"(^|[;&|(\s])\.\s").expect("dot regex"));
    WORDS.iter().any(|w| command.contains(w)) || DOT.is_match(command)
}

/// Parse `export -p` output (`declare -x NAME="value"` with double-quote
/// escapes, or `NAME=$'...'` ANSI-C quoting; `declare -x NAME` has no value).
pub fn parse_export_p(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("declare -x ") {
        rest = &rest[i + "declare -x ".len()..];
        let name_end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let name = &rest[..name_end];
        rest = &rest[name_end..];
        let Some(after) = rest.strip_prefix('=') else {
            continue;
        };
        let (value, used) = if let Some(body) = after.strip_prefix('"') {
            unquote_double(body)
        } else if let Some(body) = after.strip_prefix("$'") {
            unquote_ansi_c(body)
        } else {
            let end = after.find('\n').unwrap_or(after.len());
            (after[..end].to_string(), end)
        };
        rest = &after[(used + 1).min(after.len())..];
        if !name.is_empty() {
            out.push((name.to_string(), value));
        }
    }
    out
}

/// Body after the opening `"`: returns (value, bytes used including the closing quote - 1).
fn unquote_double(body: &str) -> (String, usize) {
    let mut v = String::new();
    let mut it = body.char_indices();
    while let Some((i, c)) = it.next() {
        match c {
            '"' => return (v, i + 1),
            '\\' => match it.next() {
                Some((_, n @ ('"' | '\\' | '$' | '`'))) => v.push(n),
                Some((_, '\n')) => {}
                Some((_, n)) => {
                    v.push('\\');
                    v.push(n);
                }
                None => v.push('\\'),
            },
            c => v.push(c),
        }
    }
    (v, body.len())
}

/// Body after `$'`: bash ANSI-C escapes.
fn unquote_ansi_c(body: &str) -> (String, usize) {
    let b = body.as_bytes();
    let mut v: Vec<u8> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\'' => return (String::from_utf8_lossy(&v).into_owned(), i + 2),
            b'\\' if i + 1 < b.len() => {
                i += 1;
                let c = b[i];
                match c {
                    b'n' => v.push(b'\n'),
                    b't' => v.push(b'\t'),
                    b'r' => v.push(b'\r'),
                    b'a' => v.push(7),
                    b'b' => v.push(8),
                    b'e' | b'E' => v.push(0x1b),
                    b'f' => v.push(12),
                    b'v' => v.push(11),
                    b'0'..=b'7' => {
                        let mut n: u32 = 0;
                        let mut k = 0;
                        while k < 3 && i < b.len() && (b'0'..=b'7').contains(&b[i]) {
                            n = n * 8 + u32::from(b[i] - b'0');
                            i += 1;
                            k += 1;
                        }
                        i -= 1;
                        v.push(n as u8);
                    }
                    b'x' => {
                        let mut n: u32 = 0;
                        let mut k = 0;
                        while k < 2 && i + 1 < b.len() && (b[i + 1] as char).is_ascii_hexdigit() {
                            i += 1;
                            n = n * 16 + (b[i] as char).to_digit(16).unwrap_or(0);
                            k += 1;
                        }
                        v.push(n as u8);
                    }
                    other => v.push(other),
                }
            }
            c => v.push(c),
        }
        i += 1;
    }
    (String::from_utf8_lossy(&v).into_owned(), b.len())
}

/// Remove state directories left by processes that died without closing
/// their runtime (`hermes-tools-<pid>-...` whose pid is gone, owned by us).
fn sweep_stale_state_dirs() {
    use std::os::unix::fs::MetadataExt;
    let Ok(dir) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    let me = hermes_exec::sys::geteuid();
    for e in dir.flatten() {
        let name = e.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix("hermes-tools-")) else {
            continue;
        };
        // Exactly a state folder's name (`<pid>-<core>-<suffix>`, see
        // `Terminal::new`): never another folder of the same prefix (the
        // MCP server's token folder is named by a uid, and /proc/<uid> is
        // no process).
        let parts: Vec<&str> = rest.split('-').collect();
        let [pid, core, suffix] = parts[..] else {
            continue;
        };
        if core.is_empty()
            || suffix.is_empty()
            || !core.bytes().all(|b| b.is_ascii_digit())
            || !suffix.bytes().all(|b| b.is_ascii_alphanumeric())
        {
            continue;
        }
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        if pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        if e.metadata().is_ok_and(|m| m.is_dir() && m.uid() == me) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

impl process::Owner for Terminal {
    fn backend(&self) -> &dyn Environment {
        &*self.backend
    }
    fn engine(&self) -> Option<&hermes_core::engine::Engine> {
        self.engine.as_ref()
    }
    fn cfg(&self) -> &TerminalConfig {
        &self.cfg
    }
    fn procs(&self) -> &process::Registry {
        &self.procs
    }
    fn grace(&self) -> Duration {
        Terminal::grace(self)
    }
    fn has_event_handler(&self) -> bool {
        Terminal::has_event_handler(self)
    }
    fn emit(&self, event: Value) {
        Terminal::emit(self, event)
    }
}

#[cfg(test)]
mod tests {

    /// The capture file lies where commands write: a symlink or FIFO put in
    /// its place must not make the host read a device, a secret or block.
    #[test]
    fn capture_read_refuses_symlinks_fifos_and_caps_size() {
        let dir = std::env::temp_dir().join(format!("ht-cap-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let link = dir.join("cap.link");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        assert!(read_capture(&link).is_none());
        let fifo = dir.join("cap.fifo");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        let t = std::time::Instant::now();
        assert!(read_capture(&fifo).is_none());
        assert!(
            t.elapsed() < std::time::Duration::from_secs(5),
            "never blocks"
        );
        let big = dir.join("cap.big");
        std::fs::write(&big, vec![b'x'; (CAPTURE_MAX + 10) as usize]).unwrap();
        assert_eq!(read_capture(&big).unwrap().len() as u64, CAPTURE_MAX);
        let ok = dir.join("cap.ok");
        std::fs::write(&ok, b"# /tmp\n").unwrap();
        assert_eq!(read_capture(&ok).unwrap(), b"# /tmp\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }
    use super::*;

    #[test]
    fn export_p_round_trip() {
        let text = "declare -x E\ndeclare -x PWD=\"/w\"\ndeclare -x W=$'\\001ctl'\ndeclare -x X=$'a\\nb'\ndeclare -x Y=\"q\\\"uo\\$te\\\\\\`b\\\\\\\\s\"\ndeclare -x Z=\"multi\nline\"\n";
        let v = parse_export_p(text);
        let get = |k: &str| v.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("E"), None);
        assert_eq!(get("PWD"), Some("/w"));
        assert_eq!(get("W"), Some("\u{1}ctl"));
        assert_eq!(get("X"), Some("a\nb"));
        assert_eq!(get("Y"), Some("q\"uo$te\\`b\\\\s"));
        assert_eq!(get("Z"), Some("multi\nline"));
    }

    #[test]
    fn secret_looking_names_are_not_passed_to_commands() {
        for k in [
            "OPENAI_API_KEY",
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "DB_PASSWORD",
            "GH_TOKEN",
        ] {
            assert!(hermes_approval::redact::is_secret_name(k), "{k}");
        }
        for k in ["PATH", "HOME", "LANG", "PWD"] {
            assert!(!hermes_approval::redact::is_secret_name(k), "{k}");
        }
    }

    #[test]
    fn capture_detection() {
        assert!(!needs_capture("echo hi"));
        assert!(!needs_capture("ls -la /tmp | grep x"));
        assert!(!needs_capture("cat file.txt"));
        assert!(needs_capture(". ./env.sh"));
        assert!(needs_capture("cd /tmp"));
        assert!(needs_capture("export A=1"));
        assert!(needs_capture("source venv/bin/activate"));
        assert!(needs_capture("PATH=/x:$PATH"));
    }
}
