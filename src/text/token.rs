//! Tokens (CONTRACT §1): a maximal run that starts with an alphanumeric character
//! and continues with alphanumerics or combining marks (Mn, Mc, Me). The key text
//! is NFC(lowercase(token)).
//!
//! Most text is ASCII, so bytes are scanned directly and an ASCII token's key is
//! either the token itself or an ASCII-lowercased copy in a reused buffer. Only
//! tokens touching a non-ASCII character go through `char` classification,
//! Unicode lowercasing and NFC.

use std::ops::Range;

use unicode_normalization::char::is_combining_mark;
use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfc_quick};

/// A token with its byte span in the prepared text and its key text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    pub span: Range<usize>,
    pub key: String,
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

/// Eight bytes from `i`, little-endian (byte i is the lowest), zero-padded past
/// the end; a zero byte is a separator, so the padding ends any token.
#[inline]
fn load(bytes: &[u8], i: usize) -> u64 {
    match bytes.get(i..i + 8) {
        Some(chunk) => u64::from_le_bytes(chunk.try_into().expect("8 bytes")),
        None => {
            let mut buf = [0u8; 8];
            let rest = &bytes[i.min(bytes.len())..];
            buf[..rest.len()].copy_from_slice(rest);
            u64::from_le_bytes(buf)
        }
    }
}

/// High bit of every byte of `x` (all below 0x80) that lies in `lo..=hi`: adding
/// `0x80 - lo` sets it iff the byte is >= lo, adding `0x7f - hi` iff > hi; no
/// byte carries into the next.
#[inline]
fn in_range(x: u64, lo: u8, hi: u8) -> u64 {
    (x + ONES * u64::from(0x80 - lo)) & !(x + ONES * u64::from(0x7f - hi)) & HIGH
}

/// Per-byte classes of a word, as high bits: ASCII alphanumeric, ASCII
/// uppercase, non-ASCII.
#[inline]
fn classify(w: u64) -> (u64, u64, u64) {
    let non_ascii = w & HIGH;
    let x = w & !HIGH;
    let upper = in_range(x, b'A', b'Z') & !non_ascii;
    // `| 0x20` folds A-Z onto a-z and moves no other byte into a-z.
    let alnum = (in_range(x, b'0', b'9') | in_range(x | (ONES * 0x20), b'a', b'z')) & !non_ascii;
    (alnum, upper, non_ascii)
}

/// Index of the first byte whose high bit is set in `mask` (non-zero).
#[inline]
fn first_byte(mask: u64) -> usize {
    (mask.trailing_zeros() / 8) as usize
}

/// The high bits of bytes `e..8` of a word, `e < 8`.
#[inline]
fn bytes_from(e: usize) -> u64 {
    HIGH & (u64::MAX << (8 * e))
}

/// The high bit of byte `e < 8` of a word.
#[inline]
fn byte_bit(e: usize) -> u64 {
    0x80 << (8 * e)
}

/// Calls `f(span, key)` for every token in document order, without allocating
/// per token (the key borrows a scratch buffer).
pub fn for_each_token(text: &str, mut f: impl FnMut(Range<usize>, &str)) {
    // Eight bytes at a time: each block is classified once with bit masks, and
    // the starts and ends of the tokens in it come from `trailing_zeros` instead
    // of a hard-to-predict branch per byte. A non-ASCII byte hands over to the
    // Unicode path, and the scan resumes wherever that stops.
    let bytes = text.as_bytes();
    let mut scratch = Scratch::default();
    let mut base = 0;
    // The open ASCII token: its start and whether it has an uppercase letter.
    let mut open: Option<(usize, bool)> = None;
    while base < bytes.len() || open.is_some() {
        let (alnum, upper, non_ascii) = classify(load(bytes, base));
        // Bytes of the block not yet consumed.
        let mut rest = HIGH;
        let mut resume = None;
        loop {
            if let Some((start, has_upper)) = open {
                let stop = !alnum & rest;
                if stop == 0 {
                    open = Some((start, has_upper || upper & rest != 0));
                    break;
                }
                let e = first_byte(stop);
                let has_upper = has_upper || upper & rest & !bytes_from(e) != 0;
                open = None;
                if non_ascii & byte_bit(e) != 0 {
                    // It may go on with a letter or an accent: rescan it (once)
                    // on the Unicode path.
                    resume = Some(unicode_token(text, start, &mut scratch, &mut f));
                    break;
                }
                emit_ascii(text, start..base + e, has_upper, &mut scratch, &mut f);
                rest &= bytes_from(e);
            } else {
                let interesting = (alnum | non_ascii) & rest;
                if interesting == 0 {
                    break;
                }
                let s = first_byte(interesting);
                if non_ascii & byte_bit(s) != 0 {
                    let i = base + s;
                    let c = next_char(text, i);
                    resume = Some(if is_token_start(c) {
                        unicode_token(text, i, &mut scratch, &mut f)
                    } else {
                        i + c.len_utf8()
                    });
                    break;
                }
                open = Some((base + s, false));
                rest &= bytes_from(s);
            }
        }
        base = resume.unwrap_or(base + 8);
    }
}

#[inline]
fn next_char(text: &str, i: usize) -> char {
    text[i..].chars().next().expect("index inside the text")
}

/// `c.is_alphanumeric()`, answering at once for General Punctuation
/// (U+2000..U+206F: dashes, quotes, spaces), common next to words.
#[inline]
fn is_token_start(c: char) -> bool {
    !('\u{2000}'..='\u{206F}').contains(&c) && c.is_alphanumeric()
}

#[inline]
fn emit_ascii(
    text: &str,
    span: Range<usize>,
    has_upper: bool,
    scratch: &mut Scratch,
    f: &mut impl FnMut(Range<usize>, &str),
) {
    let token = &text[span.clone()];
    if has_upper {
        scratch.lower.clear();
        scratch.lower.push_str(token);
        scratch.lower.make_ascii_lowercase();
        f(span, &scratch.lower);
    } else {
        f(span, token);
    }
}

/// The token starting at `start` (an alphanumeric character): finds its end,
/// emits it and returns the end.
fn unicode_token(
    text: &str,
    start: usize,
    scratch: &mut Scratch,
    f: &mut impl FnMut(Range<usize>, &str),
) -> usize {
    let mut end = text.len();
    let mut ascii = true;
    let mut has_upper = false;
    for (offset, c) in text[start..].char_indices() {
        if c.is_ascii() {
            if !c.is_ascii_alphanumeric() {
                end = start + offset;
                break;
            }
            has_upper |= c.is_ascii_uppercase();
        } else if is_token_start(c) || is_combining_mark(c) {
            ascii = false;
        } else {
            end = start + offset;
            break;
        }
    }
    if ascii {
        emit_ascii(text, start..end, has_upper, scratch, f);
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
        f(start..end, lower);
    } else {
        scratch.nfc.clear();
        scratch.nfc.extend(lower.nfc());
        f(start..end, &scratch.nfc);
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

    /// CONTRACT §1 written out with chars, as the Python check reads it.
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

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

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
