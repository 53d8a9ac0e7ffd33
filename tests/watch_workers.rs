//! `watch --workers N`: a first walk that reads more files than
//! `lineage_engine::SPLIT_FILES` runs its pass split by bucket range, and
//! says of every version what the sequential pass says.
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

mod common;

use common::{TempDir, Watch, text};

#[test]
fn a_large_first_walk_is_the_same_for_1_and_3_workers() {
    let dir = TempDir::new("watch-workers");
    let root = dir.path().join("docs");
    std::fs::create_dir_all(&root).unwrap();
    let n = lineage_engine::SPLIT_FILES as usize + 60;
    for i in 0..n {
        // Forty shared passages, each page its own tail: copies throughout.
        let page = format!("{} {}", text(i as u64 % 40, 80), text(1000 + i as u64, 20));
        std::fs::write(root.join(format!("p{i:04}.md")), page).unwrap();
    }
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
