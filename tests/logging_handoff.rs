//! Lines logged while a host log handler is installed reach that handler
//! even when it is removed before the log thread delivers them (the Python
//! binding's `test_log_handler` lost them under load: the log thread looked
//! up the handler at delivery time). Its free function runs once, after its
//! last line. Its own test binary: the log handler is process-wide.

mod common;
use common::*;
use hermes_tools::Status;
use hermes_tools::ffi::api::*;
use std::ffi::{c_char, c_void};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

static GATE: AtomicBool = AtomicBool::new(true);
static LINES: AtomicUsize = AtomicUsize::new(0);
static LINES_AT_FREE: AtomicUsize = AtomicUsize::new(usize::MAX);
static FREES: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn slow_handler(_: *mut c_void, _level: i32, _line: *const c_char, _n: usize) {
    // The first line holds the log thread until the test has queued more
    // lines and removed the handler.
    let end = Instant::now() + Duration::from_secs(10);
    while GATE.load(Ordering::SeqCst) && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(2));
    }
    LINES.fetch_add(1, Ordering::SeqCst);
}

unsafe extern "C" fn on_free(_: *mut c_void) {
    LINES_AT_FREE.store(LINES.load(Ordering::SeqCst), Ordering::SeqCst);
    FREES.fetch_add(1, Ordering::SeqCst);
}

#[test]
fn removing_the_handler_loses_no_queued_line() {
    assert_eq!(
        unsafe { ht_set_log_handler(Some(slow_handler), 4, std::ptr::null_mut(), Some(on_free)) },
        Status::Ok
    );
    let rt = new_rt("{}");
    // Each registration logs a debug line ("tool registered").
    for i in 0..6 {
        add(
            &rt,
            &spec(&format!("t{i}"), "s", r#"{"type":"object"}"#),
            echo,
        );
    }
    // Removed while the first line is still being delivered and the rest queued.
    assert_eq!(
        unsafe { ht_set_log_handler(None, 4, std::ptr::null_mut(), None) },
        Status::Ok
    );
    GATE.store(false, Ordering::SeqCst);
    hermes_tools::logging::flush();
    let lines = LINES.load(Ordering::SeqCst);
    assert!(
        lines >= 6,
        "only {lines} of the 6+ lines logged while installed were delivered"
    );
    assert_eq!(FREES.load(Ordering::SeqCst), 1, "free ran once");
    assert_eq!(
        LINES_AT_FREE.load(Ordering::SeqCst),
        lines,
        "free ran after the last line"
    );
}
