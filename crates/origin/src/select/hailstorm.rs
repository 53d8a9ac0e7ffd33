//! Hailstorm (Abdel-Hamid et al. 2009 §2.1): shingle i is selected iff the minimum token hash of
//! the shingle sits at its first or its last token (ties count).
//!
//! Context-free (the decision reads only the shingle's own tokens) and with total
//! coverage (Lemma 1): every token except the first and last k-1 is covered by a
//! selected shingle.

/// Hailstorm over the finalised token hashes: the selected shingle starts, in
/// order, into `out` (cleared first). No shingles when `hashes.len() < k`.
#[cfg(test)]
pub(crate) fn hailstorm(hashes: &[u64], k: usize, out: &mut Vec<u32>) {
    out.clear();
    let mut suffix = Vec::new();
    hailstorm_with(hashes, k, &mut suffix, |i| out.push(i as u32));
}

/// Hailstorm, calling `emit` with each selected start in increasing order.
///
/// Window minima by van Herk / Gil-Werman: cut the tokens into blocks of k; a
/// window starting at offset r of a block is the block's suffix from r plus the
/// next block's prefix up to r-1. That is O(n) with three `min`s per token and no
/// data-dependent loop, where a monotone deque mispredicts on random hashes.
/// `suffix` is scratch, reused across calls.
pub(crate) fn hailstorm_with(
    hashes: &[u64],
    k: usize,
    suffix: &mut Vec<u64>,
    mut emit: impl FnMut(usize),
) {
    let n = hashes.len();
    assert!(k >= 1, "Hailstorm needs k >= 1");
    if n < k {
        return;
    }
    let last_start = n - k;
    suffix.clear();
    suffix.resize(k, 0);
    let mut b = 0;
    while b <= last_start {
        // b + k <= n, so the whole block exists.
        let block = &hashes[b..b + k];
        let mut m = u64::MAX;
        for (s, &h) in suffix.iter_mut().zip(block).rev() {
            m = m.min(h);
            *s = m;
        }
        // The window starting at the block's first token is the block itself.
        if suffix[0] == block[0] || suffix[0] == block[k - 1] {
            emit(b);
        }
        let mut prefix = u64::MAX;
        for r in 1..k.min(last_start - b + 1) {
            let end = b + k + r - 1;
            prefix = prefix.min(hashes[end]);
            let m = suffix[r].min(prefix);
            if m == hashes[b + r] || m == hashes[end] {
                emit(b + r);
            }
        }
        b += k;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The definition, O(nk).
    fn naive(v: &[u64], k: usize) -> Vec<u32> {
        if v.len() < k {
            return vec![];
        }
        (0..=v.len() - k)
            .filter(|&i| {
                let m = *v[i..i + k].iter().min().unwrap();
                m == v[i] || m == v[i + k - 1]
            })
            .map(|i| i as u32)
            .collect()
    }

    /// Hash sequences with many ties (small range) or few (full range).
    fn hashes() -> impl Strategy<Value = Vec<u64>> {
        prop_oneof![
            prop::collection::vec(0u64..3, 0..120),
            prop::collection::vec(0u64..20, 0..120),
            prop::collection::vec(any::<u64>(), 0..120),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn hailstorm_matches_naive(v in hashes(), k in 1usize..=10) {
            let mut out = vec![];
            hailstorm(&v, k, &mut out);
            prop_assert_eq!(out, naive(&v, k));
        }

        /// Lemma 1, ties included.
        #[test]
        fn hailstorm_total_coverage(v in hashes(), k in 1usize..=10) {
            let mut out = vec![];
            hailstorm(&v, k, &mut out);
            let n = v.len();
            let mut covered = vec![false; n];
            for &s in &out {
                covered[s as usize..s as usize + k].fill(true);
            }
            if n >= k {
                for (t, &c) in covered.iter().enumerate().take(n + 1 - k).skip(k - 1) {
                    prop_assert!(c, "token {} uncovered (n={}, k={}, selected {:?})", t, n, k, out);
                }
            }
        }
    }

    #[test]
    fn hailstorm_edges() {
        let mut out = vec![];
        hailstorm(&[5, 3, 9], 4, &mut out);
        assert!(out.is_empty(), "fewer than k tokens: no shingles");
        hailstorm(&[5, 3, 9], 1, &mut out);
        assert_eq!(out, [0, 1, 2], "k = 1: every token is its own minimum");
        // Strictly increasing: the minimum is always first.
        hailstorm(&[1, 2, 3, 4, 5, 6], 3, &mut out);
        assert_eq!(out, [0, 1, 2, 3]);
        // Minimum in the middle of every window of 3 except where it is at an end.
        hailstorm(&[9, 1, 9, 9, 1, 9], 3, &mut out);
        assert_eq!(out, [1, 2]);
        // Constant: every shingle ties, so every shingle is selected.
        hailstorm(&[7; 10], 4, &mut out);
        assert_eq!(out, (0..7).collect::<Vec<u32>>());
    }
}
