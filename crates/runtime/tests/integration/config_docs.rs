//! Every config key is documented (issue 29): for each section of the
//! runtime config, the keys serde accepts (read from the error a config
//! with an unknown key gets: "unknown field ..., expected one of ...") must
//! each appear in backquotes or as a JSON key in the README or docs/.
//! A key added without documentation fails here, naming it.

use hermes_runtime::Runtime;
use serde_json::{Value, json};

/// The keys a section accepts: `config` has `"__undocumented__"` in it.
fn accepted(config: &Value) -> Vec<String> {
    let e = match Runtime::new(&config.to_string()) {
        Ok(rt) => {
            rt.close();
            panic!("an unknown key was accepted: {config}");
        }
        Err(e) => e.to_string(),
    };
    let Some(list) = e.split("expected one of ").nth(1) else {
        // A section of one key says "expected `name`".
        if let Some(one) = e.split("expected `").nth(1) {
            return vec![one.split('`').next().unwrap_or_default().to_string()];
        }
        panic!("no list of accepted keys in the error for {config}: {e}");
    };
    list.split('`')
        .enumerate()
        .filter(|(i, _)| i % 2 == 1)
        .map(|(_, k)| k.to_string())
        .collect()
}

fn docs() -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut text = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    for e in std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .flatten()
    {
        if e.path().extension().is_some_and(|x| x == "md") {
            text.push_str(&std::fs::read_to_string(e.path()).unwrap_or_default());
        }
    }
    text
}

#[test]
fn every_config_key_is_documented() {
    const K: &str = "__undocumented__";
    let bad = || json!({K: 1});
    let sections: Vec<(&str, Value)> = vec![
        ("(top level)", bad()),
        ("terminal", json!({"terminal": bad()})),
        ("terminal.docker", json!({"terminal": {"docker": bad()}})),
        ("terminal.ssh", json!({"terminal": {"ssh": bad()}})),
        (
            "terminal.apptainer",
            json!({"terminal": {"apptainer": bad()}}),
        ),
        ("terminal.daytona", json!({"terminal": {"daytona": bad()}})),
        ("terminal.modal", json!({"terminal": {"modal": bad()}})),
        ("terminal.swarm", json!({"terminal": {"swarm": bad()}})),
        (
            "terminal.sandbox_limits",
            json!({"terminal": {"sandbox_limits": bad()}}),
        ),
        ("terminal.network", json!({"terminal": {"network": bad()}})),
        (
            "terminal.secrets.NAME",
            json!({"terminal": {"secrets": {"T": bad()}}}),
        ),
        ("file", json!({"file": bad()})),
        ("memory", json!({"memory": bad()})),
        ("skills", json!({"skills": bad()})),
        ("code_execution", json!({"code_execution": bad()})),
        ("approvals", json!({"approvals": bad()})),
        ("dispatch", json!({"dispatch": bad()})),
        ("availability", json!({"availability": bad()})),
        ("limits", json!({"limits": bad()})),
        ("mcp_servers.NAME", json!({"mcp_servers": {"s": bad()}})),
        (
            "mcp_servers.NAME.oauth",
            json!({"mcp_servers": {"s": {"url": "http://127.0.0.1:1/mcp", "oauth": bad()}}}),
        ),
        (
            "mcp_servers.NAME.sampling",
            json!({"mcp_servers": {"s": {"command": "true", "sampling": bad()}}}),
        ),
    ];
    let text = docs();
    let mut missing = Vec::new();
    let mut seen = 0;
    for (name, cfg) in &sections {
        for key in accepted(cfg) {
            seen += 1;
            if !(text.contains(&format!("`{key}`"))
                || text.contains(&format!("\"{key}\""))
                || text.contains(&format!("`{key}:"))
                || text.contains(&format!("`{key}=")))
            {
                missing.push(format!("{name}.{key}"));
            }
        }
    }
    assert!(
        seen > 100,
        "only {seen} keys found: the error format changed?"
    );
    assert!(
        missing.is_empty(),
        "config keys documented nowhere (README.md, docs/*.md): {missing:?}"
    );
}
