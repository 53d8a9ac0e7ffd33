//! Bytes to text.

use std::borrow::Cow;

/// UTF-8 with invalid sequences replaced by U+FFFD, as `String::from_utf8_lossy`.
pub fn decode(bytes: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}

/// A file is binary if its first 8 KiB hold a NUL byte (git's rule).
pub fn looks_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(8192)].contains(&0)
}
