//! What the file tools learn about files, shared by every file system
//! (the trait in `mod.rs`, the handle-based sandbox view in `beneath.rs`):
//! plain data in a leaf module, so neither imports the other in a circle.

use std::path::PathBuf;

/// What the tools need to know about a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Meta {
    pub len: u64,
    /// Modification time in nanoseconds since the epoch.
    pub mtime_ns: i128,
    /// Permission bits (`0o644`).
    pub mode: u32,
    pub is_dir: bool,
    pub is_file: bool,
    /// Hard links to the file (1 where the backend cannot tell): a file with
    /// more may be another file under a second name, outside the workspace.
    pub links: u64,
}

/// One directory entry.
#[derive(Clone, Debug)]
pub struct Entry {
    pub name: String,
    pub is_dir: bool,
}

/// A file found by [`FileSystem::walk`].
#[derive(Clone, Debug)]
pub struct WalkedFile {
    pub path: PathBuf,
    pub mtime_ns: i128,
    /// The contents, when asked for.
    pub data: Option<Vec<u8>>,
}

/// Most bytes one search fetches over the connection.
pub const WALK_MAX_TOTAL: u64 = 256 * 1024 * 1024;
