//! Regression tests from an adversarial review of the core runtime (pending
//! table, dispatch drivers, runtime close, availability, toolsets, approvals,
//! validation): each pins a bug that was found and fixed.

use crate::common::*;
use hermes_tools::Status;
use hermes_tools::core::CancelToken;
use hermes_tools::core::{CommandDecision, ToolServices};
use hermes_tools::dispatch::CallContext;
use hermes_tools::ffi::api::*;
use hermes_tools::ffi::approval::*;
use hermes_tools::host::{ht_approval, ht_call, ht_hook};
use std::ffi::{c_char, c_void};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

// ---------------------------------------------------------------- helpers

fn raw_dispatch(rt: *mut ht_runtime, name: &str, args: &str, ctx: &str) -> (Status, String) {
    let mut out = std::ptr::null_mut();
    let mut n = 0;
    let mut err = std::ptr::null_mut();
    let (cp, cl) = if ctx.is_empty() {
        (std::ptr::null(), 0)
    } else {
        (ctx.as_ptr() as *const c_char, ctx.len())
    };
    let st = unsafe {
        ht_runtime_dispatch(
            rt,
            name.as_ptr() as *const c_char,
            name.len(),
            args.as_ptr() as *const c_char,
            args.len(),
            cp,
            cl,
            &mut out,
            &mut n,
            &mut err,
        )
    };
    if st == Status::Ok {
        (st, take(out, n))
    } else {
        (st, err_text(err))
    }
}

fn alias(rt: &Rt, a: &str, target: &str) -> Status {
    unsafe {
        ht_runtime_alias_toolset(
            rt.0,
            a.as_ptr() as *const c_char,
            a.len(),
            target.as_ptr() as *const c_char,
            target.len(),
            std::ptr::null_mut(),
        )
    }
}

/// Run this test body in a child process (for crashes that kill the process).
fn in_child(test_name: &str, body: impl FnOnce()) {
    if std::env::var("HT_REVIEW_CHILD").as_deref() == Ok(test_name) {
        body();
        return;
    }
    // The harness names a test by its path in the binary: `review_core::name`.
    let path = module_path!().split_once("::").map_or("", |(_, m)| m);
    let exact = format!("{path}::{test_name}");
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", &exact, "--include-ignored", "--nocapture"])
        .env("HT_REVIEW_CHILD", test_name)
        .output()
        .unwrap();
    // A name that matches no test would run nothing and succeed.
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("1 passed"),
        "the child ran no test named {exact}"
    );
    assert!(
        out.status.success(),
        "child process died: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter(|l| l.contains("overflow") || l.contains("panicked") || l.contains("SIG"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

// ------------------------------------------- behaviour checked and correct

unsafe extern "C" fn answer_twice(_: *mut c_void, call: *mut ht_call) {
    assert_eq!(respond(call, false, "one"), Status::Ok);
    assert_eq!(respond(call, false, "two"), Status::NotFound);
    assert!(unsafe { ht_call_args_json(call, std::ptr::null_mut()) }.is_null());
}

#[test]
fn second_answer_is_not_found_and_accessors_go_null() {
    let rt = new_rt("{}");
    add(&rt, &spec("twice", "t", "{}"), answer_twice);
    assert_eq!(dispatch(&rt, "twice", "{}"), "one");
    let d = new_done();
    assert_eq!(start_async(&rt, "twice", "{}", "", d).0, Status::Ok);
    assert_eq!(wait_calls(d, 3000), 1);
    assert_eq!(*d.result.lock().unwrap(), "one");
}

#[test]
fn deep_nesting_in_arguments_is_refused_not_a_stack_overflow() {
    // serde_json's recursion limit (128) protects parse, repair and validate.
    let rt = new_rt("{}");
    let nested =
        r#"{"type":"object","properties":{"x":{"type":"array","items":{"type":"array"}}}}"#;
    add(&rt, &spec("deep", "t", nested), echo);
    let deep = format!("{{\"x\":{}{}}}", "[".repeat(100_000), "]".repeat(100_000));
    let out = json(&dispatch(&rt, "deep", &deep));
    assert!(
        out["error"].as_str().unwrap().contains("recursion"),
        "{out}"
    );
    // A string holding deeply nested JSON (repair parses it) is bounded too.
    let inner = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    // (repair cannot parse it, so it stays a string, wrapped as a one-item list).
    let out = json(&dispatch(
        &rt,
        "deep",
        &serde_json::json!({ "x": inner }).to_string(),
    ));
    assert!(out["x"][0][0].is_string());
}

#[test]
fn toolset_definition_and_alias_changes_invalidate_cached_definitions() {
    let rt = new_rt(r#"{"builtin_toolsets":[]}"#);
    add(&rt, &spec("a1", "ta", "{}"), echo);
    add(&rt, &spec("b1", "tb", "{}"), echo);
    let q = r#"{"enabled_toolsets":["mine"]}"#;
    let def = |json: &str| unsafe {
        ht_runtime_define_toolset(
            rt.0,
            json.as_ptr() as *const c_char,
            json.len(),
            std::ptr::null_mut(),
        )
    };
    assert_eq!(def(r#"{"name":"mine","includes":["ta"]}"#), Status::Ok);
    assert_eq!(def_names(&rt, q), vec!["a1"]);
    assert_eq!(def(r#"{"name":"mine","includes":["tb"]}"#), Status::Ok);
    assert_eq!(def_names(&rt, q), vec!["b1"]);
    let q = r#"{"enabled_toolsets":["al"]}"#;
    assert_eq!(alias(&rt, "al", "ta"), Status::Ok);
    assert_eq!(def_names(&rt, q), vec!["a1"]);
    assert_eq!(alias(&rt, "al", "tb"), Status::Ok);
    assert_eq!(def_names(&rt, q), vec!["b1"]);
}

// ================================================================= BUGS

// --- pending.rs: ht_call_tool_name points into a HashMap slot that moves.

static NAME_PTRS: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());
unsafe extern "C" fn ignore_hook(_: *mut c_void, _: *mut ht_hook) {
    // An observe hook the host answers later (here: never); its entry stays filed.
}
unsafe extern "C" fn outer(ud: *mut c_void, call: *mut ht_call) {
    let mut n = 0;
    let before = unsafe { ht_call_tool_name(call, &mut n) } as usize;
    // Re-entrant dispatches from the same thread (allowed: rule 7). Each files
    // a post_tool_call event in the same shard of the pending table.
    for _ in 0..300 {
        let (st, _) = raw_dispatch(ud as *mut ht_runtime, "inner", "{}", "");
        assert_eq!(st, Status::Ok);
    }
    let after = unsafe { ht_call_tool_name(call, &mut n) } as usize;
    NAME_PTRS.lock().unwrap().push((before, after));
    respond(call, false, "ok");
}

#[test]
fn tool_name_pointer_stays_valid_until_respond() {
    let rt = new_rt("{}");
    register(
        &rt,
        &spec("outer", "t", "{}"),
        outer,
        None,
        rt.0 as *mut c_void,
    )
    .unwrap();
    add(&rt, &spec("inner", "t", "{}"), echo);
    add_hook(&rt, "post_tool_call", ignore_hook);
    std::thread::scope(|s| {
        s.spawn(|| assert_eq!(dispatch(&rt, "outer", "{}"), "ok"));
    });
    let (before, after) = NAME_PTRS.lock().unwrap()[0];
    assert_eq!(
        before, after,
        "ht_call_tool_name's borrowed pointer moved before ht_call_respond (the old one is freed memory)"
    );
}

// --- dispatch/mod.rs: Instant + huge Duration panics in drive_async.

#[test]
fn async_completion_runs_even_with_a_huge_context_timeout() {
    let rt = new_rt("{}");
    add(&rt, &spec("e", "t", "{}"), echo);
    let d = new_done();
    // 1e19 s fits a Duration (< u64::MAX s) but not an Instant: refused up front,
    // so on_done never runs; a long but valid timeout completes exactly once.
    let (st, _) = start_async(&rt, "e", "{}", r#"{"timeout":1e19}"#, d);
    assert_eq!(st, Status::InvalidArgument);
    assert_eq!(wait_calls(d, 200), 0, "a refused call never completes");
    let d2 = new_done();
    let (st, _) = start_async(&rt, "e", "{}", r#"{"timeout":1e6}"#, d2);
    assert_eq!(st, Status::Ok, "accepted, so on_done must run exactly once");
    assert_eq!(wait_calls(d2, 3000), 1, "on_done never ran");
}

unsafe extern "C" fn answer_later(_: *mut c_void, call: *mut ht_call) {
    let c = call as usize;
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        respond(c as *mut ht_call, false, "late but fine");
    });
}

#[test]
fn sync_dispatch_with_huge_context_timeout_returns_the_handler_answer() {
    let rt = new_rt("{}");
    add(&rt, &spec("later", "t", "{}"), answer_later);
    // Refused before any host code runs (no answer can be lost)...
    let ctx = r#"{"timeout":1e19}"#;
    let mut out = std::ptr::null_mut();
    let mut n = 0;
    let mut err = std::ptr::null_mut();
    let st = unsafe {
        ht_runtime_dispatch(
            rt.0,
            "later".as_ptr() as *const c_char,
            5,
            "{}".as_ptr() as *const c_char,
            2,
            ctx.as_ptr() as *const c_char,
            ctx.len(),
            &mut out,
            &mut n,
            &mut err,
        )
    };
    assert_eq!(st, Status::InvalidArgument);
    assert!(err_text(err).contains("context: timeout"));
    // ...and a long valid timeout returns the late answer.
    assert_eq!(
        dispatch_ctx(&rt, "later", "{}", r#"{"timeout":1e6}"#),
        "late but fine"
    );
}

#[test]
fn huge_context_timeout_is_refused_or_honoured_not_a_panic() {
    let rt = new_rt("{}");
    add(&rt, &spec("e", "t", "{}"), echo);
    let (st, out) = raw_dispatch(rt.0, "e", "{}", r#"{"timeout":1e300}"#);
    assert!(
        !out.contains("internal error"),
        "status {st:?}: {out} (a caught panic)"
    );
    let d = new_done();
    let (st, _) = start_async(&rt, "e", "{}", r#"{"timeout":1e300}"#, d);
    assert_ne!(st, Status::Panic);
}

#[test]
fn huge_config_timeouts_are_refused_at_runtime_new() {
    for cfg in [
        r#"{"dispatch":{"hook_timeout":1e300}}"#,
        r#"{"dispatch":{"timeout":1e300}}"#,
    ] {
        match try_new_rt(cfg) {
            Err((st, _)) => assert_eq!(st, Status::InvalidArgument, "{cfg}"),
            Ok(rt) => {
                add(&rt, &spec("e", "t", "{}"), echo);
                let (_, out) = raw_dispatch(rt.0, "e", "{}", "");
                assert_eq!(
                    out, "{}",
                    "{cfg}: accepted config, but every dispatch fails: {out}"
                );
            }
        }
    }
}

#[test]
fn huge_tool_timeout_is_an_invalid_argument() {
    let rt = new_rt("{}");
    let s = r#"{"name":"x","toolset":"t","timeout":1e300,"schema":{"description":"x","parameters":{}}}"#;
    let r = register(&rt, s, echo, None, std::ptr::null_mut());
    assert_eq!(r.unwrap_err().0, Status::InvalidArgument);
}

#[test]
fn huge_availability_ttl_is_an_invalid_argument() {
    for cfg in [
        r#"{"availability":{"ttl":1e300}}"#,
        r#"{"availability":{"failure_grace":1e300}}"#,
    ] {
        let r = try_new_rt(cfg);
        assert_eq!(r.err().map(|e| e.0), Some(Status::InvalidArgument), "{cfg}");
    }
}

// --- toolsets.rs: view() follows aliases without a cycle check.

#[test]
fn alias_cycles_are_refused_not_a_stack_overflow() {
    in_child("alias_cycles_are_refused_not_a_stack_overflow", || {
        let rt = new_rt("{}");
        // "terminal" is a built-in toolset; aliasing it to itself is a cycle.
        assert_ne!(alias(&rt, "terminal", "terminal"), Status::Ok);
        assert_eq!(alias(&rt, "x", "terminal"), Status::Ok);
        assert_ne!(alias(&rt, "terminal", "x"), Status::Ok);
    });
}

// --- availability.rs: epoch read after the evaluation, not before.

static FLAG: AtomicBool = AtomicBool::new(true);
/// flag_check has answered at least once.
static ASKED: AtomicBool = AtomicBool::new(false);
/// slow_check may answer (it waits at most 2.5 s, under the check timeout).
static RELEASE: AtomicBool = AtomicBool::new(false);
unsafe extern "C" fn flag_check(_: *mut c_void) -> bool {
    let v = FLAG.load(Ordering::SeqCst);
    ASKED.store(true, Ordering::SeqCst);
    v
}
unsafe extern "C" fn slow_check(_: *mut c_void) -> bool {
    let until = std::time::Instant::now() + Duration::from_millis(2500);
    while !RELEASE.load(Ordering::SeqCst) && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(5));
    }
    true
}

#[test]
fn invalidate_during_a_definitions_call_is_not_lost() {
    let rt = new_rt(
        r#"{"builtin_toolsets":[],"availability":{"ttl":60,"failure_grace":0,"check_timeout_ms":3000}}"#,
    );
    register(
        &rt,
        &spec("flag", "t", "{}"),
        echo,
        Some(flag_check),
        std::ptr::without_provenance_mut::<c_void>(1),
    )
    .unwrap();
    register(
        &rt,
        &spec("slow", "t", "{}"),
        echo,
        Some(slow_check),
        2 as *mut c_void,
    )
    .unwrap();
    std::thread::scope(|s| {
        let h = s.spawn(|| def_names(&rt, ""));
        // flag_check has answered (true); slow_check is still running.
        let until = std::time::Instant::now() + Duration::from_secs(10);
        while !ASKED.load(Ordering::SeqCst) && std::time::Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
        FLAG.store(false, Ordering::SeqCst);
        assert_eq!(
            unsafe { ht_runtime_invalidate_availability(rt.0) },
            Status::Ok
        );
        RELEASE.store(true, Ordering::SeqCst);
        let first = h.join().unwrap();
        assert_eq!(
            first,
            vec!["flag", "slow"],
            "started before the invalidation"
        );
    });
    // Started after the invalidation: "the next definitions call probes again".
    let names = def_names(&rt, "");
    assert!(
        !names.contains(&"flag".to_string()),
        "stale cached definitions after ht_runtime_invalidate_availability: {names:?}"
    );
}

// --- availability.rs: a check thread outlives ht_runtime_free.

static LATE_FREES: AtomicUsize = AtomicUsize::new(0);
static CHECK_RAN_AFTER_FREE: AtomicBool = AtomicBool::new(false);
static RT_FREED: AtomicBool = AtomicBool::new(false);
unsafe extern "C" fn hung_check(_: *mut c_void) -> bool {
    // Past the 50 ms check timeout, well inside free's 1 s wait.
    std::thread::sleep(Duration::from_millis(200));
    if RT_FREED.load(Ordering::SeqCst) {
        CHECK_RAN_AFTER_FREE.store(true, Ordering::SeqCst);
    }
    true
}
unsafe extern "C" fn count_free(_: *mut c_void) {
    LATE_FREES.fetch_add(1, Ordering::SeqCst);
}

#[test]
fn free_functions_have_run_when_runtime_free_returns() {
    let rt = new_rt(r#"{"builtin_toolsets":[],"availability":{"check_timeout_ms":50}}"#);
    let s = spec("hung", "t", "{}");
    let st = unsafe {
        ht_runtime_register_tool(
            rt.0,
            s.as_ptr() as *const c_char,
            s.len(),
            Some(echo),
            Some(hung_check),
            7 as *mut c_void,
            Some(count_free),
            std::ptr::null_mut(),
        )
    };
    assert_eq!(st, Status::Ok);
    assert!(def_names(&rt, "").is_empty(), "hung check: unavailable");
    drop(rt); // ht_runtime_free
    RT_FREED.store(true, Ordering::SeqCst);
    let at_return = LATE_FREES.load(Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(
        (at_return, LATE_FREES.load(Ordering::SeqCst)),
        (1, 1),
        "free_user_data ran {} time(s) before ht_runtime_free returned; host check ran after free: {}",
        at_return,
        CHECK_RAN_AFTER_FREE.load(Ordering::SeqCst)
    );
}

// --- approval_host.rs: a merged follower inherits the leader's cancellation.

struct Approver {
    prompts: AtomicUsize,
}
unsafe extern "C" fn approve_later(ud: *mut c_void, a: *mut ht_approval) {
    let h = unsafe { &*(ud as *const Approver) };
    h.prompts.fetch_add(1, Ordering::SeqCst);
    let a = a as usize;
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(400));
        let ans = r#"{"choice":"once"}"#;
        unsafe {
            ht_approval_respond(
                a as *mut ht_approval,
                ans.as_ptr() as *const c_char,
                ans.len(),
            )
        };
    });
}

#[test]
fn cancelling_one_call_does_not_deny_a_merged_identical_call() {
    let rt = new_rt("{}");
    let host: &'static Approver = Box::leak(Box::new(Approver {
        prompts: AtomicUsize::new(0),
    }));
    assert_eq!(
        unsafe {
            ht_runtime_set_approval_handler(
                rt.0,
                Some(approve_later),
                host as *const Approver as *mut c_void,
                None,
                std::ptr::null_mut(),
            )
        },
        Status::Ok
    );
    let shared = unsafe { &*rt.0 }.runtime().services().clone();
    let cmd = "git push --force origin main";
    let ctx = CallContext {
        session_id: "s".into(),
        ..Default::default()
    };
    let leader_token = CancelToken::default();
    let (leader, follower) = std::thread::scope(|s| {
        let l = s.spawn(|| shared.approve_command(cmd, &ctx, &leader_token));
        std::thread::sleep(Duration::from_millis(100));
        let f = s.spawn(|| shared.approve_command(cmd, &ctx, &CancelToken::default()));
        std::thread::sleep(Duration::from_millis(100));
        leader_token.cancel();
        (l.join().unwrap(), f.join().unwrap())
    });
    assert!(
        matches!(leader, CommandDecision::Deny { .. }),
        "the cancelled call is denied"
    );
    match follower {
        CommandDecision::Allow => {}
        CommandDecision::Deny { message, .. } => panic!(
            "the follower was never cancelled but got: {message} (prompts: {})",
            host.prompts.load(Ordering::SeqCst)
        ),
    }
}

// --- validate.rs: wrong results.

#[test]
fn enum_of_integers_accepts_an_equal_float() {
    let rt = new_rt("{}");
    add(
        &rt,
        &spec(
            "en",
            "t",
            r#"{"type":"object","properties":{"x":{"enum":[1,2]},"y":{"const":3}}}"#,
        ),
        echo,
    );
    let out = json(&dispatch(&rt, "en", r#"{"x":1.0,"y":3.0}"#));
    assert!(
        out.get("error").is_none(),
        "JSON Schema: 1.0 equals 1; got {out}"
    );
}

#[test]
fn boolean_exclusive_minimum_is_honoured() {
    let rt = new_rt("{}");
    add(
        &rt,
        &spec(
            "ex",
            "t",
            r#"{"type":"object","properties":{"x":{"type":"number","minimum":0,"exclusiveMinimum":true}}}"#,
        ),
        echo,
    );
    let out = json(&dispatch(&rt, "ex", r#"{"x":0}"#));
    assert!(
        out.get("error").is_some(),
        "0 is not > 0; the handler ran with {out}"
    );
}

#[test]
fn integer_maximum_is_exact_for_large_integers() {
    let rt = new_rt("{}");
    add(
        &rt,
        &spec(
            "big",
            "t",
            r#"{"type":"object","properties":{"x":{"type":"integer","maximum":9007199254740992}}}"#,
        ),
        echo,
    );
    let out = json(&dispatch(&rt, "big", r#"{"x":9007199254740993}"#));
    assert!(
        out.get("error").is_some(),
        "9007199254740993 > maximum; got {out}"
    );
}

// --- approval_host.rs: a panicking leader leaves its inflight key behind.

#[test]
fn a_failed_prompt_does_not_wedge_later_identical_requests() {
    // An approval timeout too long for a deadline is refused up front.
    let (st, msg) = try_new_rt(r#"{"approvals":{"timeout":18446744073709551615}}"#)
        .err()
        .unwrap();
    assert_eq!(st, Status::InvalidArgument);
    assert!(msg.contains("approvals.timeout"), "{msg}");
    let rt = new_rt(r#"{"approvals":{"timeout":2}}"#);
    let host: &'static Approver = Box::leak(Box::new(Approver {
        prompts: AtomicUsize::new(0),
    }));
    assert_eq!(
        unsafe {
            ht_runtime_set_approval_handler(
                rt.0,
                Some(approve_later),
                host as *const Approver as *mut c_void,
                None,
                std::ptr::null_mut(),
            )
        },
        Status::Ok
    );
    let shared = unsafe { &*rt.0 }.runtime().services().clone();
    let cmd = "git push --force origin main";
    let ctx = CallContext {
        session_id: "s".into(),
        ..Default::default()
    };
    let first = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        shared.approve_command(cmd, &ctx, &CancelToken::default())
    }));
    let second_token = CancelToken::default();
    let finished = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            shared.approve_command(cmd, &ctx, &second_token);
            finished.store(true, Ordering::SeqCst);
        });
        let until = std::time::Instant::now() + Duration::from_secs(10);
        while !finished.load(Ordering::SeqCst) && std::time::Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        let done = finished.load(Ordering::SeqCst);
        second_token.cancel(); // unwedge the thread so the test ends
        assert!(
            first.is_ok() && done,
            "first request panicked: {}; second request still waiting after the host answered: {}",
            first.is_err(),
            !done
        );
    });
}
