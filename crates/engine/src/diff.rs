//! What a version changed since its predecessor, for the TUI
//! (`Command::Diff`): `lineage diff`'s passages with their words and lines,
//! read off the index.

use std::ops::Range;

use super::changed::{Hunk, changes, counts, hunks, token_keys};
use super::predecessor::{How, Lineage};
use super::query::{Row, text_of};
use super::stale::Text;
use lineage_config::{Basis, Config};
use lineage_store::index::{IndexError, Read};

/// A version against its predecessor.
#[derive(Clone, Debug, PartialEq)]
pub struct DiffView {
    /// The version asked about.
    pub id: u32,
    /// Its path.
    pub path: String,
    /// Its version number.
    pub version: u32,
    /// The predecessor: its version id, path, number and why it is the one;
    /// None for a first version with none (everything new).
    pub predecessor: Option<(u32, String, u32, How)>,
    /// Tokens kept, removed, new and moved.
    pub counts: [u32; 4],
    /// The passages that changed, in the diff's order (kept ones left out).
    pub passages: Vec<DiffPassage>,
    /// Why there is no diff (a text no longer kept).
    pub failed: Option<String>,
}

/// What a passage of the diff is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiffKind {
    /// The predecessor's words, gone.
    Removed,
    /// Words new here.
    New,
    /// Words moved within the page.
    Moved,
}

/// A passage that changed.
#[derive(Clone, Debug, PartialEq)]
pub struct DiffPassage {
    /// Removed, new or moved.
    pub kind: DiffKind,
    /// Its tokens: in the predecessor for a removed passage, else in the page.
    pub tokens: Range<u32>,
    /// Their lines there (from 1).
    pub lines: [usize; 2],
    /// Its words, as written.
    pub words: String,
}

/// Version `id` against its base under `basis` (the config's
/// `[[predecessor]]` and `release_tags` find it).
pub fn diff_view(
    ix: &impl Read,
    rows: &[Row],
    id: u32,
    config: &Config,
    basis: Basis,
) -> Result<DiffView, IndexError> {
    let row = &rows[id as usize];
    let lineage = Lineage::new(ix, rows, &config.predecessor)?.tags(&config.release_tags);
    let base = lineage.base(id, basis);
    let mut view = DiffView {
        id,
        path: row.path.clone(),
        version: row.version,
        predecessor: base.as_ref().map(|b| {
            let r = &rows[b.id as usize];
            (b.id, r.path.clone(), r.version, b.how.clone())
        }),
        counts: [0; 4],
        passages: Vec::new(),
        failed: None,
    };
    let read = |v: u32| -> Result<Text, String> {
        let (text, spans) = text_of(ix, rows, v);
        let text = text?;
        Ok(Text::new(text, spans))
    };
    let page = match read(id) {
        Ok(t) => t,
        Err(why) => {
            view.failed = Some(format!("the page's text is not kept: {why}"));
            return Ok(view);
        }
    };
    let old = match base.map(|b| read(b.id)) {
        Some(Err(why)) => {
            view.failed = Some(format!("the predecessor's text is no longer kept: {why}"));
            return Ok(view);
        }
        Some(Ok(t)) => t,
        None => Text::new(String::new(), Vec::new()),
    };
    let c = changes(&token_keys(&old.text), &token_keys(&page.text));
    let passage = |kind, side: &Text, r: &Range<u32>| DiffPassage {
        kind,
        tokens: r.clone(),
        lines: side.lines(r),
        words: side.words(r).to_string(),
    };
    for h in hunks(&c) {
        match &h {
            Hunk::Kept { .. } => {}
            Hunk::Removed { old: r } => view.passages.push(passage(DiffKind::Removed, &old, r)),
            Hunk::New { new: r } => view.passages.push(passage(DiffKind::New, &page, r)),
            Hunk::Moved { new: r, .. } => view.passages.push(passage(DiffKind::Moved, &page, r)),
        }
    }
    view.counts = counts(&c);
    Ok(view)
}
