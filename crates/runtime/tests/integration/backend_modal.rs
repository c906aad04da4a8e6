//! The terminal, process and file tools on the modal backend, against the
//! contract server of crates/exec/tests/modal_server/ (Modal's API by its
//! published proto, sandboxes as local folders, commands as bash
//! processes): output and exit codes, cwd and variables kept between
//! calls, a timeout, a background process, the file tools, cleanup
//! terminating the task's sandbox, and the API round trips of one
//! `terminal` call counted.

use crate::common;
use crate::modal_server::{Server, TOKEN_ID, TOKEN_SECRET};

use hermes_runtime::Runtime;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

fn runtime(srv: &Server, toolsets: &[&str]) -> (Runtime, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let cfg = json!({
        "builtin_toolsets": toolsets,
        "terminal": {
            "backend": "modal",
            "kill_grace": 0.5,
            "modal": {
                "api_url": srv.url(),
                "token_id": TOKEN_ID,
                "token_secret": TOKEN_SECRET,
                "image": "python:3.12-slim",
                "cpu": 1,
                "memory_mb": 1024,
            },
        },
        "data_dir": dir.path().join("data"),
        "approvals": {"mode": "off"},
    });
    (Runtime::new(&cfg.to_string()).expect("runtime"), dir)
}

fn sh(rt: &Runtime, task: &str, args: Value) -> Value {
    common::call(rt, "terminal", task, args)
}

#[test]
fn terminal_on_modal_keeps_state_and_counts_round_trips() {
    let srv = Server::start();
    let (rt, dir) = runtime(&srv, &["terminal", "file"]);
    let v = sh(&rt, "t", json!({"command": "echo hello from modal"}));
    assert_eq!(v["exit_code"], 0, "{v}");
    assert!(
        v["output"].as_str().unwrap().contains("hello from modal"),
        "{v}"
    );

    // cwd and exported variables persist between calls
    let work = dir.path().join("w");
    std::fs::create_dir_all(&work).unwrap();
    let v = sh(
        &rt,
        "t",
        json!({"command": format!("cd {} && export HT_MODAL_VAR=kept", work.display())}),
    );
    assert_eq!(v["exit_code"], 0, "{v}");
    let v = sh(
        &rt,
        "t",
        json!({"command": "pwd; echo $HT_MODAL_VAR; exit 3"}),
    );
    assert_eq!(v["exit_code"], 3, "{v}");
    let out = v["output"].as_str().unwrap();
    assert!(
        out.contains(&work.display().to_string()) && out.contains("kept"),
        "{v}"
    );

    // the API round trips of one terminal call (the command plus the
    // terminal's own state capture), counted by the server
    let calls = |m: &str| srv.calls(m);
    let before: Vec<u64> = [
        "ContainerExec",
        "ContainerExecGetOutput",
        "ContainerExecPutInput",
    ]
    .iter()
    .map(|m| calls(m))
    .collect();
    let total_before: u64 = srv.state.lock().unwrap().calls.values().sum();
    let v = sh(&rt, "t", json!({"command": "echo hi"}));
    assert_eq!(v["exit_code"], 0, "{v}");
    let after: Vec<u64> = [
        "ContainerExec",
        "ContainerExecGetOutput",
        "ContainerExecPutInput",
    ]
    .iter()
    .map(|m| calls(m))
    .collect();
    let total: u64 = srv.state.lock().unwrap().calls.values().sum::<u64>() - total_before;
    println!(
        "modal: one `terminal` call (echo hi) = {total} API calls: {} ContainerExec, {} ContainerExecGetOutput, {} ContainerExecPutInput",
        after[0] - before[0],
        after[1] - before[1],
        after[2] - before[2]
    );

    // a timeout
    let t0 = Instant::now();
    let v = sh(
        &rt,
        "t",
        json!({"command": "echo start; sleep 30", "timeout": 1}),
    );
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
    assert_ne!(v["exit_code"], 0, "{v}");
    assert!(v["output"].as_str().unwrap().contains("start"), "{v}");

    // a background process, then waited for
    let v = sh(
        &rt,
        "t",
        json!({"command": "sleep 0.3; echo finished; exit 7", "background": true}),
    );
    let id = v["session_id"].as_str().expect("session id").to_string();
    let w = common::call(
        &rt,
        "process",
        "t",
        json!({"action": "wait", "session_id": id, "timeout": 20}),
    );
    assert_eq!(w["exit_code"], 7, "{w}");
    assert!(
        w["output"].as_str().unwrap_or("").contains("finished"),
        "{w}"
    );

    // the file tools in the task's sandbox
    let f = work.join("notes.txt");
    let v = common::call(
        &rt,
        "write_file",
        "t",
        json!({"path": f, "content": "line one\nline two\n"}),
    );
    assert!(v["error"].is_null(), "{v}");
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "line one\nline two\n");
    let v = common::call(&rt, "read_file", "t", json!({"path": f}));
    assert!(
        v["content"].as_str().unwrap_or("").contains("line two"),
        "{v}"
    );

    // cleanup terminates the task's sandbox
    let alive = srv.alive();
    assert!(alive >= 1);
    rt.cleanup_task("t");
    assert!(srv.alive() < alive, "{} sandboxes still alive", srv.alive());
    rt.close();
    assert_eq!(srv.alive(), 0);
    assert_eq!(srv.state.lock().unwrap().bad_auth, 0);
}

#[test]
fn modal_without_a_token_is_refused_naming_the_variables() {
    let cfg = json!({
        "builtin_toolsets": ["terminal"],
        "terminal": {"backend": "modal", "modal": {"api_url": "http://127.0.0.1:9", "token_id": "", "token_secret": ""}},
    });
    let e = Runtime::new(&cfg.to_string())
        .err()
        .expect("refused")
        .to_string();
    assert!(
        e.contains("MODAL_TOKEN_ID") && e.contains("MODAL_TOKEN_SECRET"),
        "{e}"
    );
    let cfg = json!({"terminal": {"backend": "modal", "modal": {"colour": 1}}});
    assert!(Runtime::new(&cfg.to_string()).is_err());
}
