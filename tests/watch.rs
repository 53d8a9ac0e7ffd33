//! `lineage watch ROOT --json` against real files in a temp folder: the
//! binary runs as a person would run it, and the test edits the folder.
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

mod common;

use common::{TempDir, Watch};
use serde_json::Value;

const SOURCE: &str = "Lineage watches a folder of documents and tells, for every passage, \
which earlier document it was copied from and which of its words are new. It keeps a \
fixed-size table of fingerprints so that memory stays bounded however large the folder grows.";

fn event<'a>(v: &'a Value, kind: &str, path: &str) -> Option<&'a Value> {
    (v["event"] == kind && v["path"] == path).then_some(v)
}

/// A temp folder with `docs/guide.md` (SOURCE): the folder and `docs`.
fn guide_folder(tag: &str) -> (TempDir, std::path::PathBuf) {
    let dir = TempDir::new(tag);
    let root = dir.path().join("docs");
    dir.write("docs/guide.md", SOURCE);
    (dir, root)
}

/// Set `p`'s permission bits.
#[cfg(target_os = "linux")]
fn chmod(p: &std::path::Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// `index` and `home` beside `docs`, open to the user the watcher runs as
/// ([`Watch::start_unprivileged`]).
#[cfg(target_os = "linux")]
fn open_to_watcher(dir: &TempDir) {
    for d in ["index", "home"] {
        std::fs::create_dir_all(dir.path().join(d)).unwrap();
        chmod(&dir.path().join(d), 0o777);
    }
}

fn follows_edits(extra: &[&str]) {
    let (dir, root) = guide_folder("watch");
    let index = dir.path().join("index");
    let w = Watch::start(&root, &index, extra);
    let v = w.expect("guide.md v1", |v| event(v, "version", "guide.md").is_some());
    assert_eq!(v["version"], 1);
    assert_eq!(v["fresh_percent"], 100.0);

    // A new page that copies the guide's paragraph names it as its origin.
    std::fs::write(
        root.join("faq.md"),
        format!("Frequently asked: what does it do? {SOURCE}"),
    )
    .unwrap();
    let v = w.expect("faq.md", |v| event(v, "version", "faq.md").is_some());
    assert_eq!(v["dominant_origin"], "guide.md", "{v}");
    assert!(v["fresh_percent"].as_f64().unwrap() < 30.0, "{v}");

    // An editor's save: write a temp file, rename it over the page.
    std::fs::write(
        root.join(".faq.md.swp"),
        "Entirely rewritten: nothing copied here any more, only fresh words.",
    )
    .unwrap();
    std::fs::rename(root.join(".faq.md.swp"), root.join("faq.md")).unwrap();
    let v = w.expect("faq.md v2", |v| {
        event(v, "version", "faq.md").is_some_and(|v| v["version"] == 2)
    });
    assert_eq!(v["fresh_percent"], 100.0, "{v}");

    // Deleting a file keeps its versions as origins.
    std::fs::remove_file(root.join("guide.md")).unwrap();
    w.expect("guide.md deleted", |v| {
        event(v, "deleted", "guide.md").is_some()
    });
    std::fs::write(root.join("copy.md"), SOURCE).unwrap();
    let v = w.expect("copy.md", |v| event(v, "version", "copy.md").is_some());
    assert_eq!(
        v["dominant_origin"], "guide.md",
        "a deleted file is still an origin: {v}"
    );

    // A binary file is skipped with its reason.
    std::fs::write(root.join("blob.txt"), b"\0\x01\x02").unwrap();
    let v = w.expect("blob.txt skipped", |v| {
        event(v, "skipped", "blob.txt").is_some()
    });
    assert_eq!(v["reason"], "binary");
}

#[test]
fn watch_follows_edits_with_os_events() {
    follows_edits(&[]);
}

#[test]
fn watch_follows_edits_by_polling() {
    follows_edits(&["--poll"]);
}

#[test]
fn watch_keeps_up_with_a_burst_of_files() {
    let dir = TempDir::new("watch-burst");
    let root = dir.path().join("docs");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::write(root.join("seed.md"), SOURCE).unwrap();
    let w = Watch::start(&root, &dir.path().join("index"), &[]);
    w.expect("seed.md", |v| event(v, "version", "seed.md").is_some());
    let n = 600;
    for i in 0..n {
        std::fs::write(
            root.join(format!("sub/p{i:04}.md")),
            format!("page {i} says: {SOURCE}"),
        )
        .unwrap();
    }
    let mut seen = std::collections::HashSet::new();
    while seen.len() < n {
        let v = w.expect("all pages of the burst", |v| v["event"] == "version");
        let path = v["path"].as_str().unwrap().to_string();
        assert!(path.starts_with("sub/p"), "{v}");
        assert!(seen.insert(path), "each page once: {v}");
        assert_eq!(v["version"], 1);
    }
}

#[test]
fn a_killed_watcher_loses_nothing() {
    let (dir, root) = guide_folder("watch-kill");
    let index = dir.path().join("index");
    let mut w = Watch::start(&root, &index, &[]);
    w.expect("guide.md", |v| event(v, "version", "guide.md").is_some());
    std::fs::write(root.join("faq.md"), format!("Asked often. {SOURCE}")).unwrap();
    let seen = w.expect("faq.md", |v| event(v, "version", "faq.md").is_some());
    // SIGKILL long before the idle checkpoint: the snapshot is behind the log.
    w.child.kill().unwrap();
    w.child.wait().unwrap();
    let report = common::index_documents(&root, &index);
    assert_eq!(report["documents"], 2);
    assert_eq!(report["versions"], 2);
    assert_eq!(
        report["files_read"], 0,
        "nothing changed since the watcher saw it"
    );
    let faq = report["history"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["path"] == "faq.md")
        .expect("faq.md in the history");
    assert_eq!(faq["id"], seen["id"]);
}

/// Resident memory of a process, in KiB.
#[cfg(target_os = "linux")]
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// A reader of `watch --json` that stops reading holds the watcher back: it
/// waits with a short queue instead of piling up updates (each a snapshot of
/// every document), and once the reader reads again every line comes, once.
#[cfg(target_os = "linux")]
#[test]
fn a_stalled_reader_holds_the_watcher_back_and_loses_no_line() {
    use std::time::Duration;
    let dir = TempDir::new("watch-stall");
    let root = dir.path().join("docs");
    std::fs::create_dir_all(&root).unwrap();
    let mut w = Watch::spawn(&root, &dir.path().join("index"), &["--debounce-ms", "20"]);
    let pid = w.child.id();
    let write = |from: usize, to: usize| {
        for i in from..to {
            // Lines of ~150 bytes (64 KiB of pipe hold a few hundred), pages
            // of their own words, not near duplicates of each other.
            std::fs::write(root.join(format!("p{i:05}.md")), common::text(i as u64, 40)).unwrap();
            if i % 50 == 49 {
                std::thread::sleep(Duration::from_millis(30));
            }
        }
    };
    write(0, 1000);
    std::thread::sleep(Duration::from_secs(3));
    let stalled = rss_kib(pid);
    write(1000, 2000);
    std::thread::sleep(Duration::from_secs(3));
    let later = rss_kib(pid);
    // Held back, the watcher does not take in the second 1,000 pages (with an
    // unbounded queue: a snapshot of every document per batch, 51 MB more).
    // What it does take (the OS events of 1,000 files, allocator slack)
    // measured 0-14 MB here, by the timing of the stall.
    assert!(
        later < stalled + 20 * 1024,
        "RSS grew from {stalled} to {later} KiB while nobody read"
    );
    w.read();
    let mut seen = std::collections::HashSet::new();
    while seen.len() < 2000 {
        let v = w.expect("every page's version line", |v| v["event"] == "version");
        assert!(seen.insert(v["path"].as_str().unwrap().to_string()), "{v}");
    }
}

/// `ln a.md b.md; rm a.md`: the new name has no write to close, so the
/// watcher holds it a while; the deletion waits with it, and the two are
/// seen as the move they are, as `lineage index` sees them (it split the
/// history: `deleted a.md`, then `b.md` as a new page).
#[test]
fn a_hard_link_and_a_removal_are_a_move() {
    let dir = TempDir::new("watch-link");
    let root = dir.path().join("docs");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("a.md"), SOURCE).unwrap();
    let w = Watch::start(&root, &dir.path().join("index"), &["--debounce-ms", "50"]);
    let v = w.expect("a.md", |v| event(v, "version", "a.md").is_some());
    let id = v["id"].clone();
    std::fs::hard_link(root.join("a.md"), root.join("b.md")).unwrap();
    std::fs::remove_file(root.join("a.md")).unwrap();
    let v = w.expect("the move", |v| {
        v["event"] != "progress" && (v["event"] != "version" || v["path"] != "a.md")
    });
    assert_eq!(v["event"], "renamed", "{v}");
    assert_eq!(
        (&v["from"], &v["path"], &v["id"]),
        (&"a.md".into(), &"b.md".into(), &id)
    );
}

/// A watcher's history reaches `index.db` at its checkpoints, not only when
/// it ends (SQLite copies its write-ahead log only past 1,000 pages or at
/// the last close): a copy of `index.db` alone taken while it runs, as a
/// lost `index.db-wal` would leave it, holds every version.
#[test]
fn a_running_watchers_history_is_in_the_database_file() {
    let (dir, root) = guide_folder("watch-wal");
    let index = dir.path().join("index");
    let w = Watch::start(
        &root,
        &index,
        &["--debounce-ms", "20", "--checkpoint-secs", "1"],
    );
    w.expect("guide.md", |v| event(v, "version", "guide.md").is_some());
    std::fs::write(root.join("faq.md"), format!("Asked often. {SOURCE}")).unwrap();
    w.expect("faq.md", |v| event(v, "version", "faq.md").is_some());
    std::fs::write(root.join("guide.md"), format!("{SOURCE} A second edition.")).unwrap();
    w.expect("guide.md v2", |v| {
        event(v, "version", "guide.md").is_some_and(|v| v["version"] == 2)
    });
    // Past the checkpoint (at most a second of changes unsaved).
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let copy = dir.path().join("copy");
    std::fs::create_dir_all(&copy).unwrap();
    for f in ["index.db", "table.snapshot", "table.journal"] {
        if index.join(f).exists() {
            std::fs::copy(index.join(f), copy.join(f)).unwrap();
        }
    }
    drop(w);
    let home = dir.path().join("home");
    let out = common::run(
        &home,
        &[
            "index",
            root.to_str().unwrap(),
            "--json",
            "--index",
            copy.to_str().unwrap(),
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && err.is_empty(), "{err}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["versions"].as_u64(), v["files_read"].as_u64()),
        (Some(3), Some(0)),
        "{v}"
    );
}

/// `index.db-wal` removed while the watcher runs holds the history since
/// the last checkpoint, and lives on only in the watcher (the file is still
/// open there): the watcher says so, copies it into `index.db` within a
/// tick and reopens the index, so a `kill -9` right after loses nothing
/// (before, every version since the last checkpoint went silently).
#[test]
fn a_log_removed_under_a_running_watcher_loses_no_history() {
    use std::time::Duration;
    let (dir, root) = guide_folder("watch-wal-gone");
    let index = dir.path().join("index");
    // Checkpoints far apart: what follows is in the log only.
    let mut w = Watch::start(
        &root,
        &index,
        &["--debounce-ms", "20", "--checkpoint-secs", "600"],
    );
    w.expect("guide.md", |v| event(v, "version", "guide.md").is_some());
    for n in 2..=4 {
        std::fs::write(root.join("guide.md"), format!("{SOURCE} Edition {n}.")).unwrap();
        w.expect("an edition", |v| {
            event(v, "version", "guide.md").is_some_and(|v| v["version"] == n)
        });
    }
    std::fs::remove_file(index.join("index.db-wal")).unwrap();
    let v = w.expect("the removal told", |v| v["event"] == "error");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("index.db-wal was removed while in use"),
        "{v}"
    );
    std::fs::write(root.join("faq.md"), format!("Asked often. {SOURCE}")).unwrap();
    w.expect("faq.md", |v| event(v, "version", "faq.md").is_some());
    w.until_quiet(Duration::from_millis(1500), Duration::from_secs(20));
    let _ = w.child.kill();
    let _ = w.child.wait();
    let kept = common::index_documents(&root, &index);
    let versions: Vec<(&str, u64)> = kept["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["path"].as_str().unwrap(), h["version"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        versions,
        [
            ("guide.md", 1),
            ("guide.md", 2),
            ("guide.md", 3),
            ("guide.md", 4),
            ("faq.md", 1)
        ]
    );
}

/// A page that becomes unreadable is still there: it leaves the documents
/// with one `skipped` line saying why, no `deleted` beside it, and comes
/// back when it can be read again.
#[cfg(target_os = "linux")]
#[test]
fn a_page_made_unreadable_is_skipped_not_deleted() {
    let (dir, root) = guide_folder("watch-perm");
    std::fs::write(root.join("other.md"), "another page of words").unwrap();
    open_to_watcher(&dir);
    for p in [dir.path(), &root] {
        chmod(p, 0o755);
    }
    let w = Watch::start_unprivileged(&root, &dir.path().join("index"), &[]);
    w.expect("guide.md v1", |v| event(v, "version", "guide.md").is_some());
    w.expect("other.md v1", |v| event(v, "version", "other.md").is_some());

    let guide = root.join("guide.md");
    let append = |words: &[u8]| {
        let mut f = std::fs::OpenOptions::new().append(true).open(&guide);
        std::io::Write::write_all(f.as_mut().unwrap(), words).unwrap();
    };
    // Write-only for its owner: the watcher may not read it (as the same
    // user, or as nobody).
    chmod(&guide, 0o200);
    append(b" and a line more");
    let v = w.expect("skipped", |v| event(v, "skipped", "guide.md").is_some());
    assert!(v["reason"].as_str().unwrap().contains("unreadable"), "{v}");
    let quiet = std::time::Duration::from_secs(2);
    let after = w.until_quiet(quiet, 10 * quiet);
    let deleted = |v: &Value| event(v, "deleted", "guide.md").is_some();
    assert!(!after.iter().any(deleted), "{after:?}");

    chmod(&guide, 0o644);
    append(b" and readable again");
    let v = w.expect("back", |v| event(v, "version", "guide.md").is_some());
    assert_eq!(v["version"], 2);
}

/// A sub-folder the watcher may not read is skipped, and the rest is still
/// watched by events (it was all rescanned every few seconds): a folder
/// made later beside it is watched too, and the folder, once readable, is
/// read.
#[cfg(target_os = "linux")]
#[test]
fn an_unreadable_folder_leaves_the_rest_to_events() {
    use std::time::Duration;
    let dir = TempDir::new("watch-locked");
    let root = dir.path().join("docs");
    dir.write("docs/open/guide.md", SOURCE);
    dir.write(
        "docs/locked/secret.md",
        "words kept in a folder nobody may read",
    );
    open_to_watcher(&dir);
    for p in [dir.path(), &root, &root.join("open")] {
        chmod(p, 0o777);
    }
    chmod(&root.join("locked"), 0o000);
    let w = Watch::start_unprivileged(&root, &dir.path().join("index"), &[]);
    // No `cannot watch …; rescanning every 1 s instead` first.
    let v = w.expect("locked skipped", |v| {
        assert_ne!(v["event"], "error", "{v}");
        event(v, "skipped", "locked").is_some()
    });
    assert!(v["reason"].as_str().unwrap().contains("unreadable"), "{v}");
    w.expect("guide.md", |v| {
        event(v, "version", "open/guide.md").is_some()
    });

    // A folder made beside the unreadable one, written to after its own
    // event was seen: seen only if the new folder is watched.
    std::fs::create_dir(root.join("later")).unwrap();
    w.until_quiet(Duration::from_millis(1500), Duration::from_secs(20));
    dir.write(
        "docs/later/page.md",
        "a page in a folder made after the start",
    );
    w.expect("later/page.md", |v| {
        event(v, "version", "later/page.md").is_some()
    });

    chmod(&root.join("locked"), 0o755);
    chmod(&root.join("locked/secret.md"), 0o644);
    w.expect("secret.md, readable now", |v| {
        event(v, "version", "locked/secret.md").is_some()
    });
}

/// Rewrite `p` in place with `text` (of the same size) and put its
/// modification time back, as `cp -p`, `tar x` and `rsync -t` leave a file.
fn rewrite_keeping_mtime(p: &std::path::Path, text: &str) {
    let before = std::fs::metadata(p).unwrap();
    assert_eq!(before.len(), text.len() as u64);
    std::fs::write(p, text).unwrap();
    let f = std::fs::File::options().write(true).open(p).unwrap();
    f.set_modified(before.modified().unwrap()).unwrap();
}

/// A rewrite that keeps size and mtime is a new version, with OS events
/// and polling alike (only the status change time moved).
#[test]
fn a_rewrite_that_puts_size_and_mtime_back_is_seen() {
    for extra in [&[][..], &["--poll"][..]] {
        let (dir, root) = guide_folder("watch-ctime");
        let w = Watch::start(&root, &dir.path().join("index"), extra);
        w.expect("guide.md v1", |v| event(v, "version", "guide.md").is_some());
        let other: String = SOURCE.chars().rev().collect();
        rewrite_keeping_mtime(&root.join("guide.md"), &other);
        let v = w.expect("guide.md v2", |v| {
            event(v, "version", "guide.md").is_some_and(|v| v["version"] == 2)
        });
        assert_eq!(v["fresh_percent"], 100.0, "{extra:?}: {v}");
        drop(w);
        // And a catch-up by `index` sees one made while nothing watched.
        rewrite_keeping_mtime(&root.join("guide.md"), SOURCE);
        let index = dir.path().join("index");
        let report = common::lineage_json(&[
            "index",
            root.to_str().unwrap(),
            "--json",
            "--index",
            index.to_str().unwrap(),
        ]);
        assert_eq!(
            (&report["files_read"], &report["versions"]),
            (&1.into(), &3.into()),
            "{extra:?}: {report}"
        );
    }
}

/// `mv d1 d2` where d1 holds a page and its hard link, under a running
/// watcher (OS events and polling): each name moves with its versions, and
/// the watcher goes on (it panicked on the second claim of the one file).
#[test]
fn a_folder_renamed_with_a_hard_linked_pair_is_two_moves() {
    for extra in [&[][..], &["--poll"][..]] {
        let dir = TempDir::new("watch-linked-folder");
        let root = dir.path().join("docs");
        dir.write("docs/d1/a.md", SOURCE);
        std::fs::hard_link(root.join("d1/a.md"), root.join("d1/h.md")).unwrap();
        let w = Watch::start(&root, &dir.path().join("index"), extra);
        w.expect("d1/h.md", |v| event(v, "version", "d1/h.md").is_some());
        std::fs::rename(root.join("d1"), root.join("d2")).unwrap();
        let mut moved = std::collections::BTreeSet::new();
        while moved.len() < 2 {
            let v = w.expect("both moves", |v| v["event"] == "renamed");
            moved.insert((
                v["from"].as_str().unwrap().to_string(),
                v["path"].as_str().unwrap().to_string(),
            ));
        }
        let want = [("d1/a.md", "d2/a.md"), ("d1/h.md", "d2/h.md")]
            .map(|(a, b)| (a.to_string(), b.to_string()));
        assert_eq!(moved, want.into_iter().collect(), "{extra:?}");
        // Still watching.
        std::fs::write(root.join("new.md"), "A page after the move, all fresh.").unwrap();
        w.expect("new.md", |v| event(v, "version", "new.md").is_some());
    }
}
