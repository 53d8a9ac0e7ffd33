//! The live state beside the index: every version's row, the live documents,
//! the clusters, the table's recent history, the watched folder and what the
//! engine has to say. Every step that reads or writes the index is given it
//! (see [`super::run`], which holds it open or closed); an index error is
//! returned, for the holder to decide whether it closes the index.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use super::folder::{Check, Folder};
use super::query::{self, Row};
use super::report::{Reporter, send};
use super::search;
use super::shadow::{self, Job};
use super::shares;
use super::view;
use super::*;
use crate::indexer::{Indexer, Sink};
use crate::job::SingleJob;
use lineage_origin::{OriginPass, Outcome};
use lineage_similar::live::{Clusters, shingle_set};
use lineage_source::watch as watcher;
use lineage_source::{self as source, Filter};
use lineage_store::index::{Change, Index, IndexError, NearRow, Observer, Read, Scope, Status};

pub(super) struct Live {
    pub(super) opts: Options,
    versions: Versions,
    clusters: Clusters,
    /// What the snapshots show, built from the rest.
    shown: Shown,
    /// What the next snapshot builds again.
    stale: Stale,
    /// The folder at the root's path and how its changes are noticed.
    pub(super) folder: Folder,
    jobs: Jobs,
    /// The Documents pane's changed and removed shares, asked for.
    shares: Shares,
    pub(super) rep: Reporter,
    /// HEAD where the history could not be read (a missing or corrupt
    /// object): said once, and not read again until HEAD moves.
    pub(super) history_failed: Option<String>,
}

/// The index's versions as the live state holds them.
struct Versions {
    /// Every version, by id.
    rows: Vec<Row>,
    /// Live path → its current version id.
    live: HashMap<String, u32>,
}

/// What the snapshots show beside the versions: the Documents pane's rows,
/// the clusters, the table's figures over time.
struct Shown {
    documents: Documents,
    clusters: Arc<[Arc<Cluster>]>,
    table_history: VecDeque<TableStats>,
}

/// The live pages' changes against their bases (`Command::Shares`).
#[derive(Default)]
struct Shares {
    /// The basis asked for; None until asked.
    basis: Option<Basis>,
    /// The documents changed since the last run started.
    dirty: bool,
    /// When the last run started, and whether it is still under way.
    started: Option<Instant>,
    running: Arc<AtomicBool>,
    /// Set when a run is put off for the one under way, which then asks
    /// the engine for another as it ends.
    again: Arc<AtomicBool>,
    kept: Arc<Mutex<shares::Kept>>,
    /// The engine's own inputs, to ask with.
    wake: Option<std::sync::mpsc::Sender<super::run::Input>>,
}

/// A run of [`Shares`] under way is not cancelled for a new one sooner than
/// this after it started: a burst of edits is measured as the run under way
/// ends, not once an edit.
const SHARES_AFTER: Duration = Duration::from_millis(500);

/// The background jobs, one of each kind at a time.
struct Jobs {
    /// Tune's shadow run under way.
    shadow: SingleJob,
    /// The search under way.
    search: SingleJob,
    /// The run of the changed and removed shares under way.
    shares: SingleJob,
}

/// What changed since the last snapshot, and so what the next one builds
/// again (see [`Live::rebuild`]).
struct Stale {
    /// Every document's row: the first snapshot, after a reload, renames,
    /// or a walk of the whole root that changed something.
    all: bool,
    /// Some documents changed: only their rows are built again, the others'
    /// kept. Events, clusters and the table went on too.
    some: bool,
    /// Paths whose rows are built again (new versions, synced paths).
    touched: Vec<String>,
    /// Version ids that stopped being live: their rows go (and, in the step
    /// that retires them, their stored sketches).
    retired: Vec<u32>,
}

impl Stale {
    /// Nothing is built again until something changes.
    fn none() -> Stale {
        Stale {
            all: false,
            some: false,
            touched: Vec::new(),
            retired: Vec::new(),
        }
    }

    fn any(&self) -> bool {
        self.all || self.some
    }
}

/// Timed rescans put off at most this many times in a row for files still
/// being written.
const SETTLE_TICKS: u32 = 5;

/// Whether a file of `walk` was modified less than `window` ago.
fn unsettled(walk: &source::Walk, window: Duration) -> bool {
    // The clock as the walk ends, not the step's time: a walk of a large
    // folder takes seconds, and a file written during it must not look
    // older than it is.
    let now = SystemTime::now();
    walk.files
        .iter()
        .any(|f| now.duration_since(f.mtime).is_ok_and(|age| age < window))
}

impl Live {
    /// The live state of `ix`, its folder not watched yet.
    pub(super) fn new(
        opts: Options,
        filter: Filter,
        ix: &mut Indexer,
        rep: Reporter,
        events: std::sync::mpsc::Sender<super::run::Input>,
    ) -> Result<Live, IndexError> {
        let mut live = Live {
            history_failed: None,
            shares: Shares {
                wake: Some(events.clone()),
                ..Shares::default()
            },
            folder: Folder::new(ix.root().to_path_buf(), filter, &opts.config.watch, events),
            clusters: Clusters::new(opts.config.watch.min_similarity),
            opts,
            versions: Versions {
                rows: Vec::new(),
                live: HashMap::new(),
            },
            shown: Shown {
                documents: Documents::default(),
                clusters: Arc::from([]),
                table_history: VecDeque::new(),
            },
            stale: Stale {
                all: true,
                ..Stale::none()
            },
            jobs: Jobs {
                shadow: SingleJob::new("lineage-shadow"),
                search: SingleJob::new("lineage-search"),
                shares: SingleJob::new("lineage-shares"),
            },
            rep,
        };
        live.load(ix)?;
        // The Events pane after a restart: the history's newest versions,
        // and the deletions and renames told of before.
        let departures = ix.index().departures(EVENTS)?;
        live.rep.events = view::past_events(&live.versions.rows, &departures, EVENTS).into();
        live.rep.next_n = live.rep.events.front().map_or(0, |e| e.n);
        live.rep.before_start = live.rep.next_n;
        Ok(live)
    }

    /// Every version's row from the index (paths and version numbers move
    /// with a rename).
    fn load_rows(&mut self, ix: &Index) -> Result<(), IndexError> {
        self.versions.rows = query::rows(ix)?;
        Ok(())
    }

    /// Rows, live documents and clusters from the index.
    pub(super) fn load(&mut self, indexer: &mut Indexer) -> Result<(), IndexError> {
        let ix = indexer.index_mut();
        self.load_rows(ix)?;
        // The pairs the index kept (a reopened one may number its versions
        // anew, after damage: it keeps only the pairs of the versions it has).
        self.jobs.shares.cancel();
        self.shares.kept = Arc::new(Mutex::new(shares::Kept::of(ix.changes()?)));
        self.shares.dirty = true;
        self.versions.live = ix
            .paths()
            .filter(|(_, c)| c.status == Status::Live)
            .map(|(p, c)| (p.to_string(), c.id))
            .collect();
        let min = self.opts.config.watch.min_similarity;
        let mut clusters = Clusters::new(min);
        let settings = near_settings(ix, &clusters);
        let stored = ix.near(&settings)?;
        let mut ids: Vec<u32> = self.versions.live.values().copied().collect();
        ids.sort_unstable();
        let mut missing = Vec::new();
        // Stored pairs and sketches with a version no longer live, forgotten
        // once their clusters are mended.
        let (mut gone, mut dead) = (Vec::new(), Vec::new());
        match &stored {
            Some(near) => {
                let live: HashSet<u32> = ids.iter().copied().collect();
                dead.extend(near.sketches.keys().filter(|id| !live.contains(id)));
                for &id in &ids {
                    match near.sketches.get(&id) {
                        Some(s) if clusters.restore(id, s) => {}
                        _ => missing.push(id),
                    }
                }
                for &(a, b, j) in &near.pairs {
                    if !clusters.restore_pair(a, b, j) {
                        gone.push((a, b));
                    }
                }
            }
            None => missing = ids,
        }
        // Versions the index gained without us (`lineage index`), or all of
        // them the first time: compare them now, the latest sets cached for
        // their neighbours' verification. Bounded: every set of 100,000
        // pages is 240 MB; an older candidate is read from the index again.
        const CACHE_BYTES: usize = 64 << 20;
        let mut cache: HashMap<u32, Arc<[u64]>> = HashMap::new();
        let (mut cached, mut cache_bytes) = (VecDeque::new(), 0);
        let mut rows = Vec::with_capacity(missing.len());
        for (n, &id) in missing.iter().enumerate() {
            let set = stored_set(ix, id)?;
            rows.push(clusters.insert(id, &set, |o| match cache.get(&o) {
                Some(s) => Ok(s.clone()),
                None => stored_set(ix, o),
            })?);
            cache_bytes += 8 * set.len();
            cache.insert(id, set);
            cached.push_back(id);
            while cache_bytes > CACHE_BYTES {
                let Some(old) = cached.pop_front() else { break };
                cache_bytes -= cache.remove(&old).map_or(0, |s| 8 * s.len());
            }
            self.rep
                .progress("comparing documents", n as u64 + 1, missing.len() as u64);
        }
        drop(cache);
        // Links lost with versions no longer live, looked for again.
        let links = clusters.settle(&mut |o| stored_set(ix, o))?;
        if stored.is_none() {
            ix.reset_near(&settings)?;
        }
        ix.put_near(&rows, &links, &gone, &dead)?;
        self.clusters = clusters;
        self.shown.table_history.clear();
        self.sample_table(indexer);
        self.stale.all = true;
        Ok(())
    }

    /// Whether a snapshot is due after a step that began with `events`
    /// told: something changed, was told, or is in progress.
    pub(super) fn due(&self, events: u64) -> bool {
        self.stale.any() || self.rep.next_n != events || self.rep.last.progress.is_some()
    }

    /// Whether the folder at the root's path is still the one watched. Gone:
    /// its documents are marked deleted and the watch waits. Back, replaced
    /// or moved away and another put there: the folder now at the path is
    /// watched and walked. `None` if nothing changed, else whether a
    /// snapshot is due.
    pub(super) fn check_root(&mut self, ix: &mut Indexer) -> Result<Option<bool>, IndexError> {
        match self.folder.check() {
            Check::Same => Ok(None),
            Check::Back { replaced } => {
                let how = if replaced {
                    "was replaced or moved; watching the folder now at its path"
                } else {
                    "is back; watching it again"
                };
                self.rep
                    .notice(&format!("root {} {how}", self.folder.root().display()));
                if let Watching::Rescanning(why) = &self.folder.watching {
                    self.rep.error(why.clone());
                }
                self.sync(ix, None)?;
                Ok(Some(true))
            }
            Check::Gone(e) => {
                self.rep.error(format!(
                    "{e}: its documents are marked deleted until a folder is back at its path"
                ));
                // An empty walk of the whole root: every document is gone.
                self.apply_walk(ix, source::Walk::default(), &Scope::default(), false)?;
                Ok(Some(true))
            }
        }
    }

    /// Bring the index up to the folder: the given paths only when they
    /// tell enough, else a walk of the whole root; files being written are
    /// left for later. True if anything changed or went wrong (a snapshot
    /// is due). Nothing while the root is gone: a full walk catches up then.
    pub(super) fn sync(
        &mut self,
        ix: &mut Indexer,
        paths: Option<watcher::Stated>,
    ) -> Result<bool, IndexError> {
        if self.folder.gone() {
            return Ok(false);
        }
        let events = self.rep.next_n;
        let held = self.folder.held();
        let cfg = &self.opts.config;
        let root = self.folder.root().to_path_buf();
        let stat = |p: &watcher::Stated| {
            watcher::stat_paths(
                &root,
                p,
                &self.folder.filter,
                cfg.walk_options(),
                |prefix| ix.index().holds_under(prefix),
            )
        };
        let scoped = paths.and_then(|p| {
            let (mut walk, mut scope) = stat(&p)?;
            // A file written through one of its names changed under all of
            // them, but the OS tells of that one only: the others are read
            // too, or their documents would keep the old content. A name
            // gone from a file (`rm`, `mv`, another file renamed over it)
            // changed the status change time of the file's other names.
            let found: HashMap<&str, u64> = walk
                .files
                .iter()
                .map(|f| (f.path.as_str(), f.file_id))
                .collect();
            let gone_ids = scope
                .iter()
                .filter_map(|p| Some((found.get(p.as_str()), ix.index().current(p)?.file_id)))
                .filter(|&(now, was)| was != 0 && now != Some(&was))
                .map(|(_, was)| was);
            let ids: HashSet<u64> = walk
                .files
                .iter()
                .filter(|f| f.links > 1)
                .map(|f| f.file_id)
                .chain(gone_ids)
                .collect();
            let known: HashSet<&str> = scope.iter().map(String::as_str).collect();
            let others: Vec<PathBuf> = ix
                .index()
                .names_of(&ids)
                .into_iter()
                .filter(|n| !known.contains(n))
                .map(|n| source::name::path(&root, n))
                .collect();
            if !others.is_empty() {
                // Only the other names are stat'ed; none is in `scope` yet.
                let (more, names) = stat(&watcher::Stated::new(others))?;
                walk.files.extend(more.files);
                walk.skipped.extend(more.skipped);
                scope.extend(names);
            }
            Some((walk, scope))
        });
        let full = scoped.is_none();
        let (walk, only) = match scoped {
            Some((walk, scope)) => {
                // A path its last event released may be written again by
                // now, the new write's events still on their way.
                self.folder.hold_recent(&walk.files);
                // Their rows are built again (an mtime may have moved).
                self.stale.touched.extend(scope.iter().cloned());
                (walk, Some(scope))
            }
            None => match source::walk_with(&root, &self.folder.filter, cfg.walk_options()) {
                // Timed rescans have no event telling that a write ended: a
                // file modified within the debounce window may be half
                // written, so the whole rescan waits for the next tick (a few
                // times at most: a file written without pause still gets in).
                Ok(walk)
                    if self.folder.rescanning()
                        && self.folder.settling < SETTLE_TICKS
                        && unsettled(&walk, Duration::from_millis(cfg.watch.debounce_ms)) =>
                {
                    self.folder.settling += 1;
                    return Ok(false);
                }
                Ok(walk) => {
                    self.folder.settling = 0;
                    // Files written just now, with no event telling their
                    // writer is done: held like any other being written.
                    self.folder.hold_recent(&walk.files);
                    (walk, None)
                }
                // The root itself failed: gone, replaced or unreadable.
                Err(e) => {
                    return Ok(self.check_root(ix)?.unwrap_or_else(|| {
                        self.rep.error(e.to_string());
                        true
                    }));
                }
            },
        };
        let scope = Scope {
            paths: only.as_deref(),
            held: held.union(&self.folder.held()).cloned().collect(),
            held_gone: self.folder.held_gone(),
        };
        self.apply_walk(ix, walk, &scope, full)?;
        Ok(self.due(events))
    }

    /// Bring the index up to `walk` within `scope`, a batch of files at a
    /// time: each batch's changes (its new versions' shingle keys among
    /// them) go to the clusters before the next batch is read. `full`: a
    /// walk of the whole root, which may have moved any document's mtime.
    /// The table is sampled once, if anything changed.
    fn apply_walk(
        &mut self,
        ix: &mut Indexer,
        walk: source::Walk,
        scope: &Scope,
        full: bool,
    ) -> Result<(), IndexError> {
        let max_file_size = self.opts.config.max_file_size.0;
        // The order the index holds (settled when it was opened).
        let order = (ix.index_mut()).settle_order(self.opts.config.order, false)?;
        // Commits made or pulled since the last sync first, stamped with
        // their commits; then the files (a pull's, now the same as the
        // commits', change no version). An index of the folder's files
        // costs nothing here.
        let history = match ix.reads_history() {
            Some(false) => None,
            _ => {
                let cfg = &self.opts.config;
                let filter = Filter::new(&cfg.include, &cfg.exclude)
                    .map_err(|e| IndexError::Location(e.to_string()))?;
                Some((cfg.history, cfg.history_since.clone(), filter))
            }
        };
        let mut sink = Applying {
            live: self,
            full,
            changed: false,
        };
        if let Some((mode, since, filter)) = history {
            let head = ix.repo_head();
            if head.is_none() || head != sink.live.history_failed {
                match ix.read_history_to(mode, &since, &filter, max_file_size, &mut sink) {
                    Ok(_) => sink.live.history_failed = None,
                    // The files are read all the same: nothing of the
                    // folder waits for a commit that cannot be read.
                    Err(e @ IndexError::History(_)) => {
                        sink.live.rep.error(format!(
                            "{e}; the files are read as they are, the commits wait until HEAD moves"
                        ));
                        sink.live.history_failed = head;
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        ix.sync_to(walk, scope, max_file_size, order, &mut sink)?;
        if sink.changed {
            self.sample_table(ix);
        }
        Ok(())
    }

    /// Record what a sync did: rows, live documents, clusters, events.
    fn apply(&mut self, ix: &mut Index, changes: Vec<Change>) -> Result<(), IndexError> {
        if changes.is_empty() {
            return Ok(());
        }
        // Near-duplicate rows of the whole step, stored in one transaction
        // with the sketches of the versions it retires forgotten.
        let mut near = Vec::new();
        let retired_before = self.stale.retired.len();
        let mut renamed = false;
        // Deletions and renames told of, kept for the Events after a restart.
        let mut departures = Vec::new();
        // A document that became unreadable (or binary, or too large) is
        // still there: its `skipped` event says why it left the documents,
        // with no `deleted` beside it.
        let skipped: HashSet<String> = changes
            .iter()
            .filter_map(|c| match c {
                Change::Skipped { path, .. } => Some(path.clone()),
                _ => None,
            })
            .collect();
        for c in changes {
            match c {
                Change::Version {
                    path,
                    version,
                    outcome,
                    keys,
                } => {
                    let id = outcome.id;
                    debug_assert_eq!(id as usize, self.versions.rows.len());
                    let mtime = ix.current(&path).map_or(0, |c| c.mtime_ns);
                    self.versions
                        .rows
                        .push(row(&path, version, &outcome, mtime));
                    let set: Arc<[u64]> = shingle_set(keys).into();
                    debug_assert_eq!(set, stored_set(ix, id)?, "the keys the index stored");
                    near.push(self.set_live(ix, &path, id, &set)?);
                    // Seen when told (the index's time is the same moment's).
                    let at = self.version_event(id);
                    self.versions.rows[id as usize].seen_ms = Some(at);
                }
                Change::Revived { path, id } => {
                    // Its content is an old version's: its keys are stored.
                    let set = stored_set(ix, id)?;
                    near.push(self.set_live(ix, &path, id, &set)?);
                    self.version_event(id);
                }
                Change::Deleted { path } => {
                    self.retire(&path);
                    if !skipped.contains(&path) {
                        let kind = EventKind::Deleted { path };
                        departures.extend(view::departure(self.rep.push(kind.clone()), &kind));
                    }
                }
                Change::Renamed { from, to, id } => {
                    if let Some(old) = self.versions.live.remove(&from) {
                        // Same versions, same sets: only the path moves,
                        // over a page that was there, which leaves.
                        self.retire(&to);
                        self.versions.live.insert(to.clone(), old);
                    }
                    renamed = true;
                    let kind = EventKind::Renamed { from, to, id };
                    departures.extend(view::departure(self.rep.push(kind.clone()), &kind));
                }
                Change::Skipped { path, reason } => {
                    self.rep.push(EventKind::Skipped { path, reason });
                }
            }
        }
        if renamed {
            // Paths of versions moved: every row (origins' paths too).
            self.load_rows(ix)?;
            self.stale.all = true;
        }
        // Clusters split by deletions find the links they skipped.
        let links = self.clusters.settle(&mut |o| stored_set(ix, o))?;
        ix.put_near(&near, &links, &[], &self.stale.retired[retired_before..])?;
        ix.note_departures(&departures)?;
        self.stale.some = true;
        Ok(())
    }

    /// `path` has no live version any more.
    fn retire(&mut self, path: &str) {
        if let Some(old) = self.versions.live.remove(path) {
            self.clusters.remove(old);
            self.stale.retired.push(old);
        }
    }

    /// `path`'s live version is now `id`, whose shingle set is `set`; the
    /// row the index stores of its sketch and pairs.
    fn set_live(
        &mut self,
        ix: &Index,
        path: &str,
        id: u32,
        set: &[u64],
    ) -> Result<NearRow, IndexError> {
        self.retire(path);
        let row = self.clusters.insert(id, set, |o| stored_set(ix, o))?;
        self.versions.live.insert(path.to_string(), id);
        self.stale.touched.push(path.to_string());
        Ok(row)
    }

    /// Tell of version `id`; returns when (milliseconds since the epoch).
    fn version_event(&mut self, id: u32) -> i64 {
        let kind = view::version_event(&self.versions.rows, id);
        self.rep.push(kind)
    }

    fn sample_table(&mut self, ix: &Indexer) {
        let stats = table_stats(
            ix,
            self.versions.rows.len() as u64,
            self.shown.table_history.back(),
        );
        self.shown.table_history.push_back(stats);
        while self.shown.table_history.len() > HISTORY {
            self.shown.table_history.pop_front();
        }
    }

    /// Answer a query of the open index (not `Adopt`, `Rescan`, `Cancel`:
    /// those are the holder's).
    pub(super) fn query(&mut self, ix: &Index, c: Command) {
        match c {
            Command::Origin { id, exact } => {
                if (id as usize) < self.versions.rows.len() {
                    match query::origin_view(ix, &self.versions.rows, id, exact) {
                        Ok(v) => send(&self.rep.publish, Update::Origin(Arc::new(v))),
                        Err(e) => self.rep.error(format!("origin of version {id}: {e}")),
                    }
                }
            }
            Command::Compare { a, b } => {
                let n = self.versions.rows.len() as u32;
                if a < n && b < n {
                    match query::compare(ix, &self.versions.rows, a, b) {
                        Ok(v) => send(&self.rep.publish, Update::Compare(Arc::new(v))),
                        Err(e) => self.rep.error(format!("comparing {a} and {b}: {e}")),
                    }
                }
            }
            Command::Copies { id } => {
                if (id as usize) < self.versions.rows.len() {
                    let row = &self.versions.rows[id as usize];
                    match query::copies(ix, &self.versions.rows, id) {
                        Ok(copies) => {
                            let v = CopiesView {
                                id,
                                path: row.path.clone(),
                                version: row.version,
                                copies,
                            };
                            send(&self.rep.publish, Update::Copies(Arc::new(v)));
                        }
                        Err(e) => self.rep.error(format!("copies of version {id}: {e}")),
                    }
                }
            }
            Command::Shared { id } => {
                if (id as usize) < self.versions.rows.len() {
                    let row = &self.versions.rows[id as usize];
                    match query::shared(ix, &self.versions.rows, id) {
                        Ok(shares) => {
                            let v = SharedView {
                                id,
                                path: row.path.clone(),
                                version: row.version,
                                tokens: row.tokens,
                                shares,
                            };
                            send(&self.rep.publish, Update::Shared(Arc::new(v)));
                        }
                        Err(e) => self.rep.error(format!("pages sharing version {id}: {e}")),
                    }
                }
            }
            Command::Diff { id, basis } => {
                if (id as usize) < self.versions.rows.len() {
                    let config = &self.opts.config;
                    match super::diff_view(ix, &self.versions.rows, id, config, basis) {
                        Ok(v) => send(&self.rep.publish, Update::Diff(Arc::new(v))),
                        Err(e) => self.rep.error(format!("diff of version {id}: {e}")),
                    }
                }
            }
            Command::Stale { id } => {
                if id.is_none_or(|id| (id as usize) < self.versions.rows.len()) {
                    match super::stale_view(ix, &self.versions.rows, id) {
                        Ok(v) => send(&self.rep.publish, Update::Stale(Arc::new(v))),
                        Err(e) => self.rep.error(format!("stale copies: {e}")),
                    }
                }
            }
            Command::Report { path } => self.start_report(ix, path),
            Command::Shadow { generation, runs } => self.start_shadow(ix, generation, runs),
            Command::Search { generation, query } => self.start_search(ix, generation, query),
            Command::Cancel { .. }
            | Command::Shares { .. }
            | Command::Adopt(_)
            | Command::Rescan
            | Command::Quit
            | Command::Changed(_) => {}
        }
    }

    /// Measure the live pages' changes against `basis` from now on: at the
    /// next [`Live::start_shares`], whatever is under way (and, with the
    /// index closed, once it opens again).
    pub(super) fn want_shares(&mut self, basis: Basis) {
        self.shares.basis = Some(basis);
        self.shares.dirty = true;
        self.shares.started = None;
    }

    /// Measure the live pages' changes again if the documents changed since
    /// the last run and the shares were asked for: at once when no run is
    /// under way or it has had [`SHARES_AFTER`], else as it ends (it asks).
    pub(super) fn start_shares(&mut self, ix: &Index) {
        let Some(basis) = self.shares.basis.filter(|_| self.shares.dirty) else {
            return;
        };
        let running = self.shares.running.load(Ordering::Relaxed);
        if running
            && self
                .shares
                .started
                .is_some_and(|t| t.elapsed() < SHARES_AFTER)
        {
            self.shares.again.store(true, Ordering::Relaxed);
            return;
        }
        let live = self.versions.live.values().copied().collect();
        let (rules, order) = (self.opts.config.predecessor.clone(), ix.order());
        let release_tags = self.opts.config.release_tags.clone();
        let history = match ix.history_reader() {
            Ok(h) => h,
            Err(e) => return self.rep.error(format!("changed shares: {e}")),
        };
        self.shares.dirty = false;
        self.shares.started = Some(Instant::now());
        let running = Arc::new(AtomicBool::new(true));
        self.shares.running = running.clone();
        let again = Arc::new(AtomicBool::new(false));
        self.shares.again = again.clone();
        let wake = self.shares.wake.clone();
        let (kept, publish) = (self.shares.kept.clone(), self.rep.publish.clone());
        let started = self.jobs.shares.start(0, move |cancel| {
            let job = shares::Job {
                basis,
                live,
                rules,
                release_tags,
                order,
                kept,
                cancel,
            };
            let keep = |pairs: Vec<_>| {
                if let (false, Some(w)) = (pairs.is_empty(), &wake) {
                    let _ = w.send(super::run::Input::Measured(pairs));
                }
            };
            let ran = shares::run(
                &history,
                &job,
                |u| send(&publish, Update::Shares(Arc::new(u))),
                keep,
            );
            running.store(false, Ordering::Relaxed);
            // A run cancelled for a newer one leaves the asking to it.
            if again.load(Ordering::Relaxed)
                && !job.cancel.load(Ordering::Relaxed)
                && let Some(w) = wake
            {
                let _ = w.send(super::run::Input::Command(Command::Shares { basis }));
            }
            if let Err(e) = ran {
                let failed = SharesUpdate::failed(basis, format!("changed shares: {e}"));
                send(&publish, Update::Shares(Arc::new(failed)));
            }
        });
        if let Err(e) = started {
            self.rep.error(format!("changed shares: {e}"));
        }
    }

    /// Stop shadow run `generation`, if it is the one under way.
    pub(super) fn cancel(&mut self, generation: u64) {
        if self.jobs.shadow.cancel_generation(generation) {
            send(
                &self.rep.publish,
                Update::Shadow(ShadowUpdate {
                    generation,
                    done: 0,
                    total: 0,
                    results: Vec::new(),
                    finished: true,
                    error: Some("cancelled".into()),
                }),
            );
        }
    }

    fn start_shadow(&mut self, ix: &Index, generation: u64, runs: Vec<Params>) {
        self.jobs.shadow.cancel();
        let history = match ix.history_reader() {
            Ok(h) => h,
            Err(e) => return self.rep.error(format!("shadow run: {e}")),
        };
        let (poly, versions) = (ix.polynomial().clone(), self.versions.rows.len() as u32);
        let memory = self.opts.memory;
        let workers = self.opts.config.pass_workers();
        let publish = self.rep.publish.clone();
        let started = self.jobs.shadow.start(generation, move |cancel| {
            let job = Job {
                generation,
                poly,
                runs,
                versions,
                cancel,
                memory,
                workers,
            };
            shadow::run(&history, &job, |u| send(&publish, Update::Shadow(u)));
        });
        if let Err(e) = started {
            self.rep.error(format!("shadow run: {e}"));
        }
    }

    /// Write the report to `path` from a connection of its own, off the
    /// engine's thread (a large folder's takes seconds), with the table's
    /// regime as last sampled, in the words `scan` and the Table pane use.
    fn start_report(&mut self, ix: &Index, path: PathBuf) {
        let (dir, poly) = (ix.dir().to_path_buf(), ix.polynomial().clone());
        let p = ix.params();
        let every = p.selector == lineage_origin::Selector::All;
        let regime = (self.shown.table_history.back()).map(|t| {
            (t.regime).describe(every, p.exact_when_held(), lineage_core::bytesize::grouped)
        });
        let config = self.opts.config.clone();
        let title = super::html::title_of(&self.opts.root);
        let publish = self.rep.publish.clone();
        let to = path.clone();
        let started = std::thread::Builder::new()
            .name("lineage-report".into())
            .spawn(move || {
                let result = (|| {
                    let ro = lineage_store::index::ReadOnly::open(&dir, &poly)
                        .map_err(|e| e.to_string())?;
                    let rows = query::rows(&ro).map_err(|e| e.to_string())?;
                    let mut figures = None;
                    lineage_core::fsio::write_atomic(&to, |w| {
                        let regime = regime.as_deref();
                        let f = super::html::write_report(&ro, &rows, &config, &title, regime, w)
                            .map_err(std::io::Error::other)?;
                        figures = Some(f);
                        Ok(())
                    })
                    .map_err(|e| e.to_string())?;
                    figures.ok_or_else(|| "nothing written".to_string())
                })();
                send(&publish, Update::Report { path: to, result });
            });
        if let Err(e) = started {
            let result = Err(format!("cannot start the report's thread: {e}"));
            send(&self.rep.publish, Update::Report { path, result });
        }
    }

    /// Search the live pages for `query` in a thread of its own, after
    /// stopping the search under way (an empty query only stops it).
    fn start_search(&mut self, ix: &Index, generation: u64, query: String) {
        self.jobs.search.cancel();
        if query.is_empty() {
            return;
        }
        let history = match ix.history_reader() {
            Ok(h) => h,
            Err(e) => return self.rep.error(format!("search: {e}")),
        };
        let mut pages: Vec<search::Page> = (self.versions.live.iter())
            .map(|(path, &id)| search::Page {
                id,
                path: Arc::from(path.as_str()),
                version: self.versions.rows[id as usize].version,
            })
            .collect();
        pages.sort_unstable_by(|a, b| a.path.cmp(&b.path));
        let (root, max_file_size) = (self.opts.root.clone(), self.opts.config.max_file_size.0);
        let publish = self.rep.publish.clone();
        let started = self.jobs.search.start(generation, move |cancel| {
            let job = search::Job {
                generation,
                query,
                pages,
                root,
                max_file_size,
                cancel,
            };
            search::run(&history, &job, |v| {
                send(&publish, Update::Search(Arc::new(v)))
            });
        });
        if let Err(e) = started {
            self.rep.error(format!("search: {e}"));
        }
    }

    /// Publish the state of the open index: its events first, then the
    /// snapshot, with the rows of changed documents built again.
    pub(super) fn publish(&mut self, indexer: &Indexer) {
        let ix = indexer.index();
        if self.stale.any() {
            // The events first: a snapshot never shows a document before
            // the event that brought it.
            self.rep.send_events();
            self.rebuild(ix);
            self.shares.dirty = true;
        }
        // Made when the watcher opened it.
        let fills = indexer.pass().map(|p| p.table().bucket_fill());
        let bucket_fill =
            view::fill_histogram(&fills.unwrap_or_default(), ix.params().bucket_entries);
        let counts = ix.counts();
        let s = Snapshot {
            seq: 0,
            root: ix.root().to_path_buf(),
            params: *ix.params(),
            documents: self.shown.documents.clone(),
            clusters: self.shown.clusters.clone(),
            table: table_stats(
                indexer,
                self.versions.rows.len() as u64,
                self.shown.table_history.back(),
            ),
            table_history: self.shown.table_history.iter().copied().collect(),
            bucket_fill: bucket_fill.into(),
            events: Arc::from([]),
            before_start: 0,
            versions: counts.versions,
            skipped: counts.skipped,
            shingles: self
                .versions
                .rows
                .iter()
                .map(|r| u64::from(r.shingles))
                .sum(),
            progress: None,
            watching: self.folder.watching.clone(),
        };
        self.rep.publish(s);
        // After the snapshot: a run's pages are never told before the
        // snapshot that shows them (a quick run could finish first).
        self.start_shares(ix);
    }

    /// Publish while the index is closed: the last snapshot stands, with
    /// the folder's state; the events go out.
    pub(super) fn publish_closed(&mut self) {
        let last = Snapshot {
            watching: self.folder.watching.clone(),
            ..(*self.rep.last).clone()
        };
        self.rep.publish(last);
    }

    /// The documents and clusters of the next snapshot. When only some
    /// documents changed, only their rows are built again (see
    /// [`Documents::edited`]): building every row costs 0.1 s at 100,000
    /// documents (a lookup of its path, its mtime and its dominant origin's
    /// path each), most of the time from an edit to the screen.
    fn rebuild(&mut self, ix: &Index) {
        let (clusters, of) = self.clusters.clusters();
        let mtime = |path: &str| ix.current(path).map_or(0, |c| c.mtime_ns);
        let stale = std::mem::replace(&mut self.stale, Stale::none());
        self.shown.documents = if stale.all {
            Documents::new(
                view::doc_rows(&self.versions.rows, &self.versions.live, mtime),
                of,
            )
        } else {
            let touched: HashMap<String, u32> = (stale.touched.into_iter())
                .filter_map(|p| self.versions.live.get(&p).map(|&id| (p, id)))
                .collect();
            let mut gone: Vec<u32> = touched.values().copied().collect();
            gone.extend(&stale.retired);
            gone.sort_unstable();
            let new = view::doc_rows(&self.versions.rows, &touched, mtime);
            let docs = self.shown.documents.edited(&gone, new, of);
            debug_assert!(
                docs.iter().eq(&view::doc_rows(
                    &self.versions.rows,
                    &self.versions.live,
                    mtime
                )),
                "rows kept and rows built again make every row"
            );
            docs
        };
        self.shown.clusters = clusters.into();
    }
}

/// The versions whose sketches the index stores (the step tests').
#[cfg(test)]
pub(super) fn stored_sketches(ix: &Index, live: &Live) -> Vec<u32> {
    let near = ix.near(&near_settings(ix, &live.clusters)).unwrap();
    let mut ids: Vec<u32> = near.map_or_else(Vec::new, |n| n.sketches.keys().copied().collect());
    ids.sort_unstable();
    ids
}

/// What the stored sketches and pairs were made with: `keys=3`, sketches of
/// shingle keys of mixed token fingerprints under the seeded polynomial;
/// pairs stored under other settings (another k, threshold, banding or
/// method) are computed again.
fn near_settings(ix: &Index, clusters: &Clusters) -> String {
    format!("k={} keys=3 {}", ix.params().k, clusters.settings())
}

/// Version `id`'s shingle set, from the index's cached fingerprints.
fn stored_set(ix: &Index, id: u32) -> Result<Arc<[u64]>, IndexError> {
    ix.shingle_keys(id).map(|k| shingle_set(k).into())
}

fn row(path: &str, version: u32, o: &Outcome, mtime_ns: i64) -> Row {
    Row {
        mtime_ns,
        seen_ms: None,
        path: path.to_string(),
        version,
        tokens: o.tokens,
        shingles: o.shingles,
        fresh_tokens: o.fresh_tokens(),
        dominant_origin: o.dominant_origin,
        origins: o.origins.clone(),
    }
}

/// The table's statistics now. Its regime (a sum over every bucket while
/// it samples: milliseconds at 100,000 pages) is `last`'s when nothing else
/// differs from it: a change is sampled, then published.
fn table_stats(ix: &Indexer, versions: u64, last: Option<&TableStats>) -> TableStats {
    // Made when the watcher opened it.
    let Some(t) = ix.pass().map(OriginPass::table) else {
        return TableStats::default();
    };
    let c = t.counters();
    let mut s = TableStats {
        lookups: c.lookups,
        hits: c.hits,
        inserts: c.inserts,
        evictions: c.evictions,
        occupied: c.occupied,
        capacity: t.capacity(),
        buckets: t.buckets(),
        entry_bytes: ix.params().table_params().layout.entry_bytes(),
        false_match: t.false_match_bound(),
        regime: lineage_origin::Regime::Holds { distinct: 0 },
        versions,
    };
    s.regime = match last {
        Some(l)
            if TableStats {
                regime: l.regime,
                ..s
            } == *l =>
        {
            l.regime
        }
        _ => t.regime(),
    };
    s
}

/// A sync's steps into the live state ([`Live::apply_walk`]); its progress
/// and notices to the reporter.
struct Applying<'a> {
    live: &'a mut Live,
    /// A walk of the whole root.
    full: bool,
    changed: bool,
}

impl Sink for Applying<'_> {
    fn observer(&mut self) -> &mut dyn Observer {
        &mut self.live.rep
    }
    fn changes(&mut self, ix: &mut Index, changes: Vec<Change>) -> Result<(), IndexError> {
        self.live.stale.all |= self.full && !changes.is_empty();
        self.changed |= !changes.is_empty();
        self.live.apply(ix, changes)
    }
}
