//! The index as a store: where it lives, who holds it, what a walk asks of
//! it, and a batch that waits for its outcomes. The index with the origin
//! pass (every outcome against a replay of the history, repairs, renames,
//! the history budget) is tested with its pipeline stage, the engine's
//! `indexer`.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::open::one_line;
use super::reconcile::plan;
use super::*;
use lineage_core::fingerprint::polynomial::standard;
use lineage_origin::TableSize;
use lineage_origin::select::Selector;
use lineage_source::Order;
use lineage_source::{self as source, Filter, WalkOptions};
use lineage_testing::TempDir;

/// The folder at `root` as a walk with the default patterns and options.
fn walk_root(root: &Path) -> source::Walk {
    source::walk_with(root, &Filter::default_patterns(), WalkOptions::default()).unwrap()
}

const MAX: u64 = 1 << 20;

/// A root and an index folder, removed on drop.
struct Fixture {
    base: TempDir,
    root: PathBuf,
    dir: PathBuf,
}

impl Fixture {
    fn new(tag: &str) -> Fixture {
        let base = TempDir::new(&format!("ix-{tag}"));
        let root = base.0.join("root");
        fs::create_dir_all(&root).unwrap();
        Fixture {
            dir: base.0.join("index"),
            root,
            base,
        }
    }

    /// Write `rel` with `text` and an mtime of `secs` after the epoch.
    fn write(&self, rel: &str, text: &str, secs: u64) {
        let p = self.root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, text).unwrap();
        let f = fs::File::options().write(true).open(&p).unwrap();
        f.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
            .unwrap();
    }

    fn open(&self, params: Params) -> (Index, Restored) {
        Index::open(&self.root, &self.dir, params, standard(), &mut Quiet).unwrap()
    }
}

fn params() -> Params {
    Params {
        table_size: TableSize::Bytes(48 << 10),
        ..Params::default()
    }
}

/// An outcome of version `id` that no pass made: what the store is given
/// is what it keeps.
fn outcome(id: u32, tokens: u32) -> Outcome {
    Outcome::new(id, tokens, 0, std::iter::empty(), &[])
}

#[test]
fn a_batch_numbers_its_new_versions_and_stores_the_outcomes_it_is_given() {
    let f = Fixture::new("batch");
    f.write("a.md", "the first page, in words of its own", 10);
    f.write("b.md", "a second page with other words", 20);
    f.write("bin.md", "x\0y", 30);
    let (mut ix, restored) = f.open(params());
    assert_eq!((restored.start, restored.through, ix.versions()), (0, 0, 0));
    let mut s = ix
        .begin_sync(walk_root(&f.root), &Scope::default(), MAX, Order::Mtime)
        .unwrap();
    let files: Vec<String> = s.batch().iter().map(|f| f.path.clone()).collect();
    assert_eq!(files, ["a.md", "b.md", "bin.md"], "mtime order");
    let reader = ix.reader(&s);
    let read: Vec<_> = s.batch().iter().map(|f| reader.read(f)).collect();
    let tokens: Vec<u32> = read
        .iter()
        .filter_map(|r| r.as_ref().ok().map(|c| c.fps().len() as u32))
        .collect();
    assert_eq!(tokens.len(), 2, "the binary file gives no content");
    let batch = ix.record(&mut s, read).unwrap();
    assert_eq!(
        batch.versions(),
        [Pending { id: 0, at: 0 }, Pending { id: 1, at: 1 }]
    );
    let given = vec![
        (outcome(0, tokens[0]), vec![1, 2]),
        (outcome(1, tokens[1]), vec![3]),
    ];
    let changes = batch.commit(given).unwrap();
    let kinds: Vec<String> = changes
        .iter()
        .map(|c| match c {
            Change::Version { path, keys, .. } => format!("{path} {keys:?}"),
            Change::Skipped { path, reason } => format!("{path} {reason}"),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(kinds, ["a.md [1, 2]", "b.md [3]", "bin.md binary"]);
    assert!(s.batch().is_empty());
    assert!(ix.finish(&mut s).unwrap().is_empty());
    assert_eq!(ix.outcome(1).unwrap(), Some(outcome(1, tokens[1])));
    assert_eq!(ix.versions(), 2);

    // A batch dropped before its outcomes came is not written, and the
    // index says it cannot be trusted until it is opened again.
    f.write("a.md", "the first page, edited", 40);
    let mut s = ix
        .begin_sync(walk_root(&f.root), &Scope::default(), MAX, Order::Mtime)
        .unwrap();
    let reader = ix.reader(&s);
    let read: Vec<_> = s.batch().iter().map(|f| reader.read(f)).collect();
    drop(ix.record(&mut s, read).unwrap());
    assert!(matches!(
        ix.begin_sync(walk_root(&f.root), &Scope::default(), MAX, Order::Mtime),
        Err(IndexError::Poisoned)
    ));
    drop(ix);
    let (ix, _) = f.open(params());
    assert_eq!(ix.versions(), 2, "the dropped batch's version is not in");
}

/// A new version records when lineage saw it, not its file's modification
/// time (here 1970): what the Events say of it after a restart.
#[test]
fn a_new_version_records_when_it_was_seen() {
    let f = Fixture::new("seen");
    f.write("a.md", "a page written long before it was seen", 10);
    let now_ms = || super::mtime_ns(SystemTime::now()).div_euclid(1_000_000);
    let (mut ix, _) = f.open(params());
    let before = now_ms();
    let mut s = ix
        .begin_sync(walk_root(&f.root), &Scope::default(), MAX, Order::Mtime)
        .unwrap();
    let reader = ix.reader(&s);
    let read: Vec<_> = s.batch().iter().map(|f| reader.read(f)).collect();
    let tokens = read[0].as_ref().ok().map(|c| c.fps().len() as u32).unwrap();
    let batch = ix.record(&mut s, read).unwrap();
    batch.commit(vec![(outcome(0, tokens), vec![1])]).unwrap();
    ix.finish(&mut s).unwrap();
    let after = now_ms();
    drop(ix);
    let (ix, _) = f.open(params());
    let h = ix.history().unwrap();
    assert_eq!(h[0].mtime_ns, 10_000_000_000);
    let seen = h[0].seen_ms.expect("a time");
    assert!(
        (before..=after).contains(&seen),
        "{before} <= {seen} <= {after}"
    );
}

#[test]
fn the_lock_and_the_location_are_checked() {
    let f = Fixture::new("lock");
    f.write("a.md", "some words here", 1);
    let (ix, _) = f.open(params());
    let mut q = Quiet;
    let second = Index::open(&f.root, &f.dir, params(), standard(), &mut q);
    assert!(matches!(second, Err(IndexError::Locked(..))));
    drop(ix);
    Index::open(&f.root, &f.dir, params(), standard(), &mut q).unwrap();

    let inside = Index::open(&f.root, &f.root.join("ix"), params(), standard(), &mut q);
    assert!(matches!(inside, Err(IndexError::Location(_))));
    assert!(!f.root.join("ix").exists(), "nothing written in the root");
    let other_root = f.base.0.join("other");
    fs::create_dir_all(&other_root).unwrap();
    let e = Index::open(&other_root, &f.dir, params(), standard(), &mut q)
        .err()
        .unwrap();
    assert!(e.to_string().contains("belongs to the root"), "{e}");
    let not_index = f.base.0.join("notes");
    fs::create_dir_all(&not_index).unwrap();
    fs::write(not_index.join("todo.txt"), "mine").unwrap();
    let e = Index::open(&f.root, &not_index, params(), standard(), &mut q)
        .err()
        .unwrap();
    assert!(e.to_string().contains("not a lineage index"), "{e}");
    assert_eq!(fs::read(not_index.join("todo.txt")).unwrap(), b"mine");
    let tiny = Params {
        table_size: TableSize::Bytes(10),
        ..params()
    };
    assert!(matches!(
        Index::open(&f.root, &f.base.0.join("t"), tiny, standard(), &mut q),
        Err(IndexError::Table(_))
    ));
}

#[test]
fn location_is_a_stable_hash_of_the_canonical_root() {
    let f = Fixture::new("where");
    let base = Path::new("/some/base");
    let a = location(&f.root, None, Some(base)).unwrap();
    let b = location(&f.root.join("."), None, Some(base)).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.parent().unwrap(), base);
    assert_eq!(a.file_name().unwrap().len(), 16);
    assert_eq!(
        location(&f.root, Some(Path::new("/x")), Some(base)).unwrap(),
        Path::new("/x")
    );
    assert_eq!(root_key(Path::new("/a")), root_key(Path::new("/a")));
    assert_ne!(root_key(Path::new("/a")), root_key(Path::new("/b")));
}

#[test]
fn plan_reads_only_what_changed() {
    let f = Fixture::new("plan");
    f.write("same.md", "x", 10);
    f.write("changed.md", "x", 11);
    f.write("new.md", "x", 5);
    f.write("bin.md", "x", 12);
    let walk = walk_root(&f.root);
    let cur = |size, secs: i64, status| Current {
        id: 0,
        version: 1,
        size,
        mtime_ns: secs * 1_000_000_000,
        hash: 0,
        status,
        file_id: 0,
        ctime_ns: None,
        text_never_kept: false,
        forgotten: false,
    };
    let current = HashMap::from([
        ("same.md".to_string(), cur(1, 10, Status::Live)),
        ("changed.md".to_string(), cur(1, 99, Status::Live)),
        ("gone.md".to_string(), cur(1, 1, Status::Live)),
        ("old.md".to_string(), cur(1, 1, Status::Deleted)),
    ]);
    let bin = SkipRow {
        reason: "binary".into(),
        binary: true,
        size: Some(1),
        mtime_ns: Some(12_000_000_000),
    };
    let stale = SkipRow {
        reason: "binary".into(),
        binary: true,
        size: Some(1),
        mtime_ns: Some(1),
    };
    let skipped = HashMap::from([("bin.md".to_string(), bin), ("was.md".to_string(), stale)]);
    // A watcher's targeted stat covers some paths: absence elsewhere says nothing.
    let scoped = source::Walk {
        files: walk.files.clone(),
        skipped: walk.skipped.clone(),
    };
    let scope = ["same.md".to_string(), "new.md".to_string()];
    let targeted = Scope {
        paths: Some(&scope),
        held: HashSet::new(),
        held_gone: HashSet::new(),
    };
    let p = plan(
        scoped,
        &targeted,
        &current,
        &skipped,
        MAX,
        Order::Mtime,
        true,
    );
    assert!(p.gone.is_empty() && p.stale_skips.is_empty());
    // A file being written is neither read nor gone, in a full walk too.
    let writing = Scope {
        paths: None,
        held: HashSet::from(["new.md".to_string(), "gone.md".to_string()]),
        held_gone: HashSet::new(),
    };
    let again = walk_root(&f.root);
    let p = plan(again, &writing, &current, &skipped, MAX, Order::Mtime, true);
    let read: Vec<_> = p.read.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(read, ["changed.md"]);
    assert!(p.gone.is_empty(), "{:?}", p.gone);
    let p = plan(
        walk,
        &Scope::default(),
        &current,
        &skipped,
        MAX,
        Order::Mtime,
        true,
    );
    let read: Vec<_> = p.read.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(read, ["new.md", "changed.md"], "in mtime order");
    assert_eq!(p.gone, ["gone.md"]);
    assert_eq!(p.stale_skips, ["was.md"]);
    assert!(
        p.skips.is_empty(),
        "the unchanged binary row is not rewritten"
    );
    assert_eq!(p.unchanged, 2);
}

#[test]
fn a_long_damage_report_is_one_line_with_the_whole_of_it_in_a_log() {
    let f = Fixture::new("report");
    fs::create_dir_all(&f.dir).unwrap();
    let report: String = (0..101)
        .map(|i| {
            format!("*** in database main ***\nPage {i}: btreeInitPage() returns error code 11\n")
        })
        .collect();
    let line = one_line(
        &f.dir,
        &format!("database damaged (integrity check: {report})"),
    );
    assert_eq!(line.lines().count(), 1, "{line}");
    assert!(line.len() < 400, "{line}");
    assert!(line.starts_with("database damaged (integrity check: *** in database main ***"));
    let log = line
        .rsplit("all of it in ")
        .next()
        .unwrap()
        .trim_end_matches(')');
    let kept = fs::read_to_string(log).unwrap();
    assert!(
        kept.contains("Page 100: btreeInitPage()"),
        "the whole report"
    );
    // A short reason is left as it is, and no log written.
    assert_eq!(one_line(&f.dir, "no root recorded"), "no root recorded");
    assert_eq!(fs::read_dir(&f.dir).unwrap().count(), 1);
}

#[test]
fn the_settings_key_reads_back_as_the_settings() {
    use lineage_origin::{Estimation, Eviction, Ties};
    let p = Params {
        k: 5,
        selector: Selector::NWin(8),
        table_size: TableSize::Bytes(12 << 10),
        bucket_entries: 16,
        eviction: Eviction::Cc,
        ties: Ties::Newest,
        estimation: Estimation::Nb,
        bridge_limit: 7,
        seed: 42,
        align: false,
    };
    assert_eq!(params_from_key(&params_key(&p)), Some(p));
    assert_eq!(
        params_from_key(&params_key(&Params::default())),
        Some(Params::default())
    );
    assert_eq!(params_from_key("k=8"), None, "all ten or nothing");
    // A key written before alignment: its nine settings, and no alignment.
    let before = params_key(&Params::default()).replace(" align=on", "");
    assert_eq!(
        params_from_key(&before),
        Some(Params {
            align: false,
            ..Params::default()
        })
    );
    assert_eq!(params_from_key(&params_key(&p).replace("cc", "zz")), None);
}

/// A full disk read "disk I/O error: Error code 4874":
/// SQLite's SQLITE_FULL, its I/O errors whose cause is ENOSPC, and a table
/// file's write with no space say plainly that the disk is full, naming
/// the index folder; other errors stay as they are.
#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_is_said_plainly_naming_the_index_folder() {
    let dir = Path::new("/data/ix");
    let sqlite = |code: i32| {
        IndexError::Db(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(code),
            None,
        ))
    };
    let said = |e: IndexError| match e {
        e @ IndexError::DiskFull { .. } => {
            let cause = std::error::Error::source(&e).map(|c| c.to_string());
            Some((e.to_string(), cause.unwrap_or_default()))
        }
        _ => None,
    };
    let enospc = libc::ENOSPC;
    // SQLITE_IOERR_SHMSIZE, SQLITE_IOERR_WRITE, SQLITE_IOERR_FSYNC.
    for code in [4874, 778, 1034] {
        let (line, cause) = said(sqlite(code).disk_full(dir, enospc)).expect("full");
        assert_eq!(line, "index /data/ix: the disk is full");
        assert!(cause.contains("No space left on device"), "{cause}");
        // The same I/O error for another cause (EIO) is not a full disk.
        assert!(said(sqlite(code).disk_full(dir, libc::EIO)).is_none());
    }
    // SQLITE_FULL, with or without the OS's word for it.
    assert!(said(sqlite(13).disk_full(dir, 0)).is_some());
    assert!(said(sqlite(13).disk_full(dir, enospc)).is_some());
    // Corruption is not.
    assert!(said(sqlite(11).disk_full(dir, enospc)).is_none());
    // A table file's write.
    let io = |e: io::Error| IndexError::Io {
        what: "cannot write the table snapshot in",
        path: dir.to_path_buf(),
        source: e,
    };
    let (line, _) = said(io(io::Error::from_raw_os_error(enospc)).disk_full(dir, 0)).expect("full");
    assert_eq!(line, "index /data/ix: the disk is full");
    assert!(said(io(io::Error::from_raw_os_error(libc::EACCES)).disk_full(dir, 0)).is_none());
}

/// Kept pairs read back after a reopen; a pair whose version's file hash is
/// no longer the one it was measured on, or whose row was damaged, is not
/// read; one naming a version the index lacks is not kept.
#[test]
fn kept_changes_read_back_only_for_the_versions_they_were_measured_on() {
    let f = Fixture::new("changes");
    f.write("a.md", "the first page, in words of its own", 10);
    f.write("b.md", "a second page with other words", 20);
    let (mut ix, _) = f.open(params());
    let mut s = ix
        .begin_sync(walk_root(&f.root), &Scope::default(), MAX, Order::Mtime)
        .unwrap();
    let reader = ix.reader(&s);
    let read: Vec<_> = s.batch().iter().map(|f| reader.read(f)).collect();
    let batch = ix.record(&mut s, read).unwrap();
    batch
        .commit(vec![(outcome(0, 7), vec![]), (outcome(1, 6), vec![])])
        .unwrap();
    ix.finish(&mut s).unwrap();
    let pairs = [
        (0, None, [0, 0, 7, 0]),
        (1, Some(0), [3, 4, 2, 1]),
        (9, None, [1, 1, 1, 1]),
    ];
    ix.put_changes(&pairs).unwrap();
    ix.put_changes(&[(1, Some(0), [3, 4, 3, 0])]).unwrap();
    drop(ix);
    let (ix, _) = f.open(params());
    let mut got = ix.changes().unwrap();
    got.sort_unstable();
    assert_eq!(
        got,
        [(0, None, [0, 0, 7, 0]), (1, Some(0), [3, 4, 3, 0])],
        "replaced, 9 left out"
    );
    let c = ix.db.conn();
    c.execute("UPDATE changes SET kept = kept + 1 WHERE id = 0", [])
        .unwrap();
    assert_eq!(
        ix.changes().unwrap(),
        [(1, Some(0), [3, 4, 3, 0])],
        "a damaged row is not read"
    );
    // Measured on another content of the base (its row whole).
    c.execute(
        "UPDATE changes SET base_hash = base_hash + 1,
                sum = lineage_row(id, base, id_hash, base_hash + 1, kept, removed, new, moved)
         WHERE id = 1",
        [],
    )
    .unwrap();
    assert!(
        ix.changes().unwrap().is_empty(),
        "another base content: not read"
    );
}
