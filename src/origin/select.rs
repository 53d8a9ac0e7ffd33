//! Selection algorithms (seed 003 §2.1, ALGORITHMS §2): which units of a document
//! are sent to the table.
//!
//! For shingle-based selectors a unit is a k-shingle (start position, its key).
//! For hash-breaking and DCT a unit is a segment of tokens with its own key.

use std::fmt;
use std::str::FromStr;

/// One selected unit: its 62-bit key and the tokens it covers, `start..end`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unit {
    pub key: u64,
    pub start: u32,
    pub end: u32,
}

/// A selection algorithm with its parameter (CONTRACT §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Selector {
    /// Every shingle.
    All,
    /// Shingles starting at 0, l, 2l, … (`every-L`, paper `4th`).
    Every(u32),
    /// Shingles whose key is divisible by l (`mod-L`, paper `M3`).
    Mod(u32),
    /// Winnowing with window w (`win-W`, paper `W8`).
    Win(u32),
    /// Revised hash-breaking with parameter p (`hb-P`, paper `Hb3`).
    Hb(u32),
    /// DCT fingerprints of hash-breaking segments (`dct-P`, paper `Dct8`).
    Dct(u32),
    /// Hailstorm (`hs`).
    Hs,
    /// No-complete-overlap Modulo (`nmod-L`, paper `NM3`).
    NMod(u32),
    /// No-complete-overlap Winnowing (`nwin-W`, paper `NW8`).
    NWin(u32),
    /// No-complete-overlap Hailstorm (`nhs`, paper `NHs`).
    NHs,
}

/// The keys of one document that selectors read.
#[derive(Clone, Copy, Debug)]
pub struct DocKeys<'a> {
    /// Rabin fingerprints of the tokens (not finalised): hash-breaking segments
    /// are fingerprinted from these.
    pub token_fps: &'a [u64],
    /// `fmix64` of each token fingerprint: Hailstorm's order, hash-breaking's test.
    pub token_hashes: &'a [u64],
    /// 62-bit keys of the k-shingles (`token_fps.len() - k + 1` of them, or none).
    pub shingle_keys: &'a [u64],
    /// Shingle length.
    pub k: usize,
}

impl Selector {
    /// Select the units of one document, in document order, into `out` (cleared first).
    pub fn select(self, doc: &DocKeys<'_>, out: &mut Vec<Unit>) {
        let _ = (doc, out);
        todo!("Selector::select")
    }
}

impl fmt::Display for Selector {
    /// The canonical spelling: `all`, `every-4`, `mod-3`, `win-8`, `hb-3`,
    /// `dct-8`, `hs`, `nmod-3`, `nwin-8`, `nhs`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let _ = f;
        todo!("Selector::fmt")
    }
}

impl FromStr for Selector {
    type Err = String;

    /// Case-insensitive; canonical names and the paper's spellings (`4th`, `M3`,
    /// `W8`, `Hb3`, `Dct8`, `Hs`, `NM3`, `NW8`, `NHs`).
    fn from_str(s: &str) -> Result<Selector, String> {
        let _ = s;
        todo!("Selector::from_str")
    }
}
