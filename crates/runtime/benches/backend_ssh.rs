//! The ssh backend's per-call cost against a real sshd on 127.0.0.1 (the
//! tests' throwaway server), measured in one run, call by call in turn:
//!
//! * `echo hi` through the full dispatch pipeline on `terminal.backend: ssh`;
//! * a bare `ssh -o ControlPath=<the same master> host 'echo hi'` (the floor);
//! * the original's ssh backend model (benches/reference/hermes_ssh.py:
//!   spawn-per-call `ssh ... bash -c`, ControlMaster=auto, the snapshot
//!   sourced and re-exported, the cwd parsed from a marker) on the same sshd.
//!
//! ```text
//! cargo bench -p hermes-runtime --bench backend_ssh
//! HT_BENCH_N=100 cargo bench -p hermes-runtime --bench backend_ssh
//! ```
//!
//! Targets (issue 14): ours at most 1.2x the bare call; faster than the original.

#[path = "../tests/ssh_common/mod.rs"]
mod ssh_common;

use hermes_core::dispatch::CallContext;
use hermes_runtime::Runtime;
use serde_json::{Value, json};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The master's ControlPath, from its command line.
fn control_path(port: u16) -> Option<String> {
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let args: Vec<String> = cmd
            .split(|b| *b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        let is_master = args.iter().any(|a| a == "-M")
            && args
                .windows(2)
                .any(|w| w[0] == "-p" && w[1] == port.to_string());
        if is_master {
            return args
                .iter()
                .find_map(|a| a.strip_prefix("ControlPath=").map(String::from));
        }
    }
    None
}

fn main() {
    let sshd = match ssh_common::Sshd::start() {
        Ok(s) => s,
        Err(why) => {
            println!("backend_ssh: SKIPPED: {why}");
            return;
        }
    };
    let n: usize = std::env::var("HT_BENCH_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(40);
    let cfg = json!({
        "builtin_toolsets": ["terminal"],
        "terminal": {"backend": "ssh", "ssh": sshd.section()},
        "data_dir": sshd.path("data"),
    });
    let rt = Runtime::new(&cfg.to_string()).expect("runtime");
    let args = json!({"command": "echo hi"}).to_string();
    let ours = || {
        let ctx = CallContext {
            task_id: "bench".into(),
            ..CallContext::default()
        };
        let out = rt.dispatch("terminal", &args, ctx).expect("dispatch");
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["output"], "hi", "{v}");
    };
    for _ in 0..3 {
        ours();
    }
    let ctl = control_path(sshd.port).expect("the runtime's master connection");
    let mut bare_args = sshd.ssh_args();
    bare_args.extend([
        "-o".into(),
        format!("ControlPath={ctl}"),
        "-o".into(),
        "ControlMaster=no".into(),
        "127.0.0.1".into(),
        "echo hi".into(),
    ]);
    let bare = || {
        let out = Command::new("ssh")
            .args(&bare_args)
            .stdin(Stdio::null())
            .output()
            .expect("ssh");
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "hi");
    };
    bare();
    let (mut t_ours, mut t_bare) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let s = Instant::now();
        ours();
        t_ours.push(s.elapsed());
        let s = Instant::now();
        bare();
        t_bare.push(s.elapsed());
    }
    let (o, b) = (median(t_ours), median(t_bare));
    println!(
        "backend_ssh: echo hi, n={n}: ours (dispatch, ssh backend) {:.1} ms; bare ssh over the same master {:.1} ms; ratio {:.2}x (target <= 1.2x)",
        ms(o),
        ms(b),
        o.as_secs_f64() / b.as_secs_f64()
    );
    // The original's model, on the same sshd, right after.
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../benches/reference/hermes_ssh.py"
    );
    let py = Command::new("python3")
        .arg(script)
        .args(["--port", &sshd.port.to_string(), "-n", &n.to_string()])
        .arg("--key")
        .arg(sshd.path("clientkey"))
        .arg("--known-hosts")
        .arg(sshd.path("known_hosts"))
        .output();
    match py {
        Ok(out) if out.status.success() => {
            let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
            let orig = v["median_ms"].as_f64().unwrap_or(f64::NAN);
            println!(
                "backend_ssh: the original's model (hermes_ssh.py) {orig:.1} ms (ok={}); ours is {:.2}x faster",
                v["ok"],
                orig / ms(o)
            );
        }
        Ok(out) => println!(
            "backend_ssh: the original's model failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        Err(e) => println!("backend_ssh: the original's model not run (python3: {e})"),
    }
    // Ours again after the Python run, so drift shows.
    let mut again = Vec::new();
    for _ in 0..n.min(20) {
        let s = Instant::now();
        ours();
        again.push(s.elapsed());
    }
    println!(
        "backend_ssh: ours again after it {:.1} ms",
        ms(median(again))
    );
}
