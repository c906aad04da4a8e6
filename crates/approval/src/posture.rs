//! Approval postures and the judgements that only apply under one.
//!
//! Why: one fixed line between "allow" and "ask" cannot serve a developer
//! laptop, a locked-down host and a throw-away sandbox at once. The host
//! picks a posture (`approvals.posture`, passed in
//! [`crate::CheckOptions::posture`]):
//!
//! * `deny-list`: allow unless something risky is found;
//! * `known-safe`: allow only programs the knowledge here knows to be safe
//!   with these arguments (`not-known-safe` asks for the rest);
//! * `sandboxed`: with sandbox facts, ask only for what leaves the sandbox.
//!
//! In every posture privilege (`privilege`), system-wide installs
//! (`system-install`) and persistence writes ask, and reading another
//! process's environment or memory asks (`process-inspect`); the matchers
//! the rule table names for these are in [`crate::effects`]. Without a
//! posture ([`crate::Engine::check`]) the compatibility judgement of the
//! original is kept (the public case file pins it: `sudo -i`, `apt install`
//! and `python -c "print('hello')"` are `allow` / `ask` there).

use crate::analyze::{DYN, Exec, is_interpreter, is_shell};
use crate::ctx::operands;
use crate::names::git_sub;
use crate::sandbox::WRITES;
use crate::types::Posture;

/// Rules that still ask in the sandboxed posture: they act outside the
/// sandbox whatever it contains.
pub const ESCAPES: &[&str] = &[
    "privilege",
    "system-install",
    "sensitive-file-write",
    "system-file-write",
    "code-config",
    "container-host-access",
    "crontab-change",
    "service-control",
    "user-admin",
    "security-disable",
    "credential-read",
    "secret-file-read",
    "process-inspect",
    "sudo-stdin",
    "agent-gateway",
];

/// Network rules: they escape a sandbox that has a network: those whose
/// effect is only through the network (`sandbox::NETWORK`) and fetching
/// packages from an untrusted source.
fn network_rule(rule: &str) -> bool {
    crate::sandbox::NETWORK.contains(&rule) || rule == "untrusted-package-source"
}
/// In the sandboxed posture: why the sandbox contains an `ask` reason of
/// `rule`, or `None` when it leaves the sandbox.
pub fn sandboxed_contains(rule: &str, network: bool) -> Option<String> {
    if ESCAPES.contains(&rule) || (network && network_rule(rule)) {
        return None;
    }
    if WRITES.contains(&rule) {
        return None; // judged by where it writes (sandbox::contained)
    }
    Some("contained by the sandbox (sandboxed posture): it runs inside the sandbox".into())
}

/// Known-safe posture: programs (and subcommands) known to be safe with
/// these arguments. Anything else asks.
pub fn known_safe(e: &Exec) -> bool {
    if e.argv.is_empty() {
        return true;
    }
    if e.dynamic_name || e.argv.iter().any(|a| a.contains(DYN)) {
        return false;
    }
    if e.redirs.iter().any(|r| {
        matches!(
            r.op,
            crate::parse::RedirOp::Out | crate::parse::RedirOp::Append
        ) && r.target != "/dev/null"
    }) {
        return false;
    }
    let n = e.name.as_str();
    let sub = operands(&e.argv, &[]).first().copied().unwrap_or("");
    let has = |f: &str| {
        e.argv
            .iter()
            .any(|a| a == f || a.starts_with(&format!("{f}=")))
    };
    match n {
        "ls" | "cat" | "head" | "tail" | "wc" | "grep" | "egrep" | "fgrep" | "rg" | "ag"
        | "echo" | "printf" | "pwd" | "which" | "file" | "stat" | "du" | "df" | "diff" | "cmp"
        | "sort" | "uniq" | "cut" | "tr" | "jq" | "yq" | "tree" | "date" | "uname" | "whoami"
        | "id" | "true" | "false" | "test" | "[" | "basename" | "dirname" | "realpath"
        | "readlink" | "nproc" | "free" | "uptime" | "md5sum" | "sha256sum" | "sha1sum" | "cd"
        | "less" | "more" | "column" | "nl" | "comm" | "type" | "hostname" => true,
        "env" | "printenv" => false,
        "sed" => !has("-i") && !has("--in-place") && !e.argv.iter().any(|a| a.starts_with("-i")),
        "awk" | "gawk" => !e
            .argv
            .iter()
            .any(|a| a.contains("system") || a.contains('|') || a.contains('>')),
        "find" => !e.argv.iter().any(|a| {
            matches!(
                a.as_str(),
                "-exec"
                    | "-execdir"
                    | "-ok"
                    | "-okdir"
                    | "-delete"
                    | "-fprint"
                    | "-fprintf"
                    | "-fls"
            )
        }),
        "git" => {
            matches!(
                git_sub(&e.argv).map(|(_, s)| s).unwrap_or(""),
                "status"
                    | "diff"
                    | "log"
                    | "show"
                    | "blame"
                    | "grep"
                    | "ls-files"
                    | "rev-parse"
                    | "describe"
                    | "shortlog"
                    | "fetch"
                    | "branch"
                    | "remote"
                    | "tag"
                    | "reflog"
                    | "ls-remote"
                    | "cat-file"
                    | "rev-list"
                    | "version"
                    | "help"
            ) && !e
                .argv
                .iter()
                .any(|a| a == "-D" || a == "-d" || a == "--delete" || a == "-c")
        }
        "cargo" => matches!(
            sub,
            "build"
                | "check"
                | "test"
                | "clippy"
                | "fmt"
                | "doc"
                | "tree"
                | "metadata"
                | "bench"
                | "nextest"
        ),
        "go" => matches!(
            sub,
            "build" | "test" | "vet" | "fmt" | "list" | "version" | "env"
        ),
        "npm" | "pnpm" | "yarn" => {
            matches!(sub, "test" | "ls" | "list" | "outdated" | "view" | "why")
                || (sub == "run" && ops_ok(e))
        }
        "pytest" | "py.test" | "mypy" | "ruff" | "black" | "isort" | "flake8" | "pylint"
        | "tsc" | "eslint" | "prettier" | "rustfmt" | "gofmt" | "clang-format" | "ctest"
        | "jest" | "vitest" => true,
        "make" | "ninja" => {
            !has("--eval") && !e.argv.iter().any(|a| a.contains('=')) && sub != "install"
        }
        _ if is_shell(n) || is_interpreter(n) => false,
        _ => false,
    }
}

fn ops_ok(e: &Exec) -> bool {
    operands(&e.argv, &[]).get(1).is_some_and(|s| {
        matches!(
            *s,
            "test" | "build" | "lint" | "check" | "typecheck" | "format"
        )
    })
}

/// The posture's name as written in the config.
pub fn name(p: Posture) -> &'static str {
    match p {
        Posture::DenyList => "deny-list",
        Posture::KnownSafe => "known-safe",
        Posture::Sandboxed => "sandboxed",
    }
}
