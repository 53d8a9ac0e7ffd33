//! The paper's quality measures (seed 003 §3.2, CONTRACT §4): ssr, DO, TF.

use serde::Serialize;

use super::outcome::{Outcome, Run};

/// Running totals of one estimated run scored against the exact result.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Score {
    pub documents: u64,
    pub shingles: u64,
    pub selected: u64,
    /// Documents whose exact result has a dominant origin.
    pub with_dominant: u64,
    /// … and whose estimated top origin equals it.
    pub dominant_found: u64,
    pub tokens: u64,
    /// Tokens whose estimated fresh/old label equals the exact one.
    pub tokens_agreeing: u64,
}

impl Score {
    /// Score one document's estimate against its exact outcome.
    pub fn add(&mut self, exact: &Outcome, est: &Outcome) {
        debug_assert_eq!(exact.id, est.id);
        debug_assert_eq!(exact.tokens, est.tokens);
        self.documents += 1;
        self.shingles += u64::from(est.shingles);
        self.selected += u64::from(est.selected);
        if let Some(d) = exact.dominant_origin {
            self.with_dominant += 1;
            self.dominant_found += u64::from(est.top_origin == d);
        }
        self.tokens += u64::from(exact.tokens);
        self.tokens_agreeing += u64::from(freshness_agreement(&exact.runs, &est.runs));
    }

    /// Selected units / shingles, in percent.
    pub fn ssr(&self) -> f64 {
        percent(self.selected, self.shingles)
    }

    /// Dominant origins found, in percent of the documents that have one.
    pub fn dominant_origin(&self) -> f64 {
        percent(self.dominant_found, self.with_dominant)
    }

    /// Tokens labelled fresh/old correctly, in percent.
    pub fn token_freshness(&self) -> f64 {
        percent(self.tokens_agreeing, self.tokens)
    }

    /// Mean of DO and TF.
    pub fn overall(&self) -> f64 {
        (self.dominant_origin() + self.token_freshness()) / 2.0
    }
}

fn percent(a: u64, b: u64) -> f64 {
    if b == 0 {
        100.0
    } else {
        100.0 * a as f64 / b as f64
    }
}

/// Tokens on which two run lists over the same tokens agree about freshness.
fn freshness_agreement(a: &[Run], b: &[Run]) -> u32 {
    let (mut i, mut j, mut pos, mut agree) = (0, 0, 0u32, 0u32);
    while i < a.len() && j < b.len() {
        let end = a[i].end.min(b[j].end);
        if a[i].origin.is_none() == b[j].origin.is_none() {
            agree += end - pos;
        }
        pos = end;
        if a[i].end == end {
            i += 1;
        }
        if b[j].end == end {
            j += 1;
        }
    }
    agree
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(start: u32, end: u32, origin: Option<u32>) -> Run {
        Run { start, end, origin }
    }

    #[test]
    fn agreement_counts_matching_freshness_only() {
        let a = [run(0, 4, None), run(4, 10, Some(1))];
        let b = [run(0, 2, None), run(2, 6, Some(2)), run(6, 10, None)];
        // 0..2 both fresh, 4..6 both old (origins differ, freshness agrees).
        assert_eq!(freshness_agreement(&a, &b), 4);
        assert_eq!(freshness_agreement(&a, &a), 10);
    }

    #[test]
    fn score_counts_dominant_and_tokens() {
        let exact = Outcome::new(1, 10, 3, [(0, 8), (1, 9), (2, 10)], &[0, 0, 0]);
        let right = Outcome::new(1, 10, 3, [(1, 9)], &[0]);
        let wrong = Outcome::new(1, 10, 3, [(1, 9)], &[1]);
        let mut s = Score::default();
        s.add(&exact, &right);
        s.add(&exact, &wrong);
        assert_eq!(s.with_dominant, 2);
        assert_eq!(s.dominant_found, 1);
        assert_eq!(s.dominant_origin(), 50.0);
        // right: tokens 1..9 old, 0 and 9 fresh vs all old → 8/10; wrong: 0/10.
        assert_eq!(s.tokens_agreeing, 8);
        assert!((s.ssr() - 100.0 / 3.0).abs() < 1e-9);
    }
}
