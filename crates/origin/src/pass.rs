//! One pass of origin detection over documents in order: each document's
//! selected units are looked up in (and inserted into) the table, then the
//! estimation phase labels them, then lucky scores are updated.

use super::align::{Aligner, OriginKeys};
use super::estimate::{Estimation, Estimator, interpolate, interpolate_where, lucky_increments};
use super::select::{Selector, Unit};
use super::table::{Eviction, Hit, Layout, Slot, Table, TableError, TableParams, TableSize, Ties};

/// The settings of an estimated run (docs/formats.md §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Params {
    /// Tokens a shingle (8).
    pub k: usize,
    /// Which shingles are looked up: every one, or one of the paper's
    /// selectors.
    pub selector: Selector,
    /// The table's memory (`--table-size`).
    pub table_size: TableSize,
    /// Entries per bucket (`--bucket-entries`).
    pub bucket_entries: u16,
    /// Which entry leaves a full bucket (`--eviction`).
    pub eviction: Eviction,
    /// Which tied entry goes, CC and Lucky (`--eviction-ties`).
    pub ties: Ties,
    /// How unfound units' origins are guessed (`--estimation`).
    pub estimation: Estimation,
    /// Bridging's limit T: two anchors bridge only when fewer than this
    /// many selected units apart (`--bridge-limit`, docs/algorithms.md §4.2).
    pub bridge_limit: u32,
    /// Seed of Random eviction (`--seed`).
    pub seed: u64,
    /// Align where the table samples (`origin::align`; with
    /// `Selector::All` only, where units are the shingles).
    pub align: bool,
}

/// Every shingle into a bottom-k table, labelled as found (docs/algorithms.md
/// §3.1): while the table holds the collection's distinct shingles nothing is
/// evicted and the answer is the exact one; past that each bucket keeps a
/// consistent sample of them. The paper's selectors and evictions are one
/// option away.
impl Default for Params {
    fn default() -> Params {
        Params {
            k: 8,
            selector: Selector::All,
            table_size: TableSize::Bytes(64 << 20),
            bucket_entries: 64,
            eviction: Eviction::BottomK,
            ties: Ties::Oldest,
            estimation: Estimation::Nb,
            bridge_limit: 30,
            seed: 0,
            align: true,
        }
    }
}

impl Params {
    /// Whether these settings align (`origin::align`): alignment asked
    /// for, and the units are the shingles.
    pub fn aligns(&self) -> bool {
        self.align && self.selector == Selector::All
    }

    /// Whether a table that holds every key it was given gives the exact
    /// answer (docs/algorithms.md §3.1): every shingle selected and labelled
    /// as found. The paper's selectors leave shingles out, and bridging or
    /// expansion label unfound (fresh) shingles copied.
    pub fn exact_when_held(&self) -> bool {
        self.selector == Selector::All && self.estimation == Estimation::Nb
    }

    /// The table these settings need: entries carry only the fields the
    /// eviction and estimation algorithms read.
    pub fn table_params(&self) -> TableParams {
        TableParams {
            size: self.table_size,
            bucket_entries: self.bucket_entries,
            eviction: self.eviction,
            ties: self.ties,
            layout: Layout {
                offset: self.estimation.needs_offset(),
                neighbours: self.estimation.needs_neighbours(),
                score: matches!(self.eviction, Eviction::Cc | Eviction::Lucky),
                // A bottom-k bucket's sample is its smallest keys: 32 bits
                // keep false matches below 1.5e-8 a lookup (64 entries).
                narrow: self.eviction == Eviction::BottomK,
            },
            seed: self.seed,
        }
    }
}

/// The state of a run: the table and reusable scratch space.
pub struct OriginPass {
    table: Table,
    labeller: Labeller,
    keys: Vec<u64>,
    hits: Vec<Option<Hit>>,
    slots: Vec<Slot>,
    incs: Vec<u32>,
}

/// What follows a document's lookups: estimation, then alignment or the
/// guess by neighbours. One implementation for the sequential pass and the
/// pass split by bucket range (`lineage-split`), which gathers a document's
/// answers from every shard first; its scratch space is reused from
/// document to document, and nothing in it carries over from one to the
/// next.
pub struct Labeller {
    params: Params,
    estimator: Estimator,
    aligner: Aligner,
    labels: Vec<u32>,
    /// The labels without alignment, where the budget left an origin
    /// unread (see [`Labeller::label`]).
    unaligned: Vec<u32>,
}

impl Labeller {
    /// A labeller for a run with these settings, its scratch space empty.
    pub fn new(params: Params) -> Labeller {
        Labeller {
            params,
            estimator: Estimator::default(),
            aligner: Aligner::default(),
            labels: Vec::new(),
            unaligned: Vec::new(),
        }
    }

    /// The labels of document `doc`'s units (keys `keys`) from the table's
    /// answers `hits` and `slots`. `incomplete` says whether the table had
    /// lost or left out keys by the end of the document's lookups (read
    /// only when the settings align); `origins` gives earlier versions' keys.
    pub fn label(
        &mut self,
        doc: u32,
        keys: &[u64],
        hits: &[Option<Hit>],
        slots: &[Slot],
        incomplete: impl FnOnce() -> bool,
        origins: &mut dyn OriginKeys,
    ) -> &[u32] {
        let p = &self.params;
        self.estimator.estimate(
            p.estimation,
            doc,
            keys,
            hits,
            p.bridge_limit,
            &mut self.labels,
        );
        // Only a table that has left out (bottom-k) or evicted keys can
        // have missed a copy: alignment replaces the guess by neighbours.
        // (Settings that do not align skip the scan of the slots.)
        if p.aligns() && incomplete() {
            self.unaligned.clone_from(&self.labels);
            self.aligner
                .align(doc, keys, hits, &mut self.labels, origins);
            if self.aligner.any_unread() && p.eviction == Eviction::BottomK {
                let aligner = &self.aligner;
                // A unit alignment gave a later origin than the one its
                // nearest sampled unit names, which the budget left unread
                // (a long page first, then a short one that took the text
                // from it: the long one is past the budget), is the earlier
                // one's as far as anything read can tell: the guess by
                // neighbours stands there, as without alignment.
                interpolate(doc, slots, &mut self.unaligned);
                for (l, &was) in self.labels.iter_mut().zip(&self.unaligned) {
                    if *l != doc && was < *l && aligner.unread(was) {
                        *l = was;
                    }
                }
                // Units outside the sample beside a hit on an origin the
                // budget left unread may be that origin's: guessed by
                // neighbours, as without alignment (docs/algorithms.md §3.2).
                interpolate_where(doc, slots, &mut self.labels, |o| aligner.unread(o));
            }
        } else if p.eviction == Eviction::BottomK {
            interpolate(doc, slots, &mut self.labels);
        }
        &self.labels
    }
}

impl OriginPass {
    /// A run from its first document: an empty table shaped by `params`, or
    /// why it cannot be built.
    pub fn new(params: Params) -> Result<OriginPass, TableError> {
        Ok(OriginPass::resume(
            params,
            Table::new(params.table_params())?,
        ))
    }

    /// Continue a run from a table restored with [`Table::read_state`] (built
    /// with `params.table_params()`).
    pub fn resume(params: Params, table: Table) -> OriginPass {
        OriginPass {
            table,
            labeller: Labeller::new(params),
            keys: Vec::new(),
            hits: Vec::new(),
            slots: Vec::new(),
            incs: Vec::new(),
        }
    }

    /// The run's settings.
    pub fn params(&self) -> &Params {
        &self.labeller.params
    }

    /// The run's table.
    pub fn table(&self) -> &Table {
        &self.table
    }

    /// The run's table, lent mutably (the index saves its snapshot).
    pub fn table_mut(&mut self) -> &mut Table {
        &mut self.table
    }

    /// The table, the run over.
    pub fn into_table(self) -> Table {
        self.table
    }

    /// The table, lent to a pass split by bucket range (`lineage-split`):
    /// an empty unbounded one stands in until the caller resumes a pass
    /// with the table it gets back.
    pub fn take_table(&mut self) -> Table {
        std::mem::replace(&mut self.table, stand_in(&self.labeller.params))
    }

    /// A pass of `params` over a stand-in table (empty, unbounded: no
    /// memory), in the place of one lent.
    pub fn standing_in(params: Params) -> OriginPass {
        OriginPass::resume(params, stand_in(&params))
    }

    /// A new pass whose table's memory is already mapped (see
    /// `Table::touch`): for a thread of its own beside the reading.
    pub fn new_touched(params: Params) -> Result<OriginPass, TableError> {
        let mut pass = OriginPass::new(params)?;
        pass.table.touch();
        Ok(pass)
    }

    /// Process document `doc`, later than every document before it, from its
    /// selected units: the estimated origin of each unit. `origins` gives
    /// earlier versions' shingle keys to align with (read only when the
    /// settings align and the table has lost or left out keys).
    pub fn process(&mut self, doc: u32, units: &[Unit], origins: &mut dyn OriginKeys) -> &[u32] {
        self.keys.clear();
        self.keys.extend(units.iter().map(|u| u.key));
        let keys = &self.keys;
        self.table
            .lookup_document(doc, keys, &mut self.hits, &mut self.slots);
        let p = self.labeller.params;
        let (table, slots) = (&self.table, &self.slots);
        let incomplete = || table.counters().evictions > 0 || slots.iter().any(|s| !s.sampled());
        let labels = self
            .labeller
            .label(doc, keys, &self.hits, slots, incomplete, origins);
        if p.eviction == Eviction::Lucky && p.table_size != TableSize::Unbounded {
            lucky_increments(doc, &self.hits, labels, &mut self.incs);
            self.table
                .lucky_update(keys, &self.slots, &self.hits, &self.incs);
            self.table.lucky_end_document();
        }
        &self.labeller.labels
    }
}

/// An empty unbounded table of `params`' other settings: no memory.
fn stand_in(params: &Params) -> Table {
    let p = TableParams {
        size: TableSize::Unbounded,
        ..params.table_params()
    };
    Table::new(p).expect("an unbounded table takes no memory up front")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::align::NoKeys;
    use crate::history::Keyed;
    use crate::keymap::splitmix64;
    use crate::outcome::Outcome;
    use crate::{Regime, prepare};
    use lineage_core::fingerprint::polynomial::standard;

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

    /// Share of `labels` equal to `origin`.
    fn share(labels: &[u32], origin: u32) -> f64 {
        labels.iter().filter(|&&l| l == origin).count() as f64 / labels.len() as f64
    }

    /// Documents cut from `text` at `(start, length, own words)`: they copy
    /// from each other with edges anywhere, plus words of their own.
    fn cut(text: &[u64], cuts: &[(usize, usize, u64)]) -> Vec<Vec<u64>> {
        cuts.iter()
            .enumerate()
            .map(|(d, &(start, len, own))| {
                let mut doc = text[start..(start + len).min(text.len())].to_vec();
                doc.extend((0..own).map(|w| 10_000 + 100 * d as u64 + w));
                doc
            })
            .collect()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// Documents cut from one text at random places (so they copy from
        /// each other, with edges anywhere) plus words of their own: while
        /// the table holds every distinct shingle, the default settings give
        /// exactly the exact result, and the table says it holds them.
        #[test]
        fn the_default_is_the_exact_answer_while_the_table_holds_the_collection(
            text in proptest::collection::vec(0u64..5000, 300),
            cuts in proptest::collection::vec((0usize..300, 0usize..200, 0u64..20), 1..14),
            k in 3usize..10,
        ) {
            let docs = cut(&text, &cuts);
            let params = Params {
                k,
                table_size: TableSize::Bytes(1 << 20),
                ..Params::default()
            };
            let exact = Keyed::new(standard(), docs.clone(), k).exact();
            let prep = crate::prepare::Preparer::new(params, standard());
            let mut pass = OriginPass::new(params).unwrap();
            for (d, doc) in docs.iter().enumerate() {
                let got = prepare::run(&mut pass, d as u32, &prep.prepare(doc), &mut NoKeys);
                proptest::prop_assert_eq!(&got, &exact[d]);
            }
            let held = pass.table().counters().occupied;
            proptest::prop_assert_eq!(pass.table().regime(), Regime::Holds { distinct: held });
        }

        /// The same kind of collections through tables of a few buckets,
        /// which sample (bottom-k) or evict (Lucky): every token the aligned
        /// answer calls copied, the exact answer calls copied.
        #[test]
        fn alignment_never_calls_copied_a_token_the_exact_answer_calls_fresh(
            text in proptest::collection::vec(0u64..5000, 300),
            cuts in proptest::collection::vec((0usize..300, 0usize..200, 0u64..20), 1..14),
            k in 3usize..10,
            buckets in 1u64..6,
            lucky in proptest::bool::ANY,
        ) {
            let docs = cut(&text, &cuts);
            let params = Params {
                k,
                table_size: TableSize::Bytes(buckets * (64 * 11 + 2)),
                eviction: if lucky { Eviction::Lucky } else { Eviction::BottomK },
                ..Params::default()
            };
            let keyed = Keyed::new(standard(), docs.clone(), k);
            let exact = keyed.exact();
            let prep = prepare::Preparer::new(params, standard());
            let origins: Vec<Vec<u64>> = docs
                .iter()
                .map(|d| prepare::keys(prep.roller(), d).1)
                .collect();
            let mut pass = OriginPass::new(params).unwrap();
            for (d, doc) in docs.iter().enumerate() {
                let got = prepare::run(&mut pass, d as u32, &prep.prepare(doc), &mut &origins[..]);
                let fresh = |o: &Outcome| {
                    let mut f = vec![false; o.tokens as usize];
                    for (s, e) in o.fresh() {
                        f[s as usize..e as usize].fill(true);
                    }
                    f
                };
                let (ours, truth) = (fresh(&got), fresh(&exact[d]));
                for t in 0..ours.len() {
                    proptest::prop_assert!(
                        ours[t] || !truth[t],
                        "document {} token {} is fresh, yet labelled copied", d, t
                    );
                }
            }
        }
    }

    #[test]
    fn a_bottom_k_table_estimates_the_keys_it_sampled_from() {
        let mut x = 7u64;
        let keys: Vec<u64> = (0..60_000)
            .map(|_| {
                x = splitmix64(x);
                x >> 2
            })
            .collect();
        let params = Params {
            table_size: TableSize::Bytes(100 * (64 * 8 + 2)),
            estimation: Estimation::Nb,
            ..Params::default()
        };
        let mut pass = OriginPass::new(params).unwrap();
        // Every key twice: repeats are found or outside the sample, never
        // counted again.
        pass.process(0, &units(&keys), &mut NoKeys);
        pass.process(1, &units(&keys), &mut NoKeys);
        let Regime::Sampling { distinct, held } = pass.table().regime() else {
            panic!("{:?}", pass.table().regime());
        };
        assert_eq!(held, 6400);
        // k-minimum values over 100 buckets of 64: within a few per cent.
        let err = distinct as f64 / 60_000.0 - 1.0;
        assert!(err.abs() < 0.05, "{distinct}");
        assert!((pass.table().regime().one_in().unwrap() - 60_000.0 / 6400.0).abs() < 0.5);
    }

    /// A page revised many times, its last revision a rewrite: the next
    /// page keeps 40 tokens of each of 60 old revisions and copies 4,000 of
    /// the rewrite, so its hits name 61 origins whose keys (244,000) are more
    /// than its budget reads (16 a shingle plus 65,536: 167,936). Read
    /// earliest first, the budget ran out before the rewrite, whose
    /// unsampled shingles stayed fresh: the page's dominant origin lost to
    /// its own fresh text, where the guess by neighbours finds it. Read by
    /// what the page took from them, the rewrite comes first
    /// (docs/algorithms.md §3.2), and alignment is at least as good.
    #[test]
    fn alignment_under_a_binding_budget_reads_the_origin_the_page_took_most_from() {
        let mut x = 11u64;
        let mut token = || {
            x = splitmix64(x);
            x
        };
        let mut docs: Vec<Vec<u64>> = (0..61)
            .map(|_| (0..4000).map(|_| token()).collect())
            .collect();
        let mut page: Vec<u64> = docs[..60]
            .iter()
            .flat_map(|old| old[1000..1040].iter().copied())
            .collect();
        page.extend(&docs[60]);
        let n = page.len() - 7;
        assert!(60 * 3993 > 16 * n + 65_536, "the budget binds");
        docs.push(page);
        let keyed = Keyed::new(standard(), docs.clone(), 8);
        let exact = keyed.exact();
        assert_eq!(exact[61].dominant_origin, Some(60));
        let score = |align| {
            let params = Params {
                table_size: TableSize::Bytes(400 * (64 * 8 + 2)),
                align,
                ..Params::default()
            };
            let prep = prepare::Preparer::new(params, standard());
            let mut origins = &keyed.shingle_keys[..];
            let mut pass = OriginPass::new(params).unwrap();
            let mut score = crate::metrics::Score::default();
            let mut last = None;
            for (d, doc) in docs.iter().enumerate() {
                let got = prepare::run(&mut pass, d as u32, &prep.prepare(doc), &mut origins);
                score.add(&exact[d], &got);
                last = Some(got);
            }
            assert!(matches!(pass.table().regime(), Regime::Sampling { .. }));
            (score, last.unwrap())
        };
        let (aligned, page) = score(true);
        let (unaligned, _) = score(false);
        assert_eq!(page.top_origin, 60);
        assert!(
            aligned.overall() >= unaligned.overall(),
            "aligned {:?} against {:?}",
            aligned,
            unaligned
        );
        // The rewrite was read, not guessed: what the page took from it is
        // found to the token.
        let from_rewrite = |o: &Outcome| -> Vec<(u32, u32)> {
            o.copied()
                .filter(|c| c.2 == 60)
                .map(|(s, e, _)| (s, e))
                .collect()
        };
        assert_eq!(from_rewrite(&page), from_rewrite(&exact[61]));
    }

    /// Without alignment: bottom-k's neighbours' guess, against Lucky's
    /// losses; with it, the copy and the fresh text to the unit.
    #[test]
    fn a_bottom_k_sample_sees_a_whole_copy_through_a_table_of_one_bucket() {
        let mut x = 3u64;
        let mut key = || {
            x = splitmix64(x);
            x >> 2
        };
        let first: Vec<u64> = (0..2000).map(|_| key()).collect();
        // The second document: 200 fresh units, the whole first document, 200 fresh.
        let mut second: Vec<u64> = (0..200).map(|_| key()).collect();
        second.extend(&first);
        second.extend((0..200).map(|_| key()));
        let versions = [first.clone(), second.clone()];
        let run = |eviction, align| {
            let p = Params {
                table_size: TableSize::Bytes(64 * 11 + 2),
                eviction,
                estimation: Estimation::Nb,
                align,
                ..Params::default()
            };
            let mut pass = OriginPass::new(p).unwrap();
            assert_eq!(pass.table().capacity(), Some(64));
            let origins = &mut &versions[..];
            pass.process(0, &units(&first), origins);
            pass.process(1, &units(&second), origins).to_vec()
        };
        let labels = run(Eviction::BottomK, false);
        // 64 of 2,000 keys are kept, yet the copy is labelled as a copy and
        // the fresh text around it as fresh.
        assert!(
            share(&labels[200..2200], 0) > 0.95,
            "{}",
            share(&labels[200..2200], 0)
        );
        assert!(share(&labels[..200], 1) > 0.8 && share(&labels[2200..], 1) > 0.8);
        // Lucky keeps the end of the first document only: the contrast.
        let labels = run(Eviction::Lucky, false);
        assert!(share(&labels[200..2200], 0) < 0.1);
        // Aligned, each is exact: the hits name the first document, which
        // holds every unit of the copy and none of the rest.
        for eviction in [Eviction::BottomK, Eviction::Lucky] {
            let labels = run(eviction, true);
            assert_eq!(share(&labels[200..2200], 0), 1.0, "{eviction}");
            assert_eq!(share(&labels[..200], 1), 1.0, "{eviction}");
            assert_eq!(share(&labels[2200..], 1), 1.0, "{eviction}");
        }
    }

    /// A page quoting a short page (B) that itself took the text from a
    /// long one (A, earlier): the page's sampled hits name A, and a few name
    /// what only B holds. A is too long for alignment's budget, B is read:
    /// B's claim on the text A had first is no better than a guess, so the
    /// page gets the labels it gets without alignment, not B's.
    #[test]
    fn alignment_past_an_unread_earlier_origin_is_no_worse_than_none() {
        let (a, b, page_id) = (0u32, 1u32, 2u32);
        let page: Vec<u64> = (0..200u64).map(|i| 7 << 40 | i).collect();
        // A: the page's text inside 80,000 keys of its own (past the budget
        // of 16 × 200 + 65,536); B: the page's text and two keys of its own.
        let mut long: Vec<u64> = (0..80_000u64).map(|i| 9 << 40 | i).collect();
        long.splice(40_000..40_000, page[..190].iter().copied());
        let mut short = page.clone();
        short[195] = 5 << 40;
        let versions = [long, short];
        let mut hits = vec![None; page.len()];
        let mut slots = vec![Slot::of_sample(false); page.len()];
        let at = |origin: u32| {
            Some(Hit {
                origin,
                offset: 0,
                prev: 0,
                next: 0,
            })
        };
        for i in (0..190).step_by(10) {
            hits[i] = at(a);
            slots[i] = Slot::of_sample(true);
        }
        for i in [191, 193] {
            hits[i] = at(b);
            slots[i] = Slot::of_sample(true);
        }
        let labels = |align: bool| {
            let params = Params {
                selector: Selector::All,
                eviction: Eviction::BottomK,
                estimation: Estimation::Nb,
                align,
                ..Params::default()
            };
            let mut l = Labeller::new(params);
            l.label(page_id, &page, &hits, &slots, || true, &mut &versions[..])
                .to_vec()
        };
        let (aligned, unaligned) = (labels(true), labels(false));
        assert!(unaligned[..185].iter().all(|&l| l == a), "{unaligned:?}");
        // What A may hold is labelled as without alignment; what no origin
        // read holds, beside no hit on A, stays new (unit 195: it is).
        assert_eq!(aligned[..195], unaligned[..195]);
        assert_eq!(aligned[195], page_id);
    }
}
