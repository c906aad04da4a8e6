//! A host tool talks to the MCP client that made its call (`ht_call_log`,
//! `ht_call_client_request`): a log message for the client
//! (`notifications/message`) and a request to the client (sampling, a form
//! for the user, the client's roots), answered while the call waits.
//!
//! Why here: a call handle only names a pending request; its runtime is
//! found by the process-wide table of live runtimes (progress.rs), and the
//! client by the MCP servers serving that runtime, which register here
//! ([`Runtime::add_client_requests`]). A call that no MCP client made (the
//! host's own dispatch) gets a clear error, never a hang.
//!
//! [`Runtime::add_client_requests`]: crate::Runtime::add_client_requests

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::{Map, Value};

use hermes_core::error::{Error, Result};
use hermes_core::pending::{self, Kind};

/// The methods a tool may send to its client (MCP server-to-client
/// requests): nothing else reaches the client this way.
pub const METHODS: &[&str] = &["sampling/createMessage", "elicitation/create", "roots/list"];

/// MCP log levels, lowest first (RFC 5424 severities).
pub const LEVELS: &[&str] = &[
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// Longest wait for a client's answer.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(600);
/// The wait when the host gives none.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// Sends requests to MCP clients (an MCP server serving the runtime).
pub trait ClientRequests: Send + Sync {
    /// Send `method` with `params` to the client whose call has this
    /// `tool_call_id` and wait up to `timeout` for its result. `None` when
    /// this server did not make that call; `Some(Err(_))` when the client
    /// cannot or did not answer (Unsupported: no capability; InvalidArgument:
    /// params not of the method's shape; Timeout; Internal: the client's
    /// error; Cancelled: `waiting` turned false, the call ended first).
    /// `waiting()` tells whether the call still waits for its answer (false
    /// after its timeout, a cancel or the runtime's free): the wait for the
    /// client ends then too.
    fn request(
        &self,
        tool_call_id: &str,
        method: &str,
        params: Value,
        timeout: Duration,
        waiting: &dyn Fn() -> bool,
    ) -> Option<Result<Value>>;
}

type Registered = Vec<(u64, Arc<dyn ClientRequests>)>;

/// Each runtime's registered servers, by core id.
static CLIENTS: LazyLock<Mutex<HashMap<u64, Registered>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));
static NEXT: AtomicU64 = AtomicU64::new(1);

pub(crate) fn add(core_id: u64, r: Arc<dyn ClientRequests>) -> u64 {
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    CLIENTS.lock().entry(core_id).or_default().push((id, r));
    id
}

pub(crate) fn remove(core_id: u64, id: u64) {
    let mut map = CLIENTS.lock();
    if let Some(v) = map.get_mut(&core_id) {
        v.retain(|(i, _)| *i != id);
        if v.is_empty() {
            map.remove(&core_id);
        }
    }
}

pub(crate) fn remove_all(core_id: u64) {
    CLIENTS.lock().remove(&core_id);
}

/// The waiting call's runtime id and context fields.
fn call_info(call_id: u64, what: &str) -> Result<(u64, Arc<str>, Map<String, Value>)> {
    let Some((runtime_id, name, ctx)) = pending::live_info(call_id, Kind::Call) else {
        return Err(Error::not_found(format!(
            "{what}: call {call_id} is not waiting for an answer"
        )));
    };
    let ctx = match ctx.as_deref().map(serde_json::from_str::<Value>) {
        Some(Ok(Value::Object(m))) => m,
        _ => Map::new(),
    };
    Ok((runtime_id, name, ctx))
}

/// Send `method` with `params` to the MCP client that made host call
/// `call_id` and wait (blocking this thread, at most `timeout`, capped at
/// [`MAX_TIMEOUT`]) for its result, as JSON text. Errors: a method not in
/// [`METHODS`] or params that are not an object (InvalidArgument); a call
/// that is not waiting (NotFound), or stops waiting before the client
/// answers (Cancelled); a call no MCP client made or a client
/// without the capability (Unsupported); params not of the method's shape
/// (InvalidArgument); no answer in time (Timeout); the client's error
/// (Internal); each with the reason.
pub fn client_request(
    call_id: u64,
    method: &str,
    params: Value,
    timeout: Option<Duration>,
) -> Result<String> {
    if !METHODS.contains(&method) {
        return Err(Error::invalid(format!(
            "client request: method '{}' is not one a tool may send ({})",
            method.chars().take(64).collect::<String>(),
            METHODS.join(", ")
        )));
    }
    if !params.is_object() {
        return Err(Error::invalid(
            "client request: params must be a JSON object",
        ));
    }
    let timeout = timeout.unwrap_or(DEFAULT_TIMEOUT).min(MAX_TIMEOUT);
    let (runtime_id, _, ctx) = call_info(call_id, "client request")?;
    let tool_call_id = ctx
        .get("tool_call_id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let servers: Registered = CLIENTS.lock().get(&runtime_id).cloned().unwrap_or_default();
    let waiting = || pending::live_info(call_id, Kind::Call).is_some();
    for (_, s) in servers {
        match s.request(&tool_call_id, method, params.clone(), timeout, &waiting) {
            None => continue,
            Some(Ok(v)) => return Ok(v.to_string()),
            Some(Err(e)) => {
                return Err(Error::new(e.kind, format!("client request: {}", e.message)));
            }
        }
    }
    Err(Error::new(
        hermes_core::error::ErrorKind::Unsupported,
        "client request: this call was not made by an MCP client (only calls served by ht_runtime_serve_mcp have one)",
    ))
}

/// Log a message of host call `call_id` at `level` (one of [`LEVELS`]):
/// the runtime's event handler (and an MCP server, which sends it to the
/// calling client as `notifications/message` when the client asked for
/// that level) gets `{"type":"tool.log","call","tool_name","tool_call_id",
/// "task_id","level","message"}`.
pub fn call_log(call_id: u64, level: &str, message: &str) -> Result<()> {
    if !LEVELS.contains(&level) {
        return Err(Error::invalid(format!(
            "log: level must be one of {}",
            LEVELS.join(", ")
        )));
    }
    let (runtime_id, name, ctx) = call_info(call_id, "log")?;
    let field = |k: &str| ctx.get(k).cloned().unwrap_or(Value::String(String::new()));
    let mut ev = Map::new();
    ev.insert("type".into(), "tool.log".into());
    ev.insert("call".into(), call_id.into());
    ev.insert("tool_name".into(), Value::String(name.to_string()));
    ev.insert("tool_call_id".into(), field("tool_call_id"));
    ev.insert("task_id".into(), field("task_id"));
    ev.insert("level".into(), level.into());
    ev.insert("message".into(), message.into());
    crate::progress::emit(runtime_id, Value::Object(ev), "log")
}
