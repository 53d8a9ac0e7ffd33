//! The exact result (CONTRACT §3): every shingle, an unbounded map from key to
//! the earliest document containing it. The ground truth of every metric.

use super::outcome::Outcome;
use super::table::KeyMap;

/// Earliest document of every shingle key seen so far.
#[derive(Default)]
pub struct Exact {
    first: KeyMap<u32>,
}

impl Exact {
    /// Process document `doc` (later than all before it): the exact origin of
    /// each of its shingles into `out`.
    pub fn origins(&mut self, doc: u32, shingle_keys: &[u64], out: &mut Vec<u32>) {
        out.clear();
        out.extend(
            shingle_keys
                .iter()
                .map(|&key| *self.first.entry(key).or_insert(doc)),
        );
    }

    /// Process document `doc` and build its exact outcome.
    pub fn outcome(&mut self, doc: u32, tokens: u32, shingle_keys: &[u64], k: usize) -> Outcome {
        let mut labels = Vec::with_capacity(shingle_keys.len());
        self.origins(doc, shingle_keys, &mut labels);
        let units = (0..shingle_keys.len() as u32).map(|i| (i, i + k as u32));
        Outcome::new(doc, tokens, shingle_keys.len() as u32, units, &labels)
    }

    /// Distinct shingle keys seen.
    pub fn distinct(&self) -> usize {
        self.first.len()
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
}
