//! Streamable HTTP (`hermes-tools mcp serve --http`, `ht_runtime_serve_mcp`
//! with an address): rmcp's session-aware HTTP service on a hyper server,
//! one [`Server`] per MCP session, all over the same runtime. Requests are
//! accepted at `/mcp` from loopback Host/Origin values only (rmcp's DNS
//! rebinding check); a non-loopback listen address is refused, since the
//! endpoint has no authentication.

use std::convert::Infallible;
use std::sync::Arc;

use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use hermes_runtime::Runtime;

use crate::Server;
use crate::serve::{Installed, Options};

/// The path the endpoint answers on.
pub const PATH: &str = "/mcp";

/// Serve `rt` over streamable HTTP on `listener` (bound by the caller, so it
/// can report the port) at [`PATH`] until `stop` is cancelled. The listener
/// must be on a loopback address.
pub async fn serve_http(
    rt: Arc<Runtime>,
    listener: TcpListener,
    opts: &Options,
    stop: CancellationToken,
) -> Result<(), String> {
    let addr = listener
        .local_addr()
        .map_err(|e| format!("mcp serve --http: {e}"))?;
    if !addr.ip().is_loopback() {
        return Err(format!(
            "mcp serve --http: {addr} is not a loopback address; the endpoint has no authentication, listen on 127.0.0.1 or ::1"
        ));
    }
    let installed = Installed::new(rt, opts)?;
    let shared = installed.shared.clone();
    let mut config = StreamableHttpServerConfig::default();
    config.cancellation_token = stop.child_token();
    let service = StreamableHttpService::new(
        move || Ok(Server::new(shared.clone(), None)),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    tracing::info!(%addr, "mcp server: listening on http://{addr}{PATH}");
    let conns = tokio_util::task::TaskTracker::new();
    loop {
        let (stream, peer) = tokio::select! {
            _ = stop.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    tracing::warn!(error = %e, "mcp server: accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let service = service.clone();
        let stop = stop.clone();
        conns.spawn(async move {
            let svc = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
                let service = service.clone();
                async move {
                    if req.uri().path() != PATH {
                        let mut not_found = hyper::Response::new(
                            http_body_util::Full::new(bytes::Bytes::from_static(
                                b"not found: the MCP endpoint is /mcp\n",
                            ))
                            .boxed(),
                        );
                        *not_found.status_mut() = hyper::StatusCode::NOT_FOUND;
                        return Ok::<_, Infallible>(not_found);
                    }
                    Ok(service.handle(req).await)
                }
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), svc);
            tokio::pin!(conn);
            tokio::select! {
                r = conn.as_mut() => if let Err(e) = r {
                    tracing::debug!(%peer, error = %e, "mcp server: connection ended");
                },
                _ = stop.cancelled() => conn.as_mut().graceful_shutdown(),
            }
        });
    }
    conns.close();
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), conns.wait()).await;
    installed.remove();
    Ok(())
}
