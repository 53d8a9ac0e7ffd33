//! `cargo bench --bench tui`: the TUI's frame time with 100,000 documents
//! (the whole screen, Documents pane, 120×40, into a test backend), and the
//! cost of the Documents pane's filter as a pattern is typed and of taking a
//! new snapshot. Medians (and 90th percentiles) over repeated runs; prints
//! Markdown for BENCHMARKS.md.
//!
//! `LINEAGE_BENCH_DOCS=N` changes the number of documents.
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use lineage_config::Basis;
use lineage_config::ThemeName;
use lineage_engine::{
    DocRow, Documents, PageChange, SharesUpdate, Snapshot, TableStats, Update, Watching,
};
use lineage_origin::Params;
use lineage_tui::filter::Fuzzy;
use lineage_tui::keymap::Keymap;
use lineage_tui::panes::draw;
use lineage_tui::theme::Theme;
use lineage_tui::{App, Msg, update, update_all};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};

const W: u16 = 120;
const H: u16 = 40;

/// Median and 90th percentile of `samples`.
fn spread(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    let n = samples.len();
    (samples[n / 2], samples[(n * 9 / 10).min(n - 1)])
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

fn documents(n: usize, salt: usize) -> Documents {
    let rows = (0..n)
        .map(|i| DocRow {
            id: i as u32,
            path: format!(
                "site/section-{:03}/topic-{:02}/page-{i:06}.md",
                i % 997,
                i % 61
            )
            .into(),
            version: 1 + (i % 5 == 0) as u32,
            tokens: ((i * 37 + salt) % 5000) as u32,
            fresh_percent: ((i * 7919 + salt) % 1000) as f64 / 10.0,
            dominant_origin: Some((i / 2) as u32),
            dominant_path: Some(
                format!("site/section-{:03}/page-{:06}.md", i / 2 % 997, i / 2).into(),
            ),
            mtime_ns: ((i * 104_729) % 1_000_003) as i64,
        })
        .collect();
    let clusters = (0..n as u32).step_by(11).map(|i| (i, i / 11)).collect();
    Documents::new(rows, clusters)
}

fn snapshot(docs: Documents, seq: u64) -> Snapshot {
    Snapshot {
        seq,
        root: PathBuf::from("/srv/docs"),
        params: Params::default(),
        documents: docs,
        clusters: Arc::from(Vec::new()),
        table: TableStats::default(),
        table_history: Arc::from(Vec::new()),
        bucket_fill: Arc::from(Vec::new()),
        events: Arc::from(Vec::new()),
        before_start: 0,
        versions: seq,
        skipped: 0,
        shingles: 0,
        progress: None,
        watching: Watching::Events,
    }
}

/// The median time `app` takes 9 new snapshots (documents salted from
/// `salt` on, each a new sequence number).
fn snapshots(app: &mut App, n: usize, salt: usize) -> Duration {
    let mut snaps = Vec::new();
    for s in salt..salt + 9 {
        let docs = documents(n, s);
        let t = Instant::now();
        update(
            app,
            Msg::Engine(Update::Snapshot(Arc::new(snapshot(docs, s as u64 + 1)))),
        );
        snaps.push(t.elapsed());
    }
    spread(snaps).0
}

fn key(app: &mut App, code: KeyCode) {
    update(
        app,
        Msg::Input(Event::Key(KeyEvent::new(code, KeyModifiers::NONE))),
    );
}

fn main() {
    let n: usize = std::env::var("LINEAGE_BENCH_DOCS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    println!(
        "machine: {} cores; {n} documents, {W}×{H} test backend\n",
        std::thread::available_parallelism().map_or(0, |c| c.get())
    );
    let theme = Theme::new(ThemeName::Dark, false);
    let mut app = App::new(Keymap::default(), Box::new(Fuzzy::default()), W, H);
    let docs = documents(n, 0);
    let first = Instant::now();
    update(
        &mut app,
        Msg::Engine(Update::Snapshot(Arc::new(snapshot(docs, 1)))),
    );
    let first = first.elapsed();
    let mut term = Terminal::new(TestBackend::new(W, H)).unwrap();

    // A frame after each move of the selection: the list scrolls, so every
    // frame draws changed rows.
    let mut frames = Vec::new();
    for i in 0..400 {
        key(
            &mut app,
            if i % 100 < 50 {
                KeyCode::PageDown
            } else {
                KeyCode::Down
            },
        );
        let t = Instant::now();
        term.draw(|f| draw(&app, &theme, f)).unwrap();
        frames.push(t.elapsed());
    }
    let (frame, frame90) = spread(frames);

    // Typing a filter: each key narrows the rows before it.
    let pattern = "sec42pg7";
    let mut typed = Vec::new();
    let mut keys = Vec::new();
    for _ in 0..7 {
        key(&mut app, KeyCode::Char('/'));
        for c in pattern.chars() {
            let t = Instant::now();
            key(&mut app, KeyCode::Char(c));
            keys.push(t.elapsed());
        }
        let t = Instant::now();
        term.draw(|f| draw(&app, &theme, f)).unwrap();
        typed.push(t.elapsed());
        key(&mut app, KeyCode::Esc);
    }
    let matches = {
        key(&mut app, KeyCode::Char('/'));
        for c in pattern.chars() {
            key(&mut app, KeyCode::Char(c));
        }
        app.docs.len()
    };
    // The same keys arriving in one batch (a fast typist, a paste): one filter.
    let mut batches = Vec::new();
    for _ in 0..7 {
        let msgs: Vec<Msg> = std::iter::once('/')
            .chain(pattern.chars())
            .map(|c| {
                Msg::Input(Event::Key(KeyEvent::new(
                    KeyCode::Char(c),
                    KeyModifiers::NONE,
                )))
            })
            .collect();
        let t = Instant::now();
        update_all(&mut app, msgs);
        batches.push(t.elapsed());
        key(&mut app, KeyCode::Esc);
    }
    let (batch, _) = spread(batches);
    let (per_key, per_key90) = spread(keys);
    let (filtered_frame, _) = spread(typed);

    // A new snapshot (new documents) under the filter: filter from scratch + sort.
    let filtered_snap = snapshots(&mut app, n, 1);
    key(&mut app, KeyCode::Esc);
    // … and without a filter, sorted by fresh %.
    key(&mut app, KeyCode::Char('s'));
    let sorted_snap = snapshots(&mut app, n, 20);
    // The shares of every page arriving (the engine's background run, in
    // updates of 5,000), sorted by changed %; then a snapshot so sorted.
    key(&mut app, KeyCode::Char('s'));
    key(&mut app, KeyCode::Char('s'));
    let mut arrivals = Vec::new();
    for round in 0..3 {
        let t = Instant::now();
        for chunk in (0..n as u32).collect::<Vec<_>>().chunks(5_000) {
            let changes = (chunk.iter())
                .map(|&id| {
                    let new = (id * 31 + round) % 1000;
                    let change = PageChange {
                        base: Some(id / 2),
                        counts: Some([1000 - new, id % 300, new, 0]),
                    };
                    (id, change)
                })
                .collect();
            let u = SharesUpdate {
                basis: Basis::Predecessor,
                changes,
                done: 0,
                total: 0,
                finished: false,
                error: None,
            };
            update(&mut app, Msg::Engine(Update::Shares(Arc::new(u))));
        }
        arrivals.push(t.elapsed());
    }
    let (arrived, _) = spread(arrivals);
    let changed_snap = snapshots(&mut app, n, 40);
    let mut frames = Vec::new();
    for _ in 0..100 {
        key(&mut app, KeyCode::PageDown);
        let t = Instant::now();
        term.draw(|f| draw(&app, &theme, f)).unwrap();
        frames.push(t.elapsed());
    }
    let (changed_frame, _) = spread(frames);

    println!("## TUI ({n} documents)\n");
    println!("| measure | median | p90 |\n| --- | --- | --- |");
    println!(
        "| frame: whole screen, Documents pane, {W}×{H}, selection moving | **{}** | {} |",
        ms(frame),
        ms(frame90)
    );
    println!("| frame with a filter shown | {} | |", ms(filtered_frame));
    println!(
        "| filter: one typed key of `{pattern}` (narrows the rows before it; {matches} match) | {} | {} |",
        ms(per_key),
        ms(per_key90)
    );
    println!(
        "| filter: the {} keys `/{pattern}` in one batch (filtered once) | {} | |",
        pattern.len() + 1,
        ms(batch)
    );
    println!(
        "| new snapshot under the filter (filter all + sort by path) | {} | |",
        ms(filtered_snap)
    );
    println!(
        "| new snapshot, no filter, sorted by fresh % | {} | |",
        ms(sorted_snap)
    );
    println!(
        "| every page's shares arriving in {} updates, sorted by changed % | {} | |",
        n.div_ceil(5_000),
        ms(arrived)
    );
    println!(
        "| new snapshot, no filter, sorted by changed % | {} | |",
        ms(changed_snap)
    );
    println!(
        "| frame sorted by changed %, paging | {} | |",
        ms(changed_frame)
    );
    println!("| first snapshot (sort by path) | {} | |", ms(first));
}
