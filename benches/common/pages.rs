//! The generated folder of `benches/index.rs` and `examples/generate_pages`:
//! flat pages of random words, a fifth of them starting with half of an
//! earlier one. Included by path (`#[path]`), as a bench and an example share
//! no module otherwise.

use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

/// `n` documents of ~10 KB in 100 folders, every fifth one half copied from
/// an earlier one. Returns the bytes written.
pub fn generate(root: &Path, n: usize) -> u64 {
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
