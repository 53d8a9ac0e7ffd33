//! Rabin fingerprints (seed 001, ALGORITHMS §1) of tokens and shingles.
//!
//! Token fingerprints are Rabin-64 (P = x^64+x^4+x^3+x+1, initial state 1) of the
//! token's key text. Shingle fingerprints are Rabin-64 (initial state 0) of the k
//! token fingerprints, big-endian, rolled one token at a time. Every use of the
//! bits goes through the bijective finaliser `fmix64` (§1.6): raw Rabin values of
//! short strings leave the top bits empty.

pub mod rabin;
pub mod shingle;

pub use rabin::{POLY, Rabin};
pub use shingle::ShingleRoller;

use std::ops::Range;

/// MurmurHash3's 64-bit finaliser: a bijection that spreads every input bit.
#[inline]
pub fn fmix64(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^= x >> 33;
    x
}

/// The 62-bit key of a Rabin value: what buckets, modulo tests, minima and the
/// table all use (seed 003 speaks of 62-bit fingerprints).
#[inline]
pub fn key(rabin: u64) -> u64 {
    fmix64(rabin) >> 2
}

/// The top byte of a 62-bit key (bits 54..61): the "first byte" of seed 003's
/// expansion and bridging checks.
#[inline]
pub fn top_byte(key: u64) -> u8 {
    (key >> 54) as u8
}

/// Rabin-64 fingerprint, initial state 1, of a token's key text.
pub fn token_fp(key_text: &[u8]) -> u64 {
    let _ = key_text;
    todo!("fingerprint::token_fp")
}

/// Tokens of one prepared text: spans and fingerprints, computed in one pass.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TokenFps {
    /// Byte span of each token in the prepared text.
    pub spans: Vec<Range<u32>>,
    /// Rabin-64 fingerprint of each token's key text (not finalised).
    pub fps: Vec<u64>,
}

/// Tokenize `text` and fingerprint every token.
pub fn token_fps(text: &str) -> TokenFps {
    let _ = text;
    todo!("fingerprint::token_fps")
}

/// The finalised token hashes `fmix64(fp)`, used for ordering (Hailstorm) and
/// hash-breaking.
pub fn token_hashes(fps: &[u64], out: &mut Vec<u64>) {
    out.clear();
    out.extend(fps.iter().map(|&f| fmix64(f)));
}

/// The 62-bit keys of all k-shingles of a token sequence (n-k+1 of them, none
/// when n < k), each equal to `key(rabin of the 8k bytes of the k fps)`.
pub fn shingle_keys(fps: &[u64], k: usize, out: &mut Vec<u64>) {
    ShingleRoller::new(k).keys(fps, out)
}

/// The 62-bit key of a segment (hash-breaking): Rabin-64, initial state 1, over
/// the segment's token fingerprints, big-endian, then finalised.
pub fn segment_key(fps: &[u64]) -> u64 {
    let _ = fps;
    todo!("fingerprint::segment_key")
}
