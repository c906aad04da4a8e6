//! Result shaping: size limits that keep head and tail, and the error
//! sanitiser that keeps framing tokens and fences out of what the model reads.

use once_cell::sync::Lazy;
use regex::Regex;
use std::borrow::Cow;

/// Cap `text` at `max` characters, keeping 40 % head and 60 % tail (errors
/// at the end matter) with a marker that says how much was cut.
pub fn truncate_middle(text: &str, max: usize) -> Cow<'_, str> {
    if text.len() <= max {
        return Cow::Borrowed(text);
    }
    let total = text.chars().count();
    if total <= max {
        return Cow::Borrowed(text);
    }
    let mut budget = max;
    let mut omitted = total - max;
    // The marker counts against the budget; two passes settle the digits.
    for _ in 0..2 {
        let marker_len = marker(omitted, total).chars().count();
        budget = max.saturating_sub(marker_len);
        omitted = total - budget;
    }
    let head = budget * 2 / 5;
    let tail = budget - head;
    let head_end = text.char_indices().nth(head).map_or(text.len(), |(i, _)| i);
    let tail_start = text
        .char_indices()
        .nth(total - tail)
        .map_or(text.len(), |(i, _)| i);
    let mut out = String::with_capacity(max * 4 / 3 + 64);
    out.push_str(&text[..head_end]);
    out.push_str(&marker(omitted, total));
    out.push_str(&text[tail_start..]);
    Cow::Owned(out)
}

fn marker(omitted: usize, total: usize) -> String {
    format!("\n\n... [OUTPUT TRUNCATED - {omitted} chars omitted out of {total} total] ...\n\n")
}

static TAGS: Lazy<Regex> = Lazy::new(|| {
    Regex::new(r"(?i)</?(tool_call|function_call|tool_result|function_result|result|response|output|input|system|assistant|user|im_start|im_end)>|<\|[a-z_]+\|>")
        .expect("valid")
});
static FENCE_OPEN: Lazy<Regex> =
    Lazy::new(|| Regex::new(r"(?m)^\s*```(json|xml|html|markdown|md|text)?\s*").expect("valid"));
static FENCE_CLOSE: Lazy<Regex> = Lazy::new(|| Regex::new(r"(?m)\s*```\s*$").expect("valid"));
static CDATA: Lazy<Regex> = Lazy::new(|| Regex::new(r"(?s)<!\[CDATA\[.*?\]\]>").expect("valid"));

/// Make an error message safe to show the model: strip role/framing tags and
/// chat-template tokens, code fences and CDATA, cap at 2000 characters, and
/// prefix `[TOOL_ERROR] `.
pub fn sanitize_error(msg: &str) -> String {
    format!("[TOOL_ERROR] {}", clean_error(msg))
}

/// [`sanitize_error`] without the prefix (for errors a tool already shaped).
pub fn clean_error(msg: &str) -> String {
    let s = TAGS.replace_all(msg, "");
    let s = CDATA.replace_all(&s, "");
    let s = FENCE_OPEN.replace_all(&s, "");
    let s = FENCE_CLOSE.replace_all(&s, "");
    let s = s.trim();
    if s.chars().count() > 2000 {
        let mut c: String = s.chars().take(1997).collect();
        c.push_str("...");
        c
    } else {
        s.to_string()
    }
}

/// `{"error": message}` as JSON text.
pub fn error_json(message: &str) -> String {
    serde_json::json!({ "error": message }).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_keeps_head_and_tail_within_budget() {
        let text: String = (0..100_000)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        let input = format!("START{text}END");
        let out = truncate_middle(&input, 10_000);
        assert!(out.chars().count() <= 10_000, "{}", out.chars().count());
        assert!(out.starts_with("START"));
        assert!(out.ends_with("END"));
        assert!(out.contains("chars omitted out of 100008 total"));
    }

    #[test]
    fn truncation_is_char_safe() {
        let text = "é".repeat(5000);
        let out = truncate_middle(&text, 1000);
        assert!(out.chars().count() <= 1000);
        assert!(out.contains("OUTPUT TRUNCATED"));
        assert_eq!(truncate_middle("short", 1000), "short");
    }

    #[test]
    fn sanitizer_strips_framing() {
        let s = sanitize_error(
            "<tool_call>boom</tool_call>\n```json\n{\"a\":1}\n```\n<![CDATA[x]]><|im_end|>",
        );
        assert_eq!(s, "[TOOL_ERROR] boom\n{\"a\":1}");
        assert_eq!(sanitize_error(""), "[TOOL_ERROR] ");
        let long = sanitize_error(&"x".repeat(5000));
        assert_eq!(long.chars().count(), "[TOOL_ERROR] ".len() + 2000);
    }
}

#[cfg(test)]
mod count_tests {
    use super::*;

    /// The note counts exactly what it left out, at every digit boundary.
    #[test]
    fn truncation_note_counts_what_it_omitted() {
        for max in [200usize, 999, 1000, 1001, 10_000] {
            for total in [
                max + 1,
                max + 9,
                max + 10,
                max + 99,
                max + 100,
                9_999,
                10_000,
                10_001,
                100_000,
                1_000_000,
            ] {
                if total <= max {
                    continue;
                }
                let text = "x".repeat(total);
                let out = truncate_middle(&text, max);
                let kept = out.chars().filter(|c| *c == 'x').count();
                let note = out.split("TRUNCATED - ").nth(1).unwrap();
                let omitted: usize = note.split(' ').next().unwrap().parse().unwrap();
                assert_eq!(omitted, total - kept, "max {max} total {total}");
                assert!(
                    out.chars().count() <= max,
                    "max {max} total {total}: {}",
                    out.chars().count()
                );
            }
        }
    }
}
