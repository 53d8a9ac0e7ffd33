//! Heintze's fixed-size sample store (Koala; Heintze 1996, docs/algorithms.md §6): every
//! document keeps its 100 lowest-hash substrings, a search looks up 1000, and
//! the match ratio says how much of a stored document the query contains.
//!
//! Substrings are the document's k-shingles and their "hash" for selection is
//! the shingle key. Koala's refinement avoids substrings with common starts:
//! [OURS, docs/algorithms.md §6] a shingle whose first five letters (of its tokens'
//! key texts, concatenated) make up more than `common_prefix_share` of all
//! shingles of the collection ranks after every other shingle; among equals the
//! lowest key wins. The rule needs the shingles' text, so it applies to a
//! document only when its `terms` give back exactly its `shingles` under the
//! configured k; otherwise that document falls back to plain lowest-hash
//! selection.
//!
//! The store itself (block file, log, search) is in `store`; this file
//! chooses what goes in and reads what comes out.

mod store;

pub use store::{
    BLOCK_ENTRIES, BLOCK_WORDS, BlockFile, DIRECTORY_SLOTS, HASH_BITS, LogEntry, MAX_DOCS,
    SEARCHED, STORED, SampleError, SampleParams, SampleStats, SampleStore, Search, substring_hash,
};

use std::collections::HashMap;

use rayon::prelude::*;

use super::SimDoc;
use lineage_core::fingerprint::polynomial::Polynomial;
use lineage_core::fingerprint::{shingle_keys, token_fp};

/// The first `n` keys of `keys` (distinct) in rank order: not common before
/// common, then by key ascending. With nothing common this is the n lowest.
pub(crate) fn select(keys: &[u64], common: impl Fn(u64) -> bool, n: usize) -> Vec<u64> {
    let mut ranked: Vec<(bool, u64)> = keys.iter().map(|&k| (common(k), k)).collect();
    if ranked.len() > n {
        ranked.select_nth_unstable(n);
        ranked.truncate(n);
    }
    ranked.sort_unstable();
    ranked.into_iter().map(|(_, k)| k).collect()
}

/// The first five letters of the shingle starting at token `i` (of its tokens'
/// key texts, concatenated), zero-padded.
fn prefix5<S: AsRef<str>>(terms: &[S], i: usize) -> [char; 5] {
    let mut out = ['\0'; 5];
    let chars = terms[i..].iter().flat_map(|t| t.as_ref().chars());
    for (o, c) in out.iter_mut().zip(chars) {
        *o = c;
    }
    out
}

/// The collection's five-letter-prefix table, and which shingles of each
/// document start with a common prefix.
pub struct PrefixTable {
    counts: HashMap<[char; 5], u64>,
    total: u64,
}

impl PrefixTable {
    /// Count the prefixes of every shingle position of every document (the
    /// documents whose terms do not give back their shingles are left out).
    pub fn build(docs: &[SimDoc], poly: &Polynomial, k: usize) -> PrefixTable {
        let mut counts: HashMap<[char; 5], u64> = HashMap::new();
        let mut total = 0;
        for d in docs {
            if let Some(keys) = shingles_in_order(d, poly, k) {
                for i in 0..keys.len() {
                    *counts.entry(prefix5(&d.terms, i)).or_default() += 1;
                    total += 1;
                }
            }
        }
        PrefixTable { counts, total }
    }

    /// The share of all shingles whose prefix is common at `cutoff`.
    pub fn common_fraction(&self, cutoff: f64) -> f64 {
        let limit = cutoff * self.total as f64;
        let common: u64 = self.counts.values().filter(|&&c| c as f64 > limit).sum();
        common as f64 / self.total.max(1) as f64
    }

    /// The share of all shingles that start with `prefix`.
    pub(crate) fn share(&self, prefix: &[char; 5]) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.counts.get(prefix).copied().unwrap_or(0) as f64 / self.total as f64
        }
    }
}

/// The keys of `d`'s shingles in token order if its terms give back exactly its
/// shingle set under `k`, else `None`.
fn shingles_in_order(d: &SimDoc, poly: &Polynomial, k: usize) -> Option<Vec<u64>> {
    let fps: Vec<u64> = d
        .terms
        .iter()
        .map(|t| token_fp(poly, t.as_bytes()))
        .collect();
    let mut keys = Vec::new();
    shingle_keys(poly, &fps, k, &mut keys);
    let mut set = keys.clone();
    set.sort_unstable();
    set.dedup();
    (set == d.shingles).then_some(keys)
}

/// A document's substrings in rank order, the first `n`.
pub(crate) fn ranked(
    d: &SimDoc,
    table: Option<&PrefixTable>,
    poly: &Polynomial,
    p: &SampleParams,
    n: usize,
) -> Vec<u64> {
    let refined = table
        .filter(|_| p.common_prefix_share > 0.0)
        .and_then(|t| Some((t, shingles_in_order(d, poly, p.k)?)));
    let common: HashMap<u64, bool> = match refined {
        Some((t, keys)) => keys
            .iter()
            .enumerate()
            .map(|(i, &key)| (key, t.share(&prefix5(&d.terms, i)) > p.common_prefix_share))
            .collect(),
        None => HashMap::new(),
    };
    select(&d.shingles, |k| common.get(&k).copied().unwrap_or(false), n)
}

/// A pair of documents that matched at all: `a < b`, the match ratio of each
/// direction (`ratio_ab`: how much of b's sample a's search found, an estimate
/// of |A∩B|/|B|, and `ratio_ba` the other way round) and the Jaccard estimate
/// from the two.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Matched {
    pub a: u32,
    pub b: u32,
    pub(crate) ratio_ab: f64,
    pub(crate) ratio_ba: f64,
}

impl Matched {
    /// [OURS] With c₁ = |A∩B|/|B| and c₂ = |A∩B|/|A|, the Jaccard resemblance
    /// is 1/(1/c₁ + 1/c₂ − 1); 0 if either direction found nothing.
    pub(crate) fn jaccard_estimate(&self) -> f64 {
        if self.ratio_ab <= 0.0 || self.ratio_ba <= 0.0 {
            0.0
        } else {
            (1.0 / (1.0 / self.ratio_ab + 1.0 / self.ratio_ba - 1.0)).min(1.0)
        }
    }
}

/// Everything one run of the method produces.
#[derive(Clone, Debug, Default)]
pub struct SampleRun {
    /// Every pair with at least one match, sorted by (a, b).
    pub(crate) matched: Vec<Matched>,
    /// The store's shape and what the searches did.
    pub stats: SampleStats,
}

impl SampleRun {
    /// The unverified candidates: pairs whose Jaccard estimate is at least
    /// `min_estimate`.
    pub fn candidates(&self, min_estimate: f64) -> Vec<(u32, u32)> {
        self.matched
            .iter()
            .filter(|m| m.jaccard_estimate() >= min_estimate)
            .map(|m| (m.a, m.b))
            .collect()
    }
}

/// Store every document, search with every document, and collect the match
/// ratios of all pairs that matched at all.
/// The documents' shingles were taken under `poly`.
pub fn run(docs: &[SimDoc], poly: &Polynomial, p: &SampleParams) -> Result<SampleRun, SampleError> {
    let table = (p.common_prefix_share > 0.0).then(|| PrefixTable::build(docs, poly, p.k));
    let searched: Vec<Vec<u32>> = docs
        .par_iter()
        .map(|d| {
            ranked(d, table.as_ref(), poly, p, p.searched)
                .into_iter()
                .map(substring_hash)
                .collect()
        })
        .collect();
    let mut store = SampleStore::default();
    for (i, s) in searched.iter().enumerate() {
        // The stored substrings are the first of the same ranking.
        store.add(&i.to_string(), &s[..s.len().min(p.stored)])?;
    }
    let searches: Vec<Search> = searched
        .par_iter()
        .enumerate()
        .map(|(a, q)| store.search(q, Some(a as u32), p))
        .collect();
    let mut pairs: HashMap<(u32, u32), Matched> = HashMap::new();
    for (q, s) in searches.iter().enumerate() {
        let q = q as u32;
        for &(d, m) in &s.matches {
            let r = store.ratio(d, m);
            let (a, b) = (q.min(d), q.max(d));
            let e = pairs.entry((a, b)).or_insert(Matched {
                a,
                b,
                ratio_ab: 0.0,
                ratio_ba: 0.0,
            });
            // The search by q found part of d's sample.
            if q == a {
                e.ratio_ab = r;
            } else {
                e.ratio_ba = r;
            }
        }
    }
    let mut matched: Vec<Matched> = pairs.into_values().collect();
    matched.sort_unstable_by_key(|m| (m.a, m.b));
    let mut stats = store.stats();
    stats.searches = searches.len();
    if !searches.is_empty() {
        let n = searches.len() as f64;
        stats.probes_per_search = searches.iter().map(|s| s.probes).sum::<u64>() as f64 / n;
        stats.ignored_per_search =
            searches.iter().map(|s| u64::from(s.ignored)).sum::<u64>() as f64 / n;
    }
    Ok(SampleRun { matched, stats })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Pair;
    use lineage_core::fingerprint::fmix64;
    use lineage_core::fingerprint::polynomial::standard;

    /// Near-duplicate pairs by the sample store with the default settings:
    /// candidates whose estimate is at least `min_similarity − slack`,
    /// kept iff their exact Jaccard resemblance is at least `min_similarity`.
    fn pairs(docs: &[SimDoc], poly: &Polynomial, min_similarity: f64) -> Vec<Pair> {
        let p = SampleParams::default();
        let run = run(docs, poly, &p).expect("at most 2^20 documents");
        let candidates = run.candidates(min_similarity - p.slack);
        crate::fuzzy::verify(docs, &candidates, min_similarity)
    }

    #[test]
    fn a_block_holds_254_entries_and_chains_grow_by_blocks() {
        let mut f = BlockFile::new();
        let slot = 0xabcd;
        let hash = |i: u32| slot << 12 | (i & 0xfff);
        for i in 0..254 {
            f.insert(hash(i), i).unwrap();
        }
        assert_eq!(f.blocks(), 1);
        assert_eq!(f.chain_len(slot as usize), 1);
        let head = f.words()[slot as usize] as usize;
        assert_eq!(
            head, 256,
            "the first data block follows the 256-block directory"
        );
        assert_eq!(f.words()[head * 256], 0, "no overflow yet");
        assert_eq!(f.words()[head * 256 + 1], 254);
        // Entry layout: low 12 hash bits over a 20-bit document id.
        assert_eq!(f.words()[head * 256 + 2 + 7], 7 << 20 | 7);
        f.insert(hash(254), 254).unwrap();
        assert_eq!(f.blocks(), 2);
        assert_eq!(f.chain_len(slot as usize), 2);
        let new_head = f.words()[slot as usize] as usize;
        assert_eq!(
            f.words()[new_head * 256],
            head as u32,
            "new head overflows to the full block"
        );
        assert_eq!(f.words()[new_head * 256 + 1], 1);
        for i in 255..254 * 3 + 1 {
            f.insert(hash(i), i).unwrap();
        }
        assert_eq!(f.chain_len(slot as usize), 4, "⌈763/254⌉ blocks");
        assert_eq!(f.entries(), 254 * 3 + 1);
        // Other slots are untouched.
        assert_eq!(f.chain_len(slot as usize + 1), 0);
        // Lookup reads the whole chain and finds each entry by its low bits.
        let mut found = vec![];
        assert_eq!(f.lookup(hash(5), |d| found.push(d)), 4);
        found.sort();
        // hash(i) has low bits i, so only entry 5 has low bits 5.
        assert_eq!(found, vec![5]);
        assert_eq!(f.lookup(0x0000_0001, |_| panic!("empty slot")), 0);
    }

    #[test]
    fn document_ids_have_20_bits() {
        let mut f = BlockFile::new();
        assert!(f.insert(1, MAX_DOCS - 1).is_ok());
        let e = f.insert(1, MAX_DOCS).unwrap_err();
        assert!(matches!(e, SampleError::TooManyDocuments { id } if id == 1 << 20));
        assert!(e.to_string().contains("at most 1048576 documents"), "{e}");
        assert!(matches!(
            f.insert(1 << 28, 0),
            Err(SampleError::HashTooWide(_))
        ));
        let mut found = vec![];
        f.lookup(1, |d| found.push(d));
        assert_eq!(
            found,
            vec![MAX_DOCS - 1],
            "the rejected insert left nothing"
        );
    }

    #[test]
    fn the_store_refuses_the_document_past_2_pow_20() {
        let mut s = SampleStore {
            log: vec![
                LogEntry {
                    path: String::new(),
                    stored: 0
                };
                MAX_DOCS as usize
            ],
            ..SampleStore::default()
        };
        assert!(matches!(
            s.add("one too many", &[1]),
            Err(SampleError::TooManyDocuments { id }) if id == MAX_DOCS
        ));
    }

    #[test]
    fn selection_keeps_the_lowest() {
        let keys: Vec<u64> = (0..5000u64).map(|i| fmix64(i) >> 2).collect();
        let got = select(&keys, |_| false, 100);
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(got, sorted[..100]);
        assert_eq!(
            select(&keys[..30], |_| false, 100).len(),
            30,
            "short documents keep all"
        );
        // Common keys rank after all others, and fill in only when needed.
        let common = |k: u64| k < sorted[50];
        let got = select(&keys, common, 100);
        assert_eq!(got, sorted[50..150]);
        let got = select(&sorted[..60], common, 100);
        assert_eq!(got[..10], sorted[50..60]);
        assert_eq!(got[10..], sorted[..50]);
    }

    /// Koala's refinement: shingles starting with a common five-letter prefix
    /// rank after all others.
    #[test]
    fn common_prefixes_rank_last() {
        // Every other token is "ofthe": half the shingles start with it.
        let text: String = (0..300).map(|i| format!("ofthe w{i} ")).collect();
        let d = crate::fuzzy::sim_doc(&text, standard(), 8);
        let docs = vec![d.clone()];
        let table = PrefixTable::build(&docs, standard(), 8);
        let starts_common = |key: u64| {
            let keys = shingles_in_order(&d, standard(), 8).unwrap();
            let i = keys.iter().position(|&k| k == key).unwrap();
            d.terms[i] == "ofthe"
        };
        assert!((table.common_fraction(0.01) - 0.5).abs() < 0.01);
        let on = SampleParams {
            common_prefix_share: 0.01,
            ..SampleParams::default()
        };
        let got = ranked(&d, Some(&table), standard(), &on, 100);
        assert_eq!(got.len(), 100);
        assert!(
            got.iter().all(|&k| !starts_common(k)),
            "no common start selected"
        );
        let mut uncommon: Vec<u64> = d
            .shingles
            .iter()
            .copied()
            .filter(|&k| !starts_common(k))
            .collect();
        uncommon.sort();
        assert_eq!(got, uncommon[..100]);
        // Off: plain lowest keys, and about half of them start with "ofthe".
        let off = SampleParams::default();
        let plain = ranked(&d, Some(&table), standard(), &off, 100);
        assert_eq!(plain, d.shingles[..100]);
        let n = plain.iter().filter(|&&k| starts_common(k)).count();
        assert!((30..70).contains(&n), "{n}");
        // A document whose terms do not give back its shingles (another k)
        // falls back to plain selection.
        let other_k = crate::fuzzy::sim_doc(&text, standard(), 5);
        assert_eq!(
            ranked(&other_k, Some(&table), standard(), &on, 100),
            other_k.shingles[..100]
        );
    }

    fn store_with(docs: &[&[u32]]) -> SampleStore {
        let mut s = SampleStore::default();
        for (i, d) in docs.iter().enumerate() {
            s.add(&format!("d{i}"), d).unwrap();
        }
        s
    }

    #[test]
    fn common_substrings_are_ignored_up_to_ten() {
        let p = SampleParams::default();
        // Substring 1 is in 4 documents (common), 2 in 3 (not), 3 in 1.
        let s = store_with(&[&[1, 2, 3], &[1, 2], &[1, 2], &[1], &[9]]);
        let r = s.search(&[1, 2, 3], None, &p);
        assert_eq!(r.ignored, 1);
        assert_eq!(r.matches, vec![(0, 2), (1, 1), (2, 1)]);
        // The query's own copy does not count toward "common".
        let r = s.search(&[1, 2, 3], Some(0), &p);
        assert_eq!(r.ignored, 0, "1 is in only 3 other documents");
        assert_eq!(r.matches, vec![(1, 2), (2, 2), (3, 1)]);
        // Twelve common substrings: ten are ignored, the last two count.
        let common: Vec<u32> = (100..112).collect();
        let mut docs: Vec<Vec<u32>> = vec![common.clone(); 4];
        docs.push(vec![7]);
        let refs: Vec<&[u32]> = docs.iter().map(|d| &d[..]).collect();
        let s = store_with(&refs);
        let r = s.search(&common, None, &p);
        assert_eq!(r.ignored, 10);
        assert_eq!(r.matches, vec![(0, 2), (1, 2), (2, 2), (3, 2)]);
        assert_eq!(s.ratio(0, 2), 2.0 / 12.0);
    }

    #[test]
    fn identical_documents_match_fully() {
        let text: String = (0..400).map(|i| format!("w{} ", i * 7919 % 1000)).collect();
        let d = crate::fuzzy::sim_doc(&text, standard(), 8);
        assert!(d.shingles.len() > 300);
        let docs = vec![d.clone(), d];
        let run = run(&docs, standard(), &SampleParams::default()).unwrap();
        assert_eq!(
            run.matched,
            vec![Matched {
                a: 0,
                b: 1,
                ratio_ab: 1.0,
                ratio_ba: 1.0
            }]
        );
        assert_eq!(run.matched[0].jaccard_estimate(), 1.0);
        assert_eq!(run.stats.entries, 200);
        assert_eq!(run.stats.documents, 2);
        let got = pairs(&docs, standard(), 0.9);
        assert_eq!(
            got,
            vec![Pair {
                a: 0,
                b: 1,
                similarity: 1.0
            }]
        );
    }
}
