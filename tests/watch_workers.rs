//! `watch --workers N`: a first walk that reads more files than
//! `lineage_engine::SPLIT_FILES` runs its pass split by bucket range, and
//! says of every version what the sequential pass says.
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

mod common;

use common::{TempDir, Watch};

#[test]
fn a_large_first_walk_is_the_same_for_1_and_3_workers() {
    let dir = TempDir::new("watch-workers");
    let root = dir.path().join("docs");
    let n = lineage_engine::SPLIT_FILES as usize + 60;
    common::pages_that_copy(&root, n);
    let versions = |workers: &str| {
        let index = dir.path().join(format!("index-{workers}"));
        let settings = ["--workers", workers, "--table-size", "64KiB"];
        let w = Watch::start(
            &root,
            &index,
            &[&settings[..], &["--order", "path"]].concat(),
        );
        let mut seen: Vec<serde_json::Value> = (0..n)
            .map(|_| w.expect("the first walk's versions", |v| v["event"] == "version"))
            .collect();
        seen.sort_by_key(|v| v["id"].as_u64().unwrap());
        seen
    };
    let one = versions("1");
    assert!(
        one.iter()
            .any(|v| v["fresh_percent"].as_f64().unwrap() < 50.0),
        "pages that copy"
    );
    assert!(versions("3") == one, "3 workers differ from 1");
}
