//! The daytona backend against a local contract server written from
//! Daytona's published API (the subset the backend uses): the sandbox API
//! (`/sandbox`, start, stop, delete) and the toolbox API (`process/session`,
//! `exec` with `runAsync`, the `logs?follow=true` WebSocket with the
//! daemon's stream markers, the command's exit code, `process/execute`,
//! files). The server runs the commands on this machine with bash, so the
//! terminal's state, kills by mark and files behave as in a sandbox.
//! Faults: 5xx on create, a cut output stream, a sandbox that disappears,
//! a wrong key. No credentials here: the live test runs only when
//! DAYTONA_API_KEY is set.

mod common;
mod daytona_server;

use hermes_exec::Environment;
use hermes_exec::daytona::{DaytonaConfig, backend};
use hermes_exec::host::HostBackend;
use hermes_exec::pump::Ended;
use hermes_exec::remote_fs::RemoteShell;
use std::net::TcpListener;
use std::path::Path;
use std::time::{Duration, Instant};

use daytona_server::{KEY, Server};

fn run(b: &HostBackend, task: &str, script: &str, timeout: Duration) -> (i32, Ended, String) {
    common::run_remote(b, task, script, Path::new("/tmp"), timeout)
}

fn cfg(api: String) -> DaytonaConfig {
    DaytonaConfig {
        api_url: api,
        api_key: KEY.into(),
        image: Some("debian:12".into()),
        name_prefix: "hermes-".into(),
        ..Default::default()
    }
}

#[test]
fn commands_files_and_faults_against_the_contract_server() {
    let srv = Server::start();
    let (env, client) = backend(cfg(srv.api())).unwrap();
    let b = HostBackend(env.clone());

    // boot and a command; its output streamed, its status kept
    let out = env
        .run_script("t1", "echo hi; echo e >&2; exit 2", b"")
        .unwrap();
    assert_eq!(
        (out.code, out.stdout.as_slice(), out.stderr.as_slice()),
        (2, &b"hi\n"[..], &b"e\n"[..])
    );
    let before = client.requests();
    let (code, _, text) = run(
        &b,
        "t1",
        "echo one; echo two >&2; exit 5",
        Duration::from_secs(20),
    );
    assert_eq!((code, text.as_str()), (5, "one\ntwo\n"));
    // exec, the log stream, the exit code: three round trips, no polling
    assert_eq!(client.requests() - before, 3);

    // stdin-fed scripts and the file API
    let p = std::env::temp_dir().join(format!("ht-daytona-{}.txt", std::process::id()));
    let fs = b.files("t1").unwrap();
    fs.write_atomic(&p, b"via upload", None).unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), b"via upload");
    assert_eq!(fs.read(&p).unwrap(), b"via upload");
    let dir = p.parent().unwrap();
    assert!(
        fs.read_dir(dir)
            .unwrap()
            .iter()
            .any(|e| p.ends_with(&e.name))
    );
    assert_eq!(
        fs.read(&dir.join("nope-ht")).unwrap_err().kind(),
        std::io::ErrorKind::NotFound
    );
    let out = env.run_script("t1", "cat", b"fed through base64").unwrap();
    assert_eq!(out.stdout, b"fed through base64");
    let _ = std::fs::remove_file(&p);

    // a timeout: killed inside by its mark (process/execute)
    let t0 = Instant::now();
    let (_, ended, text) = run(
        &b,
        "t1",
        "echo start; sleep 30; echo never",
        Duration::from_millis(800),
    );
    assert_eq!(ended, Ended::TimedOut);
    assert!(t0.elapsed() < Duration::from_secs(8), "{:?}", t0.elapsed());
    assert!(text.starts_with("start"), "{text}");
    assert!(
        srv.state
            .lock()
            .unwrap()
            .log
            .iter()
            .any(|l| l.ends_with("/process/execute"))
    );

    // a cut output stream is said so
    srv.state.lock().unwrap().faults.cut_next_stream = true;
    let (code, _, text) = run(
        &b,
        "t1",
        "echo a; sleep 0.3; echo b",
        Duration::from_secs(20),
    );
    assert_eq!(code, 255);
    assert!(text.contains("connection lost"), "{text}");

    // a sandbox that disappears: said so, and the next command creates a new one
    srv.state.lock().unwrap().sandboxes.clear();
    let (code, _, text) = run(&b, "t1", "echo x", Duration::from_secs(20));
    assert_eq!(code, 255);
    assert!(text.contains("disappeared"), "{text}");
    let (code, _, text) = run(&b, "t1", "echo back", Duration::from_secs(20));
    assert_eq!((code, text.as_str()), (0, "back\n"));

    // 5xx on create: a clear error, then it works
    srv.state.lock().unwrap().faults.create_5xx = 1;
    let (code, _, text) = run(&b, "t2", "echo y", Duration::from_secs(20));
    assert_eq!(code, 255);
    assert!(
        text.contains("HTTP 503") && text.contains("no capacity"),
        "{text}"
    );
    let (code, _, _) = run(&b, "t2", "echo y", Duration::from_secs(20));
    assert_eq!(code, 0);

    // cleanup deletes (not persistent)
    let n = srv.state.lock().unwrap().sandboxes.len();
    b.cleanup_task("t2");
    assert_eq!(srv.state.lock().unwrap().sandboxes.len(), n - 1);
    b.cleanup();
    assert!(srv.state.lock().unwrap().sandboxes.is_empty());
    assert_eq!(srv.state.lock().unwrap().bad_auth, 0);
}

#[test]
fn a_wrong_key_is_a_clear_error_without_the_key() {
    let srv = Server::start();
    let mut c = cfg(srv.api());
    c.api_key = "wrong-key-value".into();
    let (env, _) = backend(c).unwrap();
    let e = match env.run_script("t", "true", b"") {
        Err(e) => e.to_string(),
        Ok(o) => String::from_utf8_lossy(&o.stderr).into_owned(),
    };
    assert!(
        e.contains("401") && e.contains("Invalid credentials"),
        "{e}"
    );
    assert!(!e.contains("wrong-key-value"), "{e}");
}

#[test]
fn a_lost_server_is_a_clear_error() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    let (env, _) = backend(cfg(format!("http://127.0.0.1:{port}/api"))).unwrap();
    let e = match env.run_script("t", "true", b"") {
        Err(e) => e.to_string(),
        Ok(o) => String::from_utf8_lossy(&o.stderr).into_owned(),
    };
    assert!(e.to_lowercase().contains("refused"), "{e}");
}

/// Against Daytona itself, only with credentials.
#[test]
fn live_when_credentials_are_present() {
    let Ok(key) = std::env::var("DAYTONA_API_KEY") else {
        eprintln!("SKIPPED: DAYTONA_API_KEY is not set (live Daytona test)");
        return;
    };
    let api =
        std::env::var("DAYTONA_API_URL").unwrap_or_else(|_| "https://app.daytona.io/api".into());
    let (env, client) = backend(DaytonaConfig {
        api_url: api,
        api_key: key,
        name_prefix: format!("hermes-tools-test-{}-", std::process::id()),
        ..Default::default()
    })
    .unwrap();
    let out = env.run_script("live", "echo hi", b"").unwrap();
    assert_eq!(out.stdout, b"hi\n");
    let b = HostBackend(env.clone());
    let before = client.requests();
    let (code, _, text) = run(&b, "live", "echo hi", Duration::from_secs(60));
    eprintln!(
        "live: echo hi -> {code} {text:?}, {} requests",
        client.requests() - before
    );
    b.cleanup();
}
