//! `hermes-tools mcp serve --http` under a connection flood (issue 28): the
//! server runs at `ulimit -n 1024` as in the report, and 2 000 connections
//! that never finish a request (half of them slowloris: a request line and
//! a header, then nothing) must not keep a legitimate client with the token
//! from being served. Before the connection bound, the server accepted
//! about 1 100 connections, ran out of descriptors and then served nobody
//! (new connections time out in the full backlog).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

struct Killed(std::process::Child);
impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn two_thousand_half_open_connections_do_not_stop_a_client() {
    let work = std::env::temp_dir().join(format!("ht-mcp-flood-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let cfg = work.join("cfg.json");
    std::fs::write(
        &cfg,
        format!(
            r#"{{"builtin_toolsets":["todo"],"mcp_serve":{{"token_dir":"{}"}}}}"#,
            work.join("tok").display()
        ),
    )
    .unwrap();
    let mut child = Command::new("sh")
        .args(["-c", "ulimit -n 1024 && exec \"$0\" \"$@\""])
        .arg(env!("CARGO_BIN_EXE_hermes-tools"))
        .args(["mcp", "serve", "--http", "127.0.0.1:0", "--config"])
        .arg(&cfg)
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the server");
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let server = Killed(child);
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let url = line.trim().rsplit(' ').next().unwrap().to_string();
    assert!(url.starts_with("http://127.0.0.1:"), "{line}");
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string();
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let path = line
        .split("bearer token in ")
        .nth(1)
        .and_then(|r| r.split(" (").next())
        .unwrap_or_else(|| panic!("no token path: {line}"));
    let token = std::fs::read_to_string(path).unwrap();
    // Keep draining stderr so the server never blocks writing its log.
    std::thread::spawn(move || {
        let mut sink = String::new();
        let _ = err.read_to_string(&mut sink);
    });

    let mut held = Vec::new();
    for i in 0..2000 {
        let sa = addr.parse().unwrap();
        match TcpStream::connect_timeout(&sa, Duration::from_secs(5)) {
            Ok(mut s) => {
                if i % 2 == 1 {
                    let _ = s.write_all(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n");
                }
                held.push(s);
            }
            // The server no longer accepts (its backlog is full): the
            // attack has already won unless the client below is served.
            Err(_) => break,
        }
    }
    assert!(
        held.len() > 1000,
        "the flood could not connect: {}",
        held.len()
    );

    // The legitimate client, while the flood is still held open.
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"legit","version":"1"}}}"#;
    let mut s = TcpStream::connect_timeout(&addr.parse().unwrap(), Duration::from_secs(30))
        .expect("the legitimate client cannot even connect");
    // A hang guard, not a timing assertion: a starved server never answers.
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\nauthorization: Bearer {token}\r\naccept: application/json, text/event-stream\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let out = String::from_utf8_lossy(&out);
    assert!(
        out.starts_with("HTTP/1.1 200"),
        "legitimate client not served: {out:?}"
    );
    assert!(out.contains("hermes-tools"), "{out}");
    drop(held);
    drop(server);
    let _ = std::fs::remove_dir_all(&work);
}
