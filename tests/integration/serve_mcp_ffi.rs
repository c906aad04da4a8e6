//! `ht_runtime_serve_mcp` (issue 15 item 8): a C host serves its own
//! callback tools to MCP clients. Over streamable HTTP against the official
//! Python SDK (build/venv, installed by scripts/setup.sh): list, call, the
//! host tool's `ht_call_progress` as MCP progress; over a pair of pipes with
//! raw JSON-RPC lines; bad options; stop by handle and by runtime free; the
//! Python and TypeScript SDKs connected at once, both told
//! `tools/list_changed` when the host registers a tool, then calling it.
//! HTTP is authenticated (issue 28): the clients pass the bearer token from
//! the file `ht_mcp_server_address`'s JSON names; a request without it is
//! refused. A host tool logs to (`ht_call_log`), asks (`ht_call_client_request`)
//! and answers content blocks (`mcp_content`) to the client that made its call.

use crate::common::*;
use hermes_tools::Status;
use hermes_tools::ffi::api::ht_runtime_serve_mcp;
use hermes_tools::ffi::progress::ht_call_progress;
use hermes_tools::ffi::serve::*;
use hermes_tools::host::ht_call;
use serde_json::Value;
use std::ffi::{CStr, c_char, c_void};
use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::Command;
use std::ptr::null_mut;

unsafe extern "C" fn add_numbers(_: *mut c_void, call: *mut ht_call) {
    let args: Value = serde_json::from_str(&args_of(call)).unwrap_or(Value::Null);
    let msg = "half way";
    // Answered right away: the server writes the progress before the result.
    unsafe { ht_call_progress(call, 1.0, 2.0, msg.as_ptr() as *const c_char, msg.len()) };
    let sum = args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0);
    respond(call, false, &format!(r#"{{"sum":{sum}}}"#));
}

const SPEC: &str = r#"{"name":"add_numbers","toolset":"host","schema":{"description":"Add two integers","parameters":{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}}}"#;

fn serve(rt: &Rt, options: &str) -> Result<*mut ht_mcp_server, (Status, String)> {
    let mut server = null_mut();
    let mut err = null_mut();
    let st = unsafe {
        ht_runtime_serve_mcp(
            rt.0,
            options.as_ptr() as *const c_char,
            options.len(),
            &mut server,
            &mut err,
        )
    };
    if st == Status::Ok {
        Ok(server)
    } else {
        Err((st, err_text(err)))
    }
}

fn wait(server: *mut ht_mcp_server, ms: u64) -> Status {
    let mut err = null_mut();
    let st = unsafe { ht_mcp_server_wait(server, ms, &mut err) };
    err_text(err);
    st
}

/// `ht_mcp_server_address`'s JSON.
fn address(server: *mut ht_mcp_server) -> Value {
    let text = unsafe { CStr::from_ptr(ht_mcp_server_address(server)) }
        .to_string_lossy()
        .into_owned();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// A runtime with `add_numbers`, served over loopback HTTP: it, the server,
/// the server's URL and its bearer token (read from the generated file).
fn served_over_http() -> (Rt, *mut ht_mcp_server, String, String) {
    let rt = new_rt("{}");
    add(&rt, SPEC, add_numbers);
    let server = serve(&rt, r#"{"transport":"http","address":"127.0.0.1:0"}"#).unwrap();
    let a = address(server);
    assert_eq!(a["auth"], "bearer", "{a}");
    let file = a["token_file"].as_str().expect("a generated token's file");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{file}");
    let token = std::fs::read_to_string(file).unwrap();
    (rt, server, a["url"].as_str().unwrap().to_string(), token)
}

/// A bare POST to the endpoint: the status line's code.
fn post_status(url: &str, headers: &str) -> u16 {
    use std::io::Read;
    let hostport = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string();
    let mut s = std::net::TcpStream::connect(&hostport).unwrap();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}"#;
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nhost: {hostport}\r\nconnection: close\r\naccept: application/json, text/event-stream\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{headers}\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out.split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

const CLIENT: &str = r#"
import anyio, json, sys
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

async def main():
    auth = create_mcp_http_client(headers={"Authorization": "Bearer " + sys.argv[2]})
    async with auth, streamable_http_client(sys.argv[1], http_client=auth) as (r, w, *_):
        async with ClientSession(r, w) as s:
            await s.initialize()
            names = [t.name for t in (await s.list_tools()).tools]
            seen = []
            async def on_progress(p, total, message):
                seen.append([p, total, message])
            res = await s.call_tool("add_numbers", {"a": 2, "b": "40"}, progress_callback=on_progress)
            bad = await s.call_tool("add_numbers", {"a": "x"})
            print(json.dumps({"names": names, "result": res.structured_content,
                              "progress": seen, "bad_is_error": bad.is_error,
                              "bad": "".join(c.text for c in bad.content)}))

anyio.run(main)
"#;

#[test]
fn a_host_tool_served_over_http_to_the_python_sdk() {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("build/venv/bin/python");
    let has_mcp = Command::new(&python)
        .args(["-c", "import mcp"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        has_mcp,
        "build/venv lacks the Python `mcp` SDK: run scripts/setup.sh (it installs it)"
    );
    let (_rt, server, url, token) = served_over_http();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
        "{url}"
    );
    assert_eq!(wait(server, 0), Status::Timeout, "serving");
    // The attack: no token, or a wrong one, is refused.
    assert_eq!(post_status(&url, ""), 401);
    assert_eq!(
        post_status(&url, "authorization: Bearer 0000000000000000000000\r\n"),
        401
    );
    assert_eq!(
        post_status(&url, &format!("authorization: Bearer {token}\r\n")),
        200
    );
    let out = Command::new(&python)
        .args(["-c", CLIENT, &url, &token])
        .output()
        .expect("python");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "client failed: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(v["names"], serde_json::json!(["add_numbers"]));
    // "40" repaired to 40 by the pipeline before the host handler ran.
    assert_eq!(v["result"]["sum"], 42);
    assert_eq!(v["progress"][0], serde_json::json!([1.0, 2.0, "half way"]));
    assert_eq!(v["bad_is_error"], true);
    assert!(
        v["bad"].as_str().unwrap().contains("Invalid arguments"),
        "{v}"
    );
    unsafe { ht_mcp_server_free(server) };
}

/// One JSON-RPC line out, the answer with that id back (notifications skipped).
fn rpc(w: &mut impl Write, r: &mut impl BufRead, id: u64, method: &str, params: Value) -> Value {
    let msg = serde_json::json!({"jsonrpc":"2.0","id":id,"method":method,"params":params});
    writeln!(w, "{msg}").unwrap();
    w.flush().unwrap();
    loop {
        let mut line = String::new();
        assert!(r.read_line(&mut line).unwrap() > 0, "server closed");
        let v: Value = serde_json::from_str(&line).unwrap();
        if v["id"] == id {
            return v;
        }
    }
}

#[test]
fn served_on_a_pair_of_pipes_and_stopped_by_runtime_free() {
    let rt = new_rt("{}");
    add(&rt, SPEC, add_numbers);
    let (to_server_r, mut to_server_w) = std::io::pipe().unwrap();
    let (from_server_r, from_server_w) = std::io::pipe().unwrap();
    let opts = format!(
        r#"{{"transport":"stdio","read_fd":{},"write_fd":{}}}"#,
        to_server_r.as_raw_fd(),
        from_server_w.as_raw_fd()
    );
    let server = serve(&rt, &opts).unwrap();
    // The library serves on duplicates: the host may close its own ends.
    drop(to_server_r);
    drop(from_server_w);
    assert_eq!(address(server), serde_json::json!({"transport": "stdio"}));
    let mut r = BufReader::new(from_server_r);
    let init = rpc(
        &mut to_server_w,
        &mut r,
        1,
        "initialize",
        serde_json::json!({"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}),
    );
    assert_eq!(
        init["result"]["serverInfo"]["name"], "hermes-tools",
        "{init}"
    );
    writeln!(
        to_server_w,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    let list = rpc(
        &mut to_server_w,
        &mut r,
        2,
        "tools/list",
        serde_json::json!({}),
    );
    assert_eq!(list["result"]["tools"][0]["name"], "add_numbers", "{list}");
    let call = rpc(
        &mut to_server_w,
        &mut r,
        3,
        "tools/call",
        serde_json::json!({"name":"add_numbers","arguments":{"a":1,"b":2}}),
    );
    assert_eq!(call["result"]["structuredContent"]["sum"], 3, "{call}");

    // Runtime free stops the server; the handle stays the host's to free.
    drop(rt);
    assert_eq!(
        wait(server, 5000),
        Status::Ok,
        "server ended with the runtime"
    );
    let mut rest = String::new();
    assert_eq!(r.read_line(&mut rest).unwrap(), 0, "pipe closed: {rest}");
    unsafe { ht_mcp_server_free(server) };
}

#[test]
fn bad_options_are_refused_with_the_fix() {
    let rt = new_rt("{}");
    for (opts, status, needle) in [
        (
            r#"{"transport":"carrier-pigeon"}"#,
            Status::InvalidArgument,
            "stdio",
        ),
        (
            r#"{"transport":"http","address":"0.0.0.0:0"}"#,
            Status::InvalidArgument,
            "loopback",
        ),
        (
            r#"{"transport":"http","address":"nowhere"}"#,
            Status::InvalidArgument,
            "IP:PORT",
        ),
        (
            r#"{"transprot":"http"}"#,
            Status::InvalidArgument,
            "unknown key",
        ),
        (
            r#"{"read_fd":987654,"write_fd":1}"#,
            Status::InvalidArgument,
            "not an open file descriptor",
        ),
        (
            r#"{"approvals":"nobody"}"#,
            Status::InvalidArgument,
            "client",
        ),
        ("[1]", Status::InvalidJson, "object"),
        (
            r#"{"transport":"http","auth":"maybe"}"#,
            Status::InvalidArgument,
            "auth",
        ),
        (
            r#"{"transport":"http","token":"short"}"#,
            Status::InvalidArgument,
            "at least 16",
        ),
        (
            r#"{"transport":"http","max_sessions":0}"#,
            Status::InvalidArgument,
            "max_sessions",
        ),
    ] {
        match serve(&rt, opts) {
            Ok(s) => {
                unsafe { ht_mcp_server_free(s) };
                panic!("{opts} accepted");
            }
            Err((st, msg)) => {
                assert_eq!(st, status, "{opts}: {msg}");
                assert!(msg.contains(needle), "{opts}: {msg}");
            }
        }
    }
    // NULL handles.
    assert!(unsafe { ht_mcp_server_address(std::ptr::null()) }.is_null());
    assert_eq!(wait(null_mut(), 0), Status::InvalidArgument);
    unsafe { ht_mcp_server_free(null_mut()) };
    // The host's own token: no file, and the token opens the endpoint.
    let h = serve(
        &rt,
        r#"{"transport":"http","token":"host-token-0123456789abcdef"}"#,
    )
    .unwrap();
    let a = address(h);
    assert_eq!(a["token_file"], Value::Null, "{a}");
    let url = a["url"].as_str().unwrap();
    assert_eq!(post_status(url, ""), 401);
    assert_eq!(
        post_status(url, "authorization: Bearer host-token-0123456789abcdef\r\n"),
        200
    );
    unsafe { ht_mcp_server_free(h) };
    // A second server on the same runtime while one serves; each stops alone.
    let a = serve(&rt, r#"{"transport":"http"}"#).unwrap();
    let b = serve(&rt, r#"{"transport":"http"}"#).unwrap();
    unsafe { ht_mcp_server_free(a) };
    assert_eq!(wait(b, 0), Status::Timeout);
    unsafe { ht_mcp_server_free(b) };
}

unsafe extern "C" fn mul_numbers(_: *mut c_void, call: *mut ht_call) {
    let args: Value = serde_json::from_str(&args_of(call)).unwrap_or(Value::Null);
    let product = args["a"].as_i64().unwrap_or(0) * args["b"].as_i64().unwrap_or(0);
    respond(call, false, &format!(r#"{{"product":{product}}}"#));
}

const MUL_SPEC: &str = r#"{"name":"mul_numbers","toolset":"host","schema":{"description":"Multiply two integers","parameters":{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}}}"#;

/// Python SDK client: list, call the host tool, say "listed", wait for
/// tools/list_changed, list again, call the tool the host added meanwhile.
const PY_WATCHER: &str = r#"
import anyio, json, sys
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

async def main():
    changed = anyio.Event()
    async def on_message(m):
        if getattr(getattr(m, "root", m), "method", "") == "notifications/tools/list_changed":
            changed.set()
    auth = create_mcp_http_client(headers={"Authorization": "Bearer " + sys.argv[2]})
    async with auth, streamable_http_client(sys.argv[1], http_client=auth) as (r, w, *_):
        async with ClientSession(r, w, message_handler=on_message) as s:
            await s.initialize()
            before = [t.name for t in (await s.list_tools()).tools]
            add = await s.call_tool("add_numbers", {"a": 20, "b": 22})
            print("listed", flush=True)
            with anyio.fail_after(20):
                await changed.wait()
            after = [t.name for t in (await s.list_tools()).tools]
            mul = await s.call_tool("mul_numbers", {"a": "6", "b": 7})
            print(json.dumps({"before": before, "after": after, "add": add.structured_content,
                              "mul": mul.structured_content, "mul_is_error": mul.is_error}), flush=True)

anyio.run(main)
"#;

/// The same with the TypeScript SDK (build/tools, installed by setup.sh).
const TS_WATCHER: &str = r#"
const path = require('node:path');
(async () => {
  const sdk = process.env.HT_SDK;
  const { Client } = await import(path.join(sdk, 'dist/esm/client/index.js'));
  const { StreamableHTTPClientTransport } = await import(path.join(sdk, 'dist/esm/client/streamableHttp.js'));
  const { ToolListChangedNotificationSchema } = await import(path.join(sdk, 'dist/esm/types.js'));
  const client = new Client({ name: 'ts-watcher', version: '1.0.0' }, { capabilities: {} });
  let changed;
  const seen = new Promise((resolve) => { changed = resolve; });
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed());
  const auth = { headers: { Authorization: 'Bearer ' + process.argv[2] } };
  await client.connect(new StreamableHTTPClientTransport(new URL(process.argv[1]), { requestInit: auth }));
  const before = (await client.listTools()).tools.map((t) => t.name);
  const add = await client.callTool({ name: 'add_numbers', arguments: { a: 40, b: 2 } });
  console.log('listed');
  const timer = setTimeout(() => { console.error('no tools/list_changed in 20 s'); process.exit(3); }, 20000);
  await seen;
  clearTimeout(timer);
  const after = (await client.listTools()).tools.map((t) => t.name);
  const mul = await client.callTool({ name: 'mul_numbers', arguments: { a: 6, b: '7' } });
  console.log(JSON.stringify({ before, after, add: add.structuredContent, mul: mul.structuredContent,
                               mul_is_error: mul.isError }));
  await client.close();
})().catch((e) => { console.error(e); process.exit(1); });
"#;

/// Issue 15's client tests through the C ABI: both official SDKs connected at
/// once to a host's served runtime call its host tool, see
/// `tools/list_changed` when the host registers another tool, and call that.
#[test]
fn both_sdks_see_a_host_tool_registered_while_connected() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = root.join("build/venv/bin/python");
    let sdk = root.join("build/tools/node_modules/@modelcontextprotocol/sdk");
    assert!(
        sdk.join("package.json").exists(),
        "{} is missing: run scripts/setup.sh (it installs the TypeScript MCP SDK)",
        sdk.display()
    );
    let (rt, server, url, token) = served_over_http();
    let spawn = |cmd: &mut Command| {
        cmd.stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("start client")
    };
    let mut clients = [
        spawn(Command::new(&python).args(["-c", PY_WATCHER, &url, &token])),
        spawn(
            Command::new("node")
                .args(["-e", TS_WATCHER, &url, &token])
                .env("HT_SDK", sdk.canonicalize().unwrap()),
        ),
    ];
    let mut outs: Vec<_> = clients
        .iter_mut()
        .map(|c| BufReader::new(c.stdout.take().unwrap()))
        .collect();
    // Both have listed and called before the host adds a tool.
    for (i, out) in outs.iter_mut().enumerate() {
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        if line.trim() != "listed" {
            let mut err = String::new();
            use std::io::Read;
            clients[i]
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            panic!("client {i} did not list: {line:?} {err}");
        }
    }
    add(&rt, MUL_SPEC, mul_numbers);
    for (i, (mut client, mut out)) in clients.into_iter().zip(outs).enumerate() {
        let mut rest = String::new();
        use std::io::Read;
        out.read_to_string(&mut rest).unwrap();
        let status = client.wait().unwrap();
        let mut err = String::new();
        client
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        assert!(status.success(), "client {i} failed: {rest}{err}");
        let v: Value = serde_json::from_str(rest.trim()).unwrap_or_else(|e| panic!("{e}: {rest}"));
        assert_eq!(v["before"], serde_json::json!(["add_numbers"]), "{i}: {v}");
        assert_eq!(v["add"]["sum"], 42, "{i}: {v}");
        let mut after: Vec<String> = serde_json::from_value(v["after"].clone()).unwrap();
        after.sort();
        assert_eq!(after, ["add_numbers", "mul_numbers"], "{i}: {v}");
        // "6" / "7" repaired to integers before the host handler ran.
        assert_eq!(v["mul"]["product"], 42, "{i}: {v}");
        assert_eq!(v["mul_is_error"], false, "{i}: {v}");
    }
    unsafe { ht_mcp_server_free(server) };
}

/// A host tool that logs to, and asks, the MCP client that made its call:
/// a form (elicitation, which the client declared) and a sampling request
/// (which it did not declare): what each gave, as its result.
unsafe extern "C" fn ask_user(_: *mut c_void, call: *mut ht_call) {
    use hermes_tools::ffi::client::{ht_call_client_request, ht_call_log};
    let (level, msg) = ("info", "asking the user");
    let logged = unsafe {
        ht_call_log(
            call,
            level.as_ptr() as *const c_char,
            level.len(),
            msg.as_ptr() as *const c_char,
            msg.len(),
        )
    };
    let loud = "loud";
    let bad_level = unsafe {
        ht_call_log(
            call,
            loud.as_ptr() as *const c_char,
            loud.len(),
            msg.as_ptr() as *const c_char,
            msg.len(),
        )
    };
    let ask = |req: &str| -> (Status, String) {
        let (mut out, mut len, mut err) = (null_mut(), 0usize, null_mut());
        let st = unsafe {
            ht_call_client_request(
                call,
                req.as_ptr() as *const c_char,
                req.len(),
                10_000,
                &mut out,
                &mut len,
                &mut err,
            )
        };
        if st == Status::Ok {
            (st, take(out, len))
        } else {
            (st, err_text(err))
        }
    };
    let form = ask(
        r#"{"method":"elicitation/create","params":{"message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string","default":"Ann"}}}}}"#,
    );
    let sampling = ask(
        r#"{"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":5}}"#,
    );
    let other = ask(r#"{"method":"tools/call","params":{"name":"x"}}"#);
    let out = serde_json::json!({
        "logged": logged as i32,
        "bad_level": bad_level as i32,
        "form": [form.0 as i32, form.1],
        "sampling": [sampling.0 as i32, sampling.1],
        "other": [other.0 as i32, other.1],
    });
    respond(call, false, &out.to_string());
}

unsafe extern "C" fn picture(_: *mut c_void, call: *mut ht_call) {
    respond(
        call,
        false,
        r#"{"content":[{"type":"text","text":"a dot"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}]}"#,
    );
}

#[test]
fn a_host_tool_logs_to_asks_and_answers_content_blocks_to_its_client() {
    let rt = new_rt("{}");
    add(
        &rt,
        r#"{"name":"ask_user","toolset":"host","schema":{"description":"Ask","parameters":{"type":"object","properties":{}}}}"#,
        ask_user,
    );
    add(
        &rt,
        r#"{"name":"picture","toolset":"host","mcp_content":true,"schema":{"description":"A picture","parameters":{"type":"object","properties":{}}}}"#,
        picture,
    );
    add(
        &rt,
        r#"{"name":"picture_text","toolset":"host","schema":{"description":"A picture as text","parameters":{"type":"object","properties":{}}}}"#,
        picture,
    );
    // Outside MCP the tool has no client to ask.
    let direct: Value = serde_json::from_str(&dispatch(&rt, "ask_user", "{}")).unwrap();
    assert_eq!(direct["form"][0], Status::Unsupported as i32, "{direct}");
    assert!(
        direct["form"][1]
            .as_str()
            .unwrap()
            .contains("not made by an MCP client"),
        "{direct}"
    );

    let (to_server_r, mut w) = std::io::pipe().unwrap();
    let (from_server_r, from_server_w) = std::io::pipe().unwrap();
    let opts = format!(
        r#"{{"transport":"stdio","read_fd":{},"write_fd":{}}}"#,
        to_server_r.as_raw_fd(),
        from_server_w.as_raw_fd()
    );
    let server = serve(&rt, &opts).unwrap();
    drop(to_server_r);
    drop(from_server_w);
    let mut r = BufReader::new(from_server_r);
    rpc(
        &mut w,
        &mut r,
        1,
        "initialize",
        serde_json::json!({"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"0"}}),
    );
    writeln!(
        w,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    rpc(
        &mut w,
        &mut r,
        2,
        "logging/setLevel",
        serde_json::json!({"level": "info"}),
    );

    // Content blocks only for the tool whose spec says so.
    let pic = rpc(
        &mut w,
        &mut r,
        3,
        "tools/call",
        serde_json::json!({"name":"picture","arguments":{}}),
    );
    let content = &pic["result"]["content"];
    assert_eq!(content[1]["type"], "image", "{pic}");
    assert_eq!(content[1]["data"], "iVBORw0KGgo=", "{pic}");
    let as_text = rpc(
        &mut w,
        &mut r,
        4,
        "tools/call",
        serde_json::json!({"name":"picture_text","arguments":{}}),
    );
    let content = as_text["result"]["content"].as_array().unwrap();
    assert_eq!(content.len(), 1, "{as_text}");
    assert_eq!(content[0]["type"], "text", "{as_text}");

    // The tool's log message, its form put to this client and answered.
    let call = serde_json::json!({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ask_user","arguments":{}}});
    writeln!(w, "{call}").unwrap();
    w.flush().unwrap();
    let (mut logs, mut forms) = (Vec::new(), Vec::new());
    let result = loop {
        let mut line = String::new();
        assert!(r.read_line(&mut line).unwrap() > 0, "server closed");
        let v: Value = serde_json::from_str(&line).unwrap();
        match v["method"].as_str() {
            Some("notifications/message") => logs.push(v["params"].clone()),
            Some("elicitation/create") => {
                forms.push(v["params"].clone());
                let answer = serde_json::json!({"jsonrpc":"2.0","id":v["id"],"result":{"action":"accept","content":{"name":"Bo"}}});
                writeln!(w, "{answer}").unwrap();
                w.flush().unwrap();
            }
            _ if v["id"] == 5 => break v,
            _ => {}
        }
    };
    let out: Value =
        serde_json::from_str(result["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(out["logged"], 0, "{out}");
    assert_eq!(out["bad_level"], Status::InvalidArgument as i32, "{out}");
    assert!(
        logs.iter().any(|l| l["level"] == "info"
            && l["data"] == "asking the user"
            && l["logger"] == "ask_user"),
        "{logs:?}"
    );
    assert_eq!(forms.len(), 1, "{forms:?}");
    assert_eq!(forms[0]["message"], "Your name?");
    assert_eq!(
        forms[0]["requestedSchema"]["properties"]["name"]["default"],
        "Ann"
    );
    assert_eq!(out["form"][0], 0, "{out}");
    let answer: Value = serde_json::from_str(out["form"][1].as_str().unwrap()).unwrap();
    assert_eq!(answer["action"], "accept");
    assert_eq!(answer["content"]["name"], "Bo");
    // Sampling was not declared: refused without asking; other methods never sent.
    assert_eq!(out["sampling"][0], Status::Unsupported as i32, "{out}");
    assert!(
        out["sampling"][1]
            .as_str()
            .unwrap()
            .contains("did not declare"),
        "{out}"
    );
    assert_eq!(out["other"][0], Status::InvalidArgument as i32, "{out}");
    drop(w);
    assert_eq!(wait(server, 5000), Status::Ok);
    unsafe { ht_mcp_server_free(server) };
}

/// What `ht_call_client_request` of `ask_forever` returned, and after how long.
static FOREVER: std::sync::Mutex<Option<(i32, String, std::time::Duration)>> =
    std::sync::Mutex::new(None);

unsafe extern "C" fn ask_forever(_: *mut c_void, call: *mut ht_call) {
    use hermes_tools::ffi::client::ht_call_client_request;
    let req = r#"{"method":"elicitation/create","params":{"message":"Never answered","requestedSchema":{"type":"object","properties":{}}}}"#;
    let (mut out, mut len, mut err) = (null_mut(), 0usize, null_mut());
    let started = std::time::Instant::now();
    let st = unsafe {
        ht_call_client_request(
            call,
            req.as_ptr() as *const c_char,
            req.len(),
            60_000,
            &mut out,
            &mut len,
            &mut err,
        )
    };
    let text = if st == Status::Ok {
        take(out, len)
    } else {
        err_text(err)
    };
    *FOREVER.lock().unwrap() = Some((st as i32, text, started.elapsed()));
    respond(call, false, "too late");
}

#[test]
fn a_client_request_ends_when_its_call_times_out() {
    let rt = new_rt("{}");
    add(
        &rt,
        r#"{"name":"ask_forever","toolset":"host","timeout":1,"schema":{"description":"Ask","parameters":{"type":"object","properties":{}}}}"#,
        ask_forever,
    );
    let (to_server_r, mut w) = std::io::pipe().unwrap();
    let (from_server_r, from_server_w) = std::io::pipe().unwrap();
    let opts = format!(
        r#"{{"transport":"stdio","read_fd":{},"write_fd":{}}}"#,
        to_server_r.as_raw_fd(),
        from_server_w.as_raw_fd()
    );
    let server = serve(&rt, &opts).unwrap();
    drop(to_server_r);
    drop(from_server_w);
    let mut r = BufReader::new(from_server_r);
    rpc(
        &mut w,
        &mut r,
        1,
        "initialize",
        serde_json::json!({"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"0"}}),
    );
    writeln!(
        w,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    // The form arrives and is never answered; the call times out after 1 s.
    let res = rpc(
        &mut w,
        &mut r,
        2,
        "tools/call",
        serde_json::json!({"name":"ask_forever","arguments":{}}),
    );
    assert_eq!(res["result"]["isError"], true, "{res}");
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let seen = loop {
        if let Some(s) = FOREVER.lock().unwrap().clone() {
            break s;
        }
        assert!(
            std::time::Instant::now() < until,
            "the tool still waits for the client after its call ended"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert_eq!(seen.0, Status::Cancelled as i32, "{seen:?}");
    assert!(seen.1.contains("the call ended"), "{seen:?}");
    assert!(seen.2 < std::time::Duration::from_secs(10), "{seen:?}");
    drop(w);
    assert_eq!(wait(server, 5000), Status::Ok);
    unsafe { ht_mcp_server_free(server) };
}
