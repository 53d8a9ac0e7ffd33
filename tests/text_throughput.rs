//! Throughput sanity check of tokenize + fingerprint on the Rust book fixture.
//! Run in release: `cargo test --release --test text_throughput -- --ignored --nocapture`.
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

use std::path::Path;
use std::time::{Duration, Instant};

use lineage_core::fingerprint::polynomial::standard;
use lineage_core::fingerprint::{shingle_keys, token_fps};

fn corpus() -> Option<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rust-book");
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    paths.sort();
    let mut text = String::new();
    for p in paths {
        text.push_str(&String::from_utf8_lossy(&std::fs::read(p).ok()?));
    }
    (!text.is_empty()).then_some(text)
}

/// Best of a few runs, in MB/s (10^6 bytes).
fn best_mb_per_s(bytes: usize, mut run: impl FnMut()) -> f64 {
    let mut best = Duration::MAX;
    for _ in 0..7 {
        let start = Instant::now();
        run();
        best = best.min(start.elapsed());
    }
    bytes as f64 / best.as_secs_f64() / 1e6
}

#[test]
#[ignore = "timing; run in release"]
fn tokenize_and_fingerprint_throughput() {
    let Some(text) = corpus() else {
        eprintln!("corpus not found; skipped");
        return;
    };
    let mut tokens = 0;
    let tf = best_mb_per_s(text.len(), || {
        tokens = token_fps(standard(), &text).fps.len()
    });
    let fps = token_fps(standard(), &text).fps;
    let mut keys = Vec::new();
    let sh = best_mb_per_s(text.len(), || shingle_keys(standard(), &fps, 8, &mut keys));
    eprintln!(
        "{} bytes, {tokens} tokens: tokenize+fingerprint {tf:.0} MB/s; k=8 shingle keys {sh:.0} MB/s of text",
        text.len()
    );
    assert!(tokens > text.len() / 20, "the corpus is mostly words");
    assert_eq!(keys.len(), fps.len() - 7);
}
