//! The default answer (every shingle, a bottom-k table, labels as found) is
//! the exact one while the table holds the collection's distinct shingles:
//! copies keep their edges, a pasted page's new sentence is exactly what is
//! new, and the earlier of two origins wins. Past the table's capacity it
//! says it samples, and alignment keeps those answers exact through a table
//! of one bucket (64 of the pages' hundreds of shingles).
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

mod common;

use common::{TempDir, fixture, lineage_json, text};
use serde_json::Value;

/// `scan ROOT --json --order path` with the defaults and `extra`.
fn scan(root: &TempDir, extra: &[&str]) -> Value {
    let mut args = vec![
        "scan",
        root.path().to_str().unwrap(),
        "--json",
        "--order",
        "path",
    ];
    args.extend(extra);
    lineage_json(&args)
}

/// The tables each answer is checked with: the default, which holds these
/// pages, and one bucket, which samples them (checked: else the second
/// run would prove nothing).
fn tables(dir: &TempDir, check: impl Fn(&Value)) {
    let held = scan(dir, &[]);
    assert_eq!(held["table"]["regime"], "exact", "{}", held["table"]);
    check(&held);
    let sampled = scan(dir, &["--table-size", "1KiB"]);
    assert_eq!(
        sampled["table"]["regime"], "sampling",
        "{}",
        sampled["table"]
    );
    check(&sampled);
}

/// The document at `path` in a report.
fn doc<'a>(report: &'a Value, path: &str) -> &'a Value {
    report["documents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["path"] == path)
        .unwrap_or_else(|| panic!("{path} in {report}"))
}

fn id(report: &Value, path: &str) -> u64 {
    doc(report, path)["id"].as_u64().unwrap()
}

/// The fresh token ranges of a document, as `[start, end)` pairs.
fn fresh(report: &Value, path: &str) -> Vec<(u64, u64)> {
    doc(report, path)["fresh"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r[0].as_u64().unwrap(), r[1].as_u64().unwrap()))
        .collect()
}

/// (start, end, origin id) of every copied run.
fn copied(report: &Value, path: &str) -> Vec<(u64, u64, u64)> {
    doc(report, path)["copied"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let t = &c["tokens"];
            (
                t[0].as_u64().unwrap(),
                t[1].as_u64().unwrap(),
                c["origin"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn an_identical_copy_has_no_fresh_token() {
    let dir = TempDir::new("exact-copy");
    let page = text(1, 400);
    dir.write("a.md", &page);
    dir.write("b.md", &page);
    tables(&dir, |r| {
        assert_eq!(fresh(r, "b.md"), vec![]);
        assert_eq!(copied(r, "b.md"), vec![(0, 400, id(r, "a.md"))]);
    });
}

#[test]
fn a_copy_with_its_first_and_last_word_changed_stops_exactly_there() {
    let dir = TempDir::new("exact-edges");
    let words: Vec<String> = text(2, 300).split(' ').map(String::from).collect();
    dir.write("a.md", words.join(" "));
    let mut edited = words.clone();
    edited[0] = "changedfirst".into();
    edited[299] = "changedlast".into();
    dir.write("b.md", edited.join(" "));
    tables(&dir, |r| {
        assert_eq!(fresh(r, "b.md"), vec![(0, 1), (299, 300)]);
        assert_eq!(copied(r, "b.md"), vec![(1, 299, id(r, "a.md"))]);
    });
    // Unaligned, the sample's nearest-neighbour guess misses the edges.
    let guessed = scan(&dir, &["--table-size", "1KiB", "--align", "off"]);
    assert_ne!(fresh(&guessed, "b.md"), vec![(0, 1), (299, 300)]);
}

#[test]
fn a_page_pasted_from_two_origins_and_a_sentence_has_only_that_sentence_fresh() {
    let dir = TempDir::new("exact-paste");
    let (first, second) = (text(3, 200), text(4, 150));
    let sentence = "this one sentence of thirteen words was written for the pasted page alone";
    assert_eq!(sentence.split(' ').count(), 13);
    dir.write("1-first.md", &first);
    dir.write("2-second.md", &second);
    dir.write("3-pasted.md", format!("{first}\n\n{sentence}\n\n{second}"));
    tables(&dir, |r| {
        assert_eq!(fresh(r, "3-pasted.md"), vec![(200, 213)]);
        assert_eq!(
            copied(r, "3-pasted.md"),
            vec![
                (0, 200, id(r, "1-first.md")),
                (213, 363, id(r, "2-second.md"))
            ]
        );
        assert_eq!(doc(r, "3-pasted.md")["fresh_tokens"], 13);
    });
}

#[test]
fn of_two_origins_holding_the_same_words_the_earlier_wins() {
    let dir = TempDir::new("exact-earlier");
    let passage = text(5, 120);
    dir.write("1-original.md", &passage);
    // A later page carries the passage too, with words of its own around it.
    dir.write(
        "2-carrier.md",
        format!("{}\n\n{passage}\n\n{}", text(6, 50), text(7, 50)),
    );
    dir.write("3-copy.md", format!("{passage}\n\n{}", text(8, 40)));
    tables(&dir, |r| {
        let original = id(r, "1-original.md");
        assert_eq!(copied(r, "2-carrier.md"), vec![(50, 170, original)]);
        assert_eq!(copied(r, "3-copy.md"), vec![(0, 120, original)]);
        assert_eq!(fresh(r, "3-copy.md"), vec![(120, 160)]);
    });
}

#[test]
fn the_default_equals_the_exact_answer_on_a_book_and_says_so() {
    let root = fixture("rust-book");
    let root = root.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["scan", root, "--json", "--order", "path"];
        args.extend(extra);
        lineage_json(&args)
    };
    let default = run(&[]);
    let exact = run(&["--table-size", "unbounded"]);
    assert_eq!(default["documents"], exact["documents"]);
    let t = &default["table"];
    assert_eq!(t["regime"], "exact", "{t}");
    assert_eq!(t["evictions"], 0);
    assert_eq!(t["not_sampled"], 0);
    assert_eq!(t["distinct_keys"], t["occupied"]);
    assert_eq!(t["sampled_one_in"], 1.0);
    assert_eq!(default["params"]["selector"], "all");
    assert_eq!(default["params"]["eviction"], "bottom-k");
    assert_eq!(default["params"]["estimation"], "nb");

    // A table of a few buckets samples, and estimates the distinct keys it
    // was given within a few per cent (k-minimum values over 40 buckets of 64).
    let small = run(&["--table-size", "20KiB"]);
    let t = &small["table"];
    assert_eq!(t["regime"], "sampling", "{t}");
    let distinct = exact["table"]["occupied"].as_f64().unwrap();
    let estimate = t["distinct_keys"].as_f64().unwrap();
    assert!(
        (estimate / distinct - 1.0).abs() < 0.1,
        "{estimate} of {distinct}"
    );
    let one_in = t["sampled_one_in"].as_f64().unwrap();
    let held = t["occupied"].as_f64().unwrap();
    assert!((one_in - estimate / held).abs() < 0.01, "{t}");
    assert!(one_in > 5.0, "{t}");

    // Lucky evicts: no estimate of what it forgot.
    let lucky = run(&["--table-size", "20KiB", "--eviction", "lucky"]);
    assert_eq!(lucky["table"]["regime"], "evicting");
    assert_eq!(lucky["table"]["distinct_keys"], Value::Null);
}

#[test]
fn the_readable_summary_names_the_regime() {
    let dir = TempDir::new("exact-summary");
    dir.write("a.md", text(9, 300));
    dir.write("b.md", text(9, 300));
    let root = dir.path().to_str().unwrap();
    let out = common::lineage(&["scan", root]);
    let shown = String::from_utf8(out.stdout).unwrap();
    assert!(
        shown.contains("table holds all 293 distinct shingles: exact"),
        "{shown}"
    );
    let out = common::lineage(&["scan", root, "--table-size", "1KiB"]);
    let shown = String::from_utf8(out.stdout).unwrap();
    assert!(
        shown.contains("table sampling about 1 in ") && shown.contains("smallest keys"),
        "{shown}"
    );
}

/// `table.regime` says "exact" only when the answer is the exact one, and
/// agrees with the readable line: a table that holds every unit the paper's
/// selector (or bridging) gave it does not make the answer exact.
#[test]
fn the_regime_says_exact_only_when_the_answer_is() {
    let root = fixture("rust-book");
    let root = root.to_str().unwrap();
    let exact = lineage_json(&[
        "scan",
        root,
        "--json",
        "--order",
        "path",
        "--table-size",
        "unbounded",
    ]);
    for extra in [
        &[
            "--selector",
            "nhs",
            "--eviction",
            "lucky",
            "--estimation",
            "be",
        ][..],
        &["--estimation", "be"][..],
    ] {
        let mut args = vec!["scan", root, "--order", "path"];
        args.extend(extra);
        let mut json = args.clone();
        json.push("--json");
        let r = lineage_json(&json);
        let t = &r["table"];
        // The table held everything it was given, yet the answer is not
        // the exact one: so it must not say "exact".
        assert_eq!(
            (&t["evictions"], &t["not_sampled"]),
            (&0.into(), &0.into()),
            "{t}"
        );
        assert_ne!(r["documents"], exact["documents"], "{extra:?}");
        assert_eq!(t["regime"], "holds", "{extra:?}: {t}");
        let shown = String::from_utf8(common::lineage(&args).stdout).unwrap();
        let line = shown
            .lines()
            .find(|l| l.starts_with("table holds all"))
            .unwrap();
        assert!(!line.contains("exact"), "{extra:?}: {line}");
    }
}
