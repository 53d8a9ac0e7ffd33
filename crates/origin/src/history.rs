//! The documents of a run in processing order, and replays over them.
//!
//! Token fingerprints are computed once per document; shingle keys once per k;
//! selections once per selector. A replay with other table or estimation
//! settings touches only selection output, the table and the estimator
//! (the "sweeps replay, they do not re-read"). `Keyed` holds all of
//! it for the whole history (24 bytes a token): the reference that sweeps
//! (which keep only selections, `origin::sweep`) and the index are tested
//! against, and what benchmarks and examples replay.

use rayon::prelude::*;

use super::exact::all_origins;
use super::outcome::Outcome;
use super::pass::{OriginPass, Params};
use super::select::{DocKeys, Selector, Unit};
use super::table::{Counters, Table, TableError};
use lineage_core::fingerprint::ShingleRoller;
use lineage_core::fingerprint::polynomial::Polynomial;

/// Every document's keys for one shingle length k, in processing order.
pub struct Keyed {
    /// Tokens a shingle.
    pub k: usize,
    /// The polynomial's mix key ([`DocKeys::mix`]).
    pub mix: u64,
    /// Each document's token fingerprints.
    pub token_fps: Vec<Vec<u64>>,
    /// Each document's token hashes (`fmix64` of the fingerprints: Hailstorm's
    /// order and hash-breaking).
    pub token_hashes: Vec<Vec<u64>>,
    /// Each document's k-shingle keys, in document order.
    pub shingle_keys: Vec<Vec<u64>>,
}

/// What a replay leaves behind besides per-document outcomes.
#[derive(Clone, Copy, Debug)]
pub struct ReplayStats {
    /// The table's totals over the replay.
    pub counters: Counters,
    /// Entries the table can hold; `None` when unbounded.
    pub capacity: Option<u64>,
    /// Number of buckets; `None` when unbounded.
    pub buckets: Option<u64>,
    /// Bytes per table entry.
    pub entry_bytes: u64,
    /// False matches a lookup can make at most ([`Table::false_match_bound`]).
    ///
    /// [`Table::false_match_bound`]: crate::table::Table::false_match_bound
    pub false_match: Option<f64>,
    /// Whether the table still holds every distinct key it was given.
    pub regime: crate::Regime,
}

impl ReplayStats {
    /// The table of `pass` now.
    pub fn of(pass: &OriginPass) -> ReplayStats {
        ReplayStats::of_table(pass.table(), pass.params())
    }

    /// Table `t`, built with `params.table_params()`, now.
    pub fn of_table(t: &Table, params: &Params) -> ReplayStats {
        ReplayStats {
            counters: t.counters(),
            capacity: t.capacity(),
            buckets: t.buckets(),
            entry_bytes: params.table_params().layout.entry_bytes(),
            false_match: t.false_match_bound(),
            regime: t.regime(),
        }
    }
}

impl Keyed {
    /// Compute hashes and shingle keys of every document (in parallel),
    /// under `poly`.
    pub fn new(poly: &Polynomial, token_fps: Vec<Vec<u64>>, k: usize) -> Keyed {
        let roller = ShingleRoller::new(poly, k);
        let (token_hashes_v, shingle_keys_v) = token_fps
            .par_iter()
            .map(|fps| super::prepare::keys(&roller, fps))
            .unzip();
        Keyed {
            k,
            mix: roller.mix(),
            token_fps,
            token_hashes: token_hashes_v,
            shingle_keys: shingle_keys_v,
        }
    }

    /// Documents held.
    pub fn len(&self) -> usize {
        self.token_fps.len()
    }
    /// Whether no document is held.
    pub fn is_empty(&self) -> bool {
        self.token_fps.is_empty()
    }

    /// Shingles of all documents.
    pub fn total_shingles(&self) -> u64 {
        self.shingle_keys.iter().map(|s| s.len() as u64).sum()
    }

    pub(crate) fn doc_keys(&self, doc: usize) -> DocKeys<'_> {
        DocKeys {
            token_fps: &self.token_fps[doc],
            token_hashes: &self.token_hashes[doc],
            shingle_keys: &self.shingle_keys[doc],
            k: self.k,
            mix: self.mix,
        }
    }

    /// The exact result of every document (docs/formats.md §3).
    pub fn exact(&self) -> Vec<Outcome> {
        let k = self.k as u32;
        all_origins(&self.shingle_keys)
            .par_iter()
            .enumerate()
            .map(|(d, labels)| {
                let n = labels.len() as u32;
                let units = (0..n).map(|i| (i, i + k));
                Outcome::new(d as u32, self.token_fps[d].len() as u32, n, units, labels)
            })
            .collect()
    }

    /// Every document's selected units (in parallel: selection is per document).
    pub fn select(&self, selector: Selector) -> Vec<Vec<Unit>> {
        (0..self.len())
            .into_par_iter()
            .map(|d| {
                let mut out = Vec::new();
                selector.select(&self.doc_keys(d), &mut out);
                out
            })
            .collect()
    }

    /// Run origin detection over `units` (from [`Keyed::select`] with
    /// `params.selector`), calling `each` with every document's outcome in order.
    pub fn replay(
        &self,
        units: &[Vec<Unit>],
        params: Params,
        mut each: impl FnMut(Outcome),
    ) -> Result<ReplayStats, TableError> {
        self.replay_labels(units, params, |d, doc_units, labels| {
            each(Outcome::new(
                d as u32,
                self.token_fps[d].len() as u32,
                self.shingle_keys[d].len() as u32,
                doc_units.iter().map(|u| (u.start, u.end)),
                labels,
            ));
        })
    }

    /// As [`Keyed::replay`], but `each` gets every document's index, units and
    /// their labels instead of an outcome (sweeps score these directly).
    pub(crate) fn replay_labels(
        &self,
        units: &[Vec<Unit>],
        params: Params,
        mut each: impl FnMut(usize, &[Unit], &[u32]),
    ) -> Result<ReplayStats, TableError> {
        debug_assert_eq!(params.k, self.k);
        let mut pass = OriginPass::new(params)?;
        for (d, doc_units) in units.iter().enumerate() {
            let origins = &mut &self.shingle_keys[..];
            each(d, doc_units, pass.process(d as u32, doc_units, origins));
        }
        Ok(ReplayStats::of(&pass))
    }
}
