//! The exact result (docs/formats.md §3): every shingle, an unbounded map from key to
//! the earliest document containing it. The ground truth of every metric.

#[cfg(test)]
use super::table::KeyMap;
use super::table::zeroed;

/// Earliest document of every shingle key seen so far.
#[derive(Default)]
#[cfg(test)]
pub(crate) struct Exact {
    first: KeyMap<u32>,
}

#[cfg(test)]
impl Exact {
    /// Process document `doc` (later than all before it): the exact origin of
    /// each of its shingles into `out`.
    #[cfg(test)]
    pub(crate) fn origins(&mut self, doc: u32, shingle_keys: &[u64], out: &mut Vec<u32>) {
        out.clear();
        out.extend(
            shingle_keys
                .iter()
                .map(|&key| *self.first.entry(key).or_insert(doc)),
        );
    }

    /// Distinct shingle keys seen.
    #[cfg(test)]
    pub(crate) fn distinct(&self) -> usize {
        self.first.len()
    }
}

/// The exact origin of every shingle of `docs` (in processing order): what
/// [`Exact::origins`] gives document by document, faster for a whole corpus.
/// All keys are known up front, so a flat open-addressing table sized for
/// them can be prefetched a few keys ahead: the pass waits on memory far less
/// than a growing map does.
pub(crate) fn all_origins(docs: &[Vec<u64>]) -> Vec<Vec<u32>> {
    // Far enough ahead for a miss to DRAM to complete.
    const AHEAD: usize = 64;
    // Slot i: a key with its top bit set (keys have 62 bits, so an occupied
    // slot is never 0) and its earliest document. Load factor at most 2/3;
    // linear probing, wrapping around.
    let total: usize = docs.iter().map(Vec::len).sum();
    let cap = total + total / 2 + 1;
    let mut keys: Vec<u64> = zeroed(cap, true);
    let mut first: Vec<u32> = zeroed(cap, true);
    let home = |key: u64| {
        ((u128::from(key.wrapping_mul(0x9e37_79b9_7f4a_7c15)) * cap as u128) >> 64) as usize
    };
    let mut out: Vec<Vec<u32>> = docs.iter().map(|k| Vec::with_capacity(k.len())).collect();
    let mut ahead = docs.iter().flatten().skip(AHEAD);
    for (d, doc) in docs.iter().enumerate() {
        for &key in doc {
            if let Some(&next) = ahead.next() {
                let h = home(next);
                prefetch(&keys[h]);
                prefetch(&first[h]);
            }
            let tagged = key | 1 << 63;
            let mut i = home(key);
            let origin = loop {
                if keys[i] == tagged {
                    break first[i];
                }
                if keys[i] == 0 {
                    keys[i] = tagged;
                    first[i] = d as u32;
                    break d as u32;
                }
                i = if i + 1 == cap { 0 } else { i + 1 };
            };
            out[d].push(origin);
        }
    }
    out
}

#[inline]
fn prefetch<T>(p: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint; it never faults or changes memory,
    // and SSE is part of the x86_64 baseline.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>((p as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_document_is_the_origin() {
        let mut e = Exact::default();
        let mut out = vec![];
        e.origins(0, &[1, 2, 3], &mut out);
        assert_eq!(out, vec![0, 0, 0]);
        e.origins(1, &[3, 4, 4, 1], &mut out);
        assert_eq!(out, vec![0, 1, 1, 0]);
        e.origins(2, &[4, 5], &mut out);
        assert_eq!(out, vec![1, 2]);
        assert_eq!(e.distinct(), 5);
    }

    #[test]
    fn all_origins_agree_with_one_document_at_a_time() {
        // Repeats within and across documents, and key 0.
        let docs: Vec<Vec<u64>> = (0..40u64)
            .map(|d| {
                (0..50)
                    .map(|i| ((d * 7 + i) % 90).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 2)
                    .collect()
            })
            .collect();
        let mut e = Exact::default();
        let want: Vec<Vec<u32>> = docs
            .iter()
            .enumerate()
            .map(|(d, keys)| {
                let mut out = vec![];
                e.origins(d as u32, keys, &mut out);
                out
            })
            .collect();
        assert_eq!(all_origins(&docs), want);
        assert_eq!(all_origins(&[]), Vec::<Vec<u32>>::new());
        assert_eq!(all_origins(&[vec![], vec![0, 0]]), vec![vec![], vec![1, 1]]);
    }
}
