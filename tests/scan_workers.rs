//! `scan --workers N`: the pass split by bucket range gives the sequential
//! pass's report, byte for byte (the report has no timing fields), at the
//! default table size, where it holds the book, and at one where it samples
//! or evicts. (Many small epochs: crates/split's property test.)
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

mod common;

use common::{fixture, lineage};

fn scan(args: &[&str]) -> Vec<u8> {
    let out = lineage(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn scan_json_is_byte_identical_for_1_2_and_4_workers() {
    let book = fixture("rust-book");
    let book = book.to_str().unwrap();
    for settings in [
        &[][..],
        &["--table-size", "64KiB"],
        &["--table-size", "64KiB", "--align", "off"],
        &["--table-size", "64KiB", "--eviction", "lru"],
        // Not split: the sequential pass, whatever the workers.
        &["--table-size", "64KiB", "--eviction", "lucky"],
    ] {
        let report = |workers: &str| {
            let mut args = vec!["scan", book, "--json", "--workers", workers];
            args.extend(settings);
            scan(&args)
        };
        let one = report("1");
        assert!(one.starts_with(b"{\"format\":\"lineage-report/1\""));
        for workers in ["2", "4"] {
            assert!(
                report(workers) == one,
                "{settings:?}: {workers} workers differ from 1"
            );
        }
    }
}

#[test]
fn workers_must_be_at_least_one() {
    let book = fixture("rust-book");
    let out = lineage(&["scan", book.to_str().unwrap(), "--workers", "0"]);
    assert!(!out.status.success());
}

#[test]
fn workers_come_from_the_config_file_and_are_bounded() {
    let book = fixture("rust-book");
    let book = book.to_str().unwrap();
    let dir = common::TempDir::new("workers-config");
    let config = |workers: u32| {
        let file = dir.write(
            &format!("c{workers}.toml"),
            format!("workers = {workers}\n"),
        );
        file.to_str().unwrap().to_string()
    };
    let from_file = scan(&["scan", book, "--json", "--config", &config(3)]);
    assert!(from_file == scan(&["scan", book, "--json", "--workers", "1"]));
    // Read, and checked: an absurd count is refused with its key named.
    let out = lineage(&["scan", book, "--config", &config(5000)]);
    let line = common::fails_with_one_line(&out);
    assert!(line.contains("workers") && line.contains("1024"), "{line}");
    let out = lineage(&["scan", book, "--workers", "5000"]);
    assert!(!out.status.success());
}

/// A thousand workers asked for on a small folder: no more threads than
/// the table has ranges or the machine cores, so memory stays small (every
/// pair of workers has channels: it took 1.7 GB for the demo), and the
/// report is the one of a worker.
#[cfg(target_os = "linux")]
#[test]
fn a_thousand_workers_cost_what_the_table_can_use() {
    let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo");
    let demo = demo.to_str().unwrap();
    let many = scan(&["scan", demo, "--json", "--workers", "1024"]);
    assert!(many == scan(&["scan", demo, "--json", "--workers", "1"]));
    let rss = common::largest_child_rss_kib();
    assert!(rss < 512 << 10, "{rss} KiB");
}
