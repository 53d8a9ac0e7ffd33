//! Predecessor rules (`[[predecessor]]`): for layouts the version-folder
//! rule does not read (docs/algorithms.md §12), which page a page's first
//! version follows. `page` is a pattern of paths under the root, `follows`
//! the path it follows: each `*` of `page` matches a run of characters
//! within one path component, `**` a run that may cross them, and the
//! text each matched goes into the same-numbered `*` or `**` of `follows`.

use std::fmt;
use std::str::FromStr;

use serde::Deserialize;

/// What a page's "changed" and "removed" shares (Documents, `diff`) are
/// measured against; "fresh" is always against everything earlier.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Basis {
    /// The page's predecessor: its previous version, else the page a rule
    /// or an earlier version folder gives (docs/algorithms.md §12).
    #[default]
    Predecessor,
    /// The same page in the previous version folder (a release), past the
    /// page's own earlier versions: an edit to `next/a.md` keeps what `next/`
    /// changed against the folder before. The predecessor where there is no
    /// such folder.
    Folder,
    /// The page as it was at the newest release before it: a tag (matching
    /// `release_tags`) on a commit of the git history read, before the
    /// version's commit. The folder basis where the index holds no release.
    Release,
}

impl Basis {
    /// The basis after this one.
    pub fn next(self) -> Basis {
        match self {
            Basis::Predecessor => Basis::Folder,
            Basis::Folder => Basis::Release,
            Basis::Release => Basis::Predecessor,
        }
    }
}

impl fmt::Display for Basis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Basis::Predecessor => "predecessor",
            Basis::Folder => "folder",
            Basis::Release => "release",
        })
    }
}

impl FromStr for Basis {
    type Err = String;
    fn from_str(s: &str) -> Result<Basis, String> {
        match s {
            "predecessor" => Ok(Basis::Predecessor),
            "folder" => Ok(Basis::Folder),
            "release" => Ok(Basis::Release),
            _ => Err(format!(
                "basis {s:?}: expected predecessor, folder or release"
            )),
        }
    }
}

/// One rule: pages matching `page` follow the page `follows` names.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PredecessorRule {
    /// Paths under the root, with `*` and `**`.
    pub page: String,
    /// The path each follows, the matched text put in for its wildcards.
    pub follows: String,
}

/// A pattern's parts: literal text and wildcards (`true`: `**`).
enum Part<'a> {
    Text(&'a str),
    Any { slash: bool },
}

fn parts(p: &str) -> Vec<Part<'_>> {
    let mut out = Vec::new();
    let mut rest = p;
    while let Some(i) = rest.find('*') {
        if i > 0 {
            out.push(Part::Text(&rest[..i]));
        }
        let slash = rest[i + 1..].starts_with('*');
        out.push(Part::Any { slash });
        rest = &rest[i + if slash { 2 } else { 1 }..];
    }
    if !rest.is_empty() {
        out.push(Part::Text(rest));
    }
    out
}

/// The texts `parts` match in `s`, in order, if it matches whole (the
/// shortest match for each wildcard first).
fn matches<'s>(parts: &[Part], s: &'s str, caught: &mut Vec<&'s str>) -> bool {
    match parts.split_first() {
        None => s.is_empty(),
        Some((Part::Text(t), rest)) => s.strip_prefix(t).is_some_and(|s| matches(rest, s, caught)),
        Some((Part::Any { slash }, rest)) => {
            for (i, c) in s.char_indices().chain([(s.len(), '\0')]) {
                caught.push(&s[..i]);
                if matches(rest, &s[i..], caught) {
                    return true;
                }
                caught.pop();
                if c == '/' && !slash {
                    break;
                }
            }
            false
        }
    }
}

impl PredecessorRule {
    /// The path `path` follows by this rule, if it matches.
    pub fn follows(&self, path: &str) -> Option<String> {
        let mut caught = Vec::new();
        if !matches(&parts(&self.page), path, &mut caught) {
            return None;
        }
        let mut out = String::new();
        let mut texts = caught.into_iter();
        for p in parts(&self.follows) {
            match p {
                Part::Text(t) => out.push_str(t),
                Part::Any { .. } => out.push_str(texts.next().unwrap_or("")),
            }
        }
        Some(out)
    }

    /// Why the rule cannot be used: `follows` has more wildcards than `page`.
    pub fn check(&self) -> Result<(), String> {
        let count = |p: &str| {
            parts(p)
                .iter()
                .filter(|x| matches!(x, Part::Any { .. }))
                .count()
        };
        if count(&self.follows) > count(&self.page) {
            return Err(format!(
                "[[predecessor]] follows = {:?} has more wildcards than page = {:?}",
                self.follows, self.page
            ));
        }
        Ok(())
    }
}

/// Whether `path` matches `pattern` whole (`*` within a component, `**`
/// across them), as a rule's `page` does.
pub(crate) fn glob_matches(pattern: &str, path: &str) -> bool {
    matches(&parts(pattern), path, &mut Vec::new())
}

/// Whether tag `tag` matches `pattern` whole (`release_tags`: `*` within
/// a `/`-separated part, `**` across them).
pub fn tag_matches(pattern: &str, tag: &str) -> bool {
    glob_matches(pattern, tag)
}

/// The path `path` follows by the first of `rules` that matches it.
pub fn follows(rules: &[PredecessorRule], path: &str) -> Option<String> {
    rules.iter().find_map(|r| r.follows(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(page: &str, follows: &str) -> PredecessorRule {
        PredecessorRule {
            page: page.into(),
            follows: follows.into(),
        }
    }

    #[test]
    fn wildcards_carry_their_text_across() {
        let r = rule("docs/*.md", "website/versioned_docs/version-30.4/*.md");
        assert_eq!(
            r.follows("docs/CLI.md").as_deref(),
            Some("website/versioned_docs/version-30.4/CLI.md")
        );
        // `*` stays within a component; `**` crosses them.
        assert_eq!(r.follows("docs/api/CLI.md"), None);
        let deep = rule("next/**", "v2/**");
        assert_eq!(
            deep.follows("next/api/a.md").as_deref(),
            Some("v2/api/a.md")
        );
        let two = rule("i18n/*/docs/*", "docs/*");
        assert_eq!(two.follows("i18n/fr/docs/a.md").as_deref(), Some("docs/fr"));
        assert_eq!(
            rule("a.md", "b.md").follows("a.md").as_deref(),
            Some("b.md")
        );
        assert_eq!(rule("a.md", "b.md").follows("xa.md"), None);
        assert!(rule("*", "*/*").check().is_err());
        assert!(rule("**/x", "y/**").check().is_ok());
        let rules = [rule("x/*", "y/*"), rule("*", "z")];
        assert_eq!(follows(&rules, "x/a").as_deref(), Some("y/a"));
        assert_eq!(follows(&rules, "b").as_deref(), Some("z"));
    }
}
