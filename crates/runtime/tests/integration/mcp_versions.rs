//! Protocol version negotiation (issue 35): the client offers the newest
//! revision with an `initialize` handshake and speaks any older one the
//! specification still lists that the server answers with; a version it
//! does not speak is a failed server with the reason, never a session.
//! The peer is a real stdio server (fixtures/versioned_server.py).

use crate::mcp_common::*;
use hermes_runtime::Runtime;
use std::time::Duration;

fn runtime_answering(version: &str) -> Runtime {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/versioned_server.py"
    );
    let cfg = serde_json::json!({"mcp_servers": {"v": {"command": "python3",
        "args": [script], "env": {"HT_ANSWER_VERSION": version},
        "timeout": 20, "connect_timeout": 20}}})
    .to_string();
    Runtime::new(&cfg).expect("runtime")
}

#[test]
fn mcp_versions_older_servers_are_spoken_to() {
    for answered in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let rt = runtime_answering(answered);
        assert!(
            wait_until(Duration::from_secs(20), || status(&rt)["v"]["state"]
                == "ready"),
            "{answered}: {}",
            status(&rt)
        );
        assert_eq!(status(&rt)["v"]["protocol_version"], answered);
        // The client offered the newest revision that has `initialize`.
        let out = dispatch(&rt, "mcp__v__offered", "{}");
        assert_eq!(out["result"], "2025-11-25", "{answered}: {out}");
    }
}

#[test]
fn mcp_versions_unknown_answer_is_a_failed_server_with_the_reason() {
    let rt = runtime_answering("1999-01-01");
    assert!(wait_until(
        Duration::from_secs(20),
        || status(&rt)["v"]["state"] == "failed"
    ));
    let err = status(&rt)["v"]["last_error"].as_str().unwrap().to_string();
    assert!(
        err.contains("'1999-01-01'") && err.contains("2025-11-25"),
        "{err}"
    );
    assert!(!def_names(&rt).iter().any(|n| n.starts_with("mcp__v__")));
}
