//! The official JSON-Schema-Test-Suite's required tests for the drafts we
//! support (2020-12 and 07), run through our validator (`params::Schema`:
//! the compiled node where it decides alone, else the `jsonschema` crate).
//! Remote references (`refRemote.json`, schemas naming
//! `http://localhost:1234`, which need the suite's web server) are left out.
//!
//! The suite is not vendored: `make conformance` fetches it (a pinned
//! commit) and sets `HT_JSON_SCHEMA_SUITE` to its folder. Without the
//! variable this test says so and passes; with it, every case must pass.

use hermes_core::params::{Formats, Schema};
use serde_json::Value;
use std::path::Path;

const DRAFTS: &[(&str, &str)] = &[
    (
        "draft2020-12",
        "https://json-schema.org/draft/2020-12/schema",
    ),
    ("draft7", "http://json-schema.org/draft-07/schema#"),
];

#[derive(Default)]
struct Tally {
    passed: usize,
    failed: Vec<String>,
    remote: usize,
    fast: usize,
    groups: usize,
}

fn run_draft(dir: &Path, meta: &str) -> Tally {
    let mut t = Tally::default();
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    for file in files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&file).unwrap();
        let groups: Vec<Value> = serde_json::from_str(&text).unwrap();
        for g in groups {
            let tests = g["tests"].as_array().cloned().unwrap_or_default();
            let mut schema = g["schema"].clone();
            if name == "refRemote.json" || schema.to_string().contains("localhost:1234") {
                t.remote += tests.len();
                continue;
            }
            // The draft-07 files leave `$schema` out: the folder names it.
            if let Value::Object(m) = &mut schema
                && !m.contains_key("$schema")
            {
                m.insert("$schema".into(), meta.into());
            }
            t.groups += 1;
            let what = format!("{name}: {}", g["description"].as_str().unwrap_or(""));
            let compiled = Schema::new(&schema.to_string(), "schema", Formats::Draft);
            let compiled = match compiled {
                Ok(c) => c,
                Err(e) => {
                    for case in &tests {
                        t.failed.push(format!(
                            "{what} / {}: the schema does not compile: {e}",
                            case["description"].as_str().unwrap_or("")
                        ));
                    }
                    continue;
                }
            };
            if compiled.full.is_none() {
                t.fast += 1;
            }
            for case in &tests {
                let want = case["valid"].as_bool().unwrap();
                if compiled.is_valid(&case["data"]) == want {
                    t.passed += 1;
                } else {
                    t.failed.push(format!(
                        "{what} / {}: expected valid={want}",
                        case["description"].as_str().unwrap_or("")
                    ));
                }
            }
        }
    }
    t
}

#[test]
fn json_schema_test_suite_required_tests() {
    let Ok(root) = std::env::var("HT_JSON_SCHEMA_SUITE") else {
        eprintln!(
            "HT_JSON_SCHEMA_SUITE is not set: the JSON Schema Test Suite was not run (`make conformance` fetches it)"
        );
        return;
    };
    let mut all_failed = Vec::new();
    for (draft, meta) in DRAFTS {
        let t = run_draft(&Path::new(&root).join("tests").join(draft), meta);
        let total = t.passed + t.failed.len();
        println!(
            "{draft}: {}/{total} required tests pass ({} schemas, {} decided by the compiled node); {} remote-reference tests left out",
            t.passed, t.groups, t.fast, t.remote
        );
        for f in &t.failed {
            println!("  FAIL {draft} {f}");
        }
        all_failed.extend(t.failed.into_iter().map(|f| format!("{draft} {f}")));
    }
    assert!(all_failed.is_empty(), "{} failures", all_failed.len());
}
