//! Sweeps: many settings replayed over one keyed history, each run scored
//! against the exact result (docs/formats.md §4). The one implementation
//! behind `lineage sweep` and the Tune pane's shadow runs.
//!
//! A history comes in batches of documents: each batch is keyed and selected
//! in parallel (once per selector), then goes through the exact pass, which is
//! sequential, beside the selection of the next batch. What stays is what the
//! replays read: each selector's units, the exact result and its token counts;
//! a document's token fingerprints and shingle keys live only while its batch
//! is selected (docs/reference.md, "Memory"). Runs are then replayed in parallel, longest
//! first, and a run whose table never evicts is replayed once for all runs it
//! equals. Each replay is the sequential pass's unless the caller gives a
//! [`Replayer`] (lineage-split's splits a run by bucket range).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rayon::prelude::*;

use super::Estimation;
use super::align::UnitKeys;
use super::exact::FirstSeen;
use super::metrics::Score;
use super::outcome::Outcome;
use super::pass::{OriginPass, Params};
use super::select::{DocKeys, Selector, Unit};
use super::table::{Counters, DistinctKeys, Eviction, TableError};
use lineage_core::fingerprint::ShingleRoller;
use lineage_core::fingerprint::polynomial::Polynomial;

/// One run's figures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scored {
    /// The run's settings.
    pub params: Params,
    /// Its quality measures against the exact result.
    pub score: Score,
    /// Its table's totals.
    pub counters: Counters,
    /// Table entries (None when unbounded).
    pub capacity: Option<u64>,
    /// Bytes per table entry.
    pub entry_bytes: u64,
    /// Distinct keys the run's selector picks over the whole history.
    pub selected_keys: u64,
    /// Wall time of the replay that gave these figures (a run that equals an
    /// earlier one shares its time).
    pub seconds: f64,
}

/// What a sweep returns: the exact result and the runs in the order asked.
pub struct Sweep {
    /// Every document's exact outcome, in processing order.
    pub exact: Vec<Outcome>,
    /// Each run's figures, in the order asked.
    pub runs: Vec<Scored>,
}

/// Called, from any thread, with a run's index in the runs asked for and its
/// figures.
pub(crate) type OnScored<'a> = &'a (dyn Fn(usize, &Scored) + Sync);

/// How a caller follows and stops a sweep; every part is optional.
#[derive(Default)]
pub struct Control<'a> {
    /// Set to stop: the sweep returns `None` within one document's replay.
    pub cancel: Option<&'a AtomicBool>,
    /// Documents replayed so far (out of [`Plan::documents`]).
    pub done: Option<&'a AtomicU64>,
    /// Called as each run is scored.
    pub scored: Option<OnScored<'a>>,
    /// Replays each run (`None`: [`Sequential`]).
    pub replayer: Option<&'a dyn Replayer>,
}

/// One run to replay, as a [`Replayer`] gets it.
pub struct Cell<'a> {
    /// The run's settings (its table validated).
    pub params: Params,
    /// Its selector's units over the whole history, document `d`'s at `[d]`.
    pub units: &'a Arc<[Vec<Unit>]>,
    /// Runs the sweep replays, at once as threads allow (this one among them).
    pub cells: usize,
}

/// Called with each document's id, units and labels, in document order;
/// `false`: stop.
pub type EachLabelled<'a> = &'a mut dyn FnMut(u32, &[Unit], &[u32]) -> bool;

/// How a sweep replays one run: the labels each document gets, as
/// `OriginPass::process` gives them, and the table's counters at the end
/// (those of the sequential pass). Scoring stays with the sweep, so every
/// replayer scores alike.
pub trait Replayer: Sync {
    /// Replay `cell`, handing each document's labels to `each` in order;
    /// `None` when `each` stopped it (or the replay failed).
    fn replay(&self, cell: &Cell<'_>, each: EachLabelled<'_>) -> Option<Counters>;
}

/// The sequential pass, on the calling thread: the default.
pub struct Sequential;

impl Replayer for Sequential {
    fn replay(&self, cell: &Cell<'_>, each: EachLabelled<'_>) -> Option<Counters> {
        // Validated in `Plan::new`.
        let mut pass = OriginPass::new(cell.params).ok()?;
        let all: &[Vec<Unit>] = cell.units;
        let mut origins = UnitKeys::new(all);
        for (d, units) in all.iter().enumerate() {
            let labels = pass.process(d as u32, units, &mut origins);
            if !each(d as u32, units, labels) {
                return None;
            }
        }
        Some(pass.table().counters())
    }
}

impl Control<'_> {
    fn cancelled(&self) -> bool {
        self.cancel.is_some_and(|c| c.load(Ordering::Relaxed))
    }
}

/// Documents a sweep keys and selects at once: enough for both cores, and
/// two batches' fingerprints, hashes and keys (24 bytes a token) stay small
/// beside the selections.
pub const BATCH_DOCUMENTS: usize = 64;

/// What a sweep selects with: the shingle length and its runs' selectors.
pub struct Selecting {
    k: usize,
    roller: ShingleRoller,
    selectors: Vec<Selector>,
}

/// A document keyed and selected, waiting for the exact pass.
pub struct SelectedDoc {
    tokens: u32,
    shingle_keys: Vec<u64>,
    /// Each selector's units, in [`Selecting`]'s order.
    units: Vec<Vec<Unit>>,
}

impl Selecting {
    /// Shingle length `k` and the distinct `selectors`, in the order given.
    pub fn new(
        poly: &Polynomial,
        k: usize,
        selectors: impl IntoIterator<Item = Selector>,
    ) -> Selecting {
        let mut distinct: Vec<Selector> = Vec::new();
        for s in selectors {
            if !distinct.contains(&s) {
                distinct.push(s);
            }
        }
        Selecting {
            k,
            roller: ShingleRoller::new(poly, k),
            selectors: distinct,
        }
    }

    /// One document's shingle keys and units: they depend on it alone, so
    /// callers select the documents of a batch in parallel.
    pub fn select(&self, fps: &[u64]) -> SelectedDoc {
        let (hashes, keys) = super::prepare::keys(&self.roller, fps);
        let doc = DocKeys {
            token_fps: fps,
            token_hashes: &hashes,
            shingle_keys: &keys,
            k: self.k,
            mix: self.roller.mix(),
        };
        let units = self
            .selectors
            .iter()
            .map(|s| {
                let mut out = Vec::new();
                s.select(&doc, &mut out);
                // Held to the sweep's end: no spare capacity.
                out.shrink_to_fit();
                out
            })
            .collect();
        SelectedDoc {
            tokens: fps.len() as u32,
            shingle_keys: keys,
            units,
        }
    }

    /// An empty history to push selected documents into.
    pub fn start(&self) -> Selected {
        Selected {
            k: self.k,
            selectors: self.selectors.clone(),
            first: FirstSeen::default(),
            exact: Vec::new(),
            units: vec![Vec::new(); self.selectors.len()],
            shingles: 0,
        }
    }

    /// Select the documents `next` gives a batch at a time (their token
    /// fingerprints, in processing order; `None` at the end): a batch is
    /// selected in parallel while the one before goes through the exact pass.
    pub fn batches<E>(
        &self,
        mut next: impl FnMut() -> Result<Option<Vec<Vec<u64>>>, E>,
    ) -> Result<Selected, E> {
        let select = |fps: Vec<Vec<u64>>| -> Vec<SelectedDoc> {
            fps.par_iter().map(|f| self.select(f)).collect()
        };
        let mut selected = self.start();
        let mut ready = match next()? {
            Some(fps) => select(fps),
            None => return Ok(selected),
        };
        while let Some(fps) = next()? {
            let batch = std::mem::take(&mut ready);
            ready = rayon::join(|| selected.push(batch), || select(fps)).1;
        }
        selected.push(ready);
        Ok(selected)
    }
}

/// A history as the replays need it, built a batch of documents at a time
/// in processing order: the exact result and each selector's units.
pub struct Selected {
    k: usize,
    selectors: Vec<Selector>,
    /// The exact pass so far.
    first: FirstSeen,
    exact: Vec<Outcome>,
    /// Per selector, per document.
    units: Vec<Vec<Vec<Unit>>>,
    shingles: u64,
}

impl Selected {
    /// The next documents in processing order, through the exact pass; their
    /// keys are dropped, their units kept.
    pub fn push(&mut self, mut docs: Vec<SelectedDoc>) {
        let from = self.exact.len() as u32;
        let keys: Vec<Vec<u64>> = docs
            .iter_mut()
            .map(|d| std::mem::take(&mut d.shingle_keys))
            .collect();
        let mut labels: Vec<Vec<u32>> = keys.iter().map(|k| Vec::with_capacity(k.len())).collect();
        self.first.origins(from, &keys, &mut labels);
        drop(keys);
        let k = self.k as u32;
        let exact: Vec<Outcome> = docs
            .par_iter()
            .zip(&labels)
            .enumerate()
            .map(|(i, (doc, labels))| {
                let n = labels.len() as u32;
                let shingles = (0..n).map(|s| (s, s + k));
                Outcome::new(from + i as u32, doc.tokens, n, shingles, labels)
            })
            .collect();
        self.shingles += exact.iter().map(|o| u64::from(o.shingles)).sum::<u64>();
        self.exact.extend(exact);
        for doc in docs {
            for (all, units) in self.units.iter_mut().zip(doc.units) {
                all.push(units);
            }
        }
    }

    /// Shingles of all documents so far.
    pub fn total_shingles(&self) -> u64 {
        self.shingles
    }
}

/// One selector's units over the history and their distinct keys.
struct Selection {
    selector: Selector,
    /// Shared with a replayer's workers, which read earlier documents' keys.
    units: Arc<[Vec<Unit>]>,
    distinct: DistinctKeys,
}

/// Fail on the first run whose table cannot be built.
pub fn validate(runs: &[Params]) -> Result<(), TableError> {
    for p in runs {
        p.table_params().validate()?;
    }
    Ok(())
}

/// A sweep ready to replay: runs validated, exact result and selections made,
/// duplicates found, replays ordered.
pub struct Plan {
    runs: Vec<(usize, Params)>,
    exact: Vec<Outcome>,
    selections: Vec<Selection>,
    /// For a run that equals an earlier one, that run.
    same_as: Vec<Option<usize>>,
    /// The runs to replay, longest first.
    order: Vec<usize>,
}

impl Plan {
    /// Validate every run's table; every run must use `selected`'s k and one
    /// of its selectors.
    pub fn new(selected: Selected, runs: &[Params]) -> Result<Plan, TableError> {
        debug_assert!(runs.iter().all(|p| p.k == selected.k));
        debug_assert!(
            runs.iter()
                .all(|p| selected.selectors.contains(&p.selector))
        );
        validate(runs)?;
        let Selected {
            selectors,
            first,
            exact,
            units,
            ..
        } = selected;
        // The exact pass's table is not needed by the replays.
        drop(first);
        // One selector at a time: each sort is parallel, and the keys sorted
        // are transient memory as large as the units.
        let selections: Vec<Selection> = selectors
            .into_iter()
            .zip(units)
            .map(|(selector, units)| {
                let n = units.iter().map(Vec::len).sum();
                let distinct = DistinctKeys::of(units.iter().flatten().map(|u| u.key), n);
                Selection {
                    selector,
                    units: Arc::from(units),
                    distinct,
                }
            })
            .collect();
        let runs: Vec<(usize, Params)> = runs
            .iter()
            .map(|&p| {
                let si = selections.iter().position(|s| s.selector == p.selector);
                (si.unwrap_or_default(), p)
            })
            .collect();
        // A run whose table never evicts finds each key from its second
        // lookup on, whatever its size and eviction policy (so long as no two
        // keys share the table's stored fingerprint): such runs that also
        // agree on what estimation sees have the same figures.
        let never: Vec<bool> = runs
            .par_iter()
            .map(|&(si, p)| {
                let d = &selections[si].distinct;
                d.fingerprints_distinct && p.table_params().never_evicts(&d.keys)
            })
            .collect();
        let estimates = |p: &Params| (p.estimation, p.bridge_limit);
        let same_as: Vec<Option<usize>> = (0..runs.len())
            .map(|i| {
                let (si, p) = runs[i];
                never[i]
                    .then(|| {
                        (0..i).find(|&j| {
                            never[j] && runs[j].0 == si && estimates(&runs[j].1) == estimates(&p)
                        })
                    })
                    .flatten()
            })
            .collect();
        // Cost grows with the units replayed; Lucky's second pass over them
        // costs extra. Longest first, handed out one at a time, keeps every
        // thread busy to the end.
        let cost = |&(si, p): &(usize, Params)| {
            let units: usize = selections[si].units.iter().map(Vec::len).sum();
            units * if p.eviction == Eviction::Lucky { 4 } else { 3 }
        };
        let mut order: Vec<usize> = (0..runs.len()).filter(|&i| same_as[i].is_none()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(cost(&runs[i])));
        Ok(Plan {
            runs,
            exact,
            selections,
            same_as,
            order,
        })
    }

    /// Documents the replays go through: what [`Control::done`] counts to.
    pub fn documents(&self) -> u64 {
        self.order.len() as u64 * self.exact.len() as u64
    }

    /// Replay every run (in parallel) and score it; `None` when cancelled.
    pub fn run(self, ctl: &Control) -> Option<Sweep> {
        let results: Mutex<Vec<Option<Scored>>> = Mutex::new(vec![None; self.runs.len()]);
        let keep = |i: usize, s: Scored| {
            if let Some(f) = ctl.scored {
                f(i, &s);
            }
            if let Ok(mut r) = results.lock() {
                r[i] = Some(s);
            }
        };
        let finished = self.order.iter().par_bridge().try_for_each(|&i| {
            let s = self.replay(i, ctl)?;
            keep(i, s);
            for j in (0..self.runs.len()).filter(|&j| self.same_as[j] == Some(i)) {
                keep(
                    j,
                    Scored {
                        params: self.runs[j].1,
                        ..self.with_table(j, s)
                    },
                );
            }
            Some(())
        });
        finished?;
        let runs = results
            .into_inner()
            .ok()?
            .into_iter()
            .collect::<Option<Vec<_>>>()?;
        Some(Sweep {
            exact: self.exact,
            runs,
        })
    }

    /// Run `i`'s replay; `None` when cancelled.
    fn replay(&self, i: usize, ctl: &Control) -> Option<Scored> {
        let (si, p) = self.runs[i];
        let start = Instant::now();
        let mut score = Score::default();
        let mut counts = Vec::new();
        let cell = Cell {
            params: p,
            units: &self.selections[si].units,
            cells: self.order.len(),
        };
        let mut each = |d: u32, units: &[Unit], labels: &[u32]| {
            if ctl.cancelled() {
                return false;
            }
            let exact = &self.exact[d as usize];
            score.add_labels(exact, exact.shingles, units, labels, &mut counts);
            if let Some(done) = ctl.done {
                done.fetch_add(1, Ordering::Relaxed);
            }
            true
        };
        let counters = ctl
            .replayer
            .unwrap_or(&Sequential)
            .replay(&cell, &mut each)?;
        let s = Scored {
            params: p,
            score,
            counters,
            capacity: None,
            entry_bytes: 0,
            selected_keys: 0,
            seconds: start.elapsed().as_secs_f64(),
        };
        Some(self.with_table(i, s))
    }

    /// `s` with run `i`'s own table figures.
    fn with_table(&self, i: usize, s: Scored) -> Scored {
        let (si, p) = self.runs[i];
        let tp = p.table_params();
        Scored {
            capacity: tp.capacity(),
            entry_bytes: tp.layout.entry_bytes(),
            selected_keys: self.selections[si].distinct.keys.len() as u64,
            ..s
        }
    }
}

/// Every combination of the lists, `base` for the rest, in the order
/// selector, eviction, estimation, size (that of `lineage sweep`'s output).
pub fn combinations(
    base: Params,
    selectors: &[Selector],
    evictions: &[Eviction],
    estimations: &[Estimation],
    sizes: &[super::TableSize],
) -> Vec<Params> {
    let mut runs = Vec::new();
    for &selector in selectors {
        for &eviction in evictions {
            for &estimation in estimations {
                for &table_size in sizes {
                    runs.push(Params {
                        selector,
                        eviction,
                        estimation,
                        table_size,
                        ..base
                    });
                }
            }
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TableSize;
    use crate::history::Keyed;
    use lineage_core::fingerprint::polynomial::standard;

    /// Seven documents: the fourth copies most of the first, the sixth
    /// repeats the fourth, the fifth is shorter than a shingle.
    fn docs() -> Vec<Vec<u64>> {
        let doc = |seed: u64, n: usize| -> Vec<u64> {
            let mut x = seed | 1;
            (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x % 50
                })
                .collect()
        };
        let a = doc(1, 400);
        let mut c = a[..300].to_vec();
        c.extend(doc(3, 100));
        vec![
            a,
            doc(2, 400),
            doc(4, 250),
            c.clone(),
            doc(5, 5),
            c,
            doc(6, 120),
        ]
    }

    /// `docs` selected for `runs` in batches of `batch` documents.
    fn selected(docs: &[Vec<u64>], runs: &[Params], batch: usize) -> Selected {
        let selecting = Selecting::new(standard(), runs[0].k, runs.iter().map(|p| p.selector));
        let mut batches = docs.chunks(batch).map(<[_]>::to_vec);
        selecting.batches(|| Ok::<_, ()>(batches.next())).unwrap()
    }

    fn runs() -> Vec<Params> {
        combinations(
            Params::default(),
            &[Selector::NHs, Selector::All],
            &[Eviction::Lucky, Eviction::Lru],
            &[Estimation::Be, Estimation::Nb],
            &[
                TableSize::Bytes(1024),
                TableSize::Bytes(64 << 10),
                TableSize::Unbounded,
            ],
        )
    }

    /// A sweep over `docs` fed in batches of `batch` gives, for every run,
    /// what a replay over the whole history (`Keyed`) gives.
    fn equals_whole_history_replays(docs: &[Vec<u64>], runs: &[Params], batch: usize) {
        let sweep = Plan::new(selected(docs, runs, batch), runs)
            .unwrap()
            .run(&Control::default())
            .unwrap();
        let k = Keyed::new(standard(), docs.to_vec(), runs[0].k);
        let exact = k.exact();
        assert_eq!(sweep.exact, exact, "batch {batch}");
        assert_eq!(sweep.runs.len(), runs.len());
        for (r, &p) in sweep.runs.iter().zip(runs) {
            assert_eq!(r.params, p);
            let mut score = Score::default();
            let units = k.select(p.selector);
            let stats = k
                .replay(&units, p, |o| score.add(&exact[o.id as usize], &o))
                .unwrap();
            assert_eq!(r.score, score, "{p:?}, batch {batch}");
            // A shared replay's hits and lookups are the same; evictions 0.
            assert_eq!(r.counters.hits, stats.counters.hits, "{p:?}");
            assert_eq!(r.counters.lookups, stats.counters.lookups, "{p:?}");
            assert_eq!(r.capacity, stats.capacity, "{p:?}");
            let distinct = DistinctKeys::of(units.iter().flatten().map(|u| u.key), 0);
            assert_eq!(r.selected_keys, distinct.keys.len() as u64, "{p:?}");
        }
    }

    #[test]
    fn every_run_equals_its_own_replay_over_the_whole_history() {
        let docs = docs();
        for batch in [1, 2, 3, docs.len()] {
            equals_whole_history_replays(&docs, &runs(), batch);
        }
    }

    #[test]
    fn an_empty_history_gives_empty_results() {
        let runs = runs();
        let sweep = Plan::new(selected(&[], &runs, 2), &runs)
            .unwrap()
            .run(&Control::default())
            .unwrap();
        assert!(sweep.exact.is_empty());
        assert!(sweep.runs.iter().all(|r| r.score == Score::default()));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
        /// Documents over a small vocabulary (so they share shingles) and
        /// shorter than a shingle, fed in batches smaller than their count.
        #[test]
        fn batches_give_what_the_whole_history_gives(
            docs in proptest::collection::vec(
                proptest::collection::vec(0u64..12, 0..160), 2..10),
            batch in 1usize..4,
            k in 3usize..9,
        ) {
            let runs = combinations(
                Params { k, ..Params::default() },
                &[Selector::NHs, Selector::Hb(3), Selector::Every(4)],
                &[Eviction::Lucky, Eviction::BottomK],
                &[Estimation::Be],
                &[TableSize::Bytes(1024), TableSize::Unbounded],
            );
            equals_whole_history_replays(&docs, &runs, batch.min(docs.len() - 1));
        }
    }

    #[test]
    fn progress_counts_every_replayed_document_and_reports_every_run() {
        let docs = docs();
        let runs = runs();
        let plan = Plan::new(selected(&docs, &runs, 2), &runs).unwrap();
        let total = plan.documents();
        assert!(
            total < (runs.len() * docs.len()) as u64,
            "duplicates are replayed once"
        );
        let done = AtomicU64::new(0);
        let seen = Mutex::new(vec![0; runs.len()]);
        let scored = |i: usize, _: &Scored| seen.lock().unwrap()[i] += 1;
        let ctl = Control {
            done: Some(&done),
            scored: Some(&scored),
            ..Control::default()
        };
        plan.run(&ctl).unwrap();
        assert_eq!(done.load(Ordering::Relaxed), total);
        assert!(seen.into_inner().unwrap().iter().all(|&n| n == 1));
    }

    #[test]
    fn a_cancelled_sweep_returns_nothing() {
        let runs = runs();
        let cancel = AtomicBool::new(true);
        let ctl = Control {
            cancel: Some(&cancel),
            ..Control::default()
        };
        let plan = Plan::new(selected(&docs(), &runs, 2), &runs).unwrap();
        assert!(plan.run(&ctl).is_none());
    }

    #[test]
    fn an_impossible_table_is_refused() {
        let mut runs = runs();
        runs[3].bucket_entries = 0;
        assert!(validate(&runs).is_err());
        assert!(Plan::new(selected(&docs(), &runs, 2), &runs).is_err());
    }
}
