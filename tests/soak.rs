//! A soak test of `lineage watch --json`, with OS events and polling: a
//! random script of what happens to a docs folder — creates, edits written
//! with pauses, renames, folder moves, hard links (a second name, or a move
//! by link and unlink; a folder holding a page and its link, moved whole),
//! deletions, FIFOs swapped in for files, names that
//! are not UTF-8, and `kill -9` restarts of the watcher, every other one right after
//! `index.db-wal` was removed under it, the others with `index.db` then
//! truncated (and `lineage index` saying how much history that lost) —
//! then checks that
//!
//! - the watcher's index was up to date (a later `lineage index` reads
//!   nothing) and its live documents equal a fresh index of the folder;
//! - every version it recorded has content that some file had when its
//!   writer closed it (nothing half written);
//! - every version it reported is in the history as reported (no history
//!   lost silently: a removed log is copied into the database first);
//! - no history split in two where the lines show both halves (a page
//!   deleted whose last content is another path's first version, no
//!   second name holding it): a net for lost renames, not proof that every
//!   rename kept its history (the targeted tests in `watch_life.rs` and the
//!   indexer's are that); and every name of a file is current (the
//!   catch-up `index` reads nothing);
//! - nothing hung (every wait is bounded).
//!
//! The short form runs with the tests. The long form, minutes of it:
//!
//! ```sh
//! LINEAGE_SOAK_OPS=3000 cargo test --release --test soak -- --nocapture
//! ```
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

mod common;

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{TempDir, Watch, text};
use lineage_core::fingerprint::polynomial;
use serde_json::Value;

/// xorshift64*: the script is the same for the same seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The folder under test and every content a writer closed.
struct Folder {
    root: PathBuf,
    files: Vec<PathBuf>,
    closed: HashSet<u64>,
    /// Contents that two names had at once (hard links).
    twins: HashSet<u64>,
    seed: u64,
}

impl Folder {
    fn content(&mut self) -> Vec<u8> {
        self.seed += 1;
        text(self.seed, 40 + (self.seed % 7) as usize * 20).into_bytes()
    }

    fn name(&mut self, rng: &mut Rng) -> PathBuf {
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            let folder = ["", "a/", "b/", "a/deep/"][rng.below(4)];
            let mut n = format!("{folder}p{}", rng.next() % 100_000).into_bytes();
            if rng.below(5) == 0 {
                n.extend_from_slice(b"\xff\xfe");
            }
            n.extend_from_slice(b".md");
            self.root.join(std::ffi::OsStr::from_bytes(&n))
        }
        #[cfg(not(unix))]
        self.root.join(format!("p{}.md", rng.next() % 100_000))
    }

    /// Write a whole file, sometimes in two parts with a pause between.
    fn write(&mut self, path: &Path, rng: &mut Rng) {
        let body = self.content();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut f = std::fs::File::create(path).unwrap();
        if rng.below(3) == 0 {
            let cut = body.len() / 2;
            f.write_all(&body[..cut]).unwrap();
            std::thread::sleep(Duration::from_millis(50 + rng.below(400) as u64));
            f.write_all(&body[cut..]).unwrap();
        } else {
            f.write_all(&body).unwrap();
        }
        drop(f);
        let hash = polynomial::standard().fingerprint(&body, 1);
        self.closed.insert(hash);
        if links(path) > 1 {
            self.twins.insert(hash);
        }
    }

    fn pick(&mut self, rng: &mut Rng) -> Option<PathBuf> {
        self.files.retain(|p| p.is_file());
        (!self.files.is_empty()).then(|| self.files[rng.below(self.files.len())].clone())
    }

    /// One random thing happening to the folder.
    fn step(&mut self, rng: &mut Rng) {
        match rng.below(12) {
            0..=2 => {
                let p = self.name(rng);
                self.write(&p, rng);
                self.files.push(p);
            }
            3..=4 => {
                if let Some(p) = self.pick(rng) {
                    self.write(&p, rng);
                }
            }
            5 => {
                if let Some(p) = self.pick(rng) {
                    let to = self.name(rng);
                    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
                    if std::fs::rename(&p, &to).is_ok() {
                        self.files.push(to);
                    }
                }
            }
            6 => {
                // A folder moved (or back).
                let (a, b) = (self.root.join("a"), self.root.join("moved-a"));
                let (from, to) = if a.exists() { (a, b) } else { (b, a) };
                if from.exists() && std::fs::rename(&from, &to).is_ok() {
                    self.files = self
                        .files
                        .iter()
                        .map(|p| match p.strip_prefix(&from) {
                            Ok(rest) => to.join(rest),
                            Err(_) => p.clone(),
                        })
                        .collect();
                }
            }
            7 => {
                if let Some(p) = self.pick(rng) {
                    std::fs::remove_file(&p).unwrap();
                }
            }
            8 => self.fifo_swap(rng),
            10 => {
                // A second name, and half the time the first one gone: a
                // move by link and unlink.
                if let Some(p) = self.pick(rng) {
                    let to = self.name(rng);
                    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
                    if std::fs::hard_link(&p, &to).is_ok() {
                        let body = std::fs::read(&to).unwrap();
                        self.twins
                            .insert(polynomial::standard().fingerprint(&body, 1));
                        self.files.push(to);
                        if rng.below(2) == 0 {
                            std::fs::remove_file(&p).unwrap();
                        }
                    }
                }
            }
            11 => {
                // A folder holding a page and its hard link, made, then
                // moved whole (and back): one file identity, two names.
                let (a, b) = (self.root.join("pair-a"), self.root.join("pair-b"));
                if !a.exists() && !b.exists() {
                    std::fs::create_dir_all(&a).unwrap();
                    let (x, h) = (a.join("x.md"), a.join("h.md"));
                    self.write(&x, rng);
                    std::fs::hard_link(&x, &h).unwrap();
                    let body = std::fs::read(&x).unwrap();
                    self.twins
                        .insert(polynomial::standard().fingerprint(&body, 1));
                    self.files.extend([x, h]);
                } else {
                    let (from, to) = if a.exists() { (a, b) } else { (b, a) };
                    if std::fs::rename(&from, &to).is_ok() {
                        for p in &mut self.files {
                            if let Ok(rest) = p.strip_prefix(&from) {
                                *p = to.join(rest);
                            }
                        }
                    }
                }
            }
            _ => {
                // An editor's save: a hidden temp file renamed over the page.
                if let Some(p) = self.pick(rng) {
                    let tmp = p.with_file_name(".save.tmp");
                    self.write(&tmp, rng);
                    std::fs::rename(&tmp, &p).unwrap();
                }
            }
        }
    }

    /// A FIFO where a document was, for a while; then a file again.
    fn fifo_swap(&mut self, rng: &mut Rng) {
        #[cfg(unix)]
        if let Some(p) = self.pick(rng) {
            std::fs::remove_file(&p).unwrap();
            let ok = std::process::Command::new("mkfifo")
                .arg(&p)
                .status()
                .is_ok_and(|s| s.success());
            if ok {
                std::thread::sleep(Duration::from_millis(300));
                std::fs::remove_file(&p).unwrap();
            }
            self.write(&p, rng);
        }
        #[cfg(not(unix))]
        let _ = rng;
    }
}

/// How many names the file at `path` has.
fn links(path: &Path) -> u64 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).map_or(1, |m| m.nlink())
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        1
    }
}

/// path (its exact bytes, hex or UTF-8) → content hash of live documents.
fn live(report: &Value) -> HashMap<String, String> {
    report["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["status"] == "live")
        .map(|h| {
            let name = h.get("path_hex").unwrap_or(&h["path"]);
            (
                name.as_str().unwrap().to_string(),
                h["hash"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// `index.db` truncated to nothing (its log and shared memory gone too):
/// the next `lineage index` rebuilds from the files and says how many
/// versions of the history that lost.
fn truncate_and_be_told(dir: &TempDir, root: &Path, index: &Path) {
    std::fs::File::create(index.join("index.db")).unwrap();
    for f in ["index.db-wal", "index.db-shm"] {
        let _ = std::fs::remove_file(index.join(f));
    }
    let out = common::run(
        &dir.path().join("home"),
        &[
            "index",
            root.to_str().unwrap(),
            "--index",
            index.to_str().unwrap(),
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("missing or empty beside a table of") && err.contains("lost"),
        "{err}"
    );
}

/// Lost renames among the lines `seen`: a page deleted whose last content
/// is the first version of another path (before or after: its history
/// split in two where it should have moved). Every write is new content, so
/// only a move gives a path another's content, or a second name (`twins`:
/// contents that two names had at once, left out).
fn lost_renames(seen: &[Value], history: &[Value], twins: &HashSet<u64>) -> Vec<String> {
    let hash = |v: &Value| {
        let h = &history[v["id"].as_u64().unwrap() as usize]["hash"];
        u64::from_str_radix(h.as_str().unwrap(), 16).unwrap()
    };
    let mut last: HashMap<String, u64> = HashMap::new();
    // Content → the paths deleted with it as their last.
    let mut deleted: HashMap<u64, Vec<String>> = HashMap::new();
    let mut first = Vec::new();
    for v in seen {
        let path = v["path"].as_str().unwrap_or_default().to_string();
        match v["event"].as_str() {
            Some("version") => {
                let h = hash(v);
                if v["version"] == 1 {
                    first.push((path.clone(), h));
                }
                last.insert(path, h);
            }
            Some("renamed") => {
                if let Some(h) = last.remove(v["from"].as_str().unwrap()) {
                    last.insert(path, h);
                }
            }
            Some("deleted") => {
                if let Some(h) = last.remove(&path) {
                    deleted.entry(h).or_default().push(path);
                }
            }
            _ => {}
        }
    }
    first
        .into_iter()
        .filter(|(_, h)| !twins.contains(h))
        .filter_map(|(to, h)| {
            // A page made and later deleted is no split history.
            let from = deleted.get(&h)?.iter().find(|&from| *from != to)?;
            // Every line about that content, to tell what happened.
            let lines: Vec<String> = seen
                .iter()
                .filter(|v| {
                    v.get("id").is_some_and(|_| v["event"] == "version") && hash(v) == h
                        || [&v["path"], &v["from"]].iter().any(|p| {
                            p.as_str() == Some(from.as_str()) || p.as_str() == Some(to.as_str())
                        })
                })
                .map(|v| v.to_string().chars().take(200).collect())
                .collect();
            Some(format!("{from} -> {to}: {lines:#?}"))
        })
        .collect()
}

#[test]
fn a_random_life_of_a_folder_ends_as_a_fresh_index_of_it() {
    soak("soak", &[], 120);
}

/// The same life watched by polling, which sees a rename as a removal and
/// a creation.
#[test]
fn a_random_life_of_a_polled_folder_ends_as_a_fresh_index_of_it() {
    soak("soak-poll", &["--poll"], 60);
}

fn soak(tag: &str, extra: &[&str], default_ops: usize) {
    let ops: usize = std::env::var("LINEAGE_SOAK_OPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default_ops);
    let dir = TempDir::new(tag);
    let root = dir.path().join("docs");
    std::fs::create_dir_all(&root).unwrap();
    let index = dir.path().join("index");
    let mut folder = Folder {
        root: root.clone(),
        files: Vec::new(),
        closed: HashSet::new(),
        twins: HashSet::new(),
        seed: 0,
    };
    let mut rng = Rng(0x005E_ED0F_50A4);
    let mut w = Watch::start(&root, &index, extra);
    let mut seen = w.until_quiet(Duration::from_secs(1), Duration::from_secs(30));
    for i in 0..ops {
        folder.step(&mut rng);
        if i % 40 == 39 && i + 1 < ops {
            if i % 80 == 39 {
                // The write-ahead log removed under the watcher: what it
                // held must reach index.db within a tick (1 s here).
                let _ = std::fs::remove_file(index.join("index.db-wal"));
                seen.extend(w.until_quiet(Duration::from_millis(2500), Duration::from_secs(60)));
            }
            // kill -9, and back.
            seen.extend(w.drain());
            drop(w);
            if i % 80 == 79 {
                truncate_and_be_told(&dir, &root, &index);
                // That history is gone, and was said to be.
                seen.clear();
            }
            w = Watch::start(&root, &index, extra);
        }
    }
    // A last page proves the watcher is up and has caught up to here; files
    // held for a quiet writer are released within QUIET_WRITE (5 s) more.
    let marker = root.join("zz-last.md");
    folder.write(&marker, &mut rng);
    seen.push(w.expect("the last page", |v| {
        v["event"] == "version" && v["path"] == "zz-last.md"
    }));
    let lines = w.until_quiet(Duration::from_secs(6), Duration::from_secs(120));
    assert!(
        !lines.iter().any(|v| v["event"] == "error"),
        "no errors: {lines:?}"
    );
    seen.extend(lines);
    drop(w);

    let kept = common::index_documents(&root, &index);
    assert_eq!(kept["files_read"], 0, "the watcher kept up: {kept}");
    let fresh = common::index_documents(&root, &dir.path().join("fresh"));
    assert_eq!(live(&kept), live(&fresh), "live documents as a fresh index");
    let history = kept["history"].as_array().unwrap();
    let lost = lost_renames(&seen, history, &folder.twins);
    assert!(lost.is_empty(), "renames that lost their history: {lost:?}");
    for h in history {
        let hash = u64::from_str_radix(h["hash"].as_str().unwrap(), 16).unwrap();
        assert!(
            folder.closed.contains(&hash),
            "a version nobody closed (half written?): {h}"
        );
    }
    // A version lost would leave its id to another, with another outcome
    // (expect() skipped some lines: those are not checked).
    for v in seen.iter().filter(|v| v["event"] == "version") {
        let h = &history[v["id"].as_u64().unwrap() as usize];
        let (fresh, tokens) = (
            h["fresh_tokens"].as_f64().unwrap(),
            h["tokens"].as_f64().unwrap(),
        );
        let percent = if tokens == 0.0 {
            100.0
        } else {
            100.0 * fresh / tokens
        };
        assert!(
            (percent - v["fresh_percent"].as_f64().unwrap()).abs() < 0.051,
            "reported {v}, kept {h}"
        );
    }
    eprintln!(
        "soak: {ops} operations, {} versions, {} live documents",
        kept["versions"], kept["documents"]
    );
}
