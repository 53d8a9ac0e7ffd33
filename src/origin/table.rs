//! The fixed-size bucketed hash table of seed 003 §2.2 (ALGORITHMS §3), and the
//! unbounded exact mode.
//!
//! The table owns exactly the memory `--table-size` names: buckets of
//! `bucket_entries` (64) entries, each entry `entry_bytes` wide, plus a 2-byte fill
//! count per bucket, all allocated once. Entries are stored in a few arrays
//! (fields scanned apart from the record) so a lookup scans the 2-byte high
//! fingerprint halves of one bucket.
//!
//! Within a bucket, entries stay in insertion order (oldest first) — LRU in
//! recency order instead — so the eviction tie rule needs no extra byte:
//! "oldest" is the first tied entry, "newest" the last.

use rayon::prelude::*;

use crate::bytesize::{format_bytes, parse_bytes};
use crate::fingerprint::top_byte;
use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::io::{self, Read, Write};
use std::str::FromStr;

/// Which entry leaves a full bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Eviction {
    /// A uniformly random entry (seeded, reproducible).
    Random,
    /// The least recently inserted or found entry.
    Lru,
    /// Copy-Count: the entry found least often.
    Cc,
    /// Lucky: the entry with the lowest lucky score (seed 003 §2.2, ALGORITHMS §4.3).
    Lucky,
}

/// Which of the entries tied for eviction goes (CC and Lucky).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Ties {
    #[default]
    Oldest,
    Newest,
}

/// The table's memory: a byte budget or no limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TableSize {
    Bytes(u64),
    Unbounded,
}

/// Which optional fields an entry carries; the estimation and eviction
/// algorithms decide (seed 003: "between 14 and 18 bytes"; ours use a 4-byte
/// document id, so 10 to 14).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    /// The unit's offset in its origin, mod 256 (bridging).
    pub offset: bool,
    /// The top bytes of the neighbouring units' keys in the origin (expansion).
    pub neighbours: bool,
    /// The copy count or lucky score (CC, Lucky).
    pub score: bool,
}

impl Layout {
    /// Bytes per entry: 6 (fingerprint) + 4 (origin) + the optional fields.
    pub fn entry_bytes(self) -> u64 {
        10 + u64::from(self.offset) + 2 * u64::from(self.neighbours) + u64::from(self.score)
    }
}

/// Everything that shapes a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TableParams {
    pub size: TableSize,
    pub bucket_entries: u16,
    pub eviction: Eviction,
    pub ties: Ties,
    pub layout: Layout,
    /// Seed of Random eviction.
    pub seed: u64,
}

/// What a found entry tells about its origin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hit {
    pub origin: u32,
    pub offset: u8,
    pub prev: u8,
    pub next: u8,
}

/// What a unit leaves in the table when it is not found: itself, as seen in
/// the document being processed.
pub type Insert = Hit;

/// Totals over the table's life.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Counters {
    pub lookups: u64,
    pub hits: u64,
    pub inserts: u64,
    pub evictions: u64,
    pub occupied: u64,
}

/// Where a lookup left its entry: a hint for the lucky update after the document
/// (entries may shift when a later unit evicts, so the hint is checked).
/// It carries the entry's bucket, so the update need not compute it again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    bucket: u32,
    at: u32,
}

impl Slot {
    /// No hint: the update finds the key's bucket and entry itself.
    pub const UNKNOWN: Slot = Slot {
        bucket: u32::MAX,
        at: u32::MAX,
    };
}

/// A table that cannot be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TableError {
    TooSmall {
        size: u64,
        bucket_bytes: u64,
    },
    /// More than the machine's memory: the allocation would fail (an abort)
    /// or the table would be swapped to death.
    TooLarge {
        size: u64,
        memory: u64,
    },
    BadBucket(u16),
}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TableError::TooSmall { size, bucket_bytes } => write!(
                f,
                "table size {} is smaller than one bucket ({bucket_bytes} bytes)",
                format_bytes(*size)
            ),
            TableError::TooLarge { size, memory } => write!(
                f,
                "table size {} is more than this machine's memory ({:.1} GiB)",
                format_bytes(*size),
                *memory as f64 / f64::from(1u32 << 30)
            ),
            TableError::BadBucket(n) => {
                write!(f, "bucket entries must be between 1 and 1024, not {n}")
            }
        }
    }
}

impl std::error::Error for TableError {}

/// The table: bucketed with eviction, or an unbounded map.
pub struct Table {
    store: Store,
    counters: Counters,
}

enum Store {
    Bucketed(Box<Buckets>),
    Unbounded(KeyMap<Hit>),
}

const FP48: u64 = (1 << 48) - 1;
/// CC halves a bucket's counts when this many reach 255 (seed 003).
const CC_SATURATED: usize = 10;
/// Lucky halves a bucket's scores when their mean reaches this (seed 003 (e)).
const LUCKY_LIMIT: u32 = 11;

impl TableParams {
    /// Buckets and entries per bucket of a bounded table of `size` bytes.
    fn geometry(&self, size: u64) -> Result<(usize, usize), TableError> {
        if self.bucket_entries == 0 || self.bucket_entries > 1024 {
            return Err(TableError::BadBucket(self.bucket_entries));
        }
        let per = usize::from(self.bucket_entries);
        let bucket_bytes = per as u64 * self.layout.entry_bytes() + 2;
        let n_buckets = size / bucket_bytes;
        if n_buckets == 0 {
            return Err(TableError::TooSmall { size, bucket_bytes });
        }
        let memory = physical_memory();
        let n_buckets = usize::try_from(n_buckets)
            .ok()
            .filter(|_| size <= memory)
            .ok_or(TableError::TooLarge { size, memory })?;
        Ok((n_buckets, per))
    }

    /// Whether a table can be built with these parameters, without building it.
    pub fn validate(&self) -> Result<(), TableError> {
        match self.size {
            TableSize::Unbounded => Ok(()),
            TableSize::Bytes(size) => self.geometry(size).map(|_| ()),
        }
    }

    /// Entries a bounded table holds.
    pub fn capacity(&self) -> Option<u64> {
        match self.size {
            TableSize::Unbounded => None,
            TableSize::Bytes(size) => self.geometry(size).ok().map(|(b, per)| (b * per) as u64),
        }
    }

    /// Whether a table of these parameters, sent lookups of only the keys
    /// `distinct` (no two alike), never evicts: no bucket is given more keys
    /// than it holds. Such a table misses each key once and finds it ever
    /// after, whatever its eviction policy.
    pub fn never_evicts(&self, distinct: &[u64]) -> bool {
        let TableSize::Bytes(size) = self.size else {
            return true;
        };
        let Ok((n_buckets, per)) = self.geometry(size) else {
            return false;
        };
        if distinct.len() <= per {
            return true;
        }
        if distinct.len() > n_buckets * per {
            return false;
        }
        let mut fill = vec![0u16; n_buckets];
        distinct.iter().all(|&key| {
            let f = &mut fill[bucket_of(key, n_buckets)];
            *f += 1;
            usize::from(*f) <= per
        })
    }
}

/// The bucket of a 62-bit key among `n_buckets`: its top bits, scaled to the
/// bucket count (multiply-shift, so any count works, not only powers of two).
#[inline]
fn bucket_of(key: u64, n_buckets: usize) -> usize {
    ((u128::from(key & ((1 << 62) - 1)) * n_buckets as u128) >> 62) as usize
}

/// The distinct keys of a key stream, and whether no two of them share the
/// 48 bits a bounded table stores (then which keys share a bucket cannot
/// change what is found).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DistinctKeys {
    pub keys: Vec<u64>,
    pub fingerprints_distinct: bool,
}

impl DistinctKeys {
    /// From a stream of `n` keys. One sort does both jobs: keys ordered by
    /// their stored 48 bits first and their top bits after (a bijection of
    /// 64 bits) put equal keys, and keys that share the stored bits, side by
    /// side.
    pub fn of(keys: impl IntoIterator<Item = u64>, n: usize) -> DistinctKeys {
        let fp_first = |k: u64| (k & FP48) << 16 | k >> 48;
        let mut v: Vec<u64> = Vec::with_capacity(n);
        v.extend(keys.into_iter().map(fp_first));
        v.par_sort_unstable();
        v.dedup();
        let fingerprints_distinct = v.windows(2).all(|w| (w[0] ^ w[1]) >> 16 != 0);
        let keys = v.iter().map(|&x| x >> 16 | (x & 0xffff) << 48).collect();
        DistinctKeys {
            keys,
            fingerprints_distinct,
        }
    }
}

impl Table {
    pub fn new(params: TableParams) -> Result<Table, TableError> {
        let store = match params.size {
            TableSize::Unbounded => Store::Unbounded(HashMap::default()),
            TableSize::Bytes(size) => Store::Bucketed(Box::new(Buckets::new(params, size)?)),
        };
        Ok(Table {
            store,
            counters: Counters::default(),
        })
    }

    /// Entries the table can hold; `None` when unbounded.
    pub fn capacity(&self) -> Option<u64> {
        match &self.store {
            Store::Bucketed(b) => Some(b.capacity() as u64),
            Store::Unbounded(_) => None,
        }
    }

    /// Number of buckets; `None` when unbounded.
    pub fn buckets(&self) -> Option<u64> {
        match &self.store {
            Store::Bucketed(b) => Some(b.n_buckets as u64),
            Store::Unbounded(_) => None,
        }
    }

    /// Bytes the table's storage occupies (bounded tables: at most the size asked for).
    pub fn memory_bytes(&self) -> Option<u64> {
        match &self.store {
            Store::Bucketed(b) => Some(b.memory_bytes()),
            Store::Unbounded(_) => None,
        }
    }

    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// Fill of every bucket, in bucket order (empty when unbounded).
    pub fn bucket_fill(&self) -> Vec<u16> {
        match &self.store {
            Store::Bucketed(b) => (0..b.n_buckets).map(|i| b.len(i) as u16).collect(),
            Store::Unbounded(_) => Vec::new(),
        }
    }

    /// Look `key` up; if it is absent, insert `ins` (evicting when the bucket is
    /// full). Returns what was found and where the entry now is.
    pub fn lookup(&mut self, key: u64, ins: Insert) -> (Option<Hit>, Slot) {
        self.counters.lookups += 1;
        let (hit, slot) = match &mut self.store {
            Store::Bucketed(bk) => bk.lookup(bk.bucket(key), key, ins, &mut self.counters),
            Store::Unbounded(map) => match map.entry(key) {
                std::collections::hash_map::Entry::Occupied(e) => (Some(*e.get()), Slot::UNKNOWN),
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(ins);
                    self.counters.inserts += 1;
                    self.counters.occupied += 1;
                    (None, Slot::UNKNOWN)
                }
            },
        };
        if hit.is_some() {
            self.counters.hits += 1;
        }
        (hit, slot)
    }

    /// [`Table::lookup`] of every key of document `doc` in order, each
    /// inserted as seed 003 stores a unit (its offset, its neighbours' top
    /// bytes): the answers into `hits` and `slots`. One call a document, so
    /// the lookups are one loop, each bucket computed once and fetched a few
    /// keys ahead (the keys of a document are known in advance).
    pub fn lookup_document(
        &mut self,
        doc: u32,
        keys: &[u64],
        hits: &mut Vec<Option<Hit>>,
        slots: &mut Vec<Slot>,
    ) {
        /// How far ahead of the current lookup a bucket is prefetched.
        const AHEAD: usize = 8;
        hits.clear();
        slots.clear();
        let ins = |i: usize| Hit {
            origin: doc,
            offset: i as u8,
            prev: if i > 0 { top_byte(keys[i - 1]) } else { 0 },
            next: keys.get(i + 1).map_or(0, |&k| top_byte(k)),
        };
        let Store::Bucketed(bk) = &mut self.store else {
            for (i, &key) in keys.iter().enumerate() {
                let (hit, slot) = self.lookup(key, ins(i));
                hits.push(hit);
                slots.push(slot);
            }
            return;
        };
        let c = &mut self.counters;
        let mut buckets = std::mem::take(&mut bk.scratch_buckets);
        buckets.clear();
        buckets.extend(keys.iter().map(|&k| bk.bucket(k) as u32));
        for (i, &key) in keys.iter().enumerate() {
            if let Some(&ahead) = buckets.get(i + AHEAD) {
                bk.prefetch(ahead as usize);
            }
            c.lookups += 1;
            let (hit, slot) = bk.lookup(buckets[i] as usize, key, ins(i), c);
            c.hits += u64::from(hit.is_some());
            hits.push(hit);
            slots.push(slot);
        }
        bk.scratch_buckets = buckets;
    }

    /// Lucky rules (a)–(d) for one unit after its document: if `key`'s entry is
    /// still in the table, set its score to 1 when the unit inserted it, then
    /// add `inc` (saturating at 255). No-op for tables without scores.
    pub fn lucky_add(&mut self, key: u64, slot: Slot, inserted: bool, inc: u32) {
        if let Store::Bucketed(b) = &mut self.store {
            b.lucky_add(key, slot, inserted, inc);
        }
    }

    /// [`Table::lucky_add`] for every unit of a document: `slots` and `hits`
    /// from its lookups, `incs` its increments.
    pub fn lucky_update(
        &mut self,
        keys: &[u64],
        slots: &[Slot],
        hits: &[Option<Hit>],
        incs: &[u32],
    ) {
        if let Store::Bucketed(b) = &mut self.store {
            for (((&key, &slot), hit), &inc) in keys.iter().zip(slots).zip(hits).zip(incs) {
                b.lucky_add(key, slot, hit.is_none(), inc);
            }
        }
    }

    /// Lucky rule (e) for every bucket touched since the last call: halve all
    /// scores of a bucket whose mean score reached the limit.
    pub fn lucky_end_document(&mut self) {
        if let Store::Bucketed(b) = &mut self.store {
            b.lucky_end_document();
        }
    }
}

/// The table's state as bytes, for the index's snapshot file (which adds its
/// own header and checksum). Little-endian; arrays as they are in memory.
impl Table {
    /// Write the whole state: counters, then the bucket arrays (or the map).
    pub fn write_state(&self, w: &mut impl Write) -> io::Result<()> {
        let c = self.counters;
        for v in [c.lookups, c.hits, c.inserts, c.evictions, c.occupied] {
            w.write_all(&v.to_le_bytes())?;
        }
        match &self.store {
            Store::Bucketed(b) => {
                w.write_all(&b.rng.to_le_bytes())?;
                w.write_all(&(b.n_buckets as u64).to_le_bytes())?;
                write_le(w, &b.fill, |x| x.to_le_bytes())?;
                // The low words live in the records; the format keeps them
                // an array of their own.
                let recs = b.rec.chunks_exact(b.rec_width);
                let lo: Vec<u8> = recs.clone().flat_map(|r| r[..4].to_vec()).collect();
                w.write_all(&lo)?;
                write_le(w, &b.hi, |x| x.to_le_bytes())?;
                let rest: Vec<u8> = recs.flat_map(|r| r[4..].to_vec()).collect();
                w.write_all(&rest)?;
                w.write_all(&b.score)
            }
            Store::Unbounded(map) => {
                w.write_all(&(map.len() as u64).to_le_bytes())?;
                let mut entries: Vec<(&u64, &Hit)> = map.iter().collect();
                entries.sort_unstable_by_key(|e| *e.0);
                for (k, h) in entries {
                    w.write_all(&k.to_le_bytes())?;
                    w.write_all(&h.origin.to_le_bytes())?;
                    w.write_all(&[h.offset, h.prev, h.next])?;
                }
                Ok(())
            }
        }
    }

    /// Rebuild a table of `params` from [`Table::write_state`]'s bytes. Fails
    /// (`InvalidData`) when the bytes do not fit these parameters.
    pub fn read_state(params: TableParams, r: &mut impl Read) -> io::Result<Table> {
        let mut t =
            Table::new(params).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        let mut c = [0u64; 5];
        for v in &mut c {
            *v = read_u64(r)?;
        }
        t.counters = Counters {
            lookups: c[0],
            hits: c[1],
            inserts: c[2],
            evictions: c[3],
            occupied: c[4],
        };
        let bad =
            |what: &str| io::Error::new(io::ErrorKind::InvalidData, format!("table state: {what}"));
        match &mut t.store {
            Store::Bucketed(b) => {
                b.rng = read_u64(r)?;
                if read_u64(r)? != b.n_buckets as u64 {
                    return Err(bad("bucket count differs"));
                }
                read_le(r, &mut b.fill, u16::from_le_bytes)?;
                let cap = b.hi.len();
                let mut lo = vec![0u8; 4 * cap];
                r.read_exact(&mut lo)?;
                read_le(r, &mut b.hi, u16::from_le_bytes)?;
                let mut rest = vec![0u8; cap * (b.rec_width - 4)];
                r.read_exact(&mut rest)?;
                let pieces = lo.chunks_exact(4).zip(rest.chunks_exact(b.rec_width - 4));
                for (rec, (l, o)) in b.rec.chunks_exact_mut(b.rec_width).zip(pieces) {
                    rec[..4].copy_from_slice(l);
                    rec[4..].copy_from_slice(o);
                }
                r.read_exact(&mut b.score)?;
                if b.fill.iter().any(|&f| usize::from(f) >= 2 * b.per) {
                    return Err(bad("bucket state out of range"));
                }
                let occupied: u64 = (0..b.n_buckets).map(|i| b.len(i) as u64).sum();
                if occupied != t.counters.occupied {
                    return Err(bad("occupancy differs from the counters"));
                }
            }
            Store::Unbounded(map) => {
                let n = read_u64(r)?;
                if n != t.counters.occupied {
                    return Err(bad("occupancy differs from the counters"));
                }
                map.reserve(n as usize);
                for _ in 0..n {
                    let k = read_u64(r)?;
                    let mut o = [0u8; 4];
                    r.read_exact(&mut o)?;
                    let mut rest = [0u8; 3];
                    r.read_exact(&mut rest)?;
                    map.insert(
                        k,
                        Hit {
                            origin: u32::from_le_bytes(o),
                            offset: rest[0],
                            prev: rest[1],
                            next: rest[2],
                        },
                    );
                }
            }
        }
        Ok(t)
    }
}

fn write_le<T: Copy, const N: usize>(
    w: &mut impl Write,
    v: &[T],
    f: impl Fn(T) -> [u8; N],
) -> io::Result<()> {
    let mut buf = Vec::with_capacity(v.len() * N);
    for &x in v {
        buf.extend_from_slice(&f(x));
    }
    w.write_all(&buf)
}

fn read_le<T, const N: usize>(
    r: &mut impl Read,
    v: &mut [T],
    f: impl Fn([u8; N]) -> T,
) -> io::Result<()> {
    let mut buf = vec![0u8; v.len() * N];
    r.read_exact(&mut buf)?;
    for (x, b) in v.iter_mut().zip(buf.chunks_exact(N)) {
        *x = f(b.try_into().expect("N bytes"));
    }
    Ok(())
}

fn read_u64(r: &mut impl Read) -> io::Result<u64> {
    let mut b = [0u8; 8];
    r.read_exact(&mut b)?;
    Ok(u64::from_le_bytes(b))
}

/// One entry's fields, while it moves within its bucket.
#[derive(Clone, Copy)]
struct Entry {
    hi: u16,
    rec: [u8; 12],
    score: u8,
}

/// The bucketed store: fields of entry `b * per + i` live at that index.
/// The fingerprints' high halves and the scores, which are scanned, have
/// arrays of their own; the low half, checked on a match, and what a hit
/// returns (origin, offset, neighbour bytes) are one record of `rec_width`
/// bytes, so a hit reads one line more and moving an entry moves 3 arrays.
struct Buckets {
    n_buckets: usize,
    per: usize,
    /// Per bucket: below `per`, the fill of a bucket not yet full (its
    /// entries at slots 0.. in insertion order); `per + h`, a full bucket kept
    /// as a ring whose oldest entry is at slot h. One u16 for both, so the
    /// ring costs no memory.
    fill: Vec<u16>,
    hi: Vec<u16>,
    rec: Vec<u8>,
    rec_width: usize,
    score: Vec<u8>,
    layout: Layout,
    eviction: Eviction,
    ties: Ties,
    rng: u64,
    /// Buckets given a lucky score since the last document ended, each once
    /// (the first `n_touched`; `touched_bits` marks them): scratch of the
    /// lucky update, not table memory.
    touched: Vec<u32>,
    n_touched: usize,
    touched_bits: Vec<u64>,
    /// The buckets of a document's keys, computed once per lookup of a
    /// document: scratch, not table memory.
    scratch_buckets: Vec<u32>,
}

impl Buckets {
    fn new(p: TableParams, size: u64) -> Result<Buckets, TableError> {
        let (n_buckets, per) = p.geometry(size)?;
        let cap = n_buckets * per;
        let opt = |on: bool| if on { zeroed::<u8>(cap) } else { Vec::new() };
        let rec_width = 8 + usize::from(p.layout.offset) + 2 * usize::from(p.layout.neighbours);
        Ok(Buckets {
            n_buckets,
            per,
            fill: zeroed(n_buckets),
            hi: zeroed(cap),
            rec: zeroed(cap * rec_width),
            rec_width,
            score: opt(p.layout.score),
            layout: p.layout,
            eviction: p.eviction,
            ties: p.ties,
            rng: p.seed ^ 0x9e37_79b9_7f4a_7c15,
            touched: Vec::new(),
            n_touched: 0,
            touched_bits: Vec::new(),
            scratch_buckets: Vec::new(),
        })
    }

    fn capacity(&self) -> usize {
        self.n_buckets * self.per
    }

    fn memory_bytes(&self) -> u64 {
        let vecs = [
            self.hi.len() * 2,
            self.rec.len(),
            self.score.len(),
            self.fill.len() * 2,
        ];
        vecs.iter().sum::<usize>() as u64
    }

    #[inline]
    fn bucket(&self, key: u64) -> usize {
        bucket_of(key, self.n_buckets)
    }

    /// The low word of entry `at`'s fingerprint (its record's first bytes).
    #[inline]
    fn lo_at(&self, at: usize) -> u32 {
        let r = &self.rec[at * self.rec_width..at * self.rec_width + 4];
        u32::from_le_bytes(r.try_into().expect("4 bytes"))
    }

    #[inline]
    fn prefetch(&self, b: usize) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            let base = b * self.per;
            let p = self.hi[base..].as_ptr().cast::<i8>();
            // SAFETY: a prefetch is only a hint; it never faults or changes memory,
            // and SSE is part of the x86_64 baseline.
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(p);
                // A bucket's high halves span two lines when it has 64 entries.
                _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(2 * self.per - 1));
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = b;
    }

    /// Position of `key` in bucket `b`, if present. Inlined into lookups and
    /// lucky updates, whose hot loop it is (a call costs more than the scan of
    /// a small bucket).
    #[inline(always)]
    fn find(&self, b: usize, key: u64) -> Option<usize> {
        let base = b * self.per;
        let n = self.len(b);
        let (lo, hi) = (key as u32, ((key & FP48) >> 32) as u16);
        if let Ok(his) = <&[u16; 64]>::try_from(&self.hi[base..base + self.per]) {
            // The paper's 64 entries: one mask of the whole bucket (its slots
            // past the fill exist and are masked off), no branch per chunk.
            let mut mask = eq_mask16x64(his, hi);
            if n < 64 {
                mask &= (1 << n) - 1;
            }
            while mask != 0 {
                let j = mask.trailing_zeros() as usize;
                if self.lo_at(base + j) == lo {
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
        let lo_at = |j: usize| {
            let r = &recs[j * self.rec_width..j * self.rec_width + 4];
            u32::from_le_bytes(r.try_into().expect("4 bytes"))
        };
        let his = &self.hi[base..base + self.per];
        let at_match = |at: usize, mut mask: u32| {
            while mask != 0 {
                let j = at + mask.trailing_zeros() as usize;
                if lo_at(j) == lo {
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
        (at..n).find(|&j| his[j] == hi && lo_at(j) == lo)
    }

    /// A lookup in bucket `b`. Inlined into the lookups of a document; a
    /// full bucket's eviction is a call of its own.
    #[inline(always)]
    fn lookup(&mut self, b: usize, key: u64, ins: Insert, c: &mut Counters) -> (Option<Hit>, Slot) {
        let base = b * self.per;
        if let Some(i) = self.find(b, key) {
            let at = base + i;
            let hit = self.hit_at(at);
            let at = self.on_hit(b, i);
            return (
                Some(hit),
                Slot {
                    bucket: b as u32,
                    at: at as u32,
                },
            );
        }
        c.inserts += 1;
        let n = self.len(b);
        let at = if n < self.per {
            self.fill[b] += 1;
            c.occupied += 1;
            base + n
        } else {
            c.evictions += 1;
            self.evict(b)
        };
        self.write(at, key, ins);
        (
            None,
            Slot {
                bucket: b as u32,
                at: at as u32,
            },
        )
    }

    /// Free the newest slot of full bucket `b` for a new entry, evicting.
    #[inline(never)]
    fn evict(&mut self, b: usize) -> usize {
        let victim = self.victim(b);
        self.make_newest(b, victim, None)
    }

    /// Record layout: the fingerprint's low word, the origin (4 bytes each,
    /// little-endian), then the offset if the
    /// layout has one, then the previous and next unit's top bytes.
    fn hit_at(&self, at: usize) -> Hit {
        let r = &self.rec[at * self.rec_width..(at + 1) * self.rec_width];
        let origin = u32::from_le_bytes(r[4..8].try_into().expect("4 bytes"));
        let mut rest = r[8..].iter().copied();
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
        self.hi[at] = ((key & FP48) >> 32) as u16;
        let w = self.rec_width;
        let r = &mut self.rec[at * w..(at + 1) * w];
        r[..4].copy_from_slice(&(key as u32).to_le_bytes());
        r[4..8].copy_from_slice(&e.origin.to_le_bytes());
        let mut i = 8;
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
    fn on_hit(&mut self, b: usize, i: usize) -> usize {
        let base = b * self.per;
        match self.eviction {
            Eviction::Random | Eviction::Lucky => base + i,
            Eviction::Lru => {
                let entry = self.take(base + i);
                self.make_newest(b, self.age(b, i), Some(entry))
            }
            Eviction::Cc => {
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
        }
    }

    /// Age (0 = oldest) of the entry to evict from full bucket `b`.
    fn victim(&mut self, b: usize) -> usize {
        let base = b * self.per;
        let n = self.per;
        match self.eviction {
            Eviction::Lru => 0,
            Eviction::Random => {
                self.rng = splitmix64(self.rng);
                ((u128::from(self.rng) * n as u128) >> 64) as usize
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

    /// Entries in bucket `b`.
    #[inline]
    fn len(&self, b: usize) -> usize {
        usize::from(self.fill[b]).min(self.per)
    }

    /// Slot (within the bucket) of the oldest entry.
    #[inline]
    fn head(&self, b: usize) -> usize {
        usize::from(self.fill[b]).saturating_sub(self.per)
    }

    /// Age (0 = oldest) of the entry at slot `i` of bucket `b`.
    #[inline]
    fn age(&self, b: usize, i: usize) -> usize {
        let head = self.head(b);
        if i >= head {
            i - head
        } else {
            i + self.per - head
        }
    }

    /// Absolute index of the entry of age `a` in bucket `b`.
    #[inline]
    fn at_age(&self, b: usize, a: usize) -> usize {
        let s = self.head(b) + a;
        b * self.per + if s >= self.per { s - self.per } else { s }
    }

    /// Make the entry of age `a` the newest of bucket `b` (its content `entry`,
    /// or a free slot for a new entry when `entry` is `None`, evicting the old
    /// one), keeping the others in order; returns its index. Entries on the
    /// shorter side of `a` move by one slot; in a full bucket the older side
    /// moves towards `a` and the head advances, so evicting or refreshing the
    /// oldest moves nothing.
    fn make_newest(&mut self, b: usize, a: usize, entry: Option<Entry>) -> usize {
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
    fn shift_ages(&mut self, b: usize, from: usize, to: usize, up: bool) {
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
    fn shift_run(&mut self, run: std::ops::Range<usize>, up: bool, base: usize) {
        if run.is_empty() {
            return;
        }
        debug_assert!(run.start >= base && run.end <= base + self.per);
        let to = if up { run.start + 1 } else { run.start - 1 };
        let w = self.rec_width;
        self.hi.copy_within(run.clone(), to);
        self.rec.copy_within(run.start * w..run.end * w, to * w);
        if !self.score.is_empty() {
            self.score.copy_within(run, to);
        }
    }

    fn move_slot(&mut self, from: usize, to: usize) {
        let w = self.rec_width;
        self.hi[to] = self.hi[from];
        self.rec.copy_within(from * w..(from + 1) * w, to * w);
        if !self.score.is_empty() {
            self.score[to] = self.score[from];
        }
    }

    fn take(&self, at: usize) -> Entry {
        let w = self.rec_width;
        let mut rec = [0u8; 12];
        rec[..w].copy_from_slice(&self.rec[at * w..(at + 1) * w]);
        Entry {
            hi: self.hi[at],
            rec,
            score: self.score.get(at).copied().unwrap_or(0),
        }
    }

    fn put(&mut self, at: usize, e: Entry) {
        let w = self.rec_width;
        self.hi[at] = e.hi;
        self.rec[at * w..(at + 1) * w].copy_from_slice(&e.rec[..w]);
        if !self.score.is_empty() {
            self.score[at] = e.score;
        }
    }

    #[inline(always)]
    fn lucky_add(&mut self, key: u64, slot: Slot, inserted: bool, inc: u32) {
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
        let at = if hint >= base
            && hint < end
            && self.lo_at(hint) == key as u32
            && self.hi[hint] == ((key & FP48) >> 32) as u16
        {
            hint
        } else {
            match self.find(b, key) {
                Some(i) => base + i,
                None => return,
            }
        };
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

    fn lucky_end_document(&mut self) {
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

/// The machine's physical memory in bytes (`u64::MAX` where unknown).
fn physical_memory() -> u64 {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sysconf reads system constants; no memory is passed.
        let (pages, page) = unsafe {
            (
                libc::sysconf(libc::_SC_PHYS_PAGES),
                libc::sysconf(libc::_SC_PAGESIZE),
            )
        };
        if pages > 0 && page > 0 {
            return (pages as u64).saturating_mul(page as u64);
        }
    }
    u64::MAX
}

/// A zeroed vector of `n` elements. Large ones are backed by huge pages where
/// the kernel offers them: a big table is touched at random, and 4 KiB pages
/// would cost a fault (and a TLB miss) per entry touched.
pub(crate) fn zeroed<T: Copy + Default>(n: usize) -> Vec<T> {
    let v = vec![T::default(); n];
    advise_huge_pages(&v);
    v
}

#[cfg(target_os = "linux")]
fn advise_huge_pages<T>(v: &[T]) {
    const HUGE: usize = 2 << 20;
    let start = v.as_ptr() as usize;
    let end = (start + std::mem::size_of_val(v)) & !(HUGE - 1);
    let aligned = (start + HUGE - 1) & !(HUGE - 1);
    if end > aligned {
        // SAFETY: advice about pages of our own live allocation; MADV_HUGEPAGE
        // changes neither their contents nor their validity.
        unsafe {
            libc::madvise(
                aligned as *mut libc::c_void,
                end - aligned,
                libc::MADV_HUGEPAGE,
            );
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages<T>(_: &[T]) {}

/// For each run of up to 64 scores, its start and a mask of the scores equal
/// to `v`.
fn score_mask(scores: &[u8], v: u8) -> impl Iterator<Item = (usize, u64)> + '_ {
    scores.chunks(64).enumerate().map(move |(c, chunk)| {
        let mask = match <&[u8; 64]>::try_from(chunk) {
            Ok(full) => eq_mask_64(full, v),
            Err(_) => chunk
                .iter()
                .enumerate()
                .fold(0u64, |m, (j, &s)| m | u64::from(s == v) << j),
        };
        (c * 64, mask)
    })
}

/// Bit j set iff `bytes[j] == v`. The compiler turns a plain loop into
/// byte-by-byte shifts, so on x86_64 this is four SSE2 compares and mask
/// extractions (SSE2 is part of the x86_64 baseline).
#[inline]
fn eq_mask_64(bytes: &[u8; 64], v: u8) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8,
        };
        let p = bytes.as_ptr().cast::<__m128i>();
        let mut mask = 0u64;
        // SAFETY: four unaligned 16-byte loads within the 64-byte array.
        unsafe {
            let k = _mm_set1_epi8(v as i8);
            for q in 0..4 {
                let m = _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(p.add(q)), k));
                mask |= u64::from(m as u16) << (16 * q);
            }
        }
        mask
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        bytes
            .iter()
            .enumerate()
            .fold(0u64, |m, (j, &s)| m | u64::from(s == v) << j)
    }
}

/// Bit j set iff `words[j] == v`, for a whole 64-entry bucket.
#[inline]
fn eq_mask16x64(words: &[u16; 64], v: u16) -> u64 {
    let mut mask = 0;
    for (q, chunk) in words.chunks_exact(16).enumerate() {
        mask |= u64::from(eq_mask16(chunk.try_into().expect("16 half-words"), v)) << (16 * q);
    }
    mask
}

/// The sum of `bytes` (SSE2 sums of absolute differences on x86_64: 16
/// bytes an instruction).
#[inline]
fn byte_sum(bytes: &[u8]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            __m128i, _mm_add_epi64, _mm_cvtsi128_si64, _mm_loadu_si128, _mm_sad_epu8,
            _mm_setzero_si128, _mm_unpackhi_epi64,
        };
        let chunks = bytes.chunks_exact(16);
        let tail: u32 = chunks.remainder().iter().map(|&x| u32::from(x)).sum();
        // SAFETY: each load reads one whole 16-byte chunk of the slice.
        let wide = unsafe {
            let zero = _mm_setzero_si128();
            let mut acc = zero;
            for c in chunks {
                let v = _mm_loadu_si128(c.as_ptr().cast::<__m128i>());
                acc = _mm_add_epi64(acc, _mm_sad_epu8(v, zero));
            }
            _mm_cvtsi128_si64(_mm_add_epi64(acc, _mm_unpackhi_epi64(acc, acc)))
        };
        wide as u32 + tail
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        bytes.iter().map(|&x| u32::from(x)).sum()
    }
}

/// Bit j set iff `words[j] == v` (SSE2 on x86_64, as [`eq_mask_64`]).
#[inline]
fn eq_mask16(words: &[u16; 16], v: u16) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            __m128i, _mm_cmpeq_epi16, _mm_loadu_si128, _mm_movemask_epi8, _mm_packs_epi16,
            _mm_set1_epi16,
        };
        let p = words.as_ptr().cast::<__m128i>();
        // SAFETY: two unaligned 16-byte loads within the 32-byte array. The
        // compares give 0 or -1 per half-word; a saturating pack keeps them 0
        // or -1 per byte, in order, for one mask extraction.
        unsafe {
            let k = _mm_set1_epi16(v as i16);
            let eq = |q: usize| _mm_cmpeq_epi16(_mm_loadu_si128(p.add(q)), k);
            _mm_movemask_epi8(_mm_packs_epi16(eq(0), eq(1))) as u32 & 0xffff
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let mut mask = 0;
        for (j, &w) in words.iter().enumerate() {
            mask |= u32::from(w == v) << j;
        }
        mask
    }
}

/// SplitMix64: a small, well-mixed PRNG step for Random eviction.
fn splitmix64(state: u64) -> u64 {
    let mut z = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Keys are already uniformly mixed 62-bit values: hashing them again is waste.
#[derive(Default)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        // Spread the top bits down: hashbrown takes its group tag from the top 7
        // bits and its index from the low ones.
        self.0 = n ^ (n >> 31);
    }
}

/// A map keyed by 62-bit keys, without rehashing them.
pub type KeyMap<V> = HashMap<u64, V, BuildHasherDefault<KeyHasher>>;

impl FromStr for Eviction {
    type Err = String;
    fn from_str(s: &str) -> Result<Eviction, String> {
        match s.to_ascii_lowercase().as_str() {
            "random" | "r" => Ok(Eviction::Random),
            "lru" => Ok(Eviction::Lru),
            "cc" | "copy-count" | "copycount" => Ok(Eviction::Cc),
            "lucky" | "ls" => Ok(Eviction::Lucky),
            _ => Err(format!(
                "unknown eviction '{s}' (expected random, lru, cc or lucky)"
            )),
        }
    }
}

impl fmt::Display for Eviction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Eviction::Random => "random",
            Eviction::Lru => "lru",
            Eviction::Cc => "cc",
            Eviction::Lucky => "lucky",
        })
    }
}

impl FromStr for Ties {
    type Err = String;
    fn from_str(s: &str) -> Result<Ties, String> {
        match s.to_ascii_lowercase().as_str() {
            "oldest" => Ok(Ties::Oldest),
            "newest" => Ok(Ties::Newest),
            _ => Err(format!(
                "unknown eviction tie rule '{s}' (expected oldest or newest)"
            )),
        }
    }
}

impl fmt::Display for Ties {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Ties::Oldest => "oldest",
            Ties::Newest => "newest",
        })
    }
}

impl FromStr for TableSize {
    type Err = String;
    /// `unbounded`, or a byte count with a unit: `20MB`, `64MiB`, `512KiB`, `900B`
    /// (KB/MB/GB are powers of 10, KiB/MiB/GiB of 2); a bare number is bytes.
    fn from_str(s: &str) -> Result<TableSize, String> {
        if s.eq_ignore_ascii_case("unbounded") {
            return Ok(TableSize::Unbounded);
        }
        parse_bytes(s).map(TableSize::Bytes)
    }
}

impl fmt::Display for TableSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TableSize::Unbounded => f.write_str("unbounded"),
            TableSize::Bytes(n) => f.write_str(&format_bytes(*n)),
        }
    }
}

/// The paper's table fractions (seed 003 Table 2, blogs: 20 MB … 5 GB), in
/// percent of all shingles.
pub const PAPER_FRACTIONS: [f64; 8] = [0.1, 0.3, 0.7, 1.4, 3.3, 6.8, 13.7, 34.2];

/// Eight table sizes that hold the paper's fractions of `shingles` in entries of
/// the widest kind (14 bytes), rounded up to whole KiB: the default sweep.
pub fn paper_sizes(shingles: u64) -> Vec<TableSize> {
    PAPER_FRACTIONS
        .iter()
        .map(|f| {
            let bytes = shingles as f64 * f / 100.0 * 14.0;
            TableSize::Bytes((bytes as u64 / 1024 + 1) * 1024)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(size: TableSize, eviction: Eviction, per: u16) -> TableParams {
        TableParams {
            size,
            bucket_entries: per,
            eviction,
            ties: Ties::Oldest,
            layout: Layout {
                offset: true,
                neighbours: true,
                score: matches!(eviction, Eviction::Cc | Eviction::Lucky),
            },
            seed: 7,
        }
    }

    fn ins(origin: u32) -> Insert {
        Hit {
            origin,
            offset: 3,
            prev: 4,
            next: 5,
        }
    }

    #[test]
    fn never_evicts_iff_no_bucket_overflows() {
        // Two buckets of 4 entries; keys spread by their top bits.
        let p = params(TableSize::Bytes(2 * (4 * 14 + 2)), Eviction::Lucky, 4);
        let low = |i: u64| i;
        let high = |i: u64| (1 << 61) | (100 + i);
        let keys: Vec<u64> = (0..4).map(low).chain((0..4).map(high)).collect();
        assert!(p.never_evicts(&keys));
        let keys: Vec<u64> = (0..5).map(low).chain((0..3).map(high)).collect();
        assert!(!p.never_evicts(&keys));
        let mut t = Table::new(p).unwrap();
        for &k in &keys {
            t.lookup(k, ins(0));
        }
        assert_eq!(t.counters().evictions, 1);
        assert!(params(TableSize::Unbounded, Eviction::Lru, 4).never_evicts(&keys));
    }

    proptest::proptest! {
        #[test]
        fn distinct_keys_are_the_set_and_tell_fingerprint_twins(
            keys in proptest::collection::vec(
                proptest::strategy::Strategy::prop_map((0u64..40, 0u64..3), |(low, high)| {
                    low | high << 50
                }),
                0..300,
            ),
        ) {
            let d = DistinctKeys::of(keys.iter().copied(), keys.len());
            let mut first = Vec::new();
            for &k in &keys {
                if !first.contains(&k) {
                    first.push(k);
                }
            }
            let mut ours = d.keys.clone();
            ours.sort_unstable();
            let mut want = first.clone();
            want.sort_unstable();
            proptest::prop_assert_eq!(ours, want);
            let twins = first
                .iter()
                .enumerate()
                .any(|(i, a)| first[..i].iter().any(|b| (a ^ b) & FP48 == 0));
            proptest::prop_assert_eq!(d.fingerprints_distinct, !twins);
        }
    }

    #[test]
    fn vector_masks_match_plain_compares() {
        let words: [u16; 16] = std::array::from_fn(|j| [7, u16::MAX, 0x8000][j % 3]);
        let bytes: [u8; 64] = std::array::from_fn(|j| [0, 255, 128, 3][(j * 7 + j / 5) % 4]);
        for v in [7, u16::MAX, 0x8000, 1] {
            let want = (0..16).fold(0, |m, j| m | u32::from(words[j] == v) << j);
            assert_eq!(eq_mask16(&words, v), want);
        }
        for v in [0, 255, 128, 3, 9] {
            let want = (0..64).fold(0, |m, j| m | u64::from(bytes[j] == v) << j);
            assert_eq!(eq_mask_64(&bytes, v), want);
        }
        let bucket: [u16; 64] = std::array::from_fn(|j| [7, u16::MAX, 0x8000, 7, 1][j % 5]);
        for v in [7, u16::MAX, 0x8000, 1, 2] {
            let want = (0..64).fold(0, |m, j| m | u64::from(bucket[j] == v) << j);
            assert_eq!(eq_mask16x64(&bucket, v), want);
        }
        for n in [0, 1, 15, 16, 17, 63, 64] {
            let want: u32 = bytes[..n].iter().map(|&b| u32::from(b)).sum();
            assert_eq!(byte_sum(&bytes[..n]), want, "{n} bytes");
        }
    }

    /// Keys that all fall into bucket 0 of a table with few buckets.
    fn key_in_bucket0(i: u64) -> u64 {
        i + 1
    }

    #[test]
    fn memory_is_what_the_size_says() {
        for size in [900u64, 4096, 14 * 64 + 2, 1 << 20, 20_000_000, 64 << 20] {
            for ev in [
                Eviction::Random,
                Eviction::Lru,
                Eviction::Cc,
                Eviction::Lucky,
            ] {
                let p = params(TableSize::Bytes(size), ev, 64);
                let Ok(t) = Table::new(p) else {
                    assert!(size < 64 * p.layout.entry_bytes() + 2);
                    continue;
                };
                let cap = t.capacity().unwrap();
                assert!(cap * p.layout.entry_bytes() <= size);
                assert!(t.memory_bytes().unwrap() <= size, "{size} {ev}");
                assert_eq!(
                    t.memory_bytes().unwrap(),
                    cap * p.layout.entry_bytes() + 2 * t.buckets().unwrap()
                );
                // No room left for another bucket.
                assert!(size - t.memory_bytes().unwrap() < 64 * p.layout.entry_bytes() + 2);
            }
        }
    }

    #[test]
    fn entry_bytes_follow_the_algorithms() {
        let l = |offset, neighbours, score| Layout {
            offset,
            neighbours,
            score,
        };
        assert_eq!(l(false, false, false).entry_bytes(), 10);
        assert_eq!(l(true, true, true).entry_bytes(), 14);
        assert_eq!(l(true, false, true).entry_bytes(), 12);
    }

    #[test]
    fn too_small_is_an_error() {
        let err = Table::new(params(TableSize::Bytes(100), Eviction::Lucky, 64))
            .err()
            .unwrap();
        assert!(err.to_string().contains("smaller than one bucket"));
    }

    #[test]
    fn first_origin_stays() {
        let mut t = Table::new(params(TableSize::Bytes(1 << 16), Eviction::Lucky, 64)).unwrap();
        assert_eq!(t.lookup(42, ins(0)).0, None);
        assert_eq!(t.lookup(42, ins(5)).0, Some(ins(0)));
        assert_eq!(t.lookup(42, ins(9)).0.unwrap().origin, 0);
        let c = t.counters();
        assert_eq!((c.lookups, c.hits, c.inserts, c.occupied), (3, 2, 1, 1));
    }

    fn one_bucket(ev: Eviction, ties: Ties, per: u16) -> Table {
        let mut p = params(TableSize::Bytes(0), ev, per);
        p.ties = ties;
        p.size = TableSize::Bytes(u64::from(per) * p.layout.entry_bytes() + 2);
        let t = Table::new(p).unwrap();
        assert_eq!(t.buckets(), Some(1));
        t
    }

    #[test]
    fn lru_evicts_least_recently_used() {
        let mut t = one_bucket(Eviction::Lru, Ties::Oldest, 4);
        for i in 0..4 {
            t.lookup(key_in_bucket0(i), ins(i as u32));
        }
        // Touch the oldest: now key 1 is least recent.
        assert!(t.lookup(key_in_bucket0(0), ins(9)).0.is_some());
        t.lookup(key_in_bucket0(10), ins(10));
        assert_eq!(t.counters().evictions, 1);
        assert!(t.lookup(key_in_bucket0(0), ins(9)).0.is_some());
        assert!(
            t.lookup(key_in_bucket0(1), ins(9)).0.is_none(),
            "key 1 was evicted"
        );
    }

    #[test]
    fn cc_evicts_least_copied_and_ties_by_age() {
        for (ties, gone) in [(Ties::Oldest, 1u64), (Ties::Newest, 3)] {
            let mut t = one_bucket(Eviction::Cc, ties, 4);
            for i in 0..4 {
                t.lookup(key_in_bucket0(i), ins(i as u32));
            }
            t.lookup(key_in_bucket0(0), ins(9)); // count 2; 1, 2, 3 tie at 1
            t.lookup(key_in_bucket0(10), ins(10));
            let mut present: Vec<u64> = (0..4)
                .filter(|&i| {
                    let b = match &t.store {
                        Store::Bucketed(b) => b,
                        _ => unreachable!(),
                    };
                    b.find(0, key_in_bucket0(i)).is_some()
                })
                .collect();
            present.sort();
            let expect: Vec<u64> = (0..4).filter(|&i| i != gone).collect();
            assert_eq!(present, expect, "{ties}");
        }
    }

    #[test]
    fn cc_halves_when_ten_saturate() {
        let mut t = one_bucket(Eviction::Cc, Ties::Oldest, 16);
        for i in 0..10 {
            t.lookup(key_in_bucket0(i), ins(0));
        }
        for _ in 0..254 {
            for i in 0..9 {
                t.lookup(key_in_bucket0(i), ins(0));
            }
        }
        let b = match &t.store {
            Store::Bucketed(b) => b,
            _ => unreachable!(),
        };
        assert!(b.score[..9].iter().all(|&s| s == 255));
        for _ in 0..254 {
            t.lookup(key_in_bucket0(9), ins(0));
        }
        let b = match &t.store {
            Store::Bucketed(b) => b,
            _ => unreachable!(),
        };
        assert_eq!(&b.score[..10], &[127; 10]);
    }

    #[test]
    fn random_eviction_is_seeded() {
        let run = |seed| {
            let mut p = params(TableSize::Bytes(0), Eviction::Random, 8);
            p.size = TableSize::Bytes(8 * p.layout.entry_bytes() + 2);
            p.seed = seed;
            let mut t = Table::new(p).unwrap();
            for i in 0..100 {
                t.lookup(key_in_bucket0(i), ins(i as u32));
            }
            let Store::Bucketed(b) = &t.store else {
                unreachable!()
            };
            (0..100)
                .filter(|&i| b.find(0, key_in_bucket0(i)).is_some())
                .collect::<Vec<_>>()
        };
        assert_eq!(run(1), run(1));
        assert_ne!(run(1), run(2));
    }

    #[test]
    fn lucky_scores_protect_and_halve() {
        let mut t = one_bucket(Eviction::Lucky, Ties::Oldest, 4);
        let mut slots = vec![];
        for i in 0..4 {
            slots.push(t.lookup(key_in_bucket0(i), ins(0)).1);
        }
        // Key 0 gets a big score; the rest keep 1.
        t.lucky_add(key_in_bucket0(0), slots[0], true, 5);
        t.lucky_end_document();
        t.lookup(key_in_bucket0(10), ins(1));
        let present = |t: &Table, i| match &t.store {
            Store::Bucketed(b) => b.find(0, key_in_bucket0(i)).is_some(),
            _ => unreachable!(),
        };
        assert!(present(&t, 0));
        assert!(!present(&t, 1), "oldest of the score-1 entries goes");
        // A stale slot hint still finds the key after the shift.
        t.lucky_add(key_in_bucket0(0), slots[0], false, 250);
        let score0 = |t: &Table| match &t.store {
            Store::Bucketed(b) => b.score[b.find(0, key_in_bucket0(0)).unwrap()],
            _ => unreachable!(),
        };
        assert_eq!(score0(&t), 255);
        // Mean 1+255+1+1 / 4 >= 11: halving.
        t.lucky_end_document();
        assert_eq!(score0(&t), 127);
    }

    #[test]
    fn unbounded_never_evicts() {
        let mut t = Table::new(params(TableSize::Unbounded, Eviction::Lucky, 64)).unwrap();
        for i in 0..10_000u64 {
            t.lookup(i * 0x9e37_79b9, ins(i as u32));
        }
        for i in 0..10_000u64 {
            assert_eq!(
                t.lookup(i * 0x9e37_79b9, ins(0)).0.unwrap().origin,
                i as u32
            );
        }
        assert_eq!(t.counters().evictions, 0);
        assert_eq!(t.capacity(), None);
    }

    #[test]
    fn state_round_trips_and_continues_identically() {
        for size in [TableSize::Bytes(3 * (64 * 14 + 2)), TableSize::Unbounded] {
            for ev in [Eviction::Random, Eviction::Lucky] {
                let p = params(size, ev, 64);
                let mut a = Table::new(p).unwrap();
                let mut x = 5u64;
                let mut next_key = || {
                    x = splitmix64(x);
                    (x >> 2) % 5000
                };
                for i in 0..2000 {
                    a.lookup(next_key(), ins(i));
                }
                let mut bytes = vec![];
                a.write_state(&mut bytes).unwrap();
                let mut b = Table::read_state(p, &mut bytes.as_slice()).unwrap();
                assert_eq!(a.counters(), b.counters());
                for i in 0..2000 {
                    let k = next_key();
                    assert_eq!(a.lookup(k, ins(i)).0, b.lookup(k, ins(i)).0);
                }
                assert_eq!(a.counters(), b.counters());
                // Truncated or mismatched state is refused.
                assert!(Table::read_state(p, &mut &bytes[..bytes.len() - 1]).is_err());
                if let TableSize::Bytes(_) = size {
                    let other = params(TableSize::Bytes(2 * (64 * 14 + 2)), ev, 64);
                    assert!(Table::read_state(other, &mut bytes.as_slice()).is_err());
                }
            }
        }
    }

    /// The semantics of ALGORITHMS §3 written plainly: a bucket is a Vec in
    /// insertion order (LRU: recency order); eviction removes and appends.
    struct Model {
        buckets: Vec<Vec<(u64, Hit, u8)>>,
        per: usize,
        eviction: Eviction,
        ties: Ties,
        rng: u64,
    }

    impl Model {
        fn lookup(&mut self, b: usize, key: u64, ins: Insert) -> Option<Hit> {
            let bucket = &mut self.buckets[b];
            if let Some(i) = bucket.iter().position(|e| e.0 == key) {
                let hit = bucket[i].1;
                match self.eviction {
                    Eviction::Lru => {
                        let e = bucket.remove(i);
                        bucket.push(e);
                    }
                    Eviction::Cc if bucket[i].2 < 255 => {
                        bucket[i].2 += 1;
                        if bucket[i].2 == 255 && bucket.iter().filter(|e| e.2 == 255).count() >= 10
                        {
                            bucket.iter_mut().for_each(|e| e.2 >>= 1);
                        }
                    }
                    _ => {}
                }
                return Some(hit);
            }
            if bucket.len() == self.per {
                let v = match self.eviction {
                    Eviction::Lru => 0,
                    Eviction::Random => {
                        self.rng = splitmix64(self.rng);
                        ((u128::from(self.rng) * self.per as u128) >> 64) as usize
                    }
                    _ => {
                        let min = bucket.iter().map(|e| e.2).min().unwrap();
                        match self.ties {
                            Ties::Oldest => bucket.iter().position(|e| e.2 == min),
                            Ties::Newest => bucket.iter().rposition(|e| e.2 == min),
                        }
                        .unwrap()
                    }
                };
                bucket.remove(v);
            }
            bucket.push((key, ins, 1));
            None
        }
    }

    proptest::proptest! {
        #[test]
        fn buckets_behave_as_the_plain_model(
            ops in proptest::collection::vec((0u64..90, 0u8..4), 1..1500),
            per in proptest::sample::select(vec![3u16, 8, 64, 70, 130]),
            ev in 0usize..4,
            newest in proptest::bool::ANY,
        ) {
            let eviction = [Eviction::Random, Eviction::Lru, Eviction::Cc, Eviction::Lucky][ev];
            let ties = if newest { Ties::Newest } else { Ties::Oldest };
            let mut p = params(TableSize::Bytes(0), eviction, per);
            p.ties = ties;
            p.size = TableSize::Bytes(2 * (u64::from(per) * p.layout.entry_bytes() + 2));
            let mut t = Table::new(p).unwrap();
            let Store::Bucketed(bk) = &t.store else { unreachable!() };
            assert_eq!(bk.n_buckets, 2);
            let mut m = Model {
                buckets: vec![Vec::new(); 2],
                per: usize::from(per),
                eviction,
                ties,
                rng: p.seed ^ 0x9e37_79b9_7f4a_7c15,
            };
            for (n, &(k, op)) in ops.iter().enumerate() {
                // Keys 1..=90 in bucket 0, their top-bit twins in bucket 1.
                let (key, b) = if k % 2 == 0 { (k + 1, 0) } else { ((1 << 61) + k, 1) };
                if op == 3 && eviction == Eviction::Lucky {
                    // A lucky update of a key, wherever it is now.
                    let inc = (n % 5) as u32;
                    t.lucky_add(key, Slot::UNKNOWN, false, inc);
                    if let Some(e) = m.buckets[b].iter_mut().find(|e| e.0 == key) {
                        e.2 = (u32::from(e.2) + inc).min(255) as u8;
                    }
                    continue;
                }
                let ins = Hit { origin: n as u32, offset: op, prev: 1, next: 2 };
                proptest::prop_assert_eq!(t.lookup(key, ins).0, m.lookup(b, key, ins));
            }
            // Same entries, same scores, in the same order (oldest first).
            let Store::Bucketed(bk) = &t.store else { unreachable!() };
            for b in 0..2 {
                let ours: Vec<(u32, u8)> = (0..bk.len(b))
                    .map(|a| {
                        let at = bk.at_age(b, a);
                        (bk.lo_at(at), bk.score.get(at).copied().unwrap_or(1))
                    })
                    .collect();
                let model: Vec<(u32, u8)> = m.buckets[b].iter().map(|e| (e.0 as u32, e.2)).collect();
                proptest::prop_assert_eq!(ours, model);
            }
        }
    }

    #[test]
    fn sizes_parse_and_print() {
        let b = |s: &str| s.parse::<TableSize>().unwrap();
        assert_eq!(b("64MiB"), TableSize::Bytes(64 << 20));
        assert_eq!(b("20MB"), TableSize::Bytes(20_000_000));
        assert_eq!(b("512kib"), TableSize::Bytes(512 << 10));
        assert_eq!(b("1.5KiB"), TableSize::Bytes(1536));
        assert_eq!(b("900"), TableSize::Bytes(900));
        assert_eq!(b("Unbounded"), TableSize::Unbounded);
        assert!("12 parsecs".parse::<TableSize>().is_err());
        assert!("".parse::<TableSize>().is_err());
        for n in [64u64 << 20, 20_000_000, 1536, 900, 3 << 30] {
            assert_eq!(b(&format_bytes(n)), TableSize::Bytes(n));
        }
        assert_eq!(format_bytes(64 << 20), "64MiB");
        assert_eq!(format_bytes(20_000_000), "20MB");
    }

    #[test]
    fn every_bucket_is_reachable() {
        let p = params(TableSize::Bytes(1000 * (64 * 14 + 2)), Eviction::Lucky, 64);
        let t = Table::new(p).unwrap();
        let Store::Bucketed(b) = &t.store else {
            unreachable!()
        };
        assert_eq!(b.n_buckets, 1000);
        let mut seen = vec![false; 1000];
        let mut x = 1u64;
        for _ in 0..100_000 {
            x = splitmix64(x);
            seen[b.bucket(x >> 2)] = true;
        }
        assert!(seen.iter().all(|&s| s));
        assert_eq!(b.bucket((1 << 62) - 1), 999);
        assert_eq!(b.bucket(0), 0);
    }
}
