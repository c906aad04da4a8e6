//! `ht_runtime_mcp_status` through the C API (no MCP server needed: the
//! servers' own tests live in crates/runtime/tests/mcp_*.rs).

use crate::common::*;
use hermes_tools::Status;
use hermes_tools::ffi::api::*;
use hermes_tools::ffi::approval::{
    ht_approval_request_json, ht_approval_respond, ht_runtime_set_sampling_handler,
};
use hermes_tools::host::ht_approval;

fn mcp_status(rt: &Rt) -> (Status, String) {
    let mut out = std::ptr::null_mut();
    let mut len = 0usize;
    let mut err = std::ptr::null_mut();
    let st = unsafe { ht_runtime_mcp_status(rt.0, &mut out, &mut len, &mut err) };
    if st != Status::Ok {
        return (st, err_text(err));
    }
    (st, take(out, len))
}

#[test]
fn mcp_status_reports_each_server() {
    let rt = new_rt("{}");
    assert_eq!(mcp_status(&rt), (Status::Ok, "{}".to_string()));

    let rt = new_rt(r#"{"mcp_servers": {"later": {"command": "node", "enabled": false}}}"#);
    let (st, text) = mcp_status(&rt);
    assert_eq!(st, Status::Ok);
    let v = json(&text);
    assert_eq!(v["later"]["state"], "disabled", "{v}");
    assert!(def_names(&rt, "{}").iter().all(|n| !n.starts_with("mcp__")));

    // NULL arguments.
    let mut err = std::ptr::null_mut();
    let st = unsafe {
        ht_runtime_mcp_status(rt.0, std::ptr::null_mut(), std::ptr::null_mut(), &mut err)
    };
    assert_eq!(st, Status::InvalidArgument);
    assert!(err_text(err).contains("out_json"));
    let mut out = std::ptr::null_mut();
    let st = unsafe {
        ht_runtime_mcp_status(
            std::ptr::null_mut(),
            &mut out,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    assert_eq!(st, Status::InvalidArgument);
}

#[test]
fn mcp_config_errors_name_the_key() {
    let e = try_new_rt(r#"{"mcp_servers": {"s": {"command": "x", "tools": {"inclde": []}}}}"#)
        .err()
        .expect("refused");
    assert!(e.1.contains("inclde"), "{e:?}");
    let e = try_new_rt(r#"{"mcp_servers": {"s": {"args": []}}}"#)
        .err()
        .expect("refused");
    assert!(e.1.contains("mcp_servers.s.command"), "{e:?}");
}

fn add_server(rt: &Rt, name: &str, cfg: &str) -> (Status, String) {
    let mut err = std::ptr::null_mut();
    let st = unsafe {
        ht_runtime_add_mcp_server(
            rt.0,
            name.as_ptr() as *const std::ffi::c_char,
            name.len(),
            cfg.as_ptr() as *const std::ffi::c_char,
            cfg.len(),
            &mut err,
        )
    };
    (st, err_text(err))
}

fn remove_server(rt: &Rt, name: &str) -> (Status, String) {
    let mut err = std::ptr::null_mut();
    let st = unsafe {
        ht_runtime_remove_mcp_server(
            rt.0,
            name.as_ptr() as *const std::ffi::c_char,
            name.len(),
            &mut err,
        )
    };
    (st, err_text(err))
}

#[test]
fn mcp_servers_are_added_and_removed_at_run_time() {
    let rt = new_rt("{}");
    let off = r#"{"command": "node", "enabled": false}"#;
    assert_eq!(add_server(&rt, "later", off).0, Status::Ok);
    assert_eq!(json(&mcp_status(&rt).1)["later"]["state"], "disabled");
    let (st, msg) = add_server(&rt, "later", off);
    assert_eq!(st, Status::Conflict, "{msg}");
    assert_eq!(
        add_server(&rt, "bad", r#"{"command": "x", "nope": 1}"#).0,
        Status::InvalidJson
    );
    assert_eq!(add_server(&rt, "", off).0, Status::InvalidArgument);
    assert_eq!(remove_server(&rt, "later").0, Status::Ok);
    assert_eq!(mcp_status(&rt).1, "{}");
    let (st, msg) = remove_server(&rt, "later");
    assert_eq!(st, Status::NotFound, "{msg}");
}

/// The C sampling handler: answers each request with a `CreateMessageResult`
/// that quotes the request's `maxTokens`.
unsafe extern "C" fn sampler(_data: *mut std::ffi::c_void, req: *mut ht_approval) {
    let mut len = 0usize;
    let p = unsafe { ht_approval_request_json(req, &mut len) };
    let body = unsafe { std::slice::from_raw_parts(p as *const u8, len) };
    let v = json(std::str::from_utf8(body).unwrap());
    let answer = serde_json::json!({
        "role": "assistant",
        "content": {"type": "text", "text": format!("C host, kind {}, max {}", v["kind"], v["params"]["maxTokens"])},
        "model": "c-host",
    })
    .to_string();
    let st = unsafe {
        ht_approval_respond(
            req,
            answer.as_ptr() as *const std::ffi::c_char,
            answer.len(),
        )
    };
    assert_eq!(st, Status::Ok);
}

#[test]
fn sampling_requests_reach_the_c_handler() {
    let js = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("build/tools/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if !js.is_file() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{} missing: scripts/setup.sh installs it",
            js.display()
        );
        eprintln!("SKIPPED: {} missing (run scripts/setup.sh)", js.display());
        return;
    }
    let rt = new_rt("{}");
    let mut err = std::ptr::null_mut();
    let st = unsafe {
        ht_runtime_set_sampling_handler(rt.0, Some(sampler), std::ptr::null_mut(), None, &mut err)
    };
    assert_eq!(st, Status::Ok, "{}", err_text(err));
    let cfg = serde_json::json!({
        "command": "node", "args": [js, "stdio"], "timeout": 20, "connect_timeout": 30,
        "sampling": {"max_tokens_cap": 64},
    })
    .to_string();
    let (st, msg) = add_server(&rt, "everything", &cfg);
    assert_eq!(st, Status::Ok, "{msg}");
    let out = json(&dispatch(
        &rt,
        "mcp__everything__trigger-sampling-request",
        r#"{"prompt":"hello","maxTokens":1000}"#,
    ));
    let text = out["result"].as_str().unwrap_or_default();
    assert!(
        text.contains(r#"C host, kind \"sampling\", max 64"#),
        "{out}"
    );
    // NULL runtime and removal.
    let st = unsafe {
        ht_runtime_set_sampling_handler(
            std::ptr::null_mut(),
            None,
            std::ptr::null_mut(),
            None,
            std::ptr::null_mut(),
        )
    };
    assert_eq!(st, Status::InvalidArgument);
    let st = unsafe {
        ht_runtime_set_sampling_handler(rt.0, None, std::ptr::null_mut(), None, &mut err)
    };
    assert_eq!(st, Status::Ok);
    let out = json(&dispatch(
        &rt,
        "mcp__everything__trigger-sampling-request",
        r#"{"prompt":"hello"}"#,
    ));
    assert!(out.to_string().contains("no sampling handler"), "{out}");
}
