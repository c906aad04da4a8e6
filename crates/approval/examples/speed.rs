//! Mean `Engine::check` time over every corpus (`tests/corpus/*.jsonl`) and
//! the case file (`tests/data/command_cases.jsonl`), for BENCH.md and for
//! profiling: `cargo run --release -p hermes-approval --example speed [PASSES]`.

use std::path::Path;
use std::time::Instant;

fn commands(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["shell"].is_null())
        .filter_map(|v| v["command"].as_str().map(str::to_string))
        .collect()
}

/// Nanoseconds this thread has run on a CPU (Linux schedstat): unlike the
/// wall clock, not inflated when a loaded machine deschedules the thread.
fn cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn main() {
    let passes: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(50);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut corpus = Vec::new();
    let mut dirs = vec![root.join("tests/corpus")];
    while let Some(d) = dirs.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        let mut entries: Vec<_> = rd.filter_map(Result::ok).map(|e| e.path()).collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                corpus.extend(commands(&p));
            }
        }
    }
    let cases = commands(&root.join("tests/data/command_cases.jsonl"));
    // `SPEED_POSTURE=deny-list|known-safe|sandboxed`: time an engine with
    // that posture (and a workspace) instead of the compatibility one
    let engine = match std::env::var("SPEED_POSTURE") {
        Ok(p) => hermes_approval::Engine::new().with_posture(
            serde_json::from_str(&format!("\"{p}\"")).expect("posture name"),
            Some("/work/project".into()),
            false,
        ),
        Err(_) => hermes_approval::Engine::new(),
    };
    let mut all = Vec::new();
    for (name, cmds) in [("corpora", &corpus), ("case file", &cases)] {
        for c in cmds.iter() {
            std::hint::black_box(engine.check(c));
        }
        let t = Instant::now();
        let c0 = cpu_ns();
        for _ in 0..passes {
            for c in cmds.iter() {
                std::hint::black_box(engine.check(std::hint::black_box(c)));
            }
        }
        let checks = (passes * cmds.len()) as f64;
        let us = t.elapsed().as_secs_f64() * 1e6 / checks;
        let cpu = match (c0, cpu_ns()) {
            (Some(a), Some(b)) => (b - a) as f64 / 1e3 / checks,
            _ => us,
        };
        println!(
            "{name}: {} commands x {passes} passes: {us:.2} us per check (mean, wall), {cpu:.2} us on CPU",
            cmds.len()
        );
        all.push((cmds.len(), us, cpu));
    }
    let n: usize = all.iter().map(|x| x.0).sum();
    let mean = all.iter().map(|x| x.0 as f64 * x.1).sum::<f64>() / n as f64;
    let cpu = all.iter().map(|x| x.0 as f64 * x.2).sum::<f64>() / n as f64;
    println!("all: {n} commands: {mean:.2} us per check (mean, wall), {cpu:.2} us on CPU");
}
