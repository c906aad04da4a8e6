//! The MCP server front end: a runtime's enabled tools (built-in, host,
//! plugin and MCP-sourced) served to any MCP client over stdio (or any
//! async byte stream), with the official rmcp SDK.
//!
//! Why a front end of its own: editors, desktop assistants and other agents
//! speak MCP; this gives them the same registry, repair, validation, hooks,
//! approval, limits and timeouts a C host gets, through the Rust API (not
//! the C ABI). What it maps:
//! - `tools/list`: the runtime's definitions in MCP shape, with
//!   `readOnlyHint` / `destructiveHint` for the built-in tools we know.
//! - `tools/call`: an async dispatch; `notifications/cancelled` cancels it;
//!   the result becomes `CallToolResult` (`isError`, `structuredContent` for
//!   a JSON object).
//! - approvals: when a command needs one, the client is asked through MCP
//!   elicitation if it declared that capability; otherwise (or on decline,
//!   cancel, error) the call is blocked. Nothing runs unapproved.
//! - `notifications/tools/list_changed` when the registry's generation moves.

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ElicitRequestParams,
    ElicitationAction, Implementation, InitializeResult, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{Peer, RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServerHandler, ServiceExt};
use serde_json::{Value, json};

use hermes_core::context::CallContext;
use hermes_runtime::{ApprovalSink, Runtime};

/// Tools whose effects we know: (name, read-only, destructive).
const HINTS: &[(&str, bool, bool)] = &[
    ("read_file", true, false),
    ("search_files", true, false),
    ("skills_list", true, false),
    ("skill_view", true, false),
    ("tool_search", true, false),
    ("terminal", false, true),
    ("process", false, true),
    ("write_file", false, true),
    ("patch", false, true),
    ("skill_manage", false, true),
    ("memory", false, false),
    ("todo", false, false),
];

/// The server: one runtime, shared by every request.
#[derive(Clone)]
pub struct Server {
    rt: Arc<Runtime>,
    /// The client, once it has initialized (approvals ask it).
    peer: Arc<Mutex<Option<Peer<RoleServer>>>>,
}

impl Server {
    pub fn new(rt: Arc<Runtime>) -> Server {
        Server {
            rt,
            peer: Arc::new(Mutex::new(None)),
        }
    }

    fn remember(&self, peer: &Peer<RoleServer>) {
        let mut slot = self.peer.lock();
        if slot.is_none() {
            *slot = Some(peer.clone());
        }
    }

    fn tools(&self) -> Result<Vec<Tool>, McpError> {
        let text = self
            .rt
            .definitions(r#"{"format":"mcp"}"#)
            .map_err(|e| McpError::internal_error(e.message, None))?;
        let defs: Vec<Value> = serde_json::from_str(&text)
            .map_err(|e| McpError::internal_error(format!("definitions: {e}"), None))?;
        Ok(defs
            .into_iter()
            .filter_map(|mut d| {
                let name = d["name"].as_str().unwrap_or_default().to_string();
                if let Some((_, ro, destructive)) = HINTS.iter().find(|(n, ..)| *n == name) {
                    d["annotations"] = json!({
                        "readOnlyHint": ro,
                        "destructiveHint": destructive,
                    });
                }
                serde_json::from_value::<Tool>(d)
                    .map_err(|e| tracing::warn!(tool = %name, error = %e, "mcp server: definition skipped"))
                    .ok()
            })
            .collect())
    }
}

/// The result text of a dispatch as MCP's `CallToolResult`.
fn to_result(text: String, cancelled: bool) -> CallToolResult {
    let parsed: Option<Value> = serde_json::from_str(&text).ok();
    let failed = cancelled
        || parsed.as_ref().is_some_and(|v| {
            v.get("error").is_some_and(|e| !e.is_null())
                || v.get("status").and_then(Value::as_str) == Some("error")
                || v.get("status").and_then(Value::as_str) == Some("blocked")
        });
    let mut out = json!({
        "content": [{"type": "text", "text": text}],
        "isError": failed,
    });
    if let Some(v @ Value::Object(_)) = parsed {
        out["structuredContent"] = v;
    }
    serde_json::from_value(out).unwrap_or_else(|_| CallToolResult::error(vec![]))
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        InitializeResult::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(Implementation::new("hermes-tools", env!("CARGO_PKG_VERSION")))
        .with_instructions("The hermes-tools runtime's tools. Commands that need approval are asked about through elicitation when the client supports it, and blocked otherwise.")
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        self.remember(&context.peer);
        Ok(ListToolsResult::with_all_items(self.tools()?))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.remember(&context.peer);
        let args = request
            .arguments
            .map(|a| Value::Object(a).to_string())
            .unwrap_or_else(|| "{}".into());
        let (tx, rx) = tokio::sync::oneshot::channel();
        // Someone can answer approvals only through elicitation: without it
        // the call is non-interactive, and a command that needs approval is
        // blocked without asking.
        let can_elicit = context
            .peer
            .peer_info()
            .is_some_and(|info| info.capabilities.elicitation.is_some());
        let ctx = CallContext {
            task_id: "mcp".into(),
            session_id: "mcp".into(),
            interactive: Some(can_elicit),
            ..CallContext::default()
        };
        let id = self
            .rt
            .dispatch_async(
                &request.name,
                &args,
                ctx,
                Box::new(move |done| {
                    let _ = tx.send(done);
                }),
            )
            .map_err(|e| McpError::internal_error(e.message, None))?;
        let rt = self.rt.clone();
        let ct = context.ct.clone();
        tokio::select! {
            done = rx => match done {
                Ok(d) => Ok(CallToolResponse::Complete(to_result(d.text, d.cancelled))),
                Err(_) => Ok(CallToolResponse::Complete(to_result(
                    json!({"error": "the runtime closed before the call finished"}).to_string(),
                    true,
                ))),
            },
            _ = ct.cancelled() => {
                let _ = rt.cancel(id);
                Ok(CallToolResponse::Complete(to_result(
                    json!({"error": "cancelled by the client"}).to_string(),
                    true,
                )))
            }
        }
    }
}

/// Approval requests go to the client as elicitations.
struct Elicit {
    peer: Arc<Mutex<Option<Peer<RoleServer>>>>,
    handle: tokio::runtime::Handle,
    timeout: Duration,
}

fn deny(id: u64, why: &str) {
    tracing::info!(approval = id, reason = why, "mcp server: approval denied");
    hermes_runtime::approvals::respond(id, json!({ "choice": "deny" }).to_string());
}

impl ApprovalSink for Elicit {
    fn ask(&self, request: &Arc<str>, id: u64) {
        let peer = self.peer.lock().clone();
        let Some(peer) = peer else {
            return deny(id, "no client");
        };
        let can_elicit = peer
            .peer_info()
            .is_some_and(|info| info.capabilities.elicitation.is_some());
        if !can_elicit {
            return deny(id, "the client does not support elicitation");
        }
        let req: Value = serde_json::from_str(request).unwrap_or(Value::Null);
        let command = req["untrusted_command_text"].as_str().unwrap_or("?");
        let reasons: Vec<String> = req["reasons"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["description"].as_str().map(String::from))
            .collect();
        let message = format!(
            "Approve running this command?\n\n{command}\n\nWhy it needs approval: {}",
            reasons.join("; ")
        );
        let params: Result<ElicitRequestParams, _> = serde_json::from_value(json!({
            "mode": "form",
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "approve": {"type": "boolean", "title": "Run it", "description": "Run this command once"}
                },
                "required": ["approve"]
            }
        }));
        let Ok(params) = params else {
            return deny(id, "cannot build the elicitation");
        };
        let timeout = self.timeout;
        self.handle.spawn(async move {
            let answer = tokio::time::timeout(timeout, peer.create_elicitation(params)).await;
            match answer {
                Ok(Ok(r))
                    if r.action == ElicitationAction::Accept
                        && r.content.as_ref().and_then(|c| c["approve"].as_bool())
                            == Some(true) =>
                {
                    hermes_runtime::approvals::respond(id, json!({ "choice": "once" }).to_string());
                }
                Ok(Ok(_)) => deny(id, "declined by the client"),
                Ok(Err(e)) => deny(id, &format!("elicitation failed: {e}")),
                Err(_) => deny(id, "the client did not answer in time"),
            }
        });
    }
}

/// Serve `rt` over `transport` (stdin/stdout: [`rmcp::transport::stdio`])
/// until the client disconnects. Approvals ask the client; the registry is
/// watched for changes (`notifications/tools/list_changed`).
pub async fn serve<T, E, A>(rt: Arc<Runtime>, transport: T) -> Result<(), String>
where
    T: rmcp::transport::IntoTransport<RoleServer, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let server = Server::new(rt.clone());
    rt.set_approval_sink(
        false,
        Some(Arc::new(Elicit {
            peer: server.peer.clone(),
            handle: tokio::runtime::Handle::current(),
            timeout: Duration::from_secs(120),
        })),
    )
    .map_err(|e| e.message)?;
    let running = server
        .clone()
        .serve(transport)
        .await
        .map_err(|e| format!("mcp serve: {e}"))?;
    let peer = running.peer().clone();
    let watch_rt = rt.clone();
    let watcher = tokio::spawn(async move {
        let mut seen = watch_rt.generation();
        loop {
            tokio::time::sleep(Duration::from_millis(200)).await;
            let now = watch_rt.generation();
            if now != seen {
                seen = now;
                if peer.notify_tool_list_changed().await.is_err() {
                    break;
                }
            }
        }
    });
    let out = running.waiting().await;
    watcher.abort();
    let _ = rt.set_approval_sink(false, None);
    out.map(|_| ()).map_err(|e| format!("mcp serve: {e}"))
}
