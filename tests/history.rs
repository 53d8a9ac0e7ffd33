//! A git repository's past as versions, driven through the binary on
//! repositories the tests make: the default inside a work tree (said once),
//! commits in `index --documents --json` and `explain`, a later index that
//! reads only the new commits, the work tree's changes as the newest
//! versions, and the bad inputs (no repository, an empty one, a shallow
//! clone, a submodule, a Git LFS pointer, a kill in the middle).
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

mod common;

use std::path::Path;
use std::process::Output;

use common::{TempDir, command, fails_with_one_line, text};
use lineage_testing::Git;

fn lineage(home: &Path, args: &[&str]) -> Output {
    command(home, args).output().unwrap()
}

fn ok(home: &Path, args: &[&str]) -> (String, String) {
    let out = lineage(home, args);
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(out.status.success(), "lineage {args:?}: {se}");
    (so, se)
}

/// `lineage index ROOT --index IX EXTRA…`, expected to succeed: stdout and
/// stderr.
fn index(home: &Path, root: &str, ix: &str, extra: &[&str]) -> (String, String) {
    let mut args = vec!["index", root, "--index", ix];
    args.extend_from_slice(extra);
    ok(home, &args)
}

fn documents(home: &Path, root: &Path, ix: &Path) -> serde_json::Value {
    let (root, ix) = (root.to_str().unwrap(), ix.to_str().unwrap());
    serde_json::from_str(&index(home, root, ix, &["--documents", "--json"]).0).unwrap()
}

/// Each version's path and commit, in the history's order.
fn stamps(docs: &serde_json::Value) -> Vec<(String, String)> {
    let history = docs["history"].as_array().unwrap();
    let field = |v: &serde_json::Value| v.as_str().unwrap().to_string();
    history
        .iter()
        .map(|v| (field(&v["path"]), field(&v["commit"]["id"])))
        .collect()
}

/// A repository of three commits: a page, its copy with words added, then
/// the copy renamed.
fn three_commits(t: &TempDir) -> (Git, Vec<String>) {
    let git = Git::init(&t.0.join("repo"));
    git.write("guide.md", text(1, 300));
    let a = git.commit("Write the guide");
    git.write("copy.md", format!("{} {}", text(1, 300), text(2, 40)));
    let b = git.commit("Copy it");
    git.run(&["mv", "copy.md", "tutorial.md"]);
    let c = git.commit("Rename the copy");
    (git, vec![a, b, c])
}

#[test]
fn inside_a_work_tree_the_history_is_read_said_once_and_every_answer_names_commits() {
    let t = TempDir::new("hist-e2e");
    let (git, commits) = three_commits(&t);
    let (root, ix) = (git.dir.clone(), t.0.join("ix"));
    let (r, i) = (root.to_str().unwrap(), ix.to_str().unwrap());
    let (out, err) = index(&t.0, r, i, &[]);
    assert!(
        err.contains("is in a git repository: reading its history"),
        "{err}"
    );
    assert!(err.contains("--history folder"), "{err}");
    assert!(
        out.contains(
            "git history: 3 commits read, 3 of them touching pages; 2 new versions, 1 renamed (their versions with them)"
        ),
        "{out}"
    );
    // Said on the first index only.
    let (out, err) = index(&t.0, r, i, &[]);
    assert!(!err.contains("git repository"), "{err}");
    assert!(
        out.contains(&format!("git history: up to date at {}", &commits[2][..7])),
        "{out}"
    );
    let docs = documents(&t.0, &root, &ix);
    let history = docs["history"].as_array().unwrap();
    // The renamed copy keeps its one version, of the commit that wrote it.
    assert_eq!(
        stamps(&docs),
        [("guide.md", &commits[0]), ("tutorial.md", &commits[1])]
            .map(|(p, c)| (p.into(), c.clone()))
    );
    assert_eq!(history[1]["commit"]["subject"], "Copy it");
    assert_eq!(history[1]["commit"]["author"], "Ada Lovelace");
    let (json, _) = ok(&t.0, &["explain", r, "tutorial.md", "--index", i, "--json"]);
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    let first = &json["origins"][0]["origin"];
    assert_eq!(first["path"], "guide.md");
    assert_eq!(first["commit"]["id"], commits[0].as_str());
    let (text_out, _) = ok(&t.0, &["explain", r, "tutorial.md", "--index", i]);
    let line = format!(
        "guide.md v1 ({} 2020-01-01 Ada Lovelace: Write the guide)",
        &commits[0][..7]
    );
    assert!(text_out.contains(&format!("from {line}")), "{text_out}");
}

#[test]
fn a_later_index_reads_the_new_commits_and_the_work_tree_is_the_newest_version() {
    let t = TempDir::new("hist-later");
    let (git, _) = three_commits(&t);
    let (root, ix) = (git.dir.clone(), t.0.join("ix"));
    let (r, i) = (root.to_str().unwrap(), ix.to_str().unwrap());
    index(&t.0, r, i, &[]);
    git.write("guide.md", format!("{} {}", text(1, 300), text(3, 50)));
    let d = git.commit("Grow the guide");
    // Uncommitted: the newest version, of no commit.
    git.write("tutorial.md", format!("{} {}", text(1, 300), text(4, 20)));
    let (out, _) = index(&t.0, r, i, &[]);
    assert!(
        out.contains("git history: 1 commits read, 1 of them touching pages; 1 new versions"),
        "{out}"
    );
    let docs = documents(&t.0, &root, &ix);
    let rows: Vec<_> = docs["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["path"].as_str().unwrap().to_string(),
                v["version"].as_u64().unwrap(),
                v["commit"]["id"].as_str().map(str::to_string),
            )
        })
        .collect();
    assert_eq!(rows[2], ("guide.md".into(), 2, Some(d)));
    assert_eq!(rows[3], ("tutorial.md".into(), 2, None));
}

#[test]
fn history_folder_reads_the_files_alone_and_an_index_keeps_its_source() {
    let t = TempDir::new("hist-folder");
    let (git, _) = three_commits(&t);
    let (root, ix) = (git.dir.clone(), t.0.join("ix"));
    let (r, i) = (root.to_str().unwrap(), ix.to_str().unwrap());
    let (out, err) = index(&t.0, r, i, &["--history", "folder"]);
    assert!(
        !out.contains("git history") && !err.contains("git"),
        "{out}{err}"
    );
    let docs = documents(&t.0, &root, &ix);
    assert!(docs["history"][0].get("commit").is_none(), "{docs}");
    assert_eq!(docs["versions"], 2);
    // Asked for the other source: one line, the command that rebuilds.
    let e = fails_with_one_line(&lineage(
        &t.0,
        &["index", r, "--index", i, "--history", "git"],
    ));
    assert!(e.contains("--history folder") && e.contains("rm -r"), "{e}");
}

#[test]
fn bad_repositories_get_one_line_and_lose_nothing() {
    let t = TempDir::new("hist-bad");
    // Not a repository, asked for git.
    let plain = t.0.join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    std::fs::write(plain.join("a.md"), text(1, 100)).unwrap();
    let p = plain.to_str().unwrap();
    let ix = t.0.join("ix-plain");
    let e = fails_with_one_line(&lineage(
        &t.0,
        &[
            "index",
            p,
            "--index",
            ix.to_str().unwrap(),
            "--history",
            "git",
        ],
    ));
    assert!(e.contains("is not in a git repository"), "{e}");
    // An empty repository: the files, no history yet.
    let empty = Git::init(&t.0.join("empty"));
    empty.write("a.md", text(2, 100));
    let ix = t.0.join("ix-empty");
    let (out, _) = index(&t.0, empty.dir.to_str().unwrap(), ix.to_str().unwrap(), &[]);
    assert!(out.contains("git history: none yet"), "{out}");
    assert!(out.contains("1 documents"), "{out}");
    // A submodule and a Git LFS pointer: skipped, each with its reason.
    let (git, _) = three_commits(&t);
    git.write(
        "big.md",
        "version https://git-lfs.github.com/spec/v1\noid sha256:4d7a\nsize 12345\n",
    );
    let sub = Git::init(&t.0.join("sub"));
    sub.write("s.md", text(5, 50));
    let s = sub.commit("sub");
    // A gitlink with no folder in the work tree (an uninitialized
    // submodule), committed as staged (`add -A` would drop it).
    git.run(&[
        "update-index",
        "--add",
        "--cacheinfo",
        &format!("160000,{s},vendor.md"),
    ]);
    git.run(&["add", "big.md"]);
    git.run(&["commit", "-q", "-m", "A pointer and a submodule"]);
    let ix = t.0.join("ix-skips");
    let (out, err) = index(&t.0, git.dir.to_str().unwrap(), ix.to_str().unwrap(), &[]);
    assert!(
        err.contains("big.md") && err.contains("Git LFS pointer"),
        "{err}"
    );
    assert!(
        err.contains("vendor.md") && err.contains("submodule"),
        "{err}"
    );
    assert!(out.contains("2 documents"), "{out}");
}

#[test]
fn a_shallow_clone_starts_at_its_boundary_said_once() {
    let t = TempDir::new("hist-shallow");
    let (git, commits) = three_commits(&t);
    let clone = t.0.join("clone");
    let url = format!("file://{}", git.dir.display());
    git.run(&["clone", "-q", "--depth", "1", &url, clone.to_str().unwrap()]);
    let ix = t.0.join("ix");
    let (out, err) = index(&t.0, clone.to_str().unwrap(), ix.to_str().unwrap(), &[]);
    assert!(err.contains("shallow clone"), "{err}");
    assert!(out.contains("1 commits read"), "{out}");
    let docs = documents(&t.0, &clone, &ix);
    assert_eq!(docs["history"][0]["commit"]["id"], commits[2].as_str());
}

/// kill -9 while the history is read: the next index opens, goes on from
/// the last commit recorded whole, and ends with the index an uninterrupted
/// import makes.
#[test]
fn a_kill_in_the_middle_of_an_import_resumes_to_the_same_index() {
    let t = TempDir::new("hist-kill");
    let git = Git::init(&t.0.join("repo"));
    for c in 0..120u64 {
        for p in 0..3 {
            git.write(&format!("p{}.md", (c + p) % 40), text(c * 7 + p, 400));
        }
        git.commit(&format!("c{c}"));
    }
    let root = git.dir.to_str().unwrap().to_string();
    let whole = t.0.join("whole");
    index(&t.0, &root, whole.to_str().unwrap(), &[]);
    let expected = documents(&t.0, &git.dir, &whole);
    let mut killed = 0;
    for delay_ms in [30, 120, 400] {
        let ix = t.0.join(format!("killed-{delay_ms}"));
        let mut child = command(&t.0, &["index", &root, "--index", ix.to_str().unwrap()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let _ = child.kill();
        use std::os::unix::process::ExitStatusExt;
        killed += u32::from(child.wait().unwrap().signal() == Some(9));
        let mut got = documents(&t.0, &git.dir, &ix);
        let mut want = expected.clone();
        for v in [&mut got, &mut want] {
            let o = v.as_object_mut().unwrap();
            // What this run did, not what the index holds.
            for k in [
                "files_read",
                "run",
                "git_history",
                "texts_bytes",
                "history_bytes",
            ] {
                o.remove(k);
            }
            for row in o["history"].as_array_mut().unwrap() {
                row.as_object_mut().unwrap().remove("seen_ms");
            }
        }
        assert_eq!(got, want, "killed after {delay_ms} ms");
    }
    assert!(killed > 0, "every run ended before its kill");
}

/// `--since` starts a first import later, at a commit or a date; the pages
/// there are all first versions. A revision not in the history is one line.
#[test]
fn since_a_commit_or_a_date_starts_the_history_there() {
    let t = TempDir::new("hist-since");
    let (git, commits) = three_commits(&t);
    let r = git.dir.to_str().unwrap().to_string();
    // Commits are a day apart from 2020-01-01: the second is 2020-01-02's.
    for (since, tag) in [
        (commits[1].clone(), "rev"),
        ("2020-01-02".to_string(), "date"),
    ] {
        let ix = t.0.join(format!("ix-{tag}"));
        let (out, _) = index(&t.0, &r, ix.to_str().unwrap(), &["--since", &since]);
        assert!(out.contains("git history: 2 commits read"), "{tag}: {out}");
        let docs = documents(&t.0, &git.dir, &ix);
        assert_eq!(
            stamps(&docs),
            // Within the commit by path: copy.md (now tutorial.md) first.
            ["tutorial.md", "guide.md"].map(|p| (p.into(), commits[1].clone())),
            "{tag}"
        );
    }
    let ix = t.0.join("ix-bad");
    let e = fails_with_one_line(&lineage(
        &t.0,
        &[
            "index",
            &r,
            "--index",
            ix.to_str().unwrap(),
            "--since",
            "no-such-rev",
        ],
    ));
    assert!(e.contains("--since no-such-rev"), "{e}");
}

/// A corrupt object ends the import with one line naming it, and the
/// index stays at the last commit read whole: the page is never taken out
/// of its order from the work tree.
/// Spoil the loose object `blob` of `git` (git writes it read-only).
fn spoil(git: &Git, blob: &str) {
    let loose = git
        .dir
        .join(".git/objects")
        .join(&blob[..2])
        .join(&blob[2..]);
    let mut perms = std::fs::metadata(&loose).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(&loose, perms).unwrap();
    std::fs::write(&loose, b"garbage").unwrap();
}

#[test]
fn a_corrupt_object_is_named_and_the_index_stays_as_it_was() {
    let t = TempDir::new("hist-corrupt");
    let (git, commits) = three_commits(&t);
    git.write("late.md", text(9, 80));
    git.commit("A late page");
    let blob = git.run(&["rev-parse", "HEAD:late.md"]).trim().to_string();
    spoil(&git, &blob);
    let ix = t.0.join("ix");
    let r = git.dir.to_str().unwrap();
    let out = lineage(&t.0, &["index", r, "--index", ix.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&blob), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    // What was read whole stays: the versions of the three commits before
    // (the rename made none), and nothing of the late page's.
    let db = rusqlite::Connection::open(ix.join("index.db")).unwrap();
    let mut q = db
        .prepare(
            "SELECT c.oid FROM version_commits v JOIN commits c ON c.seq = v.seq ORDER BY v.id",
        )
        .unwrap();
    let stamped: Vec<String> = q
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(stamped, [commits[0].clone(), commits[1].clone()]);
    let late: i64 = db
        .query_row(
            "SELECT count(*) FROM versions WHERE path = CAST('late.md' AS BLOB)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(
        late, 0,
        "the late page is not taken from the work tree out of its order"
    );
}

/// A page whose name is not UTF-8 is a page of the history too, named as
/// the walk names it: the work tree's file is the same document, not a
/// second one.
#[test]
fn a_name_that_is_not_utf8_is_the_same_page_in_the_history_and_the_folder() {
    use std::os::unix::ffi::OsStrExt;
    let t = TempDir::new("hist-bytes");
    let git = Git::init(&t.0.join("repo"));
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9 \x1b.md");
    std::fs::write(git.dir.join(name), text(1, 100)).unwrap();
    let c = git.commit("A page with a Latin-1 name");
    let ix = t.0.join("ix");
    let docs = documents(&t.0, &git.dir, &ix);
    let history = docs["history"].as_array().unwrap();
    assert_eq!(history.len(), 1, "{docs}");
    assert_eq!(history[0]["commit"]["id"], c.as_str());
    assert!(history[0]["path_hex"].is_string(), "{docs}");
    assert_eq!(docs["versions"], 1);
}

/// A commit made while `watch` runs (here one that leaves the work tree as
/// it was, so no file event can bring its page first) is read at the next
/// sync and stamped with its commit, and the watcher says its version.
#[test]
fn a_commit_made_while_watching_is_read_as_its_version() {
    let t = TempDir::new("hist-watch");
    let (git, _) = three_commits(&t);
    let ix = t.0.join("ix");
    let w = common::Watch::start(&git.dir, &ix, &[]);
    // Its history is read as it starts (no line: the lines are of changes
    // after the start), before it watches.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let versions = || -> i64 {
        rusqlite::Connection::open(ix.join("index.db"))
            .and_then(|db| db.query_row("SELECT count(*) FROM versions", [], |r| r.get(0)))
            .unwrap_or(0)
    };
    while versions() < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "no history read within 30 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // A new content of guide.md committed through the index alone.
    let body = format!("{} {}", text(1, 300), text(7, 60));
    std::fs::write(t.0.join("new-guide"), &body).unwrap();
    let blob = git.run(&["hash-object", "-w", t.0.join("new-guide").to_str().unwrap()]);
    git.run(&[
        "update-index",
        "--cacheinfo",
        &format!("100644,{},guide.md", blob.trim()),
    ]);
    git.run(&["commit", "-q", "-m", "Grow the guide"]);
    let head = git.run(&["rev-parse", "HEAD"]).trim().to_string();
    // The next rescan (every second here) reads it.
    let v = w.expect("the commit's version", |v| {
        v["event"] == "version" && v["path"] == "guide.md" && v["version"] == 2
    });
    assert!(v["fresh_percent"].as_f64().unwrap() < 50.0, "{v}");
    drop(w);
    let db = rusqlite::Connection::open(ix.join("index.db")).unwrap();
    let stamped: String = db
        .query_row(
            "SELECT c.oid FROM version_commits v JOIN commits c ON c.seq = v.seq
             ORDER BY v.id DESC LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(stamped, head);
}

/// A root that is a folder of the work tree does not see `.git` change:
/// a commit of a page saved before (no file changes) is read at the next
/// tick, and the page's version, read from its file, is the commit's.
#[test]
fn a_commit_of_a_saved_page_stamps_its_version_where_git_is_not_watched() {
    let t = TempDir::new("hist-watch-sub");
    let git = Git::init(&t.0.join("repo"));
    git.write("docs/guide.md", text(1, 300));
    git.commit("Write the guide");
    let (docs, ix) = (git.dir.join("docs"), t.0.join("ix"));
    let w = common::Watch::start(&docs, &ix, &[]);
    // Saved: a version of the file, no commit yet.
    std::fs::write(docs.join("notes.md"), text(3, 200)).unwrap();
    w.expect("the saved page's version", |v| {
        v["event"] == "version" && v["path"] == "notes.md"
    });
    git.run(&["add", "docs/notes.md"]);
    git.run(&["commit", "-q", "-m", "Add notes"]);
    let head = git.run(&["rev-parse", "HEAD"]).trim().to_string();
    let stamp = || -> Option<String> {
        let db = rusqlite::Connection::open(ix.join("index.db")).ok()?;
        db.query_row(
            "SELECT c.oid FROM versions v JOIN version_commits s ON s.id = v.id
             JOIN commits c ON c.seq = s.seq WHERE v.path = CAST('notes.md' AS BLOB)",
            [],
            |r| r.get(0),
        )
        .ok()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while stamp().as_deref() != Some(head.as_str()) {
        assert!(
            std::time::Instant::now() < deadline,
            "the commit was not read within 20 s: {:?}",
            stamp()
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    drop(w);
    let db = rusqlite::Connection::open(ix.join("index.db")).unwrap();
    let notes: i64 = db
        .query_row(
            "SELECT count(*) FROM versions WHERE path = CAST('notes.md' AS BLOB)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(
        notes, 1,
        "the commit is the saved version, not a second one"
    );
}

/// A commit whose object is corrupt, made while watching: said once (not
/// at every sync or tick), and the files are read all the same.
#[test]
fn a_corrupt_commit_under_watch_is_said_once_and_the_files_go_on() {
    let t = TempDir::new("hist-watch-corrupt");
    let git = Git::init(&t.0.join("repo"));
    git.write("a.md", text(1, 300));
    git.commit("Write a");
    let ix = t.0.join("ix");
    let w = common::Watch::start(&git.dir, &ix, &[]);
    std::thread::sleep(std::time::Duration::from_millis(1500));
    // A commit of a page that is in no file, its blob then spoilt.
    std::fs::write(t.0.join("late"), text(9, 80)).unwrap();
    let blob = git.run(&["hash-object", "-w", t.0.join("late").to_str().unwrap()]);
    let blob = blob.trim();
    git.run(&[
        "update-index",
        "--add",
        "--cacheinfo",
        &format!("100644,{blob},late.md"),
    ]);
    git.run(&["commit", "-q", "-m", "A late page"]);
    spoil(&git, blob);
    let e = w.expect("the corrupt object's error", |v| v["event"] == "error");
    assert!(e["message"].as_str().unwrap().contains(blob), "{e}");
    std::fs::write(
        git.dir.join("a.md"),
        format!("{} {}", text(1, 300), text(4, 20)),
    )
    .unwrap();
    w.expect("a.md's new version", |v| {
        v["event"] == "version" && v["path"] == "a.md"
    });
    // Ticks and syncs (every second here) go by without a word more.
    std::thread::sleep(std::time::Duration::from_secs(3));
    std::fs::write(git.dir.join("b.md"), text(5, 100)).unwrap();
    // Every line since a.md's version, b.md's among them.
    let seen = w.until_quiet(
        std::time::Duration::from_secs(2),
        std::time::Duration::from_secs(20),
    );
    assert!(
        seen.iter()
            .any(|v| v["event"] == "version" && v["path"] == "b.md"),
        "{seen:?}"
    );
    let again: Vec<_> = seen.iter().filter(|v| v["event"] == "error").collect();
    assert!(again.is_empty(), "said again: {again:?}");
}

/// `index --json` says what the history's read did, as its text does; an
/// index of the folder's files has no `git_history`.
#[test]
fn index_json_counts_the_history_read() {
    let t = TempDir::new("hist-json");
    let (git, commits) = three_commits(&t);
    let (r, ix) = (git.dir.to_str().unwrap(), t.0.join("ix"));
    let json = |ix: &Path, extra: &[&str]| -> serde_json::Value {
        let mut args = vec!["--json"];
        args.extend_from_slice(extra);
        serde_json::from_str(&index(&t.0, r, ix.to_str().unwrap(), &args).0).unwrap()
    };
    let first = json(&ix, &[]);
    let h = &first["git_history"];
    assert_eq!(
        (h["commits"].as_u64(), h["touching_pages"].as_u64()),
        (Some(3), Some(3)),
        "{first}"
    );
    assert_eq!(
        (h["new_versions"].as_u64(), h["renamed"].as_u64()),
        (Some(2), Some(1)),
        "{first}"
    );
    assert_eq!(h["head"], commits[2].as_str());
    assert_eq!(
        first["run"]["new_versions"], 0,
        "the work tree is the last commit"
    );
    let again = json(&ix, &[]);
    assert_eq!(again["git_history"]["commits"], 0, "{again}");
    let folder = json(&t.0.join("ix-folder"), &["--history", "folder"]);
    assert!(folder.get("git_history").is_none(), "{folder}");
    assert_eq!(folder["run"]["new_versions"], 2, "{folder}");
}
