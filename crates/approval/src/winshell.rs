//! PowerShell and `cmd.exe` commands judged as first-class syntax.
//!
//! Why a separate reader: a host whose agent runs on Windows sends
//! `Remove-Item -Recurse -Force C:\` or `rd /s /q %USERPROFILE%` with no
//! `powershell -c` prefix, and the POSIX parser mangles that syntax
//! (backslashes are escapes, `$env:X` is `$env` + text, `{ $_.Delete() }`
//! is a parse error). This module splits a PowerShell / cmd line into
//! pipelines and statements with those languages' quoting (`'..'`, `".."`,
//! backtick and caret escapes), resolves aliases (`ri`, `rm`, `del`, `rd`,
//! `gci`, ...) and PowerShell's unique-prefix parameter abbreviations
//! (`-Rec`, `-fo`), expands the environment forms that name system places
//! (`$env:USERPROFILE`, `%SystemRoot%`, `$HOME`), and applies a small table
//! of Windows rules: recursive deletes of drives, profiles and system
//! directories, disk formats and clears, boot configuration and registry
//! hive deletes, forced shutdowns, shadow copy and backup catalog deletion,
//! firewall and Defender off, log clearing, recursive ACL/ownership
//! changes of a drive. `powershell -EncodedCommand` payloads are decoded
//! (base64 of UTF-16LE) and read the same way, as are nested
//! `cmd /c` / `powershell -Command` strings.
//!
//! It is used for every command when the engine's `shell` is `powershell`
//! or `cmd`, for POSIX commands that look like PowerShell or cmd (a
//! `Verb-Noun` cmdlet or a Windows builtin with `/switches` at a command
//! position), and for the payload of `powershell`/`pwsh`/`cmd` programs
//! found by the POSIX analyser.

use crate::types::Verdict;

/// Which Windows language a text is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    PowerShell,
    Cmd,
}

/// One thing a Windows command does that a rule cares about.
#[derive(Clone, Debug)]
pub struct WinFinding {
    /// Key of the rule in the engine table.
    pub rule: &'static str,
    pub tier: Verdict,
    /// What the command does.
    pub why: &'static str,
    /// The statement, as written.
    pub command: String,
}

/// The result of reading a Windows command line.
#[derive(Debug, Default)]
pub struct WinAnalysis {
    pub findings: Vec<WinFinding>,
    /// The statements as argv (name first), for the report.
    pub commands: Vec<Vec<String>>,
}

const MAX_DEPTH: usize = 6;

const PS_VERBS: &[&str] = &[
    "get",
    "set",
    "new",
    "remove",
    "stop",
    "start",
    "restart",
    "clear",
    "format",
    "initialize",
    "invoke",
    "disable",
    "enable",
    "add",
    "copy",
    "move",
    "rename",
    "out",
    "where",
    "foreach",
    "select",
    "sort",
    "write",
    "test",
    "import",
    "export",
    "mount",
    "dismount",
    "resize",
    "register",
    "unregister",
    "uninstall",
    "install",
    "suspend",
    "resume",
    "update",
    "wait",
    "measure",
    "convertto",
    "convertfrom",
    "join",
    "split",
    "compare",
    "tee",
    "group",
    "show",
    "read",
    "reset",
    "repair",
    "expand",
    "compress",
    "push",
    "pop",
    "find",
    "save",
    "send",
    "receive",
    "enter",
    "exit",
    "use",
    "block",
    "unblock",
    "grant",
    "revoke",
    "protect",
    "unprotect",
    "optimize",
    "checkpoint",
    "restore",
    "backup",
    "debug",
    "trace",
    "connect",
    "disconnect",
    "publish",
    "unpublish",
    "request",
    "approve",
    "deny",
    "complete",
    "confirm",
    "edit",
    "limit",
    "lock",
    "unlock",
    "close",
    "open",
    "hide",
    "sync",
    "deploy",
    "build",
];

const CMD_BUILTINS: &[&str] = &[
    "rd", "rmdir", "del", "erase", "format", "bcdedit", "reg", "vssadmin", "wmic", "wbadmin",
    "netsh", "icacls", "takeown", "diskpart", "cipher", "sc", "taskkill", "wevtutil", "cacls",
    "attrib", "robocopy", "shutdown", "net", "auditpol", "fsutil", "bootrec", "dir",
];

fn is_cmdlet(w: &str) -> bool {
    let Some((verb, noun)) = w.split_once('-') else {
        return false;
    };
    !noun.is_empty()
        && noun.chars().all(|c| c.is_ascii_alphanumeric())
        && verb.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && PS_VERBS.contains(&verb.to_ascii_lowercase().as_str())
}

/// The cheap prefilter of [`detect`], one pass over the bytes: `$env:`,
/// `Verb-Noun` (a cmdlet name), a backslash, the name of a
/// Windows-only tool (any case, inside any word), or ` /x` (a cmd switch)
/// with a cmd builtin somewhere as a whole word.
fn may_be_windows(b: &[u8]) -> bool {
    const NAMES: [&[u8]; 9] = [
        b"wmic",
        b"wbadmin",
        b"vssadmin",
        b"bcdedit",
        b"netsh",
        b"wevtutil",
        b"diskpart",
        b"takeown",
        b"icacls",
    ];
    let mut slash = false;
    let mut quoted = false;
    let mut builtin = false;
    let mut start = 0;
    for i in 0..=b.len() {
        let c = b.get(i).copied().unwrap_or(b' ');
        if c.is_ascii_alphanumeric() {
            continue;
        }
        // the word b[start..i] just ended
        let w = &b[start..i];
        if w.len() >= 2 {
            if w.len() >= 4
                && NAMES.iter().any(|n| {
                    w.len() >= n.len() && w.windows(n.len()).any(|x| x.eq_ignore_ascii_case(n))
                })
            {
                return true;
            }
            if !builtin && w.len() <= 8 {
                let mut low = [0u8; 8];
                for (d, s) in low.iter_mut().zip(w) {
                    *d = s.to_ascii_lowercase();
                }
                let low = &low[..w.len()];
                builtin = CMD_BUILTINS.iter().any(|n| n.as_bytes() == low);
            }
        }
        start = i + 1;
        let next = b.get(i + 1).copied().unwrap_or(0);
        match c {
            b'\\' => return true,
            // `Verb-Noun`: a letter, a dash, a capital (POSIX flags such as
            // ` -R` follow a space; only a cmdlet name matters to `detect`)
            b'-' if next.is_ascii_uppercase() && i > 0 && b[i - 1].is_ascii_alphabetic() => {
                return true;
            }
            b' ' if next == b'/' => slash = true,
            // a word that starts with `/` anywhere (`/reg ...`, `x;/rd /s`)
            b'/' if i == 0 || matches!(b[i - 1], b'\t' | b'\n' | b';' | b'&' | b'|' | b'(') => {
                slash = true;
            }
            b'$' if b[i..].starts_with(b"$env:") => return true,
            b'\'' | b'"' | b'$' | b'`' => quoted = true,
            _ if !c.is_ascii() => quoted = true,
            _ => {}
        }
    }
    // ` /x` is a cmd switch only after a cmd builtin at a command position:
    // one as a whole word (any case), or quoting or non-ASCII text that
    // could spell one in pieces
    slash && (builtin || quoted)
}

/// Does this (POSIX-mode) command line look like PowerShell or cmd? A
/// `Verb-Noun` cmdlet at a command position, `$env:`, or a Windows builtin
/// with a `/switch`.
pub fn detect(text: &str) -> Option<Dialect> {
    if !may_be_windows(text.as_bytes()) {
        return None;
    }
    if text.contains("$env:") {
        return Some(Dialect::PowerShell);
    }
    let mut found = None;
    for st in statements(text, Dialect::PowerShell) {
        let Some(first) = st.words.first() else {
            continue;
        };
        if is_cmdlet(first) {
            return Some(Dialect::PowerShell);
        }
        let name = base_name(first);
        if CMD_BUILTINS.contains(&name.as_str())
            && st.words[1..].iter().any(|w| {
                w.len() >= 2 && w.starts_with('/') && w.len() <= 24 && !w[1..].contains('/')
            })
        {
            found = Some(Dialect::Cmd);
        }
        if matches!(
            name.as_str(),
            "reg" | "icacls" | "takeown" | "bcdedit" | "vssadmin" | "wbadmin" | "wmic"
        ) && st.words.len() > 1
        {
            found = Some(Dialect::Cmd);
        }
    }
    found
}

/// One statement: its words (quotes removed) and source text.
struct Statement {
    words: Vec<String>,
    text: String,
    /// Index of the pipeline this statement belongs to, and its position.
    pipe: usize,
}

/// Split into statements: `;`, `&&`, `||`, newlines (and `&` in cmd) end a
/// pipeline, `|` separates its stages, braces and parentheses open nested
/// blocks whose statements count too.
fn statements(text: &str, d: Dialect) -> Vec<Statement> {
    let mut out: Vec<Statement> = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut have = false;
    let mut src = String::new();
    let mut pipe = 0usize;
    let cs: Vec<char> = text.chars().collect();
    let mut i = 0;
    let flush_word = |words: &mut Vec<String>, cur: &mut String, have: &mut bool| {
        if *have {
            words.push(std::mem::take(cur));
            *have = false;
        }
    };
    macro_rules! end_stmt {
        ($newpipe:expr_2021) => {{
            flush_word(&mut words, &mut cur, &mut have);
            if !words.is_empty() && out.len() < 256 {
                out.push(Statement {
                    words: std::mem::take(&mut words),
                    text: src.trim().to_string(),
                    pipe,
                });
            }
            words.clear();
            src.clear();
            if $newpipe {
                pipe += 1;
            }
        }};
    }
    while i < cs.len() {
        let c = cs[i];
        match c {
            '\'' => {
                // PowerShell single quotes ('' is a quote); cmd: literal
                if d == Dialect::Cmd {
                    cur.push(c);
                    src.push(c);
                    have = true;
                    i += 1;
                    continue;
                }
                src.push(c);
                i += 1;
                have = true;
                while i < cs.len() {
                    src.push(cs[i]);
                    if cs[i] == '\'' {
                        if i + 1 < cs.len() && cs[i + 1] == '\'' {
                            cur.push('\'');
                            src.push('\'');
                            i += 2;
                            continue;
                        }
                        i += 1;
                        break;
                    }
                    cur.push(cs[i]);
                    i += 1;
                }
            }
            '"' => {
                src.push(c);
                i += 1;
                have = true;
                while i < cs.len() {
                    src.push(cs[i]);
                    if cs[i] == '`' && d == Dialect::PowerShell && i + 1 < cs.len() {
                        cur.push(cs[i + 1]);
                        src.push(cs[i + 1]);
                        i += 2;
                        continue;
                    }
                    if cs[i] == '"' {
                        i += 1;
                        break;
                    }
                    cur.push(cs[i]);
                    i += 1;
                }
            }
            '`' if d == Dialect::PowerShell && i + 1 < cs.len() => {
                cur.push(cs[i + 1]);
                src.push(c);
                src.push(cs[i + 1]);
                have = true;
                i += 2;
            }
            '^' if d == Dialect::Cmd && i + 1 < cs.len() => {
                cur.push(cs[i + 1]);
                src.push(c);
                src.push(cs[i + 1]);
                have = true;
                i += 2;
            }
            ' ' | '\t' | '\r' => {
                flush_word(&mut words, &mut cur, &mut have);
                src.push(c);
                i += 1;
            }
            '\n' | ';' | '{' | '}' | '(' | ')' => {
                end_stmt!(true);
                i += 1;
            }
            '|' => {
                let double = i + 1 < cs.len() && cs[i + 1] == '|';
                end_stmt!(double);
                i += if double { 2 } else { 1 };
            }
            '&' => {
                let double = i + 1 < cs.len() && cs[i + 1] == '&';
                if double || d == Dialect::Cmd {
                    end_stmt!(true);
                    i += if double { 2 } else { 1 };
                } else {
                    // PowerShell call operator `& 'x.exe'`
                    flush_word(&mut words, &mut cur, &mut have);
                    src.push(c);
                    i += 1;
                }
            }
            _ => {
                cur.push(c);
                src.push(c);
                have = true;
                i += 1;
            }
        }
    }
    flush_word(&mut words, &mut cur, &mut have);
    if !words.is_empty() && out.len() < 256 {
        out.push(Statement {
            words,
            text: src.trim().to_string(),
            pipe,
        });
    }
    out
}

/// Program name: basename, lowercased, without `.exe`/`.com`/`.cmd`/`.bat`.
/// `file.ext:stream.ext`: an alternate data stream (not a drive letter).
static ADS: once_cell::sync::Lazy<regex::Regex> = once_cell::sync::Lazy::new(|| {
    regex::Regex::new(r"[A-Za-z0-9_.-]+\.[A-Za-z0-9]{1,5}:[A-Za-z0-9_-]+\.[A-Za-z0-9]{1,5}\b")
        .expect("ADS regex")
});

/// Windows start-up and task folders: a file written there runs at logon.
fn startup_dir(p: &str) -> bool {
    let l = p.to_ascii_lowercase();
    l.contains("/start menu/programs/startup")
        || l.contains("/windows/system32/tasks")
        || l.contains("/windows/system32/")
        || l.contains("/windows/syswow64/")
        || l.contains("$env:appdata/microsoft/windows/start menu")
}

fn base_name(w: &str) -> String {
    crate::analyze::cmd_name(w)
}

fn alias(name: &str) -> &str {
    match name {
        "ri" | "rm" | "del" | "erase" | "rd" | "rmdir" | "remove-item" => "remove-item",
        "gci" | "ls" | "dir" | "get-childitem" | "gi" | "get-item" => "get-childitem",
        "iex" | "invoke-expression" => "invoke-expression",
        "iwr" | "irm" | "curl" | "wget" | "invoke-webrequest" | "invoke-restmethod" => {
            "invoke-webrequest"
        }
        "spps" | "kill" | "stop-process" => "stop-process",
        "echo" | "write" | "write-host" | "write-output" | "write-verbose" | "write-warning"
        | "write-error" | "write-information" | "out-host" | "out-null" | "rem" | "::"
        | "title" => "echo",
        "gwmi" | "get-wmiobject" | "get-ciminstance" | "gcim" => "get-ciminstance",
        other => other,
    }
}

/// PowerShell parameter: `-Rec`, `-Recurse:$true` match `recurse`.
fn ps_param(w: &str, full: &str, min: usize) -> bool {
    let Some(p) = w.strip_prefix('-') else {
        return false;
    };
    let p = p.split(':').next().unwrap_or(p).to_ascii_lowercase();
    p.len() >= min && full.starts_with(&p)
}

fn switch(w: &str, s: &str) -> bool {
    let l = w.to_ascii_lowercase();
    l == s || l.strip_prefix(s).is_some_and(|r| r.starts_with(':'))
}

/// Where a Windows path points, normalised: `c:`, `c:\windows`, `profile`,
/// `\`, `hklm:\software`, ...
fn win_norm(p: &str) -> String {
    let mut l = p
        .trim()
        .trim_matches(['"', '\''])
        .to_ascii_lowercase()
        .replace('/', "\\");
    for (from, to) in [
        ("$env:systemdrive", "c:"),
        ("%systemdrive%", "c:"),
        ("${env:systemdrive}", "c:"),
        ("$env:userprofile", "profile"),
        ("%userprofile%", "profile"),
        ("${env:userprofile}", "profile"),
        ("$env:homedrive$env:homepath", "profile"),
        ("%homedrive%%homepath%", "profile"),
        ("$home", "profile"),
        ("~", "profile"),
        ("$env:systemroot", "c:\\windows"),
        ("%systemroot%", "c:\\windows"),
        ("$env:windir", "c:\\windows"),
        ("%windir%", "c:\\windows"),
        ("$env:programfiles", "c:\\program files"),
        ("%programfiles%", "c:\\program files"),
        ("$env:programdata", "c:\\programdata"),
        ("%programdata%", "c:\\programdata"),
        ("$env:appdata", "profile\\appdata\\roaming"),
        ("%appdata%", "profile\\appdata\\roaming"),
        ("hkey_local_machine", "hklm"),
        ("hkey_current_user", "hkcu"),
        ("hkey_classes_root", "hkcr"),
        ("hkey_users", "hku"),
        ("registry::", ""),
    ] {
        if let Some(rest) = l.strip_prefix(from) {
            l = format!("{to}{rest}");
        }
    }
    while l.contains("\\\\") {
        l = l.replace("\\\\", "\\");
    }
    let trimmed = l
        .trim_end_matches("*.*")
        .trim_end_matches('*')
        .trim_end_matches('\\')
        .to_string();
    if trimmed.is_empty() && !l.is_empty() {
        return "\\".into();
    }
    trimmed
}

fn win_critical(p: &str) -> bool {
    let n = win_norm(p);
    if n == "\\" || n == "profile" || n == "c:\\users\\public" {
        return true;
    }
    let b = n.as_bytes();
    if b.len() == 2 && b[0].is_ascii_alphabetic() && b[1] == b':' {
        return true;
    }
    let comps: Vec<&str> = n.split('\\').collect();
    if comps.len() >= 2 && comps[0].len() == 2 && comps[0].ends_with(':') {
        let top = comps[1];
        let sys = matches!(
            top,
            "windows"
                | "users"
                | "program files"
                | "program files (x86)"
                | "programdata"
                | "boot"
                | "recovery"
        );
        if comps.len() == 2 && sys {
            return true;
        }
        if comps.len() == 3
            && (top == "users"
                || (top == "windows" && matches!(comps[2], "system32" | "syswow64" | "winsxs")))
        {
            return true;
        }
    }
    false
}

/// A registry hive root (or one of the system keys directly under HKLM).
fn hive_root(p: &str) -> Option<bool> {
    let n = win_norm(p)
        .replace("hklm:", "hklm")
        .replace("hkcu:", "hkcu")
        .replace("hkcr:", "hkcr")
        .replace("hku:", "hku");
    let comps: Vec<&str> = n.split('\\').filter(|c| !c.is_empty()).collect();
    let first = *comps.first()?;
    if !matches!(first, "hklm" | "hkcu" | "hkcr" | "hku" | "hkcc") {
        return None;
    }
    let root = comps.len() == 1
        || (comps.len() == 2
            && first == "hklm"
            && matches!(
                comps[1],
                "system" | "software" | "sam" | "security" | "hardware" | "bcd00000000"
            ));
    Some(root)
}

/// Read a Windows command line.
pub fn analyze(text: &str, d: Dialect) -> WinAnalysis {
    let mut out = WinAnalysis::default();
    read(text, d, 0, &mut out);
    out
}

fn push(out: &mut WinAnalysis, rule: &'static str, tier: Verdict, why: &'static str, st: &str) {
    if out.findings.len() < 64 {
        out.findings.push(WinFinding {
            rule,
            tier,
            why,
            command: st.chars().take(200).collect(),
        });
    }
}

fn read(text: &str, d: Dialect, depth: usize, out: &mut WinAnalysis) {
    if depth > MAX_DEPTH {
        return;
    }
    let sts = statements(text, d);
    let lower_all = text.to_ascii_lowercase();
    if lower_all.contains("win32_shadowcopy")
        && (lower_all.contains(".delete(")
            || lower_all.contains("remove-ciminstance")
            || lower_all.contains("remove-wmiobject"))
    {
        push(
            out,
            "shadow-copy-delete",
            Verdict::Block,
            "deletes the volume shadow copies (the restore points)",
            text,
        );
    }
    if (lower_all.contains("iex") || lower_all.contains("invoke-expression"))
        && (lower_all.contains("downloadstring")
            || lower_all.contains("iwr ")
            || lower_all.contains("invoke-webrequest")
            || lower_all.contains("irm ")
            || lower_all.contains("invoke-restmethod")
            || lower_all.contains("net.webclient"))
    {
        push(
            out,
            "pipe-to-shell",
            Verdict::Ask,
            "downloads code and runs it with Invoke-Expression",
            text,
        );
    }
    for (k, st) in sts.iter().enumerate() {
        let mut w: &[String] = &st.words;
        // call operator / leading `&`
        while w.first().is_some_and(|x| x == "&" || x == ".") {
            w = &w[1..];
        }
        let Some(first) = w.first() else { continue };
        let name_full = base_name(first);
        let name = alias(&name_full);
        if out.commands.len() < 64 {
            out.commands.push(w.to_vec());
        }
        let args = &w[1..];
        let la: Vec<String> = args.iter().map(|a| a.to_ascii_lowercase()).collect();
        let has = |s: &str| la.iter().any(|a| a == s);
        let ops: Vec<&String> = args
            .iter()
            .filter(|a| {
                !(a.starts_with('-')
                    || (a.starts_with('/') && a.len() <= 12 && !a[1..].contains(['/', '\\'])))
            })
            .collect();
        // LOLBAS binaries, libraries and scripts (the catalog's own logic,
        // then the knowledge base's table), and code run from an alternate
        // data stream (`cscript x.txt:s.vbs`, `cmd - < a.doc:p.bat`)
        let lolbas = crate::catalog::lolbas_reason(&name_full, &la)
            .map(|why| ("lolbas-proxy", why))
            .or_else(|| crate::knowledge::win_lolbas(&name_full, args, &st.text))
            .or_else(|| crate::knowledge::win_lolbas(name, args, &st.text));
        if let Some((rule, why)) = lolbas {
            out.findings.push(WinFinding {
                rule: if rule == "exfiltration" {
                    "exfiltration"
                } else if rule == "service-persistence" {
                    "service-persistence"
                } else {
                    "lolbas-proxy"
                },
                tier: Verdict::Ask,
                why: "a Windows system binary used to download, upload or run code (LOLBAS)",
                command: format!("{}: {why}", st.text),
            });
        } else if ADS.is_match(&st.text) {
            push(
                out,
                "lolbas-proxy",
                Verdict::Ask,
                "runs or hides code in an alternate data stream",
                &st.text,
            );
        }
        // nested shells
        match name {
            "powershell" | "pwsh" => {
                if let Some(p) = ps_payload(args) {
                    read(&p, Dialect::PowerShell, depth + 1, out);
                }
                continue;
            }
            "cmd" => {
                if let Some(p) = cmd_payload(args) {
                    read(&p, Dialect::Cmd, depth + 1, out);
                }
                continue;
            }
            "echo" => continue,
            _ => {}
        }
        match name {
            "remove-item" => {
                let rec = args
                    .iter()
                    .any(|a| ps_param(a, "recurse", 1) || switch(a, "/s"));
                let mut targets: Vec<String> = Vec::new();
                let mut j = 0;
                while j < args.len() {
                    let a = &args[j];
                    if ps_param(a, "path", 2) || ps_param(a, "literalpath", 2) {
                        if let Some(v) = args.get(j + 1) {
                            targets.extend(v.split(',').map(str::to_string));
                        }
                        j += 2;
                        continue;
                    }
                    if !(a.starts_with('-') || (a.starts_with('/') && a.len() <= 3)) {
                        targets.extend(a.split(',').map(str::to_string));
                    }
                    j += 1;
                }
                // `Get-ChildItem X | Remove-Item`: the input of the stage before
                if targets.is_empty() && k > 0 && sts[k - 1].pipe == st.pipe {
                    let prev = &sts[k - 1].words;
                    if prev
                        .first()
                        .is_some_and(|p| alias(&base_name(p)) == "get-childitem")
                    {
                        let mut pj = 1;
                        while pj < prev.len() {
                            let a = &prev[pj];
                            if ps_param(a, "path", 2) || ps_param(a, "literalpath", 2) {
                                if let Some(v) = prev.get(pj + 1) {
                                    targets.push(v.clone());
                                }
                                pj += 2;
                                continue;
                            }
                            if !a.starts_with('-') {
                                targets.push(a.clone());
                            }
                            pj += 1;
                        }
                        // gci -Recurse | Remove-Item deletes the whole tree
                        if prev.iter().any(|a| ps_param(a, "recurse", 1))
                            && targets.iter().any(|t| win_critical(t))
                        {
                            push(
                                out,
                                "windows-wipe",
                                Verdict::Block,
                                "deletes every file under a drive, user profile or system directory",
                                &st.text,
                            );
                            continue;
                        }
                    }
                }
                if let Some(root) = targets.iter().find_map(|t| hive_root(t)) {
                    if root {
                        push(
                            out,
                            "windows-boot-registry",
                            Verdict::Block,
                            "deletes a registry hive or a system key",
                            &st.text,
                        );
                    } else {
                        push(
                            out,
                            "windows-system-change",
                            Verdict::Ask,
                            "deletes a registry key",
                            &st.text,
                        );
                    }
                    continue;
                }
                if rec && targets.iter().any(|t| win_critical(t)) {
                    push(
                        out,
                        "windows-wipe",
                        Verdict::Block,
                        "recursively deletes a drive, user profile or system directory",
                        &st.text,
                    );
                } else if targets.iter().any(|t| {
                    let n = win_norm(t);
                    n.starts_with("c:\\windows") || n.starts_with("c:\\program files")
                }) {
                    push(
                        out,
                        "windows-system-change",
                        Verdict::Ask,
                        "deletes files in the Windows or Program Files directory",
                        &st.text,
                    );
                } else if rec {
                    push(
                        out,
                        "rm-recursive",
                        Verdict::Ask,
                        "recursive delete",
                        &st.text,
                    );
                }
            }
            "format"
                if ops.iter().any(|t| {
                    let n = win_norm(t);
                    n.len() == 2 && n.ends_with(':')
                }) =>
            {
                push(
                    out,
                    "windows-wipe",
                    Verdict::Block,
                    "formats a drive",
                    &st.text,
                );
            }
            "format-volume"
            | "clear-disk"
            | "initialize-disk"
            | "remove-partition"
            | "reset-physicaldisk"
            | "remove-physicaldisk"
                if !args.iter().any(|a| ps_param(a, "whatif", 2)) =>
            {
                push(
                    out,
                    "windows-wipe",
                    Verdict::Block,
                    "formats, clears or repartitions a disk",
                    &st.text,
                );
            }
            "diskpart" => push(
                out,
                "disk-tool",
                Verdict::Ask,
                "partition, volume or disk management",
                &st.text,
            ),
            "bcdedit" => {
                if la.iter().any(|a| a == "/delete" || a == "/deletevalue") {
                    push(
                        out,
                        "windows-boot-registry",
                        Verdict::Block,
                        "deletes boot configuration entries",
                        &st.text,
                    );
                } else if la.iter().any(|a| {
                    matches!(
                        a.as_str(),
                        "/set"
                            | "/import"
                            | "/createstore"
                            | "/default"
                            | "/bootsequence"
                            | "/displayorder"
                            | "/copy"
                            | "/create"
                    )
                }) {
                    push(
                        out,
                        "windows-system-change",
                        Verdict::Ask,
                        "changes the boot configuration",
                        &st.text,
                    );
                }
            }
            "bootrec" => push(
                out,
                "windows-system-change",
                Verdict::Ask,
                "rewrites the boot record",
                &st.text,
            ),
            "reg" => {
                let verb = la.first().map(|s| s.as_str()).unwrap_or("");
                let key = args.get(1).map(|s| s.as_str()).unwrap_or("");
                match verb {
                    "delete" => match hive_root(key) {
                        Some(true) => push(
                            out,
                            "windows-boot-registry",
                            Verdict::Block,
                            "deletes a registry hive or a system key",
                            &st.text,
                        ),
                        _ => push(
                            out,
                            "windows-system-change",
                            Verdict::Ask,
                            "deletes a registry key or value",
                            &st.text,
                        ),
                    },
                    "add" | "import" | "restore" | "load" | "unload" | "copy"
                        if hive_root(key).is_some() || verb == "import" =>
                    {
                        push(
                            out,
                            "windows-system-change",
                            Verdict::Ask,
                            "changes the registry",
                            &st.text,
                        );
                    }
                    "save" if hive_root(key).is_some() => {
                        push(
                            out,
                            "credential-read",
                            Verdict::Ask,
                            "saves a registry hive (SAM/SECURITY hold password hashes)",
                            &st.text,
                        );
                    }
                    _ => {}
                }
            }
            "remove-itemproperty"
            | "set-itemproperty"
            | "new-itemproperty"
            | "clear-itemproperty"
                if args.iter().any(|a| {
                    hive_root(a).is_some_and(|_| a.to_ascii_lowercase().starts_with("hklm"))
                }) =>
            {
                push(
                    out,
                    "windows-system-change",
                    Verdict::Ask,
                    "changes a machine-wide registry value",
                    &st.text,
                );
            }
            "shutdown" => {
                if has("/a") || has("-a") || has("/?") {
                    continue;
                }
                if la.iter().any(|a| {
                    matches!(
                        a.as_str(),
                        "/s" | "/r" | "/p" | "/sg" | "/g" | "/h" | "-s" | "-r" | "-p" | "-h"
                    )
                }) {
                    push(
                        out,
                        "shutdown-reboot",
                        Verdict::Block,
                        "shuts down or restarts Windows",
                        &st.text,
                    );
                }
            }
            "stop-computer" | "restart-computer"
                if !args.iter().any(|a| ps_param(a, "whatif", 2)) =>
            {
                push(
                    out,
                    "shutdown-reboot",
                    Verdict::Block,
                    "shuts down or restarts the computer",
                    &st.text,
                );
            }
            "vssadmin"
                if ((has("delete") && has("shadows"))
                    || (has("resize") && has("shadowstorage"))) =>
            {
                push(
                    out,
                    "shadow-copy-delete",
                    Verdict::Block,
                    "deletes the volume shadow copies (the restore points)",
                    &st.text,
                );
            }
            "wmic" if has("shadowcopy") && has("delete") => {
                push(
                    out,
                    "shadow-copy-delete",
                    Verdict::Block,
                    "deletes the volume shadow copies (the restore points)",
                    &st.text,
                );
            }
            "wbadmin" if has("delete") => {
                push(
                    out,
                    "shadow-copy-delete",
                    Verdict::Block,
                    "deletes the Windows backup catalog or backups",
                    &st.text,
                );
            }
            "netsh" => {
                let t = la.join(" ");
                if (t.contains("advfirewall") && t.contains("state off"))
                    || (t.contains("firewall")
                        && (t.contains("opmode disable") || t.contains("mode=disable")))
                {
                    push(
                        out,
                        "firewall-open",
                        Verdict::Ask,
                        "turns the Windows firewall off",
                        &st.text,
                    );
                }
            }
            "set-netfirewallprofile" => {
                let off = args.windows(2).any(|p| {
                    ps_param(&p[0], "enabled", 2)
                        && matches!(p[1].to_ascii_lowercase().as_str(), "false" | "$false" | "0")
                }) || la.iter().any(|a| {
                    a.starts_with("-enabled:") && (a.ends_with("false") || a.ends_with('0'))
                });
                if off {
                    push(
                        out,
                        "firewall-open",
                        Verdict::Ask,
                        "turns the Windows firewall off",
                        &st.text,
                    );
                }
            }
            "set-mppreference" | "add-mppreference"
                if la
                    .iter()
                    .any(|a| a.starts_with("-disable") || a.starts_with("-exclusion")) =>
            {
                push(
                    out,
                    "windows-system-change",
                    Verdict::Ask,
                    "turns Defender protection off or adds an exclusion",
                    &st.text,
                );
            }
            "sc" | "stop-service" | "set-service" => {
                let target = la.iter().any(|a| {
                    matches!(
                        a.trim_matches(['"', '\'']),
                        "windefend"
                            | "mpssvc"
                            | "wscsvc"
                            | "eventlog"
                            | "sense"
                            | "wdnissvc"
                            | "bfe"
                    )
                });
                if target
                    && (name != "sc"
                        || la
                            .iter()
                            .any(|a| matches!(a.as_str(), "stop" | "config" | "delete")))
                {
                    push(
                        out,
                        "windows-system-change",
                        Verdict::Ask,
                        "stops or disables a Windows security or logging service",
                        &st.text,
                    );
                }
            }
            "uninstall-windowsfeature" | "disable-windowsoptionalfeature"
                if la.iter().any(|a| a.contains("defender")) =>
            {
                push(
                    out,
                    "windows-system-change",
                    Verdict::Ask,
                    "removes Windows Defender",
                    &st.text,
                );
            }
            "wevtutil" if la.first().is_some_and(|a| a == "cl" || a == "clear-log") => {
                push(
                    out,
                    "audit-disable",
                    Verdict::Ask,
                    "clears a Windows event log",
                    &st.text,
                );
            }
            "clear-eventlog" | "remove-eventlog" => push(
                out,
                "audit-disable",
                Verdict::Ask,
                "clears a Windows event log",
                &st.text,
            ),
            "auditpol"
                if la
                    .iter()
                    .any(|a| a == "/clear" || a == "/remove" || a.contains("disable")) =>
            {
                push(
                    out,
                    "audit-disable",
                    Verdict::Ask,
                    "clears or disables the audit policy",
                    &st.text,
                );
            }
            "out-file" | "set-content" | "add-content" | "tee-object" | "ac" | "copy-item"
            | "copy" | "cpi" | "move-item" | "move" | "mi" | "invoke-webrequest" | "certutil"
            | "bitsadmin" => {
                // a write to a start-up, key or system persistence path
                // (`Out-File ~/.bashrc`, `-OutFile /etc/cron.d/x`)
                let mut targets: Vec<&String> = Vec::new();
                for (j, a) in args.iter().enumerate() {
                    let la = a.to_ascii_lowercase();
                    if [
                        "-filepath",
                        "-path",
                        "-literalpath",
                        "-destination",
                        "-outfile",
                    ]
                    .iter()
                    .any(|p| la == *p)
                        && let Some(v) = args.get(j + 1)
                    {
                        targets.push(v);
                    } else if !a.starts_with('-') {
                        targets.push(a);
                    }
                }
                if targets.iter().any(|t| {
                    let t = t.replace('\\', "/");
                    crate::rules::is_persistence_path(&t) || startup_dir(&t)
                }) {
                    push(
                        out,
                        "sensitive-file-write",
                        Verdict::Ask,
                        "writes a start-up, key or account file (persistence)",
                        &st.text,
                    );
                }
            }
            "clear-history" => push(
                out,
                "history-wipe",
                Verdict::Ask,
                "clears the PowerShell history",
                &st.text,
            ),
            "icacls" | "cacls" | "takeown" => {
                let rec = la.iter().any(|a| a == "/t" || a == "/r");
                let target = if name == "takeown" {
                    args.windows(2)
                        .find(|p| p[0].eq_ignore_ascii_case("/f"))
                        .map(|p| p[1].clone())
                } else {
                    args.first().cloned()
                };
                if rec && target.is_some_and(|t| win_critical(&t)) {
                    push(
                        out,
                        "permissions-root",
                        Verdict::Block,
                        "recursively changes ACLs or ownership of a drive or the Windows directory",
                        &st.text,
                    );
                }
            }
            "net" => {
                let t = la.join(" ");
                if t.contains("localgroup") && t.contains("administrators") && t.contains("/add") {
                    push(
                        out,
                        "root-account",
                        Verdict::Ask,
                        "adds a user to the Administrators group",
                        &st.text,
                    );
                }
            }
            "add-localgroupmember" if la.iter().any(|a| a.contains("administrators")) => {
                push(
                    out,
                    "root-account",
                    Verdict::Ask,
                    "adds a user to the Administrators group",
                    &st.text,
                );
            }
            "set-executionpolicy" if la.iter().any(|a| a == "unrestricted" || a == "bypass") => {
                push(
                    out,
                    "windows-system-change",
                    Verdict::Ask,
                    "turns script signing checks off",
                    &st.text,
                );
            }
            "fsutil" if (has("deletejournal") || (has("setzerodata"))) => {
                push(
                    out,
                    "windows-system-change",
                    Verdict::Ask,
                    "deletes the change journal or zeroes file data",
                    &st.text,
                );
            }
            "cipher" if la.iter().any(|a| a.starts_with("/w")) => {
                push(
                    out,
                    "windows-system-change",
                    Verdict::Ask,
                    "overwrites free disk space",
                    &st.text,
                );
            }
            _ => {}
        }
    }
}

/// The script of `powershell [-options] -Command X` / `-EncodedCommand B64`
/// / positional.
pub fn ps_payload(args: &[String]) -> Option<String> {
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let l = a.to_ascii_lowercase();
        if ps_param(a, "encodedcommand", 1) || l == "-ec" {
            return args.get(i + 1).and_then(|b| decode_utf16_b64(b));
        }
        if ps_param(a, "command", 1) {
            return Some(args[i + 1..].join(" "));
        }
        if l.starts_with('-') {
            // options with a value
            if ps_param(a, "executionpolicy", 2)
                || ps_param(a, "windowstyle", 2)
                || ps_param(a, "file", 1)
                || ps_param(a, "configurationname", 2)
                || ps_param(a, "workingdirectory", 2)
                || ps_param(a, "outputformat", 2)
                || ps_param(a, "inputformat", 2)
                || l == "-ep"
                || l == "-wd"
            {
                if ps_param(a, "file", 1) {
                    return None;
                }
                i += 2;
                continue;
            }
            i += 1;
            continue;
        }
        return Some(args[i..].join(" "));
    }
    None
}

/// The command of `cmd [/options] /c X` (or `/k`, `/r`).
pub fn cmd_payload(args: &[String]) -> Option<String> {
    for (i, a) in args.iter().enumerate() {
        let l = a.to_ascii_lowercase();
        if l == "/c" || l == "/k" || l == "/r" {
            return Some(args[i + 1..].join(" "));
        }
        if let Some(rest) = l.strip_prefix("/c").or_else(|| l.strip_prefix("/k"))
            && rest.starts_with(['"', ' '])
        {
            return Some(format!("{} {}", &a[2..], args[i + 1..].join(" ")));
        }
    }
    None
}

fn decode_utf16_b64(s: &str) -> Option<String> {
    let bytes = b64(s.trim().trim_matches(['"', '\'']))?;
    let units: Vec<u16> = bytes
        .chunks(2)
        .map(|c| u16::from_le_bytes([c[0], *c.get(1).unwrap_or(&0)]))
        .collect();
    Some(String::from_utf16_lossy(&units))
}

fn b64(s: &str) -> Option<Vec<u8>> {
    if s.len() > 64 * 1024 {
        return None;
    }
    let val = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => (c - b'A') as u32,
            b'a'..=b'z' => (c - b'a' + 26) as u32,
            b'0'..=b'9' => (c - b'0' + 52) as u32,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        })
    };
    let clean: Vec<u8> = s
        .bytes()
        .filter(|c| !c.is_ascii_whitespace() && *c != b'=')
        .collect();
    let mut out = Vec::with_capacity(clean.len() * 3 / 4);
    for chunk in clean.chunks(4) {
        let mut acc = 0u32;
        for (k, &c) in chunk.iter().enumerate() {
            acc |= val(c)? << (18 - 6 * k);
        }
        let n = chunk.len();
        out.push((acc >> 16) as u8);
        if n > 2 {
            out.push((acc >> 8) as u8);
        }
        if n > 3 {
            out.push(acc as u8);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(t: &str, d: Dialect) -> Vec<&'static str> {
        analyze(t, d).findings.iter().map(|f| f.rule).collect()
    }

    #[test]
    fn reads_powershell_and_cmd() {
        assert_eq!(
            rules(r"Remove-Item -Recurse -Force C:\", Dialect::PowerShell),
            ["windows-wipe"]
        );
        assert_eq!(
            rules(r"ri -r -fo $env:USERPROFILE", Dialect::PowerShell),
            ["windows-wipe"]
        );
        assert_eq!(rules(r"rd /s /q C:\", Dialect::Cmd), ["windows-wipe"]);
        assert!(rules(r"Remove-Item .\build\x.log", Dialect::PowerShell).is_empty());
        assert!(rules("shutdown /a", Dialect::Cmd).is_empty());
        assert!(rules("Get-Service | Format-Table Name", Dialect::PowerShell).is_empty());
        assert_eq!(
            detect("Get-ChildItem | Where-Object { $_.Length -gt 1 }"),
            Some(Dialect::PowerShell)
        );
        assert_eq!(detect("ls -la /tmp"), None);
        assert_eq!(detect("git status"), None);
        assert_eq!(decode_utf16_b64("ZABpAHIA").as_deref(), Some("dir"));
    }
}
