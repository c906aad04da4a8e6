//! `write_file`, and the one careful write every file tool uses: sensitive
//! paths through approval, JSON/YAML/TOML syntax checked before anything
//! is written, the old file's CRLF line endings, BOM and mode kept, parents
//! created, then an atomic replace (temporary file and rename in the same
//! folder) through the task's file system.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};

use super::paths;
use super::state::{FileCall, error};
use hermes_core::RunCtx;

/// What a successful write did.
pub struct Written {
    pub bytes: usize,
    pub dirs_created: bool,
    pub warning: Option<String>,
    pub lint: Value,
}

/// Syntax errors of structured formats (checked before writing).
pub fn syntax_error(path: &Path, content: &str) -> Option<String> {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let body = content.strip_prefix('\u{feff}').unwrap_or(content);
    match ext.as_str() {
        "json" => serde_json::from_str::<serde::de::IgnoredAny>(body)
            .err()
            .map(|e| e.to_string()),
        "yaml" | "yml" => {
            for doc in serde_yaml_ng::Deserializer::from_str(body) {
                if let Err(e) = <serde::de::IgnoredAny as serde::Deserialize>::deserialize(doc) {
                    return Some(e.to_string());
                }
            }
            None
        }
        "toml" => toml::from_str::<toml::Table>(body)
            .err()
            .map(|e| e.to_string().trim().to_string()),
        _ => None,
    }
}

fn lint_of(path: &Path) -> Value {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "json" | "yaml" | "yml" | "toml" => json!({"status": "ok", "output": ""}),
        "" => json!({"status": "skipped", "message": "No linter for files without an extension"}),
        e => json!({"status": "skipped", "message": format!("No linter for .{e} files")}),
    }
}

/// Content that is really `read_file` output pasted back (`N|` prefixes).
fn looks_like_read_output(content: &str) -> bool {
    let lines: Vec<&str> = content.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.len() < 2 {
        return false;
    }
    let nums: Vec<Option<u64>> = lines
        .iter()
        .map(|l| l.split_once('|').and_then(|(n, _)| n.trim().parse().ok()))
        .collect();
    let numbered = nums.iter().filter(|n| n.is_some()).count();
    if numbered * 10 < lines.len() * 6 {
        return false;
    }
    let seq: Vec<u64> = nums.into_iter().flatten().collect();
    seq.windows(2).all(|w| w[1] == w[0] + 1)
}

/// Write `content` to `real` with every safeguard (see the module doc).
pub fn write_text(
    fc: &FileCall<'_>,
    task: &str,
    shown: &str,
    real: &Path,
    content: &str,
    ctx: &RunCtx,
) -> Result<Written, String> {
    let approved = match paths::write_sensitive(real, &fc.home, &fc.data_dir, &fc.protected) {
        Some(reason) => {
            fc.approve(
                "file_write_sensitive",
                &reason,
                &format!("write_file {shown}"),
                ctx,
            )?;
            true
        }
        None => false,
    };
    if let Some(e) = syntax_error(real, content) {
        let ext = real
            .extension()
            .map(|e| e.to_string_lossy().to_string())
            .unwrap_or_default();
        return Err(format!(
            "Refusing to write {shown}: the content fails .{ext} syntax validation ({e}). Nothing was written; fix the syntax and try again."
        ));
    }
    fc.fs
        .check_write(real)
        .map_err(|e| format!("Cannot write {shown}: {e}"))?;
    let old_meta = fc.fs.metadata(real).ok();
    if old_meta.is_some_and(|m| m.is_dir) {
        return Err(format!("{shown} is a directory"));
    }
    // The sandbox's view refuses to write a file with other hard links: one
    // of its other names may lie outside the workspace (a link made before
    // the sandbox, or by the host). Approved, this name is unlinked first and
    // written as a new file: the other names keep their content.
    let relink = match old_meta {
        Some(m) if m.is_file && m.links > 1 && fc.fs.name() == "sandbox" => {
            fc.approve(
                "file_write_hardlinked",
                &format!(
                    "{shown} has {} hard links: another name may be a file outside the workspace. Approved, {shown} becomes a new file and the other names keep their content",
                    m.links
                ),
                &format!("write_file {shown}"),
                ctx,
            )?;
            true
        }
        _ => false,
    };
    let warning = fc.stale_warning(task, real, old_meta.map(|m| m.mtime_ns));
    let mut data: Vec<u8> = Vec::with_capacity(content.len() + 16);
    if old_meta.is_some() {
        let head = fc.fs.read_head(real, 64 * 1024).unwrap_or_default();
        let had_bom = head.starts_with(b"\xEF\xBB\xBF");
        let crlf = memchr::memmem::find(&head, b"\r\n").is_some();
        if had_bom && !content.starts_with('\u{feff}') {
            data.extend_from_slice(b"\xEF\xBB\xBF");
        }
        if crlf && !content.contains("\r\n") {
            data.extend_from_slice(content.replace('\n', "\r\n").as_bytes());
        } else {
            data.extend_from_slice(content.as_bytes());
        }
    } else {
        data.extend_from_slice(content.as_bytes());
    }
    let dirs_created = match real.parent() {
        Some(parent) => fc
            .fs
            .create_dir_all(parent)
            .map_err(|e| format!("Cannot create {}: {e}", parent.display()))?,
        None => false,
    };
    if relink {
        fc.fs
            .remove_file(real)
            .map_err(|e| format!("Cannot write {shown}: {e}"))?;
    }
    // Approved as sensitive, it may reach repository metadata; otherwise
    // the sandbox's view refuses that at the moment of writing, wherever
    // the path leads by then (the check above saw the path a moment ago).
    let mode = old_meta.map(|m| m.mode);
    if approved {
        fc.fs.write_atomic_approved(real, &data, mode)
    } else {
        fc.fs.write_atomic(real, &data, mode)
    }
    .map_err(|e| format!("Cannot write {shown}: {e}"))?;
    let new_mtime = fc.fs.metadata(real).ok().map(|m| m.mtime_ns);
    fc.wrote(task, real, new_mtime);
    Ok(Written {
        bytes: data.len(),
        dirs_created,
        warning,
        lint: lint_of(real),
    })
}

pub fn run(fc: &FileCall<'_>, args: &Value, ctx: &RunCtx) -> (Value, bool) {
    let task = ctx.context.task_id.as_str();
    let Some(path) = args
        .get("path")
        .and_then(Value::as_str)
        .filter(|p| !p.trim().is_empty())
    else {
        return (error("path is required"), true);
    };
    let content = match args.get("content") {
        Some(Value::String(s)) => s.as_str(),
        None | Some(Value::Null) => {
            return (
                error("content is required (use an empty string for an empty file)"),
                true,
            );
        }
        Some(_) => return (error("content must be a string"), true),
    };
    if content.contains("\"content_returned\": false") || content.contains("\"dedup\": true") {
        return (
            error("content is a read_file status message, not file content: nothing was written"),
            true,
        );
    }
    if looks_like_read_output(content) {
        return (
            error(
                "content looks like read_file output (lines prefixed with 'N|'): strip the line numbers and write the plain text",
            ),
            true,
        );
    }
    let (abs, real) = match fc.resolve(task, path) {
        Ok(p) => p,
        Err(e) => return (error(e), true),
    };
    let shown = abs.display().to_string();
    match write_text(fc, task, &shown, &real, content, ctx) {
        Ok(w) => {
            let mut v = json!({
                "bytes_written": w.bytes,
                "dirs_created": w.dirs_created,
                "lint": w.lint,
                "resolved_path": shown,
                "files_modified": [shown],
            });
            if let Some(warn) = w.warning {
                v["_warning"] = json!(warn);
            }
            (v, false)
        }
        Err(e) => (
            json!({"error": e, "bytes_written": 0, "dirs_created": false, "resolved_path": shown}),
            true,
        ),
    }
}

/// Paths as the model wrote them, resolved (for patch headers).
pub fn resolve_many(
    fc: &FileCall<'_>,
    task: &str,
    paths: &[String],
) -> Result<Vec<(PathBuf, PathBuf)>, String> {
    paths.iter().map(|p| fc.resolve(task, p)).collect()
}
