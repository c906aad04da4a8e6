//! Progress of served calls as MCP `notifications/progress`, for clients that
//! sent a `_meta.progressToken`. Two sources: a tool's own reports (a host
//! tool's `ht_call_progress`, seen as `tool.progress` events through an
//! [`EventTap`]), and, until a tool reports, a heartbeat every second with
//! the time the call has run, so a client can tell a long call from a hung
//! connection.
//!
//! Log messages (`logging/setLevel`, `notifications/message`): a session
//! that chose a level gets its calls' events at that level or above:
//! the call's start (debug) and end (debug, warning when it failed), a
//! tool's progress (info), a host tool's own messages (`ht_call_log`, at
//! the level it gave), through the call's ordered writer, which the
//! result waits for. Over HTTP rmcp sends log messages on the session's
//! standalone (GET) stream, so a client sees them there.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use rmcp::model::ProgressNotificationParam;
#[allow(deprecated)] // logging is deprecated by a 2026 draft, still in 2025-11-25
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use serde_json::{Value, json};

use hermes_runtime::EventTap;

use crate::calls::{Calls, Live};

/// A level's rank (debug lowest).
#[allow(deprecated)]
pub(crate) fn rank(l: LoggingLevel) -> u8 {
    match l {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// The log message for `data` at `level` when the session asked for that
/// level or a lower one.
#[allow(deprecated)]
pub(crate) fn message_for(
    session: &crate::quotas::Session,
    level: LoggingLevel,
    data: Value,
) -> Option<LoggingMessageNotificationParam> {
    let chosen = (*session.log_level.lock())?;
    (rank(level) >= rank(chosen))
        .then(|| LoggingMessageNotificationParam::new(level, data).with_logger("hermes-tools"))
}

/// A level by its MCP name.
#[allow(deprecated)]
fn parse_level(name: &str) -> Option<LoggingLevel> {
    Some(match name {
        "debug" => LoggingLevel::Debug,
        "info" => LoggingLevel::Info,
        "notice" => LoggingLevel::Notice,
        "warning" => LoggingLevel::Warning,
        "error" => LoggingLevel::Error,
        "critical" => LoggingLevel::Critical,
        "alert" => LoggingLevel::Alert,
        "emergency" => LoggingLevel::Emergency,
        _ => return None,
    })
}

/// The level a runtime event is logged at (None: not logged).
#[allow(deprecated)]
fn event_level(kind: &str) -> Option<LoggingLevel> {
    match kind {
        "tool.progress" | "process.completed" => Some(LoggingLevel::Info),
        "terminal.started" | "terminal.finished" => Some(LoggingLevel::Debug),
        k if k.starts_with("process.watch") => Some(LoggingLevel::Notice),
        _ => None,
    }
}

/// Forwards `tool.progress` events of the server's calls (to the call's
/// ordered writer, [`Live::report`]), and the events of calls whose session
/// chose a log level as log messages.
pub(crate) struct Tap {
    pub calls: Arc<Calls>,
}

impl EventTap for Tap {
    fn event(&self, event: &Value) {
        let kind = event["type"].as_str().unwrap_or_default();
        let Some(live) = event["tool_call_id"]
            .as_str()
            .and_then(|id| self.calls.get(id))
        else {
            return;
        };
        if kind == "tool.log" {
            // The tool's own message, at the level it chose.
            if let Some(level) = event["level"].as_str().and_then(parse_level)
                && let Some(m) = message_for(&live.session, level, event["message"].clone())
            {
                let logger = event["tool_name"].as_str().unwrap_or("hermes-tools");
                live.log(m.with_logger(logger.to_string()));
            }
            return;
        }
        if let Some(level) = event_level(kind)
            && let Some(m) = message_for(&live.session, level, json!(event))
        {
            live.log(m);
        }
        if kind != "tool.progress" {
            return;
        }
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
