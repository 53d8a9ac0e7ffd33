//! `reconcile`'s pass split by bucket range (`lineage-split`): the table's
//! lookups on worker threads, the labels here, where alignment reads the
//! batch's earlier versions from the transaction as the sequential pass
//! does. A batch is handed over whole and every answer gathered before it
//! is stored; the table stays split until the sync is over.

use lineage_origin::align::OriginKeys;
use lineage_origin::prepare::Prepared;
use lineage_origin::{Labeller, OriginPass, Outcome};
use lineage_split::{Answered, SplitError, SplitLookups, splits};
use lineage_store::index::IndexError;

use super::Earlier;

/// The split lookups and the labeller that follows them.
pub(super) struct Split {
    lookups: SplitLookups<()>,
    labeller: Labeller,
}

impl Split {
    /// Borrow `pass`'s table for `workers` threads, where there are more
    /// than one and the table splits; `None` leaves the pass as it is.
    pub(super) fn start(
        pass: &mut OriginPass,
        workers: usize,
    ) -> Result<Option<Split>, IndexError> {
        let params = *pass.params();
        if workers <= 1 || !splits(&params) {
            return Ok(None);
        }
        let lookups = SplitLookups::new(params, pass.take_table(), workers).map_err(failed)?;
        Ok(Some(Split {
            lookups,
            labeller: Labeller::new(params),
        }))
    }

    /// The outcomes of `versions` (id, prepared, all shingle keys), in
    /// order, onto `done` (the batch so far, which alignment reads).
    pub(super) fn run<S: OriginKeys>(
        &mut self,
        versions: impl Iterator<Item = (u32, (Prepared, Vec<u64>))>,
        first: u32,
        stored: &mut S,
        done: &mut Vec<(Outcome, Vec<u64>)>,
    ) -> Result<(), IndexError> {
        let mut answered = Vec::new();
        let mut kept = Vec::new();
        for (id, (prepared, keys)) in versions {
            let Prepared {
                tokens,
                shingles,
                units,
            } = prepared;
            kept.push((tokens, shingles, keys));
            self.lookups
                .push(id, units, (), |a| keep(&mut answered, a))
                .map_err(failed)?;
        }
        self.lookups
            .flush(|a| keep(&mut answered, a))
            .map_err(failed)?;
        let mut unit_keys = Vec::new();
        for (a, (tokens, shingles, keys)) in answered.into_iter().zip(kept) {
            unit_keys.clear();
            unit_keys.extend(a.units.iter().map(|u| u.key));
            let mut origins = Earlier {
                first,
                this_batch: done,
                stored,
            };
            let labels = self.labeller.label(
                a.id,
                &unit_keys,
                &a.hits,
                &a.slots,
                || a.incomplete,
                &mut origins,
            );
            let spans = a.units.iter().map(|u| (u.start, u.end));
            let outcome = Outcome::new(a.id, tokens, shingles, spans, labels);
            done.push((outcome, keys));
        }
        Ok(())
    }

    /// The table, joined.
    pub(super) fn finish(self) -> Result<lineage_origin::table::Table, IndexError> {
        self.lookups.finish().map_err(failed)
    }
}

fn keep(answered: &mut Vec<Answered<()>>, a: Answered<()>) -> Result<(), SplitError> {
    answered.push(a);
    Ok(())
}

fn failed(e: SplitError) -> IndexError {
    match e {
        SplitError::Table(e) => IndexError::Table(e),
        e => IndexError::Pass(e.to_string()),
    }
}
