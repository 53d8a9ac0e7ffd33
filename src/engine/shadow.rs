//! Shadow runs: the whole history replayed with other settings from the
//! index's cached fingerprints (never the files), in a thread of its own with
//! progress and a cancel flag; the live state is not touched. The replays are
//! `origin::sweep`'s, the same parallel schedule as `lineage sweep`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{ShadowResult, ShadowUpdate};
use crate::index::History;
use crate::origin::Params;
use crate::origin::history::Keyed;
use crate::origin::sweep::{Control, Plan, Scored};

/// Progress is reported at most this often.
const PROGRESS_EVERY: Duration = Duration::from_millis(50);

/// A shadow run's job: versions `0..versions` of the index.
pub(crate) struct Job {
    pub generation: u64,
    pub runs: Vec<Params>,
    pub versions: u32,
    pub cancel: Arc<AtomicBool>,
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
    let outcome = replay_all(history, job, &mut update, &mut report);
    // The replays' tables and keys are freed by now; hand the pages back.
    give_back_memory();
    match outcome {
        Ok(true) => {}
        Ok(false) => return,
        Err(e) => update.error = Some(e),
    }
    update.finished = true;
    report(update);
}

/// Return freed heap pages to the OS. glibc keeps them in its arenas for
/// reuse, so without this a watcher that ran one sweep stays at the sweep's
/// size for the rest of its life.
fn give_back_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory; any thread may call it.
    unsafe {
        libc::malloc_trim(0);
    }
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
    let fps = history
        .fingerprints(job.versions)
        .map_err(|e| e.to_string())?;
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
        let keyed = Keyed::new(fps.clone(), k);
        let plan = Plan::new(&keyed, &runs).map_err(|e| e.to_string())?;
        let later = (job.runs.len() - which.len()) as u64 * u64::from(job.versions);
        update.total = before + plan.documents() + later;
        let shingles = keyed.total_shingles();
        let done = AtomicU64::new(0);
        let scored: Mutex<Vec<(usize, Scored)>> = Mutex::new(Vec::new());
        let keep = |i: usize, s: &Scored| {
            if let Ok(mut v) = scored.lock() {
                v.push((which[i], *s));
            }
        };
        let ctl = Control {
            cancel: Some(&job.cancel),
            done: Some(&done),
            scored: Some(&keep),
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
