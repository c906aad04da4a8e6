//! Option syntax: GNU long-option abbreviations, seen through before any rule
//! or wrapper looks at an argv.
//!
//! Why: getopt_long (coreutils, util-linux, sudo, su, env, timeout, nice, ...)
//! and git's parse-options accept *any unique prefix* of a long option, so
//! `rm --rec --for /`, `git push --for`, `sudo --us root ...` and
//! `timeout --sig KILL ...` mean the same as their full spellings. Rules and
//! wrapper unwrapping compare full option names, so every program the
//! analyser records has its long options rewritten to their canonical
//! spelling first ([`canonicalize`]). The tables list, per program (and per
//! git subcommand), the long options and whether they take a separate value;
//! a non-permuting program (a wrapper) stops at its first operand, because
//! what follows belongs to the wrapped command.
//!
//! An ambiguous prefix resolves to the first candidate in table order (the
//! tables list the risky option first): the real tool rejects the ambiguity,
//! so over-reading it costs at most a question, while under-reading it could
//! hide a `--force`.

/// Long options of one program. `name=` takes a value (separate word or
/// `=`); other entries are flags (or take an optional `=value`).
struct Spec {
    longs: &'static [&'static str],
    /// Short options that take a value (attached or the next word).
    short_vals: &'static str,
    /// GNU permutation: options may follow operands.
    permute: bool,
}

const RM: Spec = Spec {
    longs: &[
        "recursive",
        "force",
        "no-preserve-root",
        "preserve-root",
        "one-file-system",
        "interactive",
        "dir",
        "verbose",
        "help",
        "version",
    ],
    short_vals: "",
    permute: true,
};

const CHMOD: Spec = Spec {
    longs: &[
        "recursive",
        "reference=",
        "no-preserve-root",
        "preserve-root",
        "changes",
        "silent",
        "quiet",
        "verbose",
        "help",
        "version",
    ],
    short_vals: "",
    permute: true,
};

const CHOWN: Spec = Spec {
    longs: &[
        "recursive",
        "reference=",
        "from=",
        "no-preserve-root",
        "preserve-root",
        "dereference",
        "no-dereference",
        "changes",
        "silent",
        "quiet",
        "verbose",
        "help",
        "version",
    ],
    short_vals: "",
    permute: true,
};

const MV: Spec = Spec {
    longs: &[
        "force",
        "target-directory=",
        "no-target-directory",
        "suffix=",
        "backup",
        "interactive",
        "no-clobber",
        "update",
        "verbose",
        "strip-trailing-slashes",
        "exchange",
        "help",
        "version",
    ],
    short_vals: "tS",
    permute: true,
};

const RSYNC: Spec = Spec {
    longs: &[
        "delete",
        "delete-before",
        "delete-during",
        "delete-delay",
        "delete-after",
        "delete-excluded",
        "delete-missing-args",
        "del",
        "dry-run",
        "remove-source-files",
        "rsh=",
        "exclude=",
        "include=",
        "filter=",
        "recursive",
        "archive",
        "verbose",
        "compress",
        "checksum",
        "progress",
        "partial",
        "force",
        "ignore-errors",
        "max-delete=",
        "backup",
        "backup-dir=",
    ],
    short_vals: "efT",
    permute: true,
};

const SHRED: Spec = Spec {
    longs: &[
        "remove",
        "iterations=",
        "size=",
        "zero",
        "force",
        "exact",
        "verbose",
        "random-source=",
    ],
    short_vals: "ns",
    permute: true,
};

const SUDO: Spec = Spec {
    longs: &[
        "user=",
        "group=",
        "host=",
        "prompt=",
        "role=",
        "type=",
        "close-from=",
        "chdir=",
        "other-user=",
        "command-timeout=",
        "chroot=",
        "preserve-env",
        "preserve-groups",
        "login",
        "shell",
        "stdin",
        "non-interactive",
        "background",
        "edit",
        "list",
        "validate",
        "reset-timestamp",
        "remove-timestamp",
        "set-home",
        "askpass",
        "bell",
        "help",
        "version",
    ],
    short_vals: "ughprtCDURT",
    permute: false,
};

const SU: Spec = Spec {
    longs: &[
        "command=",
        "session-command=",
        "login",
        "preserve-environment",
        "shell=",
        "group=",
        "supp-group=",
        "whitelist-environment=",
        "user=",
        "pty",
        "fast",
        "help",
        "version",
    ],
    short_vals: "csgGwu",
    permute: false,
};

const ENV: Spec = Spec {
    longs: &[
        "split-string=",
        "ignore-environment",
        "unset=",
        "chdir=",
        "null",
        "argv0=",
        "block-signal",
        "default-signal",
        "ignore-signal",
        "list-signal-handling",
        "debug",
        "help",
        "version",
    ],
    short_vals: "uCSa",
    permute: false,
};

const TIMEOUT: Spec = Spec {
    longs: &[
        "signal=",
        "kill-after=",
        "preserve-status",
        "foreground",
        "verbose",
        "help",
        "version",
    ],
    short_vals: "sk",
    permute: false,
};

const NICE: Spec = Spec {
    longs: &["adjustment=", "help", "version"],
    short_vals: "n",
    permute: false,
};

const IONICE: Spec = Spec {
    longs: &[
        "class=",
        "classdata=",
        "pid=",
        "pgid=",
        "uid=",
        "ignore",
        "help",
        "version",
    ],
    short_vals: "cnpPu",
    permute: false,
};

const STDBUF: Spec = Spec {
    longs: &["input=", "output=", "error=", "help", "version"],
    short_vals: "ioe",
    permute: false,
};

const XARGS: Spec = Spec {
    longs: &[
        "arg-file=",
        "delimiter=",
        "max-args=",
        "max-procs=",
        "max-chars=",
        "process-slot-var=",
        "null",
        "no-run-if-empty",
        "interactive",
        "show-limits",
        "exit",
        "verbose",
        "open-tty",
        "help",
        "version",
    ],
    short_vals: "adEILnPs",
    permute: false,
};

const SETSID: Spec = Spec {
    longs: &["ctty", "fork", "wait", "help", "version"],
    short_vals: "",
    permute: false,
};

const CHROOT: Spec = Spec {
    longs: &["userspec=", "groups=", "skip-chdir", "help", "version"],
    short_vals: "",
    permute: false,
};

const FLOCK: Spec = Spec {
    longs: &[
        "shared",
        "exclusive",
        "unlock",
        "nonblock",
        "timeout=",
        "conflict-exit-code=",
        "close",
        "command=",
        "no-fork",
        "verbose",
        "help",
        "version",
    ],
    short_vals: "wEc",
    permute: false,
};

const NOHUP: Spec = Spec {
    longs: &["help", "version"],
    short_vals: "",
    permute: false,
};

const RUNUSER: Spec = Spec {
    longs: &[
        "command=",
        "session-command=",
        "login",
        "preserve-environment",
        "shell=",
        "group=",
        "supp-group=",
        "user=",
        "whitelist-environment=",
        "pty",
        "help",
        "version",
    ],
    short_vals: "csgGuw",
    permute: false,
};

const SWAPOFF: Spec = Spec {
    longs: &["all", "verbose", "help", "version"],
    short_vals: "",
    permute: true,
};

const USERADD: Spec = Spec {
    longs: &[
        "uid=",
        "non-unique",
        "gid=",
        "groups=",
        "home-dir=",
        "shell=",
        "comment=",
        "create-home",
        "system",
        "password=",
        "base-dir=",
        "expiredate=",
        "inactive=",
        "skel=",
        "key=",
        "no-create-home",
        "user-group",
        "no-user-group",
        "root=",
        "prefix=",
        "selinux-user=",
        "btrfs-subvolume-home",
        "no-log-init",
        "help",
    ],
    short_vals: "ugGdscpbefkKRPZ",
    permute: true,
};

const USERMOD: Spec = Spec {
    longs: &[
        "uid=",
        "non-unique",
        "gid=",
        "groups=",
        "append",
        "home=",
        "move-home",
        "shell=",
        "comment=",
        "login=",
        "lock",
        "unlock",
        "password=",
        "expiredate=",
        "inactive=",
        "root=",
        "prefix=",
        "help",
    ],
    short_vals: "ugGdsclpefRP",
    permute: true,
};

const WIPEFS: Spec = Spec {
    longs: &[
        "all",
        "no-act",
        "offset=",
        "force",
        "backup",
        "types=",
        "quiet",
        "noheadings",
        "json",
        "parsable",
        "output=",
        "lock",
        "help",
        "version",
    ],
    short_vals: "otO",
    permute: true,
};

// ---- git: global options, then per subcommand

const GIT: Spec = Spec {
    longs: &[
        "git-dir=",
        "work-tree=",
        "namespace=",
        "exec-path",
        "config-env=",
        "super-prefix=",
        "bare",
        "no-pager",
        "paginate",
        "no-replace-objects",
        "literal-pathspecs",
        "glob-pathspecs",
        "noglob-pathspecs",
        "icase-pathspecs",
        "no-optional-locks",
        "help",
        "version",
    ],
    short_vals: "Cc",
    permute: false,
};

const GIT_PUSH: Spec = Spec {
    longs: &[
        "force",
        "force-with-lease",
        "force-if-includes",
        "delete",
        "mirror",
        "prune",
        "all",
        "branches",
        "tags",
        "follow-tags",
        "dry-run",
        "set-upstream",
        "repo=",
        "porcelain",
        "progress",
        "quiet",
        "verbose",
        "atomic",
        "no-verify",
        "verify",
        "signed",
        "push-option=",
        "receive-pack=",
        "exec=",
        "thin",
        "recurse-submodules=",
        "ipv4",
        "ipv6",
    ],
    short_vals: "o",
    permute: true,
};

const GIT_RESET: Spec = Spec {
    longs: &[
        "hard",
        "merge",
        "keep",
        "soft",
        "mixed",
        "quiet",
        "patch",
        "pathspec-from-file=",
        "pathspec-file-nul",
        "recurse-submodules",
        "no-refresh",
        "refresh",
        "intent-to-add",
    ],
    short_vals: "",
    permute: true,
};

const GIT_CLEAN: Spec = Spec {
    longs: &["force", "dry-run", "quiet", "exclude=", "interactive"],
    short_vals: "e",
    permute: true,
};

const GIT_CHECKOUT: Spec = Spec {
    longs: &[
        "force",
        "ours",
        "theirs",
        "merge",
        "pathspec-from-file=",
        "pathspec-file-nul",
        "overwrite-ignore",
        "ignore-other-worktrees",
        "quiet",
        "track",
        "no-track",
        "detach",
        "orphan=",
        "conflict=",
        "patch",
        "recurse-submodules",
        "progress",
        "guess",
        "overlay",
        "no-overlay",
    ],
    short_vals: "bB",
    permute: true,
};

const GIT_RESTORE: Spec = Spec {
    longs: &[
        "source=",
        "staged",
        "worktree",
        "ours",
        "theirs",
        "merge",
        "conflict=",
        "patch",
        "pathspec-from-file=",
        "pathspec-file-nul",
        "ignore-unmerged",
        "overlay",
        "no-overlay",
        "quiet",
        "progress",
        "recurse-submodules",
    ],
    short_vals: "s",
    permute: true,
};

const GIT_SWITCH: Spec = Spec {
    longs: &[
        "discard-changes",
        "force",
        "force-create=",
        "create=",
        "detach",
        "guess",
        "merge",
        "conflict=",
        "quiet",
        "progress",
        "track",
        "no-track",
        "orphan=",
        "ignore-other-worktrees",
        "recurse-submodules",
    ],
    short_vals: "cC",
    permute: true,
};

const GIT_BRANCH: Spec = Spec {
    longs: &[
        "delete",
        "force",
        "move",
        "copy",
        "list",
        "all",
        "remotes",
        "verbose",
        "quiet",
        "track",
        "no-track",
        "set-upstream-to=",
        "unset-upstream",
        "show-current",
        "edit-description",
        "contains",
        "merged",
        "no-merged",
        "sort=",
        "format=",
        "color",
        "column",
    ],
    short_vals: "u",
    permute: true,
};

const GIT_RM: Spec = Spec {
    longs: &[
        "force",
        "cached",
        "dry-run",
        "quiet",
        "ignore-unmatch",
        "pathspec-from-file=",
        "pathspec-file-nul",
        "sparse",
    ],
    short_vals: "",
    permute: true,
};

const GIT_WORKTREE: Spec = Spec {
    longs: &[
        "force",
        "detach",
        "checkout",
        "lock",
        "reason=",
        "orphan",
        "track",
        "guess-remote",
        "quiet",
        "porcelain",
        "verbose",
        "expire=",
        "dry-run",
    ],
    short_vals: "bB",
    permute: true,
};

const GIT_GC: Spec = Spec {
    longs: &[
        "prune",
        "no-prune",
        "aggressive",
        "auto",
        "quiet",
        "force",
        "keep-largest-pack",
    ],
    short_vals: "",
    permute: true,
};

fn spec_for(name: &str) -> Option<&'static Spec> {
    Some(match name {
        "rm" | "grm" => &RM,
        "chmod" => &CHMOD,
        "chown" | "chgrp" => &CHOWN,
        "mv" => &MV,
        "rsync" => &RSYNC,
        "shred" => &SHRED,
        "sudo" => &SUDO,
        "su" => &SU,
        "runuser" => &RUNUSER,
        "env" => &ENV,
        "timeout" => &TIMEOUT,
        "nice" => &NICE,
        "ionice" => &IONICE,
        "stdbuf" => &STDBUF,
        "xargs" => &XARGS,
        "setsid" => &SETSID,
        "chroot" => &CHROOT,
        "flock" => &FLOCK,
        "nohup" => &NOHUP,
        "swapoff" => &SWAPOFF,
        "useradd" | "adduser" => &USERADD,
        "usermod" => &USERMOD,
        "wipefs" => &WIPEFS,
        _ => return None,
    })
}

fn git_spec(sub: &str) -> Option<&'static Spec> {
    Some(match sub {
        "push" => &GIT_PUSH,
        "reset" => &GIT_RESET,
        "clean" => &GIT_CLEAN,
        "checkout" => &GIT_CHECKOUT,
        "restore" => &GIT_RESTORE,
        "switch" => &GIT_SWITCH,
        "branch" => &GIT_BRANCH,
        "rm" => &GIT_RM,
        "worktree" => &GIT_WORKTREE,
        "gc" => &GIT_GC,
        _ => return None,
    })
}

/// Resolve `--abbrev[=v]` against a table: the full option (without `=`)
/// and whether it takes a value.
fn resolve(spec: &Spec, word: &str) -> Option<(&'static str, bool)> {
    let body = word.strip_prefix("--")?;
    let key = body.split('=').next().unwrap_or(body);
    if key.is_empty() {
        return None;
    }
    let strip = |e: &'static str| e.strip_suffix('=').unwrap_or(e);
    if let Some(e) = spec.longs.iter().find(|e| strip(e) == key) {
        return Some((strip(e), e.ends_with('=')));
    }
    spec.longs
        .iter()
        .find(|e| strip(e).starts_with(key))
        .map(|e| (strip(e), e.ends_with('=')))
}

/// Rewrite options of `argv[from..]` in place; returns the index where the
/// scan stopped (first operand of a non-permuting program, or the end).
fn rewrite(spec: &Spec, argv: &mut [String], from: usize) -> usize {
    let mut i = from;
    while i < argv.len() {
        let a = argv[i].as_str();
        if a == "--" {
            return argv.len();
        }
        if a.starts_with("--") {
            if let Some((full, takes)) = resolve(spec, a) {
                let has_eq = a.contains('=');
                let new = match a.split_once('=') {
                    Some((_, v)) => format!("--{full}={v}"),
                    None => format!("--{full}"),
                };
                argv[i] = new;
                if takes && !has_eq {
                    i += 1;
                }
            }
            i += 1;
            continue;
        }
        if a.starts_with('-') && a.len() > 1 {
            // a short bundle: a value-taking letter ends it (the rest, or
            // the next word, is its value)
            let letters: Vec<char> = a[1..].chars().collect();
            if let Some(p) = letters.iter().position(|c| spec.short_vals.contains(*c))
                && p == letters.len() - 1
            {
                i += 1;
            }
            i += 1;
            continue;
        }
        if !spec.permute {
            return i;
        }
        i += 1;
    }
    i
}

/// Rewrite GNU long-option abbreviations of a program's argv to their full
/// spelling (`rm --rec` → `rm --recursive`, `git push --for` →
/// `git push --force`). `name` is the normalised program name.
pub fn canonicalize(name: &str, argv: &mut [String]) {
    if argv.len() < 2 || !argv[1..].iter().any(|a| a.starts_with("--")) {
        return;
    }
    if name == "git" {
        let stop = rewrite(&GIT, argv, 1);
        // skip the values of -C / -c before the subcommand
        let mut i = 1;
        while i < argv.len() && i < stop {
            let a = argv[i].as_str();
            if a == "-C" || a == "-c" {
                i += 2;
            } else if a.starts_with('-') {
                i += if matches!(
                    a,
                    "--git-dir" | "--work-tree" | "--namespace" | "--config-env" | "--super-prefix"
                ) {
                    2
                } else {
                    1
                };
            } else {
                break;
            }
        }
        if let Some(sub) = argv.get(i).cloned()
            && let Some(s) = git_spec(&sub)
        {
            rewrite(s, argv, i + 1);
        }
        return;
    }
    if let Some(s) = spec_for(name) {
        rewrite(s, argv, 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(v: &[&str]) -> Vec<String> {
        let mut a: Vec<String> = v.iter().map(|s| s.to_string()).collect();
        let name = a[0].clone();
        canonicalize(&name, &mut a);
        a
    }

    #[test]
    fn abbreviations() {
        assert_eq!(
            canon(&["rm", "--rec", "--for", "/"]),
            ["rm", "--recursive", "--force", "/"]
        );
        assert_eq!(canon(&["rm", "--no-pres", "/"])[1], "--no-preserve-root");
        assert_eq!(
            canon(&["sudo", "--us", "root", "--pres", "rm", "--rec"]),
            ["sudo", "--user", "root", "--preserve-env", "rm", "--rec"]
        );
        assert_eq!(
            canon(&["timeout", "--kill=3", "10", "x"])[1],
            "--kill-after=3"
        );
        assert_eq!(
            canon(&["git", "-C", "x", "push", "--for", "--mir"]),
            ["git", "-C", "x", "push", "--force", "--mirror"]
        );
        // exact names win over longer candidates
        assert_eq!(canon(&["git", "push", "--force"])[2], "--force");
        // unknown options stay as written
        assert_eq!(canon(&["rm", "--zzz", "x"])[1], "--zzz");
        assert_eq!(canon(&["ls", "--rec"])[1], "--rec");
    }
}
