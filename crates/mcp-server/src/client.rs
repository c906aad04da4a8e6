//! A served host tool's requests to the MCP client that made its call
//! (`ht_call_client_request`, crates/runtime/src/client.rs): sampling
//! (`sampling/createMessage`), a form for the user (`elicitation/create`)
//! and the client's roots (`roots/list`). The call's entry in [`Calls`]
//! names the client; the request goes only to that client, only when it
//! declared the capability, and the params must have the method's shape
//! (rmcp's types check them before anything is sent).
//!
//! The host's thread waits here (it is the tool's own thread, never one of
//! the server's async workers) for the answer, at most the given timeout.

use std::sync::Arc;
use std::time::Duration;

#[allow(deprecated)] // sampling and roots: still in protocol 2025-11-25, which clients speak
use rmcp::model::{CreateMessageRequestParams, ElicitRequestParams};
use serde_json::Value;

use hermes_core::error::{Error, ErrorKind, Result};
use hermes_runtime::client::ClientRequests;

use crate::calls::Calls;

pub(crate) struct Bridge {
    pub calls: Arc<Calls>,
    pub handle: tokio::runtime::Handle,
}

impl ClientRequests for Bridge {
    fn request(
        &self,
        tool_call_id: &str,
        method: &str,
        params: Value,
        timeout: Duration,
        waiting: &dyn Fn() -> bool,
    ) -> Option<Result<Value>> {
        let live = self.calls.get(tool_call_id)?;
        let peer = live.peer.clone();
        let caps = peer.peer_info().map(|i| i.capabilities.clone());
        let declared = match method {
            "sampling/createMessage" => caps.as_ref().is_some_and(|c| c.sampling.is_some()),
            "elicitation/create" => caps.as_ref().is_some_and(|c| c.elicitation.is_some()),
            "roots/list" => caps.as_ref().is_some_and(|c| c.roots.is_some()),
            _ => {
                return Some(Err(Error::invalid(format!(
                    "method '{method}' is not supported"
                ))));
            }
        };
        if !declared {
            return Some(Err(Error::new(
                ErrorKind::Unsupported,
                format!("the client did not declare the capability for {method}"),
            )));
        }
        let (tx, rx) = std::sync::mpsc::channel();
        let method = method.to_string();
        let task = self.handle.spawn(async move {
            let bad = |e: serde_json::Error| Error::invalid(format!("params of {method}: {e}"));
            let failed = |e: rmcp::ServiceError| {
                Error::new(
                    ErrorKind::Internal,
                    format!("the client answered {method} with an error: {e}"),
                )
            };
            let shape = |e: serde_json::Error| Error::new(ErrorKind::Internal, e.to_string());
            #[allow(deprecated)]
            let sent = async {
                match method.as_str() {
                    "sampling/createMessage" => {
                        let p: CreateMessageRequestParams =
                            serde_json::from_value(params).map_err(bad)?;
                        let r = peer.create_message(p).await.map_err(failed)?;
                        serde_json::to_value(r).map_err(shape)
                    }
                    "elicitation/create" => {
                        let p: ElicitRequestParams = serde_json::from_value(params).map_err(bad)?;
                        let r = peer.create_elicitation(p).await.map_err(failed)?;
                        serde_json::to_value(r).map_err(shape)
                    }
                    _ => {
                        let r = peer.list_roots().await.map_err(failed)?;
                        serde_json::to_value(r).map_err(shape)
                    }
                }
            };
            let out = match tokio::time::timeout(timeout, sent).await {
                Ok(r) => r,
                Err(_) => Err(Error::new(
                    ErrorKind::Timeout,
                    format!(
                        "the client did not answer {method} in time ({} s)",
                        timeout.as_secs_f64()
                    ),
                )),
            };
            let _ = tx.send(out);
        });
        // The task above ends within `timeout`; the margin covers its start.
        // Its sender dropped unsent: the server stopped (its runtime went).
        // Checked every 100 ms: the call still waits for its answer.
        let deadline = std::time::Instant::now() + timeout + Duration::from_secs(1);
        loop {
            match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(r) => return Some(r),
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    return Some(Err(Error::new(
                        ErrorKind::Cancelled,
                        "the MCP server stopped before the client answered",
                    )));
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            }
            if !waiting() {
                task.abort();
                return Some(Err(Error::new(
                    ErrorKind::Cancelled,
                    "the call ended (timed out or cancelled) before the client answered",
                )));
            }
            if std::time::Instant::now() >= deadline {
                task.abort();
                return Some(Err(Error::new(
                    ErrorKind::Timeout,
                    "the client did not answer in time",
                )));
            }
        }
    }
}
