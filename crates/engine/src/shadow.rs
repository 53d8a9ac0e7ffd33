//! Shadow runs: the whole history replayed with other settings from the
//! index's cached fingerprints (never the files), in a thread of its own with
//! progress and a cancel flag; the live state is not touched. The replays are
//! `origin::sweep`'s, the same parallel schedule as `lineage sweep`, its runs
//! split over the threads they leave idle as there (`lineage_split`). The
//! fingerprints are read a batch of versions at a time and dropped once
//! selected: what stays is what the replays read.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{ShadowResult, ShadowUpdate};
use lineage_core::fingerprint::polynomial::Polynomial;
use lineage_origin::Params;
use lineage_origin::sweep::{self, Control, Plan, Scored, Selecting};
use lineage_split::SplitReplay;
use lineage_store::index::History;

/// Progress is reported at most this often.
const PROGRESS_EVERY: Duration = Duration::from_millis(50);

/// Versions whose fingerprints are read, keyed and selected at once (two
/// batches are in memory at most), as many as `lineage sweep` selects at
/// once; a few in unit tests, so that their small histories take several.
const BATCH_VERSIONS: u32 = if cfg!(test) {
    4
} else {
    sweep::BATCH_DOCUMENTS as u32
};

/// A shadow run's job: versions `0..versions` of the index.
pub(crate) struct Job {
    pub generation: u64,
    /// The index's polynomial, which its cached fingerprints were taken under.
    pub poly: Polynomial,
    pub runs: Vec<Params>,
    pub versions: u32,
    pub cancel: Arc<AtomicBool>,
    pub memory: super::Memory,
    /// Threads of the replays (`Config::pass_workers`; 1: sequential).
    pub workers: usize,
}

/// Run `job`, calling `report` with progress and the results; returns early
/// (without a final report) when cancelled.
pub fn run(history: &History, job: &Job, mut report: impl FnMut(ShadowUpdate)) {
    let mut update = ShadowUpdate {
        generation: job.generation,
        done: 0,
        total: job.runs.len() as u64 * u64::from(job.versions),
        results: Vec::new(),
        finished: false,
        error: None,
    };
    if let Some(before) = job.memory.before_sweep {
        before();
    }
    let outcome = replay_all(history, job, &mut update, &mut report);
    // The replays' tables and keys are freed by now.
    if let Some(after) = job.memory.after_sweep {
        after();
    }
    match outcome {
        Ok(true) => {}
        Ok(false) => return,
        Err(e) => update.error = Some(e),
    }
    update.finished = true;
    report(update);
}

/// Whether it ran to the end (false: cancelled). Runs are grouped by
/// shingle length k, one keyed history and one sweep per group.
fn replay_all(
    history: &History,
    job: &Job,
    update: &mut ShadowUpdate,
    report: &mut impl FnMut(ShadowUpdate),
) -> Result<bool, String> {
    let cancelled = || job.cancel.load(Ordering::Relaxed);
    sweep::validate(&job.runs).map_err(|e| e.to_string())?;
    let mut ks: Vec<usize> = job.runs.iter().map(|p| p.k).collect();
    ks.sort_unstable();
    ks.dedup();
    let mut results: Vec<Option<ShadowResult>> = vec![None; job.runs.len()];
    let mut before = 0;
    for k in ks {
        if cancelled() {
            return Ok(false);
        }
        let which: Vec<usize> = (0..job.runs.len())
            .filter(|&i| job.runs[i].k == k)
            .collect();
        let runs: Vec<Params> = which.iter().map(|&i| job.runs[i]).collect();
        let selecting = Selecting::new(&job.poly, k, runs.iter().map(|p| p.selector));
        let mut from = 0;
        let selected = selecting.batches(|| {
            if from == job.versions || cancelled() {
                return Ok(None);
            }
            let to = job.versions.min(from.saturating_add(BATCH_VERSIONS));
            let fps = history.fingerprints(from, to);
            from = to;
            fps.map(Some).map_err(|e| e.to_string())
        })?;
        if cancelled() {
            return Ok(false);
        }
        let shingles = selected.total_shingles();
        let plan = Plan::new(selected, &runs).map_err(|e| e.to_string())?;
        // Runs of the shingle lengths still to come (earlier ones are in
        // `before`).
        let later = job.runs.iter().filter(|p| p.k > k).count() as u64 * u64::from(job.versions);
        update.total = before + plan.documents() + later;
        let done = AtomicU64::new(0);
        let scored: Mutex<Vec<(usize, Scored)>> = Mutex::new(Vec::new());
        let keep = |i: usize, s: &Scored| {
            if let Ok(mut v) = scored.lock() {
                v.push((which[i], *s));
            }
        };
        let split = SplitReplay::new(job.workers);
        let ctl = Control {
            cancel: Some(&job.cancel),
            done: Some(&done),
            scored: Some(&keep),
            replayer: Some(&split),
        };
        let finished = std::thread::scope(|scope| {
            let (tx, rx) = mpsc::channel();
            scope.spawn(move || {
                let _ = tx.send(plan.run(&ctl).is_some());
            });
            loop {
                match rx.recv_timeout(PROGRESS_EVERY) {
                    Ok(finished) => break finished,
                    Err(RecvTimeoutError::Disconnected) => break false,
                    Err(RecvTimeoutError::Timeout) => {
                        if publish(&scored, &mut results, shingles, update, before, &done) {
                            report(update.clone());
                        }
                    }
                }
            }
        });
        if !finished || cancelled() {
            return Ok(false);
        }
        publish(&scored, &mut results, shingles, update, before, &done);
        before += done.load(Ordering::Relaxed);
    }
    Ok(true)
}

/// Move newly scored runs into `results` and the update (results so far in
/// the order asked); whether anything changed.
fn publish(
    scored: &Mutex<Vec<(usize, Scored)>>,
    results: &mut [Option<ShadowResult>],
    shingles: u64,
    update: &mut ShadowUpdate,
    before: u64,
    done: &AtomicU64,
) -> bool {
    let new: Vec<(usize, Scored)> = scored
        .lock()
        .map(|mut v| std::mem::take(&mut *v))
        .unwrap_or_default();
    let done = before + done.load(Ordering::Relaxed);
    let changed = !new.is_empty() || done != update.done;
    for (i, s) in new {
        results[i] = Some(result(&s, shingles));
    }
    update.done = done;
    update.results = results.iter().flatten().cloned().collect();
    changed
}

fn result(s: &Scored, shingles: u64) -> ShadowResult {
    ShadowResult {
        params: s.params,
        ssr: s.score.ssr(),
        dominant_origin: s.score.dominant_origin(),
        token_freshness: s.score.token_freshness(),
        overall: s.score.overall(),
        table_fraction: s
            .capacity
            .filter(|_| shingles > 0)
            .map(|cap| 100.0 * cap as f64 / shingles as f64),
        hits: s.counters.hits,
        evictions: s.counters.evictions,
        seconds: s.seconds,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::indexer::Indexer;
    use lineage_core::fingerprint::polynomial::standard;
    use lineage_origin::history::Keyed;
    use lineage_origin::metrics::Score;
    use lineage_origin::{Estimation, Eviction, Selector, TableSize};
    use lineage_source::{self as source, Filter, Order, WalkOptions};
    use lineage_store::index::{Quiet, Read};
    use lineage_testing::text;

    #[test]
    fn versions_read_in_batches_score_like_a_replay_of_the_whole_history() {
        let base = lineage_testing::TempDir::new("shadow");
        let (root, dir) = (base.0.join("root"), base.0.join("index"));
        std::fs::create_dir_all(&root).unwrap();
        // Eleven versions (three batches), later ones copying earlier ones.
        for i in 0..11u64 {
            let mut t = text(i, 200);
            if i >= 3 {
                t = format!("{} {}", text(i - 3, 150), text(100 + i, 60));
            }
            std::fs::write(root.join(format!("{i:02}.md")), t).unwrap();
        }
        let live = Params {
            table_size: TableSize::Bytes(48 << 10),
            ..Params::default()
        };
        let mut ix = Indexer::open(&root, &dir, live, standard(), &mut Quiet).unwrap();
        let walk =
            source::walk_with(&root, &Filter::default_patterns(), WalkOptions::default()).unwrap();
        ix.reconcile(walk, 1 << 20, Order::Path, &mut Quiet)
            .unwrap();
        let versions = ix.index().counts().versions as u32;
        assert_eq!(versions, 11);
        let small = Params {
            table_size: TableSize::Bytes(2048),
            bucket_entries: 8,
            eviction: Eviction::Cc,
            estimation: Estimation::Nb,
            selector: Selector::Every(4),
            ..live
        };
        // Two shingle lengths: the history is read once for each.
        let runs = vec![live, small, Params { k: 5, ..small }];
        let history = ix.index().history_reader().unwrap();
        let job = Job {
            generation: 1,
            poly: ix.index().polynomial().clone(),
            runs: runs.clone(),
            versions,
            cancel: Arc::new(AtomicBool::new(false)),
            memory: crate::Memory {
                before_sweep: Some(|| SEEN.lock().unwrap().push("before")),
                after_sweep: Some(|| SEEN.lock().unwrap().push("after")),
            },
            // More than the runs of either length: their bounded runs are
            // split, and must still give the sequential replay's figures.
            workers: 4,
        };
        static SEEN: Mutex<Vec<&str>> = Mutex::new(Vec::new());
        let mut last = None;
        run(&history, &job, |u| {
            let what = if u.finished { "results" } else { "progress" };
            SEEN.lock().unwrap().push(what);
            last = Some(u);
        });
        // The allocator is tuned before the replays (and any progress they
        // report), and given back to once, before the results.
        let seen = SEEN.lock().unwrap().clone();
        let (first, rest) = seen.split_first().unwrap();
        assert_eq!(*first, "before", "{seen:?}");
        assert!(
            rest.ends_with(&["after", "results"])
                && rest[..rest.len() - 2].iter().all(|&w| w == "progress"),
            "{seen:?}"
        );
        let done = last.unwrap();
        assert!(done.finished);
        assert_eq!(done.error, None);
        assert_eq!(done.done, done.total);
        let fps = history.fingerprints(0, versions).unwrap();
        for (got, &p) in done.results.iter().zip(&runs) {
            let keyed = Keyed::new(standard(), fps.clone(), p.k);
            let exact = keyed.exact();
            let units = keyed.select(p.selector);
            let mut score = Score::default();
            let stats = keyed
                .replay(&units, p, |o| score.add(&exact[o.id as usize], &o))
                .unwrap();
            let want = ShadowResult {
                seconds: got.seconds,
                hits: stats.counters.hits,
                evictions: stats.counters.evictions,
                ..result(
                    &Scored {
                        params: p,
                        score,
                        counters: stats.counters,
                        capacity: stats.capacity,
                        entry_bytes: stats.entry_bytes,
                        selected_keys: 0,
                        seconds: 0.0,
                    },
                    keyed.total_shingles(),
                )
            };
            assert_eq!(*got, want);
        }
        assert_eq!(done.results.len(), runs.len());
        assert!(done.results[1].evictions > 0, "the small table evicts");
        drop((history, ix));
    }
}
