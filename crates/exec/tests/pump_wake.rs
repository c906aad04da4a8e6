//! The synchronous driver sleeps until something happens: cancellation
//! wakes its `poll(2)` through an eventfd instead of a 50 ms polling
//! interval (the old driver made about 20 rounds a second while a cancel
//! token was attached). Counted in rounds, not timed.

use hermes_exec::pump::{Ended, PumpOpts, poll_rounds, pump};
use hermes_exec::{CancelToken, Environment, SpawnRequest, local::Local};
use std::time::{Duration, Instant};

fn run(script: &str, cancel: &CancelToken) -> (i32, Ended, u64, Duration) {
    let env: Vec<(String, String)> = vec![("PATH".into(), "/usr/bin:/bin".into())];
    let cwd = std::env::temp_dir();
    let req = SpawnRequest {
        script,
        cwd: &cwd,
        env: &env,
        pty: false,
        extra_rw: &[],
        task: "",
        linger: false,
    };
    let sp = Local.spawn(&req).expect("spawn");
    let opts = PumpOpts {
        cancel: Some(cancel),
        timeout: Some(Duration::from_secs(30)),
        ..PumpOpts::default()
    };
    let before = poll_rounds();
    let t = Instant::now();
    let (code, ended) = pump(sp.pid, &sp.output, &Local, &opts, &mut |_| {});
    (code, ended, poll_rounds() - before, t.elapsed())
}

#[test]
fn an_attached_cancel_token_does_not_make_the_driver_poll() {
    let token = CancelToken::new();
    let (code, ended, rounds, took) = run("sleep 1.5", &token);
    assert_eq!((code, ended), (0, Ended::Exited));
    // Exit (pidfd) and the drain: a handful of rounds, not 1.5 s / 50 ms = 30.
    assert!(rounds <= 8, "{rounds} poll rounds in {took:?}");
}

#[test]
fn cancellation_wakes_the_wait_and_ends_the_tree() {
    let token = CancelToken::new();
    let t2 = token.clone();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        t2.cancel();
    });
    let (code, ended, rounds, took) = run("sleep 20 & sleep 20; wait", &token);
    canceller.join().unwrap();
    assert_eq!((code, ended), (130, Ended::Cancelled));
    assert!(took < Duration::from_secs(10), "cancel took {took:?}");
    assert!(rounds <= 10, "{rounds} poll rounds in {took:?}");
}

#[test]
fn a_token_cancelled_before_the_start_ends_the_run_at_once() {
    let token = CancelToken::new();
    token.cancel();
    let (code, ended, _, _) = run("sleep 20", &token);
    assert_eq!((code, ended), (130, Ended::Cancelled));
}
