//! Command approval engine: analyse a shell command, explain what it does and
//! decide `allow`, `ask` or `block` before anything runs.
//!
//! This module is the single gate every command-running tool goes through
//! (`Runtime::approve_command` calls [`Engine::check`]).

use serde::Serialize;

/// The engine's decision for one command line. Ordered: `Allow < Ask < Block`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Allow,
    Ask,
    Block,
}

/// One rule that matched, with the simple command it matched on.
#[derive(Clone, Debug, Serialize)]
pub struct Reason {
    pub rule: String,
    pub description: String,
    pub tier: Verdict,
    pub command: String,
}

/// The full explanation returned by `ht_command_check`.
#[derive(Clone, Debug, Serialize)]
pub struct CheckResult {
    pub verdict: Verdict,
    pub reasons: Vec<Reason>,
    pub commands: Vec<Vec<String>>,
    pub normalized: Vec<String>,
}

/// The rule engine. Cheap to share (`Arc<Engine>`), immutable after construction.
#[derive(Debug, Default)]
pub struct Engine {}

impl Engine {
    /// Placeholder analysis until the real engine lands: everything is `ask`
    /// (fail closed), never `allow`.
    pub fn check(&self, command: &str) -> CheckResult {
        CheckResult {
            verdict: Verdict::Ask,
            reasons: vec![Reason {
                rule: "unanalysed".into(),
                description: "command analysis not available".into(),
                tier: Verdict::Ask,
                command: command.to_string(),
            }],
            commands: Vec::new(),
            normalized: vec![command.to_string()],
        }
    }
}
