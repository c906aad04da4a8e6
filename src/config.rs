//! Runtime configuration (`ht_runtime_new`'s JSON). `{}` means defaults with
//! nothing built-in switched on. Unknown keys are errors naming the key, so a
//! typo never silently changes behaviour.

use serde::Deserialize;
use std::collections::BTreeMap;

use crate::error::{Error, Result};

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Built-in toolsets to switch on: "terminal", "file", "todo", "memory", "skills".
    pub builtin_toolsets: Vec<String>,
    pub terminal: TerminalConfig,
    pub approvals: ApprovalsConfig,
    pub dispatch: DispatchConfig,
    pub availability: AvailabilityConfig,
    pub data_dir: Option<String>,
    pub skills_dir: Option<String>,
    pub workspace_root: Option<String>,
    /// Minimum level forwarded to the host log handler: error|warn|info|debug|trace.
    pub log_level: Option<String>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TerminalConfig {
    /// "local" or "sandbox".
    pub backend: String,
    pub cwd: Option<String>,
    /// Default foreground timeout in seconds.
    pub timeout: u64,
    pub env: BTreeMap<String, String>,
    /// Output cap in characters for a foreground command (head + tail kept).
    pub max_output_chars: usize,
    /// Sandbox backend: allow network access.
    pub network: bool,
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
    /// Host variables passed to commands although their names look secret.
    pub env_passthrough: Vec<String>,
    /// Sandbox backend: extra read-only binds.
    pub sandbox_ro_binds: Vec<String>,
    /// Sandbox backend: extra writable binds.
    pub sandbox_rw_binds: Vec<String>,
}

impl Default for TerminalConfig {
    fn default() -> Self {
        TerminalConfig {
            backend: "local".into(),
            cwd: None,
            timeout: 180,
            env: BTreeMap::new(),
            max_output_chars: 50_000,
            network: false,
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
            sandbox_ro_binds: Vec::new(),
            sandbox_rw_binds: Vec::new(),
        }
    }
}

/// The `approvals` section: mode, allowlist file, non-interactive policy,
/// timeout, deny rules, extra engine rules and exemptions.
pub type ApprovalsConfig = crate::approval::PolicyConfig;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DispatchConfig {
    /// Default per-call timeout in seconds for host handlers (0 = none).
    pub timeout: f64,
    /// Seconds to wait for a hook decision before continuing without it.
    pub hook_timeout: f64,
    /// Default result cap in characters for tools that do not set their own.
    pub max_result_size_chars: usize,
    /// Worker threads for a parallel batch segment.
    pub max_parallel: usize,
}

impl Default for DispatchConfig {
    fn default() -> Self {
        DispatchConfig {
            timeout: 300.0,
            hook_timeout: 30.0,
            max_result_size_chars: 100_000,
            max_parallel: 8,
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AvailabilityConfig {
    /// How long a check result is trusted, in seconds.
    pub ttl: f64,
    /// A check that fails within this many seconds of a success still counts as available.
    pub failure_grace: f64,
    /// How long definitions wait for checks before treating them as unavailable, in ms.
    pub check_timeout_ms: u64,
}

impl Default for AvailabilityConfig {
    fn default() -> Self {
        AvailabilityConfig {
            ttl: 30.0,
            failure_grace: 60.0,
            check_timeout_ms: 250,
        }
    }
}

pub const BUILTIN_TOOLSETS: &[&str] = &["terminal", "file", "todo", "memory", "skills"];

impl Config {
    pub fn parse(text: &str) -> Result<Config> {
        let text = if text.trim().is_empty() { "{}" } else { text };
        let cfg: Config =
            serde_json::from_str(text).map_err(|e| Error::json(format!("runtime config: {e}")))?;
        for name in &cfg.builtin_toolsets {
            if !BUILTIN_TOOLSETS.contains(&name.as_str()) {
                return Err(Error::invalid(format!(
                    "runtime config: builtin_toolsets: unknown toolset '{name}' (known: {})",
                    BUILTIN_TOOLSETS.join(", ")
                )));
            }
        }
        match cfg.terminal.backend.as_str() {
            "local" | "sandbox" => {}
            other => {
                return Err(Error::invalid(format!(
                    "runtime config: terminal.backend: unknown backend '{other}' (local, sandbox)"
                )));
            }
        }
        // Every duration is bounded so that no deadline can overflow.
        use crate::error::seconds;
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
        if cfg.dispatch.max_result_size_chars < 1000 {
            return Err(Error::invalid(
                "runtime config: dispatch.max_result_size_chars must be >= 1000",
            ));
        }
        if let Some(level) = &cfg.log_level
            && crate::logging::parse_level(level).is_none()
        {
            return Err(Error::invalid(format!(
                "runtime config: log_level: unknown level '{level}' (error, warn, info, debug, trace)"
            )));
        }
        Ok(cfg)
    }
}
