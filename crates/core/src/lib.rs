//! What every layer of lineage shares: byte counts as people write them,
//! civil dates, lineage's own files (atomic writes, bounded reads, the frame
//! of its binary formats), text (decoding, HTML, tokens with byte spans) and its Rabin
//! fingerprints and shingle keys. docs/architecture.md orders the crates.
#![warn(missing_docs)]

pub mod bytesize;
pub mod civil;
pub mod fsio;
pub mod text;
// Fingerprints are of tokens: this module uses `text`, never the reverse.
pub mod fingerprint;
