//! The no-complete-overlap pass of NM-l, NW-w and NHs (Abdel-Hamid et al. 2009 §2.1): discard
//! selected shingles whose tokens are all covered by the shingles kept.
//!
//! The seed leaves the order of discarding open. docs/algorithms.md §2 fixes it as the
//! greedy minimum interval cover of the union of the selected shingles, which
//! reproduces the seed's remark that with k = 8 Every-8th is the no-overlap
//! variant of both All and Every-4th (up to the document's tail, see the tests).

/// The kept starts of the greedy minimum cover of the union of the k-shingles
/// starting at `starts` (sorted ascending).
#[cfg(test)]
pub(crate) fn no_complete_overlap(starts: &[u32], k: usize) -> Vec<u32> {
    let mut kept = starts.to_vec();
    no_complete_overlap_in_place(&mut kept, k);
    kept
}

/// [`no_complete_overlap`] without allocating: keeps the chosen starts of
/// `starts` (sorted ascending), in order.
#[cfg(test)]
pub(crate) fn no_complete_overlap_in_place(starts: &mut Vec<u32>, k: usize) {
    cover_in_place(starts, k, |&s| s);
}

/// The greedy cover over any items that carry a shingle start (the selector runs
/// it on its `Unit`s directly). Kept items are compacted to the front, in order.
///
/// From the first token not yet covered (or the next selected start, across a gap
/// no input covers), keep the shingle starting furthest right that still covers
/// it: equal lengths make the furthest-reaching shingle the one with the largest
/// start ≤ that token. Every kept shingle owns that token alone, so no kept
/// shingle is covered by the others, and the cover is minimum. §2's pseudo-code
/// ends with a loop discarding the shingles after the kept one that it fully
/// covers; for equal-length shingles with increasing starts there are none, so it
/// is left out.
pub(crate) fn cover_in_place<T: Copy>(items: &mut Vec<T>, k: usize, start: impl Fn(&T) -> u32) {
    let n = items.len();
    debug_assert!(
        items.windows(2).all(|p| start(&p[0]) <= start(&p[1])),
        "starts must be sorted"
    );
    let k = k as u64;
    let mut kept = 0;
    // First token not covered by the kept shingles (u64: no overflow at u32::MAX).
    let mut uncovered: u64 = 0;
    let mut i = 0;
    while i < n {
        let u = uncovered.max(start(&items[i]) as u64);
        let mut j = i;
        while j + 1 < n && start(&items[j + 1]) as u64 <= u {
            j += 1;
        }
        items[kept] = items[j];
        kept += 1;
        uncovered = start(&items[j]) as u64 + k;
        i = j + 1;
    }
    items.truncate(kept);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn coverage(starts: &[u32], k: usize, n: usize) -> Vec<bool> {
        let mut c = vec![false; n];
        for &s in starts {
            c[s as usize..s as usize + k].fill(true);
        }
        c
    }

    /// Abdel-Hamid et al.: "Every-8th is the no-complete-overlap variant of All and of 4th"
    /// (k = 8). The greedy cover gives 0, 8, 16, … while those shingles fit; at the
    /// tail it must still cover the last tokens, so when the last shingle start
    /// L = n-k is not a multiple of 8 it keeps L as well (for 4th: the last
    /// multiple of 4 ≤ L when that is not a multiple of 8).
    #[test]
    fn every_8th_is_no_overlap_of_all_and_4th() {
        let k = 8;
        for n in 8..200usize {
            let last = (n - k) as u32;
            let all: Vec<u32> = (0..=last).collect();
            let fourth: Vec<u32> = (0..=last).step_by(4).collect();
            let eighth: Vec<u32> = (0..=last).step_by(8).collect();

            let mut want_all = eighth.clone();
            if !last.is_multiple_of(8) {
                want_all.push(last);
            }
            assert_eq!(no_complete_overlap(&all, k), want_all, "All, n = {n}");

            let mut want_4th = eighth.clone();
            let last4 = *fourth.last().unwrap();
            if !last4.is_multiple_of(8) {
                want_4th.push(last4);
            }
            assert_eq!(no_complete_overlap(&fourth, k), want_4th, "4th, n = {n}");
        }
        // When n - k is a multiple of 8 the statement holds exactly.
        let all: Vec<u32> = (0..=80).collect();
        let eighth: Vec<u32> = (0..=80).step_by(8).collect();
        assert_eq!(no_complete_overlap(&all, 8), eighth);
        let fourth: Vec<u32> = (0..=80).step_by(4).collect();
        assert_eq!(no_complete_overlap(&fourth, 8), eighth);
        // n = 30: All keeps 0, 8, 16 and the last shingle 22 for tokens 24..30.
        let all: Vec<u32> = (0..=22).collect();
        assert_eq!(no_complete_overlap(&all, 8), [0, 8, 16, 22]);
    }

    #[test]
    fn gaps_and_edges() {
        assert!(no_complete_overlap(&[], 8).is_empty());
        assert_eq!(no_complete_overlap(&[5], 8), [5]);
        // A gap no input covers: restart at the next start.
        let starts = [0, 1, 2, 20, 21, 22, 23, 24, 25, 26, 27, 28];
        assert_eq!(no_complete_overlap(&starts, 8), [0, 2, 20, 28]);
        // Each of these owns a token nobody else covers.
        assert_eq!(
            no_complete_overlap(&[0, 2, 20, 21, 30], 8),
            [0, 2, 20, 21, 30]
        );
        // k = 1: nothing overlaps.
        assert_eq!(no_complete_overlap(&[1, 2, 4], 1), [1, 2, 4]);
        let mut v = vec![0, 3, 6, 9];
        no_complete_overlap_in_place(&mut v, 4);
        assert_eq!(v, [0, 3, 6, 9]);
        v = vec![0, 1, 2, 3, 4];
        no_complete_overlap_in_place(&mut v, 4);
        assert_eq!(v, [0, 4]);
    }

    fn sorted_starts() -> impl Strategy<Value = Vec<u32>> {
        prop::collection::btree_set(0u32..80, 0..40).prop_map(|s| s.into_iter().collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// Kept ⊆ input, same union, and no kept shingle is covered by the others.
        #[test]
        fn no_complete_overlap_properties(starts in sorted_starts(), k in 1usize..=10) {
            let kept = no_complete_overlap(&starts, k);
            let n = 80 + k;
            prop_assert!(kept.windows(2).all(|p| p[0] < p[1]));
            prop_assert!(kept.iter().all(|s| starts.binary_search(s).is_ok()));
            prop_assert_eq!(coverage(&kept, k, n), coverage(&starts, k, n));
            for (x, &s) in kept.iter().enumerate() {
                let mut others = kept.clone();
                others.remove(x);
                let c = coverage(&others, k, n);
                prop_assert!(
                    !c[s as usize..s as usize + k].iter().all(|&t| t),
                    "kept shingle {} is covered by {:?}", s, others
                );
            }
        }

        /// The greedy cover is minimum: no smaller subset has the same union.
        #[test]
        fn no_complete_overlap_is_minimum(
            starts in prop::collection::btree_set(0u32..30, 0..12)
                .prop_map(|s| s.into_iter().collect::<Vec<u32>>()),
            k in 1usize..=8,
        ) {
            let kept = no_complete_overlap(&starts, k);
            let n = 30 + k;
            let union = coverage(&starts, k, n);
            let best = (0u32..1 << starts.len())
                .filter(|mask| {
                    let sub: Vec<u32> = starts
                        .iter()
                        .enumerate()
                        .filter(|(b, _)| mask >> b & 1 == 1)
                        .map(|(_, &s)| s)
                        .collect();
                    coverage(&sub, k, n) == union
                })
                .map(u32::count_ones)
                .min()
                .unwrap();
            prop_assert_eq!(kept.len() as u32, best);
        }
    }
}
