//! Decoding, HTML stripping and tokenizing (docs/formats.md §1). No dependency on the rest.
//!
//! A document's *prepared text* is its bytes decoded as UTF-8 (invalid sequences
//! become U+FFFD) and, for HTML, with markup replaced by spaces and entities
//! decoded. Token spans are byte ranges into the prepared text.

use std::borrow::Cow;

pub(crate) mod decode;
pub mod find;
pub(crate) mod html;
pub mod token;

pub(crate) use decode::decode;
pub use decode::looks_binary;
pub use token::{Token, TokenSink, for_each_token, scan_tokens, tokens};

/// How a file's bytes become prepared text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Decoded as UTF-8, nothing else.
    Plain,
    /// Decoded, then tags, comments, scripts and styles stripped and
    /// entities decoded.
    Html,
}

impl Format {
    /// `.html` and `.htm` (any case) are HTML; everything else is plain.
    pub fn from_path(path: &str) -> Format {
        let lower = path.rsplit('.').next().unwrap_or("").to_ascii_lowercase();
        if path.contains('.') && (lower == "html" || lower == "htm") {
            Format::Html
        } else {
            Format::Plain
        }
    }
}

/// The prepared text of a document.
pub fn prepare(bytes: &[u8], format: Format) -> Cow<'_, str> {
    let text = decode(bytes);
    match format {
        Format::Plain => text,
        Format::Html => Cow::Owned(html::strip(&text)),
    }
}
