//! Faults from the host and hostile sizes (issue 10): borrowed texts that
//! outlive a free, free that returns whatever host code does, no lost
//! completion when threads cannot be created, a pending table that shrinks,
//! linear argument repair, capped batches and schemas, bounded events.
//! Its own test binary (not in tests/integration): it counts the process's
//! threads, limits its address space, installs the process-wide log
//! handler and runs itself again by bare test name.

mod common;
use common::*;
use hermes_tools::Status;
use hermes_tools::ffi::api::*;
use hermes_tools::host::{ht_call, ht_hook};
use std::ffi::{c_char, c_void};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Tests here count threads and block host callbacks: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());
fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn core_id(rt: &Rt) -> u64 {
    unsafe { (*rt.0).runtime().core().id }
}

/// Free `rt` on another thread; true when free returned within `limit`.
fn free_within(rt: Rt, limit: Duration) -> bool {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        drop(rt);
        let _ = tx.send(());
    });
    rx.recv_timeout(limit).is_ok()
}

fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").unwrap().count()
}

fn borrowed(p: *const c_char, n: usize) -> String {
    assert!(!p.is_null());
    String::from_utf8(unsafe { std::slice::from_raw_parts(p as *const u8, n) }.to_vec()).unwrap()
}

static PARKED: Mutex<Vec<usize>> = Mutex::new(Vec::new());
unsafe extern "C" fn park(_: *mut c_void, call: *mut ht_call) {
    PARKED.lock().unwrap().push(call as usize);
}
fn parked(max_ms: u64) -> *mut ht_call {
    for _ in 0..max_ms / 5 {
        if let Some(c) = PARKED.lock().unwrap().pop() {
            return c as *mut ht_call;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("the handler never ran");
}

/// Item 3: a parked async call's borrowed texts stay valid after free, until answered.
#[test]
fn parked_call_texts_stay_valid_after_free_until_answered() {
    let _s = serial();
    let rt = new_rt("{}");
    add(&rt, &spec("parked", "t", "{}"), park);
    let d = new_done();
    let (st, _) = start_async(&rt, "parked", r#"{"k":"v"}"#, r#"{"task_id":"t1"}"#, d);
    assert_eq!(st, Status::Ok);
    let call = parked(5000);
    let (mut an, mut cn, mut nn) = (0, 0, 0);
    let (a, c, n) = unsafe {
        (
            ht_call_args_json(call, &mut an),
            ht_call_context_json(call, &mut cn),
            ht_call_tool_name(call, &mut nn),
        )
    };
    drop(rt);
    assert_eq!(d.calls.load(Ordering::SeqCst), 1, "cancelled at free");
    assert_eq!(*d.status.lock().unwrap(), Some(Status::Cancelled));
    // The pointers taken before free still read the call's texts...
    assert_eq!(borrowed(a, an), r#"{"k":"v"}"#);
    assert!(borrowed(c, cn).contains("t1"));
    assert_eq!(borrowed(n, nn), "parked");
    // ...and the accessors still answer after free, with the same blocks.
    let mut n2 = 0;
    let a2 = unsafe { ht_call_args_json(call, &mut n2) };
    assert_eq!(a2, a, "same block until the answer");
    // A late answer after free is a clear status (cancelled, as the call
    // ended), once; then the call is gone.
    assert_eq!(respond(call, false, "late"), Status::Cancelled);
    assert_eq!(respond(call, false, "again"), Status::NotFound);
    assert!(unsafe { ht_call_args_json(call, &mut n2) }.is_null());
}

static HOOKED: Mutex<Vec<usize>> = Mutex::new(Vec::new());
unsafe extern "C" fn hook_never_answers(_: *mut c_void, hook: *mut ht_hook) {
    HOOKED.lock().unwrap().push(hook as usize);
}
unsafe extern "C" fn never_answers(_: *mut c_void, _call: *mut ht_call) {}

/// Item 9: calls and hooks that time out unanswered leave the pending table.
#[test]
fn timed_out_calls_and_hooks_leave_the_pending_table() {
    let _s = serial();
    let rt = new_rt(r#"{"dispatch":{"timeout":0.005,"hook_timeout":0.005}}"#);
    add(&rt, &spec("silent", "t", "{}"), never_answers);
    add_hook(&rt, "pre_tool_call", hook_never_answers);
    let id = core_id(&rt);
    for _ in 0..200 {
        let out = json(&dispatch(&rt, "silent", "{}"));
        assert_eq!(out["status"], "timeout", "{out}");
    }
    assert_eq!(
        hermes_tools::core::pending::live_count(id),
        0,
        "nothing unanswered stays in the pending table"
    );
    assert!(hermes_tools::core::pending::late_count() <= hermes_tools::core::pending::MAX_LATE);
    // A timed-out hook is still recognised when answered late.
    let hook = HOOKED.lock().unwrap().pop().unwrap() as *mut ht_hook;
    let st = unsafe { ht_hook_respond(hook, "{}".as_ptr() as *const c_char, 2) };
    assert_eq!(st, Status::Timeout);
    HOOKED.lock().unwrap().clear();
    drop(rt);
    // Observe-only hooks (nobody waits) that are never answered expire too.
    let rt = new_rt(r#"{"dispatch":{"hook_timeout":0.001}}"#);
    add(&rt, &spec("echo", "t", "{}"), echo);
    add_hook(&rt, "post_tool_call", hook_never_answers);
    let id = core_id(&rt);
    for _ in 0..1000 {
        dispatch(&rt, "echo", "{}");
    }
    let live = hermes_tools::core::pending::live_count(id);
    assert!(live <= 300, "{live} unanswered post_tool_call events kept");
    HOOKED.lock().unwrap().clear();
}

static RELEASE: AtomicBool = AtomicBool::new(false);
static ENTERED: AtomicUsize = AtomicUsize::new(0);
fn block_until_released() {
    ENTERED.fetch_add(1, Ordering::SeqCst);
    while !RELEASE.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(5));
    }
}
unsafe extern "C" fn blocking_handler(_: *mut c_void, call: *mut ht_call) {
    block_until_released();
    respond(call, false, "done");
}
unsafe extern "C" fn blocking_check(_: *mut c_void) -> bool {
    block_until_released();
    true
}
static FREED: AtomicUsize = AtomicUsize::new(0);
unsafe extern "C" fn count_free(_: *mut c_void) {
    FREED.fetch_add(1, Ordering::SeqCst);
}

static LOGGED: Mutex<Vec<String>> = Mutex::new(Vec::new());
unsafe extern "C" fn capture_log(_: *mut c_void, _: i32, msg: *const c_char, n: usize) {
    LOGGED.lock().unwrap().push(borrowed(msg, n));
}

/// Item 2: free returns within its bound while a handler blocks the callbacks thread.
#[test]
fn free_returns_while_a_handler_blocks_the_callbacks_thread() {
    let _s = serial();
    RELEASE.store(false, Ordering::SeqCst);
    ENTERED.store(0, Ordering::SeqCst);
    FREED.store(0, Ordering::SeqCst);
    let rt = new_rt("{}");
    let s = spec("stuck", "t", "{}");
    let st = unsafe {
        ht_runtime_register_tool(
            rt.0,
            s.as_ptr() as *const c_char,
            s.len(),
            Some(blocking_handler),
            None,
            std::ptr::null_mut(),
            Some(count_free),
            std::ptr::null_mut(),
        )
    };
    assert_eq!(st, Status::Ok);
    let d = new_done();
    assert_eq!(start_async(&rt, "stuck", "{}", "", d).0, Status::Ok);
    let t0 = Instant::now();
    while ENTERED.load(Ordering::SeqCst) == 0 && t0.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(ENTERED.load(Ordering::SeqCst), 1);
    LOGGED.lock().unwrap().clear();
    assert_eq!(
        unsafe { ht_set_log_handler(Some(capture_log), 2, std::ptr::null_mut(), None) },
        Status::Ok
    );
    assert!(
        free_within(rt, Duration::from_secs(10)),
        "ht_runtime_free returns while host code blocks"
    );
    hermes_tools::logging::flush();
    unsafe { ht_set_log_handler(None, 0, std::ptr::null_mut(), None) };
    let logged = LOGGED.lock().unwrap().join("\n");
    assert!(
        logged.contains("1 call(s)") && logged.contains("callbacks thread is still in host code"),
        "what free could not finish is logged: {logged}"
    );
    assert_eq!(
        FREED.load(Ordering::SeqCst),
        0,
        "user_data is not freed under running host code"
    );
    // Once the host code returns, the completion and the free function still run, once.
    RELEASE.store(true, Ordering::SeqCst);
    let t0 = Instant::now();
    while FREED.load(Ordering::SeqCst) == 0 && t0.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(FREED.load(Ordering::SeqCst), 1);
    assert_eq!(wait_calls(d, 5000), 1);
}

/// Item 7: a hung availability check costs one thread, not one per
/// invalidation, and free still returns.
#[test]
fn a_hung_check_leaks_no_threads_and_free_returns() {
    let _s = serial();
    RELEASE.store(false, Ordering::SeqCst);
    ENTERED.store(0, Ordering::SeqCst);
    let rt = new_rt(r#"{"availability":{"check_timeout_ms":20}}"#);
    register(
        &rt,
        &spec("checked", "t", "{}"),
        echo,
        Some(blocking_check),
        std::ptr::null_mut(),
    )
    .unwrap();
    assert!(
        def_names(&rt, "{}").is_empty(),
        "a hung check means unavailable"
    );
    // Its thread may start after the 20 ms the call waited.
    let until = Instant::now() + Duration::from_secs(5);
    while ENTERED.load(Ordering::SeqCst) == 0 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(5));
    }
    let before = threads();
    for _ in 0..50 {
        assert_eq!(
            unsafe { ht_runtime_invalidate_availability(rt.0) },
            Status::Ok
        );
        assert!(def_names(&rt, "{}").is_empty());
    }
    let grew = threads().saturating_sub(before);
    assert!(grew < 5, "50 invalidations started {grew} threads");
    assert_eq!(
        ENTERED.load(Ordering::SeqCst),
        1,
        "the hung check runs once"
    );
    assert!(
        free_within(rt, Duration::from_secs(10)),
        "ht_runtime_free returns while a check hangs"
    );
    RELEASE.store(true, Ordering::SeqCst);
}

/// Limit the address space so that no new thread stack fits (root ignores
/// RLIMIT_NPROC, not RLIMIT_AS); `false` lifts it again.
fn starve_threads(on: bool) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let vm_kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmSize:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    let cur = if on {
        (vm_kb + 1024) * 1024
    } else {
        libc::RLIM_INFINITY
    };
    let lim = libc::rlimit {
        rlim_cur: cur,
        rlim_max: libc::RLIM_INFINITY,
    };
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &lim) }, 0);
}

unsafe extern "C" fn ignore_log(_: *mut c_void, _: i32, _: *const c_char, _: usize) {}

fn thread_starved_child() {
    let rt = new_rt(r#"{"dispatch":{"timeout":30}}"#);
    add(&rt, &spec("parked", "t", "{}"), park);
    let d = new_done();
    starve_threads(true);
    // The async call needs the engine for its deadline; the engine cannot start.
    let (st, _) = start_async(&rt, "parked", "{}", "", d);
    assert_eq!(st, Status::Ok);
    let call = parked(5000);
    assert!(
        !unsafe { (*rt.0).runtime().core().engine.started() },
        "the starved engine did not start (else this test proves nothing)"
    );
    // A new runtime cannot get its threads: an error, never a panic.
    match try_new_rt("{}") {
        Ok(rt2) => drop(rt2),
        Err((s, m)) => {
            assert_ne!(s, Status::Panic, "{m}");
            assert!(m.contains("thread"), "{m}");
        }
    }
    // The log thread cannot start either: logging is lost (counted), nothing panics.
    let st = unsafe { ht_set_log_handler(Some(ignore_log), 2, std::ptr::null_mut(), None) };
    assert_eq!(st, Status::Ok);
    starve_threads(false);
    drop(rt);
    assert_eq!(
        d.calls.load(Ordering::SeqCst),
        1,
        "the completion ran at free"
    );
    assert_eq!(*d.status.lock().unwrap(), Some(Status::Cancelled));
    assert_eq!(respond(call, false, "late"), Status::Cancelled);
}

/// Item 8: when threads cannot be created, no async completion is lost and
/// nothing panics (nor prints a backtrace). Runs in a child process.
#[test]
fn thread_creation_failure_loses_no_completion_and_never_panics() {
    if std::env::var_os("HT_FAULTS_THREAD_CHILD").is_some() {
        thread_starved_child();
        return;
    }
    let _s = serial();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "thread_creation_failure_loses_no_completion_and_never_panics",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("HT_FAULTS_THREAD_CHILD", "1")
        .env("RUST_BACKTRACE", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "child failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("1 passed"), "{stdout}");
    assert!(
        !stderr.contains("panicked") && !stdout.contains("panicked"),
        "no panic message or backtrace:\n{stderr}"
    );
}

/// Run `f` on another thread; its result if it returned within `limit`.
fn within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit).ok()
}

/// Item 6: repairing a bare value under deeply nested arrays is not
/// exponential in the depth (40 levels: 2^40 steps before).
#[test]
fn argument_repair_is_not_exponential_in_schema_depth() {
    let _s = serial();
    const DEPTH: usize = 40;
    let mut schema = r#"{"type":"string"}"#.to_string();
    let mut expected = r#""x""#.to_string();
    for _ in 0..DEPTH {
        schema = format!(r#"{{"type":"array","items":{schema}}}"#);
        expected = format!("[{expected}]");
    }
    let params = format!(r#"{{"type":"object","properties":{{"a":{schema}}}}}"#);
    let rt = std::sync::Arc::new(new_rt("{}"));
    add(&rt, &spec("deep", "t", &params), echo);
    let rt2 = rt.clone();
    let out = within(Duration::from_secs(10), move || {
        dispatch(&rt2, "deep", r#"{"a":"x"}"#)
    })
    .expect("repair finishes (it took 2^depth steps)");
    assert_eq!(json(&out)["a"], json(&expected));
}

fn batch(rt: &Rt, calls: &str) -> Result<String, (Status, String)> {
    let mut out = std::ptr::null_mut();
    let mut n = 0;
    let mut err = std::ptr::null_mut();
    let st = unsafe {
        ht_runtime_dispatch_batch(
            rt.0,
            calls.as_ptr() as *const c_char,
            calls.len(),
            std::ptr::null(),
            0,
            &mut out,
            &mut n,
            &mut err,
        )
    };
    if st == Status::Ok {
        Ok(take(out, n))
    } else {
        Err((st, err_text(err)))
    }
}

/// Item 10: a model-controlled batch is capped in calls and bytes, with a
/// clear error naming the limit.
#[test]
fn batches_are_capped_in_calls_and_bytes() {
    let _s = serial();
    let rt = new_rt(r#"{"limits":{"max_batch_calls":3,"max_batch_bytes":2000}}"#);
    add(&rt, &spec("echo", "t", "{}"), echo);
    let call = r#"{"id":"c","function":{"name":"echo","arguments":"{}"}}"#;
    let calls = |n: usize| format!("[{}]", vec![call; n].join(","));
    let ok = json(&batch(&rt, &calls(3)).unwrap());
    assert_eq!(ok.as_array().unwrap().len(), 3);
    let (st, msg) = batch(&rt, &calls(4)).unwrap_err();
    assert_eq!(st, Status::InvalidArgument);
    assert!(msg.contains("limits.max_batch_calls (3)"), "{msg}");
    let big = format!(
        r#"[{{"id":"c","function":{{"name":"echo","arguments":"{{\"x\":\"{}\"}}"}}}}]"#,
        "y".repeat(3000)
    );
    let (st, msg) = batch(&rt, &big).unwrap_err();
    assert_eq!(st, Status::InvalidArgument);
    assert!(msg.contains("limits.max_batch_bytes (2000)"), "{msg}");
    // The defaults are documented and finite.
    let d = hermes_tools::core::config::LimitsConfig::default();
    assert!(d.max_batch_calls > 0 && d.max_batch_bytes > 0);
}

/// Item 10: schema size and pattern count are limited at registration.
#[test]
fn schemas_are_capped_in_bytes_and_patterns() {
    let _s = serial();
    let rt = new_rt(r#"{"limits":{"max_schema_bytes":4000,"max_schema_patterns":10}}"#);
    let props = |n: usize, pattern: bool| {
        let p: Vec<String> = (0..n)
            .map(|i| {
                if pattern {
                    format!(r#""p{i}":{{"type":"string","pattern":"^a+$"}}"#)
                } else {
                    format!(r#""p{i}":{{"type":"string"}}"#)
                }
            })
            .collect();
        format!(r#"{{"type":"object","properties":{{{}}}}}"#, p.join(","))
    };
    register(
        &rt,
        &spec("ten", "t", &props(10, true)),
        echo,
        None,
        std::ptr::null_mut(),
    )
    .unwrap();
    let (st, msg) = register(
        &rt,
        &spec("eleven", "t", &props(11, true)),
        echo,
        None,
        std::ptr::null_mut(),
    )
    .unwrap_err();
    assert_eq!(st, Status::InvalidArgument, "{msg}");
    assert!(msg.contains("limits.max_schema_patterns"), "{msg}");
    let (st, msg) = register(
        &rt,
        &spec("huge", "t", &props(400, false)),
        echo,
        None,
        std::ptr::null_mut(),
    )
    .unwrap_err();
    assert_eq!(st, Status::InvalidArgument, "{msg}");
    assert!(msg.contains("limits.max_schema_bytes (4000)"), "{msg}");
    // Bulk registration applies the same limits, naming the spec.
    let specs = format!("[{}]", spec("bulk", "t", &props(11, true)));
    let (st, msg) = register_bulk(&rt, &specs).unwrap_err();
    assert_eq!(st, Status::InvalidArgument);
    assert!(
        msg.contains("tool specs[0]") && msg.contains("limits.max_schema_patterns"),
        "{msg}"
    );
}

static EV_HOLD: AtomicBool = AtomicBool::new(false);
static EV_SEEN: AtomicUsize = AtomicUsize::new(0);
static EV_DROPPED: AtomicUsize = AtomicUsize::new(0);
unsafe extern "C" fn slow_events(_: *mut c_void, ev: *const c_char, n: usize) {
    let text = borrowed(ev, n);
    if text.contains("events_dropped") {
        let v = json(&text);
        EV_DROPPED.store(v["count"].as_u64().unwrap() as usize, Ordering::SeqCst);
    } else {
        EV_SEEN.fetch_add(1, Ordering::SeqCst);
    }
    while EV_HOLD.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn emit(rt: &Rt, n: usize) {
    use hermes_tools::core::ToolServices;
    let services = unsafe { (*rt.0).runtime().services() };
    for i in 0..n {
        services.emit_event(serde_json::json!({"type": "t", "i": i}));
    }
}

fn wait_for(what: &AtomicUsize, value: usize) {
    let t0 = Instant::now();
    while what.load(Ordering::SeqCst) < value && t0.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Item 5: the event queue is bounded (drops are counted and reported), and
/// free drops what is queued instead of waiting for a slow handler.
#[test]
fn events_are_bounded_and_free_does_not_wait_for_a_slow_handler() {
    let _s = serial();
    EV_SEEN.store(0, Ordering::SeqCst);
    EV_DROPPED.store(0, Ordering::SeqCst);
    EV_HOLD.store(true, Ordering::SeqCst);
    let rt = new_rt(r#"{"limits":{"max_queued_events":16}}"#);
    let st = unsafe {
        ht_runtime_set_event_handler(
            rt.0,
            Some(slow_events),
            std::ptr::null_mut(),
            None,
            std::ptr::null_mut(),
        )
    };
    assert_eq!(st, Status::Ok);
    emit(&rt, 1);
    wait_for(&EV_SEEN, 1); // the handler now holds the callbacks thread
    emit(&rt, 1000);
    let callbacks = unsafe { (*rt.0).runtime().core().callbacks.clone() };
    assert!(callbacks.queued() <= 17, "queued: {}", callbacks.queued());
    EV_HOLD.store(false, Ordering::SeqCst);
    wait_for(&EV_SEEN, 17);
    assert_eq!(EV_SEEN.load(Ordering::SeqCst), 17, "1 running + 16 queued");
    assert_eq!(
        EV_DROPPED.load(Ordering::SeqCst),
        984,
        "drops are counted and reported"
    );
    // Free with a full queue behind a held handler: the queue is dropped.
    EV_SEEN.store(0, Ordering::SeqCst);
    EV_HOLD.store(true, Ordering::SeqCst);
    emit(&rt, 1);
    wait_for(&EV_SEEN, 1);
    emit(&rt, 16);
    // Free does not wait for the held handler; it is let go afterwards.
    assert!(free_within(rt, Duration::from_secs(10)));
    EV_HOLD.store(false, Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        EV_SEEN.load(Ordering::SeqCst),
        1,
        "queued events are not delivered after free"
    );
}

/// Item 11: error messages are one line (already so on main: a guard).
#[test]
fn error_messages_are_one_line() {
    let _s = serial();
    let rt = new_rt("{}");
    let name = "bad\nname\r\x1b[31m\t";
    let mut err = std::ptr::null_mut();
    let st = unsafe {
        ht_runtime_deregister_tool(rt.0, name.as_ptr() as *const c_char, name.len(), &mut err)
    };
    assert_ne!(st, Status::Ok);
    let msg = err_text(err);
    assert!(
        !msg.chars().any(char::is_control),
        "raw control characters: {msg:?}"
    );
    assert!(msg.contains("bad") && msg.contains("name"), "{msg}");
}

/// Item 11: `sandbox_ro_binds` under /tmp or /run come after the tmpfs that
/// would hide them.
#[test]
fn sandbox_ro_binds_under_tmp_and_run_come_after_their_tmpfs() {
    use hermes_tools::exec::sandbox::{Sandbox, SandboxConfig};
    let _s = serial();
    let dir = std::env::temp_dir().join(format!("ht-faults-ro-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let root = std::env::current_dir().unwrap();
    let Ok(sb) = Sandbox::new(&SandboxConfig {
        root: root.clone(),
        network: false,
        proxy: None,
        ro_binds: vec![dir.clone(), PathBuf::from("/run"), PathBuf::from("/usr")],
        rw_binds: vec![],
        limits: Default::default(),
    }) else {
        eprintln!("no bubblewrap: skipped");
        return;
    };
    let env = vec![];
    let argv = sb.argv(
        &hermes_tools::exec::SpawnRequest {
            script: "true",
            cwd: &root,
            env: &env,
            pty: false,
            extra_rw: &[],
            task: "",
            linger: false,
        },
        None,
    );
    let pos = |xs: &[&str]| {
        argv.windows(xs.len())
            .position(|w| w.iter().zip(xs).all(|(a, b)| a == b))
            .unwrap_or_else(|| panic!("{xs:?} not in {argv:?}"))
    };
    let d = dir.display().to_string();
    assert!(
        pos(&["--ro-bind", &d, &d]) > pos(&["--tmpfs", "/tmp"]),
        "{argv:?}"
    );
    assert!(
        pos(&["--ro-bind", "/run", "/run"]) > pos(&["--tmpfs", "/run"]),
        "{argv:?}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

unsafe extern "C" fn park_silently(_: *mut c_void, _call: *mut ht_call) {}

/// Issue 10 ("pending calls"): async calls in flight are capped per runtime.
#[test]
fn async_calls_in_flight_are_capped() {
    let _s = serial();
    let rt = new_rt(r#"{"limits":{"max_calls_in_flight":3}}"#);
    add(&rt, &spec("parked", "t", "{}"), park_silently);
    let done: Vec<_> = (0..3).map(|_| new_done()).collect();
    for d in &done {
        assert_eq!(start_async(&rt, "parked", "{}", "", d).0, Status::Ok);
    }
    let extra = new_done();
    let mut err = std::ptr::null_mut();
    let mut id = 0;
    let st = unsafe {
        ht_runtime_dispatch_async(
            rt.0,
            "parked".as_ptr() as *const c_char,
            6,
            "{}".as_ptr() as *const c_char,
            2,
            std::ptr::null(),
            0,
            Some(on_done),
            extra as *const Done as *mut c_void,
            &mut id,
            &mut err,
        )
    };
    assert_eq!(st, Status::Unsupported);
    assert!(err_text(err).contains("limits.max_calls_in_flight (3)"));
    drop(rt);
    for d in &done {
        assert_eq!(d.calls.load(Ordering::SeqCst), 1);
    }
    assert_eq!(
        extra.calls.load(Ordering::SeqCst),
        0,
        "a refused call never completes"
    );
}
