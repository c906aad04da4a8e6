//! The terminal toolset's config (`"terminal": {...}` in the runtime config).

use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TerminalConfig {
    /// "auto" (the default: "sandbox" where bubblewrap works, else
    /// "local"), "local", "sandbox", "ssh", "docker", "podman", "swarm", "apptainer"
    /// (alias "singularity"), "modal", "daytona", or an environment the host registered.
    pub backend: String,
    pub cwd: Option<String>,
    /// Default foreground timeout in seconds.
    pub timeout: u64,
    pub env: BTreeMap<String, String>,
    /// Output cap in characters for a foreground command (head + tail kept).
    pub max_output_chars: usize,
    /// Sandbox backend: the network policy: `"off"` / `false` (the
    /// default), `"on"` / `true`, or an allow-list (see [`NetworkSetting`]).
    pub network: NetworkSetting,
    /// Sandbox backend with an allow-list: values the command sees only as
    /// placeholders, put in place by the network proxy for their own hosts.
    pub secrets: BTreeMap<String, SecretSection>,
    /// Directory where full outputs are spilled when truncated (None: no spill).
    pub spill_dir: Option<String>,
    /// Largest foreground timeout a call may ask for, in seconds.
    pub max_foreground_timeout: u64,
    /// Seconds between SIGTERM and SIGKILL when a process tree is killed.
    pub kill_grace: f64,
    /// Background processes tracked at most (running plus finished).
    pub max_processes: usize,
    /// Seconds a finished background process stays visible.
    pub finished_ttl: u64,
    /// Rolling output buffer per background process, in characters.
    pub process_buffer_chars: usize,
    /// Kill background processes after this many seconds (0: no limit).
    pub background_timeout: u64,
    /// Minimum seconds between two watch_patterns events of one process.
    pub watch_interval: f64,
    /// Stream live output to the host's event handler while commands run.
    pub stream_output: bool,
    /// Host variables passed to commands beyond the default allow-list
    /// (`hermes_exec::inherit::CORE`), also when their names look secret.
    pub env_passthrough: Vec<String>,
    /// How much of the host's environment commands inherit: "core" (the
    /// allow-list, default) or "all" (everything but secret-looking names,
    /// the original's behaviour).
    pub env_inherit: String,
    /// Local backend: make the host process non-dumpable (see
    /// `hermes_exec::supervisor::protect_host`), so a command of the same
    /// user cannot read its environment or memory or attach to it. Off by
    /// default (it also turns off the host's core dumps); the CLI sets it.
    pub protect_host: bool,
    /// Sandbox backend: extra read-only binds.
    pub sandbox_ro_binds: Vec<String>,
    /// Sandbox backend: extra writable binds.
    pub sandbox_rw_binds: Vec<String>,
    /// Sandbox backend: resource limits of every command (0: no limit).
    pub sandbox_limits: SandboxLimitsSection,
    /// ssh backend: where and how to connect.
    pub ssh: Option<SshSection>,
    /// docker / podman backend: the image and the container's limits
    /// (the swarm backend's too: its image, limits and manager address).
    pub docker: Option<ContainerSection>,
    /// swarm backend: placement, reservations, node addresses.
    pub swarm: Option<SwarmSection>,
    /// apptainer / singularity backend: the image, overlays and limits.
    pub apptainer: Option<ApptainerSection>,
    /// daytona backend: the API, the image and the sandbox's resources.
    pub daytona: Option<DaytonaSection>,
    /// modal backend: the API, the token, the image and the sandbox's resources.
    pub modal: Option<ModalSection>,
    /// Environments the host brought (`ht_runtime_new_with_environments`):
    /// `backend` may name one of them. Not part of the JSON.
    #[serde(skip)]
    pub host_envs: HostEnvs,
    /// execute_code runs in the task's container: give each container a
    /// folder shared with this machine and bind these programs read-only
    /// (`hermes-tools`). Set by the runtime, not part of the JSON.
    #[serde(skip)]
    pub code_runs: Option<Vec<std::path::PathBuf>>,
}

/// The host-defined environments a runtime was created with.
#[derive(Clone, Default)]
pub struct HostEnvs(pub Vec<std::sync::Arc<hermes_exec::host::HostEnv>>);

impl std::fmt::Debug for HostEnvs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use hermes_exec::Environment;
        f.debug_list()
            .entries(self.0.iter().map(|e| e.name()))
            .finish()
    }
}

impl TerminalConfig {
    /// The host environment `name`, if the host brought one by that name.
    pub fn host_env(&self, name: &str) -> Option<&std::sync::Arc<hermes_exec::host::HostEnv>> {
        use hermes_exec::Environment;
        self.host_envs.0.iter().find(|e| e.name() == name)
    }
}

/// `"terminal": {"sandbox_limits": {...}}`: see `hermes_exec::spawn::SandboxLimits`
/// for what each limit does and what a command sees when it reaches it.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SandboxLimitsSection {
    /// Processes and threads (default 1024).
    pub max_processes: u64,
    /// Data memory of each process, in MiB (default 4096).
    pub memory_mb: u64,
    /// CPU time of each process, in seconds (default 3600).
    pub cpu_seconds: u64,
    /// Largest file a command may write, in MiB (default 1024).
    pub file_size_mb: u64,
    /// Size of `/tmp`, `/dev/shm` and the private home, in MiB (default 512).
    pub tmp_size_mb: u64,
}

impl Default for SandboxLimitsSection {
    fn default() -> Self {
        let d = hermes_exec::spawn::SandboxLimits::default();
        SandboxLimitsSection {
            max_processes: d.max_processes,
            memory_mb: d.memory_bytes >> 20,
            cpu_seconds: d.cpu_seconds,
            file_size_mb: d.file_size_bytes >> 20,
            tmp_size_mb: d.tmp_size_bytes >> 20,
        }
    }
}

impl SandboxLimitsSection {
    /// The exec layer's limits.
    pub fn to_exec(&self) -> hermes_exec::spawn::SandboxLimits {
        hermes_exec::spawn::SandboxLimits {
            max_processes: self.max_processes,
            memory_bytes: self.memory_mb.saturating_mul(1 << 20),
            cpu_seconds: self.cpu_seconds,
            file_size_bytes: self.file_size_mb.saturating_mul(1 << 20),
            tmp_size_bytes: self.tmp_size_mb.saturating_mul(1 << 20),
        }
    }
}

/// `"terminal": {"docker": {...}}` (the podman backend reads the same section).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContainerSection {
    pub image: String,
    /// "docker" or "podman" (default: the backend's name).
    pub engine: Option<String>,
    /// The client binary (default: found on PATH).
    pub client: Option<String>,
    /// The engine's address (`-H` / `--url`).
    pub host: Option<String>,
    #[serde(default)]
    pub network: bool,
    pub memory: Option<String>,
    pub cpus: Option<f64>,
    pub pids_limit: Option<u32>,
    /// A folder of this machine bind-mounted at the same path (default: the
    /// terminal's `cwd` when set).
    pub workspace: Option<String>,
    #[serde(default)]
    pub run_args: Vec<String>,
    /// Containers (one per task) running at once (default 16).
    pub max_containers: Option<usize>,
    /// Execs per task started ahead of its commands (default 2; 0: none).
    pub prestart: Option<usize>,
}

impl ContainerSection {
    /// The exec layer's config for `backend` ("docker" or "podman").
    pub fn to_exec(
        &self,
        backend: &str,
        cwd: Option<&str>,
    ) -> Result<hermes_exec::container::ContainerConfig, String> {
        use hermes_exec::container::{ContainerConfig, Engine};
        let d = ContainerConfig::default();
        let engine = match self.engine.as_deref().unwrap_or(backend) {
            "docker" => Engine::Docker,
            "podman" => Engine::Podman,
            other => {
                return Err(format!(
                    "terminal.docker.engine: unknown engine '{other}' (docker, podman)"
                ));
            }
        };
        Ok(ContainerConfig {
            engine,
            client: self.client.as_deref().map(expand_home),
            host: self.host.clone(),
            image: self.image.clone(),
            network: self.network,
            proxy: None,
            memory: self.memory.clone().or(d.memory),
            cpus: self.cpus.or(d.cpus),
            pids_limit: self.pids_limit.unwrap_or(d.pids_limit),
            workspace: self
                .workspace
                .as_deref()
                .map(expand_home)
                .or_else(|| cwd.filter(|c| c.starts_with('/')).map(Into::into)),
            run_args: self.run_args.clone(),
            max_containers: self.max_containers.unwrap_or(d.max_containers),
            prestart: self.prestart.unwrap_or(d.prestart),
            share_runs: false,
            ro_binds: Vec::new(),
        })
    }

    /// One-line errors for a section that cannot work.
    pub fn validate(&self, backend: &str, cwd: Option<&str>) -> Result<(), String> {
        self.to_exec(backend, cwd)?.validate()
    }
}

/// `"terminal": {"swarm": {...}}`: what the swarm backend adds to
/// `terminal.docker` (whose `host` is a manager's address and whose
/// `max_containers` counts the whole swarm's task containers).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwarmSection {
    /// Placement constraints (`"node.labels.pool==agents"`).
    #[serde(default)]
    pub constraints: Vec<String>,
    /// Placement preferences (`"spread=node.labels.zone"`).
    #[serde(default)]
    pub preferences: Vec<String>,
    /// Engine address per node id or hostname (else the node's
    /// `hermes-tools.engine` label, else the manager's own address).
    #[serde(default)]
    pub nodes: BTreeMap<String, String>,
    /// Memory reserved per task (default: `terminal.docker.memory`).
    pub reserve_memory: Option<String>,
    /// CPUs reserved per task (default 0.1).
    pub reserve_cpus: Option<f64>,
    /// Task containers started at once (default 8).
    pub start_concurrency: Option<usize>,
    /// Seconds a task container may take to start (default 120).
    pub start_timeout: Option<u64>,
    /// With `terminal.docker.network` on: networks to attach.
    #[serde(default)]
    pub networks: Vec<String>,
}

impl SwarmSection {
    /// The exec layer's config, over `docker` (the image and limits).
    pub fn to_exec(
        &self,
        docker: &ContainerSection,
        cwd: Option<&str>,
    ) -> Result<hermes_exec::swarm::SwarmConfig, String> {
        let d = hermes_exec::swarm::SwarmConfig::default();
        Ok(hermes_exec::swarm::SwarmConfig {
            base: docker.to_exec("docker", cwd)?,
            constraints: self.constraints.clone(),
            preferences: self.preferences.clone(),
            nodes: self.nodes.clone(),
            reserve_memory: self.reserve_memory.clone(),
            reserve_cpus: self.reserve_cpus,
            start_concurrency: self.start_concurrency.unwrap_or(d.start_concurrency),
            start_timeout: self
                .start_timeout
                .map(std::time::Duration::from_secs)
                .unwrap_or(d.start_timeout),
            networks: self.networks.clone(),
            events: None,
        })
    }

    /// One-line errors for a section that cannot work.
    pub fn validate(&self, docker: &ContainerSection, cwd: Option<&str>) -> Result<(), String> {
        if self.start_timeout.is_some_and(|t| t > 86_400) {
            return Err("terminal.swarm.start_timeout: at most 86400 seconds".into());
        }
        self.to_exec(docker, cwd)?.validate()
    }
}

/// `"terminal": {"apptainer": {...}}` (the `singularity` backend reads the same section).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApptainerSection {
    /// A SIF file, a sandbox directory, or `docker://...`, `docker-daemon:...`,
    /// `oras://...`, `library://...` (built once into `cache_dir`).
    pub image: String,
    /// The client (default: `apptainer`, else `singularity`, on PATH).
    pub binary: Option<String>,
    /// Where built SIFs are kept (default `$APPTAINER_CACHEDIR/hermes-tools`,
    /// else `~/.cache/hermes-tools/apptainer`).
    pub cache_dir: Option<String>,
    /// Per-task writable overlay folders live under it, so a task's files
    /// survive between its commands (default: none, `--writable-tmpfs`).
    pub overlay_dir: Option<String>,
    /// Keep a task's overlay when the task is cleaned up (persistent tasks).
    #[serde(default)]
    pub keep_overlays: bool,
    /// Extra binds, `src[:dst[:ro|rw]]`.
    #[serde(default)]
    pub binds: Vec<String>,
    /// A folder bound at the same path and used as the working directory
    /// (default: the terminal's `cwd` when set).
    pub workspace: Option<String>,
    pub memory: Option<String>,
    pub cpus: Option<f64>,
}

impl ApptainerSection {
    /// The exec layer's config.
    pub fn to_exec(&self, cwd: Option<&str>) -> hermes_exec::apptainer::ApptainerConfig {
        let cache = self
            .cache_dir
            .as_deref()
            .map(expand_home)
            .or_else(|| {
                std::env::var_os("APPTAINER_CACHEDIR")
                    .map(|d| std::path::PathBuf::from(d).join("hermes-tools"))
            })
            .unwrap_or_else(|| expand_home("~/.cache/hermes-tools/apptainer"));
        hermes_exec::apptainer::ApptainerConfig {
            binary: self.binary.as_deref().map(expand_home),
            image: self.image.clone(),
            cache_dir: cache,
            overlay_root: self.overlay_dir.as_deref().map(expand_home),
            keep_overlays: self.keep_overlays,
            binds: self.binds.clone(),
            workspace: self
                .workspace
                .as_deref()
                .map(expand_home)
                .or_else(|| cwd.filter(|c| c.starts_with('/')).map(Into::into)),
            memory: self.memory.clone(),
            cpus: self.cpus,
            share_runs: false,
            ro_binds: Vec::new(),
        }
    }

    /// One-line errors for a section that cannot work.
    pub fn validate(&self, cwd: Option<&str>) -> Result<(), String> {
        self.to_exec(cwd).validate()
    }
}

/// `"terminal": {"daytona": {...}}`: the key and URL default to
/// `DAYTONA_API_KEY` / `DAYTONA_API_URL`.
#[derive(Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DaytonaSection {
    pub api_url: Option<String>,
    pub api_key: Option<String>,
    pub image: Option<String>,
    pub snapshot: Option<String>,
    /// Sandbox names are `<name_prefix><task>` (default `hermes-`).
    pub name_prefix: Option<String>,
    /// Stop the task's sandbox at cleanup (kept for the next session) instead of deleting it.
    #[serde(default)]
    pub persistent: bool,
    pub cpu: Option<u32>,
    /// GiB.
    pub memory: Option<u32>,
    /// GiB.
    pub disk: Option<u32>,
    /// Minutes before Daytona stops an idle sandbox (default 0: never).
    #[serde(default)]
    pub auto_stop_interval: u32,
}

impl std::fmt::Debug for DaytonaSection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DaytonaSection")
            .field("api_url", &self.api_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("image", &self.image)
            .field("persistent", &self.persistent)
            .finish()
    }
}

impl DaytonaSection {
    /// The exec layer's config (credentials from the environment when not given).
    pub fn to_exec(&self) -> hermes_exec::daytona::DaytonaConfig {
        hermes_exec::daytona::DaytonaConfig {
            api_url: self
                .api_url
                .clone()
                .or_else(|| std::env::var("DAYTONA_API_URL").ok())
                .unwrap_or_else(|| "https://app.daytona.io/api".into()),
            api_key: self
                .api_key
                .clone()
                .or_else(|| std::env::var("DAYTONA_API_KEY").ok())
                .unwrap_or_default(),
            image: self.image.clone(),
            snapshot: self.snapshot.clone(),
            name_prefix: self.name_prefix.clone().unwrap_or_else(|| "hermes-".into()),
            persistent: self.persistent,
            cpu: self.cpu,
            memory_gb: self.memory,
            disk_gb: self.disk,
            auto_stop_minutes: self.auto_stop_interval,
        }
    }
}

/// `"terminal": {"modal": {...}}`: the token defaults to `MODAL_TOKEN_ID` /
/// `MODAL_TOKEN_SECRET`, the URL to `MODAL_SERVER_URL`, else
/// `https://api.modal.com`.
#[derive(Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModalSection {
    pub api_url: Option<String>,
    pub token_id: Option<String>,
    pub token_secret: Option<String>,
    /// The app sandboxes belong to (default `hermes-tools`, made when missing).
    pub app: Option<String>,
    /// The Modal environment (default: the account's, or `MODAL_ENVIRONMENT`).
    pub environment: Option<String>,
    /// A registry image (default `python:3.12-slim`).
    pub image: Option<String>,
    /// Cores (fractions allowed).
    pub cpu: Option<f64>,
    /// MiB.
    pub memory_mb: Option<u32>,
    /// The sandbox's lifetime in seconds (default 3600).
    pub timeout: Option<u32>,
    /// Network access from the sandbox (default false: blocked).
    #[serde(default)]
    pub network: bool,
    /// The image builder version (default: the environment's).
    pub builder_version: Option<String>,
}

impl std::fmt::Debug for ModalSection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModalSection")
            .field("api_url", &self.api_url)
            .field("token_id", &self.token_id.as_ref().map(|_| "<redacted>"))
            .field(
                "token_secret",
                &self.token_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("app", &self.app)
            .field("image", &self.image)
            .field("network", &self.network)
            .finish()
    }
}

#[cfg(feature = "modal")]
impl ModalSection {
    /// The exec layer's config (token, URL and environment from the
    /// process environment when not given).
    pub fn to_exec(&self) -> hermes_exec::modal::ModalConfig {
        let d = hermes_exec::modal::ModalConfig::default();
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        hermes_exec::modal::ModalConfig {
            api_url: self
                .api_url
                .clone()
                .or_else(|| var("MODAL_SERVER_URL"))
                .unwrap_or(d.api_url),
            token_id: self
                .token_id
                .clone()
                .or_else(|| var("MODAL_TOKEN_ID"))
                .unwrap_or_default(),
            token_secret: self
                .token_secret
                .clone()
                .or_else(|| var("MODAL_TOKEN_SECRET"))
                .unwrap_or_default(),
            app: self.app.clone().unwrap_or(d.app),
            environment: self
                .environment
                .clone()
                .or_else(|| var("MODAL_ENVIRONMENT"))
                .unwrap_or_default(),
            image: self.image.clone().unwrap_or(d.image),
            cpu: self.cpu,
            memory_mb: self.memory_mb,
            timeout_secs: self.timeout.unwrap_or(d.timeout_secs),
            network: self.network,
            builder_version: self
                .builder_version
                .clone()
                .or_else(|| var("MODAL_IMAGE_BUILDER_VERSION")),
        }
    }
}

impl ModalSection {
    /// One-line errors for a section that cannot work (a build without the
    /// backend says which Cargo feature it lacks).
    pub fn validate(&self) -> Result<(), String> {
        #[cfg(feature = "modal")]
        {
            self.to_exec().validate()
        }
        #[cfg(not(feature = "modal"))]
        {
            Err(MODAL_MISSING.into())
        }
    }
}

/// What a build without the modal backend says.
pub const MODAL_MISSING: &str =
    "terminal.backend 'modal': this build has no modal backend (Cargo feature `modal`)";

/// `"terminal": {"ssh": {...}}`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SshSection {
    pub host: String,
    pub port: Option<u16>,
    pub user: Option<String>,
    pub identity_file: Option<String>,
    pub known_hosts: Option<String>,
    #[serde(default)]
    pub accept_new_host_keys: bool,
    #[serde(default)]
    pub options: Vec<String>,
    /// Seconds.
    pub connect_timeout: Option<u64>,
    /// Seconds the master connection stays up without commands.
    pub control_persist: Option<u64>,
    /// Master connections (one per task) kept up at once (default 16).
    pub max_connections: Option<usize>,
}

impl SshSection {
    /// The exec layer's config (`~` in paths is this machine's home).
    pub fn to_exec(&self) -> hermes_exec::ssh::SshConfig {
        let d = hermes_exec::ssh::SshConfig::default();
        let path = |p: &Option<String>| p.as_deref().map(expand_home);
        hermes_exec::ssh::SshConfig {
            host: self.host.clone(),
            port: self.port.unwrap_or(d.port),
            user: self.user.clone(),
            identity_file: path(&self.identity_file),
            known_hosts: path(&self.known_hosts),
            accept_new_host_keys: self.accept_new_host_keys,
            options: self.options.clone(),
            connect_timeout: self.connect_timeout.unwrap_or(d.connect_timeout),
            control_persist: self.control_persist.unwrap_or(d.control_persist),
            max_connections: self.max_connections.unwrap_or(d.max_connections),
        }
    }

    /// One-line errors for a section that cannot work.
    pub fn validate(&self) -> Result<(), String> {
        self.to_exec().validate()
    }
}

impl Default for TerminalConfig {
    fn default() -> Self {
        TerminalConfig {
            backend: "auto".into(),
            cwd: None,
            timeout: 180,
            env: BTreeMap::new(),
            max_output_chars: 50_000,
            network: NetworkSetting::Off,
            secrets: BTreeMap::new(),
            spill_dir: None,
            max_foreground_timeout: 600,
            kill_grace: 1.0,
            max_processes: 64,
            finished_ttl: 1800,
            process_buffer_chars: 200_000,
            background_timeout: 0,
            watch_interval: 15.0,
            stream_output: true,
            env_passthrough: Vec::new(),
            env_inherit: "core".into(),
            protect_host: false,
            sandbox_ro_binds: Vec::new(),
            sandbox_rw_binds: Vec::new(),
            sandbox_limits: SandboxLimitsSection::default(),
            ssh: None,
            docker: None,
            swarm: None,
            apptainer: None,
            daytona: None,
            modal: None,
            host_envs: HostEnvs::default(),
            code_runs: None,
        }
    }
}

/// `~` and `~/...` in a path of this machine.
fn expand_home(p: &str) -> std::path::PathBuf {
    if let Some(rest) = p.strip_prefix('~')
        && let Ok(home) = std::env::var("HOME")
    {
        return std::path::PathBuf::from(format!("{home}{rest}"));
    }
    std::path::PathBuf::from(p)
}

/// `terminal.network`: `"off"` | `false`, `"on"` | `true`, or
/// `{"allow": [...], "deny": [...], "ask": bool, "hosts": {...}}`.
/// Anything else is an error (never read as "on").
#[derive(Clone, Debug, Default)]
pub enum NetworkSetting {
    #[default]
    Off,
    On,
    AllowList(NetworkPolicySection),
}

/// The allow-list form of `terminal.network` (rules: see
/// `hermes_exec::netproxy::policy`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkPolicySection {
    /// Host names (`api.example.com`), `*.domain` (names below it) and IP
    /// addresses or ranges (`10.0.0.0/8`) the sandbox may reach.
    #[serde(default)]
    pub allow: Vec<String>,
    /// The same kinds of rule, refused whatever `allow` says.
    #[serde(default)]
    pub deny: Vec<String>,
    /// Put a name no rule allows to the approval handler (approved: reachable
    /// for the rest of the runtime's life).
    #[serde(default)]
    pub ask: bool,
    /// Names the proxy answers from this table instead of DNS (name to one
    /// address or a list), like /etc/hosts; their addresses may be private.
    #[serde(default)]
    pub hosts: BTreeMap<String, OneOrMany>,
    /// PEM files of certificate authorities trusted, beside the system's,
    /// for the upstreams the proxy makes TLS to itself (HTTPS to a
    /// secret's host): a private PKI, or a test's.
    #[serde(default)]
    pub upstream_ca: Vec<String>,
}

/// A string or a list of strings.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl NetworkPolicySection {
    /// The exec layer's rules; errors name the rule.
    pub fn rules(&self) -> Result<hermes_exec::netproxy::Rules, String> {
        let hosts = self
            .hosts
            .iter()
            .map(|(k, v)| {
                let v = match v {
                    OneOrMany::One(s) => vec![s.clone()],
                    OneOrMany::Many(v) => v.clone(),
                };
                (k.clone(), v)
            })
            .collect();
        let mut rules =
            hermes_exec::netproxy::Rules::new(&self.allow, &self.deny, self.ask, &hosts)
                .map_err(|e| format!("terminal.network.{e}"))?;
        for f in &self.upstream_ca {
            let p = expand_home(f);
            let pem = std::fs::read(&p).map_err(|e| {
                format!(
                    "terminal.network.upstream_ca: cannot read {}: {e}",
                    p.display()
                )
            })?;
            if !pem.windows(27).any(|w| w == b"-----BEGIN CERTIFICATE-----") {
                return Err(format!(
                    "terminal.network.upstream_ca: {} holds no PEM certificate",
                    p.display()
                ));
            }
            rules.upstream_ca.push(pem);
        }
        Ok(rules)
    }
}

impl NetworkSetting {
    /// The sandbox shares the host's network (`"on"`).
    pub fn host_network(&self) -> bool {
        matches!(self, NetworkSetting::On)
    }
    /// Some network reaches out (`"on"` or an allow-list): what the approval
    /// engine is told (an allow-list still lets data out to its hosts).
    pub fn any(&self) -> bool {
        !matches!(self, NetworkSetting::Off)
    }
    /// The allow-list, if that is the setting.
    pub fn allow_list(&self) -> Option<&NetworkPolicySection> {
        match self {
            NetworkSetting::AllowList(p) => Some(p),
            _ => None,
        }
    }
    /// One line for `doctor` and errors.
    pub fn describe(&self) -> String {
        match self {
            NetworkSetting::Off => "off (no network in the sandbox)".into(),
            NetworkSetting::On => "on (the sandbox shares this machine's network)".into(),
            NetworkSetting::AllowList(p) => match p.rules() {
                Ok(r) => format!("allow-list through the runtime's proxy: {}", r.describe()),
                Err(e) => format!("invalid: {e}"),
            },
        }
    }
}

impl<'de> Deserialize<'de> for NetworkSetting {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        use serde::de::Error as _;
        let v = serde_json::Value::deserialize(d)?;
        match v {
            serde_json::Value::Bool(false) => Ok(NetworkSetting::Off),
            serde_json::Value::Bool(true) => Ok(NetworkSetting::On),
            serde_json::Value::String(s) if s == "off" => Ok(NetworkSetting::Off),
            serde_json::Value::String(s) if s == "on" => Ok(NetworkSetting::On),
            v @ serde_json::Value::Object(_) => {
                let p: NetworkPolicySection = serde_json::from_value(v)
                    .map_err(|e| D::Error::custom(format!("terminal.network: {e}")))?;
                p.rules().map_err(D::Error::custom)?;
                Ok(NetworkSetting::AllowList(p))
            }
            other => Err(D::Error::custom(format!(
                "terminal.network: {other} is not a network policy (\"off\", \"on\", or {{\"allow\": [...], \"deny\": [...]}})"
            ))),
        }
    }
}

/// `terminal.secrets.<NAME>`: where the value comes from (exactly one of
/// `env`, a variable of this process, and `file`, whose content minus a
/// final line break is the value) and the hosts it may be sent to.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecretSection {
    pub env: Option<String>,
    pub file: Option<String>,
    pub hosts: Vec<String>,
}

impl SecretSection {
    /// The exec layer's secret (reads the value now): errors name it.
    pub fn load(&self, name: &str) -> Result<hermes_exec::netproxy::Secret, String> {
        let valid = !name.is_empty()
            && !name.as_bytes()[0].is_ascii_digit()
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if !valid {
            return Err(format!(
                "terminal.secrets: '{name}' is not a valid variable name"
            ));
        }
        let (value, unset) = match (&self.env, &self.file) {
            (Some(var), None) => match std::env::var(var) {
                Ok(v) => (v, vec![var.clone()]),
                Err(_) => {
                    return Err(format!(
                        "terminal.secrets.{name}: the variable {var} is not set in this process"
                    ));
                }
            },
            (None, Some(f)) => {
                let p = expand_home(f);
                match std::fs::read_to_string(&p) {
                    Ok(t) => (
                        t.strip_suffix('\n')
                            .map(|t| t.strip_suffix('\r').unwrap_or(t))
                            .unwrap_or(&t)
                            .to_string(),
                        vec![],
                    ),
                    Err(e) => {
                        return Err(format!(
                            "terminal.secrets.{name}: cannot read {}: {e}",
                            p.display()
                        ));
                    }
                }
            }
            _ => {
                return Err(format!(
                    "terminal.secrets.{name}: name exactly one source, \"env\" or \"file\""
                ));
            }
        };
        hermes_exec::netproxy::Secret::new(name, value, &self.hosts, unset)
            .map_err(|e| format!("terminal.{e}"))
    }
}
