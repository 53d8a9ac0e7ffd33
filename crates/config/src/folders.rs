//! Settings for one folder: a `[folders."/abs/path"]` table holds engine
//! settings that outrank the top-level keys when a command reads that folder
//! (flags still outrank both). The TUI saves adopted settings there, so a
//! table tuned on one folder does not index every other folder.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{Config, ConfigError, parsed};
use lineage_origin::{Estimation, Eviction, Selector, TableSize, Ties};

/// One folder's engine settings; a key left out is the top level's.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FolderConfig {
    /// Shingle length in tokens.
    pub k: Option<usize>,
    /// Shingle selection.
    #[serde(deserialize_with = "some")]
    pub selector: Option<Selector>,
    /// Memory of the fixed-size fingerprint table, in bytes, or unbounded.
    #[serde(deserialize_with = "some")]
    pub table_size: Option<TableSize>,
    /// Entries per table bucket.
    pub bucket_entries: Option<u16>,
    /// Eviction when a bucket is full.
    #[serde(deserialize_with = "some")]
    pub eviction: Option<Eviction>,
    /// Which of the entries tied for eviction goes (cc and lucky).
    #[serde(deserialize_with = "some")]
    pub eviction_ties: Option<Ties>,
    /// Estimation of the origins of units not found in the table.
    #[serde(deserialize_with = "some")]
    pub estimation: Option<Estimation>,
    /// Longest bridge, in selected units.
    pub bridge_limit: Option<u32>,
    /// Seed of random eviction.
    pub seed: Option<u64>,
    /// Align where the table samples (docs/algorithms.md §3.2).
    pub align: Option<bool>,
    /// Where the folder's versions come from (a repository's history or
    /// the files).
    #[serde(deserialize_with = "some")]
    pub history: Option<super::HistoryMode>,
    /// The folder's predecessor rules, in place of the top level's.
    pub predecessor: Option<Vec<super::PredecessorRule>>,
    /// What the folder's "changed" and "removed" shares are measured against.
    #[serde(deserialize_with = "some")]
    pub basis: Option<super::Basis>,
    /// The folder's release tags (a pattern), in place of the top level's.
    pub release_tags: Option<String>,
    /// The folder's `lineage check` policies, each outranking the top level's.
    pub check: Option<super::check::CheckFolder>,
}

fn some<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: std::str::FromStr<Err = String>,
{
    parsed(d).map(Some)
}

impl FolderConfig {
    /// Put the settings this table names into `c`.
    fn apply(&self, c: &mut Config) {
        fn put<T: Copy>(slot: &mut T, v: Option<T>) {
            if let Some(v) = v {
                *slot = v;
            }
        }
        put(&mut c.k, self.k);
        put(&mut c.selector, self.selector);
        put(&mut c.table_size, self.table_size);
        put(&mut c.bucket_entries, self.bucket_entries);
        put(&mut c.eviction, self.eviction);
        put(&mut c.eviction_ties, self.eviction_ties);
        put(&mut c.estimation, self.estimation);
        put(&mut c.bridge_limit, self.bridge_limit);
        put(&mut c.seed, self.seed);
        put(&mut c.align, self.align);
        put(&mut c.history, self.history);
        put(&mut c.basis, self.basis);
        if let Some(tags) = &self.release_tags {
            c.release_tags.clone_from(tags);
        }
        if let Some(rules) = &self.predecessor {
            c.predecessor.clone_from(rules);
        }
        if let Some(check) = &self.check {
            check.apply(&mut c.check);
        }
    }
}

/// The folder as a `[folders]` key names it: its canonical path (links and
/// `..` resolved, so two spellings of one folder share a table).
pub fn canonical(root: &Path) -> PathBuf {
    std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf())
}

/// Whether the `[folders]` key `key` names `folder` (canonical), however
/// it is spelled: what a command reads and what a save writes agree.
pub(crate) fn names(key: &str, folder: &Path) -> bool {
    canonical(Path::new(key)) == folder
}

impl Config {
    /// Take the settings of `root`'s `[folders]` table, if the file has one
    /// (before the flags, which outrank it), and remember the folder as the
    /// one adopted settings are saved for.
    pub fn for_folder(&mut self, root: &Path) {
        let root = canonical(root);
        let table = (self.folders.iter())
            .find(|(key, _)| names(key, &root))
            .map(|(_, t)| t.clone());
        if let Some(t) = table {
            t.apply(self);
        }
        self.folder = Some(root);
    }

    /// Each `[folders]` table names an absolute path and holds settings in
    /// range (as the top level must).
    pub(super) fn validate_folders(&self) -> Result<(), ConfigError> {
        for (key, table) in &self.folders {
            if !Path::new(key).is_absolute() {
                return Err(ConfigError::Value(format!(
                    "[folders.\"{key}\"]: a folder is named by its absolute path"
                )));
            }
            let mut c = self.clone();
            c.folders.clear();
            table.apply(&mut c);
            c.validate()
                .map_err(|e| ConfigError::Value(format!("[folders.\"{key}\"]: {e}")))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folders_table_outranks_the_top_level_there_only() {
        let tmp = lineage_testing::TempDir::new("folders-apply");
        let dir = tmp.path();
        let (a, b) = (dir.join("a"), dir.join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        let text = format!(
            "table_size = \"1MiB\"\nk = 6\n[folders.\"{}\"]\ntable_size = \"18KiB\"\neviction = \"cc\"\nhistory = \"folder\"\n",
            a.display()
        );
        let c = Config::from_toml(&text).unwrap();
        let mut at_a = c.clone();
        // Another spelling of the same folder finds its table.
        at_a.for_folder(&b.join("..").join("a"));
        assert_eq!(at_a.table_size, TableSize::Bytes(18 << 10));
        assert_eq!(at_a.eviction, Eviction::Cc);
        assert_eq!(at_a.k, 6, "what the table leaves out is the top level's");
        assert_eq!(at_a.history, crate::HistoryMode::Folder);
        assert_eq!(
            at_a.folder.as_deref(),
            Some(a.canonicalize().unwrap().as_path())
        );
        let mut at_b = c.clone();
        at_b.for_folder(&b);
        assert_eq!(at_b.table_size, TableSize::Bytes(1 << 20));
        assert_eq!(at_b.eviction, Config::default().eviction);
        assert_eq!(at_b.history, crate::HistoryMode::Auto);
    }

    #[test]
    fn a_folders_table_is_checked_as_the_top_level_is() {
        for (bad, says) in [
            (
                "[folders.\"/x\"]\nk = 0\n",
                "[folders.\"/x\"]: k must be between 1 and 64",
            ),
            ("[folders.\"/x\"]\norder = \"path\"\n", "order"),
            ("[folders.\"/x\"]\neviction = \"fifo\"\n", "fifo"),
            ("[folders.\"docs\"]\nk = 6\n", "absolute path"),
        ] {
            let e = Config::from_toml(bad).unwrap_err().to_string();
            assert!(e.contains(says), "{bad:?}: {e}");
        }
    }
}
