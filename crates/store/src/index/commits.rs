//! The commits a repository's history was read from (docs/formats.md,
//! "The index"): each version read from a commit is stamped with it, and
//! the index remembers the last commit read, so a later import reads only
//! the commits since.

use lineage_source::history::CommitInfo;

use super::schema;
use super::{Index, IndexError};

/// The `meta` key of the last commit whose pages are all recorded.
const HEAD: &str = "history_head";
/// The `meta` key of where the index's versions come from: `git` or
/// `folder`.
const HISTORY: &str = "history";

/// Where an index's versions come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The files as they are, a new version each time one changes.
    Folder,
    /// A git repository's first-parent history, then the files.
    Git,
}

impl Source {
    /// Its name in the config, on the command line and in the index.
    pub fn name(self) -> &'static str {
        match self {
            Source::Folder => "folder",
            Source::Git => "git",
        }
    }

    /// What it is, in words.
    pub fn describe(self) -> &'static str {
        match self {
            Source::Folder => "the folder's files",
            Source::Git => "its git history",
        }
    }
}

impl Index {
    /// Record `commit` (once) before its pages are read: its number, to
    /// stamp them with ([`super::Syncing::from_commit`]).
    pub fn put_commit(&mut self, commit: &CommitInfo) -> Result<i64, IndexError> {
        Ok(schema::put_commit(self.db.conn(), commit)?)
    }

    /// Whether `commit` was read.
    pub fn has_commit(&self, commit: &str) -> Result<bool, IndexError> {
        Ok(schema::has_commit(self.db.conn(), commit)?)
    }

    /// The last commit whose pages are all recorded; None before the first.
    pub fn history_head(&self) -> Result<Option<String>, IndexError> {
        Ok(self.db.meta(HEAD)?)
    }

    /// Every page of `commit` is recorded (the next import starts after it).
    pub fn set_history_head(&mut self, commit: &str) -> Result<(), IndexError> {
        Ok(schema::set_meta(self.db.conn(), HEAD, commit)?)
    }

    /// Make commits durable at the write-ahead log's checkpoints only
    /// (`relaxed`), or at each commit again. An import is a transaction a
    /// commit, most of a few rows: syncing each to the disk cost a third of
    /// it. A power cut in between loses the last commits read, whole (the
    /// log is atomic): the next import reads them again. Restored before
    /// the table snapshot is written, whose commits must be durable first.
    pub fn relax_durability(&mut self, relaxed: bool) -> Result<(), IndexError> {
        let mode = if relaxed { "NORMAL" } else { "FULL" };
        Ok(self
            .db
            .conn()
            .execute_batch(&format!("PRAGMA synchronous = {mode};"))?)
    }

    /// Forget the history read (HEAD no longer descends from the last
    /// commit read: history rewritten), so the next import starts again.
    pub fn forget_history_head(&mut self) -> Result<(), IndexError> {
        self.db
            .conn()
            .execute("DELETE FROM meta WHERE key = ?1", [HEAD])?;
        Ok(())
    }

    /// Where the index's versions come from: the one recorded, else
    /// `asked` (recorded now). An index that holds versions and records
    /// none was built from the folder, before lineage read histories.
    pub fn settle_source(&mut self, asked: Source) -> Result<Source, IndexError> {
        let held = match self.db.meta(HISTORY)?.as_deref() {
            Some("git") => Some(Source::Git),
            Some(_) => Some(Source::Folder),
            None if self.versions > 0 => Some(Source::Folder),
            None => None,
        };
        match held {
            Some(s) => Ok(s),
            None => {
                schema::set_meta(self.db.conn(), HISTORY, asked.name())?;
                Ok(asked)
            }
        }
    }
}
