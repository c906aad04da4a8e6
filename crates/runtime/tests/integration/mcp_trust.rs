//! Trust: tool annotations feed approval, and a tool whose definition changes
//! after it was first listed (a "rug pull") is held and reported. Against a
//! real stdio server written with the npm SDK (tests/fixtures/trust-server.cjs).

use crate::mcp_common::*;
use hermes_runtime::Runtime;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The fixture's config, or None (skipped) without node and the SDK.
fn trust_config(extra: serde_json::Value) -> Option<String> {
    server_js("server-everything")?;
    let modules = modules_dir().canonicalize().unwrap();
    if !modules.join("@modelcontextprotocol/sdk").is_dir() {
        eprintln!(
            "skipped: @modelcontextprotocol/sdk not in {}",
            modules.display()
        );
        return None;
    }
    let fixture = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/trust-server.cjs");
    let mut server = serde_json::json!({"command": "node", "args": [fixture],
        "env": {"NODE_PATH": modules}, "timeout": 20});
    if let (Some(s), serde_json::Value::Object(e)) = (server.as_object_mut(), extra) {
        s.extend(e);
    }
    Some(serde_json::json!({"mcp_servers": {"t": server}}).to_string())
}

struct Approver(Mutex<Vec<String>>, &'static str);

impl hermes_runtime::ApprovalSink for Approver {
    fn ask(&self, request: &Arc<str>, id: u64) {
        self.0.lock().unwrap().push(request.to_string());
        hermes_runtime::approvals::respond(id, self.1.to_string());
    }
}

fn text(v: &serde_json::Value) -> String {
    v["result"]
        .as_str()
        .or(v["error"].as_str())
        .unwrap_or_default()
        .to_string()
}

#[test]
fn destructive_tools_of_untrusted_servers_ask_first() {
    let Some(cfg) = trust_config(serde_json::json!({})) else {
        return;
    };
    let rt = Runtime::new(&cfg).expect("runtime");
    // No approval handler: fail closed; the tool did not run.
    let out = dispatch(&rt, "mcp__t__wipe", "{}");
    let t = text(&out);
    assert!(
        t.contains("BLOCKED") && t.contains("destructive") && t.contains("'wipe'"),
        "{out}"
    );
    // readOnlyHint wins; plain tools never ask.
    assert_eq!(text(&dispatch(&rt, "mcp__t__peek", "{}")), "peeked");
    assert_eq!(text(&dispatch(&rt, "mcp__t__greet", "{}")), "hello");

    // A handler that denies: asked, not run.
    let no = Arc::new(Approver(Default::default(), "deny"));
    rt.set_approval_sink(false, Some(no.clone())).unwrap();
    let t = text(&dispatch(&rt, "mcp__t__wipe", "{}"));
    assert!(t.contains("BLOCKED"), "{t}");
    let asked = no.0.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(
        asked[0].contains("wipe") && asked[0].contains("mcp_destructive_tool"),
        "{}",
        asked[0]
    );

    // A handler that approves once: it runs (the first run, since nothing ran before).
    let yes = Arc::new(Approver(Default::default(), "once"));
    rt.set_approval_sink(false, Some(yes.clone())).unwrap();
    assert_eq!(text(&dispatch(&rt, "mcp__t__wipe", "{}")), "wiped 1");
    assert_eq!(yes.0.lock().unwrap().len(), 1);
    assert_eq!(text(&dispatch(&rt, "mcp__t__peek", "{}")), "peeked");
    assert_eq!(yes.0.lock().unwrap().len(), 1, "read-only tools do not ask");
    rt.close();

    // A trusted server's destructive tools run without asking.
    let cfg = trust_config(serde_json::json!({"trust": "trusted"})).unwrap();
    let rt = Runtime::new(&cfg).expect("runtime");
    assert_eq!(text(&dispatch(&rt, "mcp__t__wipe", "{}")), "wiped 1");
    assert_eq!(status(&rt)["t"]["trust"], "trusted");
    rt.close();

    let bad = trust_config(serde_json::json!({"trust": "yes"})).unwrap();
    let e = Runtime::new(&bad).err().expect("refused");
    assert!(e.message.contains("mcp_servers.t.trust"), "{}", e.message);
}

#[test]
fn a_changed_tool_definition_is_held_until_accepted() {
    let Some(cfg) = trust_config(serde_json::json!({})) else {
        return;
    };
    let rt = Runtime::new(&cfg).expect("runtime");
    let events = Events::install(&rt);
    assert!(def_names(&rt).contains(&"mcp__t__greet".to_string()));
    assert_eq!(text(&dispatch(&rt, "mcp__t__rugpull", "{}")), "changed");
    // The changed tool leaves the definitions and is reported.
    assert!(
        wait_until(Duration::from_secs(10), || !def_names(&rt)
            .contains(&"mcp__t__greet".to_string())),
        "{:?}",
        def_names(&rt)
    );
    assert_eq!(status(&rt)["t"]["held_tools"], serde_json::json!(["greet"]));
    assert!(wait_until(Duration::from_secs(5), || !events
        .of_type("mcp.tool_changed")
        .is_empty()));
    let ev = &events.of_type("mcp.tool_changed")[0];
    assert_eq!(ev["tool"], "greet", "{ev}");
    assert_eq!(ev["held"], true, "{ev}");
    assert_ne!(ev["pinned"], ev["now"], "{ev}");
    let out = dispatch(&rt, "mcp__t__greet", "{}");
    assert!(
        out.to_string().contains("mcp__t__greet"),
        "unknown tool now: {out}"
    );

    // The host accepts: the tool comes back with its new description.
    let accepted = rt.accept_mcp_tools("t").expect("accept");
    assert_eq!(accepted, vec!["greet".to_string()]);
    assert!(def_names(&rt).contains(&"mcp__t__greet".to_string()));
    let defs = rt.definitions("").unwrap();
    assert!(
        defs.contains("id_rsa"),
        "the accepted description is offered"
    );
    assert_eq!(status(&rt)["t"]["held_tools"], serde_json::json!([]));
    assert!(rt.accept_mcp_tools("nope").is_err());

    // Changing back is a change from the new pin: held again.
    assert_eq!(text(&dispatch(&rt, "mcp__t__restore", "{}")), "restored");
    assert!(wait_until(
        Duration::from_secs(10),
        || status(&rt)["t"]["held_tools"] == serde_json::json!(["greet"])
    ));
    rt.close();

    // pin: false only reports: the tool stays, with its new definition.
    let cfg = trust_config(serde_json::json!({"pin": false})).unwrap();
    let rt = Runtime::new(&cfg).expect("runtime");
    let events = Events::install(&rt);
    assert_eq!(text(&dispatch(&rt, "mcp__t__rugpull", "{}")), "changed");
    assert!(wait_until(Duration::from_secs(10), || rt
        .definitions("")
        .unwrap()
        .contains("id_rsa")));
    assert!(def_names(&rt).contains(&"mcp__t__greet".to_string()));
    assert!(wait_until(Duration::from_secs(5), || !events
        .of_type("mcp.tool_changed")
        .is_empty()));
    assert_eq!(events.of_type("mcp.tool_changed")[0]["held"], false);
    rt.close();
}
