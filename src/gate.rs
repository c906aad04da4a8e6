//! The one gate every command-running tool calls before it runs anything.
//! Fail closed: a command nobody approved does not run.

use std::sync::Arc;

use crate::approval::CheckResult;
use crate::dispatch::CallContext;
use crate::runtime::Shared;
use crate::tools::CancelToken;

/// The gate's answer.
#[derive(Debug)]
pub enum CommandDecision {
    Allow,
    /// Not approved: `message` is for the model; `check` explains why.
    Deny {
        message: String,
        check: Box<CheckResult>,
    },
}

impl Shared {
    /// Decide whether `command` may run for the call described by `ctx`.
    /// Blocks while the host is asked (bounded by the approvals timeout).
    pub fn approve_command(
        self: &Arc<Self>,
        command: &str,
        ctx: &CallContext,
        cancel: &CancelToken,
    ) -> CommandDecision {
        crate::approval_host::decide(self, command, ctx, cancel)
    }
}

pub(crate) fn deny(check: CheckResult, message: String) -> CommandDecision {
    CommandDecision::Deny {
        message,
        check: Box::new(check),
    }
}
