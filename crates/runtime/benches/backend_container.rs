//! The container backend's per-call cost on a real dockerd and podman (the
//! tests' daemon and image), measured in one run, call by call in turn:
//!
//! * `echo hi` through the full dispatch pipeline on `terminal.backend:
//!   docker` (then `podman`);
//! * a bare `<client> exec <the same container> echo hi` (the floor);
//! * the original's docker backend model (benches/reference/hermes_docker.py:
//!   its `run` flags, a login-shell snapshot, then spawn-per-call
//!   `exec -i ... bash -c` with the snapshot sourced and re-exported and the
//!   cwd parsed from a marker) on the same engine and image.
//!
//! Each in two shapes: calls back to back (each timed right after the
//! previous one), and calls after an idle pause (`HT_BENCH_GAP_MS`, 300 ms
//! by default: an agent's calls come after a model's turn, which takes
//! longer), where the exec our backend starts ahead of the next command is
//! ready.
//!
//! ```text
//! cargo bench -p hermes-runtime --bench backend_container
//! HT_BENCH_N=100 HT_BENCH_GAP_MS=500 cargo bench -p hermes-runtime --bench backend_container
//! ```
//!
//! Targets (issue 14): ours at most 1.2x the bare exec; faster than the original.

#[path = "../tests/container_common/mod.rs"]
mod container_common;

use container_common::Engine;
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

fn bench(e: &Engine, n: usize) {
    let name = e.name;
    let data = tempfile::tempdir().expect("tempdir");
    let cfg = json!({
        "builtin_toolsets": ["terminal"],
        "terminal": {"backend": name, "docker": e.section()},
        "data_dir": data.path(),
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
    let id = e
        .ours()
        .into_iter()
        .next()
        .expect("the runtime's container");
    let bare = || {
        let out = e
            .cmd()
            .args(["exec", &id, "echo", "hi"])
            .stdin(Stdio::null())
            .output()
            .expect("exec");
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "hi");
    };
    bare();
    let gap = Duration::from_millis(
        std::env::var("HT_BENCH_GAP_MS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(300),
    );
    let time = |f: &dyn Fn(), pause: Duration| -> Duration {
        let t: Vec<Duration> = (0..n)
            .map(|_| {
                std::thread::sleep(pause);
                let s = Instant::now();
                f();
                s.elapsed()
            })
            .collect();
        median(t)
    };
    let mut ours_at = Vec::new();
    for (shape, pause) in [("back to back", Duration::ZERO), ("after a pause", gap)] {
        let (o, b) = (time(&ours, pause), time(&bare, pause));
        println!(
            "backend_container[{name}]: echo hi, n={n}, {shape} ({} ms): ours (dispatch) {:.1} ms; bare `{name} exec` into the same container {:.1} ms; ratio {:.2}x (target <= 1.2x)",
            pause.as_millis(),
            ms(o),
            ms(b),
            o.as_secs_f64() / b.as_secs_f64()
        );
        ours_at.push((shape, pause, o));
    }
    rt.close();
    drop(rt);
    // The original's model, on the same engine and image, right after.
    for (shape, pause, o) in ours_at {
        original(e, n, shape, pause, o);
    }
}

/// Run the original's model (`n` calls after `pause` each) and print it
/// beside ours (`o`).
fn original(e: &Engine, n: usize, shape: &str, pause: Duration, o: Duration) {
    let name = e.name;
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../benches/reference/hermes_docker.py"
    );
    let mut py = Command::new("python3");
    py.arg(script).arg("--client").arg(&e.client).args([
        "--engine",
        name,
        "--image",
        container_common::IMAGE,
        "-n",
        &n.to_string(),
        "--gap-ms",
        &pause.as_millis().to_string(),
    ]);
    if let Some(h) = &e.host {
        py.args(["--host", h]);
    }
    for a in &e.run_args {
        py.arg(format!("--run-arg={a}"));
    }
    match py.output() {
        Ok(out) if out.status.success() => {
            let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
            let orig = v["median_ms"].as_f64().unwrap_or(f64::NAN);
            println!(
                "backend_container[{name}]: {shape}: the original's model (hermes_docker.py) {orig:.1} ms (ok={}); ours is {:.2}x faster",
                v["ok"],
                orig / ms(o)
            );
        }
        Ok(out) => println!(
            "backend_container[{name}]: the original's model failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        Err(err) => {
            println!("backend_container[{name}]: the original's model not run (python3: {err})")
        }
    }
}

fn main() {
    let n: usize = std::env::var("HT_BENCH_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    for (name, engine) in [
        ("docker", container_common::docker()),
        ("podman", container_common::podman()),
    ] {
        match engine {
            Ok(e) => bench(e, n),
            Err(why) => println!("backend_container[{name}]: SKIPPED: {why}"),
        }
    }
}
