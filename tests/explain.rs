//! `lineage explain` end to end: the passages of a page and their origins'
//! words, from an index it brings up to date, of any version, deleted pages
//! too, and beside a running watcher that holds the index; and its reverse,
//! `lineage copies`: the live pages that took passages from a page.
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

mod common;

use std::process::{Command, Output};

use common::{TempDir, text};
use serde_json::Value;

fn lineage<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lineage"))
        .args(args)
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .output()
        .unwrap()
}

/// `lineage index ROOT --index IX --order path`: explain reads an index, it
/// does not make one.
fn index(root: &str, ix: &str) {
    let out = lineage(&["index", root, "--index", ix, "--order", "path"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn json<S: AsRef<std::ffi::OsStr> + std::fmt::Debug>(args: &[S]) -> Value {
    let out = lineage(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn explain_names_each_passage_and_its_origins_words_in_any_version() {
    let dir = TempDir::new("explain");
    let home = TempDir::new("explain-ix");
    let ix = home.path().join("ix");
    let (root, ix) = (dir.path().to_str().unwrap(), ix.to_str().unwrap());
    let a = text(1, 300);
    let words: Vec<&str> = a.split(' ').collect();
    let copied = words[100..200].join(" ");
    dir.write("a.md", &a);
    let b = format!("{} {copied} {}", text(2, 40), text(3, 40));
    dir.write("b.md", &b);
    index(root, ix);
    let base = ["explain", root, "--index", ix, "--order", "path", "--json"];
    let with = |more: &[&'static str]| -> Vec<String> {
        base.iter().chain(more).map(|s| s.to_string()).collect()
    };

    let e = json(&with(&["b.md"]));
    assert_eq!(e["format"], "lineage-explain/1");
    assert_eq!(
        (e["path"].as_str(), e["version"].as_u64()),
        (Some("b.md"), Some(1))
    );
    assert_eq!(e["status"], "live");
    let passages = e["passages"].as_array().unwrap();
    let from_a: Vec<&Value> = passages
        .iter()
        .filter(|p| p["origin"]["path"] == "a.md")
        .collect();
    assert_eq!(from_a.len(), 1, "{passages:?}");
    // The copied passage's words are a's words, in b and in a.
    let p = from_a[0];
    assert!(copied.contains(p["text"].as_str().unwrap()), "{p}");
    assert_eq!(p["text"], p["origin_text"]);
    assert!(p["text"].as_str().unwrap().split(' ').count() > 80);
    // The passages cover the page in order.
    let mut at = 0;
    for p in passages {
        assert_eq!(p["tokens"][0].as_u64(), Some(at));
        at = p["tokens"][1].as_u64().unwrap();
    }
    assert_eq!(at, 180);
    // New text has no origin.
    assert!(
        passages
            .iter()
            .any(|p| p["origin"].is_null() && p["origin_text"].is_null())
    );

    // a changes, then goes: its first version still shows its own words.
    dir.write("a.md", text(4, 50));
    json(&with(&["a.md"]));
    std::fs::remove_file(dir.path().join("a.md")).unwrap();
    let old = json(&with(&["a.md", "--version", "1", "--exact"]));
    assert_eq!(old["status"], "replaced");
    assert_eq!(old["exact"], true);
    let all: Vec<&str> = (old["passages"].as_array().unwrap().iter())
        .map(|p| p["text"].as_str().unwrap())
        .collect();
    assert_eq!(all.join(" "), a);
    let last = json(&with(&["a.md"]));
    assert_eq!(
        (last["version"].as_u64(), last["status"].as_str()),
        (Some(2), Some("deleted"))
    );

    // A path given from here names the same page; the readable form too.
    let b_path = dir.path().join("b.md");
    let out = lineage(&["explain", root, b_path.to_str().unwrap(), "--index", ix]);
    let text_out = String::from_utf8(out.stdout).unwrap();
    assert!(text_out.starts_with("b.md, version 1 (live)"), "{text_out}");
    assert!(text_out.contains("from a.md v1"), "{text_out}");

    // What is not there is one line and exit 2.
    for (args, says) in [
        (vec!["nope.md"], "not a document"),
        (vec!["b.md", "--version", "3"], "versions 1 to 1"),
    ] {
        let out = lineage(&with(&args));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.starts_with("lineage: ") && err.contains(says), "{err}");
    }
}

/// `lineage copies`: the live pages of other paths that took passages from
/// a page, newest first, credited to the version that first held them; a
/// copy deleted since is not one.
#[test]
fn copies_lists_the_live_pages_that_took_a_pages_passages_newest_first() {
    let dir = TempDir::new("copies");
    let home = TempDir::new("copies-ix");
    let ix = home.path().join("ix");
    let (root, ix) = (dir.path().to_str().unwrap(), ix.to_str().unwrap());
    let a = text(1, 300);
    let words: Vec<&str> = a.split(' ').collect();
    dir.write("a.md", &a);
    let b = format!(
        "{} {} {}",
        text(2, 40),
        words[100..200].join(" "),
        text(3, 40)
    );
    dir.write("b.md", &b);
    dir.write("c.md", format!("{} {}", words[..60].join(" "), text(4, 30)));
    dir.write("d.md", text(5, 100));
    dir.write(
        "e.md",
        format!("{} {}", text(6, 20), words[200..280].join(" ")),
    );
    index(root, ix);
    // a gains a paragraph (its copied words now credited to its first
    // version); e, which copied it, goes.
    dir.write("a.md", format!("{a} {}", text(7, 50)));
    std::fs::remove_file(dir.path().join("e.md")).unwrap();
    let copies = |path: &str, more: &[&str]| {
        let mut args = vec![
            "copies", root, path, "--index", ix, "--order", "path", "--json",
        ];
        args.extend_from_slice(more);
        json(&args)
    };

    let c = copies("a.md", &[]);
    assert_eq!(c["format"], "lineage-copies/1");
    assert_eq!(
        (c["path"].as_str(), c["version"].as_u64()),
        (Some("a.md"), Some(2))
    );
    let list = c["copies"].as_array().unwrap();
    let paths: Vec<&str> = list.iter().map(|c| c["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["c.md", "b.md"], "newest first, e gone");
    let b_copy = &list[1];
    let copied = b_copy["copied_tokens"].as_u64().unwrap();
    assert!((90..=100).contains(&copied), "{b_copy}");
    let share = 100.0 * copied as f64 / b_copy["tokens"].as_f64().unwrap();
    assert!((b_copy["percent"].as_f64().unwrap() - share).abs() < 1e-9);
    for p in b_copy["passages"].as_array().unwrap() {
        assert_eq!(p["origin"]["path"], "a.md");
        assert_eq!(p["origin"]["version"], 1);
        assert!(b.contains(p["text"].as_str().unwrap()), "{p}");
        assert_eq!(p["text"], p["origin_text"], "the same words in both pages");
        let [s, e] = [&p["tokens"][0], &p["tokens"][1]].map(|t| t.as_u64().unwrap());
        let o = p["origin_tokens"].as_array().unwrap();
        assert_eq!(o[1].as_u64().unwrap() - o[0].as_u64().unwrap(), e - s);
    }
    // Up to its first version: the same copies.
    assert_eq!(copies("a.md", &["--version", "1"])["copies"], c["copies"]);
    // A page nobody copies, and a copy (its words are credited to a).
    for page in ["d.md", "b.md"] {
        assert_eq!(copies(page, &[])["copies"], Value::Array(vec![]), "{page}");
    }

    let out = lineage(&["copies", root, "a.md", "--index", ix]);
    let says = String::from_utf8(out.stdout).unwrap();
    assert!(
        says.starts_with("a.md v2 (live): 2 other live pages copy from it, newest first"),
        "{says}"
    );
    assert!(says.contains("from a.md v1 tokens"), "{says}");
    let out = lineage(&["copies", root, "nope.md", "--index", ix]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("not a document"), "{err}");
}

#[test]
fn explain_reads_beside_a_watcher_that_holds_the_index() {
    let dir = TempDir::new("explain-watch");
    let home = TempDir::new("explain-watch-ix");
    let ix = home.path().join("ix");
    let (root, ixs) = (dir.path().to_str().unwrap(), ix.to_str().unwrap());
    dir.write("a.md", text(5, 100));
    let mut watch = Command::new(env!("CARGO_BIN_EXE_lineage"))
        .args(["watch", root, "--index", ixs, "--json"])
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The watcher's first line: a.md is in its index.
    let mut first = String::new();
    let stdout = watch.stdout.take().unwrap();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut first).unwrap();
    assert!(first.contains("a.md"), "{first}");
    let e = json(&["explain", root, "a.md", "--index", ixs, "--json"]);
    watch.kill().unwrap();
    let _ = watch.wait();
    assert_eq!(
        e["passages"][0]["text"]
            .as_str()
            .map(|t| t.split(' ').count()),
        Some(100)
    );
}

#[cfg(unix)]
#[test]
fn a_hostile_name_is_shown_escaped_and_found_by_its_bytes() {
    use std::os::unix::ffi::OsStrExt;
    let dir = TempDir::new("explain-names");
    let home = TempDir::new("explain-names-ix");
    let ix = home.path().join("ix");
    let evil = std::ffi::OsStr::from_bytes(b"evil\x1b]0;pwned\x07\xff.md");
    std::fs::write(dir.path().join(evil), text(6, 40)).unwrap();
    index(dir.path().to_str().unwrap(), ix.to_str().unwrap());
    let out = Command::new(env!("CARGO_BIN_EXE_lineage"))
        .arg("explain")
        .arg(dir.path())
        .arg(evil)
        .args(["--index", ix.to_str().unwrap()])
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.stdout.contains(&0x1b) && !out.stdout.contains(&0x07));
    let shown = String::from_utf8(out.stdout).unwrap();
    assert!(
        shown.starts_with("evil\\x1b]0;pwned\\x07\\xff.md, version 1"),
        "{shown}"
    );
}

/// `explain ROOT .` named no document and said so with an empty name
/// (`lineage:  is not a document`); the root itself is named as such.
#[test]
fn the_root_itself_is_not_a_document_and_is_named_so() {
    let dir = TempDir::new("explain-root");
    let home = TempDir::new("explain-root-ix");
    dir.write("a.md", text(4, 50));
    let root = dir.path().to_str().unwrap();
    let ix = home.path().join("ix");
    index(root, ix.to_str().unwrap());
    for path in [".", root] {
        let out = lineage(&["explain", root, path, "--index", ix.to_str().unwrap()]);
        let line = common::fails_with_one_line(&out);
        assert!(line.contains("the root folder itself"), "{path}: {line}");
    }
}

/// `explain --index DIR` where no index is (a typo, a first run) made a
/// whole new index there; it says so instead, and leaves nothing behind.
#[test]
fn explain_without_an_index_says_so_and_makes_none() {
    let dir = TempDir::new("explain-none");
    let home = TempDir::new("explain-none-ix");
    dir.write("a.md", text(7, 50));
    let root = dir.path().to_str().unwrap();
    let ix = home.path().join("no/such/ix");
    let out = lineage(&["explain", root, "a.md", "--index", ix.to_str().unwrap()]);
    let line = common::fails_with_one_line(&out);
    assert!(
        line.contains("no index of") && line.contains("` makes one"),
        "{line}"
    );
    assert!(!ix.exists() && !home.path().join("no").exists());
}

/// A command that reads forgets nothing: `explain` and `copies` take no
/// history budget, and a configured budget of 0 is not applied by their
/// catch-up (it dropped every kept text).
#[test]
fn a_query_never_forgets_history() {
    let dir = TempDir::new("query-keeps");
    let home = TempDir::new("query-keeps-ix");
    let ix = home.path().join("ix");
    let (root, ixs) = (dir.path().to_str().unwrap(), ix.to_str().unwrap());
    dir.write("a.md", text(5, 100));
    dir.write("b.md", text(6, 100));
    index(root, ixs);
    let kept = || json(&["index", root, "--index", ixs, "--json"])["texts_bytes"].clone();
    let before = kept();
    assert!(before.as_u64().unwrap() > 0, "{before}");
    let config = home.path().join("config.toml");
    std::fs::write(&config, "history_budget = \"0\"\n").unwrap();
    let cfg = config.to_str().unwrap();
    for cmd in ["explain", "copies"] {
        json(&[cmd, root, "a.md", "--index", ixs, "--config", cfg, "--json"]);
        let out = lineage(&[cmd, root, "a.md", "--index", ixs, "--history-budget", "0"]);
        assert_eq!(out.status.code(), Some(2), "{cmd} takes no budget");
    }
    assert_eq!(kept(), before);
}
