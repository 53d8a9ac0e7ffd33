//! Replay one origin-detection configuration over a folder (by default the
//! repository's `tests/fixtures/rust-book`), for
//! profiling the origin pass (perf, callgrind) apart from reading and
//! selecting:
//!
//! ```sh
//! cargo build --release --example replay
//! target/release/examples/replay nhs lucky 380KiB 50 [ROOT]
//! valgrind --tool=callgrind --toggle-collect='*OriginPass*process*' \
//!     target/release/examples/replay nhs lucky 380KiB 1
//! ```
//!
//! Prints the time per selected unit on stderr.
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

use std::path::{Path, PathBuf};
use std::time::Instant;

use lineage_core::fingerprint::polynomial::standard;
use lineage_origin::align::UnitKeys;
use lineage_origin::history::Keyed;
use lineage_origin::{Estimation, Eviction, OriginPass, Params, Selector, TableSize};
use lineage_source::Order;
use lineage_source::corpus;
use lineage_source::{Filter, WalkOptions};

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (selector, eviction, size, reps, root) = match args.as_slice() {
        [s, e, t, r] => (s, e, t, r, None),
        [s, e, t, r, root] => (s, e, t, r, Some(root)),
        _ => return Err("usage: replay SELECTOR EVICTION TABLE_SIZE REPETITIONS [ROOT]".into()),
    };
    let selector: Selector = selector.parse()?;
    let eviction: Eviction = eviction.parse()?;
    let table_size: TableSize = size.parse()?;
    let reps: usize = reps.parse().map_err(|e| format!("repetitions: {e}"))?;
    let root = root.map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rust-book"),
        PathBuf::from,
    );
    let corpus = corpus::load(
        &root,
        &Filter::default_patterns(),
        WalkOptions::default(),
        32 << 20,
        Order::Path,
        standard(),
    )
    .map_err(|e| e.to_string())?;
    let poly = standard();
    let keyed = Keyed::new(poly, corpus.docs.into_iter().map(|d| d.fps).collect(), 8);
    let units = keyed.select(selector);
    let params = Params {
        selector,
        eviction,
        estimation: Estimation::Be,
        table_size,
        ..Params::default()
    };
    let start = Instant::now();
    for _ in 0..reps {
        let mut pass = OriginPass::new(params).map_err(|e| e.to_string())?;
        let mut origins = UnitKeys::new(&units);
        for (d, u) in units.iter().enumerate() {
            std::hint::black_box(pass.process(d as u32, u, &mut origins));
        }
    }
    let n: usize = units.iter().map(Vec::len).sum();
    let per_unit = start.elapsed().as_secs_f64() * 1e9 / (n * reps.max(1)) as f64;
    eprintln!("{n} selected units, {per_unit:.1} ns a unit");
    Ok(())
}
