use super::*;
use lineage_core::fingerprint::fmix64;
use lineage_core::fingerprint::polynomial::standard;
use proptest::prelude::*;

/// A synthetic document: n token hashes, and shingle keys that are arbitrary
/// but distinct per position (selectors never recompute them).
struct Doc {
    fps: Vec<u64>,
    hashes: Vec<u64>,
    keys: Vec<u64>,
    k: usize,
}

impl Doc {
    fn new(n: usize, k: usize) -> Doc {
        let fps: Vec<u64> = (0..n as u64).map(|i| i * 7919 + 1).collect();
        Doc::from_hashes(fps.iter().map(|&f| fmix64(f)).collect(), k)
    }

    fn from_hashes(hashes: Vec<u64>, k: usize) -> Doc {
        let n = hashes.len();
        let shingles = (n + 1).saturating_sub(k);
        Doc {
            fps: (0..n as u64).collect(),
            keys: (0..shingles as u64)
                .map(|i| fmix64(i ^ 0xabc) >> 2)
                .collect(),
            hashes,
            k,
        }
    }

    fn keys(&self) -> DocKeys<'_> {
        DocKeys {
            token_fps: &self.fps,
            token_hashes: &self.hashes,
            shingle_keys: &self.keys,
            k: self.k,
            mix: standard().mix(),
        }
    }

    fn select(&self, sel: Selector) -> Vec<Unit> {
        let mut out = vec![Unit {
            key: 1,
            start: 2,
            end: 3,
        }];
        sel.select(&self.keys(), &mut out);
        out
    }

    fn starts(&self, sel: Selector) -> Vec<u32> {
        self.select(sel).iter().map(|u| u.start).collect()
    }
}

#[test]
fn all_every_mod_basic() {
    let doc = Doc::new(20, 8); // 13 shingles
    let all = doc.select(Selector::All);
    assert_eq!(all.len(), 13);
    for (i, u) in all.iter().enumerate() {
        assert_eq!(
            *u,
            Unit {
                key: doc.keys[i],
                start: i as u32,
                end: i as u32 + 8
            }
        );
    }
    assert_eq!(doc.starts(Selector::Every(4)), [0, 4, 8, 12]);
    assert_eq!(doc.starts(Selector::Every(5)), [0, 5, 10]);
    assert_eq!(
        doc.starts(Selector::Every(1)),
        (0..13).collect::<Vec<u32>>()
    );
    assert_eq!(doc.starts(Selector::Every(100)), [0]);

    for l in [1, 2, 3, 4, 7, 8] {
        let want: Vec<u32> = (0..13)
            .filter(|&i| doc.keys[i].is_multiple_of(l))
            .map(|i| i as u32)
            .collect();
        assert_eq!(doc.starts(Selector::Mod(l as u32)), want, "mod-{l}");
    }
    // Hand-made keys: divisible by 3 at positions 0, 2, 3.
    let mut d = Doc::new(12, 8);
    d.keys = vec![9, 10, 0, 3, 5];
    let units = d.select(Selector::Mod(3));
    assert_eq!(
        units
            .iter()
            .map(|u| (u.key, u.start, u.end))
            .collect::<Vec<_>>(),
        [(9, 0, 8), (0, 2, 10), (3, 3, 11)]
    );
    assert_eq!(d.starts(Selector::Mod(4)), [2]);
}

#[test]
fn winnowing_and_hailstorm_through_the_selector() {
    let mut doc = Doc::new(24, 8);
    doc.keys = vec![
        77, 72, 42, 17, 98, 50, 17, 98, 8, 88, 67, 39, 77, 72, 42, 17, 98,
    ];
    let units = doc.select(Selector::Win(4));
    let got: Vec<(u64, u32)> = units.iter().map(|u| (u.key, u.start)).collect();
    assert_eq!(got, [(17, 3), (17, 6), (8, 8), (39, 11), (17, 15)]);
    assert!(units.iter().all(|u| u.end == u.start + 8));

    let doc = Doc::from_hashes(vec![9, 1, 9, 9, 1, 9, 5, 6, 7], 3);
    assert_eq!(doc.starts(Selector::Hs), [1, 2, 4, 6]);
    let mut want = vec![];
    hailstorm(&doc.hashes, 3, &mut want);
    assert_eq!(doc.starts(Selector::Hs), want);
}

#[test]
fn no_overlap_variants_are_the_cover_of_their_base() {
    let doc = Doc::new(300, 8);
    for (base, n) in [
        (Selector::Mod(3), Selector::NMod(3)),
        (Selector::Mod(4), Selector::NMod(4)),
        (Selector::Win(8), Selector::NWin(8)),
        (Selector::Hs, Selector::NHs),
    ] {
        let base_units = doc.select(base);
        let want: Vec<Unit> =
            no_complete_overlap(&base_units.iter().map(|u| u.start).collect::<Vec<_>>(), 8)
                .into_iter()
                .map(|s| *base_units.iter().find(|u| u.start == s).unwrap())
                .collect();
        let got = doc.select(n);
        assert_eq!(got, want, "{n}");
        assert!(
            got.len() < base_units.len(),
            "{n} discards something on 300 tokens"
        );
    }
}

#[test]
fn fewer_than_k_tokens_select_nothing() {
    let doc = Doc::new(7, 8);
    for sel in [
        Selector::All,
        Selector::Every(4),
        Selector::Mod(1),
        Selector::Win(8),
        Selector::Hb(1),
        Selector::Dct(1),
        Selector::Hs,
        Selector::NMod(1),
        Selector::NWin(8),
        Selector::NHs,
    ] {
        assert!(doc.select(sel).is_empty(), "{sel}");
    }
    assert_eq!(Doc::new(8, 8).select(Selector::All).len(), 1);
    assert_eq!(
        Doc::from_hashes(vec![4; 8], 8).select(Selector::Hs).len(),
        1
    );
    assert!(Doc::new(0, 8).select(Selector::All).is_empty());
}

#[test]
fn dct_units_are_the_hash_breaking_segments() {
    let doc = Doc::new(400, 8);
    let mut segs = vec![];
    hash_breaking_segments(&doc.hashes, 3, &mut segs);
    assert!(segs.len() > 20);
    let units = doc.select(Selector::Dct(3));
    let want: Vec<Unit> = segs
        .iter()
        .map(|r| Unit {
            key: dct_key(&doc.hashes[r.start as usize..r.end as usize]),
            start: r.start,
            end: r.end,
        })
        .collect();
    assert_eq!(units, want);
}

#[test]
fn hb_units_are_the_segments_with_their_keys() {
    let doc = Doc::new(400, 8);
    let mut segs = vec![];
    hash_breaking_segments(&doc.hashes, 3, &mut segs);
    let units = doc.select(Selector::Hb(3));
    let want: Vec<Unit> = segs
        .iter()
        .map(|r| Unit {
            key: lineage_core::fingerprint::segment_key(
                standard().mix(),
                &doc.fps[r.start as usize..r.end as usize],
            ),
            start: r.start,
            end: r.end,
        })
        .collect();
    assert_eq!(units, want);
}

#[test]
#[should_panic(expected = "at least 1")]
fn zero_parameter_panics() {
    Doc::new(20, 8).select(Selector::Mod(0));
}

#[test]
fn selection_scratch_is_reused() {
    let big = Doc::new(5000, 8);
    let small = Doc::new(300, 8);
    let mut sel = Selection::new();
    let mut out = Vec::new();
    for s in [Selector::NHs, Selector::NWin(8), Selector::Dct(8)] {
        sel.select_into(s, &big.keys(), &mut out);
    }
    let cap = out.capacity();
    let scratch = (sel.ring.as_ptr(), sel.suffix.as_ptr(), sel.dct.as_ptr());
    for s in [
        Selector::Hs,
        Selector::NHs,
        Selector::Mod(4),
        Selector::Every(4),
        Selector::Win(8),
        Selector::Dct(8),
    ] {
        for doc in [&small, &big] {
            sel.select_into(s, &doc.keys(), &mut out);
            let mut fresh = vec![];
            s.select(&doc.keys(), &mut fresh);
            assert_eq!(out, fresh, "{s}");
        }
    }
    assert_eq!(out.capacity(), cap);
    assert_eq!(
        scratch,
        (sel.ring.as_ptr(), sel.suffix.as_ptr(), sel.dct.as_ptr())
    );
}

const ALL_KINDS: [Selector; 10] = [
    Selector::All,
    Selector::Every(4),
    Selector::Mod(3),
    Selector::Win(8),
    Selector::Hb(3),
    Selector::Dct(8),
    Selector::Hs,
    Selector::NMod(3),
    Selector::NWin(8),
    Selector::NHs,
];

#[test]
fn display_canonical_names() {
    let names: Vec<String> = ALL_KINDS.iter().map(|s| s.to_string()).collect();
    assert_eq!(
        names,
        [
            "all", "every-4", "mod-3", "win-8", "hb-3", "dct-8", "hs", "nmod-3", "nwin-8", "nhs"
        ]
    );
}

#[test]
fn from_str_paper_spellings() {
    let cases = [
        ("4th", Selector::Every(4)),
        ("6th", Selector::Every(6)),
        ("8TH", Selector::Every(8)),
        ("every-4", Selector::Every(4)),
        ("M3", Selector::Mod(3)),
        ("M-3", Selector::Mod(3)),
        ("Mod-7", Selector::Mod(7)),
        ("W8", Selector::Win(8)),
        ("w-5", Selector::Win(5)),
        ("Hb3", Selector::Hb(3)),
        ("HB-4", Selector::Hb(4)),
        ("Dct8", Selector::Dct(8)),
        ("Hs", Selector::Hs),
        ("HS", Selector::Hs),
        ("NM3", Selector::NMod(3)),
        ("nm-8", Selector::NMod(8)),
        ("NW8", Selector::NWin(8)),
        ("NW-9", Selector::NWin(9)),
        ("NHs", Selector::NHs),
        ("ALL", Selector::All),
        (" nwin-8 ", Selector::NWin(8)),
    ];
    for (s, want) in cases {
        assert_eq!(s.parse::<Selector>(), Ok(want), "{s:?}");
    }
}

#[test]
fn from_str_rejects() {
    for (s, msg) in [
        ("mod-0", "at least 1"),
        ("0th", "at least 1"),
        ("W0", "at least 1"),
        ("nwin-0", "at least 1"),
        ("hb-0", "at least 1"),
        ("dct0", "at least 1"),
        ("every-0", "at least 1"),
        ("mod", "needs a parameter"),
        ("W", "needs a parameter"),
        ("hs-3", "takes no parameter"),
        ("all8", "takes no parameter"),
        ("mod-x", "not a whole number"),
        ("mod--3", "not a whole number"),
        ("mod-+3", "not a whole number"),
        ("win-99999999999", "too large"),
        ("hailstorm", "unknown selector"),
        ("", "unknown selector"),
        ("th", "unknown selector"),
    ] {
        let err = s.parse::<Selector>().expect_err(s);
        assert!(err.contains(msg), "{s:?}: {err}");
    }
}

proptest! {
    #[test]
    fn display_from_str_round_trip(kind in 0usize..10, x in 1u32..=u32::MAX) {
        let sel = match ALL_KINDS[kind] {
            Selector::Every(_) => Selector::Every(x),
            Selector::Mod(_) => Selector::Mod(x),
            Selector::Win(_) => Selector::Win(x),
            Selector::Hb(_) => Selector::Hb(x),
            Selector::Dct(_) => Selector::Dct(x),
            Selector::NMod(_) => Selector::NMod(x),
            Selector::NWin(_) => Selector::NWin(x),
            other => other,
        };
        prop_assert_eq!(sel.to_string().parse::<Selector>(), Ok(sel));
        prop_assert_eq!(sel.to_string().to_uppercase().parse::<Selector>(), Ok(sel));
    }
}

#[test]
fn shingle_key_selectors_read_only_the_keys() {
    let doc = Doc::new(40, 8);
    let keys_only = DocKeys {
        token_fps: &[],
        token_hashes: &[],
        shingle_keys: &doc.keys,
        k: 8,
        mix: standard().mix(),
    };
    for sel in [
        Selector::All,
        Selector::Every(4),
        Selector::Mod(3),
        Selector::NMod(3),
        Selector::Win(8),
        Selector::NWin(8),
    ] {
        let mut out = vec![];
        sel.select(&keys_only, &mut out);
        assert_eq!(out, doc.select(sel), "{sel}");
    }
}
