//! The file toolset's shared state, one per runtime: the task's file
//! system and working directory, the limits, the safety settings, and per
//! task what was read when (the loop guards and the staleness warnings of
//! the original). The tools' modules all read it; it imports none of them.

use parking_lot::Mutex;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::index::SearchIndex;
use super::matchers::Matchers;
use super::paths;
use crate::activity::Activity;
use hermes_core::{CommandDecision, RunCtx, ToolServices};
use hermes_exec::fs::FileSystem;

/// The `"file": {...}` section of the runtime config.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FileConfig {
    /// Largest `limit` of one read_file page.
    pub max_lines: usize,
    /// Longer lines are cut (`... [truncated]`).
    pub max_line_length: usize,
    /// Character budget of one read_file result.
    pub max_read_chars: usize,
    /// Matches returned at most by one search_files page.
    pub max_search_limit: usize,
    /// Memory for the search index (file contents kept between content
    /// searches, fresh through inotify), in MB for all trees; 0: off.
    pub search_cache_mb: usize,
    /// Index the workspace (`workspace_root`, else the working directory)
    /// in the background when the runtime starts, so even the first
    /// search comes from memory.
    pub search_prewarm: bool,
}

impl Default for FileConfig {
    fn default() -> Self {
        FileConfig {
            max_lines: 2000,
            max_line_length: 2000,
            max_read_chars: 100_000,
            max_search_limit: 1000,
            search_cache_mb: 256,
            search_prewarm: false,
        }
    }
}

/// Where relative paths of a task resolve (the terminal's live cwd when
/// the terminal toolset is on, else the configured one).
pub type CwdFn = Arc<dyn Fn(&str) -> PathBuf + Send + Sync>;

/// The file system where a task's commands run (the host's, or the task's
/// own connection or container on a remote backend).
pub type FilesFn = Arc<dyn Fn(&str) -> Arc<dyn FileSystem> + Send + Sync>;

/// One call's view of the toolset: the shared state plus the calling
/// task's file system (`fc.fs`).
pub struct FileCall<'a> {
    ctx: &'a FileCtx,
    pub fs: Arc<dyn FileSystem>,
}

impl<'a> FileCall<'a> {
    pub fn new(ctx: &'a FileCtx, task: &str) -> FileCall<'a> {
        FileCall {
            ctx,
            fs: (ctx.files)(task),
        }
    }
}

impl std::ops::Deref for FileCall<'_> {
    type Target = FileCtx;
    fn deref(&self) -> &FileCtx {
        self.ctx
    }
}

/// What the last full or partial read of a path saw.
#[derive(Clone, Debug)]
pub struct ReadMark {
    pub mtime_ns: i128,
    pub partial: bool,
}

#[derive(Default)]
pub struct TaskFiles {
    /// (path, offset, limit) -> (mtime at read, stubs given, activity epoch).
    dedup: HashMap<(PathBuf, usize, usize), (i128, u32, u64)>,
    /// Path -> what the last read saw (staleness warnings on write).
    pub marks: HashMap<PathBuf, ReadMark>,
    /// The last search, how often in a row, at which activity epoch.
    last_search: Option<(String, u32, u64)>,
    /// Consecutive failed patches per path.
    patch_failures: HashMap<PathBuf, u32>,
}

/// The toolset's state.
pub struct FileCtx {
    pub files: FilesFn,
    pub cfg: FileConfig,
    pub cwd: CwdFn,
    pub home: PathBuf,
    pub data_dir: PathBuf,
    /// Paths outside are refused (real path).
    pub workspace_root: Option<PathBuf>,
    /// The runtime's own config and allowlist files.
    pub protected: Vec<PathBuf>,
    pub services: Arc<dyn ToolServices>,
    pub activity: Arc<Activity>,
    /// Content kept between searches ([`super::index`]).
    pub index: SearchIndex,
    /// Compiled search patterns ([`super::matchers::Matchers`]).
    pub matchers: Matchers,
    tasks: Mutex<HashMap<String, TaskFiles>>,
}

/// The dedup verdict for a read.
pub enum Dedup {
    Fresh,
    Stub,
    Blocked(u32),
}

pub fn error(msg: impl Into<String>) -> Value {
    json!({ "error": msg.into() })
}

impl FileCtx {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        files: FilesFn,
        cfg: FileConfig,
        cwd: CwdFn,
        home: PathBuf,
        data_dir: PathBuf,
        workspace_root: Option<PathBuf>,
        protected: Vec<PathBuf>,
        services: Arc<dyn ToolServices>,
        activity: Arc<Activity>,
    ) -> FileCtx {
        let index = SearchIndex::new(cfg.search_cache_mb);
        FileCtx {
            files,
            cfg,
            cwd,
            home,
            data_dir: paths::real(&data_dir),
            workspace_root: workspace_root.map(|r| paths::real(&r)),
            protected: protected.iter().map(|p| paths::real(p)).collect(),
            services,
            activity,
            index,
            matchers: Matchers::default(),
            tasks: Mutex::new(HashMap::new()),
        }
    }

    /// The absolute, real path the model means by `p`, or an error for
    /// paths outside the workspace root. Returns (as shown, real).
    pub fn resolve(&self, task: &str, p: &str) -> Result<(PathBuf, PathBuf), String> {
        if p.trim().is_empty() {
            return Err("path is required".into());
        }
        if p.contains('\0') {
            return Err("path contains a NUL byte".into());
        }
        let cwd = (self.cwd)(task);
        let abs = paths::absolute(p, &cwd, &self.home);
        let real = paths::real(&abs);
        if let Some(root) = &self.workspace_root
            && !paths::inside(&real, root)
        {
            return Err(format!(
                "Path {} is outside the workspace root {} (symlinks and '..' resolved): refused",
                abs.display(),
                root.display()
            ));
        }
        Ok((abs, real))
    }

    /// Ask the approval policy about a sensitive access. `Ok` to go on.
    pub fn approve(
        &self,
        rule: &str,
        reason: &str,
        subject: &str,
        ctx: &RunCtx,
    ) -> Result<(), String> {
        let check = hermes_approval::CheckResult {
            verdict: hermes_approval::Verdict::Ask,
            reasons: vec![hermes_approval::Reason {
                rule: rule.to_string(),
                description: reason.to_string(),
                tier: hermes_approval::Verdict::Ask,
                command: subject.to_string(),
                pack: "builtin".into(),
                sandbox: None,
                argv: Vec::new(),
            }],
            commands: Vec::new(),
            normalized: vec![subject.to_string()],
            contained: Vec::new(),
        };
        match self
            .services
            .approve_check(check, subject, &ctx.context, &ctx.cancel)
        {
            CommandDecision::Allow => Ok(()),
            CommandDecision::Deny { message, .. } => Err(format!(
                "Access denied: this {reason}, which needs approval ({message})"
            )),
        }
    }

    fn with_task<R>(&self, task: &str, f: impl FnOnce(&mut TaskFiles) -> R) -> R {
        let mut tasks = self.tasks.lock();
        let key = if task.is_empty() { "default" } else { task };
        if !tasks.contains_key(key) {
            tasks.insert(key.to_string(), TaskFiles::default());
        }
        f(tasks.get_mut(key).expect("task entry"))
    }

    /// The dedup verdict for reading `key` at `mtime`; records the read.
    pub fn check_dedup(
        &self,
        task: &str,
        real: &Path,
        offset: usize,
        limit: usize,
        mtime: i128,
    ) -> Dedup {
        let epoch = self.activity.epoch(task);
        self.with_task(task, |t| {
            if t.dedup.len() > 1000 {
                t.dedup.clear();
            }
            let key = (real.to_path_buf(), offset, limit);
            match t.dedup.get_mut(&key) {
                Some((m, stubs, ep)) if *m == mtime => {
                    if *ep != epoch {
                        *stubs = 0;
                        *ep = epoch;
                    }
                    *stubs += 1;
                    if *stubs >= 2 {
                        Dedup::Blocked(*stubs + 1)
                    } else {
                        Dedup::Stub
                    }
                }
                _ => {
                    t.dedup.insert(key, (mtime, 0, epoch));
                    Dedup::Fresh
                }
            }
        })
    }

    /// Remember what a read saw (for staleness warnings).
    pub fn mark_read(&self, task: &str, real: &Path, mtime: i128, partial: bool) {
        self.with_task(task, |t| {
            if t.marks.len() > 1000 {
                t.marks.clear();
            }
            t.marks.insert(
                real.to_path_buf(),
                ReadMark {
                    mtime_ns: mtime,
                    partial,
                },
            );
        })
    }

    /// After a write: forget dedup entries of the path, remember the new mtime.
    pub fn wrote(&self, task: &str, real: &Path, mtime: Option<i128>) {
        self.with_task(task, |t| {
            t.dedup.retain(|(p, _, _), _| p != real);
            match mtime {
                Some(m) => {
                    t.marks.insert(
                        real.to_path_buf(),
                        ReadMark {
                            mtime_ns: m,
                            partial: false,
                        },
                    );
                }
                None => {
                    t.marks.remove(real);
                }
            }
        })
    }

    /// A warning when the file changed since the task read it, or was only
    /// partly read.
    pub fn stale_warning(
        &self,
        task: &str,
        real: &Path,
        current_mtime: Option<i128>,
    ) -> Option<String> {
        let mark = self.with_task(task, |t| t.marks.get(real).cloned())?;
        match current_mtime {
            Some(m) if m != mark.mtime_ns => Some(format!(
                "{} was modified since you last read it (by another process or tool). Your change was written over the newer content; re-read the file to check the result.",
                real.display()
            )),
            Some(_) if mark.partial => Some(format!(
                "{} was last read with offset/limit pagination (partial view). Re-read the whole file before overwriting it.",
                real.display()
            )),
            _ => None,
        }
    }

    /// How many times in a row this exact search ran (1 = first), with no
    /// other tool call in between.
    pub fn search_repeat(&self, task: &str, key: String) -> u32 {
        let epoch = self.activity.epoch(task);
        self.with_task(task, |t| match &mut t.last_search {
            Some((k, n, ep)) if *k == key && *ep == epoch => {
                *n += 1;
                *n
            }
            _ => {
                t.last_search = Some((key, 1, epoch));
                1
            }
        })
    }

    /// Count a failed patch of `real` (returns the run length) or reset it.
    pub fn patch_outcome(&self, task: &str, real: &Path, failed: bool) -> u32 {
        self.with_task(task, |t| {
            if failed {
                let n = t.patch_failures.entry(real.to_path_buf()).or_insert(0);
                *n += 1;
                *n
            } else {
                t.patch_failures.remove(real);
                0
            }
        })
    }

    pub fn cleanup_task(&self, task: &str) {
        let key = if task.is_empty() { "default" } else { task };
        self.tasks.lock().remove(key);
    }
}
