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
    // options that load code, write files, install or run a program
    // make any of these programs not known-safe
    if risky_options(e) {
        return false;
    }
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
                    | "-fprint0"
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
        "go" => {
            matches!(
                sub,
                "build" | "test" | "vet" | "fmt" | "list" | "version" | "env"
            ) && !(sub == "env" && (has("-w") || has("-u")))
        }
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

/// Options of the known-safe programs that make a run unsafe: a file
/// written (outside the usual places), a config, plugin or module loaded
/// (code), a program run, packages installed, the environment printed.
fn risky_options(e: &Exec) -> bool {
    let a = &e.argv;
    let opt = |w: &str, names: &[&str]| {
        names.iter().any(|n| {
            w == *n
                || w.strip_prefix(n).is_some_and(|r| r.starts_with('='))
                || (n.len() == 2 && !n.starts_with("--") && w.starts_with(n) && w.len() > 2)
        })
    };
    let any = |names: &[&str]| a[1..].iter().any(|w| opt(w, names));
    // a value that leaves the workspace
    let outside = |names: &[&str]| {
        a.windows(2).any(|w| {
            let v = if names.contains(&w[0].as_str()) {
                Some(w[1].as_str())
            } else {
                names
                    .iter()
                    .find_map(|n| w[0].strip_prefix(&format!("{n}=")))
            };
            v.is_some_and(|v| v.starts_with(['/', '~']) || v.contains(".."))
        })
    };
    match e.name.as_str() {
        "pytest" | "py.test" => {
            any(&[
                "--basetemp",
                "--rootdir",
                "-c",
                "--config-file",
                "--confcutdir",
                "-o",
                "--override-ini",
                "--pdbcls",
                "--junitxml",
                "--junit-xml",
                "--log-file",
                "--debug",
            ]) || a
                .windows(2)
                .any(|w| w[0] == "-p" && !w[1].starts_with("no:"))
                || a.iter()
                    .any(|w| w.starts_with("-p") && w.len() > 2 && !w[2..].starts_with("no:"))
        }
        "mypy" => any(&[
            "--install-types",
            "--config-file",
            "--python-executable",
            "--cache-dir",
            "--junit-xml",
            "--html-report",
            "--txt-report",
            "--xml-report",
            "--linecount-report",
            "--any-exprs-report",
        ]),
        "ruff" | "black" | "isort" | "flake8" | "pylint" => any(&[
            "--config",
            "--rcfile",
            "--load-plugins",
            "--init-hook",
            "--settings-path",
            "--sp",
            "--settings-file",
            "--append-config",
            "--require-plugins",
            "--output-file",
            "--cache-dir",
        ]),
        "eslint" | "prettier" | "jest" | "vitest" | "tsc" => {
            any(&[
                "-c",
                "--config",
                "--plugin",
                "--plugins",
                "--rulesdir",
                "--resolve-plugins-relative-to",
                "-f",
                "--format",
                "-o",
                "--output-file",
                "--outputFile",
                "--require",
                "--setupFiles",
                "--setupFilesAfterEnv",
                "--testRunner",
                "--reporters",
                "--transform",
                "--globalSetup",
                "--globalTeardown",
                "--testEnvironment",
                "--resolver",
                "--preset",
                "--watchPlugins",
                "--generateTrace",
            ]) || outside(&[
                "--outDir",
                "--outFile",
                "--declarationDir",
                "--tsBuildInfoFile",
            ])
        }
        "ctest" => any(&[
            "-S",
            "-SP",
            "--script",
            "--build-and-test",
            "--build-options",
            "--extra-submit",
            "-O",
            "--output-log",
        ]),
        "cargo" => any(&["--config", "-Z"]),
        "go" => {
            any(&[
                "-exec",
                "-toolexec",
                "-vettool",
                "-overlay",
                "-modfile",
                "-ldflags",
                "-gccgoflags",
                "-compiler",
                "-pkgdir",
            ]) || outside(&["-o"])
        }
        "tree" => any(&["-o", "--output"]),
        "sort" => any(&["-o", "--output", "--compress-program"]),
        "rg" => any(&["--pre", "--pre-glob"]),
        // the whole environment (tokens) printed; files read into the output
        "jq" | "yq" => {
            a[1..].iter().any(|w| jq_reads_env(w)) || any(&["--rawfile", "--slurpfile", "-L"])
        }
        "git" => any(&["--config-env", "--exec-path", "--git-dir"]),
        _ => false,
    }
}

/// A jq filter that reads the environment (`env`, `$ENV`).
pub fn jq_reads_env(w: &str) -> bool {
    use once_cell::sync::Lazy;
    static ENV: Lazy<regex::Regex> =
        Lazy::new(|| regex::Regex::new(r"(^|[^\w$.])env\b|\$ENV\b").expect("jq env regex"));
    !w.starts_with('-') && ENV.is_match(w)
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
