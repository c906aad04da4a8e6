//! The dispatch context (`context_json`): who is calling, for which task,
//! with which per-call overrides. Tools, hooks and dispatch all read it.

use serde_json::{Map, Value};
use std::sync::Arc;

use crate::error::{Error, Result};

/// The dispatch context (`context_json`).
#[derive(Debug, Default, Clone)]
pub struct CallContext {
    pub task_id: String,
    pub session_id: String,
    pub tool_call_id: String,
    pub user_task: Option<String>,
    pub interactive: Option<bool>,
    /// Per-call timeout override in seconds.
    pub timeout: Option<f64>,
    /// The context as JSON for handlers (`None` = `{}`).
    pub json: Option<Arc<str>>,
}

impl CallContext {
    pub fn parse(text: Option<&str>) -> Result<CallContext> {
        let text = match text.map(str::trim) {
            None | Some("") => return Ok(CallContext::default()),
            Some(t) => t,
        };
        let v: Value =
            serde_json::from_str(text).map_err(|e| Error::json(format!("context: {e}")))?;
        let Value::Object(map) = v else {
            return Err(Error::json("context: must be a JSON object"));
        };
        let s = |k: &str| -> Result<Option<String>> {
            match map.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(Error::json(format!("context: {k}: must be a string"))),
            }
        };
        let interactive = match map.get("interactive") {
            None | Some(Value::Null) => None,
            Some(Value::Bool(b)) => Some(*b),
            Some(_) => return Err(Error::json("context: interactive: must be a boolean")),
        };
        let timeout = match map.get("timeout") {
            None | Some(Value::Null) => None,
            Some(v) => {
                let t = v
                    .as_f64()
                    .ok_or_else(|| Error::json("context: timeout: must be a number of seconds"))?;
                crate::error::seconds("context: timeout", t, false)?;
                Some(t)
            }
        };
        Ok(CallContext {
            task_id: s("task_id")?.unwrap_or_default(),
            session_id: s("session_id")?.unwrap_or_default(),
            tool_call_id: s("tool_call_id")?.unwrap_or_default(),
            user_task: s("user_task")?,
            interactive,
            timeout,
            json: Some(Arc::from(Value::Object(map).to_string())),
        })
    }

    /// The same context for another call of a batch.
    pub fn with_tool_call_id(&self, id: &str) -> CallContext {
        let mut c = self.clone();
        c.tool_call_id = id.to_string();
        let mut map = match self.json.as_deref().map(serde_json::from_str::<Value>) {
            Some(Ok(Value::Object(m))) => m,
            _ => Map::new(),
        };
        map.insert("tool_call_id".into(), Value::String(id.to_string()));
        c.json = Some(Arc::from(Value::Object(map).to_string()));
        c
    }
}
