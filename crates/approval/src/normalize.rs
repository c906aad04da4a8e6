//! Text normalisation run before parsing: what the terminal shows a human and
//! what the shell executes must be the same string for the analyser.
//!
//! 1. ANSI / ECMA-48 escape sequences (7-bit and 8-bit C1) are removed.
//! 2. NUL, other control characters (except tab and newline) and invisible
//!    format characters (zero-width, bidi overrides, soft hyphen, BOM) are
//!    removed. `\r` becomes a blank.
//! 3. Non-ASCII text is NFKC-folded (fullwidth `ｒｍ` → `rm`) and a small table
//!    of cross-script look-alikes (Cyrillic/Greek letters that look Latin) is
//!    folded to ASCII, so `rм -rf /` is judged like `rm -rf /`.
//!
//! The fast path (plain printable ASCII) allocates once and touches nothing.
//!
//! Folding can also *create* shell syntax (NFKC maps `＂` to `"` and `＃` to
//! `#`; removing a control character can put a `#` at the start of a word), so
//! the engine analyses both the raw text (what bash really executes) and the
//! normalised text, and keeps the stricter verdict.

use unicode_normalization::UnicodeNormalization;

/// Result of [`normalize`].
pub struct Normalized {
    pub text: String,
    /// Escape sequences, control or invisible characters were removed.
    pub stripped: bool,
    /// Unicode folding changed the text.
    pub folded: bool,
}

/// Normalise a command line for analysis.
pub fn normalize(input: &str) -> Normalized {
    let plain = input
        .bytes()
        .all(|b| (0x20..0x7f).contains(&b) || b == b'\n' || b == b'\t');
    if plain {
        return Normalized {
            text: input.to_string(),
            stripped: false,
            folded: false,
        };
    }
    let (s1, stripped) = strip_escapes_and_controls(input);
    if s1.is_ascii() {
        return Normalized {
            text: s1,
            stripped,
            folded: false,
        };
    }
    let nfkc: String = s1.nfkc().collect();
    let mut out = String::with_capacity(nfkc.len());
    for c in nfkc.chars() {
        if is_invisible(c) {
            continue;
        }
        out.push(fold_confusable(c));
    }
    let folded = out != s1;
    Normalized {
        text: out,
        stripped,
        folded,
    }
}

fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}'
        | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}' | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}'
        | '\u{FFA0}' | '\u{FFF0}'..='\u{FFF8}' | '\u{E0000}'..='\u{E007F}')
}

fn strip_escapes_and_controls(s: &str) -> (String, bool) {
    let cs: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    let mut stripped = false;
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        match c {
            '\u{1b}' => {
                stripped = true;
                i += 1;
                match cs.get(i) {
                    Some('[') => {
                        i += 1;
                        while i < cs.len() && !('\u{40}'..='\u{7e}').contains(&cs[i]) {
                            i += 1;
                        }
                        i += 1;
                    }
                    Some(']') | Some('P') | Some('X') | Some('^') | Some('_') => {
                        i += 1;
                        while i < cs.len() {
                            if cs[i] == '\u{7}' || cs[i] == '\u{9c}' {
                                i += 1;
                                break;
                            }
                            if cs[i] == '\u{1b}' && cs.get(i + 1) == Some(&'\\') {
                                i += 2;
                                break;
                            }
                            i += 1;
                        }
                    }
                    Some(_) => i += 1,
                    None => {}
                }
            }
            '\u{9b}' => {
                stripped = true;
                i += 1;
                while i < cs.len() && !('\u{40}'..='\u{7e}').contains(&cs[i]) {
                    i += 1;
                }
                i += 1;
            }
            '\u{9d}' | '\u{90}' | '\u{98}' | '\u{9e}' | '\u{9f}' => {
                stripped = true;
                i += 1;
                while i < cs.len() {
                    if cs[i] == '\u{7}' || cs[i] == '\u{9c}' {
                        i += 1;
                        break;
                    }
                    if cs[i] == '\u{1b}' && cs.get(i + 1) == Some(&'\\') {
                        i += 2;
                        break;
                    }
                    i += 1;
                }
            }
            '\r' => {
                // CRLF line ends: keep the newline, and `\` CR LF stays a
                // continuation for the parser.
                if cs.get(i + 1) == Some(&'\n') {
                    out.push('\r');
                } else {
                    out.push(' ');
                }
                i += 1;
            }
            '\n' | '\t' => {
                out.push(c);
                i += 1;
            }
            c if (c as u32) < 0x20 || c == '\u{7f}' || ('\u{80}'..='\u{9f}').contains(&c) => {
                stripped = true;
                i += 1;
            }
            c if is_invisible(c) => {
                stripped = true;
                i += 1;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    (out, stripped)
}

/// Fold common cross-script look-alikes to their ASCII twin.
fn fold_confusable(c: char) -> char {
    match c {
        'а' => 'a',
        'в' => 'b',
        'с' => 'c',
        'ԁ' => 'd',
        'е' | 'ё' => 'e',
        'һ' => 'h',
        'і' => 'i',
        'ј' => 'j',
        'к' => 'k',
        'м' => 'm',
        'н' => 'h',
        'о' | 'ο' | 'σ' => 'o',
        'р' | 'ρ' => 'p',
        'ԛ' => 'q',
        'ѕ' => 's',
        'т' => 't',
        'υ' => 'u',
        'ν' => 'v',
        'ԝ' => 'w',
        'х' | 'χ' => 'x',
        'у' | 'γ' => 'y',
        'А' | 'Α' => 'A',
        'В' | 'Β' => 'B',
        'С' => 'C',
        'Е' | 'Ε' => 'E',
        'Н' | 'Η' => 'H',
        'І' | 'Ι' => 'I',
        'Ј' => 'J',
        'К' | 'Κ' => 'K',
        'М' | 'Μ' => 'M',
        'О' | 'Ο' => 'O',
        'Р' | 'Ρ' => 'P',
        'Ѕ' => 'S',
        'Т' | 'Τ' => 'T',
        'Х' | 'Χ' => 'X',
        'Ү' | 'Υ' => 'Y',
        'Ζ' => 'Z',
        'ɡ' => 'g',
        'ı' => 'i',
        'ℓ' => 'l',
        '‐' | '‑' | '‒' | '–' | '—' | '―' | '−' | '﹣' => '-',
        '⁄' | '∕' | '⧸' => '/',
        '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
        _ => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_ansi_and_folds() {
        assert_eq!(normalize("\u{1b}[31mrm\u{1b}[0m -rf /").text, "rm -rf /");
        assert_eq!(normalize("\u{9b}31mrm\u{9b}0m -rf /").text, "rm -rf /");
        assert_eq!(normalize("\u{1b}]0;title\u{7}rm -rf /").text, "rm -rf /");
        assert_eq!(normalize("r\u{0}m").text, "rm");
        assert_eq!(normalize("ｒｍ -ｒｆ /").text, "rm -rf /");
        assert_eq!(normalize("r\u{200b}m").text, "rm");
        assert_eq!(normalize("rм").text, "rm");
        assert_eq!(normalize("ls").text, "ls");
    }
}
