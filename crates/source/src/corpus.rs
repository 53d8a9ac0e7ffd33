//! A root's documents, read and prepared in parallel, in processing order:
//! the input of `scan`, `sweep`, `pairs` and `pocket`.

use std::path::Path;
use std::time::SystemTime;

use rayon::prelude::*;

use lineage_core::fingerprint::polynomial::Polynomial;
use lineage_core::fingerprint::token_fps;
use lineage_core::text::{Format, prepare};

use crate::{FileEntry, Filter, Order, RootError, SkipReason, Skipped, Walk, WalkOptions};

/// One document of a run.
#[derive(Clone, Debug)]
pub struct Document {
    /// Path relative to the root, with `/`.
    pub path: String,
    /// Modification time, what `--order mtime` sorts by.
    pub mtime: SystemTime,
    /// Size of the file in bytes.
    pub size: u64,
    /// Rabin fingerprints of its tokens.
    pub fps: Vec<u64>,
}

/// Documents in processing order (a document's id is its index) and the files
/// left out.
#[derive(Debug)]
pub struct Corpus<T = Document> {
    /// The documents read, in processing order.
    pub docs: Vec<T>,
    /// The files left out, each with its reason.
    pub skipped: Vec<Skipped>,
}

/// Read `f` safely (a regular file, bounded, not binary) and hand its raw
/// bytes and prepared text (decoded, markup stripped) to `use_text`: the one
/// way every command, the index and the watcher included, reads a document.
pub fn read_text<T>(
    f: &FileEntry,
    max_file_size: u64,
    use_text: impl FnOnce(&[u8], &str) -> T,
) -> Result<T, SkipReason> {
    let bytes = crate::read(f, max_file_size)?;
    Ok(text_of(f, &bytes, use_text))
}

/// [`read_text`] of bytes already read (a blob of a repository's history,
/// [`crate::history::Repo::blob`]): prepared as `f`'s name says.
pub fn text_of<T>(f: &FileEntry, bytes: &[u8], use_text: impl FnOnce(&[u8], &str) -> T) -> T {
    let text = prepare(bytes, Format::from_path(&f.path));
    use_text(bytes, &text)
}

/// Documents read at once by [`stream_with`]: enough to keep both cores
/// busy, few enough that memory stays small.
const BATCH_FILES: usize = 256;
const BATCH_BYTES: u64 = 64 << 20;

/// [`load_with`] without holding the documents: a batch at a time is read
/// and turned into `T` with `f` in parallel, then each document goes to
/// `each` in processing order, on this thread, while the next batch is
/// being read; whatever `each` keeps is all that stays (two batches at
/// most are in memory). Returns the files left out, sorted by path.
pub fn stream_with<T: Send, E: From<RootError>>(
    root: &Path,
    filter: &Filter,
    opts: WalkOptions,
    max_file_size: u64,
    order: Order,
    f: impl Fn(&FileEntry, &str) -> T + Sync,
    mut each: impl FnMut(&FileEntry, T) -> Result<(), E>,
) -> Result<Vec<Skipped>, E> {
    let walk = walk_sorted(root, filter, opts, order)?;
    let mut skipped = walk.skipped;
    stream_files(&walk.files, max_file_size, Share::ALL, f, |file, part| {
        match part {
            Part::Read(t) => return each(file, t),
            Part::Skipped(reason) => skipped.push(Skipped {
                path: file.path.clone(),
                reason,
            }),
            Part::Elsewhere => {}
        }
        Ok(())
    })?;
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(skipped)
}

/// The files under `root` in processing order, and those the walk left out.
pub fn walk_sorted(
    root: &Path,
    filter: &Filter,
    opts: WalkOptions,
    order: Order,
) -> Result<Walk, RootError> {
    let mut walk = crate::walk_with(root, filter, opts)?;
    crate::sort(&mut walk.files, order);
    Ok(walk)
}

/// Which of a run's files this process reads: those whose place is
/// `index` modulo `count` (a run over many processes reads each file once).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Share {
    /// This process's place among the `count`, from 0.
    pub index: usize,
    /// How many processes share the run.
    pub count: usize,
}

impl Share {
    /// Every file.
    pub const ALL: Share = Share { index: 0, count: 1 };

    fn reads(self, place: usize) -> bool {
        place % self.count.max(1) == self.index
    }
}

/// What became of one file of a run, in [`stream_files`].
pub enum Part<T> {
    /// Read here, and turned into a `T`.
    Read(T),
    /// Read here, and left out.
    Skipped(SkipReason),
    /// Another process's to read.
    Elsewhere,
}

/// Every one of `files` to `each`, in order, the ones of `share` read and
/// turned into `T` with `f` a batch at a time in parallel while the batch
/// before goes to `each` (two batches at most are in memory).
pub fn stream_files<T: Send, E>(
    files: &[FileEntry],
    max_file_size: u64,
    share: Share,
    f: impl Fn(&FileEntry, &str) -> T + Sync,
    mut each: impl FnMut(&FileEntry, Part<T>) -> Result<(), E>,
) -> Result<(), E> {
    let read = |first: usize, batch: &[FileEntry]| -> Vec<Part<T>> {
        batch
            .par_iter()
            .enumerate()
            .map(|(i, file)| {
                if !share.reads(first + i) {
                    return Part::Elsewhere;
                }
                match read_text(file, max_file_size, |_, text| f(file, text)) {
                    Ok(t) => Part::Read(t),
                    Err(reason) => Part::Skipped(reason),
                }
            })
            .collect()
    };
    let mut batches = batches(files, max_file_size).scan(0, |first, b| {
        let at = *first;
        *first += b.len();
        Some((at, b))
    });
    let mut current = batches.next().map(|(at, b)| (b, read(at, b)));
    while let Some((batch, docs)) = current.take() {
        let (next, done) = std::thread::scope(|s| {
            let reader = batches
                .next()
                .map(|(at, b)| s.spawn(move || (b, read(at, b))));
            let mut done = Ok(());
            for (file, part) in batch.iter().zip(docs) {
                done = each(file, part);
                if done.is_err() {
                    break;
                }
            }
            let next = reader.map(|h| h.join().expect("the reading thread does not panic"));
            (next, done)
        });
        done?;
        current = next;
    }
    Ok(())
}

/// `files` in batches of at most [`BATCH_FILES`] files or [`BATCH_BYTES`]
/// bytes (a file counted at most `max_file_size`), at least one file each.
fn batches(files: &[FileEntry], max_file_size: u64) -> impl Iterator<Item = &[FileEntry]> {
    let mut rest = files;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let (mut n, mut bytes) = (0, 0);
        while n < rest.len() && n < BATCH_FILES && (n == 0 || bytes < BATCH_BYTES) {
            bytes += rest[n].size.min(max_file_size);
            n += 1;
        }
        let (batch, tail) = rest.split_at(n);
        rest = tail;
        Some(batch)
    })
}

/// Walk `root`, read every document (in parallel), and turn each file's
/// prepared text into a `T` with `f`; documents come in processing order
/// (docs/formats.md §2), files left out sorted by path.
pub fn load_with<T: Send>(
    root: &Path,
    filter: &Filter,
    opts: WalkOptions,
    max_file_size: u64,
    order: Order,
    f: impl Fn(&FileEntry, &str) -> T + Sync,
) -> Result<Corpus<T>, RootError> {
    let mut docs = Vec::new();
    let skipped = stream_with(root, filter, opts, max_file_size, order, f, |_, t| {
        docs.push(t);
        Ok::<(), RootError>(())
    })?;
    Ok(Corpus { docs, skipped })
}

/// Walk `root` and fingerprint every document's tokens under `poly`.
pub fn load(
    root: &Path,
    filter: &Filter,
    opts: WalkOptions,
    max_file_size: u64,
    order: Order,
    poly: &Polynomial,
) -> Result<Corpus, RootError> {
    load_with(root, filter, opts, max_file_size, order, |f, text| {
        Document {
            path: f.path.clone(),
            mtime: f.mtime,
            size: f.size,
            fps: token_fps(poly, text).fps,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use lineage_core::fingerprint::polynomial::standard;

    #[test]
    fn streaming_gives_what_loading_gives_in_order_and_stops_on_an_error() {
        let root = std::env::temp_dir().join(format!("lineage-stream-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("sub")).unwrap();
        // More files than a batch, a binary one, and names out of walk order.
        for i in (0..300).rev() {
            std::fs::write(
                root.join(format!("sub/p{i:03}.md")),
                format!("page {i} words"),
            )
            .unwrap();
        }
        std::fs::write(root.join("b.md"), b"\0\x01binary").unwrap();
        let filter = Filter::default_patterns();
        let opts = WalkOptions::default();
        let mut streamed = Vec::new();
        let skipped = stream_with::<_, RootError>(
            &root,
            &filter,
            opts,
            1 << 20,
            Order::Path,
            |f, text| (f.path.clone(), token_fps(standard(), text).fps),
            |_, doc| {
                streamed.push(doc);
                Ok(())
            },
        )
        .unwrap();
        // Path order across batches, each document as read on its own.
        let want: Vec<(String, Vec<u64>)> = (0..300)
            .map(|i| {
                let poly = standard();
                let fps = token_fps(poly, &format!("page {i} words")).fps;
                (format!("sub/p{i:03}.md"), fps)
            })
            .collect();
        assert_eq!(streamed, want);
        let skipped: Vec<(&str, &SkipReason)> = skipped
            .iter()
            .map(|s| (s.path.as_str(), &s.reason))
            .collect();
        assert_eq!(skipped, [("b.md", &SkipReason::Binary)]);
        // An error from `each` ends the stream there.
        #[derive(Debug, PartialEq)]
        struct Closed;
        impl From<RootError> for Closed {
            fn from(_: RootError) -> Closed {
                unreachable!("the root is there")
            }
        }
        let mut n = 0;
        let r = stream_with::<_, Closed>(
            &root,
            &filter,
            opts,
            1 << 20,
            Order::Path,
            |_, _| (),
            |_, ()| {
                n += 1;
                if n == 5 { Err(Closed) } else { Ok(()) }
            },
        );
        assert_eq!((r, n), (Err(Closed), 5));
        std::fs::remove_dir_all(&root).unwrap();
    }
}
