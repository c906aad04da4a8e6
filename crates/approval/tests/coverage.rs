//! Coverage against MITRE ATT&CK (issue 17).
//!
//! `coverage/attack.json` lists every technique a shell command can carry
//! out in the tactics the engine judges, each with the rules that cover it
//! or the reason it is out of scope. This test
//!
//! 1. checks every named rule exists in the engine's table;
//! 2. runs the technique's corpus `tests/corpus/attack/<id>.jsonl` (realistic
//!    variants and harmless lookalikes): each line must get its expected
//!    verdict, every dangerous line must be decided by one of the
//!    technique's rules, and each covered technique needs at least one
//!    dangerous line and one lookalike;
//! 3. checks every out-of-scope technique gives a reason and has no rules;
//! 4. generates the matrix from the rule table (tier, explanation) and the
//!    corpora, and compares it with `docs/approval-coverage.md` at the
//!    repository root. A stale file fails the test; regenerate with
//!    `APPROVAL_COVERAGE_WRITE=1 cargo test -p hermes-approval --test coverage`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use hermes_approval::{Engine, Verdict};
use serde_json::Value;

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn doc_path() -> PathBuf {
    crate_dir().join("../../docs/approval-coverage.md")
}

struct Line {
    command: String,
    expect: String,
}

fn corpus(id: &str) -> Vec<Line> {
    let p = crate_dir()
        .join("tests/corpus/attack")
        .join(format!("{id}.jsonl"));
    let text = std::fs::read_to_string(&p).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("corpus line is JSON");
            Line {
                command: v["command"].as_str().expect("command").to_string(),
                expect: v["expect"].as_str().expect("expect").to_string(),
            }
        })
        .collect()
}

fn ok(expect: &str, v: Verdict) -> bool {
    match expect {
        "allow" => v == Verdict::Allow,
        "ask" => v == Verdict::Ask,
        "block" => v == Verdict::Block,
        "not-allow" => v != Verdict::Allow,
        "not-block" => v != Verdict::Block,
        other => panic!("unknown expectation {other}"),
    }
}

fn tier(v: Verdict) -> &'static str {
    match v {
        Verdict::Allow => "allow",
        Verdict::Ask => "ask",
        Verdict::Block => "block",
    }
}

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// Check everything and return the generated matrix (Markdown).
fn build(failures: &mut Vec<String>) -> String {
    let data: Value = serde_json::from_str(
        &std::fs::read_to_string(crate_dir().join("coverage/attack.json"))
            .expect("coverage/attack.json"),
    )
    .expect("attack.json is JSON");
    let engine = Engine::new();
    let rules: BTreeMap<&str, (&str, Verdict)> = engine
        .rules()
        .iter()
        .map(|r| (r.key.as_str(), (r.description.as_str(), r.tier)))
        .collect();
    let techniques = data["techniques"].as_array().expect("techniques");
    let mut seen_ids = BTreeSet::new();
    let mut used_rules = BTreeSet::new();
    let mut covered_rows = Vec::new();
    let mut rule_rows = Vec::new();
    let mut out_rows = Vec::new();
    let (mut n_lines, mut n_dangerous, mut n_lookalikes) = (0, 0, 0);
    for t in techniques {
        let id = t["id"].as_str().expect("id");
        let name = t["name"].as_str().expect("name");
        let tactics = t["tactics"].as_str().unwrap_or("");
        if !seen_ids.insert(id.to_string()) {
            failures.push(format!("{id}: listed twice"));
        }
        if let Some(reason) = t["out_of_scope"].as_str() {
            if reason.trim().len() < 20 {
                failures.push(format!("{id}: out of scope without a real reason"));
            }
            if t.get("rules").is_some() {
                failures.push(format!("{id}: out of scope but names rules"));
            }
            out_rows.push(format!(
                "| {id} | {} | {} | {} |",
                md_escape(name),
                md_escape(tactics),
                md_escape(reason)
            ));
            continue;
        }
        let trules: Vec<&str> = t["rules"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if trules.is_empty() {
            failures.push(format!("{id}: neither rules nor an out-of-scope reason"));
        }
        for r in &trules {
            if !rules.contains_key(r) {
                failures.push(format!("{id}: unknown rule {r}"));
            }
            used_rules.insert(r.to_string());
        }
        let lines = corpus(id);
        let mut decided_by: BTreeSet<String> = BTreeSet::new();
        let (mut dangerous, mut lookalikes) = (0, 0);
        for l in &lines {
            let r = engine.check(&l.command);
            if !ok(&l.expect, r.verdict) {
                failures.push(format!(
                    "{id}: expected {}, got {:?}: {}  (rules {:?})",
                    l.expect,
                    r.verdict,
                    l.command,
                    r.rule_keys()
                ));
            }
            if l.expect == "allow" || l.expect == "not-block" {
                // lookalikes: harmless (allow) or merely not catastrophic
                lookalikes += 1;
            } else {
                dangerous += 1;
                let keys = r.rule_keys();
                match keys.iter().find(|k| trules.contains(&k.as_str())) {
                    Some(k) => {
                        decided_by.insert(k.clone());
                    }
                    None => failures.push(format!(
                        "{id}: no rule of the technique decided `{}` (rules {keys:?})",
                        l.command
                    )),
                }
            }
        }
        if dangerous == 0 || lookalikes == 0 {
            failures.push(format!(
                "{id}: corpus tests/corpus/attack/{id}.jsonl needs variants and lookalikes ({dangerous} dangerous, {lookalikes} lookalikes)"
            ));
        }
        n_lines += lines.len();
        n_dangerous += dangerous;
        n_lookalikes += lookalikes;
        let rules_cell = trules
            .iter()
            .map(|r| {
                let t = rules.get(r).map_or("?", |x| tier(x.1));
                if decided_by.contains(*r) {
                    format!("`{r}` ({t})")
                } else {
                    format!("`{r}` ({t}, not exercised)")
                }
            })
            .collect::<Vec<_>>()
            .join(", ");
        let top = trules
            .iter()
            .filter_map(|r| rules.get(r).map(|x| x.1))
            .max()
            .unwrap_or(Verdict::Allow);
        let expl = trules
            .iter()
            .find(|r| decided_by.contains(**r))
            .and_then(|r| rules.get(r))
            .map_or("", |x| x.0);
        covered_rows.push(format!(
            "| {id} | {} | {} | {} | {} | {} | [`{id}.jsonl`](../crates/approval/tests/corpus/attack/{id}.jsonl): {dangerous} variants, {lookalikes} lookalikes |",
            md_escape(name),
            md_escape(tactics),
            tier(top),
            rules_cell,
            md_escape(expl),
        ));
    }
    for r in engine.rules() {
        if !used_rules.contains(&r.key) {
            rule_rows.push(format!(
                "| `{}` | {} | {} |",
                r.key,
                tier(r.tier),
                md_escape(&r.description)
            ));
        }
    }
    let mut s = String::new();
    s.push_str("# Approval engine coverage against MITRE ATT&CK\n\n");
    s.push_str(
        "Generated by `crates/approval/tests/coverage.rs` from the rule table \
         and `crates/approval/coverage/attack.json`; do not edit by hand. \
         Regenerate with `APPROVAL_COVERAGE_WRITE=1 cargo test -p hermes-approval \
         --test coverage`; the test fails when this file is stale, a rule named \
         here does not exist, a covered technique has no corpus, or a dangerous \
         corpus line is not decided by one of its technique's rules.\n\n",
    );
    s.push_str(&format!(
        "{} techniques: {} covered, {} out of scope. Technique corpora: {n_lines} commands \
         ({n_dangerous} variants, {n_lookalikes} lookalikes that must stay `allow`, or below `block` where marked).\n\n",
        covered_rows.len() + out_rows.len(),
        covered_rows.len(),
        out_rows.len()
    ));
    s.push_str("Tier is the strongest tier among the technique's rules; the explanation is the generic line of the rule that decided the first variant (at run time the reason names the account, path or scope).\n\n");
    s.push_str("## Covered techniques\n\n| technique | name | tactics | tier | rules | explanation | tests |\n|---|---|---|---|---|---|---|\n");
    for r in &covered_rows {
        s.push_str(r);
        s.push('\n');
    }
    s.push_str("\n## Out of scope\n\n| technique | name | tactics | reason |\n|---|---|---|---|\n");
    for r in &out_rows {
        s.push_str(r);
        s.push('\n');
    }
    s.push_str("\n## Rules not tied to a single technique\n\nEngine-level and developer-safety rules (parse errors, dynamic commands, version control, package removal, ...): they guard against mistakes as much as attacks.\n\n| rule | tier | explanation |\n|---|---|---|\n");
    for r in &rule_rows {
        s.push_str(r);
        s.push('\n');
    }
    s
}

#[test]
fn attack_coverage_matrix() {
    let mut failures = Vec::new();
    let text = build(&mut failures);
    assert!(
        failures.is_empty(),
        "{} coverage failure(s):\n  {}",
        failures.len(),
        failures.join("\n  ")
    );
    let path = doc_path();
    if std::env::var_os("APPROVAL_COVERAGE_WRITE").is_some() {
        std::fs::write(&path, &text).expect("write docs/approval-coverage.md");
        return;
    }
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        current == text,
        "{} is stale: regenerate with APPROVAL_COVERAGE_WRITE=1 cargo test -p hermes-approval --test coverage",
        Path::new("docs/approval-coverage.md").display()
    );
}
