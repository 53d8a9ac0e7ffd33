//! Sweeps: many settings replayed over one keyed history, each run scored
//! against the exact result (docs/formats.md §4). The one implementation
//! behind `lineage sweep` and the Tune pane's shadow runs.
//!
//! The exact result is one sequential pass; meanwhile the other threads select,
//! once per selector. Runs are then replayed in parallel, longest first, and a
//! run whose table never evicts is replayed once for all runs it equals.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use rayon::prelude::*;

use super::Estimation;
use super::history::Keyed;
use super::metrics::Score;
use super::outcome::Outcome;
use super::pass::{OriginPass, Params};
use super::select::{Selector, Unit};
use super::table::{Counters, DistinctKeys, Eviction, TableError};

/// One run's figures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Scored {
    pub params: Params,
    pub score: Score,
    pub counters: Counters,
    /// Table entries (None when unbounded).
    pub capacity: Option<u64>,
    pub entry_bytes: u64,
    /// Distinct keys the run's selector picks over the whole history.
    pub selected_keys: u64,
    /// Wall time of the replay that gave these figures (a run that equals an
    /// earlier one shares its time).
    pub seconds: f64,
}

/// What a sweep returns: the exact result and the runs in the order asked.
pub(crate) struct Sweep {
    pub exact: Vec<Outcome>,
    pub runs: Vec<Scored>,
}

/// Called, from any thread, with a run's index in the runs asked for and its
/// figures.
pub(crate) type OnScored<'a> = &'a (dyn Fn(usize, &Scored) + Sync);

/// How a caller follows and stops a sweep; every part is optional.
#[derive(Default)]
pub(crate) struct Control<'a> {
    /// Set to stop: the sweep returns `None` within one document's replay.
    pub cancel: Option<&'a AtomicBool>,
    /// Documents replayed so far (out of [`Plan::documents`]).
    pub done: Option<&'a AtomicU64>,
    /// Called as each run is scored.
    pub scored: Option<OnScored<'a>>,
}

impl Control<'_> {
    fn cancelled(&self) -> bool {
        self.cancel.is_some_and(|c| c.load(Ordering::Relaxed))
    }
}

/// One selector's units over the history and their distinct keys.
struct Selection {
    selector: Selector,
    units: Vec<Vec<Unit>>,
    distinct: DistinctKeys,
}

/// A sweep ready to replay: runs validated, exact result and selections made,
/// duplicates found, replays ordered.
pub(crate) struct Plan<'k> {
    keyed: &'k Keyed,
    runs: Vec<(usize, Params)>,
    exact: Vec<Outcome>,
    selections: Vec<Selection>,
    /// For a run that equals an earlier one, that run.
    same_as: Vec<Option<usize>>,
    /// The runs to replay, longest first.
    order: Vec<usize>,
}

impl<'k> Plan<'k> {
    /// Validate every run's table (all runs must use `keyed.k`), compute the
    /// exact result and the selections.
    pub fn new(keyed: &'k Keyed, runs: &[Params]) -> Result<Plan<'k>, TableError> {
        debug_assert!(runs.iter().all(|p| p.k == keyed.k));
        for p in runs {
            p.table_params().validate()?;
        }
        let mut selectors: Vec<Selector> = Vec::new();
        for p in runs {
            if !selectors.contains(&p.selector) {
                selectors.push(p.selector);
            }
        }
        let (exact, selections) = rayon::join(
            || keyed.exact(),
            || {
                selectors
                    .par_iter()
                    .map(|&selector| {
                        let units = keyed.select(selector);
                        let n = units.iter().map(Vec::len).sum();
                        let distinct = DistinctKeys::of(units.iter().flatten().map(|u| u.key), n);
                        Selection {
                            selector,
                            units,
                            distinct,
                        }
                    })
                    .collect::<Vec<_>>()
            },
        );
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
            keyed,
            runs,
            exact,
            selections,
            same_as,
            order,
        })
    }

    /// Documents the replays go through: what [`Control::done`] counts to.
    pub(crate) fn documents(&self) -> u64 {
        self.order.len() as u64 * self.keyed.len() as u64
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
        // Validated in `new`.
        let mut pass = OriginPass::new(p).ok()?;
        let mut score = Score::default();
        let mut counts = Vec::new();
        for (d, units) in self.selections[si].units.iter().enumerate() {
            if ctl.cancelled() {
                return None;
            }
            let labels = pass.process(d as u32, units);
            let shingles = self.keyed.shingle_keys[d].len() as u32;
            score.add_labels(&self.exact[d], shingles, units, labels, &mut counts);
            if let Some(done) = ctl.done {
                done.fetch_add(1, Ordering::Relaxed);
            }
        }
        let s = Scored {
            params: p,
            score,
            counters: pass.table().counters(),
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
    use crate::origin::TableSize;

    fn keyed() -> Keyed {
        // Three documents, the third copying most of the first.
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
        Keyed::new(vec![a, doc(2, 400), c], 8)
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

    #[test]
    fn every_run_equals_its_own_replay() {
        let k = keyed();
        let runs = runs();
        let sweep = Plan::new(&k, &runs)
            .unwrap()
            .run(&Control::default())
            .unwrap();
        assert_eq!(sweep.runs.len(), runs.len());
        let exact = k.exact();
        for (r, &p) in sweep.runs.iter().zip(&runs) {
            assert_eq!(r.params, p);
            let mut score = Score::default();
            let units = k.select(p.selector);
            let stats = k
                .replay(&units, p, |o| score.add(&exact[o.id as usize], &o))
                .unwrap();
            assert_eq!(r.score, score, "{p:?}");
            // A shared replay's hits and lookups are the same; evictions 0.
            assert_eq!(r.counters.hits, stats.counters.hits, "{p:?}");
            assert_eq!(r.counters.lookups, stats.counters.lookups, "{p:?}");
            assert_eq!(r.capacity, stats.capacity, "{p:?}");
        }
    }

    #[test]
    fn progress_counts_every_replayed_document_and_reports_every_run() {
        let k = keyed();
        let runs = runs();
        let plan = Plan::new(&k, &runs).unwrap();
        let total = plan.documents();
        assert!(
            total < (runs.len() * k.len()) as u64,
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
        let k = keyed();
        let cancel = AtomicBool::new(true);
        let ctl = Control {
            cancel: Some(&cancel),
            ..Control::default()
        };
        assert!(Plan::new(&k, &runs()).unwrap().run(&ctl).is_none());
    }

    #[test]
    fn an_impossible_table_is_refused_before_any_work() {
        let k = keyed();
        let mut runs = runs();
        runs[3].bucket_entries = 0;
        assert!(Plan::new(&k, &runs).is_err());
    }
}
