//! Whether an entry below the root is in: the one decision that the walker
//! ([`crate::walk_with`]) and the watcher ([`crate::watch::stat_paths`]) both
//! make, so that a file changed under the watch is taken or left out exactly
//! as the next full walk would.

use std::fs;
use std::path::Path;

use crate::gitignore::IgnoreStack;
use crate::{Filter, SkipReason, kind_of};

/// What an entry is, as its file type says: a link's own type, or its
/// target's when links are followed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Folder,
    File,
    Link,
    /// A FIFO, a device, a socket: what [`kind_of`] calls it.
    Other(&'static str),
}

impl Kind {
    pub(crate) fn of(ft: fs::FileType) -> Kind {
        if ft.is_dir() {
            Kind::Folder
        } else if ft.is_symlink() {
            Kind::Link
        } else if ft.is_file() {
            Kind::File
        } else {
            Kind::Other(kind_of(ft))
        }
    }
}

/// What a walk makes of an entry below the root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Excluded by the filter or named by a `.gitignore`: passed over
    /// without a word, with all below it.
    LeftOut,
    /// A folder to go into (its `.gitignore` then applies below it).
    Folder,
    /// Not a document by its name: passed over without a word.
    NotDocument,
    /// A document to read.
    Document,
    /// A document by its name that is not read (a link not followed, a
    /// FIFO), and why.
    Skip(SkipReason),
}

/// Which entries below `root` are in, every rule of it: the filter's
/// exclude patterns (hidden names by default), the enclosing `.gitignore`
/// files, the include patterns, links not followed, files that are not
/// regular. Where links are followed, an entry's kind is its target's.
pub(crate) struct Rules<'a> {
    pub root: &'a Path,
    pub filter: &'a Filter,
    pub gitignore: bool,
}

impl Rules<'_> {
    /// Whether the entry at `path` (named `rel`) is left out with all below
    /// it: excluded, or named by `ignores`, the `.gitignore` files of the
    /// folders enclosing it.
    pub(crate) fn left_out(
        &self,
        rel: &str,
        path: &Path,
        is_dir: bool,
        ignores: &IgnoreStack,
    ) -> bool {
        self.filter.is_excluded(rel) || (self.gitignore && ignores.is_ignored(path, is_dir))
    }

    /// What a walk makes of the entry at `path` (named `rel`), of `kind`,
    /// in a folder whose `.gitignore` files are `ignores`.
    pub(crate) fn decide(
        &self,
        rel: &str,
        path: &Path,
        kind: Kind,
        ignores: &IgnoreStack,
    ) -> Verdict {
        if self.left_out(rel, path, kind == Kind::Folder, ignores) {
            return Verdict::LeftOut;
        }
        self.kept(rel, kind)
    }

    /// What a walk makes of an entry of `kind` named `rel` that is not left
    /// out (the root never is).
    pub(crate) fn kept(&self, rel: &str, kind: Kind) -> Verdict {
        match kind {
            Kind::Folder => Verdict::Folder,
            _ if !self.filter.is_document(rel) => Verdict::NotDocument,
            Kind::File => Verdict::Document,
            Kind::Link => Verdict::Skip(SkipReason::Symlink),
            Kind::Other(kind) => Verdict::Skip(SkipReason::NotRegular(kind)),
        }
    }
}

#[cfg(test)]
#[cfg(target_os = "linux")]
mod tests {
    use std::path::{Path, PathBuf};

    use crate::watch::{Stated, stat_paths};
    use crate::{DEFAULT_EXCLUDE, DEFAULT_INCLUDE, Filter, WalkOptions, walk_with};

    /// Every rule, one file each: (path, whether it is a document with the
    /// default patterns and `.gitignore` files read).
    const CASES: &[(&str, bool)] = &[
        ("a.md", true),
        ("notes.bin", false),
        (".hidden.md", false),
        (".hidden/h.md", false),
        ("ignored.md", false),
        ("build/b.md", false),
        ("drafts/d.md", false),
        ("drafts/keep.md", true),
        ("sub/local.md", false),
        ("sub/x.log.md", true),
        ("x.log.md", false),
        ("other/local.md", true),
        ("deep/er/est/e.md", false),
        ("deep/er/f.md", true),
        ("skip/s.md", true),
        ("docs/a.md", true),
        // Through a link to a folder: links are not followed.
        ("linked/a.md", false),
        // Not regular files: the watcher leaves them to a full walk.
        ("link.md", false),
        ("fifo.md", false),
    ];

    fn tree() -> lineage_testing::TempDir {
        let t = lineage_testing::TempDir::new("inclusion");
        t.write(
            ".gitignore",
            "ignored.md\nbuild/\n*.log.md\ndrafts/*.md\n!drafts/keep.md\n",
        );
        t.write("sub/.gitignore", "local.md\n!x.log.md\n");
        t.write("deep/.gitignore", "est/\n");
        for (rel, _) in CASES {
            if !matches!(*rel, "linked/a.md" | "link.md" | "fifo.md") {
                t.write(rel, "text");
            }
        }
        std::os::unix::fs::symlink(t.0.join("docs"), t.0.join("linked")).unwrap();
        std::os::unix::fs::symlink(t.0.join("a.md"), t.0.join("link.md")).unwrap();
        let fifo = std::ffi::CString::new(t.0.join("fifo.md").to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a NUL-terminated path and a mode.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        t
    }

    /// Whether the watcher takes `rel` as a document; None where it leaves
    /// the path to a full walk.
    fn by_watch(root: &Path, rel: &str, filter: &Filter, opts: WalkOptions) -> Option<bool> {
        let (walk, _) = stat_paths(root, &Stated::new([root.join(rel)]), filter, opts, |_| {
            false
        })?;
        Some(walk.files.iter().any(|f| f.path == rel))
    }

    #[test]
    fn the_walker_and_the_watcher_take_in_the_same_files() {
        let t = tree();
        let root: PathBuf = std::fs::canonicalize(&t.0).unwrap();
        let s = |v: &[&str]| v.iter().map(|p| p.to_string()).collect::<Vec<_>>();
        let skip_folder = Filter::new(
            &s(DEFAULT_INCLUDE),
            &[s(DEFAULT_EXCLUDE), s(&["skip", "*/f.md"])].concat(),
        )
        .unwrap();
        for (filter, custom) in [(Filter::default_patterns(), false), (skip_folder, true)] {
            for gitignore in [true, false] {
                let opts = WalkOptions {
                    gitignore,
                    follow_symlinks: false,
                };
                let walk = walk_with(&root, &filter, opts).unwrap();
                for &(rel, default) in CASES {
                    let walked = walk.files.iter().any(|f| f.path == rel);
                    let how = format!("{rel}, gitignore {gitignore}, custom excludes {custom}");
                    if gitignore && !custom {
                        assert_eq!(walked, default, "the walker: {how}");
                    }
                    let regular = !matches!(rel, "link.md" | "fifo.md");
                    let watched = by_watch(&root, rel, &filter, opts);
                    assert_eq!(watched, regular.then_some(walked), "the watcher: {how}");
                }
            }
        }
    }
}
