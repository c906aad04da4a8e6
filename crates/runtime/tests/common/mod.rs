//! Helpers for the built-in tool tests: a runtime over temporary folders,
//! and a dispatch that parses the result.

#![allow(dead_code)]

use hermes_core::dispatch::CallContext;
use hermes_runtime::Runtime;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

pub struct Env {
    pub dir: tempfile::TempDir,
    pub rt: Runtime,
}

impl Env {
    pub fn root(&self) -> PathBuf {
        self.dir.path().join("work")
    }
    pub fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root().join(rel)
    }
    pub fn call(&self, tool: &str, args: Value) -> Value {
        call(&self.rt, tool, "t", args)
    }
}

/// A runtime with `toolsets`, cwd and data folders in a fresh temp dir;
/// `extra` is merged into the config.
pub fn env(toolsets: &[&str], extra: Value) -> Env {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("work");
    std::fs::create_dir_all(&root).unwrap();
    let data = dir.path().join("data");
    let mut cfg = json!({
        "builtin_toolsets": toolsets,
        "terminal": {"backend": "local", "cwd": root},
        "data_dir": data,
        "approvals": {"non_interactive": "deny"},
    });
    if let (Value::Object(c), Value::Object(x)) = (&mut cfg, extra) {
        for (k, v) in x {
            c.insert(k, v);
        }
    }
    let rt = Runtime::new(&cfg.to_string()).expect("runtime");
    Env { dir, rt }
}

pub fn call(rt: &Runtime, tool: &str, task: &str, args: Value) -> Value {
    let ctx = CallContext {
        task_id: task.to_string(),
        ..CallContext::default()
    };
    let text = rt.dispatch(tool, &args.to_string(), ctx).expect("dispatch");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

pub fn write(p: &Path, text: &str) {
    if let Some(d) = p.parent() {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(p, text).unwrap();
}

pub fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

/// Run `cmd` in task `task` on a thread of its own; join for the result.
pub fn sh_in_thread(
    rt: &std::sync::Arc<Runtime>,
    task: &str,
    cmd: &str,
) -> std::thread::JoinHandle<String> {
    let (rt, task, cmd) = (rt.clone(), task.to_string(), cmd.to_string());
    std::thread::spawn(move || {
        let ctx = CallContext {
            task_id: task,
            ..CallContext::default()
        };
        rt.dispatch("terminal", &json!({"command": cmd}).to_string(), ctx)
            .unwrap()
    })
}
