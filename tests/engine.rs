//! The engine thread on real folders: snapshots follow file changes, queries
//! answer from the index, shadow runs score like an independent replay,
//! adopting settings re-processes the history.
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

mod common;

use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use common::{TempDir, text};
use lineage_config::Config;
use lineage_core::fingerprint::polynomial::standard;
use lineage_core::fingerprint::token_fps;
use lineage_core::text::{Format, prepare};
use lineage_engine::{Command, Engine, EventKind, Options, Snapshot, Update, VersionStatus};
use lineage_origin::history::Keyed;
use lineage_origin::metrics::Score;
use lineage_origin::{Estimation, Eviction, Params, Selector, TableSize};
use lineage_source::Order;
use lineage_store::index::{Index, Quiet};

const WAIT: Duration = Duration::from_secs(20);

struct Running {
    engine: Engine,
    rx: Receiver<Update>,
    last: Option<Arc<Snapshot>>,
    _home: TempDir,
}

fn start(root: &Path, configure: impl FnOnce(&mut Config)) -> Running {
    start_in(root, TempDir::new("engine-home"), configure)
}

fn start_in(root: &Path, home: TempDir, configure: impl FnOnce(&mut Config)) -> Running {
    let mut config = Config {
        order: Order::Path,
        ..Config::default()
    };
    config.watch.debounce_ms = 50;
    configure(&mut config);
    let (tx, rx) = mpsc::channel();
    // What the binary sets first thing (watch asks leases).
    lineage_source::watch::ignore_lease_signal();
    let engine = Engine::start(
        Options {
            root: root.to_path_buf(),
            index_dir: home.path().join("index"),
            config,
            memory: Default::default(),
        },
        move |u| {
            let _ = tx.send(u);
        },
    );
    Running {
        engine,
        rx,
        last: None,
        _home: home,
    }
}

impl Running {
    /// Wait for an update `f` accepts (snapshots are remembered on the way).
    fn wait_for<T>(&mut self, what: &str, mut f: impl FnMut(&Update) -> Option<T>) -> T {
        let end = Instant::now() + WAIT;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            let u = self
                .rx
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no {what} within {WAIT:?}"));
            if let Update::Fatal(m) = &u {
                panic!("engine stopped: {m}");
            }
            if let Update::Snapshot(s) = &u {
                self.last = Some(s.clone());
            }
            if let Some(t) = f(&u) {
                return t;
            }
        }
    }

    /// Wait for a settled snapshot (no progress) that `f` accepts.
    fn snapshot(&mut self, what: &str, f: impl Fn(&Snapshot) -> bool) -> Arc<Snapshot> {
        self.wait_for(what, |u| match u {
            Update::Snapshot(s) if s.progress.is_none() && f(s) => Some(s.clone()),
            _ => None,
        })
    }
}

/// The index the engine left in `ix_dir`, opened with the default settings
/// (what it stores: its table is not brought up to the log).
fn reopen(root: &Path, ix_dir: &Path) -> Index {
    let config = Config::default();
    let (ix, _) = Index::open(
        root,
        ix_dir,
        config.params(),
        &config.polynomial(),
        &mut Quiet,
    )
    .unwrap();
    ix
}

fn doc<'a>(s: &'a Snapshot, path: &str) -> Option<&'a lineage_engine::DocRow> {
    s.documents.iter().find(|d| *d.path == *path)
}

#[test]
fn snapshots_follow_new_copies_edits_and_deletions() {
    let dir = TempDir::new("engine-live");
    let a = text(1, 400);
    let b = text(2, 400);
    dir.write("a.md", &a);
    dir.write("b.md", &b);
    let mut r = start(dir.path(), |_| {});
    let s = r.snapshot("first walk", |s| s.documents.len() == 2);
    assert!(s.clusters.is_empty());
    assert_eq!(s.versions, 2);
    assert!(s.shingles > 700);
    assert!(s.table.lookups > 0 && s.table.capacity.is_some());
    let fill: u64 = s.bucket_fill.iter().sum();
    assert_eq!(Some(fill), s.table.buckets);

    // A copy of a with a new tail: its dominant origin is a, and the two cluster.
    let copy = format!("{a} {}", text(3, 40));
    dir.write("c.md", &copy);
    let s = r.snapshot("the copy", |s| doc(s, "c.md").is_some());
    let c = doc(&s, "c.md").unwrap();
    let a_id = doc(&s, "a.md").unwrap().id;
    assert_eq!(c.dominant_origin, Some(a_id));
    assert_eq!(c.dominant_path.as_deref(), Some("a.md"));
    assert!(
        c.fresh_percent > 1.0 && c.fresh_percent < 20.0,
        "{}",
        c.fresh_percent
    );
    assert_eq!(s.clusters.len(), 1);
    assert_eq!(s.clusters[0].members, vec![a_id, c.id]);
    assert_eq!(s.documents.cluster(c.id), Some(0));
    assert_eq!(s.documents.cluster(doc(&s, "b.md").unwrap().id), None);

    assert!(s.table_history.len() >= 2);

    match &s.events[0].kind {
        EventKind::Version {
            path,
            version,
            origins,
            ..
        } => {
            assert_eq!((path.as_str(), *version), ("c.md", 1));
            assert_eq!(origins[0].path, "a.md");
        }
        e => panic!("newest event {e:?}"),
    }

    // A restart restores sketches and pairs from the index (stored there).
    let clusters = s.clusters.clone();
    let (root, ix_dir) = (dir.path().to_path_buf(), r._home.path().join("index"));
    drop(r.engine);
    let near = reopen(&root, &ix_dir)
        .near("k=8 keys=3 min_similarity=0.5 near=minhash-oph/2 bands=52 rows=3 links=8")
        .unwrap()
        .unwrap();
    assert_eq!(near.sketches.len(), 3);
    assert_eq!(near.pairs.len(), 1);
    assert_eq!((near.pairs[0].0, near.pairs[0].1), (a_id, c.id));
    let home = r._home;
    let mut r = start_in(&root, home, |_| {});
    let s = r.snapshot("restart", |s| s.documents.len() == 3);
    assert_eq!(s.clusters, clusters);

    // An edit is a new version, later than everything; a deletion leaves
    // the cluster and the documents.
    dir.write("b.md", format!("{b} {}", text(4, 50)));
    std::fs::remove_file(dir.path().join("c.md")).unwrap();
    let s = r.snapshot("edit and deletion", |s| {
        doc(s, "c.md").is_none() && doc(s, "b.md").is_some_and(|d| d.version == 2)
    });
    assert_eq!(s.documents.len(), 2);
    assert!(s.clusters.is_empty());
    let b2 = doc(&s, "b.md").unwrap();
    assert_eq!(b2.id, 3, "versions 0 a, 1 b, 2 c, 3 b v2");
    assert!(s.events.iter().any(|e| e.kind
        == EventKind::Deleted {
            path: "c.md".into()
        }));

    // The sketches kept are the live pages' only (b's first version and the
    // deleted c's went with them), so they grow with the pages, not the
    // history.
    drop(r.engine);
    let near = reopen(&root, &ix_dir)
        .near("k=8 keys=3 min_similarity=0.5 near=minhash-oph/2 bands=52 rows=3 links=8")
        .unwrap()
        .unwrap();
    let mut kept: Vec<u32> = near.sketches.keys().copied().collect();
    kept.sort_unstable();
    assert_eq!(kept, vec![a_id, b2.id]);
}

/// The members of each cluster, by path.
fn cluster_paths(s: &Snapshot) -> Vec<Vec<String>> {
    let path = |id: u32| {
        s.documents
            .iter()
            .find(|d| d.id == id)
            .unwrap()
            .path
            .to_string()
    };
    s.clusters
        .iter()
        .map(|c| c.members.iter().map(|&m| path(m)).collect())
        .collect()
}

#[test]
fn copies_cluster_without_every_pair_through_deletions_and_restarts() {
    const SETTINGS: &str =
        "k=8 keys=3 min_similarity=0.5 near=minhash-oph/2 bands=52 rows=3 links=8";
    let dir = TempDir::new("engine-copies");
    let page = text(20, 200);
    let words: Vec<&str> = page.split(' ').collect();
    for i in 0..30 {
        dir.write(&format!("copy{i:02}.md"), &page);
    }
    // Near copies, a word of their own each: a near copy links to the
    // first eight groups it meets and skips the rest of its cluster.
    for i in 0..12 {
        let own = format!("own{i}");
        let mut w = words.clone();
        w[10 * i + 5] = &own;
        dir.write(&format!("near{i:02}.md"), w.join(" "));
    }
    dir.write("other.md", text(21, 200));
    let mut r = start(dir.path(), |_| {});
    let s = r.snapshot("every page", |s| s.documents.len() == 43);
    assert_eq!(cluster_paths(&s).len(), 1);
    assert_eq!(s.clusters[0].members.len(), 42);
    // Each copy is listed with the first, each link once.
    assert_eq!(
        s.clusters[0].pairs.len(),
        29 + (1..=8).sum::<usize>() + 4 * 8
    );
    let (root, ix_dir) = (dir.path().to_path_buf(), r._home.path().join("index"));
    let stored = |ix_dir: &Path| {
        reopen(&root, ix_dir)
            .near(SETTINGS)
            .unwrap()
            .unwrap()
            .pairs
            .len()
    };

    // The copies and the first eight near copies go: the last four lost
    // every link, and find each other again.
    for i in 0..30 {
        std::fs::remove_file(dir.path().join(format!("copy{i:02}.md"))).unwrap();
    }
    for i in 0..8 {
        std::fs::remove_file(dir.path().join(format!("near{i:02}.md"))).unwrap();
    }
    let s = r.snapshot("deletions", |s| s.documents.len() == 5);
    let want = vec![vec![
        "near08.md".to_string(),
        "near09.md".into(),
        "near10.md".into(),
        "near11.md".into(),
    ]];
    assert_eq!(cluster_paths(&s), want);
    // Stored: the links (every pair would be 30·29/2 + 12·30 + 12·11/2 =
    // 861), and the three that joined the four again.
    let home = r._home;
    drop(r.engine);
    assert_eq!(stored(&ix_dir), (1..=8).sum::<usize>() + 4 * 8 + 3);

    // A restart restores them and forgets the links of versions gone; a
    // fresh index finds the same clusters.
    let mut r = start_in(&root, home, |_| {});
    let s = r.snapshot("restart", |s| s.documents.len() == 5);
    assert_eq!(cluster_paths(&s), want);
    drop(r.engine);
    assert_eq!(stored(&ix_dir), 3);
    let mut fresh = start(&root, |_| {});
    let s = fresh.snapshot("fresh", |s| s.documents.len() == 5);
    assert_eq!(cluster_paths(&s), want);
}

#[test]
fn the_table_is_saved_while_changes_keep_coming() {
    let dir = TempDir::new("engine-churn");
    dir.write("a.md", text(30, 100));
    let mut r = start(dir.path(), |c| c.watch.checkpoint_secs = 1);
    r.snapshot("a", |s| s.documents.len() == 1);
    let ix = r._home.path().join("index");
    // The snapshot, or the journal of changes appended to it.
    let modified = || {
        ["table.snapshot", "table.journal"].map(|f| {
            std::fs::metadata(ix.join(f))
                .and_then(|m| m.modified())
                .ok()
        })
    };
    // A change every 100 ms for 4 s: never 10 quiet seconds, yet saved
    // about once a second.
    let mut seen = std::collections::HashSet::new();
    for i in 0..40 {
        dir.write("b.md", format!("{} {i}", text(31, 100)));
        std::thread::sleep(Duration::from_millis(100));
        seen.insert(modified());
    }
    assert!(
        seen.len() >= 3,
        "saved {} times under churn",
        seen.len() - 1
    );
}

#[test]
fn origin_queries_name_the_source_passage_exactly_and_estimated() {
    let dir = TempDir::new("engine-origin");
    let a = text(10, 300);
    let words: Vec<&str> = a.split(' ').collect();
    // d: 50 new words, then a's words 100..220, then 50 new words.
    let d = format!(
        "{} {} {}",
        text(11, 50),
        words[100..220].join(" "),
        text(12, 50)
    );
    dir.write("a.md", &a);
    dir.write("d.md", &d);
    let mut r = start(dir.path(), |_| {});
    let s = r.snapshot("both", |s| s.documents.len() == 2);
    let (a_id, d_id) = (doc(&s, "a.md").unwrap().id, doc(&s, "d.md").unwrap().id);
    for exact in [true, false] {
        r.engine.send(Command::Origin { id: d_id, exact });
        let v = r.wait_for("origin view", |u| match u {
            Update::Origin(v) if v.exact == exact => Some(v.clone()),
            _ => None,
        });
        assert_eq!(v.path, "d.md");
        assert_eq!(v.text.as_deref().unwrap(), d);
        assert_eq!(v.spans.len(), 220);
        let copied: Vec<_> = v
            .runs
            .iter()
            .zip(&v.targets)
            .filter(|(run, _)| run.origin == Some(a_id))
            .collect();
        assert_eq!(copied.len(), 1, "exact={exact}: {:?}", v.runs);
        let (run, target) = copied[0];
        // The copied block is tokens 50..170 (exact; the estimate may fall
        // short by a few tokens at the ends) and starts at a's token 100.
        if exact {
            assert_eq!((run.start, run.end), (50, 170));
        } else {
            assert!(
                run.start.abs_diff(50) <= 8 && run.end.abs_diff(170) <= 8,
                "{run:?}"
            );
        }
        let t = target.expect("target");
        assert_eq!(t.id, a_id);
        assert_eq!(i64::from(t.token) - 100, i64::from(run.start) - 50);
        let shares: f64 = v.legend.iter().map(|l| l.percent).sum();
        assert!((shares - 100.0).abs() < 1e-6);
        // The copied block is the larger share: 120 of 220 tokens (exact).
        assert_eq!(v.legend[0].path, "a.md");
        if exact {
            assert!((v.legend[0].percent - 100.0 * 120.0 / 220.0).abs() < 1e-9);
        }
    }
    r.engine.send(Command::Compare { a: a_id, b: d_id });
    let c = r.wait_for("compare view", |u| match u {
        Update::Compare(c) => Some(c.clone()),
        _ => None,
    });
    // Shared shingles cover exactly the copied words on both sides.
    assert_eq!(c.b.shared, vec![(50, 170)]);
    assert_eq!(c.a.shared, vec![(100, 220)]);
    let want = (120.0 - 7.0) / (293.0 + 213.0 - 113.0);
    assert!(
        (c.similarity - want).abs() < 0.02,
        "{} vs {want}",
        c.similarity
    );
}

#[test]
fn shadow_runs_score_like_an_independent_replay_and_adopt_goes_live() {
    let dir = TempDir::new("engine-shadow");
    let base: Vec<String> = (0..8).map(|i| text(100 + i, 300)).collect();
    for (i, t) in base.iter().enumerate() {
        dir.write(&format!("{i:02}.md"), t);
        // Later files copy halves of earlier ones.
        if i > 0 {
            let half: Vec<&str> = base[i - 1].split(' ').take(150).collect();
            dir.write(
                &format!("{i:02}-copy.md"),
                format!("{} {}", half.join(" "), text(200 + i as u64, 100)),
            );
        }
    }
    let mut r = start(dir.path(), |_| {});
    let s = r.snapshot("all", |s| s.documents.len() == 15);
    let live = s.params;
    let small = Params {
        table_size: TableSize::Bytes(2048),
        bucket_entries: 8,
        eviction: Eviction::Cc,
        estimation: Estimation::Nb,
        selector: Selector::Every(4),
        ..live
    };
    r.engine.send(Command::Shadow {
        generation: 7,
        runs: vec![live, small],
    });
    let done = r.wait_for("shadow results", |u| match u {
        Update::Shadow(sh) if sh.generation == 7 && sh.finished => Some(sh.clone()),
        _ => None,
    });
    assert_eq!(done.error, None);
    assert_eq!(done.results.len(), 2);
    assert_eq!(done.done, done.total);

    // The same replay, computed here from the files in processing order.
    let mut paths: Vec<String> = s.documents.iter().map(|d| d.path.to_string()).collect();
    paths.sort();
    let fps: Vec<Vec<u64>> = paths
        .iter()
        .map(|p| {
            let bytes = std::fs::read(dir.path().join(p)).unwrap();
            token_fps(standard(), &prepare(&bytes, Format::Plain)).fps
        })
        .collect();
    let keyed = Keyed::new(standard(), fps, live.k);
    let exact = keyed.exact();
    for (res, params) in done.results.iter().zip([live, small]) {
        let units = keyed.select(params.selector);
        let mut score = Score::default();
        keyed
            .replay(&units, params, |o| score.add(&exact[o.id as usize], &o))
            .unwrap();
        assert_eq!(res.params, params);
        assert_eq!(res.dominant_origin, score.dominant_origin());
        assert_eq!(res.token_freshness, score.token_freshness());
        assert_eq!(res.ssr, score.ssr());
    }
    assert!(done.results[1].evictions > 0, "the small table evicts");

    // A newer generation supersedes; cancelling it ends it.
    r.engine.send(Command::Shadow {
        generation: 8,
        runs: vec![small; 50],
    });
    r.engine.send(Command::Cancel { generation: 8 });
    let cancelled = r.wait_for("cancel", |u| match u {
        Update::Shadow(sh) if sh.generation == 8 && sh.finished => Some(sh.clone()),
        _ => None,
    });
    assert_eq!(cancelled.error.as_deref(), Some("cancelled"));

    // Adopt: the live settings change and every version is re-processed.
    r.engine.send(Command::Adopt(small));
    let s = r.snapshot("adopted", |s| s.params == small);
    assert_eq!(s.documents.len(), 15);
    assert_eq!(s.table.capacity, small.table_params().capacity());
    assert!(s.table.capacity.unwrap() * s.table.entry_bytes <= 2048);
    assert!(s.table.evictions > 0);
    assert!(
        s.events
            .iter()
            .any(|e| matches!(&e.kind, EventKind::Notice(m) if m.contains("adopting")))
    );
}

#[test]
fn a_second_engine_on_the_same_index_is_refused() {
    let dir = TempDir::new("engine-lock");
    dir.write("a.md", text(1, 100));
    let home = TempDir::new("engine-lock-home");
    let opts = Options {
        root: dir.path().to_path_buf(),
        index_dir: home.path().join("index"),
        config: Config::default(),
        memory: Default::default(),
    };
    let (tx, rx) = mpsc::channel();
    // What the binary sets first thing (watch asks leases).
    lineage_source::watch::ignore_lease_signal();
    let _first = Engine::start(opts.clone(), move |u| {
        let _ = tx.send(u);
    });
    // Wait until the first holds the index.
    loop {
        match rx.recv_timeout(WAIT).expect("first engine") {
            Update::Snapshot(s) if !s.documents.is_empty() => break,
            Update::Fatal(m) => panic!("{m}"),
            _ => {}
        }
    }
    let (tx2, rx2) = mpsc::channel();
    let _second = Engine::start(opts, move |u| {
        let _ = tx2.send(u);
    });
    loop {
        match rx2.recv_timeout(WAIT).expect("second engine") {
            Update::Fatal(m) => {
                assert!(
                    m.to_string().contains("in use by another lineage process"),
                    "{m}"
                );
                break;
            }
            Update::Snapshot(s) => assert!(s.documents.is_empty()),
            _ => {}
        }
    }
}

/// A path an event released (its last writer closed it) may be written again
/// before the engine reads it, the new write's events still in the debouncer:
/// the engine asks whether a writer has it open, and waits for its close.
#[cfg(target_os = "linux")]
#[test]
fn a_path_written_again_before_it_is_read_waits_for_its_writer() {
    use std::io::Write;
    let dir = TempDir::new("engine-rewrite");
    dir.write("a.md", text(1, 100));
    let mut r = start(dir.path(), |_| {});
    r.snapshot("a.md", |s| doc(s, "a.md").is_some());
    // A writer truncates a.md, writes half, and pauses with it open.
    let mut w = std::fs::File::create(dir.path().join("a.md")).unwrap();
    w.write_all(text(2, 100).as_bytes()).unwrap();
    w.flush().unwrap();
    // A stale event names it now (as a close of the previous write would).
    r.engine
        .send(Command::Changed(vec![dir.path().join("a.md")]));
    std::thread::sleep(Duration::from_millis(800));
    let half = r
        .last
        .as_ref()
        .and_then(|s| doc(s, "a.md").map(|d| d.version));
    // Drain what came meanwhile: no second version may have been recorded.
    while let Ok(u) = r.rx.try_recv() {
        if let Update::Snapshot(s) = u {
            assert_eq!(
                doc(&s, "a.md").map(|d| d.version),
                Some(1),
                "read mid-write"
            );
        }
    }
    assert_eq!(half, Some(1));
    // The rest, and the close: one new version, whole.
    w.write_all(format!(" {}", text(3, 100)).as_bytes())
        .unwrap();
    drop(w);
    let s = r.snapshot("a.md v2", |s| {
        doc(s, "a.md").is_some_and(|d| d.version == 2)
    });
    assert_eq!(doc(&s, "a.md").unwrap().tokens, 200, "read whole");
}

#[test]
fn earlier_and_deleted_versions_show_their_own_words() {
    let dir = TempDir::new("engine-history");
    let (v1, v2) = (text(20, 200), text(21, 200));
    dir.write("a.md", &v1);
    let mut r = start(dir.path(), |_| {});
    let s = r.snapshot("v1", |s| doc(s, "a.md").is_some());
    let first = doc(&s, "a.md").unwrap().id;
    dir.write("a.md", &v2);
    let s = r.snapshot("v2", |s| doc(s, "a.md").is_some_and(|d| d.version == 2));
    let second = doc(&s, "a.md").unwrap().id;
    let origin = |r: &mut Running, id| {
        r.engine.send(Command::Origin { id, exact: false });
        r.wait_for("origin view", |u| match u {
            Update::Origin(v) if v.id == id => Some(v.clone()),
            _ => None,
        })
    };
    // The first version's file is gone; its text is the index's.
    let v = origin(&mut r, first);
    assert_eq!(v.text.as_deref(), Ok(v1.as_str()));
    assert_eq!(v.status, VersionStatus::Replaced { latest: 2 });
    let listed: Vec<(u32, u32, bool)> = (v.versions.iter())
        .map(|x| (x.id, x.version, x.text_kept))
        .collect();
    assert_eq!(listed, [(first, 1, true), (second, 2, true)]);
    std::fs::remove_file(dir.path().join("a.md")).unwrap();
    r.snapshot("deleted", |s| s.documents.is_empty());
    let v = origin(&mut r, second);
    assert_eq!(v.text.as_deref(), Ok(v2.as_str()));
    assert_eq!(v.status, VersionStatus::Deleted);
    // Two versions side by side, with their versions named.
    r.engine.send(Command::Compare {
        a: first,
        b: second,
    });
    let c = r.wait_for("compare view", |u| match u {
        Update::Compare(c) => Some(c.clone()),
        _ => None,
    });
    assert_eq!((c.a.version, c.b.version), (1, 2));
    assert_eq!(c.a.text.as_deref(), Ok(v1.as_str()));
}

#[test]
fn after_a_restart_events_show_the_history_and_nothing_is_told_twice() {
    let dir = TempDir::new("engine-restart");
    dir.write("a.md", text(30, 100));
    dir.write("b.md", text(31, 100));
    let home = TempDir::new("engine-restart-home");
    let index = home.path().to_path_buf();
    let mut r = start_in(dir.path(), home, |_| {});
    let first = r.snapshot("both", |s| s.documents.len() == 2);
    let told = |s: &Snapshot, name: &str| {
        (s.events.iter())
            .find(|e| matches!(&e.kind, EventKind::Version { path, .. } if path == name))
            .map(|e| e.at_ms)
    };
    let b_told = told(&first, "b.md").unwrap();
    let Running { engine, _home, .. } = r;
    drop(engine);
    assert!(index.join("index").exists());

    let mut r = start_in(dir.path(), _home, |_| {});
    let s = r.snapshot("reopened", |s| s.documents.len() == 2);
    let names: Vec<(&str, u64)> = (s.events.iter())
        .filter_map(|e| match &e.kind {
            EventKind::Version { path, .. } => Some((path.as_str(), e.n)),
            _ => None,
        })
        .collect();
    assert_eq!(names, [("b.md", 2), ("a.md", 1)], "newest first");
    let mtime = std::fs::metadata(dir.path().join("b.md"))
        .unwrap()
        .modified()
        .unwrap()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    // Timed when lineage saw it, as before the restart (recorded just
    // before it was told then), not by the file.
    let at = s.events[0].at_ms;
    assert!(mtime <= at && at <= b_told, "{mtime} <= {at} <= {b_told}");
    assert!(
        s.events.iter().all(|e| e.n <= s.before_start),
        "nothing new yet"
    );
    // They are the history, not news: no Events update carries them.
    dir.write("c.md", text(32, 100));
    let fresh = r.wait_for("c.md's event", |u| match u {
        Update::Events(e) => Some(e.clone()),
        _ => None,
    });
    assert!(
        fresh.iter().all(|e| !matches!(&e.kind,
            EventKind::Version { path, .. } if path != "c.md")),
        "{fresh:?}"
    );
}

#[test]
fn a_rescan_that_finds_nothing_is_still_answered() {
    let dir = TempDir::new("engine-rescan");
    dir.write("a.md", text(40, 50));
    let mut r = start(dir.path(), |_| {});
    let s = r.snapshot("a.md", |s| s.documents.len() == 1);
    // Let the start settle, then ask: a newer snapshot comes, nothing changed.
    std::thread::sleep(Duration::from_millis(300));
    let mut before = r.last.as_ref().map_or(s.seq, |l| l.seq);
    while let Ok(u) = r.rx.try_recv() {
        if let Update::Snapshot(n) = u {
            before = before.max(n.seq);
        }
    }
    r.engine.send(Command::Rescan);
    let after = r.snapshot("the rescan's answer", |n| n.seq > before);
    assert_eq!(after.versions, 1);
}

/// A search of every page lists the live pages holding the words, in path
/// order, each with its matches and the first one's place in the text the
/// Origin pane shows; a page whose text the index does not keep is read
/// from its file; a replaced version's words are not found.
#[test]
fn a_search_of_every_page_finds_the_words_where_origin_shows_them() {
    let dir = TempDir::new("engine-search");
    dir.write(
        "b/one.md",
        "# One\n\nThe Needle is here, and a needle there.\n",
    );
    dir.write("a.md", "Nothing to see.\n");
    dir.write("c.txt", "needles: NEEDLE\n");
    dir.write("d.md", "an old needle\n");
    for budget in [512 << 20, 0] {
        let mut r = start(dir.path(), |c| {
            c.history_budget = lineage_core::bytesize::Bytes(budget)
        });
        r.snapshot("four", |s| s.documents.len() == 4);
        if budget > 0 {
            // d.md's first version held the word; its new one does not.
            dir.write("d.md", "an old thread\n");
            r.snapshot("d.md v2", |s| {
                doc(s, "d.md").is_some_and(|d| d.version == 2)
            });
        }
        r.engine.send(Command::Search {
            generation: 7,
            query: "nEEdle".into(),
        });
        let v = r.wait_for("search done", |u| match u {
            Update::Search(v) if v.done => Some(v.clone()),
            _ => None,
        });
        assert_eq!(v.generation, 7);
        assert_eq!((v.searched, v.total, v.unread), (4, 4, 0));
        let found: Vec<(&str, u32)> = v.hits.iter().map(|h| (&*h.path, h.matches)).collect();
        assert_eq!(found, [("b/one.md", 2), ("c.txt", 2)], "budget {budget}");
        assert_eq!((v.pages, v.matches), (2, 4));
        let hit = &v.hits[0];
        assert_eq!(&hit.context[hit.marked.clone()], "Needle");
        assert_eq!(hit.context, "The Needle is here, and a needle there.");
        r.engine.send(Command::Origin {
            id: hit.id,
            exact: false,
        });
        let o = r.wait_for("origin view", |u| match u {
            Update::Origin(o) => Some(o.clone()),
            _ => None,
        });
        assert_eq!(&o.text.as_deref().unwrap()[hit.first.clone()], "Needle");
    }
}

/// A deletion and a rename are in the Events after a restart, at the time
/// they were told of (the history keeps versions, not departures).
#[test]
fn deletions_and_renames_are_in_the_events_after_a_restart() {
    let dir = TempDir::new("engine-departures");
    dir.write("a.md", text(40, 100));
    dir.write("b.md", text(41, 100));
    let home = TempDir::new("engine-departures-home");
    let mut r = start_in(dir.path(), home, |_| {});
    r.snapshot("both", |s| s.documents.len() == 2);
    std::fs::remove_file(dir.path().join("a.md")).unwrap();
    let deleted = r.wait_for("a.md deleted", |u| match u {
        Update::Events(e) => e
            .iter()
            .find(|e| matches!(&e.kind, EventKind::Deleted { path } if path == "a.md"))
            .cloned(),
        _ => None,
    });
    std::fs::rename(dir.path().join("b.md"), dir.path().join("c.md")).unwrap();
    let renamed = r.wait_for("b.md renamed", |u| match u {
        Update::Events(e) => e
            .iter()
            .find(|e| matches!(&e.kind, EventKind::Renamed { to, .. } if to == "c.md"))
            .cloned(),
        _ => None,
    });
    r.snapshot("c.md live", |s| doc(s, "c.md").is_some());
    let Running { engine, _home, .. } = r;
    drop(engine);

    let mut r = start_in(dir.path(), _home, |_| {});
    let s = r.snapshot("reopened", |s| s.documents.len() == 1);
    let told: Vec<(&EventKind, i64)> = s.events.iter().map(|e| (&e.kind, e.at_ms)).collect();
    assert_eq!(told[0], (&renamed.kind, renamed.at_ms), "{told:?}");
    assert_eq!(told[1], (&deleted.kind, deleted.at_ms), "{told:?}");
    assert_eq!(told.len(), 4, "two versions, two departures: {told:?}");
    // Numbered newest first, and not told again as news.
    assert!(s.events.windows(2).all(|w| w[0].n > w[1].n));
    dir.write("d.md", text(42, 100));
    let fresh = r.wait_for("d.md's event", |u| match u {
        Update::Events(e) => Some(e.clone()),
        _ => None,
    });
    assert!(
        fresh.iter().all(|e| !matches!(
            &e.kind,
            EventKind::Deleted { .. } | EventKind::Renamed { .. }
        )),
        "{fresh:?}"
    );
    assert!(fresh.iter().all(|e| e.n > s.events[0].n), "{fresh:?}");
}
