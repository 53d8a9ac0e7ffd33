//! The engine driven step by step: no thread, no watcher, no sleep. Each
//! test gives [`Run::step`] its inputs and times and reads what it published.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Mutex;
use std::sync::mpsc::channel;

use super::*;
use lineage_config::Config;
use lineage_origin::TableSize;
use lineage_testing::{TempDir, text};

const S: Duration = Duration::from_secs(1);

struct Harness {
    base: TempDir,
    root: PathBuf,
    run: Run,
    published: Arc<Mutex<Vec<Update>>>,
    t0: Instant,
    _events: Receiver<Input>,
}

fn small() -> Params {
    Params {
        table_size: TableSize::Bytes(64 << 10),
        ..Params::default()
    }
}

impl Harness {
    /// The engine opened on a folder holding `files`, which it has not
    /// walked yet; `debounce_ms` is the window in which a file modified is
    /// taken for one still being written.
    fn new(tag: &str, files: &[(&str, String)], debounce_ms: u64) -> Harness {
        Harness::configured(tag, files, debounce_ms, |_| {})
    }

    /// As [`Harness::new`], the config changed by `set` first.
    fn configured(
        tag: &str,
        files: &[(&str, String)],
        debounce_ms: u64,
        set: impl FnOnce(&mut Config),
    ) -> Harness {
        let base = TempDir::new(&format!("run-{tag}"));
        let root = base.0.join("root");
        std::fs::create_dir_all(&root).unwrap();
        for (name, body) in files {
            written_long_ago(&root.join(name), body);
        }
        let mut config = Config::default();
        config.set_params(&small());
        config.watch.debounce_ms = debounce_ms;
        // Ticks only when a test steps them.
        config.watch.rescan_secs = 3600;
        set(&mut config);
        let opts = Options {
            root: root.clone(),
            index_dir: base.0.join("index"),
            config,
            memory: Default::default(),
        };
        let published = Arc::new(Mutex::new(Vec::new()));
        let sink = published.clone();
        let publish: Publish = Arc::new(Mutex::new(Box::new(move |u| {
            sink.lock().unwrap().push(u);
        })));
        let (tx, rx) = channel();
        let t0 = Instant::now();
        let (mut run, id) = Run::open(opts, tx, publish, t0).unwrap();
        run.live.folder.found(id);
        Harness {
            base,
            root,
            run,
            published,
            t0,
            _events: rx,
        }
    }

    /// Quit and start the engine again on the same folder and index, as a
    /// new process would: its index let go first (the lock), its updates
    /// published where the first run's were.
    fn restart(&mut self) {
        assert_eq!(self.command(Command::Quit, S), Flow::Stop);
        self.run.store = Store::Closed {
            why: "restarting".into(),
        };
        let opts = self.run.live.opts.clone();
        let sink = self.published.clone();
        let publish: Publish = Arc::new(Mutex::new(Box::new(move |u| {
            sink.lock().unwrap().push(u);
        })));
        let (tx, rx) = channel();
        let (run, id) = Run::open(opts, tx, publish, self.t0).unwrap();
        self.run = run;
        self.run.live.folder.found(id);
        self._events = rx;
    }

    fn command(&mut self, c: Command, at: Duration) -> Flow {
        self.run
            .step(Step::Inputs(vec![Input::Command(c)]), self.t0 + at)
    }

    /// What was published since the last call: the events, and the last
    /// snapshot (if any).
    fn take(&self) -> (Vec<EventKind>, Option<Arc<Snapshot>>, Vec<Update>) {
        let all = std::mem::take(&mut *self.published.lock().unwrap());
        let mut events = Vec::new();
        let mut snapshot = None;
        let mut other = Vec::new();
        for u in all {
            match u {
                Update::Events(e) => events.extend(e.iter().map(|e| e.kind.clone())),
                Update::Snapshot(s) => snapshot = Some(s),
                u => other.push(u),
            }
        }
        (events, snapshot, other)
    }

    /// Write `name`, its writer long gone.
    fn write(&self, name: &str, body: &str) -> PathBuf {
        let p = self.root.join(name);
        written_long_ago(&p, body);
        p
    }
}

/// Write `path`, modified an hour ago: not a file still being written.
fn written_long_ago(path: &Path, body: &str) {
    std::fs::write(path, body).unwrap();
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(std::time::SystemTime::now() - 3600 * S)
        .unwrap();
}

/// The paths and versions of the new-version events among `events`.
fn versions(events: &[EventKind]) -> Vec<(String, u32)> {
    events
        .iter()
        .filter_map(|e| match e {
            EventKind::Version { path, version, .. } => Some((path.clone(), *version)),
            _ => None,
        })
        .collect()
}

fn errors(events: &[EventKind]) -> Vec<&str> {
    events
        .iter()
        .filter_map(|e| match e {
            EventKind::Error(m) => Some(m.as_str()),
            _ => None,
        })
        .collect()
}

fn paths(s: &Snapshot) -> Vec<&str> {
    let mut p: Vec<&str> = s.documents.iter().map(|d| &*d.path).collect();
    p.sort_unstable();
    p
}

/// A page, and another that copies all of it and adds a little.
fn two_pages() -> Vec<(&'static str, String)> {
    let a = text(1, 300);
    let b = format!("{a} {}", text(2, 20));
    vec![("a.txt", a), ("b.txt", b)]
}

#[test]
fn a_rescan_walks_the_folder_and_publishes_documents_clusters_and_origins() {
    let mut h = Harness::new("rescan", &two_pages(), 200);
    let (_, opening, _) = h.take();
    assert_eq!(
        opening.unwrap().progress.as_ref().unwrap().what,
        "opening the index"
    );

    assert_eq!(h.command(Command::Rescan, S), Flow::Go);
    let (events, snap, _) = h.take();
    assert_eq!(
        versions(&events),
        [("a.txt".to_string(), 1), ("b.txt".to_string(), 1)]
    );
    let b = events
        .iter()
        .find_map(|e| match e {
            EventKind::Version {
                path,
                dominant_path,
                ..
            } if path == "b.txt" => Some(dominant_path.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(b.as_deref(), Some("a.txt"), "b copies a");
    let snap = snap.unwrap();
    assert_eq!(paths(&snap), ["a.txt", "b.txt"]);
    assert_eq!(snap.versions, 2);
    assert_eq!(snap.clusters.len(), 1);
    assert_eq!(snap.clusters[0].members, [0, 1]);
    assert!(snap.progress.is_none());

    // The change put the checkpoint 10 s after it.
    assert_eq!(h.run.schedule.due(h.t0 + S, None), Err(h.t0 + 11 * S));
    // Asked again: answered with a snapshot, nothing new in it.
    h.command(Command::Rescan, 2 * S);
    let (events, snap, _) = h.take();
    assert!(versions(&events).is_empty(), "{events:?}");
    assert_eq!(paths(&snap.unwrap()), ["a.txt", "b.txt"]);
}

/// After a restart the Events tell the history's versions at the time
/// lineage saw them, not at their files' modification times (an hour
/// before), and the status bar's "last change" has nothing of this run to
/// name until a page changes.
#[test]
fn after_a_restart_versions_are_timed_when_seen_and_none_is_a_change_of_this_run() {
    let now_ms = || {
        let d = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        d.unwrap().as_millis() as i64
    };
    let mut h = Harness::new("restart", &two_pages(), 200);
    let before = now_ms();
    h.command(Command::Rescan, S);
    let after = now_ms();
    let (_, first, _) = h.take();
    assert_eq!(
        first.unwrap().before_start,
        0,
        "a new index: every event is this run's"
    );
    h.restart();
    h.command(Command::Rescan, 2 * S);
    let (events, snap, _) = h.take();
    assert!(versions(&events).is_empty(), "nothing changed: {events:?}");
    let s = snap.unwrap();
    let told: Vec<(u64, i64)> = (s.events.iter())
        .filter(|e| matches!(e.kind, EventKind::Version { .. }))
        .map(|e| (e.n, e.at_ms))
        .collect();
    assert_eq!(told.len(), 2, "{:?}", s.events);
    for (_, at) in &told {
        assert!((before..=after).contains(at), "{before} <= {at} <= {after}");
    }
    assert_eq!(s.before_start, 2);
    assert!(
        s.events.iter().all(|e| e.n <= s.before_start),
        "{:?}",
        s.events
    );
    // A change now is one.
    let c = h.write("c.txt", &text(3, 200));
    h.command(Command::Changed(vec![c]), 3 * S);
    let (_, snap, _) = h.take();
    let s = snap.unwrap();
    assert_eq!(s.before_start, 2);
    assert!(
        matches!(&s.events[0].kind, EventKind::Version { path, .. } if path == "c.txt")
            && s.events[0].n > s.before_start,
        "{:?}",
        s.events
    );
}

#[test]
fn changed_paths_bring_only_their_files() {
    let mut h = Harness::new("changed", &two_pages(), 200);
    h.command(Command::Rescan, S);
    h.take();
    let c = h.write("c.txt", &text(3, 200));
    h.write("a.txt", &text(4, 200));
    h.command(Command::Changed(vec![c]), 2 * S);
    let (events, snap, _) = h.take();
    assert_eq!(
        versions(&events),
        [("c.txt".to_string(), 1)],
        "a.txt was not named"
    );
    assert_eq!(paths(&snap.unwrap()), ["a.txt", "b.txt", "c.txt"]);
    h.command(Command::Rescan, 3 * S);
    let (events, _, _) = h.take();
    assert_eq!(versions(&events), [("a.txt".to_string(), 2)]);
}

#[test]
fn a_closed_index_refuses_queries_and_catches_up_at_the_next_tick() {
    let mut h = Harness::new("closed", &two_pages(), 200);
    h.command(Command::Rescan, S);
    h.take();
    h.run.failed(IndexError::Poisoned);
    assert!(h.run.store.open().is_none());
    h.write("c.txt", &text(3, 200));
    // Asked while closed: told why, the last snapshot stands.
    h.command(
        Command::Origin {
            id: 0,
            exact: false,
        },
        2 * S,
    );
    let (events, snap, other) = h.take();
    let errs = errors(&events);
    assert_eq!(errs.len(), 2, "{errs:?}");
    assert!(
        errs[0].starts_with("the index cannot be written"),
        "{errs:?}"
    );
    assert!(errs[1].starts_with("the index is closed"), "{errs:?}");
    assert!(other.is_empty(), "no origin answered: {other:?}");
    assert_eq!(paths(&snap.unwrap()), ["a.txt", "b.txt"]);
    // A failed write while closed is not told again.
    h.run.failed(IndexError::Poisoned);
    h.command(Command::Rescan, 3 * S);
    let (events, _, _) = h.take();
    assert_eq!(errors(&events).len(), 1, "only the refusal: {events:?}");

    // The tick reopens it and catches up with the folder.
    let tick = h.t0 + 60 * S;
    assert_eq!(h.run.step(Step::Due(Due::Tick), tick), Flow::Go);
    assert!(h.run.store.open().is_some());
    let (events, snap, _) = h.take();
    assert_eq!(versions(&events), [("c.txt".to_string(), 1)]);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, EventKind::Notice(n) if n.contains("can be written again")))
    );
    assert_eq!(paths(&snap.unwrap()), ["a.txt", "b.txt", "c.txt"]);
    // The next tick is one period after this one.
    h.run.schedule.saved();
    assert_eq!(
        h.run.schedule.due(tick, None),
        Err(tick + h.run.live.folder.every)
    );
    h.command(
        Command::Origin {
            id: 1,
            exact: false,
        },
        61 * S,
    );
    let (_, _, other) = h.take();
    assert!(
        matches!(&other[..], [Update::Origin(v)] if v.id == 1),
        "{other:?}"
    );
}

#[test]
fn quit_saves_the_table_and_stops() {
    let mut h = Harness::new("quit", &two_pages(), 200);
    h.command(Command::Rescan, S);
    let snapshot = h.base.0.join("index").join("table.snapshot");
    let before = std::fs::metadata(&snapshot).map(|m| m.len()).ok();
    assert_eq!(h.command(Command::Quit, 2 * S), Flow::Stop);
    let after = std::fs::metadata(&snapshot).map(|m| m.len()).ok();
    assert!(
        after.is_some_and(|n| n > 0),
        "saved: {before:?} → {after:?}"
    );
    assert!(before.is_none(), "not saved before Quit");
}

#[test]
fn adopted_settings_reopen_the_index_and_bad_ones_are_refused() {
    let mut h = Harness::new("adopt", &two_pages(), 200);
    h.command(Command::Rescan, S);
    h.take();
    let bigger = Params {
        table_size: TableSize::Bytes(256 << 10),
        ..small()
    };
    h.command(Command::Adopt(bigger), 2 * S);
    let (events, snap, _) = h.take();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, EventKind::Notice(n) if n.starts_with("adopting new settings")))
    );
    let snap = snap.unwrap();
    assert_eq!(snap.params.table_size, bigger.table_size);
    assert_eq!(paths(&snap), ["a.txt", "b.txt"]);
    assert_eq!(
        h.run.live.opts.config.params().table_size,
        bigger.table_size
    );

    let bad = Params { k: 0, ..small() };
    h.command(Command::Adopt(bad), 3 * S);
    let (events, snap, _) = h.take();
    let errs = errors(&events);
    assert!(
        errs[0].starts_with("cannot adopt these settings"),
        "{errs:?}"
    );
    assert_eq!(snap.unwrap().params.table_size, bigger.table_size, "kept");
}

#[test]
fn lost_events_switch_to_rescans_that_wait_for_writers_a_few_ticks_at_most() {
    // A minute's debounce window: a file written now is one being written.
    let mut h = Harness::new("lost", &two_pages(), 60_000);
    h.command(Command::Rescan, S);
    h.take();
    std::fs::write(h.root.join("c.txt"), text(3, 200)).unwrap();
    let failed = Input::Files(Batch::Failed(vec!["queue overflow".into()]));
    h.run.step(Step::Inputs(vec![failed]), h.t0 + 2 * S);
    assert!(matches!(
        h.run.live.folder.watching,
        Watching::Rescanning(_)
    ));
    // Told at once, though the walk waits.
    let (events, snap, _) = h.take();
    let errs = errors(&events);
    assert_eq!(errs[0], "watching: queue overflow");
    assert!(errs[1].starts_with("events may be lost"), "{errs:?}");
    assert!(versions(&events).is_empty(), "{events:?}");
    assert_eq!(paths(&snap.unwrap()), ["a.txt", "b.txt"]);
    // From now on walks are timed rescans: one with a file still being
    // written waits for the next tick, five times in a row at most.
    for tick in 0..4 {
        h.run.step(Step::Due(Due::Tick), h.t0 + (10 + tick) * S);
        let (events, snap, _) = h.take();
        assert!(events.is_empty() && snap.is_none(), "tick {tick} waits");
    }
    h.run.step(Step::Due(Due::Tick), h.t0 + 20 * S);
    let (events, snap, _) = h.take();
    assert_eq!(versions(&events), [("c.txt".to_string(), 1)]);
    assert_eq!(paths(&snap.unwrap()), ["a.txt", "b.txt", "c.txt"]);
}

#[test]
fn a_root_that_goes_marks_its_documents_deleted_and_comes_back_walked() {
    let mut h = Harness::new("root", &two_pages(), 200);
    h.command(Command::Rescan, S);
    h.take();
    let away = h.base.0.join("away");
    std::fs::rename(&h.root, &away).unwrap();
    h.run.step(Step::Due(Due::Tick), h.t0 + 10 * S);
    let (events, snap, _) = h.take();
    assert!(errors(&events)[0].contains("marked deleted"), "{events:?}");
    assert!(paths(&snap.unwrap()).is_empty());
    assert!(matches!(h.run.live.folder.watching, Watching::RootGone));
    std::fs::rename(&away, &h.root).unwrap();
    h.run.step(Step::Due(Due::Tick), h.t0 + 20 * S);
    let (events, snap, _) = h.take();
    assert!(
        events.iter().any(
            |e| matches!(e, EventKind::Notice(n) if n.ends_with("is back; watching it again"))
        ),
        "{events:?}"
    );
    assert_eq!(paths(&snap.unwrap()), ["a.txt", "b.txt"]);
}

#[test]
fn a_page_renamed_over_another_retires_it_and_its_stored_sketch() {
    let mut pages = two_pages();
    pages.push(("c.txt", text(3, 200)));
    let mut h = Harness::new("over", &pages, 200);
    h.command(Command::Rescan, S);
    h.take();
    let sketches = |h: &Harness| {
        let ix = h.run.store.open().unwrap();
        super::live::stored_sketches(ix.index(), &h.run.live)
    };
    assert_eq!(sketches(&h), [0, 1, 2]);
    // c.txt (version 2) moves over b.txt (version 1), which leaves.
    std::fs::rename(h.root.join("c.txt"), h.root.join("b.txt")).unwrap();
    h.command(Command::Rescan, 2 * S);
    let (_, snap, _) = h.take();
    assert_eq!(paths(&snap.unwrap()), ["a.txt", "b.txt"]);
    assert_eq!(sketches(&h), [0, 2], "no sketch of the page replaced");
}

/// Which pages carry a page's text, whoever had it first: B and C each
/// took the same paragraph of A, so B's shared pages are A and C (with the
/// paragraph on both sides), where its copies are none.
#[test]
fn shared_lists_every_page_carrying_the_text_where_copies_credits_the_first() {
    let para = text(9, 60);
    let pages = vec![
        ("a.txt", format!("{} {para} {}", text(1, 80), text(2, 80))),
        ("b.txt", format!("{} {para}", text(3, 120))),
        ("c.txt", format!("{para} {}", text(4, 150))),
    ];
    let mut h = Harness::new("shared", &pages, 200);
    h.command(Command::Rescan, S);
    let (_, snap, _) = h.take();
    let snap = snap.unwrap();
    let id = |p: &str| snap.documents.iter().find(|d| &*d.path == p).unwrap().id;
    let (a, b, c) = (id("a.txt"), id("b.txt"), id("c.txt"));
    h.command(Command::Shared { id: b }, 2 * S);
    let (_, _, other) = h.take();
    let [Update::Shared(v)] = &other[..] else {
        panic!("{other:?}")
    };
    assert_eq!((v.id, v.path.as_str(), v.version), (b, "b.txt", 1));
    let ids: Vec<u32> = v.shares.iter().map(|s| s.id).collect();
    assert!(
        ids.contains(&a) && ids.contains(&c) && ids.len() == 2,
        "{v:?}"
    );
    for s in &v.shares {
        // The paragraph: 60 tokens, at B's end.
        assert!(s.page_tokens >= 60 - 1 && s.page_tokens <= 62, "{s:?}");
        assert!(s.passages.iter().all(|p| p.page.0 >= 119), "{s:?}");
    }
    h.command(Command::Copies { id: b }, 3 * S);
    let (_, _, other) = h.take();
    let [Update::Copies(v)] = &other[..] else {
        panic!("{other:?}")
    };
    assert!(v.copies.is_empty(), "{v:?}");
}

/// The stale copies: B took a paragraph of A, then A changed a word of it
/// (an hour later by its clock); over the folder and of B, the passage with
/// both sides' words; of A, none.
#[test]
fn stale_tells_a_copy_its_origin_changed_with_both_sides_words() {
    let para = text(9, 60);
    let pages = vec![
        ("a.txt", format!("{} {para}", text(1, 80))),
        ("b.txt", format!("{} {para}", text(3, 120))),
    ];
    let mut h = Harness::new("stale", &pages, 200);
    h.command(Command::Rescan, S);
    h.take();
    let fixed = para.replacen(' ', " fixedword ", 1);
    let a = h.root.join("a.txt");
    std::fs::write(&a, format!("{} {fixed}", text(1, 80))).unwrap();
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
    let f = std::fs::File::options().write(true).open(&a).unwrap();
    f.set_modified(later).unwrap();
    h.command(Command::Rescan, 2 * S);
    let (_, snap, _) = h.take();
    let snap = snap.unwrap();
    let id = |p: &str| snap.documents.iter().find(|d| &*d.path == p).unwrap().id;
    for ask in [None, Some(id("b.txt"))] {
        h.command(Command::Stale { id: ask }, 3 * S);
        let (_, _, other) = h.take();
        let [Update::Stale(v)] = &other[..] else {
            panic!("{other:?}")
        };
        assert_eq!(v.only, ask);
        let [p] = &v.passages[..] else {
            panic!("{v:?}")
        };
        assert_eq!(
            (p.path.as_str(), p.kind),
            ("b.txt", crate::StaleKind::Changed)
        );
        assert_eq!(p.origin, ("a.txt".to_string(), 1));
        assert_eq!(p.changed_in, Some(2));
        let [[here, there]] = &p.differences[..] else {
            panic!("{p:?}")
        };
        assert_eq!((here[1].as_str(), there[1].as_str()), ("", "fixedword"));
        assert!(
            para.contains(here[0].trim()) && para.contains(here[2].trim()),
            "{here:?}"
        );
    }
    h.command(
        Command::Stale {
            id: Some(id("a.txt")),
        },
        3 * S,
    );
    let (_, _, other) = h.take();
    let [Update::Stale(v)] = &other[..] else {
        panic!("{other:?}")
    };
    assert!(v.passages.is_empty(), "{v:?}");
}

/// The HTML report, written off the engine's thread from a connection of
/// its own: the file whole, its figures in the answer; a file that cannot
/// be written is an answer too, not a stop.
#[test]
fn the_report_is_written_off_the_engine_and_answered() {
    let para = text(2, 60);
    let pages = vec![
        ("a.txt", format!("{} {para}", text(1, 80))),
        ("b.txt", format!("{} {para}", text(3, 40))),
    ];
    let mut h = Harness::new("report", &pages, 200);
    h.command(Command::Rescan, S);
    h.take();
    let answer = |h: &mut Harness, path: &std::path::Path| {
        h.command(
            Command::Report {
                path: path.to_path_buf(),
            },
            S,
        );
        let until = Instant::now() + 20 * S;
        while Instant::now() < until {
            for u in std::mem::take(&mut *h.published.lock().unwrap()) {
                if let Update::Report { path: p, result } = u {
                    assert_eq!(p, path);
                    return result;
                }
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        panic!("no answer to the report");
    };
    let path = h.base.path().join("r.html");
    let figures = answer(&mut h, &path).unwrap();
    assert_eq!((figures.pages, figures.texts), (2, 2));
    let html = std::fs::read_to_string(&path).unwrap();
    assert_eq!(html.len() as u64, figures.bytes);
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
    assert!(html.contains("\"path\":\"b.txt\""), "{html}");
    // The table's regime, as scan says it (the harness's table holds both).
    assert!(html.contains("\"regime\":\"holds all "), "{html}");
    let nowhere = h.base.path().join("no-such-folder").join("r.html");
    let e = answer(&mut h, &nowhere).unwrap_err();
    assert!(e.contains("No such file"), "{e}");
    // The engine goes on: a new page arrives.
    std::fs::write(h.root.join("c.txt"), text(5, 50)).unwrap();
    h.command(Command::Rescan, 2 * S);
    let snap = h.take().1.expect("a snapshot");
    assert_eq!(snap.documents.len(), 3);
}

/// What a version changed since its predecessor: a.txt's second version
/// against its first, the paragraph replaced as removed and new, with
/// their words and the counts the LCS gives (the rest kept).
#[test]
fn diff_tells_what_a_version_changed_with_its_words() {
    let (x, y, z) = (text(1, 80), text(2, 30), text(3, 20));
    let pages = vec![("a.txt", format!("{x}\n\n{y}\n"))];
    let mut h = Harness::new("diff", &pages, 200);
    h.command(Command::Rescan, S);
    let (_, first, _) = h.take();
    let v1 = first.unwrap().documents.iter().next().unwrap().id;
    std::fs::write(h.root.join("a.txt"), format!("{x}\n\n{z}\n")).unwrap();
    h.command(Command::Rescan, 2 * S);
    let (_, snap, _) = h.take();
    let v2 = snap.unwrap().documents.iter().next().unwrap().id;
    h.command(
        Command::Diff {
            id: v2,
            basis: Default::default(),
        },
        3 * S,
    );
    let (_, _, other) = h.take();
    let [Update::Diff(v)] = &other[..] else {
        panic!("{other:?}")
    };
    assert_eq!((v.id, v.path.as_str(), v.version), (v2, "a.txt", 2));
    assert_eq!(v.predecessor.as_ref().map(|p| (p.0, p.2)), Some((v1, 1)));
    assert_eq!(v.counts, [80, 30, 20, 0], "{v:?}");
    let kinds: Vec<_> = v
        .passages
        .iter()
        .map(|p| (p.kind, p.words.as_str(), p.lines))
        .collect();
    assert_eq!(
        kinds,
        [
            (crate::DiffKind::Removed, y.as_str(), [3, 3]),
            (crate::DiffKind::New, z.as_str(), [3, 3])
        ]
    );
}

/// The pages' changes (predecessor basis) of the first finished run that
/// measured a version of `path` other than `old`, with that version's id.
fn shares_of_new(h: &Harness, path: &str, old: u32) -> (Shares, u32) {
    let (mut out, mut ids) = (HashMap::new(), HashMap::<String, u32>::new());
    let until = Instant::now() + 20 * S;
    while Instant::now() < until {
        for u in std::mem::take(&mut *h.published.lock().unwrap()) {
            match u {
                Update::Snapshot(s) => {
                    ids = (s.documents.iter())
                        .map(|d| (d.path.to_string(), d.id))
                        .collect();
                }
                Update::Shares(u) if u.basis == lineage_config::Basis::Predecessor => {
                    assert_eq!(u.error, None);
                    out.extend(u.changes.iter().copied());
                    if u.finished {
                        if let Some(&new) = ids.get(path).filter(|&&id| id != old)
                            && out.contains_key(&new)
                        {
                            return (out, new);
                        }
                        out.clear();
                    }
                }
                _ => {}
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("no finished run measured a new version of {path}");
}

/// The shares of `basis` the engine's run sends until it is finished
/// (each page's last change, by version id), each live page's id by path
/// in the last snapshot published meanwhile (empty if none was), and the
/// run's last update.
type Shares = HashMap<u32, crate::PageChange>;
fn shares_of(
    h: &Harness,
    basis: lineage_config::Basis,
) -> (Shares, HashMap<String, u32>, Arc<SharesUpdate>) {
    let (mut out, mut ids) = (HashMap::new(), HashMap::new());
    let until = Instant::now() + 20 * S;
    while Instant::now() < until {
        let all = std::mem::take(&mut *h.published.lock().unwrap());
        for u in all {
            match u {
                Update::Snapshot(s) => {
                    ids = (s.documents.iter())
                        .map(|d| (d.path.to_string(), d.id))
                        .collect();
                }
                Update::Shares(u) if u.basis == basis => {
                    assert_eq!(u.error, None);
                    // A run's pages come after the snapshot that shows them
                    // (when one came since the test took the last).
                    let shown: HashSet<u32> = ids.values().copied().collect();
                    assert!(
                        shown.is_empty() || u.changes.iter().all(|(id, _)| shown.contains(id)),
                        "shares of a page no snapshot showed yet: {ids:?}"
                    );
                    out.extend(u.changes.iter().copied());
                    if u.finished {
                        return (out, ids, u);
                    }
                }
                _ => {}
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("no finished shares of {basis:?}: {out:?}");
}

/// The Documents' shares: every live page's change against its base, the
/// counts `diff` gives (from the fingerprints, not the texts), again after
/// an edit for the pairs it made; against the previous folder, an edit to a
/// page of v2 keeps what v2 changed against v1.
#[test]
fn shares_count_what_diff_counts_and_follow_an_edit_and_the_basis() {
    use lineage_config::Basis;
    let (x, y, z, w) = (text(1, 80), text(2, 30), text(3, 20), text(4, 10));
    let mut h = Harness::configured("shares", &[], 200, |c| {
        c.order = lineage_source::Order::Version;
    });
    std::fs::create_dir_all(h.root.join("v1")).unwrap();
    std::fs::create_dir_all(h.root.join("v2")).unwrap();
    h.write("v1/a.txt", &format!("{x}\n\n{y}\n"));
    h.write("v2/a.txt", &format!("{x}\n\n{z}\n"));
    h.write("v1/b.txt", &text(5, 40));
    h.command(Command::Rescan, S);
    let (_, snap, _) = h.take();
    let id: HashMap<String, u32> = (snap.unwrap().documents.iter())
        .map(|d| (d.path.to_string(), d.id))
        .collect();
    h.command(
        Command::Shares {
            basis: Basis::Predecessor,
        },
        2 * S,
    );
    let (got, _, _) = shares_of(&h, Basis::Predecessor);
    assert_eq!(got.len(), 3, "{got:?}");
    let (a1, a2, b) = (id["v1/a.txt"], id["v2/a.txt"], id["v1/b.txt"]);
    assert_eq!(got[&a2].base, Some(a1));
    assert_eq!(got[&a2].counts, Some([80, 30, 20, 0]));
    assert_eq!(got[&b].base, None);
    assert_eq!(got[&b].counts, Some([0, 0, 40, 0]), "all new");
    // What diff counts, from the texts.
    for (&id, c) in &got {
        h.command(
            Command::Diff {
                id,
                basis: Basis::Predecessor,
            },
            2 * S,
        );
        let [Update::Diff(v)] = &h.take().2[..] else {
            panic!("no diff of {id}")
        };
        assert_eq!(Some(v.counts), c.counts, "{id}");
        assert_eq!(v.predecessor.as_ref().map(|p| p.0), c.base);
    }
    // An edit to v2/a.txt: against its predecessor, only what it added.
    // Stepped well after the write as the clock has it: a step before the
    // file's time (a loaded machine took seconds to get here) takes it for
    // one still being written.
    h.write("v2/a.txt", &format!("{x}\n\n{z}\n\n{w}\n"));
    let later = h.t0.elapsed() + 2 * S;
    h.command(Command::Rescan, later);
    // A run under way when the edit came may still finish first: the
    // answer is the finished run that measured the new version.
    let (got, a2_2) = shares_of_new(&h, "v2/a.txt", a2);
    assert_eq!(
        got.keys().copied().collect::<Vec<_>>(),
        [a2_2],
        "the new pair alone"
    );
    assert_eq!(got[&a2_2].base, Some(a2));
    assert_eq!(got[&a2_2].counts, Some([100, 0, 10, 0]));
    // Against the previous folder: what v2 changed against v1, the edit too.
    h.command(
        Command::Shares {
            basis: Basis::Folder,
        },
        later + S,
    );
    let (got, _, _) = shares_of(&h, Basis::Folder);
    assert_eq!(got.len(), 3, "a new basis sends every page: {got:?}");
    assert_eq!(got[&a2_2].base, Some(a1));
    assert_eq!(got[&a2_2].counts, Some([80, 30, 30, 0]));
    assert_eq!(got[&a2_2].changed_percent().map(|p| p.round()), Some(27.0));
    assert_eq!(got[&a2_2].removed_percent().map(|p| p.round()), Some(27.0));
}

/// The shares asked while the index is closed are not refused: the run
/// starts once the tick opens it again, with the page the catch-up found.
#[test]
fn shares_asked_while_the_index_is_closed_run_when_it_opens() {
    use lineage_config::Basis;
    let mut h = Harness::new("shares-closed", &two_pages(), 200);
    h.command(Command::Rescan, S);
    h.take();
    h.run.failed(IndexError::Poisoned);
    h.write("c.txt", &text(3, 200));
    h.command(
        Command::Shares {
            basis: Basis::Folder,
        },
        2 * S,
    );
    let (events, _, other) = h.take();
    assert!(
        errors(&events)
            .iter()
            .all(|e| !e.starts_with("the index is closed")),
        "{events:?}"
    );
    assert!(other.is_empty(), "{other:?}");
    assert_eq!(h.run.step(Step::Due(Due::Tick), h.t0 + 60 * S), Flow::Go);
    let (got, ids, _) = shares_of(&h, Basis::Folder);
    assert_eq!(ids.len(), 3, "{ids:?}");
    let mut measured: Vec<u32> = got.keys().copied().collect();
    measured.sort_unstable();
    let mut live: Vec<u32> = ids.values().copied().collect();
    live.sort_unstable();
    assert_eq!(measured, live, "every live page, the new one too");
}

/// The pairs a run diffed are kept in the index (the engine writes what
/// the run sends it): after a restart the run diffs none again, and says
/// every page's change from what was kept.
#[test]
fn shares_measured_are_kept_in_the_index_across_a_restart() {
    use lineage_config::Basis;
    let mut h = Harness::new("shares-kept", &two_pages(), 200);
    h.command(Command::Rescan, S);
    h.take();
    h.command(
        Command::Shares {
            basis: Basis::Predecessor,
        },
        2 * S,
    );
    let (first, _, _) = shares_of(&h, Basis::Predecessor);
    assert_eq!(first.len(), 2);
    // What the run sent the engine, as its loop would take it.
    let sent: Vec<Input> = h._events.try_iter().collect();
    assert!(
        sent.iter()
            .any(|i| matches!(i, Input::Measured(p) if p.len() == 2))
    );
    h.run.step(Step::Inputs(sent), h.t0 + 3 * S);
    h.restart();
    h.command(
        Command::Shares {
            basis: Basis::Predecessor,
        },
        4 * S,
    );
    let (_, _, last) = shares_of(&h, Basis::Predecessor);
    assert_eq!((last.done, last.total), (0, 0), "nothing diffed again");
    let again: HashMap<u32, crate::PageChange> = last.changes.iter().copied().collect();
    assert_eq!(again, first);
}

/// A snapshot with no new event shares the events of the one before
/// instead of copying them (progress ticks publish many); one after a new
/// event has it first.
#[test]
fn snapshots_share_their_events_until_one_comes() {
    let mut h = Harness::new("shared-events", &two_pages(), 200);
    h.command(Command::Rescan, S);
    let (_, first, _) = h.take();
    let first = first.unwrap();
    assert!(first.events.len() >= 2, "{:?}", first.events);
    h.command(Command::Rescan, 2 * S);
    let (_, again, _) = h.take();
    let again = again.unwrap();
    assert!(Arc::ptr_eq(&first.events, &again.events), "shared");
    h.write("c.txt", &format!("{} and more", two_pages()[0].1));
    h.command(Command::Rescan, 3 * S);
    let (_, after, _) = h.take();
    let after = after.unwrap();
    assert!(!Arc::ptr_eq(&again.events, &after.events));
    assert!(matches!(&after.events[0].kind, EventKind::Version { path, .. } if path == "c.txt"));
    assert_eq!(after.events.len(), again.events.len() + 1);
}
