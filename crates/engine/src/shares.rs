//! What each live page changed against its basis, for the Documents pane's
//! "changed" and "removed" columns: `lineage diff`'s counts, from the
//! versions' cached token fingerprints (no text is read, no file opened), in
//! a thread of its own. A pair of versions never changes, so its counts are
//! kept: after an edit only the pairs it made are diffed again.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::changed::{changes, counts};
use super::predecessor::Lineage;
use super::query::Row;
use lineage_config::{Basis, PredecessorRule};
use lineage_source::Order;
use lineage_store::index::{History, IndexError, PairCounts};

/// Progress is reported at most this often: each report of a run over
/// 100,000 pages sorts the Documents again (tens of ms).
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// What a version changed against its base, in tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageChange {
    /// The base's version id; None where the page has none (all of it new).
    pub base: Option<u32>,
    /// Tokens kept, removed, new and moved (as [`super::DiffView::counts`]);
    /// None where a version's fingerprints are no longer kept.
    pub counts: Option<[u32; 4]>,
}

impl PageChange {
    /// Percent of the page's tokens new against its base (moved ones are
    /// not new); None where unknown.
    pub fn changed_percent(&self) -> Option<f64> {
        let [kept, _, new, moved] = self.counts?;
        Some(percent(new, kept + new + moved))
    }

    /// Percent of the base's tokens no longer in the page; None where
    /// unknown or the page has no base.
    pub fn removed_percent(&self) -> Option<f64> {
        let [kept, removed, _, moved] = self.counts?;
        self.base.map(|_| percent(removed, kept + removed + moved))
    }
}

fn percent(part: u32, whole: u32) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * f64::from(part) / f64::from(whole)
    }
}

/// The change of version `id` against `base`, from their fingerprints.
pub fn change(
    fingerprints: impl Fn(u32) -> Result<Vec<u64>, IndexError>,
    id: u32,
    base: Option<u32>,
    tokens: impl Fn(u32) -> u32,
) -> Result<PageChange, IndexError> {
    let read = |v: u32| -> Result<Option<Vec<u64>>, IndexError> {
        let fps = fingerprints(v)?;
        // A forgotten version (history_budget) has none to give.
        Ok((fps.len() == tokens(v) as usize).then_some(fps))
    };
    let new = read(id)?;
    let old = match base {
        Some(b) => read(b)?,
        None => Some(Vec::new()),
    };
    let counts = match (old, new) {
        (Some(old), Some(new)) => Some(counts(&changes(&old, &new))),
        _ => None,
    };
    Ok(PageChange { base, counts })
}

/// The live pages' changes under one basis, as the job finds them.
#[derive(Clone, Debug, PartialEq)]
pub struct SharesUpdate {
    /// The basis they are measured against.
    pub basis: Basis,
    /// Pages whose change is new since the last update of this basis, by
    /// version id.
    pub changes: Vec<(u32, PageChange)>,
    /// Pages diffed so far in this run, and how many it diffs (those whose
    /// pair was not diffed before).
    pub done: usize,
    /// See `done`.
    pub total: usize,
    /// The run is over: every live page's change has been sent.
    pub finished: bool,
    /// Why the run stopped short (the index could not be read).
    pub error: Option<String>,
}

impl SharesUpdate {
    /// A run under `basis` that stopped for `why`.
    pub fn failed(basis: Basis, why: String) -> SharesUpdate {
        SharesUpdate {
            basis,
            changes: Vec::new(),
            done: 0,
            total: 0,
            finished: true,
            error: Some(why),
        }
    }
}

/// What the runs keep between them.
#[derive(Default)]
pub(crate) struct Kept {
    /// Each (version, base) pair's change.
    pairs: HashMap<(u32, Option<u32>), PageChange>,
    /// The change last sent for each version, and under which basis.
    sent: HashMap<u32, PageChange>,
    basis: Option<Basis>,
}

impl Kept {
    /// The pairs an index kept (`Index::changes`).
    pub(crate) fn of(pairs: Vec<PairCounts>) -> Kept {
        let pairs = (pairs.into_iter())
            .map(|(id, base, counts)| {
                let counts = Some(counts);
                ((id, base), PageChange { base, counts })
            })
            .collect();
        Kept {
            pairs,
            ..Kept::default()
        }
    }
}

/// A live page to measure: its version id, its base, the tokens of each.
type Page = (u32, Option<u32>, [u32; 2]);

/// One run: every live page, its base found in the run's own thread (the
/// bases of 100,000 pages take 0.3 s, which the engine's thread, between an
/// edit and the next, has not to give).
pub(crate) struct Job {
    pub basis: Basis,
    /// The live pages' version ids.
    pub live: Vec<u32>,
    /// The config's `[[predecessor]]` rules and `release_tags`, and the
    /// index's order.
    pub rules: Vec<PredecessorRule>,
    pub release_tags: String,
    pub order: Option<Order>,
    pub kept: Arc<Mutex<Kept>>,
    pub cancel: Arc<AtomicBool>,
}

impl Job {
    /// (version id, base, the tokens of each) of every live page, from the
    /// versions as the index has them.
    fn pages(&self, history: &History) -> Result<Vec<Page>, IndexError> {
        let rows: Vec<Row> = history.history()?.into_iter().map(Row::from).collect();
        let lineage = Lineage::of(&rows, &self.rules, history.renames()?, self.order)
            .with_releases(history.releases()?, &history.stamps()?)
            .tags(&self.release_tags);
        let tokens = |v: u32| rows[v as usize].tokens;
        Ok((self.live.iter())
            .filter(|&&id| (id as usize) < rows.len())
            .map(|&id| {
                let base = lineage.base(id, self.basis).map(|b| b.id);
                (id, base, [tokens(id), base.map_or(0, tokens)])
            })
            .collect())
    }
}

/// Diff `job`'s pages not diffed before, calling `report` with what is new
/// at most every [`PROGRESS_EVERY`] and once at the end, and `keep` with
/// the pairs diffed since its last call (those measured, to keep in the
/// index); returns early, without the last report, when cancelled or the
/// index cannot be read.
pub(crate) fn run(
    history: &History,
    job: &Job,
    mut report: impl FnMut(SharesUpdate),
    mut keep: impl FnMut(Vec<PairCounts>),
) -> Result<(), IndexError> {
    let lock = || job.kept.lock().unwrap_or_else(|e| e.into_inner());
    {
        let mut k = lock();
        if k.basis != Some(job.basis) {
            k.sent.clear();
            k.basis = Some(job.basis);
        }
    }
    let pages = job.pages(history)?;
    let todo: Vec<_> = {
        let k = lock();
        (pages.iter())
            .filter(|(id, base, _)| !k.pairs.contains_key(&(*id, *base)))
            .copied()
            .collect()
    };
    let mut update = SharesUpdate {
        basis: job.basis,
        changes: Vec::new(),
        done: 0,
        total: todo.len(),
        finished: false,
        error: None,
    };
    let mut last = Instant::now();
    let mut measured = Vec::new();
    let one = |v: u32| Ok(history.fingerprints(v, v + 1)?.pop().unwrap_or_default());
    for (id, base, [tokens, base_tokens]) in todo {
        if job.cancel.load(Ordering::Relaxed) {
            return Ok(());
        }
        let of = |v: u32| if v == id { tokens } else { base_tokens };
        let c = change(one, id, base, of)?;
        let mut k = lock();
        k.pairs.insert((id, base), c);
        k.sent.insert(id, c);
        update.changes.push((id, c));
        drop(k);
        if let Some(counts) = c.counts {
            measured.push((id, base, counts));
        }
        update.done += 1;
        if last.elapsed() >= PROGRESS_EVERY {
            last = Instant::now();
            keep(std::mem::take(&mut measured));
            report(SharesUpdate {
                changes: std::mem::take(&mut update.changes),
                ..update.clone()
            });
        }
    }
    {
        // The pages whose pair was diffed before, under another base or
        // for another run: what was sent for them may not be it.
        let mut k = lock();
        for &(id, base, _) in &pages {
            let c = k.pairs[&(id, base)];
            if k.sent.get(&id) != Some(&c) {
                k.sent.insert(id, c);
                update.changes.push((id, c));
            }
        }
    }
    update.finished = true;
    keep(measured);
    report(update);
    Ok(())
}
