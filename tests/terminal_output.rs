//! Output bounds: 50 MB of output stays within the cap with bounded memory,
//! head and tail are kept, and the full output can be spilled to a file.
//! Its own test binary (not in tests/integration): it measures the whole
//! process's peak memory.

mod common;
use common::terminal::*;
use hermes_tools::Runtime;
use serde_json::{Value, json};

fn call(rt: &Runtime, args: Value) -> Value {
    tool_call(rt, "terminal", "", args)
}

fn status_kb(field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    s.lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap()
}

#[test]
fn fifty_megabytes_stay_within_the_cap_and_memory_stays_bounded() {
    let spill = std::env::temp_dir().join(format!("ht-spill-{}", std::process::id()));
    let cfg = json!({"builtin_toolsets": ["terminal"],
        "terminal": {"max_output_chars": 20000, "spill_dir": spill.display().to_string()}});
    let rt = Runtime::new(&cfg.to_string()).unwrap();
    // warm up (allocator, regexes)
    call(&rt, json!({"command": "echo warm"}));
    let before = status_kb("VmHWM:");
    let v = call(
        &rt,
        json!({"command": "echo FIRST-LINE; yes 'a line of output that repeats' | head -c 50000000; echo; echo LAST-LINE-ERROR"}),
    );
    let after = status_kb("VmHWM:");
    let out = v["output"].as_str().unwrap();
    assert_eq!(v["exit_code"], 0, "{}", &out[..200.min(out.len())]);
    assert!(out.chars().count() <= 20000, "{}", out.chars().count());
    assert!(out.starts_with("FIRST-LINE"), "{}", &out[..100]);
    assert!(
        out.ends_with("LAST-LINE-ERROR"),
        "{}",
        &out[out.len() - 100..]
    );
    assert!(out.contains("OUTPUT TRUNCATED"));
    let grew_mb = (after.saturating_sub(before)) / 1024;
    assert!(
        grew_mb < 16,
        "peak RSS grew by {grew_mb} MB while reading 50 MB"
    );
    // the full output was spilled
    let path = v["full_output_path"].as_str().expect("spill path");
    let len = std::fs::metadata(path).unwrap().len();
    assert!(len >= 50_000_000, "spill has {len} bytes");
    assert!(out.contains(path));
    std::fs::remove_dir_all(&spill).ok();
}

#[test]
fn small_output_is_not_spilled() {
    let spill = std::env::temp_dir().join(format!("ht-spill2-{}", std::process::id()));
    let cfg = json!({"builtin_toolsets": ["terminal"],
        "terminal": {"max_output_chars": 1000, "spill_dir": spill.display().to_string()}});
    let rt = Runtime::new(&cfg.to_string()).unwrap();
    // more bytes than the cap, but ANSI codes make the text fit
    let v = call(
        &rt,
        json!({"command": "for i in $(seq 1 100); do printf '\\033[1;31m\\033[0m'; done; echo ok"}),
    );
    assert_eq!(v["output"], "ok");
    assert!(v.get("full_output_path").is_none());
    let n = std::fs::read_dir(&spill).map(|d| d.count()).unwrap_or(0);
    assert_eq!(n, 0);
    // a middle cut keeps head and tail
    let v = call(&rt, json!({"command": "seq 1 5000"}));
    let out = v["output"].as_str().unwrap();
    assert!(
        out.starts_with("1\n2\n3\n") && out.ends_with("4999\n5000"),
        "{out}"
    );
    assert!(v["full_output_path"].is_string());
    std::fs::remove_dir_all(&spill).ok();
}
