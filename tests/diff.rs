//! `lineage diff` end to end: what a page changed since its predecessor
//! (its previous version, the same page in the previous version folder, a
//! renamed page's old name), checked against a plain LCS of the two token
//! lists written here; renames from git's history and from the folder; and
//! the hostile cases (an escape in a name, a predecessor's text no longer
//! kept, a binary predecessor).
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

mod common;

use std::path::Path;

use common::{TempDir, command, fails_with_one_line, lcs, stdout_of, text};
use serde_json::Value;

/// `lineage diff ROOT PAGE --index IX --json EXTRA...`, parsed.
fn diff(home: &Path, root: &Path, ix: &Path, page: &str, extra: &[&str]) -> Value {
    let (r, i) = (root.to_str().unwrap(), ix.to_str().unwrap());
    let mut args = vec!["diff", r, page, "--index", i, "--json"];
    args.extend(extra);
    serde_json::from_str(&stdout_of(home, &args)).unwrap()
}

fn index(home: &Path, root: &Path, ix: &Path, extra: &[&str]) {
    let mut args = vec![
        "index",
        root.to_str().unwrap(),
        "--index",
        ix.to_str().unwrap(),
    ];
    args.extend(extra);
    stdout_of(home, &args);
}

fn words(s: &str) -> Vec<&str> {
    s.split_whitespace().collect()
}

fn range(v: &Value) -> (u32, u32) {
    (v[0].as_u64().unwrap() as u32, v[1].as_u64().unwrap() as u32)
}

/// Check a diff's JSON against the two texts (words with no punctuation:
/// the tokenizer's tokens are the words): the kept tokens are as many as
/// the LCS's; kept, removed and moved-from spell the predecessor in order,
/// kept, new and moved-to the page; each passage's words are its tokens'.
fn check(d: &Value, old: &str, new: &str) {
    let (o, n) = (words(old), words(new));
    let common = lcs(&o, &n);
    let count = |k: &str| d[k].as_u64().unwrap() as u32;
    assert_eq!(count("kept"), common, "{d}");
    assert_eq!(count("removed") + count("moved"), o.len() as u32 - common);
    assert_eq!(count("new") + count("moved"), n.len() as u32 - common);
    assert_eq!(d["tokens"], n.len());
    assert_eq!(d["predecessor_tokens"], o.len());
    let hunks = d["hunks"].as_array().unwrap();
    for (side, all, kinds) in [
        ("old", &o, ["kept", "removed", "moved"]),
        ("new", &n, ["kept", "new", "moved"]),
    ] {
        let mut ranges: Vec<(u32, u32)> = (hunks.iter())
            .filter(|h| kinds.contains(&h["kind"].as_str().unwrap()))
            .map(|h| range(&h[side]["tokens"]))
            .collect();
        ranges.sort_unstable();
        let mut reach = 0;
        for (s, e) in ranges {
            assert_eq!(s, reach, "{side} ranges cover it in order: {d}");
            reach = e;
        }
        assert_eq!(reach, all.len() as u32);
    }
    for h in hunks {
        let (side, all) = match h["kind"].as_str().unwrap() {
            "removed" => ("old", &o),
            "new" | "moved" => ("new", &n),
            _ => {
                let (a, b) = (range(&h["old"]["tokens"]), range(&h["new"]["tokens"]));
                assert_eq!(o[a.0 as usize..a.1 as usize], n[b.0 as usize..b.1 as usize]);
                continue;
            }
        };
        let (s, e) = range(&h[side]["tokens"]);
        assert_eq!(
            words(h["text"].as_str().unwrap()),
            all[s as usize..e as usize]
        );
        if h["kind"] == "moved" {
            let (a, b) = range(&h["old"]["tokens"]);
            assert_eq!(o[a as usize..b as usize], all[s as usize..e as usize]);
            assert!(b - a >= 8, "a move is 8 tokens or more");
        }
    }
}

/// Paragraphs of `n` words, distinct per seed.
fn para(seed: u64, n: usize) -> String {
    text(seed, n)
}

#[test]
fn version_folders_diff_as_a_plain_lcs_says() {
    let dir = TempDir::new("diff");
    let home = TempDir::new("diff-home");
    let ix = home.path().join("ix");
    let [a, b, c, d, e] = [1, 2, 3, 4, 5].map(|s| para(s, 60));
    let copied = para(9, 40);
    // v1: three pages. v2: an edit, a section removed, a paragraph moved,
    // and a passage copied from another page. v10: after v2 in version
    // order, though "v10" < "v2" bytewise.
    let v1 = [
        ("intro.md", format!("{a}\n\n{b}\n")),
        ("guide.md", format!("{a}\n\n{c}\n\n{d}\n")),
        ("moved.md", format!("{b}\n\n{c}\n\n{d}\n")),
    ];
    let edited = a.replacen("w", "x", 3);
    let v2 = [
        ("intro.md", format!("{edited}\n\n{b}\n")),
        ("guide.md", format!("{a}\n\n{d}\n\n{copied}\n")),
        ("moved.md", format!("{c}\n\n{d}\n\n{b}\n")),
    ];
    let v10 = [
        ("intro.md", format!("{edited}\n\n{b}\n\n{e}\n")),
        ("guide.md", format!("{d}\n\n{a}\n")),
        ("moved.md", format!("{c}\n\n{b}\n")),
    ];
    for (folder, pages) in [("v1", &v1), ("v2", &v2), ("v10", &v10)] {
        for (name, body) in pages.iter() {
            dir.write(&format!("{folder}/{name}"), body);
        }
    }
    dir.write("other.md", format!("{}\n\n{copied}\n", para(8, 30)));
    index(home.path(), dir.path(), &ix, &["--order", "version"]);

    for (folder, before, pages, olds) in [("v2", "v1", &v2, &v1), ("v10", "v2", &v10, &v2)] {
        for ((name, body), (_, old)) in pages.iter().zip(olds.iter()) {
            let d = diff(
                home.path(),
                dir.path(),
                &ix,
                &format!("{folder}/{name}"),
                &[],
            );
            assert_eq!(d["format"], "lineage-diff/1");
            assert_eq!(d["predecessor"]["path"], format!("{before}/{name}"), "{d}");
            assert_eq!(d["predecessor"]["how"], "folder");
            check(&d, old, body);
        }
    }

    // The removed section, with its words and lines (5: after two
    // paragraphs and their blank lines).
    let guide = diff(home.path(), dir.path(), &ix, "v2/guide.md", &[]);
    let removed: Vec<&Value> = (guide["hunks"].as_array().unwrap().iter())
        .filter(|h| h["kind"] == "removed")
        .collect();
    assert_eq!(removed.len(), 1, "{guide}");
    assert_eq!(removed[0]["text"], c);
    assert_eq!(removed[0]["old"]["lines"], serde_json::json!([3, 3]));
    // The new passage was copied from other.md: the index's origin says so.
    let new: Vec<&Value> = (guide["hunks"].as_array().unwrap().iter())
        .filter(|h| h["kind"] == "new")
        .collect();
    assert_eq!(new.len(), 1);
    let from = &new[0]["copied"][0];
    assert_eq!(from["origin"]["path"], "other.md", "{guide}");
    let (s, e) = range(&from["tokens"]);
    let here = words(&v2[1].1)[s as usize..e as usize].join(" ");
    assert_eq!(from["origin_text"], here.as_str());
    assert!(copied.contains(&here) && e - s >= 30, "{from}");

    // The moved paragraph is one move, not a removal and an insertion.
    let moved = diff(home.path(), dir.path(), &ix, "v2/moved.md", &[]);
    let hunks = moved["hunks"].as_array().unwrap();
    let kinds: Vec<&str> = hunks.iter().map(|h| h["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["kept", "moved"], "{moved}");
    assert_eq!(hunks[1]["text"], b);
    assert_eq!(hunks[1]["old"]["tokens"], serde_json::json!([0, 60]));

    // A first version has no predecessor: everything is new.
    let first = diff(home.path(), dir.path(), &ix, "v1/intro.md", &[]);
    assert!(first["predecessor"].is_null());
    assert_eq!(
        (first["new"].as_u64(), first["kept"].as_u64()),
        (Some(120), Some(0))
    );
    let root = dir.path().to_str().unwrap();
    let i = ix.to_str().unwrap();
    let shown = stdout_of(home.path(), &["diff", root, "v1/intro.md", "--index", i]);
    assert!(shown.contains("no predecessor"), "{shown}");

    // --against another page, and at a version.
    let d = diff(
        home.path(),
        dir.path(),
        &ix,
        "v10/guide.md",
        &["--against", "v1/guide.md@1"],
    );
    assert_eq!(
        (
            d["predecessor"]["path"].as_str(),
            d["predecessor"]["how"].as_str()
        ),
        (Some("v1/guide.md"), Some("asked"))
    );
    check(&d, &v1[1].1, &v10[1].1);
    // The text names the predecessor and shows the removed words.
    let shown = stdout_of(home.path(), &["diff", root, "v2/guide.md", "--index", i]);
    assert!(
        shown.contains("since v1/guide.md v1 (the same page in the previous version folder)"),
        "{shown}"
    );
    assert!(shown.contains(&format!("  - │ {c}")), "{shown}");
    let explained = stdout_of(
        home.path(),
        &["explain", root, "v10/guide.md", "--index", i],
    );
    assert!(
        explained
            .contains("predecessor: v2/guide.md v1 (the same page in the previous version folder)"),
        "{explained}"
    );

    // Errors: one line, exit 2, naming what is wrong.
    let fails = |args: &[&str]| fails_with_one_line(&command(home.path(), args).output().unwrap());
    let line = fails(&["diff", root, "v3/guide.md", "--index", i]);
    assert!(
        line.contains("v3/guide.md is not a document of this index"),
        "{line}"
    );
    let line = fails(&[
        "diff",
        root,
        "v2/guide.md",
        "--against",
        "nowhere.md",
        "--index",
        i,
    ]);
    assert!(
        line.contains("--against: nowhere.md is not a document"),
        "{line}"
    );
    let line = fails(&[
        "diff",
        root,
        "v2/guide.md",
        "--against",
        "v1/guide.md@4",
        "--index",
        i,
    ]);
    assert!(
        line.contains("v1/guide.md has versions 1 to 1, not 4"),
        "{line}"
    );
}

#[test]
fn a_renamed_pages_predecessor_is_its_old_name_in_git_and_in_the_folder() {
    let dir = TempDir::new("diff-git");
    let home = TempDir::new("diff-git-home");
    let ix = home.path().join("ix");
    let git = lineage_testing::Git::init(dir.path());
    let (a, b) = (para(1, 80), para(2, 20));
    git.write("old.md", format!("{a}\n"));
    git.commit("first");
    git.run(&["mv", "old.md", "new.md"]);
    git.write("new.md", format!("{a}\n\n{b}\n"));
    git.commit("renamed, a paragraph added");
    index(home.path(), dir.path(), &ix, &["--history", "git"]);
    let d = diff(home.path(), dir.path(), &ix, "new.md", &[]);
    assert_eq!(
        d["predecessor"]["path"], "new.md",
        "its versions moved: {d}"
    );
    assert_eq!(d["predecessor"]["version"], 1);
    assert_eq!(d["predecessor"]["how"], "renamed");
    assert_eq!(d["predecessor"]["renamed_from"]["path"], "old.md");
    assert_eq!(d["predecessor"]["commit"]["subject"], "first");
    check(&d, &format!("{a}\n"), &format!("{a}\n\n{b}\n"));
    let (root, i) = (dir.path().to_str().unwrap(), ix.to_str().unwrap());
    let explained = stdout_of(home.path(), &["explain", root, "new.md", "--index", i]);
    assert!(explained.contains("named old.md then"), "{explained}");

    // In the folder: a move the index follows by the file's identity.
    std::fs::rename(dir.path().join("new.md"), dir.path().join("moved.md")).unwrap();
    std::fs::write(
        dir.path().join("moved.md"),
        format!("{a}\n\n{b}\n\n{}\n", para(3, 20)),
    )
    .unwrap();
    let d = diff(home.path(), dir.path(), &ix, "moved.md", &[]);
    assert_eq!(d["version"], 3, "{d}");
    assert_eq!(d["predecessor"]["how"], "renamed");
    assert_eq!(d["predecessor"]["renamed_from"]["path"], "new.md");
    assert_eq!(
        (d["kept"].as_u64(), d["new"].as_u64()),
        (Some(100), Some(20))
    );
}

#[test]
fn hostile_names_and_texts_no_longer_kept_say_so() {
    let dir = TempDir::new("diff-hostile");
    let home = TempDir::new("diff-hostile-home");
    let ix = home.path().join("ix");
    let (root, i) = (dir.path().to_str().unwrap(), ix.to_str().unwrap());
    // An escape in a name: shown escaped, never raw.
    let (a, b) = (para(1, 30), para(2, 30));
    dir.write("v1/red\u{1b}[31m.md", format!("{a}\n"));
    dir.write("v2/red\u{1b}[31m.md", format!("{a}\n{b}\n"));
    // A binary predecessor is no document: the page has none.
    dir.write("v1/bin.md", b"\0\x01\x02binary\0\0");
    dir.write("v2/bin.md", format!("{b}\n"));
    index(home.path(), dir.path(), &ix, &["--order", "version"]);
    let shown = stdout_of(
        home.path(),
        &["diff", root, "v2/red\u{1b}[31m.md", "--index", i],
    );
    assert!(!shown.contains('\u{1b}'), "{shown:?}");
    assert!(shown.contains("since v1/red"), "{shown}");
    assert!(shown.contains("30 kept, 0 removed, 30 new"), "{shown}");
    let d = diff(home.path(), dir.path(), &ix, "v2/red\u{1b}[31m.md", &[]);
    assert_eq!(d["predecessor"]["path"], "v1/red\u{1b}[31m.md");
    let d = diff(home.path(), dir.path(), &ix, "v2/bin.md", &[]);
    assert!(d["predecessor"].is_null(), "{d}");

    // A predecessor whose text the budget did not keep: one line saying so.
    let kept = TempDir::new("diff-budget");
    let ix2 = home.path().join("ix2");
    kept.write("a.md", format!("{a}\n"));
    let budget = ["--history-budget", "0"];
    index(home.path(), kept.path(), &ix2, &budget);
    kept.write("a.md", format!("{a}\n{b} and more\n"));
    index(home.path(), kept.path(), &ix2, &budget);
    let out = command(
        home.path(),
        &[
            "diff",
            kept.path().to_str().unwrap(),
            "a.md",
            "--index",
            ix2.to_str().unwrap(),
        ],
    )
    .output()
    .unwrap();
    let line = fails_with_one_line(&out);
    assert!(
        line.contains("the predecessor's text is no longer kept"),
        "{line}"
    );
    assert!(line.contains("a.md v1"), "{line}");
}

/// A Docusaurus layout as cloned: the next release in docs/, the earlier
/// ones under website/versioned_docs/, in the order the config lists. The
/// same page is the same path within its version's folder, at any depth.
#[test]
fn a_listed_order_takes_the_same_page_of_the_previous_version_at_any_depth() {
    let dir = TempDir::new("diff-listed");
    let home = TempDir::new("diff-listed-home");
    let ix = home.path().join("ix");
    let root = dir.path();
    let [a, b, c] = [1, 2, 3].map(|s| para(s, 60));
    let pages = [
        (
            "website/versioned_docs/version-29.7/CLI.md",
            format!("{a}\n"),
        ),
        (
            "website/versioned_docs/version-30.4/CLI.md",
            format!("{a}\n\n{b}\n"),
        ),
        ("docs/CLI.md", format!("{b}\n\n{c}\n")),
    ];
    for (p, body) in &pages {
        let p = root.join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, body).unwrap();
    }
    let config = home.path().join("lineage.toml");
    std::fs::write(
        &config,
        "order = [\"website/versioned_docs/version-*\", \"docs\"]\n",
    )
    .unwrap();
    let cfg = ["--config", config.to_str().unwrap()];
    index(
        home.path(),
        root,
        &ix,
        &[&cfg[..], &["--history", "folder"]].concat(),
    );
    let d = diff(home.path(), root, &ix, "docs/CLI.md", &cfg);
    assert_eq!(d["predecessor"]["path"], pages[1].0, "{d}");
    assert_eq!(d["predecessor"]["how"], "folder");
    check(&d, &pages[1].1, &pages[2].1);
    let d = diff(home.path(), root, &ix, pages[1].0, &cfg);
    assert_eq!(d["predecessor"]["path"], pages[0].0, "{d}");
    let d = diff(home.path(), root, &ix, pages[0].0, &cfg);
    assert!(d["predecessor"].is_null(), "{d}");
}

/// A layout the version-folder rule does not read: a config's
/// `[[predecessor]]` rule names the page a first version follows; diff and
/// explain take it, the diff as the LCS says; a rule with more wildcards
/// in what it names than in its pattern is one line and exit 2.
#[test]
fn a_predecessor_rule_names_what_a_first_version_follows() {
    let dir = TempDir::new("diff-rule");
    let home = TempDir::new("diff-rule-home");
    let ix = home.path().join("ix");
    let (a, b) = (para(21, 60), para(22, 40));
    let old = format!("{a}\n\n{b}\n");
    let new = format!("{a}\n\n{}\n", para(23, 30));
    dir.write("old/guide.md", &old);
    dir.write("new/handbook/guide-v2.md", &new);
    let config = home.path().join("config.toml");
    std::fs::write(
        &config,
        "[[predecessor]]\npage = \"new/handbook/*-v2.md\"\nfollows = \"old/*.md\"\n",
    )
    .unwrap();
    let c = config.to_str().unwrap();
    index(home.path(), dir.path(), &ix, &["--order", "path"]);
    let page = "new/handbook/guide-v2.md";
    let without = diff(home.path(), dir.path(), &ix, page, &[]);
    assert!(without["predecessor"].is_null(), "{without}");
    let d = diff(home.path(), dir.path(), &ix, page, &["--config", c]);
    assert_eq!(d["predecessor"]["path"], "old/guide.md", "{d}");
    assert_eq!(d["predecessor"]["how"], "rule");
    check(&d, &old, &new);
    let (r, i) = (dir.path().to_str().unwrap(), ix.to_str().unwrap());
    let shown = stdout_of(
        home.path(),
        &["explain", r, page, "--index", i, "--config", c],
    );
    assert!(
        shown.contains(
            "predecessor: old/guide.md v1 (the page the config's [[predecessor]] rule names)"
        ),
        "{shown}"
    );
    std::fs::write(
        &config,
        "[[predecessor]]\npage = \"new/*.md\"\nfollows = \"old/*/*.md\"\n",
    )
    .unwrap();
    let out = command(home.path(), &["diff", r, page, "--index", i, "--config", c])
        .output()
        .unwrap();
    let line = fails_with_one_line(&out);
    assert!(line.contains("more wildcards"), "{line}");
}

/// The basis: after an edit to next/CLI.md, the diff against its
/// predecessor is the edit alone; `--basis folder` (or the folder's
/// `basis` in the config) compares it with the previous version folder's
/// page, as the LCS says; `--basis` with `--against` is refused.
#[test]
fn the_folder_basis_keeps_what_a_version_changed_against_the_one_before() {
    let dir = TempDir::new("diff-basis");
    let home = TempDir::new("diff-basis-home");
    let ix = home.path().join("ix");
    let root = dir.path();
    let [a, b, c, d] = [31, 32, 33, 34].map(|s| para(s, 50));
    let old = format!("{a}\n\n{b}\n");
    let first = format!("{a}\n\n{c}\n");
    let edited = format!("{a}\n\n{c}\n\n{d}\n");
    dir.write("30.4/CLI.md", &old);
    dir.write("next/CLI.md", &first);
    let v = ["--order", "version", "--history", "folder"];
    index(home.path(), root, &ix, &v);
    dir.write("next/CLI.md", &edited);
    index(home.path(), root, &ix, &v);
    let by_predecessor = diff(home.path(), root, &ix, "next/CLI.md", &[]);
    assert_eq!(by_predecessor["predecessor"]["path"], "next/CLI.md");
    check(&by_predecessor, &first, &edited);
    let by_folder = diff(
        home.path(),
        root,
        &ix,
        "next/CLI.md",
        &["--basis", "folder"],
    );
    assert_eq!(
        by_folder["predecessor"]["path"], "30.4/CLI.md",
        "{by_folder}"
    );
    assert_eq!(by_folder["predecessor"]["how"], "folder");
    check(&by_folder, &old, &edited);
    let config = home.path().join("config.toml");
    let folder = std::fs::canonicalize(root).unwrap();
    std::fs::write(
        &config,
        format!(
            "[folders.{:?}]\nbasis = \"folder\"\n",
            folder.to_str().unwrap()
        ),
    )
    .unwrap();
    let c = ["--config", config.to_str().unwrap()];
    let from_config = diff(home.path(), root, &ix, "next/CLI.md", &c);
    assert_eq!(from_config, by_folder);
    let flag_wins = diff(
        home.path(),
        root,
        &ix,
        "next/CLI.md",
        &[&c[..], &["--basis", "predecessor"]].concat(),
    );
    assert_eq!(flag_wins, by_predecessor);
    // With no git history there is no tag: the last release is the
    // previous version folder.
    let by_release = diff(
        home.path(),
        root,
        &ix,
        "next/CLI.md",
        &["--basis", "release"],
    );
    assert_eq!(by_release, by_folder);
    let (r, i) = (root.to_str().unwrap(), ix.to_str().unwrap());
    for bad in [
        &["--basis", "tag"][..],
        &["--basis", "folder", "--against", "30.4/CLI.md"],
    ] {
        let mut args = vec!["diff", r, "next/CLI.md", "--index", i];
        args.extend(bad);
        let out = command(home.path(), &args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
    }
}

#[test]
fn the_release_basis_is_the_page_at_the_newest_tag_before_it() {
    let dir = TempDir::new("diff-release");
    let home = TempDir::new("diff-release-home");
    let ix = home.path().join("ix");
    let git = lineage_testing::Git::init(dir.path());
    let p: Vec<String> = (41..47).map(|s| para(s, 40)).collect();
    let page = |n: usize| p[..n].join("\n\n") + "\n";
    git.write("a.md", page(1));
    git.commit("one");
    git.run(&["tag", "v1"]);
    git.write("a.md", page(2));
    git.commit("two");
    git.run(&["tag", "-a", "v2", "-m", "the second release"]);
    git.write("a.md", page(3));
    git.write("c.md", &p[5]);
    git.commit("three");
    git.run(&["tag", "nightly"]);
    git.run(&["mv", "a.md", "b.md"]);
    git.write("b.md", page(4));
    git.commit("four, renamed");
    git.write("b.md", page(5));
    let (root, i) = (dir.path().to_str().unwrap(), ix.to_str().unwrap());
    stdout_of(
        home.path(),
        &["index", root, "--index", i, "--history", "git"],
    );
    let release = ["--basis", "release"];
    // Every tag is a release by default: the work tree's page against the
    // page at `nightly`, under its name then.
    let d = diff(home.path(), dir.path(), &ix, "b.md", &release);
    assert_eq!(d["predecessor"]["how"], "release", "{d}");
    assert_eq!(d["predecessor"]["release"]["tag"], "nightly");
    assert_eq!(
        d["predecessor"]["path"], "b.md",
        "its versions moved with it"
    );
    assert_eq!(d["predecessor"]["commit"]["subject"], "three");
    check(&d, &page(3), &page(5));
    // `release_tags` picks the releases: v2, annotated, peeled to its commit.
    let config = home.path().join("config.toml");
    std::fs::write(&config, "release_tags = \"v*\"\n").unwrap();
    let c = ["--config", config.to_str().unwrap()];
    let by_tags = |page: &str, more: &[&str]| {
        diff(
            home.path(),
            dir.path(),
            &ix,
            page,
            &[&c[..], &release, more].concat(),
        )
    };
    let d = by_tags("b.md", &[]);
    assert_eq!(d["predecessor"]["release"]["tag"], "v2", "{d}");
    let v2 = git.run(&["rev-parse", "v2^{commit}"]);
    assert_eq!(d["predecessor"]["release"]["commit"], v2.trim());
    check(&d, &page(2), &page(5));
    let text = stdout_of(
        home.path(),
        &[&["diff", root, "b.md", "--index", i][..], &c, &release].concat(),
    );
    assert!(text.contains("the page at release v2 ("), "{text}");
    // A version of a tagged commit is measured against the release before.
    let d = by_tags("b.md", &["--version", "2"]);
    assert_eq!(d["predecessor"]["release"]["tag"], "v1", "{d}");
    check(&d, &page(1), &page(2));
    // Before the first release, and a page the release did not have: all new.
    for page in ["b.md", "c.md"] {
        let d = by_tags(page, &["--version", "1"]);
        assert!(d["predecessor"].is_null(), "{page}: {d}");
        assert_eq!(d["new"], d["tokens"], "{page}: {d}");
    }
    // A tag made with no new commit is read at the next catch-up.
    git.run(&["tag", "v3"]);
    let d = by_tags("b.md", &[]);
    assert_eq!(d["predecessor"]["release"]["tag"], "v3", "{d}");
    check(&d, &page(4), &page(5));
}
