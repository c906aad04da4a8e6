//! Requests an MCP server sends to its client, against the reference
//! `@modelcontextprotocol/server-everything` (its `trigger-sampling-request`
//! and `trigger-elicitation-request` tools): sampling goes to the host's
//! sampling handler (capped, rate-limited, refused without a handler),
//! elicitation to the host's approval handler (accept with content,
//! decline, no handler declines), and a server whose config turns them off
//! is not offered the capability.

use crate::mcp_common::*;
use hermes_runtime::Runtime;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

/// Records each request and answers it with a fixed text.
struct Host(Mutex<Vec<Value>>, String);

impl hermes_runtime::ApprovalSink for Host {
    fn ask(&self, request: &Arc<str>, id: u64) {
        self.0
            .lock()
            .unwrap()
            .push(serde_json::from_str(request).unwrap());
        hermes_runtime::approvals::respond(id, self.1.clone());
    }
}

fn host(answer: Value) -> Arc<Host> {
    Arc::new(Host(Mutex::new(Vec::new()), answer.to_string()))
}

fn text(v: &Value) -> String {
    v["result"]
        .as_str()
        .or(v["error"].as_str())
        .unwrap_or_default()
        .to_string()
}

const SAMPLE: &str = "mcp__everything__trigger-sampling-request";
const ELICIT: &str = "mcp__everything__trigger-elicitation-request";

#[test]
fn sampling_goes_to_the_host_capped_and_rate_limited() {
    let Some(js) = server_js("server-everything") else {
        return;
    };
    let rt = Runtime::new(&everything_config(
        &js,
        r#", "sampling": {"max_tokens_cap": 50, "max_rpm": 2}"#,
    ))
    .expect("runtime");
    assert!(def_names(&rt).contains(&SAMPLE.to_string()));

    // No handler: the server gets a refusal and the model reads it.
    let out = dispatch(&rt, SAMPLE, r#"{"prompt":"hi","maxTokens":100}"#);
    assert!(
        out["error"].is_string() || text(&out).contains("sampling handler"),
        "{out}"
    );

    let h = host(json!({
        "role": "assistant",
        "content": {"type": "text", "text": "the host's model says 42"},
        "model": "host-model-1", "stopReason": "endTurn"
    }));
    rt.set_sampling_sink(Some(h.clone())).unwrap();
    let out = dispatch(&rt, SAMPLE, r#"{"prompt":"what is 6x7","maxTokens":100}"#);
    assert!(text(&out).contains("the host's model says 42"), "{out}");
    assert!(text(&out).contains("host-model-1"), "{out}");
    let reqs = h.0.lock().unwrap().clone();
    assert_eq!(reqs.len(), 1, "{reqs:?}");
    let r = &reqs[0];
    assert_eq!(r["kind"], "sampling", "{r}");
    assert_eq!(r["server"], "everything", "{r}");
    assert_eq!(r["params"]["maxTokens"], 50, "capped: {r}");
    assert!(
        r["params"]["messages"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("what is 6x7"),
        "{r}"
    );

    // max_rpm 2: the no-handler refusal and the answered one count; the third is refused.
    let out = dispatch(&rt, SAMPLE, r#"{"prompt":"again"}"#);
    assert!(text(&out).contains("rate limit"), "{out}");
    assert_eq!(h.0.lock().unwrap().len(), 1, "the host was not asked");
}

#[test]
fn a_host_refusal_and_a_bad_answer_reach_the_server_as_errors() {
    let Some(js) = server_js("server-everything") else {
        return;
    };
    let rt = Runtime::new(&everything_config(&js, "")).expect("runtime");
    rt.set_sampling_sink(Some(host(json!({"error": "no budget left"}))))
        .unwrap();
    let out = dispatch(&rt, SAMPLE, r#"{"prompt":"x"}"#);
    assert!(text(&out).contains("no budget left"), "{out}");
    rt.set_sampling_sink(Some(host(json!({"text": "not a result"}))))
        .unwrap();
    let out = dispatch(&rt, SAMPLE, r#"{"prompt":"x"}"#);
    assert!(text(&out).contains("CreateMessageResult"), "{out}");
    // The connection survives both.
    let out = dispatch(&rt, "mcp__everything__echo", r#"{"message":"ok"}"#);
    assert_eq!(out["result"], "Echo: ok", "{out}");
}

#[test]
fn elicitation_goes_to_the_approval_handler() {
    let Some(js) = server_js("server-everything") else {
        return;
    };
    let rt = Runtime::new(&everything_config(&js, "")).expect("runtime");
    // No approval handler: declined, nothing made up.
    let out = dispatch(&rt, ELICIT, "{}");
    assert!(text(&out).contains("declined"), "{out}");

    let h = host(json!({"choice": "once", "content": {"name": "Ada Lovelace", "integer": 7}}));
    rt.set_approval_sink(false, Some(h.clone())).unwrap();
    let out = dispatch(&rt, ELICIT, "{}");
    let t = text(&out);
    assert!(t.contains("Name: Ada Lovelace"), "{out}");
    assert!(t.contains("Favorite Integer: 7"), "{out}");
    let reqs = h.0.lock().unwrap().clone();
    assert_eq!(reqs[0]["kind"], "elicitation", "{reqs:?}");
    assert_eq!(reqs[0]["server"], "everything");
    assert!(reqs[0]["requested_schema"]["properties"]["name"].is_object());

    rt.set_approval_sink(false, Some(host(json!({"choice": "deny"}))))
        .unwrap();
    let out = dispatch(&rt, ELICIT, "{}");
    assert!(text(&out).contains("declined"), "{out}");
}

#[test]
fn disabled_capabilities_are_not_offered() {
    let Some(js) = server_js("server-everything") else {
        return;
    };
    let rt = Runtime::new(&everything_config(
        &js,
        r#", "sampling": {"enabled": false}, "elicitation": {"enabled": false}"#,
    ))
    .expect("runtime");
    let names = def_names(&rt);
    assert!(!names.contains(&SAMPLE.to_string()), "{names:?}");
    assert!(!names.contains(&ELICIT.to_string()), "{names:?}");
    assert!(names.contains(&"mcp__everything__echo".to_string()));
}

#[test]
fn sampling_config_errors_name_the_key() {
    for (cfg, want) in [
        (json!({"max_tokens_cap": 0}), "sampling.max_tokens_cap"),
        (json!({"timeout": -1}), "sampling.timeout"),
        (json!({"bogus": 1}), "bogus"),
    ] {
        let c = json!({"mcp_servers": {"s": {"command": "true", "sampling": cfg}}});
        let e = Runtime::new(&c.to_string()).err().expect("an error");
        assert!(e.to_string().contains(want), "{e}");
        assert!(!e.to_string().contains('\n'));
    }
}

struct Events(Mutex<Vec<Value>>);

impl hermes_runtime::EventSink for Events {
    fn event(&self, json: &str) {
        self.0
            .lock()
            .unwrap()
            .push(serde_json::from_str(json).unwrap());
    }
}

#[test]
fn images_reach_the_host_as_attachments_not_the_model() {
    let Some(js) = server_js("server-everything") else {
        return;
    };
    let rt = Runtime::new(&everything_config(&js, "")).expect("runtime");
    let events = Arc::new(Events(Mutex::new(Vec::new())));
    rt.set_event_sink(Some(events.clone())).unwrap();
    let ctx = hermes_core::dispatch::CallContext {
        tool_call_id: "call_img".into(),
        task_id: "t1".into(),
        ..Default::default()
    };
    let out = rt
        .dispatch("mcp__everything__get-tiny-image", "{}", ctx)
        .unwrap();
    assert!(
        out.contains("[image: image/png") && out.contains("attachment 1 of this result"),
        "{out}"
    );
    assert!(out.len() < 2000, "no image data for the model: {out}");
    assert!(
        wait_until(std::time::Duration::from_secs(5), || events
            .0
            .lock()
            .unwrap()
            .iter()
            .any(|e| e["type"] == "mcp.attachment")),
        "no attachment event"
    );
    let evs = events.0.lock().unwrap().clone();
    let a = evs.iter().find(|e| e["type"] == "mcp.attachment").unwrap();
    assert_eq!(a["server"], "everything", "{a}");
    assert_eq!(a["tool"], "get-tiny-image", "{a}");
    assert_eq!(a["tool_call_id"], "call_img", "{a}");
    assert_eq!(a["task_id"], "t1", "{a}");
    assert_eq!(a["media"], "image", "{a}");
    assert_eq!(a["mimeType"], "image/png", "{a}");
    assert!(
        a["data"].as_str().unwrap().starts_with("iVBOR"),
        "a PNG: {a}"
    );
}
