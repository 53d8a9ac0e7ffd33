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

mod changes;
pub use changes::PairCounts;
mod commits;
pub use commits::{Release, Source};
mod departures;
mod history;
mod lock;
pub use lock::check_free;
mod near;
mod open;
mod origins;
mod read;
mod reconcile;
mod repair;
mod schema;
mod snapshot;
mod texts;

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

pub use departures::Departure;
pub use near::NearRow;
pub use read::{Read, ReadOnly};
pub use reconcile::{
    Batch, Change, Content, Digester, NotRead, Pending, Reader, Report, Scope, Syncing,
};
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
use schema::Db;

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
    /// Another process holds the index (its PID, when it wrote one). The
    /// message says what can be done meanwhile: the queries read an index
    /// held by another process; only one process keeps it.
    #[error(
        "index {} is in use by another lineage process{}; queries (explain, copies, shared, \
         diff, stale, check, report) read it meanwhile, and a second watch or index needs \
         its own --index",
        .0.display(),
        lock::holder(*.1)
    )]
    Locked(PathBuf, Option<u32>),
    /// The index folder or the root is not usable as asked.
    #[error("{0}")]
    Location(String),
    /// Stopped between batches, as the observer asked: what was read is in
    /// the index, the rest is for the next run.
    #[error("stopped before the end; the next run goes on from here")]
    Stopped,
    /// SQLite failed on the index database.
    #[error("index database: {0}")]
    Db(#[from] rusqlite::Error),
    /// `what` (e.g. "cannot write the table snapshot in") failed on `path`.
    #[error("{what} {}: {source}", path.display())]
    Io {
        /// What was being done, worded to precede the path.
        what: &'static str,
        /// The file or folder it was done on.
        path: PathBuf,
        /// The OS's error.
        #[source]
        source: io::Error,
    },
    /// Still damaged after the rebuild that should have repaired it.
    #[error("index {}: {reason} (even after a rebuild)", dir.display())]
    Unrepairable {
        /// The index folder.
        dir: PathBuf,
        /// What is still wrong, in one line.
        reason: String,
    },
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
    /// The table of the parameters asked cannot be built (too small, too
    /// large for the memory, a bad bucket size).
    #[error(transparent)]
    Table(#[from] TableError),
    /// The worker threads of the origin pass split by bucket range stopped
    /// (a panic: a bug); what was committed stands.
    #[error("{0}")]
    Pass(String),
    /// The index's fingerprints were taken under another polynomial.
    #[error(
        "index {} was built with --fingerprint-seed {built}, not {asked}: give that seed, \
         or another --index",
        dir.display()
    )]
    Polynomial {
        /// The index folder.
        dir: PathBuf,
        /// The seed the index was built with, as its metadata records it.
        built: String,
        /// The seed given now.
        asked: u64,
    },
    /// Asked for another order than the index holds its pages in.
    #[error(
        "index {} holds its pages in --order {held}, not --order {asked} (an index keeps the order it was first built in): `rm -r {}` and index again to have it in --order {asked}, or leave --order out",
        dir.display(), dir.display()
    )]
    OtherOrder {
        /// The index folder.
        dir: PathBuf,
        /// The order it holds.
        held: lineage_source::Order,
        /// The order asked for.
        asked: lineage_source::Order,
    },
    /// Asked for versions from another source than the index holds.
    #[error(
        "index {} holds versions read from {} (--history {}), not --history {} (an index keeps where its versions came from): `rm -r {}` and index again to have --history {}, or leave --history out",
        dir.display(), held.describe(), held.name(), asked.name(), dir.display(), asked.name()
    )]
    OtherHistory {
        /// The index folder.
        dir: PathBuf,
        /// The source it holds.
        held: Source,
        /// The source asked for.
        asked: Source,
    },
    /// lineage met a fault of its own (a panic) in a sync: the index is
    /// made anew from the files when it is next opened.
    #[error("a fault of lineage's own ({0}); the index is rebuilt from the files when next opened")]
    Fault(String),
    /// A repository's history could not be read (a missing or corrupt
    /// object, an unreadable reference): the index stays as it was after
    /// the last commit read whole.
    #[error(transparent)]
    History(#[from] lineage_source::history::HistoryError),
    /// An earlier write failed half-way: reopen the index.
    #[error("index left unusable by an earlier error; reopen it")]
    Poisoned,
    /// The disk holding the index has no space left: said plainly, where
    /// SQLite says "disk I/O error: Error code 4874".
    #[error("index {}: the disk is full", dir.display())]
    DiskFull {
        /// The index folder.
        dir: PathBuf,
        /// The OS's error (ENOSPC), or SQLite's own when it gave none.
        #[source]
        source: io::Error,
    },
}

/// The `meta` key of the order the index holds its pages in.
const ORDER: &str = "order";

impl IndexError {
    /// Whether this says the index folder cannot be written (a read-only
    /// file system, or no write permission): a command that only reads can
    /// still answer from the index as it was last written.
    pub fn unwritable(&self) -> bool {
        let denied = |k: io::ErrorKind| {
            matches!(
                k,
                io::ErrorKind::ReadOnlyFilesystem | io::ErrorKind::PermissionDenied
            )
        };
        match self {
            IndexError::Io { source, .. } => denied(source.kind()),
            IndexError::Db(e) => matches!(
                e.sqlite_error_code(),
                Some(rusqlite::ErrorCode::ReadOnly | rusqlite::ErrorCode::CannotOpen)
            ),
            _ => false,
        }
    }

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

    /// This error as [`IndexError::DiskFull`] when it says the disk of the
    /// index in `dir` is full: SQLite's SQLITE_FULL, one of its I/O errors
    /// (SQLITE_IOERR_WRITE, _SHMSIZE, _FSYNC…) whose cause, `errno` (the
    /// OS's error behind SQLite's last failure), is ENOSPC, or a table
    /// file's write that found no space. Any other error is left as it is.
    pub(crate) fn disk_full(self, dir: &Path, errno: i32) -> IndexError {
        let os = io::Error::from_raw_os_error(errno);
        let full = |e: &io::Error| e.kind() == io::ErrorKind::StorageFull;
        let source = match self {
            IndexError::Db(ref e) => match e.sqlite_error_code() {
                Some(rusqlite::ErrorCode::DiskFull) if full(&os) => os,
                Some(rusqlite::ErrorCode::DiskFull) => io::Error::other(e.to_string()),
                Some(rusqlite::ErrorCode::SystemIoFailure) if full(&os) => os,
                _ => return self,
            },
            IndexError::Io { source, .. } if full(&source) => source,
            _ => return self,
        };
        IndexError::DiskFull {
            dir: dir.to_path_buf(),
            source,
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
    /// Live documents (not replaced or deleted).
    pub documents: u64,
    /// Versions in the history, of every status.
    pub versions: u64,
    /// Files left out, each with its reason.
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
    /// Versions of the history a rebuild from the files dropped since it
    /// was opened (the replaced and deleted pages it held).
    dropped: u64,
    /// What a person should hear of that no caller asked for (a folder
    /// moved out of the way of the table's files), until taken.
    notices: Vec<String>,
    /// The order the index holds its pages in, once read (meta `order`).
    order: Option<lineage_source::Order>,
    _lock: lock::Lock,
}

/// The table as the index could restore it, with the versions the caller's
/// origin pass must replay from the cached fingerprints to bring it up to
/// the log ([`Index::replay_keys`], [`Index::put_replayed`],
/// [`Index::replayed`]).
pub struct Restored {
    /// The table, from the snapshot, or empty when the snapshot could not
    /// be used; where nothing is to be replayed, left to make when first
    /// used.
    pub table: TableState,
    /// Versions `start..` are to be replayed (none when `start` is
    /// [`Index::versions`]).
    pub start: u32,
    /// Outcomes of versions before `through` are stored and valid; those
    /// from it on are to be written by the replay.
    pub through: u32,
}

/// The table an open restored: made, or read and checked but not yet made
/// (every version processed, nothing to replay).
pub enum TableState {
    /// Made.
    Ready(Table),
    /// To make when first used.
    Pending(PendingTable),
}

/// A table's snapshot and journal read and checked (the frame's checksum,
/// the header, each record's checksum and place in the chain), not yet
/// decompressed into a table: a command that processes nothing never pays
/// for it (the decompression and the table's memory were most of an open).
pub struct PendingTable(snapshot::Pending);

impl PendingTable {
    /// The table. Fails (why, one line) where the bytes that passed their
    /// checksums do not make one: the caller replays the history into an
    /// empty table, as an open does with a damaged snapshot.
    pub fn restore(self) -> Result<Table, String> {
        self.0.restore().map_err(open::unusable)
    }

    /// The table's counters, without making it.
    pub fn counters(&self) -> Result<lineage_origin::table::Counters, String> {
        self.0.counters().map_err(open::unusable)
    }
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

/// Whether the index's token fingerprints and file hashes were taken under
/// `p`: an error names the seed they were taken under; `false` when the
/// index records none (damage).
pub(crate) fn same_polynomial(db: &Db, dir: &Path, p: &Polynomial) -> Result<bool, IndexError> {
    match (db.meta("fingerprint_seed")?, db.meta("polynomial")?) {
        (Some(seed), Some(low)) if seed == p.seed().to_string() => {
            if low == p.hex() {
                Ok(true)
            } else {
                // A lineage that drew another P from the same seed.
                Err(IndexError::Damaged(format!(
                    "it records the polynomial {low} for seed {seed}, which gives {}",
                    p.hex()
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

/// The OS's error behind the last failure of SQLite on `conn` (0: none).
pub(crate) fn errno(conn: &rusqlite::Connection) -> i32 {
    // SAFETY: the handle is `conn`'s, open for as long as it is borrowed;
    // sqlite3_system_errno only reads the connection's last error.
    unsafe { rusqlite::ffi::sqlite3_system_errno(conn.handle()) }
}

/// Nanoseconds since the Unix epoch (negative before it), as stored.
pub(crate) use lineage_source::time_ns as mtime_ns;

impl Index {
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
        let done = self.raw_put_replayed(outcomes, through, end);
        self.told(done)
    }

    fn raw_put_replayed(
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
        let done = self.raw_replayed(table);
        self.told(done)
    }

    fn raw_replayed(&mut self, table: &mut Table) -> Result<(), IndexError> {
        self.write_whole(table, (u64::from(self.versions), self.last_hash))
    }

    /// Write the snapshot of `table` whole, as of `to` (versions, last
    /// content hash): what a checkpoint appends to next.
    fn write_whole(&mut self, table: &mut Table, to: (u64, u64)) -> Result<(), IndexError> {
        let header = snapshot::Header {
            params: self.params_key.clone(),
            instance: self.instance,
            versions: to.0,
            last_hash: to.1,
        };
        self.saved = Some(write_snapshot(
            &self.dir,
            &header,
            table,
            &mut self.notices,
        )?);
        Ok(())
    }

    /// Keep the history within `budget` bytes from now on (0: keep no
    /// texts); a lower budget drops texts and forgets versions at once
    /// (index/texts.rs and index/history.rs say which).
    pub fn set_history_budget(&mut self, budget: u64) -> Result<(), IndexError> {
        let done = self.raw_set_history_budget(budget);
        self.told(done)
    }

    fn raw_set_history_budget(&mut self, budget: u64) -> Result<(), IndexError> {
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

    /// Find the versions whose cached fingerprints are damaged and repair
    /// them (index/repair.rs: recomputed from their kept texts, else
    /// forgotten), saying so: what a replay does when it meets one. The
    /// number of versions repaired (0: none found damaged).
    pub fn repair_fingerprints(&mut self, obs: &mut dyn Observer) -> Result<usize, IndexError> {
        self.check_usable()?;
        let ids = schema::damaged_fingerprints(self.db.conn())?;
        if ids.is_empty() {
            return Ok(0);
        }
        self.poisoned = true;
        let forgotten =
            repair::fingerprints(&mut self.db, &self.dir, &self.root, &self.poly, &ids, obs)?;
        self.poisoned = false;
        for c in self.current.values_mut() {
            c.forgotten |= forgotten.contains(&c.id);
        }
        Ok(ids.len())
    }

    /// Bytes the history holds against `history_budget`: the kept texts
    /// and the fingerprints of replaced and deleted versions.
    pub fn history_bytes(&self) -> Result<u64, IndexError> {
        Ok(self.texts_total + history::past_fingerprint_bytes(self.db.conn())?)
    }

    /// Versions of the history that a rebuild from the files (a damaged
    /// database) dropped since the index was opened: told in its notice,
    /// and for a command's JSON.
    pub fn dropped_versions(&self) -> u64 {
        self.dropped
    }

    /// Bytes the text store holds (compressed).
    pub fn texts_bytes(&self) -> u64 {
        self.texts_total
    }

    /// Record that a sync met a fault of lineage's own (`what`, a panic's
    /// message), outside any transaction (the sync's was rolled back): the
    /// index is not used again, and its next open rebuilds it from the
    /// files, where the state that met the fault would meet it again.
    pub fn note_fault(&mut self, what: &str) -> IndexError {
        self.poisoned = true;
        let line: String = what
            .lines()
            .next()
            .unwrap_or("")
            .chars()
            .take(300)
            .collect();
        if let Err(e) = schema::set_meta(self.db.conn(), open::FAULT, &line) {
            return IndexError::Fault(format!("{line}; and it could not be recorded: {e}"));
        }
        IndexError::Fault(line)
    }

    /// The order new files are processed in: the one the index was first
    /// built in. `asked` (the settings' order; `explicit`: asked for by the
    /// user, not a default) is recorded where the index holds none yet (a
    /// new index, or one of a lineage before it kept it); asked explicitly
    /// and other than the one held, it is refused in one line
    /// ([`IndexError::OtherOrder`]): the answers are of the order held, and
    /// never the old answer in silence.
    pub fn settle_order(
        &mut self,
        asked: lineage_source::Order,
        explicit: bool,
    ) -> Result<lineage_source::Order, IndexError> {
        if self.order.is_none() {
            // Read once: a listed order is made once a process.
            self.order = self.db.meta(ORDER)?.and_then(|o| o.parse().ok());
        }
        match self.order {
            Some(held) if held != asked && explicit => Err(IndexError::OtherOrder {
                dir: self.dir.clone(),
                held,
                asked,
            }),
            Some(held) => Ok(held),
            None => {
                schema::set_meta(self.db.conn(), ORDER, &asked.to_string())?;
                self.order = Some(asked);
                Ok(asked)
            }
        }
    }

    /// Add a notice for the next [`Index::take_notices`].
    pub fn notice(&mut self, message: String) {
        self.notices.push(message);
    }

    /// The table is not the one the snapshot on disk holds (made again
    /// from the history where the snapshot made none): the next checkpoint
    /// writes it whole.
    pub fn forget_snapshot(&mut self) {
        self.saved = None;
        self.snapshot_stale = true;
    }

    /// The notices of the writes since last asked (a folder moved out of
    /// the way of the table's files), each one line.
    pub fn take_notices(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notices)
    }

    /// The index folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Live documents, versions in the history and skipped files.
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

    /// The live paths whose file is one of `ids` (`FileEntry::file_id`):
    /// a file's other names.
    pub fn names_of(&self, ids: &HashSet<u64>) -> Vec<&str> {
        if ids.is_empty() {
            return Vec::new();
        }
        self.current
            .iter()
            .filter(|(_, c)| c.status == Status::Live && ids.contains(&c.file_id))
            .map(|(p, _)| p.as_str())
            .collect()
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
        let done = self.raw_checkpoint(table);
        self.told(done)
    }

    fn raw_checkpoint(&mut self, table: &mut Table) -> Result<(), IndexError> {
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
        self.write_whole(table, to)?;
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

    /// `r` with a full disk said plainly ([`IndexError::disk_full`]).
    fn told<T>(&self, r: Result<T, IndexError>) -> Result<T, IndexError> {
        r.map_err(|e| e.disk_full(&self.dir, errno(self.db.conn())))
    }

    fn check_usable(&self) -> Result<(), IndexError> {
        if self.poisoned {
            Err(IndexError::Poisoned)
        } else {
            Ok(())
        }
    }
}

/// Write `table` whole with `header`, which then has no changes pending:
/// what [`Index::checkpoint`] appends to next (see `Index::saved`).
fn write_snapshot(
    dir: &Path,
    header: &snapshot::Header,
    table: &mut Table,
    notices: &mut Vec<String>,
) -> Result<(snapshot::OnDisk, (u64, u64)), IndexError> {
    let mut aside = Vec::new();
    let size = snapshot::write(dir, header, table, &mut aside)
        .map_err(IndexError::io("cannot write the table snapshot in", dir))?;
    for (from, to) in aside {
        notices.push(format!(
            "a folder stood at {}, where the index keeps its table: moved aside whole to {}",
            from.display(),
            to.display()
        ));
    }
    table.clear_changes();
    let disk = snapshot::OnDisk {
        snapshot: size,
        ..Default::default()
    };
    Ok((disk, (header.versions, header.last_hash)))
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

    /// Every version with its outcome summary, as [`Read::history`].
    pub fn history(&self) -> Result<Vec<HistoryRow>, IndexError> {
        Ok(self.0.history()?)
    }

    /// The renames the index keeps, as [`Read::renames`].
    pub fn renames(&self) -> Result<Vec<Departure>, IndexError> {
        read::renames(&self.0)
    }

    /// The releases, as [`Read::releases`].
    pub fn releases(&self) -> Result<Vec<Release>, IndexError> {
        commits::releases(&self.0)
    }

    /// Every version's commit number, as [`Read::stamps`].
    pub fn stamps(&self) -> Result<Vec<(u32, i64)>, IndexError> {
        commits::stamps(&self.0)
    }
}

#[cfg(test)]
mod tests;
