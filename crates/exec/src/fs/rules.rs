//! Ignore rules for the sandbox backend's search walk
//! ([`super::beneath::View::walk`]). Why: that walk replaces the
//! gitignore-aware local walk of `search_files` (which opens paths by name
//! and could be raced out of the sandbox), and without the same rules a
//! search would read every build folder (`target/`, `node_modules/`). The
//! rule files are read beneath the walk's handles by the caller; this only
//! matches. Like the `ignore` crate's defaults: per folder `.ignore` before
//! `.gitignore` before the repository's `.git/info/exclude`, the deepest
//! folder first, `.gitignore` only inside a git repository; the user's
//! global excludes file is not read.

use std::path::Path;

use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// The rules of one folder, most precedent first.
#[derive(Default)]
pub struct Rules(Vec<Gitignore>);

impl Rules {
    /// Rules of folder `dir` from the contents of its rule files, in
    /// precedence order (unreadable or invalid lines are skipped).
    pub fn new(dir: &Path, files: &[Option<Vec<u8>>]) -> Rules {
        let mut out = Vec::new();
        for data in files.iter().flatten() {
            let mut b = GitignoreBuilder::new(dir);
            for line in String::from_utf8_lossy(data).lines() {
                let _ = b.add_line(None, line);
            }
            if let Ok(g) = b.build()
                && !g.is_empty()
            {
                out.push(g);
            }
        }
        Rules(out)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Whether `path` is ignored by the stack of folder rules (outermost
/// first): the deepest folder with a matching rule decides.
pub fn ignored(stack: &[Rules], path: &Path, is_dir: bool) -> bool {
    for r in stack.iter().rev() {
        for g in &r.0 {
            let m = g.matched(path, is_dir);
            if m.is_ignore() {
                return true;
            }
            if m.is_whitelist() {
                return false;
            }
        }
    }
    false
}
