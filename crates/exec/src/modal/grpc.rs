//! A small gRPC client over one HTTP/2 connection (h2): unary and
//! server-streaming calls, the length-prefixed message framing, status
//! from trailers (or from the headers of a trailers-only answer), TLS with
//! ALPN `h2` for `https://` and HTTP/2 with prior knowledge for `http://`.
//!
//! Calls are futures the caller runs with `block_on` on its own thread; the
//! connection's driver runs on a one-worker runtime the client owns. A
//! connection that broke is replaced on the next call.

use std::collections::HashMap;
use std::io;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::{Buf, Bytes, BytesMut};
use h2::RecvStream;
use h2::client::SendRequest;
use http::HeaderMap;

/// The service every method path is under.
const SERVICE: &str = "modal.client.ModalClient";

/// A message larger than this is refused (Modal's clients allow 100 MiB).
const MAX_MESSAGE: usize = 100 << 20;

/// A parsed `http(s)://host[:port]`.
#[derive(Clone, Debug)]
pub struct Endpoint {
    pub tls: bool,
    pub host: String,
    pub port: u16,
}

impl Endpoint {
    pub fn parse(s: &str) -> io::Result<Endpoint> {
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
        let hostport = rest.split('/').next().unwrap_or("");
        let (host, port) = match hostport.rsplit_once(':') {
            Some((h, p)) => (h, p.parse().map_err(|_| bad())?),
            None => (hostport, if tls { 443 } else { 80 }),
        };
        if host.is_empty() {
            return Err(bad());
        }
        Ok(Endpoint {
            tls,
            host: host.to_string(),
            port,
        })
    }

    fn authority(&self) -> String {
        let default = if self.tls { 443 } else { 80 };
        if self.port == default {
            self.host.clone()
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// gRPC status codes the client names.
pub mod code {
    pub const OK: u32 = 0;
    pub const CANCELLED: u32 = 1;
    pub const UNKNOWN: u32 = 2;
    pub const INVALID_ARGUMENT: u32 = 3;
    pub const DEADLINE_EXCEEDED: u32 = 4;
    pub const NOT_FOUND: u32 = 5;
    pub const ALREADY_EXISTS: u32 = 6;
    pub const PERMISSION_DENIED: u32 = 7;
    pub const RESOURCE_EXHAUSTED: u32 = 8;
    pub const FAILED_PRECONDITION: u32 = 9;
    pub const ABORTED: u32 = 10;
    pub const OUT_OF_RANGE: u32 = 11;
    pub const UNIMPLEMENTED: u32 = 12;
    pub const INTERNAL: u32 = 13;
    pub const UNAVAILABLE: u32 = 14;
    pub const DATA_LOSS: u32 = 15;
    pub const UNAUTHENTICATED: u32 = 16;
}

fn code_name(c: u32) -> &'static str {
    match c {
        code::OK => "OK",
        code::CANCELLED => "CANCELLED",
        code::UNKNOWN => "UNKNOWN",
        code::INVALID_ARGUMENT => "INVALID_ARGUMENT",
        code::DEADLINE_EXCEEDED => "DEADLINE_EXCEEDED",
        code::NOT_FOUND => "NOT_FOUND",
        code::ALREADY_EXISTS => "ALREADY_EXISTS",
        code::PERMISSION_DENIED => "PERMISSION_DENIED",
        code::RESOURCE_EXHAUSTED => "RESOURCE_EXHAUSTED",
        code::FAILED_PRECONDITION => "FAILED_PRECONDITION",
        code::ABORTED => "ABORTED",
        code::OUT_OF_RANGE => "OUT_OF_RANGE",
        code::UNIMPLEMENTED => "UNIMPLEMENTED",
        code::INTERNAL => "INTERNAL",
        code::UNAVAILABLE => "UNAVAILABLE",
        code::DATA_LOSS => "DATA_LOSS",
        code::UNAUTHENTICATED => "UNAUTHENTICATED",
        _ => "UNKNOWN",
    }
}

/// A call that ended with a status other than OK.
#[derive(Debug)]
pub struct Status {
    pub code: u32,
    pub message: String,
}

/// The `io::Error` a status becomes: its kind by code, a message naming
/// the method and what to do where the code says it.
pub fn status_error(rpc: &str, code: u32, message: &str) -> io::Error {
    let m = message.trim();
    let detail = if m.is_empty() {
        String::new()
    } else {
        format!(": {m}")
    };
    let (kind, text) = match code {
        code::UNAUTHENTICATED => (
            io::ErrorKind::PermissionDenied,
            format!("modal: the token was refused (MODAL_TOKEN_ID/MODAL_TOKEN_SECRET){detail}"),
        ),
        code::PERMISSION_DENIED => (
            io::ErrorKind::PermissionDenied,
            format!("modal {rpc}: permission denied{detail}"),
        ),
        code::NOT_FOUND => (
            io::ErrorKind::NotFound,
            format!("modal {rpc}: not found{detail}"),
        ),
        code::UNAVAILABLE => (
            io::ErrorKind::ConnectionAborted,
            format!("modal {rpc}: the API is unavailable (UNAVAILABLE){detail}; try again"),
        ),
        code::DEADLINE_EXCEEDED => (
            io::ErrorKind::TimedOut,
            format!("modal {rpc}: no answer in time (DEADLINE_EXCEEDED){detail}"),
        ),
        code::INVALID_ARGUMENT | code::OUT_OF_RANGE => (
            io::ErrorKind::InvalidInput,
            format!("modal {rpc}: {}{detail}", code_name(code)),
        ),
        code::UNIMPLEMENTED => (
            io::ErrorKind::Unsupported,
            format!("modal {rpc}: the API does not serve this method (UNIMPLEMENTED){detail}"),
        ),
        c => (
            io::ErrorKind::Other,
            format!("modal {rpc}: {}{detail}", code_name(c)),
        ),
    };
    io::Error::new(kind, text)
}

/// The gRPC code of an HTTP status that came without one (gRPC's table).
fn http_code(status: u16) -> u32 {
    match status {
        400 => code::INTERNAL,
        401 => code::UNAUTHENTICATED,
        403 => code::PERMISSION_DENIED,
        404 => code::UNIMPLEMENTED,
        429 | 502..=504 => code::UNAVAILABLE,
        _ => code::UNKNOWN,
    }
}

/// `grpc-message` is percent-encoded.
fn pct_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut o = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let Some(v) = std::str::from_utf8(&b[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            o.push(v);
            i += 3;
            continue;
        }
        o.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&o).into_owned()
}

/// The status a header block carries, if any.
fn status_of(h: &HeaderMap) -> Option<Status> {
    let code = h.get("grpc-status")?.to_str().ok()?.trim().parse().ok()?;
    let message = h
        .get("grpc-message")
        .and_then(|v| v.to_str().ok())
        .map(pct_decode)
        .unwrap_or_default();
    Some(Status { code, message })
}

/// A message framed for the wire: flag 0 (uncompressed), 4-byte big-endian
/// length, the message.
pub fn frame(msg: &impl prost::Message) -> Bytes {
    let len = msg.encoded_len();
    let mut b = BytesMut::with_capacity(5 + len);
    b.extend_from_slice(&[0]);
    b.extend_from_slice(&(len as u32).to_be_bytes());
    msg.encode(&mut b).expect("BytesMut grows");
    b.freeze()
}

/// One whole message out of `buf`, if there is one.
fn deframe(buf: &mut BytesMut) -> io::Result<Option<Bytes>> {
    if buf.len() < 5 {
        return Ok(None);
    }
    if buf[0] != 0 {
        return Err(io::Error::other(
            "modal: a compressed gRPC message (the client asked for none)",
        ));
    }
    let n = u32::from_be_bytes([buf[1], buf[2], buf[3], buf[4]]) as usize;
    if n > MAX_MESSAGE {
        return Err(io::Error::other(format!(
            "modal: a gRPC message of {n} bytes is too large"
        )));
    }
    if buf.len() < 5 + n {
        return Ok(None);
    }
    buf.advance(5);
    Ok(Some(buf.split_to(n).freeze()))
}

trait Io: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send> Io for T {}

/// The client: an endpoint, the metadata every call carries, the connection.
pub struct Client {
    ep: Endpoint,
    metadata: Vec<(&'static str, String)>,
    rt: Option<tokio::runtime::Runtime>,
    conn: Mutex<Option<SendRequest<Bytes>>>,
    /// Calls started, by method (round trips for figures and tests).
    calls: Mutex<HashMap<&'static str, u64>>,
    total: AtomicU64,
}

impl Drop for Client {
    fn drop(&mut self) {
        // Dropping a runtime may happen inside another one's context: let
        // its thread go without waiting.
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

/// An answer being read: messages, then the status.
pub struct Reader {
    rpc: &'static str,
    body: RecvStream,
    buf: BytesMut,
    done: bool,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Client {
    pub fn new(url: &str, metadata: Vec<(&'static str, String)>) -> io::Result<Client> {
        let ep = Endpoint::parse(url)?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("ht-modal-h2")
            .enable_all()
            .build()?;
        Ok(Client {
            ep,
            metadata,
            rt: Some(rt),
            conn: Mutex::new(None),
            calls: Mutex::new(HashMap::new()),
            total: AtomicU64::new(0),
        })
    }

    pub fn endpoint(&self) -> &Endpoint {
        &self.ep
    }

    fn rt(&self) -> &tokio::runtime::Runtime {
        self.rt.as_ref().expect("only taken by drop")
    }

    /// Run `f` to completion on the calling thread (the connection is
    /// driven by the client's own runtime). Never call from inside an
    /// async context: [`super::off_runtime`] moves such calls to a thread.
    pub fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        self.rt().block_on(f)
    }

    /// Calls started so far: all, and of method `rpc`.
    pub fn calls(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }
    pub fn calls_of(&self, rpc: &str) -> u64 {
        lock(&self.calls).get(rpc).copied().unwrap_or(0)
    }

    async fn connect(&self) -> io::Result<SendRequest<Bytes>> {
        let what = |e: io::Error| {
            io::Error::new(
                e.kind(),
                format!(
                    "modal: cannot connect to {}:{}: {e}",
                    self.ep.host, self.ep.port
                ),
            )
        };
        let tcp = tokio::time::timeout(
            Duration::from_secs(15),
            tokio::net::TcpStream::connect((self.ep.host.as_str(), self.ep.port)),
        )
        .await
        .map_err(|_| {
            what(io::Error::new(
                io::ErrorKind::TimedOut,
                "no connection within 15 s",
            ))
        })?
        .map_err(what)?;
        let _ = tcp.set_nodelay(true);
        let io: Box<dyn Io> = if self.ep.tls {
            let cx = native_tls::TlsConnector::builder()
                .request_alpns(&["h2"])
                .build()
                .map_err(|e| io::Error::other(format!("modal: TLS: {e}")))?;
            let s = tokio_native_tls::TlsConnector::from(cx)
                .connect(&self.ep.host, tcp)
                .await
                .map_err(|e| io::Error::other(format!("modal: TLS to {}: {e}", self.ep.host)))?;
            let alpn = s.get_ref().negotiated_alpn().ok().flatten();
            if alpn.as_deref() != Some(b"h2") {
                return Err(io::Error::other(format!(
                    "modal: {} did not agree to HTTP/2 (ALPN h2); is api_url a gRPC endpoint?",
                    self.ep.host
                )));
            }
            Box::new(s)
        } else {
            Box::new(tcp)
        };
        let (send, conn) = h2::client::Builder::new()
            .initial_window_size(4 << 20)
            .initial_connection_window_size(8 << 20)
            .max_header_list_size(64 << 10)
            .handshake::<_, Bytes>(io)
            .await
            .map_err(|e| io::Error::other(format!("modal: HTTP/2 handshake: {e}")))?;
        self.rt().spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!("modal: connection ended: {e}");
            }
        });
        Ok(send)
    }

    /// A sender ready for a new stream, connecting (again) when needed.
    async fn sender(&self) -> io::Result<SendRequest<Bytes>> {
        let cur = lock(&self.conn).clone();
        if let Some(s) = cur {
            match s.ready().await {
                Ok(s) => return Ok(s),
                Err(e) => {
                    tracing::debug!("modal: connection unusable, reconnecting: {e}");
                    lock(&self.conn).take();
                }
            }
        }
        let s = self.connect().await?;
        *lock(&self.conn) = Some(s.clone());
        s.ready().await.map_err(|e| self.lost("connect", e))
    }

    /// A transport error: the connection is dropped, the next call makes a new one.
    fn lost(&self, rpc: &str, e: h2::Error) -> io::Error {
        if let Some(r) = e.reason()
            && !e.is_go_away()
            && !e.is_io()
        {
            // A reset of this stream only: the connection stays.
            return io::Error::new(
                io::ErrorKind::ConnectionAborted,
                format!("modal {rpc}: the call was reset ({r:?})"),
            );
        }
        lock(&self.conn).take();
        io::Error::new(
            io::ErrorKind::ConnectionAborted,
            format!("modal {rpc}: the connection to the API was lost ({e})"),
        )
    }

    /// Start a call: the request sent, the answer's headers read.
    pub async fn start(&self, rpc: &'static str, msg: &impl prost::Message) -> io::Result<Reader> {
        let mut send = self.sender().await?;
        *lock(&self.calls).entry(rpc).or_default() += 1;
        self.total.fetch_add(1, Ordering::Relaxed);
        let scheme = if self.ep.tls { "https" } else { "http" };
        let mut req = http::Request::builder()
            .method(http::Method::POST)
            .uri(format!(
                "{scheme}://{}/{SERVICE}/{rpc}",
                self.ep.authority()
            ))
            .header("content-type", "application/grpc")
            .header("te", "trailers")
            .header("grpc-accept-encoding", "identity")
            .header(
                "user-agent",
                concat!("hermes-tools/", env!("CARGO_PKG_VERSION")),
            );
        for (k, v) in &self.metadata {
            req = req.header(*k, v.as_str());
        }
        let req = req
            .body(())
            .map_err(|e| io::Error::other(format!("modal {rpc}: bad request: {e}")))?;
        let (resp, mut stream) = send
            .send_request(req, false)
            .map_err(|e| self.lost(rpc, e))?;
        stream
            .send_data(frame(msg), true)
            .map_err(|e| self.lost(rpc, e))?;
        let resp = resp.await.map_err(|e| self.lost(rpc, e))?;
        let (parts, body) = resp.into_parts();
        // Trailers-only: the status in the headers.
        if let Some(st) = status_of(&parts.headers)
            && st.code != code::OK
        {
            return Err(status_error(rpc, st.code, &st.message));
        }
        if parts.status != http::StatusCode::OK {
            return Err(status_error(
                rpc,
                http_code(parts.status.as_u16()),
                &format!("HTTP {}", parts.status.as_u16()),
            ));
        }
        Ok(Reader {
            rpc,
            body,
            buf: BytesMut::new(),
            done: false,
        })
    }

    /// A unary call.
    pub async fn unary<Resp: prost::Message + Default>(
        &self,
        rpc: &'static str,
        msg: &impl prost::Message,
    ) -> io::Result<Resp> {
        let mut r = self.start(rpc, msg).await?;
        let first = r.next::<Resp>(self).await?;
        // The status comes after the message: read to the end.
        while r.next::<Resp>(self).await?.is_some() {}
        first.ok_or_else(|| {
            io::Error::other(format!("modal {rpc}: the call ended without an answer"))
        })
    }
}

impl Reader {
    /// The next message, or `None` when the call ended with OK.
    pub async fn next<M: prost::Message + Default>(
        &mut self,
        client: &Client,
    ) -> io::Result<Option<M>> {
        loop {
            if let Some(b) = deframe(&mut self.buf)? {
                return M::decode(b).map(Some).map_err(|e| {
                    io::Error::other(format!("modal {}: unreadable answer: {e}", self.rpc))
                });
            }
            if self.done {
                return Ok(None);
            }
            match self.body.data().await {
                Some(Ok(chunk)) => {
                    let _ = self.body.flow_control().release_capacity(chunk.len());
                    self.buf.extend_from_slice(&chunk);
                }
                Some(Err(e)) => return Err(client.lost(self.rpc, e)),
                None => {
                    self.done = true;
                    if !self.buf.is_empty() {
                        return Err(io::Error::new(
                            io::ErrorKind::ConnectionAborted,
                            format!("modal {}: the answer was cut mid-message", self.rpc),
                        ));
                    }
                    let t = self
                        .body
                        .trailers()
                        .await
                        .map_err(|e| client.lost(self.rpc, e))?;
                    return match t.as_ref().and_then(status_of) {
                        Some(st) if st.code == code::OK => Ok(None),
                        Some(st) => Err(status_error(self.rpc, st.code, &st.message)),
                        None => Err(io::Error::new(
                            io::ErrorKind::ConnectionAborted,
                            format!(
                                "modal {}: the answer ended without a status (connection lost)",
                                self.rpc
                            ),
                        )),
                    };
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn framing_and_statuses() {
        let m = crate::modal::proto::ContainerExecResponse {
            exec_id: "e1".into(),
        };
        let f = frame(&m);
        assert_eq!(&f[..], &[0, 0, 0, 0, 4, 0x0a, 2, b'e', b'1']);
        let mut b = BytesMut::from(&f[..3]);
        assert!(deframe(&mut b).unwrap().is_none());
        b.extend_from_slice(&f[3..]);
        b.extend_from_slice(&f[..]);
        assert_eq!(deframe(&mut b).unwrap().unwrap().len(), 4);
        assert_eq!(deframe(&mut b).unwrap().unwrap().len(), 4);
        assert!(b.is_empty());
        assert_eq!(pct_decode("no%20such%20sandbox%"), "no such sandbox%");
        let e = status_error("ContainerExec", code::UNAUTHENTICATED, "bad");
        assert_eq!(e.kind(), io::ErrorKind::PermissionDenied);
        assert!(e.to_string().contains("MODAL_TOKEN_ID"));
        assert_eq!(http_code(503), code::UNAVAILABLE);
        let ep = Endpoint::parse("https://api.modal.com").unwrap();
        assert!(ep.tls && ep.port == 443 && ep.authority() == "api.modal.com");
        let ep = Endpoint::parse("http://127.0.0.1:8080/").unwrap();
        assert_eq!(ep.authority(), "127.0.0.1:8080");
        assert!(Endpoint::parse("grpc://x").is_err());
    }
}
