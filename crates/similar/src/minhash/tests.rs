use std::collections::HashMap;

use super::*;
use crate::exact;
use proptest::prelude::*;

fn doc(keys: &[u64]) -> SimDoc {
    SimDoc::of_keys(keys)
}

/// xorshift64*, seeded.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 2
    }
}

/// Two sets with exactly `shared / (shared + 2·own)` Jaccard.
fn pair_at(rng: &mut Rng, shared: usize, own: usize) -> (SimDoc, SimDoc) {
    let common: Vec<u64> = (0..shared).map(|_| rng.next()).collect();
    let mut a = common.clone();
    let mut b = common;
    a.extend((0..own).map(|_| rng.next()));
    b.extend((0..own).map(|_| rng.next()));
    (doc(&a), doc(&b))
}

#[test]
fn banding_meets_its_s_curve_bound_with_the_steepest_curve_that_fits() {
    for budget in [16, 64, 128, 256, 512, 1024] {
        for i in 1..=100 {
            let t = f64::from(i) / 100.0;
            let b = Banding::for_threshold(t, budget, RECALL_AT_THRESHOLD);
            assert!(b.hashes() <= budget, "{t} {budget}: {b:?}");
            assert!(b.bands >= 1 && b.rows >= 1);
            let p = b.candidate_probability(t);
            // One more row would not fit the budget with the bound met.
            let r = b.rows + 1;
            let need = ((1.0 - RECALL_AT_THRESHOLD).ln() / (-t.powi(r as i32)).ln_1p()).ceil();
            if p >= RECALL_AT_THRESHOLD {
                assert!(
                    t >= 1.0 || need * f64::from(r) > f64::from(budget),
                    "{t} {budget}: {b:?} is not the steepest"
                );
                // The fewest bands that meet the bound at these rows.
                if b.bands > 1 {
                    let fewer = Banding {
                        bands: b.bands - 1,
                        rows: b.rows,
                    };
                    assert!(fewer.candidate_probability(t) < RECALL_AT_THRESHOLD);
                }
            } else {
                // Infeasible: the whole budget as single-row bands.
                assert_eq!(
                    b,
                    Banding {
                        bands: budget,
                        rows: 1
                    },
                    "{t} {budget}"
                );
                let best = 1.0 - (1.0 - t).powi(budget as i32);
                assert!(best < RECALL_AT_THRESHOLD);
            }
        }
    }
    // The defaults at a few thresholds (docs/near-duplicates.md's table).
    let at = |t| Banding::for_threshold(t, DEFAULT_HASHES, RECALL_AT_THRESHOLD);
    assert_eq!(at(0.3), Banding { bands: 74, rows: 2 });
    assert_eq!(at(0.5), Banding { bands: 52, rows: 3 });
    assert_eq!(at(0.8), Banding { bands: 30, rows: 7 });
    assert_eq!(
        at(1.0),
        Banding {
            bands: 1,
            rows: 256
        }
    );
    assert!((at(0.5).candidate_probability(0.5) - 0.99904).abs() < 1e-5);
}

#[test]
fn a_bin_agrees_with_probability_jaccard() {
    // 200 pairs at J = 0.5 (and at 0.2 with few shingles: densified bins),
    // 256 bins each: the share of agreeing bins estimates J.
    for (shared, own, j) in [(300, 150, 0.5), (20, 40, 0.2), (40, 10, 2.0 / 3.0)] {
        let mut rng = Rng(0x1234_5678 + shared as u64);
        let (mut agree, mut bins) = (0usize, 0usize);
        let (mut sa, mut sb) = (Vec::new(), Vec::new());
        for _ in 0..200 {
            let (a, b) = pair_at(&mut rng, shared, own);
            assert_eq!(exact::jaccard(&a.shingles, &b.shingles), j);
            assert!(sketch(&a.shingles, 256, &mut sa));
            assert!(sketch(&b.shingles, 256, &mut sb));
            agree += sa.iter().zip(&sb).filter(|(x, y)| x == y).count();
            bins += 256;
            // Every bin holds a value of the set's own (densified ones
            // copied from filled bins).
            assert!(sa.iter().all(|&v| v != u64::MAX));
        }
        let share = agree as f64 / bins as f64;
        assert!((share - j).abs() < 0.02, "J {j}: {share}");
    }
    let mut s = vec![7];
    assert!(!sketch(&[], 16, &mut s));
    assert!(s.is_empty());
}

#[test]
fn pairs_are_found_as_often_as_the_s_curve_says() {
    let min = 0.5;
    let o = Options::new(min, DEFAULT_HASHES);
    for (shared, own) in [(500, 250), (60, 30), (600, 200)] {
        let j = shared as f64 / (shared + 2 * own) as f64;
        let p = o.banding.candidate_probability(j);
        let trials = 400;
        let mut rng = Rng(0xfeed + own as u64);
        let docs: Vec<SimDoc> = (0..trials)
            .flat_map(|_| {
                let (a, b) = pair_at(&mut rng, shared, own);
                [a, b]
            })
            .collect();
        let (got, stats) = pairs(&docs, min, &o);
        let found = got
            .iter()
            .filter(|q| q.b == q.a + 1 && q.a % 2 == 0)
            .count();
        assert_eq!(found, got.len(), "only the planted pairs reach {min}");
        // Binomial(trials, p): at least its mean less four sd.
        let sd = (trials as f64 * p * (1.0 - p)).sqrt();
        assert!(
            found as f64 >= trials as f64 * p - 4.0 * sd - 1.0,
            "J {j}: {found} of {trials}, P = {p}"
        );
        assert!(stats.candidates >= found as u64);
    }
}

#[test]
fn the_sketch_filter_keeps_pairs_at_the_threshold_and_drops_those_far_below() {
    // Low bytes of the sketches of pairs at exactly J = S (0.5 and 0.8,
    // with the bins their banding uses): dropping one happens with
    // probability ~1e-4; and pairs 0.25 below S are nearly all dropped.
    for (min, shared, own) in [(0.5, 200, 100), (0.8, 400, 50)] {
        let bins = Options::new(min, DEFAULT_HASHES).banding.hashes();
        let least = least_agreeing(min, bins);
        let agreeing_of = |rng: &mut Rng, shared: usize, own: usize| {
            let (a, b) = pair_at(rng, shared, own);
            let (mut sa, mut sb) = (Vec::new(), Vec::new());
            sketch(&a.shingles, bins as usize, &mut sa);
            sketch(&b.shingles, bins as usize, &mut sb);
            agreeing(&low_bytes(&sa), &low_bytes(&sb))
        };
        let mut rng = Rng(0xb17 + bins as u64);
        let trials = 3000;
        let dropped = (0..trials)
            .filter(|_| agreeing_of(&mut rng, shared, own) < least)
            .count();
        assert!(dropped <= 3, "S {min}: {dropped} of {trials} dropped");
        // J = S − 0.25: shared / (shared + 2·own) with own raised.
        let j_low: f64 = min - 0.25;
        let own_low = ((shared as f64 / j_low - shared as f64) / 2.0).round() as usize;
        let kept = (0..trials)
            .filter(|_| agreeing_of(&mut rng, shared, own_low) >= least)
            .count();
        assert!(
            kept * 100 < trials,
            "S {min}: {kept} of {trials} kept at {j_low}"
        );
    }
    // The bound itself: the mean of a pair at S less 3.7 sd, b-bit corrected.
    assert_eq!(least_agreeing(0.5, 156), 55);
    assert_eq!(least_agreeing(1.0, 64), 64);
    assert!(least_agreeing(0.3, 256) < least_agreeing(0.5, 256));
}

#[test]
fn the_sketch_filter_drops_a_shared_boilerplate_bucket_unverified() {
    // 300 documents of 400 own shingles, each with the same 60 shingles
    // of boilerplate (J ≈ 0.07 between any two), and two near copies.
    let mut rng = Rng(77);
    let boiler: Vec<u64> = (0..60).map(|_| rng.next()).collect();
    let mut docs: Vec<SimDoc> = (0..300)
        .map(|_| {
            let mut k: Vec<u64> = (0..400).map(|_| rng.next()).collect();
            k.extend(&boiler);
            doc(&k)
        })
        .collect();
    let mut copy = docs[0].shingles.clone();
    copy.truncate(copy.len() - 20);
    docs.push(doc(&copy));
    let min = 0.3;
    let (got, stats) = pairs(&docs, min, &Options::new(min, DEFAULT_HASHES));
    let want = exact::pairs(&docs, min);
    assert_eq!(got, want);
    assert_eq!(stats.verified, want.len() as u64);
    assert!(stats.candidates > 100, "the boilerplate met: {stats:?}");
    assert_eq!(
        stats.filtered + stats.verified,
        stats.candidates,
        "every candidate dropped or verified as a pair"
    );
}

#[test]
fn identical_documents_cost_no_verification_and_are_all_paired() {
    let page: Vec<u64> = (1..=300).collect();
    let mut docs: Vec<SimDoc> = (0..2000).map(|_| doc(&page)).collect();
    docs.push(doc(&[]));
    docs.push(doc(&(1000..1300).collect::<Vec<_>>()));
    let (got, stats) = pairs(&docs, 0.5, &Options::new(0.5, DEFAULT_HASHES));
    assert_eq!(got.len(), 2000 * 1999 / 2);
    assert!(got.iter().all(|p| p.similarity == 1.0 && p.b < 2000));
    assert_eq!(stats.distinct_sets, 2);
    assert_eq!(stats.documents_with_shingles, 2001);
    // One class of 2000 and an unrelated page: at most one comparison.
    assert!(stats.candidates <= 1, "{stats:?}");
    assert!(stats.largest_bucket <= 2);
}

#[test]
fn threshold_one_is_identity_of_sets() {
    let docs = [
        doc(&[1, 2, 3]),
        doc(&[1, 2, 3, 4]),
        doc(&[1, 2, 3]),
        doc(&[]),
        doc(&[]),
        doc(&[1, 2, 3]),
    ];
    let (got, stats) = pairs(&docs, 1.0, &Options::new(1.0, DEFAULT_HASHES));
    let ids: Vec<(u32, u32)> = got.iter().map(|p| (p.a, p.b)).collect();
    assert_eq!(ids, [(0, 2), (0, 5), (2, 5)]);
    assert_eq!(stats.candidates, 0);
    // Empty documents are nobody's pair, at any threshold.
    let (got, _) = pairs(&docs, 0.3, &Options::new(0.3, DEFAULT_HASHES));
    assert!(
        got.iter()
            .all(|p| p.a != 3 && p.a != 4 && p.b != 3 && p.b != 4)
    );
    assert_eq!(got.len(), 6);
}

#[test]
fn band_index_is_brute_force_over_band_keys() {
    let banding = Banding::for_threshold(0.5, 64, RECALL_AT_THRESHOLD);
    let mut rng = Rng(99);
    let base: Vec<u64> = (0..80).map(|_| rng.next()).collect();
    let sets: Vec<Vec<u64>> = (0..40)
        .map(|i| {
            let mut s = base.clone();
            s.truncate(80 - i);
            s.extend((0..i).map(|_| rng.next()));
            doc(&s).shingles
        })
        .collect();
    let sketches: Vec<lsh::Sketch> = sets
        .iter()
        .map(|s| lsh::Sketch::of(s, banding).unwrap())
        .collect();
    let mut ix = BandIndex::new(banding);
    for (i, s) in sketches.iter().enumerate() {
        ix.insert(i as u32, s.clone());
    }
    for i in (0..40).step_by(3) {
        assert!(ix.remove(i));
        assert!(!ix.remove(i));
    }
    let mut out = Vec::new();
    for (q, s) in sketches.iter().enumerate() {
        ix.query(&s.keys, &mut out);
        let want: Vec<u32> = (0..40u32)
            .filter(|&i| i % 3 != 0)
            .filter(|&i| sketches[i as usize].keys.iter().any(|k| s.keys.contains(k)))
            .collect();
        assert_eq!(out, want, "query {q}");
        let back = lsh::Sketch::from_bytes(&s.to_bytes(), banding).unwrap();
        assert_eq!(&back, s);
        assert!(
            lsh::Sketch::from_bytes(
                &s.to_bytes(),
                Banding {
                    bands: banding.bands + 1,
                    ..banding
                }
            )
            .is_none()
        );
    }
    assert_eq!(ix.len(), 40 - 14);
    assert!(lsh::Sketch::of(&[], banding).is_none());
    assert_ne!(lsh::digest(&sets[0]), lsh::digest(&sets[1]));
}

proptest! {
    /// Inserts, re-inserts and removals in any order, keys shared by many
    /// documents or one, ids with the top bit set: queries answer as a brute
    /// force over the live sketches does.
    #[test]
    fn band_index_stays_brute_force_through_any_changes(
        ops in proptest::collection::vec(
            (0u32..12, proptest::bool::ANY, proptest::collection::vec(0u64..20, 3)),
            1..200,
        ),
    ) {
        let banding = Banding { bands: 3, rows: 1 };
        let id_of = |i: u32| if i % 4 == 3 { i | 1 << 31 } else { i };
        let mut ix = BandIndex::new(banding);
        let mut live: HashMap<u32, Vec<u64>> = HashMap::new();
        for (i, insert, keys) in ops {
            let id = id_of(i);
            if insert {
                ix.insert(id, lsh::Sketch { keys: keys.clone().into(), digest: [0, 0], low: Box::new([]) });
                live.insert(id, keys);
            } else {
                prop_assert_eq!(ix.remove(id), live.remove(&id).is_some());
            }
            let mut out = Vec::new();
            for q in 0u64..20 {
                ix.query(&[q], &mut out);
                let mut want: Vec<u32> =
                    live.iter().filter(|(_, k)| k.contains(&q)).map(|(&id, _)| id).collect();
                want.sort_unstable();
                prop_assert_eq!(&out, &want, "key {}", q);
            }
        }
    }

    /// Every reported pair is an exact pair with its exact similarity, every
    /// pair of equal non-empty sets is reported, and nothing is reported
    /// twice.
    #[test]
    fn reported_pairs_are_exact_pairs(
        sets in prop::collection::vec(prop::collection::vec(0u64..50, 0..30), 0..16),
        dup in prop::collection::vec(0usize..16, 0..4),
        t in 0.3f64..=1.0,
        budget in 1u32..300,
    ) {
        let mut docs: Vec<SimDoc> = sets.iter().map(|s| doc(s)).collect();
        for &d in &dup {
            if d < docs.len() {
                docs.push(docs[d].clone());
            }
        }
        let (got, stats) = pairs(&docs, t, &Options::new(t, budget));
        let want = exact::pairs(&docs, t);
        for p in &got {
            prop_assert!(want.contains(p), "{:?} is not an exact pair", p);
        }
        prop_assert!(got.windows(2).all(|w| (w[0].a, w[0].b) < (w[1].a, w[1].b)));
        for w in &want {
            if w.similarity == 1.0 {
                prop_assert!(got.contains(w), "identical {:?} missed", w);
            }
        }
        prop_assert_eq!(stats.pairs as usize, got.len());
    }

    /// At a threshold well below the pairs' similarity every one is found
    /// (the S-curve is ≥ 1 − 10^-9 there), whatever the set sizes.
    #[test]
    fn pairs_well_above_the_threshold_are_found(
        seed in any::<u64>(),
        shared in 20usize..400,
        own in 0usize..5,
    ) {
        let mut rng = Rng(seed | 1);
        let (a, b) = pair_at(&mut rng, shared, own);
        let j = exact::jaccard(&a.shingles, &b.shingles);
        prop_assume!(j >= 0.9);
        let o = Options::new(0.5, DEFAULT_HASHES);
        prop_assert!(o.banding.candidate_probability(j) > 1.0 - 1e-9);
        let (got, _) = pairs(&[a, b], 0.5, &o);
        prop_assert_eq!(got.len(), 1);
        prop_assert_eq!(got[0].similarity, j);
    }
}
