//! The CLI's browser step of an MCP server's OAuth authorization: the URL is
//! printed (and opened with `xdg-open` when a desktop is there), and a
//! listener on the redirect URI's loopback port catches where the
//! authorization server sends the browser back. The runtime checks the
//! redirect (state, target); this side only carries it.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, IsTerminal, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hermes_runtime::ApprovalSink;

pub struct LoopbackBrowser;

impl ApprovalSink for LoopbackBrowser {
    fn ask(&self, request: &Arc<str>, id: u64) {
        let req: Value = serde_json::from_str(request).unwrap_or(Value::Null);
        let answer = move |v: Value| {
            hermes_runtime::approvals::respond(id, v.to_string());
        };
        if req["kind"] != "oauth_authorize" {
            // Only servers with token_store "host" ask for tokens; the CLI
            // keeps them in files (the default).
            answer(
                json!({"error": "the hermes-tools CLI keeps tokens in files (oauth.token_store \"file\")"}),
            );
            return;
        }
        let url = req["authorization_url"].as_str().unwrap_or("").to_string();
        let redirect = req["redirect_uri"].as_str().unwrap_or("").to_string();
        let server = req["server"].as_str().unwrap_or("?").to_string();
        let timeout = Duration::from_secs(req["timeout_s"].as_u64().unwrap_or(300));
        std::thread::spawn(move || {
            answer(match sign_in(&server, &url, &redirect, timeout) {
                Ok(redirect_url) => json!({"redirect_url": redirect_url}),
                Err(e) => {
                    crate::out::warn(format!("MCP server '{server}': sign-in failed: {e}"));
                    json!({"error": e})
                }
            })
        });
    }
}

/// Show the URL, then wait for the browser's redirect on the loopback
/// port (or, for a redirect URI elsewhere, for the user to paste it).
fn sign_in(server: &str, url: &str, redirect: &str, timeout: Duration) -> Result<String, String> {
    let target = reqwest_free_parse(redirect)?;
    eprintln!(
        "\nMCP server '{server}' needs you to sign in. Open this URL in a browser:\n  {url}\n"
    );
    if std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some() {
        let _ = std::process::Command::new("xdg-open")
            .arg(url)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
    }
    let Some((host, port, path)) = target else {
        // Not a loopback redirect: the user copies it from the address bar.
        if !std::io::stdin().is_terminal() {
            return Err(format!(
                "the redirect URI {redirect} is not a loopback address the CLI can listen on"
            ));
        }
        eprint!("paste the URL the browser was sent to: ");
        let _ = std::io::stderr().flush();
        let mut line = String::new();
        let _ = std::io::stdin().lock().read_line(&mut line);
        return Ok(line.trim().to_string());
    };
    let listener = TcpListener::bind((host.as_str(), port))
        .map_err(|e| format!("cannot listen on {host}:{port} for the redirect: {e}"))?;
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    eprintln!("waiting for the browser to come back to {redirect} ...");
    let until = Instant::now() + timeout;
    while Instant::now() < until {
        match listener.accept() {
            Ok((stream, _)) => {
                let _ = stream.set_nonblocking(false);
                let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
                let mut reader = BufReader::new(&stream);
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() {
                    continue;
                }
                // "GET /callback?code=...&state=... HTTP/1.1"
                let target = line.split_whitespace().nth(1).unwrap_or("");
                if target.split('?').next() != Some(path.as_str()) {
                    let _ = (&stream).write_all(
                        b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    );
                    continue;
                }
                let body = "Signed in: you can close this window and go back to hermes-tools.";
                let _ = write!(
                    &stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                return Ok(format!("http://{host}:{port}{target}"));
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(e) => return Err(format!("the redirect listener failed: {e}")),
        }
    }
    Err(format!("nobody signed in within {} s", timeout.as_secs()))
}

/// `http://127.0.0.1:PORT/PATH` (or localhost, [::1]): host, port, path;
/// None for any other redirect URI.
fn reqwest_free_parse(uri: &str) -> Result<Option<(String, u16, String)>, String> {
    let Some(rest) = uri.strip_prefix("http://") else {
        return Ok(None);
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let path = if path.is_empty() { "/" } else { path };
    let path = path.split('?').next().unwrap_or("/").to_string();
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || authority.starts_with('[') => (
            h.to_string(),
            p.parse::<u16>().map_err(|_| format!("bad port in {uri}"))?,
        ),
        _ => (authority.to_string(), 80),
    };
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    if !matches!(host.as_str(), "127.0.0.1" | "localhost" | "::1") {
        return Ok(None);
    }
    Ok(Some((host, port, path)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_redirects_are_listened_on() {
        assert_eq!(
            reqwest_free_parse("http://127.0.0.1:8976/callback").unwrap(),
            Some(("127.0.0.1".into(), 8976, "/callback".into()))
        );
        assert_eq!(reqwest_free_parse("https://example.com/cb").unwrap(), None);
        assert_eq!(reqwest_free_parse("http://10.0.0.1:80/cb").unwrap(), None);
    }

    #[test]
    fn the_redirect_is_caught_and_handed_back() {
        let port = {
            let l = TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let redirect = format!("http://127.0.0.1:{port}/callback");
        let t = std::thread::spawn(move || {
            sign_in(
                "s",
                "http://as.example/authorize",
                &redirect,
                Duration::from_secs(20),
            )
        });
        // The "browser" comes back.
        let mut s = loop {
            match std::net::TcpStream::connect(("127.0.0.1", port)) {
                Ok(s) => break s,
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        };
        write!(
            s,
            "GET /callback?code=c1&state=s1 HTTP/1.1\r\nHost: x\r\n\r\n"
        )
        .unwrap();
        let mut reply = String::new();
        let _ = std::io::Read::read_to_string(&mut s, &mut reply);
        assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
        assert_eq!(
            t.join().unwrap().unwrap(),
            format!("http://127.0.0.1:{port}/callback?code=c1&state=s1")
        );
    }
}
