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
/// The `meta` key of the repository's tags as last read: a line a tag,
/// `commit<TAB>name` (git forbids both in a ref's name).
const TAGS: &str = "history_tags";

/// A release: a tag of the repository on a commit the index read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Release {
    /// The tag's name, without `refs/tags/`.
    pub tag: String,
    /// The commit's number in the order the index read them (oldest
    /// first, as [`Index::put_commit`] numbers them).
    pub seq: i64,
    /// The commit's id, in hex.
    pub commit: String,
}

/// The releases `db` records, oldest commit first (tags of one commit by
/// name): its tags whose commit it read; none where it records no tags.
pub(super) fn releases(db: &schema::Db) -> Result<Vec<Release>, IndexError> {
    let Some(tags) = db.meta(TAGS)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for line in tags.lines() {
        let Some((commit, tag)) = line.split_once('\t') else {
            continue;
        };
        if let Some(seq) = schema::seq_of(db.conn(), commit)? {
            out.push(Release {
                tag: tag.to_string(),
                seq,
                commit: commit.to_string(),
            });
        }
    }
    out.sort_by(|a, b| (a.seq, &a.tag).cmp(&(b.seq, &b.tag)));
    Ok(out)
}

/// Every version's commit number (`version_commits`), by version id; none
/// in an index from before schema 10 opened read-only.
pub(super) fn stamps(db: &schema::Db) -> Result<Vec<(u32, i64)>, IndexError> {
    match schema::stamps(db.conn()) {
        Err(rusqlite::Error::SqliteFailure(_, Some(m))) if m.contains("no such table") => {
            Ok(Vec::new())
        }
        r => Ok(r?),
    }
}

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

    /// Record the repository's `tags` ([`lineage_source::history::Repo::tags`]):
    /// written only where they differ from those recorded, so a catch-up
    /// with no new tag writes nothing.
    pub fn set_tags(&mut self, tags: &[(String, String)]) -> Result<(), IndexError> {
        let text: String = tags.iter().map(|(n, c)| format!("{c}\t{n}\n")).collect();
        if self.db.meta(TAGS)?.unwrap_or_default() != text {
            schema::set_meta(self.db.conn(), TAGS, &text)?;
        }
        Ok(())
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
