//! Background processes and the `process` tool, lifecycle (task cleanup,
//! runtime close), events, with real processes.

use crate::common::terminal::*;
use hermes_tools::Runtime;
use hermes_tools::dispatch::{CallContext, dispatch_sync};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

fn rt_with(extra: &str) -> Runtime {
    Runtime::new(&format!(
        r#"{{"builtin_toolsets":["terminal"],"approvals":{{"mode":"off"}}{extra}}}"#
    ))
    .expect("runtime")
}

/// Live `sleep` processes whose arguments contain `needle`.
fn sleeps(needle: &str) -> Vec<String> {
    pgrep(needle)
        .into_iter()
        .filter(|l| {
            l.split_once(": ")
                .is_some_and(|(_, c)| c.starts_with("sleep "))
        })
        .collect()
}

/// Zombie children of this test process that stay zombies (a child that
/// exits right now is a zombie for the moment before its reaper runs, so
/// only pids still zombies half a second later count).
fn zombies() -> Vec<String> {
    let scan = || {
        let me = std::process::id().to_string();
        let mut out = Vec::new();
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
                continue;
            };
            let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
                continue;
            };
            let f: Vec<&str> = rest.split_whitespace().collect();
            if f.len() > 2 && f[0] == "Z" && f[1] == me {
                out.push(stat.clone());
            }
        }
        out
    };
    let first = scan();
    if first.is_empty() {
        return first;
    }
    std::thread::sleep(Duration::from_millis(500));
    let second = scan();
    first.into_iter().filter(|z| second.contains(z)).collect()
}

/// Start a terminal call in the background for task "t"; its process id.
fn start_in_background(rt: &Runtime, args: Value) -> String {
    let v = tool_call(rt, "terminal", "t", args);
    v["session_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no session id: {v}"))
        .to_string()
}

/// Run `command` in the background and wait (bounded) for it to exit.
fn run_in_background_until_exit(rt: &Runtime, command: &str) -> Value {
    let id = start_in_background(rt, json!({"command": command, "background": true}));
    tool_call(
        rt,
        "process",
        "t",
        json!({"action": "wait", "session_id": id, "timeout": 10}),
    )
}

#[test]
fn background_start_poll_log_kill() {
    let rt = rt_with("");
    let v = tool_call(
        &rt,
        "terminal",
        "t",
        json!({"command": "for i in $(seq 1 50); do echo line $i; done; sleep 515.1", "background": true}),
    );
    let id = v["session_id"].as_str().expect("session id").to_string();
    assert!(id.starts_with("proc_"), "{v}");
    assert_eq!(v["exit_code"], 0);
    assert!(wait_for(
        || tool_call(
            &rt,
            "process",
            "t",
            json!({"action": "poll", "session_id": id})
        )["output_preview"]
            .as_str()
            .unwrap()
            .contains("line 50"),
        5
    ));
    let p = tool_call(
        &rt,
        "process",
        "t",
        json!({"action": "poll", "session_id": id}),
    );
    assert_eq!(p["status"], "running", "{p}");
    let l = tool_call(
        &rt,
        "process",
        "t",
        json!({"action": "log", "session_id": id, "limit": 5}),
    );
    assert_eq!(
        l["output"], "line 46\nline 47\nline 48\nline 49\nline 50",
        "{l}"
    );
    assert_eq!(l["total_lines"], 50);
    let l = tool_call(
        &rt,
        "process",
        "t",
        json!({"action": "log", "session_id": id, "offset": 10, "limit": 2}),
    );
    assert_eq!(l["output"], "line 11\nline 12", "{l}");
    let list = tool_call(&rt, "process", "t", json!({"action": "list"}));
    assert_eq!(list["processes"].as_array().unwrap().len(), 1);
    // other tasks do not see it
    let list = tool_call(&rt, "process", "other", json!({"action": "list"}));
    assert_eq!(list["processes"].as_array().unwrap().len(), 0);
    let nf = tool_call(
        &rt,
        "process",
        "other",
        json!({"action": "poll", "session_id": id}),
    );
    assert_eq!(nf["status"], "not_found");
    // wait is bounded
    let t0 = Instant::now();
    let w = tool_call(
        &rt,
        "process",
        "t",
        json!({"action": "wait", "session_id": id, "timeout": 1}),
    );
    assert_eq!(w["status"], "timeout", "{w}");
    assert!(t0.elapsed() < Duration::from_secs(3));
    // write needs a pty
    let wr = tool_call(
        &rt,
        "process",
        "t",
        json!({"action": "write", "session_id": id, "data": "x"}),
    );
    assert_eq!(wr["status"], "error");
    let k = tool_call(
        &rt,
        "process",
        "t",
        json!({"action": "kill", "session_id": id}),
    );
    assert_eq!(k["status"], "killed", "{k}");
    assert!(
        wait_for(|| pgrep("515.1").is_empty(), 3),
        "{:?}",
        pgrep("515.1")
    );
    let p = tool_call(
        &rt,
        "process",
        "t",
        json!({"action": "poll", "session_id": id}),
    );
    assert_eq!(p["status"], "exited");
    assert_eq!(p["completion_reason"], "killed");
    let k = tool_call(
        &rt,
        "process",
        "t",
        json!({"action": "kill", "session_id": id}),
    );
    assert_eq!(k["status"], "already_exited");
    assert!(zombies().is_empty(), "{:?}", zombies());
}

#[test]
fn wait_returns_exit_and_pty_input_works() {
    let rt = rt_with("");
    let w = run_in_background_until_exit(&rt, "echo start; exit 7");
    assert_eq!(w["status"], "exited", "{w}");
    assert_eq!(w["exit_code"], 7);
    assert_eq!(w["output"], "start");
    // a PTY process reads what we type
    let id = start_in_background(
        &rt,
        json!({"command": "read -r name; echo \"hello $name\"", "background": true, "pty": true}),
    );
    let s = tool_call(
        &rt,
        "process",
        "t",
        json!({"action": "submit", "session_id": id, "data": "world"}),
    );
    assert_eq!(s["status"], "ok", "{s}");
    let w = tool_call(
        &rt,
        "process",
        "t",
        json!({"action": "wait", "session_id": id, "timeout": 10}),
    );
    assert_eq!(w["exit_code"], 0, "{w}");
    assert!(w["output"].as_str().unwrap().contains("hello world"), "{w}");
    // the host can type too (Rust API behind ht_runtime_process_write)
    let id = start_in_background(
        &rt,
        json!({"command": "read -r a; echo \"got $a\"", "background": true, "pty": true}),
    );
    let term = rt.terminal().unwrap().clone();
    term.write_input(&id, b"typed\r").unwrap();
    let w = tool_call(
        &rt,
        "process",
        "t",
        json!({"action": "wait", "session_id": id, "timeout": 10}),
    );
    assert!(w["output"].as_str().unwrap().contains("got typed"), "{w}");
}

#[test]
fn task_cleanup_and_runtime_close_kill_everything() {
    let rt = rt_with("");
    tool_call(
        &rt,
        "terminal",
        "a",
        json!({"command": "sleep 616.1", "background": true}),
    );
    tool_call(
        &rt,
        "terminal",
        "a",
        json!({"command": "bash -c 'sleep 616.2 & sleep 616.3'", "background": true}),
    );
    tool_call(
        &rt,
        "terminal",
        "b",
        json!({"command": "sleep 616.4", "background": true, "pty": true}),
    );
    assert!(wait_for(
        || sleeps("616.3").len() == 1 && sleeps("616.4").len() == 1,
        5
    ));
    rt.cleanup_task("a");
    assert!(pgrep("616.1").is_empty() && pgrep("616.2").is_empty() && pgrep("616.3").is_empty());
    assert_eq!(sleeps("616.4").len(), 1, "task b untouched");
    // a foreground command still running when the runtime closes
    let shared = rt.core().clone();
    let fg = std::thread::spawn(move || {
        let ctx = CallContext {
            task_id: "c".into(),
            ..CallContext::default()
        };
        dispatch_sync(
            &shared,
            "terminal",
            r#"{"command":"sleep 616.5","timeout":60}"#,
            ctx,
        )
    });
    assert!(wait_for(|| sleeps("616.5").len() == 1, 5));
    let t0 = Instant::now();
    rt.close();
    let _ = fg.join().unwrap();
    assert!(t0.elapsed() < Duration::from_secs(10));
    assert!(pgrep("616.").is_empty(), "{:?}", pgrep("616."));
    assert!(zombies().is_empty(), "{:?}", zombies());
}

#[test]
fn process_cap_and_unknown_action() {
    let rt = rt_with(r#","terminal":{"max_processes":2}"#);
    let a = tool_call(
        &rt,
        "terminal",
        "t",
        json!({"command": "sleep 717.1", "background": true}),
    );
    let b = tool_call(
        &rt,
        "terminal",
        "t",
        json!({"command": "sleep 717.2", "background": true}),
    );
    assert!(a["session_id"].is_string() && b["session_id"].is_string());
    let c = tool_call(
        &rt,
        "terminal",
        "t",
        json!({"command": "sleep 717.3", "background": true}),
    );
    assert!(
        c["error"]
            .as_str()
            .unwrap()
            .contains("Too many background processes"),
        "{c}"
    );
    assert!(pgrep("717.3").is_empty());
    let u = tool_call(&rt, "process", "t", json!({"action": "list"}));
    assert_eq!(u["processes"].as_array().unwrap().len(), 2);
    let k = tool_call(
        &rt,
        "process",
        "t",
        json!({"action": "kill", "session_id": a["session_id"]}),
    );
    assert_eq!(k["status"], "killed");
    // a finished process makes room
    let c = tool_call(
        &rt,
        "terminal",
        "t",
        json!({"command": "sleep 717.3", "background": true}),
    );
    assert!(c["session_id"].is_string(), "{c}");
    let m = tool_call(&rt, "process", "t", json!({"action": "poll"}));
    assert!(
        m["error"]
            .as_str()
            .unwrap()
            .contains("session_id is required"),
        "{m}"
    );
    drop(rt);
    assert!(pgrep("717.").is_empty());
}

#[test]
fn background_script_that_leaves_a_server_stays_tracked() {
    let rt = rt_with("");
    let id = start_in_background(
        &rt,
        json!({"command": "bash -c 'sleep 919.1 &'; echo launched", "background": true}),
    );
    assert!(wait_for(|| sleeps("919.1").len() == 1, 5));
    std::thread::sleep(Duration::from_millis(600));
    // the launcher exited, its server still runs: the process is still running
    let p = tool_call(
        &rt,
        "process",
        "t",
        json!({"action": "poll", "session_id": id}),
    );
    assert_eq!(p["status"], "running", "{p}");
    assert_eq!(p["output_preview"], "launched");
    let k = tool_call(
        &rt,
        "process",
        "t",
        json!({"action": "kill", "session_id": id}),
    );
    assert_eq!(k["status"], "killed", "{k}");
    assert!(wait_for(|| sleeps("919.1").is_empty(), 3));
    // a launcher whose children all finish is reported as exited
    let w = run_in_background_until_exit(&rt, "bash -c 'sleep 0.3 &'; exit 4");
    assert_eq!(w["status"], "exited", "{w}");
    assert_eq!(w["exit_code"], 4);
    assert!(zombies().is_empty(), "{:?}", zombies());
}

#[test]
fn typing_a_dangerous_command_into_a_shell_is_blocked() {
    let rt = rt_with("");
    let id = start_in_background(
        &rt,
        json!({"command": "bash --norc -i", "background": true, "pty": true}),
    );
    let canary = std::env::temp_dir().join(format!("ht-typed-{}", std::process::id()));
    let b = tool_call(
        &rt,
        "process",
        "t",
        json!({"action": "submit", "session_id": id, "data": format!("rm -rf / ; touch {}", canary.display())}),
    );
    assert_eq!(b["status"], "blocked", "{b}");
    let ok = tool_call(
        &rt,
        "process",
        "t",
        json!({"action": "submit", "session_id": id, "data": "echo typed-ok; exit"}),
    );
    assert_eq!(ok["status"], "ok", "{ok}");
    let w = tool_call(
        &rt,
        "process",
        "t",
        json!({"action": "wait", "session_id": id, "timeout": 10}),
    );
    assert!(w["output"].as_str().unwrap().contains("typed-ok"), "{w}");
    assert!(!canary.exists());
}

/// Processes that leave the tree (a `setsid` child whose parent still runs,
/// a double-forked daemon of a background command) end with the command:
/// on a timeout, on kill, and when the runtime closes.
#[test]
fn setsid_and_double_forked_children_do_not_escape() {
    let rt = rt_with(r#","terminal":{"backend":"local"}"#);
    // Timeout of a foreground command whose child started its own session
    // (python forks and the child calls setsid; the parent keeps running).
    let script = "import os\nif os.fork() == 0:\n    os.setsid()\n    os.execvp('sleep', ['sleep', '617.1'])\nos.execvp('sleep', ['sleep', '617.2'])\n";
    std::fs::write(std::env::temp_dir().join("ht-setsid-617.py"), script).unwrap();
    let cmd = format!(
        "python3 {}",
        std::env::temp_dir().join("ht-setsid-617.py").display()
    );
    let v = tool_call(&rt, "terminal", "t", json!({"command": cmd, "timeout": 1}));
    assert_eq!(v["exit_code"], 124, "{v}");
    assert!(
        wait_for(
            || sleeps("617.1").is_empty() && sleeps("617.2").is_empty(),
            5
        ),
        "escaped the timeout: {:?}",
        pgrep("617.")
    );
    // A background command that double-forks a daemon and returns.
    let id = start_in_background(
        &rt,
        json!({"command": "(setsid sleep 617.3 &) ; (sleep 617.4 &) ; echo started", "background": true}),
    );
    assert!(wait_for(|| sleeps("617.3").len() == 1, 5));
    let v = tool_call(
        &rt,
        "process",
        "t",
        json!({"action": "kill", "session_id": id}),
    );
    assert!(
        wait_for(
            || sleeps("617.3").is_empty() && sleeps("617.4").is_empty(),
            5
        ),
        "escaped kill: {v} {:?}",
        pgrep("617.")
    );
    // And at close.
    start_in_background(
        &rt,
        json!({"command": "(setsid sleep 617.5 &) ; echo started", "background": true}),
    );
    assert!(wait_for(|| sleeps("617.5").len() == 1, 5));
    rt.close();
    assert!(
        wait_for(|| sleeps("617.5").is_empty(), 5),
        "escaped close: {:?}",
        pgrep("617.")
    );
}
