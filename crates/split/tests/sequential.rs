//! The split pass against the sequential one: the same labels for every
//! document, and the table it leaves, byte for byte.
#![allow(clippy::unwrap_used)] // a test: a panic is its failure

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lineage_origin::align::OriginKeys;
use lineage_origin::keymap::splitmix64;
use lineage_origin::sweep;
use lineage_origin::table::{Counters, Table};
use lineage_origin::{
    Estimation, Eviction, Labeller, OriginPass, Params, Selector, TableSize, Unit,
};
use lineage_split::{
    Answered, Cluster, KeyStore, Labelled, Options, SplitError, SplitLookups, SplitPass,
};

/// Documents as 62-bit keys: fresh runs, runs copied from earlier
/// documents, whole duplicates, repeats inside a document, empty ones.
fn corpus(seed: u64, n_docs: usize, max_len: u64) -> Vec<Vec<u64>> {
    let shape = lineage_testing::Shape {
        copy_one_in: 8,
        min_len: 0,
        len_span: max_len,
        min_run: 1,
        run_span: 30,
    };
    lineage_testing::collection(seed, seed, n_docs, shape, splitmix64)
}

/// A document's keys as the units of `Selector::All`.
fn units(keys: &[u64]) -> Vec<Unit> {
    (0u32..)
        .zip(keys)
        .map(|(i, &key)| Unit {
            key,
            start: i,
            end: i + 8,
        })
        .collect()
}

/// Every document's keys, for alignment.
struct Versions(Vec<Vec<u64>>);

impl OriginKeys for Versions {
    fn keys(&mut self, id: u32) -> Option<&[u64]> {
        self.0.get(id as usize).map(Vec::as_slice)
    }
}

/// Every version is known from the start: what the pass keeps must be the
/// same keys, in document order.
impl KeyStore for Versions {
    fn keep(&mut self, id: u32, keys: Vec<u64>) -> Result<(), String> {
        assert_eq!(self.0[id as usize], keys, "document {id}'s keys");
        Ok(())
    }
}

fn state(t: &Table) -> (Vec<u8>, Option<Vec<u8>>) {
    let mut whole = Vec::new();
    t.write_state(&mut whole).unwrap();
    let mut changes = Vec::new();
    let wrote = t.write_changes(&mut changes).unwrap();
    (whole, wrote.then_some(changes))
}

/// The labels of `docs[from..]` through the split pass continuing from
/// `table`, and the table it leaves.
fn split(
    params: Params,
    table: Table,
    options: Options,
    docs: &[Vec<u64>],
    from: usize,
) -> (Vec<Vec<u32>>, Table, bool) {
    let origins = Arc::new(Mutex::new(Versions(docs.to_vec())));
    let mut pass = SplitPass::new(params, table, options, origins).unwrap();
    let is_split = pass.is_split();
    let mut got: Vec<Vec<u32>> = Vec::new();
    let mut done = |l: Labelled<'_, usize>| -> Result<(), SplitError> {
        assert_eq!(l.payload, l.id as usize, "in document order");
        assert_eq!(l.payload, from + got.len(), "in document order");
        assert_eq!(l.units.len(), l.labels.len());
        got.push(l.labels.to_vec());
        Ok(())
    };
    for (d, keys) in docs.iter().enumerate().skip(from) {
        pass.push(d as u32, units(keys), d, &mut done).unwrap();
    }
    let table = pass.finish(&mut done).unwrap().table().unwrap();
    (got, table, is_split)
}

/// The first `n` documents through the split pass, which is then dropped
/// unfinished (its caller failed, or the process was lost): its labels,
/// and whether it split.
fn split_until(
    params: Params,
    table: Table,
    options: Options,
    docs: &[Vec<u64>],
    n: usize,
) -> (Vec<Vec<u32>>, bool) {
    let origins = Arc::new(Mutex::new(Versions(docs.to_vec())));
    let mut pass = SplitPass::new(params, table, options, origins).unwrap();
    let is_split = pass.is_split();
    let mut got: Vec<Vec<u32>> = Vec::new();
    for (d, keys) in docs.iter().enumerate().take(n) {
        pass.push(d as u32, units(keys), d, |l: Labelled<'_, usize>| {
            got.push(l.labels.to_vec());
            Ok::<(), SplitError>(())
        })
        .unwrap();
    }
    drop(pass);
    (got, is_split)
}

/// The labels of `docs[from..]` through the split lookups continuing from
/// `table`, labelled here, handed over `batch` documents at a time (each
/// batch answered whole before the next, as the index hands them over);
/// and the table they leave.
fn lookups(
    params: Params,
    table: Table,
    workers: usize,
    docs: &[Vec<u64>],
    from: usize,
    batch: usize,
) -> (Vec<Vec<u32>>, Table) {
    let mut split = SplitLookups::new(params, table, workers).unwrap();
    let mut labeller = Labeller::new(params);
    let got = std::cell::RefCell::new(Vec::<Vec<u32>>::new());
    let mut label = |a: Answered<usize>| -> Result<(), SplitError> {
        let mut got = got.borrow_mut();
        assert_eq!(a.payload, a.id as usize, "in document order");
        assert_eq!(a.payload, from + got.len(), "in document order");
        let keys: Vec<u64> = a.units.iter().map(|u| u.key).collect();
        let labels = labeller.label(
            a.id,
            &keys,
            &a.hits,
            &a.slots,
            || a.incomplete,
            &mut &docs[..],
        );
        got.push(labels.to_vec());
        Ok(())
    };
    for (d, keys) in docs.iter().enumerate().skip(from) {
        split.push(d as u32, units(keys), d, &mut label).unwrap();
        if (d + 1 - from).is_multiple_of(batch) {
            split.flush(&mut label).unwrap();
            let answered = got.borrow().len();
            assert_eq!(answered, d + 1 - from, "a flush answers every document");
        }
    }
    split.flush(&mut label).unwrap();
    (got.into_inner(), split.finish().unwrap())
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(256))]
    #[test]
    fn the_split_pass_labels_and_leaves_the_table_as_the_sequential_pass(
        seed in proptest::num::u64::ANY,
        n_docs in 1usize..30,
        ev in 0usize..5,
        est in 0usize..4,
        size in 0usize..4,
        per in proptest::sample::select(vec![4u16, 8, 64]),
        workers in proptest::sample::select(vec![1usize, 2, 4]),
        align in proptest::bool::ANY,
        resume_at in 0usize..6,
        epoch_units in 1usize..400,
        window in 1usize..4,
    ) {
        let eviction = [Eviction::Random, Eviction::Lru, Eviction::Cc, Eviction::BottomK, Eviction::Lucky][ev];
        let estimation = [Estimation::Nb, Estimation::E, Estimation::B, Estimation::Be][est];
        let docs = corpus(seed, n_docs, 300);
        let mut distinct: Vec<u64> = docs.iter().flatten().copied().collect();
        distinct.sort_unstable();
        distinct.dedup();
        let mut params = Params {
            selector: Selector::All,
            table_size: TableSize::Bytes(0),
            bucket_entries: per,
            eviction,
            estimation,
            seed,
            align,
            ..Params::default()
        };
        // Holds all (a growing table), grows part way, about fills,
        // samples or evicts.
        let entry = params.table_params().layout.entry_bytes();
        let (d, p) = (distinct.len() as u64, u64::from(per));
        let n_buckets = match size {
            0 => 64 * d / p + 64,
            1 => 4 * d / p + 1,
            2 => d / p + 1,
            _ => d / (4 * p) + 1,
        };
        params.table_size = TableSize::Bytes(n_buckets * (p * entry + 2));

        // The sequential pass: the first documents, its state saved; the
        // rest continuing from that state.
        let from = resume_at.min(docs.len());
        let mut before = OriginPass::new(params).unwrap();
        for (d, keys) in docs.iter().enumerate().take(from) {
            before.process(d as u32, &units(keys), &mut &docs[..]);
        }
        let mut resumed = Vec::new();
        before.table().write_state(&mut resumed).unwrap();
        let restore = || Table::read_state(params.table_params(), &mut &resumed[..]).unwrap();
        let mut seq = OriginPass::resume(params, restore());
        let want: Vec<Vec<u32>> = docs
            .iter()
            .enumerate()
            .skip(from)
            .map(|(d, keys)| seq.process(d as u32, &units(keys), &mut &docs[..]).to_vec())
            .collect();

        // The split pass, from the table the sequential one had at `from`.
        let options = Options { workers, epoch_units, window, cluster: None, checkpoints: None };
        let (got, joined, is_split) = split(params, restore(), options, &docs, from);
        proptest::prop_assert_eq!(is_split, eviction != Eviction::Lucky);
        proptest::prop_assert_eq!(got.len(), want.len());
        for (d, labels) in got.iter().enumerate() {
            proptest::prop_assert_eq!(labels, &want[d], "document {}", from + d);
        }
        let (a, b): (Counters, Counters) = (joined.counters(), seq.table().counters());
        proptest::prop_assert_eq!(a, b);
        proptest::prop_assert_eq!(joined.regime(), seq.table().regime());
        proptest::prop_assert_eq!(state(&joined), state(seq.table()));

        // Labelled by the caller, a batch at a time (where it splits).
        if eviction != Eviction::Lucky {
            let (got, joined) = lookups(params, restore(), workers, &docs, from, window * 3);
            proptest::prop_assert_eq!(&got, &want);
            proptest::prop_assert_eq!(joined.counters(), seq.table().counters());
            proptest::prop_assert_eq!(state(&joined), state(seq.table()));
        } else {
            proptest::prop_assert!(SplitLookups::<usize>::new(params, restore(), workers).is_err());
        }
    }
}

/// Dropped before it finishes (its caller failed): the workers stop.
#[test]
fn a_pass_dropped_unfinished_stops_its_workers() {
    let docs = corpus(7, 50, 400);
    let params = Params {
        table_size: TableSize::Bytes(1 << 14),
        ..Params::default()
    };
    let origins = Arc::new(Mutex::new(Versions(docs.clone())));
    let table = Table::new(params.table_params()).unwrap();
    let mut pass = SplitPass::new(params, table, Options::new(3), origins).unwrap();
    assert!(pass.is_split());
    for (d, keys) in docs.iter().enumerate().take(20) {
        pass.push(d as u32, units(keys), (), |_| Ok::<(), SplitError>(()))
            .unwrap();
    }
    drop(pass);
}

/// Earlier documents' keys from a store with a bug: it panics, on a worker,
/// when it is read while labelling (every time, or the first only: then
/// one worker stops and the others wait on it), or the first time it keeps
/// a document's keys (inside a dataflow operator, as the document arrives
/// at its owner).
struct Broken {
    when: Break,
    broke: AtomicBool,
}

#[derive(Clone, Copy, Debug)]
enum Break {
    EveryRead,
    FirstRead,
    FirstKeep,
}

impl Broken {
    fn breaks(&self, now: Break) -> bool {
        match (self.when, now) {
            (Break::EveryRead, Break::EveryRead) => true,
            (Break::FirstRead, Break::EveryRead) | (Break::FirstKeep, Break::FirstKeep) => {
                !self.broke.swap(true, Ordering::SeqCst)
            }
            _ => false,
        }
    }
}

impl OriginKeys for Broken {
    fn keys(&mut self, _: u32) -> Option<&[u64]> {
        assert!(
            !self.breaks(Break::EveryRead),
            "the key store broke (as the test meant)"
        );
        None
    }
}

impl KeyStore for Broken {
    fn keep(&mut self, _: u32, _: Vec<u64>) -> Result<(), String> {
        assert!(
            !self.breaks(Break::FirstKeep),
            "the key store broke (as the test meant)"
        );
        Ok(())
    }
}

/// A worker that panics ends the pass with an error, whether the caller is
/// handing documents out or waiting for the last labels, and whether the
/// other workers stop too or wait on it forever: the caller never waits
/// with them, nor joins them.
#[test]
fn a_worker_that_panics_ends_the_pass_with_an_error() {
    let breaks = [Break::EveryRead, Break::FirstRead, Break::FirstKeep];
    for (workers, when) in [2, 3].into_iter().flat_map(|w| breaks.map(|b| (w, b))) {
        let failed = lineage_testing::within(Duration::from_secs(30), move || {
            let docs = corpus(11, 60, 400);
            // Small enough to evict, so alignment reads the store.
            let params = Params {
                table_size: TableSize::Bytes(1 << 14),
                ..Params::default()
            };
            let table = Table::new(params.table_params()).unwrap();
            let broken = Broken {
                when,
                broke: AtomicBool::new(false),
            };
            let origins = Arc::new(Mutex::new(broken));
            let mut pass = SplitPass::new(params, table, Options::new(workers), origins).unwrap();
            let done = |_: Labelled<'_, ()>| Ok::<(), SplitError>(());
            for (d, keys) in docs.iter().enumerate() {
                if let Err(e) = pass.push(d as u32, units(keys), (), done) {
                    return e;
                }
            }
            match pass.finish(done) {
                Err(e) => e,
                Ok(_) => panic!("the pass ended well with a broken key store"),
            }
        });
        assert!(
            matches!(failed, SplitError::Worker(_)),
            "{workers} workers, {when:?}: {failed}"
        );
    }
}

/// The labels process 0 gets back from a run of `processes` processes
/// (threads here, over loopback), each reading every n-th document, and
/// the figures of the table over all of them.
fn cluster_run(
    params: Params,
    docs: &[Vec<u64>],
    processes: usize,
    workers: usize,
) -> (Vec<Vec<u32>>, lineage_origin::history::ReplayStats) {
    let hosts = lineage_testing::free_ports(processes);
    let runs: Vec<_> = (0..processes)
        .map(|process| {
            let (hosts, docs) = (hosts.clone(), docs.to_vec());
            std::thread::spawn(move || {
                let options = Options {
                    cluster: Some(Cluster {
                        hosts,
                        process,
                        check: 7,
                        wait: std::time::Duration::from_secs(20),
                        progress_timeout: std::time::Duration::from_secs(60),
                    }),
                    ..Options::new(workers)
                };
                let origins = Arc::new(Mutex::new(Versions(docs.clone())));
                let table = Table::new(params.table_params()).unwrap();
                let mut pass = SplitPass::new(params, table, options, origins).unwrap();
                let mut got: Vec<Vec<u32>> = Vec::new();
                let mut done = |l: Labelled<'_, usize>| -> Result<(), SplitError> {
                    assert_eq!(l.payload, got.len(), "in document order");
                    got.push(l.labels.to_vec());
                    Ok(())
                };
                for (d, keys) in docs.iter().enumerate() {
                    if d % processes == process {
                        pass.push(d as u32, units(keys), d, &mut done).unwrap();
                    } else {
                        pass.pass_over(&mut done).unwrap();
                    }
                }
                let ended = pass.finish(&mut done).unwrap();
                (got, ended.stats(&params))
            })
        })
        .collect();
    let mut results: Vec<_> = runs.into_iter().map(|r| r.join().unwrap()).collect();
    for (got, stats) in &results[1..] {
        assert!(
            got.is_empty() && stats.is_none(),
            "only process 0 gets results"
        );
    }
    let (got, stats) = results.swap_remove(0);
    (got, stats.unwrap())
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(12))]
    #[test]
    fn processes_over_loopback_label_as_the_sequential_pass(
        seed in proptest::num::u64::ANY,
        n_docs in 1usize..40,
        ev in 0usize..4,
        size in 0usize..3,
        processes in 2usize..4,
        workers in 1usize..3,
        align in proptest::bool::ANY,
    ) {
        let eviction = [Eviction::Random, Eviction::Lru, Eviction::Cc, Eviction::BottomK][ev];
        let docs = corpus(seed, n_docs, 300);
        let mut distinct: Vec<u64> = docs.iter().flatten().copied().collect();
        distinct.sort_unstable();
        distinct.dedup();
        let mut params = Params {
            selector: Selector::All,
            bucket_entries: 8,
            eviction,
            estimation: Estimation::Be,
            seed,
            align,
            ..Params::default()
        };
        let entry = params.table_params().layout.entry_bytes();
        let d = distinct.len() as u64;
        let n_buckets = [16 * d / 8 + 16, d / 8 + 1, d / 32 + 1][size];
        params.table_size = TableSize::Bytes(n_buckets * (8 * entry + 2));
        let mut seq = OriginPass::new(params).unwrap();
        let want: Vec<Vec<u32>> = docs
            .iter()
            .enumerate()
            .map(|(d, keys)| seq.process(d as u32, &units(keys), &mut &docs[..]).to_vec())
            .collect();
        let (got, stats) = cluster_run(params, &docs, processes, workers);
        proptest::prop_assert_eq!(&got, &want);
        let whole = lineage_origin::history::ReplayStats::of_table(seq.table(), &params);
        proptest::prop_assert_eq!(stats.counters, whole.counters);
        proptest::prop_assert_eq!(stats.regime, whole.regime);
        proptest::prop_assert_eq!(stats.capacity, whole.capacity);
    }
}

/// Why `cluster` cannot start a pass (a small table, no documents), if it
/// cannot.
fn start_error(cluster: Cluster) -> Option<String> {
    let options = Options {
        cluster: Some(cluster),
        ..Options::new(1)
    };
    let params = Params {
        table_size: TableSize::Bytes(1 << 14),
        ..Params::default()
    };
    let origins = Arc::new(Mutex::new(Versions(Vec::new())));
    let table = Table::new(params.table_params()).unwrap();
    SplitPass::<()>::new(params, table, options, origins)
        .err()
        .map(|e| e.to_string())
}

/// A process that never comes: the others give up at the deadline, saying
/// which process and where.
#[test]
fn a_process_that_never_comes_is_named() {
    let hosts = lineage_testing::free_ports(2);
    let e = start_error(Cluster {
        hosts: hosts.clone(),
        process: 0,
        check: 1,
        wait: std::time::Duration::from_millis(300),
        progress_timeout: std::time::Duration::from_secs(60),
    })
    .expect("connected to nobody");
    assert!(e.contains("process 1") && e.contains(&hosts[1]), "{e}");
}

/// Processes that disagree on what they run are refused at the start.
#[test]
fn processes_that_differ_are_refused() {
    let hosts = lineage_testing::free_ports(2);
    let runs: Vec<_> = (0..2)
        .map(|process| {
            let hosts = hosts.clone();
            std::thread::spawn(move || {
                start_error(Cluster {
                    hosts,
                    process,
                    check: process as u64,
                    wait: std::time::Duration::from_secs(10),
                    progress_timeout: std::time::Duration::from_secs(60),
                })
            })
        })
        .collect();
    for r in runs {
        let e = r.join().unwrap().expect("refused");
        assert!(e.contains("other settings"), "{e}");
    }
}

/// `docs` (token fingerprints) selected for `runs` and replayed as a sweep
/// by `replayer` (`None`: the sequential pass).
fn sweep_runs(
    docs: &[Vec<u64>],
    runs: &[Params],
    replayer: Option<&dyn sweep::Replayer>,
) -> sweep::Sweep {
    let poly = lineage_core::fingerprint::polynomial::standard();
    let selecting = sweep::Selecting::new(poly, runs[0].k, runs.iter().map(|p| p.selector));
    let mut batches = docs.chunks(4).map(<[_]>::to_vec);
    let selected = selecting.batches(|| Ok::<_, ()>(batches.next())).unwrap();
    let ctl = sweep::Control {
        replayer,
        ..sweep::Control::default()
    };
    sweep::Plan::new(selected, runs).unwrap().run(&ctl).unwrap()
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(48))]
    /// A sweep's runs split over spare workers score and count as the
    /// sequential replays do; Lucky and unbounded runs are not split.
    #[test]
    fn a_sweep_split_over_workers_gives_the_sequential_figures(
        seed in proptest::num::u64::ANY,
        n_docs in 1usize..30,
        evictions in proptest::sample::subsequence(
            vec![Eviction::Cc, Eviction::Lru, Eviction::BottomK, Eviction::Lucky], 1..3),
        selector in proptest::sample::select(vec![Selector::All, Selector::NHs, Selector::Hb(3)]),
        sizes in proptest::sample::subsequence(
            vec![TableSize::Bytes(1 << 10), TableSize::Bytes(4 << 10), TableSize::Unbounded], 1..3),
        workers in proptest::sample::select(vec![2usize, 4, 8]),
        align in proptest::bool::ANY,
        k in 3usize..9,
    ) {
        // Tokens copied in runs from earlier documents: shared shingles.
        let docs = corpus(seed, n_docs, 300);
        let base = Params { k, align, ..Params::default() };
        let runs = sweep::combinations(base, &[selector], &evictions, &[Estimation::Be], &sizes);
        let want = sweep_runs(&docs, &runs, None);
        let split = lineage_split::SplitReplay::new(workers);
        let got = sweep_runs(&docs, &runs, Some(&split));
        proptest::prop_assert_eq!(&got.exact, &want.exact);
        for (g, w) in got.runs.iter().zip(&want.runs) {
            proptest::prop_assert_eq!(g.params, w.params);
            proptest::prop_assert_eq!(g.score, w.score, "{:?}", g.params);
            proptest::prop_assert_eq!(g.counters, w.counters, "{:?}", g.params);
            proptest::prop_assert_eq!(g.capacity, w.capacity);
            proptest::prop_assert_eq!(g.selected_keys, w.selected_keys);
        }
    }
}

/// Each checkpoint the split pass writes holds, shard by shard, the table
/// the sequential pass has after the places it names: read back into a
/// fresh split and joined, byte for byte. The newest three are kept (and
/// any within twice the window); a torn one and one of another run are
/// refused.
#[test]
fn checkpoints_hold_the_sequential_passs_table_at_their_epoch() {
    use lineage_split::{CheckpointError, Checkpoints, epoch_of, read_shard, shard_path};
    let docs = corpus(11, 80, 300);
    // Every so many places (documents): 1 is every epoch.
    for (eviction, size, every) in [
        (Eviction::BottomK, 1 << 20, 1),
        (Eviction::Lru, 1 << 12, 5),
        (Eviction::Cc, 1 << 12, 1),
        (Eviction::Random, 1 << 13, 7),
    ] {
        let params = Params {
            selector: Selector::All,
            table_size: TableSize::Bytes(size),
            eviction,
            ..Params::default()
        };
        let dir = std::env::temp_dir().join(format!(
            "lineage-ckpt-test-{}-{eviction:?}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let c = Checkpoints {
            dir: dir.clone(),
            every,
            check: 42,
            resume: false,
            caller_holds: None,
        };
        let mut options = Options::new(2);
        options.epoch_units = 300;
        options.window = 2;
        options.checkpoints = Some(c.clone());
        let fresh = || Table::new(params.table_params()).unwrap();
        // Stopped before its end (a finished run removes its checkpoints).
        let (_, is_split) = split_until(params, fresh(), options, &docs, 60);
        assert!(is_split);
        let firsts: Vec<usize> = fresh()
            .split(2)
            .unwrap()
            .iter()
            .map(|s| s.range().start)
            .collect();
        let mut epochs: Vec<u64> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| epoch_of(e.unwrap().file_name().to_str()?, firsts[0]))
            .collect();
        epochs.sort_unstable();
        assert!(epochs.len() >= 2, "{eviction:?}: epochs {epochs:?}");
        // The newest three, and any of the last 2 (window + 1) epochs.
        let newest = *epochs.last().unwrap();
        assert!(
            epochs.len() <= 3 || epochs[0] + 2 * 3 >= newest,
            "{eviction:?}: the newest three and the window's: {epochs:?}"
        );
        assert!(epochs.len() >= 3.min(newest as usize), "{epochs:?}");
        let mut at = Vec::new();
        for &e in &epochs {
            let mut shards = fresh().split(2).unwrap();
            let mut places = Vec::new();
            for s in &mut shards {
                let path = shard_path(&dir, s.range().start, e);
                places.push(read_shard(&c, &path, s).unwrap());
            }
            assert!(places.windows(2).all(|w| w[0] == w[1]));
            at.push(places[0]);
            let mut seq = OriginPass::new(params).unwrap();
            for (d, keys) in docs.iter().enumerate().take(places[0] as usize) {
                seq.process(d as u32, &units(keys), &mut &docs[..]);
            }
            let joined = Table::join(shards).unwrap();
            // Not assert_eq: the states are megabytes.
            assert!(
                state(&joined).0 == state(seq.table()).0,
                "{eviction:?}: epoch {e}, {} places",
                places[0]
            );
        }
        // Each past another multiple of `every` places than the one before.
        assert!(
            at.windows(2).all(|w| w[0] / every < w[1] / every),
            "{eviction:?}: {at:?}"
        );
        if every == 1 {
            assert!(epochs.windows(2).all(|w| w[1] == w[0] + 1), "{epochs:?}");
        }
        // Another run's check: refused as foreign; a torn file: unusable.
        let path = shard_path(&dir, firsts[0], epochs[0]);
        let mut s = fresh().split(2).unwrap().remove(0);
        let other = Checkpoints {
            check: 43,
            ..c.clone()
        };
        assert!(matches!(
            read_shard(&other, &path, &mut s),
            Err(CheckpointError::Foreign(_))
        ));
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        assert!(matches!(
            read_shard(&c, &path, &mut s),
            Err(CheckpointError::Unusable(_))
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// A run from where `options` say (the start, or with
/// `Checkpoints::resume` its newest checkpoint), to the end: where it
/// continued, the labels from there, the epochs it marked for the caller
/// to keep its own part at, and the table it leaves.
#[allow(clippy::type_complexity)]
fn run_from(
    params: Params,
    options: Options,
    docs: &[Vec<u64>],
) -> Result<
    (
        lineage_split::Point,
        Vec<Vec<u32>>,
        Vec<lineage_split::Point>,
        Table,
    ),
    SplitError,
> {
    let origins = Arc::new(Mutex::new(Versions(docs.to_vec())));
    let table = Table::new(params.table_params()).unwrap();
    let mut pass = SplitPass::new(params, table, options, origins)?;
    let from = pass.resumed();
    let (mut got, mut marks) = (Vec::new(), Vec::new());
    let mut done = |l: Labelled<'_, usize>| -> Result<(), SplitError> {
        assert_eq!(
            l.payload,
            from.places as usize + got.len(),
            "in document order"
        );
        got.push(l.labels.to_vec());
        marks.extend(l.checkpoint);
        Ok(())
    };
    for (d, keys) in docs.iter().enumerate().skip(from.places as usize) {
        pass.push(d as u32, units(keys), d, &mut done)?;
    }
    let table = pass.finish(&mut done)?.table().unwrap();
    Ok((from, got, marks, table))
}

/// A run stopped part way (its pass dropped, as a lost process leaves it)
/// and resumed from its checkpoints: from the newest epoch every shard
/// holds, each later document labelled as the sequential pass labels it,
/// the same epochs marked for the caller as an uninterrupted run marks,
/// and the table left byte for byte the same. A torn newest checkpoint
/// falls back to the one before; the caller's own part narrows the epoch;
/// another run's checkpoint is refused; a finished run leaves none.
#[test]
fn a_run_resumed_from_its_checkpoints_is_the_uninterrupted_run() {
    use lineage_split::{Checkpoints, epoch_of, read_shard, shard_path};
    let docs = corpus(13, 90, 300);
    for (eviction, size, align, every) in [
        (Eviction::BottomK, 1 << 20, true, 3),
        (Eviction::BottomK, 1 << 11, true, 4),
        (Eviction::Lru, 1 << 12, true, 5),
        (Eviction::Random, 1 << 13, false, 2),
    ] {
        let params = Params {
            selector: Selector::All,
            table_size: TableSize::Bytes(size),
            eviction,
            align,
            ..Params::default()
        };
        let mut seq = OriginPass::new(params).unwrap();
        let want: Vec<Vec<u32>> = (docs.iter().enumerate())
            .map(|(d, keys)| seq.process(d as u32, &units(keys), &mut &docs[..]).to_vec())
            .collect();
        let dir = std::env::temp_dir().join(format!(
            "lineage-resume-test-{}-{eviction:?}-{size}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let c = Checkpoints {
            dir: dir.clone(),
            every,
            check: 42,
            resume: false,
            caller_holds: None,
        };
        let options = |c: &Checkpoints| {
            let mut o = Options::new(2);
            o.epoch_units = 300;
            o.window = 2;
            o.checkpoints = Some(c.clone());
            o
        };
        let resumed = Checkpoints {
            resume: true,
            ..c.clone()
        };
        let what = format!("{eviction:?}, {size} B");
        let fresh = || Table::new(params.table_params()).unwrap();
        let firsts: Vec<usize> = (fresh().split(2).unwrap().iter())
            .map(|s| s.range().start)
            .collect();
        // The epochs a shard (by its first bucket) holds checkpoints of.
        let epochs_of = |first: usize| -> Vec<u64> {
            let mut e: Vec<u64> = std::fs::read_dir(&dir)
                .unwrap()
                .filter_map(|e| epoch_of(e.unwrap().file_name().to_str()?, first))
                .collect();
            e.sort_unstable();
            e
        };
        let epochs = || epochs_of(firsts[0]);
        // The epochs both shards hold: a run resumes from the newest of
        // these (the shards write theirs apart: one stopped mid-epoch may
        // hold a newer one than the other).
        let common = || -> Vec<u64> {
            let other = epochs_of(firsts[1]);
            (epochs().into_iter())
                .filter(|e| other.contains(e))
                .collect()
        };
        let check = |from: lineage_split::Point, got: &[Vec<u32>], table: &Table| {
            assert_eq!(got.len(), docs.len() - from.places as usize, "{what}");
            for (i, labels) in got.iter().enumerate() {
                let d = from.places as usize + i;
                assert_eq!(labels, &want[d], "{what}: document {d}");
            }
            assert!(state(table) == state(seq.table()), "{what}: the table");
        };

        // Uninterrupted, with checkpoints: the epochs it marks; it removes
        // its files at the end.
        let (start, got, all_marks, table) = run_from(params, options(&c), &docs).unwrap();
        assert_eq!(start, lineage_split::Point::START);
        check(start, &got, &table);
        assert!(all_marks.len() >= 4, "{what}: {all_marks:?}");
        assert!(epochs().is_empty(), "{what}: a finished run keeps none");

        // Stopped after 50 documents, resumed.
        split_until(params, fresh(), options(&c), &docs, 50);
        let kept = common();
        assert!(!kept.is_empty(), "{what}");
        let (from, got, marks, table) = run_from(params, options(&resumed), &docs).unwrap();
        assert_eq!(from.epoch, *kept.last().unwrap(), "{what}: the newest");
        assert!(from.places > 0 && from.places <= 50, "{what}: {from:?}");
        check(from, &got, &table);
        let later: Vec<_> = (all_marks.iter())
            .filter(|m| m.places > from.places)
            .copied()
            .collect();
        assert_eq!(marks, later, "{what}: the same epochs marked");
        assert!(epochs().is_empty(), "{what}");

        // The newest checkpoint of one shard torn: the one before.
        split_until(params, fresh(), options(&c), &docs, 50);
        // Shard 1's own: the shards write and drop theirs apart, so its
        // newest need not be shard 0's.
        let kept = epochs_of(firsts[1]);
        assert!(kept.len() >= 2, "{what}: {kept:?}");
        let newest = shard_path(&dir, firsts[1], *kept.last().unwrap());
        let bytes = std::fs::read(&newest).unwrap();
        std::fs::write(&newest, &bytes[..bytes.len() / 2]).unwrap();
        let (from, got, _, table) = run_from(params, options(&resumed), &docs).unwrap();
        assert_eq!(
            from.epoch,
            kept[kept.len() - 2],
            "{what}: torn, the one before"
        );
        check(from, &got, &table);

        // The caller holds its part at the oldest epoch only: that one.
        split_until(params, fresh(), options(&c), &docs, 50);
        let kept = common();
        let mut s = fresh().split(2).unwrap().remove(0);
        let places = read_shard(&c, &shard_path(&dir, firsts[0], kept[0]), &mut s).unwrap();
        let oldest = lineage_split::Point {
            epoch: kept[0],
            places,
            evicted: false,
        };
        let narrowed = Checkpoints {
            caller_holds: Some(vec![oldest]),
            ..resumed.clone()
        };
        let (from, got, _, table) = run_from(params, options(&narrowed), &docs).unwrap();
        assert_eq!((from.epoch, from.places), (kept[0], places), "{what}");
        check(from, &got, &table);

        // The caller holds nothing of its own (process 0's report lost):
        // the start, while the shards have removed none; past that, none
        // in common, said so.
        let nothing = Checkpoints {
            caller_holds: Some(Vec::new()),
            ..resumed.clone()
        };
        split_until(params, fresh(), options(&c), &docs, 6);
        let (from, got, _, table) = run_from(params, options(&nothing), &docs).unwrap();
        assert_eq!(from, lineage_split::Point::START, "{what}");
        check(from, &got, &table);
        split_until(params, fresh(), options(&c), &docs, 50);
        match run_from(params, options(&nothing), &docs) {
            Err(SplitError::Resume(e)) => assert!(e.contains("no checkpoint"), "{e}"),
            Err(e) => panic!("{what}: {e}"),
            Ok(_) => panic!("{what}: resumed with nothing in common"),
        }

        // Another run's: refused, in one line naming the file.
        split_until(params, fresh(), options(&c), &docs, 50);
        let other = Checkpoints {
            check: 43,
            ..resumed.clone()
        };
        match run_from(params, options(&other), &docs) {
            Err(e @ SplitError::Resume(_)) => {
                let e = e.to_string();
                assert!(e.contains("other settings") && e.contains(".ckpt"), "{e}");
                assert!(!e.contains('\n'), "{e}");
            }
            Err(e) => panic!("{what}: {e}"),
            Ok(_) => panic!("{what}: another run's checkpoints resumed"),
        }
        // And run afresh (no resume), the old files go first.
        let (from, got, _, table) = run_from(params, options(&c), &docs).unwrap();
        assert_eq!(from, lineage_split::Point::START);
        check(from, &got, &table);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
