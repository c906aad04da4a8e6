//! Runtime configuration (`ht_runtime_new`'s JSON). `{}` means defaults with
//! nothing built-in switched on. Unknown keys are errors naming the key, so a
//! typo never silently changes behaviour.

use serde::Deserialize;
use std::collections::BTreeMap;

pub use hermes_builtins::code::CodeConfig;
pub use hermes_builtins::file::FileConfig;
pub use hermes_builtins::memory::MemoryConfig;
pub use hermes_builtins::skills::SkillsConfig;
pub use hermes_builtins::terminal::TerminalConfig;
pub use hermes_core::config::{AvailabilityConfig, DispatchConfig, LimitsConfig};
use hermes_core::error::{Error, Result};
#[cfg(feature = "mcp-client")]
pub use hermes_mcp_client::ServerConfig as McpServerConfig;
/// Without the `mcp-client` feature an MCP server's config is kept as JSON
/// only to name it in the error: such a build refuses any server.
#[cfg(not(feature = "mcp-client"))]
pub type McpServerConfig = serde_json::Value;

/// Log levels a config may name.
pub const LOG_LEVELS: &[&str] = &["error", "warn", "info", "debug", "trace"];

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Built-in toolsets to switch on: "terminal", "file", "todo", "memory",
    /// "skills", and "tool_search" (loads definitions a schema budget deferred).
    pub builtin_toolsets: Vec<String>,
    pub terminal: TerminalConfig,
    /// The file toolset's limits.
    pub file: FileConfig,
    /// The memory toolset's store folder and limits.
    pub memory: MemoryConfig,
    /// The skills toolset's extra folders and guard.
    pub skills: SkillsConfig,
    /// execute_code's limits (`code_execution` toolset).
    pub code_execution: CodeConfig,
    pub approvals: ApprovalsConfig,
    pub dispatch: DispatchConfig,
    pub availability: AvailabilityConfig,
    /// Caps on what a host or a model can make the library hold.
    pub limits: LimitsConfig,
    /// The runtime's data folder (memories, default skills folder);
    /// default `$HERMES_HOME`, else `~/.hermes`, as the original.
    pub data_dir: Option<String>,
    /// Where skills live and skill_manage writes (default `<data_dir>/skills`).
    pub skills_dir: Option<String>,
    /// File tools refuse paths outside this folder (symlinks resolved).
    pub workspace_root: Option<String>,
    /// Minimum level forwarded to the host log handler: error|warn|info|debug|trace.
    pub log_level: Option<String>,
    /// MCP servers whose tools become toolsets `mcp-<name>` (docs/json-shapes.md).
    pub mcp_servers: BTreeMap<String, McpServerConfig>,
    /// Why `terminal.backend: "auto"` fell back to local (the runtime warns).
    #[serde(skip)]
    pub backend_fallback: Option<String>,
    /// Plugin libraries loaded when the C runtime is created (`ht_runtime_new`):
    /// `["/path/libfoo.so", ...]` or `{"paths": [...], "dirs": [...]}`.
    pub plugins: PluginsConfig,
}

/// The `plugins` key: shared libraries exporting `ht_plugin_init`. Either a
/// list of paths or `{"paths": [...], "dirs": [...]}` (every `*.so` of each
/// folder, in name order). The loading itself is the C layer's (crates/ffi
/// plugin.rs): a plugin registers through the C ABI.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PluginsConfig {
    pub paths: Vec<String>,
    pub dirs: Vec<String>,
}

impl<'de> Deserialize<'de> for PluginsConfig {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Object {
            #[serde(default)]
            paths: Vec<String>,
            #[serde(default)]
            dirs: Vec<String>,
        }
        let v = serde_json::Value::deserialize(d)?;
        if v.is_array() {
            let paths: Vec<String> = serde_json::from_value(v).map_err(|e| {
                serde::de::Error::custom(format!("plugins: a list of library paths ({e})"))
            })?;
            return Ok(PluginsConfig {
                paths,
                dirs: Vec::new(),
            });
        }
        let o: Object = serde_json::from_value(v).map_err(|e| {
            serde::de::Error::custom(format!(
                "plugins: a list of paths or {{\"paths\": [...], \"dirs\": [...]}} ({e})"
            ))
        })?;
        Ok(PluginsConfig {
            paths: o.paths,
            dirs: o.dirs,
        })
    }
}

impl PluginsConfig {
    /// The libraries to load, in order: `paths` (with `~` expanded), then the
    /// `*.so` files of each of `dirs` sorted by name. A folder that cannot be
    /// read is an error naming it; a missing file is reported by the loader.
    pub fn files(&self) -> Result<Vec<std::path::PathBuf>> {
        let mut out: Vec<std::path::PathBuf> =
            self.paths.iter().map(|p| expand_home(p).into()).collect();
        for dir in &self.dirs {
            let d = expand_home(dir);
            let entries = std::fs::read_dir(&d).map_err(|e| {
                Error::invalid(format!("runtime config: plugins.dirs: '{dir}': {e}"))
            })?;
            let mut libs: Vec<std::path::PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "so") && p.is_file())
                .collect();
            libs.sort();
            out.extend(libs);
        }
        Ok(out)
    }
}

/// The `approvals` section: mode, allowlist file, non-interactive policy,
/// timeout, deny rules, extra engine rules and exemptions.
pub type ApprovalsConfig = hermes_approval::PolicyConfig;

pub const BUILTIN_TOOLSETS: &[&str] = &[
    "terminal",
    "file",
    "todo",
    "memory",
    "skills",
    "tool_search",
    "code_execution",
];

impl Config {
    pub fn parse(text: &str) -> Result<Config> {
        Config::parse_with_environments(text, Vec::new())
    }

    /// [`Config::parse`] for a runtime that also has the host's own
    /// environments: `terminal.backend` may name one of them.
    pub fn parse_with_environments(
        text: &str,
        envs: Vec<std::sync::Arc<hermes_exec::host::HostEnv>>,
    ) -> Result<Config> {
        let text = if text.trim().is_empty() { "{}" } else { text };
        let mut cfg: Config =
            serde_json::from_str(text).map_err(|e| Error::json(format!("runtime config: {e}")))?;
        {
            use hermes_exec::Environment;
            let mut seen = std::collections::BTreeSet::new();
            for e in &envs {
                if !seen.insert(e.name()) {
                    return Err(Error::invalid(format!(
                        "environments: '{}' is given twice",
                        e.name()
                    )));
                }
            }
        }
        cfg.terminal.host_envs = hermes_builtins::terminal::HostEnvs(envs);
        #[cfg(feature = "mcp-client")]
        {
            cfg.mcp_servers = std::mem::take(&mut cfg.mcp_servers)
                .into_iter()
                .map(|(name, server)| server.validate(&name).map(|s| (name, s)))
                .collect::<Result<_>>()?;
        }
        #[cfg(not(feature = "mcp-client"))]
        if let Some(name) = cfg.mcp_servers.keys().next() {
            return Err(Error::invalid(format!(
                "runtime config: mcp_servers.{name}: {}",
                crate::mcp_off::WHY
            )));
        }
        for name in &cfg.builtin_toolsets {
            if !BUILTIN_TOOLSETS.contains(&name.as_str()) {
                return Err(Error::invalid(format!(
                    "runtime config: builtin_toolsets: unknown toolset '{name}' (known: {})",
                    BUILTIN_TOOLSETS.join(", ")
                )));
            }
        }
        cfg.backend_fallback = hermes_builtins::terminal::resolve_auto_backend(&mut cfg.terminal);
        match cfg.terminal.backend.as_str() {
            "local" | "sandbox" => {}
            "ssh" => match &cfg.terminal.ssh {
                None => {
                    return Err(Error::invalid(
                        "runtime config: terminal.backend 'ssh' needs a terminal.ssh section with at least \"host\"",
                    ));
                }
                Some(s) => s
                    .validate()
                    .map_err(|e| Error::invalid(format!("runtime config: {e}")))?,
            },
            "docker" | "podman" => match &cfg.terminal.docker {
                None => {
                    return Err(Error::invalid(
                        "runtime config: terminal.backend 'docker'/'podman' needs a terminal.docker section with at least \"image\"",
                    ));
                }
                Some(s) => s
                    .validate(&cfg.terminal.backend, cfg.terminal.cwd.as_deref())
                    .map_err(|e| Error::invalid(format!("runtime config: {e}")))?,
            },
            "swarm" => match &cfg.terminal.docker {
                None => {
                    return Err(Error::invalid(
                        "runtime config: terminal.backend 'swarm' needs a terminal.docker section with at least \"image\" (and \"host\": a swarm manager)",
                    ));
                }
                Some(d) => cfg
                    .terminal
                    .swarm
                    .clone()
                    .unwrap_or_default()
                    .validate(d, cfg.terminal.cwd.as_deref())
                    .map_err(|e| Error::invalid(format!("runtime config: {e}")))?,
            },
            "apptainer" | "singularity" => match &cfg.terminal.apptainer {
                None => {
                    return Err(Error::invalid(
                        "runtime config: terminal.backend 'apptainer'/'singularity' needs a terminal.apptainer section with at least \"image\"",
                    ));
                }
                Some(s) => s
                    .validate(cfg.terminal.cwd.as_deref())
                    .map_err(|e| Error::invalid(format!("runtime config: {e}")))?,
            },
            "daytona" => cfg
                .terminal
                .daytona
                .clone()
                .unwrap_or_default()
                .to_exec()
                .validate()
                .map_err(|e| Error::invalid(format!("runtime config: {e}")))?,
            "modal" => cfg
                .terminal
                .modal
                .clone()
                .unwrap_or_default()
                .validate()
                .map_err(|e| Error::invalid(format!("runtime config: {e}")))?,
            other if cfg.terminal.host_env(other).is_some() => {}
            other => {
                return Err(Error::invalid(format!(
                    "runtime config: terminal.backend: unknown backend '{other}' (auto, local, sandbox, ssh, docker, podman, swarm, apptainer, singularity, modal, daytona, or an environment the host registered)"
                )));
            }
        }
        // Every duration is bounded so that no deadline can overflow.
        use hermes_core::error::seconds;
        let c = "runtime config";
        seconds(
            &format!("{c}: dispatch.timeout"),
            cfg.dispatch.timeout,
            true,
        )?;
        seconds(
            &format!("{c}: dispatch.hook_timeout"),
            cfg.dispatch.hook_timeout,
            false,
        )?;
        seconds(
            &format!("{c}: availability.ttl"),
            cfg.availability.ttl,
            true,
        )?;
        seconds(
            &format!("{c}: availability.failure_grace"),
            cfg.availability.failure_grace,
            true,
        )?;
        seconds(
            &format!("{c}: availability.check_timeout_ms"),
            cfg.availability.check_timeout_ms as f64 / 1000.0,
            true,
        )?;
        seconds(
            &format!("{c}: approvals.timeout"),
            cfg.approvals.timeout as f64,
            false,
        )?;
        for (key, v) in [
            ("terminal.timeout", cfg.terminal.timeout),
            (
                "terminal.max_foreground_timeout",
                cfg.terminal.max_foreground_timeout,
            ),
            (
                "terminal.background_timeout",
                cfg.terminal.background_timeout,
            ),
            ("terminal.finished_ttl", cfg.terminal.finished_ttl),
        ] {
            seconds(&format!("{c}: {key}"), v as f64, true)?;
        }
        for (key, v) in [
            ("terminal.kill_grace", cfg.terminal.kill_grace),
            ("terminal.watch_interval", cfg.terminal.watch_interval),
        ] {
            seconds(&format!("{c}: {key}"), v, true)?;
        }
        if cfg.file.max_lines == 0
            || cfg.file.max_read_chars < 1000
            || cfg.file.max_line_length == 0
        {
            return Err(Error::invalid(
                "runtime config: file: max_lines and max_line_length must be positive, max_read_chars >= 1000",
            ));
        }
        if let Some(root) = &cfg.workspace_root
            && !std::path::Path::new(&expand_home(root)).is_dir()
        {
            return Err(Error::invalid(format!(
                "runtime config: workspace_root: '{root}' is not a directory"
            )));
        }
        if cfg.dispatch.max_result_size_chars < 1000 {
            return Err(Error::invalid(
                "runtime config: dispatch.max_result_size_chars must be >= 1000",
            ));
        }
        if let Some(level) = &cfg.log_level
            && !LOG_LEVELS.contains(&level.to_ascii_lowercase().as_str())
        {
            return Err(Error::invalid(format!(
                "runtime config: log_level: unknown level '{level}' (error, warn, info, debug, trace)"
            )));
        }
        Ok(cfg)
    }
}

/// `~` and `~/...` against `$HOME`.
pub fn expand_home(p: &str) -> String {
    if (p == "~" || p.starts_with("~/"))
        && let Some(home) = std::env::var_os("HOME")
    {
        return format!("{}{}", home.to_string_lossy(), &p[1..]);
    }
    p.to_string()
}

impl Config {
    /// The data folder: `data_dir`, else `$HERMES_HOME`, else `~/.hermes`.
    pub fn data_dir(&self) -> std::path::PathBuf {
        if let Some(d) = &self.data_dir {
            return expand_home(d).into();
        }
        if let Some(h) = std::env::var_os("HERMES_HOME").filter(|h| !h.is_empty()) {
            return h.into();
        }
        std::path::PathBuf::from(expand_home("~/.hermes"))
    }

    /// The skills folder: `skills_dir`, else `<data_dir>/skills`.
    pub fn skills_dir(&self) -> std::path::PathBuf {
        match &self.skills_dir {
            Some(d) => expand_home(d).into(),
            None => self.data_dir().join("skills"),
        }
    }

    /// The memories folder: `memory.dir`, else `<data_dir>/memories`.
    pub fn memory_dir(&self) -> std::path::PathBuf {
        match &self.memory.dir {
            Some(d) => expand_home(d).into(),
            None => self.data_dir().join("memories"),
        }
    }
}
