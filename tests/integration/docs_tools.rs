//! `docs/tools.md`, the reference of every built-in tool's arguments, is
//! generated from the definitions the runtime sends to models, so it cannot
//! drift from them; `HT_BLESS=1 cargo test --test integration docs_tools` rewrites it.

use hermes_tools::Runtime;
use hermes_tools::runtime::config::BUILTIN_TOOLSETS;
use serde_json::Value;

fn type_of(p: &Value) -> String {
    match &p["type"] {
        Value::String(t) if t == "array" => match p["items"]["type"].as_str() {
            Some(i) => format!("array of {i}"),
            None => "array".into(),
        },
        Value::String(t) => t.clone(),
        Value::Array(ts) => ts
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" or "),
        _ if p.get("anyOf").is_some() || p.get("oneOf").is_some() => "one of several".into(),
        _ => "any".into(),
    }
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn render() -> String {
    let cfg = serde_json::json!({
        "builtin_toolsets": ["terminal", "file", "todo", "memory", "skills", "tool_search", "code_execution"],
        "data_dir": std::env::temp_dir().join("hermes-tools-docs-never-written"),
        // What this machine has must not change the reference.
        "code_execution": {"languages": ["python", "javascript", "bash"]},
    });
    let rt = Runtime::new(&cfg.to_string()).expect("a runtime with every built-in toolset");
    let defs: Value = serde_json::from_str(&rt.definitions("").expect("definitions")).unwrap();
    let toolsets: Value = serde_json::from_str(&rt.toolsets_json().unwrap()).unwrap();
    let toolset_of = |name: &str| -> String {
        toolsets
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| {
                t["name"]
                    .as_str()
                    .is_some_and(|n| BUILTIN_TOOLSETS.contains(&n))
            })
            .find(|t| {
                t["registered_tools"]
                    .as_array()
                    .is_some_and(|a| a.iter().any(|n| n == name))
            })
            .and_then(|t| t["name"].as_str())
            .unwrap_or("")
            .to_string()
    };
    let mut out = String::from(
        "# Built-in tools\n\n\
         Generated from the definitions the runtime sends to models (`tests/integration/docs_tools.rs`;\n\
         `HT_BLESS=1 cargo test --test integration docs_tools` rewrites it). Switch toolsets on with\n\
         `\"builtin_toolsets\"` in the runtime config: ",
    );
    out.push_str(
        &BUILTIN_TOOLSETS
            .iter()
            .map(|t| format!("`{t}`"))
            .collect::<Vec<_>>()
            .join(", "),
    );
    out.push_str(
        ".\nHow the file, todo, memory and skills tools behave (paths, approvals, limits,\n\
         what differs from the original): `docs/builtins.md`.\n",
    );
    rt.close();
    for d in defs.as_array().unwrap() {
        let f = &d["function"];
        let name = f["name"].as_str().unwrap();
        out.push_str(&format!("\n## `{name}`"));
        let ts = toolset_of(name);
        if !ts.is_empty() {
            out.push_str(&format!(" (toolset `{ts}`)"));
        }
        out.push_str("\n\n");
        out.push_str(f["description"].as_str().unwrap_or("").trim());
        out.push_str("\n\n");
        let params = &f["parameters"];
        let required: Vec<&str> = params["required"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        match params["properties"].as_object() {
            Some(props) if !props.is_empty() => {
                out.push_str("| argument | type | required | description |\n|---|---|---|---|\n");
                for (k, p) in props {
                    let mut desc = p["description"].as_str().unwrap_or("").to_string();
                    if let Some(e) = p["enum"].as_array() {
                        let vals: Vec<String> = e.iter().map(|v| format!("`{v}`")).collect();
                        desc.push_str(&format!(" One of {}.", vals.join(", ")));
                    }
                    if let Some(def) = p.get("default") {
                        desc.push_str(&format!(" Default `{def}`."));
                    }
                    out.push_str(&format!(
                        "| `{k}` | {} | {} | {} |\n",
                        type_of(p),
                        if required.contains(&k.as_str()) {
                            "yes"
                        } else {
                            ""
                        },
                        cell(desc.trim())
                    ));
                }
            }
            _ => out.push_str("No arguments.\n"),
        }
    }
    out
}

#[test]
fn docs_tools_md_matches_the_definitions() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/tools.md");
    let want = render();
    if std::env::var_os("HT_BLESS").is_some() {
        std::fs::write(path, &want).unwrap();
        return;
    }
    let have = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        have == want,
        "docs/tools.md is out of date with the built-in tools: run `HT_BLESS=1 cargo test --test integration docs_tools` and commit it"
    );
}
