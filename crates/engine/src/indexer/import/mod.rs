//! A repository's history read as versions (docs/algorithms.md, "History"):
//! each commit of HEAD's first-parent chain since the last one read is one
//! sync of the pages it touched, its blobs read in place of files and its
//! new versions stamped with it, so documents come in commit order (within
//! a commit by path) and a renamed page keeps its versions.
//!
//! A commit's pages go to the index as a walk of the paths it touched
//! (`Scope::paths`): each with git's stamps standing in for a file's stat
//! (the blob's id for the status change time, the author time for the
//! modification time, the identity of the page it was renamed from), so the
//! index's own rules decide what is new, renamed or gone. The last commit
//! whose pages are all recorded is kept: a stop between commits, or a kill,
//! resumes after it, and a commit half recorded is read again, its
//! recorded pages then unchanged.

use std::collections::HashMap;
use std::time::{Duration, SystemTime};

use lineage_core::fsio::xxh64::xxh64;
use lineage_source::history::{BlobId, CommitInfo, Delta, Mode, Repo};
use lineage_source::{FileEntry, Filter, Order, Skipped, Walk};
use lineage_store::index::{
    Content, Digester, IndexError, NotRead, Observer, Read, Reader, Report, Scope, Source, Status,
};

use super::{Indexer, Observed, Sink};

/// Commits compared and digested ahead of the pass: enough to keep the
/// second core busy, few enough that memory stays small.
const AHEAD: usize = 16;

/// Pages a commit may touch for its blobs to be digested ahead: a larger
/// commit (a first commit of a whole tree) is read by its sync, a batch at
/// a time, so that memory never holds a commit's pages at once.
const AHEAD_PAGES: usize = 64;

/// A commit compared with its parent ahead of the pass, its pages' blobs
/// digested (a commit of more than [`AHEAD_PAGES`] pages: none).
struct Ahead {
    commit: String,
    deltas: Vec<Delta>,
    info: CommitInfo,
    digested: HashMap<String, Result<Content, NotRead>>,
}

/// Compare each of `commits` with the one before (`parent` first), digest
/// the blobs of its pages and send it, in order, until all are sent, one
/// fails (sent too) or the receiver is gone.
fn read_ahead(
    repo: &Repo,
    commits: &[String],
    mut parent: Option<String>,
    filter: &Filter,
    max_file_size: u64,
    digester: &Digester,
    tx: &std::sync::mpsc::SyncSender<Result<Ahead, IndexError>>,
) {
    for commit in commits {
        let ahead = (|| -> Result<Ahead, IndexError> {
            let deltas = repo.changes(parent.as_deref(), commit, filter)?;
            let info = match deltas.is_empty() {
                true => CommitInfo::default(),
                false => repo.info(commit)?,
            };
            let mut digested = HashMap::new();
            let pages = deltas.iter().filter(|d| d.blob().is_some()).count();
            for d in deltas.iter().filter(|_| pages <= AHEAD_PAGES) {
                if let Some(blob) = d.blob() {
                    // A name is all a digest reads of its file (the format).
                    let f = FileEntry {
                        path: d.path().to_string(),
                        abs: Default::default(),
                        size: 0,
                        mtime: SystemTime::UNIX_EPOCH,
                        ctime_ns: 0,
                        file_id: 0,
                        links: 1,
                    };
                    let c = digester.digest(&f, repo.blob(blob, max_file_size));
                    digested.insert(f.path, c);
                }
            }
            Ok(Ahead {
                commit: commit.clone(),
                deltas,
                info,
                digested,
            })
        })();
        let failed = ahead.is_err();
        if tx.send(ahead).is_err() || failed {
            return;
        }
        parent = Some(commit.clone());
    }
}

/// What an import did.
#[derive(Debug, Default)]
pub struct Imported {
    /// Commits read (those that touched no page included).
    pub commits: u64,
    /// Commits that touched a page.
    pub changed: u64,
    /// What the syncs of those commits did, summed.
    pub report: Report,
    /// The history starts at a shallow clone's boundary.
    pub shallow: bool,
    /// The last commit read is no longer in HEAD's history (a force-push, a
    /// rebase): read again from the last commit both histories share.
    pub rewritten: bool,
    /// HEAD's commit; None in an empty repository.
    pub head: Option<String>,
}

impl Indexer {
    /// Bring the index up to its root's git history where its versions come
    /// from one (`mode`, asked; the index keeps the source it was first
    /// built from): the commits since the last one read. None where they
    /// come from the folder. The first import says so in one line, and how
    /// to read the folder alone. A first import starts at `since` where it
    /// is not empty (a revision or a date, [`Repo::start_at`]).
    pub fn read_history(
        &mut self,
        mode: Mode,
        since: &str,
        filter: &Filter,
        max_file_size: u64,
        obs: &mut dyn Observer,
    ) -> Result<Option<Imported>, IndexError> {
        self.read_history_to(mode, since, filter, max_file_size, &mut Observed(obs))
    }

    /// [`Indexer::read_history`], each commit's changes to `sink` as they
    /// come (the watcher applies them: a commit made or pulled while it
    /// watches).
    pub(crate) fn read_history_to(
        &mut self,
        mode: Mode,
        since: &str,
        filter: &Filter,
        max_file_size: u64,
        sink: &mut dyn Sink,
    ) -> Result<Option<Imported>, IndexError> {
        if self.history.is_none() {
            self.history = Some(self.settle_history(mode)?);
        }
        let repo = match self.history.take() {
            Some(Some(repo)) => repo,
            folder => {
                self.history = folder;
                return Ok(None);
            }
        };
        let announce = self.ix.history_head()?.is_none() && mode == Mode::Auto;
        let done = self
            .guarded(|me| me.import_unguarded(&repo, filter, max_file_size, announce, since, sink));
        self.history = Some(Some(repo));
        let done = done?;
        let obs = sink.observer();
        if done.rewritten {
            obs.notice("the history was rewritten since the last commit read (HEAD no longer descends from it): read again from the last commit both share");
        }
        if done.shallow && done.commits > 0 {
            obs.notice("a shallow clone: its history starts at the shallow boundary");
        }
        Ok(Some(done))
    }

    /// Where the index's versions come from, settled (the one it holds, or
    /// `mode`'s, recorded): its repository where that is a history.
    fn settle_history(&mut self, mode: Mode) -> Result<Option<Repo>, IndexError> {
        let root = self.root().to_path_buf();
        let repo = match mode {
            Mode::Folder => None,
            Mode::Auto | Mode::Git => Repo::discover(&root)?,
        };
        if mode == Mode::Git && repo.is_none() {
            return Err(lineage_source::history::HistoryError::NotARepository(root).into());
        }
        let asked = if repo.is_some() {
            Source::Git
        } else {
            Source::Folder
        };
        let held = self.ix.settle_source(asked)?;
        if mode != Mode::Auto && held != asked {
            return Err(IndexError::OtherHistory {
                dir: self.ix.dir().to_path_buf(),
                held,
                asked,
            });
        }
        Ok(repo.filter(|_| held == Source::Git))
    }

    /// Whether HEAD is at another commit than the last one read (a commit,
    /// a pull, a checkout): the watcher's tick asks, for a root whose
    /// repository's files it does not watch (a folder of the work tree).
    /// Two small reads (HEAD and its ref); false for a folder's index.
    /// (`failed`: a HEAD whose history could not be read, not asked again.)
    pub(crate) fn history_moved(&self, failed: Option<&str>) -> bool {
        let head = self.repo_head();
        head.is_some() && head.as_deref() != failed && head != self.ix.history_head().ok().flatten()
    }

    /// HEAD's commit where the index reads a repository's history.
    pub(crate) fn repo_head(&self) -> Option<String> {
        match &self.history {
            Some(Some(repo)) => repo.head().ok().flatten(),
            _ => None,
        }
    }

    /// Whether the index's versions come from a repository's history; None
    /// before [`Indexer::read_history`] first settled it.
    pub(crate) fn reads_history(&self) -> Option<bool> {
        self.history.as_ref().map(Option::is_some)
    }

    /// Read the commits of `repo` that the index has not read yet, oldest
    /// first, each as a new version of every page under the root it touched
    /// (`filter`: the walk's rules). An empty repository reads nothing.
    /// Stopped (the observer) between commits, the rest waits for the next
    /// import.
    pub fn import(
        &mut self,
        repo: &Repo,
        filter: &Filter,
        max_file_size: u64,
        obs: &mut dyn Observer,
    ) -> Result<Imported, IndexError> {
        self.guarded(|me| {
            me.import_unguarded(repo, filter, max_file_size, false, "", &mut Observed(obs))
        })
    }

    fn import_unguarded(
        &mut self,
        repo: &Repo,
        filter: &Filter,
        max_file_size: u64,
        announce: bool,
        since: &str,
        sink: &mut dyn Sink,
    ) -> Result<Imported, IndexError> {
        let mut done = Imported::default();
        let Some(head) = repo.head()? else {
            return Ok(done);
        };
        done.head = Some(head.clone());
        // The releases (a tag can come without a commit): the `release`
        // basis reads them.
        self.ix.set_tags(&repo.tags()?)?;
        let last = self.ix.history_head()?;
        if last.as_deref() == Some(head.as_str()) {
            return Ok(done);
        }
        let mut chain = repo.chain(&head, last.as_deref())?;
        let mut parent = last.clone();
        if last.is_none() && !since.is_empty() {
            // A history started later: its first commit's pages are all
            // first versions, compared against nothing.
            repo.start_at(&mut chain, since)?;
            chain.shallow = false;
        }
        if last.is_some() && !chain.found {
            // Rewritten: start after the newest commit of the new chain
            // that was read (its pages as they were then), or from the start.
            done.rewritten = true;
            let known = chain
                .commits
                .iter()
                .rposition(|c| self.ix.has_commit(c).unwrap_or(false));
            parent = known.map(|at| chain.commits[at].clone());
            chain.commits.drain(..known.map_or(0, |at| at + 1));
        }
        done.shallow = chain.shallow;
        let total = chain.commits.len() as u64;
        if announce && total > 0 {
            // The first import of a folder found in a work tree: what it
            // costs, and how to have the files alone.
            sink.observer().notice(&format!(
                "{} is in a git repository: reading its history, {total} commits, each commit's pages as new versions (--history folder reads only the files as they are)",
                self.root().display()
            ));
        }
        self.ix.relax_durability(true)?;
        let read = self.read_commits(
            repo,
            &chain.commits,
            parent,
            filter,
            max_file_size,
            sink,
            &mut done,
        );
        // Durable again before anything else is written; the last head
        // recorded with a full commit makes every earlier one durable too.
        self.ix.relax_durability(false)?;
        let last = read?;
        if let Some(last) = last {
            self.ix.set_history_head(&last)?;
        }
        sink.observer().progress("reading history", total, total);
        Ok(done)
    }

    /// Read `commits` after `parent` into the index, a sync each; the last
    /// commit read whose head is not recorded yet (one that touched no
    /// page: recording each of those would be a write for nothing). The
    /// commits are compared and their blobs digested on a thread of their
    /// own, [`AHEAD`] commits ahead of the pass, which takes them in order.
    #[allow(clippy::too_many_arguments)]
    fn read_commits(
        &mut self,
        repo: &Repo,
        commits: &[String],
        parent: Option<String>,
        filter: &Filter,
        max_file_size: u64,
        sink: &mut dyn Sink,
        done: &mut Imported,
    ) -> Result<Option<String>, IndexError> {
        let total = commits.len() as u64;
        let digester = self.ix.digester();
        std::thread::scope(|scope| {
            let (tx, rx) = std::sync::mpsc::sync_channel(AHEAD);
            scope.spawn(move || {
                read_ahead(repo, commits, parent, filter, max_file_size, &digester, &tx)
            });
            let mut unrecorded = None;
            for (n, ahead) in rx.iter().enumerate() {
                // Returning drops `rx`: the thread ends at its next commit.
                if sink.observer().stopped() {
                    return Err(IndexError::Stopped);
                }
                sink.observer().progress("reading history", n as u64, total);
                let ahead = ahead?;
                if ahead.deltas.is_empty() {
                    unrecorded = Some(ahead.commit);
                } else {
                    self.read_commit(repo, ahead, max_file_size, sink, done)?;
                    unrecorded = None;
                }
                done.commits += 1;
            }
            Ok(unrecorded)
        })
    }

    /// Record one commit read ahead: a sync of the pages it touched.
    fn read_commit(
        &mut self,
        repo: &Repo,
        ahead: Ahead,
        max_file_size: u64,
        sink: &mut dyn Sink,
        done: &mut Imported,
    ) -> Result<(), IndexError> {
        let Ahead {
            commit,
            deltas,
            info,
            digested,
        } = ahead;
        let seq = self.ix.put_commit(&info)?;
        let time = SystemTime::UNIX_EPOCH + Duration::from_secs(info.time.max(0) as u64);
        let mut skips = Vec::new();
        let (walk, paths, blobs) = self.walk_of(&deltas, &commit, time, &mut skips);
        for s in skips {
            sink.observer().notice(&s);
        }
        let scope = Scope {
            paths: Some(&paths),
            ..Scope::default()
        };
        let mut s = self
            .ix
            .begin_sync(walk, &scope, max_file_size, Order::Path)?;
        s.from_commit(seq);
        let digested = std::sync::Mutex::new(digested);
        let read = |r: &Reader, f: &FileEntry| -> Result<Content, NotRead> {
            let ahead = digested
                .lock()
                .map_or(None, |mut d| d.remove(f.path.as_str()));
            match ahead {
                Some(c) => c.map(|c| r.settle(f, c)),
                None => {
                    let blob = blobs
                        .get(f.path.as_str())
                        .copied()
                        .ok_or(NotRead::Changing)?;
                    r.read_bytes(f, repo.blob(blob, max_file_size))
                }
            }
        };
        self.drive_from(&mut s, sink, super::SPLIT_FILES, &read)?;
        done.report.add(&s.report);
        done.changed += 1;
        self.ix.set_history_head(&commit)?;
        Ok(())
    }

    /// The walk of the paths `deltas` touch, git's stamps for a file's
    /// stat; the paths it speaks for; each page's blob. A page skipped (a
    /// link, a submodule, a Git LFS pointer) is said in `skips`.
    fn walk_of<'d>(
        &self,
        deltas: &'d [Delta],
        commit: &str,
        time: SystemTime,
        skips: &mut Vec<String>,
    ) -> (Walk, Vec<String>, HashMap<&'d str, BlobId>) {
        let current = |path: &str| self.ix.current(path).filter(|c| c.status == Status::Live);
        let mut walk = Walk::default();
        let mut paths = Vec::with_capacity(deltas.len() + 1);
        let mut blobs = HashMap::new();
        for d in deltas {
            paths.push(d.path().to_string());
            let (path, blob, size, from) = match d {
                Delta::Put { path, blob, size } => (path, *blob, *size, None),
                Delta::Moved {
                    from,
                    path,
                    blob,
                    size,
                } => {
                    paths.push(from.clone());
                    (path, *blob, *size, current(from))
                }
                Delta::Gone { .. } => continue,
                Delta::Skipped { path, reason } => {
                    skips.push(format!(
                        "{path} (commit {}): skipped, {reason}",
                        commit.get(..7).unwrap_or(commit)
                    ));
                    walk.skipped.push(Skipped {
                        path: path.clone(),
                        reason: reason.clone(),
                    });
                    continue;
                }
            };
            blobs.insert(path.as_str(), blob);
            let mut f = FileEntry {
                path: path.clone(),
                abs: self.root().join(path),
                size,
                mtime: time,
                ctime_ns: blob.stamp(),
                // A new page's identity: its own, never another's.
                file_id: xxh64(format!("{commit}\0{path}").as_bytes()) | 1,
                links: 1,
            };
            if let Some(c) = from.or_else(|| current(path)) {
                // The page it was (renamed from, or this path's): the same
                // identity, so the index takes it for that page moved or
                // changed; an unchanged blob keeps that page's stat, so a
                // rename alone reads nothing.
                f.file_id = c.file_id;
                if c.ctime_ns == Some(f.ctime_ns) && c.size == size {
                    f.mtime =
                        SystemTime::UNIX_EPOCH + Duration::from_nanos(c.mtime_ns.max(0) as u64);
                }
            }
            walk.files.push(f);
        }
        (walk, paths, blobs)
    }
}

#[cfg(test)]
mod tests;
