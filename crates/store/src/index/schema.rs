//! The index database: its tables, and the reads and writes the index makes.
//!
//! ```sql
//! meta         (key TEXT PRIMARY KEY, value TEXT)   -- schema_version, root,
//!                                                  -- params, outcomes_through,
//!                                                  -- fingerprint_seed, polynomial
//! versions     (id INTEGER PRIMARY KEY,            -- processing order, 0..V
//!               path, version,                     -- path: its exact bytes
//!                                                  -- (a BLOB); 1, 2, … per path
//!               mtime_ns, size, hash,              -- Rabin-64 of the bytes (seeded P)
//!               tokens, status,                    -- 0 live, 1 replaced, 2 deleted
//!               file_id,                           -- device, inode, birth (renames)
//!               text,                              -- texts.id (index/texts.rs)
//!               seen_ms,                           -- when recorded (NULL: before 7)
//!               sum)                               -- XXH64 of the row (ROW_SUM)
//! fingerprints (id PRIMARY KEY, checksum, fps BLOB) -- token fps, u64 LE; XXH64
//! outcomes     (id PRIMARY KEY, shingles, selected, fresh_tokens, top_origin,
//!               dominant_origin, origins BLOB, runs BLOB, sum)
//! ctimes       (id PRIMARY KEY, ctime_ns)          -- the file's status change
//!                                                  -- time when last seen (9)
//! skipped      (path PRIMARY KEY, reason, binary, size, mtime_ns)
//! near_sketches (id PRIMARY KEY, sketch BLOB)     -- each live version's MinHash
//!                                                  -- sketch (index/near.rs)
//! near         (a, b, similarity)                  -- verified near-duplicate
//!                                                  -- links of the live clusters
//!                                                  -- (similar/live.rs), a < b;
//!                                                  -- meta.near names their settings
//! texts        (id PRIMARY KEY, checksum, size,    -- every version's bytes,
//!               stored, zstd BLOB)                 -- once per content
//! departures   (seq PRIMARY KEY, at_ms, path,      -- pages deleted or renamed,
//!               dest, id)                          -- the newest 1,000 (index/departures.rs)
//! versions_past INDEX on versions (status, text,  -- the versions not live
//!               tokens)                            -- (index/history.rs)
//! changes      (id, base, id_hash, base_hash,      -- a page's token counts
//!               kept, removed, new, moved, sum)    -- against a base (11;
//!                                                  -- index/changes.rs)
//! ```
//!
//! Every table and index is made here: [`DDL`] for a new index, and
//! [`MIGRATIONS`] from each older schema to the next, so an index migrated
//! from any of them has the tables of a new one (a test checks it).
//!
//! Writes go through one transaction per batch (the caller's), so a crash at
//! any point leaves the last committed batch. The WAL journal with
//! `synchronous = FULL` makes a commit durable before the table snapshot that
//! covers it is written.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::Path;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension, Transaction, params};

use super::IndexError;
use lineage_core::fsio::xxh64::{Xxh64, xxh64};
use lineage_origin::outcome::{Outcome, Run};
use lineage_source::history::CommitInfo;
use lineage_source::name;

pub(crate) const FILE: &str = "index.db";
/// Files SQLite keeps beside the database.
pub(crate) const COMPANIONS: &[&str] = &[WAL, SHM, JOURNAL];
const WAL: &str = "index.db-wal";
const SHM: &str = "index.db-shm";
const JOURNAL: &str = "index.db-journal";
/// The database file as it was when its every page was last checked (see
/// [`Db::open`]). Anything but a regular file there is no stamp: every open
/// then checks every page.
const CHECKED: &str = "index.db-checked";
/// What goes with the database: SQLite's files and the check's stamp.
pub(crate) const BESIDE: [&str; 4] = [WAL, SHM, JOURNAL, CHECKED];
/// `PRAGMA user_version` and `meta.schema_version`; bump on any change.
pub(crate) const SCHEMA_VERSION: i64 = 11;
/// The migrations from before this schema copy or drop tables (5 to 7);
/// those from it on only add them.
const FREES_UNTIL: i64 = 8;
/// The first schema whose fingerprints are taken under the seeded polynomial.
pub(crate) const SEEDED_SINCE: i64 = 5;

/// `CREATE TABLE` of the versions, named `$name`: the migrations to 6 and 7
/// build it beside the old table. `sum` is [`ROW_SUM`] of the row, kept by
/// SQLite itself on every insert and update. `seen_ms` is when lineage
/// recorded the version (milliseconds since the epoch, wall clock): the
/// file's modification time is not when it changed for lineage (a copy
/// keeps an old one), nor is it kept (a touch moves it). NULL for a version
/// recorded before schema 7.
macro_rules! versions_table {
    ($name:literal) => {
        concat!(
            "CREATE TABLE ", $name, " (
    id       INTEGER PRIMARY KEY,
    path     BLOB    NOT NULL,
    version  INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    size     INTEGER NOT NULL,
    hash     INTEGER NOT NULL,
    tokens   INTEGER NOT NULL,
    status   INTEGER NOT NULL,
    file_id  INTEGER NOT NULL DEFAULT 0,
    text     INTEGER,
    seen_ms  INTEGER,
    sum      INTEGER GENERATED ALWAYS AS
             (lineage_row(id, path, version, mtime_ns, size, hash, tokens, status, file_id, text,
                          seen_ms))
             STORED,
    UNIQUE (path, version)
);"
        )
    };
}

/// `CREATE TABLE` of the outcomes, named `$name` (see [`versions_table`]).
macro_rules! outcomes_table {
    ($name:literal) => {
        concat!(
            "CREATE TABLE ",
            $name,
            " (
    id              INTEGER PRIMARY KEY,
    shingles        INTEGER NOT NULL,
    selected        INTEGER NOT NULL,
    fresh_tokens    INTEGER NOT NULL,
    top_origin      INTEGER NOT NULL,
    dominant_origin INTEGER,
    origins         BLOB    NOT NULL,
    runs            BLOB    NOT NULL,
    sum             INTEGER GENERATED ALWAYS AS
                    (lineage_row(id, shingles, selected, fresh_tokens, top_origin,
                                 dominant_origin, origins, runs))
                    STORED
);"
        )
    };
}

/// `CREATE TABLE` of the kept changes (index/changes.rs), for a new index
/// and the migration to 11 alike.
macro_rules! changes_table {
    () => {
        "CREATE TABLE IF NOT EXISTS changes (
    id        INTEGER NOT NULL,
    base      INTEGER NOT NULL,
    id_hash   INTEGER NOT NULL,
    base_hash INTEGER NOT NULL,
    kept      INTEGER NOT NULL,
    removed   INTEGER NOT NULL,
    new       INTEGER NOT NULL,
    moved     INTEGER NOT NULL,
    sum       INTEGER NOT NULL,
    PRIMARY KEY (id, base)
) WITHOUT ROWID;"
    };
}

const DDL: &str = concat!(
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;",
    versions_table!("versions"),
    "CREATE TABLE fingerprints (
    id       INTEGER PRIMARY KEY,
    checksum INTEGER NOT NULL,
    fps      BLOB    NOT NULL
);",
    outcomes_table!("outcomes"),
    "CREATE TABLE ctimes (
    id       INTEGER PRIMARY KEY,
    ctime_ns INTEGER NOT NULL
);
CREATE TABLE skipped (
    path     BLOB PRIMARY KEY,
    reason   TEXT    NOT NULL,
    binary   INTEGER NOT NULL,
    size     INTEGER,
    mtime_ns INTEGER
) WITHOUT ROWID;
CREATE TABLE near_sketches (
    id     INTEGER PRIMARY KEY,
    sketch BLOB NOT NULL
);
CREATE TABLE near (
    a          INTEGER NOT NULL,
    b          INTEGER NOT NULL,
    similarity REAL    NOT NULL,
    PRIMARY KEY (a, b)
) WITHOUT ROWID;
CREATE TABLE texts (
    id       INTEGER PRIMARY KEY,
    checksum INTEGER NOT NULL,
    size     INTEGER NOT NULL,
    stored   INTEGER NOT NULL,
    zstd     BLOB    NOT NULL
);
CREATE UNIQUE INDEX texts_content ON texts (checksum, size);
CREATE INDEX texts_stored ON texts (stored);
CREATE TABLE departures (
    seq   INTEGER PRIMARY KEY,
    at_ms INTEGER NOT NULL,
    path  TEXT    NOT NULL,
    dest  TEXT,
    id    INTEGER
);
CREATE INDEX versions_past ON versions (status, text, tokens);
CREATE TABLE commits (
    seq     INTEGER PRIMARY KEY,
    oid     TEXT    NOT NULL UNIQUE,
    author  TEXT    NOT NULL,
    time    INTEGER NOT NULL,
    subject TEXT    NOT NULL
);
CREATE TABLE version_commits (
    id  INTEGER PRIMARY KEY,
    seq INTEGER NOT NULL
);",
    changes_table!(),
);

/// Schema upgrades in place, each from its version to the next, so an index
/// of an older format keeps its history. None reaches 5 from before: until
/// 4, token fingerprints and file hashes were taken under a fixed sparse
/// polynomial, so those indexes are rebuilt from the files. 6 adds the row
/// sums: the two tables are copied into new ones that compute them. 7 adds
/// `versions.seen_ms` to the row and its sum, so the versions are copied
/// again; theirs is NULL (when they were seen was not kept). 8 makes here
/// what earlier versions made on first use (`near_sketches`, `departures`,
/// `versions_past`: a migration from 5 or 6 dropped the index with the old
/// table) and drops `sketches`, the simhash table no version since 5 filled.
/// 9 adds `ctimes`: a rewrite that keeps size and mtime (`cp -p`, `tar x`,
/// `rsync -t`) moves only the status change time. A version recorded
/// before has none, and is compared by size and mtime until next read.
/// 10 adds `commits` and `version_commits`: the commit of each version read
/// from a git repository's history (none for a version read from a file).
/// 11 adds `changes`: each page's token counts against its base, kept
/// (index/changes.rs); an index migrated has none, and measures them again.
const MIGRATIONS: &[(i64, &str)] = &[(
    5,
    concat!(
        versions_table!("versions_6"),
        "INSERT INTO versions_6 (id, path, version, mtime_ns, size, hash, tokens, status, file_id, text)
         SELECT id, path, version, mtime_ns, size, hash, tokens, status, file_id, text FROM versions;
         DROP TABLE versions;
         ALTER TABLE versions_6 RENAME TO versions;",
        outcomes_table!("outcomes_6"),
        "INSERT INTO outcomes_6 (id, shingles, selected, fresh_tokens, top_origin, dominant_origin,
                                 origins, runs)
         SELECT id, shingles, selected, fresh_tokens, top_origin, dominant_origin, origins, runs
         FROM outcomes;
         DROP TABLE outcomes;
         ALTER TABLE outcomes_6 RENAME TO outcomes;"
    ),
), (
    6,
    concat!(
        versions_table!("versions_7"),
        "INSERT INTO versions_7 (id, path, version, mtime_ns, size, hash, tokens, status, file_id, text)
         SELECT id, path, version, mtime_ns, size, hash, tokens, status, file_id, text FROM versions;
         DROP TABLE versions;
         ALTER TABLE versions_7 RENAME TO versions;"
    ),
), (
    7,
    "CREATE TABLE IF NOT EXISTS near_sketches (
    id     INTEGER PRIMARY KEY,
    sketch BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS departures (
    seq   INTEGER PRIMARY KEY,
    at_ms INTEGER NOT NULL,
    path  TEXT    NOT NULL,
    dest  TEXT,
    id    INTEGER
);
CREATE INDEX IF NOT EXISTS versions_past ON versions (status, text, tokens);
DROP TABLE IF EXISTS sketches;",
), (
    8,
    "CREATE TABLE ctimes (
    id       INTEGER PRIMARY KEY,
    ctime_ns INTEGER NOT NULL
);",
), (
    9,
    "CREATE TABLE IF NOT EXISTS commits (
    seq     INTEGER PRIMARY KEY,
    oid     TEXT    NOT NULL UNIQUE,
    author  TEXT    NOT NULL,
    time    INTEGER NOT NULL,
    subject TEXT    NOT NULL
);
CREATE TABLE IF NOT EXISTS version_commits (
    id  INTEGER PRIMARY KEY,
    seq INTEGER NOT NULL
);",
), (
    10,
    changes_table!(),
)];

/// Whether a write-ahead log with frames lies beside the database at `path`.
fn has_log(path: &Path) -> bool {
    std::fs::symlink_metadata(path.with_file_name(WAL)).is_ok_and(|m| m.len() > 0)
}

/// `file:PATH?immutable=1`, the path's `%`, `?` and `#` percent-encoded;
/// None for a path that is not UTF-8.
fn immutable_uri(path: &Path) -> Option<String> {
    let abs = std::path::absolute(path).ok()?;
    let mut uri = String::from("file:");
    for c in abs.to_str()?.chars() {
        match c {
            '%' | '?' | '#' => uri.push_str(&format!("%{:02X}", c as u8)),
            _ => uri.push(c),
        }
    }
    uri.push_str("?immutable=1");
    Some(uri)
}

/// The SQL function behind the row sums: the XXH64 of its arguments, each
/// a type byte and its value (integers and reals 8 bytes little-endian,
/// texts and blobs a u64 length and their bytes). A bit flipped in a row
/// (a path, a status, an origin) no longer matches its sum, which
/// [`Db::open`] checks: SQLite's page checks see only the structure.
const ROW_SUM: &str = "lineage_row";

/// Make [`ROW_SUM`] known to `conn`, which writes the sums (and reads the
/// schema that names it).
fn add_row_sum(conn: &Connection) -> rusqlite::Result<()> {
    use rusqlite::functions::FunctionFlags;
    let flags = FunctionFlags::SQLITE_UTF8
        | FunctionFlags::SQLITE_DETERMINISTIC
        | FunctionFlags::SQLITE_INNOCUOUS;
    // Hashed as a stream (no buffer a row: every open sums every row).
    conn.create_scalar_function(ROW_SUM, -1, flags, |ctx| {
        let mut h = Xxh64::default();
        for i in 0..ctx.len() {
            match ctx.get_raw(i) {
                ValueRef::Null => h.update(&[0]),
                ValueRef::Integer(v) => {
                    h.update(&[1]);
                    h.update(&v.to_le_bytes());
                }
                ValueRef::Real(v) => {
                    h.update(&[2]);
                    h.update(&v.to_bits().to_le_bytes());
                }
                ValueRef::Text(v) | ValueRef::Blob(v) => {
                    h.update(&[3]);
                    h.update(&(v.len() as u64).to_le_bytes());
                    h.update(v);
                }
            }
        }
        Ok(h.finish() as i64)
    })
}

/// The first row whose stored sum is not the sum of its fields, as
/// "version 12" or "the outcome of version 12".
fn first_bad_row(conn: &Connection) -> rusqlite::Result<Option<String>> {
    conn.query_row(
        "SELECT 'version ' || id FROM versions
         WHERE sum IS NOT lineage_row(id, path, version, mtime_ns, size, hash, tokens, status,
                                      file_id, text, seen_ms)
         UNION ALL
         SELECT 'the outcome of version ' || id FROM outcomes
         WHERE sum IS NOT lineage_row(id, shingles, selected, fresh_tokens, top_origin,
                                      dominant_origin, origins, runs)
         LIMIT 1",
        [],
        |r| r.get(0),
    )
    .optional()
}

/// Whether the migrations lead from an older `from` to [`SCHEMA_VERSION`].
fn migrates(from: i64) -> bool {
    from < SCHEMA_VERSION && (from..SCHEMA_VERSION).all(|v| migration(v).is_some())
}

fn migration(from: i64) -> Option<&'static str> {
    MIGRATIONS.iter().find(|m| m.0 == from).map(|m| m.1)
}

/// Where a version stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// The current content of a file in the folder.
    Live = 0,
    /// An earlier version of a path that has a later one.
    Replaced = 1,
    /// The last version of a file that is gone (or no longer a document).
    Deleted = 2,
}

impl Status {
    fn from_i64(v: i64) -> Status {
        match v {
            0 => Status::Live,
            1 => Status::Replaced,
            _ => Status::Deleted,
        }
    }

    /// Its name in JSON and on screen: `live`, `replaced`, `deleted`.
    pub fn name(self) -> &'static str {
        match self {
            Status::Live => "live",
            Status::Replaced => "replaced",
            Status::Deleted => "deleted",
        }
    }
}

/// The latest version of a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Current {
    /// Its id in the log (processing order).
    pub id: u32,
    /// Its number among the path's versions, from 1.
    pub version: u32,
    /// The file's size in bytes when last seen.
    pub size: u64,
    /// The file's modification time when last seen, nanoseconds since the
    /// epoch.
    pub mtime_ns: i64,
    /// Rabin-64 of the file's bytes.
    pub hash: u64,
    /// Live, or deleted when the file is gone.
    pub status: Status,
    /// The file's identity when last seen (`lineage_source::file_id`).
    pub file_id: u64,
    /// The file's status change time when last seen, nanoseconds since the
    /// epoch; None for a version recorded before schema 9 and not read
    /// since.
    pub ctime_ns: Option<i64>,
    /// The text store never had its text (see index/texts.rs).
    pub(crate) text_never_kept: bool,
    /// Deleted and then forgotten for the history budget (index/history.rs):
    /// its content coming back is a new version, not this one revived.
    pub forgotten: bool,
}

/// A file left out, with what is needed to not re-read an unchanged binary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkipRow {
    /// Why it was left out (`binary`, `too large (…)`, …).
    pub reason: String,
    /// Read and found binary: kept while size and mtime are unchanged.
    pub binary: bool,
    /// The file's size when left out (None for one the walk itself left out).
    pub size: Option<u64>,
    /// Its modification time then, nanoseconds since the epoch (None: as
    /// for `size`).
    pub mtime_ns: Option<i64>,
}

/// A document version to record.
pub(crate) struct NewVersion<'a> {
    pub id: u32,
    pub path: &'a str,
    pub version: u32,
    pub mtime_ns: i64,
    pub size: u64,
    pub hash: u64,
    pub file_id: u64,
    pub ctime_ns: i64,
    pub fps: &'a [u64],
    /// When it was recorded, milliseconds since the epoch.
    pub seen_ms: i64,
}

/// One version of the history with its outcome summary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistoryRow {
    /// Its id in the log (processing order).
    pub id: u32,
    /// The path of its document.
    pub path: String,
    /// Its number among the path's versions, from 1.
    pub version: u32,
    /// Live, replaced or deleted.
    pub status: Status,
    /// Rabin-64 of the file's bytes.
    pub hash: u64,
    /// Tokens of its prepared text.
    pub tokens: u32,
    /// Its k-shingles (tokens − k + 1, or 0).
    pub shingles: u32,
    /// The shingles the selector chose.
    pub selected: u32,
    /// Tokens no copied shingle covers (docs/formats.md §2).
    pub fresh_tokens: u32,
    /// The id of the origin with the largest count (docs/formats.md §2).
    pub top_origin: u32,
    /// The id of the origin leading the next by 10 %, if one does
    /// (docs/formats.md §2).
    pub dominant_origin: Option<u32>,
    /// (origin, units), most first.
    pub origins: Vec<(u32, u32)>,
    /// The file's modification time when this version was last seen.
    pub mtime_ns: i64,
    /// When lineage recorded this version, milliseconds since the epoch
    /// (None: recorded before the index kept it, schema 6 or older).
    pub seen_ms: Option<i64>,
}

/// Why the database cannot be used as it is.
#[derive(Debug)]
pub(crate) enum OpenError {
    /// Not a database, damaged, or not ours: rebuild.
    Corrupt(String),
    /// Another schema version: rebuild.
    OtherFormat(i64),
    /// An error that rebuilding would not cure (permissions, disk full).
    Fatal(rusqlite::Error),
    /// A directory where the database or a companion file goes: not ours
    /// to remove, so no rebuild either.
    InTheWay(std::path::PathBuf),
}

impl From<rusqlite::Error> for OpenError {
    fn from(e: rusqlite::Error) -> OpenError {
        if is_corruption(&e) {
            OpenError::Corrupt(e.to_string())
        } else {
            OpenError::Fatal(e)
        }
    }
}

/// The database file's identity and last change (device, inode, size,
/// modification and status-change times), when no journal is beside it:
/// any write to it moves its status-change time, which no tool sets back.
/// None elsewhere than Unix, or with a journal.
fn identity(path: &Path, dir: &Path) -> Option<String> {
    let journal_empty = |name: &str| match std::fs::symlink_metadata(dir.join(name)) {
        Ok(m) => m.len() == 0,
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    };
    if !journal_empty(WAL) || !journal_empty(JOURNAL) {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::symlink_metadata(path).ok()?;
        Some(format!(
            "{} {} {} {}.{} {}.{}\n",
            m.dev(),
            m.ino(),
            m.size(),
            m.mtime(),
            m.mtime_nsec(),
            m.ctime(),
            m.ctime_nsec()
        ))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// Whether an error says the file is damaged (rather than, say, unwritable).
pub(crate) fn is_corruption(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase)
    ) || matches!(e, rusqlite::Error::FromSqlConversionFailure(..))
        || matches!(e, rusqlite::Error::InvalidColumnType(..))
}

/// The open database.
pub struct Db {
    conn: Connection,
    /// Versions whose cached fingerprints the open found damaged (their
    /// checksum fails, or their row is missing): for the index to repair.
    damaged: Vec<u32>,
}

impl Db {
    /// Open (or create) the database at `path` and check it: schema version,
    /// then SQLite's `quick_check` of every page. Returns whether it is new.
    pub(crate) fn open(path: &Path) -> Result<(Db, bool), OpenError> {
        // A FIFO or a device in its place (or beside it) is damage, not a
        // file for SQLite to open and wait on.
        let dir = path.parent().unwrap_or(Path::new("."));
        for p in std::iter::once(path.to_path_buf()).chain(COMPANIONS.iter().map(|c| dir.join(c))) {
            let Ok(m) = std::fs::symlink_metadata(&p) else {
                continue;
            };
            if m.is_dir() {
                return Err(OpenError::InTheWay(p));
            }
            if !m.is_file() {
                return Err(OpenError::Corrupt(format!(
                    "{} is not a regular file",
                    p.display()
                )));
            }
        }
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        add_row_sum(&conn)?;
        // The first read of the header: garbage fails here (not a database).
        let user_version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        let tables: i64 = conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))?;
        let fresh = user_version == 0 && tables == 0;
        if !fresh && user_version != SCHEMA_VERSION && !migrates(user_version) {
            return Err(OpenError::OtherFormat(user_version));
        }
        // Every page is checked when the file changed since its last check
        // (written by lineage or anyone else, or a crash left a journal):
        // 0.4 s at 100,000 pages, most of a reopen. An unchanged file is as
        // it was checked; its rows' sums are still checked below.
        let checked = dir.join(CHECKED);
        let now = identity(path, dir);
        let unchanged = !fresh
            && now.as_ref().is_some_and(|n| {
                lineage_core::fsio::read_bounded(&checked, 256).is_ok_and(|s| s == n.as_bytes())
            });
        // The cached fingerprints' checksums are checked with the pages: a
        // bit flipped in one is a row SQLite finds sound.
        let mut damaged = Vec::new();
        if !unchanged {
            // Through a memory map the check takes half the time (100,000
            // pages, 515 MB: 0.51 -> 0.27 s). The map is for the check only:
            // with it an I/O error would be a SIGBUS, not an error.
            conn.execute_batch("PRAGMA mmap_size = 1099511627776;")?;
            let check: String = conn.query_row("PRAGMA quick_check", [], |r| r.get(0))?;
            conn.execute_batch("PRAGMA mmap_size = 0;")?;
            if check != "ok" {
                return Err(OpenError::Corrupt(format!("integrity check: {check}")));
            }
            if !fresh && user_version == SCHEMA_VERSION {
                damaged = damaged_fingerprints(&conn)?;
            }
            // Not written, the next open checks again: nothing is lost
            // (nor while fingerprints are to be repaired).
            if let Some(n) = now.filter(|_| !fresh && damaged.is_empty()) {
                lineage_core::fsio::clear_special(&checked);
                let _ = lineage_core::fsio::write_atomic(&checked, |w| w.write_all(n.as_bytes()));
            }
        }
        conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))?;
        conn.execute_batch("PRAGMA synchronous = FULL;")?;
        if fresh || user_version != SCHEMA_VERSION {
            let tx = conn.unchecked_transaction()?;
            if fresh {
                tx.execute_batch(DDL)?;
            } else {
                let mut from = user_version;
                while let Some(sql) = migration(from) {
                    tx.execute_batch(sql)?;
                    from += 1;
                }
            }
            tx.execute_batch(&format!("PRAGMA user_version = {SCHEMA_VERSION};"))?;
            set_meta(&tx, "schema_version", &SCHEMA_VERSION.to_string())?;
            tx.commit()?;
            if !fresh && user_version < FREES_UNTIL {
                // A migration that copies or drops tables: give their old
                // pages back (once; without it the file keeps them, and the
                // check above reads them, at every open). Failing (a full
                // disk) leaves the migrated file as it is, free pages and
                // all. The later ones only add tables: nothing to give back,
                // and a VACUUM would copy the whole file.
                let _ = conn.execute_batch("VACUUM");
            }
        }
        if let Some(row) = first_bad_row(&conn)? {
            return Err(OpenError::Corrupt(format!(
                "the row of {row} fails its checksum"
            )));
        }
        Ok((Db { conn, damaged }, fresh))
    }

    /// A second, read-only connection to an index another `Db` holds open
    /// (WAL: it reads committed versions while the owner writes).
    pub(crate) fn open_reader(path: &Path) -> rusqlite::Result<Db> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags)?;
        // In a folder this process cannot write (another user's index),
        // SQLite cannot make the shared memory a read of a WAL database
        // needs (on a read-only file system it does without). With no
        // write-ahead log left (its last writer closed), the file alone is
        // the whole database: read it as immutable.
        let conn = match conn.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(())) {
            Ok(()) => conn,
            Err(e) if !has_log(path) => {
                drop(conn);
                let uri = immutable_uri(path).ok_or(e)?;
                Connection::open_with_flags(uri, flags | OpenFlags::SQLITE_OPEN_URI)?
            }
            Err(e) => return Err(e),
        };
        add_row_sum(&conn)?;
        Ok(Db {
            conn,
            damaged: Vec::new(),
        })
    }

    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }

    /// Versions whose fingerprints the open found damaged, handed over once.
    pub(crate) fn take_damaged(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.damaged)
    }

    pub(crate) fn transaction(&mut self) -> rusqlite::Result<Transaction<'_>> {
        self.conn.transaction()
    }

    pub(crate) fn meta(&self, key: &str) -> rusqlite::Result<Option<String>> {
        self.conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
    }

    /// Number of versions and whether their ids are exactly 0..count.
    pub(crate) fn version_count(&self) -> rusqlite::Result<(u32, bool)> {
        self.conn.query_row(
            "SELECT count(*), coalesce(max(id), -1) FROM versions",
            [],
            |r| {
                let (n, max): (i64, i64) = (r.get(0)?, r.get(1)?);
                Ok((n as u32, max + 1 == n))
            },
        )
    }

    /// Every path's latest version.
    pub(crate) fn current(&self) -> rusqlite::Result<HashMap<String, Current>> {
        let mut st = self.conn.prepare(
            "SELECT path, v.id, version, size, mtime_ns, hash, status, file_id, text IS NULL,
                 coalesce(text, 0) = ?1, c.ctime_ns
             FROM versions v LEFT JOIN ctimes c ON c.id = v.id WHERE status != 1",
        )?;
        let rows = st.query_map([super::history::FORGOTTEN], |r| {
            Ok((
                name_at(r, 0)?,
                Current {
                    id: r.get(1)?,
                    version: r.get(2)?,
                    size: r.get::<_, i64>(3)? as u64,
                    mtime_ns: r.get(4)?,
                    hash: r.get::<_, i64>(5)? as u64,
                    status: Status::from_i64(r.get(6)?),
                    file_id: r.get::<_, i64>(7)? as u64,
                    text_never_kept: r.get(8)?,
                    forgotten: r.get(9)?,
                    ctime_ns: r.get(10)?,
                },
            ))
        })?;
        rows.collect()
    }

    pub(crate) fn skipped(&self) -> rusqlite::Result<HashMap<String, SkipRow>> {
        let mut st = self
            .conn
            .prepare("SELECT path, reason, binary, size, mtime_ns FROM skipped")?;
        let rows = st.query_map([], |r| {
            Ok((
                name_at(r, 0)?,
                SkipRow {
                    reason: r.get(1)?,
                    binary: r.get(2)?,
                    size: r.get::<_, Option<i64>>(3)?.map(|s| s as u64),
                    mtime_ns: r.get(4)?,
                },
            ))
        })?;
        rows.collect()
    }

    /// Tokens of version `id` (0 for an unknown one).
    pub fn tokens(&self, id: u32) -> rusqlite::Result<u32> {
        self.conn
            .query_row("SELECT tokens FROM versions WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .optional()
            .map(Option::unwrap_or_default)
    }

    /// Path and version number of version `id`.
    #[cfg(test)]
    pub(crate) fn version_of(&self, id: u32) -> rusqlite::Result<Option<(String, u32)>> {
        self.conn
            .query_row(
                "SELECT path, version FROM versions WHERE id = ?1",
                [id],
                |r| Ok((name_at(r, 0)?, r.get(1)?)),
            )
            .optional()
    }

    /// Tokens of every version in the log together.
    pub(crate) fn all_tokens(&self) -> rusqlite::Result<u64> {
        self.conn
            .query_row("SELECT coalesce(sum(tokens), 0) FROM versions", [], |r| {
                r.get::<_, i64>(0)
            })
            .map(|n| n as u64)
    }

    /// Content hash of version `id`.
    pub(crate) fn content_hash(&self, id: u32) -> rusqlite::Result<Option<u64>> {
        self.conn
            .query_row("SELECT hash FROM versions WHERE id = ?1", [id], |r| {
                r.get::<_, i64>(0).map(|h| h as u64)
            })
            .optional()
    }

    /// Cached token fingerprints of versions `from..to`, in order. A missing
    /// row or a blob whose checksum fails is corruption.
    pub fn fingerprints(&self, from: u32, to: u32) -> Result<Vec<Vec<u64>>, IndexError> {
        fingerprints(&self.conn, from, to)
    }

    /// Every version with its outcome summary, in processing order.
    pub(crate) fn history(&self) -> rusqlite::Result<Vec<HistoryRow>> {
        let mut st = self.conn.prepare(
            "SELECT v.id, v.path, v.version, v.status, v.tokens, o.shingles, o.selected,
                    o.fresh_tokens, o.top_origin, o.dominant_origin, o.origins, v.hash,
                    v.mtime_ns, v.seen_ms
             FROM versions v JOIN outcomes o ON o.id = v.id ORDER BY v.id",
        )?;
        let rows = st.query_map([], |r| {
            Ok(HistoryRow {
                id: r.get(0)?,
                path: name_at(r, 1)?,
                version: r.get(2)?,
                status: Status::from_i64(r.get(3)?),
                hash: r.get::<_, i64>(11)? as u64,
                tokens: r.get(4)?,
                shingles: r.get(5)?,
                selected: r.get(6)?,
                fresh_tokens: r.get(7)?,
                top_origin: r.get(8)?,
                dominant_origin: r.get(9)?,
                origins: decode_pairs(r.get_ref(10)?.as_blob()?),
                mtime_ns: r.get(12)?,
                seen_ms: r.get(13)?,
            })
        })?;
        rows.collect()
    }

    /// The full outcome of version `id` (token runs included).
    pub(crate) fn outcome(&self, id: u32) -> rusqlite::Result<Option<Outcome>> {
        // Cached: `stale` asks for thousands, and parsing the statement
        // each time was a tenth of it.
        self.conn
            .prepare_cached(
                "SELECT v.tokens, o.shingles, o.selected, o.top_origin, o.dominant_origin,
                        o.origins, o.runs
                 FROM versions v JOIN outcomes o ON o.id = v.id WHERE v.id = ?1",
            )?
            .query_row([id], |r| {
                Ok(Outcome {
                    id,
                    tokens: r.get(0)?,
                    shingles: r.get(1)?,
                    selected: r.get(2)?,
                    top_origin: r.get(3)?,
                    dominant_origin: r.get(4)?,
                    origins: decode_pairs(r.get_ref(5)?.as_blob()?),
                    runs: decode_runs(r.get_ref(6)?.as_blob()?),
                })
            })
            .optional()
    }
}

pub(crate) fn set_meta(c: &Connection, key: &str, value: &str) -> rusqlite::Result<()> {
    c.prepare_cached("INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)")?
        .execute([key, value])?;
    Ok(())
}

/// Record a new version, its fingerprints and its outcome.
/// Record a new version with its token fingerprints (its outcome follows,
/// [`put_outcome`], once the origin pass has it).
pub(crate) fn insert_version(c: &Connection, v: &NewVersion) -> rusqlite::Result<()> {
    c.prepare_cached(
        "INSERT INTO versions (id, path, version, mtime_ns, size, hash, tokens, status, file_id,
                               seen_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 0, ?8, ?9)",
    )?
    .execute(params![
        v.id,
        &*name::bytes(v.path),
        v.version,
        v.mtime_ns,
        v.size as i64,
        v.hash as i64,
        v.fps.len() as u32,
        v.file_id as i64,
        v.seen_ms
    ])?;
    let blob = encode_u64s(v.fps);
    c.prepare_cached("INSERT INTO fingerprints (id, checksum, fps) VALUES (?1, ?2, ?3)")?
        .execute(params![v.id, xxh64(&blob) as i64, blob])?;
    put_ctime(c, v.id, v.ctime_ns)
}

/// Record a commit read from a repository's history (once: a commit read
/// again after a stop keeps its number); its number in reading order.
pub(crate) fn put_commit(c: &Connection, commit: &CommitInfo) -> rusqlite::Result<i64> {
    c.prepare_cached(
        "INSERT OR IGNORE INTO commits (oid, author, time, subject) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![
        commit.id,
        commit.author,
        commit.time,
        commit.subject
    ])?;
    c.prepare_cached("SELECT seq FROM commits WHERE oid = ?1")?
        .query_row([&commit.id], |r| r.get(0))
}

/// Whether `oid` was read.
pub(crate) fn has_commit(c: &Connection, oid: &str) -> rusqlite::Result<bool> {
    c.prepare_cached("SELECT 1 FROM commits WHERE oid = ?1")?
        .exists([oid])
}

/// The number of commit `oid`, if it was read.
pub(crate) fn seq_of(c: &Connection, oid: &str) -> rusqlite::Result<Option<i64>> {
    c.prepare_cached("SELECT seq FROM commits WHERE oid = ?1")?
        .query_row([oid], |r| r.get(0))
        .optional()
}

/// Every (version id, commit number) recorded, by id.
pub(crate) fn stamps(c: &Connection) -> rusqlite::Result<Vec<(u32, i64)>> {
    let mut st = c.prepare_cached("SELECT id, seq FROM version_commits ORDER BY id")?;
    let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    rows.collect()
}

/// Record that version `id` was read from commit number `seq`.
pub(crate) fn stamp_version(c: &Connection, id: u32, seq: i64) -> rusqlite::Result<()> {
    c.prepare_cached("INSERT OR REPLACE INTO version_commits (id, seq) VALUES (?1, ?2)")?
        .execute(params![id, seq])?;
    Ok(())
}

/// [`stamp_version`] where `id` has no commit yet.
pub(crate) fn stamp_unstamped(c: &Connection, id: u32, seq: i64) -> rusqlite::Result<()> {
    c.prepare_cached("INSERT OR IGNORE INTO version_commits (id, seq) VALUES (?1, ?2)")?
        .execute(params![id, seq])?;
    Ok(())
}

/// The commit version `id` was read from; None for a version read from a
/// file.
pub(crate) fn commit_of(c: &Connection, id: u32) -> rusqlite::Result<Option<CommitInfo>> {
    c.prepare_cached(
        "SELECT c.oid, c.author, c.time, c.subject FROM version_commits v
         JOIN commits c ON c.seq = v.seq WHERE v.id = ?1",
    )?
    .query_row([id], |r| {
        Ok(CommitInfo {
            id: r.get(0)?,
            author: r.get(1)?,
            time: r.get(2)?,
            subject: r.get(3)?,
        })
    })
    .optional()
}

/// Record the status change time a version's file was last seen with.
fn put_ctime(c: &Connection, id: u32, ctime_ns: i64) -> rusqlite::Result<()> {
    c.prepare_cached("INSERT OR REPLACE INTO ctimes (id, ctime_ns) VALUES (?1, ?2)")?
        .execute(params![id, ctime_ns])?;
    Ok(())
}

/// Record (or replace) a version's outcome.
pub(crate) fn put_outcome(c: &Connection, o: &Outcome) -> rusqlite::Result<()> {
    c.prepare_cached(
        "INSERT OR REPLACE INTO outcomes
         (id, shingles, selected, fresh_tokens, top_origin, dominant_origin, origins, runs)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![
        o.id,
        o.shingles,
        o.selected,
        o.fresh_tokens(),
        o.top_origin,
        o.dominant_origin,
        encode_pairs(&o.origins),
        encode_runs(&o.runs)
    ])?;
    Ok(())
}

pub(crate) fn set_status(c: &Connection, id: u32, s: Status) -> rusqlite::Result<()> {
    c.prepare_cached("UPDATE versions SET status = ?2 WHERE id = ?1")?
        .execute(params![id, s as i64])?;
    Ok(())
}

/// Same content, new stat: only size, mtime, file id, status change time
/// (and status) change.
pub(crate) fn touch(c: &Connection, id: u32, stat: &Stat) -> rusqlite::Result<()> {
    c.prepare_cached(
        "UPDATE versions SET size = ?2, mtime_ns = ?3, file_id = ?4, status = 0 WHERE id = ?1",
    )?
    .execute(params![
        id,
        stat.size as i64,
        stat.mtime_ns,
        stat.file_id as i64
    ])?;
    put_ctime(c, id, stat.ctime_ns)
}

/// What a file's stat says of it, as the index records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stat {
    pub size: u64,
    pub mtime_ns: i64,
    pub ctime_ns: i64,
    pub file_id: u64,
}

/// Every version of `from` now belongs to `to`, numbered after the
/// `offset` versions `to` already has.
pub(crate) fn rename(c: &Connection, from: &str, to: &str, offset: u32) -> rusqlite::Result<()> {
    c.prepare_cached("UPDATE versions SET path = ?2, version = version + ?3 WHERE path = ?1")?
        .execute(params![&*name::bytes(from), &*name::bytes(to), offset])?;
    Ok(())
}

pub(crate) fn put_skipped(c: &Connection, path: &str, s: &SkipRow) -> rusqlite::Result<()> {
    c.prepare_cached(
        "INSERT OR REPLACE INTO skipped (path, reason, binary, size, mtime_ns)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![
        &*name::bytes(path),
        s.reason,
        s.binary,
        s.size.map(|v| v as i64),
        s.mtime_ns
    ])?;
    Ok(())
}

pub(crate) fn delete_skipped(c: &Connection, path: &str) -> rusqlite::Result<()> {
    c.prepare_cached("DELETE FROM skipped WHERE path = ?1")?
        .execute([&*name::bytes(path)])?;
    Ok(())
}

/// The name of a path column: stored as its exact bytes (a BLOB; TEXT in an
/// index of schema 2 not yet migrated reads the same).
pub(crate) fn name_at(r: &rusqlite::Row, i: usize) -> rusqlite::Result<String> {
    match r.get_ref(i)? {
        ValueRef::Blob(b) | ValueRef::Text(b) => Ok(name::encode(b)),
        other => Err(rusqlite::Error::InvalidColumnType(
            i,
            "path".into(),
            other.data_type(),
        )),
    }
}

fn encode_u64s(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn decode_u64s(b: &[u8]) -> Vec<u64> {
    b.chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect()
}

fn encode_pairs(v: &[(u32, u32)]) -> Vec<u8> {
    v.iter()
        .flat_map(|&(a, b)| a.to_le_bytes().into_iter().chain(b.to_le_bytes()))
        .collect()
}

fn le32(c: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(c[4 * i..4 * i + 4].try_into().expect("4 bytes"))
}

fn decode_pairs(b: &[u8]) -> Vec<(u32, u32)> {
    b.chunks_exact(8)
        .map(|c| (le32(c, 0), le32(c, 1)))
        .collect()
}

/// Runs as (start, end, origin) with `u32::MAX` for fresh.
fn encode_runs(v: &[Run]) -> Vec<u8> {
    v.iter()
        .flat_map(|r| {
            [r.start, r.end, r.origin.unwrap_or(u32::MAX)]
                .into_iter()
                .flat_map(u32::to_le_bytes)
        })
        .collect()
}

fn decode_runs(b: &[u8]) -> Vec<Run> {
    b.chunks_exact(12)
        .map(|c| Run {
            start: le32(c, 0),
            end: le32(c, 1),
            origin: Some(le32(c, 2)).filter(|&o| o != u32::MAX),
        })
        .collect()
}

/// Remove the stamp of the database's last full check ([`CHECKED`]): a
/// reader found damage it did not, so the next open checks every page and
/// fingerprint again, and repairs (a bit flipped on a disk that leaves the
/// file's times as they were).
fn unstamp(conn: &Connection) {
    if let Some(db) = conn.path().filter(|p| !p.is_empty()) {
        let _ = std::fs::remove_file(Path::new(db).with_file_name(CHECKED));
    }
}

/// Versions whose cached fingerprints are damaged: a blob that fails its
/// checksum or is not of whole u64s, or no row for a version that is not
/// forgotten (index/history.rs). Every blob is read and hashed (XXH64).
pub(crate) fn damaged_fingerprints(conn: &Connection) -> rusqlite::Result<Vec<u32>> {
    let mut bad = Vec::new();
    let mut st = conn.prepare(
        "SELECT v.id, f.checksum, f.fps FROM versions v LEFT JOIN fingerprints f ON f.id = v.id
         WHERE coalesce(v.text, 0) != ?1 ORDER BY v.id",
    )?;
    let mut rows = st.query([super::history::FORGOTTEN])?;
    while let Some(r) = rows.next()? {
        let sound = match (r.get::<_, Option<i64>>(1)?, r.get_ref(2)?) {
            (Some(check), ValueRef::Blob(b)) => xxh64(b) == check as u64 && b.len() % 8 == 0,
            _ => false,
        };
        if !sound {
            bad.push(r.get(0)?);
        }
    }
    Ok(bad)
}

/// Replace version `id`'s cached fingerprints with `fps` (recomputed).
pub(crate) fn put_fingerprints(c: &Connection, id: u32, fps: &[u64]) -> rusqlite::Result<()> {
    let blob = encode_u64s(fps);
    c.prepare_cached(
        "INSERT OR REPLACE INTO fingerprints (id, checksum, fps) VALUES (?1, ?2, ?3)",
    )?
    .execute(params![id, xxh64(&blob) as i64, blob])?;
    Ok(())
}

/// [`Db::fingerprints`] through any connection (a transaction's too, which
/// sees what it has written).
pub(crate) fn fingerprints(
    conn: &Connection,
    from: u32,
    to: u32,
) -> Result<Vec<Vec<u64>>, IndexError> {
    // Each version in order: its row, or none for a forgotten one
    // (index/history.rs), which has no tokens to give.
    let mut st = conn.prepare_cached(
        "SELECT v.id, f.checksum, f.fps, coalesce(v.text, 0) = ?3 FROM versions v
         LEFT JOIN fingerprints f ON f.id = v.id WHERE v.id >= ?1 AND v.id < ?2 ORDER BY v.id",
    )?;
    let mut rows = st.query(params![from, to, super::history::FORGOTTEN])?;
    let mut out = Vec::with_capacity((to - from) as usize);
    while let Some(r) = rows.next()? {
        let id: u32 = r.get(0)?;
        if id != from + out.len() as u32 {
            break;
        }
        let Some(check) = r.get::<_, Option<i64>>(1)? else {
            if r.get(3)? {
                out.push(Vec::new());
                continue;
            }
            break;
        };
        let check = check as u64;
        let blob = r.get_ref(2).and_then(|v| Ok(v.as_blob()?))?;
        if xxh64(blob) != check || blob.len() % 8 != 0 {
            unstamp(conn);
            return Err(IndexError::Damaged(format!(
                "fingerprints of version {id} damaged (the index's next open repairs them)"
            )));
        }
        out.push(decode_u64s(blob));
    }
    if out.len() != (to - from) as usize {
        unstamp(conn);
        return Err(IndexError::Damaged(format!(
            "fingerprints of version {} missing",
            from + out.len() as u32
        )));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_round_trip() {
        let fps = [0u64, 1, u64::MAX, 0x0123_4567_89ab_cdef];
        let b = encode_u64s(&fps);
        assert_eq!(b.len(), 32);
        assert_eq!(&b[8..16], &[1, 0, 0, 0, 0, 0, 0, 0], "little-endian");
        assert_eq!(decode_u64s(&b), fps);
        let pairs = [(3, 10), (0, 1)];
        assert_eq!(decode_pairs(&encode_pairs(&pairs)), pairs);
        let o = Outcome::new(5, 12, 4, [(0, 4), (4, 8), (8, 12)], &[1, 5, 2]);
        assert_eq!(decode_runs(&encode_runs(&o.runs)), o.runs);
    }

    /// Every page is checked when the file is not as it was at its last
    /// check, and only then: damage put back under the old modification
    /// time is found (its status-change time moved); a stamp that vouches
    /// for the damaged file (forged here) lets it open unchecked.
    #[test]
    fn pages_are_checked_when_the_file_changed_since_their_last_check() {
        let dir = std::env::temp_dir().join(format!("lineage-checked-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(FILE);
        let stamp = dir.join(CHECKED);
        {
            let (db, fresh) = Db::open(&path).unwrap();
            assert!(fresh);
            // Pages no open reads: a table of its own, its last leaf last.
            db.conn()
                .execute_batch(
                    "CREATE TABLE filler (b BLOB);
                     WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
                     INSERT INTO filler SELECT randomblob(100) FROM n;",
                )
                .unwrap();
        }
        assert!(!stamp.exists(), "a new database was not checked");
        drop(Db::open(&path).unwrap());
        let checked = std::fs::read_to_string(&stamp).unwrap();
        assert_eq!(Some(checked.clone()), identity(&path, &dir));
        drop(Db::open(&path).unwrap());
        assert_eq!(std::fs::read_to_string(&stamp).unwrap(), checked);

        // The last page's type byte: no B-tree page has type 0.
        let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 4096;
        assert_eq!(bytes[last], 0x0d, "the last page is a table leaf");
        bytes[last] = 0;
        std::fs::write(&path, &bytes).unwrap();
        let f = std::fs::File::options().write(true).open(&path).unwrap();
        f.set_modified(mtime).unwrap();
        drop(f);
        assert!(matches!(Db::open(&path), Err(OpenError::Corrupt(_))));
        std::fs::write(&stamp, identity(&path, &dir).unwrap()).unwrap();
        drop(Db::open(&path).expect("opened as the stamp says, unchecked"));
        std::fs::remove_file(&stamp).unwrap();
        assert!(matches!(Db::open(&path), Err(OpenError::Corrupt(_))));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// An index of schema 6 (no `seen_ms`) is migrated in place: every row
    /// kept and summed again, the time it was seen unknown (NULL), and the
    /// versions recorded after it get theirs.
    #[test]
    fn a_database_of_schema_6_keeps_its_rows_and_records_when_versions_are_seen() {
        let dir = std::env::temp_dir().join(format!("lineage-schema6-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(FILE);
        let fps = [3u64; 12];
        let version = |id: u32, path: &'static str, seen_ms: i64| NewVersion {
            id,
            path,
            version: 1,
            mtime_ns: 10_000_000_000,
            size: 40,
            hash: 0xfeed + u64::from(id),
            file_id: 9,
            ctime_ns: 10_000_000_000,
            fps: &fps,
            seen_ms,
        };
        let (mut db, _) = Db::open(&path).unwrap();
        let tx = db.transaction().unwrap();
        for (id, p) in [(0, "a.md"), (1, "b.md")] {
            insert_version(&tx, &version(id, p, 1_700_000_000_000)).unwrap();
            put_outcome(&tx, &Outcome::new(id, 12, 3, [(0, 12)], &[id])).unwrap();
        }
        tx.commit().unwrap();
        let before = (db.history().unwrap(), db.current().unwrap());
        drop(db);
        // Back to schema 6: the versions without `seen_ms`, summed without it.
        let c = Connection::open(&path).unwrap();
        add_row_sum(&c).unwrap();
        c.execute_batch(
            "CREATE TABLE v6 (id INTEGER PRIMARY KEY, path BLOB NOT NULL, version INTEGER NOT NULL,
                 mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL, hash INTEGER NOT NULL,
                 tokens INTEGER NOT NULL, status INTEGER NOT NULL,
                 file_id INTEGER NOT NULL DEFAULT 0, text INTEGER,
                 sum INTEGER GENERATED ALWAYS AS (lineage_row(id, path, version, mtime_ns, size,
                     hash, tokens, status, file_id, text)) STORED,
                 UNIQUE (path, version));
             INSERT INTO v6 (id, path, version, mtime_ns, size, hash, tokens, status, file_id, text)
                 SELECT id, path, version, mtime_ns, size, hash, tokens, status, file_id, text
                 FROM versions;
             DROP TABLE versions;
             ALTER TABLE v6 RENAME TO versions;
             DROP TABLE ctimes;
             PRAGMA user_version = 6;
             UPDATE meta SET value = '6' WHERE key = 'schema_version';",
        )
        .unwrap();
        drop(c);
        let (mut db, fresh) = Db::open(&path).expect("migrated, its sums sound");
        assert!(!fresh);
        let new = dir.join("new.db");
        drop(Db::open(&new).unwrap());
        assert_eq!(shape(db.conn()), shape(&Connection::open(&new).unwrap()));
        let unknown: Vec<HistoryRow> = (before.0.iter().cloned())
            .map(|h| HistoryRow { seen_ms: None, ..h })
            .collect();
        assert_eq!(
            db.history().unwrap(),
            unknown,
            "the same rows, not seen when"
        );
        // Their status change times were not kept before 9.
        let unknown_ctimes: HashMap<String, Current> = (before.1.into_iter())
            .map(|(p, c)| {
                (
                    p,
                    Current {
                        ctime_ns: None,
                        ..c
                    },
                )
            })
            .collect();
        assert_eq!(db.current().unwrap(), unknown_ctimes);
        assert_eq!(db.fingerprints(0, 2).unwrap(), vec![fps.to_vec(); 2]);
        let (schema, unsummed): (i64, i64) = db
            .conn()
            .query_row(
                "SELECT (SELECT value FROM meta WHERE key = 'schema_version'),
                        (SELECT count(*) FROM versions WHERE sum IS NULL)",
                [],
                |r| Ok((r.get::<_, String>(0)?.parse().unwrap(), r.get(1)?)),
            )
            .unwrap();
        assert_eq!((schema, unsummed), (SCHEMA_VERSION, 0));
        // A version recorded now has its time, in its row's sum.
        let tx = db.transaction().unwrap();
        insert_version(&tx, &version(2, "c.md", 1_800_000_000_000)).unwrap();
        put_outcome(&tx, &Outcome::new(2, 12, 3, [(0, 12)], &[2])).unwrap();
        tx.commit().unwrap();
        drop(db);
        let (db, _) = Db::open(&path).unwrap();
        let seen: Vec<Option<i64>> = db.history().unwrap().iter().map(|h| h.seen_ms).collect();
        assert_eq!(seen, [None, None, Some(1_800_000_000_000)]);
        // Its time is in its row's sum: a change to it is found.
        let covered: bool = db
            .conn()
            .query_row(
                "SELECT sum = lineage_row(id, path, version, mtime_ns, size, hash, tokens, status,
                                          file_id, text, seen_ms)
                        AND sum != lineage_row(id, path, version, mtime_ns, size, hash, tokens,
                                               status, file_id, text, seen_ms + 1)
                 FROM versions WHERE id = 2",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert!(covered);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn records_read_back() {
        let dir = std::env::temp_dir().join(format!("lineage-schema-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let (mut db, fresh) = Db::open(&dir.join(FILE)).unwrap();
        assert!(fresh);
        let o = Outcome::new(0, 12, 3, [(0, 4), (4, 8), (8, 12)], &[0, 0, 0]);
        let tx = db.transaction().unwrap();
        let fps = [7u64; 12];
        let v = NewVersion {
            id: 0,
            path: "a.md",
            version: 1,
            mtime_ns: -5,
            size: 99,
            hash: u64::MAX - 1,
            file_id: 7,
            ctime_ns: -6,
            fps: &fps,
            seen_ms: 1_700_000_000_123,
        };
        insert_version(&tx, &v).unwrap();
        put_outcome(&tx, &o).unwrap();
        tx.commit().unwrap();
        drop(db);
        let (db, fresh) = Db::open(&dir.join(FILE)).unwrap();
        assert!(!fresh);
        assert_eq!(db.version_count().unwrap(), (1, true));
        let cur = db.current().unwrap();
        assert_eq!(cur["a.md"].hash, u64::MAX - 1);
        assert_eq!(cur["a.md"].mtime_ns, -5);
        assert_eq!(cur["a.md"].ctime_ns, Some(-6));
        assert_eq!(db.fingerprints(0, 1).unwrap(), vec![fps.to_vec()]);
        assert!(db.fingerprints(0, 2).is_err(), "a missing row is an error");
        assert_eq!(db.outcome(0).unwrap().unwrap(), o);
        assert_eq!(db.version_of(0).unwrap(), Some(("a.md".into(), 1)));
        assert_eq!(db.version_of(1).unwrap(), None);
        assert_eq!(db.history().unwrap()[0].fresh_tokens, 12);
        assert_eq!(db.history().unwrap()[0].seen_ms, Some(1_700_000_000_123));
        std::fs::remove_dir_all(&dir).unwrap();
    }
    /// The tables, columns and indexes of a database, in name order: what
    /// a migration must leave as a new index has them.
    fn shape(c: &Connection) -> Vec<String> {
        let mut names: Vec<(String, String, String)> = c
            .prepare(
                "SELECT type, name, tbl_name FROM sqlite_master
                 WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name",
            )
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        names.sort();
        let mut shape = Vec::new();
        for (kind, name, table) in names {
            let (pragma, what) = if kind == "table" {
                (
                    "table_xinfo",
                    "cid, name, type, \"notnull\", dflt_value, pk, hidden",
                )
            } else {
                ("index_xinfo", "seqno, cid, name, desc, coll, key")
            };
            let sql = format!("SELECT {what} FROM pragma_{pragma}(?1)");
            let mut st = c.prepare(&sql).unwrap();
            let n = st.column_count();
            let rows: Vec<String> = st
                .query_map([&name], |r| {
                    Ok((0..n)
                        .map(|i| format!("{:?}", r.get_ref(i).unwrap()))
                        .collect::<Vec<_>>()
                        .join(" "))
                })
                .unwrap()
                .map(Result::unwrap)
                .collect();
            shape.push(format!("{kind} {name} on {table}: {}", rows.join("; ")));
        }
        shape
    }

    /// Only a migration that copies or drops tables copies the file to give
    /// their pages back: from 10, which adds one, the free pages stay (a
    /// VACUUM there rewrote a 29 MB index to add an empty table); from 7,
    /// which drops one, they are given back.
    #[test]
    fn only_a_migration_that_frees_pages_vacuums() {
        let dir = std::env::temp_dir().join(format!("lineage-vacuum-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (from, undo, vacuumed) in [
            (10, "DROP TABLE changes;", false),
            (
                7,
                "DROP TABLE ctimes;
                 CREATE TABLE sketches (id INTEGER PRIMARY KEY, simhash INTEGER NOT NULL);",
                true,
            ),
        ] {
            let path = dir.join(format!("{from}.db"));
            drop(Db::open(&path).unwrap());
            let c = Connection::open(&path).unwrap();
            c.execute_batch(&format!(
                "CREATE TABLE filler (b BLOB);
                 INSERT INTO filler VALUES (zeroblob(200000));
                 DROP TABLE filler;
                 {undo}
                 PRAGMA user_version = {from};
                 UPDATE meta SET value = '{from}' WHERE key = 'schema_version';"
            ))
            .unwrap();
            let free = |c: &Connection| -> i64 {
                c.query_row("PRAGMA freelist_count", [], |r| r.get(0))
                    .unwrap()
            };
            assert!(free(&c) > 10);
            drop(c);
            drop(Db::open(&path).unwrap());
            let c = Connection::open(&path).unwrap();
            assert_eq!(
                free(&c) == 0,
                vacuumed,
                "from {from}: {} free pages",
                free(&c)
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// An index of schema 7 (its tables made on first use, the dead
    /// simhash table still there, no status change times) migrates to what
    /// a new index has.
    #[test]
    fn a_migrated_database_has_the_tables_of_a_new_one() {
        let dir = std::env::temp_dir().join(format!("lineage-schema7-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let (new, old) = (dir.join("new.db"), dir.join(FILE));
        drop(Db::open(&new).unwrap());
        drop(Db::open(&old).unwrap());
        let c = Connection::open(&old).unwrap();
        c.execute_batch(
            "DROP TABLE near_sketches;
             DROP TABLE departures;
             DROP INDEX versions_past;
             DROP TABLE ctimes;
             CREATE TABLE sketches (id INTEGER PRIMARY KEY, simhash INTEGER NOT NULL);
             PRAGMA user_version = 7;
             UPDATE meta SET value = '7' WHERE key = 'schema_version';",
        )
        .unwrap();
        assert_ne!(shape(&c), shape(&Connection::open(&new).unwrap()));
        drop(c);
        let (db, fresh) = Db::open(&old).unwrap();
        assert!(!fresh);
        assert_eq!(shape(db.conn()), shape(&Connection::open(&new).unwrap()));
        drop(db);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
