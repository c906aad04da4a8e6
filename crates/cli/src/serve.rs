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
        None => engine.block_on(hermes_mcp_server::serve(
            rt.clone(),
            (tokio::io::stdin(), tokio::io::stdout()),
        )),
        Some(addr) => engine.block_on(serve_http(rt.clone(), addr)),
    };
    rt.close();
    match out {
        Ok(()) => 0,
        Err(e) => crate::out::fail(e),
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
