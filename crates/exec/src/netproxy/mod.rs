//! The sandbox's egress proxy: a network allow-list and secrets brokering.
//!
//! A sandbox whose `terminal.network` is an allow-list keeps bubblewrap's
//! `--unshare-net` (its own network namespace: loopback only, no route
//! out). The one way out is a Unix socket of this proxy, bound into the
//! sandbox at [`SOCKET_INSIDE`]. Before the command starts, the process
//! shim (`-P`) listens on `127.0.0.1:`[`PORT_INSIDE`] inside the namespace
//! and hands that listening socket to the proxy over the Unix socket
//! (`SCM_RIGHTS`), so the proxy accepts the sandbox's connections itself
//! with no relay in between; a keeper process holds the hand-over
//! connection open until the sandbox ends, and the proxy then lets the
//! listener go. The command gets `HTTP_PROXY`,
//! `HTTPS_PROXY` and `ALL_PROXY` (and their lower-case forms) pointing
//! there. The proxy runs in the runtime process on a small tokio runtime of
//! its own and speaks, on the same socket:
//! - HTTP `CONNECT host:port` (HTTPS and any other TCP a client tunnels);
//! - plain HTTP with an absolute URL (`GET http://host/path`), forwarded
//!   with `Connection: close` (one request per connection);
//! - SOCKS5 `CONNECT` (names or addresses; UDP ASSOCIATE and BIND are
//!   refused).
//!
//! It resolves names itself (the sandbox has no DNS: a name the proxy does
//! not allow is never looked up) and checks both the name and every address
//! against [`policy::Rules`]. A refusal answers `403` with a body naming the
//! host and the rule (SOCKS5: "connection not allowed by ruleset"), and
//! tells the host through [`NetEvents::refused`]; with `ask` on, an unlisted
//! name is put to the approval handler first ([`NetEvents::ask`]) and the
//! answer holds for the proxy's life (the session).
//!
//! Secrets: each [`Secret`] has a random placeholder that the command sees
//! in its environment instead of the value. In a plain-HTTP request the
//! proxy replaces the placeholder in the header values with the real value
//! when the request goes to one of the secret's hosts, and refuses the
//! request (403, `secret-host:NAME`) when it goes anywhere else. HTTPS to a
//! secret's hosts is intercepted ([`tls`]): the proxy makes a CA of its own
//! (its key only in this process's memory), the sandbox trusts it through a
//! CA bundle bound at [`CA_INSIDE`] (`SSL_CERT_FILE`, `CURL_CA_BUNDLE`,
//! `REQUESTS_CA_BUNDLE`, `PIP_CERT`, `GIT_SSL_CAINFO`,
//! `NODE_EXTRA_CA_CERTS`), a `CONNECT` to such a host is answered with a
//! certificate for it, the proxy makes TLS to the real upstream itself
//! (system roots, plus `upstream_ca`) and puts the value in the first
//! request's headers (`Connection: close`: one request per tunnel). A
//! `CONNECT` to any other host stays an end-to-end tunnel, where the
//! placeholder travels as it is. The real value never enters the sandbox,
//! the events or the logs (an upstream that echoes the request's headers
//! back would show it: the response is not rewritten).
//!
//! Not covered: UDP and raw sockets (the namespace has no route for them:
//! they fail), DNS itself (the sandbox resolves nothing; clients must use
//! the proxy), and what an allowed host does with what it is sent. A name
//! is checked, not the TLS server name or `Host` header a client sends
//! inside a tunnel (domain fronting through an allowed CDN stays possible).

pub mod policy;
pub mod secrets;
mod server;
#[cfg(feature = "tls-intercept")]
mod tls;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use policy::{NetEvents, Refusal, Rules};
pub use secrets::Secret;
use secrets::random_hex;

/// Where the proxy's socket is bound inside the sandbox.
pub const SOCKET_INSIDE: &str = "/run/ht-net.sock";

/// Where the CA bundle (the system's roots and the proxy's own CA, when it
/// intercepts HTTPS for secrets) is bound inside the sandbox.
pub const CA_INSIDE: &str = "/run/ht-ca.pem";

/// The loopback port the proxy listens on inside the sandbox's network
/// namespace (its own: nothing else there uses it).
pub const PORT_INSIDE: u16 = 3128;

/// A running proxy: its socket, its threads. Dropped, it stops and its
/// socket is removed.
pub struct NetProxy {
    socket: PathBuf,
    /// The CA bundle the sandbox trusts (with secrets only).
    ca_bundle: Option<PathBuf>,
    dir: PathBuf,
    state: Arc<server::State>,
    rt: Option<tokio::runtime::Runtime>,
}

impl std::fmt::Debug for NetProxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NetProxy")
            .field("socket", &self.socket)
            .field("rules", &self.state.rules.describe())
            .finish_non_exhaustive()
    }
}

impl NetProxy {
    /// Start a proxy enforcing `rules` and brokering `secrets`, listening on
    /// a fresh socket in a new 0700 directory under the temp dir.
    pub fn start(
        rules: Rules,
        secrets: Vec<Secret>,
        events: Option<Arc<dyn NetEvents>>,
    ) -> io::Result<Arc<NetProxy>> {
        let dir = private_dir()?;
        let socket = dir.join("net.sock");
        // Secrets: HTTPS to their hosts is intercepted with a CA of this
        // proxy's own, which the sandbox trusts.
        #[cfg(feature = "tls-intercept")]
        let (tls, ca_bundle): (Option<server::Tls>, Option<PathBuf>) = if secrets.is_empty() {
            (None, None)
        } else {
            let i = tls::Interceptor::new(&rules.upstream_ca)?;
            let p = dir.join("ca.pem");
            std::fs::write(&p, &i.bundle)?;
            (Some(i), Some(p))
        };
        #[cfg(not(feature = "tls-intercept"))]
        let (tls, ca_bundle): (Option<server::Tls>, Option<PathBuf>) = {
            if !secrets.is_empty() {
                tracing::warn!(
                    "network proxy: built without HTTPS interception (feature tls-intercept): secrets are put in place in plain-HTTP requests only"
                );
            }
            (None, None)
        };
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .max_blocking_threads(4)
            .thread_name("ht-netproxy")
            .enable_all()
            .build()?;
        let listener = {
            let _g = rt.enter();
            tokio::net::UnixListener::bind(&socket)?
        };
        let state = Arc::new(server::State::new(rules, secrets, tls, events));
        rt.spawn(server::serve(listener, state.clone()));
        Ok(Arc::new(NetProxy {
            socket,
            ca_bundle,
            dir,
            state,
            rt: Some(rt),
        }))
    }

    /// The socket on this machine (bound into the sandbox).
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// The CA bundle a sandbox must trust (bound at [`CA_INSIDE`]): the
    /// system's roots and the proxy's CA; `None` without secrets.
    pub fn ca_bundle(&self) -> Option<&Path> {
        self.ca_bundle.as_deref()
    }

    /// The policy, as written.
    pub fn describe(&self) -> String {
        self.state.rules.describe()
    }

    /// The variables a sandboxed command gets: the proxy settings and each
    /// secret's placeholder.
    pub fn sandbox_env(&self) -> Vec<(String, String)> {
        let http = format!("http://127.0.0.1:{PORT_INSIDE}");
        let socks = format!("socks5h://127.0.0.1:{PORT_INSIDE}");
        let mut v = Vec::new();
        for (k, val) in [
            ("HTTP_PROXY", &http),
            ("HTTPS_PROXY", &http),
            ("ALL_PROXY", &socks),
        ] {
            v.push((k.to_string(), val.clone()));
            v.push((k.to_ascii_lowercase(), val.clone()));
        }
        // The sandbox's own loopback (a server the command starts) is
        // reached directly.
        for k in ["NO_PROXY", "no_proxy"] {
            v.push((k.into(), "localhost,127.0.0.1,::1".into()));
        }
        for s in &self.state.secrets {
            v.push((s.name.clone(), s.placeholder.clone()));
        }
        if self.ca_bundle.is_some() {
            for k in [
                "SSL_CERT_FILE",
                "CURL_CA_BUNDLE",
                "REQUESTS_CA_BUNDLE",
                "PIP_CERT",
                "GIT_SSL_CAINFO",
                "NODE_EXTRA_CA_CERTS",
            ] {
                v.push((k.into(), CA_INSIDE.into()));
            }
        }
        v
    }

    /// Whether `(name, value)` is one of the variables a proxy gives a
    /// command ([`NetProxy::sandbox_env`]) with the value a proxy gives it:
    /// a task whose proxy is gone (its network set to "on" or "off") must
    /// not keep them from its captured state, pointing at a proxy it no
    /// longer has or carrying a placeholder. A variable the user set to
    /// another value (a proxy of their own) is kept.
    pub fn is_proxy_variable(name: &str, value: &str) -> bool {
        let http = format!("http://127.0.0.1:{PORT_INSIDE}");
        let socks = format!("socks5h://127.0.0.1:{PORT_INSIDE}");
        match name.to_ascii_uppercase().as_str() {
            "HTTP_PROXY" | "HTTPS_PROXY" | "ALL_PROXY" => value == http || value == socks,
            "SSL_CERT_FILE"
            | "CURL_CA_BUNDLE"
            | "REQUESTS_CA_BUNDLE"
            | "PIP_CERT"
            | "GIT_SSL_CAINFO"
            | "NODE_EXTRA_CA_CERTS" => value == CA_INSIDE,
            _ => value.starts_with(secrets::PLACEHOLDER_PREFIX),
        }
    }

    /// Host variables a sandboxed command must not get (the sources of
    /// secrets' values).
    pub fn unset_env(&self) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for s in &self.state.secrets {
            for u in &s.unset {
                if *u != s.name && !v.contains(u) {
                    v.push(u.clone());
                }
            }
        }
        v
    }
}

/// Accepting on a listener handed to [`NetProxy::adopt`]; dropped, the
/// proxy stops accepting there and closes it.
pub struct Adopted(tokio_util::sync::CancellationToken);

impl Drop for Adopted {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

impl NetProxy {
    /// Accept connections on `listener` (a socket listening in a
    /// container's network namespace, [`listen_in_netns`]) as the sandbox's
    /// own, until the returned guard is dropped.
    pub fn adopt(&self, listener: std::net::TcpListener) -> io::Result<Adopted> {
        let rt = self
            .rt
            .as_ref()
            .ok_or_else(|| io::Error::other("the proxy is stopped"))?;
        listener.set_nonblocking(true)?;
        let l = {
            let _g = rt.enter();
            tokio::net::TcpListener::from_std(listener)?
        };
        let stop = tokio_util::sync::CancellationToken::new();
        rt.spawn(server::serve_listener(l, self.state.clone(), stop.clone()));
        Ok(Adopted(stop))
    }
}

/// A TCP socket listening on 127.0.0.1:[`PORT_INSIDE`] in the network
/// namespace of process `pid` (a container's init): made by a short-lived
/// thread that enters that namespace. Needs the right to enter it (root,
/// with a rootful engine).
pub fn listen_in_netns(pid: i32) -> io::Result<std::net::TcpListener> {
    let ns = std::fs::File::open(format!("/proc/{pid}/ns/net"))?;
    std::thread::scope(|s| {
        s.spawn(|| {
            use std::os::fd::AsFd;
            rustix::thread::move_into_link_name_space(
                ns.as_fd(),
                Some(rustix::thread::LinkNameSpaceType::Network),
            )?;
            std::net::TcpListener::bind(("127.0.0.1", PORT_INSIDE))
        })
        .join()
        .unwrap_or_else(|_| Err(io::Error::other("the namespace thread panicked")))
    })
}

impl Drop for NetProxy {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
        let _ = std::fs::remove_file(&self.socket);
        if let Some(p) = &self.ca_bundle {
            let _ = std::fs::remove_file(p);
        }
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// A new 0700 directory under the temp dir.
fn private_dir() -> io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let base = std::env::temp_dir();
    for _ in 0..100 {
        let dir = base.join(format!(
            "hermes-netproxy-{}-{}",
            std::process::id(),
            random_hex(6)
        ));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other("no fresh temporary directory"))
}
