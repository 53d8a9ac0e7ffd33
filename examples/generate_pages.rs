//! `cargo run --release --example generate_pages -- DIR N`: the generated
//! folder of `benches/index.rs` (`generate`), for timing `lineage pairs` by
//! hand: N documents of ~10 KB of random words (`w0` … `w29999`) in 100
//! folders, every fifth one starting with the first half of an earlier one,
//! mtimes one second apart.

use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        eprintln!("usage: generate_pages DIR N");
        std::process::exit(2);
    }
    let n: usize = args[2].parse().expect("N");
    let bytes = generate(Path::new(&args[1]), n);
    println!("{n} documents, {bytes} bytes");
}

/// As benches/index.rs's `generate`.
fn generate(root: &Path, n: usize) -> u64 {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut total = 0;
    let mut texts: Vec<String> = Vec::with_capacity(n);
    for i in 0..n {
        let mut t = String::with_capacity(10_500);
        if i % 5 == 4 {
            let src = &texts[(next() % i as u64) as usize];
            let cut = src[..src.len() / 2].rfind(' ').unwrap_or(0);
            t.push_str(&src[..cut]);
        }
        while t.len() < 10_000 {
            t.push_str(&format!("w{} ", next() % 30_000));
        }
        let p = root.join(format!("d{:02}/doc{i:05}.md", i % 100));
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, &t).unwrap();
        let f = fs::File::options().write(true).open(&p).unwrap();
        f.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(1_600_000_000 + i as u64))
            .unwrap();
        total += t.len() as u64;
        texts.push(t);
    }
    total
}
