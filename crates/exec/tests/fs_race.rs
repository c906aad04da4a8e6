//! Attacks on the sandbox backend's file access (issue 27, items 1-3),
//! replayed against `HostFs::sandboxed`: a sandboxed process swapping a
//! workspace entry between a folder and a symlink to a folder the sandbox
//! cannot see, while the file tools read, write, list and search; a hard
//! link to an outside file; the masked and root-only files. Each must
//! hold with zero escapes. Legitimate symlinks (inside the workspace, to
//! `/usr`) must keep working.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use hermes_exec::fs::{FileSystem, HostFs};
use hermes_exec::sandbox::SandboxConfig;

const CANARY: &[u8] = b"CANARY: a file outside the sandbox's binds";
const INSIDE: &[u8] = b"inside\n";
const ATTEMPTS: usize = 10_000;

/// A scratch folder outside every bind of the sandbox (under `/dev/shm`,
/// a tmpfs, when it is writable: fast writes; else the temp dir; both are
/// private tmpfs or hidden inside the sandbox).
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let base = if std::fs::metadata("/dev/shm").is_ok_and(|m| m.is_dir())
            && tempdir_in(Path::new("/dev/shm"))
        {
            PathBuf::from("/dev/shm")
        } else {
            std::env::temp_dir()
        };
        Scratch::in_dir(&base, tag)
    }

    /// Under `base` (a read-only bind must not be under `/dev`: the
    /// sandbox mounts its own `/dev` over earlier binds there).
    fn in_dir(base: &Path, tag: &str) -> Scratch {
        static N: AtomicU64 = AtomicU64::new(0);
        let p = base.join(format!(
            "ht-fs-race-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Scratch(std::fs::canonicalize(&p).unwrap())
    }
}

fn tempdir_in(p: &Path) -> bool {
    let probe = p.join(format!("ht-probe-{}", std::process::id()));
    let ok = std::fs::create_dir(&probe).is_ok();
    let _ = std::fs::remove_dir(&probe);
    ok
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A workspace `ws` (the sandbox's writable root) and a canary folder
/// beside it that the sandbox cannot see.
struct Setup {
    s: Scratch,
    ws: PathBuf,
    canary: PathBuf,
}

fn setup(tag: &str) -> Setup {
    let s = Scratch::new(tag);
    let ws = s.0.join("ws");
    let canary = s.0.join("canary");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&canary).unwrap();
    std::fs::write(canary.join("f"), CANARY).unwrap();
    std::fs::write(canary.join("canary_only"), CANARY).unwrap();
    Setup { s, ws, canary }
}

fn sandboxed(ws: &Path) -> HostFs {
    HostFs::sandboxed(&SandboxConfig {
        root: ws.to_path_buf(),
        ..SandboxConfig::default()
    })
}

/// What a sandboxed process does: `ws/sw` is a folder (holding `f`) or a
/// symlink to the canary folder, exchanged atomically as fast as it can.
struct Swapper {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<u64>>,
}

impl Swapper {
    fn start(ws: &Path, canary: &Path) -> Swapper {
        std::fs::create_dir(ws.join("sw")).unwrap();
        std::fs::create_dir(ws.join("d")).unwrap();
        std::fs::write(ws.join("sw/f"), INSIDE).unwrap();
        std::os::unix::fs::symlink(canary, ws.join("alt")).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let (a, b) = (ws.join("sw"), ws.join("alt"));
        let st = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut n = 0u64;
            while !st.load(Ordering::Relaxed) {
                rustix::fs::renameat_with(
                    rustix::fs::CWD,
                    &a,
                    rustix::fs::CWD,
                    &b,
                    rustix::fs::RenameFlags::EXCHANGE,
                )
                .expect("RENAME_EXCHANGE");
                n += 1;
            }
            n
        });
        Swapper {
            stop,
            thread: Some(thread),
        }
    }

    /// `ws/rel`, every other time as `ws/d/../rel`: a path with `..` takes
    /// the component walk, a plain one the one-call `openat2` path.
    fn via(i: usize, ws: &Path, rel: &str) -> PathBuf {
        if i % 4 < 2 {
            ws.join(rel)
        } else {
            ws.join("d/..").join(rel)
        }
    }

    fn stop(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().unwrap().join().unwrap()
    }
}

fn canary_untouched(canary: &Path) {
    let mut names: Vec<String> = std::fs::read_dir(canary)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["canary_only", "f"],
        "something was created in the folder outside the sandbox"
    );
    assert_eq!(std::fs::read(canary.join("f")).unwrap(), CANARY);
}

#[test]
fn swap_race_reads_never_return_the_canary() {
    let t = setup("read");
    let fs = sandboxed(&t.ws);
    let sw = Swapper::start(&t.ws, &t.canary);
    let (mut escapes, mut ok) = (0usize, 0usize);
    // (reads are cheap: more of them, the race window of a check-then-open
    // is narrow)
    for i in 0..5 * ATTEMPTS {
        let p = Swapper::via(i, &t.ws, "sw/f");
        let r = if i % 2 == 0 {
            fs.read(&p)
        } else {
            fs.read_head(&p, 4096)
        };
        match r {
            Ok(d) if d == CANARY => escapes += 1,
            Ok(d) => {
                assert_eq!(d, INSIDE);
                ok += 1
            }
            Err(_) => {}
        }
    }
    let swaps = sw.stop();
    assert_eq!(escapes, 0, "read returned the canary {escapes} times");
    assert!(
        ok > 0,
        "no read succeeded ({swaps} swaps): the test proves nothing"
    );
    canary_untouched(&t.canary);
    drop(t.s);
}

#[test]
fn swap_race_writes_never_land_outside() {
    let t = setup("write");
    let fs = sandboxed(&t.ws);
    let sw = Swapper::start(&t.ws, &t.canary);
    let mut ok = 0usize;
    for i in 0..ATTEMPTS {
        let target = Swapper::via(i, &t.ws, if i % 2 == 0 { "sw/out" } else { "sw/f" });
        if fs.write_atomic(&target, INSIDE, None).is_ok() {
            ok += 1;
        }
    }
    sw.stop();
    canary_untouched(&t.canary);
    assert!(ok > 0, "no write succeeded: the test proves nothing");
}

#[test]
fn swap_race_metadata_listing_and_mkdir_stay_inside() {
    let t = setup("meta");
    let fs = sandboxed(&t.ws);
    let sw = Swapper::start(&t.ws, &t.canary);
    let (mut escapes, mut ok) = (0usize, 0usize);
    for i in 0..ATTEMPTS {
        if let Ok(m) = fs.metadata(&Swapper::via(i, &t.ws, "sw/f")) {
            ok += 1;
            if m.len == CANARY.len() as u64 {
                escapes += 1;
            }
        }
        if let Ok(list) = fs.read_dir(&Swapper::via(i, &t.ws, "sw"))
            && list.iter().any(|e| e.name == "canary_only")
        {
            escapes += 1;
        }
        if let Ok(p) = fs.canonicalize(&t.ws.join("sw/f"))
            && p.starts_with(&t.canary)
        {
            escapes += 1;
        }
        if fs.check_read(&t.ws.join("sw/canary_only")).is_ok()
            && fs.metadata(&t.ws.join("sw/canary_only")).is_ok()
        {
            escapes += 1;
        }
        let d = Swapper::via(i, &t.ws, &format!("sw/d{}", i % 50));
        let _ = fs.create_dir_all(&d.join("e"));
    }
    sw.stop();
    assert_eq!(escapes, 0, "{escapes} answers came from the canary folder");
    assert!(ok > 0);
    canary_untouched(&t.canary);
}

#[test]
fn swap_race_search_walk_never_reads_the_canary() {
    let t = setup("walk");
    std::fs::create_dir_all(t.ws.join("src")).unwrap();
    std::fs::write(t.ws.join("src/main.rs"), "fn main() {}\n").unwrap();
    let fs = sandboxed(&t.ws);
    let sw = Swapper::start(&t.ws, &t.canary);
    let mut escapes = 0usize;
    let mut seen_inside = 0usize;
    for i in 0..ATTEMPTS {
        let root = if i % 2 == 0 {
            t.ws.clone()
        } else {
            Swapper::via(i, &t.ws, "sw")
        };
        if let Ok(files) = fs.walk(&root, true, 1 << 20) {
            for f in files {
                if f.data.as_deref() == Some(CANARY) {
                    escapes += 1;
                }
                if f.data.as_deref() == Some(INSIDE) {
                    seen_inside += 1;
                }
            }
        }
    }
    sw.stop();
    assert_eq!(
        escapes, 0,
        "the search walk read the canary {escapes} times"
    );
    assert!(seen_inside > 0, "the walk never found the workspace file");
}

#[test]
fn hard_link_to_an_outside_file_is_refused_for_writes() {
    let t = setup("hardlink");
    std::fs::hard_link(t.canary.join("f"), t.ws.join("hl")).unwrap();
    let fs = sandboxed(&t.ws);
    let e = fs
        .write_atomic(&t.ws.join("hl"), b"changed", None)
        .expect_err("a write to a file with another hard link must be refused");
    assert!(e.to_string().contains("hard link"), "{e}");
    canary_untouched(&t.canary);
    assert_eq!(std::fs::read(t.ws.join("hl")).unwrap(), CANARY);
    // a plain workspace file is written as before
    fs.write_atomic(&t.ws.join("plain"), b"x", None).unwrap();
    fs.write_atomic(&t.ws.join("plain"), b"y", None).unwrap();
    assert_eq!(std::fs::read(t.ws.join("plain")).unwrap(), b"y");
}

/// Red team 2026-11-28: `write_file x/config` while a sandboxed process
/// exchanged `x` (a folder) with `y -> .git` landed in `.git/config` (the
/// approval check saw the path a moment earlier); the host's next `git
/// status` ran the planted fsmonitor. The view refuses repository metadata
/// wherever the walk meets it, at the moment of writing.
#[test]
fn writes_never_reach_repository_metadata_by_any_route() {
    let t = setup("gitmeta");
    let git = t.ws.join(".git");
    std::fs::create_dir_all(git.join("hooks")).unwrap();
    std::fs::write(git.join("config"), "[core]\n").unwrap();
    std::fs::create_dir(t.ws.join("x")).unwrap();
    std::os::unix::fs::symlink(".git", t.ws.join("y")).unwrap();
    std::os::unix::fs::symlink(".git", t.ws.join("lnk")).unwrap();
    let fs = sandboxed(&t.ws);
    let evil = b"[core]\n\tfsmonitor = touch /tmp/pwned #\n";
    for p in [
        ".git/config",
        "lnk/config",
        "lnk/hooks/pre-commit",
        "d/../.git/config",
    ] {
        let _ = std::fs::create_dir_all(t.ws.join("d"));
        let e = fs.write_atomic(&t.ws.join(p), evil, None).unwrap_err();
        assert!(e.to_string().contains(".git"), "{p}: {e}");
    }
    assert!(fs.rename(&t.ws.join("x"), &t.ws.join("lnk/x")).is_err());
    // Exchanged as fast as a sandboxed process can.
    let stop = Arc::new(AtomicBool::new(false));
    let (a, b) = (t.ws.join("x"), t.ws.join("y"));
    let st = stop.clone();
    let swapper = std::thread::spawn(move || {
        while !st.load(Ordering::Relaxed) {
            rustix::fs::renameat_with(
                rustix::fs::CWD,
                &a,
                rustix::fs::CWD,
                &b,
                rustix::fs::RenameFlags::EXCHANGE,
            )
            .expect("RENAME_EXCHANGE");
        }
    });
    let mut ok = 0;
    for _ in 0..ATTEMPTS {
        if fs.write_atomic(&t.ws.join("x/config"), evil, None).is_ok() {
            ok += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    assert_eq!(std::fs::read(git.join("config")).unwrap(), b"[core]\n");
    assert!(!git.join("hooks/pre-commit").exists());
    assert!(
        ok > 0,
        "no write into the real folder succeeded: the test proves nothing"
    );
    // A git directory under another name, found by what it holds.
    let other = t.ws.join("gitdata");
    for d in ["objects", "refs/heads", "hooks"] {
        std::fs::create_dir_all(other.join(d)).unwrap();
    }
    std::fs::write(other.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(other.join("config"), "[core]\n").unwrap();
    for p in [
        "gitdata/config",
        "gitdata/hooks/pre-commit",
        "d/../gitdata/config",
    ] {
        let e = fs.write_atomic(&t.ws.join(p), evil, None).unwrap_err();
        assert!(e.to_string().contains("git directory"), "{p}: {e}");
    }
    assert_eq!(std::fs::read(other.join("config")).unwrap(), b"[core]\n");
    // Approved by a person, the same write goes through.
    fs.write_atomic_approved(&git.join("config"), b"[core]\n\tbare = false\n", None)
        .unwrap();
    assert_eq!(
        std::fs::read(git.join("config")).unwrap(),
        b"[core]\n\tbare = false\n"
    );
}

#[test]
fn masked_files_are_refused() {
    let t = setup("masked");
    let fs = sandboxed(&t.ws);
    let masked = [
        "/etc/shadow-",
        "/etc/gshadow-",
        "/etc/shadow",
        "/etc/gshadow",
        "/etc/sudoers",
    ];
    let present: Vec<&str> = masked
        .into_iter()
        .filter(|p| Path::new(p).exists())
        .collect();
    assert!(!present.is_empty(), "no shadow file on this machine");
    for p in present {
        assert!(fs.read(Path::new(p)).is_err(), "read {p}");
        assert!(fs.read_head(Path::new(p), 10).is_err(), "read_head {p}");
        assert!(fs.check_read(Path::new(p)).is_err(), "check_read {p}");
        // nor through a symlink in the workspace
        let l = t.ws.join("l");
        let _ = std::fs::remove_file(&l);
        std::os::unix::fs::symlink(p, &l).unwrap();
        assert!(fs.read(&l).is_err(), "read {p} through a symlink");
    }
}

#[test]
fn root_only_files_outside_the_writable_roots_are_refused() {
    let t = setup("private");
    let tmp = Scratch::in_dir(&std::env::temp_dir(), "private-ro");
    let ro = tmp.0.join("ro");
    std::fs::create_dir_all(ro.join("sub")).unwrap();
    std::fs::write(ro.join("secret"), "root only").unwrap();
    std::fs::set_permissions(ro.join("secret"), std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::write(ro.join("public"), "everyone").unwrap();
    std::fs::set_permissions(ro.join("public"), std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::write(ro.join("sub/x"), "in a folder only its owner lists").unwrap();
    std::fs::set_permissions(ro.join("sub"), std::fs::Permissions::from_mode(0o700)).unwrap();
    let fs = HostFs::sandboxed(&SandboxConfig {
        root: t.ws.clone(),
        ro_binds: vec![ro.clone()],
        ..SandboxConfig::default()
    });
    assert_eq!(fs.read(&ro.join("public")).unwrap(), b"everyone");
    let e = fs.read(&ro.join("secret")).unwrap_err();
    assert!(e.to_string().contains("world-readable"), "{e}");
    assert!(fs.metadata(&ro.join("secret")).is_err());
    assert!(fs.check_read(&ro.join("secret")).is_err());
    // a folder only its owner may list is not listed, and nothing inside
    // it is read (red team 2026-11-28: read_file returned a world-readable
    // file in a 0700 folder the sandbox masks)
    assert!(fs.read_dir(&ro.join("sub")).is_err());
    std::fs::set_permissions(ro.join("sub/x"), std::fs::Permissions::from_mode(0o644)).unwrap();
    let e = fs.read(&ro.join("sub/x")).unwrap_err();
    assert!(e.to_string().contains("may not enter"), "{e}");
    assert!(fs.metadata(&ro.join("sub/x")).is_err());
    assert!(fs.read_dir(&ro).is_ok());
    std::os::unix::fs::symlink(ro.join("secret"), t.ws.join("l")).unwrap();
    assert!(fs.read(&t.ws.join("l")).is_err());
    let walked = fs.walk(&ro, true, 1 << 20).unwrap();
    let names: Vec<_> = walked.iter().map(|f| f.path.clone()).collect();
    assert_eq!(names, [ro.join("public")]);
    // read-only: no write there
    assert!(fs.write_atomic(&ro.join("new"), b"x", None).is_err());
    assert!(!ro.join("new").exists());
    // inside the writable root, the owner's private files stay readable
    std::fs::write(t.ws.join("mine"), "mine").unwrap();
    std::fs::set_permissions(t.ws.join("mine"), std::fs::Permissions::from_mode(0o600)).unwrap();
    assert_eq!(fs.read(&t.ws.join("mine")).unwrap(), b"mine");
}

/// A world-readable file under /usr (every Linux system has some).
fn usr_file() -> PathBuf {
    for p in [
        "/usr/lib/os-release",
        "/usr/share/common-licenses/GPL-3",
        "/usr/bin/env",
    ] {
        if let Ok(m) = std::fs::metadata(p)
            && m.is_file()
            && m.permissions().mode() & 0o004 != 0
        {
            return std::fs::canonicalize(p).unwrap();
        }
    }
    panic!("no world-readable file under /usr");
}

#[test]
fn legitimate_symlinks_keep_working() {
    let t = setup("links");
    let fs = sandboxed(&t.ws);
    std::fs::create_dir_all(t.ws.join("sub")).unwrap();
    std::fs::write(t.ws.join("sub/a.txt"), "a").unwrap();
    std::os::unix::fs::symlink("sub/a.txt", t.ws.join("rel")).unwrap();
    std::os::unix::fs::symlink(t.ws.join("sub/a.txt"), t.ws.join("abs")).unwrap();
    std::os::unix::fs::symlink("../sub", t.ws.join("sub/up")).unwrap();
    std::os::unix::fs::symlink(t.ws.join("sub"), t.ws.join("dirlink")).unwrap();
    let usr = usr_file();
    std::os::unix::fs::symlink(&usr, t.ws.join("usr")).unwrap();
    std::os::unix::fs::symlink(usr.parent().unwrap(), t.ws.join("usrdir")).unwrap();
    for p in ["rel", "abs", "sub/up/a.txt", "dirlink/a.txt", "sub/../rel"] {
        assert_eq!(fs.read(&t.ws.join(p)).unwrap(), b"a", "{p}");
    }
    let want = std::fs::read(&usr).unwrap();
    assert_eq!(fs.read(&t.ws.join("usr")).unwrap(), want);
    assert_eq!(fs.read(&usr).unwrap(), want);
    assert_eq!(fs.canonicalize(&t.ws.join("usr")).unwrap(), usr);
    assert_eq!(
        fs.canonicalize(&t.ws.join("dirlink/a.txt")).unwrap(),
        t.ws.join("sub/a.txt")
    );
    let name = usr.file_name().unwrap().to_string_lossy().into_owned();
    let list = fs.read_dir(&t.ws.join("usrdir")).unwrap();
    assert!(list.iter().any(|e| e.name == name));
    let list = fs.read_dir(&t.ws).unwrap();
    let dirlink = list.iter().find(|e| e.name == "dirlink").unwrap();
    assert!(dirlink.is_dir);
    // writes through a folder symlink inside the workspace
    fs.write_atomic(&t.ws.join("dirlink/b.txt"), b"b", None)
        .unwrap();
    assert_eq!(std::fs::read(t.ws.join("sub/b.txt")).unwrap(), b"b");
    assert!(fs.create_dir_all(&t.ws.join("dirlink/new/deeper")).unwrap());
    assert!(t.ws.join("sub/new/deeper").is_dir());
    // ...but not through one to /usr
    assert!(fs.write_atomic(&t.ws.join("usrdir/x"), b"x", None).is_err());
    // the mode of an existing file is kept
    std::fs::set_permissions(
        t.ws.join("sub/a.txt"),
        std::fs::Permissions::from_mode(0o750),
    )
    .unwrap();
    fs.write_atomic(&t.ws.join("sub/a.txt"), b"a2", None)
        .unwrap();
    let m = fs.metadata(&t.ws.join("sub/a.txt")).unwrap();
    assert_eq!((m.mode, m.len, m.is_file), (0o750, 2, true));
    fs.rename(&t.ws.join("sub/a.txt"), &t.ws.join("moved"))
        .unwrap();
    assert_eq!(fs.read(&t.ws.join("moved")).unwrap(), b"a2");
    fs.remove_file(&t.ws.join("moved")).unwrap();
    assert!(!t.ws.join("moved").exists());
}

#[test]
fn escapes_by_name_are_refused() {
    let t = setup("names");
    let fs = sandboxed(&t.ws);
    std::fs::create_dir_all(t.ws.join("sub")).unwrap();
    std::os::unix::fs::symlink("../canary", t.ws.join("up")).unwrap();
    std::os::unix::fs::symlink(&t.canary, t.ws.join("abs")).unwrap();
    std::os::unix::fs::symlink("loop2", t.ws.join("loop1")).unwrap();
    std::os::unix::fs::symlink("loop1", t.ws.join("loop2")).unwrap();
    for p in [
        t.canary.join("f"),
        t.ws.join("sub/../../canary/f"),
        t.ws.join("up/f"),
        t.ws.join("abs/f"),
        PathBuf::from("/root/.bashrc"),
        PathBuf::from("/proc/self/environ"),
        PathBuf::from("/proc/self/root/etc/passwd"),
    ] {
        assert!(fs.read(&p).is_err(), "{} was readable", p.display());
        assert!(fs.metadata(&p).is_err(), "{} has metadata", p.display());
    }
    assert!(fs.check_read(&t.canary.join("f")).is_err());
    assert!(fs.check_write(&t.ws.join("abs/new")).is_err());
    assert!(fs.check_write(&t.ws.join("sub/new/deeper")).is_ok());
    assert!(fs.check_write(Path::new("/usr/new")).is_err());
    assert!(fs.write_atomic(&t.ws.join("up/new"), b"x", None).is_err());
    assert!(fs.create_dir_all(&t.ws.join("abs/new")).is_err());
    assert!(fs.rename(&t.ws.join("sub"), &t.ws.join("abs/sub")).is_err());
    let e = fs.read(&t.ws.join("loop1")).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc_eloop()), "{e}");
    // removing a folder removes the symlinks in it, not what they point at
    std::os::unix::fs::symlink(&t.canary, t.ws.join("sub/link")).unwrap();
    fs.remove_dir_all(&t.ws.join("sub")).unwrap();
    assert!(!t.ws.join("sub").exists());
    canary_untouched(&t.canary);
    // the local backend keeps its plain behaviour
    assert_eq!(HostFs::local().read(&t.ws.join("abs/f")).unwrap(), CANARY);
}

fn libc_eloop() -> i32 {
    rustix::io::Errno::LOOP.raw_os_error()
}

#[test]
fn the_virtual_root_shows_the_binds_only() {
    let t = setup("root");
    let fs = sandboxed(&t.ws);
    let list = fs.read_dir(Path::new("/")).unwrap();
    let names: Vec<&str> = list.iter().map(|e| e.name.as_str()).collect();
    assert!(
        names.contains(&"usr") && names.contains(&"etc"),
        "{names:?}"
    );
    // only mount points and the folders above them
    let first = |p: &Path| {
        p.components()
            .nth(1)
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
    };
    let home = std::env::var_os("HOME").map(PathBuf::from);
    for n in &names {
        let ok = [
            "usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "opt", "proc", "dev",
            "tmp", "run",
        ]
        .contains(n)
            || first(&t.ws).as_deref() == Some(n)
            || home.as_deref().and_then(first).as_deref() == Some(n);
        assert!(ok, "/{n} is visible: {names:?}");
    }
    // the private home, /proc and /tmp are empty for the tools
    for p in ["/proc", "/tmp"].map(PathBuf::from).into_iter().chain(home) {
        if !t.ws.starts_with(&p) && fs.metadata(&p).is_ok() {
            assert!(fs.read_dir(&p).unwrap().is_empty(), "{}", p.display());
        }
    }
    assert!(fs.read(Path::new("/")).is_err());
    assert!(fs.write_atomic(&t.ws, b"x", None).is_err());
    // a deep chain with `..` back past the handles it keeps open
    let deep: PathBuf = (0..50).map(|i| format!("d{i}")).collect();
    std::fs::create_dir_all(t.ws.join(&deep)).unwrap();
    std::fs::write(t.ws.join("top"), "top").unwrap();
    let mut p = t.ws.join(&deep);
    for _ in 0..50 {
        p.push("..");
    }
    p.push("top");
    assert_eq!(fs.read(&p).unwrap(), b"top");
}

/// Latency of small reads and writes through the sandbox backend; run
/// with `cargo test -p hermes-exec --test fs_race -- --ignored --nocapture`.
#[test]
#[ignore]
fn bench_small_file_latency() {
    let t = setup("bench");
    let fs = sandboxed(&t.ws);
    let dir = t.ws.join("src/module/sub");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("small.rs");
    let data = vec![b'x'; 1024];
    std::fs::write(&file, &data).unwrap();
    let usr = usr_file();
    let n = 20_000;
    let time = |what: &str, f: &mut dyn FnMut()| {
        for _ in 0..n / 10 {
            f();
        }
        let t0 = std::time::Instant::now();
        for _ in 0..n {
            f();
        }
        let ns = t0.elapsed().as_nanos() / n as u128;
        println!("{what}: {ns} ns/op");
    };
    time("read 1 KiB (workspace, depth 4)", &mut || {
        assert_eq!(fs.read(&file).unwrap().len(), 1024);
    });
    let walked = t.ws.join("src/module/../module/sub/small.rs");
    time(
        "read 1 KiB (workspace, with `..`: the component walk)",
        &mut || {
            assert_eq!(fs.read(&walked).unwrap().len(), 1024);
        },
    );
    time("metadata (workspace)", &mut || {
        fs.metadata(&file).unwrap();
    });
    time("read (/usr)", &mut || {
        fs.read(&usr).unwrap();
    });
    time("write_atomic 1 KiB (workspace)", &mut || {
        fs.write_atomic(&file, &data, None).unwrap();
    });
}

#[test]
fn the_search_walk_applies_ignore_rules_like_the_local_walk() {
    let t = setup("ignore");
    let ws = &t.ws;
    for d in [".git/info", "target/debug", "src/gen", "docs", "sub/keep"] {
        std::fs::create_dir_all(ws.join(d)).unwrap();
    }
    for (p, c) in [
        (".gitignore", "target/\n*.log\n!keep.log\n"),
        (".git/info/exclude", "docs/\n"),
        ("src/.ignore", "gen/\n"),
        ("sub/.gitignore", "*.tmp\n"),
        ("target/debug/big.bin", "x"),
        ("src/main.rs", "fn main() {}"),
        ("src/gen/out.rs", "generated"),
        ("docs/a.md", "doc"),
        ("a.log", "log"),
        ("keep.log", "kept"),
        ("sub/keep/x.tmp", "tmp"),
        ("sub/keep/y.rs", "y"),
        (".hidden", "hidden"),
    ] {
        std::fs::write(ws.join(p), c).unwrap();
    }
    let fs = sandboxed(ws);
    let mut got: Vec<String> = fs
        .walk(ws, false, 0)
        .unwrap()
        .into_iter()
        .map(|f| {
            f.path
                .strip_prefix(ws)
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    got.sort();
    assert_eq!(got, ["keep.log", "src/main.rs", "sub/keep/y.rs"]);
    // walking from a sub folder still applies the rules above it
    let got: Vec<PathBuf> = fs
        .walk(&ws.join("sub"), true, 1 << 20)
        .unwrap()
        .into_iter()
        .map(|f| f.path)
        .collect();
    assert_eq!(got, [ws.join("sub/keep/y.rs")]);
    // outside a git repository .gitignore does not apply (.ignore does)
    std::fs::remove_dir_all(ws.join(".git")).unwrap();
    let n = fs.walk(ws, false, 0).unwrap().len();
    assert_eq!(
        n, 7,
        "target, a.log, docs and x.tmp are searched; gen stays out"
    );
}

#[test]
fn a_root_created_after_start_and_streamed_reads() {
    let s = Scratch::new("late");
    let ws = s.0.join("ws");
    let fs = sandboxed(&ws);
    assert!(fs.read(&ws.join("a")).is_err());
    std::fs::create_dir(&ws).unwrap();
    fs.write_atomic(&ws.join("a"), b"late root", None).unwrap();
    let mut r = fs.open_read(&ws.join("a")).unwrap();
    let mut got = String::new();
    std::io::Read::read_to_string(&mut r, &mut got).unwrap();
    assert_eq!(got, "late root");
    assert!(fs.open_read(&s.0.join("outside")).is_err());
}

/// The same attacks by an unprivileged host: when this runs as root, the
/// whole file is run again as `nobody` (through `setpriv`, from a copy of
/// this binary that `nobody` can execute), and every test must pass there.
#[test]
fn every_attack_holds_for_an_unprivileged_host() {
    if rustix::process::geteuid().as_raw() != 0 || std::env::var_os("HT_FS_RACE_NESTED").is_some() {
        return;
    }
    common::rerun_as_nobody(
        &["--skip", "every_attack_holds", "--test-threads=2"],
        "HT_FS_RACE_NESTED",
        " passed; 0 failed",
    );
}
