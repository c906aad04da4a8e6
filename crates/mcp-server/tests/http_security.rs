//! The HTTP endpoint as an attacker sees it (issue 28): requests without the
//! bearer token, with a wrong one or from a foreign browser origin are
//! refused; sessions are bounded and one session's quotas leave another's
//! alone; an unknown tool is a JSON-RPC error; `logging/setLevel` works.
//! In process: the server on its own tokio runtime, a hand-written HTTP/1.1
//! client on plain sockets (what an attacker would use, and no client
//! library deciding things for us).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hermes_mcp_server::{Auth, Options};
use hermes_runtime::Runtime;
use serde_json::{Value, json};

struct Served {
    addr: SocketAddr,
    token: Option<String>,
    token_file: Option<std::path::PathBuf>,
    stop: tokio_util::sync::CancellationToken,
    thread: Option<std::thread::JoinHandle<()>>,
    dir: std::path::PathBuf,
}

impl Drop for Served {
    fn drop(&mut self) {
        self.stop.cancel();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn serve(name: &str, opts: Options) -> Served {
    let dir = std::env::temp_dir().join(format!("ht-http-sec-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = json!({"builtin_toolsets": ["terminal", "todo"], "terminal": {"cwd": dir}});
    let rt = Arc::new(Runtime::new(&cfg.to_string()).unwrap());
    let mut opts = opts;
    if opts.http.token_dir.is_none() {
        opts.http.token_dir = Some(dir.join("tokens"));
    }
    let std_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    std_listener.set_nonblocking(true).unwrap();
    let addr = std_listener.local_addr().unwrap();
    let auth = hermes_mcp_server::prepare_http(addr, &opts).unwrap();
    let token = auth.token().map(String::from);
    let token_file = auth.token_file().map(|p| p.to_path_buf());
    let stop = tokio_util::sync::CancellationToken::new();
    let s = stop.clone();
    let thread = std::thread::spawn(move || {
        let engine = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        engine.block_on(async move {
            let l = tokio::net::TcpListener::from_std(std_listener).unwrap();
            hermes_mcp_server::serve_http(rt.clone(), l, &opts, auth, s)
                .await
                .unwrap();
            rt.close();
        });
    });
    Served {
        addr,
        token,
        token_file,
        stop,
        thread: Some(thread),
        dir,
    }
}

#[derive(Debug)]
struct Resp {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Resp {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC messages of the body (plain JSON or SSE `data:` lines).
    fn messages(&self) -> Vec<Value> {
        if let Ok(v) = serde_json::from_str::<Value>(&self.body) {
            return vec![v];
        }
        self.body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str(d.trim()).ok())
            .collect()
    }

    fn answer(&self, id: i64) -> Value {
        self.messages()
            .into_iter()
            .find(|m| m["id"] == json!(id))
            .unwrap_or_else(|| panic!("no answer to {id} in {self:?}"))
    }
}

fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(nl) = raw.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size = std::str::from_utf8(&raw[..nl]).unwrap_or("0");
        let size = usize::from_str_radix(size.split(';').next().unwrap().trim(), 16).unwrap_or(0);
        raw = &raw[nl + 2..];
        if size == 0 || raw.len() < size {
            return out;
        }
        out.extend_from_slice(&raw[..size]);
        raw = &raw[(size + 2).min(raw.len())..];
    }
}

fn http(addr: SocketAddr, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Resp {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\naccept: application/json, text/event-stream\r\ncontent-type: application/json\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no response head: {:?}", String::from_utf8_lossy(&raw)));
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    if headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"))
    {
        body = dechunk(&body);
    }
    Resp {
        status,
        headers,
        body: String::from_utf8_lossy(&body).to_string(),
    }
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"attacker","version":"1"}}}"#;

/// An MCP session over the raw client.
struct Session {
    addr: SocketAddr,
    auth: String,
    id: String,
    next: i64,
}

impl Session {
    fn open(s: &Served) -> Result<Session, Resp> {
        let auth = format!("Bearer {}", s.token.as_deref().unwrap_or(""));
        let r = http(s.addr, "POST", "/mcp", &[("authorization", &auth)], INIT);
        if r.status != 200 {
            return Err(r);
        }
        let id = r.header("mcp-session-id").expect("session id").to_string();
        let mut session = Session {
            addr: s.addr,
            auth,
            id,
            next: 10,
        };
        let n = session.post(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        assert_eq!(n.status, 202, "{n:?}");
        Ok(session)
    }

    fn post(&mut self, body: &str) -> Resp {
        http(
            self.addr,
            "POST",
            "/mcp",
            &[
                ("authorization", &self.auth),
                ("mcp-session-id", &self.id),
                ("mcp-protocol-version", "2025-06-18"),
            ],
            body,
        )
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        let r = self.post(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
        );
        assert_eq!(r.status, 200, "{r:?}");
        r.answer(id)
    }

    fn call(&mut self, tool: &str, args: Value) -> Value {
        self.request("tools/call", json!({"name": tool, "arguments": args}))
    }

    fn close(self) -> u16 {
        http(
            self.addr,
            "DELETE",
            "/mcp",
            &[("authorization", &self.auth), ("mcp-session-id", &self.id)],
            "",
        )
        .status
    }
}

#[test]
fn requests_without_the_token_or_with_a_wrong_one_are_refused() {
    let s = serve("auth", Options::default());
    // No token: 401 and where to learn what is needed.
    let r = http(s.addr, "POST", "/mcp", &[], INIT);
    assert_eq!(r.status, 401, "{r:?}");
    let challenge = r.header("www-authenticate").expect("a challenge");
    let meta_url = format!("http://{}/.well-known/oauth-protected-resource/mcp", s.addr);
    assert!(challenge.starts_with("Bearer "), "{challenge}");
    assert!(
        challenge.contains(&format!("resource_metadata=\"{meta_url}\"")),
        "{challenge}"
    );
    // A wrong token (same length, one character off), another scheme, or
    // the token with no scheme: 401 invalid_token.
    let token = s.token.clone().unwrap();
    let mut wrong = token.clone().into_bytes();
    wrong[0] = if wrong[0] == b'0' { b'1' } else { b'0' };
    let wrong = String::from_utf8(wrong).unwrap();
    for bad in [
        format!("Bearer {wrong}"),
        format!("Basic {token}"),
        token.clone(),
        format!("Bearer {token}x"),
        "Bearer ".to_string(),
    ] {
        let r = http(s.addr, "POST", "/mcp", &[("authorization", &bad)], INIT);
        assert_eq!(r.status, 401, "{bad}: {r:?}");
        assert!(
            r.header("www-authenticate")
                .unwrap()
                .contains("invalid_token"),
            "{r:?}"
        );
    }
    // A tool call without the token in a session someone else opened.
    let mut victim = Session::open(&s).expect("the right token opens a session");
    let r = http(
        s.addr,
        "POST",
        "/mcp",
        &[("mcp-session-id", &victim.id)],
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"terminal","arguments":{"command":"touch pwned"}}}"#,
    );
    assert_eq!(r.status, 401, "{r:?}");
    assert!(!s.dir.join("pwned").exists());
    // The token file holds the token, for the owner only.
    let file = s.token_file.clone().expect("a generated token has a file");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), token);
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o600
    );
    // The protected-resource metadata is public and names the endpoint.
    let m = http(
        s.addr,
        "GET",
        "/.well-known/oauth-protected-resource/mcp",
        &[],
        "",
    );
    assert_eq!(m.status, 200, "{m:?}");
    let doc: Value = serde_json::from_str(&m.body).unwrap();
    assert_eq!(doc["resource"], json!(format!("http://{}/mcp", s.addr)));
    assert_eq!(doc["bearer_methods_supported"], json!(["header"]));
    let ok = victim.call("todo", json!({}));
    assert!(ok.get("result").is_some(), "{ok}");
    drop(s);
    assert!(
        !file.exists(),
        "the generated token's file is removed at stop"
    );
}

#[test]
fn a_host_token_is_used_and_no_auth_lets_anyone_in() {
    let mut opts = Options::default();
    opts.http.auth = Auth::Token("host-given-token-0123456789".into());
    let s = serve("host-token", opts);
    assert!(s.token_file.is_none());
    let r = http(
        s.addr,
        "POST",
        "/mcp",
        &[("authorization", "Bearer host-given-token-0123456789")],
        INIT,
    );
    assert_eq!(r.status, 200, "{r:?}");
    drop(s);
    let mut opts = Options::default();
    opts.http.auth = Auth::None;
    let s = serve("no-auth", opts);
    let r = http(s.addr, "POST", "/mcp", &[], INIT);
    assert_eq!(r.status, 200, "{r:?}");
}

#[test]
fn foreign_and_null_origins_are_refused() {
    let s = serve("origin", Options::default());
    let auth = format!("Bearer {}", s.token.as_deref().unwrap());
    for bad in [
        "http://evil.example",
        "null",
        "http://localhost.evil.example:80",
    ] {
        let r = http(
            s.addr,
            "POST",
            "/mcp",
            &[("authorization", &auth), ("origin", bad)],
            INIT,
        );
        assert_eq!(r.status, 403, "{bad}: {r:?}");
    }
    let r = http(
        s.addr,
        "POST",
        "/mcp",
        &[
            ("authorization", &auth),
            ("origin", "http://localhost:6274"),
        ],
        INIT,
    );
    assert_eq!(r.status, 200, "{r:?}");
    drop(s);
    let mut opts = Options::default();
    opts.http.allowed_origins = vec!["null".into()];
    let s = serve("origin-null", opts);
    let auth = format!("Bearer {}", s.token.as_deref().unwrap());
    let r = http(
        s.addr,
        "POST",
        "/mcp",
        &[("authorization", &auth), ("origin", "null")],
        INIT,
    );
    assert_eq!(r.status, 200, "configured null: {r:?}");
}

#[test]
fn one_sessions_process_quota_does_not_affect_another() {
    let mut opts = Options::default();
    opts.limits.session_max_processes = 2;
    let s = serve("procs", opts);
    let mut a = Session::open(&s).unwrap();
    let mut b = Session::open(&s).unwrap();
    let mine = format!("{}.{}", 600 + std::process::id() % 97, 1);
    for _ in 0..2 {
        let r = a.call(
            "terminal",
            json!({"command": format!("sleep {mine}"), "background": true}),
        );
        assert_eq!(r["result"]["isError"], json!(false), "{r}");
    }
    let over = a.call(
        "terminal",
        json!({"command": "sleep 60", "background": true}),
    );
    assert_eq!(over["result"]["isError"], json!(true), "{over}");
    assert!(over.to_string().contains("session_max_processes"), "{over}");
    // Red team 2026-11-28: "True", "TRUE", 1 (turned into true by
    // argument repair) started processes past the quota uncounted.
    for background in [json!("True"), json!("TRUE"), json!(1), json!("yes")] {
        let over = a.call(
            "terminal",
            json!({"command": "sleep 60", "background": background}),
        );
        assert_eq!(
            over["result"]["isError"],
            json!(true),
            "{background}: {over}"
        );
        assert!(over.to_string().contains("session_max_processes"), "{over}");
    }
    // The other session is not affected by a's processes.
    let r = b.call(
        "terminal",
        json!({"command": "sleep 60", "background": true}),
    );
    assert_eq!(r["result"]["isError"], json!(false), "{r}");
    // Closing a session releases its processes (and its quota with them):
    // they are killed, not left running.
    let running = || live_processes(&format!("sleep {mine}"));
    let until = Instant::now() + Duration::from_secs(10);
    while running() < 2 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(running(), 2);
    assert_eq!(a.close(), 202);
    let until = Instant::now() + Duration::from_secs(5);
    while running() > 0 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(running(), 0, "a closed session's processes outlived it");
    let mut c = Session::open(&s).unwrap();
    let r = c.call(
        "terminal",
        json!({"command": "sleep 60", "background": true}),
    );
    assert_eq!(r["result"]["isError"], json!(false), "{r}");
}

#[test]
fn sessions_over_the_limit_are_refused_and_idle_ones_closed() {
    let mut opts = Options::default();
    opts.limits.max_sessions = 2;
    opts.limits.session_idle_timeout = Duration::from_secs(1);
    let s = serve("sessions", opts);
    let _a = Session::open(&s).unwrap();
    let _b = Session::open(&s).unwrap();
    let r = Session::open(&s).err().expect("a third session is refused");
    assert_eq!(r.status, 503, "{r:?}");
    assert!(r.body.contains("max_sessions"), "{r:?}");
    // Idle sessions are closed; then a new one is admitted.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match Session::open(&s) {
            Ok(_) => break,
            Err(r) if r.status == 503 && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(200))
            }
            Err(r) => panic!("idle sessions were not closed: {r:?}"),
        }
    }
}

#[test]
fn unknown_tools_are_protocol_errors_and_logging_has_a_level() {
    let s = serve("conformance", Options::default());
    let mut a = Session::open(&s).unwrap();
    let r = a.call("no_such_tool", json!({}));
    assert_eq!(r["error"]["code"], json!(-32602), "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no_such_tool"),
        "{r}"
    );
    let r = a.request("logging/setLevel", json!({"level": "debug"}));
    assert!(r.get("result").is_some(), "{r}");
    // At debug, a call is reported as log messages (on the session's
    // standalone stream, where rmcp sends notifications that are not
    // progress).
    let (addr, auth, sid) = (a.addr, a.auth.clone(), a.id.clone());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut st = TcpStream::connect(addr).unwrap();
        st.set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let req = format!(
            "GET /mcp HTTP/1.1\r\nhost: {addr}\r\naccept: text/event-stream\r\nauthorization: {auth}\r\nmcp-session-id: {sid}\r\nmcp-protocol-version: 2025-06-18\r\n\r\n"
        );
        st.write_all(req.as_bytes()).unwrap();
        let mut seen = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut buf = [0u8; 4096];
        // The stream is open once its response head has come.
        while !seen.windows(4).any(|w| w == b"\r\n\r\n") && Instant::now() < deadline {
            if let Ok(n) = st.read(&mut buf) {
                seen.extend_from_slice(&buf[..n]);
            }
        }
        let _ = tx.send(String::new());
        while Instant::now() < deadline {
            match st.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
                Err(_) => {}
            }
            if String::from_utf8_lossy(&seen).contains("call.finished") {
                break;
            }
        }
        let _ = tx.send(String::from_utf8_lossy(&seen).to_string());
    });
    rx.recv().unwrap();
    let r = a.call("todo", json!({}));
    assert!(r.get("result").is_some(), "{r}");
    let stream = rx.recv_timeout(Duration::from_secs(60)).unwrap();
    assert!(stream.contains("notifications/message"), "{stream}");
    assert!(stream.contains("\"level\":\"debug\""), "{stream}");
    assert!(
        stream.contains("call.started") && stream.contains("call.finished"),
        "{stream}"
    );
}

#[test]
fn one_sessions_calls_in_flight_do_not_block_another() {
    let mut opts = Options::default();
    opts.limits.session_max_calls = 1;
    let s = serve("calls", opts);
    let mut a = Session::open(&s).unwrap();
    let mut b = Session::open(&s).unwrap();
    let (addr, auth, id) = (a.addr, a.auth.clone(), a.id.clone());
    // a's one allowed call, running until its file appears.
    let gate = s.dir.join("gate");
    let cmd = format!("while [ ! -e {} ]; do sleep 0.1; done", gate.display());
    let long = std::thread::spawn(move || {
        let mut a2 = Session {
            addr,
            auth,
            id,
            next: 1000,
        };
        a2.call("terminal", json!({"command": cmd, "timeout": 60}))
    });
    // Wait until the long call's command runs (it is then in flight).
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let out = std::process::Command::new("pgrep")
            .args(["-f", &gate.display().to_string()])
            .output()
            .unwrap();
        if !out.stdout.is_empty() {
            break;
        }
        assert!(
            !long.is_finished(),
            "the long call ended: {:?}",
            long.join()
        );
        assert!(Instant::now() < deadline, "the long call never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    let refused = a.call("todo", json!({}));
    assert_eq!(refused["error"]["code"], json!(-32000), "{refused}");
    assert!(
        refused.to_string().contains("session_max_calls"),
        "{refused}"
    );
    // b is not affected by a's call.
    let r = b.call("todo", json!({}));
    assert!(r.get("result").is_some(), "{r}");
    std::fs::write(&gate, "").unwrap();
    let r = long.join().unwrap();
    assert_eq!(r["result"]["isError"], json!(false), "{r}");
    // a's quota is free again.
    let r = a.call("todo", json!({}));
    assert!(r.get("result").is_some(), "{r}");
}

/// With the sandbox backend (the default where it works), one session
/// cannot see, signal or read another session's processes: each command
/// has a PID namespace of its own.
#[test]
fn sessions_cannot_see_or_kill_each_others_processes() {
    if hermes_exec::sandbox::usable_or_required().is_err() {
        eprintln!("sandbox not usable here: skipped");
        return;
    }
    let s = serve("isolation", Options::default());
    let mut a = Session::open(&s).unwrap();
    let mut b = Session::open(&s).unwrap();
    let tag = format!("{}.{}", 500 + std::process::id() % 97, 7);
    let r = a.call(
        "terminal",
        json!({"command": format!("sleep {tag}"), "background": true}),
    );
    assert_eq!(r["result"]["isError"], json!(false), "{r}");
    let alive = || live_processes(&format!("sleep {tag}")) > 0;
    let until = Instant::now() + Duration::from_secs(10);
    while !alive() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(alive(), "session a's process did not start");
    let text = |r: &Value| {
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    let seen = b.call(
        "terminal",
        json!({"command": "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done"}),
    );
    assert!(
        !text(&seen).contains(&tag),
        "b sees a's process: {}",
        text(&seen)
    );
    let killed = b.call(
        "terminal",
        json!({"command": format!("pkill -f 'slee[p] {tag}'; echo rc=$?")}),
    );
    assert!(text(&killed).contains("rc=1"), "{}", text(&killed));
    assert!(alive(), "b killed a's process");
    assert_eq!(a.close(), 202);
}

/// Live (not zombie) processes whose command line is exactly `argv`.
fn live_processes(argv: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|p| {
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
            !stat
                .rfind(')')
                .is_some_and(|i| stat[i + 1..].trim_start().starts_with('Z'))
                && std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| {
                    String::from_utf8_lossy(&c).replace('\0', " ").trim_end() == argv
                })
        })
        .count()
}

/// A client whose connection drops during a call gets the call's result by
/// reconnecting with `Last-Event-ID` (the id of the priming event that
/// opened the call's stream), as SSE polling (SEP-1699) does. (A reconnect
/// after the result was written finds nothing: rmcp drops a request's
/// stream once its response is sent.)
#[test]
fn a_dropped_call_stream_resumes_with_last_event_id() {
    let s = serve("resume", Options::default());
    let a = Session::open(&s).unwrap();
    let mut st = TcpStream::connect(a.addr).unwrap();
    st.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let body = json!({"jsonrpc": "2.0", "id": 77, "method": "tools/call",
        "params": {"name": "terminal", "arguments": {"command": "sleep 1; echo resumed-ok"}}})
    .to_string();
    write!(
        st,
        "POST /mcp HTTP/1.1\r\nhost: {}\r\naccept: application/json, text/event-stream\r\ncontent-type: application/json\r\nauthorization: {}\r\nmcp-session-id: {}\r\nmcp-protocol-version: 2025-06-18\r\ncontent-length: {}\r\n\r\n{body}",
        a.addr,
        a.auth,
        a.id,
        body.len()
    )
    .unwrap();
    // Up to the priming event (an id, no data), then the connection drops.
    let mut seen = Vec::new();
    let mut buf = [0u8; 1024];
    let last_id = loop {
        let n = st.read(&mut buf).unwrap();
        assert!(n > 0, "stream ended: {}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&seen);
        if let Some(id) = text
            .lines()
            .find_map(|l| l.strip_prefix("id:").map(|v| v.trim().to_string()))
        {
            break id;
        }
    };
    assert!(
        !String::from_utf8_lossy(&seen).contains("resumed-ok"),
        "the result came before the drop"
    );
    drop(st);
    let r = http(
        a.addr,
        "GET",
        "/mcp",
        &[
            ("authorization", &a.auth),
            ("mcp-session-id", &a.id),
            ("mcp-protocol-version", "2025-06-18"),
            ("last-event-id", &last_id),
        ],
        "",
    );
    assert_eq!(r.status, 200, "{r:?}");
    let result = r.answer(77);
    assert!(
        result["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("resumed-ok"),
        "{result}"
    );
}

/// Red team 2026-11-28 (round 2): a DELETE racing a background start left
/// the process running in the dead session's task (10 of 15 survived);
/// about 250 races filled the runtime's 64 processes for everyone.
#[test]
fn a_session_deleted_during_a_background_start_leaves_nothing_running() {
    let s = serve("delete-race", Options::default());
    let base = 700 + std::process::id() % 97;
    let mut marks = Vec::new();
    for i in 0..12 {
        let mut a = Session::open(&s).unwrap();
        let mark = format!("sleep {base}.{i}");
        marks.push(mark.clone());
        let (addr, auth, id) = (a.addr, a.auth.clone(), a.id.clone());
        let starter = std::thread::spawn(move || {
            a.next += 1;
            let _ = a.post(
                &json!({"jsonrpc": "2.0", "id": a.next, "method": "tools/call",
                        "params": {"name": "terminal", "arguments": {"command": mark, "background": true}}})
                .to_string(),
            );
        });
        std::thread::sleep(Duration::from_millis(2 * (i % 5)));
        let r = http(
            addr,
            "DELETE",
            "/mcp",
            &[("authorization", &auth), ("mcp-session-id", &id)],
            "",
        );
        assert!(matches!(r.status, 200 | 202 | 204 | 404), "{r:?}");
        starter.join().unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(15);
    let alive = || marks.iter().map(|m| live_processes(m)).sum::<usize>();
    while alive() > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(alive(), 0, "processes of deleted sessions still run");
}

/// Red team 2026-11-28 (round 2): initializes released together all passed
/// the front's count (200 sessions against max_sessions 6).
#[test]
fn simultaneous_initializes_cannot_overshoot_max_sessions() {
    use std::io::{Read, Write};
    let mut opts = Options::default();
    opts.limits.max_sessions = 3;
    let s = serve("session-race", opts);
    let auth = format!("Bearer {}", s.token.as_deref().unwrap_or(""));
    let req = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: {auth}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{INIT}",
        s.addr,
        INIT.len()
    );
    let mut socks: Vec<std::net::TcpStream> = (0..24)
        .map(|_| {
            let mut c = std::net::TcpStream::connect(s.addr).unwrap();
            c.write_all(&req.as_bytes()[..req.len() - 1]).unwrap();
            c
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    for c in &mut socks {
        c.write_all(&req.as_bytes()[req.len() - 1..]).unwrap();
    }
    let mut admitted = 0;
    for c in &mut socks {
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
            match c.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        let head = String::from_utf8_lossy(&buf).to_ascii_lowercase();
        if head.starts_with("http/1.1 200") && head.contains("mcp-session-id") {
            admitted += 1;
        }
    }
    assert!(
        admitted <= 3,
        "{admitted} sessions admitted with max_sessions 3"
    );
    assert!(admitted >= 1, "none admitted: the test proves nothing");
}
