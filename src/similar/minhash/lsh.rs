//! The live form of the band buckets: a hash map band key → documents, to
//! which documents are added, in which they are looked up and from which
//! they are removed one at a time (the TUI's clusters, src/engine/clusters.rs).

use std::collections::HashMap;

use super::{Banding, band_keys};
use crate::fingerprint::fmix64;

/// A document's stored sketch: its band keys and a 128-bit digest of its
/// shingle set (two documents with equal digests hold the same set, but for a
/// 2^-128 chance, so they pair at J = 1 without fetching either set).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Sketch {
    pub keys: Box<[u64]>,
    pub digest: [u64; 2],
}

impl Sketch {
    /// The sketch of a sorted, deduplicated set; `None` for an empty one.
    pub(crate) fn of(set: &[u64], banding: Banding) -> Option<Sketch> {
        let mut keys = Vec::new();
        if !band_keys(set, banding, &mut keys) {
            return None;
        }
        Some(Sketch {
            keys: keys.into(),
            digest: digest(set),
        })
    }

    /// As stored: the band keys, then the digest, each u64 little-endian.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        self.keys
            .iter()
            .chain(&self.digest)
            .flat_map(|k| k.to_le_bytes())
            .collect()
    }

    /// The inverse of [`Sketch::to_bytes`] for `bands` band keys; `None` if
    /// the length is not that.
    pub(crate) fn from_bytes(bytes: &[u8], bands: u32) -> Option<Sketch> {
        if bytes.len() != 8 * (bands as usize + 2) {
            return None;
        }
        let mut words: Vec<u64> = bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect();
        let digest = [words[bands as usize], words[bands as usize + 1]];
        words.truncate(bands as usize);
        Some(Sketch {
            keys: words.into(),
            digest,
        })
    }
}

/// Two independent 64-bit folds of a set (and its length).
pub(crate) fn digest(set: &[u64]) -> [u64; 2] {
    let n = set.len() as u64;
    let lo = set.iter().fold(fmix64(n), |h, &x| fmix64(h ^ x));
    let hi = set.iter().fold(fmix64(n ^ 0x5bd1_e995), |h, &x| {
        fmix64(h.rotate_left(29) ^ x ^ 0x9e37_79b9)
    });
    [lo, hi]
}

/// Band key → the documents holding it.
#[derive(Clone, Debug)]
pub(crate) struct BandIndex {
    banding: Banding,
    buckets: HashMap<u64, Vec<u32>>,
    sketches: HashMap<u32, Sketch>,
}

impl BandIndex {
    pub(crate) fn new(banding: Banding) -> BandIndex {
        BandIndex {
            banding,
            buckets: HashMap::new(),
            sketches: HashMap::new(),
        }
    }

    pub(crate) fn banding(&self) -> Banding {
        self.banding
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.sketches.len()
    }

    pub(crate) fn sketch(&self, id: u32) -> Option<&Sketch> {
        self.sketches.get(&id)
    }

    /// Add `id` with its sketch (replacing what it had).
    pub(crate) fn insert(&mut self, id: u32, sketch: Sketch) {
        assert_eq!(
            sketch.keys.len(),
            self.banding.bands as usize,
            "sketch of another banding"
        );
        self.remove(id);
        for &k in sketch.keys.iter() {
            let b = self.buckets.entry(k).or_default();
            // Two bands of one document with one key: listed once.
            if b.last() != Some(&id) {
                b.push(id);
            }
        }
        self.sketches.insert(id, sketch);
    }

    /// Forget `id`; false if it was not there.
    pub(crate) fn remove(&mut self, id: u32) -> bool {
        let Some(s) = self.sketches.remove(&id) else {
            return false;
        };
        for k in s.keys.iter() {
            if let Some(b) = self.buckets.get_mut(k) {
                b.retain(|&x| x != id);
                if b.is_empty() {
                    self.buckets.remove(k);
                }
            }
        }
        true
    }

    /// The documents sharing a band key with `keys`, each once, ascending.
    pub(crate) fn query(&self, keys: &[u64], out: &mut Vec<u32>) {
        out.clear();
        for k in keys {
            if let Some(b) = self.buckets.get(k) {
                out.extend_from_slice(b);
            }
        }
        out.sort_unstable();
        out.dedup();
    }
}
