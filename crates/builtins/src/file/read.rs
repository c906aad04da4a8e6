//! `read_file`: a page of numbered `N|text` lines. Kept from the original:
//! 1-based offset/limit, long lines cut, a character budget with
//! `next_offset`, device and binary files refused, images described,
//! credential files behind approval, `similar_files` when a path is wrong,
//! and the loop guards (an unchanged re-read gets a short stub, the next
//! one an error). Done better: one pass over the bytes in process (no
//! `wc`/`sed`), true line counts (a last line without a newline counts),
//! no phantom empty line at the end.

use serde_json::{Value, json};
use std::io::BufRead;
use std::path::Path;

use super::paths;
use super::state::{Dedup, FileCall, error};
use hermes_core::RunCtx;

const DEVICES: &[&str] = &[
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
    "/dev/full",
    "/dev/stdin",
    "/dev/tty",
    "/dev/console",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/fd/0",
    "/dev/fd/1",
    "/dev/fd/2",
];

const IMAGE_EXT: &[&str] = &["png", "jpg", "jpeg", "gif", "webp", "bmp", "ico"];
const BINARY_EXT: &[&str] = &[
    "exe", "dll", "so", "dylib", "o", "a", "lib", "bin", "class", "jar", "war", "pyc", "pyo",
    "zip", "gz", "tgz", "bz2", "xz", "zst", "7z", "rar", "tar", "iso", "dmg", "pdf", "mp3", "mp4",
    "avi", "mov", "mkv", "wav", "flac", "ogg", "woff", "woff2", "ttf", "otf", "eot", "sqlite",
    "db", "wasm", "tiff", "psd",
];

fn ext_of(p: &Path) -> String {
    p.extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default()
}

/// More than 30% control bytes (or any NUL) in the first 1000 bytes.
pub fn looks_binary(head: &[u8]) -> bool {
    let head = &head[..head.len().min(1000)];
    if head.is_empty() {
        return false;
    }
    if head.contains(&0) {
        return true;
    }
    let ctrl = head
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t' | 0x0c | 0x1b))
        .count();
    ctrl * 10 > head.len() * 3
}

fn int_arg(args: &Value, key: &str) -> Option<i64> {
    match args.get(key)? {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

pub fn run(fc: &FileCall<'_>, args: &Value, ctx: &RunCtx) -> (Value, bool) {
    let task = ctx.context.task_id.as_str();
    let Some(path) = args.get("path").and_then(Value::as_str) else {
        return (error("path is required"), true);
    };
    let offset = int_arg(args, "offset").unwrap_or(1).clamp(1, 1 << 40) as usize;
    let limit = int_arg(args, "limit")
        .unwrap_or(500)
        .clamp(1, fc.cfg.max_lines as i64) as usize;
    let (abs, real) = match fc.resolve(task, path) {
        Ok(p) => p,
        Err(e) => return (error(e), true),
    };
    let shown = abs.display().to_string();
    if DEVICES
        .iter()
        .any(|d| Path::new(d) == abs || Path::new(d) == real)
    {
        return (
            error(format!(
                "Cannot read device file {shown}: it never ends or blocks. Read a regular file."
            )),
            true,
        );
    }
    if let Some(reason) = paths::read_sensitive(&real, &fc.home, &fc.data_dir)
        && let Err(e) = fc.approve(
            "file_read_credentials",
            &reason,
            &format!("read_file {shown}"),
            ctx,
        )
    {
        return (json!({"error": e, "path": shown}), true);
    }
    let meta = match fc.fs.metadata(&real) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let mut v = json!({
                "content": "", "total_lines": 0, "file_size": 0, "truncated": false,
                "is_binary": false, "is_image": false,
                "error": format!("File not found: {shown}"),
            });
            let similar = similar_files(fc, &abs);
            if !similar.is_empty() {
                v["similar_files"] = json!(similar);
            }
            return (v, true);
        }
        Err(e) => return (error(format!("Cannot read {shown}: {e}")), true),
    };
    if meta.is_dir {
        return (
            error(format!(
                "{shown} is a directory, not a file. Use search_files with target='files' to list it."
            )),
            true,
        );
    }
    let ext = ext_of(&real);
    if IMAGE_EXT.contains(&ext.as_str()) {
        return (
            json!({
                "is_image": true, "is_binary": true, "file_size": meta.len,
                "hint": format!("{shown} is an image ({ext}, {} bytes); read_file returns text only. Use a vision tool to look at it.", meta.len),
            }),
            false,
        );
    }
    if BINARY_EXT.contains(&ext.as_str()) {
        return (
            json!({"is_binary": true, "file_size": meta.len,
                   "error": format!("Cannot read binary file {shown} (.{ext}): read_file shows text only. Use the terminal with a suitable tool (for example xxd or unzip -l) instead.")}),
            true,
        );
    }
    match fc.check_dedup(task, &real, offset, limit, meta.mtime_ns) {
        Dedup::Fresh => {}
        Dedup::Stub => {
            return (
                json!({
                    "status": "unchanged",
                    "message": format!("{shown} has not changed since you read it (same offset and limit); its content is already in the conversation above. Use it instead of reading again."),
                    "path": shown, "dedup": true, "content_returned": false,
                }),
                false,
            );
        }
        Dedup::Blocked(n) => {
            return (
                json!({
                    "error": format!("BLOCKED: you have read {shown} (same offset and limit) {n} times and it has not changed. Stop re-reading it: use the content you already have and move on to the next step."),
                    "path": shown, "already_read": n,
                }),
                true,
            );
        }
    }
    let head = match fc.fs.read_head(&real, 1000) {
        Ok(d) => d,
        Err(e) => return (error(format!("Cannot read {shown}: {e}")), true),
    };
    if looks_binary(&head) {
        return (
            json!({"is_binary": true, "file_size": meta.len,
                   "error": format!("Cannot read {shown}: it looks binary (control bytes in its first 1000 bytes). read_file shows text only.")}),
            true,
        );
    }
    let whole = |fc: &FileCall<'_>| fc.fs.read(&real);
    let rendered = if ext == "ipynb" {
        match whole(fc) {
            Ok(data) => match notebook_text(&data) {
                Some(text) => render(fc, std::io::Cursor::new(text), offset, limit).map(|mut v| {
                    v["extracted_document"] = json!(true);
                    v
                }),
                None => render(fc, std::io::Cursor::new(data), offset, limit),
            },
            Err(e) => Err(e),
        }
    } else if fc.fs.host_paths() {
        // the native fast path: stream the file, bounded memory
        std::fs::File::open(&real).and_then(|f| {
            render(
                fc,
                std::io::BufReader::with_capacity(256 * 1024, f),
                offset,
                limit,
            )
        })
    } else {
        whole(fc).and_then(|d| render(fc, std::io::Cursor::new(d), offset, limit))
    };
    let mut v = match rendered {
        Ok(v) => v,
        Err(e) => return (error(format!("Cannot read {shown}: {e}")), true),
    };
    let truncated = v["truncated"].as_bool().unwrap_or(false);
    fc.mark_read(task, &real, meta.mtime_ns, offset > 1 || truncated);
    v["file_size"] = json!(meta.len);
    if meta.len > 512 * 1024 && limit > 200 && truncated {
        v["_hint"] = json!(
            "This file is large: search_files with a pattern (and context) finds the part you need faster than paging through it."
        );
    }
    (v, false)
}

/// A Jupyter notebook as text: each cell's source under a `# %%` marker
/// (`# %% [markdown]` for markdown cells), text outputs as comments.
/// `None` when the JSON is not a notebook (then it is read as JSON text).
fn notebook_text(data: &[u8]) -> Option<Vec<u8>> {
    let nb: Value = serde_json::from_slice(data).ok()?;
    let cells = nb.get("cells")?.as_array()?;
    let join = |v: Option<&Value>| -> String {
        match v {
            Some(Value::Array(parts)) => parts.iter().filter_map(Value::as_str).collect(),
            Some(Value::String(s)) => s.clone(),
            _ => String::new(),
        }
    };
    let mut out = String::new();
    for cell in cells {
        let kind = cell
            .get("cell_type")
            .and_then(Value::as_str)
            .unwrap_or("code");
        out.push_str(if kind == "code" {
            "# %%\n"
        } else {
            "# %% [markdown]\n"
        });
        let src = join(cell.get("source"));
        out.push_str(&src);
        if !src.ends_with('\n') {
            out.push('\n');
        }
        if let Some(Value::Array(outputs)) = cell.get("outputs") {
            for o in outputs {
                let text = join(o.get("text")).to_string()
                    + &join(o.get("data").and_then(|d| d.get("text/plain")));
                for line in text.lines() {
                    out.push_str("# > ");
                    out.push_str(line);
                    out.push('\n');
                }
            }
        }
        out.push('\n');
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    Some(out.into_bytes())
}

/// The page of `data` starting at line `offset` (1-based), numbered.
fn render<R: BufRead>(
    fc: &FileCall<'_>,
    mut r: R,
    offset: usize,
    limit: usize,
) -> std::io::Result<Value> {
    // One streaming pass: count the lines before the page, render the page,
    // count the rest; memory stays bounded by the page, whatever the size.
    let mut newlines = 0usize;
    let mut last_byte: Option<u8> = None;
    let mut to_skip = offset - 1;
    while to_skip > 0 {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        let mut consumed = buf.len();
        let mut nl = 0usize;
        for i in memchr::memchr_iter(b'\n', buf) {
            nl += 1;
            if nl == to_skip {
                consumed = i + 1;
                break;
            }
        }
        last_byte = Some(buf[consumed - 1]);
        to_skip -= nl;
        newlines += nl;
        r.consume(consumed);
    }
    let budget = fc.cfg.max_read_chars;
    let max_len = fc.cfg.max_line_length;
    let mut content = String::new();
    let mut shown = 0usize;
    let mut cut_by_budget = false;
    let mut raw: Vec<u8> = Vec::new();
    while shown < limit && !cut_by_budget {
        raw.clear();
        let n = r.read_until(b'\n', &mut raw)?;
        if n == 0 {
            break;
        }
        last_byte = Some(raw[n - 1]);
        if raw.ends_with(b"\n") {
            newlines += 1;
            raw.pop();
        }
        if raw.ends_with(b"\r") {
            raw.pop();
        }
        let line: &[u8] = if offset == 1 && shown == 0 {
            raw.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&raw)
        } else {
            &raw
        };
        let text = String::from_utf8_lossy(line);
        let num = offset + shown;
        let mut rendered = if text.chars().count() > max_len {
            let cut: String = text.chars().take(max_len).collect();
            format!("{num}|{cut}... [truncated]")
        } else {
            format!("{num}|{text}")
        };
        let extra = rendered.len() + usize::from(!content.is_empty());
        if content.len() + extra > budget {
            if shown == 0 {
                // one line bigger than the budget: clamp it mid-line
                let mut cut = budget.saturating_sub(20);
                while !rendered.is_char_boundary(cut) {
                    cut -= 1;
                }
                rendered.truncate(cut);
                rendered.push_str("... [truncated]");
                content = rendered;
                shown = 1;
            }
            cut_by_budget = true;
            break;
        }
        if !content.is_empty() {
            content.push('\n');
        }
        content.push_str(&rendered);
        shown += 1;
    }
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        newlines += memchr::memchr_iter(b'\n', buf).count();
        last_byte = buf.last().copied();
        let len = buf.len();
        r.consume(len);
    }
    let total = newlines + usize::from(last_byte.is_some_and(|b| b != b'\n'));
    if hermes_approval::redact::may_contain_secret(&content) {
        // like the terminal's output: secrets never reach the model
        content = hermes_approval::redact::redact_secrets(&content);
    }
    let last = offset + shown.saturating_sub(1);
    let truncated = cut_by_budget || total > offset + limit - 1;
    let mut v = json!({
        "content": content,
        "total_lines": total,
        "file_size": 0,
        "truncated": truncated,
        "is_binary": false,
        "is_image": false,
    });
    if truncated && last < total {
        v["hint"] = json!(format!(
            "Use offset={} to continue reading (showing {}-{} of {} lines)",
            last + 1,
            offset,
            last,
            total
        ));
        if cut_by_budget {
            v["truncated_by"] = json!("bytes");
            v["next_offset"] = json!(last + 1);
        }
    }
    if offset > total && total > 0 {
        v["hint"] = json!(format!(
            "offset {offset} is past the end of the file ({total} lines)"
        ));
    }
    Ok(v)
}

/// Up to five paths near a missing one (same stem, prefix, substring, ...).
fn similar_files(fc: &FileCall<'_>, abs: &Path) -> Vec<String> {
    let Some(dir) = abs.parent() else {
        return Vec::new();
    };
    let Ok(entries) = fc.fs.read_dir(dir) else {
        return Vec::new();
    };
    let want = abs
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let want_stem = want
        .rsplit_once('.')
        .map(|(s, _)| s)
        .unwrap_or(&want)
        .to_string();
    let want_ext = want.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    let mut scored: Vec<(u32, String)> = entries
        .iter()
        .filter(|e| !e.is_dir)
        .filter_map(|e| {
            let name = e.name.to_lowercase();
            let stem = name.rsplit_once('.').map(|(s, _)| s).unwrap_or(&name);
            let ext = name.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
            let score = if stem == want_stem {
                90
            } else if name.starts_with(&want_stem) || want.starts_with(stem) {
                70
            } else if name.contains(&want_stem) {
                60
            } else if want.contains(stem) && stem.len() > 2 {
                40
            } else if ext == want_ext && overlap(&name, &want) >= 0.4 {
                30
            } else {
                0
            };
            (score > 0).then(|| (score, dir.join(&e.name).display().to_string()))
        })
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().take(5).map(|(_, p)| p).collect()
}

fn overlap(a: &str, b: &str) -> f64 {
    let sa: std::collections::HashSet<char> = a.chars().collect();
    let sb: std::collections::HashSet<char> = b.chars().collect();
    let inter = sa.intersection(&sb).count() as f64;
    let union = sa.union(&sb).count().max(1) as f64;
    inter / union
}
