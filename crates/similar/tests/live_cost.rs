//! What the live near-duplicate clusters (`lineage_similar::live`) cost on
//! real corpora, against the simhash multi-index they replaced (folders
//! read by `docs::load_similar`).
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

use std::sync::Arc;
use std::time::Instant;

use lineage_similar::docs::load_similar;
use lineage_similar::live::Clusters;
use lineage_similar::simhash;
use lineage_source::{Filter, Order, WalkOptions};

/// What the live clusters cost at each threshold: every document of a
/// corpus inserted in order (sets in memory, as the engine's first
/// comparison caches them), against the simhash multi-index the clusters
/// used before, on the same documents in the same order.
/// `LINEAGE_CORPORA=… cargo test --release -p lineage-similar --test live_cost -- --ignored --nocapture`
#[test]
#[ignore]
fn live_cost() {
    let Ok(base) = std::env::var("LINEAGE_CORPORA") else {
        return;
    };
    let names = std::env::var("LINEAGE_LIVE_CORPORA")
        .unwrap_or_else(|_| "rust-book-editions,short-answers".into());
    println!(
        "| corpus | J ≥ | minhash live: seconds, candidates, pairs | simhash multi-index: seconds, candidates, pairs |"
    );
    println!("| --- | --- | --- | --- |");
    for name in names.split(',') {
        let root = std::path::Path::new(&base).join(name);
        let l = load_similar(
            &root,
            &Filter::default_patterns(),
            WalkOptions::default(),
            32 << 20,
            Order::Path,
            lineage_core::fingerprint::polynomial::standard(),
            8,
            false,
        )
        .unwrap();
        let sets: Vec<Arc<[u64]>> = l.docs.iter().map(|d| d.shingles.clone().into()).collect();
        for min in [0.5, 0.7, 0.8] {
            let start = Instant::now();
            let mut c = Clusters::new(min);
            let mut fetched = 0u64;
            for (i, s) in sets.iter().enumerate() {
                c.insert(i as u32, s, |o| {
                    fetched += 1;
                    Ok::<_, ()>(sets[o as usize].clone())
                })
                .unwrap();
            }
            let mh = start.elapsed().as_secs_f64();
            let mh_pairs: usize = c.clusters().0.iter().map(|c| c.pairs.len()).sum();
            let start = Instant::now();
            let (p, st) =
                simhash::pairs(&l.docs, min, &simhash::Options::new(min, 64, true)).unwrap();
            let sh = start.elapsed().as_secs_f64();
            println!(
                "| {name} | {min} | {mh:.3} s, {fetched}, {mh_pairs} | {sh:.3} s, {}, {} |",
                st.candidates,
                p.len()
            );
        }
    }
}
