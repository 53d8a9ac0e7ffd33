//! End-to-end tests of `lineage pairs` against docs/formats.md §6, driving the real
//! binary on a folder with planted near duplicates.
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

mod common;

use std::collections::{BTreeMap, HashSet};

use common::{TempDir, lineage, lineage_json};
use serde_json::Value;

/// `n` pseudo-words from a fixed LCG: distinct enough that shingles of
/// different texts do not meet by chance.
fn words(seed: u64, n: usize) -> Vec<String> {
    const SYL: [&str; 16] = [
        "ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ba", "de", "fo", "gu", "ha", "jo", "pe",
        "zu",
    ];
    let mut x = seed;
    (0..n)
        .map(|_| {
            let mut w = String::new();
            for _ in 0..3 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                w += SYL[(x >> 60) as usize];
            }
            w
        })
        .collect()
}

/// Jaccard of 8-shingle sets, the slow way over whitespace words (the texts
/// here are lowercase ASCII words and spaces, so these are the tokens).
fn jaccard(a: &str, b: &str) -> f64 {
    let set = |t: &str| -> HashSet<Vec<String>> {
        let w: Vec<String> = t.split_whitespace().map(str::to_string).collect();
        w.windows(8).map(<[String]>::to_vec).collect()
    };
    let (a, b) = (set(a), set(b));
    a.intersection(&b).count() as f64 / a.union(&b).count() as f64
}

struct Planted {
    dir: TempDir,
    texts: BTreeMap<&'static str, String>,
}

/// a.md; b.md = a.md with three words changed (J ≈ 0.89); sub/c.md = a.md;
/// d.txt unrelated; e.md shorter than a shingle; z.txt binary (skipped).
fn planted() -> Planted {
    let dir = TempDir::new("pairs");
    let a = words(1, 400);
    let mut b = a.clone();
    for i in [50, 200, 350] {
        b[i] = "changed".into();
    }
    let mut texts = BTreeMap::new();
    texts.insert("a.md", a.join(" "));
    texts.insert("b.md", b.join(" "));
    texts.insert("sub/c.md", a.join(" "));
    texts.insert("d.txt", words(2, 400).join(" "));
    texts.insert("e.md", "too short".to_string());
    for (path, text) in &texts {
        dir.write(path, text);
    }
    dir.write("z.txt", b"binary\0data");
    Planted { dir, texts }
}

fn root(p: &Planted) -> &str {
    p.dir.path().to_str().unwrap()
}

/// (a, b, similarity) of the JSON's pairs, checking their shape.
fn pairs_of(v: &Value) -> Vec<(String, String, f64)> {
    v["pairs"]
        .as_array()
        .expect("pairs array")
        .iter()
        .map(|p| {
            let o = p.as_object().unwrap();
            assert_eq!(o.len(), 3, "a pair has a, b and similarity: {p}");
            (
                p["a"].as_str().unwrap().to_string(),
                p["b"].as_str().unwrap().to_string(),
                p["similarity"].as_f64().unwrap(),
            )
        })
        .collect()
}

fn check_shape(v: &Value, method: &str) {
    assert_eq!(v["format"], "lineage-pairs/1");
    assert_eq!(v["method"], method);
    let pairs = pairs_of(v);
    for (a, b, s) in &pairs {
        assert!(a.as_bytes() < b.as_bytes(), "{a} < {b}");
        assert!(*s > 0.0 && *s <= 1.0, "similarity {s}");
    }
    let keys: Vec<(&str, &str)> = pairs.iter().map(|p| (p.0.as_str(), p.1.as_str())).collect();
    let mut sorted = keys.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(keys, sorted, "each pair once, in order");
    let clusters = v["clusters"].as_array().expect("clusters array");
    for w in clusters.windows(2) {
        assert!(w[0].as_array().unwrap().len() >= w[1].as_array().unwrap().len());
    }
    assert!(v["stats"].is_object());
}

#[test]
fn exact_finds_the_planted_pairs_with_their_jaccard() {
    let p = planted();
    let v = lineage_json(&["pairs", root(&p), "--json", "--method", "exact"]);
    check_shape(&v, "exact");
    let j_ab = jaccard(&p.texts["a.md"], &p.texts["b.md"]);
    assert!(j_ab > 0.8 && j_ab < 0.95, "{j_ab}");
    assert_eq!(
        pairs_of(&v),
        [
            ("a.md".to_string(), "b.md".to_string(), j_ab),
            ("a.md".into(), "sub/c.md".into(), 1.0),
            ("b.md".into(), "sub/c.md".into(), j_ab),
        ]
    );
    assert_eq!(
        v["clusters"],
        serde_json::json!([["a.md", "b.md", "sub/c.md"]])
    );
    assert_eq!(v["skipped"][0]["path"], "z.txt");
    assert_eq!(v["skipped"][0]["reason"], "binary");
    assert_eq!(v["stats"]["documents"], 5);
    assert_eq!(v["stats"]["documents_without_shingles"], 1);
    // Above the edited pair's similarity only the exact copy is left.
    let v = lineage_json(&[
        "pairs",
        root(&p),
        "--json",
        "--method",
        "exact",
        "--min-similarity",
        "0.95",
    ]);
    assert_eq!(
        pairs_of(&v),
        [("a.md".to_string(), "sub/c.md".to_string(), 1.0)]
    );
    assert_eq!(v["clusters"], serde_json::json!([["a.md", "sub/c.md"]]));
}

#[test]
fn simhash_finds_them_too() {
    let p = planted();
    let exact = lineage_json(&["pairs", root(&p), "--json", "--method", "exact"]);
    for extra in [&[][..], &["--simhash-index", "sqlite"], &["--bits", "128"]] {
        let mut args = vec!["pairs", root(&p), "--json", "--method", "simhash"];
        args.extend_from_slice(extra);
        let v = lineage_json(&args);
        check_shape(&v, "simhash");
        // Verified: the exact pairs with their exact similarity.
        assert_eq!(v["pairs"], exact["pairs"], "{extra:?}");
        assert_eq!(v["clusters"], exact["clusters"]);
        assert_eq!(v["stats"]["verify"], true);
    }
    // Unverified: the planted pairs, with estimates near the truth.
    let v = lineage_json(&[
        "pairs",
        root(&p),
        "--json",
        "--method",
        "simhash",
        "--no-verify",
    ]);
    check_shape(&v, "simhash");
    let got = pairs_of(&v);
    let names: Vec<(&str, &str)> = got.iter().map(|p| (p.0.as_str(), p.1.as_str())).collect();
    assert_eq!(
        names,
        [("a.md", "b.md"), ("a.md", "sub/c.md"), ("b.md", "sub/c.md")]
    );
    assert_eq!(got[1].2, 1.0, "identical sets, identical sketches");
    assert!((got[0].2 - jaccard(&p.texts["a.md"], &p.texts["b.md"])).abs() < 0.15);
    assert_eq!(v["stats"]["verify"], false);
}

#[test]
fn minhash_finds_them_at_every_threshold() {
    let p = planted();
    for t in ["0.3", "0.5", "0.8", "0.95", "1"] {
        let exact = lineage_json(&[
            "pairs",
            root(&p),
            "--json",
            "--method",
            "exact",
            "--min-similarity",
            t,
        ]);
        for extra in [
            &[][..],
            &["--hashes", "32"],
            &["--bands", "20", "--rows", "5"],
        ] {
            let mut args = vec!["pairs", root(&p), "--json", "--method", "minhash"];
            args.extend_from_slice(&["--min-similarity", t]);
            args.extend_from_slice(extra);
            let v = lineage_json(&args);
            check_shape(&v, "minhash");
            // Verified: the exact pairs with their exact similarity.
            assert_eq!(v["pairs"], exact["pairs"], "{t} {extra:?}");
            assert_eq!(v["clusters"], exact["clusters"]);
            let s = &v["stats"];
            assert!(s["bands"].as_u64().unwrap() * s["rows"].as_u64().unwrap() <= 256);
            assert_eq!(s["documents_with_shingles"], 4);
            // a.md and sub/c.md are one set.
            assert_eq!(s["distinct_sets"], 3);
        }
    }
    let v = lineage_json(&["pairs", root(&p), "--json", "--bands", "20", "--rows", "5"]);
    assert_eq!(v["method"], "minhash", "the default");
    assert_eq!(
        (v["stats"]["bands"].as_u64(), v["stats"]["rows"].as_u64()),
        (Some(20), Some(5))
    );
    let out = lineage(&[
        "pairs",
        root(&p),
        "--method",
        "minhash",
        "--min-similarity",
        "0.5",
    ]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("minhash: 156 hashes a page, in 52 bands of 3 rows; two pages whose band agrees in full are a candidate pair (at Jaccard 0.5, with probability 0.9990), verified by exact Jaccard\n"),
        "{text}"
    );
    // Sizes in words, not `band keys 168 B` (issue 41 item 9).
    let per = text.lines().find(|l| l.contains("per document")).unwrap();
    assert!(
        per.starts_with("  per document: 416 B of band keys (its sketch), beside "),
        "{text}"
    );
}

#[test]
fn readable_summary() {
    let p = planted();
    let out = lineage(&["pairs", root(&p), "--method", "exact"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("5 documents, 3 pairs with Jaccard ≥ 0.8 by exact, in 1 cluster\n"),
        "{text}"
    );
    assert!(text.contains("1.000  a.md  sub/c.md"), "{text}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("skipped z.txt: binary"));
    let out = lineage(&["pairs", root(&p), "--method", "simhash"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("simhash: 64 bits, Hamming distance ≤ 16"),
        "{text}"
    );
    // minhash is the default method.
    let out = lineage(&["pairs", root(&p)]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("5 documents, 3 pairs with Jaccard ≥ 0.8 by minhash, in 1 cluster\n"),
        "{text}"
    );
}

#[test]
fn bad_arguments_exit_2_with_a_clear_message() {
    let p = planted();
    let r = root(&p);
    for args in [
        &["pairs", r, "--json", "--method", "lsh"][..],
        &["pairs", r, "--json", "--min-similarity", "0"],
        &["pairs", r, "--json", "--min-similarity", "1.5"],
        &["pairs", r, "--json", "--min-similarity", "NaN"],
        &["pairs", r, "--json", "--method", "simhash", "--bits", "96"],
        &[
            "pairs",
            r,
            "--json",
            "--method",
            "simhash",
            "--hamming-distance",
            "33",
        ],
        &[
            "pairs",
            r,
            "--json",
            "--method",
            "simhash",
            "--simhash-index",
            "btree",
        ],
        &["pairs", r, "--json", "--bits", "64"],
        &["pairs", r, "--json", "--method", "exact", "--no-verify"],
        &["pairs", r, "--json", "-k", "0"],
        &["pairs", r, "--json", "--method", "minhash", "--hashes", "0"],
        &[
            "pairs", r, "--json", "--method", "minhash", "--hashes", "5000",
        ],
        &[
            "pairs", r, "--json", "--method", "minhash", "--hashes", "-3",
        ],
        &["pairs", r, "--json", "--method", "minhash", "--bands", "4"],
        &[
            "pairs", r, "--json", "--method", "minhash", "--bands", "0", "--rows", "3",
        ],
        &[
            "pairs", r, "--json", "--method", "minhash", "--bands", "100", "--rows", "100",
        ],
        &[
            "pairs",
            r,
            "--json",
            "--method",
            "minhash",
            "--bands",
            "4294967295",
            "--rows",
            "4294967295",
        ],
        &[
            "pairs", r, "--json", "--method", "minhash", "--bands", "4", "--rows", "4", "--hashes",
            "64",
        ],
        &["pairs", r, "--json", "--method", "minhash", "--bits", "64"],
        &[
            "pairs", r, "--json", "--method", "simhash", "--hashes", "64",
        ],
        &[
            "pairs", r, "--json", "--method", "exact", "--rows", "2", "--bands", "2",
        ],
        &["pairs", "/nonexistent/lineage-root", "--json"],
    ] {
        let out = lineage(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        // A value clap parses: its whole message, with the way to --help;
        // one the command checks: one line.
        if err.starts_with("error: ") {
            assert!(err.contains("--help"), "{args:?}: {err}");
        } else {
            assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
            assert!(err.starts_with("lineage: "), "{err}");
        }
    }
    let out = lineage(&["pairs", r, "--method", "lsh"]);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("unknown method 'lsh'"), "{err}");
    let out = lineage(&["pairs", r, "--method", "minhash", "--hashes", "0"]);
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err, "lineage: --hashes must be 1 to 4096, not 0\n");
}
