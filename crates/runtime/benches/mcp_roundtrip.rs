//! `tools/call` round trip to server-everything's `echo` over stdio: through
//! the runtime's dispatch (sync, and async with a completion) against a bare
//! rmcp client calling the same server. Issue 13's target: dispatch costs at
//! most 1.2x the bare call.
//! `cargo bench -p hermes-runtime --bench mcp_roundtrip` (HT_BENCH_N calls, default 500).

use hermes_core::dispatch::CallContext;
use hermes_runtime::Runtime;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn main() {
    let js = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(
        "../../build/tools/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    );
    if !js.is_file() {
        eprintln!("roundtrip: {} missing: run scripts/setup.sh", js.display());
        return;
    }
    let n: usize = std::env::var("HT_BENCH_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(500);
    let args = r#"{"message":"hi"}"#;

    // Bare rmcp client on its own runtime.
    let tokio_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let bare: Vec<Duration> = tokio_rt.block_on(async {
        let mut cmd = tokio::process::Command::new("node");
        cmd.arg(&js)
            .arg("stdio")
            .stderr(std::process::Stdio::null());
        let client = ().serve(rmcp::transport::TokioChildProcess::new(cmd).unwrap()).await.unwrap();
        let mut times = Vec::with_capacity(n);
        let a: serde_json::Map<String, serde_json::Value> = serde_json::from_str(args).unwrap();
        for _ in 0..n / 10 {
            client
                .call_tool(CallToolRequestParams::new("echo").with_arguments(a.clone()))
                .await
                .unwrap();
        }
        for _ in 0..n {
            let t = Instant::now();
            client
                .call_tool(CallToolRequestParams::new("echo").with_arguments(a.clone()))
                .await
                .unwrap();
            times.push(t.elapsed());
        }
        let _ = client.cancel().await;
        times
    });

    let cfg = serde_json::json!({"mcp_servers": {"everything": {"command": "node", "args": [js, "stdio"]}}})
        .to_string();
    let rt = Runtime::new(&cfg).expect("runtime");
    let call = || {
        let out = rt
            .dispatch("mcp__everything__echo", args, CallContext::default())
            .unwrap();
        assert!(out.contains("Echo: hi"), "{out}");
    };
    for _ in 0..n / 10 {
        call();
    }
    let sync: Vec<Duration> = (0..n)
        .map(|_| {
            let t = Instant::now();
            call();
            t.elapsed()
        })
        .collect();
    let asynch: Vec<Duration> = (0..n)
        .map(|_| {
            let (tx, rx) = std::sync::mpsc::channel();
            let t = Instant::now();
            rt.dispatch_async(
                "mcp__everything__echo",
                args,
                CallContext::default(),
                Box::new(move |c| {
                    let _ = tx.send(c.text);
                }),
            )
            .unwrap();
            rx.recv().unwrap();
            t.elapsed()
        })
        .collect();
    let (b, s, a) = (median(bare), median(sync), median(asynch));
    println!("tools/call echo over stdio, median of {n}:");
    println!("  bare rmcp client      {:8.1} us", us(b));
    println!(
        "  ht dispatch (sync)    {:8.1} us  {:.2}x",
        us(s),
        s.as_secs_f64() / b.as_secs_f64()
    );
    println!(
        "  ht dispatch (async)   {:8.1} us  {:.2}x",
        us(a),
        a.as_secs_f64() / b.as_secs_f64()
    );
}
