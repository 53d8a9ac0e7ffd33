//! The bucketed store and its eviction rules: entries in insertion (or
//! recency) order, the victim of a full bucket, the lucky scores.

use super::memory::{prefetch, prefetch_lines, try_zeroed};
use super::simd::{byte_sum, eq_mask_64, eq_mask16, eq_mask16x64, max16x64, score_mask};
use super::*;
use crate::keymap::splitmix64;

/// The slots holding entries of buckets of `per` entries with fill words
/// `fill`, in bucket order: each bucket's first `len` (a full ring's all,
/// whatever its head). Over the fill array alone, so a caller may write the
/// other arrays while it walks.
pub(super) fn occupied(fill: &[u16], per: usize) -> impl Iterator<Item = usize> + Clone + '_ {
    fill.iter()
        .enumerate()
        .flat_map(move |(b, &f)| b * per..b * per + usize::from(f).min(per))
}

/// One entry's fields, while it moves within its bucket.
#[derive(Clone, Copy)]
pub(super) struct Entry {
    pub(super) hi: u16,
    pub(super) rec: [u8; 12],
    pub(super) score: u8,
    /// Its bucket in the whole table (while the table is growing).
    pub(super) home: u32,
}

/// The bucketed store: fields of entry `b * per + i` live at that index.
/// The fingerprints' high halves and the scores, which are scanned, have
/// arrays of their own; the low half, checked on a match, and what a hit
/// returns (origin, offset, neighbour bytes) are one record of `rec_width`
/// bytes, so a hit reads one line more and moving an entry moves 3 arrays.
///
/// The table grows by doubling, so its memory is committed as it fills: while
/// `shift` > 0 only the first `live` = ⌈n_buckets / 2^shift⌉ buckets are in
/// use, bucket c holding the entries of the whole table's buckets c·2^shift
/// onwards, each entry with its whole-table bucket in `home` (a lookup
/// matches it there only). No live bucket is ever full: the insert that
/// fills one doubles the table, each bucket's entries going in order to the
/// two buckets that halve its range, until the bucket has room or the whole
/// table is live. So nothing is evicted before then, and the entries and their
/// order in each whole-table bucket are those of a table allocated whole.
/// Tables with scores (CC, lucky) are whole from the start: their halving
/// rules read a whole bucket's scores.
pub(super) struct Buckets {
    /// Buckets of the whole table.
    pub(super) n_buckets: usize,
    pub(super) per: usize,
    pub(super) shift: u32,
    pub(super) live: usize,
    /// Per slot of the live buckets, its entry's whole-table bucket (empty
    /// once the whole table is live).
    pub(super) home: Vec<u32>,
    /// Grown since the state was last written: bucket numbers changed, so
    /// the next checkpoint writes the state whole.
    pub(super) grew: bool,
    /// Per bucket: below `per`, the fill of a bucket not yet full (its
    /// entries at slots 0.. in insertion order); `per + h`, a full bucket kept
    /// as a ring whose oldest entry is at slot h. One u16 for both, so the
    /// ring costs no memory.
    pub(super) fill: Vec<u16>,
    pub(super) hi: Vec<u16>,
    pub(super) rec: Vec<u8>,
    pub(super) rec_width: usize,
    /// Bytes of the fingerprint's low part in a record (4, or 2 when narrow).
    pub(super) lo_width: usize,
    /// The key bits an entry stores.
    pub(super) fp_mask: u64,
    pub(super) score: Vec<u8>,
    pub(super) layout: Layout,
    pub(super) eviction: Eviction,
    pub(super) ties: Ties,
    /// Random eviction's seed, mixed with the key inserted (a constant: the
    /// state's "random state" field keeps its place).
    pub(super) rng: u64,
    /// Buckets given a lucky score since the last document ended, each once
    /// (the first `n_touched`; `touched_bits` marks them): scratch of the
    /// lucky update, not table memory.
    pub(super) touched: Vec<u32>,
    pub(super) n_touched: usize,
    pub(super) touched_bits: Vec<u64>,
    /// The buckets of a document's keys, computed once per lookup of a
    /// document: scratch, not table memory.
    pub(super) scratch_buckets: Vec<u32>,
    /// A bit a bucket: changed since the state was last written (what a
    /// checkpoint's record of changes holds).
    pub(super) changed: Vec<u64>,
}

/// Live buckets of a table of `n` buckets at `shift`.
fn live_buckets(n: usize, shift: u32) -> usize {
    n.div_ceil(1 << shift)
}

/// A growing table starts with about this many live buckets.
const FIRST_LIVE: usize = 16;

impl Buckets {
    pub(super) fn new(p: TableParams, size: u64) -> Result<Buckets, TableError> {
        let (n_buckets, _) = p.geometry(size)?;
        let mut shift = 0;
        while !p.layout.score && live_buckets(n_buckets, shift + 1) >= FIRST_LIVE {
            shift += 1;
        }
        Buckets::at_shift(p, size, shift)
    }

    /// A table of `size` whose first `live_buckets(n, shift)` buckets are live.
    pub(super) fn at_shift(p: TableParams, size: u64, shift: u32) -> Result<Buckets, TableError> {
        let (n_buckets, per) = p.geometry(size)?;
        let live = live_buckets(n_buckets, shift);
        let cap = n_buckets * per;
        let bits = p.layout.fingerprint_bits();
        let lo_width = (bits as usize - 16) / 8;
        let rec_width =
            lo_width + 4 + usize::from(p.layout.offset) + 2 * usize::from(p.layout.neighbours);
        let score = usize::from(p.layout.score);
        // Huge pages only for a table mapped ahead of use: one that is not
        // is faulted in by lookups at random, and each would map (and zero)
        // 2 MiB where 4 KiB serve. (The sum is `memory_bytes`.)
        let huge = n_buckets * 2 + cap * (2 + rec_width + score) <= MAP_AHEAD;
        let no_memory = || TableError::NoMemory { size };
        let bytes = |n: usize| try_zeroed::<u8>(n, huge).ok_or_else(no_memory);
        let words = |n: usize| try_zeroed::<u16>(n, huge).ok_or_else(no_memory);
        // Homes for the most slots a growing table has (at shift 1), mapped
        // as they are used.
        let homes = if shift > 0 {
            live_buckets(n_buckets, 1) * per
        } else {
            0
        };
        Ok(Buckets {
            n_buckets,
            per,
            shift,
            live,
            home: try_zeroed::<u32>(homes, huge).ok_or_else(no_memory)?,
            grew: false,
            fill: words(n_buckets)?,
            hi: words(cap)?,
            rec: bytes(cap * rec_width)?,
            rec_width,
            lo_width,
            fp_mask: (1 << bits) - 1,
            score: bytes(if p.layout.score { cap } else { 0 })?,
            layout: p.layout,
            eviction: p.eviction,
            ties: p.ties,
            rng: p.seed ^ 0x9e37_79b9_7f4a_7c15,
            touched: Vec::new(),
            n_touched: 0,
            touched_bits: Vec::new(),
            scratch_buckets: Vec::new(),
            changed: vec![0; n_buckets.div_ceil(64)],
        })
    }

    /// Make the table's first `live_buckets(n, shift)` buckets live: a
    /// shift at most its first, before it holds anything.
    pub(super) fn set_shift(&mut self, shift: u32) {
        debug_assert!(shift <= self.shift && self.fill.iter().all(|&f| f == 0));
        self.shift = shift;
        self.live = live_buckets(self.n_buckets, shift);
        if shift == 0 {
            self.home = Vec::new();
        }
    }

    /// Fill words are below this: a live bucket of a growing table is never
    /// full; a full one is a ring, `per` + its head.
    pub(super) fn fill_limit(&self) -> usize {
        if self.shift > 0 {
            self.per
        } else {
            2 * self.per
        }
    }

    /// Note bucket `b` changed.
    #[inline(always)]
    pub(super) fn mark(&mut self, b: usize) {
        self.changed[b / 64] |= 1 << (b % 64);
    }

    /// Map every page of the live buckets' arrays now (see
    /// [`super::memory::touch`]).
    pub(super) fn touch(&mut self) {
        use super::memory::touch;
        let slots = self.live * self.per;
        touch(&mut self.fill[..self.live]);
        touch(&mut self.hi[..slots]);
        touch(&mut self.rec[..slots * self.rec_width]);
        let scores = self.score.len().min(slots);
        touch(&mut self.score[..scores]);
    }

    pub(super) fn capacity(&self) -> usize {
        self.n_buckets * self.per
    }

    pub(super) fn memory_bytes(&self) -> u64 {
        let vecs = [
            self.hi.len() * 2,
            self.rec.len(),
            self.score.len(),
            self.fill.len() * 2,
        ];
        vecs.iter().sum::<usize>() as u64
    }

    /// The whole-table bucket of `key` (its live bucket is this `>> shift`).
    #[inline]
    pub(super) fn bucket(&self, key: u64) -> usize {
        bucket_of(key, self.n_buckets)
    }

    /// Whether the entry at `at` is in whole-table bucket `home`: always
    /// once the whole table is live.
    #[inline(always)]
    fn home_is(&self, at: usize, home: usize) -> bool {
        self.shift == 0 || self.home[at] as usize == home
    }

    /// The low part of entry `at`'s fingerprint (its record's first bytes).
    #[inline]
    pub(super) fn lo_at(&self, at: usize) -> u32 {
        lo_of(&self.rec[at * self.rec_width..], self.lo_width)
    }

    /// A key's stored parts: the low part a record holds, the high half-word
    /// the bucket scan compares.
    #[inline]
    pub(super) fn split(&self, key: u64) -> (u32, u16) {
        let fp = key & self.fp_mask;
        let lo_bits = 8 * self.lo_width;
        ((fp & ((1 << lo_bits) - 1)) as u32, (fp >> lo_bits) as u16)
    }

    /// Fetch bucket `b`'s fill, a lookup's first read: some keys ahead of
    /// [`Buckets::prefetch`], which reads it.
    #[inline]
    pub(super) fn prefetch_fill(&self, b: usize) {
        prefetch(&self.fill[b]);
    }

    /// Fetch what a lookup in bucket `b` will read, by its fill: the high
    /// halves of its entries and the records of its entries and of the slot
    /// an insert takes. A bucket far from full (any bucket while the table
    /// holds the collection) is one or two lines of each, not the whole
    /// bucket. Of a full one, all high halves, and the first record and
    /// scores (bottom-k's largest, the lines an eviction reads first).
    #[inline]
    pub(super) fn prefetch(&self, b: usize) {
        let base = b * self.per;
        let n = self.len(b);
        let last = n.min(self.per - 1);
        let records = if n < self.per { n + 1 } else { 1 };
        prefetch_lines(&self.hi[base..=base + last]);
        prefetch_lines(&self.rec[base * self.rec_width..(base + records) * self.rec_width]);
        if !self.score.is_empty() {
            prefetch_lines(&self.score[base..=base + last]);
        }
        if !self.home.is_empty() {
            prefetch_lines(&self.home[base..base + records]);
        }
    }

    /// Position of `key`, whose whole-table bucket is `home`, in its live
    /// bucket, if present. Inlined into lookups and
    /// lucky updates, whose hot loop it is (a call costs more than the scan of
    /// a small bucket).
    #[inline(always)]
    pub(super) fn find(&self, home: usize, key: u64) -> Option<usize> {
        let b = home >> self.shift;
        let base = b * self.per;
        let n = self.len(b);
        let (lo, hi) = self.split(key);
        if let Ok(his) = <&[u16; 64]>::try_from(&self.hi[base..base + self.per]) {
            // The paper's 64 entries: the chunks of 16 that hold the fill,
            // compared whole (slots past the fill exist and are masked off),
            // so a bucket far from full reads one cache line.
            let mut mask = eq_mask16x64(his, hi, n.div_ceil(16));
            if n < 64 {
                mask &= (1 << n) - 1;
            }
            while mask != 0 {
                let j = mask.trailing_zeros() as usize;
                if self.lo_at(base + j) == lo && self.home_is(base + j, home) {
                    return Some(j);
                }
                mask &= mask - 1;
            }
            return None;
        }
        // Compare 16 high half-words at a time into a bit mask (vector
        // compares: half the loads and cache lines of the low words); check
        // the low word only on a match. When buckets are whole chunks of 16, a
        // bucket's last, partial chunk is compared whole too (its slots past
        // the fill exist) and masked to the fill.
        let recs = &self.rec[base * self.rec_width..(base + self.per) * self.rec_width];
        let lo_at = |j: usize| lo_of(&recs[j * self.rec_width..], self.lo_width);
        let his = &self.hi[base..base + self.per];
        let at_match = |at: usize, mut mask: u32| {
            while mask != 0 {
                let j = at + mask.trailing_zeros() as usize;
                if lo_at(j) == lo && self.home_is(base + j, home) {
                    return Some(j);
                }
                mask &= mask - 1;
            }
            None
        };
        let mut chunks = his[..n].chunks_exact(16);
        for (c, chunk) in (&mut chunks).enumerate() {
            let mask = eq_mask16(chunk.try_into().expect("16 half-words"), hi);
            if let Some(j) = at_match(16 * c, mask) {
                return Some(j);
            }
        }
        let at = n / 16 * 16;
        if at == n {
            return None;
        }
        if self.per.is_multiple_of(16) && n - at > 4 {
            // The bucket's slots past the fill exist: compare its last, partial
            // chunk whole, masked to the fill. (Not for a few half-words: a
            // whole chunk may straddle a second cache line, a miss in a big
            // table.)
            let chunk = &his[at..at + 16];
            let mask =
                eq_mask16(chunk.try_into().expect("16 half-words"), hi) & ((1 << (n - at)) - 1);
            return at_match(at, mask);
        }
        (at..n).find(|&j| his[j] == hi && lo_at(j) == lo && self.home_is(base + j, home))
    }

    /// A lookup of `key`, whose whole-table bucket is `home`, inserting
    /// `ins()` where it is not found (made only then). Inlined into the
    /// lookups of a document; a full bucket's eviction is a call of its own.
    #[inline(always)]
    pub(super) fn lookup(
        &mut self,
        home: usize,
        key: u64,
        ins: impl FnOnce() -> Insert,
        c: &mut Counters,
    ) -> (Option<Hit>, Slot) {
        let b = home >> self.shift;
        let base = b * self.per;
        let bottom_k = self.eviction == Eviction::BottomK;
        if bottom_k && self.len(b) == self.per && key & self.fp_mask > self.fp_at(base) {
            return (None, Slot::UNSAMPLED);
        }
        if let Some(i) = self.find(home, key) {
            let at = base + i;
            let hit = self.hit_at(at);
            let at = self.on_hit(b, i);
            return (
                Some(hit),
                Slot {
                    bucket: home as u32,
                    at: at as u32,
                },
            );
        }
        c.inserts += 1;
        let n = self.len(b);
        let mut at = if n < self.per {
            self.fill[b] += 1;
            c.occupied += 1;
            base + n
        } else {
            c.evictions += 1;
            self.evict(b, key)
        };
        self.write(at, key, ins());
        if self.shift > 0 {
            self.home[at] = home as u32;
            if n + 1 == self.per {
                at = self.grow_while_full(home);
            }
        }
        let b = home >> self.shift;
        self.mark(b);
        if bottom_k {
            self.largest_first(b);
        }
        (
            None,
            Slot {
                bucket: home as u32,
                at: at as u32,
            },
        )
    }

    /// Double the table until the live bucket of whole-table bucket `home`,
    /// just filled by an insert, has room or the whole table is live; the
    /// slot of the entry inserted, now its bucket's newest.
    #[cold]
    #[inline(never)]
    fn grow_while_full(&mut self, home: usize) -> usize {
        loop {
            self.grow();
            let b = home >> self.shift;
            let n = self.len(b);
            if self.shift == 0 || n < self.per {
                return b * self.per + n - 1;
            }
        }
    }

    /// Double the live buckets: bucket c's entries go, in order, to buckets
    /// 2c and 2c + 1 by their homes. From the last bucket down, so a bucket's
    /// halves (past it; bucket 0's first half is itself, compacted) overwrite
    /// only buckets already split. Growing tables have no scores.
    fn grow(&mut self) {
        let (old, per, w) = (self.live, self.per, self.rec_width);
        self.shift -= 1;
        self.live = live_buckets(self.n_buckets, self.shift);
        let keep_home = self.shift > 0;
        for c in (0..old).rev() {
            let (left, right) = (2 * c, 2 * c + 1);
            let mut fill = [0usize; 2];
            for from in c * per..c * per + self.len(c) {
                let half = usize::from(self.home[from] as usize >> self.shift != left);
                let to = (left + half) * per + fill[half];
                fill[half] += 1;
                if to != from {
                    self.hi[to] = self.hi[from];
                    self.rec.copy_within(from * w..(from + 1) * w, to * w);
                    if keep_home {
                        self.home[to] = self.home[from];
                    }
                }
            }
            self.fill[left] = fill[0] as u16;
            if right < self.live {
                self.fill[right] = fill[1] as u16;
            }
        }
        if !keep_home {
            self.home = Vec::new();
        }
        self.changed.fill(0);
        self.grew = true;
    }

    /// Under bottom-k, after an insert: a full bucket keeps its largest
    /// stored fingerprint at its first slot, so a larger key is known to be
    /// outside the sample without a scan.
    fn largest_first(&mut self, b: usize) {
        let base = b * self.per;
        if self.len(b) < self.per {
            return;
        }
        let largest = self.largest(base);
        if largest != base {
            self.swap(base, largest);
        }
    }

    /// Exchange the entries at slots `a` < `b`, in place.
    fn swap(&mut self, a: usize, b: usize) {
        let w = self.rec_width;
        self.hi.swap(a, b);
        let (left, right) = self.rec.split_at_mut(b * w);
        left[a * w..(a + 1) * w].swap_with_slice(&mut right[..w]);
        if !self.score.is_empty() {
            self.score.swap(a, b);
        }
        if !self.home.is_empty() {
            self.home.swap(a, b);
        }
    }

    /// The slot of the largest stored fingerprint of the full bucket at
    /// `base`. Of the paper's 64 entries, the largest high half first (a
    /// vector maximum over one array), then the largest low part among the
    /// entries that share it (most often one): a scan of every entry's
    /// whole fingerprint was half of a sampling pass's instructions.
    /// Fingerprints in a bucket are distinct (a second would be found), so
    /// the slot is the one a plain scan gives.
    fn largest(&self, base: usize) -> usize {
        let Ok(his) = <&[u16; 64]>::try_from(&self.hi[base..base + self.per]) else {
            return (base..base + self.per)
                .max_by_key(|&j| self.fp_at(j))
                .expect("a full bucket");
        };
        let top = max16x64(his);
        let mut mask = eq_mask16x64(his, top, 4);
        let mut best = None;
        while mask != 0 {
            let at = base + mask.trailing_zeros() as usize;
            best = best.max(Some((self.lo_at(at), at)));
            mask &= mask - 1;
        }
        best.expect("the largest high half is present").1
    }

    /// The stored bits of entry `at`'s fingerprint.
    #[inline]
    pub(super) fn fp_at(&self, at: usize) -> u64 {
        u64::from(self.hi[at]) << (8 * self.lo_width) | u64::from(self.lo_at(at))
    }

    /// Free the newest slot of full bucket `b` for a new entry (`key`),
    /// evicting.
    #[inline(never)]
    pub(super) fn evict(&mut self, b: usize, key: u64) -> usize {
        if self.eviction == Eviction::BottomK {
            // The largest, at the first slot; the ring never turns.
            return b * self.per;
        }
        let victim = self.victim(b, key);
        self.make_newest(b, victim, None)
    }

    /// Record layout: the fingerprint's low word, the origin (4 bytes each,
    /// little-endian), then the offset if the
    /// layout has one, then the previous and next unit's top bytes.
    pub(super) fn hit_at(&self, at: usize) -> Hit {
        let r = &self.rec[at * self.rec_width + self.lo_width..(at + 1) * self.rec_width];
        let origin = u32::from_le_bytes(r[..4].try_into().expect("4 bytes"));
        let mut rest = r[4..].iter().copied();
        let offset = if self.layout.offset {
            rest.next().unwrap_or(0)
        } else {
            0
        };
        let (prev, next) = if self.layout.neighbours {
            (rest.next().unwrap_or(0), rest.next().unwrap_or(0))
        } else {
            (0, 0)
        };
        Hit {
            origin,
            offset,
            prev,
            next,
        }
    }

    fn write(&mut self, at: usize, key: u64, e: Insert) {
        let (lo, hi) = self.split(key);
        self.hi[at] = hi;
        let (w, lw) = (self.rec_width, self.lo_width);
        let r = &mut self.rec[at * w..(at + 1) * w];
        put_lo(r, lw, lo);
        r[lw..lw + 4].copy_from_slice(&e.origin.to_le_bytes());
        let mut i = lw + 4;
        if self.layout.offset {
            r[i] = e.offset;
            i += 1;
        }
        if self.layout.neighbours {
            r[i] = e.prev;
            r[i + 1] = e.next;
        }
        if self.layout.score {
            self.score[at] = 1;
        }
    }

    /// Policy bookkeeping for a found entry; returns where it is afterwards.
    /// Inlined: under most evictions there is none.
    #[inline(always)]
    pub(super) fn on_hit(&mut self, b: usize, i: usize) -> usize {
        match self.eviction {
            Eviction::Random | Eviction::Lucky | Eviction::BottomK => b * self.per + i,
            Eviction::Lru => self.on_hit_lru(b, i),
            Eviction::Cc => self.on_hit_cc(b, i),
        }
    }

    /// LRU's found entry becomes the bucket's newest.
    #[inline(never)]
    fn on_hit_lru(&mut self, b: usize, i: usize) -> usize {
        self.mark(b);
        let entry = self.take(b * self.per + i);
        self.make_newest(b, self.age(b, i), Some(entry))
    }

    /// CC's found entry scores one more; a bucket with too many saturated
    /// scores halves them all.
    #[inline(never)]
    fn on_hit_cc(&mut self, b: usize, i: usize) -> usize {
        self.mark(b);
        let base = b * self.per;
        let at = base + i;
        let s = &mut self.score[at];
        if *s < 255 {
            *s += 1;
            if *s == 255 {
                let n = self.len(b);
                let bucket = &mut self.score[base..base + n];
                if bucket.iter().filter(|&&s| s == 255).count() >= CC_SATURATED {
                    bucket.iter_mut().for_each(|s| *s >>= 1);
                }
            }
        }
        at
    }

    /// Age (0 = oldest) of the entry to evict from full bucket `b` for `key`.
    pub(super) fn victim(&self, b: usize, key: u64) -> usize {
        let base = b * self.per;
        let n = self.per;
        match self.eviction {
            // Bottom-k's victim is its first slot, found by `evict`.
            Eviction::Lru | Eviction::BottomK => 0,
            // Drawn from the seed and the key inserted, not from a stream
            // shared by all buckets: a bucket's state then follows from the
            // operations on it alone, so the table can be split by bucket
            // range (`shard`) and give the answers it gives whole.
            Eviction::Random => {
                let draw = splitmix64(self.rng ^ key);
                ((u128::from(draw) * n as u128) >> 64) as usize
            }
            Eviction::Cc | Eviction::Lucky => {
                let scores = &self.score[base..base + n];
                // A branch-free fold the compiler vectorizes.
                let min = scores.iter().fold(u8::MAX, |m, &s| m.min(s));
                let head = self.head(b);
                if let Ok(all) = <&[u8; 64]>::try_from(scores) {
                    // The ring in age order is the mask rotated by the head:
                    // bit a is the entry of age a.
                    let by_age = eq_mask_64(all, min).rotate_right(head as u32);
                    return match self.ties {
                        Ties::Oldest => by_age.trailing_zeros() as usize,
                        Ties::Newest => 63 - by_age.leading_zeros() as usize,
                    };
                }
                let age = |slot: usize| {
                    if slot >= head {
                        slot - head
                    } else {
                        slot + n - head
                    }
                };
                match self.ties {
                    // In age order the ring starts at the head: the oldest
                    // tied entry is the first at or after it, else the first.
                    Ties::Oldest => {
                        let mut first = None;
                        for (at, m) in score_mask(scores, min).filter(|&(_, m)| m != 0) {
                            let after = if at + 64 <= head {
                                0
                            } else {
                                m >> head.saturating_sub(at) << head.saturating_sub(at)
                            };
                            if after != 0 {
                                return age(at + after.trailing_zeros() as usize);
                            }
                            first.get_or_insert(at + m.trailing_zeros() as usize);
                        }
                        age(first.expect("the minimum is present"))
                    }
                    // The newest tied entry is the last before the head, else
                    // the last.
                    Ties::Newest => {
                        let mut last = None;
                        for (at, m) in score_mask(scores, min).filter(|&(_, m)| m != 0) {
                            let before = if at >= head {
                                0
                            } else if head - at >= 64 {
                                m
                            } else {
                                m & ((1u64 << (head - at)) - 1)
                            };
                            if before != 0 {
                                last = Some((true, at + 63 - before.leading_zeros() as usize));
                            } else if last.is_none_or(|(early, _)| !early) {
                                last = Some((false, at + 63 - m.leading_zeros() as usize));
                            }
                        }
                        age(last.expect("the minimum is present").1)
                    }
                }
            }
        }
    }

    /// How many distinct keys bucket `b` was given, under bottom-k: its fill
    /// while it is not full; a full bucket holds the `per` smallest, so the
    /// largest of them, τ at its first slot, estimates the rest: (per − 1) /
    /// ((τ + 1) / 2^bits), the k-minimum-values estimate (Bar-Yossef et al.
    /// 2002). The stored bits are uniform within a bucket, which a mix of
    /// the whole key chose.
    pub(super) fn distinct_given(&self, b: usize) -> f64 {
        let n = self.len(b);
        if n < self.per {
            return n as f64;
        }
        let tau = self.fp_at(b * self.per) as f64 + 1.0;
        (self.per as f64 - 1.0) * (self.fp_mask as f64 + 1.0) / tau
    }

    /// The slots holding bucket `b`'s entries.
    pub(super) fn slots_of(&self, b: usize) -> std::ops::Range<usize> {
        b * self.per..b * self.per + self.len(b)
    }

    /// The slots holding entries, in bucket order (see [`occupied`]).
    pub(super) fn occupied_slots(&self) -> impl Iterator<Item = usize> + Clone + '_ {
        occupied(&self.fill[..self.live], self.per)
    }

    /// Entries in bucket `b`.
    #[inline]
    pub(super) fn len(&self, b: usize) -> usize {
        usize::from(self.fill[b]).min(self.per)
    }

    /// Slot (within the bucket) of the oldest entry.
    #[inline]
    pub(super) fn head(&self, b: usize) -> usize {
        usize::from(self.fill[b]).saturating_sub(self.per)
    }

    /// Age (0 = oldest) of the entry at slot `i` of bucket `b`.
    #[inline]
    pub(super) fn age(&self, b: usize, i: usize) -> usize {
        let head = self.head(b);
        if i >= head {
            i - head
        } else {
            i + self.per - head
        }
    }

    /// Absolute index of the entry of age `a` in bucket `b`.
    #[inline]
    pub(super) fn at_age(&self, b: usize, a: usize) -> usize {
        let s = self.head(b) + a;
        b * self.per + if s >= self.per { s - self.per } else { s }
    }

    /// Make the entry of age `a` the newest of bucket `b` (its content `entry`,
    /// or a free slot for a new entry when `entry` is `None`, evicting the old
    /// one), keeping the others in order; returns its index. Entries on the
    /// shorter side of `a` move by one slot; in a full bucket the older side
    /// moves towards `a` and the head advances, so evicting or refreshing the
    /// oldest moves nothing.
    pub(super) fn make_newest(&mut self, b: usize, a: usize, entry: Option<Entry>) -> usize {
        let n = self.len(b);
        let full = n == self.per;
        let at = if full && a < n - 1 - a {
            // Ages 0..a move one slot up (towards a); slot of age 0 frees.
            self.shift_ages(b, 0, a, true);
            let at = self.at_age(b, 0);
            let head = self.head(b) + 1;
            self.fill[b] = (self.per + if head == self.per { 0 } else { head }) as u16;
            at
        } else {
            // Ages a+1..n move one slot down; slot of age n-1 frees.
            self.shift_ages(b, a + 1, n, false);
            self.at_age(b, n - 1)
        };
        if let Some(e) = entry {
            self.put(at, e);
        }
        at
    }

    /// Move the entries of ages `from..to` one slot up (`up`) or down, as
    /// whole runs of slots: a run wraps around the ring at most once.
    pub(super) fn shift_ages(&mut self, b: usize, from: usize, to: usize, up: bool) {
        if from >= to {
            return;
        }
        let base = b * self.per;
        let (first, last) = (self.at_age(b, from), self.at_age(b, to - 1));
        let end = base + self.per;
        let wraps = first > last;
        if up {
            // The entry in the bucket's last slot moves to its first.
            if wraps || last == end - 1 {
                if wraps {
                    self.shift_run(base..last + 1, true, base);
                }
                self.move_slot(end - 1, base);
                self.shift_run(first..end - 1, true, base);
            } else {
                self.shift_run(first..last + 1, true, base);
            }
        } else if wraps || first == base {
            // The entry in the bucket's first slot moves to its last.
            if wraps {
                self.shift_run(first..end, false, base);
            }
            self.move_slot(base, end - 1);
            self.shift_run(base + 1..last + 1, false, base);
        } else {
            self.shift_run(first..last + 1, false, base);
        }
    }

    /// Move slots `run` one up or down (within the bucket starting at `base`).
    pub(super) fn shift_run(&mut self, run: std::ops::Range<usize>, up: bool, base: usize) {
        if run.is_empty() {
            return;
        }
        debug_assert!(run.start >= base && run.end <= base + self.per);
        let to = if up { run.start + 1 } else { run.start - 1 };
        let w = self.rec_width;
        self.hi.copy_within(run.clone(), to);
        self.rec.copy_within(run.start * w..run.end * w, to * w);
        if !self.score.is_empty() {
            self.score.copy_within(run.clone(), to);
        }
        if !self.home.is_empty() {
            self.home.copy_within(run, to);
        }
    }

    pub(super) fn move_slot(&mut self, from: usize, to: usize) {
        let w = self.rec_width;
        self.hi[to] = self.hi[from];
        self.rec.copy_within(from * w..(from + 1) * w, to * w);
        if !self.score.is_empty() {
            self.score[to] = self.score[from];
        }
        if !self.home.is_empty() {
            self.home[to] = self.home[from];
        }
    }

    pub(super) fn take(&self, at: usize) -> Entry {
        let w = self.rec_width;
        let mut rec = [0u8; 12];
        rec[..w].copy_from_slice(&self.rec[at * w..(at + 1) * w]);
        Entry {
            hi: self.hi[at],
            rec,
            score: self.score.get(at).copied().unwrap_or(0),
            home: self.home.get(at).copied().unwrap_or(0),
        }
    }

    pub(super) fn put(&mut self, at: usize, e: Entry) {
        let w = self.rec_width;
        self.hi[at] = e.hi;
        self.rec[at * w..(at + 1) * w].copy_from_slice(&e.rec[..w]);
        if !self.score.is_empty() {
            self.score[at] = e.score;
        }
        if let Some(h) = self.home.get_mut(at) {
            *h = e.home;
        }
    }

    #[inline(always)]
    pub(super) fn lucky_add(&mut self, key: u64, slot: Slot, inserted: bool, inc: u32) {
        if self.score.is_empty() {
            return;
        }
        let b = if slot.bucket == u32::MAX {
            self.bucket(key)
        } else {
            slot.bucket as usize
        };
        let base = b * self.per;
        let end = base + self.len(b);
        // The lookup's slot is right unless a later unit of the document
        // evicted an entry before it in the bucket; then search the bucket.
        let hint = slot.at as usize;
        let (lo, hi) = self.split(key);
        let at = if hint >= base && hint < end && self.lo_at(hint) == lo && self.hi[hint] == hi {
            hint
        } else {
            match self.find(b, key) {
                Some(i) => base + i,
                None => return,
            }
        };
        self.mark(b);
        let s = &mut self.score[at];
        // An inserted entry starts from 1, a found one from its score; as
        // arithmetic, since which it is follows the data, not a pattern.
        let start = u32::from(inserted) | (u32::from(*s) * u32::from(!inserted));
        *s = (start + inc).min(255) as u8;
        if self.touched_bits.is_empty() {
            self.touched_bits = vec![0; self.n_buckets.div_ceil(64)];
            // One more: a write past the last noted bucket is not counted.
            self.touched = vec![0; self.n_buckets + 1];
        }
        // Note the bucket once, without a branch on whether it was noted.
        let (word, bit) = (b / 64, 1u64 << (b % 64));
        let fresh = self.touched_bits[word] & bit == 0;
        self.touched_bits[word] |= bit;
        self.touched[self.n_touched] = b as u32;
        self.n_touched += usize::from(fresh);
    }

    pub(super) fn lucky_end_document(&mut self) {
        let touched = std::mem::take(&mut self.touched);
        // Buckets are halved independently of each other: any order will do.
        for &b in &touched[..self.n_touched] {
            self.touched_bits[b as usize / 64] = 0;
            let base = b as usize * self.per;
            let n = self.len(b as usize);
            let scores = &mut self.score[base..base + n];
            if byte_sum(scores) >= LUCKY_LIMIT * n as u32 {
                scores.iter_mut().for_each(|s| *s >>= 1);
            }
        }
        self.touched = touched;
        self.n_touched = 0;
    }
}

/// The low part of a fingerprint from the start of its record: `width` bytes
/// (4, or 2 when narrow), little-endian.
#[inline(always)]
fn lo_of(rec: &[u8], width: usize) -> u32 {
    if width == 4 {
        u32::from_le_bytes(rec[..4].try_into().expect("4 bytes"))
    } else {
        u32::from(u16::from_le_bytes(rec[..2].try_into().expect("2 bytes")))
    }
}

/// Write the low part `lo` at the start of `rec`, [`lo_of`]'s inverse. At
/// a fixed width: a copy of `width` bytes is a call of memcpy.
fn put_lo(rec: &mut [u8], width: usize, lo: u32) {
    if width == 4 {
        rec[..4].copy_from_slice(&lo.to_le_bytes());
    } else {
        rec[..2].copy_from_slice(&(lo as u16).to_le_bytes());
    }
}
