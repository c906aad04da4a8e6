//! The one interface every tool implements, whoever provides it: a host
//! callback (through the C ABI), a built-in tool, an MCP server's tool, a
//! plugin's. Dispatch knows only this trait: it hands the tool a [`ToolCall`]
//! and the tool answers exactly once through the call's [`Reply`], now or
//! later, from any thread. It also defines the narrow services a tool may use
//! ([`ToolServices`]) so no tool ever holds the whole runtime.

use serde_json::Value;
use std::sync::Arc;
use std::time::Instant;

use crate::context::CallContext;
use crate::pending::{self, Answer, Kind};

pub use hermes_exec::CancelToken;

/// What a tool returns: text for the model, and whether it is an error.
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

/// The continuation of one call: answer it exactly once. Its value is the id
/// of the request in the in-flight table, which is also what a C host gets as
/// its `ht_call*` handle (so a host that answers twice, late or after free
/// gets a clear status, never a use-after-free).
#[derive(Debug)]
pub struct Reply {
    id: u64,
}

impl Reply {
    pub(crate) fn new(id: u64) -> Reply {
        Reply { id }
    }
    /// The request id (the host's handle).
    pub fn id(&self) -> u64 {
        self.id
    }
    /// Answer the call. Late answers (after a timeout or cancel) are dropped harmlessly.
    pub fn send(self, out: ToolOutput) {
        pending::respond(
            self.id,
            Kind::Call,
            Answer::Responded {
                is_error: out.is_error,
                text: out.text,
            },
        );
    }
}

/// How the dispatcher runs this call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Synchronous dispatch: the tool may block the calling thread.
    Inline,
    /// Asynchronous dispatch: `call` runs on the callbacks thread and must not block;
    /// blocking work goes to the runtime's blocking pool ([`Blocking`] does this).
    Async,
}

/// One call as a tool sees it.
pub struct ToolCall<'a> {
    /// The tool's registered name (bulk-registered tools share one implementation).
    pub name: &'a str,
    /// The arguments after repair and validation, as JSON text.
    pub args_text: &'a Arc<str>,
    /// The same arguments parsed, when the dispatcher already has them.
    pub args: Option<&'a Value>,
    pub context: &'a CallContext,
    pub cancel: &'a CancelToken,
    pub deadline: Option<Instant>,
    pub mode: Mode,
    /// Where blocking work of an async call runs.
    pub engine: &'a crate::engine::Engine,
    pub reply: Reply,
}

/// A tool. Implementations answer through `call.reply` exactly once.
pub trait Tool: Send + Sync {
    fn call(&self, call: ToolCall<'_>);
    /// Whether the tool wants the parsed arguments (`ToolCall::args`).
    fn wants_value(&self) -> bool {
        true
    }
    /// Whether the tool enforces its own deadline (`ToolCall::deadline`), so
    /// dispatch does not cut it short at the call timeout.
    fn own_timeout(&self) -> bool {
        false
    }
}

/// What a blocking tool gets while it runs (owned: it may run on a pool thread).
pub struct RunCtx {
    pub context: CallContext,
    pub cancel: CancelToken,
    pub deadline: Option<Instant>,
    pub name: String,
}

/// A tool written as a blocking function (most built-in tools). Wrap it in
/// [`Blocking`] to get a [`Tool`]: sync dispatch runs it inline, async
/// dispatch on the runtime's blocking pool (threads are reused, never one per call).
pub trait BlockingTool: Send + Sync + 'static {
    fn run(&self, args: Value, ctx: &RunCtx) -> ToolOutput;
}

/// Adapter from [`BlockingTool`] to [`Tool`].
pub struct Blocking<T>(pub Arc<T>);

impl<T: BlockingTool> Tool for Blocking<T> {
    fn call(&self, call: ToolCall<'_>) {
        let args = call
            .args
            .cloned()
            .unwrap_or_else(|| Value::Object(Default::default()));
        let ctx = RunCtx {
            context: call.context.clone(),
            cancel: call.cancel.clone(),
            deadline: call.deadline,
            name: call.name.to_string(),
        };
        let tool = self.0.clone();
        let reply = call.reply;
        let run = move || {
            let out =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| tool.run(args, &ctx)))
                    .unwrap_or_else(|_| {
                        ToolOutput::error(format!(
                            "internal error in built-in tool '{}' (bug)",
                            ctx.name
                        ))
                    });
            reply.send(out);
        };
        match call.mode {
            Mode::Inline => run(),
            Mode::Async => call.engine.spawn_blocking(run),
        }
    }
    fn own_timeout(&self) -> bool {
        true
    }
}

/// The gate's answer for a command.
#[derive(Debug)]
pub enum CommandDecision {
    Allow,
    /// Not approved: `message` is for the model; `check` explains why.
    Deny {
        message: String,
        check: Box<hermes_approval::CheckResult>,
    },
}

/// The narrow services a tool may use, provided by the runtime. Fail closed:
/// a command nobody approved does not run.
pub trait ToolServices: Send + Sync {
    /// Decide whether `command` may run for the call described by `ctx`.
    /// Blocks while the host is asked (bounded by the approvals timeout).
    fn approve_command(
        &self,
        command: &str,
        ctx: &CallContext,
        cancel: &CancelToken,
    ) -> CommandDecision;
    /// Decide whether an action that is not a shell command may proceed
    /// (a file tool reading a credential file or writing a shell profile):
    /// `check` carries its reasons, `subject` is what a human is shown
    /// (and what an approval is bound to). Same policy, handler and
    /// timeouts as commands; without an approval service it is denied.
    fn approve_check(
        &self,
        check: hermes_approval::CheckResult,
        subject: &str,
        ctx: &CallContext,
        cancel: &CancelToken,
    ) -> CommandDecision {
        let _ = (subject, ctx, cancel);
        CommandDecision::Deny {
            message: "no approval service: the action is not allowed".into(),
            check: Box::new(check),
        }
    }
    /// Ask whether `command` may run outside the sandbox (`why`: what it
    /// needs that the sandbox denies). The command is judged as if it ran
    /// on this machine, and the request always asks (a "session" answer
    /// covers the same escalation again). Without an approval service it is
    /// denied.
    fn approve_escalation(
        &self,
        command: &str,
        why: &str,
        ctx: &CallContext,
        cancel: &CancelToken,
    ) -> CommandDecision {
        let _ = (why, ctx, cancel);
        CommandDecision::Deny {
            message: "no approval service: running outside the sandbox is not allowed".into(),
            check: Box::new(hermes_approval::Engine::default().check(command)),
        }
    }
    /// Put a request an MCP server sent to its client (`kind`: `"sampling"`
    /// for `sampling/createMessage`, `"elicitation"` for
    /// `elicitation/create`; `params` as the server sent them) to the host,
    /// and wait (bounded by `timeout`, or `cancel`) for its answer: the
    /// result object to send back, or a one-line reason it is refused.
    /// Blocks: call it from a blocking thread. Default: refused.
    fn server_request(
        &self,
        kind: &str,
        server: &str,
        params: Value,
        timeout: std::time::Duration,
        cancel: &CancelToken,
    ) -> Result<Value, String> {
        let _ = (server, params, timeout, cancel);
        Err(format!("this host does not answer {kind} requests"))
    }
    /// Send an event (a JSON object) to the host's event handler.
    fn emit_event(&self, event: Value);
    /// Whether anyone listens to events (saves building them).
    fn has_event_handler(&self) -> bool {
        true
    }
}

/// Something a tool provider must do when a task ends or the runtime closes.
pub trait Lifecycle: Send + Sync {
    /// A task's state is dropped (its processes killed).
    fn cleanup_task(&self, _task_id: &str) {}
    /// The runtime is closing: stop everything, leave nothing behind.
    fn shutdown(&self) {}
}
