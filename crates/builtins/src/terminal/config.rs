//! The terminal toolset's config (`"terminal": {...}` in the runtime config).

use serde::Deserialize;
use std::collections::BTreeMap;

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
