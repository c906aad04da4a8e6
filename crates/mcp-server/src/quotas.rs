//! One MCP session's quotas and settings, and the task id of an HTTP
//! session: plain data the server's shared state, its calls and its session
//! manager all use (a leaf, so none of them imports another in a circle).

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use parking_lot::Mutex;
#[allow(deprecated)] // logging is deprecated by a 2026 draft, still in 2025-11-25
use rmcp::model::LoggingLevel;

/// The task id of the HTTP session `id` (its `mcp-session-id`).
pub(crate) fn task_of_session(id: &str) -> String {
    let clean: String = id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .take(40)
        .collect();
    format!("mcp-{clean}")
}

/// One session's quotas and settings (stdio's one session has one too).
pub(crate) struct Session {
    /// Calls running: a permit per call, `session_max_calls` in all.
    pub calls: Arc<tokio::sync::Semaphore>,
    /// Held while a background start is checked against the quota and
    /// made, so two concurrent starts cannot both pass the check.
    pub spawning: tokio::sync::Mutex<()>,
    /// The level `logging/setLevel` chose (None: no log messages).
    #[allow(deprecated)]
    pub log_level: Mutex<Option<LoggingLevel>>,
    /// The session ended (DELETE, the client left): a call still running
    /// cleans the task up again when it ends, so a background process it
    /// started after the session's cleanup does not outlive it.
    pub closed: AtomicBool,
}

impl Session {
    pub fn new(max_calls: usize) -> Session {
        Session {
            calls: Arc::new(tokio::sync::Semaphore::new(max_calls)),
            spawning: tokio::sync::Mutex::new(()),
            log_level: Mutex::new(None),
            closed: AtomicBool::new(false),
        }
    }

    /// Whether a call is running.
    pub fn busy(&self, max_calls: usize) -> bool {
        self.calls.available_permits() < max_calls
    }
}
