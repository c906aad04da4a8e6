//! A skill's files, reached beneath the skill folder's handle without ever
//! following a symlink: `skill_manage` writes, patches and removes files
//! of a skill, and a symlink inside the skill (a linked `references/`
//! folder, a linked file) must not carry a write out of it. Each folder
//! below the skill is opened with `openat(.., O_NOFOLLOW | O_DIRECTORY)`
//! from its parent's handle, the final file is opened, created (temp file
//! and `renameat`) or unlinked beneath its folder's handle, so a link
//! swapped in after a check cannot redirect it. A symlink anywhere below
//! the skill folder is refused (`ELOOP`), never followed or replaced (the
//! folder itself may be a link, as discovery follows links).

use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path};

/// Whether `e` is the refusal of a path that is or goes through a symlink.
pub fn is_link_refusal(e: &io::Error) -> bool {
    e.raw_os_error() == Some(Errno::LOOP.raw_os_error())
}

fn link_error() -> io::Error {
    Errno::LOOP.into()
}

const DIR: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// The type of `name` in `dir`, not following a link (`None`: absent).
fn kind(dir: impl AsFd, name: &std::ffi::OsStr) -> io::Result<Option<(FileType, u32)>> {
    match rfs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => Ok(Some((
            FileType::from_raw_mode(st.st_mode as _),
            st.st_mode & 0o7777,
        ))),
        Err(Errno::NOENT) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// The components of a relative path (no `..`, no absolute part).
fn split(rel: &Path) -> io::Result<(Vec<&std::ffi::OsStr>, &std::ffi::OsStr)> {
    let mut parts = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(n) => parts.push(n),
            Component::CurDir => {}
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "paths inside a skill are relative, without '..'",
                ));
            }
        }
    }
    let name = parts
        .pop()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "empty path"))?;
    Ok((parts, name))
}

/// Open the folders `dirs` one by one beneath `root`, never following a
/// link; missing ones are created when `create`.
fn open_dirs(root: &Path, dirs: &[&std::ffi::OsStr], create: bool) -> io::Result<OwnedFd> {
    let mut cur = rfs::open(
        root,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    for name in dirs {
        let next = match rfs::openat(&cur, *name, DIR, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) if create => {
                match rfs::mkdirat(&cur, *name, Mode::from_raw_mode(0o755)) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(e) => return Err(e.into()),
                }
                rfs::openat(&cur, *name, DIR, Mode::empty()).map_err(|e| {
                    if e == Errno::LOOP || e == Errno::NOTDIR {
                        link_or(&cur, name, e)
                    } else {
                        e.into()
                    }
                })?
            }
            Err(e) => return Err(link_or(&cur, name, e)),
        };
        cur = next;
    }
    Ok(cur)
}

/// `ELOOP` when `name` in `dir` is a link, else `e`.
fn link_or(dir: &OwnedFd, name: &std::ffi::OsStr, e: Errno) -> io::Error {
    match kind(dir, name) {
        Ok(Some((FileType::Symlink, _))) => link_error(),
        _ => e.into(),
    }
}

/// Read `rel` beneath `root` (at most `limit` bytes).
pub fn read(root: &Path, rel: &Path, limit: usize) -> io::Result<Vec<u8>> {
    let (dirs, name) = split(rel)?;
    let dir = open_dirs(root, &dirs, false)?;
    let fd = rfs::openat(
        &dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| link_or(&dir, name, e))?;
    let f = std::fs::File::from(fd);
    if !f.metadata()?.is_file() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a file"));
    }
    let mut out = Vec::new();
    f.take(limit as u64).read_to_end(&mut out)?;
    Ok(out)
}

/// Whether `rel` beneath `root` is a regular file (a link is refused).
pub fn is_file(root: &Path, rel: &Path) -> io::Result<bool> {
    let (dirs, name) = split(rel)?;
    let dir = open_dirs(root, &dirs, false)?;
    match kind(&dir, name)? {
        Some((FileType::Symlink, _)) => Err(link_error()),
        Some((FileType::RegularFile, _)) => Ok(true),
        _ => Ok(false),
    }
}

/// Write `data` to `rel` beneath `root` atomically (a temp file in the
/// same folder, then `renameat`); missing folders are created. The file's
/// mode is kept when it exists (0644 for a new one).
pub fn write(root: &Path, rel: &Path, data: &[u8]) -> io::Result<()> {
    let (dirs, name) = split(rel)?;
    let dir = open_dirs(root, &dirs, true)?;
    let mode = match kind(&dir, name)? {
        Some((FileType::Symlink, _)) => return Err(link_error()),
        Some((FileType::RegularFile, m)) => m,
        Some(_) => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a regular file",
            ));
        }
        None => 0o644,
    };
    let mut made = None;
    for i in 0..16u32 {
        let tmp = format!(
            ".{}.ht-tmp.{}.{i}",
            name.to_string_lossy(),
            std::process::id()
        );
        match rfs::openat(
            &dir,
            tmp.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(mode as _),
        ) {
            Ok(fd) => {
                made = Some((tmp, fd));
                break;
            }
            Err(Errno::EXIST) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    let Some((tmp, fd)) = made else {
        return Err(Errno::EXIST.into());
    };
    let mut f = std::fs::File::from(fd);
    let res = f
        .write_all(data)
        .and_then(|_| f.sync_all())
        // the umask may have narrowed the mode: set it as meant
        .and_then(|_| rfs::fchmod(&f, Mode::from_raw_mode(mode as _)).map_err(io::Error::from))
        .and_then(|_| rfs::renameat(&dir, tmp.as_str(), &dir, name).map_err(io::Error::from));
    if res.is_err() {
        let _ = rfs::unlinkat(&dir, tmp.as_str(), AtFlags::empty());
    }
    res
}

/// Remove the file `rel` beneath `root`; a symlink is refused, not removed.
pub fn remove(root: &Path, rel: &Path) -> io::Result<()> {
    let (dirs, name) = split(rel)?;
    let dir = open_dirs(root, &dirs, false)?;
    if let Some((FileType::Symlink, _)) = kind(&dir, name)? {
        return Err(link_error());
    }
    rfs::unlinkat(&dir, name, AtFlags::empty()).map_err(io::Error::from)
}

/// Remove the folder `rel` beneath `root` if it is empty (no link followed).
pub fn remove_empty_dir(root: &Path, rel: &Path) -> io::Result<()> {
    let (dirs, name) = split(rel)?;
    let dir = open_dirs(root, &dirs, false)?;
    if let Some((FileType::Symlink, _)) = kind(&dir, name)? {
        return Err(link_error());
    }
    rfs::unlinkat(&dir, name, AtFlags::REMOVEDIR).map_err(io::Error::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_below_the_root_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let skill = d.path().join("skill");
        let outside = d.path().join("outside");
        std::fs::create_dir_all(skill.join("references")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret.md"), "keep").unwrap();
        std::os::unix::fs::symlink(&outside, skill.join("assets")).unwrap();
        std::os::unix::fs::symlink(outside.join("secret.md"), skill.join("references/l.md"))
            .unwrap();
        // a write through a linked folder, over a linked file: refused
        let e = write(&skill, Path::new("assets/x.md"), b"x").unwrap_err();
        assert!(is_link_refusal(&e), "{e}");
        assert!(!outside.join("x.md").exists());
        let e = write(&skill, Path::new("references/l.md"), b"x").unwrap_err();
        assert!(is_link_refusal(&e), "{e}");
        assert_eq!(
            std::fs::read_to_string(outside.join("secret.md")).unwrap(),
            "keep"
        );
        assert!(
            std::fs::symlink_metadata(skill.join("references/l.md"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        // reading and removing a link: refused, the link stays
        assert!(is_link_refusal(
            &read(&skill, Path::new("references/l.md"), 100).unwrap_err()
        ));
        assert!(is_link_refusal(
            &remove(&skill, Path::new("references/l.md")).unwrap_err()
        ));
        assert!(skill.join("references/l.md").exists());
        assert!(is_link_refusal(
            &read(&skill, Path::new("assets/secret.md"), 100).unwrap_err()
        ));
        // ordinary files work, folders are created, the mode is kept
        write(&skill, Path::new("templates/a/b.txt"), b"hello").unwrap();
        assert_eq!(
            read(&skill, Path::new("templates/a/b.txt"), 100).unwrap(),
            b"hello"
        );
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            skill.join("templates/a/b.txt"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        write(&skill, Path::new("templates/a/b.txt"), b"again").unwrap();
        assert_eq!(
            std::fs::metadata(skill.join("templates/a/b.txt"))
                .unwrap()
                .permissions()
                .mode()
                & 0o777,
            0o755
        );
        assert!(is_file(&skill, Path::new("templates/a/b.txt")).unwrap());
        remove(&skill, Path::new("templates/a/b.txt")).unwrap();
        remove_empty_dir(&skill, Path::new("templates/a")).unwrap();
        assert!(!skill.join("templates/a").exists());
        assert!(write(&skill, Path::new("../x"), b"x").is_err());
    }
}
