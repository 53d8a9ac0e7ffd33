//! Bring the table up to the document log from cached fingerprints: after an
//! interrupted run (snapshot behind), a lost or damaged snapshot, or a change
//! of engine parameters. No file is read.

use std::ops::Range;

use rayon::prelude::*;

use super::origins::CachedKeys;
use super::schema::{self, Db};
use super::{Load, Observer};
use lineage_origin::OriginPass;
use lineage_origin::prepare::{self, Preparer};

/// Versions per database read and per transaction.
const CHUNK: u32 = 512;

/// Process `versions` through `pass` (which has processed every version
/// before them). Outcomes of versions `>= through` are (re)written, each chunk
/// in one transaction that also advances `outcomes_through`; those before are
/// already valid and left alone.
pub(super) fn run(
    db: &mut Db,
    pass: &mut OriginPass,
    preparer: &Preparer,
    versions: Range<u32>,
    through: u32,
    obs: &mut dyn Observer,
) -> Result<(), Load> {
    let total = u64::from(versions.end - versions.start);
    let mut at = versions.start;
    while at < versions.end {
        let end = (at + CHUNK).min(versions.end);
        let fps = db
            .fingerprints(at, end)
            .map_err(|e| Load::Rebuild(format!("cached fingerprints: {e}")))?;
        let prepared: Vec<_> = fps.par_iter().map(|f| preparer.prepare(f)).collect();
        let mut origins = CachedKeys::new(db.conn(), preparer.roller());
        let outcomes: Vec<_> = prepared
            .iter()
            .enumerate()
            .map(|(i, p)| prepare::run(pass, at + i as u32, p, &mut origins))
            .collect();
        drop(origins);
        if end > through {
            let tx = db.transaction()?;
            for o in outcomes.iter().filter(|o| o.id >= through) {
                schema::put_outcome(&tx, o)?;
            }
            schema::set_meta(&tx, "outcomes_through", &end.to_string())?;
            tx.commit()?;
        }
        at = end;
        obs.progress("replaying", u64::from(at - versions.start), total);
    }
    Ok(())
}
