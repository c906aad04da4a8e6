//! Host side of approvals: until the host approval round trip is wired, an
//! `ask` verdict is denied unless approvals are off (fail closed).

use std::sync::Arc;

use crate::approval::Verdict;
use crate::dispatch::CallContext;
use crate::gate::{CommandDecision, deny};
use crate::runtime::Shared;
use crate::tools::CancelToken;

pub fn decide(
    shared: &Arc<Shared>,
    command: &str,
    _ctx: &CallContext,
    _cancel: &CancelToken,
) -> CommandDecision {
    let check = shared.approval_engine.check(command);
    match check.verdict {
        Verdict::Allow => CommandDecision::Allow,
        Verdict::Block => {
            let why = check
                .reasons
                .first()
                .map(|r| r.description.clone())
                .unwrap_or_default();
            deny(
                check,
                format!("BLOCKED: this command is never allowed ({why}). Do not retry it."),
            )
        }
        Verdict::Ask => {
            if shared.config.approvals.mode == "off" {
                return CommandDecision::Allow;
            }
            let why = check
                .reasons
                .first()
                .map(|r| r.description.clone())
                .unwrap_or_default();
            deny(
                check,
                format!("BLOCKED: this command needs approval ({why}) and no approval was given."),
            )
        }
    }
}
