//! `cargo bench`: the engine's speed targets, each beside a baseline measured in
//! the same run. Medians over repeated runs; prints Markdown for BENCHMARKS.md.
//!
//! `cargo bench -- NAME` runs only the benchmarks whose name contains NAME.
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use lineage_core::fingerprint::polynomial::standard;
use lineage_core::fingerprint::{ShingleRoller, token_fps};
use lineage_origin::align::UnitKeys;
use lineage_origin::history::Keyed;
use lineage_origin::table::paper_sizes;
use lineage_origin::{Estimation, Eviction, OriginPass, Params, Selector, TableSize};
use lineage_source::Order;
use lineage_source::corpus;
use lineage_source::{Filter, WalkOptions};

/// The corpus the targets name: `$LINEAGE_CORPORA/rust-book-editions` (the
/// whole book, five editions, 395 pages; CONTRIBUTING.md says how to get it),
/// else the repository's 74-page extract of it.
const CORPUS: &str = "rust-book-editions";

fn corpus_dir(name: &str) -> Option<PathBuf> {
    let p = PathBuf::from(std::env::var_os("LINEAGE_CORPORA")?).join(name);
    p.is_dir().then_some(p)
}

fn main_corpus() -> (String, PathBuf) {
    corpus_dir(CORPUS).map_or_else(
        || {
            let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rust-book");
            ("tests/fixtures/rust-book".into(), p)
        },
        |p| (CORPUS.into(), p),
    )
}

/// Median wall time of `reps` runs of `f` (after one warm-up run).
fn median(reps: usize, mut f: impl FnMut()) -> Duration {
    f();
    let mut t: Vec<Duration> = (0..reps)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed()
        })
        .collect();
    t.sort();
    t[reps / 2]
}

/// Median wall times of `a` and of `b` over `reps` rounds that run one, then
/// the other (after one warm-up round): on a shared machine whose speed
/// drifts, a target and its baseline see the same conditions.
fn medians_side_by_side(
    reps: usize,
    mut a: impl FnMut(),
    mut b: impl FnMut(),
) -> (Duration, Duration) {
    a();
    b();
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    for _ in 0..reps {
        let s = Instant::now();
        a();
        ta.push(s.elapsed());
        let s = Instant::now();
        b();
        tb.push(s.elapsed());
    }
    ta.sort();
    tb.sort();
    (ta[reps / 2], tb[reps / 2])
}

fn main() {
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let wanted = |name: &str| filter.is_empty() || filter.iter().any(|f| name.contains(f.as_str()));
    println!(
        "machine: {} cores; corpus: {}\n",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        main_corpus().0
    );
    if wanted("tokenize") {
        tokenize();
    }
    if wanted("origin") {
        origin_pass();
    }
    if wanted("scan") {
        scan_vs_wc();
    }
    if wanted("tune") {
        tune_vs_sweep();
    }
    if wanted("shares") {
        shares();
    }
    if wanted("sweep") {
        // The ratio depends on the corpus: a scan's fixed costs (process
        // start, the walk) weigh more against a small corpus's replays.
        let (name, root) = main_corpus();
        sweep_vs_scans(&name, &root);
        match corpus_dir("short-answers") {
            Some(root) => sweep_vs_scans("short-answers", &root),
            None => println!("short-answers: skipped (not under $LINEAGE_CORPORA)\n"),
        }
    }
}

/// Tokenize + fingerprint (token fps and k = 8 shingle keys) on one core,
/// document by document as the pipeline does.
fn tokenize() {
    let texts: Vec<String> = md_files()
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    let mb = texts.iter().map(String::len).sum::<usize>() as f64 / 1e6;
    let poly = standard();
    let roller = ShingleRoller::new(poly, 8);
    let mut keys = Vec::new();
    let ours = median(15, || {
        for text in &texts {
            let t = token_fps(poly, text);
            roller.keys(&t.fps, &mut keys);
            std::hint::black_box(&keys);
        }
    });
    let words = median(15, || {
        for text in &texts {
            std::hint::black_box(text.split_whitespace().count());
        }
    });
    println!(
        "## tokenize + fingerprint (one core, {mb:.1} MB of English Markdown, {} documents)\n",
        texts.len()
    );
    println!("| what | median | MB/s |\n| --- | --- | --- |");
    println!(
        "| tokens + Rabin token fps + k=8 shingle keys | {:.2} ms | {:.0} |",
        ours.as_secs_f64() * 1e3,
        mb / ours.as_secs_f64()
    );
    println!(
        "| baseline: `split_whitespace().count()` | {:.2} ms | {:.0} |\n",
        words.as_secs_f64() * 1e3,
        mb / words.as_secs_f64()
    );
}

fn keyed(root: &Path) -> Keyed {
    let poly = standard();
    let c = corpus::load(
        root,
        &Filter::default_patterns(),
        WalkOptions::default(),
        32 << 20,
        Order::Path,
        poly,
    )
    .unwrap();
    Keyed::new(poly, c.docs.into_iter().map(|d| d.fps).collect(), 8)
}

/// The origin pass over pre-selected units: table + estimation + lucky scores.
fn origin_pass() {
    let keyed = keyed(&main_corpus().1);
    let shingles = keyed.total_shingles();
    println!("## origin pass (one core; {shingles} shingles)\n");
    println!(
        "| selector | eviction | estimation | table | fraction | median | selected shingles/s |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for (selector, eviction, estimation) in [
        (Selector::NHs, Eviction::Lucky, Estimation::Be),
        (Selector::NHs, Eviction::Cc, Estimation::Nb),
        (Selector::All, Eviction::Lucky, Estimation::Be),
        (Selector::All, Eviction::BottomK, Estimation::Nb),
    ] {
        let units = keyed.select(selector);
        let selected: usize = units.iter().map(Vec::len).sum();
        for size in [
            TableSize::Bytes(shingles * 14 / 1000),
            TableSize::Bytes(shingles * 14 * 7 / 1000),
            TableSize::Bytes(64 << 20),
        ] {
            let params = Params {
                selector,
                eviction,
                estimation,
                table_size: size,
                ..Params::default()
            };
            let t = median(9, || {
                let mut pass = OriginPass::new(params).unwrap();
                let mut origins = UnitKeys::new(&units);
                for (d, u) in units.iter().enumerate() {
                    std::hint::black_box(pass.process(d as u32, u, &mut origins));
                }
            });
            let cap = params.table_params().capacity().unwrap();
            println!(
                "| {selector} | {eviction} | {estimation} | {size} | {:.1}% | {:.2} ms | {:.1} M |",
                100.0 * cap as f64 / shingles as f64,
                t.as_secs_f64() * 1e3,
                selected as f64 / t.as_secs_f64() / 1e6
            );
        }
    }
    let sel = median(9, || {
        std::hint::black_box(keyed.select(Selector::NHs));
    });
    println!(
        "\nNHs selection alone (2 threads): {:.2} ms, {:.0} M shingles/s\n",
        sel.as_secs_f64() * 1e3,
        shingles as f64 / sel.as_secs_f64() / 1e6
    );
}

fn md_files() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(main_corpus().1)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    v.sort();
    v
}

fn run_quiet(cmd: &mut Command) {
    let st = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(st.success(), "{cmd:?}");
}

fn lineage() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lineage"));
    c.env("XDG_CONFIG_HOME", "/nonexistent");
    c
}

/// The whole `lineage scan` (process start to JSON written) against `wc -w`
/// over the same files.
fn scan_vs_wc() {
    let (name, root) = main_corpus();
    let files = md_files();
    let (scan, wc) = medians_side_by_side(
        21,
        || run_quiet(lineage().args(["scan", root.to_str().unwrap(), "--json", "--order", "path"])),
        || run_quiet(Command::new("wc").arg("-w").args(&files)),
    );
    println!(
        "## `lineage scan` against `wc -w` (whole process, {} files)\n",
        files.len()
    );
    println!("| command | median |\n| --- | --- |");
    println!(
        "| `lineage scan {name} --json --order path` (NHs, 64MiB, Lucky, BE) | {:.1} ms |",
        scan.as_secs_f64() * 1e3
    );
    println!(
        "| `wc -w` over the same files | {:.1} ms |",
        wc.as_secs_f64() * 1e3
    );
    println!(
        "\nratio scan / wc -w: {:.2} (target ≤ 2)\n",
        scan.as_secs_f64() / wc.as_secs_f64()
    );
}

/// One sweep of 8 sizes × 3 selectors × 2 evictions against the same 48 scans.
fn sweep_vs_scans(corpus: &str, root: &Path) {
    let keyed = keyed(root);
    let root = root.to_str().unwrap();
    let sizes: Vec<String> = paper_sizes(keyed.total_shingles())
        .iter()
        .map(|s| s.to_string())
        .collect();
    let selectors = ["nhs", "nwin-8", "every-4"];
    let evictions = ["lucky", "cc"];
    let sweep = || {
        run_quiet(lineage().args([
            "sweep",
            root,
            "--json",
            "--order",
            "path",
            "--sizes",
            &sizes.join(","),
            "--selectors",
            &selectors.join(","),
            "--evictions",
            &evictions.join(","),
            "--estimations",
            "be",
        ]))
    };
    let scans = || {
        for s in &selectors {
            for e in &evictions {
                for size in &sizes {
                    run_quiet(lineage().args([
                        "scan",
                        root,
                        "--json",
                        "--order",
                        "path",
                        "--selector",
                        s,
                        "--eviction",
                        e,
                        "--table-size",
                        size,
                        "--estimation",
                        "be",
                    ]));
                }
            }
        }
    };
    let (sweep, scans) = medians_side_by_side(5, sweep, scans);
    println!(
        "## sweep against the same 48 scans ({corpus}, {} documents)\n",
        keyed.len()
    );
    println!("| command | median |\n| --- | --- |");
    println!(
        "| `lineage sweep` 8 sizes × 3 selectors × 2 evictions | {:.1} ms |",
        sweep.as_secs_f64() * 1e3
    );
    println!(
        "| 48 × `lineage scan`, same settings | {:.1} ms |",
        scans.as_secs_f64() * 1e3
    );
    println!(
        "\nratio: the sweep is {:.1}× faster (target ≥ 10×)\n",
        scans.as_secs_f64() / sweep.as_secs_f64()
    );
}

/// Tune's sweep (a shadow run of the engine over its index, from the command
/// to the last result) against `lineage sweep` of the same runs over the same
/// files (the whole process), alternated.
fn tune_vs_sweep() {
    use lineage_config::Config;
    use lineage_engine::{Command as Ask, Engine, Options, Update};
    use lineage_origin::sweep::combinations;
    use std::sync::mpsc::channel;

    let (name, root) = main_corpus();
    let home = std::env::temp_dir().join(format!("lineage-bench-tune-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    let config = Config {
        order: Order::Path,
        ..Config::default()
    };
    let (tx, rx) = channel();
    // What the binary sets first thing (watch asks leases).
    lineage_source::watch::ignore_lease_signal();
    let engine = Engine::start(
        Options {
            root: root.clone(),
            index_dir: home.join("index"),
            config: config.clone(),
            memory: Default::default(),
        },
        move |u| {
            let _ = tx.send(u);
        },
    );
    let files = md_files().len();
    let shingles = loop {
        match rx.recv().expect("engine running") {
            Update::Snapshot(s) if s.progress.is_none() && s.documents.len() == files => {
                break s.shingles;
            }
            Update::Fatal(e) => panic!("{e}"),
            _ => {}
        }
    };
    let s = &config.sweep;
    let sizes = paper_sizes(shingles);
    let runs = combinations(
        config.params(),
        &s.selectors,
        &s.evictions,
        &s.estimations,
        &sizes,
    );
    let mut generation = 0;
    let (tune, sweep) = medians_side_by_side(
        9,
        || {
            generation += 1;
            engine.send(Ask::Shadow {
                generation,
                runs: runs.clone(),
            });
            loop {
                match rx.recv().expect("engine running") {
                    Update::Shadow(u) if u.generation == generation && u.finished => {
                        assert!(u.error.is_none(), "{:?}", u.error);
                        assert_eq!(u.results.len(), runs.len());
                        break;
                    }
                    _ => {}
                }
            }
        },
        || {
            run_quiet(lineage().args([
                "sweep",
                root.to_str().unwrap(),
                "--json",
                "--order",
                "path",
            ]))
        },
    );
    drop(engine);
    let _ = std::fs::remove_dir_all(&home);
    println!(
        "## Tune's sweep against `lineage sweep` ({name}, {} runs)\n",
        runs.len()
    );
    println!("| what | median |\n| --- | --- |");
    println!(
        "| Tune: shadow run of the engine over its index | {:.1} ms |",
        tune.as_secs_f64() * 1e3
    );
    println!(
        "| `lineage sweep {name} --json --order path` (whole process) | {:.1} ms |",
        sweep.as_secs_f64() * 1e3
    );
    println!(
        "\nratio Tune / lineage sweep: {:.2} (target ≤ 1.10)\n",
        tune.as_secs_f64() / sweep.as_secs_f64()
    );
}

/// The Documents pane's shares: every live page diffed against its basis
/// from the index's fingerprints, as the TUI's background run does it, and
/// one page's (what an edit costs), beside the catch-up of `lineage index`
/// with no change (the baseline of `stale`). `$LINEAGE_SHARES_ROOT` names a
/// folder of version folders (read in version order), else the fixture.
fn shares() {
    use lineage_config::{Basis, Config};
    use lineage_engine::{Lineage, query, shares_change};
    use lineage_store::index::{Read, ReadOnly, Status};

    let (name, root, order) = match std::env::var_os("LINEAGE_SHARES_ROOT") {
        Some(r) => (
            r.to_string_lossy().into_owned(),
            PathBuf::from(r),
            "version",
        ),
        None => {
            let (name, root) = main_corpus();
            (name, root, "path")
        }
    };
    let home = std::env::temp_dir().join(format!("lineage-bench-shares-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    let ix_dir = home.join("ix");
    let index = || {
        let (r, i) = (root.to_str().unwrap(), ix_dir.to_str().unwrap());
        run_quiet(lineage().args([
            "index",
            r,
            "--index",
            i,
            "--order",
            order,
            "--history",
            "folder",
        ]));
    };
    index();
    let poly = Config::default().polynomial();
    let measure = |basis: Basis, only: Option<usize>| -> (usize, usize) {
        let ix = ReadOnly::open(&ix_dir, &poly).unwrap();
        let rows = query::rows(&ix).unwrap();
        let lineage = Lineage::new(&ix, &rows, &[]).unwrap();
        let live: Vec<u32> = (0..rows.len() as u32)
            .filter(|&id| {
                (ix.current(&rows[id as usize].path))
                    .is_some_and(|c| c.id == id && c.status != Status::Deleted)
            })
            .collect();
        let pages = only.map_or(&live[..], |i| &live[i..=i]);
        let fps = |v: u32| Ok(ix.fingerprints(v, v + 1)?.pop().unwrap_or_default());
        let unknown = (pages.iter())
            .map(|&id| {
                let base = lineage.base(id, basis).map(|b| b.id);
                shares_change(fps, id, base, |v| rows[v as usize].tokens).unwrap()
            })
            .filter(|c| c.counts.is_none())
            .count();
        (pages.len(), unknown)
    };
    let (pages, unknown) = measure(Basis::Predecessor, None);
    assert_eq!(unknown, 0, "every version's fingerprints are kept");
    let known = |basis, only| assert_eq!(measure(basis, only).1, 0);
    let (by_predecessor, catch_up) =
        medians_side_by_side(7, || known(Basis::Predecessor, None), index);
    let by_folder = median(7, || known(Basis::Folder, None));
    let one = median(7, || known(Basis::Predecessor, Some(pages / 2)));
    // The engine's own run, from the TUI's first snapshot to its last
    // update: the first session against an index with no pairs kept, the
    // next with the pairs the first kept.
    let session = || -> (Duration, usize) {
        use lineage_engine::{Command as Ask, Engine, Options, Update};
        let (tx, rx) = std::sync::mpsc::channel();
        let config = Config {
            order: if order == "version" {
                Order::Version
            } else {
                Order::Path
            },
            history: lineage_config::HistoryMode::Folder,
            ..Config::default()
        };
        let engine = Engine::start(
            Options {
                root: root.clone(),
                index_dir: ix_dir.clone(),
                config,
                memory: Default::default(),
            },
            move |u| {
                let _ = tx.send(u);
            },
        );
        loop {
            match rx.recv().expect("engine running") {
                Update::Snapshot(s) if s.progress.is_none() => break,
                Update::Fatal(e) => panic!("{e}"),
                _ => {}
            }
        }
        let t = Instant::now();
        engine.send(Ask::Shares {
            basis: Basis::Predecessor,
        });
        let mut diffed = 0;
        loop {
            if let Update::Shares(u) = rx.recv().expect("engine running") {
                diffed = diffed.max(u.total);
                if u.finished {
                    break;
                }
            }
        }
        (t.elapsed(), diffed)
    };
    lineage_source::watch::ignore_lease_signal();
    let (cold, diffed) = session();
    let warm: Vec<(Duration, usize)> = (0..5).map(|_| session()).collect();
    assert!(
        warm.iter().all(|w| w.1 == 0),
        "the next sessions diff nothing"
    );
    let mut warm: Vec<Duration> = warm.into_iter().map(|w| w.0).collect();
    warm.sort();
    let _ = std::fs::remove_dir_all(&home);
    println!("## Documents' changed and removed shares ({name}, {pages} live pages)\n");
    println!("| what | median |\n| --- | --- |");
    println!(
        "| `lineage index` with no change (the catch-up, whole process) | {:.1} ms |",
        catch_up.as_secs_f64() * 1e3
    );
    println!(
        "| every page against its predecessor (index opened, rows read, bases found, diffs) | {:.1} ms |",
        by_predecessor.as_secs_f64() * 1e3
    );
    println!(
        "| every page against the previous folder | {:.1} ms |",
        by_folder.as_secs_f64() * 1e3
    );
    println!(
        "| one page (index opened, rows read, bases found, one diff) | {:.1} ms |",
        one.as_secs_f64() * 1e3
    );
    println!(
        "| the engine's run, first session ({diffed} pairs diffed and kept in the index) | {:.1} ms |",
        cold.as_secs_f64() * 1e3
    );
    println!(
        "| the engine's run, a later session (the pairs read back; median of 5) | {:.1} ms |",
        warm[2].as_secs_f64() * 1e3
    );
    println!(
        "\nratio every page / catch-up: {:.2}\n",
        by_predecessor.as_secs_f64() / catch_up.as_secs_f64()
    );
}
