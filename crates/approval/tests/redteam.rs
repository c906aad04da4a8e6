//! Red-team findings (issues 37 and 38, 2026-11-28): commands the engine
//! answered `allow` although they run code, write outside the workspace or
//! read credentials, and variants of each class written afterwards
//! (`tests/data/redteam_2026_11_28.jsonl`). Each line is `{"command",
//! "expect": {posture: "ask"|"block"}, "class", "source"}`; `ask` means at
//! least `ask`. The engine is the one the runtime builds: a posture, the
//! workspace (a fixture directory made here, like the red team's) and
//! `read_scripts`. The sandboxed posture is checked without sandbox facts
//! (it then judges as `deny-list`), as the red team ran it.
//!
//! Lines with `"expect": {posture: "allow"}` are look-alikes that must stay
//! allowed.

use hermes_approval::{Engine, Posture, Verdict};

/// The red team's fixture workspace (`/work/rt/37/ws`), rebuilt in a
/// fresh temporary directory.
struct Ws(std::path::PathBuf);

impl Ws {
    fn new() -> Ws {
        let p = std::env::temp_dir().join(format!(
            "hermes-approval-redteam-{}-{:?}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        ));
        let ws = Ws(p);
        let plain = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n";
        let files: &[(&str, String)] = &[
            ("main.py", "import helper\n".into()),
            ("helper.py", "import os\nos.system(\"rm -rf ~\")\n".into()),
            ("direct.py", "import os\nos.system(\"rm -rf ~\")\n".into()),
            (
                "direct.js",
                "const cp=require(\"child_process\");cp.execSync(\"rm -rf ~\")\n".into(),
            ),
            ("evil.mk", "x:\n\trm -rf ~\n".into()),
            ("evil.sh", "rm -rf ~\n".into()),
            ("ok.sh", "echo hi\n".into()),
            ("wrap.sh", ". ./evil.sh\n".into()),
            ("wrap2.sh", "source \"$(dirname \"$0\")/evil.sh\"\n".into()),
            ("f", "hello x\n".into()),
            ("x.awk", "BEGIN{system(\"rm -rf ~\")}\n".into()),
            ("cmds.txt", "rm -rf ~\n".into()),
            ("script.sed", "1e rm -rf ~\n".into()),
            ("ok.sed", "s/a/b/g\n".into()),
            ("evil.cfg", "[core]\n\tfsmonitor = rm -rf ~\n[alias]\n\tst = !rm -rf ~\n".into()),
            (
                "package.json",
                "{\"name\":\"x\",\"version\":\"1.0.0\",\"scripts\":{\"test\":\"rm -rf ~\",\"build\":\"rm -rf ~\",\"postinstall\":\"rm -rf ~\"}}\n".into(),
            ),
            ("README.md", "# x\n".into()),
            ("tests/test_a.py", "def test_a():\n    assert 1\n".into()),
            ("r/.git/config", plain.into()),
            ("r2/.git/config", format!("{plain}\tfsmonitor = rm -rf ~\n")),
            ("r3/.git/config", plain.into()),
            ("r3/.git/hooks/pre-commit", "#!/bin/sh\nrm -rf ~\n".into()),
            ("r3/.git/hooks/pre-commit.sample", "#!/bin/sh\nexit 0\n".into()),
            ("r4/.git/config", plain.into()),
            ("r4/.git/hooks/pre-commit.sample", "#!/bin/sh\nexit 0\n".into()),
            ("r5/.git/config", plain.into()),
            ("r5/.git/hooks/pre-commit", "#!/bin/sh\ncargo fmt --check\n".into()),
        ];
        for (rel, text) in files {
            let path = ws.0.join(rel);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("fixture dir");
            std::fs::write(&path, text).expect("fixture file");
        }
        ws
    }
}

impl Drop for Ws {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

struct Line {
    command: String,
    expect: Vec<(Posture, String)>,
    class: String,
    source: String,
}

fn posture(name: &str) -> Posture {
    match name {
        "deny-list" => Posture::DenyList,
        "known-safe" => Posture::KnownSafe,
        "sandboxed" => Posture::Sandboxed,
        other => panic!("unknown posture {other}"),
    }
}

fn read() -> Vec<Line> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/redteam_2026_11_28.jsonl");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("json line");
            Line {
                command: v["command"].as_str().expect("command").to_string(),
                expect: v["expect"]
                    .as_object()
                    .expect("expect")
                    .iter()
                    .map(|(p, e)| (posture(p), e.as_str().expect("verdict").to_string()))
                    .collect(),
                class: v["class"].as_str().expect("class").to_string(),
                source: v["source"].as_str().unwrap_or("").to_string(),
            }
        })
        .collect()
}

#[test]
fn redteam_commands_are_not_allowed() {
    let ws = Ws::new();
    let dir = ws.0.display().to_string();
    let engines: Vec<(Posture, Engine)> =
        [Posture::DenyList, Posture::KnownSafe, Posture::Sandboxed]
            .into_iter()
            .map(|p| {
                (
                    p,
                    Engine::new()
                        .with_posture(p, Some(dir.clone()), false)
                        .reading_scripts(true),
                )
            })
            .collect();
    let lines = read();
    let mut failures = Vec::new();
    let mut per: std::collections::BTreeMap<(String, String), (usize, usize)> = Default::default();
    for l in &lines {
        let mut line_ok = true;
        for (p, want) in &l.expect {
            let e = &engines.iter().find(|(q, _)| q == p).expect("engine").1;
            let r = e.check(&l.command);
            let ok = match want.as_str() {
                "allow" => r.verdict == Verdict::Allow,
                "ask" => r.verdict != Verdict::Allow,
                "block" => r.verdict == Verdict::Block,
                other => panic!("unknown expectation {other}"),
            };
            if !ok {
                line_ok = false;
                failures.push(format!(
                    "[{}] {:?}: want {want}, got {:?} {:?} :: {}",
                    l.class,
                    p,
                    r.verdict,
                    r.rule_keys(),
                    l.command
                ));
            }
        }
        let src = if l.source.starts_with("red-team") {
            "red-team"
        } else {
            l.source.as_str()
        };
        let c = per.entry((src.to_string(), l.class.clone())).or_default();
        c.0 += 1;
        if line_ok {
            c.1 += 1;
        }
    }
    for ((src, class), (n, ok)) in &per {
        println!("{src:10} {class:24} {ok}/{n}");
    }
    assert!(
        failures.is_empty(),
        "{} of {} checks failed:\n{}",
        failures.len(),
        lines.len(),
        failures.join("\n")
    );
}

/// The second red team (2026-11-28, `tests/data/redteam2_2026_11_28.jsonl`):
/// each line names the fixture workspace (`"ws"`) it was reproduced in; the
/// fixtures (`tests/data/redteam2_fixtures.json`, `{ws: {path: text}}`) are
/// rebuilt in a fresh temporary directory. Lines without `"ws"` use `ws`.
#[test]
fn redteam2_commands_are_not_allowed() {
    let root = Ws(std::env::temp_dir().join(format!(
        "hermes-approval-redteam2-{}-{:?}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    )));
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let fx: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(data.join("redteam2_fixtures.json")).expect("fixtures"),
    )
    .expect("fixtures json");
    for (ws, files) in fx.as_object().expect("fixture map") {
        for (rel, text) in files.as_object().expect("files") {
            let path = root.0.join(ws).join(rel);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("fixture dir");
            std::fs::write(&path, text.as_str().expect("text")).expect("fixture file");
        }
    }
    let text = std::fs::read_to_string(data.join("redteam2_2026_11_28.jsonl")).expect("corpus");
    let mut engines: std::collections::HashMap<(String, Posture), Engine> = Default::default();
    let mut failures = Vec::new();
    let mut per: std::collections::BTreeMap<(String, String), (usize, usize)> = Default::default();
    let mut n = 0;
    for l in text.lines().filter(|l| !l.trim().is_empty()) {
        n += 1;
        let v: serde_json::Value = serde_json::from_str(l).expect("json line");
        let command = v["command"].as_str().expect("command");
        let class = v["class"].as_str().expect("class");
        let class = class.split('/').next().unwrap_or(class).to_string();
        let ws = v["ws"].as_str().unwrap_or("ws").to_string();
        let source = v["source"].as_str().unwrap_or("").to_string();
        let mut line_ok = true;
        for (p, want) in v["expect"].as_object().expect("expect") {
            let p = posture(p);
            let want = want.as_str().expect("verdict");
            let dir = root.0.join(&ws).display().to_string();
            let e = engines.entry((ws.clone(), p)).or_insert_with(|| {
                Engine::new()
                    .with_posture(p, Some(dir), false)
                    .reading_scripts(true)
            });
            let r = e.check(command);
            let ok = match want {
                "allow" => r.verdict == Verdict::Allow,
                "ask" => r.verdict != Verdict::Allow,
                "block" => r.verdict == Verdict::Block,
                other => panic!("unknown expectation {other}"),
            };
            if !ok {
                line_ok = false;
                failures.push(format!(
                    "[{class}] {ws} {p:?}: want {want}, got {:?} {:?} :: {command}",
                    r.verdict,
                    r.rule_keys(),
                ));
            }
        }
        let c = per.entry((source, class)).or_default();
        c.0 += 1;
        if line_ok {
            c.1 += 1;
        }
    }
    for ((src, class), (n, ok)) in &per {
        println!("{src:12} {class:24} {ok}/{n}");
    }
    assert!(
        failures.is_empty(),
        "{} checks failed ({n} lines):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
