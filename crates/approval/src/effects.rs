//! Posture matchers that the rule table and the families name: privilege,
//! system-wide installs, reading another process's memory or a project's
//! secrets file, a shell handed over as an argument, everyday effects
//! worth a prompt, and the workspace cleanup and inline code that a
//! posture lets through.
//!
//! Why apart from [`crate::posture`]: [`crate::rules`] and
//! [`crate::families`] put these matchers in their tables, while the
//! posture judgements (which rules a sandbox contains, what is known safe)
//! look at sandbox data. Here they sit below the rule table and import only
//! the shared context ([`crate::ctx`]), the analysis, program names and the
//! knowledge base, so no import points back up and the modules form layers.

use crate::analyze::{DYN, Exec, is_interpreter, is_shell};
use crate::ctx::{RuleCtx, operands};
use crate::knowledge;
use crate::names::git_sub;
use crate::parse::RedirOp;

/// `sudo`, `su`, `doas`, `pkexec`, ... (any use, in a posture).
pub fn m_privilege(ctx: &RuleCtx, _: usize, e: &Exec) -> bool {
    ctx.posture.is_some() && knowledge::program(&e.name).is_some_and(|p| p.privilege)
}

fn venv_in_command(ctx: &RuleCtx, e: &Exec) -> bool {
    ctx.virtualenv
        || e.via.as_deref().is_some_and(|v| {
            matches!(
                v,
                "uv" | "poetry" | "pdm" | "hatch" | "pipenv" | "conda" | "tox" | "nox"
            )
        })
        || e.argv[0].contains("venv/")
        || e.argv[0].contains("/env/bin/")
        || ctx.text.contains("activate")
        || ctx.text.contains("VIRTUAL_ENV=")
}

/// Installs that change the whole system (in a posture): `apt-get install`,
/// `npm -g`, `pip install` outside a virtual environment, `make install`.
pub fn m_system_install(ctx: &RuleCtx, _: usize, e: &Exec) -> bool {
    if ctx.posture.is_none() || e.argv.len() < 2 {
        return false;
    }
    let a = &e.argv;
    // `python -m pip install ...`
    if is_interpreter(&e.name)
        && a.windows(3)
            .any(|w| w[0] == "-m" && w[1] == "pip" && w[2] == "install")
    {
        return !venv_in_command(ctx, e) || a.iter().any(|w| w == "--user");
    }
    // `mypy --install-types` pip-installs stub packages into its
    // interpreter: system-wide outside a virtual environment
    if e.name == "mypy" && a.iter().any(|w| w == "--install-types") {
        return !venv_in_command(ctx, e);
    }
    let Some(p) = knowledge::program(&e.name) else {
        return false;
    };
    if p.installs.is_empty() {
        return false;
    }
    if a.iter().any(|w| {
        w == "--simulate"
            || w == "-s" && e.name.starts_with("apt")
            || w == "--dry-run"
            || w == "--help"
    }) {
        return false;
    }
    let ops = operands(a, &[]);
    let sub = ops.first().copied().unwrap_or("");
    if matches!(e.name.as_str(), "pip" | "pip3" | "pip2") {
        if sub != "install" {
            return false;
        }
        return a
            .iter()
            .any(|w| w == "--user" || w == "--break-system-packages")
            || !venv_in_command(ctx, e);
    }
    if !p.global_flags.is_empty() {
        let global = a.iter().any(|w| p.global_flags.contains(&w.as_str()));
        let adds = ops.iter().any(|o| {
            matches!(
                *o,
                "install"
                    | "i"
                    | "add"
                    | "link"
                    | "update"
                    | "up"
                    | "upgrade"
                    | "remove"
                    | "uninstall"
                    | "rm"
            )
        });
        return (global && adds) || (sub == "global" && ops.get(1).is_some_and(|o| *o == "add"));
    }
    for inst in p.installs {
        if inst.starts_with('-') {
            let hit = a[1..].iter().any(|w| {
                if e.name == "pacman" || e.name == "yay" || e.name == "paru" {
                    // -S / -Syu / -U install; -Ss / -Si / -Sl query
                    w.starts_with(inst)
                        && !w.starts_with("--")
                        && !w[2..].contains(['s', 'i', 'l', 'g', 'p', 'c'])
                } else {
                    w == inst
                        || (!inst.starts_with("--") && !w.starts_with("--") && w.starts_with(inst))
                }
            });
            if hit {
                return true;
            }
        } else if sub == *inst {
            return true;
        }
    }
    false
}

/// Reading another process's environment or memory: `ps e`, `/proc/PID/
/// environ|mem`, attaching a debugger or tracer (`gdb -p`, `strace -p`).
pub fn m_process_inspect(_: &RuleCtx, _: usize, e: &Exec) -> bool {
    if e.argv.is_empty() {
        return false;
    }
    // Any process's environment or memory file, however the path is
    // spelt: a thread's (`/proc/N/task/N/environ`), through `.` or doubled
    // slashes, or by a glob that can expand to one (`/proc/$P/env*`).
    let proc_file = |p: &str| {
        let p = p.trim_start_matches('<');
        let parts: Vec<&str> = p
            .split('/')
            .filter(|c| !c.is_empty() && *c != ".")
            .collect();
        if !p.starts_with('/') || parts.first() != Some(&"proc") || parts.len() < 3 {
            return false;
        }
        let last = parts[parts.len() - 1];
        let globbed = |c: &str| {
            c.contains(['*', '?', '[']) && ["environ", "mem"].iter().any(|f| glob_may_match(c, f))
        };
        // another process's open files (`/proc/*/fd/3`): its pipes,
        // sockets and the secrets it has open
        let fd = parts.len() >= 4 && glob_may_match(parts[parts.len() - 2], "fd");
        last == "environ" || last == "mem" || globbed(last) || fd
    };
    let resolved = |a: &str| resolved(e, a);
    if e.argv[1..].iter().any(|a| {
        proc_file(&resolved(a))
            || a.strip_prefix("if=")
                .is_some_and(|v| proc_file(&resolved(v)))
    }) || e.redirs.iter().any(|r| proc_file(&resolved(&r.target)))
    {
        return true;
    }
    // a recursive search over /proc (or /) reads every process's environ
    if recursive_reader_roots(e).iter().any(|(root, inc)| {
        let parts: Vec<&str> = root.split('/').filter(|c| !c.is_empty()).collect();
        let over_proc = root == "/"
            || parts.first() == Some(&"proc") && parts.len() <= 2
            || parts.len() == 3 && parts[0] == "proc" && parts[2] == "task";
        over_proc
            && (inc.is_empty()
                || inc
                    .iter()
                    .any(|g| ["environ", "mem", "3"].iter().any(|f| glob_may_match(g, f))))
    }) {
        return true;
    }
    if e.name == "ps" {
        // BSD-style `e` shows every process's environment
        return e.argv[1..].iter().any(|a| {
            !a.starts_with('-')
                && a.chars().all(|c| c.is_ascii_alphabetic())
                && a.contains('e')
                && a.len() <= 8
        });
    }
    if let Some(p) = knowledge::program(&e.name)
        && !p.attach_opts.is_empty()
    {
        if p.attach_opts == ["*"] {
            return e.argv.len() > 1;
        }
        return e.argv[1..].iter().any(|a| {
            p.attach_opts.contains(&a.as_str())
                || a.starts_with("--pid=")
                || (a.starts_with("-p")
                    && a.len() > 2
                    && a[2..].chars().all(|c| c.is_ascii_digit()))
        });
    }
    false
}

/// A project secrets file (`.env`, `.env.production`; not `.env.example`).
pub fn is_env_file(p: &str) -> bool {
    let base = p.rsplit('/').next().unwrap_or(p).to_ascii_lowercase();
    (base == ".env" || base.starts_with(".env."))
        && !["example", "sample", "template", "dist", "defaults"]
            .iter()
            .any(|s| base.ends_with(s))
}

/// Printing a project secrets file (`cat .env`, `less .env.production`):
/// the values land in the transcript (in a posture).
pub fn m_secret_file_read(ctx: &RuleCtx, _: usize, e: &Exec) -> bool {
    if ctx.posture.is_none() {
        return false;
    }
    // committed (and then pushed anywhere): `git add -f .env`
    if e.name == "git"
        && crate::names::git_sub(&e.argv).is_some_and(|(_, s)| s == "add")
        && e.argv.iter().any(|a| {
            is_env_file(a)
                || a.contains(".ssh/id_")
                || a.ends_with(".aws/credentials")
                || a.ends_with(".netrc")
                || a.ends_with(".npmrc")
                || a.ends_with(".pypirc")
        })
    {
        return true;
    }
    // every program that prints a file it is given (or a line, a
    // column, a sorted or reversed copy of it)
    let readers = [
        "cat",
        "tac",
        "less",
        "more",
        "most",
        "head",
        "tail",
        "bat",
        "batcat",
        "xxd",
        "od",
        "hexdump",
        "strings",
        "grep",
        "egrep",
        "fgrep",
        "zgrep",
        "rg",
        "ag",
        "ack",
        "awk",
        "gawk",
        "mawk",
        "nawk",
        "nl",
        "base64",
        "base32",
        "basenc",
        "view",
        "jq",
        "yq",
        "sed",
        "gsed",
        "cut",
        "paste",
        "sort",
        "uniq",
        "rev",
        "fold",
        "fmt",
        "pr",
        "expand",
        "unexpand",
        "column",
        "comm",
        "join",
        "diff",
        "sdiff",
        "diff3",
        "iconv",
        "look",
        "dd",
        "tr",
        "pg",
        "ul",
        "zcat",
        "zless",
        "zmore",
        "vis",
        "numfmt",
        "git",
        "cmp",
        "colordiff",
        "delta",
        "highlight",
        "pygmentize",
        "ccat",
        "xargs",
        "envsubst",
    ];
    if !readers.contains(&e.name.as_str()) {
        return false;
    }
    if e.name == "git" && !e.argv.iter().any(|a| a == "--no-index") {
        return false;
    }
    // `jq -n env`, `jq '$ENV'`: the environment's secrets printed
    if matches!(e.name.as_str(), "jq" | "yq")
        && e.argv[1..].iter().any(|w| crate::posture::jq_reads_env(w))
    {
        return true;
    }
    e.argv[1..]
        .iter()
        .map(|a| a.strip_prefix("if=").unwrap_or(a))
        .any(|a| !a.starts_with('-') && is_env_file(a))
        || e.redirs
            .iter()
            .any(|r| r.op == RedirOp::In && is_env_file(&r.target))
}

/// Regenerable build output and caches: deleting them inside the workspace
/// loses nothing a build does not recreate.
fn is_build_output(p: &str) -> bool {
    if p.is_empty()
        || p.starts_with('/')
        || p.starts_with('~')
        || p.starts_with('-')
        || p.contains("..")
        || p.contains(DYN)
        || p.contains('$')
    {
        return false;
    }
    let p = p.trim_start_matches("./").trim_end_matches('/');
    const OUT: &[&str] = &[
        "node_modules",
        "target",
        "build",
        "dist",
        "out",
        "__pycache__",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
        ".next",
        ".nuxt",
        ".turbo",
        ".parcel-cache",
        ".cache",
        "coverage",
        ".coverage",
        "htmlcov",
        ".nyc_output",
        ".gradle",
        "bin",
        "obj",
        "cmake-build-debug",
        "cmake-build-release",
        ".eggs",
        "site",
        "_build",
        ".venv",
        "venv",
        ".svelte-kit",
        ".angular",
        "storybook-static",
        "tmp",
        ".tmp",
        "logs",
    ];
    let first = p.split('/').next().unwrap_or("");
    if !(OUT.contains(&first) || first.ends_with(".egg-info")) {
        return false;
    }
    // inside the output directory: any path without globs in the first part
    !first.contains(['*', '?', '['])
}

/// `rm -rf node_modules`, `rm -rf build target/debug`, `find . -name
/// '*.pyc' -delete`, `rm -f /tmp/test-*.log`: cleanup that a workspace
/// (posture and project directory known) runs without asking.
pub fn is_everyday_cleanup(ctx: &RuleCtx, e: &Exec) -> bool {
    if ctx.posture.is_none() || ctx.workspace.is_none() || e.cwd.is_some() || e.bulk {
        return false;
    }
    match e.name.as_str() {
        "rm" => {
            let ops = operands(&e.argv, &[]);
            !ops.is_empty() && ops.iter().all(|o| is_build_output(o) || is_tmp_artifact(o))
        }
        "find" => {
            // find . -name '*.pyc' -delete / -exec rm -rf {} + on caches
            let start_ok = e
                .argv
                .get(1)
                .is_some_and(|s| s == "." || is_build_output(s));
            let pats: Vec<&String> = e
                .argv
                .windows(2)
                .filter(|w| matches!(w[0].as_str(), "-name" | "-iname"))
                .map(|w| &w[1])
                .collect();
            start_ok
                && !pats.is_empty()
                && pats.iter().all(|p| {
                    matches!(
                        p.as_str(),
                        "*.pyc"
                            | "*.pyo"
                            | "__pycache__"
                            | "*.o"
                            | "*.class"
                            | ".pytest_cache"
                            | ".DS_Store"
                            | "*.log"
                            | "*.tmp"
                            | "node_modules"
                            | ".mypy_cache"
                            | "*.egg-info"
                            | "*~"
                            | "*.orig"
                            | "*.rej"
                    )
                })
        }
        _ => false,
    }
}

/// `find CACHES -exec rm -rf {} +`: the `rm` a cleanup `find` runs.
pub fn find_cleanup_inner(ctx: &RuleCtx, e: &Exec) -> bool {
    if ctx.posture.is_none() || !e.bulk || e.via.as_deref() != Some("find") {
        return false;
    }
    ctx.analysis
        .execs
        .iter()
        .filter(|x| x.name == "find")
        .all(|f| is_everyday_cleanup(ctx, f))
}

/// `/tmp/NAME-*.ext`: a test artefact with a literal prefix and suffix,
/// non-recursive.
fn is_tmp_artifact(p: &str) -> bool {
    let Some(rest) = p.strip_prefix("/tmp/") else {
        return false;
    };
    !rest.contains('/')
        && !rest.contains("..")
        && rest.len() >= 5
        && rest.split('*').next().is_some_and(|pre| pre.len() >= 3)
        && rest
            .rsplit('*')
            .next()
            .is_some_and(|suf| suf.starts_with('.') && suf.len() >= 2)
}

/// Inline code judged by its content (in a posture): no process spawning,
/// file deletion, network or dynamic evaluation APIs.
pub fn inline_code_is_plain(code: &str) -> bool {
    use once_cell::sync::Lazy;
    use regex::Regex;
    static RISKY: Lazy<Regex> = Lazy::new(|| {
        Regex::new(
            r"(?x)\b(os|subprocess|shutil|socket|urllib|requests|http|httpx|ctypes|pickle|marshal|pty|signal|multiprocessing|child_process|net|dgram|tls|https|cluster|worker_threads|vm|Kernel|IO|Open3|Process|Socket|Net|FileUtils|File|Dir|Runtime)\s*[.:]
             |\b(system|exec|execSync|execFile|spawn|spawnSync|popen|eval|compile|__import__|getattr|setattr|open|unlink|unlinkSync|rmdir|rmdirSync|rm|rmSync|remove|rmtree|rename|chmod|chown|kill|fork)\b
             |\brequire\s*\(\s*['\x22](node:)?(child_process|fs|fs/promises|net|http|https|os|vm|dgram|tls)['\x22]
             |\b(runpy|importlib|run_path|run_module|exec_module|load_module|load_source|execfile|SourceFileLoader|require_relative|dlopen|DynaLoader|XSLoader)\b
             |\b(do|load)\s*\(?\s*['\x22$]|\brequire\s*\(\s*[^'\x22\s)]|\brequire\s+[^'\x22\s(]
             |\bimport\s*\(
             |(?i)[a-z_.]*(exec|spawn|popen|proc_open|system|passthru)[a-z_]*\s*\(
             |`|\bqx\b|\$\{|\bsocket\b|\bsyscall\b|\bfs\.|\bimport\s+(os|subprocess|shutil|socket|ctypes|pty|requests|urllib)",
        )
        .expect("inline risky regex")
    });
    !RISKY.is_match(code) || plain_open(code)
}

/// `open("x")` / `open('x')` reading only (no mode argument) is the one
/// allowed use of `open`: json.load(open("package.json")).
fn plain_open(code: &str) -> bool {
    use once_cell::sync::Lazy;
    use regex::Regex;
    static OPEN_READ: Lazy<Regex> =
        // a literal project-relative path, read or written (`open('a.json')`,
        // `open("src/x.py", "w")`): an edit like `sed -i`
        Lazy::new(|| {
            Regex::new(
                r#"\bopen\(\s*("[A-Za-z0-9_][^"/~]*(/[A-Za-z0-9_][^"/~]*)*"|'[A-Za-z0-9_][^'/~]*(/[A-Za-z0-9_][^'/~]*)*')\s*(,\s*("[rwab+t]{1,3}"|'[rwab+t]{1,3}')\s*)?(,\s*encoding\s*=\s*("[\w-]+"|'[\w-]+')\s*)?\)"#,
            )
            .expect("open regex")
        });
    let without = OPEN_READ.replace_all(code, "READ");
    without != code && inline_code_is_plain(&without)
}

/// The inline code of an interpreter exec (`-c` / `-e` / stdin text), when
/// it has any.
pub fn inline_code(e: &Exec) -> Option<String> {
    if let Some(t) = &e.stdin_text {
        return Some(t.clone());
    }
    let lang = e
        .name
        .trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    // short options whose value is attached or follows (`-MFile::Path=rmtree`,
    // `-I lib`, `-W ignore`): their letters are not flags
    let (valued, separate): (&[char], &[char]) = match lang {
        "perl" => (
            &['M', 'm', 'I', 'x', 'i', 'l', '0', 'C', 'd', 'D', 'F', 'V'],
            &['I'],
        ),
        "ruby" | "irb" => (
            &['r', 'I', 'C', 'x', 'E', 'K', 'T', 'W', 'F', '0', 'i', 'l'],
            &['r', 'I', 'C', 'E'],
        ),
        _ if lang.starts_with("python") || lang == "py" || lang == "pypy" => {
            (&['W', 'X', 'm'], &['W', 'X', 'm'])
        }
        _ => (&[], &[]),
    };
    // modules loaded on the command line (`perl -MFile::Path=rmtree`,
    // `ruby -rfileutils`): part of the code
    let mut pre = String::new();
    let mut i = 1;
    while i < e.argv.len() {
        let a = &e.argv[i];
        if !a.starts_with('-') {
            return None;
        }
        if a.starts_with("--") {
            if let Some(v) = a.strip_prefix("--eval=") {
                return Some(format!("{pre}{v}"));
            }
            if matches!(a.as_str(), "--eval" | "--print") {
                return e.argv.get(i + 1).map(|c| format!("{pre}{c}"));
            }
            i += 1;
            continue;
        }
        let f = &a[1..];
        let mut skip_next = false;
        let mut digits_of: Option<char> = None;
        for (k, ch) in f.char_indices() {
            // perl's `-l` / `-0` take optional octal digits, then more flags
            if digits_of.is_some() && ch.is_ascii_digit() {
                continue;
            }
            digits_of = None;
            if lang == "perl" && matches!(ch, 'l' | '0') {
                digits_of = Some(ch);
                continue;
            }
            if valued.contains(&ch) {
                let rest = &f[k + 1..];
                let v = if rest.is_empty() && separate.contains(&ch) {
                    skip_next = true;
                    e.argv.get(i + 1).map(|s| s.as_str()).unwrap_or("")
                } else {
                    rest
                };
                if matches!(ch, 'M' | 'm' | 'r') && lang != "python" {
                    let (m, imports) = v.split_once('=').unwrap_or((v, ""));
                    let m = m.trim_start_matches('-');
                    pre.push_str(&format!("use {m} qw({}); ", imports.replace(',', " ")));
                    for f in imports.split(',').filter(|f| !f.is_empty()) {
                        pre.push_str(&format!("{f}(); "));
                    }
                }
                break;
            }
            if matches!(ch, 'c' | 'e' | 'E') || (f == "p") || (f == "r") {
                return e.argv.get(i + 1).map(|c| format!("{pre}{c}"));
            }
        }
        i += if skip_next { 2 } else { 1 };
    }
    None
}

/// Modules an inline Perl or Ruby program loads on its command line
/// (`-MModule=f`, `-mModule`, `-rlib`) that are not known to be harmless:
/// their imported functions hide what the code calls, so the code is not
/// judged plain.
pub fn unknown_cmdline_modules(e: &Exec) -> bool {
    let lang = e
        .name
        .trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let letters: &[char] = match lang {
        "perl" => &['M', 'm'],
        "ruby" | "irb" => &['r'],
        _ => return false,
    };
    const HARMLESS: &[&str] = &[
        "strict",
        "warnings",
        "utf8",
        "feature",
        "English",
        "constant",
        "open",
        "JSON::PP",
        "JSON",
        "JSON::XS",
        "Data::Dumper",
        "List::Util",
        "Scalar::Util",
        "Time::HiRes",
        "Time::Piece",
        "Time::Local",
        "MIME::Base64",
        "Digest::MD5",
        "Digest::SHA",
        "Encode",
        "Getopt::Long",
        "Text::Wrap",
        "Term::ANSIColor",
        "URI::Escape",
        "bigint",
        "bignum",
        "Math::BigInt",
        "charnames",
        "Text::Abbrev",
        "json",
        "yaml",
        "date",
        "time",
        "set",
        "pp",
        "csv",
        "securerandom",
        "digest",
        "base64",
        "English",
        "Text::Tabs",
    ];
    let mut i = 1;
    while i < e.argv.len() {
        let a = &e.argv[i];
        if !a.starts_with('-') || a == "--" {
            break;
        }
        if let Some(ch) = a.chars().nth(1)
            && letters.contains(&ch)
            && !a.starts_with("--")
        {
            let v = if a.len() > 2 {
                a[2..].to_string()
            } else {
                i += 1;
                e.argv.get(i).cloned().unwrap_or_default()
            };
            let m = v.trim_start_matches('-');
            let m = m.split_once('=').map_or(m, |x| x.0);
            if !HARMLESS.contains(&m) {
                return true;
            }
        }
        i += 1;
    }
    false
}

/// Everyday commands with an effect worth a prompt (in a posture):
/// discarding uncommitted work (`git checkout -- FILE`, `git checkout .`,
/// `git restore FILE`), killing processes by pattern (`pkill -f`),
/// uploading a local file (`curl -F f=@x`, `-T`, `--data-binary @x`) and
/// creating cloud resources (`aws s3 mb`, `create-*`).
pub fn m_everyday_effect(ctx: &RuleCtx, _: usize, e: &Exec) -> Option<&'static str> {
    ctx.posture?;
    let a = &e.argv;
    match e.name.as_str() {
        "git" => {
            let (si, sub) = git_sub(a)?;
            let rest = &a[si + 1..];
            let staged_only = rest.iter().any(|w| w == "--staged" || w == "-S")
                && !rest.iter().any(|w| w == "--worktree" || w == "-W");
            match sub {
                "restore" if !staged_only && rest.iter().any(|w| !w.starts_with('-')) => {
                    Some("discards uncommitted changes to the named files (git restore)")
                }
                "checkout"
                    if rest.iter().any(|w| w == "--")
                        || rest.iter().all(|w| w == "." || w == "-f" || w == "--force")
                            && rest.iter().any(|w| w == ".") =>
                {
                    Some("discards uncommitted changes to the named files (git checkout -- FILE)")
                }
                _ => None,
            }
        }
        "pkill" | "killall"
            if a.iter()
                .any(|w| w == "-f" || w == "--full" || w == "-r" || w == "--regexp") =>
        {
            Some("kills every process whose command line matches a pattern")
        }
        "curl" => {
            let mut it = a.iter().peekable();
            while let Some(w) = it.next() {
                let val = |w: &str, it: &mut std::iter::Peekable<std::slice::Iter<String>>| {
                    if w.contains('=') && w.starts_with("--") {
                        w.split_once('=').map(|x| x.1.to_string())
                    } else {
                        it.peek().map(|v| v.to_string())
                    }
                };
                let w = w.as_str();
                if matches!(w, "-F" | "--form") || w.starts_with("--form=") {
                    if val(w, &mut it).is_some_and(|v| v.contains("=@") || v.contains("=<")) {
                        return Some("uploads a local file (curl -F name=@file)");
                    }
                } else if matches!(w, "-T" | "--upload-file") || w.starts_with("--upload-file=") {
                    return Some("uploads a local file (curl -T)");
                } else if matches!(
                    w,
                    "-d" | "--data" | "--data-binary" | "--data-raw" | "--data-urlencode"
                ) && val(w, &mut it).is_some_and(|v| v.starts_with('@') && v != "@-")
                {
                    return Some("uploads a local file (curl --data @file)");
                }
            }
            None
        }
        "wget" | "wget2"
            if a.iter()
                .any(|w| w.starts_with("--post-file") || w.starts_with("--body-file")) =>
        {
            Some("uploads a local file (wget --post-file)")
        }
        "nc" | "ncat" | "netcat" | "socat" | "telnet" | "openssl"
            if e.redirs
                .iter()
                .any(|r| r.op == RedirOp::In && !r.target.starts_with("/dev/fd/"))
                || (e.name == "socat"
                    && a.iter().any(|w| {
                        let l = w.to_ascii_lowercase();
                        l.starts_with("file:") || l.starts_with("open:")
                    })
                    && a.iter().any(|w| w.to_ascii_lowercase().starts_with("tcp"))) =>
        {
            Some("sends a local file over a raw network connection")
        }
        "scp" | "rsync" => {
            // the last operand is a remote destination: an upload
            let ops = operands(
                a,
                &[
                    "-i", "-P", "-p", "-o", "-F", "-S", "-e", "--rsh", "-c", "-l", "-J",
                ],
            );
            let dest = ops.last().copied().unwrap_or("");
            let remote = |w: &str| {
                w.split_once(':')
                    .is_some_and(|(h, _)| !h.is_empty() && !h.contains('/'))
                    || w.starts_with("rsync://")
            };
            (ops.len() >= 2 && remote(dest) && !ops[..ops.len() - 1].iter().any(|w| remote(w)))
                .then_some("uploads local files to another host")
        }
        "aws" => {
            let ops = operands(a, &["--profile", "--region", "--output", "--endpoint-url"]);
            let creates = ops.get(1).is_some_and(|s| {
                *s == "mb"
                    || s.starts_with("create-")
                    || s.starts_with("put-")
                    || s.starts_with("run-")
            });
            creates.then_some("creates or changes a cloud resource (aws ... mb / create-*)")
        }
        _ => None,
    }
}

/// Whether an everyday effect (a description from the function above)
/// acts only over the network: uploads, a file sent over a raw
/// connection, a cloud resource created. The sandbox contains these only
/// when it has no network.
pub fn acts_over_network(why: &str) -> bool {
    why.starts_with("uploads ")
        || why.starts_with("sends a local file over")
        || why.starts_with("creates or changes a cloud resource")
}

/// A shell handed to a program as an argument (`apt-get -o
/// APT::Update::Pre-Invoke::=/bin/sh`, `gcc -wrapper /bin/sh,-s`, `fzf --bind
/// 'enter:execute(/bin/sh)'`, `mail --exec='!/bin/sh'`): the GTFOBins shell
/// function of a program the knowledge base does not describe (in a
/// posture; data and file tools excepted).
pub fn m_shell_path_arg(ctx: &RuleCtx, _: usize, e: &Exec) -> bool {
    use once_cell::sync::Lazy;
    use regex::Regex;
    static SH: Lazy<Regex> = Lazy::new(|| {
        Regex::new(r#"(^|[=!(:,'"\s{])((\.\./)+|(/usr)?(/local)?/)s?bin/(ba|da|z|k|c|tc|fi|a|mk|rba)?sh($|[\s,;)'"}])"#)
            .expect("shell path regex")
    });
    const DATA: &[&str] = &[
        "echo",
        "printf",
        "cat",
        "ls",
        "file",
        "stat",
        "readlink",
        "realpath",
        "which",
        "whereis",
        "type",
        "head",
        "tail",
        "less",
        "more",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "sed",
        "awk",
        "wc",
        "diff",
        "cmp",
        "md5sum",
        "sha256sum",
        "sha1sum",
        "xxd",
        "od",
        "strings",
        "ldd",
        "nm",
        "objdump",
        "readelf",
        "ln",
        "cp",
        "mv",
        "install",
        "chmod",
        "chown",
        "chsh",
        "usermod",
        "useradd",
        "adduser",
        "docker",
        "podman",
        "nerdctl",
        "kubectl",
        "test",
        "[",
        "[[",
        "tee",
        "git",
        "command",
        "hash",
        "man",
        "info",
        "dpkg",
        "rpm",
        "apt-file",
        "exec",
        "env",
    ];
    if ctx.posture.is_none()
        || e.argv.len() < 2
        || is_shell(&e.name)
        || is_interpreter(&e.name)
        || DATA.contains(&e.name.as_str())
        || knowledge::program(&e.name).is_some_and(|p| p.privilege)
    {
        return false;
    }
    e.argv[1..].iter().any(|a| {
        // the shell a build uses (make SHELL=/bin/bash, CONFIG_SHELL=..)
        let build_shell = a.split_once('=').is_some_and(|(k, _)| k.ends_with("SHELL"));
        !build_shell && a.len() < 4096 && SH.is_match(a)
    })
}

/// Whether shell glob `pat` (`*`, `?`, `[...]`) may match `name`: a
/// conservative test (a bracket expression matches any one character).
fn glob_may_match(pat: &str, name: &str) -> bool {
    fn go(p: &[u8], n: &[u8]) -> bool {
        match p.first() {
            None => n.is_empty(),
            Some(b'*') => (0..=n.len()).any(|i| go(&p[1..], &n[i..])),
            Some(b'?') => !n.is_empty() && go(&p[1..], &n[1..]),
            Some(b'[') => match p.iter().position(|&c| c == b']') {
                Some(end) if !n.is_empty() => go(&p[end + 1..], &n[1..]),
                _ => false,
            },
            Some(&c) => n.first() == Some(&c) && go(&p[1..], &n[1..]),
        }
    }
    go(pat.as_bytes(), name.as_bytes())
}

/// A path operand as the program sees it: relative to the directory an
/// earlier `cd` of the same command line entered (`cd ~/.aws && cat
/// credentials`).
pub fn resolved(e: &Exec, a: &str) -> String {
    if a.is_empty() || a.starts_with(['/', '~', '-', '$']) || a.contains(DYN) || a.contains("://") {
        return a.to_string();
    }
    match &e.cwd {
        Some(c) => crate::words::norm_path(&format!("{c}/{a}")),
        None => a.to_string(),
    }
}

/// The trees a recursive reader searches (`grep -r PAT DIR..`, `rg PAT
/// DIR`, `ag`, `ack`), resolved against an earlier `cd`, each with the
/// file-name globs it is limited to (`--include=G`, `-g G`, `--glob=G`).
pub fn recursive_reader_roots(e: &Exec) -> Vec<(String, Vec<String>)> {
    let n = e.name.as_str();
    let always = matches!(n, "rg" | "ag" | "ack" | "ack-grep" | "ugrep" | "ug");
    let grep = matches!(n, "grep" | "egrep" | "fgrep" | "zgrep");
    if !(always || grep) {
        return Vec::new();
    }
    let a = &e.argv;
    let recursive = always
        || a[1..].iter().any(|w| {
            w == "--recursive"
                || w == "--dereference-recursive"
                || w.starts_with('-') && !w.starts_with("--") && w.contains(['r', 'R'])
        });
    if !recursive {
        return Vec::new();
    }
    let mut includes = Vec::new();
    let mut ops = Vec::new();
    let mut explicit_pattern = false;
    let mut i = 1;
    while i < a.len() {
        let w = a[i].as_str();
        let val = |i: &mut usize| -> Option<String> {
            *i += 1;
            a.get(*i).cloned()
        };
        if let Some(v) = w
            .strip_prefix("--include=")
            .or_else(|| w.strip_prefix("--glob="))
            .or_else(|| w.strip_prefix("--iglob="))
        {
            includes.push(v.to_string());
        } else if matches!(w, "-g" | "--glob" | "--iglob" | "--include") {
            if let Some(v) = val(&mut i) {
                includes.push(v);
            }
        } else if matches!(w, "-e" | "--regexp" | "-f" | "--file") {
            explicit_pattern = true;
            i += 1;
        } else if matches!(
            w,
            "-m" | "-A" | "-B" | "-C" | "-t" | "-T" | "--type" | "--exclude" | "-M" | "-j"
        ) {
            i += 1;
        } else if w == "--" {
            ops.extend(a[i + 1..].iter().cloned());
            break;
        } else if !w.starts_with('-') {
            ops.push(w.to_string());
        }
        i += 1;
    }
    if !explicit_pattern && !ops.is_empty() {
        ops.remove(0);
    }
    if ops.is_empty() {
        ops.push(".".into());
    }
    let includes: Vec<String> = includes
        .into_iter()
        .map(|g| g.trim_start_matches('!').to_string())
        .collect();
    ops.iter()
        .map(|o| {
            let r = resolved(e, o);
            let r = if r == "." {
                e.cwd.clone().unwrap_or(r)
            } else {
                r
            };
            let r = crate::words::norm_path(&r);
            let r = if r.len() > 1 {
                r.trim_end_matches('/').to_string()
            } else {
                r
            };
            (r, includes.clone())
        })
        .collect()
}
