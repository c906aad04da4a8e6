//! The plain argv helpers (`operands`, `tail`): no knowledge of programs,
//! no analysis. A module at the bottom so that the analyser and every
//! matcher can use them without importing each other ([`crate::ctx`]
//! re-exports them for the matchers).

/// Operands of a command: words after options (GNU permutation: options may
/// follow operands; `--` ends options). `vals` are options taking a value.
pub(crate) fn operands<'a>(argv: &'a [String], vals: &[&str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut i = 1;
    let mut opts_done = false;
    while i < argv.len() {
        let a = argv[i].as_str();
        if opts_done || !a.starts_with('-') || a == "-" {
            out.push(a);
            i += 1;
            continue;
        }
        if a == "--" {
            opts_done = true;
            i += 1;
            continue;
        }
        if vals.contains(&a) {
            i += 2;
            continue;
        }
        i += 1;
    }
    out
}

/// The arguments after the program name (empty for a bare redirection).
pub(crate) fn tail(a: &[String]) -> &[String] {
    a.get(1..).unwrap_or(&[])
}
