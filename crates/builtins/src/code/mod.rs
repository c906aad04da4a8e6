//! The `code_execution` toolset: `execute_code` runs a script (Python by
//! default, JavaScript or bash) in the task's environment, and the script
//! calls the runtime's tools over a private per-run channel (channel.rs)
//! through generated stubs (stubs.rs) or `hermes-tools call`. Ten searches
//! and edits become one model turn.
//!
//! Kept from the original: the name, the result shape (`status`, `output`,
//! `tool_calls_made`, `duration_seconds`, `error`), the tools a script may
//! call (web_search, web_extract, read_file, write_file, search_files,
//! patch, terminal in the foreground, those of them this runtime has), the
//! limits (300 s, 50 tool calls, 50 KB of output with head and tail kept
//! and the whole saved to a file), and the helpers of the Python module.
//! Each inner call goes through the whole dispatch pipeline in the task's
//! context, with `origin` naming the script for hooks and approval.

pub mod channel;
mod relay;
pub mod stubs;

use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use crate::terminal::Terminal;
use hermes_core::error::Result;
use hermes_core::registry::{ToolEntry, build_entry, parse_spec};
use hermes_core::{Blocking, BlockingTool, Core, RunCtx, ToolOutput};
use hermes_exec::{Ended, PumpOpts, SpawnRequest, pump};

use channel::{Channel, RunSpec};
use stubs::StubTool;

/// The tools a script may call (the original's list), in the order the
/// description shows them, each with the line it shows.
pub const ALLOWED_TOOLS: &[(&str, &str)] = &[
    (
        "web_search",
        "  web_search(query, limit=5) -> {\"data\": {\"web\": [{\"url\", \"title\", \"description\"}, ...]}}",
    ),
    (
        "web_extract",
        "  web_extract(urls, char_limit=None) -> {\"results\": [{\"url\", \"title\", \"content\", \"error\"}, ...]} (content is markdown)",
    ),
    (
        "read_file",
        "  read_file(path, offset=1, limit=...) -> {\"content\": \"...\", \"total_lines\": N, ...} (lines are 1-indexed)",
    ),
    (
        "write_file",
        "  write_file(path, content) -> dict (always overwrites the whole file)",
    ),
    (
        "search_files",
        "  search_files(pattern, target=\"content\", path=\".\", file_glob=None, limit=50) -> {\"matches\": [...]} (target \"files\" finds files by name)",
    ),
    (
        "patch",
        "  patch(path, old_string, new_string, replace_all=False) -> dict (replaces old_string with new_string in the file)",
    ),
    (
        "terminal",
        "  terminal(command, timeout=None, workdir=None) -> {\"output\": \"...\", \"exit_code\": N} (foreground only)",
    ),
];

/// The `code_execution` config section.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CodeConfig {
    /// Wall time of a run in seconds (default 300).
    pub timeout: u64,
    /// Tool calls a run may make (default 50).
    pub max_tool_calls: usize,
    /// Output returned inline, in bytes (default 50000; head 40 %, tail 60 %).
    pub max_output_bytes: usize,
    /// Where the full output of a truncated run is saved (default
    /// `<data_dir>/cache/exec`).
    pub spill_dir: Option<String>,
    /// The `hermes-tools` program bash scripts call (default: next to the
    /// running program, else on PATH).
    pub cli_path: Option<String>,
    /// The languages offered (`python`, `javascript`, `bash`); default:
    /// those whose interpreter is on this machine (and, for bash, the
    /// `hermes-tools` program).
    pub languages: Option<Vec<String>>,
}

impl Default for CodeConfig {
    fn default() -> Self {
        CodeConfig {
            timeout: 300,
            max_tool_calls: 50,
            max_output_bytes: 50_000,
            spill_dir: None,
            cli_path: None,
            languages: None,
        }
    }
}

/// The whole output saved is capped (a runaway print loop must not fill the disk).
const MAX_SPILL_BYTES: u64 = 5_000_000;

/// A language a script may be written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    Python,
    JavaScript,
    Bash,
}

impl Lang {
    fn parse(s: &str) -> Option<Lang> {
        match s.to_ascii_lowercase().as_str() {
            "python" | "python3" | "py" => Some(Lang::Python),
            "javascript" | "js" | "node" => Some(Lang::JavaScript),
            "bash" | "sh" | "shell" => Some(Lang::Bash),
            _ => None,
        }
    }
    fn name(self) -> &'static str {
        match self {
            Lang::Python => "python",
            Lang::JavaScript => "javascript",
            Lang::Bash => "bash",
        }
    }
    fn program(self) -> &'static str {
        match self {
            Lang::Python => "python3",
            Lang::JavaScript => "node",
            Lang::Bash => "bash",
        }
    }
}

/// The interpreters found on this machine (local and sandbox backends run
/// this machine's programs; the sandbox hides the home folder, so a
/// program found only there does not count for it).
fn interpreters(sandboxed: bool) -> Vec<Lang> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    [Lang::Python, Lang::JavaScript, Lang::Bash]
        .into_iter()
        .filter(|l| {
            let path = std::env::var("PATH").unwrap_or_default();
            std::env::split_paths(&path)
                .chain(["/usr/bin", "/usr/local/bin", "/bin"].map(PathBuf::from))
                .map(|d| d.join(l.program()))
                .filter(|p| p.is_file())
                .any(|p| !sandboxed || home.as_ref().is_none_or(|h| !p.starts_with(h)))
        })
        .collect()
}

fn description(cfg: &CodeConfig, langs: &[Lang]) -> String {
    let mut how = Vec::new();
    for l in langs {
        how.push(match l {
            Lang::Python => "python (the default): `from hermes_tools import read_file, terminal, ...`; each function takes the tool's arguments as keyword arguments and returns the parsed result (a dict; an error is a dict with \"error\"); helpers: `json_parse`, `shell_quote`, `retry(fn, max_attempts=3, delay=2)`",
            Lang::JavaScript => "javascript (node, an ES module; top-level await works): `import { read_file } from \"hermes_tools\"`; each function takes one object of arguments and returns a Promise of the parsed result: `const r = await read_file({path: \"a.txt\"})`",
            Lang::Bash => "bash: `hermes-tools call read_file '{\"path\": \"a.txt\"}'` prints the result as JSON",
        });
    }
    format!(
        "Run a script that calls tools programmatically. Use when you need 3+ tool calls with logic between them: filtering/reducing large outputs before they enter context, branching, or loops (N pages/files, retry on failure). Use normal tool calls for single calls, results you must reason over in full, or anything needing user interaction.\n\n\
Languages (`language`):\n- {}\n\n\
Limits: {}-second timeout, max {} tool calls per run. Output (stdout and stderr) over {} bytes shows head/tail inline; the FULL text is saved to a file whose path rides in the result (read it with read_file). \
Scripts run in the task's working directory, in the same environment as terminal commands, with secrets left out of their environment. Print your final result to stdout.",
        how.join("\n- "),
        cfg.timeout,
        cfg.max_tool_calls,
        cfg.max_output_bytes,
    )
}

/// The tool's registration: the description lists the callable tools
/// through conditional text, so each definitions query names only the
/// tools that passed its filtering (cached with the rest).
pub fn spec(cfg: &CodeConfig, langs: &[Lang]) -> Value {
    let names: Vec<&str> = ALLOWED_TOOLS.iter().map(|(n, _)| *n).collect();
    let mut conditional = vec![json!({
        "when_any_available": names,
        "text": "\n\nTools the script can call:",
    })];
    for (name, line) in ALLOWED_TOOLS {
        conditional.push(json!({"when_any_available": [name], "text": format!("\n{line}")}));
    }
    let lang_names: Vec<&str> = langs.iter().map(|l| l.name()).collect();
    json!({
        "name": "execute_code",
        "toolset": "code_execution",
        "emoji": "🐍",
        "max_result_size_chars": 100_000,
        // Its own wall time (plus room to report) bounds a run, not the
        // dispatch's default call timeout.
        "timeout": cfg.timeout as f64 + 30.0,
        "conditional_description": conditional,
        "schema": {
            "name": "execute_code",
            "description": description(cfg, langs),
            "parameters": {
                "type": "object",
                "properties": {
                    "code": {"type": "string", "description": "The script to run. Import tools from hermes_tools (Python, JavaScript) or call `hermes-tools call TOOL JSON` (bash), and print your final result to stdout."},
                    "language": {"type": "string", "enum": lang_names, "description": "The script's language (default python)."},
                },
                "required": ["code"],
            },
        },
    })
}

/// What a run needs besides its arguments.
pub struct CodeCtx {
    pub cfg: CodeConfig,
    pub terminal: Arc<Terminal>,
    pub core: Weak<Core>,
    pub spill_dir: PathBuf,
    cli: Option<PathBuf>,
}

/// The `hermes-tools` program bash scripts call (its real path: the
/// sandbox binds this one file read-only so the run's link to it resolves).
pub fn cli_program(cfg: &CodeConfig) -> Option<PathBuf> {
    find_cli(cfg).and_then(|p| std::fs::canonicalize(p).ok())
}

fn find_cli(cfg: &CodeConfig) -> Option<PathBuf> {
    if let Some(p) = &cfg.cli_path {
        return Some(PathBuf::from(p));
    }
    if let Ok(exe) = std::env::current_exe()
        && let Some(dir) = exe.parent()
    {
        for d in [Some(dir), dir.parent()].into_iter().flatten() {
            let p = d.join("hermes-tools");
            if p.is_file() {
                return Some(p);
            }
        }
    }
    hermes_exec::env::find_program("hermes-tools")
}

/// Register `execute_code` into `core`; scripts run in `terminal`'s
/// backend with its per-task directory and environment.
pub fn install(
    cfg: CodeConfig,
    terminal: Arc<Terminal>,
    spill_dir: PathBuf,
    core: &Arc<Core>,
) -> Result<Arc<CodeCtx>> {
    let cli = cli_program(&cfg);
    let langs = match &cfg.languages {
        Some(names) => {
            let mut langs = Vec::new();
            for n in names {
                let l = Lang::parse(n).ok_or_else(|| {
                    hermes_core::Error::invalid(format!(
                        "runtime config: code_execution.languages: unknown language '{n}' (python, javascript, bash)"
                    ))
                })?;
                if !langs.contains(&l) {
                    langs.push(l);
                }
            }
            if langs.is_empty() {
                return Err(hermes_core::Error::invalid(
                    "runtime config: code_execution.languages: name at least one language",
                ));
            }
            langs
        }
        None => {
            let mut langs = interpreters(terminal.backend.name() == "sandbox");
            if cli.is_none() {
                langs.retain(|l| *l != Lang::Bash);
            }
            langs
        }
    };
    let ctx = Arc::new(CodeCtx {
        cli,
        cfg,
        terminal,
        core: Arc::downgrade(core),
        spill_dir,
    });
    let entry: ToolEntry = build_entry(
        parse_spec(&spec(&ctx.cfg, &langs).to_string())?,
        Arc::new(Blocking(Arc::new(ExecuteCode(ctx.clone())))),
        None,
    )?;
    core.register_many(vec![entry], false)?;
    Ok(ctx)
}

pub struct ExecuteCode(pub Arc<CodeCtx>);

fn error_result(message: impl Into<String>, calls: usize, started: Instant) -> ToolOutput {
    ToolOutput::error(
        json!({
            "status": "error",
            "error": message.into(),
            "tool_calls_made": calls,
            "duration_seconds": secs(started),
        })
        .to_string(),
    )
}

fn secs(started: Instant) -> f64 {
    (started.elapsed().as_secs_f64() * 100.0).round() / 100.0
}

impl BlockingTool for ExecuteCode {
    fn run(&self, args: Value, ctx: &RunCtx) -> ToolOutput {
        let started = Instant::now();
        if args.get("code").is_none() && args.get("command").is_some() {
            return error_result(
                "execute_code received a 'command' parameter, but it requires the script in 'code'. Use terminal(command=...) for shell commands; for a script, retry as execute_code(code=...).",
                0,
                started,
            );
        }
        let code = match args.get("code") {
            Some(Value::String(s)) if !s.trim().is_empty() => s.as_str(),
            Some(Value::String(_)) | None => {
                return error_result(
                    "No code provided. execute_code requires a non-empty 'code' parameter containing the script. To run shell commands, use terminal(command=...) instead.",
                    0,
                    started,
                );
            }
            Some(_) => {
                return error_result(
                    "execute_code requires the script as a string in 'code'.",
                    0,
                    started,
                );
            }
        };
        let lang = match args.get("language").and_then(Value::as_str) {
            None | Some("") => Lang::Python,
            Some(l) => match Lang::parse(l) {
                Some(l) => l,
                None => {
                    return error_result(
                        format!("unknown language '{l}' (python, javascript, bash)"),
                        0,
                        started,
                    );
                }
            },
        };
        run(&self.0, code, lang, ctx, started)
    }
}

/// The tools this run may call: the original's list ∩ what is registered
/// and available now (never execute_code itself), as MCP definitions.
fn allowed_tools(core: &Arc<Core>) -> Vec<(String, Value)> {
    let snap = core.snapshot();
    let entries: Vec<&Arc<ToolEntry>> = ALLOWED_TOOLS
        .iter()
        .filter_map(|(n, _)| snap.tools.get(*n))
        .collect();
    let (avail, _, _) = hermes_core::definitions::available(core, &entries);
    avail
        .into_iter()
        .filter(|e| e.name != "execute_code" && !e.agent_loop)
        .filter_map(|e| {
            let def: Value =
                serde_json::from_str(e.rendered(hermes_core::registry::Format::Mcp)).ok()?;
            Some((e.name.clone(), def))
        })
        .collect()
}

/// A private directory for one run (0700), removed when dropped.
struct RunDir(PathBuf);

impl RunDir {
    /// In `base` (the temporary folder, or a container's shared folder,
    /// whose own parent is private: `mode` 0755 lets any container user in).
    fn new(base: &Path, mode: u32) -> std::io::Result<RunDir> {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        let p = base.join(format!(
            "hermes-code-{}-{}",
            std::process::id(),
            crate::terminal::ids::unique_suffix()
        ));
        std::fs::DirBuilder::new().mode(0o700).create(&p)?;
        let dir = RunDir(p);
        if mode != 0o700 {
            std::fs::set_permissions(&dir.0, std::fs::Permissions::from_mode(mode))?;
        }
        Ok(dir)
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn write_private(path: &Path, text: &str, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(text.as_bytes())?;
    if mode != 0o600 {
        f.set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    Ok(())
}

/// The run's folder where the script runs, when that is another machine
/// (ssh): removed over the task's connection when dropped.
struct FarDir {
    fs: Arc<dyn hermes_exec::fs::FileSystem>,
    path: PathBuf,
}

impl Drop for FarDir {
    fn drop(&mut self) {
        let _ = self.fs.remove_dir_all(&self.path);
    }
}

/// Write the relay and make the answers' folder in the run's folder there
/// (a remote folder only: a relay needs the backend's file operations).
fn relay_ready(
    far: &Option<FarDir>,
    d: &Path,
    put: &dyn Fn(&str, &str) -> std::io::Result<PathBuf>,
) -> bool {
    let Some(f) = far else { return false };
    f.fs.create_dir_all(&d.join("resp")).is_ok() && put("relay.py", relay::RELAY_PY).is_ok()
}

fn run(c: &CodeCtx, code: &str, lang: Lang, ctx: &RunCtx, started: Instant) -> ToolOutput {
    let term = &c.terminal;
    let backend = term.backend.clone();
    let task_id = ctx.context.task_id.as_str();
    let task = hermes_exec::task_key(task_id);
    let Some(core) = c.core.upgrade() else {
        return error_result("the runtime is closing", 0, started);
    };
    let tools = allowed_tools(&core);
    drop(core);
    // A container's folder shared with this machine (docker, podman): the
    // run's folder goes there, seen inside at another path.
    let shared = match backend.remote().map(|r| r.shared_dir(task)).transpose() {
        Ok(s) => s.flatten(),
        Err(e) => {
            return error_result(
                format!(
                    "cannot reach the task's environment {}: {e}",
                    backend.location()
                ),
                0,
                started,
            );
        }
    };
    // The socket's folder, on this machine (private, one run only; in a
    // shared folder open to the container's user, whoever that is).
    let made = match &shared {
        Some((here, _)) => RunDir::new(here, 0o755),
        None => RunDir::new(&std::env::temp_dir(), 0o700),
    };
    let dir = match made {
        Ok(d) => d,
        Err(e) => return error_result(format!("cannot create the run's folder: {e}"), 0, started),
    };
    let file_mode = if shared.is_some() { 0o644 } else { 0o600 };
    // Where the stubs and the script go: that folder, or on a remote
    // backend a private folder there (in its state folder).
    let far = match backend.remote() {
        None => None,
        Some(_) if shared.is_some() => None,
        Some(r) => {
            let made = (|| -> std::io::Result<FarDir> {
                let fs = backend.files(task).ok_or_else(|| {
                    std::io::Error::other("the backend has no file system for the task")
                })?;
                let path = r
                    .state_dir()?
                    .join(format!("code-{}", crate::terminal::ids::unique_suffix()));
                fs.create_dir_all(&path)?;
                Ok(FarDir { fs, path })
            })();
            match made {
                Ok(f) => Some(f),
                Err(e) => {
                    return error_result(
                        format!("cannot create the run's folder {}: {e}", backend.location()),
                        0,
                        started,
                    );
                }
            }
        }
    };
    // The run's folder as the script sees it.
    let d: PathBuf = match (&far, &shared) {
        (Some(f), _) => f.path.clone(),
        (None, Some((_, there))) => there.join(dir.0.file_name().unwrap_or_default()),
        (None, None) => dir.0.clone(),
    };
    // Write `rel` into the run's folder; returns its path as the script sees it.
    let put = |rel: &str, text: &str| -> std::io::Result<PathBuf> {
        match &far {
            Some(f) => {
                let p = d.join(rel);
                if let Some(parent) = p.parent() {
                    f.fs.create_dir_all(parent)?;
                }
                f.fs.write_atomic(&p, text.as_bytes(), Some(0o600))?;
            }
            None => {
                let p = dir.0.join(rel);
                if let Some(parent) = p.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                write_private(&p, text, file_mode)?;
            }
        }
        Ok(d.join(rel))
    };
    let stub_tools: Vec<StubTool<'_>> = tools
        .iter()
        .filter_map(|(_, d)| StubTool::from_mcp(d))
        .collect();
    let written = (|| -> std::io::Result<PathBuf> {
        Ok(match lang {
            Lang::Python => {
                put("hermes_tools.py", &stubs::python_module(&stub_tools))?;
                put("script.py", code)?
            }
            Lang::JavaScript => {
                put(
                    "node_modules/hermes_tools/package.json",
                    r#"{"name":"hermes_tools","type":"module","main":"index.js"}"#,
                )?;
                put(
                    "node_modules/hermes_tools/index.js",
                    &stubs::js_module(&stub_tools),
                )?;
                put("script.mjs", code)?
            }
            Lang::Bash => {
                if c.cli.is_none() {
                    return Err(std::io::Error::other(
                        "the hermes-tools program bash scripts call was not found (set code_execution.cli_path)",
                    ));
                }
                put("script.sh", code)?
            }
        })
    })();
    let script_path = match written {
        Ok(p) => p,
        Err(e) => return error_result(format!("cannot write the script: {e}"), 0, started),
    };
    // The inner calls' context: the outer call's, with the script as origin.
    let mut context: Map<String, Value> =
        match ctx.context.json.as_deref().map(serde_json::from_str) {
            Some(Ok(Value::Object(m))) => m,
            _ => Map::new(),
        };
    let c0 = &ctx.context;
    context.insert("task_id".into(), json!(c0.task_id));
    if !c0.session_id.is_empty() {
        context.insert("session_id".into(), json!(c0.session_id));
    }
    if let Some(i) = c0.interactive {
        context.insert("interactive".into(), json!(i));
    }
    if let Some(u) = &c0.user_task {
        context.insert("user_task".into(), json!(u));
    }
    context.insert("tool_call_id".into(), json!(ctx.context.tool_call_id));
    context.insert(
        "origin".into(),
        json!({"tool": "execute_code", "tool_call_id": ctx.context.tool_call_id, "language": lang.name()}),
    );
    let mut channel = match Channel::start(
        &dir.0,
        RunSpec {
            core: c.core.clone(),
            tools,
            context,
            max_calls: c.cfg.max_tool_calls,
        },
    ) {
        Ok(ch) => ch,
        Err(e) => return error_result(format!("cannot open the run's channel: {e}"), 0, started),
    };
    // In a shared folder the container's user (any uid) must be able to
    // connect; only that container and this user reach the folder.
    if shared.is_some() {
        use std::os::unix::fs::PermissionsExt;
        if let Err(e) =
            std::fs::set_permissions(channel.socket(), std::fs::Permissions::from_mode(0o666))
        {
            return error_result(format!("cannot open the run's channel: {e}"), 0, started);
        }
    }
    // On a remote backend the socket is forwarded into the run's folder
    // there; where it cannot be, the run's channel is relayed over the
    // command's output and answer files ([`relay`]).
    let mut relay: Option<relay::Relay> = None;
    let forward = match backend.remote() {
        Some(_) if shared.is_some() => None,
        Some(r) => match r.forward_socket(task, channel.socket(), &d.join("mcp.sock")) {
            Ok(g) => Some(g),
            Err(e) if e.kind() == std::io::ErrorKind::Unsupported => {
                let (Some(f), true) = (&far, relay_ready(&far, &d, &put)) else {
                    return error_result(
                        format!("cannot open the run's channel {}: {e}", backend.location()),
                        0,
                        started,
                    );
                };
                relay = Some(relay::Relay::new(
                    channel.socket(),
                    f.fs.clone(),
                    d.join("resp"),
                ));
                None
            }
            Err(e) => {
                return error_result(
                    format!("cannot open the run's channel {}: {e}", backend.location()),
                    0,
                    started,
                );
            }
        },
        None => None,
    };
    let socket = match (&far, &shared) {
        (None, None) => channel.socket().to_path_buf(),
        _ => d.join("mcp.sock"),
    };
    // The task's environment and directory, as a terminal command gets them.
    let prep = term.prepare(task_id, "", None, false, false);
    let mut env = prep.env;
    let dir_s = d.display().to_string();
    let old = |k: &str| {
        env.iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty())
    };
    let pythonpath = match old("PYTHONPATH") {
        Some(p) => format!("{dir_s}:{p}"),
        None => dir_s.clone(),
    };
    let path = match old("PATH") {
        Some(p) => format!("{dir_s}/bin:{p}"),
        None => format!("{dir_s}/bin:/usr/local/bin:/usr/bin:/bin"),
    };
    for (k, v) in [
        (stubs::SOCKET_VAR, socket.display().to_string()),
        ("PYTHONPATH", pythonpath),
        ("PYTHONDONTWRITEBYTECODE", "1".into()),
        ("PYTHONUNBUFFERED", "1".into()),
        ("PATH", path),
    ] {
        env.retain(|(n, _)| n != k);
        env.push((k.to_string(), v));
    }
    let prog = lang.program();
    // bash scripts find `hermes-tools` in the run's bin folder (made here
    // for a shared folder: the container's user may not write it).
    let link = match (&c.cli, lang) {
        (Some(cli), Lang::Bash) if shared.is_some() => {
            let bin = dir.0.join("bin");
            if let Err(e) = std::fs::create_dir_all(&bin)
                .and_then(|_| std::os::unix::fs::symlink(cli, bin.join("hermes-tools")))
            {
                return error_result(format!("cannot write the script: {e}"), 0, started);
            }
            String::new()
        }
        (Some(cli), Lang::Bash) => format!(
            "mkdir -p {bin} && ln -sf {cli} {bin}/hermes-tools || exit 126\n",
            bin = crate::terminal::sq(&format!("{}/bin", d.display())),
            cli = crate::terminal::sq(&cli.display().to_string()),
        ),
        _ => String::new(),
    };
    let under = if relay.is_some() {
        format!(
            "command -v python3 >/dev/null 2>&1 || {{ echo 'execute_code: python3 is needed where scripts run (it relays the channel of the run on this backend)' >&2; exit 127; }}\nexec python3 {} {} {} ",
            crate::terminal::sq(&d.join("relay.py").display().to_string()),
            crate::terminal::sq(&d.join("mcp.sock").display().to_string()),
            crate::terminal::sq(&d.join("resp").display().to_string()),
        )
    } else {
        "exec ".to_string()
    };
    let script = format!(
        "{link}command -v {prog} >/dev/null 2>&1 || {{ echo 'execute_code: {prog} is not installed where scripts run' >&2; exit 127; }}\n{under}{prog} {}",
        crate::terminal::sq(&script_path.display().to_string())
    );
    let extra = [d.clone()];
    let req = SpawnRequest {
        script: &script,
        cwd: &prep.cwd,
        env: &env,
        pty: false,
        extra_rw: &extra,
        task,
        linger: false,
    };
    let sp = match backend.spawn(&req) {
        Ok(sp) => sp,
        Err(e) => {
            return error_result(
                format!("cannot start the script: {e}"),
                channel.calls_made(),
                started,
            );
        }
    };
    let mut timeout = Duration::from_secs(c.cfg.timeout.max(1));
    if let Some(dl) = ctx.deadline {
        timeout = timeout.min(dl.saturating_duration_since(Instant::now()));
    }
    let mut cap = OutputCap::new(c.cfg.max_output_bytes, &c.spill_dir);
    let opts = PumpOpts {
        timeout: Some(timeout),
        cancel: Some(&ctx.cancel),
        grace: term.grace(),
        ..PumpOpts::default()
    };
    let (code, ended) = pump(
        sp.pid,
        &sp.output,
        &*backend,
        &opts,
        &mut |chunk| match &mut relay {
            Some(r) => r.feed(chunk, &mut |b| cap.push(b)),
            None => cap.push(chunk),
        },
    );
    if let Some(r) = &mut relay {
        r.finish(&mut |b| cap.push(b));
    }
    drop(forward);
    channel.close();
    let calls = channel.calls_made();
    drop(channel);
    drop(dir);
    drop(far);
    let (output, meta) = cap.finish();
    let mut v = json!({
        "status": "success",
        "output": output,
        "tool_calls_made": calls,
        "duration_seconds": secs(started),
    });
    let mut failed = false;
    match ended {
        Ended::TimedOut => {
            let msg = format!(
                "Script timed out after {}s and was killed.",
                timeout.as_secs_f64().round() as u64
            );
            v["status"] = json!("timeout");
            let out = v["output"].as_str().unwrap_or("").to_string();
            v["output"] = json!(if out.is_empty() {
                format!("⏰ {msg}")
            } else {
                format!("{out}\n\n⏰ {msg}")
            });
            v["error"] = json!(msg);
            failed = true;
        }
        Ended::Cancelled => {
            v["status"] = json!("interrupted");
            let out = v["output"].as_str().unwrap_or("").to_string();
            v["output"] = json!(if out.is_empty() {
                "[execution interrupted]".to_string()
            } else {
                format!("{out}\n[execution interrupted]")
            });
            v["error"] = json!("the call was cancelled: the script was killed");
            failed = true;
        }
        Ended::Exited if code != 0 => {
            v["status"] = json!("error");
            v["error"] = json!(if code == 127 {
                format!(
                    "Script exited with code 127 ({prog} not found, or a command it ran was not)"
                )
            } else {
                format!("Script exited with code {code}")
            });
            failed = true;
        }
        Ended::Exited => {}
    }
    if let (Value::Object(m), Value::Object(extra)) = (&mut v, meta) {
        for (k, x) in extra {
            m.insert(k, x);
        }
    }
    if failed {
        ToolOutput::error(v.to_string())
    } else {
        ToolOutput::json(&v)
    }
}

/// The output within `max` bytes (40 % head, 60 % tail), and the whole
/// output (up to [`MAX_SPILL_BYTES`]) saved to a file once it overflows.
struct OutputCap {
    max: usize,
    head: Vec<u8>,
    tail: std::collections::VecDeque<u8>,
    overflow: bool,
    total: u64,
    dir: PathBuf,
    spill: Option<(PathBuf, std::fs::File)>,
    spilled: u64,
}

impl OutputCap {
    fn new(max: usize, dir: &Path) -> OutputCap {
        OutputCap {
            max: max.max(100),
            head: Vec::new(),
            tail: std::collections::VecDeque::new(),
            overflow: false,
            total: 0,
            dir: dir.to_path_buf(),
            spill: None,
            spilled: 0,
        }
    }

    fn head_cap(&self) -> usize {
        self.max * 2 / 5
    }

    fn push(&mut self, chunk: &[u8]) {
        self.total += chunk.len() as u64;
        if self.spill.is_none() && self.total > self.max as u64 {
            self.open_spill();
        }
        if let Some((_, f)) = &mut self.spill
            && self.spilled < MAX_SPILL_BYTES
        {
            let n = chunk.len().min((MAX_SPILL_BYTES - self.spilled) as usize);
            let _ = f.write_all(&chunk[..n]);
            self.spilled += n as u64;
        }
        if !self.overflow {
            self.head.extend_from_slice(chunk);
            if self.head.len() <= self.max {
                return;
            }
            self.overflow = true;
            let moved = self.head.split_off(self.head_cap());
            self.tail.extend(moved);
        } else {
            self.tail.extend(chunk.iter().copied());
        }
        let tail_cap = self.max - self.head_cap();
        if self.tail.len() > tail_cap {
            let cut = self.tail.len() - tail_cap;
            self.tail.drain(..cut);
        }
    }

    fn open_spill(&mut self) {
        use std::os::unix::fs::OpenOptionsExt;
        if std::fs::create_dir_all(&self.dir).is_err() {
            return;
        }
        let path = self.dir.join(format!(
            "execute_code-{}-{}.txt",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis())
                .unwrap_or(0),
            crate::terminal::ids::unique_suffix()
        ));
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
        {
            let _ = f.write_all(&self.head);
            self.spilled = self.head.len() as u64;
            self.spill = Some((path, f));
        }
    }

    /// The text for the model and the truncation fields.
    fn finish(self) -> (String, Value) {
        let clean = crate::terminal::output::clean;
        if !self.overflow {
            let text = clean(&self.head);
            return (text, json!({}));
        }
        let tail: Vec<u8> = self.tail.into_iter().collect();
        let omitted = self.total - (self.head.len() + tail.len()) as u64;
        let mut text = clean(&self.head);
        text.push_str(&format!(
            "\n\n[... {omitted} bytes of {} omitted ...]\n\n",
            self.total
        ));
        text.push_str(&clean(&tail));
        let mut meta = json!({
            "stdout_truncated": true,
            "stdout_bytes_total": self.total,
            "stdout_bytes_omitted": omitted,
        });
        match &self.spill {
            Some((p, _)) => {
                let p = p.display().to_string();
                meta["warning"] = json!(format!(
                    "execute_code output was truncated (head/tail shown); the script did run. FULL output saved to {p}: page it with read_file(path=\"{p}\", offset=...) instead of re-running."
                ));
                meta["stdout_spill_path"] = json!(p);
            }
            None => {
                meta["warning"] = json!(
                    "execute_code output was truncated; the script did run, but only the head/tail is included."
                );
            }
        }
        (text, meta)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_keeps_head_and_tail_and_spills_the_whole() {
        let dir = tempfile::tempdir().unwrap();
        let mut cap = OutputCap::new(1000, dir.path());
        let mut all = Vec::new();
        for i in 0..500 {
            let line = format!("line {i}\n");
            all.extend_from_slice(line.as_bytes());
            cap.push(line.as_bytes());
        }
        let (text, meta) = cap.finish();
        assert!(text.starts_with("line 0\n"), "{text}");
        assert!(text.ends_with("line 499\n"), "{text}");
        assert!(text.len() < 1200, "{}", text.len());
        assert_eq!(meta["stdout_bytes_total"], json!(all.len()));
        let p = meta["stdout_spill_path"].as_str().unwrap();
        assert_eq!(std::fs::read(p).unwrap(), all);
    }

    #[test]
    fn small_output_is_whole() {
        let dir = tempfile::tempdir().unwrap();
        let mut cap = OutputCap::new(1000, dir.path());
        cap.push(b"hello\n");
        let (text, meta) = cap.finish();
        assert_eq!(text, "hello\n");
        assert_eq!(meta, json!({}));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
