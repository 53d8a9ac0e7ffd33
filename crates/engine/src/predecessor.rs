//! A version's predecessor (docs/algorithms.md §12): the text
//! it is the next state of, which `diff` compares it with and `explain`
//! names. Its page's previous version (under its old name if the page was
//! renamed since); for a page's first version in a version folder, the page
//! at the same path in the latest earlier version folder that has one.

use std::cmp::Ordering;

use super::query::Row;
use lineage_config::PredecessorRule;
use lineage_source::Order;
use lineage_store::index::{Departure, IndexError, Read};

/// A version's predecessor and why it is that one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Predecessor {
    /// Its version id.
    pub id: u32,
    /// Why it is the predecessor.
    pub how: How,
}

/// Why a version is another's predecessor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum How {
    /// The page's previous version.
    Earlier,
    /// The page's previous version, under the name it had then (a rename,
    /// a move recorded by the index or read from git's history).
    Renamed {
        /// The page's name then.
        from: String,
    },
    /// The same page in an earlier version folder: the paths differ in
    /// one folder's name, this one's later in the index's order.
    Folder,
    /// The page a `[[predecessor]]` rule of the config names.
    Rule,
}

/// The predecessor of version `id`; None for a first version with no
/// version folder before it (everything in it is new). `rules` (the
/// config's `[[predecessor]]`) name the page a first version follows,
/// before the version-folder rule, where the page they name is indexed.
pub fn predecessor(
    ix: &impl Read,
    rows: &[Row],
    id: u32,
    rules: &[PredecessorRule],
) -> Result<Option<Predecessor>, IndexError> {
    let row = &rows[id as usize];
    let previous = (rows.iter()).position(|r| r.path == row.path && r.version + 1 == row.version);
    if let Some(p) = previous {
        let p = p as u32;
        let renames = ix.renames()?;
        let then = name_then(&renames, rows, p);
        let how = if then == name_then(&renames, rows, id) {
            How::Earlier
        } else {
            How::Renamed { from: then }
        };
        return Ok(Some(Predecessor { id: p, how }));
    }
    let named = lineage_config::follows(rules, &row.path).filter(|p| *p != row.path);
    if let Some(p) = named.and_then(|p| latest_before(rows, &p, id)) {
        return Ok(Some(Predecessor {
            id: p,
            how: How::Rule,
        }));
    }
    let order = match ix.order() {
        Some(o @ (Order::Version | Order::Listed(_))) => o,
        _ => return Ok(None),
    };
    Ok(in_earlier_folder(rows, id, order).map(|id| Predecessor {
        id,
        how: How::Folder,
    }))
}

/// The name version `x` had when it was recorded: its path, back through
/// each rename (newest first) that moved it.
pub fn name_then(renames: &[Departure], rows: &[Row], x: u32) -> String {
    let mut name = rows[x as usize].path.clone();
    for d in renames {
        // A rename moves the versions up to its `id`, the latest then.
        if d.to.as_deref() == Some(name.as_str()) && d.id.is_some_and(|i| i >= x) {
            name.clone_from(&d.path);
        }
    }
    name
}

/// The latest page before version `id`'s in `order` whose path differs from
/// its in one folder's name: its latest version recorded before `id`, else
/// its latest.
fn in_earlier_folder(rows: &[Row], id: u32, order: Order) -> Option<u32> {
    let path = &rows[id as usize].path;
    let same = |p: &str| match (order.in_version(path), order.in_version(p)) {
        (Some((a, x)), Some((b, y))) => a != b && x == y,
        _ => sibling(path, p),
    };
    let earlier = |p: &str| same(p) && order.paths(p, path) == Some(Ordering::Less);
    let best = (rows.iter())
        .map(|r| r.path.as_str())
        .filter(|p| earlier(p))
        .max_by(|a, b| order.paths(a, b).unwrap_or(Ordering::Equal))?;
    latest_before(rows, best, id)
}

/// Of `path`'s versions, the latest recorded before version `id`, else its
/// latest; None if it has none.
fn latest_before(rows: &[Row], path: &str, id: u32) -> Option<u32> {
    let versions = || (rows.iter().enumerate()).filter(|(_, r)| r.path == path);
    let before = versions().rfind(|&(v, _)| (v as u32) < id);
    before
        .or_else(|| versions().next_back())
        .map(|(v, _)| v as u32)
}

/// Whether `a` and `b` are the same page in two folders: as many parts,
/// the same file name, and exactly one folder's name differs.
fn sibling(a: &str, b: &str) -> bool {
    let (x, y): (Vec<&str>, Vec<&str>) = (a.split('/').collect(), b.split('/').collect());
    x.len() == y.len()
        && x.len() > 1
        && x.last() == y.last()
        && x.iter().zip(&y).filter(|(p, q)| p != q).count() == 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(path: &str, version: u32) -> Row {
        Row {
            path: path.into(),
            version,
            tokens: 0,
            shingles: 0,
            fresh_tokens: 0,
            dominant_origin: None,
            origins: Vec::new(),
            mtime_ns: 0,
            seen_ms: None,
        }
    }

    #[test]
    fn the_same_page_in_an_earlier_folder_is_a_sibling() {
        assert!(sibling("v1/a.md", "v2/a.md"));
        assert!(sibling("docs/v1/g/a.md", "docs/v10/g/a.md"));
        assert!(!sibling("v1/a.md", "v2/b.md"));
        assert!(!sibling("a.md", "a.md"));
        assert!(!sibling("v1/x/a.md", "v2/y/a.md"), "two folders differ");
        assert!(!sibling("v1/a.md", "v2/x/a.md"));
    }

    #[test]
    fn the_latest_earlier_folder_with_the_page_is_its_predecessor() {
        let rows = vec![
            row("v1/a.md", 1),  // 0
            row("v10/a.md", 1), // 1: recorded before v2's, later in order
            row("v2/a.md", 1),  // 2
            row("v9/b.md", 1),  // 3
            row("v2/a.md", 2),  // 4
        ];
        let o = Order::Version;
        // v2 before v10; none of v2/a.md's recorded before v10's: its latest.
        assert_eq!(in_earlier_folder(&rows, 1, o), Some(4));
        assert_eq!(in_earlier_folder(&rows, 2, o), Some(0));
        assert_eq!(in_earlier_folder(&rows, 0, o), None);
        assert_eq!(in_earlier_folder(&rows, 3, o), None);
    }

    /// A listed order's version folders may lie at other depths (a
    /// Docusaurus site: its next release in docs/, the earlier ones under
    /// website/versioned_docs/): the same page is the same path within them.
    #[test]
    fn in_a_listed_order_the_same_page_is_the_same_path_in_its_version_folder() {
        let rows = vec![
            row("website/versioned_docs/version-29.7/CLI.md", 1), // 0
            row("website/versioned_docs/version-30.4/CLI.md", 1), // 1
            row("website/versioned_docs/version-30.0/CLI.md", 1), // 2
            row("docs/CLI.md", 1),                                // 3
            row("docs/api/CLI.md", 1),                            // 4
            row("website/versioned_docs/version-30.4/Other.md", 1), // 5
        ];
        let o = Order::listed(vec![
            "website/versioned_docs/version-*".into(),
            "docs".into(),
        ])
        .unwrap();
        assert_eq!(in_earlier_folder(&rows, 3, o), Some(1), "next after 30.4");
        assert_eq!(in_earlier_folder(&rows, 1, o), Some(2), "30.4 after 30.0");
        assert_eq!(in_earlier_folder(&rows, 2, o), Some(0));
        assert_eq!(in_earlier_folder(&rows, 0, o), None);
        assert_eq!(in_earlier_folder(&rows, 4, o), None, "another page's path");
    }

    #[test]
    fn a_renamed_versions_name_is_the_one_it_had() {
        let rows = vec![row("c.md", 1), row("c.md", 2), row("c.md", 3)];
        // a.md (v1) became b.md, then was edited (v2), then became c.md.
        let renames = [
            Departure {
                at_ms: 2,
                path: "b.md".into(),
                to: Some("c.md".into()),
                id: Some(1),
            },
            Departure {
                at_ms: 1,
                path: "a.md".into(),
                to: Some("b.md".into()),
                id: Some(0),
            },
        ];
        assert_eq!(name_then(&renames, &rows, 0), "a.md");
        assert_eq!(name_then(&renames, &rows, 1), "b.md");
        assert_eq!(name_then(&renames, &rows, 2), "c.md");
    }
}
