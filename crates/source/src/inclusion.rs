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
