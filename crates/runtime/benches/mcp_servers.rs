//! Many servers: 10 stdio servers (tests/fixtures/many-tools.cjs, npm SDK)
//! of 100 tools each. Measures the runtime's start (every server connected
//! and listed), then definitions of all 1 000 MCP tools and of one server's
//! toolset, right after a registry change and from cache, against issue 2's
//! targets (1 000 tools after a change: at least 10x faster than the
//! original's ~0.6 ms, i.e. <= 60 us; from cache: under 5 us).
//! `cargo bench -p hermes-runtime --bench mcp_servers`
//! (HT_BENCH_SERVERS, default 10; HT_BENCH_TOOLS, default 100; HT_BENCH_N, default 200).

use hermes_core::dispatch::CallContext;
use hermes_core::{Tool, ToolCall, ToolOutput};
use hermes_runtime::Runtime;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn env(k: &str, d: usize) -> usize {
    std::env::var(k)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(d)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

struct Nop;
impl Tool for Nop {
    fn call(&self, call: ToolCall<'_>) {
        call.reply.send(ToolOutput::ok("{}"));
    }
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let modules = root.join("../../build/tools/node_modules");
    if !modules.join("@modelcontextprotocol/sdk").is_dir() {
        eprintln!(
            "servers: @modelcontextprotocol/sdk missing in build/tools: run scripts/setup.sh"
        );
        return;
    }
    let modules = modules.canonicalize().unwrap();
    let js = root.join("tests/fixtures/many-tools.cjs");
    let servers = env("HT_BENCH_SERVERS", 10);
    let tools = env("HT_BENCH_TOOLS", 100);
    let n = env("HT_BENCH_N", 200);
    let mut map = serde_json::Map::new();
    for i in 0..servers {
        map.insert(
            format!("s{i}"),
            serde_json::json!({"command": "node", "args": [js],
                "env": {"NODE_PATH": modules, "HT_TOOLS": tools.to_string()}}),
        );
    }
    let cfg = serde_json::json!({ "mcp_servers": map }).to_string();

    let t = Instant::now();
    let rt = Runtime::new(&cfg).expect("runtime");
    let start = t.elapsed();
    let defs: serde_json::Value = serde_json::from_str(&rt.definitions("").unwrap()).unwrap();
    let count = defs.as_array().unwrap().len();
    assert_eq!(count, servers * tools, "every server's tools registered");

    // Sanity: a call reaches a server.
    let out = rt
        .dispatch("mcp__s3__t042", r#"{"path":"/x"}"#, CallContext::default())
        .unwrap();
    assert!(out.contains("t042"), "{out}");

    let spec = |i: usize| {
        format!(
            r#"{{"name":"bench_nop_{i}","toolset":"bench","schema":{{"description":"x","parameters":{{"type":"object","properties":{{}}}}}}}}"#
        )
    };
    let filtered = r#"{"enabled_toolsets":["mcp-s3"]}"#;
    let mut rows = Vec::new();
    for (label, query) in [("all tools", ""), ("one server (mcp-s3)", filtered)] {
        let mut changed = Vec::with_capacity(n);
        let mut cached = Vec::with_capacity(n);
        let mut size = 0;
        for i in 0..n {
            // A registry change, then the definitions twice.
            rt.register_tool(&spec(i), Arc::new(Nop), None).unwrap();
            let t = Instant::now();
            let d = rt.definitions(query).unwrap();
            changed.push(t.elapsed());
            size = d.len();
            let t = Instant::now();
            let d2 = rt.definitions(query).unwrap();
            cached.push(t.elapsed());
            drop((d, d2));
            rt.deregister_tool(&format!("bench_nop_{i}")).unwrap();
        }
        rows.push((label, median(changed), median(cached), size));
    }
    rt.close();

    println!(
        "{servers} servers x {tools} tools: start (all connected and listed) {:.0} ms",
        start.as_secs_f64() * 1e3
    );
    println!("| definitions | after a change | from cache | bytes |");
    println!("|---|---|---|---|");
    for (label, changed, cached, size) in rows {
        println!(
            "| {label} | {:.1} us | {:.2} us | {size} |",
            us(changed),
            us(cached)
        );
    }
}
