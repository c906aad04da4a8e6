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

use hermes_exec::Environment;
use hermes_exec::daytona::{DaytonaConfig, backend};
use hermes_exec::host::HostBackend;
use hermes_exec::pump::Ended;
use hermes_exec::remote_fs::RemoteShell;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

const KEY: &str = "test-key-not-a-secret";

#[derive(Default)]
struct Cmd {
    out: Vec<u8>,
    code: Option<i32>,
}

#[derive(Default)]
struct Faults {
    create_5xx: u32,
    cut_next_stream: bool,
}

#[derive(Default)]
struct State {
    sandboxes: HashMap<String, (String, String)>, // id -> (name, state)
    next: u32,
    cmds: HashMap<String, Arc<(Mutex<Cmd>, Condvar)>>,
    faults: Faults,
    log: Vec<String>,
    bad_auth: u32,
}

struct Server {
    port: u16,
    state: Arc<Mutex<State>>,
}

fn pct_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut o = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            o.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap());
            i += 3;
        } else {
            o.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(o).unwrap()
}

fn reply(s: &mut TcpStream, status: u16, body: &Value) {
    let b = body.to_string();
    let _ = write!(
        s,
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{b}",
        b.len()
    );
}

fn reply_bytes(s: &mut TcpStream, status: u16, body: &[u8]) {
    let _ = write!(
        s,
        "HTTP/1.1 {status} X\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    );
    for c in body.chunks(1000) {
        let _ = write!(s, "{:x}\r\n", c.len());
        let _ = s.write_all(c);
        let _ = s.write_all(b"\r\n");
    }
    let _ = s.write_all(b"0\r\n\r\n");
}

fn ws_send(s: &mut TcpStream, op: u8, p: &[u8]) -> std::io::Result<()> {
    let mut h = vec![0x80 | op];
    if p.len() < 126 {
        h.push(p.len() as u8);
    } else {
        h.push(126);
        h.extend_from_slice(&(p.len() as u16).to_be_bytes());
    }
    s.write_all(&h)?;
    s.write_all(p)
}

/// Run `command` with bash here, its output recorded with the daemon's markers.
fn start_cmd(command: &str) -> Arc<(Mutex<Cmd>, Condvar)> {
    let c = Arc::new((Mutex::new(Cmd::default()), Condvar::new()));
    let mut child = Command::new("bash")
        .args(["-c", command])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut readers = Vec::new();
    for (pipe, mark) in [
        (
            Box::new(child.stdout.take().unwrap()) as Box<dyn Read + Send>,
            b"\x01\x01\x01",
        ),
        (Box::new(child.stderr.take().unwrap()), b"\x02\x02\x02"),
    ] {
        let c = c.clone();
        readers.push(std::thread::spawn(move || {
            let mut pipe = pipe;
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut g = c.0.lock().unwrap();
                g.out.extend_from_slice(mark);
                g.out.extend_from_slice(&buf[..n]);
                c.1.notify_all();
            }
        }));
    }
    let c2 = c.clone();
    std::thread::spawn(move || {
        for r in readers {
            let _ = r.join();
        }
        let st = child.wait().unwrap();
        c2.0.lock().unwrap().code = Some(st.code().unwrap_or(137));
        c2.1.notify_all();
    });
    c
}

impl Server {
    fn start() -> Server {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let state = Arc::new(Mutex::new(State::default()));
        let st = state.clone();
        std::thread::spawn(move || {
            for s in l.incoming().flatten() {
                let st = st.clone();
                std::thread::spawn(move || handle(s, st, port));
            }
        });
        Server { port, state }
    }
    fn api(&self) -> String {
        format!("http://127.0.0.1:{}/api", self.port)
    }
}

fn handle(mut s: TcpStream, st: Arc<Mutex<State>>, port: u16) {
    let mut r = BufReader::new(s.try_clone().unwrap());
    let mut line = String::new();
    if r.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let target = parts.next().unwrap_or("").to_string();
    let mut headers = HashMap::new();
    loop {
        let mut h = String::new();
        r.read_line(&mut h).unwrap();
        let h = h.trim_end().to_string();
        if h.is_empty() {
            break;
        }
        let (k, v) = h.split_once(':').unwrap();
        headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
    }
    let n: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; n];
    r.read_exact(&mut body).unwrap();
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let q: HashMap<&str, String> = query
        .split('&')
        .filter_map(|kv| kv.split_once('=').map(|(k, v)| (k, pct_decode(v))))
        .collect();
    st.lock().unwrap().log.push(format!("{method} {path}"));
    if headers.get("authorization").map(String::as_str) != Some(&format!("Bearer {KEY}")) {
        st.lock().unwrap().bad_auth += 1;
        return reply(&mut s, 401, &json!({"message": "Invalid credentials"}));
    }
    let seg: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let j = || serde_json::from_slice::<Value>(&body).unwrap_or(Value::Null);
    let sandbox_json = |id: &str, name: &str, state: &str| {
        json!({"id": id, "name": name, "state": state,
               "toolboxProxyUrl": format!("http://127.0.0.1:{port}/tb")})
    };
    match (method.as_str(), seg.as_slice()) {
        ("POST", ["api", "sandbox"]) => {
            let mut g = st.lock().unwrap();
            if g.faults.create_5xx > 0 {
                g.faults.create_5xx -= 1;
                drop(g);
                return reply(&mut s, 503, &json!({"message": "no capacity"}));
            }
            g.next += 1;
            let id = format!("sb-{}", g.next);
            let name = j()["name"].as_str().unwrap_or("").to_string();
            g.sandboxes
                .insert(id.clone(), (name.clone(), "started".into()));
            reply(&mut s, 200, &sandbox_json(&id, &name, "started"))
        }
        ("GET", ["api", "sandbox", key]) => {
            let g = st.lock().unwrap();
            let found = g
                .sandboxes
                .iter()
                .find(|(id, (name, _))| id.as_str() == *key || name == key)
                .map(|(id, (name, state))| sandbox_json(id, name, state));
            drop(g);
            match found {
                Some(v) => reply(&mut s, 200, &v),
                None => reply(&mut s, 404, &json!({"message": "Sandbox not found"})),
            }
        }
        ("POST", ["api", "sandbox", id, verb]) => {
            let mut g = st.lock().unwrap();
            let Some(sb) = g.sandboxes.get_mut(*id) else {
                drop(g);
                return reply(&mut s, 404, &json!({"message": "Sandbox not found"}));
            };
            sb.1 = if *verb == "start" {
                "started".into()
            } else {
                "stopped".into()
            };
            drop(g);
            reply(&mut s, 200, &json!({}))
        }
        ("DELETE", ["api", "sandbox", id]) => {
            let gone = st.lock().unwrap().sandboxes.remove(*id).is_none();
            reply(&mut s, if gone { 404 } else { 200 }, &json!({}))
        }
        (_, ["tb", id, rest @ ..]) => {
            if !st.lock().unwrap().sandboxes.contains_key(*id) {
                return reply(&mut s, 404, &json!({"message": "sandbox not found"}));
            }
            match (method.as_str(), rest) {
                ("POST", ["process", "session"]) => reply(&mut s, 201, &json!({})),
                ("POST", ["process", "session", _sid, "exec"]) => {
                    let c = start_cmd(j()["command"].as_str().unwrap());
                    let mut g = st.lock().unwrap();
                    let cid = format!("cmd-{}", g.cmds.len() + 1);
                    g.cmds.insert(cid.clone(), c);
                    drop(g);
                    reply(&mut s, 202, &json!({"cmdId": cid}))
                }
                ("GET", ["process", "session", _sid, "command", cid, "logs"]) => {
                    assert_eq!(q.get("follow").map(String::as_str), Some("true"));
                    assert_eq!(
                        headers.get("upgrade").map(String::as_str),
                        Some("websocket")
                    );
                    let c = st.lock().unwrap().cmds.get(*cid).cloned().unwrap();
                    let cut = std::mem::take(&mut st.lock().unwrap().faults.cut_next_stream);
                    let _ = write!(
                        s,
                        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: x\r\n\r\n"
                    );
                    let mut sent = 0;
                    loop {
                        let (chunk, done) = {
                            let mut g = c.0.lock().unwrap();
                            while g.out.len() == sent && g.code.is_none() {
                                g = c.1.wait(g).unwrap();
                            }
                            (
                                g.out[sent..].to_vec(),
                                g.code.is_some() && g.out.len() == sent,
                            )
                        };
                        if done {
                            let _ = ws_send(&mut s, 8, &[]);
                            return;
                        }
                        sent += chunk.len();
                        if ws_send(&mut s, 2, &chunk).is_err() {
                            return;
                        }
                        if cut {
                            let _ = s.shutdown(std::net::Shutdown::Both);
                            return;
                        }
                    }
                }
                ("GET", ["process", "session", _sid, "command", cid]) => {
                    let c = st.lock().unwrap().cmds.get(*cid).cloned();
                    match c {
                        Some(c) => {
                            let code = c.0.lock().unwrap().code;
                            reply(&mut s, 200, &json!({"id": cid, "exitCode": code}))
                        }
                        None => reply(&mut s, 404, &json!({"message": "command not found"})),
                    }
                }
                ("POST", ["process", "execute"]) => {
                    let o = Command::new("bash")
                        .args(["-c", j()["command"].as_str().unwrap()])
                        .output()
                        .unwrap();
                    let mut result = o.stdout;
                    result.extend_from_slice(&o.stderr);
                    reply(
                        &mut s,
                        200,
                        &json!({"exitCode": o.status.code(), "result": String::from_utf8_lossy(&result)}),
                    )
                }
                ("GET", ["files", "download"]) => match std::fs::read(&q["path"]) {
                    Ok(d) => reply_bytes(&mut s, 200, &d),
                    Err(_) => reply(&mut s, 404, &json!({"message": "file not found"})),
                },
                ("POST", ["files", "upload"]) => {
                    let ct = headers["content-type"].clone();
                    let boundary = ct.split("boundary=").nth(1).unwrap().to_string();
                    let start = body.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
                    let end_mark = format!("\r\n--{boundary}--");
                    let end = body
                        .windows(end_mark.len())
                        .rposition(|w| w == end_mark.as_bytes())
                        .unwrap();
                    match std::fs::write(&q["path"], &body[start..end]) {
                        Ok(()) => reply(&mut s, 200, &json!({})),
                        Err(e) => reply(&mut s, 400, &json!({"message": e.to_string()})),
                    }
                }
                ("GET", ["files"]) => match std::fs::read_dir(&q["path"]) {
                    Ok(rd) => {
                        let v: Vec<Value> = rd
                            .flatten()
                            .map(|e| json!({"name": e.file_name().to_string_lossy(), "isDir": e.path().is_dir()}))
                            .collect();
                        reply(&mut s, 200, &Value::Array(v))
                    }
                    Err(_) => reply(&mut s, 404, &json!({"message": "not found"})),
                },
                _ => reply(
                    &mut s,
                    404,
                    &json!({"message": format!("no route {method} {path}")}),
                ),
            }
        }
        _ => reply(
            &mut s,
            404,
            &json!({"message": format!("no route {method} {path}")}),
        ),
    }
}

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
