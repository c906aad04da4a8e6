//! The search index: the contents of the files a content search walked,
//! kept in memory between `search_files` calls and kept fresh by inotify,
//! so the next search of that tree reads no directory and opens no file.
//!
//! Why: an agent searches the same workspace again and again. The first
//! search costs what `rg` costs (every file is opened and read); the index
//! makes every later one a search of memory, where trigram signatures
//! ([`super::prefilter`]) rule out most files unread: one to two orders of
//! magnitude faster, still counting every match (the original stops at its
//! first page).
//!
//! Freshness is exact, not a time-to-live: every folder of the tree is
//! watched before it is listed and every file is read after its folder is
//! watched, so any later change queues an inotify event. Each search first
//! drains the queue (events of a `write(2)` are queued before the call
//! returns) and re-reads the files changed and re-lists the folders whose
//! entries changed, then searches. What inotify cannot see makes the index
//! rebuild or never exist:
//! - an ignore file (`.gitignore`, `.ignore`, `.rgignore`) or `.git`
//!   changing, a lost event queue (overflow), the root going away, or more
//!   than [`MAX_DIRTY_DIRS`] folders changed at once: the index is dropped
//!   and the search walks the tree again (and builds a new one);
//! - file systems other than local disks and tmpfs (a network or FUSE file
//!   system can change under us without an event): no index;
//! - changes inotify never reports (writes through a shared memory map,
//!   `.git/info/exclude`, git's global excludes): the index is rebuilt when
//!   older than [`MAX_AGE`].
//!
//! Bounds: `file.search_cache_mb` for all trees together (0 turns the index
//! off; the least recently used tree goes first), at most [`MAX_TREES`]
//! trees, files over [`MAX_FILE`] are searched from disk each time. A tree
//! that could not be indexed (too big, no watch left, another file system)
//! is not tried again for [`RETRY_AFTER`].
//!
//! Only content searches without a `file_glob` build an index (so a narrow
//! glob search does not read the whole tree); every search under an indexed
//! folder uses it, file-name searches (`target: "files"`) included.

use parking_lot::Mutex;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hermes_exec::sys::{Inotify, fs_type};

/// Files larger than this are not kept: searched from disk each time.
pub const MAX_FILE: u64 = 4 * 1024 * 1024;
/// Trees kept at most.
pub const MAX_TREES: usize = 4;
/// An index older than this is rebuilt (what inotify never reports).
pub const MAX_AGE: Duration = Duration::from_secs(300);
/// A tree that could not be indexed is not tried again before this.
pub const RETRY_AFTER: Duration = Duration::from_secs(300);
/// More folders changed than this between two searches: rebuild.
pub const MAX_DIRTY_DIRS: usize = 256;

const WATCH_MASK: u32 = libc::IN_MODIFY
    | libc::IN_CLOSE_WRITE
    | libc::IN_ATTRIB
    | libc::IN_CREATE
    | libc::IN_DELETE
    | libc::IN_MOVED_FROM
    | libc::IN_MOVED_TO
    | libc::IN_DELETE_SELF
    | libc::IN_MOVE_SELF
    | libc::IN_ONLYDIR;

/// What the folders above the root are watched for: their ignore files,
/// and themselves moving or going away.
const ANCESTOR_MASK: u32 = libc::IN_CREATE
    | libc::IN_DELETE
    | libc::IN_MOVED_FROM
    | libc::IN_MOVED_TO
    | libc::IN_CLOSE_WRITE
    | libc::IN_MODIFY
    | libc::IN_DELETE_SELF
    | libc::IN_MOVE_SELF
    | libc::IN_ONLYDIR;

/// Events read at most per search; more means the tree is too busy to
/// follow: rebuilt.
const MAX_EVENTS: usize = 65_536;

/// Names whose change alters which files a walk yields.
const RULE_FILES: [&str; 4] = [".gitignore", ".ignore", ".rgignore", ".git"];

/// One file as a search sees it.
pub struct Cached {
    pub path: PathBuf,
    /// The whole content; `None` when over [`MAX_FILE`] (read from disk).
    pub data: Option<Vec<u8>>,
    /// Last modification (file-name searches list the newest first).
    pub mtime_ns: i128,
    /// Inode and link count: a file given a second name is searched from
    /// disk from then on.
    pub ino: u64,
    pub nlink: u64,
    /// The content starts with a byte-order mark (the searcher transcodes
    /// it, so neither signatures nor a raw scan say what it matches).
    pub bom: bool,
    /// Trigram signature of `data`, made on the first indexed search.
    sig: std::sync::OnceLock<super::prefilter::Sig>,
}

impl Cached {
    /// The trigram signature of the kept content (`None`: not kept).
    pub fn sig(&self) -> Option<&super::prefilter::Sig> {
        let d = self.data.as_ref()?;
        Some(self.sig.get_or_init(|| super::prefilter::signature(d)))
    }

    fn size(&self) -> usize {
        // content, path, and the struct with its signature
        self.data.as_ref().map_or(0, Vec::len) + self.path.as_os_str().len() + 256
    }
}

/// A file's modification time in nanoseconds since the epoch (0 if unknown).
pub fn mtime_ns(meta: &std::fs::Metadata) -> i128 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i128)
}

/// Read a regular file for searching: the whole content when it is at most
/// [`MAX_FILE`], `None` (search it from disk) when larger or hard-linked
/// (a write through another name reports no event here). `Err` when it
/// cannot be opened or read, or is not a regular file: a symlink is not
/// followed and a FIFO does not block.
pub fn load(path: &Path) -> std::io::Result<Cached> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    let meta = f.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mtime_ns = mtime_ns(&meta);
    let len = meta.len();
    let (ino, nlink) = (meta.ino(), meta.nlink());
    if len > MAX_FILE || nlink > 1 {
        return Ok(Cached {
            path: path.to_path_buf(),
            data: None,
            mtime_ns,
            ino,
            nlink,
            bom: false,
            sig: Default::default(),
        });
    }
    let mut data = Vec::with_capacity(len as usize + 1);
    f.read_to_end(&mut data)?;
    let bom = [&b"\xEF\xBB\xBF"[..], b"\xFF\xFE", b"\xFE\xFF"]
        .iter()
        .any(|m| data.starts_with(m));
    Ok(Cached {
        bom,
        path: path.to_path_buf(),
        data: Some(data),
        mtime_ns,
        ino,
        nlink,
        sig: Default::default(),
    })
}

/// File systems whose every change inotify reports.
fn local_fs(dir: &Path) -> bool {
    const EXT4: i64 = 0xEF53;
    const XFS: i64 = 0x5846_5342;
    const BTRFS: i64 = 0x9123_683E;
    const TMPFS: i64 = 0x0102_1994;
    const OVERLAY: i64 = 0x794C_7630;
    const ZFS: i64 = 0x2FC1_2FC1;
    const F2FS: i64 = 0xF2F5_2010;
    const BCACHEFS: i64 = 0xCA45_1A4E;
    matches!(
        fs_type(dir),
        Ok(EXT4 | XFS | BTRFS | TMPFS | OVERLAY | ZFS | F2FS | BCACHEFS)
    )
}

/// The folders a walk watched, and their watch descriptors.
type Watched = (Vec<(PathBuf, i32)>, HashSet<i32>);

/// A walk of a tree that watches each folder before listing it. Shared by
/// the threads of the search's parallel walk.
pub struct Builder {
    ino: Arc<Inotify>,
    /// A new tree (its ancestors are watched too), not a folder added to one.
    whole_tree: bool,
    dirs: Mutex<Watched>,
    /// Watches of the folders above the root (their ignore files apply).
    ancestors: Mutex<HashMap<i32, PathBuf>>,
    files: Mutex<Vec<Arc<Cached>>>,
    bytes: AtomicUsize,
    max_bytes: usize,
    failed: AtomicBool,
    why: Mutex<Option<String>>,
}

impl Builder {
    fn new(ino: Arc<Inotify>, max_bytes: usize, whole_tree: bool) -> Builder {
        Builder {
            ino,
            whole_tree,
            dirs: Mutex::new((Vec::new(), HashSet::new())),
            ancestors: Mutex::new(HashMap::new()),
            files: Mutex::new(Vec::new()),
            bytes: AtomicUsize::new(0),
            max_bytes,
            failed: AtomicBool::new(false),
            why: Mutex::new(None),
        }
    }

    fn fail(&self, why: String) {
        if !self.failed.swap(true, Ordering::Relaxed) {
            *self.why.lock() = Some(why);
            self.files.lock().clear();
        }
    }

    /// Whether files should still be kept (false once the build failed).
    pub fn keeping(&self) -> bool {
        !self.failed.load(Ordering::Relaxed)
    }

    /// A folder the walk is about to list: watch it first.
    pub fn dir(&self, dir: &Path) {
        if !self.keeping() {
            return;
        }
        if !local_fs(dir) {
            self.fail(format!("{} is not on a local file system", dir.display()));
            return;
        }
        match self.ino.add_watch(dir, WATCH_MASK) {
            Ok(wd) => {
                let mut dirs = self.dirs.lock();
                // the same folder twice (a bind mount inside the tree): its
                // events would name only one of its paths
                if dirs.1.insert(wd) {
                    dirs.0.push((dir.to_path_buf(), wd));
                } else {
                    drop(dirs);
                    self.fail(format!("{} is in the tree twice", dir.display()));
                }
            }
            Err(e) => self.fail(format!("cannot watch {}: {e}", dir.display())),
        }
    }

    /// Watch the folders above `root` (for their ignore files and for
    /// their moving) and then `root` itself, before the walk lists it.
    fn start(&self, root: &Path) {
        // (a folder added to a tree: its ancestors are the tree's folders,
        // and watching them with another mask would replace their watch)
        for a in root.ancestors().skip(1).filter(|_| self.whole_tree) {
            match self.ino.add_watch(a, ANCESTOR_MASK) {
                Ok(wd) => {
                    self.ancestors.lock().insert(wd, a.to_path_buf());
                }
                Err(e) => {
                    self.fail(format!("cannot watch {}: {e}", a.display()));
                    return;
                }
            }
        }
        self.dir(root);
    }

    /// A file the walk read (after its folder was watched).
    pub fn file(&self, c: Arc<Cached>) {
        if !self.keeping() {
            return;
        }
        let b = self.bytes.fetch_add(c.size(), Ordering::Relaxed) + c.size();
        if b > self.max_bytes {
            self.fail(format!(
                "the tree is larger than file.search_cache_mb ({} MB)",
                self.max_bytes >> 20
            ));
            return;
        }
        self.files.lock().push(c);
    }
}

/// The files of a tree in path order (a search's consistent view).
pub type Snapshot = Arc<Vec<Arc<Cached>>>;

/// One indexed tree.
struct Tree {
    root: PathBuf,
    /// The root's (device, inode) when built: another folder put in its
    /// place is another tree.
    root_id: (u64, u64),
    ino: Arc<Inotify>,
    ancestors: HashMap<i32, PathBuf>,
    /// Set when a refresh failed: a search that found this tree before it
    /// was removed from the list must not use it.
    dead: bool,
    wd_dir: HashMap<i32, PathBuf>,
    dir_wd: BTreeMap<PathBuf, i32>,
    files: BTreeMap<PathBuf, Arc<Cached>>,
    bytes: usize,
    snapshot: Option<Snapshot>,
    built: Instant,
}

/// Why a tree's index must go (the search walks the tree instead).
struct Stale(String);

impl Tree {
    fn from_builder(root: PathBuf, root_id: (u64, u64), b: &Builder) -> Tree {
        let mut t = Tree {
            root,
            root_id,
            ino: b.ino.clone(),
            ancestors: std::mem::take(&mut *b.ancestors.lock()),
            dead: false,
            wd_dir: HashMap::new(),
            dir_wd: BTreeMap::new(),
            files: BTreeMap::new(),
            bytes: b.bytes.load(Ordering::Relaxed),
            snapshot: None,
            built: Instant::now(),
        };
        for (d, wd) in std::mem::take(&mut b.dirs.lock().0) {
            t.wd_dir.insert(wd, d.clone());
            t.dir_wd.insert(d, wd);
        }
        // (collected from an iterator: the map is bulk-built after one sort)
        t.files = std::mem::take(&mut *b.files.lock())
            .into_iter()
            .map(|c| (c.path.clone(), c))
            .collect();
        t
    }

    fn snapshot(&mut self) -> Snapshot {
        self.snapshot
            .get_or_insert_with(|| Arc::new(self.files.values().cloned().collect()))
            .clone()
    }

    fn remove_file(&mut self, p: &Path) {
        if let Some(c) = self.files.remove(p) {
            self.bytes -= c.size();
            self.snapshot = None;
        }
    }

    fn put_file(&mut self, c: Arc<Cached>) {
        self.bytes += c.size();
        if let Some(old) = self.files.insert(c.path.clone(), c) {
            self.bytes -= old.size();
        }
        self.snapshot = None;
    }

    /// Drop a folder and everything under it, with their watches.
    fn remove_subtree(&mut self, d: &Path) {
        let dirs: Vec<PathBuf> = under(&self.dir_wd, d).cloned().collect();
        for p in dirs {
            if let Some(wd) = self.dir_wd.remove(&p) {
                self.wd_dir.remove(&wd);
                self.ino.rm_watch(wd);
            }
        }
        let files: Vec<PathBuf> = under(&self.files, d).cloned().collect();
        for p in files {
            self.remove_file(&p);
        }
    }

    /// Apply every change queued since the last search.
    fn refresh(&mut self, max_bytes: usize) -> Result<(), Stale> {
        if self.built.elapsed() > MAX_AGE {
            return Err(Stale("older than its maximum age".into()));
        }
        match root_id(&self.root) {
            Some(id) if id == self.root_id => {}
            _ => return Err(Stale("another folder is at the root's path".into())),
        }
        let events = self
            .ino
            .drain(MAX_EVENTS)
            .map_err(|e| Stale(format!("reading inotify: {e}")))?;
        if events.len() >= MAX_EVENTS {
            return Err(Stale("too many changes at once".into()));
        }
        if events.is_empty() {
            return Ok(());
        }
        let mut dirty_dirs: BTreeSet<PathBuf> = BTreeSet::new();
        let mut dirty_files: BTreeSet<PathBuf> = BTreeSet::new();
        // folders to drop with everything under them (gone, replaced, moved,
        // or changed permissions); their parent is listed again, so whatever
        // has the name now is walked as new
        let mut dead: Vec<PathBuf> = Vec::new();
        for e in events {
            if e.mask & libc::IN_Q_OVERFLOW != 0 {
                return Err(Stale("the event queue overflowed".into()));
            }
            if let Some(a) = self.ancestors.get(&e.wd) {
                if e.mask & (libc::IN_DELETE_SELF | libc::IN_MOVE_SELF | libc::IN_IGNORED) != 0
                    || RULE_FILES.iter().any(|r| e.name == *r)
                {
                    return Err(Stale(format!("{} changed", a.join(&e.name).display())));
                }
                continue;
            }
            let Some(dir) = self.wd_dir.get(&e.wd).cloned() else {
                continue; // a watch we removed
            };
            if e.name.is_empty() {
                // the folder itself: gone, moved, or its permissions changed
                if e.mask
                    & (libc::IN_IGNORED
                        | libc::IN_DELETE_SELF
                        | libc::IN_MOVE_SELF
                        | libc::IN_ATTRIB)
                    == 0
                {
                    continue;
                }
                if dir == self.root {
                    return Err(Stale("the root was moved, deleted or changed".into()));
                }
                if e.mask & libc::IN_IGNORED != 0 {
                    self.wd_dir.remove(&e.wd);
                }
                if let Some(p) = dir.parent() {
                    dirty_dirs.insert(p.to_path_buf());
                }
                dead.push(dir);
                continue;
            }
            if RULE_FILES.iter().any(|r| e.name == *r) {
                return Err(Stale(format!("{} changed", dir.join(&e.name).display())));
            }
            let p = dir.join(&e.name);
            if e.mask
                & (libc::IN_CREATE
                    | libc::IN_DELETE
                    | libc::IN_MOVED_FROM
                    | libc::IN_MOVED_TO
                    | libc::IN_ATTRIB)
                != 0
            {
                dirty_dirs.insert(dir.clone());
                if e.mask & libc::IN_ISDIR != 0 && self.dir_wd.contains_key(&p) {
                    dead.push(p.clone());
                }
            }
            // content: written, or replaced by a rename or a new file
            if e.mask
                & (libc::IN_MODIFY
                    | libc::IN_CLOSE_WRITE
                    | libc::IN_ATTRIB
                    | libc::IN_MOVED_TO
                    | libc::IN_CREATE)
                != 0
            {
                if self.files.contains_key(&p) {
                    dirty_files.insert(p);
                } else {
                    // not kept (unreadable until now?): list its folder again
                    dirty_dirs.insert(dir);
                }
            }
        }
        if dirty_dirs.len() > MAX_DIRTY_DIRS {
            return Err(Stale(format!("{} folders changed", dirty_dirs.len())));
        }
        // Phase 1: removals (before any new watch: a moved folder keeps its
        // inode, and a watch added again would reuse the old descriptor).
        for d in dead {
            self.remove_subtree(&d);
        }
        let mut new_dirs = Vec::new();
        let mut new_files = Vec::new();
        for d in &dirty_dirs {
            if !self.dir_wd.contains_key(d) {
                continue; // removed as part of another subtree, or never kept
            }
            let listing = match std::fs::symlink_metadata(d) {
                Ok(m) if m.is_dir() => Some(list_dir(d)),
                _ => None,
            };
            let Some((files, dirs)) = listing else {
                self.remove_subtree(d);
                continue;
            };
            let gone_files: Vec<PathBuf> = under(&self.files, d)
                .filter(|p| p.parent() == Some(d.as_path()) && !files.contains(*p))
                .cloned()
                .collect();
            for p in gone_files {
                self.remove_file(&p);
            }
            let gone_dirs: Vec<PathBuf> = under(&self.dir_wd, d)
                .filter(|p| p.parent() == Some(d.as_path()) && !dirs.contains(*p))
                .cloned()
                .collect();
            for p in gone_dirs {
                self.remove_subtree(&p);
            }
            new_files.extend(files.into_iter().filter(|p| !self.files.contains_key(p)));
            new_dirs.extend(dirs.into_iter().filter(|p| !self.dir_wd.contains_key(p)));
        }
        // a path dropped above is not read back in (it may be a symlink now)
        dirty_files.retain(|p| self.files.contains_key(p));
        // Phase 2: additions. New folders are walked like the first build.
        for d in new_dirs {
            // the same instance: the new watches must land in this tree's queue
            let b = Arc::new(Builder::new(self.ino.clone(), max_bytes, false));
            walk_into(&d, &b);
            if !b.keeping() {
                return Err(Stale(b.why.lock().take().unwrap_or_default()));
            }
            let dirs = std::mem::take(&mut b.dirs.lock().0);
            let files = std::mem::take(&mut *b.files.lock());
            for (p, wd) in dirs {
                if self.wd_dir.contains_key(&wd) {
                    return Err(Stale(format!("{} is in the tree twice", p.display())));
                }
                self.wd_dir.insert(wd, p.clone());
                self.dir_wd.insert(p, wd);
            }
            for c in files {
                dirty_files.remove(&c.path);
                self.put_file(c);
            }
        }
        // (a new name for a kept file gives no event for the old name: the
        // link count is an event of the inode, not of its folders)
        let mut linked = HashSet::new();
        for p in new_files.into_iter().chain(dirty_files) {
            match load(&p) {
                Ok(c) => {
                    if c.nlink > 1 {
                        linked.insert(c.ino);
                    }
                    self.put_file(Arc::new(c));
                }
                Err(_) => self.remove_file(&p),
            }
        }
        if !linked.is_empty() {
            let again: Vec<PathBuf> = self
                .files
                .values()
                .filter(|c| c.data.is_some() && linked.contains(&c.ino))
                .map(|c| c.path.clone())
                .collect();
            for p in again {
                match load(&p) {
                    Ok(c) => self.put_file(Arc::new(c)),
                    Err(_) => self.remove_file(&p),
                }
            }
        }
        if self.bytes > max_bytes {
            return Err(Stale(format!(
                "the tree grew past file.search_cache_mb ({} MB)",
                max_bytes >> 20
            )));
        }
        Ok(())
    }
}

/// The keys of `m` at or under `d` (a path's descendants sort right after
/// it: paths compare component by component).
fn under<'a, V>(m: &'a BTreeMap<PathBuf, V>, d: &'a Path) -> impl Iterator<Item = &'a PathBuf> {
    m.range::<Path, _>((std::ops::Bound::Included(d), std::ops::Bound::Unbounded))
        .map(|(p, _)| p)
        .take_while(move |p| p.starts_with(d))
}

/// The direct entries of `d` a walk would yield: (files, folders).
fn list_dir(d: &Path) -> (BTreeSet<PathBuf>, BTreeSet<PathBuf>) {
    let mut files = BTreeSet::new();
    let mut dirs = BTreeSet::new();
    let mut wb = ignore::WalkBuilder::new(d);
    wb.max_depth(Some(1));
    for e in wb.build() {
        let Ok(e) = e else { continue };
        if e.depth() == 0 {
            continue;
        }
        match e.file_type() {
            Some(t) if t.is_file() => {
                files.insert(e.into_path());
            }
            Some(t) if t.is_dir() => {
                dirs.insert(e.into_path());
            }
            _ => {}
        }
    }
    (files, dirs)
}

/// The gitignore-aware parallel walk of `root` every search uses. With a
/// builder, each folder is watched before it is listed: the walk's filter
/// sees a folder before the folder is read, and the root is watched (with
/// the folders above it) before the walk starts.
pub fn walker(root: &Path, b: Option<&Arc<Builder>>) -> ignore::WalkBuilder {
    let mut wb = ignore::WalkBuilder::new(root);
    wb.threads(
        std::thread::available_parallelism()
            .map_or(2, |n| n.get())
            .min(8),
    );
    if let Some(b) = b {
        b.start(root);
        let b = b.clone();
        wb.filter_entry(move |e| {
            if e.file_type().is_some_and(|t| t.is_dir()) {
                b.dir(e.path());
            }
            true
        });
    }
    wb
}

/// Walk `root` into `b`: watch each folder, keep each file.
fn walk_into(root: &Path, b: &Arc<Builder>) {
    walker(root, Some(b)).build_parallel().run(|| {
        Box::new(move |e| {
            let Ok(e) = e else {
                return ignore::WalkState::Continue;
            };
            if !b.keeping() {
                return ignore::WalkState::Quit;
            }
            if e.file_type().is_some_and(|t| t.is_file())
                && let Ok(c) = load(e.path())
            {
                // (no search waits on this walk: sign the files now)
                let _ = c.sig();
                b.file(Arc::new(c));
            }
            ignore::WalkState::Continue
        })
    });
}

/// A folder's (device, inode).
fn root_id(p: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()))
}

/// One kept tree; what the list needs is readable without locking it.
struct Entry {
    root: PathBuf,
    /// The tree's bytes as of its last refresh.
    bytes: AtomicUsize,
    /// When a search last used it.
    used: Mutex<Instant>,
    tree: Mutex<Tree>,
}

/// The files under one folder at one moment, in path order.
pub struct View {
    snap: Snapshot,
    range: std::ops::Range<usize>,
}

impl View {
    pub fn files(&self) -> &[Arc<Cached>] {
        &self.snap[self.range.clone()]
    }
}

/// The runtime's indexed trees.
pub struct SearchIndex {
    max_bytes: usize,
    /// Most recently used first.
    trees: Mutex<Vec<Arc<Entry>>>,
    /// Trees that could not be indexed, and when.
    refused: Mutex<HashMap<PathBuf, Instant>>,
}

impl SearchIndex {
    /// `max_mb` megabytes for all trees together; 0: no index.
    pub fn new(max_mb: usize) -> SearchIndex {
        SearchIndex {
            max_bytes: max_mb.saturating_mul(1 << 20),
            trees: Mutex::new(Vec::new()),
            refused: Mutex::new(HashMap::new()),
        }
    }

    pub fn enabled(&self) -> bool {
        self.max_bytes > 0
    }

    /// Drop trees unused for [`MAX_AGE`] and, least recently used first,
    /// trees past the memory budget or [`MAX_TREES`] (the first one stays:
    /// it was just built or used). Takes no tree's lock.
    fn trim(trees: &mut Vec<Arc<Entry>>, max_bytes: usize) {
        let mut total = 0;
        let mut n = 0;
        trees.retain(|e| {
            let bytes = e.bytes.load(Ordering::Relaxed);
            let keep = n == 0
                || (n < MAX_TREES
                    && total + bytes <= max_bytes
                    && e.used.lock().elapsed() < MAX_AGE);
            if keep {
                total += bytes;
                n += 1;
            }
            keep
        });
    }

    /// The files under `dir` (a real path) as of now, when an index covers
    /// that folder. Applies the changes queued since the last search first;
    /// drops the index when it cannot (the caller then walks the tree).
    pub fn files_under(&self, dir: &Path) -> Option<View> {
        if !self.enabled() {
            return None;
        }
        let candidates: Vec<Arc<Entry>> = self
            .trees
            .lock()
            .iter()
            .filter(|e| dir.starts_with(&e.root))
            .cloned()
            .collect();
        for entry in candidates {
            let mut t = entry.tree.lock();
            if t.dead || !t.dir_wd.contains_key(dir) {
                continue;
            }
            if let Err(Stale(why)) = t.refresh(self.max_bytes) {
                tracing::debug!(root = %entry.root.display(), %why, "search index dropped");
                t.dead = true;
                drop(t);
                self.trees.lock().retain(|x| !Arc::ptr_eq(x, &entry));
                return None;
            }
            if !t.dir_wd.contains_key(dir) {
                return None;
            }
            let snap = t.snapshot();
            entry.bytes.store(t.bytes, Ordering::Relaxed);
            drop(t);
            *entry.used.lock() = Instant::now();
            let mut trees = self.trees.lock();
            if let Some(i) = trees.iter().position(|x| Arc::ptr_eq(x, &entry)) {
                let e = trees.remove(i);
                trees.insert(0, e);
            }
            Self::trim(&mut trees, self.max_bytes);
            drop(trees);
            let lo = snap.partition_point(|c| c.path.as_path() < dir);
            let hi = lo + snap[lo..].partition_point(|c| c.path.starts_with(dir));
            return Some(View {
                snap,
                range: lo..hi,
            });
        }
        None
    }

    /// A builder for a walk of `root`, when an index of it should be built
    /// (enabled, a local file system, not refused lately).
    pub fn builder(&self, root: &Path) -> Option<Arc<Builder>> {
        if !self.enabled() || !root.is_dir() {
            return None;
        }
        {
            let mut refused = self.refused.lock();
            refused.retain(|_, at| at.elapsed() < RETRY_AFTER);
            if refused.contains_key(root) {
                return None;
            }
        }
        if !local_fs(root) {
            self.refused
                .lock()
                .insert(root.to_path_buf(), Instant::now());
            return None;
        }
        match Inotify::new() {
            Ok(ino) => Some(Arc::new(Builder::new(Arc::new(ino), self.max_bytes, true))),
            Err(e) => {
                tracing::debug!(error = %e, "no inotify instance: searching without an index");
                None
            }
        }
    }

    /// Keep what a finished walk of `root` built.
    pub fn finish(&self, root: &Path, b: &Builder) {
        let id = root_id(root);
        if !b.keeping() || id.is_none() {
            let why = b.why.lock().take().unwrap_or_default();
            tracing::info!(root = %root.display(), %why, "search index not kept");
            self.refused
                .lock()
                .insert(root.to_path_buf(), Instant::now());
            return;
        }
        let tree = Tree::from_builder(root.to_path_buf(), id.unwrap_or_default(), b);
        let entry = Arc::new(Entry {
            root: root.to_path_buf(),
            bytes: AtomicUsize::new(tree.bytes),
            used: Mutex::new(Instant::now()),
            tree: Mutex::new(tree),
        });
        let mut trees = self.trees.lock();
        // a tree inside the new one is redundant; the same root is replaced
        trees.retain(|e| !e.root.starts_with(root));
        trees.insert(0, entry);
        Self::trim(&mut trees, self.max_bytes);
    }

    /// Roots of the trees kept now, most recently used first.
    pub fn roots(&self) -> Vec<PathBuf> {
        self.trees.lock().iter().map(|e| e.root.clone()).collect()
    }

    /// Index `root` now (the prewarm), as a first search would.
    /// Returns whether the index was kept.
    pub fn warm(&self, root: &Path) -> bool {
        let Some(b) = self.builder(root) else {
            return false;
        };
        walk_into(root, &b);
        let kept = b.keeping();
        self.finish(root, &b);
        kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// What a fresh walk of `root` sees: path -> content.
    fn walked(root: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
        let mut m = BTreeMap::new();
        for e in ignore::WalkBuilder::new(root).build().flatten() {
            if e.file_type().is_some_and(|t| t.is_file())
                && let Ok(c) = load(e.path())
            {
                m.insert(c.path, c.data);
            }
        }
        m
    }

    fn indexed(ix: &SearchIndex, dir: &Path) -> Option<BTreeMap<PathBuf, Option<Vec<u8>>>> {
        let v = ix.files_under(dir)?;
        Some(
            v.files()
                .iter()
                .map(|c| (c.path.clone(), c.data.clone()))
                .collect(),
        )
    }

    fn write(p: &Path, s: &str) {
        if let Some(d) = p.parent() {
            fs::create_dir_all(d).unwrap();
        }
        fs::write(p, s).unwrap();
    }

    #[test]
    fn the_index_sees_every_change_a_walk_would() {
        let tmp = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(tmp.path()).unwrap().join("ws");
        let outside = root.with_file_name("outside");
        fs::create_dir_all(root.join(".git")).unwrap();
        write(&root.join(".gitignore"), "target/\n*.log\n");
        for d in 0..5 {
            for f in 0..5 {
                write(
                    &root.join(format!("src/m{d}/f{f}.rs")),
                    &format!("fn f{d}_{f}() {{}}\n"),
                );
            }
        }
        write(&root.join("target/out.rs"), "ignored\n");
        write(&outside.join("x/y.rs"), "from outside\n");
        let ix = SearchIndex::new(64);
        assert!(ix.warm(&root));
        assert_eq!(indexed(&ix, &root).unwrap(), walked(&root));

        type Step = Box<dyn Fn(&Path)>;
        let o = outside.clone();
        let steps: Vec<(&str, Step)> = vec![
            (
                "rewrite",
                Box::new(|r| write(&r.join("src/m0/f0.rs"), "changed\n")),
            ),
            (
                "same size, same tick",
                Box::new(|r| {
                    write(&r.join("src/m0/f1.rs"), "aaaa\n");
                    write(&r.join("src/m0/f1.rs"), "bbbb\n");
                }),
            ),
            (
                "append",
                Box::new(|r| {
                    use std::io::Write;
                    let mut f = fs::OpenOptions::new()
                        .append(true)
                        .open(r.join("src/m1/f0.rs"))
                        .unwrap();
                    f.write_all(b"appended\n").unwrap();
                }),
            ),
            (
                "new file",
                Box::new(|r| write(&r.join("src/m1/new.rs"), "new\n")),
            ),
            (
                "ignored file",
                Box::new(|r| write(&r.join("src/m1/debug.log"), "log\n")),
            ),
            (
                "new nested folders",
                Box::new(|r| write(&r.join("src/a/b/c/deep.rs"), "deep\n")),
            ),
            (
                "delete",
                Box::new(|r| fs::remove_file(r.join("src/m2/f0.rs")).unwrap()),
            ),
            (
                "rename in folder",
                Box::new(|r| fs::rename(r.join("src/m2/f1.rs"), r.join("src/m2/g1.rs")).unwrap()),
            ),
            (
                "rename across folders",
                Box::new(|r| fs::rename(r.join("src/m2/f2.rs"), r.join("src/m3/f2.rs")).unwrap()),
            ),
            (
                "atomic replace",
                Box::new(|r| {
                    write(&r.join("src/m3/.tmp-f0"), "replaced\n");
                    fs::rename(r.join("src/m3/.tmp-f0"), r.join("src/m3/f0.rs")).unwrap();
                }),
            ),
            (
                "hidden made visible",
                Box::new(|r| {
                    write(&r.join("src/.hidden.rs"), "was hidden\n");
                    fs::rename(r.join("src/.hidden.rs"), r.join("src/visible.rs")).unwrap();
                }),
            ),
            (
                "move a folder inside",
                Box::new(|r| fs::rename(r.join("src/m4"), r.join("src/a/m4")).unwrap()),
            ),
            (
                "edit in the moved folder",
                Box::new(|r| write(&r.join("src/a/m4/f0.rs"), "edited after move\n")),
            ),
            (
                "move a folder out",
                Box::new(move |r| fs::rename(r.join("src/a/b"), o.join("b")).unwrap()),
            ),
            (
                "move a folder in",
                Box::new(move |r| fs::rename(outside_dir(r).join("x"), r.join("src/x")).unwrap()),
            ),
            (
                "delete a folder and make it again",
                Box::new(|r| {
                    fs::remove_dir_all(r.join("src/m1")).unwrap();
                    write(&r.join("src/m1/other.rs"), "again\n");
                }),
            ),
            (
                "binary and large files",
                Box::new(|r| {
                    fs::write(r.join("src/bin.dat"), b"a\0b match\n").unwrap();
                    fs::write(r.join("src/big.txt"), vec![b'x'; (MAX_FILE + 10) as usize]).unwrap();
                }),
            ),
            (
                "symlink",
                Box::new(|r| {
                    std::os::unix::fs::symlink(r.join("src/m0"), r.join("src/link")).unwrap()
                }),
            ),
            (
                "a folder swapped for another of the same name",
                Box::new(|r| {
                    write(&r.join("src/swap/f.rs"), "old\n");
                    write(&r.join("src/swap/sub/g.rs"), "old\n");
                }),
            ),
            (
                "(swap)",
                Box::new(|r| {
                    write(&r.join("elsewhere/f.rs"), "new\n");
                    write(&r.join("elsewhere/sub/g.rs"), "new\n");
                    fs::rename(r.join("src/swap"), r.join("src/.swap.old")).unwrap();
                    fs::rename(r.join("elsewhere"), r.join("src/swap")).unwrap();
                }),
            ),
            (
                "edit in the swapped-in folder",
                Box::new(|r| write(&r.join("src/swap/sub/g.rs"), "newer\n")),
            ),
            (
                "a folder made unreadable",
                Box::new(|r| {
                    use std::os::unix::fs::PermissionsExt;
                    write(&r.join("src/locked/f.rs"), "locked\n");
                    let _ = fs::set_permissions(
                        r.join("src/locked"),
                        fs::Permissions::from_mode(0o000),
                    );
                }),
            ),
            (
                "an indexed file replaced by a symlink",
                Box::new(|r| {
                    fs::write(r.join("secret"), "SECRET\n").unwrap();
                    fs::remove_file(r.join("src/m3/f1.rs")).unwrap();
                    std::os::unix::fs::symlink(r.join("secret"), r.join("src/m3/f1.rs")).unwrap();
                }),
            ),
            (
                "an indexed file replaced by a FIFO",
                Box::new(|r| {
                    fs::remove_file(r.join("src/m3/f3.rs")).unwrap();
                    mkfifo(&r.join("src/m3/f3.rs"));
                }),
            ),
            (
                "a hard link written through its other name",
                Box::new(|r| {
                    fs::hard_link(r.join("src/m3/f4.rs"), r.join("alias")).unwrap();
                    fs::write(r.join("alias"), "through the alias\n").unwrap();
                }),
            ),
        ];
        for (what, step) in &steps {
            step(&root);
            let got = indexed(&ix, &root).unwrap_or_else(|| panic!("{what}: index dropped"));
            assert_eq!(got, walked(&root), "after: {what}");
            // a folder inside is served from the same index
            let sub = root.join("src");
            assert_eq!(
                indexed(&ix, &sub).unwrap(),
                walked(&sub),
                "src after: {what}"
            );
        }
        assert_eq!(ix.roots(), vec![root.clone()]);

        // a changed ignore file: dropped (the next search walks and rebuilds)
        write(&root.join("top.log"), "log\n");
        assert!(
            !indexed(&ix, &root)
                .unwrap()
                .keys()
                .any(|p| p.ends_with("top.log"))
        );
        write(&root.join(".gitignore"), "target/\n");
        assert!(indexed(&ix, &root).is_none());
        assert!(ix.roots().is_empty());
        assert!(ix.warm(&root));
        assert_eq!(indexed(&ix, &root).unwrap(), walked(&root));
        assert!(
            indexed(&ix, &root)
                .unwrap()
                .keys()
                .any(|p| p.ends_with("top.log"))
        );

        // an ignore file above the root changed: dropped
        let sub = root.join("src");
        assert!(ix.warm(&sub));
        assert!(indexed(&ix, &sub).is_some());
        write(&root.join(".gitignore"), "target/\nswap/\n");
        assert!(indexed(&ix, &sub).is_none());
        assert!(ix.warm(&sub));
        assert_eq!(indexed(&ix, &sub).unwrap(), walked(&sub));
        assert!(!walked(&sub).keys().any(|p| p.starts_with(sub.join("swap"))));

        // another folder put at the root's path: dropped
        assert!(ix.warm(&root));
        fs::rename(&root, root.with_file_name("ws2")).unwrap();
        write(&root.join("other.rs"), "another tree\n");
        assert!(indexed(&ix, &root).is_none());
        assert!(ix.warm(&root));
        assert_eq!(indexed(&ix, &root).unwrap(), walked(&root));
    }

    fn mkfifo(p: &Path) {
        let ok = std::process::Command::new("mkfifo")
            .arg(p)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "mkfifo {}", p.display());
    }

    #[test]
    fn the_budget_holds_for_all_trees_together() {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        let ix = SearchIndex::new(1);
        for t in ["a", "b", "c"] {
            fs::create_dir_all(base.join(t)).unwrap();
            fs::write(base.join(t).join("f"), vec![b'x'; 400 * 1024]).unwrap();
            assert!(ix.warm(&base.join(t)));
        }
        // 3 x 400 KB > 1 MB: the least recently used went
        assert_eq!(ix.roots(), vec![base.join("c"), base.join("b")]);
        assert!(ix.files_under(&base.join("b")).is_some());
        assert_eq!(ix.roots(), vec![base.join("b"), base.join("c")]);
    }

    fn outside_dir(root: &Path) -> PathBuf {
        root.with_file_name("outside")
    }

    #[test]
    fn budget_and_off_switch() {
        let tmp = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(tmp.path()).unwrap();
        for i in 0..4 {
            fs::write(root.join(format!("f{i}")), vec![b'a'; 400 * 1024]).unwrap();
        }
        // 1 MB budget, 1.6 MB tree: not kept, and not tried again at once
        let ix = SearchIndex::new(1);
        assert!(!ix.warm(&root));
        assert!(ix.files_under(&root).is_none());
        assert!(ix.builder(&root).is_none());
        // growing past the budget drops a kept index
        let small = tempfile::tempdir().unwrap();
        let small_root = fs::canonicalize(small.path()).unwrap();
        fs::write(small_root.join("a"), b"x").unwrap();
        assert!(ix.warm(&small_root));
        assert!(ix.files_under(&small_root).is_some());
        fs::write(small_root.join("b"), vec![b'a'; 2 << 20]).unwrap();
        assert!(ix.files_under(&small_root).is_none());
        // 0: off
        let off = SearchIndex::new(0);
        assert!(!off.enabled());
        assert!(!off.warm(&small_root));
    }

    #[test]
    fn a_lost_event_queue_rebuilds() {
        let tmp = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(tmp.path()).unwrap();
        fs::write(root.join("a"), b"x").unwrap();
        let ix = SearchIndex::new(8);
        assert!(ix.warm(&root));
        // more events than the kernel queues (fs.inotify.max_queued_events)
        let max: usize = fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(16384);
        // (two files in turn: the kernel merges identical consecutive events)
        fs::write(root.join("b"), b"").unwrap();
        let open = |n: &str| {
            fs::OpenOptions::new()
                .append(true)
                .open(root.join(n))
                .unwrap()
        };
        let (mut a, mut b) = (open("a"), open("b"));
        for _ in 0..max / 2 + 10 {
            use std::io::Write;
            a.write_all(b"y").unwrap();
            b.write_all(b"y").unwrap();
        }
        assert!(
            ix.files_under(&root).is_none(),
            "overflow must drop the index"
        );
        assert!(ix.warm(&root));
        assert_eq!(
            ix.files_under(&root).unwrap().files()[0]
                .data
                .as_ref()
                .unwrap()
                .len(),
            max / 2 + 11
        );
    }
}
