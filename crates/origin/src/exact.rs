//! The exact result (docs/formats.md §3): every shingle, an unbounded map from key to
//! the earliest document containing it. The ground truth of every metric.

#[cfg(test)]
use super::table::KeyMap;
use super::table::{prefetch, zeroed};

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
pub(crate) fn all_origins(docs: &[Vec<u64>]) -> Vec<Vec<u32>> {
    let mut first = FirstSeen::default();
    let mut out: Vec<Vec<u32>> = docs.iter().map(|k| Vec::with_capacity(k.len())).collect();
    first.origins(0, docs, &mut out);
    out
}

/// Earliest document of every shingle key seen so far, in a flat
/// open-addressing table: keys can be prefetched a few ahead, so the pass
/// waits on memory far less than a growing hash map does. It grows between
/// batches of documents, never within one, so it holds the distinct keys
/// seen (not every shingle) and a history can be fed a batch at a time.
#[derive(Default)]
pub(crate) struct FirstSeen {
    /// Slot i: a key with its top bit set (keys have 62 bits, so an occupied
    /// slot is never 0) and its earliest document. Load factor at most 2/3;
    /// linear probing, wrapping around.
    keys: Vec<u64>,
    first: Vec<u32>,
    occupied: usize,
}

impl FirstSeen {
    /// Process documents `from..` (later than all before them): the exact
    /// origin of each shingle of `docs[i]` appended to `out[i]`.
    pub(crate) fn origins(&mut self, from: u32, docs: &[Vec<u64>], out: &mut [Vec<u32>]) {
        // Far enough ahead for a miss to DRAM to complete.
        const AHEAD: usize = 64;
        debug_assert_eq!(docs.len(), out.len());
        let total: usize = docs.iter().map(Vec::len).sum();
        self.reserve(total);
        let cap = self.keys.len();
        let (keys, first) = (&mut self.keys[..], &mut self.first[..]);
        let mut ahead = docs.iter().flatten().skip(AHEAD);
        for (d, (doc, out)) in docs.iter().zip(out).enumerate() {
            let d = from + d as u32;
            for &key in doc {
                if let Some(&next) = ahead.next() {
                    let h = home(next, cap);
                    prefetch(&keys[h]);
                    prefetch(&first[h]);
                }
                let (i, found) = probe(keys, key, cap);
                out.push(if found {
                    first[i]
                } else {
                    keys[i] = key | 1 << 63;
                    first[i] = d;
                    self.occupied += 1;
                    d
                });
            }
        }
    }

    /// Room for `more` new keys at a load factor of at most 2/3.
    fn reserve(&mut self, more: usize) {
        let need = self.occupied + more;
        if need * 3 < self.keys.len() * 2 {
            return;
        }
        // At least doubling keeps the rehashing linear overall.
        let cap = (need + need / 2 + 1).max(2 * self.keys.len());
        let mut keys: Vec<u64> = zeroed(cap, true);
        let mut first: Vec<u32> = zeroed(cap, true);
        for (&key, &doc) in self.keys.iter().zip(&self.first) {
            if key != 0 {
                let (i, _) = probe(&keys, key, cap);
                keys[i] = key;
                first[i] = doc;
            }
        }
        (self.keys, self.first) = (keys, first);
    }
}

/// The slot of `key` in `cap` slots, multiplicative hashing.
#[inline]
fn home(key: u64, cap: usize) -> usize {
    ((u128::from(key.wrapping_mul(0x9e37_79b9_7f4a_7c15)) * cap as u128) >> 64) as usize
}

/// The slot holding `key` (true) or the empty slot where it goes (false).
/// Stored keys have their top bit set; `key` may or may not.
#[inline]
fn probe(keys: &[u64], key: u64, cap: usize) -> (usize, bool) {
    let tagged = key | 1 << 63;
    let mut i = home(key & !(1 << 63), cap);
    loop {
        if keys[i] == tagged {
            return (i, true);
        }
        if keys[i] == 0 {
            return (i, false);
        }
        i = if i + 1 == cap { 0 } else { i + 1 };
    }
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
        // Fed in batches of 1 to 6 documents, the table growing between them.
        let mut first = FirstSeen::default();
        let mut got: Vec<Vec<u32>> = vec![vec![]; docs.len()];
        let mut from = 0;
        for n in (1..=6).cycle() {
            let to = (from + n).min(docs.len());
            first.origins(from as u32, &docs[from..to], &mut got[from..to]);
            from = to;
            if from == docs.len() {
                break;
            }
        }
        assert_eq!(got, want);
        assert_eq!(first.occupied, e.distinct());
        assert_eq!(all_origins(&[]), Vec::<Vec<u32>>::new());
        assert_eq!(all_origins(&[vec![], vec![0, 0]]), vec![vec![], vec![1, 1]]);
    }
}
