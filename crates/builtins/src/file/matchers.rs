//! Compiled `search_files` patterns, kept between searches: one concern
//! apart from the index (a pattern is reused whether or not its tree is
//! indexed).

use parking_lot::Mutex;

/// Compiled search patterns, most recently used first. Building a
/// pattern's matcher (ripgrep's: a full DFA of up to 1 000 states) took
/// 0.3-0.5 ms in the files bench, a fifth of an indexed search of 10 000
/// files; paging through results and searching again after an edit reuse it.
pub struct Matchers {
    kept: Mutex<std::collections::VecDeque<(String, grep_regex::RegexMatcher)>>,
}

/// Patterns kept compiled.
const MAX_MATCHERS: usize = 32;

impl Default for Matchers {
    fn default() -> Self {
        Matchers {
            kept: Mutex::new(std::collections::VecDeque::new()),
        }
    }
}

impl Matchers {
    /// The matcher of `pattern`, compiled by `build` on first use.
    pub fn get<E>(
        &self,
        pattern: &str,
        build: impl FnOnce(&str) -> Result<grep_regex::RegexMatcher, E>,
    ) -> Result<grep_regex::RegexMatcher, E> {
        {
            let mut kept = self.kept.lock();
            if let Some(i) = kept.iter().position(|(p, _)| p == pattern) {
                let e = kept.remove(i).expect("index in range");
                let m = e.1.clone();
                kept.push_front(e);
                return Ok(m);
            }
        }
        let m = build(pattern)?;
        let mut kept = self.kept.lock();
        kept.push_front((pattern.to_string(), m.clone()));
        kept.truncate(MAX_MATCHERS);
        Ok(m)
    }
}
