//! The pipeline stage that processes a version (docs/architecture.md,
//! "Data flow"): a file is read, prepared (its shingles
//! selected), run through the origin pass with alignment against earlier
//! versions, and handed on in one value, its outcome and its shingle keys,
//! to the index to store and to the clusters to sketch. The index numbers
//! versions and stores them; the algorithms run here.

mod replay;
mod split;

use std::path::Path;

use rayon::prelude::*;

use lineage_core::fingerprint::polynomial::Polynomial;
use lineage_origin::align::OriginKeys;
use lineage_origin::prepare::{self, Preparer};
use lineage_origin::{OriginPass, Outcome, Params};
use lineage_source::{Order, Walk};
use lineage_store::index::{Change, Index, IndexError, Observer, Report, Scope, Syncing};

/// An open index with the origin pass that has processed every version in
/// it, and the preparer that feeds the pass.
pub struct Indexer {
    ix: Index,
    pass: OriginPass,
    preparer: Preparer,
    /// Worker threads of the pass split by bucket range in
    /// [`Indexer::reconcile`] (1: the sequential pass).
    workers: usize,
}

impl Indexer {
    /// Open (creating if needed) the index of `root` in `dir` (see
    /// [`Index::open`]) and bring its table up to the log, replaying the
    /// cached fingerprints where the snapshot is behind; fingerprints found
    /// damaged rebuild the index from the files.
    pub fn open(
        root: &Path,
        dir: &Path,
        params: Params,
        poly: &Polynomial,
        obs: &mut dyn Observer,
    ) -> Result<Indexer, IndexError> {
        let preparer = Preparer::new(params, poly);
        let (mut ix, mut restored) = Index::open(root, dir, params, poly, obs)?;
        loop {
            let mut pass = OriginPass::resume(params, restored.table);
            match replay::run(
                &mut ix,
                &mut pass,
                &preparer,
                restored.start,
                restored.through,
                obs,
            ) {
                Ok(()) => {
                    return Ok(Indexer {
                        ix,
                        pass,
                        preparer,
                        workers: 1,
                    });
                }
                Err(replay::Failed::Damaged(why)) => (ix, restored) = ix.rebuild(&why, obs)?,
                Err(replay::Failed::Error(e)) => return Err(e),
            }
        }
    }

    pub fn index(&self) -> &Index {
        &self.ix
    }

    pub fn index_mut(&mut self) -> &mut Index {
        &mut self.ix
    }

    /// The live origin pass (its table's counters, for display).
    pub fn pass(&self) -> &OriginPass {
        &self.pass
    }

    /// Run [`Indexer::reconcile`]'s pass split by bucket range over
    /// `workers` threads (docs/architecture.md, "Beyond one machine"); 1,
    /// the default, runs it on the calling thread. The answers are the
    /// same. Settings whose table does not split (Lucky, unbounded) run
    /// the sequential pass whatever this says.
    pub fn set_workers(&mut self, workers: usize) {
        self.workers = workers.max(1);
    }

    /// Write the table snapshot if the table has processed versions it does
    /// not cover ([`Index::checkpoint`]).
    pub fn checkpoint(&mut self) -> Result<(), IndexError> {
        self.ix.checkpoint(self.pass.table_mut())
    }

    /// Bring the index up to `walk` (a walk of its root): stat-only changes
    /// first, then the files to read in batches, each one transaction, then
    /// the table snapshot. New files are processed in `order`.
    pub fn reconcile(
        &mut self,
        walk: Walk,
        max_file_size: u64,
        order: Order,
        obs: &mut dyn Observer,
    ) -> Result<Report, IndexError> {
        let mut syncing = self
            .ix
            .begin_sync(walk, &Scope::default(), max_file_size, order)?;
        // The table stays split from one batch to the next, joined once.
        let mut split = split::Split::start(&mut self.pass, self.workers)?;
        let synced = loop {
            match self.step(&mut syncing, split.as_mut(), obs) {
                Ok(Some(_)) => {}
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            }
        };
        if let Some(s) = split {
            self.pass = OriginPass::resume(*self.pass.params(), s.finish()?);
        }
        if matches!(synced, Ok(()) | Err(IndexError::Stopped)) {
            self.checkpoint()?;
        }
        synced.map(|()| syncing.report)
    }

    /// [`Indexer::reconcile`] without writing the table snapshot, also
    /// returning what happened to each file, in order: skips and renames
    /// found by stat first, then the files read, then deletions. (A watcher
    /// checkpoints when it is idle; an index whose snapshot is behind is
    /// caught up from the cached fingerprints when it is opened.) A walk of
    /// part of the root, or of all of it but files being written, says so
    /// in `scope`.
    pub fn sync(
        &mut self,
        walk: Walk,
        scope: &Scope,
        max_file_size: u64,
        order: Order,
        obs: &mut dyn Observer,
    ) -> Result<(Report, Vec<Change>), IndexError> {
        let mut syncing = self.ix.begin_sync(walk, scope, max_file_size, order)?;
        let mut changes = Vec::new();
        while let Some(batch) = self.sync_step(&mut syncing, obs)? {
            changes.extend(batch);
        }
        Ok((syncing.report, changes))
    }

    /// The next changes of `s` (begun by [`Index::begin_sync`]), in order:
    /// those the stat found and the first batch of files read (one
    /// transaction), then a batch at a time; the last adds the deletions.
    /// `None` once the sync is complete.
    pub fn sync_step(
        &mut self,
        s: &mut Syncing,
        obs: &mut dyn Observer,
    ) -> Result<Option<Vec<Change>>, IndexError> {
        self.step(s, None, obs)
    }

    /// [`Indexer::sync_step`], through `split` where given.
    fn step(
        &mut self,
        s: &mut Syncing,
        split: Option<&mut split::Split>,
        obs: &mut dyn Observer,
    ) -> Result<Option<Vec<Change>>, IndexError> {
        if s.finished() {
            return Ok(None);
        }
        let mut changes = s.take_found();
        if !s.batch().is_empty() {
            changes.extend(self.process(s, split)?);
            let (done, total) = s.read_so_far();
            obs.progress("indexing", done, total);
            if done < total {
                // Before deletions are decided: a file not read yet may be
                // where a deleted one went.
                if obs.stopped() {
                    return Err(IndexError::Stopped);
                }
                return Ok(Some(changes));
            }
        }
        changes.extend(self.ix.finish(s)?);
        Ok(Some(changes))
    }

    /// Read and prepare the next batch of `s` (in parallel), let the index
    /// number its new versions, run them through the pass (or `split`) in
    /// that order, and store the batch.
    fn process(
        &mut self,
        s: &mut Syncing,
        split: Option<&mut split::Split>,
    ) -> Result<Vec<Change>, IndexError> {
        let reader = self.ix.reader(s);
        let preparer = &self.preparer;
        // In the batch's order (rayon keeps it).
        let (read, mut ready): (Vec<_>, Vec<_>) = s
            .batch()
            .par_iter()
            .map(|f| {
                let content = reader.read(f);
                let ready = content
                    .as_ref()
                    .ok()
                    .map(|c| preparer.prepare_keeping_keys(c.fps()));
                (content, ready)
            })
            .unzip();
        let batch = self.ix.record(s, read)?;
        let mut done: Vec<(Outcome, Vec<u64>)> = Vec::with_capacity(batch.versions().len());
        {
            let mut stored = batch.earlier_keys(self.preparer.roller());
            let first = batch.versions().first().map_or(0, |v| v.id);
            let versions = batch.versions().iter().map(|v| {
                let ready = ready[v.at].take().expect("a new version was read");
                (v.id, ready)
            });
            match split {
                Some(split) => split.run(versions, first, &mut stored, &mut done)?,
                None => {
                    for (id, (prepared, keys)) in versions {
                        let mut origins = Earlier {
                            first,
                            this_batch: &done,
                            stored: &mut stored,
                        };
                        let outcome = prepare::run(&mut self.pass, id, &prepared, &mut origins);
                        done.push((outcome, keys));
                    }
                }
            }
        }
        batch.commit(done)
    }
}

/// Earlier versions' shingle keys for alignment: those of this batch from
/// the keys in hand (nothing reads back what it has just written), older
/// ones from the index's cached fingerprints.
struct Earlier<'a, S> {
    /// The id of the batch's first new version; those after follow in order.
    first: u32,
    this_batch: &'a [(Outcome, Vec<u64>)],
    stored: &'a mut S,
}

impl<S: OriginKeys> OriginKeys for Earlier<'_, S> {
    fn keys(&mut self, id: u32) -> Option<&[u64]> {
        match id.checked_sub(self.first) {
            Some(i) => self.this_batch.get(i as usize).map(|(_, k)| &k[..]),
            None => self.stored.keys(id),
        }
    }
}

#[cfg(test)]
mod tests;
