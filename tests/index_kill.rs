//! Crash safety: `lineage index` killed with SIGKILL at random points of a
//! large first indexing, several times, then run to the end: the index
//! opens, no document is lost or duplicated, and every stored outcome equals
//! a clean run's. The watched folder is unchanged throughout.
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

mod common;
mod index_common;

use std::collections::HashSet;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::TempDir;
use common::{command, run_json};
use index_common::{Rng, generate, tree_state};

const DOCS: usize = 3000;
const KILLS: usize = 8;

/// Versions committed to the index at `dir` (0 if there is none yet), read
/// while no lineage runs.
fn committed(dir: &std::path::Path) -> u64 {
    let db = dir.join("index.db");
    if !db.exists() {
        return 0;
    }
    let c = rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .unwrap();
    c.query_row("SELECT count(*) FROM versions", [], |r| r.get::<_, i64>(0))
        .map(|n| n as u64)
        .unwrap_or(0)
}

fn as_str(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn killed_runs_resume_to_the_clean_result() {
    let tmp = TempDir::new("ix-kill");
    let root = tmp.path().join("root");
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    generate(&root, DOCS, 250, 11);
    let before = tree_state(&root);
    let (root_s, clean_ix, ix) = (
        root.to_str().unwrap().to_string(),
        tmp.path().join("clean"),
        tmp.path().join("killed"),
    );
    // A table small enough that snapshots are quick, large enough to evict.
    let args = |dir: &std::path::Path| -> Vec<String> {
        [
            "index",
            &root_s,
            "--json",
            "--documents",
            "--table-size",
            "4MiB",
            "--index",
            dir.to_str().unwrap(),
        ]
        .map(String::from)
        .to_vec()
    };

    let started = Instant::now();
    let (clean, _) = run_json(&home, &as_str(&args(&clean_ix)));
    let clean_time = started.elapsed();
    assert_eq!(clean["documents"], DOCS as u64);

    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let mut rng = Rng(seed | 1);
    let mut killed = 0;
    let mut log = Vec::new();
    for _ in 0..KILLS {
        let mut child = command(&home, &as_str(&args(&ix)))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // A random point of what is left to do: the share of documents not
        // yet committed of a clean run's time, plus the open (which replays
        // cached fingerprints after a kill), so most kills land mid-indexing
        // and some in replays and snapshot writes.
        let left = 1.0 - committed(&ix) as f64 / DOCS as f64;
        let span = clean_time.mul_f64(left) + Duration::from_millis(60);
        let at = span.mul_f64(rng.below(1000) as f64 / 1000.0);
        std::thread::sleep(at);
        let finished = child.try_wait().unwrap().is_some();
        if !finished {
            child.kill().unwrap(); // SIGKILL
            killed += 1;
        }
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{stderr}");
        log.push(format!(
            "{at:?}: {} ({} committed)",
            if finished { "finished" } else { "killed" },
            committed(&ix)
        ));
    }
    let (after, stderr) = run_json(&home, &as_str(&args(&ix)));
    let context = format!("seed {seed}, runs {log:?}, last stderr: {stderr}");
    eprintln!("clean run {clean_time:?}; {context}");
    assert!(killed >= KILLS / 2, "too few runs were killed: {context}");

    let history = after["history"].as_array().unwrap();
    let paths: Vec<&str> = history
        .iter()
        .map(|v| v["path"].as_str().unwrap())
        .collect();
    let unique: HashSet<&&str> = paths.iter().collect();
    assert_eq!(paths.len(), DOCS, "lost or duplicated: {context}");
    assert_eq!(unique.len(), DOCS, "duplicated: {context}");
    assert_eq!(after["documents"], DOCS as u64, "{context}");
    // The same versions, but for when each index saw them.
    let unseen = |v: &serde_json::Value| {
        let mut h = v["history"].clone();
        for version in h.as_array_mut().unwrap() {
            version.as_object_mut().unwrap().remove("seen_ms");
        }
        h
    };
    assert_eq!(unseen(&after), unseen(&clean), "{context}");
    assert_eq!(tree_state(&root), before, "the watched folder changed");
    // And a last run has nothing to do.
    let (last, stderr) = run_json(&home, &as_str(&args(&ix)));
    assert_eq!(last["files_read"], 0, "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
}
