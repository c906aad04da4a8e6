//! "Did you mean": which known names a model might have meant by a wrong one.
//! Used for unknown tools (dispatch) and unknown toolsets (toolsets), so it
//! sits below both.

/// Words a model might have meant: same prefix or a small edit distance.
pub fn similar(candidate: &str, wanted: &str) -> bool {
    if candidate == wanted {
        return false;
    }
    let (a, b) = (candidate.to_ascii_lowercase(), wanted.to_ascii_lowercase());
    if a.len() >= 4 && b.len() >= 4 && (a.starts_with(&b) || b.starts_with(&a)) {
        return true;
    }
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.len().abs_diff(b.len()) > 2 {
        return false;
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()] <= 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn similar_names() {
        assert!(similar("read_file", "read_fil"));
        assert!(similar("terminal", "termnal"));
        assert!(!similar("terminal", "web_search"));
    }
}
