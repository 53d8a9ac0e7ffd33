//! `cargo run --release --example generate_pages -- DIR N`: the generated
//! folder of `benches/index.rs` (`generate`), for timing `lineage pairs` by
//! hand: N documents of ~10 KB of random words (`w0` … `w29999`) in 100
//! folders, every fifth one starting with the first half of an earlier one,
//! mtimes one second apart.
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

use std::path::Path;

#[path = "../benches/common/pages.rs"]
mod pages;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        eprintln!("usage: generate_pages DIR N");
        std::process::exit(2);
    }
    let n: usize = args[2].parse().expect("N");
    let bytes = pages::generate(Path::new(&args[1]), n);
    println!("{n} documents, {bytes} bytes");
}
