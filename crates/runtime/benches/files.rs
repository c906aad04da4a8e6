//! The file tools on the workloads, through the full dispatch
//! pipeline, against `rg` (search) and, when a Python with hermes-agent
//! 0.19.0 is given, the original's handlers on the same files.
//!
//!     cargo bench -p hermes-runtime --bench files
//!     HT_ORIGINAL_PYTHON=build/href/bin/python cargo bench -p hermes-runtime --bench files
//!     HT_BENCH_ONLY=edit cargo bench -p hermes-runtime --bench files   (read, write, patch only)
//!
//! Workloads: `read_file` of the last page of a 10 MB file, `write_file`
//! of 100 KB, `patch` replace in a 1 MB file, `search_files` over a
//! 10 000-file tree (content, a regex with a few hundred hits).

use hermes_core::dispatch::CallContext;
use hermes_runtime::Runtime;
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn time<F: FnMut(usize)>(n: usize, mut f: F) -> Duration {
    for i in 0..2 {
        f(usize::MAX - i);
    }
    median(
        (0..n)
            .map(|i| {
                let s = Instant::now();
                f(i);
                s.elapsed()
            })
            .collect(),
    )
}

fn build_tree(root: &Path) {
    // 10 MB file: 200 000 lines of 50 bytes
    let mut big = String::with_capacity(10_500_000);
    for i in 0..200_000 {
        big.push_str(&format!("{i:08} the quick brown fox jumps over it\n"));
    }
    std::fs::write(root.join("big.txt"), &big).unwrap();
    // 1 MB file with one marker in the middle
    let mut mid = String::with_capacity(1_100_000);
    for i in 0..20_000 {
        if i == 10_000 {
            mid.push_str("    let marker = MARKER_A;\n");
        }
        mid.push_str(&format!("    let value_{i} = compute({i}) + 1;\n"));
    }
    std::fs::write(root.join("mid.rs"), &mid).unwrap();
    // 10 000 files in 100 folders, ~1.5 KB each; one line in 30 files has a hit
    for d in 0..100 {
        let dir = root.join(format!("tree/pkg{d:03}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..100 {
            let mut s = String::with_capacity(1600);
            for l in 0..40 {
                if (d * 100 + f) % 30 == 0 && l == 17 {
                    s.push_str(&format!("fn handler_{d}_{f}() {{ needle_call({l}); }}\n"));
                } else {
                    s.push_str(&format!("    let x{l} = y{l} + z{l}; // filler\n"));
                }
            }
            std::fs::write(dir.join(format!("m{f:03}.rs")), s).unwrap();
        }
    }
}

fn call(rt: &Runtime, task: &str, tool: &str, args: &Value) -> Value {
    let ctx = CallContext {
        task_id: task.to_string(),
        ..CallContext::default()
    };
    let text = rt.dispatch(tool, &args.to_string(), ctx).expect("dispatch");
    serde_json::from_str(&text).expect("json")
}

fn main() {
    let n: usize = std::env::var("HT_BENCH_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    build_tree(root);
    let cfg = json!({"builtin_toolsets": ["file"], "terminal": {"cwd": root},
                     "data_dir": root.join(".data")});
    let rt = Runtime::new(&cfg.to_string()).unwrap();
    let big = root.join("big.txt").display().to_string();
    let mid = root.join("mid.rs").display().to_string();
    let tree = root.join("tree").display().to_string();

    // HT_BENCH_ONLY=warm: only the indexed search (for profiling)
    let only_warm = std::env::var("HT_BENCH_ONLY").is_ok_and(|v| v == "warm");
    let n_other = if only_warm { 1 } else { n };
    let read = time(n_other, |i| {
        let v = call(
            &rt,
            &format!("r{i}"),
            "read_file",
            &json!({"path": big, "offset": 199_501, "limit": 500}),
        );
        assert!(v["content"].as_str().unwrap().starts_with("199501|"), "{v}");
    });
    let content: String = "lorem ipsum dolor sit amet\n".repeat(4000);
    let write = time(n_other, |i| {
        let v = call(
            &rt,
            "w",
            "write_file",
            &json!({"path": root.join(format!("out{}.txt", i % 4)), "content": content}),
        );
        assert!(v["bytes_written"].as_u64().is_some(), "{v}");
    });
    let mut flip = false;
    let patch = time(n_other, |_| {
        let (a, b) = if flip {
            ("MARKER_B", "MARKER_A")
        } else {
            ("MARKER_A", "MARKER_B")
        };
        flip = !flip;
        let v = call(
            &rt,
            "p",
            "patch",
            &json!({"mode": "replace", "path": mid, "old_string": format!("let marker = {a};"), "new_string": format!("let marker = {b};")}),
        );
        assert_eq!(v["success"], true, "{v}");
    });
    // Fuzzy replace in the same 1 MB file: an old_string the exact match
    // misses, found by line_trimmed (other indentation over two lines) and
    // by whitespace_normalized (a doubled space inside the line).
    let mid2 = root.join("mid2.rs");
    std::fs::copy(&mid, &mid2).unwrap();
    let mut flip = false;
    let mut fuzzy = |two_lines: bool| {
        let (a, b) = if flip {
            ("MARKER_B", "MARKER_A")
        } else {
            ("MARKER_A", "MARKER_B")
        };
        flip = !flip;
        let (old, new) = if two_lines {
            (
                format!("  let marker = {a};\n  let value_10000 = compute(10000) + 1;"),
                format!("  let marker = {b};\n  let value_10000 = compute(10000) + 1;"),
            )
        } else {
            (format!("let  marker = {a};"), format!("let marker = {b};"))
        };
        let v = call(
            &rt,
            "p",
            "patch",
            &json!({"mode": "replace", "path": mid2, "old_string": old, "new_string": new}),
        );
        assert_eq!(v["success"], true, "{v}");
        assert!(v["match_strategy"].is_string(), "{v}");
    };
    let fuzzy_lines = time(n_other, |_| fuzzy(true));
    let fuzzy_ws = time(n_other, |_| fuzzy(false));
    // HT_BENCH_ONLY=edit: only the read, write and patch figures (no
    // search: for comparing edits of the file tools quickly)
    if std::env::var("HT_BENCH_ONLY").is_ok_and(|v| v == "edit") {
        println!("file tools, median of {n} (through dispatch_sync):");
        println!("  read_file last page of 10 MB   {:8.2} ms", ms(read));
        println!("  write_file 100 KB              {:8.2} ms", ms(write));
        println!("  patch replace in 1 MB          {:8.2} ms", ms(patch));
        println!(
            "  patch fuzzy (line_trimmed)     {:8.2} ms",
            ms(fuzzy_lines)
        );
        println!("  patch fuzzy (whitespace)       {:8.2} ms", ms(fuzzy_ws));
        return;
    }
    // Search: cold (index off: every search walks and reads the tree, as
    // rg does), first (a fresh runtime's first search, which also builds
    // the index), warm (later searches, from the index), warm after an edit
    // (a file rewritten since the last search), and rg, interleaved so
    // machine noise hits all alike.
    let cold_cfg = json!({"builtin_toolsets": ["file"], "terminal": {"cwd": root},
                          "data_dir": root.join(".data"), "file": {"search_cache_mb": 0}});
    let rt_cold = Runtime::new(&cold_cfg.to_string()).unwrap();
    let has_rg = Command::new("rg").arg("--version").output().is_ok();
    let needle = json!({"pattern": "needle_call\\(\\d+\\)", "path": tree});
    let (mut cold_t, mut first_t, mut warm_t, mut edit_t, mut rg_t) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut novel_t = Vec::new();
    let mut prewarm_t = Vec::new();
    let prewarm_cfg = json!({"builtin_toolsets": ["file"], "terminal": {"cwd": tree},
                             "data_dir": root.join(".data"), "file": {"search_prewarm": true}});
    let edited = root.join("tree/pkg050/m007.rs");
    let edited_text = std::fs::read_to_string(&edited).unwrap();
    let timed = |rt: &Runtime, task: String, args: &Value| {
        let s = Instant::now();
        let v = call(rt, &task, "search_files", args);
        let d = s.elapsed();
        assert_eq!(v["total_count"], 334, "{v}");
        d
    };
    for i in 0..n + 2 {
        let keep = i >= 2;
        let w = timed(&rt, format!("s{i}"), &needle);
        if only_warm {
            if keep {
                warm_t.push(w);
            }
            continue;
        }
        let c = timed(&rt_cold, format!("c{i}"), &needle);
        let fresh = Runtime::new(&cfg.to_string()).unwrap();
        let f = timed(&fresh, format!("f{i}"), &needle);
        drop(fresh);
        // a fresh runtime with file.search_prewarm, once its index is built
        let warmed = Runtime::new(&prewarm_cfg.to_string()).unwrap();
        let ix = &warmed.files().unwrap().index;
        while ix.roots().is_empty() {
            std::thread::sleep(Duration::from_millis(5));
        }
        let pw = timed(&warmed, format!("p{i}"), &needle);
        drop(warmed);
        std::fs::write(&edited, format!("{edited_text}// edit {i}\n")).unwrap();
        let e = timed(&rt, format!("e{i}"), &needle);
        // the same search with a pattern never seen (compiled anew)
        let novel = json!({"pattern": format!("needle_call\\(\\d+\\){}", "(?:)".repeat(i + 1)),
                           "path": tree});
        let nv = timed(&rt, format!("n{i}"), &novel);
        if keep {
            warm_t.push(w);
            cold_t.push(c);
            first_t.push(f);
            edit_t.push(e);
            novel_t.push(nv);
            prewarm_t.push(pw);
        }
        if has_rg {
            let s = Instant::now();
            let out = Command::new("rg")
                .args([
                    "--line-number",
                    "--no-heading",
                    "--with-filename",
                    "needle_call\\(\\d+\\)",
                    &tree,
                ])
                .output()
                .unwrap();
            let d = s.elapsed();
            assert_eq!(out.stdout.iter().filter(|&&b| b == b'\n').count(), 334);
            if keep {
                rg_t.push(d);
            }
        }
    }
    if only_warm {
        println!("search_files warm: {:.3} ms", ms(median(warm_t)));
        return;
    }
    let search = median(warm_t);
    let cold = median(cold_t);
    let first = median(first_t);
    let after_edit = median(edit_t);
    let novel = median(novel_t);
    let prewarmed = median(prewarm_t);
    let rg = (has_rg && !rg_t.is_empty()).then(|| median(rg_t));
    let rare_args = json!({"pattern": "handler_99_90\\(", "path": tree});
    let rare = time(n, |i| {
        let v = call(&rt, &format!("q{i}"), "search_files", &rare_args);
        assert_eq!(v["total_count"], 1, "{v}");
    });
    let rare_cold = time(n, |i| {
        let v = call(&rt_cold, &format!("qc{i}"), "search_files", &rare_args);
        assert_eq!(v["total_count"], 1, "{v}");
    });
    println!("file tools, median of {n} (through dispatch_sync):");
    println!("  read_file last page of 10 MB   {:8.2} ms", ms(read));
    println!("  write_file 100 KB              {:8.2} ms", ms(write));
    println!("  patch replace in 1 MB          {:8.2} ms", ms(patch));
    println!(
        "  patch fuzzy (line_trimmed)     {:8.2} ms",
        ms(fuzzy_lines)
    );
    println!("  patch fuzzy (whitespace)       {:8.2} ms", ms(fuzzy_ws));
    println!(
        "  search_files 10 000 files      {:8.2} ms   (indexed)",
        ms(search)
    );
    println!("    ... right after an edit      {:8.2} ms", ms(after_edit));
    println!("    ... a pattern not seen before{:8.2} ms", ms(novel));
    println!("    ... first search (builds)    {:8.2} ms", ms(first));
    println!("    ... first, after prewarm     {:8.2} ms", ms(prewarmed));
    println!("    ... index off (cold)         {:8.2} ms", ms(cold));
    println!(
        "  search_files, one hit in all   {:8.2} ms   (indexed)",
        ms(rare)
    );
    println!("    ... index off (cold)         {:8.2} ms", ms(rare_cold));
    if let Some(rg) = rg {
        println!(
            "  rg same tree and pattern       {:8.2} ms   (cold / rg = {:.2}x, first / rg = {:.2}x)",
            ms(rg),
            ms(cold) / ms(rg),
            ms(first) / ms(rg)
        );
    } else {
        println!("  rg not installed: no comparison");
    }
    if let Ok(py) = std::env::var("HT_ORIGINAL_PYTHON") {
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../benches/reference/hermes_files.py"
        );
        let out = Command::new(py)
            .args([script, &root.display().to_string(), &n.to_string()])
            .output()
            .expect("run the original");
        let text = String::from_utf8_lossy(&out.stdout);
        print!("{text}");
        if !out.status.success() {
            eprintln!("{}", String::from_utf8_lossy(&out.stderr));
        }
        let orig: Value = text
            .lines()
            .find_map(|l| l.strip_prefix("JSON "))
            .and_then(|j| serde_json::from_str(j).ok())
            .unwrap_or(Value::Null);
        for (k, ours) in [
            ("read_file", read),
            ("write_file", write),
            ("patch", patch),
            ("search_files", search),
            ("search_files_rare", rare),
        ] {
            if let Some(o) = orig[k].as_f64() {
                println!(
                    "  {k:14} original {o:9.2} ms   ours {:8.2} ms   {:6.1}x faster",
                    ms(ours),
                    o / ms(ours)
                );
            }
        }
    }
}
