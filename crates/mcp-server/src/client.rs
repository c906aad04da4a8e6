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
        self.handle.spawn(async move {
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
        Some(
            rx.recv_timeout(timeout + Duration::from_secs(1))
                .unwrap_or_else(|_| {
                    Err(Error::new(
                        ErrorKind::Timeout,
                        "the client did not answer in time",
                    ))
                }),
        )
    }
}
