//! The connected components of the live clusters' links, each with its
//! groups listed. A union moves the smaller list into the larger (each group
//! moves O(log n) times); a removal's split is found by walking its own
//! component, not every group; and the labels that changed since the last
//! look are kept, so the cluster list is built again only for them. With
//! 100,000 pages in 6,000 clusters, building the whole list at every change
//! took 25 ms (a cache miss for every link of every clustered group).

use std::collections::{HashMap, HashSet};

/// Labels are never reused: a label names one component from its making to
/// its end (joined into another, or emptied).
#[derive(Default)]
pub(super) struct Components {
    /// Each group's component (meaningless for a free group number).
    label: Vec<u64>,
    /// Each component's groups, in no order.
    groups: HashMap<u64, Vec<u32>>,
    next: u64,
    /// Components made, joined, split or changed since [`Components::take_changed`].
    changed: HashSet<u64>,
}

impl Components {
    /// Group `g` (a new number, or a free one reused) as a component of its own.
    pub(super) fn add(&mut self, g: u32) {
        if self.label.len() <= g as usize {
            self.label.resize(g as usize + 1, 0);
        }
        let l = self.fresh();
        self.label[g as usize] = l;
        self.groups.insert(l, vec![g]);
    }

    /// Group `g` is freed: out of its component.
    pub(super) fn remove(&mut self, g: u32) {
        let l = self.find(g);
        self.changed.insert(l);
        if let Some(list) = self.groups.get_mut(&l) {
            if let Some(at) = list.iter().position(|&x| x == g) {
                list.swap_remove(at);
            }
            if list.is_empty() {
                self.groups.remove(&l);
            }
        }
    }

    pub(super) fn find(&self, g: u32) -> u64 {
        self.label[g as usize]
    }

    /// Something in `g`'s component changed (a member came or went).
    pub(super) fn touch(&mut self, g: u32) {
        self.changed.insert(self.find(g));
    }

    /// Join the components of `a` and `b`.
    pub(super) fn union(&mut self, a: u32, b: u32) {
        let (la, lb) = (self.find(a), self.find(b));
        if la == lb {
            return;
        }
        let (keep, gone) = match self.groups[&la].len() >= self.groups[&lb].len() {
            true => (la, lb),
            false => (lb, la),
        };
        let moved = self.groups.remove(&gone).unwrap_or_default();
        for &g in &moved {
            self.label[g as usize] = keep;
        }
        self.groups.entry(keep).or_default().extend(moved);
        self.changed.insert(keep);
        self.changed.insert(gone);
    }

    /// The groups of component `l` now (none if it is gone).
    pub(super) fn groups(&self, l: u64) -> &[u32] {
        self.groups.get(&l).map_or(&[], Vec::as_slice)
    }

    /// Split component `l` into its pieces joined by `links_of`: the largest
    /// piece keeps the label, the others get new ones. Returns the pieces'
    /// labels (one if it is whole).
    pub(super) fn split<I: IntoIterator<Item = u32>>(
        &mut self,
        l: u64,
        links_of: impl Fn(u32) -> I,
    ) -> Vec<u64> {
        let Some(all) = self.groups.remove(&l) else {
            return Vec::new();
        };
        self.changed.insert(l);
        let mut seen: HashSet<u32> = HashSet::with_capacity(all.len());
        let mut pieces: Vec<Vec<u32>> = Vec::new();
        for &start in &all {
            if !seen.insert(start) {
                continue;
            }
            let mut piece = vec![start];
            let mut at = 0;
            while at < piece.len() {
                for h in links_of(piece[at]) {
                    if seen.insert(h) {
                        piece.push(h);
                    }
                }
                at += 1;
            }
            pieces.push(piece);
        }
        let largest = (0..pieces.len())
            .max_by_key(|&i| (pieces[i].len(), std::cmp::Reverse(i)))
            .unwrap_or(0);
        let mut labels = Vec::with_capacity(pieces.len());
        for (i, piece) in pieces.into_iter().enumerate() {
            let label = if i == largest { l } else { self.fresh() };
            for &g in &piece {
                self.label[g as usize] = label;
            }
            self.changed.insert(label);
            self.groups.insert(label, piece);
            labels.push(label);
        }
        labels
    }

    /// Every component's label.
    #[cfg(test)]
    pub(super) fn labels(&self) -> impl Iterator<Item = u64> + '_ {
        self.groups.keys().copied()
    }

    /// The components changed since the last call.
    pub(super) fn take_changed(&mut self) -> HashSet<u64> {
        std::mem::take(&mut self.changed)
    }

    fn fresh(&mut self) -> u64 {
        let l = self.next;
        self.next += 1;
        self.changed.insert(l);
        l
    }
}
