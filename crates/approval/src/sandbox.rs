//! Sandbox-aware decisions: which risky effects a sandbox contains.
//!
//! Why: a command that runs in the sandbox backend (the workspace mounted
//! writable, the rest of the filesystem read-only or throw-away, possibly
//! no network) cannot do some of the harm a rule is about. `rm -rf build`
//! inside the workspace, `git reset --hard` of the workspace repository, or
//! a `curl ... | sh` that cannot reach the network need no prompt there.
//! Everything else is judged exactly as on the host: writes outside the
//! workspace, anything that changes the system, and every `block` rule.
//!
//! The judgement is per reason: [`contained`] says why the sandbox contains
//! one rule's effect on one program, or `None` when it escapes. The engine
//! moves contained reasons to `CheckResult::contained` (each with its
//! `sandbox` note) and decides on the rest.

use serde::{Deserialize, Serialize};

use crate::analyze::{DYN, Exec};
use crate::ctx::{WriteKind, tail};
use crate::names::git_sub;
use crate::types::Verdict;
use crate::words::norm_path;

/// What the sandbox the command will run in guarantees.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct SandboxFacts {
    /// The writable workspace (absolute path); writes elsewhere escape.
    pub workspace: String,
    /// Whether the sandbox has network access.
    #[serde(default)]
    pub network: bool,
}

/// Options of [`crate::Engine::check_with`].
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct CheckOptions {
    /// The command will run in this sandbox (`None`: on the host).
    #[serde(default)]
    pub sandbox: Option<SandboxFacts>,
}

/// Rules whose effect is only through the network.
pub(crate) const NETWORK: &[&str] = &[
    "exfiltration",
    "secret-exfiltration",
    "cloud-metadata",
    "reverse-shell",
    "tunnel-exposure",
    "file-server-exposed",
    "cloud-destroy",
    "datastore-destroy",
];

/// Rules whose effect is writing or deleting files named by the command.
pub const WRITES: &[&str] = &[
    "rm-recursive",
    "rm-forced-outside",
    "bulk-delete",
    "shred",
    "dd",
    "project-config-overwrite",
    "chmod-chown",
    "disk-tool",
];

fn inside(ws: &str, e: &Exec, p: &str) -> bool {
    if p.is_empty() || p.contains(DYN) || p.starts_with('$') {
        return false;
    }
    let abs = if p.starts_with('/') || p.starts_with('~') || p.as_bytes().get(1) == Some(&b':') {
        norm_path(p)
    } else {
        let base = e.cwd.as_deref().unwrap_or(ws);
        norm_path(&format!("{base}/{p}"))
    };
    let ws = norm_path(ws);
    abs == ws || abs.starts_with(&format!("{ws}/"))
}

fn downloads_only(e: &Exec, execs: &[Exec]) -> bool {
    // `curl ... | sh`, `bash <(curl ...)`: the code comes from the network
    let up = e.stdin_from.and_then(|u| execs.get(u));
    up.is_some_and(|u| matches!(u.name.as_str(), "curl" | "wget" | "fetch" | "http" | "xh"))
}

/// Why the sandbox contains `rule`'s effect on `e`, or `None` when the
/// effect escapes it (judged as on the host).
/// Why an effect that acts only over the network is contained: the
/// sandbox has none (`None` when it has one).
pub fn without_network(facts: &SandboxFacts) -> Option<String> {
    (!facts.network).then(|| {
        "contained by the sandbox: it acts only over the network, and the sandbox has none"
            .to_string()
    })
}

pub fn contained(
    facts: &SandboxFacts,
    rule: &str,
    tier: Verdict,
    e: &Exec,
    targets: &[(String, WriteKind)],
    execs: &[Exec],
) -> Option<String> {
    if tier != Verdict::Ask {
        return None;
    }
    let no_net = || without_network(facts);
    let ws_write = || {
        let ok = !targets.is_empty()
            && !e.bulk
            && targets
                .iter()
                .all(|(p, k)| *k == WriteKind::Create || inside(&facts.workspace, e, p));
        ok.then(|| {
            format!(
                "contained by the sandbox: it only writes inside the workspace {}",
                facts.workspace
            )
        })
    };
    match rule {
        r if NETWORK.contains(&r) => no_net(),
        "pipe-to-shell" | "process-substitution-exec" if downloads_only(e, execs) => no_net(),
        "untrusted-package-source" => {
            // installs fetch from the network; config changes write outside
            let installs = tail(&e.argv).iter().any(|a| {
                matches!(
                    a.as_str(),
                    "install" | "i" | "add" | "download" | "get" | "sync"
                )
            });
            if installs { no_net() } else { None }
        }
        "git-destructive" => {
            let sub = git_sub(&e.argv).map(|(_, s)| s);
            if sub == Some("push") {
                return no_net();
            }
            let dir = e
                .argv
                .windows(2)
                .find(|w| w[0] == "-C")
                .map(|w| w[1].clone())
                .unwrap_or_else(|| ".".into());
            inside(&facts.workspace, e, &dir).then(|| {
                format!(
                    "contained by the sandbox: it only changes the repository in the workspace {}",
                    facts.workspace
                )
            })
        }
        "sql-destructive" => {
            // a database server is reached over the network; file databases
            // are judged by where the file is
            match e.name.as_str() {
                "sqlite3" | "sqlite" | "duckdb" | "litecli" => e
                    .argv
                    .get(1)
                    .filter(|f| !f.starts_with('-') && inside(&facts.workspace, e, f))
                    .map(|_| {
                        format!(
                            "contained by the sandbox: the database file is inside the workspace {}",
                            facts.workspace
                        )
                    }),
                _ => no_net(),
            }
        }
        "bulk-delete" if e.name == "find" => {
            let starts: Vec<&String> = tail(&e.argv)
                .iter()
                .take_while(|a| !a.starts_with('-') && *a != "!" && *a != "(")
                .collect();
            (!starts.is_empty() && starts.iter().all(|p| inside(&facts.workspace, e, p))).then(
                || {
                    format!(
                        "contained by the sandbox: it only deletes inside the workspace {}",
                        facts.workspace
                    )
                },
            )
        }
        r if WRITES.contains(&r) => ws_write(),
        _ => None,
    }
}
