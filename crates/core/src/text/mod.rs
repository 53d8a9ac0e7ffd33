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

/// Where a prepared text's lines stand in its file: marks (a byte of the
/// prepared text, the file's line there), in order, the prepared text's
/// own line breaks counted between them. A plain file's lines are its own
/// (a mark at each line's start); an HTML file's are not (its markup goes,
/// block tags bring lines), so they are read off the stripping.
#[derive(Clone, Debug)]
pub struct SourceLines(Vec<(usize, u32)>);

impl SourceLines {
    /// The map of `text`, prepared from a file's `bytes` in `format`.
    pub fn new(bytes: &[u8], format: Format, text: &str) -> SourceLines {
        SourceLines(match format {
            Format::Plain => (std::iter::once(0))
                .chain(text.match_indices('\n').map(|(i, _)| i + 1))
                .zip(1u32..)
                .collect(),
            Format::Html => html::line_marks(&decode(bytes)),
        })
    }

    /// The file's line (from 1) of byte `at` of its prepared text `text`.
    pub fn line(&self, text: &str, at: usize) -> usize {
        let at = at.min(text.len());
        let i = self.0.partition_point(|m| m.0 <= at).saturating_sub(1);
        let (from, line) = self.0.get(i).copied().unwrap_or((0, 1));
        let between = text.get(from.min(at)..at).unwrap_or("");
        line as usize + between.bytes().filter(|&b| b == b'\n').count()
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
