//! `hermes-tools mcp serve`: the config's runtime served to an MCP client on
//! standard input and output (crates/mcp-server). Logs go to standard
//! error; standard output carries only the protocol.

use std::path::Path;
use std::sync::Arc;

pub fn run(config: Option<&Path>) -> u8 {
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
    let out = engine.block_on(hermes_mcp_server::serve(
        rt.clone(),
        (tokio::io::stdin(), tokio::io::stdout()),
    ));
    rt.close();
    match out {
        Ok(()) => 0,
        Err(e) => crate::out::fail(e),
    }
}
