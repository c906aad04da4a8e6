//! The docker and podman terminal backends against a real dockerd
//! (networking off, its own storage) and a real podman (its own storage),
//! with a small image built from this machine's files; skipped with a
//! printed reason only when the engine cannot start. Each scenario runs on
//! both engines: the lockdown, the terminal, process and file tools as on
//! the local backend, process groups killed inside on timeout, a container
//! killed from outside mid-call, cleanup on close and after a crash.

use crate::common;
use crate::container_common;

use container_common::Engine;
use hermes_runtime::Runtime;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::{Duration, Instant};

macro_rules! engine_or_skip {
    ($e:expr) => {
        match $e {
            Ok(e) => e,
            Err(why) => {
                eprintln!("SKIPPED: {why}");
                return;
            }
        }
    };
}

/// One test per engine for each scenario.
macro_rules! on_both {
    ($scenario:ident) => {
        mod $scenario {
            #[test]
            fn docker() {
                super::$scenario(engine_or_skip!(super::container_common::docker()));
            }
            #[test]
            fn podman() {
                super::$scenario(engine_or_skip!(super::container_common::podman()));
            }
        }
    };
}

fn workspace(e: &Engine, name: &str) -> PathBuf {
    let w = e.dir.join("ws").join(name);
    std::fs::create_dir_all(&w).unwrap();
    w
}

fn runtime(e: &Engine, toolsets: &[&str], extra: Value) -> Runtime {
    try_runtime(e, toolsets, extra).expect("runtime")
}

fn try_runtime(
    e: &Engine,
    toolsets: &[&str],
    extra: Value,
) -> Result<Runtime, hermes_core::error::Error> {
    let mut term = json!({"backend": e.name, "kill_grace": 0.5, "docker": e.section()});
    if let (Value::Object(t), Value::Object(x)) = (&mut term, extra) {
        for (k, v) in x {
            if k == "docker" {
                if let (Some(Value::Object(s)), Value::Object(o)) = (t.get_mut("docker"), v) {
                    s.extend(o);
                }
            } else {
                t.insert(k, v);
            }
        }
    }
    let data = tempfile::tempdir().unwrap().keep();
    let cfg = json!({
        "builtin_toolsets": toolsets,
        "terminal": term,
        "data_dir": data,
        "approvals": {"mode": "off"},
    });
    Runtime::new(&cfg.to_string())
}

fn call(rt: &Runtime, tool: &str, task: &str, args: Value) -> Value {
    common::call(rt, tool, task, args)
}

fn sh(rt: &Runtime, task: &str, cmd: &str) -> Value {
    call(rt, "terminal", task, json!({"command": cmd}))
}

/// Processes of this machine (containers included) whose command line has `needle`.
fn pgrep(needle: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|s| s.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let Ok(cmd) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            s.rsplit_once(')')
                .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
        });
        if cmd.starts_with(needle) && !zombie {
            out.push(format!("{pid}: {cmd}"));
        }
    }
    out
}

fn wait_for(within: Duration, f: impl Fn() -> bool) -> bool {
    let until = Instant::now() + within;
    while Instant::now() < until {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    f()
}

fn commands_run_in_a_locked_down_container(e: &Engine) {
    let rt = runtime(e, &["terminal"], json!({}));
    let v = sh(&rt, "t", "echo hi");
    assert_eq!(v["output"], "hi", "{v}");
    assert_eq!(v["exit_code"], 0);
    let v = sh(&rt, "t", "echo out; echo err >&2; exit 3");
    assert_eq!(v["output"], "out\nerr", "{v}");
    assert_eq!(v["exit_code"], 3);
    // no capabilities, no new privileges, no network but loopback
    let v = sh(
        &rt,
        "t",
        "while read -r k v; do case $k in CapEff:|CapBnd:|NoNewPrivs:) echo $k$v;; esac; done </proc/self/status; \
         while read -r l; do case $l in *:*) echo ${l%%:*};; esac; done </proc/net/dev",
    );
    assert_eq!(
        v["output"], "CapEff:0000000000000000\nCapBnd:0000000000000000\nNoNewPrivs:1\nlo",
        "{v}"
    );
    // the image's world, not this machine's: no cargo here
    let v = sh(
        &rt,
        "t",
        "command -v cargo || echo none; echo ${CARGO_MANIFEST_DIR-unset}",
    );
    assert_eq!(v["output"], "none\nunset", "{v}");
    // stdin closed, no tty
    let v = sh(
        &rt,
        "t",
        "read x; echo \"rc:$?\"; test -t 1 && echo TTY || echo PIPE",
    );
    assert_eq!(v["output"], "rc:1\nPIPE", "{v}");
    let v = call(
        &rt,
        "terminal",
        "t",
        json!({"command": "test -t 1 && echo TTY", "pty": true}),
    );
    assert!(v["output"].as_str().unwrap().starts_with("TTY"), "{v}");
}
on_both!(commands_run_in_a_locked_down_container);

fn cwd_and_env_persist_per_task(e: &Engine) {
    let rt = runtime(e, &["terminal"], json!({}));
    let v = sh(
        &rt,
        "a",
        "cd /tmp && mkdir -p 'a dir' && cd 'a dir' && export HT_FOO='bar baz'",
    );
    assert_eq!(v["exit_code"], 0, "{v}");
    let v = sh(&rt, "a", "pwd; echo \"foo=$HT_FOO\"");
    assert_eq!(v["output"], "/tmp/a dir\nfoo=bar baz", "{v}");
    sh(&rt, "a", "unset HT_FOO");
    let v = sh(&rt, "a", "echo \"foo=${HT_FOO-unset}\"");
    assert_eq!(v["output"], "foo=unset", "{v}");
    let v = sh(&rt, "b", "pwd; echo \"foo=${HT_FOO-unset}\"");
    assert_eq!(v["output"], "/root\nfoo=unset", "{v}");
    // stdin is empty, as on the local backend: a reader ends at once.
    let v = call(
        &rt,
        "terminal",
        "b",
        json!({"command": "cat; echo read-done", "timeout": 10}),
    );
    assert_eq!(v["output"], "read-done", "{v}");
    assert_eq!(v["exit_code"], 0, "{v}");
}
on_both!(cwd_and_env_persist_per_task);

fn timeout_kills_the_process_group_inside(e: &Engine) {
    let rt = runtime(e, &["terminal"], json!({}));
    let tag = if e.name == "docker" { "31" } else { "32" };
    let v = call(
        &rt,
        "terminal",
        "t",
        json!({"command": format!("echo before; sleep 3{tag}.81 | sleep 3{tag}.82"), "timeout": 1}),
    );
    assert_eq!(v["exit_code"], 124, "{v}");
    assert!(v["output"].as_str().unwrap().starts_with("before"), "{v}");
    for n in [".81", ".82"] {
        let needle = format!("sleep 3{tag}{n}");
        assert!(
            wait_for(Duration::from_secs(3), || pgrep(&needle).is_empty()),
            "left inside: {:?}",
            pgrep(&needle)
        );
    }
}
on_both!(timeout_kills_the_process_group_inside);

fn background_processes_with_poll_log_kill_wait(e: &Engine) {
    let rt = runtime(e, &["terminal"], json!({}));
    let tag = if e.name == "docker" { "51" } else { "52" };
    let v = call(
        &rt,
        "terminal",
        "t",
        json!({"command": format!("for i in 1 2 3; do echo line$i; sleep 0.1; done; sleep 5{tag}.1"), "background": true}),
    );
    let id = v["session_id"].as_str().expect("session id").to_string();
    let poll = || {
        call(
            &rt,
            "process",
            "t",
            json!({"action": "poll", "session_id": id}),
        )
    };
    assert!(
        wait_for(Duration::from_secs(5), || poll()["output_preview"]
            .as_str()
            .unwrap_or("")
            .contains("line3")),
        "{}",
        poll()
    );
    assert_eq!(poll()["status"], "running");
    let log = call(
        &rt,
        "process",
        "t",
        json!({"action": "log", "session_id": id}),
    );
    assert!(
        log["output"]
            .as_str()
            .unwrap_or("")
            .contains("line1\nline2\nline3"),
        "{log}"
    );
    let needle = format!("sleep 5{tag}.1");
    assert!(wait_for(Duration::from_secs(3), || !pgrep(&needle).is_empty()));
    let k = call(
        &rt,
        "process",
        "t",
        json!({"action": "kill", "session_id": id}),
    );
    assert!(k["error"].is_null(), "{k}");
    assert!(
        wait_for(Duration::from_secs(3), || pgrep(&needle).is_empty()),
        "{:?}",
        pgrep(&needle)
    );
    let v = call(
        &rt,
        "terminal",
        "t",
        json!({"command": "sleep 0.3; echo finished; exit 7", "background": true}),
    );
    let id = v["session_id"].as_str().unwrap().to_string();
    let w = call(
        &rt,
        "process",
        "t",
        json!({"action": "wait", "session_id": id, "timeout": 10}),
    );
    assert_eq!(w["exit_code"], 7, "{w}");
    assert!(
        w["output"].as_str().unwrap_or("").contains("finished"),
        "{w}"
    );
}
on_both!(background_processes_with_poll_log_kill_wait);

fn file_tools_work_in_the_container(e: &Engine) {
    let work = workspace(e, "files");
    let rt = runtime(
        e,
        &["terminal", "file"],
        json!({"cwd": work.display().to_string()}),
    );
    // the workspace is bind-mounted at the same path and is the default directory
    assert_eq!(sh(&rt, "t", "pwd")["output"], work.display().to_string());
    let f = work.join("notes.txt");
    let v = call(
        &rt,
        "write_file",
        "t",
        json!({"path": "notes.txt", "content": "alpha\nbeta\ngamma\n"}),
    );
    assert!(v["error"].is_null(), "{v}");
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "alpha\nbeta\ngamma\n");
    let v = call(&rt, "read_file", "t", json!({"path": "notes.txt"}));
    assert!(v["content"].as_str().unwrap().contains("beta"), "{v}");
    let v = call(
        &rt,
        "patch",
        "t",
        json!({"mode": "replace", "path": "notes.txt", "old_string": "beta", "new_string": "BETA"}),
    );
    assert!(v["error"].is_null(), "{v}");
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "alpha\nBETA\ngamma\n");
    // a file only the container has: the file tools see the container's files
    sh(
        &rt,
        "t",
        "mkdir -p /tmp/inside && echo 'only BETA inside' > /tmp/inside/x.txt && cd /tmp/inside",
    );
    let v = call(&rt, "read_file", "t", json!({"path": "x.txt"}));
    assert!(
        v["content"]
            .as_str()
            .unwrap_or("")
            .contains("only BETA inside"),
        "{v}"
    );
    assert!(!std::path::Path::new("/tmp/inside/x.txt").exists());
    let v = call(
        &rt,
        "search_files",
        "t",
        json!({"pattern": "BETA", "path": work.display().to_string()}),
    );
    assert!(v.to_string().contains("notes.txt"), "{v}");
    let v = call(
        &rt,
        "search_files",
        "t",
        json!({"pattern": "*.txt", "target": "files", "path": "/tmp/inside"}),
    );
    assert!(v.to_string().contains("x.txt"), "{v}");
}
on_both!(file_tools_work_in_the_container);

/// A client that answers the first "is it running?" after `flag` appears
/// with "true", as a daemon that has not yet seen its container die does
/// (dockerd reports an exec's SIGKILL before it marks the container
/// stopped); every other call goes to the real client.
fn lagging_client(e: &Engine, flag: &std::path::Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let w = e.dir.join(format!("lagging-{}", std::process::id()));
    std::fs::write(
        &w,
        format!(
            "#!/bin/sh\ncase \"$*\" in *State.Running*) if rm {flag} 2>/dev/null; then echo true; exit 0; fi;; esac\nexec {} \"$@\"\n",
            e.client.display(),
            flag = flag.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&w, std::fs::Permissions::from_mode(0o755)).unwrap();
    w
}

fn a_container_killed_mid_call_is_reported_and_replaced(e: &Engine) {
    let flag = e.dir.join(format!("lag-{}", std::process::id()));
    let client = lagging_client(e, &flag);
    let rt = std::sync::Arc::new(runtime(
        e,
        &["terminal"],
        json!({"docker": {"client": client}}),
    ));
    // Containers are named after their short id by default: this one is
    // the runtime's (other tests' containers run on the same engine).
    let host = sh(&rt, "t", "cat /etc/hostname")["output"]
        .as_str()
        .unwrap()
        .to_string();
    // A command SIGKILLed on its own leaves its container alone.
    let v = sh(&rt, "t", "sh -c 'kill -9 $$'");
    assert_eq!(v["exit_code"], 137, "{v}");
    assert!(v["error"].is_null(), "{v}");
    assert_eq!(sh(&rt, "t", "cat /etc/hostname")["output"], host);
    let tag = if e.name == "docker" { "71" } else { "72" };
    let cmd = format!("echo started; sleep 7{tag}.1; echo never");
    let h = common::sh_in_thread(&rt, "t", &cmd);
    let needle = format!("sleep 7{tag}.1");
    assert!(wait_for(Duration::from_secs(30), || !pgrep(&needle).is_empty()));
    // the runtime's own container, killed from outside
    let mine: Vec<String> = e
        .ours()
        .into_iter()
        .filter(|id| host.starts_with(id.as_str()) || id.starts_with(&host))
        .collect();
    assert_eq!(mine.len(), 1, "{host} in {mine:?}");
    std::fs::write(&flag, "").unwrap();
    let st = e.cmd().args(["kill"]).args(&mine).output().unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let v: Value = serde_json::from_str(&h.join().unwrap()).unwrap();
    let err = v["error"].as_str().unwrap_or("");
    assert!(err.contains("stopped during the command"), "{v}");
    assert!(v["output"].as_str().unwrap().starts_with("started"), "{v}");
    // the next call runs in a new container; the task's directory is kept
    let v = sh(&rt, "t", "echo again");
    assert_eq!(v["output"], "again", "{v}");
    assert_ne!(sh(&rt, "t", "cat /etc/hostname")["output"], host);
}
on_both!(a_container_killed_mid_call_is_reported_and_replaced);

fn close_removes_the_container_and_a_crashed_owners_are_reaped(e: &Engine) {
    // A container left by a process that is gone (pid 999999 never runs here).
    let boot: String = std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .unwrap()
        .trim()
        .chars()
        .filter(|c| c.is_ascii_hexdigit())
        .take(8)
        .collect();
    let mut run = e.cmd();
    run.args(["run", "-d", "--label"])
        .arg(format!("hermes-tools.owner={boot}-999999-1"))
        .args(&e.run_args)
        .args([
            "--network=none",
            "--entrypoint",
            "bash",
            container_common::IMAGE,
            "-c",
            "sleep 1000",
        ]);
    let out = run.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let orphan = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let rt = runtime(e, &["terminal"], json!({}));
    assert_eq!(sh(&rt, "t", "echo x")["output"], "x");
    let ours = e.ours();
    assert!(
        !ours.iter().any(|id| orphan.starts_with(id.as_str())),
        "the crashed owner's container is still there: {ours:?}"
    );
    // Containers are named after their short id by default: this is ours.
    let host = sh(&rt, "t", "cat /etc/hostname")["output"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        ours.iter().any(|id| id.starts_with(&host)),
        "{host} not in {ours:?}"
    );
    let tag = if e.name == "docker" { "61" } else { "62" };
    call(
        &rt,
        "terminal",
        "a",
        json!({"command": format!("sleep 6{tag}.1"), "background": true}),
    );
    let needle = format!("sleep 6{tag}.1");
    assert!(wait_for(Duration::from_secs(5), || !pgrep(&needle).is_empty()));
    rt.close();
    drop(rt);
    assert!(wait_for(Duration::from_secs(5), || pgrep(&needle).is_empty()));
    let left = e.ours();
    assert!(
        !left.iter().any(|id| id.starts_with(&host)),
        "the runtime's container {host} is still there: {left:?}"
    );
}
on_both!(close_removes_the_container_and_a_crashed_owners_are_reaped);

#[test]
fn config_errors_are_one_line() {
    for (docker, want) in [
        (Value::Null, "needs a terminal.docker section"),
        (json!({"image": ""}), "is not an image name"),
        (
            json!({"image": "x", "run_args": ["--privileged"]}),
            "not allowed",
        ),
        (
            json!({"image": "x", "run_args": ["--cap-add=ALL"]}),
            "not allowed",
        ),
        (
            json!({"image": "x", "memory": "lots"}),
            "terminal.docker.memory",
        ),
        (json!({"image": "x", "engine": "lxc"}), "unknown engine"),
        (
            json!({"image": "x", "workspace": "relative"}),
            "terminal.docker.workspace",
        ),
        (json!({"image": "x", "bogus": 1}), "bogus"),
    ] {
        let mut term = json!({"backend": "docker"});
        if !docker.is_null() {
            term["docker"] = docker;
        }
        let cfg = json!({"builtin_toolsets": ["terminal"], "terminal": term});
        let err = Runtime::new(&cfg.to_string())
            .err()
            .expect("error")
            .to_string();
        assert!(err.contains(want), "{err} (want {want})");
        assert!(!err.contains('\n'), "{err}");
    }
}

fn a_missing_image_is_a_clear_error(e: &Engine) {
    let err = try_runtime(
        e,
        &["terminal"],
        json!({"docker": {"image": "hermes-tools-no-such:0"}}),
    )
    .err()
    .expect("error")
    .to_string();
    assert!(
        err.contains("cannot start a container from image 'hermes-tools-no-such:0'"),
        "{err}"
    );
    assert!(!err.contains('\n'), "{err}");
}
on_both!(a_missing_image_is_a_clear_error);

fn approval_prompts_say_where_the_command_runs(e: &Engine) {
    let mut term = json!({"backend": e.name, "docker": e.section()});
    term["kill_grace"] = json!(0.5);
    let cfg = json!({"builtin_toolsets": ["terminal"], "terminal": term});
    let rt = Runtime::new(&cfg.to_string()).unwrap();
    struct No(std::sync::Mutex<Vec<String>>);
    impl hermes_runtime::ApprovalSink for No {
        fn ask(&self, request: &std::sync::Arc<str>, id: u64) {
            self.0.lock().unwrap().push(request.to_string());
            hermes_runtime::approvals::respond(id, "deny".into());
        }
    }
    let no = std::sync::Arc::new(No(Default::default()));
    rt.set_approval_sink(false, Some(no.clone())).unwrap();
    let v = sh(&rt, "t", "rm -rf /root/ht-never-there-dir");
    assert!(
        v.to_string().contains("BLOCKED") || v["status"] == "blocked",
        "{v}"
    );
    let asked = no.0.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    let req: Value = serde_json::from_str(&asked[0]).unwrap();
    assert_eq!(
        req["runs_on"],
        format!(
            "in a {} container (image {})",
            e.name,
            container_common::IMAGE
        ),
        "{req}"
    );
}
on_both!(approval_prompts_say_where_the_command_runs);

/// One container per task: tasks see their own container (its own files
/// outside the shared workspace), the file tools of a task reach the
/// task's container, a task's cleanup removes its container, and past
/// `max_containers` a new task gets a clear error until one is cleaned up.
fn each_task_has_its_own_container(e: &Engine) {
    let rt = runtime(
        e,
        &["terminal", "file"],
        json!({"docker": {"max_containers": 3}}),
    );
    let host = |task: &str| {
        sh(&rt, task, "cat /etc/hostname")["output"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let (a, b) = (host("a"), host("b"));
    assert_ne!(a, b, "tasks a and b share a container");
    assert_eq!(host("a"), a, "task a keeps its container");
    // files outside the workspace are the task's own
    let w = call(
        &rt,
        "write_file",
        "a",
        json!({"path": "/tmp/only-in-a.txt", "content": "A\n"}),
    );
    assert!(w.get("error").is_none(), "{w}");
    assert_eq!(sh(&rt, "a", "cat /tmp/only-in-a.txt")["output"], "A");
    let v = sh(&rt, "b", "test -e /tmp/only-in-a.txt; echo $?");
    assert_eq!(v["output"], "1", "{v}");
    let r = call(&rt, "read_file", "b", json!({"path": "/tmp/only-in-a.txt"}));
    assert!(r.get("error").is_some(), "{r}");
    // default (the boot) + a + b = 3: one more task is refused clearly
    let v = sh(&rt, "c", "echo c");
    let err = v["error"].as_str().unwrap_or("");
    assert!(err.contains("max_containers = 3"), "{v}");
    // a's cleanup removes its container and makes room for c
    rt.cleanup_task("a");
    assert!(
        !e.ours().iter().any(|id| a.starts_with(id.as_str())),
        "task a's container {a} is still there"
    );
    assert_eq!(sh(&rt, "c", "echo c")["output"], "c");
    rt.cleanup_task("c");
    // a comes back in a fresh container
    let a2 = host("a");
    let v = sh(&rt, "a", "test -e /tmp/only-in-a.txt; echo $?");
    assert_eq!(v["output"], "1", "{v}");
    assert_ne!(a2, a);
}
on_both!(each_task_has_its_own_container);

/// This machine's engine clients waiting, as prestarted execs, for a
/// command of the container whose id starts with `host`: their pids.
fn prestarted(host: &str) -> Vec<i32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(cmd) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let args: Vec<String> = cmd
            .split(|b| *b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        let live = std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            s.rsplit_once(')')
                .is_some_and(|(_, r)| !r.trim_start().starts_with('Z'))
        });
        // The engine client itself, not the process shim that runs it.
        if live
            && !args[0].contains("ht-shim-")
            && args.iter().any(|a| a == "exec")
            && args.iter().any(|a| a.starts_with(host))
            && args.iter().any(|a| a.starts_with("__ht_s=$(</dev/stdin)"))
        {
            out.push(pid);
        }
    }
    out
}

/// Each task keeps two execs started ahead of its next commands; a command
/// that takes one behaves as a cold one (cwd and env, empty stdin, exit
/// status, a timeout killing inside), another is started behind it, and
/// cleanup, close and `prestart: 0` leave none.
fn prestarted_execs_run_commands_as_cold_ones_do(e: &Engine) {
    let rt = runtime(e, &["terminal"], json!({}));
    let host = sh(&rt, "w", "cat /etc/hostname")["output"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!host.is_empty());
    let first = prestarted(&host);
    assert_eq!(
        first.len(),
        2,
        "two execs wait for the task's next commands"
    );
    let v = sh(&rt, "w", "exit 7");
    assert_eq!(v["exit_code"], 7, "{v}");
    let second = prestarted(&host);
    assert_eq!(second.len(), 2, "{second:?}");
    assert_eq!(
        first.iter().filter(|p| !second.contains(p)).count(),
        1,
        "one waiting exec ran the command and another took its place: {first:?} {second:?}"
    );
    assert_eq!(sh(&rt, "w", "cd /tmp && export HT_WARM=1")["exit_code"], 0);
    // The script arrived whole and stdin is then empty: `cat` ends at once.
    let v = call(
        &rt,
        "terminal",
        "w",
        json!({"command": "cat; echo \"[$HT_WARM] $PWD\"", "timeout": 20}),
    );
    assert_eq!(v["output"], "[1] /tmp", "{v}");
    assert_eq!(v["exit_code"], 0, "{v}");
    // A long script (over a pipe's 64 KiB) goes through whole.
    let long = format!("x={}; echo ${{#x}}", "y".repeat(100_000));
    assert_eq!(sh(&rt, "w", &long)["output"], "100000");
    // A timeout reaches the process group of a prestarted exec's command.
    let tag = if e.name == "docker" { "81" } else { "82" };
    let needle = format!("sleep 3{tag}.91");
    let v = call(
        &rt,
        "terminal",
        "w",
        json!({"command": format!("echo before; {needle}"), "timeout": 1}),
    );
    assert_eq!(v["exit_code"], 124, "{v}");
    assert!(
        wait_for(Duration::from_secs(3), || pgrep(&needle).is_empty()),
        "left inside: {:?}",
        pgrep(&needle)
    );
    // A task's cleanup stops its waiting exec; the next command starts over.
    rt.cleanup_task("w");
    assert!(
        wait_for(Duration::from_secs(3), || prestarted(&host).is_empty()),
        "{:?}",
        prestarted(&host)
    );
    let host2 = sh(&rt, "w", "cat /etc/hostname")["output"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(prestarted(&host2).len(), 2);
    rt.close();
    drop(rt);
    assert!(
        wait_for(Duration::from_secs(3), || prestarted(&host2).is_empty()),
        "{:?}",
        prestarted(&host2)
    );
    // Off by config: every command is a cold exec.
    let rt = runtime(e, &["terminal"], json!({"docker": {"prestart": 0}}));
    let host = sh(&rt, "w", "cat /etc/hostname")["output"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(sh(&rt, "w", "echo cold")["output"], "cold");
    assert!(prestarted(&host).is_empty());
}
on_both!(prestarted_execs_run_commands_as_cold_ones_do);

/// The engine's containers named after a runtime of process `pid`.
fn containers_of(e: &Engine, pid: u32) -> Vec<String> {
    let mut c = std::process::Command::new(&e.client);
    if let Some(h) = &e.host {
        c.args(["-H", h]);
    }
    let out = c
        .args([
            "ps",
            "-aq",
            "--filter",
            &format!("name=hermes-tools-ht{pid}x"),
        ])
        .output()
        .expect("engine client");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(String::from)
        .collect()
}

/// The host of `a_killed_host_leaves_no_container`: this test binary run
/// again with `HT_CONTAINER_HOST` set to a runtime config; it starts a
/// command in its container and waits to be killed.
#[test]
fn container_host_child() {
    let Ok(cfg) = std::env::var("HT_CONTAINER_HOST") else {
        return;
    };
    let rt = Runtime::new(&cfg).expect("runtime");
    let v = sh(&rt, "k", "echo up");
    println!("started {v}");
    std::thread::sleep(Duration::from_secs(120));
}

/// A host killed outright (SIGKILL: no close, no destructor) leaves no
/// container behind: the process shim's watcher removes them.
fn a_killed_host_leaves_no_container(e: &Engine) {
    let cfg = json!({"builtin_toolsets": ["terminal"],
        "terminal": {"backend": e.name, "docker": e.section()}});
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "backend_container::container_host_child",
            "--nocapture",
        ])
        .env("HT_CONTAINER_HOST", cfg.to_string())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let until = Instant::now() + Duration::from_secs(120);
    while containers_of(e, pid).is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(
        !containers_of(e, pid).is_empty(),
        "the host started no container"
    );
    child.kill().unwrap();
    let _ = child.wait();
    let until = Instant::now() + Duration::from_secs(30);
    while !containers_of(e, pid).is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(
        containers_of(e, pid).is_empty(),
        "left behind by a killed host: {:?}",
        containers_of(e, pid)
    );
}
on_both!(a_killed_host_leaves_no_container);
