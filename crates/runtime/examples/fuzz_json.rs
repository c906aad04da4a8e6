//! A dependency-free mutation fuzzer for the JSON entry points (stable
//! Rust, release mode): tool specs (one and bulk), call arguments against
//! schemas that use the repair pass and the full validator, batches in every
//! accepted shape, and the runtime config.
//!
//! `cargo run --release -p hermes-runtime --example fuzz_json -- [RUNS] [SEED] [TARGET]`
//!
//! TARGET is `specs`, `args`, `batches`, `config` or `all` (the default,
//! RUNS each). Seeds are the lines of `crates/runtime/fuzz/corpus/<target>/`;
//! each run takes a seed (or the previous input), applies 1-8 mutations
//! (byte flips, JSON fragments, deep nesting, huge numbers, control and
//! non-UTF-8-safe characters, splices of two seeds, truncation) and feeds it
//! in. Invariants: no panic; every error is one line; the runtime still
//! dispatches correctly afterwards (checked every 1 000 runs). Exits
//! non-zero with the failing input at the first violation, and writes it to
//! `crates/runtime/fuzz/crashes/`.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use hermes_core::context::CallContext;
use hermes_core::tool::{Blocking, BlockingTool, RunCtx, ToolOutput};
use hermes_runtime::Runtime;
use serde_json::Value;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const FRAGMENTS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    "\"",
    ",",
    ":",
    "null",
    "true",
    "-0",
    "1e999",
    "-1e-999",
    "18446744073709551616",
    "\\u0000",
    "\\ud800",
    "\u{0}",
    "\u{7f}",
    "\u{2028}",
    "é",
    "😀",
    "\"type\"",
    "\"object\"",
    "\"string\"",
    "\"$ref\"",
    "\"#/$defs/N\"",
    "\"$defs\"",
    "\"properties\"",
    "\"items\"",
    "\"anyOf\"",
    "\"pattern\":\"(a+)+$\"",
    "\"format\":\"email\"",
    "\"required\":[\"n\"]",
    "\"additionalProperties\":false",
    "\"enum\":[]",
    "\"name\":\"t\"",
    "\"toolset\":\"s\"",
    "\"arguments\"",
    "\"input\"",
    "\"function\"",
    "\"tool_use\"",
    "\"limits\"",
    "\"terminal\"",
    "\"approvals\"",
    "\"timeout\":-1",
    "\"timeout\":1e308",
    "\"max_batch_calls\":0",
    "\"builtin_toolsets\":[\"nope\"]",
];

fn mutate(rng: &mut Rng, input: &str, seeds: &[String]) -> String {
    let mut s: Vec<u8> = input.as_bytes().to_vec();
    for _ in 0..1 + rng.below(8) {
        let at = rng.below(s.len() + 1);
        match rng.below(9) {
            0 if !s.is_empty() => {
                let i = rng.below(s.len());
                s[i] ^= 1 << rng.below(7);
            }
            1 | 2 => {
                let f = FRAGMENTS[rng.below(FRAGMENTS.len())].as_bytes();
                s.splice(at..at, f.iter().copied());
            }
            3 if !s.is_empty() => {
                let end = (at + rng.below(16)).min(s.len());
                s.drain(at.min(end)..end);
            }
            4 => {
                let other = seeds[rng.below(seeds.len())].as_bytes();
                let from = rng.below(other.len());
                s.splice(at..at, other[from..].iter().copied());
            }
            5 => {
                // Deep nesting.
                let depth = 1 + rng.below(2000);
                let (open, close) = if rng.below(2) == 0 {
                    ("[", "]")
                } else {
                    ("{\"a\":", "}")
                };
                let mut nest = open.repeat(depth).into_bytes();
                nest.extend(close.repeat(depth).as_bytes());
                s.splice(at..at, nest);
            }
            6 => {
                // A long run (names, strings).
                let n = 1 + rng.below(5000);
                s.splice(at..at, std::iter::repeat_n(b'a', n));
            }
            7 if s.len() > 2 => {
                s.truncate(rng.below(s.len()));
            }
            _ => {
                let i = rng.below(s.len() + 1);
                s.insert(i.min(s.len()), (rng.next() & 0x7f) as u8);
            }
        }
    }
    // The entry points take UTF-8 text (the C layer checks it first).
    String::from_utf8_lossy(&s).into_owned()
}

struct Echo;
impl BlockingTool for Echo {
    fn run(&self, args: Value, _: &RunCtx) -> ToolOutput {
        ToolOutput::ok(args.to_string())
    }
}

fn tool() -> Arc<dyn hermes_core::Tool> {
    Arc::new(Blocking(Arc::new(Echo)))
}

fn runtime() -> Runtime {
    let rt = Runtime::new(r#"{"limits":{"max_batch_calls":64}}"#).expect("runtime");
    for line in seeds("specs") {
        if line.starts_with('{') {
            rt.register_tool(&line, tool(), None).expect("seed spec");
        }
    }
    rt
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

fn seeds(target: &str) -> Vec<String> {
    let dir = corpus_dir().join("corpus").join(target);
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let text = std::fs::read_to_string(e.unwrap().path()).unwrap();
        out.extend(
            text.lines()
                .filter(|l| !l.trim().is_empty())
                .map(String::from),
        );
    }
    out
}

fn one_line(target: &str, input: &str, msg: &str) {
    if msg.contains('\n') || msg.contains('\r') {
        fail(target, input, &format!("multi-line error: {msg:?}"));
    }
}

fn fail(target: &str, input: &str, why: &str) -> ! {
    let dir = corpus_dir().join("crashes");
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("{target}-{}.txt", std::process::id()));
    let _ = std::fs::write(&path, input);
    println!("{why}\ninput ({}): {input:?}", path.display());
    std::process::exit(1);
}

/// Feed one input to `target`; an invariant broken ends the process.
fn feed(rt: &Runtime, target: &str, input: &str, k: u64) {
    let ctx = CallContext::default();
    let out = catch_unwind(AssertUnwindSafe(|| match target {
        "specs" => {
            let name_free = format!("f{}", k % 64);
            // Rename so that most mutated specs do not collide with the seeds.
            let text = input.replacen("\"name\":\"", &format!("\"name\":\"{name_free}"), 1);
            let r = if text.trim_start().starts_with('[') {
                rt.register_tools(&text, tool(), None).map(|_| ())
            } else {
                rt.register_tool(&text, tool(), None)
            };
            if let Err(e) = r {
                one_line(target, input, &e.message);
            }
        }
        "args" => {
            for name in ["t", "w", "r", "c"] {
                match rt.dispatch(name, input, ctx.clone()) {
                    Ok(text) => {
                        if serde_json::from_str::<Value>(&text).is_err() {
                            fail(
                                target,
                                input,
                                &format!("{name}: result is not JSON: {text}"),
                            );
                        }
                    }
                    Err(e) => one_line(target, input, &e.message),
                }
            }
        }
        "batches" => match rt.dispatch_batch(input, &ctx) {
            Ok(text) => {
                if serde_json::from_str::<Value>(&text).is_err() {
                    fail(target, input, &format!("batch result is not JSON: {text}"));
                }
            }
            Err(e) => one_line(target, input, &e.message),
        },
        "config" => {
            if let Err(e) = hermes_runtime::config::Config::parse(input) {
                one_line(target, input, &e.message);
            }
        }
        other => panic!("unknown target {other}"),
    }));
    if out.is_err() {
        fail(target, input, "panic");
    }
}

fn run_target(target: &str, runs: u64, seed: u64) {
    let corpus = seeds(target);
    let rt = runtime();
    let mut rng = Rng(seed | 1);
    let mut input = corpus[0].clone();
    let t = Instant::now();
    for k in 0..runs {
        let base = if rng.below(4) == 0 {
            input.clone()
        } else {
            corpus[rng.below(corpus.len())].clone()
        };
        input = mutate(&mut rng, &base, &corpus);
        if input.len() > 256 * 1024 {
            let mut end = 256 * 1024;
            while !input.is_char_boundary(end) {
                end -= 1;
            }
            input.truncate(end);
        }
        feed(&rt, target, &input, k);
        if k % 1000 == 999 {
            // Still working after whatever came before.
            let ok = rt.dispatch("t", r#"{"n":"2"}"#, CallContext::default());
            if ok.as_deref() != Ok(r#"{"n":2}"#) {
                fail(
                    target,
                    &input,
                    &format!("runtime broken after this input: {ok:?}"),
                );
            }
            if target == "specs" && k % 50_000 == 49_999 {
                // Keep the registry bounded: start over with the seeds.
                drop(std::mem::replace(&mut input, corpus[0].clone()));
            }
        }
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{target}: {runs} runs in {secs:.1} s ({:.0} runs/s), no panic, every error one line",
        runs as f64 / secs
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runs: u64 = args.first().and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let seed: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(0x5eed);
    let target = args.get(2).map(String::as_str).unwrap_or("all");
    let targets: Vec<&str> = match target {
        "all" => vec!["specs", "args", "batches", "config"],
        t => vec![t],
    };
    for t in targets {
        run_target(t, runs, seed);
    }
}
