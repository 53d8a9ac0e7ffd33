//! The persistent index of one root (docs/architecture.md, "What lies on disk"): the document log
//! with every version's cached token fingerprints and outcome summary in an
//! embedded SQLite database, and the fixed-size table's state in a snapshot
//! file beside it, so that a re-open continues where the last run stopped.
//!
//! The index stores and reads; it runs no algorithm. Its caller owns the
//! origin pass and its table: it gives the outcome of each version the
//! index numbers ([`Batch`]), and the table to checkpoint.
//!
//! Opening checks everything and repairs what it can: a damaged or foreign
//! database is rebuilt from the files; a missing, damaged or behind snapshot,
//! or other engine parameters, leave versions for the caller to replay from
//! the cached fingerprints ([`Restored`]; no file is re-read). Each repair
//! says so once through [`Observer::notice`]. The root is only ever read.

mod departures;
mod history;
mod lock;
pub use lock::check_free;
mod near;
mod origins;
mod read;
mod reconcile;
mod schema;
mod snapshot;
mod texts;

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

pub use departures::Departure;
pub use near::NearRow;
pub use read::{Read, ReadOnly};
pub use reconcile::{Batch, Change, Content, NotRead, Pending, Reader, Report, Scope, Syncing};
pub use schema::{Current, HistoryRow, SkipRow, Status};
pub use texts::Kept;

/// The full-screen view's pane, order and filter as it was left
/// (`tui::remember`), kept with the index of the folder it showed.
pub const VIEW_FILE: &str = "view.json";

use lineage_core::fingerprint::ShingleRoller;
use lineage_core::fingerprint::polynomial::Polynomial;
use lineage_origin::align::OriginKeys;
use lineage_origin::table::{Table, TableError};
use lineage_origin::{Outcome, Params};
use schema::{Db, OpenError};

/// Where an index reports what it repairs and how far a long step is.
pub trait Observer {
    /// A one-line message for a person (a repair, a rebuild).
    fn notice(&mut self, message: &str);
    /// `done` of `total` items of a long step (`what`: "indexing", "replaying").
    fn progress(&mut self, _what: &str, _done: u64, _total: u64) {}
    /// Whether to stop after the batch in hand (a signal asked), leaving
    /// the rest for the next run.
    fn stopped(&self) -> bool {
        false
    }
}

/// An observer that drops everything.
pub struct Quiet;

impl Observer for Quiet {
    fn notice(&mut self, _: &str) {}
}

/// Why the index cannot do what was asked; I/O errors keep their cause, so a
/// caller can tell a full disk from a damaged file.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// Another process holds the index (its PID, when it wrote one).
    #[error("index {} is in use by another lineage process{}", .0.display(), lock::holder(*.1))]
    Locked(PathBuf, Option<u32>),
    /// The index folder or the root is not usable as asked.
    #[error("{0}")]
    Location(String),
    /// Stopped between batches, as the observer asked: what was read is in
    /// the index, the rest is for the next run.
    #[error("stopped before the end; the next run goes on from here")]
    Stopped,
    #[error("index database: {0}")]
    Db(#[from] rusqlite::Error),
    /// `what` (e.g. "cannot write the table snapshot in") failed on `path`.
    #[error("{what} {}: {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// Still damaged after the rebuild that should have repaired it.
    #[error("index {}: {reason} (even after a rebuild)", dir.display())]
    Unrepairable { dir: PathBuf, reason: String },
    /// The database holds something it cannot: a one-line reason.
    #[error("the index is damaged: {0}")]
    Damaged(String),
    /// A version the history should hold is not there.
    #[error("version {0} has no outcome in the index")]
    Missing(u32),
    /// A version forgotten for the history budget (index/history.rs).
    #[error(
        "version {0} was forgotten to keep the history within history_budget: its \
         fingerprints and text are gone (its recorded outcome stands)"
    )]
    Forgotten(u32),
    #[error(transparent)]
    Table(#[from] TableError),
    /// The index's fingerprints were taken under another polynomial.
    #[error(
        "index {} was built with --fingerprint-seed {built}, not {asked}: give that seed, \
         or another --index",
        dir.display()
    )]
    Polynomial {
        dir: PathBuf,
        built: String,
        asked: u64,
    },
    /// An earlier write failed half-way: reopen the index.
    #[error("index left unusable by an earlier error; reopen it")]
    Poisoned,
}

impl IndexError {
    /// Why the index's database is damaged, when this is SQLite finding it
    /// so: a rebuild from the files ([`Index::rebuild`]) repairs it.
    pub fn damage(&self) -> Option<String> {
        match self {
            IndexError::Db(e) if schema::is_corruption(e) => {
                Some(format!("database damaged ({e})"))
            }
            _ => None,
        }
    }

    fn io(what: &'static str, path: &Path) -> impl FnOnce(io::Error) -> IndexError {
        let path = path.to_path_buf();
        move |source| IndexError::Io { what, path, source }
    }
}

/// Live documents, versions in the history, skipped files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counts {
    pub documents: u64,
    pub versions: u64,
    pub skipped: u64,
}

/// An open index; holds the index's lock until dropped.
pub struct Index {
    dir: PathBuf,
    root: PathBuf,
    params: Params,
    params_key: String,
    db: Db,
    /// The polynomial of its token fingerprints and file hashes.
    poly: Polynomial,
    /// The roller of its k, for [`Read::shingle_keys`].
    roller: ShingleRoller,
    /// Versions in the log; the next version's id.
    versions: u32,
    /// Content hash of the last version (the snapshot header's `last_hash`).
    last_hash: u64,
    /// `meta.instance`, the snapshot header's `instance`.
    instance: u64,
    current: HashMap<String, Current>,
    skipped: HashMap<String, SkipRow>,
    /// The table has processed versions the snapshot file does not cover.
    snapshot_stale: bool,
    /// The snapshot and journal on disk and the (versions, last hash) they
    /// bring the table to, when they and the table's changed buckets make
    /// its state (a checkpoint may then append the changes); None: the next
    /// checkpoint writes the snapshot whole.
    saved: Option<(snapshot::OnDisk, (u64, u64))>,
    /// Set while a batch is being written: in-memory state may be ahead of
    /// the database if it fails.
    poisoned: bool,
    /// Bytes the text store may hold (0: texts are not kept).
    history_budget: u64,
    /// Bytes it holds.
    texts_total: u64,
    /// It was rebuilt from the files since it was opened: a second damage
    /// is beyond repair.
    rebuilt: bool,
    _lock: lock::Lock,
}

/// The table as the index could restore it, with the versions the caller's
/// origin pass must replay from the cached fingerprints to bring it up to
/// the log ([`Index::replay_keys`], [`Index::put_replayed`],
/// [`Index::replayed`]).
pub struct Restored {
    pub table: Table,
    /// Versions `start..` are to be replayed (none when `start` is
    /// [`Index::versions`]).
    pub start: u32,
    /// Outcomes of versions before `through` are stored and valid; those
    /// from it on are to be written by the replay.
    pub through: u32,
}

/// The canonical string of the engine parameters: stored in the database and
/// the snapshot header; an index built with another is re-processed.
pub fn params_key(p: &Params) -> String {
    format!(
        "k={} selector={} table_size={} bucket_entries={} eviction={} eviction_ties={} \
         estimation={} bridge_limit={} seed={} align={}",
        p.k,
        p.selector,
        p.table_size,
        p.bucket_entries,
        p.eviction,
        p.ties,
        p.estimation,
        p.bridge_limit,
        p.seed,
        if p.align { "on" } else { "off" }
    )
}

/// The parameters [`params_key`] wrote, or None if it is not such a string.
pub(crate) fn params_from_key(key: &str) -> Option<Params> {
    let mut p = Params::default();
    let mut seen = 0;
    for pair in key.split(' ') {
        let (name, value) = pair.split_once('=')?;
        match name {
            "k" => p.k = value.parse().ok()?,
            "selector" => p.selector = value.parse().ok()?,
            "table_size" => p.table_size = value.parse().ok()?,
            "bucket_entries" => p.bucket_entries = value.parse().ok()?,
            "eviction" => p.eviction = value.parse().ok()?,
            "eviction_ties" => p.ties = value.parse().ok()?,
            "estimation" => p.estimation = value.parse().ok()?,
            "bridge_limit" => p.bridge_limit = value.parse().ok()?,
            "seed" => p.seed = value.parse().ok()?,
            "align" => p.align = value == "on",
            _ => return None,
        }
        seen += 1;
    }
    // A key written before alignment (nine settings) was a run without it.
    match seen {
        9 => Some(Params { align: false, ..p }),
        10 => Some(p),
        _ => None,
    }
}

/// Whether `dir` holds an index (its database file, whatever state it is
/// in): what reads an index without making one checks first.
pub fn exists(dir: &Path) -> bool {
    fs::symlink_metadata(dir.join(schema::FILE)).is_ok()
}

/// The index folder of `root`: `explicit` (`--index DIR`) when given, else
/// `<base>/<hash of the canonical root>/`, where `base` is the configured
/// `index_dir` or the platform data directory's `indexes/`.
pub fn location(
    root: &Path,
    explicit: Option<&Path>,
    base: Option<&Path>,
) -> Result<PathBuf, IndexError> {
    if let Some(dir) = explicit {
        return Ok(dir.to_path_buf());
    }
    let canonical = fs::canonicalize(root)
        .map_err(|e| IndexError::Location(format!("cannot read root {}: {e}", root.display())))?;
    let base = match base {
        Some(b) => b.to_path_buf(),
        None => directories::ProjectDirs::from("", "", "lineage")
            .ok_or_else(|| {
                IndexError::Location(
                    "no platform data directory (set HOME, or pass --index DIR)".into(),
                )
            })?
            .data_dir()
            .join("indexes"),
    };
    Ok(base.join(root_key(&canonical)))
}

/// A stable name for a canonical root path: its Rabin-64 fingerprint in hex.
pub(crate) fn root_key(canonical_root: &Path) -> String {
    let bytes = canonical_root.as_os_str().as_encoded_bytes();
    format!(
        "{:016x}",
        lineage_core::fingerprint::rabin::fingerprint(bytes, 1)
    )
}

/// How `meta.polynomial` spells a polynomial: its low word in hex.
fn polynomial_hex(p: &Polynomial) -> String {
    format!("{:#018x}", p.low())
}

/// Whether the index's token fingerprints and file hashes were taken under
/// `p`: an error names the seed they were taken under; `false` when the
/// index records none (damage).
pub(crate) fn same_polynomial(db: &Db, dir: &Path, p: &Polynomial) -> Result<bool, IndexError> {
    match (db.meta("fingerprint_seed")?, db.meta("polynomial")?) {
        (Some(seed), Some(low)) if seed == p.seed().to_string() => {
            if low == polynomial_hex(p) {
                Ok(true)
            } else {
                // A lineage that drew another P from the same seed.
                Err(IndexError::Damaged(format!(
                    "it records the polynomial {low} for seed {seed}, which gives {}",
                    polynomial_hex(p)
                )))
            }
        }
        (Some(built), Some(_)) => Err(IndexError::Polynomial {
            dir: dir.to_path_buf(),
            built,
            asked: p.seed(),
        }),
        _ => Ok(false),
    }
}

/// Nanoseconds since the Unix epoch (negative before it), as stored.
pub(crate) fn mtime_ns(t: SystemTime) -> i64 {
    let ns = |d: std::time::Duration| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX);
    match t.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => ns(d),
        Err(e) => -ns(e.duration()),
    }
}

/// Why loading failed: repairable by a rebuild, or not.
enum Load {
    Rebuild(String),
    Fatal(IndexError),
}

impl From<rusqlite::Error> for Load {
    fn from(e: rusqlite::Error) -> Load {
        if schema::is_corruption(&e) {
            Load::Rebuild(format!("database damaged ({e})"))
        } else {
            Load::Fatal(IndexError::Db(e))
        }
    }
}

/// Everything of an [`Index`] but its lock.
struct Loaded {
    db: Db,
    restored: Restored,
    versions: u32,
    last_hash: u64,
    instance: u64,
    current: HashMap<String, Current>,
    skipped: HashMap<String, SkipRow>,
    texts_total: u64,
    saved: Option<(snapshot::OnDisk, (u64, u64))>,
}

impl Index {
    /// Open (creating if needed) the index of `root` in `dir` for `params`,
    /// taking its lock and repairing it if needed (see the module docs).
    /// `dir` must not be inside the root, and an existing non-empty `dir`
    /// must be an index.
    /// Token fingerprints and file hashes are taken under `poly`; an index
    /// built under another is refused ([`IndexError::Polynomial`]).
    pub fn open(
        root: &Path,
        dir: &Path,
        params: Params,
        poly: &Polynomial,
        obs: &mut dyn Observer,
    ) -> Result<(Index, Restored), IndexError> {
        params
            .table_params()
            .validate()
            .map_err(IndexError::Table)?;
        let root = fs::canonicalize(root).map_err(|e| {
            IndexError::Location(format!("cannot read root {}: {e}", root.display()))
        })?;
        if !root.is_dir() {
            return Err(IndexError::Location(format!(
                "root {} is not a directory",
                root.display()
            )));
        }
        prepare_dir(&root, dir)?;
        let lock = lock::acquire(dir)?;
        // A temp file is only left by a run killed while writing a snapshot.
        lineage_core::fsio::remove_stale_temps(dir);
        open_locked(root, dir, params, poly, lock, false, obs)
    }

    /// Rebuild the index from the files, keeping its lock: what its caller
    /// does when the replay finds the cached fingerprints damaged (`why`).
    /// A second damage is beyond repair ([`IndexError::Unrepairable`]).
    pub fn rebuild(
        self,
        why: &str,
        obs: &mut dyn Observer,
    ) -> Result<(Index, Restored), IndexError> {
        let Index {
            dir,
            root,
            params,
            poly,
            rebuilt,
            _lock: lock,
            db,
            ..
        } = self;
        if rebuilt {
            return Err(IndexError::Unrepairable {
                dir,
                reason: why.to_string(),
            });
        }
        drop(db);
        rebuild_notice(&dir, why, obs);
        wipe(&dir)?;
        open_locked(root, &dir, params, &poly, lock, true, obs)
    }

    /// Versions in the log: the next version's id.
    pub fn versions(&self) -> u32 {
        self.versions
    }

    /// Earlier versions' shingle keys from their cached fingerprints,
    /// rolled by `roller` (the preparer's): what a replay aligns with.
    pub fn replay_keys<'a>(&'a self, roller: &'a ShingleRoller) -> impl OriginKeys + 'a {
        origins::CachedKeys::new(self.db.conn(), roller)
    }

    /// Store the outcomes a replay gave to versions `..end` (those from
    /// [`Restored::through`] on; the ones before are valid and stay), in
    /// one transaction that records them valid up to `end`.
    pub fn put_replayed(
        &mut self,
        outcomes: &[Outcome],
        through: u32,
        end: u32,
    ) -> Result<(), IndexError> {
        self.check_usable()?;
        if end <= through {
            return Ok(());
        }
        self.poisoned = true;
        let tx = self.db.transaction()?;
        for o in outcomes.iter().filter(|o| o.id >= through) {
            schema::put_outcome(&tx, o)?;
        }
        schema::set_meta(&tx, "outcomes_through", &end.to_string())?;
        tx.commit()?;
        self.poisoned = false;
        Ok(())
    }

    /// The replay has brought `table` up to the log: write its snapshot
    /// whole.
    pub fn replayed(&mut self, table: &mut Table) -> Result<(), IndexError> {
        let header = snapshot::Header {
            params: self.params_key.clone(),
            instance: self.instance,
            versions: u64::from(self.versions),
            last_hash: self.last_hash,
        };
        self.saved = Some(write_snapshot(&self.dir, &header, table)?);
        Ok(())
    }

    /// Keep the history within `budget` bytes from now on (0: keep no
    /// texts); a lower budget drops texts and forgets versions at once
    /// (index/texts.rs and index/history.rs say which).
    pub fn set_history_budget(&mut self, budget: u64) -> Result<(), IndexError> {
        self.check_usable()?;
        let lower = budget < self.history_budget;
        self.history_budget = budget;
        if self.texts_total > budget {
            self.poisoned = true;
            let tx = self.db.transaction()?;
            texts::enforce(&tx, budget, &mut self.texts_total)?;
            tx.commit()?;
            self.poisoned = false;
        }
        if lower {
            self.forget_past()?;
        }
        Ok(())
    }

    /// Forget the oldest replaced and deleted versions while the history
    /// is over its budget (index/history.rs).
    fn forget_past(&mut self) -> Result<(), IndexError> {
        self.poisoned = true;
        let tx = self.db.transaction()?;
        let forgot = history::forget(&tx, self.history_budget, &mut self.texts_total)?;
        tx.commit()?;
        self.poisoned = false;
        if !forgot.is_empty() {
            let ids: HashSet<u32> = forgot.into_iter().collect();
            for c in self.current.values_mut() {
                c.forgotten |= ids.contains(&c.id);
            }
        }
        Ok(())
    }

    /// Bytes the history holds against `history_budget`: the kept texts
    /// and the fingerprints of replaced and deleted versions.
    pub fn history_bytes(&self) -> Result<u64, IndexError> {
        Ok(self.texts_total + history::past_fingerprint_bytes(self.db.conn())?)
    }

    /// Bytes the text store holds (compressed).
    pub fn texts_bytes(&self) -> u64 {
        self.texts_total
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn counts(&self) -> Counts {
        Counts {
            documents: self
                .current
                .values()
                .filter(|c| c.status == Status::Live)
                .count() as u64,
            versions: u64::from(self.versions),
            skipped: self.skipped.len() as u64,
        }
    }

    /// Every path with its latest version (live, deleted or replaced).
    pub fn paths(&self) -> impl Iterator<Item = (&str, &Current)> {
        self.current.iter().map(|(p, c)| (p.as_str(), c))
    }

    /// Whether a live document's path starts with `prefix`.
    pub fn holds_under(&self, prefix: &str) -> bool {
        self.current
            .iter()
            .any(|(p, c)| c.status == Status::Live && p.starts_with(prefix))
    }

    /// A read-only view of the history for another thread (shadow runs).
    pub fn history_reader(&self) -> Result<History, IndexError> {
        Ok(History(schema::Db::open_reader(
            &self.dir.join(schema::FILE),
        )?))
    }

    /// Files left out, with the reason, sorted by path.
    pub fn skipped(&self) -> Vec<(&str, &SkipRow)> {
        let mut v: Vec<_> = self.skipped.iter().map(|(p, s)| (p.as_str(), s)).collect();
        v.sort_by(|a, b| a.0.cmp(b.0));
        v
    }

    /// Write the snapshot of `table` (the caller's origin pass's, which has
    /// processed every version in the log) if it has processed versions the
    /// snapshot does not cover: at the end of a sync, or when a long-lived
    /// owner (the watcher) sees fit.
    pub fn checkpoint(&mut self, table: &mut Table) -> Result<(), IndexError> {
        self.check_usable()?;
        if !self.snapshot_stale {
            return Ok(());
        }
        // Versions replaced since the last checkpoint count against the
        // history budget from now on.
        self.forget_past()?;
        let to = (u64::from(self.versions), self.last_hash);
        // What changed goes to the journal while it is smaller than the
        // snapshot; then the snapshot is written whole, the journal removed.
        if let Some((disk, from)) = self.saved
            && !disk.tail
            && disk.journal < disk.snapshot
        {
            let appended = snapshot::append(&self.dir, self.instance, from, to, table);
            match appended {
                Ok(Some(journal)) => {
                    table.clear_changes();
                    self.saved = Some((snapshot::OnDisk { journal, ..disk }, to));
                    self.snapshot_stale = false;
                    return self.checkpoint_wal();
                }
                Ok(None) => {}
                Err(e) => {
                    // Whatever the journal's tail is now, the next
                    // checkpoint writes the snapshot whole.
                    self.saved = None;
                    return Err(IndexError::io(
                        "cannot append to the table journal in",
                        &self.dir,
                    )(e));
                }
            }
        }
        let header = snapshot::Header {
            params: self.params_key.clone(),
            instance: self.instance,
            versions: to.0,
            last_hash: to.1,
        };
        self.saved = Some(write_snapshot(&self.dir, &header, table)?);
        self.snapshot_stale = false;
        self.checkpoint_wal()
    }

    /// Whether SQLite's write-ahead log was removed under the open
    /// database: what is in it lives on only in this process (the file is
    /// still open), so [`Index::checkpoint_wal`] must copy it into `index.db`
    /// before the index is reopened (a new log then comes with it).
    pub fn log_removed(&self) -> bool {
        !self.dir.join(schema::COMPANIONS[0]).exists() && self.dir.join(schema::FILE).exists()
    }

    /// Copy the database's write-ahead log into `index.db`: SQLite does it
    /// itself only past 1,000 pages, so a watcher's slow trickle of changes
    /// could live in the WAL alone for days (and go with it). Passive: a
    /// reader beside (`explain`) is not waited for.
    pub fn checkpoint_wal(&self) -> Result<(), IndexError> {
        self.db
            .conn()
            .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))?;
        Ok(())
    }

    fn check_usable(&self) -> Result<(), IndexError> {
        if self.poisoned {
            Err(IndexError::Poisoned)
        } else {
            Ok(())
        }
    }
}

/// [`Index::open`] once the lock is taken; `rebuilt`: the index was
/// just rebuilt, so damage found now is beyond repair.
fn open_locked(
    root: PathBuf,
    dir: &Path,
    params: Params,
    poly: &Polynomial,
    lock: lock::Lock,
    mut rebuilt: bool,
    obs: &mut dyn Observer,
) -> Result<(Index, Restored), IndexError> {
    let key = params_key(&params);
    let loaded = loop {
        match load(&root, dir, params, poly, &key, obs) {
            Ok(l) => break l,
            Err(Load::Rebuild(reason)) if !rebuilt => {
                rebuild_notice(dir, &reason, obs);
                wipe(dir)?;
                rebuilt = true;
            }
            Err(Load::Rebuild(reason)) => {
                return Err(IndexError::Unrepairable {
                    dir: dir.to_path_buf(),
                    reason,
                });
            }
            Err(Load::Fatal(e)) => return Err(e),
        }
    };
    let ix = Index {
        dir: dir.to_path_buf(),
        root,
        params,
        params_key: key,
        db: loaded.db,
        poly: poly.clone(),
        roller: ShingleRoller::new(poly, params.k),
        versions: loaded.versions,
        last_hash: loaded.last_hash,
        instance: loaded.instance,
        current: loaded.current,
        skipped: loaded.skipped,
        snapshot_stale: false,
        saved: loaded.saved,
        poisoned: false,
        history_budget: texts::DEFAULT_BUDGET,
        texts_total: loaded.texts_total,
        rebuilt,
        _lock: lock,
    };
    Ok((ix, loaded.restored))
}

/// Tell a person the index is rebuilt from the files, and why.
fn rebuild_notice(dir: &Path, why: &str, obs: &mut dyn Observer) {
    obs.notice(&format!(
        "index {}: {}; rebuilding it from the files",
        dir.display(),
        one_line(dir, why)
    ));
}

/// Write `table` whole with `header`, which then has no changes pending:
/// what [`Index::checkpoint`] appends to next (see `Index::saved`).
fn write_snapshot(
    dir: &Path,
    header: &snapshot::Header,
    table: &mut Table,
) -> Result<(snapshot::OnDisk, (u64, u64)), IndexError> {
    let size = snapshot::write(dir, header, table)
        .map_err(IndexError::io("cannot write the table snapshot in", dir))?;
    table.clear_changes();
    let disk = snapshot::OnDisk {
        snapshot: size,
        ..Default::default()
    };
    Ok((disk, (header.versions, header.last_hash)))
}

/// Check where the index goes and create the folder: never inside the root
/// (the root is only read), never over a folder that is not an index.
fn prepare_dir(root: &Path, dir: &Path) -> Result<(), IndexError> {
    let abs = lineage_core::fsio::resolve(dir)
        .map_err(|e| IndexError::Location(format!("index folder {}: {e}", dir.display())))?;
    if abs.starts_with(root) {
        return Err(IndexError::Location(format!(
            "index folder {} is inside the root {}, which lineage only reads",
            dir.display(),
            root.display()
        )));
    }
    match fs::read_dir(dir) {
        Ok(entries) => {
            let names: Vec<_> = entries
                .filter_map(|e| e.ok().map(|e| e.file_name()))
                .collect();
            let ours = names.iter().any(|n| {
                n == schema::FILE || n == lock::FILE || n == snapshot::FILE || n == VIEW_FILE
            });
            if !names.is_empty() && !ours {
                return Err(IndexError::Location(format!(
                    "{} is not a lineage index (a folder with other files)",
                    dir.display()
                )));
            }
            Ok(())
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            fs::create_dir_all(dir).map_err(IndexError::io("cannot create index folder", dir))
        }
        Err(e) => Err(IndexError::Location(format!(
            "index folder {}: {e}",
            dir.display()
        ))),
    }
}

/// Remove the snapshot and database files (not the lock, which we hold);
/// the snapshot first, so no crash leaves it beside a new database.
/// A reason as one line for a person: a long or many-line one (SQLite's
/// integrity report runs to a hundred lines) is cut to its first problem,
/// the whole of it kept in `damaged-<time>.log` in the index folder.
fn one_line(dir: &Path, reason: &str) -> String {
    const LONGEST: usize = 160;
    let mut lines = reason.lines().map(str::trim).filter(|l| !l.is_empty());
    let mut first: String = lines.by_ref().take(2).collect::<Vec<_>>().join(" ");
    if first.chars().count() <= LONGEST && lines.next().is_none() {
        return first;
    }
    if let Some((cut, _)) = first.char_indices().nth(LONGEST) {
        first.truncate(cut);
    }
    let secs = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let log = dir.join(format!("damaged-{secs}.log"));
    match lineage_core::fsio::write_atomic(&log, |w| {
        std::io::Write::write_all(w, reason.as_bytes())
    }) {
        Ok(_) => format!("{first}… (all of it in {})", log.display()),
        Err(_) => format!("{first}…"),
    }
}

fn wipe(dir: &Path) -> Result<(), IndexError> {
    wipe_snapshot(dir)?;
    remove_all(dir, std::iter::once(&schema::FILE).chain(&schema::BESIDE))
}

fn wipe_snapshot(dir: &Path) -> Result<(), IndexError> {
    remove_all(dir, &[snapshot::FILE, snapshot::JOURNAL])
}

fn remove_all<'a>(
    dir: &Path,
    names: impl IntoIterator<Item = &'a &'a str>,
) -> Result<(), IndexError> {
    for name in names {
        match fs::remove_file(dir.join(name)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                return Err(IndexError::io("cannot remove", &dir.join(name))(e));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Open the database and restore the table as far as its snapshot goes.
fn load(
    root: &Path,
    dir: &Path,
    params: Params,
    poly: &Polynomial,
    key: &str,
    obs: &mut dyn Observer,
) -> Result<Loaded, Load> {
    // A journal without its database must not be replayed into a new one.
    if !dir.join(schema::FILE).exists() {
        remove_all(dir, &schema::BESIDE).map_err(Load::Fatal)?;
    }
    let (mut db, fresh) = match Db::open(&dir.join(schema::FILE)) {
        Ok(x) => x,
        Err(OpenError::Corrupt(r)) => return Err(Load::Rebuild(format!("database damaged ({r})"))),
        Err(OpenError::OtherFormat(v)) => {
            let why = if (1..schema::SEEDED_SINCE).contains(&v) {
                " (fingerprints under the old fixed polynomial)"
            } else {
                ""
            };
            return Err(Load::Rebuild(format!(
                "schema version {v}{why}, this lineage uses {}",
                schema::SCHEMA_VERSION
            )));
        }
        Err(OpenError::Fatal(e)) => return Err(Load::Fatal(IndexError::Db(e))),
        Err(OpenError::InTheWay(p)) => {
            return Err(Load::Fatal(IndexError::Location(format!(
                "{} is a directory, where lineage keeps its database: move it away \
                 (lineage removes only files it made)",
                p.display()
            ))));
        }
    };
    let root_s = root.to_string_lossy();
    if fresh {
        // Any snapshot here belongs to a database that is gone: its history
        // with it, which a person is told (a new index has no snapshot).
        if dir.join(snapshot::FILE).exists() {
            let covered = match snapshot::read(dir, key, params.table_params()) {
                Ok((h, _, _)) => format!("{} versions", h.versions),
                Err(_) => "an earlier history".into(),
            };
            obs.notice(&format!(
                "index {}: the database is missing or empty beside a table of {covered}: that history \
                 (replaced and deleted pages among it) is lost; rebuilding from the files",
                dir.display()
            ));
        }
        wipe_snapshot(dir).map_err(Load::Fatal)?;
        let tx = db.transaction()?;
        let instance = std::hash::BuildHasher::hash_one(&std::hash::RandomState::new(), root);
        schema::set_meta(&tx, "instance", &instance.to_string())?;
        schema::set_meta(&tx, "root", &root_s)?;
        schema::set_meta(&tx, "params", key)?;
        schema::set_meta(&tx, "outcomes_through", "0")?;
        schema::set_meta(&tx, "fingerprint_seed", &poly.seed().to_string())?;
        schema::set_meta(&tx, "polynomial", &polynomial_hex(poly))?;
        tx.commit()?;
    }
    if !same_polynomial(&db, dir, poly).map_err(Load::Fatal)? {
        return Err(Load::Rebuild("no polynomial recorded".into()));
    }
    match db.meta("root")? {
        Some(r) if r == root_s => {}
        Some(r) => {
            return Err(Load::Fatal(IndexError::Location(format!(
                "index {} belongs to the root {r}, not {root_s}",
                dir.display()
            ))));
        }
        None => return Err(Load::Rebuild("no root recorded".into())),
    }
    let instance: u64 = db
        .meta("instance")?
        .and_then(|i| i.parse().ok())
        .ok_or_else(|| Load::Rebuild("no instance id recorded".into()))?;
    let (versions, contiguous) = db.version_count()?;
    if !contiguous {
        return Err(Load::Rebuild("document log has gaps".into()));
    }
    let stored = db.meta("params")?;
    let mut through: u32 = db
        .meta("outcomes_through")?
        .and_then(|t| t.parse().ok())
        .ok_or_else(|| Load::Rebuild("no outcomes_through recorded".into()))?;
    let params_changed = stored.as_deref() != Some(key);
    if params_changed {
        obs.notice(&format!(
            "index {} was built with other parameters ({}); re-processing {versions} \
             versions from cached fingerprints",
            dir.display(),
            stored.as_deref().unwrap_or("none recorded")
        ));
        // Outcomes are invalid from here until the replay rewrites them.
        let tx = db.transaction()?;
        schema::set_meta(&tx, "params", key)?;
        schema::set_meta(&tx, "outcomes_through", "0")?;
        tx.commit()?;
        through = 0;
    }
    through = through.min(versions);
    let last_hash = match versions.checked_sub(1) {
        Some(last) => db.content_hash(last)?.unwrap_or(0),
        None => 0,
    };
    let tp = params.table_params();
    let fresh_table = || Table::new(tp).map_err(|e| Load::Fatal(IndexError::Table(e)));
    let mut saved = None;
    let (start, table, why) = match snapshot::read(dir, key, tp) {
        Ok((h, table, disk)) => {
            let n = h.versions;
            let matches_log = h.instance == instance
                && n <= u64::from(versions)
                && match n.checked_sub(1) {
                    Some(i) => db.content_hash(i as u32)? == Some(h.last_hash),
                    None => true,
                };
            if !matches_log {
                if h.instance == instance && n > u64::from(versions) {
                    // The database lost committed writes (its WAL deleted):
                    // what the table saw after them is history gone.
                    obs.notice(&format!(
                        "index {}: the database holds {versions} versions where the table saw \
                         {n}: {} versions of the history are lost (was index.db-wal removed?)",
                        dir.display(),
                        n - u64::from(versions)
                    ));
                }
                (
                    0,
                    fresh_table()?,
                    "does not match the document log".to_string(),
                )
            } else if n > u64::from(through) {
                // Outcomes after `through` need the table as it was then.
                (0, fresh_table()?, String::new())
            } else {
                let why = format!("covers {n} of {versions} versions (an interrupted run)");
                saved = Some((disk, (n, h.last_hash)));
                (n as u32, table, why)
            }
        }
        Err(snapshot::Unusable::Missing) => (0, fresh_table()?, "is missing".into()),
        Err(snapshot::Unusable::OtherParams(p)) => {
            (0, fresh_table()?, format!("is of other parameters ({p})"))
        }
        Err(snapshot::Unusable::Corrupt(r)) => (0, fresh_table()?, format!("is damaged ({r})")),
        Err(snapshot::Unusable::Older) => {
            (0, fresh_table()?, "was written by an older lineage".into())
        }
    };
    if start < versions && !params_changed {
        obs.notice(&format!(
            "index {}: the table snapshot {why}; replaying {} of {versions} versions \
             from cached fingerprints",
            dir.display(),
            versions - start
        ));
    }
    Ok(Loaded {
        current: db.current()?,
        skipped: db.skipped()?,
        texts_total: texts::total(db.conn())?,
        db,
        restored: Restored {
            table,
            start,
            through,
        },
        versions,
        last_hash,
        instance,
        saved,
    })
}

/// A read-only view of an index's history, for another thread.
pub struct History(Db);

impl History {
    /// The token fingerprints of versions `from..to`, in processing order.
    pub fn fingerprints(&self, from: u32, to: u32) -> Result<Vec<Vec<u64>>, IndexError> {
        self.0.fingerprints(from, to)
    }

    /// Version `id`'s kept text (searches).
    pub fn text(&self, id: u32) -> Result<Kept, IndexError> {
        texts::get(self.0.conn(), id)
    }
}

#[cfg(test)]
mod tests;
