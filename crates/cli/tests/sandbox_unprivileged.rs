//! Issue 10: the sandbox holds for a host that is not root. The CLI runs as
//! `nobody` (through `setpriv`), with approvals off so that nothing but the
//! sandbox stands between the commands and the host, and each escape is
//! checked on the host side.

use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::process::Command;

fn usable() -> Result<(), String> {
    // The id command, not geteuid: this crate has no unsafe code.
    let uid = Command::new("id")
        .arg("-u")
        .output()
        .map_err(|e| e.to_string())?;
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        return Err("not root: cannot switch to nobody".into());
    }
    for tool in ["setpriv", "bwrap"] {
        if Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .map_or(true, |o| !o.status.success())
        {
            return Err(format!("{tool} not installed"));
        }
    }
    let probe = nobody(&["bwrap", "--ro-bind", "/", "/", "--unshare-user", "true"]).output();
    match probe {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(format!(
            "bubblewrap cannot start for an unprivileged user here: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Err(e) => Err(e.to_string()),
    }
}

fn nobody(argv: &[&str]) -> Command {
    let mut c = Command::new("setpriv");
    c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .args(argv)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", "/tmp");
    c
}

struct Dir(std::path::PathBuf);
impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn call(config: &str, command: &str) -> Value {
    let args = serde_json::json!({ "command": command }).to_string();
    let out = nobody(&[
        env!("CARGO_BIN_EXE_hermes-tools"),
        "call",
        "--json",
        "--config",
        config,
        "terminal",
        &args,
    ])
    .output()
    .expect("run hermes-tools as nobody");
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.trim()).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {text} / {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn output(v: &Value) -> String {
    // `call --json` prints the tool's result; the terminal's is an object with `output`.
    let r = v.get("result").unwrap_or(v);
    let r: Value = match r {
        Value::String(s) => serde_json::from_str(s).unwrap_or(Value::String(s.clone())),
        other => other.clone(),
    };
    r["output"].as_str().unwrap_or_default().to_string()
}

#[test]
fn the_sandbox_holds_for_an_unprivileged_host() {
    if let Err(why) = usable() {
        eprintln!("skipped: {why}");
        return;
    }
    let dir = Dir(std::env::temp_dir().join(format!("ht-unpriv-{}", std::process::id())));
    std::fs::create_dir_all(&dir.0).unwrap();
    std::fs::set_permissions(&dir.0, std::fs::Permissions::from_mode(0o777)).unwrap();
    let config = dir.0.join("config.json");
    std::fs::write(
        &config,
        serde_json::json!({
            "builtin_toolsets": ["terminal"],
            "terminal": {"backend": "sandbox", "cwd": dir.0},
            "approvals": {"mode": "off"}
        })
        .to_string(),
    )
    .unwrap();
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o644)).unwrap();
    let config = config.to_str().unwrap();

    let v = call(
        config,
        "id -u; grep -E 'NoNewPrivs|CapEff' /proc/self/status",
    );
    let out = output(&v);
    assert!(out.contains("NoNewPrivs:\t1"), "{v}");
    assert!(out.contains("CapEff:\t0000000000000000"), "{v}");

    // The system is read-only, the kernel's knobs too, and nothing outside
    // the working directory is written.
    let probe = format!("/etc/ht-unpriv-{}", std::process::id());
    let outside = format!("/var/tmp/ht-unpriv-{}", std::process::id());
    let v = call(
        config,
        &format!(
            "echo x > {probe}; echo x > {outside}; echo 1 > /proc/sys/kernel/sysrq; \
             grep ' /proc/sys ' /proc/self/mountinfo; echo end"
        ),
    );
    assert!(!std::path::Path::new(&probe).exists(), "wrote {probe}: {v}");
    assert!(
        !std::path::Path::new(&outside).exists(),
        "wrote {outside}: {v}"
    );
    assert!(output(&v).contains(" /proc/sys ro,"), "{v}");

    // The working directory is writable, and what is written lands on the host.
    let v = call(config, "echo inside > inside.txt && cat inside.txt");
    assert_eq!(output(&v), "inside", "{v}");
    assert_eq!(
        std::fs::read_to_string(dir.0.join("inside.txt"))
            .unwrap()
            .trim(),
        "inside"
    );
}

/// On the local backend a command runs as the host's user, so the approval
/// rules can only list the ways to the host's environment; a program that
/// computes the host's pid at run time (the shim's parent) reads
/// `/proc/PID/environ` or attaches with ptrace all the same. The CLI makes
/// itself non-dumpable: the kernel then refuses both, whatever the route.
#[test]
fn a_local_command_cannot_read_or_trace_the_cli() {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    let setpriv = Command::new("sh")
        .args(["-c", "command -v setpriv"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !root.unwrap_or(false) || !setpriv {
        eprintln!("skipped: needs root and setpriv to run the CLI as nobody");
        return;
    }
    let dir = Dir(std::env::temp_dir().join(format!("ht-dumpable-{}", std::process::id())));
    std::fs::create_dir_all(&dir.0).unwrap();
    std::fs::set_permissions(&dir.0, std::fs::Permissions::from_mode(0o777)).unwrap();
    let config = dir.0.join("config.json");
    std::fs::write(
        &config,
        serde_json::json!({
            "builtin_toolsets": ["terminal"],
            "terminal": {"backend": "local", "cwd": dir.0},
            "approvals": {"mode": "off"}
        })
        .to_string(),
    )
    .unwrap();
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o644)).unwrap();
    // The CLI is the parent of the command's shim: found through /proc, as
    // a program of the model's would, then read and attached to.
    let script = r#"h=$(cut -d' ' -f4 /proc/$PPID/stat); echo "host=$h";
tr '\0' '\n' < /proc/$h/environ 2>&1 | grep -c CANARY_VALUE_7f3e; head -c 64 /proc/$h/mem >/dev/null 2>&1; echo "mem=$?";
/usr/bin/python3 -c '
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
r = libc.ptrace(16, int(sys.argv[1]), 0, 0)
print("attach", r, ctypes.get_errno())
if r == 0: libc.ptrace(17, int(sys.argv[1]), 0, 0)
' "$h""#;
    let args = serde_json::json!({ "command": script }).to_string();
    let out = nobody(&[
        env!("CARGO_BIN_EXE_hermes-tools"),
        "call",
        "--json",
        "--config",
        config.to_str().unwrap(),
        "terminal",
        &args,
    ])
    .env("HT_TEST_TOKEN", "CANARY_VALUE_7f3e")
    .output()
    .expect("run hermes-tools as nobody");
    let text = String::from_utf8_lossy(&out.stdout);
    let v: Value = serde_json::from_str(text.trim()).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {text} / {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let o = output(&v);
    assert!(o.contains("host="), "{v}");
    assert!(
        !o.contains("CANARY_VALUE_7f3e"),
        "the host's environment leaked: {v}"
    );
    // grep -c prints 0 (the read failed with Permission denied, or found nothing).
    assert!(o.lines().any(|l| l.trim() == "0"), "{v}");
    assert!(o.contains("mem=1"), "{v}");
    assert!(
        o.contains("attach -1 1"),
        "ptrace attach to the CLI was not refused: {v}"
    );
}
