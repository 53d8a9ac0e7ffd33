//! A git repository's past as versions (docs/algorithms.md, "History"):
//! the first-parent chain of HEAD, oldest first, and for each commit the
//! pages under the root that it added, changed, renamed (git's rewrite
//! tracking at 50 % similarity, as `git diff -M`) or removed. Only reading:
//! gix with no network and no TLS; nothing in the repository is written.
//!
//! The root may be any folder of the work tree: commits are compared on the
//! root's own subtree, so a page moved in from outside it is new here and
//! one moved out is gone, as a walk of the root would see them.

use std::path::{Path, PathBuf};

use crate::{Filter, SkipReason};

/// Where a root's versions come from (config `history`, `--history`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// The repository's history where the root is in a git work tree, else
    /// the folder.
    #[default]
    Auto,
    /// The repository's first-parent history, then the files as they are.
    Git,
    /// The files as they are, a new version each time one changes.
    Folder,
}

impl std::str::FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Mode, String> {
        match s {
            "auto" => Ok(Mode::Auto),
            "git" => Ok(Mode::Git),
            "folder" => Ok(Mode::Folder),
            _ => Err(format!("unknown history {s:?} (auto, git or folder)")),
        }
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Mode::Auto => "auto",
            Mode::Git => "git",
            Mode::Folder => "folder",
        })
    }
}

/// A commit as answers name it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CommitInfo {
    /// The full object id, in hex.
    pub id: String,
    /// The author's name.
    pub author: String,
    /// The author time, seconds since the epoch.
    pub time: i64,
    /// The first line of the message.
    pub subject: String,
}

/// A blob of the repository, to read with [`Repo::blob`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlobId(gix::ObjectId);

impl BlobId {
    /// 64 bits of the object id: a stamp that changes with the content.
    pub fn stamp(&self) -> i64 {
        let b = self.0.as_bytes();
        i64::from_le_bytes(b[..8].try_into().unwrap_or([0; 8]))
    }
}

/// What one commit did to one page under the root, by path relative to
/// the root (`/`-separated).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Delta {
    /// Added or changed: its content now.
    Put {
        /// The page.
        path: String,
        /// Its blob.
        blob: BlobId,
        /// The blob's size in bytes.
        size: u64,
    },
    /// Renamed from `from` (perhaps changed too): the same page under a new
    /// name.
    Moved {
        /// The old name.
        from: String,
        /// The new name.
        path: String,
        /// Its blob.
        blob: BlobId,
        /// The blob's size in bytes.
        size: u64,
    },
    /// Removed (or no longer a page: a file turned into a link).
    Gone {
        /// The page.
        path: String,
    },
    /// A document by its name that is not read, and why (a symbolic link, a
    /// submodule, a Git LFS pointer).
    Skipped {
        /// The entry.
        path: String,
        /// Why.
        reason: SkipReason,
    },
}

/// Why a history cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// The root is in no git work tree.
    #[error("{} is not in a git repository", .0.display())]
    NotARepository(PathBuf),
    /// gix failed: a missing or corrupt object, an unreadable reference.
    #[error("cannot read the git history of {}: {why}", root.display())]
    Git {
        /// The root.
        root: PathBuf,
        /// What failed, with the object where one is named.
        why: String,
    },
}

/// The first-parent chain from HEAD back to a commit (or to the start).
#[derive(Debug, Default)]
pub struct Chain {
    /// The commits after the one stopped at, oldest first.
    pub commits: Vec<String>,
    /// Whether the chain reached the commit it was to stop at; false when it
    /// was asked for one that HEAD does not descend from (history
    /// rewritten).
    pub found: bool,
    /// Whether the chain ends at a shallow clone's boundary.
    pub shallow: bool,
}

/// A repository opened at a root inside its work tree.
pub struct Repo {
    repo: gix::ThreadSafeRepository,
    /// Handles to reuse: each keeps its pack's cache of delta bases, which
    /// a fresh handle a read would decompress again and again.
    handles: std::sync::Mutex<Vec<gix::Repository>>,
    /// What comparing commits keeps from one to the next.
    diffing: std::sync::Mutex<Diffing>,
    root: PathBuf,
    /// The root relative to the work tree, `/`-separated ("" at its top).
    prefix: String,
}

/// A root's subtree at a commit: its id and its bytes.
type Subtree = (gix::ObjectId, Vec<u8>);

/// What [`Repo::changes`] keeps between commits: the rewrite tracker's
/// blob cache (made once: making it reads the attributes and the index,
/// a fifth of the comparing), the tree walk's buffers, and the last
/// commit's subtree, the next commit's parent's.
#[derive(Default)]
struct Diffing {
    blobs: Option<gix::diff::blob::Platform>,
    state: gix::diff::tree::State,
    last: Option<(String, Option<Subtree>)>,
}

/// The first line of every Git LFS pointer file: a work tree without
/// `git lfs` holds these where the files would be, so the folder's reads
/// skip them too.
pub(crate) const LFS_POINTER: &[u8] = b"version https://git-lfs.github.com/spec/";

impl Repo {
    /// The repository whose work tree holds `root`, or None where there is
    /// none (a bare repository's folder is none either).
    pub fn discover(root: &Path) -> Result<Option<Repo>, HistoryError> {
        let repo = match gix::discover(root) {
            Ok(r) => r,
            Err(_) => return Ok(None),
        };
        let Some(work) = repo.workdir() else {
            return Ok(None);
        };
        let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let (work, at) = (canon(work), canon(root));
        let Ok(rel) = at.strip_prefix(&work) else {
            return Ok(None);
        };
        let prefix = crate::rel_path(&work, &work.join(rel));
        Ok(Some(Repo {
            repo: repo.into_sync(),
            handles: std::sync::Mutex::new(Vec::new()),
            diffing: std::sync::Mutex::new(Diffing::default()),
            root: root.to_path_buf(),
            prefix: if rel.as_os_str().is_empty() {
                String::new()
            } else {
                prefix
            },
        }))
    }

    /// A handle of this thread's for the time of `f`, taken from those
    /// kept (or made), and kept again after.
    fn with<T>(&self, f: impl FnOnce(&gix::Repository) -> T) -> T {
        let kept = self.handles.lock().map(|mut h| h.pop()).unwrap_or(None);
        let repo = kept.unwrap_or_else(|| self.repo.to_thread_local());
        let out = f(&repo);
        if let Ok(mut h) = self.handles.lock() {
            h.push(repo);
        }
        out
    }

    fn git(&self) -> impl Fn(&dyn std::fmt::Display) -> HistoryError + '_ {
        |why| HistoryError::Git {
            root: self.root.clone(),
            why: why.to_string(),
        }
    }

    /// HEAD's commit; None in an empty repository (HEAD unborn).
    pub fn head(&self) -> Result<Option<String>, HistoryError> {
        // A kept handle: a watcher asks at every tick.
        self.with(|repo| {
            let head = repo.head().map_err(|e| self.git()(&e))?;
            if head.is_unborn() {
                return Ok(None);
            }
            let id = repo.head_id().map_err(|e| self.git()(&e))?;
            Ok(Some(id.to_string()))
        })
    }

    /// The first-parent chain from `head` back to `stop` (exclusive; the
    /// whole chain where None), oldest first: 64 bytes a commit in memory (hex ids).
    pub fn chain(&self, head: &str, stop: Option<&str>) -> Result<Chain, HistoryError> {
        let repo = self.repo.to_thread_local();
        let id = oid(head).map_err(|e| self.git()(&e))?;
        let stop = stop.and_then(|s| oid(s).ok());
        let shallow: Vec<gix::ObjectId> = repo
            .shallow_commits()
            .map_err(|e| self.git()(&e))?
            .map(|c| c.iter().copied().collect())
            .unwrap_or_default();
        let mut chain = Chain::default();
        let mut ids = Vec::new();
        let mut at = Some(id);
        while let Some(id) = at {
            if Some(id) == stop {
                chain.found = true;
                break;
            }
            let commit = repo
                .find_commit(id)
                .map_err(|e| self.git()(&format_args!("commit {id}: {e}")))?;
            ids.push(id);
            if shallow.contains(&id) {
                chain.shallow = true;
                break;
            }
            at = commit.parent_ids().next().map(|p| p.detach());
        }
        ids.reverse();
        chain.commits = ids.iter().map(|i| i.to_string()).collect();
        Ok(chain)
    }

    /// Start `chain` at `since` (a revision git names, or a date
    /// `YYYY-MM-DD`, UTC: the first commit of the chain whose author time is
    /// that day or later): the commits before it dropped. A revision not on
    /// the chain, or a date after its last commit, is an error that names it.
    pub fn start_at(&self, chain: &mut Chain, since: &str) -> Result<(), HistoryError> {
        let at = match day(since) {
            Some(secs) => {
                let mut at = None;
                for (i, c) in chain.commits.iter().enumerate() {
                    if self.info(c)?.time >= secs {
                        at = Some(i);
                        break;
                    }
                }
                at.ok_or_else(|| self.git()(&format_args!("no commit on or after {since}")))?
            }
            None => {
                let repo = self.repo.to_thread_local();
                let id = repo
                    .rev_parse_single(since)
                    .map_err(|e| self.git()(&format_args!("--since {since}: {e}")))?
                    .object()
                    .map_err(|e| self.git()(&e))?
                    .peel_to_commit()
                    .map_err(|e| self.git()(&format_args!("--since {since}: {e}")))?
                    .id
                    .to_string();
                chain.commits.iter().position(|c| *c == id).ok_or_else(|| {
                    self.git()(&format_args!(
                        "--since {since} is not in the first-parent history of HEAD"
                    ))
                })?
            }
        };
        chain.commits.drain(..at);
        Ok(())
    }

    /// The commit `rev` names (any revision git names: a branch, a tag,
    /// `HEAD~3`, an id).
    pub fn resolve(&self, rev: &str) -> Result<String, HistoryError> {
        let repo = self.repo.to_thread_local();
        let named = |e: &dyn std::fmt::Display| self.git()(&format_args!("{rev}: {e}"));
        Ok(repo
            .rev_parse_single(rev)
            .map_err(|e| named(&e))?
            .object()
            .map_err(|e| named(&e))?
            .peel_to_commit()
            .map_err(|e| named(&e))?
            .id
            .to_string())
    }

    /// The pages under the root at `commit`, as [`Repo::changes`] takes
    /// them (`filter`), in path order.
    pub fn pages_at(&self, commit: &str, filter: &Filter) -> Result<Vec<String>, HistoryError> {
        // Its changes against nothing: every page it holds, each put.
        let all = self.with(|repo| {
            let mut guard = self.diffing.lock().unwrap_or_else(|p| p.into_inner());
            // Not the next commit's parent: a later import compares anew.
            guard.last = None;
            drop(guard);
            let out = self.changes_in(repo, None, commit, filter);
            if let Ok(mut d) = self.diffing.lock() {
                d.last = None;
            }
            out
        })?;
        Ok(all
            .into_iter()
            .filter_map(|d| match d {
                Delta::Put { path, .. } | Delta::Moved { path, .. } => Some(path),
                _ => None,
            })
            .collect())
    }

    /// The repository's tags, each as (its name without `refs/tags/`, the
    /// commit it names, peeled through annotated tags), by name. A tag
    /// that names no commit (a tree, a blob) or cannot be read is left
    /// out: a release is a commit.
    pub fn tags(&self) -> Result<Vec<(String, String)>, HistoryError> {
        self.with(|repo| {
            let refs = repo.references().map_err(|e| self.git()(&e))?;
            let mut out = Vec::new();
            for r in refs.tags().map_err(|e| self.git()(&e))? {
                let Ok(mut r) = r else { continue };
                let name = r.name().shorten().to_string();
                if let Ok(c) = r.peel_to_commit() {
                    out.push((name, c.id.to_string()));
                }
            }
            out.sort();
            Ok(out)
        })
    }

    /// Who wrote `commit`, when, and why (its subject).
    pub fn info(&self, commit: &str) -> Result<CommitInfo, HistoryError> {
        let repo = self.repo.to_thread_local();
        let id = oid(commit).map_err(|e| self.git()(&e))?;
        let c = repo
            .find_commit(id)
            .map_err(|e| self.git()(&format_args!("commit {id}: {e}")))?;
        let author = c.author().map_err(|e| self.git()(&e))?;
        let time = author.time().map(|t| t.seconds).unwrap_or(0);
        let name = author.name.to_string();
        let subject = c
            .message()
            .map(|m| m.summary().to_string())
            .unwrap_or_default();
        Ok(CommitInfo {
            id: id.to_string(),
            author: name,
            time,
            subject,
        })
    }

    /// What `commit` did to the pages under the root against `parent`
    /// (None: against nothing, the first commit read), in path order; pages
    /// are the entries `filter` takes, as the folder walk decides.
    pub fn changes(
        &self,
        parent: Option<&str>,
        commit: &str,
        filter: &Filter,
    ) -> Result<Vec<Delta>, HistoryError> {
        self.with(|repo| self.changes_in(repo, parent, commit, filter))
    }

    fn changes_in(
        &self,
        repo: &gix::Repository,
        parent: Option<&str>,
        commit: &str,
        filter: &Filter,
    ) -> Result<Vec<Delta>, HistoryError> {
        let mut guard = self.diffing.lock().unwrap_or_else(|p| p.into_inner());
        let diffing = &mut *guard;
        let old = match (parent, diffing.last.take()) {
            (Some(p), Some((c, tree))) if c == p => tree,
            (Some(p), _) => self.subtree(repo, p)?,
            (None, _) => None,
        };
        let new = self.subtree(repo, commit)?;
        diffing.last = Some((commit.to_string(), new.clone()));
        if old.as_ref().map(|t| t.0) == new.as_ref().map(|t| t.0) {
            return Ok(Vec::new());
        }
        let bad = |e: &dyn std::fmt::Display| self.git()(&format_args!("commit {commit}: {e}"));
        let blobs = match &mut diffing.blobs {
            Some(b) => b,
            none => none.insert(
                repo.diff_resource_cache_for_tree_diff()
                    .map_err(|e| bad(&e))?,
            ),
        };
        let mut opts =
            gix::diff::Options::default().with_rewrites(Some(gix::diff::Rewrites::default()));
        opts.track_path();
        let kind = repo.object_hash();
        fn bytes(t: &Option<Subtree>) -> &[u8] {
            t.as_ref().map_or(&[], |t| t.1.as_slice())
        }
        let mut changes = Vec::new();
        gix::diff::tree_with_rewrites(
            gix::objs::TreeRefIter::from_bytes(bytes(&old), kind),
            gix::objs::TreeRefIter::from_bytes(bytes(&new), kind),
            blobs,
            &mut diffing.state,
            &repo.objects,
            |change| {
                changes.push(change.into_owned());
                Ok(gix::diff::tree_with_rewrites::Action::Continue(()))
            },
            opts.into(),
        )
        .map_err(|e| bad(&e))?;
        // Unbounded otherwise: the blobs compared for renames.
        blobs.clear_resource_cache_keep_allocation();
        let page = |p: &gix::bstr::BStr| -> Option<String> {
            // A name that is not UTF-8 is a page too, named losslessly as
            // the walk names it (`name`).
            let p = crate::name::of_bytes(p).into_owned();
            let mut at = 0;
            // The walk leaves out an excluded folder with all below it.
            while let Some(i) = p[at..].find('/') {
                if filter.is_excluded(&p[..at + i]) {
                    return None;
                }
                at += i + 1;
            }
            (!filter.is_excluded(&p) && filter.is_document(&p)).then_some(p)
        };
        use gix::object::tree::diff::ChangeDetached as C;
        let mut out = Vec::new();
        let put = |out: &mut Vec<Delta>,
                   from: Option<String>,
                   path: String,
                   mode: gix::object::tree::EntryMode,
                   id|
         -> Result<(), HistoryError> {
            let d = match self.kind(repo, mode, id)? {
                Err(reason) => {
                    if let Some(from) = from {
                        out.push(Delta::Gone { path: from });
                    }
                    Delta::Skipped { path, reason }
                }
                Ok(size) => match from {
                    Some(from) => Delta::Moved {
                        from,
                        path,
                        blob: BlobId(id),
                        size,
                    },
                    None => Delta::Put {
                        path,
                        blob: BlobId(id),
                        size,
                    },
                },
            };
            out.push(d);
            Ok(())
        };
        for c in changes {
            match c {
                C::Addition {
                    location,
                    entry_mode,
                    id,
                    ..
                }
                | C::Modification {
                    location,
                    entry_mode,
                    id,
                    ..
                } => {
                    if entry_mode.is_tree() {
                        continue;
                    }
                    if let Some(path) = page(location.as_ref()) {
                        put(&mut out, None, path, entry_mode, id)?;
                    }
                }
                C::Deletion {
                    location,
                    entry_mode,
                    ..
                } => {
                    if entry_mode.is_tree() {
                        continue;
                    }
                    if let Some(path) = page(location.as_ref()) {
                        out.push(Delta::Gone { path });
                    }
                }
                C::Rewrite {
                    source_location,
                    location,
                    entry_mode,
                    id,
                    copy,
                    ..
                } => {
                    if entry_mode.is_tree() {
                        continue;
                    }
                    let from = page(source_location.as_ref());
                    let Some(path) = page(location.as_ref()) else {
                        if let (Some(from), false) = (from, copy) {
                            out.push(Delta::Gone { path: from });
                        }
                        continue;
                    };
                    // A page renamed from a name that is no page is a new
                    // page here.
                    put(&mut out, from.filter(|_| !copy), path, entry_mode, id)?;
                }
            }
        }
        out.sort_by(|a, b| a.path().cmp(b.path()));
        Ok(out)
    }

    /// The root's subtree at `commit`; None where the commit has no such
    /// folder.
    fn subtree(
        &self,
        repo: &gix::Repository,
        commit: &str,
    ) -> Result<Option<Subtree>, HistoryError> {
        let id = oid(commit).map_err(|e| self.git()(&e))?;
        let bad = |e: &dyn std::fmt::Display| self.git()(&format_args!("commit {id}: {e}"));
        let tree = repo
            .find_commit(id)
            .map_err(|e| bad(&e))?
            .tree()
            .map_err(|e| bad(&e))?;
        if self.prefix.is_empty() {
            return Ok(Some((tree.id, tree.data.clone())));
        }
        let Some(entry) = tree
            .lookup_entry_by_path(&self.prefix)
            .map_err(|e| bad(&e))?
        else {
            return Ok(None);
        };
        if !entry.mode().is_tree() {
            return Ok(None);
        }
        let object = entry.object().map_err(|e| bad(&e))?;
        Ok(object.try_into_tree().ok().map(|t| (t.id, t.data.clone())))
    }

    /// A page entry's size, or why it is not read (a link, a submodule, a
    /// Git LFS pointer). A missing or corrupt object is an error naming it:
    /// the commit is not read, so the index stays at the one before (a page
    /// left out would come back later, out of its order).
    fn kind(
        &self,
        repo: &gix::Repository,
        mode: gix::object::tree::EntryMode,
        id: gix::ObjectId,
    ) -> Result<Result<u64, SkipReason>, HistoryError> {
        if mode.is_link() {
            return Ok(Err(SkipReason::Symlink));
        }
        if mode.is_commit() {
            return Ok(Err(SkipReason::Submodule));
        }
        let bad = |e: &dyn std::fmt::Display| self.git()(&format_args!("object {id}: {e}"));
        let size = repo.find_header(id).map_err(|e| bad(&e))?.size();
        if size < 200 {
            let blob = repo.find_blob(id).map_err(|e| bad(&e))?;
            if blob.data.starts_with(LFS_POINTER) {
                return Ok(Err(SkipReason::LfsPointer));
            }
        }
        Ok(Ok(size))
    }

    /// The bytes of `blob`, at most `max` (as [`crate::read`] treats a file:
    /// too large, binary).
    pub fn blob(&self, blob: BlobId, max: u64) -> Result<Vec<u8>, SkipReason> {
        self.with(|repo| self.blob_of(repo, blob, max))
    }

    fn blob_of(
        &self,
        repo: &gix::Repository,
        blob: BlobId,
        max: u64,
    ) -> Result<Vec<u8>, SkipReason> {
        let b = repo
            .find_blob(blob.0)
            .map_err(|e| SkipReason::Unreadable(format!("object {}: {e}", blob.0)))?;
        let size = b.data.len() as u64;
        if size > max {
            return Err(SkipReason::TooLarge { size, max });
        }
        // The checks a file's bytes get (binary, a Git LFS pointer), the
        // same code.
        crate::read_checked(&mut b.data.as_slice(), size, max)
    }
}

impl Delta {
    /// The blob of a page put or moved.
    pub fn blob(&self) -> Option<BlobId> {
        match self {
            Delta::Put { blob, .. } | Delta::Moved { blob, .. } => Some(*blob),
            Delta::Gone { .. } | Delta::Skipped { .. } => None,
        }
    }

    /// The path the delta is about (the new name of a move).
    pub fn path(&self) -> &str {
        match self {
            Delta::Put { path, .. }
            | Delta::Moved { path, .. }
            | Delta::Gone { path }
            | Delta::Skipped { path, .. } => path,
        }
    }
}

/// Seconds since the epoch of the start of `YYYY-MM-DD` (UTC), if `s` is
/// one (days from a civil date: Hinnant's algorithm).
fn day(s: &str) -> Option<i64> {
    let mut parts = s.splitn(3, '-');
    let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
    if y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return None;
    }
    let (y, m, d): (i64, i64, i64) = (y.parse().ok()?, m.parse().ok()?, d.parse().ok()?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some((era * 146_097 + doe - 719_468) * 86_400)
}

fn oid(hex: &str) -> gix::Result<gix::ObjectId> {
    gix::ObjectId::from_hex(hex.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::day;

    #[test]
    fn a_day_is_the_start_of_its_utc_date_and_anything_else_is_none() {
        assert_eq!(day("1970-01-01"), Some(0));
        assert_eq!(day("2020-01-01"), Some(1_577_836_800));
        assert_eq!(day("2000-02-29"), Some(951_782_400));
        for s in [
            lineage_core::civil::date(1_700_000_000),
            lineage_core::civil::date(-86_400),
        ] {
            let secs = day(&s).unwrap();
            assert_eq!(lineage_core::civil::date(secs), s);
        }
        for s in [
            "v1.0",
            "HEAD~3",
            "2020-1-01",
            "2020-13-01",
            "20200101",
            "abcd-ef-gh",
        ] {
            assert_eq!(day(s), None, "{s}");
        }
    }
}
