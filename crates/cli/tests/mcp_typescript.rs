//! `hermes-tools mcp serve` against the official TypeScript MCP SDK: the
//! node:test file next to this one (tests/mcp/client.test.mjs), with the SDK
//! that scripts/setup.sh installs into build/tools.

use std::path::Path;
use std::process::Command;

#[test]
fn typescript_sdk_client_against_mcp_serve() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let sdk = root.join("build/tools/node_modules/@modelcontextprotocol/sdk");
    assert!(
        sdk.join("package.json").exists(),
        "{} is missing: run scripts/setup.sh (it installs the TypeScript MCP SDK)",
        sdk.display()
    );
    let work = std::env::temp_dir().join(format!("ht-mcp-ts-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let out = Command::new("node")
        .args(["--test", "--test-concurrency=1"])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.test.mjs"))
        .env("HT_BIN", env!("CARGO_BIN_EXE_hermes-tools"))
        .env("HT_WORK", &work)
        .env("HT_SDK", sdk.canonicalize().unwrap())
        .output()
        .expect("run node --test");
    let _ = std::fs::remove_dir_all(&work);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{text}");
    assert!(out.status.success(), "node --test failed:\n{text}");
}
