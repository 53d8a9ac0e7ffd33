use super::simd::*;
use super::*;
use crate::keymap::splitmix64;

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
            narrow: eviction == Eviction::BottomK,
        },
        seed: 7,
    }
}

/// The `i`-th key (counting up from 1) that falls in bucket `b` of `n`; the
/// keys of one bucket differ in their low bits, as stored.
fn in_bucket(b: usize, n: usize, i: u64) -> u64 {
    (1..)
        .filter(|&k| bucket_of(k, n) == b)
        .nth(i as usize)
        .unwrap()
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
    // Two buckets of 4 entries.
    let p = params(TableSize::Bytes(2 * (4 * 14 + 2)), Eviction::Lucky, 4);
    let low = |i: u64| in_bucket(0, 2, i);
    let high = |i: u64| in_bucket(1, 2, i);
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
        for chunks in 0..=4 {
            let want = (0..16 * chunks).fold(0, |m, j| m | u64::from(bucket[j] == v) << j);
            assert_eq!(eq_mask16x64(&bucket, v, chunks), want, "{chunks} chunks");
        }
    }
    for seed in 0..200u64 {
        // Every place for the largest, values either side of the top bit.
        let words: [u16; 64] =
            std::array::from_fn(|j| (splitmix64(seed * 64 + j as u64) >> (seed % 17)) as u16);
        assert_eq!(
            max16x64(&words),
            *words.iter().max().unwrap(),
            "seed {seed}"
        );
    }
    let mut words = [0u16; 64];
    assert_eq!(max16x64(&words), 0);
    for (j, v) in [(0, 1), (63, 0x8000), (17, u16::MAX)] {
        words[j] = v;
        assert_eq!(max16x64(&words), v);
    }
    for n in [0, 1, 15, 16, 17, 63, 64] {
        let want: u32 = bytes[..n].iter().map(|&b| u32::from(b)).sum();
        assert_eq!(byte_sum(&bytes[..n]), want, "{n} bytes");
    }
}

/// Every eviction rule.
const EVICTIONS: [Eviction; 5] = [
    Eviction::Random,
    Eviction::Lru,
    Eviction::Cc,
    Eviction::Lucky,
    Eviction::BottomK,
];

/// Keys that all fall into bucket 0 of a table with few buckets.
fn key_in_bucket0(i: u64) -> u64 {
    i + 1
}

#[test]
fn memory_is_what_the_size_says() {
    for size in [900u64, 4096, 14 * 64 + 2, 1 << 20, 20_000_000, 64 << 20] {
        for ev in EVICTIONS {
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
        narrow: false,
    };
    assert_eq!(l(false, false, false).entry_bytes(), 10);
    let narrow = Layout {
        narrow: true,
        ..l(false, false, false)
    };
    assert_eq!((narrow.entry_bytes(), narrow.fingerprint_bits()), (8, 32));
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
        for ev in EVICTIONS {
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

#[test]
fn changes_applied_to_the_state_before_them_make_the_state_after() {
    // 500 buckets of 4: each round inserts new keys (some evicting), then
    // finds earlier keys, so some buckets change by a hit alone (an LRU
    // move, a score).
    for ev in EVICTIONS {
        let p = params(TableSize::Bytes(500 * (4 * 14 + 2)), ev, 4);
        let mut a = Table::new(p).unwrap();
        let mut x = 9u64;
        let mut next_key = || {
            x = splitmix64(x);
            x >> 2
        };
        let mut given = Vec::new();
        let mut saved = vec![];
        for round in 0..4 {
            let new: Vec<u64> = (0..300).map(|_| next_key()).collect();
            let old: Vec<u64> = given.iter().step_by(3).copied().collect();
            for (i, &k) in new.iter().chain(&old).enumerate() {
                let (hit, slot) = a.lookup(k, ins(i as u32));
                a.lucky_add(k, slot, hit.is_none(), 3);
                if i % 50 == 0 {
                    a.lucky_end_document();
                }
            }
            given.extend(new);
            let mut changes = vec![];
            if round == 0 || !a.write_changes(&mut changes).unwrap() {
                // First, or grown since (buckets renumbered): whole.
                assert!(round < 2, "{ev:?} grew in round {round}");
                saved.clear();
                a.write_state(&mut saved).unwrap();
                a.clear_changes();
                continue;
            }
            a.clear_changes();
            let mut b = Table::read_state(p, &mut saved.as_slice()).unwrap();
            b.apply_changes(&mut changes.as_slice()).unwrap();
            let (mut sa, mut sb) = (vec![], vec![]);
            a.write_state(&mut sa).unwrap();
            b.write_state(&mut sb).unwrap();
            assert_eq!(sa, sb, "{ev:?} round {round}");
            saved = sa;
            // Cut short: refused, not half applied silently.
            let mut c = Table::read_state(p, &mut saved.as_slice()).unwrap();
            assert!(c.apply_changes(&mut &changes[..changes.len() - 1]).is_err());
        }
        // Nothing since: no bucket in the changes.
        let mut changes = vec![];
        a.write_changes(&mut changes).unwrap();
        assert_eq!(changes.len(), 7 * 8 + 8, "{ev:?}");
    }
    let mut u = Table::new(params(TableSize::Unbounded, Eviction::Lucky, 64)).unwrap();
    u.lookup(1, ins(0));
    assert!(!u.write_changes(&mut vec![]).unwrap());
}

/// The semantics of docs/algorithms.md §3 written plainly: a bucket is a Vec in
/// insertion order (LRU: recency order); eviction removes and appends.
struct Model {
    buckets: Vec<Vec<(u64, Hit, u8)>>,
    per: usize,
    eviction: Eviction,
    ties: Ties,
    rng: u64,
}

impl Model {
    /// What a lookup finds, and whether the key was in its bucket's sample
    /// (always, but for bottom-k).
    fn lookup(&mut self, b: usize, key: u64, ins: Insert) -> (Option<Hit>, bool) {
        let bucket = &mut self.buckets[b];
        if self.eviction == Eviction::BottomK {
            // The bucket is the `per` smallest distinct fingerprints given to it.
            if let Some(e) = bucket.iter().find(|e| e.0 == key) {
                return (Some(e.1), true);
            }
            let fp = |k: u64| k & 0xffff_ffff; // bottom-k entries are narrow
            let largest = bucket.iter().map(|e| fp(e.0)).max();
            if bucket.len() == self.per {
                if largest < Some(fp(key)) {
                    return (None, false);
                }
                bucket.retain(|e| Some(fp(e.0)) != largest);
            }
            bucket.push((key, ins, 1));
            return (None, true);
        }
        (self.lookup_ordered(b, key, ins), true)
    }

    fn lookup_ordered(&mut self, b: usize, key: u64, ins: Insert) -> Option<Hit> {
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
                    if bucket[i].2 == 255 && bucket.iter().filter(|e| e.2 == 255).count() >= 10 {
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
                    let draw = splitmix64(self.rng ^ key);
                    ((u128::from(draw) * self.per as u128) >> 64) as usize
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
        ev in 0usize..5,
        newest in proptest::bool::ANY,
    ) {
        let eviction = [Eviction::Random, Eviction::Lru, Eviction::Cc, Eviction::Lucky, Eviction::BottomK][ev];
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
            // Keys of bucket 0 for even k, of bucket 1 for odd.
            let b = (k % 2) as usize;
            let key = in_bucket(b, 2, k / 2);
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
            let (hit, slot) = t.lookup(key, ins);
            proptest::prop_assert_eq!((hit, slot.sampled()), m.lookup(b, key, ins));
        }
        // Same entries, same scores, in the same order (oldest first; bottom-k
        // keeps no order).
        let Store::Bucketed(bk) = &t.store else { unreachable!() };
        for b in 0..2 {
            let mut ours: Vec<(u32, u8)> = (0..bk.len(b))
                .map(|a| {
                    let at = bk.at_age(b, a);
                    (bk.lo_at(at), bk.score.get(at).copied().unwrap_or(1))
                })
                .collect();
            let mut model: Vec<(u32, u8)> = m.buckets[b].iter().map(|e| (e.0 as u32, e.2)).collect();
            if eviction == Eviction::BottomK {
                ours.sort_unstable();
                model.sort_unstable();
            }
            proptest::prop_assert_eq!(ours, model);
        }
    }
}

proptest::proptest! {
    /// Bottom-k over keys whose stored bits differ in their high halves too
    /// (the model test's keys differ in their low bits only): the sample of
    /// each bucket is the model's, and a full bucket keeps its largest
    /// fingerprint at its first slot.
    #[test]
    fn a_bottom_k_bucket_keeps_its_largest_first(
        ops in proptest::collection::vec((0u64..400, 0u64..6), 1..1500),
        per in proptest::sample::select(vec![8u16, 64, 70]),
    ) {
        let mut p = params(TableSize::Bytes(0), Eviction::BottomK, per);
        p.size = TableSize::Bytes(2 * (u64::from(per) * p.layout.entry_bytes() + 2));
        let mut t = Table::new(p).unwrap();
        let mut m = Model {
            buckets: vec![Vec::new(); 2],
            per: usize::from(per),
            eviction: Eviction::BottomK,
            ties: Ties::Oldest,
            rng: 0,
        };
        for (n, &(k, spread)) in ops.iter().enumerate() {
            // High halves from few values (ties) to all of them.
            let key = splitmix64(k) & !(0xffff_u64 << 16) | (splitmix64(k + 1) % (1 << (3 * spread))) << 16;
            let b = bucket_of(key, 2);
            let ins = Hit { origin: n as u32, offset: 0, prev: 0, next: 0 };
            let (hit, slot) = t.lookup(key, ins);
            proptest::prop_assert_eq!((hit, slot.sampled()), m.lookup(b, key, ins));
            let Store::Bucketed(bk) = &t.store else { unreachable!() };
            if bk.len(b) == bk.per {
                let largest = bk.slots_of(b).map(|at| bk.fp_at(at)).max();
                proptest::prop_assert_eq!(Some(bk.fp_at(b * bk.per)), largest);
            }
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
    let fill = |keys: &mut dyn Iterator<Item = u64>| {
        let mut f = vec![0u32; 1000];
        for k in keys {
            f[b.bucket(k)] += 1;
        }
        f
    };
    let mut x = 1u64;
    let spread = fill(&mut (0..100_000).map(|_| {
        x = splitmix64(x);
        x >> 2
    }));
    assert!(spread.iter().all(|&n| n > 0));
    // Small keys, as the minima that winnowing keeps are skewed low: all
    // below 2^52 here, so their top ten bits are zero (a bucket index of
    // those bits put every one in bucket 0); the mix fills the buckets evenly.
    let mut x = 7u64;
    let small = fill(&mut (0..100_000).map(|_| {
        x = splitmix64(x);
        x >> 12
    }));
    assert!(
        small.iter().all(|&n| n > 30 && n < 200),
        "{:?}",
        small.iter().max()
    );
}

#[test]
fn paper_sizes_are_distinct_even_for_a_tiny_collection() {
    for shingles in [0u64, 100, 5_000, 18_839, 840_168] {
        let s = paper_sizes(shingles);
        assert!(!s.is_empty());
        assert!(s.windows(2).all(|w| w[0] != w[1]), "{shingles}: {s:?}");
    }
    assert_eq!(paper_sizes(840_168).len(), 8);
}

#[test]
fn the_false_match_bound_is_a_buckets_entries_over_the_stored_bits() {
    let t = Table::new(params(TableSize::Bytes(64 * 1024), Eviction::Lucky, 64)).unwrap();
    assert_eq!(t.false_match_bound(), Some(64.0 / (1u64 << 48) as f64));
    let t = Table::new(params(TableSize::Bytes(64 * 1024), Eviction::Lucky, 8)).unwrap();
    assert_eq!(t.false_match_bound(), Some(8.0 / (1u64 << 48) as f64));
    let t = Table::new(params(TableSize::Unbounded, Eviction::Lucky, 64)).unwrap();
    assert_eq!(t.false_match_bound(), None, "whole keys: no false match");
}

#[test]
fn a_narrow_table_tells_apart_32_bits_of_a_key_and_bounds_its_false_matches() {
    let size = TableSize::Bytes(4 * (64 * 14 + 2));
    let t = Table::new(params(size, Eviction::BottomK, 64)).unwrap();
    assert_eq!(t.false_match_bound(), Some(64.0 / (1u64 << 32) as f64));
    let Store::Bucketed(bk) = &t.store else {
        unreachable!()
    };
    // Two keys of one bucket that agree in their low 32 bits only.
    let a = 0x1234_5678u64;
    let b = (1..)
        .map(|i: u64| a | i << 32)
        .find(|&k| bk.bucket(k) == bk.bucket(a) && (k ^ a) & FP48 != 0)
        .unwrap();
    for (eviction, found) in [(Eviction::BottomK, true), (Eviction::Lucky, false)] {
        let mut t = Table::new(params(size, eviction, 64)).unwrap();
        t.lookup(a, ins(1));
        let (hit, _) = t.lookup(b, ins(2));
        assert_eq!(hit.is_some(), found, "{eviction}");
    }
}

#[test]
fn touching_a_table_maps_its_pages_and_changes_nothing() {
    let p = params(TableSize::Bytes(1 << 20), Eviction::Lucky, 64);
    let (mut a, mut b) = (Table::new(p).unwrap(), Table::new(p).unwrap());
    // Full, so that every page holds entries.
    let keys: Vec<u64> = (1..100_000u64).map(|i| splitmix64(i) >> 2).collect();
    for &k in &keys {
        a.lookup(k, ins(1));
        b.lookup(k, ins(1));
    }
    b.touch();
    for &k in keys.iter().rev() {
        assert_eq!(a.lookup(k, ins(2)), b.lookup(k, ins(2)));
    }
    assert_eq!(a.counters(), b.counters());
}

/// Each whole-table bucket's entries, oldest first (bottom-k: by
/// fingerprint, as it keeps no order), whether the table is growing or not.
fn whole_buckets(b: &Buckets) -> Vec<Vec<(u64, Hit)>> {
    let mut whole = vec![Vec::new(); b.n_buckets];
    for live in 0..b.live {
        for a in 0..b.len(live) {
            let at = b.at_age(live, a);
            let home = if b.shift > 0 {
                b.home[at] as usize
            } else {
                live
            };
            whole[home].push((b.fp_at(at), b.hit_at(at)));
        }
    }
    if b.eviction == Eviction::BottomK {
        whole
            .iter_mut()
            .for_each(|v| v.sort_unstable_by_key(|e| e.0));
    }
    whole
}

proptest::proptest! {
    #[test]
    fn a_growing_table_answers_and_holds_what_a_whole_one_does(
        ops in proptest::collection::vec(0u64..4000, 1..3000),
        per in proptest::sample::select(vec![4u16, 8, 64]),
        n_buckets in proptest::sample::select(vec![33u64, 40, 300]),
        ev in 0usize..3,
    ) {
        let eviction = [Eviction::Random, Eviction::Lru, Eviction::BottomK][ev];
        let mut p = params(TableSize::Bytes(0), eviction, per);
        p.size = TableSize::Bytes(n_buckets * (u64::from(per) * p.layout.entry_bytes() + 2));
        let size = match p.size { TableSize::Bytes(s) => s, TableSize::Unbounded => unreachable!() };
        let mut grows = Table::new(p).unwrap();
        let whole = Buckets::at_shift(p, size, 0).unwrap();
        let mut whole = Table { store: Store::Bucketed(Box::new(whole)), counters: Counters::default() };
        let Store::Bucketed(g) = &grows.store else { unreachable!() };
        proptest::prop_assert!(g.shift > 0 && g.live < g.n_buckets);
        // Documents of 50 keys, some seen before (hits, LRU moves).
        let keys: Vec<u64> = ops.iter().map(|&k| splitmix64(k) >> 2).collect();
        let (mut hits, mut slots) = (Vec::new(), Vec::new());
        let (mut hits_whole, mut slots_whole) = (Vec::new(), Vec::new());
        for (doc, chunk) in keys.chunks(50).enumerate() {
            grows.lookup_document(doc as u32, chunk, &mut hits, &mut slots);
            whole.lookup_document(doc as u32, chunk, &mut hits_whole, &mut slots_whole);
            proptest::prop_assert_eq!(&hits, &hits_whole);
            let sampled = |s: &[Slot]| s.iter().map(|s| s.sampled()).collect::<Vec<_>>();
            proptest::prop_assert_eq!(sampled(&slots), sampled(&slots_whole));
        }
        proptest::prop_assert_eq!(grows.counters(), whole.counters());
        proptest::prop_assert_eq!(grows.bucket_fill(), whole.bucket_fill());
        let (Store::Bucketed(g), Store::Bucketed(w)) = (&grows.store, &whole.store) else { unreachable!() };
        proptest::prop_assert_eq!(whole_buckets(g), whole_buckets(w));
        if g.shift == 0 {
            // Grown whole: the same table, byte for byte.
            let (mut sg, mut sw) = (vec![], vec![]);
            grows.write_state(&mut sg).unwrap();
            whole.write_state(&mut sw).unwrap();
            proptest::prop_assert_eq!(sg, sw);
        }
        // Its state, mid-growth or not, reads back to the same table.
        let mut saved = vec![];
        grows.write_state(&mut saved).unwrap();
        let back = Table::read_state(p, &mut saved.as_slice()).unwrap();
        let (Store::Bucketed(g), Store::Bucketed(b)) = (&grows.store, &back.store) else { unreachable!() };
        proptest::prop_assert_eq!((g.shift, whole_buckets(g)), (b.shift, whole_buckets(b)));
    }
}

#[test]
fn a_growing_table_commits_memory_as_it_fills() {
    // 64 MiB holding 5,000 keys: a few live buckets, not the whole table.
    let p = params(TableSize::Bytes(64 << 20), Eviction::BottomK, 64);
    let mut t = Table::new(p).unwrap();
    for k in 0..5_000u64 {
        t.lookup(splitmix64(k) >> 2, ins(1));
    }
    let Store::Bucketed(b) = &t.store else {
        unreachable!()
    };
    assert!(
        b.live * 8 < b.n_buckets,
        "{} of {} live",
        b.live,
        b.n_buckets
    );
    assert!(
        b.live * b.per < 4 * 5_000,
        "{} slots for 5,000 keys",
        b.live * b.per
    );
    // Scores halve a whole bucket: CC and lucky tables are whole at once.
    let t = Table::new(params(TableSize::Bytes(64 << 20), Eviction::Lucky, 64)).unwrap();
    let Store::Bucketed(b) = &t.store else {
        unreachable!()
    };
    assert_eq!((b.shift, b.live), (0, b.n_buckets));
}

#[test]
fn a_growing_tables_lookup_matches_only_its_whole_bucket() {
    // Two keys with the same stored bits in different whole-table buckets
    // of one live bucket: a whole table tells them apart, so must this.
    let p = params(TableSize::Bytes(64 << 20), Eviction::BottomK, 64);
    let mut t = Table::new(p).unwrap();
    let Store::Bucketed(b) = &t.store else {
        unreachable!()
    };
    let (shift, a) = (b.shift, 0x0123_4567_89abu64);
    let twin = (1..)
        .map(|i: u64| a | i << 48)
        .find(|&k| {
            let (hk, ha) = (b.bucket(k), b.bucket(a));
            hk != ha && hk >> shift == ha >> shift
        })
        .unwrap();
    t.lookup(a, ins(1));
    assert_eq!(t.lookup(twin, ins(2)).0, None);
    assert_eq!(t.lookup(a, ins(3)).0.map(|h| h.origin), Some(1));
    assert_eq!(t.lookup(twin, ins(4)).0.map(|h| h.origin), Some(2));
}
