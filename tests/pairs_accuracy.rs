//! Accuracy of simhash against exact Jaccard on the test fixtures.
//!
//! The goal (docs/near-duplicates.md): with verification at J ≥ 0.8 and the
//! default distance, precision and recall ≥ 0.95 on both corpora. The full
//! table of that document is printed by
//! `cargo test --release --test pairs_accuracy -- --ignored --nocapture`.
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

mod common;

use std::collections::HashSet;
use std::time::Instant;

use common::{answers, fixture};
use lineage_core::fingerprint::ShingleRoller;
use lineage_core::fingerprint::polynomial::standard;
use lineage_core::text::{Format, prepare, tokens};
use lineage_similar::docs::{self, Similar, load_similar};
use lineage_similar::simhash::{self, Backend, Options};
use lineage_similar::{Pair, exact};
use lineage_source::Order;
use lineage_source::{Filter, WalkOptions};

const CORPORA: [&str; 3] = ["rust-book", "answers", EDITED];
/// The generated answers plus one edited copy of each document (see [`edited`]).
const EDITED: &str = "answers+edited";
const THRESHOLDS: [f64; 4] = [0.5, 0.7, 0.8, 0.9];

fn load(name: &str) -> Similar {
    match name {
        EDITED => edited(),
        "answers" => load_dir(answers().path()),
        _ => load_dir(&fixture(name)),
    }
}

fn load_dir(root: &std::path::Path) -> Similar {
    load_similar(
        root,
        &Filter::default_patterns(),
        WalkOptions::default(),
        32 << 20,
        Order::Path,
        standard(),
        8,
        false,
    )
    .unwrap()
}

/// The answers have few near duplicates (they copy parts of longer
/// sources), so P and R there rest on 2–6 pairs. This adds, for every
/// document, a copy with each token replaced with probability q, q spread
/// evenly over 0–4 % (a fixed xorshift), which puts about a hundred pairs at
/// Jaccard resemblances between ~0.5 and 1, many near each threshold.
fn edited() -> Similar {
    let dir = answers();
    let root = dir.path();
    let mut l = load_dir(root);
    let roller = ShingleRoller::new(standard(), 8);
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let n = l.paths.len();
    for i in 0..n {
        let bytes = std::fs::read(root.join(&l.paths[i])).unwrap();
        let text = prepare(&bytes, Format::Plain);
        let q = 0.04 * i as f64 / n as f64;
        let words: Vec<String> = tokens(&text)
            .into_iter()
            .map(|t| {
                if (next() >> 11) as f64 / (1u64 << 53) as f64 <= q {
                    format!("edit{}", next() % 1000)
                } else {
                    t.key
                }
            })
            .collect();
        l.docs
            .push(docs::sim_doc(&words.join(" "), standard(), &roller, false));
        l.paths.push(format!("edited/{}", l.paths[i]));
    }
    l
}

fn ids(pairs: &[Pair]) -> HashSet<(u32, u32)> {
    pairs.iter().map(|p| (p.a, p.b)).collect()
}

/// Precision and recall of `found` against `truth` (1 when nothing is
/// expected or nothing is found, so empty runs do not read as failures).
fn score(found: &HashSet<(u32, u32)>, truth: &HashSet<(u32, u32)>) -> (f64, f64) {
    let hits = found.intersection(truth).count() as f64;
    let p = if found.is_empty() {
        1.0
    } else {
        hits / found.len() as f64
    };
    let r = if truth.is_empty() {
        1.0
    } else {
        hits / truth.len() as f64
    };
    (p, r)
}

#[test]
fn verified_simhash_meets_the_goal_at_0_8() {
    for name in CORPORA {
        let l = load(name);
        let truth = ids(&exact::pairs(&l.docs, 0.8));
        let least = match name {
            "answers" => 2,
            "rust-book" => 15,
            _ => 50,
        };
        assert!(
            truth.len() >= least,
            "{name}: only {} true pairs",
            truth.len()
        );
        let mut results = Vec::new();
        for backend in [Backend::Memory, Backend::Sqlite] {
            let mut o = Options::new(0.8, 64, true);
            o.backend = backend;
            let (found, _) = simhash::pairs(&l.docs, 0.8, &o).unwrap();
            let (p, r) = score(&ids(&found), &truth);
            assert!(
                p >= 0.95 && r >= 0.95,
                "{name} {backend}: P {p:.3} R {r:.3}"
            );
            results.push(found);
        }
        // Both indices answer the same Hamming queries exactly.
        assert_eq!(results[0], results[1], "{name}: memory and sqlite differ");
    }
}

#[test]
fn unverified_simhash_estimates_are_near_the_truth() {
    // Without verification the estimate from the distance should still be
    // roughly right for the pairs it reports: mean absolute error ≤ 0.1.
    let l = load("rust-book");
    let o = Options::new(0.8, 64, false);
    let (found, _) = simhash::pairs(&l.docs, 0.8, &o).unwrap();
    assert!(!found.is_empty());
    let err: f64 = found
        .iter()
        .map(|p| {
            let j = exact::jaccard(
                &l.docs[p.a as usize].shingles,
                &l.docs[p.b as usize].shingles,
            );
            (p.similarity - j).abs()
        })
        .sum::<f64>()
        / found.len() as f64;
    assert!(err <= 0.1, "mean error {err:.3}");
}

/// The table of docs/near-duplicates.md: per setting and threshold,
/// precision / recall · h · candidates examined as a share of all pairs.
#[test]
#[ignore = "prints the accuracy table; run in release with --nocapture"]
fn accuracy_table() {
    for name in CORPORA {
        let l = load(name);
        let n = l.docs.iter().filter(|d| !d.shingles.is_empty()).count();
        let all_pairs = (n * (n - 1) / 2) as f64;
        let mut truths = Vec::new();
        let mut exact_line = String::new();
        for t in THRESHOLDS {
            let start = Instant::now();
            let p = exact::pairs(&l.docs, t);
            let secs = start.elapsed().as_secs_f64();
            exact_line += &format!(" {} ({:.3} s) |", p.len(), secs);
            truths.push(ids(&p));
        }
        println!(
            "\n### {name} ({} documents, {n} with shingles)\n",
            l.docs.len()
        );
        println!("| setting | J ≥ 0.5 | J ≥ 0.7 | J ≥ 0.8 | J ≥ 0.9 |");
        println!("| --- | --- | --- | --- | --- |");
        println!("| exact: true pairs (seconds) |{exact_line}");
        let row = |label: String, opts: &dyn Fn(f64) -> Options| {
            let mut cells = String::new();
            for (t, truth) in THRESHOLDS.iter().zip(&truths) {
                let o = opts(*t);
                let (found, stats) = simhash::pairs(&l.docs, *t, &o).unwrap();
                let (p, r) = score(&ids(&found), truth);
                cells += &format!(
                    " {p:.2} / {r:.2} · h {} · {:.0} % |",
                    o.distance,
                    100.0 * stats.candidates as f64 / all_pairs,
                );
            }
            println!("| {label} |{cells}");
        };
        for bits in [64u32, 128] {
            for verify in [true, false] {
                let v = if verify { "verified" } else { "unverified" };
                row(format!("{bits}-bit, {v}, default h"), &|t| {
                    Options::new(t, bits, verify)
                });
            }
        }
        for verify in [true, false] {
            let v = if verify { "verified" } else { "unverified" };
            for h in [3, 6, 9, 12, 16, 20] {
                row(format!("64-bit, {v}, h = {h}"), &|t| {
                    let mut o = Options::new(t, 64, verify);
                    o.distance = h;
                    o
                });
            }
        }
        row("64-bit, verified, default h, SQLite index".into(), &|t| {
            let mut o = Options::new(t, 64, true);
            o.backend = Backend::Sqlite;
            o
        });
    }
}

/// Bytes per document of the two Hamming indices as they grow (the "bounded
/// memory" table of docs/near-duplicates.md), with uniform random sketches.
#[test]
#[ignore = "prints the index sizes; run in release with --nocapture"]
fn index_bytes_per_document() {
    use lineage_similar::simhash::multi::choose_slices;
    use lineage_similar::simhash::{MultiIndex, SqlIndex};
    println!("| documents | h | memory: slices | memory B/doc | SQLite: slices | SQLite B/doc |");
    println!("| --- | --- | --- | --- | --- | --- |");
    for n in [1_000u32, 10_000, 100_000] {
        for h in [3, 9, 16] {
            let mut x = 0x9e37_79b9_7f4a_7c15u64;
            let sketches: Vec<u64> = (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x
                })
                .collect();
            let mut mem = MultiIndex::<u64>::new(choose_slices(64, h, n as usize), h);
            let sql = SqlIndex::<u64>::open_in_memory(h).unwrap();
            sql.in_transaction(|sql| {
                for (d, &s) in sketches.iter().enumerate() {
                    mem.insert(d as u32, s);
                    sql.insert(d as u32, s)?;
                }
                Ok(())
            })
            .unwrap();
            println!(
                "| {n} | {h} | {} | {:.0} | {} | {:.0} |",
                mem.slices().len(),
                mem.heap_bytes() as f64 / f64::from(n),
                sql.slices().len(),
                sql.file_bytes().unwrap() as f64 / f64::from(n),
            );
        }
    }
}
