//! The Documents pane's rows: the snapshot's documents filtered and sorted.
//! The result is kept and recomputed only when the documents, the filter or
//! the order change, so drawing a frame costs only its visible rows.

use std::cmp::Ordering;
use std::sync::Arc;

use rayon::prelude::*;

use super::filter::Matcher;
use super::scroll::{Cursor, Move};
use crate::engine::DocRow;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortKey {
    /// Path, bytewise.
    Path,
    /// Most fresh text first.
    Fresh,
    /// Most copied text first.
    Copied,
    /// Most recently modified first.
    Time,
}

impl SortKey {
    pub(crate) fn next(self) -> SortKey {
        match self {
            SortKey::Path => SortKey::Fresh,
            SortKey::Fresh => SortKey::Copied,
            SortKey::Copied => SortKey::Time,
            SortKey::Time => SortKey::Path,
        }
    }

    pub(crate) fn label(self) -> &'static str {
        match self {
            SortKey::Path => "path",
            SortKey::Fresh => "fresh %",
            SortKey::Copied => "copied %",
            SortKey::Time => "modified",
        }
    }

    fn cmp(self, a: &DocRow, b: &DocRow) -> Ordering {
        match self {
            SortKey::Path => Ordering::Equal,
            SortKey::Fresh => b.fresh_percent.total_cmp(&a.fresh_percent),
            SortKey::Copied => a.fresh_percent.total_cmp(&b.fresh_percent),
            SortKey::Time => b.mtime_ns.cmp(&a.mtime_ns),
        }
        .then_with(|| a.path.cmp(&b.path))
    }
}

pub struct DocList {
    docs: Arc<[DocRow]>,
    filter: String,
    sort: SortKey,
    reverse: bool,
    /// Indices into `docs` of the rows shown, in order.
    view: Vec<u32>,
    pub cursor: Cursor,
    matcher: Box<dyn Matcher>,
}

impl DocList {
    pub fn new(matcher: Box<dyn Matcher>) -> DocList {
        DocList {
            docs: Arc::from(Vec::new()),
            filter: String::new(),
            sort: SortKey::Path,
            reverse: false,
            view: Vec::new(),
            cursor: Cursor::default(),
            matcher,
        }
    }

    pub fn filter(&self) -> &str {
        &self.filter
    }

    pub fn sort(&self) -> (SortKey, bool) {
        (self.sort, self.reverse)
    }

    /// All documents of the snapshot.
    pub(crate) fn all(&self) -> &[DocRow] {
        &self.docs
    }

    /// Rows shown.
    pub fn len(&self) -> usize {
        self.view.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.view.is_empty()
    }

    /// The `i`th row shown.
    pub(crate) fn row(&self, i: usize) -> &DocRow {
        &self.docs[self.view[i] as usize]
    }

    pub(crate) fn selected(&self) -> Option<&DocRow> {
        (self.cursor.selected < self.view.len()).then(|| self.row(self.cursor.selected))
    }

    pub(crate) fn set_docs(&mut self, docs: Arc<[DocRow]>, height: usize) {
        if !Arc::ptr_eq(&docs, &self.docs) {
            let keep = self.selected_id();
            self.docs = docs;
            self.refresh(None, false, keep, height);
        }
    }

    pub(crate) fn set_filter(&mut self, filter: &str, height: usize) {
        if filter == self.filter {
            return;
        }
        // Typing on extends the pattern: its matches are among the current
        // rows (a subsequence of the longer pattern is one of the shorter).
        let narrow = filter.starts_with(self.filter.as_str());
        let keep = self.selected_id();
        self.filter = filter.to_string();
        // Filtering keeps the order, so narrowed rows need no sort.
        let candidates = narrow.then(|| std::mem::take(&mut self.view));
        self.refresh(candidates, narrow, keep, height);
    }

    /// A new order starts at its top: what was selected mid-way in the old
    /// order says nothing about where the user wants to look in the new one.
    pub(crate) fn set_sort(&mut self, sort: SortKey, reverse: bool, height: usize) {
        if (sort, reverse) != (self.sort, self.reverse) {
            self.sort = sort;
            self.reverse = reverse;
            let rows = std::mem::take(&mut self.view);
            self.cursor = Cursor::default();
            self.refresh(Some(rows), false, None, height);
        }
    }

    pub(crate) fn move_cursor(&mut self, m: Move, height: usize) {
        self.cursor.apply(m, self.view.len(), height);
    }

    /// Byte offsets in row `i`'s path of the characters the filter matched.
    pub(crate) fn matches(&self, i: usize) -> Vec<usize> {
        if self.filter.trim().is_empty() {
            return Vec::new();
        }
        self.matcher.indices(&self.filter, &self.row(i).path)
    }

    fn selected_id(&self) -> Option<u32> {
        self.selected().map(|d| d.id)
    }

    /// Recompute the rows from `candidates` (indices into `docs`; all when
    /// None; already in order when `sorted`), keeping document `keep`
    /// selected if it still shows.
    fn refresh(
        &mut self,
        candidates: Option<Vec<u32>>,
        sorted: bool,
        keep: Option<u32>,
        height: usize,
    ) {
        let docs = &self.docs;
        let mut view = candidates.unwrap_or_else(|| (0..docs.len() as u32).collect());
        if !self.filter.is_empty() {
            let (m, pattern) = (&self.matcher, self.filter.as_str());
            view = view
                .into_par_iter()
                .filter(|&i| m.score(pattern, &docs[i as usize].path).is_some())
                .collect();
        }
        if !sorted {
            let (sort, reverse) = (self.sort, self.reverse);
            view.par_sort_unstable_by(|&a, &b| {
                let o = sort.cmp(&docs[a as usize], &docs[b as usize]);
                if reverse { o.reverse() } else { o }
            });
        }
        self.view = view;
        let docs = &self.docs;
        if let Some(pos) =
            keep.and_then(|id| self.view.iter().position(|&i| docs[i as usize].id == id))
        {
            self.cursor.selected = pos;
        }
        self.cursor.show(self.view.len(), height);
    }
}
