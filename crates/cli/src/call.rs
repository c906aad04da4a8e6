//! `hermes-tools definitions` and `hermes-tools call`: a runtime built from a
//! config file, queried or called the way a host would.

use serde_json::{Value, json};
use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;
use std::sync::Arc;

use hermes_core::dispatch::CallContext;
use hermes_runtime::{ApprovalSink, EventSink, Runtime};

/// The runtime a config file describes (no file: defaults, nothing built in).
pub fn runtime(config: Option<&Path>) -> Result<Runtime, String> {
    let text = match config {
        Some(p) => std::fs::read_to_string(p)
            .map_err(|e| format!("cannot read config {}: {e}", p.display()))?,
        None => "{}".to_string(),
    };
    let where_ = |m: String| match config {
        Some(p) => format!("{}: {m}", p.display()),
        None => m,
    };
    // The MCP servers are added once the OAuth handler is in place, so a
    // server that needs a sign-in gets it on its first connection.
    let mut cfg: Value = serde_json::from_str(&text).map_err(|e| where_(e.to_string()))?;
    let servers = match cfg.as_object_mut().and_then(|o| o.remove("mcp_servers")) {
        Some(Value::Object(s)) => s,
        Some(_) => return Err(where_("mcp_servers: expected an object".into())),
        None => Default::default(),
    };
    let rt = Runtime::new(&cfg.to_string()).map_err(|e| where_(e.message))?;
    let _ = rt.set_oauth_sink(Some(Arc::new(crate::oauth::LoopbackBrowser)));
    for (name, server) in servers {
        rt.add_mcp_server(&name, &server.to_string())
            .map_err(|e| where_(format!("mcp_servers.{name}: {}", e.message)))?;
    }
    for (name, why) in failed_mcp_servers(&rt) {
        let why = if why.contains(&format!("'{name}'")) {
            why
        } else {
            format!("MCP server '{name}': {why}")
        };
        crate::out::warn(format!("{why} (its tools are missing)"));
    }
    Ok(rt)
}

/// The configured MCP servers whose first connection failed, with the
/// cause (`ht_runtime_mcp_status`'s `failed` state): shown on stderr by
/// every command, an error in `doctor`.
pub fn failed_mcp_servers(rt: &Runtime) -> Vec<(String, String)> {
    let status: Value = serde_json::from_str(&rt.mcp_status()).unwrap_or_default();
    let Some(servers) = status.as_object() else {
        return Vec::new();
    };
    servers
        .iter()
        .filter(|(_, s)| s["state"] == "failed")
        .map(|(n, s)| {
            (
                n.clone(),
                s["last_error"]
                    .as_str()
                    .unwrap_or("no cause recorded")
                    .to_string(),
            )
        })
        .collect()
}

pub fn definitions(
    config: Option<&Path>,
    format: &str,
    enabled: &[String],
    disabled: &[String],
) -> u8 {
    if !matches!(format, "openai" | "anthropic" | "mcp") {
        return crate::out::usage(format!(
            "definitions: unknown --format '{format}' (openai, anthropic or mcp)"
        ));
    }
    let rt = match runtime(config) {
        Ok(rt) => rt,
        Err(e) => return crate::out::fail(e),
    };
    let mut q = json!({ "format": format });
    if !enabled.is_empty() {
        q["enabled_toolsets"] = json!(enabled);
    }
    if !disabled.is_empty() {
        q["disabled_toolsets"] = json!(disabled);
    }
    let out = match rt.definitions(&q.to_string()) {
        Ok(text) => {
            // Pretty for people, compact JSON is one line away (`jq -c`).
            let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
            crate::out::say(serde_json::to_string_pretty(&v).unwrap_or_default());
            0
        }
        Err(e) => crate::out::fail(format!("definitions: {}", e.message)),
    };
    rt.close();
    out
}

/// Run the call on a thread of its own while this one waits for SIGINT,
/// SIGTERM or SIGHUP: `Err(signal)` when one came first (the caller closes
/// the runtime, which kills the command's whole tree, and exits 128+signal).
fn dispatch_until_signal(
    rt: &Runtime,
    tool: &str,
    args: &str,
    ctx: CallContext,
) -> Result<hermes_core::error::Result<String>, i32> {
    use tokio::signal::unix::{SignalKind, signal};
    let waiter = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build();
    let Ok(waiter) = waiter else {
        return Ok(rt.dispatch(tool, args, ctx));
    };
    // The handlers are in place before the command can start.
    let signals = waiter.block_on(async {
        Some((
            signal(SignalKind::interrupt()).ok()?,
            signal(SignalKind::terminate()).ok()?,
            signal(SignalKind::hangup()).ok()?,
        ))
    });
    let Some((mut int, mut term, mut hup)) = signals else {
        return Ok(rt.dispatch(tool, args, ctx));
    };
    std::thread::scope(|scope| {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let worker = scope.spawn(move || {
            let _ = tx.send(rt.dispatch(tool, args, ctx));
        });
        let outcome = waiter.block_on(async move {
            tokio::select! {
                r = rx => r.map_err(|_| 0),
                _ = int.recv() => Err(2),
                _ = term.recv() => Err(15),
                _ = hup.recv() => Err(1),
            }
        });
        match outcome {
            Ok(result) => Ok(result),
            Err(0) => Ok(Err(hermes_core::error::Error::closed())),
            Err(signal) => {
                // Closing kills the command; the worker's dispatch then
                // returns. One stuck before its command started (a host-side
                // step that never ends) does not keep the CLI: after 2 s it
                // exits anyway, everything it started being already gone.
                rt.close();
                let until = std::time::Instant::now() + std::time::Duration::from_secs(2);
                while !worker.is_finished() && std::time::Instant::now() < until {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                if !worker.is_finished() {
                    std::process::exit(128 + signal);
                }
                let _ = worker.join();
                Err(signal)
            }
        }
    })
}

/// Asks on the terminal; answers deny when nothing can be read.
struct TerminalPrompt;

impl ApprovalSink for TerminalPrompt {
    fn ask(&self, request: &Arc<str>, id: u64) {
        let req: Value = serde_json::from_str(request).unwrap_or(Value::Null);
        let command = req["untrusted_command_text"].as_str().unwrap_or("?");
        eprintln!(
            "\napproval needed to run: {}",
            hermes_runtime::approvals::display_text(command)
        );
        for r in req["reasons"].as_array().into_iter().flatten() {
            eprintln!(
                "  {} ({}): {}",
                hermes_runtime::approvals::display_text(r["rule"].as_str().unwrap_or("")),
                hermes_runtime::approvals::display_text(r["tier"].as_str().unwrap_or("")),
                hermes_runtime::approvals::display_text(r["description"].as_str().unwrap_or(""))
            );
        }
        eprint!("run it? [o]nce, [s]ession, [d]eny (default deny): ");
        let _ = std::io::stderr().flush();
        let mut line = String::new();
        let _ = std::io::stdin().lock().read_line(&mut line);
        let choice = match line.trim().to_ascii_lowercase().as_str() {
            "o" | "once" | "y" | "yes" => "once",
            "s" | "session" => "session",
            _ => "deny",
        };
        hermes_runtime::approvals::respond(id, json!({ "choice": choice }).to_string());
    }
}

/// Live output of the command and refused connections of the sandbox on
/// standard error (progress for people).
struct Progress;

impl EventSink for Progress {
    fn event(&self, json: &str) {
        let Ok(v) = serde_json::from_str::<Value>(json) else {
            return;
        };
        if v["type"] == "network.refused" {
            eprintln!(
                "network: refused {}:{} ({}): {}",
                v["host"].as_str().unwrap_or("?"),
                v["port"],
                v["rule"].as_str().unwrap_or("?"),
                v["message"].as_str().unwrap_or("")
            );
            return;
        }
        if let Some(data) = v["data"].as_str() {
            eprint!("{data}");
            if !data.ends_with('\n') {
                eprintln!();
            }
        }
    }
}

pub fn call(config: Option<&Path>, as_json: bool, tool: &str, args: &str) -> u8 {
    if !serde_json::from_str::<Value>(args).is_ok_and(|v| v.is_object()) {
        return crate::out::usage(format!("call: ARGS_JSON must be a JSON object, got {args}"));
    }
    // Inside an execute_code run: the call goes to the run's channel.
    if config.is_none()
        && let Some(sock) = std::env::var_os(SOCKET_VAR).filter(|s| !s.is_empty())
    {
        return match call_over_socket(Path::new(&sock), tool, args) {
            Ok(text) => print_result(as_json, tool, text),
            Err(e) => crate::out::fail(format!("call {tool}: {e}")),
        };
    }
    let rt = match runtime(config) {
        Ok(rt) => rt,
        Err(e) => return crate::out::fail(e),
    };
    // Approval: a person at a terminal is asked; anything else fails closed.
    if std::io::stdin().is_terminal() {
        let _ = rt.set_approval_sink(false, Some(Arc::new(TerminalPrompt)));
    }
    if std::io::stderr().is_terminal() {
        let _ = rt.set_event_sink(Some(Arc::new(Progress)));
    }
    let ctx = CallContext {
        task_id: "cli".into(),
        session_id: "cli".into(),
        interactive: Some(std::io::stdin().is_terminal()),
        ..CallContext::default()
    };
    let result = match dispatch_until_signal(&rt, tool, args, ctx) {
        Ok(result) => result,
        Err(signal) => {
            // The command and everything it started end before we do.
            rt.close();
            eprintln!("hermes-tools: interrupted by signal {signal}; the command was killed");
            return 128 + signal as u8;
        }
    };
    rt.close();
    let text = match result {
        Ok(t) => t,
        Err(e) => return crate::out::fail(format!("call {tool}: {}", e.message)),
    };
    print_result(as_json, tool, text)
}

/// Print a tool's result text (pretty JSON, or `{"tool","status","result"}`
/// with `--json`); 1 when it is an error.
fn print_result(as_json: bool, tool: &str, text: String) -> u8 {
    let parsed: Value = serde_json::from_str(&text).unwrap_or(Value::String(text.clone()));
    let failed = parsed.get("error").is_some_and(|e| !e.is_null())
        || parsed
            .get("status")
            .and_then(Value::as_str)
            .is_some_and(|s| s != "ok" && s != "success");
    if as_json {
        let status = if failed { "error" } else { "ok" };
        crate::out::say(format!(
            "{}",
            json!({ "tool": tool, "status": status, "result": parsed })
        ));
    } else {
        match &parsed {
            Value::String(s) => crate::out::say(s),
            v => crate::out::say(serde_json::to_string_pretty(v).unwrap_or(text)),
        }
    }
    u8::from(failed)
}

/// The environment variable an execute_code run sets to its channel.
const SOCKET_VAR: &str = "HERMES_TOOLS_SOCKET";

/// One tool call over an execute_code run's channel (MCP, newline-delimited
/// JSON-RPC on a Unix socket): initialize, then tools/call. The result's
/// text as the tool answered it.
fn call_over_socket(sock: &Path, tool: &str, args: &str) -> Result<String, String> {
    use std::os::unix::net::UnixStream;
    let conn = UnixStream::connect(sock)
        .map_err(|e| format!("cannot reach the run's channel {}: {e}", sock.display()))?;
    let mut w = conn.try_clone().map_err(|e| e.to_string())?;
    let mut r = std::io::BufReader::new(conn);
    let mut rpc = |id: u64, method: &str, params: Value| -> Result<Value, String> {
        if method != "initialize" {
            // The handshake's end, before the first request after it.
            writeln!(
                w,
                r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
            )
            .map_err(|e| format!("channel: {e}"))?;
        }
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(w, "{msg}").map_err(|e| format!("channel: {e}"))?;
        loop {
            let mut line = String::new();
            if r.read_line(&mut line)
                .map_err(|e| format!("channel: {e}"))?
                == 0
            {
                return Err("the run's channel closed (the run ended)".into());
            }
            let Ok(v) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if v.get("id") != Some(&json!(id)) {
                continue;
            }
            if let Some(e) = v.get("error") {
                return Err(e["message"].as_str().unwrap_or("error").to_string());
            }
            return Ok(v.get("result").cloned().unwrap_or(Value::Null));
        }
    };
    rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "hermes-tools call", "version": env!("CARGO_PKG_VERSION")}}),
    )?;
    let args: Value = serde_json::from_str(args).map_err(|e| e.to_string())?;
    let res = rpc(2, "tools/call", json!({"name": tool, "arguments": args}))?;
    let text: String = res["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["type"] == "text")
        .filter_map(|c| c["text"].as_str())
        .collect();
    Ok(text)
}
