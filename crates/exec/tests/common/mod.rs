//! Helpers shared by the attack tests of this crate: replaying a test
//! binary as an unprivileged user, so every attack is tried on both kinds
//! of host (root and not).

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
