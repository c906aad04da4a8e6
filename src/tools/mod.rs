//! Built-in tools that run natively inside the library. Each implements
//! [`NativeTool`]; the runtime registers them like host tools, so they go
//! through the same pipeline (validation, hooks, limits, batches).

pub mod terminal;

use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::dispatch::CallContext;
use crate::runtime::Shared;

/// What a native tool returns: text for the model, and whether it is an error.
#[derive(Debug, Clone)]
pub struct ToolOutput {
    pub text: String,
    pub is_error: bool,
}

impl ToolOutput {
    pub fn ok(text: impl Into<String>) -> Self {
        ToolOutput {
            text: text.into(),
            is_error: false,
        }
    }
    pub fn error(text: impl Into<String>) -> Self {
        ToolOutput {
            text: text.into(),
            is_error: true,
        }
    }
    /// A JSON value as the result text.
    pub fn json(v: &Value) -> Self {
        Self::ok(v.to_string())
    }
}

/// Set when the call is cancelled (ht_runtime_cancel, runtime free) or timed out.
#[derive(Default, Debug)]
pub struct CancelToken(AtomicBool);

impl CancelToken {
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Release);
    }
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

/// Everything a native tool may use while it runs.
pub struct ToolCtx<'a> {
    pub shared: &'a Arc<Shared>,
    pub context: &'a CallContext,
    pub cancel: &'a CancelToken,
    pub deadline: Option<Instant>,
}

pub trait NativeTool: Send + Sync {
    /// Run the tool with validated arguments. Runs on the dispatching thread
    /// (sync dispatch) or a worker thread (async), never the callback thread.
    fn call(&self, args: Value, ctx: &ToolCtx<'_>) -> ToolOutput;
}

/// Something a built-in toolset must do when a task ends or the runtime closes.
pub trait Lifecycle: Send + Sync {
    /// A task's state is dropped (its processes killed).
    fn cleanup_task(&self, _task_id: &str) {}
    /// The runtime is closing: stop everything, leave nothing behind.
    fn shutdown(&self) {}
}

/// Register the built-in toolsets named in the config.
pub fn install(shared: &Arc<Shared>) -> crate::error::Result<()> {
    for name in &shared.config.builtin_toolsets {
        match name.as_str() {
            "terminal" => terminal::install(shared)?,
            _ => {
                return Err(crate::error::Error::new(
                    crate::error::Status::Unsupported,
                    format!(
                        "runtime config: builtin_toolsets: '{name}' is not available in this build yet"
                    ),
                ));
            }
        }
    }
    Ok(())
}
