//! XXH64 (Yann Collet's xxHash, 64-bit, seed 0), streaming: the checksum of
//! framed files ([`super::framed`]) and cached fingerprint blobs. Several GB/s, so verifying a
//! 64 MiB snapshot at every open costs little; written out here (60 lines,
//! checked against the reference vectors) rather than adding a crate.

const P1: u64 = 0x9E37_79B1_85EB_CA87;
const P2: u64 = 0xC2B2_AE3D_27D4_EB4F;
const P3: u64 = 0x1656_67B1_9E37_79F9;
const P4: u64 = 0x85EB_CA77_C2B2_AE63;
const P5: u64 = 0x27D4_EB2F_1656_67C5;

/// An XXH64 state fed with [`Xxh64::update`].
#[derive(Clone)]
pub struct Xxh64 {
    acc: [u64; 4],
    buf: [u8; 32],
    buffered: usize,
    total: u64,
}

impl Default for Xxh64 {
    fn default() -> Xxh64 {
        Xxh64 {
            acc: [P1.wrapping_add(P2), P2, 0, 0u64.wrapping_sub(P1)],
            buf: [0; 32],
            buffered: 0,
            total: 0,
        }
    }
}

#[inline]
fn round(acc: u64, lane: u64) -> u64 {
    acc.wrapping_add(lane.wrapping_mul(P2))
        .rotate_left(31)
        .wrapping_mul(P1)
}

#[inline]
fn merge(h: u64, acc: u64) -> u64 {
    (h ^ round(0, acc)).wrapping_mul(P1).wrapping_add(P4)
}

fn le64(b: &[u8]) -> u64 {
    u64::from_le_bytes(b[..8].try_into().expect("8 bytes"))
}

impl Xxh64 {
    /// Feed `data`, after what was fed before.
    pub fn update(&mut self, mut data: &[u8]) {
        self.total += data.len() as u64;
        if self.buffered > 0 {
            let take = (32 - self.buffered).min(data.len());
            self.buf[self.buffered..self.buffered + take].copy_from_slice(&data[..take]);
            self.buffered += take;
            data = &data[take..];
            if self.buffered < 32 {
                return;
            }
            let stripe = self.buf;
            self.stripe(&stripe);
            self.buffered = 0;
        }
        let mut stripes = data.chunks_exact(32);
        for s in &mut stripes {
            self.stripe(s);
        }
        let rest = stripes.remainder();
        self.buf[..rest.len()].copy_from_slice(rest);
        self.buffered = rest.len();
    }

    #[inline]
    fn stripe(&mut self, s: &[u8]) {
        for (i, a) in self.acc.iter_mut().enumerate() {
            *a = round(*a, le64(&s[8 * i..]));
        }
    }

    /// The hash of everything fed so far; the state is left as it is.
    pub fn finish(&self) -> u64 {
        let a = self.acc;
        let mut h = if self.total >= 32 {
            let h = a[0]
                .rotate_left(1)
                .wrapping_add(a[1].rotate_left(7))
                .wrapping_add(a[2].rotate_left(12))
                .wrapping_add(a[3].rotate_left(18));
            a.iter().fold(h, |h, &v| merge(h, v))
        } else {
            P5
        };
        h = h.wrapping_add(self.total);
        let mut rest = &self.buf[..self.buffered];
        while rest.len() >= 8 {
            h = (h ^ round(0, le64(rest)))
                .rotate_left(27)
                .wrapping_mul(P1)
                .wrapping_add(P4);
            rest = &rest[8..];
        }
        if rest.len() >= 4 {
            let v = u64::from(u32::from_le_bytes(rest[..4].try_into().expect("4 bytes")));
            h = (h ^ v.wrapping_mul(P1))
                .rotate_left(23)
                .wrapping_mul(P2)
                .wrapping_add(P3);
            rest = &rest[4..];
        }
        for &b in rest {
            h = (h ^ u64::from(b).wrapping_mul(P5))
                .rotate_left(11)
                .wrapping_mul(P1);
        }
        h ^= h >> 33;
        h = h.wrapping_mul(P2);
        h ^= h >> 29;
        h = h.wrapping_mul(P3);
        h ^ (h >> 32)
    }
}

/// XXH64 of `data` in one call.
pub fn xxh64(data: &[u8]) -> u64 {
    let mut h = Xxh64::default();
    h.update(data);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_vectors() {
        assert_eq!(xxh64(b""), 0xEF46_DB37_51D8_E999);
        assert_eq!(xxh64(b"a"), 0xD24E_C4F1_A98C_6E5B);
        assert_eq!(xxh64(b"abc"), 0x44BC_2CF5_AD77_0999);
        assert_eq!(
            xxh64(b"Nobody inspects the spammish repetition"),
            0xFBCE_A83C_8A37_8BF1
        );
    }

    #[test]
    fn streaming_equals_one_call_at_every_split() {
        let data: Vec<u8> = (0..200u32).map(|i| (i * 37 % 251) as u8).collect();
        let whole = xxh64(&data);
        for a in 0..data.len() {
            for b in [a, a + 1, a + 31, a + 64].map(|b| b.min(data.len())) {
                let mut h = Xxh64::default();
                h.update(&data[..a]);
                h.update(&data[a..b]);
                h.update(&data[b..]);
                assert_eq!(h.finish(), whole, "split at {a}, {b}");
            }
        }
    }
}
