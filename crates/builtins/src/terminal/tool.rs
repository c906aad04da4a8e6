//! The `terminal` and `process` tools: argument handling, guards, approval,
//! foreground runs and background starts, and the result shapes the model
//! sees.

use once_cell::sync::Lazy;
use regex::Regex;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::Terminal;
use super::output::{Capture, Streamer, exit_code_meaning};
use hermes_core::{Blocking, BlockingTool, CommandDecision, RunCtx, ToolOutput};
use hermes_exec::{Ended, PumpOpts, pump};
use hermes_exec::{Environment, SpawnRequest};

const TERMINAL_DESCRIPTION: &str = "Execute a shell command (bash) and return its output. \
Each call is a fresh process, but the working directory and exported variables persist between \
calls of the same task. Foreground commands must finish: stdin is closed (no prompts), and a timeout kills the \
whole process tree (exit code 124, output so far kept). For servers, watchers and anything long \
running use background=true (with notify_on_complete=true or watch_patterns), then the process \
tool to poll, read logs, wait, type input (pty=true) or kill. Output is capped (head and tail \
kept) with ANSI codes stripped and secrets redacted.";

const PROCESS_DESCRIPTION: &str = "Manage background processes started with \
terminal(background=true). Actions: list (this task's processes), poll (status and recent \
output), log (output lines; offset/limit, the last lines by default), wait (until exit, bounded by \
timeout), kill (the whole process tree), write (send data to stdin, pty processes), submit (data \
plus Enter), close (send EOF).";

pub fn terminal_spec() -> String {
    json!({
        "name": "terminal",
        "toolset": "terminal",
        "emoji": "💻",
        "max_result_size_chars": 100_000,
        "timeout": 3600,
        // Recommend the file tools only when the model has them.
        "conditional_description": [{
            "when_any_available": ["read_file", "search_files", "patch"],
            "text": " Prefer read_file, search_files and patch over cat, grep and sed."
        }],
        "schema": {
            "name": "terminal",
            "description": TERMINAL_DESCRIPTION,
            "parameters": {
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "The command to execute (bash)."},
                    "background": {"type": "boolean", "default": false,
                        "description": "Run in the background and return a process id at once (for servers, watchers, long jobs)."},
                    "timeout": {"type": "integer", "minimum": 1,
                        "description": "Timeout in seconds (default 180; foreground maximum 600)."},
                    "workdir": {"type": "string",
                        "description": "Working directory for this command (an absolute path; relative paths resolve against the task's current directory)."},
                    "pty": {"type": "boolean", "default": false,
                        "description": "Run on a pseudo-terminal (for programs that need a tty; input can then be typed with process write/submit)."},
                    "notify_on_complete": {"type": "boolean", "default": false,
                        "description": "Background only: notify when the process exits."},
                    "watch_patterns": {"type": "array", "items": {"type": "string"},
                        "description": "Background only: notify when an output line contains one of these strings (rate limited)."},
                    "outside_sandbox": {"type": "boolean", "default": false,
                        "description": "Sandbox backend only: run this command on the machine itself, outside the sandbox, after a person approves it. Use it only when the command failed because the sandbox denied something (the network, a write outside the workspace) and say what in justification."},
                    "justification": {"type": "string",
                        "description": "With outside_sandbox: what the command needs that the sandbox denies (for example \"needs network to download dependencies\", \"writes ~/.cache\"); shown to the person who approves."}
                },
                "required": ["command"]
            }
        }
    })
    .to_string()
}

pub fn process_spec() -> String {
    json!({
        "name": "process",
        "toolset": "terminal",
        "emoji": "⚙️",
        "schema": {
            "name": "process",
            "description": PROCESS_DESCRIPTION,
            "parameters": {
                "type": "object",
                "properties": {
                    "action": {"type": "string",
                        "enum": ["list", "poll", "log", "wait", "kill", "write", "submit", "close"]},
                    "session_id": {"type": "string", "description": "The process id (proc_...) from terminal(background=true)."},
                    "data": {"type": "string", "description": "Text for write/submit."},
                    "timeout": {"type": "integer", "minimum": 1, "description": "wait: seconds to wait at most."},
                    "offset": {"type": "integer", "minimum": 0, "description": "log: first line (0 = the last lines)."},
                    "limit": {"type": "integer", "minimum": 1, "description": "log: number of lines (default 200)."}
                },
                "required": ["action"]
            }
        }
    })
    .to_string()
}

fn err_result(message: &str, status: &str) -> ToolOutput {
    ToolOutput::error(
        json!({"output": "", "exit_code": -1, "error": message, "status": status}).to_string(),
    )
}

static WORKDIR_OK: Lazy<Regex> =
    Lazy::new(|| Regex::new(r"^[A-Za-z0-9/\\:_\-.~ +@=,]+$").expect("workdir regex"));

pub struct TerminalTool(pub Arc<Terminal>);

impl BlockingTool for TerminalTool {
    fn run(&self, args: Value, ctx: &RunCtx) -> ToolOutput {
        let term = &self.0;
        term.note_activity(&ctx.context.task_id);
        let Some(command) = args.get("command").and_then(Value::as_str) else {
            let got = args.get("command").map_or("nothing", json_type);
            return err_result(
                &format!("Invalid command: expected string, got {got}"),
                "error",
            );
        };
        if command.trim().is_empty() {
            return err_result("Invalid command: empty", "error");
        }
        if term.is_closed() {
            return err_result("The runtime is closing", "error");
        }
        let b = |k: &str| args.get(k).and_then(Value::as_bool).unwrap_or(false);
        let background = b("background");
        let pty = b("pty");
        let notify = b("notify_on_complete");
        let watch: Vec<String> = args
            .get("watch_patterns")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default();
        let timeout_arg = args.get("timeout").and_then(Value::as_u64);
        let max_fg = term.cfg.max_foreground_timeout;
        if !background {
            if let Some(t) = timeout_arg.filter(|&t| t > max_fg) {
                return ToolOutput::error(json!({"error": format!(
                    "Foreground timeout {t}s exceeds the maximum of {max_fg}s. Use background=true with notify_on_complete=true for long-running commands."
                )}).to_string());
            }
            if let Some(why) = super::guard::foreground_hazard(command) {
                return err_result(&why, "error");
            }
        }
        // Leaving the sandbox: only for the sandbox backend, and only
        // through the approval policy, which always asks and names why.
        let escalate = b("outside_sandbox");
        if escalate && term.backend.name() != "sandbox" {
            return err_result(
                &format!(
                    "outside_sandbox applies to the sandbox backend only; this command already runs {}",
                    term.backend.location()
                ),
                "error",
            );
        }
        // The approval gate: nothing runs unless it says so.
        let decision = if escalate {
            let why = args
                .get("justification")
                .and_then(Value::as_str)
                .unwrap_or("");
            self.0
                .approve_escalation(command, why, &ctx.context, &ctx.cancel)
        } else {
            self.0.approve(command, &ctx.context, &ctx.cancel)
        };
        if let CommandDecision::Deny { message, .. } = decision {
            return err_result(&message, "blocked");
        }
        let task_id = ctx.context.task_id.as_str();
        let workdir = match args.get("workdir").and_then(Value::as_str) {
            None | Some("") => None,
            Some(w) => {
                if let Some(bad) = w.chars().find(|c| !WORKDIR_OK.is_match(&c.to_string())) {
                    return err_result(
                        &format!(
                            "Blocked: workdir contains disallowed character '{bad}'. Use a simple filesystem path without shell metacharacters."
                        ),
                        "blocked",
                    );
                }
                let p = if let Some(rest) = w.strip_prefix('~') {
                    PathBuf::from(format!(
                        "{}{rest}",
                        std::env::var("HOME").unwrap_or_default()
                    ))
                } else {
                    PathBuf::from(w)
                };
                let p = if p.is_absolute() {
                    p
                } else {
                    term.task(task_id).cwd.join(p)
                };
                if !term.dir_exists(task_id, &p) {
                    return err_result(
                        &format!(
                            "workdir does not exist or is not a directory: {}",
                            p.display()
                        ),
                        "error",
                    );
                }
                Some(p)
            }
        };
        let local = hermes_exec::local::Local;
        let backend: &dyn Environment = if escalate { &local } else { &*term.backend };
        if background {
            run_background(
                term, backend, command, task_id, ctx, workdir, pty, notify, watch,
            )
        } else {
            let t = timeout_arg.unwrap_or(term.cfg.timeout).max(1);
            run_foreground(term, backend, command, task_id, ctx, workdir, pty, t)
        }
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[allow(clippy::too_many_arguments)]
fn run_foreground(
    term: &Arc<Terminal>,
    backend: &dyn Environment,
    command: &str,
    task_id: &str,
    ctx: &RunCtx,
    workdir: Option<PathBuf>,
    pty: bool,
    timeout_secs: u64,
) -> ToolOutput {
    let prep = term.prepare(task_id, command, workdir.as_deref(), pty, true);
    let req = SpawnRequest {
        script: &prep.script,
        cwd: &prep.cwd,
        env: &prep.env,
        pty,
        extra_rw: &prep.rw,
        task: super::ids::task_key(task_id),
        linger: false,
    };
    let sp = match backend.spawn(&req) {
        Ok(sp) => sp,
        Err(e) => {
            return err_result(
                &format!("Command execution failed: cannot start bash: {e}"),
                "error",
            );
        }
    };
    let live_key = if ctx.context.tool_call_id.is_empty() {
        format!("call_{}", super::ids::unique_suffix())
    } else {
        ctx.context.tool_call_id.clone()
    };
    let input = sp.input.map(Arc::new);
    term.live_add(&live_key, sp.pid, task_id, input.clone());
    let stream = term.cfg.stream_output && term.has_event_handler();
    let mut streamer = Streamer::new(stream, "terminal.output", &live_key, task_id);
    if stream {
        term.emit(
            json!({"type": "terminal.started", "id": live_key, "task_id": task_id,
            "command": command, "pid": sp.pid, "pty": pty}),
        );
    }
    let mut timeout = Duration::from_secs(timeout_secs);
    if let Some(d) = ctx.deadline {
        timeout = timeout.min(d.saturating_duration_since(Instant::now()));
    }
    let spill = term.cfg.spill_dir.as_deref().map(std::path::Path::new);
    let mut cap = Capture::new(term.cfg.max_output_chars, spill);
    let opts = PumpOpts {
        timeout: Some(timeout),
        cancel: Some(&ctx.cancel),
        grace: term.grace(),
        ..PumpOpts::default()
    };
    let mut carry: Vec<u8> = Vec::new();
    let (code, ended) = pump(sp.pid, &sp.output, backend, &opts, &mut |chunk| {
        cap.push(chunk);
        if stream {
            // keep a multi-byte character split across reads whole
            carry.extend_from_slice(chunk);
            let end = super::process::utf8_split(&carry);
            let text = super::output::strip_ansi(&String::from_utf8_lossy(&carry[..end]));
            carry.drain(..end);
            streamer.push(&text, &|e| term.emit(e));
        }
    });
    streamer.finish(&|e| term.emit(e));
    term.live_remove(&live_key);
    drop(sp.pty);
    if ended == Ended::Exited {
        term.adopt_capture(task_id, &prep);
    } else {
        term.discard_capture(&prep);
    }
    let cut = term
        .backend
        .remote()
        .and_then(|r| r.explain_exit(sp.pid, code));
    let (mut text, spilled) = cap.finish();
    match ended {
        Ended::TimedOut => {
            text.push_str(&format!(
                "\n[Command timed out after {}s: the whole process tree was killed; the output so far is above. Use background=true for long-running commands.]",
                timeout.as_secs_f64().round() as u64
            ));
        }
        Ended::Cancelled => text.push_str("\n[Command interrupted]"),
        Ended::Exited => {}
    }
    if let Some(msg) = &cut {
        text.push_str(&format!("\n[{msg}]"));
    }
    let mut v = json!({"output": text, "exit_code": code, "error": cut});
    if ended == Ended::TimedOut {
        v["timed_out"] = json!(true);
    }
    if let Some(m) = exit_code_meaning(command, code).filter(|_| ended == Ended::Exited) {
        v["exit_code_meaning"] = json!(m);
    }
    if let Some(p) = spilled {
        v["full_output_path"] = json!(p.display().to_string());
    }
    if stream {
        term.emit(json!({"type": "terminal.finished", "id": live_key, "task_id": task_id, "exit_code": code}));
    }
    ToolOutput::json(&v)
}

#[allow(clippy::too_many_arguments)]
fn run_background(
    term: &Arc<Terminal>,
    backend: &dyn Environment,
    command: &str,
    task_id: &str,
    ctx: &RunCtx,
    workdir: Option<PathBuf>,
    pty: bool,
    notify: bool,
    watch: Vec<String>,
) -> ToolOutput {
    if let Err(e) = term.procs.check_capacity() {
        return ToolOutput::error(json!({"output": "", "exit_code": -1, "error": e}).to_string());
    }
    let prep = term.prepare(task_id, command, workdir.as_deref(), pty, false);
    let req = SpawnRequest {
        script: &prep.script,
        cwd: &prep.cwd,
        env: &prep.env,
        pty,
        extra_rw: &prep.rw,
        task: super::ids::task_key(task_id),
        linger: true,
    };
    let sp = match backend.spawn(&req) {
        Ok(sp) => sp,
        Err(e) => {
            return ToolOutput::error(
                json!({"output": "", "exit_code": -1, "error": format!("Failed to start background process: {e}")})
                    .to_string(),
            );
        }
    };
    let pid = sp.pid;
    let cwd = workdir
        .as_deref()
        .unwrap_or(&term.task(task_id).cwd)
        .display()
        .to_string();
    // With both set, watching would be redundant noise: keep the completion notice.
    let (watch, watch_ignored) = if notify && !watch.is_empty() {
        (Vec::new(), true)
    } else {
        (watch, false)
    };
    let p = match term.procs.start(
        term.clone(),
        sp,
        command,
        task_id,
        &ctx.context.session_id,
        &cwd,
        notify,
        watch.clone(),
    ) {
        Ok(p) => p,
        Err(e) => {
            return ToolOutput::error(
                json!({"output": "", "exit_code": -1, "error": e}).to_string(),
            );
        }
    };
    // Started while close ran: close may have listed the processes before
    // this one joined them (it set `closed` first), so end it here.
    if term.is_closed() {
        p.kill(&**term);
        return err_result("The runtime is closing", "error");
    }
    let mut v = json!({
        "output": "Background process started",
        "session_id": p.id,
        "pid": pid,
        "exit_code": 0,
        "error": null,
    });
    if pty {
        v["pty"] = json!(true);
    }
    if notify {
        v["notify_on_complete"] = json!(true);
    }
    if !watch.is_empty() {
        v["watch_patterns"] = json!(watch);
    }
    if watch_ignored {
        v["watch_patterns_ignored"] =
            json!("notify_on_complete is set, so watch_patterns were dropped");
    }
    if !notify && watch.is_empty() {
        v["hint"] = json!(
            "Use process(action=\"wait\"|\"poll\"|\"log\", session_id=...) to follow it, or set notify_on_complete=true next time."
        );
    }
    ToolOutput::json(&v)
}

pub struct ProcessTool(pub Arc<Terminal>);

impl BlockingTool for ProcessTool {
    fn run(&self, args: Value, ctx: &RunCtx) -> ToolOutput {
        let term = &self.0;
        term.note_activity(&ctx.context.task_id);
        let action = args.get("action").and_then(Value::as_str).unwrap_or("");
        let task = ctx.context.task_id.as_str();
        let session = ctx.context.session_id.as_str();
        const ACTIONS: &str = "list, poll, log, wait, kill, write, submit, close";
        if action == "list" {
            return ToolOutput::json(&term.procs.list(task, session));
        }
        if !ACTIONS.split(", ").any(|a| a == action) {
            return ToolOutput::error(
                json!({"error": format!("Unknown process action: {action}. Use: {ACTIONS}")})
                    .to_string(),
            );
        }
        let id = match args.get("session_id") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            _ => {
                return ToolOutput::error(
                    json!({"error": format!("session_id is required for {action}")}).to_string(),
                );
            }
        };
        let Some(p) = term.procs.lookup(&id, task, session) else {
            return ToolOutput::error(
                json!({"status": "not_found", "error": format!("No process with ID {id}")})
                    .to_string(),
            );
        };
        let data = args.get("data").and_then(Value::as_str).unwrap_or("");
        let io_result = |r: Result<usize, String>| match r {
            Ok(n) => ToolOutput::json(&json!({"status": "ok", "bytes_written": n})),
            Err(e) => ToolOutput::error(json!({"status": "error", "error": e}).to_string()),
        };
        match action {
            "poll" => ToolOutput::json(&p.poll()),
            "log" => {
                let offset = args.get("offset").and_then(Value::as_u64).unwrap_or(0);
                let limit = args
                    .get("limit")
                    .and_then(Value::as_u64)
                    .unwrap_or(200)
                    .clamp(1, 10_000);
                ToolOutput::json(&p.log(offset, limit as usize))
            }
            "wait" => {
                let max = term.cfg.timeout.max(1);
                let asked = args.get("timeout").and_then(Value::as_u64).unwrap_or(max);
                let mut t = Duration::from_secs(asked.min(max));
                if let Some(d) = ctx.deadline {
                    t = t.min(d.saturating_duration_since(Instant::now()));
                }
                let mut v = p.wait(t, &ctx.cancel);
                if asked > max {
                    v["timeout_note"] =
                        json!(format!("Requested wait of {asked}s was clamped to {max}s"));
                }
                ToolOutput::json(&v)
            }
            "kill" => ToolOutput::json(&p.kill(&**term)),
            // Typing into a running shell or REPL runs commands too: the text
            // goes through the same approval gate before it is sent.
            "write" | "submit" if !data.trim().is_empty() => {
                if let CommandDecision::Deny { message, .. } =
                    self.0.approve(data, &ctx.context, &ctx.cancel)
                {
                    return ToolOutput::error(
                        json!({"status": "blocked", "error": message}).to_string(),
                    );
                }
                let nl = match (action, p.pty) {
                    ("write", _) => "",
                    (_, true) => "\r",
                    (_, false) => "\n",
                };
                io_result(p.write(format!("{data}{nl}").as_bytes()))
            }
            "write" => io_result(p.write(data.as_bytes())),
            "submit" => {
                let nl = if p.pty { "\r" } else { "\n" };
                io_result(p.write(format!("{data}{nl}").as_bytes()))
            }
            "close" => match p.close_input() {
                Ok(m) => ToolOutput::json(&json!({"status": "ok", "message": m})),
                Err(e) => ToolOutput::error(json!({"status": "error", "error": e}).to_string()),
            },
            _ => unreachable!("actions checked above"),
        }
    }
}

/// Register the terminal toolset (`terminal`, `process`) into `core`. The
/// returned terminal is the runtime's to keep (C functions reach it) and its
/// lifecycle (cleanup and shutdown) the runtime's to drive.
pub fn install(
    cfg: super::TerminalConfig,
    services: Arc<dyn hermes_core::ToolServices>,
    core: &hermes_core::core::Core,
) -> hermes_core::Result<Arc<Terminal>> {
    use hermes_core::registry::{build_entry, parse_spec};
    let term = Terminal::new(cfg, services, core.id, Some(core.engine.clone()))?;
    let terminal = build_entry(
        parse_spec(&terminal_spec())?,
        Arc::new(Blocking(Arc::new(TerminalTool(term.clone())))),
        None,
    )?;
    let process = build_entry(
        parse_spec(&process_spec())?,
        Arc::new(Blocking(Arc::new(ProcessTool(term.clone())))),
        None,
    )?;
    core.register_many(vec![terminal, process], false)?;
    Ok(term)
}
