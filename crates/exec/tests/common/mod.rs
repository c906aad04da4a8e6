//! Helpers shared by the attack tests of this crate: replaying a test
//! binary as an unprivileged user, so every attack is tried on both kinds
//! of host (root and not); running one command on a remote-style
//! backend and collecting its output. (Each test binary uses some of them.)
#![allow(dead_code)]

use std::os::unix::fs::PermissionsExt;

/// Run this test binary again as `nobody` (through `setpriv`, from a copy
/// in a folder `nobody` can enter, whatever the target directory's modes)
/// with `args` and `nested` set in its environment; the combined output,
/// after asserting that it succeeded and ran `expect` ("1 passed", ...).
pub fn rerun_as_nobody(args: &[&str], nested: &str, expect: &str) -> String {
    let exe = std::env::current_exe().expect("test binary");
    let dir = std::env::temp_dir().join(format!(
        "ht-as-nobody-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let copy = dir.join("test-binary");
    std::fs::copy(&exe, &copy).unwrap();
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(&copy)
        .args(args)
        .env(nested, "1")
        .env("TMPDIR", "/tmp")
        .current_dir("/")
        .output()
        .expect("setpriv");
    let _ = std::fs::remove_dir_all(&dir);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "as nobody:\n{text}");
    assert!(
        text.contains(expect),
        "as nobody the tests did not run:\n{text}"
    );
    text
}

/// Run `script` as task `task` on `b` (a backend with a far side: its own
/// explanation of an exit is appended to the output), with only a PATH,
/// within `timeout`: the exit code, how it ended and what it printed.
pub fn run_remote(
    b: &dyn hermes_exec::Environment,
    task: &str,
    script: &str,
    cwd: &std::path::Path,
    timeout: std::time::Duration,
) -> (i32, hermes_exec::pump::Ended, String) {
    use hermes_exec::pump::{PumpOpts, pump};
    let env = vec![("PATH".to_string(), "/usr/bin:/bin".to_string())];
    let req = hermes_exec::SpawnRequest {
        script,
        cwd,
        env: &env,
        pty: false,
        extra_rw: &[],
        task,
        linger: false,
    };
    let sp = b.spawn(&req).unwrap();
    let mut out = Vec::new();
    let opts = PumpOpts {
        timeout: Some(timeout),
        ..Default::default()
    };
    let (code, ended) = pump(sp.pid, &sp.output, b, &opts, &mut |d| {
        out.extend_from_slice(d)
    });
    if let Some(m) = b.remote().and_then(|r| r.explain_exit(sp.pid, code)) {
        out.extend_from_slice(m.as_bytes());
    }
    (code, ended, String::from_utf8_lossy(&out).into_owned())
}
