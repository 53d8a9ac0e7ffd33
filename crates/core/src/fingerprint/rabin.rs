//! Rabin fingerprints over GF(2) (docs/algorithms.md §1).
//!
//! A byte string s is read as a polynomial S(x) over GF(2), first bit highest;
//! its fingerprint is S(x) mod P(x) for an irreducible P. Bit i of a `u64` is the
//! coefficient of x^i. Tokens are fingerprinted under the seeded dense P of
//! [`Polynomial`] (ASCII fast paths here). Shingles and segments compose mixed
//! token fingerprints under the fixed sparse `POLY`, whose free functions
//! (`append64`, `mulmod`) are a few shifts rather than Broder's table
//! lookups (the tables remain as a check in the tests). `Rabin` handles any
//! degree from 8 to 64 one byte at a time.

use super::polynomial::Polynomial;

/// P = x^64 + x^4 + x^3 + x + 1 without its x^64 term (docs/algorithms.md §1.4).
pub(crate) const POLY: u64 = 0x1B;

/// `a·x mod P` for a polynomial of degree < `degree` (bits above it clear).
pub(crate) const fn times_x(a: u64, degree: u32, poly: u64) -> u64 {
    let top = (a >> (degree - 1)) & 1;
    let shifted = if degree == 64 {
        a << 1
    } else {
        (a << 1) & ((1u64 << degree) - 1)
    };
    shifted ^ (poly & 0u64.wrapping_sub(top))
}

/// `T[j] = j(x)·x^degree mod P` for every byte j (Broder's 8-bit table).
#[cfg(test)]
const fn byte_table(degree: u32, poly: u64) -> [u64; 256] {
    // X[i] = x^(degree+i) mod P; X[0] is P without its top term.
    let mut x = [0u64; 8];
    x[0] = poly;
    let mut i = 1;
    while i < 8 {
        x[i] = times_x(x[i - 1], degree, poly);
        i += 1;
    }
    let mut t = [0u64; 256];
    let mut j: usize = 1;
    while j < 256 {
        // T is linear in j: T[j] = T[j without its lowest set bit] ^ X[that bit].
        let low = j.trailing_zeros() as usize;
        t[j] = t[j & (j - 1)] ^ x[low];
        j += 1;
    }
    t
}

/// `TABLES[j][b] = b(x)·x^(8j)·x^64 mod P`: the contribution of byte j of `f` when
/// `f` is shifted by 64 bits (Broder's tables; `append64` does without them).
#[cfg(test)]
static TABLES: [[u64; 256]; 8] = {
    let mut tables = [[0u64; 256]; 8];
    tables[0] = byte_table(64, POLY);
    let mut j = 1;
    while j < 8 {
        let mut b = 0;
        while b < 256 {
            // b·x^(8j+64) = (b·x^(8(j-1)+64))·x^8: shift the previous table's entry
            // by one byte and reduce its overflow with T_0.
            let prev = tables[j - 1][b];
            tables[j][b] = (prev << 8) ^ tables[0][(prev >> 56) as usize];
            b += 1;
        }
        j += 1;
    }
    tables
};

/// Appends one byte: `f·x^8 + byte mod P` (docs/algorithms.md §1.2, AOSP's form).
#[inline]
#[cfg(test)]
pub(crate) fn append8(f: u64, byte: u8) -> u64 {
    (f << 8) ^ u64::from(byte) ^ TABLES[0][(f >> 56) as usize]
}

/// Appends eight bytes, `word` big-endian: `f·x^64 + word mod P`.
///
/// P is sparse, x^64 ≡ x^4+x^3+x+1 = `POLY`, so this is `f·POLY` reduced once
/// more, with shifts instead of Broder's eight tables: the product's low word is
/// `f ^ f<<1 ^ f<<3 ^ f<<4`, and its high word, the bits shifted out, depends
/// only on the top four bits of `f`; it has degree < 4, so its own product with
/// `POLY` (degree < 8) needs no further reduction and comes from a 16-entry
/// table.
#[inline]
pub(crate) fn append64(f: u64, word: u64) -> u64 {
    word ^ f ^ (f << 1) ^ (f << 3) ^ (f << 4) ^ OVERFLOW[(f >> 60) as usize]
}

/// `OVERFLOW[g]` = `o·POLY` for the bits `o` that `f·POLY` carries past x^64 when
/// the top four bits of `f` are `g`: `f<<1`, `f<<3` and `f<<4` shift out the top
/// one, three and four bits, that is `g>>3`, `g>>1` and `g`.
static OVERFLOW: [u64; 16] = {
    let mut t = [0u64; 16];
    let mut g = 0;
    while g < 16 {
        let o = (g >> 3) ^ (g >> 1) ^ g;
        t[g as usize] = o ^ (o << 1) ^ (o << 3) ^ (o << 4);
        g += 1;
    }
    t
};

/// [`append64`] through Broder's tables (eight independent lookups), kept as an
/// independent check of the shift form.
#[cfg(test)]
fn append64_tables(f: u64, word: u64) -> u64 {
    word ^ lookup(&TABLES, f)
}

/// Multiplication by a constant c mod P, one lookup per byte (Broder's
/// tables): `t[j][b] = b(x)·x^(8j)·c mod P`.
#[derive(Clone)]
pub(crate) struct ByteTables(Box<[[u64; 256]; 8]>);

impl ByteTables {
    /// From the basis `x^m·c mod P`, m = 0..64: each entry is linear in its
    /// byte, the sum of the basis values of its bits.
    pub(crate) fn from_basis(basis: &[u64; 64]) -> ByteTables {
        let mut t = Box::new([[0u64; 256]; 8]);
        for (j, table) in t.iter_mut().enumerate() {
            for b in 1..256usize {
                table[b] = table[b & (b - 1)] ^ basis[8 * j + b.trailing_zeros() as usize];
            }
        }
        ByteTables(t)
    }

    /// `f·c mod P`.
    #[inline(always)]
    pub(crate) fn times(&self, f: u64) -> u64 {
        lookup(&self.0, f)
    }
}

/// The sum of `t[j][byte j of f]`: a product through Broder's tables.
#[inline(always)]
fn lookup(t: &[[u64; 256]; 8], f: u64) -> u64 {
    let b = f.to_le_bytes();
    t[0][b[0] as usize]
        ^ t[1][b[1] as usize]
        ^ t[2][b[2] as usize]
        ^ t[3][b[3] as usize]
        ^ t[4][b[4] as usize]
        ^ t[5][b[5] as usize]
        ^ t[6][b[6] as usize]
        ^ t[7][b[7] as usize]
}

/// Carry-less product of two polynomials of degree < 64.
#[inline]
pub(crate) fn clmul(a: u64, b: u64) -> u128 {
    let a = u128::from(a);
    let mut acc = 0u128;
    for i in 0..64 {
        let bit = u128::from((b >> i) & 1);
        acc ^= (a << i) & 0u128.wrapping_sub(bit);
    }
    acc
}

/// `a(x)·b(x) mod P`.
#[inline]
pub(crate) fn mulmod(a: u64, b: u64) -> u64 {
    let p = clmul(a, b);
    // hi·x^64 + lo is exactly what `append64(hi, lo)` reduces.
    append64((p >> 64) as u64, p as u64)
}

/// `x^n mod P`.
pub(crate) fn x_pow(n: u64) -> u64 {
    // Square-and-multiply on the exponent, high bit first.
    let mut r = 1u64;
    for i in (0..64).rev() {
        r = mulmod(r, r);
        if (n >> i) & 1 == 1 {
            r = times_x(r, 64, POLY);
        }
    }
    r
}

/// The Rabin fingerprint of `bytes` (MSB first) under `POLY` with initial state
/// `init`: 1 for a string of any length (Rabin's leading 1 bit), 0 for
/// fixed-length windows.
#[inline]
pub fn fingerprint(bytes: &[u8], init: u64) -> u64 {
    let head_len = bytes.len() % 8;
    let (head, body) = bytes.split_at(head_len);
    let mut f = init;
    if head_len > 0 {
        f = append_short(f, short_be(head), head_len);
    }
    for chunk in body.chunks_exact(8) {
        let word = u64::from_be_bytes(chunk.try_into().expect("chunk of 8"));
        f = append64(f, word);
    }
    f
}

/// `f·x^(8n) + v mod P` for `n` in 1..8 and `v` below 2^(8n): the bits of `f`
/// shifted out, `hi` (below 2^56), times x^64 ≡ `POLY` stay below 2^60, so one
/// product with `POLY` reduces them.
#[inline]
fn append_short(f: u64, v: u64, n: usize) -> u64 {
    debug_assert!((1..8).contains(&n));
    let s = 8 * n as u32;
    let hi = f >> (64 - s);
    (f << s) ^ v ^ hi ^ (hi << 1) ^ (hi << 3) ^ (hi << 4)
}

/// `0x20` in every byte: OR-ing it into an ASCII letter or digit lowercases it.
const LOWER: u64 = 0x2020_2020_2020_2020;

/// The token fingerprint (Rabin under `p`, initial state 1) of the ASCII
/// lowercase of `bytes[span]`, all of which are ASCII letters or digits. Reads
/// up to 8 bytes from `span.start` even past the span, when `bytes` has them.
#[inline(always)]
pub(crate) fn ascii_alnum_fingerprint(
    p: &Polynomial,
    bytes: &[u8],
    span: std::ops::Range<usize>,
) -> u64 {
    let len = span.end - span.start;
    if len <= 16
        && let Some(chunk) = bytes.get(span.start..span.start + 8)
    {
        let first = u64::from_be_bytes(chunk.try_into().expect("8 bytes")) | LOWER;
        if len <= 8 {
            return short_ascii_fingerprint(p, first, len);
        }
        // Up to 16 bytes: the first len − 8 as a short token, then the last 8
        // as one word (`fingerprint` takes the odd bytes first too).
        let last = &bytes[span.end - 8..span.end];
        let last = u64::from_be_bytes(last.try_into().expect("8 bytes")) | LOWER;
        return p.append64(short_ascii_fingerprint(p, first, len - 8), last);
    }
    ascii_alnum_fingerprint_long(p, &bytes[span])
}

/// The token fingerprint of the first `len` bytes (1..=8) of `word`, big-endian:
/// shift them down and put the leading 1 above them (`x^64 mod P` when `len`
/// is 8).
#[inline(always)]
fn short_ascii_fingerprint(p: &Polynomial, word: u64, len: usize) -> u64 {
    (word >> (64 - 8 * len)) ^ p.leading_one(len)
}

/// [`ascii_alnum_fingerprint`] of a whole slice: tokens longer than 16 bytes
/// or within 8 bytes of the end of the text.
#[inline(never)]
fn ascii_alnum_fingerprint_long(p: &Polynomial, token: &[u8]) -> u64 {
    let head_len = token.len() % 8;
    let (head, body) = token.split_at(head_len);
    let mut f = 1;
    if head_len > 0 {
        let v = short_be(head) | (LOWER >> (64 - 8 * head_len));
        f = (1 << (8 * head_len)) | v;
    }
    for chunk in body.chunks_exact(8) {
        let word = u64::from_be_bytes(chunk.try_into().expect("chunk of 8"));
        f = p.append64(f, word | LOWER);
    }
    f
}

/// The big-endian value of 1 to 7 bytes, from overlapping loads instead of a
/// loop whose trip count would mispredict on every token.
#[inline]
fn short_be(b: &[u8]) -> u64 {
    let n = b.len();
    debug_assert!((1..8).contains(&n));
    if n >= 4 {
        // Bytes 0..4 and n-4..n cover all; shared bytes land on the same bits.
        let hi = u64::from(u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
        let lo = u64::from(u32::from_be_bytes([b[n - 4], b[n - 3], b[n - 2], b[n - 1]]));
        (hi << (8 * (n - 4))) | lo
    } else {
        let (first, mid, last) = (u64::from(b[0]), u64::from(b[n / 2]), u64::from(b[n - 1]));
        (first << (8 * (n - 1))) | (mid << (8 * (n - 1 - n / 2))) | last
    }
}

/// A Rabin fingerprinter for P = x^degree + `poly`, any degree from 8 to 64,
/// one byte at a time (LBFS's form for degree < 64, docs/algorithms.md §1.2).
///
/// The engine uses the faster free functions with the fixed `POLY`; this type is
/// for other polynomials (e.g. Abdel-Hamid et al. 2009's 62-bit fingerprints).
#[derive(Clone, Debug)]
#[cfg(test)]
pub(crate) struct Rabin {
    degree: u32,
    poly: u64,
    mask: u64,
    table: [u64; 256],
}

#[cfg(test)]
impl Rabin {
    /// The degree-64 fingerprinter with `POLY`.
    #[cfg(test)]
    pub(crate) const STANDARD: Rabin = Rabin::new(64, POLY);

    /// P = x^degree + `poly`; `poly` holds the lower terms (bits below `degree`).
    /// P should be irreducible (see [`is_irreducible`]); this is not checked.
    #[cfg(test)]
    pub(crate) const fn new(degree: u32, poly: u64) -> Rabin {
        assert!(degree >= 8 && degree <= 64, "degree must be in 8..=64");
        let mask = if degree == 64 {
            u64::MAX
        } else {
            (1u64 << degree) - 1
        };
        assert!(
            poly & !mask == 0,
            "poly must have no bits at or above degree"
        );
        Rabin {
            degree,
            poly,
            mask,
            table: byte_table(degree, poly),
        }
    }

    /// Appends one byte: `f·x^8 + byte mod P`, for `f` of degree < `degree`.
    #[inline]
    #[cfg(test)]
    pub(crate) fn append8(&self, f: u64, byte: u8) -> u64 {
        (((f << 8) | u64::from(byte)) & self.mask) ^ self.table[(f >> (self.degree - 8)) as usize]
    }

    /// The fingerprint of `bytes` with initial state `init` (reduced first).
    #[cfg(test)]
    pub fn fingerprint(&self, bytes: &[u8], init: u64) -> u64 {
        let init = Poly::new(u128::from(init)).rem(self.modulus()).bits as u64;
        bytes.iter().fold(init, |f, &b| self.append8(f, b))
    }

    #[cfg(test)]
    fn modulus(&self) -> Poly {
        Poly::new((1u128 << self.degree) | u128::from(self.poly))
    }
}

/// Whether P = x^degree + `low` is irreducible over GF(2), for `degree` in 1..=64
/// and `low` below x^degree. Ben-Or's test (docs/algorithms.md §1.5, LBFS
/// `polyirreducible`): P has no factor of degree i iff gcd(P, x^(2^i) − x) = 1.
#[cfg(test)]
pub(crate) fn is_irreducible(degree: u32, low: u64) -> bool {
    assert!((1..=64).contains(&degree), "degree must be in 1..=64");
    assert!(
        degree == 64 || low >> degree == 0,
        "low must have no bits at or above degree"
    );
    let p = Poly::new((1u128 << degree) | u128::from(low));
    let x = Poly::new(0b10);
    let mut u = x;
    for _ in 1..=degree / 2 {
        u = u.mulmod(u, p);
        if p.gcd(u.add(x)).bits != 1 {
            return false;
        }
    }
    true
}

/// A polynomial over GF(2) of degree < 128 (bit i = coefficient of x^i); slow,
/// bit-by-bit arithmetic for tests and setup, not for the hot path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg(test)]
struct Poly {
    bits: u128,
}

#[cfg(test)]
impl Poly {
    #[cfg(test)]
    fn new(bits: u128) -> Poly {
        Poly { bits }
    }

    /// Degree, with deg(0) = -1.
    #[cfg(test)]
    fn degree(self) -> i32 {
        127 - self.bits.leading_zeros() as i32
    }

    #[cfg(test)]
    fn add(self, other: Poly) -> Poly {
        Poly::new(self.bits ^ other.bits)
    }

    #[cfg(test)]
    fn rem(self, m: Poly) -> Poly {
        let dm = m.degree();
        assert!(dm >= 0, "division by zero polynomial");
        let mut a = self.bits;
        loop {
            let da = 127 - a.leading_zeros() as i32;
            if da < dm {
                return Poly::new(a);
            }
            a ^= m.bits << (da - dm);
        }
    }

    /// `self·other mod m`, both of degree < deg m <= 64.
    #[cfg(test)]
    fn mulmod(self, other: Poly, m: Poly) -> Poly {
        let mut acc = Poly::new(0);
        let mut a = self;
        let mut b = other.bits;
        while b != 0 {
            if b & 1 == 1 {
                acc = acc.add(a);
            }
            a = Poly::new(a.bits << 1).rem(m);
            b >>= 1;
        }
        acc
    }

    #[cfg(test)]
    fn gcd(self, other: Poly) -> Poly {
        let (mut a, mut b) = (self, other);
        while b.bits != 0 {
            let r = a.rem(b);
            a = b;
            b = r;
        }
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Direct polynomial division of (init ‖ bytes) by x^degree + poly: the
    /// definition of §1.1, independent of the tables.
    fn reference(bytes: &[u8], init: u64, degree: u32, poly: u64) -> u64 {
        let m = Poly::new((1u128 << degree) | u128::from(poly));
        let mut f = Poly::new(u128::from(init)).rem(m);
        for &b in bytes {
            f = Poly::new((f.bits << 8) | u128::from(b)).rem(m);
        }
        f.bits as u64
    }

    /// §1.3: a W-byte window, append first and then remove the outgoing byte
    /// with U[b] = b·x^(8W) mod P.
    struct ByteWindow {
        width: usize,
        out: [u64; 256],
    }

    impl ByteWindow {
        fn new(width: usize) -> ByteWindow {
            let shift = (0..width).fold(1, |f, _| append8(f, 0)); // x^(8W) mod P
            let mut out = [0u64; 256];
            for (b, u) in out.iter_mut().enumerate() {
                *u = mulmod(b as u64, shift);
            }
            ByteWindow { width, out }
        }

        /// The plain (initial state 0) fingerprint of every full window.
        fn rolling(&self, bytes: &[u8]) -> Vec<u64> {
            let mut f = 0;
            let mut all = Vec::new();
            for (i, &b) in bytes.iter().enumerate() {
                f = append8(f, b);
                if i >= self.width {
                    f ^= self.out[bytes[i - self.width] as usize];
                }
                if i + 1 >= self.width {
                    all.push(f);
                }
            }
            all
        }
    }

    #[test]
    fn table_vectors() {
        assert_eq!(&TABLES[0][0..4], &[0, 0x1b, 0x36, 0x2d]);
        assert_eq!(TABLES[0][255], 0x909);
        assert_eq!(Rabin::STANDARD.table, TABLES[0]);
    }

    #[test]
    fn wide_tables_match_definition() {
        for j in 0..8u32 {
            for b in [1u8, 2, 3, 0x80, 0xa5, 0xff] {
                let shifted = Poly::new(u128::from(b) << (8 * j + 64));
                let expected = shifted.rem(Poly::new((1u128 << 64) | u128::from(POLY)));
                assert_eq!(
                    TABLES[j as usize][b as usize], expected.bits as u64,
                    "T_{j}[{b}]"
                );
            }
        }
    }

    #[test]
    fn x128_mod_p() {
        assert_eq!(x_pow(128), 0x145);
        assert_eq!(mulmod(1 << 63, 1 << 63), x_pow(126));
        assert_eq!(mulmod(x_pow(64), x_pow(64)), 0x145);
        assert_eq!(x_pow(64), POLY);
        assert_eq!(x_pow(0), 1);
        assert_eq!(x_pow(5), 32);
    }

    #[test]
    fn abc_vectors() {
        assert_eq!(fingerprint(b"abc", 0), 0x616263);
        assert_eq!(fingerprint(b"abc", 1), 0x1616263);
        assert_eq!(Rabin::STANDARD.fingerprint(b"abc", 1), 0x1616263);
    }

    #[test]
    fn hello_world_vectors() {
        assert_eq!(fingerprint(b"hello world", 0), 0x6c6f20776a0fbe70);
        assert_eq!(fingerprint(b"hello world", 1), 0x6c6f2077710fbe70);
        assert_eq!(
            Rabin::STANDARD.fingerprint(b"hello world", 1),
            0x6c6f2077710fbe70
        );
        assert_eq!(reference(b"hello world", 1, 64, POLY), 0x6c6f2077710fbe70);
    }

    #[test]
    fn degree_62_vector() {
        let r = Rabin::new(62, 0x4000000000000069 & ((1 << 62) - 1));
        assert_eq!(r.fingerprint(b"hello world", 1), 0x2c6f20769b888e3d);
        assert_eq!(reference(b"hello world", 1, 62, 0x69), 0x2c6f20769b888e3d);
    }

    #[test]
    fn rolling_window_vector() {
        let text = b"The quick brown fox jumps over the lazy dog";
        let window = ByteWindow::new(16);
        let rolled = window.rolling(text);
        assert_eq!(rolled.len(), text.len() - 15);
        let last = &text[text.len() - 16..];
        assert_eq!(last, b"ver the lazy dog");
        assert_eq!(*rolled.last().unwrap(), 0x23b25f1d5919bb6b);
        for (i, &f) in rolled.iter().enumerate() {
            assert_eq!(f, fingerprint(&text[i..i + 16], 0), "window {i}");
        }
    }

    #[test]
    fn shingle_vectors_k3() {
        let fps: Vec<u64> = "the quick brown fox jumps over the lazy dog"
            .split(' ')
            .map(|t| fingerprint(t.as_bytes(), 1))
            .collect();
        assert_eq!(fps[0], 0x1746865);
        let shingles: Vec<u64> = fps
            .windows(3)
            .map(|w| {
                let bytes: Vec<u8> = w.iter().flat_map(|f| f.to_be_bytes()).collect();
                fingerprint(&bytes, 0)
            })
            .collect();
        assert_eq!(
            &shingles[..3],
            &[0x1e6c3dde4a8a, 0x1370eb1ac645d, 0x13f6f24ea52ed]
        );
    }

    #[test]
    fn fast_paths_match_reference() {
        // Lengths around the 8-byte chunking, initial states that do and do not
        // leave room for the head bytes.
        let data: Vec<u8> = (0..40u32).map(|i| (i * 37 + 11) as u8).collect();
        for len in 0..data.len() {
            for init in [0, 1, 0xff, 1 << 40, 1 << 63, u64::MAX] {
                let bytes = &data[..len];
                let expected = reference(bytes, init, 64, POLY);
                assert_eq!(
                    fingerprint(bytes, init),
                    expected,
                    "len {len} init {init:#x}"
                );
                assert_eq!(bytes.iter().fold(init, |f, &b| append8(f, b)), expected);
                assert_eq!(Rabin::STANDARD.fingerprint(bytes, init), expected);
            }
        }
    }

    #[test]
    fn append64_shifts_match_tables() {
        let mut f = 0x0123_4567_89ab_cdefu64;
        for i in 0..10_000u64 {
            let word = i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            assert_eq!(append64(f, word), append64_tables(f, word), "{f:#x}");
            f = append64(f, word) ^ (1 << (i % 64));
        }
        for f in [0, 1, 1 << 60, 1 << 61, 1 << 63, 0xf << 60, u64::MAX] {
            assert_eq!(append64(f, 7), append64_tables(f, 7), "{f:#x}");
        }
    }

    #[test]
    fn append64_is_eight_append8() {
        let mut f = 0x0123_4567_89ab_cdefu64;
        for word in [0u64, 1, u64::MAX, 0xdead_beef_cafe_f00d] {
            let slow = word.to_be_bytes().iter().fold(f, |f, &b| append8(f, b));
            assert_eq!(append64(f, word), slow);
            f = slow.rotate_left(17) ^ 0x9e37_79b9_7f4a_7c15;
        }
    }

    #[test]
    fn mulmod_matches_reference() {
        let m = Poly::new((1u128 << 64) | u128::from(POLY));
        let vals = [0u64, 1, 2, POLY, 1 << 63, u64::MAX, 0x0123_4567_89ab_cdef];
        for &a in &vals {
            for &b in &vals {
                let expected = Poly::new(u128::from(a)).mulmod(Poly::new(u128::from(b)), m);
                assert_eq!(mulmod(a, b), expected.bits as u64, "{a:#x}·{b:#x}");
                assert_eq!(mulmod(a, b), mulmod(b, a));
            }
        }
        assert_eq!(clmul(0b11, 0b11), 0b101);
        assert_eq!(clmul(u64::MAX, 2), u128::from(u64::MAX) << 1);
    }

    #[test]
    fn generic_rabin_agrees_with_reference() {
        let data = b"Rabin fingerprints of any degree from 8 to 64";
        for (degree, poly) in [
            (8, 0x1b),
            (31, 0x9),
            (53, 0x3DA3358B4DC173 & ((1 << 53) - 1)),
        ] {
            let r = Rabin::new(degree, poly);
            for init in [0, 1] {
                assert_eq!(
                    r.fingerprint(data, init),
                    reference(data, init, degree, poly),
                    "degree {degree}"
                );
            }
        }
    }

    #[test]
    fn irreducibility() {
        assert!(is_irreducible(64, POLY));
        assert!(!is_irreducible(64, 0x42F0E1EBA9EA3693), "CRC-64-ECMA");
        assert!(!is_irreducible(64, 1), "x^64+1 = (x+1)^64");
        assert!(is_irreducible(62, (1 << 29) | 1));
        assert!(is_irreducible(62, (1 << 33) | 1));
        assert!(is_irreducible(62, 0x69));
        assert!(is_irreducible(62, 0x54FCF6EBDE3DBB73 & ((1 << 62) - 1)));
        assert!(is_irreducible(64, 0x85FA72C1FA1CC1E7), "lib0");
        assert!(
            is_irreducible(63, 0xbfe6b8a5bf378d83 & ((1 << 63) - 1)),
            "LBFS"
        );
        assert!(
            is_irreducible(53, 0x3DA3358B4DC173 & ((1 << 53) - 1)),
            "restic"
        );
        assert!(is_irreducible(32, 0x8D));
        // Small cases checked by hand: x^2+x+1 irreducible, x^2+1 = (x+1)^2,
        // x^4+x+1 irreducible, x^4+x^2+1 = (x^2+x+1)^2, x^3+x = x(x+1)^2.
        assert!(is_irreducible(2, 0b11));
        assert!(!is_irreducible(2, 0b01));
        assert!(is_irreducible(4, 0b0011));
        assert!(!is_irreducible(4, 0b0101));
        assert!(!is_irreducible(3, 0b010));
    }

    #[test]
    fn irreducible_count_degree_8() {
        // There are exactly 30 irreducible polynomials of degree 8 over GF(2).
        let count = (0..256u64).filter(|&low| is_irreducible(8, low)).count();
        assert_eq!(count, 30);
    }
}
