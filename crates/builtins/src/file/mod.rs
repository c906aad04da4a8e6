//! The built-in `file` toolset: `read_file`, `write_file`, `patch` and
//! `search_files`, with the original's names, parameters and result
//! shapes. Every file operation goes through the task's
//! [`FileSystem`](hermes_exec::fs::FileSystem) (the same backend as the
//! terminal: local or sandbox), relative paths resolve against the task's
//! working directory, and sensitive paths go through the approval policy.
//!
//! Layout: `state` (shared state, no tool logic), `paths` (resolution and
//! deny lists), one module per tool, `v4a` (the patch format), `index`
//! (search_files' in-memory index, kept fresh by inotify), `prefilter`
//! (its trigram signatures), `matchers` (compiled patterns); this file
//! only declares the tools and registers them.

pub mod index;
pub mod matchers;
pub mod patch;
pub mod paths;
pub mod prefilter;
pub mod read;
pub mod search;
pub mod state;
pub mod v4a;
pub mod write;

use serde_json::{Value, json};
use std::sync::Arc;

use hermes_core::core::Core;
use hermes_core::error::Result;
use hermes_core::registry::{build_entry, parse_spec};
use hermes_core::{Blocking, BlockingTool, Lifecycle, RunCtx, ToolOutput};
pub use state::{CwdFn, FileCall, FileConfig, FileCtx, FilesFn};

#[derive(Clone, Copy)]
enum Which {
    Read,
    Write,
    Patch,
    Search,
}

struct FileTool {
    ctx: Arc<FileCtx>,
    which: Which,
}

impl BlockingTool for FileTool {
    fn run(&self, args: Value, ctx: &RunCtx) -> ToolOutput {
        let fc = &FileCall::new(&self.ctx, &ctx.context.task_id);
        let (v, is_error) = match self.which {
            Which::Read => read::run(fc, &args, ctx),
            Which::Search => search::run(fc, &args, ctx),
            Which::Write => {
                fc.activity.bump(&ctx.context.task_id);
                write::run(fc, &args, ctx)
            }
            Which::Patch => {
                fc.activity.bump(&ctx.context.task_id);
                patch::run(fc, &args, ctx)
            }
        };
        // Like the terminal's output: the host's secret values and
        // secret-shaped text never reach the model, through any file tool
        // (a search match or a patch's diff shows file text as read_file does).
        let mut v = v;
        redact_strings(&mut v);
        ToolOutput {
            text: v.to_string(),
            is_error,
        }
    }
}

/// Redact every string of a result in place (string by string, so the JSON
/// stays whole whatever a pattern matches).
fn redact_strings(v: &mut Value) {
    match v {
        Value::String(s) if hermes_approval::redact::may_contain_secret(s) => {
            *s = hermes_approval::redact::redact_secrets(s);
        }
        Value::Array(a) => a.iter_mut().for_each(redact_strings),
        Value::Object(m) => m.values_mut().for_each(redact_strings),
        _ => {}
    }
}

impl Lifecycle for FileCtx {
    fn cleanup_task(&self, task_id: &str) {
        FileCtx::cleanup_task(self, task_id);
    }
}

const READ_DESC: &str = "Read a text file and return its lines numbered as 'N|text'. Page with \
offset (1-based first line) and limit (lines, up to 2000); when a page is cut short the result \
says where to continue (next_offset / hint). Relative paths resolve against the task's working \
directory; '~' is the home folder. Binary files are refused and images only described. Reading \
the same unchanged page again returns a short 'unchanged' note: use what you already read.";

const WRITE_DESC: &str = "Create a file or replace its whole content (parent folders are \
created). The write is atomic; the old file's line endings (CRLF), BOM and permissions are kept; \
JSON, YAML and TOML content must parse or nothing is written. For small edits of an existing \
file use patch instead of rewriting it.";

const PATCH_DESC: &str = "Edit files. mode='replace' (default): replace old_string with \
new_string in the file at path; old_string must identify one place (or set replace_all=true); \
whitespace, indentation and quote differences are tolerated. mode='patch': apply a V4A patch \
('*** Begin Patch', then '*** Update File: p' with '@@ context' hunks of ' ', '-' and '+' lines, \
'*** Add File: p' with '+' lines, '*** Delete File: p', '*** Move File: a -> b', then \
'*** End Patch') to several files at once; it is validated in full first and applied all or \
nothing: an Add File or a move onto a file that exists fails the whole patch (nothing is \
overwritten: Delete File it first, or use Update File). Returns a unified diff.";

const SEARCH_DESC: &str = "Search files. target='content' (default): regex search of file \
contents (line oriented), output_mode 'content' (matching lines with path and line number, \
optional context lines), 'files_only' (paths) or 'count' (matches per file); file_glob limits \
which files are searched (e.g. '*.py'). target='files': find files whose names match a glob \
(e.g. '*.rs'; a bare word matches names containing it), newest first. .gitignore'd and hidden \
files are skipped. Page with limit and offset; total_count is the true total.";

pub fn read_file_spec() -> Value {
    json!({
        "name": "read_file", "toolset": "file", "emoji": "📖", "parallel_safe": true,
        "max_result_size_chars": 120_000,
        "schema": {"name": "read_file", "description": READ_DESC, "parameters": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File to read: absolute, relative to the working directory, or starting with ~."},
                "offset": {"type": "integer", "default": 1, "minimum": 1, "description": "First line to return (1-based)."},
                "limit": {"type": "integer", "default": 500, "maximum": 2000, "description": "Lines to return at most (2000 max)."}
            },
            "required": ["path"]
        }}
    })
}

pub fn write_file_spec() -> Value {
    json!({
        "name": "write_file", "toolset": "file", "emoji": "✍️",
        "schema": {"name": "write_file", "description": WRITE_DESC, "parameters": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File to create or overwrite."},
                "content": {"type": "string", "description": "The complete new content of the file."},
                "cross_profile": {"type": "boolean", "default": false, "description": "Accepted for compatibility; has no effect here."}
            },
            "required": ["path", "content"]
        }}
    })
}

pub fn patch_spec() -> Value {
    json!({
        "name": "patch", "toolset": "file", "emoji": "🩹",
        "schema": {"name": "patch", "description": PATCH_DESC, "parameters": {
            "type": "object",
            "properties": {
                "mode": {"type": "string", "enum": ["replace", "patch"], "default": "replace", "description": "'replace' (find and replace in one file) or 'patch' (V4A patch text)."},
                "path": {"type": "string", "description": "File to edit (mode 'replace')."},
                "old_string": {"type": "string", "description": "Text to find; must identify one place unless replace_all."},
                "new_string": {"type": "string", "description": "Replacement text (empty deletes the match)."},
                "replace_all": {"type": "boolean", "default": false, "description": "Replace every match."},
                "patch": {"type": "string", "description": "V4A patch text (mode 'patch')."},
                "cross_profile": {"type": "boolean", "default": false, "description": "Accepted for compatibility; has no effect here."}
            },
            "required": ["mode"]
        }}
    })
}

pub fn search_files_spec() -> Value {
    json!({
        "name": "search_files", "toolset": "file", "emoji": "🔎", "parallel_safe": true,
        "schema": {"name": "search_files", "description": SEARCH_DESC, "parameters": {
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Regex for content search; glob (or a word) for file-name search."},
                "target": {"type": "string", "enum": ["content", "files"], "default": "content", "description": "'content' searches inside files, 'files' searches file names."},
                "path": {"type": "string", "default": ".", "description": "Folder or file to search."},
                "file_glob": {"type": "string", "description": "Only search files matching this glob (content search)."},
                "limit": {"type": "integer", "default": 50, "description": "Results per page."},
                "offset": {"type": "integer", "default": 0, "description": "Results to skip."},
                "output_mode": {"type": "string", "enum": ["content", "files_only", "count"], "default": "content", "description": "Content search output: matching lines, paths only, or counts per file."},
                "context": {"type": "integer", "default": 0, "description": "Lines of context before and after each match."}
            },
            "required": ["pattern"]
        }}
    })
}

/// Register the file toolset into `core`; the returned state is the
/// runtime's to keep (its lifecycle drops a task's read history).
pub fn install(ctx: FileCtx, core: &Core) -> Result<Arc<FileCtx>> {
    let ctx = Arc::new(ctx);
    let mut entries = Vec::new();
    for (spec, which) in [
        (read_file_spec(), Which::Read),
        (write_file_spec(), Which::Write),
        (patch_spec(), Which::Patch),
        (search_files_spec(), Which::Search),
    ] {
        let tool = FileTool {
            ctx: ctx.clone(),
            which,
        };
        entries.push(build_entry(
            parse_spec(&spec.to_string())?,
            Arc::new(Blocking(Arc::new(tool))),
            None,
        )?);
    }
    core.register_many(entries, false)?;
    if ctx.cfg.search_prewarm && ctx.index.enabled() {
        prewarm(&ctx);
    }
    Ok(ctx)
}

/// Index the workspace on a thread of its own (`file.search_prewarm`).
fn prewarm(ctx: &Arc<FileCtx>) {
    let c = ctx.clone();
    let started = std::thread::Builder::new()
        .name("ht-search-prewarm".into())
        .spawn(move || {
            if !(c.files)("").host_paths() {
                return; // a remote backend's files are not indexed
            }
            let root = c
                .workspace_root
                .clone()
                .unwrap_or_else(|| paths::real(&(c.cwd)("")));
            let t = std::time::Instant::now();
            let kept = c.index.warm(&root);
            tracing::info!(root = %root.display(), kept, ms = t.elapsed().as_millis() as u64,
                           "search index prewarmed");
        });
    if let Err(e) = started {
        tracing::warn!(error = %e, "could not start the search index prewarm thread");
    }
}
