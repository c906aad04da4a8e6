//! File access where the commands run, for the built-in file, memory and
//! skills tools. It lives beside [`Environment`](crate::Environment) so each
//! backend serves files the way it serves processes: the local backend
//! reads and writes this machine's files directly; the sandbox backend the
//! same files but only what bubblewrap would let a command see (system
//! folders read-only, the working root and writable binds read-write);
//! remote backends (ssh, docker) implement [`FileSystem`] over their
//! connection and answer `false` to [`FileSystem::host_paths`], which turns
//! off the in-process fast paths (directory walks for search).
//!
//! The sandbox backend's access goes through [`beneath`]: every path is
//! resolved and opened beneath open directory handles, never checked by
//! name and then opened again (a sandboxed process could swap a symlink in
//! between). Kept in its own module, additive to the rest of the crate.

use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

pub mod beneath;
pub mod types;
pub use types::{Entry, Meta, WalkedFile};
mod rules;

/// Files as the task's environment sees them.
pub trait FileSystem: Send + Sync {
    fn name(&self) -> &'static str;
    /// Whether paths are this machine's paths, so a tool may walk and read
    /// them with its own code (after [`FileSystem::check_read`]).
    fn host_paths(&self) -> bool;
    /// Fail unless the environment can see `path`.
    fn check_read(&self, path: &Path) -> io::Result<()>;
    /// Fail unless the environment may write `path`.
    fn check_write(&self, path: &Path) -> io::Result<()>;
    fn metadata(&self, path: &Path) -> io::Result<Meta>;
    fn read(&self, path: &Path) -> io::Result<Vec<u8>>;
    /// At most `n` bytes from the start.
    fn read_head(&self, path: &Path, n: usize) -> io::Result<Vec<u8>>;
    /// The file as a stream, for reading large files in bounded memory.
    /// The default reads it whole; [`HostFs`] opens it (the sandbox
    /// backend beneath its folder's handle, like [`FileSystem::read`]).
    fn open_read(&self, path: &Path) -> io::Result<Box<dyn io::Read + Send>> {
        Ok(Box::new(io::Cursor::new(self.read(path)?)))
    }
    /// Replace `path` atomically: a temporary file in the same folder, then
    /// rename. `mode` sets the permission bits (else 0o644 less the umask
    /// for a new file, the old file's bits for an existing one).
    fn write_atomic(&self, path: &Path, data: &[u8], mode: Option<u32>) -> io::Result<()>;
    /// [`FileSystem::write_atomic`] of a write a person approved into
    /// repository metadata (`.git`, `.envrc`, ...), which the sandbox's
    /// view otherwise refuses wherever the path leads (default: the same).
    fn write_atomic_approved(&self, path: &Path, data: &[u8], mode: Option<u32>) -> io::Result<()> {
        self.write_atomic(path, data, mode)
    }
    /// `mkdir -p`; true when something was created.
    fn create_dir_all(&self, path: &Path) -> io::Result<bool>;
    fn remove_file(&self, path: &Path) -> io::Result<()>;
    /// Remove an empty directory.
    fn remove_dir(&self, path: &Path) -> io::Result<()>;
    /// Remove a directory and everything below it.
    fn remove_dir_all(&self, path: &Path) -> io::Result<()>;
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    fn read_dir(&self, path: &Path) -> io::Result<Vec<Entry>>;
    /// The path with symlinks and `..` resolved (the path must exist).
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf>;
    /// For search where [`FileSystem::host_paths`] is false: the regular
    /// files under `root` (hidden names skipped, like the local walk), with
    /// their contents when `contents` is set (files over `max_file` bytes
    /// left out), fetched in one go. Unsupported unless a backend says so.
    fn walk(&self, _root: &Path, _contents: bool, _max_file: u64) -> io::Result<Vec<WalkedFile>> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!(
                "searching is not available on the '{}' backend",
                self.name()
            ),
        ))
    }
}

/// Files that cannot be reached: every operation fails with `why`. What a
/// task gets when its backend has no file system for it, so that the file
/// tools fail closed instead of touching this machine's files.
pub struct NoFiles {
    why: String,
}

impl NoFiles {
    pub fn new(why: impl Into<String>) -> NoFiles {
        NoFiles { why: why.into() }
    }
    fn err<T>(&self) -> io::Result<T> {
        Err(io::Error::new(
            io::ErrorKind::NotConnected,
            self.why.clone(),
        ))
    }
}

impl FileSystem for NoFiles {
    fn name(&self) -> &'static str {
        "unavailable"
    }
    fn host_paths(&self) -> bool {
        false
    }
    fn check_read(&self, _: &Path) -> io::Result<()> {
        self.err()
    }
    fn check_write(&self, _: &Path) -> io::Result<()> {
        self.err()
    }
    fn metadata(&self, _: &Path) -> io::Result<Meta> {
        self.err()
    }
    fn read(&self, _: &Path) -> io::Result<Vec<u8>> {
        self.err()
    }
    fn read_head(&self, _: &Path, _: usize) -> io::Result<Vec<u8>> {
        self.err()
    }
    fn write_atomic(&self, _: &Path, _: &[u8], _: Option<u32>) -> io::Result<()> {
        self.err()
    }
    fn create_dir_all(&self, _: &Path) -> io::Result<bool> {
        self.err()
    }
    fn remove_file(&self, _: &Path) -> io::Result<()> {
        self.err()
    }
    fn remove_dir(&self, _: &Path) -> io::Result<()> {
        self.err()
    }
    fn remove_dir_all(&self, _: &Path) -> io::Result<()> {
        self.err()
    }
    fn rename(&self, _: &Path, _: &Path) -> io::Result<()> {
        self.err()
    }
    fn read_dir(&self, _: &Path) -> io::Result<Vec<Entry>> {
        self.err()
    }
    fn canonicalize(&self, _: &Path) -> io::Result<PathBuf> {
        self.err()
    }
    fn walk(&self, _: &Path, _: bool, _: u64) -> io::Result<Vec<WalkedFile>> {
        self.err()
    }
}

/// This machine's files: all of them (the local backend), or what the
/// sandbox backend's commands see, resolved beneath directory handles
/// ([`beneath`]).
#[derive(Clone, Debug, Default)]
pub struct HostFs {
    /// `None`: everything is visible and writable (as far as the OS allows).
    view: Option<Arc<Sandboxed>>,
}

/// The sandbox's view and what it was built from.
#[derive(Debug)]
struct Sandboxed {
    cfg: crate::spawn::SandboxConfig,
    cur: RwLock<Arc<beneath::View>>,
}

impl HostFs {
    /// The local backend: no restriction beyond the OS's.
    pub fn local() -> HostFs {
        HostFs::default()
    }

    /// What the sandbox backend's commands see (see `sandbox.rs`): the
    /// system folders and read-only binds for reading, the working root and
    /// writable binds for both, private `/tmp`, `/run` and home left empty.
    /// The binds are opened now: their handles are what every later
    /// access is resolved beneath.
    pub fn sandboxed(cfg: &crate::spawn::SandboxConfig) -> HostFs {
        HostFs {
            view: Some(Arc::new(Sandboxed {
                cfg: cfg.clone(),
                cur: RwLock::new(Arc::new(beneath::View::new(cfg))),
            })),
        }
    }

    /// The sandbox's view (`None`: the local backend), built again while
    /// the working root could not be opened.
    fn sb(&self) -> Option<Arc<beneath::View>> {
        let s = self.view.as_ref()?;
        let v = s.cur.read().unwrap_or_else(|e| e.into_inner()).clone();
        if v.root_open {
            return Some(v);
        }
        let fresh = Arc::new(beneath::View::new(&s.cfg));
        if fresh.root_open {
            *s.cur.write().unwrap_or_else(|e| e.into_inner()) = fresh.clone();
        }
        Some(fresh)
    }
}

/// `path` with its longest existing ancestor canonicalized and the rest appended.
pub fn resolve_existing_prefix(path: &Path) -> PathBuf {
    let mut base = path.to_path_buf();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    loop {
        if let Ok(c) = std::fs::canonicalize(&base) {
            let mut out = c;
            for r in rest.iter().rev() {
                if r == ".." {
                    out.pop();
                } else if r != "." {
                    out.push(r);
                }
            }
            return out;
        }
        match (base.parent(), base.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                base = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

fn tmp_name(target: &Path) -> PathBuf {
    let dir = target.parent().unwrap_or(Path::new("."));
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let n = TMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    dir.join(format!(".{name}.ht-tmp.{}.{n}.{t:x}", std::process::id()))
}

impl FileSystem for HostFs {
    fn name(&self) -> &'static str {
        if self.view.is_some() {
            "sandbox"
        } else {
            "local"
        }
    }
    /// The sandbox backend answers `false`: the tools' own walks and opens
    /// by name could be raced out of the sandbox; they go through
    /// [`FileSystem::read`] and [`FileSystem::walk`] instead.
    fn host_paths(&self) -> bool {
        self.view.is_none()
    }
    fn check_read(&self, path: &Path) -> io::Result<()> {
        match self.sb() {
            Some(v) => v.check_read(path),
            None => Ok(()),
        }
    }
    fn check_write(&self, path: &Path) -> io::Result<()> {
        match self.sb() {
            Some(v) => v.check_write(path),
            None => Ok(()),
        }
    }
    fn metadata(&self, path: &Path) -> io::Result<Meta> {
        if let Some(v) = self.sb() {
            return v.metadata(path);
        }
        let m = std::fs::metadata(path)?;
        Ok(Meta {
            len: m.len(),
            mtime_ns: i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
            mode: m.permissions().mode() & 0o7777,
            is_dir: m.is_dir(),
            is_file: m.is_file(),
            links: m.nlink(),
        })
    }
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        match self.sb() {
            Some(v) => v.read(path, None),
            None => std::fs::read(path),
        }
    }
    fn read_head(&self, path: &Path, n: usize) -> io::Result<Vec<u8>> {
        use std::io::Read;
        if let Some(v) = self.sb() {
            return v.read(path, Some(n));
        }
        let f = std::fs::File::open(path)?;
        let mut buf = Vec::with_capacity(n.min(1 << 20));
        f.take(n as u64).read_to_end(&mut buf)?;
        Ok(buf)
    }
    fn open_read(&self, path: &Path) -> io::Result<Box<dyn io::Read + Send>> {
        match self.sb() {
            Some(v) => Ok(Box::new(v.open_read(path)?.0)),
            None => Ok(Box::new(std::fs::File::open(path)?)),
        }
    }
    fn write_atomic_approved(&self, path: &Path, data: &[u8], mode: Option<u32>) -> io::Result<()> {
        match self.sb() {
            Some(v) => v.write_atomic_approved(path, data, mode),
            None => self.write_atomic(path, data, mode),
        }
    }
    fn write_atomic(&self, path: &Path, data: &[u8], mode: Option<u32>) -> io::Result<()> {
        if let Some(v) = self.sb() {
            return v.write_atomic(path, data, mode);
        }
        let mode = match mode {
            Some(m) => Some(m),
            None => std::fs::metadata(path)
                .ok()
                .map(|m| m.permissions().mode() & 0o7777),
        };
        let tmp = tmp_name(path);
        let result = (|| {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o644)
                .open(&tmp)?;
            f.write_all(data)?;
            if let Some(m) = mode {
                f.set_permissions(std::fs::Permissions::from_mode(m))?;
            }
            f.sync_data()?;
            drop(f);
            std::fs::rename(&tmp, path)
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result
    }
    fn create_dir_all(&self, path: &Path) -> io::Result<bool> {
        if let Some(v) = self.sb() {
            return v.create_dir_all(path);
        }
        if path.is_dir() {
            return Ok(false);
        }
        std::fs::create_dir_all(path)?;
        Ok(true)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        match self.sb() {
            Some(v) => v.remove(path, beneath::Remove::File),
            None => std::fs::remove_file(path),
        }
    }
    fn remove_dir(&self, path: &Path) -> io::Result<()> {
        match self.sb() {
            Some(v) => v.remove(path, beneath::Remove::Dir),
            None => std::fs::remove_dir(path),
        }
    }
    fn remove_dir_all(&self, path: &Path) -> io::Result<()> {
        match self.sb() {
            Some(v) => v.remove(path, beneath::Remove::Tree),
            None => std::fs::remove_dir_all(path),
        }
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        match self.sb() {
            Some(v) => v.rename(from, to),
            None => std::fs::rename(from, to),
        }
    }
    fn read_dir(&self, path: &Path) -> io::Result<Vec<Entry>> {
        if let Some(v) = self.sb() {
            return v.read_dir(path);
        }
        let mut out = Vec::new();
        for e in std::fs::read_dir(path)? {
            let e = e?;
            let is_dir = e.file_type().map(|t| t.is_dir()).unwrap_or(false)
                || (e.file_type().map(|t| t.is_symlink()).unwrap_or(false) && e.path().is_dir());
            out.push(Entry {
                name: e.file_name().to_string_lossy().into_owned(),
                is_dir,
            });
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        match self.sb() {
            Some(v) => v.canonicalize(path),
            None => std::fs::canonicalize(path),
        }
    }
    fn walk(&self, root: &Path, contents: bool, max_file: u64) -> io::Result<Vec<WalkedFile>> {
        match self.sb() {
            Some(v) => v.walk(root, contents, max_file),
            None => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "the local backend's search walks the files itself",
            )),
        }
    }
}
