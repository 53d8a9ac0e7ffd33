//! Opening an index: its folder checked and locked, the database opened
//! and checked (rebuilt from the files when damaged or foreign), and the
//! table restored as far as its snapshot goes ([`Restored`]); the rest is
//! the caller's replay.

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::schema::{self, Current, Db, OpenError, SkipRow, Status};
use super::{
    Index, IndexError, Observer, PendingTable, Restored, TableState, VIEW_FILE, lock, params_key,
    same_polynomial, snapshot, texts,
};
use lineage_core::fingerprint::ShingleRoller;
use lineage_core::fingerprint::polynomial::Polynomial;
use lineage_origin::Params;
use lineage_origin::table::Table;

/// Why loading failed: repairable by a rebuild, or not.
enum Load {
    Rebuild(String),
    Fatal(IndexError),
}

impl From<rusqlite::Error> for Load {
    fn from(e: rusqlite::Error) -> Load {
        let e = IndexError::Db(e);
        match e.damage() {
            Some(why) => Load::Rebuild(why),
            None => Load::Fatal(e),
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
            versions,
            current,
            ..
        } = self;
        if rebuilt {
            return Err(IndexError::Unrepairable {
                dir,
                reason: why.to_string(),
            });
        }
        let live = current
            .values()
            .filter(|c| c.status == Status::Live)
            .count();
        let held = Held {
            versions: Some(u64::from(versions)),
            live: Some(live as u64),
        };
        drop(db);
        let dropped = rebuild_notice(&dir, why, held, obs);
        wipe(&dir)?;
        let (mut ix, restored) = open_locked(root, &dir, params, &poly, lock, true, obs)?;
        ix.dropped += dropped;
        Ok((ix, restored))
    }
}

/// The `meta` key of a fault met by a sync ([`Index::note_fault`]).
pub(crate) const FAULT: &str = "fault";

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
    let mut dropped = 0;
    let loaded = loop {
        match load(&root, dir, params, poly, &key, obs) {
            Ok(l) => break l,
            Err(Load::Rebuild(reason)) if !rebuilt => {
                let held = Held::count(dir, &key, params);
                dropped += rebuild_notice(dir, &reason, held, obs);
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
        dropped,
        notices: Vec::new(),
        order: None,
        _lock: lock,
    };
    Ok((ix, loaded.restored))
}

/// What a damaged index held, as far as it can still be told: its
/// versions, and of them the live pages (the files give those back).
#[derive(Clone, Copy, Debug, Default)]
struct Held {
    versions: Option<u64>,
    live: Option<u64>,
}

impl Held {
    /// Counted from the database if its version rows can still be read,
    /// else the versions its table snapshot covered.
    fn count(dir: &Path, key: &str, params: Params) -> Held {
        let db = dir.join(schema::FILE);
        // A regular file only: SQLite would wait on a FIFO.
        let regular = fs::symlink_metadata(&db).is_ok_and(|m| m.is_file());
        let counted = regular.then(|| {
            rusqlite::Connection::open_with_flags(
                &db,
                rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY
                    | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
            .and_then(|c| {
                c.query_row(
                    "SELECT count(*), coalesce(sum(status = 0), 0) FROM versions",
                    [],
                    |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)),
                )
            })
        });
        match counted {
            Some(Ok((v, l))) => Held {
                versions: Some(v as u64),
                live: Some(l as u64),
            },
            _ => Held {
                versions: snapshot::read_pending(dir, key, params.table_params(), || 0)
                    .ok()
                    .map(|(h, _, _)| h.versions),
                live: None,
            },
        }
    }
}

/// Tell a person the index is rebuilt from the files, why, and how many
/// versions of its history that drops (the replaced and deleted pages: the
/// files give back only the live ones). Returns that number (0 unknown).
fn rebuild_notice(dir: &Path, why: &str, held: Held, obs: &mut dyn Observer) -> u64 {
    let (dropped, told) = match (held.versions, held.live) {
        (Some(v), Some(l)) => {
            let d = v.saturating_sub(l);
            (
                d,
                format!("{d} of its {v} versions (replaced and deleted pages) are dropped"),
            )
        }
        (Some(v), None) => (
            v,
            format!("the {v} versions its table covered are dropped, the files read anew"),
        ),
        (None, _) => (0, "its history is dropped, the files read anew".to_string()),
    };
    obs.notice(&format!(
        "index {}: {}; rebuilding it from the files: {told}",
        dir.display(),
        one_line(dir, why)
    ));
    dropped
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

/// A reason as one line for a person: a long or many-line one (SQLite's
/// integrity report runs to a hundred lines) is cut to its first problem,
/// the whole of it kept in `damaged-<time>.log` in the index folder.
pub(super) fn one_line(dir: &Path, reason: &str) -> String {
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

/// Remove the snapshot and database files (not the lock, which we hold);
/// the snapshot first, so no crash leaves it beside a new database.
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
        // The connection is gone with its errno: only SQLITE_FULL says a
        // full disk here.
        Err(OpenError::Fatal(e)) => return Err(Load::Fatal(IndexError::Db(e).disk_full(dir, 0))),
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
            let covered = match snapshot::read_pending(dir, key, params.table_params(), || 0) {
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
        schema::set_meta(&tx, "polynomial", &poly.hex())?;
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
    // A run that stopped on a fault of lineage's own left the index as the
    // fault found it: the same state would meet the same fault again, so
    // the index is made anew from the files.
    if let Some(fault) = db.meta(FAULT)? {
        return Err(Load::Rebuild(format!(
            "the last run stopped on a fault of lineage's own ({fault})"
        )));
    }
    // Before anything is replayed from them.
    let damaged = db.take_damaged();
    if !damaged.is_empty() {
        super::repair::fingerprints(&mut db, dir, root, poly, &damaged, obs).map_err(
            |e| match e.damage() {
                Some(why) => Load::Rebuild(why),
                None => Load::Fatal(e),
            },
        )?;
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
    // An unbounded table's snapshot is bounded by the history's tokens,
    // summed only for such a table (a scan of every version row).
    let tokens = || db.all_tokens().unwrap_or(0);
    let ready = |t: Table| TableState::Ready(t);
    let (start, table, why) = match snapshot::read_pending(dir, key, tp, tokens) {
        Ok((h, pending, disk)) => {
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
                    ready(fresh_table()?),
                    "snapshot does not match the document log".to_string(),
                )
            } else if n > u64::from(through) {
                // Outcomes after `through` need the table as it was then.
                (0, ready(fresh_table()?), String::new())
            } else if n == u64::from(versions) {
                // Nothing to replay: the table is made when first used.
                saved = Some((disk, (n, h.last_hash)));
                let pending = TableState::Pending(PendingTable(pending));
                (n as u32, pending, String::new())
            } else {
                match pending.restore() {
                    Ok(table) => {
                        let why = format!(
                            "snapshot covers {n} of {versions} versions (an interrupted run)"
                        );
                        saved = Some((disk, (n, h.last_hash)));
                        (n as u32, ready(table), why)
                    }
                    Err(u) => (0, ready(fresh_table()?), unusable(u)),
                }
            }
        }
        Err(u) => (0, ready(fresh_table()?), unusable(u)),
    };
    if start < versions && !params_changed {
        obs.notice(&format!(
            "index {}: the table {why}; replaying {} of {versions} versions \
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

/// Why a snapshot cannot be used, as the notice of its replay says it.
pub(super) fn unusable(u: snapshot::Unusable) -> String {
    match u {
        snapshot::Unusable::Missing => "snapshot is missing".into(),
        snapshot::Unusable::OtherParams(p) => format!("snapshot is of other parameters ({p})"),
        snapshot::Unusable::Corrupt(r) => format!("snapshot is damaged ({r})"),
        snapshot::Unusable::Journal(r) => format!("journal is damaged ({r})"),
        snapshot::Unusable::Older => "snapshot was written by an older lineage".into(),
    }
}
