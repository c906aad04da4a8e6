//! The daytona backend: a native client of Daytona's HTTP API (sandbox
//! lifecycle) and of the toolbox API of the daemon inside each sandbox
//! (process sessions, files), written from their published OpenAPI
//! definitions. It is a [`HostProvider`], so commands get the host
//! environment's machinery (a local proxy per command that the pump,
//! timeouts and kills follow; state capture; files through the provider).
//!
//! Per task: get the sandbox named `<prefix><task>` or create it, start it
//! when stopped, open one toolbox session. Per command: one `exec` request
//! (`runAsync`), its output streamed over one WebSocket
//! (`.../logs?follow=true`: stdout and stderr frames carry the daemon's
//! 3-byte stream markers), then one request for the exit code: three round
//! trips, no polling. A kill runs the mark's kill loop through
//! `process/execute`. Files: the toolbox file API (download, multipart
//! upload, list). Cleanup stops (`persistent`) or deletes the sandbox.
//!
//! The API key comes from the config or `DAYTONA_API_KEY` and is only ever
//! written into the `Authorization` header: `Debug` redacts it and no error
//! or log line carries a request's headers.
//!
//! HTTP/1.1 over std sockets (TLS through the system's OpenSSL via
//! native-tls, as the MCP client's reqwest): one connection per request
//! (`Connection: close`), which keeps the client small and synchronous.

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::fs::Entry;
use crate::host::{FileOp, FileReply, HostCommand, HostEnv, HostExec, HostProvider};
use crate::remote_fs::shq;

/// `"terminal": {"daytona": {...}}` as the exec layer takes it.
#[derive(Clone, Default)]
pub struct DaytonaConfig {
    /// `https://app.daytona.io/api` or a self-hosted API.
    pub api_url: String,
    pub api_key: String,
    /// An image (`debian:12`) or a snapshot name; neither: the account's default.
    pub image: Option<String>,
    pub snapshot: Option<String>,
    /// Sandbox names are `<prefix><task>`.
    pub name_prefix: String,
    /// Stop (keep) the sandbox at cleanup instead of deleting it.
    pub persistent: bool,
    pub cpu: Option<u32>,
    pub memory_gb: Option<u32>,
    pub disk_gb: Option<u32>,
    /// Minutes before Daytona stops an idle sandbox (0: never).
    pub auto_stop_minutes: u32,
}

impl std::fmt::Debug for DaytonaConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DaytonaConfig")
            .field("api_url", &self.api_url)
            .field("api_key", &"<redacted>")
            .field("image", &self.image)
            .field("snapshot", &self.snapshot)
            .field("persistent", &self.persistent)
            .finish()
    }
}

impl DaytonaConfig {
    pub fn validate(&self) -> Result<(), String> {
        if self.api_key.trim().is_empty() {
            return Err(
                "daytona: no API key (set DAYTONA_API_KEY or terminal.daytona.api_key)".into(),
            );
        }
        Url::parse(&self.api_url).map_err(|e| format!("daytona: api_url: {e}"))?;
        Ok(())
    }
}

/// A parsed `http(s)://host[:port]/path`.
#[derive(Clone, Debug)]
struct Url {
    tls: bool,
    host: String,
    port: u16,
    path: String,
}

impl Url {
    fn parse(s: &str) -> io::Result<Url> {
        let bad = || {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("not an http(s) URL: {s}"),
            )
        };
        let (tls, rest) = if let Some(r) = s.strip_prefix("https://") {
            (true, r)
        } else if let Some(r) = s.strip_prefix("http://") {
            (false, r)
        } else {
            return Err(bad());
        };
        let (hostport, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        let (host, port) = match hostport.rsplit_once(':') {
            Some((h, p)) => (h, p.parse().map_err(|_| bad())?),
            None => (hostport, if tls { 443 } else { 80 }),
        };
        if host.is_empty() {
            return Err(bad());
        }
        Ok(Url {
            tls,
            host: host.to_string(),
            port,
            path: path.to_string(),
        })
    }
}

/// Percent-encode a query value or path segment.
fn enc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~/".contains(&b) {
            o.push(b as char);
        } else {
            o.push_str(&format!("%{b:02X}"));
        }
    }
    o
}

trait Conn: Read + Write + Send {}
impl<T: Read + Write + Send> Conn for T {}

/// A response: status and body (headers only as far as the client needs).
struct Response {
    status: u16,
    body: Vec<u8>,
}

impl Response {
    fn json(&self) -> io::Result<serde_json::Value> {
        serde_json::from_slice(&self.body)
            .map_err(|e| io::Error::other(format!("daytona: unreadable answer ({e})")))
    }
    fn error(&self, what: &str) -> io::Error {
        let msg = serde_json::from_slice::<serde_json::Value>(&self.body)
            .ok()
            .and_then(|v| v["message"].as_str().map(String::from))
            .unwrap_or_else(|| {
                String::from_utf8_lossy(&self.body)
                    .chars()
                    .take(200)
                    .collect()
            });
        let kind = match self.status {
            401 | 403 => io::ErrorKind::PermissionDenied,
            404 => io::ErrorKind::NotFound,
            _ => io::ErrorKind::Other,
        };
        io::Error::new(
            kind,
            format!("daytona {what}: HTTP {} {}", self.status, msg.trim()),
        )
    }
}

/// A response's status and headers, and the connection to read the rest from.
type Head = (u16, Vec<(String, String)>, BufReader<Box<dyn Conn>>);

/// The HTTP client: bearer authentication, one connection per request.
struct Http {
    key: String,
    #[cfg(feature = "daytona-tls")]
    tls: Option<native_tls::TlsConnector>,
    /// Requests sent (figures and tests: round trips per command).
    requests: AtomicU64,
}

impl Http {
    fn connect(&self, u: &Url) -> io::Result<Box<dyn Conn>> {
        use std::net::ToSocketAddrs;
        let addr = (u.host.as_str(), u.port)
            .to_socket_addrs()?
            .next()
            .ok_or_else(|| io::Error::other(format!("daytona: cannot resolve {}", u.host)))?;
        let tcp = TcpStream::connect_timeout(&addr, Duration::from_secs(15))?;
        tcp.set_nodelay(true)?;
        if !u.tls {
            return Ok(Box::new(tcp));
        }
        #[cfg(feature = "daytona-tls")]
        {
            let tls = match &self.tls {
                Some(t) => t,
                None => return Err(io::Error::other("daytona: TLS is not available")),
            };
            tls.connect(&u.host, tcp)
                .map(|s| Box::new(s) as Box<dyn Conn>)
                .map_err(|e| io::Error::other(format!("daytona: TLS to {}: {e}", u.host)))
        }
        #[cfg(not(feature = "daytona-tls"))]
        {
            drop(tcp);
            Err(io::Error::other(
                "daytona: this build has no TLS (feature daytona-tls): only http:// endpoints",
            ))
        }
    }

    /// Send a request; returns the open connection after the head was read.
    fn send(
        &self,
        method: &str,
        url: &str,
        body: Option<(&str, &[u8])>,
        extra: &[(&str, &str)],
    ) -> io::Result<Head> {
        let u = Url::parse(url)?;
        let mut c = self.connect(&u)?;
        self.requests.fetch_add(1, Ordering::Relaxed);
        let mut head = format!(
            "{method} {} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nUser-Agent: hermes-tools\r\nAccept: application/json\r\n",
            u.path, u.host, self.key
        );
        for (k, v) in extra {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        match body {
            Some((ct, b)) => head.push_str(&format!(
                "Content-Type: {ct}\r\nContent-Length: {}\r\n",
                b.len()
            )),
            None if method == "POST" => head.push_str("Content-Length: 0\r\n"),
            None => {}
        }
        if !extra.iter().any(|(k, _)| *k == "Connection") {
            head.push_str("Connection: close\r\n");
        }
        head.push_str("\r\n");
        c.write_all(head.as_bytes())?;
        if let Some((_, b)) = body {
            c.write_all(b)?;
        }
        c.flush()?;
        let mut r = BufReader::new(c);
        let mut line = String::new();
        r.read_line(&mut line)?;
        let status: u16 = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::ConnectionAborted,
                    "daytona: connection closed without an answer",
                )
            })?;
        let mut headers = Vec::new();
        loop {
            line.clear();
            if r.read_line(&mut line)? == 0 {
                break;
            }
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            if let Some((k, v)) = l.split_once(':') {
                headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
            }
        }
        Ok((status, headers, r))
    }

    fn request(
        &self,
        method: &str,
        url: &str,
        body: Option<(&str, &[u8])>,
    ) -> io::Result<Response> {
        let (status, headers, mut r) = self.send(method, url, body, &[])?;
        let get = |k: &str| {
            headers
                .iter()
                .find(|(h, _)| h == k)
                .map(|(_, v)| v.as_str())
        };
        let mut out = Vec::new();
        if get("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
            loop {
                let mut line = String::new();
                r.read_line(&mut line)?;
                let n = usize::from_str_radix(line.trim().split(';').next().unwrap_or(""), 16)
                    .map_err(|_| io::Error::other("daytona: bad chunk"))?;
                if n == 0 {
                    break;
                }
                let at = out.len();
                out.resize(at + n, 0);
                r.read_exact(&mut out[at..])?;
                let mut crlf = [0u8; 2];
                r.read_exact(&mut crlf)?;
            }
        } else if let Some(n) = get("content-length").and_then(|v| v.parse::<usize>().ok()) {
            out.resize(n, 0);
            r.read_exact(&mut out)?;
        } else {
            r.read_to_end(&mut out)?;
        }
        Ok(Response { status, body: out })
    }

    fn json(&self, method: &str, url: &str, body: &serde_json::Value) -> io::Result<Response> {
        let b = body.to_string();
        self.request(method, url, Some(("application/json", b.as_bytes())))
    }
}

/// The daemon's stream markers in non-combined session logs.
const STDOUT_MARK: &[u8] = b"\x01\x01\x01";
const STDERR_MARK: &[u8] = b"\x02\x02\x02";

/// Splits session log bytes into stdout (1) and stderr (2) by the markers,
/// across frame boundaries.
#[derive(Default)]
pub struct Demux {
    stream: i32,
    pending: Vec<u8>,
}

impl Demux {
    /// Feed bytes; `out(stream, data)` for what is known.
    pub fn feed(&mut self, data: &[u8], out: &mut dyn FnMut(i32, &[u8])) {
        if self.stream == 0 {
            self.stream = 1;
        }
        self.pending.extend_from_slice(data);
        let buf = std::mem::take(&mut self.pending);
        let mut start = 0;
        let mut i = 0;
        while i < buf.len() {
            let rest = &buf[i..];
            let m = if rest.starts_with(STDOUT_MARK) {
                Some(1)
            } else if rest.starts_with(STDERR_MARK) {
                Some(2)
            } else {
                None
            };
            if let Some(s) = m {
                if start < i {
                    out(self.stream, &buf[start..i]);
                }
                self.stream = s;
                i += 3;
                start = i;
                continue;
            }
            // a marker may be cut at the end of this frame: keep it
            if (rest[0] == 1 || rest[0] == 2)
                && rest.len() < 3
                && rest.iter().all(|b| *b == rest[0])
            {
                if start < i {
                    out(self.stream, &buf[start..i]);
                }
                self.pending = rest.to_vec();
                return;
            }
            i += 1;
        }
        if start < buf.len() {
            out(self.stream, &buf[start..]);
        }
    }
}

/// Read one WebSocket frame (server frames are not masked): `(opcode, payload)`.
fn ws_frame(r: &mut dyn BufRead) -> io::Result<(u8, Vec<u8>)> {
    let mut h = [0u8; 2];
    r.read_exact(&mut h)?;
    let op = h[0] & 0x0f;
    let masked = h[1] & 0x80 != 0;
    let mut len = u64::from(h[1] & 0x7f);
    if len == 126 {
        let mut b = [0u8; 2];
        r.read_exact(&mut b)?;
        len = u64::from(u16::from_be_bytes(b));
    } else if len == 127 {
        let mut b = [0u8; 8];
        r.read_exact(&mut b)?;
        len = u64::from_be_bytes(b);
    }
    if len > 64 << 20 {
        return Err(io::Error::other("daytona: log frame too large"));
    }
    let mut mask = [0u8; 4];
    if masked {
        r.read_exact(&mut mask)?;
    }
    let mut p = vec![0u8; len as usize];
    r.read_exact(&mut p)?;
    if masked {
        for (i, b) in p.iter_mut().enumerate() {
            *b ^= mask[i % 4];
        }
    }
    Ok((op, p))
}

/// A task's sandbox.
#[derive(Clone)]
struct Sandbox {
    id: String,
    toolbox: String,
    session: String,
}

struct Running {
    task: String,
    mark: Option<String>,
}

/// The provider.
pub struct Daytona {
    cfg: DaytonaConfig,
    api: String,
    http: Http,
    sandboxes: Mutex<HashMap<String, Arc<Mutex<Option<Sandbox>>>>>,
    running: Mutex<HashMap<u64, Running>>,
    closed: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Daytona {
    pub fn new(cfg: DaytonaConfig) -> Result<Daytona, String> {
        cfg.validate()?;
        #[cfg(feature = "daytona-tls")]
        let tls = native_tls::TlsConnector::new().ok();
        Ok(Daytona {
            api: cfg.api_url.trim_end_matches('/').to_string(),
            http: Http {
                key: cfg.api_key.clone(),
                #[cfg(feature = "daytona-tls")]
                tls,
                requests: AtomicU64::new(0),
            },
            cfg,
            sandboxes: Mutex::new(HashMap::new()),
            running: Mutex::new(HashMap::new()),
            closed: AtomicBool::new(false),
        })
    }

    /// The endpoint answers and takes the key (one authenticated list request).
    pub fn check(&self) -> io::Result<()> {
        let r = self
            .http
            .request("GET", &format!("{}/sandbox", self.api), None)?;
        if r.status == 200 {
            Ok(())
        } else {
            Err(r.error("list sandboxes"))
        }
    }

    /// HTTP requests sent so far.
    pub fn requests(&self) -> u64 {
        self.http.requests.load(Ordering::Relaxed)
    }

    pub fn location(&self) -> String {
        let host = Url::parse(&self.api).map(|u| u.host).unwrap_or_default();
        format!("in a Daytona sandbox ({host})")
    }

    fn sandbox_name(&self, task: &str) -> String {
        let t: String = task
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c.to_ascii_lowercase()
                } else {
                    '-'
                }
            })
            .take(48)
            .collect();
        format!("{}{t}", self.cfg.name_prefix)
    }

    /// Get or create task `task`'s sandbox, started, with a session.
    fn ensure(&self, task: &str) -> io::Result<Sandbox> {
        if self.closed.load(Ordering::Acquire) {
            return Err(io::Error::other("daytona backend is closed"));
        }
        let slot = lock(&self.sandboxes)
            .entry(task.to_string())
            .or_default()
            .clone();
        let mut g = lock(&slot);
        if let Some(s) = g.as_ref() {
            return Ok(s.clone());
        }
        let name = self.sandbox_name(task);
        let r = self
            .http
            .request("GET", &format!("{}/sandbox/{}", self.api, enc(&name)), None)?;
        let mut sb = match r.status {
            200 => r.json()?,
            404 => {
                let mut body = serde_json::json!({
                    "name": name,
                    "labels": {"hermes-tools.task": task},
                    "autoStopInterval": self.cfg.auto_stop_minutes,
                });
                if let Some(i) = &self.cfg.image {
                    body["image"] = i.clone().into();
                }
                if let Some(s) = &self.cfg.snapshot {
                    body["snapshot"] = s.clone().into();
                }
                for (k, v) in [
                    ("cpu", self.cfg.cpu),
                    ("memory", self.cfg.memory_gb),
                    ("disk", self.cfg.disk_gb),
                ] {
                    if let Some(v) = v {
                        body[k] = v.into();
                    }
                }
                let r = self
                    .http
                    .json("POST", &format!("{}/sandbox", self.api), &body)?;
                if !(200..300).contains(&r.status) {
                    return Err(r.error("create sandbox"));
                }
                r.json()?
            }
            _ => return Err(r.error("get sandbox")),
        };
        let id = sb["id"].as_str().unwrap_or_default().to_string();
        if id.is_empty() {
            return Err(io::Error::other("daytona: sandbox without an id"));
        }
        let until = Instant::now() + Duration::from_secs(120);
        let mut asked_start = false;
        loop {
            match sb["state"].as_str().unwrap_or("") {
                "started" => break,
                "error" | "build_failed" | "destroyed" => {
                    return Err(io::Error::other(format!(
                        "daytona: sandbox {name} is in state '{}'",
                        sb["state"].as_str().unwrap_or("")
                    )));
                }
                "stopped" | "archived" if !asked_start => {
                    let r = self.http.request(
                        "POST",
                        &format!("{}/sandbox/{id}/start", self.api),
                        None,
                    )?;
                    if !(200..300).contains(&r.status) {
                        return Err(r.error("start sandbox"));
                    }
                    asked_start = true;
                }
                _ => {}
            }
            if Instant::now() > until {
                return Err(io::Error::other(format!(
                    "daytona: sandbox {name} did not start within 120 s"
                )));
            }
            std::thread::sleep(Duration::from_millis(250));
            let r = self
                .http
                .request("GET", &format!("{}/sandbox/{id}", self.api), None)?;
            if r.status != 200 {
                return Err(r.error("get sandbox"));
            }
            sb = r.json()?;
        }
        let toolbox = match sb["toolboxProxyUrl"].as_str() {
            Some(p) if !p.is_empty() => format!("{}/{id}", p.trim_end_matches('/')),
            _ => format!("{}/toolbox/{id}/toolbox", self.api),
        };
        // The key goes to the toolbox too: never in clear text when the API is TLS.
        if self.api.starts_with("https://") && !toolbox.starts_with("https://") {
            return Err(io::Error::other(format!(
                "daytona: the API gave a toolbox address without TLS ({}); refusing to send the key there",
                Url::parse(&toolbox).map(|u| u.host).unwrap_or_default()
            )));
        }
        let session = format!("hermes-tools-{}", std::process::id());
        let r = self.http.json(
            "POST",
            &format!("{toolbox}/process/session"),
            &serde_json::json!({"sessionId": session}),
        )?;
        // 409: the session is there already (a sandbox kept from before).
        if !(200..300).contains(&r.status) && r.status != 409 {
            return Err(r.error("create session"));
        }
        let s = Sandbox {
            id,
            toolbox,
            session,
        };
        *g = Some(s.clone());
        Ok(s)
    }

    fn forget(&self, task: &str) {
        if let Some(slot) = lock(&self.sandboxes).get(task) {
            lock(slot).take();
        }
    }

    /// Run `cmd`, streaming into `exec`: `(exit code, provider's message)`.
    fn run(&self, cmd: &HostCommand, exec: &mut HostExec) -> io::Result<i32> {
        let sb = self.ensure(&cmd.task)?;
        // A child bash: the session's own shell keeps no state of ours.
        let mut line = format!("bash -c {}", shq(&cmd.script));
        if !cmd.stdin.is_empty() {
            line = format!("printf %s {} | base64 -d | {line}", shq(&b64(&cmd.stdin)));
        } else {
            line.push_str(" < /dev/null");
        }
        let r = self.http.json(
            "POST",
            &format!("{}/process/session/{}/exec", sb.toolbox, sb.session),
            &serde_json::json!({"command": line, "runAsync": true}),
        )?;
        if r.status == 404 {
            self.forget(&cmd.task);
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                "the daytona sandbox of this task disappeared; the next command creates a new one",
            ));
        }
        if !(200..300).contains(&r.status) {
            return Err(r.error("exec"));
        }
        let cmd_id = r.json()?["cmdId"].as_str().unwrap_or_default().to_string();
        let base = format!(
            "{}/process/session/{}/command/{}",
            sb.toolbox,
            sb.session,
            enc(&cmd_id)
        );
        // The output, over one WebSocket.
        let (status, _, mut conn) = self.http.send(
            "GET",
            &format!("{base}/logs?follow=true"),
            None,
            &[
                ("Connection", "Upgrade"),
                ("Upgrade", "websocket"),
                ("Sec-WebSocket-Version", "13"),
                ("Sec-WebSocket-Key", "aGVybWVzLXRvb2xzLWxvZ3M="),
            ],
        )?;
        if status != 101 {
            return Err(io::Error::other(format!(
                "daytona logs: HTTP {status} (no stream)"
            )));
        }
        let mut demux = Demux::default();
        let mut gone = false;
        loop {
            match ws_frame(&mut conn) {
                Ok((8, _)) => break,
                Ok((0..=2, p)) => {
                    demux.feed(&p, &mut |s, d| {
                        let s = if cmd.capture { s } else { 1 };
                        if exec.output(s, d).is_err() {
                            gone = true;
                        }
                    });
                    if gone {
                        // nobody reads: the terminal kills it by its mark
                        return Ok(255);
                    }
                }
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                    return Err(io::Error::new(
                        io::ErrorKind::ConnectionAborted,
                        "daytona: the output stream was cut before the command ended (connection lost)",
                    ));
                }
                Err(e) => return Err(e),
            }
        }
        drop(conn);
        // Its exit code: one request (a short wait only if the daemon has
        // not written it yet).
        for _ in 0..20 {
            let r = self.http.request("GET", &base, None)?;
            if r.status == 404 {
                self.forget(&cmd.task);
                return Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    "the daytona sandbox of this task disappeared; the next command creates a new one",
                ));
            }
            if r.status != 200 {
                return Err(r.error("command status"));
            }
            if let Some(c) = r.json()?["exitCode"].as_i64() {
                return Ok(c as i32);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err(io::Error::other(
            "daytona: the command ended without an exit code",
        ))
    }

    fn kill_inside(&self, task: &str, mark: &str, signal: i32) -> io::Result<()> {
        let Some(sb) = lock(&self.sandboxes)
            .get(task)
            .and_then(|s| lock(s).clone())
        else {
            return Ok(());
        };
        let script = crate::apptainer::kill_script(mark, signal);
        let r = self.http.json(
            "POST",
            &format!("{}/process/execute", sb.toolbox),
            &serde_json::json!({"command": format!("bash -c {}", shq(&script)), "timeout": 10}),
        )?;
        if !(200..300).contains(&r.status) {
            return Err(r.error("kill"));
        }
        Ok(())
    }

    fn toolbox(&self, task: &str) -> io::Result<String> {
        Ok(self.ensure(task)?.toolbox)
    }
}

/// Standard base64 (stdin of a command travels inside its command line).
fn b64(data: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut o = String::with_capacity(data.len().div_ceil(3) * 4);
    for c in data.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                o.push(T[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                o.push('=');
            }
        }
    }
    o
}

/// The provider as a host environment holds it (its command threads share it).
pub struct DaytonaProvider(pub Arc<Daytona>);

impl HostProvider for DaytonaProvider {
    fn start(&self, cmd: HostCommand, exec: HostExec) {
        self.0.start(cmd, exec)
    }
    fn kill(&self, id: u64, signal: i32) {
        self.0.kill(id, signal)
    }
    fn cleanup(&self, task: Option<&str>) {
        self.0.cleanup(task)
    }
    fn has_files(&self) -> bool {
        true
    }
    fn file(&self, op: FileOp) -> io::Result<FileReply> {
        self.0.file(op)
    }
}

impl Daytona {
    fn start(self: &Arc<Self>, cmd: HostCommand, mut exec: HostExec) {
        lock(&self.running).insert(
            cmd.id,
            Running {
                task: cmd.task.clone(),
                mark: cmd.mark.clone(),
            },
        );
        let d = self.clone();
        std::thread::Builder::new()
            .name(format!("ht-daytona-{}", cmd.id))
            .spawn(move || {
                let r = d.run(&cmd, &mut exec);
                lock(&d.running).remove(&cmd.id);
                match r {
                    Ok(code) => exec.finish(code, None),
                    Err(e) => exec.finish(255, Some(e.to_string())),
                }
            })
            .ok();
    }

    fn kill(&self, id: u64, signal: i32) {
        let found = lock(&self.running)
            .get(&id)
            .and_then(|r| r.mark.clone().map(|m| (r.task.clone(), m)));
        if let Some((task, mark)) = found
            && let Err(e) = self.kill_inside(&task, &mark, signal)
        {
            tracing::debug!("daytona: kill: {e}");
        }
    }

    fn cleanup(&self, task: Option<&str>) {
        let tasks: Vec<String> = match task {
            Some(t) => vec![t.to_string()],
            None => {
                self.closed.store(true, Ordering::Release);
                lock(&self.sandboxes).keys().cloned().collect()
            }
        };
        for t in tasks {
            let Some(slot) = lock(&self.sandboxes).remove(&t) else {
                continue;
            };
            let Some(sb) = lock(&slot).take() else {
                continue;
            };
            let r = if self.cfg.persistent {
                self.http.request(
                    "POST",
                    &format!("{}/sandbox/{}/stop", self.api, sb.id),
                    None,
                )
            } else {
                self.http
                    .request("DELETE", &format!("{}/sandbox/{}", self.api, sb.id), None)
            };
            match r {
                Ok(r) if (200..300).contains(&r.status) || r.status == 404 => {}
                Ok(r) => tracing::warn!("{}", r.error("cleanup")),
                Err(e) => tracing::warn!("daytona cleanup: {e}"),
            }
        }
    }

    fn file(&self, op: FileOp) -> io::Result<FileReply> {
        match op {
            FileOp::Read { task, path } => {
                let tb = self.toolbox(&task)?;
                let r = self.http.request(
                    "GET",
                    &format!("{tb}/files/download?path={}", enc(&path.to_string_lossy())),
                    None,
                )?;
                if r.status != 200 {
                    return Err(r.error(&format!("read {}", path.display())));
                }
                Ok(FileReply::Data(r.body))
            }
            FileOp::Write {
                task, path, data, ..
            } => {
                let tb = self.toolbox(&task)?;
                let boundary = format!("ht-{}", std::process::id());
                let mut body = Vec::with_capacity(data.len() + 256);
                body.extend_from_slice(
                    format!(
                        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{}\"\r\nContent-Type: application/octet-stream\r\n\r\n",
                        path.file_name().map(|n| n.to_string_lossy().replace('"', "")).unwrap_or_default()
                    )
                    .as_bytes(),
                );
                body.extend_from_slice(&data);
                body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
                let ct = format!("multipart/form-data; boundary={boundary}");
                let r = self.http.request(
                    "POST",
                    &format!("{tb}/files/upload?path={}", enc(&path.to_string_lossy())),
                    Some((&ct, &body)),
                )?;
                if !(200..300).contains(&r.status) {
                    return Err(r.error(&format!("write {}", path.display())));
                }
                Ok(FileReply::Done)
            }
            FileOp::List { task, path } => {
                let tb = self.toolbox(&task)?;
                let r = self.http.request(
                    "GET",
                    &format!("{tb}/files?path={}", enc(&path.to_string_lossy())),
                    None,
                )?;
                if r.status != 200 {
                    return Err(r.error(&format!("list {}", path.display())));
                }
                let v = r.json()?;
                Ok(FileReply::Entries(
                    v.as_array()
                        .map(|a| {
                            a.iter()
                                .filter_map(|e| {
                                    Some(Entry {
                                        name: e["name"].as_str()?.to_string(),
                                        is_dir: e["isDir"].as_bool().unwrap_or(false),
                                    })
                                })
                                .collect()
                        })
                        .unwrap_or_default(),
                ))
            }
        }
    }
}

/// The daytona backend: a [`HostEnv`] over [`Daytona`].
pub fn backend(cfg: DaytonaConfig) -> Result<(Arc<HostEnv>, Arc<Daytona>), String> {
    let d = Arc::new(Daytona::new(cfg)?);
    let env = HostEnv::builtin(
        "daytona",
        Some(d.location()),
        Arc::new(DaytonaProvider(d.clone())),
    );
    Ok((Arc::new(env), d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demux_splits_streams_across_frames() {
        let mut d = Demux::default();
        let mut got: Vec<(i32, Vec<u8>)> = Vec::new();
        let mut push = |s: i32, b: &[u8]| got.push((s, b.to_vec()));
        d.feed(b"\x01\x01\x01out1\x02\x02", &mut push);
        d.feed(b"\x02err\x01\x01\x01out2", &mut push);
        let joined: Vec<(i32, String)> = got
            .iter()
            .map(|(s, b)| (*s, String::from_utf8_lossy(b).into_owned()))
            .collect();
        assert_eq!(
            joined,
            vec![(1, "out1".into()), (2, "err".into()), (1, "out2".into())]
        );
    }

    #[test]
    fn urls_base64_and_redaction() {
        let u = Url::parse("https://app.daytona.io/api").unwrap();
        assert!(u.tls && u.port == 443 && u.host == "app.daytona.io" && u.path == "/api");
        let u = Url::parse("http://127.0.0.1:8080").unwrap();
        assert!(!u.tls && u.port == 8080 && u.path == "/");
        assert!(Url::parse("ftp://x").is_err());
        assert_eq!(b64(b"hermes"), "aGVybWVz");
        assert_eq!(b64(b"ab"), "YWI=");
        let c = DaytonaConfig {
            api_key: "dtn_secret_value".into(),
            api_url: "https://app.daytona.io/api".into(),
            ..Default::default()
        };
        assert!(!format!("{c:?}").contains("dtn_secret_value"));
        assert!(
            DaytonaConfig::default()
                .validate()
                .unwrap_err()
                .contains("DAYTONA_API_KEY")
        );
    }
}
