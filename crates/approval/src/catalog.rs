//! Rules drawn from the public threat catalogs (issue 17): MITRE ATT&CK
//! techniques that a shell command can carry out, GTFOBins functions on
//! Unix binaries and LOLBAS functions on Windows binaries.
//!
//! Each matcher returns a one-line explanation that names what the command
//! does *and* the account, scope or object it affects (`grants roles/owner
//! to user:x on project p`), built from the program's argv. Payloads that
//! GTFOBins binaries carry (`sed 'e cmd'`, `gdb -ex '!cmd'`, `tar
//! --checkpoint-action=exec=cmd`, ...) are unwrapped by the analysis
//! ([`crate::analyze`]) and judged like any shell payload; the rules here
//! cover what is left: the function itself (an interactive shell handed
//! over, a setuid shell, a capability grant, a LOLBAS download) and the
//! identity and control planes.
//!
//! The technique each rule covers is recorded in `coverage/attack.json`
//! beside the crate's sources; `tests/coverage.rs` generates
//! `docs/approval-coverage.md` from that and this table, and fails when a
//! rule or technique is unaccounted for.

use crate::analyze::{Exec, is_interpreter, is_shell};
use crate::ctx::{RuleCtx, WriteKind, operands};
use crate::rules::{DescribeMatcher, dry_run, is_critical};
use crate::types::Verdict;
use crate::words::norm_path;

/// `(key, tier, generic description, matcher)`.
pub type CatalogRow = (&'static str, Verdict, &'static str, DescribeMatcher);

/// The catalog rules, appended to the built-in table.
pub fn catalog_rows() -> Vec<CatalogRow> {
    use Verdict::{Ask, Block};
    vec![
        (
            "kernel-module-load",
            Block,
            "load or unload a kernel module or extension",
            c_kernel_module,
        ),
        (
            "firmware-write",
            Block,
            "write or erase firmware (BIOS/UEFI flash, device firmware)",
            c_firmware,
        ),
        (
            "volume-destroy",
            Block,
            "destroy a logical volume, pool, RAID member or encrypted volume, or secure-erase a disk",
            c_volume,
        ),
        (
            "setuid-shell",
            Block,
            "make a shell or interpreter setuid or give it privileged capabilities",
            c_setuid_shell,
        ),
        (
            "fork-bomb-code",
            Block,
            "fork processes in an endless loop (fork bomb in an interpreter)",
            c_fork_bomb,
        ),
        (
            "system-log-wipe",
            Block,
            "wipe the system's logs",
            c_log_wipe,
        ),
        (
            "secure-delete-critical",
            Block,
            "securely erase the root filesystem, a system directory or a home directory",
            c_secure_delete,
        ),
        (
            "delete-critical-other-tool",
            Block,
            "recursively delete the root filesystem, a system directory or a home directory through interpreter code, an archiver or a sync tool",
            c_delete_other,
        ),
        (
            "interactive-shell",
            Ask,
            "hand an interactive shell to whatever launched it (GTFOBins shell function)",
            c_interactive_shell,
        ),
        (
            "capability-grant",
            Ask,
            "grant file capabilities or the setuid bit to a program",
            c_capability,
        ),
        (
            "cloud-iam-change",
            Ask,
            "change who can do what in a cloud account (IAM bindings, users, keys, roles)",
            c_cloud_iam,
        ),
        (
            "kubernetes-rbac",
            Ask,
            "change Kubernetes RBAC, mint a token or read secrets",
            c_kube_rbac,
        ),
        (
            "repo-permissions",
            Ask,
            "change a repository's permissions, visibility, protections, deploy keys or CI secrets",
            c_repo_perms,
        ),
        (
            "secret-store-change",
            Ask,
            "change, delete or hand out secrets in a secret store or key manager",
            c_secret_store,
        ),
        (
            "audit-trail-off",
            Ask,
            "turn off or delete the record of what happened (cloud audit trails, logging sinks)",
            c_audit_off,
        ),
        (
            "token-print",
            Ask,
            "print an access token or secret key of the signed-in account",
            c_token_print,
        ),
        (
            "service-persistence",
            Ask,
            "install or enable a service, scheduled task or startup item that runs later",
            c_persistence,
        ),
        (
            "lolbas-proxy",
            Ask,
            "a Windows system binary used to download, decode or run code (LOLBAS)",
            c_lolbas,
        ),
        (
            "windows-credential-dump",
            Ask,
            "dump credentials: LSASS memory, SAM/SYSTEM hives or the AD database",
            c_win_cred,
        ),
        (
            "account-change",
            Ask,
            "create, delete or lock an account, or add one to a privileged group",
            c_account,
        ),
    ]
}

fn args(e: &Exec) -> &[String] {
    e.argv.get(1..).unwrap_or(&[])
}

fn has(e: &Exec, w: &str) -> bool {
    args(e).iter().any(|a| a == w)
}

fn has_any(e: &Exec, ws: &[&str]) -> bool {
    args(e).iter().any(|a| ws.contains(&a.as_str()))
}

fn has_prefix(e: &Exec, p: &str) -> bool {
    args(e).iter().any(|a| a.starts_with(p))
}

/// Value of `--flag V`, `--flag=V` or `-f V`.
fn opt<'a>(e: &'a Exec, names: &[&str]) -> Option<&'a str> {
    let a = args(e);
    for (k, w) in a.iter().enumerate() {
        for n in names {
            if w == n {
                return a.get(k + 1).map(String::as_str);
            }
            if let Some(v) = w.strip_prefix(n).and_then(|r| r.strip_prefix('=')) {
                return Some(v);
            }
        }
    }
    None
}

/// Non-option words, lowercased (`--` ends options; values of `vals`
/// skipped).
fn words(e: &Exec, vals: &[&str]) -> Vec<String> {
    operands(&e.argv, vals)
        .into_iter()
        .map(str::to_ascii_lowercase)
        .collect()
}

fn first_words(e: &Exec, n: usize) -> Vec<String> {
    words(e, &[]).into_iter().take(n).collect()
}

fn show(s: &str) -> String {
    s.chars().take(80).collect()
}

// ---------------------------------------------------------------- block

fn c_kernel_module(_: &RuleCtx, _: usize, e: &Exec) -> Option<String> {
    if !matches!(
        e.name.as_str(),
        "insmod"
            | "rmmod"
            | "modprobe"
            | "kexec"
            | "kmod"
            | "kldload"
            | "kldunload"
            | "kextload"
            | "kextunload"
            | "kmutil"
    ) {
        return None;
    }
    let n = e.name.as_str();
    let target = |skip: usize| {
        words(
            e,
            &["-C", "--config", "-d", "--dirname", "-S", "--set-version"],
        )
        .into_iter()
        .nth(skip)
        .unwrap_or_default()
    };
    match n {
        "insmod" => Some(format!("loads kernel module {}", show(&target(0)))),
        "rmmod" => Some(format!("unloads kernel module {}", show(&target(0)))),
        "modprobe" => {
            if dry_run(e)
                || has_any(
                    e,
                    &[
                        "-n",
                        "-c",
                        "--showconfig",
                        "--show-depends",
                        "-D",
                        "-R",
                        "--resolve-alias",
                        "--show-modversions",
                        "--dump-modversions",
                    ],
                )
            {
                return None;
            }
            let m = target(0);
            if m.is_empty() {
                return None;
            }
            if has_any(e, &["-r", "--remove"]) {
                Some(format!("unloads kernel module {}", show(&m)))
            } else {
                Some(format!("loads kernel module {}", show(&m)))
            }
        }
        "kexec" => (has_any(
            e,
            &[
                "-l",
                "--load",
                "-s",
                "--kexec-file-syscall",
                "-e",
                "--exec",
                "-p",
                "--load-panic",
            ],
        ))
        .then(|| "loads or boots into another kernel (kexec)".into()),
        "kmod" => match first_words(e, 2).as_slice() {
            [s, m] if s == "insmod" || s == "rmmod" => {
                Some(format!("{s}: kernel module {}", show(m)))
            }
            _ => None,
        },
        "kldload" | "kldunload" => Some(format!("BSD kernel module {}", show(&target(0)))),
        "kextload" | "kextunload" => Some(format!("macOS kernel extension {}", show(&target(0)))),
        "kmutil" => match first_words(e, 1).first().map(String::as_str) {
            Some("load" | "unload") => Some("macOS kernel extension load/unload".into()),
            _ => None,
        },
        _ => None,
    }
}

fn c_firmware(_: &RuleCtx, _: usize, e: &Exec) -> Option<String> {
    if !matches!(
        e.name.as_str(),
        "flashrom"
            | "fwupdmgr"
            | "fwupdtool"
            | "flash_erase"
            | "flash_eraseall"
            | "flashcp"
            | "nandwrite"
            | "mtd_debug"
    ) {
        return None;
    }
    match e.name.as_str() {
        "flashrom" => {
            let w = has_any(e, &["-w", "--write", "-E", "--erase"]) || has_prefix(e, "--write=");
            (w && !dry_run(e)).then(|| {
                let p = opt(e, &["-p", "--programmer"]).unwrap_or("?");
                format!(
                    "writes or erases the flash chip through programmer {}",
                    show(p)
                )
            })
        }
        "fwupdmgr" | "fwupdtool" => {
            let sub = first_words(e, 1).into_iter().next().unwrap_or_default();
            matches!(
                sub.as_str(),
                "install"
                    | "update"
                    | "upgrade"
                    | "reinstall"
                    | "downgrade"
                    | "install-blob"
                    | "firmware-flash"
                    | "switch-branch"
            )
            .then(|| format!("flashes device firmware ({sub})"))
        }
        "flash_erase" | "flash_eraseall" | "flashcp" | "nandwrite" => {
            Some("erases or writes an MTD flash device".into())
        }
        "mtd_debug" => match first_words(e, 1).first().map(String::as_str) {
            Some("erase" | "write") => Some("erases or writes an MTD flash device".into()),
            _ => None,
        },
        _ => None,
    }
}

fn c_volume(_: &RuleCtx, _: usize, e: &Exec) -> Option<String> {
    if !matches!(
        e.name.as_str(),
        "lvremove"
            | "vgremove"
            | "pvremove"
            | "zpool"
            | "zfs"
            | "btrfs"
            | "mdadm"
            | "cryptsetup"
            | "hdparm"
            | "nvme"
            | "sg_format"
            | "sg_sanitize"
            | "dmsetup"
    ) {
        return None;
    }
    if dry_run(e) {
        return None;
    }
    let w = words(e, &[]);
    let first = w.first().cloned().unwrap_or_default();
    let rest = |k: usize| w.get(k).map(|s| show(s)).unwrap_or_default();
    match e.name.as_str() {
        "lvremove" | "vgremove" | "pvremove" => Some(format!(
            "{}: destroys LVM {} {}",
            e.name,
            match e.name.as_str() {
                "lvremove" => "logical volume",
                "vgremove" => "volume group",
                _ => "physical volume label on",
            },
            rest(0)
        )),
        "zpool" => matches!(first.as_str(), "destroy" | "labelclear")
            .then(|| format!("destroys ZFS pool {}", rest(1))),
        "zfs" => (first == "destroy" && !has(e, "-n"))
            .then(|| format!("destroys ZFS dataset {}", rest(1))),
        "btrfs" => {
            let sub = w.get(1).cloned().unwrap_or_default();
            let path = w.get(2).cloned().unwrap_or_default();
            (matches!(first.as_str(), "subvolume" | "sub" | "subvol")
                && matches!(sub.as_str(), "delete" | "del")
                && is_critical(&norm_path(&path)))
            .then(|| format!("deletes btrfs subvolume {}", show(&path)))
        }
        "mdadm" => has_any(e, &["--zero-superblock", "--kill-subarray"])
            .then(|| "erases RAID metadata (md superblock)".into()),
        "cryptsetup" => matches!(
            first.as_str(),
            "luksformat" | "erase" | "luckserase" | "lukserase" | "reencrypt"
        )
        .then(|| format!("{first}: destroys the keys or data of {}", rest(1))),
        "hdparm" => args(e)
            .iter()
            .any(|a| {
                a.starts_with("--security-erase")
                    || a == "--trim-sector-ranges"
                    || a == "--write-sector"
            })
            .then(|| "secure-erases or overwrites sectors of a disk".into()),
        "nvme" => matches!(first.as_str(), "format" | "sanitize")
            .then(|| format!("NVMe {first} of {}", rest(1))),
        "sg_format" | "sg_sanitize" => Some("low-level formats or sanitizes a SCSI disk".into()),
        "dmsetup" => matches!(first.as_str(), "remove_all" | "wipe_table")
            .then(|| "removes every device-mapper volume".into()),
        _ => None,
    }
}

/// Does a chmod mode set the setuid or setgid bit?
fn mode_setuid(m: &str) -> bool {
    if m.chars().all(|c| c.is_ascii_digit()) && m.len() >= 4 {
        return matches!(m.as_bytes()[m.len() - 4], b'2' | b'4' | b'6');
    }
    m.split(',').any(|clause| {
        clause.contains('+') || clause.contains('=')
    } && clause.split(['+', '=']).skip(1).any(|p| p.contains('s')))
}

/// Paths that are (copies of) shells or interpreters in this command.
fn shell_like(ctx: &RuleCtx, path: &str) -> bool {
    let base = crate::analyze::cmd_name(path);
    if is_shell(&base) || is_interpreter(&base) {
        return true;
    }
    // cp /bin/bash X; chmod +s X
    let p = norm_path(path);
    ctx.analysis.execs.iter().any(|x| {
        matches!(x.name.as_str(), "cp" | "install" | "mv" | "rsync" | "ln")
            && operands(&x.argv, &["-m", "--mode", "-o", "-g", "-t"])
                .iter()
                .any(|s| {
                    let b = crate::analyze::cmd_name(s);
                    is_shell(&b) || is_interpreter(&b)
                })
            && operands(&x.argv, &["-m", "--mode", "-o", "-g", "-t"])
                .last()
                .is_some_and(|d| norm_path(d) == p)
    })
}

fn c_setuid_shell(ctx: &RuleCtx, _: usize, e: &Exec) -> Option<String> {
    match e.name.as_str() {
        "chmod" => {
            let ops = operands(&e.argv, &["--reference"]);
            let (mode, files) = ops.split_first()?;
            if !mode_setuid(mode) {
                return None;
            }
            files
                .iter()
                .find(|f| shell_like(ctx, f))
                .map(|f| format!("makes {} setuid/setgid: a root shell for anyone", show(f)))
        }
        "install" => {
            let mode = opt(e, &["-m", "--mode"])?;
            let ops = operands(
                &e.argv,
                &["-m", "--mode", "-o", "-g", "-t", "--owner", "--group"],
            );
            (mode_setuid(mode)
                && ops.iter().any(|s| {
                    let b = crate::analyze::cmd_name(s);
                    is_shell(&b) || is_interpreter(&b)
                }))
            .then(|| format!("installs a shell or interpreter with mode {mode} (setuid)"))
        }
        "setcap" => {
            let ops = operands(&e.argv, &[]);
            let caps = ops.first()?.to_ascii_lowercase();
            let strong = [
                "cap_setuid",
                "cap_setgid",
                "cap_sys_admin",
                "cap_dac_override",
                "cap_dac_read_search",
                "cap_sys_ptrace",
                "cap_sys_module",
                "cap_chown",
                "cap_fowner",
                "all",
            ]
            .iter()
            .any(|c| caps.contains(c));
            (strong && ops[1..].iter().any(|f| shell_like(ctx, f))).then(|| {
                format!(
                    "gives {} to {}: a privilege escalation for anyone",
                    show(&caps),
                    show(ops.get(1).copied().unwrap_or("?"))
                )
            })
        }
        _ => None,
    }
}

fn c_capability(ctx: &RuleCtx, i: usize, e: &Exec) -> Option<String> {
    if c_setuid_shell(ctx, i, e).is_some() {
        return None;
    }
    match e.name.as_str() {
        "setcap" => {
            let ops = operands(&e.argv, &[]);
            (ops.len() >= 2 && !has(e, "-r")).then(|| {
                format!(
                    "grants file capabilities {} to {}",
                    show(ops[0]),
                    show(ops[1])
                )
            })
        }
        "chmod" => {
            let ops = operands(&e.argv, &["--reference"]);
            let (mode, files) = ops.split_first()?;
            (mode_setuid(mode) && !files.is_empty())
                .then(|| format!("sets the setuid/setgid bit on {}", show(files[0])))
        }
        _ => None,
    }
}

fn c_fork_bomb(_: &RuleCtx, _: usize, e: &Exec) -> Option<String> {
    if !is_interpreter(&e.name) && !is_shell(&e.name) {
        return None;
    }
    let code: String = args(e)
        .iter()
        .chain(e.stdin_text.iter())
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(" ");
    if code.len() > 64 * 1024 || !code.contains("fork") {
        return None;
    }
    let c = code.replace(['\n', '\t'], " ");
    let looped = c.contains("fork while fork")
        || c.contains("fork until")
        || c.contains("fork while")
        || ["while", "loop", "for (;;)", "for(;;)", "repeat", "until"]
            .iter()
            .any(|l| {
                c.find(l).is_some_and(|k| {
                    let after = &c[k..];
                    after.find("fork").is_some_and(|f| f < 120)
                        && !after[..after.find("fork").unwrap_or(0)].contains("break")
                })
            });
    looped.then(|| format!("{} forks in an endless loop", e.name))
}

const LOG_FILES: &[&str] = &[
    "auth.log",
    "secure",
    "syslog",
    "messages",
    "wtmp",
    "btmp",
    "lastlog",
    "utmp",
    "kern.log",
    "audit.log",
    "faillog",
    "system.log",
];

/// A path that is the system's log store (the directory, a glob over it, the
/// journal, audit logs, login records).
fn system_log(p: &str) -> bool {
    let p = norm_path(p);
    let p = p.trim_end_matches('/');
    if matches!(
        p,
        "/var/log" | "/var/log/journal" | "/run/log/journal" | "/var/log/audit" | "/var/audit"
    ) || p.starts_with("/var/log/journal/")
        || p.starts_with("/var/log/audit/")
        || p.starts_with("/run/log/journal/")
    {
        return true;
    }
    if let Some(rest) = p.strip_prefix("/var/log/") {
        return rest.contains('*')
            || LOG_FILES.iter().any(|f| {
                rest == *f || rest.starts_with(&format!("{f}.")) || rest.starts_with('*')
            });
    }
    p.starts_with("/private/var/log") || p.starts_with("/library/logs") && p.len() < 16
}

fn c_log_wipe(ctx: &RuleCtx, i: usize, e: &Exec) -> Option<String> {
    match e.name.as_str() {
        "journalctl" => {
            let v = args(e).iter().find(|a| a.starts_with("--vacuum-"))?;
            Some(format!("deletes the systemd journal ({})", show(v)))
        }
        "find" => {
            let root = operands(&e.argv, &[]).first().map(|s| s.to_string())?;
            (system_log(&root)
                && (has(e, "-delete")
                    || has_any(e, &["-exec", "-execdir"])
                        && args(e)
                            .iter()
                            .any(|a| a == "rm" || a == "shred" || a == "truncate")))
            .then(|| format!("deletes or empties the system logs under {}", show(&root)))
        }
        _ => {
            let hit = ctx.targets.get(i).and_then(|ts| {
                ts.iter().find(|(p, k)| {
                    matches!(
                        k,
                        WriteKind::Delete | WriteKind::Overwrite | WriteKind::InPlace
                    ) && system_log(p)
                })
            });
            if let Some((p, _)) = hit {
                return Some(format!("deletes or empties the system log {}", show(p)));
            }
            // shred / truncate / wipe / srm operands
            matches!(
                e.name.as_str(),
                "shred" | "truncate" | "srm" | "wipe" | "unlink"
            )
            .then(|| {
                operands(
                    &e.argv,
                    &["-s", "--size", "-n", "--iterations", "-r", "--reference"],
                )
                .into_iter()
                .find(|p| system_log(p))
                .map(|p| format!("erases the system log {}", show(p)))
            })
            .flatten()
        }
    }
}

fn c_secure_delete(_: &RuleCtx, _: usize, e: &Exec) -> Option<String> {
    if !matches!(
        e.name.as_str(),
        "srm" | "wipe" | "shred" | "sfill" | "nwipe"
    ) {
        return None;
    }
    operands(&e.argv, &["-n", "--iterations", "-s", "--size"])
        .into_iter()
        .find(|p| {
            let r = crate::rules::resolve(e, p);
            is_critical(&norm_path(&r))
        })
        .map(|p| format!("{} securely erases {}", e.name, show(p)))
}

/// Recursive-delete calls of interpreter standard libraries with a literal
/// path: `shutil.rmtree("/etc")`, `rmtree("/")`, `fs.rmSync("/", {recursive})`,
/// `FileUtils.rm_rf("~")`, `remove_dir_all("/")`.
static CODE_RM: once_cell::sync::Lazy<regex::Regex> = once_cell::sync::Lazy::new(|| {
    regex::Regex::new(
        r#"(?:rmtree|rmSync|rm_rf|rm_r|remove_tree|remove_dir_all|rimraf(?:\.sync)?|rmdirSync|rm|deleteRecursively|removeItem|RemoveAll)\s*\(?\s*["']([^"']+)["']"#,
    )
    .expect("code rm regex")
});

fn critical_literal(e: &Exec, p: &str) -> bool {
    let r = crate::rules::resolve(e, p.trim());
    is_critical(&norm_path(&r))
}

fn c_delete_other(_: &RuleCtx, _: usize, e: &Exec) -> Option<String> {
    let n = e.name.as_str();
    if is_interpreter(n) {
        let code = args(e).iter().find(|a| {
            a.contains("rm") || a.contains("remove") || a.contains("Remove") || a.contains("delete")
        })?;
        if code.len() > 64 * 1024 {
            return None;
        }
        // `fs.rm(x)` / `rm(x)` alone deletes one file: require a recursive API
        let recursive_api = [
            "rmtree",
            "rmSync",
            "rm_rf",
            "rm_r",
            "remove_tree",
            "remove_dir_all",
            "rimraf",
            "rmdirSync",
            "deleteRecursively",
            "RemoveAll",
            "removeItem",
        ];
        return CODE_RM.captures_iter(code).find_map(|c| {
            let whole = c.get(0)?.as_str();
            let path = c.get(1)?.as_str();
            (recursive_api.iter().any(|a| whole.starts_with(a)) || code.contains("recursive"))
                .then_some(())
                .filter(|_| critical_literal(e, path))
                .map(|_| format!("{n} code deletes {} recursively", show(path)))
        });
    }
    match n {
        "tar" | "bsdtar" | "gtar" => {
            if !has(e, "--remove-files") {
                return None;
            }
            operands(
                &e.argv,
                &[
                    "-f",
                    "--file",
                    "-C",
                    "--directory",
                    "-T",
                    "--files-from",
                    "-X",
                    "--exclude-from",
                ],
            )
            .into_iter()
            .find(|p| critical_literal(e, p))
            .map(|p| format!("tar --remove-files deletes {} after archiving it", show(p)))
        }
        "rclone" => {
            let w = operands(&e.argv, &["--config", "--filter", "--include", "--exclude"]);
            let sub = w.first().copied().unwrap_or("");
            if !matches!(sub, "purge" | "delete" | "rmdirs") || dry_run(e) {
                return None;
            }
            w[1..]
                .iter()
                .find(|p| !p.contains(':') && critical_literal(e, p))
                .map(|p| format!("rclone {sub} deletes {}", show(p)))
        }
        _ => None,
    }
}

// ---------------------------------------------------------------- ask

fn c_interactive_shell(ctx: &RuleCtx, _: usize, e: &Exec) -> Option<String> {
    let ps = matches!(e.name.as_str(), "pwsh" | "powershell") && e.argv.len() == 1;
    if !(is_shell(&e.name) || ps) || e.stdin_text.is_some() || e.stdin_from.is_some() {
        return None;
    }
    // a shell reading its script from a file (`sh < x.sh`)
    if e.redirs
        .iter()
        .any(|r| r.op == crate::parse::RedirOp::In && r.fd.is_none_or(|f| f == 0))
    {
        return None;
    }
    let a = args(e);
    if a.iter().any(|w| {
        matches!(
            w.as_str(),
            "--version" | "-version" | "--help" | "-h" | "-n" | "--noexec"
        )
    }) {
        return None;
    }
    // In a posture a shell typed on its own (`bash`, `./bash -p`) reads
    // commands no one reviewed too (GTFOBins' shell function of shells)
    let via = match e.via.as_deref() {
        // the shell a program starts when given no command (`chroot /`,
        // `screen`, `tmux`): judged in a posture
        Some(v)
            if ctx.posture.is_none()
                && crate::knowledge::program(v).is_some_and(|p| p.starts_shell.is_some()) =>
        {
            return None;
        }
        Some(v) => v,
        None if ctx.posture.is_some() && e.depth == 0 => "the command",
        None => return None,
    };
    // `find -exec sh {} \;` runs files as scripts; `find -exec sh \;` does not
    if e.bulk && (via != "find" || e.argv.iter().any(|a| a.contains("{}"))) {
        return None;
    }
    if matches!(via, "sudo" | "doas" | "su" | "pkexec" | "runuser") {
        // a root shell is already judged by the privilege rules
        return None;
    }
    let runs_something = a
        .iter()
        .any(|w| !w.starts_with('-') || w == "-c" || w.starts_with("-c"))
        || a.iter()
            .any(|w| w.starts_with('-') && !w.starts_with("--") && w.contains('c'));
    (!runs_something).then(|| {
        format!(
            "{via} starts an interactive {} (a GTFOBins shell escape: the shell reads commands no one reviewed)",
            e.name
        )
    })
}

fn gcloud_member(e: &Exec) -> String {
    let m = opt(e, &["--member"]).unwrap_or("?");
    let r = opt(e, &["--role"]).unwrap_or("?");
    format!("{} to {}", show(r), show(m))
}

fn c_cloud_iam(_: &RuleCtx, _: usize, e: &Exec) -> Option<String> {
    if !matches!(e.name.as_str(), "gcloud" | "aws" | "az") {
        return None;
    }
    let w = words(
        e,
        &[
            "--member",
            "--role",
            "--project",
            "--region",
            "--profile",
            "--output",
            "-o",
            "--query",
            "--iam-account",
            "--assignee",
            "--scope",
            "--resource-group",
            "-g",
        ],
    );
    let s = |k: usize| w.get(k).map(String::as_str).unwrap_or("");
    match e.name.as_str() {
        "gcloud" => {
            let verb = w
                .iter()
                .find(|x| {
                    matches!(
                        x.as_str(),
                        "add-iam-policy-binding" | "set-iam-policy" | "remove-iam-policy-binding"
                    )
                })
                .cloned();
            if let Some(v) = verb {
                let scope = format!(
                    "{} {}",
                    s(0),
                    w.get(w.iter().position(|x| *x == v)? + 1)
                        .map(String::as_str)
                        .unwrap_or("")
                );
                return Some(format!(
                    "{v}: grants or changes role {} on {}",
                    gcloud_member(e),
                    show(scope.trim())
                ));
            }
            if s(0) == "iam" {
                let acct = opt(e, &["--iam-account"]).unwrap_or("?");
                return match (s(1), s(2), s(3)) {
                    ("service-accounts", "keys", "create") => Some(format!(
                        "creates a key for service account {} (a long-lived credential)",
                        show(acct)
                    )),
                    ("service-accounts", "create" | "delete" | "enable" | "disable", _)
                    | ("roles", "create" | "update" | "delete" | "undelete", _) => {
                        Some(format!("IAM {} {}: {}", s(1), s(2), show(s(3))))
                    }
                    _ => None,
                };
            }
            None
        }
        "aws" => {
            let (svc, op) = (s(0), s(1));
            let changes = |p: &[&str]| p.iter().any(|x| op.starts_with(x));
            let user = opt(
                e,
                &["--user-name", "--role-name", "--group-name", "--policy-arn"],
            )
            .unwrap_or("the account");
            match svc {
                "iam"
                    if changes(&[
                        "create-",
                        "attach-",
                        "put-",
                        "update-",
                        "add-",
                        "delete-",
                        "detach-",
                        "remove-",
                        "set-",
                        "upload-",
                        "enable-",
                        "deactivate-",
                        "tag-",
                    ]) =>
                {
                    Some(format!("IAM {op} on {}", show(user)))
                }
                "sts" if op == "assume-role" => Some(format!(
                    "assumes role {}",
                    show(opt(e, &["--role-arn"]).unwrap_or("?"))
                )),
                "organizations" | "sso-admin" | "identitystore" | "cognito-idp"
                    if changes(&[
                        "create-",
                        "attach-",
                        "put-",
                        "update-",
                        "delete-",
                        "detach-",
                        "admin-",
                        "add-",
                        "remove-",
                        "provision-",
                    ]) =>
                {
                    Some(format!(
                        "{svc} {op}: changes who can sign in or what they can do"
                    ))
                }
                _ => None,
            }
        }
        "az" => match (s(0), s(1), s(2)) {
            ("role", "assignment" | "definition", "create" | "delete" | "update") => Some(format!(
                "Azure role {} {}: role {} for {}",
                s(1),
                s(2),
                show(opt(e, &["--role"]).unwrap_or("?")),
                show(opt(e, &["--assignee", "--assignee-object-id"]).unwrap_or("?"))
            )),
            ("ad", "sp" | "app", _)
                if w.iter()
                    .any(|x| x == "create-for-rbac" || x == "reset" || x == "credential") =>
            {
                Some(format!(
                    "Azure AD {} credential or service principal change",
                    s(1)
                ))
            }
            ("ad", "user" | "group", "create" | "delete" | "update")
            | ("ad", "group", "member") => Some(format!("Azure AD {} {}", s(1), s(2))),
            _ => None,
        },
        _ => None,
    }
}

fn c_kube_rbac(_: &RuleCtx, _: usize, e: &Exec) -> Option<String> {
    if !matches!(e.name.as_str(), "kubectl" | "oc" | "kubecolor") {
        return None;
    }
    let w = words(
        e,
        &[
            "-n",
            "--namespace",
            "--context",
            "--cluster",
            "-o",
            "--output",
            "--clusterrole",
            "--role",
            "--serviceaccount",
            "--user",
            "--group",
            "-l",
            "--selector",
            "--kubeconfig",
            "--duration",
            "--verb",
            "--resource",
        ],
    );
    let s = |k: usize| w.get(k).map(String::as_str).unwrap_or("");
    let ns = opt(e, &["-n", "--namespace"]).unwrap_or("default");
    match (s(0), s(1)) {
        ("create", "clusterrolebinding" | "rolebinding") => Some(format!(
            "binds {} to {} in {} (Kubernetes RBAC)",
            show(opt(e, &["--clusterrole", "--role"]).unwrap_or("?")),
            show(opt(e, &["--serviceaccount", "--user", "--group"]).unwrap_or("?")),
            if s(1) == "clusterrolebinding" {
                "the whole cluster".to_string()
            } else {
                format!("namespace {ns}")
            }
        )),
        ("create", "clusterrole" | "role" | "serviceaccount" | "sa") => {
            Some(format!("creates {} {} in namespace {ns}", s(1), show(s(2))))
        }
        ("create", "token") => Some(format!(
            "mints a token for service account {} in namespace {ns}",
            show(s(2))
        )),
        ("create", "secret") => Some(format!("creates secret {} in namespace {ns}", show(s(3)))),
        ("get" | "describe", r) if r.starts_with("secret") => {
            let shows_data = s(0) == "get"
                && opt(e, &["-o", "--output"]).is_some_and(|o| {
                    o.contains("yaml")
                        || o.contains("json")
                        || o.contains("jsonpath")
                        || o.contains("go-template")
                });
            shows_data.then(|| format!("prints the secret values in namespace {ns}"))
        }
        ("edit" | "patch" | "delete" | "replace", r)
            if matches!(
                r,
                "clusterrole"
                    | "clusterrolebinding"
                    | "role"
                    | "rolebinding"
                    | "clusterroles"
                    | "clusterrolebindings"
                    | "roles"
                    | "rolebindings"
            ) || r.starts_with("clusterrole")
                || r.starts_with("rolebinding") =>
        {
            Some(format!("{} {} {} (Kubernetes RBAC)", s(0), r, show(s(2))))
        }
        ("auth", "reconcile") => Some("reconciles RBAC roles from a file".into()),
        ("config", "view") if has(e, "--raw") => {
            Some("prints the kubeconfig with its credentials".into())
        }
        _ => None,
    }
}

fn c_repo_perms(_: &RuleCtx, _: usize, e: &Exec) -> Option<String> {
    if !matches!(e.name.as_str(), "gh" | "glab") {
        return None;
    }
    let w = words(
        e,
        &[
            "-R",
            "--repo",
            "-X",
            "--method",
            "-f",
            "-F",
            "--field",
            "--raw-field",
            "-b",
            "--body",
            "--visibility",
            "-t",
            "--title",
            "-e",
            "--env",
            "--org",
            "-o",
        ],
    );
    let s = |k: usize| w.get(k).map(String::as_str).unwrap_or("");
    let repo = opt(e, &["-R", "--repo"]).unwrap_or("the current repository");
    match e.name.as_str() {
        "gh" => match (s(0), s(1)) {
            ("repo", "edit") => {
                let vis = opt(e, &["--visibility"]);
                let risky = vis.is_some()
                    || args(e).iter().any(|a| {
                        a.starts_with("--enable-")
                            && (a.contains("forking") || a.contains("auto-merge"))
                            || a.starts_with("--allow-forking")
                            || a == "--accept-visibility-change-consequences"
                    });
                risky.then(|| match vis {
                    Some(v) => format!(
                        "changes the visibility of {} to {}",
                        show(if s(2).is_empty() { repo } else { s(2) }),
                        show(v)
                    ),
                    None => format!("changes access settings of {}", show(repo)),
                })
            }
            ("repo", "deploy-key") if matches!(s(2), "add" | "delete") => Some(format!(
                "{} a deploy key{} on {}",
                if s(2) == "add" { "adds" } else { "deletes" },
                if has(e, "--allow-write") || has(e, "-w") {
                    " with write access"
                } else {
                    ""
                },
                show(repo)
            )),
            ("secret" | "variable", "set" | "delete" | "remove") => Some(format!(
                "{} CI {} {} of {}",
                s(1),
                s(0),
                show(s(2)),
                show(opt(e, &["--org", "-o"]).unwrap_or(repo))
            )),
            ("ssh-key" | "gpg-key", "add" | "delete") => {
                Some(format!("{} an account {}", s(1), s(0)))
            }
            ("api", _) => {
                let method = opt(e, &["-X", "--method"])
                    .unwrap_or("GET")
                    .to_ascii_uppercase();
                let path = w.get(1).cloned().unwrap_or_default();
                let has_fields = args(e)
                    .iter()
                    .any(|a| matches!(a.as_str(), "-f" | "-F" | "--field" | "--raw-field"));
                let writes = method != "GET" || has_fields;
                let sensitive = [
                    "collaborators",
                    "permissions",
                    "protection",
                    "/keys",
                    "hooks",
                    "secrets",
                    "rulesets",
                    "/teams",
                    "/members",
                    "memberships",
                    "visibility",
                    "actions/permissions",
                    "environments",
                    "/invitations",
                    "branches/",
                ]
                .iter()
                .any(|k| path.contains(k));
                (writes && sensitive).then(|| {
                    format!(
                        "{method} {}: changes repository or organisation access",
                        show(&path)
                    )
                })
            }
            _ => None,
        },
        "glab" => match (s(0), s(1)) {
            ("variable", "set" | "delete" | "update") => {
                Some(format!("{} CI variable {}", s(1), show(s(2))))
            }
            ("deploy-key", "add" | "delete") => Some(format!("{} a deploy key", s(1))),
            ("api", _) => {
                let method = opt(e, &["-X", "--method"])
                    .unwrap_or("GET")
                    .to_ascii_uppercase();
                let path = s(1);
                (method != "GET"
                    && [
                        "members",
                        "protected_branches",
                        "deploy_keys",
                        "variables",
                        "visibility",
                    ]
                    .iter()
                    .any(|k| path.contains(k)))
                .then(|| format!("{method} {}: changes project access", show(path)))
            }
            _ => None,
        },
        _ => None,
    }
}

fn c_secret_store(_: &RuleCtx, _: usize, e: &Exec) -> Option<String> {
    if !matches!(e.name.as_str(), "aws" | "gcloud" | "az" | "vault" | "bao") {
        return None;
    }
    let w = words(
        e,
        &[
            "--secret-id",
            "--key-id",
            "--name",
            "--vault-name",
            "--region",
            "--profile",
            "--project",
            "-policy",
            "--policy",
            "--data-file",
        ],
    );
    let s = |k: usize| w.get(k).map(String::as_str).unwrap_or("");
    match e.name.as_str() {
        "aws" => match (s(0), s(1)) {
            ("secretsmanager", op)
                if [
                    "delete-",
                    "put-",
                    "update-",
                    "restore-",
                    "rotate-",
                    "replicate-",
                    "remove-",
                ]
                .iter()
                .any(|p| op.starts_with(p)) =>
            {
                Some(format!(
                    "{op} on secret {}",
                    show(opt(e, &["--secret-id"]).unwrap_or("?"))
                ))
            }
            ("kms", op)
                if [
                    "schedule-key-deletion",
                    "disable-key",
                    "put-key-policy",
                    "create-grant",
                    "delete-",
                    "disable-key-rotation",
                    "retire-grant",
                    "revoke-grant",
                ]
                .iter()
                .any(|p| op.starts_with(p)) =>
            {
                Some(format!(
                    "{op} on KMS key {}",
                    show(opt(e, &["--key-id"]).unwrap_or("?"))
                ))
            }
            ("ssm", op) if op == "delete-parameter" || op == "delete-parameters" => {
                Some(format!("{op}: deletes SSM parameters"))
            }
            _ => None,
        },
        "gcloud" => match (s(0), s(1), s(2)) {
            ("secrets", "delete" | "add-iam-policy-binding" | "set-iam-policy", _)
            | ("secrets", "versions", "destroy" | "disable") => {
                Some(format!("gcloud secrets {} {}", s(1), show(s(2))))
            }
            ("kms", "keys", _)
                if w.iter()
                    .any(|x| x == "destroy" || x == "add-iam-policy-binding" || x == "disable") =>
            {
                Some("destroys, disables or shares a Cloud KMS key".into())
            }
            _ => None,
        },
        "az" => match (s(0), s(1), s(2)) {
            ("keyvault", "delete" | "purge" | "set-policy" | "delete-policy", _)
            | ("keyvault", "secret" | "key" | "certificate", "delete" | "purge") => Some(format!(
                "Azure Key Vault {} {} in {}",
                s(1),
                s(2),
                show(opt(e, &["--vault-name", "--name", "-n"]).unwrap_or("?"))
            )),
            _ => None,
        },
        "vault" | "bao" => match (s(0), s(1)) {
            ("policy", "write" | "delete") => Some(format!("Vault policy {} {}", s(1), show(s(2)))),
            ("token", "create") => Some(format!(
                "mints a Vault token{}",
                opt(e, &["-policy", "--policy"])
                    .map(|p| format!(" with policy {}", show(p)))
                    .unwrap_or_default()
            )),
            ("auth" | "secrets" | "audit", "enable" | "disable" | "tune") => {
                Some(format!("Vault {} {} {}", s(0), s(1), show(s(2))))
            }
            ("kv", "delete" | "destroy" | "metadata") => {
                Some(format!("Vault kv {} {}", s(1), show(s(2))))
            }
            ("write", p)
                if p.starts_with("auth/")
                    || p.starts_with("sys/")
                    || p.starts_with("identity/") =>
            {
                Some(format!("writes Vault {}", show(p)))
            }
            _ => None,
        },
        _ => None,
    }
}

fn c_audit_off(_: &RuleCtx, _: usize, e: &Exec) -> Option<String> {
    if !matches!(e.name.as_str(), "aws" | "gcloud" | "az") {
        return None;
    }
    let w = words(
        e,
        &[
            "--name",
            "--region",
            "--profile",
            "--project",
            "--resource",
            "--log-group-name",
            "--detector-id",
        ],
    );
    let s = |k: usize| w.get(k).map(String::as_str).unwrap_or("");
    match e.name.as_str() {
        "aws" => {
            let (svc, op) = (s(0), s(1));
            let hit = match svc {
                "cloudtrail" => matches!(
                    op,
                    "stop-logging"
                        | "delete-trail"
                        | "update-trail"
                        | "put-event-selectors"
                        | "delete-event-data-store"
                ),
                "logs" => op.starts_with("delete-") || op == "put-retention-policy",
                "guardduty" => {
                    op.starts_with("delete-")
                        || op.starts_with("disassociate")
                        || op == "update-detector"
                }
                "config" | "configservice" => op.starts_with("stop-") || op.starts_with("delete-"),
                "securityhub" => op.starts_with("disable-") || op.starts_with("delete-"),
                "s3api" => op == "put-bucket-logging" && !has(e, "--bucket-logging-status"),
                _ => false,
            };
            hit.then(|| {
                format!(
                    "{svc} {op} on {}",
                    show(
                        opt(e, &["--name", "--log-group-name", "--detector-id"])
                            .unwrap_or("the account")
                    )
                )
            })
        }
        "gcloud" => {
            let hit = (s(0) == "logging"
                && matches!(s(1), "sinks" | "buckets" | "logs" | "views")
                && w.iter().any(|x| x == "delete" || x == "update"))
                || (s(0) == "logging" && s(1) == "logs")
                || w.iter().any(|x| x == "audit-configs");
            hit.then(|| {
                format!(
                    "gcloud logging {} {}: stops or deletes the audit record",
                    s(1),
                    show(s(3))
                )
            })
        }
        "az" => {
            let hit = s(0) == "monitor"
                && matches!(
                    s(1),
                    "diagnostic-settings" | "log-profiles" | "log-analytics" | "activity-log"
                )
                && w.iter().any(|x| x == "delete" || x == "update");
            hit.then(|| {
                format!(
                    "Azure monitor {} change: stops or deletes the audit record",
                    s(1)
                )
            })
        }
        _ => None,
    }
}

fn c_token_print(_: &RuleCtx, _: usize, e: &Exec) -> Option<String> {
    if !matches!(
        e.name.as_str(),
        "gh" | "glab" | "gcloud" | "aws" | "az" | "doctl" | "heroku" | "npm" | "vault"
    ) {
        return None;
    }
    let w = words(
        e,
        &[
            "--profile",
            "--project",
            "--account",
            "--hostname",
            "-h",
            "--region",
        ],
    );
    let s = |k: usize| w.get(k).map(String::as_str).unwrap_or("");
    let hit = match e.name.as_str() {
        "gh" | "glab" => {
            s(0) == "auth" && s(1) == "token"
                || (s(0) == "auth" && s(1) == "status" && has(e, "--show-token"))
                || (s(0) == "auth" && s(1) == "status" && has(e, "-t"))
        }
        "gcloud" => {
            s(0) == "auth" && matches!(s(1), "print-access-token" | "print-identity-token")
                || (s(0) == "auth" && s(1) == "application-default" && s(2).starts_with("print-"))
        }
        "aws" => {
            (s(0) == "sts" && matches!(s(1), "get-session-token" | "get-federation-token"))
                || (s(0) == "configure" && s(1) == "get" && s(2).contains("secret"))
                || (s(0) == "configure" && s(1) == "export-credentials")
                || (s(0) == "ecr" && s(1) == "get-login-password" && e.stdin_from.is_none())
        }
        "az" => s(0) == "account" && s(1) == "get-access-token",
        "doctl" => s(0) == "auth" && s(1) == "token",
        "heroku" => s(0) == "auth:token",
        "npm" => s(0) == "token" && s(1) == "create",
        "vault" => s(0) == "print" && s(1) == "token",
        _ => false,
    };
    hit.then(|| format!("{} prints a credential of the signed-in account", e.name))
}

fn c_persistence(_: &RuleCtx, _: usize, e: &Exec) -> Option<String> {
    if !matches!(
        e.name.as_str(),
        "systemctl"
            | "launchctl"
            | "update-rc.d"
            | "chkconfig"
            | "rc-update"
            | "schtasks"
            | "sc"
            | "sc.exe"
    ) {
        return None;
    }
    let w = words(e, &["--user", "-M", "--machine", "-H", "--host", "--root"]);
    let s = |k: usize| w.get(k).map(String::as_str).unwrap_or("");
    match e.name.as_str() {
        "systemctl" => (matches!(
            s(0),
            "enable" | "link" | "add-wants" | "add-requires" | "set-default" | "preset"
        ) && !has(e, "--dry-run"))
        .then(|| {
            format!(
                "systemctl {}: {} starts at every boot or login",
                s(0),
                show(s(1))
            )
        }),
        "launchctl" => matches!(s(0), "load" | "bootstrap" | "enable" | "submit").then(|| {
            format!(
                "launchctl {}: a launch agent or daemon that runs later",
                s(0)
            )
        }),
        "update-rc.d" | "chkconfig" | "rc-update" => (w
            .iter()
            .any(|x| x == "enable" || x == "defaults" || x == "on" || x == "add"))
        .then(|| format!("{}: a service enabled at boot", e.name)),
        "schtasks" => args(e)
            .iter()
            .any(|a| {
                a.eq_ignore_ascii_case("/create")
                    || a.eq_ignore_ascii_case("-create")
                    || a.eq_ignore_ascii_case("/change")
            })
            .then(|| {
                format!(
                    "creates or changes scheduled task {}",
                    show(opt(e, &["/tn", "/TN", "-tn"]).unwrap_or("?"))
                )
            }),
        "sc" | "sc.exe" => matches!(s(0), "create" | "config")
            .then(|| format!("creates or reconfigures Windows service {}", show(s(1)))),
        _ => None,
    }
}

fn lc_args(e: &Exec) -> Vec<String> {
    args(e).iter().map(|a| a.to_ascii_lowercase()).collect()
}

fn url_in(a: &[String]) -> Option<&String> {
    a.iter().find(|x| {
        x.contains("http://")
            || x.contains("https://")
            || x.contains("\\\\") && x.contains('@')
            || x.starts_with("//")
            || x.starts_with("ftp://")
    })
}

fn c_lolbas(_: &RuleCtx, _: usize, e: &Exec) -> Option<String> {
    lolbas_reason(&e.name, &lc_args(e)).or_else(|| {
        if is_shell(&e.name) {
            return None; // `bash -c` at a POSIX prompt is judged as a shell
        }
        crate::knowledge::win_lolbas(&e.name, args(e), &e.argv.join(" "))
            .filter(|(rule, _)| *rule == "lolbas-proxy")
            .map(|(_, why)| why)
    })
}

/// What a LOLBAS binary with logic of its own does with these (lowercase)
/// arguments: certutil, bitsadmin, mshta, regsvr32, rundll32's libraries,
/// msiexec, wmic, ... (the others are in [`crate::knowledge::WINDOWS`]).
pub fn lolbas_reason(name: &str, a: &[String]) -> Option<String> {
    if !matches!(
        name,
        "certutil"
            | "bitsadmin"
            | "mshta"
            | "regsvr32"
            | "rundll32"
            | "msiexec"
            | "cmstp"
            | "installutil"
            | "regasm"
            | "regsvcs"
            | "odbcconf"
            | "pcalua"
            | "msxsl"
            | "ieexec"
            | "presentationhost"
            | "xwizard"
            | "msdt"
            | "forfiles"
            | "wmic"
            | "hh"
            | "esentutl"
            | "expand"
            | "extrac32"
            | "replace"
    ) {
        return None;
    }
    let any = |ws: &[&str]| {
        a.iter()
            .any(|x| ws.iter().any(|w| x == w || x.starts_with(&format!("{w}:"))))
    };
    let url = url_in(a).map(|u| show(u));
    match name {
        "certutil" => (any(&[
            "-urlcache",
            "/urlcache",
            "-verifyctl",
            "/verifyctl",
            "-decode",
            "/decode",
            "-decodehex",
            "/decodehex",
        ]))
        .then(|| {
            format!(
                "certutil downloads or decodes a file{}",
                url.map(|u| format!(" from {u}")).unwrap_or_default()
            )
        }),
        "bitsadmin" => any(&[
            "/transfer",
            "/addfile",
            "/create",
            "/setnotifycmdline",
            "-transfer",
        ])
        .then(|| {
            format!(
                "bitsadmin transfer job{}",
                url.map(|u| format!(" from {u}")).unwrap_or_default()
            )
        }),
        "mshta" => {
            (!a.is_empty()).then(|| format!("mshta runs HTML application code {}", show(&a[0])))
        }
        "regsvr32" => a
            .iter()
            .any(|x| x.starts_with("/i:") || x.starts_with("-i:") || x.contains("scrobj"))
            .then(|| "regsvr32 runs a remote or scriptlet COM object (Squiblydoo)".into()),
        "rundll32" => {
            let j = a.join(" ");
            if j.contains("comsvcs") && j.contains("minidump") {
                return None; // credential dump rule
            }
            (j.contains("javascript:")
                || j.contains("url.dll")
                || j.contains("shell32") && j.contains("shellexec_rundll")
                || j.contains("advpack")
                || j.contains("ieadvpack")
                || j.contains("zipfldr")
                || j.contains("pcwutl")
                || j.contains("http"))
            .then(|| format!("rundll32 proxies execution: {}", show(&j)))
        }
        "msiexec" => (url.is_some() || any(&["/y", "/z"])).then(|| {
            format!(
                "msiexec installs or registers a package{}",
                url.map(|u| format!(" from {u}")).unwrap_or_default()
            )
        }),
        "cmstp" | "installutil" | "regasm" | "regsvcs" | "odbcconf" | "pcalua" | "msxsl"
        | "ieexec" | "presentationhost" | "xwizard" | "msdt" => {
            Some(format!("{} loads and runs code it is given (LOLBAS)", name))
        }
        "forfiles" => any(&["/c", "-c"]).then(|| "forfiles runs a command for each file".into()),
        "wmic" => (a.iter().any(|x| x == "process")
            && a.iter().any(|x| x == "call")
            && a.iter().any(|x| x == "create"))
        .then(|| "wmic starts a process (WMI process call create)".into()),
        "hh" => url.map(|u| format!("hh opens remote help content {u}")),
        "esentutl" => any(&["/y", "/vss"]).then(|| "esentutl copies a locked file".into()),
        "expand" | "extrac32" | "replace"
            if url.is_some() || a.iter().any(|x| x.starts_with("\\\\")) =>
        {
            Some(format!("{} copies a file from a remote share", name))
        }
        _ => None,
    }
}

fn c_win_cred(_: &RuleCtx, _: usize, e: &Exec) -> Option<String> {
    if !matches!(
        e.name.as_str(),
        "rundll32"
            | "procdump"
            | "procdump64"
            | "reg"
            | "ntdsutil"
            | "esentutl"
            | "vssadmin"
            | "mimikatz"
            | "secretsdump.py"
            | "secretsdump"
            | "pypykatz"
            | "lazagne"
    ) {
        return None;
    }
    let a = lc_args(e);
    let j = a.join(" ");
    match e.name.as_str() {
        "rundll32" if j.contains("comsvcs") && j.contains("minidump") => {
            Some("dumps a process's memory (LSASS credentials) with comsvcs MiniDump".into())
        }
        "procdump" | "procdump64" if j.contains("lsass") => Some("dumps LSASS memory".into()),
        "reg"
            if a.first().is_some_and(|x| x == "save" || x == "export")
                && [
                    "hklm\\sam",
                    "hklm\\system",
                    "hklm\\security",
                    "hkey_local_machine\\sam",
                    "hkey_local_machine\\system",
                    "hkey_local_machine\\security",
                    "hklmsam",
                    "hklmsystem",
                    "hklmsecurity",
                ]
                .iter()
                .any(|h| j.contains(h)) =>
        {
            Some(format!(
                "saves the {} hive (password hashes)",
                show(a.get(1).map(String::as_str).unwrap_or("?"))
            ))
        }
        "ntdsutil" if j.contains("ifm") || j.contains("ntds") => {
            Some("copies the Active Directory database (ntds.dit)".into())
        }
        "esentutl"
            if j.contains("ntds")
                || j.contains("\\sam")
                || j.contains("config") && j.contains("/vss") =>
        {
            Some("copies the AD database or SAM through a shadow copy".into())
        }
        "vssadmin" if a.first().is_some_and(|x| x == "create") => {
            Some("creates a shadow copy (to read locked credential stores)".into())
        }
        "mimikatz" | "secretsdump.py" | "secretsdump" | "pypykatz" | "lazagne" => {
            Some(format!("{} extracts stored credentials", e.name))
        }
        _ => None,
    }
}

fn c_account(_: &RuleCtx, _: usize, e: &Exec) -> Option<String> {
    if !matches!(
        e.name.as_str(),
        "net"
            | "net1"
            | "dscl"
            | "sysadminctl"
            | "useradd"
            | "adduser"
            | "userdel"
            | "deluser"
            | "groupadd"
            | "addgroup"
    ) {
        return None;
    }
    let a = lc_args(e);
    let add = a.iter().any(|x| x == "/add" || x == "-add");
    match e.name.as_str() {
        "net" | "net1" => match a.first().map(String::as_str) {
            Some("user") if add => Some(format!(
                "creates Windows account {}",
                show(a.get(1).map(String::as_str).unwrap_or("?"))
            )),
            Some("localgroup" | "group") if add => Some(format!(
                "adds {} to group {}",
                show(a.get(2).map(String::as_str).unwrap_or("?")),
                show(a.get(1).map(String::as_str).unwrap_or("?"))
            )),
            Some("user") if a.len() >= 3 && !a[2].starts_with('/') => {
                Some(format!("sets the password of {}", show(&a[1])))
            }
            _ => None,
        },
        "dscl"
            if a.iter().any(|x| x == "-create" || x == "-append")
                && a.iter()
                    .any(|x| x.contains("/users/") || x.contains("/groups/admin")) =>
        {
            Some("creates or changes a macOS account or the admin group".into())
        }
        "userdel" | "deluser" => {
            let user = operands(
                &e.argv,
                &[
                    "-s",
                    "--shell",
                    "-d",
                    "--home",
                    "-g",
                    "--gid",
                    "-G",
                    "--groups",
                    "-c",
                    "--comment",
                    "-u",
                    "--uid",
                    "-k",
                    "-e",
                    "-f",
                    "-p",
                    "--password",
                    "-K",
                ],
            )
            .last()
            .map(|u| show(u))
            .unwrap_or_else(|| "?".into());
            Some(format!("{}: account {user}", e.name))
        }
        "sysadminctl" if a.iter().any(|x| x == "-adduser" || x == "-admin") => {
            Some("creates a macOS (admin) account".into())
        }
        _ => None,
    }
}
