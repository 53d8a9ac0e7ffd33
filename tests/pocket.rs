//! The pocket index (Potthast): the MPHF index against brute force, the
//! checksum's false-match rate, and `lineage pocket build` + `query` end to end.
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

mod common;

use std::collections::BTreeSet;

use common::{TempDir, lineage, lineage_json};
use lineage_similar::fuzzy::pocket::{Pocket, PocketFile, checksum};
use proptest::prelude::*;

/// SplitMix64: a fixed-seed stream, so the rate test is deterministic.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Every code's lookup is exactly the set of documents with that code, and
    /// an unknown code finds nothing (unknown codes whose checksum equals some
    /// known code's are left out: those may match, with probability 2^-16).
    #[test]
    fn index_returns_exactly_the_docs_sharing_a_code(
        docs in prop::collection::vec(prop::collection::vec(0u64..300, 0..4), 0..60),
        unknown in prop::collection::vec(300u64..u64::MAX, 0..50),
    ) {
        // Spread the small universe over the 64-bit space as real codes are.
        let spread = |c: u64| lineage_core::fingerprint::fmix64(c + 1);
        let codes: Vec<Vec<u64>> = docs.iter().map(|d| d.iter().map(|&c| spread(c)).collect()).collect();
        let p = Pocket::build(&codes);
        let known: BTreeSet<u64> = codes.iter().flatten().copied().collect();
        prop_assert_eq!(p.slots(), known.len());
        for &c in &known {
            let want: Vec<u32> = (0..codes.len() as u32)
                .filter(|&d| codes[d as usize].contains(&c))
                .collect();
            prop_assert_eq!(p.lookup(c), &want[..]);
        }
        let sums: BTreeSet<u16> = known.iter().map(|&c| checksum(c)).collect();
        for u in unknown.into_iter().map(spread) {
            if !known.contains(&u) && !sums.contains(&checksum(u)) {
                prop_assert!(p.lookup(u).is_empty());
            }
        }
        prop_assert_eq!(p.postings(), codes.iter().map(|c| c.iter().collect::<BTreeSet<_>>().len()).sum::<usize>());
    }
}

/// The MPHF sends unknown codes to arbitrary slots; the 16-bit checksum lets
/// about 2^-16 of those through.
#[test]
fn checksums_reject_unknown_codes_at_about_2_pow_minus_16() {
    let mut rng = SplitMix(7);
    let codes: Vec<Vec<u64>> = (0..20_000).map(|_| vec![rng.next(), rng.next()]).collect();
    let p = Pocket::build(&codes);
    assert_eq!(p.slots(), 40_000);
    let (mut slotted, mut false_matches) = (0u64, 0u64);
    let probes = 1u64 << 22;
    for _ in 0..probes {
        let u = rng.next();
        if p.has_slot(u) {
            slotted += 1;
            if !p.lookup(u).is_empty() {
                false_matches += 1;
            }
        }
    }
    let expected = slotted as f64 / 65536.0;
    eprintln!(
        "{probes} unknown codes: {slotted} reached a slot, {false_matches} passed the checksum (expected {expected:.1})"
    );
    assert!(
        slotted > probes / 10,
        "the MPHF gave few unknown codes a slot: {slotted}"
    );
    assert!(
        (false_matches as f64) > expected / 2.5 && (false_matches as f64) < expected * 2.5,
        "{false_matches} false matches, expected about {expected:.1}"
    );
}

fn words(seed: u64, n: usize) -> String {
    // English-looking text from a fixed vocabulary, so language detection and
    // prefix classes see real words.
    const VOCAB: &[&str] = &[
        "the",
        "of",
        "and",
        "to",
        "a",
        "in",
        "is",
        "that",
        "memory",
        "ownership",
        "borrow",
        "checker",
        "reference",
        "lifetime",
        "compiler",
        "program",
        "variable",
        "value",
        "function",
        "pointer",
        "string",
        "vector",
        "thread",
        "closure",
        "iterator",
        "trait",
        "generic",
        "module",
        "crate",
        "package",
        "error",
        "result",
        "option",
        "match",
        "pattern",
        "struct",
        "enum",
        "method",
        "heap",
        "stack",
        "scope",
        "drop",
        "clone",
        "copy",
        "slice",
        "macro",
        "unsafe",
        "test",
        "cargo",
        "build",
        "release",
        "debug",
    ];
    let mut r = SplitMix(seed);
    (0..n)
        .map(|_| VOCAB[(r.next() % VOCAB.len() as u64) as usize])
        .collect::<Vec<_>>()
        .join(" ")
}

const GERMAN: &str = "Die Eigentümerschaft ist eine Reihe von Regeln, die bestimmen, wie ein \
Programm den Speicher verwaltet. Alle Programme müssen die Art und Weise verwalten, wie sie den \
Arbeitsspeicher eines Computers nutzen, während sie laufen. Einige Sprachen haben eine \
Speicherbereinigung, die regelmäßig nach nicht mehr genutztem Speicher sucht, während das \
Programm läuft; in anderen Sprachen muss der Programmierer den Speicher explizit zuweisen und \
freigeben. Der Compiler prüft diese Regeln, und wenn eine Regel verletzt wird, wird das \
Programm nicht kompiliert.";

#[test]
fn build_and_query_end_to_end() {
    let root = TempDir::new("pocket-root");
    let out = TempDir::new("pocket-out");
    let a = words(1, 600);
    root.write("a.md", &a);
    root.write("notes/b.txt", words(2, 600));
    root.write("c.md", words(3, 40));
    root.write("de.md", GERMAN);
    root.write("picture.png", b"\x89PNG\r\n\x1a\n\0\0\0binary");
    let idx = out.path().join("docs.pocket");
    let idx_s = idx.to_str().unwrap();
    let root_s = root.path().to_str().unwrap();

    let b = lineage_json(&[
        "pocket", "build", root_s, "-o", idx_s, "--json", "--order", "path",
    ]);
    assert_eq!(b["format"], "lineage-pocket-build/1");
    assert_eq!(b["documents"], 4);
    assert_eq!(b["fingerprinted"], 4);
    assert_eq!(b["languages"]["en"], 3);
    assert_eq!(b["languages"]["de"], 1);
    let file_bytes = std::fs::metadata(&idx).unwrap().len();
    assert_eq!(b["file_bytes"], file_bytes);
    assert!((b["bytes_per_document"].as_f64().unwrap() - file_bytes as f64 / 4.0).abs() < 1e-9);
    let bpk = b["mphf_bits_per_key"].as_f64().unwrap();
    assert!(bpk > 1.0 && bpk < 64.0, "{bpk}");
    assert_eq!(b["postings"], 8, "two codes per document");
    assert!(
        b["skipped"].as_array().unwrap().is_empty(),
        "png is not a document by name"
    );

    // The file reads back with the documents in path order.
    let f = PocketFile::read(&idx).unwrap();
    let paths: Vec<&str> = f.docs.iter().map(|d| d.path.as_str()).collect();
    assert_eq!(paths, ["a.md", "c.md", "de.md", "notes/b.txt"]);

    // A copy of a.md outside the root finds a.md with both codes and Jaccard 1.
    let q = out.write("query.md", &a);
    let q_s = q.to_str().unwrap();
    let de_q = out.write("frage.md", GERMAN);
    let r = lineage_json(&[
        "pocket",
        "query",
        idx_s,
        q_s,
        de_q.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(r["format"], "lineage-pocket-query/1");
    assert_eq!(r["documents"], 4);
    let first = &r["queries"][0];
    assert_eq!(first["language"], "en");
    assert_eq!(first["codes"], 2);
    let m = &first["matches"][0];
    assert_eq!(m["path"], "a.md");
    assert_eq!(m["id"], 0);
    assert_eq!(m["shared_codes"], 2);
    assert_eq!(m["similarity"], 1.0);
    assert_eq!(m["jaccard"], 1.0);
    for m in first["matches"].as_array().unwrap() {
        assert_ne!(m["path"], "de.md", "German codes never meet English ones");
    }
    let second = &r["queries"][1];
    assert_eq!(second["language"], "de");
    assert_eq!(second["matches"][0]["path"], "de.md");
    assert_eq!(second["matches"][0]["jaccard"], 1.0);

    // The readable form says the same.
    let plain = lineage(&["pocket", "query", idx_s, q_s]);
    assert!(plain.status.success());
    let text = String::from_utf8(plain.stdout).unwrap();
    assert!(text.contains("2/2 codes  jaccard 1.000  a.md"), "{text}");

    // Once the indexed file is gone its Jaccard cannot be computed: null.
    std::fs::remove_file(root.path().join("a.md")).unwrap();
    let r = lineage_json(&["pocket", "query", idx_s, q_s, "--json"]);
    let m = &r["queries"][0]["matches"][0];
    assert_eq!(m["path"], "a.md");
    assert!(m["jaccard"].is_null());
    assert_eq!(m["similarity"], 1.0);
}

/// Exit 2 and one line on stderr: the result for a bad or corrupt index
/// (a value clap rejects: its whole message, with the way to `--help`).
fn assert_fails(args: &[&str], needle: &str) {
    let out = lineage(args);
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    if err.starts_with("error: ") {
        assert!(err.contains("--help"), "{err}");
    } else {
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    }
    assert!(err.contains(needle), "{err:?} lacks {needle:?}");
    assert!(out.stdout.is_empty());
}

/// Exit 2 and clap's whole message: what is missing, the usage, `--help`.
fn assert_usage(args: &[&str], needle: &str) {
    let out = lineage(args);
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("required arguments"), "{err}");
    assert!(
        err.contains(needle) && err.contains("Usage:"),
        "{err:?} lacks {needle:?}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn bad_and_corrupt_indexes_exit_2() {
    let root = TempDir::new("pocket-bad");
    root.write("docs/a.md", words(4, 300));
    let idx = root.path().join("i.pocket");
    let (idx_s, docs) = (
        idx.to_str().unwrap(),
        root.path().join("docs").to_str().unwrap().to_owned(),
    );
    lineage_json(&["pocket", "build", &docs, "-o", idx_s, "--json"]);
    let q = root.path().join("docs/a.md");
    let q_s = q.to_str().unwrap();
    lineage_json(&["pocket", "query", idx_s, q_s, "--json"]);

    let bytes = std::fs::read(&idx).unwrap();
    let mut bad = bytes.clone();
    let mid = bytes.len() / 2;
    bad[mid] ^= 0x40;
    let bad_p = root.write("bad.pocket", &bad);
    assert_fails(
        &["pocket", "query", bad_p.to_str().unwrap(), q_s, "--json"],
        "pocket index is damaged (checksum mismatch)",
    );
    let short = root.write("short.pocket", &bytes[..bytes.len() - 3]);
    assert_fails(
        &["pocket", "query", short.to_str().unwrap(), q_s],
        "truncated",
    );
    let other = root.write("notes.pocket", "just some text, no index");
    assert_fails(
        &["pocket", "query", other.to_str().unwrap(), q_s],
        "not a lineage pocket index",
    );
    assert_fails(
        &["pocket", "query", "/nonexistent/x.pocket", q_s],
        "x.pocket",
    );
    assert_fails(
        &["pocket", "query", idx_s, "/nonexistent/q.md"],
        "cannot read /nonexistent/q.md",
    );
    assert_usage(&["pocket", "query", idx_s], "<PATH>...");
    assert_fails(
        &["pocket", "build", "/nonexistent/root", "-o", idx_s],
        "/nonexistent/root",
    );
    assert_fails(
        &["pocket", "build", &docs, "-o", idx_s, "--lang", "fr"],
        "unknown language",
    );
    assert_usage(&["pocket", "build", &docs], "--output <FILE>");
}

/// `-o` never writes through a planted link, never replaces a FIFO or a
/// device, and leaves no temp file behind.
#[cfg(target_os = "linux")]
#[test]
fn pocket_build_writes_only_its_own_file() {
    let root = TempDir::new("pocket-safe");
    root.write("docs/a.md", words(4, 300));
    let docs = root.path().join("docs");
    let out = root.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let victim = root.write("victim.txt", "precious");
    std::os::unix::fs::symlink(&victim, out.join("idx.pocket.tmp")).unwrap();
    let target = out.join("idx.pocket");
    let ok = lineage(&[
        "pocket",
        "build",
        docs.to_str().unwrap(),
        "-o",
        target.to_str().unwrap(),
    ]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    let mut names: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["idx.pocket", "idx.pocket.tmp"],
        "the planted link untouched, no temp"
    );
    // A FIFO as the target: refused, and still a FIFO.
    let fifo = out.join("pipe");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let refused = lineage(&[
        "pocket",
        "build",
        docs.to_str().unwrap(),
        "-o",
        fifo.to_str().unwrap(),
    ]);
    assert_fails_on(&refused, "not a regular file");
    use std::os::unix::fs::FileTypeExt;
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    // Querying a device or a FIFO is an error, not an endless read.
    for q in ["/dev/zero", fifo.to_str().unwrap()] {
        let out = lineage(&["pocket", "query", target.to_str().unwrap(), q]);
        assert_fails_on(&out, "not a regular file");
    }
}

fn assert_fails_on(out: &std::process::Output, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains(needle), "{err}");
}
