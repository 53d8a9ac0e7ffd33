//! Watching a root: notify's OS events (or its poller), debounced by
//! notify-debouncer-full, reduced to what the engine needs — which paths
//! changed, or that only a full walk can tell.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use notify::{PollWatcher, RecursiveMode};
use notify_debouncer_full::{
    DebounceEventResult, RecommendedCache, new_debouncer, new_debouncer_opt,
};

use super::{FileEntry, Filter, Walk, WalkOptions, gitignore, rel_path};

/// One debounced batch of file events.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Batch {
    /// These paths (absolute) changed; `rescan` when the OS says events
    /// were lost and only a full walk can tell what changed.
    Changed { paths: Vec<PathBuf>, rescan: bool },
    /// The watch failed (events may be lost).
    Failed(Vec<String>),
}

/// A running watch; dropping it stops watching.
pub struct Watcher(#[allow(dead_code)] Box<dyn std::any::Any + Send>);

/// Watch `root` recursively, calling `each` with every debounced batch (from
/// notify's threads). `poll`: poll every `every` instead of OS events.
pub fn start(
    root: &Path,
    poll: bool,
    debounce: Duration,
    every: Duration,
    mut each: impl FnMut(Batch) + Send + 'static,
) -> notify::Result<Watcher> {
    // Linux says when a writer closes a file: hold its path back until then,
    // so a file created in a burst is not read before its content is in.
    let mut writers = Writers {
        open: HashMap::new(),
        closes: !poll && cfg!(target_os = "linux"),
    };
    let handler = move |r: DebounceEventResult| {
        each(match r {
            Ok(events) => {
                let rescan = events.iter().any(|e| e.need_rescan());
                for e in &events {
                    writers.see(&e.event);
                }
                let mut paths: Vec<PathBuf> = events
                    .into_iter()
                    .flat_map(|e| e.event.paths)
                    .filter(|p| !writers.is_open(p))
                    .collect();
                paths.sort();
                paths.dedup();
                Batch::Changed { paths, rescan }
            }
            Err(errors) => Batch::Failed(errors.iter().map(|e| e.to_string()).collect()),
        })
    };
    if poll {
        let config = notify::Config::default().with_poll_interval(every);
        let mut d = new_debouncer_opt::<_, PollWatcher, _>(
            debounce,
            None,
            handler,
            RecommendedCache::new(),
            config,
        )?;
        d.watch(root, RecursiveMode::Recursive)?;
        Ok(Watcher(Box::new(d)))
    } else {
        let mut d = new_debouncer(debounce, None, handler)?;
        d.watch(root, RecursiveMode::Recursive)?;
        Ok(Watcher(Box::new(d)))
    }
}

/// Files open for writing, from create/modify and close-write events.
struct Writers {
    /// Path → when its writing was first seen.
    open: HashMap<PathBuf, Instant>,
    /// The backend reports closes (else nothing is held back).
    closes: bool,
}

/// A file written for longer than this is read anyway (a log kept open).
const LONGEST_WRITE: Duration = Duration::from_secs(5);

impl Writers {
    fn see(&mut self, e: &notify::Event) {
        use notify::EventKind::{Access, Create, Modify, Remove};
        use notify::event::{AccessKind, AccessMode, CreateKind, ModifyKind};
        if !self.closes {
            return;
        }
        match e.kind {
            Create(CreateKind::File) | Modify(ModifyKind::Data(_)) => {
                for p in &e.paths {
                    self.open.entry(p.clone()).or_insert_with(Instant::now);
                }
            }
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

    fn is_open(&mut self, p: &Path) -> bool {
        match self.open.get(p) {
            Some(since) if since.elapsed() < LONGEST_WRITE => true,
            Some(_) => {
                self.open.remove(p);
                false
            }
            None => false,
        }
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
    paths: &[PathBuf],
    filter: &Filter,
    opts: WalkOptions,
    holds: impl Fn(&str) -> bool,
) -> Option<(Walk, Vec<String>)> {
    if opts.follow_symlinks {
        return None;
    }
    let mut walk = Walk::default();
    let mut scope = Vec::with_capacity(paths.len());
    let mut folders = Folders {
        root,
        filter,
        opts,
        seen: HashMap::new(),
    };
    for abs in paths {
        let rel_p = abs.strip_prefix(root).ok()?;
        if rel_p.as_os_str().is_empty() || abs.file_name()? == ".gitignore" {
            return None;
        }
        let rel = rel_path(root, abs);
        let meta = match fs::symlink_metadata(abs) {
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
                if filter.is_document(&rel) && !folders.left_out(abs) {
                    walk.files.push(FileEntry {
                        path: rel.clone(),
                        abs: abs.clone(),
                        size: m.len(),
                        mtime: m.modified().unwrap_or(SystemTime::UNIX_EPOCH),
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
    root: &'a Path,
    filter: &'a Filter,
    opts: WalkOptions,
    /// Folder → the matchers that apply inside it; None if it is left out.
    seen: HashMap<PathBuf, Option<gitignore::IgnoreStack>>,
}

impl Folders<'_> {
    /// Whether the walk would leave out the file at `abs` (under the root):
    /// an excluded or ignored file, or one in an excluded, ignored or linked
    /// folder (links are not followed).
    fn left_out(&mut self, abs: &Path) -> bool {
        let Some(dir) = abs.parent() else { return true };
        match self.folder(dir) {
            None => true,
            Some(ignores) => {
                self.filter.is_excluded(&rel_path(self.root, abs)) || ignores.is_ignored(abs, false)
            }
        }
    }

    fn folder(&mut self, dir: &Path) -> Option<gitignore::IgnoreStack> {
        if let Some(known) = self.seen.get(dir) {
            return known.clone();
        }
        let found = if dir == self.root {
            let mut ignores = gitignore::IgnoreStack::default();
            if self.opts.gitignore {
                ignores.enter(dir, 0);
            }
            Some(ignores)
        } else {
            let parent = self.folder(dir.parent().expect("below the root"));
            parent.and_then(|mut ignores| {
                let left_out = self.filter.is_excluded(&rel_path(self.root, dir))
                    || fs::symlink_metadata(dir).is_ok_and(|m| m.is_symlink())
                    || ignores.is_ignored(dir, true);
                if left_out {
                    return None;
                }
                if self.opts.gitignore {
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

    struct Root(PathBuf);

    impl Drop for Root {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn root(tag: &str) -> Root {
        let p = std::env::temp_dir().join(format!("lineage-stat-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&p);
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
            let f = p.join(rel);
            fs::create_dir_all(f.parent().unwrap()).unwrap();
            fs::write(f, text).unwrap();
        }
        Root(fs::canonicalize(&p).unwrap())
    }

    fn stat(r: &Root, rels: &[&str], holds: bool) -> Option<(Vec<String>, Vec<String>)> {
        let paths: Vec<PathBuf> = rels.iter().map(|p| r.0.join(p)).collect();
        let (walk, scope) = stat_paths(
            &r.0,
            &paths,
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
            &[std::env::temp_dir()],
            &Filter::default_patterns(),
            WalkOptions::default(),
            |_| false,
        );
        assert!(outside.is_none());
        let follow = WalkOptions {
            gitignore: true,
            follow_symlinks: true,
        };
        let a = [r.0.join("a.md")];
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
    fn a_file_is_held_back_from_its_first_write_to_its_close() {
        let mut w = Writers {
            open: HashMap::new(),
            closes: true,
        };
        w.see(&ev(EventKind::Create(CreateKind::File), "/r/a.md"));
        w.see(&ev(
            EventKind::Modify(ModifyKind::Data(DataChange::Any)),
            "/r/b.md",
        ));
        assert!(w.is_open(Path::new("/r/a.md")) && w.is_open(Path::new("/r/b.md")));
        w.see(&ev(
            EventKind::Access(AccessKind::Close(AccessMode::Write)),
            "/r/a.md",
        ));
        assert!(!w.is_open(Path::new("/r/a.md")));
        assert!(w.is_open(Path::new("/r/b.md")));
        // Written for too long: read anyway.
        w.open
            .insert(PathBuf::from("/r/b.md"), Instant::now() - LONGEST_WRITE);
        assert!(!w.is_open(Path::new("/r/b.md")));
        // Backends without close events hold nothing back.
        let mut none = Writers {
            open: HashMap::new(),
            closes: false,
        };
        none.see(&ev(EventKind::Create(CreateKind::File), "/r/a.md"));
        assert!(!none.is_open(Path::new("/r/a.md")));
    }
}
