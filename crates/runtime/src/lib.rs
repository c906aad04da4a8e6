//! The hermes-tools runtime and its Rust API: parses the config, assembles a
//! [`Core`] with the built-in providers it names, owns the approval broker
//! and the event sink (the services tools may use), and closes everything in
//! a fixed order. The C ABI, the CLI and the MCP server are front ends over
//! this API.

// `unsafe` lives only at the boundary (crates/ffi, crates/exec/src/sys.rs).
#![deny(unsafe_code)]

pub mod approvals;
pub mod client;
pub mod config;
#[cfg(not(feature = "mcp-client"))]
mod mcp_off;
#[cfg(feature = "mcp-client")]
use hermes_mcp_client::Mcp;
#[cfg(not(feature = "mcp-client"))]
use mcp_off::Mcp;
pub mod progress;

use parking_lot::{Mutex, RwLock};
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hermes_builtins::activity::Activity;
use hermes_builtins::file::FileCtx;
use hermes_builtins::memory::Memory;
use hermes_builtins::skills::SkillsCtx;
use hermes_builtins::terminal::Terminal;
use hermes_builtins::todo::Todos;
use hermes_core::availability::Check;
use hermes_core::dispatch::{self, CallContext, OnDone};
use hermes_core::error::{Error, Result};
use hermes_core::hooks::{Hook, HookEvent};
use hermes_core::registry::{self, ToolsetDef};
use hermes_core::threads::CallbackThread;
use hermes_core::{CancelToken, CommandDecision, Core, Lifecycle, Tool, ToolServices};

pub use approvals::ApprovalSink;
pub use config::Config;

/// Where library events go (process notifications, watch matches, output).
pub trait EventSink: Send + Sync {
    /// One event as JSON text. Runs on the callbacks thread.
    fn event(&self, json: &str);
}

/// A front end's view of library events, beside the host's [`EventSink`]:
/// the MCP server forwards `tool.progress` through one. Called on the
/// emitting thread with the event before it is queued for the host, so it
/// must not block (hand the event to a channel).
pub trait EventTap: Send + Sync {
    fn event(&self, event: &Value);
}

/// The services tools may use: command approval and events. Owned apart
/// from the core, so tools holding them never keep the registry alive.
pub struct Services {
    pub approval_engine: Arc<hermes_approval::Engine>,
    /// The engine that judges a command asked to run outside the sandbox:
    /// the configured rules and posture as on this machine (`deny-list`
    /// when none is named), without the sandbox's facts.
    pub escalation_engine: Arc<hermes_approval::Engine>,
    pub policy: Arc<hermes_approval::Policy>,
    pub approvals: approvals::Approvals,
    pub events: RwLock<Option<Arc<dyn EventSink>>>,
    /// Taps by id ([`Runtime::add_event_tap`]).
    taps: RwLock<Vec<(u64, Arc<dyn EventTap>)>>,
    pub(crate) callbacks: Arc<CallbackThread>,
    gate: Arc<EventGate>,
}

/// The bound on events queued for the host's handler: beyond
/// `limits.max_queued_events` new events are dropped and counted, and the
/// next event delivered is preceded by `{"type":"events_dropped","count":n}`.
/// After close, queued events are dropped unseen.
struct EventGate {
    max: usize,
    queued: AtomicUsize,
    dropped: AtomicU64,
    closed: AtomicBool,
}

impl Services {
    /// Drop queued events from now on (close).
    fn close_events(&self) {
        self.gate.closed.store(true, Ordering::Release);
    }

    /// Events dropped because the queue was full, not yet reported to the host.
    pub fn events_dropped(&self) -> u64 {
        self.gate.dropped.load(Ordering::Acquire)
    }
}

impl ToolServices for Services {
    fn approve_command(
        &self,
        command: &str,
        ctx: &CallContext,
        cancel: &CancelToken,
    ) -> CommandDecision {
        approvals::decide(&self.approvals, command, ctx, cancel)
    }

    fn approve_check(
        &self,
        check: hermes_approval::CheckResult,
        subject: &str,
        ctx: &CallContext,
        cancel: &CancelToken,
    ) -> CommandDecision {
        approvals::decide_check(&self.approvals, check, subject, ctx, cancel)
    }

    fn approve_escalation(
        &self,
        command: &str,
        why: &str,
        ctx: &CallContext,
        cancel: &CancelToken,
    ) -> CommandDecision {
        let mut check = self.escalation_engine.check(command);
        let why = hermes_approval::redact_secrets(why.trim());
        let why = if why.is_empty() {
            "no reason given".to_string()
        } else {
            why
        };
        check.reasons.insert(
            0,
            hermes_approval::Reason {
                rule: "leave-sandbox".into(),
                description: format!("runs outside the sandbox, on this machine: {why}"),
                tier: hermes_approval::Verdict::Ask,
                command: hermes_approval::redact_secrets(command),
                pack: "builtin".into(),
                sandbox: None,
                argv: Vec::new(),
            },
        );
        if check.verdict == hermes_approval::Verdict::Allow {
            check.verdict = hermes_approval::Verdict::Ask;
        }
        approvals::decide_check(&self.approvals, check, command, ctx, cancel)
    }

    fn server_request(
        &self,
        kind: &str,
        server: &str,
        params: Value,
        timeout: std::time::Duration,
        cancel: &CancelToken,
    ) -> std::result::Result<Value, String> {
        approvals::server_request(&self.approvals, kind, server, params, timeout, cancel)
    }

    fn emit_event(&self, event: Value) {
        {
            let taps = self.taps.read();
            for (_, tap) in taps.iter() {
                tap.event(&event);
            }
        }
        let sink = self.events.read().clone();
        let Some(sink) = sink else {
            return;
        };
        let gate = &self.gate;
        if gate.closed.load(Ordering::Acquire) {
            return;
        }
        if gate.queued.fetch_add(1, Ordering::AcqRel) >= gate.max {
            gate.queued.fetch_sub(1, Ordering::AcqRel);
            gate.dropped.fetch_add(1, Ordering::AcqRel);
            return;
        }
        let text = event.to_string();
        let gate = gate.clone();
        self.callbacks.post(Box::new(move || {
            gate.queued.fetch_sub(1, Ordering::AcqRel);
            if gate.closed.load(Ordering::Acquire) {
                return;
            }
            let dropped = gate.dropped.swap(0, Ordering::AcqRel);
            if dropped > 0 {
                sink.event(&format!(r#"{{"type":"events_dropped","count":{dropped}}}"#));
            }
            sink.event(&text);
        }));
    }

    fn has_event_handler(&self) -> bool {
        self.events.read().is_some()
    }
}

/// Where the terminal's commands run, for the approval engine: in the
/// bubblewrap sandbox (its workspace and network), or on the host.
fn check_options(config: &Config) -> hermes_approval::CheckOptions {
    let sandboxed = config.builtin_toolsets.iter().any(|t| t == "terminal")
        && config.terminal.backend == "sandbox";
    hermes_approval::CheckOptions {
        sandbox: sandboxed.then(|| hermes_approval::SandboxFacts {
            workspace: hermes_builtins::terminal::default_cwd(&config.terminal)
                .display()
                .to_string(),
            network: config.terminal.network.any(),
        }),
    }
}

/// The approval engine's config: the posture the config names, else
/// `sandboxed` when the terminal runs in the sandbox (it holds what runs
/// there: only leaving it asks) and `deny-list` elsewhere.
fn engine_config(config: &Config) -> hermes_approval::EngineConfig {
    let mut approvals = config.approvals.clone();
    if approvals.posture.is_none() && check_options(config).sandbox.is_some() {
        approvals.posture = Some(hermes_approval::Posture::Sandboxed);
    }
    approvals.runtime_engine_config(Some(
        hermes_builtins::terminal::default_cwd(&config.terminal)
            .display()
            .to_string(),
    ))
}

/// Where the terminal's commands run, for approval prompts (`None`: here).
fn runs_on(config: &Config) -> Option<String> {
    let t = &config.terminal;
    match t.backend.as_str() {
        "sandbox" => Some("in the bubblewrap sandbox on this machine".into()),
        "ssh" => t
            .ssh
            .as_ref()
            .map(|s| format!("on ssh {}", s.to_exec().label())),
        "docker" | "podman" => t.docker.as_ref().map(|d| {
            format!(
                "in a {} container (image {})",
                d.engine.as_deref().unwrap_or(&t.backend),
                d.image
            )
        }),
        "swarm" => t
            .docker
            .as_ref()
            .map(|d| format!("in a swarm service (image {})", d.image)),
        "apptainer" | "singularity" => t
            .apptainer
            .as_ref()
            .map(|a| format!("in an apptainer instance (image {})", a.image)),
        "daytona" => Some("in a Daytona sandbox".into()),
        "modal" => Some(format!(
            "in a Modal sandbox (image {})",
            t.modal
                .as_ref()
                .and_then(|m| m.image.clone())
                .unwrap_or_else(|| "python:3.12-slim".into())
        )),
        name => t
            .host_env(name)
            .map(|e| hermes_exec::Environment::location(&**e)),
    }
}

/// A runtime: the Rust API (the C ABI wraps the same thing).
pub struct Runtime {
    core: Arc<Core>,
    services: Arc<Services>,
    config: Config,
    terminal: Option<Arc<Terminal>>,
    files: Option<Arc<FileCtx>>,
    todos: Option<Arc<Todos>>,
    memory: Option<Arc<Memory>>,
    skills: Option<Arc<SkillsCtx>>,
    activity: Arc<Activity>,
    lifecycles: Mutex<Vec<Arc<dyn Lifecycle>>>,
    mcp: Option<Arc<Mcp>>,
    /// Why the `auto` backend fell back to local: sent once as a `warning`
    /// event to the first event handler the host installs.
    fallback_warning: Mutex<Option<String>>,
}

impl Runtime {
    /// Build a runtime from its JSON config (`{}` = defaults, nothing built-in).
    pub fn new(config_json: &str) -> Result<Runtime> {
        Runtime::with_environments(config_json, Vec::new())
    }

    /// [`Runtime::new`] with environments the host brought: the config's
    /// `terminal.backend` may name one (its commands then go through the
    /// same approval, limits, timeouts and cancellation as any backend's).
    pub fn with_environments(
        config_json: &str,
        envs: Vec<Arc<hermes_exec::host::HostEnv>>,
    ) -> Result<Runtime> {
        let mut config = Config::parse_with_environments(config_json, envs)?;
        // execute_code's bash scripts call `hermes-tools`: in the sandbox,
        // that one program is bound read-only where it is (a link to it from
        // the run's folder must resolve inside).
        // In a container, each task's container gets a folder shared with
        // this machine for the runs, and the program bound read-only too.
        if config
            .builtin_toolsets
            .iter()
            .any(|t| t == "code_execution")
        {
            let cli = hermes_builtins::code::cli_program(&config.code_execution);
            match config.terminal.backend.as_str() {
                // "auto" is the sandbox where it works: bound there too
                // (harmless when it turns out local).
                "sandbox" | "auto" => {
                    if let Some(cli) = cli {
                        let cli = cli.display().to_string();
                        if !config.terminal.sandbox_ro_binds.contains(&cli) {
                            config.terminal.sandbox_ro_binds.push(cli);
                        }
                    }
                }
                "docker" | "podman" | "apptainer" | "singularity" => {
                    config.terminal.code_runs = Some(cli.into_iter().collect());
                }
                _ => {}
            }
        }
        let escalation_engine = hermes_approval::Engine::from_config(
            &config.approvals.runtime_engine_config(Some(
                hermes_builtins::terminal::default_cwd(&config.terminal)
                    .display()
                    .to_string(),
            )),
        )
        .map_err(|e| Error::invalid(format!("runtime config: approvals: {e}")))?;
        let approval_engine = hermes_approval::Engine::from_config(&engine_config(&config))
            .map_err(|e| Error::invalid(format!("runtime config: approvals: {e}")))?;
        let policy = hermes_approval::Policy::new(config.approvals.clone())
            .map_err(|e| Error::invalid(format!("runtime config: approvals: {e}")))?;
        let core = Core::new(
            config.dispatch.clone(),
            &config.availability,
            config.limits.clone(),
        )?;
        let (approval_engine, policy) = (Arc::new(approval_engine), Arc::new(policy));
        let approvals = approvals::Approvals::new(
            approval_engine.clone(),
            policy.clone(),
            core.callbacks.clone(),
            core.engine.clone(),
            core.id,
            check_options(&config),
        );
        if let Some(w) = runs_on(&config) {
            approvals.set_runs_on(w);
        }
        let services = Arc::new(Services {
            approval_engine,
            escalation_engine: Arc::new(escalation_engine),
            policy,
            approvals,
            events: RwLock::new(None),
            taps: RwLock::new(Vec::new()),
            callbacks: core.callbacks.clone(),
            gate: Arc::new(EventGate {
                max: config.limits.max_queued_events.max(1),
                queued: AtomicUsize::new(0),
                dropped: AtomicU64::new(0),
                closed: AtomicBool::new(false),
            }),
        });
        progress::register(core.id, &(services.clone() as Arc<dyn ToolServices>));
        let mut rt = Runtime {
            core,
            services,
            config,
            terminal: None,
            files: None,
            todos: None,
            memory: None,
            skills: None,
            activity: Arc::new(Activity::default()),
            lifecycles: Mutex::new(Vec::new()),
            fallback_warning: Mutex::new(None),
            mcp: None,
        };
        if let Err(e) = rt.install_builtins().and_then(|()| rt.install_mcp()) {
            rt.close();
            return Err(e);
        }
        if let Some(why) = &rt.config.backend_fallback
            && rt
                .config
                .builtin_toolsets
                .iter()
                .any(|t| t == "terminal" || t == "file")
        {
            tracing::warn!(
                "hermes-tools: terminal.backend 'auto' runs commands on this machine without a sandbox: {why}"
            );
            *rt.fallback_warning.lock() = Some(why.clone());
        }
        tracing::debug!(runtime = rt.core.id, "runtime created");
        Ok(rt)
    }

    /// Install the built-in toolsets named in the config. The terminal goes
    /// first, so the file tools can follow its per-task working directory.
    fn install_builtins(&mut self) -> Result<()> {
        let mut names = self.config.builtin_toolsets.clone();
        // The terminal first (the file tools follow its directories),
        // execute_code last (it runs in the terminal's backend).
        names.sort_by_key(|n| match n.as_str() {
            "terminal" => 0,
            "code_execution" => 2,
            _ => 1,
        });
        names.dedup();
        for name in names {
            match name.as_str() {
                "terminal" => {
                    let services: Arc<dyn ToolServices> = self.services.clone();
                    let term = hermes_builtins::terminal::install(
                        self.config.terminal.clone(),
                        services,
                        &self.core,
                    )?;
                    term.set_activity(self.activity.clone());
                    self.lifecycles.lock().push(term.clone());
                    self.terminal = Some(term);
                }
                "tool_search" => hermes_core::search::install(&self.core)?,
                "code_execution" => {
                    // Scripts run where terminal commands run: the terminal's
                    // backend, or one of its own when the toolset is off.
                    let term = match &self.terminal {
                        Some(t) => t.clone(),
                        None => {
                            let services: Arc<dyn ToolServices> = self.services.clone();
                            let t = Terminal::new(
                                self.config.terminal.clone(),
                                services,
                                self.core.id,
                                Some(self.core.engine.clone()),
                            )?;
                            self.lifecycles.lock().push(t.clone());
                            t
                        }
                    };
                    let spill = match &self.config.code_execution.spill_dir {
                        Some(d) => config::expand_home(d).into(),
                        None => self.config.data_dir().join("cache").join("exec"),
                    };
                    hermes_builtins::code::install(
                        self.config.code_execution.clone(),
                        term,
                        spill,
                        &self.core,
                    )?;
                }
                "file" => {
                    let files = hermes_builtins::file::install(self.file_ctx()?, &self.core)?;
                    self.lifecycles.lock().push(files.clone());
                    self.files = Some(files);
                }
                "todo" => {
                    let todos = hermes_builtins::todo::install(self.activity.clone(), &self.core)?;
                    self.lifecycles.lock().push(todos.clone());
                    self.todos = Some(todos);
                }
                "memory" => {
                    let memory = Memory::new(
                        self.config.memory_dir(),
                        &self.config.memory,
                        self.activity.clone(),
                    );
                    self.memory = Some(hermes_builtins::memory::install(memory, &self.core)?);
                }
                "skills" => {
                    let ctx = SkillsCtx::new(
                        self.config.skills_dir(),
                        self.config.skills.clone(),
                        self.activity.clone(),
                    );
                    self.skills = Some(hermes_builtins::skills::install(ctx, &self.core)?);
                }
                _ => {
                    return Err(Error::new(
                        hermes_core::ErrorKind::Unsupported,
                        format!(
                            "runtime config: builtin_toolsets: '{name}' is not available in this build yet"
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The file toolset's state: the terminal backend's file system, the
    /// task's working directory (the terminal's, which follows `cd`).
    fn file_ctx(&self) -> Result<FileCtx> {
        use hermes_builtins::terminal::default_cwd;
        use hermes_exec::fs::{FileSystem, HostFs};
        let tcfg = &self.config.terminal;
        let base = default_cwd(tcfg);
        let constant = |fs: Arc<dyn FileSystem>| -> hermes_builtins::file::FilesFn {
            Arc::new(move |_task: &str| fs.clone())
        };
        // Remote backends: each task's files over its own connection or in
        // its own container (the terminal's, or the file toolset's own
        // backend when the terminal is off).
        let per_task = files_per_task;
        let files: hermes_builtins::file::FilesFn = match tcfg.backend.as_str() {
            "sandbox" => constant(Arc::new(HostFs::sandboxed(
                &hermes_exec::sandbox::SandboxConfig {
                    root: base.clone(),
                    network: tcfg.network.host_network(),
                    proxy: None,
                    ro_binds: tcfg.sandbox_ro_binds.iter().map(Into::into).collect(),
                    rw_binds: tcfg.sandbox_rw_binds.iter().map(Into::into).collect(),
                    limits: tcfg.sandbox_limits.to_exec(),
                },
            ))),
            "ssh" | "docker" | "podman" | "swarm" => match &self.terminal {
                Some(term) => per_task(term.backend.clone()),
                None if tcfg.backend == "ssh" => {
                    // The file toolset without the terminal: connections of its own.
                    let section = tcfg.ssh.as_ref().ok_or_else(|| {
                        Error::invalid(
                            "runtime config: terminal.backend 'ssh' needs a terminal.ssh section",
                        )
                    })?;
                    per_task(Arc::new(
                        hermes_exec::ssh::SshBackend::new(section.to_exec())
                            .map_err(|e| Error::invalid(format!("runtime config: {e}")))?,
                    ))
                }
                None if tcfg.backend == "swarm" => {
                    // The file toolset without the terminal: services of its own.
                    let docker = tcfg.docker.as_ref().ok_or_else(|| {
                        Error::invalid("runtime config: terminal.backend 'swarm' needs a terminal.docker section")
                    })?;
                    let c = tcfg
                        .swarm
                        .clone()
                        .unwrap_or_default()
                        .to_exec(docker, tcfg.cwd.as_deref())
                        .map_err(|e| Error::invalid(format!("runtime config: {e}")))?;
                    per_task(Arc::new(
                        hermes_exec::swarm::backend(c)
                            .map_err(|e| Error::invalid(format!("runtime config: {e}")))?,
                    ))
                }
                None => {
                    // The file toolset without the terminal: containers of its own.
                    let section = tcfg.docker.as_ref().ok_or_else(|| {
                        Error::invalid("runtime config: terminal.backend 'docker'/'podman' needs a terminal.docker section")
                    })?;
                    let c = section
                        .to_exec(&tcfg.backend, tcfg.cwd.as_deref())
                        .map_err(|e| Error::invalid(format!("runtime config: {e}")))?;
                    per_task(Arc::new(
                        hermes_exec::container::ContainerBackend::new(c)
                            .map_err(|e| Error::invalid(format!("runtime config: {e}")))?,
                    ))
                }
            },
            "apptainer" | "singularity" => match &self.terminal {
                Some(term) => per_task(term.backend.clone()),
                None => {
                    // The file toolset without the terminal: instances of its own.
                    let section = tcfg.apptainer.as_ref().ok_or_else(|| {
                        Error::invalid("runtime config: terminal.backend 'apptainer' needs a terminal.apptainer section")
                    })?;
                    per_task(Arc::new(
                        hermes_exec::apptainer::ApptainerBackend::new(
                            section.to_exec(tcfg.cwd.as_deref()),
                        )
                        .map_err(|e| Error::invalid(format!("runtime config: {e}")))?,
                    ))
                }
            },
            "daytona" => match &self.terminal {
                Some(term) => per_task(term.backend.clone()),
                None => {
                    // The file toolset without the terminal: sandboxes of its own.
                    let (env, _) = hermes_exec::daytona::backend(
                        tcfg.daytona.clone().unwrap_or_default().to_exec(),
                    )
                    .map_err(|e| Error::invalid(format!("runtime config: {e}")))?;
                    per_task(Arc::new(hermes_exec::host::HostBackend(env)))
                }
            },
            "modal" => match &self.terminal {
                Some(term) => per_task(term.backend.clone()),
                #[cfg(feature = "modal")]
                None => {
                    // The file toolset without the terminal: sandboxes of its own.
                    let (env, _) = hermes_exec::modal::backend(
                        tcfg.modal.clone().unwrap_or_default().to_exec(),
                    )
                    .map_err(|e| Error::invalid(format!("runtime config: {e}")))?;
                    per_task(Arc::new(hermes_exec::host::HostBackend(env)))
                }
                #[cfg(not(feature = "modal"))]
                None => {
                    return Err(Error::invalid(format!(
                        "runtime config: {}",
                        hermes_builtins::terminal::config::MODAL_MISSING
                    )));
                }
            },
            name if tcfg.host_env(name).is_some() => match &self.terminal {
                Some(term) => per_task(term.backend.clone()),
                // The file toolset without the terminal: the same host environment.
                None => per_task(Arc::new(hermes_exec::host::HostBackend(
                    tcfg.host_env(name).expect("checked above").clone(),
                ))),
            },
            _ => constant(Arc::new(HostFs::local())),
        };
        let cwd: hermes_builtins::file::CwdFn = match &self.terminal {
            Some(term) => {
                let term = Arc::downgrade(term);
                let base = base.clone();
                Arc::new(move |task: &str| {
                    term.upgrade()
                        .map(|t| t.task(task).cwd)
                        .unwrap_or_else(|| base.clone())
                })
            }
            None => Arc::new(move |_task: &str| base.clone()),
        };
        let home = std::env::var_os("HOME")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| "/".into());
        let mut protected = Vec::new();
        if let Some(p) = &self.config.approvals.allowlist_path {
            protected.push(p.clone());
        }
        let services: Arc<dyn ToolServices> = self.services.clone();
        Ok(FileCtx::new(
            files,
            self.config.file.clone(),
            cwd,
            home,
            self.config.data_dir(),
            self.config
                .workspace_root
                .as_deref()
                .map(|r| config::expand_home(r).into()),
            protected,
            services,
            self.activity.clone(),
        ))
    }

    /// A task's todo list and summary (`None` when the todo toolset is off).
    pub fn todo_list(&self, task_id: &str) -> Option<Value> {
        self.todos.as_ref().map(|t| t.list(task_id))
    }

    /// The memory toolset, when it is switched on.
    pub fn memory(&self) -> Option<&Arc<Memory>> {
        self.memory.as_ref()
    }

    /// The skills toolset, when it is switched on.
    pub fn skills(&self) -> Option<&Arc<SkillsCtx>> {
        self.skills.as_ref()
    }

    /// The file toolset's state (its search index among it), when the
    /// toolset is switched on.
    pub fn files(&self) -> Option<&Arc<FileCtx>> {
        self.files.as_ref()
    }

    /// Start the MCP servers of the config (after the built-ins: their
    /// tools never shadow a built-in tool).
    fn install_mcp(&mut self) -> Result<()> {
        let services: Arc<dyn ToolServices> = self.services.clone();
        let mcp = Mcp::install(&self.config.mcp_servers, &self.core, Some(services))?;
        self.lifecycles.lock().push(mcp.clone());
        self.mcp = Some(mcp);
        Ok(())
    }

    /// Add an MCP server at run time (`config_json` as one entry of the
    /// config's `mcp_servers`); blocks for its first connection attempt.
    pub fn add_mcp_server(&self, name: &str, config_json: &str) -> Result<()> {
        let _g = self.core.enter()?;
        let cfg: config::McpServerConfig = serde_json::from_str(config_json)
            .map_err(|e| Error::json(format!("mcp server config: {e}")))?;
        #[cfg(feature = "mcp-client")]
        let cfg = cfg.validate(name)?;
        match &self.mcp {
            Some(m) => m.add(name, cfg),
            None => Err(Error::invalid("the runtime is closing")),
        }
    }

    /// Remove an MCP server: its process is stopped, its tools deregistered.
    pub fn remove_mcp_server(&self, name: &str) -> Result<()> {
        let _g = self.core.enter()?;
        match &self.mcp {
            Some(m) => m.remove(name),
            None => Err(Error::not_found(format!("no MCP server named '{name}'"))),
        }
    }

    /// Accept the changed definitions of server `name`'s tools held after a
    /// "rug pull" (event `mcp.tool_changed`); they are registered again.
    /// Returns the server-side names accepted.
    pub fn accept_mcp_tools(&self, name: &str) -> Result<Vec<String>> {
        let _g = self.core.enter()?;
        match &self.mcp {
            Some(m) => m.accept_tools(name),
            None => Err(Error::not_found(format!("no MCP server named '{name}'"))),
        }
    }

    /// Each MCP server's state as JSON text (`{}` without servers).
    pub fn mcp_status(&self) -> String {
        match &self.mcp {
            Some(m) => m.status().to_string(),
            None => "{}".to_string(),
        }
    }

    pub fn core(&self) -> &Arc<Core> {
        &self.core
    }
    pub fn services(&self) -> &Arc<Services> {
        &self.services
    }
    pub fn config(&self) -> &Config {
        &self.config
    }
    /// The terminal toolset, when it is switched on.
    pub fn terminal(&self) -> Option<&Arc<Terminal>> {
        self.terminal.as_ref()
    }
    pub fn is_closed(&self) -> bool {
        self.core.is_closed()
    }

    /// Register one tool from its JSON spec.
    pub fn register_tool(
        &self,
        spec_json: &str,
        tool: Arc<dyn Tool>,
        check: Option<Arc<dyn Check>>,
    ) -> Result<()> {
        let _g = self.core.enter()?;
        let spec = registry::parse_spec(spec_json)?;
        self.check_schema_size(|| "tool spec".into(), &spec)?;
        let override_ = spec.override_;
        let entry = self.build_entry(spec, tool, check, self.config.dispatch.compile_schemas)?;
        self.core.register(entry, override_)
    }

    /// Register many tools (a JSON array of specs) that share one
    /// implementation; the tool learns each call's name from `ToolCall::name`.
    /// All or nothing; returns how many were registered.
    pub fn register_tools(
        &self,
        specs_json: &str,
        tool: Arc<dyn Tool>,
        check: Option<Arc<dyn Check>>,
    ) -> Result<usize> {
        let _g = self.core.enter()?;
        // Built as the specs are read: no vector of specs in between.
        let mut entries = Vec::with_capacity((specs_json.len() / 256).min(1 << 20));
        let mut override_ = false;
        registry::parse_specs_each(specs_json, |i, spec| {
            self.check_schema_size(|| format!("tool specs[{i}]"), &spec)?;
            override_ |= spec.override_;
            let entry = self
                .build_entry(
                    spec,
                    tool.clone(),
                    check.clone(),
                    self.config.dispatch.compile_schemas,
                )
                .map_err(|e| Error::new(e.kind, format!("tool specs[{i}]: {}", e.message)))?;
            // Shared at once: the registry keeps it behind an Arc anyway.
            entries.push(Arc::new(entry));
            Ok(())
        })?;
        self.core.register_many(entries, override_)
    }

    /// `limits.max_schema_bytes`: checked before the schema is compiled.
    /// `what` names the spec in the error (built only for one).
    fn check_schema_size(
        &self,
        what: impl FnOnce() -> String,
        spec: &registry::ToolSpec,
    ) -> Result<()> {
        let (n, max) = (spec.schema.bytes, self.config.limits.max_schema_bytes);
        if n > max {
            return Err(Error::invalid(format!(
                "{}: the schema is {n} bytes, over limits.max_schema_bytes ({max})",
                what()
            )));
        }
        Ok(())
    }

    /// Build a registry entry with `limits.max_schema_patterns` in force.
    fn build_entry(
        &self,
        spec: registry::ToolSpec,
        tool: Arc<dyn Tool>,
        check: Option<Arc<dyn Check>>,
        compile: registry::Compile,
    ) -> Result<registry::ToolEntry> {
        hermes_core::schema::with_pattern_limit(self.config.limits.max_schema_patterns, || {
            registry::build_entry_with(spec, tool, check, compile)
        })
    }

    pub fn deregister_tool(&self, name: &str) -> Result<()> {
        let _g = self.core.enter()?;
        self.core.deregister(name)
    }

    pub fn define_toolset(&self, json: &str) -> Result<()> {
        let _g = self.core.enter()?;
        let def: ToolsetDef = hermes_core::error::parse_json("toolset", json)?;
        self.core.define_toolset(def)
    }

    pub fn alias_toolset(&self, alias: &str, target: &str) -> Result<()> {
        let _g = self.core.enter()?;
        self.core.alias_toolset(alias, target)
    }

    pub fn generation(&self) -> u64 {
        self.core.generation()
    }

    pub fn add_hook(&self, event: &str, hook: Arc<dyn Hook>) -> Result<u64> {
        let _g = self.core.enter()?;
        let ev = HookEvent::parse(event)?;
        Ok(self.core.add_hook(ev, hook))
    }

    pub fn remove_hook(&self, id: u64) -> Result<()> {
        let _g = self.core.enter()?;
        self.core.remove_hook(id)
    }

    /// Set (or with `None`, remove) the handler for agent-loop tools.
    pub fn set_interceptor(&self, tool: Option<Arc<dyn Tool>>) -> Result<()> {
        let _g = self.core.enter()?;
        self.core.set_interceptor(tool);
        Ok(())
    }

    pub fn set_event_sink(&self, sink: Option<Arc<dyn EventSink>>) -> Result<()> {
        let _g = self.core.enter()?;
        let installed = sink.is_some();
        let old = std::mem::replace(&mut *self.services.events.write(), sink);
        drop(old);
        if installed && let Some(why) = self.fallback_warning.lock().take() {
            self.services.emit_event(serde_json::json!({
                "type": "warning",
                "code": "sandbox_unavailable",
                "message": format!(
                    "terminal commands run on this machine without a sandbox: {why}"
                ),
            }));
        }
        Ok(())
    }

    /// Add a tap that sees every event from now on (see [`EventTap`]); the
    /// id removes it. Taps do not count as an event handler: events emitted
    /// only for a host's handler (streamed output) stay off.
    pub fn add_event_tap(&self, tap: Arc<dyn EventTap>) -> Result<u64> {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let _g = self.core.enter()?;
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        self.services.taps.write().push((id, tap));
        Ok(id)
    }

    /// Remove a tap added by [`Runtime::add_event_tap`] (unknown ids are ignored).
    pub fn remove_event_tap(&self, id: u64) {
        self.services.taps.write().retain(|(t, _)| *t != id);
    }

    /// The approval handler (`reviewer == false`) or smart-mode reviewer now
    /// installed (front ends that install their own keep it to hand back).
    pub fn approval_sink(&self, reviewer: bool) -> Option<Arc<dyn ApprovalSink>> {
        let slot = if reviewer {
            &self.services.approvals.reviewer
        } else {
            &self.services.approvals.handler
        };
        slot.read().clone()
    }

    /// Set the approval handler (`reviewer == false`) or the smart-mode reviewer.
    pub fn set_approval_sink(
        &self,
        reviewer: bool,
        sink: Option<Arc<dyn ApprovalSink>>,
    ) -> Result<()> {
        let _g = self.core.enter()?;
        let slot = if reviewer {
            &self.services.approvals.reviewer
        } else {
            &self.services.approvals.handler
        };
        let old = std::mem::replace(&mut *slot.write(), sink);
        drop(old);
        Ok(())
    }

    /// Add a router of approvals ([`approvals::ApprovalRouter`]), asked
    /// before the host's handler; returns its id for
    /// [`Runtime::remove_approval_router`].
    pub fn add_approval_router(&self, r: Arc<dyn approvals::ApprovalRouter>) -> u64 {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.services.approvals.routers.write().push((id, r));
        id
    }

    /// Remove what [`Runtime::add_approval_router`] added (unknown ids are ignored).
    pub fn remove_approval_router(&self, id: u64) {
        self.services
            .approvals
            .routers
            .write()
            .retain(|(i, _)| *i != id);
    }

    /// Set (or remove) the host's answerer of MCP servers' sampling
    /// requests (`sampling/createMessage`); see [`approvals::server_request`].
    pub fn set_sampling_sink(&self, sink: Option<Arc<dyn ApprovalSink>>) -> Result<()> {
        let _g = self.core.enter()?;
        let old = std::mem::replace(&mut *self.services.approvals.sampler.write(), sink);
        drop(old);
        Ok(())
    }

    /// Set (or remove) the host's OAuth handler: the browser step of an MCP
    /// server's authorization (`oauth_authorize`: open the URL, answer with
    /// the redirect) and, for servers with `oauth.token_store = "host"`,
    /// loading and saving their tokens; see [`approvals::server_request`].
    pub fn set_oauth_sink(&self, sink: Option<Arc<dyn ApprovalSink>>) -> Result<()> {
        let _g = self.core.enter()?;
        let old = std::mem::replace(&mut *self.services.approvals.oauth.write(), sink);
        drop(old);
        Ok(())
    }

    /// Dispatch one call synchronously: tools run on this thread.
    pub fn dispatch(&self, name: &str, args: &str, ctx: CallContext) -> Result<String> {
        dispatch::dispatch_sync(&self.core, name, args, ctx)
    }

    /// Dispatch one call; `on_done` runs exactly once on the callbacks thread.
    pub fn dispatch_async(
        &self,
        name: &str,
        args: &str,
        ctx: CallContext,
        on_done: OnDone,
    ) -> Result<u64> {
        dispatch::dispatch_async(&self.core, name, args, ctx, on_done)
    }

    /// Dispatch a batch of model tool calls; results in input order.
    pub fn dispatch_batch(&self, calls_json: &str, ctx: &CallContext) -> Result<String> {
        dispatch::batch::dispatch_batch(&self.core, calls_json, ctx)
    }

    /// Definitions for the model (JSON text, shared: cheap to clone).
    pub fn definitions(&self, query_json: &str) -> Result<hermes_core::definitions::Text> {
        hermes_core::definitions::definitions(&self.core, query_json)
    }

    /// [`Runtime::definitions`], a new text built by `build` (a front end's
    /// own block type, handed out without a copy).
    pub fn definitions_with(
        &self,
        query_json: &str,
        build: hermes_core::definitions::BuildText,
    ) -> Result<hermes_core::definitions::Text> {
        hermes_core::definitions::definitions_with(&self.core, query_json, build)
    }

    pub fn toolsets_json(&self) -> Result<String> {
        hermes_core::definitions::toolsets_json(&self.core)
    }

    /// Report progress of one of this runtime's waiting host calls (see
    /// [`progress::call_progress`]): a `tool.progress` event.
    pub fn call_progress(
        &self,
        call_id: u64,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> Result<()> {
        match hermes_core::pending::live_info(call_id, hermes_core::pending::Kind::Call) {
            Some((rt, _, _)) if rt == self.core.id => {
                progress::call_progress(call_id, progress, total, message)
            }
            _ => Err(Error::not_found(format!(
                "progress: call {call_id} is not a waiting call of this runtime"
            ))),
        }
    }

    /// Register an MCP server that sends host calls' requests to their
    /// clients ([`client::client_request`]); the id removes it.
    pub fn add_client_requests(&self, r: Arc<dyn client::ClientRequests>) -> u64 {
        client::add(self.core.id, r)
    }

    /// Remove what [`Runtime::add_client_requests`] added (unknown ids are ignored).
    pub fn remove_client_requests(&self, id: u64) {
        client::remove(self.core.id, id);
    }

    /// Cancel an async dispatch by its call id.
    pub fn cancel(&self, call_id: u64) -> Result<()> {
        self.core.cancel(call_id)
    }

    /// Drop a task's state in every built-in toolset (kills its processes).
    pub fn cleanup_task(&self, task_id: &str) {
        let lifecycles = self.lifecycles.lock().clone();
        for l in lifecycles {
            l.cleanup_task(task_id);
        }
        self.services.approvals.set_task_network(task_id, None);
        self.activity.forget(task_id);
    }

    /// Give task `task_id` its own network setting in place of
    /// `terminal.network` (`"off"`, `"on"`, an allow-list object; `null`:
    /// back to `terminal.network`), on the sandbox, docker and podman
    /// backends. The task's commands are then judged by the approval
    /// engine with that network (a task given the network loses the
    /// sandbox's "no network" containment). The setting goes with the
    /// task's state ([`Runtime::cleanup_task`]).
    pub fn set_task_network(&self, task_id: &str, network: &Value) -> Result<()> {
        let _g = self.core.enter()?;
        let term = self.terminal.as_ref().ok_or_else(|| {
            Error::new(
                hermes_core::error::ErrorKind::Unsupported,
                "the terminal toolset is not enabled (add \"terminal\" to builtin_toolsets)",
            )
        })?;
        // Fail closed while it changes: judged as networked until the
        // backend has its new setting; on failure, as before.
        let approvals = &self.services.approvals;
        let before = approvals.task_network(task_id);
        approvals.set_task_network(task_id, Some(true));
        match term.set_task_network(task_id, network) {
            Ok(any) => approvals.set_task_network(task_id, any),
            Err(e) => {
                approvals.set_task_network(task_id, before);
                return Err(e);
            }
        }
        Ok(())
    }

    /// Close: reject new work, cancel pending calls (their completions run
    /// cancelled), stop built-in tools, drop every tool and handler, stop
    /// the engine and the callbacks thread. Everything has happened when this
    /// returns, unless host code does not return: close waits at most
    /// [`CLOSE_HOST_WAIT`] (after the built-in tools' kill grace) for calls and
    /// availability checks running in host code and for the callbacks thread,
    /// then logs what is left and returns. What is left keeps only what it
    /// owns (its tool's user_data is freed when that code returns). Called
    /// from the callbacks thread, close does not wait for that thread.
    pub fn close(&self) {
        let core = &self.core;
        if !core.begin_close() {
            return;
        }
        self.services.approvals.close();
        progress::unregister(core.id);
        client::remove_all(core.id);
        // Queued events are dropped from here on: close never waits for a
        // slow event handler.
        self.services.close_events();
        let on_callback_thread = core.callbacks.is_current();
        let lifecycles = std::mem::take(&mut *self.lifecycles.lock());
        for l in &lifecycles {
            l.shutdown();
        }
        drop(lifecycles);
        let until = Instant::now() + CLOSE_HOST_WAIT;
        if !on_callback_thread && !core.wait_idle(CLOSE_HOST_WAIT) {
            // Host code still running holds its tool's user_data: never free
            // it under its feet, and never wait for it forever either.
            let (calls, checks) = core.busy();
            tracing::warn!(
                "runtime free: {calls} call(s) and {checks} availability check(s) still in host code after {CLOSE_HOST_WAIT:?}; not waiting for them (their free functions run when they return)"
            );
        }
        core.finish_close();
        *self.services.events.write() = None;
        self.services.taps.write().clear();
        *self.services.approvals.handler.write() = None;
        self.services.approvals.routers.write().clear();
        *self.services.approvals.reviewer.write() = None;
        let left = until
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(100));
        core.callbacks.shutdown_within(Some(left));
        tracing::debug!(runtime = core.id, "runtime closed");
    }
}

/// How long close waits for host code (calls, checks, the callbacks thread)
/// that does not return, after the built-in tools' kill grace.
pub const CLOSE_HOST_WAIT: Duration = Duration::from_secs(1);

impl Drop for Runtime {
    fn drop(&mut self) {
        self.close();
    }
}

/// Each task's files on a remote backend: the task's own connection or
/// container. A backend that has none for a task fails closed (every file
/// operation errors) rather than falling back to this machine's files.
fn files_per_task(env: Arc<dyn hermes_exec::Environment>) -> hermes_builtins::file::FilesFn {
    Arc::new(move |task: &str| {
        env.files(task).unwrap_or_else(|| {
            Arc::new(hermes_exec::fs::NoFiles::new(format!(
                "the {} backend has no file system for task '{}'",
                env.name(),
                hermes_exec::env::task_key(task)
            ))) as Arc<dyn hermes_exec::fs::FileSystem>
        })
    })
}

#[cfg(test)]
mod files_tests {
    use super::*;

    /// A remote backend that has no file system for a task.
    struct Filesless;
    impl hermes_exec::Environment for Filesless {
        fn name(&self) -> &'static str {
            "ssh"
        }
        fn spawn(
            &self,
            _: &hermes_exec::spawn::SpawnRequest<'_>,
        ) -> std::io::Result<hermes_exec::spawn::Spawned> {
            Err(std::io::Error::other("not used"))
        }
    }

    /// Found in review: the file tools fell back to this machine's files
    /// when a remote backend gave none for a task.
    #[test]
    fn a_remote_task_without_files_fails_closed() {
        let fs = files_per_task(Arc::new(Filesless))("t1");
        assert!(!fs.host_paths());
        let here = std::env::temp_dir();
        let err = fs.read_dir(&here).unwrap_err().to_string();
        assert!(
            err.contains("ssh backend has no file system for task 't1'"),
            "{err}"
        );
        assert!(fs.check_read(&here).is_err() && fs.check_write(&here).is_err());
        assert!(fs.write_atomic(&here.join("x"), b"", None).is_err());
    }
}
