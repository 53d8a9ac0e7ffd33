//! Origin detection (seed 003): select → table → estimate, and the exact ground
//! truth and metrics it is measured against.

pub mod select;
