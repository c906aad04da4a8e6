//! `ht_runtime_mcp_status` through the C API (no MCP server needed: the
//! servers' own tests live in crates/mcp-client/tests).

mod common;
use common::*;
use hermes_tools::Status;
use hermes_tools::ffi::api::*;

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
