//! execute_code figures (issue 31), local backend:
//! - one inner `read_file` round trip from the Python stub (script-side
//!   `time.perf_counter` around the call) against the same call made
//!   directly through dispatch (goal: within 3x);
//! - the startup of a run (`execute_code` with `pass`, wall time of the
//!   dispatch) against starting the interpreter alone (`python3 -c pass`
//!   spawned directly) (goal: within 1.5x);
//! - the issue's script (read 20 files, grep them, patch one), a task
//!   per run;
//! - with `HT_ORIGINAL_PYTHON` (a Python with hermes-agent 0.19.0, `make
//!   bench`), the original's execute_code on the same three in the same run
//!   (benches/reference/hermes_code.py; goal: ours faster).
//!
//! `cargo bench -p hermes-runtime --bench code_execution` (HT_BENCH_N
//! calls, default 2000; HT_BENCH_BACKEND=sandbox for the sandbox).

use hermes_core::dispatch::CallContext;
use hermes_runtime::Runtime;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn ctx() -> CallContext {
    CallContext {
        task_id: "bench".into(),
        ..CallContext::default()
    }
}

fn main() {
    let n: usize = std::env::var("HT_BENCH_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    let backend = std::env::var("HT_BENCH_BACKEND").unwrap_or_else(|_| "local".into());
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("work");
    std::fs::create_dir_all(&root).unwrap();
    // 100 lines: each call reads another line, so the read guards (an
    // unchanged re-read gets a stub) never answer instead of the tool.
    let text: String = (0..100)
        .map(|i| format!("line {i} of the file\n"))
        .collect();
    std::fs::write(root.join("a.txt"), text).unwrap();
    for i in 0..20 {
        std::fs::write(
            root.join(format!("f{i:02}.txt")),
            format!("alpha\nfile {i}\nomega\n"),
        )
        .unwrap();
    }
    // The interpreter both starts use: `python3` on this PATH (a
    // version manager's shim can cost more than the interpreter itself;
    // HT_BENCH_PATH=/usr/bin:/bin measures the interpreter alone).
    let path = std::env::var("HT_BENCH_PATH")
        .unwrap_or_else(|_| std::env::var("PATH").unwrap_or_default());
    let cfg = json!({
        "builtin_toolsets": ["terminal", "file", "code_execution"],
        "terminal": {"backend": backend, "cwd": root, "env": {"PATH": path}},
        "data_dir": dir.path().join("data"),
        "code_execution": {"max_tool_calls": 2 * n + 10, "languages": ["python"]},
    });
    let rt = Runtime::new(&cfg.to_string()).unwrap();

    // Direct: the same read_file calls through dispatch.
    // (A task of its own: the read guards count per task.)
    let direct_ctx = || CallContext {
        task_id: "direct".into(),
        ..CallContext::default()
    };
    let args = |i: usize| json!({"path": "a.txt", "offset": 1 + i, "limit": 1}).to_string();
    for i in 0..n / 10 {
        rt.dispatch("read_file", &args(i), direct_ctx()).unwrap();
    }
    let mut direct = Vec::with_capacity(n);
    for i in n / 10..n + n / 10 {
        let a = args(i);
        let t = Instant::now();
        let out = rt.dispatch("read_file", &a, direct_ctx()).unwrap();
        direct.push(t.elapsed());
        assert!(out.contains("line"), "{out}");
    }
    let direct = median(direct);

    // From the Python stub: the script times each call itself.
    let code = format!(
        r#"
import time
from hermes_tools import read_file
for i in range({warm}):
    read_file("a.txt", offset=1 + i, limit=1)
ts = []
for i in range({warm}, {warm} + {n}):
    t = time.perf_counter()
    r = read_file("a.txt", offset=1 + i, limit=1)
    ts.append(time.perf_counter() - t)
    assert "content" in r, r
ts.sort()
ps = []
import hermes_tools as h
for i in range({n}):
    t = time.perf_counter()
    h._rpc("ping", {{}})
    ps.append(time.perf_counter() - t)
ps.sort()
print(ts[len(ts) // 2], ps[len(ps) // 2])
"#,
        warm = n / 10,
        n = n,
    );
    let out = rt
        .dispatch("execute_code", &json!({ "code": code }).to_string(), ctx())
        .unwrap();
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["status"], "success", "{v}");
    let figures: Vec<f64> = v["output"]
        .as_str()
        .unwrap()
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    let (stub, ping) = (
        Duration::from_secs_f64(figures[0]),
        Duration::from_secs_f64(figures[1]),
    );

    // Startup: a run that does nothing, against the interpreter alone.
    let runs = 30;
    let mut bare = Vec::new();
    let mut run = Vec::new();
    let mut term = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let out = rt
            .dispatch("terminal", r#"{"command":"exec python3 -c pass"}"#, ctx())
            .unwrap();
        term.push(t.elapsed());
        assert!(
            out.contains("\"exit_code\": 0") || out.contains("\"exit_code\":0"),
            "{out}"
        );
        let t = Instant::now();
        let ok = std::process::Command::new("bash")
            .args(["-c", "exec python3 -c pass"])
            .env("PATH", &path)
            .current_dir(&root)
            .status()
            .unwrap()
            .success();
        bare.push(t.elapsed());
        assert!(ok);
        let t = Instant::now();
        let out = rt
            .dispatch("execute_code", r#"{"code":"pass"}"#, ctx())
            .unwrap();
        run.push(t.elapsed());
        assert!(out.contains("\"success\""), "{out}");
    }
    let (bare, run, term) = (median(bare), median(run), median(term));

    // The issue's script, a task per run (the read guards count per task).
    let script = r#"
import json
from hermes_tools import read_file, search_files, patch
lines = 0
for i in range(20):
    r = read_file(f"f{i:02d}.txt")
    lines += r["total_lines"]
hits = search_files("needle", path=".", file_glob="*.txt")
path = hits["matches"][0]["path"]
p = patch(path, "needle = 1", "needle = 2")
print(json.dumps({"lines": lines, "patched": not p.get("error")}))
"#;
    let mut whole = Vec::new();
    for r in 0..runs {
        std::fs::write(root.join("f13.txt"), "alpha\nneedle = 1\nomega\n").unwrap();
        let c = CallContext {
            task_id: format!("script{r}"),
            ..CallContext::default()
        };
        let t = Instant::now();
        let out = rt
            .dispatch("execute_code", &json!({ "code": script }).to_string(), c)
            .unwrap();
        whole.push(t.elapsed());
        assert!(out.contains(r#"\"patched\": true"#), "{out}");
    }
    let whole = median(whole);
    println!("execute_code ({backend} backend), medians:");
    println!(
        "  read_file round trip: from the Python stub {:.1} us, through dispatch {:.1} us: {:.2}x (goal <= 3x)",
        stub.as_secs_f64() * 1e6,
        direct.as_secs_f64() * 1e6,
        stub.as_secs_f64() / direct.as_secs_f64()
    );
    println!(
        "  the channel alone (an MCP ping from the Python stub): {:.1} us",
        ping.as_secs_f64() * 1e6
    );
    println!(
        "  startup: execute_code 'pass' {:.1} ms, bash -c 'exec python3 -c pass' {:.1} ms: {:.2}x (goal <= 1.5x)",
        ms(run),
        ms(bare),
        run.as_secs_f64() / bare.as_secs_f64()
    );
    println!(
        "  the same interpreter start as a terminal command through dispatch: {:.1} ms",
        ms(term)
    );
    println!(
        "  the issue's script (read 20 files, grep, patch one): {:.1} ms",
        ms(whole)
    );
    rt.close();
    if let Ok(py) = std::env::var("HT_ORIGINAL_PYTHON") {
        let reference = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../benches/reference/hermes_code.py"
        );
        let out = std::process::Command::new(py)
            .args([reference, &root.display().to_string(), &runs.to_string()])
            .output()
            .expect("run the original");
        let text = String::from_utf8_lossy(&out.stdout);
        print!("{text}");
        if !out.status.success() {
            eprintln!("{}", String::from_utf8_lossy(&out.stderr));
        }
        let orig: Value = text
            .lines()
            .find_map(|l| l.strip_prefix("JSON "))
            .and_then(|j| serde_json::from_str(j).ok())
            .unwrap_or(Value::Null);
        if let (Some(su), Some(rd), Some(sc)) = (
            orig["startup_ms"].as_f64(),
            orig["read_us"].as_f64(),
            orig["script_ms"].as_f64(),
        ) {
            println!(
                "  against the original (goal: faster): startup {:.2}x, read_file round trip {:.3}x, the script {:.3}x (ours / original)",
                ms(run) / su,
                stub.as_secs_f64() * 1e6 / rd,
                ms(whole) / sc
            );
        }
    }
}
