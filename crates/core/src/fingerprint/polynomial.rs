//! The irreducible polynomial of token fingerprints, drawn from a seed
//! (docs/algorithms.md §1.4, §1.5).
//!
//! Rabin's bound (two distinct strings of m bits share a fingerprint with
//! probability at most m/2^64) holds for a P drawn at random. A fixed sparse
//! P makes collisions a matter of structure: under x^64 + x^4 + x^3 + x + 1
//! the 9-byte tokens `bhellowoa` and `chellowoz` share a fingerprint (the
//! first bytes differ by x^64 ≡ 0x1B, the last ones by 0x1B). So every token
//! of 8 bytes or more is fingerprinted under a dense P chosen from a seed:
//! the default seed gives everyone the same P (results are reproducible),
//! another seed another P. Shorter tokens are their own bytes under any P.

use std::sync::OnceLock;

use super::fmix64;
use super::keymap::splitmix64;
use super::rabin::{ByteTables, clmul, times_x};

/// The seed of the polynomial everyone gets by default.
pub const DEFAULT_SEED: u64 = 0;

/// 2^64 / φ, odd: SplitMix64's increment.
const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// An irreducible P = x^64 + `low` with Broder's tables for it.
#[derive(Clone)]
pub struct Polynomial {
    seed: u64,
    low: u64,
    /// Multiplication by x^64 mod P (Broder 1993).
    x64: ByteTables,
    /// `x^(8n) mod P` for n = 0..=8: a token's leading 1 above its n bytes.
    leading_one: [u64; 9],
}

impl Polynomial {
    /// The first dense irreducible polynomial of `seed`'s SplitMix64 stream:
    /// a candidate's low word has its constant term (else x divides P) and
    /// 24 to 40 of its 64 bits set, so no sparse P, which would give text a
    /// structure to collide by, is drawn. About one candidate in 64 is
    /// irreducible; the search takes microseconds.
    pub fn from_seed(seed: u64) -> Polynomial {
        // SplitMix64's own stream: state steps by the golden ratio, so
        // nearby seeds draw unrelated candidates.
        let mut state = seed;
        loop {
            let low = splitmix64(state) | 1;
            state = state.wrapping_add(GOLDEN);
            if !(24..=40).contains(&low.count_ones()) {
                continue;
            }
            let p = Polynomial::with_low(seed, low);
            if p.is_irreducible() {
                return p;
            }
        }
    }

    /// P = x^64 + `low` (not checked for irreducibility).
    fn with_low(seed: u64, low: u64) -> Polynomial {
        // x^m·x^64 mod P, m = 0..64.
        let mut basis = [low; 64];
        for m in 1..64 {
            basis[m] = times_x(basis[m - 1], 64, low);
        }
        let mut leading_one = [0u64; 9];
        for (n, one) in leading_one.iter_mut().enumerate().take(8) {
            *one = 1 << (8 * n);
        }
        leading_one[8] = low;
        Polynomial {
            seed,
            low,
            x64: ByteTables::from_basis(&basis),
            leading_one,
        }
    }

    /// The seed this polynomial was drawn from.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// P without its x^64 term.
    pub fn low(&self) -> u64 {
        self.low
    }

    /// [`Polynomial::low`] as lineage writes it (the index's
    /// `meta.polynomial`, `scan`'s parameters): 0x and 16 hex digits.
    pub fn hex(&self) -> String {
        format!("{:#018x}", self.low)
    }

    /// The key of the mix token fingerprints pass through before a shingle
    /// is composed (docs/algorithms.md §1.6): γ ⊕ fmix64(seed), γ the golden
    /// ratio. fmix64 is a bijection with fmix64(0) = 0, so every seed has its
    /// own key and seed 0 has γ.
    pub fn mix(&self) -> u64 {
        GOLDEN ^ fmix64(self.seed)
    }

    /// `f·x^64 + word mod P`: eight table lookups, one per byte of `f`.
    #[inline(always)]
    pub(crate) fn append64(&self, f: u64, word: u64) -> u64 {
        word ^ self.x64.times(f)
    }

    /// `f·x^(8n) + v mod P` for n in 1..8 and `v` below 2^(8n): the bits of
    /// `f` shifted out, below 2^56, times x^64.
    #[inline]
    pub(crate) fn append_short(&self, f: u64, v: u64, n: usize) -> u64 {
        debug_assert!((1..8).contains(&n));
        let s = 8 * n as u32;
        self.append64(f >> (64 - s), (f << s) ^ v)
    }

    /// `x^(8n) mod P`, n = 0..=8: the leading 1 of a token of n bytes.
    #[inline(always)]
    pub(crate) fn leading_one(&self, n: usize) -> u64 {
        self.leading_one[n]
    }

    /// The Rabin fingerprint of `bytes` (first bit highest) with initial
    /// state `init`: 1 for a string of any length, 0 for fixed-length windows.
    pub fn fingerprint(&self, bytes: &[u8], init: u64) -> u64 {
        let head_len = bytes.len() % 8;
        let (head, body) = bytes.split_at(head_len);
        let mut f = init;
        if head_len > 0 {
            let v = head.iter().fold(0u64, |v, &b| (v << 8) | u64::from(b));
            f = self.append_short(f, v, head_len);
        }
        for chunk in body.chunks_exact(8) {
            f = self.append64(f, u64::from_be_bytes(chunk.try_into().expect("8 bytes")));
        }
        f
    }

    /// `a·b mod P`.
    fn mulmod(&self, a: u64, b: u64) -> u64 {
        let p = clmul(a, b);
        self.append64((p >> 64) as u64, p as u64)
    }

    /// Rabin's test for degree 64 = 2^6, whose only prime divisor is 2: P is
    /// irreducible iff x^(2^64) ≡ x (mod P) and gcd(P, x^(2^32) − x) = 1.
    fn is_irreducible(&self) -> bool {
        let x = 2u64;
        let mut u = x;
        for _ in 0..32 {
            u = self.mulmod(u, u);
        }
        if gcd((1u128 << 64) | u128::from(self.low), u128::from(u ^ x)) != 1 {
            return false;
        }
        for _ in 0..32 {
            u = self.mulmod(u, u);
        }
        u == x
    }
}

/// The greatest common divisor of two polynomials of degree <= 64 over GF(2).
fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        let db = 127 - b.leading_zeros();
        while a != 0 && 127 - a.leading_zeros() >= db {
            a ^= b << (127 - a.leading_zeros() - db);
        }
        std::mem::swap(&mut a, &mut b);
    }
    a
}

/// The polynomial of [`DEFAULT_SEED`], drawn once: for tests and tools that
/// have no seed of their own. Whoever has a configured seed draws its own
/// with [`Polynomial::from_seed`] and passes it on.
pub fn standard() -> &'static Polynomial {
    static STANDARD: OnceLock<Polynomial> = OnceLock::new();
    STANDARD.get_or_init(|| Polynomial::from_seed(DEFAULT_SEED))
}

#[cfg(test)]
mod tests {
    use super::super::rabin::{POLY, is_irreducible};
    use super::*;
    use proptest::prelude::*;

    /// Long division of (init ‖ bytes) by P, bit by bit: the definition.
    fn reference(bytes: &[u8], init: u64, low: u64) -> u64 {
        let p = (1u128 << 64) | u128::from(low);
        let reduce = |mut a: u128| {
            while a >> 64 != 0 {
                a ^= p << (63 - a.leading_zeros());
            }
            a
        };
        let f = bytes
            .iter()
            .fold(u128::from(init), |f, &b| reduce((f << 8) | u128::from(b)));
        f as u64
    }

    #[test]
    fn seeds_draw_dense_irreducible_polynomials() {
        let mut lows = Vec::new();
        for seed in 0..40 {
            let p = Polynomial::from_seed(seed);
            // Ben-Or's test, written independently (rabin.rs).
            assert!(is_irreducible(64, p.low()), "seed {seed}: {:#x}", p.low());
            assert!((24..=40).contains(&p.low().count_ones()));
            assert_eq!(p.seed(), seed);
            assert_eq!(Polynomial::from_seed(seed).low(), p.low(), "deterministic");
            lows.push((p.low(), p.mix()));
        }
        let (mut polys, mut mixes): (Vec<u64>, Vec<u64>) = lows.into_iter().unzip();
        for v in [&mut polys, &mut mixes] {
            v.sort_unstable();
            v.dedup();
            assert_eq!(v.len(), 40, "every seed its own polynomial and mix");
        }
    }

    #[test]
    fn rabins_test_agrees_with_ben_ors() {
        // Dense candidates, irreducible or not, and the known sparse P.
        let mut agree = (0, 0);
        for i in 0..400u64 {
            let low = splitmix64(i ^ 0xabcdef) | 1;
            let fast = Polynomial::with_low(0, low).is_irreducible();
            assert_eq!(fast, is_irreducible(64, low), "{low:#x}");
            if fast { agree.0 += 1 } else { agree.1 += 1 }
        }
        assert!(agree.0 > 0 && agree.1 > 0, "both kinds seen: {agree:?}");
        assert!(Polynomial::with_low(0, POLY).is_irreducible());
        assert!(!Polynomial::with_low(0, 1).is_irreducible(), "x^64 + 1");
    }

    #[test]
    fn the_default_polynomial_is_fixed() {
        // Changing it changes every long token's key: a new index format.
        assert_eq!(Polynomial::from_seed(DEFAULT_SEED).low(), DEFAULT_LOW);
        assert_eq!(standard().seed(), DEFAULT_SEED);
        assert_eq!(standard().mix(), GOLDEN, "the mix of the sparse era");
        // As an index records it: every digit, so it compares as text.
        assert_eq!(standard().hex(), "0xe255b237b8bb18fb");
        assert_eq!(Polynomial::with_low(0, 0x1b).hex(), "0x000000000000001b");
    }

    /// What [`Polynomial::from_seed`] gives for [`DEFAULT_SEED`].
    const DEFAULT_LOW: u64 = 0xe255_b237_b8bb_18fb;

    #[test]
    fn the_sparse_family_collides_under_the_fixed_p_only() {
        let sparse = Polynomial::with_low(0, POLY);
        let a = sparse.fingerprint(b"bhellowoa", 1);
        assert_eq!(a, sparse.fingerprint(b"chellowoz", 1), "the control");
        let dense = standard();
        assert_ne!(
            dense.fingerprint(b"bhellowoa", 1),
            dense.fingerprint(b"chellowoz", 1)
        );
    }

    proptest! {
        #[test]
        fn fingerprint_is_long_division(
            seed in 0u64..1000,
            bytes in proptest::collection::vec(any::<u8>(), 0..40),
            init in prop_oneof![Just(0u64), Just(1u64), any::<u64>()],
        ) {
            let p = Polynomial::from_seed(seed);
            prop_assert_eq!(p.fingerprint(&bytes, init), reference(&bytes, init, p.low()));
        }

        #[test]
        fn leading_one_is_x_to_the_8n(seed in 0u64..100, n in 0usize..=8) {
            let p = Polynomial::from_seed(seed);
            prop_assert_eq!(p.leading_one(n), reference(&vec![0; n], 1, p.low()));
        }
    }
}
