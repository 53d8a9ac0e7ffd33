//! `index --workers N`: the pass split by bucket range gives the index the
//! sequential pass gives, at the default table size and at one where it
//! samples or evicts: every version's stored outcome the same, and the
//! table too, which a second run over changed files reads.
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

mod common;

use common::{TempDir, fixture, lineage};

/// `index --json --documents` of `root` into `index`, without the times
/// each version was seen.
fn index(root: &str, index: &str, workers: &str, settings: &[&str]) -> String {
    let mut args = vec![
        "index",
        root,
        "--index",
        index,
        "--json",
        "--documents",
        "--order",
        "path",
        "--workers",
        workers,
    ];
    args.extend(settings);
    let out = lineage(&args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for v in json["history"].as_array_mut().unwrap() {
        v.as_object_mut().unwrap().remove("seen_ms").unwrap();
    }
    json.to_string()
}

/// The rust-book fixture's pages, by name.
fn book_pages() -> Vec<std::path::PathBuf> {
    let mut pages: Vec<_> = std::fs::read_dir(fixture("rust-book"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    pages.sort();
    pages
}

#[test]
fn index_is_the_same_for_1_and_3_workers_from_scratch_and_catching_up() {
    let pages = book_pages();
    let dir = TempDir::new("index-workers");
    for settings in [
        &[][..],
        &["--table-size", "64KiB"],
        &["--table-size", "64KiB", "--eviction", "lru"],
        // Not split: the sequential pass, whatever the workers.
        &["--table-size", "64KiB", "--eviction", "lucky"],
    ] {
        let runs = |workers: &str| {
            let root = dir.path().join(format!("root-{workers}"));
            let _ = std::fs::remove_dir_all(&root);
            let ix = dir.path().join(format!("index-{workers}"));
            let _ = std::fs::remove_dir_all(&ix);
            let (root_s, ix_s) = (root.to_str().unwrap(), ix.to_str().unwrap());
            // The first half, then the rest with three pages changed.
            std::fs::create_dir_all(&root).unwrap();
            let half = pages.len() / 2;
            for p in &pages[..half] {
                std::fs::copy(p, root.join(p.file_name().unwrap())).unwrap();
            }
            let first = index(root_s, ix_s, workers, settings);
            for p in &pages[half..] {
                std::fs::copy(p, root.join(p.file_name().unwrap())).unwrap();
            }
            for p in &pages[..3] {
                let text = std::fs::read_to_string(p).unwrap();
                let changed = format!("{}\n\nA closing word.\n", &text[text.len() / 3..]);
                std::fs::write(root.join(p.file_name().unwrap()), changed).unwrap();
            }
            (first, index(root_s, ix_s, workers, settings))
        };
        let one = runs("1");
        assert!(one.1.contains("\"status\":\"replaced\""), "{settings:?}");
        assert!(runs("3") == one, "{settings:?}: 3 workers differ from 1");
    }
}

#[test]
fn a_replay_of_many_versions_is_the_same_for_1_and_3_workers() {
    let dir = TempDir::new("replay-workers");
    let root = dir.path().join("docs");
    // Past lineage_engine::SPLIT_FILES, so that the replay splits.
    common::pages_that_copy(&root, lineage_engine::SPLIT_FILES as usize + 60);
    let root = root.to_str().unwrap();
    let first = dir.path().join("index");
    index(
        root,
        first.to_str().unwrap(),
        "1",
        &["--table-size", "64KiB"],
    );
    // Other settings: the table is rebuilt from the cached fingerprints,
    // every outcome written again, nothing read.
    let replayed = |workers: &str| {
        let ix = dir.path().join(format!("index-{workers}"));
        common::copy_files(&first, &ix);
        let history = index(
            root,
            ix.to_str().unwrap(),
            workers,
            &["--table-size", "96KiB"],
        );
        assert!(history.contains("\"files_read\":0"), "{history:.200}");
        history
    };
    let one = replayed("1");
    assert!(replayed("3") == one, "3 workers replay otherwise than 1");
}

/// A thousand workers asked for by an index catching up on a table that
/// has filled (as many bucket ranges as workers): no more threads start
/// than the machine can use, so memory stays small (every pair of workers
/// has channels: 1.6 GB and 15 s for one changed page), and the index is
/// the one of a worker.
#[cfg(target_os = "linux")]
#[test]
fn a_thousand_workers_catching_up_cost_what_the_machine_can_use() {
    let dir = TempDir::new("index-thousand");
    // The same page changed in both runs (a folder's listing order is the
    // file system's, not the same for two folders everywhere).
    let first = book_pages()[0].file_name().unwrap().to_owned();
    let runs = |workers: &str| {
        let root = dir.path().join(format!("root-{workers}"));
        common::copy_files(&fixture("rust-book"), &root);
        let ix = dir.path().join(format!("index-{workers}"));
        let (root_s, ix_s) = (root.to_str().unwrap(), ix.to_str().unwrap());
        index(root_s, ix_s, "1", &[]);
        let page = root.join(&first);
        let text = std::fs::read_to_string(&page).unwrap();
        std::fs::write(&page, format!("{text}\n\nA closing word.\n")).unwrap();
        index(root_s, ix_s, workers, &[])
    };
    assert!(runs("1024") == runs("1"), "1024 workers differ from 1");
    let rss = common::largest_child_rss_kib();
    assert!(rss < 512 << 10, "{rss} KiB");
}
