//! Differential check of the engine's shell reading against a second,
//! independent grammar: tree-sitter-bash (issue 17).
//!
//! For every POSIX command of every corpus (`tests/corpus/**/*.jsonl`) and
//! of the case file, both parsers read the same text, and:
//!
//! 1. every program tree-sitter finds at a command position (a literal
//!    command name; names built from expansions and functions defined in the
//!    same text aside) must be among the programs the engine's analysis says
//!    would run: the engine may see more (it also reads `bash -c` strings,
//!    heredocs fed to shells, wrapper payloads), never less;
//! 2. when tree-sitter parses the text without error, the engine must not
//!    report a parse error either (unless the line is a known difference
//!    listed below with the reason).
//!
//! Run with `--nocapture` for the counts.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use hermes_approval::analyze::{analyze, cmd_name};
use hermes_approval::winshell;

/// Known differences: (command, why the engine reads it differently).
const KNOWN: &[(&str, &str)] = &[];

fn files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = vec![root.join("tests/data/command_cases.jsonl")];
    let mut dirs = vec![root.join("tests/corpus")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).expect("corpus dir").flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn commands() -> Vec<String> {
    let mut out = Vec::new();
    for f in files() {
        let text = std::fs::read_to_string(&f).expect("corpus file");
        for l in text.lines().filter(|l| !l.trim().is_empty()) {
            let v: serde_json::Value = serde_json::from_str(l).expect("json line");
            if !v["shell"].is_null() {
                continue;
            }
            if let Some(c) = v["command"].as_str() {
                out.push(c.to_string());
            }
        }
    }
    out
}

/// Literal command names tree-sitter-bash finds (basename, lowercased) and
/// the names of functions the text defines.
fn ts_names(tree: &tree_sitter::Tree, src: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut names = BTreeSet::new();
    let mut funcs = BTreeSet::new();
    let mut stack = vec![tree.root_node()];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "command" => {
                if let Some(name) = n.child_by_field_name("name")
                    && let Ok(t) = name.utf8_text(src.as_bytes())
                {
                    // only plain words: no quoting, expansion or globbing
                    if !t.is_empty()
                        && t.chars().all(|c| {
                            c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | '+')
                        })
                    {
                        names.insert(cmd_name(t));
                    }
                }
            }
            "function_definition" => {
                if let Some(name) = n.child_by_field_name("name")
                    && let Ok(t) = name.utf8_text(src.as_bytes())
                {
                    funcs.insert(t.to_string());
                }
            }
            _ => {}
        }
        for i in 0..n.child_count() {
            if let Some(c) = n.child(i) {
                stack.push(c);
            }
        }
    }
    (names, funcs)
}

/// Builtins the analysis handles itself rather than reporting as programs.
fn handled_builtin(n: &str) -> bool {
    matches!(
        n,
        "cd" | "pushd"
            | "popd"
            | "export"
            | "local"
            | "declare"
            | "typeset"
            | "readonly"
            | "set"
            | "unset"
            | "shift"
            | "return"
            | "exit"
            | "break"
            | "continue"
            | ":"
            | "true"
            | "false"
            | "alias"
            | "unalias"
            | "."
            | "source"
            | "let"
            | "wait"
            | "shopt"
    )
}

#[test]
fn second_grammar_agrees() {
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .expect("tree-sitter-bash grammar");
    let known: BTreeSet<&str> = KNOWN.iter().map(|k| k.0).collect();
    let cmds = commands();
    let (mut checked, mut ts_errors, mut windows, mut programs) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    for c in &cmds {
        if winshell::detect(c).is_some() {
            windows += 1;
            continue;
        }
        let Some(tree) = parser.parse(c, None) else {
            continue;
        };
        checked += 1;
        let a = analyze(c);
        let ours: BTreeSet<String> = a.execs.iter().map(|e| e.name.clone()).collect();
        let ts_ok = !tree.root_node().has_error();
        if !ts_ok {
            ts_errors += 1;
        }
        if known.contains(c.as_str()) {
            continue;
        }
        if ts_ok && let Some(err) = &a.error {
            failures.push(format!("engine reports `{err}` where bash parses: {c}"));
        }
        if !ts_ok || a.error.is_some() {
            // recovery differs: compare programs only on clean parses
            continue;
        }
        let (names, funcs) = ts_names(&tree, c);
        programs += names.len();
        let missing: Vec<&String> = names
            .iter()
            .filter(|n| !ours.contains(*n) && !handled_builtin(n) && !funcs.contains(*n))
            .collect();
        if !missing.is_empty() {
            failures.push(format!(
                "tree-sitter runs {missing:?} that the engine does not see (engine: {ours:?}): {c}"
            ));
        }
    }
    println!(
        "differential: {} commands, {checked} compared with tree-sitter-bash ({ts_errors} that tree-sitter cannot parse, {programs} programs found by both), {windows} read as PowerShell/cmd skipped, {} known differences, {} disagreements",
        cmds.len(),
        KNOWN.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} disagreement(s) with tree-sitter-bash:\n  {}",
        failures.len(),
        failures.join("\n  ")
    );
}
