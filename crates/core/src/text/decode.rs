//! Bytes to text.

use std::borrow::Cow;

/// UTF-8 with invalid sequences replaced by U+FFFD, as `String::from_utf8_lossy`.
pub(crate) fn decode(bytes: &[u8]) -> Cow<'_, str> {
    // The strict check is the fast path (`from_utf8_lossy` walks chunks even
    // when every byte is valid).
    match std::str::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// A file is binary if its first 8 KiB hold a NUL byte (git's rule).
pub fn looks_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(8192)].contains(&0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_utf8_is_borrowed() {
        let text = "caf\u{e9} \u{4e2d}";
        assert!(matches!(decode(text.as_bytes()), Cow::Borrowed(t) if t == text));
    }

    #[test]
    fn invalid_sequences_become_replacement_characters() {
        assert_eq!(decode(b"a\xffb"), "a\u{FFFD}b");
        // A truncated 3-byte sequence is one replacement, as from_utf8_lossy.
        assert_eq!(decode(b"a\xe2\x82b"), "a\u{FFFD}b");
        assert_eq!(decode(b"\xc3"), "\u{FFFD}");
        // Surrogates encoded in UTF-8 are invalid: one replacement per byte.
        assert_eq!(decode(b"\xed\xa0\x80"), "\u{FFFD}\u{FFFD}\u{FFFD}");
    }

    #[test]
    fn nul_in_first_8_kib_means_binary() {
        assert!(!looks_binary(b""));
        assert!(!looks_binary("plain text \u{e9}".as_bytes()));
        assert!(looks_binary(b"PK\x03\x04\x00"));
        let mut late = vec![b'a'; 8192];
        late.push(0);
        assert!(!looks_binary(&late), "a NUL after 8 KiB is not looked at");
        late[8191] = 0;
        assert!(looks_binary(&late));
    }
}
