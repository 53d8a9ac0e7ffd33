//! Watching a root: notify's OS events, debounced by notify-debouncer-full
//! (or lineage's own poller, `poll.rs`), reduced to what the engine needs —
//! which paths changed, or that only a full walk can tell.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use notify::{EventKind, RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};

use super::inclusion::{Kind, Rules, Verdict};
use super::{FileEntry, Filter, Walk, WalkOptions, gitignore, rel_path};

/// One debounced batch of file events.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Batch {
    /// These paths (absolute) changed; `rescan` when the OS says events
    /// were lost and only a full walk can tell what changed.
    Changed {
        /// The paths that changed, absolute.
        paths: Vec<PathBuf>,
        /// Only a full walk can tell what changed.
        rescan: bool,
    },
    /// The watch failed (events may be lost).
    Failed(Vec<String>),
}

/// A running watch; dropping it stops watching.
pub struct Watcher {
    backend: Backend,
    writers: Arc<Mutex<Writers>>,
}

enum Backend {
    Events(Tree),
    /// The poller runs until this is dropped.
    Poll {
        _stop: std::sync::mpsc::Sender<()>,
    },
}

/// OS events over the tree. notify watches a folder and all under it in
/// one call, and fails at the first sub-folder it may not watch (one not
/// readable): the whole root then went to timed rescans. Instead, such a
/// folder's ancestors are watched each on its own, every other sub-folder
/// with all under it, and the folders denied are retried
/// ([`Watcher::retry_denied`]).
struct Tree {
    debouncer: Debouncer<RecommendedWatcher, RecommendedCache>,
    /// Folders watched on their own: a folder made in one is watched by
    /// [`Watcher::adopt`] (notify adds those of recursive watches only).
    alone: HashSet<PathBuf>,
    /// Folders that may not be watched.
    denied: BTreeSet<PathBuf>,
}

impl Tree {
    /// Watch `dir` and all under it that may be watched.
    fn watch(&mut self, dir: &Path) -> notify::Result<()> {
        match self.debouncer.watch(dir, RecursiveMode::Recursive) {
            Ok(()) => return Ok(()),
            Err(e) if !is_denied(&e) => return Err(e),
            Err(_) => {}
        }
        // Part of the tree may be watched already (notify goes depth
        // first): let go of it, then go down a level at a time.
        let _ = self.debouncer.unwatch(dir);
        match self.debouncer.watch(dir, RecursiveMode::NonRecursive) {
            Ok(()) => {}
            Err(e) if is_denied(&e) => {
                self.denied.insert(dir.to_path_buf());
                return Ok(());
            }
            Err(e) => return Err(e),
        }
        let Ok(entries) = fs::read_dir(dir) else {
            // Watchable but not listable: as good as denied.
            let _ = self.debouncer.unwatch(dir);
            self.denied.insert(dir.to_path_buf());
            return Ok(());
        };
        self.alone.insert(dir.to_path_buf());
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                self.watch(&e.path())?;
            }
        }
        Ok(())
    }
}

fn is_denied(e: &notify::Error) -> bool {
    matches!(&e.kind, notify::ErrorKind::Io(io) if io.kind() == std::io::ErrorKind::PermissionDenied)
}

impl Watcher {
    /// Watch the folders among `paths` (an event's) made in a folder
    /// watched on its own, which notify does not add by itself.
    pub fn adopt(&mut self, paths: &[PathBuf]) {
        let Backend::Events(t) = &mut self.backend else {
            return;
        };
        for p in paths {
            if p.parent().is_some_and(|d| t.alone.contains(d))
                && !t.alone.contains(p)
                && fs::symlink_metadata(p).is_ok_and(|m| m.is_dir())
            {
                // One that fails has gone again (a denied one is kept in
                // `denied` and retried).
                let _ = t.watch(p);
            }
        }
    }

    /// Watch the folders that could not be watched (unreadable) and can be
    /// now; whether there were any (the caller reads what they hold). A
    /// folder gone is forgotten.
    pub fn retry_denied(&mut self) -> bool {
        let Backend::Events(t) = &mut self.backend else {
            return false;
        };
        let mut back = false;
        for dir in std::mem::take(&mut t.denied) {
            if !dir.is_dir() {
                continue;
            }
            // Denied again, it is back in `denied` (as are any folders
            // under it that still are).
            match t.watch(&dir) {
                Ok(()) if !t.denied.contains(&dir) => back = true,
                Ok(()) => {}
                Err(_) => {
                    t.denied.insert(dir);
                }
            }
        }
        back
    }

    /// Files being written (absolute paths): a walk leaves them alone until
    /// their writer closes them or goes quiet (then [`Watcher::released`]
    /// names them).
    pub fn held(&self) -> HashSet<PathBuf> {
        lock(&self.writers).held(Instant::now())
    }

    /// Hold back the files of a walk modified so recently that their writer
    /// may be at work (no event told us: they were written before the watch
    /// began, or in a folder it had not reached yet); released as any other.
    pub fn hold_recent(&self, files: &[FileEntry]) {
        let now = Instant::now();
        let wall = SystemTime::now();
        let mut w = lock(&self.writers);
        for f in files {
            let Ok(age) = wall.duration_since(f.mtime) else {
                continue;
            };
            if age < w.quiet && !w.open.contains_key(&f.abs) && being_written(&f.abs) != Some(false)
            {
                let at = now.checked_sub(age).unwrap_or(now);
                w.open.insert(f.abs.clone(), (at, at));
            }
        }
    }

    /// Of [`Watcher::held`], the paths held back as gone that are still
    /// gone (absolute): a file read meanwhile may be where one went.
    pub fn held_gone(&self) -> HashSet<PathBuf> {
        lock(&self.writers)
            .gone
            .keys()
            .filter(|p| p.symlink_metadata().is_err())
            .cloned()
            .collect()
    }

    /// When the next file held back is released for want of a close.
    pub fn next_release(&self) -> Option<Instant> {
        lock(&self.writers).next_release()
    }

    /// Hold `paths` (absolute), found gone, with the files being written,
    /// if any is: see `Writers::gone`.
    pub fn hold_gone(&self, paths: &[PathBuf]) {
        lock(&self.writers).hold_gone(paths, Instant::now());
    }

    /// Files whose writer went quiet without closing them: read them now.
    pub fn released(&self) -> Vec<PathBuf> {
        lock(&self.writers).take_released(Instant::now())
    }
}

fn lock(w: &Mutex<Writers>) -> std::sync::MutexGuard<'_, Writers> {
    w.lock().unwrap_or_else(|e| e.into_inner())
}

/// Watch `root` recursively, calling `each` with every debounced batch that
/// names a change (from notify's threads). `poll`: poll every `every`
/// instead of OS events.
pub fn start(
    root: &Path,
    poll: bool,
    debounce: Duration,
    every: Duration,
    mut each: impl FnMut(Batch) + Send + 'static,
) -> notify::Result<Watcher> {
    // Linux says when a writer closes a file: hold its path back until then,
    // so a file written in a burst or with pauses is not read half written.
    // Without closes (the poller), until it has not changed for a poll.
    let closes = !poll && cfg!(target_os = "linux");
    let quiet = if closes {
        QUIET_WRITE
    } else {
        every + debounce
    };
    let writers = Arc::new(Mutex::new(Writers::new(closes, quiet)));
    let shared = writers.clone();
    if poll {
        let stop = super::poll::start(root, every, move |d| {
            let now = Instant::now();
            let mut w = lock(&shared);
            // A new or changed file is held until it has not changed for a
            // poll; a rename is no write.
            w.wrote(&d.written, now);
            for p in d.moved.iter().chain(&d.gone) {
                w.open.remove(p);
            }
            let mut paths: Vec<PathBuf> = [d.written, d.moved, d.gone].concat();
            paths.retain(|p| !w.is_held(p, now));
            drop(w);
            paths.sort();
            if !paths.is_empty() {
                each(Batch::Changed {
                    paths,
                    rescan: false,
                });
            }
        })
        .map_err(|e| notify::Error::io(e).add_path(root.to_path_buf()))?;
        return Ok(Watcher {
            backend: Backend::Poll { _stop: stop },
            writers,
        });
    }
    let handler = move |r: DebounceEventResult| match r {
        Ok(events) => {
            let rescan = events.iter().any(|e| e.need_rescan());
            let now = Instant::now();
            let mut w = lock(&shared);
            let mut paths: Vec<PathBuf> = Vec::new();
            for e in events {
                if !changes_files(&e.event.kind) {
                    continue;
                }
                w.see(&e.event, now);
                paths.extend(e.event.paths);
            }
            paths.retain(|p| !w.is_held(p, now));
            drop(w);
            paths.sort();
            paths.dedup();
            if rescan || !paths.is_empty() {
                each(Batch::Changed { paths, rescan });
            }
        }
        Err(errors) => each(Batch::Failed(
            errors.iter().map(|e| e.to_string()).collect(),
        )),
    };
    let mut t = Tree {
        debouncer: new_debouncer(debounce, None, handler)?,
        alone: HashSet::new(),
        denied: BTreeSet::new(),
    };
    t.watch(root)?;
    if t.denied.contains(root) {
        return Err(
            notify::Error::io(std::io::ErrorKind::PermissionDenied.into())
                .add_path(root.to_path_buf()),
        );
    }
    Ok(Watcher {
        backend: Backend::Events(t),
        writers,
    })
}

/// Whether an event can change a document's content or existence. notify
/// asks inotify for open events too: our own walks and reads raise them,
/// and taking them for changes made the watcher walk forever. Metadata
/// events (chmod, touch) change no content.
fn changes_files(kind: &EventKind) -> bool {
    use notify::event::{AccessKind, AccessMode, ModifyKind};
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) | EventKind::Modify(ModifyKind::Metadata(_)) => false,
        _ => true,
    }
}

/// Files open for writing, from create/modify and close-write events.
struct Writers {
    /// Path → when its writing was first and last seen.
    open: HashMap<PathBuf, (Instant, Instant)>,
    /// The backend reports closes (else a file is held until quiet).
    closes: bool,
    /// A writer quiet this long is done, or has paused for good.
    quiet: Duration,
    /// Paths found gone while other files were held, and since when: held
    /// too, and released with the last held file, so that a file that went
    /// to a held one (`ln a b; rm a`: b is new, no write ever closes it)
    /// is seen as the move it is, not a deletion and a new page.
    gone: HashMap<PathBuf, Instant>,
}

/// A writer quiet this long without closing its file has paused or keeps it
/// open for good: read the file (a read that overlaps a write is thrown away
/// and retried, see `index::reconcile`). Without close events, a file is
/// held until it has not changed for a poll (the interval and the debounce).
pub(crate) const QUIET_WRITE: Duration = Duration::from_secs(5);
/// A file written without pause for this long is read anyway (a log).
pub(crate) const LONGEST_WRITE: Duration = Duration::from_secs(30);

impl Writers {
    fn new(closes: bool, quiet: Duration) -> Writers {
        Writers {
            open: HashMap::new(),
            closes,
            quiet,
            gone: HashMap::new(),
        }
    }

    fn see(&mut self, e: &notify::Event, now: Instant) {
        use notify::EventKind::{Access, Create, Modify, Remove};
        use notify::event::{AccessKind, AccessMode, CreateKind, ModifyKind};
        match e.kind {
            Create(CreateKind::File) | Modify(ModifyKind::Data(_) | ModifyKind::Any) => {
                self.wrote(&e.paths, now)
            }
            // The poller's sign of a write.
            Modify(ModifyKind::Metadata(_)) if !self.closes => self.wrote(&e.paths, now),
            Access(AccessKind::Close(AccessMode::Write))
            | Remove(_)
            | Modify(ModifyKind::Name(_)) => {
                for p in &e.paths {
                    self.open.remove(p);
                }
            }
            _ => {}
        }
    }

    fn wrote(&mut self, paths: &[PathBuf], now: Instant) {
        for p in paths {
            self.open.entry(p.clone()).or_insert((now, now)).1 = now;
        }
    }

    /// Hold `paths`, found gone, while any other file is held; false if
    /// none is (a deletion is a deletion).
    fn hold_gone(&mut self, paths: &[PathBuf], now: Instant) -> bool {
        let quiet = self.quiet;
        let any = self
            .open
            .values()
            .any(|&(first, last)| now < release_at(quiet, first, last));
        if any {
            for p in paths {
                self.gone.entry(p.clone()).or_insert(now);
            }
        }
        any
    }

    fn is_held(&self, p: &Path, now: Instant) -> bool {
        let quiet = self.quiet;
        self.open
            .get(p)
            .is_some_and(|&(first, last)| now < release_at(quiet, first, last))
    }

    fn held(&self, now: Instant) -> HashSet<PathBuf> {
        let quiet = self.quiet;
        self.open
            .iter()
            .filter(|&(_, &(first, last))| now < release_at(quiet, first, last))
            .map(|(p, _)| p.clone())
            .chain(self.gone.keys().cloned())
            .collect()
    }

    fn next_release(&self) -> Option<Instant> {
        let quiet = self.quiet;
        // With nothing else held (the last closed), the gone are due now.
        let wait = if self.open.is_empty() {
            Duration::ZERO
        } else {
            LONGEST_WRITE
        };
        let gone = self.gone.values().map(|&at| at + wait);
        self.open
            .values()
            .map(|&(first, last)| release_at(quiet, first, last))
            .chain(gone)
            .min()
    }

    fn take_released(&mut self, now: Instant) -> Vec<PathBuf> {
        let quiet = self.quiet;
        let mut out = Vec::new();
        self.open.retain(|p, &mut (first, last)| {
            let keep = now < release_at(quiet, first, last);
            if !keep {
                out.push(p.clone());
            }
            keep
        });
        // The gone go with the last held file (or after the longest write).
        let all = self.open.is_empty();
        self.gone.retain(|p, &mut at| {
            let keep = !all && now < at + LONGEST_WRITE;
            if !keep {
                out.push(p.clone());
            }
            keep
        });
        out.sort();
        out
    }
}

/// Let the watcher ask whether a file is still being written: it takes a
/// read lease, whose break the kernel signals with SIGIO, by default the end
/// of the process. A process setting, so the program calls it, first thing,
/// before it starts threads (the binary in `main`); without it a file
/// modified moments ago is held until quiet instead of asked.
pub fn ignore_lease_signal() {
    #[cfg(target_os = "linux")]
    // SAFETY: sets one signal's disposition to "ignore"; lineage uses SIGIO
    // for nothing else.
    unsafe {
        libc::signal(libc::SIGIO, libc::SIG_IGN);
    }
}

/// Whether this process ignores SIGIO, which a lease's break sends.
#[cfg(target_os = "linux")]
fn sigio_ignored() -> bool {
    // SAFETY: sigaction with a null new action only reads the current one
    // into a zeroed struct we own.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGIO, std::ptr::null(), &mut old) == 0
            && old.sa_sigaction == libc::SIG_IGN
    }
}

/// Whether some process has `path` open for writing: Linux refuses a read
/// lease on such a file. `None` where that cannot be asked (another OS, a
/// process that does not ignore SIGIO, a file system without leases, a file
/// of another user without CAP_LEASE).
fn being_written(path: &Path) -> Option<bool> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::OpenOptionsExt;
        // A writer opening the file while we hold the lease makes the kernel
        // send us SIGIO, whose default is to end the process: ask only when
        // the process ignores it (the binary does, first thing; a library
        // does not change a process's signals).
        if !sigio_ignored() {
            return None;
        }
        let f = fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
            .open(path)
            .ok()?;
        if !f.metadata().ok()?.is_file() {
            return None;
        }
        // SAFETY: fcntl on a descriptor we own, with integer arguments.
        let got = unsafe { libc::fcntl(f.as_raw_fd(), libc::F_SETLEASE, libc::F_RDLCK) };
        if got == 0 {
            // SAFETY: as above; gives the lease back before the file closes.
            unsafe { libc::fcntl(f.as_raw_fd(), libc::F_SETLEASE, libc::F_UNLCK) };
            return Some(false);
        }
        let e = std::io::Error::last_os_error().raw_os_error();
        (e == Some(libc::EAGAIN)).then_some(true)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = path;
        None
    }
}

/// When a file written from `first` to `last` is read without a close.
fn release_at(quiet: Duration, first: Instant, last: Instant) -> Instant {
    (last + quiet).min(first + LONGEST_WRITE)
}

/// Changed paths (absolute), each stat'ed once, without following a link:
/// the engine holds back those found gone ([`Stated::gone`]) and makes a
/// walk of the rest ([`stat_paths`]) from the same answer, so a changed
/// path costs one `stat` before it is read (the reader stats it once more,
/// after the read, to catch a file that changed meanwhile).
pub struct Stated(Vec<(PathBuf, std::io::Result<fs::Metadata>)>);

impl Stated {
    /// Stat each of `paths`.
    pub fn new(paths: impl IntoIterator<Item = PathBuf>) -> Stated {
        Stated(
            paths
                .into_iter()
                .map(|p| {
                    let meta = fs::symlink_metadata(&p);
                    (p, meta)
                })
                .collect(),
        )
    }

    /// The paths that could not be stat'ed: gone, as far as a reader can tell.
    pub fn gone(&self) -> Vec<PathBuf> {
        self.0
            .iter()
            .filter(|(_, meta)| meta.is_err())
            .map(|(p, _)| p.clone())
            .collect()
    }
}

/// The part of a walk that `paths` (absolute, under `root`) cover: their
/// documents as a [`Walk`] and the relative paths looked at (the scope within
/// which absence means deletion). `None` when only a full walk can tell: a
/// folder among the paths (created, moved or removed), a `.gitignore`, a
/// symbolic link, a path outside the root, links followed. `holds(prefix)`
/// tells whether indexed paths start with `prefix` (a removed folder).
pub fn stat_paths(
    root: &Path,
    paths: &Stated,
    filter: &Filter,
    opts: WalkOptions,
    holds: impl Fn(&str) -> bool,
) -> Option<(Walk, Vec<String>)> {
    if opts.follow_symlinks {
        return None;
    }
    let mut walk = Walk::default();
    let mut scope = Vec::with_capacity(paths.0.len());
    let mut folders = Folders {
        rules: Rules {
            root,
            filter,
            gitignore: opts.gitignore,
        },
        seen: HashMap::new(),
    };
    for (abs, meta) in &paths.0 {
        let rel_p = abs.strip_prefix(root).ok()?;
        if rel_p.as_os_str().is_empty() || abs.file_name()? == ".gitignore" {
            return None;
        }
        let rel = rel_path(root, abs);
        let meta = match meta {
            Ok(m) => Some(m),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(_) => return None,
        };
        match meta {
            // Gone: a deleted file, or a folder whose documents we know.
            None => {
                if holds(&format!("{rel}/")) {
                    return None;
                }
            }
            Some(m) if m.is_file() => {
                if folders.document(&rel, abs) {
                    walk.files.push(FileEntry {
                        path: rel.clone(),
                        abs: abs.clone(),
                        size: m.len(),
                        mtime: m.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                        ctime_ns: super::ctime_ns(m),
                        file_id: super::file_id(m),
                        links: super::links(m),
                    });
                }
            }
            Some(_) => return None,
        }
        scope.push(rel);
    }
    Some((walk, scope))
}

/// What a walk would decide about the folders of one batch's paths, each
/// folder's `.gitignore` read once however many paths lie below it.
struct Folders<'a> {
    rules: Rules<'a>,
    /// Folder → the matchers that apply inside it; None if it is left out.
    seen: HashMap<PathBuf, Option<gitignore::IgnoreStack>>,
}

impl Folders<'_> {
    /// Whether the walk would take the regular file at `abs` (under the
    /// root, named `rel`) as a document: not left out itself nor in a folder
    /// left out or linked (links are not followed).
    fn document(&mut self, rel: &str, abs: &Path) -> bool {
        let Some(dir) = abs.parent() else {
            return false;
        };
        self.folder(dir).is_some_and(|ignores| {
            self.rules.decide(rel, abs, Kind::File, &ignores) == Verdict::Document
        })
    }

    fn folder(&mut self, dir: &Path) -> Option<gitignore::IgnoreStack> {
        if let Some(known) = self.seen.get(dir) {
            return known.clone();
        }
        let root = self.rules.root;
        let found = if dir == root {
            let mut ignores = gitignore::IgnoreStack::default();
            if self.rules.gitignore {
                ignores.enter(dir, 0);
            }
            Some(ignores)
        } else {
            let parent = self.folder(dir.parent().expect("below the root"));
            parent.and_then(|mut ignores| {
                // Only a link is told apart: a folder gone meanwhile is taken
                // for the folder it was.
                let kind = if fs::symlink_metadata(dir).is_ok_and(|m| m.is_symlink()) {
                    Kind::Link
                } else {
                    Kind::Folder
                };
                let rel = rel_path(root, dir);
                if self.rules.decide(&rel, dir, kind, &ignores) != Verdict::Folder {
                    return None;
                }
                if self.rules.gitignore {
                    // Depth only orders the stack; each folder has its own copy.
                    let depth = dir.components().count();
                    ignores.enter(dir, depth);
                }
                Some(ignores)
            })
        };
        self.seen.insert(dir.to_path_buf(), found.clone());
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lineage_testing::TempDir;

    /// The tree below, named by its canonical path.
    fn root(tag: &str) -> TempDir {
        let mut t = TempDir::new(&format!("stat-{tag}"));
        for (rel, text) in [
            ("a.md", "a"),
            ("notes.bin", "x"),
            ("ignored.md", "i"),
            (".hidden/h.md", "h"),
            ("sub/b.md", "b"),
            ("sub/.gitignore", "b2.md\n"),
            ("sub/b2.md", "b2"),
            (".gitignore", "ignored.md\n"),
        ] {
            t.write(rel, text);
        }
        t.0 = fs::canonicalize(&t.0).unwrap();
        t
    }

    fn stat(r: &TempDir, rels: &[&str], holds: bool) -> Option<(Vec<String>, Vec<String>)> {
        let paths: Vec<PathBuf> = rels.iter().map(|p| r.0.join(p)).collect();
        let (walk, scope) = stat_paths(
            &r.0,
            &Stated::new(paths),
            &Filter::default_patterns(),
            WalkOptions::default(),
            |_| holds,
        )?;
        Some((walk.files.into_iter().map(|f| f.path).collect(), scope))
    }

    #[test]
    fn files_are_documents_as_a_walk_would_say() {
        let r = root("files");
        let (files, scope) = stat(
            &r,
            &[
                "a.md",
                "notes.bin",
                "ignored.md",
                ".hidden/h.md",
                "sub/b.md",
                "sub/b2.md",
            ],
            false,
        )
        .unwrap();
        assert_eq!(files, vec!["a.md", "sub/b.md"]);
        assert_eq!(scope.len(), 6);
        // Without .gitignore handling the ignored ones are documents.
        let paths: Vec<PathBuf> = ["ignored.md", "sub/b2.md"]
            .iter()
            .map(|p| r.0.join(p))
            .collect();
        let opts = WalkOptions {
            gitignore: false,
            follow_symlinks: false,
        };
        let paths = Stated::new(paths);
        let (walk, _) =
            stat_paths(&r.0, &paths, &Filter::default_patterns(), opts, |_| false).unwrap();
        assert_eq!(walk.files.len(), 2);
    }

    #[test]
    fn a_deleted_file_is_in_scope_and_absent() {
        let r = root("gone");
        let (files, scope) = stat(&r, &["gone.md"], false).unwrap();
        assert!(files.is_empty());
        assert_eq!(scope, vec!["gone.md"]);
    }

    #[test]
    fn folders_ignore_files_and_strangers_need_a_full_walk() {
        let r = root("full");
        assert_eq!(stat(&r, &["sub"], false), None, "a folder");
        assert_eq!(stat(&r, &["sub/.gitignore"], false), None);
        assert_eq!(
            stat(&r, &["old-folder"], true),
            None,
            "a removed folder we knew"
        );
        assert!(
            stat(&r, &["old-folder"], false).is_some(),
            "a removed stranger"
        );
        let outside = stat_paths(
            &r.0,
            &Stated::new([std::env::temp_dir()]),
            &Filter::default_patterns(),
            WalkOptions::default(),
            |_| false,
        );
        assert!(outside.is_none());
        let follow = WalkOptions {
            gitignore: true,
            follow_symlinks: true,
        };
        let a = Stated::new([r.0.join("a.md")]);
        assert!(stat_paths(&r.0, &a, &Filter::default_patterns(), follow, |_| false).is_none());
    }
}

#[cfg(test)]
mod writer_tests {
    use super::*;
    use notify::event::{AccessKind, AccessMode, CreateKind, DataChange, ModifyKind};
    use notify::{Event, EventKind};

    fn ev(kind: EventKind, p: &str) -> Event {
        Event::new(kind).add_path(PathBuf::from(p))
    }

    #[test]
    fn a_path_gone_while_another_is_written_waits_for_it() {
        let t0 = Instant::now();
        let mut w = Writers::new(true, QUIET_WRITE);
        let (a, b) = (PathBuf::from("/r/a.md"), PathBuf::from("/r/b.md"));
        // Nothing held: a deletion is a deletion.
        assert!(!w.hold_gone(std::slice::from_ref(&a), t0));
        assert!(w.held(t0).is_empty());
        // b.md is new (a link: no write to close it), then a.md goes.
        w.see(&ev(EventKind::Create(CreateKind::File), "/r/b.md"), t0);
        assert!(w.hold_gone(std::slice::from_ref(&a), t0));
        assert_eq!(w.held(t0), HashSet::from([a.clone(), b.clone()]));
        assert!(w.take_released(t0).is_empty());
        // Released together, when b.md is.
        let later = t0 + QUIET_WRITE;
        assert_eq!(w.next_release(), Some(later));
        assert_eq!(w.take_released(later), vec![a.clone(), b.clone()]);
        assert!(w.held(later).is_empty());
        // Closed instead: the gone are due at once, not after a wait.
        w.see(&ev(EventKind::Create(CreateKind::File), "/r/b.md"), later);
        assert!(w.hold_gone(std::slice::from_ref(&a), later));
        w.see(
            &ev(
                EventKind::Access(AccessKind::Close(AccessMode::Write)),
                "/r/b.md",
            ),
            later,
        );
        assert_eq!(w.next_release(), Some(later));
        assert_eq!(w.take_released(later), vec![a.clone()]);
        // A file written for ever does not keep a deletion back for ever.
        w.see(&ev(EventKind::Create(CreateKind::File), "/r/log.md"), later);
        assert!(w.hold_gone(std::slice::from_ref(&a), later));
        let end = later + LONGEST_WRITE;
        w.see(
            &ev(
                EventKind::Modify(ModifyKind::Data(DataChange::Any)),
                "/r/log.md",
            ),
            end,
        );
        assert!(w.take_released(end).contains(&a));
    }

    #[test]
    fn a_file_is_held_back_from_its_first_write_to_its_close() {
        let t0 = Instant::now();
        let mut w = Writers::new(true, QUIET_WRITE);
        w.see(&ev(EventKind::Create(CreateKind::File), "/r/a.md"), t0);
        w.see(
            &ev(
                EventKind::Modify(ModifyKind::Data(DataChange::Any)),
                "/r/b.md",
            ),
            t0,
        );
        assert!(w.is_held(Path::new("/r/a.md"), t0) && w.is_held(Path::new("/r/b.md"), t0));
        w.see(
            &ev(
                EventKind::Access(AccessKind::Close(AccessMode::Write)),
                "/r/a.md",
            ),
            t0,
        );
        assert!(!w.is_held(Path::new("/r/a.md"), t0));
        assert_eq!(w.held(t0), HashSet::from([PathBuf::from("/r/b.md")]));
        // A writer pausing less than QUIET_WRITE is still waited for.
        let pause = t0 + QUIET_WRITE - Duration::from_millis(1);
        assert!(w.is_held(Path::new("/r/b.md"), pause));
        assert!(w.take_released(pause).is_empty());
        // Quiet for longer: released once, by name.
        assert_eq!(w.next_release(), Some(t0 + QUIET_WRITE));
        let later = t0 + QUIET_WRITE;
        assert!(!w.is_held(Path::new("/r/b.md"), later));
        assert_eq!(w.take_released(later), vec![PathBuf::from("/r/b.md")]);
        assert_eq!(w.next_release(), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_file_open_for_writing_is_told_apart_from_one_closed() {
        let dir = lineage_testing::TempDir::new("lease");
        let p = dir.0.join("a.md");
        let writer = fs::File::create(&p).unwrap();
        // Not asked while a lease's break would end the process.
        assert_eq!(being_written(&p), None);
        ignore_lease_signal();
        assert_eq!(being_written(&p), Some(true));
        drop(writer);
        assert_eq!(being_written(&p), Some(false));
        // Readers do not count.
        let _reader = fs::File::open(&p).unwrap();
        assert_eq!(being_written(&p), Some(false));
    }

    #[test]
    fn without_close_events_a_file_is_held_until_quiet_for_a_poll() {
        use notify::event::MetadataKind;
        let t0 = Instant::now();
        let poll = Duration::from_secs(2);
        let mut w = Writers::new(false, poll);
        let mtime = EventKind::Modify(ModifyKind::Metadata(MetadataKind::WriteTime));
        w.see(&ev(mtime, "/r/a.md"), t0);
        w.see(&ev(mtime, "/r/a.md"), t0 + poll);
        assert!(w.is_held(Path::new("/r/a.md"), t0 + poll + poll / 2));
        assert_eq!(
            w.take_released(t0 + 2 * poll),
            vec![PathBuf::from("/r/a.md")]
        );
        // No close to wait for: a close event (none come) changes nothing.
        assert!(w.open.is_empty());
    }

    #[test]
    fn a_file_written_without_pause_is_released_after_the_longest_write() {
        let t0 = Instant::now();
        let mut w = Writers::new(true, QUIET_WRITE);
        let data = EventKind::Modify(ModifyKind::Data(DataChange::Any));
        let mut now = t0;
        while now < t0 + LONGEST_WRITE {
            w.see(&ev(data, "/r/log.md"), now);
            assert!(w.is_held(Path::new("/r/log.md"), now));
            now += Duration::from_secs(1);
        }
        assert!(!w.is_held(Path::new("/r/log.md"), now));
        assert_eq!(w.take_released(now), vec![PathBuf::from("/r/log.md")]);
    }

    #[test]
    fn only_events_that_change_files_count() {
        use notify::event::{AccessMode, MetadataKind, RemoveKind};
        let meta = EventKind::Modify(ModifyKind::Metadata(MetadataKind::Any));
        assert!(!changes_files(&meta), "chmod, touch: no content");
        assert!(!changes_files(&EventKind::Access(AccessKind::Open(
            AccessMode::Any
        ))));
        let close_read = EventKind::Access(AccessKind::Close(AccessMode::Read));
        let close_write = EventKind::Access(AccessKind::Close(AccessMode::Write));
        let rename = EventKind::Modify(ModifyKind::Name(notify::event::RenameMode::Both));
        assert!(!changes_files(&close_read));
        assert!(changes_files(&close_write));
        assert!(changes_files(&EventKind::Create(CreateKind::File)));
        assert!(changes_files(&EventKind::Remove(RemoveKind::Any)));
        assert!(changes_files(&rename));
    }
}
