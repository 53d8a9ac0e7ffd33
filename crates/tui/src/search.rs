//! Searching the Origin pane's text: every place a query occurs, ignoring
//! case, as byte ranges of the text (the same offsets the spans use), and
//! which of them is current.

use std::ops::Range;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Search {
    pub query: String,
    /// Where the query occurs, in text order, not overlapping.
    pub matches: Vec<Range<usize>>,
    /// Index into `matches` of the one brought into view.
    pub current: Option<usize>,
}

impl Search {
    /// `query`'s matches in `text`, none current yet.
    pub(crate) fn new(query: &str, text: &str) -> Search {
        Search {
            query: query.to_string(),
            matches: find_all(text, query),
            current: None,
        }
    }

    /// The first match starting at or after byte `from`, else the first.
    pub(crate) fn first_from(&mut self, from: usize) {
        let at = self.matches.partition_point(|m| m.start < from);
        self.current = match self.matches.len() {
            0 => None,
            n => Some(at % n),
        };
    }

    /// The next (or previous) match, round the end.
    pub(crate) fn step(&mut self, forward: bool) {
        let n = self.matches.len();
        if n == 0 {
            return;
        }
        self.current = Some(match (self.current, forward) {
            (None, true) => 0,
            (None, false) => n - 1,
            (Some(c), true) => (c + 1) % n,
            (Some(c), false) => (c + n - 1) % n,
        });
    }

    /// `match 3/12`, or `no match`.
    pub(crate) fn position(&self) -> String {
        match (self.current, self.matches.len()) {
            (_, 0) if self.query.is_empty() => String::new(),
            (_, 0) => "no match".into(),
            (Some(c), n) => format!("match {}/{n}", c + 1),
            (None, n) => format!("{n} matches"),
        }
    }
}

/// Where `query` occurs in `text`, ignoring case, as byte ranges of `text`
/// ([`lineage_core::text::find::find`]).
pub(crate) fn find_all(text: &str, query: &str) -> Vec<Range<usize>> {
    lineage_core::text::find::find(text, query).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_go_round_and_say_where_they_are() {
        let mut s = Search::new("a", "a b a b a");
        s.first_from(3);
        assert_eq!(s.position(), "match 2/3");
        s.step(true);
        s.step(true);
        assert_eq!(s.current, Some(0));
        s.step(false);
        assert_eq!(s.position(), "match 3/3");
        s.first_from(100);
        assert_eq!(s.current, Some(0), "past the last: the first");
        assert_eq!(Search::new("z", "a").position(), "no match");
    }
}
