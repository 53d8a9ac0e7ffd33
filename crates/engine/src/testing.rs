//! What the engine's unit tests share.

/// `n` words drawn from 5,000 by `seed` (xorshift).
pub(crate) fn text(seed: u64, n: usize) -> String {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut words = Vec::with_capacity(n);
    for _ in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        words.push(format!("w{}", x % 5000));
    }
    words.join(" ")
}
