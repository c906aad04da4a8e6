//! The calls in flight through the server, each under a `tool_call_id` the
//! server gives it (`mcp-<n>`). Approval requests and progress reports name
//! their call by that id; this table finds the client that made it, so one
//! runtime can serve many MCP sessions (HTTP) and still ask, and report to,
//! the right one.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use parking_lot::Mutex;
#[allow(deprecated)] // logging is deprecated by a 2026 draft, still in 2025-11-25
use rmcp::model::LoggingMessageNotificationParam;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// How long a call's result waits for its progress notifications to be
/// written (a client that stopped reading must not hold the result).
const FLUSH_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// One call in flight.
pub(crate) struct Live {
    /// The client that made the call.
    pub peer: Peer<RoleServer>,
    /// The client's `_meta.progressToken`, when it asked for progress.
    pub token: Option<ProgressToken>,
    /// The tool reported progress itself: the server's heartbeat stops, so
    /// the values the client sees keep rising.
    pub tool_reports: AtomicBool,
    /// The session the call belongs to (its log level).
    pub session: Arc<crate::quotas::Session>,
    /// The call's progress and log notifications, in the order they were
    /// made: one task writes them, and the result waits for it
    /// ([`Entry::finish`]), so no report arrives after the result it
    /// belongs to. `None` once the call ended, or when the client asked
    /// for neither progress nor log messages.
    progress: Mutex<Option<mpsc::UnboundedSender<Note>>>,
}

/// A notification of one call.
#[allow(deprecated)]
pub(crate) enum Note {
    Progress(ProgressNotificationParam),
    Log(LoggingMessageNotificationParam),
}

impl Live {
    /// Queue a progress notification for the client; false when the call
    /// has ended, the client is gone or asked for no progress.
    pub fn report(&self, p: ProgressNotificationParam) -> bool {
        self.token.is_some()
            && self
                .progress
                .lock()
                .as_ref()
                .is_some_and(|tx| tx.send(Note::Progress(p)).is_ok())
    }

    /// Queue a log message of the call (the caller checked the level).
    #[allow(deprecated)]
    pub fn log(&self, m: LoggingMessageNotificationParam) -> bool {
        self.progress
            .lock()
            .as_ref()
            .is_some_and(|tx| tx.send(Note::Log(m)).is_ok())
    }
}

/// A call id: `mcp-` and 128 random bits. The runtime routes a call's
/// approval requests, client requests and log lines by its `tool_call_id`,
/// which a host's own dispatch (or a model's batch) may also set: ids
/// numbered per server (`mcp-1`, ...) were guessed, and two servers on one
/// runtime shared them. A random id is a capability nobody else can name.
fn new_call_id() -> String {
    let mut b = [0u8; 16];
    if getrandom::fill(&mut b).is_err() {
        // No randomness (should not happen on Linux): unique, not secret.
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        b[..8].copy_from_slice(&n.to_le_bytes());
        b[8..].copy_from_slice(&std::process::id().to_le_bytes().repeat(2));
    }
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!("mcp-{hex}")
}

#[derive(Default)]
pub(crate) struct Calls {
    map: Mutex<HashMap<String, Arc<Live>>>,
}

/// Removes its call from the table when the call ends (any way it ends).
pub(crate) struct Entry<'a> {
    calls: &'a Calls,
    pub id: String,
    pub live: Arc<Live>,
    /// The task writing the call's progress notifications.
    writer: Option<JoinHandle<()>>,
}

impl Entry<'_> {
    /// End the call's progress: no more reports are taken, and the ones
    /// made are written before the caller sends the result (those not
    /// written within [`FLUSH_WAIT`] are dropped).
    pub async fn finish(mut self) {
        self.live.progress.lock().take();
        if let Some(mut w) = self.writer.take()
            && tokio::time::timeout(FLUSH_WAIT, &mut w).await.is_err()
        {
            // Dropped rather than written after the result.
            w.abort();
            tracing::debug!(call = %self.id, "progress notifications not written in time: dropped");
        }
    }
}

impl Drop for Entry<'_> {
    fn drop(&mut self) {
        self.calls.map.lock().remove(&self.id);
    }
}

impl Calls {
    /// A new call; on a tokio runtime (its progress writer is a task).
    pub fn begin(
        &self,
        peer: Peer<RoleServer>,
        token: Option<ProgressToken>,
        session: Arc<crate::quotas::Session>,
    ) -> Entry<'_> {
        let id = new_call_id();
        let wanted = token.is_some() || session.log_level.lock().is_some();
        let (tx, writer) = if wanted {
            let (tx, mut rx) = mpsc::unbounded_channel::<Note>();
            let peer = peer.clone();
            let writer = tokio::spawn(async move {
                while let Some(n) = rx.recv().await {
                    let sent = match n {
                        Note::Progress(p) => peer.notify_progress(p).await,
                        #[allow(deprecated)]
                        Note::Log(m) => peer.notify_logging_message(m).await,
                    };
                    if sent.is_err() {
                        return;
                    }
                }
            });
            (Some(tx), Some(writer))
        } else {
            (None, None)
        };
        let live = Arc::new(Live {
            peer,
            token,
            tool_reports: AtomicBool::new(false),
            session,
            progress: Mutex::new(tx),
        });
        self.map.lock().insert(id.clone(), live.clone());
        Entry {
            calls: self,
            id,
            live,
            writer,
        }
    }

    /// The live call `id`, or the call whose execute_code script made the
    /// inner call `id` (`<outer>#<n>`, named so by the runtime): its
    /// approvals, client requests and log lines are the outer call's
    /// client's too.
    pub fn get(&self, id: &str) -> Option<Arc<Live>> {
        let map = self.map.lock();
        if let Some(l) = map.get(id) {
            return Some(l.clone());
        }
        let (outer, n) = id.rsplit_once('#')?;
        if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        map.get(outer).cloned()
    }
}

#[cfg(test)]
mod tests {
    /// Red team 2026-11-28 (round 3): call ids numbered per server were
    /// named by a host's own dispatch (`tool_call_id: "mcp-1"`), which then
    /// got another client's approval and roots.
    #[test]
    fn call_ids_are_random_and_unguessable() {
        let ids: std::collections::HashSet<String> =
            (0..1000).map(|_| super::new_call_id()).collect();
        assert_eq!(ids.len(), 1000);
        for id in &ids {
            assert!(id.starts_with("mcp-") && id.len() == 36, "{id}");
        }
    }
}
