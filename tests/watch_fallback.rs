//! The OS watch limit reached: `lineage watch` says so and rescans on a timer.
//! Its own test binary, because it uses up this user's inotify instances
//! (`fs.inotify.max_user_instances`) while it runs, which would make any watch
//! running beside it fall back too.
#![cfg(target_os = "linux")]

mod common;

use common::{TempDir, Watch};

/// Create inotify instances until the kernel refuses; closed on drop.
struct Exhausted(Vec<i32>);

impl Exhausted {
    fn new() -> Exhausted {
        let mut fds = Vec::new();
        for _ in 0..100_000 {
            // SAFETY: inotify_init1 takes flags and returns a new fd or -1.
            let fd = unsafe { libc::inotify_init1(libc::IN_CLOEXEC) };
            if fd < 0 {
                break;
            }
            fds.push(fd);
        }
        Exhausted(fds)
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

#[test]
fn without_inotify_watch_rescans_on_a_timer_and_says_so() {
    // Only a small per-user limit can be used up from here (a large one
    // meets this process's file limit first, which `lineage` does not share).
    let max: usize = std::fs::read_to_string("/proc/sys/fs/inotify/max_user_instances")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(usize::MAX);
    if max > 512 {
        eprintln!("max_user_instances is {max}: cannot exhaust it, test not run");
        return;
    }
    let dir = TempDir::new("fallback");
    let root = dir.path().join("docs");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("a.md"), "the first page of the folder").unwrap();
    let limit = Exhausted::new();
    assert!(
        !limit.0.is_empty(),
        "could create no inotify instance at all"
    );
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
