//! Rabin fingerprints (Broder 1993, docs/algorithms.md §1) of tokens and shingles.
//!
//! Token fingerprints are Rabin-64 (initial state 1) of the token's key text
//! under a dense irreducible P drawn from a seed ([`polynomial`]). Shingle
//! fingerprints are Rabin-64 (P = x^64+x^4+x^3+x+1, initial state 0) of the k
//! token fingerprints, each first mixed non-linearly (`shingle::compose`, so
//! structured text cannot cancel through the linear sparse P), big-endian,
//! rolled one token at a time. Every use of the
//! bits goes through the bijective finaliser `fmix64` (§1.6): raw Rabin values of
//! short strings leave the top bits empty.

pub mod keymap;
pub mod polynomial;
pub mod rabin;
pub(crate) mod shingle;

pub use shingle::ShingleRoller;

use std::ops::Range;

use crate::text::TokenSink;
use polynomial::Polynomial;

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
/// table all use (Abdel-Hamid et al. 2009 speaks of 62-bit fingerprints).
#[inline]
pub fn key(rabin: u64) -> u64 {
    fmix64(rabin) >> 2
}

/// The top byte of a 62-bit key (bits 54..61): the "first byte" of Abdel-Hamid et al. 2009's
/// expansion and bridging checks.
#[inline]
pub fn top_byte(key: u64) -> u8 {
    (key >> 54) as u8
}

/// Rabin-64 fingerprint, initial state 1, of a token's key text under `poly`.
#[inline]
pub fn token_fp(poly: &Polynomial, key_text: &[u8]) -> u64 {
    poly.fingerprint(key_text, 1)
}

/// Tokens of one prepared text: spans and fingerprints, computed in one pass.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TokenFps {
    /// Byte span of each token in the prepared text.
    pub spans: Vec<Range<u32>>,
    /// Rabin-64 fingerprint of each token's key text (not finalised).
    pub fps: Vec<u64>,
}

/// Tokenize `text` and fingerprint every token under `poly`.
///
/// Panics if `text` is longer than `u32::MAX` bytes (spans are `u32`).
pub fn token_fps(poly: &Polynomial, text: &str) -> TokenFps {
    let mut out = TokenFps::default();
    token_fps_into(poly, text, &mut out);
    out
}

/// [`token_fps`] into reused buffers (cleared first), to spare the allocation
/// and page faults of fresh vectors for every document.
pub(crate) fn token_fps_into(poly: &Polynomial, text: &str, out: &mut TokenFps) {
    assert!(
        u32::try_from(text.len()).is_ok(),
        "prepared text longer than 4 GiB"
    );
    out.spans.clear();
    out.fps.clear();
    // English averages about six bytes per token and separator.
    out.spans.reserve(text.len() / 6);
    out.fps.reserve(text.len() / 6);
    // The vectors move into a local sink and back: behind `out` they would be
    // reloaded and stored for every token.
    let mut sink = Sink {
        poly,
        spans: std::mem::take(&mut out.spans),
        fps: std::mem::take(&mut out.fps),
    };
    crate::text::scan_tokens(text, &mut sink);
    out.spans = sink.spans;
    out.fps = sink.fps;
}

/// Fingerprints the tokens as the scan finds them, without copying key texts.
struct Sink<'p> {
    poly: &'p Polynomial,
    spans: Vec<Range<u32>>,
    fps: Vec<u64>,
}

impl TokenSink for Sink<'_> {
    #[inline(always)]
    fn ascii(&mut self, bytes: &[u8], span: Range<usize>) {
        let fp = rabin::ascii_alnum_fingerprint(self.poly, bytes, span.clone());
        self.spans.push(span.start as u32..span.end as u32);
        self.fps.push(fp);
    }

    fn other(&mut self, span: Range<usize>, key: &str) {
        self.spans.push(span.start as u32..span.end as u32);
        self.fps.push(self.poly.fingerprint(key.as_bytes(), 1));
    }
}

/// The finalised token hashes `fmix64(fp)`, used for ordering (Hailstorm) and
/// hash-breaking.
pub fn token_hashes(fps: &[u64], out: &mut Vec<u64>) {
    out.clear();
    out.extend(fps.iter().map(|&f| fmix64(f)));
}

/// The 62-bit keys of all k-shingles of a token sequence (n-k+1 of them, none
/// when n < k), each equal to `key(rabin of the 8k bytes of the k fps)`.
pub fn shingle_keys(poly: &Polynomial, fps: &[u64], k: usize, out: &mut Vec<u64>) {
    ShingleRoller::new(poly, k).keys(fps, out)
}

/// The 62-bit key of a segment (hash-breaking): Rabin-64, initial state 1, over
/// the segment's mixed token fingerprints (as shingles), big-endian, then
/// finalised. `mix` is the polynomial's ([`Polynomial::mix`], which a
/// roller carries: [`ShingleRoller::mix`]).
pub fn segment_key(mix: u64, fps: &[u64]) -> u64 {
    key(fps
        .iter()
        .fold(1, |f, &fp| rabin::append64(f, shingle::compose(fp, mix))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::polynomial::standard;

    /// The bytes a shingle or segment fingerprint is taken of: the mixed
    /// token fingerprints, big-endian.
    fn be_bytes(fps: &[u64]) -> Vec<u8> {
        fps.iter()
            .flat_map(|&f| shingle::compose(f, polynomial::standard().mix()).to_be_bytes())
            .collect()
    }

    #[test]
    fn token_fp_is_rabin_with_leading_one() {
        assert_eq!(token_fp(standard(), b"the"), 0x1746865);
        assert_eq!(token_fp(standard(), b"abc"), 0x1616263);
        // Longer keys are reduced by the seeded polynomial.
        let p = polynomial::standard();
        let oracle = rabin::Rabin::new(64, p.low());
        assert_eq!(
            token_fp(standard(), b"hello world"),
            oracle.fingerprint(b"hello world", 1)
        );
        assert_ne!(
            token_fp(standard(), b"hello world"),
            0x6c6f2077710fbe70,
            "the old P"
        );
        // The leading 1 separates strings that differ by leading zero bytes.
        assert_ne!(token_fp(standard(), b"\0a"), token_fp(standard(), b"a"));
    }

    #[test]
    fn token_fps_spans_and_fps() {
        let text = "The Quick, brown\u{2014}Fox! caf\u{e9} cafe\u{301}";
        let t = token_fps(standard(), text);
        let words: Vec<&str> = t
            .spans
            .iter()
            .map(|s| &text[s.start as usize..s.end as usize])
            .collect();
        assert_eq!(
            words,
            ["The", "Quick", "brown", "Fox", "caf\u{e9}", "cafe\u{301}"]
        );
        let expected: Vec<u64> = ["the", "quick", "brown", "fox", "caf\u{e9}", "caf\u{e9}"]
            .iter()
            .map(|k| token_fp(standard(), k.as_bytes()))
            .collect();
        assert_eq!(t.fps, expected);
        assert_eq!(
            t.fps[4], t.fps[5],
            "NFC and NFD spellings share a fingerprint"
        );
        assert_eq!(token_fps(standard(), ""), TokenFps::default());
        let mut reused = token_fps(standard(), "stale words here and more");
        token_fps_into(standard(), text, &mut reused);
        assert_eq!(reused, t);
    }

    #[test]
    fn token_fps_agrees_with_tokens() {
        let text =
            "\u{c9}COLE d'\u{e9}t\u{e9}: snake_case 42 \u{4e2d}\u{6587} \u{3a3}\u{39f}\u{3a3}";
        let t = token_fps(standard(), text);
        let toks = crate::text::tokens(text);
        assert_eq!(t.spans.len(), toks.len());
        for (i, tok) in toks.iter().enumerate() {
            assert_eq!(t.spans[i], tok.span.start as u32..tok.span.end as u32);
            assert_eq!(t.fps[i], token_fp(standard(), tok.key.as_bytes()));
        }
    }

    #[test]
    fn ascii_tokens_of_every_length_and_place() {
        // Tokens of 1 to 40 bytes, mixed case and digits, at every distance
        // from the end of the text (the fast paths read 8 bytes ahead).
        let word: Vec<u8> = b"AbCdEfGhIjKlMnOpQrStUvWxYz0123456789QqZz".to_vec();
        for len in 1..=word.len() {
            for after in 0..20 {
                for before in 0..3 {
                    let text = format!(
                        "{}{}{}",
                        "-".repeat(before),
                        std::str::from_utf8(&word[..len]).unwrap(),
                        " ".repeat(after)
                    );
                    let t = token_fps(standard(), &text);
                    let key = word[..len].to_ascii_lowercase();
                    assert_eq!(t.fps, [token_fp(standard(), &key)], "{text:?}");
                    assert_eq!(t.spans.len(), 1);
                    assert_eq!(t.spans[0], before as u32..(before + len) as u32);
                }
            }
        }
    }

    #[test]
    fn token_fps_agree_with_tokens_on_mixed_text() {
        let mut text = String::new();
        for i in 0..3000u32 {
            let word = match i % 11 {
                0 => "Don\u{2019}t",
                1 => "na\u{ef}ve",
                2 => "CAFE\u{301}",
                3 => "x86_64",
                4 => "\u{201c}Quoted\u{201d}",
                5 => "supercalifragilistic",
                6 => "ABCDEFGHIJKLMNOP",
                7 => "\u{4e2d}\u{6587}",
                8 => "a\u{2014}b",
                9 => "Straddling",
                _ => "the",
            };
            text.push_str(word);
            text.push_str(if i % 7 == 0 { ".\n" } else { " " });
        }
        let t = token_fps(standard(), &text);
        let toks = crate::text::tokens(&text);
        assert_eq!(t.spans.len(), toks.len());
        for (i, tok) in toks.iter().enumerate() {
            assert_eq!(t.spans[i], tok.span.start as u32..tok.span.end as u32);
            assert_eq!(
                t.fps[i],
                token_fp(standard(), tok.key.as_bytes()),
                "{:?}",
                tok.key
            );
        }
    }

    #[test]
    fn segment_key_is_finalised_rabin_with_leading_one() {
        let fps = [
            token_fp(standard(), b"the"),
            token_fp(standard(), b"quick"),
            0xffff_0000_ffff_0000,
        ];
        let raw = rabin::fingerprint(&be_bytes(&fps), 1);
        assert_eq!(segment_key(standard().mix(), &fps), key(raw));
        assert_eq!(segment_key(standard().mix(), &fps), fmix64(raw) >> 2);
        assert_ne!(segment_key(standard().mix(), &fps), raw >> 2);
        assert!(segment_key(standard().mix(), &fps) < 1 << 62);
        // Initial state 1: a leading zero fingerprint still counts.
        assert_ne!(
            segment_key(standard().mix(), &[0, 5]),
            segment_key(standard().mix(), &[5])
        );
        assert_eq!(segment_key(standard().mix(), &[]), key(1));
    }

    #[test]
    fn shingle_keys_are_direct_keys() {
        let fps: Vec<u64> = (1..=10u64)
            .map(|i| token_fp(standard(), &i.to_be_bytes()))
            .collect();
        let mut out = Vec::new();
        shingle_keys(standard(), &fps, 8, &mut out);
        assert_eq!(out.len(), 3);
        for (i, &k) in out.iter().enumerate() {
            assert_eq!(k, key(rabin::fingerprint(&be_bytes(&fps[i..i + 8]), 0)));
        }
    }

    fn fps_of_tokens(text: &str) -> TokenFps {
        let toks = crate::text::tokens(text);
        TokenFps {
            spans: toks
                .iter()
                .map(|t| t.span.start as u32..t.span.end as u32)
                .collect(),
            fps: toks
                .iter()
                .map(|t| token_fp(standard(), t.key.as_bytes()))
                .collect(),
        }
    }

    /// (d, x, y) with d < 16 such that x, x ^ d, y and y ^ d·0x1B are all
    /// lowercase letters or digits: the tokenizer keeps such pairs as they are.
    fn sparse_family() -> Vec<(u8, u8, u8)> {
        let alnum = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
        let mut all = Vec::new();
        for d in 1u8..16 {
            let m = rabin::clmul(u64::from(d), rabin::POLY) as u8;
            for x in (0..=127u8).filter(|&x| alnum(x) && alnum(x ^ d)) {
                for y in (0..=127u8).filter(|&y| alnum(y) && alnum(y ^ m)) {
                    all.push((d, x, y));
                }
            }
        }
        all
    }

    proptest::proptest! {
        #[test]
        fn token_fps_are_fps_of_token_keys(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    "a", "Hello", "WORLD", "x9", "abcdefgh", "ABCDEFGHI", "Straddling",
                    "0123456789abcdef", "0123456789ABCDEFG", " ", " ", ", ", ".\n", "_",
                    "\u{e9}", "e\u{301}", "\u{2019}", "\u{2014}", "\u{4e2d}", "\u{3a3}",
                ]),
                0..400,
            ),
        ) {
            let text = parts.concat();
            proptest::prop_assert_eq!(token_fps(standard(), &text), fps_of_tokens(&text));
        }

        #[test]
        fn token_fps_of_any_string(text in proptest::prelude::any::<String>()) {
            proptest::prop_assert_eq!(token_fps(standard(), &text), fps_of_tokens(&text));
        }

        /// The structural family of a sparse P among tokens: two tokens of
        /// 9 to 16 bytes whose last head byte differs by d < 16 and whose
        /// last byte differs by d·(x^4+x^3+x+1), which is d·x^64 mod that P.
        /// They collide under it (the control) and not under the seeded P.
        #[test]
        fn long_tokens_related_through_a_sparse_p_do_not_collide(
            token in "[a-z0-9]{9,16}",
            (d, x, y) in proptest::sample::select(sparse_family()),
        ) {
            let mut a = token.into_bytes();
            let (head, last) = (a.len() - 9, a.len() - 1);
            a[head] = x;
            a[last] = y;
            let mut b = a.clone();
            b[head] ^= d;
            b[last] ^= rabin::clmul(u64::from(d), rabin::POLY) as u8;
            proptest::prop_assert_eq!(rabin::fingerprint(&a, 1), rabin::fingerprint(&b, 1));
            let text = format!("{} {}", str::from_utf8(&a).unwrap(), str::from_utf8(&b).unwrap());
            let fps = token_fps(standard(), &text).fps;
            proptest::prop_assert_eq!(fps.len(), 2);
            proptest::prop_assert_ne!(fps[0], fps[1]);
        }
    }

    #[test]
    fn top_byte_is_bits_54_to_61() {
        assert_eq!(top_byte(0xab << 54), 0xab);
        assert_eq!(top_byte((1 << 54) - 1), 0);
    }
}

/// A fixed workload for timing and profiling: `LINEAGE_PERF_ITERS` runs of
/// token fps + k = 8 shingle keys over the Rust book corpus, printing the best
/// run (the least disturbed by other work on the machine). `LINEAGE_PERF_PART`
/// picks a part: `fps`, `keys`, `into` (both, reusing the token vectors),
/// `scan` (tokenizer only) or `scanfp` (tokenizer and ASCII fingerprints, no
/// vectors).
///
/// `LINEAGE_PERF_ITERS=40 cargo test --release --lib perf_workload -- --ignored
/// --nocapture`; `perf record`/`perf stat` work on the test binary with the same
/// arguments.
#[cfg(test)]
mod perf {
    use super::*;
    use crate::fingerprint::polynomial::standard;

    #[test]
    #[ignore = "workload for perf stat; run in release"]
    fn perf_workload() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/rust-book");
        let mut paths: Vec<_> = std::fs::read_dir(dir)
            .expect("corpus")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "md"))
            .collect();
        paths.sort();
        let mut text = String::new();
        for p in paths {
            text.push_str(&std::fs::read_to_string(p).expect("utf-8"));
            text.push('\n');
        }
        let iters: usize = std::env::var("LINEAGE_PERF_ITERS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(1);
        let part = std::env::var("LINEAGE_PERF_PART").unwrap_or_default();
        let mut t = token_fps(standard(), &text);
        let mut keys = Vec::new();
        let mut best = f64::MAX;
        let mut total = 0.0;
        for _ in 0..iters {
            let start = std::time::Instant::now();
            if part == "scan" || part == "scanfp" {
                struct Count(u64, bool);
                impl TokenSink for Count {
                    #[inline]
                    fn ascii(&mut self, bytes: &[u8], span: Range<usize>) {
                        self.0 += if self.1 {
                            rabin::ascii_alnum_fingerprint(polynomial::standard(), bytes, span)
                        } else {
                            (span.start ^ span.end) as u64
                        };
                    }
                    fn other(&mut self, span: Range<usize>, _key: &str) {
                        self.0 += (span.start ^ span.end) as u64;
                    }
                }
                let mut c = Count(0, part == "scanfp");
                crate::text::scan_tokens(std::hint::black_box(&text), &mut c);
                std::hint::black_box(c.0);
            } else if part == "into" {
                token_fps_into(standard(), std::hint::black_box(&text), &mut t);
            } else if part != "keys" {
                // As `benches/engine.rs` does: fresh vectors every time, the
                // old ones freed first.
                drop(std::mem::take(&mut t));
                t = token_fps(standard(), std::hint::black_box(&text));
            }
            if part != "fps" && !part.starts_with("scan") {
                shingle_keys(standard(), std::hint::black_box(&t.fps), 8, &mut keys);
            }
            std::hint::black_box(&keys);
            let secs = start.elapsed().as_secs_f64();
            best = best.min(secs);
            total += secs;
        }
        let mb = text.len() as f64 / 1e6;
        eprintln!(
            "{} bytes, {} tokens, {iters} iterations: best {:.2} ms = {:.0} MB/s, \
             {:.2} ns/token; mean {:.0} MB/s",
            text.len(),
            t.fps.len(),
            best * 1e3,
            mb / best,
            best * 1e9 / t.fps.len() as f64,
            mb * iters as f64 / total,
        );
    }
}
