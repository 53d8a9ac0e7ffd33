//! What the engine's rows turn into on screen: the Documents pane's rows and
//! a new version's event. Pure functions of the version rows, so they are
//! tested without an index.

use std::collections::HashMap;

use super::query::Row;
use super::{DocRow, Event, EventKind, OriginShare};
use lineage_store::index::Departure;

/// One row per live document, by id: its latest version's figures and its
/// dominant origin's path, with the file's modification time from
/// `mtime_ns`.
pub(super) fn doc_rows(
    rows: &[Row],
    live: &HashMap<String, u32>,
    mtime_ns: impl Fn(&str) -> i64,
) -> Vec<DocRow> {
    let mut docs: Vec<DocRow> = live
        .iter()
        .map(|(path, &id)| {
            let r = &rows[id as usize];
            DocRow {
                id,
                path: path.as_str().into(),
                version: r.version,
                tokens: r.tokens,
                fresh_percent: r.fresh_percent(),
                dominant_origin: r.dominant_origin,
                dominant_path: r
                    .dominant_origin
                    .map(|o| rows[o as usize].path.as_str().into()),
                mtime_ns: mtime_ns(path),
            }
        })
        .collect();
    docs.sort_unstable_by_key(|d| d.id);
    docs
}

/// How many buckets hold 0, 1, …, `per` entries (empty for an unbounded
/// table, which has no buckets).
pub(super) fn fill_histogram(fills: &[u16], per: u16) -> Vec<u64> {
    if fills.is_empty() {
        return Vec::new();
    }
    let mut h = vec![0u64; usize::from(per) + 1];
    for &f in fills {
        h[usize::from(f.min(per))] += 1;
    }
    h
}

/// The event of version `id`: its figures and every origin it drew on,
/// named by path and version.
pub(super) fn version_event(rows: &[Row], id: u32) -> EventKind {
    let r = &rows[id as usize];
    let name = |o: u32| {
        let r = &rows[o as usize];
        (r.path.clone(), r.version)
    };
    let origins = r
        .origins
        .iter()
        .map(|&(o, units)| {
            let (path, version) = name(o);
            OriginShare {
                id: o,
                path,
                version,
                units,
            }
        })
        .collect();
    EventKind::Version {
        path: r.path.clone(),
        version: r.version,
        id,
        fresh_percent: r.fresh_percent(),
        // Its own new text is no origin to name: only an earlier version
        // (of its page or another's) is.
        dominant_path: r.dominant_origin.filter(|&o| o != id).map(|o| name(o).0),
        origins,
    }
}

/// A deletion or a rename told at `at_ms`, as the index keeps it (None for
/// any other event).
pub(super) fn departure(at_ms: i64, kind: &EventKind) -> Option<Departure> {
    let (path, to, id) = match kind {
        EventKind::Deleted { path } => (path, None, None),
        EventKind::Renamed { from, to, id } => (from, Some(to.clone()), Some(*id)),
        _ => return None,
    };
    Some(Departure {
        at_ms,
        path: path.clone(),
        to,
        id,
    })
}

/// The event a kept departure tells ([`departure`]'s other way).
fn departed(d: &Departure) -> EventKind {
    match (&d.to, d.id) {
        (Some(to), Some(id)) => EventKind::Renamed {
            from: d.path.clone(),
            to: to.clone(),
            id,
        },
        _ => EventKind::Deleted {
            path: d.path.clone(),
        },
    }
}

/// The newest `n` events before this process started, as far as the index
/// knows, newest first: the versions (timed when they were seen, as they
/// were told; by their file's modification time where the index did not
/// keep that) and the `departures` (deletions and renames, newest first,
/// timed when they were told of), merged by time, each list in its own
/// order.
pub(super) fn past_events(rows: &[Row], departures: &[Departure], n: usize) -> Vec<Event> {
    let mut versions = (0..rows.len() as u32).rev().map(|id| {
        let r = &rows[id as usize];
        let at_ms = r.seen_ms.unwrap_or(r.mtime_ns.div_euclid(1_000_000));
        Event {
            n: 0,
            at_ms,
            kind: version_event(rows, id),
        }
    });
    let total = (rows.len() + departures.len()) as u64;
    let mut departures = departures.iter().map(|d| Event {
        n: 0,
        at_ms: d.at_ms,
        kind: departed(d),
    });
    // Two lists newest first, merged by time; each keeps its own order.
    let (mut v, mut d) = (versions.next(), departures.next());
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let take_v = match (&v, &d) {
            (Some(a), Some(b)) => a.at_ms >= b.at_ms,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        if take_v {
            out.extend(v.take());
            v = versions.next();
        } else {
            out.extend(d.take());
            d = departures.next();
        }
    }
    // Numbered in order of the whole merge, the newest the highest (so a
    // version's number is its id + 1 while nothing departed).
    for (i, e) in out.iter_mut().enumerate() {
        e.n = total - i as u64;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(path: &str, version: u32, fresh: u32, origins: &[(u32, u32)]) -> Row {
        Row {
            path: path.into(),
            version,
            tokens: 100,
            shingles: 93,
            fresh_tokens: fresh,
            dominant_origin: origins.first().map(|o| o.0),
            origins: origins.to_vec(),
            mtime_ns: i64::from(version) * 1_500_000_000_000_000_000 / 2,
            seen_ms: None,
        }
    }

    #[test]
    fn past_events_are_the_newest_versions_newest_first() {
        let mut rows = rows();
        let e = past_events(&rows, &[], 2);
        let seen: Vec<(u64, u32)> = e
            .iter()
            .map(|e| match &e.kind {
                EventKind::Version { id, .. } => (e.n, *id),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(seen, [(3, 2), (2, 1)]);
        assert_eq!(
            e[0].at_ms, 1_500_000_000_000,
            "not known when it was seen: the version's mtime in ms"
        );
        assert_eq!(e[0].kind, version_event(&rows, 2));
        // Seen later than its file was written: told at that time.
        rows[2].seen_ms = Some(1_700_000_000_000);
        assert_eq!(past_events(&rows, &[], 1)[0].at_ms, 1_700_000_000_000);
        assert_eq!(past_events(&rows, &[], 10).len(), 3);
        assert!(past_events(&[], &[], 10).is_empty());
    }

    #[test]
    fn deletions_and_renames_told_before_fall_in_by_time() {
        let rows = rows();
        // The versions' times: 0.75e12, 0.75e12, 1.5e12 ms.
        let departures = [
            Departure {
                at_ms: 1_600_000_000_000,
                path: "b.md".into(),
                to: Some("c.md".into()),
                id: Some(1),
            },
            Departure {
                at_ms: 1_000_000_000_000,
                path: "old.md".into(),
                to: None,
                id: None,
            },
        ];
        let e = past_events(&rows, &departures, 10);
        let kinds: Vec<(u64, String)> = (e.iter())
            .map(|e| {
                let what = match &e.kind {
                    EventKind::Version { path, version, .. } => format!("{path} v{version}"),
                    EventKind::Renamed { from, to, .. } => format!("{from} -> {to}"),
                    EventKind::Deleted { path } => format!("{path} gone"),
                    other => panic!("{other:?}"),
                };
                (e.n, what)
            })
            .collect();
        let want = [
            (5, "b.md -> c.md"),
            (4, "a.md v2"),
            (3, "old.md gone"),
            (2, "b.md v1"),
            (1, "a.md v1"),
        ];
        assert_eq!(kinds, want.map(|(n, w)| (n, w.to_string())));
        assert_eq!(e[0].at_ms, 1_600_000_000_000);
        // The newest n only.
        assert_eq!(past_events(&rows, &departures, 2).len(), 2);
        // What is kept is what was told.
        for d in departures {
            assert_eq!(departure(d.at_ms, &departed(&d)), Some(d));
        }
    }

    fn rows() -> Vec<Row> {
        vec![
            row("a.md", 1, 100, &[]),
            row("b.md", 1, 40, &[(0, 30)]),
            // a.md again: its second version copies b.md most, then itself.
            row("a.md", 2, 10, &[(1, 50), (0, 20)]),
        ]
    }

    #[test]
    fn the_fill_histogram_counts_buckets_by_entries() {
        assert_eq!(fill_histogram(&[0, 2, 2, 3, 9], 3), [1, 0, 2, 2]);
        assert!(fill_histogram(&[], 64).is_empty());
    }

    #[test]
    fn only_live_versions_become_rows_in_id_order() {
        let rows = rows();
        let live = HashMap::from([("a.md".to_string(), 2), ("b.md".to_string(), 1)]);
        let docs = doc_rows(&rows, &live, |p| p.len() as i64);
        let ids: Vec<u32> = docs.iter().map(|d| d.id).collect();
        assert_eq!(ids, [1, 2]);
        let a = &docs[1];
        assert_eq!((&*a.path, a.version), ("a.md", 2));
        assert_eq!(a.dominant_path.as_deref(), Some("b.md"));
        assert_eq!(a.fresh_percent, 10.0);
        assert_eq!(a.mtime_ns, 4);
        assert_eq!(docs[0].dominant_path.as_deref(), Some("a.md"));
    }

    /// A page mostly new, its own dominant origin, names none (the Events
    /// pane said "mostly from an earlier version" of a first version); one
    /// mostly from its page's earlier version names that page.
    #[test]
    fn a_version_mostly_its_own_new_text_names_no_dominant_origin() {
        let mut rows = rows();
        rows[0].dominant_origin = Some(0);
        rows[2].dominant_origin = Some(0);
        let dominant = |id| match version_event(&rows, id) {
            EventKind::Version { dominant_path, .. } => dominant_path,
            other => panic!("{other:?}"),
        };
        assert_eq!(dominant(0), None);
        assert_eq!(dominant(2).as_deref(), Some("a.md"));
    }

    #[test]
    fn a_version_event_names_every_origin_by_path_and_version() {
        let EventKind::Version {
            path,
            version,
            origins,
            dominant_path,
            fresh_percent,
            ..
        } = version_event(&rows(), 2)
        else {
            panic!("a version event");
        };
        assert_eq!((path.as_str(), version, fresh_percent), ("a.md", 2, 10.0));
        assert_eq!(dominant_path.as_deref(), Some("b.md"));
        let named: Vec<(&str, u32, u32)> = origins
            .iter()
            .map(|o| (o.path.as_str(), o.version, o.units))
            .collect();
        assert_eq!(named, [("b.md", 1, 50), ("a.md", 1, 20)]);
    }
}
