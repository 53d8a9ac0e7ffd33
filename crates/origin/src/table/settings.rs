//! The table's settings as people write them (`lucky`, `oldest`, `64MiB`,
//! `unbounded`) and the paper's table sizes.

use std::fmt;
use std::str::FromStr;

use super::{Eviction, TableSize, Ties};
use lineage_core::bytesize::{format_bytes, parse_bytes_or};

impl FromStr for Eviction {
    type Err = String;
    fn from_str(s: &str) -> Result<Eviction, String> {
        match s.to_ascii_lowercase().as_str() {
            "random" | "r" => Ok(Eviction::Random),
            "lru" => Ok(Eviction::Lru),
            "cc" | "copy-count" | "copycount" => Ok(Eviction::Cc),
            "lucky" | "ls" => Ok(Eviction::Lucky),
            "bottom-k" | "bottomk" => Ok(Eviction::BottomK),
            _ => Err(format!(
                "unknown eviction '{s}' (expected random, lru, cc, lucky or bottom-k)"
            )),
        }
    }
}

impl fmt::Display for Eviction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Eviction::Random => "random",
            Eviction::Lru => "lru",
            Eviction::Cc => "cc",
            Eviction::Lucky => "lucky",
            Eviction::BottomK => "bottom-k",
        })
    }
}

impl FromStr for Ties {
    type Err = String;
    fn from_str(s: &str) -> Result<Ties, String> {
        match s.to_ascii_lowercase().as_str() {
            "oldest" => Ok(Ties::Oldest),
            "newest" => Ok(Ties::Newest),
            _ => Err(format!(
                "unknown eviction tie rule '{s}' (expected oldest or newest)"
            )),
        }
    }
}

impl fmt::Display for Ties {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Ties::Oldest => "oldest",
            Ties::Newest => "newest",
        })
    }
}

impl FromStr for TableSize {
    type Err = String;
    /// `unbounded`, or a byte count with a unit: `20MB`, `64MiB`, `512KiB`, `900B`
    /// (KB/MB/GB are powers of 10, KiB/MiB/GiB of 2); a bare number is bytes.
    fn from_str(s: &str) -> Result<TableSize, String> {
        if s.eq_ignore_ascii_case("unbounded") {
            return Ok(TableSize::Unbounded);
        }
        parse_bytes_or(s, "64MiB, 20MB or unbounded").map(TableSize::Bytes)
    }
}

impl fmt::Display for TableSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TableSize::Unbounded => f.write_str("unbounded"),
            TableSize::Bytes(n) => f.write_str(&format_bytes(*n)),
        }
    }
}

/// The paper's table fractions (Abdel-Hamid et al. 2009 Table 2, blogs: 20 MB … 5 GB), in
/// percent of all shingles.
pub const PAPER_FRACTIONS: [f64; 8] = [0.1, 0.3, 0.7, 1.4, 3.3, 6.8, 13.7, 34.2];

/// Eight table sizes that hold the paper's fractions of `shingles` in entries of
/// the widest kind (14 bytes), rounded up to whole KiB: the default sweep.
pub fn paper_sizes(shingles: u64) -> Vec<TableSize> {
    let mut sizes: Vec<TableSize> = PAPER_FRACTIONS
        .iter()
        .map(|f| {
            let bytes = shingles as f64 * f / 100.0 * 14.0;
            TableSize::Bytes((bytes as u64 / 1024 + 1) * 1024)
        })
        .collect();
    // A small collection rounds neighbouring fractions to one KiB count:
    // each size once.
    sizes.dedup();
    sizes
}
