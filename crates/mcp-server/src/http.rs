//! Streamable HTTP (`hermes-tools mcp serve --http`, `ht_runtime_serve_mcp`
//! with an address): rmcp's session-aware HTTP service on a hyper server,
//! one [`Server`] per MCP session, all over the same runtime.
//!
//! Why a front of our own before rmcp's service: the endpoint runs commands,
//! so what reaches it is decided here, for every request, in this order:
//! - `/.well-known/oauth-protected-resource[/mcp]`: the protected-resource
//!   metadata (RFC 9728), public;
//! - any other path than `/mcp`: 404;
//! - an `Origin` that is not loopback (`null` included) and not configured
//!   (`allowed_origins`): 403 (MCP transports: servers must validate Origin);
//! - no or a wrong bearer token: 401 with `WWW-Authenticate` (auth.rs);
//! - a new session over `max_sessions`: 503.
//!
//! Connections are bounded too (limits.rs): a request's headers must come
//! within `header_timeout_s`, an idle connection is closed after
//! `idle_timeout_s`, and at `max_connections` the longest-idle connection
//! is closed for the new one, so a flood of half-open connections cannot
//! lock a legitimate client out or exhaust the server's descriptors. The
//! listener must be on a loopback address (rmcp's Host check allows only
//! loopback names).

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use parking_lot::Mutex;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use hermes_runtime::Runtime;

use crate::Server;
use crate::auth::{Auth, HttpAuth};
use crate::serve::{Installed, Options};
use crate::sessions::Tracked;

/// How long a stopping server lets a connection finish what it is writing.
const STOP_GRACE: Duration = Duration::from_millis(250);

/// The path the endpoint answers on.
pub const PATH: &str = "/mcp";

type Body = BoxBody<Bytes, Infallible>;

/// Check the listen address and make the endpoint's authentication: a
/// generated token's file is written here (before serving, so the caller
/// can say where it is). Refuses a non-loopback address.
pub fn prepare_http(addr: SocketAddr, opts: &Options) -> Result<HttpAuth, String> {
    if !addr.ip().is_loopback() {
        return Err(format!(
            "mcp serve --http: {addr} is not a loopback address; listen on 127.0.0.1 or [::1]"
        ));
    }
    match &opts.http.auth {
        Auth::Generate => {
            HttpAuth::generate(opts.http.token_dir.as_deref(), &addr.port().to_string())
                .map_err(|e| format!("mcp serve --http: {e}"))
        }
        Auth::Token(t) => HttpAuth::with_token(t).map_err(|e| format!("mcp serve --http: {e}")),
        Auth::None => {
            tracing::warn!(
                %addr,
                "mcp server: AUTHENTICATION IS OFF: every local user and process can run commands through http://{addr}{PATH}"
            );
            Ok(HttpAuth::none())
        }
    }
}

/// One open connection.
struct Conn {
    /// Requests in progress (a streamed response counts until its end).
    active: AtomicUsize,
    /// When it last started or ended a request (or opened).
    last: Mutex<Instant>,
    kill: CancellationToken,
}

/// Every open connection, for the bound and the idle timeout.
#[derive(Default)]
struct Conns {
    next: AtomicU64,
    map: Mutex<HashMap<u64, Arc<Conn>>>,
}

impl Conns {
    /// Admit a new connection: at `max`, the longest-idle one is closed for
    /// it; None when every connection is busy.
    fn admit(&self, max: usize) -> Option<(u64, Arc<Conn>)> {
        let mut map = self.map.lock();
        if map.len() >= max {
            let victim = map
                .iter()
                .filter(|(_, c)| c.active.load(Ordering::Acquire) == 0)
                .min_by_key(|(_, c)| *c.last.lock())
                .map(|(id, _)| *id)?;
            if let Some(c) = map.remove(&victim) {
                c.kill.cancel();
            }
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let c = Arc::new(Conn {
            active: AtomicUsize::new(0),
            last: Mutex::new(Instant::now()),
            kill: CancellationToken::new(),
        });
        map.insert(id, c.clone());
        Some((id, c))
    }

    fn remove(&self, id: u64) {
        self.map.lock().remove(&id);
    }

    /// Close connections idle for `limit` or more.
    fn sweep(&self, limit: Duration) {
        self.map.lock().retain(|_, c| {
            let idle = c.active.load(Ordering::Acquire) == 0 && c.last.lock().elapsed() >= limit;
            if idle {
                c.kill.cancel();
            }
            !idle
        });
    }
}

/// A request in progress on a connection; ends when dropped.
struct Busy(Arc<Conn>);

impl Busy {
    fn new(c: &Arc<Conn>) -> Busy {
        c.active.fetch_add(1, Ordering::AcqRel);
        *c.last.lock() = Instant::now();
        Busy(c.clone())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        *self.0.last.lock() = Instant::now();
        self.0.active.fetch_sub(1, Ordering::AcqRel);
    }
}

fn respond(status: hyper::StatusCode, ctype: &str, body: String) -> hyper::Response<Body> {
    let mut r = hyper::Response::new(Full::new(Bytes::from(body)).boxed());
    *r.status_mut() = status;
    if let Ok(v) = ctype.parse() {
        r.headers_mut().insert(hyper::header::CONTENT_TYPE, v);
    }
    r
}

fn json_error(status: hyper::StatusCode, message: &str) -> hyper::Response<Body> {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32000, "message": message},
    });
    respond(status, "application/json", body.to_string())
}

/// Whether a browser origin may call: absent, configured, or loopback
/// (`http(s)://localhost|127.0.0.1|[::1]` on any port). `null` only when
/// configured.
pub(crate) fn origin_allowed(origin: Option<&str>, allowed: &[String]) -> bool {
    let Some(o) = origin else {
        return true;
    };
    if allowed.iter().any(|a| a.eq_ignore_ascii_case(o)) {
        return true;
    }
    let Some(rest) = o
        .strip_prefix("http://")
        .or_else(|| o.strip_prefix("https://"))
    else {
        return false;
    };
    let host = if let Some(v6) = rest.strip_prefix('[') {
        match v6.split_once(']') {
            Some((h, tail)) if tail.is_empty() || is_port(tail) => h,
            _ => return false,
        }
    } else {
        match rest.split_once(':') {
            Some((h, port)) if is_port(&format!(":{port}")) => h,
            Some(_) => return false,
            None => rest,
        }
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn is_port(tail: &str) -> bool {
    tail.strip_prefix(':')
        .is_some_and(|p| !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()))
}

/// What the front decides before rmcp's service sees a request.
struct Front {
    auth: HttpAuth,
    allowed_origins: Vec<String>,
    /// `http://ADDR/.well-known/oauth-protected-resource/mcp`.
    metadata_url: String,
    metadata: String,
    sessions: Arc<Tracked>,
    max_sessions: usize,
}

impl Front {
    /// The answer to a request that must not reach the service, if any.
    fn refuse(&self, req: &hyper::Request<Incoming>) -> Option<hyper::Response<Body>> {
        let path = req.uri().path();
        if path.starts_with("/.well-known/oauth-protected-resource") {
            let p = path.trim_start_matches("/.well-known/oauth-protected-resource");
            if (p.is_empty() || p == PATH) && req.method() == hyper::Method::GET {
                return Some(respond(
                    hyper::StatusCode::OK,
                    "application/json",
                    self.metadata.clone(),
                ));
            }
            return Some(respond(
                hyper::StatusCode::NOT_FOUND,
                "text/plain",
                "not found\n".into(),
            ));
        }
        if path != PATH {
            return Some(respond(
                hyper::StatusCode::NOT_FOUND,
                "text/plain",
                "not found: the MCP endpoint is /mcp\n".into(),
            ));
        }
        let origin = req
            .headers()
            .get(hyper::header::ORIGIN)
            .map(|v| v.to_str().unwrap_or("\u{0}"));
        if !origin_allowed(origin, &self.allowed_origins) {
            return Some(json_error(
                hyper::StatusCode::FORBIDDEN,
                "forbidden: this Origin may not call the MCP server (only loopback origins, and those in allowed_origins)",
            ));
        }
        let given = req
            .headers()
            .get(hyper::header::AUTHORIZATION)
            .map(|v| v.as_bytes());
        if !self.auth.accepts(given) {
            let mut challenge = format!("Bearer resource_metadata=\"{}\"", self.metadata_url);
            let message = if given.is_some() {
                challenge.push_str(", error=\"invalid_token\", error_description=\"the bearer token is not this server's\"");
                "unauthorized: the bearer token is not this server's"
            } else {
                "unauthorized: send Authorization: Bearer <token> (the token file's path is printed when the server starts)"
            };
            let mut r = json_error(hyper::StatusCode::UNAUTHORIZED, message);
            if let Ok(v) = challenge.parse() {
                r.headers_mut().insert(hyper::header::WWW_AUTHENTICATE, v);
            }
            return Some(r);
        }
        if req.method() == hyper::Method::POST
            && !req.headers().contains_key("mcp-session-id")
            && self.sessions.count() >= self.max_sessions
        {
            let mut r = json_error(
                hyper::StatusCode::SERVICE_UNAVAILABLE,
                &format!(
                    "too many MCP sessions open ({}, max_sessions); close one (DELETE) or wait for idle ones to be closed",
                    self.max_sessions
                ),
            );
            r.headers_mut().insert(
                hyper::header::RETRY_AFTER,
                hyper::header::HeaderValue::from_static("5"),
            );
            return Some(r);
        }
        None
    }
}

/// Serve `rt` over streamable HTTP on `listener` (bound by the caller, so it
/// can report the port) at [`PATH`] until `stop` is cancelled, admitting
/// requests with `auth` (from [`prepare_http`]; dropped, and a generated
/// token's file removed, when serving ends). The listener must be on a
/// loopback address.
pub async fn serve_http(
    rt: Arc<Runtime>,
    listener: TcpListener,
    opts: &Options,
    auth: HttpAuth,
    stop: CancellationToken,
) -> Result<(), String> {
    let addr = listener
        .local_addr()
        .map_err(|e| format!("mcp serve --http: {e}"))?;
    if !addr.ip().is_loopback() {
        return Err(format!(
            "mcp serve --http: {addr} is not a loopback address; listen on 127.0.0.1 or ::1"
        ));
    }
    let limits = opts.limits.clone();
    let installed = Installed::new(rt, opts)?;
    let shared = installed.shared.clone();
    let sessions = Arc::new(Tracked::new(shared.clone()));
    let mut config = StreamableHttpServerConfig::default();
    config.cancellation_token = stop.child_token();
    config.max_request_body_bytes = limits.max_body_bytes;
    let service = StreamableHttpService::new(
        move || Ok(Server::new(shared.clone(), None)),
        sessions.clone(),
        config,
    );
    let resource = format!("http://{addr}{PATH}");
    let front = Arc::new(Front {
        auth,
        allowed_origins: opts.http.allowed_origins.clone(),
        metadata_url: format!("http://{addr}{}", crate::auth::metadata_path(PATH)),
        metadata: crate::auth::metadata(&resource).to_string(),
        sessions: sessions.clone(),
        max_sessions: limits.max_sessions,
    });
    tracing::info!(%addr, "mcp server: listening on http://{addr}{PATH}");
    let conns = Arc::new(Conns::default());
    let sweeper = {
        let conns = conns.clone();
        let sessions = sessions.clone();
        let idle = limits.idle_timeout;
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                conns.sweep(idle);
                sessions.sweep().await;
            }
        })
    };
    let tasks = tokio_util::task::TaskTracker::new();
    loop {
        let (stream, peer) = tokio::select! {
            _ = stop.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of descriptors (or another transient failure):
                    // close the idle connections and try again.
                    tracing::warn!(error = %e, "mcp server: accept failed");
                    conns.sweep(Duration::ZERO);
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let Some((conn_id, conn)) = conns.admit(limits.max_connections) else {
            tracing::warn!(%peer, max = limits.max_connections, "mcp server: connection refused: every connection is busy (max_connections)");
            let _ = stream.try_write(
                b"HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\ncontent-length: 0\r\nretry-after: 1\r\n\r\n",
            );
            continue;
        };
        let service = service.clone();
        let front = front.clone();
        let stop = stop.clone();
        let conns = conns.clone();
        let header_timeout = limits.header_timeout;
        tasks.spawn(async move {
            let c = conn.clone();
            let svc = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
                let service = service.clone();
                let front = front.clone();
                let busy = Busy::new(&c);
                async move {
                    if let Some(r) = front.refuse(&req) {
                        return Ok::<_, Infallible>(r);
                    }
                    let resp = service.handle(req).await;
                    // The connection is busy until the response's body ends
                    // (an SSE stream included).
                    Ok(resp.map(|b| {
                        b.map_frame(move |f| {
                            let _ = &busy;
                            f
                        })
                        .boxed()
                    }))
                }
            });
            let conn_fut = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout)
                .serve_connection(TokioIo::new(stream), svc);
            tokio::pin!(conn_fut);
            tokio::select! {
                r = conn_fut.as_mut() => if let Err(e) = r {
                    tracing::debug!(%peer, error = %e, "mcp server: connection ended");
                },
                // Idle or evicted: dropped, which closes the socket.
                _ = conn.kill.cancelled() => {},
                _ = stop.cancelled() => {
                    // A response being written gets a moment to finish; a
                    // client's open event stream must not hold the exit
                    // (the server stops within a second of being told).
                    conn_fut.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(STOP_GRACE, conn_fut.as_mut()).await;
                },
            }
            conns.remove(conn_id);
        });
    }
    sweeper.abort();
    tasks.close();
    let _ = tokio::time::timeout(STOP_GRACE * 2, tasks.wait()).await;
    installed.remove();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_origins_pass_others_and_null_do_not() {
        let none: Vec<String> = vec![];
        for ok in [
            None,
            Some("http://localhost"),
            Some("http://localhost:6274"),
            Some("https://127.0.0.1:8080"),
            Some("http://[::1]:3000"),
        ] {
            assert!(origin_allowed(ok, &none), "{ok:?}");
        }
        for bad in [
            Some("null"),
            Some("http://evil.example"),
            Some("http://localhost.evil.example"),
            Some("http://127.0.0.1.evil.example:80"),
            Some("http://localhost:80@evil.example"),
            Some("file://"),
            Some("http://[::1].evil"),
        ] {
            assert!(!origin_allowed(bad, &none), "{bad:?}");
        }
        let cfg = vec!["null".to_string(), "https://app.example:443".to_string()];
        assert!(origin_allowed(Some("null"), &cfg));
        assert!(origin_allowed(Some("https://app.example:443"), &cfg));
        assert!(!origin_allowed(Some("https://app.example"), &cfg));
    }
}
