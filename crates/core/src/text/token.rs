//! Tokens (docs/formats.md §1): a maximal run that starts with an alphanumeric character
//! and continues with alphanumerics or combining marks (Mn, Mc, Me). The key text
//! is NFC(lowercase(token)).
//!
//! Most text is ASCII, so bytes are scanned directly, 64 at a time: every block
//! becomes a bit mask of *word bytes* (ASCII alphanumerics and non-ASCII bytes),
//! and the runs of ones in it are found with `trailing_zeros`/`trailing_ones`
//! instead of a branch per byte. Tokens never cross an ASCII byte that is not
//! alphanumeric, so every token lies inside one run. A run of ASCII bytes only
//! is a token as it stands (its key is its ASCII lowercase, computed by the
//! receiver); only runs with a non-ASCII byte go through `char` classification,
//! Unicode lowercasing and NFC. The masks come from SSE2 on x86_64 and from
//! integer SWAR code elsewhere; U+2000..U+203F (’ “ ” — …, the non-ASCII
//! characters most common in English text) are marked as separators in them
//! directly, so words such as "don’t" stay on the ASCII path.

use std::ops::Range;

use unicode_normalization::char::is_combining_mark;
use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfc_quick};

/// A token with its byte span in the prepared text and its key text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    /// Its bytes in the prepared text.
    pub span: Range<usize>,
    /// NFC of its lower case: what its fingerprint is taken of.
    pub key: String,
}

/// Receives the tokens found by [`scan_tokens`], in document order.
pub trait TokenSink {
    /// A token made of ASCII alphanumerics only, `bytes[span]`, where `bytes` is
    /// the whole text (so that the receiver may read past the token). Its key
    /// text is its bytes ASCII-lowercased; as every byte is a letter or a digit,
    /// `byte | 0x20` lowercases it.
    fn ascii(&mut self, bytes: &[u8], span: Range<usize>);

    /// Any other token, with its key text.
    fn other(&mut self, span: Range<usize>, key: &str);
}

/// Reused buffers for key texts that differ from the token's own text.
#[derive(Default)]
struct Scratch {
    lower: String,
    nfc: String,
}

/// SWAR constants: one bit or value per byte of a `u64`.
const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// High bit of every byte of `x` (all below 0x80) that lies in `lo..=hi`: adding
/// `0x80 - lo` sets it iff the byte is >= lo, adding `0x7f - hi` iff > hi; no
/// byte carries into the next.
#[inline]
fn in_range(x: u64, lo: u8, hi: u8) -> u64 {
    (x + ONES * u64::from(0x80 - lo)) & !(x + ONES * u64::from(0x7f - hi)) & HIGH
}

/// Per-byte classes of a word, as high bits: ASCII alphanumeric, ASCII
/// uppercase, non-ASCII (the scan needs only [`word_bytes`]; kept for its test).
#[inline]
#[cfg_attr(not(test), allow(dead_code))]
fn classify(w: u64) -> (u64, u64, u64) {
    let non_ascii = w & HIGH;
    let x = w & !HIGH;
    let upper = in_range(x, b'A', b'Z') & !non_ascii;
    let alnum = word_bytes(w) & !non_ascii;
    (alnum, upper, non_ascii)
}

/// High bit of every byte of `w` that is an ASCII alphanumeric or non-ASCII.
#[inline]
fn word_bytes(w: u64) -> u64 {
    let x = w & !HIGH;
    // `| 0x20` folds A-Z onto a-z and moves no other byte into a-z; the range
    // results for non-ASCII bytes do not matter, their own high bit is set.
    (in_range(x, b'0', b'9') | in_range(x | (ONES * 0x20), b'a', b'z') | w) & HIGH
}

/// The high bits of the bytes of `w` gathered into 8 bits, byte i to bit i: the
/// product puts bit 8i·2^(56−7i) at 56+i, and no two partial products overlap.
#[inline]
fn gather(high_bits: u64) -> u64 {
    ((high_bits >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56
}

/// Bit i of the results is byte i of the block: (word bytes, non-ASCII bytes).
#[inline(always)]
fn block_masks(block: &[u8; 64]) -> (u64, u64) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        // SAFETY: `block_masks_sse2` needs SSE2 only, and the crate is compiled
        // with SSE2 enabled (the `cfg` above; every x86_64 CPU has it).
        unsafe { block_masks_sse2(block) }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    block_masks_swar(block)
}

/// [`block_masks`] with SSE2, 16 bytes per instruction: a word byte is a digit,
/// a letter (after `| 0x20`) or negative as `i8` (non-ASCII). The range tests
/// shift the range down to start at -128 and compare signed.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[target_feature(enable = "sse2")]
fn block_masks_sse2(block: &[u8; 64]) -> (u64, u64) {
    use std::arch::x86_64::*;
    let mut word = 0;
    let mut non_ascii = 0;
    for (i, chunk) in block.chunks_exact(16).enumerate() {
        let v = load16(chunk);
        let below = |x: __m128i, start: u8, len: u8| {
            let shifted = _mm_add_epi8(x, _mm_set1_epi8(0x80u8.wrapping_sub(start) as i8));
            _mm_cmpgt_epi8(_mm_set1_epi8((0x80 + len) as i8), shifted)
        };
        let digit = below(v, b'0', 10);
        let letter = below(_mm_or_si128(v, _mm_set1_epi8(0x20)), b'a', 26);
        let w = _mm_or_si128(_mm_or_si128(digit, letter), v);
        word |= u64::from(_mm_movemask_epi8(w) as u16) << (16 * i);
        non_ascii |= u64::from(_mm_movemask_epi8(v) as u16) << (16 * i);
    }
    (word, non_ascii)
}

/// [`block_masks`] in plain integer code, eight bytes per `u64`.
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
#[inline(always)]
fn block_masks_swar(block: &[u8; 64]) -> (u64, u64) {
    let mut word = 0;
    let mut any_high = 0;
    for (i, chunk) in block.chunks_exact(8).enumerate() {
        let w = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        word |= gather(word_bytes(w)) << (8 * i);
        any_high |= w;
    }
    if any_high & HIGH == 0 {
        return (word, 0);
    }
    let mut non_ascii = 0;
    for (i, chunk) in block.chunks_exact(8).enumerate() {
        let w = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        non_ascii |= gather(w & HIGH) << (8 * i);
    }
    (word, non_ascii)
}

/// High bit of every zero byte of `x`. Exact: `(x & 0x7f) + 0x7f` carries into
/// no other byte.
#[inline]
fn zero_bytes(x: u64) -> u64 {
    !(((x & !HIGH) + !HIGH) | x) & HIGH
}

/// The bytes of the block that belong to a character U+2000..U+203F (UTF-8
/// `E2 80 xx`) lying wholly in the block: spaces, dashes, quotes such as ’ “ ”
/// and …, neither alphanumeric nor combining marks, so they separate tokens as
/// ASCII punctuation does, and the scan may treat them so. `E2` is only ever a
/// lead byte, so `E2 80` always starts such a character.
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
#[inline]
fn punctuation_bytes(block: &[u8; 64]) -> u64 {
    let mut e2 = 0;
    let mut x80 = 0;
    for (i, chunk) in block.chunks_exact(8).enumerate() {
        let w = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        e2 |= gather(zero_bytes(w ^ (ONES * 0xE2))) << (8 * i);
        x80 |= gather(zero_bytes(w ^ HIGH)) << (8 * i);
    }
    let lead = e2 & (x80 >> 1) & !(u64::MAX << 62);
    lead | (lead << 1) | (lead << 2)
}

/// [`punctuation_bytes`] with SSE2.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[target_feature(enable = "sse2")]
fn punctuation_bytes_sse2(block: &[u8; 64]) -> u64 {
    use std::arch::x86_64::*;
    let mut e2 = 0;
    let mut x80 = 0;
    for (i, chunk) in block.chunks_exact(16).enumerate() {
        let v = load16(chunk);
        let eq = |b: u8| _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(b as i8))) as u16;
        e2 |= u64::from(eq(0xE2)) << (16 * i);
        x80 |= u64::from(eq(0x80)) << (16 * i);
    }
    let lead = e2 & (x80 >> 1) & !(u64::MAX << 62);
    lead | (lead << 1) | (lead << 2)
}

/// Sixteen bytes as a vector, through two `u64` loads (the compiler makes one
/// unaligned vector load of them).
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[target_feature(enable = "sse2")]
#[inline]
fn load16(chunk: &[u8]) -> std::arch::x86_64::__m128i {
    let lo = i64::from_le_bytes(chunk[..8].try_into().expect("8 bytes"));
    let hi = i64::from_le_bytes(chunk[8..16].try_into().expect("8 bytes"));
    std::arch::x86_64::_mm_set_epi64x(hi, lo)
}

/// The masks of [`block_masks`], less the General Punctuation bytes of
/// [`punctuation_bytes`].
#[inline(always)]
fn block_classes(block: &[u8; 64]) -> (u64, u64) {
    let (word, non_ascii) = block_masks(block);
    if non_ascii == 0 {
        return (word, 0);
    }
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    // SAFETY: as in `block_masks`, SSE2 is enabled at compile time.
    let punctuation = unsafe { punctuation_bytes_sse2(block) };
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    let punctuation = punctuation_bytes(block);
    (word & !punctuation, non_ascii & !punctuation)
}

/// Finds every token of `text` and hands it to `sink`, in document order.
#[inline]
pub fn scan_tokens(text: &str, sink: &mut impl TokenSink) {
    let bytes = text.as_bytes();
    let mut scan = Scan {
        text,
        open: None,
        scratch: Scratch::default(),
    };
    let mut blocks = bytes.chunks_exact(64);
    let mut base = 0;
    for block in &mut blocks {
        let (word, non_ascii) = block_classes(block.try_into().expect("64 bytes"));
        scan.block(base, word, non_ascii, sink);
        base += 64;
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        // Zero bytes are not word bytes: the padding ends any run.
        let mut block = [0u8; 64];
        block[..tail.len()].copy_from_slice(tail);
        let (word, non_ascii) = block_classes(&block);
        scan.block(base, word, non_ascii, sink);
    }
    if let Some((start, non_ascii)) = scan.open {
        scan.run(start, bytes.len(), non_ascii, sink);
    }
}

/// The state of [`scan_tokens`] between blocks.
struct Scan<'t> {
    text: &'t str,
    /// A run of word bytes still going at the end of the last block: its start
    /// and whether it has a non-ASCII byte so far.
    open: Option<(usize, bool)>,
    scratch: Scratch,
}

impl Scan<'_> {
    /// The runs of word bytes of the 64-byte block at `base`, given its masks.
    #[inline(always)]
    fn block(&mut self, base: usize, word: u64, non_ascii: u64, sink: &mut impl TokenSink) {
        let bytes = self.text.as_bytes();
        let mut rest = word;
        if let Some((start, had_non_ascii)) = self.open {
            let e = word.trailing_ones();
            if e == 64 {
                self.open = Some((start, had_non_ascii || non_ascii != 0));
                return;
            }
            self.open = None;
            let has_non_ascii = had_non_ascii || non_ascii & !(u64::MAX << e) != 0;
            self.run(start, base + e as usize, has_non_ascii, sink);
            rest &= u64::MAX << e;
        }
        // Each turn takes the lowest run of ones in `rest`: `low` is its first
        // bit, adding `low` carries through the run and clears it.
        if non_ascii == 0 {
            while rest != 0 {
                let low = rest & rest.wrapping_neg();
                let s = rest.trailing_zeros() as usize;
                let e = (rest | (low - 1)).trailing_ones();
                if e == 64 {
                    self.open = Some((base + s, false));
                    return;
                }
                sink.ascii(bytes, base + s..base + e as usize);
                rest &= rest.wrapping_add(low);
            }
        } else {
            while rest != 0 {
                let low = rest & rest.wrapping_neg();
                let s = rest.trailing_zeros() as usize;
                let e = (rest | (low - 1)).trailing_ones();
                let next = rest & rest.wrapping_add(low);
                let has_non_ascii = non_ascii & (rest ^ next) != 0;
                if e == 64 {
                    self.open = Some((base + s, has_non_ascii));
                    return;
                }
                self.run(base + s, base + e as usize, has_non_ascii, sink);
                rest = next;
            }
        }
    }

    /// The tokens of the run of word bytes `start..end`.
    #[inline]
    fn run(&mut self, start: usize, end: usize, has_non_ascii: bool, sink: &mut impl TokenSink) {
        if has_non_ascii {
            mixed_run(self.text, start..end, &mut self.scratch, sink);
        } else {
            sink.ascii(self.text.as_bytes(), start..end);
        }
    }
}

/// The tokens of a run of word bytes with a non-ASCII character. The run starts
/// and ends at character boundaries (next to ASCII bytes or the text's ends).
#[cold]
#[inline(never)]
fn mixed_run(text: &str, run: Range<usize>, scratch: &mut Scratch, sink: &mut impl TokenSink) {
    let bytes = text.as_bytes();
    let mut i = run.start;
    while i < run.end {
        // ASCII alphanumerics up to the next non-ASCII character at `j`.
        let j = bytes[i..run.end]
            .iter()
            .position(|&b| !b.is_ascii())
            .map_or(run.end, |n| i + n);
        if j == run.end {
            sink.ascii(bytes, i..j);
            return;
        }
        let c = next_char(text, j);
        if is_general_punctuation(c) {
            // The common case (’ “ ” —): it ends the ASCII token, if any.
            if i < j {
                sink.ascii(bytes, i..j);
            }
            i = j + c.len_utf8();
        } else if i < j || is_token_start(c) {
            i = unicode_token(text, i..run.end, scratch, sink);
        } else {
            i = j + c.len_utf8();
        }
    }
}

/// Calls `f(span, key)` for every token in document order, without allocating
/// per token (the key borrows a scratch buffer).
pub fn for_each_token(text: &str, f: impl FnMut(Range<usize>, &str)) {
    struct Keys<F> {
        f: F,
        lower: String,
    }
    impl<F: FnMut(Range<usize>, &str)> TokenSink for Keys<F> {
        #[inline]
        fn ascii(&mut self, bytes: &[u8], span: Range<usize>) {
            let token = &bytes[span.clone()];
            if token.iter().any(u8::is_ascii_uppercase) {
                self.lower.clear();
                self.lower
                    .extend(token.iter().map(|&b| char::from(b.to_ascii_lowercase())));
                (self.f)(span, &self.lower);
            } else {
                let key = std::str::from_utf8(token).expect("ASCII");
                (self.f)(span, key);
            }
        }

        #[inline]
        fn other(&mut self, span: Range<usize>, key: &str) {
            (self.f)(span, key);
        }
    }
    scan_tokens(
        text,
        &mut Keys {
            f,
            lower: String::new(),
        },
    );
}

#[inline]
fn next_char(text: &str, i: usize) -> char {
    text[i..].chars().next().expect("index inside the text")
}

/// General Punctuation (U+2000..U+206F: dashes, quotes, spaces), common next to
/// words: neither alphanumeric nor a combining mark.
#[inline]
fn is_general_punctuation(c: char) -> bool {
    ('\u{2000}'..='\u{206F}').contains(&c)
}

/// `c.is_alphanumeric()`, answering at once for General Punctuation.
#[inline]
fn is_token_start(c: char) -> bool {
    !is_general_punctuation(c) && c.is_alphanumeric()
}

/// The token starting at `within.start` (an alphanumeric character) and ending
/// within `within`: finds its end, emits it and returns the end.
fn unicode_token(
    text: &str,
    within: Range<usize>,
    scratch: &mut Scratch,
    sink: &mut impl TokenSink,
) -> usize {
    let start = within.start;
    let mut end = within.end;
    let mut ascii = true;
    for (offset, c) in text[within].char_indices() {
        if c.is_ascii() {
            if !c.is_ascii_alphanumeric() {
                end = start + offset;
                break;
            }
        } else if !is_general_punctuation(c) && (c.is_alphanumeric() || is_combining_mark(c)) {
            ascii = false;
        } else {
            end = start + offset;
            break;
        }
    }
    if ascii {
        sink.ascii(text.as_bytes(), start..end);
        return end;
    }
    let token = &text[start..end];
    let lower = &mut scratch.lower;
    lower.clear();
    if token.contains('\u{3A3}') {
        // Σ lowercases by context (final ς) only in `str::to_lowercase`.
        lower.push_str(&token.to_lowercase());
    } else {
        lower.extend(token.chars().flat_map(char::to_lowercase));
    }
    if is_nfc_quick(lower.chars()) == IsNormalized::Yes {
        sink.other(start..end, lower);
    } else {
        scratch.nfc.clear();
        scratch.nfc.extend(lower.nfc());
        sink.other(start..end, &scratch.nfc);
    }
    end
}

/// All tokens of `text`, in order.
pub fn tokens(text: &str) -> Vec<Token> {
    let mut out = Vec::new();
    for_each_token(text, |span, key| {
        out.push(Token {
            span,
            key: key.to_owned(),
        })
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// docs/formats.md §1 written out with chars, as the Python check reads it.
    fn naive(text: &str) -> Vec<Token> {
        let mut out = Vec::new();
        let mut current: Option<usize> = None;
        let close = |start: usize, end: usize, out: &mut Vec<Token>| {
            let key: String = text[start..end].to_lowercase().nfc().collect();
            out.push(Token {
                span: start..end,
                key,
            });
        };
        for (i, c) in text.char_indices() {
            match current {
                Some(_) if c.is_alphanumeric() || is_combining_mark(c) => {}
                Some(start) => {
                    close(start, i, &mut out);
                    current = c.is_alphanumeric().then_some(i);
                }
                None => current = c.is_alphanumeric().then_some(i),
            }
        }
        if let Some(start) = current {
            close(start, text.len(), &mut out);
        }
        out
    }

    fn keys(text: &str) -> Vec<String> {
        tokens(text).into_iter().map(|t| t.key).collect()
    }

    fn texts(text: &str) -> Vec<&str> {
        tokens(text).into_iter().map(|t| &text[t.span]).collect()
    }

    #[test]
    fn general_punctuation_is_not_alphanumeric() {
        assert!(('\u{2000}'..='\u{206F}').all(|c| !c.is_alphanumeric()));
        assert!('\u{2070}'.is_alphanumeric() && '\u{2071}'.is_alphanumeric());
    }

    #[test]
    fn swar_classes_match_ascii_predicates() {
        for b in 0..=255u8 {
            for pos in 0..8 {
                let w = u64::from(b) << (8 * pos);
                let (alnum, upper, non_ascii) = classify(w);
                let bit = 0x80u64 << (8 * pos);
                assert_eq!(alnum & bit != 0, b.is_ascii_alphanumeric(), "{b:#x}");
                assert_eq!(upper & bit != 0, b.is_ascii_uppercase(), "{b:#x}");
                assert_eq!(non_ascii & bit != 0, b >= 0x80, "{b:#x}");
                // Zero bytes elsewhere are separators.
                assert_eq!(alnum & !bit, 0);
                assert_eq!(upper & !bit, 0);
            }
        }
    }

    /// The block masks by definition, one byte at a time.
    fn masks_by_bytes(block: &[u8; 64]) -> (u64, u64, u64) {
        let bit = |i: usize, yes: bool| u64::from(yes) << i;
        let mut word = 0;
        let mut non_ascii = 0;
        let mut punctuation = 0;
        for (i, &b) in block.iter().enumerate() {
            word |= bit(i, b.is_ascii_alphanumeric() || !b.is_ascii());
            non_ascii |= bit(i, !b.is_ascii());
            if i + 2 < 64 && b == 0xE2 && block[i + 1] == 0x80 {
                punctuation |= 0b111 << i;
            }
        }
        (word, non_ascii, punctuation)
    }

    #[test]
    fn block_masks_match_bytes() {
        // Every byte value at every position, over a background of each kind.
        for background in [b' ', b'a', 0x80, 0xE2] {
            for b in 0..=255u8 {
                for pos in 0..64 {
                    let mut block = [background; 64];
                    block[pos] = b;
                    let (word, non_ascii, punctuation) = masks_by_bytes(&block);
                    assert_eq!(block_masks(&block), (word, non_ascii), "{b:#x} at {pos}");
                    assert_eq!(block_masks_swar(&block), (word, non_ascii));
                    assert_eq!(punctuation_bytes(&block), punctuation);
                    let (w, n) = block_classes(&block);
                    assert_eq!((w, n), (word & !punctuation, non_ascii & !punctuation));
                }
            }
        }
    }

    #[test]
    fn gather_takes_high_bits_in_order() {
        for m in 0..=255u64 {
            let spread = (0..8).fold(0, |acc, i| acc | ((m >> i) & 1) << (8 * i + 7));
            assert_eq!(gather(spread), m);
        }
    }

    #[test]
    fn general_punctuation_at_block_edges() {
        // ’ — and “ (E2 80 xx) split tokens wherever they fall relative to the
        // 64-byte blocks, including across two blocks.
        for sep in ["\u{2019}", "\u{2014}", "\u{201c}", "\u{2070}"] {
            for pad in 50..70 {
                let text = format!(
                    "{}don{sep}t w{sep}{sep}x",
                    "a ".repeat(pad / 2) + &" ".repeat(pad % 2)
                );
                assert_eq!(tokens(&text), naive(&text), "{sep:?} pad {pad}");
            }
        }
    }

    #[test]
    fn tokens_across_word_boundaries() {
        // Tokens of every length up to 19 at every offset modulo 8, with one
        // uppercase letter anywhere in them.
        for len in 1..20 {
            for upper_at in 0..len {
                for pad in 0..9 {
                    let word: String = (0..len)
                        .map(|i| if i == upper_at { 'X' } else { 'y' })
                        .collect();
                    let text = format!("{}{word}-{word}", " ".repeat(pad));
                    let toks = tokens(&text);
                    let lower = word.to_ascii_lowercase();
                    assert_eq!(toks.len(), 2, "{text:?}");
                    assert_eq!(toks[0].span, pad..pad + len);
                    assert_eq!(toks[1].span, pad + len + 1..text.len());
                    assert_eq!(toks[0].key, lower, "{text:?}");
                    assert_eq!(toks[1].key, lower, "{text:?}");
                }
            }
        }
        assert_eq!(keys("ab C"), ["ab", "c"]);
        assert_eq!(keys("abcdefgh.Z"), ["abcdefgh", "z"]);
    }

    #[test]
    fn ascii_words() {
        assert_eq!(
            keys("The quick, BROWN fox!"),
            ["the", "quick", "brown", "fox"]
        );
        assert_eq!(
            tokens("  ab Cd ")
                .iter()
                .map(|t| t.span.clone())
                .collect::<Vec<_>>(),
            [2..4, 5..7]
        );
        assert!(tokens("").is_empty());
        assert!(tokens(" ,.;-- \n\t").is_empty());
    }

    #[test]
    fn underscores_apostrophes_and_digits_split_or_join() {
        assert_eq!(keys("don't"), ["don", "t"]);
        assert_eq!(keys("snake_case"), ["snake", "case"]);
        assert_eq!(
            keys("x86_64 v1.2.3 3rd"),
            ["x86", "64", "v1", "2", "3", "3rd"]
        );
        // Curly apostrophe is punctuation too.
        assert_eq!(keys("it\u{2019}s"), ["it", "s"]);
    }

    #[test]
    fn non_ascii_digits_are_token_characters() {
        // '²' is No, '٣' (Arabic-Indic three) is Nd, 'Ⅻ' is Nl: all Numeric.
        assert_eq!(keys("x² ٣٣ Ⅻ"), ["x²", "٣٣", "ⅻ"]);
        assert_eq!(texts("e=mc²!"), ["e", "mc²"]);
    }

    #[test]
    fn precomposed_and_decomposed_accents_share_a_key() {
        let nfc = "caf\u{e9}";
        let nfd = "cafe\u{301}";
        assert_eq!(keys(nfc), [nfc]);
        assert_eq!(keys(nfd), [nfc]);
        // The span covers the combining mark.
        assert_eq!(tokens(nfd)[0].span, 0..nfd.len());
        assert_eq!(keys("CAFE\u{301} Cafe\u{301}s"), [nfc, "caf\u{e9}s"]);
    }

    #[test]
    fn a_mark_alone_does_not_start_a_token() {
        assert_eq!(texts("\u{301}abc"), ["abc"]);
        assert_eq!(texts(" \u{301}\u{302} x"), ["x"]);
        assert_eq!(texts("a \u{301}b"), ["a", "b"]);
    }

    #[test]
    fn uppercase_non_ascii() {
        assert_eq!(keys("\u{c9}COLE"), ["\u{e9}cole"]);
        assert_eq!(keys("ÉCOLE"), ["école"]);
        // 'İ' lowercases to 'i' + U+0307, which NFC leaves as two chars.
        assert_eq!(keys("İstanbul"), ["i\u{307}stanbul"]);
        assert_eq!(keys("İ")[0].chars().count(), 2);
        // Final sigma follows str::to_lowercase (and Python's str.lower).
        assert_eq!(keys("ΟΔΟΣ"), ["οδος"]);
        assert_eq!(keys("ΣΑΣ σας"), ["σας", "σας"]);
        assert_eq!(keys("Σ"), ["σ"]);
    }

    #[test]
    fn cjk_run_is_one_token() {
        // Ideographs are alphabetic and nothing separates them: the rule makes
        // a whole run one token, up to punctuation or space.
        assert_eq!(
            keys("中文分词，日本語テキスト"),
            ["中文分词", "日本語テキスト"]
        );
        assert_eq!(keys("abc中文def"), ["abc中文def"]);
        // Hangul syllables and Greek too.
        assert_eq!(keys("한국어 Ελληνικά"), ["한국어", "ελληνικά"]);
    }

    #[test]
    fn replacement_character_splits() {
        assert!(!'\u{FFFD}'.is_alphanumeric());
        assert_eq!(keys("ab\u{FFFD}cd"), ["ab", "cd"]);
        let prepared = crate::text::prepare(b"ab\xffcd \xe2\x82 ef", crate::text::Format::Plain);
        assert_eq!(prepared, "ab\u{FFFD}cd \u{FFFD} ef");
        assert_eq!(keys(&prepared), ["ab", "cd", "ef"]);
    }

    #[test]
    fn ascii_token_running_into_non_ascii() {
        assert_eq!(texts("hello\u{2014}world"), ["hello", "world"]);
        assert_eq!(texts("na\u{ef}ve"), ["na\u{ef}ve"]);
        assert_eq!(texts("e\u{301}"), ["e\u{301}"]);
        assert_eq!(keys("ABC\u{e9}"), ["abc\u{e9}"]);
    }

    #[test]
    fn matches_naive_on_examples() {
        for text in [
            "Hello, World",
            "\u{301}start with a mark",
            "end with a mark e\u{301}",
            "İİ ΣΣ ǅ ﬁ ß ẞ",
            "a_b'c d\u{FFFD}e",
        ] {
            assert_eq!(tokens(text), naive(text), "{text:?}");
        }
    }

    fn mixed_text() -> impl Strategy<Value = String> {
        let alphabet: Vec<&str> = vec![
            "a", "Z", "q", "E", "0", "7", " ", "  ", ".", ",", "-", "\n", "_", "'", "\u{2019}",
            "\u{e9}", "\u{c9}", "e\u{301}", "E\u{301}", "\u{301}", "\u{308}", "\u{20DD}",
            "\u{903}", "\u{93e}", "中", "文", "日", "α", "Σ", "Ω", "ς", "²", "٣", "Ⅻ", "\u{FFFD}",
            "İ", "ß", "ǅ", "ﬁ", "\u{2014}", "\u{a0}", "\u{345}",
        ];
        proptest::collection::vec(proptest::sample::select(alphabet), 0..40)
            .prop_map(|parts| parts.concat())
    }

    /// Long, mostly ASCII text: tokens straddle the 8-byte blocks of the scan.
    fn prose() -> impl Strategy<Value = String> {
        let parts: Vec<&str> = vec![
            "a",
            "Hello",
            "WORLD",
            "x9",
            "abcdefgh",
            "Straddling",
            "0123456789",
            " ",
            " ",
            " ",
            ", ",
            ".\n",
            "_",
            "'",
            "--",
            "\u{e9}",
            "e\u{301}",
            "\u{2019}",
            "\u{2014}",
            "\u{4e2d}",
        ];
        proptest::collection::vec(proptest::sample::select(parts), 0..300)
            .prop_map(|parts| parts.concat())
    }

    /// Random 64-byte blocks of the bytes that matter, for the mask functions.
    fn block() -> impl Strategy<Value = [u8; 64]> {
        let bytes: Vec<u8> = vec![
            b' ', b'0', b'9', b'a', b'z', b'A', b'Z', b'_', b'@', b'[', b'`', b'{', 0x7f, 0x80,
            0x9f, 0xbf, 0xc3, 0xe2, 0xe2, 0xff, 0,
        ];
        proptest::array::uniform32(proptest::sample::select(bytes)).prop_flat_map(|a| {
            proptest::array::uniform32(proptest::sample::select(vec![b'x', 0x80, 0xe2, b' ']))
                .prop_map(move |b| {
                    let mut block = [0u8; 64];
                    block[..32].copy_from_slice(&a);
                    block[32..].copy_from_slice(&b);
                    block
                })
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn block_classes_match_bytes(block in block()) {
            let (word, non_ascii, punctuation) = masks_by_bytes(&block);
            prop_assert_eq!(block_masks(&block), (word, non_ascii));
            prop_assert_eq!(block_masks_swar(&block), (word, non_ascii));
            prop_assert_eq!(punctuation_bytes(&block), punctuation);
            prop_assert_eq!(
                block_classes(&block),
                (word & !punctuation, non_ascii & !punctuation)
            );
        }

        #[test]
        fn matches_naive_on_prose(text in prose()) {
            prop_assert_eq!(tokens(&text), naive(&text));
        }

        #[test]
        fn matches_naive_reference(text in mixed_text()) {
            prop_assert_eq!(tokens(&text), naive(&text));
        }

        #[test]
        fn matches_naive_on_any_string(text in any::<String>()) {
            prop_assert_eq!(tokens(&text), naive(&text));
        }
    }
}
