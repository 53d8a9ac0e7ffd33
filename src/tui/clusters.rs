//! The Clusters pane's state: which cluster and pair are selected, and the
//! comparison of a pair's two documents.

use std::sync::Arc;

use super::origin::wrap;
use super::panes::token_bytes;
use super::scroll::Cursor;
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
}

impl ClusterState {
    pub(crate) fn compare(&mut self, a: u32, b: u32) -> Command {
        self.requested = Some((a, b));
        Command::Compare { a, b }
    }

    /// Take an answer to the latest comparison asked; drop others.
    pub(crate) fn receive(&mut self, v: Arc<CompareView>) -> bool {
        if self.requested != Some((v.a.id, v.b.id)) {
            return false;
        }
        self.compare = Some(v);
        self.scroll = [0, 0];
        true
    }

    pub(crate) fn close(&mut self) {
        self.compare = None;
        self.requested = None;
    }

    /// Scroll each side to its next (or previous) shared passage: the
    /// passages of near duplicates mostly come in the same order on both
    /// sides, so the two views stay side by side. `widths` are the sides'
    /// text widths, as drawn.
    pub(crate) fn step_passage(&mut self, forward: bool, widths: [u16; 2], height: usize) {
        let Some(v) = &self.compare else { return };
        for (i, side) in [&v.a, &v.b].into_iter().enumerate() {
            let (starts, len) = passage_lines(side, widths[i]);
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

    /// A new cluster was selected: its pairs start at the top.
    pub(crate) fn select_cluster(&mut self) {
        self.pairs = Cursor::default();
    }
}

/// The visual lines where `side`'s shared passages start at `width`, in
/// order, and how many lines it has.
pub(crate) fn passage_lines(side: &Side, width: u16) -> (Vec<usize>, usize) {
    let Ok(text) = &side.text else {
        return (Vec::new(), 0);
    };
    let lines = wrap(text, width.max(1) as usize);
    let mut starts: Vec<usize> = (side.shared.iter())
        .filter_map(|&(a, b)| token_bytes(&side.spans, a..b))
        .map(|r| lines.partition_point(|l| l.end < r.start))
        .collect();
    starts.dedup();
    (starts, lines.len())
}
