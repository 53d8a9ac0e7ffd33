//! A hash map keyed by shingle keys, which are already uniformly mixed: the
//! hasher only spreads them once more instead of SipHashing them.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// SplitMix64: a small, well-mixed PRNG step for Random eviction.
pub fn splitmix64(state: u64) -> u64 {
    let mut z = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Keys are already uniformly mixed 62-bit values: hashing them again is waste.
#[derive(Default)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        // Spread the top bits down: hashbrown takes its group tag from the top 7
        // bits and its index from the low ones.
        self.0 = n ^ (n >> 31);
    }
}

/// A map keyed by 62-bit keys, without rehashing them.
pub type KeyMap<V> = HashMap<u64, V, BuildHasherDefault<KeyHasher>>;
