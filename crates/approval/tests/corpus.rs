//! Per-class corpora (`tests/corpus/<class>.jsonl`): realistic dangerous
//! variants and harmless lookalikes for each class of issue 16, one test per
//! class so a failure names the class. Each line is
//! `{"command", "expect": allow|ask|block|not-allow|not-block, "note",
//! ["shell": "posix"|"powershell"|"cmd"]}`.
//!
//! Run with `--nocapture` to see, per class, how many dangerous lines are
//! caught and how many harmless lines are flagged; `corpus_speed` prints the
//! average check time over all corpora (meaningful in `--release`).

use hermes_approval::{Engine, EngineConfig, Posture, Verdict};

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

struct Line {
    command: String,
    expect: String,
    note: String,
    shell: Option<String>,
}

fn read(class: &str) -> Vec<Line> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(format!("{class}.jsonl"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("json line");
            Line {
                command: v["command"].as_str().expect("command").to_string(),
                expect: v["expect"].as_str().expect("expect").to_string(),
                note: v["note"].as_str().unwrap_or("").to_string(),
                shell: v["shell"].as_str().map(str::to_string),
            }
        })
        .collect()
}

fn engine_for(shell: Option<&str>) -> Engine {
    match shell {
        None => Engine::new(),
        Some(s) => {
            let cfg: EngineConfig =
                serde_json::from_str(&format!("{{\"shell\": \"{s}\"}}")).expect("shell config");
            Engine::from_config(&cfg).expect("engine")
        }
    }
}

fn run(class: &str) {
    run_with(class, None);
}

/// The engine the runtime builds in a posture (project directory known).
fn posture_engine(p: Posture) -> Engine {
    Engine::new().with_posture(p, Some("/work/project".into()), false)
}

fn run_with(class: &str, posture: Option<Posture>) {
    let lines = read(class);
    assert!(lines.len() >= 30, "{class}: only {} lines", lines.len());
    let default = match posture {
        Some(p) => posture_engine(p),
        None => Engine::new(),
    };
    let mut failures = Vec::new();
    let (mut dangerous, mut caught, mut harmless, mut flagged) = (0, 0, 0, 0);
    for l in &lines {
        let custom;
        let e = match l.shell.as_deref() {
            None => &default,
            s => {
                custom = engine_for(s);
                &custom
            }
        };
        let r = e.check(&l.command);
        if l.expect == "allow" {
            harmless += 1;
            flagged += usize::from(r.verdict != Verdict::Allow);
        } else if l.expect != "not-block" {
            dangerous += 1;
            caught += usize::from(r.verdict != Verdict::Allow);
        }
        if !ok(&l.expect, r.verdict) {
            failures.push(format!(
                "  expected {}, got {:?}: {}   ({})\n      rules: {:?}",
                l.expect,
                r.verdict,
                l.command,
                l.note,
                r.reasons
                    .iter()
                    .map(|x| format!("{}: {}", x.rule, x.command))
                    .collect::<Vec<_>>()
            ));
        }
    }
    println!(
        "{class}: {} lines, dangerous caught {caught}/{dangerous}, harmless flagged {flagged}/{harmless}",
        lines.len()
    );
    assert!(
        failures.is_empty(),
        "{class}: {} of {} lines failed:\n{}",
        failures.len(),
        lines.len(),
        failures.join("\n")
    );
}

#[test]
fn class_option_syntax() {
    run("option_syntax");
}

#[test]
fn class_version_control() {
    run("version_control");
}

#[test]
fn class_system_state() {
    run("system_state");
}

#[test]
fn class_exfiltration() {
    run("exfiltration");
}

#[test]
fn class_datastores_cloud() {
    run("datastores_cloud");
}

#[test]
fn class_windows_macos() {
    run("windows_macos");
}

#[test]
fn class_supply_chain() {
    run("supply_chain");
}

#[test]
fn class_catastrophic() {
    run("catastrophic");
}

/// Issue 37: carriers the rules were not taught (unknown wrappers, options
/// that execute code, shell evaluation, persistence, privilege, process
/// memory) and everyday developer commands that must not ask.
#[test]
fn class_generalise() {
    run_with("generalise", Some(Posture::DenyList));
}

/// Commands written after the engine change (shapes of issue 37 with
/// programs and spellings the change was not fitted to).
#[test]
fn class_generalise_heldout() {
    run_with("generalise_heldout", Some(Posture::DenyList));
}

/// A second held-out round, written after every mechanism was in place.
#[test]
fn class_generalise_heldout2() {
    run_with("generalise_heldout2", Some(Posture::DenyList));
}

/// The same corpus in the known-safe posture: every dangerous line still
/// asks or blocks; prints how many everyday lines ask there.
#[test]
fn class_generalise_known_safe() {
    let e = posture_engine(Posture::KnownSafe);
    let (mut d, mut caught, mut h, mut asked) = (0, 0, 0, 0);
    let mut missed = Vec::new();
    for l in read("generalise") {
        let v = e.check(&l.command).verdict;
        if l.expect == "allow" {
            h += 1;
            asked += usize::from(v != Verdict::Allow);
        } else {
            d += 1;
            caught += usize::from(v != Verdict::Allow);
            if v == Verdict::Allow {
                missed.push(l.command.clone());
            }
        }
    }
    println!("generalise (known-safe): dangerous caught {caught}/{d}, everyday asked {asked}/{h}");
    assert!(missed.is_empty(), "allowed in known-safe: {missed:?}");
}

/// The sandboxed posture (sandbox without network, workspace
/// `/work/project`): how many dangerous lines still ask (those that leave
/// the sandbox) and how many everyday lines ask (printed; what must ask in
/// every posture is pinned by `tests/postures.rs`).
#[test]
fn class_generalise_sandboxed_figures() {
    let e = posture_engine(Posture::Sandboxed);
    let opts = hermes_approval::CheckOptions {
        sandbox: Some(hermes_approval::SandboxFacts {
            workspace: "/work/project".into(),
            network: false,
        }),
    };
    let (mut d, mut caught, mut h, mut asked) = (0, 0, 0, 0);
    for l in read("generalise") {
        let v = e.check_with(&l.command, &opts).verdict;
        if l.expect == "allow" {
            h += 1;
            asked += usize::from(v != Verdict::Allow);
        } else {
            d += 1;
            caught += usize::from(v != Verdict::Allow);
        }
    }
    println!(
        "generalise (sandboxed, no network): dangerous still asked {caught}/{d}, everyday asked {asked}/{h}"
    );
    assert_eq!(asked, 0, "everyday commands ask in the sandbox");
}

/// Without a posture (the compatibility judgement of `Engine::check`): how
/// many of the corpus's dangerous lines are caught (printed, not asserted:
/// privilege and installs are `allow` there by the case file).
#[test]
fn class_generalise_compat_figures() {
    let e = Engine::new();
    let (mut d, mut caught, mut h, mut asked) = (0, 0, 0, 0);
    for l in read("generalise") {
        let v = e.check(&l.command).verdict;
        if l.expect == "allow" {
            h += 1;
            asked += usize::from(v != Verdict::Allow);
        } else {
            d += 1;
            caught += usize::from(v != Verdict::Allow);
        }
    }
    println!("generalise (no posture): dangerous caught {caught}/{d}, everyday asked {asked}/{h}");
}

#[test]
fn false_alarms_removed() {
    run("false_alarms");
}

/// Average time of one check over every corpus line (no assertion: timing
/// depends on the machine; run in release with `--nocapture`).
#[test]
fn corpus_speed() {
    let classes = [
        "option_syntax",
        "version_control",
        "system_state",
        "exfiltration",
        "datastores_cloud",
        "windows_macos",
        "supply_chain",
        "catastrophic",
        "false_alarms",
        "generalise",
    ];
    let e = Engine::new();
    let cmds: Vec<String> = classes
        .iter()
        .flat_map(|c| read(c).into_iter().map(|l| l.command))
        .collect();
    for c in &cmds {
        std::hint::black_box(e.check(c));
    }
    let reps = 20;
    let t = std::time::Instant::now();
    for _ in 0..reps {
        for c in &cmds {
            std::hint::black_box(e.check(std::hint::black_box(c)));
        }
    }
    let avg = t.elapsed().as_secs_f64() * 1e6 / (reps * cmds.len()) as f64;
    println!(
        "corpus_speed: {} commands x {reps}: {avg:.2} us per check on average",
        cmds.len()
    );
    let cases = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/command_cases.jsonl"),
    )
    .expect("case file");
    let cases: Vec<String> = cases
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["command"].as_str().map(str::to_string))
        .collect();
    let t = std::time::Instant::now();
    for _ in 0..reps {
        for c in &cases {
            std::hint::black_box(e.check(std::hint::black_box(c)));
        }
    }
    let avg = t.elapsed().as_secs_f64() * 1e6 / (reps * cases.len()) as f64;
    println!(
        "corpus_speed: case file, {} commands x {reps}: {avg:.2} us per check on average",
        cases.len()
    );
}
