//! A local contract server for Modal's API: gRPC over HTTP/2 with prior
//! knowledge (h2c) on 127.0.0.1, serving the subset of
//! `modal.client.ModalClient` the modal backend uses, by the published
//! proto's messages (the crate's `modal::proto` structs, whose wire bytes
//! its unit test checks against the proto by hand). Its gRPC framing and
//! status handling are its own.
//!
//! Sandboxes are local temporary folders (their HOME and working folder);
//! `ContainerExec` runs a real `bash` process there (its own process group),
//! `ContainerExecGetOutput` streams its output as `RuntimeOutputBatch`es and
//! ends with the exit code, `ContainerExecPutInput` feeds its stdin,
//! `SandboxTerminate` kills what the sandbox runs and removes the folder.
//! Every call checks the token and the client metadata. Faults: a status
//! for the next call of a method (trailers-only), HTTP 503 without a gRPC
//! status, UNAVAILABLE or a dropped connection in the middle of the next
//! output stream, sandboxes that disappear.

#![allow(dead_code)]

use bytes::{Buf, Bytes, BytesMut};
use hermes_exec::modal::proto as pb;
use prost::Message;
use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

pub const TOKEN_ID: &str = "ak-contract-test-id";
pub const TOKEN_SECRET: &str = "as-contract-test-secret";
pub const BUILDER_VERSION: &str = "2025.06";

#[derive(Default)]
pub struct Exec {
    /// (file descriptor, bytes), in order: entry i is batch i + 1.
    pub out: Vec<(i32, Vec<u8>)>,
    pub code: Option<i32>,
    pub stdin: Option<std::process::ChildStdin>,
    pub pgid: i32,
    pub sandbox: String,
    pub argv: Vec<String>,
}

pub struct ExecSlot {
    pub st: Mutex<Exec>,
    pub wake: tokio::sync::Notify,
}

pub struct Sb {
    pub dir: PathBuf,
    pub task_id: String,
    pub def: pb::Sandbox,
}

#[derive(Default)]
pub struct Faults {
    /// method -> (gRPC code, message) for its next call.
    pub status_next: HashMap<String, (u32, String)>,
    /// method -> answer its next call with HTTP 503 and no gRPC status.
    pub http_503_next: HashMap<String, ()>,
    /// The next output stream: UNAVAILABLE after its first batch.
    pub unavailable_mid_output: bool,
    /// The next output stream: the connection dropped after its first batch.
    pub drop_conn_mid_output: bool,
}

#[derive(Default)]
pub struct State {
    pub sandboxes: HashMap<String, Sb>,
    pub terminated: Vec<String>,
    pub execs: HashMap<String, Arc<ExecSlot>>,
    pub next: u64,
    /// Calls by method.
    pub calls: HashMap<String, u64>,
    pub bad_auth: u64,
    pub faults: Faults,
    /// The metadata headers seen (names only for the token).
    pub client_types: Vec<String>,
    pub image_commands: Vec<Vec<String>>,
    pub builder_versions: Vec<String>,
}

impl State {
    pub fn calls(&self, m: &str) -> u64 {
        self.calls.get(m).copied().unwrap_or(0)
    }
}

pub struct Server {
    pub port: u16,
    pub state: Arc<Mutex<State>>,
    root: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let st = self.state.lock().unwrap();
        for e in st.execs.values() {
            let pg = e.st.lock().unwrap().pgid;
            if pg > 0 {
                unsafe_free_kill(pg);
            }
        }
        drop(st);
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// Signal a process group through `kill(1)` (no unsafe code in tests).
fn unsafe_free_kill(pgid: i32) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .stderr(Stdio::null())
        .status();
}

impl Server {
    pub fn start() -> Server {
        let std_l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = std_l.local_addr().unwrap().port();
        std_l.set_nonblocking(true).unwrap();
        let state = Arc::new(Mutex::new(State::default()));
        let root = std::env::temp_dir().join(format!("ht-modal-srv-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&root).unwrap();
        let st = state.clone();
        let r = root.clone();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let l = tokio::net::TcpListener::from_std(std_l).unwrap();
                loop {
                    let Ok((sock, _)) = l.accept().await else {
                        continue;
                    };
                    let st = st.clone();
                    let r = r.clone();
                    tokio::spawn(serve_conn(sock, st, r));
                }
            });
        });
        Server { port, state, root }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn calls(&self, m: &str) -> u64 {
        self.state.lock().unwrap().calls(m)
    }

    /// Sandboxes alive.
    pub fn alive(&self) -> usize {
        self.state.lock().unwrap().sandboxes.len()
    }

    /// Every sandbox disappears (terminated behind the client's back).
    pub fn drop_sandboxes(&self) {
        let mut st = self.state.lock().unwrap();
        let ids: Vec<String> = st.sandboxes.keys().cloned().collect();
        for id in ids {
            terminate(&mut st, &id);
        }
    }
}

async fn serve_conn(sock: tokio::net::TcpStream, st: Arc<Mutex<State>>, root: PathBuf) {
    let Ok(mut conn) = h2::server::handshake(sock).await else {
        return;
    };
    let kill = Arc::new(tokio::sync::Notify::new());
    loop {
        tokio::select! {
            r = conn.accept() => match r {
                Some(Ok((req, respond))) => {
                    tokio::spawn(handle(req, respond, st.clone(), root.clone(), kill.clone()));
                }
                _ => return,
            },
            _ = kill.notified() => {
                // A lost connection: the socket closed with no goodbye.
                return;
            }
        }
    }
}

fn frame(m: &impl Message) -> Bytes {
    let mut b = BytesMut::new();
    b.extend_from_slice(&[0]);
    b.extend_from_slice(&(m.encoded_len() as u32).to_be_bytes());
    m.encode(&mut b).unwrap();
    b.freeze()
}

type Respond = h2::server::SendResponse<Bytes>;

fn headers(status: u16) -> http::Response<()> {
    http::Response::builder()
        .status(status)
        .header("content-type", "application/grpc")
        .body(())
        .unwrap()
}

fn trailers(code: u32, msg: &str) -> http::HeaderMap {
    let mut t = http::HeaderMap::new();
    t.insert("grpc-status", code.to_string().parse().unwrap());
    if !msg.is_empty() {
        let enc: String = msg
            .bytes()
            .map(|b| {
                if (0x20..0x7f).contains(&b) && b != b'%' {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect();
        t.insert("grpc-message", enc.parse().unwrap());
    }
    t
}

/// A trailers-only answer: the status in the headers, no body.
fn fail(mut respond: Respond, code: u32, msg: &str) {
    let mut r = headers(200);
    r.headers_mut().extend(trailers(code, msg));
    let _ = respond.send_response(r, true);
}

fn unary(mut respond: Respond, m: &impl Message) {
    let Ok(mut s) = respond.send_response(headers(200), false) else {
        return;
    };
    let _ = s.send_data(frame(m), false);
    let _ = s.send_trailers(trailers(0, ""));
}

pub fn terminate(st: &mut State, id: &str) {
    if let Some(sb) = st.sandboxes.remove(id) {
        for e in st.execs.values() {
            let g = e.st.lock().unwrap();
            if g.sandbox == id && g.code.is_none() && g.pgid > 0 {
                unsafe_free_kill(g.pgid);
            }
        }
        let _ = std::fs::remove_dir_all(&sb.dir);
        st.terminated.push(id.to_string());
    }
}

async fn handle(
    req: http::Request<h2::RecvStream>,
    respond: Respond,
    st: Arc<Mutex<State>>,
    root: PathBuf,
    kill: Arc<tokio::sync::Notify>,
) {
    let (parts, mut body) = req.into_parts();
    let method = parts
        .uri
        .path()
        .strip_prefix("/modal.client.ModalClient/")
        .unwrap_or("")
        .to_string();
    let mut buf = BytesMut::new();
    while let Some(Ok(c)) = body.data().await {
        let _ = body.flow_control().release_capacity(c.len());
        buf.extend_from_slice(&c);
    }
    let h = |k: &str| {
        parts
            .headers
            .get(k)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string()
    };
    {
        let mut s = st.lock().unwrap();
        *s.calls.entry(method.clone()).or_default() += 1;
        s.client_types.push(format!(
            "{}/{}",
            h("x-modal-client-type"),
            h("x-modal-client-version")
        ));
    }
    if h("content-type") != "application/grpc" || h("te") != "trailers" || parts.method != "POST" {
        return fail(respond, 3, "not a gRPC request");
    }
    if h("x-modal-token-id") != TOKEN_ID || h("x-modal-token-secret") != TOKEN_SECRET {
        st.lock().unwrap().bad_auth += 1;
        return fail(respond, 16, "Token ID or secret is invalid");
    }
    if h("x-modal-client-type").is_empty() || h("x-modal-client-version").is_empty() {
        return fail(respond, 3, "missing client metadata");
    }
    {
        let mut s = st.lock().unwrap();
        if s.faults.http_503_next.remove(&method).is_some() {
            drop(s);
            let mut respond = respond;
            let _ = respond.send_response(
                http::Response::builder().status(503).body(()).unwrap(),
                true,
            );
            return;
        }
        if let Some((c, m)) = s.faults.status_next.remove(&method) {
            drop(s);
            return fail(respond, c, &m);
        }
    }
    if buf.len() < 5 || buf[0] != 0 {
        return fail(respond, 13, "bad framing");
    }
    let n = u32::from_be_bytes([buf[1], buf[2], buf[3], buf[4]]) as usize;
    buf.advance(5);
    if buf.len() != n {
        return fail(respond, 13, "bad length");
    }
    let msg = buf.freeze();
    macro_rules! decode {
        ($t:ty) => {
            match <$t>::decode(msg.clone()) {
                Ok(m) => m,
                Err(e) => return fail(respond, 3, &format!("undecodable: {e}")),
            }
        };
    }
    match method.as_str() {
        "AppGetOrCreate" => {
            let r = decode!(pb::AppGetOrCreateRequest);
            if r.app_name.is_empty() || r.object_creation_type != 1 {
                return fail(respond, 3, "app name and CREATE_IF_MISSING expected");
            }
            unary(
                respond,
                &pb::AppGetOrCreateResponse {
                    app_id: format!("ap-{}", r.app_name),
                },
            )
        }
        "EnvironmentGetOrCreate" => {
            let _ = decode!(pb::EnvironmentGetOrCreateRequest);
            unary(
                respond,
                &pb::EnvironmentGetOrCreateResponse {
                    environment_id: "en-main".into(),
                    metadata: Some(pb::EnvironmentMetadata {
                        name: "main".into(),
                        settings: Some(pb::EnvironmentSettings {
                            image_builder_version: BUILDER_VERSION.into(),
                        }),
                    }),
                },
            )
        }
        "ImageGetOrCreate" => {
            let r = decode!(pb::ImageGetOrCreateRequest);
            let cmds = r.image.map(|i| i.dockerfile_commands).unwrap_or_default();
            let mut s = st.lock().unwrap();
            s.image_commands.push(cmds);
            s.builder_versions.push(r.builder_version);
            drop(s);
            // Not built yet: the client joins the build.
            unary(
                respond,
                &pb::ImageGetOrCreateResponse {
                    image_id: "im-contract".into(),
                    result: None,
                },
            )
        }
        "ImageJoinStreaming" => {
            let r = decode!(pb::ImageJoinStreamingRequest);
            let mut respond = respond;
            let Ok(mut s) = respond.send_response(headers(200), false) else {
                return;
            };
            if r.image_id != "im-contract" {
                let _ = s.send_trailers(trailers(5, "no such image"));
                return;
            }
            let _ = s.send_data(
                frame(&pb::ImageJoinStreamingResponse {
                    result: None,
                    entry_id: "1".into(),
                    eof: false,
                }),
                false,
            );
            let _ = s.send_data(
                frame(&pb::ImageJoinStreamingResponse {
                    result: Some(pb::GenericResult {
                        status: 1,
                        ..Default::default()
                    }),
                    entry_id: "2".into(),
                    eof: true,
                }),
                false,
            );
            let _ = s.send_trailers(trailers(0, ""));
        }
        "SandboxCreate" => {
            let r = decode!(pb::SandboxCreateRequest);
            let def = r.definition.unwrap_or_default();
            if def.entrypoint_args != ["sleep", "infinity"] || def.image_id != "im-contract" {
                return fail(respond, 3, "unexpected sandbox definition");
            }
            let mut s = st.lock().unwrap();
            s.next += 1;
            let id = format!("sb-{}", s.next);
            let dir = root.join(&id);
            std::fs::create_dir_all(&dir).unwrap();
            let task_id = format!("ta-{}", s.next);
            s.sandboxes.insert(id.clone(), Sb { dir, task_id, def });
            drop(s);
            unary(respond, &pb::SandboxCreateResponse { sandbox_id: id })
        }
        "SandboxGetTaskId" => {
            let r = decode!(pb::SandboxGetTaskIdRequest);
            let s = st.lock().unwrap();
            match s.sandboxes.get(&r.sandbox_id) {
                Some(sb) => {
                    let t = sb.task_id.clone();
                    drop(s);
                    unary(
                        respond,
                        &pb::SandboxGetTaskIdResponse {
                            task_id: Some(t),
                            task_result: None,
                        },
                    )
                }
                None => {
                    drop(s);
                    fail(respond, 5, "Sandbox not found")
                }
            }
        }
        "SandboxTerminate" => {
            let r = decode!(pb::SandboxTerminateRequest);
            let mut s = st.lock().unwrap();
            if !s.sandboxes.contains_key(&r.sandbox_id) {
                drop(s);
                return fail(respond, 5, "Sandbox not found");
            }
            terminate(&mut s, &r.sandbox_id);
            drop(s);
            unary(respond, &pb::SandboxTerminateResponse::default())
        }
        "ContainerExec" => {
            let r = decode!(pb::ContainerExecRequest);
            let mut s = st.lock().unwrap();
            let Some((sid, dir)) = s
                .sandboxes
                .iter()
                .find(|(_, sb)| sb.task_id == r.task_id)
                .map(|(id, sb)| (id.clone(), sb.dir.clone()))
            else {
                drop(s);
                return fail(respond, 5, &format!("Task {} not found", r.task_id));
            };
            if r.command.first().map(String::as_str) != Some("bash") {
                drop(s);
                return fail(respond, 3, "the contract server runs bash only");
            }
            s.next += 1;
            let id = format!("ex-{}", s.next);
            let slot = start_exec(&r.command, &dir, &sid);
            s.execs.insert(id.clone(), slot);
            drop(s);
            unary(respond, &pb::ContainerExecResponse { exec_id: id })
        }
        "ContainerExecPutInput" => {
            let r = decode!(pb::ContainerExecPutInputRequest);
            let slot = st.lock().unwrap().execs.get(&r.exec_id).cloned();
            let Some(slot) = slot else {
                return fail(respond, 5, "no such exec");
            };
            let input = r.input.unwrap_or_default();
            // Written without the exec's lock (its readers need it to drain
            // the output while the command consumes its input).
            let w = slot.st.lock().unwrap().stdin.take();
            let w = tokio::task::spawn_blocking(move || {
                let mut w = w;
                if let Some(w) = w.as_mut() {
                    let _ = w.write_all(&input.message);
                }
                if input.eof { None } else { w }
            })
            .await
            .unwrap();
            slot.st.lock().unwrap().stdin = w;
            unary(respond, &pb::Empty {})
        }
        "ContainerExecGetOutput" => {
            let r = decode!(pb::ContainerExecGetOutputRequest);
            let slot = st.lock().unwrap().execs.get(&r.exec_id).cloned();
            let Some(slot) = slot else {
                return fail(respond, 5, "no such exec");
            };
            let (unavail, drop_conn) = {
                let mut s = st.lock().unwrap();
                let f = &mut s.faults;
                let u = std::mem::take(&mut f.unavailable_mid_output);
                let d = std::mem::take(&mut f.drop_conn_mid_output);
                (u, d)
            };
            let mut respond = respond;
            let Ok(mut s) = respond.send_response(headers(200), false) else {
                return;
            };
            let mut next = r.last_batch_index as usize; // entries before this were sent
            loop {
                let notified = slot.wake.notified();
                let (items, code, upto) = {
                    let g = slot.st.lock().unwrap();
                    let items: Vec<(usize, i32, Vec<u8>)> = g.out[next.min(g.out.len())..]
                        .iter()
                        .enumerate()
                        .map(|(i, (fd, b))| (next + i + 1, *fd, b.clone()))
                        .collect();
                    (items, g.code, g.out.len())
                };
                for (idx, fd, b) in items {
                    if r.file_descriptor != 0 && fd != r.file_descriptor {
                        continue;
                    }
                    let batch = pb::RuntimeOutputBatch {
                        items: vec![pb::RuntimeOutputMessage {
                            file_descriptor: fd,
                            message: String::new(),
                            message_bytes: b,
                        }],
                        batch_index: idx as u64,
                        ..Default::default()
                    };
                    if s.send_data(frame(&batch), false).is_err() {
                        return;
                    }
                    if unavail {
                        let _ = s.send_trailers(trailers(14, "upstream connect error"));
                        return;
                    }
                    if drop_conn {
                        // Let the batch leave, then drop the connection.
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                        kill.notify_one();
                        // Hold the stream until the socket is gone (dropping
                        // it first would reset the stream, not the connection).
                        tokio::time::sleep(std::time::Duration::from_secs(2)).await;
                        return;
                    }
                }
                next = upto;
                if let Some(c) = code {
                    let batch = pb::RuntimeOutputBatch {
                        batch_index: upto as u64 + 1,
                        exit_code: Some(c),
                        ..Default::default()
                    };
                    let _ = s.send_data(frame(&batch), false);
                    let _ = s.send_trailers(trailers(0, ""));
                    return;
                }
                notified.await;
            }
        }
        other => fail(respond, 12, &format!("Method not found: {other}")),
    }
}

/// Run `argv` (bash) in sandbox folder `dir`: a process group of its own,
/// HOME in the sandbox, its output recorded per file descriptor.
fn start_exec(argv: &[String], dir: &std::path::Path, sandbox: &str) -> Arc<ExecSlot> {
    let slot = Arc::new(ExecSlot {
        st: Mutex::new(Exec {
            sandbox: sandbox.to_string(),
            argv: argv.to_vec(),
            ..Default::default()
        }),
        wake: tokio::sync::Notify::new(),
    });
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .current_dir(dir)
        .env("HOME", dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    {
        let mut g = slot.st.lock().unwrap();
        g.pgid = child.id() as i32;
        g.stdin = child.stdin.take();
    }
    let mut readers = Vec::new();
    for (pipe, fd) in [
        (
            Box::new(child.stdout.take().unwrap()) as Box<dyn Read + Send>,
            1,
        ),
        (Box::new(child.stderr.take().unwrap()), 2),
    ] {
        let slot = slot.clone();
        readers.push(std::thread::spawn(move || {
            let mut pipe = pipe;
            let mut buf = [0u8; 8192];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                slot.st.lock().unwrap().out.push((fd, buf[..n].to_vec()));
                slot.wake.notify_waiters();
            }
        }));
    }
    let s2 = slot.clone();
    std::thread::spawn(move || {
        for r in readers {
            let _ = r.join();
        }
        use std::os::unix::process::ExitStatusExt;
        let st = child.wait().unwrap();
        let code = st.code().unwrap_or_else(|| 128 + st.signal().unwrap_or(9));
        let mut g = s2.st.lock().unwrap();
        g.code = Some(code);
        g.stdin.take();
        drop(g);
        s2.wake.notify_waiters();
    });
    slot
}
