//! `hermes-tools mcp serve` against the official Python MCP SDK: the pytest
//! file next to this one (tests/mcp/test_mcp_server.py), run with the
//! project's build/venv (scripts/setup.sh installs `mcp` there).

use std::path::Path;
use std::process::Command;

#[test]
fn python_sdk_client_against_mcp_serve() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = root.join("build/venv/bin/python");
    let has_mcp = Command::new(&python)
        .args(["-c", "import mcp, pytest"])
        .status()
        .is_ok_and(|s| s.success());
    if !has_mcp {
        panic!(
            "build/venv lacks the Python `mcp` SDK or pytest: run scripts/setup.sh (it installs them)"
        );
    }
    let work = std::env::temp_dir().join(format!("ht-mcp-py-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let out = Command::new(&python)
        .args(["-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/test_mcp_server.py"))
        .env("HT_BIN", env!("CARGO_BIN_EXE_hermes-tools"))
        .env("HT_WORK", &work)
        .output()
        .expect("run pytest");
    let _ = std::fs::remove_dir_all(&work);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{text}");
    assert!(out.status.success(), "pytest failed:\n{text}");
}
