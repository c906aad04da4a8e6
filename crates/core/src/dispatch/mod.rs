//! The dispatch pipeline, one for every call:
//! parse → repair → validate → pre hooks → run → post hooks → transform → limit → wrap.
//!
//! The pipeline is a state machine ([`Flow`]) that stops whenever it needs
//! the host (a handler, a hook decision). The synchronous driver waits on the
//! calling thread; the asynchronous driver parks the flow in the host request
//! and resumes it on the callback thread when the host answers. Both run the
//! same steps, so sync, async and batch calls behave the same.

pub mod batch;
pub mod limit;

use serde_json::{Map, Value, json};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::core::{Core, OwnedActive};
use crate::error::Result;
use crate::flow::FlowCtl;
use crate::hooks::{HookEntry, HookReply, Hooks};
use crate::params::Options;
use crate::pending::{self, Answer, Kind, SyncSlot, Waiter};
use crate::registry::ToolEntry;
use crate::suggest::similar;
use crate::tool::{CancelToken, Mode, Reply, Tool, ToolCall};

pub use crate::context::CallContext;

/// How a call ended, before it becomes text.
#[derive(Debug)]
enum Outcome {
    Text {
        text: String,
        is_error: bool,
    },
    Blocked(String),
    TimedOut(f64),
    Cancelled,
    /// A ready-made error result (bad arguments, unknown tool).
    Invalid(String),
    /// The tool refused to act because its approval was denied (its error
    /// result says `"status": "blocked"`): hooks see `blocked`, not `error`.
    Denied,
}

impl Outcome {
    fn status(&self) -> (&'static str, Option<&'static str>) {
        match self {
            Outcome::Text {
                is_error: false, ..
            } => ("ok", None),
            Outcome::Text { is_error: true, .. } => ("error", Some("tool_error")),
            Outcome::Blocked(_) => ("blocked", Some("plugin_block")),
            Outcome::TimedOut(_) => ("timeout", Some("timeout")),
            Outcome::Cancelled => ("cancelled", Some("cancelled")),
            Outcome::Invalid(_) => ("error", Some("invalid_arguments")),
            Outcome::Denied => ("blocked", Some("approval_denied")),
        }
    }
}

/// What the flow needs next.
enum Next {
    Done(String),
    Host(HostRequest),
}

/// A host callback to invoke and wait for.
struct HostRequest {
    kind: Kind,
    target: HostTarget,
    payload: Arc<str>,
    extra: Option<Arc<str>>,
    /// How long to wait for the answer (the deadline is computed only if the host does not answer inline).
    wait: Option<Duration>,
}

enum HostTarget {
    /// The flow's own tool (borrowed from its entry: no refcount on the hot path).
    EntryTool,
    /// The host's agent-loop handler.
    Interceptor(Arc<dyn Tool>),
    Hook(HookEntry),
}

/// The tool entry of a flow: borrowed from the registry snapshot for sync
/// calls (no shared refcount touched on the hot path), owned for async ones.
enum EntryRef<'a> {
    Borrowed(&'a ToolEntry),
    Owned(Arc<ToolEntry>),
}

impl std::ops::Deref for EntryRef<'_> {
    type Target = ToolEntry;
    fn deref(&self) -> &ToolEntry {
        match self {
            EntryRef::Borrowed(e) => e,
            EntryRef::Owned(e) => e,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Pre(usize),
    Run,
    Post,
    Transform(usize),
    Finish,
}

/// One call's pipeline state.
pub struct Flow<'a> {
    entry: EntryRef<'a>,
    hooks: Option<Arc<Hooks>>,
    args_text: Arc<str>,
    args: Option<Value>,
    ctx: CallContext,
    stage: Stage,
    outcome: Option<Outcome>,
    result: String,
    /// Set when hooks will want `duration_ms` (clock reads cost on the hot path).
    started: Option<Instant>,
    ran_for: Duration,
    ctl: Option<Arc<FlowCtl>>,
    timeout: Option<Duration>,
    hook_timeout: Duration,
    max_chars: usize,
    /// The host's agent-loop handler, when this is an agent-loop tool.
    intercept: Option<Arc<dyn Tool>>,
    /// `dispatch.repair` and `dispatch.formats`.
    opts: Options,
}

fn unknown_tool(core: &Core, name: &str) -> String {
    let snap = core.snapshot();
    // Names are at most 64 bytes: a longer one is compared by its start only,
    // so a huge hostile name costs no more than a normal one.
    let mut cut = name.len().min(72);
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    let wanted = &name[..cut];
    let mut close: Vec<&str> = snap
        .tools
        .keys()
        .map(|k| &**k)
        .filter(|n| similar(n, wanted))
        .collect();
    close.sort_unstable();
    close.truncate(3);
    let shown: String = name.chars().take(80).collect();
    if close.is_empty() {
        json!({"error": format!("Unknown tool: {shown}")}).to_string()
    } else {
        json!({"error": format!("Unknown tool: {shown}"), "did_you_mean": close}).to_string()
    }
}

/// Parse, repair and validate arguments. `Err` is the error result for the model.
fn prepare_args(
    entry: &ToolEntry,
    text: &str,
    keep_value: bool,
    opts: Options,
) -> std::result::Result<(Arc<str>, Option<Value>), String> {
    let trimmed = text.trim();
    let mut v: Value = if trimmed.is_empty() {
        Value::Object(Map::new())
    } else {
        serde_json::from_str(trimmed).map_err(|e| {
            json!({
                "error": format!("Invalid tool arguments for '{}': {e}. Arguments must be a JSON object; the tool was not run.", entry.name),
            })
            .to_string()
        })?
    };
    let mut changed = trimmed.is_empty();
    // Arguments double-encoded as a JSON string holding an object (a
    // repair: not with `dispatch.repair: false`).
    if opts.repair
        && let Value::String(s) = &v
        && let Ok(inner @ Value::Object(_)) = serde_json::from_str::<Value>(s)
    {
        v = inner;
        changed = true;
    }
    if !v.is_object() {
        return Err(json!({
            "error": format!("Invalid tool arguments for '{}': expected a JSON object, got {}. The tool was not run.", entry.name, kind_name(&v)),
        })
        .to_string());
    }
    let compiled = entry.compiled_for(opts.formats).map_err(|e| {
        json!({
            "error": format!("Tool '{}' cannot be called: its parameters schema is invalid ({e}). This is a fault in the tool's definition, not in your arguments; use another tool.", entry.name),
        })
        .to_string()
    })?;
    if !compiled.trivial {
        let (mut notes, mut errs) = (Vec::new(), Vec::new());
        compiled.check(&mut v, opts.repair, &mut notes, &mut errs, 20);
        if !notes.is_empty() {
            tracing::debug!(tool = %entry.name, repairs = ?notes, "arguments repaired");
            changed = true;
        }
        if !errs.is_empty() {
            return Err(json!({
                "error": format!("Invalid arguments for tool '{}': {}. Fix the arguments and call the tool again.", entry.name, errs.join("; ")),
                "errors": errs,
            })
            .to_string());
        }
    }
    let text: Arc<str> = if changed {
        Arc::from(v.to_string())
    } else {
        Arc::from(trimmed)
    };
    Ok((text, if keep_value { Some(v) } else { None }))
}

fn kind_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Whether a tool's error result says it was blocked (an approval denied).
fn says_blocked(text: &str) -> bool {
    text.contains("\"blocked\"")
        && serde_json::from_str::<Value>(text)
            .ok()
            .is_some_and(|v| v.get("status").and_then(Value::as_str) == Some("blocked"))
}

/// An error result from a tool, made safe for the model (inner wrapping
/// level). A JSON object with an `error` the tool shaped itself keeps its
/// shape (framing stripped); any other failure text becomes
/// `{"error": "[TOOL_ERROR] ..."}`. Credentials a failing tool echoes (an
/// API key in an HTTP error, a token in a stack trace) are redacted: error
/// text goes to the model and usually to logs.
fn wrap_tool_error(text: &str) -> String {
    let redacted = hermes_approval::redact_secrets(text);
    let text = redacted.as_str();
    if let Ok(Value::Object(mut map)) = serde_json::from_str::<Value>(text)
        && let Some(Value::String(e)) = map.get("error")
    {
        let clean = limit::clean_error(e);
        map.insert("error".into(), Value::String(clean));
        return Value::Object(map).to_string();
    }
    limit::error_json(&limit::sanitize_error(text))
}

impl<'a> Flow<'a> {
    fn new(
        core: &Core,
        entry: EntryRef<'a>,
        hooks: Option<Arc<Hooks>>,
        interceptor: Option<&Arc<dyn Tool>>,
        args_text: &str,
        ctx: CallContext,
    ) -> Flow<'a> {
        let cfg = &core.dispatch_config;
        let timeout = ctx
            .timeout
            .map(Duration::from_secs_f64)
            .or(entry.timeout)
            .or_else(|| (cfg.timeout > 0.0).then(|| Duration::from_secs_f64(cfg.timeout)));
        let max_chars = entry
            .max_result_size_chars
            .unwrap_or(cfg.max_result_size_chars);
        let keep_value = hooks.is_some() || entry.tool.wants_value();
        let mut flow = Flow {
            hooks,
            args_text: Arc::from(""),
            args: None,
            ctx,
            stage: Stage::Pre(0),
            outcome: None,
            result: String::new(),
            started: None,
            ran_for: Duration::ZERO,
            ctl: None,
            timeout,
            hook_timeout: Duration::from_secs_f64(cfg.hook_timeout.max(0.001)),
            max_chars,
            opts: Options::of(cfg),
            entry,
            intercept: None,
        };
        if flow.entry.agent_loop {
            match interceptor {
                // Agent-loop tools go to the host's loop handler, without hooks (as the original).
                Some(ic) => {
                    flow.intercept = Some(ic.clone());
                    flow.hooks = None;
                }
                None => {
                    flow.outcome = Some(Outcome::Invalid(limit::error_json(&format!(
                        "{} must be handled by the agent loop",
                        flow.entry.name
                    ))));
                    flow.stage = Stage::Finish;
                    return flow;
                }
            }
        }
        match prepare_args(&flow.entry, args_text, keep_value, flow.opts) {
            Ok((text, value)) => {
                flow.args_text = text;
                flow.args = value;
            }
            Err(result) => {
                flow.outcome = Some(Outcome::Invalid(result));
                flow.stage = Stage::Finish;
            }
        }
        flow
    }

    fn event_base(&self, event: &str) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("event".into(), event.into());
        m.insert("tool_name".into(), self.entry.name.clone().into());
        m.insert("args".into(), self.args.clone().unwrap_or(Value::Null));
        m.insert("task_id".into(), self.ctx.task_id.clone().into());
        m.insert("session_id".into(), self.ctx.session_id.clone().into());
        m.insert("tool_call_id".into(), self.ctx.tool_call_id.clone().into());
        m
    }

    fn result_event(&self, event: &str) -> Arc<str> {
        let mut m = self.event_base(event);
        let (status, error_type) = self.outcome.as_ref().map_or(("ok", None), Outcome::status);
        m.insert("result".into(), self.result.clone().into());
        m.insert(
            "duration_ms".into(),
            (self.ran_for.as_millis() as u64).into(),
        );
        m.insert("status".into(), status.into());
        m.insert(
            "error_type".into(),
            error_type.map_or(Value::Null, Value::from),
        );
        Arc::from(Value::Object(m).to_string())
    }

    fn cancelled(&self, core: &Core) -> bool {
        core.is_closed() || self.ctl.as_ref().is_some_and(|c| c.is_cancelled())
    }

    fn apply_pre_decision(&mut self, answer: Answer) {
        let text = match answer {
            Answer::Responded { text, .. } => text,
            Answer::TimedOut => {
                tracing::warn!(tool = %self.entry.name, "pre_tool_call hook did not answer in time; continuing");
                return;
            }
            Answer::Cancelled => {
                self.outcome = Some(Outcome::Cancelled);
                return;
            }
        };
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return;
        }
        let Ok(Value::Object(d)) = serde_json::from_str::<Value>(trimmed) else {
            tracing::warn!(tool = %self.entry.name, "pre_tool_call hook answered with something that is not a JSON object; ignored");
            return;
        };
        match d.get("action").and_then(Value::as_str) {
            None | Some("continue") => {}
            Some("block") => match d.get("message").and_then(Value::as_str) {
                Some(m) if !m.trim().is_empty() => {
                    self.outcome = Some(Outcome::Blocked(m.to_string()))
                }
                _ => {
                    tracing::warn!(tool = %self.entry.name, "pre_tool_call block without a message; ignored")
                }
            },
            Some("rewrite") => match d.get("args") {
                Some(new @ Value::Object(_)) => {
                    match prepare_args(&self.entry, &new.to_string(), true, self.opts) {
                        Ok((text, value)) => {
                            self.args_text = text;
                            self.args = value;
                        }
                        Err(result) => self.outcome = Some(Outcome::Invalid(result)),
                    }
                }
                _ => {
                    tracing::warn!(tool = %self.entry.name, "pre_tool_call rewrite without an args object; ignored")
                }
            },
            Some(other) => {
                tracing::warn!(tool = %self.entry.name, action = other, "unknown pre_tool_call action; ignored")
            }
        }
    }

    fn apply_transform(&mut self, answer: Answer) {
        if let Answer::Responded { text, .. } = answer {
            match serde_json::from_str::<Value>(text.trim()) {
                Ok(Value::Object(d)) => {
                    if let Some(Value::String(r)) = d.get("result") {
                        self.result = r.clone();
                    }
                }
                _ if text.trim().is_empty() => {}
                _ => {
                    tracing::warn!(tool = %self.entry.name, "transform_tool_result answer is not a JSON object; ignored")
                }
            }
        }
    }

    /// Turn the outcome into the result text. The outcome keeps only its
    /// kind (for hook status and completion status), so nothing is copied.
    fn finish_outcome(&mut self) {
        let outcome = self.outcome.take().unwrap_or(Outcome::Text {
            text: String::new(),
            is_error: false,
        });
        let (result, kind) = match outcome {
            Outcome::Text { text, is_error } => {
                let kind = if is_error && says_blocked(&text) {
                    Outcome::Denied
                } else {
                    Outcome::Text {
                        text: String::new(),
                        is_error,
                    }
                };
                let r = if is_error { wrap_tool_error(&text) } else { text };
                (r, kind)
            }
            Outcome::Blocked(m) => (limit::error_json(&m), Outcome::Blocked(String::new())),
            Outcome::TimedOut(s) => (
                json!({
                    "error": format!("Tool '{}' timed out after {s} s; its result was discarded.", self.entry.name),
                    "status": "timeout",
                })
                .to_string(),
                Outcome::TimedOut(s),
            ),
            Outcome::Cancelled => (
                json!({"error": "Tool execution cancelled", "status": "cancelled"}).to_string(),
                Outcome::Cancelled,
            ),
            Outcome::Invalid(r) => (r, Outcome::Invalid(String::new())),
            // Only made here, from a tool's text; never an input.
            Outcome::Denied => (String::new(), Outcome::Denied),
        };
        self.result = result;
        self.outcome = Some(kind);
    }

    /// Advance until the host is needed or the call is done. `input` answers
    /// the request made at the current stage.
    fn step(&mut self, core: &Core, mut input: Option<Answer>) -> Next {
        loop {
            match self.stage {
                Stage::Pre(i) => {
                    if let Some(a) = input.take() {
                        self.apply_pre_decision(a);
                        self.stage = if self.outcome.is_some() {
                            Stage::Post
                        } else {
                            Stage::Pre(i + 1)
                        };
                        if self.outcome.is_some() {
                            self.finish_outcome();
                        }
                        continue;
                    }
                    let hook = self.hooks.as_ref().and_then(|h| h.pre.get(i)).cloned();
                    match hook {
                        Some(hook) => {
                            if self.cancelled(core) {
                                self.outcome = Some(Outcome::Cancelled);
                                self.finish_outcome();
                                self.stage = Stage::Post;
                                continue;
                            }
                            let event = Arc::from(
                                Value::Object(self.event_base("pre_tool_call")).to_string(),
                            );
                            return Next::Host(HostRequest {
                                kind: Kind::Hook,
                                target: HostTarget::Hook(hook),
                                payload: event,
                                extra: None,
                                wait: Some(self.hook_timeout),
                            });
                        }
                        None => self.stage = Stage::Run,
                    }
                }
                Stage::Run => {
                    if let Some(a) = input.take() {
                        self.ran_for = self.started.map_or(Duration::ZERO, |t| t.elapsed());
                        let cancelled = self.cancelled(core);
                        self.outcome = Some(match a {
                            // A tool that fails as its cancel token fires
                            // answers before the cancellation reaches the
                            // table: the call was cancelled, whatever it said.
                            Answer::Responded { is_error: true, .. } if cancelled => {
                                Outcome::Cancelled
                            }
                            Answer::Responded { is_error, text } => {
                                Outcome::Text { text, is_error }
                            }
                            Answer::TimedOut => {
                                Outcome::TimedOut(self.timeout.map_or(0.0, |t| t.as_secs_f64()))
                            }
                            Answer::Cancelled => Outcome::Cancelled,
                        });
                        self.finish_outcome();
                        self.stage = Stage::Post;
                        continue;
                    }
                    if self.cancelled(core) {
                        self.outcome = Some(Outcome::Cancelled);
                        self.finish_outcome();
                        self.stage = Stage::Post;
                        continue;
                    }
                    if self.hooks.is_some() {
                        self.started = Some(Instant::now());
                    }
                    let (target, own_timeout) = match &self.intercept {
                        Some(ic) => (HostTarget::Interceptor(ic.clone()), ic.own_timeout()),
                        None => (HostTarget::EntryTool, self.entry.tool.own_timeout()),
                    };
                    return Next::Host(HostRequest {
                        kind: Kind::Call,
                        target,
                        payload: self.args_text.clone(),
                        extra: self.ctx.json.clone(),
                        // Tools that keep their own deadline (the terminal) are not cut short here.
                        wait: if own_timeout { None } else { self.timeout },
                    });
                }
                Stage::Post => {
                    if let Some(hooks) = self.hooks.clone()
                        && !hooks.post.is_empty()
                    {
                        let event = self.result_event("post_tool_call");
                        for hook in &hooks.post {
                            observe(core, hook, event.clone());
                        }
                    }
                    self.stage = Stage::Transform(0);
                }
                Stage::Transform(i) => {
                    if let Some(a) = input.take() {
                        self.apply_transform(a);
                        self.stage = Stage::Transform(i + 1);
                        continue;
                    }
                    let hook = self
                        .hooks
                        .as_ref()
                        .and_then(|h| h.transform.get(i))
                        .cloned();
                    match hook {
                        Some(hook) if !self.cancelled(core) => {
                            return Next::Host(HostRequest {
                                kind: Kind::Hook,
                                target: HostTarget::Hook(hook),
                                payload: self.result_event("transform_tool_result"),
                                extra: None,
                                wait: Some(self.hook_timeout),
                            });
                        }
                        _ => self.stage = Stage::Finish,
                    }
                }
                Stage::Finish => {
                    if matches!(self.outcome, Some(Outcome::Invalid(ref r)) if !r.is_empty()) {
                        // Reached directly (bad arguments, agent-loop tool): no hooks ran.
                        self.finish_outcome();
                    }
                    let text = std::mem::take(&mut self.result);
                    if matches!(self.outcome, Some(Outcome::Invalid(_))) {
                        // Our own error JSON (bounded: at most 20 short
                        // errors): cutting it would hand the model broken JSON.
                        return Next::Done(text);
                    }
                    return Next::Done(match limit::truncate_middle(&text, self.max_chars) {
                        std::borrow::Cow::Borrowed(_) => text,
                        std::borrow::Cow::Owned(cut) => cut,
                    });
                }
            }
        }
    }

    fn is_cancelled_outcome(&self) -> bool {
        matches!(self.outcome, Some(Outcome::Cancelled))
    }
}

/// Fire an observe-only hook: the hook answers to free the event; nobody waits.
fn observe(core: &Core, hook: &HookEntry, event: Arc<str>) {
    // Nobody waits, but the host should still answer within hook_timeout;
    // after it the event is abandoned (its texts readable for a grace).
    let expires = Instant::now()
        + Duration::from_secs_f64(core.dispatch_config.hook_timeout.clamp(0.0, 86_400.0));
    let id = pending::insert_expiring(
        Kind::Hook,
        core.id,
        "post_tool_call",
        event.clone(),
        Waiter::Async(Box::new(|_| {})),
        expires,
    );
    hook.hook.call(&event, HookReply::new(id));
}

fn invoke(core: &Core, req: &HostRequest, name: &str, waiter: Waiter) -> u64 {
    pending::insert(
        req.kind,
        core.id,
        name,
        req.payload.clone(),
        req.extra.clone(),
        waiter,
    )
}

/// What a tool call needs from its flow (borrowed, or owned copies for async flows).
struct Parts<'a> {
    name: &'a str,
    args_text: &'a Arc<str>,
    args: Option<&'a Value>,
    ctx: &'a CallContext,
    timeout: Option<Duration>,
}

/// Hand request `id` to its target: a tool gets a [`ToolCall`], a hook its event.
fn call_target(
    core: &Core,
    tool: Option<&dyn Tool>,
    parts: Parts<'_>,
    req: &HostRequest,
    id: u64,
    mode: Mode,
    cancel: &CancelToken,
) {
    let tool = match (&req.target, tool) {
        (HostTarget::Hook(h), _) => {
            h.hook.call(&req.payload, HookReply::new(id));
            return;
        }
        (HostTarget::Interceptor(t), _) => &**t,
        (HostTarget::EntryTool, Some(t)) => t,
        (HostTarget::EntryTool, None) => return,
    };
    tool.call(ToolCall {
        name: parts.name,
        args_text: parts.args_text,
        args: parts.args,
        context: parts.ctx,
        cancel,
        // Only tools that keep their own deadline read it: no clock read on the hot path.
        deadline: if tool.own_timeout() {
            parts.timeout.map(|t| Instant::now() + t)
        } else {
            None
        },
        mode,
        engine: &core.engine,
        reply: Reply::new(id),
    });
}

impl Flow<'_> {
    fn parts(&self) -> Parts<'_> {
        Parts {
            name: &self.entry.name,
            args_text: &self.args_text,
            args: self.args.as_ref(),
            ctx: &self.ctx,
            timeout: self.timeout,
        }
    }
}

/// Make `id` the flow's current wait, and end it at once when the call was
/// already cancelled or the runtime is closing (with `FlowCtl::cancel`'s
/// SeqCst pair, a racing cancel is never lost).
fn arm_wait(core: &Core, ctl: Option<&FlowCtl>, id: u64) {
    if let Some(ctl) = ctl {
        ctl.waiting.store(id, Ordering::SeqCst);
        if ctl.is_cancelled() {
            pending::abandon(id, Answer::Cancelled);
        }
    }
    if core.is_closed() {
        pending::abandon(id, Answer::Cancelled);
    }
}

thread_local! {
    /// Sync calls cannot be cancelled by id: one never-cancelled token per thread.
    static SYNC_TOKEN: CancelToken = CancelToken::new();
}

/// Run one request on this thread and wait for its answer.
fn run_host_sync(core: &Core, flow: &Flow<'_>, req: HostRequest) -> Answer {
    let slot = SyncSlot::new();
    let id = invoke(core, &req, &flow.entry.name, Waiter::Sync(slot.clone()));
    // Sync calls are not cancellable by id; only a closing runtime ends them early.
    arm_wait(core, None, id);
    SYNC_TOKEN.with(|t| {
        call_target(
            core,
            Some(&*flow.entry.tool),
            flow.parts(),
            &req,
            id,
            Mode::Inline,
            t,
        )
    });
    let answer = match slot.try_take() {
        Some(a) => a,
        None => match slot.wait(req.wait.map(|w| Instant::now() + w)) {
            Some(a) => a,
            None => {
                pending::abandon(id, Answer::TimedOut);
                slot.wait(None).unwrap_or(Answer::TimedOut)
            }
        },
    };
    SyncSlot::recycle(slot);
    answer
}

/// The outer wrapping level: a failure of the pipeline itself still gives the model JSON.
fn outer_error(name: &str, what: &str) -> String {
    limit::error_json(&limit::sanitize_error(&format!(
        "Error executing {name}: {what}"
    )))
}

/// Synchronous dispatch: tools run on this thread; the result is text for the model.
pub fn dispatch_sync(core: &Core, name: &str, args: &str, ctx: CallContext) -> Result<String> {
    let _active = core.enter()?;
    let snap = core.snapshot();
    let Some(entry) = snap.tools.get(name) else {
        return Ok(unknown_tool(core, name));
    };
    let hooks = snap.hooks.clone();
    let run = AssertUnwindSafe(|| {
        let mut flow = Flow::new(
            core,
            EntryRef::Borrowed(entry),
            hooks,
            snap.interceptor.as_ref(),
            args,
            ctx,
        );
        let mut input = None;
        loop {
            match flow.step(core, input.take()) {
                Next::Done(text) => return text,
                Next::Host(req) => input = Some(run_host_sync(core, &flow, req)),
            }
        }
    });
    match catch_unwind(run) {
        Ok(text) => Ok(text),
        Err(_) => Ok(outer_error(&entry.name, "internal error (bug)")),
    }
}

/// How an async dispatch ended: the result text and whether it was cancelled.
pub struct Completed {
    pub cancelled: bool,
    pub text: String,
}

/// The continuation of an async dispatch; runs exactly once on the callbacks thread.
pub type OnDone = Box<dyn FnOnce(Completed) + Send>;

struct AsyncFlow {
    flow: Flow<'static>,
    core: Arc<Core>,
    call_id: u64,
    on_done: Option<OnDone>,
    timer: Option<tokio::task::AbortHandle>,
    _active: OwnedActive,
}

/// Start an async dispatch; `on_done` runs exactly once on the callbacks thread.
pub fn dispatch_async(
    core: &Arc<Core>,
    name: &str,
    args: &str,
    ctx: CallContext,
    on_done: OnDone,
) -> Result<u64> {
    let active = core.enter_owned()?;
    let max = core.limits.max_calls_in_flight;
    if core.active_count() > max as isize {
        return Err(crate::error::Error::new(
            crate::error::ErrorKind::Unsupported,
            format!(
                "too many calls in flight, over limits.max_calls_in_flight ({max}); retry when some complete"
            ),
        ));
    }
    let call_id = pending::next_id();
    let snap = core.snapshot();
    let Some(entry) = snap.tools.get(name).cloned() else {
        let text = unknown_tool(core, name);
        core.callbacks.post(Box::new(move || {
            on_done(Completed {
                cancelled: false,
                text,
            });
            drop(active);
        }));
        return Ok(call_id);
    };
    let hooks = snap.hooks.clone();
    let interceptor = snap.interceptor.clone();
    drop(snap);
    let ctl = Arc::new(FlowCtl::default());
    core.flows.lock().insert(call_id, ctl.clone());
    let mut flow = Flow::new(
        core,
        EntryRef::Owned(entry),
        hooks,
        interceptor.as_ref(),
        args,
        ctx,
    );
    flow.ctl = Some(ctl);
    let af = Box::new(AsyncFlow {
        flow,
        core: core.clone(),
        call_id,
        on_done: Some(on_done),
        timer: None,
        _active: active,
    });
    core.callbacks.post(Box::new(move || drive_async(af, None)));
    Ok(call_id)
}

/// Run an async flow on the callbacks thread until it waits or finishes.
fn drive_async(mut af: Box<AsyncFlow>, input: Option<Answer>) {
    if let Some(t) = af.timer.take() {
        t.abort();
    }
    let core = af.core.clone();
    let step = catch_unwind(AssertUnwindSafe(|| af.flow.step(&core, input)));
    let next = match step {
        Ok(n) => n,
        Err(_) => Next::Done(outer_error(&af.flow.entry.name, "internal error (bug)")),
    };
    match next {
        Next::Done(text) => {
            core.flows.lock().remove(&af.call_id);
            let cancelled = af.flow.is_cancelled_outcome();
            if let Some(done) = af.on_done.take() {
                done(Completed { cancelled, text });
            }
        }
        Next::Host(req) => {
            let deadline = req.wait.map(|w| Instant::now() + w);
            let ctl = af.flow.ctl.clone();
            let cb = core.callbacks.clone();
            // Park the flow in the request: the answer (from any thread) queues its resumption.
            let slot: Arc<parking_lot::Mutex<Option<Box<AsyncFlow>>>> =
                Arc::new(parking_lot::Mutex::new(None));
            let slot2 = slot.clone();
            let waiter = Waiter::Async(Box::new(move |answer| {
                cb.post(Box::new(move || {
                    if let Some(af) = slot2.lock().take() {
                        drive_async(af, Some(answer));
                    }
                }));
            }));
            let id = invoke(&core, &req, &af.flow.entry.name, waiter);
            if let Some(deadline) = deadline {
                af.timer = core.engine.at(deadline, move || {
                    pending::abandon(id, Answer::TimedOut);
                });
                if af.timer.is_none() && !core.is_closed() {
                    // The engine cannot start (no threads): the call goes on
                    // without its deadline rather than being lost.
                    tracing::warn!(
                        "could not arm the timeout of an async call (no engine thread); it waits for its answer or the runtime's free"
                    );
                }
            }
            let token = ctl.as_ref().map(|c| c.token.clone()).unwrap_or_default();
            // The flow is parked before its target starts (an answer may come
            // from any thread at once), so the target gets owned copies.
            let f = &af.flow;
            let (name, args_text, args, ctx, timeout) = (
                f.entry.name.clone(),
                f.args_text.clone(),
                f.args.clone(),
                f.ctx.clone(),
                f.timeout,
            );
            let tool = f.entry.tool.clone();
            *slot.lock() = Some(af);
            arm_wait(&core, ctl.as_deref(), id);
            let parts = Parts {
                name: &name,
                args_text: &args_text,
                args: args.as_ref(),
                ctx: &ctx,
                timeout,
            };
            call_target(&core, Some(&*tool), parts, &req, id, Mode::Async, &token);
        }
    }
}

/// Whether a registered tool is parallel-safe (for batches).
pub fn is_parallel_safe(core: &Core, name: &str) -> bool {
    core.snapshot()
        .tools
        .get(name)
        .is_some_and(|e| e.parallel_safe)
}
