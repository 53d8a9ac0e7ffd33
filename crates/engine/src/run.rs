//! The engine thread: open the index, watch, apply changes in order, answer
//! commands, publish snapshots.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant, SystemTime};

use super::clusters::{Clusters, shingle_set};
use super::folder::{Check, Folder};
use super::query::{self, Row};
use super::report::{Publish, Reporter, send};
use super::search;
use super::shadow::{self, Job};
use super::store::Store;
use super::view;
use super::*;
use lineage_origin::Outcome;
use lineage_source::watch::{self as watcher, Batch};
use lineage_source::{self as source, Filter};
use lineage_store::index::{Change, Index, IndexError, NearRow, Observer, Read, Scope, Status};

/// What reaches the engine thread: commands, and file events from the watcher.
pub(super) enum Input {
    Command(Command),
    Files(Batch),
}

/// Quiet time after which the table snapshot is saved.
const CHECKPOINT_IDLE: Duration = Duration::from_secs(10);

/// The live state the engine owns.
struct Live {
    opts: Options,
    filter: Filter,
    /// The index, open or closed after a failed write.
    store: Store,
    /// Every version, by id.
    rows: Vec<Row>,
    /// Live path → its current version id.
    live: HashMap<String, u32>,
    clusters: Clusters,
    table_history: VecDeque<TableStats>,
    documents: Documents,
    cluster_list: Arc<[Arc<Cluster>]>,
    /// Every document's row is to be built again for the next snapshot.
    dirty: bool,
    /// Some documents changed since the last snapshot: only theirs are
    /// built again (the others' rows are kept), see [`Live::rebuild`].
    changed: bool,
    /// Paths whose rows are built again (new versions, synced paths).
    touched: Vec<String>,
    /// Version ids that stopped being live (their rows go).
    retired: Vec<u32>,
    /// The folder at the root's path and how its changes are noticed.
    folder: Folder,
    shadow: Option<(u64, Arc<AtomicBool>)>,
    /// The cancel flag of the search under way.
    search: Option<Arc<AtomicBool>>,
    /// Timed rescans put off in a row (see [`SETTLE_TICKS`]).
    settling: u32,
    rep: Reporter,
}

/// Timed rescans put off at most this many times in a row for files still
/// being written.
const SETTLE_TICKS: u32 = 5;

/// Whether a file of `walk` was modified less than `window` ago.
fn unsettled(walk: &source::Walk, window: Duration) -> bool {
    let now = SystemTime::now();
    walk.files
        .iter()
        .any(|f| now.duration_since(f.mtime).is_ok_and(|age| age < window))
}

/// The engine thread's body.
pub(super) fn main(opts: Options, rx: Receiver<Input>, tx: Sender<Input>, publish: Publish) {
    let first = Snapshot {
        seq: 0,
        root: opts.root.clone(),
        params: opts.config.params(),
        documents: Documents::default(),
        clusters: Arc::from([]),
        table: TableStats::default(),
        table_history: Arc::from([]),
        bucket_fill: Arc::from([]),
        events: Arc::from([]),
        versions: 0,
        skipped: 0,
        shingles: 0,
        progress: Some(Progress {
            what: "opening the index".into(),
            done: 0,
            total: 0,
        }),
        watching: Watching::Starting,
    };
    let mut rep = Reporter {
        publish: publish.clone(),
        events: VecDeque::new(),
        fresh: Vec::new(),
        next_n: 0,
        last: Arc::new(first.clone()),
        last_progress: Instant::now(),
    };
    rep.publish(first);
    let fatal = |e: Failure| send(&publish, Update::Fatal(Arc::new(e)));
    let filter = match Filter::new(&opts.config.include, &opts.config.exclude) {
        Ok(f) => f,
        Err(e) => return fatal(e.into()),
    };
    let ix = match open_index(&opts, opts.config.params(), &mut rep) {
        Ok(ix) => ix,
        Err(e) => return fatal(e.into()),
    };
    let root_id = match source::check_root(ix.root()) {
        Ok(id) => id,
        Err(e) => return fatal(e.into()),
    };
    let mut live = match Live::new(opts, filter, ix, rep, tx) {
        Ok(l) => l,
        Err(e) => return fatal(e.into()),
    };
    // Watch first, then walk: a change made during the walk is then in the
    // walk or in an event (or both, which is harmless).
    if let Err(why) = live.folder.start(root_id) {
        live.rep.error(why);
    }
    live.sync(None);
    live.publish();
    live.run(&rx);
}

impl Live {
    fn new(
        opts: Options,
        filter: Filter,
        ix: Index,
        rep: Reporter,
        events: Sender<Input>,
    ) -> Result<Live, IndexError> {
        let mut live = Live {
            folder: Folder::new(ix.root().to_path_buf(), &opts.config.watch, events),
            clusters: Clusters::new(opts.config.watch.min_similarity),
            opts,
            filter,
            store: Store::new(ix),
            rows: Vec::new(),
            live: HashMap::new(),
            table_history: VecDeque::new(),
            documents: Documents::default(),
            cluster_list: Arc::from([]),
            dirty: true,
            changed: false,
            touched: Vec::new(),
            retired: Vec::new(),
            shadow: None,
            search: None,
            settling: 0,
            rep,
        };
        live.load()?;
        // The Events pane after a restart: the history's newest versions,
        // and the deletions and renames told of before.
        let departures = live.ix().departures(EVENTS)?;
        live.rep.events = view::past_events(&live.rows, &departures, EVENTS).into();
        live.rep.next_n = live.rep.events.front().map_or(0, |e| e.n);
        Ok(live)
    }

    fn ix(&self) -> &Index {
        self.store.ix.as_ref().expect("index open")
    }

    /// Every version's row from the index (paths and version numbers move
    /// with a rename).
    fn load_rows(&mut self) -> Result<(), IndexError> {
        let ix = self.store.ix.as_ref().expect("index open");
        self.rows = query::rows(ix)?;
        Ok(())
    }

    /// Rows, live documents and clusters from the index.
    fn load(&mut self) -> Result<(), IndexError> {
        self.load_rows()?;
        let ix = self.store.ix.as_ref().expect("index open");
        self.live = ix
            .paths()
            .filter(|(_, c)| c.status == Status::Live)
            .map(|(p, c)| (p.to_string(), c.id))
            .collect();
        let min = self.opts.config.watch.min_similarity;
        let mut clusters = Clusters::new(min);
        // `keys=3`: sketches of shingle keys of mixed token fingerprints
        // under the seeded polynomial;
        // pairs stored under other settings (another k, threshold, banding
        // or method) are computed again.
        let settings = format!("k={} keys=3 {}", ix.params().k, clusters.settings());
        let stored = ix.near(&settings)?;
        let mut ids: Vec<u32> = self.live.values().copied().collect();
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
        let ix = self.store.ix.as_mut().expect("index open");
        if stored.is_none() {
            ix.reset_near(&settings)?;
        }
        ix.put_near(&rows, &links, &gone, &dead)?;
        self.clusters = clusters;
        self.table_history.clear();
        self.sample_table();
        self.dirty = true;
        Ok(())
    }

    fn run(&mut self, rx: &Receiver<Input>) {
        // Deadlines, not timeouts: commands arriving often (a person
        // scrolling) must not put off ticks, releases or the checkpoint.
        let mut next_tick = Instant::now() + self.folder.every;
        // When the table first and last changed without being saved since.
        let mut unsaved: Option<(Instant, Instant)> = Some((Instant::now(), Instant::now()));
        let most = Duration::from_secs(self.opts.config.watch.checkpoint_secs);
        loop {
            let now = Instant::now();
            // Quiet, or changing for longer than the bound a crash may cost
            // to replay: save the table.
            let save_at = unsaved.map(|(first, last)| (last + CHECKPOINT_IDLE).min(first + most));
            if save_at.is_some_and(|s| now >= s) {
                self.checkpoint();
                unsaved = None;
                continue;
            }
            if now >= next_tick {
                next_tick = now + self.folder.every;
                if self.tick() {
                    changed_at(&mut unsaved, now);
                    self.publish();
                }
                continue;
            }
            let release = self.folder.next_release();
            if release.is_some_and(|r| now >= r) {
                let paths = self.folder.released();
                if !paths.is_empty() && self.sync(Some(paths)) {
                    changed_at(&mut unsaved, now);
                    self.publish();
                }
                continue;
            }
            let deadline = [Some(next_tick), save_at, release]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or(next_tick);
            let first = match rx.recv_timeout(deadline.saturating_duration_since(now)) {
                Ok(i) => i,
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => return self.checkpoint(),
            };
            let mut inputs = vec![first];
            inputs.extend(rx.try_iter());
            let mut paths: Vec<PathBuf> = Vec::new();
            let mut full = false;
            let mut changed = false;
            for input in inputs {
                match input {
                    Input::Command(Command::Quit) => return self.checkpoint(),
                    Input::Command(Command::Changed(p)) => paths.extend(p),
                    Input::Command(c) => changed |= self.command(c),
                    Input::Files(Batch::Changed { paths: p, rescan }) => {
                        self.folder.adopt(&p);
                        paths.extend(p);
                        full |= rescan;
                    }
                    Input::Files(Batch::Failed(errors)) => {
                        for e in errors {
                            self.rep.error(format!("watching: {e}"));
                        }
                        if let Some(why) = self.folder.lost_events() {
                            self.rep.error(why);
                        }
                        full = true;
                    }
                }
            }
            if full || !paths.is_empty() {
                // Paths an event found gone wait for the files being written
                // (once: not when they are released).
                let missing: Vec<PathBuf> = paths
                    .iter()
                    .filter(|p| p.symlink_metadata().is_err())
                    .cloned()
                    .collect();
                self.folder.hold_gone(&missing);
                changed |= self.sync((!full).then_some(paths));
            }
            if changed {
                // A checkpoint with nothing new to save is a no-op.
                changed_at(&mut unsaved, Instant::now());
                self.publish();
            }
        }
    }

    /// Every `every`: retry a closed index, check the root, rescan when
    /// events are not to be had. True if a snapshot is due.
    fn tick(&mut self) -> bool {
        if self.store.ix.is_none() {
            return self.recover();
        }
        if self.ix().log_removed() {
            return self.save_removed_log();
        }
        if let Some(changed) = self.check_root() {
            return changed;
        }
        // Unreadable folders that became readable are walked now (a
        // folder among the paths of a sync is a walk of the root anyway).
        let back = self.folder.retry_denied();
        (back || self.folder.rescanning()) && self.sync(None)
    }

    /// Whether the folder at the root's path is still the one watched. Gone:
    /// its documents are marked deleted and the watch waits. Back, replaced
    /// or moved away and another put there: the folder now at the path is
    /// watched and walked. `None` if nothing changed, else whether a
    /// snapshot is due.
    fn check_root(&mut self) -> Option<bool> {
        match self.folder.check() {
            Check::Same => None,
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
                self.sync(None);
                Some(true)
            }
            Check::Gone(e) => {
                self.rep.error(format!(
                    "{e}: its documents are marked deleted until a folder is back at its path"
                ));
                let cfg = &self.opts.config;
                if let Some(ix) = self.store.ix.as_mut() {
                    let gone = ix.sync(
                        source::Walk::default(),
                        cfg.max_file_size.0,
                        cfg.order,
                        &mut self.rep,
                    );
                    match gone {
                        Ok((_, changes)) => {
                            if let Err(e) = self.apply(changes) {
                                self.failed(e);
                            }
                        }
                        Err(e) => self.failed(e),
                    }
                }
                Some(true)
            }
        }
    }

    /// An index error: a failed write closes the index, to be reopened and
    /// caught up by a full walk when it can be written again (a full disk);
    /// anything else is reported and the engine goes on.
    fn failed(&mut self, e: IndexError) {
        if let Some(message) = self.store.failed(e) {
            self.rep.error(message);
        }
    }

    /// `index.db-wal` was removed while the index is open: copy the history
    /// it holds (the file is still open here) into `index.db` now, then
    /// reopen the index at the next tick, which makes a new log. Without
    /// this, the history since the last checkpoint went with the process.
    fn save_removed_log(&mut self) -> bool {
        self.checkpoint();
        let why = "index.db-wal was removed while in use";
        let saved = self.ix().checkpoint_wal();
        self.rep.error(match saved {
            Ok(()) => format!("{why}: the history it held is copied into index.db"),
            Err(e) => format!("{why}, and copying the history it held failed: {e}"),
        });
        self.store.reopen(why.to_string());
        true
    }

    /// Reopen a closed index and catch up with the folder; true if it opened.
    /// What opening it repairs is told once it opens (not at every try).
    fn recover(&mut self) -> bool {
        let params = self.opts.config.params();
        let mut notes = Notes::default();
        let Ok(ix) = open_index(&self.opts, params, &mut notes) else {
            return false;
        };
        self.store.ix = Some(ix);
        if let Err(e) = self.load() {
            self.failed(e);
            return true;
        }
        self.sync(None);
        if self.store.caught_up() {
            for n in notes.0 {
                self.rep.notice(&n);
            }
            self.rep
                .notice("the index can be written again: caught up with the folder");
        }
        true
    }

    /// The files the watcher holds back (being written), relative to the root.
    fn held(&self) -> HashSet<String> {
        self.folder.held()
    }

    /// Save the table snapshot if it is behind.
    fn checkpoint(&mut self) {
        if let Some(ix) = self.store.ix.as_mut()
            && let Err(e) = ix.checkpoint()
        {
            self.rep.error(format!("saving the table snapshot: {e}"));
        }
    }

    /// Bring the index up to the folder: the given paths only when they
    /// tell enough, else a walk of the whole root; files being written are
    /// left for later. True if anything changed or went wrong (a snapshot
    /// is due). Nothing while the index is closed or the root gone: a full
    /// walk catches up then.
    fn sync(&mut self, paths: Option<Vec<PathBuf>>) -> bool {
        if self.store.ix.is_none() || self.folder.gone() {
            return false;
        }
        let events = self.rep.next_n;
        let held = self.held();
        let cfg = &self.opts.config;
        let ix = self.store.ix.as_mut().expect("index open");
        let root = self.folder.root().to_path_buf();
        let scoped = paths.and_then(|p| {
            watcher::stat_paths(&root, &p, &self.filter, cfg.walk_options(), |prefix| {
                ix.holds_under(prefix)
            })
        });
        let full = scoped.is_none();
        let result = match scoped {
            Some((walk, scope)) => {
                // A path its last event released may be written again by
                // now, the new write's events still on their way.
                self.folder.hold_recent(&walk.files);
                // Their rows are built again (an mtime may have moved).
                self.touched.extend(scope.iter().cloned());
                let scope = Scope {
                    paths: Some(&scope),
                    held: held.union(&self.folder.held()).cloned().collect(),
                };
                ix.sync_scoped(walk, &scope, cfg.max_file_size.0, cfg.order, &mut self.rep)
            }
            None => match source::walk_with(&root, &self.filter, cfg.walk_options()) {
                // Timed rescans have no event telling that a write ended: a
                // file modified within the debounce window may be half
                // written, so the whole rescan waits for the next tick (a few
                // times at most: a file written without pause still gets in).
                Ok(walk)
                    if self.folder.rescanning()
                        && self.settling < SETTLE_TICKS
                        && unsettled(&walk, Duration::from_millis(cfg.watch.debounce_ms)) =>
                {
                    self.settling += 1;
                    return false;
                }
                Ok(walk) => {
                    self.settling = 0;
                    // Files written just now, with no event telling their
                    // writer is done: held like any other being written.
                    self.folder.hold_recent(&walk.files);
                    let scope = Scope {
                        paths: None,
                        held: held.union(&self.folder.held()).cloned().collect(),
                    };
                    ix.sync_scoped(walk, &scope, cfg.max_file_size.0, cfg.order, &mut self.rep)
                }
                // The root itself failed: gone, replaced or unreadable.
                Err(e) => {
                    return self.check_root().unwrap_or_else(|| {
                        self.rep.error(e.to_string());
                        true
                    });
                }
            },
        };
        match result {
            Ok((_, changes)) => {
                // A walk may have moved any document's mtime.
                self.dirty |= full && !changes.is_empty();
                if let Err(e) = self.apply(changes) {
                    self.failed(e);
                }
            }
            Err(e) => self.failed(e),
        }
        self.dirty || self.changed || self.rep.next_n != events || self.rep.last.progress.is_some()
    }

    /// Record what a sync did: rows, live documents, clusters, events.
    fn apply(&mut self, changes: Vec<Change>) -> Result<(), IndexError> {
        if changes.is_empty() {
            return Ok(());
        }
        // Near-duplicate rows of the whole step, stored in one transaction
        // with the sketches of the versions it retires forgotten.
        let mut near = Vec::new();
        let retired_before = self.retired.len();
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
                } => {
                    debug_assert_eq!(outcome.id as usize, self.rows.len());
                    let mtime = self.ix().current(&path).map_or(0, |c| c.mtime_ns);
                    self.rows.push(row(&path, version, &outcome, mtime));
                    near.extend(self.set_live(&path, Some(outcome.id))?);
                    self.version_event(outcome.id);
                }
                Change::Revived { path, id } => {
                    near.extend(self.set_live(&path, Some(id))?);
                    self.version_event(id);
                }
                Change::Deleted { path } => {
                    self.set_live(&path, None)?;
                    if !skipped.contains(&path) {
                        let kind = EventKind::Deleted { path };
                        departures.extend(view::departure(self.rep.push(kind.clone()), &kind));
                    }
                }
                Change::Renamed { from, to, id } => {
                    if let Some(old) = self.live.remove(&from) {
                        // Same versions, same sets: only the path moves.
                        if let Some(replaced) = self.live.insert(to.clone(), old) {
                            self.clusters.remove(replaced);
                        }
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
            self.load_rows()?;
            self.dirty = true;
        }
        // Clusters split by deletions find the links they skipped.
        let ix = self.store.ix.as_ref().expect("index open");
        let links = self.clusters.settle(&mut |o| stored_set(ix, o))?;
        let ix = self.store.ix.as_mut().expect("index open");
        ix.put_near(&near, &links, &[], &self.retired[retired_before..])?;
        ix.note_departures(&departures)?;
        self.sample_table();
        self.changed = true;
        Ok(())
    }

    /// `path`'s live version is now `id` (None: not live); for a live one,
    /// the row the index stores of its sketch and pairs.
    fn set_live(&mut self, path: &str, id: Option<u32>) -> Result<Option<NearRow>, IndexError> {
        if let Some(old) = self.live.remove(path) {
            self.clusters.remove(old);
            self.retired.push(old);
        }
        let Some(id) = id else { return Ok(None) };
        let ix = self.store.ix.as_ref().expect("index open");
        let set = stored_set(ix, id)?;
        let row = self.clusters.insert(id, &set, |o| stored_set(ix, o))?;
        self.live.insert(path.to_string(), id);
        self.touched.push(path.to_string());
        Ok(Some(row))
    }

    fn version_event(&mut self, id: u32) {
        let kind = view::version_event(&self.rows, id);
        self.rep.push(kind);
    }

    fn sample_table(&mut self) {
        let stats = table_stats(self.ix(), self.rows.len() as u64, self.table_history.back());
        self.table_history.push_back(stats);
        while self.table_history.len() > HISTORY {
            self.table_history.pop_front();
        }
    }

    /// Answer a command; true if the live state changed.
    fn command(&mut self, c: Command) -> bool {
        if let Some(why) = self.store.down()
            && !matches!(c, Command::Cancel { .. })
        {
            self.rep.error(format!(
                "the index is closed ({why}); try again when it can be written"
            ));
            return true;
        }
        match c {
            Command::Origin { id, exact } => {
                if (id as usize) < self.rows.len() {
                    match query::origin_view(self.ix(), &self.rows, id, exact) {
                        Ok(v) => send(&self.rep.publish, Update::Origin(Arc::new(v))),
                        Err(e) => self.rep.error(format!("origin of version {id}: {e}")),
                    }
                }
                false
            }
            Command::Compare { a, b } => {
                let n = self.rows.len() as u32;
                if a < n && b < n {
                    match query::compare(self.ix(), &self.rows, a, b) {
                        Ok(v) => send(&self.rep.publish, Update::Compare(Arc::new(v))),
                        Err(e) => self.rep.error(format!("comparing {a} and {b}: {e}")),
                    }
                }
                false
            }
            Command::Copies { id } => {
                if (id as usize) < self.rows.len() {
                    let row = &self.rows[id as usize];
                    match query::copies(self.ix(), &self.rows, id) {
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
                false
            }
            Command::Shadow { generation, runs } => {
                self.start_shadow(generation, runs);
                false
            }
            Command::Search { generation, query } => {
                self.start_search(generation, query);
                false
            }
            Command::Cancel { generation } => {
                if let Some((g, cancel)) = &self.shadow
                    && *g == generation
                {
                    cancel.store(true, Ordering::Relaxed);
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
                    self.shadow = None;
                }
                false
            }
            Command::Adopt(params) => {
                let mut config = self.opts.config.clone();
                config.set_params(&params);
                let valid = config.validate().map_err(|e| e.to_string());
                if let Err(e) =
                    valid.and_then(|_| params.table_params().validate().map_err(|e| e.to_string()))
                {
                    self.rep.error(format!("cannot adopt these settings: {e}"));
                    return true;
                }
                self.rep.notice(&format!(
                    "adopting new settings: {}",
                    lineage_store::index::params_key(&params)
                ));
                self.reopen(params);
                true
            }
            // Asked for: always answered with a snapshot, even when the
            // walk found nothing new (the TUI waits for it).
            Command::Rescan => {
                self.sync(None);
                true
            }
            Command::Quit | Command::Changed(_) => unreachable!("handled by the loop"),
        }
    }

    fn start_shadow(&mut self, generation: u64, runs: Vec<Params>) {
        if let Some((_, cancel)) = self.shadow.take() {
            cancel.store(true, Ordering::Relaxed);
        }
        let history = match self.ix().history_reader() {
            Ok(h) => h,
            Err(e) => return self.rep.error(format!("shadow run: {e}")),
        };
        let cancel = Arc::new(AtomicBool::new(false));
        let job = Job {
            generation,
            poly: self.ix().polynomial().clone(),
            runs,
            versions: self.rows.len() as u32,
            cancel: cancel.clone(),
        };
        let publish = self.rep.publish.clone();
        let spawned = std::thread::Builder::new()
            .name("lineage-shadow".into())
            .spawn(move || shadow::run(&history, &job, |u| send(&publish, Update::Shadow(u))));
        match spawned {
            Ok(_) => self.shadow = Some((generation, cancel)),
            Err(e) => self.rep.error(format!("shadow run: {e}")),
        }
    }

    /// Search the live pages for `query` in a thread of its own, after
    /// stopping the search under way (an empty query only stops it).
    fn start_search(&mut self, generation: u64, query: String) {
        if let Some(cancel) = self.search.take() {
            cancel.store(true, Ordering::Relaxed);
        }
        if query.is_empty() {
            return;
        }
        let history = match self.ix().history_reader() {
            Ok(h) => h,
            Err(e) => return self.rep.error(format!("search: {e}")),
        };
        let mut pages: Vec<search::Page> = (self.live.iter())
            .map(|(path, &id)| search::Page {
                id,
                path: Arc::from(path.as_str()),
                version: self.rows[id as usize].version,
            })
            .collect();
        pages.sort_unstable_by(|a, b| a.path.cmp(&b.path));
        let cancel = Arc::new(AtomicBool::new(false));
        let job = search::Job {
            generation,
            query,
            pages,
            root: self.opts.root.clone(),
            max_file_size: self.opts.config.max_file_size.0,
            cancel: cancel.clone(),
        };
        let publish = self.rep.publish.clone();
        let spawned = std::thread::Builder::new()
            .name("lineage-search".into())
            .spawn(move || {
                search::run(&history, &job, |v| {
                    send(&publish, Update::Search(Arc::new(v)))
                })
            });
        match spawned {
            Ok(_) => self.search = Some(cancel),
            Err(e) => self.rep.error(format!("search: {e}")),
        }
    }

    /// Reopen the index with `params` (replaying cached fingerprints when
    /// they differ from its own); on failure, with the settings it had.
    fn reopen(&mut self, params: Params) {
        self.checkpoint();
        let old = self.opts.config.params();
        self.store.ix = None;
        let mut opened = open_index(&self.opts, params, &mut self.rep).map(|ix| (ix, params));
        if let Err(e) = &opened {
            self.rep.error(format!("reopening the index: {e}"));
            opened = open_index(&self.opts, old, &mut self.rep).map(|ix| (ix, old));
        }
        match opened {
            Ok((ix, p)) => {
                self.store.ix = Some(ix);
                self.opts.config.set_params(&p);
                if let Err(e) = self.load() {
                    self.failed(e);
                }
            }
            // Closed; retried every tick (see `recover`).
            Err(e) => self.failed(e),
        }
    }

    fn publish(&mut self) {
        if self.store.ix.is_none() {
            // Closed: the last snapshot stands; the events go out.
            let last = Snapshot {
                watching: self.folder.watching.clone(),
                ..(*self.rep.last).clone()
            };
            return self.rep.publish(last);
        }
        if self.dirty || self.changed {
            self.rep.send_events();
            self.rebuild();
        }
        let ix = self.ix();
        let table = ix.pass().table();
        let bucket_fill = view::fill_histogram(&table.bucket_fill(), ix.params().bucket_entries);
        let counts = ix.counts();
        let s = Snapshot {
            seq: 0,
            root: ix.root().to_path_buf(),
            params: *ix.params(),
            documents: self.documents.clone(),
            clusters: self.cluster_list.clone(),
            table: table_stats(ix, self.rows.len() as u64, self.table_history.back()),
            table_history: self.table_history.iter().copied().collect(),
            bucket_fill: bucket_fill.into(),
            events: Arc::from([]),
            versions: counts.versions,
            skipped: counts.skipped,
            shingles: self.rows.iter().map(|r| u64::from(r.shingles)).sum(),
            progress: None,
            watching: self.folder.watching.clone(),
        };
        self.rep.publish(s);
    }

    /// The documents and clusters of the next snapshot. When only some
    /// documents changed, only their rows are built again (see
    /// [`Documents::edited`]): building every row costs 0.1 s at 100,000
    /// documents (a lookup of its path, its mtime and its dominant origin's
    /// path each), most of the time from an edit to the screen.
    fn rebuild(&mut self) {
        let (clusters, of) = self.clusters.clusters();
        let ix = self.ix();
        let mtime = |path: &str| ix.current(path).map_or(0, |c| c.mtime_ns);
        let docs = if self.dirty {
            Documents::new(view::doc_rows(&self.rows, &self.live, mtime), of)
        } else {
            let touched: HashMap<String, u32> = self
                .touched
                .iter()
                .filter_map(|p| self.live.get(p).map(|&id| (p.clone(), id)))
                .collect();
            let mut gone: Vec<u32> = touched.values().copied().collect();
            gone.extend(&self.retired);
            gone.sort_unstable();
            let new = view::doc_rows(&self.rows, &touched, mtime);
            let docs = self.documents.edited(&gone, new, of);
            debug_assert!(
                docs.iter()
                    .eq(&view::doc_rows(&self.rows, &self.live, mtime)),
                "rows kept and rows built again make every row"
            );
            docs
        };
        self.documents = docs;
        self.cluster_list = clusters.into();
        self.dirty = false;
        self.changed = false;
        self.touched.clear();
        self.retired.clear();
    }
}

/// Version `id`'s shingle set, from the index's cached fingerprints.
fn stored_set(ix: &Index, id: u32) -> Result<Arc<[u64]>, IndexError> {
    ix.shingle_keys(id).map(|k| shingle_set(k).into())
}

/// Note a change at `now` in the (first, last) unsaved change times.
fn changed_at(unsaved: &mut Option<(Instant, Instant)>, now: Instant) {
    unsaved.get_or_insert((now, now)).1 = now;
}

/// Notices kept back, for an index that may not open after all.
#[derive(Default)]
struct Notes(Vec<String>);

impl Observer for Notes {
    fn notice(&mut self, message: &str) {
        self.0.push(message.to_string());
    }
}

fn row(path: &str, version: u32, o: &Outcome, mtime_ns: i64) -> Row {
    Row {
        mtime_ns,
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
fn table_stats(ix: &Index, versions: u64, last: Option<&TableStats>) -> TableStats {
    let t = ix.pass().table();
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

/// Open the root's index for `params`, its texts within the configured budget.
fn open_index(
    opts: &Options,
    params: Params,
    obs: &mut dyn lineage_store::index::Observer,
) -> Result<Index, IndexError> {
    let mut ix = Index::open(
        &opts.root,
        &opts.index_dir,
        params,
        &opts.config.polynomial(),
        obs,
    )?;
    ix.set_history_budget(opts.config.history_budget.0)?;
    Ok(ix)
}
