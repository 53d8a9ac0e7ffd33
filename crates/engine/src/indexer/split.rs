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

/// The split lookups and the labeller that follows them.
pub(super) struct Split {
    lookups: SplitLookups<()>,
    labeller: Labeller,
    keys: Vec<u64>,
}

/// A version's tokens and shingles, for its outcome.
pub(super) struct Sizes {
    tokens: u32,
    shingles: u32,
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
            keys: Vec::new(),
        }))
    }

    /// The table's answers to `versions` (id, prepared, what comes back
    /// with it), in order: the batch handed over whole, every answer
    /// gathered.
    pub(super) fn answer<K>(
        &mut self,
        versions: impl Iterator<Item = (u32, Prepared, K)>,
    ) -> Result<Vec<(Answered<()>, Sizes, K)>, IndexError> {
        let mut answered = Vec::new();
        let mut kept = Vec::new();
        for (id, prepared, k) in versions {
            let Prepared {
                tokens,
                shingles,
                units,
            } = prepared;
            kept.push((Sizes { tokens, shingles }, k));
            self.lookups
                .push(id, units, (), |a| keep(&mut answered, a))
                .map_err(failed)?;
        }
        self.lookups
            .flush(|a| keep(&mut answered, a))
            .map_err(failed)?;
        Ok(answered
            .into_iter()
            .zip(kept)
            .map(|(a, (sizes, k))| (a, sizes, k))
            .collect())
    }

    /// A version's outcome from its answers, as the sequential pass gives
    /// it; `origins` gives earlier versions' keys (every version before
    /// this one labelled).
    pub(super) fn label(
        &mut self,
        a: &Answered<()>,
        sizes: Sizes,
        origins: &mut dyn OriginKeys,
    ) -> Outcome {
        self.keys.clear();
        self.keys.extend(a.units.iter().map(|u| u.key));
        let labels = self.labeller.label(
            a.id,
            &self.keys,
            &a.hits,
            &a.slots,
            || a.incomplete,
            origins,
        );
        let spans = a.units.iter().map(|u| (u.start, u.end));
        Outcome::new(a.id, sizes.tokens, sizes.shingles, spans, labels)
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
