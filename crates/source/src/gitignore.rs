//! `.gitignore` files met during a walk: the root's and every folder's below
//! it, each applying to the paths under its own folder, the deepest deciding
//! (git's precedence). Built on the `ignore` crate's matcher, which parses the
//! full gitignore syntax (negation, anchoring, `**`, trailing `/`); the walk
//! itself stays ours so include/exclude, symlink and skip handling are in one
//! place. Not read: `.git/info/exclude`, the global excludes file, and ignore
//! files above the root.

use std::path::Path;

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// The `.gitignore` matchers of the folders enclosing the current walk entry.
#[derive(Clone, Default)]
pub(super) struct IgnoreStack {
    /// (depth of the folder, its matcher), outermost first.
    stack: Vec<(usize, Gitignore)>,
}

impl IgnoreStack {
    /// Forget the matchers of folders that do not enclose an entry at `depth`
    /// (the walk is depth-first, so they are the ones at `depth` or deeper).
    pub(super) fn leave_to(&mut self, depth: usize) {
        while self.stack.last().is_some_and(|(d, _)| *d >= depth) {
            self.stack.pop();
        }
    }

    /// Read `dir/.gitignore`, if there is one, for the entries below `dir`.
    /// Invalid lines are left out, as git does.
    pub(super) fn enter(&mut self, dir: &Path, depth: usize) {
        let file = dir.join(".gitignore");
        if !file.is_file() {
            return;
        }
        let mut b = GitignoreBuilder::new(dir);
        // An unreadable file or a bad line still leaves the valid lines.
        let _ = b.add(&file);
        if let Ok(gi) = b.build()
            && !gi.is_empty()
        {
            self.stack.push((depth, gi));
        }
    }

    /// Whether the enclosing `.gitignore` files leave `path` out.
    pub(super) fn is_ignored(&self, path: &Path, is_dir: bool) -> bool {
        for (_, gi) in self.stack.iter().rev() {
            match gi.matched(path, is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
        false
    }
}
