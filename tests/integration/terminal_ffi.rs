//! The terminal toolset through the C ABI like a host uses it: dispatch,
//! events (live output, completion, watch matches), typing into a running
//! PTY command, per-task cwd/env overrides, and the error statuses.

use hermes_tools::Status;
use hermes_tools::ffi::api::*;
use hermes_tools::ffi::ht_error;
use hermes_tools::ffi::terminal::*;
use serde_json::Value;
use std::ffi::{c_char, c_void};
use std::ptr::{null, null_mut};
use std::sync::Mutex;
use std::time::{Duration, Instant};

struct Rt(*mut ht_runtime);
unsafe impl Send for Rt {}
unsafe impl Sync for Rt {}
impl Drop for Rt {
    fn drop(&mut self) {
        unsafe { ht_runtime_free(self.0) }
    }
}

fn new_rt(cfg: &str) -> Rt {
    let mut rt = null_mut();
    let mut err: *mut ht_error = null_mut();
    let st = unsafe { ht_runtime_new(cfg.as_ptr() as *const c_char, cfg.len(), &mut rt, &mut err) };
    assert_eq!(st, Status::Ok);
    Rt(rt)
}

fn dispatch(rt: &Rt, name: &str, args: &str, ctx: &str) -> Value {
    let mut out: *mut c_char = null_mut();
    let mut len = 0usize;
    let mut err: *mut ht_error = null_mut();
    let st = unsafe {
        ht_runtime_dispatch(
            rt.0,
            name.as_ptr() as *const c_char,
            name.len(),
            args.as_ptr() as *const c_char,
            args.len(),
            ctx.as_ptr() as *const c_char,
            ctx.len(),
            &mut out,
            &mut len,
            &mut err,
        )
    };
    assert_eq!(st, Status::Ok);
    let text = unsafe { std::str::from_utf8(std::slice::from_raw_parts(out as *const u8, len)) }
        .unwrap()
        .to_string();
    unsafe { ht_string_free(out) };
    serde_json::from_str(&text).unwrap()
}

fn events() -> &'static Mutex<Vec<Value>> {
    static E: Mutex<Vec<Value>> = Mutex::new(Vec::new());
    &E
}

unsafe extern "C" fn on_event(_ud: *mut c_void, json: *const c_char, len: usize) {
    let s = unsafe { std::slice::from_raw_parts(json as *const u8, len) };
    if let Ok(v) = serde_json::from_slice::<Value>(s) {
        events().lock().unwrap().push(v);
    }
}

fn wait_event(pred: impl Fn(&Value) -> bool, secs: u64) -> Option<Value> {
    let until = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < until {
        if let Some(v) = events().lock().unwrap().iter().find(|v| pred(v)) {
            return Some(v.clone());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

fn s(p: &str) -> (*const c_char, usize) {
    (p.as_ptr() as *const c_char, p.len())
}

#[test]
fn host_api_events_and_input() {
    let rt = new_rt(
        r#"{"builtin_toolsets":["terminal"],"approvals":{"mode":"off"},"terminal":{"backend":"local","watch_interval":0.2}}"#,
    );
    let st =
        unsafe { ht_runtime_set_event_handler(rt.0, Some(on_event), null_mut(), None, null_mut()) };
    assert_eq!(st, Status::Ok);

    // per-task overrides
    let dir = std::env::temp_dir().join(format!("ht-ffi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.display().to_string();
    let (tp, tl) = s("host-task");
    let (dp, dl) = s(&d);
    assert_eq!(
        unsafe { ht_runtime_set_task_cwd(rt.0, tp, tl, dp, dl, null_mut()) },
        Status::Ok
    );
    let env = r#"{"HT_FROM_HOST":"hello","HOME_X":null}"#;
    let (ep, el) = s(env);
    assert_eq!(
        unsafe { ht_runtime_set_task_env(rt.0, tp, tl, ep, el, null_mut()) },
        Status::Ok
    );
    let v = dispatch(
        &rt,
        "terminal",
        r#"{"command":"pwd; echo $HT_FROM_HOST"}"#,
        r#"{"task_id":"host-task"}"#,
    );
    let real = std::fs::canonicalize(&dir).unwrap().display().to_string();
    assert_eq!(v["output"], format!("{real}\nhello"), "{v}");
    // bad inputs
    let (bp, bl) = s("relative/dir");
    let mut err: *mut ht_error = null_mut();
    assert_eq!(
        unsafe { ht_runtime_set_task_cwd(rt.0, tp, tl, bp, bl, &mut err) },
        Status::InvalidArgument
    );
    unsafe { ht_error_free(err) };
    let (jp, jl) = s("[1]");
    assert_eq!(
        unsafe { ht_runtime_set_task_env(rt.0, tp, tl, jp, jl, null_mut()) },
        Status::InvalidArgument
    );
    assert_eq!(
        unsafe { ht_runtime_set_task_env(null_mut(), tp, tl, jp, jl, null_mut()) },
        Status::InvalidArgument
    );
    // A per-task network: the local backend has none to set; bad JSON and
    // a NULL runtime are told apart.
    let (np, nl) = s("\"on\"");
    assert_eq!(
        unsafe { ht_runtime_set_task_network(rt.0, tp, tl, np, nl, null_mut()) },
        Status::Unsupported
    );
    let (xp, xl) = s("{");
    assert_eq!(
        unsafe { ht_runtime_set_task_network(rt.0, tp, tl, xp, xl, null_mut()) },
        Status::InvalidJson
    );
    assert_eq!(
        unsafe { ht_runtime_set_task_network(null_mut(), tp, tl, np, nl, null_mut()) },
        Status::InvalidArgument
    );
    let (ip, il) = s("proc_nonexistent");
    assert_eq!(
        unsafe { ht_runtime_process_write(rt.0, ip, il, null(), 0, null_mut(), null_mut()) },
        Status::NotFound
    );

    // live output events of a foreground command
    let v = dispatch(
        &rt,
        "terminal",
        r#"{"command":"echo live-1; sleep 0.3; echo live-2"}"#,
        r#"{"tool_call_id":"call-7"}"#,
    );
    assert_eq!(v["output"], "live-1\nlive-2");
    let started = wait_event(
        |e| e["type"] == "terminal.started" && e["id"] == "call-7",
        5,
    );
    assert!(started.is_some());
    assert!(
        wait_event(
            |e| e["type"] == "terminal.output"
                && e["data"].as_str().unwrap_or("").contains("live-2"),
            5
        )
        .is_some()
    );
    assert!(
        wait_event(
            |e| e["type"] == "terminal.finished" && e["id"] == "call-7",
            5
        )
        .is_some()
    );

    // typing into a foreground PTY command from another thread, by its call id
    let rt_ptr = Rt(rt.0);
    let typer = std::thread::spawn(move || {
        let _ = wait_event(
            |e| e["type"] == "terminal.started" && e["id"] == "call-pty",
            10,
        );
        let (ip, il) = s("call-pty");
        let (dp, dl) = s("typed-by-host\r");
        let mut n = 0usize;
        let st = unsafe { ht_runtime_process_write(rt_ptr.0, ip, il, dp, dl, &mut n, null_mut()) };
        std::mem::forget(rt_ptr);
        (st, n)
    });
    let v = dispatch(
        &rt,
        "terminal",
        r#"{"command":"read -r x; echo \"got:$x\"","pty":true,"timeout":20}"#,
        r#"{"tool_call_id":"call-pty"}"#,
    );
    let (st, n) = typer.join().unwrap();
    assert_eq!(st, Status::Ok);
    assert_eq!(n, 14);
    assert!(
        v["output"].as_str().unwrap().contains("got:typed-by-host"),
        "{v}"
    );

    // completion notification
    let v = dispatch(
        &rt,
        "terminal",
        r#"{"command":"echo bg-out; exit 3","background":true,"notify_on_complete":true}"#,
        "",
    );
    let id = v["session_id"].as_str().unwrap().to_string();
    let done = wait_event(
        |e| e["type"] == "process.completed" && e["session_id"] == id.as_str(),
        10,
    )
    .expect("completion");
    assert_eq!(done["exit_code"], 3);
    assert_eq!(done["output"], "bg-out");
    // Its live output names the process the same way (session_id, not id).
    let out = wait_event(
        |e| e["type"] == "process.output" && e["session_id"] == id.as_str(),
        5,
    )
    .expect("process.output event with session_id");
    assert!(
        out["data"].as_str().unwrap_or("").contains("bg-out"),
        "{out}"
    );
    assert!(out.get("id").is_none(), "{out}");

    // watch pattern matches, rate limited
    let v = dispatch(
        &rt,
        "terminal",
        r#"{"command":"for i in $(seq 1 40); do echo \"tick $i\"; [ $i = 5 ] && echo READY-NOW; sleep 0.02; done","background":true,"watch_patterns":["READY-NOW","tick"]}"#,
        "",
    );
    let id = v["session_id"].as_str().unwrap().to_string();
    let m = wait_event(
        |e| e["type"] == "process.watch_match" && e["session_id"] == id.as_str(),
        10,
    )
    .expect("watch match");
    assert!(m["output"].as_str().unwrap().contains("tick"), "{m}");
    std::thread::sleep(Duration::from_millis(1500));
    let n = events()
        .lock()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "process.watch_match" && e["session_id"] == id.as_str())
        .count();
    assert!(
        n < 10,
        "rate limiting let {n} watch events through for 45 matching lines"
    );

    drop(rt);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn terminal_functions_without_the_toolset() {
    let rt = new_rt("{}");
    let (tp, tl) = s("t");
    let (dp, dl) = s("/tmp");
    assert_eq!(
        unsafe { ht_runtime_set_task_cwd(rt.0, tp, tl, dp, dl, null_mut()) },
        Status::Unsupported
    );
    assert_eq!(
        unsafe { ht_runtime_process_write(rt.0, tp, tl, dp, dl, null_mut(), null_mut()) },
        Status::Unsupported
    );
}

fn done_slot() -> &'static Mutex<Option<(Status, String)>> {
    static D: Mutex<Option<(Status, String)>> = Mutex::new(None);
    &D
}

unsafe extern "C" fn on_done(_ud: *mut c_void, st: Status, res: *const c_char, len: usize) {
    let text = if res.is_null() {
        String::new()
    } else {
        String::from_utf8_lossy(unsafe { std::slice::from_raw_parts(res as *const u8, len) })
            .into_owned()
    };
    *done_slot().lock().unwrap() = Some((st, text));
}

#[test]
fn async_dispatch_and_cancel_kill_the_command() {
    let rt = new_rt(r#"{"builtin_toolsets":["terminal"],"terminal":{"backend":"local"}}"#);
    let (np, nl) = s("terminal");
    let (ap, al) = s(r#"{"command":"echo begun; sleep 929.1","timeout":60}"#);
    let mut id = 0u64;
    let st = unsafe {
        ht_runtime_dispatch_async(
            rt.0,
            np,
            nl,
            ap,
            al,
            null(),
            0,
            Some(on_done),
            null_mut(),
            &mut id,
            null_mut(),
        )
    };
    assert_eq!(st, Status::Ok);
    let alive = || {
        std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
            std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).starts_with("sleep\u{0}929.1"))
        })
    };
    let until = Instant::now() + Duration::from_secs(5);
    while !alive() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(alive(), "the command did not start");
    let t0 = Instant::now();
    assert_eq!(
        unsafe { ht_runtime_cancel(rt.0, id, null_mut()) },
        Status::Ok
    );
    let until = Instant::now() + Duration::from_secs(10);
    while done_slot().lock().unwrap().is_none() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    let done = done_slot().lock().unwrap().clone().expect("completion");
    assert!(t0.elapsed() < Duration::from_secs(5));
    // One outcome for every cancelled call (issue 11): the completion is
    // cancelled, never a terminal result with exit code 130.
    assert_eq!(done.0, Status::Cancelled, "{}", done.1);
    let v: Value = serde_json::from_str(&done.1).unwrap();
    assert_eq!(v["status"], "cancelled", "{v}");
    let until = Instant::now() + Duration::from_secs(5);
    while alive() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(), "cancel left the command running");
}
