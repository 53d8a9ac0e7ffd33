//! Exact Jaccard resemblance r(A, B) = |A ∩ B| / |A ∪ B| of k-shingle sets
//! (Broder), for every pair at or above a threshold: the ground truth the
//! other methods are measured against.
//!
//! An inverted index (shingle key → documents) finds every pair that shares a
//! shingle; per document, a dense counter array counts its intersections with
//! each later document (the "ScanCount" merge of the posting lists it touches).
//! A shingle held by L documents costs L(L−1)/2 counter increments, so a key
//! common to thousands of documents is quadratic in L, but each step is one
//! increment in a cache-resident array, with no hash map of pairs.

use rayon::prelude::*;
use serde::Serialize;

use super::{Pair, SimDoc};

/// What the exact method did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ExactStats {
    /// Shingle occurrences in all sets (Σ |A|).
    pub shingles: u64,
    /// Keys held by more than one document, i.e. posting lists kept.
    pub shared_keys: u64,
    /// Longest posting list.
    pub longest_posting: u64,
    /// Counter increments: Σ over shared keys of L(L−1)/2.
    pub intersections: u64,
    /// Pairs that share at least one shingle (Jaccard computed for each).
    pub candidates: u64,
    /// Bytes of the inverted index (posting lists and per-document list ids).
    pub index_bytes: u64,
}

/// `|a ∩ b|` of two sorted, deduplicated slices.
pub(crate) fn intersection(a: &[u64], b: &[u64]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

/// Jaccard resemblance of two sorted, deduplicated sets; 0 when both are
/// empty (documents shorter than k are nobody's near duplicate).
pub fn jaccard(a: &[u64], b: &[u64]) -> f64 {
    let c = intersection(a, b);
    ratio(c, a.len() + b.len() - c)
}

/// [`jaccard`] of two sorted, deduplicated sets when it is ≥ `min` (> 0),
/// else `None`, stopping as soon as the threshold is out of reach: first by
/// size (J ≤ min(|A|, |B|) / max(|A|, |B|)), then during the merge, once the
/// intersection so far plus what is left of the shorter side falls short.
/// Equal sets are found by comparison, without a merge. What it returns is
/// the same f64 as [`jaccard`].
pub fn jaccard_at_least(a: &[u64], b: &[u64], min: f64) -> Option<f64> {
    debug_assert!(min > 0.0);
    let s = a.len() + b.len();
    let short = a.len().min(b.len());
    // The least intersection c with c / (s − c) ≥ min, found with `ratio`
    // itself so rounding agrees with `jaccard`.
    let mut need = ((min * s as f64 / (1.0 + min)).ceil() as usize).min(short + 1);
    while need > 0 && ratio(need - 1, s - (need - 1)) >= min {
        need -= 1;
    }
    while need <= short && ratio(need, s - need) < min {
        need += 1;
    }
    if need > short || short == 0 {
        return None;
    }
    if a.len() == b.len() && a == b {
        return Some(1.0);
    }
    let (mut i, mut j, mut c) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        if c + (a.len() - i).min(b.len() - j) < need {
            return None;
        }
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                c += 1;
                i += 1;
                j += 1;
            }
        }
    }
    (c >= need).then(|| ratio(c, s - c))
}

fn ratio(c: usize, union: usize) -> f64 {
    if union == 0 {
        0.0
    } else {
        c as f64 / union as f64
    }
}

/// All pairs with Jaccard resemblance ≥ `min_similarity` (which must be > 0),
/// sorted by (a, b).
pub fn pairs(docs: &[SimDoc], min_similarity: f64) -> Vec<Pair> {
    pairs_with_stats(docs, min_similarity).0
}

/// [`pairs`] with what it took.
pub fn pairs_with_stats(docs: &[SimDoc], min_similarity: f64) -> (Vec<Pair>, ExactStats) {
    assert!(
        min_similarity > 0.0,
        "a threshold of 0 would list every pair"
    );
    let n = docs.len();
    let index = Inverted::new(docs);
    let mut stats = index.stats.clone();
    let per_doc: Vec<(Vec<Pair>, u64)> = (0..n)
        .into_par_iter()
        .map_init(
            || (vec![0u32; n], Vec::new()),
            |(counts, touched), a| {
                let mut found = Vec::new();
                let sa = docs[a].shingles.len();
                for &list in &index.lists_of[a] {
                    let docs_with_key = index.posting(list);
                    // Lists are ascending: only later documents, so each pair
                    // is counted from its first member once.
                    let later = docs_with_key.partition_point(|&d| d as usize <= a);
                    for &b in &docs_with_key[later..] {
                        let c = &mut counts[b as usize];
                        if *c == 0 {
                            touched.push(b);
                        }
                        *c += 1;
                    }
                }
                let candidates = touched.len() as u64;
                for &b in touched.iter() {
                    let c = std::mem::take(&mut counts[b as usize]) as usize;
                    let union = sa + docs[b as usize].shingles.len() - c;
                    let similarity = ratio(c, union);
                    if similarity >= min_similarity {
                        found.push(Pair {
                            a: a as u32,
                            b,
                            similarity,
                        });
                    }
                }
                touched.clear();
                (found, candidates)
            },
        )
        .collect();
    let mut out = Vec::new();
    for (found, candidates) in per_doc {
        stats.candidates += candidates;
        out.extend(found);
    }
    out.sort_by_key(|p| (p.a, p.b));
    (out, stats)
}

/// Posting lists of the keys held by two or more documents, in CSR form.
struct Inverted {
    /// Documents of list i: `docs[starts[i]..starts[i+1]]`, ascending.
    docs: Vec<u32>,
    starts: Vec<u32>,
    /// For each document, the lists of its shared keys.
    lists_of: Vec<Vec<u32>>,
    stats: ExactStats,
}

impl Inverted {
    fn new(docs: &[SimDoc]) -> Inverted {
        let total: usize = docs.iter().map(|d| d.shingles.len()).sum();
        assert!(
            u32::try_from(total).is_ok() && u32::try_from(docs.len()).is_ok(),
            "more than 2^32 shingles or documents"
        );
        let mut entries: Vec<(u64, u32)> = Vec::with_capacity(total);
        for (id, d) in docs.iter().enumerate() {
            entries.extend(d.shingles.iter().map(|&key| (key, id as u32)));
        }
        // Sorting by (key, doc) leaves every posting list ascending by doc.
        entries.par_sort_unstable();
        let mut inv = Inverted {
            docs: Vec::new(),
            starts: vec![0],
            lists_of: vec![Vec::new(); docs.len()],
            stats: ExactStats {
                shingles: total as u64,
                ..ExactStats::default()
            },
        };
        for group in entries.chunk_by(|x, y| x.0 == y.0) {
            // A key in one document pairs nobody.
            if group.len() < 2 {
                continue;
            }
            let list = inv.starts.len() as u32 - 1;
            for &(_, d) in group {
                inv.docs.push(d);
                inv.lists_of[d as usize].push(list);
            }
            inv.starts.push(inv.docs.len() as u32);
            let l = group.len() as u64;
            inv.stats.shared_keys += 1;
            inv.stats.longest_posting = inv.stats.longest_posting.max(l);
            inv.stats.intersections += l * (l - 1) / 2;
        }
        let list_ids: usize = inv.lists_of.iter().map(Vec::len).sum();
        inv.stats.index_bytes = 4 * (inv.docs.len() + inv.starts.len() + list_ids) as u64
            + (inv.lists_of.len() * size_of::<Vec<u32>>()) as u64;
        inv
    }

    fn posting(&self, list: u32) -> &[u32] {
        let i = list as usize;
        &self.docs[self.starts[i] as usize..self.starts[i + 1] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn doc(keys: &[u64]) -> SimDoc {
        SimDoc::of_keys(keys)
    }

    #[test]
    fn jaccard_of_hand_computed_sets() {
        // {1,2,3,4} and {3,4,5}: ∩ = {3,4}, ∪ = {1,..,5}: 2/5.
        assert_eq!(jaccard(&[1, 2, 3, 4], &[3, 4, 5]), 0.4);
        assert_eq!(intersection(&[1, 2, 3, 4], &[3, 4, 5]), 2);
        assert_eq!(jaccard(&[1, 2], &[1, 2]), 1.0);
        assert_eq!(jaccard(&[1, 2], &[3]), 0.0);
        assert_eq!(jaccard(&[], &[3]), 0.0);
        assert_eq!(jaccard(&[], &[]), 0.0);
        // 8 of 10 shared, union 12 (|A| = 10, |B| = 10): 2/3.
        let a: Vec<u64> = (0..10).collect();
        let b: Vec<u64> = (2..12).collect();
        assert_eq!(jaccard(&a, &b), 8.0 / 12.0);
    }

    #[test]
    fn pairs_at_threshold() {
        let docs = [
            doc(&[1, 2, 3, 4, 5]),    // 0
            doc(&[1, 2, 3, 4, 6]),    // 1: with 0, 4/6
            doc(&[1, 2, 3, 4, 5]),    // 2: equal to 0
            doc(&[9, 10]),            // 3: alone
            doc(&[]),                 // 4: empty, never paired
            doc(&[]),                 // 5
            doc(&[1, 2, 3, 4, 5, 6]), // 6: with 0 and 2 5/6, with 1 5/6
        ];
        let got = pairs(&docs, 0.8);
        let ids: Vec<(u32, u32)> = got.iter().map(|p| (p.a, p.b)).collect();
        assert_eq!(ids, [(0, 2), (0, 6), (1, 6), (2, 6)]);
        assert_eq!(got[0].similarity, 1.0);
        assert_eq!(got[1].similarity, 5.0 / 6.0);
        let all = pairs(&docs, 0.6);
        assert_eq!(all.len(), 6);
        assert!(all.contains(&Pair {
            a: 0,
            b: 1,
            similarity: 4.0 / 6.0
        }));
        // A threshold met with equality is met: 4/5 is the same f64 as 0.8.
        let edge = [doc(&[1, 2, 3, 4, 5]), doc(&[1, 2, 3, 4])];
        assert_eq!(pairs(&edge, 0.8).len(), 1);
        let (_, s) = pairs_with_stats(&docs, 0.8);
        assert_eq!(s.shingles, 5 + 5 + 5 + 2 + 6);
        // Keys 1..=4 are in 4 documents (6 increments each), 5 in 3, 6 in 2.
        assert_eq!(s.intersections, 4 * 6 + 3 + 1);
        assert_eq!(s.longest_posting, 4);
        // Every pair among 0, 1, 2, 6.
        assert_eq!(s.candidates, 6);
    }

    proptest! {
        #[test]
        fn jaccard_at_least_is_jaccard_when_it_reaches_the_threshold(
            a in prop::collection::vec(0u64..60, 0..40),
            b in prop::collection::vec(0u64..60, 0..40),
            t in 0.01f64..=1.0,
        ) {
            let (a, b) = (doc(&a).shingles, doc(&b).shingles);
            let j = jaccard(&a, &b);
            let want = (j >= t).then_some(j);
            prop_assert_eq!(jaccard_at_least(&a, &b, t), want);
            prop_assert_eq!(jaccard_at_least(&a, &a, t), (!a.is_empty()).then_some(1.0));
        }
    }

    proptest! {
        #[test]
        fn pairs_agree_with_all_pairs_by_merge(
            sets in prop::collection::vec(prop::collection::vec(0u64..40, 0..25), 0..14),
            t in 0.05f64..1.0,
        ) {
            let docs: Vec<SimDoc> = sets.iter().map(|s| doc(s)).collect();
            let mut expected = Vec::new();
            for a in 0..docs.len() {
                for b in a + 1..docs.len() {
                    let j = jaccard(&docs[a].shingles, &docs[b].shingles);
                    if j >= t {
                        expected.push(Pair { a: a as u32, b: b as u32, similarity: j });
                    }
                }
            }
            prop_assert_eq!(pairs(&docs, t), expected);
        }
    }
}
