//! Finding the npm MCP servers the tests run (installed by scripts/setup.sh
//! into build/tools, or where HT_MCP_SERVERS names a node_modules folder).

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use hermes_core::dispatch::CallContext;
use hermes_runtime::Runtime;
use hermes_runtime::config::Config;

/// The node_modules folder holding the servers: `HT_MCP_SERVERS`, or
/// build/tools/node_modules (where scripts/setup.sh installs them).
pub fn modules_dir() -> PathBuf {
    std::env::var_os("HT_MCP_SERVERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../build/tools/node_modules")
        })
}

/// `dist/index.js` of `@modelcontextprotocol/<pkg>`, or `None` (the test
/// then skips with a message) — except in CI (env `CI` set), where a missing
/// server fails the test: CI runs scripts/setup.sh, which installs them.
pub fn server_js(pkg: &str) -> Option<PathBuf> {
    let js = modules_dir()
        .join("@modelcontextprotocol")
        .join(pkg)
        .join("dist/index.js");
    let node = std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if js.is_file() && node {
        return Some(js);
    }
    let why = format!(
        "MCP test server {} missing (or no node): run scripts/setup.sh (npm install --prefix build/tools @modelcontextprotocol/{pkg}) or set HT_MCP_SERVERS to a node_modules folder",
        js.display()
    );
    if std::env::var_os("CI").is_some() {
        panic!("{why}");
    }
    eprintln!("skipped: {why}");
    None
}

pub fn everything_config(js: &std::path::Path, extra: &str) -> String {
    format!(
        r#"{{"mcp_servers": {{"everything": {{"command": "node", "args": [{}, "stdio"], "timeout": 20, "connect_timeout": 30{extra}}}}}}}"#,
        serde_json::to_string(&js.to_string_lossy()).unwrap()
    )
}

pub fn dispatch(rt: &Runtime, name: &str, args: &str) -> serde_json::Value {
    let out = rt
        .dispatch(name, args, CallContext::default())
        .expect("dispatch");
    serde_json::from_str(&out).unwrap_or(serde_json::Value::String(out))
}

/// Dispatch asynchronously; the receiver gets `(cancelled, text)`.
pub fn dispatch_async(
    rt: &Runtime,
    name: &str,
    args: &str,
) -> (u64, mpsc::Receiver<(bool, String)>) {
    let (tx, rx) = mpsc::channel();
    let id = rt
        .dispatch_async(
            name,
            args,
            CallContext::default(),
            Box::new(move |c| {
                let _ = tx.send((c.cancelled, c.text));
            }),
        )
        .expect("dispatch_async");
    (id, rx)
}

pub fn def_names(rt: &Runtime) -> Vec<String> {
    let defs: serde_json::Value =
        serde_json::from_str(&rt.definitions("{}").expect("definitions")).unwrap();
    defs.as_array()
        .unwrap()
        .iter()
        .map(|d| d["function"]["name"].as_str().unwrap_or("").to_string())
        .collect()
}

pub fn status(rt: &Runtime) -> serde_json::Value {
    serde_json::from_str(&rt.mcp_status()).unwrap()
}

pub fn pid_alive(pid: i64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        !s.rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

pub fn wait_until(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let until = std::time::Instant::now() + limit;
    while std::time::Instant::now() < until {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    f()
}

pub fn parse_ok(text: &str) {
    Config::parse(text).expect("config parses");
}

/// Collects the runtime's events (JSON) for a test.
#[derive(Default)]
pub struct Events(pub std::sync::Mutex<Vec<serde_json::Value>>);

impl hermes_runtime::EventSink for Events {
    fn event(&self, json: &str) {
        self.0
            .lock()
            .unwrap()
            .push(serde_json::from_str(json).unwrap());
    }
}

impl Events {
    pub fn install(rt: &Runtime) -> std::sync::Arc<Events> {
        let e = std::sync::Arc::new(Events::default());
        rt.set_event_sink(Some(e.clone())).unwrap();
        e
    }
    pub fn of_type(&self, kind: &str) -> Vec<serde_json::Value> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|e| e["type"] == kind)
            .cloned()
            .collect()
    }
}
