//! `cargo bench --bench split`: the origin pass's throughput, sequential and
//! split by bucket range over 1, 2, 4, 8 and 16 workers (issue 40's target:
//! at least 8x from 1 to 16 workers on a 16-core machine), on a generated
//! collection (fresh runs, copies of earlier documents, whole duplicates,
//! repeats), each run checked against the sequential answer; and in the
//! same run the memory's limit for one lookup, a plain prefetched table
//! (`Plain`, a port of the anchor issue 54 measures against), so the ratio
//! holds as the machine changes. Prints Markdown for BENCHMARKS.md with the
//! machine's core count.
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

/// The memory's limit for one lookup, measured beside the pass: a port of
/// a plain prefetched open-addressing read-modify-write ("the first
/// document holding this key, else insert it") over a table of 8-byte
/// slots on huge pages, a slot the key's top 44 bits and a 20-bit document.
/// No buckets, eviction, estimation or alignment: an anchor to measure the
/// pass against as the machine changes, not a design.
struct Plain {
    slots: std::ptr::NonNull<u64>,
    len: usize,
    layout: std::alloc::Layout,
}

impl Plain {
    /// A table of `bytes` (a power of two), 2 MiB aligned, huge pages asked.
    fn new(bytes: usize) -> Plain {
        let layout = std::alloc::Layout::from_size_align(bytes, 2 << 20).unwrap();
        // SAFETY: the layout's size is not zero.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) } as *mut u64;
        let slots = std::ptr::NonNull::new(ptr).unwrap();
        #[cfg(target_os = "linux")]
        // SAFETY: advice on memory this process owns, whole pages.
        unsafe {
            libc::madvise(ptr.cast(), bytes, libc::MADV_HUGEPAGE);
        }
        Plain {
            slots,
            len: bytes / 8,
            layout,
        }
    }

    fn slots(&mut self) -> &mut [u64] {
        // SAFETY: `len` u64s were allocated, zeroed, and are only lent here.
        unsafe { std::slice::from_raw_parts_mut(self.slots.as_ptr(), self.len) }
    }

    /// Each of `keys` looked up in order (document `docs[i]`), inserted
    /// where absent, `first[i]` the first document that held it; prefetch
    /// `ahead` keys ahead (0: none). The table is emptied first.
    fn pass(&mut self, keys: &[u64], docs: &[u32], first: &mut [u32], ahead: usize) -> Duration {
        const DOC: u64 = 0xF_FFFF;
        let t = self.slots();
        t.fill(0);
        let mask = t.len() as u64 - 1;
        let start = Instant::now();
        for (i, &k) in keys.iter().enumerate() {
            if ahead > 0
                && let Some(&next) = keys.get(i + ahead)
            {
                prefetch(&t[(next & mask) as usize]);
            }
            let mut h = k & mask;
            loop {
                let v = t[h as usize];
                if v == 0 {
                    t[h as usize] = (k & !DOC) | u64::from(docs[i]);
                    first[i] = docs[i];
                    break;
                }
                if v & !DOC == k & !DOC {
                    first[i] = (v & DOC) as u32;
                    break;
                }
                h = (h + 1) & mask;
            }
        }
        start.elapsed()
    }
}

impl Drop for Plain {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.slots.as_ptr().cast(), self.layout) }
    }
}

/// Ask for the cache line of `at`, to write.
fn prefetch(at: &u64) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; the address is a live reference.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_ET0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_ET0>((at as *const u64).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

/// rmw.c's mix (MurmurHash3's finalizer).
fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

/// The plain table's median rate over `keys` (M lookups/s), with and
/// without prefetching 16 keys ahead, `reps` runs each alternated, in a
/// 64 MiB table; and the sum of its answers (the same with and without).
fn plain_rates(keys: &[u64], docs: &[u32], reps: usize) -> (f64, f64) {
    let mut table = Plain::new(64 << 20);
    let mut first = vec![0u32; keys.len()];
    let (mut with, mut without) = (Vec::new(), Vec::new());
    let mut sums = Vec::new();
    for _ in 0..reps.max(1) {
        with.push(table.pass(keys, docs, &mut first, 16));
        sums.push(first.iter().map(|&d| u64::from(d)).sum::<u64>());
        without.push(table.pass(keys, docs, &mut first, 0));
        sums.push(first.iter().map(|&d| u64::from(d)).sum::<u64>());
    }
    assert!(
        sums.windows(2).all(|w| w[0] == w[1]),
        "the prefetch changes no answer"
    );
    let rate = |mut v: Vec<Duration>| {
        v.sort();
        keys.len() as f64 / v[v.len() / 2].as_secs_f64() / 1e6
    };
    (rate(with), rate(without))
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
    // The anchor, in the same run: rmw.c's 7 M lookups of 3 M distinct
    // keys, then the pass's own lookups in order.
    let anchor: Vec<u64> = (0..7_000_000u64).map(|i| mix(i % 3_000_000 + 1)).collect();
    let anchor_docs: Vec<u32> = (0..7_000_000u32).map(|i| i / 2000).collect();
    let (fetched, plain) = plain_rates(&anchor, &anchor_docs, reps);
    let (keys, key_docs): (Vec<u64>, Vec<u32>) = (docs.iter().enumerate())
        .flat_map(|(d, k)| k.iter().map(move |&k| (k, d as u32)))
        .unzip();
    let (own_fetched, own_plain) = plain_rates(&keys, &key_docs, reps);
    println!(
        "| plain table, prefetch 16 ahead (rmw.c's 7 M lookups, 3 M distinct, 64 MiB) | | {fetched:.1} | | | |"
    );
    println!("| plain table, no prefetch | | {plain:.1} | | | |");
    println!(
        "| plain table over the pass's lookups, prefetch 16 ahead | | {own_fetched:.1} | | | |"
    );
    println!("| plain table over the pass's lookups, no prefetch | | {own_plain:.1} | | | |");
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
    println!(
        "\nThe sequential pass runs at {:.2}x the plain table's rate over the same lookups, \
         {:.2}x its rate over rmw.c's (prefetched).",
        rate(seq.wall) / own_fetched,
        rate(seq.wall) / fetched
    );
}
