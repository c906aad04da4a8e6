//! The rule table: data describing what is catastrophic (`block`) or risky
//! (`ask`), each with a matcher over the analysed programs.
//!
//! Built-in matchers are small functions over one [`Exec`] (its normalised
//! name, argv, redirections, pipe source, wrapper chain), so a rule judges what
//! a program *does* (`rm` with a recursive flag on `/`, a write whose target
//! is a block device), not how the command line is spelled. Host rules from
//! the config use `argv_prefix` (matched on the normalised argv, so
//! `/usr/bin/git push --force` matches `["git","push","--force"]`) or a regex
//! `pattern` matched against each program's argv joined with spaces. A small
//! regex floor ([`FLOOR`]) is consulted only when parsing failed.

use once_cell::sync::Lazy;
use regex::Regex;

use super::analyze::{Analysis, DYN, Exec, cmd_name, is_interpreter, is_shell};
use super::parse::RedirOp;
use crate::ctx::{RuleCtx, WriteKind, operands};
use crate::effects::{
    find_cleanup_inner, inline_code, inline_code_is_plain, is_everyday_cleanup, m_privilege,
    m_process_inspect, m_secret_file_read, m_shell_path_arg, m_system_install,
};
use crate::types::Verdict;
use crate::words::{display_argv, norm_path};

pub type ExecMatcher = fn(&RuleCtx, usize, &Exec) -> bool;

/// How a rule recognises a program.
#[derive(Clone, Debug)]
pub enum Matcher {
    /// Built-in structural check on one program.
    Exec(ExecMatcher),
    /// Built-in family check that also explains what the program does
    /// (see [`crate::families`]).
    Explain(ExplainMatcher),
    /// Built-in catalog check whose explanation names the account, scope
    /// or object affected (see [`crate::catalog`]).
    Describe(DescribeMatcher),
    /// Raised by the analyser itself (fork bomb, dynamic payload, parse error).
    Finding,
    /// The argv starts with these words (first word compared by basename).
    ArgvPrefix(Vec<String>),
    /// Regex over each program's argv joined with spaces.
    Pattern(Regex),
}

#[derive(Clone, Debug)]
pub struct Rule {
    pub key: String,
    pub description: String,
    pub tier: Verdict,
    pub matcher: Matcher,
    /// Built-in rule (block-tier built-ins cannot be exempted).
    pub builtin: bool,
    /// The pack that defined the rule or last set its tier (`"builtin"`,
    /// `"host"` or a host pack's name).
    pub pack: String,
}

/// A family matcher (see [`crate::families`]): `Some(explanation)` when
/// the program does what the rule is about.
pub type ExplainMatcher = fn(&RuleCtx, usize, &Exec) -> Option<&'static str>;

/// A catalog matcher: `Some(explanation naming what is affected)`.
pub type DescribeMatcher = fn(&RuleCtx, usize, &Exec) -> Option<String>;

macro_rules! r {
    ($key:expr, $tier:ident, $desc:expr, $f:expr) => {
        ($key, Verdict::$tier, $desc, Some($f as ExecMatcher))
    };
    ($key:expr, $tier:ident, $desc:expr) => {
        ($key, Verdict::$tier, $desc, None)
    };
}

type RuleRow = (&'static str, Verdict, &'static str, Option<ExecMatcher>);

/// The built-in rules. Order is the order reasons are reported in.
pub fn builtin_rows() -> Vec<RuleRow> {
    vec![
        // ---- block: catastrophic, never bypassed ----
        r!(
            "rm-root-or-home",
            Block,
            "recursive delete of the root filesystem, a system directory or a home directory",
            m_rm_critical
        ),
        r!(
            "find-delete-critical",
            Block,
            "find deleting inside the root filesystem, a system directory or a home directory",
            m_find_critical
        ),
        r!(
            "mkfs",
            Block,
            "format a filesystem (mkfs / wipefs / blkdiscard)",
            m_mkfs
        ),
        r!(
            "raw-disk-write",
            Block,
            "write to a raw block device or kernel memory",
            m_disk_write
        ),
        r!("fork-bomb", Block, "fork bomb"),
        r!(
            "move-root-or-home",
            Block,
            "move away the root filesystem, a system directory or a home directory",
            m_mv_critical
        ),
        r!(
            "windows-wipe",
            Block,
            "wipe or format a Windows drive, user profile or system directory (cmd / PowerShell)",
            m_windows_wipe
        ),
        r!(
            "rsync-delete-critical",
            Block,
            "rsync --delete onto the root filesystem, a system directory or a home directory",
            m_rsync_critical
        ),
        r!(
            "kill-all-processes",
            Block,
            "kill every process (kill -1 / killall5)",
            m_kill_all
        ),
        r!(
            "floor",
            Block,
            "unparseable command matching a catastrophic pattern"
        ),
        // ---- ask: risky ----
        r!("parse-error", Ask, "command could not be fully parsed"),
        r!(
            "dynamic-command",
            Ask,
            "command name computed at run time (variable, substitution or glob)",
            m_dynamic_cmd
        ),
        r!(
            "dynamic-payload",
            Ask,
            "shell payload built at run time (eval/bash -c of a substitution or variable)"
        ),
        r!("rm-recursive", Ask, "recursive delete", m_rm_recursive),
        r!(
            "rm-forced-outside",
            Ask,
            "forced delete outside the working directory",
            m_rm_forced_outside
        ),
        r!(
            "bulk-delete",
            Ask,
            "delete a computed list of files (find -delete, xargs rm, find -exec rm)",
            m_bulk_delete
        ),
        r!(
            "shred",
            Ask,
            "irrecoverable file destruction (shred / srm / wipe)",
            m_shred
        ),
        r!("dd", Ask, "raw copy with dd", m_dd),
        r!(
            "disk-tool",
            Ask,
            "partition, volume or disk management",
            m_disk_tool
        ),
        r!(
            "system-file-write",
            Ask,
            "write, delete or edit in a system path (/etc, /usr, /boot, ...)",
            m_system_write
        ),
        r!(
            "sensitive-file-write",
            Ask,
            "write to shell startup files, SSH keys, credentials or agent config",
            m_dotfile_write
        ),
        r!(
            "project-config-overwrite",
            Ask,
            "overwrite a project secrets/config file (.env, config.yaml)",
            m_project_config
        ),
        r!(
            "credential-read",
            Ask,
            "read private keys or credential stores",
            m_credential_read
        ),
        r!(
            "exfiltration",
            Ask,
            "send environment or credentials over the network",
            m_exfil
        ),
        r!(
            "pipe-to-shell",
            Ask,
            "pipe into a shell or interpreter (downloaded or decoded code runs unseen)",
            m_pipe_to_shell
        ),
        r!(
            "process-substitution-exec",
            Ask,
            "run a script from a process substitution (bash <(curl ...))",
            m_procsub_exec
        ),
        r!("shell-c", Ask, "shell command via -c", m_shell_c),
        r!(
            "inline-script",
            Ask,
            "interpreter running inline code (-c / -e / heredoc / script host)",
            m_inline_script
        ),
        r!(
            "exec-created-file",
            Ask,
            "runs a file written or made executable earlier in the same command",
            m_exec_created
        ),
        r!(
            "reverse-shell",
            Ask,
            "reverse shell or network-attached shell (/dev/tcp, nc -e, socat exec)",
            m_reverse_shell
        ),
        r!(
            "cloud-metadata",
            Ask,
            "cloud instance metadata endpoint (credential theft)",
            m_metadata
        ),
        r!(
            "sql-destructive",
            Ask,
            "destructive SQL (DROP / TRUNCATE / DELETE or UPDATE without WHERE)",
            m_sql
        ),
        r!("package-removal", Ask, "package removal", m_pkg_remove),
        r!(
            "process-kill",
            Ask,
            "kill processes by name, pattern or computed pid",
            m_proc_kill
        ),
        r!(
            "service-control",
            Ask,
            "stop, restart or disable a system service",
            m_service
        ),
        r!(
            "agent-gateway",
            Ask,
            "stop or restart the agent gateway",
            m_gateway
        ),
        r!(
            "chmod-chown",
            Ask,
            "world-writable/setuid permissions or recursive ownership change on system paths",
            m_chmod
        ),
        r!(
            "crontab-change",
            Ask,
            "remove or replace the crontab",
            m_crontab
        ),
        r!(
            "sudo-stdin",
            Ask,
            "sudo reading a password from stdin (-S) or an interactive root shell",
            m_sudo_stdin
        ),
        r!(
            "security-disable",
            Ask,
            "disable the firewall or security enforcement",
            m_security
        ),
        r!(
            "user-admin",
            Ask,
            "delete users/groups or change passwords",
            m_user_admin
        ),
        r!(
            "cloud-destroy",
            Ask,
            "delete cloud, cluster or container resources",
            m_cloud_destroy
        ),
        r!(
            "exec-option",
            Ask,
            "option that makes a tool run arbitrary programs",
            m_exec_option
        ),
        r!(
            "privilege",
            Ask,
            "runs with another user's (root's) privileges (sudo, su, doas, pkexec)",
            m_privilege
        ),
        r!(
            "system-install",
            Ask,
            "installs or upgrades software system-wide (apt/dnf/pacman install, npm -g, pip outside a virtual environment, make install)",
            m_system_install
        ),
        r!(
            "process-inspect",
            Ask,
            "reads another process's environment or memory (ps e, /proc/PID/environ, gdb -p, strace -p)",
            m_process_inspect
        ),
        r!(
            "secret-file-read",
            Ask,
            "prints a project secrets file (.env) into the transcript",
            m_secret_file_read
        ),
        r!(
            "shell-escape-arg",
            Ask,
            "hands a shell (/bin/sh) to a program that may run it (GTFOBins shell function)",
            m_shell_path_arg
        ),
        r!(
            "env-code",
            Ask,
            "environment variable that makes the program run or load a program, library, module or configuration from a path (GIT_SSH, CC, CARGO_TARGET_*_RUNNER, GOFLAGS=-toolexec, RUSTFLAGS linker, TAR_OPTIONS, LD_LIBRARY_PATH, HOME=., CURL_HOME=.)",
            m_env_code
        ),
        r!(
            "builtin-rebind",
            Ask,
            "shell builtin that binds a command name to another program or loads a builtin from a file (hash -p, enable -f)",
            m_builtin_rebind
        ),
        r!(
            "runs-workspace-code",
            Ask,
            "runs project code (a package script, build script, test or build backend) that is risky, could not be read, or was changed in the same command"
        ),
        r!(
            "script-unseen",
            Ask,
            "runs a script that could not be read to judge its content (missing, unreadable or too large)"
        ),
        r!(
            "not-known-safe",
            Ask,
            "known-safe posture: the program is not known to be safe with these arguments"
        ),
        r!(
            "deferred-code",
            Ask,
            "command substitution stored for later evaluation (array subscript in arithmetic, ${x@P}, PS4, eval)"
        ),
        r!(
            "code-config",
            Ask,
            "configuration that makes a tool run a program or fetch code elsewhere (git credential.helper, core.hooksPath, alias.x=!.., ext:: URLs)"
        ),
        r!(
            "shadowed-tool",
            Ask,
            "runs a core system tool from a non-system path (planted ./sed, /tmp/ls)",
            m_shadowed_tool
        ),
        r!(
            "env-hijack",
            Ask,
            "environment variable that injects code into every program (LD_PRELOAD, BASH_ENV, ...)"
        ),
        r!(
            "container-host-access",
            Ask,
            "container with the host filesystem, PID namespace or full privileges",
            m_container_host
        ),
    ]
}

// ---------------------------------------------------------------- helpers

pub(crate) use crate::paths::lc;

pub(crate) fn short_flags(argv: &[String]) -> String {
    let mut s = String::new();
    for a in &argv[1..] {
        if a == "--" {
            break;
        }
        if a.starts_with('-') && !a.starts_with("--") && a.len() > 1 {
            s.push_str(&a[1..]);
        }
    }
    s
}

pub(crate) fn has_long(argv: &[String], long: &str) -> bool {
    argv[1..]
        .iter()
        .take_while(|a| *a != "--")
        .any(|a| a == long || a.starts_with(&format!("{long}=")))
}

/// The invocation only reports what it would do (`--dry-run`, `--simulate`,
/// `-n` for tools where it means that).
pub(crate) fn dry_run(e: &Exec) -> bool {
    let a = &e.argv;
    if a.is_empty() {
        return false;
    }
    let long = a[1..].iter().take_while(|w| *w != "--").any(|w| {
        if !w.starts_with('-') {
            return false;
        }
        let is = |x: &str| w.eq_ignore_ascii_case(x);
        let dr = w.len() > 10 && w.as_bytes()[..10].eq_ignore_ascii_case(b"--dry-run=");
        is("--dry-run")
            || (dr && !is("--dry-run=none"))
            || is("--dryrun")
            || is("--simulate")
            || is("--just-print")
            || is("--no-act")
            || is("--recon")
            || is("--assumeno")
            || is("--what-if")
            || is("-whatif")
    });
    if long {
        return true;
    }
    let short = |c: char| {
        a[1..]
            .iter()
            .take_while(|w| *w != "--")
            .any(|w| w.starts_with('-') && !w.starts_with("--") && w[1..].contains(c))
    };
    match e.name.as_str() {
        "rsync" | "rclone" | "wipefs" | "hg" => short('n'),
        "git" => {
            matches!(
                git_sub(a).map(|(_, s)| s),
                Some("clean" | "push" | "rm" | "add" | "mv")
            ) && short('n')
        }
        "apt" | "apt-get" | "aptitude" => short('s'),
        "lvremove" | "vgremove" | "pvremove" | "lvreduce" => short('t') || has_long(a, "--test"),
        "rpm" => has_long(a, "--test"),
        _ => false,
    }
}

const CRITICAL: &[&str] = &[
    "/",
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/home",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/proc",
    "/root",
    "/run",
    "/sbin",
    "/sys",
    "/usr",
    "/var",
    "/users",
    "/system",
    "/library",
    "/applications",
    "/private",
    "/private/etc",
    "/private/var",
    "/usr/bin",
    "/usr/sbin",
    "/usr/lib",
    "/usr/lib64",
    "/usr/local",
    "/usr/share",
    "/usr/include",
    "/var/lib",
    "/nix",
    "/nix/store",
    "/snap",
    "~",
    "c:",
    "c:/windows",
    "c:/users",
    "c:/program files",
    "c:/program files (x86)",
    "c:/programdata",
];

/// Recursive deletion of this path would be catastrophic.
pub fn is_critical(p: &str) -> bool {
    let n = norm_path(p);
    let nl = lc(&n);
    let base = nl.trim_end_matches("/*").trim_end_matches('/');
    let base = if base.is_empty() { "/" } else { base };
    if CRITICAL.contains(&base) {
        return true;
    }
    if nl == "/*" || nl == "~/*" || nl == "~/.*" || nl == "/.*" {
        return true;
    }
    // a user's home directory
    let comps: Vec<&str> = base.split('/').collect();
    if comps.len() == 3 && comps[0].is_empty() && (comps[1] == "home" || comps[1] == "users") {
        return !comps[2].contains(DYN);
    }
    if comps.len() == 3 && comps[0] == "c:" && comps[1] == "users" {
        return true;
    }
    // a glob that matches a critical directory (`/e?c`, `/???`, `/h*`)
    if base.contains(['*', '?', '[']) && !base.contains(DYN) {
        return CRITICAL
            .iter()
            .filter(|c| c.starts_with('/') && c.matches('/').count() == base.matches('/').count())
            .any(|c| glob_match(base.as_bytes(), c.as_bytes()));
    }
    false
}

/// Shell glob matching (`*`, `?`, `[...]`) of a whole path, `/` included.
pub(crate) fn glob_match(p: &[u8], s: &[u8]) -> bool {
    let (mut pi, mut si) = (0, 0);
    let (mut star, mut mark) = (usize::MAX, 0);
    while si < s.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = pi;
            mark = si;
            pi += 1;
        } else if pi < p.len() && (p[pi] == b'?' || p[pi] == s[si]) && p[pi] != b'[' {
            pi += 1;
            si += 1;
        } else if pi < p.len() && p[pi] == b'[' {
            let Some(close) = p[pi..].iter().position(|&c| c == b']').map(|x| x + pi) else {
                return false;
            };
            let set = &p[pi + 1..close];
            let (neg, set) = match set.first() {
                Some(b'!') | Some(b'^') => (true, &set[1..]),
                _ => (false, set),
            };
            let mut hit = false;
            let mut k = 0;
            while k < set.len() {
                if k + 2 < set.len() && set[k + 1] == b'-' {
                    hit |= set[k] <= s[si] && s[si] <= set[k + 2];
                    k += 3;
                } else {
                    hit |= set[k] == s[si];
                    k += 1;
                }
            }
            if hit != neg {
                pi = close + 1;
                si += 1;
            } else if star != usize::MAX {
                pi = star + 1;
                mark += 1;
                si = mark;
            } else {
                return false;
            }
        } else if star != usize::MAX {
            pi = star + 1;
            mark += 1;
            si = mark;
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == b'*' {
        pi += 1;
    }
    pi == p.len()
}

pub(crate) fn is_abs_or_outside(p: &str) -> bool {
    let n = norm_path(p);
    // a path that is only a run-time value (`rm -f "$tmp"`) is not counted:
    // without -r it removes one file, and -r is its own rule
    n.starts_with('/')
        || n.starts_with('~')
        || n.starts_with("..")
        || (n.len() >= 2 && n.as_bytes()[1] == b':')
}

static DISK_RE: Lazy<Regex> = Lazy::new(|| {
    Regex::new(r"^/dev/(sd[a-z]+\d*|hd[a-z]\d*|vd[a-z]+\d*|xvd[a-z]+\d*|nvme\d+(n\d+)?(p\d+)?|mmcblk\d+(p\d+)?|r?disk\d+(s\d+)?|md\d+|md/.*|dm-\d+|mapper/.+|sr\d+|loop\d+|mem|kmem|port|root|ubd[a-z]\d*|mtdblock\d+|block/.+|disk/.+|zd\d+|zvol/.+|bcache\d+|rbd\d+|nbd\d+(p\d+)?|sg\d+|st\d+)$|^/proc/sysrq-trigger$|^/proc/kcore$")
        .expect("disk regex")
});

/// `mkfs` on a regular file outside the working directory (an image file
/// somewhere on the machine): worth a question, unlike one in the workspace.
fn mkfs_outside_file(e: &Exec) -> bool {
    let n = e.name.as_str();
    (n == "mkfs" || n.starts_with("mkfs.") || n == "mke2fs" || n == "mkswap")
        && mkfs_targets(e).any(|t| {
            !formats_device(t) && (t.starts_with('/') || t.starts_with('~') || t.starts_with(".."))
        })
}

pub fn is_disk_device(p: &str) -> bool {
    DISK_RE.is_match(&norm_path(p))
}

pub use crate::paths::{is_persistence_path, is_system_path, is_user_sensitive};

/// Project files whose wholesale replacement changes secrets or behaviour.
pub fn is_project_config(p: &str) -> bool {
    let n = lc(&norm_path(p));
    let base = n.rsplit('/').next().unwrap_or("");
    base == ".env"
        || (base.starts_with(".env.") && base.len() > 5)
        || base == "config.yaml"
        || base == "config.yml"
}

static CRED_RE: Lazy<Regex> = Lazy::new(|| {
    Regex::new(
        r"(^|/)(id_(rsa|dsa|ecdsa|ed25519|xmss)(_sk)?([._~-][^/]*)?|\.netrc|_netrc|\.git-credentials|\.pgpass|\.vault-token|\.pypirc|\.npmrc|\.gem/credentials|credentials(\.json|\.db|\.toml)?|application_default_credentials\.json|access_tokens\.db|accesstokens\.json|shadow-?|gshadow-?|master\.passwd|secring\.gpg|\.my\.cnf|hosts\.yml|ssh_host_[a-z0-9]+_key|(deploy|private|priv|signing)_key|auth\.json|\.credentials\.json|credentials\.tfrc\.json)$|/\.gnupg/private-keys|/\.docker/config\.json$|/\.kube/config$|/\.ssh/.*\.(pem|key)$|/\.password-store/|^/proc/[^/]+/environ$|^/etc/ssl/private/|^(/var)?/run/secrets/.|huggingface/token$|(^|/)(login data|cookies|key[34]\.db|logins\.json|keychain-db|\.keychain)$",
    )
    .expect("cred regex")
});

/// Concrete credential files a glob is compared with (`cat ~/.ssh/id*`,
/// `cat /etc/shadow*`, `cd ~/.aws && cat cred*`): a glob that could expand
/// to one of them reads it.
const CRED_SAMPLES: &[&str] = &[
    "~/.ssh/id_rsa",
    "~/.ssh/id_ed25519",
    "~/.ssh/id_ecdsa",
    "~/.ssh/id_dsa",
    "~/.ssh/id_rsa.old",
    "~/.ssh/deploy_key",
    "~/.aws/credentials",
    "~/.netrc",
    "~/.git-credentials",
    "~/.pgpass",
    "~/.pypirc",
    "~/.npmrc",
    "~/.vault-token",
    "~/.my.cnf",
    "~/.docker/config.json",
    "~/.kube/config",
    "~/.config/gcloud/credentials.db",
    "~/.config/gcloud/application_default_credentials.json",
    "~/.config/gh/hosts.yml",
    "~/.cargo/credentials.toml",
    "~/.cargo/credentials",
    "~/.codex/auth.json",
    "~/.claude/.credentials.json",
    "~/.terraform.d/credentials.tfrc.json",
    "~/.cache/huggingface/token",
    "~/.gnupg/private-keys-v1.d/k.key",
    "~/.password-store/p.gpg",
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/ssh/ssh_host_rsa_key",
    "/etc/ssh/ssh_host_ed25519_key",
    "/var/run/secrets/kubernetes.io/serviceaccount/token",
    "/run/secrets/kubernetes.io/serviceaccount/token",
    "/proc/1/environ",
];

/// Whether a shell glob (`*`, `?`, `[..]`; `*` does not cross `/`) can
/// match `name`.
pub fn glob_can_match(pat: &str, name: &str) -> bool {
    fn go(p: &[u8], n: &[u8]) -> bool {
        match p.first() {
            None => n.is_empty(),
            Some(b'*') => (0..=n.len())
                .take_while(|&i| i == 0 || n[i - 1] != b'/')
                .any(|i| go(&p[1..], &n[i..])),
            Some(b'?') => n.first().is_some_and(|&c| c != b'/') && go(&p[1..], &n[1..]),
            Some(b'[') => match p.iter().position(|&c| c == b']') {
                Some(end) if n.first().is_some_and(|&c| c != b'/') => go(&p[end + 1..], &n[1..]),
                _ => false,
            },
            Some(b'\\') if p.len() > 1 => n.first() == Some(&p[1]) && go(&p[2..], &n[1..]),
            Some(&c) => n.first() == Some(&c) && go(&p[1..], &n[1..]),
        }
    }
    go(pat.as_bytes(), name.as_bytes())
}

pub use crate::effects::resolved;

pub fn is_credential_file(p: &str) -> bool {
    let mut n = lc(&norm_path(p));
    // another user's home: the same files
    for pre in ["/root/", "/home/"] {
        if let Some(rest) = n.strip_prefix(pre) {
            let rest = if pre == "/home/" {
                rest.split_once('/').map(|x| x.1).unwrap_or("")
            } else {
                rest
            };
            n = format!("~/{rest}");
        }
    }
    let n = n;
    if matches!(
        n.as_str(),
        "~/.ssh"
            | "~/.aws"
            | "~/.gnupg"
            | "~/.password-store"
            | "~/.kube"
            | "~/.config/gcloud"
            | "~/.azure"
            | "/var/run/secrets"
            | "/run/secrets"
    ) {
        return true;
    }
    if n.contains(['*', '?', '[']) {
        return CRED_SAMPLES.iter().any(|c| glob_can_match(&n, c));
    }
    if n.ends_with(".pub") {
        return false;
    }
    let base = n.rsplit('/').next().unwrap_or("");
    // a private key under any name in ~/.ssh (not the public files)
    if let Some(rest) = n.strip_prefix("~/.ssh/")
        && !rest.contains('/')
        && !matches!(base, "config" | "environment" | "rc")
        && !base.starts_with("known_hosts")
        && !base.starts_with("authorized_keys")
        && !base.ends_with(".sock")
        && !base.contains(".pub")
    {
        return true;
    }
    if !CRED_RE.is_match(&n) {
        return false;
    }
    match base {
        "shadow" | "gshadow" | "master.passwd" | "shadow-" | "gshadow-" => n.starts_with("/etc/"),
        "credentials" | "credentials.json" | "credentials.db" | "credentials.toml" => {
            n.contains("/.aws/")
                || n.contains("gcloud")
                || n.contains("/.config/")
                || n.contains("/.cargo/")
                || n.contains("/.gem/")
        }
        "auth.json" => n.contains("/.codex/") || n.contains("/.config/") || n.contains("/.docker/"),
        "hosts.yml" => n.contains("/gh/"),
        _ => true,
    }
}

/// Writes through a symbolic link made earlier in the same command line
/// (`ln -sf ~/.bashrc b && echo x >> b`): the link's target is written too.
pub fn through_links(
    a: &Analysis,
    mut targets: Vec<Vec<(String, WriteKind)>>,
) -> Vec<Vec<(String, WriteKind)>> {
    let mut links: Vec<(String, String)> = Vec::new();
    for (i, e) in a.execs.iter().enumerate() {
        if !links.is_empty() {
            let extra: Vec<(String, WriteKind)> = targets[i]
                .iter()
                .filter(|(_, k)| *k != WriteKind::Delete)
                .filter_map(|(t, k)| {
                    let n = norm_path(t);
                    links.iter().rev().find_map(|(l, to)| {
                        if *l == n {
                            Some((to.clone(), *k))
                        } else {
                            // a file under a linked directory
                            n.strip_prefix(l.as_str())
                                .filter(|r| r.starts_with('/'))
                                .map(|r| (format!("{}{r}", to.trim_end_matches('/')), *k))
                        }
                    })
                })
                .collect();
            targets[i].extend(extra);
        }
        let symbolic = e.name == "ln"
            && e.argv[1..].iter().any(|w| {
                w == "--symbolic" || w.starts_with('-') && !w.starts_with("--") && w.contains('s')
            });
        if symbolic {
            let ops = operands(&e.argv, &["-t", "--target-directory", "-S", "--suffix"]);
            if ops.len() >= 2 {
                let to = ops[0].to_string();
                let name = ops[ops.len() - 1];
                links.push((norm_path(name), to.clone()));
                if ops.len() == 2 {
                    // `ln -s TARGET DIR/` makes DIR/basename(TARGET)
                    let base = to.rsplit('/').next().unwrap_or(&to);
                    links.push((norm_path(&format!("{name}/{base}")), to.clone()));
                }
            } else if let Some(to) = ops.first() {
                let base = to.rsplit('/').next().unwrap_or(to);
                links.push((norm_path(base), to.to_string()));
            }
        }
    }
    targets
}

/// Files this program writes, edits or deletes.
pub fn write_targets(e: &Exec) -> Vec<(String, WriteKind)> {
    let mut out = Vec::new();
    for r in &e.redirs {
        let t = r.target.clone();
        match r.op {
            RedirOp::Out => out.push((t, WriteKind::Overwrite)),
            RedirOp::Append => out.push((t, WriteKind::Append)),
            RedirOp::ReadWrite => out.push((t, WriteKind::InPlace)),
            RedirOp::Dup if !t.is_empty() && !t.chars().all(|c| c.is_ascii_digit() || c == '-') => {
                out.push((t, WriteKind::Overwrite));
            }
            _ => {}
        }
    }
    let a = &e.argv;
    if a.is_empty() {
        return out;
    }
    match e.name.as_str() {
        "tee" | "sponge" => {
            let append = short_flags(a).contains('a') || has_long(a, "--append");
            for o in operands(a, &[]) {
                out.push((
                    o.to_string(),
                    if append {
                        WriteKind::Append
                    } else {
                        WriteKind::Overwrite
                    },
                ));
            }
        }
        "cp" | "mv" | "install" | "ln" | "rsync" | "scp" => {
            let vals: &[&str] = match e.name.as_str() {
                "install" => &[
                    "-m", "-o", "-g", "-t", "-S", "--mode", "--owner", "--group", "--suffix",
                ],
                "rsync" => &["-e", "--rsh", "--exclude", "--include", "-f", "--filter"],
                "scp" => &["-i", "-P", "-o", "-F", "-c", "-l", "-S", "-J"],
                _ => &["-t", "-S", "--suffix", "--target-directory"],
            };
            // -t DIR / --target-directory=DIR
            let mut target_dir = None;
            for (k, w) in a.iter().enumerate() {
                if (w == "-t" || w == "--target-directory") && k + 1 < a.len() {
                    target_dir = Some(a[k + 1].clone());
                } else if let Some(v) = w.strip_prefix("--target-directory=") {
                    target_dir = Some(v.to_string());
                }
            }
            let ops = operands(a, vals);
            let dest = target_dir
                .clone()
                .or_else(|| (ops.len() >= 2).then(|| ops[ops.len() - 1].to_string()));
            if let Some(t) = target_dir {
                out.push((t, WriteKind::Overwrite));
            } else if ops.len() >= 2 {
                out.push((ops[ops.len() - 1].to_string(), WriteKind::Overwrite));
            }
            // a tree copied into a directory, or files copied into one
            // under their own names (`cp -r dotfiles/. ~`, `cp .bashrc ~`)
            if let Some(d) = dest
                && e.name != "ln"
            {
                let flags = short_flags(a);
                let tree = flags.contains('r')
                    || flags.contains('R')
                    || flags.contains('a')
                    || flags.contains('T')
                    || a.iter().any(|w| {
                        matches!(
                            w.as_str(),
                            "--recursive" | "--archive" | "--no-target-directory"
                        )
                    })
                    || e.name == "mv";
                if tree && !dry_run(e) {
                    out.push((d.clone(), WriteKind::IntoDir));
                }
                if crate::paths::holds_persistence(&d) {
                    let n = ops.len().saturating_sub(1);
                    for src in ops.iter().take(n) {
                        let b = src.trim_end_matches('/').rsplit('/').next().unwrap_or(src);
                        if !b.is_empty() && b != "." && b != ".." {
                            out.push((
                                format!("{}/{b}", d.trim_end_matches('/')),
                                WriteKind::Overwrite,
                            ));
                        }
                    }
                }
            }
            if e.name == "mv" {
                let n = ops.len();
                for o in ops.iter().take(n.saturating_sub(1)) {
                    out.push((o.to_string(), WriteKind::Delete));
                }
            }
        }
        "dd" => {
            for w in &a[1..] {
                if let Some(v) = w.strip_prefix("of=") {
                    out.push((v.to_string(), WriteKind::Overwrite));
                }
            }
        }
        "sed" | "gsed" => {
            let inplace = a[1..].iter().any(|w| {
                w == "--in-place"
                    || w.starts_with("--in-place=")
                    || (w.starts_with('-') && !w.starts_with("--") && w[1..].starts_with('i'))
                    || (w.starts_with('-')
                        && !w.starts_with("--")
                        && w.len() <= 4
                        && w.contains('i')
                        && !w.contains('e'))
            });
            if inplace {
                let has_script_opt = a.iter().any(|w| {
                    w == "-e"
                        || w == "-f"
                        || w.starts_with("--expression")
                        || w.starts_with("--file")
                });
                let ops = operands(a, &["-e", "-f", "--expression", "--file", "-l"]);
                // without -e/-f the first operand is the script, but a lone
                // operand is judged as a target too (`sed -i FILE`)
                let skip = if has_script_opt || ops.len() < 2 {
                    0
                } else {
                    1
                };
                for o in ops.into_iter().skip(skip) {
                    out.push((o.to_string(), WriteKind::InPlace));
                }
            }
        }
        "perl" | "ruby" => {
            let flags = short_flags(a);
            if flags.contains('i') {
                // operands after the -e code
                let mut i = 1;
                let mut code_seen = false;
                while i < a.len() {
                    let w = &a[i];
                    if w.starts_with('-') && w.len() > 1 {
                        if w.ends_with('e') || w == "-e" || w.ends_with('E') {
                            i += 2;
                            code_seen = true;
                            continue;
                        }
                        i += 1;
                        continue;
                    }
                    if !code_seen {
                        code_seen = true;
                        i += 1;
                        continue;
                    }
                    out.push((w.clone(), WriteKind::InPlace));
                    i += 1;
                }
            }
        }
        "curl" => {
            for (k, w) in a.iter().enumerate() {
                if w == "--output-dir" && k + 1 < a.len() {
                    out.push((a[k + 1].clone(), WriteKind::IntoDir));
                } else if let Some(v) = w.strip_prefix("--output-dir=") {
                    out.push((v.to_string(), WriteKind::IntoDir));
                }
                if (w == "-o" || w == "--output") && k + 1 < a.len() {
                    out.push((a[k + 1].clone(), WriteKind::Overwrite));
                } else if let Some(v) = w.strip_prefix("--output=") {
                    out.push((v.to_string(), WriteKind::Overwrite));
                }
            }
        }
        "wget" => {
            for (k, w) in a.iter().enumerate() {
                if (w == "-P" || w == "--directory-prefix") && k + 1 < a.len() {
                    out.push((a[k + 1].clone(), WriteKind::IntoDir));
                } else if let Some(v) = w
                    .strip_prefix("--directory-prefix=")
                    .or_else(|| w.strip_prefix("-P").filter(|v| !v.is_empty()))
                {
                    out.push((v.to_string(), WriteKind::IntoDir));
                }
                if (w == "-O" || w == "--output-document") && k + 1 < a.len() {
                    out.push((a[k + 1].clone(), WriteKind::Overwrite));
                } else if let Some(v) = w.strip_prefix("--output-document=") {
                    out.push((v.to_string(), WriteKind::Overwrite));
                } else if w.starts_with("-O") && w.len() > 2 {
                    out.push((w[2..].to_string(), WriteKind::Overwrite));
                }
            }
        }
        "rm" | "unlink" | "rmdir" | "shred" | "srm" => {
            for o in operands(
                a,
                &["-n", "--iterations", "-s", "--size", "--random-source"],
            ) {
                out.push((o.to_string(), WriteKind::Delete));
            }
        }
        "tar" | "gtar" | "bsdtar" => {
            let extract = a[1..].iter().any(|w| {
                w == "--extract"
                    || w == "-x"
                    || (!w.starts_with("--") && w.trim_start_matches('-').starts_with('x'))
                    || (w.starts_with('-') && !w.starts_with("--") && w.contains('x'))
            });
            if extract {
                for (k, w) in a.iter().enumerate() {
                    if (w == "-C" || w == "--directory") && k + 1 < a.len() {
                        out.push((a[k + 1].clone(), WriteKind::Overwrite));
                        out.push((a[k + 1].clone(), WriteKind::IntoDir));
                    } else if let Some(v) = w.strip_prefix("--directory=") {
                        out.push((v.to_string(), WriteKind::Overwrite));
                        out.push((v.to_string(), WriteKind::IntoDir));
                    }
                }
            }
        }
        "unzip" | "7z" | "7za" | "bsdcpio" | "cpio" => {
            for (k, w) in a.iter().enumerate() {
                if w == "-d" && k + 1 < a.len() && e.name == "unzip" {
                    out.push((a[k + 1].clone(), WriteKind::Overwrite));
                    out.push((a[k + 1].clone(), WriteKind::IntoDir));
                } else if let Some(v) = w
                    .strip_prefix("-o")
                    .filter(|v| !v.is_empty() && e.name.starts_with("7z"))
                {
                    out.push((v.to_string(), WriteKind::IntoDir));
                }
            }
        }
        "patch" => {
            for (k, w) in a.iter().enumerate() {
                if (w == "-d" || w == "--directory") && k + 1 < a.len() {
                    out.push((a[k + 1].clone(), WriteKind::IntoDir));
                } else if let Some(v) = w.strip_prefix("--directory=") {
                    out.push((v.to_string(), WriteKind::IntoDir));
                } else if let Some(v) = w.strip_prefix("-d").filter(|v| !v.is_empty()) {
                    out.push((v.to_string(), WriteKind::IntoDir));
                }
            }
        }
        "git" => git_writes(a, &mut out),
        "npm" | "pnpm" | "yarn" | "bun" => {
            let ops = operands(a, &[]);
            match (ops.first().copied(), ops.get(1).copied()) {
                (Some("pkg"), Some("set" | "delete" | "fix")) => {
                    out.push(("package.json".into(), WriteKind::InPlace));
                }
                // keys that name a program npm runs
                (Some("config" | "c"), Some("set" | "edit"))
                    if ops.get(1) == Some(&"edit")
                        || ops.get(2).is_some_and(|k| {
                            let k = k.split('=').next().unwrap_or(k);
                            matches!(
                                k,
                                "script-shell"
                                    | "shell"
                                    | "node-options"
                                    | "git"
                                    | "editor"
                                    | "browser"
                                    | "viewer"
                                    | "onload-script"
                                    | "init-module"
                                    | "prefix"
                                    | "globalconfig"
                                    | "userconfig"
                                    | "node-gyp"
                            )
                        }) =>
                {
                    out.push(("~/.npmrc".into(), WriteKind::InPlace));
                }
                _ => {}
            }
        }
        "wget2" => {
            for (k, w) in a.iter().enumerate() {
                if (w == "-P" || w == "--directory-prefix") && k + 1 < a.len() {
                    out.push((a[k + 1].clone(), WriteKind::IntoDir));
                } else if let Some(v) = w
                    .strip_prefix("--directory-prefix=")
                    .or_else(|| w.strip_prefix("-P").filter(|v| !v.is_empty()))
                {
                    out.push((v.to_string(), WriteKind::IntoDir));
                }
            }
        }
        "truncate" => {
            for o in operands(a, &["-s", "--size", "-r", "--reference"]) {
                out.push((o.to_string(), WriteKind::Overwrite));
            }
        }
        "chattr" => {
            for o in operands(a, &[]) {
                out.push((o.to_string(), WriteKind::InPlace));
            }
        }
        "touch" | "mkdir" => {
            for o in operands(a, &["-m", "--mode", "-r", "-t", "-d"]) {
                out.push((o.to_string(), WriteKind::Create));
            }
        }
        _ => {}
    }
    knowledge_writes(e, &mut out);
    out
}

/// Files git writes by option or destination: `--output=FILE` (log, show,
/// diff, format-patch, range-diff), `archive -o`, `bundle create FILE`,
/// `format-patch -o DIR`, `clone SRC DIR`, `worktree add DIR`, `submodule
/// add URL DIR`, `init DIR`.
fn git_writes(a: &[String], out: &mut Vec<(String, WriteKind)>) {
    let Some((k, sub)) = crate::names::git_sub(a) else {
        return;
    };
    let rest = &a[k + 1..];
    for (i, w) in rest.iter().enumerate() {
        if let Some(v) = w.strip_prefix("--output=") {
            out.push((v.to_string(), WriteKind::Overwrite));
        } else if w == "--output" && i + 1 < rest.len() {
            out.push((rest[i + 1].clone(), WriteKind::Overwrite));
        } else if w == "-o" && i + 1 < rest.len() {
            let kind = if sub == "format-patch" {
                WriteKind::IntoDir
            } else {
                WriteKind::Overwrite
            };
            if matches!(sub, "archive" | "format-patch") {
                out.push((rest[i + 1].clone(), kind));
            }
        } else if let Some(v) = w.strip_prefix("--output-directory=") {
            out.push((v.to_string(), WriteKind::IntoDir));
        } else if w == "--output-directory" && i + 1 < rest.len() {
            out.push((rest[i + 1].clone(), WriteKind::IntoDir));
        }
    }
    let vals: &[&str] = &[
        "-b",
        "--branch",
        "-o",
        "--origin",
        "--depth",
        "--reference",
        "-c",
        "--config",
        "--template",
        "-u",
        "--upload-pack",
        "--separate-git-dir",
        "--filter",
        "--name",
        "--reason",
    ];
    let ops = operands(&a[k..], vals);
    match sub {
        "bundle" if ops.first() == Some(&"create") => {
            if let Some(f) = ops.get(1) {
                out.push((f.to_string(), WriteKind::Overwrite));
            }
        }
        "clone" if ops.len() >= 2 => out.push((ops[1].to_string(), WriteKind::IntoDir)),
        "worktree" if ops.first() == Some(&"add") => {
            if let Some(d) = ops.get(1) {
                out.push((d.to_string(), WriteKind::IntoDir));
            }
        }
        "submodule" if ops.first() == Some(&"add") && ops.len() >= 3 => {
            out.push((ops[2].to_string(), WriteKind::IntoDir));
        }
        "init" if !ops.is_empty() => out.push((ops[0].to_string(), WriteKind::IntoDir)),
        _ => {}
    }
}

/// Writes the knowledge base knows of (`sort -o FILE`, an editor's file
/// operands, `vipw`), writes in sed scripts (`w FILE`) and editor commands
/// (`vim -c ':w FILE'`), and writes presumed of a program the engine does
/// not know, or of code: a persistence path it names, or a system path
/// given to an output-named option (`--output`, `-o`, `--target`).
fn knowledge_writes(e: &Exec, out: &mut Vec<(String, WriteKind)>) {
    use crate::knowledge::{self as kb, Writes};
    let a = &e.argv;
    if a.len() < 2 {
        if let Some(p) = kb::program(&e.name) {
            out.extend(p.edits.iter().map(|f| (f.to_string(), WriteKind::InPlace)));
        }
        return;
    }
    if let Some(p) = kb::program(&e.name) {
        let sub = if e.name == "git" {
            crate::names::git_sub(a)
        } else {
            operands(a, p.value_opts).first().map(|s| (0, *s))
        };
        for wo in p.writes {
            if !wo.sub.is_empty() && sub.is_none_or(|(_, s)| s != wo.sub) {
                continue;
            }
            for k in 1..a.len() {
                if let Some((v, _)) = kb::opt_value(a, k, wo.opt)
                    && !v.is_empty()
                    && v != "-"
                {
                    out.push((v, WriteKind::Overwrite));
                }
            }
        }
        let ops = || {
            operands(a, p.value_opts)
                .into_iter()
                .filter(|o| !o.starts_with('+'))
                .collect::<Vec<_>>()
        };
        match p.writes_operands {
            Writes::All => {
                for o in ops().into_iter().filter(|o| *o != "-") {
                    out.push((o.to_string(), WriteKind::InPlace));
                }
            }
            Writes::Last => {
                let o = ops();
                if o.len() >= 2 && o[o.len() - 1] != "-" {
                    out.push((o[o.len() - 1].to_string(), WriteKind::Overwrite));
                }
            }
            Writes::No => {}
        }
        out.extend(p.edits.iter().map(|f| (f.to_string(), WriteKind::InPlace)));
        if p.writes_operands == Writes::All && p.interactive {
            // editor commands: `-c ':w FILE'`, `+'saveas FILE'`
            static EDW: Lazy<Regex> = Lazy::new(|| {
                Regex::new(r"^[:+]*\s*(?:w|write|sav|saveas|wq|x|up|update)!?\s+(\S+)")
                    .expect("editor write regex")
            });
            for w in &a[1..] {
                if let Some(c) = EDW.captures(w).and_then(|c| c.get(1)) {
                    out.push((c.as_str().to_string(), WriteKind::Overwrite));
                }
            }
        }
    }
    if e.name == "find" {
        for w in a.windows(2) {
            if matches!(w[0].as_str(), "-fprint" | "-fprint0" | "-fprintf" | "-fls") {
                out.push((w[1].clone(), WriteKind::Overwrite));
            }
        }
    }
    if matches!(e.name.as_str(), "sed" | "gsed") {
        for w in kb::sed_scripts(a).0 {
            for f in kb::sed_write_files(&w) {
                out.push((f, WriteKind::Overwrite));
            }
        }
    }
    if matches!(e.name.as_str(), "awk" | "gawk" | "mawk" | "nawk") {
        out.extend(
            awk_write_files(a)
                .into_iter()
                .map(|f| (f, WriteKind::Overwrite)),
        );
    }
    // presumed writes: an unknown program, or code an interpreter,
    // debugger or interactive client runs (not a file operand it merely
    // reads)
    let unknown = !kb::is_known(&e.name) && !crate::analyze::unwraps(&e.name, a);
    let interactive = kb::program(&e.name).is_some_and(|p| p.interactive);
    let code = is_interpreter(&e.name) || interactive;
    if !(unknown || code) || is_shell(&e.name) {
        return;
    }
    // write commands of command languages (`.output FILE`, `\o FILE`,
    // `lcd DIR; get x`, `mount c DIR`, `get REMOTE LOCAL`, `-o FILE` in a
    // `-c` string)
    static WCMD: Lazy<Regex> = Lazy::new(|| {
        Regex::new(
            r#"(?:^|[;\n'"]|\s)(?:\.output|\.once|\\o|\\w|tee|lcd|mount\s+\w:?|get\s+\S+|-o|--output)\s+([~/][^\s;'"]*)"#,
        )
        .expect("write command regex")
    });
    let joined = a[1..].join(" ");
    for w in a[1..].iter().chain(std::iter::once(&joined)) {
        for c in WCMD.captures_iter(w).take(4) {
            if let Some(m) = c.get(1)
                && (is_system_path(m.as_str()) || is_persistence_path(m.as_str()))
            {
                out.push((m.as_str().to_string(), WriteKind::Overwrite));
            }
        }
    }
    // code that writes or downloads (`getstore(URL, "/usr/local/bin/x")`):
    // a system binary, library or configuration path in it is presumed
    // written
    static CODE_WRITE: Lazy<Regex> = Lazy::new(|| {
        Regex::new(
            r#"(?i)getstore|urlretrieve|download|write|put_contents|copy_stream|fopen|FileOutputStream|open\([^)]*,\s*["'][wa]|\bcp\(|\bsave"#,
        )
        .expect("code write regex")
    });
    let mut texts: Vec<&str> = Vec::new();
    for w in &a[1..] {
        texts.push(w.as_str());
    }
    if unknown && let Some(t) = &e.stdin_text {
        texts.push(t.as_str());
    }
    for t in texts.into_iter().take(32) {
        let writes = t.len() > 8 && CODE_WRITE.is_match(t);
        for p in crate::analyze::path_tokens(t).into_iter().take(8) {
            if !unknown && p == t {
                continue; // an operand the interpreter reads
            }
            let bin = [
                "/etc/",
                "/usr/local/bin/",
                "/usr/bin/",
                "/bin/",
                "/sbin/",
                "/usr/sbin/",
                "/usr/lib/",
                "/lib/",
            ]
            .iter()
            .any(|d| p.starts_with(d));
            if is_persistence_path(&p) || (writes && bin) {
                out.push((p, WriteKind::Overwrite));
            }
        }
    }
    if unknown {
        for k in 1..a.len() {
            let w = a[k].as_str();
            // a system directory handed to a program the engine does not
            // know may be where it extracts or writes (`unsquashfs -d
            // /usr/local/bin/`, `arj e x.arj /etc/cron.d/`)
            if w.len() > 1 && w.ends_with('/') && is_system_path(w) {
                out.push((w.to_string(), WriteKind::Overwrite));
            }
            let (opt, val) = match w.split_once('=') {
                Some((o, v)) => (o, Some(v.to_string())),
                None => (w, a.get(k + 1).cloned()),
            };
            let o = opt.trim_start_matches('-').to_ascii_lowercase();
            let output_named = opt.starts_with('-')
                && (o == "o"
                    || o == "w"
                    || (o.starts_with('o') && o.len() <= 2 && opt.starts_with("-o"))
                    || [
                        "out", "dest", "target", "log", "dump", "save", "write", "filename",
                    ]
                    .iter()
                    .any(|p| o.starts_with(p)));
            if output_named
                && let Some(v) = val
                && (is_system_path(&v) || is_persistence_path(&v))
            {
                out.push((v, WriteKind::Overwrite));
            }
        }
    }
}

/// Files an awk program writes: `print > FILE`, `printf .. >> FILE`, with
/// FILE a string or a variable set by `-v NAME=VALUE`.
fn awk_write_files(a: &[String]) -> Vec<String> {
    let mut vars: Vec<(String, String)> = Vec::new();
    let mut prog: Option<&str> = None;
    let mut i = 1;
    while i < a.len() {
        let w = a[i].as_str();
        if w == "-v" {
            if let Some((k, v)) = a.get(i + 1).and_then(|x| x.split_once('=')) {
                vars.push((k.to_string(), v.to_string()));
            }
            i += 2;
            continue;
        }
        if let Some(kv) = w.strip_prefix("-v")
            && let Some((k, v)) = kv.split_once('=')
        {
            vars.push((k.to_string(), v.to_string()));
        } else if w == "-f" || w == "-F" {
            if w == "-f" {
                return Vec::new(); // the program is in a file
            }
            i += 2;
            continue;
        } else if !w.starts_with('-') && prog.is_none() {
            prog = Some(w);
        }
        i += 1;
    }
    let Some(prog) = prog else {
        return Vec::new();
    };
    static RED: Lazy<Regex> = Lazy::new(|| {
        Regex::new(r#"(?:print|printf)[^;}|]*?>>?\s*(?:"([^"]+)"|([A-Za-z_][A-Za-z0-9_]*))"#)
            .expect("awk redirect regex")
    });
    let mut out = Vec::new();
    for c in RED.captures_iter(prog).take(8) {
        if let Some(m) = c.get(1) {
            out.push(m.as_str().to_string());
        } else if let Some(m) = c.get(2)
            && let Some((_, v)) = vars.iter().find(|(k, _)| k == m.as_str())
        {
            out.push(v.clone());
        }
    }
    out
}

pub(crate) fn rm_flags(argv: &[String]) -> (bool, bool) {
    // rimraf / del-cli / trash are always recursive
    let n = cmd_name(&argv[0]);
    let mut rec = n != "rm" && n != "grm";
    let mut force = rec;
    for a in &argv[1..] {
        if a == "--" {
            break;
        }
        let al = lc(a);
        if al == "--recursive" || al == "--recursive=true" {
            rec = true;
        } else if al == "--force" {
            force = true;
        } else if a.starts_with('-') && !a.starts_with("--") {
            for c in a[1..].chars() {
                match c {
                    'r' | 'R' => rec = true,
                    'f' | 'F' => force = true,
                    _ => {}
                }
            }
        }
    }
    (rec, force)
}

pub(crate) fn is_rm(e: &Exec) -> bool {
    matches!(e.name.as_str(), "rm" | "grm" | "rimraf" | "del-cli")
}

// ---------------------------------------------------------------- matchers

fn m_rm_critical(_: &RuleCtx, _: usize, e: &Exec) -> bool {
    if !is_rm(e) {
        return false;
    }
    let (rec, _) = rm_flags(&e.argv);
    rec && operands(&e.argv, &[])
        .iter()
        .any(|o| is_critical(&resolve(e, o)))
}

fn m_mv_critical(_: &RuleCtx, _: usize, e: &Exec) -> bool {
    if e.name != "mv" {
        return false;
    }
    let ops = operands(&e.argv, &["-t", "-S", "--suffix", "--target-directory"]);
    let n = ops.len();
    n >= 2 && ops[..n - 1].iter().any(|o| is_critical(&resolve(e, o)))
}

static WIN_WIPE: Lazy<Vec<Regex>> = Lazy::new(|| {
    [
        r#"(?i)\b(rd|rmdir)\b[^&|]*\s/s\b[^&|]*\s"?([a-z]:\\?\*?|%systemdrive%\\?|%userprofile%\\?|%systemroot%|[a-z]:\\(windows|users|program files)\\?)"?\s*($|&|\|)"#,
        r#"(?i)\b(del|erase)\b[^&|]*\s/s\b[^&|]*\s"?([a-z]:\\\*?(\.\*)?|%systemdrive%\\\*?)"?\s*($|&|\|)"#,
        r#"(?i)\bformat(\.com)?\s+[a-z]:"#,
        r#"(?i)\b(remove-item|ri|rm|rmdir|del|erase|rd)\b[^;|]*-r(ecurse)?\b[^;|]*\s['"]?([a-z]:\\?\*?|\$env:(systemdrive|userprofile|systemroot)\\?|~)['"]?\s*($|;|\|)"#,
        r#"(?i)\b(format-volume|clear-disk|initialize-disk|stop-computer|restart-computer)\b"#,
        r#"(?i)\bvssadmin\b.*\bdelete\s+shadows\b|\bbcdedit\b.*\b(deletevalue|/delete)\b|\bcipher\s+/w"#,
    ]
    .iter()
    .map(|r| Regex::new(r).expect("windows regex"))
    .collect()
});

fn m_windows_wipe(_: &RuleCtx, _: usize, e: &Exec) -> bool {
    if !matches!(e.name.as_str(), "cmd" | "powershell" | "pwsh" | "wsl") {
        return false;
    }
    let text = e.argv[1..].join(" ");
    WIN_WIPE.iter().any(|r| r.is_match(&text))
}

fn m_shadowed_tool(ctx: &RuleCtx, _: usize, e: &Exec) -> bool {
    // `npx @scope/pkg`: a package name, not a path
    if e.argv.first().is_some_and(|a| a.starts_with('@')) {
        return false;
    }
    // In a posture: a copy of any program the knowledge base knows, run
    // from the current directory (GTFOBins' suid copies: `./find`,
    // `./file -f`), except the names projects give their own scripts.
    if ctx.posture.is_some()
        && let Some(rest) = e.argv.first().and_then(|p| p.strip_prefix("./"))
        && !rest.contains('/')
        && crate::knowledge::is_known(&e.name)
        && !matches!(
            e.name.as_str(),
            "gradlew"
                | "mvnw"
                | "test"
                | "install"
                | "build"
                | "run"
                | "setup"
                | "configure"
                | "start"
                | "dev"
                | "deploy"
                | "bootstrap"
                | "make"
                | "manage.py"
                | "sbt"
                | "bazel"
                | "buck"
                | "go"
                | "tox"
                | "nox"
        )
    {
        return true;
    }
    const CORE: &[&str] = &[
        "ls", "cat", "sed", "grep", "awk", "find", "cp", "mv", "rm", "echo", "printf", "head",
        "tail", "sort", "uniq", "wc", "cut", "tr", "xargs", "chmod", "chown", "sudo", "su", "env",
        "sh", "bash", "zsh", "dash", "git", "ssh", "scp", "curl", "wget", "tar", "which", "id",
        "whoami", "date", "ps", "kill", "test", "true", "false", "mkdir", "touch", "ln", "stat",
        "diff", "less", "more", "tee", "dd",
    ];
    let Some(p) = e.argv.first() else {
        return false;
    };
    if !p.contains('/') || !CORE.contains(&e.name.as_str()) {
        return false;
    }
    const DIRS: &[&str] = &[
        "/usr/bin/",
        "/bin/",
        "/usr/local/bin/",
        "/usr/sbin/",
        "/sbin/",
        "/opt/homebrew/bin/",
        "/usr/local/sbin/",
        "/snap/bin/",
        "/usr/gnu/bin/",
        "/opt/local/bin/",
    ];
    let n = norm_path(p);
    !DIRS.iter().any(|d| {
        n.strip_prefix(d)
            .is_some_and(|r| !r.is_empty() && !r.contains('/'))
    })
}

/// A path operand resolved against the known working directory.
pub(crate) fn resolve(e: &Exec, p: &str) -> String {
    match &e.cwd {
        Some(c) if !p.starts_with('/') && !p.starts_with('~') && !p.starts_with('$') => {
            format!("{c}/{p}")
        }
        _ => p.to_string(),
    }
}

fn m_rsync_critical(_: &RuleCtx, _: usize, e: &Exec) -> bool {
    if e.name != "rsync" || !e.argv.iter().any(|a| a.starts_with("--del")) || dry_run(e) {
        return false;
    }
    let ops = operands(
        &e.argv,
        &["-e", "--rsh", "--exclude", "--include", "-f", "--filter"],
    );
    ops.len() >= 2 && is_critical(ops[ops.len() - 1])
}

fn m_container_host(_: &RuleCtx, _: usize, e: &Exec) -> bool {
    if !matches!(e.name.as_str(), "docker" | "podman" | "nerdctl") {
        return false;
    }
    let a = &e.argv;
    if !a.iter().any(|w| w == "run" || w == "create" || w == "exec") {
        return false;
    }
    a.iter().enumerate().any(|(k, w)| {
        w == "--privileged"
            || w == "--pid=host"
            || ((w == "-v" || w == "--volume" || w == "--mount")
                && a.get(k + 1).is_some_and(|v| {
                    let src = v.split(':').next().unwrap_or("");
                    let src = src
                        .trim_start_matches("type=bind,source=")
                        .trim_start_matches("source=");
                    let ro = v.ends_with(":ro") || v.contains("readonly");
                    is_critical(src) || (!ro && is_system_path(src)) || v.contains("docker.sock")
                }))
            || w.starts_with("--volume=/:")
            || (w.starts_with("-v/") && w[2..].split(':').next().is_some_and(is_critical))
    })
}

fn m_find_critical(_: &RuleCtx, _: usize, e: &Exec) -> bool {
    if e.name != "find" {
        return false;
    }
    let deletes = e.argv.iter().any(|a| a == "-delete")
        || e.argv.windows(2).any(|w| {
            matches!(w[0].as_str(), "-exec" | "-execdir" | "-ok" | "-okdir")
                && matches!(cmd_name(&w[1]).as_str(), "rm" | "shred" | "unlink")
        });
    if !deletes {
        return false;
    }
    // starting points: operands before the first expression word
    let has_depth_limit = e.argv.iter().any(|a| {
        a == "-maxdepth"
            || a == "-name"
            || a == "-iname"
            || a == "-path"
            || a == "-mtime"
            || a == "-newer"
    });
    if has_depth_limit {
        return false;
    }
    e.argv[1..]
        .iter()
        .take_while(|a| !a.starts_with('-') && *a != "!" && *a != "(")
        .any(|p| is_critical(p))
}

fn m_mkfs(_: &RuleCtx, _: usize, e: &Exec) -> bool {
    let n = e.name.as_str();
    if n == "sgdisk"
        && e.argv
            .iter()
            .any(|a| a == "-Z" || a == "--zap-all" || a == "-o" || a == "--clear")
    {
        return true;
    }
    let formatter = n == "mkfs"
        || n.starts_with("mkfs.")
        || matches!(
            n,
            "mke2fs"
                | "mkswap"
                | "wipefs"
                | "blkdiscard"
                | "mkntfs"
                | "mkdosfs"
                | "newfs"
                | "newfs_hfs"
                | "newfs_apfs"
        );
    if !formatter
        || e.argv[1..]
            .iter()
            .all(|a| a == "--help" || a == "-h" || a == "--version" || a == "-V")
    {
        return false;
    }
    if n == "wipefs" {
        // without -a / -o it only lists signatures; -n / --no-act changes nothing
        let flags = short_flags(&e.argv);
        let erases = flags.contains('a')
            || flags.contains('o')
            || has_long(&e.argv, "--all")
            || has_long(&e.argv, "--offset");
        if !erases || flags.contains('n') || has_long(&e.argv, "--no-act") {
            return false;
        }
    }
    let ext = n == "mke2fs" || n.starts_with("mkfs.ext") || n == "mkfs";
    if ext && e.argv[1..].iter().any(|a| a == "-n") {
        return false; // mke2fs -n: show what would be done
    }
    // a device (or a path only known at run time) is formatted; a regular
    // file is a disk image (judged by `disk-tool` when outside the workspace)
    n == "blkdiscard" || mkfs_targets(e).any(formats_device)
}

fn mkfs_targets(e: &Exec) -> impl Iterator<Item = &str> {
    e.argv[1..]
        .iter()
        .filter(|a| !a.starts_with('-'))
        .map(|a| a.as_str())
}

fn formats_device(t: &str) -> bool {
    t.starts_with("/dev/") || t.contains(DYN) || is_disk_device(t)
}

fn m_disk_write(ctx: &RuleCtx, i: usize, e: &Exec) -> bool {
    let t = &ctx.targets[i];
    if t.iter()
        .any(|(p, k)| *k != WriteKind::Delete && *k != WriteKind::Create && is_disk_device(p))
    {
        return true;
    }
    // shred/cp/cat of a device
    matches!(e.name.as_str(), "shred" | "wipe" | "badblocks")
        && e.argv[1..].iter().any(|a| is_disk_device(a))
        && (e.name != "badblocks" || e.argv.iter().any(|a| a.starts_with("-w") || a == "-n"))
}

fn kill_pid_minus_one(argv: &[String]) -> bool {
    // -1 as a pid: the last argument, or any operand after `--` or after a
    // signal option.
    if argv.len() < 2 {
        return false;
    }
    if argv.last().map(|s| s.as_str()) == Some("-1") {
        return true;
    }
    if let Some(p) = argv.iter().position(|a| a == "--") {
        return argv[p + 1..].iter().any(|a| a == "-1");
    }
    false
}

fn m_kill_all(_: &RuleCtx, _: usize, e: &Exec) -> bool {
    match e.name.as_str() {
        "kill" => kill_pid_minus_one(&e.argv),
        "killall5" => true,
        "pkill" | "killall" => {
            // pkill -U 0 / -u root style kills every process of a user: ask elsewhere
            false
        }
        _ => false,
    }
}

fn m_dynamic_cmd(ctx: &RuleCtx, _: usize, e: &Exec) -> bool {
    e.dynamic_name && !(ctx.posture.is_some() && safe_eval(ctx.text))
}

/// `eval "$(ssh-agent -s)"` and the other environment set-up lines tools
/// print for `eval` (in a posture).
pub(crate) fn safe_eval(text: &str) -> bool {
    static RE: Lazy<Regex> = Lazy::new(|| {
        Regex::new(r#"^\s*eval\s+["']?(\$\(|`)\s*(ssh-agent( -s| -c)?|pyenv init -|pyenv virtualenv-init -|rbenv init -|nodenv init -|direnv hook (bash|zsh)|brew shellenv|conda shell\.bash hook|fnm env( --use-on-cd)?|zoxide init (bash|zsh)|starship init (bash|zsh)|dircolors( -b)?|opam env|mise activate (bash|zsh)|keychain --eval [\w .-]+)\s*(\)|`)["']?\s*$"#)
            .expect("safe eval regex")
    });
    RE.is_match(text)
}

fn m_rm_recursive(ctx: &RuleCtx, _: usize, e: &Exec) -> bool {
    is_rm(e) && rm_flags(&e.argv).0 && !is_everyday_cleanup(ctx, e) && !find_cleanup_inner(ctx, e)
}

/// `rm -f <tmp>/hermes-(verify|ad-hoc)-NAME`: the agent's own verification
/// artefact, exempt when it is the whole command.
fn is_verify_artifact(e: &Exec) -> bool {
    if e.argv.len() != 3 || e.argv[1] != "-f" {
        return false;
    }
    let p = &e.argv[2];
    static RE: Lazy<Regex> = Lazy::new(|| {
        Regex::new(r"^/tmp/hermes-(verify|ad-hoc)-[A-Za-z0-9_.-]+$").expect("verify regex")
    });
    RE.is_match(p) && !p.contains("/..") && !p.contains("/./")
}

fn m_rm_forced_outside(ctx: &RuleCtx, _: usize, e: &Exec) -> bool {
    if !is_rm(e) {
        return false;
    }
    let (_, force) = rm_flags(&e.argv);
    if !force {
        return false;
    }
    if ctx.single && is_verify_artifact(e) {
        return false;
    }
    if is_everyday_cleanup(ctx, e) {
        return false;
    }
    operands(&e.argv, &[]).iter().any(|o| is_abs_or_outside(o))
}

fn m_bulk_delete(ctx: &RuleCtx, _: usize, e: &Exec) -> bool {
    if is_everyday_cleanup(ctx, e) {
        return false;
    }
    if find_cleanup_inner(ctx, e) {
        return false;
    }
    if e.name == "find" {
        return e.argv.iter().any(|a| a == "-delete")
            || e.argv.windows(2).any(|w| {
                matches!(w[0].as_str(), "-exec" | "-execdir" | "-ok" | "-okdir")
                    && matches!(
                        cmd_name(&w[1]).as_str(),
                        "rm" | "shred" | "unlink" | "rmdir" | "srm" | "mv" | "truncate"
                    )
            });
    }
    e.bulk
        && matches!(
            e.name.as_str(),
            "rm" | "shred" | "unlink" | "rmdir" | "srm" | "truncate" | "mv"
        )
}

fn m_shred(_: &RuleCtx, _: usize, e: &Exec) -> bool {
    matches!(e.name.as_str(), "shred" | "srm" | "wipe")
}

fn m_dd(_: &RuleCtx, _: usize, e: &Exec) -> bool {
    e.name == "dd"
        && e.argv.len() > 1
        && !e.argv[1..]
            .iter()
            .all(|a| a == "--help" || a == "--version")
}

fn m_disk_tool(_: &RuleCtx, _: usize, e: &Exec) -> bool {
    if mkfs_outside_file(e) {
        return true;
    }
    if !matches!(
        e.name.as_str(),
        "fdisk"
            | "sfdisk"
            | "cfdisk"
            | "gdisk"
            | "sgdisk"
            | "parted"
            | "lvremove"
            | "vgremove"
            | "pvremove"
            | "lvreduce"
            | "resize2fs"
            | "tune2fs"
            | "e2fsck"
            | "fsck"
            | "debugfs"
            | "format"
            | "diskpart"
            | "cryptsetup"
            | "zpool"
            | "zfs"
            | "mdadm"
            | "hdparm"
            | "nvme"
            | "diskutil"
    ) {
        return false;
    }
    let a: Vec<String> = e.argv.iter().map(|s| lc(s)).collect();
    if dry_run(e) {
        return false;
    }
    let has = |w: &[&str]| a[1..].iter().any(|s| w.contains(&s.as_str()));
    let raw_has = |w: &[&str]| e.argv[1..].iter().any(|s| w.contains(&s.as_str()));
    match e.name.as_str() {
        // read-only forms: list / print / dump / verify
        "fdisk" | "cfdisk" | "gdisk" if has(&["-l", "--list", "--help"]) => false,
        "sfdisk"
            if raw_has(&[
                "-l",
                "--list",
                "-d",
                "--dump",
                "-J",
                "--json",
                "-s",
                "--show-size",
                "-V",
                "--verify",
                "-g",
                "--show-geometry",
                "-T",
                "--list-types",
                "--help",
            ]) =>
        {
            false
        }
        "sgdisk"
            if raw_has(&[
                "-p",
                "--print",
                "-i",
                "--info",
                "-v",
                "--verify",
                "-L",
                "--list-types",
                "-O",
                "--print-mbr",
            ]) && !raw_has(&[
                "-Z",
                "--zap-all",
                "-o",
                "--clear",
                "-d",
                "--delete",
                "-n",
                "--new",
            ]) =>
        {
            false
        }
        "parted" => {
            const WRITES: &[&str] = &[
                "mklabel",
                "mktable",
                "mkpart",
                "rm",
                "resizepart",
                "rescue",
                "name",
                "set",
                "toggle",
                "mkfs",
                "resize",
                "move",
                "cp",
            ];
            let reads = has(&["-l", "--list", "print", "p", "--help", "-h"]);
            !reads || has(WRITES)
        }
        "e2fsck" | "fsck" if raw_has(&["-n", "-N"]) => false,
        "tune2fs" if raw_has(&["-l"]) => false,
        "resize2fs" if raw_has(&["-P"]) => false,
        "debugfs" => raw_has(&["-w"]),
        "fdisk" | "sfdisk" | "cfdisk" | "gdisk" | "sgdisk" | "lvremove" | "vgremove"
        | "pvremove" | "lvreduce" | "resize2fs" | "tune2fs" | "e2fsck" | "fsck" | "format"
        | "diskpart" => !has(&["--help"]),
        "cryptsetup" => a.iter().any(|s| {
            s == "luksformat" || s == "erase" || s == "luksremovekey" || s == "luksKillSlot"
        }),
        "zpool" | "zfs" => a.iter().any(|s| s == "destroy"),
        "mdadm" => a
            .iter()
            .any(|s| s == "--zero-superblock" || s == "--create" || s == "-c"),
        "hdparm" => a
            .iter()
            .any(|s| s.starts_with("--security-erase") || s == "--trim-sector-ranges"),
        "nvme" => a.iter().any(|s| s == "format" || s == "sanitize"),
        "diskutil" => a.iter().any(|s| {
            s.starts_with("erase") || s == "partitiondisk" || s == "zerodisk" || s == "randomdisk"
        }),
        _ => false,
    }
}

fn m_system_write(ctx: &RuleCtx, i: usize, e: &Exec) -> bool {
    let _ = e;
    ctx.targets[i]
        .iter()
        .any(|(p, _)| is_system_path(p) && !is_disk_device(p))
}

fn m_dotfile_write(ctx: &RuleCtx, i: usize, e: &Exec) -> bool {
    let _ = e;
    ctx.targets[i].iter().any(|(p, k)| {
        (*k != WriteKind::Create && *k != WriteKind::IntoDir && is_user_sensitive(p))
            || (*k == WriteKind::IntoDir
                && ctx.posture.is_some()
                && crate::paths::holds_persistence(p))
    })
}

fn m_project_config(ctx: &RuleCtx, i: usize, e: &Exec) -> bool {
    let _ = e;
    ctx.targets[i]
        .iter()
        .any(|(p, k)| matches!(k, WriteKind::Overwrite | WriteKind::Append) && is_project_config(p))
}

const METADATA_CMDS: &[&str] = &[
    "ls",
    "stat",
    "file",
    "test",
    "[",
    "[[",
    "chmod",
    "chown",
    "chgrp",
    "touch",
    "mkdir",
    "which",
    "du",
    "find",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "echo",
    "printf",
    "ssh-add",
    "ssh-keygen",
    "ssh",
    "git",
    "cd",
    "pushd",
    "type",
    "command",
    "rm",
    "unlink",
    "shred",
    "lsattr",
    "getfacl",
    "setfacl",
    "wc",
    "md5sum",
    "sha256sum",
    "sha1sum",
    "shasum",
];

/// Cheap pre-check before the path normalisation and regex.
fn may_be_credential(a: &str) -> bool {
    static HINTS: Lazy<Regex> = Lazy::new(|| {
        Regex::new(r"(?i)id_|netrc|credential|shadow|gnupg|\.docker|\.kube|pgpass|vault-token|pypirc|npmrc|\.ssh|my\.cnf|hosts\.yml|password-store|master\.passwd|tokens|secring|\.aws|gcloud|\.azure|environ|/private/|cookies|login data|key[34]\.db|logins\.json|keychain|secrets/|_key|auth\.json|huggingface|[*?\[]")
            .expect("credential hints")
    });
    // a word with a newline or this long is text, not a path
    a.len() <= 1024 && !a.contains('\n') && HINTS.is_match(a)
}

fn credential_tool(e: &Exec) -> bool {
    match e.name.as_str() {
        "security" => e.argv[1..].iter().any(|a| {
            (a.starts_with("find-") && a.ends_with("-password"))
                || a == "dump-keychain"
                || a == "export"
        }),
        "gpg" | "gpg2" => e.argv[1..].iter().any(|a| a.starts_with("--export-secret")),
        "aws" => {
            e.argv.iter().any(|a| a == "configure")
                && e.argv
                    .iter()
                    .any(|a| a == "get" || a == "export-credentials")
                && e.argv.iter().any(|a| {
                    contains_ci(a, "secret") || contains_ci(a, "token") || a == "export-credentials"
                })
        }
        _ => false,
    }
}

fn m_credential_read(_: &RuleCtx, _: usize, e: &Exec) -> bool {
    if credential_tool(e) {
        return true;
    }
    if e.redirs
        .iter()
        .any(|r| r.op == RedirOp::In && is_credential_file(&r.target))
    {
        return true;
    }
    if e.argv.is_empty() {
        return false;
    }
    // `git diff --no-index A B` prints both files
    let git_reads = e.name == "git"
        && git_sub(&e.argv).is_some_and(|(_, s)| s == "diff")
        && e.argv.iter().any(|a| a == "--no-index");
    if !git_reads && METADATA_CMDS.contains(&e.name.as_str()) {
        return false;
    }
    if recursive_reader_roots(e).iter().any(|(root, include)| {
        matches!(root.as_str(), "/" | "~" | "/home" | "/root")
            && include.iter().any(|g| {
                CRED_SAMPLES
                    .iter()
                    .any(|c| glob_can_match(g, c.rsplit('/').next().unwrap_or(c)))
            })
    }) {
        return true;
    }
    let mut skip_next = false;
    for a in &e.argv[1..] {
        if skip_next {
            skip_next = false;
            continue;
        }
        if a == "-i"
            && matches!(
                e.name.as_str(),
                "scp" | "sftp" | "rsync" | "sshfs" | "ssh-copy-id"
            )
        {
            skip_next = true;
            continue;
        }
        let v = a
            .strip_prefix('@')
            .or_else(|| a.split_once('=').map(|(_, v)| v.trim_start_matches('@')))
            .unwrap_or(a);
        let (rv, ra) = (resolved(e, v), resolved(e, a));
        if may_be_credential(&ra) && (is_credential_file(&rv) || is_credential_file(&ra)) {
            return true;
        }
    }
    false
}

pub use crate::effects::recursive_reader_roots;

pub(crate) fn is_network_tool(n: &str) -> bool {
    matches!(
        n,
        "curl"
            | "wget"
            | "nc"
            | "ncat"
            | "netcat"
            | "socat"
            | "telnet"
            | "ssh"
            | "scp"
            | "sftp"
            | "ftp"
            | "tftp"
            | "http"
            | "https"
            | "xh"
            | "httpie"
            | "openssl"
            | "aria2c"
            | "rsync"
            | "gsutil"
            | "aws"
            | "rclone"
            | "sendmail"
            | "mail"
            | "mutt"
            | "nc.traditional"
            | "nc.openbsd"
    )
}

/// Variables that make the program run or load code
/// ([`env_hijack`]), for a program that does something (not
/// `echo`, `true`, `cd`); `PYTHONPATH` when a directory in it holds (or
/// this command writes) `sitecustomize.py`, `usercustomize.py` or a
/// `.pth` file.
fn m_env_code(ctx: &RuleCtx, _: usize, e: &Exec) -> bool {
    if e.argv.is_empty()
        || matches!(
            e.name.as_str(),
            "echo" | "printf" | "true" | ":" | "cd" | "export" | "unset" | "test" | "["
        )
    {
        return false;
    }
    e.env.iter().any(|(n, v)| {
        if n == "PYTHONPATH" {
            return python_path_hooks(ctx, v);
        }
        env_hijack(n, v, ctx.workspace).is_some()
    })
}

fn python_path_hooks(ctx: &RuleCtx, v: &str) -> bool {
    let hook =
        |b: &str| matches!(b, "sitecustomize.py" | "usercustomize.py") || b.ends_with(".pth");
    let written = ctx
        .analysis
        .execs
        .iter()
        .flat_map(write_targets)
        .any(|(p, _)| hook(p.rsplit('/').next().unwrap_or(&p)));
    if written {
        return true;
    }
    v.split(':').any(|d| {
        if d.contains(DYN) {
            return true;
        }
        let dir = if d.starts_with('/') {
            d.to_string()
        } else if let Some(w) = ctx.workspace {
            format!("{w}/{d}")
        } else {
            return false;
        };
        ["sitecustomize.py", "usercustomize.py"]
            .iter()
            .any(|f| std::path::Path::new(&format!("{dir}/{f}")).exists())
    })
}

fn m_builtin_rebind(_: &RuleCtx, _: usize, e: &Exec) -> bool {
    match e.name.as_str() {
        "hash" => e.argv[1..]
            .iter()
            .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('p')),
        "enable" => e.argv[1..]
            .iter()
            .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('f')),
        _ => false,
    }
}

/// Home, or a directory of credentials, read whole (`tar c ~`, `zip -r x
/// ~/.ssh`): the archive holds the keys.
fn reads_credential_tree(e: &Exec) -> bool {
    if !matches!(
        e.name.as_str(),
        "tar"
            | "gtar"
            | "bsdtar"
            | "zip"
            | "7z"
            | "7za"
            | "cpio"
            | "rsync"
            | "scp"
            | "cp"
            | "find"
            | "grep"
            | "rg"
            | "du"
            | "ls"
    ) || matches!(e.name.as_str(), "du" | "ls")
    {
        return false;
    }
    e.argv[1..].iter().any(|a| {
        let v = a.split_once('=').map_or(a.as_str(), |x| x.1);
        let n = norm_path(v);
        let n = n.trim_end_matches('/');
        n == "~"
            || n == "/root"
            || n == "/home"
            || n == "/"
            || n.strip_prefix("/home/").is_some_and(|r| !r.contains('/'))
            || [
                "~/.ssh",
                "~/.aws",
                "~/.gnupg",
                "~/.config",
                "~/.kube",
                "~/.docker",
                "~/.password-store",
            ]
            .contains(&n)
    })
}

fn m_exfil(ctx: &RuleCtx, _: usize, e: &Exec) -> bool {
    if !is_network_tool(&e.name) {
        return false;
    }
    let secret = |p: &str| {
        is_credential_file(p)
            || crate::effects::is_env_file(p)
            || (is_project_config(p) && p.contains(".env"))
    };
    // a secret file on its stdin: `curl -d @- URL < .env`
    if e.redirs
        .iter()
        .any(|r| r.op == RedirOp::In && secret(&r.target))
    {
        return true;
    }
    let execs = &ctx.analysis.execs;
    let mut up = e.stdin_from;
    let mut hops = 0;
    while let Some(u) = up {
        let Some(ue) = execs.get(u) else { break };
        if reads_credential_tree(ue)
            || ue
                .redirs
                .iter()
                .any(|r| r.op == RedirOp::In && secret(&r.target))
        {
            return true;
        }
        if matches!(
            ue.name.as_str(),
            "env" | "printenv" | "set" | "export" | "declare" | "history"
        ) && ue.argv.len() <= 2
        {
            return true;
        }
        if ue.argv[1.min(ue.argv.len())..]
            .iter()
            .any(|a| is_credential_file(a) || (is_project_config(a) && a.contains(".env")))
        {
            return true;
        }
        up = ue.stdin_from;
        hops += 1;
        if hops > 16 {
            break;
        }
    }
    // `curl -d "$(env)"`: an environment dump substituted into the arguments
    if e.argv.iter().any(|a| a.contains(DYN))
        && execs.iter().any(|x| {
            x.via.as_deref() == Some("$(...)")
                && matches!(x.name.as_str(), "env" | "printenv" | "set" | "export")
                && x.argv.len() <= 2
        })
    {
        return true;
    }
    // uploads of sensitive files: curl -d @~/.ssh/id_rsa, -T, -F x=@file
    e.argv[1..].iter().any(|a| {
        let v = a.rsplit('@').next().unwrap_or(a);
        (a.contains('@') || a.starts_with('<'))
            && (is_credential_file(v) || is_project_config(v) && v.contains(".env"))
    })
}

pub(crate) fn script_operand(e: &Exec) -> Option<&str> {
    // first operand after options (for shells and interpreters)
    let mut i = 1;
    while i < e.argv.len() {
        let a = &e.argv[i];
        if a == "--" {
            return e.argv.get(i + 1).map(|s| s.as_str());
        }
        if a.starts_with('-') && a.len() > 1 {
            if matches!(
                a.as_str(),
                "-o" | "-O"
                    | "--rcfile"
                    | "--init-file"
                    | "-W"
                    | "-X"
                    | "-m"
                    | "-r"
                    | "--require"
                    | "-I"
            ) {
                i += 2;
                continue;
            }
            i += 1;
            continue;
        }
        return Some(a.as_str());
    }
    None
}

fn reads_script_from_stdin(e: &Exec) -> bool {
    if is_shell(&e.name) {
        let flags = short_flags(&e.argv);
        if flags.contains('c') {
            return false;
        }
        return flags.contains('s')
            || matches!(script_operand(e), None | Some("-") | Some("/dev/stdin"));
    }
    if is_interpreter(&e.name) {
        let flags = short_flags(&e.argv);
        if flags.contains('c')
            || flags.contains('e')
            || flags.contains('m')
            || e.argv
                .iter()
                .any(|a| a == "--eval" || a == "--version" || a == "-V" || a == "--help")
        {
            return false;
        }
        return matches!(script_operand(e), None | Some("-") | Some("/dev/stdin"));
    }
    if matches!(e.name.as_str(), "source" | ".") {
        return matches!(
            e.argv.get(1).map(|s| s.as_str()),
            Some("/dev/stdin") | Some("-")
        );
    }
    false
}

fn m_pipe_to_shell(_: &RuleCtx, _: usize, e: &Exec) -> bool {
    (e.stdin_from.is_some() || e.stdin_text.as_ref().is_some_and(|t| t.contains(DYN)))
        && reads_script_from_stdin(e)
}

fn m_procsub_exec(_: &RuleCtx, _: usize, e: &Exec) -> bool {
    // `sh < <(curl ..)`, `exec < <(curl ..)`: the script comes on stdin
    // from a process substitution
    if e.redirs.iter().any(|r| {
        r.op == RedirOp::In && (r.target.starts_with("/dev/fd/") || r.target.contains(DYN))
    }) && (reads_script_from_stdin(e) || (e.name == "exec" && e.argv.len() == 1))
    {
        return true;
    }
    if !(is_shell(&e.name) || is_interpreter(&e.name) || matches!(e.name.as_str(), "source" | "."))
    {
        return false;
    }
    e.argv[1..].iter().any(|a| {
        a.starts_with("/dev/fd/")
            || a.starts_with("/proc/self/fd/")
            || a.contains(DYN) && !a.starts_with('-')
    }) && !e.argv[1..]
        .iter()
        .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('c') && is_shell(&e.name))
}

fn m_shell_c(ctx: &RuleCtx, _: usize, e: &Exec) -> bool {
    if !is_shell(&e.name) {
        return false;
    }
    // in a posture the payload is judged by its content (it was analysed);
    // only a payload computed at run time asks (dynamic-payload)
    if ctx.posture.is_some() && !e.argv.iter().any(|a| a.contains(DYN)) {
        return false;
    }
    let mut i = 1;
    while i < e.argv.len() {
        let a = &e.argv[i];
        if a == "-o" || a == "-O" {
            i += 2;
            continue;
        }
        if a.starts_with('-') && !a.starts_with("--") && a.len() > 1 {
            if a.contains('c') {
                return true;
            }
        } else if !a.starts_with("--") {
            return false;
        }
        i += 1;
    }
    false
}

static AWK_EXEC: Lazy<Regex> = Lazy::new(|| {
    Regex::new(r#"system\s*\(|\|\s*getline|printf?\b[^;}]*\||\|&|printf?\b[^;}]*>\s*("/|[^"\s>])"#)
        .expect("awk regex")
});

fn m_inline_script(ctx: &RuleCtx, i: usize, e: &Exec) -> bool {
    let hit = m_inline_script_shape(e);
    if hit && ctx.posture.is_some() && is_interpreter(&e.name) {
        // judged by content: plain code (no spawning, deletion, network or
        // dynamic evaluation) runs without asking
        let _ = i;
        return crate::effects::unknown_cmdline_modules(e)
            || !inline_code(e).is_some_and(|c| !c.contains(DYN) && inline_code_is_plain(&c));
    }
    hit
}

fn m_inline_script_shape(e: &Exec) -> bool {
    let n = e.name.as_str();
    if matches!(
        n,
        "powershell" | "pwsh" | "cmd" | "wscript" | "cscript" | "mshta" | "rundll32" | "regsvr32"
    ) {
        return e.argv.len() > 1
            && !e.argv[1..].iter().all(|a| {
                let l = lc(a);
                l == "-version" || l == "-help" || l == "/?" || l == "-?" || l == "--version"
            });
    }
    if matches!(n, "awk" | "gawk" | "mawk" | "nawk") {
        // spawning literal commands is analysed (see analyze::shell_strings_in_code);
        // only commands computed at run time are opaque
        static AWK_DYNAMIC: Lazy<Regex> = Lazy::new(|| {
            Regex::new(
                r#"system\s*\(\s*[^"\s)]|(^|[^|])\|\s*[a-zA-Z_$(]|\|&|[^"\s]\s*\|\s*getline|printf?\b[^;}]*>>?\s*[a-zA-Z_$(]"#,
            )
            .expect("awk dynamic regex")
        });
        // the program text is the first operand after the options (`-v
        // c=..`, `-F ,` take a value)
        let prog = operands(
            &e.argv,
            &["-v", "-F", "-f", "--assign", "--field-separator", "--file"],
        )
        .into_iter()
        .next();
        return prog.is_some_and(|p| AWK_EXEC.is_match(p) && AWK_DYNAMIC.is_match(p));
    }
    if !is_interpreter(n) {
        return false;
    }
    if e.stdin_text.is_some() {
        return true;
    }
    // options with values before the code (`ruby -r open3 -e ..`,
    // `perl -I lib -e ..`, `python3 -W ignore -c ..`)
    {
        let base = n.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
        if (matches!(base, "perl" | "ruby" | "irb") || base.starts_with("python"))
            && inline_code(e).is_some()
        {
            return true;
        }
    }
    let base = n.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    for a in &e.argv[1..] {
        if a == "--" || (!a.starts_with('-')) {
            break;
        }
        let l = a.as_str();
        let hit = match base {
            "node" | "nodejs" | "bun" => {
                matches!(l, "-e" | "--eval" | "-p" | "--print" | "-pe")
                    || l.starts_with("--eval=")
                    || l.starts_with("--print=")
            }
            "deno" => false,
            "php" => matches!(l, "-r" | "-B" | "-R" | "-E" | "-F") || l.starts_with("-r"),
            "osascript" | "lua" | "luajit" | "rscript" | "julia" | "elixir" | "erl" | "groovy" => {
                l == "-e" || l == "--eval" || l == "-eval" || l == "-c"
            }
            _ if base.starts_with("python") || base == "py" || base == "pypy" => {
                !l.starts_with("--")
                    && l[1..].contains('c')
                    && l[1..].chars().all(|c| c.is_ascii_alphabetic())
            }
            "perl" | "ruby" | "irb" => {
                !l.starts_with("--") && (l[1..].contains('e') || l[1..].contains('E'))
            }
            _ => l == "-e" || l == "-c" || l == "--eval",
        };
        if hit {
            return true;
        }
    }
    if base == "deno" && matches!(e.argv.get(1).map(|s| s.as_str()), Some("eval")) {
        return true;
    }
    false
}

fn m_exec_created(ctx: &RuleCtx, idx: usize, e: &Exec) -> bool {
    if ctx.posture.is_some() {
        // judged by content: a file whose content the command wrote
        // literally was analysed (shell) or is checked here (interpreters);
        // a file only made executable runs what it already held
        let runs = if e.argv.first().is_some_and(|a| a.contains('/')) {
            e.argv.first().cloned()
        } else if is_shell(&e.name)
            || is_interpreter(&e.name)
            || matches!(e.name.as_str(), "source" | ".")
        {
            script_operand(e).map(|s| s.to_string())
        } else {
            None
        };
        let Some(p) = runs else { return false };
        let p = norm_path(&p);
        let written = ctx.analysis.written.iter().rev().find(|(f, _)| *f == p);
        let unknown_write = ctx.analysis.execs[..idx].iter().enumerate().any(|(j, _)| {
            ctx.targets[j]
                .iter()
                .any(|(t, k)| *k != WriteKind::Delete && norm_path(t) == p)
        }) && written.is_none();
        return unknown_write
            || written.is_some_and(|(_, c)| {
                let shell_script =
                    is_shell(&e.name) || (e.argv[0].contains('/') && !is_interpreter(&e.name));
                // a shell script's content was analysed when written
                !shell_script && !inline_code_is_plain(c)
            });
    }
    let runs: Option<String> = if e.argv.first().is_some_and(|a| a.contains('/')) {
        e.argv.first().cloned()
    } else if is_shell(&e.name)
        || is_interpreter(&e.name)
        || matches!(e.name.as_str(), "source" | ".")
    {
        script_operand(e).map(|s| s.to_string())
    } else {
        None
    };
    let Some(p) = runs else { return false };
    let p = norm_path(&p);
    let base = |s: &str| s.rsplit('/').next().unwrap_or(s).to_string();
    let pb = base(&p);
    // same path, or same file name (the directory may have changed with cd)
    let same = |t: &str| {
        let t = norm_path(t);
        t == p || (!pb.is_empty() && pb != "." && base(&t) == pb)
    };
    for (j, prev) in ctx.analysis.execs[..idx].iter().enumerate() {
        if ctx.targets[j]
            .iter()
            .any(|(t, k)| *k != WriteKind::Delete && same(t))
        {
            return true;
        }
        if matches!(prev.name.as_str(), "chmod")
            && prev.argv.iter().any(|a| {
                a.contains("+x")
                    || a.contains("755")
                    || a.contains("777")
                    || a.contains("700")
                    || a.contains("775")
            })
            && operands(&prev.argv, &[]).iter().any(|o| same(o))
        {
            return true;
        }
    }
    false
}

fn m_reverse_shell(ctx: &RuleCtx, _: usize, e: &Exec) -> bool {
    if e.redirs
        .iter()
        .any(|r| r.target.starts_with("/dev/tcp/") || r.target.starts_with("/dev/udp/"))
    {
        return true;
    }
    if e.name != "echo"
        && e.name != "printf"
        && e.argv
            .iter()
            .any(|a| a.starts_with("/dev/tcp/") || a.starts_with("/dev/udp/"))
    {
        return true;
    }
    if is_network_tool(&e.name)
        && let Some(up) = e.stdin_from.and_then(|u| ctx.analysis.execs.get(u))
        && (is_shell(&up.name) || is_interpreter(&up.name))
        && reads_script_from_stdin(up)
    {
        return true;
    }
    match e.name.as_str() {
        "nc" | "ncat" | "netcat" | "nc.traditional" | "nc.openbsd" | "busybox" => {
            e.argv[1..].iter().any(|a| {
                matches!(
                    a.as_str(),
                    "-e" | "-c" | "--exec" | "--sh-exec" | "--lua-exec"
                ) || a.starts_with("--exec=")
                    || a.starts_with("--sh-exec=")
                    || (a.starts_with('-')
                        && !a.starts_with("--")
                        && a.ends_with('e')
                        && a.len() <= 5)
            })
        }
        "socat" => e.argv[1..].iter().any(|a| {
            let l = lc(a);
            l.contains("exec:") || l.contains("system:")
        }),
        _ => false,
    }
}

static METADATA_RE: Lazy<Regex> = Lazy::new(|| {
    Regex::new(r"(?i)(^|[/@\[=\s])(169\.254\.169\.254|169\.254\.170\.2|fd00:ec2::254|metadata\.google\.internal|metadata\.goog|100\.100\.100\.200|metadata\.azure\.com|169\.254\.169\.123|0xa9fea9fe|2852039166)(\]|[:/?#\s]|$)")
        .expect("metadata regex")
});

fn m_metadata(_: &RuleCtx, _: usize, e: &Exec) -> bool {
    if matches!(
        e.name.as_str(),
        "echo"
            | "printf"
            | "grep"
            | "egrep"
            | "fgrep"
            | "rg"
            | "ag"
            | "git"
            | "gh"
            | "ping"
            | "man"
    ) {
        return false;
    }
    e.argv[1.min(e.argv.len())..].iter().any(|a| {
        (a.contains("169.254")
            || contains_ci(a, "metadata")
            || a.contains("100.100.100.200")
            || contains_ci(a, "fd00:ec2")
            || contains_ci(a, "0xa9fe")
            || a.contains("2852039166"))
            && METADATA_RE.is_match(a)
    })
}

pub(crate) use crate::names::git_sub;

static SQL_DESTRUCT: Lazy<Regex> = Lazy::new(|| {
    Regex::new(r"(?is)\b(drop\s+(table|database|schema|index|view|user|role|keyspace|collection)\b|truncate\b|delete\s+from\b|update\s+\S+\s+set\b|alter\s+table\s+\S+\s+drop\b|dropdatabase\s*\(|deletemany\s*\(\s*\{\s*\}\s*\)|flushall\b|flushdb\b)|\.drop\s*\(")
        .expect("sql regex")
});
static SQL_WHERE: Lazy<Regex> = Lazy::new(|| Regex::new(r"(?i)\bwhere\b").expect("where"));
static SQL_CLAUSE_END: Lazy<Regex> = Lazy::new(|| {
    Regex::new(r"(?i)\b(order\s+by|limit|returning|group\s+by)\b").expect("clause end")
});
static SQL_OR: Lazy<Regex> = Lazy::new(|| Regex::new(r"(?i)\bor\b").expect("or"));
static SQL_AND: Lazy<Regex> = Lazy::new(|| Regex::new(r"(?i)\band\b").expect("and"));
static SQL_CMP: Lazy<Regex> =
    Lazy::new(|| Regex::new(r"^(\S+?)\s*(=|==|>=|<=|<>|!=|<|>)\s*(\S+)$").expect("cmp"));

/// SQL text with the contents of string literals removed (`'DROP TABLE'` →
/// `''`), so keywords quoted as data do not count.
fn strip_sql_literals(t: &str) -> std::borrow::Cow<'_, str> {
    if !t.contains('\'') {
        return std::borrow::Cow::Borrowed(t);
    }
    let mut out = String::with_capacity(t.len());
    let mut in_str = false;
    let mut it = t.chars().peekable();
    while let Some(c) = it.next() {
        if in_str {
            if c == '\'' {
                if it.peek() == Some(&'\'') {
                    it.next();
                } else {
                    in_str = false;
                    out.push('\'');
                }
            }
        } else {
            if c == '\'' {
                in_str = true;
            }
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A WHERE condition true for every row (`1=1`, `true`, `'a'='a'`,
/// `x = x`, `... OR 1=1`, `id IS NOT NULL`).
fn where_is_tautology(cond: &str) -> bool {
    let cond = match SQL_CLAUSE_END.find(cond) {
        Some(m) => &cond[..m.start()],
        None => cond,
    };
    SQL_OR.split(cond).any(|disj| {
        SQL_AND.split(disj).all(|c| {
            let c = c
                .trim()
                .trim_matches(|ch: char| ch == '(' || ch == ')' || ch.is_whitespace())
                .to_ascii_lowercase();
            if matches!(c.as_str(), "1" | "true" | "not false" | "not 0" | "''") {
                return true;
            }
            if let Some(col) = c.strip_suffix(" is not null") {
                return !col.trim().is_empty() && !col.contains(' ');
            }
            if let Some(m) = SQL_CMP.captures(&c) {
                let (l, op, r) = (&m[1], &m[2], &m[3]);
                if l == r {
                    return matches!(op, "=" | "==" | ">=" | "<=");
                }
                if let (Ok(x), Ok(y)) = (l.parse::<f64>(), r.parse::<f64>()) {
                    return match op {
                        "=" | "==" => x == y,
                        "<>" | "!=" => x != y,
                        "<" => x < y,
                        ">" => x > y,
                        "<=" => x <= y,
                        ">=" => x >= y,
                        _ => false,
                    };
                }
            }
            false
        })
    })
}

pub(crate) fn sql_is_destructive(text: &str) -> bool {
    if !SQL_DESTRUCT.is_match(text) {
        return false;
    }
    let text = strip_sql_literals(text);
    for stmt in text.split(';') {
        if let Some(m) = SQL_DESTRUCT.find(stmt) {
            let kw = m.as_str().to_lowercase();
            if kw.starts_with("delete") || kw.starts_with("update") {
                let rest = &stmt[m.start()..];
                match SQL_WHERE.find(rest) {
                    None => return true,
                    Some(w) => {
                        if where_is_tautology(&rest[w.end()..]) {
                            return true;
                        }
                    }
                }
            } else {
                return true;
            }
        }
    }
    false
}

pub(crate) fn is_sql_client(n: &str) -> bool {
    matches!(
        n,
        "mysql"
            | "mariadb"
            | "psql"
            | "sqlite3"
            | "sqlite"
            | "sqlcmd"
            | "clickhouse-client"
            | "clickhouse"
            | "duckdb"
            | "cockroach"
            | "usql"
            | "pgcli"
            | "mycli"
            | "litecli"
            | "snowsql"
            | "spark-sql"
            | "hive"
            | "beeline"
            | "cqlsh"
            | "trino"
            | "presto"
            | "sqlplus"
            | "isql"
            | "mongo"
            | "mongosh"
            | "redis-cli"
            | "bq"
            | "db2"
            | "osql"
    )
}

fn m_sql(ctx: &RuleCtx, _: usize, e: &Exec) -> bool {
    let n = e.name.as_str();
    // the coreutils `truncate` takes -s/-r: with an option it is not SQL
    if n == "truncate" && e.argv[1..].iter().any(|a| a.starts_with('-')) {
        return false;
    }
    if matches!(n, "drop" | "delete" | "truncate" | "update" | "alter") {
        return sql_is_destructive(&e.argv.join(" "));
    }
    if !is_sql_client(n) {
        return false;
    }
    if sql_is_destructive(&e.argv[1..].join(" ")) {
        return true;
    }
    if let Some(t) = &e.stdin_text
        && sql_is_destructive(t)
    {
        return true;
    }
    if let Some(u) = e.stdin_from
        && let Some(ue) = ctx.analysis.execs.get(u)
    {
        if matches!(ue.name.as_str(), "echo" | "printf" | "cat")
            && sql_is_destructive(&ue.argv[1..].join(" "))
        {
            return true;
        }
        if let Some(t) = &ue.stdin_text
            && sql_is_destructive(t)
        {
            return true;
        }
    }
    false
}

pub(crate) fn m_pkg_remove(_: &RuleCtx, _: usize, e: &Exec) -> bool {
    let n = e.name.as_str();
    let a = &e.argv;
    if dry_run(e) {
        return false;
    }
    let removal: &[&str] = match n {
        "npm" | "pnpm" | "yarn" | "bun" | "cnpm" => {
            &["uninstall", "un", "unlink", "remove", "rm", "r", "erase"]
        }
        "pip" | "pip3" | "pipx" | "uv" | "conda" | "mamba" | "micromamba" | "poetry" | "pdm"
        | "gem" | "cargo" | "go" => &["uninstall", "remove", "rm"],
        "brew" | "port" => &["uninstall", "rm", "remove", "zap"],
        "apt" | "apt-get" | "aptitude" => &["remove", "purge", "autoremove"],
        "dnf" | "yum" | "zypper" | "microdnf" | "tdnf" => &["remove", "erase", "rm", "autoremove"],
        "apk" => &["del"],
        "snap" => &["remove"],
        "flatpak" => &["uninstall", "remove"],
        "choco" | "winget" | "scoop" => &["uninstall", "remove"],
        "nix-env" => &["-e", "--uninstall"],
        "pacman" | "yay" | "paru" => {
            return a[1..].iter().any(|w| {
                w.starts_with("-R")
                    || w == "--remove"
                    || (w.starts_with('-') && !w.starts_with("--") && w.contains('R'))
            });
        }
        "dpkg" => {
            return a[1..]
                .iter()
                .any(|w| matches!(w.as_str(), "-r" | "-P" | "--remove" | "--purge"));
        }
        "rpm" => return a[1..].iter().any(|w| w == "-e" || w == "--erase"),
        _ => return false,
    };
    if n == "nix-env" {
        return a[1..].iter().any(|w| removal.contains(&w.as_str()));
    }
    const VERBS: &[&str] = &[
        "install", "i", "add", "update", "upgrade", "up", "run", "ci", "list", "ls", "info",
        "show", "search", "exec", "init", "test", "build", "publish", "outdated", "audit", "link",
        "pack", "why", "config", "cache", "freeze", "download", "wheel", "check", "help", "view",
        "tap", "doctor", "cleanup", "create", "x", "dlx", "start", "version", "login", "whoami",
        "env", "sync", "lock", "tree", "fetch", "get", "clean", "make", "set", "source", "inspect",
        "hash", "debug", "pip", "tool",
    ];
    for w in &a[1..] {
        if w.starts_with('-') {
            continue;
        }
        let wl = lc(w);
        if removal.contains(&wl.as_str()) {
            return true;
        }
        if wl == "global" || (n == "uv" && (wl == "pip" || wl == "tool")) {
            continue;
        }
        if VERBS.contains(&wl.as_str()) {
            return false;
        }
    }
    false
}

fn m_proc_kill(ctx: &RuleCtx, _: usize, e: &Exec) -> bool {
    let a = &e.argv;
    match e.name.as_str() {
        "killall" => {
            !a[1..]
                .iter()
                .any(|w| matches!(w.as_str(), "-l" | "--list" | "-V" | "--version" | "--help"))
                && a.len() > 1
        }
        "pkill" | "pgrep" if e.name == "pkill" => {
            let kill_sig = a[1..].iter().enumerate().any(|(k, w)| {
                let wl = w.to_uppercase();
                matches!(wl.as_str(), "-9" | "-KILL" | "-SIGKILL")
                    || ((w == "--signal" || w == "-s")
                        && a.get(k + 2).is_some_and(|v| {
                            let v = v.to_uppercase();
                            v == "9" || v == "KILL" || v == "SIGKILL"
                        }))
                    || wl == "--SIGNAL=KILL"
                    || wl == "--SIGNAL=9"
            });
            kill_sig || a[1..].iter().any(|w| lc(w).contains("hermes"))
        }
        // pids computed by a substitution (`kill -9 $(pgrep x)`)
        "kill" if a.len() >= 2 && a.last().is_some_and(|l| l == "1") => true,
        // `kill $(lsof -t -i:3000)`: the process on a development port
        "kill"
            if ctx.posture.is_some()
                && ctx.analysis.execs.iter().any(|x| {
                    x.name == "lsof"
                        && x.via.as_deref() == Some("$(...)")
                        && x.argv.iter().any(|w| w.starts_with("-t"))
                        && x.argv
                            .iter()
                            .any(|w| w.starts_with("-i:") || w.starts_with("-ti:"))
                })
                && ctx
                    .analysis
                    .execs
                    .iter()
                    .filter(|x| x.via.as_deref() == Some("$(...)"))
                    .all(|x| x.name == "lsof") =>
        {
            false
        }
        "kill" => {
            e.bulk
                || a[1..].iter().any(|w| w.contains(DYN))
                    && ctx
                        .analysis
                        .execs
                        .iter()
                        .any(|x| x.via.as_deref() == Some("$(...)"))
        }
        "xkill" => true,
        _ => false,
    }
}

fn m_service(_: &RuleCtx, _: usize, e: &Exec) -> bool {
    if !matches!(
        e.name.as_str(),
        "systemctl"
            | "service"
            | "rc-service"
            | "initctl"
            | "sv"
            | "supervisorctl"
            | "pm2"
            | "launchctl"
    ) {
        return false;
    }
    let a: Vec<String> = e.argv.iter().map(|s| lc(s)).collect();
    const STOPS: &[&str] = &[
        "stop",
        "restart",
        "disable",
        "mask",
        "kill",
        "try-restart",
        "reload-or-restart",
        "condrestart",
        "force-reload",
        "isolate",
        "daemon-reexec",
        "unload",
        "bootout",
        "remove",
        "kickstart",
    ];
    match e.name.as_str() {
        "systemctl" | "service" | "rc-service" | "initctl" | "sv" | "supervisorctl" | "pm2" => {
            a[1..].iter().any(|w| {
                STOPS.contains(&w.as_str()) && w != "unload" && w != "bootout" && w != "kickstart"
            })
        }
        "launchctl" => {
            let verb = a[1..].iter().find(|w| !w.starts_with('-'));
            let destructive = verb.is_some_and(|v| {
                matches!(
                    v.as_str(),
                    "stop" | "kickstart" | "bootout" | "unload" | "remove" | "disable" | "kill"
                )
            });
            destructive
                && a[2..]
                    .iter()
                    .any(|w| is_gateway_label(w) || w.contains(DYN))
        }
        _ => false,
    }
}

fn is_gateway_label(w: &str) -> bool {
    static RE: Lazy<Regex> = Lazy::new(|| {
        Regex::new(r"(^|[/.])ai\.hermes\.gateway($|[-.:/])|hermes-gateway|hermes_gateway")
            .expect("label")
    });
    RE.is_match(w) && !w.contains("update-checker")
}

pub(crate) fn contains_ci(hay: &str, needle: &str) -> bool {
    hay.as_bytes()
        .windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

fn m_gateway(_: &RuleCtx, _: usize, e: &Exec) -> bool {
    if e.name != "hermes" && !e.argv.iter().any(|w| contains_ci(w, "hermes")) {
        return false;
    }
    let a: Vec<String> = e.argv.iter().map(|s| lc(s)).collect();
    let is_hermes =
        e.name == "hermes" || a.iter().any(|w| w.contains("hermes_cli") || w == "hermes");
    if is_hermes && let Some(g) = a.iter().position(|w| w == "gateway") {
        return a[g + 1..].iter().any(|w| {
            matches!(
                w.as_str(),
                "stop" | "restart" | "--replace" | "kill" | "uninstall"
            )
        });
    }
    false
}

fn octal_mode_risky(m: &str) -> bool {
    if !m.chars().all(|c| c.is_ascii_digit()) || m.is_empty() || m.len() > 4 {
        return false;
    }
    let v = u32::from_str_radix(m, 8).unwrap_or(0);
    (v & 0o002) != 0 || (m.len() == 4 && (v & 0o6000) != 0)
}

fn symbolic_mode_risky(m: &str) -> bool {
    m.split(',').any(|clause| {
        let (who, rest) = clause.split_at(clause.find(['+', '=']).unwrap_or(clause.len()));
        if rest.is_empty() {
            return false;
        }
        let perms = &rest[1..];
        let world = who.contains('o') || who.contains('a');
        (world && perms.contains('w'))
            || perms.contains('s')
            || (who.is_empty() && perms.contains('w') && rest.starts_with('='))
    })
}

fn m_chmod(_: &RuleCtx, _: usize, e: &Exec) -> bool {
    let a = &e.argv;
    match e.name.as_str() {
        "chmod" => {
            let rec = short_flags(a).contains('R') || has_long(a, "--recursive");
            let ops = operands(a, &["--reference"]);
            let Some(mode) = ops.first() else {
                return false;
            };
            let risky = octal_mode_risky(mode) || symbolic_mode_risky(mode);
            let targets = &ops[1.min(ops.len())..];
            risky
                || (rec && targets.iter().any(|t| is_critical(t) || is_system_path(t)))
                || targets
                    .iter()
                    .any(|t| is_critical(t) && norm_path(t) != ".")
        }
        "chown" | "chgrp" => {
            let rec = short_flags(a).contains('R') || has_long(a, "--recursive");
            let ops = operands(a, &["--reference", "--from"]);
            let targets = &ops[1.min(ops.len())..];
            targets
                .iter()
                .any(|t| is_system_path(t) || is_critical(t) || (rec && is_user_sensitive(t)))
        }
        "setfacl" => a.iter().any(|w| w.contains("o:") && w.contains('w')),
        _ => false,
    }
}

fn m_crontab(_: &RuleCtx, _: usize, e: &Exec) -> bool {
    e.name == "crontab"
        && (short_flags(&e.argv).contains('r')
            || has_long(&e.argv, "--remove")
            || e.argv[1..].iter().any(|a| a == "-")
            || !operands(&e.argv, &["-u"]).is_empty())
}

fn m_sudo_stdin(_: &RuleCtx, _: usize, e: &Exec) -> bool {
    if e.name != "sudo" {
        return false;
    }
    let mut i = 1;
    let mut shell_no_cmd = false;
    while i < e.argv.len() {
        let a = &e.argv[i];
        if a == "--stdin" {
            return true;
        }
        if a == "--" || !a.starts_with('-') {
            return false;
        }
        if !a.starts_with("--") {
            if a.contains('S') {
                return true;
            }
            if a == "-s" {
                shell_no_cmd = true;
            }
            if a.ends_with('u')
                || a.ends_with('g')
                || a.ends_with('p')
                || a.ends_with('C')
                || a.ends_with('h')
                || a.ends_with('D')
            {
                i += 1;
            }
        }
        i += 1;
    }
    shell_no_cmd
}

fn m_security(_: &RuleCtx, _: usize, e: &Exec) -> bool {
    if !matches!(
        e.name.as_str(),
        "iptables"
            | "ip6tables"
            | "nft"
            | "iptables-legacy"
            | "iptables-nft"
            | "ufw"
            | "setenforce"
            | "spctl"
            | "csrutil"
            | "aa-disable"
            | "aa-teardown"
            | "set-mppreference"
    ) {
        return false;
    }
    let a: Vec<String> = e.argv.iter().map(|s| lc(s)).collect();
    match e.name.as_str() {
        // firewall tools: see the `firewall-open` family
        "iptables" | "ip6tables" | "nft" | "iptables-legacy" | "iptables-nft" | "ufw" => false,
        "setenforce" => a.get(1).is_some_and(|w| w == "0" || w == "permissive"),
        "spctl" => a
            .iter()
            .any(|w| w == "--master-disable" || w == "--global-disable"),
        "csrutil" => a.iter().any(|w| w == "disable"),
        "aa-disable" | "aa-teardown" => true,
        "set-mppreference" => true,
        _ => false,
    }
}

fn m_user_admin(_: &RuleCtx, _: usize, e: &Exec) -> bool {
    matches!(
        e.name.as_str(),
        "userdel" | "deluser" | "groupdel" | "delgroup" | "chpasswd" | "visudo"
    ) || (e.name == "passwd"
        && e.argv.len() > 1
        && !e.argv[1..].iter().any(|w| w == "-S" || w == "--status"))
        || (e.name == "usermod"
            && e.argv
                .iter()
                .any(|w| w == "-L" || w == "--lock" || w == "-G" || w == "-aG" || w == "-p"))
        || (e.name == "dscl" && e.argv.iter().any(|w| lc(w) == "-delete"))
}

pub(crate) fn m_cloud_destroy(_: &RuleCtx, _: usize, e: &Exec) -> bool {
    let n = e.name.as_str();
    if dry_run(e) {
        return false;
    }
    if !matches!(
        n,
        "docker-compose"
            | "podman-compose"
            | "kubectl"
            | "oc"
            | "helm"
            | "terraform"
            | "tofu"
            | "pulumi"
            | "aws"
            | "gcloud"
            | "az"
            | "doctl"
            | "gsutil"
            | "docker"
            | "podman"
            | "heroku"
            | "flyctl"
            | "fly"
            | "vercel"
            | "firebase"
            | "eksctl"
            | "kind"
            | "minikube"
            | "nerdctl"
            | "s3cmd"
            | "rclone"
            | "gh"
            | "vagrant"
            | "virsh"
            | "lxc"
            | "incus"
    ) {
        return false;
    }
    let words: Vec<String> = e.argv[1..]
        .iter()
        .filter(|w| !w.starts_with('-'))
        .map(|w| lc(w))
        .collect();
    // only the leading verb words (before free-form operands) for gh
    if n == "gh" {
        return words.len() >= 2
            && words[1] == "delete"
            && matches!(
                words[0].as_str(),
                "repo"
                    | "release"
                    | "secret"
                    | "variable"
                    | "cache"
                    | "run"
                    | "codespace"
                    | "ssh-key"
                    | "gpg-key"
            );
    }
    let take = words.len().min(4);
    words[..take].iter().any(|w| {
        matches!(
            w.as_str(),
            "delete"
                | "destroy"
                | "rb"
                | "rm"
                | "rmi"
                | "prune"
                | "uninstall"
                | "terminate-instances"
                | "apps:destroy"
                | "purge"
                | "undefine"
                | "nuke"
                | "deletebucket"
                | "rmdir"
                | "drain"
        ) || w.starts_with("delete-")
            || w.starts_with("remove-")
            || (w == "down" && e.argv.iter().any(|a| a == "-v" || a == "--volumes"))
            || (w == "apply" && e.argv.iter().any(|a| a == "-destroy" || a == "--destroy"))
    })
}

fn m_exec_option(_: &RuleCtx, _: usize, e: &Exec) -> bool {
    let a = &e.argv;
    let any = |f: &dyn Fn(&str) -> bool| a[1..].iter().any(|w| f(w));
    match e.name.as_str() {
        "git" => any(&|w| {
            w.starts_with("--upload-pack")
                || w.starts_with("--receive-pack")
                || w.starts_with("core.sshcommand=")
                || w.starts_with("core.pager=")
                || w.starts_with("core.fsmonitor=")
                || w.starts_with("--exec=")
        }),
        "ssh" | "scp" | "sftp" => any(&|w| {
            let l = lc(w);
            l.starts_with("proxycommand=")
                || l.starts_with("localcommand=")
                || l.starts_with("permitlocalcommand=yes")
        }),
        "less" | "more" => false,
        // rg, sort, tar, zip, man, ag: options in knowledge::PROGRAMS
        "vim" | "vi" | "nvim" | "ex" => any(&|w| {
            (w.starts_with('+') || w == "-c" || w.starts_with("--cmd"))
                && a.iter().any(|x| x.contains('!') || x.contains("system("))
        }),
        "find" => any(&|w| matches!(w, "-fprint" | "-fprint0" | "-fprintf" | "-fls")),
        // `pytest --basetemp DIR` empties DIR first: outside the project
        // (and /tmp) that deletes someone's files
        "pytest" | "py.test" => a.iter().enumerate().any(|(k, w)| {
            let v = w
                .strip_prefix("--basetemp=")
                .or_else(|| (w == "--basetemp").then(|| a.get(k + 1).map(|s| s.as_str()))?);
            v.is_some_and(|v| {
                let n = norm_path(v);
                (n.starts_with(['/', '~']) || n.contains(".."))
                    && !n.starts_with("/tmp/")
                    && !n.starts_with("/var/tmp/")
            })
        }),
        // `go env -w`: persistent toolchain settings (GOFLAGS=-toolexec=..)
        "go" => {
            a.get(1).is_some_and(|s| s == "env")
                && a.iter().any(|w| w == "-w")
                && any(&|w| {
                    let k = w.split('=').next().unwrap_or("");
                    w.contains('=')
                        && (k.starts_with("CGO_")
                            || matches!(
                                k,
                                "GOFLAGS"
                                    | "CC"
                                    | "CXX"
                                    | "FC"
                                    | "AR"
                                    | "PKG_CONFIG"
                                    | "GOTOOLCHAIN"
                                    | "GOENV"
                                    | "GOROOT"
                                    | "GOCACHEPROG"
                                    | "GOBIN"
                            ))
                })
        }
        // `cargo --config KEY=VALUE|FILE`: runners, wrappers, linkers
        "cargo" => a.iter().enumerate().any(|(k, w)| {
            let v = w
                .strip_prefix("--config=")
                .or_else(|| (w == "--config").then(|| a.get(k + 1).map(|s| s.as_str()))?);
            v.is_some_and(|v| {
                let l = lc(v);
                !l.contains('=')
                    || [
                        "runner",
                        "rustc",
                        "wrapper",
                        "linker",
                        "rustdoc",
                        "alias",
                        "env.",
                        "credential",
                        "[",
                        "build.",
                    ]
                    .iter()
                    .any(|k| l.contains(k))
            })
        }),
        "env" => false,
        _ => false,
    }
}

/// The regex floor, consulted only when the parser could not understand the
/// input: catastrophic shapes at a command position.
pub static FLOOR: Lazy<Vec<Regex>> = Lazy::new(|| {
    let cmdpos =
        r"(?:^|[;&|(`{\n]|\$\(|\bsudo\s+|\bdoas\s+|\bexec\s+|\bnohup\s+|\benv\s+)\s*(?:\S*/)?";
    [
        format!(r"(?i){cmdpos}rm\s+(?:-\S+\s+)*-\S*r\S*\s+(?:-\S+\s+)*['\x22]?(?:/|/\*|~/?|~/\*|\$\{{?home\}}?/?)['\x22]?(?:\s|$|[;&|)])"),
        format!(r"(?i){cmdpos}mkfs(?:\.\w+)?\s"),
        format!(r"(?i){cmdpos}dd\s[^;&|\n]*of=/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk)"),
        r"(?i)>\s*/dev/(?:sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d)".to_string(),
        r"(\w+|:)\s*\(\)\s*\{[^}]*\|\s*\w*\s*&".to_string(),
        format!(r"(?i){cmdpos}(?:shutdown|reboot|halt|poweroff)(?:\s|$|[;&|)])"),
        format!(r"(?i){cmdpos}kill\s+(?:-\S+\s+)*-1(?:\s|$|[;&|)])"),
    ]
    .iter()
    .map(|s| Regex::new(s).expect("floor regex"))
    .collect()
});

pub fn floor_match(text: &str) -> bool {
    FLOOR.iter().any(|r| r.is_match(text))
}

/// Display form of an argv: words joined with spaces, quoted when needed.
pub fn display_exec(e: &Exec) -> String {
    let mut s = display_argv(&e.argv);
    for r in &e.redirs {
        let op = match r.op {
            RedirOp::In => "<",
            RedirOp::Out => ">",
            RedirOp::Append => ">>",
            RedirOp::ReadWrite => "<>",
            RedirOp::Dup => ">&",
            RedirOp::Heredoc => "<<",
            RedirOp::Herestring => "<<<",
        };
        if !s.is_empty() {
            s.push(' ');
        }
        if let Some(fd) = r.fd {
            s.push_str(&fd.to_string());
        }
        s.push_str(op);
        s.push(' ');
        s.push_str(&display_argv(std::slice::from_ref(&r.target)));
    }
    s
}

/// The text host `pattern` rules see for a program: its argv joined with
/// spaces, without words that are data (echo/printf arguments, search
/// patterns, commit messages and PR/issue text).
pub fn pattern_text(e: &Exec) -> String {
    if e.argv.is_empty()
        || matches!(
            e.name.as_str(),
            "echo"
                | "printf"
                | "grep"
                | "egrep"
                | "fgrep"
                | "rg"
                | "ag"
                | "ack"
                | "man"
                | "which"
                | "type"
        )
    {
        return String::new();
    }
    if !matches!(e.name.as_str(), "git" | "gh" | "hermes" | "glab") {
        return e.argv.join(" ");
    }
    let mut out: Vec<&str> = Vec::new();
    let mut skip = false;
    for a in &e.argv {
        if skip {
            skip = false;
            continue;
        }
        if matches!(
            a.as_str(),
            "-m" | "--message" | "-b" | "--body" | "-t" | "--title" | "--notes" | "-n"
        ) {
            out.push(a);
            skip = true;
            continue;
        }
        if a.starts_with("--message=") || a.starts_with("--body=") || a.starts_with("--title=") {
            continue;
        }
        out.push(a);
    }
    out.join(" ")
}

/// Does a host `argv_prefix` rule match this program?
pub fn prefix_matches(prefix: &[String], e: &Exec) -> bool {
    if prefix.is_empty() || e.argv.len() < prefix.len() {
        return false;
    }
    if cmd_name(&prefix[0]) != e.name {
        return false;
    }
    prefix[1..]
        .iter()
        .zip(&e.argv[1..])
        .all(|(p, a)| p == "*" || p == a)
}

pub fn analysis_is_single(a: &Analysis) -> bool {
    a.execs.len() == 1 && a.payloads.is_empty()
}

/// Whether setting `name=value` makes a program run or load code it
/// would not otherwise (`dir`: the workspace, when known; a config home
/// inside it asks): the reason, or `None`.
pub fn env_hijack(name: &str, value: &str, dir: Option<&str>) -> Option<String> {
    use crate::analyze::DYN;
    let system = |p: &str| {
        [
            "/usr/",
            "/bin/",
            "/sbin/",
            "/lib",
            "/opt/",
            "/etc/",
            "/nix/store/",
        ]
        .iter()
        .any(|d| p.starts_with(d))
    };
    let eff = crate::knowledge::env_effect(name)?;
    let v = value.trim();
    match eff {
        crate::knowledge::EnvEffect::Program => {
            let prog = v.split_whitespace().next().unwrap_or("");
            let risky = v.contains(DYN)
                || (prog.contains('/') && !system(prog))
                || crate::analyze::is_shell(&crate::analyze::cmd_name(prog))
                || v.contains(['|', ';', '&', '`', '$']);
            risky.then(|| format!("{name}={value} runs that program"))
        }
        crate::knowledge::EnvEffect::Options(opts) => {
            let words: Vec<&str> = v
                .split(|c: char| c.is_whitespace() || c == '\x1f')
                .collect();
            let hit = words.iter().any(|w| {
                opts.iter().any(|o| {
                    let w = w.trim_matches(['"', '\'']);
                    if o.ends_with('=') || !o.starts_with('-') {
                        w.contains(o)
                    } else {
                        w == *o
                            || w.strip_prefix(o).is_some_and(|r| {
                                r.starts_with('=')
                                    || (o.len() == 2 && !o.starts_with("--") && !r.is_empty())
                            })
                    }
                })
            }) || (v.contains("-C") && opts.contains(&"linker") && v.contains("linker"));
            hit.then(|| format!("{name}={value}: options that run or load a program"))
        }
        crate::knowledge::EnvEffect::LoadPath => {
            let risky = v
                .split(':')
                .any(|d| !d.is_empty() && (d.contains(DYN) || !system(d)));
            risky.then(|| format!("{name}={value} loads libraries or modules from there"))
        }
        crate::knowledge::EnvEffect::ConfigHome => {
            let inside = |d: &str| {
                dir.is_some_and(|w| {
                    d == w || d.starts_with(&format!("{}/", w.trim_end_matches('/')))
                })
            };
            let risky = v.split(':').any(|d| {
                d.contains(DYN)
                    || inside(d)
                    || !(d.starts_with('/') || d.starts_with('~') || d.is_empty())
            });
            risky.then(|| {
                format!("{name}={value} makes it read configuration (that can run programs) from the workspace")
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        assert_eq!(norm_path("/./"), "/");
        assert_eq!(norm_path("//"), "/");
        assert_eq!(norm_path("/.."), "/");
        assert_eq!(norm_path("/..."), "/...");
        assert_eq!(norm_path("$HOME/"), "~");
        assert_eq!(norm_path("~/a/../b"), "~/b");
        assert_eq!(norm_path("./build"), "build");
        assert!(is_critical("/"));
        assert!(is_critical("//*"));
        assert!(is_critical("/home/*"));
        assert!(is_critical("~/"));
        assert!(!is_critical("/tmp"));
        assert!(!is_critical("/.config"));
        assert!(!is_critical("/home/user/scratch"));
        assert!(is_disk_device("/dev/sda"));
        assert!(is_disk_device("/dev/nvme0n1"));
        assert!(!is_disk_device("/dev/null"));
        assert!(is_user_sensitive(
            "C:\\Users\\tester\\.ssh\\authorized_keys"
        ));
        assert!(is_credential_file("~/.ssh/id_rsa"));
        assert!(!is_credential_file("~/.ssh/id_rsa.pub"));
        assert!(!is_credential_file("~/.ssh/config"));
        assert!(is_project_config(".env.production"));
        assert!(!is_project_config(".env#backup"));
    }

    #[test]
    fn sql() {
        assert!(sql_is_destructive("DROP TABLE users"));
        assert!(sql_is_destructive("DELETE FROM users;"));
        assert!(!sql_is_destructive("DELETE FROM users WHERE id = 1"));
        assert!(!sql_is_destructive("SELECT * FROM users"));
        assert!(sql_is_destructive("DELETE FROM users WHERE 1=1"));
        assert!(sql_is_destructive("update t set a=0 where 'a'='a'"));
        assert!(sql_is_destructive("DELETE FROM t WHERE id = 5 OR 1=1"));
        assert!(sql_is_destructive("DELETE FROM t WHERE true LIMIT 10"));
        assert!(!sql_is_destructive("DELETE FROM t WHERE id = 1 AND 1=1"));
        assert!(!sql_is_destructive("DELETE FROM t WHERE a < now()"));
        assert!(!sql_is_destructive(
            "SELECT * FROM l WHERE m LIKE '%DROP TABLE%'"
        ));
        assert!(!sql_is_destructive("SELECT 'it''s; DELETE FROM x'"));
    }
}
