//! A [`FileSystem`] for backends whose files are on the far side of a
//! connection (ssh, a container): every operation is a small POSIX shell
//! script run there through a [`RemoteShell`] (GNU coreutils and findutils
//! assumed, as on any Linux host). Kept apart from the backends so ssh and
//! docker/podman share it: a backend only says how to run a script.
//!
//! Writes are atomic on the far side: the data goes to a temporary file in
//! the target's folder (`mktemp`), gets its mode, then `mv -f` replaces the
//! target. Paths are passed as single-quoted words, never interpolated.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::fs::{Entry, FileSystem, Meta, WalkedFile};
use crate::spawn::SpawnRequest;
use crate::tree::MARK_VAR;

pub use crate::fs::types::WALK_MAX_TOTAL;

/// The remote walker: one perl process (perl-base is part of every Debian
/// and Ubuntu system, and of git's dependencies elsewhere) that prints
/// `path NUL mtime NUL length NUL bytes` for each regular file, binary safe
/// and without races between listing and reading.
const WALK_PL: &str = r#"use strict; use File::Find; use Time::HiRes qw(stat);
my ($root, $want, $max, $cap) = @ARGV; binmode STDOUT; my $tot = 0;
find({no_chdir => 1, wanted => sub {
  my $p = $File::Find::name; my @parts = split m{/}, $p; my $b = $parts[-1];
  if ($p ne $root && defined $b && $b =~ /^\./) { $File::Find::prune = 1 if -d $p; return; }
  return unless -f $p; my @st = stat($p); my $d = "";
  if ($want) { return if $st[7] > $max; open(my $fh, "<:raw", $p) or return; local $/; $d = <$fh>; close $fh; $d = "" unless defined $d;
    $tot += length $d; if ($tot > $cap) { print STDERR "more than $cap bytes to search: narrow the path or use file_glob
"; exit 3; } }
  printf "%s\0%.9f\0%d\0", $p, $st[9], length $d; print $d;
}}, $root);
"#;

/// What a script run on the far side returned.
pub struct ScriptOutput {
    /// Exit status (255 or -1 when the connection itself failed).
    pub code: i32,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// A way to run a short `bash` script where task `task`'s commands run
/// (over its connection, in its container), with `stdin` fed to it.
pub trait RemoteShell: Send + Sync {
    fn run_script(&self, task: &str, script: &str, stdin: &[u8]) -> io::Result<ScriptOutput>;
    /// Where, for messages (`ssh root@host:22`).
    fn label(&self) -> String;
}

/// What a remote backend learns about the far side on first use.
pub struct Boot {
    /// The login's exported variables (minus the backend's `not_state`).
    pub env: Vec<(String, String)>,
    pub home: String,
    /// A private folder there (`mktemp -d`).
    pub dir: PathBuf,
}

/// Run by a login bash on the far side: a private folder, then the
/// environment, after a marker (a profile may print first).
pub const BOOT_SCRIPT: &str = "d=$(mktemp -d \"${TMPDIR:-/tmp}/hermes-tools.XXXXXXXX\") || exit 1\n\
     printf '\\0__HT_BOOT__\\0%s\\0' \"$d\"; env -0";

/// [`BOOT_SCRIPT`] for a folder made elsewhere (a container's, made by its
/// entry point so every task's container has it).
pub fn boot_script_with_dir(dir: &str) -> String {
    format!(
        "d={}; mkdir -p -m 700 -- \"$d\" || exit 1\nprintf '\\0__HT_BOOT__\\0%s\\0' \"$d\"; env -0",
        shq(dir)
    )
}

/// Read [`BOOT_SCRIPT`]'s output, leaving out the variables in `not_state`.
pub fn parse_boot(stdout: &[u8], not_state: &[&str]) -> io::Result<Boot> {
    let marker = b"\0__HT_BOOT__\0";
    let at = stdout
        .windows(marker.len())
        .position(|w| w == marker)
        .ok_or_else(|| io::Error::other("unreadable answer from the remote side"))?;
    let mut parts = stdout[at + marker.len()..].split(|b| *b == 0);
    let dir = PathBuf::from(String::from_utf8_lossy(parts.next().unwrap_or(b"")).into_owned());
    let mut env = Vec::new();
    for kv in parts {
        let kv = String::from_utf8_lossy(kv);
        if let Some((k, v)) = kv.split_once('=')
            && !not_state.contains(&k)
            && valid_name(k)
        {
            env.push((k.to_string(), v.to_string()));
        }
    }
    let home = env
        .iter()
        .find(|(k, _)| k == "HOME")
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| "/".into());
    Ok(Boot { env, home, dir })
}

/// Run a client command (`ssh ...`, `docker exec ...`) to the end: `stdin`
/// written by a thread while stdout and stderr are read, so no pipe fills.
pub fn run_capture(mut cmd: std::process::Command, stdin: &[u8]) -> io::Result<ScriptOutput> {
    use std::io::{Read, Write};
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut sin = child.stdin.take();
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        if let Some(s) = sin.as_mut() {
            let _ = s.write_all(&data);
        }
    });
    let mut errpipe = child.stderr.take();
    let errt = std::thread::spawn(move || {
        let mut err = Vec::new();
        if let Some(e) = errpipe.as_mut() {
            let _ = e.read_to_end(&mut err);
        }
        err
    });
    let mut out = Vec::new();
    if let Some(o) = child.stdout.as_mut() {
        o.read_to_end(&mut out)?;
    }
    let status = child.wait()?;
    let _ = writer.join();
    let stderr = errt.join().unwrap_or_default();
    Ok(ScriptOutput {
        code: status.code().unwrap_or(-1),
        stdout: out,
        stderr,
    })
}

/// A name a shell can export.
pub fn valid_name(k: &str) -> bool {
    !k.is_empty()
        && !k.as_bytes()[0].is_ascii_digit()
        && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The bash script a remote backend runs for one command: stderr merged
/// into stdout in order (ssh and `docker exec` carry them on separate
/// channels, which a client interleaves at random), the far side's
/// environment replaced by the request's, the task's directory, the
/// command in a child bash, then the rest of its process group killed so
/// nothing it left behind outlives the call. The backend starts it with
/// `HERMES_TOOLS_TREE` already set, as the mark its kill finds.
pub fn command_script(req: &SpawnRequest<'_>) -> String {
    let mut s = String::with_capacity(req.script.len() + 4096);
    s.push_str("exec 2>&1\n");
    s.push_str(
        "for __ht_v in $(builtin compgen -e); do case $__ht_v in HERMES_TOOLS_TREE|SSH_CLIENT|SSH_CONNECTION|SSH_TTY|SSH_AUTH_SOCK) ;; *) builtin unset -v \"$__ht_v\" 2>/dev/null;; esac; done; builtin unset -v __ht_v\n",
    );
    for (k, v) in req.env {
        if valid_name(k) && k != MARK_VAR && !k.starts_with("SSH_") {
            s.push_str("builtin export ");
            s.push_str(k);
            s.push('=');
            s.push_str(&shq(v));
            s.push('\n');
        }
    }
    let cwd = shq(&req.cwd.to_string_lossy());
    s.push_str(&format!(
        "builtin cd -- {cwd} 2>/dev/null || builtin cd 2>/dev/null\n\"$BASH\" --norc -c {}\n__ht_ec=$?\n\
         builtin trap '' TERM\nbuiltin kill -TERM -- -$$ 2>/dev/null\nbuiltin exit $__ht_ec\n",
        shq(req.script)
    ));
    s
}

/// Read (at most `max` bytes) and remove a regular file through `shell`
/// (a symlink is refused): the terminal's state capture on a remote side.
pub fn take_file(shell: &dyn RemoteShell, task: &str, path: &Path, max: u64) -> Option<Vec<u8>> {
    let f = shq(&path.to_string_lossy());
    let out = shell
        .run_script(
            task,
            &format!("[ -f {f} ] && [ ! -L {f} ] || exit 1; head -c {max} -- {f}; rm -f -- {f}"),
            b"",
        )
        .ok()?;
    (out.code == 0).then_some(out.stdout)
}

/// Whether `path` is a directory on the remote side.
pub fn is_dir(shell: &dyn RemoteShell, task: &str, path: &Path) -> bool {
    shell
        .run_script(
            task,
            &format!("[ -d {} ]", shq(&path.to_string_lossy())),
            b"",
        )
        .is_ok_and(|o| o.code == 0)
}

/// Single-quote a word for a POSIX shell.
pub fn shq(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

fn p(path: &Path) -> String {
    shq(&path.to_string_lossy())
}

/// One task's files reached through a [`RemoteShell`] (its connection or
/// container).
pub struct RemoteFs {
    shell: Arc<dyn RemoteShell>,
    task: String,
    name: &'static str,
}

impl RemoteFs {
    pub fn new(shell: Arc<dyn RemoteShell>, task: &str, name: &'static str) -> RemoteFs {
        RemoteFs {
            shell,
            task: task.to_string(),
            name,
        }
    }

    /// Run `script`; a non-zero exit becomes an error whose kind follows
    /// the message (`No such file` -> NotFound, ...).
    fn run(&self, script: &str, stdin: &[u8]) -> io::Result<ScriptOutput> {
        let out = self.shell.run_script(&self.task, script, stdin)?;
        if out.code == 0 {
            return Ok(out);
        }
        Err(self.error(&out))
    }

    fn error(&self, out: &ScriptOutput) -> io::Error {
        let msg = String::from_utf8_lossy(&out.stderr).trim().to_string();
        let kind = if msg.contains("No such file") || msg.contains("cannot stat") {
            io::ErrorKind::NotFound
        } else if msg.contains("Permission denied") || msg.contains("Read-only file system") {
            io::ErrorKind::PermissionDenied
        } else if msg.contains("File exists") {
            io::ErrorKind::AlreadyExists
        } else if msg.contains("Directory not empty") {
            io::ErrorKind::DirectoryNotEmpty
        } else if msg.contains("Is a directory") {
            io::ErrorKind::IsADirectory
        } else if msg.contains("Not a directory") {
            io::ErrorKind::NotADirectory
        } else {
            io::ErrorKind::Other
        };
        let first = msg.lines().last().unwrap_or("").to_string();
        let text = if first.is_empty() {
            format!("{}: exit status {}", self.shell.label(), out.code)
        } else {
            // `ssh ...: No such file or directory` reads like the local error
            first
        };
        io::Error::new(kind, text)
    }
}

impl FileSystem for RemoteFs {
    fn name(&self) -> &'static str {
        self.name
    }
    fn host_paths(&self) -> bool {
        false
    }
    fn check_read(&self, _path: &Path) -> io::Result<()> {
        Ok(()) // the remote account's permissions decide
    }
    fn check_write(&self, _path: &Path) -> io::Result<()> {
        Ok(())
    }
    fn metadata(&self, path: &Path) -> io::Result<Meta> {
        let out = self.run(&format!("stat -L -c '%s %.9Y %a %F' -- {}", p(path)), b"")?;
        let text = String::from_utf8_lossy(&out.stdout);
        let mut it = text.trim().splitn(4, ' ');
        let bad = || io::Error::other(format!("unreadable stat output: {}", text.trim()));
        let len: u64 = it.next().and_then(|s| s.parse().ok()).ok_or_else(bad)?;
        let mtime = it.next().ok_or_else(bad)?;
        let (secs, frac) = mtime.split_once('.').unwrap_or((mtime, "0"));
        let secs: i128 = secs.parse().map_err(|_| bad())?;
        let frac = format!("{frac:0<9}");
        let nanos: i128 = frac[..9].parse().map_err(|_| bad())?;
        let mode = u32::from_str_radix(it.next().ok_or_else(bad)?, 8).map_err(|_| bad())?;
        let kind = it.next().unwrap_or("");
        Ok(Meta {
            len,
            mtime_ns: secs * 1_000_000_000 + nanos,
            mode,
            is_dir: kind == "directory",
            is_file: kind.starts_with("regular"),
            links: 1,
        })
    }
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        Ok(self.run(&format!("cat -- {}", p(path)), b"")?.stdout)
    }
    fn read_head(&self, path: &Path, n: usize) -> io::Result<Vec<u8>> {
        Ok(self
            .run(&format!("head -c {n} -- {}", p(path)), b"")?
            .stdout)
    }
    fn write_atomic(&self, path: &Path, data: &[u8], mode: Option<u32>) -> io::Result<()> {
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
        let dir = dir.unwrap_or(Path::new("."));
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let chmod = match mode {
            Some(m) => format!("chmod {m:o} \"$t\""),
            None => format!(
                "if [ -e {f} ]; then chmod --reference={f} \"$t\"; else chmod \"$(printf %o $((0666 & ~$(umask))))\" \"$t\"; fi",
                f = p(path)
            ),
        };
        let script = format!(
            "t=$(mktemp {tmpl}) || exit 1\n\
             if cat > \"$t\" && {chmod} && mv -f -- \"$t\" {f}; then exit 0; fi\n\
             rm -f -- \"$t\"; exit 1\n",
            tmpl = shq(&format!(
                "{}/.{name}.ht-tmp.XXXXXXXX",
                dir.to_string_lossy()
            )),
            f = p(path),
        );
        self.run(&script, data).map(|_| ())
    }
    fn create_dir_all(&self, path: &Path) -> io::Result<bool> {
        let out = self.shell.run_script(
            &self.task,
            &format!("[ -d {f} ] && exit 3; mkdir -p -- {f}", f = p(path)),
            b"",
        )?;
        match out.code {
            0 => Ok(true),
            3 => Ok(false),
            _ => Err(self.error(&out)),
        }
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.run(&format!("rm -- {}", p(path)), b"").map(|_| ())
    }
    fn remove_dir(&self, path: &Path) -> io::Result<()> {
        self.run(&format!("rmdir -- {}", p(path)), b"").map(|_| ())
    }
    fn remove_dir_all(&self, path: &Path) -> io::Result<()> {
        self.run(
            &format!("[ -e {f} ] || {{ echo {f}: No such file or directory >&2; exit 1; }}; rm -rf -- {f}", f = p(path)),
            b"",
        )
        .map(|_| ())
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.run(&format!("mv -f -T -- {} {}", p(from), p(to)), b"")
            .map(|_| ())
    }
    fn read_dir(&self, path: &Path) -> io::Result<Vec<Entry>> {
        let out = self.run(
            &format!(
                "[ -d {f} ] || {{ if [ -e {f} ]; then echo {f}: Not a directory; else echo {f}: No such file or directory; fi >&2; exit 1; }}\n\
                 find {f} -mindepth 1 -maxdepth 1 -printf '%Y %P\\0'",
                f = p(path)
            ),
            b"",
        )?;
        let mut v: Vec<Entry> = out
            .stdout
            .split(|b| *b == 0)
            .filter(|r| r.len() > 2)
            .map(|r| Entry {
                is_dir: r[0] == b'd',
                name: String::from_utf8_lossy(&r[2..]).into_owned(),
            })
            .collect();
        v.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(v)
    }
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        let out = self.run(&format!("realpath -e -- {}", p(path)), b"")?;
        let s = String::from_utf8_lossy(&out.stdout);
        Ok(PathBuf::from(s.trim_end_matches('\n')))
    }
    fn walk(&self, root: &Path, contents: bool, max_file: u64) -> io::Result<Vec<WalkedFile>> {
        let script = format!(
            "command -v perl >/dev/null || {{ echo 'searching needs perl on the remote side' >&2; exit 2; }}\n\
             [ -e {r} ] || {{ echo {r}: No such file or directory >&2; exit 1; }}\n\
             exec perl -e {pl} -- {r} {w} {max_file} {WALK_MAX_TOTAL}",
            r = p(root),
            pl = shq(WALK_PL),
            w = u8::from(contents),
        );
        let out = self.run(&script, b"")?;
        parse_walk(&out.stdout, contents)
    }
}

/// Parse the walker's records.
fn parse_walk(mut b: &[u8], contents: bool) -> io::Result<Vec<WalkedFile>> {
    let bad = || io::Error::other("unreadable file list from the remote side");
    let mut out = Vec::new();
    let field = |b: &mut &[u8]| -> io::Result<String> {
        let i = b.iter().position(|c| *c == 0).ok_or_else(bad)?;
        let s = String::from_utf8_lossy(&b[..i]).into_owned();
        *b = &b[i + 1..];
        Ok(s)
    };
    while !b.is_empty() {
        let path = field(&mut b)?;
        let mtime = field(&mut b)?;
        let len: usize = field(&mut b)?.parse().map_err(|_| bad())?;
        if b.len() < len {
            return Err(bad());
        }
        let data = &b[..len];
        b = &b[len..];
        let (secs, frac) = mtime.split_once('.').unwrap_or((&mtime, "0"));
        let frac = format!("{frac:0<9}");
        let mtime_ns = secs.parse::<i128>().unwrap_or(0) * 1_000_000_000
            + frac[..9].parse::<i128>().unwrap_or(0);
        out.push(WalkedFile {
            path: PathBuf::from(path),
            mtime_ns,
            data: contents.then(|| data.to_vec()),
        });
    }
    Ok(out)
}
