//! Where a path the model names really points, and whether touching it
//! needs a human: `~` and relative paths resolved against the task's
//! working directory, symlinks and `..` resolved before any check, the
//! optional workspace root, and the original's read and write deny lists
//! (the floor: these paths go through the approval policy).

use std::path::{Component, Path, PathBuf};

/// Expand `~` and make `p` absolute against `cwd` (lexically normalised).
pub fn absolute(p: &str, cwd: &Path, home: &Path) -> PathBuf {
    let p = p.trim();
    let raw = if p == "~" {
        home.to_path_buf()
    } else if let Some(rest) = p.strip_prefix("~/") {
        home.join(rest)
    } else {
        let pb = PathBuf::from(p);
        if pb.is_absolute() { pb } else { cwd.join(pb) }
    };
    normalize(&raw)
}

/// Remove `.` and resolve `..` lexically.
pub fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The real location: symlinks resolved as far as the path exists.
pub fn real(p: &Path) -> PathBuf {
    hermes_exec::fs::resolve_existing_prefix(p)
}

/// Whether `p` (real) lies inside `root` (real).
pub fn inside(p: &Path, root: &Path) -> bool {
    p.starts_with(root)
}

const ENV_FILES: &[&str] = &[
    ".env",
    ".env.local",
    ".env.development",
    ".env.production",
    ".env.test",
    ".env.staging",
    ".envrc",
];

/// Why reading `p` (real) needs approval: credential files of the runtime's
/// data directory and project environment files (the original's read deny
/// list), plus the usual credential stores of the user.
pub fn read_sensitive(p: &Path, home: &Path, data_dir: &Path) -> Option<String> {
    let name = p.file_name()?.to_string_lossy();
    if ENV_FILES.contains(&name.as_ref()) {
        return Some(format!(
            "reads an environment file ({name}) that usually holds secrets"
        ));
    }
    if p.starts_with(data_dir) {
        let rel = p.strip_prefix(data_dir).ok()?;
        let first = rel.components().next()?.as_os_str().to_string_lossy();
        if ["auth.json", ".anthropic_oauth.json", "mcp-tokens"].contains(&first.as_ref())
            || rel.starts_with("skills/.hub")
        {
            return Some(format!(
                "reads the runtime's credential file {}",
                p.display()
            ));
        }
    }
    // (no allocation on the way: search_files asks this for every hit)
    if let Ok(rel) = p.strip_prefix(home) {
        let mut parts = rel.components();
        let first = parts.next().map(|c| c.as_os_str());
        let only = parts.next().is_none();
        for dir in [".ssh", ".aws", ".gnupg", ".kube", ".docker", ".azure"] {
            if first == Some(std::ffi::OsStr::new(dir))
                && !name.ends_with(".pub")
                && name != "known_hosts"
            {
                return Some(format!("reads a credential file under ~/{dir}"));
            }
        }
        for f in [".netrc", ".pgpass", ".git-credentials", ".npmrc", ".pypirc"] {
            if only && first == Some(std::ffi::OsStr::new(f)) {
                return Some(format!("reads the credential file ~/{f}"));
            }
        }
    }
    if p == Path::new("/etc/shadow") || p == Path::new("/etc/gshadow") {
        return Some("reads the system password database".into());
    }
    None
}

/// Why writing `p` (real) needs approval: the original's write deny list
/// (credentials, system configuration), shell profiles, and the runtime's
/// own config and allowlist (`protected`).
pub fn write_sensitive(
    p: &Path,
    home: &Path,
    data_dir: &Path,
    protected: &[PathBuf],
) -> Option<String> {
    for q in protected {
        if p == q || p.starts_with(q) && q.is_dir() {
            return Some(format!(
                "writes the runtime's own configuration or allowlist ({})",
                q.display()
            ));
        }
    }
    // Repository metadata and files a later host action runs (git hooks and
    // config, direnv, editor tasks): read-only inside the sandbox, asked
    // about here on every backend, at any depth (nested repositories too).
    if let Some(name) = p.components().find_map(|c| {
        let c = c.as_os_str().to_str()?;
        hermes_exec::sandbox::PROTECTED.iter().find(|n| **n == c)
    }) {
        return Some(format!(
            "writes {name}, which a later git, direnv or editor action on the host runs as code \
             (hooks, config, tasks)"
        ));
    }
    // A git directory under another name (`--separate-git-dir`, a bare
    // repository): judged by what it holds.
    if let Some(g) = p
        .ancestors()
        .skip(1)
        .find(|a| hermes_exec::sandbox::is_git_dir(a))
    {
        return Some(format!(
            "writes into the git directory {}, which a later git on the host runs as code (config, hooks)",
            g.display()
        ));
    }
    for dir in [
        ".local/bin",
        ".config/git",
        ".config/systemd",
        ".config/autostart",
        ".ssh",
        ".aws",
        ".gnupg",
        ".kube",
        ".docker",
        ".azure",
        ".config/gh",
        ".config/gcloud",
    ] {
        if p.starts_with(home.join(dir)) {
            return Some(format!("writes credentials or keys under ~/{dir}"));
        }
    }
    for f in [
        ".netrc",
        ".pgpass",
        ".npmrc",
        ".pypirc",
        ".git-credentials",
        ".bashrc",
        ".bash_profile",
        ".bash_login",
        ".profile",
        ".zshrc",
        ".zprofile",
        ".zshenv",
        ".zlogin",
        ".config/fish/config.fish",
        ".bash_aliases",
        ".bash_logout",
        ".inputrc",
        ".vimrc",
        ".gitconfig",
        ".xprofile",
        ".xinitrc",
    ] {
        if p == home.join(f) {
            return Some(format!(
                "writes ~/{f} (credentials or a shell profile that runs at every login)"
            ));
        }
    }
    for sys in [
        "/etc/sudoers",
        "/etc/sudoers.d",
        "/etc/systemd",
        "/etc/passwd",
        "/etc/shadow",
        "/etc/group",
        "/etc/crontab",
        "/etc/cron.d",
        "/etc/profile",
        "/etc/profile.d",
        "/etc/ld.so.preload",
        "/etc/hosts",
        "/boot",
    ] {
        if p.starts_with(sys) {
            return Some(format!("writes system configuration ({sys})"));
        }
    }
    if p.starts_with(data_dir) {
        let rel = p.strip_prefix(data_dir).ok()?;
        let first = rel.components().next()?.as_os_str().to_string_lossy();
        if [
            ".env",
            "state.db",
            "sessions",
            "mcp-tokens",
            "pairing",
            "auth.json",
            "config.yaml",
        ]
        .contains(&first.as_ref())
        {
            return Some(format!("writes the runtime's own data ({})", p.display()));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve() {
        let home = Path::new("/home/u");
        let cwd = Path::new("/w/p");
        assert_eq!(absolute("a/../b", cwd, home), PathBuf::from("/w/p/b"));
        assert_eq!(absolute("~/x", cwd, home), PathBuf::from("/home/u/x"));
        assert_eq!(
            absolute("/etc/./hosts", cwd, home),
            PathBuf::from("/etc/hosts")
        );
    }

    /// Red team 2026-11-28 (round 2): a git directory of another name
    /// (`git init --separate-git-dir`) was written without asking.
    #[test]
    fn a_git_directory_under_any_name_asks() {
        let d = tempfile::tempdir().unwrap();
        let g = d.path().join("vendor-gitdata");
        for sub in ["objects", "refs", "hooks"] {
            std::fs::create_dir_all(g.join(sub)).unwrap();
        }
        std::fs::write(g.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        let (home, data) = (Path::new("/home/u"), Path::new("/home/u/.hermes"));
        for p in ["config", "hooks/pre-commit"] {
            let why = write_sensitive(&g.join(p), home, data, &[]).expect(p);
            assert!(why.contains("git directory"), "{why}");
        }
        assert!(write_sensitive(&d.path().join("src.rs"), home, data, &[]).is_none());
    }

    #[test]
    fn deny_lists() {
        let home = Path::new("/home/u");
        let data = Path::new("/home/u/.hermes");
        assert!(read_sensitive(Path::new("/w/.env"), home, data).is_some());
        assert!(read_sensitive(Path::new("/home/u/.ssh/id_rsa"), home, data).is_some());
        assert!(read_sensitive(Path::new("/home/u/.ssh/id_rsa.pub"), home, data).is_none());
        assert!(read_sensitive(Path::new("/home/u/.hermes/auth.json"), home, data).is_some());
        assert!(read_sensitive(Path::new("/w/main.rs"), home, data).is_none());
        assert!(write_sensitive(Path::new("/home/u/.bashrc"), home, data, &[]).is_some());
        assert!(write_sensitive(Path::new("/etc/sudoers.d/x"), home, data, &[]).is_some());
        assert!(write_sensitive(Path::new("/w/x"), home, data, &[]).is_none());
        for planted in [
            "/w/.git/config",
            "/w/.git/hooks/pre-commit",
            "/w/sub/.git/config",
            "/w/.envrc",
            "/w/.vscode/tasks.json",
            "/home/u/.bash_aliases",
            "/home/u/.local/bin/ls",
            "/home/u/.gitconfig",
        ] {
            assert!(
                write_sensitive(Path::new(planted), home, data, &[]).is_some(),
                "{planted}"
            );
        }
        assert!(write_sensitive(Path::new("/w/.gitignore"), home, data, &[]).is_none());
    }
}
