//! Live near-duplicate clusters (the sliced Hamming table used live): every live document's
//! 64-bit simhash in an in-memory multi-index; a new version queries it for
//! documents within Hamming distance h, and each candidate is verified by the
//! exact Jaccard resemblance of the two k-shingle sets (fetched by the
//! caller, from the index). Clusters are the connected components of the
//! verified pairs. Sketches and pairs are stored in the index, so a restart
//! restores them instead of comparing everything again.

use std::collections::{BTreeMap, HashMap};

use crate::index::NearRow;
use crate::similar::cluster::UnionFind;
use crate::similar::exact::jaccard;
use crate::similar::simhash::{self, MultiIndex, Sketch, multi};

pub(crate) struct Clusters {
    min_similarity: f64,
    index: MultiIndex<u64>,
    /// Verified pairs (a < b) among live documents, with their Jaccard.
    pairs: BTreeMap<(u32, u32), f64>,
    found: Vec<(u32, u32)>,
}

/// A version's sketch: the simhash of its sorted, deduplicated shingle keys
/// (all-zero, and never indexed, for an empty set).
pub(crate) fn sketch(set: &[u64]) -> u64 {
    if set.is_empty() { 0 } else { u64::simhash(set) }
}

/// Sorted, deduplicated keys: the set whose Jaccard is the similarity.
pub(crate) fn shingle_set(mut keys: Vec<u64>) -> Vec<u64> {
    keys.sort_unstable();
    keys.dedup();
    keys
}

impl Clusters {
    /// `expected`: about how many documents will be live (chooses the slicing).
    pub fn new(min_similarity: f64, expected: usize) -> Clusters {
        let h = simhash::Options::new(min_similarity, 64, true).distance;
        Clusters {
            min_similarity,
            index: MultiIndex::new(multi::choose_slices(64, h, expected.max(1000)), h),
            pairs: BTreeMap::new(),
            found: Vec::new(),
        }
    }

    /// Add live document `id` with its shingle `set` (see [`shingle_set`]),
    /// verifying candidates against `set_of(other)`; returns what the index
    /// stores of it: its id, sketch and the pairs it is in.
    pub fn insert<E>(
        &mut self,
        id: u32,
        set: &[u64],
        mut set_of: impl FnMut(u32) -> Result<std::sync::Arc<[u64]>, E>,
    ) -> Result<NearRow, E> {
        self.remove(id);
        let s = sketch(set);
        let mut new = Vec::new();
        // An empty set has no features; its all-zero sketch means nothing.
        if !set.is_empty() {
            self.index.query(s, &mut self.found);
            for &(other, _) in &self.found {
                let j = jaccard(&set_of(other)?, set);
                if j >= self.min_similarity {
                    let pair = (other.min(id), other.max(id));
                    self.pairs.insert(pair, j);
                    new.push((pair.0, pair.1, j));
                }
            }
            self.index.insert(id, s);
        }
        Ok((id, s, new))
    }

    /// Add live document `id` with its stored sketch (pairs come with
    /// [`Clusters::restore_pair`]).
    pub(crate) fn restore(&mut self, id: u32, sketch: u64) {
        if sketch != 0 {
            self.index.insert(id, sketch);
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
            let mut c = Clusters::new(min, 100);
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
        let mut r = Clusters::new(0.5, 10);
        for (i, s) in sets.iter().enumerate() {
            r.restore(i as u32, sketch(s));
        }
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
}
