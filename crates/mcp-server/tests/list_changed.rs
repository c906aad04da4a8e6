//! A tool registered on the runtime a server serves reaches the client as
//! `notifications/tools/list_changed`, and the next `tools/list` has it.
//! In process: an rmcp client and our server over a byte pipe.

use std::sync::Arc;
use std::time::Duration;

use hermes_core::tool::{Blocking, BlockingTool, RunCtx, ToolOutput};
use hermes_runtime::Runtime;
use rmcp::service::{NotificationContext, RoleClient};
use rmcp::{ClientHandler, ServiceExt};
use serde_json::Value;

struct Watch(tokio::sync::mpsc::UnboundedSender<()>);

impl ClientHandler for Watch {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.0.send(());
    }
}

struct Echo;
impl BlockingTool for Echo {
    fn run(&self, args: Value, _: &RunCtx) -> ToolOutput {
        ToolOutput::ok(args.to_string())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registering_a_tool_notifies_the_client() {
    let rt = Arc::new(Runtime::new("{}").unwrap());
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let served = rt.clone();
    let server = tokio::spawn(async move { hermes_mcp_server::serve(served, server_io).await });
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let client = Watch(tx).serve(client_io).await.expect("initialize");
    let before = client.list_all_tools().await.unwrap();
    assert!(before.iter().all(|t| t.name != "late_tool"));

    rt.register_tool(
        r#"{"name":"late_tool","toolset":"late","schema":{"description":"Registered after the client connected","parameters":{"type":"object","properties":{"x":{"type":"integer"}}}}}"#,
        Arc::new(Blocking(Arc::new(Echo))),
        None,
    )
    .unwrap();
    tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .expect("no list_changed within 5 s")
        .expect("client gone");
    let after = client.list_all_tools().await.unwrap();
    assert!(after.iter().any(|t| t.name == "late_tool"), "{after:?}");
    let r = client
        .call_tool(
            rmcp::model::CallToolRequestParams::new("late_tool")
                .with_arguments(serde_json::json!({"x": "7"}).as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    let text = serde_json::to_string(&r).unwrap();
    assert!(text.contains(r#"{\"x\":7}"#), "repaired and run: {text}");
    client.cancel().await.unwrap();
    let _ = tokio::time::timeout(Duration::from_secs(5), server).await;
    rt.close();
}
