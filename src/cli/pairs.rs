//! `lineage pairs ROOT`: near-duplicate pairs and clusters (CONTRACT §6).
