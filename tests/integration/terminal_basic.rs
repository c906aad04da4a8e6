//! The terminal tool with real processes: results, per-task state, guards,
//! approval, timeouts, stdin, grandchildren, PTY.

use crate::common::terminal::*;
use hermes_tools::Runtime;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

fn rt() -> Runtime {
    Runtime::new(r#"{"builtin_toolsets":["terminal"],"terminal":{"backend":"local"}}"#)
        .expect("runtime")
}

/// Approvals off: ask-tier commands (`bash -c ...`) run; block-tier never do.
fn rt_open() -> Runtime {
    Runtime::new(r#"{"builtin_toolsets":["terminal"],"terminal":{"backend":"local"},"approvals":{"mode":"off"}}"#)
        .expect("runtime")
}

fn run(rt: &Runtime, task: &str, args: Value) -> Value {
    tool_call(rt, "terminal", task, args)
}

fn sh(rt: &Runtime, task: &str, cmd: &str) -> Value {
    run(rt, task, json!({"command": cmd}))
}

#[test]
fn echo_and_result_shape() {
    let rt = rt();
    let v = sh(&rt, "t", "echo hi");
    assert_eq!(v["output"], "hi", "{v}");
    assert_eq!(v["exit_code"], 0);
    assert!(v["error"].is_null());
    let v = sh(&rt, "t", "echo out; echo err >&2; exit 3");
    assert_eq!(v["output"], "out\nerr", "{v}");
    assert_eq!(v["exit_code"], 3);
    let v = sh(&rt, "t", "printf 'a\\nb\\n' | grep zzz");
    assert_eq!(v["exit_code"], 1);
    assert_eq!(v["exit_code_meaning"], "No matches found (not an error)");
    let v = sh(&rt, "t", "printf '\\033[31mred\\033[0m\\n'");
    assert_eq!(v["output"], "red");
    let v = sh(
        &rt,
        "t",
        "echo OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwxyz123456",
    );
    assert!(
        !v["output"].as_str().unwrap().contains("abcdefghijklmnop"),
        "{v}"
    );
}

#[test]
fn cwd_and_env_persist_per_task() {
    let rt = rt();
    let dir = std::env::temp_dir().join(format!("ht-term-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.display().to_string();
    let v = sh(
        &rt,
        "a",
        &format!("cd {d} && export HT_FOO=bar && HT_LOCAL=1"),
    );
    assert_eq!(v["exit_code"], 0, "{v}");
    let v = sh(&rt, "a", "pwd; echo \"foo=$HT_FOO\"");
    let real = std::fs::canonicalize(&dir).unwrap().display().to_string();
    assert_eq!(v["output"], format!("{real}\nfoo=bar"), "{v}");
    // unset persists too
    sh(&rt, "a", "unset HT_FOO");
    let v = sh(&rt, "a", "echo \"foo=${HT_FOO-unset}\"");
    assert_eq!(v["output"], "foo=unset", "{v}");
    // another task is isolated
    let v = sh(&rt, "b", "pwd; echo \"foo=${HT_FOO-unset}\"");
    assert_ne!(v["output"].as_str().unwrap().lines().next().unwrap(), real);
    // per-task overrides through the API
    let term = rt.terminal().unwrap().clone();
    term.set_task_cwd("c", &d).unwrap();
    term.set_task_env("c", &json!({"HT_OVR": "yes"})).unwrap();
    let v = sh(&rt, "c", "pwd; echo $HT_OVR");
    assert_eq!(v["output"], format!("{real}\nyes"), "{v}");
    // workdir parameter
    let v = run(&rt, "d", json!({"command": "pwd", "workdir": d}));
    assert_eq!(v["output"], real);
    let v = run(
        &rt,
        "d",
        json!({"command": "pwd", "workdir": "/tmp; rm -rf x"}),
    );
    assert_eq!(v["status"], "blocked");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn noninteractive_defaults_and_closed_stdin() {
    let rt = rt();
    let t0 = Instant::now();
    let v = sh(
        &rt,
        "t",
        "read x; echo \"got:$x rc:$?\"; echo $CI $GIT_TERMINAL_PROMPT $PAGER",
    );
    assert_eq!(v["output"], "got: rc:1\n1 0 cat", "{v}");
    assert!(t0.elapsed() < Duration::from_secs(20));
    // no controlling terminal: /dev/tty cannot be opened
    let v = sh(&rt, "t", "echo x > /dev/tty && echo opened || echo no-tty");
    assert!(v["output"].as_str().unwrap().ends_with("no-tty"), "{v}");
}

#[test]
fn foreground_guard_refuses_what_would_hang() {
    let rt = rt();
    for cmd in [
        "sleep 100 &",
        "nohup sleep 100",
        "npm run dev",
        "python3 -m http.server 8123",
    ] {
        let v = sh(&rt, "t", cmd);
        assert_eq!(v["exit_code"], -1, "{cmd}: {v}");
        assert!(
            v["error"].as_str().unwrap().contains("background=true"),
            "{v}"
        );
    }
    let v = run(&rt, "t", json!({"command": "echo x", "timeout": 100000}));
    assert!(
        v["error"].as_str().unwrap().contains("exceeds the maximum"),
        "{v}"
    );
}

#[test]
fn dangerous_command_is_blocked_and_never_runs() {
    let rt = rt();
    let canary = std::env::temp_dir().join(format!("ht-canary-{}", std::process::id()));
    let v = sh(&rt, "t", &format!("rm -rf / ; touch {}", canary.display()));
    assert_eq!(v["status"], "blocked", "{v}");
    assert_eq!(v["exit_code"], -1);
    assert!(!canary.exists());
    // blocked even with approvals off
    let rt = rt_open();
    let v = sh(&rt, "t", &format!("rm -rf / ; touch {}", canary.display()));
    assert_eq!(v["status"], "blocked", "{v}");
    assert!(!canary.exists());
}

#[test]
fn timeout_kills_the_whole_tree() {
    let rt = rt_open();
    let t0 = Instant::now();
    let v = run(
        &rt,
        "t",
        json!({"command": "echo before; bash -c 'sleep 313.71 & sleep 313.72'", "timeout": 1}),
    );
    let took = t0.elapsed();
    assert_eq!(v["exit_code"], 124, "{v}");
    let out = v["output"].as_str().unwrap();
    assert!(out.starts_with("before"), "{v}");
    assert!(out.contains("timed out after 1s"), "{v}");
    // A command left waiting would take 313 s.
    assert!(took < Duration::from_secs(20), "{took:?}");
    for n in ["313.71", "313.72"] {
        assert!(wait_for(|| pgrep(n).is_empty(), 10), "{:?}", pgrep(n));
    }
}

#[test]
fn grandchild_holding_the_pipe_does_not_block() {
    let rt = rt_open();
    let t0 = Instant::now();
    let v = sh(&rt, "t", "bash -c 'sleep 414.2 &'; echo done");
    assert_eq!(v["output"], "done", "{v}");
    // A call held by the grandchild would take 414 s.
    assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", t0.elapsed());
    assert!(
        wait_for(|| pgrep("414.2").is_empty(), 10),
        "left behind: {:?}",
        pgrep("414.2")
    );
}

#[test]
fn pty_mode_sees_a_tty() {
    let rt = rt();
    let v = run(
        &rt,
        "t",
        json!({"command": "test -t 0 && test -t 1 && echo TTY; tty", "pty": true}),
    );
    let out = v["output"].as_str().unwrap();
    assert!(out.starts_with("TTY\n/dev/pts/"), "{v}");
    let v = run(
        &rt,
        "t",
        json!({"command": "test -t 1 && echo TTY || echo PIPE"}),
    );
    assert_eq!(v["output"], "PIPE");
    // PTY state persists like pipe mode
    run(
        &rt,
        "p",
        json!({"command": "cd / && export HT_P=1", "pty": true}),
    );
    let v = sh(&rt, "p", "pwd; echo $HT_P; echo $TERM");
    assert_eq!(v["output"], "/\n1\ndumb", "{v}");
}

/// The terminal recommends the file tools only when the model has them.
#[test]
fn terminal_description_names_only_tools_that_are_there() {
    let rt = rt();
    let description = |rt: &Runtime| -> String {
        let defs: Value = serde_json::from_str(&rt.definitions("").unwrap()).unwrap();
        defs.as_array()
            .unwrap()
            .iter()
            .find(|d| d["function"]["name"] == "terminal")
            .map(|d| d["function"]["description"].as_str().unwrap().to_string())
            .unwrap()
    };
    assert!(
        !description(&rt).contains("read_file"),
        "{}",
        description(&rt)
    );
    struct Nop;
    impl hermes_tools::core::BlockingTool for Nop {
        fn run(&self, _: Value, _: &hermes_tools::core::RunCtx) -> hermes_tools::core::ToolOutput {
            hermes_tools::core::ToolOutput::ok("{}")
        }
    }
    rt.register_tool(
        r#"{"name":"read_file","toolset":"file","schema":{"description":"Read a file."}}"#,
        std::sync::Arc::new(hermes_tools::core::Blocking(std::sync::Arc::new(Nop))),
        None,
    )
    .unwrap();
    assert!(
        description(&rt).contains("Prefer read_file"),
        "{}",
        description(&rt)
    );
}

/// A command the approval policy denies reaches post_tool_call hooks as
/// `blocked` (with the reason code `approval_denied`), as the result says.
#[test]
fn denied_commands_are_blocked_for_post_hooks() {
    use hermes_tools::core::hooks::{Hook, HookReply};
    use std::sync::{Arc, Mutex};
    struct Seen(Mutex<Vec<Value>>);
    impl Hook for Seen {
        fn call(&self, event: &Arc<str>, reply: HookReply) {
            self.0
                .lock()
                .unwrap()
                .push(serde_json::from_str(event).unwrap());
            reply.send("{}".to_string());
        }
    }
    // Approvals on, no handler: dangerous commands fail closed.
    let rt = Runtime::new(r#"{"builtin_toolsets":["terminal"],"terminal":{"backend":"local"}}"#)
        .unwrap();
    let seen = Arc::new(Seen(Mutex::new(Vec::new())));
    rt.add_hook("post_tool_call", seen.clone()).unwrap();
    let v = run(&rt, "t", json!({"command": "rm -rf /"}));
    assert_eq!(v["status"], "blocked", "{v}");
    let events = seen.0.lock().unwrap();
    let post = events.last().expect("a post_tool_call event");
    assert_eq!(post["status"], "blocked", "{post}");
}
