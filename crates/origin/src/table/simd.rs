//! The compares a bucket scan makes, 16 or 64 lanes at a time where the
//! target has vectors, with the plain loops they must equal.

/// For each run of up to 64 scores, its start and a mask of the scores equal
/// to `v`.
pub(super) fn score_mask(scores: &[u8], v: u8) -> impl Iterator<Item = (usize, u64)> + '_ {
    scores.chunks(64).enumerate().map(move |(c, chunk)| {
        let mask = match <&[u8; 64]>::try_from(chunk) {
            Ok(full) => eq_mask_64(full, v),
            Err(_) => chunk
                .iter()
                .enumerate()
                .fold(0u64, |m, (j, &s)| m | u64::from(s == v) << j),
        };
        (c * 64, mask)
    })
}

/// Bit j set iff `bytes[j] == v`. The compiler turns a plain loop into
/// byte-by-byte shifts, so on x86_64 this is four SSE2 compares and mask
/// extractions (SSE2 is part of the x86_64 baseline).
#[inline]
pub(super) fn eq_mask_64(bytes: &[u8; 64], v: u8) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8,
        };
        let p = bytes.as_ptr().cast::<__m128i>();
        let mut mask = 0u64;
        // SAFETY: four unaligned 16-byte loads within the 64-byte array.
        unsafe {
            let k = _mm_set1_epi8(v as i8);
            for q in 0..4 {
                let m = _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(p.add(q)), k));
                mask |= u64::from(m as u16) << (16 * q);
            }
        }
        mask
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        bytes
            .iter()
            .enumerate()
            .fold(0u64, |m, (j, &s)| m | u64::from(s == v) << j)
    }
}

/// Bit j set iff `words[j] == v`, for a 64-entry bucket, of its first
/// `chunks` chunks of 16 (the rest are not read).
#[inline]
pub(super) fn eq_mask16x64(words: &[u16; 64], v: u16, chunks: usize) -> u64 {
    let mut mask = 0;
    for (q, chunk) in words.chunks_exact(16).take(chunks).enumerate() {
        mask |= u64::from(eq_mask16(chunk.try_into().expect("16 half-words"), v)) << (16 * q);
    }
    mask
}

/// The largest of a 64-entry bucket's half-words. SSE2 has a signed
/// 16-bit maximum only, so the words are compared with their top bit
/// flipped (order-preserving from unsigned to signed): eight loads, seven
/// maxima, three more within a vector. The plain loop is not vectorized.
#[inline]
pub(super) fn max16x64(words: &[u16; 64]) -> u16 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            __m128i, _mm_cvtsi128_si32, _mm_loadu_si128, _mm_max_epi16, _mm_set1_epi16,
            _mm_shuffle_epi32, _mm_shufflelo_epi16, _mm_xor_si128,
        };
        let p = words.as_ptr().cast::<__m128i>();
        // SAFETY: eight unaligned 16-byte loads within the 128-byte array;
        // the rest is arithmetic on registers.
        unsafe {
            let flip = _mm_set1_epi16(i16::MIN);
            let load = |q: usize| _mm_xor_si128(_mm_loadu_si128(p.add(q)), flip);
            let mut m = load(0);
            for q in 1..8 {
                m = _mm_max_epi16(m, load(q));
            }
            m = _mm_max_epi16(m, _mm_shuffle_epi32::<0b01_00_11_10>(m));
            m = _mm_max_epi16(m, _mm_shuffle_epi32::<0b10_11_00_01>(m));
            m = _mm_max_epi16(m, _mm_shufflelo_epi16::<0b10_11_00_01>(m));
            (_mm_cvtsi128_si32(m) as u16) ^ 0x8000
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        *words.iter().max().expect("64 words")
    }
}

/// The sum of `bytes` (SSE2 sums of absolute differences on x86_64: 16
/// bytes an instruction).
#[inline]
pub(super) fn byte_sum(bytes: &[u8]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            __m128i, _mm_add_epi64, _mm_cvtsi128_si64, _mm_loadu_si128, _mm_sad_epu8,
            _mm_setzero_si128, _mm_unpackhi_epi64,
        };
        let chunks = bytes.chunks_exact(16);
        let tail: u32 = chunks.remainder().iter().map(|&x| u32::from(x)).sum();
        // SAFETY: each load reads one whole 16-byte chunk of the slice.
        let wide = unsafe {
            let zero = _mm_setzero_si128();
            let mut acc = zero;
            for c in chunks {
                let v = _mm_loadu_si128(c.as_ptr().cast::<__m128i>());
                acc = _mm_add_epi64(acc, _mm_sad_epu8(v, zero));
            }
            _mm_cvtsi128_si64(_mm_add_epi64(acc, _mm_unpackhi_epi64(acc, acc)))
        };
        wide as u32 + tail
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        bytes.iter().map(|&x| u32::from(x)).sum()
    }
}

/// Bit j set iff `words[j] == v` (SSE2 on x86_64, as [`eq_mask_64`]).
#[inline]
pub(super) fn eq_mask16(words: &[u16; 16], v: u16) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            __m128i, _mm_cmpeq_epi16, _mm_loadu_si128, _mm_movemask_epi8, _mm_packs_epi16,
            _mm_set1_epi16,
        };
        let p = words.as_ptr().cast::<__m128i>();
        // SAFETY: two unaligned 16-byte loads within the 32-byte array. The
        // compares give 0 or -1 per half-word; a saturating pack keeps them 0
        // or -1 per byte, in order, for one mask extraction.
        unsafe {
            let k = _mm_set1_epi16(v as i16);
            let eq = |q: usize| _mm_cmpeq_epi16(_mm_loadu_si128(p.add(q)), k);
            _mm_movemask_epi8(_mm_packs_epi16(eq(0), eq(1))) as u32 & 0xffff
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let mut mask = 0;
        for (j, &w) in words.iter().enumerate() {
            mask |= u32::from(w == v) << j;
        }
        mask
    }
}
