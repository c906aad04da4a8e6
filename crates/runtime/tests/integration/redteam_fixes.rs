//! Regressions from the red team of 2026-11-28 that need a whole runtime:
//! one task's command reading another task's captured environment through
//! the shared state folder (sandbox backend), and `search_files` showing
//! secret values that `read_file` masks.

use hermes_core::dispatch::CallContext;
use hermes_runtime::Runtime;
use serde_json::{Value, json};

fn ctx(task: &str) -> CallContext {
    CallContext {
        task_id: task.into(),
        ..CallContext::default()
    }
}

fn call(rt: &Runtime, tool: &str, task: &str, args: Value) -> Value {
    let text = rt.dispatch(tool, &args.to_string(), ctx(task)).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// The state folder was bound writable into every sandboxed command: a
/// session's background loop read another session's `export -p` capture
/// and appended `BASH_ENV=...` to it (code in the other session's next
/// command). Now a command sees its own capture folder only.
#[test]
fn a_sandboxed_command_sees_no_other_tasks_state() {
    if let Err(why) = hermes_exec::sandbox::usable_or_required() {
        eprintln!("skipped: the sandbox does not work here: {why}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rt = Runtime::new(
        &json!({
            "builtin_toolsets": ["terminal"],
            "terminal": {"backend": "sandbox", "cwd": dir.path()},
            "approvals": {"mode": "off"},
        })
        .to_string(),
    )
    .unwrap();
    // The runtime's state folder on this machine, and a stand-in for
    // another task's capture in it.
    let state = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&format!("hermes-tools-{}-", std::process::id()))
        })
        .collect::<Vec<_>>();
    assert!(!state.is_empty(), "no state folder");
    for s in &state {
        std::fs::write(
            s.join("task-9.other.new"),
            "declare -x OTHER_SECRET=\"s3cr3t\"\n",
        )
        .unwrap();
    }
    // `cd` makes this a capturing command (its folder is bound).
    let v = call(
        &rt,
        "terminal",
        "a",
        json!({"command": "cd . && cat /tmp/hermes-tools-*/task-*.new /tmp/hermes-tools-*/*/task-*.new 2>&1; ls /tmp/hermes-tools-*/ 2>&1; echo END"}),
    );
    let out = v["output"].as_str().unwrap();
    assert!(out.contains("END"), "{v}");
    assert!(!out.contains("s3cr3t"), "{out}");
    assert!(!out.contains("task-9"), "{out}");
    // The state still works: the directory and variables carry over.
    call(
        &rt,
        "terminal",
        "a",
        json!({"command": "export MINE=1 && mkdir -p sub && cd sub"}),
    );
    let v = call(&rt, "terminal", "a", json!({"command": "echo $MINE; pwd"}));
    let out = v["output"].as_str().unwrap();
    assert!(
        out.starts_with("1\n") && out.trim_end().ends_with("/sub"),
        "{v}"
    );
    rt.close();
}

/// `read_file` masked secret-shaped text; `search_files` returned it.
#[test]
fn search_results_mask_secrets_as_read_file_does() {
    let dir = tempfile::tempdir().unwrap();
    let token = format!("ghp_{}", "Ab1".repeat(12));
    std::fs::write(dir.path().join("conf.txt"), format!("token = {token}\n")).unwrap();
    let rt = Runtime::new(
        &json!({
            "builtin_toolsets": ["file"],
            "terminal": {"backend": "local", "cwd": dir.path()},
        })
        .to_string(),
    )
    .unwrap();
    let r = call(&rt, "read_file", "t", json!({"path": "conf.txt"}));
    assert!(!r.to_string().contains(&token), "{r}");
    let s = call(
        &rt,
        "search_files",
        "t",
        json!({"pattern": "token", "path": "."}),
    );
    assert!(s.to_string().contains("conf.txt"), "{s}");
    assert!(!s.to_string().contains(&token), "{s}");
    rt.close();
}
