//! OAuth 2.1 against a real authorization server and an OAuth-protected MCP
//! server (fixtures/oauth-server.cjs: the official TypeScript SDK's auth
//! router, bearer middleware and streamable HTTP server on 127.0.0.1). The
//! runtime gets only the browser step: the test's OAuth handler follows the
//! authorization URL with an HTTP client, as a browser would, and answers
//! with the redirect it was sent to.
//!
//! Covered: discovery (401 challenge -> protected-resource metadata ->
//! authorization-server metadata), dynamic registration, PKCE (the server
//! verifies S256), the resource indicator, scopes from `WWW-Authenticate`,
//! refresh of an expiring token, a revoked token (re-authorization), step-up
//! on 403 `insufficient_scope`, a tampered `state` refused, tokens kept in a
//! 0600 file and reused by a new runtime, never in status or events, and
//! client credentials.

use crate::mcp_common::*;
use hermes_runtime::{ApprovalSink, Runtime};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The fixture server, killed on drop.
struct Fixture {
    child: Child,
    port: u16,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(ttl: u32) -> Option<Fixture> {
    // The SDK and express come with the test servers (scripts/setup.sh).
    server_js("server-everything")?;
    let js = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/oauth-server.cjs"
    );
    let mut child = Command::new("node")
        .arg(js)
        .env("NODE_PATH", modules_dir())
        .env("TOKEN_TTL", ttl.to_string())
        .stdout(Stdio::piped())
        .spawn()
        .expect("node");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .trim()
        .strip_prefix("READY ")
        .unwrap_or_else(|| panic!("fixture said {line:?}"))
        .parse()
        .unwrap();
    Some(Fixture { child, port })
}

/// A plain HTTP/1.1 request to 127.0.0.1 (no redirects followed): status,
/// headers (lowercase names) and body.
fn http(method: &str, url: &str) -> (u16, Vec<(String, String)>, String) {
    let rest = url.strip_prefix("http://").unwrap();
    let (hostport, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut s = std::net::TcpStream::connect(hostport).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {hostport}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_lowercase(), v.trim().to_string()))
        .collect();
    (status, headers, body.to_string())
}

fn stats(f: &Fixture) -> Value {
    let (_, _, body) = http("GET", &format!("http://127.0.0.1:{}/test/stats", f.port));
    // A chunked body: the JSON object is the line that starts with '{'.
    let json = body.lines().find(|l| l.starts_with('{')).unwrap_or(&body);
    serde_json::from_str(json).unwrap()
}

/// The host's OAuth handler: the "browser" follows the authorization URL
/// and hands back the redirect. `tamper` answers with another state.
#[derive(Default)]
struct Browser {
    requests: Mutex<Vec<Value>>,
    tamper: std::sync::atomic::AtomicBool,
}

impl ApprovalSink for Browser {
    fn ask(&self, request: &Arc<str>, id: u64) {
        let req: Value = serde_json::from_str(request).unwrap();
        self.requests.lock().unwrap().push(req.clone());
        assert_eq!(req["kind"], "oauth_authorize", "{req}");
        let url = req["authorization_url"].as_str().unwrap().to_string();
        let tamper = self.tamper.load(std::sync::atomic::Ordering::SeqCst);
        std::thread::spawn(move || {
            let (status, headers, _) = http("GET", &url);
            assert_eq!(status, 302, "authorize answered {status}");
            let mut location = headers
                .iter()
                .find(|(k, _)| k == "location")
                .unwrap()
                .1
                .clone();
            if tamper {
                let at = location.find("state=").unwrap();
                location.replace_range(at.., "state=forged");
            }
            hermes_runtime::approvals::respond(id, json!({"redirect_url": location}).to_string());
        });
    }
}

fn runtime_with(browser: &Arc<Browser>, server: Value) -> (Runtime, Arc<Events>) {
    let rt = Runtime::new("{}").expect("runtime");
    let events = Events::install(&rt);
    rt.set_oauth_sink(Some(browser.clone())).unwrap();
    rt.add_mcp_server("secure", &server.to_string()).unwrap();
    (rt, events)
}

fn ready(rt: &Runtime) -> bool {
    wait_until(Duration::from_secs(30), || {
        let s = status(rt);
        s["secure"]["state"] == "ready" && !s["secure"]["tools"].as_array().unwrap().is_empty()
    })
}

/// A tool's text, or the whole result when it is not plain text.
fn call(rt: &Runtime, tool: &str) -> Value {
    let out = dispatch(rt, &format!("mcp__secure__{tool}"), "{}");
    match out.get("result") {
        Some(r) => json!({"result": r}),
        None => json!({"result": null, "got": out}),
    }
}

fn token_file(dir: &std::path::Path) -> std::path::PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .expect("a token file")
}

#[test]
fn mcp_oauth_browser_step_only_discovery_pkce_refresh_revocation_step_up() {
    let Some(f) = start(3600) else { return };
    let dir = tempfile::tempdir().unwrap();
    let url = format!("http://127.0.0.1:{}/mcp", f.port);
    let server = json!({"url": url, "connect_timeout": 20, "timeout": 20,
        "oauth": {"token_dir": dir.path()}});
    let browser = Arc::new(Browser::default());
    let (rt, events) = runtime_with(&browser, server.clone());
    assert!(ready(&rt), "{}", status(&rt));

    // Discovery from the 401, dynamic registration, one browser step, PKCE
    // (the server verified the S256 challenge), the resource indicator and
    // the scope the challenge named.
    let out = call(&rt, "whoami");
    assert_eq!(out["result"], "scopes: mcp", "{out}");
    let s = stats(&f);
    assert_eq!(s["registrations"], 1, "{s}");
    assert_eq!(s["authorizations"], 1, "{s}");
    assert_eq!(s["code_exchanges"], 1, "{s}");
    assert_eq!(s["resources"][0], url, "{s}");
    assert_eq!(s["scopes_requested"][0], json!(["mcp"]), "{s}");
    let req = browser.requests.lock().unwrap()[0].clone();
    let auth_url = req["authorization_url"].as_str().unwrap();
    assert!(
        auth_url.contains("code_challenge_method=S256"),
        "{auth_url}"
    );
    assert_eq!(req["server"], "secure");
    assert_eq!(req["step_up"], false);

    // The tokens: in a 0600 file, never in status or events.
    let file = token_file(dir.path());
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let stored: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let access = stored["token_response"]["access_token"]
        .as_str()
        .unwrap()
        .to_string();
    let refresh = stored["token_response"]["refresh_token"]
        .as_str()
        .unwrap()
        .to_string();
    let seen = format!("{} {:?}", status(&rt), events.0.lock().unwrap());
    assert!(!seen.contains(&access) && !seen.contains(&refresh));

    // Step-up: admin_op answers 403 insufficient_scope; the client asks for
    // the union of scopes through the browser step and the call succeeds.
    assert_eq!(call(&rt, "admin_op")["result"], "admin done");
    let reqs = browser.requests.lock().unwrap().clone();
    assert_eq!(reqs.len(), 2, "{reqs:?}");
    assert_eq!(reqs[1]["step_up"], true);
    let scopes = reqs[1]["scopes"].as_array().unwrap();
    assert!(
        scopes.contains(&json!("mcp")) && scopes.contains(&json!("admin")),
        "{scopes:?}"
    );
    assert_eq!(call(&rt, "whoami")["result"], "scopes: mcp admin");

    // Revoked (access and refresh tokens): the refresh is refused, the user
    // signs in again, the call goes through.
    http("POST", &format!("http://127.0.0.1:{}/test/revoke", f.port));
    assert_eq!(
        call(&rt, "whoami")["result"],
        "scopes: mcp admin",
        "{}",
        status(&rt)
    );
    let s = stats(&f);
    assert!(s["rejected_tokens"].as_u64().unwrap() >= 1, "{s}");
    assert_eq!(s["authorizations"], 3, "{s}");
    drop(rt);

    // A new runtime finds the stored tokens: no browser step.
    let browser2 = Arc::new(Browser::default());
    let (rt2, _) = runtime_with(&browser2, server);
    assert!(ready(&rt2), "{}", status(&rt2));
    assert_eq!(call(&rt2, "whoami")["result"], "scopes: mcp admin");
    assert!(browser2.requests.lock().unwrap().is_empty());
}

#[test]
fn mcp_oauth_expiring_tokens_are_refreshed_without_the_user() {
    // Tokens live 2 s: the client refreshes before using an expiring one.
    let Some(f) = start(2) else { return };
    let dir = tempfile::tempdir().unwrap();
    let server = json!({"url": format!("http://127.0.0.1:{}/mcp", f.port),
        "connect_timeout": 20, "timeout": 20, "oauth": {"token_dir": dir.path()}});
    let browser = Arc::new(Browser::default());
    let (rt, _) = runtime_with(&browser, server);
    assert!(ready(&rt), "{}", status(&rt));
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(
        call(&rt, "whoami")["result"],
        "scopes: mcp",
        "{}",
        status(&rt)
    );
    let s = stats(&f);
    assert!(s["refreshes"].as_u64().unwrap() >= 1, "{s}");
    assert_eq!(s["authorizations"], 1, "{s}");
    assert_eq!(browser.requests.lock().unwrap().len(), 1);
}

#[test]
fn mcp_oauth_a_forged_state_is_refused() {
    let Some(f) = start(3600) else { return };
    let dir = tempfile::tempdir().unwrap();
    let server = json!({"url": format!("http://127.0.0.1:{}/mcp", f.port),
        "connect_timeout": 10, "timeout": 10, "oauth": {"token_dir": dir.path()}});
    let browser = Arc::new(Browser::default());
    browser
        .tamper
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let (rt, _) = runtime_with(&browser, server);
    assert!(wait_until(
        Duration::from_secs(20),
        || status(&rt)["secure"]["state"] == "failed"
    ));
    let err = status(&rt)["secure"]["last_error"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(err.contains("state"), "{err}");
    // The code was never exchanged and no token was stored.
    assert_eq!(stats(&f)["code_exchanges"], 0);
    assert!(
        std::fs::read_dir(dir.path())
            .map(|d| d.count())
            .unwrap_or(0)
            == 0
    );
}

#[test]
fn mcp_oauth_client_credentials_need_no_user() {
    let Some(f) = start(3600) else { return };
    let server = json!({"url": format!("http://127.0.0.1:{}/mcp", f.port),
        "connect_timeout": 20, "timeout": 20,
        "oauth": {"grant": "client_credentials", "client_id": "m2m-client",
                  "client_secret": "m2m-secret", "token_store": "memory"}});
    let browser = Arc::new(Browser::default());
    let (rt, _) = runtime_with(&browser, server);
    assert!(ready(&rt), "{}", status(&rt));
    assert_eq!(call(&rt, "whoami")["result"], "scopes: mcp");
    assert!(browser.requests.lock().unwrap().is_empty());
    let s = stats(&f);
    assert_eq!(s["client_credentials"], 1, "{s}");
    assert!(!status(&rt).to_string().contains("m2m-secret"));
}

#[test]
fn mcp_oauth_without_a_handler_fails_with_the_reason() {
    let Some(f) = start(3600) else { return };
    let rt = Runtime::new("{}").expect("runtime");
    let server = json!({"url": format!("http://127.0.0.1:{}/mcp", f.port),
        "connect_timeout": 10, "oauth": {"token_store": "memory"}});
    rt.add_mcp_server("secure", &server.to_string()).unwrap();
    assert!(wait_until(
        Duration::from_secs(20),
        || status(&rt)["secure"]["state"] == "failed"
    ));
    let err = status(&rt)["secure"]["last_error"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(err.contains("OAuth handler"), "{err}");
}
