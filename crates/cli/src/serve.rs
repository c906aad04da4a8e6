//! `hermes-tools mcp serve`: the config's runtime served to an MCP client on
//! standard input and output, or over streamable HTTP on a loopback address
//! (crates/mcp-server). Logs go to standard error; standard output carries
//! only the protocol. Over HTTP the server runs until SIGINT or SIGTERM.

use std::path::Path;
use std::sync::Arc;

pub fn run(config: Option<&Path>, http: Option<&str>) -> u8 {
    let rt = match crate::call::runtime(config) {
        Ok(rt) => Arc::new(rt),
        Err(e) => return crate::out::fail(e),
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
            let out = engine.block_on(hermes_mcp_server::serve(
                rt.clone(),
                (stdin, tokio::io::stdout()),
            ));
            // The close started at end of input has killed everything
            // before this process exits.
            if let Some(t) = closer.lock().unwrap_or_else(|e| e.into_inner()).take() {
                let _ = t.join();
            }
            out
        }
        Some(addr) => engine.block_on(serve_http(rt.clone(), addr)),
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

async fn serve_http(rt: Arc<hermes_runtime::Runtime>, addr: &str) -> Result<(), String> {
    let addr: std::net::SocketAddr = addr.parse().map_err(|_| {
        format!(
            "mcp serve --http: '{addr}' is not an address; give 127.0.0.1:PORT (port 0 picks one)"
        )
    })?;
    if !addr.ip().is_loopback() {
        return Err(format!(
            "mcp serve --http: {addr} is not a loopback address; the endpoint has no authentication, listen on 127.0.0.1 or [::1]"
        ));
    }
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("mcp serve --http: cannot listen on {addr}: {e}"))?;
    let bound = listener
        .local_addr()
        .map_err(|e| format!("mcp serve --http: {e}"))?;
    eprintln!("hermes-tools: MCP server listening on http://{bound}/mcp");
    let stop = tokio_util::sync::CancellationToken::new();
    let on_signal = stop.clone();
    tokio::spawn(async move {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut int), Ok(mut term)) = (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) else {
            return;
        };
        tokio::select! {
            _ = int.recv() => {},
            _ = term.recv() => {},
        }
        on_signal.cancel();
    });
    hermes_mcp_server::serve_http(rt, listener, &hermes_mcp_server::Options::default(), stop).await
}
