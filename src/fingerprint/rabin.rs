//! Rabin fingerprints over GF(2), table-driven (Broder's method).

/// P = x^64 + x^4 + x^3 + x + 1 without its x^64 term (ALGORITHMS §1.4).
pub const POLY: u64 = 0x1B;

/// A degree-64 Rabin fingerprinter.
#[derive(Clone)]
pub struct Rabin {
    _private: (),
}
