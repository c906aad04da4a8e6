//! `ht_runtime_serve_mcp`: a host serves its runtime (its own callback
//! tools included) to MCP clients without writing a server, over a pair of
//! file descriptors (stdio) or streamable HTTP on a loopback address. Each
//! server runs on a thread of its own with a small tokio runtime; its handle
//! stops it, and the runtime's free stops whatever is still serving it.
//!
//! HTTP is authenticated like the CLI's (crates/mcp-server/src/auth.rs): a
//! bearer token the host gives (`"token"`, `"token_file"`) or one generated
//! into a private file whose path `ht_mcp_server_address`'s JSON gives; the
//! limits of crates/mcp-server/src/limits.rs are options keys too.

use std::ffi::CString;
#[cfg(feature = "mcp-server")]
use std::os::fd::{BorrowedFd, OwnedFd};
use std::os::raw::c_char;
use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::{Condvar, Mutex};
#[cfg(feature = "mcp-server")]
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use hermes_core::error::{Error, ErrorKind};
#[cfg(feature = "mcp-server")]
use hermes_mcp_server::{Approvals, Options};

use crate::status::Status;
use crate::{boundary, ht_error, require, status_boundary};

/// How long a stop waits for the server's thread before leaving it behind.
const STOP_WAIT: Duration = Duration::from_secs(5);

/// One running server, shared by its C handle and its runtime's list.
pub struct Serving {
    stop: CancellationToken,
    /// `{"transport":"http","url","auth","token_file"}` or
    /// `{"transport":"stdio"}`.
    address: CString,
    /// Set when the server ended: how.
    ended: Mutex<Option<Result<(), String>>>,
    ended_cv: Condvar,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Serving {
    /// Stop and wait (bounded) for the thread to end.
    fn stop(&self) {
        self.stop.cancel();
        let mut ended = self.ended.lock();
        if ended.is_none() {
            self.ended_cv.wait_for(&mut ended, STOP_WAIT);
        }
        let finished = ended.is_some();
        drop(ended);
        let thread = self.thread.lock().take();
        if let Some(t) = thread {
            if finished {
                let _ = t.join();
            } else {
                tracing::warn!(
                    "mcp server: still running {STOP_WAIT:?} after stop; its thread is left to end on its own"
                );
            }
        }
    }
}

/// A server started by `ht_runtime_serve_mcp`. Opaque.
pub struct ht_mcp_server {
    serving: Arc<Serving>,
}

impl ht_mcp_server {
    fn address_ptr(&self) -> *const c_char {
        self.serving.address.as_ptr()
    }
}

/// Stop every server in `servers` still serving (runtime free).
pub(crate) fn stop_all(servers: &Mutex<Vec<Weak<Serving>>>) {
    let servers = std::mem::take(&mut *servers.lock());
    for s in servers.iter().filter_map(Weak::upgrade) {
        s.stop();
    }
}

#[cfg(feature = "mcp-server")]
enum Transport {
    Fds(OwnedFd, OwnedFd),
    Http(std::net::TcpListener, hermes_mcp_server::HttpAuth),
}

/// The options keys besides the server's limits and authentication.
#[cfg(feature = "mcp-server")]
const OWN_KEYS: &[&str] = &["transport", "read_fd", "write_fd", "address", "approvals"];

#[cfg(feature = "mcp-server")]
fn parse_options(text: &str) -> Result<(Transport, Options), Error> {
    let text = if text.trim().is_empty() { "{}" } else { text };
    let v: Value =
        serde_json::from_str(text).map_err(|e| Error::json(format!("serve options: {e}")))?;
    let Value::Object(m) = v else {
        return Err(Error::json("serve options: must be a JSON object"));
    };
    let limit_keys = hermes_mcp_server::limits::KEYS;
    for k in m.keys() {
        if !OWN_KEYS.contains(&k.as_str()) && !limit_keys.contains(&k.as_str()) {
            return Err(Error::invalid(format!(
                "serve options: unknown key '{k}' ({}, {})",
                OWN_KEYS.join(", "),
                limit_keys.join(", ")
            )));
        }
    }
    let mut opts = Options::default();
    opts.apply_json(&m)
        .map_err(|e| Error::invalid(format!("serve options: {e}")))?;
    match m.get("approvals").map(|a| a.as_str()) {
        None | Some(Some("client")) => {}
        Some(Some("host")) => opts.approvals = Approvals::Host,
        Some(_) => {
            return Err(Error::invalid(
                "serve options: approvals must be \"client\" (elicitation) or \"host\" (the runtime's handler)",
            ));
        }
    }
    let transport = match m.get("transport").map(|t| t.as_str()) {
        None | Some(Some("stdio")) => {
            let fd = |k: &str, d: i32| -> Result<OwnedFd, Error> {
                let n = match m.get(k) {
                    None => d,
                    Some(v) => v
                        .as_i64()
                        .and_then(|n| i32::try_from(n).ok())
                        .filter(|n| *n >= 0)
                        .ok_or_else(|| {
                            Error::invalid(format!(
                                "serve options: {k} must be an open file descriptor number"
                            ))
                        })?,
                };
                if !fd_is_open(n) {
                    return Err(Error::invalid(format!(
                        "serve options: {k} {n} is not an open file descriptor"
                    )));
                }
                // SAFETY: `n` is an open descriptor of this process (checked just above); we
                // borrow it only to duplicate it, and the duplicate is ours. The host keeps its own.
                let borrowed = unsafe { BorrowedFd::borrow_raw(n) };
                borrowed.try_clone_to_owned().map_err(|e| {
                    Error::new(
                        ErrorKind::Internal,
                        format!("serve options: cannot duplicate {k} {n}: {e}"),
                    )
                })
            };
            Transport::Fds(fd("read_fd", 0)?, fd("write_fd", 1)?)
        }
        Some(Some("http")) => {
            let addr = m
                .get("address")
                .and_then(Value::as_str)
                .unwrap_or("127.0.0.1:0");
            let addr: std::net::SocketAddr = addr.parse().map_err(|_| {
                Error::invalid(format!(
                    "serve options: address '{addr}' is not IP:PORT (127.0.0.1:0 picks a free port)"
                ))
            })?;
            if !addr.ip().is_loopback() {
                return Err(Error::invalid(format!(
                    "serve options: {addr} is not a loopback address (127.0.0.1 or [::1])"
                )));
            }
            let l = std::net::TcpListener::bind(addr).map_err(|e| {
                Error::new(
                    ErrorKind::Internal,
                    format!("serve options: cannot listen on {addr}: {e}"),
                )
            })?;
            l.set_nonblocking(true)
                .map_err(|e| Error::new(ErrorKind::Internal, format!("listener: {e}")))?;
            let bound = l
                .local_addr()
                .map_err(|e| Error::new(ErrorKind::Internal, format!("listener: {e}")))?;
            let auth = hermes_mcp_server::prepare_http(bound, &opts)
                .map_err(|e| Error::new(ErrorKind::Internal, e))?;
            Transport::Http(l, auth)
        }
        Some(_) => {
            return Err(Error::invalid(
                "serve options: transport must be \"stdio\" or \"http\"",
            ));
        }
    };
    Ok((transport, opts))
}

#[cfg(feature = "mcp-server")]
fn fd_is_open(fd: i32) -> bool {
    // SAFETY: F_GETFD reads the descriptor flags of `fd` and touches no memory; an unused number
    // just fails with EBADF.
    unsafe { libc::fcntl(fd, libc::F_GETFD) != -1 }
}

/// Start serving `runtime` with the options of `ht_runtime_serve_mcp`
/// (`options_json`'s text); the caller keeps the server so the runtime's
/// free can stop it.
/// A build without the `mcp-server` feature keeps the functions of the C
/// ABI (a host can ask); starting a server says what is missing.
#[cfg(not(feature = "mcp-server"))]
pub(crate) fn start(_: Arc<hermes_runtime::Runtime>, _: &str) -> Result<Arc<Serving>, Error> {
    Err(Error::invalid(
        "this build of hermes-tools has no MCP server (Cargo feature `mcp-server`)",
    ))
}

#[cfg(feature = "mcp-server")]
pub(crate) fn start(
    runtime: Arc<hermes_runtime::Runtime>,
    text: &str,
) -> Result<Arc<Serving>, Error> {
    let (transport, opts) = parse_options(text)?;
    let address = match &transport {
        Transport::Http(l, auth) => serde_json::json!({
            "transport": "http",
            "url": l
                .local_addr()
                .map(|a| format!("http://{a}{}", hermes_mcp_server::HTTP_PATH))
                .unwrap_or_default(),
            "auth": if auth.required() { "bearer" } else { "none" },
            "token_file": auth.token_file().map(|p| p.display().to_string()),
        })
        .to_string(),
        Transport::Fds(..) => r#"{"transport":"stdio"}"#.to_string(),
    };
    let serving = Arc::new(Serving {
        stop: CancellationToken::new(),
        address: CString::new(address).unwrap_or_default(),
        ended: Mutex::new(None),
        ended_cv: Condvar::new(),
        thread: Mutex::new(None),
    });
    let engine = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::new(ErrorKind::Internal, format!("mcp server: {e}")))?;
    let s = serving.clone();
    let thread = std::thread::Builder::new()
        .name("ht-mcp-server".into())
        .spawn(move || {
            let stop = s.stop.clone();
            let out = engine.block_on(async move {
                match transport {
                    Transport::Fds(r, w) => {
                        let (r, reader_stop) = match fd_reader(r) {
                            Ok(r) => r,
                            Err(e) => return Err(format!("mcp server: reader thread: {e}")),
                        };
                        let w = tokio::fs::File::from_std(std::fs::File::from(w));
                        let out = hermes_mcp_server::serve_with(runtime, (r, w), &opts, stop).await;
                        drop(reader_stop);
                        out
                    }
                    Transport::Http(l, auth) => match tokio::net::TcpListener::from_std(l) {
                        Ok(l) => hermes_mcp_server::serve_http(runtime, l, &opts, auth, stop).await,
                        Err(e) => Err(format!("mcp server: listener: {e}")),
                    },
                }
            });
            if let Err(e) = &out {
                tracing::warn!(error = %e, "mcp server ended with an error");
            }
            // A write still blocked on a pipe nobody reads must not hold the stop.
            engine.shutdown_timeout(Duration::from_millis(200));
            *s.ended.lock() = Some(out);
            s.ended_cv.notify_all();
        })
        .map_err(|e| Error::new(ErrorKind::Internal, format!("mcp server thread: {e}")))?;
    *serving.thread.lock() = Some(thread);
    Ok(serving)
}

/// Hand a started server to the host as its handle.
pub(crate) fn into_handle(serving: Arc<Serving>) -> *mut ht_mcp_server {
    Box::into_raw(Box::new(ht_mcp_server { serving }))
}

/// Read `fd` on a thread of its own, into an in-memory pipe the server reads.
///
/// A blocking `read` cannot be cancelled: on tokio's blocking pool it would
/// hold a stopped server's runtime (its drop waits for it) and then eat the
/// host's next input. This thread `poll`s the descriptor together with a stop
/// pipe and reads only when data is there; it ends on EOF, an error, the
/// server dropping its end, or the returned writer being dropped.
#[cfg(feature = "mcp-server")]
fn fd_reader(fd: OwnedFd) -> std::io::Result<(tokio::io::DuplexStream, std::io::PipeWriter)> {
    use std::io::Read;
    use std::os::fd::AsRawFd;
    use tokio::io::AsyncWriteExt;

    let (stop_r, stop_w) = std::io::pipe()?;
    let (ours, mut theirs) = tokio::io::duplex(64 * 1024);
    let handle = tokio::runtime::Handle::current();
    std::thread::Builder::new()
        .name("ht-mcp-read".into())
        .spawn(move || {
            let mut file = std::fs::File::from(fd);
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                let mut fds = [
                    libc::pollfd {
                        fd: file.as_raw_fd(),
                        events: libc::POLLIN,
                        revents: 0,
                    },
                    libc::pollfd {
                        fd: stop_r.as_raw_fd(),
                        events: libc::POLLIN,
                        revents: 0,
                    },
                ];
                // SAFETY: `fds` is a live array of two initialised pollfd structs whose
                // descriptors stay open (owned by `file` and `stop_r`) for the call.
                let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
                if n < 0 {
                    if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                        continue;
                    }
                    break;
                }
                if fds[1].revents != 0 {
                    break; // stopped: the writer end was dropped
                }
                if fds[0].revents == 0 {
                    continue;
                }
                match file.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        // Waits only on the in-memory pipe, which needs no I/O driver.
                        if handle.block_on(theirs.write_all(&buf[..n])).is_err() {
                            break; // the server is gone
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
        })?;
    Ok((ours, stop_w))
}

/// Where and how to reach a server, as JSON: for `"transport": "http"`
/// `{"transport":"http","url":"http://127.0.0.1:PORT/mcp","auth":"bearer"|"none","token_file":PATH|null}`
/// (`token_file`: the file holding a generated bearer token, readable by
/// this user only and removed when the server stops; null when the host gave
/// the token or `"auth":"none"`), for descriptors `{"transport":"stdio"}`.
/// Owned by the handle: valid until `ht_mcp_server_free`. NULL for a NULL
/// `server`. Any thread.
///
/// # Safety
/// `server` is NULL or a handle from `ht_runtime_serve_mcp` that no thread frees before the
/// returned string's last use.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_mcp_server_address(server: *const ht_mcp_server) -> *const c_char {
    boundary(|| {
        if server.is_null() {
            return std::ptr::null();
        }
        // SAFETY: non-NULL and, by this export's # Safety, a live handle; the CString lives in
        // the handle's Arc until ht_mcp_server_free.
        unsafe { (*server).address_ptr() }
    })
}

/// Wait up to `timeout_ms` (0: just look) for the server to end (the client
/// disconnected, or it was stopped). `HT_STATUS_OK` when it ended normally,
/// `HT_STATUS_TIMEOUT` while it is still serving, `HT_STATUS_INTERNAL` with
/// the reason when it ended with an error. Any thread; several may wait.
///
/// # Safety
/// - `server` is NULL or a handle from `ht_runtime_serve_mcp` that no thread frees before this
///   returns.
/// - `out_err` is NULL or points at a writable, aligned variable of the pointee type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_mcp_server_wait(
    server: *const ht_mcp_server,
    timeout_ms: u64,
    out_err: *mut *mut ht_error,
) -> Status {
    status_boundary(out_err, || {
        require(server, "server")?;
        // SAFETY: non-NULL (required above) and, by this export's # Safety, a live handle.
        let s = unsafe { &(*server).serving };
        let mut ended = s.ended.lock();
        if ended.is_none() && timeout_ms > 0 {
            s.ended_cv.wait_for(
                &mut ended,
                Duration::from_millis(timeout_ms.min(u32::MAX as u64)),
            );
        }
        match &*ended {
            None => Err(Error::new(
                ErrorKind::Timeout,
                "the MCP server is still serving",
            )),
            Some(Ok(())) => Ok(()),
            Some(Err(e)) => Err(Error::new(ErrorKind::Internal, e.clone())),
        }
    })
}

/// Stop the server (it stops taking requests; calls in flight are cancelled)
/// and free its handle. Waits up to 5 s for the server's thread. NULL is a
/// no-op. Not from inside a tool call served by this same server (that call
/// would wait for itself; the stop is then bounded by those 5 s).
///
/// # Safety
/// `server` is NULL or a handle from `ht_runtime_serve_mcp` not yet freed, which no other thread
/// uses during or after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ht_mcp_server_free(server: *mut ht_mcp_server) {
    boundary(|| {
        if server.is_null() {
            return;
        }
        // SAFETY: non-NULL and, by this export's # Safety, a Box from ht_runtime_serve_mcp that
        // was not freed and that no other thread uses, so it is dropped exactly once.
        let b = unsafe { Box::from_raw(server) };
        b.serving.stop();
    })
}
