//! The table split by bucket range: each [`Shard`] owns a
//! contiguous range of the whole table's buckets, and only that range's
//! memory, so the shards together take the table's memory, not a table each.
//!
//! With every eviction but Lucky, a bucket's state follows from the
//! operations on that bucket alone (Random draws from the key it inserts,
//! not from a stream shared by all buckets). So lookups applied to each
//! shard in (document, position) order — the order of the whole stream,
//! restricted to the shard's range — get the answers the whole table gives,
//! and [`Table::join`] rebuilds the table the sequential pass leaves, byte
//! for byte. Lucky feeds the estimates back into the table after each
//! document: not covered here.
//!
//! Growth: a growing table's live bucket c at shift s holds the whole-table
//! buckets c·2^s onwards, its entries in insertion (LRU: recency) order.
//! Shards start at the table's shift, on live-bucket boundaries, so their
//! live buckets are the table's; each grows on its own, only when one of its
//! own buckets fills. Nothing is evicted while a table grows and fills only
//! rise, so the shift the whole table ends at is the least of the shards'
//! (the largest at which no live bucket is full), and a stable split of a
//! shard's live buckets down to it gives the entries in the order the whole
//! table holds them.

use super::buckets::Buckets;
use super::*;

/// One contiguous range of a table's buckets, with the counters of the
/// lookups it was given. Built by [`Table::split`], joined back by
/// [`Table::join`].
pub struct Shard {
    /// The whole table's first bucket of the range, and its bucket count
    /// (a key's bucket is taken among all of them).
    first: usize,
    whole: usize,
    /// The range's buckets, numbered from `first`.
    store: Box<Buckets>,
    counters: Counters,
}

/// Which shard a key's bucket is in: the shards' first buckets, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ranges {
    whole: usize,
    firsts: Vec<usize>,
}

impl Ranges {
    /// The ranges of `shards`, as [`Table::split`] returned them.
    pub fn of(shards: &[Shard]) -> Ranges {
        Ranges {
            whole: shards.first().map_or(0, |s| s.whole),
            firsts: shards.iter().map(|s| s.first).collect(),
        }
    }

    /// The index of the shard that holds `key`'s bucket (inlined: the
    /// split pass routes every lookup through it).
    #[inline]
    pub fn shard(&self, key: u64) -> usize {
        let b = bucket_of(key, self.whole);
        self.firsts.partition_point(|&f| f <= b).saturating_sub(1)
    }
}

/// A table of `b`'s kind with `n_buckets` buckets of `per` entries, at
/// `shift`: a shard's range, or the whole table again.
fn buckets_like(b: &Buckets, n_buckets: usize, shift: u32) -> Result<Buckets, TableError> {
    let bucket_entries = u16::try_from(b.per).map_err(|_| TableError::BadBucket(u16::MAX))?;
    let p = TableParams {
        size: TableSize::Bytes(0),
        bucket_entries,
        eviction: b.eviction,
        ties: b.ties,
        layout: b.layout,
        seed: 0,
    };
    let size = n_buckets as u64 * (b.per as u64 * b.layout.entry_bytes() + 2);
    let mut out = Buckets::at_shift(p, size, shift)?;
    out.rng = b.rng;
    out.grew = b.grew;
    Ok(out)
}

/// Copy live bucket `from` of `src` (its entries and its fill word) to live
/// bucket `to` of `dst`, its homes moved by `home_delta` buckets. Only the
/// slots a bucket holds (a full one's all): an empty bucket's memory stays
/// untouched, as it is in the table.
fn copy_bucket(src: &Buckets, from: usize, dst: &mut Buckets, to: usize, home_delta: isize) {
    let (n, w) = (src.len(from), src.rec_width);
    let (s, d) = (from * src.per, to * src.per);
    dst.fill[to] = src.fill[from];
    if n == 0 {
        return;
    }
    dst.hi[d..d + n].copy_from_slice(&src.hi[s..s + n]);
    dst.rec[d * w..(d + n) * w].copy_from_slice(&src.rec[s * w..(s + n) * w]);
    if !src.score.is_empty() {
        dst.score[d..d + n].copy_from_slice(&src.score[s..s + n]);
    }
    if !dst.home.is_empty() {
        for i in 0..n {
            dst.home[d + i] = (src.home[s + i] as isize + home_delta) as u32;
        }
    }
}

/// Whether live bucket `b` of `bk` changed since the state was written.
fn changed(bk: &Buckets, b: usize) -> bool {
    bk.changed[b / 64] & (1 << (b % 64)) != 0
}

impl Table {
    /// The table split into at most `n` shards of contiguous bucket
    /// ranges, in bucket order, each owning a copy of its range's memory
    /// (drop the table after: the shards together take what it takes). A
    /// growing table's ranges are whole live buckets, so there are no more
    /// shards than live buckets. The counters so far go with the first
    /// shard. An unbounded table has no buckets to split; Lucky's are not
    /// split, since its scores follow the estimates of each document
    /// (docs/algorithms.md §3.3).
    pub fn split(&self, n: usize) -> Result<Vec<Shard>, TableError> {
        let Store::Bucketed(b) = &self.store else {
            return Err(TableError::Unsplit("an unbounded table has no buckets"));
        };
        if b.eviction == Eviction::Lucky {
            return Err(TableError::Unsplit(
                "lucky scores follow each document's estimates",
            ));
        }
        let (live, shift) = (b.live, b.shift);
        let n = n.clamp(1, live);
        let mut shards = Vec::with_capacity(n);
        for i in 0..n {
            let (c0, c1) = (live * i / n, live * (i + 1) / n);
            let (first, end) = (c0 << shift, (c1 << shift).min(b.n_buckets));
            let mut s = buckets_like(b, end - first, shift)?;
            let mut counters = Counters::default();
            for c in c0..c1 {
                copy_bucket(b, c, &mut s, c - c0, -(first as isize));
                counters.occupied += b.len(c) as u64;
                if changed(b, c) {
                    s.mark(c - c0);
                }
            }
            if i == 0 {
                counters = Counters {
                    occupied: counters.occupied,
                    ..self.counters
                };
            }
            shards.push(Shard {
                first,
                whole: b.n_buckets,
                store: Box::new(s),
                counters,
            });
        }
        Ok(shards)
    }

    /// The table whose ranges `shards` are, as [`Table::split`] made them,
    /// with the lookups they were given since: the table the same lookups
    /// leave when applied to it whole, counters summed. `None` when the
    /// shards are not one table's ranges, in order.
    pub fn join(shards: Vec<Shard>) -> Option<Table> {
        let head = shards.first()?;
        let whole = head.whole;
        let mut end = 0;
        for s in &shards {
            let (b, h) = (&s.store, &head.store);
            if s.whole != whole
                || s.first != end
                || (b.per, b.layout, b.eviction, b.ties) != (h.per, h.layout, h.eviction, h.ties)
            {
                return None;
            }
            end += b.n_buckets;
        }
        if end != whole {
            return None;
        }
        // The least shift of the shards: the largest at which no live
        // bucket is full (see the module's comment).
        let shift = shards.iter().map(|s| s.store.shift).min()?;
        let mut t = buckets_like(&head.store, whole, shift).ok()?;
        t.grew = shards.iter().any(|s| s.store.grew);
        let mut counters = Counters::default();
        for s in shards {
            let (b, first) = (&s.store, s.first);
            let c = s.counters;
            counters.lookups += c.lookups;
            counters.hits += c.hits;
            counters.inserts += c.inserts;
            counters.evictions += c.evictions;
            counters.occupied += c.occupied;
            let c0 = first >> shift;
            if b.shift == shift {
                // The shard's live buckets are the table's.
                for c in 0..b.live {
                    copy_bucket(b, c, &mut t, c0 + c, first as isize);
                    if changed(b, c) && !t.grew {
                        t.mark(c0 + c);
                    }
                }
                continue;
            }
            // Grown less than the table: each live bucket's entries, in
            // order, to the table's live buckets that split its range (none
            // is full: the shard's are not).
            let w = b.rec_width;
            for at in b.occupied_slots() {
                let home = first + b.home[at] as usize;
                let to_bucket = home >> shift;
                let to = to_bucket * t.per + usize::from(t.fill[to_bucket]);
                t.fill[to_bucket] += 1;
                t.hi[to] = b.hi[at];
                t.rec[to * w..(to + 1) * w].copy_from_slice(&b.rec[at * w..(at + 1) * w]);
                if let Some(h) = t.home.get_mut(to) {
                    *h = home as u32;
                }
            }
        }
        // Grown since the state was written: the next checkpoint writes it
        // whole, and which buckets changed no longer matters.
        if t.grew {
            t.changed.fill(0);
        }
        Some(Table {
            store: Store::Bucketed(Box::new(t)),
            counters,
        })
    }
}

impl Shard {
    /// The whole-table buckets this shard holds.
    pub fn range(&self) -> std::ops::Range<usize> {
        self.first..self.first + self.store.n_buckets
    }

    /// Each of the range's whole-table buckets' estimate of the keys it
    /// was given, in bucket order, as [`Table::regime`] reads them on the
    /// joined table once it samples. A table samples only fully grown
    /// (nothing is left out while it grows), so the joined table's buckets
    /// are whole-table buckets: a shard grown as far gives its buckets'
    /// estimates; one grown less (none of its buckets full) gives the count
    /// of entries [`Table::join`] moves to each. The terms of every shard,
    /// in range order, are the joined table's.
    pub fn distinct_terms(&self) -> Vec<f64> {
        let b = &*self.store;
        if b.shift == 0 {
            return (0..b.n_buckets).map(|i| b.distinct_given(i)).collect();
        }
        let mut terms = vec![0.0; b.n_buckets];
        for at in b.occupied_slots() {
            terms[b.home[at] as usize] += 1.0;
        }
        terms
    }

    /// The shard's state as bytes, [`Table::write_state`]'s layout for its
    /// range: its range (first bucket, the whole table's buckets) and
    /// counters, then its buckets. A run over many processes checkpoints
    /// each shard with it.
    pub fn write_state(&self, w: &mut impl std::io::Write) -> std::io::Result<()> {
        let c = self.counters;
        let words = [self.first as u64, self.whole as u64];
        for v in words
            .into_iter()
            .chain([c.lookups, c.hits, c.inserts, c.evictions, c.occupied])
        {
            w.write_all(&v.to_le_bytes())?;
        }
        super::state::write_buckets(w, &self.store)
    }

    /// Restore [`Shard::write_state`]'s bytes into this shard, fresh from
    /// the same [`Table::split`] (the same range, at its first shift).
    /// Fails (`InvalidData`) on bytes of another range or that do not fit.
    pub fn read_state(&mut self, r: &mut impl std::io::Read) -> std::io::Result<()> {
        let mut words = [0u64; 7];
        for v in &mut words {
            let mut b = [0u8; 8];
            r.read_exact(&mut b)?;
            *v = u64::from_le_bytes(b);
        }
        if words[..2] != [self.first as u64, self.whole as u64] {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "shard state: another range",
            ));
        }
        let [_, _, lookups, hits, inserts, evictions, occupied] = words;
        super::state::read_buckets(r, &mut self.store, occupied)?;
        self.counters = Counters {
            lookups,
            hits,
            inserts,
            evictions,
            occupied,
        };
        Ok(())
    }

    /// The counters of the lookups this shard was given (the first shard's
    /// include the table's before the split).
    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// [`Table::lookup`] of a key in this shard's range ([`Ranges::shard`]
    /// says which shard): the same answer, in the same table state, as the
    /// whole table gives when every earlier lookup of the range came first.
    /// The slot says only whether the key was sampled: the lucky update,
    /// which reads slots, is not run on shards.
    pub fn lookup(&mut self, key: u64, ins: Insert) -> (Option<Hit>, Slot) {
        let home = bucket_of(key, self.whole) - self.first;
        debug_assert!(home < self.store.n_buckets, "a key outside the shard");
        let c = &mut self.counters;
        c.lookups += 1;
        let (hit, slot) = self.store.lookup(home, key, || ins, c);
        c.hits += u64::from(hit.is_some());
        (hit, Slot::of_sample(slot.sampled()))
    }

    /// [`Shard::lookup`] of each of `ops` in turn (`op` gives a lookup's key
    /// and insert), each answer to `answer` as it comes: the same answers as
    /// one call a lookup, but one loop that fetches buckets a few lookups
    /// ahead, as `Table::lookup_document` does (a batch is known in
    /// advance). Returns the index of the lookup during which the shard
    /// first evicted, if it had not evicted before the batch.
    pub fn lookup_sorted<O>(
        &mut self,
        ops: &[O],
        op: impl Fn(&O) -> (u64, Insert),
        mut answer: impl FnMut(&O, Option<Hit>, Slot),
    ) -> Option<usize> {
        /// How far ahead of the current lookup a bucket is prefetched.
        const AHEAD: usize = 8;
        let (whole, first) = (self.whole, self.first);
        let bk = &mut *self.store;
        let mut homes = std::mem::take(&mut bk.scratch_buckets);
        homes.clear();
        homes.extend(
            ops.iter()
                .map(|o| (bucket_of(op(o).0, whole) - first) as u32),
        );
        debug_assert!(
            homes.iter().all(|&h| (h as usize) < bk.n_buckets),
            "a key outside the shard"
        );
        let c = &mut self.counters;
        let mut first_eviction = None;
        let mut evicted = c.evictions > 0;
        for (i, (o, &home)) in ops.iter().zip(&homes).enumerate() {
            // Two stages: a bucket's fill, then (the fill read) the lines it
            // says the lookup will read. (Whole-range buckets: the live ones
            // change as the shard grows.)
            if let Some(&ahead) = homes.get(i + 2 * AHEAD) {
                bk.prefetch_fill(ahead as usize >> bk.shift);
            }
            if let Some(&ahead) = homes.get(i + AHEAD) {
                bk.prefetch(ahead as usize >> bk.shift);
            }
            let (key, ins) = op(o);
            c.lookups += 1;
            let (hit, slot) = bk.lookup(home as usize, key, || ins, c);
            c.hits += u64::from(hit.is_some());
            answer(o, hit, Slot::of_sample(slot.sampled()));
            if !evicted && c.evictions > 0 {
                evicted = true;
                first_eviction = Some(i);
            }
        }
        bk.scratch_buckets = homes;
        first_eviction
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimate::{Estimation, Estimator, interpolate};
    use crate::keymap::splitmix64;
    use lineage_core::fingerprint::top_byte;

    /// Documents as 62-bit keys, as the prototype's corpus: fresh runs, runs
    /// copied from earlier documents, whole duplicates, repeats inside a
    /// document; none empty.
    fn corpus(seed: u64, n_docs: usize, max_len: u64) -> Vec<Vec<u64>> {
        let shape = lineage_testing::Shape {
            copy_one_in: 8,
            min_len: 1,
            len_span: max_len,
            min_run: 1,
            run_span: 30,
        };
        lineage_testing::collection(seed, seed, n_docs, shape, splitmix64)
    }

    /// What the pass inserts for unit `i` of a document (`lookup_document`).
    fn insert(doc: u32, keys: &[u64], i: usize) -> Insert {
        Hit {
            origin: doc,
            offset: i as u8,
            prev: if i > 0 { top_byte(keys[i - 1]) } else { 0 },
            next: keys.get(i + 1).map_or(0, |&k| top_byte(k)),
        }
    }

    /// A lookup a shard is given: where its answer goes, its key, its entry.
    #[derive(Clone, Copy)]
    struct Op {
        doc: usize,
        pos: usize,
        key: u64,
        ins: Insert,
    }

    /// One answer: the hit, and whether the key was sampled.
    type Answer = (Option<Hit>, bool);

    /// A shard's answers with their lookups, and the first document after
    /// which it had evicted anything.
    type Driven = (Vec<(Op, Answer)>, Option<usize>);

    /// Per shard, the answers to its epochs' lookups in (document, position)
    /// order, each shard on a thread of its own (an epoch's lookups one call
    /// each, or `batched`, one [`Shard::lookup_sorted`]); and the first
    /// document after which each shard had evicted anything.
    fn drive(shards: &mut [Shard], epochs: &[Vec<Vec<Op>>], batched: bool) -> Vec<Driven> {
        std::thread::scope(|scope| {
            let running: Vec<_> = shards
                .iter_mut()
                .enumerate()
                .map(|(i, shard)| {
                    scope.spawn(move || {
                        let mut answers = Vec::new();
                        let mut evicted = (shard.counters().evictions > 0).then_some(0);
                        for epoch in epochs {
                            let ops = &epoch[i];
                            if batched {
                                let first = shard.lookup_sorted(
                                    ops,
                                    |op| (op.key, op.ins),
                                    |op, hit, slot| answers.push((*op, (hit, slot.sampled()))),
                                );
                                if let Some(at) = first {
                                    evicted.get_or_insert(ops[at].doc);
                                }
                                continue;
                            }
                            for op in ops {
                                let (hit, slot) = shard.lookup(op.key, op.ins);
                                answers.push((*op, (hit, slot.sampled())));
                                if shard.counters().evictions > 0 {
                                    evicted.get_or_insert(op.doc);
                                }
                            }
                        }
                        (answers, evicted)
                    })
                })
                .collect();
            running
                .into_iter()
                .map(|t| t.join().expect("a shard's thread"))
                .collect()
        })
    }

    fn state(t: &Table) -> (Vec<u8>, Option<Vec<u8>>) {
        let mut whole = Vec::new();
        t.write_state(&mut whole).expect("to memory");
        let mut changes = Vec::new();
        let wrote = t.write_changes(&mut changes).expect("to memory");
        (whole, wrote.then_some(changes))
    }

    /// The labels estimation gives a document from its answers (no
    /// bridging; bottom-k's unsampled units by their neighbours).
    fn labels(
        doc: u32,
        keys: &[u64],
        hits: &[Option<Hit>],
        slots: &[Slot],
        bottom_k: bool,
    ) -> Vec<u32> {
        let mut labels = Vec::new();
        Estimator::default().estimate(Estimation::Nb, doc, keys, hits, 30, &mut labels);
        if bottom_k {
            interpolate(doc, slots, &mut labels);
        }
        labels
    }

    fn params(eviction: Eviction, size: TableSize) -> TableParams {
        TableParams {
            size,
            bucket_entries: 8,
            eviction,
            ties: Ties::Oldest,
            layout: Layout {
                offset: true,
                neighbours: true,
                score: matches!(eviction, Eviction::Cc | Eviction::Lucky),
                narrow: false,
            },
            seed: 1,
        }
    }

    #[test]
    fn lucky_and_unbounded_tables_are_not_split() {
        for (eviction, size) in [
            (Eviction::Lucky, TableSize::Bytes(1 << 16)),
            (Eviction::Lru, TableSize::Unbounded),
        ] {
            let t = Table::new(params(eviction, size)).unwrap();
            assert!(matches!(t.split(2), Err(TableError::Unsplit(_))));
        }
    }

    #[test]
    fn shards_join_only_as_one_tables_ranges_in_order() {
        let t = Table::new(params(Eviction::Lru, TableSize::Bytes(1 << 16))).unwrap();
        let mut shards = t.split(4).unwrap();
        assert_eq!(shards.len(), 4);
        assert_eq!(shards[0].range().start, 0);
        assert!(
            shards
                .windows(2)
                .all(|w| w[0].range().end == w[1].range().start)
        );
        assert_eq!(shards[3].range().end as u64, t.buckets().unwrap());
        // Each shard holds its range's memory only: together, the table's.
        let held: u64 = shards.iter().map(|s| s.store.memory_bytes()).sum();
        assert_eq!(Some(held), t.memory_bytes());
        shards.swap(1, 2);
        assert!(Table::join(shards).is_none());
        let mut shards = t.split(4).unwrap();
        shards.pop();
        assert!(Table::join(shards).is_none());
        // More shards than a growing table's live buckets: one a live bucket.
        let big = Table::new(params(Eviction::Lru, TableSize::Bytes(64 << 20))).unwrap();
        let Store::Bucketed(b) = &big.store else {
            unreachable!()
        };
        assert!(b.shift > 0);
        assert_eq!(big.split(1000).unwrap().len(), b.live);
    }

    /// A shard written part way and read back into a fresh split goes on
    /// as the shard itself: the same answers, the same joined table. The
    /// reference is the shard never written (a checkpoint must not change
    /// what comes after it).
    #[test]
    fn a_shard_read_back_goes_on_as_the_shard_itself() {
        let docs = corpus(7, 60, 300);
        for eviction in [
            Eviction::Random,
            Eviction::Lru,
            Eviction::Cc,
            Eviction::BottomK,
        ] {
            // Growing, and small enough to evict.
            for size in [64 << 20, 1 << 12] {
                let p = params(eviction, TableSize::Bytes(size));
                let fresh = Table::new(p).unwrap();
                let mut kept = fresh.split(3).unwrap();
                let ranges = Ranges::of(&kept);
                let ops = |from: usize, to: usize| {
                    let mut by_shard = vec![Vec::new(); kept.len()];
                    for (doc, keys) in docs.iter().enumerate().take(to).skip(from) {
                        for (pos, &key) in keys.iter().enumerate() {
                            let ins = insert(doc as u32, keys, pos);
                            by_shard[ranges.shard(key)].push(Op { doc, pos, key, ins });
                        }
                    }
                    vec![by_shard]
                };
                let (first, rest) = (ops(0, 30), ops(30, docs.len()));
                drive(&mut kept, &first, true);
                let mut restored = fresh.split(3).unwrap();
                for (k, r) in kept.iter().zip(&mut restored) {
                    let mut bytes = Vec::new();
                    k.write_state(&mut bytes).unwrap();
                    r.read_state(&mut bytes.as_slice()).unwrap();
                    // Torn, or of another range: refused.
                    let mut again = fresh.split(3).unwrap();
                    assert!(again[0].read_state(&mut &bytes[..bytes.len() - 1]).is_err());
                    if k.range().start != 0 {
                        assert!(again[0].read_state(&mut bytes.as_slice()).is_err());
                    }
                }
                let a = drive(&mut kept, &rest, true);
                let b = drive(&mut restored, &rest, true);
                for (x, y) in a.iter().zip(&b) {
                    let pairs = |d: &Driven| {
                        d.0.iter()
                            .map(|(o, a)| (o.doc, o.pos, *a))
                            .collect::<Vec<_>>()
                    };
                    assert_eq!(pairs(x), pairs(y), "{eviction:?} {size}");
                    assert_eq!(x.1, y.1);
                }
                let (ta, tb) = (Table::join(kept).unwrap(), Table::join(restored).unwrap());
                assert_eq!(state(&ta).0, state(&tb).0, "{eviction:?} {size}");
                if size == 1 << 12 {
                    assert!(ta.counters().evictions > 0, "the small table evicts");
                }
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(256))]
        #[test]
        fn shards_in_document_order_answer_as_the_whole_table(
            seed in proptest::num::u64::ANY,
            n_docs in 1usize..40,
            ev in 0usize..4,
            size in 0usize..4,
            per in proptest::sample::select(vec![4u16, 8, 64]),
            n_shards in proptest::sample::select(vec![1usize, 2, 4]),
            split_at in 0usize..8,
            epoch in 1usize..6,
            batched in proptest::bool::ANY,
        ) {
            let eviction = [Eviction::Random, Eviction::Lru, Eviction::Cc, Eviction::BottomK][ev];
            let docs = corpus(seed, n_docs, 300);
            let distinct = DistinctKeys::of(docs.iter().flatten().copied(), 0).keys.len() as u64;
            let layout = Layout {
                offset: true,
                neighbours: true,
                score: eviction == Eviction::Cc,
                narrow: eviction == Eviction::BottomK,
            };
            // Holds all (a growing table), grows part way, about fills,
            // samples or evicts.
            let per_entries = u64::from(per);
            let n_buckets = match size {
                0 => 64 * distinct / per_entries + 64,
                1 => 4 * distinct / per_entries + 1,
                2 => distinct / per_entries + 1,
                _ => distinct / (4 * per_entries) + 1,
            };
            let p = TableParams {
                size: TableSize::Bytes(n_buckets * (per_entries * layout.entry_bytes() + 2)),
                bucket_entries: per,
                eviction,
                ties: Ties::Oldest,
                layout,
                seed,
            };
            // The sequential pass.
            let mut whole = Table::new(p).expect("a table");
            let (mut hits, mut slots) = (Vec::new(), Vec::new());
            let mut answers: Vec<Vec<Answer>> = Vec::new();
            let mut incomplete = Vec::new();
            let mut outcomes = Vec::new();
            for (d, keys) in docs.iter().enumerate() {
                whole.lookup_document(d as u32, keys, &mut hits, &mut slots);
                answers.push(hits.iter().zip(&slots).map(|(&h, s)| (h, s.sampled())).collect());
                incomplete.push(whole.counters().evictions > 0 || slots.iter().any(|s| !s.sampled()));
                outcomes.push(labels(d as u32, keys, &hits, &slots, eviction == Eviction::BottomK));
            }
            if size == 0 {
                // Room for all: no bucket overflows but by a rare chance.
                proptest::prop_assume!(whole.regime() == Regime::Holds { distinct });
            }
            // The same documents: the first `split_at` on the table whole,
            // then split, the rest shard by shard, epoch by epoch.
            let split_at = split_at.min(docs.len());
            let mut before = Table::new(p).expect("a table");
            for (d, keys) in docs[..split_at].iter().enumerate() {
                before.lookup_document(d as u32, keys, &mut hits, &mut slots);
            }
            let mut shards = before.split(n_shards).expect("bounded");
            drop(before);
            proptest::prop_assert!(!shards.is_empty() && shards.len() <= n_shards);
            let ranges = Ranges::of(&shards);
            let mut epochs: Vec<Vec<Vec<Op>>> = Vec::new();
            for first in (split_at..docs.len()).step_by(epoch) {
                let mut by_shard = vec![Vec::new(); shards.len()];
                for (doc, keys) in docs.iter().enumerate().skip(first).take(epoch) {
                    for (pos, &key) in keys.iter().enumerate() {
                        let ins = insert(doc as u32, keys, pos);
                        by_shard[ranges.shard(key)].push(Op { doc, pos, key, ins });
                    }
                }
                epochs.push(by_shard);
            }
            let driven = drive(&mut shards, &epochs, batched);
            // Every answer back to its document, as the whole table gave it.
            let mut sharded: Vec<Vec<Option<Answer>>> =
                docs.iter().map(|k| vec![None; k.len()]).collect();
            for (op, answer) in driven.iter().flat_map(|(a, _)| a) {
                sharded[op.doc][op.pos] = Some(*answer);
            }
            for d in split_at..docs.len() {
                let got: Vec<Answer> = sharded[d].iter().map(|a| a.expect("answered")).collect();
                proptest::prop_assert_eq!(&got, &answers[d], "document {}", d);
                // What estimation and alignment read follows: the labels,
                // and whether the table had lost or left out keys, evictions
                // OR-ed over the shards up to the document.
                let hits: Vec<Option<Hit>> = got.iter().map(|a| a.0).collect();
                let slots: Vec<Slot> = got
                    .iter()
                    .map(|a| if a.1 { Slot::UNKNOWN } else { Slot::UNSAMPLED })
                    .collect();
                let bottom_k = eviction == Eviction::BottomK;
                proptest::prop_assert_eq!(&labels(d as u32, &docs[d], &hits, &slots, bottom_k), &outcomes[d]);
                let evicted = driven.iter().any(|(_, e)| e.is_some_and(|e| e <= d));
                proptest::prop_assert_eq!(evicted || !got.iter().all(|a| a.1), incomplete[d]);
            }
            let summed = shards.iter().fold(Counters::default(), |s, x| {
                let c = x.counters();
                Counters {
                    lookups: s.lookups + c.lookups,
                    hits: s.hits + c.hits,
                    inserts: s.inserts + c.inserts,
                    evictions: s.evictions + c.evictions,
                    occupied: s.occupied + c.occupied,
                }
            });
            proptest::prop_assert_eq!(summed, whole.counters());
            // Joined: the table the sequential pass left, byte for byte,
            // and its record of changes.
            let joined = Table::join(shards).expect("one table's shards");
            proptest::prop_assert_eq!(joined.counters(), whole.counters());
            proptest::prop_assert_eq!(joined.regime(), whole.regime());
            proptest::prop_assert_eq!(joined.bucket_fill(), whole.bucket_fill());
            proptest::prop_assert_eq!(state(&joined), state(&whole));
        }
    }
}
