//! The pipeline stage that processes a version (docs/architecture.md,
//! "Data flow"): a file is read, prepared (its shingles
//! selected), run through the origin pass with alignment against earlier
//! versions, and handed on in one value, its outcome and its shingle keys,
//! to the index to store and to the clusters to sketch. The index numbers
//! versions and stores them; the algorithms run here.

mod import;
mod replay;
mod split;

pub use import::Imported;

use std::path::Path;

use rayon::prelude::*;

use lineage_core::fingerprint::polynomial::Polynomial;
use lineage_origin::Regime;
use lineage_origin::align::OriginKeys;
use lineage_origin::prepare::{self, Preparer};
use lineage_origin::table::Table;
use lineage_origin::{OriginPass, Outcome, Params};
use lineage_source::{FileEntry, Order, Walk};
use lineage_store::index::{
    Change, Content, Departure, Index, IndexError, NotRead, Observer, PendingTable, Quiet, Read,
    Reader, Report, Scope, Syncing, TableState,
};

/// An open index with the origin pass that has processed every version in
/// it, and the preparer that feeds the pass.
pub struct Indexer {
    ix: Index,
    /// The pass; None until its table is made from `pending`, when the
    /// first version is processed or the pass is asked for.
    pass: Option<OriginPass>,
    /// The table's snapshot read and checked, where the open had nothing
    /// to replay: a command that processes nothing never makes the table.
    pending: Option<PendingTable>,
    preparer: Preparer,
    /// Threads of the pass split by bucket range (1: the sequential pass).
    workers: usize,
    /// The repository whose history the index reads, once settled by the
    /// first [`Indexer::read_history`]: `Some(None)` where its versions come
    /// from the folder. The index keeps its source, so a watcher's syncs
    /// neither look for a repository nor open one again.
    history: Option<Option<lineage_source::history::Repo>>,
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
        Indexer::open_with(root, dir, params, poly, 1, obs)
    }

    /// [`Indexer::open`], the pass of its replay and of its syncs split by
    /// bucket range over `workers` threads (docs/architecture.md, "Data
    /// flow"); 1 runs it on the calling thread. The answers are the same.
    /// Settings whose table does not split (Lucky, unbounded) run the
    /// sequential pass whatever this says.
    pub fn open_with(
        root: &Path,
        dir: &Path,
        params: Params,
        poly: &Polynomial,
        workers: usize,
        obs: &mut dyn Observer,
    ) -> Result<Indexer, IndexError> {
        let preparer = Preparer::new(params, poly);
        let workers = workers.max(1);
        let (mut ix, mut restored) = Index::open(root, dir, params, poly, obs)?;
        loop {
            let table = match restored.table {
                TableState::Ready(t) => t,
                TableState::Pending(pending) => {
                    // Every version is in the table the snapshot holds.
                    return Ok(Indexer {
                        ix,
                        pass: None,
                        pending: Some(pending),
                        preparer,
                        workers,
                        history: None,
                    });
                }
            };
            let mut pass = OriginPass::resume(params, table);
            let versions = (restored.start, restored.through);
            match replay::run(&mut ix, &mut pass, &preparer, versions, workers, obs) {
                Ok(()) => {
                    return Ok(Indexer {
                        ix,
                        pass: Some(pass),
                        pending: None,
                        preparer,
                        workers,
                        history: None,
                    });
                }
                Err(replay::Failed::Damaged(why)) => (ix, restored) = ix.rebuild(&why, obs)?,
                Err(replay::Failed::Error(e)) => return Err(e),
            }
        }
    }

    /// The index the indexer keeps.
    pub fn index(&self) -> &Index {
        &self.ix
    }

    /// The index the indexer keeps, to change.
    pub fn index_mut(&mut self) -> &mut Index {
        &mut self.ix
    }

    /// The root whose files the index holds.
    pub(crate) fn root(&self) -> &Path {
        self.ix.root()
    }

    /// The settings the index was built with.
    pub(crate) fn params(&self) -> &Params {
        self.ix.params()
    }

    /// The live origin pass (its table's counters, for display); None
    /// until its table is made ([`Indexer::make_table`]): an indexer whose
    /// open had nothing to replay makes it when it first processes a
    /// version.
    pub fn pass(&self) -> Option<&OriginPass> {
        self.pass.as_ref()
    }

    /// The origin pass, its table made from the snapshot the open read
    /// where it was not yet. A snapshot whose bytes passed their checksums
    /// but make no table (never seen: it would take a fault of lineage's
    /// own) is replaced: the table is made again from the cached
    /// fingerprints, as an open does with a damaged snapshot, and written
    /// whole at the next checkpoint.
    pub fn make_table(&mut self) -> Result<&mut OriginPass, IndexError> {
        let pass = match (self.pass.take(), self.pending.take()) {
            (Some(pass), _) => pass,
            (None, pending) => self.restore(pending)?,
        };
        Ok(self.pass.insert(pass))
    }

    fn restore(&mut self, pending: Option<PendingTable>) -> Result<OriginPass, IndexError> {
        let params = *self.ix.params();
        let made = pending.map_or_else(|| Err("was not read".to_string()), PendingTable::restore);
        let why = match made {
            Ok(table) => return Ok(OriginPass::resume(params, table)),
            Err(why) => why,
        };
        let versions = self.ix.versions();
        self.ix.notice(format!(
            "index {}: the table's {why}; replaying {versions} versions from cached fingerprints",
            self.ix.dir().display()
        ));
        let table = Table::new(params.table_params()).map_err(IndexError::Table)?;
        let mut pass = OriginPass::resume(params, table);
        let all = (0, versions);
        match replay::run(
            &mut self.ix,
            &mut pass,
            &self.preparer,
            all,
            self.workers,
            &mut Quiet,
        ) {
            Ok(()) => {}
            // Rebuilt from the files at the next open.
            Err(replay::Failed::Damaged(why)) => return Err(self.ix.note_fault(&why)),
            Err(replay::Failed::Error(e)) => return Err(e),
        }
        self.ix.forget_snapshot();
        Ok(pass)
    }

    /// The table's regime ([`lineage_origin::table::Table::regime`]),
    /// from its counters alone where they settle it, without making it.
    pub fn regime(&mut self) -> Result<Regime, IndexError> {
        if let Some(pending) = &self.pending {
            let tp = self.ix.params().table_params();
            let known = (pending.counters().ok()).and_then(|c| Table::regime_of(tp, c));
            if let Some(r) = known {
                return Ok(r);
            }
        }
        Ok(self.make_table()?.table().regime())
    }

    /// Write the table snapshot if the table has processed versions it does
    /// not cover ([`Index::checkpoint`]): a table not made has processed
    /// none.
    pub fn checkpoint(&mut self) -> Result<(), IndexError> {
        match &mut self.pass {
            Some(pass) => self.ix.checkpoint(pass.table_mut()),
            None => Ok(()),
        }
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
        self.guarded(|me| {
            let mut syncing = me
                .ix
                .begin_sync(walk, &Scope::default(), max_file_size, order)?;
            // A run that reads files makes the table whole: lending it
            // costs no more, so even a run of a few files splits (one that
            // reads none makes no table).
            let synced = me.drive_from(&mut syncing, &mut Observed(obs), 0, &from_folder);
            if matches!(synced, Ok(()) | Err(IndexError::Stopped)) {
                me.checkpoint()?;
                for n in me.ix.take_notices() {
                    obs.notice(&n);
                }
            }
            synced.map(|()| syncing.report)
        })
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
        let mut sink = Collected {
            obs,
            changes: Vec::new(),
        };
        let report = self.sync_to(walk, scope, max_file_size, order, &mut sink)?;
        Ok((report, sink.changes))
    }

    /// [`Indexer::sync`], each step's changes to `sink` as they come (the
    /// watcher applies them) instead of collected.
    pub(crate) fn sync_to(
        &mut self,
        walk: Walk,
        scope: &Scope,
        max_file_size: u64,
        order: Order,
        sink: &mut dyn Sink,
    ) -> Result<Report, IndexError> {
        self.guarded(|me| {
            let mut syncing = me.ix.begin_sync(walk, scope, max_file_size, order)?;
            me.drive(&mut syncing, sink)?;
            Ok(syncing.report)
        })
    }

    /// Run `sync` on the indexer; a panic in it (a fault of lineage's own)
    /// is recorded in the index, which its next open rebuilds from the
    /// files, and returned as [`IndexError::Fault`]: an index whose state
    /// meets a fault is never left to meet it at every open.
    fn guarded<T>(
        &mut self,
        sync: impl FnOnce(&mut Indexer) -> Result<T, IndexError>,
    ) -> Result<T, IndexError> {
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sync(self)));
        run.unwrap_or_else(|panic| {
            let what = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("a panic");
            Err(self.ix.note_fault(what))
        })
    }

    /// Run `s` (begun by [`Index::begin_sync`]) to its end, each step's
    /// changes to `sink` in order (those the stat found and the first batch
    /// of files read, then a batch at a time; the last adds the deletions): the one
    /// sync loop, of `index`, the watcher and the tests. A run that reads
    /// [`SPLIT_FILES`] files or more splits its pass by bucket range where
    /// [`Indexer::open_with`] asks: the table is lent for the run and
    /// joined at its end, also when a step fails.
    pub fn drive(&mut self, s: &mut Syncing, sink: &mut dyn Sink) -> Result<(), IndexError> {
        self.drive_from(s, sink, SPLIT_FILES, &from_folder)
    }

    /// [`Indexer::drive`], splitting from `split_from` files read, each
    /// file read by `read`.
    fn drive_from(
        &mut self,
        s: &mut Syncing,
        sink: &mut dyn Sink,
        split_from: u64,
        read: ReadFile,
    ) -> Result<(), IndexError> {
        let mut split = match s.read_so_far() {
            (_, total) if total > 0 && total >= split_from => {
                let workers = self.workers;
                split::Split::start(self.make_table()?, workers)?
            }
            _ => None,
        };
        let driven = loop {
            match self.step(s, split.as_mut(), sink.observer(), read) {
                Ok(Some(changes)) => {
                    if let Err(e) = sink.changes(&mut self.ix, changes) {
                        break Err(e);
                    }
                }
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            }
        };
        if let Some(split) = split {
            self.pass = Some(OriginPass::resume(*self.ix.params(), split.finish()?));
        }
        driven
    }

    /// The next changes of `s` (begun by [`Index::begin_sync`]), in order:
    /// those the stat found and the first batch of files read (one
    /// transaction), then a batch at a time; the last adds the deletions.
    /// `None` once the sync is complete. Through `split` where given.
    fn step(
        &mut self,
        s: &mut Syncing,
        split: Option<&mut split::Split>,
        obs: &mut dyn Observer,
        read: ReadFile,
    ) -> Result<Option<Vec<Change>>, IndexError> {
        if s.finished() {
            return Ok(None);
        }
        let mut changes = s.take_found();
        if !s.batch().is_empty() {
            changes.extend(self.process(s, split, read)?);
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
        read: ReadFile,
    ) -> Result<Vec<Change>, IndexError> {
        match split {
            Some(split) => self.process_with(s, Via::Split(split), read),
            None => {
                // Lent for the batch: the index is written beside it.
                let stand_in = OriginPass::standing_in(*self.ix.params());
                let mut pass = std::mem::replace(self.make_table()?, stand_in);
                let done = self.process_with(s, Via::Pass(&mut pass), read);
                self.pass = Some(pass);
                done
            }
        }
    }

    /// [`Indexer::process`] through `via`.
    fn process_with(
        &mut self,
        s: &mut Syncing,
        via: Via,
        read: ReadFile,
    ) -> Result<Vec<Change>, IndexError> {
        let reader = self.ix.reader(s);
        let preparer = &self.preparer;
        // In the batch's order (rayon keeps it).
        let (read, mut ready): (Vec<_>, Vec<_>) = s
            .batch()
            .par_iter()
            .map(|f| {
                let content = read(&reader, f);
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
                let (prepared, keys) = ready[v.at].take().expect("a new version was read");
                (v.id, prepared, keys)
            });
            match via {
                Via::Split(split) => {
                    for (a, sizes, keys) in split.answer(versions)? {
                        let mut origins = Earlier {
                            first,
                            this_batch: &done,
                            stored: &mut stored,
                        };
                        let outcome = split.label(&a, sizes, &mut origins);
                        done.push((outcome, keys));
                    }
                }
                Via::Pass(pass) => {
                    for (id, prepared, keys) in versions {
                        let mut origins = Earlier {
                            first,
                            this_batch: &done,
                            stored: &mut stored,
                        };
                        let outcome = prepare::run(pass, id, &prepared, &mut origins);
                        done.push((outcome, keys));
                    }
                }
            }
        }
        batch.commit(done)
    }
}

/// What a batch's versions run through: the split pass, or the sequential
/// one.
enum Via<'a> {
    Split(&'a mut split::Split),
    Pass(&'a mut OriginPass),
}

/// How a sync's files are read: from the folder ([`from_folder`]), or a
/// repository's blobs (an import).
type ReadFile<'a> = &'a (dyn Fn(&Reader, &FileEntry) -> Result<Content, NotRead> + Sync);

/// A file read from the folder.
fn from_folder(r: &Reader, f: &FileEntry) -> Result<Content, NotRead> {
    r.read(f)
}

/// Files a sync reads from which [`Indexer::drive`] splits its pass:
/// lending the table costs a copy of what it holds each way, which a
/// watcher's change of a few files must not pay (a first walk or a rescan
/// of a large folder does, once).
pub const SPLIT_FILES: u64 = 1024;

/// Where a sync's steps go ([`Indexer::drive`]): its progress, and each
/// step's changes with the index, to store what follows from them.
pub trait Sink {
    /// Where the sync's progress and notices go (and who may stop it).
    fn observer(&mut self) -> &mut dyn Observer;
    /// One step's changes, in order, with the index that recorded them; an
    /// error ends the sync.
    fn changes(&mut self, ix: &mut Index, changes: Vec<Change>) -> Result<(), IndexError>;
}

/// The progress, and the renames noted (a version's old name, for its
/// predecessor: docs/algorithms.md §12); the watcher's sink
/// notes them with its other events.
struct Observed<'a>(&'a mut dyn Observer);

impl Sink for Observed<'_> {
    fn observer(&mut self) -> &mut dyn Observer {
        self.0
    }
    fn changes(&mut self, ix: &mut Index, changes: Vec<Change>) -> Result<(), IndexError> {
        let at_ms = lineage_source::time_ns(std::time::SystemTime::now()) / 1_000_000;
        let renames: Vec<Departure> = (changes.into_iter())
            .filter_map(|c| match c {
                Change::Renamed { from, to, id } => Some(Departure {
                    at_ms,
                    path: from,
                    to: Some(to),
                    id: Some(id),
                }),
                _ => None,
            })
            .collect();
        ix.note_departures(&renames)
    }
}

/// The progress, and every change kept.
struct Collected<'a> {
    obs: &'a mut dyn Observer,
    changes: Vec<Change>,
}

impl Sink for Collected<'_> {
    fn observer(&mut self) -> &mut dyn Observer {
        self.obs
    }
    fn changes(&mut self, _: &mut Index, changes: Vec<Change>) -> Result<(), IndexError> {
        self.changes.extend(changes);
        Ok(())
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
