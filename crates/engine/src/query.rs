//! Answers about one or two documents: the text with its origins (estimated
//! as recorded, or exact), and two documents side by side.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use super::{
    CompareView, LegendEntry, OriginView, PageCopy, PageShare, SharedPassage, Side, Target,
    VersionInfo, VersionStatus,
};
use lineage_core::fingerprint::keymap::KeyMap;
use lineage_core::text::{Format, for_each_token, prepare};
use lineage_origin::{Outcome, Run};
use lineage_similar::exact::jaccard;
use lineage_source::{self as source, SkipReason};
use lineage_store::index::{HistoryRow, IndexError, Kept, Read, Status};

/// What the engine knows of each version without asking the database.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The version's path, relative to the root.
    pub path: String,
    /// 1 for a path's first version.
    pub version: u32,
    /// Tokens in the version's text.
    pub tokens: u32,
    /// Its shingles (docs/formats.md §1).
    pub shingles: u32,
    /// Tokens not covered by a copied shingle (estimated, live settings).
    pub fresh_tokens: u32,
    /// The dominant origin's version id, if there is one (docs/formats.md §2).
    pub dominant_origin: Option<u32>,
    /// (origin, units), most first.
    pub origins: Vec<(u32, u32)>,
    /// The file's modification time when the version was seen.
    pub mtime_ns: i64,
    /// When lineage recorded the version, milliseconds since the epoch
    /// (None: an index from before it kept that).
    pub seen_ms: Option<i64>,
}

/// Every version's row, from the index's history.
pub fn rows(ix: &impl Read) -> Result<Vec<Row>, IndexError> {
    Ok(ix.history()?.into_iter().map(Row::from).collect())
}

impl From<HistoryRow> for Row {
    fn from(h: HistoryRow) -> Row {
        Row {
            path: h.path,
            version: h.version,
            tokens: h.tokens,
            shingles: h.shingles,
            fresh_tokens: h.fresh_tokens,
            dominant_origin: h.dominant_origin,
            origins: h.origins,
            mtime_ns: h.mtime_ns,
            seen_ms: h.seen_ms,
        }
    }
}

impl Row {
    pub(crate) fn fresh_percent(&self) -> f64 {
        if self.tokens == 0 {
            100.0
        } else {
            100.0 * f64::from(self.fresh_tokens) / f64::from(self.tokens)
        }
    }
}

/// Where version `id` stands in its page's history.
pub fn status_of(ix: &impl Read, rows: &[Row], id: u32) -> VersionStatus {
    match ix.current(&rows[id as usize].path) {
        Some(c) if c.id != id => VersionStatus::Replaced { latest: c.version },
        Some(c) if c.status == Status::Deleted => VersionStatus::Deleted,
        _ => VersionStatus::Live,
    }
}

/// The prepared text of version `id` with its token spans: kept by the
/// index, or else read from its file if that still holds this version;
/// otherwise why it cannot be shown.
pub fn text_of(ix: &impl Read, rows: &[Row], id: u32) -> (Result<String, String>, Vec<(u32, u32)>) {
    let path = &rows[id as usize].path;
    let text = bytes_of(ix, rows, id).map(|b| prepare(&b, Format::from_path(path)).into_owned());
    let mut spans = Vec::new();
    if let Ok(t) = &text {
        for_each_token(t, |s, _| spans.push((s.start as u32, s.end as u32)));
    }
    (text, spans)
}

/// The file bytes of version `id` (before they are prepared): kept by the
/// index, or else read from its file if that still holds this version;
/// otherwise why they cannot be had.
pub fn bytes_of(ix: &impl Read, rows: &[Row], id: u32) -> Result<Vec<u8>, String> {
    let row = &rows[id as usize];
    let gone = |why: &str| Err(format!("{} v{}: {why}", row.path, row.version));
    let not_kept = |kept: &Kept| match kept {
        Kept::Dropped => "its text was dropped to keep the history within history_budget",
        _ => "its text was not kept (history_budget is 0, or an older lineage indexed it)",
    };
    match (ix.text(id), ix.current(&row.path)) {
        (Ok(Kept::Text(bytes)), _) => Ok(bytes),
        (Err(e), _) => gone(&format!("its stored text cannot be read ({e})")),
        (Ok(kept), Some(c)) if c.id != id => {
            gone(&format!("a later version replaced it; {}", not_kept(&kept)))
        }
        (Ok(kept), Some(c)) if c.status == Status::Deleted => {
            gone(&format!("deleted; {}", not_kept(&kept)))
        }
        // Its stored size bounds the read: the file is that version or not.
        (Ok(_), Some(c)) => {
            match source::read_file(&source::name::path(ix.root(), &row.path), c.size) {
                Ok(bytes) if ix.polynomial().fingerprint(&bytes, 1) == c.hash => Ok(bytes),
                Ok(_) | Err(SkipReason::TooLarge { .. }) => {
                    gone("the file changed since; its new version is on its way")
                }
                Err(e) => gone(&format!("cannot read it ({e})")),
            }
        }
        (Ok(_), None) => gone("not in the index"),
    }
}

/// The exact outcome of version `id` (docs/formats.md §3): each shingle's origin is
/// the earliest version containing it. Reads the cached fingerprints of every
/// earlier version, keeping only the keys `id` has.
pub(crate) fn exact_outcome(ix: &impl Read, id: u32) -> Result<Outcome, IndexError> {
    const CHUNK: u32 = 256;
    let k = ix.params().k;
    let roller = ix.roller();
    let fps = ix.fingerprints(id, id + 1)?.pop().unwrap_or_default();
    if fps.is_empty() && ix.db().tokens(id)? > 0 {
        return Err(IndexError::Forgotten(id));
    }
    let mut keys = Vec::new();
    roller.keys(&fps, &mut keys);
    let mut first: HashMap<u64, u32> = keys.iter().map(|&key| (key, id)).collect();
    let mut scratch = Vec::new();
    let mut from = 0;
    while from < id {
        let to = (from + CHUNK).min(id);
        for (j, doc) in (from..to).zip(ix.fingerprints(from, to)?) {
            roller.keys(&doc, &mut scratch);
            for key in &scratch {
                if let Some(o) = first.get_mut(key)
                    && *o == id
                {
                    *o = j;
                }
            }
        }
        from = to;
    }
    let labels: Vec<u32> = keys.iter().map(|key| first[key]).collect();
    let units = (0..keys.len() as u32).map(|i| (i, i + k as u32));
    Ok(Outcome::new(
        id,
        fps.len() as u32,
        keys.len() as u32,
        units,
        &labels,
    ))
}

/// Where each copied run's passage starts in its origin: the first of the
/// run's shingles found in the origin, shifted back to the run's start.
pub(crate) fn targets(
    ix: &impl Read,
    id: u32,
    runs: &[Run],
) -> Result<Vec<Option<Target>>, IndexError> {
    let k = ix.params().k as u32;
    let keys = ix.shingle_keys(id)?;
    let mut positions: HashMap<u32, KeyMap<u32>> = HashMap::new();
    let mut out = Vec::with_capacity(runs.len());
    for r in runs {
        let Some(o) = r.origin.filter(|&o| o != id) else {
            out.push(None);
            continue;
        };
        let at = match positions.entry(o) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => {
                let theirs = ix.shingle_keys(o)?;
                let mut first = KeyMap::with_capacity_and_hasher(theirs.len(), Default::default());
                for (i, key) in theirs.into_iter().enumerate() {
                    first.entry(key).or_insert(i as u32);
                }
                e.insert(first)
            }
        };
        // Shingles overlapping the run: i..i+k meets start..end.
        let lo = r.start.saturating_sub(k - 1);
        let hi = r.end.min(keys.len() as u32);
        // Shingle i at p in the origin: the run's start is at p + start - i.
        let found = (lo..hi).find_map(|i| {
            at.get(&keys[i as usize])
                .map(|&p| (i64::from(p) + i64::from(r.start) - i64::from(i)).max(0) as u32)
        });
        out.push(found.map(|token| Target { id: o, token }));
    }
    Ok(out)
}

/// The legend of an outcome: its origins' shares of the document's tokens.
fn legend(ix: &impl Read, rows: &[Row], o: &Outcome) -> Vec<LegendEntry> {
    let mut tokens: HashMap<u32, u32> = HashMap::new();
    for r in &o.runs {
        *tokens.entry(r.origin.unwrap_or(o.id)).or_default() += r.end - r.start;
    }
    let mut out: Vec<LegendEntry> = tokens
        .into_iter()
        .map(|(origin, n)| {
            let row = &rows[origin as usize];
            LegendEntry {
                origin,
                path: row.path.clone(),
                version: row.version,
                percent: if o.tokens == 0 {
                    0.0
                } else {
                    100.0 * f64::from(n) / f64::from(o.tokens)
                },
                commit: (origin != o.id)
                    .then(|| ix.commit_of(origin).ok().flatten())
                    .flatten(),
            }
        })
        .collect();
    out.sort_by(|a, b| {
        b.percent
            .total_cmp(&a.percent)
            .then(a.origin.cmp(&b.origin))
    });
    out
}

/// Version `id` with its origins, estimated (as recorded) or exact.
pub fn origin_view(
    ix: &impl Read,
    rows: &[Row],
    id: u32,
    exact: bool,
) -> Result<OriginView, IndexError> {
    let outcome = if exact {
        exact_outcome(ix, id)?
    } else {
        ix.outcome(id)?.ok_or(IndexError::Missing(id))?
    };
    let (text, spans) = text_of(ix, rows, id);
    let targets = targets(ix, id, &outcome.runs)?;
    let row = &rows[id as usize];
    Ok(OriginView {
        id,
        path: row.path.clone(),
        version: row.version,
        status: status_of(ix, rows, id),
        versions: versions_of(ix, rows, &row.path),
        exact,
        text,
        spans,
        legend: legend(ix, rows, &outcome),
        runs: outcome.runs,
        targets,
    })
}

/// Every version of `path`, oldest first.
fn versions_of(ix: &impl Read, rows: &[Row], path: &str) -> Vec<VersionInfo> {
    let live = ix.current(path).filter(|c| c.status == Status::Live);
    (rows.iter().enumerate())
        .filter(|(_, r)| r.path == path)
        .map(|(id, r)| VersionInfo {
            id: id as u32,
            version: r.version,
            tokens: r.tokens,
            fresh_percent: r.fresh_percent(),
            text_kept: ix.has_text(id as u32).unwrap_or(false)
                || live.is_some_and(|c| c.id == id as u32),
            mtime_ns: r.mtime_ns,
            seen_ms: r.seen_ms,
            commit: ix.commit_of(id as u32).ok().flatten(),
        })
        .collect()
}

/// Every live page of another path that copies from version `id`'s page,
/// newest first: its passages whose origin is one of the page's versions up
/// to `id` (a passage kept since an earlier version is credited to that
/// one, the earliest holding it), and where each starts there.
pub fn copies(ix: &impl Read, rows: &[Row], id: u32) -> Result<Vec<PageCopy>, IndexError> {
    let path = &rows[id as usize].path;
    let of: Vec<u32> = (0..=id)
        .filter(|&v| rows[v as usize].path == *path)
        .collect();
    let from_page = |o: &u32| of.binary_search(o).is_ok();
    let mut out = Vec::new();
    for (w, r) in rows.iter().enumerate().rev() {
        let w = w as u32;
        if r.path == *path
            || !r.origins.iter().any(|(o, _)| from_page(o))
            || status_of(ix, rows, w) != VersionStatus::Live
        {
            continue;
        }
        let outcome = ix.outcome(w)?.ok_or(IndexError::Missing(w))?;
        let passages: Vec<Run> = (outcome.runs.into_iter())
            .filter(|p| p.origin.as_ref().is_some_and(from_page))
            .collect();
        if passages.is_empty() {
            continue;
        }
        out.push(PageCopy {
            id: w,
            path: r.path.clone(),
            version: r.version,
            tokens: r.tokens,
            targets: targets(ix, w, &passages)?,
            passages,
        });
    }
    Ok(out)
}

/// `copies` by the share of each copy's tokens taken from the page, most
/// first; a stable sort, so equal shares keep [`copies`]' newest-first order.
/// The order a writer wants (the 57 % copy before the one-token ones); the
/// newest first stays one call away, [`copies`] as it comes.
pub fn by_share(copies: &mut [PageCopy]) {
    copies.sort_by(|a, b| b.percent().total_cmp(&a.percent()));
}

/// Which pages carry version `id`'s text: every live page of another path
/// that shares at least one k-shingle with it, whoever had the text first
/// (unlike [`copies`], which credits a passage to its earliest origin only),
/// most of the page's tokens first (ties: more of its own, then by path),
/// each with the passages both have.
///
/// Reads the cached fingerprints of the live pages, as `exact_outcome`
/// reads the earlier versions': the answer is exact up to 64-bit key
/// collisions, whatever the index's settings. A page of fewer than k tokens
/// shares nothing. For the TUI's "from Origin": call it with the index, the
/// rows and the version shown (`OriginView::id`), off the UI thread as the
/// other queries are; the words of each passage come from [`text_of`] and
/// [`super::token_bytes`] on either side.
pub fn shared(ix: &impl Read, rows: &[Row], id: u32) -> Result<Vec<PageShare>, IndexError> {
    const CHUNK: u32 = 256;
    let k = ix.params().k as u32;
    let row = &rows[id as usize];
    let keys = ix.shingle_keys(id)?;
    if keys.is_empty() {
        if ix.db().tokens(id)? >= k {
            return Err(IndexError::Forgotten(id));
        }
        return Ok(Vec::new());
    }
    // Where each key first stands in the page: a passage is followed along
    // the page from there.
    let mut at: HashMap<u64, u32> = HashMap::with_capacity(keys.len());
    for (i, &key) in keys.iter().enumerate() {
        at.entry(key).or_insert(i as u32);
    }
    let live: Vec<u32> = (rows.iter().enumerate())
        .filter(|(w, r)| {
            r.path != row.path && status_of(ix, rows, *w as u32) == VersionStatus::Live
        })
        .map(|(w, _)| w as u32)
        .collect();
    let roller = ix.roller();
    let mut theirs = Vec::new();
    let mut out = Vec::new();
    let mut next = 0;
    while next < live.len() {
        let from = live[next];
        let to = from.saturating_add(CHUNK).min(rows.len() as u32);
        for (w, fps) in (from..to).zip(ix.fingerprints(from, to)?) {
            if live.get(next) != Some(&w) {
                continue;
            }
            next += 1;
            roller.keys(&fps, &mut theirs);
            let passages = shared_passages(&keys, &at, &theirs, k);
            if passages.is_empty() {
                continue;
            }
            let r = &rows[w as usize];
            let page_tokens = covered(passages.iter().map(|p| p.page));
            let shared_tokens = covered(passages.iter().map(|p| p.there));
            let share = |n: u32, of: u32| {
                if of == 0 {
                    0.0
                } else {
                    100.0 * f64::from(n) / f64::from(of)
                }
            };
            out.push(PageShare {
                id: w,
                path: r.path.clone(),
                version: r.version,
                tokens: r.tokens,
                page_tokens,
                page_percent: share(page_tokens, row.tokens),
                shared_tokens,
                percent: share(shared_tokens, r.tokens),
                passages,
            });
        }
    }
    out.sort_by(|a, b| {
        (b.page_tokens, b.shared_tokens)
            .cmp(&(a.page_tokens, a.shared_tokens))
            .then_with(|| a.path.as_bytes().cmp(b.path.as_bytes()))
    });
    Ok(out)
}

/// The passages `theirs` shares with the page of shingle keys `page` (`at`:
/// each key's first position there): runs of consecutive shingles of
/// `theirs` that follow consecutive shingles of the page, as token ranges
/// on both sides. A run continues along the page while it can and else
/// starts again where its key first stands.
fn shared_passages(
    page: &[u64],
    at: &HashMap<u64, u32>,
    theirs: &[u64],
    k: u32,
) -> Vec<SharedPassage> {
    let mut out: Vec<SharedPassage> = Vec::new();
    // The open run: where it starts in theirs and the page, its last shingle
    // in the page, and whether it reached shingle i - 1 of theirs.
    let mut open: Option<(u32, u32, u32)> = None;
    let close = |out: &mut Vec<SharedPassage>, (i0, p0, p): (u32, u32, u32), i: u32| {
        out.push(SharedPassage {
            page: (p0, p + k),
            there: (i0, i - 1 + k),
        });
    };
    for (i, key) in theirs.iter().enumerate() {
        let i = i as u32;
        let follows = open.is_some_and(|(_, _, p)| page.get(p as usize + 1) == Some(key));
        if follows {
            if let Some(run) = open.as_mut() {
                run.2 += 1;
            }
            continue;
        }
        if let Some(run) = open.take() {
            close(&mut out, run, i);
        }
        open = at.get(key).map(|&p| (i, p, p));
    }
    if let Some(run) = open {
        close(&mut out, run, theirs.len() as u32);
    }
    out
}

/// Tokens in the union of `ranges`.
fn covered(ranges: impl Iterator<Item = (u32, u32)>) -> u32 {
    let mut r: Vec<(u32, u32)> = ranges.collect();
    r.sort_unstable();
    let (mut n, mut reach) = (0, 0);
    for (s, e) in r {
        let s = s.max(reach);
        if e > s {
            n += e - s;
            reach = e;
        }
    }
    n
}

/// Token ranges of `keys`' shingles that `other` (sorted) also has, merged.
pub(crate) fn shared_ranges(keys: &[u64], other: &[u64], k: u32) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = Vec::new();
    for (i, key) in keys.iter().enumerate() {
        if other.binary_search(key).is_err() {
            continue;
        }
        let (s, e) = (i as u32, i as u32 + k);
        match out.last_mut() {
            Some(last) if last.1 >= s => last.1 = e,
            _ => out.push((s, e)),
        }
    }
    out
}

/// Versions `a` and `b` side by side with their shared passages.
pub(crate) fn compare(
    ix: &impl Read,
    rows: &[Row],
    a: u32,
    b: u32,
) -> Result<CompareView, IndexError> {
    let k = ix.params().k as u32;
    let (ka, kb) = (ix.shingle_keys(a)?, ix.shingle_keys(b)?);
    let sorted = |v: &[u64]| {
        let mut s = v.to_vec();
        s.sort_unstable();
        s.dedup();
        s
    };
    let (sa, sb) = (sorted(&ka), sorted(&kb));
    let side = |id: u32, keys: &[u64], other: &[u64]| {
        let (text, spans) = text_of(ix, rows, id);
        Side {
            id,
            path: rows[id as usize].path.clone(),
            version: rows[id as usize].version,
            text,
            spans,
            shared: shared_ranges(keys, other, k),
        }
    };
    Ok(CompareView {
        similarity: jaccard(&sa, &sb),
        a: side(a, &ka, &sb),
        b: side(b, &kb, &sa),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_ranges_merge_overlapping_shingles() {
        // k = 3: shingles 1 and 2 of a cover tokens 1..5; shingle 6 covers 6..9.
        let keys = [10, 11, 12, 13, 14, 15, 16];
        let other = [11, 12, 16];
        assert_eq!(shared_ranges(&keys, &other, 3), vec![(1, 5), (6, 9)]);
        assert_eq!(shared_ranges(&keys, &[], 3), vec![]);
    }

    #[test]
    fn shared_passages_follow_the_page_on_both_sides() {
        // k = 3. The page: keys 1..=9. Theirs: 0, then 3 4 5 (page shingles
        // 2..=4), 99, then 7 8 (page 6..=7), then 3 again (page 2).
        let page: Vec<u64> = (1..=9).collect();
        let at: HashMap<u64, u32> = page
            .iter()
            .enumerate()
            .map(|(i, &k)| (k, i as u32))
            .collect();
        let theirs = [0, 3, 4, 5, 99, 7, 8, 3];
        let p = shared_passages(&page, &at, &theirs, 3);
        let pairs: Vec<_> = p.iter().map(|s| (s.page, s.there)).collect();
        assert_eq!(
            pairs,
            [((2, 7), (1, 6)), ((6, 10), (5, 9)), ((2, 5), (7, 10))]
        );
        // The page's tokens: 2..7, 6..10 and 2..5 cover 2..10.
        assert_eq!(covered(p.iter().map(|s| s.page)), 8);
        assert_eq!(covered(p.iter().map(|s| s.there)), 9);
        assert!(shared_passages(&page, &at, &[0, 99], 3).is_empty());
    }

    #[test]
    fn by_share_puts_the_largest_copy_first_and_keeps_ties_newest_first() {
        let copy = |id: u32, tokens: u32, copied: u32| PageCopy {
            id,
            path: format!("p{id}"),
            version: 1,
            tokens,
            passages: vec![Run {
                start: 0,
                end: copied,
                origin: Some(0),
            }],
            targets: vec![None],
        };
        let mut c = vec![
            copy(5, 1299, 1),
            copy(4, 100, 57),
            copy(3, 10, 1),
            copy(2, 200, 114),
        ];
        by_share(&mut c);
        let ids: Vec<u32> = c.iter().map(|c| c.id).collect();
        assert_eq!(ids, [4, 2, 3, 5]);
    }
}
