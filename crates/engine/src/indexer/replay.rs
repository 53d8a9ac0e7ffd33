//! Bring the table up to the document log from cached fingerprints: after an
//! interrupted run (snapshot behind), a lost or damaged snapshot, or a change
//! of engine parameters. No file is read.

use rayon::prelude::*;

use lineage_origin::OriginPass;
use lineage_origin::prepare::{self, Preparer};
use lineage_store::index::{Index, IndexError, Observer, Read};

/// Versions per database read and per transaction.
const CHUNK: u32 = 512;

/// Why a replay stopped.
pub(super) enum Failed {
    /// The index is damaged (why): a rebuild from the files repairs it.
    Damaged(String),
    Error(IndexError),
}

impl From<IndexError> for Failed {
    fn from(e: IndexError) -> Failed {
        match e.damage() {
            Some(why) => Failed::Damaged(why),
            None => Failed::Error(e),
        }
    }
}

/// Process versions `start..` of `ix` through `pass` (which has processed
/// every version before them), then write the table's snapshot. Outcomes of
/// versions `>= through` are (re)written, each chunk in one transaction;
/// those before are already valid and left alone.
pub(super) fn run(
    ix: &mut Index,
    pass: &mut OriginPass,
    preparer: &Preparer,
    start: u32,
    through: u32,
    obs: &mut dyn Observer,
) -> Result<(), Failed> {
    let versions = ix.versions();
    if start >= versions {
        return Ok(());
    }
    let total = u64::from(versions - start);
    let mut at = start;
    let mut repaired = false;
    while at < versions {
        let end = (at + CHUNK).min(versions);
        let fps = match ix.fingerprints(at, end) {
            Ok(fps) => fps,
            // Repaired in place (recomputed from the kept texts), once:
            // a rebuild from the files would drop every replaced and
            // deleted version.
            Err(_) if !repaired && ix.repair_fingerprints(obs)? > 0 => {
                repaired = true;
                continue;
            }
            Err(e) => return Err(Failed::Damaged(format!("cached fingerprints: {e}"))),
        };
        let prepared: Vec<_> = fps.par_iter().map(|f| preparer.prepare(f)).collect();
        drop(fps);
        let mut origins = ix.replay_keys(preparer.roller());
        let outcomes: Vec<_> = prepared
            .iter()
            .enumerate()
            .map(|(i, p)| prepare::run(pass, at + i as u32, p, &mut origins))
            .collect();
        drop(origins);
        ix.put_replayed(&outcomes, through, end)?;
        at = end;
        obs.progress("replaying", u64::from(at - start), total);
    }
    ix.replayed(pass.table_mut())?;
    Ok(())
}
