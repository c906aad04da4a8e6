//! Coverage against GTFOBins and LOLBAS by function (issue 37).
//!
//! `tests/data/gtfobins.jsonl` and `tests/data/lolbas.jsonl` are our own
//! corpora (the projects are GPL-3.0; none of their files is copied): for
//! every binary GTFOBins lists, a payload of each function it documents
//! there (`shell`, `command`, `reverse-shell`, `bind-shell`, `file-write`,
//! `file-download`, `sudo`, `suid`), and for the LOLBAS Windows binaries
//! their `execute`, `download`, `upload` and `awl-bypass` functions as
//! typed in `cmd` or PowerShell, each written as a minimal command of the
//! documented technique. Each line is `{"binary", "function", "command",
//! "sources": [..], ["shell": "cmd"|"powershell"]}`.
//!
//! This test
//!
//! 1. checks every line (known function, a source, no duplicates, every
//!    binary with at least one payload);
//! 2. judges every payload with the default `deny-list` posture (for
//!    LOLBAS lines with a `shell`, the engine reading that shell) and fails
//!    for every payload that is `allow`;
//! 3. judges `tests/data/binaries_everyday.jsonl`, everyday commands of the
//!    same programs (an editor on a project file, a detached tmux, a
//!    database query, compiler output, a Makefile written and run), which
//!    must stay `allow`: the mechanisms that catch the payloads must not
//!    make everyday work ask;
//! 4. generates the per-binary table (functions and verdicts) and totals
//!    and compares it with `docs/approval-gtfobins-lolbas.md`. A stale file
//!    fails the test; regenerate with
//!    `APPROVAL_COVERAGE_WRITE=1 cargo test -p hermes-approval --test gtfobins`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use hermes_approval::{Engine, EngineConfig, Verdict};
use serde_json::Value;

const WORKSPACE: &str = "/work/project";

const GTFO_FUNCTIONS: &[&str] = &[
    "shell",
    "command",
    "reverse-shell",
    "bind-shell",
    "file-write",
    "file-download",
    "sudo",
    "suid",
];

const LOLBAS_FUNCTIONS: &[&str] = &["execute", "download", "upload", "awl-bypass"];

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn doc_path() -> PathBuf {
    crate_dir().join("../../docs/approval-gtfobins-lolbas.md")
}

struct Row {
    binary: String,
    function: String,
    command: String,
    shell: Option<String>,
}

fn read(file: &str, functions: &[&str], failures: &mut Vec<String>) -> Vec<Row> {
    let p = crate_dir().join("tests/data").join(file);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let mut seen = BTreeSet::new();
    let mut rows = Vec::new();
    for (n, l) in text.lines().enumerate() {
        if l.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{file}:{}: {e}", n + 1));
        let s = |k: &str| v[k].as_str().unwrap_or("").to_string();
        let row = Row {
            binary: s("binary"),
            function: s("function"),
            command: s("command"),
            shell: v["shell"].as_str().map(str::to_string),
        };
        let at = format!("{file}:{}", n + 1);
        if row.binary.is_empty() || row.command.trim().is_empty() {
            failures.push(format!("{at}: binary and command are required"));
        }
        if !functions.contains(&row.function.as_str()) {
            failures.push(format!("{at}: unknown function {:?}", row.function));
        }
        if v["sources"]
            .as_array()
            .is_none_or(|a| a.is_empty() || a.iter().any(|x| x.as_str().is_none_or(str::is_empty)))
        {
            failures.push(format!("{at}: a source list is required"));
        }
        if let Some(sh) = &row.shell
            && !matches!(sh.as_str(), "cmd" | "powershell" | "posix")
        {
            failures.push(format!("{at}: unknown shell {sh}"));
        }
        if !seen.insert((
            row.binary.clone(),
            row.function.clone(),
            row.command.clone(),
        )) {
            failures.push(format!("{at}: duplicate payload"));
        }
        rows.push(row);
    }
    rows
}

fn engine(shell: Option<&str>) -> Engine {
    let cfg: EngineConfig = serde_json::from_value(serde_json::json!({
        "shell": shell.unwrap_or("posix"),
        "posture": "deny-list",
        "workspace": WORKSPACE,
    }))
    .expect("engine config");
    Engine::from_config(&cfg).expect("engine")
}

fn tier(v: Verdict) -> &'static str {
    match v {
        Verdict::Allow => "allow",
        Verdict::Ask => "ask",
        Verdict::Block => "block",
    }
}

#[derive(Default)]
struct Totals {
    payloads: usize,
    ask: usize,
    block: usize,
    allow: usize,
}

impl Totals {
    fn add(&mut self, v: Verdict) {
        self.payloads += 1;
        match v {
            Verdict::Allow => self.allow += 1,
            Verdict::Ask => self.ask += 1,
            Verdict::Block => self.block += 1,
        }
    }
}

/// Judge one corpus; returns the Markdown section.
fn section(
    title: &str,
    rows: &[Row],
    functions: &[&str],
    engines: &BTreeMap<&str, Engine>,
    failures: &mut Vec<String>,
) -> (String, Totals) {
    // binary -> function -> verdicts of its payloads
    let mut table: BTreeMap<String, BTreeMap<String, Vec<Verdict>>> = BTreeMap::new();
    let mut shells: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut per_fn: BTreeMap<&str, Totals> = BTreeMap::new();
    let mut deciding: BTreeMap<String, usize> = BTreeMap::new();
    let mut total = Totals::default();
    for r in rows {
        let sh = r.shell.as_deref().unwrap_or("posix");
        let e = &engines[sh];
        let res = e.check(&r.command);
        if res.verdict == Verdict::Allow {
            failures.push(format!(
                "{title}: {} {} is allowed: {}",
                r.binary, r.function, r.command
            ));
        }
        if let Some(k) = res.rule_keys().first() {
            *deciding.entry(k.clone()).or_default() += 1;
        }
        total.add(res.verdict);
        if let Some(f) = functions.iter().find(|f| **f == r.function) {
            per_fn.entry(f).or_default().add(res.verdict);
        }
        table
            .entry(r.binary.clone())
            .or_default()
            .entry(r.function.clone())
            .or_default()
            .push(res.verdict);
        shells
            .entry(r.binary.clone())
            .or_default()
            .insert(sh.to_string());
    }
    let mut s = format!("## {title}\n\n");
    s.push_str(&format!(
        "{} binaries, {} payloads: {} `ask`, {} `block`, {} `allow`.\n\n",
        table.len(),
        total.payloads,
        total.ask,
        total.block,
        total.allow
    ));
    s.push_str("| function | payloads | ask | block | allow |\n|---|---|---|---|---|\n");
    for f in functions {
        if let Some(t) = per_fn.get(f) {
            s.push_str(&format!(
                "| {f} | {} | {} | {} | {} |\n",
                t.payloads, t.ask, t.block, t.allow
            ));
        }
    }
    s.push_str("\nFirst rule of each verdict (how often):\n\n");
    let mut dec: Vec<(&String, &usize)> = deciding.iter().collect();
    dec.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    s.push_str(
        &dec.iter()
            .map(|(k, n)| format!("`{k}` {n}"))
            .collect::<Vec<_>>()
            .join(", "),
    );
    s.push_str("\n\n| binary |");
    for f in functions {
        s.push_str(&format!(" {f} |"));
    }
    s.push_str("\n|---|");
    for _ in functions {
        s.push_str("---|");
    }
    s.push('\n');
    for (b, fns) in &table {
        let sh = &shells[b];
        let label = if sh.len() == 1 && sh.contains("posix") {
            format!("`{b}`")
        } else {
            format!(
                "`{b}` ({})",
                sh.iter().cloned().collect::<Vec<_>>().join(", ")
            )
        };
        s.push_str(&format!("| {label} |"));
        for f in functions {
            let cell = match fns.get(*f) {
                None => String::new(),
                Some(vs) => {
                    let mut c: BTreeMap<&str, usize> = BTreeMap::new();
                    for v in vs {
                        *c.entry(tier(*v)).or_default() += 1;
                    }
                    c.iter()
                        .map(|(t, n)| {
                            if *n > 1 {
                                format!("{t} ×{n}")
                            } else {
                                t.to_string()
                            }
                        })
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            };
            s.push_str(&format!(" {cell} |"));
        }
        s.push('\n');
    }
    s.push('\n');
    (s, total)
}

fn build(failures: &mut Vec<String>) -> String {
    let gtfo = read("gtfobins.jsonl", GTFO_FUNCTIONS, failures);
    let lolbas = read("lolbas.jsonl", LOLBAS_FUNCTIONS, failures);
    if gtfo.len() < 1000 || lolbas.len() < 100 {
        failures.push(format!(
            "corpora too small: {} GTFOBins and {} LOLBAS payloads",
            gtfo.len(),
            lolbas.len()
        ));
    }
    let engines: BTreeMap<&str, Engine> = ["posix", "cmd", "powershell"]
        .into_iter()
        .map(|s| (s, engine(Some(s))))
        .collect();
    let (g, gt) = section("GTFOBins (Unix)", &gtfo, GTFO_FUNCTIONS, &engines, failures);
    let (l, lt) = section(
        "LOLBAS (Windows)",
        &lolbas,
        LOLBAS_FUNCTIONS,
        &engines,
        failures,
    );
    // everyday commands of the same programs stay allowed
    let everyday_path = crate_dir().join("tests/data/binaries_everyday.jsonl");
    let everyday_text = std::fs::read_to_string(&everyday_path).expect("binaries_everyday.jsonl");
    let mut everyday = 0;
    for l in everyday_text.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(l).expect("everyday line is JSON");
        let c = v["command"].as_str().expect("command");
        everyday += 1;
        let r = engines["posix"].check(c);
        if r.verdict != Verdict::Allow {
            failures.push(format!(
                "everyday command not allowed ({:?}, rules {:?}): {c}",
                r.verdict,
                r.rule_keys()
            ));
        }
    }
    if everyday < 40 {
        failures.push(format!("only {everyday} everyday lookalikes"));
    }
    let mut s = String::new();
    s.push_str("# Approval engine coverage against GTFOBins and LOLBAS\n\n");
    s.push_str(
        "Generated by `crates/approval/tests/gtfobins.rs` from our own corpora \
         `crates/approval/tests/data/gtfobins.jsonl` and \
         `crates/approval/tests/data/lolbas.jsonl`; do not edit by hand. \
         Regenerate with `APPROVAL_COVERAGE_WRITE=1 cargo test -p hermes-approval \
         --test gtfobins`; the test fails when this file is stale or any payload \
         is `allow`.\n\n",
    );
    s.push_str(
        "GTFOBins and LOLBAS are GPL-3.0: no file of theirs is copied. For every \
         binary GTFOBins lists, the corpus holds a payload of our own for each of its \
         functions `shell`, `command`, `reverse-shell`, `bind-shell`, `file-write`, \
         `file-download`, `sudo` and `suid` that the binary has there (a minimal \
         command of the documented technique); for LOLBAS, the `execute`, `download`, \
         `upload` and `awl-bypass` functions, typed in `cmd` or PowerShell (the shell \
         column) or in a POSIX shell where the binary is reached from one. Every \
         payload is judged by `Engine` in the default `deny-list` posture with a \
         workspace, as an agent's command would be.\n\n",
    );
    s.push_str(
        "How the payloads are written: `command` payloads carry a harmful command (a \
         recursive delete of the home directory, a download piped to a shell, a \
         setuid bit, a key sent to a remote host, ...), as an attacker would, so the \
         engine must see what the carrier runs; `file-write` and `file-download` \
         payloads write where a write takes effect (`~/.ssh/authorized_keys`, shell \
         start-up files, `~/.local/bin`, `/etc/cron.d`, `/etc/sudoers.d`, \
         `/etc/passwd`, `/usr/local/bin`), since fetching or writing a file in the \
         project is everyday work; `sudo` payloads are the binary's escape run with \
         `sudo`, `suid` payloads run a copy of the binary from the current \
         directory (`./find ...`). Payloads that GTFOBins gives as keystrokes typed \
         into an interactive session (`!/bin/sh` in a pager, `\\! sh` in a database \
         client) are written with the keystrokes on standard input, or with the \
         pager variable or option that does the same.\n\n",
    );
    s.push_str(&format!(
        "Totals: {} payloads, {} `ask`, {} `block`, {} `allow`. {everyday} everyday \
         commands of the same programs (`tests/data/binaries_everyday.jsonl`: an editor \
         on a project file, a detached tmux, a database query, compiler output, a \
         Makefile or `package.json` written and run) stay `allow`.\n\n",
        gt.payloads + lt.payloads,
        gt.ask + lt.ask,
        gt.block + lt.block,
        gt.allow + lt.allow
    ));
    s.push_str(&g);
    s.push_str(&l);
    s
}

#[test]
fn gtfobins_lolbas_coverage() {
    let mut failures = Vec::new();
    let text = build(&mut failures);
    let path = doc_path();
    if std::env::var_os("APPROVAL_COVERAGE_WRITE").is_some() {
        std::fs::write(&path, &text).expect("write docs/approval-gtfobins-lolbas.md");
    }
    assert!(
        failures.is_empty(),
        "{} coverage failure(s):\n  {}",
        failures.len(),
        failures.join("\n  ")
    );
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        current == text,
        "docs/approval-gtfobins-lolbas.md is stale: regenerate with \
         APPROVAL_COVERAGE_WRITE=1 cargo test -p hermes-approval --test gtfobins"
    );
}
