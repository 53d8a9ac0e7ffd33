//! A version's predecessor (docs/algorithms.md §12): the text
//! it is the next state of, which `diff` compares it with and `explain`
//! names. Its page's previous version (under its old name if the page was
//! renamed since); for a page's first version in a version folder, the page
//! at the same path in the latest earlier version folder that has one.

use std::cmp::Ordering;
use std::collections::HashMap;

use super::query::Row;
use lineage_config::{Basis, PredecessorRule};
use lineage_source::Order;
use lineage_store::index::{Departure, IndexError, Read, Release};

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
    /// The page as it was at a release: the newest tag before the
    /// version's commit (`Basis::Release`).
    Release {
        /// The tag's name.
        tag: String,
        /// Its commit, in hex.
        commit: String,
    },
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
    Ok(Lineage::new(ix, rows, rules)?.base(id, Basis::Predecessor))
}

/// The rows looked up by path, to find the bases of many versions at once:
/// each in time that grows with its page's versions and folders, not with
/// the collection.
pub struct Lineage<'a> {
    rows: &'a [Row],
    rules: &'a [PredecessorRule],
    renames: Vec<Departure>,
    order: Option<Order>,
    /// Each path's versions, by id.
    by_path: HashMap<&'a str, Vec<u32>>,
    /// The paths by each name they have with one folder left out (its
    /// place, the rest), and by their path inside their version folder:
    /// the candidates for the same page in another folder.
    siblings: HashMap<(usize, u64), Vec<&'a str>>,
    inside: HashMap<&'a str, Vec<&'a str>>,
    /// The releases, oldest first, and each version's commit number (by
    /// id; None: read from the files): for `Basis::Release`.
    releases: Vec<Release>,
    stamps: Vec<Option<i64>>,
}

impl<'a> Lineage<'a> {
    /// The lookups over `rows` (every version, by id) of index `ix`, with
    /// the config's `rules`.
    pub fn new(
        ix: &impl Read,
        rows: &'a [Row],
        rules: &'a [PredecessorRule],
    ) -> Result<Lineage<'a>, IndexError> {
        let lineage = Lineage::of(rows, rules, ix.renames()?, ix.order());
        Ok(lineage.with_releases(ix.releases()?, &ix.stamps()?))
    }

    /// The lookups with `releases` (the index's, oldest first) and every
    /// version's commit number (`stamps`).
    pub fn with_releases(mut self, releases: Vec<Release>, stamps: &[(u32, i64)]) -> Self {
        self.releases = releases;
        self.stamps = vec![None; self.rows.len()];
        for &(id, seq) in stamps {
            if let Some(s) = self.stamps.get_mut(id as usize) {
                *s = Some(seq);
            }
        }
        self
    }

    /// Keep only the releases whose tag matches `tags` (the config's
    /// `release_tags`: `*` within a `/`-separated part, `**` across them).
    pub fn tags(mut self, tags: &str) -> Self {
        self.releases
            .retain(|r| lineage_config::tag_matches(tags, &r.tag));
        self
    }

    /// The lookups over `rows` with `rules`, the index's `renames` and its
    /// order (one of no versions is taken as none).
    pub(crate) fn of(
        rows: &'a [Row],
        rules: &'a [PredecessorRule],
        renames: Vec<Departure>,
        order: Option<Order>,
    ) -> Lineage<'a> {
        let order = order.filter(|o| matches!(o, Order::Version | Order::Listed(_)));
        let mut by_path: HashMap<&str, Vec<u32>> = HashMap::new();
        for (id, r) in rows.iter().enumerate() {
            by_path.entry(&r.path).or_default().push(id as u32);
        }
        let (mut siblings, mut inside) = (HashMap::new(), HashMap::new());
        if let Some(order) = order {
            for &p in by_path.keys() {
                for key in folder_keys(p) {
                    siblings.entry(key).or_insert_with(Vec::new).push(p);
                }
                if let Some((_, rest)) = order.in_version(p) {
                    inside.entry(rest).or_insert_with(Vec::new).push(p);
                }
            }
        }
        Lineage {
            rows,
            rules,
            renames,
            order,
            by_path,
            siblings,
            inside,
            releases: Vec::new(),
            stamps: Vec::new(),
        }
    }

    /// Version `id`'s base: its predecessor, or (`Basis::Folder`) the same
    /// page in the previous version folder before its own earlier
    /// versions. None where it has none (everything in it is new).
    pub fn base(&self, id: u32, basis: Basis) -> Option<Predecessor> {
        let row = &self.rows[id as usize];
        if basis == Basis::Release && !self.releases.is_empty() {
            return self.at_release(id);
        }
        if basis == Basis::Predecessor
            && let Some(p) = self.previous(id)
        {
            return Some(p);
        }
        let named = lineage_config::follows(self.rules, &row.path).filter(|p| *p != row.path);
        if let Some(p) = named.and_then(|p| self.latest_before(&p, id)) {
            return Some(Predecessor {
                id: p,
                how: How::Rule,
            });
        }
        let folder = self.order.and_then(|o| self.in_earlier_folder(id, o));
        (folder.map(|id| Predecessor {
            id,
            how: How::Folder,
        }))
        .or_else(|| self.previous(id))
    }

    /// The page of version `id` as it was at the newest release before
    /// its commit (a version read from the files comes after every
    /// commit): its latest version back through its previous ones (and
    /// renames) read from that commit or before. None before the first
    /// release, or where the page was not there at it (all of it new since).
    fn at_release(&self, id: u32) -> Option<Predecessor> {
        let stamp = |x: u32| self.stamps.get(x as usize).copied().flatten();
        let at = stamp(id).unwrap_or(i64::MAX);
        let newest = self.releases.partition_point(|r| r.seq < at);
        let release = &self.releases[newest.checked_sub(1)?];
        let mut x = id;
        loop {
            x = self.previous(x)?.id;
            if stamp(x).is_some_and(|s| s <= release.seq) {
                return Some(Predecessor {
                    id: x,
                    how: How::Release {
                        tag: release.tag.clone(),
                        commit: release.commit.clone(),
                    },
                });
            }
        }
    }

    /// The page's previous version, under the name it had then.
    fn previous(&self, id: u32) -> Option<Predecessor> {
        let row = &self.rows[id as usize];
        let versions = self.by_path.get(row.path.as_str())?;
        let p = *versions
            .iter()
            .find(|&&v| self.rows[v as usize].version + 1 == row.version)?;
        let then = name_then(&self.renames, self.rows, p);
        let how = if then == name_then(&self.renames, self.rows, id) {
            How::Earlier
        } else {
            How::Renamed { from: then }
        };
        Some(Predecessor { id: p, how })
    }

    /// The latest page before version `id`'s in `order` whose path differs
    /// from its in one folder's name: its latest version recorded before
    /// `id`, else its latest.
    fn in_earlier_folder(&self, id: u32, order: Order) -> Option<u32> {
        let path = self.rows[id as usize].path.as_str();
        let same = |p: &str| match (order.in_version(path), order.in_version(p)) {
            (Some((a, x)), Some((b, y))) => a != b && x == y,
            _ => sibling(path, p),
        };
        let earlier = |p: &str| same(p) && order.paths(p, path) == Some(Ordering::Less);
        let inside = order
            .in_version(path)
            .and_then(|(_, rest)| self.inside.get(rest));
        let candidates = (folder_keys(path).filter_map(|k| self.siblings.get(&k)))
            .chain(inside)
            .flatten();
        let best = (candidates.copied())
            .filter(|p| earlier(p))
            .max_by(|a, b| order.paths(a, b).unwrap_or(Ordering::Equal))?;
        self.latest_before(best, id)
    }

    /// Of `path`'s versions, the latest recorded before version `id`, else
    /// its latest; None if it has none.
    fn latest_before(&self, path: &str, id: u32) -> Option<u32> {
        let versions = self.by_path.get(path)?;
        let before = versions.partition_point(|&v| v < id);
        before
            .checked_sub(1)
            .map_or(versions.last(), |i| versions.get(i))
            .copied()
    }
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

/// `path` with each of its folders left out in turn, hashed (the place,
/// the hash of the rest): two paths that share one are [`sibling`]s, the
/// same path, or (a collision) neither, which the caller's test of the
/// rule itself leaves out. Hashed, not joined: 100,000 paths made as many
/// strings a lookup.
fn folder_keys(path: &str) -> impl Iterator<Item = (usize, u64)> + '_ {
    let folders = path.matches('/').count();
    (0..folders).map(move |i| {
        let mut h = std::hash::DefaultHasher::new();
        for (j, part) in path.split('/').enumerate() {
            if j != i {
                std::hash::Hash::hash(part, &mut h);
            }
        }
        (i, std::hash::Hasher::finish(&h))
    })
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

    fn in_earlier_folder(rows: &[Row], id: u32, o: Order) -> Option<u32> {
        Lineage::of(rows, &[], Vec::new(), Some(o)).in_earlier_folder(id, o)
    }

    proptest::proptest! {
        /// The lookup by folder keys finds what comparing the page with
        /// every path finds (the definition), and the base under either
        /// basis is the previous version, the folder's page or none.
        #[test]
        fn the_lookup_finds_what_comparing_every_path_finds(
            picks in proptest::collection::vec((0usize..3, 0usize..3, 0usize..3), 1..40),
            listed in proptest::bool::ANY,
        ) {
            let (tops, mids, names) = (["v1", "v2", "v10"], ["a", "b", "a/c"], ["x.md", "y.md", "z.md"]);
            let mut rows: Vec<Row> = Vec::new();
            for (t, m, n) in picks {
                let path = format!("{}/{}/{}", tops[t], mids[m], names[n]);
                let version = rows.iter().filter(|r| r.path == path).count() as u32 + 1;
                rows.push(row(&path, version));
            }
            let o = if listed {
                Order::listed(vec!["v1".into(), "v2".into(), "v10".into()]).unwrap()
            } else {
                Order::Version
            };
            let l = Lineage::of(&rows, &[], Vec::new(), Some(o));
            for id in 0..rows.len() as u32 {
                let path = &rows[id as usize].path;
                let same = |p: &str| match (o.in_version(path), o.in_version(p)) {
                    (Some((a, x)), Some((b, y))) => a != b && x == y,
                    _ => sibling(path, p),
                };
                let best = (rows.iter().map(|r| r.path.as_str()))
                    .filter(|p| same(p) && o.paths(p, path) == Some(Ordering::Less))
                    .max_by(|a, b| o.paths(a, b).unwrap_or(Ordering::Equal));
                let want = best.and_then(|b| {
                    let v: Vec<u32> = (0..rows.len() as u32).filter(|&v| rows[v as usize].path == b).collect();
                    v.iter().rev().find(|&&v| v < id).or(v.last()).copied()
                });
                proptest::prop_assert_eq!(l.in_earlier_folder(id, o), want);
                let previous = (0..id).find(|&v| {
                    rows[v as usize].path == *path && rows[v as usize].version + 1 == rows[id as usize].version
                });
                let by = l.base(id, Basis::Predecessor).map(|b| b.id);
                proptest::prop_assert_eq!(by, previous.or(want));
                let by = l.base(id, Basis::Folder).map(|b| b.id);
                proptest::prop_assert_eq!(by, want.or(previous));
            }
        }
    }

    proptest::proptest! {
        /// The release basis is, by definition, the page's latest version
        /// read from the newest release's commit or before, that release
        /// the newest before the version's own commit (after every commit
        /// for one read from the files); none before the first release.
        #[test]
        fn the_release_basis_is_the_latest_version_at_the_newest_release_before(
            picks in proptest::collection::vec((0usize..3, proptest::option::of(0i64..12)), 1..30),
            tagged in proptest::collection::btree_set(0i64..12, 0..4),
        ) {
            let names = ["a.md", "b.md", "c.md"];
            let mut rows: Vec<Row> = Vec::new();
            let mut stamps = Vec::new();
            // Commits come in order; a page's versions too.
            let mut seq = 0;
            for (n, stamp) in picks {
                let version = rows.iter().filter(|r| r.path == names[n]).count() as u32 + 1;
                if let Some(s) = stamp {
                    seq = seq.max(s);
                    stamps.push((rows.len() as u32, seq));
                }
                rows.push(row(names[n], version));
            }
            let releases: Vec<Release> = (tagged.iter())
                .map(|&s| Release { tag: format!("r{s}"), seq: s, commit: format!("c{s}") })
                .collect();
            let l = Lineage::of(&rows, &[], Vec::new(), None).with_releases(releases.clone(), &stamps);
            let stamp = |v: u32| stamps.iter().find(|s| s.0 == v).map(|s| s.1);
            for id in (0..rows.len() as u32).filter(|_| !releases.is_empty()) {
                let at = stamp(id).unwrap_or(i64::MAX);
                let release = releases.iter().rev().find(|r| r.seq < at);
                let want = release.and_then(|r| {
                    (0..id).rev().find(|&v| {
                        rows[v as usize].path == rows[id as usize].path
                            && stamp(v).is_some_and(|s| s <= r.seq)
                    })
                });
                let got = l.base(id, Basis::Release);
                proptest::prop_assert_eq!(got.as_ref().map(|b| b.id), want);
                if let (Some(b), Some(r)) = (got, release) {
                    let how = How::Release { tag: r.tag.clone(), commit: r.commit.clone() };
                    proptest::prop_assert_eq!(b.how, how);
                }
            }
            // No release at all: the folder basis (here the predecessor).
            let none = Lineage::of(&rows, &[], Vec::new(), None).with_releases(Vec::new(), &stamps);
            for id in 0..rows.len() as u32 {
                proptest::prop_assert_eq!(none.base(id, Basis::Release), none.base(id, Basis::Folder));
            }
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
