//! The MCP server front end: a runtime's enabled tools (built-in, host,
//! plugin and MCP-sourced) served to any MCP client over stdio, any
//! async byte stream or streamable HTTP, with the official rmcp SDK.
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
//! - progress: `notifications/progress` for calls with a progress token
//!   (progress.rs); background processes as resources (processes.rs).
//! - transports: stdio or any byte stream ([`serve`]), and streamable HTTP
//!   on a loopback address ([`serve_http`]), authenticated by a bearer token
//!   (auth.rs), its origins checked and every resource bounded (limits.rs,
//!   sessions.rs).
//! - `logging/setLevel`: the session's calls are reported to it as
//!   `notifications/message` at the level it chose.

mod approval;
pub mod auth;
mod calls;
mod client;
mod http;
pub mod limits;
mod processes;
mod progress;
mod quotas;
mod serve;
mod sessions;

pub use auth::{Auth, HttpAuth};
pub use http::{PATH as HTTP_PATH, prepare_http, serve_http};
pub use limits::{HttpOptions, Limits};
pub use serve::{Approvals, Options, serve, serve_with};

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rmcp::model::ErrorCode;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, InitializeResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, ServerCapabilities, ServerConfig,
    SubscribeRequestParams, Tool, UnsubscribeRequestParams,
};
#[allow(deprecated)] // logging is deprecated by a 2026 draft, still in 2025-11-25
use rmcp::model::{LoggingLevel, SetLevelRequestParams};
use rmcp::service::{NotificationContext, Peer, RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServerHandler};
use serde_json::{Value, json};

use hermes_core::context::CallContext;
use hermes_runtime::Runtime;

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

/// The JSON-RPC error code of a request over a session's quota (the
/// implementation-defined server error range).
pub const QUOTA_ERROR: i32 = -32000;

/// What every session of one served runtime shares.
pub(crate) struct Shared {
    pub rt: Arc<Runtime>,
    pub calls: Arc<calls::Calls>,
    pub followers: processes::Followers,
    sessions: AtomicU64,
    /// Every session's client, for `notifications/tools/list_changed`.
    pub peers: parking_lot::Mutex<Vec<Peer<RoleServer>>>,
    pub limits: Limits,
    /// Each session's quotas and log level, by task.
    quotas: parking_lot::Mutex<std::collections::HashMap<String, Arc<quotas::Session>>>,
}

impl Shared {
    pub fn new(rt: Arc<Runtime>, limits: Limits) -> Arc<Shared> {
        Arc::new(Shared {
            rt,
            calls: Arc::default(),
            followers: processes::Followers::default(),
            sessions: AtomicU64::new(0),
            peers: parking_lot::Mutex::new(Vec::new()),
            limits,
            quotas: parking_lot::Mutex::new(std::collections::HashMap::new()),
        })
    }

    /// The quotas of the session whose task is `task` (made on first use).
    pub(crate) fn session(&self, task: &str) -> Arc<quotas::Session> {
        self.quotas
            .lock()
            .entry(task.to_string())
            .or_insert_with(|| Arc::new(quotas::Session::new(self.limits.session_max_calls)))
            .clone()
    }

    /// Whether the session of `task` has a call running.
    pub(crate) fn session_busy(&self, task: &str) -> bool {
        self.quotas
            .lock()
            .get(task)
            .is_some_and(|s| s.busy(self.limits.session_max_calls))
    }

    /// A session closed: its quotas, followers and task state go (its
    /// background processes are killed).
    pub(crate) fn end_session(&self, task: &str) {
        if let Some(s) = self.quotas.lock().remove(task) {
            s.closed.store(true, Ordering::SeqCst);
        }
        self.followers.forget(task);
        // Killing the task's processes waits out their grace: off the
        // async workers when there are some.
        let rt = self.rt.clone();
        let task = task.to_string();
        match tokio::runtime::Handle::try_current() {
            Ok(h) => {
                h.spawn_blocking(move || rt.cleanup_task(&task));
            }
            Err(_) => rt.cleanup_task(&task),
        }
    }
}

/// Cleans a call's task up when the call ends after its session did (a
/// DELETE racing a background start: the process registered after the
/// session's own cleanup ran).
struct CleanupIfClosed {
    shared: Arc<Shared>,
    task: String,
    session: Arc<quotas::Session>,
}

impl Drop for CleanupIfClosed {
    fn drop(&mut self) {
        if !self.session.closed.load(Ordering::SeqCst) {
            return;
        }
        let rt = self.shared.rt.clone();
        let task = std::mem::take(&mut self.task);
        match tokio::runtime::Handle::try_current() {
            Ok(h) => {
                h.spawn_blocking(move || rt.cleanup_task(&task));
            }
            Err(_) => rt.cleanup_task(&task),
        }
    }
}

/// One MCP session's handler (stdio has one; HTTP one per session).
#[derive(Clone)]
pub struct Server {
    shared: Arc<Shared>,
    session: u64,
    /// The task id of this session's calls (terminal cwd, environment and
    /// background processes are per task).
    task: String,
    /// This session's client is in `Shared::peers`.
    known: Arc<AtomicBool>,
}

impl Server {
    pub(crate) fn new(shared: Arc<Shared>, task: Option<&str>) -> Server {
        let session = shared.sessions.fetch_add(1, Ordering::Relaxed) + 1;
        let task = task.map_or_else(|| format!("mcp-{session}"), String::from);
        Server {
            shared,
            session,
            task,
            known: Arc::new(AtomicBool::new(false)),
        }
    }

    fn remember(&self, peer: &Peer<RoleServer>) {
        if !self.known.swap(true, Ordering::AcqRel) {
            let mut peers = self.shared.peers.lock();
            peers.retain(|p| !p.is_transport_closed());
            peers.push(peer.clone());
        }
    }

    fn rt(&self) -> &Runtime {
        &self.shared.rt
    }

    /// The task of a request: over HTTP, sessions are told apart by their
    /// `mcp-session-id` header (a session's handler may be rebuilt per
    /// request); otherwise the session's own task.
    fn task_of(&self, ext: &rmcp::model::Extensions) -> String {
        let header = ext
            .get::<::http::request::Parts>()
            .and_then(|p| p.headers.get("mcp-session-id"))
            .and_then(|v| v.to_str().ok());
        match header {
            Some(h) => quotas::task_of_session(h),
            None => self.task.clone(),
        }
    }

    fn tools(&self) -> Result<Vec<Tool>, McpError> {
        let text = self
            .rt()
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

/// The result text of a dispatch as MCP's `CallToolResult`. A tool whose
/// spec declares `mcp_content` answers a `CallToolResult` itself (content
/// blocks: images, audio, resources), sent as it is when it reads as one;
/// anything else (an error the runtime made, a result cut to size) is text.
fn to_result(text: String, cancelled: bool, mcp_content: bool) -> CallToolResult {
    if mcp_content
        && !cancelled
        && let Ok(r) = serde_json::from_str::<CallToolResult>(&text)
        && !r.content.is_empty()
    {
        return r;
    }
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
    #[allow(deprecated)] // logging: still in protocol 2025-11-25, which clients speak
    fn get_info(&self) -> ServerConfig {
        InitializeResult::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_resources()
                .enable_resources_subscribe()
                .enable_resources_list_changed()
                .enable_logging()
                .build(),
        )
        .with_server_info(Implementation::new("hermes-tools", env!("CARGO_PKG_VERSION")))
        .with_instructions("The hermes-tools runtime's tools. Commands that need approval are asked about through elicitation when the client supports it, and blocked otherwise. Background processes of the terminal are resources (process://<id>): read one to see its output, subscribe to follow it.")
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.remember(&context.peer);
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
        // An unknown tool is a protocol error (the specification's -32602),
        // not a result the model reads.
        let Some(mcp_content) = self
            .rt()
            .core()
            .snapshot()
            .tools
            .get(request.name.as_ref())
            .map(|e| e.mcp_content)
        else {
            let shown: String = request.name.chars().take(80).collect();
            return Err(McpError::invalid_params(
                format!("unknown tool '{shown}' (see tools/list)"),
                None,
            ));
        };
        self.remember(&context.peer);
        let task = self.task_of(&context.extensions);
        let session = self.shared.session(&task);
        // Whatever way this call ends: if its session ended meanwhile, what
        // the call started is cleaned up with the task again.
        let _after = CleanupIfClosed {
            shared: self.shared.clone(),
            task: task.clone(),
            session: session.clone(),
        };
        let max_calls = self.shared.limits.session_max_calls;
        let Ok(_permit) = session.calls.clone().try_acquire_owned() else {
            return Err(McpError::new(
                ErrorCode(QUOTA_ERROR),
                format!(
                    "this session already has {max_calls} tool calls running (session_max_calls); wait for one to finish"
                ),
                Some(json!({"limit": "session_max_calls", "value": max_calls})),
            ));
        };
        // A background start is checked against the session's quota and
        // made under its lock, so concurrent starts cannot overshoot.
        // Fail closed: any `background` that is not plainly false counts
        // (argument repair turns "True", "yes", 1 ... into true later).
        let starts_process = request.name == "terminal"
            && request.arguments.as_ref().is_some_and(|a| {
                !matches!(
                    a.get("background"),
                    None | Some(Value::Null) | Some(Value::Bool(false))
                ) && !a
                    .get("background")
                    .and_then(Value::as_str)
                    .is_some_and(|s| {
                        matches!(s.trim(), "" | "false" | "False" | "FALSE" | "0" | "no")
                    })
                    && a.get("background").and_then(Value::as_i64) != Some(0)
            });
        let _spawning = if starts_process {
            let guard = session.spawning.lock().await;
            let max = self.shared.limits.session_max_processes;
            let running = processes::running(self.rt(), &task);
            if running >= max {
                return Ok(CallToolResponse::Complete(to_result(
                    json!({
                        "error": format!("this session already has {running} background processes running (session_max_processes is {max}); wait for one to exit or kill one with the process tool"),
                        "limit": "session_max_processes",
                    })
                    .to_string(),
                    true,
                    false,
                )));
            }
            Some(guard)
        } else {
            None
        };
        let args = request
            .arguments
            .map(|a| Value::Object(a).to_string())
            .unwrap_or_else(|| "{}".into());
        // Someone can answer approvals only through elicitation: without it
        // the call is non-interactive, and a command that needs approval is
        // blocked without asking.
        let can_elicit = context
            .peer
            .peer_info()
            .is_some_and(|info| info.capabilities.elicitation.is_some());
        let token = context.meta.get_progress_token();
        let entry = self
            .shared
            .calls
            .begin(context.peer.clone(), token, session.clone());
        #[allow(deprecated)]
        if let Some(m) = progress::message_for(
            &session,
            LoggingLevel::Debug,
            json!({"event": "call.started", "tool": request.name, "call": entry.id}),
        ) {
            entry.live.log(m);
        }
        let mut ctx_json = json!({
            "task_id": task,
            "session_id": task,
            "tool_call_id": entry.id,
            "interactive": can_elicit,
        });
        if let Some(t) = &entry.live.token {
            ctx_json["progress_token"] = serde_json::to_value(t).unwrap_or(Value::Null);
        }
        let ctx = CallContext::parse(Some(&ctx_json.to_string()))
            .map_err(|e| McpError::internal_error(e.message, None))?;
        // Followers of the session's processes: a background command
        // started by this call shows up in resources/list_changed.
        if request.name == "terminal" || request.name == "process" {
            self.shared
                .followers
                .watch_list(self.rt(), &task, self.session, context.peer.clone());
        }
        let (tx, rx) = tokio::sync::oneshot::channel();
        let id = self
            .rt()
            .dispatch_async(
                &request.name,
                &args,
                ctx,
                Box::new(move |done| {
                    let _ = tx.send(done);
                }),
            )
            .map_err(|e| McpError::internal_error(e.message, None))?;
        let beat = progress::heartbeat(entry.live.clone());
        let out = tokio::select! {
            done = rx => match done {
                Ok(d) => to_result(d.text, d.cancelled, mcp_content),
                Err(_) => to_result(
                    json!({"error": "the runtime closed before the call finished"}).to_string(),
                    true,
                    false,
                ),
            },
            _ = context.ct.cancelled() => {
                let _ = self.rt().cancel(id);
                to_result(
                    json!({"error": "cancelled by the client"}).to_string(),
                    true,
                    false,
                )
            }
        };
        if let Some(b) = beat {
            b.abort();
        }
        let failed = out.is_error == Some(true);
        #[allow(deprecated)]
        let level = if failed {
            LoggingLevel::Warning
        } else {
            LoggingLevel::Debug
        };
        if let Some(m) = progress::message_for(
            &session,
            level,
            json!({"event": "call.finished", "tool": request.name, "call": entry.id, "failed": failed}),
        ) {
            entry.live.log(m);
        }
        entry.finish().await;
        Ok(CallToolResponse::Complete(out))
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let task = self.task_of(&context.extensions);
        *self.shared.session(&task).log_level.lock() = Some(request.level);
        Ok(())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let task = self.task_of(&context.extensions);
        self.shared
            .followers
            .watch_list(self.rt(), &task, self.session, context.peer.clone());
        let items = processes::list(self.rt(), &task);
        serde_json::from_value(json!({ "resources": items }))
            .map_err(|e| McpError::internal_error(format!("resources: {e}"), None))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let task = self.task_of(&context.extensions);
        let Some(v) = processes::read(self.rt(), &task, &request.uri) else {
            return Err(McpError::resource_not_found(
                format!(
                    "no resource '{}': this server's resources are the session's background processes (process://<id>, see resources/list)",
                    request.uri
                ),
                None,
            ));
        };
        let contents = serde_json::from_value(json!([{
            "uri": request.uri,
            "mimeType": "application/json",
            "text": v.to_string(),
        }]))
        .map_err(|e| McpError::internal_error(format!("resource: {e}"), None))?;
        Ok(ReadResourceResponse::Complete(ReadResourceResult::new(
            contents,
        )))
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let task = self.task_of(&context.extensions);
        if processes::id_of(&request.uri).is_none() {
            return Err(McpError::invalid_params(
                format!(
                    "cannot subscribe to '{}': only process://<id> resources change",
                    request.uri
                ),
                None,
            ));
        }
        self.shared
            .followers
            .subscribe(self.rt(), &task, &request.uri, context.peer.clone());
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let task = self.task_of(&context.extensions);
        self.shared.followers.unsubscribe(&task, &request.uri);
        Ok(())
    }
}
