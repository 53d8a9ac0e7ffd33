//! `lineage explain` end to end: the passages of a page and their origins'
//! words, from an index it brings up to date, of any version, deleted pages
//! too, and beside a running watcher that holds the index; its reverse,
//! `lineage copies`: the live pages that took passages from a page; and
//! `lineage shared`: the live pages that carry a page's text.
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
    assert_eq!(e["format"], "lineage-explain/2");
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
/// a page, most copied first (newest first with --newest), credited to the
/// version that first held them; a copy deleted since is not one; one line
/// per page, passages on request, and a page that took only passages
/// shorter than a shingle folded into a count (issue 41 item 4).
#[test]
fn copies_lists_the_live_pages_that_took_a_pages_passages_most_first() {
    let dir = TempDir::new("copies");
    let home = TempDir::new("copies-ix");
    let ix = home.path().join("ix");
    let (root, ix) = (dir.path().to_str().unwrap(), ix.to_str().unwrap());
    let a = text(1, 300);
    let words: Vec<&str> = a.split(' ').collect();
    dir.write("a.md", &a);
    // ab holds `zzz` and a's first 7 words: f's shingle `zzz` + 7 words is
    // ab's, the next (a's first 8 words) a's, which is left one token of f.
    dir.write("ab.md", format!("zzz {}", words[..7].join(" ")));
    let b = format!(
        "{} {} {}",
        text(2, 40),
        words[100..200].join(" "),
        text(3, 40)
    );
    dir.write("b.md", &b);
    dir.write(
        "c.md",
        format!("{} {}", words[..60].join(" "), text(4, 100)),
    );
    dir.write("d.md", text(5, 100));
    dir.write(
        "e.md",
        format!("{} {}", text(6, 20), words[200..280].join(" ")),
    );
    dir.write(
        "f.md",
        format!(
            "{} zzz {} {}",
            text(8, 20),
            words[..8].join(" "),
            text(9, 20)
        ),
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
    let paths = |c: &Value| -> Vec<String> {
        (c["copies"].as_array().unwrap().iter())
            .map(|c| c["path"].as_str().unwrap().to_string())
            .collect()
    };

    let c = copies("a.md", &[]);
    assert_eq!(c["format"], "lineage-copies/2");
    assert_eq!(
        (c["path"].as_str(), c["version"].as_u64()),
        (Some("a.md"), Some(2))
    );
    // b took 100 of 180 tokens, c 60 of 160, f one of 49: by share, and
    // the order they came in with --newest; e gone.
    assert_eq!(paths(&c), ["b.md", "c.md", "f.md"], "most copied first");
    assert_eq!(
        paths(&copies("a.md", &["--newest"])),
        ["f.md", "c.md", "b.md"]
    );
    let list = c["copies"].as_array().unwrap();
    let b_copy = &list[0];
    let copied = b_copy["copied_tokens"].as_u64().unwrap();
    assert!((90..=100).contains(&copied), "{b_copy}");
    let share = 100.0 * copied as f64 / b_copy["tokens"].as_f64().unwrap();
    assert!((b_copy["percent"].as_f64().unwrap() - share).abs() < 1e-9);
    assert_eq!(b_copy["short_passages"], 0);
    for p in b_copy["passages"].as_array().unwrap() {
        assert_eq!(p["origin"]["path"], "a.md");
        assert_eq!(p["origin"]["version"], 1);
        assert!(b.contains(p["text"].as_str().unwrap()), "{p}");
        assert_eq!(p["text"], p["origin_text"], "the same words in both pages");
        let [s, e] = [&p["tokens"][0], &p["tokens"][1]].map(|t| t.as_u64().unwrap());
        let o = p["origin_tokens"].as_array().unwrap();
        assert_eq!(o[1].as_u64().unwrap() - o[0].as_u64().unwrap(), e - s);
    }
    // JSON keeps f's one-token passage (a's eighth word).
    let f = &list[2];
    assert_eq!(
        (f["copied_tokens"].as_u64(), f["short_passages"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(f["passages"][0]["text"], words[7]);
    // Up to its first version: the same copies.
    assert_eq!(copies("a.md", &["--version", "1"])["copies"], c["copies"]);
    // A page nobody copies, and a copy (its words are credited to a).
    for page in ["d.md", "b.md"] {
        assert_eq!(copies(page, &[])["copies"], Value::Array(vec![]), "{page}");
    }

    // Text: a line per page, f folded into a count; passages on request.
    let text = |more: &[&str]| {
        let mut args = vec!["copies", root, "a.md", "--index", ix, "--order", "path"];
        args.extend_from_slice(more);
        let out = lineage(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let says = text(&[]);
    let lines: Vec<&str> = says.lines().collect();
    assert_eq!(lines.len(), 4, "{says}");
    assert_eq!(
        lines[0],
        "a.md v2 (live): 3 other live pages copy from it, most copied first"
    );
    assert!(
        lines[1].contains("b.md v1  (") && lines[2].contains("c.md v1  ("),
        "{says}"
    );
    assert_eq!(
        lines[3],
        "  and 1 page copying only passages shorter than a shingle (8 tokens; --json lists them)"
    );
    assert!(!says.contains("from a.md v1 tokens"), "{says}");
    let says = text(&["--passages"]);
    assert!(says.contains("from a.md v1 tokens"), "{says}");
    assert!(says.contains(&words[100..110].join(" ")), "{says}");
    assert!(text(&["--newest"]).contains("copy from it, newest first"));
    let out = lineage(&["copies", root, "nope.md", "--index", ix]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("not a document"), "{err}");
}

/// `lineage shared`: every live page of another path carrying the page's
/// text, whoever had it first (issue 41 item 5). B and C each copy the same
/// paragraph of A and neither copies the other: `copies B` lists neither
/// A nor C, `shared B` lists both with the paragraph on both sides, and D,
/// which copies B's own words, below them; E, deleted, is not a page.
#[test]
fn shared_lists_every_live_page_that_carries_a_pages_text() {
    let dir = TempDir::new("shared");
    let home = TempDir::new("shared-ix");
    let ix = home.path().join("ix");
    let (root, ix) = (dir.path().to_str().unwrap(), ix.to_str().unwrap());
    let a = text(11, 200);
    let paragraph = a.split(' ').skip(50).take(60).collect::<Vec<_>>().join(" ");
    let own = text(13, 40);
    dir.write("a.md", &a);
    let b = format!("{} {paragraph} {own}", text(12, 40));
    dir.write("b.md", &b);
    dir.write(
        "c.md",
        format!("{} {paragraph} {}", text(14, 30), text(15, 20)),
    );
    let own20 = own.split(' ').take(20).collect::<Vec<_>>().join(" ");
    dir.write("d.md", format!("{} {own20}", text(16, 50)));
    dir.write("e.md", format!("{paragraph} {}", text(17, 10)));
    index(root, ix);
    std::fs::remove_file(dir.path().join("e.md")).unwrap();
    let run = |cmd: &str, more: &[&str]| {
        let mut args = vec![
            cmd, root, "b.md", "--index", ix, "--order", "path", "--json",
        ];
        args.extend_from_slice(more);
        json(&args)
    };
    let names = |v: &Value, key: &str| -> Vec<String> {
        (v[key].as_array().unwrap().iter())
            .map(|c| c["path"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        names(&run("copies", &[]), "copies"),
        ["d.md"],
        "a and c copy a, not b"
    );

    let s = run("shared", &[]);
    assert_eq!(s["format"], "lineage-shared/1");
    assert_eq!(
        (s["path"].as_str(), s["version"].as_u64()),
        (Some("b.md"), Some(1))
    );
    assert_eq!(s["tokens"], 140);
    assert_eq!(s["params"]["k"], 8);
    // a and c carry 60 of b's 140 tokens (equal: by path), d 20.
    assert_eq!(names(&s, "shared"), ["a.md", "c.md", "d.md"]);
    let list = s["shared"].as_array().unwrap();
    for (page, tokens, there) in [("a.md", 200, 50), ("c.md", 110, 30)] {
        let p = list.iter().find(|p| p["path"] == page).unwrap();
        assert_eq!(
            (p["version"].as_u64(), p["tokens"].as_u64()),
            (Some(1), Some(tokens))
        );
        assert_eq!(
            (p["page_tokens"].as_u64(), p["shared_tokens"].as_u64()),
            (Some(60), Some(60))
        );
        assert!((p["page_percent"].as_f64().unwrap() - 100.0 * 60.0 / 140.0).abs() < 1e-9);
        assert!((p["percent"].as_f64().unwrap() - 100.0 * 60.0 / tokens as f64).abs() < 1e-9);
        let passages = p["passages"].as_array().unwrap();
        assert_eq!(passages.len(), 1, "{p}");
        let q = &passages[0];
        assert_eq!(q["page_tokens"], serde_json::json!([40, 100]), "{q}");
        assert_eq!(q["tokens"], serde_json::json!([there, there + 60]), "{q}");
        assert_eq!(
            (q["text"].as_str(), q["page_text"].as_str()),
            (Some(&*paragraph), Some(&*paragraph))
        );
    }
    let d = &list[2];
    assert_eq!(d["page_tokens"], 20);
    // `params` is an object, scan's but for the order an index does not
    // keep, the same in explain, copies and shared (issue 41 item 9).
    let scan = json(&["scan", root, "--order", "path", "--json"]);
    let params = s["params"].as_object().unwrap();
    assert_eq!(params.len() + 1, scan["params"].as_object().unwrap().len());
    for (key, value) in params {
        assert_eq!(&scan["params"][key], value, "{key}");
    }
    assert_eq!(run("copies", &[])["params"], s["params"]);
    assert_eq!(run("explain", &[])["params"], s["params"]);
    assert_eq!(d["passages"][0]["page_text"].as_str(), Some(&*own20));

    // Text: a line per page; the passages with --passages.
    let say = |more: &[&str]| {
        let mut args = vec!["shared", root, "b.md", "--index", ix];
        args.extend_from_slice(more);
        let out = lineage(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let says = say(&[]);
    assert_eq!(says.lines().count(), 4, "{says}");
    assert!(
        says.starts_with("b.md v1 (live, 140 tokens): 3 other live pages share its text, most of it first\n  42.9 %  a.md v1  (60 tokens here in 1 passage; 30.0 % of its 200 tokens)\n"),
        "{says}"
    );
    let says = say(&["--passages"]);
    assert!(
        says.contains("    tokens 40–100 here, 30–90 there\n"),
        "{says}"
    );
    assert!(says.contains(&format!("      │ {paragraph}\n")), "{says}");
    // A page nobody shares with.
    dir.write("z.md", text(18, 30));
    let z = json(&["shared", root, "z.md", "--index", ix, "--json"]);
    assert_eq!(z["shared"], Value::Array(vec![]));
}

/// A page name that is not in the index says which one was meant (issue
/// 41 item 9): a typo, or the folder left out.
#[test]
fn a_wrong_page_name_says_which_was_meant() {
    let dir = TempDir::new("did-you-mean");
    let home = TempDir::new("did-you-mean-ix");
    let ix = home.path().join("ix");
    let (root, ix) = (dir.path().to_str().unwrap(), ix.to_str().unwrap());
    dir.write("v2.40/git-commit.txt", text(1, 50));
    dir.write("v2.40/git-config.txt", text(2, 50));
    dir.write("notes.md", text(3, 50));
    index(root, ix);
    for (cmd, name, meant) in [
        (
            "explain",
            "v2.40/git-comit.txt",
            "; did you mean v2.40/git-commit.txt? (",
        ),
        (
            "copies",
            "git-config.txt",
            "; did you mean v2.40/git-config.txt? (",
        ),
        ("shared", "note.md", "; did you mean notes.md? ("),
    ] {
        let out = lineage(&[cmd, root, name, "--index", ix]);
        let line = common::fails_with_one_line(&out);
        assert!(line.contains(meant), "{cmd} {name}: {line}");
    }
    let out = lineage(&["explain", root, "elsewhere/unknown.md", "--index", ix]);
    let line = common::fails_with_one_line(&out);
    assert!(!line.contains("did you mean"), "{line}");
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

/// A command that reads forgets nothing: `explain`, `copies` and `shared` take no
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
    for cmd in ["explain", "copies", "shared"] {
        json(&[cmd, root, "a.md", "--index", ixs, "--config", cfg, "--json"]);
        let out = lineage(&[cmd, root, "a.md", "--index", ixs, "--history-budget", "0"]);
        assert_eq!(out.status.code(), Some(2), "{cmd} takes no budget");
    }
    assert_eq!(kept(), before);
}
