//! The calls in flight through the server, each under a `tool_call_id` the
//! server gives it (`mcp-<n>`). Approval requests and progress reports name
//! their call by that id; this table finds the client that made it, so one
//! runtime can serve many MCP sessions (HTTP) and still ask, and report to,
//! the right one.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use parking_lot::Mutex;
use rmcp::model::ProgressToken;
use rmcp::service::{Peer, RoleServer};

/// One call in flight.
pub(crate) struct Live {
    /// The client that made the call.
    pub peer: Peer<RoleServer>,
    /// The client's `_meta.progressToken`, when it asked for progress.
    pub token: Option<ProgressToken>,
    /// The tool reported progress itself: the server's heartbeat stops, so
    /// the values the client sees keep rising.
    pub tool_reports: AtomicBool,
}

#[derive(Default)]
pub(crate) struct Calls {
    next: AtomicU64,
    map: Mutex<HashMap<String, Arc<Live>>>,
}

/// Removes its call from the table when the call ends (any way it ends).
pub(crate) struct Entry<'a> {
    calls: &'a Calls,
    pub id: String,
    pub live: Arc<Live>,
}

impl Drop for Entry<'_> {
    fn drop(&mut self) {
        self.calls.map.lock().remove(&self.id);
    }
}

impl Calls {
    pub fn begin(&self, peer: Peer<RoleServer>, token: Option<ProgressToken>) -> Entry<'_> {
        let id = format!("mcp-{}", self.next.fetch_add(1, Ordering::Relaxed) + 1);
        let live = Arc::new(Live {
            peer,
            token,
            tool_reports: AtomicBool::new(false),
        });
        self.map.lock().insert(id.clone(), live.clone());
        Entry {
            calls: self,
            id,
            live,
        }
    }

    pub fn get(&self, id: &str) -> Option<Arc<Live>> {
        self.map.lock().get(id).cloned()
    }
}
