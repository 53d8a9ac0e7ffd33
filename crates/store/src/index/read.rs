//! Reading an index: what the engine's queries and `lineage explain` ask of
//! it, from the [`Index`] a process holds open or from a [`ReadOnly`]
//! connection that needs no lock (beside a running watcher, SQLite's WAL
//! lets it read every committed version while the watcher writes).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::departures::{self, Departure};
use super::schema::{self, Current, Db, HistoryRow};
use super::texts::{self, Kept};
use super::{Counts, Index, IndexError, params_from_key};
use lineage_core::fingerprint::ShingleRoller;
use lineage_core::fingerprint::polynomial::Polynomial;
use lineage_origin::{Outcome, Params};
use lineage_source::history::CommitInfo;

/// The read side of an index.
pub trait Read {
    /// The open database.
    fn db(&self) -> &Db;
    /// The canonical root.
    fn root(&self) -> &Path;
    /// The settings the index's outcomes were computed with.
    fn params(&self) -> &Params;
    /// The roller of the index's k.
    fn roller(&self) -> &ShingleRoller;
    /// The polynomial of its token fingerprints and file hashes.
    fn polynomial(&self) -> &Polynomial;
    /// The latest version of `path`, if it has one.
    fn current(&self, path: &str) -> Option<&Current>;

    /// Cached token fingerprints of versions `from..to`.
    fn fingerprints(&self, from: u32, to: u32) -> Result<Vec<Vec<u64>>, IndexError> {
        self.db().fingerprints(from, to)
    }

    /// The k-shingle keys of version `id`, rolled from its cached token
    /// fingerprints with the index's own roller.
    fn shingle_keys(&self, id: u32) -> Result<Vec<u64>, IndexError> {
        let fps = self.fingerprints(id, id + 1)?.pop().unwrap_or_default();
        let mut keys = Vec::new();
        self.roller().keys(&fps, &mut keys);
        Ok(keys)
    }

    /// Every version with its outcome summary, in processing order; read
    /// from the database, not replayed.
    fn history(&self) -> Result<Vec<HistoryRow>, IndexError> {
        Ok(self.db().history()?)
    }

    /// The full outcome of version `id`, token runs included.
    fn outcome(&self, id: u32) -> Result<Option<Outcome>, IndexError> {
        Ok(self.db().outcome(id)?)
    }

    /// The commit version `id` was read from (a repository's history); None
    /// for a version read from a file, or an index of a lineage before
    /// schema 10 opened read-only.
    fn commit_of(&self, id: u32) -> Result<Option<CommitInfo>, IndexError> {
        match schema::commit_of(self.db().conn(), id) {
            Err(rusqlite::Error::SqliteFailure(_, Some(m))) if m.contains("no such table") => {
                Ok(None)
            }
            r => Ok(r?),
        }
    }

    /// The releases: the repository's tags (as last read) on commits the
    /// index read, oldest first; none for a folder's index.
    fn releases(&self) -> Result<Vec<super::Release>, IndexError> {
        super::commits::releases(self.db())
    }

    /// Every version read from a commit, with that commit's number (as
    /// [`super::Release::seq`] numbers them), by version id.
    fn stamps(&self) -> Result<Vec<(u32, i64)>, IndexError> {
        super::commits::stamps(self.db())
    }

    /// The file bytes of version `id`, if the text store has them.
    fn text(&self, id: u32) -> Result<Kept, IndexError> {
        texts::get(self.db().conn(), id)
    }

    /// Live documents, versions and skipped files, the text store's bytes
    /// and the history's (see [`Index::history_bytes`]), as the database
    /// holds them.
    fn stored_figures(&self) -> Result<(Counts, u64, u64), IndexError> {
        let c = self.db().conn();
        let (documents, versions, skipped): (i64, i64, i64) = c.query_row(
            "SELECT (SELECT count(*) FROM versions WHERE status = 0),
                    (SELECT count(*) FROM versions),
                    (SELECT count(*) FROM skipped)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?;
        let texts = texts::total(c)?;
        let counts = Counts {
            documents: documents as u64,
            versions: versions as u64,
            skipped: skipped as u64,
        };
        Ok((
            counts,
            texts,
            texts + super::history::past_fingerprint_bytes(c)?,
        ))
    }

    /// Every kept (version, base) pair's token counts whose versions are
    /// still the ones it was measured on (the Documents pane's changed and
    /// removed shares, index/changes.rs).
    fn changes(&self) -> Result<Vec<super::changes::PairCounts>, IndexError> {
        super::changes::kept(self.db())
    }

    /// Whether the text store has version `id`'s bytes (without reading them).
    fn has_text(&self, id: u32) -> Result<bool, IndexError> {
        Ok(texts::has(self.db().conn(), id)?)
    }

    /// The renames the index keeps (its newest departures' renames),
    /// newest first: where each page's versions came from. None kept (an
    /// index of a lineage before schema 8) reads as none.
    fn renames(&self) -> Result<Vec<Departure>, IndexError> {
        renames(self.db())
    }

    /// The order new files are processed in, as the index recorded it
    /// (None where it holds none yet).
    fn order(&self) -> Option<lineage_source::Order> {
        let held = self.db().meta(super::ORDER).ok().flatten()?;
        held.parse().ok()
    }
}

/// The renames `db` keeps, newest first (see [`Read::renames`]).
pub(super) fn renames(db: &Db) -> Result<Vec<Departure>, IndexError> {
    match departures::newest(db.conn(), usize::MAX >> 1, true) {
        Err(IndexError::Db(rusqlite::Error::SqliteFailure(_, Some(m))))
            if m.contains("no such table") =>
        {
            Ok(Vec::new())
        }
        r => r,
    }
}

impl Read for Index {
    fn db(&self) -> &Db {
        &self.db
    }
    fn root(&self) -> &Path {
        &self.root
    }
    fn params(&self) -> &Params {
        &self.params
    }
    fn roller(&self) -> &ShingleRoller {
        &self.roller
    }
    fn polynomial(&self) -> &Polynomial {
        &self.poly
    }
    fn current(&self, path: &str) -> Option<&Current> {
        self.current.get(path)
    }
}

/// An index opened for reading only: no lock, no repair, no writes.
pub struct ReadOnly {
    db: Db,
    root: PathBuf,
    params: Params,
    roller: ShingleRoller,
    poly: Polynomial,
    current: HashMap<String, Current>,
}

impl ReadOnly {
    /// Open the index in `dir` as it was last committed. An index that is
    /// missing, of another schema, or damaged is an error: opening it for
    /// writing (`lineage index`) repairs or migrates it, and so is one built
    /// under another polynomial than `poly`.
    pub fn open(dir: &Path, poly: &Polynomial) -> Result<ReadOnly, IndexError> {
        let path = dir.join(schema::FILE);
        if !std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
            return Err(IndexError::Location(format!(
                "no index in {}",
                dir.display()
            )));
        }
        let db = Db::open_reader(&path)?;
        let version: i64 = db
            .conn()
            .query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if version != schema::SCHEMA_VERSION {
            return Err(IndexError::Location(format!(
                "index {} is of schema {version}, not {}; `lineage index` brings it up to date",
                dir.display(),
                schema::SCHEMA_VERSION
            )));
        }
        let damaged = |what: &str| IndexError::Damaged(format!("no {what} recorded"));
        if !super::same_polynomial(&db, dir, poly)? {
            return Err(damaged("polynomial"));
        }
        let root = PathBuf::from(db.meta("root")?.ok_or_else(|| damaged("root"))?);
        let params = db
            .meta("params")?
            .as_deref()
            .and_then(params_from_key)
            .ok_or_else(|| damaged("settings"))?;
        Ok(ReadOnly {
            roller: ShingleRoller::new(poly, params.k),
            poly: poly.clone(),
            current: db.current()?,
            db,
            root,
            params,
        })
    }
}

impl Read for ReadOnly {
    fn db(&self) -> &Db {
        &self.db
    }
    fn root(&self) -> &Path {
        &self.root
    }
    fn params(&self) -> &Params {
        &self.params
    }
    fn roller(&self) -> &ShingleRoller {
        &self.roller
    }
    fn polynomial(&self) -> &Polynomial {
        &self.poly
    }
    fn current(&self, path: &str) -> Option<&Current> {
        self.current.get(path)
    }
}
