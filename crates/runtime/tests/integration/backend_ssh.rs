//! The ssh terminal backend against a real sshd on 127.0.0.1 (started per
//! test with throwaway keys; skipped with a printed reason only when sshd
//! cannot start): the terminal, process and file tools as on the local
//! backend, remote process groups killed on timeout, host keys checked, a
//! connection killed mid-call and the next call reconnecting.

use crate::common;
use crate::ssh_common;

use hermes_runtime::Runtime;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

fn runtime(sshd: &ssh_common::Sshd, toolsets: &[&str], extra: Value) -> Runtime {
    try_runtime(sshd, toolsets, extra).expect("runtime")
}

fn try_runtime(
    sshd: &ssh_common::Sshd,
    toolsets: &[&str],
    extra: Value,
) -> Result<Runtime, hermes_core::error::Error> {
    let mut ssh = sshd.section();
    let mut term = json!({"backend": "ssh", "kill_grace": 0.5});
    if let (Value::Object(t), Value::Object(x)) = (&mut term, extra) {
        for (k, v) in x {
            if k == "ssh" {
                if let (Value::Object(s), Value::Object(o)) = (&mut ssh, v) {
                    s.extend(o);
                }
            } else {
                t.insert(k, v);
            }
        }
    }
    term["ssh"] = ssh;
    let data = sshd.path("data");
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

/// Processes on this machine (where sshd runs) whose command line has `needle`.
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
        if cmd.contains(needle) && !zombie && pid != std::process::id().to_string() {
            out.push(format!("{pid}: {cmd}"));
        }
    }
    out
}

fn wait_gone(needle: &str, within: Duration) -> Vec<String> {
    let until = Instant::now() + within;
    loop {
        let left = pgrep(needle);
        if left.is_empty() || Instant::now() > until {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn commands_run_remotely_with_the_local_result_shape() {
    let sshd = sshd_or_skip!();
    let rt = runtime(&sshd, &["terminal"], json!({}));
    let v = sh(&rt, "t", "echo hi");
    assert_eq!(v["output"], "hi", "{v}");
    assert_eq!(v["exit_code"], 0);
    assert!(v["error"].is_null(), "{v}");
    let v = sh(&rt, "t", "echo out; echo err >&2; exit 3");
    assert_eq!(v["output"], "out\nerr", "{v}");
    assert_eq!(v["exit_code"], 3);
    let v = sh(&rt, "t", "printf 'a\\nb\\n' | grep zzz");
    assert_eq!(v["exit_code"], 1);
    assert_eq!(v["exit_code_meaning"], "No matches found (not an error)");
    // it ran through sshd: the session variables say so; the home is the remote one
    let v = sh(&rt, "t", "echo ${SSH_CONNECTION:+via-ssh}; pwd");
    assert_eq!(v["output"], "via-ssh\n/root", "{v}");
    // a command's own exit status 255 is not a lost connection
    let v = sh(&rt, "t", "exit 255");
    assert_eq!(v["exit_code"], 255, "{v}");
    assert!(v["error"].is_null(), "{v}");
    // non-interactive defaults, stdin closed, no controlling terminal
    let v = sh(
        &rt,
        "t",
        "read x; echo \"got:$x rc:$?\"; echo $CI $GIT_TERMINAL_PROMPT $PAGER $TERM",
    );
    assert_eq!(v["output"], "got: rc:1\n1 0 cat dumb", "{v}");
    let v = sh(&rt, "t", "echo x > /dev/tty && echo opened || echo no-tty");
    assert!(v["output"].as_str().unwrap().ends_with("no-tty"), "{v}");
    // this process's secrets are not sent over
    let v = sh(
        &rt,
        "t",
        "echo ${HOSTNAME_HT_NOPE-none} ${CARGO_MANIFEST_DIR-none}",
    );
    assert_eq!(v["output"], "none none", "{v}");
}

#[test]
fn cwd_and_env_persist_per_task() {
    let sshd = sshd_or_skip!();
    let rt = runtime(&sshd, &["terminal"], json!({}));
    let dir = sshd.path("work dir");
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.display().to_string();
    let v = sh(
        &rt,
        "a",
        &format!("cd '{d}' && export HT_FOO='bar baz' && HT_LOCAL=1"),
    );
    assert_eq!(v["exit_code"], 0, "{v}");
    let v = sh(&rt, "a", "pwd; echo \"foo=$HT_FOO\"");
    assert_eq!(v["output"], format!("{d}\nfoo=bar baz"), "{v}");
    sh(&rt, "a", "unset HT_FOO");
    let v = sh(&rt, "a", "echo \"foo=${HT_FOO-unset}\"");
    assert_eq!(v["output"], "foo=unset");
    // a variable of the remote login unset stays unset
    sh(&rt, "a", "unset LOGNAME");
    let v = sh(&rt, "a", "echo \"${LOGNAME-gone}\"");
    assert_eq!(v["output"], "gone", "{v}");
    // another task is isolated
    let v = sh(&rt, "b", "pwd; echo \"foo=${HT_FOO-unset}\"");
    assert_eq!(v["output"], "/root\nfoo=unset", "{v}");
    // per-task overrides through the API
    let term = rt.terminal().unwrap().clone();
    term.set_task_cwd("c", &d).unwrap();
    assert!(term.set_task_cwd("c", "/no/such/dir/ht").is_err());
    term.set_task_env("c", &json!({"HT_OVR": "yes"})).unwrap();
    let v = sh(&rt, "c", "pwd; echo $HT_OVR");
    assert_eq!(v["output"], format!("{d}\nyes"), "{v}");
    // workdir parameter: checked on the remote side
    let v = call(
        &rt,
        "terminal",
        "d",
        json!({"command": "pwd", "workdir": "/tmp"}),
    );
    assert_eq!(v["output"], "/tmp", "{v}");
    let v = call(
        &rt,
        "terminal",
        "d",
        json!({"command": "pwd", "workdir": "/no/such/dir/ht"}),
    );
    assert!(
        v["error"]
            .as_str()
            .unwrap_or("")
            .contains("workdir does not exist"),
        "{v}"
    );
    // PTY commands keep state too
    call(
        &rt,
        "terminal",
        "p",
        json!({"command": "cd / && export HT_P=1", "pty": true}),
    );
    let v = sh(&rt, "p", "pwd; echo $HT_P");
    assert_eq!(v["output"], "/\n1", "{v}");
}

#[test]
fn timeout_kills_the_remote_process_group() {
    let sshd = sshd_or_skip!();
    let rt = runtime(&sshd, &["terminal"], json!({}));
    let t0 = Instant::now();
    let v = call(
        &rt,
        "terminal",
        "t",
        // 313.83 leaves the group and session: its mark still finds it
        json!({"command": r#"echo before; bash -c "python3 -c 'import os; os.setsid(); os.execvp(\"sleep\", [\"sleep\", \"313.83\"])' >/dev/null 2>&1 & sleep 313.81 & sleep 313.82""#, "timeout": 1}),
    );
    let took = t0.elapsed();
    assert_eq!(v["exit_code"], 124, "{v}");
    let out = v["output"].as_str().unwrap();
    assert!(out.starts_with("before"), "{v}");
    assert!(out.contains("timed out after 1s"), "{v}");
    // Bounds for a loaded machine; a command left waiting would take 313 s.
    assert!(took < Duration::from_secs(20), "{took:?}");
    for n in ["313.81", "313.82", "313.83"] {
        let left = wait_gone(n, Duration::from_secs(10));
        assert!(left.is_empty(), "left on the remote side: {left:?}");
    }
}

#[test]
fn grandchild_holding_the_pipe_does_not_block() {
    let sshd = sshd_or_skip!();
    let rt = runtime(&sshd, &["terminal"], json!({}));
    let t0 = Instant::now();
    let v = sh(&rt, "t", "bash -c 'sleep 414.3 &'; echo done");
    assert_eq!(v["output"], "done", "{v}");
    // A call held by the grandchild would take 414 s.
    assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", t0.elapsed());
    let left = wait_gone("414.3", Duration::from_secs(10));
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn pty_mode_sees_a_tty() {
    let sshd = sshd_or_skip!();
    let rt = runtime(&sshd, &["terminal"], json!({}));
    let v = call(
        &rt,
        "terminal",
        "t",
        json!({"command": "test -t 0 && test -t 1 && echo TTY; tty", "pty": true}),
    );
    let out = v["output"].as_str().unwrap();
    assert!(out.starts_with("TTY\n/dev/pts/"), "{v}");
    let v = sh(&rt, "t", "test -t 1 && echo TTY || echo PIPE");
    assert_eq!(v["output"], "PIPE");
}

#[test]
fn background_processes_run_remotely_with_poll_log_wait_kill() {
    let sshd = sshd_or_skip!();
    let rt = runtime(&sshd, &["terminal"], json!({}));
    let v = call(
        &rt,
        "terminal",
        "t",
        json!({"command": "for i in 1 2 3; do echo line$i; sleep 0.1; done; sleep 515.1", "background": true}),
    );
    let id = v["session_id"].as_str().expect("session id").to_string();
    // output streams back while it runs
    let until = Instant::now() + Duration::from_secs(5);
    let mut polled = Value::Null;
    while Instant::now() < until {
        polled = call(
            &rt,
            "process",
            "t",
            json!({"action": "poll", "session_id": id}),
        );
        if polled["output_preview"]
            .as_str()
            .unwrap_or("")
            .contains("line3")
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        polled["output_preview"]
            .as_str()
            .unwrap_or("")
            .contains("line3"),
        "{polled}"
    );
    assert_eq!(polled["status"], "running", "{polled}");
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
    assert!(!pgrep("sleep 515.1").is_empty());
    let k = call(
        &rt,
        "process",
        "t",
        json!({"action": "kill", "session_id": id}),
    );
    assert!(k["error"].is_null(), "{k}");
    let left = wait_gone("515.1", Duration::from_secs(3));
    assert!(left.is_empty(), "left on the remote side: {left:?}");
    // wait returns the exit status of a short one
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

#[test]
fn task_cleanup_and_close_kill_what_runs_remotely() {
    let sshd = sshd_or_skip!();
    let rt = runtime(&sshd, &["terminal"], json!({}));
    call(
        &rt,
        "terminal",
        "a",
        json!({"command": "sleep 616.1", "background": true}),
    );
    call(
        &rt,
        "terminal",
        "b",
        json!({"command": "sleep 616.2", "background": true}),
    );
    assert!(wait_for(|| pgrep("sleep 616.1")
        .iter()
        .any(|l| l.contains(": sleep 616.1"))));
    rt.cleanup_task("a");
    let left = wait_gone("616.1", Duration::from_secs(3));
    assert!(left.is_empty(), "{left:?}");
    assert!(!pgrep("sleep 616.2").is_empty());
    rt.close();
    drop(rt);
    let left = wait_gone("616.2", Duration::from_secs(3));
    assert!(left.is_empty(), "{left:?}");
    // the master connection is gone too
    let masters = pgrep(&format!("-p {} -l root -i", sshd.port));
    assert!(masters.is_empty(), "{masters:?}");
}

/// The ssh master processes (`-M`) connected to this test's sshd.
fn masters_of(sshd: &ssh_common::Sshd) -> Vec<String> {
    let needle = format!("-p {} -l root -i", sshd.port);
    pgrep(&needle)
        .into_iter()
        .filter(|l| l.contains(" -M "))
        .collect()
}

fn wait_for(f: impl Fn() -> bool) -> bool {
    let until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < until {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[test]
fn file_tools_work_over_the_connection() {
    let sshd = sshd_or_skip!();
    let work = sshd.path("files");
    std::fs::create_dir_all(&work).unwrap();
    let rt = runtime(
        &sshd,
        &["terminal", "file"],
        json!({"cwd": work.display().to_string()}),
    );
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
    assert_eq!(v["total_lines"], 3, "{v}");
    let v = call(
        &rt,
        "patch",
        "t",
        json!({"mode": "replace", "path": "notes.txt", "old_string": "beta", "new_string": "BETA"}),
    );
    assert!(v["error"].is_null(), "{v}");
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "alpha\nBETA\ngamma\n");
    // relative paths follow the terminal's cd
    std::fs::create_dir_all(work.join("sub")).unwrap();
    std::fs::write(
        work.join("sub/deep.rs"),
        "fn main() { println!(\"BETA\"); }\n",
    )
    .unwrap();
    sh(&rt, "t", "cd sub");
    let v = call(&rt, "read_file", "t", json!({"path": "deep.rs"}));
    assert!(
        v["content"].as_str().unwrap_or("").contains("println"),
        "{v}"
    );
    let v = call(&rt, "read_file", "t", json!({"path": "missing.txt"}));
    assert!(v["error"].as_str().is_some(), "{v}");
    let v = call(
        &rt,
        "search_files",
        "t",
        json!({"pattern": "BETA", "path": work.display().to_string()}),
    );
    let text = v.to_string();
    assert!(
        text.contains("notes.txt") && text.contains("deep.rs"),
        "{v}"
    );
    let v = call(
        &rt,
        "search_files",
        "t",
        json!({"pattern": "*.rs", "target": "files", "path": work.display().to_string()}),
    );
    assert!(v.to_string().contains("deep.rs"), "{v}");
    assert!(!v.to_string().contains("notes.txt"), "{v}");
    // no temporary files left behind by the atomic writes
    let names: Vec<String> = std::fs::read_dir(&work)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.contains("ht-tmp")), "{names:?}");
}

#[test]
fn unknown_host_keys_are_refused_unless_accepting_new_ones() {
    let sshd = sshd_or_skip!();
    let empty = sshd.path("empty_known_hosts");
    std::fs::write(&empty, "").unwrap();
    let err = try_runtime(
        &sshd,
        &["terminal"],
        json!({"ssh": {"known_hosts": empty.display().to_string()}}),
    )
    .err()
    .expect("refused");
    let msg = err.to_string();
    assert!(msg.contains("Host key verification failed"), "{msg}");
    assert!(!msg.contains('\n'), "one line: {msg}");
    // accept-new: the key is learnt and written
    let rt = runtime(
        &sshd,
        &["terminal"],
        json!({"ssh": {"known_hosts": empty.display().to_string(), "accept_new_host_keys": true}}),
    );
    assert_eq!(sh(&rt, "t", "echo ok")["output"], "ok");
    assert!(
        std::fs::read_to_string(&empty)
            .unwrap()
            .contains("ssh-ed25519")
    );
    // a changed key is refused even then
    let hostpub = std::fs::read_to_string(sshd.path("clientkey.pub")).unwrap();
    let wrong = sshd.path("wrong_known_hosts");
    std::fs::write(
        &wrong,
        format!("[127.0.0.1]:{} {}", sshd.port, hostpub.trim()),
    )
    .unwrap();
    let err = try_runtime(
        &sshd,
        &["terminal"],
        json!({"ssh": {"known_hosts": wrong.display().to_string(), "accept_new_host_keys": true}}),
    )
    .err()
    .expect("refused");
    assert!(err.to_string().contains("verification failed"), "{err}");
}

#[test]
fn config_errors_are_one_line() {
    for (ssh, want) in [
        (Value::Null, "needs a terminal.ssh section"),
        (json!({"host": ""}), "terminal.ssh.host is required"),
        (json!({"host": "-oProxyCommand=x"}), "is not a host name"),
        (json!({"host": "h", "port": 0}), "terminal.ssh.port"),
        (
            json!({"host": "h", "identity_file": "/no/such/key"}),
            "terminal.ssh.identity_file",
        ),
        (
            json!({"host": "h", "options": ["Bad"]}),
            "terminal.ssh.options",
        ),
        (json!({"host": "h", "bogus": 1}), "bogus"),
    ] {
        let mut term = json!({"backend": "ssh"});
        if !ssh.is_null() {
            term["ssh"] = ssh;
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

#[test]
fn approval_prompts_say_where_the_command_runs() {
    let sshd = sshd_or_skip!();
    let mut ssh = sshd.section();
    ssh["port"] = json!(sshd.port);
    let cfg = json!({
        "builtin_toolsets": ["terminal"],
        "terminal": {"backend": "ssh", "ssh": ssh},
        "data_dir": sshd.path("data"),
    });
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
        format!("on ssh root@127.0.0.1:{}", sshd.port),
        "{req}"
    );
}

#[test]
fn a_connection_killed_mid_call_is_reported_and_the_next_call_reconnects() {
    let sshd = sshd_or_skip!();
    let masters = || masters_of(&sshd);
    let rt = std::sync::Arc::new(runtime(&sshd, &["terminal"], json!({})));
    // the runtime learnt the remote side over the default task's connection
    let before = masters();
    assert_eq!(before.len(), 1, "{before:?}");
    assert_eq!(sh(&rt, "t", "echo warm")["output"], "warm");
    // task t has a connection of its own: kill that one
    let masters: Vec<String> = masters()
        .into_iter()
        .filter(|m| !before.contains(m))
        .collect();
    assert_eq!(masters.len(), 1, "{masters:?}");
    let master: i32 = masters[0].split(':').next().unwrap().parse().unwrap();
    let h = common::sh_in_thread(&rt, "t", "echo started; sleep 717.1; echo never");
    // the remote command itself (not a client whose command line names it)
    assert!(wait_for(|| pgrep("sleep 717.1")
        .iter()
        .any(|l| l.contains(": sleep 717.1"))));
    std::process::Command::new("kill")
        .args(["-9", &master.to_string()])
        .status()
        .unwrap();
    let v: Value = serde_json::from_str(&h.join().unwrap()).unwrap();
    let err = v["error"].as_str().unwrap_or("");
    assert!(
        err.contains("lost during the command; it may have partly run"),
        "{v}"
    );
    assert!(v["output"].as_str().unwrap().starts_with("started"), "{v}");
    // the next call reconnects, and what the cut call left there is ended
    let v = sh(&rt, "t", "echo again");
    assert_eq!(v["output"], "again", "{v}");
    let left = wait_gone("717.1", Duration::from_secs(3));
    assert!(left.is_empty(), "{left:?}");
}

/// One connection per task: a task's commands go over its own master, a
/// dropped connection of one task leaves the others' running commands
/// alone, and a task's cleanup closes its connection.
#[test]
fn each_task_has_its_own_connection() {
    let sshd = sshd_or_skip!();
    let masters = || masters_of(&sshd);
    let rt = std::sync::Arc::new(runtime(&sshd, &["terminal", "file"], json!({})));
    let base = masters();
    assert_eq!(sh(&rt, "a", "echo a")["output"], "a");
    let after_a = masters();
    assert_eq!(after_a.len(), base.len() + 1, "{after_a:?}");
    let master_a: i32 = after_a
        .iter()
        .find(|m| !base.contains(m))
        .unwrap()
        .split(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    // task b: a second connection, shared by its terminal and file tools
    let h = common::sh_in_thread(&rt, "b", "sleep 2.71; echo b-done");
    assert!(wait_for(|| pgrep("sleep 2.71")
        .iter()
        .any(|l| l.contains(": sleep 2.71"))));
    let all = masters();
    assert_eq!(all.len(), base.len() + 2, "{all:?}");
    let w = call(
        &rt,
        "write_file",
        "b",
        json!({"path": "/tmp/ht-per-task-b.txt", "content": "hi\n"}),
    );
    assert!(w.get("error").is_none(), "{w}");
    assert_eq!(
        masters().len(),
        base.len() + 2,
        "the file tools use b's connection"
    );
    // a's connection dies: b's command is not cut
    std::process::Command::new("kill")
        .args(["-9", &master_a.to_string()])
        .status()
        .unwrap();
    let v: Value = serde_json::from_str(&h.join().unwrap()).unwrap();
    assert_eq!(v["output"], "b-done", "{v}");
    assert_eq!(v["exit_code"], 0, "{v}");
    // a reconnects on its next command
    assert_eq!(sh(&rt, "a", "echo a2")["output"], "a2");
    // cleaning up b closes b's connection
    rt.cleanup_task("b");
    assert!(
        wait_for(|| masters().len() == base.len() + 1),
        "{:?}",
        masters()
    );
    rt.close();
    assert!(wait_for(|| masters().is_empty()), "{:?}", masters());
}

/// `max_connections`: past it, the least recently used idle task's master
/// is closed (never one with a command running), and that task reconnects
/// on its next command with its directory kept.
#[test]
fn idle_connections_past_max_connections_are_closed() {
    let sshd = sshd_or_skip!();
    let masters = || masters_of(&sshd).len();
    let rt = std::sync::Arc::new(runtime(
        &sshd,
        &["terminal"],
        json!({"ssh": {"max_connections": 2}}),
    ));
    assert_eq!(sh(&rt, "a", "cd /tmp && echo a")["output"], "a");
    // b keeps a command running while c connects: b's master must stay.
    let h = common::sh_in_thread(&rt, "b", "sleep 1.93; echo b-done");
    assert!(wait_for(|| pgrep("sleep 1.93")
        .iter()
        .any(|l| l.contains(": sleep 1.93"))));
    assert!(wait_for(|| masters() <= 2), "{} masters", masters());
    assert_eq!(sh(&rt, "c", "echo c")["output"], "c");
    assert!(wait_for(|| masters() <= 2), "{} masters", masters());
    let v: Value = serde_json::from_str(&h.join().unwrap()).unwrap();
    assert_eq!(
        v["output"], "b-done",
        "b's connection was closed under it: {v}"
    );
    // a was closed when c connected; it reconnects and keeps its directory
    assert_eq!(sh(&rt, "a", "pwd")["output"], "/tmp");
    assert!(wait_for(|| masters() <= 2), "{} masters", masters());
}

/// Live processes whose command line is exactly `argv`.
fn procs_exactly(argv: &str) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|p| {
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
            let zombie = stat
                .rfind(')')
                .is_some_and(|i| stat[i + 1..].trim_start().starts_with('Z'));
            !zombie
                && std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| {
                    String::from_utf8_lossy(&c).replace('\0', " ").trim_end() == argv
                })
        })
        .collect()
}

/// The host of `a_killed_host_leaves_no_remote_command`: this test binary
/// run again with `HT_SSH_HOST` set to a runtime config.
#[test]
fn ssh_host_child() {
    let Ok(cfg) = std::env::var("HT_SSH_HOST") else {
        return;
    };
    let rt = Runtime::new(&cfg).expect("runtime");
    let tag = std::env::var("HT_SSH_TAG").unwrap();
    let v = sh(&rt, "k", &format!("/bin/sleep {tag}"));
    println!("ended {v}");
}

/// A host killed outright (SIGKILL: no close) leaves no remote command
/// running: the watcher kills what the runtime started over its still-open
/// master connection (a command without a terminal outlives its client).
#[test]
fn a_killed_host_leaves_no_remote_command() {
    let sshd = sshd_or_skip!();
    let mut ssh = sshd.section();
    ssh["accept_new_host_keys"] = json!(true);
    let cfg = json!({"builtin_toolsets": ["terminal"],
        "terminal": {"backend": "ssh", "ssh": ssh}});
    let tag = format!("{}.{}", 700 + std::process::id() % 97, 3);
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "backend_ssh::ssh_host_child", "--nocapture"])
        .env("HT_SSH_HOST", cfg.to_string())
        .env("HT_SSH_TAG", &tag)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let sleep = format!("/bin/sleep {tag}");
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while procs_exactly(&sleep).is_empty() && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(
        !procs_exactly(&sleep).is_empty(),
        "the remote command never started"
    );
    child.kill().unwrap();
    let _ = child.wait();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !procs_exactly(&sleep).is_empty() && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let left = procs_exactly(&sleep);
    for p in &left {
        let _ = std::process::Command::new("kill")
            .args(["-9", &p.to_string()])
            .status();
    }
    assert!(
        left.is_empty(),
        "the remote command outlived its killed host: {left:?}"
    );
}
