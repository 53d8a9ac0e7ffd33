//! Charikar's simhash (docs/algorithms.md §9) over k-shingle sets, with a Hamming
//! index: the sliced Hamming table in SQLite, or in memory by multi-index
//! hashing (Norouzi, Punjani, Fleet), of which the sliced Hamming table is the special case.
//!
//! Every shingle key is a feature of weight 1 whose bits are `fmix64(key)`
//! (two seeded mixes for 128 bits); bit i of the sketch is 1 when more features
//! have bit i set than not (Manku's `V[i] > 0`). For two sets the fraction of
//! differing bits estimates θ/π, where cos θ = |A∩B| / √(|A|·|B|).
//!
//! Jaccard ↔ Hamming: for a given Jaccard resemblance J, the cosine is least
//! when |A| = |B|, where cos θ = 2J/(1+J). So a pair at J ≥ S differs in each
//! bit with probability at most p(S) = arccos(2S/(1+S))/π, and its distance d
//! over f bits is about Binomial(f, p). Hence:
//! - the *estimate* of J from d inverts that: c = cos(π·d/f), J ≈ c/(2−c)
//!   (0 when c ≤ 0);
//! - *with* verification, precision is exact Jaccard's, so h only costs
//!   recall: the default is mean + 2 sd, ⌈f·p + 2·√(f·p·(1−p))⌉, which keeps
//!   about 97.7 % of pairs sitting exactly at S and more of those above;
//! - *without* verification, the default is the largest d whose estimate is
//!   still ≥ S, so every reported pair's similarity is ≥ S.

pub mod multi;
pub(crate) mod sql;

use std::convert::Infallible;
use std::fmt;
use std::fmt::Debug;
use std::hash::Hash;
use std::str::FromStr;
use std::time::Instant;

use rayon::prelude::*;
use serde::Serialize;

use super::exact::jaccard;
use super::{Pair, SimDoc};
use lineage_core::fingerprint::fmix64;
pub use multi::MultiIndex;
pub use sql::SqlIndex;

/// How many standard deviations of the distance at the threshold the default
/// verified h allows (one-sided: about 97.7 % of pairs at exactly S).
pub(crate) const RECALL_SIGMAS: f64 = 2.0;

/// Seed of the second 64 bits of a 128-bit sketch's feature hash.
const SEED_HI: u64 = 0x9e37_79b9_7f4a_7c15;

/// A simhash sketch: a fixed-width bit string.
pub trait Sketch: Copy + Eq + Hash + Debug + Send + Sync + 'static {
    /// Its width f: 64 or 128.
    const BITS: u32;
    /// Charikar's simhash of a set of shingle keys, each of weight 1.
    fn simhash(keys: &[u64]) -> Self;
    /// The all-zero sketch.
    fn zero() -> Self;
    /// The Hamming distance: how many bits differ.
    fn hamming(self, other: Self) -> u32;
    /// Bits `lo..lo + width` (width ≤ 64) as an integer.
    fn bits(self, lo: u32, width: u32) -> u64;
    /// This sketch with bits `lo..lo + width` replaced by `value`.
    fn with_bits(self, lo: u32, width: u32, value: u64) -> Self;
}

fn mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

/// Add the set bits of `h` to per-bit counters.
#[inline]
fn count_bits(counts: &mut [u32; 64], h: u64) {
    for (i, c) in counts.iter_mut().enumerate() {
        *c += ((h >> i) & 1) as u32;
    }
}

/// Bit i is 1 when more than half of `n` features have it set: with ±1
/// weights, V[i] = count − (n − count) > 0.
fn majority(counts: &[u32; 64], n: usize) -> u64 {
    let mut x = 0;
    for (i, &c) in counts.iter().enumerate() {
        if 2 * c as usize > n {
            x |= 1 << i;
        }
    }
    x
}

impl Sketch for u64 {
    const BITS: u32 = 64;
    fn simhash(keys: &[u64]) -> u64 {
        let mut counts = [0u32; 64];
        for &k in keys {
            count_bits(&mut counts, fmix64(k));
        }
        majority(&counts, keys.len())
    }
    fn zero() -> u64 {
        0
    }
    fn hamming(self, other: u64) -> u32 {
        (self ^ other).count_ones()
    }
    fn bits(self, lo: u32, width: u32) -> u64 {
        (self >> lo) & mask(width)
    }
    fn with_bits(self, lo: u32, width: u32, value: u64) -> u64 {
        let m = mask(width) << lo;
        (self & !m) | ((value << lo) & m)
    }
}

impl Sketch for u128 {
    const BITS: u32 = 128;
    fn simhash(keys: &[u64]) -> u128 {
        let mut lo = [0u32; 64];
        let mut hi = [0u32; 64];
        for &k in keys {
            count_bits(&mut lo, fmix64(k));
            count_bits(&mut hi, fmix64(k ^ SEED_HI));
        }
        u128::from(majority(&lo, keys.len())) | u128::from(majority(&hi, keys.len())) << 64
    }
    fn zero() -> u128 {
        0
    }
    fn hamming(self, other: u128) -> u32 {
        (self ^ other).count_ones()
    }
    fn bits(self, lo: u32, width: u32) -> u64 {
        (self >> lo) as u64 & mask(width)
    }
    fn with_bits(self, lo: u32, width: u32, value: u64) -> u128 {
        let m = u128::from(mask(width)) << lo;
        (self & !m) | ((u128::from(value) << lo) & m)
    }
}

/// The disjoint bit ranges a sketch is cut into, as near-equal as possible
/// (the first `f mod m` slices one bit wider), each at most 64 bits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slices {
    bits: u32,
    /// (lowest bit, width) of each slice.
    ranges: Vec<(u32, u32)>,
}

impl Slices {
    /// `m` slices of `bits` bits. Panics unless ⌈bits/64⌉ ≤ m ≤ bits.
    pub fn new(bits: u32, m: u32) -> Slices {
        assert!(
            m >= bits.div_ceil(64) && m <= bits,
            "{m} slices of {bits} bits"
        );
        let (w, extra) = (bits / m, bits % m);
        let mut lo = 0;
        let ranges = (0..m)
            .map(|i| {
                let width = w + u32::from(i < extra);
                let r = (lo, width);
                lo += width;
                r
            })
            .collect();
        Slices { bits, ranges }
    }

    /// The pigeonhole: h + 1 slices, so a sketch within distance h of the query
    /// equals it on at least one whole slice (pigeonhole).
    pub(crate) fn pigeonhole(bits: u32, h: u32) -> Slices {
        Slices::new(bits, (h + 1).clamp(bits.div_ceil(64), bits))
    }

    pub(crate) fn bits(&self) -> u32 {
        self.bits
    }

    /// How many slices (m).
    pub fn len(&self) -> usize {
        self.ranges.len()
    }
    /// Whether there are no slices.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    pub(crate) fn ranges(&self) -> &[(u32, u32)] {
        &self.ranges
    }

    /// The slice values of a sketch.
    pub(crate) fn values<S: Sketch>(&self, s: S) -> impl Iterator<Item = u64> + '_ {
        self.ranges.iter().map(move |&(lo, w)| s.bits(lo, w))
    }

    /// The sketch whose slices have these values.
    pub(crate) fn join<S: Sketch>(&self, values: impl IntoIterator<Item = u64>) -> S {
        self.ranges
            .iter()
            .zip(values)
            .fold(S::zero(), |s, (&(lo, w), v)| s.with_bits(lo, w, v))
    }
}

/// Probability that one sketch bit differs for two sets at Jaccard `j` when
/// they are equally large (the worst case for a given J): θ/π with
/// cos θ = 2J/(1+J).
pub(crate) fn flip_probability(j: f64) -> f64 {
    (2.0 * j / (1.0 + j)).clamp(-1.0, 1.0).acos() / std::f64::consts::PI
}

/// The Jaccard resemblance a Hamming distance `d` of `bits` suggests:
/// c = cos(π·d/f), J ≈ c/(2 − c), 0 when c ≤ 0.
pub(crate) fn estimate(d: u32, bits: u32) -> f64 {
    // cos(π/2) is not exactly 0 in floating point.
    if 2 * d >= bits {
        return 0.0;
    }
    let c = (std::f64::consts::PI * f64::from(d) / f64::from(bits)).cos();
    if c <= 0.0 { 0.0 } else { c / (2.0 - c) }
}

/// The largest distance whose [`estimate`] is still ≥ `j` (the default h
/// without verification).
pub(crate) fn distance_for_estimate(j: f64, bits: u32) -> u32 {
    let mut d = 0;
    while d < bits / 2 && estimate(d + 1, bits) >= j {
        d += 1;
    }
    d
}

/// Mean + [`RECALL_SIGMAS`] sd of the distance of a pair at exactly `j` (the
/// default h with verification), at most f/2.
pub(crate) fn distance_for_recall(j: f64, bits: u32) -> u32 {
    let p = flip_probability(j);
    let f = f64::from(bits);
    let h = (f * p + RECALL_SIGMAS * (f * p * (1.0 - p)).sqrt()).ceil();
    (h as u32).min(bits / 2)
}

/// Where the sketches are indexed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Backend {
    /// Multi-index hashing in hash maps.
    #[default]
    Memory,
    /// The sliced index's table of h + 1 indexed slice columns in an in-memory SQLite
    /// database.
    Sqlite,
}

impl FromStr for Backend {
    type Err = String;
    fn from_str(s: &str) -> Result<Backend, String> {
        match s.to_ascii_lowercase().as_str() {
            "memory" => Ok(Backend::Memory),
            "sqlite" => Ok(Backend::Sqlite),
            _ => Err(format!("unknown index '{s}' (expected memory or sqlite)")),
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Memory => "memory",
            Backend::Sqlite => "sqlite",
        })
    }
}

/// Settings of a simhash run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    /// Sketch width: 64 or 128.
    pub bits: u32,
    /// Largest Hamming distance of a candidate pair (h).
    pub distance: u32,
    /// Keep a candidate only if its exact Jaccard is ≥ the threshold.
    pub verify: bool,
    /// Where the sketches are indexed.
    pub backend: Backend,
}

impl Options {
    /// The defaults for a threshold: 64 bits, verified, h from
    /// `distance_for_recall` (or `distance_for_estimate` unverified).
    pub fn new(min_similarity: f64, bits: u32, verify: bool) -> Options {
        let distance = if verify {
            distance_for_recall(min_similarity, bits)
        } else {
            distance_for_estimate(min_similarity, bits)
        };
        Options {
            bits,
            distance,
            verify,
            backend: Backend::Memory,
        }
    }
}

/// What a simhash run did.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SimhashStats {
    /// Sketch width (f).
    pub bits: u32,
    /// Largest Hamming distance of a candidate pair (h).
    pub hamming_distance: u32,
    /// The backend: `memory` or `sqlite`.
    pub index: String,
    /// Slices of the index (m).
    pub slices: u32,
    /// How far each slice is searched: the largest per-slice radius, 0 for
    /// the sliced Hamming table's exact slice lookups.
    pub slice_radius: u32,
    /// Whether candidates were verified by exact Jaccard.
    pub verify: bool,
    /// Documents with at least one shingle (the others have no sketch).
    pub(crate) documents_indexed: u64,
    /// Index lookups: hash-map probes, or per-column SELECTs of the UNION.
    pub probes: u64,
    /// Distinct earlier documents the lookups returned, over all queries.
    pub candidates: u64,
    /// Of those, within Hamming distance h.
    pub within_distance: u64,
    /// Of those, with exact Jaccard ≥ the threshold (when verifying).
    pub verified: u64,
    /// Bytes of one sketch: f / 8.
    pub sketch_bytes_per_document: f64,
    /// The index's own memory (hash maps, or SQLite pages), beyond the
    /// sketches and the cached shingle keys.
    pub index_bytes: u64,
    /// `index_bytes` per indexed document.
    pub index_bytes_per_document: f64,
    /// Wall-clock time of the run.
    pub seconds: f64,
}

/// Why a simhash run failed: only the SQLite index can.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The [`SqlIndex`]'s database failed.
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
}

impl From<Infallible> for Error {
    fn from(e: Infallible) -> Error {
        match e {}
    }
}

/// A Hamming index, in memory or in SQLite.
trait Index<S: Sketch> {
    /// What its operations fail with ([`Infallible`] in memory).
    type Error;
    /// Documents within distance h of `q`, with their distance; returns the
    /// number of probes and of candidates examined.
    fn query(&mut self, q: S, out: &mut Vec<(u32, u32)>) -> Result<(u64, u64), Self::Error>;
    fn insert(&mut self, doc: u32, s: S) -> Result<(), Self::Error>;
    fn bytes(&self) -> Result<u64, Self::Error>;
}

impl<S: Sketch> Index<S> for MultiIndex<S> {
    type Error = Infallible;
    fn query(&mut self, q: S, out: &mut Vec<(u32, u32)>) -> Result<(u64, u64), Infallible> {
        let c = MultiIndex::query(self, q, out);
        Ok((c.probes, c.candidates))
    }
    fn insert(&mut self, doc: u32, s: S) -> Result<(), Infallible> {
        MultiIndex::insert(self, doc, s);
        Ok(())
    }
    fn bytes(&self) -> Result<u64, Infallible> {
        Ok(self.heap_bytes())
    }
}

impl<S: Sketch> Index<S> for SqlIndex<S> {
    type Error = rusqlite::Error;
    fn query(&mut self, q: S, out: &mut Vec<(u32, u32)>) -> Result<(u64, u64), rusqlite::Error> {
        let candidates = SqlIndex::query(self, q, out)?;
        Ok((self.slices().len() as u64, candidates))
    }
    fn insert(&mut self, doc: u32, s: S) -> Result<(), rusqlite::Error> {
        SqlIndex::insert(self, doc, s)
    }
    fn bytes(&self) -> Result<u64, rusqlite::Error> {
        self.file_bytes()
    }
}

/// Near-duplicate pairs by simhash: each document, in order, queries the
/// index for earlier ones within distance h and is then inserted (the live
/// use of the sliced Hamming table); candidates are verified by exact Jaccard ≥
/// `min_similarity` unless `opts.verify` is off, when every pair within h is
/// reported with its `estimate`. Sorted by (a, b).
pub fn pairs(
    docs: &[SimDoc],
    min_similarity: f64,
    opts: &Options,
) -> Result<(Vec<Pair>, SimhashStats), Error> {
    match opts.bits {
        64 => pairs_of::<u64>(docs, min_similarity, opts),
        128 => pairs_of::<u128>(docs, min_similarity, opts),
        b => panic!("simhash of {b} bits (64 or 128)"),
    }
}

fn pairs_of<S: Sketch>(
    docs: &[SimDoc],
    min_similarity: f64,
    opts: &Options,
) -> Result<(Vec<Pair>, SimhashStats), Error> {
    let start = Instant::now();
    let h = opts.distance;
    let sketches: Vec<S> = docs.par_iter().map(|d| S::simhash(&d.shingles)).collect();
    let stats = SimhashStats {
        bits: S::BITS,
        hamming_distance: h,
        index: opts.backend.to_string(),
        verify: opts.verify,
        ..SimhashStats::default()
    };
    match opts.backend {
        Backend::Memory => {
            let m = MultiIndex::new(multi::choose_slices(S::BITS, h, docs.len()), h);
            let (slices, slice_radius) = (m.slices().len() as u32, m.largest_radius());
            let stats = SimhashStats {
                slices,
                slice_radius,
                ..stats
            };
            run(docs, &sketches, min_similarity, opts, m, stats, start)
        }
        Backend::Sqlite => {
            let q = SqlIndex::open_in_memory(h)?;
            let slices = q.slices().len() as u32;
            let stats = SimhashStats { slices, ..stats };
            run(docs, &sketches, min_similarity, opts, q, stats, start)
        }
    }
}

/// [`pairs_of`] with its index chosen and `stats` holding the settings.
fn run<S: Sketch, I: Index<S>>(
    docs: &[SimDoc],
    sketches: &[S],
    min_similarity: f64,
    opts: &Options,
    mut index: I,
    mut stats: SimhashStats,
    start: Instant,
) -> Result<(Vec<Pair>, SimhashStats), Error>
where
    Error: From<I::Error>,
{
    // Query, then insert: each pair is met once, from its later document.
    let mut within: Vec<(u32, u32, u32)> = Vec::new();
    let mut found = Vec::new();
    for (i, (d, &s)) in docs.iter().zip(sketches).enumerate() {
        // An empty set has no features; its all-zero sketch means nothing.
        if d.shingles.is_empty() {
            continue;
        }
        let (probes, candidates) = index.query(s, &mut found)?;
        stats.probes += probes;
        stats.candidates += candidates;
        within.extend(found.iter().map(|&(j, dist)| (j, i as u32, dist)));
        index.insert(i as u32, s)?;
        stats.documents_indexed += 1;
    }
    stats.within_distance = within.len() as u64;
    let mut out: Vec<Pair> = if opts.verify {
        within
            .par_iter()
            .filter_map(|&(a, b, _)| {
                let j = jaccard(&docs[a as usize].shingles, &docs[b as usize].shingles);
                (j >= min_similarity).then_some(Pair {
                    a,
                    b,
                    similarity: j,
                })
            })
            .collect()
    } else {
        within
            .iter()
            .map(|&(a, b, dist)| Pair {
                a,
                b,
                similarity: estimate(dist, S::BITS),
            })
            .collect()
    };
    if opts.verify {
        stats.verified = out.len() as u64;
    }
    out.sort_by_key(|p| (p.a, p.b));
    let n = stats.documents_indexed.max(1) as f64;
    stats.sketch_bytes_per_document = f64::from(S::BITS / 8);
    stats.index_bytes = index.bytes()?;
    stats.index_bytes_per_document = stats.index_bytes as f64 / n;
    stats.seconds = start.elapsed().as_secs_f64();
    Ok((out, stats))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Manku's pseudo-code, literally: V[i] += w or −w, bit i = V[i] > 0.
    fn naive_simhash(keys: &[u64], hashes: &[fn(u64) -> u64]) -> Vec<bool> {
        let mut bits = Vec::new();
        for hash in hashes {
            let mut v = [0i64; 64];
            for &k in keys {
                let h = hash(k);
                for (i, vi) in v.iter_mut().enumerate() {
                    *vi += if h >> i & 1 == 1 { 1 } else { -1 };
                }
            }
            bits.extend(v.iter().map(|&vi| vi > 0));
        }
        bits
    }

    fn as_bits(x: u128, n: u32) -> Vec<bool> {
        (0..n).map(|i| x >> i & 1 == 1).collect()
    }

    fn keys(seed: u64, n: usize) -> Vec<u64> {
        (0..n as u64)
            .map(|i| fmix64(seed ^ (i << 20)) >> 2)
            .collect()
    }

    #[test]
    fn identical_sets_have_identical_sketches() {
        let a = keys(1, 300);
        let mut shuffled = a.clone();
        shuffled.reverse();
        assert_eq!(u64::simhash(&a), u64::simhash(&shuffled));
        assert_eq!(u128::simhash(&a), u128::simhash(&shuffled));
        assert_eq!(u64::simhash(&[]), 0);
        // One feature: the sketch is that feature's hash.
        assert_eq!(u64::simhash(&[42]), fmix64(42));
        assert_eq!(u128::simhash(&[42]) as u64, fmix64(42));
        assert_eq!((u128::simhash(&[42]) >> 64) as u64, fmix64(42 ^ SEED_HI));
    }

    #[test]
    fn distance_grows_with_the_set_difference() {
        // Average over many sets, replacing 5 %, 20 % and 50 % of 400 keys.
        let mut mean = [0.0f64; 3];
        let trials = 60;
        for t in 0..trials {
            let base = keys(t, 400);
            for (m, frac) in mean.iter_mut().zip([0.05, 0.2, 0.5]) {
                let changed = (400.0 * frac) as usize;
                let mut other = base[changed..].to_vec();
                other.extend(keys(t + 1_000_000, changed));
                *m += f64::from(u64::simhash(&base).hamming(u64::simhash(&other)));
            }
        }
        for m in &mut mean {
            *m /= trials as f64;
        }
        assert!(mean[0] < mean[1] && mean[1] < mean[2], "{mean:?}");
        // And near the expectation f·p(J): J = 0.9, 0.667, 0.333.
        for (m, j) in mean
            .iter()
            .zip([380.0 / 420.0, 320.0 / 480.0, 200.0 / 600.0])
        {
            let expected = 64.0 * flip_probability(j);
            assert!((m - expected).abs() < 2.0, "mean {m} vs {expected}");
        }
    }

    #[test]
    fn estimate_inverts_the_flip_probability() {
        for j in [0.3, 0.5, 0.8, 0.95] {
            let d = 64.0 * flip_probability(j);
            let c = (std::f64::consts::PI * d / 64.0).cos();
            assert!((c / (2.0 - c) - j).abs() < 1e-12);
        }
        assert_eq!(estimate(0, 64), 1.0);
        assert_eq!(estimate(32, 64), 0.0);
        assert_eq!(estimate(40, 64), 0.0);
        for j in [0.5, 0.8, 0.9] {
            let d = distance_for_estimate(j, 64);
            assert!(estimate(d, 64) >= j && estimate(d + 1, 64) < j);
        }
        // The documented defaults.
        assert_eq!(distance_for_estimate(0.8, 64), 9);
        assert_eq!(distance_for_recall(0.8, 64), 16);
        assert_eq!(distance_for_recall(0.9, 64), 12);
        assert_eq!(distance_for_recall(0.8, 128), 28);
    }

    #[test]
    fn slices_cover_the_bits() {
        let s = Slices::new(64, 6);
        assert_eq!(
            s.ranges(),
            [(0, 11), (11, 11), (22, 11), (33, 11), (44, 10), (54, 10)]
        );
        let x: u64 = 0x0123_4567_89ab_cdef;
        assert_eq!(s.join::<u64>(s.values(x)), x);
        let s = Slices::new(128, 2);
        let y: u128 = (0xfedc_ba98_7654_3210u128 << 64) | 0x0123_4567_89ab_cdef;
        assert_eq!(
            s.values(y).collect::<Vec<_>>(),
            [0x0123_4567_89ab_cdef, 0xfedc_ba98_7654_3210]
        );
        assert_eq!(s.join::<u128>(s.values(y)), y);
        assert_eq!(Slices::pigeonhole(64, 3).len(), 4);
        assert_eq!(Slices::pigeonhole(128, 0).len(), 2);
    }

    #[test]
    fn pairs_find_planted_near_duplicates() {
        let base = keys(7, 500);
        let mut near = base[..480].to_vec();
        near.extend(keys(8, 20)); // J = 480/520 ≈ 0.92
        let far = keys(9, 500);
        let docs: Vec<SimDoc> = [base, vec![], far, near]
            .iter()
            .map(|s| SimDoc::of_keys(s))
            .collect();
        for backend in [Backend::Memory, Backend::Sqlite] {
            for bits in [64, 128] {
                let mut o = Options::new(0.8, bits, true);
                o.backend = backend;
                let (p, s) = pairs(&docs, 0.8, &o).unwrap();
                assert_eq!(
                    p,
                    [Pair {
                        a: 0,
                        b: 3,
                        similarity: 480.0 / 520.0
                    }]
                );
                assert_eq!(s.documents_indexed, 3);
                assert_eq!(s.verified, 1);
                o.verify = false;
                let (p, _) = pairs(&docs, 0.8, &o).unwrap();
                assert_eq!(p.len(), 1);
                assert!((p[0].similarity - 0.92).abs() < 0.1, "{p:?}");
            }
        }
    }

    #[test]
    fn errors_read_as_sqlites_own() {
        // `lineage pairs` prints an error and its causes: the wrapper adds nothing.
        let e = Error::from(rusqlite::Error::InvalidParameterName("x".into()));
        let inner = rusqlite::Error::InvalidParameterName("x".into());
        assert_eq!(e.to_string(), inner.to_string());
        let cause = |e: &dyn std::error::Error| e.source().map(|c| c.to_string());
        assert_eq!(cause(&e), cause(&inner));
    }

    proptest! {
        #[test]
        fn simhash_equals_the_naive_sum(keys in prop::collection::vec(any::<u64>(), 0..60)) {
            prop_assert_eq!(as_bits(u128::from(u64::simhash(&keys)), 64), naive_simhash(&keys, &[fmix64]));
            let hi: fn(u64) -> u64 = |k| fmix64(k ^ SEED_HI);
            prop_assert_eq!(as_bits(u128::simhash(&keys), 128), naive_simhash(&keys, &[fmix64, hi]));
        }

        #[test]
        fn slices_round_trip(x in any::<u128>(), m in 2u32..=128) {
            let s = Slices::new(128, m);
            prop_assert_eq!(s.join::<u128>(s.values(x)), x);
            let s64 = Slices::new(64, m.min(64));
            prop_assert_eq!(s64.join::<u64>(s64.values(x as u64)), x as u64);
        }
    }
}
