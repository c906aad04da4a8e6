//! Progress of served calls as MCP `notifications/progress`, for clients that
//! sent a `_meta.progressToken`. Two sources: a tool's own reports (a host
//! tool's `ht_call_progress`, seen as `tool.progress` events through an
//! [`EventTap`]), and, until a tool reports, a heartbeat every second with
//! the time the call has run, so a client can tell a long call from a hung
//! connection.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use rmcp::model::ProgressNotificationParam;
use serde_json::Value;

use hermes_runtime::EventTap;

use crate::calls::{Calls, Live};

/// Forwards `tool.progress` events of the server's calls (to the call's
/// ordered writer, [`Live::report`]).
pub(crate) struct Tap {
    pub calls: Arc<Calls>,
}

impl EventTap for Tap {
    fn event(&self, event: &Value) {
        if event["type"].as_str() != Some("tool.progress") {
            return;
        }
        let Some(live) = event["tool_call_id"]
            .as_str()
            .and_then(|id| self.calls.get(id))
        else {
            return;
        };
        let Some(token) = live.token.clone() else {
            return;
        };
        live.tool_reports.store(true, Ordering::Release);
        let mut p =
            ProgressNotificationParam::new(token, event["progress"].as_f64().unwrap_or(0.0));
        p.total = event["total"].as_f64();
        p.message = event["message"].as_str().map(String::from);
        live.report(p);
    }
}

/// Send "running for N s" every second until the tool reports progress
/// itself or the returned task is aborted (the call ended).
pub(crate) fn heartbeat(live: Arc<Live>) -> Option<tokio::task::JoinHandle<()>> {
    let token = live.token.clone()?;
    Some(tokio::spawn(async move {
        let started = Instant::now();
        let mut tick = tokio::time::interval_at(
            tokio::time::Instant::now() + Duration::from_secs(1),
            Duration::from_secs(1),
        );
        loop {
            tick.tick().await;
            if live.tool_reports.load(Ordering::Acquire) {
                return;
            }
            let secs = started.elapsed().as_secs();
            let mut p = ProgressNotificationParam::new(token.clone(), secs as f64);
            p.message = Some(format!("running for {secs} s"));
            if !live.report(p) {
                return;
            }
        }
    }))
}
