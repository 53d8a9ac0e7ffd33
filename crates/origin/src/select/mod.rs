//! Selection algorithms (Abdel-Hamid et al. 2009 §2.1, docs/algorithms.md §2): which units of a document
//! are sent to the table.
//!
//! For shingle-based selectors a unit is a k-shingle (start position, its key).
//! For hash-breaking and DCT a unit is a segment of tokens with its own key.
//!
//! A document with fewer than k tokens has no shingles and gets no units from any
//! selector, Hb and DCT included although their segments do not depend on k:
//! docs/formats.md §2 gives such a document only fresh tokens and itself as top origin,
//! which units found in the table could contradict.

mod breaking;
mod hailstorm;
mod overlap;
mod winnowing;

#[cfg(test)]
pub(crate) use breaking::{dct_key, hash_breaking_segments};
#[cfg(test)]
pub(crate) use hailstorm::hailstorm;
#[cfg(test)]
pub(crate) use overlap::no_complete_overlap;

use std::cell::RefCell;
use std::fmt;
use std::str::FromStr;

/// One selected unit: its 62-bit key and the tokens it covers, `start..end`
/// (serde: the split pass sends units between processes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Unit {
    /// The 62-bit key looked up in the table.
    pub key: u64,
    /// The first token covered.
    pub start: u32,
    /// One past the last token covered.
    pub end: u32,
}

/// A selection algorithm with its parameter (docs/formats.md §5).
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
    /// The polynomial's mix key, which hash-breaking's segment keys pass
    /// their token fingerprints through ([`ShingleRoller::mix`]).
    ///
    /// [`ShingleRoller::mix`]: lineage_core::fingerprint::ShingleRoller::mix
    pub mix: u64,
}

impl Selector {
    /// Select the units of one document, in document order, into `out` (cleared first).
    ///
    /// All, Every, Mod and Win (and their N variants) read only
    /// `doc.shingle_keys`; Hailstorm reads `token_hashes`, hash-breaking and DCT
    /// also `token_fps`.
    ///
    /// Uses a per-thread [`Selection`] for scratch, so it does not allocate once
    /// `out` and the scratch have grown to the largest document.
    ///
    /// Panics if the selector's parameter is 0 or `doc.k` is 0.
    pub(crate) fn select(self, doc: &DocKeys<'_>, out: &mut Vec<Unit>) {
        thread_local! {
            static SCRATCH: RefCell<Selection> = RefCell::new(Selection::new());
        }
        SCRATCH.with(|s| s.borrow_mut().select_into(self, doc, out));
    }

    /// The parameter (l, w or p), if the selector has one.
    pub(crate) fn param(self) -> Option<u32> {
        use Selector::*;
        match self {
            All | Hs | NHs => None,
            Every(x) | Mod(x) | Win(x) | Hb(x) | Dct(x) | NMod(x) | NWin(x) => Some(x),
        }
    }

    /// Whether the no-complete-overlap pass follows the base selection.
    pub(crate) fn is_no_complete_overlap(self) -> bool {
        matches!(self, Selector::NMod(_) | Selector::NWin(_) | Selector::NHs)
    }
}

/// Reusable scratch for selection: call [`Selection::select_into`] for each
/// document to select without allocating in the steady state.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// Winnowing's deque (positions) as a ring buffer.
    ring: Vec<u32>,
    /// Hailstorm's block suffix minima.
    suffix: Vec<u64>,
    /// DCT's per-segment values and cosine table.
    dct: Vec<f64>,
}

impl Selection {
    /// Empty scratch space.
    pub fn new() -> Selection {
        Selection::default()
    }

    /// Select the units of one document, in document order, into `out`
    /// (cleared first). See `Selector::select`.
    pub fn select_into(&mut self, sel: Selector, doc: &DocKeys<'_>, out: &mut Vec<Unit>) {
        out.clear();
        if let Some(0) = sel.param() {
            panic!("selector {sel:?}: the parameter must be at least 1");
        }
        let k = doc.k;
        assert!(k >= 1, "shingle length k must be at least 1");
        let keys = doc.shingle_keys;
        let n = doc.token_hashes.len();
        // All, Every, Mod and Win read only the shingle keys (none when n < k);
        // the others read the tokens and must give a short document no units too.
        let reads_tokens = matches!(
            sel,
            Selector::Hs | Selector::NHs | Selector::Hb(_) | Selector::Dct(_)
        );
        if reads_tokens && n < k {
            return;
        }
        debug_assert!(
            u32::try_from(n.max(keys.len())).is_ok(),
            "token positions are u32"
        );
        let shingle = |i: usize| Unit {
            key: keys[i],
            start: i as u32,
            end: (i + k) as u32,
        };
        match sel {
            Selector::All => out.extend((0..keys.len()).map(shingle)),
            Selector::Every(l) => out.extend((0..keys.len()).step_by(l as usize).map(shingle)),
            Selector::Mod(l) | Selector::NMod(l) => {
                modulo_with(keys, l, |i| out.push(shingle(i)));
            }
            Selector::Win(w) | Selector::NWin(w) => {
                winnowing::winnow_with(keys, w as usize, false, &mut self.ring, |i| {
                    out.push(shingle(i))
                });
            }
            Selector::Hs | Selector::NHs => {
                debug_assert_eq!(keys.len(), n - k + 1, "one shingle key per k-shingle");
                hailstorm::hailstorm_with(doc.token_hashes, k, &mut self.suffix, |i| {
                    out.push(shingle(i))
                });
            }
            Selector::Hb(p) => {
                debug_assert_eq!(doc.token_fps.len(), n);
                breaking::segments_with(doc.token_hashes, p, |s, e| {
                    out.push(Unit {
                        key: lineage_core::fingerprint::segment_key(doc.mix, &doc.token_fps[s..e]),
                        start: s as u32,
                        end: e as u32,
                    })
                });
            }
            Selector::Dct(p) => {
                let dct = &mut self.dct;
                breaking::segments_with(doc.token_hashes, p, |s, e| {
                    out.push(Unit {
                        key: breaking::dct_key_with(&doc.token_hashes[s..e], dct),
                        start: s as u32,
                        end: e as u32,
                    })
                });
            }
        }
        if sel.is_no_complete_overlap() {
            overlap::cover_in_place(out, k, |u| u.start);
        }
    }
}

/// Modulo: positions of the keys divisible by `l`. Powers of two take a mask
/// instead of a 64-bit division.
fn modulo_with(keys: &[u64], l: u32, mut emit: impl FnMut(usize)) {
    if l.is_power_of_two() {
        let mask = l as u64 - 1;
        for (i, &key) in keys.iter().enumerate() {
            if key & mask == 0 {
                emit(i);
            }
        }
    } else {
        let l = l as u64;
        for (i, &key) in keys.iter().enumerate() {
            if key % l == 0 {
                emit(i);
            }
        }
    }
}

impl fmt::Display for Selector {
    /// The canonical spelling: `all`, `every-4`, `mod-3`, `win-8`, `hb-3`,
    /// `dct-8`, `hs`, `nmod-3`, `nwin-8`, `nhs`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Selector::All => f.write_str("all"),
            Selector::Every(l) => write!(f, "every-{l}"),
            Selector::Mod(l) => write!(f, "mod-{l}"),
            Selector::Win(w) => write!(f, "win-{w}"),
            Selector::Hb(p) => write!(f, "hb-{p}"),
            Selector::Dct(p) => write!(f, "dct-{p}"),
            Selector::Hs => f.write_str("hs"),
            Selector::NMod(l) => write!(f, "nmod-{l}"),
            Selector::NWin(w) => write!(f, "nwin-{w}"),
            Selector::NHs => f.write_str("nhs"),
        }
    }
}

const SELECTOR_NAMES: &str = "all, every-L (4th), mod-L (M3), win-W (W8), hb-P (Hb3), \
     dct-P (Dct8), hs, nmod-L (NM3), nwin-W (NW8), nhs";

impl FromStr for Selector {
    type Err = String;

    /// Case-insensitive; canonical names and the paper's spellings (`4th`, `M3`,
    /// `W8`, `Hb3`, `Dct8`, `Hs`, `NM3`, `NW8`, `NHs`).
    fn from_str(s: &str) -> Result<Selector, String> {
        let lower = s.trim().to_ascii_lowercase();
        // The paper's "4th", "6th", "8th" (and 1st, 2nd, 3rd for completeness).
        let ordinal = ["th", "st", "nd", "rd"]
            .iter()
            .find_map(|suffix| lower.strip_suffix(suffix))
            .filter(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()));
        let (name, param) = match ordinal {
            Some(digits) => ("every", digits),
            None => {
                let split = lower
                    .find(|c: char| !c.is_ascii_alphabetic())
                    .unwrap_or(lower.len());
                let (name, rest) = lower.split_at(split);
                (name, rest.strip_prefix('-').unwrap_or(rest))
            }
        };
        let make: fn(u32) -> Selector = match name {
            "all" | "hs" | "nhs" => {
                if !param.is_empty() {
                    return Err(format!("selector '{s}' takes no parameter"));
                }
                return Ok(match name {
                    "all" => Selector::All,
                    "hs" => Selector::Hs,
                    _ => Selector::NHs,
                });
            }
            "every" => Selector::Every,
            "mod" | "m" => Selector::Mod,
            "win" | "w" => Selector::Win,
            "hb" => Selector::Hb,
            "dct" => Selector::Dct,
            "nmod" | "nm" => Selector::NMod,
            "nwin" | "nw" => Selector::NWin,
            _ => {
                return Err(format!(
                    "unknown selector '{s}'; expected one of {SELECTOR_NAMES}"
                ));
            }
        };
        if param.is_empty() {
            return Err(format!(
                "selector '{s}' needs a parameter, e.g. {}",
                make(8)
            ));
        }
        if !param.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("selector '{s}': '{param}' is not a whole number"));
        }
        match param.parse::<u32>() {
            Ok(0) => Err(format!("selector '{s}': the parameter must be at least 1")),
            Ok(x) => Ok(make(x)),
            Err(_) => Err(format!("selector '{s}': parameter '{param}' is too large")),
        }
    }
}

#[cfg(test)]
mod tests;
