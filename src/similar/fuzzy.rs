//! See similar/mod.rs.
