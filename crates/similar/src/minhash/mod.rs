//! MinHash LSH over k-shingle sets (docs/near-duplicates.md, "minhash"):
//! one-permutation hashing (Li, Owen, Zhang 2012) with optimal densification
//! (Shrivastava 2017) as the sketch, banding (Indyk–Motwani; Broder's
//! "bands") tuned to the threshold, and every candidate verified by exact
//! Jaccard, so precision is exact's and the banding only sets recall.
//!
//! *Sketch.* Each shingle key x is hashed once, h = fmix64(x ⊕ seed); its
//! top bits choose one of K bins (K = bands × rows) and the bin keeps the
//! least h. An empty bin i takes the value of the first non-empty bin on its
//! own pseudo-random probe sequence j₁(i), j₂(i), … (the same for every
//! document), which keeps Pr[bin i agrees] = J for every bin ("optimal
//! densification"). Values of different bins never coincide (a value's top
//! bits name its bin), so a copied value cannot match a bin's own.
//!
//! *Banding.* Band t hashes bins t·r .. t·r + r into one 64-bit key; two
//! documents are candidates when any band key agrees, with probability
//! P(J) = 1 − (1 − J^r)^b. (b, r) is chosen per threshold S: the largest r
//! for which the b that gives P(S) ≥ [`RECALL_AT_THRESHOLD`] (0.999) still fits
//! b·r ≤ the hash budget, since a larger r makes the S-curve steeper and
//! so examines fewer pairs below S.
//!
//! *Candidates.* Every document is sketched in one pass over its set, which
//! also sums its value hashes into a digest. Documents with identical
//! shingle sets (equal digests, confirmed by comparing the sets) are folded
//! into one class: their pairs are J = 1 without any Jaccard computed, so a
//! thousand copies of one page cost no verification and put one entry, not a
//! thousand, in each bucket. The band keys of one representative per class
//! are sorted into buckets; each representative then gathers the later
//! representatives of its buckets, each once, and verifies them by exact
//! Jaccard with early exit (`exact::jaccard_at_least`).
//!
//! *Sketch filter.* Before the exact check, a candidate's Jaccard is
//! estimated from the low byte of every bin (b-bit minwise hashing, Li and
//! König 2010: bins agree with probability J + (1 − J)/256). Boilerplate that
//! many documents share (a list footer, MIME headers) can hold the least
//! value of all the bins of one band for hundreds of them, and that one
//! bucket is then most of the candidates, nearly all far below S. A
//! candidate whose agreeing bins fall more than `FILTER_SIGMAS` standard
//! deviations below what a pair at S gives is dropped unverified: a pair at
//! or above S is lost so with probability below 10^-4 (the normal tail at
//! 3.7σ), beside the banding's 10^-3. What is kept is verified exactly.

pub mod lsh;

use std::time::Instant;

use rayon::prelude::*;
use serde::Serialize;

use super::exact::jaccard_at_least;
use super::{Pair, SimDoc};
use lineage_core::fingerprint::fmix64;
pub use lsh::BandIndex;

/// Least probability that a pair sitting exactly at the threshold becomes a
/// candidate, which the default banding guarantees (pairs above it are
/// found more often still).
pub const RECALL_AT_THRESHOLD: f64 = 0.999;

/// How far below a pair at the threshold, in standard deviations of its
/// count of agreeing bins, a candidate's count may fall before the sketch
/// filter drops it.
pub(crate) const FILTER_SIGMAS: f64 = 3.7;

/// Default budget of hash values per document (bins = bands × rows).
pub const DEFAULT_HASHES: u32 = 256;

/// Largest budget the options accept.
pub const MAX_HASHES: u32 = 4096;

const SEED_VALUE: u64 = 0x6a09_e667_f3bc_c908;
const SEED_PROBE: u64 = 0xbb67_ae85_84ca_a73b;
const SEED_BAND: u64 = 0x3c6e_f372_fe94_f82b;

/// LSH bands of rows: a document's sketch has bands × rows bins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Banding {
    /// b: bands; a pair is a candidate when one band agrees whole.
    pub bands: u32,
    /// r: bins (hash values) per band.
    pub rows: u32,
}

impl Banding {
    /// Bins of the sketch.
    pub fn hashes(self) -> u32 {
        self.bands * self.rows
    }

    /// The S-curve: the probability that a pair at Jaccard `j` shares at least
    /// one band key, 1 − (1 − j^r)^b.
    pub(crate) fn candidate_probability(self, j: f64) -> f64 {
        let miss_one = 1.0 - j.clamp(0.0, 1.0).powi(self.rows as i32);
        1.0 - miss_one.powi(self.bands as i32)
    }

    /// The banding for threshold `min` within `max_hashes` bins: the largest
    /// r for which b = ⌈ln(1 − recall) / ln(1 − min^r)⌉ gives b·r ≤
    /// `max_hashes`; if not even r = 1 fits, r = 1 and b = `max_hashes` (the
    /// best this budget can do; `Banding::candidate_probability` says how
    /// good).
    pub fn for_threshold(min: f64, max_hashes: u32, recall: f64) -> Banding {
        assert!(max_hashes >= 1 && min > 0.0 && min <= 1.0 && recall < 1.0);
        let miss = (1.0 - recall).ln();
        for rows in (1..=max_hashes).rev() {
            let p = min.powi(rows as i32);
            let bands = if p >= 1.0 {
                1.0
            } else {
                (miss / (-p).ln_1p()).ceil().max(1.0)
            };
            if bands * f64::from(rows) <= f64::from(max_hashes) {
                return Banding {
                    bands: bands as u32,
                    rows,
                };
            }
        }
        Banding {
            bands: max_hashes,
            rows: 1,
        }
    }
}

/// Bin of a hash value among `bins` (multiply-shift: the top bits).
#[inline]
fn bin_of(h: u64, bins: usize) -> usize {
    ((u128::from(h) * bins as u128) >> 64) as usize
}

/// The one-permutation sketch of a set, densified: `out` gets `bins` values.
/// False (and `out` empty) for an empty set. Also returns, through
/// `Scratch::digest`, a commutative hash of the set (equal sets, equal
/// digests).
pub fn sketch(set: &[u64], bins: usize, out: &mut Vec<u64>) -> bool {
    sketch_with(set, bins, &mut Scratch::default(), out)
}

/// Reusable buffers of [`sketch_with`].
#[derive(Default)]
pub(crate) struct Scratch {
    filled: Vec<bool>,
    bins: Vec<u64>,
    /// Wrapping sum of the set's value hashes, mixed with its size.
    pub(crate) digest: u64,
}

pub(crate) fn sketch_with(set: &[u64], bins: usize, s: &mut Scratch, out: &mut Vec<u64>) -> bool {
    out.clear();
    s.digest = 0;
    if set.is_empty() || bins == 0 {
        return false;
    }
    out.resize(bins, u64::MAX);
    s.filled.clear();
    s.filled.resize(bins, false);
    let filled = &mut s.filled;
    let mut sum = 0u64;
    for &x in set {
        let h = fmix64(x ^ SEED_VALUE);
        sum = sum.wrapping_add(h);
        let i = bin_of(h, bins);
        filled[i] = true;
        if h < out[i] {
            out[i] = h;
        }
    }
    s.digest = fmix64(sum ^ set.len() as u64);
    for i in 0..bins {
        if filled[i] {
            continue;
        }
        // Optimal densification: bin i's own probe sequence, the same for
        // every document, until a bin that was filled by the set itself.
        let seed = fmix64((i as u64) ^ SEED_PROBE);
        let mut attempt: u64 = 1;
        loop {
            let j = bin_of(fmix64(seed ^ attempt), bins);
            if filled[j] {
                out[i] = out[j];
                break;
            }
            attempt += 1;
        }
    }
    true
}

/// A set's band keys (`banding.bands` of them, band t mixed in so keys of
/// different bands do not meet); false and empty for an empty set. The
/// sketch's bins stay in `s.bins` ([`low_bytes`] reads them).
pub(crate) fn band_keys_with(
    set: &[u64],
    banding: Banding,
    s: &mut Scratch,
    out: &mut Vec<u64>,
) -> bool {
    out.clear();
    let mut values = std::mem::take(&mut s.bins);
    let some = sketch_with(set, banding.hashes() as usize, s, &mut values);
    if some {
        out.extend(
            values
                .chunks_exact(banding.rows as usize)
                .enumerate()
                .map(|(t, rows)| {
                    rows.iter()
                        .fold(fmix64(t as u64 ^ SEED_BAND), |h, &v| fmix64(h ^ v))
                }),
        );
    }
    s.bins = values;
    some
}

/// Settings of a minhash run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    /// The LSH bands and rows.
    pub banding: Banding,
}

impl Options {
    /// The default banding for threshold `min` within `max_hashes` bins.
    pub fn new(min: f64, max_hashes: u32) -> Options {
        Options {
            banding: Banding::for_threshold(min, max_hashes, RECALL_AT_THRESHOLD),
        }
    }
}

/// What a minhash run did.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct MinhashStats {
    /// Bins of each sketch (bands × rows).
    pub hashes: u32,
    /// LSH bands (b).
    pub bands: u32,
    /// Rows per band (r).
    pub rows: u32,
    /// The S-curve at the threshold: the chance a pair exactly at it is
    /// examined.
    pub candidate_probability_at_threshold: f64,
    /// Documents with at least one shingle.
    pub documents_with_shingles: u64,
    /// Classes of identical shingle sets (one bucket entry per band each).
    pub distinct_sets: u64,
    /// Band buckets holding two or more classes.
    pub shared_buckets: u64,
    /// Classes in the fullest of those.
    pub largest_bucket: u64,
    /// Distinct pairs of classes that met in a bucket.
    pub candidates: u64,
    /// Of those, dropped by the sketch filter without an exact check.
    pub filtered: u64,
    /// Of those, with exact Jaccard ≥ the threshold.
    pub verified: u64,
    /// Pairs reported, including those between identical documents.
    pub pairs: u64,
    /// Bytes of a document's band keys (8 per band).
    pub sketch_bytes_per_document: f64,
    /// Band buckets: entries and their bucket ids.
    pub index_bytes: u64,
    /// Wall-clock time of the run.
    pub seconds: f64,
}

/// Documents grouped by identical non-empty shingle sets, given each
/// document's digest (`None`: no shingles): each class's members ascending,
/// classes by their first member.
fn classes(docs: &[SimDoc], digests: &[Option<u64>]) -> Vec<Vec<u32>> {
    let mut keyed: Vec<(u64, u32)> = digests
        .iter()
        .enumerate()
        .filter_map(|(i, d)| d.map(|d| (d, i as u32)))
        .collect();
    keyed.par_sort_unstable();
    let mut out: Vec<Vec<u32>> = Vec::new();
    for group in keyed.chunk_by(|x, y| x.0 == y.0) {
        // Equal digests of unequal sets are split here.
        let first = out.len();
        for &(_, d) in group {
            let set = &docs[d as usize].shingles;
            match out[first..]
                .iter_mut()
                .find(|c| docs[c[0] as usize].shingles == *set)
            {
                Some(c) => c.push(d),
                None => out.push(vec![d]),
            }
        }
    }
    out.sort_unstable_by_key(|c| c[0]);
    out
}

/// All pairs with Jaccard ≥ `min` that the banding finds (each verified; every
/// pair of identical non-empty sets), sorted by (a, b).
pub fn pairs(docs: &[SimDoc], min: f64, o: &Options) -> (Vec<Pair>, MinhashStats) {
    assert!(min > 0.0 && min <= 1.0, "threshold {min}");
    let start = Instant::now();
    let banding = o.banding;
    let b = banding.bands as usize;
    // Every document's band keys and digest in one pass over its set.
    let sketched: Vec<Sketched> = docs
        .par_iter()
        .map_init(Scratch::default, |scratch, d| {
            let mut keys = Vec::with_capacity(b);
            if band_keys_with(&d.shingles, banding, scratch, &mut keys) {
                Sketched {
                    digest: Some(scratch.digest),
                    keys,
                    low: low_bytes(&scratch.bins),
                }
            } else {
                Sketched {
                    digest: None,
                    keys,
                    low: Box::default(),
                }
            }
        })
        .collect();
    let digests: Vec<Option<u64>> = sketched.iter().map(|s| s.digest).collect();
    let least_agreeing = least_agreeing(min, banding.hashes());
    let classes = classes(docs, &digests);
    let reps: Vec<u32> = classes.iter().map(|c| c[0]).collect();
    let mut stats = MinhashStats {
        hashes: banding.hashes(),
        bands: banding.bands,
        rows: banding.rows,
        candidate_probability_at_threshold: banding.candidate_probability(min),
        documents_with_shingles: classes.iter().map(|c| c.len() as u64).sum(),
        distinct_sets: classes.len() as u64,
        sketch_bytes_per_document: 8.0 * f64::from(banding.bands),
        ..MinhashStats::default()
    };
    // Pairs of classes with their Jaccard.
    let mut found: Vec<ClassPair> = Vec::new();
    // J = 1 is identity of sets: the classes are the whole answer.
    if min < 1.0 && reps.len() > 1 {
        let keys: Vec<u64> = reps
            .iter()
            .flat_map(|&d| sketched[d as usize].keys.iter().copied())
            .collect();
        let buckets = Buckets::new(&keys, b);
        stats.shared_buckets = buckets.starts.len() as u64 - 1;
        stats.largest_bucket = buckets
            .starts
            .windows(2)
            .map(|w| u64::from(w[1] - w[0]))
            .max()
            .unwrap_or(0);
        stats.index_bytes =
            4 * (buckets.members.len() + buckets.starts.len() + buckets.of.len()) as u64;
        let n = reps.len();
        let per_rep: Vec<(Vec<ClassPair>, u64, u64)> = (0..n)
            .into_par_iter()
            .map_init(Vec::new, |met: &mut Vec<u32>, a| {
                // The later classes sharing a bucket with `a`, each once.
                met.clear();
                for t in 0..b {
                    if let Some(members) = buckets.bucket(a * b + t) {
                        let later = members.partition_point(|&c| c as usize <= a);
                        met.extend_from_slice(&members[later..]);
                    }
                }
                met.sort_unstable();
                met.dedup();
                let set_a = &docs[reps[a] as usize].shingles;
                let low_a = &sketched[reps[a] as usize].low;
                let mut filtered = 0;
                let hits: Vec<ClassPair> = met
                    .iter()
                    .filter_map(|&c| {
                        let rep_c = reps[c as usize] as usize;
                        if agreeing(low_a, &sketched[rep_c].low) < least_agreeing {
                            filtered += 1;
                            return None;
                        }
                        jaccard_at_least(set_a, &docs[rep_c].shingles, min)
                            .map(|j| (a as u32, c, j))
                    })
                    .collect();
                (hits, met.len() as u64, filtered)
            })
            .collect();
        for (hits, candidates, filtered) in per_rep {
            stats.candidates += candidates;
            stats.filtered += filtered;
            stats.verified += hits.len() as u64;
            found.extend(hits);
        }
    }
    let mut out = Vec::new();
    for c in &classes {
        for (i, &x) in c.iter().enumerate() {
            for &y in &c[i + 1..] {
                out.push(Pair {
                    a: x,
                    b: y,
                    similarity: 1.0,
                });
            }
        }
    }
    for &(a, c, j) in &found {
        for &x in &classes[a as usize] {
            for &y in &classes[c as usize] {
                out.push(Pair {
                    a: x.min(y),
                    b: x.max(y),
                    similarity: j,
                });
            }
        }
    }
    out.par_sort_unstable_by_key(|p| (p.a, p.b));
    stats.pairs = out.len() as u64;
    stats.seconds = start.elapsed().as_secs_f64();
    (out, stats)
}

/// The low byte of every bin of a sketch: what the sketch filter compares.
pub(crate) fn low_bytes(bins: &[u64]) -> Box<[u8]> {
    bins.iter().map(|&v| v as u8).collect()
}

/// Bins whose low bytes agree.
pub fn agreeing(a: &[u8], b: &[u8]) -> u32 {
    a.iter().zip(b).map(|(x, y)| u32::from(x == y)).sum()
}

/// The fewest agreeing low bytes of `bins` bins a candidate needs to be
/// checked exactly: `FILTER_SIGMAS` standard deviations below the mean of
/// a pair at Jaccard `min`, whose bins agree with probability
/// p = min + (1 − min)/256 (b-bit minwise hashing with b = 8).
pub fn least_agreeing(min: f64, bins: u32) -> u32 {
    let n = f64::from(bins);
    let p = min + (1.0 - min) / 256.0;
    let bound = n * p - FILTER_SIGMAS * (n * p * (1.0 - p)).sqrt();
    bound.max(0.0).floor() as u32
}

/// A document of a batch run, sketched: its set's digest (`None`: no
/// shingles), band keys and low bytes.
struct Sketched {
    digest: Option<u64>,
    keys: Vec<u64>,
    low: Box<[u8]>,
}

/// Two classes (a < b) and their Jaccard.
type ClassPair = (u32, u32, f64);

/// Band buckets of the batch run: slot s = class · b + band has key
/// `keys[s]`; buckets holding two or more slots, in CSR form.
struct Buckets {
    /// Classes of bucket i: `members[starts[i]..starts[i+1]]`, ascending.
    members: Vec<u32>,
    starts: Vec<u32>,
    /// Bucket of each slot, `u32::MAX` when the key is its own.
    of: Vec<u32>,
}

impl Buckets {
    fn new(keys: &[u64], b: usize) -> Buckets {
        assert!(
            u32::try_from(keys.len()).is_ok(),
            "more than 2^32 band keys"
        );
        let mut entries: Vec<(u64, u32)> = keys
            .iter()
            .enumerate()
            .map(|(s, &k)| (k, s as u32))
            .collect();
        // By (key, slot): each bucket's classes ascending.
        entries.par_sort_unstable();
        let mut out = Buckets {
            members: Vec::new(),
            starts: vec![0],
            of: vec![u32::MAX; keys.len()],
        };
        for group in entries.chunk_by(|x, y| x.0 == y.0) {
            if group.len() < 2 {
                continue;
            }
            let id = out.starts.len() as u32 - 1;
            for &(_, s) in group {
                out.of[s as usize] = id;
                let class = s / b as u32;
                // One class twice in a bucket (two of its bands' keys equal):
                // once is enough.
                if out.members.len() > out.starts[id as usize] as usize
                    && out.members.last() == Some(&class)
                {
                    continue;
                }
                out.members.push(class);
            }
            out.starts.push(out.members.len() as u32);
        }
        out
    }

    fn bucket(&self, slot: usize) -> Option<&[u32]> {
        let i = self.of[slot];
        (i != u32::MAX).then(|| {
            &self.members[self.starts[i as usize] as usize..self.starts[i as usize + 1] as usize]
        })
    }
}

#[cfg(test)]
mod tests;
