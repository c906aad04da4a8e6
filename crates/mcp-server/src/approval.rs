//! Approvals of a served runtime: a command that needs one is put to the MCP
//! client that made the call, through elicitation when that client declared
//! it. Without elicitation, on decline, cancel, error or timeout, the call
//! is denied: nothing runs unapproved. Requests that come from calls the
//! server did not make (a C host's own dispatches while it also serves) go
//! to the handler the host had installed, or are denied without one.
//!
//! The form is `{"approve": boolean}` with a default of true: an accept
//! runs the command once unless the client sent `"approve": false`, so an
//! accept with an empty `{}` (a client that shows only accept and decline
//! buttons) is an approval, as the README says. Decline and cancel deny.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{ElicitRequestParams, ElicitationAction};
use serde_json::{Value, json};

use hermes_runtime::ApprovalSink;

use crate::calls::Calls;

pub(crate) struct Elicit {
    pub calls: Arc<Calls>,
    pub handle: tokio::runtime::Handle,
    pub timeout: Duration,
}

/// The runtime's way to this server's [`Elicit`]: only for the server's
/// own calls (and the inner calls of its calls' execute_code scripts).
pub(crate) struct Router(pub Arc<Elicit>);

impl hermes_runtime::approvals::ApprovalRouter for Router {
    fn sink_for(&self, tool_call_id: &str) -> Option<Arc<dyn ApprovalSink>> {
        self.0
            .calls
            .get(tool_call_id)
            .map(|_| self.0.clone() as Arc<dyn ApprovalSink>)
    }
}

fn deny(id: u64, why: &str) {
    tracing::info!(approval = id, reason = why, "mcp server: approval denied");
    hermes_runtime::approvals::respond(id, json!({ "choice": "deny" }).to_string());
}

/// The elicitation message and form for one approval request.
fn elicitation(req: &Value) -> Option<ElicitRequestParams> {
    let command = req["untrusted_command_text"]
        .as_str()
        .or_else(|| req["subject"].as_str())
        .unwrap_or("?");
    let reasons: Vec<String> = req["reasons"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["description"].as_str().map(String::from))
        .collect();
    let mut message = format!("Approve running this command?\n\n{command}\n");
    if let Some(place) = req["runs_on"].as_str().or_else(|| req["where"].as_str()) {
        message.push_str(&format!("\nRuns {place}.\n"));
    }
    if !reasons.is_empty() {
        message.push_str(&format!("\nWhy it needs approval: {}", reasons.join("; ")));
    }
    serde_json::from_value(json!({
        "mode": "form",
        "message": message,
        "requestedSchema": {
            "type": "object",
            "properties": {
                "approve": {"type": "boolean", "title": "Run it", "description": "Run this command once", "default": true}
            }
        }
    }))
    .ok()
}

/// Whether an accepted form approves: `approve` defaults to true, so only
/// an explicit false (or a value that is not a boolean) refuses.
/// An accepted answer approves only in the form's own shape: no content,
/// or an object with nothing but `approve`, which is `true` or left out
/// (the form's default). Anything else (`false`, `0`, `"no"`, `[...]`,
/// `{"approve": null}`, unknown or look-alike keys) denies: fail closed.
fn approved(content: Option<&Value>) -> bool {
    match content {
        None => true,
        Some(Value::Object(m)) => {
            m.keys().all(|k| k == "approve")
                && match m.get("approve") {
                    None => true,
                    Some(v) => v == &Value::Bool(true),
                }
        }
        Some(_) => false,
    }
}

impl ApprovalSink for Elicit {
    fn ask(&self, request: &Arc<str>, id: u64) {
        let req: Value = serde_json::from_str(request).unwrap_or(Value::Null);
        let call = req["tool_call_id"].as_str().unwrap_or_default();
        let Some(live) = self.calls.get(call) else {
            return deny(id, "the MCP call has ended");
        };
        let peer = live.peer.clone();
        let can_elicit = peer
            .peer_info()
            .is_some_and(|info| info.capabilities.elicitation.is_some());
        if !can_elicit {
            return deny(id, "the client does not support elicitation");
        }
        let Some(params) = elicitation(&req) else {
            return deny(id, "cannot build the elicitation");
        };
        let timeout = self.timeout;
        self.handle.spawn(async move {
            let answer = tokio::time::timeout(timeout, peer.create_elicitation(params)).await;
            match answer {
                Ok(Ok(r))
                    if r.action == ElicitationAction::Accept && approved(r.content.as_ref()) =>
                {
                    hermes_runtime::approvals::respond(id, json!({ "choice": "once" }).to_string());
                }
                Ok(Ok(_)) => deny(id, "declined by the client"),
                Ok(Err(e)) => deny(id, &format!("elicitation failed: {e}")),
                Err(_) => deny(id, "the client did not answer in time"),
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_approves_unless_approve_is_false() {
        assert!(approved(None));
        assert!(approved(Some(&json!({}))));
        assert!(approved(Some(&json!({"approve": true}))));
        assert!(!approved(Some(&json!({"approve": false}))));
        assert!(!approved(Some(&json!({"approve": "no"}))));
        // Red team 2026-11-28 (round 3): anything but the form's own shape
        // approved (the lookup found nothing and the default applied).
        for v in [
            json!(false),
            json!(0),
            json!("no"),
            json!([false]),
            json!({"approve": null}),
            json!({"Approve": false}),
            json!({"approve ": false}),
            json!({"approve": true, "extra": 1}),
        ] {
            assert!(!approved(Some(&v)), "{v}");
        }
    }

    #[test]
    fn the_form_defaults_to_approve() {
        let p = elicitation(&json!({"untrusted_command_text": "rm -rf x"})).unwrap();
        let v = serde_json::to_value(&p).unwrap();
        assert_eq!(
            v["requestedSchema"]["properties"]["approve"]["default"],
            json!(true)
        );
        assert!(v["requestedSchema"].get("required").is_none(), "{v}");
    }
}
