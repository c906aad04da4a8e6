//! Foreground `echo hi` through the full dispatch pipeline (validation,
//! approval analysis, spawn in a new session, per-task state capture, output
//! cleaning) against spawning `bash -c 'echo hi'` directly.
//! `cargo bench --bench terminal`; figures go to src/tools/terminal/BENCH.md.

use hermes_tools::Runtime;
use hermes_tools::core::ToolServices;
use hermes_tools::dispatch::{CallContext, dispatch_sync};
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn pct(mut v: Vec<Duration>, p: f64) -> Duration {
    v.sort();
    v[((v.len() as f64 - 1.0) * p) as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let n: usize = std::env::var("HT_BENCH_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    let rt = Runtime::new(r#"{"builtin_toolsets":["terminal"]}"#).expect("runtime");
    let ctx = CallContext {
        task_id: "bench".into(),
        ..CallContext::default()
    };
    let args = r#"{"command":"echo hi"}"#;
    let direct = || {
        let out = std::process::Command::new("/bin/bash")
            .args(["-c", "echo hi"])
            .output()
            .expect("bash");
        assert_eq!(out.stdout, b"hi\n");
    };
    let through = || {
        let r = dispatch_sync(rt.core(), "terminal", args, ctx.clone()).expect("dispatch");
        assert!(r.contains("\"output\":\"hi\""), "{r}");
    };
    // warm up both (page cache, regexes, the task's state snapshot)
    for _ in 0..20 {
        direct();
        through();
    }
    // interleave so machine noise hits both alike
    let mut d = Vec::with_capacity(n);
    let mut t = Vec::with_capacity(n);
    for _ in 0..n {
        let s = Instant::now();
        direct();
        d.push(s.elapsed());
        let s = Instant::now();
        through();
        t.push(s.elapsed());
    }
    let (dm, tm) = (median(d.clone()), median(t.clone()));
    // the parts that are not the process itself
    let cancel = hermes_tools::core::CancelToken::default();
    let s = Instant::now();
    for _ in 0..1000 {
        let _ = rt.services().approve_command("echo hi", &ctx, &cancel);
    }
    let approve = s.elapsed() / 1000;
    // a command that may change state: its cwd and exports are captured
    let cap_args = r#"{"command":"cd /tmp && echo hi"}"#;
    let mut c = Vec::with_capacity(n);
    for _ in 0..n {
        let s = Instant::now();
        let r = dispatch_sync(rt.core(), "terminal", cap_args, ctx.clone()).expect("dispatch");
        c.push(s.elapsed());
        assert!(r.contains("\"output\":\"hi\""), "{r}");
    }
    println!("terminal bench: {n} iterations each, interleaved");
    println!(
        "  direct  bash -c 'echo hi'            median {:.3} ms  p90 {:.3} ms",
        ms(dm),
        ms(pct(d, 0.9))
    );
    println!(
        "  terminal(echo hi) via dispatch_sync   median {:.3} ms  p90 {:.3} ms",
        ms(tm),
        ms(pct(t, 0.9))
    );
    println!(
        "  terminal(cd /tmp && echo hi), state captured: median {:.3} ms",
        ms(median(c))
    );
    println!(
        "  approval gate alone: {:.1} us",
        approve.as_secs_f64() * 1e6
    );
    println!(
        "  ratio (median): {:.2}x  (target <= 1.5x)",
        tm.as_secs_f64() / dm.as_secs_f64()
    );
}
