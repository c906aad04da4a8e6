//! Every case of `tests/data/command_cases.jsonl` must get its expected
//! verdict. Fails listing every mismatch.

use hermes_approval::{Engine, Verdict};

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

#[test]
fn command_cases() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/command_cases.jsonl");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let engine = Engine::new();
    let mut failures = Vec::new();
    let mut n = 0;
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(line).expect("json line");
        let cmd = v["command"].as_str().expect("command");
        let expect = v["expect"].as_str().expect("expect");
        let r = engine.check(cmd);
        n += 1;
        if !ok(expect, r.verdict) {
            failures.push(format!(
                "line {}: expected {expect}, got {:?}: {:?}\n    rules: {:?}\n    commands: {:?}",
                i + 1,
                r.verdict,
                cmd,
                r.reasons
                    .iter()
                    .map(|r| (&r.rule, &r.command))
                    .collect::<Vec<_>>(),
                r.commands
            ));
        }
    }
    assert!(n >= 500, "only {n} cases read");
    if !failures.is_empty() {
        panic!(
            "{} of {n} cases failed:\n{}",
            failures.len(),
            failures.join("\n")
        );
    }
    println!("{n} cases passed");
}
