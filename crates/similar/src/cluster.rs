//! Clusters: the connected components of the pairs graph (union–find with
//! union by size and path halving). A document in no pair is in no cluster.

use super::Pair;

/// Disjoint sets over 0..n.
#[derive(Clone, Debug)]
pub(crate) struct UnionFind {
    parent: Vec<u32>,
    size: Vec<u32>,
}

impl UnionFind {
    pub fn new(n: usize) -> UnionFind {
        UnionFind {
            parent: (0..n as u32).collect(),
            size: vec![1; n],
        }
    }

    pub(crate) fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let grand = self.parent[self.parent[x as usize] as usize];
            self.parent[x as usize] = grand;
            x = grand;
        }
        x
    }

    /// Join the sets of `a` and `b`; false if they were one already.
    pub(crate) fn union(&mut self, a: u32, b: u32) -> bool {
        let (mut a, mut b) = (self.find(a), self.find(b));
        if a == b {
            return false;
        }
        if self.size[a as usize] < self.size[b as usize] {
            std::mem::swap(&mut a, &mut b);
        }
        self.parent[b as usize] = a;
        self.size[a as usize] += self.size[b as usize];
        true
    }
}

/// The components of the graph on documents 0..n with `pairs` as edges,
/// leaving out single documents. Members are ordered by `key`, and clusters
/// largest first, ties by their first member's key, so the result does not
/// depend on the order of the pairs.
pub fn clusters<K: Ord>(n: usize, pairs: &[Pair], key: impl Fn(u32) -> K) -> Vec<Vec<u32>> {
    let mut uf = UnionFind::new(n);
    for p in pairs {
        uf.union(p.a, p.b);
    }
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); n];
    for x in 0..n as u32 {
        let root = uf.find(x);
        members[root as usize].push(x);
    }
    let mut out: Vec<Vec<u32>> = members.into_iter().filter(|m| m.len() > 1).collect();
    for c in &mut out {
        c.sort_by_cached_key(|&x| key(x));
    }
    out.sort_by_cached_key(|c| (std::cmp::Reverse(c.len()), key(c[0])));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn pair(a: u32, b: u32) -> Pair {
        Pair {
            a,
            b,
            similarity: 1.0,
        }
    }

    #[test]
    fn components_largest_first() {
        // 0-1-2 chain, 3-4, 5 alone, 6-7 (ties with 3-4: by first member).
        let pairs = [pair(6, 7), pair(1, 2), pair(3, 4), pair(0, 1)];
        assert_eq!(
            clusters(8, &pairs, |x| x),
            vec![vec![0, 1, 2], vec![3, 4], vec![6, 7]]
        );
        // Ordered by another key (say, paths sorting in reverse).
        assert_eq!(
            clusters(8, &pairs, std::cmp::Reverse),
            vec![vec![2, 1, 0], vec![7, 6], vec![4, 3]]
        );
        assert!(clusters(3, &[], |x| x).is_empty());
    }

    #[test]
    fn union_find_joins_once() {
        let mut uf = UnionFind::new(4);
        assert!(uf.union(0, 1));
        assert!(uf.union(2, 3));
        assert!(!uf.union(1, 0));
        assert!(uf.union(1, 3));
        assert!(!uf.union(0, 2));
        assert_eq!(uf.find(0), uf.find(3));
    }

    proptest! {
        #[test]
        fn same_cluster_iff_connected(
            edges in prop::collection::vec((0u32..20, 0u32..20), 0..30),
        ) {
            let n = 20;
            let pairs: Vec<Pair> = edges.iter().filter(|(a, b)| a != b).map(|&(a, b)| pair(a.min(b), a.max(b))).collect();
            let got = clusters(n, &pairs, |x| x);
            // Reachability by repeated relaxation, the slow way.
            let mut reach = vec![vec![false; n]; n];
            for (i, row) in reach.iter_mut().enumerate() {
                row[i] = true;
            }
            for p in &pairs {
                reach[p.a as usize][p.b as usize] = true;
                reach[p.b as usize][p.a as usize] = true;
            }
            for k in 0..n {
                for i in 0..n {
                    for j in 0..n {
                        if reach[i][k] && reach[k][j] {
                            reach[i][j] = true;
                        }
                    }
                }
            }
            let mut cluster_of = vec![None; n];
            for (c, members) in got.iter().enumerate() {
                prop_assert!(members.len() > 1);
                prop_assert!(members.windows(2).all(|w| w[0] < w[1]));
                for &m in members {
                    prop_assert!(cluster_of[m as usize].is_none());
                    cluster_of[m as usize] = Some(c);
                }
            }
            for i in 0..n {
                let alone = (0..n).all(|j| j == i || !reach[i][j]);
                prop_assert_eq!(cluster_of[i].is_none(), alone);
                for j in 0..n {
                    if !alone {
                        prop_assert_eq!(cluster_of[i] == cluster_of[j], reach[i][j]);
                    }
                }
            }
            prop_assert!(got.windows(2).all(|w| (w[0].len(), std::cmp::Reverse(w[0][0])) >= (w[1].len(), std::cmp::Reverse(w[1][0]))));
        }
    }
}
