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
    /// Folders and files named by globs, earliest first, each group and the
    /// rest after them in version order (the config's `order = [...]`).
    Listed(&'static Listed),
}

/// The globs of an explicit order, earliest first: a path belongs to the
/// first that matches it or one of its folders. Made once a process, for
/// its settings' life (so that [`Order`] stays a plain value).
#[derive(Debug)]
pub struct Listed {
    globs: Vec<String>,
    matchers: Vec<globset::GlobMatcher>,
}

impl PartialEq for Listed {
    fn eq(&self, other: &Listed) -> bool {
        self.globs == other.globs
    }
}

impl Eq for Listed {}

impl Listed {
    /// The group of `path`: the first glob matching it or a folder above
    /// it; `globs.len()` for none.
    fn group(&self, path: &str) -> usize {
        let prefixes = path
            .match_indices('/')
            .map(|(i, _)| &path[..i])
            .chain(std::iter::once(path));
        let mut best = self.matchers.len();
        for p in prefixes {
            if let Some(i) = self.matchers[..best].iter().position(|m| m.is_match(p)) {
                best = i;
            }
        }
        best
    }

    /// The folder of `path` that its group's glob matched (a version's
    /// folder: `website/versioned_docs/version-30.4`, `docs`), the nearest
    /// the root; None where no glob matched a folder above it.
    fn root<'p>(&self, path: &'p str) -> Option<&'p str> {
        let m = self.matchers.get(self.group(path))?;
        (path.match_indices('/'))
            .map(|(i, _)| &path[..i])
            .find(|p| m.is_match(p))
    }
}

impl Order {
    /// `path` as its version folder and the page's path within it, where
    /// the order is an explicit list whose glob matched a folder above it:
    /// the same page in two versions has the same path within them, however
    /// deep each version's folder (`docs/CLI.md` and
    /// `website/versioned_docs/version-30.4/CLI.md`).
    pub fn in_version<'p>(&self, path: &'p str) -> Option<(&'p str, &'p str)> {
        match self {
            Order::Listed(l) => l.root(path).map(|r| (r, &path[r.len() + 1..])),
            _ => None,
        }
    }

    /// The explicit order of `globs`, earliest first; a glob that does not
    /// parse is an error naming it.
    pub fn listed(globs: Vec<String>) -> Result<Order, String> {
        if globs.is_empty() {
            return Err("an order list names at least one glob".into());
        }
        let matchers = globs
            .iter()
            .map(|g| {
                globset::GlobBuilder::new(g)
                    .literal_separator(true)
                    .build()
                    .map(|g| g.compile_matcher())
                    .map_err(|e| format!("order glob {g:?}: {e}"))
            })
            .collect::<Result<_, _>>()?;
        Ok(Order::Listed(Box::leak(Box::new(Listed {
            globs,
            matchers,
        }))))
    }
}

impl FromStr for Order {
    type Err = String;
    /// `mtime`, `path`, `version`, or a list as [`Order`]'s `Display`
    /// writes it (`["a/*", "b"]`: what an index records).
    fn from_str(s: &str) -> Result<Order, String> {
        if s.trim_start().starts_with('[') {
            return Order::listed(quoted_list(s).ok_or_else(|| format!("not an order list: {s}"))?);
        }
        match s.to_ascii_lowercase().as_str() {
            "mtime" => Ok(Order::Mtime),
            "path" => Ok(Order::Path),
            "version" => Ok(Order::Version),
            _ => Err(format!(
                "unknown order '{s}' (expected mtime, path, version, or a list of globs in the config file)"
            )),
        }
    }
}

/// The strings of `["a", "b\"c"]` (backslash escapes `\\` and `\"`).
fn quoted_list(s: &str) -> Option<Vec<String>> {
    let body = s.trim().strip_prefix('[')?.strip_suffix(']')?;
    let mut out = Vec::new();
    let mut chars = body.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace() || *c == ',') {
            chars.next();
        }
        match chars.next() {
            None => return Some(out),
            Some('"') => {}
            Some(_) => return None,
        }
        let mut item = String::new();
        loop {
            match chars.next()? {
                '"' => break,
                '\\' => item.push(chars.next()?),
                c => item.push(c),
            }
        }
        out.push(item);
    }
}

impl fmt::Display for Order {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Order::Mtime => f.write_str("mtime"),
            Order::Path => f.write_str("path"),
            Order::Version => f.write_str("version"),
            Order::Listed(l) => {
                f.write_str("[")?;
                for (i, g) in l.globs.iter().enumerate() {
                    let g = g.replace('\\', "\\\\").replace('"', "\\\"");
                    write!(f, "{}\"{g}\"", if i > 0 { ", " } else { "" })?;
                }
                f.write_str("]")
            }
        }
    }
}

/// Sort files into processing order (docs/formats.md §2): modification time, ties
/// by path bytewise; path bytewise; path in version order; or the listed
/// groups, earliest first, each (and the rest) in version order.
pub fn sort(files: &mut [FileEntry], order: Order) {
    match order {
        Order::Path => files.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes())),
        Order::Version => files.sort_by(|a, b| by_version(&a.path, &b.path)),
        Order::Listed(l) => {
            files.sort_by_cached_key(|f| (l.group(&f.path), VersionKey(f.path.clone())))
        }
        Order::Mtime => files.sort_by(|a, b| {
            a.mtime
                .cmp(&b.mtime)
                .then_with(|| a.path.as_bytes().cmp(b.path.as_bytes()))
        }),
    }
}

impl Order {
    /// How two paths compare in this order where it is one of paths
    /// (version, path, or listed: a version folder is one of those); None
    /// for mtime, which orders files, not names.
    pub fn paths(&self, a: &str, b: &str) -> Option<Ordering> {
        match self {
            Order::Mtime => None,
            Order::Path => Some(a.as_bytes().cmp(b.as_bytes())),
            Order::Version => Some(by_version(a, b)),
            Order::Listed(l) => Some(l.group(a).cmp(&l.group(b)).then_with(|| by_version(a, b))),
        }
    }
}

/// A path ordered by [`by_version`].
#[derive(PartialEq, Eq)]
struct VersionKey(String);

impl PartialOrd for VersionKey {
    fn partial_cmp(&self, other: &VersionKey) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for VersionKey {
    fn cmp(&self, other: &VersionKey) -> Ordering {
        by_version(&self.0, &other.0)
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

    #[test]
    fn listed_globs_come_first_in_their_order_then_the_rest() {
        let order = Order::listed(vec![
            "website/versioned_docs/version-*".into(),
            "docs".into(),
        ])
        .unwrap();
        let mut files: Vec<FileEntry> = [
            "README.md",
            "docs/CLI.md",
            "website/versioned_docs/version-30.4/CLI.md",
            "website/versioned_docs/version-29.7/CLI.md",
            "website/versioned_docs/version-30.0/CLI.md",
            "docs/sub/Api.md",
        ]
        .iter()
        .map(|p| FileEntry {
            path: p.to_string(),
            abs: p.into(),
            size: 0,
            mtime: std::time::SystemTime::UNIX_EPOCH,
            ctime_ns: 0,
            file_id: 0,
            links: 1,
        })
        .collect();
        sort(&mut files, order);
        let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "website/versioned_docs/version-29.7/CLI.md",
                "website/versioned_docs/version-30.0/CLI.md",
                "website/versioned_docs/version-30.4/CLI.md",
                "docs/CLI.md",
                "docs/sub/Api.md",
                "README.md",
            ]
        );
        // What an index records reads back as the same order.
        let written = order.to_string();
        assert_eq!(written, r#"["website/versioned_docs/version-*", "docs"]"#);
        assert_eq!(written.parse::<Order>(), Ok(order));
        let odd = Order::listed(vec![r#"a"b\c"#.into()]).unwrap();
        assert_eq!(odd.to_string().parse::<Order>(), Ok(odd));
        assert!(Order::listed(vec!["a[".into()]).is_err());
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
