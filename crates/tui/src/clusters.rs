//! The Clusters pane's state: the clusters listed (filtered by their pages'
//! paths, in the order asked), which cluster and pair are selected, and the
//! comparison of a pair's two documents.

use std::ops::Range;
use std::sync::Arc;

use super::origin::wrap;
use super::scroll::{Cursor, Move};
use lineage_engine::{Cluster, Command, CompareView, Side};

/// The order of the clusters listed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum ClusterSort {
    /// As numbered (`#3`, the number a page's row shows).
    #[default]
    Number,
    /// Most pages first.
    Size,
    /// The most similar pair first.
    Similarity,
    /// By the first page's path.
    Path,
}

impl ClusterSort {
    /// Every order, in the turn `sort` takes them.
    pub(crate) const ALL: [ClusterSort; 4] = [
        ClusterSort::Number,
        ClusterSort::Size,
        ClusterSort::Similarity,
        ClusterSort::Path,
    ];

    pub(crate) fn next(self) -> ClusterSort {
        let at = Self::ALL.iter().position(|&k| k == self).unwrap_or(0);
        Self::ALL[(at + 1) % Self::ALL.len()]
    }

    pub(crate) fn label(self) -> &'static str {
        match self {
            ClusterSort::Number => "number",
            ClusterSort::Size => "size",
            ClusterSort::Similarity => "similarity",
            ClusterSort::Path => "path",
        }
    }
}

#[derive(Default)]
pub(crate) struct ClusterState {
    /// The clusters listed, as indexes into the snapshot's: those with a
    /// page whose path holds every word of `filter`, in `sort` order.
    pub order: Vec<usize>,
    pub sort: ClusterSort,
    pub reverse: bool,
    pub filter: String,
    /// The pane a page's cluster was shown from (`#`): back returns there.
    pub(crate) came_from: Option<super::app::Tab>,
    /// The selected row of `order`.
    pub list: Cursor,
    pub pairs: Cursor,
    /// Keys move through the pairs rather than the clusters.
    pub(crate) on_pairs: bool,
    pub compare: Option<Arc<CompareView>>,
    requested: Option<(u32, u32)>,
    /// First line shown of each side of the comparison (left, right): page
    /// keys move both, passage keys each to its own next shared passage.
    pub(crate) scroll: [usize; 2],
    /// The next copy takes the pair's second document (copying twice gives
    /// both).
    pub(crate) copy_second: bool,
    /// Each side's text wrapped at `widths` (wrapping a long text is not
    /// something to redo every frame).
    pub lines: [Vec<Range<usize>>; 2],
    pub widths: [u16; 2],
    /// The pane the comparison was asked from (two versions of a page,
    /// from Origin): closing it goes back there.
    pub(crate) return_to: Option<super::app::Tab>,
    /// Passage keys walk the changes, not the shared passages: two versions
    /// of a page, where nearly everything is shared.
    pub(crate) walk_changes: bool,
    /// The change the sides were last brought to (of [`changes`]'s), shown
    /// at their bottom; any other scroll leaves it.
    pub(crate) change: Option<usize>,
}

impl ClusterState {
    /// Compare a pair (the caller of two versions sets `return_to` after).
    pub(crate) fn compare(&mut self, a: u32, b: u32) -> Command {
        self.requested = Some((a, b));
        self.return_to = None;
        self.walk_changes = false;
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
        self.change = None;
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
    /// sides, so the two views stay side by side. Two versions of a page
    /// walk their changes instead ([`Self::step_change`]). `widths` are the
    /// sides' text widths, as drawn.
    pub(crate) fn step_passage(&mut self, forward: bool, widths: [u16; 2], height: usize) {
        self.wrap(widths);
        let Some(v) = self.compare.clone() else {
            return;
        };
        if let Some(changes) = (self.walk_changes.then(|| changes(&v.a, &v.b))).flatten() {
            return self.step_change(&v, &changes, forward, height);
        }
        let starts = [&v.a, &v.b].map(|side| side.shared.iter().map(|&(a, _)| a).collect());
        self.step_each(&v, starts, forward, height);
    }

    /// Bring both sides to the next (or previous) change, each where the
    /// change stands on it: what one side lacks stands between the same two
    /// shared passages on the other, so the sides stay in step.
    fn step_change(&mut self, v: &CompareView, changes: &[[u32; 2]], forward: bool, height: usize) {
        let lines =
            |j: usize| [0, 1].map(|i| token_line(side_of(v, i), &self.lines[i], changes[j][i]));
        let top = self.scroll;
        let next = match (self.change, forward) {
            (Some(j), true) => Some(j + 1).filter(|&n| n < changes.len()),
            (Some(j), false) => j.checked_sub(1),
            (None, true) => (0..changes.len()).find(|&j| {
                let l = lines(j);
                l[0] > top[0] || l[1] > top[1]
            }),
            (None, false) => (0..changes.len()).rev().find(|&j| {
                let l = lines(j);
                l[0] < top[0] || l[1] < top[1]
            }),
        };
        let Some(j) = next else { return };
        for (i, l) in lines(j).into_iter().enumerate() {
            self.scroll[i] = l.min(self.lines[i].len().saturating_sub(height.max(1)));
        }
        self.change = Some(j);
    }

    /// Scroll each side on its own to the next (or previous) of its
    /// `starts` (tokens).
    fn step_each(&mut self, v: &CompareView, starts: [Vec<u32>; 2], forward: bool, height: usize) {
        for (i, starts) in starts.into_iter().enumerate() {
            let lines = &self.lines[i];
            let mut at: Vec<usize> = (starts.into_iter())
                .map(|t| token_line(side_of(v, i), lines, t))
                .collect();
            at.dedup();
            let top = self.scroll[i];
            let next = if forward {
                at.into_iter().find(|&l| l > top)
            } else {
                at.into_iter().rev().find(|&l| l < top)
            };
            if let Some(l) = next {
                self.scroll[i] = l.min(lines.len().saturating_sub(height.max(1)));
            }
        }
    }

    /// Scroll both sides by `m` (`height` lines a page), each kept where its
    /// last page still shows text: a side shorter than the page stays at its
    /// top, and paging past the end stops there.
    pub(crate) fn scroll_sides(&mut self, m: Move, widths: [u16; 2], height: usize) {
        self.wrap(widths);
        let page = height.max(1);
        self.change = None;
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

    /// The selected cluster's index in the snapshot's list.
    pub(crate) fn selected(&self) -> Option<usize> {
        self.order.get(self.list.selected).copied()
    }

    /// List `clusters` again (a new snapshot, another order or filter):
    /// `path` names a page. The same row stays selected (a new snapshot's
    /// caller then moves it to the same cluster's row); after a change of
    /// order or filter the selection is the first row.
    pub(crate) fn arrange<P: AsRef<str>>(
        &mut self,
        clusters: &[Arc<Cluster>],
        path: impl Fn(u32) -> Option<P>,
    ) {
        let words: Vec<String> = (self.filter.split_whitespace())
            .map(str::to_lowercase)
            .collect();
        // Each page's path lowercased once, whatever the number of words.
        let holds = |c: &Cluster| {
            let paths: Vec<String> = (c.members.iter())
                .filter_map(|&m| Some(path(m)?.as_ref().to_lowercase()))
                .collect();
            words.iter().all(|w| paths.iter().any(|p| p.contains(w)))
        };
        let mut order: Vec<usize> = (0..clusters.len())
            .filter(|&i| words.is_empty() || holds(&clusters[i]))
            .collect();
        let best = |c: &Cluster| c.pairs.first().map_or(0.0, |p| p.2);
        let first = |c: &Cluster| c.members.first().and_then(|&m| path(m));
        match self.sort {
            ClusterSort::Number => {}
            ClusterSort::Size => {
                order.sort_by_key(|&i| std::cmp::Reverse(clusters[i].members.len()))
            }
            ClusterSort::Similarity => {
                order.sort_by(|&a, &b| best(&clusters[b]).total_cmp(&best(&clusters[a])))
            }
            ClusterSort::Path => {
                order.sort_by_cached_key(|&i| first(&clusters[i]).map(|p| p.as_ref().to_string()))
            }
        }
        if self.reverse {
            order.reverse();
        }
        self.order = order;
    }

    /// Select cluster `index` (of the snapshot's) in the list, on its
    /// clusters rather than its pairs; false if it is not listed.
    pub(crate) fn select(&mut self, index: usize) -> bool {
        let Some(row) = self.order.iter().position(|&i| i == index) else {
            return false;
        };
        if self.list.selected != row {
            self.list.selected = row;
            self.select_cluster();
        }
        self.on_pairs = false;
        true
    }
}

/// `side`'s text wrapped at `width` (none without text).
pub(crate) fn side_lines(side: &Side, width: u16) -> Vec<Range<usize>> {
    match &side.text {
        Ok(text) => wrap(text, width.max(1) as usize),
        Err(_) => Vec::new(),
    }
}

/// Side `i` (0 left, 1 right) of a comparison.
fn side_of(v: &CompareView, i: usize) -> &Side {
    if i == 0 { &v.a } else { &v.b }
}

/// The visual line (of `lines`, `side` wrapped) where token `t` stands;
/// the last line for the end of the text.
fn token_line(side: &Side, lines: &[Range<usize>], t: u32) -> usize {
    let byte = match side.spans.get(t as usize) {
        Some(&(start, _)) => start as usize,
        None => side.text.as_ref().map_or(0, String::len),
    };
    lines
        .partition_point(|l| l.end < byte)
        .min(lines.len().saturating_sub(1))
}

/// The changes between two versions: for each gap between the shared
/// passages, on either side (what one lacks of the other), the token where
/// it starts on each side. The sides' passages are paired in order, so
/// None when they have not as many (text moved or repeated): each side then
/// walks its own.
pub(crate) fn changes(a: &Side, b: &Side) -> Option<Vec<[u32; 2]>> {
    if a.shared.len() != b.shared.len() {
        return None;
    }
    // Gap j of a side: from the end of its passage j - 1 to the start of
    // passage j (the text's ends outside them).
    let gap = |s: &Side, j: usize| {
        let from = j.checked_sub(1).map_or(0, |p| s.shared[p].1);
        let to = s.shared.get(j).map_or(s.spans.len() as u32, |p| p.0);
        from..to
    };
    let changes = (0..=a.shared.len())
        .map(|j| (gap(a, j), gap(b, j)))
        .filter(|(x, y)| !x.is_empty() || !y.is_empty())
        .map(|(x, y)| [x.start, y.start])
        .collect();
    Some(changes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three clusters whose every order differs from the numbered one.
    fn clusters() -> Vec<Arc<Cluster>> {
        let c = |members: &[u32], best: f64| {
            Arc::new(Cluster {
                number: members[0] + 1,
                members: members.to_vec(),
                pairs: vec![(members[0], members[1], best)],
            })
        };
        vec![c(&[0, 1], 0.6), c(&[2, 3, 4, 5], 0.9), c(&[6, 7, 8], 0.7)]
    }

    const PATHS: [&str; 9] = [
        "m/a.md", "m/b.md", "z/c.md", "z/d.md", "z/e.md", "z/f.md", "c/API.md", "c/h.md", "c/i.md",
    ];

    fn order(sort: ClusterSort, reverse: bool, filter: &str) -> Vec<usize> {
        let mut s = ClusterState {
            sort,
            reverse,
            filter: filter.into(),
            ..ClusterState::default()
        };
        s.arrange(&clusters(), |m| PATHS.get(m as usize).copied());
        s.order
    }

    #[test]
    fn each_order_and_the_filter_list_the_clusters_they_say() {
        assert_eq!(order(ClusterSort::Number, false, ""), [0, 1, 2]);
        assert_eq!(order(ClusterSort::Size, false, ""), [1, 2, 0]);
        assert_eq!(order(ClusterSort::Similarity, false, ""), [1, 2, 0]);
        assert_eq!(order(ClusterSort::Path, false, ""), [2, 0, 1]);
        assert_eq!(order(ClusterSort::Size, true, ""), [0, 2, 1]);
        // Every word in some page's path, ignoring case, in any order.
        assert_eq!(order(ClusterSort::Number, false, "api C/"), [2]);
        assert_eq!(order(ClusterSort::Number, false, "md"), [0, 1, 2]);
        assert!(order(ClusterSort::Number, false, "api m/").is_empty());
        // Selecting a cluster picks its row in the order listed.
        let mut s = ClusterState {
            sort: ClusterSort::Path,
            ..ClusterState::default()
        };
        s.arrange(&clusters(), |m| PATHS.get(m as usize).copied());
        assert!(s.select(1));
        assert_eq!((s.list.selected, s.selected()), (2, Some(1)));
        s.filter = "c/".into();
        s.arrange(&clusters(), |m| PATHS.get(m as usize).copied());
        assert!(!s.select(1), "filtered out");
    }
}
