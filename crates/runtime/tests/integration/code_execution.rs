//! execute_code on real backends (local, the bubblewrap sandbox where it
//! works here, ssh to a real sshd on 127.0.0.1 where one starts, a real
//! dockerd and podman with the test image, this machine's /usr bound
//! read-only for the interpreters): real interpreters, the real channel
//! (forwarded with `-R` over ssh, in the container's shared folder), the real
//! `hermes-tools` program, the host's approval handler. Run with
//! `cargo test -p hermes-runtime --test integration code_execution::`.

use hermes_core::dispatch::CallContext;
use hermes_runtime::Runtime;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The `hermes-tools` program bash scripts call, built when it is missing
/// (`cargo test -p hermes-runtime` does not build other packages' programs).
fn cli() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let exe = std::env::current_exe().unwrap();
            let p = exe.parent().unwrap().parent().unwrap().join("hermes-tools");
            if !p.is_file() {
                let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
                let ok = std::process::Command::new(cargo)
                    .args(["build", "-p", "hermes-tools-cli"])
                    .status()
                    .map(|s| s.success())
                    .unwrap_or(false);
                assert!(ok && p.is_file(), "cannot build hermes-tools at {p:?}");
            }
            p
        })
        .clone()
}

struct Env {
    /// A server the backend talks to (the modal contract server), kept
    /// running for the test.
    _server: Option<Box<dyn std::any::Any>>,
    _sshd: Option<crate::ssh_common::Sshd>,
    _dir: tempfile::TempDir,
    root: PathBuf,
    rt: Arc<Runtime>,
}

impl Env {
    fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }
    fn run(&self, lang: &str, code: &str) -> Value {
        run(&self.rt, lang, code)
    }
}

fn ctx() -> CallContext {
    CallContext::parse(Some(
        r#"{"task_id":"t","tool_call_id":"call_outer","interactive":true}"#,
    ))
    .unwrap()
}

fn run(rt: &Runtime, lang: &str, code: &str) -> Value {
    let text = rt
        .dispatch(
            "execute_code",
            &json!({"code": code, "language": lang}).to_string(),
            ctx(),
        )
        .unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// A runtime on `backend` with the file, terminal and code_execution
/// toolsets; `code` is merged into the `code_execution` section, `extra`
/// into the config. `None` when the backend does not work here.
fn env(backend: &str, code: Value, extra: Value) -> Option<Env> {
    if backend == "sandbox"
        && let Err(why) = hermes_exec::sandbox::usable_or_required()
    {
        eprintln!("skipped: the sandbox does not work here: {why}");
        return None;
    }
    let sshd = match backend {
        "ssh" => match crate::ssh_common::Sshd::start() {
            Ok(s) => Some(s),
            Err(why) => {
                eprintln!("SKIPPED: {why}");
                return None;
            }
        },
        _ => None,
    };
    let engine = match backend {
        "docker" | "podman" => {
            let e = if backend == "docker" {
                crate::container_common::docker()
            } else {
                crate::container_common::podman()
            };
            match e {
                Ok(e) => Some(e),
                Err(why) => {
                    eprintln!("SKIPPED: {why}");
                    return None;
                }
            }
        }
        _ => None,
    };
    if backend == "apptainer" && !is_root() {
        // The stand-in makes the instance's bind in a mount namespace.
        eprintln!("SKIPPED: the apptainer stand-in needs root");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("work");
    std::fs::create_dir_all(&root).unwrap();
    let mut ce = json!({"cli_path": cli(), "spill_dir": dir.path().join("spill")});
    if let (Value::Object(a), Value::Object(b)) = (&mut ce, code) {
        a.extend(b);
    }
    let mut cfg = json!({
        "builtin_toolsets": ["terminal", "file", "code_execution"],
        "terminal": {"backend": backend, "cwd": root, "kill_grace": 0.5},
        "data_dir": dir.path().join("data"),
        "approvals": {"non_interactive": "deny", "posture": "deny-list"},
        "code_execution": ce,
    });
    if let Some(s) = &sshd {
        cfg["terminal"]["ssh"] = s.section();
    }
    if let Some(e) = engine {
        // The image has bash and coreutils; python3 and node come from
        // this machine's /usr, bound read-only.
        let mut section = e.section();
        section["workspace"] = json!(root);
        section["run_args"]
            .as_array_mut()
            .unwrap()
            .extend([json!("-v"), json!("/usr:/usr:ro")]);
        cfg["terminal"]["docker"] = section;
    }
    if backend == "apptainer" {
        // Apptainer is not packaged here: the stand-in for its CLI
        // (crates/exec/tests/fixtures), instances' commands run on this
        // machine with the instance's shared folder bound in their own
        // mount namespace, as apptainer's `--bind` does.
        cfg["terminal"]["apptainer"] = json!({
            "binary": PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../exec/tests/fixtures/apptainer-standin.sh"),
            "image": "docker://debian:12-slim",
            "cache_dir": dir.path().join("sif"),
            "workspace": root,
        });
    }
    let mut server: Option<Box<dyn std::any::Any>> = None;
    if backend == "modal" {
        #[cfg(feature = "modal")]
        {
            // Modal's API by its proto, sandboxes as folders here, commands
            // as processes here: no folder or socket is shared, so the run's
            // channel goes through the relay.
            use crate::modal_server::{Server, TOKEN_ID, TOKEN_SECRET};
            let srv = Server::start();
            cfg["terminal"]["modal"] = json!({
                "api_url": srv.url(), "token_id": TOKEN_ID, "token_secret": TOKEN_SECRET,
                "image": "python:3.12-slim",
            });
            server = Some(Box::new(srv));
        }
        #[cfg(not(feature = "modal"))]
        {
            eprintln!("SKIPPED: built without the modal feature");
            return None;
        }
    }
    if backend == "daytona" {
        // Daytona's API by its published contract, commands as processes
        // here: the relay, as on modal.
        let srv = crate::daytona_server::Server::start();
        cfg["terminal"]["daytona"] = json!({
            "api_url": srv.api(), "api_key": crate::daytona_server::KEY, "image": "debian:12",
        });
        server = Some(Box::new(srv));
    }
    if let (Value::Object(a), Value::Object(b)) = (&mut cfg, extra) {
        a.extend(b);
    }
    let rt = Arc::new(Runtime::new(&cfg.to_string()).expect("runtime"));
    Some(Env {
        _server: server,
        _sshd: sshd,
        _dir: dir,
        root,
        rt,
    })
}

macro_rules! on_every_backend {
    ($scenario:ident) => {
        mod $scenario {
            #[test]
            fn local() {
                super::$scenario("local");
            }
            #[test]
            fn sandbox() {
                super::$scenario("sandbox");
            }
            #[test]
            fn ssh() {
                super::$scenario("ssh");
            }
            #[test]
            fn docker() {
                super::$scenario("docker");
            }
            #[test]
            fn podman() {
                super::$scenario("podman");
            }
            #[test]
            fn apptainer() {
                super::$scenario("apptainer");
            }
            #[test]
            fn modal() {
                super::$scenario("modal");
            }
            #[test]
            fn daytona() {
                super::$scenario("daytona");
            }
        }
    };
}

fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

fn python_reads_twenty_files_greps_and_patches(backend: &str) {
    let Some(e) = env(backend, json!({}), json!({})) else {
        return;
    };
    for i in 0..20 {
        let body = if i == 13 {
            "alpha\nneedle = 1\nomega\n".to_string()
        } else {
            format!("alpha\nfile {i}\nomega\n")
        };
        std::fs::write(e.path(&format!("f{i:02}.txt")), body).unwrap();
    }
    let v = e.run(
        "python",
        r#"
import json
from hermes_tools import read_file, search_files, patch
lines = 0
for i in range(20):
    r = read_file(f"f{i:02}.txt")
    lines += r["total_lines"]
hits = search_files("needle", path=".", file_glob="*.txt")
path = hits["matches"][0]["path"]
p = patch(path, "needle = 1", "needle = 2")
print(json.dumps({"lines": lines, "hit": path, "patched": not p.get("error")}))
"#,
    );
    assert_eq!(v["status"], "success", "{v}");
    assert_eq!(v["tool_calls_made"], 22, "{v}");
    let out: Value = serde_json::from_str(v["output"].as_str().unwrap().trim()).unwrap();
    assert_eq!(out["lines"], 60, "{v}");
    assert!(out["hit"].as_str().unwrap().ends_with("f13.txt"), "{v}");
    assert_eq!(out["patched"], true, "{v}");
    assert_eq!(
        std::fs::read_to_string(e.path("f13.txt")).unwrap(),
        "alpha\nneedle = 2\nomega\n"
    );
    assert!(v["duration_seconds"].as_f64().unwrap() > 0.0, "{v}");
}
on_every_backend!(python_reads_twenty_files_greps_and_patches);

fn javascript_calls_tools(backend: &str) {
    let Some(e) = env(backend, json!({}), json!({})) else {
        return;
    };
    std::fs::write(e.path("a.txt"), "hello\n").unwrap();
    let v = e.run(
        "javascript",
        r#"
import { read_file, write_file } from "hermes_tools";
const r = await read_file({ path: "a.txt" });
const [x, y] = await Promise.all([
  write_file({ path: "b.txt", content: `lines=${r.total_lines}\n` }),
  write_file({ path: "c.txt", content: "c\n" }),
]);
console.log(JSON.stringify({ ok: !x.error && !y.error }));
"#,
    );
    assert_eq!(v["status"], "success", "{v}");
    assert_eq!(v["tool_calls_made"], 3, "{v}");
    assert_eq!(
        v["output"].as_str().unwrap().trim(),
        r#"{"ok":true}"#,
        "{v}"
    );
    assert_eq!(
        std::fs::read_to_string(e.path("b.txt")).unwrap(),
        "lines=1\n"
    );
    assert!(e.path("c.txt").is_file());
}
on_every_backend!(javascript_calls_tools);

fn bash_uses_hermes_tools_call(backend: &str) {
    let Some(e) = env(backend, json!({}), json!({})) else {
        return;
    };
    let v = e.run(
        "bash",
        r#"set -e
hermes-tools call write_file '{"path": "w.txt", "content": "from bash\n"}' >/dev/null
hermes-tools call --json read_file '{"path": "w.txt"}' | grep -c 'from bash'
env | grep -c -E '^(HERMES_TOOLS_SOCKET)=' "#,
    );
    assert_eq!(v["status"], "success", "{v}");
    assert_eq!(v["tool_calls_made"], 2, "{v}");
    assert_eq!(v["output"].as_str().unwrap(), "1\n1\n", "{v}");
    assert_eq!(
        std::fs::read_to_string(e.path("w.txt")).unwrap(),
        "from bash\n"
    );
}
on_every_backend!(bash_uses_hermes_tools_call);

fn the_call_limit_is_enforced_by_the_runtime(backend: &str) {
    let Some(e) = env(backend, json!({"max_tool_calls": 3}), json!({})) else {
        return;
    };
    std::fs::write(e.path("a.txt"), "x\n".repeat(10)).unwrap();
    let v = e.run(
        "python",
        r#"
from hermes_tools import read_file
for i in range(5):
    r = read_file("a.txt", offset=i + 1, limit=1)
    print(i, "error" in r, r.get("error", "")[:40])
"#,
    );
    assert_eq!(v["status"], "success", "{v}");
    assert_eq!(v["tool_calls_made"], 3, "{v}");
    let out = v["output"].as_str().unwrap();
    assert!(out.contains("2 False"), "{out}");
    assert!(out.contains("3 True Tool call limit reached (3)"), "{out}");
    assert!(out.contains("4 True"), "{out}");
}
on_every_backend!(the_call_limit_is_enforced_by_the_runtime);

struct Host(Mutex<Vec<String>>, &'static str);

impl hermes_runtime::ApprovalSink for Host {
    fn ask(&self, request: &Arc<str>, id: u64) {
        self.0.lock().unwrap().push(request.to_string());
        hermes_runtime::approvals::respond(id, self.1.to_string());
    }
}

fn a_dangerous_terminal_call_asks_the_host(backend: &str) {
    let Some(e) = env(backend, json!({}), json!({})) else {
        return;
    };
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(e.path("victim/sub")).unwrap();
    let mode = || {
        std::fs::metadata(e.path("victim/sub"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    let before = mode();
    assert_ne!(before, 0o777);
    let host = Arc::new(Host(Mutex::default(), "deny"));
    e.rt.set_approval_sink(false, Some(host.clone())).unwrap();
    let v = e.run(
        "python",
        r#"
import json
from hermes_tools import terminal
r = terminal("chmod -R 777 victim")
print(json.dumps(r))
"#,
    );
    assert_eq!(v["status"], "success", "{v}");
    assert_eq!(v["tool_calls_made"], 1, "{v}");
    let inner: Value = serde_json::from_str(v["output"].as_str().unwrap().trim()).unwrap();
    assert_eq!(inner["status"], "blocked", "{inner}");
    assert_eq!(mode(), before, "the denied command ran");
    let asked = host.0.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    let req: Value = serde_json::from_str(&asked[0]).unwrap();
    assert_eq!(
        req["untrusted_command_text"], "chmod -R 777 victim",
        "{req}"
    );
    assert_eq!(
        req["origin"],
        json!({"tool": "execute_code", "tool_call_id": "call_outer", "language": "python"}),
        "{req}"
    );
    assert_eq!(req["task_id"], "t", "{req}");
    assert_eq!(req["tool_call_id"], "call_outer#1", "{req}");
    // Approved once, it runs.
    let yes = Arc::new(Host(Mutex::default(), "once"));
    e.rt.set_approval_sink(false, Some(yes.clone())).unwrap();
    let v = e.run(
        "python",
        "from hermes_tools import terminal\nprint(terminal('chmod -R 777 victim')['exit_code'])",
    );
    assert_eq!(v["output"].as_str().unwrap().trim(), "0", "{v}");
    assert_eq!(mode(), 0o777);
    assert_eq!(yes.0.lock().unwrap().len(), 1);
}
on_every_backend!(a_dangerous_terminal_call_asks_the_host);

/// Whether a process whose command line contains `marker` is alive.
fn alive(marker: &str) -> bool {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .any(|c| {
            String::from_utf8_lossy(&c)
                .replace('\0', " ")
                .contains(marker)
        })
}

/// The folder of a running script (`.../script.py`) whose text has
/// `marker`, on this machine: read through the process's own root (a
/// container's), and a container's run folder found in its shared folder
/// here (`$TMPDIR/hermes-tools-<runtime>/<slot>/`).
fn script_dir(marker: &str) -> Option<PathBuf> {
    let (_, arg) = std::fs::read_dir("/proc")
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| Some((e.path(), std::fs::read(e.path().join("cmdline")).ok()?)))
        .flat_map(|(p, c)| {
            String::from_utf8_lossy(&c)
                .split('\0')
                .map(|a| (p.clone(), a.to_string()))
                .collect::<Vec<_>>()
        })
        .filter(|(_, a)| a.ends_with("/script.py"))
        .find(|(p, a)| {
            std::fs::read_to_string(p.join("root").join(a.trim_start_matches('/')))
                .is_ok_and(|t| t.contains(marker))
        })?;
    let dir = PathBuf::from(&arg).parent().unwrap().to_path_buf();
    if std::fs::read_to_string(&arg).is_ok_and(|t| t.contains(marker)) {
        return Some(dir); // this machine's own file system
    }
    let name = dir.file_name()?.to_owned();
    std::fs::read_dir(std::env::temp_dir())
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("hermes-tools-ht")
        })
        .filter_map(|e| std::fs::read_dir(e.path()).ok())
        .flatten()
        .filter_map(|e| e.ok())
        .map(|slot| slot.path().join(&name))
        .find(|p| p.is_dir())
}

fn cancelling_kills_the_script_and_its_calls(backend: &str) {
    let Some(e) = env(backend, json!({}), json!({})) else {
        return;
    };
    // Unique per test (the backends' variants run at once in this process).
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let marker = format!("{}.{}{n}", 71, std::process::id());
    let code = format!(
        "from hermes_tools import terminal\nprint('started', flush=True)\nterminal('sleep {marker}')\nprint('never')\n"
    );
    let (tx, rx) = std::sync::mpsc::channel();
    let id =
        e.rt.dispatch_async(
            "execute_code",
            &json!({"code": code}).to_string(),
            ctx(),
            Box::new(move |done| {
                let _ = tx.send(done);
            }),
        )
        .unwrap();
    let until = Instant::now() + Duration::from_secs(20);
    while !alive(&format!("sleep {marker}")) {
        assert!(Instant::now() < until, "the inner command never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    // The run's folder: where the script that names the marker runs.
    let dir = script_dir(&marker).expect("the script's folder");
    let t = Instant::now();
    e.rt.cancel(id).unwrap();
    let done = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("no completion");
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    assert!(done.cancelled, "{}", done.text);
    // The inner command and the script are gone, and so is the channel.
    let until = Instant::now() + Duration::from_secs(5);
    while alive(&format!("sleep {marker}")) {
        assert!(Instant::now() < until, "the inner command outlived the run");
        std::thread::sleep(Duration::from_millis(50));
    }
    // The run's folder (where the script ran) goes too: the cancelled
    // call is answered at once, the run's cleanup follows (over the
    // task's connection on ssh).
    let until = Instant::now() + Duration::from_secs(10);
    while dir.exists() {
        assert!(Instant::now() < until, "{dir:?} left behind");
        std::thread::sleep(Duration::from_millis(50));
    }
}
on_every_backend!(cancelling_kills_the_script_and_its_calls);

fn a_script_that_never_reads_its_socket_cannot_hang_the_runtime(backend: &str) {
    let Some(e) = env(backend, json!({"timeout": 3}), json!({})) else {
        return;
    };
    std::fs::write(e.path("big.txt"), "y".repeat(200) + "\n").unwrap();
    // Requests pile up unread (results fill the socket buffer), then the
    // script sleeps holding the socket.
    let code = r#"
import json, os, socket, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(os.environ["HERMES_TOOLS_SOCKET"])
msg = {"jsonrpc": "2.0", "id": 0, "method": "tools/call",
       "params": {"name": "read_file", "arguments": {"path": "big.txt"}}}
s.setblocking(False)
sent = 0
for i in range(40):
    msg["id"] = i
    try:
        s.send((json.dumps(msg) + "\n").encode())
        sent += 1
    except BlockingIOError:
        break
print("sent", sent, flush=True)
time.sleep(600)
"#;
    let t = Instant::now();
    let v = e.run("python", code);
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert_eq!(v["status"], "timeout", "{v}");
    assert!(v["output"].as_str().unwrap().contains("sent 40"), "{v}");
    // The runtime still works.
    let v = e.run("python", "print('ok')");
    assert_eq!(v["output"], "ok\n", "{v}");
}
on_every_backend!(a_script_that_never_reads_its_socket_cannot_hang_the_runtime);

fn big_output_is_cut_and_saved(backend: &str) {
    let Some(e) = env(backend, json!({"max_output_bytes": 1000}), json!({})) else {
        return;
    };
    let v = e.run("python", "for i in range(2000): print('line', i)");
    assert_eq!(v["status"], "success", "{v}");
    let out = v["output"].as_str().unwrap();
    assert!(
        out.starts_with("line 0\n") && out.ends_with("line 1999\n"),
        "{out}"
    );
    assert!(out.len() < 1200, "{}", out.len());
    assert_eq!(v["stdout_truncated"], true, "{v}");
    let p = v["stdout_spill_path"].as_str().unwrap();
    let whole = std::fs::read_to_string(p).unwrap();
    assert_eq!(whole.lines().count(), 2000);
}
on_every_backend!(big_output_is_cut_and_saved);

#[test]
fn errors_and_secrets() {
    let Some(e) = env("local", json!({}), json!({})) else {
        return;
    };
    let v = e.run("python", "raise SystemExit(3)");
    assert_eq!(v["status"], "error", "{v}");
    assert_eq!(v["error"], "Script exited with code 3", "{v}");
    let v = e.run("python", "import sys\nprint('oops', file=sys.stderr)\n1/0");
    assert_eq!(v["status"], "error", "{v}");
    assert!(
        v["output"].as_str().unwrap().contains("ZeroDivisionError"),
        "{v}"
    );
    // execute_code cannot call itself; the script sees only its tools.
    let v = e.run(
        "python",
        "import hermes_tools as h\nprint(sorted(n for n in h.__all__ if '_' in n and n not in ('json_parse','shell_quote')))\nprint(h._call('execute_code', {'code': 'print(1)'})['error'][:40])",
    );
    assert_eq!(
        v["output"].as_str().unwrap(),
        "['read_file', 'search_files', 'write_file']\nTool 'execute_code' is not available in \n",
        "{v}"
    );
    // The host's secrets stay out of the script's environment.
    let v = e.run("bash", "env");
    let out = v["output"].as_str().unwrap();
    assert!(out.contains("HERMES_TOOLS_SOCKET="), "{out}");
    for (k, _) in std::env::vars() {
        if k.contains("TOKEN") || k.contains("SECRET") || k.ends_with("_KEY") {
            assert!(!out.contains(&format!("{k}=")), "{k} leaked");
        }
    }
    // A script that removes its socket does not hold up the end of its run.
    let t = Instant::now();
    let v = e.run(
        "python",
        "import os\nos.unlink(os.environ['HERMES_TOOLS_SOCKET'])\nprint('gone')",
    );
    assert_eq!(v["output"], "gone\n", "{v}");
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    // Languages are the schema's enum: validation answers before a run.
    let v = e.run("cobol", "x");
    assert!(
        v["error"].as_str().unwrap().contains("must be one of"),
        "{v}"
    );
}

/// The description names only the tools that passed filtering, per query.
#[test]
fn the_description_lists_only_the_tools_that_passed_filtering() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = json!({
        "builtin_toolsets": ["file", "code_execution"],
        "terminal": {"backend": "local", "cwd": dir.path()},
        "data_dir": dir.path(),
    });
    let rt = Runtime::new(&cfg.to_string()).unwrap();
    let desc = |q: Value| -> String {
        let text = rt.definitions(&q.to_string()).unwrap();
        let defs: Vec<Value> = serde_json::from_str(&text).unwrap();
        defs.iter()
            .find(|d| d["function"]["name"] == "execute_code")
            .map(|d| d["function"]["description"].as_str().unwrap().to_string())
            .unwrap_or_default()
    };
    let all = desc(json!({}));
    assert!(all.contains("read_file(path"), "{all}");
    assert!(all.contains("patch(path"), "{all}");
    assert!(!all.contains("terminal(command"), "{all}");
    assert!(!all.contains("web_search("), "{all}");
    let alone = desc(json!({"enabled_toolsets": ["code_execution"]}));
    assert!(!alone.is_empty());
    assert!(!alone.contains("read_file(path"), "{alone}");
    assert!(!alone.contains("Tools the script can call"), "{alone}");
    // A host tool named like an allowed one appears when registered.
    struct Echo;
    impl hermes_core::Tool for Echo {
        fn call(&self, call: hermes_core::ToolCall<'_>) {
            call.reply.send(hermes_core::ToolOutput::ok("{}"));
        }
    }
    rt.register_tool(
        r#"{"name":"web_search","toolset":"web","schema":{"description":"search","parameters":{"type":"object","properties":{"query":{"type":"string"}}}}}"#,
        Arc::new(Echo),
        None,
    )
    .unwrap();
    assert!(desc(json!({})).contains("web_search("));
    assert!(!desc(json!({"disabled_toolsets": ["web"]})).contains("web_search("));
}

/// A host hook sees (and may block) the script's calls, which carry the
/// outer call's task and a call id of their own.
struct BlockWrites(Mutex<Vec<Value>>);

impl hermes_core::hooks::Hook for BlockWrites {
    fn call(&self, event: &Arc<str>, reply: hermes_core::hooks::HookReply) {
        let v: Value = serde_json::from_str(event).unwrap();
        let block = v["tool_name"] == "write_file";
        self.0.lock().unwrap().push(v);
        reply.send(if block {
            json!({"action": "block", "message": "no writes from scripts"}).to_string()
        } else {
            "{}".into()
        });
    }
}

#[test]
fn hooks_see_and_block_the_scripts_calls() {
    let Some(e) = env("local", json!({}), json!({})) else {
        return;
    };
    std::fs::write(e.path("a.txt"), "a\n").unwrap();
    let hook = Arc::new(BlockWrites(Mutex::default()));
    e.rt.add_hook("pre_tool_call", hook.clone()).unwrap();
    let v = e.run(
        "python",
        "from hermes_tools import read_file, write_file\nprint(read_file('a.txt')['total_lines'])\nprint(write_file('b.txt', 'x')['error'])",
    );
    assert_eq!(
        v["output"].as_str().unwrap(),
        "1\nno writes from scripts\n",
        "{v}"
    );
    assert!(!e.path("b.txt").exists());
    let seen = hook.0.lock().unwrap().clone();
    let inner: Vec<&Value> = seen
        .iter()
        .filter(|s| s["tool_name"] != "execute_code")
        .collect();
    assert_eq!(inner.len(), 2, "{seen:?}");
    assert_eq!(inner[0]["tool_name"], "read_file");
    assert_eq!(inner[0]["task_id"], "t");
    assert_eq!(inner[0]["tool_call_id"], "call_outer#1");
    assert_eq!(inner[1]["tool_call_id"], "call_outer#2");
}

/// The channel is MCP: the official MCP Python SDK's `ClientSession`
/// (from `build/venv`, which scripts/setup.sh installs) initializes, lists
/// the run's tools and calls one over the run's socket.
#[test]
fn the_official_mcp_client_speaks_to_the_channel() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = root.join("build/venv/bin/python");
    let has_mcp = std::process::Command::new(&python)
        .args(["-c", "import mcp, anyio"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        has_mcp,
        "build/venv lacks the Python `mcp` SDK: run scripts/setup.sh (it installs it)"
    );
    let Some(e) = env("local", json!({}), json!({})) else {
        return;
    };
    std::fs::write(e.path("a.txt"), "hello\n").unwrap();
    let client =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/code_mcp_client.py");
    let v = e.run(
        "bash",
        &format!("exec {} {}", python.display(), client.display()),
    );
    assert_eq!(v["status"], "success", "{v}");
    let out: Value = serde_json::from_str(v["output"].as_str().unwrap().trim()).unwrap();
    assert_eq!(out["server"], "hermes-tools execute_code", "{out}");
    assert_eq!(
        out["tools"],
        json!([
            "patch",
            "read_file",
            "search_files",
            "terminal",
            "write_file"
        ]),
        "{out}"
    );
    assert_eq!(out["is_error"], false, "{out}");
    assert!(out["text"].as_str().unwrap().contains("1|hello"), "{out}");
    assert_eq!(v["tool_calls_made"], 1, "{v}");
}
