//! `hermes-tools mcp serve`: the config's runtime served to an MCP client on
//! standard input and output, or over streamable HTTP on a loopback address
//! (crates/mcp-server). Logs go to standard error; standard output carries
//! only the protocol. Over HTTP the server runs until SIGINT or SIGTERM.
//!
//! HTTP is authenticated: every request carries a bearer token, generated at
//! start into a file only this user can read (its path printed on standard
//! error) or taken from `--token-file` / the config's `mcp_serve.token_file`.
//! The config's `mcp_serve` object (read here, not by the runtime, whose
//! config rejects unknown keys) sets the server's limits and authentication.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use hermes_mcp_server::Options;
use serde_json::Value;

/// The authentication flags of `mcp serve`.
pub struct Auth {
    pub token_file: Option<PathBuf>,
    pub no_auth: bool,
}

/// The runtime config's text without `mcp_serve`, and the options that
/// object and the flags give.
fn options(config: Option<&Path>, auth: &Auth) -> Result<(String, Options), String> {
    let text = match config {
        Some(p) => std::fs::read_to_string(p)
            .map_err(|e| format!("cannot read config {}: {e}", p.display()))?,
        None => "{}".to_string(),
    };
    let shown = config.map_or_else(|| "config".to_string(), |p| p.display().to_string());
    let mut opts = Options::default();
    let mut v: Value =
        serde_json::from_str(&text).map_err(|e| format!("{shown}: not JSON: {e}"))?;
    let text = match v.as_object_mut().and_then(|m| m.remove("mcp_serve")) {
        Some(Value::Object(m)) => {
            if let Some(k) = m
                .keys()
                .find(|k| !hermes_mcp_server::limits::KEYS.contains(&k.as_str()))
            {
                return Err(format!(
                    "{shown}: mcp_serve: unknown key '{k}' (known: {})",
                    hermes_mcp_server::limits::KEYS.join(", ")
                ));
            }
            opts.apply_json(&m)
                .map_err(|e| format!("{shown}: mcp_serve: {e}"))?;
            v.to_string()
        }
        Some(_) => return Err(format!("{shown}: mcp_serve must be an object")),
        None => text,
    };
    if let Some(f) = &auth.token_file {
        opts.http.auth =
            hermes_mcp_server::Auth::Token(hermes_mcp_server::limits::read_token_file(f)?);
    }
    if auth.no_auth {
        opts.http.auth = hermes_mcp_server::Auth::None;
    }
    Ok((text, opts))
}

pub fn run(config: Option<&Path>, http: Option<&str>, auth: Auth) -> u8 {
    let http = match http.map(loopback_address).transpose() {
        Ok(a) => a,
        Err(e) => return crate::out::usage(e),
    };
    let (text, opts) = match options(config, &auth) {
        Ok(o) => o,
        Err(e) => return crate::out::fail(e),
    };
    let rt = match hermes_runtime::Runtime::new(&text) {
        Ok(rt) => Arc::new(rt),
        Err(e) => {
            return crate::out::fail(match config {
                Some(p) => format!("{}: {}", p.display(), e.message),
                None => e.message,
            });
        }
    };
    let engine = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(e) => e,
        Err(e) => return crate::out::fail(format!("mcp serve: cannot start: {e}")),
    };
    let out = match http {
        None => {
            // The client left (stdin closed): its calls' commands are killed
            // now, not after rmcp's 5 s drain of in-flight responses.
            let closing = rt.clone();
            let closer = Arc::new(std::sync::Mutex::new(None));
            let handle = closer.clone();
            let stdin = EofSignal {
                inner: tokio::io::stdin(),
                on_eof: Some(Box::new(move || {
                    let t = std::thread::spawn(move || closing.close());
                    *handle.lock().unwrap_or_else(|e| e.into_inner()) = Some(t);
                })),
            };
            let out = engine.block_on(hermes_mcp_server::serve_with(
                rt.clone(),
                (stdin, tokio::io::stdout()),
                &opts,
                tokio_util::sync::CancellationToken::new(),
            ));
            // The close started at end of input has killed everything
            // before this process exits.
            if let Some(t) = closer.lock().unwrap_or_else(|e| e.into_inner()).take() {
                let _ = t.join();
            }
            out
        }
        Some(addr) => engine.block_on(serve_http(rt.clone(), addr, &opts)),
    };
    rt.close();
    match out {
        Ok(()) => 0,
        Err(e) => crate::out::fail(e),
    }
}

/// A reader that calls `on_eof` once, the first time its input ends.
struct EofSignal<R> {
    inner: R,
    on_eof: Option<Box<dyn FnOnce() + Send>>,
}

impl<R: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for EofSignal<R> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let wants = buf.remaining() > 0;
        let poll = std::pin::Pin::new(&mut self.inner).poll_read(cx, buf);
        if let std::task::Poll::Ready(Ok(())) = &poll
            && wants
            && buf.filled().len() == before
            && let Some(f) = self.on_eof.take()
        {
            f();
        }
        poll
    }
}

/// `--http ADDR`: an address or a host name with a port (`localhost:0`),
/// every address of which must be loopback (the port 0 picks one).
fn loopback_address(addr: &str) -> Result<std::net::SocketAddr, String> {
    use std::net::ToSocketAddrs;
    let all: Vec<std::net::SocketAddr> = addr
        .to_socket_addrs()
        .map_err(|e| {
            format!(
                "mcp serve --http: '{addr}' is not an address ({e}); give HOST:PORT such as 127.0.0.1:8931 or localhost:0"
            )
        })?
        .collect();
    match all.iter().find(|a| !a.ip().is_loopback()) {
        Some(a) => Err(format!(
            "mcp serve --http: {addr} ({a}) is not a loopback address; listen on 127.0.0.1, [::1] or localhost"
        )),
        None => all
            .into_iter()
            .next()
            .ok_or_else(|| format!("mcp serve --http: '{addr}' names no address")),
    }
}

async fn serve_http(
    rt: Arc<hermes_runtime::Runtime>,
    addr: std::net::SocketAddr,
    opts: &Options,
) -> Result<(), String> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("mcp serve --http: cannot listen on {addr}: {e}"))?;
    let bound = listener
        .local_addr()
        .map_err(|e| format!("mcp serve --http: {e}"))?;
    // Signals are handled before the address is printed: whoever reads it
    // may stop the server right away.
    let stop = tokio_util::sync::CancellationToken::new();
    {
        use tokio::signal::unix::{SignalKind, signal};
        let int = signal(SignalKind::interrupt());
        let term = signal(SignalKind::terminate());
        let on_signal = stop.clone();
        let closing = rt.clone();
        if let (Ok(mut int), Ok(mut term)) = (int, term) {
            tokio::spawn(async move {
                tokio::select! {
                    _ = int.recv() => {},
                    _ = term.recv() => {},
                }
                // The sessions' commands are killed now, before the
                // server drains its connections.
                let _ = tokio::task::spawn_blocking(move || closing.close()).await;
                on_signal.cancel();
            });
        }
    }
    let auth = hermes_mcp_server::prepare_http(bound, opts)?;
    eprintln!("hermes-tools: MCP server listening on http://{bound}/mcp");
    match (auth.required(), auth.token_file()) {
        (true, Some(f)) => eprintln!(
            "hermes-tools: bearer token in {} (readable by this user only; send Authorization: Bearer <token>)",
            f.display()
        ),
        (true, None) => {
            eprintln!(
                "hermes-tools: bearer token from the host (send Authorization: Bearer <token>)"
            )
        }
        (false, _) => {
            eprintln!(
                "hermes-tools: WARNING: AUTHENTICATION IS OFF (--no-auth): every local user and process that can reach {bound} can run commands as this user"
            );
        }
    }
    hermes_mcp_server::serve_http(rt, listener, opts, auth, stop).await
}
