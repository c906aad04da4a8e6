//! Words shared by the analyzer and the rules: the marker for run-time values,
//! path normalisation and argv display. Kept apart so `analyze` and `rules`
//! never import each other (rules read analyses; analyses need only these).

use once_cell::sync::Lazy;

/// Marks a character whose value is only known at run time.
pub const DYN: char = '\u{1}';

/// Separates the elements of an array value (`a=(x y)`), so `"${a[@]}"`
/// expands to one word per element while `$a` is the first element.
pub const ARRAY_SEP: char = '\u{2}';

static HOME_DIR: Lazy<Option<String>> = Lazy::new(|| {
    std::env::var("HOME")
        .ok()
        .map(|h| h.trim_end_matches('/').to_string())
        .filter(|h| h.matches('/').count() >= 2)
});

/// A normalised path: `/`-separated, `.`/`..`/`//` collapsed, `~` for home.
pub fn norm_path(p: &str) -> String {
    let mut s = p.replace('\\', "/");
    let b = s.as_bytes();
    if b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':' {
        s = s.to_lowercase();
    }
    for pre in ["${HOME}", "$HOME"] {
        if let Some(rest) = s.strip_prefix(pre)
            && (rest.is_empty() || rest.starts_with('/'))
        {
            s = format!("~{rest}");
        }
    }
    if let Some(rest) = s
        .strip_prefix("${HERMES_HOME}")
        .or_else(|| s.strip_prefix("$HERMES_HOME"))
    {
        s = format!("~/.hermes{rest}");
    }
    if let Some(home) = HOME_DIR.as_deref()
        && let Some(rest) = s.strip_prefix(home)
        && (rest.is_empty() || rest.starts_with('/'))
    {
        s = format!("~{rest}");
    }
    let (root, rest): (&str, &str) = if let Some(r) = s.strip_prefix('~') {
        if r.is_empty() || r.starts_with('/') {
            ("~", r)
        } else {
            ("", s.as_str())
        }
    } else if let Some(r) = s.strip_prefix('/') {
        ("/", r)
    } else if s.len() >= 2 && s.as_bytes()[1] == b':' {
        let (d, r) = s.split_at(2);
        (if d.is_empty() { "" } else { &s[..2] }, r)
    } else {
        ("", s.as_str())
    };
    let mut comps: Vec<&str> = Vec::new();
    let mut root = root.to_string();
    for c in rest.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                if comps.pop().is_none() {
                    if root == "~" {
                        root = "/".into();
                        comps.push("home");
                    } else if root.is_empty() {
                        comps.push("..");
                    }
                }
            }
            c => comps.push(c),
        }
    }
    // `comps` may contain ".." only for relative paths
    let joined = comps.join("/");
    match root.as_str() {
        "/" => format!("/{joined}"),
        "~" => {
            if joined.is_empty() {
                "~".into()
            } else {
                format!("~/{joined}")
            }
        }
        "" => {
            if joined.is_empty() {
                ".".into()
            } else {
                joined
            }
        }
        d => format!("{d}/{joined}"),
    }
}

/// argv as a shell would show it (quoted where needed).
pub fn display_argv(argv: &[String]) -> String {
    let mut s = String::with_capacity(argv.iter().map(|a| a.len() + 3).sum());
    for (k, a) in argv.iter().enumerate() {
        if k > 0 {
            s.push(' ');
        }
        let owned;
        let a: &str = if a.contains(DYN) {
            owned = a.replace(DYN, "$?");
            &owned
        } else {
            a
        };
        let special = |(i, c): (usize, char)| {
            c.is_whitespace()
                || matches!(
                    c,
                    '\'' | '"'
                        | '$'
                        | '`'
                        | '\\'
                        | '|'
                        | '&'
                        | ';'
                        | '<'
                        | '>'
                        | '('
                        | ')'
                        | '*'
                        | '?'
                        | '['
                        | ']'
                        | '#'
                        | '{'
                        | '}'
                )
                || (c == '~' && i > 0)
        };
        if a.is_empty() {
            s.push_str("''");
        } else if a.char_indices().any(special) {
            s.push('\'');
            for c in a.chars() {
                if c == '\'' {
                    s.push_str("'\\''");
                } else {
                    s.push(c);
                }
            }
            s.push('\'');
        } else {
            s.push_str(a);
        }
    }
    s
}
