//! A root's documents, read, tokenized and fingerprinted, in processing order:
//! the input of `scan` and `sweep`.

use std::path::Path;
use std::time::SystemTime;

use rayon::prelude::*;

use crate::config::Order;
use crate::fingerprint::token_fps;
use crate::source::{self, Filter, RootError, Skipped, WalkOptions};
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
#[derive(Debug, Default)]
pub struct Corpus {
    pub docs: Vec<Document>,
    pub skipped: Vec<Skipped>,
}

/// Walk `root` with the default walk options, read every document (in
/// parallel) and order them.
pub fn load(
    root: &Path,
    filter: &Filter,
    max_file_size: u64,
    order: Order,
) -> Result<Corpus, RootError> {
    load_with(root, filter, WalkOptions::default(), max_file_size, order)
}

/// [`load`] with explicit walk options.
pub fn load_with(
    root: &Path,
    filter: &Filter,
    opts: WalkOptions,
    max_file_size: u64,
    order: Order,
) -> Result<Corpus, RootError> {
    let walk = source::walk_with(root, filter, opts)?;
    let results: Vec<Result<Document, Skipped>> = walk
        .files
        .par_iter()
        .map(|f| {
            let bytes = source::read(f, max_file_size).map_err(|reason| Skipped {
                path: f.path.clone(),
                reason,
            })?;
            let text = prepare(&bytes, Format::from_path(&f.path));
            Ok(Document {
                path: f.path.clone(),
                mtime: f.mtime,
                size: f.size,
                fps: token_fps(&text).fps,
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
    sort(&mut corpus.docs, order);
    corpus.skipped.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(corpus)
}

/// Sort documents into processing order (CONTRACT §2).
pub fn sort(docs: &mut [Document], order: Order) {
    match order {
        Order::Path => docs.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes())),
        Order::Mtime => docs.sort_by(|a, b| {
            a.mtime
                .cmp(&b.mtime)
                .then_with(|| a.path.as_bytes().cmp(b.path.as_bytes()))
        }),
    }
}
