//! The policies of `lineage check` (`[check]`, and a folder's own in
//! `[folders."/abs/path".check]`): how much a page may copy from pages of
//! other paths, the smallest passage that counts, which copies are expected
//! (`allow`) or never are (`deny`), and the resemblance at which two pages
//! are near duplicates. A value out of range fails as the file is read,
//! with its key and line.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer};

use super::predecessor::glob_matches;

/// `[check]`: every policy, with its default.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CheckConfig {
    /// The largest share of a page's tokens, in percent, that may be copied
    /// from pages of other paths (allowed pairs not counted); 100: no limit.
    #[serde(deserialize_with = "percent")]
    pub max_copied: f64,
    /// The largest share, in percent, copied from any one other page.
    #[serde(deserialize_with = "percent")]
    pub max_copied_from_one: f64,
    /// The fewest tokens a copied passage has to count (shorter ones are
    /// the stock phrases any two pages share).
    pub min_passage: u32,
    /// Jaccard resemblance of two live pages' shingle sets at or over which
    /// they fail as near duplicates (outside allowed pairs); 0: off.
    #[serde(deserialize_with = "resemblance")]
    pub near_duplicate: f64,
    /// Copies that are expected: `"PAGES <- ORIGINS"`, each side a pattern
    /// of paths under the root (`*` within a component, `**` across them).
    pub allow: Vec<PairRule>,
    /// Copies that always fail, whatever the shares (outranks `allow`).
    pub deny: Vec<PairRule>,
}

impl Default for CheckConfig {
    fn default() -> CheckConfig {
        CheckConfig {
            max_copied: 50.0,
            max_copied_from_one: 100.0,
            min_passage: 16,
            near_duplicate: 0.9,
            allow: Vec::new(),
            deny: Vec::new(),
        }
    }
}

/// How a copy stands with the pair rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    /// No rule names it: it counts toward the shares.
    Counted,
    /// An `allow` rule names it (and no `deny`): it does not count.
    Allowed,
    /// A `deny` rule names it: it fails.
    Denied,
}

impl CheckConfig {
    /// How a copy into `page` from `origin` (paths under the root) stands.
    pub fn standing(&self, page: &str, origin: &str) -> Standing {
        if self.deny.iter().any(|r| r.names(page, origin)) {
            Standing::Denied
        } else if self.allow.iter().any(|r| r.names(page, origin)) {
            Standing::Allowed
        } else {
            Standing::Counted
        }
    }
}

/// A folder's `check` table: each key it names outranks the top level's.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CheckFolder {
    /// See [`CheckConfig::max_copied`].
    #[serde(deserialize_with = "some_percent")]
    pub max_copied: Option<f64>,
    /// See [`CheckConfig::max_copied_from_one`].
    #[serde(deserialize_with = "some_percent")]
    pub max_copied_from_one: Option<f64>,
    /// See [`CheckConfig::min_passage`].
    pub min_passage: Option<u32>,
    /// See [`CheckConfig::near_duplicate`].
    #[serde(deserialize_with = "some_resemblance")]
    pub near_duplicate: Option<f64>,
    /// In place of the top level's `allow`.
    pub allow: Option<Vec<PairRule>>,
    /// In place of the top level's `deny`.
    pub deny: Option<Vec<PairRule>>,
}

impl CheckFolder {
    /// Put the policies this table names into `c`.
    pub(crate) fn apply(&self, c: &mut CheckConfig) {
        fn put<T: Clone>(slot: &mut T, v: &Option<T>) {
            if let Some(v) = v {
                slot.clone_from(v);
            }
        }
        put(&mut c.max_copied, &self.max_copied);
        put(&mut c.max_copied_from_one, &self.max_copied_from_one);
        put(&mut c.min_passage, &self.min_passage);
        put(&mut c.near_duplicate, &self.near_duplicate);
        put(&mut c.allow, &self.allow);
        put(&mut c.deny, &self.deny);
    }
}

/// A pair rule, `"PAGES <- ORIGINS"`: copies into a page matching the left
/// pattern from a page matching the right one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PairRule {
    /// Pattern of the pages that copy.
    pub page: String,
    /// Pattern of the pages copied from.
    pub origin: String,
}

impl PairRule {
    /// Whether the rule names a copy into `page` from `origin`.
    pub fn names(&self, page: &str, origin: &str) -> bool {
        glob_matches(&self.page, page) && glob_matches(&self.origin, origin)
    }
}

impl FromStr for PairRule {
    type Err = String;
    fn from_str(s: &str) -> Result<PairRule, String> {
        let bad = || format!("{s:?}: a pair is \"PAGES <- ORIGINS\", two path patterns");
        let (page, origin) = s.split_once("<-").ok_or_else(bad)?;
        let (page, origin) = (page.trim(), origin.trim());
        if page.is_empty() || origin.is_empty() || origin.contains("<-") {
            return Err(bad());
        }
        Ok(PairRule {
            page: page.into(),
            origin: origin.into(),
        })
    }
}

impl fmt::Display for PairRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} <- {}", self.page, self.origin)
    }
}

impl<'de> Deserialize<'de> for PairRule {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<PairRule, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

fn in_range<E: serde::de::Error>(v: f64, lo: f64, hi: f64, what: &str) -> Result<f64, E> {
    if v.is_finite() && (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(E::custom(format!("{what} must be {lo} to {hi}, not {v}")))
    }
}

fn percent<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    in_range(f64::deserialize(d)?, 0.0, 100.0, "a share in percent")
}

fn resemblance<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    in_range(f64::deserialize(d)?, 0.0, 1.0, "a resemblance")
}

fn some_percent<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    percent(d).map(Some)
}

fn some_resemblance<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    resemblance(d).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;

    #[test]
    fn pair_rules_name_copies_by_both_paths() {
        let c = Config::from_toml(
            "[check]\nallow = [\"docs/v*/** <- docs/v*/**\", \"i18n/** <- docs/**\"]\ndeny = [\"docs/v2/secret.md <- **\"]\n",
        )
        .unwrap()
        .check;
        assert_eq!(
            c.standing("docs/v2/a.md", "docs/v1/a.md"),
            Standing::Allowed
        );
        assert_eq!(c.standing("i18n/fr/a.md", "docs/a.md"), Standing::Allowed);
        // The direction counts: the rule allows i18n copying docs only.
        assert_eq!(c.standing("docs/a.md", "i18n/fr/a.md"), Standing::Counted);
        assert_eq!(c.standing("blog/a.md", "docs/v1/a.md"), Standing::Counted);
        // `deny` outranks `allow`.
        assert_eq!(
            c.standing("docs/v2/secret.md", "docs/v1/a.md"),
            Standing::Denied
        );
        assert_eq!(c.allow[0].to_string(), "docs/v*/** <- docs/v*/**");
    }

    #[test]
    fn a_policy_that_does_not_parse_names_its_key_and_line() {
        for (bad, says) in [
            ("[check]\n\nmax_copied = 150\n", "line 3"),
            ("[check]\nmax_copied = 150\n", "must be 0 to 100, not 150"),
            (
                "[check]\nnear_duplicate = 2\n",
                "resemblance must be 0 to 1",
            ),
            ("[check]\nallow = [\"docs/**\"]\n", "\"PAGES <- ORIGINS\""),
            ("[check]\nallow = [\"a <- b <- c\"]\n", "line 2"),
            ("[check]\nmax_copyed = 5\n", "max_copyed"),
            ("[check]\nmin_passage = -1\n", "min_passage"),
        ] {
            let e = Config::from_toml(bad).unwrap_err().to_string();
            assert!(e.contains(says), "{bad:?}: {e}");
        }
    }

    #[test]
    fn a_folders_check_table_outranks_the_top_level_there_only() {
        let tmp = lineage_testing::TempDir::new("check-folder");
        let dir = tmp.path().canonicalize().unwrap();
        let text = format!(
            "[check]\nmax_copied = 20\nmin_passage = 30\n[folders.\"{}\".check]\nmax_copied = 80\nallow = [\"b/** <- a/**\"]\n",
            dir.display()
        );
        let c = Config::from_toml(&text).unwrap();
        assert_eq!(c.check.max_copied, 20.0);
        let mut there = c.clone();
        there.for_folder(&dir);
        assert_eq!(there.check.max_copied, 80.0);
        assert_eq!(
            there.check.min_passage, 30,
            "a key left out is the top level's"
        );
        assert_eq!(there.check.standing("b/x", "a/y"), Standing::Allowed);
        assert_eq!(c.check.standing("b/x", "a/y"), Standing::Counted);
    }
}
