//! Rule families by class of danger (issue 16): version control, system
//! state, exfiltration and exposure, data stores and cloud, macOS, supply
//! chain and the catastrophic tier.
//!
//! Why a family and not a pattern per example: an agent under prompt
//! injection rephrases. Each matcher here models what a *kind* of command
//! does (a git invocation that discards working-tree changes, a D-Bus call
//! that powers the machine off, a sync whose source is empty, a package
//! install from a non-official index) over the analysed program
//! ([`Exec`]: normalised name, canonical argv with GNU abbreviations
//! expanded, write targets, cwd, pipe source), and returns a one-line
//! explanation naming what the command does. The explanation becomes the
//! reason's description, so a prompt says *why*, not just which rule.

use once_cell::sync::Lazy;
use regex::Regex;

use crate::analyze::{DYN, Exec, cmd_name};
use crate::ctx::{RuleCtx, WriteKind, operands, tail};
use crate::effects::m_everyday_effect;
use crate::names::git_sub;
use crate::rules::{
    dry_run, has_long, is_critical, is_system_path, is_user_sensitive, lc, m_cloud_destroy,
    m_pkg_remove, short_flags,
};
use crate::sources::{official_source, package_env_risky};
use crate::types::Verdict;
use crate::words::norm_path;

pub use crate::rules::ExplainMatcher;

/// `(key, tier, generic description, matcher)`.
pub type FamilyRow = (&'static str, Verdict, &'static str, ExplainMatcher);

/// The family rules, appended to the built-in table.
pub fn family_rows() -> Vec<FamilyRow> {
    use Verdict::{Ask, Block};
    vec![
        // ---- block
        (
            "shutdown-reboot",
            Block,
            "shut down, halt or reboot the machine",
            f_power,
        ),
        (
            "permissions-root",
            Block,
            "recursive permission or ownership change on the root filesystem or a system tree",
            f_perm_root,
        ),
        (
            "essential-package-removal",
            Block,
            "remove the C library, init system, core shell utilities or the package manager",
            f_essential_pkg,
        ),
        (
            "core-file-destroy",
            Block,
            "delete, move away or overwrite the C library, dynamic loader, init or package manager",
            f_core_file,
        ),
        (
            "account-wide-delete",
            Block,
            "delete every resource an account or cluster lists",
            f_account_wide,
        ),
        (
            "datastore-wipe-all",
            Block,
            "delete every index, key or database of a data store",
            f_datastore_all,
        ),
        (
            "disk-erase",
            Block,
            "erase, zero or repartition a whole disk or APFS container",
            f_disk_erase,
        ),
        // ---- ask
        (
            "git-destructive",
            Ask,
            "history-rewriting or work-discarding git operation",
            f_git,
        ),
        (
            "vcs-destructive",
            Ask,
            "discard work or strip history (Mercurial, Subversion, Bazaar, Fossil, jj)",
            f_vcs,
        ),
        (
            "network-down",
            Ask,
            "take a network interface, route or the network service down",
            f_net_down,
        ),
        (
            "firewall-open",
            Ask,
            "flush the firewall or open its default policy",
            f_firewall,
        ),
        (
            "audit-disable",
            Ask,
            "disable auditing or wipe system logs",
            f_audit,
        ),
        (
            "history-wipe",
            Ask,
            "wipe or stop recording shell history",
            f_history,
        ),
        (
            "root-account",
            Ask,
            "create a user with uid 0 or add one to an administrators group",
            f_root_account,
        ),
        ("swap-off", Ask, "turn swap off", f_swapoff),
        (
            "kernel-hardening-off",
            Ask,
            "lower a kernel security setting (ASLR, ptrace, pointer and dmesg restrictions)",
            f_sysctl,
        ),
        (
            "secret-exfiltration",
            Ask,
            "send a secret (key, token, password variable) in a URL, request body or DNS name",
            f_secret_exfil,
        ),
        (
            "tunnel-exposure",
            Ask,
            "reverse tunnel or port forward that exposes a local service",
            f_tunnel,
        ),
        (
            "file-server-exposed",
            Ask,
            "file server on all interfaces serving the home directory, the root or a system tree",
            f_file_server,
        ),
        (
            "sync-delete-empty",
            Ask,
            "sync with delete from an empty or temporary source (empties the destination)",
            f_sync_delete,
        ),
        (
            "datastore-destroy",
            Ask,
            "drop or wipe a database, bucket, collection or key prefix",
            f_datastore,
        ),
        (
            "security-agent-off",
            Ask,
            "unload a security agent or turn off FileVault, SIP or backups",
            f_macos,
        ),
        (
            "untrusted-package-source",
            Ask,
            "install packages from, or point a package manager at, an untrusted index, URL or git remote",
            f_supply,
        ),
        (
            "everyday-effect",
            Ask,
            "discards uncommitted work, kills by pattern, uploads a local file or creates a cloud resource",
            m_everyday_effect,
        ),
    ]
}

// ---------------------------------------------------------------- helpers

/// The first argument after the program that is not an option (a VCS subcommand).
fn first_operand(a: &[String]) -> Option<&str> {
    tail(a)
        .iter()
        .find(|s| !s.starts_with('-'))
        .map(|s| s.as_str())
}

fn args_lc(e: &Exec) -> Vec<String> {
    tail(&e.argv).iter().map(|s| lc(s)).collect()
}

/// Non-option words (GNU style, `--` ends options), lowercased.
fn words_lc(e: &Exec) -> Vec<String> {
    operands(&e.argv, &[]).iter().map(|s| lc(s)).collect()
}

/// Value of an option: `--opt V`, `--opt=V`, `-o V`, `-oV`.
fn opt_val<'a>(argv: &'a [String], names: &[&str]) -> Option<&'a str> {
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].as_str();
        if a == "--" {
            return None;
        }
        for n in names {
            if a == *n {
                return argv.get(i + 1).map(|s| s.as_str());
            }
            if n.starts_with("--") {
                if let Some(v) = a.strip_prefix(n).and_then(|r| r.strip_prefix('=')) {
                    return Some(v);
                }
            } else if n.len() == 2
                && let Some(v) = a.strip_prefix(n)
                && !v.is_empty()
            {
                return Some(v.trim_start_matches('='));
            }
        }
        i += 1;
    }
    None
}

fn opt_vals<'a>(argv: &'a [String], names: &[&str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].as_str();
        if a == "--" {
            break;
        }
        for n in names {
            if a == *n {
                if let Some(v) = argv.get(i + 1) {
                    out.push(v.as_str());
                }
            } else if n.starts_with("--") {
                if let Some(v) = a.strip_prefix(n).and_then(|r| r.strip_prefix('=')) {
                    out.push(v);
                }
            } else if n.len() == 2
                && let Some(v) = a.strip_prefix(n)
                && !v.is_empty()
                && !a.starts_with("--")
            {
                out.push(v.trim_start_matches('='));
            }
        }
        i += 1;
    }
    out
}

/// A path resolved against the known working directory.
fn at_cwd(e: &Exec, p: &str) -> String {
    match &e.cwd {
        Some(c) if !p.starts_with('/') && !p.starts_with('~') && !p.contains(DYN) => {
            norm_path(&format!("{c}/{p}"))
        }
        _ => norm_path(p),
    }
}

/// The root filesystem or a system tree (not a single user's home).
fn is_root_tree(p: &str) -> bool {
    let n = p.to_lowercase();
    if n == "~" || n.starts_with("~/") {
        return false;
    }
    let comps: Vec<&str> = n.trim_end_matches("/*").split('/').collect();
    if comps.len() == 3 && (comps[1] == "home" || comps[1] == "users" || comps[0] == "c:") {
        return false;
    }
    is_critical(p)
}

fn loopback(host: &str) -> bool {
    let h = host
        .trim_matches(|c| c == '[' || c == ']')
        .to_ascii_lowercase();
    h == "localhost" || h.starts_with("127.") || h == "::1" || h == "ip6-localhost"
}

// ---------------------------------------------------------------- system

static LOGIN1_METHOD: Lazy<Regex> = Lazy::new(|| {
    Regex::new(r"(?i)(^|[.\s])(poweroff|reboot|halt|kexec|softreboot|poweroffwithflags|rebootwithflags|haltwithflags)$")
        .expect("login1 method")
});

fn f_power(_: &RuleCtx, _: usize, e: &Exec) -> Option<&'static str> {
    let n = e.name.as_str();
    let script = e
        .argv
        .first()
        .is_some_and(|p| p.contains("/init.d/") || p.contains("/rc.d/"));
    if !script
        && !matches!(
            n,
            "shutdown"
                | "reboot"
                | "halt"
                | "poweroff"
                | "uadmin"
                | "init"
                | "telinit"
                | "systemctl"
                | "loginctl"
                | "dbus-send"
                | "busctl"
                | "gdbus"
                | "qdbus"
                | "dbus"
                | "rtcwake"
                | "kexec"
                | "openrc-shutdown"
                | "xfce4-session-logout"
                | "gnome-session-quit"
                | "lxqt-leave"
                | "service"
                | "invoke-rc.d"
                | "rc-service"
        )
    {
        return None;
    }
    let a = args_lc(e);
    let info = |a: &[String]| {
        a.iter().any(|s| {
            matches!(
                s.as_str(),
                "-c" | "--help" | "--version" | "-k" | "--show" | "/?" | "-?" | "--wall"
            )
        })
    };
    match n {
        "shutdown" => {
            // Windows `shutdown /a` (or a lone `-a`) aborts a pending shutdown
            if a.iter().any(|s| s == "/a") || a == ["-a"] || info(&a) {
                return None;
            }
            Some("shutdown powers off, halts or reboots the machine")
        }
        "reboot" | "halt" | "poweroff" | "uadmin" => {
            (!info(&a)).then_some("powers off, halts or reboots the machine")
        }
        "init" | "telinit" => a
            .iter()
            .any(|s| s == "0" || s == "6")
            .then_some("init 0 / 6 halts or reboots the machine"),
        "systemctl" | "loginctl" => {
            const VERBS: &[&str] = &[
                "poweroff",
                "reboot",
                "halt",
                "kexec",
                "soft-reboot",
                "emergency",
                "rescue",
            ];
            if a.iter().any(|s| VERBS.contains(&s.as_str())) {
                return Some("systemctl powers off, reboots or drops the machine to rescue mode");
            }
            const TARGETS: &[&str] = &[
                "poweroff.target",
                "reboot.target",
                "halt.target",
                "kexec.target",
                "soft-reboot.target",
                "rescue.target",
                "emergency.target",
                "runlevel0.target",
                "runlevel1.target",
                "runlevel6.target",
                "ctrl-alt-del.target",
                "exit.target",
            ];
            let activates = a.iter().any(|s| {
                matches!(
                    s.as_str(),
                    "start" | "isolate" | "restart" | "reload-or-restart" | "try-restart"
                )
            });
            (activates && a.iter().any(|s| TARGETS.contains(&s.as_str())))
                .then_some("starts a systemd shutdown/reboot/rescue target")
        }
        "dbus-send" | "busctl" | "gdbus" | "qdbus" | "dbus" => {
            let login = a.iter().any(|s| {
                s.contains("login1") || s.contains("consolekit") || s.contains("systemd1")
            });
            (login && tail(&e.argv).iter().any(|s| LOGIN1_METHOD.is_match(s)))
                .then_some("asks the login manager over D-Bus to power off or reboot")
        }
        "rtcwake" => {
            let mode = opt_val(&e.argv, &["-m", "--mode"]).map(|m| m.to_ascii_lowercase());
            matches!(mode.as_deref(), Some("off") | Some("disk"))
                .then_some("rtcwake -m off/disk powers the machine off now")
        }
        "kexec" => a
            .iter()
            .any(|s| s == "-e" || s == "--exec" || s == "-f" || s == "--force")
            .then_some("kexec jumps into another kernel (an immediate reboot)"),
        "openrc-shutdown" => a
            .iter()
            .any(|s| {
                matches!(
                    s.as_str(),
                    "-p" | "-r" | "-H" | "-k" | "--poweroff" | "--reboot" | "--halt" | "--kexec"
                )
            })
            .then_some("openrc-shutdown powers off or reboots"),
        "xfce4-session-logout" | "gnome-session-quit" | "lxqt-leave" => a
            .iter()
            .any(|s| s.contains("halt") || s.contains("reboot") || s.contains("power"))
            .then_some("desktop session powers off or reboots"),
        "service" | "invoke-rc.d" | "rc-service" => {
            let unit = a.iter().find(|s| !s.starts_with('-'));
            unit.is_some_and(|u| matches!(u.as_str(), "halt" | "reboot" | "poweroff" | "sendsigs"))
                .then_some("runs the halt/reboot init script")
        }
        _ if e
            .argv
            .first()
            .is_some_and(|p| p.contains("/init.d/") || p.contains("/rc.d/")) =>
        {
            matches!(
                n,
                "halt" | "reboot" | "poweroff" | "sendsigs" | "umountroot"
            )
            .then_some("runs the halt/reboot init script")
        }
        _ => None,
    }
}

fn f_net_down(_: &RuleCtx, _: usize, e: &Exec) -> Option<&'static str> {
    if !matches!(
        e.name.as_str(),
        "ip" | "ifconfig" | "ifdown" | "nmcli" | "route" | "rfkill" | "networksetup" | "netsh"
    ) {
        return None;
    }
    let a = args_lc(e);
    let has = |w: &str| a.iter().any(|s| s == w);
    match e.name.as_str() {
        "ip" => {
            let obj = a.iter().find(|s| !s.starts_with('-')).map(|s| s.as_str());
            match obj {
                Some("link" | "l") if has("set") && has("down") => {
                    Some("ip link set ... down takes a network interface down")
                }
                Some("addr" | "address" | "a") if has("flush") || has("del") || has("delete") => {
                    Some("removes the addresses of a network interface")
                }
                Some("route" | "r" | "ro")
                    if has("flush")
                        || ((has("del") || has("delete"))
                            && (has("default") || has("0.0.0.0/0"))) =>
                {
                    Some("removes the default route or flushes the routing table")
                }
                _ => None,
            }
        }
        "ifconfig" => has("down").then_some("ifconfig ... down takes a network interface down"),
        "ifdown" => (!has("--no-act") && !has("-n") && !has("--help"))
            .then_some("ifdown takes a network interface down"),
        "nmcli" => {
            let w = words_lc(e);
            let first = w.first().map(|s| s.as_str());
            let verb = w.get(1).map(|s| s.as_str());
            match (first, verb) {
                (Some("networking" | "n"), Some("off")) => Some("nmcli turns networking off"),
                (Some("radio" | "r"), _) if w.iter().any(|s| s == "off") => {
                    Some("nmcli turns a radio (wifi, wwan) off")
                }
                (Some("device" | "dev" | "d"), Some("disconnect" | "down" | "delete")) => {
                    Some("nmcli disconnects a network device")
                }
                (Some("connection" | "con" | "c"), Some("down" | "delete")) => {
                    Some("nmcli takes a connection down")
                }
                _ => None,
            }
        }
        "route" => ((has("del") || has("delete")) && (has("default") || has("0.0.0.0"))
            || has("flush"))
        .then_some("removes the default route or flushes the routing table"),
        "rfkill" => has("block").then_some("rfkill blocks wireless devices"),
        "networksetup" => (a.iter().any(|s| {
            s == "-setairportpower" || s == "-setnetworkserviceenabled" || s == "-setv4off"
        }) && (has("off") || a.iter().any(|s| s == "-setv4off")))
        .then_some("networksetup turns a network service off"),
        "netsh" => (has("interface")
            && (has("disable") || has("admin=disable") || has("disabled")))
        .then_some("netsh disables a network interface"),
        _ => None,
    }
}

fn f_firewall(_: &RuleCtx, _: usize, e: &Exec) -> Option<&'static str> {
    let a = &e.argv;
    let has = |w: &str| tail(a).iter().any(|s| s == w);
    let has_ci = |w: &str| tail(a).iter().any(|s| s.eq_ignore_ascii_case(w));
    match e.name.as_str() {
        "iptables" | "ip6tables" | "iptables-legacy" | "iptables-nft" | "ip6tables-legacy"
        | "ip6tables-nft" | "ebtables" | "arptables" => {
            // case matters: -P policy / -p protocol, -F flush / -f fragment
            let short = |c: char| {
                tail(a)
                    .iter()
                    .any(|w| w.starts_with('-') && !w.starts_with("--") && w[1..].contains(c))
            };
            if (short('P') || has("--policy")) && has_ci("ACCEPT") {
                return Some("sets a firewall chain's default policy to ACCEPT");
            }
            if short('F') || has("--flush") || short('X') || has("--delete-chain") {
                return Some("flushes or deletes firewall rules");
            }
            let inserts = short('I') || short('A') || has("--insert") || has("--append");
            let target =
                opt_val(a, &["-j", "--jump"]).is_some_and(|t| t.eq_ignore_ascii_case("accept"));
            let matcher = tail(a).iter().any(|w| {
                matches!(
                    w.as_str(),
                    "-p" | "--protocol"
                        | "-s"
                        | "--source"
                        | "-d"
                        | "--destination"
                        | "-i"
                        | "--in-interface"
                        | "-o"
                        | "--out-interface"
                        | "-m"
                        | "--match"
                        | "--dport"
                        | "--sport"
                )
            });
            (inserts && target && !matcher).then_some("adds a rule that accepts all traffic")
        }
        "nft" => {
            let t = lc(&tail(a).join(" "));
            (t.contains("flush ruleset")
                || t.contains("flush table")
                || t.contains("flush chain")
                || t.contains("delete table")
                || t.contains("policy accept"))
            .then_some("nft flushes the ruleset or opens a chain's policy")
        }
        "ufw" => {
            let w = words_lc(e);
            (w.first().is_some_and(|v| v == "disable" || v == "reset")
                || (w.first().is_some_and(|v| v == "default") && w.iter().any(|v| v == "allow")))
            .then_some("ufw disables the firewall or allows by default")
        }
        "firewall-cmd" => {
            let t = lc(&tail(a).join(" "));
            (t.contains("--set-default-zone=trusted")
                || t.contains("--set-default-zone trusted")
                || t.contains("--set-target=accept")
                || t.contains("0.0.0.0/0")
                || t.contains("--add-port=0-65535")
                || t.contains("--add-port=1-65535"))
            .then_some("firewalld trusts every source or opens every port")
        }
        "pfctl" => (has("-d") || (has("-F") && has_ci("all")))
            .then_some("pfctl disables the packet filter or flushes it"),
        "netsh" => {
            let t = lc(&tail(a).join(" "));
            ((t.contains("advfirewall") && t.contains("state off"))
                || (t.contains("firewall")
                    && (t.contains("opmode disable") || t.contains("mode=disable")))
                || (t.contains("advfirewall") && t.contains(" reset")))
            .then_some("netsh turns the Windows firewall off")
        }
        "socketfilterfw" => (a
            .windows(2)
            .any(|w| w[0] == "--setglobalstate" && w[1].eq_ignore_ascii_case("off")))
        .then_some("turns the macOS application firewall off"),
        "defaults" => {
            let t = lc(&tail(a).join(" "));
            (t.contains("write")
                && t.contains("com.apple.alf")
                && t.contains("globalstate")
                && a.last().is_some_and(|v| v == "0"))
            .then_some("turns the macOS firewall off")
        }
        _ => None,
    }
}

static LOG_DAEMON: Lazy<Regex> = Lazy::new(|| {
    Regex::new(r"^(auditd|audit|rsyslog|syslog|syslog-ng|systemd-journald|journald|auditbeat|wazuh-agent|osqueryd|falco)(\.service)?$")
        .expect("log daemons")
});

fn f_audit(ctx: &RuleCtx, i: usize, e: &Exec) -> Option<&'static str> {
    let named = matches!(
        e.name.as_str(),
        "auditctl"
            | "systemctl"
            | "service"
            | "rc-service"
            | "launchctl"
            | "journalctl"
            | "wevtutil"
            | "auditpol"
    );
    let a = if named { args_lc(e) } else { Vec::new() };
    match e.name.as_str() {
        "auditctl" => {
            let off = e.argv.windows(2).any(|w| w[0] == "-e" && w[1] == "0")
                || e.argv.iter().any(|w| w == "-e0" || w == "-D");
            return off.then_some("auditctl disables auditing or deletes every audit rule");
        }
        "systemctl" | "service" | "rc-service" | "launchctl" => {
            let stops = a.iter().any(|s| {
                matches!(
                    s.as_str(),
                    "stop" | "disable" | "mask" | "kill" | "unload" | "bootout"
                )
            });
            if stops && a.iter().any(|s| LOG_DAEMON.is_match(s)) {
                return Some("stops the audit or logging daemon");
            }
        }
        "journalctl" if a.iter().any(|s| s.starts_with("--vacuum-")) => {
            return Some("journalctl --vacuum deletes the system journal");
        }
        "wevtutil" if a.first().is_some_and(|s| s == "cl" || s == "clear-log") => {
            return Some("wevtutil clears a Windows event log");
        }
        "auditpol"
            if a.iter()
                .any(|s| s == "/clear" || s == "/remove" || s.contains("disable")) =>
        {
            return Some("auditpol clears or disables Windows audit policy");
        }
        _ => {}
    }
    ctx.targets[i]
        .iter()
        .any(|(p, k)| {
            *k != WriteKind::Append && *k != WriteKind::Create && {
                let n = norm_path(p);
                n == "/var/log"
                    || n.starts_with("/var/log/")
                    || n == "/var/run/utmp"
                    || n == "/run/utmp"
                    || n.starts_with("/var/account")
            }
        })
        .then_some("deletes or rewrites system logs")
}

const HISTORY_FILES: &[&str] = &[
    ".bash_history",
    ".zsh_history",
    ".history",
    ".sh_history",
    ".ksh_history",
    ".python_history",
    ".mysql_history",
    ".psql_history",
    ".node_repl_history",
    ".sqlite_history",
    ".rediscli_history",
    ".lesshst",
    "fish_history",
    "consolehost_history.txt",
];

fn f_history(ctx: &RuleCtx, i: usize, e: &Exec) -> Option<&'static str> {
    let a = &e.argv;
    match e.name.as_str() {
        "history"
            if tail(a)
                .iter()
                .any(|w| (w.starts_with('-') && w.contains('c')) || w == "-w" && a.len() > 2)
                && !tail(a)
                    .iter()
                    .all(|w| w.chars().all(|c| c.is_ascii_digit())) =>
        {
            return Some("history -c wipes the shell history");
        }
        "unset" if tail(a).iter().any(|w| w == "HISTFILE") => {
            return Some("unset HISTFILE stops recording shell history");
        }
        "set" if a.windows(2).any(|w| w[0] == "+o" && w[1] == "history") => {
            return Some("set +o history stops recording shell history");
        }
        _ => {}
    }
    ctx.targets[i]
        .iter()
        .any(|(p, k)| {
            *k != WriteKind::Append && *k != WriteKind::Create && {
                let n = p.to_lowercase();
                let base = n.rsplit(['/', '\\']).next().unwrap_or("");
                HISTORY_FILES.contains(&base)
            }
        })
        .then_some("deletes or overwrites a shell history file")
}

fn f_root_account(_: &RuleCtx, _: usize, e: &Exec) -> Option<&'static str> {
    let a = &e.argv;
    match e.name.as_str() {
        "useradd" | "adduser" | "usermod" | "pw" | "luseradd" => {
            let uid0 = opt_vals(a, &["-u", "--uid"]).contains(&"0");
            uid0.then_some("creates or changes a user to uid 0 (a second root)")
        }
        "dscl" => {
            let t = lc(&tail(a).join(" "));
            ((t.contains("uniqueid") && a.last().is_some_and(|v| v == "0"))
                || (t.contains("/groups/admin")
                    && (t.contains("-append") || t.contains("-create"))))
            .then_some("dscl gives an account uid 0 or admin rights")
        }
        "dseditgroup" => {
            let t = lc(&tail(a).join(" "));
            (t.contains("admin") && t.contains("-a")).then_some("adds a user to the admin group")
        }
        "net" => {
            let t = lc(&tail(a).join(" "));
            (t.contains("localgroup") && t.contains("administrators") && t.contains("/add"))
                .then_some("adds a user to the Windows Administrators group")
        }
        _ => None,
    }
}

fn f_swapoff(_: &RuleCtx, _: usize, e: &Exec) -> Option<&'static str> {
    (e.name == "swapoff"
        && e.argv.len() > 1
        && !tail(&e.argv)
            .iter()
            .all(|w| matches!(w.as_str(), "--help" | "-h" | "--version" | "-V")))
    .then_some("swapoff turns swap off (memory pressure can kill processes)")
}

fn f_sysctl(_: &RuleCtx, _: usize, e: &Exec) -> Option<&'static str> {
    if e.name != "sysctl" {
        return None;
    }
    for w in tail(&e.argv) {
        let Some((k, v)) = w.split_once('=') else {
            continue;
        };
        let k = k
            .trim_start_matches('-')
            .replace('/', ".")
            .to_ascii_lowercase();
        let v = v.trim();
        let num = v.parse::<i64>().ok();
        let lowers = match k.as_str() {
            "kernel.randomize_va_space" => num.is_some_and(|n| n < 2),
            "kernel.kptr_restrict"
            | "kernel.dmesg_restrict"
            | "kernel.yama.ptrace_scope"
            | "kernel.unprivileged_bpf_disabled"
            | "fs.protected_symlinks"
            | "fs.protected_hardlinks"
            | "fs.protected_fifos"
            | "fs.protected_regular"
            | "vm.mmap_min_addr"
            | "net.ipv4.tcp_syncookies"
            | "kernel.kexec_load_disabled" => num == Some(0),
            "kernel.perf_event_paranoid" => num.is_some_and(|n| n < 2),
            "fs.suid_dumpable" => num.is_some_and(|n| n != 0),
            "kernel.sysrq" => num == Some(1),
            "kernel.core_pattern" => v.starts_with('|'),
            "kernel.modules_disabled" => false,
            _ => false,
        };
        if lowers {
            return Some("sysctl lowers a kernel security setting");
        }
    }
    None
}

// ---------------------------------------------------------------- vcs

fn broad_path(p: &str) -> bool {
    p == "."
        || p == ".."
        || p == "*"
        || p == ":/"
        || p.starts_with(":(")
        || p.starts_with(":/")
        || p.contains(['*', '?', '['])
        || p.ends_with('/')
        || p.contains(DYN)
}

fn f_git(_: &RuleCtx, _: usize, e: &Exec) -> Option<&'static str> {
    if e.name != "git" {
        return None;
    }
    let (i, sub) = git_sub(&e.argv)?;
    let rest = &e.argv[i + 1..];
    let dd = rest.iter().position(|a| a == "--");
    let opts = &rest[..dd.unwrap_or(rest.len())];
    let sf: String = opts
        .iter()
        .filter(|a| a.starts_with('-') && !a.starts_with("--"))
        .map(|a| &a[1..])
        .collect();
    let has = |l: &str| {
        opts.iter()
            .any(|a| a == l || a.strip_prefix(l).is_some_and(|r| r.starts_with('=')))
    };
    // operands, skipping values of the options that take one
    let vals: &[&str] = match sub {
        "checkout" => &["-b", "-B", "--orphan", "--conflict", "--pathspec-from-file"],
        "restore" => &["-s", "--source", "--conflict", "--pathspec-from-file"],
        "switch" => &["-c", "-C", "--create", "--force-create", "--orphan"],
        "push" => &["-o", "--push-option", "--repo", "--receive-pack", "--exec"],
        "clean" => &["-e", "--exclude"],
        _ => &[],
    };
    let mut ops: Vec<&str> = Vec::new();
    let mut k = 0;
    while k < rest.len() {
        let a = rest[k].as_str();
        if Some(k) == dd {
            ops.extend(rest[k + 1..].iter().map(|s| s.as_str()));
            break;
        }
        if a.starts_with('-') && a.len() > 1 {
            k += if vals.contains(&a) { 2 } else { 1 };
            continue;
        }
        ops.push(a);
        k += 1;
    }
    let paths: &[String] = match dd {
        Some(p) => &rest[p + 1..],
        None => &[],
    };
    match sub {
        "push" => {
            if has("--dry-run") || sf.contains('n') {
                return None;
            }
            if sf.contains('f')
                || has("--force")
                || has("--force-with-lease")
                || has("--force-if-includes")
            {
                return Some("git push --force overwrites history on the remote");
            }
            if has("--mirror") {
                return Some("git push --mirror overwrites and deletes every ref on the remote");
            }
            if has("--delete") || sf.contains('d') {
                return Some("git push --delete removes branches or tags on the remote");
            }
            if has("--prune") {
                return Some("git push --prune deletes remote refs that have no local counterpart");
            }
            if ops.iter().skip(1).any(|a| a.starts_with('+')) {
                return Some("a +refspec force-overwrites remote refs");
            }
            if ops
                .iter()
                .skip(1)
                .any(|a| a.starts_with(':') && a.len() > 1)
            {
                return Some("an empty-source refspec (:ref) deletes remote refs");
            }
            None
        }
        "reset" => {
            if has("--hard") {
                Some("git reset --hard discards every uncommitted change")
            } else if has("--merge") || has("--keep") {
                Some("git reset --merge/--keep moves the branch and rewrites working-tree files")
            } else {
                None
            }
        }
        "clean" => ((sf.contains('f') || has("--force")) && !sf.contains('n') && !has("--dry-run"))
            .then_some("git clean -f deletes untracked files (with -x also ignored ones)"),
        "checkout" => {
            if sf.contains('f') || has("--force") {
                return Some("git checkout --force discards local changes");
            }
            if has("--pathspec-from-file") {
                return Some("git checkout of listed paths overwrites their local changes");
            }
            if sf.contains('b') || sf.contains('B') || has("--orphan") {
                return None;
            }
            let revision = dd.is_some() && ops.len() > paths.len();
            if (dd.is_some() && (revision || paths.iter().any(|p| broad_path(p))))
                || (dd.is_none() && ops.iter().any(|p| broad_path(p)))
            {
                return Some("git checkout of paths overwrites their uncommitted changes");
            }
            None
        }
        "restore" => {
            let worktree =
                sf.contains('W') || has("--worktree") || !(sf.contains('S') || has("--staged"));
            if !worktree {
                return None;
            }
            (has("--source")
                || sf.contains('s')
                || has("--pathspec-from-file")
                || ops.iter().any(|p| broad_path(p)))
            .then_some("git restore overwrites uncommitted changes in the working tree")
        }
        "switch" => (has("--discard-changes") || has("--force") || sf.contains('f'))
            .then_some("git switch --discard-changes/--force throws away local changes"),
        "worktree" => (ops.first().is_some_and(|s| *s == "remove")
            && (sf.contains('f') || has("--force")))
        .then_some("git worktree remove --force deletes a worktree with its changes"),
        "rm" => {
            if has("--cached") || has("--dry-run") || sf.contains('n') {
                return None;
            }
            if sf.contains('f') || has("--force") {
                return Some("git rm -f deletes files even with uncommitted changes");
            }
            ((sf.contains('r') || has("-r")) && ops.iter().any(|p| broad_path(p)))
                .then_some("git rm -r deletes a whole tree from the working copy")
        }
        "branch" => {
            if sf.contains('D')
                || ((has("--delete") || sf.contains('d')) && (has("--force") || sf.contains('f')))
            {
                Some("git branch -D deletes a branch even if it is not merged")
            } else if sf.contains('M')
                || sf.contains('C')
                || ((has("--move") || has("--copy")) && has("--force"))
            {
                Some("git branch -M/-C overwrites an existing branch")
            } else {
                None
            }
        }
        "stash" => ops
            .first()
            .is_some_and(|s| *s == "clear" || *s == "drop")
            .then_some("git stash clear/drop deletes stashed work"),
        "filter-branch" | "filter-repo" => Some("rewrites the whole repository history"),
        "reflog" => ops
            .first()
            .is_some_and(|s| *s == "expire" || *s == "delete")
            .then_some("git reflog expire/delete drops the safety net for lost commits"),
        "update-ref" => sf
            .contains('d')
            .then_some("git update-ref -d deletes a ref"),
        "gc" => rest
            .iter()
            .any(|a| a.starts_with("--prune=now") || a == "--prune=all")
            .then_some("git gc --prune=now deletes unreachable commits at once"),
        _ => None,
    }
}

fn f_vcs(_: &RuleCtx, _: usize, e: &Exec) -> Option<&'static str> {
    if !matches!(
        e.name.as_str(),
        "hg" | "chg" | "svn" | "bzr" | "brz" | "fossil" | "jj"
    ) {
        return None;
    }
    let a = &e.argv;
    let dry = dry_run(e)
        || a.iter()
            .any(|w| w == "--print" || w == "-p" || w == "--print0");
    let has = |w: &str| {
        tail(a)
            .iter()
            .any(|s| s == w || s.starts_with(&format!("{w}=")))
    };
    match e.name.as_str() {
        "hg" | "chg" => {
            let mut i = 1;
            while i < a.len() && a[i].starts_with('-') {
                i += if matches!(a[i].as_str(), "-R" | "--repository" | "--cwd" | "--config") {
                    2
                } else {
                    1
                };
            }
            let sub = a.get(i).map(|s| s.as_str())?;
            if dry {
                return None;
            }
            match sub {
                "strip" | "debugstrip" | "prune" | "obsolete" => {
                    Some("hg strip/prune removes changesets from the repository")
                }
                "purge" | "clean" => {
                    Some("hg purge deletes untracked (and with --all, ignored) files")
                }
                "revert" => Some("hg revert discards uncommitted changes"),
                "update" | "up" | "checkout" | "co" if has("--clean") || has("-C") => {
                    Some("hg update --clean discards uncommitted changes")
                }
                "rollback" => Some("hg rollback undoes the last transaction"),
                "push" if has("--force") || has("-f") => {
                    Some("hg push --force creates remote heads")
                }
                _ => None,
            }
        }
        "svn" => {
            let sub = first_operand(a)?;
            if dry {
                return None;
            }
            let ops = operands(
                a,
                &[
                    "-m",
                    "--message",
                    "--depth",
                    "-r",
                    "--revision",
                    "-F",
                    "--file",
                ],
            );
            match sub {
                "revert" => (has("-R")
                    || has("--recursive")
                    || opt_val(a, &["--depth"]).is_some_and(|d| d == "infinity")
                    || ops.iter().skip(1).any(|p| broad_path(p)))
                .then_some("svn revert discards uncommitted changes in a tree"),
                "delete" | "del" | "remove" | "rm" => ops
                    .iter()
                    .skip(1)
                    .any(|p| p.contains("://"))
                    .then_some("svn delete of a URL removes it on the server (a commit)"),
                "cleanup" => (has("--remove-unversioned") || has("--remove-ignored"))
                    .then_some("svn cleanup --remove-unversioned deletes unversioned files"),
                _ => None,
            }
        }
        "bzr" | "brz" => {
            let sub = first_operand(a)?;
            (!dry && matches!(sub, "revert" | "uncommit" | "clean-tree"))
                .then_some("bzr revert/uncommit/clean-tree discards work")
        }
        "fossil" => {
            let sub = first_operand(a)?;
            (!dry && matches!(sub, "revert" | "clean" | "purge"))
                .then_some("fossil revert/clean discards work")
        }
        "jj" => {
            let sub = first_operand(a)?;
            matches!(sub, "abandon" | "restore").then_some("jj abandon/restore discards changes")
        }
        _ => None,
    }
}

// ---------------------------------------------------------------- catastrophic

fn f_perm_root(_: &RuleCtx, _: usize, e: &Exec) -> Option<&'static str> {
    let a = &e.argv;
    match e.name.as_str() {
        "chmod" | "chown" | "chgrp" | "setfacl" | "chattr" | "chcon" => {
            let rec = short_flags(a).contains('R') || has_long(a, "--recursive");
            if !rec {
                return None;
            }
            let ops = operands(
                a,
                &[
                    "--reference",
                    "--from",
                    "-m",
                    "-x",
                    "-M",
                    "-X",
                    "--modify",
                    "--remove",
                ],
            );
            let skip = usize::from(
                matches!(
                    e.name.as_str(),
                    "chmod" | "chown" | "chgrp" | "chattr" | "chcon"
                ) && !has_long(a, "--reference"),
            );
            ops.iter()
                .skip(skip)
                .any(|t| is_root_tree(&at_cwd(e, t)))
                .then_some("recursively changes permissions or ownership of the root filesystem or a system tree")
        }
        "find" => {
            let limited = a.iter().any(|w| {
                matches!(
                    w.as_str(),
                    "-maxdepth"
                        | "-name"
                        | "-iname"
                        | "-path"
                        | "-ipath"
                        | "-regex"
                        | "-newer"
                        | "-mtime"
                        | "-user"
                )
            });
            let changes = a.windows(2).any(|w| {
                matches!(w[0].as_str(), "-exec" | "-execdir" | "-ok" | "-okdir")
                    && matches!(
                        cmd_name(&w[1]).as_str(),
                        "chmod" | "chown" | "chgrp" | "setfacl"
                    )
            });
            (changes
                && !limited
                && tail(a)
                    .iter()
                    .take_while(|w| !w.starts_with('-') && *w != "!" && *w != "(")
                    .any(|p| is_root_tree(&at_cwd(e, p))))
            .then_some(
                "find applies chmod/chown to every file of the root filesystem or a system tree",
            )
        }
        "icacls" | "takeown" | "cacls" => {
            let rec = tail(a).iter().any(|w| {
                let l = w.to_ascii_lowercase();
                l == "/t" || l == "/r"
            });
            let target = if e.name == "takeown" {
                opt_val(a, &["/F", "/f"]).map(|s| s.to_string())
            } else {
                a.get(1).cloned()
            };
            (rec && target.is_some_and(|t| is_root_tree(&norm_path(&t)))).then_some(
                "recursively changes ACLs or ownership of a drive or the Windows directory",
            )
        }
        _ => None,
    }
}

const ESSENTIAL: &[&str] = &[
    "libc6",
    "libc-bin",
    "libc6-amd64",
    "glibc",
    "glibc-common",
    "glibc-minimal-langpack",
    "musl",
    "systemd",
    "systemd-sysv",
    "systemd-libs",
    "init",
    "init-system-helpers",
    "sysvinit",
    "sysvinit-core",
    "upstart",
    "openrc",
    "runit-init",
    "apt",
    "dpkg",
    "rpm",
    "yum",
    "dnf",
    "pacman",
    "apk-tools",
    "zypper",
    "coreutils",
    "bash",
    "util-linux",
    "base-files",
    "base-passwd",
    "filesystem",
    "login",
];

fn f_essential_pkg(ctx: &RuleCtx, i: usize, e: &Exec) -> Option<&'static str> {
    if !m_pkg_remove(ctx, i, e) {
        return None;
    }
    tail(&e.argv)
        .iter()
        .filter(|w| !w.starts_with('-'))
        .any(|w| {
            let p = w.to_ascii_lowercase();
            let p = p.split([':', '=']).next().unwrap_or(&p);
            ESSENTIAL.contains(&p)
        })
        .then_some(
            "removes the C library, init system, core utilities or the package manager itself",
        )
}

static CORE_FILE: Lazy<Regex> = Lazy::new(|| {
    Regex::new(r"^/(usr/)?lib(32|64|x32)?/([^/]+/)?(libc\.so(\.\d+)?|libc-[\d.]+\.so|ld-linux[^/]*\.so[^/]*|ld-musl[^/]*|libc\.musl[^/]*)$|^/(usr/)?s?bin/(init|systemd|apt|apt-get|dpkg|rpm|yum|dnf|pacman|apk|zypper|sh|bash)$|^/(usr/)?lib/systemd(/systemd)?$|^/usr/lib/(x86_64|aarch64)-linux-gnu$|^/lib/(x86_64|aarch64)-linux-gnu$")
        .expect("core file regex")
});

fn f_core_file(ctx: &RuleCtx, i: usize, e: &Exec) -> Option<&'static str> {
    ctx.targets[i]
        .iter()
        .any(|(p, k)| *k != WriteKind::Create && CORE_FILE.is_match(&at_cwd(e, p)))
        .then_some("destroys the C library, dynamic loader, init or package manager: the system stops working")
}

fn listing_of(x: &Exec, e: &Exec) -> bool {
    x.name == e.name
        && !std::ptr::eq(x, e)
        && tail(&x.argv).iter().any(|w| {
            let w = w.to_ascii_lowercase();
            w == "ls"
                || w == "list"
                || w == "get"
                || w.starts_with("describe-")
                || w.starts_with("list-")
        })
}

fn f_account_wide(ctx: &RuleCtx, i: usize, e: &Exec) -> Option<&'static str> {
    if !m_cloud_destroy(ctx, i, e) {
        return None;
    }
    let a = args_lc(e);
    if matches!(e.name.as_str(), "kubectl" | "oc") {
        let all = a.iter().any(|s| s == "--all");
        let all_ns = a.iter().any(|s| s == "--all-namespaces" || s == "-a");
        let ns = a
            .iter()
            .any(|s| matches!(s.as_str(), "ns" | "namespace" | "namespaces"));
        if (all && (ns || all_ns)) || (all_ns && a.iter().any(|s| s == "all")) {
            return Some("deletes every namespace or every resource in every namespace");
        }
    }
    let computed = e.bulk || tail(&e.argv).iter().any(|w| w.contains(DYN));
    (computed && ctx.analysis.execs.iter().any(|x| listing_of(x, e)))
        .then_some("deletes every resource that a listing of the account returns")
}

static DATASTORE_URL: Lazy<Regex> = Lazy::new(|| {
    Regex::new(r"(?i)(:(9200|9201|5984|8983|6333|6334|8086|8500|2379|7474|8529|8123|19530|8108|7700|8091|27017)\b|/_all\b|/_data_stream|/_index_template|/_snapshot|/collections/|/indexes/|/v1/kv/|/v2/keys/|/solr/|/api/v2/buckets|elastic|opensearch|couch|solr|qdrant|weaviate|pinecone|meili|typesense|influx|consul|etcd|milvus|chroma|neo4j|arangodb|clickhouse|firebaseio\.com|firestore\.googleapis|storage\.googleapis\.com|\.s3[.-]|s3\.amazonaws\.com|blob\.core\.windows\.net|r2\.cloudflarestorage|algolia)")
        .expect("datastore url")
});

fn http_delete_urls(e: &Exec) -> Option<Vec<&str>> {
    let a = &e.argv;
    match e.name.as_str() {
        "curl" => {
            let m = opt_val(a, &["-X", "--request"])?;
            if !m.eq_ignore_ascii_case("delete") {
                return None;
            }
            Some(
                operands(
                    a,
                    &[
                        "-X",
                        "--request",
                        "-H",
                        "--header",
                        "-d",
                        "--data",
                        "-u",
                        "--user",
                        "-o",
                        "--output",
                        "-A",
                        "-e",
                        "-b",
                        "-c",
                        "-T",
                        "-F",
                        "-x",
                        "--proxy",
                        "-w",
                        "-m",
                        "--max-time",
                        "--json",
                    ],
                )
                .into_iter()
                .collect(),
            )
        }
        "wget" => {
            let m = opt_val(a, &["--method"])?;
            m.eq_ignore_ascii_case("delete")
                .then(|| operands(a, &["--method", "--header", "-O", "-o"]))
        }
        "http" | "https" | "xh" | "xhs" | "httpie" => {
            let ops = operands(a, &["-a", "--auth", "-o", "--output"]);
            (ops.first()
                .is_some_and(|m| m.eq_ignore_ascii_case("delete")))
            .then(|| ops[1..].to_vec())
        }
        _ => None,
    }
}

fn f_datastore_all(_: &RuleCtx, _: usize, e: &Exec) -> Option<&'static str> {
    if let Some(urls) = http_delete_urls(e) {
        let all = urls.iter().any(|u| {
            let path = u.split('?').next().unwrap_or(u);
            let last = path.trim_end_matches('/').rsplit('/').next().unwrap_or("");
            (last == "_all" || last == "*") && path.contains('/')
        });
        return all.then_some("HTTP DELETE of _all / * deletes every index of the data store");
    }
    let a = &e.argv;
    match e.name.as_str() {
        "etcdctl" => {
            let del = tail(a).iter().any(|w| w == "del" || w == "rm");
            let ops = operands(a, &[]);
            let key = ops.get(1).copied().unwrap_or("");
            (del && (has_long(a, "--prefix") || has_long(a, "--from-key"))
                && (key.is_empty() || key == "/" || key == "\0"))
                .then_some("etcdctl deletes every key")
        }
        "consul" => {
            let ops = operands(a, &[]);
            (ops.len() <= 3
                && ops.starts_with(&["kv", "delete"])
                && a.iter().any(|w| w == "-recurse")
                && ops.get(2).is_none_or(|k| k.is_empty() || *k == "/"))
            .then_some("consul kv delete -recurse of the root deletes every key")
        }
        _ => None,
    }
}

fn f_disk_erase(_: &RuleCtx, _: usize, e: &Exec) -> Option<&'static str> {
    if e.name != "diskutil" && e.name != "asr" {
        return None;
    }
    let a = args_lc(e);
    match e.name.as_str() {
        "diskutil" => {
            let verb = a.iter().find(|s| !s.starts_with('-')).map(|s| s.as_str())?;
            let second = a
                .iter()
                .filter(|s| !s.starts_with('-'))
                .nth(1)
                .map(|s| s.as_str());
            let erase = matches!(
                verb,
                "erasedisk"
                    | "erasevolume"
                    | "zerodisk"
                    | "randomdisk"
                    | "secureerase"
                    | "partitiondisk"
                    | "reformat"
                    | "splitpartition"
                    | "mergepartitions"
            ) || (matches!(
                verb,
                "apfs" | "ap" | "cs" | "corestorage" | "appleraid" | "ar"
            ) && second
                .is_some_and(|s| s.starts_with("delete") || s.starts_with("erase")));
            erase.then_some(
                "diskutil erases, zeroes or repartitions a disk or deletes an APFS container",
            )
        }
        "asr" => a
            .iter()
            .any(|s| s == "--erase" || s == "-erase")
            .then_some("asr restore --erase overwrites a whole volume"),
        _ => None,
    }
}

// ---------------------------------------------------------------- exfiltration

fn f_secret_exfil(_: &RuleCtx, _: usize, e: &Exec) -> Option<&'static str> {
    if e.secret_args.is_empty() {
        return None;
    }
    let a = &e.argv;
    let prev = |k: usize| if k >= 1 { a[k - 1].as_str() } else { "" };
    match e.name.as_str() {
        "nslookup" | "dig" | "host" | "drill" | "ping" | "ping6" | "nc" | "ncat" | "netcat"
        | "socat" | "telnet" | "traceroute" | "whois" => {
            Some("puts a secret variable into a DNS name or raw network connection")
        }
        "curl" => {
            const SAFE: &[&str] = &[
                "-H",
                "--header",
                "-u",
                "--user",
                "--oauth2-bearer",
                "-U",
                "--proxy-user",
                "-E",
                "--cert",
                "--key",
                "--pass",
                "-b",
                "--cookie",
                "--proxy-header",
                "--aws-sigv4",
                "-K",
                "--config",
                "-o",
                "--output",
            ];
            e.secret_args
                .iter()
                .any(|&k| {
                    let w = a[k].as_str();
                    let attached_safe = w.starts_with("-H")
                        || w.starts_with("--header=")
                        || w.starts_with("-u")
                        || w.starts_with("--user=")
                        || w.starts_with("--oauth2-bearer=");
                    !SAFE.contains(&prev(k)) && !attached_safe
                })
                .then_some("puts a secret variable into the URL or request body (curl)")
        }
        "wget" => e
            .secret_args
            .iter()
            .any(|&k| {
                let w = a[k].as_str();
                let safe = [
                    "--header",
                    "--user",
                    "--password",
                    "--http-user",
                    "--http-password",
                    "--ftp-user",
                    "--ftp-password",
                    "--proxy-user",
                    "--proxy-password",
                ]
                .iter()
                .any(|o| prev(k) == *o || w.starts_with(&format!("{o}=")));
                !safe
            })
            .then_some("puts a secret variable into the URL or posted data (wget)"),
        "http" | "https" | "xh" | "xhs" | "httpie" => {
            static HEADER: Lazy<Regex> =
                Lazy::new(|| Regex::new(r"^[A-Za-z0-9_-]+:[^=]").expect("header item"));
            e.secret_args
                .iter()
                .any(|&k| {
                    let w = a[k].as_str();
                    !(HEADER.is_match(w)
                        || matches!(prev(k), "-a" | "--auth")
                        || w.starts_with("--auth="))
                })
                .then_some("puts a secret variable into the URL or request body (httpie)")
        }
        "aria2c" | "fetch" | "lwp-request" | "post" | "get" | "lynx" | "links" | "w3m" => {
            Some("sends a secret variable to a URL")
        }
        _ => None,
    }
}

/// ssh options that take a value (`-R` among them).
const SSH_VALS: &str = "BbcDEeFIiJLlmOoPpQRSWw";

fn f_tunnel(_: &RuleCtx, _: usize, e: &Exec) -> Option<&'static str> {
    let a = &e.argv;
    match e.name.as_str() {
        "ssh" | "autossh" => {
            let mut gateway = false;
            let mut forwards: Vec<(char, String)> = Vec::new();
            let mut i = 1;
            while i < a.len() {
                let w = a[i].as_str();
                if !w.starts_with('-') || w == "--" {
                    break;
                }
                let letters: Vec<char> = w[1..].chars().collect();
                let mut k = 0;
                while k < letters.len() {
                    let c = letters[k];
                    if c == 'g' {
                        gateway = true;
                    }
                    if SSH_VALS.contains(c) || (e.name == "autossh" && c == 'M') {
                        let rest: String = letters[k + 1..].iter().collect();
                        let v = if rest.is_empty() {
                            i += 1;
                            a.get(i).cloned().unwrap_or_default()
                        } else {
                            rest
                        };
                        forwards.push((c, v));
                        break;
                    }
                    k += 1;
                }
                i += 1;
            }
            for (c, v) in &forwards {
                let lv = v.to_ascii_lowercase();
                match c {
                    'R' => {
                        return Some(
                            "ssh -R opens a reverse tunnel: a remote port forwards into this machine",
                        );
                    }
                    'o' if lv.starts_with("remoteforward") => {
                        return Some("ssh RemoteForward opens a reverse tunnel into this machine");
                    }
                    'o' if lv.starts_with("gatewayports") && lv.contains("yes") => gateway = true,
                    'L' | 'D' => {
                        let parts: Vec<&str> = v.split(':').collect();
                        let bind =
                            if (*c == 'L' && parts.len() >= 4) || (*c == 'D' && parts.len() >= 2) {
                                Some(parts[0])
                            } else {
                                None
                            };
                        if let Some(b) = bind
                            && !loopback(b)
                        {
                            return Some(
                                "ssh forward bound to all interfaces exposes it to the network",
                            );
                        }
                        if gateway {
                            return Some("ssh -g lets other hosts connect to the forwarded port");
                        }
                    }
                    _ => {}
                }
            }
            (gateway && forwards.iter().any(|(c, _)| *c == 'L' || *c == 'D'))
                .then_some("ssh -g lets other hosts connect to the forwarded port")
        }
        "ngrok" => {
            let w = words_lc(e);
            w.first()
                .is_some_and(|v| matches!(v.as_str(), "http" | "tcp" | "tls" | "start" | "tunnel"))
                .then_some("ngrok publishes a local port on the internet")
        }
        "cloudflared" => {
            let w = words_lc(e);
            (w.first().is_some_and(|v| v == "tunnel")
                && (has_long(a, "--url") || w.get(1).is_some_and(|v| v == "run")))
            .then_some("cloudflared publishes a local service through a tunnel")
        }
        "lt" | "localtunnel" | "bore" | "frpc" | "pagekite" | "pagekite.py" | "zrok" | "expose" => {
            (a.len() > 1
                && !tail(a)
                    .iter()
                    .all(|w| w == "--help" || w == "--version" || w == "version"))
            .then_some("publishes a local port through a public tunnel")
        }
        "chisel" => tail(a)
            .iter()
            .any(|w| w.starts_with("R:"))
            .then_some("chisel opens a reverse port forward"),
        "socat" => {
            let listen = tail(a).iter().any(|w| {
                let l = w.to_ascii_lowercase();
                (l.starts_with("tcp-listen:")
                    || l.starts_with("tcp4-listen:")
                    || l.starts_with("tcp6-listen:")
                    || l.starts_with("udp-listen:"))
                    && !l.contains("bind=127.")
                    && !l.contains("bind=localhost")
                    && !l.contains("range=127.")
            });
            let fwd = tail(a).iter().any(|w| {
                let l = w.to_ascii_lowercase();
                l.starts_with("tcp:")
                    || l.starts_with("tcp4:")
                    || l.starts_with("tcp6:")
                    || l.starts_with("tcp-connect:")
                    || l.starts_with("unix-connect:")
                    || l.starts_with("openssl:")
                    || l.starts_with("unix-client:")
            });
            (listen && fwd)
                .then_some("socat listens on all interfaces and forwards to a local service")
        }
        "kubectl" | "oc" => {
            let pf = tail(a).iter().any(|w| w == "port-forward");
            (pf && opt_vals(a, &["--address"])
                .iter()
                .any(|v| v.split(',').any(|h| !loopback(h))))
            .then_some("kubectl port-forward on all interfaces exposes a cluster service")
        }
        "tailscale" => {
            let w = words_lc(e);
            (w.first().is_some_and(|v| v == "funnel")
                && !w
                    .get(1)
                    .is_some_and(|v| v == "status" || v == "reset" || v == "off"))
            .then_some("tailscale funnel publishes a local port on the internet")
        }
        "code" | "code-insiders" | "cursor" => {
            let w = words_lc(e);
            (w.first().is_some_and(|v| v == "tunnel")
                && !w.get(1).is_some_and(|v| {
                    matches!(
                        v.as_str(),
                        "status" | "kill" | "unregister" | "prune" | "user"
                    )
                }))
            .then_some("opens a remote tunnel into this machine")
        }
        "gh" => {
            let t = lc(&tail(a).join(" "));
            (t.contains("codespace") && t.contains("ports") && t.contains(":public"))
                .then_some("makes a codespace port public")
        }
        _ => None,
    }
}

/// A directory that must not be served to the network.
fn sensitive_dir(e: &Exec, d: &str) -> bool {
    if d.contains(DYN) {
        return false;
    }
    let p = at_cwd(e, d);
    is_critical(&p) || is_user_sensitive(&p) || is_system_path(&p)
}

fn f_file_server(ctx: &RuleCtx, _: usize, e: &Exec) -> Option<&'static str> {
    let a = &e.argv;
    let n = e.name.as_str();
    let served: Option<(String, Option<String>)> =
        if n.starts_with("python") || n == "py" || n == "pypy" {
            let m = a.iter().position(|w| w == "-m")?;
            let module = a.get(m + 1)?.as_str();
            if module != "http.server" && module != "SimpleHTTPServer" {
                return None;
            }
            let tail = &a[m + 1..];
            let dir = opt_val(tail, &["--directory", "-d"]).map(|s| s.to_string());
            let bind = opt_val(tail, &["--bind", "-b"]).map(|s| s.to_string());
            Some((dir.unwrap_or_else(|| ".".into()), bind))
        } else if n == "php" {
            let addr = opt_val(a, &["-S"])?;
            let host = addr.rsplit_once(':').map(|(h, _)| h).unwrap_or(addr);
            let dir = opt_val(a, &["-t"]).unwrap_or(".");
            Some((dir.to_string(), Some(host.to_string())))
        } else if matches!(
            n,
            "http-server"
                | "serve"
                | "live-server"
                | "httpster"
                | "static-server"
                | "sirv"
                | "miniserve"
                | "darkhttpd"
                | "updog"
        ) {
            let dir = if n == "updog" {
                opt_val(a, &["-d", "--directory"])
                    .unwrap_or(".")
                    .to_string()
            } else {
                operands(
                    a,
                    &[
                        "-p",
                        "--port",
                        "-a",
                        "--address",
                        "-i",
                        "--interfaces",
                        "-l",
                        "--listen",
                        "-c",
                        "--cache",
                        "-P",
                        "--proxy",
                    ],
                )
                .first()
                .copied()
                .unwrap_or(".")
                .to_string()
            };
            let bind = opt_val(
                a,
                &["-a", "--address", "-i", "--interfaces", "--addr", "--host"],
            )
            .map(|s| s.to_string());
            Some((dir, bind))
        } else if n == "httpd" && e.via.as_deref() == Some("busybox") {
            Some((opt_val(a, &["-h"]).unwrap_or(".").to_string(), None))
        } else if n == "ruby" && a.iter().any(|w| w == "-run") {
            let h = a.iter().position(|w| w == "httpd")?;
            let dir = a[h + 1..]
                .iter()
                .find(|w| !w.starts_with('-'))
                .map(|s| s.as_str())
                .unwrap_or(".");
            let bind = opt_val(a, &["--bind-address", "-b"]).map(|s| s.to_string());
            Some((dir.to_string(), bind))
        } else if n == "twistd" && a.iter().any(|w| w == "web") {
            Some((opt_val(a, &["--path"]).unwrap_or(".").to_string(), None))
        } else {
            None
        };
    let (dir, bind) = served?;
    if bind.as_deref().is_some_and(loopback) {
        return None;
    }
    if ctx.posture.is_some() && !sensitive_dir(e, &dir) {
        // in a posture: the workspace (its .env, .git, keys) on the network
        return Some(
            "file server reachable from the network serves the working directory (its .env, .git and keys included)",
        );
    }
    sensitive_dir(e, &dir)
        .then_some("file server reachable from the network serves the home directory, the root or a system tree")
}

// ---------------------------------------------------------------- data stores

fn empty_or_temp(p: &str) -> bool {
    if p.contains(DYN) {
        return true;
    }
    let n = norm_path(p).to_ascii_lowercase();
    n == "/tmp"
        || n.starts_with("/tmp/")
        || n.starts_with("/var/tmp")
        || n.starts_with("/dev/shm")
        || n.starts_with("/private/tmp")
        || n == "/dev/null"
        || n.rsplit('/').next().is_some_and(|b| b.contains("empty"))
}

fn f_sync_delete(_: &RuleCtx, _: usize, e: &Exec) -> Option<&'static str> {
    if !matches!(
        e.name.as_str(),
        "aws" | "gsutil" | "gcloud" | "rclone" | "azcopy" | "rsync" | "s3cmd" | "mc"
    ) || dry_run(e)
    {
        return None;
    }
    let a = &e.argv;
    let w = operands(
        a,
        &[
            "--exclude",
            "--include",
            "-x",
            "-e",
            "--rsh",
            "--filter",
            "--region",
            "--profile",
            "--storage-class",
            "-j",
            "--transfers",
            "--checkers",
            "--config",
        ],
    );
    let src_after = |verb: &str| -> Option<&str> {
        let p = w.iter().position(|x| *x == verb)?;
        w.get(p + 1).copied()
    };
    let hit = match e.name.as_str() {
        "aws" => has_long(a, "--delete") && src_after("sync").is_some_and(empty_or_temp),
        "gsutil" => {
            let d = tail(a)
                .iter()
                .any(|x| x.starts_with('-') && !x.starts_with("--") && x.contains('d'));
            d && src_after("rsync").is_some_and(empty_or_temp)
        }
        "gcloud" => {
            has_long(a, "--delete-unmatched-destination-objects")
                && src_after("rsync").is_some_and(empty_or_temp)
        }
        "rclone" => src_after("sync")
            .or_else(|| src_after("bisync"))
            .is_some_and(empty_or_temp),
        "azcopy" => {
            a.iter().any(|x| {
                x.eq_ignore_ascii_case("--delete-destination=true")
                    || x.eq_ignore_ascii_case("--delete-destination=prompt")
            }) && src_after("sync").is_some_and(empty_or_temp)
        }
        "rsync" => {
            a.iter().any(|x| x.starts_with("--del")) && {
                let ops = operands(
                    a,
                    &[
                        "-e",
                        "--rsh",
                        "--exclude",
                        "--include",
                        "-f",
                        "--filter",
                        "--backup-dir",
                        "--max-delete",
                    ],
                );
                ops.len() >= 2 && ops[..ops.len() - 1].iter().any(|s| empty_or_temp(s))
            }
        }
        "s3cmd" => has_long(a, "--delete-removed") && src_after("sync").is_some_and(empty_or_temp),
        "mc" => {
            (has_long(a, "--remove") || has_long(a, "--overwrite"))
                && src_after("mirror").is_some_and(empty_or_temp)
        }
        _ => false,
    };
    hit.then_some(
        "sync with delete from an empty or temporary source deletes everything at the destination",
    )
}

fn f_datastore(_: &RuleCtx, _: usize, e: &Exec) -> Option<&'static str> {
    if let Some(urls) = http_delete_urls(e) {
        return urls
            .iter()
            .any(|u| DATASTORE_URL.is_match(u))
            .then_some("HTTP DELETE against a data store API (index, collection, bucket or key)");
    }
    let a = &e.argv;
    let n = e.name.as_str();
    const NAMES: &[&str] = &[
        "curl",
        "dropdb",
        "dropuser",
        "pg_dropcluster",
        "mysqladmin",
        "mariadb-admin",
        "influx",
        "etcdctl",
        "consul",
        "redis-cli",
        "valkey-cli",
        "keydb-cli",
        "zkcli",
        "zkcli.sh",
        "zookeeper-shell",
        "vault",
        "firebase",
        "heroku",
        "rails",
        "rake",
        "php",
        "prisma",
        "sequelize",
        "sequelize-cli",
        "typeorm",
        "knex",
        "flyway",
        "liquibase",
        "alembic",
        "supabase",
        "mix",
        "dotnet",
        "docker",
        "podman",
        "docker-compose",
        "podman-compose",
        "mc",
        "s3cmd",
        "azcopy",
        "b2",
        "wrangler",
        "gsutil",
    ];
    if !NAMES.contains(&n) && !n.starts_with("python") {
        return None;
    }
    let al = args_lc(e);
    let has = |w: &str| al.iter().any(|s| s == w);
    if dry_run(e) {
        return None;
    }
    if n == "curl" && a.iter().any(|w| w.contains("_delete_by_query")) {
        return Some("Elasticsearch _delete_by_query deletes matching documents");
    }
    match n {
        "dropdb" | "dropuser" | "pg_dropcluster" | "dropdb.exe" => (!has("--help")
            && !has("--version"))
        .then_some("drops a PostgreSQL database, role or cluster"),
        "mysqladmin" | "mariadb-admin" => {
            has("drop").then_some("mysqladmin drop deletes a database")
        }
        "influx" => (has("delete") || (has("bucket") && has("delete")))
            .then_some("influx deletes a bucket or its data"),
        "etcdctl" => ((has("del") || has("rm"))
            && (has("--prefix")
                || has("--from-key")
                || al
                    .iter()
                    .any(|s| s.starts_with("--prefix=") || s.starts_with("--from-key="))))
        .then_some("etcdctl deletes every key under a prefix"),
        "consul" => (has("kv") && has("delete") && has("-recurse"))
            .then_some("consul kv delete -recurse deletes a key prefix"),
        "redis-cli" | "valkey-cli" | "keydb-cli" => ((e.bulk
            || e.stdin_from.is_some() && has("--pipe"))
            && al.iter().any(|s| s == "del" || s == "unlink"))
        .then_some("redis-cli deletes a computed set of keys (prefix delete)"),
        "zkcli" | "zkcli.sh" | "zookeeper-shell" => {
            (has("deleteall") || has("rmr")).then_some("ZooKeeper recursive delete")
        }
        "vault" => ((has("secrets") && has("disable"))
            || (has("kv") && has("metadata") && has("delete")))
        .then_some("vault disables a secrets engine or deletes all versions of a secret"),
        "firebase" => al
            .iter()
            .any(|s| s == "database:remove" || s == "firestore:delete")
            .then_some("firebase deletes database or Firestore data"),
        "heroku" => al
            .iter()
            .any(|s| s == "pg:reset" || s == "redis:reset")
            .then_some("heroku resets a database (all data deleted)"),
        "rails" | "rake" => al
            .iter()
            .any(|s| {
                matches!(
                    s.as_str(),
                    "db:drop"
                        | "db:reset"
                        | "db:purge"
                        | "db:schema:load"
                        | "db:migrate:reset"
                        | "db:drop:all"
                )
            })
            .then_some("drops or reloads the application database"),
        "php" if has("artisan") => al
            .iter()
            .any(|s| {
                matches!(
                    s.as_str(),
                    "migrate:fresh" | "migrate:reset" | "migrate:refresh" | "db:wipe"
                )
            })
            .then_some("artisan drops every table of the database"),
        _ if n.starts_with("python") && al.iter().any(|s| s.ends_with("manage.py")) => al
            .iter()
            .any(|s| matches!(s.as_str(), "flush" | "reset_db" | "reset_schema"))
            .then_some("manage.py flush deletes every row of the database"),
        "prisma" => ((has("migrate") && has("reset"))
            || (has("db") && has("push") && has("--force-reset")))
        .then_some("prisma resets the database (all data deleted)"),
        "sequelize" | "sequelize-cli" => has("db:drop").then_some("sequelize drops the database"),
        "typeorm" => has("schema:drop").then_some("typeorm drops the schema"),
        "knex" => {
            (has("migrate:rollback") && has("--all")).then_some("knex rolls back every migration")
        }
        "flyway" => has("clean").then_some("flyway clean drops every object in the schema"),
        "liquibase" => al
            .iter()
            .any(|s| s == "dropall" || s == "drop-all")
            .then_some("liquibase drops every object"),
        "alembic" => {
            (has("downgrade") && has("base")).then_some("alembic downgrades to an empty schema")
        }
        "supabase" => (has("db") && has("reset")).then_some("supabase resets the database"),
        "mix" => al
            .iter()
            .any(|s| s == "ecto.drop" || s == "ecto.reset")
            .then_some("ecto drops the database"),
        "dotnet" => {
            (has("ef") && has("database") && has("drop")).then_some("dotnet ef drops the database")
        }
        "docker" | "podman" | "docker-compose" | "podman-compose" => {
            let w = words_lc(e);
            let compose = n.ends_with("-compose") || w.first().is_some_and(|s| s == "compose");
            if compose
                && w.iter().any(|s| s == "down")
                && (a.iter().any(|x| x == "-v" || x == "--volumes"))
            {
                return Some("compose down -v deletes the project's volumes (its data)");
            }
            (w.first().is_some_and(|s| s == "system") && w.get(1).is_some_and(|s| s == "reset"))
                .then_some("system reset deletes every container, image and volume")
        }
        "mc" => ((has("rb") || has("rm")) && (has("--force") || has("--recursive") || has("-r")))
            .then_some("minio client deletes a bucket or its contents"),
        "s3cmd" => ((has("rb") || has("del") || has("rm"))
            && (has("--recursive") || has("-r") || has("rb")))
        .then_some("s3cmd deletes a bucket or its contents"),
        "azcopy" => ((has("rm") || has("remove"))
            && al.iter().any(|s| s.starts_with("--recursive")))
        .then_some("azcopy deletes a container's contents"),
        "b2" => al
            .iter()
            .any(|s| s == "delete-bucket" || (s == "rm" && has("--recursive")))
            .then_some("b2 deletes a bucket"),
        "wrangler" => (has("delete")
            && (has("r2") || has("kv") || has("d1") || has("kv:namespace")))
        .then_some("wrangler deletes a bucket, namespace or database"),
        "gsutil" => ((has("rm")
            && (has("-r")
                || has("-m") && has("-r")
                || al.iter().any(|s| s.starts_with('-') && s.contains('r'))))
            || has("rb"))
        .then_some("gsutil deletes a bucket or its contents"),
        _ => None,
    }
}

// ---------------------------------------------------------------- macOS

static SECURITY_AGENT: Lazy<Regex> = Lazy::new(|| {
    Regex::new(r"(?i)crowdstrike|falcon|sentinel|carbonblack|cbdefense|jamf|xprotect|com\.apple\.mrt|santa|osquery|littlesnitch|little snitch|objective-see|\blulu\b|malwarebytes|sophos|cylance|wdav|microsoft\.dlp|defender|tanium|elastic-?agent|eset|kaspersky|trendmicro|symantec|mcafee|bitdefender|cortex|cyberark|qualys|rapid7|wazuh|com\.apple\.(auditd|syspolicyd|security|trustd|amfid|alf|endpointsecurity)")
        .expect("security agents")
});

fn f_macos(_: &RuleCtx, _: usize, e: &Exec) -> Option<&'static str> {
    if !matches!(
        e.name.as_str(),
        "launchctl"
            | "systemctl"
            | "service"
            | "kextunload"
            | "kmutil"
            | "sc"
            | "fdesetup"
            | "csrutil"
            | "spctl"
            | "tmutil"
            | "nvram"
    ) {
        return None;
    }
    let a = args_lc(e);
    let has = |w: &str| a.iter().any(|s| s == w);
    match e.name.as_str() {
        "launchctl" | "systemctl" | "service" | "kextunload" | "kmutil" | "sc" => {
            let stops = a.iter().any(|s| {
                matches!(
                    s.as_str(),
                    "unload"
                        | "bootout"
                        | "disable"
                        | "remove"
                        | "stop"
                        | "kill"
                        | "mask"
                        | "delete"
                        | "config"
                )
            }) || e.name == "kextunload";
            (stops && tail(&e.argv).iter().any(|s| SECURITY_AGENT.is_match(s)))
                .then_some("unloads or stops a security agent (EDR, antivirus, audit)")
        }
        "fdesetup" => {
            has("disable").then_some("fdesetup disable turns FileVault disk encryption off")
        }
        "csrutil" => {
            (has("disable") || (has("authenticated-root") && has("disable")) || has("clear"))
                .then_some("csrutil disables System Integrity Protection")
        }
        "spctl" => a
            .iter()
            .any(|s| s == "--master-disable" || s == "--global-disable" || s == "--disable")
            .then_some("spctl disables Gatekeeper"),
        "tmutil" => a
            .first()
            .is_some_and(|s| {
                matches!(
                    s.as_str(),
                    "delete"
                        | "deletelocalsnapshots"
                        | "disable"
                        | "thinlocalsnapshots"
                        | "deleteinprogress"
                )
            })
            .then_some("tmutil deletes Time Machine backups or snapshots or turns backups off"),
        "nvram" => (has("-c") || has("-d")).then_some("nvram clears or deletes firmware variables"),
        _ => None,
    }
}

// ---------------------------------------------------------------- supply chain

fn remote_spec(s: &str) -> bool {
    let l = s.to_ascii_lowercase();
    l.contains("://")
        || l.starts_with("git+")
        || l.starts_with("github:")
        || l.starts_with("gitlab:")
        || l.starts_with("bitbucket:")
        || l.starts_with("gist:")
        || l.contains(" @ ")
        || l.starts_with("git@")
}

fn f_supply(_: &RuleCtx, _: usize, e: &Exec) -> Option<&'static str> {
    let a = &e.argv;
    let n = e.name.as_str();
    // `python -m pip ...` is pip
    let (n, a): (&str, &[String]) = if (n.starts_with("python") || n == "py")
        && a.get(1).is_some_and(|w| w == "-m")
        && a.get(2).is_some_and(|w| w == "pip" || w == "pip3")
    {
        ("pip", &a[2..])
    } else {
        (n, &a[..])
    };
    const NAMES: &[&str] = &[
        "pip",
        "pip3",
        "pipx",
        "uv",
        "poetry",
        "pdm",
        "rye",
        "npm",
        "pnpm",
        "yarn",
        "bun",
        "cnpm",
        "cargo",
        "go",
        "gem",
        "bundle",
        "conda",
        "mamba",
        "micromamba",
        "git",
        "composer",
        "add-apt-repository",
        "apt-add-repository",
        "apt-key",
        "nuget",
        "dotnet",
        "brew",
    ];
    if !NAMES.contains(&n) {
        return None;
    }
    let al: Vec<String> = tail(a).iter().map(|s| lc(s)).collect();
    let has = |w: &str| al.iter().any(|s| s == w);
    let unofficial = |names: &[&str]| opt_vals(a, names).iter().any(|v| !official_source(v));
    match n {
        "pip" | "pip3" | "pipx" | "uv" | "poetry" | "pdm" | "rye" => {
            if (n == "pip" || n == "pip3" || n == "uv")
                && (al.first().is_some_and(|s| s == "config") || (n == "uv" && has("config")))
            {
                let key_val = a
                    .iter()
                    .skip_while(|w| *w != "set")
                    .skip(1)
                    .collect::<Vec<_>>();
                if let (Some(k), Some(v)) = (key_val.first(), key_val.get(1)) {
                    let k = k.to_ascii_lowercase();
                    if (k.ends_with("index-url") || k.ends_with("find-links"))
                        && !official_source(v)
                        || k.ends_with("trusted-host")
                    {
                        return Some("changes pip's package index or trusted hosts");
                    }
                }
                return None;
            }
            if n == "poetry" && has("source") && has("add") {
                return Some("adds a package source to poetry");
            }
            let installs = al.iter().any(|s| {
                matches!(
                    s.as_str(),
                    "install"
                        | "download"
                        | "wheel"
                        | "add"
                        | "sync"
                        | "lock"
                        | "run"
                        | "tool"
                        | "inject"
                        | "x"
                )
            });
            if !installs {
                return None;
            }
            if unofficial(&[
                "-i",
                "--index-url",
                "--extra-index-url",
                "--index",
                "--default-index",
                "--extra-index",
                "-f",
                "--find-links",
                "--source",
            ]) {
                return Some("installs packages from an untrusted index");
            }
            if has("--trusted-host")
                || al.iter().any(|s| {
                    s.starts_with("--trusted-host=") || s.starts_with("--allow-insecure-host")
                })
            {
                return Some("turns TLS verification off for a package host");
            }
            operands(
                a,
                &[
                    "-r",
                    "--requirement",
                    "-c",
                    "--constraint",
                    "-e",
                    "--editable",
                    "-t",
                    "--target",
                    "--python",
                    "-p",
                    "-i",
                    "--index-url",
                    "--extra-index-url",
                    "--index",
                    "--default-index",
                    "--extra-index",
                    "-f",
                    "--find-links",
                    "--source",
                    "--trusted-host",
                ],
            )
            .iter()
            .any(|s| remote_spec(s))
            .then_some("installs a package straight from a URL or git remote")
        }
        "npm" | "pnpm" | "yarn" | "bun" | "cnpm" => {
            if al.first().is_some_and(|s| s == "config" || s == "set") {
                let i = usize::from(al.first().is_some_and(|s| s == "config"));
                let kv: Vec<&String> = al.iter().skip(i).filter(|s| !s.starts_with('-')).collect();
                if kv.first().is_some_and(|s| *s == "set") {
                    let (k, v) = match (kv.get(1), kv.get(2)) {
                        (Some(k), Some(v)) => (k.as_str(), v.as_str()),
                        (Some(k), None) => k.split_once('=').unwrap_or((k.as_str(), "")),
                        _ => return None,
                    };
                    if (k.ends_with("registry") || k.ends_with("npmregistryserver"))
                        && !official_source(v)
                    {
                        return Some("points the JavaScript package manager at another registry");
                    }
                    if (k == "strict-ssl" || k == "enablestrictssl") && v == "false" {
                        return Some("turns TLS verification off for the package registry");
                    }
                }
                return None;
            }
            if unofficial(&["--registry"]) {
                return Some("installs from an untrusted registry");
            }
            let installs = al.first().is_some_and(|s| {
                matches!(
                    s.as_str(),
                    "install" | "i" | "add" | "update" | "up" | "upgrade" | "in" | "isntall"
                )
            });
            (installs
                && operands(
                    a,
                    &["--registry", "--prefix", "-w", "--workspace", "--filter"],
                )
                .iter()
                .skip(1)
                .any(|s| {
                    remote_spec(s)
                        || (s.contains('/')
                            && !s.starts_with('@')
                            && !s.starts_with('.')
                            && !s.starts_with('/')
                            && !s.starts_with('~')
                            && !s.ends_with(".tgz"))
                }))
            .then_some("installs a package from a URL, git remote or GitHub shorthand")
        }
        "cargo" => {
            let installs = al.first().is_some_and(|s| s == "install" || s == "add");
            (installs
                && (has("--git")
                    || al.iter().any(|s| s.starts_with("--git="))
                    || unofficial(&["--index"])
                    || has("--registry")
                    || al.iter().any(|s| s.starts_with("--registry="))))
            .then_some("installs a crate from a git remote or another registry")
        }
        "go" => {
            if al.first().is_some_and(|s| s == "env") && has("-w") {
                return tail(a)
                    .iter()
                    .filter_map(|w| w.split_once('='))
                    .any(|(k, v)| package_env_risky(k, v))
                    .then_some(
                        "go env -w points Go at another proxy or turns checksum verification off",
                    );
            }
            has("-insecure").then_some("go get -insecure fetches modules without TLS")
        }
        "gem" => {
            if al.first().is_some_and(|s| s == "sources") && (has("--add") || has("-a")) {
                return opt_vals(a, &["--add", "-a"])
                    .iter()
                    .any(|v| !official_source(v))
                    .then_some("adds a gem source");
            }
            (al.first().is_some_and(|s| s == "install")
                && unofficial(&["--source", "-s", "--clear-sources"]))
            .then_some("installs a gem from another source")
        }
        "bundle" => (has("config") && al.iter().any(|s| s.starts_with("mirror.")))
            .then_some("sets a gem mirror"),
        "conda" | "mamba" | "micromamba" => {
            if has("config")
                && (has("--add") || has("--prepend") || has("--append"))
                && has("channels")
            {
                return Some("adds a conda channel");
            }
            (al.first()
                .is_some_and(|s| matches!(s.as_str(), "install" | "create" | "update"))
                && opt_vals(a, &["-c", "--channel"])
                    .iter()
                    .any(|v| !official_source(v)))
            .then_some("installs from a custom conda channel")
        }
        "git" => {
            // `git config url.X.insteadOf Y`, `http.sslVerify false`, or `git -c ...`
            let lower: Vec<String> = tail(a).iter().map(|s| s.to_ascii_lowercase()).collect();
            let rewrite = lower.iter().any(|s| {
                s.starts_with("url.") && (s.contains(".insteadof") || s.contains(".pushinsteadof"))
            });
            let tls_off = lower
                .windows(2)
                .any(|w| w[0].ends_with("sslverify") && w[1] == "false")
                || lower.iter().any(|s| s.contains("sslverify=false"));
            if (rewrite && lower.iter().any(|s| s == "config"))
                || lower
                    .iter()
                    .any(|s| s.starts_with("url.") && s.contains("insteadof="))
            {
                return Some("rewrites git remote URLs (every fetch can go to another server)");
            }
            tls_off.then_some("turns TLS verification off for git")
        }
        "composer" => (has("config")
            && al
                .iter()
                .any(|s| s.starts_with("repositories.") || s.starts_with("repo.")))
        .then_some("adds a composer repository"),
        "add-apt-repository" | "apt-add-repository" => {
            (!has("--remove") && !has("-r")).then_some("adds an APT repository")
        }
        "apt-key" => has("add").then_some("trusts a new APT signing key"),
        "nuget" => (has("sources") && has("add")).then_some("adds a NuGet source"),
        "dotnet" => (has("nuget") && has("add") && has("source")).then_some("adds a NuGet source"),
        "brew" => ((has("tap") && a.len() > 3)
            || (has("install") && operands(a, &[]).iter().any(|s| s.contains("://"))))
        .then_some("installs from a third-party tap or URL"),
        _ => None,
    }
}
