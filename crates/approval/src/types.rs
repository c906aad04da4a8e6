//! Types shared by every layer of the engine (a leaf module: it names
//! nothing else of the crate). The crate root re-exports them.

use serde::{Deserialize, Serialize};

/// The engine's decision for one command line. Ordered: `Allow < Ask < Block`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Allow,
    Ask,
    Block,
}

/// Host rule in the engine config.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RuleConfig {
    pub key: String,
    /// One line saying what the matched command does (required in packs).
    #[serde(default)]
    pub description: String,
    /// `ask` or `block`.
    pub tier: Verdict,
    #[serde(default)]
    pub argv_prefix: Option<Vec<String>>,
    #[serde(default)]
    pub pattern: Option<String>,
}

/// How much the engine lets through without asking (`approvals.posture`).
///
/// Every posture asks for privilege (`sudo`, `su`, `doas`, `pkexec`),
/// system-wide installs and persistence writes, and keeps every `block`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Posture {
    /// Allow unless something risky is found (the default).
    #[default]
    DenyList,
    /// Allow only what the knowledge base knows to be safe with these
    /// arguments; everything else asks.
    KnownSafe,
    /// With the sandbox backend: run without asking, ask only for what
    /// leaves the sandbox (privilege, installs, persistence, writes outside
    /// the workspace, network use when the sandbox has a network).
    Sandboxed,
}
