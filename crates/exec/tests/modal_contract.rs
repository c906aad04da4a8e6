//! The modal backend against a local contract server (modal_server/)
//! written from Modal's published API definitions: gRPC over HTTP/2,
//! sandboxes as local folders, commands as real bash processes, output
//! streamed as RuntimeOutputBatch messages. Scenarios: a command's output
//! and status, the round trips per command (one ContainerExec, one
//! ContainerExecGetOutput), stdin-fed scripts and the file tools, a timeout
//! killed inside by its mark, cleanup terminating the sandboxes, a wrong
//! token, UNAVAILABLE and a dropped connection in the middle of a call
//! (then the next call works), HTTP 503, a sandbox that disappears (then a
//! new one). No credentials here: the live test runs only when
//! MODAL_TOKEN_ID and MODAL_TOKEN_SECRET are set.

#![cfg(feature = "modal")]

mod common;

#[path = "modal_server/mod.rs"]
mod modal_server;

use hermes_exec::Environment;
use hermes_exec::host::HostBackend;
use hermes_exec::modal::{Modal, ModalConfig, backend};
use hermes_exec::pump::Ended;
use hermes_exec::remote_fs::RemoteShell;
use modal_server::{BUILDER_VERSION, Server, TOKEN_ID, TOKEN_SECRET};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn run(b: &HostBackend, task: &str, script: &str, timeout: Duration) -> (i32, Ended, String) {
    common::run_remote(b, task, script, Path::new("/tmp"), timeout)
}

fn cfg(url: String) -> ModalConfig {
    ModalConfig {
        api_url: url,
        token_id: TOKEN_ID.into(),
        token_secret: TOKEN_SECRET.into(),
        image: "python:3.12-slim".into(),
        cpu: Some(0.5),
        memory_mb: Some(512),
        ..Default::default()
    }
}

fn setup() -> (Server, HostBackend, Arc<Modal>) {
    let srv = Server::start();
    let (env, client) = backend(cfg(srv.url())).unwrap();
    (srv, HostBackend(env), client)
}

#[test]
fn a_command_streams_its_output_in_two_round_trips() {
    let (srv, b, client) = setup();
    // first use: app, image (joined until built), sandbox, task id, boot
    let out =
        b.0.run_script("t1", "echo hi; echo e >&2; exit 2", b"")
            .unwrap();
    assert_eq!(
        (out.code, out.stdout.as_slice(), out.stderr.as_slice()),
        (2, &b"hi\n"[..], &b"e\n"[..])
    );
    {
        let st = srv.state.lock().unwrap();
        assert_eq!(
            st.image_commands,
            vec![vec!["FROM python:3.12-slim".to_string()]]
        );
        assert_eq!(st.builder_versions, vec![BUILDER_VERSION.to_string()]);
        assert_eq!(st.calls("ImageJoinStreaming"), 1);
        let sb = st.sandboxes.values().next().unwrap();
        let d = &sb.def;
        let res = d.resources.clone().unwrap();
        assert_eq!((res.milli_cpu, res.memory_mb), (500, 512));
        assert_eq!(d.network_access.clone().unwrap().network_access_type, 2);
        assert!(d.block_network && d.timeout_secs == 3600);
        assert!(
            st.client_types.iter().all(|c| c == "1/1.0.0"),
            "{:?}",
            st.client_types
        );
    }

    let calls = client.calls();
    let (execs, outs) = (
        srv.calls("ContainerExec"),
        srv.calls("ContainerExecGetOutput"),
    );
    let (code, _, text) = run(
        &b,
        "t1",
        "echo one; echo two >&2; for i in 1 2 3; do echo tick $i; sleep 0.1; done; exit 5",
        Duration::from_secs(20),
    );
    assert_eq!(
        (code, text.as_str()),
        (5, "one\ntwo\ntick 1\ntick 2\ntick 3\n")
    );
    let per_cmd = (
        srv.calls("ContainerExec") - execs,
        srv.calls("ContainerExecGetOutput") - outs,
    );
    println!(
        "modal round trips per command: {} ContainerExec + {} ContainerExecGetOutput (server count), {} calls (client count)",
        per_cmd.0,
        per_cmd.1,
        client.calls() - calls
    );
    assert_eq!(per_cmd, (1, 1));
    assert_eq!(client.calls() - calls, 2);
    assert_eq!(srv.state.lock().unwrap().bad_auth, 0);

    // the command ran in the task's sandbox folder, its own process group
    let out = b.0.run_script("t1", "echo $HOME", b"").unwrap();
    let home = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(home.contains("ht-modal-srv-"), "{home}");
    // a second task: a sandbox of its own
    let out = b.0.run_script("t2", "echo $HOME", b"").unwrap();
    let home2 = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(home2.contains("ht-modal-srv-") && home2 != home, "{home2}");
    assert_eq!(srv.alive(), 2);
    assert_eq!(srv.calls("AppGetOrCreate"), 1);
    assert_eq!(srv.calls("ImageGetOrCreate"), 1);
}

#[test]
fn stdin_and_files_go_through_exec() {
    let (srv, b, _client) = setup();
    // input through ContainerExecPutInput, larger than one piece
    let big: Vec<u8> = (0..(2 << 20) + 17).map(|i| (i % 251) as u8).collect();
    let out = b.0.run_script("t", "cat", &big).unwrap();
    assert_eq!(out.code, 0);
    assert!(out.stdout == big, "{} bytes back", out.stdout.len());
    assert_eq!(srv.calls("ContainerExecPutInput"), 3);

    let dir = std::env::temp_dir().join(format!("ht-modal-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("a.txt");
    let fs = b.files("t").unwrap();
    fs.write_atomic(&p, b"through modal", None).unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), b"through modal");
    assert_eq!(fs.read(&p).unwrap(), b"through modal");
    assert!(fs.read_dir(&dir).unwrap().iter().any(|e| e.name == "a.txt"));
    assert_eq!(
        fs.read(&dir.join("missing")).unwrap_err().kind(),
        std::io::ErrorKind::NotFound
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_timeout_kills_the_command_inside_by_its_mark() {
    let (srv, b, _client) = setup();
    let stamp = format!("ht-modal-sleep-{}", std::process::id());
    let t0 = Instant::now();
    let (_, ended, text) = run(
        &b,
        "t",
        &format!("echo start; exec -a {stamp} sleep 30; echo never"),
        Duration::from_millis(800),
    );
    assert_eq!(ended, Ended::TimedOut);
    assert!(t0.elapsed() < Duration::from_secs(8), "{:?}", t0.elapsed());
    assert!(text.starts_with("start"), "{text}");
    // the kill ran inside the sandbox (an exec of the mark's kill loop)
    let st = srv.state.lock().unwrap();
    let kills = st
        .execs
        .values()
        .filter(|e| e.st.lock().unwrap().argv.join(" ").contains("/environ"))
        .count();
    assert!(kills >= 1, "no kill exec");
    // and the command's exec ended, killed
    let ended = st.execs.values().any(|e| {
        let g = e.st.lock().unwrap();
        g.argv.join(" ").contains(&stamp) && g.code.is_some_and(|c| c != 0)
    });
    drop(st);
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut gone = ended;
    while !gone && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        gone = srv.state.lock().unwrap().execs.values().any(|e| {
            let g = e.st.lock().unwrap();
            g.argv.join(" ").contains(&stamp) && g.code.is_some()
        });
    }
    assert!(gone, "the sleeping command still runs in the sandbox");
    // the next command runs
    let (code, _, text) = run(&b, "t", "echo after", Duration::from_secs(20));
    assert_eq!((code, text.as_str()), (0, "after\n"));
}

#[test]
fn cleanup_terminates_the_sandboxes() {
    let (srv, b, _client) = setup();
    for t in ["a", "b", "c"] {
        let (code, _, _) = run(&b, t, "true", Duration::from_secs(20));
        assert_eq!(code, 0);
    }
    assert_eq!(srv.alive(), 3);
    b.cleanup_task("b");
    assert_eq!(srv.alive(), 2);
    assert_eq!(srv.calls("SandboxTerminate"), 1);
    b.cleanup();
    assert_eq!(srv.alive(), 0);
    assert_eq!(srv.calls("SandboxTerminate"), 3);
    assert_eq!(srv.state.lock().unwrap().terminated.len(), 3);
    // closed: no new sandbox
    let e =
        b.0.run_script("a", "true", b"")
            .err()
            .map(|e| e.to_string());
    assert!(e.is_some_and(|e| e.contains("closed")));
}

#[test]
fn a_wrong_token_is_a_clear_error_without_the_token() {
    let srv = Server::start();
    let mut c = cfg(srv.url());
    c.token_secret = "as-wrong-secret-value".into();
    let (env, _) = backend(c).unwrap();
    let e = match env.run_script("t", "true", b"") {
        Err(e) => e.to_string(),
        Ok(o) => String::from_utf8_lossy(&o.stderr).into_owned(),
    };
    assert!(
        e.contains("modal: the token was refused (MODAL_TOKEN_ID/MODAL_TOKEN_SECRET)")
            && e.contains("invalid"),
        "{e}"
    );
    assert!(
        !e.contains("as-wrong-secret-value") && !e.contains(TOKEN_ID),
        "{e}"
    );
    assert_eq!(srv.state.lock().unwrap().bad_auth, 1);
    // doctor's check says the same
    let m = Modal::new(ModalConfig {
        token_secret: "as-wrong-secret-value".into(),
        ..cfg(srv.url())
    })
    .unwrap();
    assert!(
        m.check()
            .unwrap_err()
            .to_string()
            .contains("token was refused")
    );
    assert!(Modal::new(cfg(srv.url())).unwrap().check().is_ok());
}

#[test]
fn unavailable_and_a_lost_connection_mid_call_then_the_next_call_works() {
    let (srv, b, _client) = setup();
    let (code, _, _) = run(&b, "t", "true", Duration::from_secs(20));
    assert_eq!(code, 0);

    // UNAVAILABLE in the middle of the output stream
    srv.state.lock().unwrap().faults.unavailable_mid_output = true;
    let (code, _, text) = run(
        &b,
        "t",
        "echo a; sleep 0.3; echo b",
        Duration::from_secs(20),
    );
    assert_eq!(code, 255);
    assert!(
        text.starts_with("a\n") && text.contains("UNAVAILABLE"),
        "{text}"
    );
    let (code, _, text) = run(&b, "t", "echo next", Duration::from_secs(20));
    assert_eq!((code, text.as_str()), (0, "next\n"));

    // the connection dropped in the middle of the output stream
    srv.state.lock().unwrap().faults.drop_conn_mid_output = true;
    let (code, _, text) = run(
        &b,
        "t",
        "echo a; sleep 0.3; echo b",
        Duration::from_secs(20),
    );
    assert_eq!(code, 255);
    assert!(
        text.starts_with("a\n") && text.contains("connection to the API was lost"),
        "{text}"
    );
    let (code, _, text) = run(&b, "t", "echo reconnected", Duration::from_secs(20));
    assert_eq!((code, text.as_str()), (0, "reconnected\n"));

    // HTTP 503 without a gRPC status (a proxy in front of the API)
    srv.state
        .lock()
        .unwrap()
        .faults
        .http_503_next
        .insert("ContainerExec".into(), ());
    let (code, _, text) = run(&b, "t", "echo x", Duration::from_secs(20));
    assert_eq!(code, 255);
    assert!(
        text.contains("UNAVAILABLE") && text.contains("HTTP 503"),
        "{text}"
    );
    let (code, _, text) = run(&b, "t", "echo y", Duration::from_secs(20));
    assert_eq!((code, text.as_str()), (0, "y\n"));

    // UNAVAILABLE when creating a sandbox: said, and the next try creates it
    srv.state
        .lock()
        .unwrap()
        .faults
        .status_next
        .insert("SandboxCreate".into(), (14, "no capacity".into()));
    let (code, _, text) = run(&b, "t2", "echo z", Duration::from_secs(20));
    assert_eq!(code, 255);
    assert!(text.contains("no capacity"), "{text}");
    let (code, _, text) = run(&b, "t2", "echo z", Duration::from_secs(20));
    assert_eq!((code, text.as_str()), (0, "z\n"));
}

#[test]
fn a_sandbox_that_disappears_is_said_and_replaced() {
    let (srv, b, _client) = setup();
    let (code, _, _) = run(&b, "t", "true", Duration::from_secs(20));
    assert_eq!(code, 0);
    let created = srv.calls("SandboxCreate");
    srv.drop_sandboxes();
    let (code, _, text) = run(&b, "t", "echo x", Duration::from_secs(20));
    assert_eq!(code, 255);
    assert!(text.contains("disappeared"), "{text}");
    let (code, _, text) = run(&b, "t", "echo back", Duration::from_secs(20));
    assert_eq!((code, text.as_str()), (0, "back\n"));
    assert_eq!(srv.calls("SandboxCreate"), created + 1);
}

/// Against Modal itself, only with credentials.
#[test]
fn live_when_credentials_are_present() {
    let (Ok(id), Ok(secret)) = (
        std::env::var("MODAL_TOKEN_ID"),
        std::env::var("MODAL_TOKEN_SECRET"),
    ) else {
        eprintln!("SKIPPED: MODAL_TOKEN_ID/MODAL_TOKEN_SECRET are not set (live Modal test)");
        return;
    };
    let (env, client) = backend(ModalConfig {
        token_id: id,
        token_secret: secret,
        app: "hermes-tools-test".into(),
        image: std::env::var("MODAL_TEST_IMAGE").unwrap_or_else(|_| "python:3.12-slim".into()),
        timeout_secs: 600,
        ..Default::default()
    })
    .unwrap();
    let b = HostBackend(env.clone());
    let out = env.run_script("live", "echo hi", b"").unwrap();
    assert_eq!(out.stdout, b"hi\n");
    let (before, execs) = (client.calls(), client.calls_of("ContainerExec"));
    let t0 = Instant::now();
    let (code, _, text) = run(&b, "live", "echo hi", Duration::from_secs(120));
    eprintln!(
        "live: echo hi -> {code} {text:?} in {:?}, {} calls ({} ContainerExec)",
        t0.elapsed(),
        client.calls() - before,
        client.calls_of("ContainerExec") - execs
    );
    assert_eq!((code, text.as_str()), (0, "hi\n"));
    b.cleanup();
}
