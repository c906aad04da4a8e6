//! The run's channel where no socket can be shared or forwarded (modal,
//! daytona, environments the host brings): a relay of a few lines of Python
//! runs the script under it where the script runs, listens on the run's
//! socket there, and frames everything it must send this way onto the one
//! stream those backends give back, the command's output: the script's
//! output and each request line of each connection. The answers come back
//! as files the runtime writes into the run's `resp` folder through the
//! backend's file operations (`<connection>.<sequence>`, written beside
//! and renamed into place, since a backend's native upload may write in
//! place), which the relay hands to the connection in order; an empty
//! file says the channel closed that connection.
//!
//! Only the relay writes the command's output (the script's goes through
//! it), so frames never interleave. A frame is
//! `\x1eHT<kind> <connection> <base64>\n`: `O` output, `Q` a request line,
//! `C` the connection closed. Here each connection of the far side is a
//! connection to the run's channel, so every inner call goes through the
//! same MCP server, limits and pipeline as on the other backends.

use base64::Engine as _;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The relay (run as `python3 relay.py SOCKET RESP_DIR PROGRAM ARGS...`).
pub const RELAY_PY: &str = r#"# hermes-tools execute_code relay: see crates/builtins/src/code/relay.rs
import base64, os, socket, subprocess, sys, threading, time
sock_path, resp_dir, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
out = sys.stdout.buffer
lock = threading.Lock()

def frame(kind, conn, data=b""):
    line = b"\x1eHT" + kind + b" %d " % conn + base64.b64encode(data) + b"\n"
    with lock:
        out.write(line)
        out.flush()

def answers(conn, n):
    # Until the runtime's end marker (an empty answer file): a client that
    # half-closes after its request still gets its answers.
    seq, idle = 0, 0.0005
    while True:
        p = os.path.join(resp_dir, "%d.%d" % (n, seq))
        try:
            with open(p, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            time.sleep(idle)
            idle = min(idle * 2, 0.004)
            continue
        idle = 0.0005
        os.unlink(p)
        seq += 1
        if not data:
            break
        try:
            conn.sendall(data)
        except OSError:
            break
    try:
        conn.close()
    except OSError:
        pass

def requests(conn, n):
    threading.Thread(target=answers, args=(conn, n), daemon=True).start()
    buf = b""
    while True:
        try:
            b = conn.recv(65536)
        except OSError:
            b = b""
        if not b:
            frame(b"C", n)
            return
        buf += b
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            frame(b"Q", n, line)

def accept(srv):
    n = 0
    while True:
        c, _ = srv.accept()
        n += 1
        threading.Thread(target=requests, args=(c, n), daemon=True).start()

old = os.umask(0o177)
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(sock_path)
os.umask(old)
srv.listen(64)
threading.Thread(target=accept, args=(srv,), daemon=True).start()
proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                        stderr=subprocess.STDOUT)
while True:
    b = proc.stdout.read1(65536)
    if not b:
        break
    frame(b"O", 0, b)
code = proc.wait()
out.flush()
os._exit(code if code >= 0 else 128 - code)
"#;

/// The most a frame may hold before the relay's stream is taken for plain
/// output (a request line is bounded by the channel's own limit anyway).
const MAX_FRAME: usize = 64 << 20;

/// The most far connections open at once: the script writes the frames,
/// and each connection costs a socket and a thread here (the relay itself
/// listens with a backlog of 64).
const MAX_CONNS: usize = 64;

/// This side of a relayed run: parses the frames of the command's output,
/// hands the script's output on, opens one connection to the run's channel
/// per connection of the far side and writes the channel's answers back
/// as files.
pub struct Relay {
    buf: Vec<u8>,
    /// How much of `buf` is known to hold no newline (not scanned again).
    scanned: usize,
    socket: PathBuf,
    fs: Arc<dyn hermes_exec::fs::FileSystem>,
    resp: PathBuf,
    conns: HashMap<u64, UnixStream>,
}

impl Relay {
    /// `socket`: the run's channel here; `resp`: the answers' folder there.
    pub fn new(socket: &Path, fs: Arc<dyn hermes_exec::fs::FileSystem>, resp: PathBuf) -> Relay {
        Relay {
            buf: Vec::new(),
            scanned: 0,
            socket: socket.to_path_buf(),
            fs,
            resp,
            conns: HashMap::new(),
        }
    }

    /// A chunk of the command's output; the script's output goes to `out`.
    pub fn feed(&mut self, chunk: &[u8], out: &mut dyn FnMut(&[u8])) {
        self.buf.extend_from_slice(chunk);
        // Scan only what is new: a line that never ends must cost linear
        // time, or the pump falls behind the script's timeout.
        let mut start = 0;
        let mut from = self.scanned;
        while let Some(i) = memchr::memchr(b'\n', &self.buf[from..]) {
            let end = from + i;
            let line = self.buf[start..end].to_vec();
            self.frame(&line, out);
            start = end + 1;
            from = start;
        }
        self.buf.drain(..start);
        self.scanned = self.buf.len();
        if self.buf.len() > MAX_FRAME {
            out(&std::mem::take(&mut self.buf));
            self.scanned = 0;
        }
    }

    /// The end of the output: what is left was not a frame.
    pub fn finish(&mut self, out: &mut dyn FnMut(&[u8])) {
        if !self.buf.is_empty() {
            out(&std::mem::take(&mut self.buf));
        }
        self.scanned = 0;
        for (_, c) in self.conns.drain() {
            let _ = c.shutdown(std::net::Shutdown::Both);
        }
    }

    fn frame(&mut self, line: &[u8], out: &mut dyn FnMut(&[u8])) {
        let parsed = line.strip_prefix(b"\x1eHT").and_then(|rest| {
            let (&kind, rest) = rest.split_first()?;
            let rest = rest.strip_prefix(b" ")?;
            let sp = memchr::memchr(b' ', rest)?;
            let conn: u64 = std::str::from_utf8(&rest[..sp]).ok()?.parse().ok()?;
            let data = base64::engine::general_purpose::STANDARD
                .decode(&rest[sp + 1..])
                .ok()?;
            Some((kind, conn, data))
        });
        let Some((kind, conn, data)) = parsed else {
            // Not the relay's (it writes nothing else): output as it is.
            let mut l = line.to_vec();
            l.push(b'\n');
            out(&l);
            return;
        };
        match kind {
            b'O' => out(&data),
            b'Q' => {
                if !self.conns.contains_key(&conn) {
                    if self.conns.len() >= MAX_CONNS {
                        tracing::debug!(
                            "execute_code relay: too many connections, a request dropped"
                        );
                        return;
                    }
                    match self.open(conn) {
                        Ok(s) => {
                            self.conns.insert(conn, s);
                        }
                        Err(e) => {
                            tracing::debug!("execute_code relay: cannot reach the channel: {e}");
                            return;
                        }
                    }
                }
                if let Some(s) = self.conns.get_mut(&conn) {
                    let mut msg = data;
                    msg.push(b'\n');
                    if s.write_all(&msg).is_err() {
                        self.conns.remove(&conn);
                    }
                }
            }
            b'C' => {
                if let Some(s) = self.conns.remove(&conn) {
                    let _ = s.shutdown(std::net::Shutdown::Write);
                }
            }
            _ => {}
        }
    }

    /// A connection to the channel for far connection `n`, with a thread
    /// writing each answer line back as `resp/<n>.<seq>`.
    fn open(&self, n: u64) -> std::io::Result<UnixStream> {
        let s = UnixStream::connect(&self.socket)?;
        let reader = s.try_clone()?;
        let fs = self.fs.clone();
        let resp = self.resp.clone();
        std::thread::Builder::new()
            .name("ht-code-relay".into())
            .spawn(move || {
                let mut r = BufReader::new(reader);
                let mut line = Vec::new();
                for seq in 0u64.. {
                    line.clear();
                    // The channel's side ended: an empty file tells the
                    // relay to close the connection there.
                    let end = matches!(r.read_until(b'\n', &mut line), Ok(0) | Err(_));
                    if end {
                        line.clear();
                    }
                    // Written beside, then renamed: a backend's native
                    // upload may write in place, and the relay must never
                    // read half an answer (or an empty file: the end).
                    let path = resp.join(format!("{n}.{seq}"));
                    let part = resp.join(format!("{n}.{seq}.part"));
                    let mut tries = 0;
                    while let Err(e) = fs
                        .write_atomic(&part, &line, Some(0o600))
                        .and_then(|()| fs.rename(&part, &path))
                    {
                        tries += 1;
                        if tries == 3 {
                            tracing::warn!("execute_code relay: cannot write an answer where the script runs: {e}");
                            return;
                        }
                        std::thread::sleep(std::time::Duration::from_millis(50 * tries));
                    }
                    if end {
                        return;
                    }
                }
            })?;
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A script forging request frames for thousands of connections gets
    /// no more than MAX_CONNS connections (and threads) here.
    #[test]
    fn forged_connections_are_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let sock = dir.path().join("c.sock");
        let l = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        l.set_nonblocking(true).unwrap();
        let fs: Arc<dyn hermes_exec::fs::FileSystem> = Arc::new(hermes_exec::fs::HostFs::local());
        let mut r = Relay::new(&sock, fs, dir.path().to_path_buf());
        let b64 = base64::engine::general_purpose::STANDARD.encode(b"{}");
        let mut stream = String::new();
        for n in 0..1000 {
            stream.push_str(&format!("\x1eHTQ {n} {b64}\n"));
        }
        let mut accepted = Vec::new();
        r.feed(stream.as_bytes(), &mut |_| {});
        while let Ok((c, _)) = l.accept() {
            accepted.push(c);
        }
        assert_eq!(r.conns.len(), MAX_CONNS);
        assert_eq!(accepted.len(), MAX_CONNS);
        r.finish(&mut |_| {});
    }

    /// A line that never ends (written by the script straight to the
    /// relay's output) is scanned once, not once per chunk: 48 MiB in
    /// 4 KiB chunks took quadratic time before (the call overran its
    /// timeout by as long again).
    #[test]
    fn an_endless_line_is_scanned_once() {
        let dir = tempfile::tempdir().unwrap();
        let fs: Arc<dyn hermes_exec::fs::FileSystem> = Arc::new(hermes_exec::fs::HostFs::local());
        let mut r = Relay::new(&dir.path().join("none.sock"), fs, dir.path().to_path_buf());
        let chunk = vec![b'A'; 4096];
        let mut seen = 0usize;
        // Linear: a fraction of a second; the quadratic scan of 48 MiB in
        // 4 KiB steps is ~300 GB of memchr (the test does not end).
        for _ in 0..(48 << 20) / 4096 {
            r.feed(&chunk, &mut |b| seen += b.len());
        }
        r.finish(&mut |b| seen += b.len());
        assert_eq!(seen, 48 << 20);
    }

    #[test]
    fn frames_split_across_chunks_and_plain_lines() {
        let dir = tempfile::tempdir().unwrap();
        let fs: Arc<dyn hermes_exec::fs::FileSystem> = Arc::new(hermes_exec::fs::HostFs::local());
        let mut r = Relay::new(&dir.path().join("none.sock"), fs, dir.path().to_path_buf());
        let b64 = base64::engine::general_purpose::STANDARD.encode(b"hello\n");
        let stream = format!("\x1eHTO 0 {b64}\nstray line\n\x1eHTO 0 {b64}\npartial");
        let mut got = Vec::new();
        for chunk in stream.as_bytes().chunks(3) {
            r.feed(chunk, &mut |b| got.extend_from_slice(b));
        }
        r.finish(&mut |b| got.extend_from_slice(b));
        assert_eq!(
            String::from_utf8(got).unwrap(),
            "hello\nstray line\nhello\npartial"
        );
    }
}
