//! Stale copies (docs/algorithms.md §13): the passages a page copied from
//! another page whose text has since changed there, and the reverse, the
//! passages a page changed that its origin still holds as they were (a fix
//! made in one place only).
//!
//! Both are read from the index alone. A passage is what the origin pass
//! credited to another path's version `o` (a run of its outcome); its
//! shingles are those of the run found in `o`. Each is looked up in the
//! other side's newest version: a passage is stale where some of its
//! shingles are no longer there. Words and places come from the token diff
//! of the two versions (§12), aligned run by run.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::ops::Range;

use super::changed::{Aligned, align, changes, token_keys};
use super::query::{Row, text_of};
use lineage_store::index::{IndexError, Read, Status};

/// What went stale in a passage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StaleKind {
    /// The origin changed some of the words the page still has.
    Changed,
    /// The origin no longer holds any of them.
    Removed,
    /// The page changed words of a passage it copied; the origin still
    /// holds them as they were.
    ChangedHere,
}

impl StaleKind {
    /// The origin moved on and the page did not (the first three); else
    /// the page moved on and the origin did not.
    pub fn in_origin(self) -> bool {
        matches!(self, StaleKind::Changed | StaleKind::Removed)
    }
}

/// One place where the two sides differ inside a stale passage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    /// The page's tokens there now (its newest version; empty: none).
    pub here: Range<u32>,
    /// The origin's tokens there now (its newest version; empty: none).
    pub there: Range<u32>,
}

/// A passage of a page that went stale.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StalePassage {
    /// Which side moved on.
    pub kind: StaleKind,
    /// Where the passage stands in the page's newest version (empty, where
    /// it stood, when the page removed it).
    pub tokens: Range<u32>,
    /// The version it was copied from.
    pub origin: u32,
    /// The origin page's newest version (None: deleted).
    pub origin_now: Option<u32>,
    /// Where the passage stands in the origin's newest version (empty
    /// where the origin removed it, or is deleted).
    pub there: Range<u32>,
    /// The first version that no longer held the passage as copied: the
    /// origin's ([`StaleKind::in_origin`]) or the page's. None where the
    /// origin page is deleted.
    pub changed_in: Option<u32>,
    /// Tokens of the passage (as copied) that are not the same now.
    pub stale_tokens: u32,
    /// The passage's tokens as copied (in the page's version that copied
    /// them; the newest for a change in the origin).
    pub copied: u32,
    /// Each place the two sides differ (none where a text is not kept).
    pub differences: Vec<Difference>,
}

impl StalePassage {
    /// A passage of `run`'s tokens copied from `origin`, all stale until
    /// aligned, placed nowhere yet.
    fn new(
        kind: StaleKind,
        origin: u32,
        now: u32,
        changed_in: u32,
        run: &lineage_origin::Run,
    ) -> StalePassage {
        let len = run.end - run.start;
        StalePassage {
            kind,
            tokens: 0..0,
            origin,
            origin_now: Some(now),
            there: 0..0,
            changed_in: Some(changed_in),
            stale_tokens: len,
            copied: len,
            differences: Vec::new(),
        }
    }
}

/// A page with stale passages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StalePage {
    /// The page's newest version.
    pub id: u32,
    /// Its stale passages in page order (a change in the origin first).
    pub passages: Vec<StalePassage>,
}

impl StalePage {
    /// Tokens stale in all its passages.
    pub fn stale_tokens(&self) -> u32 {
        self.passages.iter().map(|p| p.stale_tokens).sum()
    }
}

/// What `stale` found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stale {
    /// Pages with stale passages, most stale tokens first (ties in the
    /// index's order).
    pub pages: Vec<StalePage>,
    /// Stale passages whose words could not be aligned, a version's text
    /// being no longer kept (their places are the passage's ends only).
    pub unaligned: u32,
}

/// Prepared texts with their token spans and diff keys, read once.
#[derive(Default)]
pub struct Texts(HashMap<u32, Option<Text>>);

/// A version's prepared text.
pub struct Text {
    /// As the index prepared it.
    pub text: String,
    /// Each token's byte span.
    pub spans: Vec<(u32, u32)>,
    keys: Vec<u64>,
    /// Byte offset of each line after the first.
    lines: Vec<usize>,
}

impl Texts {
    /// Version `id`'s text if read already.
    pub fn peek(&self, id: u32) -> Option<&Text> {
        self.0.get(&id).and_then(Option::as_ref)
    }

    /// Version `id`'s text, None where it is not kept (nor on disk).
    pub fn get(&mut self, ix: &impl Read, rows: &[Row], id: u32) -> Option<&Text> {
        self.0
            .entry(id)
            .or_insert_with(|| {
                let (text, spans) = text_of(ix, rows, id);
                Some(Text::new(text.ok()?, spans))
            })
            .as_ref()
    }
}

/// A shingle: the token it starts at, and its key.
type Shingle = (u32, u64);

impl Text {
    /// A prepared text with its token spans.
    pub fn new(text: String, spans: Vec<(u32, u32)>) -> Text {
        let keys = token_keys(&text);
        let lines = (text.match_indices('\n')).map(|(i, _)| i + 1).collect();
        Text {
            text,
            spans,
            keys,
            lines,
        }
    }

    /// The words of tokens `r` with up to `context` tokens either side
    /// (inside `within`): before, `r`'s own, after, as written (an empty
    /// `r` stands where it is, between two tokens).
    pub fn around(&self, r: &Range<u32>, within: &Range<u32>, context: u32) -> [&str; 3] {
        let n = self.spans.len() as u32;
        let (r0, r1) = (r.start.min(n), r.end.min(n));
        let before = r0.saturating_sub(context).max(within.start).min(r0);
        let after = (r1 + context).min(within.end.min(n)).max(r1);
        let start = |i: u32| (self.spans.get(i as usize)).map_or(self.text.len(), |s| s.0 as usize);
        let end = |i: u32| match i {
            0 => 0,
            i => self.spans[i as usize - 1].1 as usize,
        };
        let (a, b) = if r0 < r1 {
            (start(r0), end(r1))
        } else {
            (end(r0), end(r0))
        };
        let (c, d) = (start(before).min(a), end(after).max(b));
        let get = |x: usize, y: usize| self.text.get(x..y).unwrap_or("");
        [get(c, a), get(a, b), get(b, d)]
    }

    /// The words of tokens `r`, as written ("" past the end).
    pub fn words(&self, r: &Range<u32>) -> &str {
        super::token_bytes(&self.spans, r.clone())
            .and_then(|b| self.text.get(b))
            .unwrap_or("")
    }

    /// The lines (from 1, both included) tokens `r` stand on.
    pub fn lines(&self, r: &Range<u32>) -> [usize; 2] {
        let line = |b: usize| self.lines.partition_point(|&s| s <= b) + 1;
        match super::token_bytes(&self.spans, r.clone()) {
            Some(b) => [line(b.start), line(b.end.saturating_sub(1).max(b.start))],
            None => [0, 0],
        }
    }
}

/// Tokens of context shown either side of a difference in the TUI's list
/// and `stale`'s text.
pub const CONTEXT: u32 = 6;

/// The stale passages for the TUI (`Command::Stale`): each with its words,
/// read off the index, most stale pages first.
#[derive(Clone, Debug, PartialEq)]
pub struct StaleView {
    /// The page asked about (its newest version), or None for every page.
    pub only: Option<u32>,
    /// Every stale passage, page by page.
    pub passages: Vec<StaleLine>,
    /// Passages told without their words (a text no longer kept).
    pub unaligned: u32,
}

/// A stale passage with its words.
#[derive(Clone, Debug, PartialEq)]
pub struct StaleLine {
    /// The page's newest version.
    pub id: u32,
    /// Its path.
    pub path: String,
    /// Its version number.
    pub version: u32,
    /// Which side moved on.
    pub kind: StaleKind,
    /// Where the passage stands in the page.
    pub tokens: Range<u32>,
    /// Its lines there (from 1; [0, 0] where the text is not kept).
    pub lines: [usize; 2],
    /// The version it was copied from: path and number.
    pub origin: (String, u32),
    /// The first version that no longer held it: the origin's number (for
    /// a change there) or the page's.
    pub changed_in: Option<u32>,
    /// Tokens not the same on both sides.
    pub stale_tokens: u32,
    /// Each difference: the page's words, then the origin's, each as
    /// (before, changed, after) with [`CONTEXT`] tokens either side.
    pub differences: Vec<[[String; 3]; 2]>,
}

/// [`stale`] with the words, for the TUI.
pub fn stale_view(
    ix: &impl Read,
    rows: &[Row],
    only: Option<u32>,
) -> Result<StaleView, IndexError> {
    let path = only.map(|id| rows[id as usize].path.as_str());
    let (found, texts) = stale(ix, rows, path)?;
    let mut passages = Vec::new();
    for p in &found.pages {
        let row = &rows[p.id as usize];
        for x in &p.passages {
            let owned = |w: [&str; 3]| w.map(str::to_string);
            let page = texts.peek(p.id);
            let there = x.origin_now.and_then(|n| texts.peek(n));
            let differences = match (page, there) {
                (Some(page), Some(there)) => (x.differences.iter())
                    .map(|d| {
                        [
                            owned(page.around(&d.here, &x.tokens, CONTEXT)),
                            owned(there.around(&d.there, &x.there, CONTEXT)),
                        ]
                    })
                    .collect(),
                _ => Vec::new(),
            };
            let origin = &rows[x.origin as usize];
            passages.push(StaleLine {
                id: p.id,
                path: row.path.clone(),
                version: row.version,
                kind: x.kind,
                tokens: x.tokens.clone(),
                lines: page.map_or([0, 0], |t| t.lines(&x.tokens)),
                origin: (origin.path.clone(), origin.version),
                changed_in: x.changed_in.map(|v| rows[v as usize].version),
                stale_tokens: x.stale_tokens,
                differences,
            });
        }
    }
    Ok(StaleView {
        only,
        passages,
        unaligned: found.unaligned,
    })
}

/// A version's shingle keys, read once: in the text's order, sorted (to
/// look one up), and where each first stands (made when asked).
struct Shingles {
    ordered: Vec<u64>,
    sorted: Vec<u64>,
    places: Option<HashMap<u64, u32>>,
}

/// Each version's [`Shingles`], by version id.
#[derive(Default)]
struct Keys(HashMap<u32, Shingles>);

impl Keys {
    fn get(&mut self, ix: &impl Read, id: u32) -> Result<&mut Shingles, IndexError> {
        Ok(match self.0.entry(id) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => {
                let ordered = ix.shingle_keys(id)?;
                let mut sorted = ordered.clone();
                sorted.sort_unstable();
                e.insert(Shingles {
                    ordered,
                    sorted,
                    places: None,
                })
            }
        })
    }

    /// Whether version `id` holds every one of `shingles`.
    fn holds_all(
        &mut self,
        ix: &impl Read,
        id: u32,
        shingles: &[Shingle],
    ) -> Result<bool, IndexError> {
        let held = &self.get(ix, id)?.sorted;
        Ok(shingles.iter().all(|(_, k)| held.binary_search(k).is_ok()))
    }
}

/// The stale passages of every live page, or of the page at `only` (its
/// newest version, live or not); with the texts of the pages and origins
/// it names, for the words.
pub fn stale(
    ix: &impl Read,
    rows: &[Row],
    only: Option<&str>,
) -> Result<(Stale, Texts), IndexError> {
    let mut s = Search {
        ix,
        rows,
        keys: Keys::default(),
        texts: Texts::default(),
        unaligned: 0,
    };
    // Each page's versions, oldest first.
    let mut versions: HashMap<&str, Vec<u32>> = HashMap::new();
    for (id, r) in rows.iter().enumerate() {
        versions.entry(r.path.as_str()).or_default().push(id as u32);
    }
    let mut pages = Vec::new();
    let mut paths: Vec<&str> = versions.keys().copied().collect();
    paths.sort_unstable();
    for path in paths {
        let Some(c) = ix.current(path) else { continue };
        match only {
            Some(o) if o != path => continue,
            None if c.status != Status::Live => continue,
            _ => {}
        }
        let mut passages = s.in_origin(c.id, &versions)?;
        passages.extend(s.here(c.id, &versions[path])?);
        if !passages.is_empty() {
            pages.push(StalePage { id: c.id, passages });
        }
    }
    // Ties in the index's order: version folders oldest first.
    pages.sort_by(|a, b| (b.stale_tokens().cmp(&a.stale_tokens())).then(a.id.cmp(&b.id)));
    // The texts the answer shows: each page's and its origins' newest.
    for p in &pages {
        s.texts.get(ix, rows, p.id);
        for n in p.passages.iter().filter_map(|x| x.origin_now) {
            s.texts.get(ix, rows, n);
        }
    }
    let unaligned = s.unaligned;
    Ok((Stale { pages, unaligned }, s.texts))
}

/// The state of one search: what was read, kept for the next page.
struct Search<'a, R> {
    ix: &'a R,
    rows: &'a [Row],
    keys: Keys,
    texts: Texts,
    unaligned: u32,
}

/// Two file versions written and read within this many milliseconds of
/// each other are one change (text moved from page to page, saved together).
const TOGETHER_MS: i64 = 2_000;

/// A passage shorter than this many shingle lengths is a phrase pages
/// share (a heading, a line of markup), not a copy kept in step.
const PASSAGE_MIN: u32 = 2;

impl<R: Read> Search<'_, R> {
    /// Of version `p`'s runs, those copied from another page whose newest
    /// version no longer holds all of it, changed there after `p`'s page
    /// took it.
    fn in_origin(
        &mut self,
        p: u32,
        versions: &HashMap<&str, Vec<u32>>,
    ) -> Result<Vec<StalePassage>, IndexError> {
        let (ix, rows) = (self.ix, self.rows);
        let path = &rows[p as usize].path;
        let moved_on = |o: u32| {
            let op = &rows[o as usize].path;
            op != path
                && ix
                    .current(op)
                    .is_none_or(|c| c.id != o || c.status != Status::Live)
        };
        // Most pages copy only from origins as they still are: no read.
        if !rows[p as usize].origins.iter().any(|&(o, _)| moved_on(o)) {
            return Ok(Vec::new());
        }
        let k = ix.params().k as u32;
        let outcome = ix.outcome(p)?.ok_or(IndexError::Missing(p))?;
        let runs: Vec<_> = (outcome.runs.into_iter())
            .filter(|r| r.end - r.start >= PASSAGE_MIN * k && r.origin.is_some_and(moved_on))
            .collect();
        let page = self.keys_of_runs(p, &runs)?;
        let mut out = Vec::new();
        for (run, shingles) in runs.iter().zip(page) {
            let o = run.origin.unwrap_or_default();
            let op = rows[o as usize].path.as_str();
            // A deleted page has no words now to keep a copy in step with
            // (and its text often lives on under a name git did not pair).
            let Some(now) = ix.current(op).filter(|c| c.status == Status::Live) else {
                continue;
            };
            let now = now.id;
            // Most copies are as the origin's newest version has them: that
            // version (read once for every page copying from it) holding
            // the whole run settles it, the origin as it was left unread.
            if self.keys.holds_all(ix, now, &shingles)? {
                continue;
            }
            let copied = self.held(o, shingles)?;
            let kept = self.held(now, copied.clone())?;
            if copied.is_empty() || kept.len() == copied.len() {
                continue;
            }
            // Stale only if the origin changed the passage after the page
            // took it: the origin as it was then held it (else the page
            // took text the origin had dropped, and it is the page's own
            // since), and the change is not the one that moved it into
            // the page.
            let got = self.since(&versions[path.as_str()], p, &copied)?;
            let theirs = &versions[op];
            let Some(&then) = theirs.iter().rev().find(|&&v| v <= got) else {
                continue;
            };
            if !self.keys.holds_all(ix, then, &copied)? {
                continue;
            }
            let later = theirs.iter().copied().filter(|&v| v > got && v <= now);
            let Some(changed_in) = self.first_without(later, &copied)? else {
                continue;
            };
            if !self.after(got, changed_in) {
                continue;
            }
            let mut passage = StalePassage::new(StaleKind::Removed, o, now, changed_in, run);
            passage.tokens = run.start..run.end;
            passage.differences = vec![Difference {
                here: run.start..run.end,
                there: 0..0,
            }];
            if !kept.is_empty() {
                passage.kind = StaleKind::Changed;
                // The page holds the passage as copied: align it with the
                // origin's words now.
                match self.window(p, run.start..run.end, &kept, now)? {
                    Some((a, _)) => {
                        passage.there = a.new;
                        passage.stale_tokens = passage.copied - a.kept;
                        passage.differences = (a.changes.into_iter())
                            .map(|x| Difference {
                                here: x.old,
                                there: x.new,
                            })
                            .collect();
                    }
                    None => {
                        passage.differences.clear();
                        self.unaligned += 1;
                    }
                }
            }
            out.push(passage);
        }
        Ok(out)
    }

    /// Of the earlier versions of page `p` (its `own` versions, oldest
    /// first), the passages copied from another page that `p` changed
    /// while that page's newest version still holds them as copied. Each
    /// origin passage once, from the latest version that held it.
    fn here(&mut self, p: u32, own: &[u32]) -> Result<Vec<StalePassage>, IndexError> {
        let (ix, rows) = (self.ix, self.rows);
        let path = &rows[p as usize].path;
        let other = |o: &u32| rows[*o as usize].path != *path;
        let k = ix.params().k as u32;
        let mut seen: Vec<Shingle> = Vec::new();
        let mut out = Vec::new();
        for &v in own.iter().rev().filter(|&&v| v < p) {
            if !rows[v as usize].origins.iter().any(|(o, _)| other(o)) {
                continue;
            }
            let outcome = ix.outcome(v)?.ok_or(IndexError::Missing(v))?;
            let runs: Vec<_> = (outcome.runs.into_iter())
                .filter(|r| {
                    r.end - r.start >= PASSAGE_MIN * k && r.origin.as_ref().is_some_and(other)
                })
                .collect();
            let shingles = self.keys_of_runs(v, &runs)?;
            for (run, shingles) in runs.iter().zip(shingles) {
                let o = run.origin.unwrap_or_default();
                let copied = self.held(o, shingles)?;
                let Some(&(_, first)) = copied.first() else {
                    continue;
                };
                if seen.contains(&(o, first)) {
                    continue;
                }
                seen.push((o, first));
                let op = rows[o as usize].path.as_str();
                let Some(now) = ix.current(op).filter(|c| c.status == Status::Live) else {
                    continue;
                };
                let now = now.id;
                let still = self.held(p, copied.clone())?;
                // Kept as copied, or dropped whole (a passage cut is no fix).
                if still.len() == copied.len() || still.is_empty() {
                    continue;
                }
                // What the page dropped, the origin must still hold.
                let dropped: Vec<Shingle> = (copied.iter())
                    .filter(|k| !still.contains(k))
                    .copied()
                    .collect();
                if !self.keys.holds_all(ix, now, &dropped)? {
                    continue;
                }
                let later = own.iter().copied().filter(|&w| w > v && w <= p);
                let changed_in = self.first_without(later, &dropped)?.unwrap_or(p);
                let mut passage =
                    StalePassage::new(StaleKind::ChangedHere, o, now, changed_in, run);
                let r = run.start..run.end;
                let there = self.window(v, r.clone(), &copied, now)?;
                match (self.window(v, r, &still, p)?, there) {
                    (Some((a, _)), Some((t, shift))) => {
                        let there = |x: u32| (i64::from(x) + shift).max(0) as u32;
                        passage.tokens = a.new;
                        passage.there = t.new;
                        passage.stale_tokens = passage.copied - a.kept;
                        passage.differences = (a.changes.into_iter())
                            .map(|x| Difference {
                                here: x.new,
                                there: there(x.old.start)..there(x.old.end),
                            })
                            .collect();
                    }
                    _ => self.unaligned += 1,
                }
                out.push(passage);
            }
        }
        out.sort_by_key(|p| p.tokens.start);
        Ok(out)
    }

    /// Where tokens `r` of version `a` stand in version `b`: `r` diffed
    /// with the part of `b` its `anchors` (shingles of `a` that `b` holds)
    /// place it at, by their most common shift, widened by the tokens
    /// before the first anchor and after the last (an edit there may have
    /// changed their number). With that shift; None where a text is not
    /// kept. A window, not the whole texts: two versions years apart
    /// differ everywhere, and Myers' diff costs their differences.
    fn window(
        &mut self,
        a: u32,
        r: Range<u32>,
        anchors: &[Shingle],
        b: u32,
    ) -> Result<Option<(Aligned, i64)>, IndexError> {
        let k = self.ix.params().k as u32;
        let places = self.places(b)?;
        // Shift → (anchors, first, last).
        let mut shifts: HashMap<i64, (u32, u32, u32)> = HashMap::new();
        for &(i, key) in anchors {
            if let Some(&q) = places.get(&key) {
                let e = shifts
                    .entry(i64::from(q) - i64::from(i))
                    .or_insert((0, i, i));
                *e = (e.0 + 1, e.1.min(i), e.2.max(i));
            }
        }
        let best = shifts
            .into_iter()
            .max_by(|x, y| (x.1.0, -x.0).cmp(&(y.1.0, -y.0)));
        let Some((shift, (_, first, last))) = best else {
            return Ok(None);
        };
        let (ix, rows) = (self.ix, self.rows);
        let Some(old) = self.texts.get(ix, rows, a).map(|t| t.keys.clone()) else {
            return Ok(None);
        };
        let Some(new) = self.texts.get(ix, rows, b).map(|t| &t.keys) else {
            return Ok(None);
        };
        let r = r.start.min(old.len() as u32)..r.end.min(old.len() as u32);
        let head = i64::from(first.saturating_sub(r.start));
        let tail = i64::from(r.end.saturating_sub(last + k));
        let n = new.len() as i64;
        let lo = (i64::from(r.start) + shift - head).clamp(0, n);
        let hi = (i64::from(r.end) + shift + tail).clamp(lo, n);
        let c = changes(
            &old[r.start as usize..r.end as usize],
            &new[lo as usize..hi as usize],
        );
        let mut x = align(&c, 0..r.end - r.start);
        let (lo, at) = (lo as u32, r.start);
        let move_by = |o: &mut Range<u32>, by: u32| *o = o.start + by..o.end + by;
        move_by(&mut x.new, lo);
        for c in &mut x.changes {
            move_by(&mut c.old, at);
            move_by(&mut c.new, lo);
        }
        Ok(Some((x, shift)))
    }

    /// Where each shingle key first stands in version `id`.
    fn places(&mut self, id: u32) -> Result<&HashMap<u64, u32>, IndexError> {
        let s = self.keys.get(self.ix, id)?;
        Ok(s.places.get_or_insert_with(|| {
            let mut m = HashMap::new();
            for (i, &key) in s.ordered.iter().enumerate() {
                m.entry(key).or_insert(i as u32);
            }
            m
        }))
    }

    /// For each run of version `id`, the shingles that meet it: where each
    /// starts, and its key.
    fn keys_of_runs(
        &mut self,
        id: u32,
        runs: &[lineage_origin::Run],
    ) -> Result<Vec<Vec<Shingle>>, IndexError> {
        if runs.is_empty() {
            return Ok(Vec::new());
        }
        let k = self.ix.params().k as u32;
        let keys = &self.keys.get(self.ix, id)?.ordered;
        Ok((runs.iter())
            .map(|r| {
                let lo = r.start.saturating_sub(k - 1);
                let hi = r.end.min(keys.len() as u32);
                (lo..hi).map(|i| (i, keys[i as usize])).collect()
            })
            .collect())
    }

    /// The first of the page's versions (`own`, oldest first) from which
    /// every one up to `p` holds all of `shingles`.
    fn since(&mut self, own: &[u32], p: u32, shingles: &[Shingle]) -> Result<u32, IndexError> {
        let mut got = p;
        for &v in own.iter().rev().filter(|&&v| v < p) {
            if !self.keys.holds_all(self.ix, v, shingles)? {
                break;
            }
            got = v;
        }
        Ok(got)
    }

    /// Whether version `b` came after version `a` as a change of its own:
    /// later, and not in the same commit, nor (read from files) written
    /// and read within [`TOGETHER_MS`] of it, as a passage moved from one
    /// page to another is.
    fn after(&self, a: u32, b: u32) -> bool {
        if b <= a {
            return false;
        }
        let commit = |id| self.ix.commit_of(id).ok().flatten().map(|c| c.id);
        let (x, y) = (&self.rows[a as usize], &self.rows[b as usize]);
        let near = |p: i64, q: i64| (p - q).abs() <= TOGETHER_MS;
        let together = match (commit(a), commit(b)) {
            (Some(p), Some(q)) => p == q,
            (None, None) => {
                near(x.mtime_ns / 1_000_000, y.mtime_ns / 1_000_000)
                    && near(x.seen_ms.unwrap_or(0), y.seen_ms.unwrap_or(0))
            }
            _ => false,
        };
        !together
    }

    /// Those of `shingles` whose keys version `id` holds.
    fn held(&mut self, id: u32, shingles: Vec<Shingle>) -> Result<Vec<Shingle>, IndexError> {
        let held = &self.keys.get(self.ix, id)?.sorted;
        Ok((shingles.into_iter())
            .filter(|(_, k)| held.binary_search(k).is_ok())
            .collect())
    }

    /// The first of `versions` that lacks one of `shingles`.
    fn first_without(
        &mut self,
        versions: impl Iterator<Item = u32>,
        shingles: &[Shingle],
    ) -> Result<Option<u32>, IndexError> {
        for v in versions {
            if !self.keys.holds_all(self.ix, v, shingles)? {
                return Ok(Some(v));
            }
        }
        Ok(None)
    }
}
