//! What a run says about one document (docs/formats.md §2–3): origin counts, the top
//! and dominant origin, and which tokens are fresh or copied from where.

use serde::Serialize;

/// A maximal run of tokens `start..end` with the same label: `None` is fresh,
/// `Some(o)` copied from document `o`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Run {
    /// The run's first token.
    pub start: u32,
    /// One past its last token.
    pub end: u32,
    /// `None`: fresh; `Some(o)`: copied from document `o`.
    pub origin: Option<u32>,
}

/// One document's result, exact or estimated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The document's id (its place in processing order).
    pub id: u32,
    /// Its tokens.
    pub tokens: u32,
    /// Its k-shingles.
    pub shingles: u32,
    /// Units the result is based on (all shingles in the exact result).
    pub selected: u32,
    /// (origin, units) with the document itself for its new units; most first,
    /// ties by id.
    pub origins: Vec<(u32, u32)>,
    /// The origin with the most units; on a tie the document itself if it
    /// is among the tied, else the earliest (docs/formats.md §2).
    pub top_origin: u32,
    /// The origin whose count is at least 1.1 times the next largest (10·c1
    /// ≥ 11·c2, c1 > 0), if one is.
    pub dominant_origin: Option<u32>,
    /// Runs covering `0..tokens` in order.
    pub runs: Vec<Run>,
}

impl Outcome {
    /// Build from the document's units (token ranges, sorted by start) and the
    /// origin label of each.
    pub fn new(
        id: u32,
        tokens: u32,
        shingles: u32,
        units: impl IntoIterator<Item = (u32, u32)>,
        labels: &[u32],
    ) -> Outcome {
        let origins = origin_counts(labels);
        Outcome {
            id,
            tokens,
            shingles,
            selected: labels.len() as u32,
            top_origin: top_origin(id, &origins),
            dominant_origin: dominant_origin(&origins),
            runs: token_runs(id, tokens, units, labels),
            origins,
        }
    }

    /// Tokens in fresh runs: no unit covering them is labelled with another
    /// document.
    pub fn fresh_tokens(&self) -> u32 {
        self.runs
            .iter()
            .filter(|r| r.origin.is_none())
            .map(|r| r.end - r.start)
            .sum()
    }

    /// Maximal runs of copied tokens with their origin.
    pub fn copied(&self) -> impl Iterator<Item = (u32, u32, u32)> + '_ {
        self.runs
            .iter()
            .filter_map(|r| r.origin.map(|o| (r.start, r.end, o)))
    }

    /// Maximal runs of fresh tokens.
    pub fn fresh(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.runs
            .iter()
            .filter(|r| r.origin.is_none())
            .map(|r| (r.start, r.end))
    }
}

/// Count units per origin; most first, ties by id.
fn origin_counts(labels: &[u32]) -> Vec<(u32, u32)> {
    let mut counts = Vec::new();
    tally(labels, &mut counts);
    counts.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    counts
}

/// Units per origin into `counts`, in order of first appearance. A document
/// has few distinct origins, so a linear tally beats sorting its labels.
fn tally(labels: &[u32], counts: &mut Vec<(u32, u32)>) {
    counts.clear();
    let mut last = 0;
    for &l in labels {
        // Runs of equal labels are common: check the last origin first.
        if counts.get(last).is_some_and(|c| c.0 == l) {
            counts[last].1 += 1;
            continue;
        }
        match counts.iter().position(|c| c.0 == l) {
            Some(i) => {
                counts[i].1 += 1;
                last = i;
            }
            None => {
                last = counts.len();
                counts.push((l, 1));
            }
        }
    }
}

/// The top origin of document `id` from its units' labels, as
/// [`Outcome::new`] finds it, without sorting: `counts` is scratch space.
pub(crate) fn top_origin_of(id: u32, labels: &[u32], counts: &mut Vec<(u32, u32)>) -> u32 {
    tally(labels, counts);
    let Some(best) = counts.iter().map(|c| c.1).max() else {
        return id;
    };
    // Sorted by count, then id, the first of the tied is the smallest id.
    let tied = counts.iter().filter(|c| c.1 == best).map(|c| c.0);
    if tied.clone().any(|o| o == id) {
        id
    } else {
        tied.min().expect("the maximum is present")
    }
}

/// The origin with the largest count; on a tie the document itself if it is
/// among the tied, else the earliest (docs/formats.md §2).
fn top_origin(id: u32, counts: &[(u32, u32)]) -> u32 {
    let Some(&(first, best)) = counts.first() else {
        return id;
    };
    if counts.iter().any(|&(o, c)| c == best && o == id) {
        id
    } else {
        first
    }
}

/// Dominant iff c1 > 0 and 10·c1 ≥ 11·c2 for the two largest counts.
fn dominant_origin(counts: &[(u32, u32)]) -> Option<u32> {
    let (o1, c1) = *counts.first()?;
    let c2 = counts.get(1).map_or(0, |c| c.1);
    (c1 > 0 && 10 * u64::from(c1) >= 11 * u64::from(c2)).then_some(o1)
}

/// A token is old iff a unit covering it has a label other than `id`; its
/// origin is that of the earliest such unit.
fn token_runs(
    id: u32,
    tokens: u32,
    units: impl IntoIterator<Item = (u32, u32)>,
    labels: &[u32],
) -> Vec<Run> {
    let mut runs: Vec<Run> = Vec::new();
    let mut cur = 0u32;
    for (s, end, label) in copied_spans(id, units, labels) {
        debug_assert!(end <= tokens);
        if s > cur {
            runs.push(Run {
                start: cur,
                end: s,
                origin: None,
            });
        }
        match runs.last_mut() {
            Some(r) if r.origin == Some(label) && r.end == s => r.end = end,
            _ => runs.push(Run {
                start: s,
                end,
                origin: Some(label),
            }),
        }
        cur = end;
    }
    if cur < tokens {
        runs.push(Run {
            start: cur,
            end: tokens,
            origin: None,
        });
    }
    runs
}

/// The old tokens of document `id` from its units (token ranges, sorted by
/// start) and their labels: disjoint, increasing `(start, end, origin)` spans
/// (neighbours may touch and share an origin), each unit labelled other than
/// `id` contributing its tokens not already covered.
pub(crate) fn copied_spans(
    id: u32,
    units: impl IntoIterator<Item = (u32, u32)>,
    labels: &[u32],
) -> impl Iterator<Item = (u32, u32, u32)> {
    let mut cur = 0u32;
    units
        .into_iter()
        .zip(labels)
        .filter_map(move |((start, end), &label)| {
            if label == id {
                return None;
            }
            let s = start.max(cur);
            if s >= end {
                return None;
            }
            cur = end;
            Some((s, end, label))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dominant_needs_ten_percent_more() {
        assert_eq!(dominant_origin(&[(3, 11), (5, 10)]), Some(3));
        assert_eq!(dominant_origin(&[(3, 10), (5, 10)]), None);
        assert_eq!(dominant_origin(&[(3, 21), (5, 20)]), None);
        assert_eq!(dominant_origin(&[(3, 1)]), Some(3));
        assert_eq!(dominant_origin(&[]), None);
    }

    #[test]
    fn top_origin_prefers_self_then_earliest() {
        assert_eq!(top_origin(7, &[(2, 5), (7, 5)]), 7);
        assert_eq!(top_origin(7, &[(2, 5), (4, 5), (7, 1)]), 2);
        assert_eq!(top_origin(7, &[]), 7);
    }

    #[test]
    fn runs_let_the_earlier_unit_win() {
        // Tokens 0..12, k = 4 shingles at 0, 2, 6 labelled 1, 2, self.
        let units = [(0, 4), (2, 6), (6, 10)];
        let o = Outcome::new(9, 12, 9, units, &[1, 2, 9]);
        assert_eq!(
            o.runs,
            vec![
                Run {
                    start: 0,
                    end: 4,
                    origin: Some(1)
                },
                Run {
                    start: 4,
                    end: 6,
                    origin: Some(2)
                },
                Run {
                    start: 6,
                    end: 12,
                    origin: None
                },
            ]
        );
        assert_eq!(o.fresh_tokens(), 6);
        assert_eq!(o.origins, vec![(1, 1), (2, 1), (9, 1)]);
        assert_eq!(o.top_origin, 9);
        assert_eq!(o.dominant_origin, None);
    }

    #[test]
    fn adjacent_units_of_one_origin_merge() {
        let units = [(2, 5), (5, 8)];
        let o = Outcome::new(3, 10, 6, units, &[1, 1]);
        assert_eq!(o.copied().collect::<Vec<_>>(), vec![(2, 8, 1)]);
        assert_eq!(o.fresh().collect::<Vec<_>>(), vec![(0, 2), (8, 10)]);
        assert_eq!(o.dominant_origin, Some(1));
    }

    #[test]
    fn no_shingles_means_all_fresh_and_self() {
        let o = Outcome::new(4, 5, 0, [], &[]);
        assert_eq!(o.top_origin, 4);
        assert_eq!(o.dominant_origin, None);
        assert_eq!(o.fresh_tokens(), 5);
    }
}
