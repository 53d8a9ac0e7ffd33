//! Rolling shingle fingerprints, one token (8 bytes) at a time.
//!
//! The fingerprint of a k-shingle is Rabin-64, initial state 0, over the 8k
//! bytes of its tokens' mixed fingerprints, big-endian (docs/algorithms.md
//! §1.6). The mix ([`compose`]) comes first because Rabin is linear and P is
//! sparse: a short token's fingerprint is its own bytes, so two shingles that
//! differ only in two adjacent short tokens collided whenever
//! clmul(Δa, x^4+x^3+x+1) = Δb (`font color 3d ffffff size 3d 5 8` and the
//! same ending `3 b`). Mixed, the differences are pseudo-random and such a
//! relation holds by chance only (2^-64). Rolling: append
//! the incoming token's 8 bytes, then remove the outgoing token's contribution
//! `fp_out·x^(64k) mod P` (append first, remove after, as §1.3).
//!
//! For k = 1, 2, 4 and 8 (8 is the default), x^(64k) mod P is sparse: x^64 ≡
//! x^4+x^3+x+1, and squaring a polynomial over GF(2) squares each of its terms,
//! so x^(64k) ≡ x^(4k) + x^(3k) + x^k + 1. The outgoing contribution is then
//! four shifted copies of `fp_out`, and its unreduced 128-bit sum joins
//! `f·x^64 + fp_in` before a single reduction. Other k use byte tables.

use super::polynomial::Polynomial;
use super::rabin::{ByteTables, append64, mulmod, x_pow};
use super::{fmix64, key};

/// A token fingerprint as it enters a shingle: a non-linear bijection keyed
/// by the seed (MurmurHash3's finaliser after adding `mix`, so it is not the
/// same function as the token hashes Hailstorm orders by, and text cannot be
/// built to collide under a seed it does not know).
#[inline(always)]
pub(crate) fn compose(fp: u64, mix: u64) -> u64 {
    fmix64(fp.wrapping_add(mix))
}

/// Rolls k-shingle fingerprints over token fingerprints.
#[derive(Clone)]
pub struct ShingleRoller {
    k: usize,
    /// This process's mix key ([`Polynomial::mix`]).
    ///
    /// [`Polynomial::mix`]: super::polynomial::Polynomial::mix
    mix: u64,
    /// `out[j][b] = (b·x^(8j))·x^(64k) mod P`: the outgoing token's contribution,
    /// one table per byte, as Broder's tables do for x^64; `None` when x^(64k)
    /// is sparse (k = 1, 2, 4, 8).
    out: Option<ByteTables>,
}

impl ShingleRoller {
    /// The roller of k-shingles under `poly`'s mix.
    pub fn new(poly: &Polynomial, k: usize) -> ShingleRoller {
        assert!(k >= 1, "k must be at least 1");
        let mix = poly.mix();
        if matches!(k, 1 | 2 | 4 | 8) {
            return ShingleRoller { k, mix, out: None };
        }
        // out is linear in b: build every entry from the 64 basis values
        // x^m·x^(64k), m = 0..64, each one `times x` from the previous.
        let mut basis = [0u64; 64];
        basis[0] = x_pow(64 * k as u64);
        for m in 1..64 {
            basis[m] = mulmod(basis[m - 1], 2);
        }
        ShingleRoller {
            k,
            mix,
            out: Some(ByteTables::from_basis(&basis)),
        }
    }

    /// The mix key token fingerprints pass through ([`Polynomial::mix`]).
    pub fn mix(&self) -> u64 {
        self.mix
    }

    /// `fp·x^(64k) mod P`: what token `fp` contributes when it has k tokens after it.
    #[inline]
    fn outgoing(&self, fp: u64) -> u64 {
        let Some(t) = &self.out else {
            let (hi, lo) = match self.k {
                1 => times_x64k::<1>(fp),
                2 => times_x64k::<2>(fp),
                4 => times_x64k::<4>(fp),
                _ => times_x64k::<8>(fp),
            };
            return append64(hi, lo);
        };
        t.times(fp)
    }

    /// The raw Rabin fingerprints (not finalised) of all k-shingles of `fps` into
    /// `out` (cleared first); none when there are fewer than k tokens.
    pub fn fingerprints(&self, fps: &[u64], out: &mut Vec<u64>) {
        self.roll(fps, out, |f| f);
    }

    /// The 62-bit keys of all k-shingles of `fps` into `out` (cleared first).
    pub fn keys(&self, fps: &[u64], out: &mut Vec<u64>) {
        self.roll(fps, out, key);
    }

    #[inline]
    fn roll(&self, fps: &[u64], out: &mut Vec<u64>, finish: impl Fn(u64) -> u64) {
        let mix = self.mix;
        match (self.k, &self.out) {
            (_, Some(_)) => roll(self.k, mix, fps, out, finish, |f, fp_in, fp_out| {
                append64(f, fp_in) ^ self.outgoing(fp_out)
            }),
            (1, None) => roll(1, mix, fps, out, finish, step_sparse::<1>),
            (2, None) => roll(2, mix, fps, out, finish, step_sparse::<2>),
            (4, None) => roll(4, mix, fps, out, finish, step_sparse::<4>),
            (_, None) => roll(8, mix, fps, out, finish, step_sparse::<8>),
        }
    }
}

/// `fp·x^(64K)` for K = 1, 2, 4 or 8, unreduced, as `(hi, lo)` = hi·x^64 + lo:
/// `fp·(x^(4K) + x^(3K) + x^K + 1)`, with `hi` below x^(4K).
#[inline(always)]
fn times_x64k<const K: u32>(fp: u64) -> (u64, u64) {
    let lo = fp ^ (fp << K) ^ (fp << (3 * K)) ^ (fp << (4 * K));
    let hi = (fp >> (64 - K)) ^ (fp >> (64 - 3 * K)) ^ (fp >> (64 - 4 * K));
    (hi, lo)
}

/// One rolling step for sparse x^(64K): `f·x^64 + fp_in + fp_out·x^(64K)`, all
/// three summed unreduced and reduced once.
#[inline(always)]
fn step_sparse<const K: u32>(f: u64, fp_in: u64, fp_out: u64) -> u64 {
    let (hi, lo) = times_x64k::<K>(fp_out);
    append64(f ^ hi, fp_in ^ lo)
}

/// The k-shingle fingerprints of `fps` (mixed with key `mix`), each through
/// `finish`, into `out` (cleared first); `step(f, fp_in, fp_out)` rolls the
/// fingerprint one token.
#[inline(always)]
fn roll(
    k: usize,
    mix: u64,
    fps: &[u64],
    out: &mut Vec<u64>,
    finish: impl Fn(u64) -> u64,
    step: impl Fn(u64, u64, u64) -> u64,
) {
    out.clear();
    if fps.len() < k {
        return;
    }
    let (first, rest) = fps.split_at(k);
    let mut f = first.iter().fold(0, |f, &fp| append64(f, compose(fp, mix)));
    out.reserve(rest.len() + 1);
    out.push(finish(f));
    // A zip of slices has an exact length: `extend` writes without a capacity
    // check per element.
    out.extend(rest.iter().zip(fps).map(|(&fp_in, &fp_out)| {
        f = step(f, compose(fp_in, mix), compose(fp_out, mix));
        finish(f)
    }));
}

#[cfg(test)]
mod tests {
    use super::super::polynomial::standard;
    use super::super::rabin::fingerprint;
    use super::super::{fmix64, key};
    use super::*;
    use proptest::prelude::*;

    fn direct(window: &[u64]) -> u64 {
        let bytes: Vec<u8> = window
            .iter()
            .flat_map(|&f| compose(f, standard().mix()).to_be_bytes())
            .collect();
        fingerprint(&bytes, 0)
    }

    #[test]
    fn x_64k_is_sparse_for_k_1_2_4_8() {
        for (k, c) in [(1, 0x1b), (2, 0x145), (4, 0x1_1011), (8, 0x1_0100_0101)] {
            assert_eq!(x_pow(64 * k), c, "k {k}");
            let roller = ShingleRoller::new(standard(), k as usize);
            assert!(roller.out.is_none());
            for fp in [1u64, 0x80, 1 << 63, u64::MAX, 0x0123_4567_89ab_cdef] {
                assert_eq!(roller.outgoing(fp), mulmod(fp, c), "k {k} fp {fp:#x}");
            }
        }
        assert!(ShingleRoller::new(standard(), 3).out.is_some());
    }

    #[test]
    fn outgoing_is_mulmod_by_x_64k() {
        for k in [1, 2, 3, 8, 13] {
            let r = ShingleRoller::new(standard(), k);
            let c = x_pow(64 * k as u64);
            for fp in [1u64, 0x80, 1 << 63, u64::MAX, 0x0123_4567_89ab_cdef] {
                assert_eq!(r.outgoing(fp), mulmod(fp, c), "k {k} fp {fp:#x}");
            }
        }
    }

    #[test]
    fn fewer_than_k_tokens_give_no_shingles() {
        let r = ShingleRoller::new(standard(), 3);
        let mut out = vec![42];
        r.keys(&[1, 2], &mut out);
        assert!(out.is_empty());
        r.keys(&[1, 2, 3], &mut out);
        assert_eq!(out.len(), 1);
        r.keys(&[], &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn k3_vectors_and_finaliser() {
        let fps: Vec<u64> = "the quick brown fox jumps over the lazy dog"
            .split(' ')
            .map(|t| fingerprint(t.as_bytes(), 1))
            .collect();
        let r = ShingleRoller::new(standard(), 3);
        let mut raw = Vec::new();
        r.fingerprints(&fps, &mut raw);
        assert_eq!(raw.len(), 7);
        for (i, &f) in raw.iter().enumerate() {
            assert_eq!(f, direct(&fps[i..i + 3]), "shingle {i}");
        }
        let mut keys = Vec::new();
        r.keys(&fps, &mut keys);
        assert_eq!(keys.len(), raw.len());
        for (&k, &f) in keys.iter().zip(&raw) {
            assert_eq!(k, fmix64(f) >> 2);
            assert!(k < 1 << 62);
            assert_ne!(k, f >> 2, "finaliser applied");
        }
        // Mixed tokens fill all 64 bits even for short words.
        assert!(raw.iter().any(|&f| f >> 60 != 0));
        assert!(keys.iter().any(|&k| k >> 54 != 0));
    }

    /// Rabin over the unmixed token fingerprints: how shingles were composed
    /// before the mix (the control of the collision tests).
    fn linear(window: &[u64]) -> u64 {
        let bytes: Vec<u8> = window.iter().flat_map(|f| f.to_be_bytes()).collect();
        fingerprint(&bytes, 0)
    }

    #[test]
    fn the_mail_markup_that_collided_no_longer_does() {
        let fps = |t: &str| crate::fingerprint::token_fps(standard(), t).fps;
        let a = fps("font color 3d ffffff size 3d 5 8");
        let b = fps("font color 3d ffffff size 3d 3 b");
        // "5 8" and "3 b": Δa = 0x06, Δb = 0x5a = clmul(0x06, 0x1b).
        assert_eq!(linear(&a), linear(&b), "the linear composition collides");
        let r = ShingleRoller::new(standard(), 8);
        let (mut ka, mut kb) = (Vec::new(), Vec::new());
        r.keys(&a, &mut ka);
        r.keys(&b, &mut kb);
        assert_ne!(ka, kb);
    }

    proptest! {
        /// Two k-shingles that differ in two adjacent tokens whose
        /// differences are related through P (the family that collides
        /// when tokens enter unmixed) get different keys.
        #[test]
        fn adjacent_tokens_related_through_p_do_not_collide(
            k in 2usize..10,
            window in proptest::collection::vec(any::<u64>(), 10),
            at in 0usize..9,
            da in 1u64..(1 << 56),
        ) {
            let at = at % (k - 1);
            let a = window[..k].to_vec();
            let mut b = a.clone();
            // Δb = Δa·x^64 mod P, so Δa·x^64 + Δb ≡ 0: the pair cancels.
            let db = mulmod(da, x_pow(64));
            b[at] ^= da;
            b[at + 1] ^= db;
            prop_assert_eq!(linear(&a), linear(&b));
            let r = ShingleRoller::new(standard(), k);
            let (mut ka, mut kb) = (Vec::new(), Vec::new());
            r.keys(&a, &mut ka);
            r.keys(&b, &mut kb);
            prop_assert_ne!(ka, kb);
        }
    }

    proptest! {
        #[test]
        fn rolling_equals_direct(
            fps in proptest::collection::vec(any::<u64>(), 0..40),
            k in 1usize..=12,
        ) {
            let r = ShingleRoller::new(standard(), k);
            let mut keys = Vec::new();
            r.keys(&fps, &mut keys);
            let expected: Vec<u64> = fps.windows(k).map(|w| key(direct(w))).collect();
            prop_assert_eq!(keys, expected);
        }
    }
}
