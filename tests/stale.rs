//! `lineage stale` end to end: a copy whose origin changed after it was
//! taken (with both sides' words, checked against a plain LCS of the two
//! passages written here), a fix made in the copy only, and what is not
//! stale: text the origin had dropped before it was copied, text moved
//! from one page to another at once (saved together, or in one commit);
//! the commit that changed the origin, from git's history.
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

mod common;

use common::{Folder, TempDir, lcs, stdout_of, text};
use lineage_testing::Git;
use serde_json::Value;

impl Folder {
    fn args<'a>(&'a self, cmd: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
        let mut a = vec![cmd, self.dir.path().to_str().unwrap()];
        a.extend(extra);
        a.extend(["--index", self.ix.as_str()]);
        a
    }

    fn index(&self) {
        stdout_of(self.home.path(), &self.args("index", &[]));
    }

    fn stale(&self, extra: &[&str]) -> String {
        stdout_of(self.home.path(), &self.args("stale", extra))
    }

    fn stale_json(&self, extra: &[&str]) -> Value {
        let mut e = extra.to_vec();
        e.push("--json");
        serde_json::from_str(&self.stale(&e)).unwrap()
    }
}

fn words(s: &str) -> Vec<&str> {
    s.split_whitespace().collect()
}

/// `p` with the words at `at` replaced by `with` (each one word).
fn edit(p: &str, at: &[usize], with: &[&str]) -> String {
    let mut w = words(p);
    for (&i, &x) in at.iter().zip(with) {
        w[i] = x;
    }
    w.join(" ")
}

fn passages(v: &Value) -> Vec<&Value> {
    (v["pages"].as_array().unwrap().iter())
        .flat_map(|p| p["passages"].as_array().unwrap())
        .collect()
}

#[test]
fn a_copy_whose_origin_changed_since_is_stale_with_both_sides_words() {
    let f = Folder::new("stale-origin");
    let p = text(1, 80);
    f.put("a.md", &format!("{}\n\n{p}\n", text(2, 40)), 0);
    f.put("b.md", &format!("{}\n\n{p}\n", text(3, 40)), 10);
    f.index();
    let none = f.stale(&[]);
    assert!(none.starts_with("no page has any"), "{none}");
    assert!(none.contains("exact"), "the table's regime is said: {none}");

    // The origin fixes two words of the passage, an hour later.
    let fixed = edit(&p, &[20, 50], &["fixedone", "fixedtwo"]);
    f.put("a.md", &format!("{}\n\n{fixed}\n", text(2, 40)), 3600);
    f.index();
    let s = f.stale_json(&[]);
    assert_eq!(s["format"], "lineage-stale/1");
    assert_eq!(s["regime"], "exact");
    let found = passages(&s);
    assert_eq!(found.len(), 1, "{s}");
    let x = found[0];
    assert_eq!(s["pages"][0]["path"], "b.md");
    assert_eq!(x["kind"], "changed");
    assert_eq!(x["copied_from"]["path"], "a.md");
    assert_eq!(x["copied_from"]["version"], 1);
    assert_eq!(
        (&x["origin_now"]["version"], &x["changed_in"]["version"]),
        (&2.into(), &2.into())
    );
    // The passage is the copied paragraph, here as it was and there as it is.
    assert_eq!(x["text"], p.as_str(), "{x}");
    assert_eq!(x["origin_text"], fixed.as_str(), "{x}");
    assert_eq!(x["here"]["lines"], serde_json::json!([3, 3]));
    let (old, new) = (words(&p), words(&fixed));
    assert_eq!(x["stale_tokens"], old.len() as u32 - lcs(&old, &new));
    let pairs: Vec<(&str, &str)> = (x["differences"].as_array().unwrap().iter())
        .map(|d| {
            (
                d["here_text"].as_str().unwrap(),
                d["there_text"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(pairs, [(old[20], "fixedone"), (old[50], "fixedtwo")]);

    let said = f.stale(&[]);
    assert!(
        said.contains("b.md v1: 1 passage, 2 tokens stale"),
        "{said}"
    );
    assert!(
        said.contains("copied from a.md v1: changed there in v2"),
        "{said}"
    );
    assert!(
        said.contains(&format!("[-{}-]", old[20])) && said.contains("{+fixedone+}"),
        "{said}"
    );
    // One page asked: the copy has it, the origin has none of its own.
    assert_eq!(passages(&f.stale_json(&["b.md"])).len(), 1);
    assert!(passages(&f.stale_json(&["a.md"])).is_empty());
}

#[test]
fn a_fix_made_in_the_copy_only_is_told_from_the_copy() {
    let f = Folder::new("stale-here");
    let p = text(4, 80);
    f.put("a.md", &format!("{p}\n"), 0);
    f.put("c.md", &format!("{}\n\n{p}\n", text(5, 30)), 10);
    f.index();
    let fixed = edit(&p, &[40], &["fixedhere"]);
    f.put("c.md", &format!("{}\n\n{fixed}\n", text(5, 30)), 3600);
    f.index();
    let s = f.stale_json(&[]);
    let found = passages(&s);
    assert_eq!(found.len(), 1, "{s}");
    let x = found[0];
    assert_eq!(s["pages"][0]["path"], "c.md");
    assert_eq!(x["kind"], "changed_here");
    assert_eq!(x["changed_in"]["path"], "c.md");
    assert_eq!(x["changed_in"]["version"], 2);
    assert_eq!(x["origin_now"]["path"], "a.md");
    assert_eq!(x["origin_now"]["version"], 1);
    let d = &x["differences"][0];
    assert_eq!(d["here_text"], "fixedhere");
    assert_eq!(d["there_text"], words(&p)[40]);
    assert_eq!(x["origin_text"], p.as_str());
    let said = f.stale(&[]);
    assert!(
        said.contains("changed here in v2; a.md v1 still has it as copied"),
        "{said}"
    );
    assert!(said.contains("{+fixedhere+}"), "{said}");
}

#[test]
fn text_dropped_before_it_was_copied_or_moved_at_once_is_not_stale() {
    // Dropped: the origin changed the passage, then a page took the old text.
    let f = Folder::new("stale-before");
    let p = text(6, 80);
    f.put("a.md", &format!("{p}\n"), 0);
    f.index();
    f.put("a.md", &format!("{}\n", edit(&p, &[10], &["changed"])), 100);
    f.index();
    f.put("b.md", &format!("{}\n\n{p}\n", text(7, 30)), 200);
    f.index();
    let s = f.stale_json(&[]);
    assert!(passages(&s).is_empty(), "{s}");

    // Moved: a paragraph leaves z.md for b.md, both saved at once (b.md,
    // read first, takes it before z.md lets it go).
    let f = Folder::new("stale-moved");
    let q = text(8, 80);
    f.put("z.md", &format!("{}\n\n{q}\n", text(9, 40)), 0);
    f.put("b.md", &format!("{}\n", text(10, 40)), 0);
    f.index();
    f.put("z.md", &format!("{}\n", text(9, 40)), 500);
    f.put("b.md", &format!("{}\n\n{q}\n", text(10, 40)), 500);
    f.index();
    let s = f.stale_json(&[]);
    assert!(passages(&s).is_empty(), "{s}");
    // The same move a day apart is a removal the copy did not follow.
    f.put("z.md", &format!("{}\n\n{q}\n", text(9, 40)), 600);
    f.put("b.md", &format!("{}\n", text(10, 40)), 600);
    f.index();
    f.put("b.md", &format!("{}\n\n{q}\n", text(10, 40)), 700);
    f.index();
    f.put("z.md", &format!("{}\n", text(9, 40)), 90_000);
    f.index();
    let s = f.stale_json(&[]);
    let found = passages(&s);
    assert_eq!(found.len(), 1, "{s}");
    assert_eq!(found[0]["kind"], "removed");
    // The passage is what came from z.md: its first shingles, which span
    // b.md's own words before it, are b.md's since its earlier copy.
    let taken = found[0]["text"].as_str().unwrap();
    assert!(q.ends_with(taken) && words(taken).len() >= 70, "{taken}");
}

#[test]
fn from_git_history_the_commit_that_changed_the_origin_is_named() {
    let t = TempDir::new("stale-git");
    let home = TempDir::new("stale-git-home");
    let git = Git::init(&t.0.join("repo"));
    let (p, q) = (text(11, 80), text(12, 80));
    git.write("a.md", format!("{}\n\n{p}\n\n{q}\n", text(13, 30)));
    git.commit("Write the origin");
    git.write("b.md", format!("{}\n\n{p}\n", text(14, 30)));
    git.commit("Copy a passage");
    // One commit moves q from a.md to c.md: not stale.
    git.write("a.md", format!("{}\n\n{p}\n", text(13, 30)));
    git.write("c.md", format!("{q}\n"));
    git.commit("Move a section");
    let fixed = edit(&p, &[30], &["fixedingit"]);
    git.write("a.md", format!("{}\n\n{fixed}\n", text(13, 30)));
    let fix = git.commit("Fix a word in the origin");
    let root = git.dir.to_str().unwrap();
    let ix = home.path().join("ix");
    let ix = ix.to_str().unwrap();
    stdout_of(home.path(), &["index", root, "--index", ix]);
    let s: Value = serde_json::from_str(&stdout_of(
        home.path(),
        &["stale", root, "--index", ix, "--json"],
    ))
    .unwrap();
    let found = passages(&s);
    assert_eq!(found.len(), 1, "{s}");
    let x = found[0];
    assert_eq!(s["pages"][0]["path"], "b.md");
    assert_eq!(x["changed_in"]["commit"]["id"], fix.as_str());
    assert_eq!(
        x["changed_in"]["commit"]["subject"],
        "Fix a word in the origin"
    );
    assert_eq!(x["differences"][0]["there_text"], "fixedingit");
    let said = stdout_of(home.path(), &["stale", root, "--index", ix]);
    assert!(
        said.contains(&fix[..7]) && said.contains("Fix a word in the origin"),
        "{said}"
    );
}
