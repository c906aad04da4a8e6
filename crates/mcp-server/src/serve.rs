//! Serving one runtime: what is installed on it while it is served (the
//! approval sink, the progress tap, the watcher that turns registry and
//! process changes into notifications) and the stdio / byte-stream entry
//! points. HTTP is in http.rs over the same pieces.

use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::service::RoleServer;
use tokio_util::sync::CancellationToken;

use hermes_runtime::Runtime;

use crate::approval::Elicit;
use crate::limits::{HttpOptions, Limits};
use crate::processes::Notice;
use crate::progress::Tap;
use crate::{Server, Shared};

/// Who answers approvals of served calls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Approvals {
    /// The MCP client that made the call, through elicitation; denied when
    /// it cannot answer. Requests from calls the server did not make go to
    /// the handler installed before serving (denied without one).
    #[default]
    Client,
    /// The handler the host installed on the runtime, for every call.
    Host,
}

/// How to serve.
#[derive(Clone, Debug)]
pub struct Options {
    pub approvals: Approvals,
    /// How long an elicitation may wait for the client's answer.
    pub approval_timeout: Duration,
    /// Bounds (connections and sessions over HTTP; the per-session quotas
    /// on every transport).
    pub limits: Limits,
    /// Authentication and origins of the HTTP endpoint.
    pub http: HttpOptions,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            approvals: Approvals::Client,
            approval_timeout: Duration::from_secs(120),
            limits: Limits::default(),
            http: HttpOptions::default(),
        }
    }
}

impl Options {
    /// Apply the keys of an `mcp_serve` config object or of the C options
    /// (see [`crate::limits::KEYS`]); other keys are the caller's.
    pub fn apply_json(
        &mut self,
        m: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<(), String> {
        crate::limits::apply(m, &mut self.limits, &mut self.http)
    }
}

/// What serving installed on the runtime; removed by [`Installed::remove`].
pub(crate) struct Installed {
    pub shared: Arc<Shared>,
    tap: Option<u64>,
    /// The registration of [`crate::client::Bridge`] on the runtime.
    bridge: Option<u64>,
    /// This server's approval router on the runtime, when it added one.
    router: Option<u64>,
    watcher: tokio::task::JoinHandle<()>,
}

impl Installed {
    /// Install on `rt`; must run inside a tokio runtime.
    pub fn new(rt: Arc<Runtime>, opts: &Options) -> Result<Installed, String> {
        let shared = Shared::new(rt.clone(), opts.limits.clone());
        // Client mode: this server's calls are asked of their client,
        // through a router the runtime consults before the host's handler
        // (which stays the host's: setting it later takes nothing over).
        let router = match opts.approvals {
            Approvals::Host => None,
            Approvals::Client => Some(rt.add_approval_router(Arc::new(crate::approval::Router(
                Arc::new(Elicit {
                    calls: shared.calls.clone(),
                    handle: tokio::runtime::Handle::current(),
                    timeout: opts.approval_timeout,
                }),
            )))),
        };
        let tap = rt
            .add_event_tap(Arc::new(Tap {
                calls: shared.calls.clone(),
            }))
            .map_err(|e| e.message)?;
        let bridge = rt.add_client_requests(Arc::new(crate::client::Bridge {
            calls: shared.calls.clone(),
            handle: tokio::runtime::Handle::current(),
        }));
        let watcher = tokio::spawn(watch(shared.clone()));
        Ok(Installed {
            shared,
            tap: Some(tap),
            bridge: Some(bridge),
            router,
            watcher,
        })
    }

    pub fn remove(mut self) {
        self.watcher.abort();
        let rt = &self.shared.rt;
        if let Some(t) = self.tap.take() {
            rt.remove_event_tap(t);
        }
        if let Some(b) = self.bridge.take() {
            rt.remove_client_requests(b);
        }
        if let Some(r) = self.router.take() {
            rt.remove_approval_router(r);
        }
    }
}

/// Every 200 ms: the registry's generation (tools/list_changed to every
/// session) and the followed processes (resources/updated, list_changed).
async fn watch(shared: Arc<Shared>) {
    let mut seen = shared.rt.generation();
    loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let now = shared.rt.generation();
        if now != seen {
            seen = now;
            let peers: Vec<_> = {
                let mut p = shared.peers.lock();
                p.retain(|p| !p.is_transport_closed());
                p.clone()
            };
            for p in peers {
                let _ = p.notify_tool_list_changed().await;
            }
        }
        for n in shared.followers.changes(&shared.rt) {
            match n {
                Notice::Updated(p, uri) => {
                    let _ = p
                        .notify_resource_updated(
                            rmcp::model::ResourceUpdatedNotificationParam::new(uri),
                        )
                        .await;
                }
                Notice::ListChanged(p) => {
                    let _ = p.notify_resource_list_changed().await;
                }
            }
        }
    }
}

/// Serve `rt` over `transport` (stdin/stdout, a socket, a pipe) until the
/// client disconnects, with the default [`Options`].
pub async fn serve<T, E, A>(rt: Arc<Runtime>, transport: T) -> Result<(), String>
where
    T: rmcp::transport::IntoTransport<RoleServer, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    serve_with(rt, transport, &Options::default(), CancellationToken::new()).await
}

/// Serve `rt` over `transport` until the client disconnects or `stop` is
/// cancelled. The session's calls run as a task of its own (`mcp` for the
/// process's first such session, `mcp-stdio-2`, `mcp-stdio-3`, ... for the next: two
/// clients served at once never share exported variables or background
/// processes), cleaned up (its background processes killed) when the
/// session ends.
pub async fn serve_with<T, E, A>(
    rt: Arc<Runtime>,
    transport: T,
    opts: &Options,
    stop: CancellationToken,
) -> Result<(), String>
where
    T: rmcp::transport::IntoTransport<RoleServer, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    static SESSIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let n = SESSIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let task = if n == 1 {
        "mcp".to_string()
    } else {
        format!("mcp-stdio-{n}")
    };
    let installed = Installed::new(rt, opts)?;
    let server = Server::new(installed.shared.clone(), Some(&task));
    let out = match server.serve_with_ct(transport, stop).await {
        Ok(running) => running
            .waiting()
            .await
            .map(|_| ())
            .map_err(|e| format!("mcp serve: {e}")),
        Err(e) => Err(format!("mcp serve: {e}")),
    };
    // The client left: its task goes (background processes killed).
    installed.shared.end_session(&task);
    installed.remove();
    out
}
