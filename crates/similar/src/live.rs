//! Live near-duplicate clusters: every live document's MinHash sketch (LSH
//! band keys, the banding chosen for the threshold as `pairs --method
//! minhash` chooses it) in band buckets; a new version queries the buckets
//! and each candidate is verified by the exact Jaccard resemblance of the two
//! k-shingle sets (fetched by the caller, from the index), after the sketch
//! filter. Clusters are the connected components of the verified pairs.
//!
//! What is kept grows with the documents, not with the pairs inside a large
//! group (2,000 copies of a page are 2 million pairs):
//! - Documents with the same shingle set (equal set digests) are one
//!   *group*: they pair at J = 1 by definition, so no pair among them is
//!   kept, and only the group's first member is in the band buckets.
//! - A new group is verified against its candidates (the groups sharing a
//!   band key), in the order of their first members: every one until it has
//!   `LINKS` (8) links, then only those outside its cluster so far, where a
//!   link would join two clusters. A link inside a cluster changes nothing
//!   the clusters say.
//! - Removing a group may split its cluster. [`Clusters::settle`] then has
//!   every group of the pieces look again for the links it skipped (those
//!   into another piece), so the clusters are always the components of every
//!   verified candidate pair, as if every pair were kept.
//!
//! Sketches and links are stored by the caller (the engine, in the index),
//! so a restart restores them instead of comparing everything again; the
//! settings tag ([`Clusters::settings`]) names the banding, so a changed
//! setting computes them again.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

mod components;

use crate::exact::jaccard_at_least;
use crate::minhash::lsh::Sketch;
use crate::minhash::{self, BandIndex, Banding};
use components::Components;

/// Links a new group is verified for among its candidates before it skips
/// those already in its cluster: small clusters keep every pair (what the
/// Clusters pane lists), a large one a few a group.
pub(crate) const LINKS: usize = 8;

/// The component of links restored without their other end.
const GONE: u64 = u64::MAX;

/// A verified pair: (a, b, Jaccard), a < b.
pub(crate) type Pair = (u32, u32, f64);

/// What the caller stores of a document [`Clusters::insert`] added: its id,
/// its sketch's bytes ([`Sketch::to_bytes`]; empty for an empty set) and the
/// pairs of the links made.
pub(crate) type Inserted = (u32, Vec<u8>, Vec<Pair>);

/// Documents that are near duplicates of each other (connected by pairs of
/// verified Jaccard resemblance ≥ the threshold).
#[derive(Clone, Debug, PartialEq)]
pub struct Cluster {
    /// Its number (from 1), kept while it lives: through members coming
    /// and going, and through a merge as the larger part's. A new cluster
    /// (or the smaller piece of a split) takes the next number; the first
    /// list numbers them largest first.
    pub number: u32,
    /// Version ids of the members, ascending.
    pub members: Vec<u32>,
    /// The verified pairs inside the cluster: (a, b, Jaccard), a < b, most
    /// similar first (ties by a, b).
    pub pairs: Vec<(u32, u32, f64)>,
}

/// The live clusters: each live document's sketch in band buckets, its
/// group and the links between groups (see the module's documentation).
pub struct Clusters {
    min_similarity: f64,
    /// The sketch filter's bound for this threshold and banding.
    least_agreeing: u32,
    /// Each group's sketch, under its first member's id.
    index: BandIndex,
    /// Groups by number; a free number has no members.
    groups: Vec<Group>,
    free: Vec<u32>,
    by_digest: HashMap<[u64; 2], u32>,
    group_of: HashMap<u32, u32>,
    /// Components of the links, over group numbers; too joined while
    /// `orphans` is not empty (links were removed since).
    comps: Components,
    /// Groups that lost a link, each with the component it was in before
    /// ([`GONE`]: a restored link whose other end is not live); emptied by
    /// [`Clusters::settle`].
    orphans: Vec<(u32, u64)>,
    /// Each component's cluster as last built (those of two members or
    /// more), built again only for the components changed since.
    built: HashMap<u64, Arc<Cluster>>,
    found: Vec<u32>,
    /// The number the next new cluster takes ([`Cluster::number`]).
    next_number: u32,
    /// [`LINKS`]; fewer in tests, to make the skipping happen.
    links: usize,
}

/// Live documents with one shingle set.
#[derive(Default)]
struct Group {
    /// Ascending; empty for a free number.
    members: Vec<u32>,
    /// Linked groups, with the Jaccard of the two sets.
    links: Vec<(u32, f64)>,
}

/// Clusters largest first, ties by first member (members are ascending,
/// and no two clusters share one).
fn largest_first<C: std::ops::Deref<Target = Cluster>>(clusters: &mut [C]) {
    clusters.sort_unstable_by(|x, y| {
        y.members
            .len()
            .cmp(&x.members.len())
            .then(x.members[0].cmp(&y.members[0]))
    });
}

/// Sorted, deduplicated keys: the set whose Jaccard is the similarity.
pub fn shingle_set(mut keys: Vec<u64>) -> Vec<u64> {
    keys.sort_unstable();
    keys.dedup();
    keys
}

impl Clusters {
    /// No documents yet, for pairs of Jaccard ≥ `min_similarity`.
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
            groups: Vec::new(),
            free: Vec::new(),
            by_digest: HashMap::new(),
            group_of: HashMap::new(),
            comps: Components::default(),
            orphans: Vec::new(),
            built: HashMap::new(),
            found: Vec::new(),
            next_number: 1,
            links: LINKS,
        }
    }

    /// What the stored sketches and links depend on besides k: the method,
    /// its banding, the threshold and what a stored pair means (`links`:
    /// the links of groups, not every pair; `meta.near` is k, this and the
    /// key version).
    pub fn settings(&self) -> String {
        let b = self.index.banding();
        format!(
            "min_similarity={} near=minhash-oph/2 bands={} rows={} links={LINKS}",
            self.min_similarity, b.bands, b.rows
        )
    }

    /// Add live document `id` with its shingle `set` (see [`shingle_set`]),
    /// verifying candidates against `set_of(other)`; returns what the index
    /// stores of it: its id, sketch bytes and the links made (with those
    /// [`Clusters::settle`] made first).
    pub fn insert<E>(
        &mut self,
        id: u32,
        set: &[u64],
        mut set_of: impl FnMut(u32) -> Result<Arc<[u64]>, E>,
    ) -> Result<Inserted, E> {
        self.remove(id);
        let mut made = self.settle(&mut set_of)?;
        // An empty set has no sketch and no pairs.
        let Some(sketch) = Sketch::of(set, self.index.banding()) else {
            return Ok((id, Vec::new(), made));
        };
        let bytes = sketch.to_bytes();
        if let Some(g) = self.add(id, sketch) {
            self.link(g, Some(set), true, &mut set_of, &mut made)?;
        }
        Ok((id, bytes, made))
    }

    /// Add `id` to the group of its set, or as a new group: Some(its number).
    fn add(&mut self, id: u32, sketch: Sketch) -> Option<u32> {
        if let Some(&g) = self.by_digest.get(&sketch.digest) {
            let members = &mut self.groups[g as usize].members;
            let at = members.partition_point(|&m| m < id);
            members.insert(at, id);
            self.group_of.insert(id, g);
            self.comps.touch(g);
            if at == 0 {
                // The first member holds the group's sketch.
                self.index.remove(members[1]);
                self.index.insert(id, sketch);
            }
            return None;
        }
        let g = self.free.pop().unwrap_or_else(|| {
            self.groups.push(Group::default());
            (self.groups.len() - 1) as u32
        });
        self.comps.add(g);
        self.groups[g as usize].members.push(id);
        self.by_digest.insert(sketch.digest, g);
        self.group_of.insert(id, g);
        self.index.insert(id, sketch);
        Some(g)
    }

    /// Verify group `g`'s candidates in the order of their first members:
    /// each one while `fill` and `g` has fewer than [`LINKS`] links, else
    /// those in another component. `set` is `g`'s set, or None to fetch it
    /// when a candidate needs it. New links' pairs go to `made`.
    fn link<E>(
        &mut self,
        g: u32,
        set: Option<&[u64]>,
        fill: bool,
        set_of: &mut impl FnMut(u32) -> Result<Arc<[u64]>, E>,
        made: &mut Vec<Pair>,
    ) -> Result<(), E> {
        let first = self.groups[g as usize].members[0];
        let mine = self.index.sketch(first).expect("a group's sketch");
        let mut found = std::mem::take(&mut self.found);
        self.index.query(&mine.keys, &mut found);
        let mut fetched: Option<Arc<[u64]>> = None;
        for &other in &found {
            let h = self.group_of[&other];
            let filling = fill && self.groups[g as usize].links.len() < self.links;
            if h == g || !filling && self.comps.find(g) == self.comps.find(h) {
                continue;
            }
            let theirs = self.index.sketch(other).expect("a group's sketch");
            // The sketch filter: far below the threshold, no set fetched.
            if minhash::agreeing(&theirs.low, &mine.low) < self.least_agreeing {
                continue;
            }
            let set: &[u64] = match set {
                Some(s) => s,
                None => match fetched {
                    Some(ref s) => s,
                    None => fetched.insert(set_of(first)?),
                },
            };
            if let Some(j) = jaccard_at_least(&set_of(other)?, set, self.min_similarity) {
                self.groups[g as usize].links.push((h, j));
                self.groups[h as usize].links.push((g, j));
                self.comps.union(g, h);
                made.push((first.min(other), first.max(other), j));
            }
        }
        self.found = found;
        Ok(())
    }

    /// Add live document `id` with its stored sketch (links come with
    /// [`Clusters::restore_pair`]); false if the bytes are not a sketch of
    /// this banding (then the caller inserts it afresh).
    pub fn restore(&mut self, id: u32, bytes: &[u8]) -> bool {
        if bytes.is_empty() {
            return true;
        }
        match Sketch::from_bytes(bytes, self.index.banding()) {
            Some(s) => {
                self.add(id, s);
                true
            }
            None => false,
        }
    }

    /// A stored pair, after every live document's [`Clusters::restore`];
    /// false if a document of it is no longer live (the caller may forget
    /// it). Such a pair was a link the cluster may need (its group may have
    /// other members), so the next [`Clusters::settle`] has the live one's
    /// cluster look for it again.
    pub fn restore_pair(&mut self, a: u32, b: u32, similarity: f64) -> bool {
        match (self.group_of.get(&a), self.group_of.get(&b)) {
            (Some(&g), Some(&h)) => {
                let links = &self.groups[g as usize].links;
                if g != h
                    && similarity >= self.min_similarity
                    && !links.iter().any(|&(x, _)| x == h)
                {
                    self.groups[g as usize].links.push((h, similarity));
                    self.groups[h as usize].links.push((g, similarity));
                    self.comps.union(g, h);
                }
                true
            }
            (Some(&g), None) | (None, Some(&g)) => {
                self.orphans.push((g, GONE));
                false
            }
            (None, None) => false,
        }
    }

    /// Forget document `id` (deleted, or replaced by a newer version). The
    /// clusters are right again after [`Clusters::settle`].
    pub fn remove(&mut self, id: u32) {
        let Some(g) = self.group_of.remove(&id) else {
            return;
        };
        let members = &mut self.groups[g as usize].members;
        let at = members.binary_search(&id).expect("a member of its group");
        members.remove(at);
        let sketch = self.index.take(id);
        if let Some(&next) = members.first() {
            if let Some(s) = sketch {
                self.index.insert(next, s);
            }
            self.comps.touch(g);
            return;
        }
        // The last member: the group goes, and its links with it.
        if let Some(s) = sketch {
            self.by_digest.remove(&s.digest);
        }
        let root = self.comps.find(g);
        for (h, _) in std::mem::take(&mut self.groups[g as usize].links) {
            self.groups[h as usize].links.retain(|&(x, _)| x != g);
            self.orphans.push((h, root));
        }
        self.comps.remove(g);
        self.free.push(g);
    }

    /// Mend the clusters after removals: the components built again from
    /// the links and, where one fell apart, every group of its pieces
    /// verified against its candidates in another piece. Returns the pairs
    /// of the links made.
    pub fn settle<E>(
        &mut self,
        set_of: &mut impl FnMut(u32) -> Result<Arc<[u64]>, E>,
    ) -> Result<Vec<Pair>, E> {
        let mut made = Vec::new();
        if self.orphans.is_empty() {
            return Ok(made);
        }
        // The former components, each walked for its pieces; one whose
        // link's other end is unknown is looked at again even if whole.
        let mut former: BTreeMap<u64, bool> = BTreeMap::new();
        for (h, before) in std::mem::take(&mut self.orphans) {
            if self.groups[h as usize].members.is_empty() {
                continue;
            }
            let (l, unknown) = match before {
                GONE => (self.comps.find(h), true),
                l => (l, false),
            };
            *former.entry(l).or_default() |= unknown;
        }
        let mut again: Vec<u32> = Vec::new();
        for (l, unknown) in former {
            let groups = &self.groups;
            let pieces = self
                .comps
                .split(l, |g| groups[g as usize].links.iter().map(|&(h, _)| h));
            if pieces.len() > 1 || unknown {
                for p in pieces {
                    again.extend_from_slice(self.comps.groups(p));
                }
            }
        }
        again.sort_unstable();
        again.dedup();
        for g in again {
            self.link(g, None, false, set_of, &mut made)?;
        }
        Ok(made)
    }

    /// The pairs the clusters list, ordered by (a, b): each copy with its
    /// group's first member (J = 1), and each link between the first
    /// members of its groups.
    #[cfg(test)]
    pub(crate) fn pairs(&mut self) -> Vec<Pair> {
        let mut all: Vec<Pair> = self
            .clusters()
            .0
            .into_iter()
            .flat_map(|c| c.pairs.clone())
            .collect();
        all.sort_by_key(|&(a, b, _)| (a, b));
        all
    }

    /// The clusters (members ascending, clusters by number; their pairs,
    /// each copy with its group's first member and each link between the
    /// first members of its groups, most similar first) and each member's
    /// cluster index, by member. Settled first ([`Clusters::settle`]). Only
    /// the components changed since the last call are built again.
    pub fn clusters(&mut self) -> (Vec<Arc<Cluster>>, Vec<(u32, u32)>) {
        debug_assert!(self.orphans.is_empty(), "clusters of unsettled links");
        // A member that moved left a changed component, so the numbers the
        // changed components' clusters had are all a new one can inherit.
        let mut was: HashMap<u32, u32> = HashMap::new();
        let mut fresh: Vec<(u64, Cluster)> = Vec::new();
        for l in self.comps.take_changed() {
            if let Some(old) = self.built.remove(&l) {
                was.extend(old.members.iter().map(|&m| (m, old.number)));
            }
            fresh.extend(self.cluster_of(l).map(|c| (l, c)));
        }
        self.number(&mut fresh, &was);
        for (l, c) in fresh {
            self.built.insert(l, Arc::new(c));
        }
        let mut out: Vec<Arc<Cluster>> = self.built.values().cloned().collect();
        out.sort_unstable_by_key(|c| c.number);
        let mut of = Vec::with_capacity(out.iter().map(|c| c.members.len()).sum());
        for (c, cl) in out.iter().enumerate() {
            of.extend(cl.members.iter().map(|&m| (m, c as u32)));
        }
        of.sort_unstable();
        (out, of)
    }

    /// Number the clusters built again: each takes the number most of its
    /// members had (`was`, by member), a number going to one cluster only,
    /// the one with most of its members (the larger part of a merge, the
    /// larger piece of a split); the rest take new numbers, largest first.
    fn number(&mut self, fresh: &mut [(u64, Cluster)], was: &HashMap<u32, u32>) {
        let mut claims: Vec<(usize, u32, usize)> = Vec::new();
        for (i, (_, c)) in fresh.iter().enumerate() {
            let mut counts: HashMap<u32, usize> = HashMap::new();
            for m in &c.members {
                if let Some(&n) = was.get(m) {
                    *counts.entry(n).or_default() += 1;
                }
            }
            claims.extend(counts.into_iter().map(|(n, k)| (k, n, i)));
        }
        claims.sort_unstable_by(|x, y| y.0.cmp(&x.0).then((x.1, x.2).cmp(&(y.1, y.2))));
        let mut taken: HashSet<u32> = HashSet::new();
        let mut numbered = vec![false; fresh.len()];
        for (_, n, i) in claims {
            if !numbered[i] && taken.insert(n) {
                fresh[i].1.number = n;
                numbered[i] = true;
            }
        }
        let mut new: Vec<&mut Cluster> = (fresh.iter_mut().zip(numbered))
            .filter(|(_, done)| !done)
            .map(|((_, c), _)| c)
            .collect();
        largest_first(&mut new);
        for c in new {
            c.number = self.next_number;
            self.next_number += 1;
        }
    }

    /// The clusters as [`Clusters::clusters`] lists them, every component
    /// built afresh.
    #[cfg(test)]
    fn clusters_built_whole(&self) -> Vec<Arc<Cluster>> {
        let mut out: Vec<Arc<Cluster>> = self
            .comps
            .labels()
            .filter_map(|l| self.cluster_of(l).map(Arc::new))
            .collect();
        largest_first(&mut out);
        out
    }

    /// Component `l`'s cluster: its groups' members, each copy paired with
    /// its group's first member (J = 1) and each link between the first
    /// members of its groups; None under two members.
    fn cluster_of(&self, l: u64) -> Option<Cluster> {
        let mut c = Cluster {
            number: 0,
            members: Vec::new(),
            pairs: Vec::new(),
        };
        for &g in self.comps.groups(l) {
            let group = &self.groups[g as usize];
            let Some((&first, rest)) = group.members.split_first() else {
                continue;
            };
            c.members.extend_from_slice(&group.members);
            c.pairs.extend(rest.iter().map(|&m| (first, m, 1.0)));
            for &(h, j) in &group.links {
                if h > g {
                    let other = self.groups[h as usize].members[0];
                    c.pairs.push((first.min(other), first.max(other), j));
                }
            }
        }
        if c.members.len() < 2 {
            return None;
        }
        c.members.sort_unstable();
        // Most similar first, as the Pairs list reads them.
        c.pairs
            .sort_unstable_by(|x, y| y.2.total_cmp(&x.2).then((x.0, x.1).cmp(&(y.0, y.1))));
        Some(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::sync::Arc;

    fn keys(words: &[u16], k: usize) -> Vec<u64> {
        words
            .windows(k)
            .map(|w| {
                w.iter().fold(0u64, |h, &x| {
                    lineage_core::fingerprint::fmix64(h ^ u64::from(x))
                })
            })
            .collect()
    }

    /// What keeping every pair finds: the pairs of live documents that
    /// share a band key, pass the sketch filter and verify.
    fn every_pair(c: &Clusters, sets: &[(u32, Arc<[u64]>)]) -> Vec<(u32, u32)> {
        let banding = c.index.banding();
        let sk: Vec<Sketch> = sets
            .iter()
            .map(|(_, s)| Sketch::of(s, banding).unwrap())
            .collect();
        let mut out = Vec::new();
        for i in 0..sets.len() {
            for j in i + 1..sets.len() {
                let candidate = sk[i].keys.iter().any(|k| sk[j].keys.contains(k));
                let filtered = minhash::agreeing(&sk[i].low, &sk[j].low) < c.least_agreeing;
                if candidate
                    && !filtered
                    && jaccard_at_least(&sets[i].1, &sets[j].1, c.min_similarity).is_some()
                {
                    let (a, b) = (sets[i].0, sets[j].0);
                    out.push((a.min(b), a.max(b)));
                }
            }
        }
        out
    }

    /// Member lists of the components of `pairs` (largest first).
    fn components(pairs: &[(u32, u32)]) -> Vec<Vec<u32>> {
        let pairs: Vec<crate::Pair> = pairs
            .iter()
            .map(|&(a, b)| crate::Pair {
                a,
                b,
                similarity: 1.0,
            })
            .collect();
        let n = pairs.iter().map(|p| p.b as usize + 1).max().unwrap_or(0);
        crate::cluster::clusters(n, &pairs, |x| x)
    }

    proptest! {
        /// After any inserts and removals (copies, near copies, unrelated
        /// pages), with one link a group before it skips its own cluster:
        /// the clusters are the components of every pair keeping all pairs
        /// would find among the live documents, and every pair listed is
        /// one of them with its exact Jaccard.
        #[test]
        fn clusters_are_the_components_of_every_verified_pair(
            bases in proptest::collection::vec(proptest::collection::vec(0u16..400, 40..80), 1..4),
            docs in proptest::collection::vec((0usize..4, proptest::collection::vec((0usize..80, 400u16..500), 0..6)), 2..24),
            ops in proptest::collection::vec((0usize..24, any::<bool>()), 1..60),
        ) {
            let sets: Vec<Arc<[u64]>> = docs
                .iter()
                .map(|(base, edits)| {
                    let mut words = bases[base % bases.len()].clone();
                    for &(at, w) in edits {
                        let at = at % words.len();
                        words[at] = w;
                    }
                    shingle_set(keys(&words, 3)).into()
                })
                .collect();
            let mut c = Clusters::new(0.5);
            c.links = 1;
            let mut live = vec![false; sets.len()];
            let set_of = |o: u32| Ok::<_, ()>(sets[o as usize].clone());
            for (n, &(i, insert)) in ops.iter().enumerate() {
                let i = i % sets.len();
                if insert {
                    c.insert(i as u32, &sets[i], set_of).unwrap();
                } else {
                    c.remove(i as u32);
                }
                live[i] = insert;
                // Lists asked for along the way: the next is built from
                // what changed since.
                if n % 3 == 0 {
                    c.settle(&mut { set_of }).unwrap();
                    c.clusters();
                }
            }
            c.settle(&mut { set_of }).unwrap();
            let whole = c.clusters_built_whole();
            let alive: Vec<(u32, Arc<[u64]>)> = (0..sets.len())
                .filter(|&i| live[i])
                .map(|i| (i as u32, sets[i].clone()))
                .collect();
            let want = every_pair(&c, &alive);
            let (clusters, of) = c.clusters();
            prop_assert!(clusters.windows(2).all(|w| w[0].number < w[1].number), "by number, each its own");
            let mut sized: Vec<Arc<Cluster>> = clusters
                .iter()
                .map(|c| Arc::new(Cluster { number: 0, ..(**c).clone() }))
                .collect();
            largest_first(&mut sized);
            prop_assert_eq!(&sized, &whole, "built from what changed, and whole");
            let got: Vec<Vec<u32>> = sized.iter().map(|c| c.members.clone()).collect();
            prop_assert_eq!(got, components(&want));
            for cl in &clusters {
                prop_assert!(cl.pairs.is_sorted_by(|x, y| x.2 >= y.2), "most similar first");
                for &(a, b, j) in &cl.pairs {
                    prop_assert!(want.contains(&(a, b)), "a pair keeping every pair lacks: {a} {b}");
                    prop_assert_eq!(jaccard_at_least(&sets[a as usize], &sets[b as usize], 0.5), Some(j));
                    let of = |m: u32| of.binary_search_by_key(&m, |&(d, _)| d).map(|i| of[i].1);
                    prop_assert_eq!((of(a), of(b)), (of(cl.members[0]), of(cl.members[0])));
                    prop_assert!(of(a).is_ok());
                }
            }
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
        assert_eq!(of, [(0, 0), (2, 0)]);
        c.remove(0);
        let made = c
            .settle(&mut |_| Err::<Arc<[u64]>, _>("nothing to mend"))
            .unwrap();
        assert!(made.is_empty());
        assert!(c.clusters().0.is_empty());
        // Restored from storage: the same clusters without verification.
        let mut r = Clusters::new(0.5);
        let banding = r.index.banding();
        for (i, s) in sets.iter().enumerate() {
            assert!(r.restore(i as u32, &Sketch::of(s, banding).unwrap().to_bytes()));
        }
        assert!(r.restore(7, &[]));
        assert!(!r.restore(8, &[1, 2, 3]));
        assert!(r.restore_pair(2, 0, j));
        assert_eq!(r.clusters().0, clusters);
        // A restored sketch is a candidate for new documents; a copy of a
        // restored page joins its group.
        let (_, _, found) = r
            .insert(3, &sets[2], |o| Ok::<_, ()>(sets[o as usize].clone()))
            .unwrap();
        assert!(found.is_empty(), "a copy makes no link: {found:?}");
        let (_, _, found) = r
            .insert(4, &sets[0][1..], |o| Ok::<_, ()>(sets[o as usize].clone()))
            .unwrap();
        assert_eq!(
            found.iter().map(|p| (p.0, p.1)).collect::<Vec<_>>(),
            vec![(0, 4), (2, 4)]
        );
        assert_eq!(r.clusters().0[0].members, vec![0, 2, 3, 4]);
        // A stored link whose other end is no longer live is looked for
        // again: the live page's cluster is mended from its candidates.
        let mut m = Clusters::new(0.5);
        for i in [0u32, 1] {
            m.restore(
                i,
                &Sketch::of(&sets[i as usize], banding).unwrap().to_bytes(),
            );
        }
        m.restore(5, &Sketch::of(&sets[2], banding).unwrap().to_bytes());
        assert!(!m.restore_pair(0, 2, j));
        assert!(!m.orphans.is_empty());
        let made = m
            .settle(&mut |o| Ok::<_, ()>(sets[if o == 5 { 2 } else { o as usize }].clone()))
            .unwrap();
        assert_eq!(
            made.iter().map(|p| (p.0, p.1)).collect::<Vec<_>>(),
            vec![(0, 5)]
        );
        assert_eq!(m.clusters().0[0].members, vec![0, 5]);
    }

    /// Issue 41, item 7: a cluster keeps its number while it grows past
    /// another, loses a member to an edit, merges (the larger part's number)
    /// and splits (the larger piece keeps it, the other takes a new one).
    #[test]
    fn a_cluster_keeps_its_number_while_it_lives() {
        // X and Y share half their words (below 0.5); Z is 0.6 of each.
        let page = |from: u16, own: Option<u16>| -> Arc<[u64]> {
            let mut w: Vec<u16> = (from..from + 300).collect();
            if let Some(o) = own {
                w[150] = 5000 + o;
            }
            shingle_set(keys(&w, 8)).into()
        };
        let sets: Vec<Arc<[u64]>> = vec![
            page(0, None),       // 0: x
            page(0, Some(1)),    // 1: x
            page(150, None),     // 2: y
            page(150, Some(2)),  // 3: y
            page(150, Some(3)),  // 4: y
            page(150, Some(4)),  // 5: y, 2 edited
            page(1000, None),    // 6: r
            page(1000, Some(6)), // 7: r
            page(75, None),      // 8: z
        ];
        let mut c = Clusters::new(0.5);
        let step = |c: &mut Clusters, add: &[u32], remove: &[u32]| {
            for &i in remove {
                c.remove(i);
            }
            for &i in add {
                c.insert(i, &sets[i as usize], |o| {
                    Ok::<_, ()>(sets[o as usize].clone())
                })
                .unwrap();
            }
            c.settle(&mut |o| Ok::<_, ()>(sets[o as usize].clone()))
                .unwrap();
            let (list, of) = c.clusters();
            for (i, cl) in list.iter().enumerate() {
                assert!(cl.members.iter().all(|m| of.contains(&(*m, i as u32))));
            }
            list.iter()
                .map(|cl| (cl.number, cl.members.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(step(&mut c, &[0, 1], &[]), [(1, vec![0, 1])]);
        assert_eq!(
            step(&mut c, &[2, 3, 4], &[]),
            [(1, vec![0, 1]), (2, vec![2, 3, 4])],
            "grown past #1, still #2"
        );
        assert_eq!(
            step(&mut c, &[5], &[2]),
            [(1, vec![0, 1]), (2, vec![3, 4, 5])],
            "a page edited"
        );
        assert_eq!(
            step(&mut c, &[6, 7], &[]),
            [(1, vec![0, 1]), (2, vec![3, 4, 5]), (3, vec![6, 7])],
            "a new cluster, the next number"
        );
        assert_eq!(
            step(&mut c, &[8], &[]),
            [(2, vec![0, 1, 3, 4, 5, 8]), (3, vec![6, 7])],
            "merged: the larger part's number"
        );
        assert_eq!(
            step(&mut c, &[], &[8]),
            [(2, vec![3, 4, 5]), (3, vec![6, 7]), (4, vec![0, 1])],
            "split: the larger piece keeps it, #1 is not given again"
        );
    }

    #[test]
    fn a_thousand_copies_are_one_group_without_a_pair_kept() {
        let a: Vec<u16> = (0..300).collect();
        let set: Arc<[u64]> = shingle_set(keys(&a, 8)).into();
        let mut c = Clusters::new(0.5);
        for i in 0..1000u32 {
            let (id, bytes, pairs) = c
                .insert(i, &set, |_| Err::<Arc<[u64]>, _>("fetched a set"))
                .unwrap();
            assert_eq!((id, pairs.len()), (i, 0));
            assert_eq!(bytes.len(), 8 * (52 + 2) + 156, "keys, digest, low bytes");
        }
        assert_eq!((c.groups.len(), c.index.len()), (1, 1));
        let (clusters, of) = c.clusters();
        assert_eq!(clusters.len(), 1);
        assert_eq!(clusters[0].members, (0..1000).collect::<Vec<_>>());
        // Listed as each copy with the first: a line a copy, not a pair.
        assert_eq!(clusters[0].pairs.len(), 999);
        assert!(
            clusters[0]
                .pairs
                .iter()
                .all(|&(a, _, j)| a == 0 && j == 1.0)
        );
        assert_eq!(of.len(), 1000);
        // The first leaves: the next holds the group's sketch.
        c.remove(0);
        assert_eq!(c.index.len(), 1);
        assert_eq!(c.clusters().0[0].members[0], 1);
        // Empty sets: no sketch, no pairs, nothing fetched.
        let (_, bytes, pairs) = c.insert(5000, &[], |_| Err::<Arc<[u64]>, _>("no")).unwrap();
        assert!(bytes.is_empty() && pairs.is_empty());
        for i in 1..1000 {
            c.remove(i);
        }
        assert!(c.clusters().0.is_empty());
        assert_eq!((c.index.len(), c.free.len()), (0, 1));
    }

    #[test]
    fn a_cluster_split_by_removals_finds_the_links_it_skipped() {
        // Twelve near copies of one page (each with one word of its own):
        // the later ones link to the first `LINKS` and skip the rest.
        let base: Vec<u16> = (0..300).collect();
        let sets: Vec<Arc<[u64]>> = (0..12)
            .map(|i| {
                let mut d = base.clone();
                d[20 * i + 5] = 1000 + i as u16;
                shingle_set(keys(&d, 8)).into()
            })
            .collect();
        let mut c = Clusters::new(0.5);
        for (i, s) in sets.iter().enumerate() {
            let (_, _, made) = c
                .insert(i as u32, s, |o| Ok::<_, ()>(sets[o as usize].clone()))
                .unwrap();
            assert_eq!(made.len(), i.min(LINKS), "links of {i}");
        }
        assert_eq!(c.pairs().len(), 8 * 7 / 2 + 4 * LINKS);
        // The first eight leave: 8..12 lost every link.
        for i in 0..8 {
            c.remove(i);
        }
        let mut fetched = 0;
        let made = c
            .settle(&mut |o| {
                fetched += 1;
                Ok::<_, ()>(sets[o as usize].clone())
            })
            .unwrap();
        assert_eq!(made.len(), 3, "a spanning tree of four: {made:?}");
        assert!(fetched > 0);
        assert_eq!(c.clusters().0[0].members, vec![8, 9, 10, 11]);
        // Nothing removed since: nothing to mend, nothing fetched.
        let made = c.settle(&mut |_| Err::<Arc<[u64]>, _>("fetched")).unwrap();
        assert!(made.is_empty());
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
            c.pairs().iter().map(|p| (p.0, p.1)).collect::<Vec<_>>(),
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
            "min_similarity=0.5 near=minhash-oph/2 bands=52 rows=3 links=8"
        );
    }
}
