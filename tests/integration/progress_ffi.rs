//! `ht_call_progress` (issue 11): a host tool's progress reaches the host's
//! event handler as a `tool.progress` event carrying the call id, the
//! context's `tool_call_id`/`task_id`/`progress_token`; the Rust-level
//! `Runtime::call_progress` does the same; bad input and finished calls get
//! clear statuses.

use crate::common::*;
use hermes_tools::Status;
use hermes_tools::ffi::api::*;
use hermes_tools::ffi::progress::ht_call_progress;
use hermes_tools::host::ht_call;
use serde_json::Value;
use std::ffi::{c_char, c_void};
use std::ptr::{null, null_mut};
use std::sync::Mutex;
use std::time::{Duration, Instant};

static EVENTS: Mutex<Vec<Value>> = Mutex::new(Vec::new());
static CALLS: Mutex<Vec<usize>> = Mutex::new(Vec::new());

unsafe extern "C" fn on_event(_ud: *mut c_void, json: *const c_char, len: usize) {
    let s = unsafe { std::slice::from_raw_parts(json as *const u8, len) };
    if let Ok(v) = serde_json::from_slice::<Value>(s) {
        EVENTS.lock().unwrap().push(v);
    }
}

unsafe extern "C" fn reports(_: *mut c_void, call: *mut ht_call) {
    CALLS.lock().unwrap().push(call as usize);
    let msg = "half way";
    assert_eq!(
        unsafe { ht_call_progress(call, 1.0, 2.0, msg.as_ptr() as *const c_char, msg.len()) },
        Status::Ok
    );
    // Unknown total, no message.
    assert_eq!(
        unsafe { ht_call_progress(call, 2.0, 0.0, null(), 0) },
        Status::Ok
    );
    assert_eq!(
        unsafe { ht_call_progress(call, f64::NAN, 0.0, null(), 0) },
        Status::InvalidArgument
    );
    let bad = [0xffu8];
    assert_eq!(
        unsafe { ht_call_progress(call, 1.0, 0.0, bad.as_ptr() as *const c_char, 1) },
        Status::InvalidUtf8
    );
    respond(call, false, "done");
    // After the answer the call is gone.
    assert_eq!(
        unsafe { ht_call_progress(call, 3.0, 0.0, null(), 0) },
        Status::NotFound
    );
}

fn progress_events(n: usize) -> Vec<Value> {
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        let got: Vec<Value> = EVENTS
            .lock()
            .unwrap()
            .iter()
            .filter(|v| v["type"] == "tool.progress")
            .cloned()
            .collect();
        if got.len() >= n || Instant::now() > until {
            return got;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn progress_reaches_the_event_handler() {
    let rt = new_rt("{}");
    let st =
        unsafe { ht_runtime_set_event_handler(rt.0, Some(on_event), null_mut(), None, null_mut()) };
    assert_eq!(st, Status::Ok);
    add(&rt, &spec("long", "t", "{}"), reports);
    let out = dispatch_ctx(
        &rt,
        "long",
        "{}",
        r#"{"task_id":"t1","tool_call_id":"call_7","progress_token":"tok-1"}"#,
    );
    assert_eq!(out, "done");
    let ev = progress_events(2);
    assert_eq!(ev.len(), 2, "{ev:?}");
    let call = CALLS.lock().unwrap()[0] as u64;
    assert_eq!(ev[0]["call"], call);
    assert_eq!(ev[0]["tool_name"], "long");
    assert_eq!(ev[0]["tool_call_id"], "call_7");
    assert_eq!(ev[0]["task_id"], "t1");
    assert_eq!(ev[0]["progress_token"], "tok-1");
    assert_eq!(ev[0]["progress"], 1.0);
    assert_eq!(ev[0]["total"], 2.0);
    assert_eq!(ev[0]["message"], "half way");
    assert!(
        ev[1].get("total").is_none() && ev[1].get("message").is_none(),
        "{}",
        ev[1]
    );
    // NULL and unknown handles.
    assert_eq!(
        unsafe { ht_call_progress(null_mut(), 1.0, 0.0, null(), 0) },
        Status::InvalidArgument
    );
    assert_eq!(
        unsafe { ht_call_progress(12345 as *mut ht_call, 1.0, 0.0, null(), 0) },
        Status::NotFound
    );
}
