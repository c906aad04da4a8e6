//! Which host entries the sandbox hides: everything under the read-only
//! system binds that is not world-readable. A sandbox run by root would
//! otherwise read every root-only file there (`/etc/ssh/ssh_host_*_key`,
//! `/etc/shadow`, private TLS keys) because root owns them; one run by a
//! user already cannot, so masking them changes nothing for it. Hiding by
//! mode, not by a list of names, covers files no list anticipated.
//!
//! Only entries the sandbox could read are masked: each mask is a mount
//! that costs bubblewrap about 0.1 ms on every command. The sandbox has
//! this process's uid and groups but, on a root host, no capabilities: so a
//! user's host asks `access(2)`, a root host the permission bits (and masks
//! whatever carries an ACL). A user's host usually needs no mask at all, a
//! root host a dozen.
//!
//! The walk runs once per sandbox (a few milliseconds for `/etc`); an entry
//! made root-only later is not masked until the next sandbox is built.
//! Symbolic links are not followed: their targets are judged where they
//! live (and a target outside the binds is not visible at all).

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// A host entry to hide and how.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mask {
    /// A non-directory: `/dev/null` is bound over it (reads give nothing).
    File(PathBuf),
    /// A directory not world-searchable or not world-listable: an empty,
    /// mode-0 tmpfs is mounted over it (its contents are not walked).
    Dir(PathBuf),
}

impl Mask {
    pub fn path(&self) -> &Path {
        match self {
            Mask::File(p) | Mask::Dir(p) => p,
        }
    }
}

/// Entries under `dirs` (walked without following symlinks, not crossing
/// into `skip`) that "others" may not read but this process may; a
/// directory counts as readable only when others may both list and enter it.
pub fn root_only_entries(dirs: &[PathBuf], skip: &[PathBuf]) -> Vec<Mask> {
    let who = Reader::current();
    let mut out = Vec::new();
    for d in dirs {
        walk(&who, d, skip, &mut out, 0);
    }
    out
}

/// Who reads inside the sandbox.
struct Reader {
    /// Root: no capabilities inside, so only the permission bits count.
    root: bool,
    uid: u32,
    gids: Vec<u32>,
}

impl Reader {
    fn current() -> Reader {
        use rustix::process::{getegid, geteuid, getgroups};
        let mut gids: Vec<u32> = getgroups()
            .unwrap_or_default()
            .into_iter()
            .map(|g| g.as_raw())
            .collect();
        gids.push(getegid().as_raw());
        Reader {
            root: geteuid().is_root(),
            uid: geteuid().as_raw(),
            gids,
        }
    }

    /// Whether the sandbox may read `p` (and enter it, for a directory).
    fn may_read(&self, p: &Path, md: &std::fs::Metadata) -> bool {
        let need = if md.is_dir() { 0o5 } else { 0o4 };
        if !self.root {
            use rustix::fs::{Access, access};
            let how = if md.is_dir() {
                Access::READ_OK | Access::EXEC_OK
            } else {
                Access::READ_OK
            };
            return access(p, how).is_ok();
        }
        let mode = md.mode();
        let bits = if md.uid() == self.uid {
            mode >> 6
        } else if self.gids.contains(&md.gid()) {
            mode >> 3
        } else {
            mode
        };
        bits & need == need || has_acl(p)
    }
}

/// Whether `p` carries a POSIX access ACL (which may grant more than the
/// permission bits say).
fn has_acl(p: &Path) -> bool {
    rustix::fs::lgetxattr_query(p, "system.posix_acl_access").is_ok()
}

fn walk(who: &Reader, dir: &Path, skip: &[PathBuf], out: &mut Vec<Mask>, depth: usize) {
    // A bound on depth keeps a pathological tree from recursing forever.
    if depth > 64 || skip.iter().any(|s| dir.starts_with(s)) {
        return;
    }
    let Ok(md) = std::fs::symlink_metadata(dir) else {
        return;
    };
    if !md.is_dir() {
        return;
    }
    if md.permissions().mode() & 0o005 != 0o005 {
        if who.may_read(dir, &md) {
            out.push(Mask::Dir(dir.to_path_buf()));
        }
        return;
    }
    let Ok(rd) = std::fs::read_dir(dir) else {
        // Unreadable to us (a non-root host): it is to the sandbox too.
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if skip.iter().any(|s| p.starts_with(s)) {
            continue;
        }
        let Ok(m) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if m.file_type().is_symlink() {
            continue;
        }
        if m.is_dir() {
            walk(who, &p, skip, out, depth + 1);
        } else if m.mode() & 0o004 == 0 && who.may_read(&p, &m) {
            out.push(Mask::File(p));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn finds_root_only_files_and_dirs_but_not_readable_ones_or_skipped() {
        let t = std::env::temp_dir().join(format!("hermes-masks-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&t);
        std::fs::create_dir_all(t.join("pub/sub")).unwrap();
        std::fs::create_dir_all(t.join("priv/inner")).unwrap();
        std::fs::create_dir_all(t.join("work")).unwrap();
        std::fs::write(t.join("pub/sub/key"), "k").unwrap();
        std::fs::write(t.join("pub/open"), "o").unwrap();
        std::fs::write(t.join("work/secret"), "w").unwrap();
        let mode = |p: &str, m: u32| {
            std::fs::set_permissions(t.join(p), std::fs::Permissions::from_mode(m)).unwrap()
        };
        mode("pub/sub/key", 0o600);
        mode("pub/open", 0o644);
        mode("work/secret", 0o600);
        mode("priv", 0o700);
        let got = root_only_entries(std::slice::from_ref(&t), &[t.join("work")]);
        mode("priv", 0o755);
        std::fs::remove_dir_all(&t).unwrap();
        assert_eq!(
            got,
            vec![Mask::Dir(t.join("priv")), Mask::File(t.join("pub/sub/key"))]
        );
    }
}
