//! Rolling shingle fingerprints, one token (8 bytes) at a time.

/// Rolls k-shingle fingerprints over token fingerprints.
#[derive(Clone)]
pub struct ShingleRoller {
    k: usize,
}

impl ShingleRoller {
    pub fn new(k: usize) -> ShingleRoller {
        assert!(k >= 1, "k must be at least 1");
        ShingleRoller { k }
    }

    pub fn k(&self) -> usize {
        self.k
    }

    /// The 62-bit keys of all k-shingles of `fps` into `out` (cleared first).
    pub fn keys(&self, fps: &[u64], out: &mut Vec<u64>) {
        let _ = (fps, out);
        todo!("ShingleRoller::keys")
    }
}
