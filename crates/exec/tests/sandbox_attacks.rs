//! The attacks of issue 27 replayed against the bubblewrap sandbox, as a
//! model's command would try them: tracing, new namespaces, terminal input
//! injection, reading root-only host files, exhausting processes, memory,
//! CPU, file size and the memory-backed `/tmp`, and planting repository
//! configuration that the host user's next `git status` would run. Each
//! failed on the sandbox before the seccomp filter, the masks, the limits
//! and the protected binds.
//!
//! Run as root, each test also re-runs itself as `nobody` through `setpriv`
//! (the other kind of host). Tests skip (pass with a note) where bubblewrap
//! cannot run at all.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use hermes_exec::pump::{Ended, PumpOpts, pump};
use hermes_exec::sandbox::{Sandbox, SandboxConfig};
use hermes_exec::spawn::SandboxLimits;
use hermes_exec::{Environment, SpawnRequest};

const NESTED: &str = "HERMES_SANDBOX_ATTACK_AS_USER";

fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

fn bwrap_works() -> bool {
    hermes_exec::sandbox::find_bwrap().is_some_and(|b| {
        std::process::Command::new(b)
            .args(["--ro-bind", "/", "/", "--unshare-user", "--", "/bin/true"])
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// A fresh workspace owned by whoever runs the test.
struct Workspace(PathBuf);

impl Workspace {
    fn new(tag: &str) -> Workspace {
        let p = std::env::temp_dir().join(format!(
            "hermes-attack-{tag}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .subsec_nanos()
        ));
        std::fs::create_dir_all(&p).unwrap();
        Workspace(std::fs::canonicalize(&p).unwrap())
    }
}

impl Drop for Workspace {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn limits() -> SandboxLimits {
    SandboxLimits::default()
}

fn sandbox(root: &Path, limits: SandboxLimits) -> Sandbox {
    Sandbox::new(&SandboxConfig {
        root: root.to_path_buf(),
        limits,
        ..SandboxConfig::default()
    })
    .expect("sandbox")
}

/// Run `script` in `sb` with cwd `cwd`; exit code, how it ended, output.
fn run_in(sb: &Sandbox, cwd: &Path, script: &str, pty: bool) -> (i32, Ended, String) {
    let env: Vec<(String, String)> = vec![
        ("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into()),
        ("HOME".into(), "/nonexistent-home".into()),
        ("LANG".into(), "C".into()),
    ];
    let req = SpawnRequest {
        script,
        cwd,
        env: &env,
        pty,
        extra_rw: &[],
        task: "",
        linger: false,
    };
    let sp = sb.spawn(&req).expect("spawn");
    let opts = PumpOpts {
        timeout: Some(Duration::from_secs(60)),
        ..PumpOpts::default()
    };
    let mut out = Vec::new();
    let (code, ended) = pump(sp.pid, &sp.output, sb, &opts, &mut |d| {
        out.extend_from_slice(d)
    });
    (code, ended, String::from_utf8_lossy(&out).into_owned())
}

/// Run `script` on `env` (a sandbox or the local backend) with only a PATH,
/// as given (`pty`, `linger`), and collect what it prints.
fn spawn_collect(
    env: &dyn Environment,
    script: &str,
    cwd: &Path,
    vars: &[(String, String)],
    pty: bool,
    linger: bool,
) -> String {
    let req = SpawnRequest {
        script,
        cwd,
        env: vars,
        pty,
        extra_rw: &[],
        task: "",
        linger,
    };
    let sp = env.spawn(&req).expect("spawn");
    let mut out = Vec::new();
    let _ = pump(sp.pid, &sp.output, env, &PumpOpts::default(), &mut |d| {
        out.extend_from_slice(d)
    });
    String::from_utf8_lossy(&out).into_owned()
}

fn path_only() -> Vec<(String, String)> {
    vec![("PATH".to_string(), "/usr/bin:/bin".to_string())]
}

fn run(sb: &Sandbox, script: &str) -> (i32, Ended, String) {
    run_in(sb, sb.root(), script, false)
}

/// Run `name` again as `nobody` when this is root (and not already the
/// nested run): the attack must fail on both kinds of host.
fn also_as_nobody(name: &str) {
    if !is_root() || std::env::var_os(NESTED).is_some() {
        return;
    }
    common::rerun_as_nobody(
        &["--exact", name, "--test-threads=1", "--nocapture"],
        NESTED,
        "1 passed",
    );
}

macro_rules! need_bwrap {
    () => {
        if !bwrap_works() {
            // The run as nobody was asked for because bwrap works for
            // root: that it does not for nobody is a finding, not a skip.
            assert!(
                std::env::var_os(NESTED).is_none(),
                "bubblewrap cannot run as nobody"
            );
            eprintln!("skipped: bubblewrap cannot run here");
            return;
        }
    };
}

/// Attach to a sibling (`sleep`) and to a child, read a child's memory.
const PTRACE_CHILD: &str = r#"sleep 30 & /usr/bin/python3 -c '
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
r = libc.ptrace(16, int(sys.argv[1]), 0, 0)  # PTRACE_ATTACH to a sibling
print("sibling", r, ctypes.get_errno())
pid = os.fork()
if pid == 0:
    time.sleep(30)
    os._exit(0)
r = libc.ptrace(16, pid, 0, 0)  # PTRACE_ATTACH to our own child
print("ptrace", r, ctypes.get_errno())
buf = ctypes.create_string_buffer(8)
class iov(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
local = iov(ctypes.cast(buf, ctypes.c_void_p), 8)
remote = iov(0x400000, 8)
r = libc.process_vm_readv(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
print("vm_readv", r, ctypes.get_errno())
os.kill(pid, 9)
' $!; kill %1"#;

#[test]
fn ptrace_and_process_vm_are_denied() {
    need_bwrap!();
    let ws = Workspace::new("ptrace");
    let sb = sandbox(&ws.0, limits());
    let (_, _, out) = run(&sb, PTRACE_CHILD);
    assert!(out.contains("sibling -1 1\n"), "{out}");
    assert!(out.contains("ptrace -1 1\n"), "{out}");
    assert!(out.contains("vm_readv -1 1\n"), "{out}");
    also_as_nobody("ptrace_and_process_vm_are_denied");
}

#[test]
fn ptrace_is_denied_on_a_pty_too() {
    need_bwrap!();
    let ws = Workspace::new("ptrace-pty");
    let sb = sandbox(&ws.0, limits());
    let (_, _, out) = run_in(&sb, &ws.0, PTRACE_CHILD, true);
    assert!(out.contains("ptrace -1 1"), "{out}");
    also_as_nobody("ptrace_is_denied_on_a_pty_too");
}

#[test]
fn nested_namespaces_are_denied() {
    need_bwrap!();
    let ws = Workspace::new("userns");
    let sb = sandbox(&ws.0, limits());
    let script = r#"unshare -U true && echo UNSHARED
/usr/bin/python3 -c '
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
# clone(CLONE_NEWUSER | SIGCHLD) with a null stack: fork-like if allowed.
r = libc.syscall(56 if ctypes.sizeof(ctypes.c_void_p) == 8 and __import__("platform").machine() == "x86_64" else 220, 0x10000000 | 17, 0, 0, 0, 0)
if r == 0:
    import os; os._exit(0)
print("clone", r, ctypes.get_errno())
r = libc.unshare(0x20000)  # CLONE_NEWNS
print("unshare", r, ctypes.get_errno())
'"#;
    let (_, _, out) = run(&sb, script);
    assert!(!out.contains("UNSHARED"), "{out}");
    assert!(out.contains("clone -1 1\n"), "{out}");
    assert!(out.contains("unshare -1 1\n"), "{out}");
    also_as_nobody("nested_namespaces_are_denied");
}

#[test]
fn terminal_input_injection_is_denied() {
    need_bwrap!();
    let ws = Workspace::new("tiocsti");
    let sb = sandbox(&ws.0, limits());
    let script = r#"/usr/bin/python3 -c '
import fcntl, termios, errno
for name, req in (("TIOCSTI", termios.TIOCSTI), ("TIOCLINUX", 0x541C)):
    try:
        fcntl.ioctl(0, req, b"\x06")
        print(name, "ok")
    except OSError as e:
        print(name, errno.errorcode[e.errno])
'"#;
    let (_, _, out) = run_in(&sb, &ws.0, script, true);
    // EPERM is the filter's answer (the tty layer's own refusal is EIO).
    assert!(out.contains("TIOCSTI EPERM"), "{out}");
    assert!(out.contains("TIOCLINUX EPERM"), "{out}");
    also_as_nobody("terminal_input_injection_is_denied");
}

/// A root-only file and directory under /etc for the test's life, and a
/// file only another user may read (root without capabilities cannot, so
/// it needs no mask).
struct EtcSecret(PathBuf, PathBuf, PathBuf);

impl EtcSecret {
    fn new() -> Option<EtcSecret> {
        if !is_root() {
            return None;
        }
        let f = PathBuf::from(format!("/etc/hermes-attack-key-{}", std::process::id()));
        let d = PathBuf::from(format!("/etc/hermes-attack-dir-{}", std::process::id()));
        std::fs::write(&f, "SECRET-FILE").ok()?;
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).ok()?;
        std::fs::create_dir_all(&d).ok()?;
        std::fs::write(d.join("inner"), "SECRET-DIR").ok()?;
        std::fs::set_permissions(d.join("inner"), std::fs::Permissions::from_mode(0o644)).ok()?;
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700)).ok()?;
        let o = PathBuf::from(format!("/etc/hermes-attack-other-{}", std::process::id()));
        std::fs::write(&o, "SECRET-OTHER").ok()?;
        std::fs::set_permissions(&o, std::fs::Permissions::from_mode(0o600)).ok()?;
        std::os::unix::fs::chown(&o, Some(12345), Some(12345)).ok()?;
        Some(EtcSecret(f, d, o))
    }
}

impl Drop for EtcSecret {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
        let _ = std::fs::remove_dir_all(&self.1);
        let _ = std::fs::remove_file(&self.2);
    }
}

#[test]
fn root_only_host_files_are_unreadable() {
    need_bwrap!();
    let secret = EtcSecret::new();
    let ws = Workspace::new("masks");
    let sb = sandbox(&ws.0, limits());
    if let Some(s) = &secret {
        assert!(
            sb.masked().iter().any(|m| m.path() == s.0),
            "not in masked()"
        );
    }
    let mut script = String::from(
        "for f in /etc/ssh/ssh_host_*_key /etc/shadow /etc/gshadow; do [ -e \"$f\" ] && cat \"$f\" 2>/dev/null | head -c 40; done; echo END\n",
    );
    if let Some(s) = &secret {
        script.push_str(&format!(
            "cat {} 2>/dev/null; cat {}/inner 2>/dev/null; cat {} 2>/dev/null; echo END2\n",
            s.0.display(),
            s.1.display(),
            s.2.display()
        ));
    }
    let (_, _, out) = run(&sb, &script);
    assert!(out.contains("END"), "{out}");
    assert!(!out.contains("PRIVATE KEY"), "{out}");
    assert!(!out.contains("root:"), "{out}");
    assert!(!out.contains("SECRET-"), "{out}");
    drop(secret);
    also_as_nobody("root_only_host_files_are_unreadable");
}

/// Red team 2026-11-28: a root host's sandbox read root-only files under
/// /usr (only /etc and /opt were walked for masks). Root hosts walk every
/// system folder once per process: the canaries are made first, then a
/// fresh test process (whose walk sees them) runs the sandbox.
#[test]
fn root_only_files_under_usr_are_masked_on_a_root_host() {
    need_bwrap!();
    const DIR_VAR: &str = "HERMES_SANDBOX_USR_CANARY";
    if let Some(dir) = std::env::var_os(DIR_VAR) {
        let dir = PathBuf::from(dir);
        let ws = Workspace::new("usr");
        let sb = sandbox(&ws.0, limits());
        let script = format!(
            "cat {0}/secret; cat {0}/private/inner; echo END",
            dir.display()
        );
        let (_, _, out) = run(&sb, &script);
        assert!(out.contains("END"), "{out}");
        assert!(!out.contains("USR-CANARY"), "{out}");
        return;
    }
    if !is_root() {
        eprintln!("skipped: only a root host's sandbox could read root-only files");
        return;
    }
    let base = Path::new("/usr/local/share");
    if std::fs::create_dir_all(base).is_err() {
        eprintln!("skipped: /usr/local/share is not writable");
        return;
    }
    let dir = base.join(format!("ht-attack-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("private")).unwrap();
    struct Gone(PathBuf);
    impl Drop for Gone {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
    let _gone = Gone(dir.clone());
    std::fs::write(dir.join("secret"), "USR-CANARY-1").unwrap();
    std::fs::set_permissions(dir.join("secret"), std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::write(dir.join("private/inner"), "USR-CANARY-2").unwrap();
    std::fs::set_permissions(
        dir.join("private/inner"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    std::fs::set_permissions(dir.join("private"), std::fs::Permissions::from_mode(0o700)).unwrap();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "root_only_files_under_usr_are_masked_on_a_root_host",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(DIR_VAR, &dir)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && text.contains("1 passed"), "{text}");
}

/// Forks until refused; at most 2000 (what an unlimited sandbox reaches).
const FORK_UNTIL_REFUSED: &str = r#"/usr/bin/python3 -c '
import os, time
n = 0
try:
    while n < 2000:
        pid = os.fork()
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        n += 1
    print("forked", n, "no error")
except OSError as e:
    print("forked", n, "error:", e.strerror)
'"#;

#[test]
fn process_count_is_limited() {
    need_bwrap!();
    let ws = Workspace::new("nproc");
    let sb = sandbox(
        &ws.0,
        SandboxLimits {
            max_processes: 64,
            ..limits()
        },
    );
    let (_, ended, out) = run(&sb, FORK_UNTIL_REFUSED);
    assert_eq!(ended, Ended::Exited, "{out}");
    assert!(
        out.contains("error: Resource temporarily unavailable"),
        "{out}"
    );
    let n: u32 = out
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(u32::MAX);
    // bash and python count too: fewer than the limit.
    assert!(n < 64, "{out}");
    also_as_nobody("process_count_is_limited");
}

#[test]
fn a_fork_bomb_is_contained_and_the_call_returns() {
    need_bwrap!();
    let ws = Workspace::new("bomb");
    let sb = sandbox(
        &ws.0,
        SandboxLimits {
            max_processes: 64,
            ..limits()
        },
    );
    // Only builtins after the bomb: the script itself never needs a fork.
    let script = "b(){ b | b & }; b 2>/dev/null; for ((i = 0; i < 300000; i++)); do :; done; \
                  p=(/proc/[0-9]*); echo procs=${#p[@]}";
    let (_, ended, out) = run(&sb, script);
    assert_eq!(ended, Ended::Exited, "{out}");
    let procs: usize = out
        .split("procs=")
        .nth(1)
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(usize::MAX);
    assert!(procs <= 66, "{out}");
    also_as_nobody("a_fork_bomb_is_contained_and_the_call_returns");
}

#[test]
fn memory_is_limited() {
    need_bwrap!();
    let ws = Workspace::new("mem");
    let sb = sandbox(
        &ws.0,
        SandboxLimits {
            memory_bytes: 256 << 20,
            ..limits()
        },
    );
    let script = r#"/usr/bin/python3 -c '
try:
    b = bytearray(768 * 1024 * 1024)
    print("allocated", len(b))
except MemoryError:
    print("MemoryError")
'"#;
    let (_, _, out) = run(&sb, script);
    assert!(out.contains("MemoryError"), "{out}");
    also_as_nobody("memory_is_limited");
}

/// Red team 2026-11-28: shared memory is not data (`RLIMIT_DATA`): a
/// 256 MiB sandbox touched 1 GiB of a `MAP_SHARED` anonymous mapping. On
/// a root host with a writable v1 memory hierarchy the sandbox's memory
/// cgroup counts it; elsewhere this is a documented limit (skipped).
#[test]
fn shared_memory_counts_against_the_limit_on_a_root_host() {
    need_bwrap!();
    if !is_root() || !Path::new("/sys/fs/cgroup/memory/memory.limit_in_bytes").exists() {
        eprintln!("skipped: no writable cgroup v1 memory hierarchy (documented limit)");
        return;
    }
    let ws = Workspace::new("shm");
    let sb = sandbox(
        &ws.0,
        SandboxLimits {
            memory_bytes: 256 << 20,
            ..limits()
        },
    );
    let script = r#"/usr/bin/python3 -c '
import mmap
m = mmap.mmap(-1, 1 << 30)
for i in range(0, 1 << 30, 4096):
    m[i] = 1
print("touched", 1 << 30)
'; echo "exit $?""#;
    let (_, _, out) = run(&sb, script);
    assert!(!out.contains("touched 1073741824"), "{out}");
    assert!(out.contains("exit 137"), "{out}");
}

#[test]
fn a_full_tmp_gives_no_space_left() {
    need_bwrap!();
    let ws = Workspace::new("tmp");
    let sb = sandbox(
        &ws.0,
        SandboxLimits {
            tmp_size_bytes: 8 << 20,
            ..limits()
        },
    );
    let (_, ended, out) = run(
        &sb,
        "head -c 32M /dev/zero > /tmp/fill; echo rc=$?; head -c 32M /dev/zero > /dev/shm/fill; echo shm=$?; \
         : > /dev/planted; echo dev=$?",
    );
    assert_eq!(ended, Ended::Exited, "{out}");
    assert!(out.contains("No space left on device"), "{out}");
    assert!(
        !out.contains("rc=0") && !out.contains("shm=0") && !out.contains("dev=0"),
        "{out}"
    );
    also_as_nobody("a_full_tmp_gives_no_space_left");
}

#[test]
fn file_size_and_cpu_time_are_limited() {
    need_bwrap!();
    let ws = Workspace::new("fsize");
    let sb = sandbox(
        &ws.0,
        SandboxLimits {
            file_size_bytes: 1 << 20,
            cpu_seconds: 1,
            ..limits()
        },
    );
    let (_, ended, out) = run(
        &sb,
        "head -c 4M /dev/zero > big; echo size=$(stat -c %s big); bash -c 'while :; do :; done'; echo cpu=$?",
    );
    assert_eq!(ended, Ended::Exited, "{out}");
    assert!(out.contains("File size limit exceeded"), "{out}");
    assert!(out.contains("size=1048576"), "{out}");
    // SIGXCPU (128 + 24) or, past the hard limit, SIGKILL (128 + 9).
    assert!(out.contains("cpu=152") || out.contains("cpu=137"), "{out}");
    also_as_nobody("file_size_and_cpu_time_are_limited");
}

fn git(dir: &Path, args: &[&str]) {
    let st = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .expect("git");
    assert!(st.status.success(), "git {args:?}: {st:?}");
}

#[test]
fn repository_metadata_cannot_be_planted() {
    need_bwrap!();
    if std::process::Command::new("git")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: no git");
        return;
    }
    let ws = Workspace::new("git");
    git(&ws.0, &["init", "-q"]);
    // A nested repository under the cwd path, and an .envrc.
    let sub = ws.0.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    git(&sub, &["init", "-q"]);
    std::fs::write(ws.0.join(".envrc"), "export A=1\n").unwrap();
    let before = std::fs::read_to_string(ws.0.join(".git/config")).unwrap();
    let sub_before = std::fs::read_to_string(sub.join(".git/config")).unwrap();
    let sb = sandbox(&ws.0, limits());
    let script = "git config core.fsmonitor 'touch MARKER #'; echo cfg=$?; \
                  git -C .. config core.fsmonitor 'touch MARKER #'; echo parent=$?; \
                  echo 'touch MARKER' > ../.git/hooks/post-checkout; echo hook=$?; \
                  echo 'touch MARKER' >> ../.envrc; echo envrc=$?; \
                  echo ok > file; echo workspace=$?";
    let (_, _, out) = run_in(&sb, &sub, script, false);
    assert!(out.contains("cfg=") && !out.contains("cfg=0"), "{out}");
    assert!(!out.contains("parent=0"), "{out}");
    assert!(!out.contains("hook=0"), "{out}");
    assert!(!out.contains("envrc=0"), "{out}");
    // The workspace itself stays writable.
    assert!(out.contains("workspace=0"), "{out}");
    assert_eq!(
        std::fs::read_to_string(ws.0.join(".git/config")).unwrap(),
        before
    );
    assert_eq!(
        std::fs::read_to_string(sub.join(".git/config")).unwrap(),
        sub_before
    );
    assert!(!ws.0.join(".git/hooks/post-checkout").exists());
    // Red team 2026-11-28: a nested repository beside the cwd (a vendored
    // clone) was writable: `git -C vendor/dep config core.fsmonitor ...`.
    let dep = ws.0.join("vendor/dep");
    std::fs::create_dir_all(&dep).unwrap();
    git(&dep, &["init", "-q"]);
    std::fs::create_dir_all(ws.0.join("deep/a/b/c")).unwrap();
    std::fs::write(ws.0.join("deep/a/b/c/.envrc"), "").unwrap();
    let dep_before = std::fs::read_to_string(dep.join(".git/config")).unwrap();
    let sb = sandbox(&ws.0, limits());
    let script = "git -C vendor/dep config core.fsmonitor 'touch MARKER #'; echo dep=$?;                   echo 'touch MARKER' > vendor/dep/.git/hooks/pre-commit; echo dephook=$?;                   echo x >> deep/a/b/c/.envrc; echo deep=$?";
    let (_, _, out) = run_in(&sb, &ws.0, script, false);
    assert!(out.contains("dep=") && !out.contains("dep=0"), "{out}");
    assert!(!out.contains("dephook=0"), "{out}");
    assert!(!out.contains("deep=0"), "{out}");
    assert_eq!(
        std::fs::read_to_string(dep.join(".git/config")).unwrap(),
        dep_before
    );
    // Round 2: a `.git` file pointing at a git directory of another name
    // (`git init --separate-git-dir`): the pointer was read-only, the
    // repository it names writable. And a bare repository.
    let lib = ws.0.join("vendor/lib");
    std::fs::create_dir_all(&lib).unwrap();
    let data = ws.0.join("vendor-gitdata");
    git(
        &lib,
        &["init", "-q", "--separate-git-dir", data.to_str().unwrap()],
    );
    let bare = ws.0.join("mirror.git");
    std::fs::create_dir_all(&bare).unwrap();
    git(&bare, &["init", "-q", "--bare"]);
    let data_before = std::fs::read_to_string(data.join("config")).unwrap();
    let bare_before = std::fs::read_to_string(bare.join("config")).unwrap();
    for cwd in [ws.0.clone(), lib.clone()] {
        let sb = sandbox(&ws.0, limits());
        let script = "printf '[core]\\n\\tfsmonitor = touch MARKER #\\n' >> $W/vendor-gitdata/config; echo data=$?; \
                      echo x > $W/vendor-gitdata/hooks/pre-commit; echo datahook=$?; \
                      printf '[core]\\n\\tfsmonitor = touch MARKER #\\n' >> $W/mirror.git/config; echo bare=$?"
            .replace("$W", &ws.0.display().to_string());
        let (_, _, out) = run_in(&sb, &cwd, &script, false);
        assert!(out.contains("data=") && !out.contains("data=0"), "{out}");
        assert!(!out.contains("datahook=0"), "{out}");
        assert!(out.contains("bare=") && !out.contains("bare=0"), "{out}");
    }
    assert_eq!(
        std::fs::read_to_string(data.join("config")).unwrap(),
        data_before
    );
    assert_eq!(
        std::fs::read_to_string(bare.join("config")).unwrap(),
        bare_before
    );
    also_as_nobody("repository_metadata_cannot_be_planted");
}

/// With the network on, the sandbox shares the host's network namespace and
/// so its abstract unix sockets (X11's, D-Bus's, an IDE's): Landlock's
/// scoping keeps the command to its own. And the command cannot signal
/// (stop, kill) the process shim above it, nor write outside the writable
/// areas even where a mount would allow it.
#[test]
fn landlock_scopes_sockets_and_signals() {
    need_bwrap!();
    if hermes_exec::sandbox::landlock_abi().is_none_or(|v| v < 6) {
        eprintln!("skipped: Landlock ABI 6 (scoping) not available");
        return;
    }
    let ws = Workspace::new("landlock");
    let name = format!("hermes-attack-{}", std::process::id());
    let listener = std::os::unix::net::UnixListener::bind_addr(
        &<std::os::unix::net::SocketAddr as std::os::linux::net::SocketAddrExt>::from_abstract_name(
            name.as_bytes(),
        )
        .unwrap(),
    )
    .unwrap();
    let sb = Sandbox::new(&SandboxConfig {
        root: ws.0.clone(),
        network: true,
        limits: limits(),
        ..SandboxConfig::default()
    })
    .expect("sandbox");
    let script = format!(
        r#"/usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(b"\0{name}")
    print("connected")
except OSError as e:
    print("refused", e.errno)
'; kill -STOP $PPID 2>/dev/null; echo "stop $?"; kill -0 $PPID 2>/dev/null; echo "signal0 $?"; echo fine > ok && cat ok"#
    );
    let (code, _, out) = run(&sb, &script);
    drop(listener);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("refused 1\n"),
        "the host's abstract socket was reachable: {out}"
    );
    assert!(
        out.contains("stop 1\n"),
        "the command stopped its parent: {out}"
    );
    assert!(out.contains("signal0 1\n"), "{out}");
    assert!(out.contains("fine\n"), "{out}");
    also_as_nobody("landlock_scopes_sockets_and_signals");
}

/// Red team 2026-11-28: a descriptor the host holds without close-on-exec
/// (`hermes-tools call ... 7</etc/shadow`, a C host's plain open(), a
/// connected socket) reached the sandboxed command through bubblewrap:
/// `cat <&7` read a file the sandbox masks, `>&9` wrote into a host file.
#[test]
fn host_descriptors_never_reach_a_sandboxed_command() {
    need_bwrap!();
    use std::os::fd::AsRawFd;
    let ws = Workspace::new("fds");
    let outside = Workspace::new("fds-outside");
    let secret = outside.0.join("secret");
    std::fs::write(&secret, "FD-CANARY\n").unwrap();
    let f = std::fs::File::open(&secret).unwrap();
    let w = std::fs::OpenOptions::new()
        .append(true)
        .open(outside.0.join("written"))
        .or_else(|_| std::fs::File::create(outside.0.join("written")))
        .unwrap();
    // Hold both without close-on-exec, as a careless host would.
    for fd in [f.as_raw_fd(), w.as_raw_fd()] {
        // SAFETY: F_SETFD on descriptors this test owns; no memory involved.
        assert_eq!(unsafe { libc::fcntl(fd, libc::F_SETFD, 0) }, 0);
    }
    let sb = sandbox(&ws.0, limits());
    let script = format!(
        "cat <&{r} ; echo PWNED >&{w} ; ls /proc/self/fd | tr '\n' ' '",
        r = f.as_raw_fd(),
        w = w.as_raw_fd()
    );
    let (_, _, out) = run(&sb, &script);
    assert!(!out.contains("FD-CANARY"), "{out}");
    assert_eq!(
        std::fs::read_to_string(outside.0.join("written")).unwrap(),
        ""
    );
    // stdin, stdout, stderr and ls's own directory descriptor: nothing else.
    assert_eq!(out.lines().last().unwrap_or("").trim(), "0 1 2 3", "{out}");
    // A background command (the shim outside keeps bwrap's seccomp
    // descriptor, the shim inside closes everything).
    let got = spawn_collect(&sb, &script, &ws.0, &path_only(), false, true);
    assert!(!got.contains("FD-CANARY"), "{got}");
    assert_eq!(got.lines().last().unwrap_or("").trim(), "0 1 2 3", "{got}");
    // The local backend too: the same shim starts every command.
    let out = spawn_collect(
        &hermes_exec::local::Local,
        &script,
        &ws.0,
        &path_only(),
        false,
        false,
    );
    assert!(!out.contains("FD-CANARY"), "{out}");
    assert_eq!(
        std::fs::read_to_string(outside.0.join("written")).unwrap(),
        ""
    );
    also_as_nobody("host_descriptors_never_reach_a_sandboxed_command");
}

/// Red team 2026-11-28 (round 5): renaming a nested repository's parent
/// (`mv sub sub2`) left the next command free to write `sub2/.git/hooks`
/// (the repositories were known by their paths at the sandbox's start);
/// the host's next `git commit` there ran the hook. A bare repository the
/// same. Moved ones are found again.
#[test]
fn a_renamed_nested_repository_stays_read_only() {
    need_bwrap!();
    if std::process::Command::new("git")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: no git");
        return;
    }
    let ws = Workspace::new("nested-mv");
    git(&ws.0, &["init", "-q"]);
    std::fs::create_dir_all(ws.0.join("sub")).unwrap();
    git(&ws.0.join("sub"), &["init", "-q"]);
    std::fs::create_dir_all(ws.0.join("vendor/lib.git")).unwrap();
    git(&ws.0.join("vendor/lib.git"), &["init", "-q", "--bare"]);
    let sb = sandbox(&ws.0, limits());
    let (_, _, out) = run(
        &sb,
        "mv sub sub2; echo mv=$?; mv vendor vendor2; echo mv2=$?",
    );
    assert!(out.contains("mv=0") && out.contains("mv2=0"), "{out}");
    let (_, _, out) = run(
        &sb,
        "echo x > sub2/.git/hooks/pre-commit; echo hook=$?; echo x >> vendor2/lib.git/config; echo bare=$?",
    );
    assert!(out.contains("hook=") && !out.contains("hook=0"), "{out}");
    assert!(out.contains("bare=") && !out.contains("bare=0"), "{out}");
    assert!(!ws.0.join("sub2/.git/hooks/pre-commit").exists());
    also_as_nobody("a_renamed_nested_repository_stays_read_only");
}

/// Red team 2026-11-28 (round 4): a workspace of `/tmp` let a command
/// replace the process shim (its folder is the user's, under /tmp), which
/// the next background command ran outside the sandbox, as root on a root
/// host; and rewrite the PTY path's seccomp program file.
#[test]
fn a_writable_area_holding_the_runtimes_helpers_is_refused() {
    need_bwrap!();
    for root in ["/tmp", "/"] {
        let e = Sandbox::new(&SandboxConfig {
            root: PathBuf::from(root),
            ..SandboxConfig::default()
        })
        .err()
        .unwrap_or_else(|| panic!("a sandbox with {root} writable was built"));
        assert!(e.contains("helpers"), "{e}");
    }
    let ws = Workspace::new("helpers");
    let e = Sandbox::new(&SandboxConfig {
        root: ws.0.clone(),
        rw_binds: vec![PathBuf::from("/tmp")],
        ..SandboxConfig::default()
    })
    .err()
    .expect("/tmp as a writable bind was accepted");
    assert!(e.contains("helpers"), "{e}");
}

/// Red team 2026-11-28 (round 4): on the PTY path protected entries were
/// bound by path after a check, and a background process swapping
/// `.vscode` with a symlink to a host folder won the race in 15 of 60
/// commands (the host folder appeared in the sandbox).
#[test]
fn the_pty_path_binds_what_it_checked() {
    need_bwrap!();
    let ws = Workspace::new("ptyrace");
    let outside = Workspace::new("ptyrace-outside");
    std::fs::write(outside.0.join("key"), "PTY-RACE-CANARY").unwrap();
    std::fs::create_dir_all(ws.0.join(".vscode")).unwrap();
    std::fs::write(ws.0.join(".vscode/key"), "inside").unwrap();
    std::os::unix::fs::symlink(&outside.0, ws.0.join("alt")).unwrap();
    let sb = sandbox(&ws.0, limits());
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (a, b) = (ws.0.join(".vscode"), ws.0.join("alt"));
    let st = stop.clone();
    let swapper = std::thread::spawn(move || {
        while !st.load(std::sync::atomic::Ordering::Relaxed) {
            let _ = rustix::fs::renameat_with(
                rustix::fs::CWD,
                &a,
                rustix::fs::CWD,
                &b,
                rustix::fs::RenameFlags::EXCHANGE,
            );
            std::thread::sleep(Duration::from_micros(300));
        }
    });
    let mut leaked = 0;
    for _ in 0..40 {
        let (_, _, out) = run_in(
            &sb,
            &ws.0,
            "cat .vscode/key alt/key 2>/dev/null; echo",
            true,
        );
        if out.contains("PTY-RACE-CANARY") {
            // `alt` may be the real folder's name at that moment; only a
            // bind of the outside folder shows the canary under .vscode.
            if out.lines().next().unwrap_or("").contains("PTY-RACE-CANARY") {
                leaked += 1;
            }
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    swapper.join().unwrap();
    assert_eq!(
        leaked, 0,
        "the host folder was bound into the sandbox {leaked} times"
    );
}

/// Red team 2026-11-28 (round 3): the task's cwd comes from state the
/// command wrote; `PWD=$PWD/../../../root/proj` passed for a path inside
/// the workspace (Path::starts_with keeps `..`), and the protected-entry
/// walk bound that folder's `.envrc` and `.git` into the sandbox, which
/// otherwise cannot see it (a masked `/etc/.git` too).
#[test]
fn a_forged_cwd_exposes_nothing_outside_the_workspace() {
    need_bwrap!();
    let ws = Workspace::new("dotdot");
    let outside = Workspace::new("dotdot-outside");
    let proj = outside.0.join("proj");
    std::fs::create_dir_all(proj.join(".git")).unwrap();
    std::fs::write(proj.join(".envrc"), "export TOKEN=DOTDOT-CANARY\n").unwrap();
    std::fs::write(
        proj.join(".git/config"),
        "[remote] url = https://x:DOTDOT-CANARY@h\n",
    )
    .unwrap();
    std::fs::set_permissions(&outside.0, std::fs::Permissions::from_mode(0o700)).unwrap();
    let sb = sandbox(&ws.0, limits());
    let ups = "../".repeat(ws.0.components().count());
    let forged = ws.0.join(format!(
        "{ups}{}",
        proj.display().to_string().trim_start_matches('/')
    ));
    let (_, _, out) = run_in(
        &sb,
        &forged,
        "cat .envrc .git/config 2>&1; pwd; echo END",
        false,
    );
    assert!(out.contains("END"), "{out}");
    assert!(!out.contains("DOTDOT-CANARY"), "{out}");
}

/// Red team 2026-11-28 (round 3): a `.git` file whose gitdir's `commondir`
/// is a FIFO hung the host (the runtime read it before every command); one
/// pointing at /dev/zero flooded its memory.
#[test]
fn planted_git_pointer_files_cannot_hang_or_flood_the_host() {
    need_bwrap!();
    let ws = Workspace::new("gitfifo");
    std::fs::create_dir_all(ws.0.join("gd")).unwrap();
    std::fs::write(ws.0.join(".git"), "gitdir: gd\n").unwrap();
    let fifo = std::ffi::CString::new(ws.0.join("gd/commondir").display().to_string()).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path; no memory is shared.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    std::fs::create_dir_all(ws.0.join("z")).unwrap();
    std::fs::write(ws.0.join("z/.git"), "gitdir: ../zd\n").unwrap();
    std::fs::create_dir_all(ws.0.join("zd")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", ws.0.join("zd/commondir")).unwrap();
    let root = ws.0.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let sb = sandbox(&root, limits());
        let r1 = run_in(&sb, &root, "echo one", false);
        let r2 = run_in(&sb, &root.join("z"), "echo two", false);
        let _ = tx.send((r1.2, r2.2));
    });
    let (one, two) = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the runtime hung on a planted FIFO");
    assert!(one.contains("one"), "{one}");
    assert!(two.contains("two"), "{two}");
}

/// Red team 2026-11-28 (round 2): a variable the command exported (the
/// task's captured state) reached the environment of the host-side bwrap:
/// `LD_PRELOAD=$PWD/evil.so` ran the command's library on the host, outside
/// the sandbox, with the host's rights. Now loader variables reach the
/// command only through bwrap's `--setenv`.
#[test]
fn loader_variables_never_reach_the_host_side_processes() {
    need_bwrap!();
    let ws = Workspace::new("preload");
    let outside = Workspace::new("preload-outside");
    let mark = outside.0.join("mark");
    let src = ws.0.join("evil.c");
    std::fs::write(
        &src,
        format!(
            "#include <stdio.h>\n__attribute__((constructor)) static void pwn(void) {{ FILE *f = fopen(\"{}\", \"a\"); if (f) {{ fputs(\"ran\\n\", f); fclose(f); }} }}\n",
            mark.display()
        ),
    )
    .unwrap();
    let so = ws.0.join("evil.so");
    let built = std::process::Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&so)
        .arg(&src)
        .status()
        .is_ok_and(|s| s.success());
    if !built {
        eprintln!("skipped: no C compiler");
        return;
    }
    // Readable by nobody too (the nested run).
    std::fs::set_permissions(&ws.0, std::fs::Permissions::from_mode(0o755)).unwrap();
    let sb = sandbox(&ws.0, limits());
    for pty in [false, true] {
        for linger in [false, true] {
            let so_s = so.display().to_string();
            let env = vec![
                ("PATH".to_string(), "/usr/bin:/bin".to_string()),
                ("LD_PRELOAD".to_string(), so_s.clone()),
                ("GCONV_PATH".to_string(), ws.0.display().to_string()),
            ];
            let out = spawn_collect(
                &sb,
                "echo \"preload=$LD_PRELOAD\"",
                &ws.0,
                &env,
                pty,
                linger,
            );
            // The command still has its variable...
            assert!(
                out.contains(&format!("preload={so_s}")),
                "pty {pty} linger {linger}: {out}"
            );
            // ...and nothing of it ran on the host.
            assert!(
                !mark.exists(),
                "pty {pty} linger {linger}: the library ran outside the sandbox: {}",
                std::fs::read_to_string(&mark).unwrap_or_default()
            );
        }
    }
    also_as_nobody("loader_variables_never_reach_the_host_side_processes");
}

/// Red team 2026-11-28: on a root host the sandbox's uid is root's; a
/// set-user-ID copy of bash made inside (through python's os.chmod, not
/// the `chmod 4755` an approval rule names) was a root shell for any local
/// user. Every call that sets a mode refuses the set-id bits.
#[test]
fn set_id_files_cannot_be_made() {
    need_bwrap!();
    let ws = Workspace::new("setid");
    let sb = sandbox(&ws.0, limits());
    let script = r#"cp /bin/sh ./sh2
chmod 4755 ./sh2; echo "chmod $?"
chmod g+s ./sh2; echo "chmod-g $?"
/usr/bin/python3 -c '
import os
try:
    os.chmod("sh2", 0o4755); print("py ok")
except OSError as e: print("py", e.errno)
try:
    fd = os.open("sh3", os.O_CREAT | os.O_WRONLY, 0o6755); print("open ok")
except OSError as e: print("open", e.errno)
'
stat -c %a ./sh2"#;
    let (_, _, out) = run(&sb, script);
    assert!(
        out.contains(
            "py 1
"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "open 1
"
        ),
        "{out}"
    );
    assert!(
        !out.contains(
            "chmod 0
"
        ) && !out.contains(
            "chmod-g 0
"
        ),
        "{out}"
    );
    use std::os::unix::fs::MetadataExt;
    let mode = std::fs::metadata(ws.0.join("sh2")).unwrap().mode();
    assert_eq!(mode & 0o6000, 0, "{mode:o}");
    assert!(!ws.0.join("sh3").exists());
    also_as_nobody("set_id_files_cannot_be_made");
}

#[test]
fn ordinary_commands_still_work() {
    need_bwrap!();
    let ws = Workspace::new("ok");
    let sb = sandbox(&ws.0, limits());
    // Threads (clone without namespace flags, clone3 falling back), a pipe
    // and a subshell, a file in the workspace and in /tmp.
    let script = "echo hi | tr a-z A-Z; (echo sub); echo x > w && cat w; echo t > /tmp/t && cat /tmp/t; \
                  /usr/bin/python3 -c 'import threading; t = threading.Thread(target=print, args=(\"thread\",)); t.start(); t.join()'";
    let (code, _, out) = run(&sb, script);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out, "HI\nsub\nx\nt\nthread\n");
    also_as_nobody("ordinary_commands_still_work");
}

/// `echo hi` through `Sandbox::spawn` against a bare bwrap with the same
/// binds, spawned and pumped the same way. Prints the figures; `--ignored`
/// (a measurement, not a check).
#[test]
#[ignore]
fn measure_echo_hi() {
    need_bwrap!();
    let ws = Workspace::new("bench");
    let sb = sandbox(&ws.0, limits());
    let env: Vec<(String, String)> = vec![("PATH".into(), "/usr/bin:/bin".into())];
    let req = SpawnRequest {
        script: "echo hi",
        cwd: &ws.0,
        env: &env,
        pty: false,
        extra_rw: &[],
        task: "",
        linger: false,
    };
    // The old argv: same system binds, /proc, /dev, /tmp, /run, workspace.
    let root = ws.0.display().to_string();
    let mut bare: Vec<String> = vec![
        hermes_exec::sandbox::find_bwrap()
            .unwrap()
            .display()
            .to_string(),
    ];
    for d in [
        "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
    ] {
        let p = Path::new(d);
        if let Ok(t) = std::fs::read_link(p) {
            bare.extend(["--symlink".into(), t.display().to_string(), d.into()]);
        } else if p.is_dir() {
            bare.extend(["--ro-bind".into(), d.into(), d.into()]);
        }
    }
    for a in [
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--tmpfs",
        "/tmp",
        "--tmpfs",
        "/run",
        "--ro-bind",
        "/proc/sys",
        "/proc/sys",
        "--bind",
        &root,
        &root,
        "--chdir",
        &root,
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--unshare-net",
        "--unshare-user",
    ] {
        bare.push(a.into());
    }
    if is_root() {
        bare.extend(["--uid", "0", "--gid", "0", "--cap-drop", "ALL"].map(String::from));
    }
    bare.extend(["--new-session", "--", "/bin/bash", "-c", "echo hi"].map(String::from));
    // The same sandbox without the per-command pids cgroup (root hosts).
    let sb_nocg = sandbox(
        &ws.0,
        SandboxLimits {
            max_processes: 0,
            ..limits()
        },
    );
    // Arguments naming the masks, to report what they cost.
    let mut nomask = Vec::new();
    let full = sb.argv(&req, None);
    let mut it = full.iter().peekable();
    while let Some(a) = it.next() {
        match (a.as_str(), it.peek().map(|s| s.as_str())) {
            ("--ro-bind", Some("/dev/null")) => drop((it.next(), it.next())),
            ("--perms", Some("0000")) => drop((it.next(), it.next(), it.next())),
            _ => nomask.push(a.clone()),
        }
    }
    let opts = PumpOpts::default();
    let time = |f: &dyn Fn() -> hermes_exec::Spawned| -> Duration {
        let t = std::time::Instant::now();
        let sp = f();
        let mut out = Vec::new();
        let (code, _) = pump(sp.pid, &sp.output, &sb, &opts, &mut |d| {
            out.extend_from_slice(d)
        });
        assert_eq!((code, out.as_slice()), (0, &b"hi\n"[..]));
        t.elapsed()
    };
    let spawn_argv = |argv: &[String]| hermes_exec::local::spawn_argv(argv, &req).unwrap();
    let runs: [(&str, &dyn Fn() -> hermes_exec::Spawned); 5] = [
        ("bare bwrap", &|| spawn_argv(&bare)),
        ("Sandbox::spawn", &|| sb.spawn(&req).unwrap()),
        ("Sandbox::spawn, no pids cgroup", &|| {
            sb_nocg.spawn(&req).unwrap()
        }),
        ("sandbox argv without seccomp", &|| spawn_argv(&full)),
        ("sandbox argv without masks or seccomp", &|| {
            spawn_argv(&nomask)
        }),
    ];
    let n = 100;
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); runs.len()];
    for round in 0..n + 5 {
        for (k, (_, f)) in runs.iter().enumerate() {
            let d = time(*f);
            if round >= 5 {
                times[k].push(d);
            }
        }
    }
    let medians: Vec<Duration> = times
        .iter_mut()
        .map(|v| {
            v.sort();
            v[n / 2]
        })
        .collect();
    eprintln!(
        "echo hi, {n} interleaved rounds, {} masks, uid {}:",
        sb.masked().len(),
        if is_root() { 0 } else { 1 }
    );
    for ((name, _), m) in runs.iter().zip(&medians) {
        eprintln!(
            "  {name}: median {:?} ({:.3}x bare)",
            m,
            m.as_secs_f64() / medians[0].as_secs_f64()
        );
    }
}

/// The probe `auto` and `doctor` decide on must say "usable" wherever
/// bubblewrap runs: a probe over the temporary folder itself (which a
/// sandbox refuses, since it holds the runtime's helpers) made `auto`
/// fall back to running commands unsandboxed and turned every test that
/// asks the probe into a silent skip.
#[test]
fn the_probe_says_usable_where_bubblewrap_runs() {
    need_bwrap!();
    if let Err(why) = hermes_exec::sandbox::usable() {
        panic!("bubblewrap runs here, yet the probe says: {why}");
    }
}
