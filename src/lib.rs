//! lineage: what in a folder of documents is copied from where.
//!
//! The modules are layers that only look down; `docs/architecture.md` states
//! the order (and `tests/layers.rs` enforces it). `docs/algorithms.md`
//! describes the algorithms as implemented, `docs/formats.md` the definitions
//! and every JSON and file format.

pub mod bytesize;
pub mod cli;
pub mod config;
pub mod corpus;
pub mod engine;
pub mod fingerprint;
pub mod fsio;
pub mod index;
pub mod origin;
pub mod similar;
pub mod source;
pub mod text;
pub mod tui;
