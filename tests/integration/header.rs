//! The committed header must match the code; `HT_BLESS=1` rewrites it.
//! Also checks that the version macros match Cargo.toml and the ABI constant.

use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn generate() -> String {
    let config = cbindgen::Config::from_file(root().join("cbindgen.toml")).expect("cbindgen.toml");
    let mut out = Vec::new();
    cbindgen::Builder::new()
        .with_crate(root().join("crates/ffi"))
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut out);
    String::from_utf8(out).expect("utf-8 header")
}

#[test]
fn header_matches_code() {
    let path = root().join("include/hermes_tools.h");
    let fresh = generate();
    if std::env::var_os("HT_BLESS").is_some() {
        std::fs::write(&path, &fresh).expect("write header");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "include/hermes_tools.h is out of date with the Rust sources: run `HT_BLESS=1 cargo test --test integration header` and commit it"
    );
}

#[test]
fn version_macros_match_cargo() {
    let header = std::fs::read_to_string(root().join("include/hermes_tools.h")).expect("header");
    let v = env!("CARGO_PKG_VERSION");
    let parts: Vec<&str> = v.split('.').collect();
    assert!(
        header.contains(&format!("#define HT_VERSION \"{v}\"")),
        "HT_VERSION must be {v}"
    );
    assert!(header.contains(&format!("#define HT_VERSION_MAJOR {}", parts[0])));
    assert!(header.contains(&format!("#define HT_VERSION_MINOR {}", parts[1])));
    assert!(header.contains(&format!("#define HT_VERSION_PATCH {}", parts[2])));
    assert!(header.contains(&format!(
        "#define HT_ABI_VERSION {}",
        hermes_tools::ffi::api::ht_abi_version()
    )));
}

/// Every exported function wraps its body in the panic boundary.
#[test]
fn every_export_has_a_panic_boundary() {
    let mut missing = Vec::new();
    let mut count = 0;
    for entry in std::fs::read_dir(root().join("crates/ffi/src")).expect("crates/ffi/src") {
        let path = entry.expect("entry").path();
        let text = std::fs::read_to_string(&path).expect("read");
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if line.contains("#[unsafe(no_mangle)]") {
                count += 1;
                let window = lines[i..(i + 16).min(lines.len())].join("\n");
                let body_start = window.find('{').unwrap_or(0);
                let body = &window[body_start..];
                if !(body.contains("boundary(")) {
                    missing.push(format!("{}:{}", path.display(), i + 1));
                }
            }
        }
    }
    assert!(count >= 30, "found only {count} exports");
    assert!(
        missing.is_empty(),
        "exports without boundary(): {missing:?}"
    );
}
