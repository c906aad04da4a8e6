//! Resilience: the circuit breaker parks a server after consecutive failures
//! (calls fail fast, naming the server and when it is retried; status shows
//! it) and lets calls through again after the cool-down; keepalive pings
//! find a hung server and drop its connection. Against a real stdio server
//! (tests/fixtures/trust-server.cjs, npm SDK) killed and stopped by the test.

use crate::mcp_common::*;
use hermes_runtime::Runtime;
use std::time::{Duration, Instant};

fn fixture() -> Option<(std::path::PathBuf, std::path::PathBuf)> {
    server_js("server-everything")?;
    let modules = modules_dir().canonicalize().unwrap();
    if !modules.join("@modelcontextprotocol/sdk").is_dir() {
        eprintln!(
            "skipped: @modelcontextprotocol/sdk not in {}",
            modules.display()
        );
        return None;
    }
    let js = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/trust-server.cjs");
    Some((js, modules))
}

fn text(v: &serde_json::Value) -> String {
    v["result"]
        .as_str()
        .or(v["error"].as_str())
        .unwrap_or_default()
        .to_string()
}

fn signal(pid: i64, sig: &str) {
    std::process::Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .unwrap();
}

#[test]
fn breaker_parks_a_failing_server_then_lets_it_recover() {
    let Some((js, modules)) = fixture() else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("ht-breaker-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let flag = dir.join("down");
    // The server refuses to start while the flag file exists.
    let script = format!(
        "if [ -e '{}' ]; then exit 1; fi; exec node '{}'",
        flag.display(),
        js.display()
    );
    let cfg = serde_json::json!({"mcp_servers": {"b": {"command": "sh", "args": ["-c", script],
        "env": {"NODE_PATH": modules}, "timeout": 20, "keepalive_interval": 0,
        "breaker_failures": 2, "breaker_cooldown": 2}}})
    .to_string();
    let rt = Runtime::new(&cfg).expect("runtime");
    let events = Events::install(&rt);
    assert_eq!(text(&dispatch(&rt, "mcp__b__greet", "{}")), "hello");

    std::fs::write(&flag, "").unwrap();
    let pid = status(&rt)["b"]["pid"].as_i64().unwrap();
    signal(pid, "-9");
    assert!(wait_until(
        Duration::from_secs(5),
        || status(&rt)["b"]["state"] == "disconnected"
    ));
    // Two failures: the restart is refused, then the reconnect backoff.
    for _ in 0..2 {
        let t = text(&dispatch(&rt, "mcp__b__greet", "{}"));
        assert!(t.contains("MCP server 'b'"), "{t}");
        assert!(!t.contains("parked"), "{t}");
    }
    // Parked: fail fast, naming the server and when it is retried.
    let started = Instant::now();
    let t = text(&dispatch(&rt, "mcp__b__greet", "{}"));
    let took = started.elapsed();
    assert!(
        t.contains("MCP server 'b' is parked after 2 consecutive failures")
            && t.contains("retried in"),
        "{t}"
    );
    assert!(took < Duration::from_secs(2), "fast failure took {took:?}");
    let st = status(&rt);
    assert_eq!(st["b"]["state"], "parked", "{st}");
    assert!(
        st["b"]["parked_retry_in_ms"].as_u64().unwrap() <= 2000,
        "{st}"
    );
    // Events reach the handler on the callbacks thread, a moment after the
    // state changed (seen late on a loaded machine).
    assert!(
        wait_until(Duration::from_secs(5), || events
            .of_type("mcp.state")
            .iter()
            .any(|e| e["state"] == "parked" && e["server"] == "b")),
        "{:?}",
        events.of_type("mcp.state")
    );

    // The server can start again; after the cool-down the next call goes
    // through, reconnects, and the breaker closes.
    std::fs::remove_file(&flag).unwrap();
    std::thread::sleep(Duration::from_millis(2100));
    assert_eq!(text(&dispatch(&rt, "mcp__b__greet", "{}")), "hello");
    let st = status(&rt);
    assert_eq!(st["b"]["state"], "ready", "{st}");
    assert_eq!(st["b"]["call_failures"], 0, "{st}");
    rt.close();
    std::fs::remove_dir_all(&dir).ok();

    // Config checks.
    let e = Runtime::new(r#"{"mcp_servers": {"x": {"command": "node", "breaker_cooldown": -1}}}"#)
        .err()
        .expect("refused");
    assert!(
        e.message.contains("mcp_servers.x.breaker_cooldown"),
        "{}",
        e.message
    );
}

#[test]
fn keepalive_drops_a_hung_server_and_the_next_call_reconnects() {
    let Some((js, modules)) = fixture() else {
        return;
    };
    let cfg = serde_json::json!({"mcp_servers": {"k": {"command": "node", "args": [js],
        "env": {"NODE_PATH": modules}, "timeout": 20, "keepalive_interval": 1}}})
    .to_string();
    let rt = Runtime::new(&cfg).expect("runtime");
    let events = Events::install(&rt);
    assert_eq!(text(&dispatch(&rt, "mcp__k__greet", "{}")), "hello");
    let pid = status(&rt)["k"]["pid"].as_i64().unwrap();
    // Hung: alive but not answering.
    signal(pid, "-STOP");
    assert!(
        wait_until(Duration::from_secs(8), || status(&rt)["k"]["state"]
            == "disconnected"),
        "{}",
        status(&rt)
    );
    let st = status(&rt);
    assert!(
        st["k"]["last_error"]
            .as_str()
            .unwrap_or_default()
            .contains("keepalive ping"),
        "{st}"
    );
    assert!(
        events
            .of_type("mcp.state")
            .iter()
            .any(|e| e["state"] == "disconnected"
                && e["error"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("keepalive")),
        "{:?}",
        events.of_type("mcp.state")
    );
    // The stopped child was killed, not left behind.
    assert!(
        wait_until(Duration::from_secs(3), || !pid_alive(pid)),
        "pid {pid} still alive"
    );
    assert_eq!(text(&dispatch(&rt, "mcp__k__greet", "{}")), "hello");
    assert_eq!(status(&rt)["k"]["state"], "ready");
    assert_eq!(status(&rt)["k"]["connects"], 2);
    rt.close();
}
