//! Helpers for the terminal tests: run a tool call through dispatch, look for
//! processes in /proc, wait for a condition.

use hermes_tools::Runtime;
use hermes_tools::dispatch::CallContext;
use serde_json::Value;
use std::time::{Duration, Instant};

/// Dispatch `tool` with `args` for task `task` and parse the JSON result.
pub fn tool_call(rt: &Runtime, tool: &str, task: &str, args: Value) -> Value {
    let ctx = CallContext {
        task_id: task.to_string(),
        ..CallContext::default()
    };
    let text = rt.dispatch(tool, &args.to_string(), ctx).expect("dispatch");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// Live processes whose command line contains `needle`, as "pid: cmdline".
pub fn pgrep(needle: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|s| s.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let Ok(cmd) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        if cmd.contains(needle) {
            out.push(format!("{pid}: {cmd}"));
        }
    }
    out
}

/// Poll `f` until it holds or `secs` pass; returns its last answer.
pub fn wait_for(mut f: impl FnMut() -> bool, secs: u64) -> bool {
    let until = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < until {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    f()
}
