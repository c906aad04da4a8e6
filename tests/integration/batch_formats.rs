//! Batches answer in the model's own shape (issue 11): `answer_format`
//! `openai` (`role: tool` messages), `openai_responses`
//! (`function_call_output` items), `anthropic` (`tool_result` blocks with
//! `is_error`), `mcp` (`CallToolResult` with `isError` and
//! `structuredContent`) and `auto`; the default shape is unchanged.

use crate::common::*;
use hermes_tools::Status;
use hermes_tools::ffi::api::*;
use hermes_tools::host::ht_call;
use serde_json::{Value, json};
use std::ffi::{c_char, c_void};

unsafe extern "C" fn fails(_: *mut c_void, call: *mut ht_call) {
    respond(call, true, "no such file");
}

fn batch(rt: &Rt, calls: &str, ctx: &str) -> Result<Value, (Status, String)> {
    let mut out = std::ptr::null_mut();
    let mut n = 0;
    let mut err = std::ptr::null_mut();
    let (cp, cn) = ctx_arg(ctx);
    let st = unsafe {
        ht_runtime_dispatch_batch(
            rt.0,
            calls.as_ptr() as *const c_char,
            calls.len(),
            cp,
            cn,
            &mut out,
            &mut n,
            &mut err,
        )
    };
    if st != Status::Ok {
        return Err((st, err_text(err)));
    }
    Ok(json(&take(out, n)))
}

fn rt() -> Rt {
    let rt = new_rt("{}");
    add(&rt, &spec("echo", "t", "{}"), echo);
    add(&rt, &spec("fails", "t", "{}"), fails);
    rt
}

const OPENAI: &str = r#"[
  {"id":"c1","type":"function","function":{"name":"echo","arguments":"{\"a\":1}"}},
  {"id":"c2","type":"function","function":{"name":"fails","arguments":"{}"}}
]"#;
const ANTHROPIC: &str = r#"[
  {"type":"tool_use","id":"toolu_1","name":"echo","input":{"a":1}},
  {"type":"tool_use","id":"toolu_2","name":"fails","input":{}}
]"#;
const MCP: &str = r#"[{"name":"echo","arguments":{"a":1}},{"name":"fails","arguments":{}}]"#;

#[test]
fn the_default_shape_is_unchanged() {
    let rt = rt();
    let r = batch(&rt, OPENAI, "").unwrap();
    assert_eq!(
        r[0],
        json!({"tool_call_id":"c1","name":"echo","is_error":false,"content":"{\"a\":1}"})
    );
    assert_eq!(r[1]["is_error"], true);
    assert_eq!(r[1]["tool_call_id"], "c2");
}

#[test]
fn openai_answers_are_tool_messages() {
    let rt = rt();
    let r = batch(&rt, OPENAI, r#"{"answer_format":"openai"}"#).unwrap();
    assert_eq!(
        r[0],
        json!({"role":"tool","tool_call_id":"c1","content":"{\"a\":1}"})
    );
    assert_eq!(r[1]["role"], "tool");
    assert!(r[1]["content"].as_str().unwrap().contains("no such file"));
    // The assistant message itself, forwarded as it came.
    let msg = format!(
        r#"{{"role":"assistant","content":null,"tool_calls":{OPENAI},"answer_format":"openai"}}"#
    );
    assert_eq!(batch(&rt, &msg, "").unwrap(), r);
}

#[test]
fn anthropic_answers_are_tool_result_blocks_with_is_error() {
    let rt = rt();
    let r = batch(&rt, ANTHROPIC, r#"{"answer_format":"anthropic"}"#).unwrap();
    assert_eq!(
        r[0],
        json!({"type":"tool_result","tool_use_id":"toolu_1","content":"{\"a\":1}","is_error":false})
    );
    assert_eq!(r[1]["tool_use_id"], "toolu_2");
    assert_eq!(r[1]["is_error"], true);
    // An assistant message's content: text blocks are skipped, tool_use blocks run.
    let msg = r#"{"role":"assistant","answer_format":"anthropic","content":[
      {"type":"text","text":"Let me check."},
      {"type":"tool_use","id":"toolu_1","name":"echo","input":{"a":1}}]}"#;
    let m = batch(&rt, msg, "").unwrap();
    assert_eq!(m.as_array().unwrap().len(), 1);
    assert_eq!(m[0], r[0]);
}

#[test]
fn mcp_answers_are_call_tool_results() {
    let rt = rt();
    let r = batch(&rt, MCP, r#"{"answer_format":"mcp"}"#).unwrap();
    assert_eq!(
        r[0],
        json!({"content":[{"type":"text","text":"{\"a\":1}"}],"isError":false,"structuredContent":{"a":1}})
    );
    assert_eq!(r[1]["isError"], true);
    assert!(r[1].get("structuredContent").is_none());
    assert!(
        r[1]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("no such file")
    );
}

#[test]
fn auto_answers_each_call_in_its_own_shape() {
    let rt = rt();
    let mixed = r#"{"answer_format":"auto","calls":[
      {"id":"c1","type":"function","function":{"name":"echo","arguments":"{}"}},
      {"type":"tool_use","id":"toolu_1","name":"echo","input":{}},
      {"type":"function_call","id":"fc_1","call_id":"call_9","name":"echo","arguments":"{}"},
      {"name":"echo","arguments":{}}]}"#;
    let r = batch(&rt, mixed, "").unwrap();
    assert_eq!(r[0]["role"], "tool");
    assert_eq!(r[1]["type"], "tool_result");
    assert_eq!(
        r[2],
        json!({"type":"function_call_output","call_id":"call_9","output":"{}"})
    );
    assert_eq!(r[3]["isError"], false);
}

#[test]
fn a_bad_answer_format_is_a_clear_error() {
    let rt = rt();
    let (st, msg) = batch(&rt, OPENAI, r#"{"answer_format":"xml"}"#).unwrap_err();
    assert_eq!(st, Status::InvalidArgument);
    assert!(
        msg.contains("answer_format") && msg.contains("xml"),
        "{msg}"
    );
    assert!(!msg.contains('\n'));
    let (st, _) = batch(&rt, r#"{"answer_format":"openai"}"#, "").unwrap_err();
    assert_eq!(st, Status::InvalidJson);
}
