//! Multi-index hashing (Norouzi, Punjani, Fleet; docs/algorithms.md §9): one hash map
//! per slice, slice value → documents.
//!
//! With m slices and search radius h = m·r′ + a (0 ≤ a < m), a sketch within
//! distance h of the query is within r′ of it on one of the first a + 1
//! slices, or within r′ − 1 on one of the others (else the distance would be
//! at least (a+1)(r′+1) + (m−a−1)·r′ = h + 1). So the query probes every value
//! within those radii of its own slice values, and every candidate found is
//! checked by its full Hamming distance. The sliced design is m = h + 1
//! (r′ = 0: exact lookups only).

use std::collections::HashMap;

use super::{Sketch, Slices};

/// Sketches of documents, indexed for Hamming-radius queries.
#[derive(Clone, Debug)]
pub struct MultiIndex<S: Sketch> {
    slices: Slices,
    /// Search radius of each slice (None: not probed).
    radius: Vec<Option<u32>>,
    h: u32,
    tables: Vec<HashMap<u64, Vec<u32>>>,
    sketches: HashMap<u32, S>,
}

/// Work of one query.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct QueryCost {
    /// Hash-map lookups.
    pub probes: u64,
    /// Distinct documents the lookups returned.
    pub candidates: u64,
}

impl<S: Sketch> MultiIndex<S> {
    /// An empty index answering queries of radius `h` over `slices`.
    pub fn new(slices: Slices, h: u32) -> MultiIndex<S> {
        assert_eq!(slices.bits(), S::BITS, "slices of another width");
        let radius = radii(slices.len() as u32, h);
        MultiIndex {
            tables: vec![HashMap::new(); slices.len()],
            slices,
            radius,
            h,
            sketches: HashMap::new(),
        }
    }

    /// The slices its tables are keyed by.
    pub fn slices(&self) -> &Slices {
        &self.slices
    }

    /// The largest per-slice search radius r′.
    pub(crate) fn largest_radius(&self) -> u32 {
        self.radius.iter().flatten().copied().max().unwrap_or(0)
    }

    /// Documents indexed.
    pub fn len(&self) -> usize {
        self.sketches.len()
    }
    /// Whether no document is indexed.
    pub fn is_empty(&self) -> bool {
        self.sketches.is_empty()
    }

    /// Add (or replace) a document's sketch.
    pub fn insert(&mut self, doc: u32, s: S) {
        self.remove(doc);
        for (table, v) in self.tables.iter_mut().zip(self.slices.values(s)) {
            table.entry(v).or_default().push(doc);
        }
        self.sketches.insert(doc, s);
    }

    /// Remove a document; false if it was not there.
    pub(crate) fn remove(&mut self, doc: u32) -> bool {
        let Some(s) = self.sketches.remove(&doc) else {
            return false;
        };
        for (table, v) in self.tables.iter_mut().zip(self.slices.values(s)) {
            let docs = table.get_mut(&v).expect("indexed slice value");
            let at = docs.iter().position(|&d| d == doc).expect("indexed doc");
            docs.swap_remove(at);
            if docs.is_empty() {
                table.remove(&v);
            }
        }
        true
    }

    /// Every document within distance h of `q`, with its distance, sorted by
    /// document, into `out` (cleared first).
    pub(crate) fn query(&self, q: S, out: &mut Vec<(u32, u32)>) -> QueryCost {
        out.clear();
        let mut cost = QueryCost::default();
        let mut found: Vec<u32> = Vec::new();
        for (((table, v), &(_, width)), r) in self
            .tables
            .iter()
            .zip(self.slices.values(q))
            .zip(self.slices.ranges())
            .zip(&self.radius)
        {
            let Some(r) = *r else { continue };
            for_each_within(v, width, r, &mut |probe| {
                cost.probes += 1;
                if let Some(docs) = table.get(&probe) {
                    found.extend_from_slice(docs);
                }
            });
        }
        found.sort_unstable();
        found.dedup();
        cost.candidates = found.len() as u64;
        out.extend(found.into_iter().filter_map(|d| {
            let dist = self.sketches[&d].hamming(q);
            (dist <= self.h).then_some((d, dist))
        }));
        cost
    }

    /// Approximate heap bytes: hash-map buckets (entry plus one control
    /// byte, at hashbrown's 7/8 load), posting vectors and the sketches.
    pub fn heap_bytes(&self) -> u64 {
        let postings: usize = self
            .tables
            .iter()
            .flat_map(|t| t.values())
            .map(|v| v.capacity() * size_of::<u32>())
            .sum();
        let maps: u64 = self.tables.iter().map(map_bytes).sum();
        maps + postings as u64 + map_bytes(&self.sketches)
    }
}

/// The search radius of each of m slices for a query of radius h: r′ = ⌊h/m⌋
/// on the first a + 1 = h mod m + 1 slices, r′ − 1 on the rest (None: the
/// slice need not be probed).
fn radii(m: u32, h: u32) -> Vec<Option<u32>> {
    let (r, a) = (h / m, h % m);
    (0..m)
        .map(|i| if i <= a { Some(r) } else { r.checked_sub(1) })
        .collect()
}

/// The slices for radius `h` among about `n` documents: the m that minimises
/// the expected work of a query, probes × (1 + documents per probed value),
/// with uniform sketches putting n / 2^w documents on each value of a w-bit
/// slice. Few wide slices need many probes; many narrow ones return many
/// candidates (the sliced Hamming table's h + 1 is the narrowest choice).
pub fn choose_slices(bits: u32, h: u32, n: usize) -> Slices {
    let lowest = bits.div_ceil(64);
    let highest = (h + 1).clamp(lowest, bits);
    let cost = |m: u32| {
        let s = Slices::new(bits, m);
        s.ranges()
            .iter()
            .zip(radii(m, h))
            .map(|(&(_, w), r)| {
                let Some(r) = r else { return 0.0 };
                let probes: f64 = (0..=r.min(w)).map(|j| binomial(w, j)).sum();
                probes * (1.0 + n as f64 / 2f64.powi(w as i32))
            })
            .sum::<f64>()
    };
    let best = (lowest..=highest)
        .min_by(|&x, &y| cost(x).total_cmp(&cost(y)))
        .expect("a slice count");
    Slices::new(bits, best)
}

fn binomial(n: u32, k: u32) -> f64 {
    (0..k).fold(1.0, |c, i| c * f64::from(n - i) / f64::from(i + 1))
}

fn map_bytes<K, V>(m: &HashMap<K, V>) -> u64 {
    if m.capacity() == 0 {
        return 0;
    }
    let buckets = (m.capacity() * 8 / 7).next_power_of_two();
    (buckets * (size_of::<(K, V)>() + 1)) as u64
}

/// Call `f` with every value of `width` bits within Hamming distance `r` of
/// `v` (each once: flipped bit positions strictly increase).
fn for_each_within(v: u64, width: u32, r: u32, f: &mut impl FnMut(u64)) {
    fn go(v: u64, from: u32, width: u32, r: u32, f: &mut impl FnMut(u64)) {
        f(v);
        if r == 0 {
            return;
        }
        for i in from..width {
            go(v ^ (1 << i), i + 1, width, r - 1, f);
        }
    }
    go(v, 0, width, r, f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn neighbours_within_a_radius() {
        let mut seen = Vec::new();
        for_each_within(0b1010, 4, 1, &mut |x| seen.push(x));
        assert_eq!(seen, [0b1010, 0b1011, 0b1000, 0b1110, 0b0010]);
        let mut n = 0;
        for_each_within(0, 9, 2, &mut |_| n += 1);
        assert_eq!(n, 1 + 9 + 36);
    }

    #[test]
    fn radii_follow_the_counting_argument() {
        // h = 16 over 7 slices: r′ = 2, a = 2: three slices at 2, four at 1.
        let m = MultiIndex::<u64>::new(Slices::new(64, 7), 16);
        assert_eq!(
            m.radius,
            [
                Some(2),
                Some(2),
                Some(2),
                Some(1),
                Some(1),
                Some(1),
                Some(1)
            ]
        );
        // The pigeonhole: h + 1 slices, exact lookups.
        let m = MultiIndex::<u64>::new(Slices::new(64, 4), 3);
        assert_eq!(m.radius, [Some(0); 4]);
        // More slices than needed: the extra ones are not probed.
        let m = MultiIndex::<u64>::new(Slices::new(64, 4), 1);
        assert_eq!(m.radius, [Some(0), Some(0), None, None]);
    }

    #[test]
    fn slice_choice_balances_probes_and_candidates() {
        // Few documents: wide slices cost probes for nothing, so many slices.
        assert_eq!(choose_slices(64, 3, 10).len(), 4);
        // h = 16: the sliced Hamming table's 17 slices of ~4 bits would return nearly every
        // document; a few wider slices probed within radius 1–2 do better.
        let m = choose_slices(64, 16, 400).len();
        assert!((5..17).contains(&m), "{m}");
        let m = choose_slices(64, 16, 1_000_000).len();
        assert!((3..8).contains(&m), "{m}");
        assert_eq!(choose_slices(128, 0, 1000).len(), 2);
        assert_eq!(binomial(9, 2), 36.0);
    }

    #[derive(Clone, Debug)]
    enum Op {
        Insert(u32, u64),
        Remove(u32),
    }

    /// Sketches near a few centres, so that many fall within small radii.
    fn sketch() -> impl Strategy<Value = u64> {
        (0usize..3, prop::collection::vec(0u32..64, 0..12)).prop_map(|(c, flips)| {
            let centre = [0u64, u64::MAX, 0x0f0f_0f0f_0f0f_0f0f][c];
            flips.iter().fold(centre, |x, &b| x ^ (1 << b))
        })
    }

    fn ops() -> impl Strategy<Value = Vec<Op>> {
        prop::collection::vec(
            prop_oneof![
                3 => (0u32..30, sketch()).prop_map(|(d, s)| Op::Insert(d, s)),
                1 => (0u32..30).prop_map(Op::Remove),
            ],
            0..60,
        )
    }

    fn brute(live: &HashMap<u32, u64>, q: u64, h: u32) -> Vec<(u32, u32)> {
        let mut v: Vec<(u32, u32)> = live
            .iter()
            .map(|(&d, &s)| (d, s.hamming(q)))
            .filter(|&(_, dist)| dist <= h)
            .collect();
        v.sort_unstable();
        v
    }

    proptest! {
        #[test]
        fn finds_exactly_the_documents_within_h(
            ops in ops(),
            queries in prop::collection::vec(sketch(), 1..8),
            h in 0u32..20,
            m in 1u32..=21,
        ) {
            // At most radius 2 per slice, or the probes explode.
            let m = m.max(h / 3 + 1);
            let mut idx = MultiIndex::<u64>::new(Slices::new(64, m), h);
            let mut live = HashMap::new();
            for op in ops {
                match op {
                    Op::Insert(d, s) => {
                        idx.insert(d, s);
                        live.insert(d, s);
                    }
                    Op::Remove(d) => {
                        prop_assert_eq!(idx.remove(d), live.remove(&d).is_some());
                    }
                }
            }
            prop_assert_eq!(idx.len(), live.len());
            let mut out = Vec::new();
            for q in queries {
                let cost = idx.query(q, &mut out);
                prop_assert_eq!(&out, &brute(&live, q, h));
                prop_assert!(cost.candidates as usize >= out.len());
            }
        }

        #[test]
        fn finds_exactly_the_documents_within_h_at_128_bits(
            sketches in prop::collection::vec(any::<u128>(), 0..20),
            flips in prop::collection::vec(prop::collection::vec(0u32..128, 0..10), 1..6),
            h in 0u32..12,
            m in 2u32..=13,
        ) {
            let m = m.max(h / 3 + 2);
            let mut idx = MultiIndex::<u128>::new(Slices::new(128, m), h);
            for (d, &s) in sketches.iter().enumerate() {
                idx.insert(d as u32, s);
            }
            let mut out = Vec::new();
            for (i, f) in flips.iter().enumerate() {
                let base = sketches.get(i).copied().unwrap_or(0);
                let q = f.iter().fold(base, |x, &b| x ^ (1u128 << b));
                idx.query(q, &mut out);
                let mut expected: Vec<(u32, u32)> = sketches
                    .iter()
                    .enumerate()
                    .map(|(d, s)| (d as u32, s.hamming(q)))
                    .filter(|&(_, dist)| dist <= h)
                    .collect();
                expected.sort_unstable();
                prop_assert_eq!(&out, &expected);
            }
        }
    }
}
