//! Near-duplicate detection (Heintze; Stein and Potthast; Charikar with
//! Manku et al.; docs/algorithms.md §6–9): which documents are (almost) the
//! same, by four methods measured against one truth.
//!
//! - `exact`: Jaccard resemblance of k-shingle sets through an inverted index,
//!   the ground truth;
//! - `simhash`: Charikar's simhash with a sliced Hamming index (SQLite)
//!   and an in-memory multi-index;
//! - `fuzzy`: Stein's fuzzy fingerprints with Potthast's pocket index (a
//!   minimal perfect hash);
//! - `sample`: Heintze's fixed-size sample store (Koala);
//! - `minhash`: one-permutation MinHash with optimal densification and LSH
//!   banding tuned to the threshold, candidates verified by exact Jaccard;
//! - `live`: clusters kept as documents come and go (`watch`), by the
//!   same MinHash banding and verification.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod cluster;
pub mod docs;
pub mod exact;
pub mod fuzzy;
pub mod live;
pub mod minhash;
pub mod sample;
pub mod simhash;

use std::fmt;
use std::str::FromStr;

/// One document as the near-duplicate methods see it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SimDoc {
    /// Its k-shingle keys (62-bit, as `fingerprint::shingle_keys`), sorted and
    /// deduplicated: the set whose Jaccard resemblance is the similarity.
    pub shingles: Vec<u64>,
    /// Its tokens' key texts in order (fuzzy fingerprints read term prefixes).
    pub terms: Vec<String>,
}

#[cfg(test)]
impl SimDoc {
    /// A document of these shingle keys (sorted and deduplicated here).
    pub(crate) fn of_keys(keys: &[u64]) -> SimDoc {
        let mut shingles = keys.to_vec();
        shingles.sort_unstable();
        shingles.dedup();
        SimDoc {
            shingles,
            terms: vec![],
        }
    }
}

/// A near-duplicate pair: document indices `a < b` and their (estimated)
/// Jaccard resemblance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pair {
    /// The earlier document.
    pub a: u32,
    /// The later document.
    pub b: u32,
    /// Their Jaccard resemblance, exact or estimated by the method.
    pub similarity: f64,
}

/// The methods of `lineage pairs --method`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// Charikar's simhash, indexed by Hamming distance ([`simhash`]).
    Simhash,
    /// Broder's MinHash with LSH banding ([`minhash`]).
    Minhash,
    /// Stein's fuzzy fingerprints ([`fuzzy`]).
    Fuzzy,
    /// Heintze's sample store ([`sample`]).
    Sample,
    /// Every pair's exact Jaccard resemblance: the ground truth ([`exact`]).
    Exact,
}

impl FromStr for Method {
    type Err = String;
    fn from_str(s: &str) -> Result<Method, String> {
        match s.to_ascii_lowercase().as_str() {
            "simhash" => Ok(Method::Simhash),
            "minhash" => Ok(Method::Minhash),
            "fuzzy" => Ok(Method::Fuzzy),
            "sample" => Ok(Method::Sample),
            "exact" => Ok(Method::Exact),
            _ => Err(format!(
                "unknown method '{s}' (expected minhash, simhash, fuzzy, sample or exact)"
            )),
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Method::Simhash => "simhash",
            Method::Minhash => "minhash",
            Method::Fuzzy => "fuzzy",
            Method::Sample => "sample",
            Method::Exact => "exact",
        })
    }
}
