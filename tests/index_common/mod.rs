//! Helpers of the index tests: generated corpora, a fingerprint of a whole
//! tree (to show the watched folder is only read), and running the binary
//! with a chosen environment.
#![allow(dead_code)]

use std::collections::hash_map::DefaultHasher;
use std::fs;
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::time::{Duration, SystemTime};

/// A hash of every file, folder and link under `root`: paths, types, sizes,
/// mtimes (ns), contents and link targets. Equal before and after a run iff
/// the run changed nothing there (access times aside).
pub fn tree_state(root: &Path) -> u64 {
    let mut h = DefaultHasher::new();
    let mut n = 0;
    visit(root, root, &mut h, &mut n);
    n.hash(&mut h);
    h.finish()
}

fn visit(root: &Path, dir: &Path, h: &mut DefaultHasher, n: &mut u64) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        *n += 1;
        let m = fs::symlink_metadata(&p).unwrap();
        p.strip_prefix(root).unwrap().hash(h);
        m.len().hash(h);
        let mtime = m.modified().unwrap();
        mtime
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap()
            .hash(h);
        if m.file_type().is_symlink() {
            "link".hash(h);
            fs::read_link(&p).unwrap().hash(h);
        } else if m.is_dir() {
            "dir".hash(h);
            visit(root, &p, h, n);
        } else {
            "file".hash(h);
            // Sparse test files are large: hash their length, not a GiB of zeros.
            if m.len() <= 64 << 20 {
                fs::read(&p).unwrap().hash(h);
            }
        }
    }
}

/// A tiny deterministic generator (xorshift64*).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// `n` documents of about `words` words in `root`, in a few folders; every
/// fourth one is mostly a passage copied from an earlier one. Mtimes
/// are distinct and not in path order. Returns the number written.
pub fn generate(root: &Path, n: usize, words: usize, seed: u64) -> usize {
    let mut rng = Rng(seed | 1);
    let mut texts: Vec<String> = Vec::with_capacity(n);
    for i in 0..n {
        let mut t: Vec<String> = Vec::with_capacity(words + 16);
        let mut own = words;
        if i % 4 == 3 {
            let src = &texts[rng.below(i as u64) as usize];
            let take = src.len() * 3 / 4;
            let cut = src[..take].rfind(' ').unwrap_or(0);
            t.push(src[..cut].to_string());
            own = words / 4;
        }
        for _ in 0..own {
            t.push(format!("w{}", rng.below(20_000)));
        }
        texts.push(t.join(" "));
    }
    for (i, t) in texts.iter().enumerate() {
        let p = root.join(format!("f{:02}/doc{:05}.md", i % 7, (i * 7919) % n));
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, t).unwrap();
        let f = fs::File::options().write(true).open(&p).unwrap();
        f.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(1_600_000_000 + i as u64))
            .unwrap();
    }
    n
}
