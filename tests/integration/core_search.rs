//! The schema budget and `tool_search`, driven through the C API like a host
//! with many MCP tools: defer most definitions, let the model search, load.

use crate::common::*;

const P: &str =
    r#"{"type":"object","properties":{"channel":{"type":"string"},"text":{"type":"string"}}}"#;

fn host_with_many_tools() -> Rt {
    let rt = new_rt(r#"{"builtin_toolsets":["tool_search"]}"#);
    let services = [
        ("slack", "Send a message to a Slack channel", "send_message"),
        (
            "github",
            "Create an issue in a GitHub repository",
            "create_issue",
        ),
        (
            "jira",
            "Transition a Jira ticket to a new status",
            "transition_ticket",
        ),
        (
            "calendar",
            "Schedule a meeting on the calendar",
            "schedule_meeting",
        ),
    ];
    for (svc, desc, verb) in services {
        add(
            &rt,
            &format!(
                r#"{{"name":"{svc}_{verb}","toolset":"mcp-{svc}","schema":{{"description":"{desc}.","parameters":{P}}}}}"#
            ),
            echo,
        );
        for i in 0..60 {
            add(
                &rt,
                &format!(
                    r#"{{"name":"{svc}_op_{i:02}","toolset":"mcp-{svc}","schema":{{"description":"Operation {i} of {svc}.","parameters":{{"type":"object","properties":{{"id":{{"type":"string"}}}}}}}}}}"#
                ),
                echo,
            );
        }
    }
    add(&rt, &spec("read_notes", "core", P), echo);
    rt
}

fn names(defs: &serde_json::Value) -> Vec<String> {
    defs.as_array()
        .unwrap()
        .iter()
        .map(|t| {
            t["function"]["name"]
                .as_str()
                .or(t["name"].as_str())
                .unwrap()
                .to_string()
        })
        .collect()
}

#[test]
fn budget_defers_tools_and_tool_search_loads_them() {
    let rt = host_with_many_tools();
    let all = def_names(&rt, "");
    assert_eq!(
        all.len(),
        4 * 61 + 2,
        "every tool plus read_notes and tool_search"
    );
    let q = r#"{"defer":{"always_loaded_toolsets":["core"],"max_tools":12}}"#;
    let d = json(&definitions(&rt, q).unwrap());
    let got = names(&d);
    assert_eq!(got.len(), 12, "{got:?}");
    assert!(
        got.contains(&"read_notes".to_string()),
        "always-loaded toolset kept"
    );
    assert!(
        got.contains(&"tool_search".to_string()),
        "the search tool is kept"
    );
    let search = d
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "tool_search")
        .unwrap();
    let desc = search["function"]["description"].as_str().unwrap();
    assert!(
        desc.contains("234 more tools are available but not loaded"),
        "{desc}"
    );
    assert!(
        desc.contains("mcp-slack (") && desc.contains("mcp-jira ("),
        "{desc}"
    );

    // The model searches in words; the matching tool ranks first.
    let r = json(&dispatch(
        &rt,
        "tool_search",
        r#"{"query":"send a slack message","limit":3}"#,
    ));
    let found = names(&r["tools"]);
    assert_eq!(found[0], "slack_send_message", "{r}");
    assert!(found.len() <= 3);
    assert!(r["tools"][0]["function"]["parameters"]["properties"]["channel"].is_object());
    let r = json(&dispatch(
        &rt,
        "tool_search",
        r#"{"query":"schedule meeting"}"#,
    ));
    assert_eq!(names(&r["tools"])[0], "calendar_schedule_meeting");
    // Exact loading by name, and nothing for nonsense.
    let r = json(&dispatch(
        &rt,
        "tool_search",
        r#"{"query":"select:jira_transition_ticket,github_create_issue"}"#,
    ));
    assert_eq!(
        names(&r["tools"]),
        ["github_create_issue", "jira_transition_ticket"]
    );
    let r = json(&dispatch(&rt, "tool_search", r#"{"query":"zzqx"}"#));
    assert_eq!(r["matches"], 0);

    // The host keeps what was loaded: `loaded` pins it past the budget.
    let q2 = r#"{"defer":{"always_loaded_toolsets":["core"],"max_tools":12,"loaded":["slack_send_message"]}}"#;
    let got = names(&json(&definitions(&rt, q2).unwrap()));
    assert!(got.contains(&"slack_send_message".to_string()));
}

#[test]
fn search_answers_in_the_format_of_the_deferring_query_and_bytes_budget() {
    let rt = host_with_many_tools();
    let q = r#"{"format":"anthropic","defer":{"max_bytes":2000}}"#;
    let d = json(&definitions(&rt, q).unwrap());
    let text_len = definitions(&rt, q).unwrap().len();
    assert!(
        text_len <= 2000 + 600,
        "budget holds (tool_search's own text aside): {text_len}"
    );
    assert!(names(&d).contains(&"tool_search".to_string()));
    let r = json(&dispatch(&rt, "tool_search", r#"{"query":"github issue"}"#));
    assert_eq!(r["tools"][0]["name"], "github_create_issue", "{r}");
    assert!(
        r["tools"][0]["input_schema"].is_object(),
        "anthropic shape: {r}"
    );
    // Bad arguments are an error the model can read.
    let r = dispatch(&rt, "tool_search", r#"{"limit":2}"#);
    assert!(r.contains("query"), "{r}");
}

#[test]
fn without_defer_nothing_changes_and_unknown_keys_are_refused() {
    let rt = host_with_many_tools();
    assert_eq!(def_names(&rt, r#"{"format":"mcp"}"#).len(), 246);
    let e = definitions(&rt, r#"{"defer":{"max_tool":3}}"#).unwrap_err();
    assert!(e.1.contains("max_tool"), "{e:?}");
}
