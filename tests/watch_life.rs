//! `lineage watch --json` left running, as people run it beside an editor:
//! it goes idle, records only whole files, keeps a renamed file's history,
//! survives its root going and coming back, and a full index disk.
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

mod common;

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use common::{TempDir, Watch, text as words};
use serde_json::Value;

fn is(v: &Value, kind: &str, path: &str) -> bool {
    v["event"] == kind && v["path"] == path
}

/// The stored history: (path, version, status, tokens) in processing order.
fn history(root: &Path, index: &Path) -> Vec<(String, u64, String, u64)> {
    let report = common::index_documents(root, index);
    report["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["path"].as_str().unwrap().to_string(),
                h["version"].as_u64().unwrap(),
                h["status"].as_str().unwrap().to_string(),
                h["tokens"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// CPU time (user + system, in clock ticks) of process `pid` so far.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name in parentheses; utime and stime are 14 and 15.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

#[cfg(target_os = "linux")]
#[test]
fn an_idle_watcher_does_no_work() {
    let dir = TempDir::new("idle");
    let root = dir.path().join("docs");
    for i in 0..2000 {
        let p = root.join(format!("d{:02}/f{i:04}.md", i / 100));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, words(i, 30)).unwrap();
    }
    let w = Watch::start(
        &root,
        &dir.path().join("index"),
        &["--table-size", "256KiB"],
    );
    let mut n = 0;
    while n < 2000 {
        w.expect("the first versions", |v| v["event"] == "version");
        n += 1;
    }
    // Past the first walk's own events and the idle checkpoint (10 s), watch
    // it do nothing. Its own reads used to raise open events that started
    // the next walk, every debounce interval, forever (60+ ticks in 10 s on
    // this tree).
    std::thread::sleep(Duration::from_secs(12));
    let before = cpu_ticks(w.child.id());
    std::thread::sleep(Duration::from_secs(10));
    let used = cpu_ticks(w.child.id()) - before;
    assert!(used <= 10, "{used} CPU ticks in 10 idle seconds");
}

#[test]
fn a_writer_pausing_mid_file_gives_one_whole_version() {
    let dir = TempDir::new("slow");
    let root = dir.path().join("docs");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("ready.md"), words(1000, 20)).unwrap();
    let index = dir.path().join("index");
    let w = Watch::start(&root, &index, &[]);
    // Watching from here (a file written before the watch began is read
    // as the first walk finds it).
    w.expect("ready.md", |v| is(v, "version", "ready.md"));
    // 20 writers at once, each: a heading, flushed, 4 s of nothing, the rest.
    let writers: Vec<_> = (0..20)
        .map(|i| {
            let path = root.join(format!("slow{i:02}.md"));
            std::thread::spawn(move || {
                let mut f = std::fs::File::create(&path).unwrap();
                f.write_all(b"# Heading\n\n").unwrap();
                f.flush().unwrap();
                std::thread::sleep(Duration::from_secs(4));
                f.write_all(words(i, 200).as_bytes()).unwrap();
            })
        })
        .collect();
    for t in writers {
        t.join().unwrap();
    }
    let mut seen = std::collections::HashSet::new();
    while seen.len() < 20 {
        let v = w.expect("every slow file", |v| v["event"] == "version");
        seen.insert(v["path"].as_str().unwrap().to_string());
    }
    // A shell loop writing 200 files, each in two writes.
    let script = format!(
        "cd '{}' && for i in $(seq 1 200); do {{ printf 'first part %s ' $i; printf '{}'; }} > loop$i.md; done",
        root.display(),
        words(99, 50)
    );
    let ok = std::process::Command::new("sh")
        .args(["-c", &script])
        .status()
        .unwrap();
    assert!(ok.success());
    let mut seen = 0;
    while seen < 200 {
        w.expect("every loop file", |v| {
            v["event"] == "version" && v["path"].as_str().unwrap().starts_with("loop")
        });
        seen += 1;
    }
    std::thread::sleep(Duration::from_secs(1));
    drop(w);
    let h = history(&root, &index);
    assert_eq!(h.len(), 221, "one version per file: {h:?}");
    for (path, version, status, tokens) in h.iter().filter(|h| h.0 != "ready.md") {
        assert_eq!((*version, status.as_str()), (1, "live"), "{path}");
        let whole = if path.starts_with("slow") { 201 } else { 53 };
        assert_eq!(*tokens, whole, "{path} read whole");
    }
}

#[test]
fn renamed_files_and_folders_keep_their_history() {
    renames_keep_their_history("rename", &[]);
}

/// The poller sees a rename as a removal and a creation, with the folder's
/// mtime moved: the folder was taken for a file being written, every path
/// found gone was held back with it, and each plain `mv` lost its history.
#[test]
fn renamed_files_and_folders_keep_their_history_when_polling() {
    renames_keep_their_history("rename-poll", &["--poll"]);
}

fn renames_keep_their_history(tag: &str, extra: &[&str]) {
    let dir = TempDir::new(tag);
    let root = dir.path().join("docs");
    std::fs::create_dir_all(root.join("guide")).unwrap();
    std::fs::write(root.join("a.md"), words(1, 80)).unwrap();
    std::fs::write(root.join("guide/one.md"), words(2, 80)).unwrap();
    std::fs::write(root.join("guide/two.md"), words(3, 80)).unwrap();
    let index = dir.path().join("index");
    let w = Watch::start(&root, &index, extra);
    w.expect("a.md", |v| is(v, "version", "a.md"));
    std::fs::write(root.join("a.md"), words(4, 80)).unwrap();
    w.expect("a.md v2", |v| is(v, "version", "a.md") && v["version"] == 2);

    std::fs::rename(root.join("a.md"), root.join("b.md")).unwrap();
    let v = w.expect("a rename", |v| v["event"] == "renamed");
    assert_eq!((&v["from"], &v["path"]), (&"a.md".into(), &"b.md".into()));
    // A folder moved: each file a rename, nothing read again.
    std::fs::rename(root.join("guide"), root.join("manual")).unwrap();
    for name in ["one", "two"] {
        let to = format!("manual/{name}.md");
        let v = w.expect("a moved folder's file", |v| is(v, "renamed", &to));
        assert_eq!(v["from"], format!("guide/{name}.md"));
    }
    // A rename with an edit: a rename, then a version.
    std::fs::rename(root.join("b.md"), root.join("c.md")).unwrap();
    std::fs::OpenOptions::new()
        .append(true)
        .open(root.join("c.md"))
        .unwrap()
        .write_all(b" and one more closing line")
        .unwrap();
    w.expect("c.md renamed", |v| is(v, "renamed", "c.md"));
    let v = w.expect("c.md v3", |v| is(v, "version", "c.md"));
    assert_eq!(v["version"], 3);
    std::thread::sleep(Duration::from_secs(1));
    drop(w);
    let paths: Vec<_> = history(&root, &index)
        .into_iter()
        .map(|(p, v, s, _)| format!("{p} v{v} {s}"))
        .collect();
    assert_eq!(
        paths,
        [
            "c.md v1 replaced",
            "manual/one.md v1 live",
            "manual/two.md v1 live",
            "c.md v2 replaced",
            "c.md v3 live",
        ]
    );
}

/// `ln j.md j2.md` and `mv a.md a2.md` in one burst: the new name has no
/// write to close, so the watcher holds it, and `a.md`, found gone, with
/// it; `a2.md` is still `a.md` moved (it was `a2.md` v1 and `deleted a.md`).
#[test]
fn a_rename_beside_a_new_hard_link_keeps_its_history() {
    let dir = TempDir::new("rename-link");
    let root = dir.path().join("docs");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("a.md"), words(1, 80)).unwrap();
    std::fs::write(root.join("j.md"), words(2, 80)).unwrap();
    let w = Watch::start(&root, &dir.path().join("index"), &[]);
    for p in ["a.md", "j.md"] {
        w.expect(p, |v| is(v, "version", p));
    }
    for unlink in [false, true] {
        let (from, to) = if unlink {
            ("a2.md", "a3.md")
        } else {
            ("a.md", "a2.md")
        };
        std::fs::hard_link(root.join("j.md"), root.join(format!("j-{unlink}.md"))).unwrap();
        if unlink {
            std::fs::remove_file(root.join("j.md")).unwrap();
        }
        std::fs::rename(root.join(from), root.join(to)).unwrap();
        let v = w.expect("the move", |v| {
            v["event"] != "progress"
                && v["event"] != "table"
                && v["path"] != "j.md"
                && !v["path"].as_str().is_some_and(|p| p.starts_with("j-"))
        });
        assert!(is(&v, "renamed", to) && v["from"] == from, "{v}");
    }
}

/// A page with two names (hard links), edited through one: the OS tells of
/// that name only, and the other name's document kept its old content.
#[test]
fn every_name_of_a_file_is_current() {
    let dir = TempDir::new("two-names");
    let root = dir.path().join("docs");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("j.md"), words(2, 80)).unwrap();
    std::fs::hard_link(root.join("j.md"), root.join("k.md")).unwrap();
    let index = dir.path().join("index");
    let w = Watch::start(&root, &index, &[]);
    for p in ["j.md", "k.md"] {
        w.expect(p, |v| is(v, "version", p));
    }
    std::fs::OpenOptions::new()
        .append(true)
        .open(root.join("j.md"))
        .unwrap()
        .write_all(b" and a closing line written through one name")
        .unwrap();
    for p in ["j.md", "k.md"] {
        let v = w.expect("the edit under both names", |v| is(v, "version", p));
        assert_eq!(v["version"], 2, "{v}");
    }
    std::thread::sleep(Duration::from_secs(1));
    drop(w);
    let kept = common::index_documents(&root, &index);
    assert_eq!(kept["files_read"], 0, "the watcher kept up: {kept}");
}

#[test]
fn the_root_can_go_and_come_back() {
    let dir = TempDir::new("root");
    let root = dir.path().join("docs");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("a.md"), words(1, 40)).unwrap();
    let w = Watch::start(&root, &dir.path().join("index"), &[]);
    w.expect("a.md", |v| is(v, "version", "a.md"));
    std::fs::remove_dir_all(&root).unwrap();
    let v = w.expect("the root gone", |v| v["event"] == "error");
    assert!(
        v["message"].as_str().unwrap().contains("marked deleted"),
        "{v}"
    );
    w.expect("a.md deleted", |v| is(v, "deleted", "a.md"));
    // Back, with a new page: watched again.
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("b.md"), words(2, 40)).unwrap();
    w.expect("b.md", |v| is(v, "version", "b.md"));
    std::fs::write(root.join("b2.md"), words(3, 40)).unwrap();
    w.expect("b2.md, from an event", |v| is(v, "version", "b2.md"));
    // Moved away and replaced: the new folder at the path is the root.
    let old = dir.path().join("old");
    std::fs::rename(&root, &old).unwrap();
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("c.md"), words(4, 40)).unwrap();
    w.expect("c.md", |v| is(v, "version", "c.md"));
    std::fs::write(root.join("d.md"), words(5, 40)).unwrap();
    w.expect("d.md, from an event", |v| is(v, "version", "d.md"));
    // The folder moved away is not watched any more.
    std::fs::write(old.join("e.md"), words(6, 40)).unwrap();
    std::fs::write(root.join("f.md"), words(7, 40)).unwrap();
    let v = w.expect("f.md", |v| v["event"] == "version");
    assert_eq!(v["path"], "f.md", "{v}");
}

#[test]
fn an_unreadable_root_at_start_is_one_line_and_status_2() {
    let dir = TempDir::new("noroot");
    let out = common::run(
        dir.path(),
        &[
            "watch",
            dir.path().join("missing").to_str().unwrap(),
            "--json",
        ],
    );
    let line = common::fails_with_one_line(&out);
    assert!(line.contains("cannot read root"), "{line}");
    let file = dir.write("file.md", "x");
    let out = common::run(dir.path(), &["watch", file.to_str().unwrap(), "--json"]);
    assert!(common::fails_with_one_line(&out).contains("not a directory"));
}

/// A small tmpfs for the index, filled up while the watcher runs (root only;
/// elsewhere the test says so and passes).
#[cfg(target_os = "linux")]
#[test]
fn a_full_index_disk_is_reported_once_and_caught_up() {
    let dir = TempDir::new("full");
    let root = dir.path().join("docs");
    std::fs::create_dir_all(&root).unwrap();
    let mnt = dir.path().join("mnt");
    let Some(_mounted) = lineage_testing::small_tmpfs(&mnt, "2m") else {
        eprintln!("cannot mount a tmpfs here: test not run");
        return;
    };
    std::fs::write(root.join("a.md"), words(1, 300)).unwrap();
    let index = mnt.join("index");
    let w = Watch::start(&root, &index, &["--table-size", "64KiB"]);
    w.expect("a.md", |v| is(v, "version", "a.md"));
    // Fill the disk, then add pages whose fingerprints cannot be stored.
    let filler = mnt.join("filler");
    let mut f = std::fs::File::create(&filler).unwrap();
    while f.write_all(&[0u8; 4096]).is_ok() {}
    drop(f);
    for i in 0..40 {
        std::fs::write(root.join(format!("p{i:02}.md")), words(10 + i, 3000)).unwrap();
    }
    let page =
        |v: &Value| v["event"] == "error" || (v["event"] == "version" && v["path"] != "a.md");
    let mut seen = std::collections::HashSet::new();
    loop {
        let v = w.expect("the error", page);
        if v["event"] == "error" {
            assert!(
                v["message"].as_str().unwrap().contains("cannot be written"),
                "{v}"
            );
            break;
        }
        seen.insert(v["path"].as_str().unwrap().to_string());
    }
    std::thread::sleep(Duration::from_secs(3));
    // Space again: every page arrives, and the error was said once.
    std::fs::remove_file(&filler).unwrap();
    while seen.len() < 40 {
        let v = w.expect("the pages, caught up", page);
        assert_eq!(v["event"], "version", "one error only: {v}");
        seen.insert(v["path"].as_str().unwrap().to_string());
    }
    drop(w);
    let leftovers: Vec<_> = std::fs::read_dir(&index)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// `a\xff.md`, `a\xfe.md` and `a\u{FFFD}.md` were one document: every run
/// added versions and documents vanished from the live set.
#[cfg(unix)]
#[test]
fn names_that_are_not_utf8_stay_apart() {
    use std::os::unix::ffi::OsStrExt;
    let dir = TempDir::new("bytes");
    let root = dir.path().join("docs");
    std::fs::create_dir_all(&root).unwrap();
    let names: [&[u8]; 3] = [b"a\xff.md", b"a\xfe.md", "a\u{FFFD}.md".as_bytes()];
    let index = dir.path().join("index");
    let w = Watch::start(&root, &index, &[]);
    for (i, n) in names.iter().enumerate() {
        std::fs::write(
            root.join(std::ffi::OsStr::from_bytes(n)),
            words(i as u64, 40),
        )
        .unwrap();
    }
    let mut hex = Vec::new();
    for _ in 0..3 {
        let v = w.expect("a version", |v| v["event"] == "version");
        assert_eq!(v["path"], "a\u{FFFD}.md", "shown lossy: {v}");
        hex.push(v["path_hex"].as_str().unwrap_or("").to_string());
    }
    hex.sort();
    assert_eq!(hex, ["", "61fe2e6d64", "61ff2e6d64"]);
    drop(w);
    for _ in 0..2 {
        let report = common::index_documents(&root, &index);
        assert_eq!(
            (&report["documents"], &report["versions"]),
            (&3.into(), &3.into())
        );
        assert_eq!(report["files_read"], 0, "{report}");
    }
}

/// A FIFO among the documents (or swapped in for one) is skipped with its
/// reason; nothing waits for a writer that never comes.
#[cfg(target_os = "linux")]
#[test]
fn a_fifo_is_skipped_and_nothing_hangs() {
    let dir = TempDir::new("fifo");
    let root = dir.path().join("docs");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("a.md"), words(1, 40)).unwrap();
    let ok = std::process::Command::new("mkfifo")
        .arg(root.join("pipe.md"))
        .status()
        .unwrap();
    assert!(ok.success());
    let root_s = root.to_str().unwrap();
    let index = dir.path().join("index");
    for args in [
        vec!["scan", root_s, "--json"],
        vec![
            "index",
            root_s,
            "--json",
            "--index",
            index.to_str().unwrap(),
        ],
    ] {
        let mut child = common::command(dir.path(), &args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while child.try_wait().unwrap().is_none() {
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                panic!("{args:?} hangs on a FIFO");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{args:?}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        // scan lists the reason; index counts it.
        let text = v.to_string();
        assert!(
            text.contains("not a regular file (fifo)") || v["skipped"] == 1,
            "{args:?}: {text}"
        );
    }
    // watch: the FIFO listed, the page read.
    let w = Watch::start(&root, &dir.path().join("index2"), &[]);
    let v = w.expect("the FIFO skipped", |v| is(v, "skipped", "pipe.md"));
    assert_eq!(v["reason"], "not a regular file (fifo)");
    w.expect("a.md", |v| is(v, "version", "a.md"));
}
