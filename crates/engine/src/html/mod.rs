//! The report a colleague opens in a browser (`lineage report`, the TUI's
//! export to a `.html` name): one self-contained HTML file, no network
//! (its Content-Security-Policy allows nothing outside it), holding every
//! live page with its fresh, changed and removed shares and dominant
//! origin; each page's text with its copied passages by origin, each
//! linked to where its origin holds it; the near-duplicate clusters with
//! their pairs side by side; the settings and the table's regime.
//!
//! The data go in one JSON block that the page's script reads, never into
//! markup: page text reaches the document as text nodes only, and every
//! `<` in the block is `\u003c`, so no page can end the block or run a
//! script. Identical texts (a page unchanged across version folders) are
//! kept once, and the script draws a page's text only when it is opened,
//! so a large folder's file stays as large as its distinct texts and opens
//! at once.

use std::collections::HashMap;
use std::io::Write;

use serde::Serialize;

use super::check::Live;
use super::query::{self, Row};
use super::{Lineage, shares_change};
use lineage_config::Config;
use lineage_similar::{SimDoc, cluster, minhash};
use lineage_store::index::{IndexError, Read};

const TEMPLATE: &str = include_str!("report.html");
const STYLE: &str = include_str!("report.css");
const SCRIPT: &str = include_str!("report.js");

/// What went into a report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Figures {
    /// Live pages listed.
    pub pages: usize,
    /// Versions shown that are no longer live (origins of passages).
    pub origins: usize,
    /// Distinct texts kept.
    pub texts: usize,
    /// Near-duplicate pairs, and the clusters they make.
    pub pairs: usize,
    /// The clusters.
    pub clusters: usize,
    /// Bytes written.
    pub bytes: u64,
}

#[derive(Serialize)]
struct Data<'a> {
    title: &'a str,
    regime: Option<&'a str>,
    settings: Vec<(&'static str, String)>,
    min_similarity: f64,
    basis: String,
    pages: Vec<Page>,
    texts: Vec<String>,
    clusters: Vec<Vec<usize>>,
    pairs: Vec<PairData>,
}

/// A version shown: a live page, or the origin of a passage.
#[derive(Serialize)]
struct Page {
    path: String,
    version: u32,
    live: bool,
    tokens: u32,
    fresh: f64,
    changed: Option<f64>,
    removed: Option<f64>,
    /// The page its changed and removed shares are against.
    base: Option<usize>,
    /// Its dominant origin (a page of this list), with its share.
    dominant: Option<(usize, f64)>,
    cluster: Option<usize>,
    /// Its text (an index into `texts`), None where it is not kept.
    text: Option<usize>,
    /// Each copied passage: [start, end, origin page, origin start,
    /// origin end], offsets in UTF-16 code units of the texts (as the
    /// script slices them); the origin's place is -1 where unknown.
    runs: Vec<[i64; 5]>,
}

#[derive(Serialize)]
struct PairData {
    a: usize,
    b: usize,
    similarity: f64,
    /// The shared passages on each side: [start, end] in UTF-16 units.
    shared_a: Vec<[u32; 2]>,
    shared_b: Vec<[u32; 2]>,
}

/// A text's token spans in UTF-16 code units.
struct Units {
    text: Option<usize>,
    /// Each token's [start, end) in UTF-16 units.
    spans: Vec<(u32, u32)>,
}

impl Units {
    /// Tokens `start..end` as UTF-16 offsets.
    fn range(&self, start: u32, end: u32) -> Option<[u32; 2]> {
        let a = self.spans.get(start as usize)?.0;
        let b = self.spans.get(end.checked_sub(1)? as usize)?.1;
        Some([a, b])
    }
}

/// The texts read for the report, each distinct one kept once.
#[derive(Default)]
struct Texts {
    texts: Vec<String>,
    by_content: HashMap<u64, Vec<usize>>,
    of: HashMap<u32, Units>,
}

impl Texts {
    fn get(&mut self, ix: &impl Read, rows: &[Row], id: u32) -> &Units {
        if !self.of.contains_key(&id) {
            let (text, spans) = query::text_of(ix, rows, id);
            let units = match text {
                Ok(t) => {
                    let spans = utf16_spans(&t, &spans);
                    Units {
                        text: Some(self.keep(t)),
                        spans,
                    }
                }
                Err(_) => Units {
                    text: None,
                    spans: Vec::new(),
                },
            };
            self.of.insert(id, units);
        }
        &self.of[&id]
    }

    /// The index of `t` among the texts, kept if new.
    fn keep(&mut self, t: String) -> usize {
        let hash = lineage_core::fsio::xxh64::xxh64(t.as_bytes());
        let same = self.by_content.entry(hash).or_default();
        if let Some(&i) = same.iter().find(|&&i| self.texts[i] == t) {
            return i;
        }
        same.push(self.texts.len());
        self.texts.push(t);
        self.texts.len() - 1
    }
}

/// Byte spans of `text` as UTF-16 offsets (one pass over the text).
fn utf16_spans(text: &str, spans: &[(u32, u32)]) -> Vec<(u32, u32)> {
    let mut at = Vec::with_capacity(spans.len() * 2);
    for &(a, b) in spans {
        at.push(a as usize);
        at.push(b as usize);
    }
    let mut units = Vec::with_capacity(at.len());
    let mut unit = 0u32;
    let mut chars = text.char_indices().peekable();
    for b in at {
        while let Some((_, c)) = chars.next_if(|&(i, _)| i < b) {
            unit += c.len_utf16() as u32;
        }
        units.push(unit);
    }
    units.chunks(2).map(|p| (p[0], p[1])).collect()
}

/// Write the report of the index's live pages to `out`; `regime` is the
/// table's, as `scan` says it, where known.
pub fn write_report(
    ix: &impl Read,
    rows: &[Row],
    config: &Config,
    title: &str,
    regime: Option<&str>,
    out: &mut impl Write,
) -> Result<Figures, IndexError> {
    let live = Live::now(ix, rows);
    let mut texts = Texts::default();
    // The versions shown, each a place in `pages`: the live pages first.
    let mut place: HashMap<u32, usize> = HashMap::new();
    let mut shown: Vec<u32> = Vec::new();
    let mut show = |id: u32, shown: &mut Vec<u32>| {
        *place.entry(id).or_insert_with(|| {
            shown.push(id);
            shown.len() - 1
        })
    };
    for &id in live.ids() {
        show(id, &mut shown);
    }
    let lineage = Lineage::new(ix, rows, &config.predecessor)?.tags(&config.release_tags);
    // The pairs a session measured already (the Documents pane's), not
    // diffed again.
    let kept: HashMap<(u32, Option<u32>), [u32; 4]> = (ix.changes()?.into_iter())
        .map(|(id, base, counts)| ((id, base), counts))
        .collect();
    let mut pages = Vec::new();
    let mut i = 0;
    // Origins join the list as passages name them, and are shown too.
    while i < shown.len() {
        let id = shown[i];
        let row = &rows[id as usize];
        let is_live = live.get(&row.path) == Some(id);
        let units = texts.get(ix, rows, id);
        let text = units.text;
        let mut runs = Vec::new();
        let mut base = None;
        let (mut changed, mut removed) = (None, None);
        if is_live {
            let outcome = ix.outcome(id)?.ok_or(IndexError::Missing(id))?;
            let copied: Vec<_> = (outcome.runs.into_iter())
                .filter(|r| r.origin.is_some_and(|o| o != id))
                .collect();
            let targets = query::targets(ix, id, &copied)?;
            let here: Vec<Option<[u32; 2]>> = {
                let units = texts.get(ix, rows, id);
                copied.iter().map(|r| units.range(r.start, r.end)).collect()
            };
            for ((r, t), here) in copied.iter().zip(&targets).zip(here) {
                let Some(here) = here else { continue };
                let origin = r.origin.unwrap_or(id);
                let o = show(origin, &mut shown);
                let there = t.and_then(|t| {
                    texts
                        .get(ix, rows, t.id)
                        .range(t.token, t.token + (r.end - r.start))
                });
                let [ts, te] = there.map_or([-1, -1], |[a, b]| [i64::from(a), i64::from(b)]);
                runs.push([i64::from(here[0]), i64::from(here[1]), o as i64, ts, te]);
            }
            let b = lineage.base(id, config.basis).map(|p| p.id);
            let change = match kept.get(&(id, b)) {
                Some(&counts) => super::PageChange {
                    base: b,
                    counts: Some(counts),
                },
                None => {
                    let fps = |v: u32| Ok(ix.fingerprints(v, v + 1)?.pop().unwrap_or_default());
                    shares_change(fps, id, b, |v| rows[v as usize].tokens)?
                }
            };
            (changed, removed) = (change.changed_percent(), change.removed_percent());
            base = b.map(|b| show(b, &mut shown));
        }
        let dominant = row.dominant_origin.filter(|&o| o != id).map(|o| {
            let units: u32 = row.origins.iter().map(|(_, n)| n).sum();
            let of = row.origins.iter().find(|(x, _)| *x == o).map_or(0, |x| x.1);
            let share = 100.0 * f64::from(of) / f64::from(units.max(1));
            (show(o, &mut shown), share)
        });
        pages.push(Page {
            path: lineage_source::name::display(&row.path).into_owned(),
            version: row.version,
            live: is_live,
            tokens: row.tokens,
            fresh: row.fresh_percent(),
            changed,
            removed,
            base,
            dominant,
            cluster: None,
            text,
            runs,
        });
        i += 1;
    }
    let (pairs, clusters) = near_duplicates(ix, rows, &live, &place, &mut texts, config)?;
    for (c, members) in clusters.iter().enumerate() {
        for &m in members {
            pages[m].cluster = Some(c);
        }
    }
    let p = ix.params();
    let settings = vec![
        ("k", p.k.to_string()),
        ("selector", p.selector.to_string()),
        ("table_size", p.table_size.to_string()),
        ("eviction", p.eviction.to_string()),
        ("estimation", p.estimation.to_string()),
        (
            "order",
            ix.order().map_or_else(String::new, |o| o.to_string()),
        ),
    ];
    let figures = Figures {
        pages: live.ids().len(),
        origins: shown.len() - live.ids().len(),
        texts: texts.texts.len(),
        pairs: pairs.len(),
        clusters: clusters.len(),
        bytes: 0,
    };
    let data = Data {
        title,
        regime,
        settings,
        min_similarity: config.watch.min_similarity,
        basis: config.basis.to_string(),
        pages,
        texts: std::mem::take(&mut texts.texts),
        clusters,
        pairs,
    };
    let json = serde_json::to_string(&data).map_err(|e| IndexError::Location(e.to_string()))?;
    // No `<` in the block: nothing in it can end it or open a comment.
    let json = json.replace('<', "\\u003c");
    // The title last, into the head alone: a folder named `{{DATA}}` is
    // a name, not a place.
    let html = TEMPLATE
        .replace("{{STYLE}}", STYLE)
        .replace("{{SCRIPT}}", SCRIPT);
    let (head, tail) = html.split_once("{{DATA}}").unwrap_or((&html, ""));
    let head = head.replace("{{TITLE}}", &escape(title));
    let io = |e: std::io::Error| IndexError::Location(e.to_string());
    out.write_all(head.as_bytes()).map_err(io)?;
    out.write_all(json.as_bytes()).map_err(io)?;
    out.write_all(tail.as_bytes()).map_err(io)?;
    Ok(Figures {
        bytes: (head.len() + json.len() + tail.len()) as u64,
        ..figures
    })
}

/// The report's title for folder `root`: its name, as shown.
pub fn title_of(root: &std::path::Path) -> String {
    let root = lineage_config::canonical(root);
    let name = (root.file_name())
        .map(|n| lineage_source::name::of_os(n).into_owned())
        .unwrap_or_else(|| root.display().to_string());
    lineage_source::name::display(&name).into_owned()
}

/// Text as HTML character data: `&`, `<`, `>` and `"` as references.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The near-duplicate pairs of live pages at the watch's `min_similarity`
/// (MinHash LSH, verified by exact Jaccard) with their shared passages,
/// and the clusters they make, by page place.
fn near_duplicates(
    ix: &impl Read,
    rows: &[Row],
    live: &Live,
    place: &HashMap<u32, usize>,
    texts: &mut Texts,
    config: &Config,
) -> Result<(Vec<PairData>, Vec<Vec<usize>>), IndexError> {
    let k = ix.params().k as u32;
    let ids = live.ids();
    let mut keys = Vec::with_capacity(ids.len());
    let mut docs = Vec::with_capacity(ids.len());
    for &id in ids {
        let k = ix.shingle_keys(id)?;
        let mut shingles = k.clone();
        shingles.sort_unstable();
        shingles.dedup();
        keys.push(k);
        docs.push(SimDoc {
            shingles,
            terms: Vec::new(),
        });
    }
    let min = config.watch.min_similarity;
    let (found, _) = minhash::pairs(
        &docs,
        min,
        &minhash::Options::new(min, minhash::DEFAULT_HASHES),
    );
    let mut pairs = Vec::with_capacity(found.len());
    for p in &found {
        let (a, b) = (p.a as usize, p.b as usize);
        let side = |x: usize, y: usize, texts: &mut Texts| -> Vec<[u32; 2]> {
            let units = texts.get(ix, rows, ids[x]);
            (query::shared_ranges(&keys[x], &docs[y].shingles, k).into_iter())
                .filter_map(|(s, e)| units.range(s, e))
                .collect()
        };
        pairs.push(PairData {
            a: place[&ids[a]],
            b: place[&ids[b]],
            similarity: p.similarity,
            shared_a: side(a, b, texts),
            shared_b: side(b, a, texts),
        });
    }
    let clusters = cluster::clusters(ids.len(), &found, |i| {
        rows[ids[i as usize] as usize].path.as_bytes()
    })
    .into_iter()
    .filter(|c| c.len() > 1)
    .map(|c| c.into_iter().map(|i| place[&ids[i as usize]]).collect())
    .collect();
    Ok((pairs, clusters))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_count_utf16_units_as_a_browser_slices() {
        // "é" is 2 bytes and 1 unit; "𝄞" 4 bytes and 2 units.
        let text = "é ab 𝄞 cd";
        let spans = [(0, 2), (3, 5), (6, 10), (11, 13)];
        let units = utf16_spans(text, &spans);
        assert_eq!(units, [(0, 1), (2, 4), (5, 7), (8, 10)]);
        let js: Vec<u16> = text.encode_utf16().collect();
        assert_eq!(String::from_utf16(&js[8..10]).unwrap(), "cd");
    }

    #[test]
    fn the_same_text_is_kept_once() {
        let mut t = Texts::default();
        assert_eq!(t.keep("a b".into()), 0);
        assert_eq!(t.keep("c".into()), 1);
        assert_eq!(t.keep("a b".into()), 0);
        assert_eq!(t.texts.len(), 2);
    }
}
