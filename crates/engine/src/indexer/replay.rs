//! Bring the table up to the document log from cached fingerprints: after an
//! interrupted run (snapshot behind), a lost or damaged snapshot, or a change
//! of engine parameters. No file is read.

use rayon::prelude::*;

use lineage_origin::OriginPass;
use lineage_origin::prepare::{self, Preparer};
use lineage_store::index::{Index, IndexError, Observer, Read};

use super::SPLIT_FILES;
use super::split::Split;

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
/// those before are already valid and left alone. A replay of
/// [`SPLIT_FILES`] versions or more splits the pass over `workers`
/// threads (see [`super::Indexer::drive`]).
pub(super) fn run(
    ix: &mut Index,
    pass: &mut OriginPass,
    preparer: &Preparer,
    (start, through): (u32, u32),
    workers: usize,
    obs: &mut dyn Observer,
) -> Result<(), Failed> {
    let versions = ix.versions();
    if start >= versions {
        return Ok(());
    }
    let total = u64::from(versions - start);
    let mut split = if total >= SPLIT_FILES {
        Split::start(pass, workers)?
    } else {
        None
    };
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
        let outcomes: Vec<_> = match split.as_mut() {
            Some(split) => {
                let ids = (at..).zip(prepared).map(|(id, p)| (id, p, ()));
                let answered = split.answer(ids)?;
                let mut outcomes = Vec::with_capacity(answered.len());
                for (a, sizes, ()) in answered {
                    outcomes.push(split.label(&a, sizes, &mut origins));
                }
                outcomes
            }
            None => (at..)
                .zip(&prepared)
                .map(|(id, p)| prepare::run(pass, id, p, &mut origins))
                .collect(),
        };
        drop(origins);
        ix.put_replayed(&outcomes, through, end)?;
        at = end;
        obs.progress("replaying", u64::from(at - start), total);
    }
    if let Some(split) = split {
        *pass = OriginPass::resume(*pass.params(), split.finish()?);
    }
    ix.replayed(pass.table_mut())?;
    Ok(())
}
