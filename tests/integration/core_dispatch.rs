//! The dispatch pipeline through the C API: repair, validation, hooks, limits,
//! error wrapping, timeouts, async completion, cancellation, batches, logging.

use crate::common::*;
use hermes_tools::Status;
use hermes_tools::ffi::api::*;
use hermes_tools::host::{ht_call, ht_hook};
use std::ffi::{c_char, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::Duration;

const TYPED: &str = r#"{"type":"object","properties":{"n":{"type":"integer"},"f":{"type":"number"},"b":{"type":"boolean"},"tags":{"type":"array","items":{"type":"string"}},"opts":{"type":"object"},"mode":{"enum":["fast","slow"]}},"required":["n"],"additionalProperties":false}"#;

#[test]
fn arguments_are_repaired_then_validated_before_the_handler_runs() {
    let rt = new_rt("{}");
    add(&rt, &spec("typed", "t", TYPED), echo);
    let out = json(&dispatch(
        &rt,
        "typed",
        r#"{"n":"42","f":"2.5","b":"true","tags":"solo","opts":"{\"k\":1}"}"#,
    ));
    assert_eq!(
        out,
        serde_json::json!({"n":42,"f":2.5,"b":true,"tags":["solo"],"opts":{"k":1}})
    );
    assert_eq!(
        json(&dispatch(&rt, "typed", r#"{"n":1,"tags":"[\"a\",\"b\"]"}"#))["tags"],
        serde_json::json!(["a", "b"])
    );
    // Double-encoded arguments.
    assert_eq!(json(&dispatch(&rt, "typed", r#""{\"n\":3}""#))["n"], 3);
    // Never NaN or Infinity.
    let e = json(&dispatch(&rt, "typed", r#"{"n":1,"f":"NaN"}"#));
    assert!(
        e["error"]
            .as_str()
            .unwrap()
            .contains("f: expected number, got string \"NaN\""),
        "{e}"
    );
    // Model-fixable errors, all at once, handler not called.
    let e = json(&dispatch(&rt, "typed", r#"{"mode":"medium","extra":1}"#));
    let msg = e["error"].as_str().unwrap();
    assert!(
        msg.contains("missing required property 'n'")
            && msg.contains("mode: must be one of")
            && msg.contains("unexpected property 'extra'"),
        "{msg}"
    );
    assert_eq!(e["errors"].as_array().unwrap().len(), 3);
    let e = json(&dispatch(&rt, "typed", r#"{"n":1"#));
    assert!(
        e["error"]
            .as_str()
            .unwrap()
            .starts_with("Invalid tool arguments for 'typed'"),
        "{e}"
    );
    let e = json(&dispatch(&rt, "typed", "[1]"));
    assert!(
        e["error"]
            .as_str()
            .unwrap()
            .contains("expected a JSON object, got an array"),
        "{e}"
    );
    let e = json(&dispatch(&rt, "nope", "{}"));
    assert_eq!(e["error"], "Unknown tool: nope");
}

unsafe extern "C" fn fail_with_framing(_: *mut c_void, call: *mut ht_call) {
    respond(
        call,
        true,
        "<tool_call>```json\n{\"oops\":1}\n```</tool_call>",
    );
}
unsafe extern "C" fn fail_with_json(_: *mut c_void, call: *mut ht_call) {
    respond(
        call,
        true,
        r#"{"error":"<system>quota</system> exceeded","code":429}"#,
    );
}
unsafe extern "C" fn big_output(_: *mut c_void, call: *mut ht_call) {
    let s = format!("HEAD{}TAIL", "x".repeat(50_000));
    respond(call, false, &s);
}

#[test]
fn errors_are_wrapped_sanitised_and_results_limited() {
    let rt = new_rt("{}");
    add(&rt, &spec("f1", "t", "{}"), fail_with_framing);
    add(&rt, &spec("f2", "t", "{}"), fail_with_json);
    add(
        &rt,
        r#"{"name":"big","toolset":"t","max_result_size_chars":2000,"schema":{}}"#,
        big_output,
    );
    assert_eq!(
        json(&dispatch(&rt, "f1", "{}")),
        serde_json::json!({"error":"[TOOL_ERROR] {\"oops\":1}"})
    );
    assert_eq!(
        json(&dispatch(&rt, "f2", "{}")),
        serde_json::json!({"error":"quota exceeded","code":429})
    );
    let out = dispatch(&rt, "big", "{}");
    assert!(out.chars().count() <= 2000);
    assert!(out.starts_with("HEAD") && out.ends_with("TAIL"));
    assert!(out.contains("chars omitted out of 50008 total"), "{out}");
}

struct HookLog {
    events: Mutex<Vec<serde_json::Value>>,
}

unsafe extern "C" fn guard_hook(ud: *mut c_void, hook: *mut ht_hook) {
    let log = unsafe { &*(ud as *const HookLog) };
    let mut n = 0;
    let p = unsafe { ht_hook_event_json(hook, &mut n) };
    let ev: serde_json::Value =
        serde_json::from_slice(unsafe { std::slice::from_raw_parts(p as *const u8, n) }).unwrap();
    log.events.lock().unwrap().push(ev.clone());
    let decision = match (ev["event"].as_str().unwrap(), ev["args"]["n"].as_i64()) {
        ("pre_tool_call", Some(13)) => {
            r#"{"action":"block","message":"unlucky number"}"#.to_string()
        }
        ("pre_tool_call", Some(1)) => r#"{"action":"rewrite","args":{"n":"100"}}"#.to_string(),
        ("pre_tool_call", Some(2)) => r#"{"action":"rewrite","args":{"n":"two"}}"#.to_string(),
        ("pre_tool_call", Some(3)) => "not json".to_string(),
        ("transform_tool_result", _) => {
            serde_json::json!({"result": format!("[seen] {}", ev["result"].as_str().unwrap())})
                .to_string()
        }
        _ => "{}".to_string(),
    };
    unsafe { ht_hook_respond(hook, decision.as_ptr() as *const c_char, decision.len()) };
}

#[test]
fn hooks_continue_block_rewrite_observe_and_transform() {
    let rt = new_rt("{}");
    let log = Box::leak(Box::new(HookLog {
        events: Mutex::new(Vec::new()),
    }));
    let ud = log as *mut HookLog as *mut c_void;
    add(&rt, &spec("typed", "t", TYPED), echo);
    for ev in ["pre_tool_call", "post_tool_call", "transform_tool_result"] {
        assert_eq!(
            unsafe {
                ht_runtime_add_hook(
                    rt.0,
                    ev.as_ptr() as *const c_char,
                    ev.len(),
                    Some(guard_hook),
                    ud,
                    None,
                    std::ptr::null_mut(),
                )
            },
            Status::Ok
        );
    }
    assert_eq!(dispatch(&rt, "typed", r#"{"n":5}"#), r#"[seen] {"n":5}"#);
    assert_eq!(
        dispatch(&rt, "typed", r#"{"n":13}"#),
        r#"[seen] {"error":"unlucky number"}"#
    );
    assert_eq!(
        dispatch(&rt, "typed", r#"{"n":1}"#),
        r#"[seen] {"n":100}"#,
        "rewritten args are repaired too"
    );
    assert!(
        dispatch(&rt, "typed", r#"{"n":2}"#).contains("n: expected integer"),
        "rewritten args are validated"
    );
    assert_eq!(
        dispatch(&rt, "typed", r#"{"n":3}"#),
        r#"[seen] {"n":3}"#,
        "an unreadable decision continues"
    );
    let events = log.events.lock().unwrap();
    let post: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| e["event"] == "post_tool_call")
        .collect();
    assert_eq!(post.len(), 5);
    assert_eq!(post[1]["status"], "blocked");
    assert_eq!(post[0]["status"], "ok");
    assert!(post[0]["duration_ms"].is_u64());
    let ev = "pre_tool";
    let mut err = std::ptr::null_mut();
    assert_eq!(
        unsafe {
            ht_runtime_add_hook(
                rt.0,
                ev.as_ptr() as *const c_char,
                ev.len(),
                Some(guard_hook),
                ud,
                None,
                &mut err,
            )
        },
        Status::InvalidArgument
    );
    assert!(err_text(err).contains("unknown hook event 'pre_tool'"));
}

static PARKED: Mutex<Vec<usize>> = Mutex::new(Vec::new());
unsafe extern "C" fn park(_: *mut c_void, call: *mut ht_call) {
    PARKED.lock().unwrap().push(call as usize);
}

#[test]
fn timeouts_answer_the_model_and_late_answers_are_harmless() {
    let rt = new_rt(r#"{"dispatch":{"timeout":0.05}}"#);
    add(&rt, &spec("parked", "t", "{}"), park);
    let out = json(&dispatch(&rt, "parked", "{}"));
    assert_eq!(out["status"], "timeout");
    let call = PARKED.lock().unwrap().pop().unwrap() as *mut ht_call;
    assert_eq!(args_of(call), "{}", "accessors stay valid until the answer");
    assert_eq!(respond(call, false, "late"), Status::Timeout);
    assert_eq!(respond(call, false, "later"), Status::NotFound);
    // A per-call context timeout overrides the default.
    let out = json(&dispatch_ctx(
        &rt,
        "parked",
        "{}",
        r#"{"timeout":0.01,"task_id":"t"}"#,
    ));
    assert!(
        out["error"]
            .as_str()
            .unwrap()
            .contains("timed out after 0.01 s")
    );
    let call = PARKED.lock().unwrap().pop().unwrap() as *mut ht_call;
    let mut n = 0;
    let ctx = unsafe { ht_call_context_json(call, &mut n) };
    let ctx =
        unsafe { std::str::from_utf8(std::slice::from_raw_parts(ctx as *const u8, n)) }.unwrap();
    assert!(ctx.contains("\"task_id\":\"t\""));
    respond(call, false, "x");
}

fn start(rt: &Rt, name: &str, args: &str, d: &'static Done) -> u64 {
    let (st, id) = start_async(rt, name, args, "", d);
    assert_eq!(st, Status::Ok);
    id
}
fn wait(d: &Done) {
    assert_eq!(wait_calls(d, 5000), 1, "exactly once");
    // Never inside the starting call: always on the library's callback thread.
    assert_ne!(*d.thread.lock().unwrap(), Some(std::thread::current().id()));
}

unsafe extern "C" fn park_quietly(_: *mut c_void, _call: *mut ht_call) {}

#[test]
fn async_completes_once_on_the_callback_thread_and_cancels() {
    let rt = new_rt("{}");
    add(&rt, &spec("typed", "t", TYPED), echo);
    add(&rt, &spec("parked", "t", "{}"), park_quietly);
    let d = new_done();
    start(&rt, "typed", r#"{"n":"7"}"#, d);
    wait(d);
    assert_eq!(*d.status.lock().unwrap(), Some(Status::Ok));
    assert_eq!(*d.result.lock().unwrap(), r#"{"n":7}"#);
    assert_ne!(
        d.thread.lock().unwrap().unwrap(),
        std::thread::current().id()
    );
    // Unknown tools and bad args complete too (with an error result).
    let d2 = new_done();
    start(&rt, "nope", "{}", d2);
    wait(d2);
    assert!(d2.result.lock().unwrap().contains("Unknown tool"));
    // Cancellation.
    let d3 = new_done();
    let id = start(&rt, "parked", "{}", d3);
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!(
        unsafe { ht_runtime_cancel(rt.0, id, std::ptr::null_mut()) },
        Status::Ok
    );
    wait(d3);
    assert_eq!(*d3.status.lock().unwrap(), Some(Status::Cancelled));
    assert_eq!(
        unsafe { ht_runtime_cancel(rt.0, id, std::ptr::null_mut()) },
        Status::NotFound
    );
    // Free with a call pending: completes (cancelled) before free returns.
    let d4 = new_done();
    start(&rt, "parked", "{}", d4);
    std::thread::sleep(Duration::from_millis(30));
    drop(rt);
    assert_eq!(d4.calls.load(Ordering::SeqCst), 1);
    assert_eq!(*d4.status.lock().unwrap(), Some(Status::Cancelled));
}

static RENDEZVOUS: std::sync::OnceLock<Arc<Barrier>> = std::sync::OnceLock::new();
unsafe extern "C" fn meet(_: *mut c_void, call: *mut ht_call) {
    // Two calls of a parallel run meet here; run one after the other they never would.
    let b = RENDEZVOUS.get().unwrap().clone();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        b.wait();
        let _ = tx.send(());
    });
    let met = rx.recv_timeout(Duration::from_secs(5)).is_ok();
    respond(call, false, if met { "together" } else { "alone" });
}

#[test]
fn batches_run_parallel_safe_calls_together_and_keep_order() {
    let rt = new_rt("{}");
    RENDEZVOUS.set(Arc::new(Barrier::new(2))).ok();
    add(
        &rt,
        r#"{"name":"meet","toolset":"t","parallel_safe":true,"schema":{}}"#,
        meet,
    );
    add(&rt, &spec("typed", "t", TYPED), echo);
    add(&rt, &spec("f", "t", "{}"), fail_with_json);
    let calls = r#"[
      {"id":"1","type":"function","function":{"name":"meet","arguments":"{}"}},
      {"id":"2","type":"function","function":{"name":"meet","arguments":{}}},
      {"id":"3","type":"function","function":{"name":"typed","arguments":"{\"n\":\"5\"}"}},
      {"id":"4","type":"function","function":{"name":"f","arguments":"{}"}},
      {"id":"5","type":"function","function":{"arguments":"{}"}},
      {"id":"6","type":"function","function":{"name":"typed","arguments":"{bad"}}
    ]"#;
    let mut out = std::ptr::null_mut();
    let mut n = 0;
    assert_eq!(
        unsafe {
            ht_runtime_dispatch_batch(
                rt.0,
                calls.as_ptr() as *const c_char,
                calls.len(),
                std::ptr::null(),
                0,
                &mut out,
                &mut n,
                std::ptr::null_mut(),
            )
        },
        Status::Ok
    );
    let r = json(&take(out, n));
    let ids: Vec<&str> = r
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["tool_call_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec!["1", "2", "3", "4", "5", "6"]);
    assert_eq!(r[0]["content"], "together");
    assert_eq!(r[1]["content"], "together");
    assert_eq!(r[2]["content"], r#"{"n":5}"#);
    assert!(r[3]["content"].as_str().unwrap().contains("quota"));
    assert!(
        r[4]["content"]
            .as_str()
            .unwrap()
            .contains("no function name")
    );
    assert!(
        r[5]["content"]
            .as_str()
            .unwrap()
            .contains("Invalid tool arguments")
    );
    let bad = "{}";
    let mut err = std::ptr::null_mut();
    assert_eq!(
        unsafe {
            ht_runtime_dispatch_batch(
                rt.0,
                bad.as_ptr() as *const c_char,
                2,
                std::ptr::null(),
                0,
                &mut out,
                &mut n,
                &mut err,
            )
        },
        Status::InvalidJson
    );
    assert!(err_text(err).contains("array"));
}

unsafe extern "C" fn reenter(ud: *mut c_void, call: *mut ht_call) {
    let rt = ud as *mut ht_runtime;
    let rt = Rt(rt);
    let inner = dispatch(&rt, "typed", r#"{"n":1}"#);
    let defs = definitions(&rt, "").unwrap();
    std::mem::forget(rt);
    respond(call, false, &format!("{inner} {}", defs.len() > 10));
}

#[test]
fn handlers_may_call_back_into_the_library() {
    let rt = new_rt("{}");
    add(&rt, &spec("typed", "t", TYPED), echo);
    register(
        &rt,
        &spec("outer", "t", "{}"),
        reenter,
        None,
        rt.0 as *mut c_void,
    )
    .unwrap();
    assert_eq!(dispatch(&rt, "outer", "{}"), r#"{"n":1} true"#);
}

static LOG_LINES: Mutex<Vec<(i32, String)>> = Mutex::new(Vec::new());
unsafe extern "C" fn log_line(_: *mut c_void, level: i32, msg: *const c_char, n: usize) {
    let s = String::from_utf8_lossy(unsafe { std::slice::from_raw_parts(msg as *const u8, n) })
        .into_owned();
    LOG_LINES.lock().unwrap().push((level, s));
}

#[test]
fn the_host_sees_what_the_library_logs() {
    assert_eq!(
        unsafe { ht_set_log_handler(Some(log_line), 4, std::ptr::null_mut(), None) },
        Status::Ok
    );
    let rt = new_rt("{}");
    add(&rt, &spec("typed", "t", TYPED), echo);
    dispatch(&rt, "typed", r#"{"n":"8"}"#);
    hermes_tools::logging::flush();
    let lines = LOG_LINES.lock().unwrap().clone();
    assert!(
        lines
            .iter()
            .any(|(l, s)| *l == 4 && s.contains("arguments repaired")),
        "{lines:?}"
    );
    assert_eq!(
        unsafe { ht_set_log_handler(None, 9, std::ptr::null_mut(), None) },
        Status::InvalidArgument
    );
    assert_eq!(
        unsafe { ht_set_log_handler(None, 0, std::ptr::null_mut(), None) },
        Status::Ok
    );
}

unsafe extern "C" fn loop_handler(_: *mut c_void, call: *mut ht_call) {
    let mut n = 0;
    let p = unsafe { ht_call_tool_name(call, &mut n) };
    let name = String::from_utf8_lossy(unsafe { std::slice::from_raw_parts(p as *const u8, n) })
        .into_owned();
    respond(
        call,
        false,
        &format!("loop handled {name} {}", args_of(call)),
    );
}

#[test]
fn agent_loop_tools_go_to_the_interceptor_or_say_so() {
    let rt = new_rt("{}");
    add(
        &rt,
        r#"{"name":"todo","toolset":"todo","agent_loop":true,"schema":{"parameters":{"type":"object","properties":{"n":{"type":"integer"}}}}}"#,
        echo,
    );
    assert_eq!(
        json(&dispatch(&rt, "todo", "{}")),
        serde_json::json!({"error":"todo must be handled by the agent loop"})
    );
    assert_eq!(
        unsafe {
            ht_runtime_set_interceptor(
                rt.0,
                Some(loop_handler),
                std::ptr::null_mut(),
                None,
                std::ptr::null_mut(),
            )
        },
        Status::Ok
    );
    assert_eq!(
        dispatch(&rt, "todo", r#"{"n":"3"}"#),
        r#"loop handled todo {"n":3}"#
    );
    assert!(
        def_names(&rt, "").contains(&"todo".to_string()),
        "still advertised"
    );
}

static FREE_FROM_CALLBACK: AtomicUsize = AtomicUsize::new(0);
unsafe extern "C" fn free_runtime_here(ud: *mut c_void, call: *mut ht_call) {
    // A host that frees its runtime from inside an async handler (on the callback thread).
    respond(call, false, "bye");
    unsafe { ht_runtime_free(ud as *mut ht_runtime) };
    FREE_FROM_CALLBACK.fetch_add(1, Ordering::SeqCst);
}
unsafe extern "C" fn count_free_cb(_: *mut c_void) {
    FREE_FROM_CALLBACK.fetch_add(10, Ordering::SeqCst);
}

#[test]
fn freeing_the_runtime_from_the_callback_thread_does_not_deadlock() {
    let rt = new_rt("{}");
    let raw = rt.0;
    let s = spec("bye", "t", "{}");
    assert_eq!(
        unsafe {
            ht_runtime_register_tool(
                raw,
                s.as_ptr() as *const c_char,
                s.len(),
                Some(free_runtime_here),
                None,
                raw as *mut c_void,
                Some(count_free_cb),
                std::ptr::null_mut(),
            )
        },
        Status::Ok
    );
    std::mem::forget(rt); // the handler frees it
    let d = new_done();
    let name = "bye";
    let mut id = 0;
    assert_eq!(
        unsafe {
            ht_runtime_dispatch_async(
                raw,
                name.as_ptr() as *const c_char,
                3,
                b"{}".as_ptr() as *const c_char,
                2,
                std::ptr::null(),
                0,
                Some(on_done),
                d as *const Done as *mut c_void,
                &mut id,
                std::ptr::null_mut(),
            )
        },
        Status::Ok
    );
    for _ in 0..500 {
        if FREE_FROM_CALLBACK.load(Ordering::SeqCst) >= 11 && d.calls.load(Ordering::SeqCst) == 1 {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        d.calls.load(Ordering::SeqCst),
        1,
        "the completion still runs exactly once"
    );
    assert_eq!(
        FREE_FROM_CALLBACK.load(Ordering::SeqCst),
        11,
        "handler returned and the free function ran once"
    );
}

/// A failing host tool that echoes a credential (an API key in an HTTP
/// error) does not pass it on to the model.
#[test]
fn host_tool_errors_are_redacted() {
    unsafe extern "C" fn leaky(_: *mut std::ffi::c_void, call: *mut hermes_tools::host::ht_call) {
        respond(
            call,
            true,
            "HTTP 401 from api.openai.com with key sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcd",
        );
    }
    let rt = new_rt("{}");
    add(
        &rt,
        &spec("leaky", "t", r#"{"type":"object","properties":{}}"#),
        leaky,
    );
    let out = dispatch(&rt, "leaky", "{}");
    assert!(out.contains("error"), "{out}");
    assert!(
        !out.contains("AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"),
        "key leaked: {out}"
    );
}
