//! The Clusters pane's state: which cluster and pair are selected, and the
//! comparison of a pair's two documents.

use std::ops::Range;
use std::sync::Arc;

use super::origin::wrap;
use super::panes::token_bytes;
use super::scroll::{Cursor, Move};
use crate::engine::{Command, CompareView, Side};

#[derive(Default)]
pub struct ClusterState {
    pub list: Cursor,
    pub pairs: Cursor,
    /// Keys move through the pairs rather than the clusters.
    pub on_pairs: bool,
    pub compare: Option<Arc<CompareView>>,
    requested: Option<(u32, u32)>,
    /// First line shown of each side of the comparison (left, right): page
    /// keys move both, passage keys each to its own next shared passage.
    pub scroll: [usize; 2],
    /// The next copy takes the pair's second document (copying twice gives
    /// both).
    pub copy_second: bool,
    /// Each side's text wrapped at `widths` (wrapping a long text is not
    /// something to redo every frame).
    pub lines: [Vec<Range<usize>>; 2],
    pub widths: [u16; 2],
    /// The pane the comparison was asked from (two versions of a page,
    /// from Origin): closing it goes back there.
    pub return_to: Option<super::app::Tab>,
}

impl ClusterState {
    pub(crate) fn compare(&mut self, a: u32, b: u32) -> Command {
        self.requested = Some((a, b));
        Command::Compare { a, b }
    }

    /// Take an answer to the latest comparison asked, wrapped at the sides'
    /// text `widths`; drop others.
    pub(crate) fn receive(&mut self, v: Arc<CompareView>, widths: [u16; 2]) -> bool {
        if self.requested != Some((v.a.id, v.b.id)) {
            return false;
        }
        self.compare = Some(v);
        self.scroll = [0, 0];
        self.widths = [0, 0];
        self.wrap(widths);
        true
    }

    /// Wrap the sides for new widths (a resize).
    pub(crate) fn wrap(&mut self, widths: [u16; 2]) {
        if widths == self.widths {
            return;
        }
        self.widths = widths;
        self.lines = match &self.compare {
            Some(v) => [side_lines(&v.a, widths[0]), side_lines(&v.b, widths[1])],
            None => Default::default(),
        };
    }

    /// Close the comparison; the pane it was asked from, if not this one.
    pub(crate) fn close(&mut self) -> Option<super::app::Tab> {
        self.compare = None;
        self.requested = None;
        self.return_to.take()
    }

    /// Scroll each side to its next (or previous) shared passage: the
    /// passages of near duplicates mostly come in the same order on both
    /// sides, so the two views stay side by side. `widths` are the sides'
    /// text widths, as drawn.
    pub(crate) fn step_passage(&mut self, forward: bool, widths: [u16; 2], height: usize) {
        self.wrap(widths);
        let Some(v) = &self.compare else { return };
        for (i, side) in [&v.a, &v.b].into_iter().enumerate() {
            let (starts, len) = (passage_lines(side, &self.lines[i]), self.lines[i].len());
            let top = self.scroll[i];
            let next = if forward {
                starts.into_iter().find(|&l| l > top)
            } else {
                starts.into_iter().rev().find(|&l| l < top)
            };
            if let Some(l) = next {
                self.scroll[i] = l.min(len.saturating_sub(height.max(1)));
            }
        }
    }

    /// Scroll both sides by `m` (`height` lines a page), each kept where its
    /// last page still shows text: a side shorter than the page stays at its
    /// top, and paging past the end stops there.
    pub(crate) fn scroll_sides(&mut self, m: Move, widths: [u16; 2], height: usize) {
        self.wrap(widths);
        let page = height.max(1);
        for (s, lines) in self.scroll.iter_mut().zip(&self.lines) {
            let last = lines.len().saturating_sub(page);
            let to = match m {
                Move::By(d) => s.saturating_add_signed(d),
                Move::Page(d) => s.saturating_add_signed(d * page as isize),
                Move::Top => 0,
                Move::Bottom => last,
                Move::To(i) => i,
            };
            *s = to.min(last);
        }
    }

    /// A new cluster was selected: its pairs start at the top.
    pub(crate) fn select_cluster(&mut self) {
        self.pairs = Cursor::default();
    }
}

/// `side`'s text wrapped at `width` (none without text).
pub(crate) fn side_lines(side: &Side, width: u16) -> Vec<Range<usize>> {
    match &side.text {
        Ok(text) => wrap(text, width.max(1) as usize),
        Err(_) => Vec::new(),
    }
}

/// The visual lines (of `lines`, `side` wrapped) where `side`'s shared
/// passages start, in order.
pub(crate) fn passage_lines(side: &Side, lines: &[Range<usize>]) -> Vec<usize> {
    let mut starts: Vec<usize> = (side.shared.iter())
        .filter_map(|&(a, b)| token_bytes(&side.spans, a..b))
        .map(|r| lines.partition_point(|l| l.end < r.start))
        .collect();
    starts.dedup();
    starts
}
