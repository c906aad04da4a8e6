//! The file toolset through dispatch, on real files in temporary folders,
//! with arguments exactly as the original's schemas accept them.

use crate::common::*;
use serde_json::json;
use std::os::unix::fs::PermissionsExt;

fn files() -> Env {
    env(&["file"], json!({}))
}

#[test]
fn definitions_keep_the_original_names_and_parameters() {
    let e = env(&["file", "todo", "memory", "skills"], json!({}));
    let defs: serde_json::Value = serde_json::from_str(&e.rt.definitions("{}").unwrap()).unwrap();
    let names: Vec<&str> = defs
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "memory",
            "patch",
            "read_file",
            "search_files",
            "skill_manage",
            "skill_view",
            "skills_list",
            "todo",
            "write_file"
        ]
    );
    let sf = defs
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["function"]["name"] == "search_files")
        .unwrap();
    let props = &sf["function"]["parameters"]["properties"];
    for p in [
        "pattern",
        "target",
        "path",
        "file_glob",
        "limit",
        "offset",
        "output_mode",
        "context",
    ] {
        assert!(props.get(p).is_some(), "{p}");
    }
    assert_eq!(
        props["output_mode"]["enum"],
        json!(["content", "files_only", "count"])
    );
}

#[test]
fn read_file_pages_numbered_lines() {
    let e = files();
    write(&e.path("a.txt"), "one\ntwo\nthree\n");
    let v = e.call("read_file", json!({"path": "a.txt"}));
    assert_eq!(v["content"], "1|one\n2|two\n3|three", "{v}");
    assert_eq!(v["total_lines"], 3);
    assert_eq!(v["truncated"], false);
    assert_eq!(v["is_binary"], false);
    assert_eq!(v["file_size"], 14);
    // a last line without newline counts
    write(&e.path("b.txt"), "x\ny");
    let v = e.call("read_file", json!({"path": e.path("b.txt")}));
    assert_eq!(v["total_lines"], 2);
    assert_eq!(v["content"], "1|x\n2|y");
    // paging
    let body: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    write(&e.path("c.txt"), &body);
    let v = e.call(
        "read_file",
        json!({"path": "c.txt", "offset": 4, "limit": 3}),
    );
    assert_eq!(v["content"], "4|line 4\n5|line 5\n6|line 6");
    assert_eq!(v["truncated"], true);
    assert_eq!(
        v["hint"],
        "Use offset=7 to continue reading (showing 4-6 of 10 lines)"
    );
    // long lines are cut; BOM stripped
    let long = format!("\u{feff}{}\n", "x".repeat(2500));
    write(&e.path("d.txt"), &long);
    let v = e.call("read_file", json!({"path": "d.txt"}));
    let c = v["content"].as_str().unwrap();
    assert!(c.starts_with("1|xxx"), "{c:.20}");
    assert!(c.ends_with("... [truncated]"));
    assert_eq!(c.len(), "1|".len() + 2000 + "... [truncated]".len());
}

#[test]
fn read_file_char_budget_gives_next_offset() {
    let e = env(&["file"], json!({"file": {"max_read_chars": 1000}}));
    let body: String = (1..=200).map(|i| format!("row {i:04}\n")).collect();
    write(&e.path("big.txt"), &body);
    let v = e.call("read_file", json!({"path": "big.txt"}));
    assert_eq!(v["truncated"], true);
    assert_eq!(v["truncated_by"], "bytes");
    let next = v["next_offset"].as_u64().unwrap();
    assert!(next > 50 && next < 200, "{v}");
    assert!(v["content"].as_str().unwrap().len() <= 1000);
    let v2 = e.call("read_file", json!({"path": "big.txt", "offset": next}));
    assert!(
        v2["content"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{next}|row {next:04}"))
    );
}

#[test]
fn read_file_refusals() {
    let e = files();
    std::fs::write(e.path("bin.dat"), b"\x00\x01\x02binary\x00stuff").unwrap();
    let v = e.call("read_file", json!({"path": "bin.dat"}));
    assert_eq!(v["is_binary"], true);
    assert!(v["error"].as_str().unwrap().contains("binary"), "{v}");
    std::fs::write(e.path("pic.png"), b"\x89PNG....").unwrap();
    let v = e.call("read_file", json!({"path": "pic.png"}));
    assert_eq!(v["is_image"], true);
    assert!(v.get("error").is_none());
    let v = e.call("read_file", json!({"path": "/dev/zero"}));
    assert!(v["error"].as_str().unwrap().contains("device"), "{v}");
    write(&e.path("config.yaml"), "a: 1\n");
    let v = e.call("read_file", json!({"path": "config.yml"}));
    assert!(v["error"].as_str().unwrap().starts_with("File not found:"));
    assert_eq!(v["total_lines"], 0);
    assert!(
        v["similar_files"][0]
            .as_str()
            .unwrap()
            .ends_with("config.yaml"),
        "{v}"
    );
    std::fs::create_dir_all(e.path("sub")).unwrap();
    let v = e.call("read_file", json!({"path": "sub"}));
    assert!(v["error"].as_str().unwrap().contains("directory"));
}

#[test]
fn read_file_loop_guard_and_reset() {
    let e = files();
    write(&e.path("a.txt"), "hello\n");
    let v = e.call("read_file", json!({"path": "a.txt"}));
    assert_eq!(v["content"], "1|hello");
    let v = e.call("read_file", json!({"path": "a.txt"}));
    assert_eq!(v["status"], "unchanged", "{v}");
    assert_eq!(v["dedup"], true);
    assert_eq!(v["content_returned"], false);
    let v = e.call("read_file", json!({"path": "a.txt"}));
    assert!(v["error"].as_str().unwrap().starts_with("BLOCKED"), "{v}");
    assert_eq!(v["already_read"], 3);
    // another call resets the counters (the content is still known: a stub)
    e.call("write_file", json!({"path": "other.txt", "content": "x"}));
    let v = e.call("read_file", json!({"path": "a.txt"}));
    assert_eq!(v["status"], "unchanged", "{v}");
    // a change of the file gives the content again
    std::thread::sleep(std::time::Duration::from_millis(20));
    write(&e.path("a.txt"), "changed\n");
    let v = e.call("read_file", json!({"path": "a.txt"}));
    assert_eq!(v["content"], "1|changed");
    // other tasks have their own history
    let v = call(&e.rt, "read_file", "other", json!({"path": "a.txt"}));
    assert_eq!(v["content"], "1|changed");
}

#[test]
fn write_file_atomic_with_parents_mode_crlf_bom() {
    let e = files();
    let v = e.call(
        "write_file",
        json!({"path": "deep/er/new.txt", "content": "hi\n"}),
    );
    assert_eq!(v["bytes_written"], 3, "{v}");
    assert_eq!(v["dirs_created"], true);
    let abs = e.path("deep/er/new.txt");
    assert_eq!(v["resolved_path"], abs.display().to_string());
    assert_eq!(v["files_modified"], json!([abs.display().to_string()]));
    assert_eq!(v["lint"]["status"], "skipped");
    assert_eq!(read(&abs), "hi\n");
    // mode kept
    let script = e.path("run.sh");
    write(&script, "#!/bin/sh\n");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    e.call(
        "write_file",
        json!({"path": "run.sh", "content": "#!/bin/sh\necho hi\n"}),
    );
    let mode = std::fs::metadata(&script).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o755);
    // CRLF and BOM kept
    std::fs::write(e.path("win.txt"), b"\xEF\xBB\xBFa\r\nb\r\n").unwrap();
    e.call(
        "write_file",
        json!({"path": "win.txt", "content": "x\ny\n"}),
    );
    assert_eq!(
        std::fs::read(e.path("win.txt")).unwrap(),
        b"\xEF\xBB\xBFx\r\ny\r\n"
    );
    // no temporary files left behind
    let leftovers: Vec<_> = std::fs::read_dir(e.root())
        .unwrap()
        .flatten()
        .filter(|d| d.file_name().to_string_lossy().contains("ht-tmp"))
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn write_file_checks_structured_syntax_first() {
    let e = files();
    for (name, bad) in [
        ("a.json", "{\"a\": 1,}"),
        ("a.yaml", "a: [1, 2\n"),
        ("a.toml", "a = \n"),
    ] {
        let v = e.call("write_file", json!({"path": name, "content": bad}));
        let err = v["error"].as_str().unwrap_or_else(|| panic!("{name}: {v}"));
        assert!(err.starts_with("Refusing to write"), "{err}");
        assert!(!e.path(name).exists(), "{name} must not be written");
    }
    let v = e.call(
        "write_file",
        json!({"path": "ok.json", "content": "{\"a\": [1]}"}),
    );
    assert_eq!(v["lint"]["status"], "ok", "{v}");
    let v = e.call(
        "write_file",
        json!({"path": "x.txt", "content": "1|foo\n2|bar\n3|baz\n"}),
    );
    assert!(v["error"].as_str().unwrap().contains("read_file output"));
    let v = e.call("write_file", json!({"path": "x.txt"}));
    assert!(v["error"].as_str().is_some(), "{v}");
}

#[test]
fn write_file_warns_when_file_changed_since_read() {
    let e = files();
    write(&e.path("s.txt"), "v1\n");
    e.call("read_file", json!({"path": "s.txt"}));
    std::thread::sleep(std::time::Duration::from_millis(20));
    write(&e.path("s.txt"), "v2 from elsewhere\n");
    let v = e.call("write_file", json!({"path": "s.txt", "content": "v3\n"}));
    assert!(
        v["_warning"].as_str().unwrap().contains("modified since"),
        "{v}"
    );
    // partial read
    let body: String = (1..=30).map(|i| format!("{i}\n")).collect();
    write(&e.path("p.txt"), &body);
    e.call(
        "read_file",
        json!({"path": "p.txt", "offset": 10, "limit": 5}),
    );
    let v = e.call("write_file", json!({"path": "p.txt", "content": "new\n"}));
    assert!(v["_warning"].as_str().unwrap().contains("partial"), "{v}");
}

#[test]
fn patch_replace_exact_fuzzy_and_errors() {
    let e = files();
    let f = e.path("m.py");
    write(
        &f,
        "def f():\n    a = 1\n    return a\n\ndef g():\n    return 2\n",
    );
    let v = e.call(
        "patch",
        json!({"mode": "replace", "path": "m.py", "old_string": "a = 1", "new_string": "a = 10"}),
    );
    assert_eq!(v["success"], true, "{v}");
    let diff = v["diff"].as_str().unwrap();
    assert!(diff.contains("-    a = 1\n+    a = 10"), "{diff}");
    assert!(diff.starts_with("--- a/"), "{diff}");
    assert_eq!(v["files_modified"][0], f.display().to_string());
    // indentation-insensitive, re-indented
    let v = e.call(
        "patch",
        json!({"mode": "replace", "path": "m.py", "old_string": "def g():\nreturn 2", "new_string": "def g():\n    x = 3\n    return x"}),
    );
    assert_eq!(v["success"], true, "{v}");
    assert!(
        read(&f).contains("def g():\n    x = 3\n    return x\n"),
        "{}",
        read(&f)
    );
    // no match: clear error with suggestions
    let v = e.call(
        "patch",
        json!({"mode": "replace", "path": "m.py", "old_string": "def ff(): pass", "new_string": "z"}),
    );
    assert_eq!(v["success"], false);
    assert!(
        v["error"].as_str().unwrap().contains("Could not find"),
        "{v}"
    );
    // several matches
    write(&e.path("r.txt"), "x = 1\ny = 2\nx = 1\n");
    let v = e.call(
        "patch",
        json!({"mode": "replace", "path": "r.txt", "old_string": "x = 1", "new_string": "x = 9"}),
    );
    assert!(
        v["error"].as_str().unwrap().contains("Found 2 matches"),
        "{v}"
    );
    let v = e.call(
        "patch",
        json!({"mode": "replace", "path": "r.txt", "old_string": "x = 1", "new_string": "x = 9", "replace_all": true}),
    );
    assert_eq!(v["success"], true);
    assert_eq!(read(&e.path("r.txt")), "x = 9\ny = 2\nx = 9\n");
    // identical strings, missing file, missing args
    let v = e.call(
        "patch",
        json!({"mode": "replace", "path": "r.txt", "old_string": "y", "new_string": "y"}),
    );
    assert!(v["error"].as_str().unwrap().contains("identical"));
    let v = e.call(
        "patch",
        json!({"mode": "replace", "path": "nope.txt", "old_string": "a", "new_string": "b"}),
    );
    assert!(v["error"].as_str().unwrap().contains("File not found"));
    let v = e.call("patch", json!({"mode": "replace", "path": "r.txt"}));
    assert!(v["error"].as_str().unwrap().contains("old_string"));
}

#[test]
fn patch_keeps_crlf_and_checks_json() {
    let e = files();
    std::fs::write(e.path("w.txt"), b"alpha\r\nbeta\r\n").unwrap();
    let v = e.call(
        "patch",
        json!({"mode": "replace", "path": "w.txt", "old_string": "beta", "new_string": "gamma"}),
    );
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(
        std::fs::read(e.path("w.txt")).unwrap(),
        b"alpha\r\ngamma\r\n"
    );
    write(&e.path("c.json"), "{\"a\": 1}\n");
    let v = e.call(
        "patch",
        json!({"mode": "replace", "path": "c.json", "old_string": "\"a\": 1", "new_string": "\"a\": 1,"}),
    );
    assert_eq!(v["success"], false, "{v}");
    assert_eq!(read(&e.path("c.json")), "{\"a\": 1}\n");
}

#[test]
fn patch_v4a_multi_file_all_or_nothing() {
    let e = files();
    write(&e.path("a.txt"), "one\ntwo\nthree\n");
    write(&e.path("del.txt"), "bye\n");
    write(&e.path("mv.txt"), "moving\n");
    let p = "*** Begin Patch\n*** Update File: a.txt\n@@ one\n one\n-two\n+TWO\n three\n*** Add File: sub/new.txt\n+fresh\n+file\n*** Delete File: del.txt\n*** Move File: mv.txt -> moved.txt\n*** End Patch\n";
    let v = e.call("patch", json!({"mode": "patch", "patch": p}));
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(read(&e.path("a.txt")), "one\nTWO\nthree\n");
    assert_eq!(read(&e.path("sub/new.txt")), "fresh\nfile\n");
    assert!(!e.path("del.txt").exists());
    assert!(!e.path("mv.txt").exists());
    assert_eq!(read(&e.path("moved.txt")), "moving\n");
    assert_eq!(v["files_created"], json!(["sub/new.txt", "moved.txt"]));
    assert_eq!(v["files_deleted"], json!(["del.txt", "mv.txt"]));
    assert!(v["diff"].as_str().unwrap().contains("+TWO"));
    // one bad hunk: nothing at all is written
    let bad = "*** Begin Patch\n*** Update File: a.txt\n-TWO\n+2\n*** Update File: a.txt\n-no such line here\n+x\n*** Add File: never.txt\n+x\n*** End Patch\n";
    let v = e.call("patch", json!({"mode": "patch", "patch": bad}));
    assert_eq!(v["success"], false);
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .starts_with("Patch validation failed (no files were modified)"),
        "{v}"
    );
    assert_eq!(read(&e.path("a.txt")), "one\nTWO\nthree\n");
    assert!(!e.path("never.txt").exists());
    // '..' in a header is refused
    let v = e.call(
        "patch",
        json!({"mode": "patch", "patch": "*** Add File: ../escape.txt\n+x\n"}),
    );
    assert_eq!(v["success"], false);
    assert!(!e.dir.path().join("escape.txt").exists());
}

fn tree(e: &Env) {
    std::fs::create_dir_all(e.path(".git")).unwrap();
    write(&e.path(".gitignore"), "ignored/\n*.log\n");
    write(
        &e.path("src/main.rs"),
        "fn main() {\n    println!(\"hello\");\n}\n",
    );
    write(&e.path("src/lib.rs"), "pub fn hello() {}\n// hello again\n");
    write(&e.path("README.md"), "say hello\n");
    write(&e.path("ignored/x.rs"), "hello hidden\n");
    write(&e.path("debug.log"), "hello log\n");
    write(&e.path(".env"), "HELLO=secret\n");
}

#[test]
fn search_content_modes_gitignore_and_true_totals() {
    let e = files();
    tree(&e);
    let v = e.call("search_files", json!({"pattern": "hello"}));
    assert_eq!(v["total_count"], 4, "{v}");
    let m = v["matches"].as_array().unwrap();
    assert_eq!(m.len(), 4);
    assert_eq!(
        m[0],
        json!({"path": "./README.md", "line": 1, "content": "say hello"})
    );
    assert!(!v.to_string().contains("hidden"));
    assert!(!v.to_string().contains("hello log"));
    let v = e.call(
        "search_files",
        json!({"pattern": "hello", "output_mode": "files_only"}),
    );
    assert_eq!(
        v["files"],
        json!(["./README.md", "./src/lib.rs", "./src/main.rs"])
    );
    let v = e.call(
        "search_files",
        json!({"pattern": "hello", "output_mode": "count"}),
    );
    assert_eq!(v["total_count"], 4);
    assert_eq!(v["counts"]["./src/lib.rs"], 2);
    let v = e.call(
        "search_files",
        json!({"pattern": "hel+o", "file_glob": "*.rs", "path": "src"}),
    );
    assert_eq!(v["total_count"], 3, "{v}");
    assert!(
        v["matches"][0]["path"]
            .as_str()
            .unwrap()
            .starts_with("src/")
    );
    // true totals past the page; offset pages
    let body: String = (0..120).map(|i| format!("needle {i}\n")).collect();
    write(&e.path("many.txt"), &body);
    let v = e.call(
        "search_files",
        json!({"pattern": "needle", "limit": 10, "offset": 20}),
    );
    assert_eq!(v["total_count"], 120, "{v}");
    assert_eq!(v["truncated"], true);
    let text = v["matches_text"].as_str().unwrap();
    assert!(text.starts_with("./many.txt\n  21: needle 20"), "{text}");
    assert!(text.ends_with("  30: needle 29"), "{text}");
    // context lines
    let v = e.call("search_files", json!({"pattern": "println", "context": 1}));
    let text = v["matches_text"].as_str().unwrap();
    assert!(text.contains("  1- fn main() {"), "{text}");
    assert!(text.contains("  2:     println"), "{text}");
}

#[test]
fn search_files_target_and_errors() {
    let e = files();
    tree(&e);
    let v = e.call(
        "search_files",
        json!({"pattern": "*.rs", "target": "files"}),
    );
    assert_eq!(v["total_count"], 2, "{v}");
    let v = e.call("search_files", json!({"pattern": "mai", "target": "files"}));
    assert_eq!(v["files"], json!(["./src/main.rs"]));
    let v = e.call("search_files", json!({"pattern": "x", "path": "nowhere"}));
    assert_eq!(v["total_count"], 0);
    assert!(v["error"].as_str().unwrap().starts_with("Path not found"));
    let v = e.call("search_files", json!({"pattern": "(unclosed"}));
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .starts_with("Search failed: regex parse error"),
        "{v}"
    );
    let v = e.call("search_files", json!({"pattern": "a\\nb"}));
    assert!(
        v["warning"].as_str().is_some() || v["total_count"] == 0,
        "{v}"
    );
}

#[test]
fn workspace_root_and_symlinks() {
    let e = env(&["file"], json!({}));
    let outside = e.dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    write(&outside.join("secret.txt"), "s\n");
    let e2 = {
        let cfg = json!({
            "builtin_toolsets": ["file"],
            "terminal": {"backend": "local", "cwd": e.root()},
            "data_dir": e.data(),
            "workspace_root": e.root(),
        });
        hermes_runtime::Runtime::new(&cfg.to_string()).unwrap()
    };
    std::os::unix::fs::symlink(&outside, e.path("link")).unwrap();
    for p in [
        outside.join("secret.txt").display().to_string(),
        "../outside/secret.txt".into(),
        "link/secret.txt".into(),
    ] {
        let v = call(&e2, "read_file", "t", json!({"path": p}));
        assert!(
            v["error"]
                .as_str()
                .unwrap()
                .contains("outside the workspace root"),
            "{p}: {v}"
        );
        let v = call(&e2, "write_file", "t", json!({"path": p, "content": "x"}));
        assert!(v["error"].as_str().is_some(), "{p}: {v}");
    }
    assert_eq!(read(&outside.join("secret.txt")), "s\n");
    let v = call(
        &e2,
        "write_file",
        "t",
        json!({"path": "in.txt", "content": "ok"}),
    );
    assert_eq!(v["bytes_written"], 2, "{v}");
}

#[test]
fn credential_reads_and_sensitive_writes_need_approval() {
    let e = files();
    write(&e.path(".env"), "TOKEN=abc\n");
    let v = e.call("read_file", json!({"path": ".env"}));
    let err = v["error"].as_str().unwrap();
    assert!(
        err.contains("Access denied") && err.contains("environment file"),
        "{v}"
    );
    write(&e.data().join("auth.json"), "{}");
    let v = e.call("read_file", json!({"path": e.data().join("auth.json")}));
    assert!(v["error"].as_str().unwrap().contains("credential"), "{v}");
    let v = e.call(
        "write_file",
        json!({"path": e.data().join(".env"), "content": "A=1\n"}),
    );
    assert!(
        v["error"].as_str().unwrap().contains("Access denied"),
        "{v}"
    );
    assert!(!e.data().join(".env").exists());
    // search drops credential files
    let v = e.call("search_files", json!({"pattern": "TOKEN"}));
    assert_eq!(v["total_count"], 0, "{v}");
    let v = e.call("search_files", json!({"pattern": "TOKEN", "path": ".env"}));
    assert_eq!(v["total_count"], 0, "{v}");
    assert!(v["_omitted"].as_str().is_some(), "{v}");
    // approvals off: the policy allows
    let off = env(&["file"], json!({"approvals": {"mode": "off"}}));
    write(&off.path(".env"), "TOKEN=abc\n");
    let v = off.call("read_file", json!({"path": ".env"}));
    // allowed, and the secret is redacted like terminal output
    assert_eq!(v["content"], "1|TOKEN=***", "{v}");
}

#[test]
fn sandbox_backend_confines_file_tools() {
    let e = env(&["file"], json!({"terminal": {"backend": "sandbox"}}));
    // the sandbox root is the working directory: set by env() as terminal.cwd
    let cfg = json!({
        "builtin_toolsets": ["file"],
        "terminal": {"backend": "sandbox", "cwd": e.root()},
        "data_dir": e.data(),
    });
    let rt = hermes_runtime::Runtime::new(&cfg.to_string()).unwrap();
    let v = call(
        &rt,
        "write_file",
        "t",
        json!({"path": "in.txt", "content": "ok\n"}),
    );
    assert_eq!(v["bytes_written"], 3, "{v}");
    let v = call(&rt, "read_file", "t", json!({"path": "in.txt"}));
    assert_eq!(v["content"], "1|ok");
    let outside = e.dir.path().join("elsewhere.txt");
    let v = call(
        &rt,
        "write_file",
        "t",
        json!({"path": outside, "content": "no\n"}),
    );
    assert!(v["error"].as_str().unwrap().contains("sandbox"), "{v}");
    assert!(!outside.exists());
    // system folders are readable, not writable
    let v = call(
        &rt,
        "read_file",
        "t",
        json!({"path": "/etc/hostname", "limit": 1}),
    );
    assert!(
        v.get("content").is_some() || v["error"].as_str().unwrap().contains("not found"),
        "{v}"
    );
    let v = call(
        &rt,
        "write_file",
        "t",
        json!({"path": "/etc/ht-test", "content": "x"}),
    );
    assert!(v["error"].as_str().is_some(), "{v}");
}

#[test]
fn file_tools_follow_the_terminal_cwd() {
    let e = env(&["terminal", "file"], json!({"approvals": {"mode": "off"}}));
    std::fs::create_dir_all(e.path("proj")).unwrap();
    write(&e.path("proj/here.txt"), "inside proj\n");
    let v = e.call("terminal", json!({"command": "cd proj"}));
    assert_eq!(v["exit_code"], 0, "{v}");
    let v = e.call("read_file", json!({"path": "here.txt"}));
    assert_eq!(v["content"], "1|inside proj", "{v}");
    // a terminal call between reads resets the loop guard
    assert_eq!(
        e.call("read_file", json!({"path": "here.txt"}))["status"],
        "unchanged"
    );
    e.call("terminal", json!({"command": "true"}));
    assert_eq!(
        e.call("read_file", json!({"path": "here.txt"}))["status"],
        "unchanged"
    );
    e.call("terminal", json!({"command": "true"}));
    let v = e.call("read_file", json!({"path": "here.txt"}));
    assert_eq!(v["status"], "unchanged", "{v}");
}

#[test]
fn repeated_searches_and_failing_patches_get_nudged() {
    let e = files();
    write(&e.path("a.txt"), "alpha\nbeta\n");
    let args = json!({"pattern": "alpha"});
    assert!(
        e.call("search_files", args.clone())
            .get("_warning")
            .is_none()
    );
    assert!(
        e.call("search_files", args.clone())
            .get("_warning")
            .is_none()
    );
    let v = e.call("search_files", args.clone());
    assert!(v["_warning"].as_str().is_some(), "{v}");
    let v = e.call("search_files", args.clone());
    assert!(v["error"].as_str().unwrap().starts_with("BLOCKED"), "{v}");
    // another call in between resets
    e.call("write_file", json!({"path": "b.txt", "content": "b"}));
    let v = e.call("search_files", args);
    assert_eq!(v["total_count"], 1, "{v}");
    for i in 1..=3 {
        let v = e.call(
            "patch",
            json!({"mode": "replace", "path": "a.txt", "old_string": format!("zzz qqq {i}"), "new_string": "x"}),
        );
        let hint = v["_hint"].as_str().unwrap();
        assert_eq!(hint.contains("failed in a row"), i == 3, "{hint}");
    }
}

struct Approver(std::sync::Mutex<Vec<String>>, &'static str);

impl hermes_runtime::ApprovalSink for Approver {
    fn ask(&self, request: &std::sync::Arc<str>, id: u64) {
        self.0.lock().unwrap().push(request.to_string());
        hermes_runtime::approvals::respond(id, self.1.to_string());
    }
}

#[test]
fn the_host_approval_handler_decides_sensitive_paths() {
    let e = files();
    write(&e.path(".env"), "A=1\n");
    let yes = std::sync::Arc::new(Approver(Default::default(), "once"));
    e.rt.set_approval_sink(false, Some(yes.clone())).unwrap();
    let v = e.call("read_file", json!({"path": ".env"}));
    assert_eq!(v["total_lines"], 1, "{v}");
    let asked = yes.0.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    let req: serde_json::Value = serde_json::from_str(&asked[0]).unwrap();
    assert_eq!(req["rules"], json!(["file_read_credentials"]), "{req}");
    assert_eq!(
        req["untrusted_command_text"],
        format!("read_file {}", e.path(".env").display())
    );
    let no = std::sync::Arc::new(Approver(Default::default(), "deny"));
    e.rt.set_approval_sink(false, Some(no)).unwrap();
    let v = e.call(
        "write_file",
        json!({"path": e.data().join("auth.json"), "content": "{}"}),
    );
    assert!(
        v["error"].as_str().unwrap().contains("Access denied"),
        "{v}"
    );
    assert!(!e.data().join("auth.json").exists());
}

#[test]
fn more_refusals() {
    let e = files();
    write(&e.path("a.txt"), "it's here\n");
    // a read_file status message is not content
    let v = e.call(
        "write_file",
        json!({"path": "a.txt", "content": "{\"status\": \"unchanged\", \"dedup\": true, \"content_returned\": false}"}),
    );
    assert!(
        v["error"].as_str().unwrap().contains("status message"),
        "{v}"
    );
    // empty old_string
    let v = e.call(
        "patch",
        json!({"mode": "replace", "path": "a.txt", "old_string": "", "new_string": "x"}),
    );
    assert!(v["error"].as_str().unwrap().contains("empty"), "{v}");
    // double-escaped quotes that the file does not have
    let v = e.call(
        "patch",
        json!({"mode": "replace", "path": "a.txt", "old_string": "it\\'s  here", "new_string": "it\\'s there"}),
    );
    assert_eq!(v["success"], false, "{v}");
    assert_eq!(read(&e.path("a.txt")), "it's here\n");
    // V4A: add an existing file, delete or update a missing one, move onto an existing one
    write(&e.path("b.txt"), "b\n");
    for (p, what) in [
        ("*** Add File: a.txt\n+x\n", "already exists"),
        ("*** Delete File: nope.txt\n", "not found"),
        ("*** Update File: nope.txt\n-a\n+b\n", "not found"),
        ("*** Move File: a.txt -> b.txt\n", "already exists"),
        ("just text\n", "outside a file section"),
        (
            "*** Update File: a.txt\n-nothing like it at all\n+x\n",
            "Could not find",
        ),
    ] {
        let v = e.call("patch", json!({"mode": "patch", "patch": p}));
        assert_eq!(v["success"], false, "{p}");
        assert!(v["error"].as_str().unwrap().contains(what), "{p}: {v}");
    }
    assert_eq!(read(&e.path("a.txt")), "it's here\n");
    assert_eq!(read(&e.path("b.txt")), "b\n");
    let v = e.call("patch", json!({"mode": "patch"}));
    assert!(
        v["error"].as_str().unwrap().contains("patch is required"),
        "{v}"
    );
}

#[test]
fn notebooks_are_read_as_cells() {
    let e = files();
    let nb = json!({"cells": [
        {"cell_type": "markdown", "source": ["# Title\n", "Some text"]},
        {"cell_type": "code", "source": "print(1)", "outputs": [{"output_type": "stream", "text": ["1\n"]}]}
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5});
    write(&e.path("n.ipynb"), &nb.to_string());
    let v = e.call("read_file", json!({"path": "n.ipynb"}));
    assert_eq!(v["extracted_document"], true, "{v}");
    assert_eq!(
        v["content"],
        "1|# %% [markdown]\n2|# Title\n3|Some text\n4|\n5|# %%\n6|print(1)\n7|# > 1"
    );
}

#[test]
fn read_file_streams_large_files() {
    let e = files();
    let body: String = (1..=300_000).map(|i| format!("{i:06}\n")).collect();
    write(&e.path("big.txt"), &body);
    for (offset, limit) in [(1usize, 3usize), (123_457, 2), (299_999, 5)] {
        let v = e.call(
            "read_file",
            json!({"path": "big.txt", "offset": offset, "limit": limit}),
        );
        assert_eq!(v["total_lines"], 300_000, "{v}");
        let want: Vec<String> = (offset..(offset + limit).min(300_001))
            .map(|i| format!("{i}|{i:06}"))
            .collect();
        assert_eq!(v["content"], want.join("\n"), "{offset}");
    }
    std::fs::write(e.path("tail.txt"), format!("{body}no newline")).unwrap();
    let v = e.call("read_file", json!({"path": "tail.txt", "offset": 300_001}));
    assert_eq!(v["total_lines"], 300_001);
    assert_eq!(v["content"], "300001|no newline");
    let v = e.call("read_file", json!({"path": "tail.txt", "offset": 400_000}));
    assert_eq!(v["content"], "");
    assert!(v["hint"].as_str().unwrap().contains("past the end"), "{v}");
}

#[test]
fn extreme_numbers_are_clamped_not_crashes() {
    let e = files();
    write(&e.path("a.txt"), "x\n");
    let v = e.call(
        "read_file",
        json!({"path": "a.txt", "offset": i64::MAX, "limit": 2000}),
    );
    assert_eq!(v["content"], "", "{v}");
    let v = e.call(
        "search_files",
        json!({"pattern": "x", "offset": i64::MAX, "limit": 1000, "context": 1000}),
    );
    assert_eq!(v["total_count"], 1, "{v}");
    let v = e.call(
        "search_files",
        json!({"pattern": "x", "offset": -5, "limit": -1}),
    );
    assert_eq!(v["total_count"], 1, "{v}");
}

/// Searches served from the index answer exactly as a walk of the disk
/// does, through every kind of change between them: the same queries go
/// to a runtime with the index and one without, after each change.
#[test]
fn indexed_searches_answer_as_fresh_walks_do() {
    let e = files();
    tree(&e);
    let walk_cfg = json!({"builtin_toolsets": ["file"], "terminal": {"backend": "local", "cwd": e.root()},
                          "data_dir": e.data(), "file": {"search_cache_mb": 0}});
    let walk = hermes_runtime::Runtime::new(&walk_cfg.to_string()).unwrap();
    let queries = [
        json!({"pattern": "hello"}),
        json!({"pattern": "hello", "output_mode": "count"}),
        json!({"pattern": "hel+o", "output_mode": "files_only"}),
        json!({"pattern": "hel+o", "file_glob": "*.rs", "path": "src"}),
        json!({"pattern": "hello", "context": 1, "limit": 3, "offset": 1}),
        json!({"pattern": "^fn|needle \\d+", "path": "src"}),
        json!({"pattern": "*.rs", "target": "files"}),
        json!({"pattern": "src/*", "target": "files", "limit": 2}),
    ];
    let n = std::sync::atomic::AtomicUsize::new(0);
    let check = |what: &str| {
        for q in &queries {
            let i = n.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let task = format!("q{i}"); // a task each: no repeat nudges
            let a = call(&e.rt, "search_files", &task, q.clone());
            let b = call(&walk, "search_files", &task, q.clone());
            assert_eq!(a, b, "{what}: {q}");
        }
    };
    check("first search");
    let index = &e.rt.files().unwrap().index;
    assert_eq!(
        index.roots(),
        vec![std::fs::canonicalize(e.root()).unwrap()]
    );
    assert!(walk.files().unwrap().index.roots().is_empty());

    e.call(
        "write_file",
        json!({"path": "src/new.rs", "content": "fn hello_new() {}\n"}),
    );
    check("write_file of a new file");
    e.call(
        "patch",
        json!({"path": "src/lib.rs", "old_string": "hello again", "new_string": "bye"}),
    );
    check("patch");
    write(&e.path("src/deep/er/x.rs"), "fn x() { hello(); }\n");
    check("new nested folders");
    std::fs::rename(e.path("src/deep"), e.path("moved")).unwrap();
    check("a folder moved");
    std::fs::remove_file(e.path("src/main.rs")).unwrap();
    check("a file deleted");
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(e.path("src/lib.rs"))
        .unwrap()
        .set_modified(later)
        .unwrap();
    check("a file touched (newest first in file-name searches)");
    let many: String = (0..50).map(|i| format!("needle {i} hello\n")).collect();
    write(&e.path("src/many.rs"), &many);
    check("many hits");
    std::fs::remove_dir_all(e.path("moved")).unwrap();
    write(&e.path("moved/again.rs"), "hello again\n");
    check("a folder deleted and made again");
    write(&e.path(".gitignore"), "*.log\n");
    check("the ignore rules changed");
    assert_eq!(
        index.roots().len(),
        1,
        "rebuilt by the search after the change"
    );
    write(&e.path("ignored/y.rs"), "hello now seen\n");
    check("a folder no longer ignored");
}

/// `^` and `$` mean line boundaries (not the file's), a UTF-8 byte-order
/// mark does not hide a first-line match, and a NUL anywhere in a file
/// makes it binary from there on, with and without the index (a regression:
/// the first index build tested anchors against whole files and checked
/// only the first 64 KB for NULs).
#[test]
fn line_anchors_bom_and_binary_files() {
    let e = files();
    write(
        &e.path("a.rs"),
        "// header\nfn main() {}\n  fn nested() {}\n",
    );
    std::fs::write(e.path("bom.rs"), b"\xEF\xBB\xBFfn first() {}\n").unwrap();
    let mut bin = vec![b'x'; 200_000];
    bin[100_000] = 0;
    bin[150_000..150_006].copy_from_slice(b"\nfn z(");
    std::fs::write(e.path("late_nul.txt"), &bin).unwrap();
    let walk_cfg = json!({"builtin_toolsets": ["file"], "terminal": {"backend": "local", "cwd": e.root()},
                          "data_dir": e.data(), "file": {"search_cache_mb": 0}});
    let walk = hermes_runtime::Runtime::new(&walk_cfg.to_string()).unwrap();
    for round in 0..3 {
        for (rt, which) in [(&e.rt, "indexed"), (&walk, "walked")] {
            let task = format!("{which}{round}");
            let v = call(
                rt,
                "search_files",
                &task,
                json!({"pattern": "^fn", "output_mode": "count"}),
            );
            assert_eq!(v["counts"]["./a.rs"], 1, "{which} {round}: {v}");
            assert_eq!(v["counts"]["./bom.rs"], 1, "{which} {round}: {v}");
            assert_eq!(v["total_count"], 2, "{which} {round}: {v}");
            let v = call(
                rt,
                "search_files",
                &format!("{task}b"),
                json!({"pattern": "\\{\\}$"}),
            );
            assert_eq!(v["total_count"], 3, "{which} {round}: {v}");
        }
    }
    assert!(!e.rt.files().unwrap().index.roots().is_empty());
}

/// `file.search_prewarm` indexes the working directory in the background
/// when the runtime starts.
#[test]
fn prewarm_indexes_the_workspace_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    write(&root.join("src/a.rs"), "fn prewarmed() {}\n");
    let cfg = json!({"builtin_toolsets": ["file"], "terminal": {"backend": "local", "cwd": root},
                     "data_dir": root.join(".data"), "file": {"search_prewarm": true}});
    let rt = hermes_runtime::Runtime::new(&cfg.to_string()).unwrap();
    let index = &rt.files().unwrap().index;
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while index.roots().is_empty() && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(index.roots(), vec![root.clone()]);
    let v = call(&rt, "search_files", "t", json!({"pattern": "prewarmed"}));
    assert_eq!(v["total_count"], 1, "{v}");
    // off by default
    let e = files();
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(e.rt.files().unwrap().index.roots().is_empty());
}

/// The index's trigram filter skips only files that cannot match: many
/// kinds of pattern (literals, alternations, classes, case folding,
/// anchors, Unicode, suffix-only literals) give the same answers with the
/// index (its first search, which builds it, and the next ones, which use
/// the signatures) as a walk of the disk.
#[test]
fn the_trigram_filter_never_hides_a_match() {
    let e = files();
    let words = [
        "needle_call(12);",
        "NeedleCall",
        "café crème",
        "tab\there",
        "fn main() {}",
        "let x = y + z; // filler",
        "error: E0425 unresolved",
        "ÅNGSTRÖM",
        "a.b*c?d",
        "line with CRLF\r",
        "x",
    ];
    for i in 0..60 {
        let body: String = (0..8)
            .map(|l| format!("{} {i} {l}\n", words[(i * 7 + l * 3) % words.len()]))
            .collect();
        write(&e.path(&format!("d{}/f{i}.txt", i % 6)), &body);
    }
    let walk_cfg = json!({"builtin_toolsets": ["file"], "terminal": {"backend": "local", "cwd": e.root()},
                          "data_dir": e.data(), "file": {"search_cache_mb": 0}});
    let walk = hermes_runtime::Runtime::new(&walk_cfg.to_string()).unwrap();
    let patterns = [
        "needle_call\\(\\d+\\)",
        "needle",
        "(?i)needlecall",
        "NeedleCall|ÅNGSTRÖM",
        "café",
        "(?i)ångström",
        "\\w+_call",
        "E\\d{4}",
        "unresolved$",
        "^fn",
        "CRLF\\r$",
        "tab\\there",
        "a\\.b\\*c",
        "[xyz] = [xyz]",
        "filler \\d+ [0-3]",
        "absent_literal|also_absent",
        "cr(è|e)me",
        "crème \\d",
        "x",
        "^x \\d+ \\d+$",
        "(?-u:\\xC3)",
        "main\\(\\) \\{\\}",
    ];
    for round in 0..2 {
        for p in patterns {
            for mode in ["content", "count"] {
                let q = json!({"pattern": p, "output_mode": mode, "limit": 1000});
                let task = format!("{round}{p}{mode}");
                let a = call(&e.rt, "search_files", &task, q.clone());
                let b = call(&walk, "search_files", &task, q.clone());
                assert_eq!(a, b, "round {round}: {q}");
            }
        }
    }
    assert!(!e.rt.files().unwrap().index.roots().is_empty());
}

/// Searches from several threads while another thread keeps changing the
/// tree (files written, folders made, moved and deleted, an ignore file
/// rewritten): no search fails or hangs, and once the changes stop the
/// index answers as a walk does.
#[test]
fn concurrent_searches_while_the_tree_changes() {
    let e = std::sync::Arc::new(files());
    tree(&e);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (e, stop) = (e.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut i = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                write(
                    &e.path(&format!("w/d{}/f{}.rs", i % 5, i % 17)),
                    &format!("hello {i}\n"),
                );
                if i.is_multiple_of(7) {
                    let _ = std::fs::rename(
                        e.path(&format!("w/d{}", i % 5)),
                        e.path(&format!("w/m{i}")),
                    );
                }
                if i.is_multiple_of(11) {
                    let _ = std::fs::remove_dir_all(e.path("w"));
                }
                if i.is_multiple_of(50) {
                    write(&e.path(".gitignore"), &format!("ignored/\n*.log\n# {i}\n"));
                }
                i += 1;
            }
        })
    };
    let searchers: Vec<_> = (0..4)
        .map(|t| {
            let (e, stop) = (e.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut n = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let v = call(
                        &e.rt,
                        "search_files",
                        &format!("s{t}-{n}"),
                        json!({"pattern": "hello"}),
                    );
                    assert!(v["total_count"].as_u64().is_some(), "{v}");
                    n += 1;
                }
                n
            })
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    writer.join().unwrap();
    for s in searchers {
        assert!(s.join().unwrap() > 0);
    }
    let walk_cfg = json!({"builtin_toolsets": ["file"], "terminal": {"backend": "local", "cwd": e.root()},
                          "data_dir": e.data(), "file": {"search_cache_mb": 0}});
    let walk = hermes_runtime::Runtime::new(&walk_cfg.to_string()).unwrap();
    for q in [
        json!({"pattern": "hello", "limit": 1000}),
        json!({"pattern": "hello", "output_mode": "count"}),
    ] {
        let a = call(&e.rt, "search_files", "final", q.clone());
        let b = call(&walk, "search_files", "final", q.clone());
        assert_eq!(a, b, "{q}");
    }
}

/// A workspace file hard-linked to a file outside (made by the host, or
/// before the sandbox): write_file asks, naming the links; denied, nothing
/// changes; approved, the workspace name becomes a new file and the outside
/// file keeps its content (the write never goes through the shared inode).
#[test]
fn sandbox_writes_to_hard_linked_files_ask_and_never_reach_the_other_name() {
    let e = env(&["file"], json!({}));
    let outside_dir = tempfile::tempdir_in(e.dir.path()).unwrap();
    let outside = outside_dir.path().join("secret.txt");
    write(&outside, "outside\n");
    let ws = e.dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::hard_link(&outside, ws.join("hl.txt")).unwrap();
    let cfg = json!({
        "builtin_toolsets": ["file"],
        "terminal": {"backend": "sandbox", "cwd": ws},
        "data_dir": e.data(),
    });
    let rt = hermes_runtime::Runtime::new(&cfg.to_string()).unwrap();
    let no = std::sync::Arc::new(Approver(Default::default(), "deny"));
    rt.set_approval_sink(false, Some(no.clone())).unwrap();
    let v = call(
        &rt,
        "write_file",
        "t",
        json!({"path": "hl.txt", "content": "new\n"}),
    );
    assert!(v["error"].as_str().is_some(), "{v}");
    let asked = no.0.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    let req: serde_json::Value = serde_json::from_str(&asked[0]).unwrap();
    assert_eq!(req["rules"], json!(["file_write_hardlinked"]), "{req}");
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "outside\n");
    let yes = std::sync::Arc::new(Approver(Default::default(), "once"));
    rt.set_approval_sink(false, Some(yes)).unwrap();
    let v = call(
        &rt,
        "write_file",
        "t",
        json!({"path": "hl.txt", "content": "new\n"}),
    );
    assert_eq!(v["bytes_written"], 4, "{v}");
    assert_eq!(std::fs::read_to_string(ws.join("hl.txt")).unwrap(), "new\n");
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "outside\n");
    use std::os::unix::fs::MetadataExt;
    assert_eq!(std::fs::metadata(&outside).unwrap().nlink(), 1);
}
