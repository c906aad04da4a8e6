//! `@modelcontextprotocol/server-filesystem` (its tool names are our file
//! tools' names: namespaced, never shadowing) and a small SDK server whose
//! tool list changes (`notifications/tools/list_changed`).

use crate::mcp_common::*;
use hermes_core::{Tool, ToolCall, ToolOutput};
use hermes_runtime::Runtime;
use std::sync::Arc;
use std::time::Duration;

struct HostTool;
impl Tool for HostTool {
    fn call(&self, call: ToolCall<'_>) {
        call.reply.send(ToolOutput::ok("from the host"));
    }
}

fn host_spec(name: &str) -> String {
    serde_json::json!({"name": name, "toolset": "host",
        "schema": {"name": name, "description": "host tool", "parameters": {"type": "object", "properties": {}}}})
    .to_string()
}

#[test]
fn filesystem_tools_are_namespaced_and_never_shadow() {
    let Some(js) = server_js("server-filesystem") else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("ht-mcp-fs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("hello.txt"), "hi there").unwrap();
    let dir = dir.canonicalize().unwrap();
    let cfg = serde_json::json!({"mcp_servers": {"fs": {"command": "node",
        "args": [js, dir], "timeout": 20, "connect_timeout": 30}}})
    .to_string();
    let rt = Runtime::new(&cfg).expect("runtime");
    // A host tool named like the server's tool lives beside it.
    rt.register_tool(&host_spec("read_text_file"), Arc::new(HostTool), None)
        .unwrap();
    let names = def_names(&rt);
    for n in [
        "mcp__fs__read_text_file",
        "mcp__fs__write_file",
        "mcp__fs__list_directory",
        "read_text_file",
    ] {
        assert!(names.contains(&n.to_string()), "{n} missing from {names:?}");
    }
    assert_eq!(dispatch(&rt, "read_text_file", "{}"), "from the host");
    let path = dir.join("hello.txt");
    let out = dispatch(
        &rt,
        "mcp__fs__read_text_file",
        &serde_json::json!({"path": path}).to_string(),
    );
    assert_eq!(out["result"], "hi there", "{out}");

    // A non-MCP tool holding an MCP tool's name keeps it across a refresh.
    rt.deregister_tool("mcp__fs__write_file").unwrap();
    rt.register_tool(&host_spec("mcp__fs__write_file"), Arc::new(HostTool), None)
        .unwrap();
    let pid = status(&rt)["fs"]["pid"].as_i64().unwrap();
    std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(wait_until(
        Duration::from_secs(5),
        || status(&rt)["fs"]["state"] == "disconnected"
    ));
    // The next call reconnects, and the tool list is read again.
    let out = dispatch(
        &rt,
        "mcp__fs__list_directory",
        &serde_json::json!({"path": dir}).to_string(),
    );
    assert!(
        out["result"].as_str().unwrap().contains("hello.txt"),
        "{out}"
    );
    assert!(
        wait_until(Duration::from_secs(10), || {
            status(&rt)["fs"]["skipped_tools"] == serde_json::json!(["write_file"])
        }),
        "{}",
        status(&rt)
    );
    assert_eq!(dispatch(&rt, "mcp__fs__write_file", "{}"), "from the host");
    assert!(def_names(&rt).contains(&"mcp__fs__read_text_file".to_string()));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn list_changed_refreshes_the_toolset_and_env_is_minimal() {
    let Some(_) = server_js("server-everything") else {
        return;
    };
    let modules = modules_dir().canonicalize().unwrap();
    let fixture = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/changing-server.cjs");
    let cfg = serde_json::json!({"mcp_servers": {"changing": {"command": "node", "args": [fixture],
        "env": {"NODE_PATH": modules, "HT_FIXTURE_VAR": "home=${HOME}"}}}})
    .to_string();
    let rt = Runtime::new(&cfg).expect("runtime");
    let mcp = |rt: &Runtime| -> Vec<String> {
        def_names(rt)
            .into_iter()
            .filter(|n| n.starts_with("mcp__"))
            .collect()
    };
    assert_eq!(
        mcp(&rt),
        vec!["mcp__changing__first", "mcp__changing__swap"]
    );
    let generation = rt.generation();
    let events = Events::install(&rt);
    assert_eq!(
        dispatch(&rt, "mcp__changing__swap", "{}")["result"],
        "swapped"
    );
    assert!(
        wait_until(Duration::from_secs(10), || mcp(&rt)
            == vec!["mcp__changing__second", "mcp__changing__swap"]),
        "{:?}",
        mcp(&rt)
    );
    assert!(rt.generation() > generation);
    assert!(wait_until(Duration::from_secs(5), || !events
        .of_type("mcp.tools_changed")
        .is_empty()));
    let changed = events.of_type("mcp.tools_changed");
    assert_eq!(changed[0]["server"], "changing", "{changed:?}");
    assert_eq!(
        changed[0]["registered"],
        serde_json::json!(["mcp__changing__second"]),
        "{changed:?}"
    );
    assert_eq!(
        changed[0]["removed"],
        serde_json::json!(["mcp__changing__first"]),
        "{changed:?}"
    );
    let out = dispatch(&rt, "mcp__changing__second", "{}");
    let text = out["result"].as_str().unwrap().to_string();
    assert!(
        text.contains(&format!("env home={}", std::env::var("HOME").unwrap())),
        "{text}"
    );
    if std::env::var_os("CARGO_PKG_NAME").is_some() {
        assert!(
            text.ends_with("secret unset"),
            "the host's environment leaked: {text}"
        );
    }
    // A call to the vanished tool is an unknown tool now.
    let out = dispatch(&rt, "mcp__changing__first", "{}");
    assert!(
        out.to_string().contains("error") || out.to_string().contains("unknown"),
        "{out}"
    );
}
