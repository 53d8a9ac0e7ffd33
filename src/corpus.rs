//! A root's documents, read and prepared in parallel, in processing order:
//! the input of `scan`, `sweep`, `pairs` and `pocket`.

use std::path::Path;
use std::time::SystemTime;

use rayon::prelude::*;

use crate::fingerprint::{ShingleRoller, token_fps};
use crate::similar::{self, SimDoc};
use crate::source::{self, FileEntry, Filter, Order, RootError, SkipReason, Skipped, WalkOptions};
use crate::text::{Format, prepare};

/// One document of a run.
#[derive(Clone, Debug)]
pub struct Document {
    pub path: String,
    pub mtime: SystemTime,
    pub size: u64,
    /// Rabin fingerprints of its tokens.
    pub fps: Vec<u64>,
}

/// Documents in processing order (a document's id is its index) and the files
/// left out.
#[derive(Debug)]
pub struct Corpus<T = Document> {
    pub docs: Vec<T>,
    pub skipped: Vec<Skipped>,
}

/// Read `f` safely (a regular file, bounded, not binary) and hand its raw
/// bytes and prepared text (decoded, markup stripped) to `use_text`: the one
/// way every command, the index and the watcher included, reads a document.
pub(crate) fn read_text<T>(
    f: &FileEntry,
    max_file_size: u64,
    use_text: impl FnOnce(&[u8], &str) -> T,
) -> Result<T, SkipReason> {
    let bytes = source::read(f, max_file_size)?;
    let text = prepare(&bytes, Format::from_path(&f.path));
    Ok(use_text(&bytes, &text))
}

/// Walk `root`, read every document (in parallel), and turn each file's
/// prepared text into a `T` with `f`; documents come in processing order
/// (docs/formats.md §2), files left out sorted by path.
pub(crate) fn load_with<T: Send>(
    root: &Path,
    filter: &Filter,
    opts: WalkOptions,
    max_file_size: u64,
    order: Order,
    f: impl Fn(&FileEntry, &str) -> T + Sync,
) -> Result<Corpus<T>, RootError> {
    let mut walk = source::walk_with(root, filter, opts)?;
    source::sort(&mut walk.files, order);
    let results: Vec<Result<T, Skipped>> = walk
        .files
        .par_iter()
        .map(|file| {
            read_text(file, max_file_size, |_, text| f(file, text)).map_err(|reason| Skipped {
                path: file.path.clone(),
                reason,
            })
        })
        .collect();
    let mut corpus = Corpus {
        docs: Vec::with_capacity(results.len()),
        skipped: walk.skipped,
    };
    for r in results {
        match r {
            Ok(d) => corpus.docs.push(d),
            Err(s) => corpus.skipped.push(s),
        }
    }
    corpus.skipped.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(corpus)
}

/// Walk `root` and fingerprint every document's tokens.
pub fn load(
    root: &Path,
    filter: &Filter,
    opts: WalkOptions,
    max_file_size: u64,
    order: Order,
) -> Result<Corpus, RootError> {
    load_with(root, filter, opts, max_file_size, order, |f, text| {
        Document {
            path: f.path.clone(),
            mtime: f.mtime,
            size: f.size,
            fps: token_fps(text).fps,
        }
    })
}

impl Corpus {
    /// Move every document's token fingerprints out, in order: what a replay
    /// (`origin::history::Keyed`) starts from.
    pub(crate) fn take_fps(&mut self) -> Vec<Vec<u64>> {
        self.docs
            .iter_mut()
            .map(|d| std::mem::take(&mut d.fps))
            .collect()
    }
}

/// Documents in processing order (index = document id) with their paths, and
/// the files left out.
#[derive(Debug, Default)]
pub struct Similar {
    pub paths: Vec<String>,
    pub docs: Vec<SimDoc>,
    pub skipped: Vec<Skipped>,
}

/// Walk `root`, read every document (in parallel), order them (docs/formats.md §2)
/// and compute their k-shingle sets; keep token texts only if `terms`.
pub fn load_similar(
    root: &Path,
    filter: &Filter,
    opts: WalkOptions,
    max_file_size: u64,
    order: Order,
    k: usize,
    terms: bool,
) -> Result<Similar, RootError> {
    let roller = ShingleRoller::new(k);
    let c = load_with(root, filter, opts, max_file_size, order, |f, text| {
        (f.path.clone(), similar::docs::sim_doc(text, &roller, terms))
    })?;
    let (paths, docs) = c.docs.into_iter().unzip();
    Ok(Similar {
        paths,
        docs,
        skipped: c.skipped,
    })
}
