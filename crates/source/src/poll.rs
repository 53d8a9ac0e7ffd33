//! lineage's own poller, for folders without OS events (network and
//! virtual file systems): every interval, a stat of every file under the
//! root compared with the last. notify's poller compares mtimes to the
//! second and never sizes, so a file written twice within a second kept its
//! first content until some later change.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::time::{Duration, SystemTime};

use walkdir::WalkDir;

/// What a poll compares: size, mtime to the nanosecond, identity, and the
/// status change time (a rewrite that puts size and mtime back moves it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Stamp {
    size: u64,
    mtime: SystemTime,
    id: u64,
    ctime: i64,
}

impl Stamp {
    /// What a file moved keeps: a rename moves the status change time.
    fn kept_by_a_move(self) -> (u64, SystemTime, u64) {
        (self.size, self.mtime, self.id)
    }
}

/// Every file under `root` (links not followed, folders that cannot be
/// read left out), stamped.
fn scan(root: &Path) -> HashMap<PathBuf, Stamp> {
    WalkDir::new(root)
        .into_iter()
        .flatten()
        .filter(|e| !e.file_type().is_dir())
        .filter_map(|e| {
            let m = e.metadata().ok()?;
            let stamp = Stamp {
                size: m.len(),
                mtime: m.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                id: super::file_id(&m),
                ctime: super::ctime_ns(&m),
            };
            Some((e.into_path(), stamp))
        })
        .collect()
}

/// What changed between two polls, each list sorted.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Diff {
    /// New or changed files: a writer may be at work.
    pub written: Vec<PathBuf>,
    /// New names of files gone from another, unchanged: renames, which no
    /// writer is at.
    pub moved: Vec<PathBuf>,
    pub gone: Vec<PathBuf>,
}

impl Diff {
    fn is_empty(&self) -> bool {
        self.written.is_empty() && self.moved.is_empty() && self.gone.is_empty()
    }
}

fn diff(old: &HashMap<PathBuf, Stamp>, new: &HashMap<PathBuf, Stamp>) -> Diff {
    let mut d = Diff::default();
    let mut left = HashSet::new();
    for (p, s) in old {
        if !new.contains_key(p) {
            d.gone.push(p.clone());
            left.insert(s.kept_by_a_move());
        }
    }
    for (p, s) in new {
        match old.get(p) {
            Some(o) if o == s => {}
            None if left.contains(&s.kept_by_a_move()) => d.moved.push(p.clone()),
            _ => d.written.push(p.clone()),
        }
    }
    for v in [&mut d.written, &mut d.moved, &mut d.gone] {
        v.sort();
    }
    d
}

/// Poll `root` every `every` on a thread of its own, calling `each` with
/// what changed, until the sender returned is dropped.
pub(crate) fn start(
    root: &Path,
    every: Duration,
    mut each: impl FnMut(Diff) + Send + 'static,
) -> std::io::Result<Sender<()>> {
    std::fs::read_dir(root)?;
    let (stop, stopped) = mpsc::channel::<()>();
    let root = root.to_path_buf();
    let mut last = scan(&root);
    std::thread::Builder::new()
        .name("lineage-poll".into())
        .spawn(move || {
            while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(every) {
                let now = scan(&root);
                let d = diff(&last, &now);
                last = now;
                if !d.is_empty() {
                    each(d);
                }
            }
        })?;
    Ok(stop)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::UNIX_EPOCH;

    fn stamp(size: u64, nanos: u64, id: u64) -> Stamp {
        Stamp {
            size,
            mtime: UNIX_EPOCH + Duration::from_nanos(nanos),
            id,
            ctime: 7,
        }
    }

    #[test]
    fn a_change_within_a_second_a_rename_and_a_removal_are_told_apart() {
        let p = |s: &str| PathBuf::from(s);
        let old = HashMap::from([
            (p("/r/a.md"), stamp(10, 1_000_000_000, 1)),
            (p("/r/b.md"), stamp(10, 1_000_000_000, 2)),
            (p("/r/c.md"), stamp(10, 1_000_000_000, 3)),
            (p("/r/d.md"), stamp(10, 1_000_000_000, 4)),
        ]);
        let new = HashMap::from([
            // The same second, the same size: still a change.
            (p("/r/a.md"), stamp(10, 1_000_000_001, 1)),
            // A rename moves the status change time.
            (
                p("/r/b2.md"),
                Stamp {
                    ctime: 8,
                    ..stamp(10, 1_000_000_000, 2)
                },
            ),
            (p("/r/c.md"), stamp(10, 1_000_000_000, 3)),
            (p("/r/e.md"), stamp(3, 5, 5)),
            // Rewritten, its size and mtime put back: only ctime says so.
            (
                p("/r/f.md"),
                Stamp {
                    ctime: 9,
                    ..stamp(10, 1_000_000_000, 6)
                },
            ),
        ]);
        let old = {
            let mut old = old;
            old.insert(p("/r/f.md"), stamp(10, 1_000_000_000, 6));
            old
        };
        let d = diff(&old, &new);
        assert_eq!(d.written, [p("/r/a.md"), p("/r/e.md"), p("/r/f.md")]);
        assert_eq!(d.moved, [p("/r/b2.md")]);
        assert_eq!(d.gone, [p("/r/b.md"), p("/r/d.md")]);
        assert!(diff(&new, &new).is_empty());
    }

    #[test]
    fn a_poll_sees_a_second_write_within_the_same_second() {
        let root = lineage_testing::TempDir::new("poll");
        let f = root.0.join("a.md");
        let t = UNIX_EPOCH + Duration::from_nanos(1_000_000_000_500);
        let set = |t| {
            std::fs::File::options()
                .write(true)
                .open(&f)
                .unwrap()
                .set_modified(t)
                .unwrap()
        };
        std::fs::write(&f, "one").unwrap();
        set(t);
        let first = scan(&root.0);
        std::fs::write(&f, "two").unwrap();
        // Within the same second (and the same size): notify's poller saw nothing.
        set(t + Duration::from_nanos(1));
        let d = diff(&first, &scan(&root.0));
        assert_eq!(d.written, [f]);
    }
}
