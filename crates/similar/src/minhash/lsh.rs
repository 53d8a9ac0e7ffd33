//! The live form of the band buckets: a hash map band key → documents, to
//! which documents are added, in which they are looked up and from which
//! they are removed one at a time (the live clusters, `live.rs`).

use std::collections::HashMap;

use lineage_core::fingerprint::keymap::KeyMap;

use super::{Banding, Scratch, band_keys_with, low_bytes};
use lineage_core::fingerprint::fmix64;

/// A document's stored sketch: its band keys, a 128-bit digest of its
/// shingle set (two documents with equal digests hold the same set, but for a
/// 2^-128 chance, so they pair at J = 1 without fetching either set), and
/// the low byte of every bin, for the sketch filter ([`super::agreeing`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sketch {
    /// One key per band: the hash of that band's rows.
    pub keys: Box<[u64]>,
    /// Two independent 64-bit folds of the shingle set and its length.
    pub digest: [u64; 2],
    /// The low byte of every bin (bands × rows).
    pub low: Box<[u8]>,
}

impl Sketch {
    /// The sketch of a sorted, deduplicated set; `None` for an empty one.
    pub fn of(set: &[u64], banding: Banding) -> Option<Sketch> {
        let mut scratch = Scratch::default();
        let mut keys = Vec::new();
        if !band_keys_with(set, banding, &mut scratch, &mut keys) {
            return None;
        }
        Some(Sketch {
            keys: keys.into(),
            digest: digest(set),
            low: low_bytes(&scratch.bins),
        })
    }

    /// As stored: the band keys, then the digest, each u64 little-endian,
    /// then the low bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out: Vec<u8> = self
            .keys
            .iter()
            .chain(&self.digest)
            .flat_map(|k| k.to_le_bytes())
            .collect();
        out.extend_from_slice(&self.low);
        out
    }

    /// The inverse of [`Sketch::to_bytes`] for `banding`; `None` if the
    /// length is not that.
    pub fn from_bytes(bytes: &[u8], banding: Banding) -> Option<Sketch> {
        let words = banding.bands as usize + 2;
        if bytes.len() != 8 * words + banding.hashes() as usize {
            return None;
        }
        let (head, low) = bytes.split_at(8 * words);
        let mut words: Vec<u64> = head
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect();
        let bands = banding.bands as usize;
        let digest = [words[bands], words[bands + 1]];
        words.truncate(bands);
        Some(Sketch {
            keys: words.into(),
            digest,
            low: low.into(),
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
///
/// Most band keys belong to one document, so a key maps to one `u32`: the
/// document itself, or (top bit set) the index of a list in `shared` when
/// several hold it. At 100,000 documents × 52 bands a map of lists took
/// ~80 bytes a key (0.4 GB); this takes ~20.
#[derive(Clone, Debug)]
pub struct BandIndex {
    banding: Banding,
    buckets: KeyMap<u32>,
    /// Lists of the keys several documents hold; `free` are unused slots.
    shared: Vec<Vec<u32>>,
    free: Vec<u32>,
    sketches: HashMap<u32, Sketch>,
}

/// A bucket value with this bit is an index into `shared`.
const SHARED: u32 = 1 << 31;

impl BandIndex {
    /// An empty index for sketches of this banding.
    pub fn new(banding: Banding) -> BandIndex {
        BandIndex {
            banding,
            buckets: KeyMap::default(),
            shared: Vec::new(),
            free: Vec::new(),
            sketches: HashMap::new(),
        }
    }

    /// The banding its sketches have.
    pub fn banding(&self) -> Banding {
        self.banding
    }

    /// Documents indexed.
    pub fn len(&self) -> usize {
        self.sketches.len()
    }

    /// Whether no document is indexed.
    pub fn is_empty(&self) -> bool {
        self.sketches.is_empty()
    }

    /// The stored sketch of a document, if it is indexed.
    pub fn sketch(&self, id: u32) -> Option<&Sketch> {
        self.sketches.get(&id)
    }

    /// A new list in `shared` holding `ids`; its bucket value.
    fn share(&mut self, ids: Vec<u32>) -> u32 {
        let at = match self.free.pop() {
            Some(at) => {
                self.shared[at as usize] = ids;
                at
            }
            None => {
                self.shared.push(ids);
                (self.shared.len() - 1) as u32
            }
        };
        at | SHARED
    }

    /// Add `id` with its sketch (replacing what it had).
    pub fn insert(&mut self, id: u32, sketch: Sketch) {
        assert_eq!(
            sketch.keys.len(),
            self.banding.bands as usize,
            "sketch of another banding"
        );
        self.remove(id);
        for &k in sketch.keys.iter() {
            match self.buckets.get(&k).copied() {
                // An id with the top bit set cannot stand alone.
                None if id & SHARED == 0 => {
                    self.buckets.insert(k, id);
                }
                None => {
                    let v = self.share(vec![id]);
                    self.buckets.insert(k, v);
                }
                Some(v) if v & SHARED != 0 => {
                    let list = &mut self.shared[(v & !SHARED) as usize];
                    // Two bands of one document with one key: listed once.
                    if list.last() != Some(&id) {
                        list.push(id);
                    }
                }
                Some(v) if v != id => {
                    let v = self.share(vec![v, id]);
                    self.buckets.insert(k, v);
                }
                Some(_) => {}
            }
        }
        self.sketches.insert(id, sketch);
    }

    /// Forget `id`; false if it was not there.
    pub fn remove(&mut self, id: u32) -> bool {
        self.take(id).is_some()
    }

    /// Forget `id`, returning its sketch.
    pub fn take(&mut self, id: u32) -> Option<Sketch> {
        let s = self.sketches.remove(&id)?;
        for k in s.keys.iter() {
            let Some(&v) = self.buckets.get(k) else {
                continue;
            };
            if v & SHARED == 0 {
                if v == id {
                    self.buckets.remove(k);
                }
                continue;
            }
            let at = (v & !SHARED) as usize;
            let list = &mut self.shared[at];
            list.retain(|&x| x != id);
            match list[..] {
                [] => {
                    self.buckets.remove(k);
                    self.free.push(at as u32);
                }
                [one] if one & SHARED == 0 => {
                    self.buckets.insert(*k, one);
                    self.shared[at] = Vec::new();
                    self.free.push(at as u32);
                }
                _ => {}
            }
        }
        Some(s)
    }

    /// The documents sharing a band key with `keys`, each once, ascending.
    pub fn query(&self, keys: &[u64], out: &mut Vec<u32>) {
        out.clear();
        for k in keys {
            match self.buckets.get(k) {
                Some(&v) if v & SHARED != 0 => {
                    out.extend_from_slice(&self.shared[(v & !SHARED) as usize]);
                }
                Some(&v) => out.push(v),
                None => {}
            }
        }
        out.sort_unstable();
        out.dedup();
    }
}
