//! The Documents pane's fuzzy filter. `fuzzy-matcher` is unmaintained, so the
//! pane sees only this trait and the crate can be swapped in one place.

use fuzzy_matcher::FuzzyMatcher;
use fuzzy_matcher::skim::SkimMatcherV2;

pub trait Matcher: Send {
    /// Some score when `text` matches `pattern` (higher is better), else None.
    fn score(&self, pattern: &str, text: &str) -> Option<i64>;
}

/// Skim's algorithm (as fzf's): the pattern's characters in order, smart case.
pub struct Fuzzy(SkimMatcherV2);

impl Default for Fuzzy {
    fn default() -> Fuzzy {
        Fuzzy(SkimMatcherV2::default().smart_case())
    }
}

impl Matcher for Fuzzy {
    fn score(&self, pattern: &str, text: &str) -> Option<i64> {
        self.0.fuzzy_match(text, pattern)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subsequences_match_others_do_not() {
        let m = Fuzzy::default();
        assert!(m.score("v2inst", "v2/install.md").is_some());
        assert!(m.score("zz", "v2/install.md").is_none());
        // Smart case: an upper-case letter in the pattern must match exactly.
        assert!(m.score("FAQ", "faq.md").is_none());
        assert!(m.score("faq", "FAQ.md").is_some());
    }
}
