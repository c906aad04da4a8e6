//! `search_files`: content search (regex, ripgrep's matcher and searcher)
//! and file-name search (globs), in process over a parallel gitignore-aware
//! walk (ripgrep's `ignore` crate): no spawned `rg`/`grep`/`find`. Kept
//! from the original: parameters, `content` / `files_only` / `count`
//! output, context lines, the dense `matches_text` form from five matches
//! on, credential files dropped. Done better: `total_count` is the true
//! total (the original stops counting at its page), results are sorted by
//! path (stable pages, where `rg`'s order changes run to run), bare file
//! names match as substrings, and the truncation hint is inside the JSON.

use grep_matcher::Matcher;
use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::WalkState;
use parking_lot::Mutex;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::index::{self, Cached};
use super::paths;
use super::prefilter::Need;
use super::state::FileCall;
use hermes_core::RunCtx;

const MAX_MATCH_CHARS: usize = 500;

#[derive(Clone, Copy, PartialEq, Eq)]
enum OutMode {
    Content,
    FilesOnly,
    Count,
}

/// One line of output: a match or a context line.
struct Line {
    line: u64,
    text: String,
    is_match: bool,
}

/// What one file gave.
struct FileHits {
    path: PathBuf,
    count: u64,
    lines: Vec<Line>,
}

struct Collect {
    mode: OutMode,
    keep: usize,
    count: u64,
    lines: Vec<Line>,
}

fn clip(bytes: &[u8]) -> String {
    let b = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let b = b.strip_suffix(b"\r").unwrap_or(b);
    let s = String::from_utf8_lossy(b);
    if s.chars().count() > MAX_MATCH_CHARS {
        let mut t: String = s.chars().take(MAX_MATCH_CHARS).collect();
        t.push_str("...");
        t
    } else {
        s.into_owned()
    }
}

impl Sink for Collect {
    type Error = std::io::Error;
    fn matched(&mut self, _s: &Searcher, m: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        self.count += 1;
        if self.mode == OutMode::FilesOnly {
            return Ok(false);
        }
        if self.mode == OutMode::Content && self.lines.len() < self.keep {
            self.lines.push(Line {
                line: m.line_number().unwrap_or(0),
                text: clip(m.bytes()),
                is_match: true,
            });
        }
        Ok(true)
    }
    fn context(&mut self, _s: &Searcher, c: &SinkContext<'_>) -> Result<bool, Self::Error> {
        if self.mode == OutMode::Content && self.lines.len() < self.keep {
            self.lines.push(Line {
                line: c.line_number().unwrap_or(0),
                text: clip(c.bytes()),
                is_match: false,
            });
        }
        Ok(true)
    }
}

fn int_arg(args: &Value, key: &str, default: i64) -> i64 {
    match args.get(key) {
        Some(Value::Number(n)) => n.as_i64().unwrap_or(default),
        Some(Value::String(s)) => s.trim().parse().unwrap_or(default),
        _ => default,
    }
}

/// How a path is shown: under the path as the model gave it (like rg).
fn display(given: &str, root: &Path, p: &Path) -> String {
    match p.strip_prefix(root) {
        Ok(rel) if rel.as_os_str().is_empty() => given.to_string(),
        Ok(rel) => {
            let g = given.trim_end_matches('/');
            if g.is_empty() {
                format!("/{}", rel.display())
            } else {
                format!("{g}/{}", rel.display())
            }
        }
        Err(_) => p.display().to_string(),
    }
}

pub fn run(fc: &FileCall<'_>, args: &Value, ctx: &RunCtx) -> (Value, bool) {
    let task = ctx.context.task_id.as_str();
    let Some(pattern) = args.get("pattern").and_then(Value::as_str) else {
        return (json!({"error": "pattern is required"}), true);
    };
    let target = match args
        .get("target")
        .and_then(Value::as_str)
        .unwrap_or("content")
    {
        "content" | "grep" => "content",
        "files" | "find" => "files",
        other => {
            return (
                json!({"error": format!("unknown target '{other}': use 'content' or 'files'")}),
                true,
            );
        }
    };
    let given = args
        .get("path")
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
        .unwrap_or(".");
    let limit = int_arg(args, "limit", 50).clamp(1, fc.cfg.max_search_limit as i64) as usize;
    let offset = int_arg(args, "offset", 0).clamp(0, 1 << 32) as usize;
    let context = int_arg(args, "context", 0).clamp(0, 20) as usize;
    let mode = match args
        .get("output_mode")
        .and_then(Value::as_str)
        .unwrap_or("content")
    {
        "content" => OutMode::Content,
        "files_only" | "files_with_matches" => OutMode::FilesOnly,
        "count" => OutMode::Count,
        other => {
            return (
                json!({"error": format!("unknown output_mode '{other}': use content, files_only or count")}),
                true,
            );
        }
    };
    let (_abs, root) = match fc.resolve(task, given) {
        Ok(p) => p,
        Err(e) => return (json!({"total_count": 0, "error": e}), true),
    };
    if let Err(e) = fc.fs.check_read(&root) {
        return (json!({"total_count": 0, "error": e.to_string()}), true);
    }
    // Remote file systems: the walk there says when the path is missing.
    if fc.fs.host_paths() && !root.exists() {
        return (
            json!({"total_count": 0, "error": format!("Path not found: {given}")}),
            true,
        );
    }
    let repeat = fc.search_repeat(task, args.to_string());
    if repeat >= 4 {
        return (
            json!({"error": format!("BLOCKED: this exact search ran {repeat} times in a row with nothing else in between; the results have not changed. Use the results you already have, or change the pattern or path.")}),
            true,
        );
    }
    let glob = args
        .get("file_glob")
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty());
    let (mut v, is_error) = if target == "files" {
        files(fc, pattern, given, &root, limit, offset)
    } else {
        content(
            fc, pattern, given, &root, glob, limit, offset, context, mode,
        )
    };
    if repeat == 3 && !is_error {
        v["_warning"] = json!(
            "You ran this exact search three times in a row: the results are the same. Move on, or search for something else."
        );
    }
    (v, is_error)
}

#[allow(clippy::too_many_arguments)]
fn content(
    fc: &FileCall<'_>,
    pattern: &str,
    given: &str,
    root: &Path,
    glob: Option<&str>,
    limit: usize,
    offset: usize,
    context: usize,
    mode: OutMode,
) -> (Value, bool) {
    let matcher = match fc.matchers.get(pattern, |p| {
        // `^`/`$` at line boundaries: anchored patterns keep the fast
        // whole-buffer path
        RegexMatcherBuilder::new()
            .multi_line(multi_line(p))
            .line_terminator(Some(b'\n'))
            .build(p)
    }) {
        Ok(m) => m,
        Err(e) => {
            let msg = e.to_string();
            if pattern.contains("\\n") || pattern.contains('\n') {
                return (
                    json!({"total_count": 0, "matches": [],
                           "warning": "search_files is line oriented: a pattern cannot match across a newline. Search for one line of the text instead."}),
                    false,
                );
            }
            return (
                json!({"error": format!("Search failed: regex parse error: {msg}")}),
                true,
            );
        }
    };
    let keep = (offset + limit) * (1 + 2 * context);
    let (hits, omitted) = if fc.fs.host_paths() {
        match local_hits(fc, &matcher, pattern, root, glob, keep, context, mode) {
            Ok(x) => x,
            Err(e) => return (json!({"error": e}), true),
        }
    } else {
        match remote_hits(fc, &matcher, given, root, glob, keep, context, mode) {
            Ok(x) => x,
            Err(e) => return (e, true),
        }
    };
    render_content(hits, omitted, given, root, limit, offset, context, mode)
}

/// A file glob (`file_glob`) as every search applies it (local, indexed,
/// remote): against the file name, or the path under the root when it has
/// a `/`. It only narrows the files searched: a .gitignore'd file stays out.
fn name_glob(
    root: &Path,
    glob: Option<&str>,
) -> Result<Option<(globset::GlobMatcher, bool)>, String> {
    let Some(g) = glob else { return Ok(None) };
    let m = globset::GlobBuilder::new(g)
        .literal_separator(false)
        .build()
        .map_err(|e| format!("invalid file_glob '{g}': {e}"))?
        .compile_matcher();
    let _ = root;
    Ok(Some((m, g.contains('/'))))
}

fn glob_ok(root: &Path, p: &Path, g: &Option<(globset::GlobMatcher, bool)>) -> bool {
    match g {
        None => true,
        Some((m, true)) => p.strip_prefix(root).is_ok_and(|r| m.is_match(r)),
        Some((m, false)) => p.file_name().is_some_and(|n| m.is_match(n)),
    }
}

/// Largest file searched on a remote file system (fetched over the connection).
const REMOTE_MAX_FILE: u64 = 8 * 1024 * 1024;

/// Walk error as the model sees it.
fn walk_error(given: &str, e: std::io::Error) -> Value {
    if e.kind() == std::io::ErrorKind::NotFound {
        json!({"total_count": 0, "error": format!("Path not found: {given}")})
    } else {
        json!({"total_count": 0, "error": format!("Search failed: {e}")})
    }
}

/// Content search on a remote file system: the files come over the
/// connection in one go ([`hermes_exec::fs::FileSystem::walk`]) and are
/// searched here with the same matcher and searcher as local files.
#[allow(clippy::too_many_arguments)]
fn remote_hits(
    fc: &FileCall<'_>,
    matcher: &grep_regex::RegexMatcher,
    given: &str,
    root: &Path,
    glob: Option<&str>,
    keep: usize,
    context: usize,
    mode: OutMode,
) -> Result<(Vec<FileHits>, usize), Value> {
    let g = name_glob(root, glob).map_err(|e| json!({"error": e}))?;
    let files = fc
        .fs
        .walk(root, true, REMOTE_MAX_FILE)
        .map_err(|e| walk_error(given, e))?;
    let mut searcher = SearcherBuilder::new()
        .line_number(true)
        .binary_detection(BinaryDetection::quit(0))
        .before_context(context)
        .after_context(context)
        .build();
    let mut hits = Vec::new();
    let mut omitted = 0usize;
    for f in files {
        if !glob_ok(root, &f.path, &g) {
            continue;
        }
        let Some(data) = &f.data else { continue };
        let mut sink = Collect {
            mode,
            keep,
            count: 0,
            lines: Vec::new(),
        };
        if searcher
            .search_reader(matcher, &data[..], &mut sink)
            .is_err()
            || sink.count == 0
        {
            continue;
        }
        match hit(fc, &f.path, sink) {
            Some(h) => hits.push(h),
            None => omitted += 1,
        }
    }
    Ok((hits, omitted))
}

/// Whether `pattern` is compiled in multi-line mode (`^`/`$` at line
/// boundaries): only when it has them, so other patterns get exactly the
/// matcher `rg` builds for them.
fn multi_line(pattern: &str) -> bool {
    pattern.contains(['^', '$'])
}

/// A file's matches as a result, or `None` for a credential file (left
/// out and counted: read_file asks for approval to read it).
fn hit(fc: &FileCall<'_>, path: &Path, sink: Collect) -> Option<FileHits> {
    paths::read_sensitive(path, &fc.home, &fc.data_dir)
        .is_none()
        .then(|| FileHits {
            path: path.to_path_buf(),
            count: sink.count,
            lines: sink.lines,
        })
}

/// Search one file's content (kept in memory, or from disk when large).
/// Returns the sink when the file has a match.
fn search_one(
    searcher: &mut Searcher,
    matcher: &grep_regex::RegexMatcher,
    need: Option<&Need>,
    c: &Cached,
    mode: OutMode,
    keep: usize,
) -> Option<Collect> {
    let mut sink = Collect {
        mode,
        keep,
        count: 0,
        lines: Vec::new(),
    };
    let ok = match &c.data {
        // Most files have no match, and one scan of the whole content says
        // so without the searcher's line machinery. Sound only when the
        // matcher matches within lines (its line terminator is set: `^`/`$`
        // mean line boundaries, no `\A`) and the searcher reads the bytes as
        // they are (no byte-order mark: it transcodes UTF-16, drops UTF-8's).
        // With a signature (indexed searches), most files are ruled out
        // without reading them (`prefilter`).
        Some(d)
            if !c.bom
                && matcher.line_terminator().is_some()
                && (need.is_some_and(|n| c.sig().is_some_and(|s| !n.may_match(s)))
                    || !matcher.is_match(d).unwrap_or(true)) =>
        {
            return None;
        }
        // as a reader, like a file from disk: binary detection then looks
        // at all of it, not only the first 64 KB as for a slice
        Some(d) => searcher.search_reader(matcher, &d[..], &mut sink).is_ok(),
        None => searcher.search_path(matcher, &c.path, &mut sink).is_ok(),
    };
    (ok && sink.count > 0).then_some(sink)
}

fn new_searcher(context: usize) -> Searcher {
    SearcherBuilder::new()
        .line_number(true)
        .binary_detection(BinaryDetection::quit(0))
        .before_context(context)
        .after_context(context)
        .build()
}

/// Content search of local files: from the search index when it covers
/// `root`, else a parallel walk that builds the index as it goes (when
/// there is no `file_glob`; see [`super::index`]).
#[allow(clippy::too_many_arguments)]
fn local_hits(
    fc: &FileCall<'_>,
    matcher: &grep_regex::RegexMatcher,
    pattern: &str,
    root: &Path,
    glob: Option<&str>,
    keep: usize,
    context: usize,
    mode: OutMode,
) -> Result<(Vec<FileHits>, usize), String> {
    let g = name_glob(root, glob)?;
    if let Some(view) = fc.index.files_under(root) {
        let need = Need::of(pattern, multi_line(pattern));
        return Ok(cached_hits(
            fc,
            view.files(),
            matcher,
            need.as_ref(),
            root,
            &g,
            keep,
            context,
            mode,
        ));
    }
    let builder = if glob.is_none() {
        fc.index.builder(root)
    } else {
        None
    };
    let wb = index::walker(root, builder.as_ref());
    let hits: Mutex<Vec<FileHits>> = Mutex::new(Vec::new());
    let omitted = Mutex::new(0usize);
    wb.build_parallel().run(|| {
        let matcher = matcher.clone();
        let mut searcher = new_searcher(context);
        let (hits, omitted, g, builder) = (&hits, &omitted, &g, &builder);
        Box::new(move |entry| {
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            let wanted = glob_ok(root, entry.path(), g);
            if !wanted && builder.is_none() {
                return WalkState::Continue;
            }
            let Ok(c) = index::load(entry.path()) else {
                return WalkState::Continue;
            };
            if wanted && let Some(sink) = search_one(&mut searcher, &matcher, None, &c, mode, keep)
            {
                match hit(fc, &c.path, sink) {
                    Some(h) => hits.lock().push(h),
                    None => *omitted.lock() += 1,
                }
            }
            if let Some(b) = builder {
                b.file(Arc::new(c));
            }
            WalkState::Continue
        })
    });
    if let Some(b) = builder {
        fc.index.finish(root, &b);
    }
    Ok((hits.into_inner(), omitted.into_inner()))
}

/// Content search of indexed files: no walk, no file opened (except files
/// too large to keep); the files are split among a few threads.
#[allow(clippy::too_many_arguments)]
fn cached_hits(
    fc: &FileCall<'_>,
    files: &[Arc<Cached>],
    matcher: &grep_regex::RegexMatcher,
    need: Option<&Need>,
    root: &Path,
    g: &Option<(globset::GlobMatcher, bool)>,
    keep: usize,
    context: usize,
    mode: OutMode,
) -> (Vec<FileHits>, usize) {
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(8)
        .min(files.len() / 256 + 1);
    let part = files.len().div_ceil(threads).max(1);
    let run = |part: &[Arc<Cached>]| {
        let mut searcher = new_searcher(context);
        let mut hits = Vec::new();
        let mut omitted = 0usize;
        for c in part {
            if !glob_ok(root, &c.path, g) {
                continue;
            }
            let Some(sink) = search_one(&mut searcher, matcher, need, c, mode, keep) else {
                continue;
            };
            match hit(fc, &c.path, sink) {
                Some(h) => hits.push(h),
                None => omitted += 1,
            }
        }
        (hits, omitted)
    };
    if threads <= 1 {
        return run(files);
    }
    // the calling thread takes the first part: no more threads than cores
    std::thread::scope(|s| {
        let mut chunks = files.chunks(part);
        let first = chunks.next().unwrap_or_default();
        let others: Vec<_> = chunks.map(|p| s.spawn(move || run(p))).collect();
        let (mut hits, mut omitted) = run(first);
        for p in others {
            if let Ok((h, o)) = p.join() {
                hits.extend(h);
                omitted += o;
            }
        }
        (hits, omitted)
    })
}

#[allow(clippy::too_many_arguments)]
fn render_content(
    mut hits: Vec<FileHits>,
    omitted: usize,
    given: &str,
    root: &Path,
    limit: usize,
    offset: usize,
    context: usize,
    mode: OutMode,
) -> (Value, bool) {
    hits.sort_by(|a, b| a.path.cmp(&b.path));
    let mut v = match mode {
        OutMode::FilesOnly => {
            let total = hits.len();
            let files: Vec<String> = hits
                .iter()
                .skip(offset)
                .take(limit)
                .map(|h| display(given, root, &h.path))
                .collect();
            let mut v = json!({"total_count": total, "files": files});
            if total > offset + limit {
                v["truncated"] = json!(true);
                v["hint"] = json!(format!(
                    "Results truncated. Use offset={} to see more.",
                    offset + limit
                ));
            }
            v
        }
        OutMode::Count => {
            let total: u64 = hits.iter().map(|h| h.count).sum();
            let mut counts = Map::new();
            for h in hits.iter().skip(offset).take(limit) {
                counts.insert(display(given, root, &h.path), json!(h.count));
            }
            let mut v = json!({"total_count": total, "counts": counts});
            if hits.len() > offset + limit {
                v["truncated"] = json!(true);
                v["hint"] = json!(format!(
                    "{} files matched; use offset={} to see more.",
                    hits.len(),
                    offset + limit
                ));
            }
            v
        }
        OutMode::Content => {
            let total: u64 = hits.iter().map(|h| h.count).sum();
            // page over matches; context lines travel with their match
            let mut page: Vec<(String, &Line)> = Vec::new();
            let mut seen = 0usize;
            'outer: for h in &hits {
                let shown = display(given, root, &h.path);
                for l in &h.lines {
                    if l.is_match {
                        seen += 1;
                        if seen > offset + limit {
                            break 'outer;
                        }
                        if seen > offset {
                            page.push((shown.clone(), l));
                        }
                    } else if seen >= offset {
                        page.push((shown.clone(), l));
                    }
                }
            }
            let n_matches = page.iter().filter(|(_, l)| l.is_match).count();
            let mut v = json!({"total_count": total});
            if n_matches >= 5 || context > 0 {
                let mut text = String::new();
                let mut last: Option<&str> = None;
                for (p, l) in &page {
                    if last != Some(p.as_str()) {
                        if !text.is_empty() {
                            text.push('\n');
                        }
                        text.push_str(p);
                        text.push('\n');
                        last = Some(p.as_str());
                    }
                    let sep = if l.is_match { ':' } else { '-' };
                    text.push_str(&format!("  {}{sep} {}\n", l.line, l.text));
                }
                v["matches_format"] = json!(
                    "path, then '  <line>: <content>' for each match ('  <line>- <content>' for context lines)"
                );
                v["matches_text"] = json!(text.trim_end());
            } else {
                let matches: Vec<Value> = page
                    .iter()
                    .filter(|(_, l)| l.is_match)
                    .map(|(p, l)| json!({"path": p, "line": l.line, "content": l.text}))
                    .collect();
                v["matches"] = json!(matches);
            }
            if total as usize > offset + limit {
                v["truncated"] = json!(true);
                v["limit_reason"] = json!(format!(
                    "showing matches {}-{} of {}",
                    offset + 1,
                    offset + n_matches,
                    total
                ));
                v["hint"] = json!(format!(
                    "Results truncated. Use offset={} to see more.",
                    offset + limit
                ));
            }
            v
        }
    };
    if omitted > 0 {
        v["_omitted"] = json!(format!(
            "{omitted} credential or environment file(s) matched and were left out (read them with read_file, which asks for approval)"
        ));
    }
    (v, false)
}

fn files(
    fc: &FileCall<'_>,
    pattern: &str,
    given: &str,
    root: &Path,
    limit: usize,
    offset: usize,
) -> (Value, bool) {
    let has_meta = pattern.contains(['*', '?', '[', '{']);
    let glob_text = if has_meta {
        pattern.to_string()
    } else {
        format!("*{pattern}*")
    };
    let by_path = glob_text.contains('/');
    let glob = match globset::GlobBuilder::new(&glob_text)
        .literal_separator(false)
        .build()
    {
        Ok(g) => g.compile_matcher(),
        Err(e) => {
            return (
                json!({"error": format!("invalid glob '{pattern}': {e}")}),
                true,
            );
        }
    };
    // the name matches and the file is not a credential file
    let wanted = |p: &Path| {
        let named = if by_path {
            p.strip_prefix(root).is_ok_and(|r| glob.is_match(r))
        } else {
            p.file_name().is_some_and(|n| glob.is_match(n))
        };
        named && paths::read_sensitive(p, &fc.home, &fc.data_dir).is_none()
    };
    if !fc.fs.host_paths() {
        let walked = match fc.fs.walk(root, false, 0) {
            Ok(w) => w,
            Err(e) => return (walk_error(given, e), true),
        };
        let found: Vec<(i128, PathBuf)> = walked
            .into_iter()
            .filter(|f| wanted(&f.path))
            .map(|f| (f.mtime_ns, f.path))
            .collect();
        return render_files(found, given, root, limit, offset);
    }
    // an indexed tree has every file's path and modification time
    if let Some(view) = fc.index.files_under(root) {
        let found: Vec<(i128, PathBuf)> = view
            .files()
            .iter()
            .filter(|c| wanted(&c.path))
            .map(|c| (c.mtime_ns, c.path.clone()))
            .collect();
        return render_files(found, given, root, limit, offset);
    }
    let wb = index::walker(root, None);
    let found: Mutex<Vec<(i128, PathBuf)>> = Mutex::new(Vec::new());
    wb.build_parallel().run(|| {
        let (found, wanted) = (&found, &wanted);
        Box::new(move |entry| {
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if entry.file_type().is_some_and(|t| t.is_file()) && wanted(entry.path()) {
                let mtime = entry.metadata().map_or(0, |m| index::mtime_ns(&m));
                found.lock().push((mtime, entry.into_path()));
            }
            WalkState::Continue
        })
    });
    render_files(found.into_inner(), given, root, limit, offset)
}

fn render_files(
    mut found: Vec<(i128, PathBuf)>,
    given: &str,
    root: &Path,
    limit: usize,
    offset: usize,
) -> (Value, bool) {
    // newest first (like rg --sortr=modified), then by path
    found.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let total = found.len();
    let files: Vec<String> = found
        .iter()
        .skip(offset)
        .take(limit)
        .map(|(_, p)| display(given, root, p))
        .collect();
    let mut v = json!({"total_count": total, "files": files});
    if total > offset + limit {
        v["truncated"] = json!(true);
        v["hint"] = json!(format!(
            "Results truncated. Use offset={} to see more, or a narrower pattern.",
            offset + limit
        ));
    }
    (v, false)
}
