//! Live near-duplicate clusters: every live document's MinHash sketch (LSH
//! band keys, the banding chosen for the threshold as `pairs --method
//! minhash` chooses it) in band buckets; a new version queries the buckets
//! and each candidate is verified by the exact Jaccard resemblance of the two
//! k-shingle sets (fetched by the caller, from the index), except that a
//! candidate with the same set digest is the same set (J = 1) and needs no
//! fetch. Clusters are the connected components of the verified pairs.
//! Sketches and pairs are stored in the index, so a restart restores them
//! instead of comparing everything again; the settings tag
//! ([`Clusters::settings`]) names the banding, so a changed setting computes
//! them again.

use std::collections::{BTreeMap, HashMap};

use crate::index::NearRow;
use crate::similar::cluster::UnionFind;
use crate::similar::exact::jaccard_at_least;
use crate::similar::minhash::lsh::Sketch;
use crate::similar::minhash::{self, BandIndex, Banding};

pub(crate) struct Clusters {
    min_similarity: f64,
    /// The sketch filter's bound for this threshold and banding.
    least_agreeing: u32,
    index: BandIndex,
    /// Verified pairs (a < b) among live documents, with their Jaccard.
    pairs: BTreeMap<(u32, u32), f64>,
    found: Vec<u32>,
}

/// Sorted, deduplicated keys: the set whose Jaccard is the similarity.
pub(crate) fn shingle_set(mut keys: Vec<u64>) -> Vec<u64> {
    keys.sort_unstable();
    keys.dedup();
    keys
}

impl Clusters {
    pub fn new(min_similarity: f64) -> Clusters {
        let banding = Banding::for_threshold(
            min_similarity,
            minhash::DEFAULT_HASHES,
            minhash::RECALL_AT_THRESHOLD,
        );
        Clusters {
            min_similarity,
            least_agreeing: minhash::least_agreeing(min_similarity, banding.hashes()),
            index: BandIndex::new(banding),
            pairs: BTreeMap::new(),
            found: Vec::new(),
        }
    }

    /// What the stored sketches and pairs depend on besides k: the method,
    /// its banding and the threshold (`meta.near` is k, this and the key
    /// version).
    pub(crate) fn settings(&self) -> String {
        let b = self.index.banding();
        format!(
            "min_similarity={} near=minhash-oph/2 bands={} rows={}",
            self.min_similarity, b.bands, b.rows
        )
    }

    /// Add live document `id` with its shingle `set` (see [`shingle_set`]),
    /// verifying candidates against `set_of(other)`; returns what the index
    /// stores of it: its id, sketch bytes and the pairs it is in.
    pub fn insert<E>(
        &mut self,
        id: u32,
        set: &[u64],
        mut set_of: impl FnMut(u32) -> Result<std::sync::Arc<[u64]>, E>,
    ) -> Result<NearRow, E> {
        self.remove(id);
        // An empty set has no sketch and no pairs.
        let Some(sketch) = Sketch::of(set, self.index.banding()) else {
            return Ok((id, Vec::new(), Vec::new()));
        };
        let mut new = Vec::new();
        self.index.query(&sketch.keys, &mut self.found);
        for &other in &self.found {
            let theirs = self.index.sketch(other);
            let j = if theirs.is_some_and(|s| s.digest == sketch.digest) {
                Some(1.0)
            } else if theirs
                .is_some_and(|s| minhash::agreeing(&s.low, &sketch.low) < self.least_agreeing)
            {
                // The sketch filter: far below the threshold, no set fetched.
                None
            } else {
                jaccard_at_least(&set_of(other)?, set, self.min_similarity)
            };
            if let Some(j) = j {
                let pair = (other.min(id), other.max(id));
                self.pairs.insert(pair, j);
                new.push((pair.0, pair.1, j));
            }
        }
        let bytes = sketch.to_bytes();
        self.index.insert(id, sketch);
        Ok((id, bytes, new))
    }

    /// Add live document `id` with its stored sketch (pairs come with
    /// [`Clusters::restore_pair`]); false if the bytes are not a sketch of
    /// this banding (then the caller inserts it afresh).
    pub(crate) fn restore(&mut self, id: u32, bytes: &[u8]) -> bool {
        if bytes.is_empty() {
            return true;
        }
        match Sketch::from_bytes(bytes, self.index.banding()) {
            Some(s) => {
                self.index.insert(id, s);
                true
            }
            None => false,
        }
    }

    /// A stored pair of two live documents.
    pub(crate) fn restore_pair(&mut self, a: u32, b: u32, similarity: f64) {
        if similarity >= self.min_similarity {
            self.pairs.insert((a.min(b), a.max(b)), similarity);
        }
    }

    /// Forget document `id` (deleted, or replaced by a newer version).
    pub(crate) fn remove(&mut self, id: u32) {
        if self.index.remove(id) {
            self.pairs.retain(|&(a, b), _| a != id && b != id);
        }
    }

    /// Verified pairs, ordered by (a, b).
    #[cfg(test)]
    pub fn pairs(&self) -> impl Iterator<Item = (u32, u32, f64)> + '_ {
        self.pairs.iter().map(|(&(a, b), &j)| (a, b, j))
    }

    /// The clusters (members ascending, clusters largest first, ties by
    /// first member) and each member's cluster index.
    pub(crate) fn clusters(&self) -> (Vec<super::Cluster>, HashMap<u32, u32>) {
        let mut ids: Vec<u32> = self.pairs.keys().flat_map(|&(a, b)| [a, b]).collect();
        ids.sort_unstable();
        ids.dedup();
        let dense = |id: u32| ids.binary_search(&id).expect("member") as u32;
        let mut uf = UnionFind::new(ids.len());
        for &(a, b) in self.pairs.keys() {
            uf.union(dense(a), dense(b));
        }
        let mut by_root: BTreeMap<u32, super::Cluster> = BTreeMap::new();
        for (i, &id) in ids.iter().enumerate() {
            by_root
                .entry(uf.find(i as u32))
                .or_insert_with(|| super::Cluster {
                    members: Vec::new(),
                    pairs: Vec::new(),
                })
                .members
                .push(id);
        }
        for (&(a, b), &j) in &self.pairs {
            let root = uf.find(dense(a));
            by_root
                .get_mut(&root)
                .expect("cluster")
                .pairs
                .push((a, b, j));
        }
        let mut out: Vec<super::Cluster> = by_root.into_values().collect();
        out.sort_by(|x, y| {
            y.members
                .len()
                .cmp(&x.members.len())
                .then(x.members[0].cmp(&y.members[0]))
        });
        let mut of = HashMap::new();
        for (c, cl) in out.iter().enumerate() {
            for &m in &cl.members {
                of.insert(m, c as u32);
            }
        }
        (out, of)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::similar::SimDoc;
    use crate::similar::exact;
    use proptest::prelude::*;
    use std::sync::Arc;

    fn keys(words: &[u16], k: usize) -> Vec<u64> {
        words
            .windows(k)
            .map(|w| {
                w.iter()
                    .fold(0u64, |h, &x| crate::fingerprint::fmix64(h ^ u64::from(x)))
            })
            .collect()
    }

    proptest! {
        /// After inserts and removals, every pair is one the exact method
        /// finds among the remaining documents (none with a removed one; a
        /// simhash filter may miss a pair, never invent one), and both
        /// members of a pair are in one cluster.
        #[test]
        fn pairs_are_exact_pairs_among_live_documents_only(
            docs in proptest::collection::vec(proptest::collection::vec(0u16..40, 10..60), 2..12),
            drop in proptest::collection::vec(any::<bool>(), 12),
        ) {
            let min = 0.5;
            let sets: Vec<Vec<u64>> = docs.iter().map(|d| keys(d, 3)).collect();
            let mut c = Clusters::new(min);
            let sets: Vec<Arc<[u64]>> = sets.into_iter().map(|s| shingle_set(s).into()).collect();
            for (i, s) in sets.iter().enumerate() {
                c.insert(i as u32, s, |o| Ok::<_, ()>(sets[o as usize].clone())).unwrap();
            }
            for (i, &d) in drop.iter().enumerate().take(sets.len()) {
                if d { c.remove(i as u32); }
            }
            let live: Vec<u32> = (0..sets.len() as u32).filter(|&i| !drop[i as usize]).collect();
            let sim: Vec<SimDoc> = live.iter().map(|&i| {
                SimDoc { shingles: sets[i as usize].to_vec(), terms: Vec::new() }
            }).collect();
            let want: Vec<(u32, u32)> = exact::pairs(&sim, min)
                .iter()
                .map(|p| (live[p.a as usize], live[p.b as usize]))
                .collect();
            let got: Vec<(u32, u32)> = c.pairs().map(|(a, b, _)| (a, b)).collect();
            // The sketch may miss a pair (it is a filter); it never reports a
            // false one, and every reported similarity is the exact one.
            for g in &got {
                prop_assert!(want.contains(g), "false pair {g:?}");
            }
            let exact_j: HashMap<(u32, u32), f64> = exact::pairs(&sim, min)
                .iter()
                .map(|p| ((live[p.a as usize], live[p.b as usize]), p.similarity))
                .collect();
            for (a, b, j) in c.pairs() {
                prop_assert_eq!(exact_j[&(a, b)], j);
            }
            let (clusters, of) = c.clusters();
            for (a, b) in &got {
                prop_assert_eq!(of[a], of[b]);
            }
            let members: usize = clusters.iter().map(|c| c.members.len()).sum();
            prop_assert_eq!(members, of.len());
        }
    }

    #[test]
    fn copies_cluster_and_leave_when_removed() {
        let a: Vec<u16> = (0..200).collect();
        let mut b = a.clone();
        b[100] = 999;
        let other: Vec<u16> = (1000..1200).collect();
        let mut c = Clusters::new(0.5);
        let sets: Vec<Arc<[u64]>> = [&a, &other, &b]
            .iter()
            .map(|d| shingle_set(keys(d, 8)).into())
            .collect();
        for (i, s) in sets.iter().enumerate() {
            c.insert(i as u32, s, |o| Ok::<_, ()>(sets[o as usize].clone()))
                .unwrap();
        }
        let (clusters, of) = c.clusters();
        assert_eq!(clusters.len(), 1);
        assert_eq!(clusters[0].members, vec![0, 2]);
        let (_, _, j) = clusters[0].pairs[0];
        assert!(j > 0.9 && j < 1.0, "{j}");
        assert_eq!(of.get(&1), None);
        c.remove(0);
        assert!(c.clusters().0.is_empty());
        // Restored from storage: the same clusters without verification.
        let mut r = Clusters::new(0.5);
        let banding = r.index.banding();
        for (i, s) in sets.iter().enumerate() {
            assert!(r.restore(i as u32, &Sketch::of(s, banding).unwrap().to_bytes()));
        }
        assert!(r.restore(7, &[]));
        assert!(!r.restore(8, &[1, 2, 3]));
        r.restore_pair(2, 0, j);
        assert_eq!(r.clusters().0, clusters);
        // A restored sketch is a candidate for new documents.
        let (_, _, found) = r
            .insert(3, &sets[0], |o| Ok::<_, ()>(sets[o as usize].clone()))
            .unwrap();
        assert_eq!(
            found.iter().map(|p| (p.0, p.1)).collect::<Vec<_>>(),
            vec![(0, 3), (2, 3)]
        );
    }

    #[test]
    fn a_thousand_copies_pair_without_fetching_a_set() {
        let a: Vec<u16> = (0..300).collect();
        let set: Arc<[u64]> = shingle_set(keys(&a, 8)).into();
        let mut c = Clusters::new(0.5);
        for i in 0..1000u32 {
            let (id, bytes, pairs) = c
                .insert(i, &set, |_| Err::<Arc<[u64]>, _>("fetched a set"))
                .unwrap();
            assert_eq!((id, pairs.len()), (i, i as usize));
            assert!(pairs.iter().all(|p| p.1 == i && p.2 == 1.0));
            assert_eq!(bytes.len(), 8 * (52 + 2) + 156, "keys, digest, low bytes");
        }
        assert_eq!(c.pairs().count(), 1000 * 999 / 2);
        assert_eq!(c.clusters().0.len(), 1);
        // Empty sets: no sketch, no pairs, nothing fetched.
        let (_, bytes, pairs) = c.insert(5000, &[], |_| Err::<Arc<[u64]>, _>("no")).unwrap();
        assert!(bytes.is_empty() && pairs.is_empty());
        for i in 0..1000 {
            c.remove(i);
        }
        assert_eq!(c.pairs().count(), 0);
    }

    #[test]
    fn the_sketch_filter_fetches_no_set_of_a_boilerplate_neighbour() {
        // 200 documents sharing 60 shingles of boilerplate beside 400 of
        // their own (J ≈ 0.07), and one near copy of the first.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x >> 2
        };
        let boiler: Vec<u64> = (0..60).map(|_| next()).collect();
        let mut sets: Vec<Arc<[u64]>> = (0..200)
            .map(|_| {
                let mut k: Vec<u64> = (0..400).map(|_| next()).chain(boiler.clone()).collect();
                k.sort_unstable();
                k.into()
            })
            .collect();
        sets.push(sets[0][..sets[0].len() - 20].into());
        let mut c = Clusters::new(0.3);
        let mut fetched = 0;
        let mut met = 0;
        for (i, set) in sets.iter().enumerate() {
            c.index.query(
                &Sketch::of(set, c.index.banding()).unwrap().keys,
                &mut c.found,
            );
            met += c.found.len();
            c.insert(i as u32, set, |o| {
                fetched += 1;
                Ok::<_, ()>(sets[o as usize].clone())
            })
            .unwrap();
        }
        assert!(met > 100, "the boilerplate met: {met}");
        assert_eq!(fetched, 1, "only the near copy's set");
        assert_eq!(
            c.pairs().map(|p| (p.0, p.1)).collect::<Vec<_>>(),
            [(0, 200)]
        );
    }

    #[test]
    fn settings_name_the_banding() {
        let (a, b, c) = (Clusters::new(0.5), Clusters::new(0.7), Clusters::new(0.5));
        assert_ne!(a.settings(), b.settings());
        assert_eq!(a.settings(), c.settings());
        assert_eq!(
            a.settings(),
            "min_similarity=0.5 near=minhash-oph/2 bands=52 rows=3"
        );
    }

    /// What the live clusters cost at each threshold: every document of a
    /// corpus inserted in order (sets in memory, as the engine's first
    /// comparison caches them), against the simhash multi-index the clusters
    /// used before, on the same documents in the same order.
    /// `LINEAGE_CORPORA=… cargo test --release --lib live_cost -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn live_cost() {
        use crate::corpus::load_similar;
        use crate::similar::simhash;
        use crate::source::{Filter, Order, WalkOptions};
        use std::time::Instant;
        let Ok(base) = std::env::var("LINEAGE_CORPORA") else {
            return;
        };
        let names = std::env::var("LINEAGE_LIVE_CORPORA")
            .unwrap_or_else(|_| "rust-book-editions,short-answers".into());
        println!(
            "| corpus | J ≥ | minhash live: seconds, candidates, pairs | simhash multi-index: seconds, candidates, pairs |"
        );
        println!("| --- | --- | --- | --- |");
        for name in names.split(',') {
            let root = std::path::Path::new(&base).join(name);
            let l = load_similar(
                &root,
                &Filter::default_patterns(),
                WalkOptions::default(),
                32 << 20,
                Order::Path,
                8,
                false,
            )
            .unwrap();
            let sets: Vec<Arc<[u64]>> = l.docs.iter().map(|d| d.shingles.clone().into()).collect();
            for min in [0.5, 0.7, 0.8] {
                let start = Instant::now();
                let mut c = Clusters::new(min);
                let mut fetched = 0u64;
                for (i, s) in sets.iter().enumerate() {
                    c.insert(i as u32, s, |o| {
                        fetched += 1;
                        Ok::<_, ()>(sets[o as usize].clone())
                    })
                    .unwrap();
                }
                let mh = start.elapsed().as_secs_f64();
                let mh_pairs = c.pairs().count();
                let start = Instant::now();
                let (p, st) =
                    simhash::pairs(&l.docs, min, &simhash::Options::new(min, 64, true)).unwrap();
                let sh = start.elapsed().as_secs_f64();
                println!(
                    "| {name} | {min} | {mh:.3} s, {fetched}, {mh_pairs} | {sh:.3} s, {}, {} |",
                    st.candidates,
                    p.len()
                );
            }
        }
    }
}
