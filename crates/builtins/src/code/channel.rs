//! One run's private channel: a Unix socket in a directory only this
//! process's user can enter (0700), made for one run and removed when it
//! ends, speaking MCP (newline-delimited JSON-RPC, the stdio framing) with
//! the methods a tools client uses: `initialize`, `ping`, `tools/list`,
//! `tools/call`. Every call goes through the runtime's whole dispatch
//! pipeline (repair, validation, hooks, approval, timeouts, output limits);
//! commands and host tools as async dispatches, so ending the run cancels
//! the calls still running.
//!
//! Why not crates/mcp-server: its server is runtime-wide (it replaces the
//! runtime's approval handler with the client's elicitation, runs calls as
//! its own task and kills that task's processes when a session ends, serves
//! every tool), and it sits above this crate (mcp-server → runtime →
//! builtins). A run needs the opposite on each count: the task's own
//! context, the host's approval handler, a fixed set of tools and a call
//! budget; the four methods below are all the stubs use.
//!
//! A script cannot hang the runtime through its channel: requests are read
//! with a size cap, each connection has its own thread, and when the run
//! ends every connection is shut down (a thread blocked writing to a script
//! that never reads gets an error), the calls in flight are cancelled and
//! nothing waits for those threads.

use parking_lot::Mutex;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use std::borrow::Cow;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use hermes_core::Core;
use hermes_core::context::CallContext;

/// A request line may be at most this long (a write_file of a big file fits).
const MAX_LINE: u64 = 32 << 20;
/// Connections open at once (each has a thread).
const MAX_CONNECTIONS: usize = 16;

/// Tools whose calls run inline on the connection's thread (see [`call`]).
const INLINE_TOOLS: &[&str] = &["read_file", "write_file", "search_files", "patch"];

/// What the run's tools are and how their calls are made.
pub struct RunSpec {
    pub core: Weak<Core>,
    /// The tools this run may call, by name, with their MCP definitions.
    pub tools: Vec<(String, Value)>,
    /// The context of inner calls (the outer call's, with `origin` and
    /// a `tool_call_id` per inner call).
    pub context: Map<String, Value>,
    pub max_calls: usize,
}

struct Shared {
    spec: RunSpec,
    /// The inner calls' context but their `tool_call_id` (parsed once),
    /// its JSON text without the closing brace, and the outer call's id.
    base: CallContext,
    json_head: String,
    outer: String,
    calls: AtomicUsize,
    stopped: AtomicBool,
    conns: Mutex<Vec<UnixStream>>,
    open: AtomicUsize,
    /// Async dispatches in flight (cancelled when the run ends).
    inflight: Mutex<Vec<u64>>,
}

impl Shared {
    /// The context of the script's `n`-th call: `tool_call_id` `<outer>#<n>`.
    fn context(&self, n: usize) -> CallContext {
        let id = format!("{}#{n}", self.outer);
        let mut c = self.base.clone();
        c.json = Some(Arc::from(format!(
            "{}\"tool_call_id\":{}}}",
            self.json_head,
            Value::String(id.clone())
        )));
        c.tool_call_id = id;
        c
    }
}

/// A run's channel; [`Channel::close`] (or drop) ends it.
pub struct Channel {
    shared: Arc<Shared>,
    socket: PathBuf,
    acceptor: Option<std::thread::JoinHandle<()>>,
}

impl Channel {
    /// Listen on `dir/mcp.sock` (`dir` exists and is private to this user).
    pub fn start(dir: &Path, spec: RunSpec) -> std::io::Result<Channel> {
        let socket = dir.join("mcp.sock");
        let listener = UnixListener::bind(&socket)?;
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600))?;
        }
        let mut map = spec.context.clone();
        let outer = match map.remove("tool_call_id") {
            Some(Value::String(s)) => s,
            _ => String::new(),
        };
        let text = Value::Object(map.clone()).to_string();
        let base = CallContext::parse(Some(&text))
            .map_err(|e| std::io::Error::other(format!("context: {}", e.message)))?;
        let mut json_head = text;
        json_head.pop(); // the closing brace
        if !map.is_empty() {
            json_head.push(',');
        }
        let shared = Arc::new(Shared {
            base,
            json_head,
            outer,
            spec,
            calls: AtomicUsize::new(0),
            stopped: AtomicBool::new(false),
            conns: Mutex::new(Vec::new()),
            open: AtomicUsize::new(0),
            inflight: Mutex::new(Vec::new()),
        });
        let s = shared.clone();
        let acceptor = std::thread::Builder::new()
            .name("ht-code-accept".into())
            .spawn(move || accept_loop(listener, s))?;
        Ok(Channel {
            shared,
            socket,
            acceptor: Some(acceptor),
        })
    }

    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// Tool calls the script made (those over the limit included).
    pub fn calls_made(&self) -> usize {
        self.shared
            .calls
            .load(Ordering::Acquire)
            .min(self.shared.spec.max_calls)
    }

    /// End the channel: no new connections, every connection shut down,
    /// the calls in flight cancelled. Does not wait for connection threads.
    pub fn close(&mut self) {
        if self.shared.stopped.swap(true, Ordering::AcqRel) {
            return;
        }
        // The acceptor polls with a short timeout and ends on its own once
        // it sees the flag (not waited for: a wake-up connection would fail
        // if the script removed the socket); a connection it accepts from
        // now on is shut at once.
        drop(self.acceptor.take());
        for c in self.shared.conns.lock().drain(..) {
            let _ = c.shutdown(std::net::Shutdown::Both);
        }
        let ids: Vec<u64> = std::mem::take(&mut *self.shared.inflight.lock());
        if let Some(core) = self.shared.spec.core.upgrade() {
            for id in ids {
                let _ = core.cancel(id);
            }
        }
        let _ = std::fs::remove_file(&self.socket);
    }
}

impl Drop for Channel {
    fn drop(&mut self) {
        self.close();
    }
}

fn accept_loop(listener: UnixListener, shared: Arc<Shared>) {
    use std::os::fd::AsRawFd;
    if listener.set_nonblocking(true).is_err() {
        return;
    }
    loop {
        if shared.stopped.load(Ordering::Acquire) {
            return;
        }
        if hermes_exec::poll_one(listener.as_raw_fd(), libc::POLLIN, 100) & libc::POLLIN == 0 {
            continue;
        }
        let Ok((conn, _)) = listener.accept() else {
            continue;
        };
        if conn.set_nonblocking(false).is_err() {
            continue;
        }
        if shared.open.load(Ordering::Acquire) >= MAX_CONNECTIONS {
            continue; // dropped: closed at once
        }
        let Ok(keep) = conn.try_clone() else { continue };
        shared.conns.lock().push(keep);
        if shared.stopped.load(Ordering::Acquire) {
            let _ = conn.shutdown(std::net::Shutdown::Both);
            return;
        }
        shared.open.fetch_add(1, Ordering::AcqRel);
        let s = shared.clone();
        let spawned = std::thread::Builder::new()
            .name("ht-code-conn".into())
            .spawn(move || {
                serve_conn(conn, &s);
                s.open.fetch_sub(1, Ordering::AcqRel);
            });
        if spawned.is_err() {
            shared.open.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

fn serve_conn(conn: UnixStream, shared: &Arc<Shared>) {
    let Ok(mut writer) = conn.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(conn);
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = match (&mut reader).take(MAX_LINE).read_until(b'\n', &mut line) {
            Ok(n) => n,
            Err(_) => return,
        };
        if n == 0 || shared.stopped.load(Ordering::Acquire) {
            return;
        }
        if line.last() != Some(&b'\n') && n as u64 >= MAX_LINE {
            let _ = reply(
                &mut writer,
                rpc_error("null", -32600, &format!("request over {MAX_LINE} bytes")),
            );
            return;
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let Some(answer) = handle(&line, shared) else {
            continue;
        };
        if reply(&mut writer, answer).is_err() {
            return;
        }
    }
}

fn reply(w: &mut UnixStream, text: String) -> std::io::Result<()> {
    let mut text = text;
    text.push('\n');
    w.write_all(text.as_bytes())
}

/// One JSON-RPC message, read without building a tree (the arguments stay
/// text and go to dispatch as they are).
#[derive(serde::Deserialize)]
struct Msg<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
}

#[derive(serde::Deserialize)]
struct CallParams<'a> {
    #[serde(borrow, default)]
    name: Cow<'a, str>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
}

fn rpc_error(id: &str, code: i32, message: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{code},"message":{}}}}}"#,
        Value::String(message.to_string())
    )
}

/// The answer to one message (`None`: a notification).
fn handle(line: &[u8], shared: &Arc<Shared>) -> Option<String> {
    let Ok(msg) = serde_json::from_slice::<Msg<'_>>(line) else {
        return Some(rpc_error(
            "null",
            -32700,
            "parse error: one JSON-RPC object per line",
        ));
    };
    let id = msg.id?.get();
    let method = msg.method.as_deref().unwrap_or("");
    let result = match method {
        "initialize" => {
            let version = msg
                .params
                .and_then(|p| serde_json::from_str::<Value>(p.get()).ok())
                .and_then(|p| {
                    p.get("protocolVersion")
                        .and_then(Value::as_str)
                        .map(String::from)
                })
                .unwrap_or_else(|| "2025-06-18".into());
            json!({
                "protocolVersion": version,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "hermes-tools execute_code", "version": env!("CARGO_PKG_VERSION")},
            })
            .to_string()
        }
        "ping" => "{}".to_string(),
        "tools/list" => {
            let tools: Vec<&Value> = shared.spec.tools.iter().map(|(_, d)| d).collect();
            json!({ "tools": tools }).to_string()
        }
        "tools/call" => {
            let params = msg
                .params
                .and_then(|p| serde_json::from_str::<CallParams<'_>>(p.get()).ok());
            match params {
                Some(p) => call(&p.name, p.arguments, shared),
                None => {
                    return Some(rpc_error(
                        id,
                        -32602,
                        "tools/call: params {name, arguments}",
                    ));
                }
            }
        }
        other => {
            let shown: String = other.chars().take(60).collect();
            return Some(rpc_error(id, -32601, &format!("method not found: {shown}")));
        }
    };
    Some(format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#
    ))
}

/// A tool's result text as MCP's `CallToolResult` (JSON text): the text
/// once (the stubs parse it; no `structuredContent` copy), `isError` when
/// it is an error result (parsed only when it may be one).
fn tool_result(text: String) -> String {
    let failed = (text.contains("\"error\"") || text.contains("\"status\""))
        && serde_json::from_str::<Value>(&text).is_ok_and(|v| {
            v.get("error").is_some_and(|e| !e.is_null())
                || matches!(
                    v.get("status").and_then(Value::as_str),
                    Some("error" | "blocked")
                )
        });
    format!(
        r#"{{"content":[{{"type":"text","text":{}}}],"isError":{failed}}}"#,
        Value::String(text)
    )
}

fn error_result(message: String) -> String {
    tool_result(json!({ "error": message }).to_string())
}

fn call(name: &str, arguments: Option<&RawValue>, shared: &Arc<Shared>) -> String {
    let spec = &shared.spec;
    if !spec.tools.iter().any(|(n, _)| n == name) {
        let shown: String = name.chars().take(80).collect();
        let names: Vec<&str> = spec.tools.iter().map(|(n, _)| n.as_str()).collect();
        return error_result(format!(
            "Tool '{shown}' is not available in execute_code. Available: {}",
            names.join(", ")
        ));
    }
    let n = shared.calls.fetch_add(1, Ordering::AcqRel) + 1;
    if n > spec.max_calls {
        return error_result(format!(
            "Tool call limit reached ({}). No more tool calls allowed in this execution.",
            spec.max_calls
        ));
    }
    let raw = arguments.map_or("{}", RawValue::get);
    let args = if name == "terminal" {
        // Foreground only, in the task's own backend.
        let mut args = match serde_json::from_str::<Value>(raw) {
            Ok(Value::Object(m)) => m,
            _ => Map::new(),
        };
        for k in [
            "background",
            "pty",
            "notify_on_complete",
            "watch_patterns",
            "outside_sandbox",
        ] {
            args.remove(k);
        }
        Value::Object(args).to_string()
    } else {
        raw.to_string()
    };
    let Some(core) = spec.core.upgrade() else {
        return error_result("the runtime is closing".into());
    };
    let ctx = shared.context(n);
    // The file tools end on their own (bounded reads, writes and searches):
    // they run inline on this thread, without the async path's hops to the
    // blocking pool and the callbacks thread; a closing run does not wait
    // for them.
    // Commands and host tools are async dispatches, cancelled when the run
    // ends. A run started from the callbacks thread cannot wait for
    // completions delivered there: its calls are all inline.
    if INLINE_TOOLS.contains(&name) || core.callbacks.is_current() {
        return match hermes_core::dispatch::dispatch_sync(&core, name, &args, ctx) {
            Ok(t) => tool_result(t),
            Err(e) => error_result(e.message),
        };
    }
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    let id = match hermes_core::dispatch::dispatch_async(
        &core,
        name,
        &args,
        ctx,
        Box::new(move |done| {
            let _ = tx.send(done);
        }),
    ) {
        Ok(id) => id,
        Err(e) => return error_result(e.message),
    };
    drop(core);
    shared.inflight.lock().push(id);
    if shared.stopped.load(Ordering::Acquire)
        && let Some(core) = spec.core.upgrade()
    {
        let _ = core.cancel(id);
    }
    let out = loop {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(done) => break tool_result(done.text),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if shared.stopped.load(Ordering::Acquire)
                    && let Some(core) = spec.core.upgrade()
                {
                    let _ = core.cancel(id);
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                break error_result("the runtime closed before the call finished".into());
            }
        }
    };
    shared.inflight.lock().retain(|x| *x != id);
    out
}
