//! The Documents pane's rows: the snapshot's documents filtered and sorted.
//! The result is kept and recomputed only when the documents, the filter or
//! the order change, so drawing a frame costs only its visible rows.

use std::cmp::Ordering;
use std::sync::Arc;

use rayon::prelude::*;

use std::collections::{HashMap, HashSet};

use super::filter::Matcher;
use super::scroll::{Cursor, Move};
use lineage_config::Basis;
use lineage_engine::{DocRow, Documents, PageChange, SharesUpdate};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SortKey {
    /// Path, bytewise.
    Path,
    /// Most fresh text first.
    Fresh,
    /// Most copied text first.
    Copied,
    /// Most changed against the basis first.
    Changed,
    /// Most of the basis removed first.
    Removed,
    /// Most recently modified first.
    Time,
}

impl SortKey {
    pub(crate) const ALL: [SortKey; 6] = [
        SortKey::Path,
        SortKey::Fresh,
        SortKey::Copied,
        SortKey::Changed,
        SortKey::Removed,
        SortKey::Time,
    ];

    pub(crate) fn next(self) -> SortKey {
        let at = SortKey::ALL.iter().position(|&k| k == self).unwrap_or(0);
        SortKey::ALL[(at + 1) % SortKey::ALL.len()]
    }

    pub(crate) fn label(self) -> &'static str {
        match self {
            SortKey::Path => "path",
            SortKey::Fresh => "fresh %",
            SortKey::Copied => "copied %",
            SortKey::Changed => "changed %",
            SortKey::Removed => "removed %",
            SortKey::Time => "modified",
        }
    }

    /// Whether the order reads the shares.
    fn by_share(self) -> bool {
        matches!(self, SortKey::Changed | SortKey::Removed)
    }

    fn cmp(self, a: &DocRow, b: &DocRow, shares: &Shares) -> Ordering {
        match self {
            SortKey::Path => Ordering::Equal,
            SortKey::Fresh => b.fresh_percent.total_cmp(&a.fresh_percent),
            SortKey::Copied => a.fresh_percent.total_cmp(&b.fresh_percent),
            SortKey::Changed | SortKey::Removed => {
                self.share(b, shares).total_cmp(&self.share(a, shares))
            }
            SortKey::Time => b.mtime_ns.cmp(&a.mtime_ns),
        }
        .then_with(|| a.path.cmp(&b.path))
    }

    /// The share a share key orders by, most first: one not known yet is
    /// below every share, so last.
    fn share(self, d: &DocRow, shares: &Shares) -> f64 {
        let v = match self {
            SortKey::Removed => shares.removed(d.id),
            _ => shares.changed(d.id),
        };
        v.unwrap_or(f64::NEG_INFINITY)
    }
}

/// The documents' changed and removed shares against the basis
/// (`Command::Shares`), as the engine finds them.
#[derive(Debug, Default)]
pub(crate) struct Shares {
    /// What they are measured against.
    pub(crate) basis: Basis,
    /// By version id.
    of: HashMap<u32, PageChange>,
    /// (done, total) of the run under way, None when none is.
    pub(crate) running: Option<(usize, usize)>,
    /// Why the last run stopped short.
    pub(crate) error: Option<String>,
}

impl Shares {
    /// Version `id`'s change, once measured.
    pub(crate) fn get(&self, id: u32) -> Option<&PageChange> {
        self.of.get(&id)
    }

    pub(crate) fn changed(&self, id: u32) -> Option<f64> {
        self.get(id).and_then(PageChange::changed_percent)
    }

    pub(crate) fn removed(&self, id: u32) -> Option<f64> {
        self.get(id).and_then(PageChange::removed_percent)
    }
}

/// A share a filter term bounds (`changed>10`).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Share {
    Fresh,
    Copied,
    Changed,
    Removed,
}

/// A filter term on a share: `changed>10`, `removed>=5%`, `fresh<50`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Bound {
    share: Share,
    op: Ordering,
    /// The comparison holds at equality (`>=`, `<=`, `=`).
    or_equal: bool,
    value: f64,
}

impl Bound {
    fn parse(term: &str) -> Option<Bound> {
        let names = [
            ("fresh", Share::Fresh),
            ("copied", Share::Copied),
            ("changed", Share::Changed),
            ("removed", Share::Removed),
        ];
        let (name, share) = names.into_iter().find(|(n, _)| term.starts_with(n))?;
        let rest = &term[name.len()..];
        let ops = [
            (">=", Ordering::Greater, true),
            ("<=", Ordering::Less, true),
            (">", Ordering::Greater, false),
            ("<", Ordering::Less, false),
            ("=", Ordering::Equal, true),
        ];
        let (o, op, or_equal) = ops.into_iter().find(|(o, ..)| rest.starts_with(o))?;
        let number = rest[o.len()..]
            .strip_suffix('%')
            .unwrap_or(&rest[o.len()..]);
        let value: f64 = number.parse().ok().filter(|v: &f64| v.is_finite())?;
        Some(Bound {
            share,
            op,
            or_equal,
            value,
        })
    }

    /// Whether row `d` is within the bound; a share not known is not.
    fn holds(&self, d: &DocRow, shares: &Shares) -> bool {
        let v = match self.share {
            Share::Fresh => Some(d.fresh_percent),
            Share::Copied => Some(100.0 - d.fresh_percent),
            Share::Changed => shares.changed(d.id),
            Share::Removed => shares.removed(d.id),
        };
        // Compared as shown: one decimal.
        v.is_some_and(|v| {
            let o = ((v * 10.0).round()).total_cmp(&(self.value * 10.0).round());
            o == self.op || (self.or_equal && o == Ordering::Equal)
        })
    }
}

/// A filter split into the words the path must match and the bounds on
/// shares, once as it is set (each frame asks for every row's matches).
#[derive(Debug, Default)]
struct Terms {
    words: String,
    bounds: Vec<Bound>,
}

impl Terms {
    fn of(filter: &str) -> Terms {
        let mut words = Vec::new();
        let mut bounds = Vec::new();
        for t in filter.split_whitespace() {
            match Bound::parse(t) {
                Some(b) => bounds.push(b),
                None => words.push(t),
            }
        }
        Terms {
            words: words.join(" "),
            bounds,
        }
    }

    /// Whether a bound reads the changed or removed share.
    fn reads_shares(&self) -> bool {
        (self.bounds.iter()).any(|b| matches!(b.share, Share::Changed | Share::Removed))
    }
}

/// New rows up to this many go into the kept order one by one (a binary
/// search and a move each); more are sorted with it.
const INSERTED: usize = 256;

/// `view` (positions in `old`, every row of it, in order) as positions in
/// `new`: rows still there keep their place, rows not in `old` follow at the
/// end; with the number kept. None when `view` is not every row. A chunk
/// the two share is carried whole, unread: a change reads the rows it
/// touched, not 100,000.
fn carried_order(old: &Documents, new: &Documents, view: &[u32]) -> Option<(Vec<u32>, usize)> {
    if view.len() != old.len() {
        return None;
    }
    let mut new_of_old = vec![u32::MAX; old.len()];
    let mut carried = vec![false; new.len()];
    let (mut a, mut b) = (old.chunks().peekable(), new.chunks().peekable());
    // Rows into the chunks at the front of `a` and `b`.
    let (mut i, mut j) = (0, 0);
    while let (Some(&(at, x)), Some(&(bt, y))) = (a.peek(), b.peek()) {
        if i == 0 && j == 0 && Arc::ptr_eq(x, y) {
            for k in 0..x.len() {
                new_of_old[at + k] = (bt + k) as u32;
                carried[bt + k] = true;
            }
            a.next();
            b.next();
            continue;
        }
        let (o, n) = (&x[i], &y[j]);
        let (step_a, step_b) = match o.id.cmp(&n.id) {
            Ordering::Less => (true, false),
            Ordering::Greater => (false, true),
            Ordering::Equal => {
                // A row whose sort keys changed (a rename, a touch) goes in
                // again as a new one.
                if same_keys(o, n) {
                    new_of_old[at + i] = (bt + j) as u32;
                    carried[bt + j] = true;
                }
                (true, true)
            }
        };
        if step_a {
            i += 1;
            if i == x.len() {
                a.next();
                i = 0;
            }
        }
        if step_b {
            j += 1;
            if j == y.len() {
                b.next();
                j = 0;
            }
        }
    }
    let mut order: Vec<u32> = view
        .iter()
        .map(|&o| new_of_old[o as usize])
        .filter(|&n| n != u32::MAX)
        .collect();
    let kept = order.len();
    order.extend((0..new.len() as u32).filter(|&n| !carried[n as usize]));
    Some((order, kept))
}

/// Whether every sort key of a row is unchanged. A row built again keeps
/// its path shared, so the path is compared by pointer first.
fn same_keys(a: &DocRow, b: &DocRow) -> bool {
    (Arc::ptr_eq(&a.path, &b.path) || a.path == b.path)
        && a.mtime_ns == b.mtime_ns
        && a.fresh_percent.to_bits() == b.fresh_percent.to_bits()
}

pub struct DocList {
    docs: Documents,
    filter: String,
    /// The filter's words and bounds.
    terms: Terms,
    sort: SortKey,
    reverse: bool,
    /// Whether the filter's words rank their matches (best first); a sort
    /// asked while they filter orders the matches by its key instead, until
    /// the filter is cleared.
    rank: bool,
    /// Indices into `docs` of the rows shown, in order.
    view: Vec<u32>,
    pub cursor: Cursor,
    matcher: Box<dyn Matcher>,
    /// The shares the order and the filter may read.
    pub(crate) shares: Shares,
}

impl DocList {
    pub fn new(matcher: Box<dyn Matcher>) -> DocList {
        DocList {
            docs: Documents::default(),
            filter: String::new(),
            terms: Terms::default(),
            sort: SortKey::Path,
            reverse: false,
            rank: true,
            view: Vec::new(),
            cursor: Cursor::default(),
            matcher,
            shares: Shares::default(),
        }
    }

    pub(crate) fn filter(&self) -> &str {
        &self.filter
    }

    pub(crate) fn sort(&self) -> (SortKey, bool) {
        (self.sort, self.reverse)
    }

    /// All documents of the snapshot.
    pub(crate) fn all(&self) -> &Documents {
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
        self.docs.at(self.view[i] as usize)
    }

    pub(crate) fn selected(&self) -> Option<&DocRow> {
        (self.cursor.selected < self.view.len()).then(|| self.row(self.cursor.selected))
    }

    pub(crate) fn set_docs(&mut self, docs: Documents, height: usize) {
        if docs.same(&self.docs) {
            return;
        }
        let keep = self.selected_id();
        let old = std::mem::replace(&mut self.docs, docs);
        match carried_order(&old, &self.docs, &self.view).filter(|_| self.filter.is_empty()) {
            // The last order, the new rows at its end: a stable sort of an
            // almost sorted list is a merge (100,000 rows: a full sort per
            // snapshot was half the time from an edit to the screen).
            Some((mut view, kept)) => {
                let (sort, reverse) = (self.sort, self.reverse);
                let (docs, shares) = (&self.docs, &self.shares);
                let cmp = |a: u32, b: u32| {
                    let o = sort.cmp(docs.at(a as usize), docs.at(b as usize), shares);
                    if reverse { o.reverse() } else { o }
                };
                // The kept rows are in order (their keys are unchanged, see
                // `same_keys`): the new ones go
                // in by binary search, after their equals, as a stable sort
                // would put them. Comparing every row again (100,000 paths
                // at each change) was most of the screen's time.
                debug_assert!(view[..kept].is_sorted_by(|&a, &b| cmp(a, b).is_le()));
                let new = view.split_off(kept);
                if new.len() > INSERTED && sort.by_share() {
                    // Sorted by shares looked up once a row (see `refresh`).
                    view.extend(new);
                    return self.refresh(Some(view), false, keep, height);
                } else if new.len() > INSERTED {
                    view.extend(new);
                    view.sort_by(|&a, &b| cmp(a, b));
                } else {
                    for n in new {
                        let at = view.partition_point(|&x| cmp(x, n).is_le());
                        view.insert(at, n);
                    }
                }
                self.refresh(Some(view), true, keep, height);
            }
            None => self.refresh(None, false, keep, height),
        }
    }

    pub(crate) fn set_filter(&mut self, filter: &str, height: usize) {
        if filter == self.filter {
            return;
        }
        // Typing on extends the pattern: its matches are among the current
        // rows (a subsequence of the longer pattern is one of the shorter),
        // ranked again by their new scores. Not so for a bound on a share
        // (`changed<1` to `changed<10` widens it).
        let terms = Terms::of(filter);
        let narrow = filter.starts_with(self.filter.as_str())
            && terms.bounds.is_empty()
            && self.terms.bounds.is_empty();
        // A pattern selects its best match, as fzf does (issue 41: enter
        // opened the row selected before, still among the matches); a
        // cleared one keeps the row, to see it among its neighbours.
        let keep = if filter.is_empty() {
            self.rank = true;
            self.selected_id()
        } else {
            self.cursor = Cursor::default();
            None
        };
        self.filter = filter.to_string();
        self.terms = terms;
        let candidates = narrow.then(|| std::mem::take(&mut self.view));
        self.refresh(candidates, false, keep, height);
    }

    /// A new order starts at its top: what was selected mid-way in the old
    /// order says nothing about where the user wants to look in the new one.
    /// While the filter's words rank the matches, any sort (the current
    /// one too) orders them by its key instead.
    pub(crate) fn set_sort(&mut self, sort: SortKey, reverse: bool, height: usize) {
        let unrank = self.ranked();
        if unrank || (sort, reverse) != (self.sort, self.reverse) {
            // Only words being filtered by stop ranking: a filter set
            // after a sort ranks its matches.
            self.rank &= self.terms.words.is_empty();
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
        let words = &self.terms.words;
        if words.is_empty() {
            return Vec::new();
        }
        self.matcher.indices(words, &self.row(i).path)
    }

    /// Whether the filter has words to rank its matches by (bounds on
    /// shares alone keep the order).
    pub(crate) fn ranked(&self) -> bool {
        self.rank && !self.terms.words.is_empty()
    }

    /// Measure the shares against `basis` from now on: those of another
    /// basis are dropped.
    pub(crate) fn set_basis(&mut self, basis: Basis, height: usize) {
        if basis != self.shares.basis {
            self.shares = Shares {
                basis,
                ..Shares::default()
            };
            self.reread_shares(None, height);
        }
    }

    /// The engine's latest shares, if of the basis asked for.
    pub(crate) fn receive_shares(&mut self, u: &SharesUpdate, height: usize) {
        let s = &mut self.shares;
        if u.basis != s.basis {
            return;
        }
        s.running = (!u.finished).then_some((u.done, u.total));
        s.error.clone_from(&u.error);
        if u.changes.is_empty() {
            return;
        }
        s.of.extend(u.changes.iter().copied());
        let ids: Vec<u32> = u.changes.iter().map(|(id, _)| *id).collect();
        self.reread_shares(Some(&ids), height);
    }

    /// The rows again where the order or the filter reads the shares,
    /// those of versions `changed` (None: any) new or changed.
    fn reread_shares(&mut self, changed: Option<&[u32]>, height: usize) {
        if !self.terms.reads_shares() && !self.sort.by_share() {
            return;
        }
        let keep = self.selected_id();
        let few = changed.filter(|c| c.len() <= INSERTED);
        match few {
            // An edit's few pairs: those rows go to their new places, the
            // rest keep theirs (their shares are the ones they were sorted
            // by), as a snapshot's new rows go in.
            Some(ids) if self.filter.is_empty() && self.view.len() == self.docs.len() => {
                let moved: HashSet<u32> = (ids.iter())
                    .filter_map(|&id| self.docs.position(id))
                    .map(|p| p as u32)
                    .collect();
                let mut view = std::mem::take(&mut self.view);
                view.retain(|p| !moved.contains(p));
                let (docs, shares, sort, reverse) =
                    (&self.docs, &self.shares, self.sort, self.reverse);
                let cmp = |a: u32, b: u32| {
                    let o = sort.cmp(docs.at(a as usize), docs.at(b as usize), shares);
                    if reverse { o.reverse() } else { o }
                };
                for n in moved {
                    let at = view.partition_point(|&x| cmp(x, n).is_le());
                    view.insert(at, n);
                }
                self.refresh(Some(view), true, keep, height);
            }
            _ => self.refresh(None, false, keep, height),
        }
    }

    fn selected_id(&self) -> Option<u32> {
        self.selected().map(|d| d.id)
    }

    #[cfg(test)]
    pub(crate) fn view(&self) -> &[u32] {
        &self.view
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
        let (docs, shares) = (&self.docs, &self.shares);
        let mut view = candidates.unwrap_or_else(|| (0..docs.len() as u32).collect());
        let (sort, reverse) = (self.sort, self.reverse);
        // A share looked up once a row, not twice a comparison (a sort of
        // 100,000 rows by their shares was a quarter of a second).
        let keys: Option<Vec<f64>> = (sort.by_share() && !sorted).then(|| {
            (0..docs.len())
                .into_par_iter()
                .map(|i| sort.share(docs.at(i), shares))
                .collect()
        });
        let by_key = |a: u32, b: u32| {
            let (x, y) = (docs.at(a as usize), docs.at(b as usize));
            let o = match &keys {
                Some(k) => {
                    (k[b as usize].total_cmp(&k[a as usize])).then_with(|| x.path.cmp(&y.path))
                }
                None => sort.cmp(x, y, shares),
            };
            if reverse { o.reverse() } else { o }
        };
        let Terms { words, bounds } = &self.terms;
        if !bounds.is_empty() {
            let within = |i: &u32| bounds.iter().all(|b| b.holds(docs.at(*i as usize), shares));
            view = view.into_par_iter().filter(within).collect();
        }
        if !words.is_empty() {
            // Ranked as fzf ranks: the best match first; of equals the
            // shorter path (fzf's tiebreak by length: `create-user.rst`
            // before `create-user-copy.rst`), then the list's order.
            let (m, pattern) = (&self.matcher, words.as_str());
            let mut scored: Vec<(i64, u32)> = view
                .into_par_iter()
                .filter_map(|i| m.score(pattern, &docs.at(i as usize).path).map(|s| (s, i)))
                .collect();
            let len = |i: u32| docs.at(i as usize).path.len();
            if self.rank {
                scored.par_sort_unstable_by(|&(sa, a), &(sb, b)| {
                    sb.cmp(&sa)
                        .then_with(|| len(a).cmp(&len(b)))
                        .then_with(|| by_key(a, b))
                });
            } else {
                scored.par_sort_unstable_by(|&(_, a), &(_, b)| by_key(a, b));
            }
            view = scored.into_iter().map(|(_, i)| i).collect();
        } else if !sorted {
            view.par_sort_unstable_by(|&a, &b| by_key(a, b));
        }
        self.view = view;
        // Found by position: reading every row shown would be a cache
        // miss each.
        let at = keep.and_then(|id| self.docs.position(id));
        if let Some(pos) = at.and_then(|at| self.view.iter().position(|&i| i as usize == at)) {
            self.cursor.selected = pos;
        }
        self.cursor.show(self.view.len(), height);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::Fuzzy;

    fn row(id: u32, path: u32, fresh: u8) -> DocRow {
        DocRow {
            id,
            path: format!("p{path:03}.md").into(),
            version: 1,
            tokens: 10,
            fresh_percent: f64::from(fresh),
            dominant_origin: None,
            dominant_path: None,
            mtime_ns: i64::from(fresh) * 7,
        }
    }

    #[test]
    fn a_filter_ranks_the_best_match_first_and_equals_in_the_lists_order() {
        let paths = [
            "a/glossary-upgrade-guide.md",
            "b/user-page-group.md",
            "c/upgrade.md",
            "d/upgrade.md",
            "e/create-user-copy.rst",
            "e/create-user.rst",
        ];
        let docs: Vec<DocRow> = paths
            .iter()
            .enumerate()
            .map(|(i, p)| DocRow {
                path: (*p).into(),
                ..row(i as u32, 0, 0)
            })
            .collect();
        let mut list = DocList::new(Box::new(Fuzzy::default()));
        list.set_docs(Documents::new(docs, Vec::new()), 10);
        list.set_filter("upgr", 10);
        let shown: Vec<&str> = (0..list.len()).map(|i| &*list.row(i).path).collect();
        // The two whole words first, in path order; the scattered match last.
        assert_eq!(shown[..2], ["c/upgrade.md", "d/upgrade.md"]);
        assert_eq!(shown.last(), Some(&"b/user-page-group.md"));
        // Of two equal matches the shorter path first: the exact name
        // before its copy, though the copy comes first by path.
        list.set_filter("create-user", 10);
        let shown: Vec<&str> = (0..list.len()).map(|i| &*list.row(i).path).collect();
        assert_eq!(shown, ["e/create-user.rst", "e/create-user-copy.rst"]);
        list.set_filter("upgr", 10);
        // Typing on ranks again from the narrowed rows, as from scratch.
        list.set_filter("upgra", 10);
        let mut fresh = DocList::new(Box::new(Fuzzy::default()));
        fresh.set_docs(
            Documents::new(list.all().iter().cloned().collect(), Vec::new()),
            10,
        );
        fresh.set_filter("upgra", 10);
        assert_eq!(list.view(), fresh.view());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// Shares arriving in updates, a few pairs or many at a time (an
        /// edit's, a run's), leave the rows in the order a list given them
        /// all at once has, under a share key or a bound on one.
        #[test]
        fn shares_arriving_order_the_rows_as_all_at_once(
            n in 1u32..400,
            updates in proptest::collection::vec(
                proptest::collection::vec((0u32..400, 0u32..50, 0u32..50, proptest::bool::ANY), 0..300),
                1..6,
            ),
            removed in proptest::bool::ANY,
            reverse in proptest::bool::ANY,
            bounded in proptest::bool::ANY,
        ) {
            let docs = Documents::new((0..n).map(|i| row(i, i, (i % 7) as u8)).collect(), Vec::new());
            let key = if removed { SortKey::Removed } else { SortKey::Changed };
            let mut list = DocList::new(Box::new(Fuzzy::default()));
            list.set_docs(docs.clone(), 10);
            list.set_sort(key, reverse, 10);
            if bounded {
                list.set_filter("changed>20", 10);
            }
            let mut all = Vec::new();
            for u in updates {
                let changes: Vec<(u32, PageChange)> = (u.into_iter())
                    .filter(|(id, ..)| *id < n)
                    .map(|(id, kept, new, based)| {
                        let base = based.then_some(id + 1);
                        (id, PageChange { base, counts: Some([kept, kept % 3, new, 0]) })
                    })
                    .collect();
                all.extend(changes.iter().copied());
                let update = SharesUpdate {
                    basis: Basis::Predecessor,
                    changes,
                    done: 0,
                    total: 0,
                    finished: true,
                    error: None,
                };
                list.receive_shares(&update, 10);
            }
            let mut fresh = DocList::new(Box::new(Fuzzy::default()));
            fresh.set_docs(docs, 10);
            fresh.receive_shares(&SharesUpdate {
                basis: Basis::Predecessor,
                changes: all,
                done: 0,
                total: 0,
                finished: true,
                error: None,
            }, 10);
            fresh.set_sort(key, reverse, 10);
            if bounded {
                fresh.set_filter("changed>20", 10);
            }
            proptest::prop_assert_eq!(list.view(), fresh.view());
        }

        /// A snapshot after another (pages edited: new ids at the end; pages
        /// gone, added, renamed or touched under their ids), its rows shared
        /// with the first where unchanged as the engine shares them, is
        /// ordered as a list given it first would be.
        #[test]
        fn the_next_snapshot_is_ordered_as_a_first_one(
            first in proptest::collection::btree_map(0u32..3_000, 0u8..5, 0..2_500),
            edits in proptest::collection::vec((0u32..3_000, 0u8..8), 0..20),
            sort in 0usize..4,
            reverse in proptest::bool::ANY,
        ) {
            let key = [SortKey::Path, SortKey::Fresh, SortKey::Copied, SortKey::Time][sort];
            let mut paths: std::collections::BTreeMap<u32, (u32, u8)> =
                first.iter().enumerate().map(|(i, (&p, &f))| (p, (i as u32, f))).collect();
            let rows = |paths: &std::collections::BTreeMap<u32, (u32, u8)>| {
                let mut r: Vec<DocRow> = paths.iter().map(|(&p, &(id, f))| row(id, p, f)).collect();
                r.sort_by_key(|d| d.id);
                r
            };
            let before = Documents::new(rows(&paths), Vec::new());
            let mut list = DocList::new(Box::new(Fuzzy::default()));
            list.set_sort(key, reverse, 10);
            list.set_docs(before.clone(), 10);
            let mut next = 3_000;
            for (p, f) in edits {
                // 5: the page goes; 6: it is renamed (its id kept); 7: its
                // keys change under its id (a touch); else a new version.
                match f {
                    5 => {
                        paths.remove(&p);
                    }
                    6 => {
                        if let Some(v) = paths.remove(&p) {
                            paths.entry(p + 3_000).or_insert(v);
                        }
                    }
                    7 => {
                        if let Some(v) = paths.get_mut(&p) {
                            v.1 = (v.1 + 3) % 5;
                        }
                    }
                    _ => {
                        paths.insert(p, (next, f));
                        next += 1;
                    }
                }
            }
            // The rows not as they were go, and come back as they are.
            let after = rows(&paths);
            let gone: Vec<u32> = before
                .iter()
                .filter(|d| after.binary_search_by_key(&d.id, |a| a.id).map(|i| &after[i]) != Ok(*d))
                .map(|d| d.id)
                .collect();
            let new: Vec<DocRow> = after.iter().filter(|d| before.get(d.id) != Some(*d)).cloned().collect();
            let edited = before.edited(&gone, new, Vec::new());
            proptest::prop_assert_eq!(&edited, &Documents::new(after.clone(), Vec::new()));
            list.set_docs(edited, 10);
            let mut fresh = DocList::new(Box::new(Fuzzy::default()));
            fresh.set_sort(key, reverse, 10);
            fresh.set_docs(Documents::new(after, Vec::new()), 10);
            proptest::prop_assert_eq!(list.view(), fresh.view());
        }
    }
}
