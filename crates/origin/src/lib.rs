//! Origin detection (Abdel-Hamid et al. 2009): select → table → estimate, and the exact ground
//! truth and metrics it is measured against.

#![warn(missing_docs)]

pub mod align;
pub(crate) mod estimate;
pub(crate) mod exact;
pub mod history;
pub use lineage_core::fingerprint::keymap;
pub mod metrics;
pub mod outcome;
pub(crate) mod pass;
pub mod prepare;
pub mod select;
pub mod sweep;
pub mod table;

pub use estimate::Estimation;
pub use outcome::{Outcome, Run};
pub use pass::{Labeller, OriginPass, Params};
pub use select::{Selector, Unit};
pub use table::{Eviction, Regime, TableSize, Ties};
