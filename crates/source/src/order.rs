//! The order documents are processed in (docs/formats.md §2): the order that
//! decides which of two copies is the origin.

use std::fmt;
use std::str::FromStr;

use super::FileEntry;

/// The order documents are processed in (docs/formats.md §2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Order {
    /// Modification time ascending, ties by path bytewise.
    #[default]
    Mtime,
    /// Path bytewise.
    Path,
}

impl FromStr for Order {
    type Err = String;
    fn from_str(s: &str) -> Result<Order, String> {
        match s.to_ascii_lowercase().as_str() {
            "mtime" => Ok(Order::Mtime),
            "path" => Ok(Order::Path),
            _ => Err(format!("unknown order '{s}' (expected mtime or path)")),
        }
    }
}

impl fmt::Display for Order {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Order::Mtime => "mtime",
            Order::Path => "path",
        })
    }
}

/// Sort files into processing order (docs/formats.md §2): modification time, ties
/// by path bytewise; or path bytewise.
pub fn sort(files: &mut [FileEntry], order: Order) {
    match order {
        Order::Path => files.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes())),
        Order::Mtime => files.sort_by(|a, b| {
            a.mtime
                .cmp(&b.mtime)
                .then_with(|| a.path.as_bytes().cmp(b.path.as_bytes()))
        }),
    }
}
