//! Helpers for Rust tests that drive the C API like a host would.
#![allow(dead_code)]

pub mod terminal;

use hermes_tools::Status;
use hermes_tools::ffi::api::*;
use hermes_tools::ffi::ht_error;
use hermes_tools::host::{ht_call, ht_hook};
use std::ffi::{CStr, c_char, c_void};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

pub struct Rt(pub *mut ht_runtime);
unsafe impl Send for Rt {}
unsafe impl Sync for Rt {}

impl Drop for Rt {
    fn drop(&mut self) {
        unsafe { ht_runtime_free(self.0) }
    }
}

pub fn err_text(err: *mut ht_error) -> String {
    if err.is_null() {
        return String::new();
    }
    let s = unsafe { CStr::from_ptr(ht_error_message(err)) }
        .to_string_lossy()
        .into_owned();
    unsafe { ht_error_free(err) };
    s
}

pub fn new_rt(config: &str) -> Rt {
    try_new_rt(config).unwrap_or_else(|(s, m)| panic!("runtime: {s:?} {m}"))
}

pub fn try_new_rt(config: &str) -> Result<Rt, (Status, String)> {
    let mut rt = std::ptr::null_mut();
    let mut err = std::ptr::null_mut();
    let st = unsafe {
        ht_runtime_new(
            config.as_ptr() as *const c_char,
            config.len(),
            &mut rt,
            &mut err,
        )
    };
    if st == Status::Ok {
        Ok(Rt(rt))
    } else {
        Err((st, err_text(err)))
    }
}

pub type Handler = unsafe extern "C" fn(*mut c_void, *mut ht_call);
pub type CheckFnT = unsafe extern "C" fn(*mut c_void) -> bool;

pub fn register(
    rt: &Rt,
    spec: &str,
    h: Handler,
    check: Option<CheckFnT>,
    ud: *mut c_void,
) -> Result<(), (Status, String)> {
    let mut err = std::ptr::null_mut();
    let st = unsafe {
        ht_runtime_register_tool(
            rt.0,
            spec.as_ptr() as *const c_char,
            spec.len(),
            Some(h),
            check,
            ud,
            None,
            &mut err,
        )
    };
    if st == Status::Ok {
        Ok(())
    } else {
        Err((st, err_text(err)))
    }
}

/// Register a tool with no check and no user_data; panics on failure.
pub fn add(rt: &Rt, spec: &str, h: Handler) {
    register(rt, spec, h, None, std::ptr::null_mut())
        .unwrap_or_else(|(s, m)| panic!("register: {s:?} {m}"));
}

pub fn take(p: *mut c_char, n: usize) -> String {
    let s = unsafe { std::str::from_utf8(std::slice::from_raw_parts(p as *const u8, n)) }
        .unwrap()
        .to_string();
    unsafe { ht_string_free(p) };
    s
}

pub fn definitions(rt: &Rt, q: &str) -> Result<String, (Status, String)> {
    let mut out = std::ptr::null_mut();
    let mut n = 0;
    let mut err = std::ptr::null_mut();
    let st = unsafe {
        ht_runtime_definitions_json(
            rt.0,
            q.as_ptr() as *const c_char,
            q.len(),
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

pub fn def_names(rt: &Rt, q: &str) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_str(&definitions(rt, q).unwrap()).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|d| {
            d["function"]["name"]
                .as_str()
                .or(d["name"].as_str())
                .unwrap()
                .to_string()
        })
        .collect()
}

/// A dispatch context argument: "" means NULL, 0.
pub fn ctx_arg(ctx: &str) -> (*const c_char, usize) {
    if ctx.is_empty() {
        (std::ptr::null(), 0)
    } else {
        (ctx.as_ptr() as *const c_char, ctx.len())
    }
}

pub fn dispatch_ctx(rt: &Rt, name: &str, args: &str, ctx: &str) -> String {
    let mut out = std::ptr::null_mut();
    let mut n = 0;
    let mut err = std::ptr::null_mut();
    let (cp, cl) = ctx_arg(ctx);
    let st = unsafe {
        ht_runtime_dispatch(
            rt.0,
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
    assert_eq!(st, Status::Ok, "dispatch: {}", err_text(err));
    take(out, n)
}

pub fn dispatch(rt: &Rt, name: &str, args: &str) -> String {
    dispatch_ctx(rt, name, args, "")
}

pub fn args_of(call: *mut ht_call) -> String {
    let mut n = 0;
    let p = unsafe { ht_call_args_json(call, &mut n) };
    assert!(!p.is_null());
    unsafe { std::str::from_utf8(std::slice::from_raw_parts(p as *const u8, n)) }
        .unwrap()
        .to_string()
}

pub fn respond(call: *mut ht_call, is_error: bool, text: &str) -> Status {
    unsafe { ht_call_respond(call, is_error, text.as_ptr() as *const c_char, text.len()) }
}

/// Echo the arguments back.
pub unsafe extern "C" fn echo(_: *mut c_void, call: *mut ht_call) {
    let a = args_of(call);
    respond(call, false, &a);
}

pub fn spec(name: &str, toolset: &str, params: &str) -> String {
    format!(
        r#"{{"name":"{name}","toolset":"{toolset}","schema":{{"description":"{name} tool","parameters":{params}}}}}"#
    )
}

pub fn json(s: &str) -> serde_json::Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("not JSON ({e}): {s}"))
}

pub fn add_hook(rt: &Rt, event: &str, f: unsafe extern "C" fn(*mut c_void, *mut ht_hook)) {
    let st = unsafe {
        ht_runtime_add_hook(
            rt.0,
            event.as_ptr() as *const c_char,
            event.len(),
            Some(f),
            std::ptr::null_mut(),
            None,
            std::ptr::null_mut(),
        )
    };
    assert_eq!(st, Status::Ok);
}

/// What an async completion saw (leaked: completions may outlive a test's frame).
pub struct Done {
    pub calls: AtomicUsize,
    pub status: Mutex<Option<Status>>,
    pub result: Mutex<String>,
    pub thread: Mutex<Option<std::thread::ThreadId>>,
}

pub unsafe extern "C" fn on_done(ud: *mut c_void, st: Status, r: *const c_char, n: usize) {
    let d = unsafe { &*(ud as *const Done) };
    *d.status.lock().unwrap() = Some(st);
    *d.result.lock().unwrap() =
        String::from_utf8_lossy(unsafe { std::slice::from_raw_parts(r as *const u8, n) })
            .into_owned();
    *d.thread.lock().unwrap() = Some(std::thread::current().id());
    d.calls.fetch_add(1, Ordering::SeqCst);
}

pub fn new_done() -> &'static Done {
    Box::leak(Box::new(Done {
        calls: AtomicUsize::new(0),
        status: Mutex::new(None),
        result: Mutex::new(String::new()),
        thread: Mutex::new(None),
    }))
}

pub fn start_async(rt: &Rt, name: &str, args: &str, ctx: &str, d: &'static Done) -> (Status, u64) {
    let mut id = 0;
    let (cp, cl) = ctx_arg(ctx);
    let st = unsafe {
        ht_runtime_dispatch_async(
            rt.0,
            name.as_ptr() as *const c_char,
            name.len(),
            args.as_ptr() as *const c_char,
            args.len(),
            cp,
            cl,
            Some(on_done),
            d as *const Done as *mut c_void,
            &mut id,
            std::ptr::null_mut(),
        )
    };
    (st, id)
}

/// Wait (bounded) for a completion; returns how many times it ran.
pub fn wait_calls(d: &Done, max_ms: u64) -> usize {
    for _ in 0..max_ms / 10 {
        if d.calls.load(Ordering::SeqCst) > 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    std::thread::sleep(std::time::Duration::from_millis(20));
    d.calls.load(Ordering::SeqCst)
}

/// Register a JSON array of specs in one call, all answered by `echo`.
pub fn register_bulk(rt: &Rt, specs: &str) -> Result<usize, (Status, String)> {
    let (mut count, mut err) = (0usize, std::ptr::null_mut());
    let st = unsafe {
        ht_runtime_register_tools(
            rt.0,
            specs.as_ptr() as *const c_char,
            specs.len(),
            Some(echo),
            None,
            std::ptr::null_mut(),
            None,
            &mut count,
            &mut err,
        )
    };
    if st == Status::Ok {
        Ok(count)
    } else {
        Err((st, err_text(err)))
    }
}
