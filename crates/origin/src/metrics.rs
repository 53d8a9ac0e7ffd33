//! The paper's quality measures (Abdel-Hamid et al. 2009 §3.2, docs/formats.md §4): ssr, DO, TF.

use serde::Serialize;

use super::outcome::{Outcome, Run, copied_spans, top_origin_of};
use super::select::Unit;

/// Running totals of one estimated run scored against the exact result.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Score {
    /// Documents scored.
    pub documents: u64,
    /// Their k-shingles.
    pub shingles: u64,
    /// Their selected units, what the estimates are based on.
    pub selected: u64,
    /// Documents whose exact result has a dominant origin.
    pub(crate) with_dominant: u64,
    /// … and whose estimated top origin equals it.
    pub(crate) dominant_found: u64,
    /// Their tokens.
    pub tokens: u64,
    /// Tokens whose estimated fresh/old label equals the exact one.
    pub(crate) tokens_agreeing: u64,
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

    /// Score one document's estimate given as its selected units and their
    /// labels: the same as [`Score::add`] with the outcome built from them,
    /// without building it. `counts` is scratch space.
    pub(crate) fn add_labels(
        &mut self,
        exact: &Outcome,
        shingles: u32,
        units: &[Unit],
        labels: &[u32],
        counts: &mut Vec<(u32, u32)>,
    ) {
        debug_assert_eq!(units.len(), labels.len());
        let id = exact.id;
        self.documents += 1;
        self.shingles += u64::from(shingles);
        self.selected += labels.len() as u64;
        if let Some(d) = exact.dominant_origin {
            self.with_dominant += 1;
            self.dominant_found += u64::from(top_origin_of(id, labels, counts) == d);
        }
        self.tokens += u64::from(exact.tokens);
        // Tokens agree unless old in exactly one of the two: all tokens less
        // the old ones of each, plus twice those old in both.
        let mut exact_old = exact.copied().map(|(s, e, _)| (s, e)).peekable();
        let (mut est, mut both) = (0u64, 0u64);
        for (s, e, _) in copied_spans(id, units.iter().map(|u| (u.start, u.end)), labels) {
            est += u64::from(e - s);
            while let Some(&(xs, xe)) = exact_old.peek() {
                if xe <= s {
                    exact_old.next();
                    continue;
                }
                if xs >= e {
                    break;
                }
                both += u64::from(xe.min(e) - xs.max(s));
                if xe > e {
                    break;
                }
                exact_old.next();
            }
        }
        let exact_old = u64::from(exact.tokens - exact.fresh_tokens());
        self.tokens_agreeing += u64::from(exact.tokens) + 2 * both - exact_old - est;
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
    use proptest::prelude::*;

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

    /// Units of a document of `tokens` tokens: widths 1..=9 at sorted
    /// starts, labelled from a few origins (3 is the document itself).
    fn units(tokens: u32) -> impl Strategy<Value = (Vec<Unit>, Vec<u32>)> {
        proptest::collection::vec((0..tokens, 1u32..10, 0u32..6), 0..30).prop_map(move |mut us| {
            us.sort_by_key(|u| u.0);
            let units = us
                .iter()
                .map(|&(start, w, _)| Unit {
                    key: 0,
                    start,
                    end: (start + w).min(tokens),
                })
                .collect();
            (units, us.iter().map(|u| u.2).collect())
        })
    }

    fn outcome(tokens: u32, (units, labels): &(Vec<Unit>, Vec<u32>)) -> Outcome {
        Outcome::new(
            3,
            tokens,
            90,
            units.iter().map(|u| (u.start, u.end)),
            labels,
        )
    }

    proptest! {
        #[test]
        fn scoring_labels_equals_scoring_outcomes(
            (tokens, exact, est) in (10u32..80).prop_flat_map(|t| (Just(t), units(t), units(t)))
        ) {
            let mut want = Score::default();
            want.add(&outcome(tokens, &exact), &outcome(tokens, &est));
            let mut got = Score::default();
            got.add_labels(&outcome(tokens, &exact), 90, &est.0, &est.1, &mut Vec::new());
            prop_assert_eq!(got, want);
        }
    }
}
