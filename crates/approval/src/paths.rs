//! Which paths are the system's, the user's sensitive files, or places whose
//! change persists (shell rc files, cron, services): plain string tests on a
//! normalised path, no analysis. A module below both the analyser and the
//! rule table, which both ask it (so neither imports the other for it);
//! [`crate::rules`] re-exports the functions under their old paths.

use crate::words::norm_path;

pub(crate) fn lc(s: &str) -> String {
    if s.is_ascii() {
        s.to_ascii_lowercase()
    } else {
        s.to_lowercase()
    }
}

const SYSTEM_PREFIXES: &[&str] = &[
    "/etc",
    "/private/etc",
    "/boot",
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/system",
    "/library",
    "/var/spool/cron",
    "/var/lib/dpkg",
    "/var/lib/rpm",
    "/root",
    "/sys",
    "/proc",
    "/dev",
    "/opt/homebrew/etc",
    "c:/windows",
    "/private/var/root",
];

const DEV_HARMLESS: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/stdin",
    "/dev/tty",
    "/dev/random",
    "/dev/urandom",
    "/dev/full",
];

pub fn is_system_path(p: &str) -> bool {
    let n = lc(&norm_path(p));
    if DEV_HARMLESS.contains(&n.as_str())
        || n.starts_with("/dev/fd/")
        || n.starts_with("/dev/shm/")
        || n.starts_with("/dev/pts/")
        || n.starts_with("/dev/tcp/")
        || n.starts_with("/dev/udp/")
        || n.starts_with("/proc/self/fd/")
    {
        return false;
    }
    SYSTEM_PREFIXES
        .iter()
        .any(|pre| n == *pre || (n.starts_with(pre) && n.as_bytes().get(pre.len()) == Some(&b'/')))
}

const RC_FILES: &[&str] = &[
    ".bash_aliases",
    ".vimrc",
    ".gvimrc",
    ".exrc",
    ".tmux.conf",
    ".screenrc",
    ".wgetrc",
    ".curlrc",
    ".gdbinit",
    ".lesskey",
    ".nanorc",
    ".condarc",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zprofile",
    ".zshenv",
    ".zlogin",
    ".zlogout",
    ".kshrc",
    ".cshrc",
    ".tcshrc",
    ".login",
    ".netrc",
    ".pgpass",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".gitconfig",
    ".xinitrc",
    ".xprofile",
    ".xsession",
    ".inputrc",
    ".envrc",
    ".pam_environment",
    "authorized_keys",
    "authorized_keys2",
    ".vault-token",
    ".my.cnf",
    ".curlrc",
    ".wgetrc",
    "pip.conf",
    "pip.ini",
    ".condarc",
    ".gemrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".bunfig.toml",
];

const SENSITIVE_DIRS: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".kube",
    ".docker",
    ".azure",
    ".hermes",
    "launchagents",
    "launchdaemons",
    "autostart",
    ".password-store",
    "gcloud",
];

/// Shell startup files, SSH/GPG/cloud credentials, persistence locations and
/// the agent's own config.
pub fn is_user_sensitive(p: &str) -> bool {
    let n = lc(&norm_path(p));
    let comps: Vec<&str> = n.split('/').collect();
    let base = comps.last().copied().unwrap_or("");
    if RC_FILES.contains(&base) {
        return true;
    }
    if comps.iter().any(|c| SENSITIVE_DIRS.contains(c)) {
        return true;
    }
    if n.contains("/.cargo/config") || n.contains("/.m2/settings.xml") {
        return true;
    }
    if n.contains("/.local/bin/")
        || n.contains("/.vim/")
        || n.contains("/.local/share/applications/")
        || n.contains("/.local/share/systemd/")
        || n.contains("/.local/share/dbus-1/")
        || n.contains("/.emacs.d/")
        || n.contains("/.oh-my-zsh/")
        || n.contains("/.ipython/profile_")
        || n.contains("/.config/direnv/")
        || n.starts_with("~/bin/")
        || n.contains("/.config/nvim/")
        || n.contains("/.config/git/")
        || n.contains("/.config/environment.d/")
        || n.contains("/.config/autostart")
        || n.contains("/.config/systemd/user")
        || n.contains("/.config/fish/config.fish")
        || n.contains(".git/hooks/")
        || n.starts_with("git/hooks/")
    {
        return true;
    }
    false
}

/// Paths whose writing takes effect later, beyond the command: the user's
/// start-up files, keys and personal bin directories
/// ([`is_user_sensitive`]), an `rc` file of any program in the home
/// directory (`~/.rtorrent.rc`, `~/.config/procps/toprc`), and the
/// system's accounts, sudoers, cron, loader, profile and service files.
/// A directory that is, or holds, persistence paths: the home directory
/// (`~`, `/root`, `/home/NAME`), `~/.config`, `~/.local`, `~/.local/bin`,
/// `~/bin`, or any directory inside a persistence path. Files written
/// under it (an archive extracted, a tree copied, a repository cloned)
/// may be start-up files.
pub fn holds_persistence(d: &str) -> bool {
    let n = lc(&norm_path(d));
    let n = n.trim_end_matches('/');
    let n = n.strip_suffix("/.").unwrap_or(n);
    if n.is_empty() || n == "~" || n == "/root" || n == "/" {
        return true;
    }
    if let Some(r) = n.strip_prefix("/home/")
        && !r.contains('/')
    {
        return true;
    }
    if matches!(
        n,
        "~/.config" | "~/.local" | "~/.local/share" | "~/.local/bin" | "~/bin" | "/etc"
    ) {
        return true;
    }
    is_persistence_path(&format!("{n}/x")) || is_persistence_path(n)
}

pub fn is_persistence_path(p: &str) -> bool {
    if is_user_sensitive(p) {
        return true;
    }
    let n = lc(&norm_path(p));
    let base = n.rsplit('/').next().unwrap_or("");
    let home = n.starts_with("~/") || n.starts_with("/home/") || n.starts_with("/root/");
    if home && base.ends_with("rc") && (base.starts_with('.') || n.contains("/.config/")) {
        return true;
    }
    const SYSTEM: &[&str] = &[
        "/etc/passwd",
        "/etc/shadow",
        "/etc/group",
        "/etc/gshadow",
        "/etc/sudoers",
        "/etc/sudoers.d",
        "/etc/crontab",
        "/etc/cron.d",
        "/etc/cron.hourly",
        "/etc/cron.daily",
        "/etc/cron.weekly",
        "/etc/cron.monthly",
        "/var/spool/cron",
        "/etc/ld.so.preload",
        "/etc/ld.so.conf",
        "/etc/ld.so.conf.d",
        "/etc/profile",
        "/etc/profile.d",
        "/etc/bash.bashrc",
        "/etc/zsh",
        "/etc/environment",
        "/etc/systemd",
        "/etc/init.d",
        "/etc/rc.local",
        "/etc/pam.d",
        "/etc/security",
        "/etc/ssh",
        "/etc/update-motd.d",
        "/etc/apt/apt.conf.d",
        "/root",
        "/lib/systemd/system",
        "/usr/lib/systemd/system",
    ];
    SYSTEM
        .iter()
        .any(|s| n == *s || (n.starts_with(s) && n.as_bytes().get(s.len()) == Some(&b'/')))
}
