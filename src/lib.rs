//! lineage: what in a folder of documents is copied from where.
//!
//! Layers only look down: `text` → `fingerprint` → `origin` → `source` → `index`
//! → `cli`; `tui` (the only user of ratatui) draws the engine's state.
//! The algorithms follow the seed papers; `../shared/ALGORITHMS.md` restates them
//! and `../shared/spec/CONTRACT.md` fixes the definitions and the JSON interface.

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
