//! Host-defined environments through the C ABI (issue 33), with C-style
//! callbacks written in Rust: a provider that runs each command as a real
//! `bash` subprocess. Contract: NULL and bad arguments, names, exactly-once
//! free, answers to finished or unknown objects, one spawn per terminal
//! command, file operations with errors, and `echo hi` timed against bash.

use hermes_tools::Status;
use hermes_tools::ffi::api::*;
use hermes_tools::ffi::environment::*;
use hermes_tools::ffi::ht_error;
use serde_json::Value;
use std::collections::HashMap;
use std::ffi::{c_char, c_void};
use std::io::{Read, Write};
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Default)]
struct Provider {
    spawns: AtomicUsize,
    terminal_spawns: AtomicUsize,
    kills: Mutex<Vec<(u64, i32)>>,
    pids: Mutex<HashMap<u64, i32>>,
    files: Mutex<Vec<Value>>,
    cleanups: Mutex<Vec<Option<String>>>,
    freed: AtomicUsize,
}

struct Ptr(*mut ht_exec);
unsafe impl Send for Ptr {}

fn exec_json(exec: *mut ht_exec) -> Value {
    let mut n = 0usize;
    let p = unsafe { ht_exec_request_json(exec, &mut n) };
    assert!(!p.is_null());
    serde_json::from_slice(unsafe { std::slice::from_raw_parts(p as *const u8, n) }).unwrap()
}

unsafe extern "C" fn spawn_cb(ud: *mut c_void, exec: *mut ht_exec) {
    let prov = unsafe { &*(ud as *const Provider) };
    prov.spawns.fetch_add(1, Ordering::SeqCst);
    let req = exec_json(exec);
    if !req["capture"].as_bool().unwrap() {
        prov.terminal_spawns.fetch_add(1, Ordering::SeqCst);
    }
    let argv: Vec<String> = serde_json::from_value(req["argv"].clone()).unwrap();
    let mut n = 0usize;
    let sp = unsafe { ht_exec_stdin(exec, &mut n) };
    let stdin = unsafe { std::slice::from_raw_parts(sp, n) }.to_vec();
    use std::os::unix::process::CommandExt;
    let mut child = std::process::Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    prov.pids
        .lock()
        .unwrap()
        .insert(req["id"].as_u64().unwrap(), child.id() as i32);
    let mut sin = child.stdin.take().unwrap();
    std::thread::spawn(move || {
        let _ = sin.write_all(&stdin);
    });
    let e = Ptr(exec);
    std::thread::spawn(move || {
        let e = e;
        let mut err = child.stderr.take().unwrap();
        let errt = std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = err.read_to_end(&mut v);
            v
        });
        let mut out = child.stdout.take().unwrap();
        let mut buf = [0u8; 8192];
        while let Ok(n) = out.read(&mut buf) {
            if n == 0 || unsafe { ht_exec_output(e.0, 1, buf.as_ptr(), n) } != Status::Ok {
                break;
            }
        }
        let errb = errt.join().unwrap();
        unsafe { ht_exec_output(e.0, 2, errb.as_ptr(), errb.len()) };
        let code = child.wait().unwrap().code().unwrap_or(-9);
        assert_eq!(unsafe { ht_exec_finish(e.0, code, null(), 0) }, Status::Ok);
        // answered: the exec is gone
        assert_eq!(
            unsafe { ht_exec_finish(e.0, 0, null(), 0) },
            Status::NotFound
        );
        assert_eq!(
            unsafe { ht_exec_output(e.0, 1, b"x".as_ptr(), 1) },
            Status::NotFound
        );
        assert!(unsafe { ht_exec_request_json(e.0, null_mut()) }.is_null());
    });
}

unsafe extern "C" fn kill_cb(ud: *mut c_void, id: u64, signal: i32) {
    let prov = unsafe { &*(ud as *const Provider) };
    prov.kills.lock().unwrap().push((id, signal));
    if let Some(pid) = prov.pids.lock().unwrap().get(&id) {
        unsafe { libc::killpg(*pid, signal) };
    }
}

unsafe extern "C" fn file_cb(ud: *mut c_void, op: *mut ht_env_file_op) {
    let prov = unsafe { &*(ud as *const Provider) };
    let mut n = 0usize;
    let p = unsafe { ht_env_file_op_json(op, &mut n) };
    let req: Value =
        serde_json::from_slice(unsafe { std::slice::from_raw_parts(p as *const u8, n) }).unwrap();
    prov.files.lock().unwrap().push(req.clone());
    let path = req["path"].as_str().unwrap().to_string();
    let answer = |r: std::io::Result<Vec<u8>>| match r {
        Ok(d) => unsafe { ht_env_file_op_respond(op, 0, d.as_ptr(), d.len()) },
        Err(e) => {
            let m = e.to_string();
            unsafe {
                ht_env_file_op_respond(op, e.raw_os_error().unwrap_or(5), m.as_ptr(), m.len())
            }
        }
    };
    let st = match req["op"].as_str().unwrap() {
        "read" => answer(std::fs::read(&path)),
        "write" => {
            let dp = unsafe { ht_env_file_op_data(op, &mut n) };
            let data = unsafe { std::slice::from_raw_parts(dp, n) }.to_vec();
            answer(std::fs::write(&path, data).map(|_| Vec::new()))
        }
        _ => answer(std::fs::read_dir(&path).map(|rd| {
            let v: Vec<Value> = rd
                .flatten()
                .map(|e| {
                    serde_json::json!({"name": e.file_name().to_string_lossy(),
                                       "is_dir": e.path().is_dir()})
                })
                .collect();
            serde_json::to_vec(&v).unwrap()
        })),
    };
    assert_eq!(st, Status::Ok);
    assert_eq!(
        unsafe { ht_env_file_op_respond(op, 0, null(), 0) },
        Status::NotFound
    );
}

unsafe extern "C" fn cleanup_cb(ud: *mut c_void, task: *const c_char, len: usize) {
    let prov = unsafe { &*(ud as *const Provider) };
    let t = (!task.is_null()).then(|| {
        String::from_utf8_lossy(unsafe { std::slice::from_raw_parts(task as *const u8, len) })
            .into_owned()
    });
    prov.cleanups.lock().unwrap().push(t);
}

unsafe extern "C" fn free_cb(ud: *mut c_void) {
    let prov = unsafe { &*(ud as *const Provider) };
    prov.freed.fetch_add(1, Ordering::SeqCst);
}

fn new_env(spec: &str, prov: &Arc<Provider>) -> (Status, *mut ht_environment, String) {
    let mut env = null_mut();
    let mut err: *mut ht_error = null_mut();
    let st = unsafe {
        ht_environment_new(
            spec.as_ptr() as *const c_char,
            spec.len(),
            Some(spawn_cb),
            Some(kill_cb),
            Some(file_cb),
            Some(cleanup_cb),
            Arc::as_ptr(prov) as *mut c_void,
            Some(free_cb),
            &mut env,
            &mut err,
        )
    };
    let msg = if err.is_null() {
        String::new()
    } else {
        let m = unsafe { std::ffi::CStr::from_ptr(ht_error_message(err)) }
            .to_string_lossy()
            .into_owned();
        unsafe { ht_error_free(err) };
        m
    };
    (st, env, msg)
}

fn new_rt(cfg: &str, envs: &[*mut ht_environment]) -> Result<*mut ht_runtime, String> {
    let mut rt = null_mut();
    let mut err: *mut ht_error = null_mut();
    let list: Vec<*const ht_environment> = envs.iter().map(|e| *e as *const _).collect();
    let st = unsafe {
        ht_runtime_new_with_environments(
            cfg.as_ptr() as *const c_char,
            cfg.len(),
            list.as_ptr(),
            list.len(),
            &mut rt,
            &mut err,
        )
    };
    if st == Status::Ok {
        return Ok(rt);
    }
    let m = unsafe { std::ffi::CStr::from_ptr(ht_error_message(err)) }
        .to_string_lossy()
        .into_owned();
    unsafe { ht_error_free(err) };
    Err(m)
}

fn dispatch(rt: *mut ht_runtime, name: &str, args: &Value) -> Value {
    let args = args.to_string();
    let ctx = r#"{"task_id":"t1"}"#;
    let mut out: *mut c_char = null_mut();
    let mut len = 0usize;
    let mut err: *mut ht_error = null_mut();
    let st = unsafe {
        ht_runtime_dispatch(
            rt,
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
    let v = serde_json::from_slice(unsafe { std::slice::from_raw_parts(out as *const u8, len) })
        .unwrap();
    unsafe { ht_string_free(out) };
    v
}

#[test]
fn bad_arguments_and_names() {
    let prov = Arc::new(Provider::default());
    let spec = r#"{"name":"x"}"#;
    let mut err: *mut ht_error = null_mut();
    let mut env = null_mut();
    let st = unsafe {
        ht_environment_new(
            spec.as_ptr() as *const c_char,
            spec.len(),
            None,
            Some(kill_cb),
            None,
            None,
            null_mut(),
            None,
            &mut env,
            &mut err,
        )
    };
    assert_eq!(st, Status::InvalidArgument);
    unsafe { ht_error_free(err) };
    let st = unsafe {
        ht_environment_new(
            spec.as_ptr() as *const c_char,
            spec.len(),
            Some(spawn_cb),
            Some(kill_cb),
            None,
            None,
            null_mut(),
            None,
            null_mut(),
            null_mut(),
        )
    };
    assert_eq!(st, Status::InvalidArgument);
    let (st, _, msg) = new_env(r#"{"name":"ssh"}"#, &prov);
    assert_eq!(st, Status::InvalidArgument, "{msg}");
    assert!(msg.contains("built-in"), "{msg}");
    let (st, _, msg) = new_env(r#"{"name":"ok","colour":1}"#, &prov);
    assert_eq!(st, Status::InvalidJson, "{msg}");
    let (st, _, _) = new_env("{", &prov);
    assert_eq!(st, Status::InvalidJson);
    // a failed registration never frees the user data
    assert_eq!(prov.freed.load(Ordering::SeqCst), 0);
    // unknown objects: NULL accessors, NOT_FOUND answers
    let bogus = 0xdead_beef_usize as *mut ht_exec;
    assert!(unsafe { ht_exec_request_json(bogus, null_mut()) }.is_null());
    assert!(unsafe { ht_exec_stdin(bogus, null_mut()) }.is_null());
    assert_eq!(
        unsafe { ht_exec_finish(bogus, 0, null(), 0) },
        Status::NotFound
    );
    assert_eq!(
        unsafe { ht_exec_output(bogus, 1, null(), 3) },
        Status::InvalidArgument
    );
    let bop = 0xdead_beef_usize as *mut ht_env_file_op;
    assert!(unsafe { ht_env_file_op_json(bop, null_mut()) }.is_null());
    assert_eq!(
        unsafe { ht_env_file_op_respond(bop, 0, null(), 0) },
        Status::NotFound
    );
    unsafe { ht_environment_free(null_mut()) };
    // envs NULL with a count
    let mut rt = null_mut();
    let st = unsafe { ht_runtime_new_with_environments(null(), 0, null(), 2, &mut rt, null_mut()) };
    assert_eq!(st, Status::InvalidArgument);
    // the same environment twice
    let (st, env, _) = new_env(r#"{"name":"twice"}"#, &prov);
    assert_eq!(st, Status::Ok);
    let e = new_rt(r#"{"terminal":{"backend":"twice"}}"#, &[env, env]).unwrap_err();
    assert!(e.contains("twice"), "{e}");
    unsafe { ht_environment_free(env) };
    assert_eq!(prov.freed.load(Ordering::SeqCst), 1);
}

#[test]
fn terminal_and_files_through_a_host_environment() {
    let prov = Arc::new(Provider::default());
    let (st, env, msg) = new_env(
        r#"{"name":"rs-sub","location":"in a Rust subprocess"}"#,
        &prov,
    );
    assert_eq!(st, Status::Ok, "{msg}");
    let work = std::env::temp_dir().join(format!("ht-hostenv-ffi-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let cfg = serde_json::json!({
        "builtin_toolsets": ["terminal", "file"],
        "terminal": {"backend": "rs-sub", "cwd": work},
    })
    .to_string();
    let rt = new_rt(&cfg, &[env]).unwrap();
    unsafe { ht_environment_free(env) };
    // the runtime still holds it
    assert_eq!(prov.freed.load(Ordering::SeqCst), 0);

    let before = prov.terminal_spawns.load(Ordering::SeqCst);
    let all_before = prov.spawns.load(Ordering::SeqCst);
    let out = dispatch(rt, "terminal", &serde_json::json!({"command": "echo hi"}));
    assert_eq!(out["output"], "hi", "{out}");
    // one exec per command: no extra round trips for state
    assert_eq!(prov.terminal_spawns.load(Ordering::SeqCst) - before, 1);
    assert_eq!(prov.spawns.load(Ordering::SeqCst) - all_before, 1);

    let out = dispatch(
        rt,
        "terminal",
        &serde_json::json!({"command": "cd /tmp && export HT_V=1"}),
    );
    assert_eq!(out["exit_code"], 0, "{out}");
    let out = dispatch(
        rt,
        "terminal",
        &serde_json::json!({"command": "pwd; echo $HT_V"}),
    );
    assert_eq!(out["output"], "/tmp\n1", "{out}");

    let f = work.join("f.txt");
    let out = dispatch(
        rt,
        "write_file",
        &serde_json::json!({"path": f, "content": "abc"}),
    );
    assert_eq!(out["bytes_written"], 3, "{out}");
    let out = dispatch(rt, "read_file", &serde_json::json!({"path": f}));
    assert!(out["content"].as_str().unwrap().contains("abc"), "{out}");
    let out = dispatch(
        rt,
        "read_file",
        &serde_json::json!({"path": work.join("nope")}),
    );
    assert!(out["error"].is_string(), "{out}");
    let ops: Vec<String> = prov
        .files
        .lock()
        .unwrap()
        .iter()
        .map(|v| v["op"].as_str().unwrap().to_string())
        .collect();
    assert!(
        ops.contains(&"write".into()) && ops.contains(&"read".into()),
        "{ops:?}"
    );

    // the runtime's per-task cleanup reaches the provider
    let task = "t1";
    unsafe { ht_runtime_cleanup_task(rt, task.as_ptr() as *const c_char, task.len(), null_mut()) };
    assert!(
        prov.cleanups
            .lock()
            .unwrap()
            .contains(&Some("t1".to_string()))
    );

    // Figure: echo hi through dispatch vs the provider's own client (bash).
    let n = 20;
    let t0 = Instant::now();
    for _ in 0..n {
        dispatch(rt, "terminal", &serde_json::json!({"command": "echo hi"}));
    }
    let via = t0.elapsed() / n;
    let t0 = Instant::now();
    for _ in 0..n {
        let o = std::process::Command::new("bash")
            .args(["-c", "echo hi"])
            .output()
            .unwrap();
        assert_eq!(o.stdout, b"hi\n");
    }
    let direct = t0.elapsed() / n;
    // and the same dispatch on the built-in local backend
    let local = new_rt(
        &serde_json::json!({"builtin_toolsets": ["terminal"], "terminal": {"backend": "local", "cwd": work}})
            .to_string(),
        &[],
    )
    .unwrap();
    dispatch(
        local,
        "terminal",
        &serde_json::json!({"command": "echo hi"}),
    );
    let t0 = Instant::now();
    for _ in 0..n {
        dispatch(
            local,
            "terminal",
            &serde_json::json!({"command": "echo hi"}),
        );
    }
    let on_local = t0.elapsed() / n;
    unsafe { ht_runtime_free(local) };
    eprintln!(
        "host environment: echo hi through dispatch {via:?}, on the local backend {on_local:?}, the provider's bash alone {direct:?}"
    );

    unsafe { ht_runtime_free(rt) };
    assert!(prov.cleanups.lock().unwrap().contains(&None));
    // handle and runtime gone: the user data is freed, once
    let until = Instant::now() + Duration::from_secs(5);
    while prov.freed.load(Ordering::SeqCst) == 0 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(prov.freed.load(Ordering::SeqCst), 1);
    let _ = std::fs::remove_dir_all(&work);
}

/// The daytona backend is selected by the config, needs a key and never
/// shows it (its API is exercised by crates/exec/tests/daytona_contract.rs).
#[test]
fn daytona_backend_is_wired_and_keeps_its_key_out_of_errors() {
    let e = new_rt(
        r#"{"builtin_toolsets":["terminal"],"terminal":{"backend":"daytona","daytona":{"api_url":"http://127.0.0.1:9/api","api_key":""}}}"#,
        &[],
    )
    .unwrap_err();
    assert!(e.contains("DAYTONA_API_KEY"), "{e}");
    let e = new_rt(
        r#"{"builtin_toolsets":["terminal"],"terminal":{"backend":"daytona","daytona":{"api_url":"http://127.0.0.1:9/api","api_key":"dtn-very-secret"}}}"#,
        &[],
    )
    .unwrap_err();
    assert!(e.to_lowercase().contains("refused"), "{e}");
    assert!(!e.contains("dtn-very-secret"), "{e}");
    let e = new_rt(
        r#"{"terminal":{"backend":"daytona","daytona":{"colour":1}}}"#,
        &[],
    )
    .unwrap_err();
    assert!(e.contains("colour"), "{e}");
}
