//! The OS watch limit reached: `lineage watch` says so and rescans on a timer.
//! Its own test binary, because it uses up this user's inotify instances
//! (`fs.inotify.max_user_instances`) while it runs, which would make any watch
//! running beside it fall back too.
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure
#![cfg(target_os = "linux")]

mod common;

use common::{TempDir, Watch};

/// Create inotify instances until the kernel refuses; closed on drop. One
/// at a time: the tests of this file would take each other's instances.
struct Exhausted(
    Vec<i32>,
    #[allow(dead_code)] std::sync::MutexGuard<'static, ()>,
);

static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

impl Exhausted {
    fn new() -> Exhausted {
        let guard = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let mut fds = Vec::new();
        for _ in 0..100_000 {
            // SAFETY: inotify_init1 takes flags and returns a new fd or -1.
            let fd = unsafe { libc::inotify_init1(libc::IN_CLOEXEC) };
            if fd < 0 {
                break;
            }
            fds.push(fd);
        }
        Exhausted(fds, guard)
    }
}

impl Drop for Exhausted {
    fn drop(&mut self) {
        for &fd in &self.0 {
            // SAFETY: fd came from inotify_init1 and is closed once.
            unsafe { libc::close(fd) };
        }
    }
}

/// Only a small per-user limit can be used up from here (a large one meets
/// this process's file limit first, which `lineage` does not share).
fn can_exhaust() -> bool {
    let max: usize = std::fs::read_to_string("/proc/sys/fs/inotify/max_user_instances")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(usize::MAX);
    if max > 512 {
        eprintln!("max_user_instances is {max}: cannot exhaust it, test not run");
    }
    max <= 512
}

/// A folder `docs/` holding `a.md`, with this user's inotify instances used
/// up; None where they cannot be (see [`can_exhaust`]).
fn folder_without_inotify(tag: &str) -> Option<(TempDir, std::path::PathBuf, Exhausted)> {
    if !can_exhaust() {
        return None;
    }
    let dir = TempDir::new(tag);
    let root = dir.path().join("docs");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("a.md"), "the first page of the folder").unwrap();
    let limit = Exhausted::new();
    assert!(
        !limit.0.is_empty(),
        "could create no inotify instance at all"
    );
    Some((dir, root, limit))
}

#[test]
fn without_inotify_watch_rescans_on_a_timer_and_says_so() {
    let Some((dir, root, limit)) = folder_without_inotify("fallback") else {
        return;
    };
    let w = Watch::start(&root, &dir.path().join("index"), &[]);
    let e = w.expect("the fallback", |v| v["event"] == "error");
    let msg = e["message"].as_str().unwrap();
    assert!(
        msg.starts_with("cannot watch") && msg.contains("rescanning every 1 s instead"),
        "{msg}"
    );
    w.expect("a.md", |v| v["event"] == "version" && v["path"] == "a.md");
    // The timed rescans find a new file with no OS event at all.
    std::fs::write(root.join("b.md"), "the second page of the folder").unwrap();
    w.expect("b.md", |v| v["event"] == "version" && v["path"] == "b.md");
    drop(limit);
}

#[test]
fn timed_rescans_wait_for_a_file_being_written() {
    let Some((dir, root, limit)) = folder_without_inotify("settle") else {
        return;
    };
    // Rescans every second; a file is settled 2.5 s after its last write.
    let w = Watch::start(&root, &dir.path().join("index"), &["--debounce-ms", "2500"]);
    w.expect("the fallback", |v| v["event"] == "error");
    w.expect("a.md", |v| v["event"] == "version" && v["path"] == "a.md");
    // Half a page, a pause spanning rescan ticks, then the rest.
    let page = root.join("slow.md");
    std::fs::write(&page, "words written first ".repeat(20)).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1600));
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&page)
        .unwrap();
    std::io::Write::write_all(&mut f, "words written later ".repeat(20).as_bytes()).unwrap();
    drop(f);
    let v = w.expect("slow.md", |v| {
        v["event"] == "version" && v["path"] == "slow.md"
    });
    assert_eq!(v["version"], 1, "{v}");
    // Recorded once, whole: 120 tokens, none of them half a page.
    drop(w);
    drop(limit);
    let v = common::index_documents(&root, &dir.path().join("index"));
    let slow: Vec<_> = v["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["path"] == "slow.md")
        .collect();
    assert_eq!(slow.len(), 1, "{slow:?}");
    assert_eq!(slow[0]["tokens"], 120);
}

#[test]
fn timed_rescans_go_on_while_commands_keep_arriving() {
    use lineage_config::Config;
    use lineage_engine::{Command, Engine, Options, Update, Watching};
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    let Some((dir, root, limit)) = folder_without_inotify("busy") else {
        return;
    };
    let mut config = Config::default();
    config.watch.rescan_secs = 1;
    config.watch.debounce_ms = 100;
    let (tx, rx) = mpsc::channel();
    // What the binary sets first thing (watch asks leases).
    lineage_source::watch::ignore_lease_signal();
    let engine = Engine::start(
        Options {
            root: root.clone(),
            index_dir: dir.path().join("index"),
            config,
            memory: Default::default(),
        },
        move |u| {
            let _ = tx.send(u);
        },
    );
    let has = |rx: &mpsc::Receiver<Update>, path: &str, engine: &Engine| {
        let end = Instant::now() + Duration::from_secs(8);
        while Instant::now() < end {
            // A person at work: a query every 200 ms, each resetting any timeout.
            engine.send(Command::Origin {
                id: 0,
                exact: false,
            });
            while let Ok(u) = rx.recv_timeout(Duration::from_millis(200)) {
                if let Update::Snapshot(s) = u {
                    assert!(matches!(
                        s.watching,
                        Watching::Rescanning(_) | Watching::Starting
                    ));
                    if s.documents.iter().any(|d| *d.path == *path) {
                        return true;
                    }
                }
            }
        }
        false
    };
    assert!(has(&rx, "a.md", &engine));
    std::fs::write(root.join("b.md"), "the second page of the folder").unwrap();
    assert!(
        has(&rx, "b.md", &engine),
        "no rescan found b.md while queries arrived"
    );
    drop(engine);
    drop(limit);
}
