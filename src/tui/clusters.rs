//! The Clusters pane's state: which cluster and pair are selected, and the
//! comparison of a pair's two documents.

use std::sync::Arc;

use super::scroll::Cursor;
use crate::engine::{Command, CompareView};

#[derive(Default)]
pub struct ClusterState {
    pub list: Cursor,
    pub pairs: Cursor,
    /// Keys move through the pairs rather than the clusters.
    pub on_pairs: bool,
    pub compare: Option<Arc<CompareView>>,
    requested: Option<(u32, u32)>,
    /// First line of both sides of the comparison.
    pub scroll: usize,
    /// The pane the comparison was asked from (two versions of a page,
    /// from Origin): closing it goes back there.
    pub return_to: Option<super::app::Tab>,
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
        self.scroll = 0;
        true
    }

    /// Close the comparison; the pane it was asked from, if not this one.
    pub(crate) fn close(&mut self) -> Option<super::app::Tab> {
        self.compare = None;
        self.requested = None;
        self.return_to.take()
    }

    /// A new cluster was selected: its pairs start at the top.
    pub(crate) fn select_cluster(&mut self) {
        self.pairs = Cursor::default();
    }
}
