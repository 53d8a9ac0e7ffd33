//! `cargo bench --bench split`: the origin pass's throughput, sequential and
//! split by bucket range over 1, 2, 4, 8 and 16 workers (issue 40's target:
//! at least 8x from 1 to 16 workers on a 16-core machine), on a generated
//! collection (fresh runs, copies of earlier documents, whole duplicates,
//! repeats), each run checked against the sequential answer. Prints Markdown
//! for BENCHMARKS.md with the machine's core count.
//!
//! Settings by environment: DOCS (default 20000), TABLE (default 64MiB),
//! ALIGN (on|off, default on), WORKERS (default 1,2,4,8,16), REPS (3).
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lineage_origin::align::OriginKeys;
use lineage_origin::keymap::splitmix64;
use lineage_origin::table::Table;
use lineage_origin::{OriginPass, Params, TableSize, Unit};
use lineage_split::{Options, SplitError, SplitPass};

fn env(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.into())
}

/// `n_docs` documents of 200 to 1,200 62-bit keys.
fn corpus(n_docs: usize) -> Vec<Vec<u64>> {
    let shape = lineage_testing::Shape {
        copy_one_in: 20,
        min_len: 200,
        len_span: 1000,
        min_run: 5,
        run_span: 60,
    };
    lineage_testing::collection(42, 0xabcdef, n_docs, shape, splitmix64)
}

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

/// Every document's keys, for alignment (shared with the workers).
struct Versions(Arc<Vec<Vec<u64>>>);

impl OriginKeys for Versions {
    fn keys(&mut self, id: u32) -> Option<&[u64]> {
        self.0.get(id as usize).map(Vec::as_slice)
    }
}

/// Known from the start: nothing to keep.
impl lineage_split::KeyStore for Versions {
    fn keep(&mut self, _: u32, _: Vec<u64>) -> Result<(), String> {
        Ok(())
    }
}

/// What the process has used so far, all threads: CPU time (user and
/// system: on a shared machine, steadier than wall time, and what a pass's
/// overhead costs whether or not it is hidden by another thread), and minor
/// page faults (memory the allocator handed back to the kernel and touched
/// again, cheap here but a trap to the sandbox under gVisor).
fn usage() -> (Duration, u64) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: rusage is plain integers, for which all zeros are valid.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: getrusage writes only the struct it is given.
        if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } == 0 {
            let t = |v: libc::timeval| {
                Duration::from_secs(v.tv_sec as u64) + Duration::from_micros(v.tv_usec as u64)
            };
            return (t(u.ru_utime) + t(u.ru_stime), u.ru_minflt as u64);
        }
    }
    (Duration::ZERO, 0)
}

/// What a run cost: median wall time, median CPU time and median minor
/// page faults of `reps` runs.
struct Cost {
    wall: Duration,
    cpu: Duration,
    faults: u64,
}

/// The cost of `reps` runs of `f`, and its last result.
fn median<R>(reps: usize, mut f: impl FnMut() -> R) -> (Cost, R) {
    let (mut times, mut cpu, mut faults) = (Vec::new(), Vec::new(), Vec::new());
    let mut last = None;
    for _ in 0..reps.max(1) {
        let (s, (c, m)) = (Instant::now(), usage());
        last = Some(f());
        times.push(s.elapsed());
        let (c2, m2) = usage();
        cpu.push(c2.saturating_sub(c));
        faults.push(m2.saturating_sub(m));
    }
    times.sort();
    cpu.sort();
    faults.sort();
    let mid = times.len() / 2;
    let cost = Cost {
        wall: times[mid],
        cpu: cpu[mid],
        faults: faults[mid],
    };
    (cost, last.unwrap())
}

fn main() {
    let n_docs: usize = env("DOCS", "20000").parse().unwrap();
    let reps: usize = env("REPS", "3").parse().unwrap();
    let table_size: TableSize = env("TABLE", "64MiB").parse().unwrap();
    let align = env("ALIGN", "on") == "on";
    let workers: Vec<usize> = env("WORKERS", "1,2,4,8,16")
        .split(',')
        .map(|w| w.trim().parse().unwrap())
        .collect();
    let params = Params {
        table_size,
        align,
        ..Params::default()
    };
    let docs = Arc::new(corpus(n_docs));
    let lookups: usize = docs.iter().map(Vec::len).sum();
    let prepared: Vec<Vec<Unit>> = docs.iter().map(|d| units(d)).collect();

    let (seq, (want, regime)) = median(reps, || {
        let mut pass = OriginPass::new(params).unwrap();
        let mut origins = Versions(docs.clone());
        let labels: Vec<Vec<u32>> = prepared
            .iter()
            .enumerate()
            .map(|(d, u)| pass.process(d as u32, u, &mut origins).to_vec())
            .collect();
        (labels, pass.table().regime())
    });
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "Origin pass, {n_docs} generated documents, {lookups} lookups, {table_size} bottom-k \
         table ({regime:?}), align {}; {cores} cores; median of {reps}.\n",
        if align { "on" } else { "off" }
    );
    println!("| pass | time | M lookups/s | vs 1 worker | CPU (all threads) | minor faults |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: |");
    let rate = |t: Duration| lookups as f64 / t.as_secs_f64() / 1e6;
    println!(
        "| sequential | {:.2} s | {:.1} | | {:.2} s | {} |",
        seq.wall.as_secs_f64(),
        rate(seq.wall),
        seq.cpu.as_secs_f64(),
        seq.faults
    );
    let mut one = None;
    for &w in &workers {
        let (cost, got) = median(reps, || {
            let origins = Arc::new(Mutex::new(Versions(docs.clone())));
            let table = Table::new(params.table_params()).unwrap();
            let mut pass = SplitPass::new(params, table, Options::new(w), origins).unwrap();
            let mut got: Vec<Vec<u32>> = Vec::with_capacity(n_docs);
            let mut done = |l: lineage_split::Labelled<'_, ()>| {
                got.push(l.labels.to_vec());
                Ok::<(), SplitError>(())
            };
            for (d, u) in prepared.iter().enumerate() {
                pass.push(d as u32, u.clone(), (), &mut done).unwrap();
            }
            pass.finish(&mut done).unwrap();
            got
        });
        assert!(
            got == want,
            "{w} workers: labels differ from the sequential pass"
        );
        let base = *one.get_or_insert(cost.wall);
        println!(
            "| {w} worker{} | {:.2} s | {:.1} | {:.2}x | {:.2} s | {} |",
            if w == 1 { "" } else { "s" },
            cost.wall.as_secs_f64(),
            rate(cost.wall),
            base.as_secs_f64() / cost.wall.as_secs_f64(),
            cost.cpu.as_secs_f64(),
            cost.faults
        );
    }
}
