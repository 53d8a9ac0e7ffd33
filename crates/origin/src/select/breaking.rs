//! Revised hash-breaking (Seo & Croft; Abdel-Hamid et al. 2009 §2.1) and DCT fingerprints of
//! its segments: units that are segments of tokens, not shingles.

use std::f64::consts::PI;
#[cfg(test)]
use std::ops::Range;

/// Revised hash-breaking: cut the tokens into non-overlapping segments at tokens
/// whose hash is divisible by `p`, drop segments shorter than `p` tokens (Seo &
/// Croft's revision), and write the rest as token ranges into `out` (cleared
/// first). A breaking token ends its segment; the tail after the last breaker is
/// a segment too (docs/algorithms.md §2, our choice).
#[cfg(test)]
pub(crate) fn hash_breaking_segments(hashes: &[u64], p: u32, out: &mut Vec<Range<u32>>) {
    out.clear();
    segments_with(hashes, p, |s, e| out.push(s as u32..e as u32));
}

/// Hash-breaking, calling `emit(start, end)` for each kept segment in order.
pub(crate) fn segments_with(hashes: &[u64], p: u32, mut emit: impl FnMut(usize, usize)) {
    assert!(p >= 1, "hash-breaking needs p >= 1");
    let (p64, min_len) = (p as u64, p as usize);
    let mut start = 0;
    for (i, &h) in hashes.iter().enumerate() {
        if h % p64 == 0 {
            if i + 1 - start >= min_len {
                emit(start, i + 1);
            }
            start = i + 1;
        }
    }
    // min_len >= 1, so an empty tail (a breaker last) is never a segment.
    if hashes.len() - start >= min_len {
        emit(start, hashes.len());
    }
}

/// The DCT fingerprint of one segment from its finalised token hashes
/// (docs/algorithms.md §2 DCT steps 1–5, a 62-bit key).
#[cfg(test)]
pub(crate) fn dct_key(hashes: &[u64]) -> u64 {
    dct_key_with(hashes, &mut Vec::new())
}

/// Number of DCT coefficients kept, 4 bits each.
const COEFFS: usize = 16;

/// [`dct_key`] with a reusable scratch buffer.
///
/// The cosines are those of §2, cos(π(i+½)m/n) = cos(π·a/2n) with
/// a = (2i+1)·m mod 4n, read from a table of a quarter period built per segment:
/// n+1 `cos` calls instead of 16n, and exact zeros at a = n and 3n. The exact
/// zeros matter: for n ≤ 15 the coefficient m = n is mathematically 0, which
/// quantises to exactly the boundary between 7 and 8, so the last-ulp noise of a
/// libm `cos(π/2)` would pick the bit. With the table the key depends only on
/// IEEE arithmetic and on `cos` away from such boundaries.
pub(crate) fn dct_key_with(hashes: &[u64], scratch: &mut Vec<f64>) -> u64 {
    let n = hashes.len();
    if n == 0 {
        // Not produced by hash-breaking; all-zero coefficients, defined anyway.
        return (0..COEFFS).fold(0u64, |k, m| k | 8 << (4 * m)) >> 2;
    }
    // scratch = [v_0..v_n, cos(π·a/2n) for a in 0..=n].
    scratch.clear();
    // Step 1: v_i in [-1, 1].
    scratch.extend(
        hashes
            .iter()
            .map(|&h| 2.0 * (h as f64 / 18_446_744_073_709_551_616.0) - 1.0),
    );
    scratch.extend((0..=n).map(|a| {
        if a == n {
            0.0
        } else {
            (PI * a as f64 / (2 * n) as f64).cos()
        }
    }));
    let (v, quarter) = scratch.split_at(n);
    let cos = |a: usize| -> f64 {
        // a in 0..4n; cos is even about 0 and 2n, odd about n.
        let a = if a > 2 * n { 4 * n - a } else { a };
        if a > n {
            -quarter[2 * n - a]
        } else {
            quarter[a]
        }
    };
    let mut key = 0u64;
    for m in 0..COEFFS {
        // Step 2: X_m = Σ v_i·cos(π(i+½)m/n), angle index a = (2i+1)m mod 4n.
        let step = (2 * m) % (4 * n);
        let mut a = m % (4 * n);
        let mut x = 0.0;
        for &vi in v {
            x += vi * cos(a);
            a += step;
            if a >= 4 * n {
                a -= 4 * n;
            }
        }
        // Step 3: orthonormal scaling.
        let scale = if m == 0 { 1.0 } else { 2.0 };
        let y = x * (scale / n as f64).sqrt();
        // Step 4: 4 bits.
        let q = ((y + 1.2) / 2.4 * 16.0).floor().clamp(0.0, 15.0) as u64;
        // Step 5.
        key |= q << (4 * m);
    }
    key >> 2
}

#[cfg(test)]
mod tests {
    use super::*;
    use lineage_core::fingerprint::fmix64;

    /// The segments as (start, end) pairs.
    fn segs(hashes: &[u64], p: u32) -> Vec<(u32, u32)> {
        let mut out = vec![];
        hash_breaking_segments(hashes, p, &mut out);
        out.into_iter().map(|r| (r.start, r.end)).collect()
    }

    #[test]
    fn hash_breaking_breaker_ends_its_segment() {
        // p = 2: breakers are the even hashes.
        assert_eq!(
            segs(&[1, 3, 4, 5, 7, 8, 9, 11], 2),
            [(0, 3), (3, 6), (6, 8)]
        );
        // p = 1: every token breaks, every segment (one token) is long enough.
        assert_eq!(segs(&[5, 6, 7], 1), [(0, 1), (1, 2), (2, 3)]);
    }

    #[test]
    fn hash_breaking_tail_segment() {
        assert_eq!(
            segs(&[3, 1, 1, 1], 3),
            [(1, 4)],
            "the short head is dropped"
        );
        assert_eq!(segs(&[1, 1, 1], 3), [(0, 3)], "no breaker: one segment");
        assert_eq!(segs(&[1, 1, 3], 3), [(0, 3)], "breaker last: no empty tail");
        assert!(segs(&[], 3).is_empty());
    }

    #[test]
    fn hash_breaking_drops_short_segments() {
        // p = 3: segments 0..2 (2 tokens) and 5..7 (2) are dropped, 2..5 kept.
        assert_eq!(segs(&[1, 3, 1, 1, 6, 1, 1], 3), [(2, 5)]);
        // Exactly p tokens are kept.
        assert_eq!(segs(&[1, 1, 3, 1, 1, 1], 3), [(0, 3), (3, 6)]);
        assert!(segs(&[1, 9, 4, 9], 3).is_empty());
    }

    #[test]
    fn dct_key_is_deterministic_and_context_free() {
        let h: Vec<u64> = (1..=40).map(fmix64).collect();
        let seg = &h[10..22];
        let k = dct_key(seg);
        assert_eq!(k, dct_key(seg));
        assert!(k < 1 << 62);
        assert_ne!(dct_key(&h[11..23]), k);
        // A passage shared by two documents, cut and keyed as the selector
        // does (one scratch buffer for both): from its first breaker on, the
        // same segments with the same keys, whatever comes before or after.
        let p = 3;
        let shared: Vec<u64> = (1..=60).map(fmix64).collect();
        let breakers: Vec<usize> = (0..shared.len())
            .filter(|&i| shared[i].is_multiple_of(p as u64))
            .collect();
        let (first, last) = (breakers[0], breakers[breakers.len() - 1]);
        let mut scratch = vec![1.0; 99];
        let mut keyed = |before: std::ops::Range<u64>, after: std::ops::Range<u64>| {
            let doc: Vec<u64> = before
                .clone()
                .map(fmix64)
                .chain(shared.iter().copied())
                .chain(after.map(fmix64))
                .collect();
            let at = before.count();
            let mut out = Vec::new();
            segments_with(&doc, p, |s, e| {
                if s > at + first && e <= at + last + 1 {
                    out.push((s - at, e - at, dct_key_with(&doc[s..e], &mut scratch)));
                }
            });
            out
        };
        let (one, other) = (keyed(100..107, 200..231), keyed(300..329, 400..402));
        assert!(one.len() >= 3, "{one:?}");
        assert_eq!(one, other);
        for (s, e, key) in one {
            assert_eq!(key, dct_key(&shared[s..e]), "a segment's key is its own");
        }
    }

    /// Steps 1–5 computed independently (Python, math.cos with the same angle
    /// reduction); every other coefficient is at least 0.001 of a quantisation
    /// step away from a boundary.
    #[test]
    fn dct_key_reference_value() {
        let h: Vec<u64> = (1..=12).map(fmix64).collect();
        assert_eq!(dct_key(&h), DCT_REF_1_12);
        // fmix64(22..35), n = 13: coefficient 13 is exactly 0 (q = 8); a libm
        // cos(π/2) ≈ 6e-17 there would give q = 7 (key 0x2c9f…).
        let h: Vec<u64> = (22..35).map(fmix64).collect();
        assert_eq!(dct_key(&h), 0x2ca3_5262_0e1d_9b62);
        // v_i = 0 exactly: every coefficient is 0 and quantises to 8.
        assert_eq!(dct_key(&[1 << 63; 7]), 0x8888_8888_8888_8888 >> 2);
    }

    const DCT_REF_1_12: u64 = 0x1296_296d_9e3f_9592;
}
