//! The fixed-size bucketed hash table of Abdel-Hamid et al. 2009 §2.2 (docs/algorithms.md §3), and the
//! unbounded exact mode.
//!
//! The table owns exactly the memory `--table-size` names: buckets of
//! `bucket_entries` (64) entries, each entry `entry_bytes` wide, plus a 2-byte fill
//! count per bucket, all allocated (as address space) once and committed as
//! the table grows into them (`buckets`). Entries are stored in a few arrays
//! (fields scanned apart from the record) so a lookup scans the 2-byte high
//! fingerprint halves of one bucket.
//!
//! Within a bucket, entries stay in insertion order (oldest first) — LRU in
//! recency order instead — so the eviction tie rule needs no extra byte:
//! "oldest" is the first tied entry, "newest" the last.
//!
//! Where things are: the settings as people write them (`settings`), the
//! bucket store and its eviction rules (`buckets`), the vector compares they
//! scan with (`simd`), memory (`memory`), the saved state (`state`).

mod buckets;
mod memory;
mod settings;
mod shard;
mod simd;
mod state;
#[cfg(test)]
mod tests;

use std::fmt;

use rayon::prelude::*;

use lineage_core::bytesize::format_bytes;
use lineage_core::fingerprint::top_byte;

pub(crate) use super::keymap::KeyMap;
use buckets::Buckets;
use memory::{MAP_AHEAD, physical_memory};
pub(crate) use memory::{prefetch, zeroed};
pub use settings::{PAPER_FRACTIONS, paper_sizes};
pub use shard::{Ranges, Shard};

/// Which entry leaves a full bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Eviction {
    /// A uniformly random entry (seeded, reproducible).
    Random,
    /// The least recently inserted or found entry.
    Lru,
    /// Copy-Count: the entry found least often.
    Cc,
    /// Lucky: the entry with the lowest lucky score (Abdel-Hamid et al. 2009 §2.2, docs/algorithms.md §4.3).
    Lucky,
    /// Bottom-k: each bucket keeps the keys with the smallest fingerprints it
    /// was given (a consistent sample, Cohen & Kaplan 2007); a larger key is
    /// not admitted to a full bucket (docs/algorithms.md §3).
    BottomK,
}

/// Which of the entries tied for eviction goes (CC and Lucky).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Ties {
    /// The oldest tied entry goes (the usual LFU rule; the default).
    #[default]
    Oldest,
    /// The newest tied entry goes.
    Newest,
}

/// The table's memory: a byte budget or no limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TableSize {
    /// At most this many bytes (`--table-size`): bucketed, with eviction.
    Bytes(u64),
    /// No limit: an unbounded map that never evicts (the exact mode).
    Unbounded,
}

/// Which optional fields an entry carries; the estimation and eviction
/// algorithms decide (Abdel-Hamid et al. 2009: "between 14 and 18 bytes"; ours use a 4-byte
/// document id, so 10 to 14, or 8 to 11 with bottom-k's narrow fingerprints).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    /// The unit's offset in its origin, mod 256 (bridging).
    pub offset: bool,
    /// The top bytes of the neighbouring units' keys in the origin (expansion).
    pub neighbours: bool,
    /// The copy count or lucky score (CC, Lucky).
    pub score: bool,
    /// 32 stored fingerprint bits instead of 48 (bottom-k): two bytes less
    /// an entry, at most `bucket_entries`·2^-32 false matches a lookup.
    pub narrow: bool,
}

impl Layout {
    /// Bytes per entry: 6 (fingerprint; 4 when narrow) + 4 (origin) + the
    /// optional fields.
    pub fn entry_bytes(self) -> u64 {
        10 - 2 * u64::from(self.narrow)
            + u64::from(self.offset)
            + 2 * u64::from(self.neighbours)
            + u64::from(self.score)
    }

    /// How many bits of a key an entry stores.
    pub(crate) fn fingerprint_bits(self) -> u32 {
        if self.narrow { 32 } else { 48 }
    }
}

/// Everything that shapes a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TableParams {
    /// Its memory: a byte budget or no limit.
    pub size: TableSize,
    /// Entries per bucket (64 by default; 1 to 1024).
    pub bucket_entries: u16,
    /// Which entry leaves a full bucket.
    pub eviction: Eviction,
    /// Which tied entry goes (CC and Lucky).
    pub ties: Ties,
    /// Which optional fields an entry carries.
    pub layout: Layout,
    /// Seed of Random eviction.
    pub seed: u64,
}

/// What a found entry tells about its origin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hit {
    /// The document that left the entry: the unit's origin.
    pub origin: u32,
    /// The unit's offset in its origin, mod 256 (bridging).
    pub offset: u8,
    /// The top byte of the previous unit's key in the origin (0 at its
    /// start; expansion).
    pub prev: u8,
    /// The top byte of the next unit's key in the origin (0 at its end;
    /// expansion).
    pub next: u8,
}

impl Hit {
    /// What unit `i` of document `doc` (keys `keys`) leaves in the table
    /// when it is not found: its offset mod 256 and its neighbours' top
    /// bytes.
    pub fn of_unit(doc: u32, keys: &[u64], i: usize) -> Hit {
        Hit {
            origin: doc,
            offset: i as u8,
            prev: if i > 0 { top_byte(keys[i - 1]) } else { 0 },
            next: keys.get(i + 1).map_or(0, |&k| top_byte(k)),
        }
    }
}

/// What a unit leaves in the table when it is not found: itself, as seen in
/// the document being processed.
pub(crate) type Insert = Hit;

/// Totals over the table's life.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Counters {
    /// Keys looked up.
    pub lookups: u64,
    /// Lookups that found their key.
    pub hits: u64,
    /// Keys stored when not found (evicting or not); a lookup neither hit
    /// nor insert was left outside its bucket's sample (bottom-k).
    pub inserts: u64,
    /// Entries evicted to make room.
    pub evictions: u64,
    /// Entries held now.
    pub occupied: u64,
}

/// What a table's answers are worth: whether it still holds every distinct
/// key it was given (docs/algorithms.md §3.1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Regime {
    /// Nothing was evicted or left outside a sample: every distinct key
    /// looked up is held, so every lookup was answered as an unbounded table
    /// answers it (up to the false-match bound). `distinct` keys are held.
    Holds {
        /// The distinct keys held.
        distinct: u64,
    },
    /// Bottom-k past its capacity: each bucket keeps the smallest keys it
    /// was given. `distinct` estimates the keys given, `held` are kept.
    Sampling {
        /// The distinct keys given, estimated from the buckets' samples.
        distinct: u64,
        /// The keys kept.
        held: u64,
    },
    /// Another eviction rule has dropped `evictions` entries.
    Evicting {
        /// The entries evicted.
        evictions: u64,
    },
}

/// An empty table holds everything it was given.
impl Default for Regime {
    fn default() -> Regime {
        Regime::Holds { distinct: 0 }
    }
}

impl Regime {
    /// The regime of a table whose lookups counted `c`. `terms`, for
    /// bottom-k, are its buckets' estimates of the keys each was given, in
    /// bucket order (read only when it samples): their sum estimates the
    /// distinct keys. The one rule for a whole table and for the shards of
    /// a split pass run on many machines, which is never joined.
    pub fn of(c: Counters, terms: Option<impl Iterator<Item = f64>>) -> Regime {
        let not_sampled = c.lookups - c.hits - c.inserts;
        if c.evictions == 0 && not_sampled == 0 {
            return Regime::Holds {
                distinct: c.occupied,
            };
        }
        match terms {
            Some(terms) => Regime::Sampling {
                distinct: terms.sum::<f64>().round() as u64,
                held: c.occupied,
            },
            None => Regime::Evicting {
                evictions: c.evictions,
            },
        }
    }

    /// Distinct keys per key held, about (1 while the table holds all).
    pub fn one_in(&self) -> Option<f64> {
        match *self {
            Regime::Holds { .. } => Some(1.0),
            Regime::Sampling { distinct, held } => Some(distinct as f64 / held.max(1) as f64),
            Regime::Evicting { .. } => None,
        }
    }

    /// As JSON names it (docs/formats.md, `table.regime`): "exact" only
    /// while the table holds every key and that is the exact answer
    /// (`exact_when_held`, [`Params::exact_when_held`]); "holds" while it
    /// holds every selected unit of a run whose answer is estimated all
    /// the same; "sampling" or "evicting".
    ///
    /// [`Params::exact_when_held`]: crate::Params::exact_when_held
    pub fn name(&self, exact_when_held: bool) -> &'static str {
        match self {
            Regime::Holds { .. } if exact_when_held => "exact",
            Regime::Holds { .. } => "holds",
            Regime::Sampling { .. } => "sampling",
            Regime::Evicting { .. } => "evicting",
        }
    }

    /// The sentence the Table pane and `scan` show, numbers written by
    /// `n`. Keys are "shingles" when every shingle is selected, else
    /// "selected units"; "exact" only when `exact_when_held` (as
    /// [`Regime::name`] says): bridging or expansion label fresh shingles
    /// copied even while the table holds them all.
    pub fn describe(
        &self,
        every_shingle: bool,
        exact_when_held: bool,
        n: impl Fn(u64) -> String,
    ) -> String {
        let units = if every_shingle {
            "shingles"
        } else {
            "selected units"
        };
        match *self {
            Regime::Holds { distinct } if exact_when_held => {
                format!("holds all {} distinct {units}: exact", n(distinct))
            }
            Regime::Holds { distinct } => format!("holds all {} distinct {units}", n(distinct)),
            Regime::Sampling { distinct, .. } => format!(
                "sampling about 1 in {:.1} of ~{} distinct {units}: the smallest keys of each bucket",
                self.one_in().unwrap_or(1.0),
                n(distinct)
            ),
            Regime::Evicting { evictions } => {
                format!(
                    "full: {} entries evicted, their origins forgotten",
                    n(evictions)
                )
            }
        }
    }
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
    pub(crate) const UNKNOWN: Slot = Slot {
        bucket: u32::MAX,
        at: u32::MAX,
    };

    /// The key was outside its bucket's sample (bottom-k): neither found nor
    /// stored, so its absence says nothing about whether it was seen.
    pub(crate) const UNSAMPLED: Slot = Slot {
        bucket: u32::MAX,
        at: u32::MAX - 1,
    };

    /// Whether the key was looked up in its bucket's sample: found,
    /// stored, or (every eviction but bottom-k) always.
    pub fn sampled(self) -> bool {
        self != Slot::UNSAMPLED
    }

    /// A slot that says only whether the key was sampled, with no hint:
    /// what a shard's answer carries back to the document's owner (the
    /// lucky update, which reads hints, is not run on shards).
    pub fn of_sample(sampled: bool) -> Slot {
        if sampled {
            Slot::UNKNOWN
        } else {
            Slot::UNSAMPLED
        }
    }
}

/// A table that cannot be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TableError {
    /// Smaller than one bucket.
    TooSmall {
        /// The size asked for, bytes.
        size: u64,
        /// The bytes of one bucket (its entries and fill count).
        bucket_bytes: u64,
    },
    /// More than the machine's memory: the allocation would fail (an abort)
    /// or the table would be swapped to death.
    TooLarge {
        /// The size asked for, bytes.
        size: u64,
        /// The machine's physical memory, bytes.
        memory: u64,
    },
    /// Entries per bucket outside 1 to 1024: the number asked for.
    BadBucket(u16),
    /// Its memory could not be had: the machine's is taken, or the process
    /// runs under an address-space limit.
    NoMemory {
        /// The size asked for, bytes.
        size: u64,
    },
    /// Not to be split by bucket range ([`Table::split`]): why.
    Unsplit(&'static str),
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
            TableError::NoMemory { size } => write!(
                f,
                "table size {}: that much memory cannot be had now (in use, or a limit on \
                 this process); give a smaller --table-size",
                format_bytes(*size)
            ),
            TableError::Unsplit(why) => {
                write!(f, "the table cannot be split by bucket range: {why}")
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
/// CC halves a bucket's counts when this many reach 255 (Abdel-Hamid et al. 2009).
const CC_SATURATED: usize = 10;
/// Lucky halves a bucket's scores when their mean reaches this (Abdel-Hamid et al. 2009 (e)).
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
    pub(crate) fn never_evicts(&self, distinct: &[u64]) -> bool {
        let TableSize::Bytes(size) = self.size else {
            return true;
        };
        let Ok((n_buckets, per)) = self.geometry(size) else {
            return false;
        };
        if self.layout.narrow {
            // Which keys share 32 stored bits is not known here: replay.
            return false;
        }
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

/// The bucket of a 62-bit key among `n_buckets`: the top bits of a mix of
/// the whole key, scaled to the bucket count (multiply-shift, so any count
/// works). Not the key's own top bits: winnowing keeps the smallest keys of
/// each window, so those bits are skewed low and the upper buckets would
/// stay empty (docs/algorithms.md §3). The entry stores the key's low 48
/// bits, as before.
#[inline]
fn bucket_of(key: u64, n_buckets: usize) -> usize {
    let mixed = lineage_core::fingerprint::fmix64(key ^ BUCKET_SALT);
    ((u128::from(mixed) * n_buckets as u128) >> 64) as usize
}

/// Keeps the bucket mix apart from the finaliser that made the key.
const BUCKET_SALT: u64 = 0x5851_f42d_4c95_7f2d;

/// The distinct keys of a key stream, and whether no two of them share the
/// 48 bits a bounded table stores (then which keys share a bucket cannot
/// change what is found).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DistinctKeys {
    pub keys: Vec<u64>,
    pub(crate) fingerprints_distinct: bool,
}

impl DistinctKeys {
    /// From a stream of `n` keys. One sort does both jobs: keys ordered by
    /// their stored 48 bits first and their top bits after (a bijection of
    /// 64 bits) put equal keys, and keys that share the stored bits, side by
    /// side.
    pub(crate) fn of(keys: impl IntoIterator<Item = u64>, n: usize) -> DistinctKeys {
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
    /// An empty table shaped by `params`, or why it cannot be built (its
    /// memory is reserved now and committed as it fills).
    pub fn new(params: TableParams) -> Result<Table, TableError> {
        let store = match params.size {
            TableSize::Unbounded => Store::Unbounded(KeyMap::default()),
            TableSize::Bytes(size) => Store::Bucketed(Box::new(Buckets::new(params, size)?)),
        };
        Ok(Table {
            store,
            counters: Counters::default(),
        })
    }

    /// Map the live table's memory now rather than at first use: done on
    /// another thread while the first documents are read, it takes the page
    /// faults off the pass (a whole 64 MiB table: ~0.15 s on this project's
    /// VM; a growing one is small until it fills).
    /// Not beyond [`MAP_AHEAD`]: a huge table over a small folder would pay
    /// for pages it never uses.
    pub(crate) fn touch(&mut self) {
        if let Store::Bucketed(b) = &mut self.store
            && b.memory_bytes() <= MAP_AHEAD as u64
        {
            b.touch();
        }
    }

    /// Whether all of a bounded table's buckets are live (it has grown
    /// whole, or never grows); true for an unbounded one.
    pub fn grown(&self) -> bool {
        match &self.store {
            Store::Bucketed(b) => b.shift == 0,
            Store::Unbounded(_) => true,
        }
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

    /// At most how many entries a lookup of an absent key can take for it:
    /// an entry stores 48 (narrow: 32) bits of its key, and the bucket is a
    /// mix of the whole key, so each entry of the key's bucket agrees by
    /// chance with probability 2^-48 (2^-32). None for an unbounded table
    /// (whole keys).
    pub fn false_match_bound(&self) -> Option<f64> {
        match &self.store {
            Store::Bucketed(b) => Some(b.per as f64 / (b.fp_mask as f64 + 1.0)),
            Store::Unbounded(_) => None,
        }
    }

    /// Bytes the table's storage occupies (bounded tables: at most the size asked for).
    #[cfg(test)]
    pub(crate) fn memory_bytes(&self) -> Option<u64> {
        match &self.store {
            Store::Bucketed(b) => Some(b.memory_bytes()),
            Store::Unbounded(_) => None,
        }
    }

    /// The totals over the table's life.
    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// Whether the table still holds every distinct key it was given.
    pub fn regime(&self) -> Regime {
        let terms = match &self.store {
            Store::Bucketed(b) if b.eviction == Eviction::BottomK => {
                Some((0..b.n_buckets).map(|i| b.distinct_given(i)))
            }
            _ => None,
        };
        Regime::of(self.counters, terms)
    }

    /// The regime of a table of `params` whose counters are `c`, where
    /// they settle it (as [`Table::regime`] says it): all but a bottom-k
    /// table that samples, whose buckets' estimates it takes.
    pub fn regime_of(params: TableParams, c: Counters) -> Option<Regime> {
        let terms = None::<std::iter::Empty<f64>>;
        match Regime::of(c, terms) {
            Regime::Evicting { .. }
                if params.eviction == Eviction::BottomK
                    && matches!(params.size, TableSize::Bytes(_)) =>
            {
                None
            }
            r => Some(r),
        }
    }

    /// Fill of every bucket, in bucket order (empty when unbounded).
    pub fn bucket_fill(&self) -> Vec<u16> {
        match &self.store {
            Store::Bucketed(b) if b.shift > 0 => {
                let mut fill = vec![0u16; b.n_buckets];
                for at in b.occupied_slots() {
                    fill[b.home[at] as usize] += 1;
                }
                fill
            }
            Store::Bucketed(b) => (0..b.n_buckets).map(|i| b.len(i) as u16).collect(),
            Store::Unbounded(_) => Vec::new(),
        }
    }

    /// Look `key` up; if it is absent, insert `ins` (evicting when the bucket is
    /// full). Returns what was found and where the entry now is.
    pub fn lookup(&mut self, key: u64, ins: Insert) -> (Option<Hit>, Slot) {
        self.counters.lookups += 1;
        let (hit, slot) = match &mut self.store {
            Store::Bucketed(bk) => bk.lookup(bk.bucket(key), key, || ins, &mut self.counters),
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
    /// inserted as Abdel-Hamid et al. 2009 stores a unit (its offset, its neighbours' top
    /// bytes): the answers into `hits` and `slots`. One call a document, so
    /// the lookups are one loop, each bucket computed once and fetched a few
    /// keys ahead (the keys of a document are known in advance).
    pub(crate) fn lookup_document(
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
        let ins = |i: usize| Hit::of_unit(doc, keys, i);
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
            // Two stages: a bucket's fill, then (the fill read) the lines it
            // says the lookup will read.
            // (Whole-table buckets: the live ones change as the table grows.)
            if let Some(&ahead) = buckets.get(i + 2 * AHEAD) {
                bk.prefetch_fill(ahead as usize >> bk.shift);
            }
            if let Some(&ahead) = buckets.get(i + AHEAD) {
                bk.prefetch(ahead as usize >> bk.shift);
            }
            c.lookups += 1;
            let (hit, slot) = bk.lookup(buckets[i] as usize, key, || ins(i), c);
            c.hits += u64::from(hit.is_some());
            hits.push(hit);
            slots.push(slot);
        }
        bk.scratch_buckets = buckets;
    }

    /// Lucky rules (a)–(d) for one unit after its document: if `key`'s entry is
    /// still in the table, set its score to 1 when the unit inserted it, then
    /// add `inc` (saturating at 255). No-op for tables without scores.
    #[cfg(test)]
    pub(crate) fn lucky_add(&mut self, key: u64, slot: Slot, inserted: bool, inc: u32) {
        if let Store::Bucketed(b) = &mut self.store {
            b.lucky_add(key, slot, inserted, inc);
        }
    }

    /// [`Table::lucky_add`] for every unit of a document: `slots` and `hits`
    /// from its lookups, `incs` its increments.
    pub(crate) fn lucky_update(
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
    pub(crate) fn lucky_end_document(&mut self) {
        if let Store::Bucketed(b) = &mut self.store {
            b.lucky_end_document();
        }
    }
}
