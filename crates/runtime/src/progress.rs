//! Progress of host tool calls (`ht_call_progress`): a handler reports how far
//! it got, and the report reaches the runtime's event handler as a
//! `tool.progress` event, which an MCP server forwards as a progress
//! notification. Its own module because a call handle only names a pending
//! request: finding the runtime that owns it needs a process-wide table of
//! live runtimes (by core id), which nothing else needs.

use parking_lot::Mutex;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Weak};

use hermes_core::ToolServices;
use hermes_core::error::{Error, Result};
use hermes_core::pending::{self, Kind};

/// Live runtimes' services by core id; entries leave at close.
static RUNTIMES: LazyLock<Mutex<HashMap<u64, Weak<dyn ToolServices>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

pub(crate) fn register(core_id: u64, services: &Arc<dyn ToolServices>) {
    RUNTIMES.lock().insert(core_id, Arc::downgrade(services));
}

pub(crate) fn unregister(core_id: u64) {
    RUNTIMES.lock().remove(&core_id);
}

/// Report progress of host call `call_id` (the `ht_call*` id) to its
/// runtime's event handler as
/// `{"type":"tool.progress","call","tool_name","tool_call_id","task_id","progress_token"?,"progress","total"?,"message"?}`
/// (`progress_token` copied from the call's context when it has one).
/// `total` is left out when `None`. Errors: a non-finite `progress` or
/// `total` (InvalidArgument); a call that is not waiting any more or whose
/// runtime is closed (NotFound).
pub fn call_progress(
    call_id: u64,
    progress: f64,
    total: Option<f64>,
    message: Option<&str>,
) -> Result<()> {
    if !progress.is_finite() || total.is_some_and(|t| !t.is_finite()) {
        return Err(Error::invalid(
            "progress: progress and total must be finite numbers",
        ));
    }
    let Some((runtime_id, name, ctx)) = pending::live_info(call_id, Kind::Call) else {
        return Err(Error::not_found(format!(
            "progress: call {call_id} is not waiting for an answer"
        )));
    };
    let services = RUNTIMES.lock().get(&runtime_id).and_then(Weak::upgrade);
    let Some(services) = services else {
        return Err(Error::not_found("progress: the call's runtime is closed"));
    };
    let ctx: Map<String, Value> = match ctx.as_deref().map(serde_json::from_str::<Value>) {
        Some(Ok(Value::Object(m))) => m,
        _ => Map::new(),
    };
    let field = |k: &str| ctx.get(k).cloned().unwrap_or(Value::String(String::new()));
    let mut ev = Map::new();
    ev.insert("type".into(), "tool.progress".into());
    ev.insert("call".into(), call_id.into());
    ev.insert("tool_name".into(), Value::String(name.to_string()));
    ev.insert("tool_call_id".into(), field("tool_call_id"));
    ev.insert("task_id".into(), field("task_id"));
    if let Some(t) = ctx.get("progress_token") {
        ev.insert("progress_token".into(), t.clone());
    }
    ev.insert("progress".into(), progress.into());
    if let Some(t) = total {
        ev.insert("total".into(), t.into());
    }
    if let Some(m) = message {
        ev.insert("message".into(), Value::String(m.to_string()));
    }
    services.emit_event(Value::Object(ev));
    Ok(())
}

/// Emit `event` on runtime `runtime_id`'s event taps and handler (NotFound
/// when it is closed); `what` names the caller in the error.
pub(crate) fn emit(runtime_id: u64, event: Value, what: &str) -> Result<()> {
    let services = RUNTIMES.lock().get(&runtime_id).and_then(Weak::upgrade);
    let Some(services) = services else {
        return Err(Error::not_found(format!(
            "{what}: the call's runtime is closed"
        )));
    };
    services.emit_event(event);
    Ok(())
}
