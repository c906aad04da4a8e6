//! MCP sessions over HTTP: rmcp's in-memory session manager, wrapped to
//! count and age sessions, and each session's own quotas.
//!
//! Why: rmcp keeps a session (and its task's state in the runtime) until
//! the client deletes it; clients that never do, or an attacker opening
//! sessions in a loop, grow the server without bound. Here every session is
//! known with the time of its last request; a session over
//! `session_idle_timeout` with no call running is closed, and any close
//! (DELETE, idle, the worker ending) releases its task in the runtime
//! (`cleanup_task`: its processes are killed, its cwd and environment
//! dropped) and its quotas. New sessions over `max_sessions` are refused.
//! The quotas ([`Session`]) keep one session from starving another: calls in
//! flight and background processes are counted per session.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use futures_core::Stream;
use parking_lot::Mutex;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::ServerSseMessage;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::{RestoreOutcome, SessionId, SessionManager};

use crate::Shared;

use crate::quotas::task_of_session;

/// rmcp's session manager, counted and aged.
pub(crate) struct Tracked {
    inner: LocalSessionManager,
    /// Every open session and the time of its last request.
    seen: Mutex<HashMap<SessionId, Instant>>,
    shared: Arc<Shared>,
}

impl Tracked {
    pub fn new(shared: Arc<Shared>) -> Tracked {
        let mut inner = LocalSessionManager::default();
        // Idle sessions are closed by [`Tracked::sweep`], which knows about
        // calls still running; rmcp's own timer would end a session in the
        // middle of a long quiet call.
        inner.session_config.keep_alive = None;
        Tracked {
            inner,
            seen: Mutex::new(HashMap::new()),
            shared,
        }
    }

    /// Sessions open now.
    pub fn count(&self) -> usize {
        self.seen.lock().len()
    }

    fn touch(&self, id: &SessionId) {
        if let Some(t) = self.seen.lock().get_mut(id) {
            *t = Instant::now();
        }
    }

    /// Close the sessions idle for longer than the limit with no call
    /// running; returns how many were closed.
    pub async fn sweep(&self) -> usize {
        let limit = self.shared.limits.session_idle_timeout;
        let idle: Vec<SessionId> = self
            .seen
            .lock()
            .iter()
            .filter(|(id, t)| {
                t.elapsed() >= limit && !self.shared.session_busy(&task_of_session(id))
            })
            .map(|(id, _)| id.clone())
            .collect();
        for id in &idle {
            tracing::info!(session = %id, "mcp server: idle session closed");
            let _ = self.close_session(id).await;
        }
        idle.len()
    }
}

impl SessionManager for Tracked {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let (id, t) = self.inner.create_session().await?;
        // The bound, checked and taken under one lock: the front's early
        // 503 counts before the request is read, so initializes released
        // together would all pass it.
        let admitted = {
            let mut seen = self.seen.lock();
            let ok = seen.len() < self.shared.limits.max_sessions;
            if ok {
                seen.insert(id.clone(), Instant::now());
            }
            ok
        };
        if !admitted {
            drop(t);
            let _ = self.inner.close_session(&id).await;
            tracing::info!("mcp server: a new session refused (max_sessions)");
            return Err(LocalSessionManagerError::SessionNotFound(id));
        }
        Ok((id, t))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.touch(id);
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        let known = self.seen.lock().remove(id).is_some();
        let out = self.inner.close_session(id).await;
        if known {
            self.shared.end_session(&task_of_session(id));
        }
        out
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.touch(id);
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.resume(id, last_event_id).await
    }

    async fn restore_session(
        &self,
        _id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        Ok(RestoreOutcome::NotSupported)
    }
}
