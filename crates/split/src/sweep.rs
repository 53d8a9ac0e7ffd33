//! A sweep's runs (cells) replayed through the split pass: where a sweep has
//! fewer runs than threads, the spare threads split a run by bucket range
//! rather than idle. The labels and the table are the sequential pass's, so
//! every run's figures are too.

use std::sync::{Arc, Mutex};

use lineage_origin::align::UnitKeys;
use lineage_origin::sweep::{Cell, EachLabelled, Replayer, Sequential};
use lineage_origin::table::{Counters, Table};
use lineage_origin::{Params, Unit};

use crate::{KeyStore, Labelled, Options, SplitError, SplitPass, splits};

/// Replays a sweep's runs over `workers` threads in all: a run is split
/// only where the runs leave threads idle (the rule: `cell_workers`).
pub struct SplitReplay {
    workers: usize,
}

impl SplitReplay {
    /// Over `workers` threads in all (1: every run sequential).
    pub fn new(workers: usize) -> SplitReplay {
        SplitReplay { workers }
    }
}

/// The allocation rule: with `workers` threads (W) and `cells` runs to
/// replay (C), a run is split only where its table splits ([`splits`]) and
/// W / min(C, W) ≥ 2, that is where the runs leave threads idle; it then
/// gets W / C workers (integer division), the runs still replayed at once.
/// `None`: the sequential pass.
pub(crate) fn cell_workers(workers: usize, cells: usize, params: &Params) -> Option<usize> {
    let busy = cells.min(workers).max(1);
    (splits(params) && workers / busy >= 2).then(|| workers / cells.max(1))
}

impl Replayer for SplitReplay {
    fn replay(&self, cell: &Cell<'_>, each: EachLabelled<'_>) -> Option<Counters> {
        let Some(workers) = cell_workers(self.workers, cell.cells, &cell.params) else {
            return Sequential.replay(cell, each);
        };
        let p = cell.params;
        // Validated by the sweep.
        let table = Table::new(p.table_params()).ok()?;
        let origins = Arc::new(Mutex::new(UnitKeys::new(cell.units.clone())));
        let mut pass = SplitPass::<()>::new(p, table, Options::new(workers), origins).ok()?;
        let mut done = |l: Labelled<'_, ()>| {
            if each(l.id, &l.units, l.labels) {
                Ok(())
            } else {
                Err(Stop)
            }
        };
        for (d, units) in cell.units.iter().enumerate() {
            pass.push(d as u32, units.clone(), (), &mut done).ok()?;
        }
        let ended = pass.finish(&mut done).ok()?;
        Some(ended.table()?.counters())
    }
}

/// Why a split replay ended early: stopped by the sweep, or failed (a
/// worker's panic, a bug), which the sweep reports as stopped.
struct Stop;

impl From<SplitError> for Stop {
    fn from(_: SplitError) -> Stop {
        Stop
    }
}

/// The sweep holds every document's units from the start: nothing to keep.
impl KeyStore for UnitKeys<Arc<[Vec<Unit>]>> {
    fn keep(&mut self, _: u32, _: Vec<u64>) -> Result<(), String> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lineage_origin::{Eviction, TableSize};

    #[test]
    fn runs_split_only_where_threads_would_idle() {
        let p = Params {
            table_size: TableSize::Bytes(1 << 20),
            eviction: Eviction::Cc,
            ..Params::default()
        };
        assert_eq!(cell_workers(16, 1, &p), Some(16));
        assert_eq!(cell_workers(16, 3, &p), Some(5));
        assert_eq!(cell_workers(16, 8, &p), Some(2));
        assert_eq!(cell_workers(16, 9, &p), None);
        assert_eq!(cell_workers(16, 40, &p), None);
        assert_eq!(cell_workers(2, 1, &p), Some(2));
        assert_eq!(cell_workers(1, 1, &p), None);
        let lucky = Params {
            eviction: Eviction::Lucky,
            ..p
        };
        assert_eq!(cell_workers(16, 1, &lucky), None);
        let unbounded = Params {
            table_size: TableSize::Unbounded,
            ..p
        };
        assert_eq!(cell_workers(16, 1, &unbounded), None);
    }
}
