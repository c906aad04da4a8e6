//! Against the reference server `@modelcontextprotocol/server-everything`
//! over stdio: its tools become `mcp__everything__*`, calls map results,
//! errors, timeouts and cancellation, a killed server is reconnected, and no
//! child outlives the runtime.

use crate::mcp_common::*;
use hermes_runtime::Runtime;
use std::time::{Duration, Instant};

#[test]
fn tools_are_registered_and_called() {
    let Some(js) = server_js("server-everything") else {
        return;
    };
    let rt = Runtime::new(&everything_config(&js, "")).expect("runtime");
    let st = status(&rt);
    assert_eq!(st["everything"]["state"], "ready", "{st}");
    assert_eq!(
        st["everything"]["skipped_tools"],
        serde_json::json!([]),
        "{st}"
    );
    assert_eq!(
        st["everything"]["server_info"]["name"], "mcp-servers/everything",
        "{st}"
    );
    let names = def_names(&rt);
    assert!(
        names.contains(&"mcp__everything__echo".to_string()),
        "{names:?}"
    );
    assert!(
        names.contains(&"mcp__everything__get-sum".to_string()),
        "{names:?}"
    );
    assert!(names.iter().all(|n| n.len() <= 64));

    let out = dispatch(&rt, "mcp__everything__echo", r#"{"message":"hello"}"#);
    assert_eq!(out["result"], "Echo: hello", "{out}");
    let out = dispatch(&rt, "mcp__everything__get-sum", r#"{"a":2,"b":40}"#);
    assert!(out["result"].as_str().unwrap().contains("42"), "{out}");
    let out = dispatch(
        &rt,
        "mcp__everything__get-structured-content",
        r#"{"location":"New York"}"#,
    );
    assert!(
        out["structuredContent"].is_object() || out["result"].is_object(),
        "{out}"
    );

    // The toolset and its alias select the tools.
    let defs = rt
        .definitions(r#"{"enabled_toolsets":["everything"]}"#)
        .unwrap();
    assert!(defs.contains("mcp__everything__echo"), "{defs}");
}

#[test]
fn server_errors_reach_the_model_as_errors() {
    let Some(js) = server_js("server-everything") else {
        return;
    };
    let rt = Runtime::new(&everything_config(
        &js,
        r#", "elicitation": {"enabled": false}"#,
    ))
    .expect("runtime");
    // Elicitation without the client capability: the tool is not offered.
    let out = dispatch(&rt, "mcp__everything__trigger-elicitation-request", "{}");
    assert!(out["error"].is_string(), "{out}");
    // The connection survives an error.
    let out = dispatch(&rt, "mcp__everything__echo", r#"{"message":"still here"}"#);
    assert_eq!(out["result"], "Echo: still here", "{out}");
}

#[test]
fn long_call_is_cancelled_and_timed_out() {
    let Some(js) = server_js("server-everything") else {
        return;
    };
    let rt = Runtime::new(&everything_config(&js, "")).expect("runtime");
    let t = Instant::now();
    let (id, rx) = dispatch_async(
        &rt,
        "mcp__everything__trigger-long-running-operation",
        r#"{"duration":30,"steps":30}"#,
    );
    std::thread::sleep(Duration::from_millis(300));
    rt.cancel(id).unwrap();
    let (cancelled, text) = rx.recv_timeout(Duration::from_secs(5)).expect("answered");
    assert!(cancelled, "{text}");
    assert!(t.elapsed() < Duration::from_secs(5));
    // The server still serves.
    let out = dispatch(
        &rt,
        "mcp__everything__echo",
        r#"{"message":"after cancel"}"#,
    );
    assert_eq!(out["result"], "Echo: after cancel", "{out}");
    drop(rt);

    // The server's `timeout` bounds each call.
    let rt =
        Runtime::new(&everything_config(&js, "").replace(r#""timeout": 20"#, r#""timeout": 1"#))
            .expect("runtime");
    let t = Instant::now();
    let out = dispatch(
        &rt,
        "mcp__everything__trigger-long-running-operation",
        r#"{"duration":10,"steps":10}"#,
    );
    assert!(t.elapsed() < Duration::from_secs(4), "{:?}", t.elapsed());
    let text = out.to_string();
    assert!(text.contains("timed out"), "{out}");
}

#[test]
fn killed_server_gives_an_error_then_is_reconnected_and_close_kills_it() {
    let Some(js) = server_js("server-everything") else {
        return;
    };
    let rt = Runtime::new(&everything_config(&js, "")).expect("runtime");
    let pid = status(&rt)["everything"]["pid"].as_i64().expect("pid");
    assert!(pid_alive(pid));
    let events = Events::install(&rt);
    let (_id, rx) = dispatch_async(
        &rt,
        "mcp__everything__trigger-long-running-operation",
        r#"{"duration":30,"steps":30}"#,
    );
    // Time for the request to reach the server (a kill before that makes
    // the call reconnect and run its 30 s).
    std::thread::sleep(Duration::from_millis(1000));
    std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    let (cancelled, text) = rx.recv_timeout(Duration::from_secs(10)).expect("answered");
    assert!(!cancelled);
    assert!(
        text.contains("error") && text.contains("everything"),
        "{text}"
    );
    assert!(wait_until(
        Duration::from_secs(5),
        || status(&rt)["everything"]["state"] == "disconnected"
    ));

    let out = dispatch(&rt, "mcp__everything__echo", r#"{"message":"back"}"#);
    assert_eq!(out["result"], "Echo: back", "{out}");
    let st = status(&rt);
    assert_eq!(st["everything"]["state"], "ready", "{st}");
    assert_eq!(st["everything"]["connects"], 2, "{st}");
    let pid2 = st["everything"]["pid"].as_i64().unwrap();
    assert_ne!(pid, pid2);
    assert!(wait_until(Duration::from_secs(5), || events
        .of_type("mcp.state")
        .len()
        >= 2));
    let states: Vec<serde_json::Value> = events
        .of_type("mcp.state")
        .iter()
        .map(|e| e["state"].clone())
        .collect();
    assert_eq!(states, vec!["disconnected", "ready"], "{states:?}");

    rt.close();
    assert!(!pid_alive(pid2), "the server outlived close");
    assert_eq!(status(&rt)["everything"]["state"], "closed");
}

#[test]
fn disabled_filtered_and_missing_servers() {
    let Some(js) = server_js("server-everything") else {
        return;
    };
    let cfg = everything_config(&js, r#", "tools": {"include": ["echo", "get-sum"], "exclude": ["get-sum"], "resources": false, "prompts": false}"#)
        .replace(
            r#""mcp_servers": {"#,
            r#""mcp_servers": {"off": {"command": "node", "enabled": false}, "broken": {"command": "/nonexistent/mcp-server", "connect_timeout": 2}, "#,
        );
    let t = Instant::now();
    let rt = Runtime::new(&cfg).expect("runtime");
    assert!(t.elapsed() < Duration::from_secs(30));
    let names: Vec<String> = def_names(&rt)
        .into_iter()
        .filter(|n| n.starts_with("mcp__"))
        .collect();
    assert_eq!(names, vec!["mcp__everything__echo".to_string()]);
    let st = status(&rt);
    assert_eq!(st["off"]["state"], "disabled", "{st}");
    assert_eq!(st["broken"]["state"], "failed", "{st}");
    assert!(
        st["broken"]["last_error"]
            .as_str()
            .unwrap()
            .contains("/nonexistent/mcp-server"),
        "{st}"
    );
}

#[test]
fn config_is_checked() {
    assert!(hermes_runtime::config::Config::parse(r#"{"mcp_servers": {"x": {}}}"#).is_err());
    assert!(
        hermes_runtime::config::Config::parse(
            r#"{"mcp_servers": {"x": {"command": "a", "bogus": 1}}}"#
        )
        .is_err()
    );
    assert!(
        hermes_runtime::config::Config::parse(
            r#"{"mcp_servers": {"x": {"url": "https://example.com/mcp"}}}"#
        )
        .is_ok()
    );
    for bad in [
        r#"{"mcp_servers": {"x": {"url": "ftp://example.com/mcp"}}}"#,
        r#"{"mcp_servers": {"x": {"url": "http://127.0.0.1:1/mcp", "ca_file": "/etc/hostname"}}}"#,
        r#"{"mcp_servers": {"x": {"url": "https://127.0.0.1:1/mcp", "ca_file": "/nonexistent/ca.pem"}}}"#,
        r#"{"mcp_servers": {"x": {"url": "https://127.0.0.1:1/mcp", "ca_file": "/etc/hostname"}}}"#,
        r#"{"mcp_servers": {"x": {"command": "a", "ca_file": "/etc/hostname"}}}"#,
    ] {
        let e = hermes_runtime::config::Config::parse(bad).unwrap_err();
        assert!(!e.message.contains('\n'), "{e:?}");
    }
    assert!(hermes_runtime::config::Config::parse(r#"{"mcp_servers": {"x": {"url": "http://127.0.0.1:1/mcp", "headers": {"bad name": "v"}}}}"#).is_err());
    assert!(hermes_runtime::config::Config::parse(r#"{"mcp_servers": {"x": {"url": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer ${HOME}"}}}}"#).is_ok());
    assert!(
        hermes_runtime::config::Config::parse(
            r#"{"mcp_servers": {"x": {"command": "a", "timeout": -1}}}"#
        )
        .is_err()
    );
    interpolation_uses_the_host_environment();
}

fn interpolation_uses_the_host_environment() {
    // ${VAR} interpolation uses the host's environment (HOME is set in CI and here).
    let c = hermes_runtime::config::Config::parse(r#"{"mcp_servers": {"x": {"command": "a", "args": ["${HOME}", "${HT_SURELY_UNSET_VAR}"]}}}"#).unwrap();
    let args = &c.mcp_servers["x"].args;
    assert_eq!(args[0], std::env::var("HOME").unwrap());
    assert_eq!(args[1], "${HT_SURELY_UNSET_VAR}");
}

#[test]
fn servers_are_added_and_removed_at_run_time() {
    let Some(js) = server_js("server-everything") else {
        return;
    };
    let rt = Runtime::new("{}").expect("runtime");
    let cfg = serde_json::json!({"command": "node", "args": [js, "stdio"]}).to_string();
    rt.add_mcp_server("ev", &cfg).expect("added");
    assert_eq!(
        dispatch(&rt, "mcp__ev__echo", r#"{"message":"added"}"#)["result"],
        "Echo: added"
    );
    let err = rt.add_mcp_server("ev", &cfg).unwrap_err();
    assert_eq!(err.kind, hermes_core::ErrorKind::Conflict);
    let pid = status(&rt)["ev"]["pid"].as_i64().unwrap();
    rt.remove_mcp_server("ev").expect("removed");
    assert!(!pid_alive(pid), "the removed server still runs");
    assert!(def_names(&rt).iter().all(|n| !n.starts_with("mcp__")));
    assert_eq!(status(&rt), serde_json::json!({}));
    // Added again under the same name: a new process, the tools back.
    rt.add_mcp_server("ev", &cfg).expect("added again");
    assert_eq!(
        dispatch(&rt, "mcp__ev__echo", r#"{"message":"again"}"#)["result"],
        "Echo: again"
    );
}

#[test]
fn streamable_http_server() {
    let Some(js) = server_js("server-everything") else {
        return;
    };
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let loopback =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/loopback.cjs");
    let child = std::process::Command::new("node")
        .arg("--require")
        .arg(&loopback)
        .arg(&js)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stderr(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("node");
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _server = Kill(child);
    assert!(wait_until(Duration::from_secs(15), || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    }));
    let cfg =
        serde_json::json!({"mcp_servers": {"web": {"url": format!("http://127.0.0.1:{port}/mcp"),
        "headers": {"X-Test": "1"}, "timeout": 20, "connect_timeout": 20}}})
        .to_string();
    let rt = Runtime::new(&cfg).expect("runtime");
    let st = status(&rt);
    assert_eq!(st["web"]["state"], "ready", "{st}");
    assert_eq!(st["web"]["transport"], "http", "{st}");
    let out = dispatch(&rt, "mcp__web__echo", r#"{"message":"over http"}"#);
    assert_eq!(out["result"], "Echo: over http", "{out}");
    // Cancellation over HTTP.
    let t = Instant::now();
    let (id, rx) = dispatch_async(
        &rt,
        "mcp__web__trigger-long-running-operation",
        r#"{"duration":30,"steps":30}"#,
    );
    std::thread::sleep(Duration::from_millis(300));
    rt.cancel(id).unwrap();
    let (cancelled, _text) = rx.recv_timeout(Duration::from_secs(5)).expect("answered");
    assert!(
        cancelled && t.elapsed() < Duration::from_secs(5),
        "{cancelled} {:?} {_text}",
        t.elapsed()
    );
    let out = dispatch(&rt, "mcp__web__get-sum", r#"{"a":1,"b":2}"#);
    assert!(out["result"].as_str().unwrap().contains('3'), "{out}");
}

/// A plain-HTTP everything server on a free loopback port; killed on drop.
struct HttpServer {
    child: std::process::Child,
    port: u16,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn fixture(name: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn spawn_node(args: &[&std::ffi::OsStr], port: u16) -> HttpServer {
    let child = std::process::Command::new("node")
        .args(args)
        .env("PORT", port.to_string())
        .stderr(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("node");
    let s = HttpServer { child, port };
    assert!(wait_until(Duration::from_secs(15), || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    }));
    s
}

fn openssl(dir: &std::path::Path, args: &[&str]) {
    let out = std::process::Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl (setup.sh installs it)");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `https://` servers: a server whose certificate is signed by a private
/// CA is reached when the config names that CA (`ca_file`), and refused
/// with a certificate error when it does not (no silent plain-text
/// fallback, no unverified TLS).
#[test]
fn https_server_with_a_private_ca() {
    let Some(js) = server_js("server-everything") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let mut ca = vec!["req", "-x509"];
    ca.extend(ec);
    ca.extend([
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=hermes-tools test CA",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
    ]);
    openssl(d, &ca);
    let mut csr = vec!["req"];
    csr.extend(ec);
    csr.extend([
        "-keyout",
        "srv.key",
        "-out",
        "srv.csr",
        "-subj",
        "/CN=127.0.0.1",
    ]);
    openssl(d, &csr);
    std::fs::write(
        d.join("ext.cnf"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    openssl(
        d,
        &[
            "x509",
            "-req",
            "-in",
            "srv.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "srv.pem",
            "-days",
            "2",
            "-extfile",
            "ext.cnf",
        ],
    );
    let plain = spawn_node(
        &[
            "--require".as_ref(),
            fixture("loopback.cjs").as_os_str(),
            js.as_ref(),
            "streamableHttp".as_ref(),
        ],
        free_port(),
    );
    let tls_port = free_port();
    let tls_port_s = tls_port.to_string();
    let plain_port_s = plain.port.to_string();
    let (key, cert) = (d.join("srv.key"), d.join("srv.pem"));
    let _front = spawn_node(
        &[
            fixture("tls-front.cjs").as_os_str(),
            key.as_os_str(),
            cert.as_os_str(),
            tls_port_s.as_ref(),
            plain_port_s.as_ref(),
        ],
        tls_port,
    );
    let url = format!("https://127.0.0.1:{tls_port}/mcp");
    let ca_file = d.join("ca.pem");
    let cfg = serde_json::json!({"mcp_servers": {
        "secure": {"url": url, "ca_file": ca_file, "timeout": 20, "connect_timeout": 20},
        "untrusted": {"url": url, "connect_timeout": 5}
    }})
    .to_string();
    let rt = Runtime::new(&cfg).expect("runtime");
    let st = status(&rt);
    assert_eq!(st["secure"]["state"], "ready", "{st}");
    let out = dispatch(&rt, "mcp__secure__echo", r#"{"message":"over tls"}"#);
    assert_eq!(out["result"], "Echo: over tls", "{out}");
    assert_ne!(st["untrusted"]["state"], "ready", "{st}");
    let why = st["untrusted"]["last_error"].as_str().unwrap_or("");
    assert!(why.contains("certificate"), "{st}");
}

#[test]
fn resources_and_prompts_are_utility_tools() {
    let Some(js) = server_js("server-everything") else {
        return;
    };
    let rt = Runtime::new(&everything_config(&js, "")).expect("runtime");
    let names = def_names(&rt);
    for n in [
        "list_resources",
        "read_resource",
        "list_prompts",
        "get_prompt",
    ] {
        assert!(
            names.contains(&format!("mcp__everything__{n}")),
            "{n}: {names:?}"
        );
    }
    let out = dispatch(&rt, "mcp__everything__list_resources", "{}");
    let resources = out["result"]["resources"]
        .as_array()
        .expect("resources")
        .clone();
    assert!(!resources.is_empty(), "{out}");
    let uri = resources[0]["uri"].as_str().unwrap();
    let out = dispatch(
        &rt,
        "mcp__everything__read_resource",
        &serde_json::json!({ "uri": uri }).to_string(),
    );
    assert!(out["result"]["contents"].is_array(), "{out}");
    let out = dispatch(&rt, "mcp__everything__list_prompts", "{}");
    assert!(out.to_string().contains("simple-prompt"), "{out}");
    let out = dispatch(
        &rt,
        "mcp__everything__get_prompt",
        r#"{"name":"simple-prompt"}"#,
    );
    assert!(out["result"]["messages"].is_array(), "{out}");
    let out = dispatch(
        &rt,
        "mcp__everything__get_prompt",
        r#"{"name":"no-such-prompt"}"#,
    );
    assert!(out["error"].is_string(), "{out}");
}
