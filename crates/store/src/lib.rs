//! The local index of a watched folder (`index`: the SQLite document log,
//! cached fingerprints, every version's text, the table's snapshot).
//! docs/architecture.md orders the crates.
#![warn(missing_docs)]

pub mod index;
