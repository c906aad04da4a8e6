//! Hooks: code the host runs around every call (`pre_tool_call` may block or
//! rewrite, `post_tool_call` observes, `transform_tool_result` may replace the
//! text). A hook is a trait object like a tool: dispatch hands it the event
//! and a reply handle; the C ABI's hooks are one implementation.

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::pending::{self, Answer, Kind};

/// Hook events the runtime knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookEvent {
    PreToolCall,
    PostToolCall,
    TransformToolResult,
}

impl HookEvent {
    pub fn parse(s: &str) -> Result<HookEvent> {
        Ok(match s {
            "pre_tool_call" => HookEvent::PreToolCall,
            "post_tool_call" => HookEvent::PostToolCall,
            "transform_tool_result" => HookEvent::TransformToolResult,
            other => {
                return Err(Error::invalid(format!(
                    "unknown hook event '{other}' (pre_tool_call, post_tool_call, transform_tool_result)"
                )));
            }
        })
    }
    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::PreToolCall => "pre_tool_call",
            HookEvent::PostToolCall => "post_tool_call",
            HookEvent::TransformToolResult => "transform_tool_result",
        }
    }
}

/// The answer handle of one hook event (its value is the host's `ht_hook*`).
#[derive(Debug)]
pub struct HookReply {
    id: u64,
}

impl HookReply {
    pub(crate) fn new(id: u64) -> HookReply {
        HookReply { id }
    }
    pub fn id(&self) -> u64 {
        self.id
    }
    /// Answer with a decision (JSON text; `{}` continues).
    pub fn send(self, decision_json: String) {
        pending::respond(
            self.id,
            Kind::Hook,
            Answer::Responded {
                is_error: false,
                text: decision_json,
            },
        );
    }
}

/// A hook. `event` is the event JSON; answer exactly once through `reply`.
pub trait Hook: Send + Sync {
    fn call(&self, event: &Arc<str>, reply: HookReply);
}

/// A registered hook with its id.
#[derive(Clone)]
pub struct HookEntry {
    pub id: u64,
    pub hook: Arc<dyn Hook>,
}

/// Hooks by event, in registration order.
#[derive(Default, Clone)]
pub struct Hooks {
    pub pre: Vec<HookEntry>,
    pub post: Vec<HookEntry>,
    pub transform: Vec<HookEntry>,
}

impl Hooks {
    pub fn is_empty(&self) -> bool {
        self.pre.is_empty() && self.post.is_empty() && self.transform.is_empty()
    }
    pub fn list_mut(&mut self, ev: HookEvent) -> &mut Vec<HookEntry> {
        match ev {
            HookEvent::PreToolCall => &mut self.pre,
            HookEvent::PostToolCall => &mut self.post,
            HookEvent::TransformToolResult => &mut self.transform,
        }
    }
    /// Remove the hook with `id`; returns it when it was there.
    pub fn remove(&mut self, id: u64) -> Option<HookEntry> {
        for list in [&mut self.pre, &mut self.post, &mut self.transform] {
            if let Some(i) = list.iter().position(|h| h.id == id) {
                return Some(list.remove(i));
            }
        }
        None
    }
}
