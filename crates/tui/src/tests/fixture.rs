//! A hand-built engine state over the demo documentation (assets/demo):
//! the snapshot, an origin view, a comparison and shadow results, with fixed
//! numbers so pane snapshots are stable.

use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

use lineage_core::text::token::tokens;
use lineage_engine::{
    Cluster, CompareView, CopiesView, DocRow, Documents, Event, EventKind, LegendEntry, OriginView,
    PageChange, PageCopy, PageShare, Progress, SearchHit, SearchView, ShadowResult, ShadowUpdate,
    SharedPassage, SharedView, SharesUpdate, Side, Snapshot, StaleKind, StaleLine, StaleView,
    TableStats, Target, VersionInfo, VersionStatus, Watching,
};
use lineage_origin::table::paper_sizes;
use lineage_origin::{Estimation, Eviction, Params, Run, Selector, TableSize};

pub(crate) const PATHS: [&str; 29] = [
    "v1/alerts.md",
    "v1/api.md",
    "v1/calibration.md",
    "v1/configuration.md",
    "v1/index.md",
    "v1/installation.md",
    "v1/sensors.md",
    "v1/troubleshooting.md",
    "v2/alerts.md",
    "v2/api.md",
    "v2/configuration.md",
    "v2/dashboards.md",
    "v2/index.md",
    "v2/installation.md",
    "v2/sensors.md",
    "v2/troubleshooting.md",
    "v2/upgrading.md",
    "v3/alerts.md",
    "v3/api.html",
    "v3/calibration.md",
    "v3/configuration.md",
    "v3/index.md",
    "v3/installation.md",
    "v3/sensors.md",
    "v3/tide-predictions.md",
    "v3/troubleshooting.md",
    "v3/upgrading.md",
    "z-support/changelog.md",
    "z-support/faq.md",
];

/// v1/installation.md, v2/installation.md.
pub(crate) const V1_INSTALL: u32 = 5;
pub(crate) const V2_INSTALL: u32 = 13;
pub(crate) const FAQ: u32 = 28;

pub(crate) const V1_TEXT: &str = include_str!("../../../../assets/demo/v1/installation.md");
pub(crate) const V2_TEXT: &str = include_str!("../../../../assets/demo/v2/installation.md");

/// The earlier version of the same page, if there is one: what later pages
/// copy from.
fn previous(path: &str) -> Option<u32> {
    let (dir, name) = path.split_once('/')?;
    let before = match dir {
        "v2" => "v1",
        "v3" => "v2",
        _ => return None,
    };
    let name = name.replace(".html", ".md");
    PATHS
        .iter()
        .position(|p| *p == format!("{before}/{name}"))
        .map(|i| i as u32)
}

/// The documents' changes against their predecessors, as the engine's
/// shares run finds them: each later page against its earlier folder's,
/// the rest all new; the changelog's fingerprints no longer kept, and the
/// FAQ not measured yet.
pub(crate) fn shares() -> SharesUpdate {
    let changes = (docs().into_iter())
        .filter(|d| d.id != FAQ)
        .map(|d| {
            let base = previous(&d.path);
            let i = d.id;
            let counts = match base {
                _ if d.path.starts_with("z-support/changelog") => None,
                // Kept, removed, new, moved: the page's tokens all told.
                Some(_) => {
                    let new = d.tokens * (i * 11 % 40) / 100;
                    let moved = d.tokens * (i % 3) / 50;
                    Some([d.tokens - new - moved, 40 + i * 13 % 200, new, moved])
                }
                None => Some([0, 0, d.tokens, 0]),
            };
            (d.id, PageChange { base, counts })
        })
        .collect();
    SharesUpdate {
        basis: lineage_config::Basis::Predecessor,
        changes,
        done: 0,
        total: 0,
        finished: true,
        error: None,
    }
}

/// `rows` as a snapshot lists them: the installation pages in cluster #1,
/// the alerts pages in #2.
pub(crate) fn documents(rows: Vec<DocRow>) -> Documents {
    let clusters = rows
        .iter()
        .filter_map(|d| match &*d.path {
            p if p.ends_with("installation.md") => Some((d.id, 0)),
            p if p.ends_with("alerts.md") => Some((d.id, 1)),
            _ => None,
        })
        .collect();
    Documents::new(rows, clusters)
}

pub(crate) fn docs() -> Vec<DocRow> {
    PATHS
        .iter()
        .enumerate()
        .map(|(i, &path)| {
            let id = i as u32;
            let origin = previous(path);
            let fresh = match origin {
                Some(_) => 5.0 + (i * 7 % 30) as f64 + 0.25,
                None => 100.0 - (i * 3 % 12) as f64,
            };
            DocRow {
                id,
                path: path.into(),
                version: 1 + (i % 3 == 2) as u32,
                tokens: 400 + (i as u32 * 137) % 1900,
                fresh_percent: fresh,
                dominant_origin: Some(origin.unwrap_or(id)),
                dominant_path: Some(origin.map_or(path, |o| PATHS[o as usize]).into()),
                // A minute apart, in id order.
                mtime_ns: 1_700_000_000_000_000_000 + i as i64 * 60_000_000_000,
            }
        })
        .collect()
}

fn stats(versions: u64) -> TableStats {
    let lookups = versions * 1800;
    let evictions = (versions.saturating_sub(12)) * 700;
    let occupied = (versions * 1000).min(18_724);
    TableStats {
        lookups,
        hits: lookups * 2 / 5 + versions * versions * 3,
        inserts: lookups * 3 / 5,
        evictions,
        occupied,
        regime: if evictions > 0 {
            lineage_origin::Regime::Evicting { evictions }
        } else {
            lineage_origin::Regime::Holds { distinct: occupied }
        },
        capacity: Some(18_724),
        buckets: Some(293),
        entry_bytes: 14,
        false_match: Some(64.0 / 2f64.powi(48)),
        versions,
    }
}

pub(crate) fn snapshot() -> Snapshot {
    let history: Vec<TableStats> = (1..=29).map(stats).collect();
    let fill: Vec<u64> = (0..=64u64)
        .map(|f| if f < 40 { 0 } else { (f - 40) * (64 - f) / 6 })
        .collect();
    let at = |m: i64| 1_700_000_000_000 + m * 60_000;
    let events = vec![
        Event {
            n: 5,
            at_ms: at(30),
            kind: EventKind::Version {
                path: "v2/installation.md".into(),
                version: 2,
                id: V2_INSTALL,
                fresh_percent: 12.5,
                dominant_path: Some("v1/installation.md".into()),
                origins: Vec::new(),
            },
        },
        Event {
            n: 4,
            at_ms: at(29),
            kind: EventKind::Notice("table snapshot written".into()),
        },
        Event {
            n: 3,
            at_ms: at(28),
            kind: EventKind::Deleted {
                path: "v2/old-setup.md".into(),
            },
        },
        Event {
            n: 2,
            at_ms: at(27),
            kind: EventKind::Skipped {
                path: "v3/diagram.png".into(),
                reason: "binary".into(),
            },
        },
        Event {
            n: 1,
            at_ms: at(26),
            kind: EventKind::Error("v3/secret.md: permission denied".into()),
        },
    ];
    Snapshot {
        seq: 7,
        root: PathBuf::from("/home/ana/tidewater-docs"),
        // The paper's settings, whose table evicts: the panes at work.
        params: Params {
            table_size: TableSize::Bytes(256 << 10),
            selector: Selector::NHs,
            eviction: Eviction::Lucky,
            estimation: Estimation::Be,
            ..Params::default()
        },
        documents: documents(docs()),
        clusters: [
            Cluster {
                number: 1,
                members: vec![V1_INSTALL, V2_INSTALL, 22],
                pairs: vec![
                    (V1_INSTALL, V2_INSTALL, 0.912),
                    (V2_INSTALL, 22, 0.874),
                    (V1_INSTALL, 22, 0.803),
                ],
            },
            Cluster {
                number: 2,
                members: vec![0, 8],
                pairs: vec![(0, 8, 0.655)],
            },
        ]
        .map(Arc::new)
        .into(),
        table: *history.last().unwrap(),
        table_history: history.into(),
        bucket_fill: fill.into(),
        events: events.into(),
        before_start: 0,
        versions: 31,
        skipped: 1,
        shingles: 41_230,
        progress: Some(Progress {
            what: "indexing".into(),
            done: 27,
            total: 29,
            per_sec: None,
        }),
        watching: Watching::Events,
    }
}

fn spans(text: &str) -> Vec<(u32, u32)> {
    tokens(text)
        .into_iter()
        .map(|t| (t.span.start as u32, t.span.end as u32))
        .collect()
}

/// v2/installation.md: its first 60 % copied from v1's, a fresh sentence,
/// then 20 tokens from the FAQ, the rest copied from v1 again.
pub(crate) fn origin_view(exact: bool) -> OriginView {
    let spans = spans(V2_TEXT);
    let n = spans.len() as u32;
    let a = n * 6 / 10;
    let runs = vec![
        Run {
            start: 0,
            end: a,
            origin: Some(V1_INSTALL),
        },
        Run {
            start: a,
            end: a + 12,
            origin: None,
        },
        Run {
            start: a + 12,
            end: a + 32,
            origin: Some(FAQ),
        },
        Run {
            start: a + 32,
            end: n,
            origin: Some(V1_INSTALL),
        },
    ];
    let targets = vec![
        Some(Target {
            id: V1_INSTALL,
            token: 0,
        }),
        None,
        Some(Target { id: FAQ, token: 40 }),
        Some(Target {
            id: V1_INSTALL,
            token: a + 10,
        }),
    ];
    let share = |tokens: u32| tokens as f64 * 100.0 / n as f64;
    let legend = vec![
        LegendEntry {
            origin: V1_INSTALL,
            path: "v1/installation.md".into(),
            version: 1,
            percent: share(n - 32),
            commit: None,
        },
        LegendEntry {
            origin: FAQ,
            path: "z-support/faq.md".into(),
            version: 1,
            percent: share(20),
            commit: None,
        },
        LegendEntry {
            origin: V2_INSTALL,
            path: "v2/installation.md".into(),
            version: 2,
            percent: share(12),
            commit: None,
        },
    ];
    OriginView {
        id: V2_INSTALL,
        path: "v2/installation.md".into(),
        version: 2,
        status: VersionStatus::Live,
        versions: vec![VersionInfo {
            id: V2_INSTALL,
            version: 2,
            tokens: n,
            fresh_percent: share(12),
            text_kept: true,
            mtime_ns: 1_700_000_000_000_000_000 + 13 * 60_000_000_000,
            // Seen 5 min 7 s after its file was written.
            seen_ms: Some(1_700_000_000_000 + 18 * 60_000 + 7_000),
            commit: None,
        }],
        exact,
        text: Ok(V2_TEXT.to_string()),
        spans,
        runs,
        targets,
        legend,
    }
}

/// v1/installation.md, all its own.
/// Who copies v1/installation.md: the FAQ (one passage) and v2's page
/// (the runs of [`origin_view`] it took), newest first.
pub(crate) fn copies_view() -> CopiesView {
    let v2 = origin_view(false);
    let from_v1 = |r: &&Run| r.origin == Some(V1_INSTALL);
    let row = |id: u32| docs().into_iter().find(|d| d.id == id).unwrap();
    let copy = |id: u32, tokens: u32, passages: Vec<Run>, targets| {
        let r = row(id);
        PageCopy {
            id,
            path: r.path.to_string(),
            version: r.version,
            tokens,
            passages,
            targets,
        }
    };
    CopiesView {
        id: V1_INSTALL,
        path: "v1/installation.md".into(),
        version: 1,
        copies: vec![
            copy(
                FAQ,
                893,
                vec![Run {
                    start: 105,
                    end: 150,
                    origin: Some(V1_INSTALL),
                }],
                vec![Some(Target {
                    id: V1_INSTALL,
                    token: 165,
                })],
            ),
            copy(
                V2_INSTALL,
                v2.spans.len() as u32,
                v2.runs.iter().filter(from_v1).copied().collect(),
                (v2.runs.iter().zip(&v2.targets))
                    .filter(|(r, _)| from_v1(r))
                    .map(|(_, t)| *t)
                    .collect(),
            ),
        ],
    }
}

/// v3/installation.md's id: it took v1's text through v2 (its copies
/// credit v2), so it shares v1's text without copying from it.
pub(crate) const V3_INSTALL: u32 = 22;

/// Which pages carry v1/installation.md's text: v2's page (the runs of
/// [`origin_view`] it took), v3's (through v2) and the FAQ, most first.
pub(crate) fn shared_view() -> SharedView {
    let v2 = origin_view(false);
    let v1_tokens = spans(V1_TEXT).len() as u32;
    let from_v1: Vec<SharedPassage> = (v2.runs.iter().zip(&v2.targets))
        .filter(|(r, _)| r.origin == Some(V1_INSTALL))
        .filter_map(|(r, t)| {
            let t = (*t)?;
            // Within v1's text (the fixture's targets reach past it).
            let end = (t.token + r.end - r.start).min(v1_tokens);
            (t.token < end).then(|| SharedPassage {
                page: (t.token, end),
                there: (r.start, r.start + end - t.token),
            })
        })
        .collect();
    let share = |id: u32, tokens: u32, passages: Vec<SharedPassage>| {
        let r = docs().into_iter().find(|d| d.id == id).unwrap();
        // The page's tokens in them, each once.
        let mut covered = vec![false; v1_tokens as usize];
        for p in &passages {
            let end = (p.page.1 as usize).min(covered.len());
            covered[p.page.0 as usize..end].fill(true);
        }
        let page_tokens = covered.iter().filter(|&&c| c).count() as u32;
        let shared_tokens: u32 = passages.iter().map(|p| p.there.1 - p.there.0).sum();
        PageShare {
            id,
            path: r.path.to_string(),
            version: r.version,
            tokens,
            page_tokens,
            page_percent: 100.0 * f64::from(page_tokens) / f64::from(v1_tokens),
            shared_tokens,
            percent: 100.0 * f64::from(shared_tokens) / f64::from(tokens),
            passages,
        }
    };
    // Its part of v1's first passage, and a later one.
    let first = from_v1[0].page.0;
    let v3 = vec![
        SharedPassage {
            page: (first, first + 120),
            there: (300, 420),
        },
        SharedPassage {
            page: (first + 200, first + 260),
            there: (900, 960),
        },
    ];
    SharedView {
        id: V1_INSTALL,
        path: "v1/installation.md".into(),
        version: 1,
        tokens: v1_tokens,
        shares: vec![
            share(V2_INSTALL, v2.spans.len() as u32, from_v1),
            share(V3_INSTALL, 2_400, v3),
            share(
                FAQ,
                893,
                vec![SharedPassage {
                    page: (165, 210),
                    there: (105, 150),
                }],
            ),
        ],
    }
}

pub(crate) fn v1_view() -> OriginView {
    let spans = spans(V1_TEXT);
    let n = spans.len() as u32;
    OriginView {
        id: V1_INSTALL,
        path: "v1/installation.md".into(),
        version: 1,
        status: VersionStatus::Live,
        versions: vec![VersionInfo {
            id: V1_INSTALL,
            version: 1,
            tokens: n,
            fresh_percent: 100.0,
            text_kept: true,
            mtime_ns: 1_700_000_000_000_000_000,
            seen_ms: Some(1_700_000_000_000 + 42_000),
            commit: None,
        }],
        exact: false,
        text: Ok(V1_TEXT.to_string()),
        spans,
        runs: vec![Run {
            start: 0,
            end: n,
            origin: None,
        }],
        targets: vec![None],
        legend: vec![LegendEntry {
            origin: V1_INSTALL,
            path: "v1/installation.md".into(),
            version: 1,
            percent: 100.0,
            commit: None,
        }],
    }
}

/// Version 2 of v2/installation.md when a third has replaced it: its
/// versions listed, the first of them too old to have its text kept.
pub(crate) fn versions_view() -> OriginView {
    let mut v = origin_view(false);
    v.status = VersionStatus::Replaced { latest: 3 };
    let mut first = v.versions[0].clone();
    (first.id, first.version, first.text_kept) = (VERSION_1, 1, false);
    first.mtime_ns -= 3 * 86_400_000_000_000;
    // Recorded by an index from before it kept when: its file's time.
    first.seen_ms = None;
    let mut third = v.versions[0].clone();
    (third.id, third.version, third.fresh_percent) = (VERSION_3, 3, 2.5);
    third.mtime_ns += 86_400_000_000_000 + 7_200_000_000_000;
    // Copied in with an old mtime: seen the next day, written long before.
    third.mtime_ns -= 30 * 86_400_000_000_000;
    third.seen_ms = third.seen_ms.map(|ms| ms + 86_400_000 + 7_200_000);
    v.versions = vec![first, v.versions[0].clone(), third];
    v
}

/// Ids of the other versions in [`versions_view`].
pub(crate) const VERSION_1: u32 = 3;
pub(crate) const VERSION_3: u32 = 28;

pub(crate) fn compare_view() -> CompareView {
    let side = |id, path: &str, text: &str| {
        let spans = spans(text);
        let n = spans.len() as u32;
        Side {
            id,
            path: path.into(),
            version: 1,
            text: Ok(text.to_string()),
            spans,
            shared: vec![(0, 40), (48, n * 2 / 3)],
        }
    };
    CompareView {
        a: side(V1_INSTALL, "v1/installation.md", V1_TEXT),
        b: side(V2_INSTALL, "v2/installation.md", V2_TEXT),
        similarity: 0.912,
    }
}

fn result(params: Params, i: usize) -> ShadowResult {
    let f = i as f64;
    ShadowResult {
        params,
        ssr: 23.4,
        dominant_origin: 71.0 + f * 3.5,
        token_freshness: 88.0 + f * 1.25,
        overall: 79.5 + f * 2.4,
        table_fraction: None,
        hits: 31_000 + i as u64 * 900,
        evictions: 12_000 - i as u64 * 1100,
        seconds: 0.4,
    }
}

/// The live settings and the tuned ones, both finished.
pub(crate) fn shadow_compare(generation: u64, live: Params, tuned: Params) -> ShadowUpdate {
    ShadowUpdate {
        generation,
        done: 2,
        total: 2,
        results: vec![result(live, 0), result(tuned, 1)],
        finished: true,
        error: None,
    }
}

/// A sweep of the paper's sizes × (nhs, every-4), 12 of 16 runs done.
pub(crate) fn shadow_sweep(generation: u64, base: Params, shingles: u64) -> ShadowUpdate {
    let sizes = paper_sizes(shingles);
    let results = [Selector::NHs, Selector::Every(4)]
        .iter()
        .flat_map(|&selector| {
            sizes.iter().map(move |&table_size| Params {
                selector,
                table_size,
                ..base
            })
        })
        .enumerate()
        .map(|(i, p)| result(p, i % 8 + if i >= 8 { 0 } else { 1 }))
        .take(12)
        .collect();
    ShadowUpdate {
        generation,
        done: 12,
        total: 16,
        results,
        finished: false,
        error: None,
    }
}

/// v2/installation.md cut into runs from each of `origins` in turn (every
/// other run), then its own text: a legend of many origins.
pub(crate) fn many_origins_view(origins: &[u32]) -> OriginView {
    let mut v = origin_view(false);
    let n = v.spans.len() as u32;
    let k = origins.len() as u32 + 1;
    let step = n / k;
    v.runs = (0..k)
        .map(|i| Run {
            start: i * step,
            end: if i + 1 == k { n } else { (i + 1) * step },
            origin: origins.get(i as usize).copied(),
        })
        .collect();
    v.targets = v.runs.iter().map(|_| None).collect();
    let share = |r: &Run| (r.end - r.start) as f64 * 100.0 / n as f64;
    v.legend = v
        .runs
        .iter()
        .map(|r| {
            let id = r.origin.unwrap_or(V2_INSTALL);
            LegendEntry {
                origin: id,
                path: PATHS[id as usize].into(),
                version: 1,
                percent: share(r),
                commit: None,
            }
        })
        .collect();
    v
}

/// A finished search of the two installation pages for `query`: each page
/// with a match, its first match's line as context.
pub(crate) fn search_view(generation: u64, query: &str) -> SearchView {
    let mut v = SearchView {
        generation,
        query: query.to_string(),
        searched: 29,
        total: 29,
        hits: Vec::new(),
        pages: 0,
        matches: 0,
        unread: 0,
        done: true,
    };
    for (id, text) in [(V1_INSTALL, V1_TEXT), (V2_INSTALL, V2_TEXT)] {
        let found: Vec<_> = lineage_core::text::find::find(text, query).collect();
        let Some(first) = found.first().cloned() else {
            continue;
        };
        let line_start = text[..first.start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[first.end..]
            .find('\n')
            .map_or(text.len(), |i| first.end + i);
        let row = docs().into_iter().find(|d| d.id == id).unwrap();
        v.pages += 1;
        v.matches += found.len();
        v.hits.push(SearchHit {
            id,
            path: row.path.clone(),
            version: row.version,
            matches: found.len() as u32,
            first: first.clone(),
            context: text[line_start..line_end].to_string(),
            marked: first.start - line_start..first.end - line_start,
        });
    }
    v
}

/// A page as written in reStructuredText, AsciiDoc and HTML (prepared as
/// the index prepares it), all new text.
pub(crate) fn as_written_view() -> OriginView {
    const RST: &str = "Abstract\n========\n\nTidewater reads the\n   gauges every one-\nminute and keeps\nthe readings::\n\n    $ tidectl check\n    $ tidectl run\n\n[verse]\nA line of its own\n+\nAnd the next.\n";
    const HTML: &str = "<h2>Alerts</h2><p>An alert watches\n  one sensor.</p><ul><li>above</li><li>below</li></ul><pre>[[alert]]\nid = \"high\"</pre>";
    let html = lineage_core::text::prepare(HTML.as_bytes(), lineage_core::text::Format::Html);
    let text = format!("{RST}{html}");
    let spans = spans(&text);
    let n = spans.len() as u32;
    let mut v = origin_view(false);
    v.text = Ok(text);
    v.spans = spans;
    v.runs = vec![Run {
        start: 0,
        end: n,
        origin: None,
    }];
    v.targets = vec![None];
    v.legend = vec![LegendEntry {
        origin: V2_INSTALL,
        path: "v2/installation.md".into(),
        version: 2,
        percent: 100.0,
        commit: None,
    }];
    v
}

/// Stale copies over the folder: v2's installation page still has a
/// sentence v1's page changed after it was copied, and the FAQ fixed words
/// of a passage its origin still has as they were.
pub(crate) fn stale_view() -> StaleView {
    let side = |a: &str, b: &str, c: &str| [a.to_string(), b.to_string(), c.to_string()];
    let path = |id: u32| PATHS[id as usize].to_string();
    StaleView {
        only: None,
        passages: vec![
            StaleLine {
                id: V2_INSTALL,
                path: path(V2_INSTALL),
                version: 1,
                kind: StaleKind::Changed,
                tokens: 40..120,
                lines: [7, 9],
                origin: (path(V1_INSTALL), 1),
                changed_in: Some(2),
                stale_tokens: 3,
                differences: vec![
                    [
                        side("Download the ", "installer", " for your platform and run"),
                        side(
                            "Download the ",
                            "signed package",
                            " for your platform and run",
                        ),
                    ],
                    [
                        side("then restart", "", " the service."),
                        side("then restart ", "and log in to", " the service."),
                    ],
                ],
            },
            StaleLine {
                id: FAQ,
                path: path(FAQ),
                version: 2,
                kind: StaleKind::ChangedHere,
                tokens: 200..260,
                lines: [14, 15],
                origin: (path(V1_INSTALL), 1),
                changed_in: Some(2),
                stale_tokens: 1,
                differences: vec![[
                    side("Set the ", "LINEAGE_HOME", " variable first."),
                    side("Set the ", "HOME", " variable first."),
                ]],
            },
        ],
        unaligned: 0,
    }
}

/// What v2's installation page changed since v1's: a sentence removed, one
/// new, a paragraph moved.
pub(crate) fn diff_view() -> lineage_engine::DiffView {
    use lineage_engine::{DiffKind, DiffPassage, How};
    let passage = |kind, tokens: Range<u32>, lines, words: &str| DiffPassage {
        kind,
        tokens,
        lines,
        words: words.to_string(),
    };
    lineage_engine::DiffView {
        id: V2_INSTALL,
        path: PATHS[V2_INSTALL as usize].to_string(),
        version: 2,
        predecessor: Some((
            V1_INSTALL,
            PATHS[V1_INSTALL as usize].to_string(),
            1,
            How::Folder,
        )),
        counts: [180, 12, 25, 30],
        passages: vec![
            passage(
                DiffKind::Removed,
                40..52,
                [7, 7],
                "Run the installer as root, then\nreboot the station.",
            ),
            passage(
                DiffKind::New,
                60..85,
                [9, 10],
                "Download the signed package for your platform and check its signature before you install it.",
            ),
            passage(
                DiffKind::Moved,
                120..150,
                [15, 17],
                "Calibrate the gauge at low water.",
            ),
        ],
        failed: None,
    }
}
