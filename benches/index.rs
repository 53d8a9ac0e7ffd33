//! `cargo bench --bench index`: re-opening an unchanged index of 10,000
//! generated documents (~10 KB each) — the time from starting `lineage index`
//! to its exit, with no file content read (files_read == 0 is asserted) —
//! median over runs; then the same steps in-process, split into open, walk
//! and reconcile. Prints Markdown for docs/index-benchmarks.md.
//!
//! `LINEAGE_BENCH_DOCS=N` changes the number of documents.
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use std::sync::mpsc;

use lineage_config::Config;
use lineage_engine::{self as engine, Engine, Indexer, Options, Snapshot, Update};
use lineage_source::{self as source, Filter};
use lineage_store::index::Quiet;

#[path = "common/pages.rs"]
mod pages;

const RUNS: usize = 11;

fn main() {
    let docs: usize = std::env::var("LINEAGE_BENCH_DOCS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let base = std::env::temp_dir().join(format!("lineage-bench-index-{}", std::process::id()));
    let _ = fs::remove_dir_all(&base);
    let root = base.join("root");
    let dir = base.join("index");
    let bytes = pages::generate(&root, docs);
    println!(
        "machine: {} cores; {docs} documents, {:.1} MB of text\n",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        bytes as f64 / 1e6
    );

    let started = Instant::now();
    let first = index(&root, &dir);
    let first_time = started.elapsed();
    assert_eq!(first["files_read"], docs as u64);
    let size = |name: &str| fs::metadata(dir.join(name)).map_or(0, |m| m.len());
    println!(
        "first indexing: {:.2} s; index.db {:.1} MB, table.snapshot {:.1} MB\n",
        first_time.as_secs_f64(),
        size("index.db") as f64 / 1e6,
        size("table.snapshot") as f64 / 1e6
    );

    let times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            let v = index(&root, &dir);
            let took = t.elapsed();
            assert_eq!(v["files_read"], 0, "an unchanged folder must not be read");
            assert_eq!(v["documents"], docs as u64);
            took
        })
        .collect();
    spread(
        "re-open of an unchanged index (`lineage index ROOT --json`)",
        &format!("{docs} documents, {RUNS} runs"),
        times,
    );

    // The same in-process, step by step.
    let config = Config::default();
    let filter = Filter::new(&config.include, &config.exclude).unwrap();
    let poly = config.polynomial();
    let open = || Indexer::open(&root, &dir, config.params(), &poly, &mut Quiet).unwrap();
    let mut steps = [Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..RUNS {
        let t = Instant::now();
        let mut ix = open();
        steps[0].push(t.elapsed());
        let t = Instant::now();
        let walk = source::walk_with(&root, &filter, config.walk_options()).unwrap();
        steps[1].push(t.elapsed());
        let t = Instant::now();
        let r = ix
            .reconcile(walk, config.max_file_size.0, config.order, &mut Quiet)
            .unwrap();
        steps[2].push(t.elapsed());
        assert_eq!(r.files_read, 0);
    }
    println!("| step (in-process) | median |");
    println!("| --- | --- |");
    for (name, t) in [
        "open: lock, SQLite open + quick_check, load state, read + verify + restore the 64 MiB table snapshot",
        "walk: stat every file",
        "reconcile: compare with the log (nothing to read)",
    ]
    .iter()
    .zip(&mut steps)
    {
        t.sort();
        println!("| {name} | {} |", ms(t[RUNS / 2]));
    }

    // What `lineage watch` does after a debounced event: walk the root and
    // sync the index, here for one modified 100 KB file.
    let mut ix = open();
    let big = root.join("big.md");
    let paragraph = "A hundred kilobytes of prose, edited again and again; ";
    let mut times = Vec::new();
    for run in 0..=RUNS {
        let text: String = (0..1900)
            .map(|i| format!("{paragraph}{} {run}. ", i * 7 + run))
            .collect();
        fs::write(&big, &text).unwrap();
        let t = Instant::now();
        let walk = source::walk_with(&root, &filter, config.walk_options()).unwrap();
        let (r, changes) = ix
            .sync(
                walk,
                &Default::default(),
                config.max_file_size.0,
                config.order,
                &mut Quiet,
            )
            .unwrap();
        let took = t.elapsed();
        assert_eq!(
            (r.files_read, changes.len()),
            (1, 1),
            "one file read, one version"
        );
        if run > 0 {
            times.push(took);
        }
    }
    spread(
        &format!(
            "one modified 100 KB file among {docs} documents: walk + read + process + record \
             (a full rescan's work)"
        ),
        &format!("{RUNS} edits"),
        times,
    );
    drop(ix);
    engine_edits(&root, &dir, &big, paragraph, docs);
    let _ = fs::remove_dir_all(&base);
}

/// The engine as `watch` runs it: from the debounced event (here sent as
/// `Command::Changed`, so the OS's own latency is not timed) to the new
/// snapshot naming the new version, for one modified 100 KB file.
fn engine_edits(root: &Path, dir: &Path, big: &Path, paragraph: &str, docs: usize) {
    let version_of_big = |s: &Snapshot| {
        s.documents
            .iter()
            .find(|d| &*d.path == "big.md")
            .map(|d| d.version)
    };
    let start = || {
        let mut config = Config::default();
        // No events of its own during the runs: a poller that never ticks.
        config.watch.poll = true;
        config.watch.rescan_secs = 3600;
        let (tx, rx) = mpsc::channel();
        let t = Instant::now();
        // What the binary sets first thing (watch asks leases).
        lineage_source::watch::ignore_lease_signal();
        let engine = Engine::start(
            Options {
                root: root.to_path_buf(),
                index_dir: dir.to_path_buf(),
                config,
                memory: Default::default(),
            },
            move |u| {
                let _ = tx.send(u);
            },
        );
        let version = loop {
            match rx.recv().expect("engine") {
                Update::Snapshot(s) if s.progress.is_none() && !s.documents.is_empty() => {
                    break version_of_big(&s).expect("big.md indexed");
                }
                Update::Fatal(m) => panic!("{m}"),
                _ => {}
            }
        };
        (engine, rx, version, t.elapsed())
    };
    let (engine, _, _, first) = start();
    drop(engine);
    let (engine, rx, mut version, again) = start();
    println!(
        "engine start on the index, first time (open, {docs} documents' rows, simhash and \
         verified pairs computed and stored, first walk): {:.2} s; again (restored): {:.2} s\n",
        first.as_secs_f64(),
        again.as_secs_f64()
    );
    let big = fs::canonicalize(big).unwrap();
    let mut times = Vec::new();
    for run in 0..=RUNS {
        let text: String = (0..1900)
            .map(|i| format!("{paragraph}{} {run} engine. ", i * 11 + run))
            .collect();
        fs::write(&big, &text).unwrap();
        let t = Instant::now();
        engine.send(engine::Command::Changed(vec![big.clone()]));
        loop {
            match rx.recv().expect("engine") {
                Update::Snapshot(s) if version_of_big(&s) > Some(version) => {
                    version += 1;
                    break;
                }
                Update::Fatal(m) => panic!("{m}"),
                _ => {}
            }
        }
        if run > 0 {
            times.push(t.elapsed());
        }
    }
    spread(
        &format!(
            "one modified 100 KB file among {docs} documents: debounced event to published \
             snapshot (engine: stat the path, read, process, record, clusters, snapshot)"
        ),
        &format!("{RUNS} edits"),
        times,
    );
}

/// A Markdown table of one row: median, min and max of `times`.
fn spread(what: &str, row: &str, mut times: Vec<Duration>) {
    times.sort();
    println!("| {what} | median | min | max |");
    println!("| --- | --- | --- | --- |");
    println!(
        "| {row} | {} | {} | {} |\n",
        ms(times[times.len() / 2]),
        ms(times[0]),
        ms(times[times.len() - 1])
    );
}

fn ms(d: Duration) -> String {
    format!("{:.0} ms", d.as_secs_f64() * 1e3)
}

fn index(root: &Path, dir: &Path) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_lineage"))
        .args(["index", root.to_str().unwrap(), "--json", "--index"])
        .arg(dir)
        .arg("--config")
        .arg(empty_config())
        .output()
        .expect("run lineage");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// An empty config file, so a developer's own settings do not count.
fn empty_config() -> PathBuf {
    let p = std::env::temp_dir().join("lineage-bench-empty-config.toml");
    fs::write(&p, "").unwrap();
    p
}
