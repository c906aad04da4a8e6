//! A contract server for the daytona backend, written from Daytona's
//! published API (the subset the backend uses): the sandbox API
//! (`/sandbox`, start, stop, delete) and the toolbox API (`process/session`,
//! `exec` with `runAsync`, the `logs?follow=true` WebSocket with the
//! daemon's stream markers, the command's exit code, `process/execute`,
//! files). It runs the commands on this machine with bash. Shared by
//! crates/exec/tests/daytona_contract.rs and the runtime's integration
//! tests (execute_code on daytona).

#![allow(dead_code)]

use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};

pub const KEY: &str = "test-key-not-a-secret";

#[derive(Default)]
pub struct Cmd {
    pub out: Vec<u8>,
    pub code: Option<i32>,
}

#[derive(Default)]
pub struct Faults {
    pub create_5xx: u32,
    pub cut_next_stream: bool,
}

#[derive(Default)]
pub struct State {
    pub sandboxes: HashMap<String, (String, String)>, // id -> (name, state)
    pub next: u32,
    pub cmds: HashMap<String, Arc<(Mutex<Cmd>, Condvar)>>,
    pub faults: Faults,
    pub log: Vec<String>,
    pub bad_auth: u32,
}

pub struct Server {
    pub port: u16,
    pub state: Arc<Mutex<State>>,
}

pub fn pct_decode(s: &str) -> String {
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

pub fn reply(s: &mut TcpStream, status: u16, body: &Value) {
    let b = body.to_string();
    let _ = write!(
        s,
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{b}",
        b.len()
    );
}

pub fn reply_bytes(s: &mut TcpStream, status: u16, body: &[u8]) {
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

pub fn ws_send(s: &mut TcpStream, op: u8, p: &[u8]) -> std::io::Result<()> {
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
pub fn start_cmd(command: &str) -> Arc<(Mutex<Cmd>, Condvar)> {
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
    pub fn start() -> Server {
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
    pub fn api(&self) -> String {
        format!("http://127.0.0.1:{}/api", self.port)
    }
}

pub fn handle(mut s: TcpStream, st: Arc<Mutex<State>>, port: u16) {
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
