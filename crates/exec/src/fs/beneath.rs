//! The sandbox backend's files, resolved beneath open directory handles.
//!
//! Why: checking a resolved path and then opening it again by name races
//! with a sandboxed process that swaps a workspace entry for a symlink
//! (issue 27): the check saw the workspace, the open followed the link to
//! a host folder the sandbox cannot see. Here no path is ever looked up by
//! name from `/`. The sandbox's mount table (what `sandbox.rs` hands to
//! bubblewrap) is a list of `O_PATH` handles, one per bind, and a path is
//! resolved as the sandbox's kernel would resolve it, one component at a
//! time with `openat(.., O_NOFOLLOW)`: a symlink is read and its target
//! spliced into the rest of the path (an absolute one restarts from the
//! virtual root, the mount table), `..` pops the resolved chain (never
//! `openat("..")`), at most 40 links. The final open, create, rename or
//! unlink is done beneath the parent's handle with `O_NOFOLLOW`, so a swap
//! after the walk cannot redirect it. Outside the writable binds only
//! world-readable files are readable and the sandbox's masked files are
//! refused, whatever the runtime's uid; a write to a file with other hard
//! links is refused.

use std::collections::{BTreeMap, VecDeque};
use std::ffi::{OsStr, OsString};
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rustix::fs::{self as rfs, AtFlags, Dir, FileType, Mode, OFlags, Stat};
use rustix::io::Errno;

use super::rules::{self, Rules};
use super::types::{Entry, Meta, WalkedFile};
use crate::spawn::SandboxConfig;

/// The sandbox's system folders (as `sandbox.rs` binds them).
const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
];

/// Host files a sandboxed command never reads (`sandbox.rs` binds
/// `/dev/null` over them): refused here whatever their mode.
/// Names, in the workspace root and in every directory from it down to the
/// command's cwd (and in the extra writable binds), that make a later
/// action of the host user run code, and so are read-only in the sandbox:
/// `.git` (`core.fsmonitor`, `core.hooksPath`, hooks, filters run by the
/// user's next `git status`/`commit`), `.hg` (hgrc hooks), `.envrc` (direnv
/// on `cd`), `.vscode` and `.idea` (tasks that run on opening the folder,
/// interpreter and terminal settings), `.devcontainer` (`initializeCommand`
/// runs on the host), `.pre-commit-config.yaml`, `.husky` and `.githooks`
/// (hook scripts run by the next commit). Only entries that exist when the
/// command starts are protected (bubblewrap would have to create a missing
/// one on the host, and an empty `.git` would break the user's git); the
/// file tools ask through the approval policy before writing any of them.
pub const PROTECTED: &[&str] = &[
    ".git",
    ".hg",
    ".envrc",
    ".vscode",
    ".idea",
    ".devcontainer",
    ".pre-commit-config.yaml",
    ".husky",
    ".githooks",
];

pub const MASKED: &[&str] = &[
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/shadow-",
    "/etc/gshadow-",
    "/etc/sudoers",
];

/// Whether to try `openat2` first (cleared when the kernel lacks it).
static OPENAT2: AtomicBool = AtomicBool::new(true);

fn memfind(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Symlinks followed in one resolution (the kernel's limit).
const MAX_LINKS: usize = 40;
/// Handles kept open along one resolved chain; older ones are reopened
/// through the walk when `..` comes back to them.
const FD_WINDOW: usize = 32;
/// Folders below the start of a search walk or a recursive removal.
const MAX_DEPTH: usize = 64;

#[derive(Debug)]
enum Kind {
    /// A bind of a host folder (`--bind`/`--ro-bind`).
    Bind { fd: OwnedFd, writable: bool },
    /// `--symlink target at`.
    Link(PathBuf),
    /// A private tmpfs, `/proc` or `/dev`: an empty folder for the tools.
    Empty,
}

#[derive(Debug)]
struct Mount {
    at: PathBuf,
    kind: Kind,
}

/// The sandbox's view of the file system: mounts in bubblewrap's order (a
/// later mount hides what an earlier one shows at or below its path).
#[derive(Debug)]
pub struct View {
    mounts: Vec<Mount>,
    /// Where relative paths start (the working root).
    root: PathBuf,
    /// Whether the working root could be opened (else the view is built
    /// again on use, until it can: the folder may be created later).
    pub root_open: bool,
}

#[derive(Debug)]
enum Handle {
    /// The root handle of mount `i`.
    Mount(usize),
    Own(OwnedFd),
    /// Closed to bound the handles of a deep chain (reopened on `..`).
    Dropped,
    /// A folder of the sandbox's own root or tmpfs (no host handle).
    Virtual,
}

#[derive(Debug)]
struct Node {
    /// The path as the sandbox sees it (no symlink, no `..`).
    path: PathBuf,
    handle: Handle,
    /// The mount this node lies in.
    gov: Option<usize>,
}

enum Step {
    Node(Node, Option<Stat>),
    Link(PathBuf),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Last {
    /// Resolve the whole path, following a final symlink.
    Follow,
    /// Resolve up to the parent; hand back the last name unresolved.
    Parent,
    /// Follow, and open the final file `O_RDONLY` beneath its parent.
    Read,
}

struct Walk {
    chain: Vec<Node>,
    /// The final node's status, when the walk took it.
    stat: Option<Stat>,
    /// [`Last::Parent`]: the last name.
    name: Option<OsString>,
    /// [`Last::Read`]: the opened file and its status.
    file: Option<(OwnedFd, Stat)>,
}

impl Walk {
    fn top(&self) -> &Node {
        self.chain.last().expect("a chain starts at the root")
    }
}

/// Whether the folder open at `fd` is a git directory: a `HEAD` file
/// beside `objects` and `refs` folders (not following links).
fn is_git_dir_fd(fd: BorrowedFd<'_>) -> bool {
    let kind = |name: &str| {
        rfs::statat(fd, name, AtFlags::SYMLINK_NOFOLLOW)
            .ok()
            .map(|st| file_type(&st))
    };
    kind("HEAD") == Some(FileType::RegularFile)
        && kind("objects") == Some(FileType::Directory)
        && kind("refs") == Some(FileType::Directory)
}

fn err(e: Errno) -> io::Error {
    io::Error::from(e)
}

/// `/`-rooted, lexically normalised (`..` above `/` stays at `/`).
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
            _ => {}
        }
    }
    out
}

/// The names of `p`, with `..` kept (resolved against the chain).
fn names(p: &Path) -> impl DoubleEndedIterator<Item = OsString> + '_ {
    p.components().filter_map(|c| match c {
        Component::Normal(n) => Some(n.to_os_string()),
        Component::ParentDir => Some(OsString::from("..")),
        _ => None,
    })
}

/// `p.starts_with(base)` for normalised absolute paths (no `.`, `..`,
/// doubled or trailing `/`), on bytes: this runs for every mount at every
/// component, and `Path::starts_with` parses both paths each time.
fn at_or_below(p: &Path, base: &Path) -> bool {
    let (p, b) = (p.as_os_str().as_bytes(), base.as_os_str().as_bytes());
    b == b"/" || p.starts_with(b) && (p.len() == b.len() || p[b.len()] == b'/')
}

fn file_type(st: &Stat) -> FileType {
    FileType::from_raw_mode(st.st_mode)
}

fn meta(st: &Stat) -> Meta {
    let ft = file_type(st);
    Meta {
        len: st.st_size.max(0) as u64,
        mtime_ns: i128::from(st.st_mtime) * 1_000_000_000 + i128::from(st.st_mtime_nsec),
        mode: st.st_mode & 0o7777,
        is_dir: ft == FileType::Directory,
        is_file: ft == FileType::RegularFile,
        // u64 on x86_64, u32 on some other targets.
        #[allow(clippy::unnecessary_cast)]
        links: st.st_nlink as u64,
    }
}

fn denied(path: &Path, what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!("{} is outside what the sandbox {what}", path.display()),
    )
}

static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

fn tmp_name(name: &OsStr) -> OsString {
    let n = TMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let mut s = OsString::from(".");
    s.push(name);
    s.push(format!(".ht-tmp.{}.{n}.{t:x}", std::process::id()));
    s
}

impl View {
    /// The mount table of `sandbox.rs` for `cfg`: system folders and
    /// read-only binds, `/proc`, `/dev`, `/tmp`, `/run` and the home as
    /// empty folders, the working root and writable binds read-write. A
    /// bind that cannot be opened (missing, not a folder) is left out.
    pub fn new(cfg: &SandboxConfig) -> View {
        let root = normalize(&std::path::absolute(&cfg.root).unwrap_or_else(|_| cfg.root.clone()));
        let mut v = View {
            mounts: Vec::new(),
            root: root.clone(),
            root_open: false,
        };
        for d in SYSTEM_DIRS {
            match std::fs::read_link(d) {
                Ok(target) => v.mounts.push(Mount {
                    at: PathBuf::from(d),
                    kind: Kind::Link(target),
                }),
                Err(_) => v.bind(Path::new(d), false),
            }
        }
        // (the sandbox's private home: the task's HOME, which is the runtime's)
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|h| h.is_absolute() && h != Path::new("/") && !h.starts_with(&root));
        let under_tmpfs = |p: &Path| {
            p.starts_with("/tmp")
                || p.starts_with("/run")
                || home.as_ref().is_some_and(|h| p.starts_with(h))
        };
        for p in cfg.ro_binds.iter().filter(|p| !under_tmpfs(p)) {
            v.bind(p, false);
        }
        for e in ["/proc", "/dev", "/tmp", "/run"] {
            v.empty(Path::new(e));
        }
        if let Some(h) = &home {
            v.empty(h);
        }
        for p in cfg.ro_binds.iter().filter(|p| under_tmpfs(p)) {
            v.bind(p, false);
        }
        let before = v.mounts.len();
        v.bind(&cfg.root, true);
        v.root_open = v.mounts.len() > before;
        for p in &cfg.rw_binds {
            v.bind(p, true);
        }
        v
    }

    fn empty(&mut self, at: &Path) {
        self.mounts.push(Mount {
            at: normalize(at),
            kind: Kind::Empty,
        });
    }

    /// Bind host folder `p` at its own path, and at its canonical path too
    /// when that differs (the file tools are handed canonical paths).
    fn bind(&mut self, p: &Path, writable: bool) {
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let Ok(fd) = rfs::open(p, flags, Mode::empty()) else {
            return;
        };
        let literal = normalize(&std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()));
        if let Ok(canon) = std::fs::canonicalize(p)
            && canon != literal
            && let Ok(dup) = fd.try_clone()
        {
            self.mounts.push(Mount {
                at: canon,
                kind: Kind::Bind { fd: dup, writable },
            });
        }
        self.mounts.push(Mount {
            at: literal,
            kind: Kind::Bind { fd, writable },
        });
    }

    /// The mount `p` lies in: the latest whose path is `p` or above it.
    fn governing(&self, p: &Path) -> Option<usize> {
        self.mounts.iter().rposition(|m| at_or_below(p, &m.at))
    }

    /// Whether a mount after `after` lies strictly below `p` (then `p` is a
    /// folder bubblewrap made to mount it on).
    fn above_later_mount(&self, p: &Path, after: Option<usize>) -> bool {
        let start = after.map_or(0, |i| i + 1);
        self.mounts[start..]
            .iter()
            .any(|m| m.at != p && at_or_below(&m.at, p))
    }

    /// Whether some mount lies at or below `p`.
    fn mount_related(&self, p: &Path) -> bool {
        self.mounts.iter().any(|m| at_or_below(&m.at, p))
    }

    fn bind_writable(&self, gov: Option<usize>) -> Option<bool> {
        match gov.map(|i| &self.mounts[i].kind) {
            Some(Kind::Bind { writable, .. }) => Some(*writable),
            _ => None,
        }
    }

    fn fd<'a>(&'a self, n: &'a Node) -> Option<BorrowedFd<'a>> {
        match &n.handle {
            Handle::Mount(i) => match &self.mounts[*i].kind {
                Kind::Bind { fd, .. } => Some(fd.as_fd()),
                _ => None,
            },
            Handle::Own(fd) => Some(fd.as_fd()),
            Handle::Dropped | Handle::Virtual => None,
        }
    }

    /// Whether files may be created, replaced and removed in folder `n`.
    fn writable(&self, n: &Node) -> bool {
        self.fd(n).is_some() && self.bind_writable(n.gov) == Some(true)
    }

    fn root_node(&self) -> Node {
        let path = PathBuf::from("/");
        let gov = self.governing(&path);
        let handle = match gov {
            Some(i) if matches!(self.mounts[i].kind, Kind::Bind { .. }) => Handle::Mount(i),
            _ => Handle::Virtual,
        };
        Node { path, handle, gov }
    }

    /// One component below `parent`, as the sandbox sees it.
    fn step(&self, parent: &Node, name: &OsStr, dir_expected: bool) -> io::Result<Step> {
        let path = parent.path.join(name);
        let gov = self.governing(&path);
        if let Some(i) = gov
            && self.mounts[i].at == path
        {
            return Ok(match &self.mounts[i].kind {
                Kind::Bind { .. } => Step::Node(
                    Node {
                        path,
                        handle: Handle::Mount(i),
                        gov,
                    },
                    None,
                ),
                Kind::Link(t) => Step::Link(t.clone()),
                Kind::Empty => Step::Node(
                    Node {
                        path,
                        handle: Handle::Virtual,
                        gov,
                    },
                    None,
                ),
            });
        }
        let pfd = if parent.gov == gov {
            self.fd(parent)
        } else {
            None
        };
        if let (Some(_), Some(pfd)) = (self.bind_writable(gov), pfd) {
            match open_child(pfd, name, dir_expected) {
                Ok(Child::Node(fd, st)) => {
                    return Ok(Step::Node(
                        Node {
                            path,
                            handle: Handle::Own(fd),
                            gov,
                        },
                        st,
                    ));
                }
                Ok(Child::Link(t)) => return Ok(Step::Link(t)),
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    if !self.above_later_mount(&path, gov) {
                        return Err(e);
                    }
                }
                Err(e) => return Err(e),
            }
        }
        if self.above_later_mount(&path, gov) {
            return Ok(Step::Node(
                Node {
                    path,
                    handle: Handle::Virtual,
                    gov,
                },
                None,
            ));
        }
        Err(denied(&path, "can see"))
    }

    /// Open the final `name` below `parent` for reading, beneath the
    /// parent's handle. `None`: not a plain entry of a bind (a mount point,
    /// a virtual folder): the generic step decides.
    fn open_final(&self, parent: &Node, name: &OsStr) -> io::Result<Option<ReadChild>> {
        let path = parent.path.join(name);
        let gov = self.governing(&path);
        if gov.is_some_and(|i| self.mounts[i].at == path) || parent.gov != gov {
            return Ok(None);
        }
        let (Some(_), Some(pfd)) = (self.bind_writable(gov), self.fd(parent)) else {
            return Ok(None);
        };
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        match rfs::openat(pfd, name, flags, Mode::empty()) {
            Ok(fd) => {
                let st = rfs::fstat(&fd).map_err(err)?;
                Ok(Some(ReadChild::File(fd, st)))
            }
            Err(Errno::LOOP) => match rfs::readlinkat(pfd, name, Vec::new()) {
                Ok(t) => Ok(Some(ReadChild::Link(PathBuf::from(OsString::from_vec(
                    t.into_bytes(),
                ))))),
                // swapped back to something else meanwhile: try again
                Err(Errno::INVAL) => Ok(Some(ReadChild::Again)),
                Err(e) => Err(err(e)),
            },
            Err(Errno::NOENT) if self.above_later_mount(&path, gov) => Ok(None),
            Err(e) => Err(err(e)),
        }
    }

    /// The common case in one system call: a normalised path inside one
    /// bind, no mount below on the way, no symlink anywhere (the file tools
    /// are mostly handed resolved paths). `openat2` with `RESOLVE_BENEATH`
    /// and `RESOLVE_NO_SYMLINKS` resolves it beneath the bind's handle or
    /// fails (then the walk decides, and gives the error): the result is
    /// the walk's, one component at a time, without the round trips.
    fn fast(&self, abs: &Path, last: Last) -> Option<Walk> {
        if !OPENAT2.load(Ordering::Relaxed) {
            return None;
        }
        let bytes = abs.as_os_str().as_bytes();
        let normal = bytes.first() == Some(&b'/')
            && !bytes.ends_with(b"/")
            && !bytes.ends_with(b"/.")
            && !bytes.ends_with(b"/..")
            && memfind(bytes, b"//").is_none()
            && memfind(bytes, b"/./").is_none()
            && memfind(bytes, b"/../").is_none();
        if !normal {
            return None;
        }
        let i = self.governing(abs)?;
        let Kind::Bind { fd: bind, .. } = &self.mounts[i].kind else {
            return None;
        };
        let at = self.mounts[i].at.as_os_str().as_bytes();
        let rest = bytes[at.len()..]
            .strip_prefix(b"/")
            .unwrap_or(&bytes[at.len()..]);
        if rest.is_empty() {
            return None;
        }
        let rest = OsStr::from_bytes(rest);
        let how = rfs::ResolveFlags::BENEATH
            | rfs::ResolveFlags::NO_SYMLINKS
            | rfs::ResolveFlags::NO_MAGICLINKS;
        let open = |path: &OsStr, flags: OFlags| {
            match rfs::openat2(bind, path, flags | OFlags::CLOEXEC, Mode::empty(), how) {
                Ok(fd) => Some(fd),
                Err(Errno::NOSYS) | Err(Errno::PERM) => {
                    // no openat2 (before Linux 5.6), or a seccomp filter denies it
                    OPENAT2.store(false, Ordering::Relaxed);
                    None
                }
                Err(_) => None,
            }
        };
        let node = |handle| Node {
            path: abs.to_path_buf(),
            handle,
            gov: Some(i),
        };
        match last {
            Last::Read => {
                let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK;
                let fd = open(rest, flags)?;
                let st = rfs::fstat(&fd).ok()?;
                Some(Walk {
                    chain: vec![node(Handle::Dropped)],
                    stat: Some(st),
                    name: None,
                    file: Some((fd, st)),
                })
            }
            Last::Follow => {
                let fd = open(rest, OFlags::PATH | OFlags::NOFOLLOW)?;
                let st = rfs::fstat(&fd).ok()?;
                if file_type(&st) == FileType::Symlink {
                    return None;
                }
                Some(Walk {
                    chain: vec![node(Handle::Own(fd))],
                    stat: Some(st),
                    name: None,
                    file: None,
                })
            }
            Last::Parent => {
                let (dir, name) = match rest.as_bytes().iter().rposition(|b| *b == b'/') {
                    Some(k) => (Some(&rest.as_bytes()[..k]), &rest.as_bytes()[k + 1..]),
                    None => (None, rest.as_bytes()),
                };
                let parent = abs.parent()?.to_path_buf();
                let handle = match dir {
                    Some(d) => Handle::Own(open(
                        OsStr::from_bytes(d),
                        OFlags::PATH | OFlags::DIRECTORY,
                    )?),
                    None => Handle::Mount(i),
                };
                Some(Walk {
                    chain: vec![Node {
                        path: parent,
                        handle,
                        gov: Some(i),
                    }],
                    stat: None,
                    name: Some(OsStr::from_bytes(name).to_os_string()),
                    file: None,
                })
            }
        }
    }

    /// Resolve `path` (relative: against the working root).
    fn resolve(&self, path: &Path, last: Last) -> io::Result<Walk> {
        let abs = if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.root.join(path)
        };
        match self.fast(&abs, last) {
            Some(w) => Ok(w),
            None => self.walk_path(&abs, path, last),
        }
    }

    /// Resolve absolute `abs` one component at a time (`path`: as given,
    /// for messages); the chain holds every folder from the root.
    fn walk_path(&self, abs: &Path, path: &Path, last: Last) -> io::Result<Walk> {
        let mut todo: VecDeque<OsString> = names(abs).collect();
        let mut w = Walk {
            chain: vec![self.root_node()],
            stat: None,
            name: None,
            file: None,
        };
        let mut links = 0usize;
        let mut link = |w: &mut Walk, todo: &mut VecDeque<OsString>, t: &Path| {
            links += 1;
            if links > MAX_LINKS {
                return Err(err(Errno::LOOP));
            }
            if t.as_os_str().is_empty() {
                return Err(err(Errno::NOENT));
            }
            if t.is_absolute() {
                w.chain.truncate(1);
            }
            for n in names(t).rev() {
                todo.push_front(n);
            }
            w.stat = None;
            Ok(())
        };
        while let Some(c) = todo.pop_front() {
            if c == ".." {
                if w.chain.len() > 1 {
                    w.chain.pop();
                    w.stat = None;
                    if matches!(w.top().handle, Handle::Dropped) {
                        let p = w.top().path.clone();
                        w.chain = self.walk_path(&p, &p, Last::Follow)?.chain;
                    }
                }
                continue;
            }
            let is_last = todo.is_empty();
            if is_last && last == Last::Parent {
                w.name = Some(c);
                return Ok(w);
            }
            if is_last && last == Last::Read {
                match self.open_final(w.top(), &c)? {
                    Some(ReadChild::File(fd, st)) => {
                        w.chain.push(Node {
                            path: w.top().path.join(&c),
                            handle: Handle::Dropped,
                            gov: w.top().gov,
                        });
                        w.stat = Some(st);
                        w.file = Some((fd, st));
                        return Ok(w);
                    }
                    Some(ReadChild::Link(t)) => {
                        link(&mut w, &mut todo, &t)?;
                        continue;
                    }
                    Some(ReadChild::Again) => {
                        link(&mut w, &mut todo, Path::new("."))?;
                        todo.push_back(c);
                        continue;
                    }
                    None => {}
                }
            }
            match self.step(w.top(), &c, !is_last)? {
                Step::Node(n, st) => {
                    w.chain.push(n);
                    w.stat = st;
                    if w.chain.len() > FD_WINDOW + 1 {
                        let i = w.chain.len() - 1 - FD_WINDOW;
                        if matches!(w.chain[i].handle, Handle::Own(_)) {
                            w.chain[i].handle = Handle::Dropped;
                        }
                    }
                }
                Step::Link(t) => link(&mut w, &mut todo, &t)?,
            }
        }
        if last == Last::Parent {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} does not name an entry of a folder", path.display()),
            ));
        }
        Ok(w)
    }

    /// The final node's status (a virtual folder has none).
    fn stat_of(&self, w: &Walk) -> io::Result<Option<Stat>> {
        if let Some(st) = w.stat {
            return Ok(Some(st));
        }
        match self.fd(w.top()) {
            Some(fd) => rfs::fstat(fd).map(Some).map_err(err),
            None => Ok(None),
        }
    }

    /// Refuse what a sandboxed command could not read: the masked files
    /// and, outside the writable binds, files that are not world-readable.
    fn readable(&self, n: &Node, st: &Stat) -> io::Result<()> {
        if MASKED.iter().any(|m| n.path == Path::new(m)) {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("{} is masked in the sandbox", n.path.display()),
            ));
        }
        // Outside its writable folders the sandbox shows nothing inside a
        // folder others may not enter (it masks them): neither do the tools,
        // whose own rights (root's, or the host user's) would pass it. The
        // folders between the bind and the entry are read-only to every
        // command, so their modes cannot be swapped under this check.
        if self.bind_writable(n.gov) != Some(true)
            && let Some(at) = n.gov.map(|i| &self.mounts[i].at)
        {
            let mut up = n.path.parent();
            while let Some(d) = up.filter(|d| d.starts_with(at) && *d != at.as_path()) {
                if std::fs::metadata(d).is_ok_and(|m| {
                    use std::os::unix::fs::MetadataExt;
                    m.is_dir() && m.mode() & 0o001 == 0
                }) {
                    return Err(io::Error::new(
                        io::ErrorKind::PermissionDenied,
                        format!(
                            "{} is inside {}, a folder others may not enter: outside its writable folders the sandbox shows only what everyone may read",
                            n.path.display(),
                            d.display()
                        ),
                    ));
                }
                up = d.parent();
            }
        }
        if file_type(st) != FileType::Directory
            && self.bind_writable(n.gov) != Some(true)
            && st.st_mode & 0o004 == 0
        {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{} is not world-readable: outside its writable folders the sandbox shows only world-readable files",
                    n.path.display()
                ),
            ));
        }
        Ok(())
    }

    fn is_dir(&self, w: &Walk) -> bool {
        match self.stat_of(w) {
            Ok(Some(st)) => file_type(&st) == FileType::Directory,
            Ok(None) => true,
            Err(_) => false,
        }
    }

    /// The parent folder of `path` and its last name, if the sandbox may
    /// write there.
    /// The folder to write `path`'s last name in, resolved once (every
    /// write goes through the returned handle, so what is checked here is
    /// what is written). Repository metadata and the other entries the
    /// sandbox keeps read-only ([`PROTECTED`]) are refused
    /// wherever the walk meets them (`x/config` where `x` is, or a moment
    /// ago became, a link to `.git`), unless the write was approved as such
    /// (`protected_ok`): a check of the path made earlier cannot be raced.
    fn parent_for_write(&self, path: &Path, protected_ok: bool) -> io::Result<(Walk, OsString)> {
        let mut w = self.resolve(path, Last::Parent)?;
        if !self.writable(w.top()) {
            return Err(denied(path, "may write"));
        }
        let name = w.name.take().expect("Last::Parent names the entry");
        if !protected_ok {
            let top = w.top();
            let base = top.gov.map(|i| self.mounts[i].at.as_path());
            let below = base
                .and_then(|b| top.path.strip_prefix(b).ok())
                .unwrap_or(&top.path);
            let hit = below
                .components()
                .map(|c| c.as_os_str())
                .chain(std::iter::once(name.as_os_str()))
                .find_map(|c| PROTECTED.iter().find(|p| OsStr::new(p) == c));
            if let Some(p) = hit {
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!(
                        "{} leads into {p} ({}), which the sandbox keeps read-only: a later git, direnv or editor action on the host runs it as code; nothing was written",
                        path.display(),
                        top.path.join(&name).display()
                    ),
                ));
            }
            // A git directory under another name (`--separate-git-dir`, a
            // bare repository), judged by what it holds: the folder the
            // write goes through and each folder above it up to the bind,
            // reached from its handle by `..` (the path may have come in one
            // `openat2` call, with no handle for the folders between).
            if let (Some(b), Some(fd)) = (base, self.fd(top)) {
                let mut here = top.path.clone();
                let mut cur: Option<OwnedFd> = None;
                for _ in 0..64 {
                    if !here.starts_with(b) || here == b {
                        break;
                    }
                    let dfd = cur.as_ref().map_or(fd, |o| o.as_fd());
                    if is_git_dir_fd(dfd) {
                        return Err(io::Error::new(
                            io::ErrorKind::PermissionDenied,
                            format!(
                                "{} is inside the git directory {}, which a later git on the host runs as code (config, hooks); nothing was written",
                                path.display(),
                                here.display()
                            ),
                        ));
                    }
                    match rfs::openat(
                        dfd,
                        "..",
                        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
                        Mode::empty(),
                    ) {
                        Ok(up) => cur = Some(up),
                        Err(_) => break,
                    }
                    here.pop();
                }
            }
        }
        Ok((w, name))
    }

    pub fn check_read(&self, path: &Path) -> io::Result<()> {
        match self.resolve(path, Last::Follow) {
            Ok(w) => match self.stat_of(&w)? {
                Some(st) => self.readable(w.top(), &st),
                None => Ok(()),
            },
            Err(e) if e.kind() == io::ErrorKind::NotFound => match path.parent() {
                Some(p) => self.check_read(p),
                None => Ok(()),
            },
            Err(e) => Err(e),
        }
    }

    pub fn check_write(&self, path: &Path) -> io::Result<()> {
        match self.resolve(path, Last::Follow) {
            Ok(w) if self.writable(w.top()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => match path.parent() {
                Some(p) => self.check_write(p),
                None => Err(denied(path, "may write")),
            },
            Ok(_) | Err(_) => Err(denied(path, "may write")),
        }
    }

    pub fn metadata(&self, path: &Path) -> io::Result<Meta> {
        let w = self.resolve(path, Last::Follow)?;
        match self.stat_of(&w)? {
            Some(st) => {
                self.readable(w.top(), &st)?;
                Ok(meta(&st))
            }
            None => Ok(Meta {
                len: 0,
                mtime_ns: 0,
                mode: 0o755,
                is_dir: true,
                is_file: false,
                links: 1,
            }),
        }
    }

    /// The file's bytes (at most `limit`).
    pub fn read(&self, path: &Path, limit: Option<usize>) -> io::Result<Vec<u8>> {
        let (f, size) = self.open_read(path)?;
        let mut buf = Vec::with_capacity(limit.map_or(size, |n| n.min(size)).min(1 << 26));
        match limit {
            Some(n) => f.take(n as u64).read_to_end(&mut buf)?,
            None => (&f).read_to_end(&mut buf)?,
        };
        Ok(buf)
    }

    /// The regular file at `path`, opened for reading beneath its folder's
    /// handle, and its size.
    pub fn open_read(&self, path: &Path) -> io::Result<(std::fs::File, usize)> {
        let mut w = self.resolve(path, Last::Read)?;
        let Some((fd, st)) = w.file.take() else {
            return Err(err(Errno::ISDIR));
        };
        match file_type(&st) {
            FileType::RegularFile => {}
            FileType::Directory => return Err(err(Errno::ISDIR)),
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{} is not a regular file", path.display()),
                ));
            }
        }
        self.readable(w.top(), &st)?;
        let size = usize::try_from(st.st_size.max(0)).unwrap_or(0);
        Ok((std::fs::File::from(fd), size))
    }

    pub fn write_atomic(&self, path: &Path, data: &[u8], mode: Option<u32>) -> io::Result<()> {
        self.write_atomic_as(path, data, mode, false)
    }

    /// [`View::write_atomic`] of a write approved into repository metadata.
    pub fn write_atomic_approved(
        &self,
        path: &Path,
        data: &[u8],
        mode: Option<u32>,
    ) -> io::Result<()> {
        self.write_atomic_as(path, data, mode, true)
    }

    fn write_atomic_as(
        &self,
        path: &Path,
        data: &[u8],
        mode: Option<u32>,
        protected_ok: bool,
    ) -> io::Result<()> {
        let (w, name) = self.parent_for_write(path, protected_ok)?;
        let pfd = self.fd(w.top()).expect("a writable folder has a handle");
        let old = match rfs::statat(pfd, &name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Some(st),
            Err(Errno::NOENT) => None,
            Err(e) => return Err(err(e)),
        };
        let mut mode = mode;
        if let Some(st) = old {
            match file_type(&st) {
                FileType::Directory => return Err(err(Errno::ISDIR)),
                FileType::RegularFile if st.st_nlink > 1 => {
                    return Err(io::Error::new(
                        io::ErrorKind::PermissionDenied,
                        format!(
                            "{} has {} hard links: it may be a file outside the sandbox's writable folders under another name; refused (copy it to a new file first)",
                            path.display(),
                            st.st_nlink
                        ),
                    ));
                }
                FileType::RegularFile => mode = mode.or(Some(st.st_mode & 0o7777)),
                _ => {}
            }
        }
        let tmp = tmp_name(&name);
        let result = (|| {
            let flags =
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let fd = rfs::openat(pfd, &tmp, flags, Mode::from_raw_mode(0o644)).map_err(err)?;
            if let Some(m) = mode {
                rfs::fchmod(&fd, Mode::from_raw_mode(m)).map_err(err)?;
            }
            let mut f = std::fs::File::from(fd);
            f.write_all(data)?;
            f.sync_data()?;
            drop(f);
            rfs::renameat(pfd, &tmp, pfd, &name).map_err(err)
        })();
        if result.is_err() {
            let _ = rfs::unlinkat(pfd, &tmp, AtFlags::empty());
        }
        result
    }

    pub fn create_dir_all(&self, path: &Path) -> io::Result<bool> {
        match self.resolve(path, Last::Follow) {
            Ok(w) if self.is_dir(&w) => return Ok(false),
            Ok(_) => return Err(err(Errno::EXIST)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        if let Some(parent) = path.parent() {
            self.create_dir_all(parent)?;
        }
        let (w, name) = self.parent_for_write(path, false)?;
        let pfd = self.fd(w.top()).expect("a writable folder has a handle");
        match rfs::mkdirat(pfd, &name, Mode::from_raw_mode(0o777)) {
            Ok(()) | Err(Errno::EXIST) => Ok(true),
            Err(e) => Err(err(e)),
        }
    }

    pub fn remove(&self, path: &Path, how: Remove) -> io::Result<()> {
        let (w, name) = self.parent_for_write(path, false)?;
        let pfd = self.fd(w.top()).expect("a writable folder has a handle");
        match how {
            Remove::File => rfs::unlinkat(pfd, &name, AtFlags::empty()).map_err(err),
            Remove::Dir => rfs::unlinkat(pfd, &name, AtFlags::REMOVEDIR).map_err(err),
            Remove::Tree => remove_tree(pfd, &name, 0),
        }
    }

    pub fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let (wf, nf) = self.parent_for_write(from, false)?;
        let (wt, nt) = self.parent_for_write(to, false)?;
        let ff = self.fd(wf.top()).expect("a writable folder has a handle");
        let ft = self.fd(wt.top()).expect("a writable folder has a handle");
        rfs::renameat(ff, &nf, ft, &nt).map_err(err)
    }

    /// The names the sandbox shows right below `p` because something is
    /// mounted at or under them.
    fn mount_children(&self, p: &Path) -> Vec<OsString> {
        let mut out: Vec<OsString> = self
            .mounts
            .iter()
            .enumerate()
            // (a mount a later one hides shows nothing)
            .filter(|(j, m)| self.governing(&m.at) == Some(*j))
            .filter_map(|(_, m)| m.at.strip_prefix(p).ok())
            .filter_map(|rest| rest.components().next())
            .map(|c| c.as_os_str().to_os_string())
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// Open folder node `n` for listing, if the sandbox may list it.
    fn list(&self, n: &Node, st: Option<&Stat>) -> io::Result<Option<Dir>> {
        let Some(fd) = self.fd(n) else {
            return Ok(None);
        };
        if self.bind_writable(n.gov) != Some(true) {
            let st = match st {
                Some(s) => *s,
                None => rfs::fstat(fd).map_err(err)?,
            };
            if st.st_mode & 0o004 == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!(
                        "{} is not world-readable: outside its writable folders the sandbox lists only world-readable folders",
                        n.path.display()
                    ),
                ));
            }
        }
        let d = rfs::openat(
            fd,
            ".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(err)?;
        Dir::new(d).map(Some).map_err(err)
    }

    pub fn read_dir(&self, path: &Path) -> io::Result<Vec<Entry>> {
        let w = self.resolve(path, Last::Follow)?;
        let st = self.stat_of(&w)?;
        if st.is_some_and(|s| file_type(&s) != FileType::Directory) {
            return Err(err(Errno::NOTDIR));
        }
        let n = w.top();
        let mut out: BTreeMap<OsString, bool> = BTreeMap::new();
        let is_dir_at = |p: &Path| {
            self.resolve(p, Last::Follow)
                .is_ok_and(|cw| self.is_dir(&cw))
        };
        if let Some(dir) = self.list(n, st.as_ref())? {
            let dfd = dir.fd().map_err(err)?.try_clone_to_owned()?;
            for e in dir {
                let e = e.map_err(err)?;
                let name = OsStr::from_bytes(e.file_name().to_bytes());
                if name == "." || name == ".." {
                    continue;
                }
                let child = n.path.join(name);
                let is_dir = if self.mount_related(&child) {
                    is_dir_at(&child)
                } else {
                    match e.file_type() {
                        FileType::Directory => true,
                        FileType::Symlink => is_dir_at(&child),
                        FileType::Unknown => rfs::statat(&dfd, name, AtFlags::SYMLINK_NOFOLLOW)
                            .is_ok_and(|s| file_type(&s) == FileType::Directory),
                        _ => false,
                    }
                };
                out.insert(name.to_os_string(), is_dir);
            }
        }
        for name in self.mount_children(&n.path) {
            if let std::collections::btree_map::Entry::Vacant(slot) = out.entry(name) {
                let is_dir = is_dir_at(&n.path.join(slot.key()));
                slot.insert(is_dir);
            }
        }
        Ok(out
            .into_iter()
            .map(|(name, is_dir)| Entry {
                name: name.to_string_lossy().into_owned(),
                is_dir,
            })
            .collect())
    }

    pub fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        Ok(self.resolve(path, Last::Follow)?.top().path.clone())
    }

    /// The regular files under `root` as the sandbox sees them (hidden
    /// names and symlinks skipped, like the local walk), every file opened
    /// beneath its folder's handle.
    pub fn walk(&self, root: &Path, contents: bool, max_file: u64) -> io::Result<Vec<WalkedFile>> {
        let w = self.resolve(root, Last::Follow)?;
        let mut out = Vec::new();
        let mut total = 0u64;
        if self.is_dir(&w) {
            let st = self.stat_of(&w)?;
            // the rules of the folders above the root, outermost first
            let in_git = root
                .ancestors()
                .any(|a| self.metadata(&a.join(".git")).is_ok());
            let mut stack: Vec<Rules> = Vec::new();
            for a in root
                .ancestors()
                .skip(1)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
            {
                let rule = |name: &str| self.read(&a.join(name), Some(RULES_MAX)).ok();
                let exclude = if self.metadata(&a.join(".git")).is_ok() {
                    rule(".git/info/exclude")
                } else {
                    None
                };
                let r = Rules::new(
                    a,
                    &[
                        rule(".ignore"),
                        in_git.then(|| rule(".gitignore")).flatten(),
                        exclude,
                    ],
                );
                if !r.is_empty() {
                    stack.push(r);
                }
            }
            let mut job = WalkJob {
                contents,
                max_file,
                total: &mut total,
                out: &mut out,
                in_git,
                stack,
            };
            self.walk_dir(w.top(), st, root, 0, &mut job)?;
        } else {
            let mut r = self.resolve(root, Last::Read)?;
            if let Some((fd, st)) = r.file.take() {
                let mut job = WalkJob {
                    contents,
                    max_file,
                    total: &mut total,
                    out: &mut out,
                    in_git: false,
                    stack: Vec::new(),
                };
                self.walk_file(r.top(), fd, &st, root.to_path_buf(), &mut job)?;
            }
        }
        Ok(out)
    }

    fn walk_file(
        &self,
        n: &Node,
        fd: OwnedFd,
        st: &Stat,
        shown: PathBuf,
        job: &mut WalkJob<'_>,
    ) -> io::Result<()> {
        if file_type(st) != FileType::RegularFile || self.readable(n, st).is_err() {
            return Ok(());
        }
        let m = meta(st);
        let data = if job.contents {
            if m.len > job.max_file {
                return Ok(());
            }
            let mut buf = Vec::with_capacity(m.len as usize);
            std::fs::File::from(fd)
                .take(job.max_file)
                .read_to_end(&mut buf)?;
            *job.total += buf.len() as u64;
            if *job.total > super::types::WALK_MAX_TOTAL {
                return Err(io::Error::other(format!(
                    "more than {} bytes to search: narrow the path or use file_glob",
                    super::types::WALK_MAX_TOTAL
                )));
            }
            Some(buf)
        } else {
            None
        };
        job.out.push(WalkedFile {
            path: shown,
            mtime_ns: m.mtime_ns,
            data,
        });
        Ok(())
    }

    fn walk_dir(
        &self,
        n: &Node,
        st: Option<Stat>,
        shown: &Path,
        depth: usize,
        job: &mut WalkJob<'_>,
    ) -> io::Result<()> {
        if depth > MAX_DEPTH {
            return Ok(());
        }
        let dir = match self.list(n, st.as_ref()) {
            Ok(d) => d,
            Err(_) if depth > 0 => return Ok(()),
            Err(e) => return Err(e),
        };
        let mut pushed = false;
        if let Some(dir) = &dir
            && let Ok(dfd) = dir.fd()
        {
            let r = Rules::new(
                shown,
                &[
                    read_rule(dfd, ".ignore"),
                    job.in_git.then(|| read_rule(dfd, ".gitignore")).flatten(),
                    // (a path of three names: through the walk, not openat)
                    job.in_git
                        .then(|| {
                            self.read(&n.path.join(".git/info/exclude"), Some(RULES_MAX))
                                .ok()
                        })
                        .flatten(),
                ],
            );
            if !r.is_empty() {
                job.stack.push(r);
                pushed = true;
            }
        }
        let result = self.walk_entries(n, dir, shown, depth, job);
        if pushed {
            job.stack.pop();
        }
        result
    }

    fn walk_entries(
        &self,
        n: &Node,
        dir: Option<Dir>,
        shown: &Path,
        depth: usize,
        job: &mut WalkJob<'_>,
    ) -> io::Result<()> {
        let hidden = |name: &OsStr| name.as_bytes().first() == Some(&b'.');
        if let Some(dir) = dir {
            let dfd = dir.fd().map_err(err)?.try_clone_to_owned()?;
            for e in dir {
                let Ok(e) = e else { continue };
                let name = OsStr::from_bytes(e.file_name().to_bytes()).to_os_string();
                if hidden(&name) || e.file_type() == FileType::Symlink {
                    continue;
                }
                let child = n.path.join(&name);
                if self.mount_related(&child) {
                    continue; // below, through the mount table
                }
                let shown_child = shown.join(&name);
                let known_dir = match e.file_type() {
                    FileType::Directory => Some(true),
                    FileType::RegularFile => Some(false),
                    _ => None,
                };
                if let Some(d) = known_dir
                    && rules::ignored(&job.stack, &shown_child, d)
                {
                    continue;
                }
                let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
                let Ok(fd) = rfs::openat(&dfd, &name, flags, Mode::empty()) else {
                    continue;
                };
                let Ok(cst) = rfs::fstat(&fd) else { continue };
                let is_dir = file_type(&cst) == FileType::Directory;
                if known_dir.is_none() && rules::ignored(&job.stack, &shown_child, is_dir) {
                    continue;
                }
                let node = Node {
                    path: child,
                    handle: Handle::Own(fd),
                    gov: n.gov,
                };
                if is_dir {
                    self.walk_dir(&node, Some(cst), &shown_child, depth + 1, job)?;
                } else if let Handle::Own(fd) = node.handle {
                    let node = Node {
                        handle: Handle::Dropped,
                        ..node
                    };
                    self.walk_file(&node, fd, &cst, shown_child, job)?;
                }
            }
        }
        for name in self.mount_children(&n.path) {
            if hidden(&name) {
                continue;
            }
            let child = n.path.join(&name);
            let Ok(cw) = self.resolve(&child, Last::Follow) else {
                continue;
            };
            // a `--symlink` mount or a link is not followed
            if cw.top().path != child {
                continue;
            }
            let is_dir = self.is_dir(&cw);
            if rules::ignored(&job.stack, &shown.join(&name), is_dir) {
                continue;
            }
            if is_dir {
                let cst = self.stat_of(&cw).ok().flatten();
                self.walk_dir(cw.top(), cst, &shown.join(&name), depth + 1, job)?;
            } else if let Ok(mut r) = self.resolve(&child, Last::Read)
                && let Some((fd, cst)) = r.file.take()
            {
                self.walk_file(r.top(), fd, &cst, shown.join(&name), job)?;
            }
        }
        Ok(())
    }
}

struct WalkJob<'a> {
    contents: bool,
    max_file: u64,
    total: &'a mut u64,
    out: &'a mut Vec<WalkedFile>,
    /// Inside a git repository (`.gitignore` files apply).
    in_git: bool,
    /// The ignore rules of the folders above the one being walked.
    stack: Vec<Rules>,
}

/// Largest ignore file read.
const RULES_MAX: usize = 1 << 20;

/// Read rule file `name` of folder `dfd` beneath it (not following a symlink).
fn read_rule(dfd: BorrowedFd<'_>, name: &str) -> Option<Vec<u8>> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = rfs::openat(dfd, name, flags, Mode::empty()).ok()?;
    let st = rfs::fstat(&fd).ok()?;
    if file_type(&st) != FileType::RegularFile {
        return None;
    }
    let mut buf = Vec::new();
    std::fs::File::from(fd)
        .take(RULES_MAX as u64)
        .read_to_end(&mut buf)
        .ok()?;
    Some(buf)
}

/// What [`View::remove`] removes.
#[derive(Clone, Copy)]
pub enum Remove {
    File,
    /// An empty folder.
    Dir,
    /// A folder and everything below it (symlinks removed, not followed).
    Tree,
}

enum Child {
    Node(OwnedFd, Option<Stat>),
    Link(PathBuf),
}

/// The final entry as [`View::open_final`] found it.
enum ReadChild {
    File(OwnedFd, Stat),
    Link(PathBuf),
    /// The entry changed between two calls: resolve it again.
    Again,
}

/// Open entry `name` of folder `pfd` as an `O_PATH` handle, never
/// following it: a symlink comes back as its target. (Entering a folder
/// needs no more than the kernel checks for the runtime's own uid, which is
/// the sandbox's: listing one outside the writable binds is checked in
/// [`View::list`], reading a file in [`View::readable`].)
fn open_child(pfd: BorrowedFd<'_>, name: &OsStr, dir_expected: bool) -> io::Result<Child> {
    let base = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    if dir_expected {
        match rfs::openat(pfd, name, base | OFlags::DIRECTORY, Mode::empty()) {
            Ok(fd) => return Ok(Child::Node(fd, None)),
            Err(Errno::NOTDIR) | Err(Errno::LOOP) => {}
            Err(e) => return Err(err(e)),
        }
    }
    let fd = rfs::openat(pfd, name, base, Mode::empty()).map_err(err)?;
    let st = rfs::fstat(&fd).map_err(err)?;
    match file_type(&st) {
        FileType::Symlink => {
            let t = rfs::readlinkat(&fd, "", Vec::new()).map_err(err)?;
            Ok(Child::Link(PathBuf::from(OsString::from_vec(
                t.into_bytes(),
            ))))
        }
        FileType::Directory => Ok(Child::Node(fd, Some(st))),
        _ if dir_expected => Err(err(Errno::NOTDIR)),
        _ => Ok(Child::Node(fd, Some(st))),
    }
}

/// Remove entry `name` of folder `dir` and, for a folder, all below it,
/// each step beneath a handle (symlinks are removed, never followed).
fn remove_tree(dir: BorrowedFd<'_>, name: &OsStr, depth: usize) -> io::Result<()> {
    match rfs::unlinkat(dir, name, AtFlags::empty()) {
        Ok(()) => return Ok(()),
        Err(Errno::ISDIR) | Err(Errno::PERM) => {}
        Err(e) => return Err(err(e)),
    }
    if depth > 4 * MAX_DEPTH {
        return Err(io::Error::other("folder tree too deep to remove"));
    }
    let fd = rfs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(err)?;
    let mut names = Vec::new();
    for e in Dir::read_from(&fd).map_err(err)? {
        let e = e.map_err(err)?;
        let n = OsStr::from_bytes(e.file_name().to_bytes());
        if n != "." && n != ".." {
            names.push(n.to_os_string());
        }
    }
    for n in names {
        remove_tree(fd.as_fd(), &n, depth + 1)?;
    }
    rfs::unlinkat(dir, name, AtFlags::REMOVEDIR).map_err(err)
}
