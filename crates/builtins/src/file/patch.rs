//! `patch`: fuzzy find-and-replace in one file (`mode: "replace"`) or a
//! V4A multi-file patch (`mode: "patch"`, all or nothing: validated in
//! memory first, written after, the old contents restored if a write
//! fails). Both answer with a unified diff.

use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::path::PathBuf;

use super::state::FileCall;
use super::v4a::{self, Op};
use super::write::write_text;
use crate::fuzzy;
use hermes_core::RunCtx;

fn fail(msg: impl Into<String>) -> (Value, bool) {
    (json!({"success": false, "error": msg.into()}), true)
}

/// A unified diff with git-style headers (`a/<path>`, `b/<path>`). Only
/// the changed window (plus context) is diffed: the common head and tail
/// are skipped in one byte scan, so a one-line edit of a large file costs
/// little more than comparing it.
pub fn unified_diff(old: &str, new: &str, path: &str) -> String {
    let p = path.trim_start_matches('/');
    let (ob, nb) = (old.as_bytes(), new.as_bytes());
    let common = ob.iter().zip(nb).take_while(|(a, b)| a == b).count();
    // start of the first differing line, then three lines of context back
    let mut start = memchr::memrchr(b'\n', &ob[..common]).map_or(0, |i| i + 1);
    let limit = ob.len().min(nb.len()) - start;
    let suffix = ob
        .iter()
        .rev()
        .zip(nb.iter().rev())
        .take(limit)
        .take_while(|(a, b)| a == b)
        .count();
    let mut end = ob.len() - suffix;
    if end > 0 && ob[end - 1] != b'\n' {
        end = memchr::memchr(b'\n', &ob[end..]).map_or(ob.len(), |i| end + i + 1);
    }
    for _ in 0..3 {
        if start == 0 {
            break;
        }
        start = memchr::memrchr(b'\n', &ob[..start - 1]).map_or(0, |i| i + 1);
    }
    for _ in 0..3 {
        if end >= ob.len() {
            break;
        }
        end = memchr::memchr(b'\n', &ob[end..]).map_or(ob.len(), |i| end + i + 1);
    }
    let tail = ob.len() - end;
    let new_end = nb.len() - tail;
    let offset = memchr::memchr_iter(b'\n', &ob[..start]).count();
    let text = similar::TextDiff::from_lines(&old[start..end], &new[start..new_end])
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{p}"), &format!("b/{p}"))
        .to_string();
    if offset == 0 {
        return text;
    }
    // shift the hunk headers by the skipped lines
    let mut out = String::with_capacity(text.len() + 16);
    for line in text.split_inclusive('\n') {
        match line.strip_prefix("@@ -").and_then(|r| r.split_once(" @@")) {
            Some((ranges, rest)) => {
                let shift = |r: &str| -> String {
                    let (a, b) = r.split_once(',').map_or((r, None), |(a, b)| (a, Some(b)));
                    let a: usize = a.parse().unwrap_or(0);
                    let a = a + offset;
                    match b {
                        Some(b) => format!("{a},{b}"),
                        None => a.to_string(),
                    }
                };
                let (o, n) = ranges.split_once(" +").unwrap_or((ranges, ""));
                out.push_str(&format!("@@ -{} +{} @@{rest}", shift(o), shift(n)));
            }
            None => out.push_str(line),
        }
    }
    out
}

/// Read a text file for editing: (content without BOM, uses CRLF).
fn read_text(
    fc: &FileCall<'_>,
    real: &std::path::Path,
    shown: &str,
) -> Result<(String, bool), String> {
    let data = fc.fs.read(real).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            format!("File not found: {shown}")
        } else {
            format!("Cannot read {shown}: {e}")
        }
    })?;
    if super::read::looks_binary(&data) {
        return Err(format!("{shown} looks binary: patch edits text files only"));
    }
    let text = String::from_utf8(data)
        .map_err(|_| format!("{shown} is not valid UTF-8 text: patch edits UTF-8 text only"))?;
    let text = text
        .strip_prefix('\u{feff}')
        .map(str::to_string)
        .unwrap_or(text);
    let crlf = text.contains("\r\n");
    let text = if crlf {
        text.replace("\r\n", "\n")
    } else {
        text
    };
    Ok((text, crlf))
}

fn str_arg<'a>(args: &'a Value, k: &str) -> Option<&'a str> {
    args.get(k).and_then(Value::as_str)
}

pub fn run(fc: &FileCall<'_>, args: &Value, ctx: &RunCtx) -> (Value, bool) {
    match str_arg(args, "mode").unwrap_or("replace") {
        "replace" => replace(fc, args, ctx),
        "patch" => v4a_patch(fc, args, ctx),
        other => fail(format!("unknown mode '{other}': use 'replace' or 'patch'")),
    }
}

fn replace(fc: &FileCall<'_>, args: &Value, ctx: &RunCtx) -> (Value, bool) {
    let task = ctx.context.task_id.as_str();
    let Some(path) = str_arg(args, "path").filter(|p| !p.trim().is_empty()) else {
        return fail("path is required for mode 'replace'");
    };
    let Some(old) = str_arg(args, "old_string") else {
        return fail("old_string is required for mode 'replace'");
    };
    let Some(new) = str_arg(args, "new_string") else {
        return fail("new_string is required for mode 'replace' (use an empty string to delete)");
    };
    let replace_all = args
        .get("replace_all")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let (abs, real) = match fc.resolve(task, path) {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    let shown = abs.display().to_string();
    let (text, crlf) = match read_text(fc, &real, &shown) {
        Ok(t) => t,
        Err(e) => return fail(e),
    };
    let old_n = old.replace("\r\n", "\n");
    let new_n = new.replace("\r\n", "\n");
    let replaced = match fuzzy::find_and_replace(&text, &old_n, &new_n, replace_all) {
        Ok(r) => r,
        Err(e) => {
            let mut v = json!({"success": false, "error": e.message()});
            let failures = fc.patch_outcome(task, &real, true);
            if failures >= 3 {
                v["_hint"] = json!(format!(
                    "{failures} patches of this file failed in a row. Stop guessing: read_file the exact region first, then copy old_string from it character for character; or rewrite the file with write_file if the change is large."
                ));
            } else if matches!(e, fuzzy::FuzzyError::NoMatch { .. }) {
                v["_hint"] = json!(
                    "read_file the region again and copy old_string exactly (whitespace included), or include more surrounding lines."
                );
            }
            return (v, true);
        }
    };
    fc.patch_outcome(task, &real, false);
    let diff = unified_diff(&text, &replaced.content, &shown);
    let out = if crlf {
        replaced.content.replace('\n', "\r\n")
    } else {
        replaced.content
    };
    match write_text(fc, task, &shown, &real, &out, ctx) {
        Ok(w) => {
            let mut v = json!({
                "success": true,
                "diff": diff,
                "files_modified": [shown],
                "lint": w.lint,
                "resolved_path": shown,
            });
            if replaced.strategy != "exact" {
                v["match_strategy"] = json!(replaced.strategy);
            }
            if replaced.count > 1 {
                v["replacements"] = json!(replaced.count);
            }
            if let Some(warn) = w.warning {
                v["_warning"] = json!(warn);
            }
            (v, false)
        }
        Err(e) => fail(e),
    }
}

/// A planned change of one path.
enum Change {
    Write {
        shown: String,
        content: String,
        crlf: bool,
    },
    Delete {
        shown: String,
    },
}

fn v4a_patch(fc: &FileCall<'_>, args: &Value, ctx: &RunCtx) -> (Value, bool) {
    let task = ctx.context.task_id.as_str();
    let Some(body) = str_arg(args, "patch").filter(|p| !p.trim().is_empty()) else {
        return fail(
            "patch is required for mode 'patch' (V4A text: *** Begin Patch ... *** End Patch)",
        );
    };
    let ops = match v4a::parse(body) {
        Ok(o) => o,
        Err(e) => return fail(format!("Patch parse failed (no files were modified): {e}")),
    };
    // Phase 1: simulate everything in memory.
    let mut errors: Vec<String> = Vec::new();
    let mut state: HashMap<PathBuf, Option<(String, bool)>> = HashMap::new(); // simulated content, CRLF
    let mut originals: HashMap<PathBuf, Option<(String, bool)>> = HashMap::new();
    let mut plan: Vec<(PathBuf, Change)> = Vec::new();
    let mut created: Vec<String> = Vec::new();
    let mut deleted: Vec<String> = Vec::new();
    let mut diff = String::new();
    let mut current = |real: &PathBuf,
                       shown: &str,
                       state: &mut HashMap<PathBuf, Option<(String, bool)>>|
     -> Result<Option<(String, bool)>, String> {
        if let Some(s) = state.get(real) {
            return Ok(s.clone());
        }
        let orig = if fc.fs.metadata(real).is_ok() {
            Some(read_text(fc, real, shown)?)
        } else {
            None
        };
        originals.insert(real.clone(), orig.clone());
        Ok(orig)
    };
    for op in &ops {
        let res: Result<(), String> = (|| {
            match op {
                Op::Update {
                    path,
                    move_to,
                    hunks,
                } => {
                    let (abs, real) = fc.resolve(task, path)?;
                    let shown = abs.display().to_string();
                    let Some((text, crlf)) = current(&real, &shown, &mut state)? else {
                        return Err(format!("Update File {path}: file not found"));
                    };
                    let new = v4a::apply_hunks(&text, hunks)
                        .map_err(|e| format!("Update File {path}: {e}"))?;
                    diff.push_str(&unified_diff(&text, &new, &shown));
                    match move_to {
                        Some(to) => {
                            let (tabs, treal) = fc.resolve(task, to)?;
                            if current(&treal, &tabs.display().to_string(), &mut state)?.is_some() {
                                return Err(format!("Move to {to}: the target already exists"));
                            }
                            state.insert(real.clone(), None);
                            plan.push((
                                real,
                                Change::Delete {
                                    shown: shown.clone(),
                                },
                            ));
                            state.insert(treal.clone(), Some((new.clone(), crlf)));
                            plan.push((
                                treal,
                                Change::Write {
                                    shown: tabs.display().to_string(),
                                    content: new,
                                    crlf,
                                },
                            ));
                            deleted.push(path.clone());
                            created.push(to.clone());
                        }
                        None => {
                            state.insert(real.clone(), Some((new.clone(), crlf)));
                            plan.push((
                                real,
                                Change::Write {
                                    shown,
                                    content: new,
                                    crlf,
                                },
                            ));
                        }
                    }
                }
                Op::Add { path, content } => {
                    let (abs, real) = fc.resolve(task, path)?;
                    let shown = abs.display().to_string();
                    if current(&real, &shown, &mut state)?.is_some() {
                        return Err(format!(
                            "Add File {path}: the file already exists (use Update File)"
                        ));
                    }
                    diff.push_str(&unified_diff("", content, &shown));
                    state.insert(real.clone(), Some((content.clone(), false)));
                    plan.push((
                        real,
                        Change::Write {
                            shown,
                            content: content.clone(),
                            crlf: false,
                        },
                    ));
                    created.push(path.clone());
                }
                Op::Delete { path } => {
                    let (abs, real) = fc.resolve(task, path)?;
                    let shown = abs.display().to_string();
                    let Some((text, _)) = current(&real, &shown, &mut state)? else {
                        return Err(format!("Delete File {path}: file not found"));
                    };
                    diff.push_str(&unified_diff(&text, "", &shown));
                    state.insert(real.clone(), None);
                    plan.push((real, Change::Delete { shown }));
                    deleted.push(path.clone());
                }
                Op::Move { from, to } => {
                    let (fabs, freal) = fc.resolve(task, from)?;
                    let (tabs, treal) = fc.resolve(task, to)?;
                    let Some((text, crlf)) =
                        current(&freal, &fabs.display().to_string(), &mut state)?
                    else {
                        return Err(format!("Move File {from}: source not found"));
                    };
                    if current(&treal, &tabs.display().to_string(), &mut state)?.is_some() {
                        return Err(format!("Move File {to}: the target already exists"));
                    }
                    state.insert(freal.clone(), None);
                    state.insert(treal.clone(), Some((text.clone(), crlf)));
                    plan.push((
                        freal,
                        Change::Delete {
                            shown: fabs.display().to_string(),
                        },
                    ));
                    plan.push((
                        treal,
                        Change::Write {
                            shown: tabs.display().to_string(),
                            content: text,
                            crlf,
                        },
                    ));
                    deleted.push(from.clone());
                    created.push(to.clone());
                }
            }
            Ok(())
        })();
        if let Err(e) = res {
            errors.push(e);
        }
    }
    if !errors.is_empty() {
        return fail(format!(
            "Patch validation failed (no files were modified):\n  • {}",
            errors.join("\n  • ")
        ));
    }
    // Phase 2: write, restoring what was written if anything fails.
    let mut done: Vec<PathBuf> = Vec::new();
    let mut modified: Vec<String> = Vec::new();
    let mut lint = Map::new();
    let mut warnings: Vec<String> = Vec::new();
    for (real, change) in &plan {
        let r = match change {
            Change::Write {
                shown,
                content,
                crlf,
            } => {
                let out = if *crlf {
                    content.replace('\n', "\r\n")
                } else {
                    content.clone()
                };
                write_text(fc, task, shown, real, &out, ctx).map(|w| {
                    lint.insert(shown.clone(), w.lint);
                    if let Some(x) = w.warning {
                        warnings.push(x);
                    }
                    shown.clone()
                })
            }
            Change::Delete { shown } => fc
                .fs
                .remove_file(real)
                .map(|_| {
                    fc.wrote(task, real, None);
                    shown.clone()
                })
                .map_err(|e| format!("Cannot delete {shown}: {e}")),
        };
        match r {
            Ok(shown) => {
                done.push(real.clone());
                if !modified.contains(&shown) {
                    modified.push(shown);
                }
            }
            Err(e) => {
                // roll back in reverse order
                for p in done.iter().rev() {
                    match originals.get(p) {
                        Some(Some((text, crlf))) => {
                            let t = if *crlf {
                                text.replace('\n', "\r\n")
                            } else {
                                text.clone()
                            };
                            let _ = fc.fs.write_atomic(p, t.as_bytes(), None);
                        }
                        Some(None) | None => {
                            let _ = fc.fs.remove_file(p);
                        }
                    }
                }
                return fail(format!(
                    "Patch failed while writing, changes were rolled back: {e}"
                ));
            }
        }
    }
    let mut v = json!({
        "success": true,
        "diff": diff,
        "files_modified": modified,
        "lint": lint,
    });
    if !created.is_empty() {
        v["files_created"] = json!(created);
    }
    if !deleted.is_empty() {
        v["files_deleted"] = json!(deleted);
    }
    if !warnings.is_empty() {
        v["_warning"] = json!(warnings.join("\n"));
    }
    (v, false)
}

#[cfg(test)]
mod tests {
    use super::unified_diff;

    fn full(old: &str, new: &str) -> String {
        similar::TextDiff::from_lines(old, new)
            .unified_diff()
            .context_radius(3)
            .header("a/f", "b/f")
            .to_string()
    }

    #[test]
    fn windowed_diff_equals_the_full_diff() {
        let base: String = (0..200).map(|i| format!("line {i}\n")).collect();
        let cases = [
            base.replace("line 100\n", "line hundred\n"),
            base.replace("line 0\n", "zero\n"),
            base.replace("line 199\n", "last\n"),
            base.replace("line 50\n", "")
                .replace("line 150\n", "x\ny\n"),
            format!("{base}appended\n"),
            base.trim_end().to_string(),
            String::new(),
        ];
        for new in cases {
            assert_eq!(unified_diff(&base, &new, "/f"), full(&base, &new));
            assert_eq!(unified_diff(&new, &base, "f"), full(&new, &base));
        }
        assert_eq!(unified_diff("", "a\n", "f"), full("", "a\n"));
        assert_eq!(unified_diff("é\n", "è\n", "f"), full("é\n", "è\n"));
    }
}
