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
    // The local backend (the default is the sandbox where it works: that is
    // measured after, against bare bubblewrap).
    let rt = Runtime::new(r#"{"builtin_toolsets":["terminal"],"terminal":{"backend":"local"}}"#)
        .expect("runtime");
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
    sandbox(n);
}

/// `echo hi` through dispatch on the sandbox backend (seccomp filter, masks,
/// limits, protected metadata, the process shim) against a bare
/// `bwrap ... bash -c 'echo hi'` with the same system binds, namespaces and
/// network cut, in one interleaved run.
fn sandbox(n: usize) {
    let ws = std::env::temp_dir().join(format!("ht-bench-sbx-{}", std::process::id()));
    std::fs::create_dir_all(&ws).unwrap();
    let w = ws.display().to_string();
    let cfg = serde_json::json!({"builtin_toolsets": ["terminal"],
        "terminal": {"backend": "sandbox", "cwd": w}});
    let Ok(rt) = Runtime::new(&cfg.to_string()) else {
        println!("sandbox bench: bubblewrap not usable here, skipped");
        return;
    };
    let ctx = CallContext {
        task_id: "bench".into(),
        ..CallContext::default()
    };
    let mut bare: Vec<String> = vec!["bwrap".into()];
    for d in ["/usr", "/etc", "/opt"] {
        bare.extend(["--ro-bind".into(), d.into(), d.into()]);
    }
    for l in ["/bin", "/sbin", "/lib", "/lib64"] {
        if let Ok(t) = std::fs::read_link(l) {
            bare.extend(["--symlink".into(), t.display().to_string(), l.into()]);
        }
    }
    for a in [
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--tmpfs",
        "/tmp",
        "--bind",
        &w,
        &w,
        "--chdir",
        &w,
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--die-with-parent",
        "--new-session",
        "--",
        "/bin/bash",
        "-c",
        "echo hi",
    ] {
        bare.push(a.into());
    }
    let direct = || {
        let out = std::process::Command::new(&bare[0])
            .args(&bare[1..])
            .output()
            .expect("bwrap");
        assert_eq!(
            out.stdout,
            b"hi\n",
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let through = || {
        let r = dispatch_sync(
            rt.core(),
            "terminal",
            r#"{"command":"echo hi"}"#,
            ctx.clone(),
        )
        .expect("dispatch");
        assert!(r.contains("\"output\":\"hi\""), "{r}");
    };
    for _ in 0..20 {
        direct();
        through();
    }
    let (mut d, mut t) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        let s = Instant::now();
        direct();
        d.push(s.elapsed());
        let s = Instant::now();
        through();
        t.push(s.elapsed());
    }
    let (dm, tm) = (median(d), median(t));
    println!("sandbox bench: {n} iterations each, interleaved");
    println!(
        "  bare bwrap ... bash -c 'echo hi'      median {:.3} ms",
        ms(dm)
    );
    println!(
        "  terminal(echo hi), sandbox backend    median {:.3} ms",
        ms(tm)
    );
    println!(
        "  ratio (median): {:.2}x  (target <= 1.2x)",
        tm.as_secs_f64() / dm.as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(&ws);
}
