//! One pass of origin detection over documents in order: each document's
//! selected units are looked up in (and inserted into) the table, then the
//! estimation phase labels them, then lucky scores are updated.

use super::estimate::{Estimation, Estimator, lucky_increments};
use super::select::{Selector, Unit};
use super::table::{Eviction, Hit, Layout, Slot, Table, TableError, TableParams, TableSize, Ties};

/// The settings of an estimated run (docs/formats.md §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Params {
    pub k: usize,
    pub selector: Selector,
    pub table_size: TableSize,
    pub bucket_entries: u16,
    pub eviction: Eviction,
    pub ties: Ties,
    pub estimation: Estimation,
    pub bridge_limit: u32,
    pub seed: u64,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            k: 8,
            selector: Selector::NHs,
            table_size: TableSize::Bytes(64 << 20),
            bucket_entries: 64,
            eviction: Eviction::Lucky,
            ties: Ties::Oldest,
            estimation: Estimation::Be,
            bridge_limit: 30,
            seed: 0,
        }
    }
}

impl Params {
    /// The table these settings need: entries carry only the fields the
    /// eviction and estimation algorithms read.
    pub fn table_params(&self) -> TableParams {
        TableParams {
            size: self.table_size,
            bucket_entries: self.bucket_entries,
            eviction: self.eviction,
            ties: self.ties,
            layout: Layout {
                offset: self.estimation.needs_offset(),
                neighbours: self.estimation.needs_neighbours(),
                score: matches!(self.eviction, Eviction::Cc | Eviction::Lucky),
            },
            seed: self.seed,
        }
    }
}

/// The state of a run: the table and reusable scratch space.
pub struct OriginPass {
    params: Params,
    table: Table,
    estimator: Estimator,
    keys: Vec<u64>,
    hits: Vec<Option<Hit>>,
    slots: Vec<Slot>,
    labels: Vec<u32>,
    incs: Vec<u32>,
}

impl OriginPass {
    pub fn new(params: Params) -> Result<OriginPass, TableError> {
        Ok(OriginPass::resume(
            params,
            Table::new(params.table_params())?,
        ))
    }

    /// Continue a run from a table restored with [`Table::read_state`] (built
    /// with `params.table_params()`).
    pub(crate) fn resume(params: Params, table: Table) -> OriginPass {
        OriginPass {
            table,
            params,
            estimator: Estimator::default(),
            keys: Vec::new(),
            hits: Vec::new(),
            slots: Vec::new(),
            labels: Vec::new(),
            incs: Vec::new(),
        }
    }

    pub fn params(&self) -> &Params {
        &self.params
    }

    pub fn table(&self) -> &Table {
        &self.table
    }

    /// Process document `doc`, later than every document before it, from its
    /// selected units: the estimated origin of each unit.
    pub fn process(&mut self, doc: u32, units: &[Unit]) -> &[u32] {
        self.keys.clear();
        self.keys.extend(units.iter().map(|u| u.key));
        let keys = &self.keys;
        self.table
            .lookup_document(doc, keys, &mut self.hits, &mut self.slots);
        let p = &self.params;
        self.estimator.estimate(
            p.estimation,
            doc,
            keys,
            &self.hits,
            p.bridge_limit,
            &mut self.labels,
        );
        if p.eviction == Eviction::Lucky && p.table_size != TableSize::Unbounded {
            lucky_increments(doc, &self.hits, &self.labels, &mut self.incs);
            self.table
                .lucky_update(keys, &self.slots, &self.hits, &self.incs);
            self.table.lucky_end_document();
        }
        &self.labels
    }
}
