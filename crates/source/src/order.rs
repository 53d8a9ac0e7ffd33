//! The order documents are processed in (docs/formats.md §2): the order that
//! decides which of two copies is the origin.

use std::cmp::Ordering;
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
    /// Path with folder and file names compared as versions (natural
    /// order: `v9` < `v10`, `version-29.7` < `version-30.0`), ties bytewise.
    Version,
}

impl FromStr for Order {
    type Err = String;
    fn from_str(s: &str) -> Result<Order, String> {
        match s.to_ascii_lowercase().as_str() {
            "mtime" => Ok(Order::Mtime),
            "path" => Ok(Order::Path),
            "version" => Ok(Order::Version),
            _ => Err(format!(
                "unknown order '{s}' (expected mtime, path or version)"
            )),
        }
    }
}

impl fmt::Display for Order {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Order::Mtime => "mtime",
            Order::Path => "path",
            Order::Version => "version",
        })
    }
}

/// Sort files into processing order (docs/formats.md §2): modification time, ties
/// by path bytewise; path bytewise; or path in version order.
pub fn sort(files: &mut [FileEntry], order: Order) {
    match order {
        Order::Path => files.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes())),
        Order::Version => files.sort_by(|a, b| by_version(&a.path, &b.path)),
        Order::Mtime => files.sort_by(|a, b| {
            a.mtime
                .cmp(&b.mtime)
                .then_with(|| a.path.as_bytes().cmp(b.path.as_bytes()))
        }),
    }
}

/// Paths in version order: folder by folder, each name compared as a
/// version ([`version_cmp`]); ties (`v01` and `v1`) bytewise, so the order
/// is total.
pub fn by_version(a: &str, b: &str) -> Ordering {
    let names = a.split('/').zip(b.split('/'));
    for (x, y) in names {
        match version_cmp(x, y) {
            Ordering::Equal => {}
            o => return o,
        }
    }
    // A folder's files before the files of its subfolders' deeper paths
    // only where the names so far are equal: fewer parts first.
    let parts = a.split('/').count().cmp(&b.split('/').count());
    parts.then_with(|| a.as_bytes().cmp(b.as_bytes()))
}

/// Two names in natural order: runs of ASCII digits compare as numbers
/// (`9` < `10`, leading zeros ignored), everything between them bytewise.
/// Equal for names that differ only in leading zeros.
pub fn version_cmp(a: &str, b: &str) -> Ordering {
    let (mut a, mut b) = (a.as_bytes(), b.as_bytes());
    loop {
        match (a.first(), b.first()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) if x.is_ascii_digit() && y.is_ascii_digit() => {
                let (n, rest_a) = digits(a);
                let (m, rest_b) = digits(b);
                // Without leading zeros, a longer run is a larger number.
                let (n, m) = (trim_zeros(n), trim_zeros(m));
                match n.len().cmp(&m.len()).then_with(|| n.cmp(m)) {
                    Ordering::Equal => (a, b) = (rest_a, rest_b),
                    o => return o,
                }
            }
            (Some(x), Some(y)) => match x.cmp(y) {
                Ordering::Equal => (a, b) = (&a[1..], &b[1..]),
                o => return o,
            },
        }
    }
}

/// The leading run of digits of `s`, and what follows.
fn digits(s: &[u8]) -> (&[u8], &[u8]) {
    let n = s.iter().take_while(|c| c.is_ascii_digit()).count();
    s.split_at(n)
}

fn trim_zeros(s: &[u8]) -> &[u8] {
    let zeros = s.iter().take_while(|&&c| c == b'0').count();
    &s[zeros..]
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn version_folders_come_in_version_order() {
        let mut paths = vec![
            "v10/CLI.md",
            "next/CLI.md",
            "v9/CLI.md",
            "version-30.4/a.md",
            "version-29.7/a.md",
            "version-30.0/a.md",
            "v9/sub/z.md",
            "v9/a10.md",
            "v9/a9.md",
            "v01/x.md",
            "v1/x.md",
        ];
        paths.sort_by(|a, b| by_version(a, b));
        assert_eq!(
            paths,
            [
                "next/CLI.md",
                "v01/x.md",
                "v1/x.md",
                "v9/CLI.md",
                "v9/a9.md",
                "v9/a10.md",
                "v9/sub/z.md",
                "v10/CLI.md",
                "version-29.7/a.md",
                "version-30.0/a.md",
                "version-30.4/a.md",
            ]
        );
        assert_eq!("version".parse::<Order>(), Ok(Order::Version));
    }

    /// The number a run of digits spells, as a reference.
    fn value(run: &str) -> u128 {
        run.parse().unwrap()
    }

    proptest! {
        /// A total order (antisymmetric, transitive, equal only for equal
        /// paths), and numbers at the same place compare by value.
        #[test]
        fn version_order_is_total_and_numeric(
            a in "[ab0-9/.]{0,12}",
            b in "[ab0-9/.]{0,12}",
            c in "[ab0-9/.]{0,12}",
            n in 0u64..100_000,
            m in 0u64..100_000,
        ) {
            prop_assert_eq!(by_version(&a, &b), by_version(&b, &a).reverse());
            prop_assert_eq!(by_version(&a, &b) == Ordering::Equal, a == b);
            if by_version(&a, &b).is_le() && by_version(&b, &c).is_le() {
                prop_assert!(by_version(&a, &c).is_le());
            }
            let (x, y) = (format!("v{n}/p.md"), format!("v{m}/p.md"));
            prop_assert_eq!(by_version(&x, &y), value(&n.to_string()).cmp(&value(&m.to_string())));
        }
    }
}
