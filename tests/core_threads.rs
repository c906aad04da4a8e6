//! Core v2: no thread is created per availability check, per async built-in
//! call or per batch chunk; the engine's threads are reused. (The old code
//! started a thread for each, so the counts below grew with the work.)
//! The tools and checks record the threads they run on: with a thread per
//! unit of work there would be one distinct thread per call. Its own test
//! binary (not in tests/integration): it counts the whole process's threads.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hermes_tools::Runtime;
use hermes_tools::core::availability::Check;
use hermes_tools::core::{Blocking, BlockingTool, RunCtx, ToolOutput};
use hermes_tools::dispatch::CallContext;

fn threads() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

static SEEN: Mutex<Option<HashSet<std::thread::ThreadId>>> = Mutex::new(None);

/// The tests of this file one at a time: they count the threads of the
/// whole process, and each of them starts runtimes and threads.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn seen() {
    SEEN.lock()
        .unwrap()
        .get_or_insert_with(HashSet::new)
        .insert(std::thread::current().id());
}

fn distinct() -> usize {
    SEEN.lock().unwrap().take().map_or(0, |s| s.len())
}

struct Sleepy;
impl BlockingTool for Sleepy {
    fn run(&self, _args: serde_json::Value, ctx: &RunCtx) -> ToolOutput {
        seen();
        std::thread::sleep(Duration::from_millis(2));
        ToolOutput::ok(format!("{{\"tool\":\"{}\"}}", ctx.name))
    }
}

struct SlowCheck(AtomicUsize);
impl Check for SlowCheck {
    fn check(&self) -> bool {
        self.0.fetch_add(1, Ordering::Relaxed);
        seen();
        std::thread::sleep(Duration::from_millis(2));
        true
    }
    fn key(&self) -> (usize, usize) {
        (self as *const _ as usize, 0)
    }
}

fn spec(name: &str, parallel: bool) -> String {
    format!(
        r#"{{"name":"{name}","toolset":"t","parallel_safe":{parallel},"schema":{{"description":"d","parameters":{{"type":"object","properties":{{}}}}}}}}"#
    )
}

#[test]
fn threads_are_reused_not_created_per_unit_of_work() {
    let _serial = serial();
    let rt = Runtime::new(r#"{"dispatch":{"max_parallel":2}}"#).unwrap();
    let check = Arc::new(SlowCheck(AtomicUsize::new(0)));
    let tool = Arc::new(Blocking(Arc::new(Sleepy)));
    for i in 0..6 {
        rt.register_tool(
            &spec(&format!("p{i}"), true),
            tool.clone(),
            Some(check.clone()),
        )
        .unwrap();
    }
    // Warm up: start the engine and one of each kind of work.
    rt.definitions("").unwrap();
    let before = threads();
    distinct();

    // 50 availability checks (each invalidation makes the next definitions probe again).
    for _ in 0..50 {
        rt.core().availability.invalidate();
        rt.definitions("").unwrap();
    }
    assert!(check.0.load(Ordering::Relaxed) >= 50, "checks ran");
    let n = distinct();
    assert!(n <= 4, "50 availability checks ran on {n} threads");
    // 50 async built-in calls, one after the other.
    for _ in 0..50 {
        let (tx, rx) = std::sync::mpsc::channel();
        rt.dispatch_async(
            "p0",
            "{}",
            CallContext::default(),
            Box::new(move |c| tx.send(c.text).unwrap()),
        )
        .unwrap();
        let text = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        assert!(text.contains("p0"), "{text}");
    }
    let n = distinct();
    assert!(n <= 4, "50 async built-in calls ran on {n} threads");
    // 20 batches of 6 parallel-safe calls (3 chunks of 2 under the old code).
    let calls: Vec<String> = (0..6)
        .map(|i| format!(r#"{{"id":"c{i}","type":"function","function":{{"name":"p{i}","arguments":"{{}}"}}}}"#))
        .collect();
    let batch = format!("[{}]", calls.join(","));
    for _ in 0..20 {
        let out = rt.dispatch_batch(&batch, &CallContext::default()).unwrap();
        assert!(out.contains("\"tool_call_id\":\"c5\""), "{out}");
    }
    let n = distinct();
    assert!(n <= 6, "20 batches ran their calls on {n} threads");
    let after = threads();
    // The engine may add a few pool threads while it warms up; the old code
    // created about 50 + 50 + 60 threads here (more than 100 in all).
    assert!(
        after <= before + 8,
        "threads grew from {before} to {after}: work is creating threads"
    );
    rt.close();
}

/// Thread names of this process (from /proc).
fn thread_names() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("comm")).ok())
        .map(|s| s.trim().to_string())
        .collect()
}

/// Background processes are read by tasks on the engine: twenty of them
/// start no reader thread (the old code started one per process).
#[test]
fn background_processes_have_no_thread_each() {
    let _serial = serial();
    let rt =
        Runtime::new(r#"{"builtin_toolsets":["terminal"],"approvals":{"mode":"off"}}"#).unwrap();
    let call = |args: serde_json::Value| {
        hermes_tools::dispatch::dispatch_sync(
            rt.core(),
            "terminal",
            &args.to_string(),
            CallContext::default(),
        )
        .expect("dispatch")
    };
    assert!(call(serde_json::json!({"command": "true"})).contains("exit_code"));
    let before = threads();
    for i in 0..20 {
        let out = call(
            serde_json::json!({"command": format!("echo start {i}; sleep 618.{i}"), "background": true}),
        );
        assert!(out.contains("session_id"), "{out}");
    }
    std::thread::sleep(Duration::from_millis(300));
    let readers: Vec<String> = thread_names()
        .into_iter()
        .filter(|n| n.starts_with("ht-proc"))
        .collect();
    assert!(readers.is_empty(), "reader threads: {readers:?}");
    let after = threads();
    assert!(
        after < before + 8,
        "20 background processes grew the process from {before} to {after} threads"
    );
    rt.close();
}

/// Register a tool that answers `answer` the instant its cancel token fires
/// (a spinning thread), dispatch and cancel it `rounds` times, and count the
/// calls that did not complete as cancelled.
fn calls_not_cancelled(answer: hermes_tools::core::ToolOutput, rounds: usize) -> usize {
    use hermes_tools::core::{Tool, ToolCall, ToolOutput};
    struct AnswersOnCancel(ToolOutput);
    impl Tool for AnswersOnCancel {
        fn call(&self, call: ToolCall<'_>) {
            let (cancel, reply) = (call.cancel.clone(), call.reply);
            let answer = self.0.clone();
            std::thread::spawn(move || {
                // Spin: answer in the instant the token fires.
                while !cancel.is_cancelled() {
                    std::hint::spin_loop();
                }
                reply.send(answer);
            });
        }
    }
    let rt = Runtime::new("{}").unwrap();
    rt.register_tool(
        r#"{"name":"slow","toolset":"t","schema":{"description":"waits"}}"#,
        Arc::new(AnswersOnCancel(answer)),
        None,
    )
    .unwrap();
    let mut not_cancelled = 0;
    for _ in 0..rounds {
        let (tx, rx) = std::sync::mpsc::channel();
        let id = rt
            .dispatch_async(
                "slow",
                "{}",
                CallContext::default(),
                Box::new(move |done| {
                    let _ = tx.send((done.cancelled, done.text));
                }),
            )
            .unwrap();
        std::thread::sleep(Duration::from_millis(1));
        rt.cancel(id).unwrap();
        let (cancelled, text) = rx.recv_timeout(Duration::from_secs(10)).expect("completed");
        if !cancelled || !text.contains("cancelled") {
            not_cancelled += 1;
        }
    }
    not_cancelled
}

/// A tool that fails the moment its cancel token fires (as an MCP client or
/// an HTTP tool does) still completes the call as cancelled: the answer can
/// reach the dispatcher before the cancellation does.
#[test]
fn a_tool_failing_on_cancel_completes_as_cancelled() {
    let _serial = serial();
    let answer = hermes_tools::core::ToolOutput::error("request aborted");
    assert_eq!(calls_not_cancelled(answer, 200), 0);
}

/// A built-in tool that answers as soon as its cancel token fires, with a
/// result that is not an error (the terminal: its killed command's output
/// and exit code 130), must not win the race against the cancellation: the
/// call completes as cancelled, the one outcome of a cancelled call
/// (issue 11, finding 4). `FlowCtl::cancel` ends the call's wait before it
/// fires the token; fired first, this spinning tool answers in that window
/// (34 of 300 calls did, with the order reversed).
#[test]
fn a_tool_answering_on_cancel_still_completes_as_cancelled() {
    let _serial = serial();
    let answer = hermes_tools::core::ToolOutput::ok(
        r#"{"output":"begun\n[Command interrupted]","exit_code":130}"#,
    );
    let won = calls_not_cancelled(answer, 300);
    assert_eq!(
        won, 0,
        "{won} of 300 cancelled calls completed with the tool's answer"
    );
}

/// Definitions kept by patching a cached, sorted selection with the names
/// registered, replaced, moved and removed since (and rebuilt when toolsets
/// or aliases change) are exactly what a fresh runtime that never cached
/// anything answers, after every step of a random sequence of changes, for
/// unfiltered, filtered, alias and disabled-toolset queries.
#[test]
fn patched_definitions_match_a_fresh_runtime_after_every_change() {
    let _serial = serial();
    use hermes_tools::core::{Tool, ToolCall, ToolOutput};
    struct Nop;
    impl Tool for Nop {
        fn call(&self, call: ToolCall<'_>) {
            call.reply.send(ToolOutput::ok("{}"));
        }
    }
    enum Op {
        Reg(String),
        Dereg(String),
        Define(String),
        Alias(String, String),
    }
    fn apply(rt: &Runtime, op: &Op) {
        let _ = match op {
            Op::Reg(spec) => rt.register_tool(spec, Arc::new(Nop), None).map(|_| ()),
            Op::Dereg(name) => rt.deregister_tool(name),
            Op::Define(def) => rt.define_toolset(def),
            Op::Alias(a, t) => rt.alias_toolset(a, t),
        };
    }
    let queries = [
        "".to_string(),
        r#"{"enabled_toolsets":["s0","s2"]}"#.to_string(),
        r#"{"enabled_toolsets":["combo"]}"#.to_string(),
        r#"{"enabled_toolsets":["al"]}"#.to_string(),
        r#"{"disabled_toolsets":["s1"]}"#.to_string(),
    ];
    // A small deterministic generator (xorshift), so a failure replays.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    let live = Runtime::new("{}").unwrap();
    let mut ops: Vec<Op> = Vec::new();
    for i in 0..30 {
        ops.push(Op::Reg(format!(
            r#"{{"name":"t{i:02}","toolset":"s{}","schema":{{"description":"v0 {i}"}}}}"#,
            i % 3
        )));
    }
    ops.push(Op::Define(
        r#"{"name":"combo","tools":["t05","t40"],"includes":["s1"]}"#.into(),
    ));
    ops.push(Op::Alias("al".into(), "s0".into()));
    for op in &ops {
        apply(&live, op);
    }
    for q in &queries {
        let _ = live.definitions(q);
    }
    for step in 0..150u64 {
        let i = next(45);
        let op = match next(10) {
            0..=4 => Op::Reg(format!(
                r#"{{"name":"t{i:02}","toolset":"s{}","override":true,"schema":{{"description":"v{step} {i}"}}}}"#,
                next(3)
            )),
            5..=7 => Op::Dereg(format!("t{i:02}")),
            8 => Op::Define(format!(
                r#"{{"name":"combo","tools":["t{i:02}"],"includes":["s{}"]}}"#,
                next(3)
            )),
            _ => Op::Alias("al".into(), format!("s{}", next(3))),
        };
        apply(&live, &op);
        ops.push(op);
        let fresh = Runtime::new("{}").unwrap();
        for op in &ops {
            apply(&fresh, op);
        }
        for q in &queries {
            let a = live.definitions(q).map(|t| t.to_string());
            let b = fresh.definitions(q).map(|t| t.to_string());
            match (a, b) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "step {step}, query {q}"),
                (Err(_), Err(_)) => {}
                (a, b) => panic!("step {step}, query {q}: {a:?} vs {b:?}"),
            }
        }
    }
}
