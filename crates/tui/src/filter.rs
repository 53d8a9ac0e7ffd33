//! The Documents pane's fuzzy filter. `fuzzy-matcher` is unmaintained, so the
//! pane sees only this trait and the crate can be swapped in one place.

use fuzzy_matcher::FuzzyMatcher;
use fuzzy_matcher::skim::SkimMatcherV2;

/// Sync: the Documents pane filters its rows on all cores.
pub trait Matcher: Send + Sync {
    /// Some score when `text` matches `pattern` (higher is better), else None.
    fn score(&self, pattern: &str, text: &str) -> Option<i64>;

    /// Byte offsets in `text` of the characters `pattern` matched, ascending
    /// (empty when it does not match), to mark them on screen.
    fn indices(&self, pattern: &str, text: &str) -> Vec<usize>;
}

/// Skim's algorithm (as fzf's): the pattern's characters in order, smart case.
pub struct Fuzzy(SkimMatcherV2);

impl Default for Fuzzy {
    fn default() -> Fuzzy {
        Fuzzy(SkimMatcherV2::default().smart_case())
    }
}

impl Matcher for Fuzzy {
    /// Words separated by spaces must each match, in any order (as fzf's
    /// extended search): `current ch04-01` finds `…current__ch04-01-….md`.
    fn score(&self, pattern: &str, text: &str) -> Option<i64> {
        let mut terms = pattern.split_whitespace().peekable();
        if terms.peek().is_none() {
            // Nothing but spaces asks for nothing: every path.
            return Some(0);
        }
        terms.map(|t| self.term(t, text)).sum()
    }

    /// Every word's matches, together.
    fn indices(&self, pattern: &str, text: &str) -> Vec<usize> {
        let mut chars = Vec::new();
        for t in pattern.split_whitespace() {
            match self.0.fuzzy_indices(text, t) {
                Some((_, found)) => chars.extend(found),
                None => return Vec::new(),
            }
        }
        chars.sort_unstable();
        chars.dedup();
        // Skim counts characters; the pane cuts strings by bytes.
        let mut at = chars.into_iter().peekable();
        let mut out = Vec::new();
        for (n, (byte, _)) in text.char_indices().enumerate() {
            if at.peek() == Some(&n) {
                out.push(byte);
                at.next();
            }
        }
        out
    }
}

impl Fuzzy {
    fn term(&self, term: &str, text: &str) -> Option<i64> {
        // Most paths fail a plain subsequence test, which costs far less than
        // skim's scoring matrix; skim is asked only about the rest.
        if term.is_ascii() && text.is_ascii() && !subsequence(term, text) {
            return None;
        }
        self.0.fuzzy_match(text, term)
    }
}

/// Whether `pattern`'s bytes occur in `text` in order, ignoring case unless
/// the pattern has a capital (smart case, as skim's).
fn subsequence(pattern: &str, text: &str) -> bool {
    let exact = pattern.bytes().any(|b| b.is_ascii_uppercase());
    let mut text = text.bytes();
    pattern.bytes().all(|p| {
        text.any(|t| {
            if exact {
                t == p
            } else {
                t.eq_ignore_ascii_case(&p)
            }
        })
    })
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

    #[test]
    fn words_match_each_in_any_order() {
        let m = Fuzzy::default();
        let path = "00287_current__ch04-01-what-is-ownership.md";
        assert!(m.score("current ch04-01", path).is_some());
        // Any order: the same score, not only a match.
        for order in ["ch04-01 current", "  current  ch04-01 "] {
            assert_eq!(
                m.score(order, path),
                m.score("current ch04-01", path),
                "{order:?}"
            );
        }
        assert!(m.score("current ch05", path).is_none(), "every word");
        assert!(m.score("ch05 current", path).is_none(), "every word");
        assert!(m.score("  current  ", path).is_some());
        // More words only narrow: a path the longer pattern matches, each of
        // its words matches.
        let paths = [
            path,
            "00288_current__ch04-02-references.md",
            "ownership.md",
            "current.md",
            "",
        ];
        for p in paths {
            if m.score("current own", p).is_some() {
                assert!(m.score("current", p).is_some() && m.score("own", p).is_some());
            }
        }
        let matched = |pattern| {
            paths
                .iter()
                .filter(|p| m.score(pattern, p).is_some())
                .count()
        };
        assert_eq!((matched("current"), matched("current own")), (3, 1));
        assert!(m.score("   ", path).is_some(), "blank matches all");
    }

    #[test]
    fn indices_are_bytes_of_every_words_match() {
        let m = Fuzzy::default();
        assert_eq!(m.indices("v2 inst", "v2/install.md"), [0, 1, 3, 4, 5, 6]);
        // Bytes, not characters: é takes two.
        assert_eq!(m.indices("md", "é/x.md"), [5, 6]);
        assert!(m.indices("zz", "v2/install.md").is_empty());
        assert!(m.indices("v2 zz", "v2/install.md").is_empty(), "every word");
        assert!(m.indices("  ", "v2/install.md").is_empty());
    }

    #[test]
    fn the_quick_test_rejects_only_what_skim_rejects() {
        let skim = SkimMatcherV2::default().smart_case();
        let m = Fuzzy::default();
        let texts = [
            "v2/install.md",
            "V3/API.html",
            "z-support/faq.md",
            "a b/c-d_e.md",
            "",
        ];
        let patterns = [
            "", "v", "V", "inst", "Inst", "API", "api", "z/f", "md.", "zz",
        ];
        for t in texts {
            for p in patterns {
                assert_eq!(m.score(p, t), skim.fuzzy_match(t, p), "{p:?} in {t:?}");
            }
        }
    }
}
