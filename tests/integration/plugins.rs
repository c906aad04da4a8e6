//! Plugin libraries through the C API: the example C plugin
//! (examples/c/plugin/hello_plugin.c) is compiled here with the system C
//! compiler, named in the config's `plugins`, loaded by `ht_runtime_new`, and
//! its tool dispatched; broken plugins (missing file, missing symbol, another
//! ABI, a failing init) are refused with one line naming the file.

use crate::common::*;
use hermes_tools::Status;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Compile a C source into a shared library; None (with the reason printed)
/// when no C compiler runs here.
fn build_so(src: &Path, flags: &[&str], out: &Path) -> Option<PathBuf> {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let r = Command::new(&cc)
        .args([
            "-std=c11", "-Wall", "-Wextra", "-Werror", "-fPIC", "-shared",
        ])
        .arg(format!("-I{}", root().join("include").display()))
        .args(flags)
        .arg(src)
        .arg("-o")
        .arg(out)
        .output();
    match r {
        Ok(o) if o.status.success() => Some(out.to_path_buf()),
        Ok(o) => panic!(
            "{cc} failed on {}: {}",
            src.display(),
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => {
            eprintln!("SKIP: no C compiler ({cc}: {e})");
            None
        }
    }
}

fn example() -> PathBuf {
    root().join("examples/c/plugin/hello_plugin.c")
}

fn config(paths: &[&Path]) -> String {
    let list: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    serde_json::json!({ "plugins": list }).to_string()
}

#[test]
fn example_plugin_loads_and_its_tool_dispatches() {
    let dir = tempfile::tempdir().unwrap();
    let Some(so) = build_so(&example(), &[], &dir.path().join("libhello_plugin.so")) else {
        return;
    };
    let rt = new_rt(&config(&[&so]));
    let names = def_names(&rt, "{}");
    assert!(names.contains(&"plugin_hello".to_string()), "{names:?}");
    // Its own toolset.
    let names = def_names(&rt, r#"{"enabled_toolsets": ["hello-plugin"]}"#);
    assert_eq!(names, vec!["plugin_hello".to_string()]);
    let out = dispatch(&rt, "plugin_hello", r#"{"name": "Ada"}"#);
    let v = json(&out);
    assert_eq!(v["greeting"], "hello from a plugin", "{out}");
    assert_eq!(v["args"]["name"], "Ada", "{out}");
    // The schema is enforced like any tool's.
    let out = dispatch(&rt, "plugin_hello", "{}");
    assert!(out.contains("name"), "{out}");
    drop(rt);

    // The object form with a folder: every *.so in it, and two runtimes at
    // once share the mapping (each one's tools keep it loaded).
    let cfg = serde_json::json!({ "plugins": { "dirs": [dir.path()] } }).to_string();
    let a = new_rt(&cfg);
    let b = new_rt(&cfg);
    drop(a);
    let out = dispatch(&b, "plugin_hello", r#"{"name": "Bo"}"#);
    assert_eq!(json(&out)["args"]["name"], "Bo", "{out}");
}

#[test]
fn broken_plugins_are_refused_with_one_line_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let Some(fails) = build_so(&example(), &["-DHELLO_FAIL"], &d.join("libfails.so")) else {
        return;
    };
    let other_abi = build_so(&example(), &["-DHELLO_ABI=99"], &d.join("libabi99.so")).unwrap();
    let plain = d.join("plain.c");
    std::fs::write(&plain, "int not_a_plugin(void) { return 1; }\n").unwrap();
    let no_symbol = build_so(&plain, &[], &d.join("libplain.so")).unwrap();
    let no_init_src = d.join("noinit.c");
    std::fs::write(
        &no_init_src,
        "#include \"hermes_tools.h\"\nHT_PLUGIN_DECLARE_ABI;\n",
    )
    .unwrap();
    let no_init = build_so(&no_init_src, &[], &d.join("libnoinit.so")).unwrap();
    let not_elf = d.join("libtext.so");
    std::fs::write(&not_elf, "not a library").unwrap();
    let missing = d.join("libmissing.so");

    for (path, want) in [
        (&missing, "no such file"),
        (&not_elf, "cannot load"),
        (&no_symbol, "does not export ht_plugin_abi_version"),
        (&no_init, "does not export ht_plugin_init"),
        (&other_abi, "built for plugin ABI 99, this library speaks 1"),
        (
            &fails,
            "ht_plugin_init failed (status 11): hello plugin: refusing to start (HELLO_FAIL)",
        ),
    ] {
        let (st, msg) = try_new_rt(&config(&[path])).err().expect("refused");
        assert_ne!(st, Status::Ok);
        assert!(
            msg.starts_with(&format!("plugin '{}': ", path.display())),
            "{msg}"
        );
        assert!(msg.contains(want), "{want:?} in {msg}");
        assert!(!msg.contains('\n'), "one line: {msg:?}");
    }

    // Config shape errors name the key.
    let (_, msg) = try_new_rt(r#"{"plugins": {"path": []}}"#).err().unwrap();
    assert!(msg.contains("plugins") && msg.contains("path"), "{msg}");
    let (_, msg) = try_new_rt(r#"{"plugins": {"dirs": ["/nonexistent-ht-dir"]}}"#)
        .err()
        .unwrap();
    assert!(
        msg.contains("plugins.dirs") && msg.contains("/nonexistent-ht-dir"),
        "{msg}"
    );
}

#[test]
fn features_list_mcp_and_plugins() {
    let text = unsafe { std::ffi::CStr::from_ptr(hermes_tools::ffi::api::ht_features()) }
        .to_str()
        .unwrap();
    let v = json(text);
    assert_eq!(v["plugins"]["abi"], 1, "{v}");
    assert_eq!(v["plugins"]["entry"], "ht_plugin_init", "{v}");
    assert_eq!(v["mcp"]["transports"][0], "stdio", "{v}");
    let header = std::fs::read_to_string(root().join("include/hermes_tools.h")).unwrap();
    assert!(header.contains(&format!(
        "#define HT_PLUGIN_ABI_VERSION {}",
        hermes_tools::ffi::plugin::PLUGIN_ABI_VERSION
    )));
}
