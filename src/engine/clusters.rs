//! Live near-duplicate clusters (seed 004 used live): every live document's
//! 64-bit simhash in an in-memory multi-index; a new version queries it for
//! documents within Hamming distance h, and each candidate is verified by the
//! exact Jaccard resemblance of the two k-shingle sets. Clusters are the
//! connected components of the verified pairs.
//!
//! The shingle sets of live documents are kept (8 bytes a distinct shingle)
//! for verification and side-by-side views.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::similar::cluster::UnionFind;
use crate::similar::exact::jaccard;
use crate::similar::simhash::{self, MultiIndex, Sketch, multi};

pub struct Clusters {
    min_similarity: f64,
    index: MultiIndex<u64>,
    /// Sorted, deduplicated shingle keys of every live document.
    sets: HashMap<u32, Arc<[u64]>>,
    /// Verified pairs (a < b) with their Jaccard resemblance.
    pairs: BTreeMap<(u32, u32), f64>,
    found: Vec<(u32, u32)>,
}

impl Clusters {
    /// `expected`: about how many documents will be indexed (chooses the slicing).
    pub fn new(min_similarity: f64, expected: usize) -> Clusters {
        let h = simhash::Options::new(min_similarity, 64, true).distance;
        Clusters {
            min_similarity,
            index: MultiIndex::new(multi::choose_slices(64, h, expected.max(1000)), h),
            sets: HashMap::new(),
            pairs: BTreeMap::new(),
            found: Vec::new(),
        }
    }

    /// Add live document `id` with its shingle keys (any order, repeats allowed).
    pub fn insert(&mut self, id: u32, mut shingles: Vec<u64>) {
        self.remove(id);
        shingles.sort_unstable();
        shingles.dedup();
        let set: Arc<[u64]> = shingles.into();
        // An empty set has no features; its all-zero sketch means nothing.
        if !set.is_empty() {
            let sketch = u64::simhash(&set);
            self.index.query(sketch, &mut self.found);
            for &(other, _) in &self.found {
                let j = jaccard(&self.sets[&other], &set);
                if j >= self.min_similarity {
                    self.pairs.insert((other.min(id), other.max(id)), j);
                }
            }
            self.index.insert(id, sketch);
        }
        self.sets.insert(id, set);
    }

    /// Forget document `id` (deleted, or replaced by a newer version).
    pub fn remove(&mut self, id: u32) {
        if self.sets.remove(&id).is_some() {
            self.index.remove(id);
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
    pub fn clusters(&self) -> (Vec<super::Cluster>, HashMap<u32, u32>) {
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
        /// Inserting and removing in any order leaves exactly the pairs the
        /// exact method finds among the remaining documents (simhash with
        /// h for recall finds them all on these small sets, or the test says so).
        #[test]
        fn pairs_are_the_verified_exact_pairs(
            docs in proptest::collection::vec(proptest::collection::vec(0u16..40, 10..60), 2..12),
            drop in proptest::collection::vec(any::<bool>(), 12),
        ) {
            let min = 0.5;
            let sets: Vec<Vec<u64>> = docs.iter().map(|d| keys(d, 3)).collect();
            let mut c = Clusters::new(min, 100);
            for (i, s) in sets.iter().enumerate() {
                c.insert(i as u32, s.clone());
            }
            for (i, &d) in drop.iter().enumerate().take(sets.len()) {
                if d { c.remove(i as u32); }
            }
            let live: Vec<u32> = (0..sets.len() as u32).filter(|&i| !drop[i as usize]).collect();
            let sim: Vec<SimDoc> = live.iter().map(|&i| {
                let mut s = sets[i as usize].clone();
                s.sort_unstable();
                s.dedup();
                SimDoc { shingles: s, terms: Vec::new() }
            }).collect();
            let want: Vec<(u32, u32)> = exact::pairs(&sim, min)
                .iter()
                .map(|p| (live[p.a as usize], live[p.b as usize]))
                .collect();
            let got: Vec<(u32, u32)> = c.pairs().map(|(a, b, _)| (a, b)).collect();
            // Simhash may miss a pair (it is a filter); it never reports a false one.
            for g in &got {
                prop_assert!(want.contains(g), "false pair {g:?}");
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
        let mut c = Clusters::new(0.5, 10);
        c.insert(0, keys(&a, 8));
        c.insert(1, keys(&other, 8));
        c.insert(2, keys(&b, 8));
        let (clusters, of) = c.clusters();
        assert_eq!(clusters.len(), 1);
        assert_eq!(clusters[0].members, vec![0, 2]);
        let (_, _, j) = clusters[0].pairs[0];
        assert!(j > 0.9 && j < 1.0, "{j}");
        assert_eq!(of.get(&1), None);
        c.remove(0);
        assert!(c.clusters().0.is_empty());
    }
}
