//! Trigram signatures: which files of the search index can hold a match,
//! decided without reading their content.
//!
//! Why: an indexed search otherwise scans every kept byte (15 MB for
//! 10 000 source files), and on a machine whose caches were used for
//! something else since the last search, that scan is most of its time.
//! Each kept file gets a 1 024-bit signature of the byte trigrams in it
//! (computed on its first indexed search, 128 bytes, one bit per trigram
//! hash). A pattern's required literals (every match starts, or ends, with
//! one of them: `regex-syntax`'s literal extraction) give the bits a file
//! must have; a file missing one of each literal's bits cannot match and is
//! skipped. The filter only ever skips files that cannot match: no required
//! literals, a literal shorter than three bytes, a byte-order mark (the
//! searcher transcodes) or an unparsable pattern mean no filter.

/// Words of a signature (1 024 bits).
pub const SIG_WORDS: usize = 16;
/// A file's trigram signature.
pub type Sig = [u64; SIG_WORDS];

fn bit(t: u32) -> usize {
    (t.wrapping_mul(0x9E37_79B1) >> 22) as usize
}

/// The signature of `data`: one bit per distinct trigram's hash.
pub fn signature(data: &[u8]) -> Sig {
    let mut s = [0u64; SIG_WORDS];
    let mut t: u32 = 0;
    for (i, &b) in data.iter().enumerate() {
        t = ((t << 8) | b as u32) & 0x00FF_FFFF;
        if i >= 2 {
            let k = bit(t);
            s[k >> 6] |= 1 << (k & 63);
        }
    }
    s
}

/// What a file's signature must have for the pattern to match in it: all
/// the bits of at least one of these.
pub struct Need {
    alts: Vec<Sig>,
}

/// Literals per pattern past which filtering is not worth it.
const MAX_ALTS: usize = 64;

impl Need {
    /// The filter for `pattern` (as the matcher reads it), or `None` when
    /// it has no required literals of three bytes or more.
    pub fn of(pattern: &str, multi_line: bool) -> Option<Need> {
        use regex_syntax::hir::literal::{ExtractKind, Extractor};
        let hir = regex_syntax::ParserBuilder::new()
            .multi_line(multi_line)
            .build()
            .parse(pattern)
            .ok()?;
        for kind in [ExtractKind::Prefix, ExtractKind::Suffix] {
            let seq = Extractor::new().kind(kind).extract(&hir);
            let Some(lits) = seq.literals() else { continue };
            if lits.is_empty()
                || lits.len() > MAX_ALTS
                || lits.iter().any(|l| l.as_bytes().len() < 3)
            {
                continue;
            }
            let alts = lits.iter().map(|l| signature(l.as_bytes())).collect();
            return Some(Need { alts });
        }
        None
    }

    /// Whether a file with signature `sig` may hold a match.
    pub fn may_match(&self, sig: &Sig) -> bool {
        self.alts
            .iter()
            .any(|a| a.iter().zip(sig).all(|(need, has)| need & has == *need))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn may(pattern: &str, text: &str) -> bool {
        match Need::of(pattern, false) {
            Some(n) => n.may_match(&signature(text.as_bytes())),
            None => true,
        }
    }

    #[test]
    fn skips_only_files_that_cannot_match() {
        let text = "fn handler() { needle_call(42); }\n";
        let re = |p: &str| regex::Regex::new(p).unwrap().is_match(text);
        for p in [
            "needle_call\\(\\d+\\)",
            "needle",
            "handler|absent_word",
            "(?i)NEEDLE_CALL",
            "absent_word",
            "foo|bar|baz",
            "\\w+_call",
            "call\\(\\d+\\);",
            "^fn",
            "x",
            "[a-z]+",
            "needle_cal[lm]",
            "h.ndler",
            "ünïcödé",
        ] {
            // a file that matches is never skipped
            if re(p) {
                assert!(may(p, text), "{p} matches but was filtered out");
            }
        }
        // and files without the literal are skipped
        assert!(!may("absent_word", text));
        assert!(!may("foo|bar|baz", text));
        assert!(!may("needle_call\\(\\d+\\)", "fn other() {}\n"));
        // no usable literal: no filter
        assert!(Need::of("[a-z]+", false).is_none());
        assert!(Need::of("ab|c", false).is_none());
        assert!(Need::of("(unclosed", false).is_none());
    }
}
