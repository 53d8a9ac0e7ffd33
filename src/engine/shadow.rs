//! Shadow runs: the whole history replayed with other settings from the
//! cached fingerprints (never the files), each run scored against the exact
//! result (CONTRACT §4), in a thread of its own with progress and a cancel
//! flag. The live state is not touched.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::{ShadowResult, ShadowUpdate};
use crate::index::schema::Db;
use crate::origin::history::Keyed;
use crate::origin::metrics::Score;
use crate::origin::{OriginPass, Outcome, Params, Selector, Unit};

/// Progress is reported at most this often.
const PROGRESS_EVERY: Duration = Duration::from_millis(50);

/// A shadow run's job: versions `0..versions` of the database.
pub struct Job {
    pub generation: u64,
    pub runs: Vec<Params>,
    pub versions: u32,
    pub cancel: Arc<AtomicBool>,
}

/// Run `job`, calling `report` with progress and the results; returns early
/// (without a final report) when cancelled.
pub fn run(db: &Db, job: &Job, mut report: impl FnMut(ShadowUpdate)) {
    let total = job.runs.len() as u64 * u64::from(job.versions);
    let mut update = ShadowUpdate {
        generation: job.generation,
        done: 0,
        total,
        results: Vec::new(),
        finished: false,
        error: None,
    };
    match replay_all(db, job, &mut update, &mut report) {
        Ok(true) => {}
        Ok(false) => return,
        Err(e) => update.error = Some(e),
    }
    update.finished = true;
    report(update);
}

/// Whether it ran to the end (false: cancelled).
fn replay_all(
    db: &Db,
    job: &Job,
    update: &mut ShadowUpdate,
    report: &mut impl FnMut(ShadowUpdate),
) -> Result<bool, String> {
    let cancelled = || job.cancel.load(Ordering::Relaxed);
    let fps = db.fingerprints(0, job.versions)?;
    if cancelled() {
        return Ok(false);
    }
    let mut keyed: HashMap<usize, (Keyed, Vec<Outcome>)> = HashMap::new();
    let mut selected: HashMap<(usize, Selector), Vec<Vec<Unit>>> = HashMap::new();
    let mut last = Instant::now();
    for &params in &job.runs {
        let started = Instant::now();
        params
            .table_params()
            .validate()
            .map_err(|e| e.to_string())?;
        let (keys, exact) = keyed.entry(params.k).or_insert_with(|| {
            let keys = Keyed::new(fps.clone(), params.k);
            let exact = keys.exact();
            (keys, exact)
        });
        let units = selected
            .entry((params.k, params.selector))
            .or_insert_with(|| keys.select(params.selector));
        let mut pass = OriginPass::new(params).map_err(|e| e.to_string())?;
        let mut score = Score::default();
        let mut counts = Vec::new();
        for (d, doc_units) in units.iter().enumerate() {
            if cancelled() {
                return Ok(false);
            }
            // Scored from units and labels, as `sweep` does: no Outcome per document.
            let labels = pass.process(d as u32, doc_units);
            let shingles = keys.shingle_keys[d].len() as u32;
            score.add_labels(&exact[d], shingles, doc_units, labels, &mut counts);
            update.done += 1;
            if last.elapsed() >= PROGRESS_EVERY {
                last = Instant::now();
                report(update.clone());
            }
        }
        let t = pass.table();
        let c = t.counters();
        let shingles = keys.total_shingles();
        update.results.push(ShadowResult {
            params,
            ssr: score.ssr(),
            dominant_origin: score.dominant_origin(),
            token_freshness: score.token_freshness(),
            overall: score.overall(),
            table_fraction: t
                .capacity()
                .filter(|_| shingles > 0)
                .map(|cap| 100.0 * cap as f64 / shingles as f64),
            hits: c.hits,
            evictions: c.evictions,
            seconds: started.elapsed().as_secs_f64(),
        });
    }
    Ok(true)
}
