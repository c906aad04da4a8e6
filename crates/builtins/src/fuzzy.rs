//! Find-and-replace that forgives what models get wrong when they quote a
//! file: the original's chain of matching strategies, tried in order from
//! exact to fuzzy (`exact`, `line_trimmed`, `whitespace_normalized`,
//! `indentation_flexible`, `escape_normalized`, `trimmed_boundary`,
//! `unicode_normalized`, `block_anchor`, `context_aware`); the first that
//! finds at least one match wins. Non-exact matches re-indent the
//! replacement from the model's base indent to the file's.
//!
//! Shared by the `patch` tool, the V4A patch applier and `skill_manage`
//! patch (one leaf module, no dependencies on its users).

use similar::TextDiff;

/// A matched region of the content (byte offsets).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

/// Why nothing was replaced.
#[derive(Debug, Clone)]
pub enum FuzzyError {
    Empty,
    Identical,
    NoMatch { suggestions: String },
    Ambiguous { count: usize, previews: Vec<String> },
    EscapeDrift,
}

impl FuzzyError {
    /// The message for the model.
    pub fn message(&self) -> String {
        match self {
            FuzzyError::Empty => "old_string must not be empty".into(),
            FuzzyError::Identical => {
                "old_string and new_string are identical: nothing to change".into()
            }
            FuzzyError::NoMatch { suggestions } => {
                let mut m = "Could not find a match for old_string in the file.".to_string();
                if !suggestions.is_empty() {
                    m.push_str("\n\nDid you mean one of these sections?\n");
                    m.push_str(suggestions);
                }
                m
            }
            FuzzyError::Ambiguous { count, previews } => format!(
                "Found {count} matches for old_string. Provide more surrounding context to make it unique, or set replace_all=true to replace every match. Matches start at: {}",
                previews.join(" | ")
            ),
            FuzzyError::EscapeDrift => "old_string/new_string contain escaped quotes (\\' or \\\") that the matched file region does not: the strings look double-escaped. Send them with plain quotes.".into(),
        }
    }
}

/// The result of a successful replacement.
#[derive(Debug, Clone)]
pub struct Replaced {
    pub content: String,
    pub count: usize,
    pub strategy: &'static str,
}

/// Replace `old` with `new` in `content` (see the module doc).
pub fn find_and_replace(
    content: &str,
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<Replaced, FuzzyError> {
    if old.is_empty() {
        return Err(FuzzyError::Empty);
    }
    if old == new {
        return Err(FuzzyError::Identical);
    }
    let (strategy, spans) = find(content, old);
    if spans.is_empty() {
        return Err(FuzzyError::NoMatch {
            suggestions: suggestions(content, old),
        });
    }
    if spans.len() > 1 && !replace_all {
        let previews = spans
            .iter()
            .take(5)
            .map(|s| {
                let line = content[..s.start].matches('\n').count() + 1;
                let text: String = content[s.start..s.end]
                    .lines()
                    .next()
                    .unwrap_or("")
                    .chars()
                    .take(60)
                    .collect();
                format!("line {line}: {}", text.trim())
            })
            .collect();
        return Err(FuzzyError::Ambiguous {
            count: spans.len(),
            previews,
        });
    }
    let mut out = String::with_capacity(content.len() + new.len());
    let mut last = 0;
    for s in &spans {
        let region = &content[s.start..s.end];
        let replacement = if strategy == "exact" {
            unescape_controls(new, region).into_owned()
        } else {
            if has_escaped_quotes(old) && has_escaped_quotes(new) && !has_escaped_quotes(region) {
                return Err(FuzzyError::EscapeDrift);
            }
            adapt(new, old, region, strategy)
        };
        out.push_str(&content[last..s.start]);
        out.push_str(&replacement);
        last = s.end;
    }
    out.push_str(&content[last..]);
    Ok(Replaced {
        content: out,
        count: spans.len(),
        strategy,
    })
}

/// A literal `\t` or `\r` in the replacement becomes a real tab or
/// carriage return when the matched region holds real ones (the model
/// escaped what JSON carries fine), as the original does for every
/// strategy, exact included.
fn unescape_controls<'a>(new: &'a str, region: &str) -> std::borrow::Cow<'a, str> {
    if !new.contains('\\') {
        return std::borrow::Cow::Borrowed(new);
    }
    let mut out = std::borrow::Cow::Borrowed(new);
    if region.contains('\t') && out.contains("\\t") {
        out = std::borrow::Cow::Owned(out.replace("\\t", "\t"));
    }
    if region.contains('\r') && out.contains("\\r") {
        out = std::borrow::Cow::Owned(out.replace("\\r", "\r"));
    }
    out
}

fn has_escaped_quotes(s: &str) -> bool {
    s.contains("\\'") || s.contains("\\\"")
}

/// Fit the model's replacement to the matched region: unescape what the
/// file really holds, re-indent, keep the file's unicode punctuation.
fn adapt(new: &str, old: &str, region: &str, strategy: &str) -> String {
    let mut new = new.to_string();
    if strategy == "escape_normalized" {
        if !region.contains('\r') {
            // a CRLF file whose line ends the caller turned into '\n'
            new = new.replace("\\r\\n", "\n");
        }
        new = new.replace("\\n", "\n");
    }
    new = unescape_controls(&new, region).into_owned();
    if strategy == "unicode_normalized" {
        // The file uses typographic punctuation: keep it where the model wrote ASCII.
        new = restyle_quotes(&new, region, '"', '\u{201c}', '\u{201d}');
        new = restyle_quotes(&new, region, '\'', '\u{2018}', '\u{2019}');
        for (fancy, plain) in [("\u{2026}", "..."), ("\u{2014}", "--")] {
            if region.contains(fancy) && !old.contains(fancy) {
                new = new.replace(plain, fancy);
            }
        }
    }
    if strategy == "escape_normalized" {
        // the model's indent is what its escapes stand for
        let old = old
            .replace("\\n", "\n")
            .replace("\\t", "\t")
            .replace("\\r", "\r");
        return reindent(&new, &old, region);
    }
    reindent(&new, old, region)
}

/// Turn ASCII `plain` quotes into the region's typographic ones: opening
/// and closing alternate when the region has both, else the one it has.
fn restyle_quotes(new: &str, region: &str, plain: char, open: char, close: char) -> String {
    let (has_open, has_close) = (region.contains(open), region.contains(close));
    if !has_open && !has_close {
        return new.to_string();
    }
    let mut out = String::with_capacity(new.len());
    let mut opening = true;
    for c in new.chars() {
        if c == plain {
            let q = match (has_open, has_close) {
                (true, true) => {
                    let q = if opening { open } else { close };
                    opening = !opening;
                    q
                }
                (true, false) => open,
                _ => close,
            };
            out.push(q);
        } else {
            out.push(c);
        }
    }
    out
}

fn indent_of(line: &str) -> &str {
    let n = line.len() - line.trim_start_matches([' ', '\t']).len();
    &line[..n]
}

/// The indent of the first non-blank line (the original's base indent).
fn base_indent(text: &str) -> Option<&str> {
    text.split('\n')
        .find(|l| !l.trim().is_empty())
        .map(indent_of)
}

/// Move the replacement from the model's base indent to the file's: a
/// line's extra indent is kept, a line shallower than the base is put at
/// the file's base, blank lines are left as they are (never padded).
fn reindent(new: &str, old: &str, region: &str) -> String {
    let (Some(model), Some(file)) = (base_indent(old), base_indent(region)) else {
        return new.to_string();
    };
    if model == file {
        return new.to_string();
    }
    let mut out = String::with_capacity(new.len());
    for (i, line) in new.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if line.trim().is_empty() {
            out.push_str(line);
        } else if let Some(rest) = line.strip_prefix(model) {
            out.push_str(file);
            out.push_str(rest);
        } else {
            out.push_str(file);
            out.push_str(line.trim_start_matches([' ', '\t']));
        }
    }
    out
}

/// `s` with every run of spaces and tabs made one space, and for each
/// byte of the result the offset of the byte it came from.
fn collapse_with_origin(s: &str) -> (String, Vec<usize>) {
    let mut bytes = Vec::with_capacity(s.len());
    let mut origin = Vec::with_capacity(s.len());
    let mut prev_ws = false;
    for (i, &b) in s.as_bytes().iter().enumerate() {
        let ws = b == b' ' || b == b'\t';
        if ws && prev_ws {
            continue;
        }
        bytes.push(if ws { b' ' } else { b });
        origin.push(i);
        prev_ws = ws;
    }
    // only ASCII runs were replaced: still UTF-8
    let out = String::from_utf8(bytes).expect("UTF-8 with ASCII runs collapsed");
    (out, origin)
}

/// The original's whitespace_normalized: runs of spaces and tabs collapsed
/// in the whole text and in `old`, `old` found anywhere (inside a line
/// too), each match mapped back to the file's bytes.
fn collapsed_matches(content: &str, old: &str) -> Vec<Span> {
    let (target, _) = collapse_with_origin(old);
    if target.trim().is_empty() {
        return Vec::new();
    }
    let (normed, origin) = collapse_with_origin(content);
    normed
        .match_indices(target.as_str())
        .map(|(at, m)| {
            let end_n = at + m.len();
            Span {
                start: origin[at],
                end: origin.get(end_n).copied().unwrap_or(content.len()),
            }
        })
        .collect()
}

/// Lines of `s` with their byte offsets (start, end without the newline).
fn line_spans(s: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        if b == b'\n' {
            out.push((start, i));
            start = i + 1;
        }
    }
    out.push((start, s.len()));
    out
}

fn collapse_ws(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_ws = false;
    for c in s.chars() {
        if c == ' ' || c == '\t' {
            if !in_ws {
                out.push(' ');
            }
            in_ws = true;
        } else {
            out.push(c);
            in_ws = false;
        }
    }
    out
}

const UNICODE_MAP: &[(&str, &str)] = &[
    ("\u{201c}", "\""),
    ("\u{201d}", "\""),
    ("\u{2018}", "'"),
    ("\u{2019}", "'"),
    ("\u{2014}", "--"),
    ("\u{2013}", "-"),
    ("\u{2026}", "..."),
    ("\u{00a0}", " "),
];

fn unicode_norm(s: &str) -> String {
    let mut out = s.to_string();
    for (fancy, plain) in UNICODE_MAP {
        if out.contains(fancy) {
            out = out.replace(fancy, plain);
        }
    }
    out
}

/// Windows of `n` content lines whose normalised lines equal the
/// normalised `old` lines, without overlaps.
fn line_windows(
    content: &str,
    lines: &[(usize, usize)],
    old: &str,
    norm: &dyn Fn(&str) -> String,
) -> Vec<Span> {
    let old_lines: Vec<String> = old.split('\n').map(norm).collect();
    let n = old_lines.len();
    if n == 0 || n > lines.len() {
        return Vec::new();
    }
    let normed: Vec<String> = lines.iter().map(|&(s, e)| norm(&content[s..e])).collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i + n <= lines.len() {
        if (0..n).all(|k| normed[i + k] == old_lines[k]) {
            out.push(Span {
                start: lines[i].0,
                end: lines[i + n - 1].1,
            });
            i += n;
        } else {
            i += 1;
        }
    }
    out
}

/// difflib's `SequenceMatcher.ratio` role: 2*matches / total characters.
/// Bounded: when the lengths alone make a good ratio impossible the
/// length bound is returned (every caller compares against a threshold of
/// 0.3 or more), and the diff itself stops after a few milliseconds, so a
/// minified one-line file cannot stall a patch.
fn ratio(a: &str, b: &str) -> f32 {
    if a == b {
        return 1.0;
    }
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let (la, lb) = (a.len() as f32, b.len() as f32);
    let bound = 2.0 * la.min(lb) / (la + lb);
    if bound < 0.3 {
        return bound;
    }
    TextDiff::configure()
        .timeout(std::time::Duration::from_millis(5))
        .diff_chars(a, b)
        .ratio()
}

/// A per-line normalisation of a line-based strategy.
type Norm = dyn Fn(&str) -> String;

/// Run the chain; returns the winning strategy and its spans.
pub fn find(content: &str, old: &str) -> (&'static str, Vec<Span>) {
    // 1. exact (non-overlapping, like str.replace)
    let spans: Vec<Span> = content
        .match_indices(old)
        .map(|(i, m)| Span {
            start: i,
            end: i + m.len(),
        })
        .collect();
    if !spans.is_empty() {
        return ("exact", spans);
    }
    let old_trim_nl = old.trim_end_matches('\n');
    let lines = line_spans(content);
    // 2-4. line based normalisations
    let strategies: [(&'static str, &Norm); 3] = [
        ("line_trimmed", &|l: &str| l.trim().to_string()),
        ("whitespace_normalized", &|l: &str| collapse_ws(l.trim())),
        ("indentation_flexible", &|l: &str| {
            l.trim_start_matches([' ', '\t']).to_string()
        }),
    ];
    for (name, norm) in strategies {
        if name == "whitespace_normalized" {
            let spans = collapsed_matches(content, old);
            if !spans.is_empty() {
                return (name, spans);
            }
        }
        let spans = line_windows(content, &lines, old_trim_nl, norm);
        if !spans.is_empty() {
            return (name, spans);
        }
    }
    // 5. escape_normalized
    if old.contains("\\n") || old.contains("\\t") || old.contains("\\r") {
        let unescaped = old
            .replace("\\n", "\n")
            .replace("\\t", "\t")
            .replace("\\r", "\r");
        let mut spans: Vec<Span> = content
            .match_indices(&unescaped)
            .map(|(i, m)| Span {
                start: i,
                end: i + m.len(),
            })
            .collect();
        if spans.is_empty() && unescaped.contains("\r\n") {
            // `\r\n` escapes against a CRLF file read with '\n' line ends
            let lf = unescaped.replace("\r\n", "\n");
            spans = content
                .match_indices(&lf)
                .map(|(i, m)| Span {
                    start: i,
                    end: i + m.len(),
                })
                .collect();
        }
        if !spans.is_empty() {
            return ("escape_normalized", spans);
        }
    }
    // 6. trimmed_boundary: first and last line trimmed, the middle exact
    let old_lines: Vec<&str> = old_trim_nl.split('\n').collect();
    let n = old_lines.len();
    if n <= lines.len() {
        let first = old_lines[0].trim();
        let last = old_lines[n - 1].trim();
        let mut spans = Vec::new();
        let mut i = 0;
        while i + n <= lines.len() {
            let l = |k: usize| &content[lines[i + k].0..lines[i + k].1];
            let ok = l(0).trim() == first
                && (n == 1 || l(n - 1).trim() == last)
                && (1..n.saturating_sub(1)).all(|k| l(k) == old_lines[k]);
            if ok {
                spans.push(Span {
                    start: lines[i].0,
                    end: lines[i + n - 1].1,
                });
                i += n;
            } else {
                i += 1;
            }
        }
        if !spans.is_empty() {
            return ("trimmed_boundary", spans);
        }
    }
    // 7. unicode_normalized: exact on normalised lines, then trimmed
    if !content.is_ascii() || !old.is_ascii() {
        let spans = line_windows(content, &lines, old_trim_nl, &|l: &str| unicode_norm(l));
        if !spans.is_empty() {
            return ("unicode_normalized", spans);
        }
        let spans = line_windows(content, &lines, old_trim_nl, &|l: &str| {
            unicode_norm(l).trim().to_string()
        });
        if !spans.is_empty() {
            return ("unicode_normalized", spans);
        }
        // a fragment inside one line
        if n == 1 {
            let target = unicode_norm(old);
            let mut spans = Vec::new();
            for &(s, e) in &lines {
                let line = &content[s..e];
                if let Some(sp) = map_fragment(line, &target) {
                    spans.push(Span {
                        start: s + sp.start,
                        end: s + sp.end,
                    });
                }
            }
            if !spans.is_empty() {
                return ("unicode_normalized", spans);
            }
        }
    }
    // 8. block_anchor: first and last lines equal after strip, the middle similar
    if n >= 2 && n <= lines.len() {
        let first = old_lines[0].trim();
        let last = old_lines[n - 1].trim();
        let middle_old = old_lines[1..n - 1].join("\n");
        let mut cands: Vec<(Span, f32)> = Vec::new();
        for i in 0..=(lines.len() - n) {
            let l = |k: usize| &content[lines[i + k].0..lines[i + k].1];
            if l(0).trim() == first && l(n - 1).trim() == last {
                let middle: Vec<&str> = (1..n - 1).map(l).collect();
                let r = if n == 2 {
                    1.0
                } else {
                    ratio(&middle.join("\n"), &middle_old)
                };
                cands.push((
                    Span {
                        start: lines[i].0,
                        end: lines[i + n - 1].1,
                    },
                    r,
                ));
            }
        }
        let threshold = if cands.len() == 1 { 0.50 } else { 0.70 };
        let spans: Vec<Span> = cands
            .into_iter()
            .filter(|(_, r)| *r >= threshold)
            .map(|(s, _)| s)
            .collect();
        if !spans.is_empty() {
            return ("block_anchor", spans);
        }
    }
    // 9. context_aware: half the lines at least 80% similar (time-boxed:
    // the last resort must not stall on a huge file)
    if n >= 2 && n <= lines.len() {
        let until = std::time::Instant::now() + std::time::Duration::from_secs(2);
        let mut spans = Vec::new();
        let mut i = 0;
        while i + n <= lines.len() && std::time::Instant::now() < until {
            let good = (0..n)
                .filter(|&k| {
                    let l = &content[lines[i + k].0..lines[i + k].1];
                    ratio(l.trim(), old_lines[k].trim()) >= 0.80
                })
                .count();
            if good * 2 >= n && good > 0 {
                spans.push(Span {
                    start: lines[i].0,
                    end: lines[i + n - 1].1,
                });
                i += n;
            } else {
                i += 1;
            }
        }
        if !spans.is_empty() {
            return ("context_aware", spans);
        }
    }
    ("none", Vec::new())
}

/// Find `target` (already normalised) in `line` after normalising it, and
/// map the match back to `line`'s own byte offsets.
fn map_fragment(line: &str, target: &str) -> Option<Span> {
    let mut normed = String::new();
    let mut origin: Vec<usize> = Vec::new(); // normalised byte -> original byte
    for (i, c) in line.char_indices() {
        let mut buf = [0u8; 4];
        let s: &str = UNICODE_MAP
            .iter()
            .find(|(f, _)| f.starts_with(c))
            .map(|(_, p)| *p)
            .unwrap_or_else(|| c.encode_utf8(&mut buf));
        for _ in 0..s.len() {
            origin.push(i);
        }
        normed.push_str(s);
    }
    let at = normed.find(target)?;
    let end_n = at + target.len();
    let start = origin[at];
    let end = if end_n >= origin.len() {
        line.len()
    } else {
        origin[end_n]
    };
    Some(Span { start, end })
}

/// The "did you mean" block: the three lines most similar to the first
/// non-blank line of `old`, with two lines of context, numbered.
pub fn suggestions(content: &str, old: &str) -> String {
    let Some(probe) = old.lines().map(str::trim).find(|l| !l.is_empty()) else {
        return String::new();
    };
    let lines: Vec<&str> = content.lines().collect();
    if lines.len() > 50_000 {
        return String::new();
    }
    // a suggestion is a courtesy: it gets a fixed time budget
    let until = std::time::Instant::now() + std::time::Duration::from_millis(300);
    let mut scored: Vec<(f32, usize)> = lines
        .iter()
        .enumerate()
        .take_while(|_| std::time::Instant::now() < until)
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| (ratio(l.trim(), probe), i))
        .filter(|(r, _)| *r > 0.3)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut out = String::new();
    for (_, i) in scored.into_iter().take(3) {
        let from = i.saturating_sub(2);
        let to = (i + 3).min(lines.len());
        for (k, line) in lines.iter().enumerate().take(to).skip(from) {
            out.push_str(&format!("{:4}| {}\n", k + 1, line));
        }
        out.push_str("---\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(c: &str, o: &str, n: &str) -> Replaced {
        find_and_replace(c, o, n, false).unwrap_or_else(|e| panic!("{}", e.message()))
    }

    #[test]
    fn chain_in_order() {
        assert_eq!(r("a b c", "b", "x").strategy, "exact");
        let c = "fn f() {\n    let x = 1;\n    let y = 2;\n}\n";
        let out = r(c, "let x = 1;\nlet y = 2;", "let x = 10;\nlet y = 20;");
        assert_eq!(out.strategy, "line_trimmed");
        assert_eq!(
            out.content,
            "fn f() {\n    let x = 10;\n    let y = 20;\n}\n"
        );
        let out = r("  if  a   ==  b:\n", "if a == b:", "if a != b:");
        assert_eq!(out.strategy, "whitespace_normalized");
        let out = r("x\ty = 1\n", "x y = 1", "x y = 2");
        assert_eq!(out.strategy, "whitespace_normalized");
        let out = r("a\n\tb\n", "a\\n\tb", "c");
        assert_eq!(out.strategy, "escape_normalized");
        let out = r(
            "say \u{201c}hi\u{201d} now\n",
            "say \"hi\" now",
            "say \"yo\" now",
        );
        assert_eq!(out.strategy, "unicode_normalized");
        assert_eq!(out.content, "say \u{201c}yo\u{201d} now\n");
        let c = "def f():\n    a = 1\n    b = 2\n    return a + b\n";
        let out = r(
            c,
            "def f():\n    a = 1\n    bb = 22\n    return a + b",
            "def g():\n    pass",
        );
        assert_eq!(out.strategy, "block_anchor");
        assert_eq!(out.content, "def g():\n    pass\n");
    }

    #[test]
    fn whitespace_collapsed_inside_a_line() {
        let out = r("x = foo   bar baz\n", "foo bar", "qux");
        assert_eq!(out.strategy, "whitespace_normalized");
        assert_eq!(out.content, "x = qux baz\n");
        let out = r(
            "y = compute(a,  b) + tail\n",
            "compute(a, b)",
            "compute(b, a)",
        );
        assert_eq!(out.content, "y = compute(b, a) + tail\n");
        let out = r("a\t\tb = 1;\nc = 2;\n", "a b = 1;", "ab = 1;");
        assert_eq!(out.content, "ab = 1;\nc = 2;\n");
    }

    #[test]
    fn tab_and_cr_escapes_in_the_new_text() {
        // the file has real tabs: a literal \t written by the model is a tab
        let out = r("\tfoo()\n", "\tfoo()", "\\tbar()");
        assert_eq!(out.content, "\tbar()\n");
        let out = r("if x {\n\tfoo(1)\n}\n", "\\tfoo(1)", "\\tfoo(2)");
        assert_eq!(out.strategy, "escape_normalized");
        assert_eq!(out.content, "if x {\n\tfoo(2)\n}\n");
        // a file holding a backslash-t keeps it
        let out = r("sep = \"\\t\"\n", "sep = \"\\t\"", "sep = \"\\t\\t\"");
        assert_eq!(out.content, "sep = \"\\t\\t\"\n");
    }

    #[test]
    fn crlf_escapes_against_lf_read_text() {
        // the patch tool matches a CRLF file with '\n' line ends
        let out = r("a\nb\nc\n", "a\\r\\nb", "A\\r\\nB");
        assert_eq!(out.strategy, "escape_normalized");
        assert_eq!(out.content, "A\nB\nc\n");
        // raw CRLF text (skill files): the CRs stay
        let out = r("a\r\nb\r\nc\r\n", "a\\r\\nb", "A\\r\\nB");
        assert_eq!(out.content, "A\r\nB\r\nc\r\n");
    }

    #[test]
    fn reindent_leaves_blank_lines_alone() {
        let c = "fn f() {\n    let a = 1;\n    let b = 2;\n}\n";
        let out = r(c, "let a = 1;\nlet b = 2;", "let a = 1;\n\nlet b = 3;");
        assert_eq!(
            out.content,
            "fn f() {\n    let a = 1;\n\n    let b = 3;\n}\n"
        );
        // a line shallower than the model's base goes to the file's base
        let c = "impl X {\n        fn a() {}\n        fn b() {}\n}\n";
        let out = r(
            c,
            "    fn a() {}\n    fn b() {}",
            "    fn a() {}\n  fn c() {}",
        );
        assert_eq!(
            out.content,
            "impl X {\n        fn a() {}\n        fn c() {}\n}\n"
        );
    }

    #[test]
    fn huge_lines_do_not_stall() {
        let line = "x".repeat(2_000_000);
        let content = format!("{line}\n{line}\n");
        let t = std::time::Instant::now();
        let e = find_and_replace(&content, "yyy\nzzz", "q", false).unwrap_err();
        assert!(e.message().contains("Could not find"));
        assert!(t.elapsed() < std::time::Duration::from_secs(20));
    }

    #[test]
    fn ambiguity_and_replace_all() {
        let e = find_and_replace("x\nx\n", "x", "y", false).unwrap_err();
        assert!(e.message().contains("Found 2 matches"), "{}", e.message());
        let ok = find_and_replace("x\nx\n", "x", "y", true).unwrap();
        assert_eq!(ok.content, "y\ny\n");
        assert_eq!(ok.count, 2);
    }

    #[test]
    fn no_match_suggests() {
        let e = find_and_replace("alpha\nbeta\ngamma\n", "betta = 1", "z", false).unwrap_err();
        let m = e.message();
        assert!(m.contains("Did you mean"), "{m}");
        assert!(m.contains("   2| beta"), "{m}");
    }
}
