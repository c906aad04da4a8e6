//! The proxy's connections: HTTP (CONNECT and absolute-URL requests) and
//! SOCKS5 on one Unix socket, told apart by the first byte.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpStream, UnixListener, UnixStream};

use super::policy::{NameVerdict, NetEvents, Refusal, Rules, valid_name};
use super::secrets::Secret;

/// The HTTPS interceptor (feature `tls-intercept`; without it, never made).
#[cfg(feature = "tls-intercept")]
pub(crate) type Tls = super::tls::Interceptor;
#[cfg(not(feature = "tls-intercept"))]
pub(crate) type Tls = std::convert::Infallible;

/// Largest request head read (the request line and headers).
const MAX_HEAD: usize = 64 << 10;
/// How long a client has to send its request, and an upstream to accept.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(30);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// Relay buffer per direction.
const RELAY_BUF: usize = 256 << 10;

pub(crate) struct State {
    pub(crate) rules: Rules,
    pub(crate) secrets: Vec<Secret>,
    /// HTTPS interception for the secrets' hosts (`None`: no secrets).
    #[cfg_attr(not(feature = "tls-intercept"), allow(dead_code))]
    pub(crate) tls: Option<Tls>,
    events: Option<Arc<dyn NetEvents>>,
    /// Answers of the approval handler (`ask`), per host.
    asked: tokio::sync::Mutex<HashMap<String, bool>>,
}

impl State {
    pub(crate) fn new(
        rules: Rules,
        secrets: Vec<Secret>,
        tls: Option<Tls>,
        events: Option<Arc<dyn NetEvents>>,
    ) -> State {
        State {
            rules,
            secrets,
            tls,
            events,
            asked: tokio::sync::Mutex::new(HashMap::new()),
        }
    }

    fn refused(&self, r: &Refusal) {
        tracing::info!(host = %r.host, port = r.port, rule = %r.rule, "network: refused");
        if let Some(e) = &self.events {
            e.refused(r);
        }
    }

    /// Check `host:port` and connect to the first address that passes.
    async fn open(&self, host: &str, port: u16) -> Result<TcpStream, Failure> {
        let (host, addrs) = self.resolve(host, port).await?;
        connect(&host, addrs).await
    }

    /// Check `host:port`: the name, then each address it has; the
    /// addresses that pass (at least one).
    async fn resolve(&self, host: &str, port: u16) -> Result<(String, Vec<SocketAddr>), Failure> {
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .trim_end_matches('.')
            .to_ascii_lowercase();
        let refuse = |rule: &str, message: String| {
            Failure::Refused(Refusal {
                host: host.clone(),
                port,
                rule: rule.into(),
                message,
            })
        };
        if port == 0 {
            return Err(refuse("invalid-host", format!("{host}: port 0")));
        }
        let addrs: Vec<(IpAddr, bool)> = if let Ok(ip) = host.parse::<IpAddr>() {
            vec![(ip, false)]
        } else {
            if !valid_name(&host) {
                return Err(refuse(
                    "invalid-host",
                    format!("'{host}' is not a valid host name"),
                ));
            }
            match self.rules.check_name(&host, port) {
                NameVerdict::Allowed => {}
                NameVerdict::Refused(r) => return Err(Failure::Refused(r)),
                NameVerdict::Unlisted => self.ask(&host, port).await?,
            }
            match self.rules.hosts.get(&host) {
                Some(ips) => ips.iter().map(|ip| (*ip, true)).collect(),
                None => match tokio::net::lookup_host((host.as_str(), port)).await {
                    Ok(it) => it.map(|a| (a.ip(), false)).collect(),
                    Err(e) => {
                        return Err(Failure::Upstream(format!("cannot resolve {host}: {e}")));
                    }
                },
            }
        };
        let mut first_refusal = None;
        let mut passed = Vec::new();
        for (ip, from_hosts) in addrs {
            match self.rules.check_addr(&host, port, ip, from_hosts) {
                Ok(()) => passed.push(SocketAddr::new(ip, port)),
                Err(r) => {
                    first_refusal.get_or_insert(r);
                }
            }
        }
        match (passed.is_empty(), first_refusal) {
            (false, _) => Ok((host, passed)),
            (true, Some(r)) => Err(Failure::Refused(r)),
            (true, None) => Err(Failure::Upstream(format!("{host} has no address"))),
        }
    }

    /// An unlisted name: refused, or with `ask` on, put to the approval
    /// handler once per host for the session.
    async fn ask(&self, host: &str, port: u16) -> Result<(), Failure> {
        let not_listed = |rule: &str, why: &str| {
            Failure::Refused(Refusal {
                host: host.into(),
                port,
                rule: rule.into(),
                message: format!("{host} is not in the allow-list (terminal.network.allow){why}"),
            })
        };
        let events = match (&self.events, self.rules.ask) {
            (Some(e), true) => e.clone(),
            _ => return Err(not_listed("not-allowed", "")),
        };
        let mut asked = self.asked.lock().await;
        let ok = match asked.get(host) {
            Some(ok) => *ok,
            None => {
                let h = host.to_string();
                let ok = tokio::task::spawn_blocking(move || events.ask(&h, port))
                    .await
                    .unwrap_or(false);
                asked.insert(host.to_string(), ok);
                ok
            }
        };
        if ok {
            Ok(())
        } else {
            Err(not_listed(
                "not-approved",
                " and the approval handler did not allow it",
            ))
        }
    }
}

/// Connect to the first of `addrs` that answers.
async fn connect(host: &str, addrs: Vec<SocketAddr>) -> Result<TcpStream, Failure> {
    let mut last_err = String::new();
    for addr in addrs {
        match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(addr)).await {
            Ok(Ok(s)) => {
                let _ = s.set_nodelay(true);
                return Ok(s);
            }
            Ok(Err(e)) => last_err = format!("{addr}: {e}"),
            Err(_) => last_err = format!("{addr}: timed out"),
        }
    }
    Err(Failure::Upstream(format!(
        "cannot connect to {host}: {last_err}"
    )))
}

enum Failure {
    Refused(Refusal),
    /// Allowed, but unreachable: a message for the client.
    Upstream(String),
}

pub(crate) async fn serve(listener: UnixListener, state: Arc<State>) {
    loop {
        match listener.accept().await {
            Ok((s, _)) => {
                let st = state.clone();
                tokio::spawn(async move {
                    if let Err(e) = handle(s, st).await {
                        tracing::debug!("network proxy: connection ended: {e}");
                    }
                });
            }
            Err(e) => {
                tracing::warn!("network proxy: accept: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// A client stream: a connection the proxy accepted in the sandbox's
/// namespace, or one made straight to its Unix socket.
trait Stream: AsyncRead + AsyncWrite + Unpin + Send {
    /// The TCP socket under it, for the splice relay.
    fn as_tcp(&self) -> Option<&TcpStream> {
        None
    }
}
impl Stream for UnixStream {}
#[cfg(feature = "tls-intercept")]
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Stream for tokio_native_tls::TlsStream<T> {}
impl Stream for TcpStream {
    fn as_tcp(&self) -> Option<&TcpStream> {
        Some(self)
    }
}

/// A connection to the Unix socket: a sandbox handing over its listener
/// (the shim's `-P`: one byte `L` and the socket), or a client speaking
/// HTTP or SOCKS5 itself.
async fn handle(c: UnixStream, st: Arc<State>) -> std::io::Result<()> {
    let mut data = [0u8; 8192];
    let (n, fd) = tokio::time::timeout(CLIENT_TIMEOUT, recv_with_fd(&c, &mut data))
        .await
        .map_err(|_| std::io::Error::other("client sent nothing"))??;
    if n == 0 {
        return Ok(());
    }
    if let Some(fd) = fd {
        if n == 1 && data[0] == b'L' {
            return sandbox_listener(c, fd, st).await;
        }
        return Ok(()); // a descriptor with anything else: dropped
    }
    client(c, data[..n].to_vec(), st).await
}

/// One client, its first bytes read: SOCKS5 or HTTP.
async fn client<S: Stream>(c: S, buf: Vec<u8>, st: Arc<State>) -> std::io::Result<()> {
    if buf[0] == 5 {
        socks5(c, buf, &st).await
    } else {
        http(c, buf, &st).await
    }
}

/// Read what is there, with the one descriptor sent along (more than one,
/// or a truncated set: all closed, none returned).
async fn recv_with_fd(
    c: &UnixStream,
    data: &mut [u8],
) -> std::io::Result<(usize, Option<std::os::fd::OwnedFd>)> {
    use rustix::net::{RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, ReturnFlags};
    use std::mem::MaybeUninit;
    loop {
        c.readable().await?;
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
        let mut anc = RecvAncillaryBuffer::new(&mut space);
        let r = c.try_io(tokio::io::Interest::READABLE, || {
            rustix::net::recvmsg(
                c,
                &mut [std::io::IoSliceMut::new(data)],
                &mut anc,
                RecvFlags::CMSG_CLOEXEC,
            )
            .map_err(std::io::Error::from)
        });
        match r {
            Ok(m) => {
                let mut fds = Vec::new();
                for msg in anc.drain() {
                    if let RecvAncillaryMessage::ScmRights(it) = msg {
                        fds.extend(it);
                    }
                }
                let fd = if fds.len() == 1 && !m.flags.contains(ReturnFlags::CTRUNC) {
                    fds.pop()
                } else {
                    None
                };
                return Ok((m.bytes, fd));
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Accept on a listener the runtime made in a container's namespace
/// until `stop`.
pub(crate) async fn serve_listener(
    l: tokio::net::TcpListener,
    st: Arc<State>,
    stop: tokio_util::sync::CancellationToken,
) {
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            r = l.accept() => match r {
                Ok((s, _)) => accepted(s, st.clone()),
                Err(e) => {
                    tracing::debug!("network proxy: accept in a container: {e}");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            },
        }
    }
}

/// Serve one connection accepted in a sandbox's or container's namespace.
fn accepted(s: TcpStream, st: Arc<State>) {
    let _ = s.set_nodelay(true);
    tokio::spawn(async move {
        let mut s = s;
        let mut buf = Vec::with_capacity(4096);
        let first = tokio::time::timeout(CLIENT_TIMEOUT, read_more(&mut s, &mut buf)).await;
        if matches!(first, Ok(Ok(n)) if n > 0)
            && let Err(e) = client(s, buf, st).await
        {
            tracing::debug!("network proxy: connection ended: {e}");
        }
    });
}

/// Accept the sandbox's connections on its own listener (a TCP socket
/// listening in its namespace) until the keeper's connection ends (the
/// sandbox is gone). Anything but a listening TCP socket is dropped.
async fn sandbox_listener(
    mut keeper: UnixStream,
    fd: std::os::fd::OwnedFd,
    st: Arc<State>,
) -> std::io::Result<()> {
    use rustix::net::{AddressFamily, SocketType, sockopt};
    let ok = sockopt::socket_acceptconn(&fd).unwrap_or(false)
        && sockopt::socket_type(&fd).is_ok_and(|t| t == SocketType::STREAM)
        && sockopt::socket_domain(&fd)
            .is_ok_and(|d| d == AddressFamily::INET || d == AddressFamily::INET6);
    if !ok {
        tracing::warn!("network proxy: a sandbox sent a descriptor that is not a TCP listener");
        return Ok(());
    }
    let l = std::net::TcpListener::from(fd);
    l.set_nonblocking(true)?;
    let l = tokio::net::TcpListener::from_std(l)?;
    let mut b = [0u8; 64];
    loop {
        tokio::select! {
            r = l.accept() => match r {
                Ok((s, _)) => accepted(s, st.clone()),
                Err(e) => {
                    tracing::debug!("network proxy: accept in a sandbox: {e}");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            },
            r = keeper.read(&mut b) => match r {
                Ok(0) | Err(_) => return Ok(()),
                Ok(_) => {}
            },
        }
    }
}

async fn read_more<R: AsyncRead + Unpin>(r: &mut R, buf: &mut Vec<u8>) -> std::io::Result<usize> {
    let mut chunk = [0u8; 8192];
    let n = r.read(&mut chunk).await?;
    buf.extend_from_slice(&chunk[..n]);
    Ok(n)
}

/// [`read_more`] within [`CLIENT_TIMEOUT`].
async fn read_timed<R: AsyncRead + Unpin>(r: &mut R, buf: &mut Vec<u8>) -> std::io::Result<usize> {
    tokio::time::timeout(CLIENT_TIMEOUT, read_more(r, buf))
        .await
        .map_err(|_| std::io::Error::other("client too slow"))?
}

/// Relay both ways until both sides are done: socket to socket through a
/// pipe (splice, no copy through this process) when the client is TCP.
async fn relay<S: Stream>(a: &mut S, b: &mut TcpStream) -> std::io::Result<()> {
    if let Some(t) = a.as_tcp() {
        // An error either way ends both (as copy_bidirectional does).
        return tokio::try_join!(splice_one_way(t, b), splice_one_way(b, t)).map(|_| ());
    }
    tokio::io::copy_bidirectional_with_sizes(a, b, RELAY_BUF, RELAY_BUF)
        .await
        .map(|_| ())
}

/// Move everything `from` sends to `to`, then shut `to` for writing.
async fn splice_one_way(from: &TcpStream, to: &TcpStream) -> std::io::Result<()> {
    use rustix::pipe::{PipeFlags, SpliceFlags, splice};
    use tokio::io::Interest;
    let (pr, pw) = rustix::pipe::pipe_with(PipeFlags::CLOEXEC | PipeFlags::NONBLOCK)?;
    let size = rustix::pipe::fcntl_setpipe_size(&pw, RELAY_BUF).unwrap_or(64 << 10);
    let flags = SpliceFlags::MOVE | SpliceFlags::NONBLOCK;
    let result = async {
        loop {
            from.readable().await?;
            let n = match from.try_io(Interest::READABLE, || {
                splice(from, None, &pw, None, size, flags).map_err(std::io::Error::from)
            }) {
                Ok(0) => return Ok(()),
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                Err(e) => return Err(e),
            };
            let mut left = n;
            while left > 0 {
                to.writable().await?;
                match to.try_io(Interest::WRITABLE, || {
                    splice(&pr, None, to, None, left, flags).map_err(std::io::Error::from)
                }) {
                    Ok(m) => left -= m,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                    Err(e) => return Err(e),
                }
            }
        }
    }
    .await;
    let _ = rustix::net::shutdown(to, rustix::net::Shutdown::Write);
    result
}

// ---- HTTP

async fn http<S: Stream>(mut c: S, mut buf: Vec<u8>, st: &State) -> std::io::Result<()> {
    let head_len = loop {
        if let Some(p) = find(&buf, b"\r\n\r\n") {
            break p + 4;
        }
        if buf.len() > MAX_HEAD {
            return respond(
                &mut c,
                431,
                "Request Header Fields Too Large",
                "request head too large\n",
            )
            .await;
        }
        let n = tokio::time::timeout(CLIENT_TIMEOUT, read_more(&mut c, &mut buf))
            .await
            .map_err(|_| std::io::Error::other("request head timed out"))??;
        if n == 0 {
            return Ok(());
        }
    };
    let mut headers = [httparse::EMPTY_HEADER; 128];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(&buf[..head_len]) {
        Ok(httparse::Status::Complete(_)) => {}
        _ => return respond(&mut c, 400, "Bad Request", "malformed HTTP request\n").await,
    }
    let method = req.method.unwrap_or("").to_string();
    let target = req.path.unwrap_or("").to_string();
    let rest = buf[head_len..].to_vec();
    if method.eq_ignore_ascii_case("CONNECT") {
        let Some((host, port)) = split_host_port(&target, None) else {
            return respond(&mut c, 400, "Bad Request", "CONNECT needs host:port\n").await;
        };
        let (norm, addrs) = match st.resolve(&host, port).await {
            Ok(r) => r,
            Err(f) => return fail(&mut c, st, f).await,
        };
        #[cfg(feature = "tls-intercept")]
        if let Some(tls) = &st.tls
            && st
                .secrets
                .iter()
                .any(|s| s.hosts.iter().any(|p| p.matches(&norm)))
        {
            return intercept(c, rest, addrs, &norm, port, st, tls).await;
        }
        let mut up = match connect(&norm, addrs).await {
            Ok(u) => u,
            Err(f) => return fail(&mut c, st, f).await,
        };
        c.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
            .await?;
        if !rest.is_empty() {
            up.write_all(&rest).await?;
        }
        return relay(&mut c, &mut up).await;
    }
    // A plain request: the absolute URL names the host.
    let Some(url) = target
        .get(..7)
        .filter(|s| s.eq_ignore_ascii_case("http://"))
        .map(|_| &target[7..])
    else {
        let why = if target.len() > 8 && target[..8].eq_ignore_ascii_case("https://") {
            "an https:// URL goes through CONNECT (set HTTPS_PROXY)\n"
        } else {
            "this is the sandbox's network proxy: send an absolute http:// URL or CONNECT\n"
        };
        return respond(&mut c, 400, "Bad Request", why).await;
    };
    let end = url.find(['/', '?', '#']).unwrap_or(url.len());
    let authority = &url[..end];
    // user:pass@host: the host is what follows the last '@'.
    let authority = authority.rsplit('@').next().unwrap_or(authority);
    let mut path = url[end..].to_string();
    if let Some(h) = path.find('#') {
        path.truncate(h);
    }
    if !path.starts_with('/') {
        path.insert(0, '/');
    }
    let Some((host, port)) = split_host_port(authority, Some(80)) else {
        return respond(&mut c, 400, "Bad Request", "bad host in the URL\n").await;
    };
    let norm_host = host.trim_end_matches('.').to_ascii_lowercase();
    // The policy first: a refused host is refused as such, whatever the
    // request carries; nothing is connected before the secrets are checked.
    let addrs = match st.resolve(&host, port).await {
        Ok((_, a)) => a,
        Err(f) => return fail(&mut c, st, f).await,
    };
    // The head as sent upstream: origin-form, the URL's host, no proxy or
    // hop-by-hop headers, secrets in place of their placeholders.
    let out = match rewrite_head(st, &method, &path, req.headers, &host, &norm_host, port, 80) {
        Ok(o) => o,
        Err(r) => return fail(&mut c, st, Failure::Refused(r)).await,
    };
    let mut up = match connect(&norm_host, addrs).await {
        Ok(u) => u,
        Err(f) => return fail(&mut c, st, f).await,
    };
    up.write_all(&out).await?;
    drop(out);
    if !rest.is_empty() {
        up.write_all(&rest).await?;
    }
    relay(&mut c, &mut up).await
}

/// The request head as sent upstream: origin-form, the host the proxy
/// checked as `Host`, no proxy or hop-by-hop headers, each secret's
/// placeholder replaced by its value (or a refusal), `Connection: close`.
#[allow(clippy::too_many_arguments)]
fn rewrite_head(
    st: &State,
    method: &str,
    path: &str,
    headers: &[httparse::Header<'_>],
    host: &str,
    norm_host: &str,
    port: u16,
    default_port: u16,
) -> Result<Vec<u8>, Refusal> {
    let mut out = format!("{method} {path} HTTP/1.1\r\n").into_bytes();
    let host_value = if port == default_port {
        authority_host(host)
    } else {
        format!("{}:{port}", authority_host(host))
    };
    out.extend_from_slice(format!("Host: {host_value}\r\n").as_bytes());
    for h in headers {
        let name = h.name.to_ascii_lowercase();
        if matches!(
            name.as_str(),
            "host"
                | "connection"
                | "proxy-connection"
                | "proxy-authorization"
                | "keep-alive"
                | "te"
                | "upgrade"
        ) {
            continue;
        }
        let value = brokered(st, norm_host, port, h.value)?;
        out.extend_from_slice(h.name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(&value);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"Connection: close\r\n\r\n");
    Ok(out)
}

#[cfg(feature = "tls-intercept")]
/// A `CONNECT` to a secret's host: answer the tunnel with this proxy's own
/// certificate for `host`, open TLS to the real upstream, and forward the
/// client's first request with its secrets in place (then relay as is;
/// `Connection: close` keeps it to that one request).
async fn intercept<S: Stream>(
    c: S,
    rest: Vec<u8>,
    addrs: Vec<SocketAddr>,
    host: &str,
    port: u16,
    st: &State,
    tls: &super::tls::Interceptor,
) -> std::io::Result<()> {
    let mut c = c;
    c.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
        .await?;
    let (r, w) = tokio::io::split(c);
    let joined = tokio::io::join(std::io::Cursor::new(rest).chain(r), w);
    let mut ct = tls
        .acceptor(host)?
        .accept(joined)
        .await
        .map_err(std::io::Error::other)?;
    let mut buf = Vec::with_capacity(4096);
    let head_len = loop {
        if let Some(p) = find(&buf, b"\r\n\r\n") {
            break p + 4;
        }
        if buf.len() > MAX_HEAD || read_timed(&mut ct, &mut buf).await? == 0 {
            return Ok(());
        }
    };
    let mut headers = [httparse::EMPTY_HEADER; 128];
    let mut req = httparse::Request::new(&mut headers);
    if !matches!(
        req.parse(&buf[..head_len]),
        Ok(httparse::Status::Complete(_))
    ) {
        return respond(&mut ct, 400, "Bad Request", "malformed HTTP request\n").await;
    }
    let method = req.method.unwrap_or("GET").to_string();
    let path = req.path.unwrap_or("/").to_string();
    let out = match rewrite_head(st, &method, &path, req.headers, host, host, port, 443) {
        Ok(o) => o,
        Err(r) => return fail(&mut ct, st, Failure::Refused(r)).await,
    };
    // The upstream is reached only for a request that may go.
    let up = match connect(host, addrs).await {
        Ok(u) => u,
        Err(f) => return fail(&mut ct, st, f).await,
    };
    let mut ut = match tls.upstream.connect(host, up).await {
        Ok(u) => u,
        Err(e) => {
            let body = format!("hermes-tools network proxy: TLS to {host}:{port} failed: {e}\n");
            return respond(&mut ct, 502, "Bad Gateway", &body).await;
        }
    };
    ut.write_all(&out).await?;
    ut.write_all(&buf[head_len..]).await?;
    tokio::io::copy_bidirectional(&mut ct, &mut ut)
        .await
        .map(|_| ())
}

/// A header value with every secret placeholder replaced by its value, if
/// the request goes to one of that secret's hosts; a refusal otherwise.
fn brokered(st: &State, host: &str, port: u16, value: &[u8]) -> Result<Vec<u8>, Refusal> {
    let mut v = value.to_vec();
    for s in &st.secrets {
        let ph = s.placeholder.as_bytes();
        if find(&v, ph).is_none() {
            continue;
        }
        if !s.hosts.iter().any(|p| p.matches(host)) {
            return Err(Refusal {
                host: host.into(),
                port,
                rule: format!("secret-host:{}", s.name),
                message: format!(
                    "the request carries the secret {}, which may go only to its own hosts (terminal.secrets.{}.hosts), not to {host}",
                    s.name, s.name
                ),
            });
        }
        let mut out = Vec::with_capacity(v.len() + s.value.len());
        let mut rest = &v[..];
        while let Some(p) = find(rest, ph) {
            out.extend_from_slice(&rest[..p]);
            out.extend_from_slice(s.value.as_bytes());
            rest = &rest[p + ph.len()..];
        }
        out.extend_from_slice(rest);
        v = out;
    }
    Ok(v)
}

fn authority_host(host: &str) -> String {
    if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]")
    } else {
        host.to_string()
    }
}

/// `host:port`, `[v6]:port`, or a bare host with `default` as the port.
fn split_host_port(s: &str, default: Option<u16>) -> Option<(String, u16)> {
    if let Some(rest) = s.strip_prefix('[') {
        let (h, after) = rest.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(p) => p.parse().ok()?,
            None if after.is_empty() => default?,
            None => return None,
        };
        return Some((h.to_string(), port));
    }
    match s.rsplit_once(':') {
        Some((h, p)) if !h.contains(':') => Some((h.to_string(), p.parse().ok()?)),
        Some(_) => None,
        None => Some((s.to_string(), default?)),
    }
    .filter(|(h, _)| !h.is_empty())
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || hay.len() < needle.len() {
        return None;
    }
    hay.windows(needle.len()).position(|w| w == needle)
}

async fn respond<S: Stream>(c: &mut S, code: u16, reason: &str, body: &str) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    c.write_all(head.as_bytes()).await?;
    c.write_all(body.as_bytes()).await?;
    c.shutdown().await
}

/// Answer a failure: 403 with the rule for a refusal (and the event), 502
/// for an allowed host that could not be reached.
async fn fail<S: Stream>(c: &mut S, st: &State, f: Failure) -> std::io::Result<()> {
    match f {
        Failure::Refused(r) => {
            st.refused(&r);
            let body = format!(
                "hermes-tools network policy: connection to {}:{} refused ({}): {}\n",
                r.host, r.port, r.rule, r.message
            );
            // The reason phrase carries the gist too: clients that show only
            // the status line (pip, curl's CONNECT errors) still say why.
            let reason = format!(
                "Forbidden by sandbox network policy: {} ({})",
                r.host, r.rule
            );
            respond(c, 403, &reason, &body).await
        }
        Failure::Upstream(m) => {
            let body = format!("hermes-tools network proxy: {m}\n");
            respond(c, 502, "Bad Gateway", &body).await
        }
    }
}

// ---- SOCKS5 (RFC 1928), no authentication, CONNECT only.

async fn socks5<S: Stream>(mut c: S, mut buf: Vec<u8>, st: &State) -> std::io::Result<()> {
    // Greeting: VER NMETHODS METHODS...
    while buf.len() < 2 || buf.len() < 2 + buf[1] as usize {
        if read_timed(&mut c, &mut buf).await? == 0 {
            return Ok(());
        }
    }
    let greet = 2 + buf[1] as usize;
    if !buf[2..greet].contains(&0) {
        c.write_all(&[5, 0xff]).await?;
        return Ok(());
    }
    c.write_all(&[5, 0]).await?;
    buf.drain(..greet);
    // Request: VER CMD RSV ATYP ADDR PORT.
    let need = |b: &[u8]| -> Option<usize> {
        if b.len() < 5 {
            return None;
        }
        let n = match b[3] {
            1 => 4,
            4 => 16,
            3 => 1 + b[4] as usize,
            _ => 0,
        };
        Some(4 + n + 2)
    };
    loop {
        match need(&buf) {
            Some(n) if buf.len() >= n => break,
            _ => {
                if read_timed(&mut c, &mut buf).await? == 0 {
                    return Ok(());
                }
            }
        }
    }
    let reply = |code: u8| [5, code, 0, 1, 0, 0, 0, 0, 0, 0];
    if buf[0] != 5 || !matches!(buf[3], 1 | 3 | 4) {
        c.write_all(&reply(8)).await?;
        return Ok(());
    }
    let (host, at) = match buf[3] {
        1 => (
            IpAddr::from([buf[4], buf[5], buf[6], buf[7]]).to_string(),
            8,
        ),
        4 => {
            let mut o = [0u8; 16];
            o.copy_from_slice(&buf[4..20]);
            (IpAddr::from(o).to_string(), 20)
        }
        _ => {
            let n = buf[4] as usize;
            (String::from_utf8_lossy(&buf[5..5 + n]).into_owned(), 5 + n)
        }
    };
    let port = u16::from_be_bytes([buf[at], buf[at + 1]]);
    if buf[1] != 1 {
        // BIND and UDP ASSOCIATE: not offered.
        st.refused(&Refusal {
            host,
            port,
            rule: "socks-command".into(),
            message: "only SOCKS5 CONNECT (TCP) goes through the sandbox's proxy".into(),
        });
        c.write_all(&reply(7)).await?;
        return Ok(());
    }
    let rest = buf[at + 2..].to_vec();
    let mut up = match st.open(&host, port).await {
        Ok(u) => u,
        Err(Failure::Refused(r)) => {
            st.refused(&r);
            c.write_all(&reply(2)).await?;
            return Ok(());
        }
        Err(Failure::Upstream(m)) => {
            tracing::debug!("network proxy: socks5: {m}");
            c.write_all(&reply(5)).await?;
            return Ok(());
        }
    };
    c.write_all(&reply(0)).await?;
    if !rest.is_empty() {
        up.write_all(&rest).await?;
    }
    relay(&mut c, &mut up).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_port_forms() {
        assert_eq!(split_host_port("a.b:443", None), Some(("a.b".into(), 443)));
        assert_eq!(split_host_port("a.b", Some(80)), Some(("a.b".into(), 80)));
        assert_eq!(split_host_port("a.b", None), None);
        assert_eq!(
            split_host_port("[::1]:8080", None),
            Some(("::1".into(), 8080))
        );
        assert_eq!(split_host_port("::1", Some(80)), None);
        assert_eq!(split_host_port(":80", None), None);
        assert_eq!(split_host_port("a.b:x", None), None);
    }
}
