//! Storing and reading: a folder read into documents in order (`corpus`,
//! what the headless commands start from) and the local index of a watched
//! folder (`index`: the SQLite document log, cached fingerprints, every
//! version's text, the table's snapshot). docs/architecture.md orders the
//! crates.
#![warn(missing_docs)]

// A folder read into documents; `index` uses it, never the reverse.
pub mod corpus;
pub mod index;
