//! `sweep --workers N`: runs split over the threads the runs leave idle
//! give the sequential replays' report, byte for byte but for each run's
//! wall time, at table sizes that sample and evict; Lucky and unbounded
//! runs are not split and still match. (Many small histories: crates/split's
//! property test.)
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

mod common;

use common::{fixture, lineage};

/// The report of `sweep args`, each run's `"seconds"` value left out.
fn sweep(args: &[&str]) -> String {
    let out = lineage(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut kept = String::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("\"seconds\":") {
        let (before, after) = rest.split_at(at + "\"seconds\":".len());
        kept.push_str(before);
        let end = after.find([',', '}']).unwrap();
        assert!(after[..end].parse::<f64>().is_ok(), "{}", &after[..end]);
        rest = &after[end..];
    }
    kept.push_str(rest);
    kept
}

#[test]
fn sweep_json_is_identical_for_1_2_and_8_workers() {
    let book = fixture("rust-book");
    let book = book.to_str().unwrap();
    // Each a few runs (fewer where unevicting runs are replayed once for
    // all): on 2 workers a run is split only where it is alone, on 8 each of
    // up to 4 runs is split over 8 / runs workers.
    let grid: &[&[&str]] = &[
        &[
            "--sizes",
            "16KiB,64KiB",
            "--selectors",
            "nhs",
            "--evictions",
            "cc,lru",
        ],
        &[
            "--sizes",
            "16KiB",
            "--selectors",
            "nhs",
            "--evictions",
            "lru",
        ],
        &[
            "--sizes",
            "16KiB",
            "--selectors",
            "all",
            "--evictions",
            "cc",
            "--aligns",
            "on,off",
        ],
        // Lucky and unbounded runs are never split; the others beside them are.
        &[
            "--sizes",
            "16KiB,unbounded",
            "--selectors",
            "nhs",
            "--evictions",
            "lucky,cc",
        ],
    ];
    for settings in grid {
        let report = |workers: &str| {
            let mut args = vec!["sweep", book, "--json", "--workers", workers];
            args.extend(*settings);
            sweep(&args)
        };
        let one = report("1");
        assert!(one.starts_with("{\"format\":\"lineage-sweep/1\""));
        assert!(one.contains("\"evictions\":"), "{one}");
        for workers in ["2", "8"] {
            assert!(
                report(workers) == one,
                "{settings:?}: {workers} workers differ from 1"
            );
        }
    }
}

#[test]
fn sweep_workers_must_be_at_least_one() {
    let book = fixture("rust-book");
    let out = lineage(&["sweep", book.to_str().unwrap(), "--workers", "0"]);
    assert!(!out.status.success());
}
