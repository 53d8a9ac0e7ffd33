//! Selection ratios (ssr = selected units / shingles, percent, over all documents)
//! of the selectors on real text, against docs/algorithms.md §2's sanity numbers.
//!
//! Both texts are fixtures of the repository (`tests/fixtures/README.md`): the
//! GPL-3 verbatim, and chapters of the Rust book across five editions.
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

use lineage_core::fingerprint;
use lineage_core::fingerprint::polynomial::standard;
use lineage_origin::select::{DocKeys, Selection, Selector};
use std::path::Path;

const K: usize = 8;
const GPL3: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/GPL-3");

struct Doc {
    fps: Vec<u64>,
    hashes: Vec<u64>,
    keys: Vec<u64>,
}

fn prepare(text: &str) -> Doc {
    let t = fingerprint::token_fps(standard(), text);
    let mut keys = vec![];
    fingerprint::shingle_keys(standard(), &t.fps, K, &mut keys);
    let mut hashes = vec![];
    fingerprint::token_hashes(&t.fps, &mut hashes);
    Doc {
        fps: t.fps,
        hashes,
        keys,
    }
}

/// (selected units, shingles) over all documents.
fn counts(docs: &[Doc], sel: Selector) -> (usize, usize) {
    let mut selection = Selection::new();
    let mut out = vec![];
    let (mut selected, mut shingles) = (0, 0);
    for d in docs {
        let keys = DocKeys {
            token_fps: &d.fps,
            token_hashes: &d.hashes,
            shingle_keys: &d.keys,
            k: K,
            mix: standard().mix(),
        };
        selection.select_into(sel, &keys, &mut out);
        selected += out.len();
        shingles += d.keys.len();
    }
    (selected, shingles)
}

fn ssr(docs: &[Doc], sel: Selector) -> f64 {
    let (selected, shingles) = counts(docs, sel);
    100.0 * selected as f64 / shingles as f64
}

fn sel(name: &str) -> Selector {
    name.parse().unwrap()
}

/// Check every (selector, expected ssr, tolerance) and report all misses at once.
fn check(docs: &[Doc], corpus: &str, want: &[(&str, f64, f64)]) {
    let mut misses = vec![];
    for &(name, expected, tol) in want {
        let got = ssr(docs, sel(name));
        eprintln!("{corpus}: ssr {name:>5} = {got:5.2} % (expected {expected:.1} ± {tol})");
        if (got - expected).abs() > tol {
            misses.push(format!(
                "{name}: {got:.2} % not within {expected:.1} ± {tol}"
            ));
        }
    }
    assert!(misses.is_empty(), "{corpus}: {misses:#?}");
}

/// docs/algorithms.md §2: GPL-3, k = 8, regression targets ± 2 percentage points.
#[test]
fn ssr_on_gpl3_matches_the_sanity_numbers() {
    let text = std::fs::read_to_string(GPL3)
        .unwrap_or_else(|e| panic!("{GPL3} is needed for docs/algorithms.md §2's figures: {e}"));
    let docs = [prepare(&text)];
    let n = docs[0].fps.len();
    assert!(
        (5500..=5900).contains(&n),
        "{GPL3} has {n} tokens; the sanity numbers were measured on ~5.7k"
    );
    check(
        &docs,
        "GPL-3",
        &[
            ("hs", 25.6, 2.0),
            ("nhs", 16.1, 2.0),
            ("w8", 21.9, 2.0),
            ("nw8", 16.3, 2.0),
            ("nw5", 15.1, 2.0),
            ("nw9", 15.4, 2.0),
            ("m4", 24.3, 2.0),
            ("nm4", 13.9, 2.0),
            ("nm3", 14.5, 2.0),
            ("m8", 12.1, 2.0),
            ("nm8", 10.0, 2.0),
        ],
    );
}

fn rust_book_editions() -> Vec<Doc> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rust-book");
    let entries = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("fixture {} is missing: {e}", dir.display()));
    let mut paths: Vec<_> = entries
        .map(|e| e.expect("readable corpus entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    paths.sort();
    assert!(
        paths.len() >= 70,
        "{} holds only {} documents",
        dir.display(),
        paths.len()
    );
    paths
        .iter()
        .map(|p| {
            prepare(&String::from_utf8_lossy(
                &std::fs::read(p).expect("readable document"),
            ))
        })
        .collect()
}

/// The paper's best selector per family (NHs, 4th, NW8, NM3, Hb3, Dct8) and their
/// bases on the whole corpus, printed for the record and checked against what
/// each algorithm's definition predicts.
#[test]
fn ssr_on_rust_book_editions() {
    let docs = rust_book_editions();
    let (units, shingles) = counts(&docs, Selector::All);
    assert_eq!(units, shingles);
    eprintln!("rust-book: {} documents, {shingles} shingles", docs.len());

    // Hb-p and Dct-p: a segment is kept iff its p-1 tokens after the start do not
    // break, probability (1-1/p)^(p-1), and segments start at rate 1/p.
    let hb = |p: f64| 100.0 * (1.0 - 1.0 / p).powf(p - 1.0) / p;
    check(
        &docs,
        "rust-book",
        &[
            // Context-free and 2/k for distinct tokens (Abdel-Hamid et al. 2009).
            ("hs", 25.0, 2.0),
            ("nhs", 16.1, 2.0),
            // Exactly one in four, up to each document's tail.
            ("4th", 25.0, 0.5),
            // 2/(w+1) (Schleimer et al.).
            ("w8", 22.2, 2.0),
            ("nw8", 16.3, 2.0),
            // 1/l.
            ("m4", 25.0, 2.0),
            ("nm3", 14.5, 2.0),
            ("hb3", hb(3.0), 1.5),
            ("dct8", hb(8.0), 1.5),
        ],
    );

    // Same segmentation, so the same number of units.
    assert_eq!(counts(&docs, sel("hb3")).0, counts(&docs, sel("dct3")).0);
    assert_eq!(counts(&docs, sel("hb8")).0, counts(&docs, sel("dct8")).0);
    // The no-complete-overlap pass only discards.
    for (base, n) in [("hs", "nhs"), ("w8", "nw8"), ("m3", "nm3")] {
        assert!(ssr(&docs, sel(n)) < ssr(&docs, sel(base)), "{n} < {base}");
    }
}
