//! Program names: the command name of an argv[0] and the families of
//! programs (shells, interpreters) that several analyses and the program
//! knowledge base need. A leaf module, so both can use it without an
//! import circle.

/// Basename of a program path, lowercased, without `.exe`.
pub fn cmd_name(argv0: &str) -> String {
    let base = argv0.rsplit(['/', '\\']).next().unwrap_or(argv0);
    // ASCII fast path: the same result as `to_lowercase` for ASCII
    let mut n = if base.is_ascii() {
        base.to_ascii_lowercase()
    } else {
        base.to_lowercase()
    };
    for ext in [".exe", ".com", ".bat", ".cmd"] {
        if n.len() > ext.len() && n.ends_with(ext) {
            n.truncate(n.len() - ext.len());
        }
    }
    n
}

pub fn is_shell(name: &str) -> bool {
    matches!(
        name,
        "sh" | "bash"
            | "zsh"
            | "dash"
            | "ksh"
            | "mksh"
            | "ash"
            | "fish"
            | "csh"
            | "tcsh"
            | "rbash"
            | "yash"
            | "posh"
            | "elvish"
            | "sash"
            | "oksh"
            | "pdksh"
    )
}

pub fn is_interpreter(name: &str) -> bool {
    let n = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    matches!(
        n,
        "python"
            | "py"
            | "pypy"
            | "perl"
            | "ruby"
            | "node"
            | "nodejs"
            | "php"
            | "lua"
            | "luajit"
            | "tclsh"
            | "wish"
            | "deno"
            | "bun"
            | "osascript"
            | "rscript"
            | "julia"
            | "groovy"
            | "jshell"
            | "irb"
            | "powershell"
            | "pwsh"
            | "awk"
            | "gawk"
            | "mawk"
            | "nawk"
            | "expect"
            | "guile"
            | "racket"
            | "sbcl"
            | "elixir"
            | "erl"
            | "scala"
            | "kotlin"
    ) || n.starts_with("python")
}

/// Git's subcommand and its index in `argv` (global options and their
/// values skipped).
pub fn git_sub(argv: &[String]) -> Option<(usize, &str)> {
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].as_str();
        if matches!(
            a,
            "-C" | "-c"
                | "--git-dir"
                | "--work-tree"
                | "--namespace"
                | "--exec-path"
                | "--super-prefix"
                | "--config-env"
        ) {
            i += 2;
            continue;
        }
        if a.starts_with('-') {
            i += 1;
            continue;
        }
        return Some((i, a));
    }
    None
}
