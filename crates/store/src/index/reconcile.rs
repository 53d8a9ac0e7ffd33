//! Bringing the index up to the folder (docs/formats.md §2): files whose size and
//! mtime are unchanged are not read; changed ones are read and hashed; the
//! same content only updates the stat, other content is a new version, later
//! than everything, whose outcome the caller's origin pass gives (the index
//! numbers and stores it, it runs no algorithm); a file that is
//! gone (or no longer a document) has its last version marked deleted and
//! kept as an origin. A gone path whose file turns up under a new path (the
//! same file identity, or the same content) is a rename: the new path takes
//! over its versions. A file that changes while it is read is left as it
//! was, to be read again when its writer is done.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::time::SystemTime;

use super::origins::CachedKeys;
use super::schema::{self, Current, NewVersion, SkipRow, Status};
use super::texts::{self, Packed};
use super::{Index, IndexError, mtime_ns};
use lineage_core::fingerprint::polynomial::Polynomial;
use lineage_core::fingerprint::{ShingleRoller, token_fps};
use lineage_origin::Outcome;
use lineage_origin::align::OriginKeys;
use lineage_source::Order;
use lineage_source::corpus::{read_text, text_of};
use lineage_source::{FileEntry, SkipReason, Walk};

/// Files read and processed per transaction: a crash loses at most one batch.
const BATCH_FILES: usize = 128;
const BATCH_BYTES: u64 = 32 << 20;

/// What a sync did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Files whose content was read (binary ones included).
    pub files_read: u64,
    /// New versions recorded (a new document's first included).
    pub new_versions: u64,
    /// Read, same content: only size and mtime updated.
    pub touched: u64,
    /// A deleted file back with its last content: live again, no new version.
    pub revived: u64,
    /// Live documents whose file is gone: now deleted.
    pub deleted: u64,
    /// Files found under a new path: their versions moved with them.
    pub renamed: u64,
    /// Not read: size and mtime as recorded.
    pub unchanged: u64,
}

impl Report {
    /// Add `other`'s counts to this one's (the syncs of an import).
    pub fn add(&mut self, other: &Report) {
        self.files_read += other.files_read;
        self.new_versions += other.new_versions;
        self.touched += other.touched;
        self.revived += other.revived;
        self.deleted += other.deleted;
        self.renamed += other.renamed;
        self.unchanged += other.unchanged;
    }
}

/// What happened to one file, for a caller that reports changes as they
/// come (the watcher).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// A new version, with its outcome and its k-shingle keys in document
    /// order (what a near-duplicate sketch is made of: handed on, so nobody
    /// reads back what was just written).
    Version {
        /// The document's path.
        path: String,
        /// Its number among the document's versions, from 1.
        version: u32,
        /// What the origin pass found for it.
        outcome: Outcome,
        /// Its k-shingle keys, in document order.
        keys: Vec<u64>,
    },
    /// Its last version is live again.
    Revived {
        /// The document's path.
        path: String,
        /// The id of the version live again.
        id: u32,
    },
    /// Left out, with the reason (docs/formats.md §1).
    Skipped {
        /// The file's path.
        path: String,
        /// Why it was left out (`binary`, `too large (…)`, …).
        reason: String,
    },
    /// Its file is gone: the document is deleted, its versions stay in
    /// the history.
    Deleted {
        /// The document's path.
        path: String,
    },
    /// `from`'s file is now `to`; its versions (`id`: the latest) moved with
    /// it, numbered after any `to` already had. A changed content follows
    /// as a [`Change::Version`].
    Renamed {
        /// The old path.
        from: String,
        /// The new path.
        to: String,
        /// The id of the latest version.
        id: u32,
    },
}

/// What a walk speaks for: within it, a path not found is gone.
#[derive(Debug, Default)]
pub struct Scope<'a> {
    /// Only these paths (a watcher's targeted stat); `None`: the whole root.
    pub paths: Option<&'a [String]>,
    /// Files being written: neither read nor gone until their writer is done.
    pub held: HashSet<String>,
    /// Of `held`, the paths found gone and held back because a file being
    /// written may be where they went. A file of this sync with one's
    /// identity (or content) is its move; the others wait.
    pub held_gone: HashSet<String>,
}

/// A sync under way (see [`Index::begin_sync`]).
#[derive(Debug)]
pub struct Syncing {
    /// Files to read, in processing order; the first `done` are read.
    read: Vec<FileEntry>,
    done: usize,
    max_file_size: u64,
    renames: Renames,
    /// What the sync did so far.
    pub report: Report,
    /// Changes the stat found, handed out with the first step.
    found: Vec<Change>,
    finished: bool,
    /// The commit (its number, [`Index::put_commit`]) the files are read
    /// from: a repository's history read as versions.
    commit: Option<i64>,
}

/// The work a walk implies, decided from the stat alone.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Plan {
    /// Files to read, in processing order.
    pub read: Vec<FileEntry>,
    /// Live paths that are no longer documents: mark their versions deleted.
    pub gone: Vec<String>,
    /// Live paths gone but held back (`Scope::held_gone`): a file read may
    /// be one of them moved; none is deleted here.
    pub waiting: Vec<String>,
    /// Skip rows to write (left out by the walk, or too large).
    pub skips: Vec<(String, SkipRow)>,
    /// Skip rows of paths no longer left out.
    pub(crate) stale_skips: Vec<String>,
    pub unchanged: u64,
}

/// Compare a walk with the index's state. Outside `scope`, absence says
/// nothing; files it holds are left as they are. With `keep_texts`, a live
/// document whose text was never stored is read for it.
pub(crate) fn plan(
    walk: Walk,
    scope: &Scope,
    current: &HashMap<String, Current>,
    skipped: &HashMap<String, SkipRow>,
    max_file_size: u64,
    order: Order,
    keep_texts: bool,
) -> Plan {
    let paths: Option<HashSet<&str>> = scope.paths.map(|s| s.iter().map(String::as_str).collect());
    let in_scope =
        |path: &str| !scope.held.contains(path) && paths.as_ref().is_none_or(|s| s.contains(path));
    let mut p = Plan::default();
    let mut documents = HashSet::with_capacity(walk.files.len());
    let mut still_skipped = HashSet::new();
    let mut skip = |p: &mut Plan, path: String, row: SkipRow| {
        still_skipped.insert(path.clone());
        if skipped.get(&path) != Some(&row) {
            p.skips.push((path, row));
        }
    };
    for f in walk.files {
        if scope.held.contains(&f.path) {
            continue;
        }
        let m = mtime_ns(f.mtime);
        if f.size > max_file_size {
            let reason = SkipReason::TooLarge {
                size: f.size,
                max: max_file_size,
            };
            let row = SkipRow {
                reason: reason.to_string(),
                binary: false,
                size: Some(f.size),
                mtime_ns: Some(m),
            };
            skip(&mut p, f.path, row);
            continue;
        }
        let same_stat =
            |size: Option<u64>, mtime: Option<i64>| size == Some(f.size) && mtime == Some(m);
        // The same file (identity), with the same size, mtime and status
        // change time: a rewrite that puts size and mtime back (`cp -p`,
        // `tar x`, `rsync -t`) moves the last or the first.
        if current.get(&f.path).is_some_and(|c| {
            c.status == Status::Live
                && same_stat(Some(c.size), Some(c.mtime_ns))
                && c.ctime_ns.is_none_or(|t| t == f.ctime_ns)
                && (c.file_id == 0 || c.file_id == f.file_id)
                && !(keep_texts && c.text_never_kept)
        }) {
            p.unchanged += 1;
            documents.insert(f.path);
            continue;
        }
        if let Some(s) = skipped.get(&f.path)
            && s.binary
            && same_stat(s.size, s.mtime_ns)
        {
            p.unchanged += 1;
            skip(&mut p, f.path, s.clone());
            continue;
        }
        documents.insert(f.path.clone());
        p.read.push(f);
    }
    for s in walk.skipped {
        let row = SkipRow {
            reason: s.reason.to_string(),
            binary: false,
            size: None,
            mtime_ns: None,
        };
        skip(&mut p, s.path, row);
    }
    let gone = |path: &str| {
        current.get(path).is_some_and(|c| c.status == Status::Live)
            && !documents.contains(path)
            && in_scope(path)
    };
    let stale =
        |path: &str| skipped.contains_key(path) && !still_skipped.contains(path) && in_scope(path);
    // A scope names the only paths that can be gone (a few, where the
    // index may hold 100,000).
    let (gone, stale_skips): (Vec<&str>, Vec<&str>) = match &paths {
        Some(paths) => (
            paths.iter().copied().filter(|p| gone(p)).collect(),
            paths.iter().copied().filter(|p| stale(p)).collect(),
        ),
        None => (
            current
                .keys()
                .map(String::as_str)
                .filter(|p| gone(p))
                .collect(),
            skipped
                .keys()
                .map(String::as_str)
                .filter(|p| stale(p))
                .collect(),
        ),
    };
    p.gone = gone.into_iter().map(str::to_string).collect();
    p.gone.sort();
    p.waiting = scope
        .held_gone
        .iter()
        .filter(|p| current.get(*p).is_some_and(|c| c.status == Status::Live))
        .cloned()
        .collect();
    p.waiting.sort();
    p.stale_skips = stale_skips.into_iter().map(str::to_string).collect();
    p.stale_skips.sort();
    lineage_source::sort(&mut p.read, order);
    p
}

/// A file read for the index: its content hash, its token fingerprints
/// and, when they are to be kept, its bytes for the text store.
pub struct Content {
    hash: u64,
    fps: Vec<u64>,
    packed: Option<Packed>,
}

impl Content {
    /// Its token fingerprints, what the origin pass is prepared from.
    pub fn fps(&self) -> &[u64] {
        &self.fps
    }
}

/// Why a file read gives no document.
pub enum NotRead {
    /// Left out, with the reason.
    Skip(SkipReason),
    /// Its size or mtime moved while it was read: a writer is at work, and
    /// its next change (an event, or the next rescan's stat) reads it again.
    Changing,
}

/// Reads a sync's files (see [`Index::reader`]); shared by the threads
/// that read a batch.
pub struct Reader<'a> {
    poly: &'a Polynomial,
    current: &'a HashMap<String, Current>,
    keep_texts: bool,
    max_file_size: u64,
}

impl Reader<'_> {
    /// Read `f`, keeping its bytes for the text store when its content is
    /// new or one whose text the store never had.
    pub fn read(&self, f: &FileEntry) -> Result<Content, NotRead> {
        let read = read_text(f, self.max_file_size, |bytes, text| {
            self.digest(f, bytes, text)
        });
        let (len, hash, fps, packed) = read.map_err(NotRead::Skip)?;
        // The one stat that cannot be passed on: taken after the read, by
        // path (a file replaced under the name counts too), it tells
        // whether what was read is still what the walk's stat saw.
        let same = std::fs::symlink_metadata(&f.abs).is_ok_and(|m| {
            m.len() == f.size
                && m.modified().is_ok_and(|t| mtime_ns(t) == mtime_ns(f.mtime))
                && lineage_source::ctime_ns(&m) == f.ctime_ns
        });
        if !same || len != f.size {
            return Err(NotRead::Changing);
        }
        Ok(Content { hash, fps, packed })
    }

    /// [`Reader::read`] of `f`'s bytes read elsewhere (a blob of a
    /// repository's history: nothing to stat).
    pub fn read_bytes(
        &self,
        f: &FileEntry,
        bytes: Result<Vec<u8>, SkipReason>,
    ) -> Result<Content, NotRead> {
        let bytes = bytes.map_err(NotRead::Skip)?;
        let (_, hash, fps, packed) = text_of(f, &bytes, |bytes, text| self.digest(f, bytes, text));
        Ok(Content { hash, fps, packed })
    }

    /// A document's length, content hash, token fingerprints and, where the
    /// text store wants it, its packed bytes.
    fn digest(
        &self,
        f: &FileEntry,
        bytes: &[u8],
        text: &str,
    ) -> (u64, u64, Vec<u64>, Option<Packed>) {
        let hash = self.poly.fingerprint(bytes, 1);
        let keep = self.keep_texts && self.wants_text(f, hash);
        (
            bytes.len() as u64,
            hash,
            token_fps(self.poly, text).fps,
            keep.then(|| Packed::new(bytes)),
        )
    }

    /// Whether the text store wants the text of `f` with content `hash`:
    /// new content, or content whose text it never had.
    fn wants_text(&self, f: &FileEntry, hash: u64) -> bool {
        self.current
            .get(&f.path)
            .is_none_or(|c| c.hash != hash || c.text_never_kept || c.forgotten)
    }

    /// `c`, digested ahead ([`Digester`]), as [`Reader::read_bytes`] would
    /// have made it: its packed bytes dropped where the store has its text.
    pub fn settle(&self, f: &FileEntry, mut c: Content) -> Content {
        if c.packed.is_some() && !self.wants_text(f, c.hash) {
            c.packed = None;
        }
        c
    }
}

/// Digests bytes read ahead of their sync, on any thread, without the
/// index: an import digests the next commits' blobs while the pass takes
/// the last one's. The text is packed wherever the store keeps texts
/// ([`Reader::settle`] drops what it has).
#[derive(Clone)]
pub struct Digester {
    poly: Polynomial,
    keep_texts: bool,
}

impl Digester {
    /// `bytes`, read as `f`'s ([`Reader::read_bytes`]).
    pub fn digest(
        &self,
        f: &FileEntry,
        bytes: Result<Vec<u8>, SkipReason>,
    ) -> Result<Content, NotRead> {
        let bytes = bytes.map_err(NotRead::Skip)?;
        Ok(text_of(f, &bytes, |bytes, text| Content {
            hash: self.poly.fingerprint(bytes, 1),
            fps: token_fps(&self.poly, text).fps,
            packed: self.keep_texts.then(|| Packed::new(bytes)),
        }))
    }
}

/// Gone paths of one sync that a file read in it may turn out to be.
#[derive(Debug, Default)]
struct Renames {
    /// Gone paths not (yet) found under a new name; deleted at the end.
    gone: BTreeSet<String>,
    /// Gone paths held back (see `Plan::waiting`): taken like `gone`, but
    /// left as they are at the end.
    waiting: BTreeSet<String>,
    /// New path → the gone path whose file identity it has (size or mtime
    /// changed, so it is read: a rename, and a version if the content did).
    moved: HashMap<String, String>,
}

impl Renames {
    /// The gone path that `path`, read with content `hash`, was: the one
    /// with its file identity, else (`by_content`) one with the same content.
    fn take(
        &mut self,
        path: &str,
        hash: u64,
        by_content: bool,
        current: &HashMap<String, Current>,
    ) -> Option<String> {
        let from = self.moved.remove(path).or_else(|| {
            by_content
                .then(|| {
                    self.gone
                        .iter()
                        .chain(&self.waiting)
                        .find(|g| current.get(*g).is_some_and(|c| c.hash == hash))
                        .cloned()
                })
                .flatten()
        })?;
        self.claim(&from).then_some(from)
    }

    /// Take `from` as found under a new name: false if it was already.
    fn claim(&mut self, from: &str) -> bool {
        self.gone.remove(from) || self.waiting.remove(from)
    }
}

impl Syncing {
    /// The files of the next batch, in processing order (none once every
    /// file is read): as many as one transaction takes.
    pub fn batch(&self) -> &[FileEntry] {
        let rest = &self.read[self.done..];
        let mut n = 0;
        let mut bytes = 0;
        while n < rest.len() && n < BATCH_FILES && (n == 0 || bytes < BATCH_BYTES) {
            bytes += rest[n].size;
            n += 1;
        }
        &rest[..n]
    }

    /// Files read so far, of how many.
    pub fn read_so_far(&self) -> (u64, u64) {
        (self.done as u64, self.read.len() as u64)
    }

    /// The changes the stat found (skips, renames of files unchanged), the
    /// first time it is asked.
    pub fn take_found(&mut self) -> Vec<Change> {
        std::mem::take(&mut self.found)
    }

    /// Whether [`Index::finish`] has run: nothing is left to do.
    pub fn finished(&self) -> bool {
        self.finished
    }

    /// Stamp the new versions of this sync with commit `seq` (of
    /// [`Index::put_commit`]).
    pub fn from_commit(&mut self, seq: i64) {
        self.commit = Some(seq);
    }
}

/// A batch recorded but not committed (see [`Index::record`]): its new
/// versions wait for their outcomes.
pub struct Batch<'a> {
    /// The index folder, for a full disk's message.
    dir: &'a std::path::Path,
    tx: rusqlite::Transaction<'a>,
    /// The batch's changes in order, new versions as placeholders.
    slots: Vec<Slot>,
    new: Vec<Pending>,
    /// Versions in the log once the batch is in.
    through: u32,
    texts_total: &'a mut u64,
    history_budget: u64,
    poisoned: &'a mut bool,
}

/// A new version of a batch: `id`, made of the batch's `at`-th file read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pending {
    /// The new version's id in the log.
    pub id: u32,
    /// Its file's place among the batch's files read.
    pub at: usize,
}

enum Slot {
    Done(Change),
    Version { path: String, version: u32 },
}

impl<'a> Batch<'a> {
    /// The new versions, in id order: what the origin pass processes.
    pub fn versions(&self) -> &[Pending] {
        &self.new
    }

    /// Earlier versions' shingle keys from their cached fingerprints,
    /// rolled by `roller` (the preparer's).
    pub fn earlier_keys<'b>(&'b self, roller: &'b ShingleRoller) -> impl OriginKeys + 'b {
        CachedKeys::new(&self.tx, roller)
    }

    /// Store each new version's outcome, in [`Batch::versions`]' order,
    /// with its shingle keys handed on in its [`Change::Version`], and
    /// commit the batch. The keys are not stored: they pass through here
    /// because only the batch knows where each new version falls among its
    /// changes (skips and renames between them), so the caller needs no
    /// second pairing.
    pub fn commit(self, done: Vec<(Outcome, Vec<u64>)>) -> Result<Vec<Change>, IndexError> {
        let dir = self.dir;
        // SAFETY: only the pointer is taken: it is read after the commit
        // consumed the transaction, while the connection it is of lives on
        // (the index's, which outlives the batch's borrow).
        let handle = unsafe { self.tx.handle() };
        self.raw_commit(done).map_err(|e| {
            // SAFETY: `handle` is of the index's connection, still open;
            // sqlite3_system_errno only reads its last error.
            let errno = unsafe { rusqlite::ffi::sqlite3_system_errno(handle) };
            e.disk_full(dir, errno)
        })
    }

    fn raw_commit(self, done: Vec<(Outcome, Vec<u64>)>) -> Result<Vec<Change>, IndexError> {
        assert_eq!(done.len(), self.new.len(), "one outcome per new version");
        let mut done = done.into_iter();
        let mut changes = Vec::with_capacity(self.slots.len());
        for slot in self.slots {
            changes.push(match slot {
                Slot::Done(c) => c,
                Slot::Version { path, version } => {
                    let (outcome, keys) = done.next().expect("one per new version");
                    schema::put_outcome(&self.tx, &outcome)?;
                    Change::Version {
                        path,
                        version,
                        outcome,
                        keys,
                    }
                }
            });
        }
        schema::set_meta(&self.tx, "outcomes_through", &self.through.to_string())?;
        texts::enforce(&self.tx, self.history_budget, self.texts_total)?;
        self.tx.commit()?;
        *self.poisoned = false;
        Ok(changes)
    }
}

/// Which gone path each file to read (by its place in `read`) was, by file
/// identity: the rule for an identity that several names share (a file and
/// its hard link moved with their folder; `ln a b` and `mv a c` in one
/// burst). Each gone path goes to one new name: the one with its file name
/// first, then the rest in path order; a name left over is a new document.
/// A file whose path already holds its identity is that path's own file,
/// edited (an edit through one name of a linked pair), never a move.
fn claims<'g>(
    read: &[FileEntry],
    gone: impl Iterator<Item = &'g String>,
    current: &HashMap<String, Current>,
) -> HashMap<usize, &'g str> {
    let mut gone_by_id: HashMap<u64, Vec<&'g str>> = HashMap::new();
    for g in gone {
        let id = current[g].file_id;
        if id != 0 {
            gone_by_id.entry(id).or_default().push(g.as_str());
        }
    }
    let mut new_by_id: HashMap<u64, Vec<usize>> = HashMap::new();
    for (at, f) in read.iter().enumerate() {
        let own = current
            .get(&f.path)
            .is_some_and(|c| c.status == Status::Live && c.file_id == f.file_id);
        if !own && gone_by_id.contains_key(&f.file_id) {
            new_by_id.entry(f.file_id).or_default().push(at);
        }
    }
    let file_name = |p: &str| p.rsplit('/').next().unwrap_or(p).to_string();
    let mut claims = HashMap::new();
    for (id, mut new) in new_by_id {
        let mut gone = std::mem::take(gone_by_id.get_mut(&id).expect("an id of a gone path"));
        gone.sort_unstable();
        new.sort_unstable_by(|&a, &b| read[a].path.cmp(&read[b].path));
        // Same file name first (a folder moved), then path order.
        let mut left = Vec::new();
        for at in new {
            let name = file_name(&read[at].path);
            match gone.iter().position(|g| file_name(g) == name) {
                Some(i) => {
                    claims.insert(at, gone.remove(i));
                }
                None => left.push(at),
            }
        }
        for (at, g) in left.into_iter().zip(gone) {
            claims.insert(at, g);
        }
    }
    claims
}

impl Index {
    /// Start a sync: compare `walk` with the index (outside `scope`,
    /// absence says nothing; see `plan`). What the stat alone tells
    /// (skips, renames of files unchanged) is written now; the files to
    /// read are read a batch at a time ([`Syncing::batch`],
    /// [`Index::reader`], [`Index::record`]) and the sync ends with
    /// [`Index::finish`]. New files are processed in `order`.
    pub fn begin_sync(
        &mut self,
        walk: Walk,
        scope: &Scope,
        max_file_size: u64,
        order: Order,
    ) -> Result<Syncing, IndexError> {
        self.check_usable()?;
        let mut changes = Vec::new();
        let mut plan = plan(
            walk,
            scope,
            &self.current,
            &self.skipped,
            max_file_size,
            order,
            self.history_budget > 0,
        );
        fault_point(&plan.gone);
        let mut report = Report {
            unchanged: plan.unchanged,
            ..Report::default()
        };
        // Renames the stat tells: a gone path's file under a new name (a
        // path held back as gone too: the file being written that it waits
        // for may be another, as when `ln j j2` and `mv a a2` come together).
        let mut renames = Renames {
            gone: plan.gone.iter().cloned().collect(),
            waiting: plan.waiting.iter().cloned().collect(),
            moved: HashMap::new(),
        };
        let claims = claims(
            &plan.read,
            plan.gone.iter().chain(&plan.waiting),
            &self.current,
        );
        let mut unread = Vec::new();
        for (at, f) in std::mem::take(&mut plan.read).into_iter().enumerate() {
            match claims.get(&at) {
                Some(&from) => {
                    let c = &self.current[from];
                    if c.size == f.size && c.mtime_ns == mtime_ns(f.mtime) {
                        unread.push((from.to_string(), f));
                    } else {
                        renames.moved.insert(f.path.clone(), from.to_string());
                        plan.read.push(f);
                    }
                }
                None => plan.read.push(f),
            }
        }
        if !(unread.is_empty() && plan.skips.is_empty() && plan.stale_skips.is_empty()) {
            self.poisoned = true;
            let tx = self.db.transaction()?;
            for path in &plan.stale_skips {
                schema::delete_skipped(&tx, path)?;
                self.skipped.remove(path);
            }
            for (path, row) in &plan.skips {
                changes.push(Change::Skipped {
                    path: path.clone(),
                    reason: row.reason.clone(),
                });
                schema::put_skipped(&tx, path, row)?;
                self.skipped.insert(path.clone(), row.clone());
            }
            for (from, f) in unread {
                renames.claim(&from);
                let c = rename(&mut self.current, &tx, &from, &f.path)?;
                schema::touch(&tx, c.id, &stat(&f))?;
                // A move moves the status change time, and nothing else.
                self.current.get_mut(&f.path).expect("renamed").ctime_ns = Some(f.ctime_ns);
                report.renamed += 1;
                changes.push(Change::Renamed {
                    from,
                    to: f.path,
                    id: c.id,
                });
            }
            tx.commit()?;
            self.poisoned = false;
        }
        Ok(Syncing {
            read: plan.read,
            done: 0,
            max_file_size,
            renames,
            report,
            found: changes,
            finished: false,
            commit: None,
        })
    }

    /// What digests bytes ahead of their sync ([`Digester`]).
    pub fn digester(&self) -> Digester {
        Digester {
            poly: self.poly.clone(),
            keep_texts: self.history_budget > 0,
        }
    }

    /// What reads the files of `s` (on any thread).
    pub fn reader(&self, s: &Syncing) -> Reader<'_> {
        Reader {
            poly: &self.poly,
            current: &self.current,
            keep_texts: self.history_budget > 0,
            max_file_size: s.max_file_size,
        }
    }

    /// Record [`Syncing::batch`] of `s`, read as `read` (in its order), in
    /// one transaction: a new version, a stat update, a skip or a deletion
    /// each. New versions are numbered here and their outcomes stored by
    /// [`Batch::commit`]. The table snapshot is not written (see
    /// [`Index::checkpoint`]).
    pub fn record(
        &mut self,
        s: &mut Syncing,
        read: Vec<Result<Content, NotRead>>,
    ) -> Result<Batch<'_>, IndexError> {
        // Taken before: the batch returned keeps `self` borrowed.
        let dir = self.dir.clone();
        // SAFETY: only the pointer is taken, read below while the index's
        // connection it is of is open.
        let handle = unsafe { self.db.conn().handle() };
        self.raw_record(s, read).map_err(|e| {
            // SAFETY: `handle` is of the index's open connection;
            // sqlite3_system_errno only reads its last error.
            e.disk_full(&dir, unsafe { rusqlite::ffi::sqlite3_system_errno(handle) })
        })
    }

    fn raw_record(
        &mut self,
        s: &mut Syncing,
        read: Vec<Result<Content, NotRead>>,
    ) -> Result<Batch<'_>, IndexError> {
        self.check_usable()?;
        assert_eq!(
            read.len(),
            s.batch().len(),
            "the batch's files, read in order"
        );
        let n = read.len();
        let files = &s.read[s.done..s.done + n];
        let commit = s.commit;
        let report = &mut s.report;
        self.poisoned = true;
        let tx = self.db.transaction()?;
        let mut slots = Vec::new();
        let mut new = Vec::new();
        // When lineage saw this batch's new versions (their files' mtimes
        // say when they were written, maybe long before).
        let seen_ms = mtime_ns(SystemTime::now()).div_euclid(1_000_000);
        for (at, (f, r)) in files.iter().zip(read).enumerate() {
            let m = mtime_ns(f.mtime);
            let mut cur = self.current.get(&f.path).cloned();
            let doc = match r {
                Ok(doc) => doc,
                Err(NotRead::Changing) => continue,
                Err(NotRead::Skip(reason)) => {
                    if reason == SkipReason::Binary {
                        report.files_read += 1;
                    }
                    if reason == SkipReason::Vanished {
                        // Gone: nothing to list next time.
                        if self.skipped.remove(&f.path).is_some() {
                            schema::delete_skipped(&tx, &f.path)?;
                        }
                    } else {
                        let row = SkipRow {
                            reason: reason.to_string(),
                            binary: reason == SkipReason::Binary,
                            size: Some(f.size),
                            mtime_ns: Some(m),
                        };
                        schema::put_skipped(&tx, &f.path, &row)?;
                        self.skipped.insert(f.path.clone(), row);
                        slots.push(Slot::Done(Change::Skipped {
                            path: f.path.clone(),
                            reason: reason.to_string(),
                        }));
                    }
                    if let Some(c) = cur.filter(|c| c.status == Status::Live) {
                        schema::set_status(&tx, c.id, Status::Deleted)?;
                        self.current.get_mut(&f.path).expect("current").status = Status::Deleted;
                        report.deleted += 1;
                        slots.push(Slot::Done(Change::Deleted {
                            path: f.path.clone(),
                        }));
                    }
                    continue;
                }
            };
            report.files_read += 1;
            if self.skipped.remove(&f.path).is_some() {
                schema::delete_skipped(&tx, &f.path)?;
            }
            // A gone path's file found here takes that path's versions: by
            // its identity (a move, over a live file too), or by its content
            // where no live document is here (a copy and delete, polling).
            let live_here = cur.as_ref().is_some_and(|c| c.status == Status::Live);
            let mut renamed = false;
            if let Some(from) = s.renames.take(&f.path, doc.hash, !live_here, &self.current) {
                let c = rename(&mut self.current, &tx, &from, &f.path)?;
                report.renamed += 1;
                slots.push(Slot::Done(Change::Renamed {
                    from,
                    to: f.path.clone(),
                    id: c.id,
                }));
                cur = Some(c);
                renamed = true;
            }
            if let Some(c) = cur.as_ref().filter(|c| c.hash == doc.hash && !c.forgotten) {
                schema::touch(&tx, c.id, &stat(f))?;
                if let Some(seq) = commit.filter(|_| c.status == Status::Live) {
                    // Saved in the work tree before it was committed: the
                    // version is the commit's (a version read from an
                    // earlier commit keeps that one).
                    schema::stamp_unstamped(&tx, c.id, seq)?;
                }
                // Read only for the text store (an index of an older lineage).
                let for_text = c.text_never_kept && c.status == Status::Live && !renamed;
                if let Some(p) = doc.packed.as_ref().filter(|_| c.text_never_kept) {
                    self.texts_total += texts::put(&tx, c.id, p)?;
                }
                if c.status == Status::Deleted {
                    report.revived += 1;
                    slots.push(Slot::Done(Change::Revived {
                        path: f.path.clone(),
                        id: c.id,
                    }));
                } else if !renamed && !for_text {
                    report.touched += 1;
                }
                let e = self.current.get_mut(&f.path).expect("current");
                (e.size, e.mtime_ns, e.file_id, e.status) = (f.size, m, f.file_id, Status::Live);
                e.ctime_ns = Some(f.ctime_ns);
                e.text_never_kept &= doc.packed.is_none();
                continue;
            }
            let id = self.versions;
            let version = cur.as_ref().map_or(1, |c| c.version + 1);
            if let Some(c) = &cur {
                schema::set_status(&tx, c.id, Status::Replaced)?;
            }
            let v = NewVersion {
                id,
                path: &f.path,
                version,
                mtime_ns: m,
                size: f.size,
                hash: doc.hash,
                file_id: f.file_id,
                ctime_ns: f.ctime_ns,
                fps: &doc.fps,
                seen_ms,
            };
            schema::insert_version(&tx, &v)?;
            if let Some(seq) = commit {
                schema::stamp_version(&tx, id, seq)?;
            }
            if let Some(p) = &doc.packed {
                self.texts_total += texts::put(&tx, id, p)?;
            }
            self.versions += 1;
            self.last_hash = doc.hash;
            self.snapshot_stale = true;
            self.current.insert(
                f.path.clone(),
                Current {
                    id,
                    version,
                    size: f.size,
                    mtime_ns: m,
                    hash: doc.hash,
                    status: Status::Live,
                    file_id: f.file_id,
                    ctime_ns: Some(f.ctime_ns),
                    text_never_kept: doc.packed.is_none(),
                    forgotten: false,
                },
            );
            report.new_versions += 1;
            new.push(Pending { id, at });
            slots.push(Slot::Version {
                path: f.path.clone(),
                version,
            });
        }
        s.done += n;
        Ok(Batch {
            dir: &self.dir,
            tx,
            slots,
            new,
            through: self.versions,
            texts_total: &mut self.texts_total,
            history_budget: self.history_budget,
            poisoned: &mut self.poisoned,
        })
    }

    /// End the sync `s` once every file is read: the paths still gone are
    /// deleted (their last versions kept as origins).
    pub fn finish(&mut self, s: &mut Syncing) -> Result<Vec<Change>, IndexError> {
        let done = self.raw_finish(s);
        done.map_err(|e| e.disk_full(&self.dir, super::errno(self.db.conn())))
    }

    fn raw_finish(&mut self, s: &mut Syncing) -> Result<Vec<Change>, IndexError> {
        self.check_usable()?;
        s.finished = true;
        let mut changes = Vec::new();
        if !s.renames.gone.is_empty() {
            self.poisoned = true;
            let tx = self.db.transaction()?;
            for path in &s.renames.gone {
                let c = self.current.get_mut(path).expect("planned from current");
                schema::set_status(&tx, c.id, Status::Deleted)?;
                c.status = Status::Deleted;
                s.report.deleted += 1;
                changes.push(Change::Deleted { path: path.clone() });
            }
            tx.commit()?;
            self.poisoned = false;
        }
        Ok(changes)
    }
}

/// A test's fault (debug builds only): a panic where the path that
/// `LINEAGE_FAULT_GONE` names is found gone, as the state of issue 50's
/// first fault met it (an index and a folder that panic at every sync).
fn fault_point(gone: &[String]) {
    #[cfg(debug_assertions)]
    if let Some(p) = std::env::var_os("LINEAGE_FAULT_GONE")
        && gone.iter().any(|g| std::ffi::OsStr::new(g) == p)
    {
        panic!("a fault injected: {} is gone", p.to_string_lossy());
    }
    let _ = gone;
}

/// What the index records of `f`'s stat.
fn stat(f: &FileEntry) -> schema::Stat {
    schema::Stat {
        size: f.size,
        mtime_ns: mtime_ns(f.mtime),
        ctime_ns: f.ctime_ns,
        file_id: f.file_id,
    }
}

/// Move `from`'s versions to `to`, numbered after `to`'s own (whose latest,
/// live or deleted, is now replaced), and return `to`'s new latest version.
fn rename(
    current: &mut HashMap<String, Current>,
    tx: &rusqlite::Transaction,
    from: &str,
    to: &str,
) -> rusqlite::Result<Current> {
    let mut c = current.remove(from).expect("a gone path is current");
    let offset = match current.get(to) {
        Some(t) => {
            schema::set_status(tx, t.id, Status::Replaced)?;
            t.version
        }
        None => 0,
    };
    schema::rename(tx, from, to, offset)?;
    c.version += offset;
    c.status = Status::Live;
    current.insert(to.to_string(), c.clone());
    Ok(c)
}
