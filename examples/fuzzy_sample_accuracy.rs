//! Precision and recall of the fuzzy-fingerprint and Heintze-sample candidates,
//! before and after verification, against exact Jaccard (the numbers of
//! docs/fuzzy-and-sample.md).
//!
//! cargo run --release --example fuzzy_sample_accuracy -- tests/fixtures/rust-book
//!
//! (docs/fuzzy-and-sample.md's figures were measured on Clough and Stevenson's
//! short-answer corpus, which is not part of the repository: pass its folder.)
//!
//! Options (key=value after the root): `eps=0.25,0.5` (fuzzification schemes),
//! `classes=DIR` (read `DIR/prefix-classes-en.tsv` and `DIR/stopwords-en.txt`
//! instead of the shipped English tables), `slack=0.1`, `prefix=0.002` (Koala's
//! common-prefix share, 0 = off), `k=8`. `synthetic=N` instead of ROOT checks
//! Heintze's scale claim on N documents of random substrings.
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

use std::collections::HashSet;
use std::path::Path;
use std::time::Instant;

use lineage_core::fingerprint::polynomial::standard;
use lineage_similar::fuzzy::{self, Lang, Model, Scheme};
use lineage_similar::sample::{self, SampleParams};
use lineage_similar::{SimDoc, exact};
use lineage_source::Order;
use lineage_source::{Filter, WalkOptions};

const THRESHOLDS: [f64; 4] = [0.5, 0.7, 0.8, 0.9];

fn main() {
    let mut args = std::env::args().skip(1);
    let root = args
        .next()
        .expect("usage: fuzzy_sample_accuracy ROOT|synthetic=N [key=value...]");
    if let Some(n) = root.strip_prefix("synthetic=") {
        synthetic(n.parse().expect("a document count"));
        return;
    }
    let mut eps: Vec<f64> = fuzzy::FuzzyParams::default()
        .schemes
        .iter()
        .map(|s| s.epsilon)
        .collect();
    let mut classes: Option<String> = None;
    let mut sp = SampleParams::default();
    let mut k = 8;
    for a in args {
        let (key, v) = a.split_once('=').expect("key=value");
        match key {
            "eps" => eps = v.split(',').map(|x| x.parse().unwrap()).collect(),
            "classes" => classes = Some(v.to_owned()),
            "slack" => sp.slack = v.parse().unwrap(),
            "prefix" => sp.common_prefix_share = v.parse().unwrap(),
            "k" => k = v.parse().unwrap(),
            _ => panic!("unknown option {key}"),
        }
    }
    sp.k = k;
    let docs = load(Path::new(&root), k);
    let truth = exact_pairs(&docs);
    println!(
        "{root}: {} documents, k = {k}; exact pairs: {}",
        docs.len(),
        THRESHOLDS
            .iter()
            .map(|&t| format!("J≥{t}: {}", truth.iter().filter(|p| p.2 >= t).count()))
            .collect::<Vec<_>>()
            .join(", ")
    );

    // Fuzzy fingerprints.
    let schemes: Vec<Scheme> = eps.iter().map(|&e| Scheme { epsilon: e }).collect();
    let custom = classes.map(|dir| {
        let read = |f: &str| std::fs::read_to_string(Path::new(&dir).join(f)).unwrap();
        Model::parse(
            Lang::En,
            &read("stopwords-en.txt"),
            &read("prefix-classes-en.tsv"),
        )
        .unwrap()
    });
    let t0 = Instant::now();
    let prints: Vec<fuzzy::Fingerprint> = docs
        .iter()
        .map(|d| match &custom {
            Some(m) => fuzzy::Fingerprint {
                lang: Lang::En,
                codes: m.codes(&d.terms, &schemes),
            },
            None => fuzzy::fingerprint(
                &d.terms,
                &fuzzy::FuzzyParams {
                    schemes: schemes.clone(),
                    ..Default::default()
                },
            ),
        })
        .collect();
    let fz = fuzzy::candidates_of(&prints);
    let fz_time = t0.elapsed();
    let distinct: HashSet<u64> = prints
        .iter()
        .flat_map(|f| f.codes.iter().copied())
        .collect();
    println!(
        "fuzzy: eps {eps:?}, {} distinct codes, {} candidates, {:.1} ms",
        distinct.len(),
        fz.len(),
        fz_time.as_secs_f64() * 1e3
    );
    println!(
        "| method | J ≥ | exact pairs | candidates | cand. precision | cand. recall | verified recall |"
    );
    println!("|---|---|---|---|---|---|---|");
    for &t in &THRESHOLDS {
        row("fuzzy", t, &fz, &truth, &docs);
    }

    // Heintze sample store.
    if sp.common_prefix_share > 0.0 {
        let table = sample::PrefixTable::build(&docs, standard(), k);
        println!(
            "sample: {:.1}% of shingles start with a common five-letter prefix (share > {})",
            100.0 * table.common_fraction(sp.common_prefix_share),
            sp.common_prefix_share
        );
    }
    let t0 = Instant::now();
    let run = sample::run(&docs, standard(), &sp).unwrap();
    let s_time = t0.elapsed();
    for &t in &THRESHOLDS {
        let cand = run.candidates(t - sp.slack);
        row("sample", t, &cand, &truth, &docs);
    }
    let st = &run.stats;
    println!(
        "sample: slack {}, prefix share {}; {} entries in {} blocks ({} B block file, {:.0} B/doc), \
         {} slots used, avg chain {:.3}, max chain {}, {:.1} probes/search, {:.2} ignored/search, {:.1} ms",
        sp.slack,
        sp.common_prefix_share,
        st.entries,
        st.blocks,
        st.block_file_bytes,
        st.block_file_bytes as f64 / docs.len() as f64,
        st.used_slots,
        st.avg_chain,
        st.max_chain,
        st.probes_per_search,
        st.ignored_per_search,
        s_time.as_secs_f64() * 1e3
    );
}

/// Heintze's scale claim: N documents of 100 uniformly hashed substrings, then
/// 1000 searches of 1000 substrings; blocks, chains and probes.
fn synthetic(n: u32) {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        x = lineage_core::fingerprint::fmix64(x.wrapping_add(0x9e37_79b9_7f4a_7c15));
        x
    };
    let t0 = Instant::now();
    let mut store = sample::SampleStore::default();
    for _ in 0..n {
        let hashes: Vec<u32> = (0..sample::STORED)
            .map(|_| sample::substring_hash(next()))
            .collect();
        store.add("", &hashes).unwrap();
    }
    let built = t0.elapsed();
    let p = SampleParams::default();
    let t0 = Instant::now();
    let mut probes = 0;
    for _ in 0..1000 {
        let q: Vec<u32> = (0..sample::SEARCHED)
            .map(|_| sample::substring_hash(next()))
            .collect();
        probes += store.search(&q, None, &p).probes;
    }
    let st = store.stats();
    println!(
        "synthetic: {n} documents, {} entries, {} blocks ({:.0} B/doc block file), {} slots used, \
         avg chain {:.2}, max chain {}, {:.0} probes/search; build {:.1} s, {:.2} ms/search",
        st.entries,
        st.blocks,
        st.block_file_bytes as f64 / f64::from(n),
        st.used_slots,
        st.avg_chain,
        st.max_chain,
        probes as f64 / 1000.0,
        built.as_secs_f64(),
        t0.elapsed().as_secs_f64()
    );
}

fn row(name: &str, t: f64, cand: &[(u32, u32)], truth: &[(u32, u32, f64)], docs: &[SimDoc]) {
    let want: HashSet<(u32, u32)> = truth
        .iter()
        .filter(|p| p.2 >= t)
        .map(|p| (p.0, p.1))
        .collect();
    let hit = cand.iter().filter(|c| want.contains(c)).count();
    let verified = fuzzy::verify(docs, cand, t);
    let vhit = verified
        .iter()
        .filter(|p| want.contains(&(p.a, p.b)))
        .count();
    let pct = |a: usize, b: usize| {
        if b == 0 {
            "–".to_string()
        } else {
            format!("{:.1}%", 100.0 * a as f64 / b as f64)
        }
    };
    assert_eq!(vhit, verified.len(), "verified pairs are exact");
    println!(
        "| {name} | {t} | {} | {} | {} | {} | {} |",
        want.len(),
        cand.len(),
        pct(hit, cand.len()),
        pct(hit, want.len()),
        pct(vhit, want.len())
    );
}

fn load(root: &Path, k: usize) -> Vec<SimDoc> {
    lineage_similar::docs::load_similar(
        root,
        &Filter::default_patterns(),
        WalkOptions::default(),
        1 << 40,
        Order::Path,
        standard(),
        k,
        true,
    )
    .unwrap()
    .docs
}

/// Every pair with Jaccard ≥ 0.5: the ground truth.
fn exact_pairs(docs: &[SimDoc]) -> Vec<(u32, u32, f64)> {
    exact::pairs(docs, 0.5)
        .into_iter()
        .map(|p| (p.a, p.b, p.similarity))
        .collect()
}
