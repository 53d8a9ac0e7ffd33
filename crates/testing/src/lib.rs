//! What the tests of every lineage crate share: a dev-dependency only, with
//! no dependency of its own, so any crate's unit tests can use it.

#![warn(missing_docs)]
#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

/// A fresh folder under the system's temp folder, removed with all in it on
/// drop: also when the test fails, as its panic unwinds. Named by `tag`, the
/// process and a count, so tests running at once never share one.
pub struct TempDir(
    /// The folder's path.
    pub PathBuf,
);

impl TempDir {
    /// Create the folder, empty (a stale one of the same name is removed
    /// first).
    pub fn new(tag: &str) -> TempDir {
        static N: AtomicU32 = AtomicU32::new(0);
        let p = std::env::temp_dir().join(format!(
            "lineage-test-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("a temp folder");
        TempDir(p)
    }

    /// The folder's path.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// Write `content` to `rel` inside, making its folders; its path.
    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let p = self.0.join(rel);
        std::fs::create_dir_all(p.parent().expect("a file inside")).expect("its folder");
        std::fs::write(&p, content).expect("the file written");
        p
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `n` words of a deterministic text (`w0`..`w4999`, xorshift from
/// `seed`): distinct paragraphs per seed.
pub fn text(seed: u64, n: usize) -> String {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            format!("w{}", x % 5000)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Run `test` on a thread of its own and fail, instead of hanging, when it
/// has not finished within `limit`: for tests of code that must never block
/// (a FIFO opened without a writer blocks forever, and a regression there
/// would stall the whole run). Its panic is the test's.
pub fn within<T: Send + 'static>(limit: Duration, test: impl FnOnce() -> T + Send + 'static) -> T {
    let (finished, done) = mpsc::channel();
    let test = std::thread::spawn(move || {
        let r = test();
        let _ = finished.send(());
        r
    });
    match done.recv_timeout(limit) {
        // Disconnected: it panicked.
        Ok(()) | Err(RecvTimeoutError::Disconnected) => match test.join() {
            Ok(r) => r,
            Err(panic) => std::panic::resume_unwind(panic),
        },
        Err(RecvTimeoutError::Timeout) => {
            panic!("still running after {limit:?}: a wait where none may be")
        }
    }
}

/// `n` addresses on localhost free a moment ago (`127.0.0.1:port`), for
/// processes a test starts to listen on: each port is held until all are
/// chosen, so no two are the same.
pub fn free_ports(n: usize) -> Vec<String> {
    let held: Vec<std::net::TcpListener> = (0..n)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").expect("a free port on localhost"))
        .collect();
    held.iter()
        .map(|l| l.local_addr().expect("a bound port's address").to_string())
        .collect()
}

/// The shape of a generated collection ([`collection`]): one document in
/// `copy_one_in` is a whole copy of an earlier one; the others are
/// `min_len + r % len_span` keys long, built of runs of `min_run + r %
/// run_span` keys.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// About one document in this many is a whole copy of an earlier one.
    pub copy_one_in: u64,
    /// The fewest keys in a document that is not a whole copy.
    pub min_len: u64,
    /// How many lengths above `min_len` a document may have.
    pub len_span: u64,
    /// The fewest keys in a run.
    pub min_run: u64,
    /// How many lengths above `min_run` a run may have.
    pub run_span: u64,
}

/// Documents as 62-bit keys, what the origin pass sees: whole copies of
/// earlier documents, runs copied from earlier non-empty ones, repeats
/// inside a document, and fresh runs (key n is `mix(n ^ salt) >> 2`). The
/// draws are `mix` iterated from `seed`: pass the project's `splitmix64`
/// (this crate depends on nothing).
pub fn collection(
    seed: u64,
    salt: u64,
    n_docs: usize,
    shape: Shape,
    mix: fn(u64) -> u64,
) -> Vec<Vec<u64>> {
    let mut docs: Vec<Vec<u64>> = Vec::with_capacity(n_docs);
    // The documents a run may be copied from.
    let mut nonempty: Vec<usize> = Vec::new();
    let (mut rng, mut fresh) = (seed, 0u64);
    let mut next = move || {
        rng = mix(rng);
        rng
    };
    for d in 0..n_docs {
        if d > 0 && next() % shape.copy_one_in == 0 {
            let src = (next() % d as u64) as usize;
            docs.push(docs[src].clone());
        } else {
            let len = (shape.min_len + next() % shape.len_span) as usize;
            let mut keys = Vec::with_capacity(len);
            while keys.len() < len {
                let run = (shape.min_run + next() % shape.run_span) as usize;
                let choice = next() % 10;
                if !nonempty.is_empty() && choice < 4 {
                    let src: &Vec<u64> = &docs[nonempty[(next() % nonempty.len() as u64) as usize]];
                    let at = (next() % src.len() as u64) as usize;
                    keys.extend(src[at..].iter().take(run).copied());
                } else if choice == 4 && !keys.is_empty() {
                    let at = (next() % keys.len() as u64) as usize;
                    let rep: Vec<u64> = keys[at..].iter().take(run).copied().collect();
                    keys.extend(rep);
                } else {
                    for _ in 0..run {
                        fresh += 1;
                        keys.push(mix(fresh ^ salt) >> 2);
                    }
                }
            }
            keys.truncate(len);
            docs.push(keys);
        }
        if !docs[d].is_empty() {
            nonempty.push(d);
        }
    }
    docs
}

/// A git repository the tests make, driven by the `git` command with no
/// configuration of the person's (no global or system config, a fixed
/// author), each commit at a time the test gives.
pub struct Git {
    /// The work tree.
    pub dir: PathBuf,
    /// Seconds since the epoch of the next commit (each one a day later).
    next: std::cell::Cell<i64>,
}

impl Git {
    /// `git init` at `dir` (made if missing), branch `main`.
    pub fn init(dir: &Path) -> Git {
        std::fs::create_dir_all(dir).expect("the work tree");
        let g = Git {
            dir: dir.to_path_buf(),
            next: std::cell::Cell::new(1_577_836_800),
        };
        g.run(&["init", "-q", "-b", "main"]);
        g
    }

    /// Run `git ARGS` in the work tree; its stdout. Panics on failure.
    pub fn run(&self, args: &[&str]) -> String {
        let t = self.next.get().to_string();
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(&self.dir)
            .args([
                "-c",
                "user.name=Ada Lovelace",
                "-c",
                "user.email=ada@example.org",
            ])
            .args(args)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_DATE", format!("@{t} +0000"))
            .env("GIT_COMMITTER_DATE", format!("@{t} +0000"))
            .output()
            .expect("git runs (is it installed?)");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Write `content` to `rel` in the work tree (not staged).
    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) {
        let p = self.dir.join(rel);
        std::fs::create_dir_all(p.parent().expect("a file inside")).expect("its folder");
        std::fs::write(&p, content).expect("the file written");
    }

    /// Stage everything and commit it as `subject` (empty commits too); the
    /// commit's id.
    pub fn commit(&self, subject: &str) -> String {
        self.run(&["add", "-A"]);
        self.run(&["commit", "-q", "--allow-empty", "-m", subject]);
        self.next.set(self.next.get() + 86_400);
        self.run(&["rev-parse", "HEAD"]).trim().to_string()
    }
}

/// A small tmpfs mounted at `dir` (made if missing), unmounted on drop:
/// a disk that fills up. None where mounting is not allowed (not root).
pub fn small_tmpfs(dir: &Path, size: &str) -> Option<Mounted> {
    std::fs::create_dir_all(dir).ok()?;
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
        .arg(dir)
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    mounted.then(|| Mounted(dir.to_path_buf()))
}

/// A mount of [`small_tmpfs`], undone on drop.
pub struct Mounted(PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// Make a FIFO at `path` (`mkfifo`), for the tests of what lineage does
/// with one where a file should be.
pub fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo").arg(path).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo {}", path.display());
}

#[cfg(test)]
mod tests {
    use super::{TempDir, text, within};
    use std::time::Duration;

    #[test]
    fn a_temp_dir_is_removed_when_its_test_fails() {
        let mut kept = std::path::PathBuf::new();
        let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let t = TempDir::new("drop");
            let f = t.write("a/b.md", "text");
            assert_eq!(std::fs::read_to_string(f).unwrap(), "text");
            kept = t.path().to_path_buf();
            panic!("the test fails");
        }));
        assert!(failed.is_err());
        assert!(!kept.as_os_str().is_empty() && !kept.exists());
        assert_ne!(TempDir::new("n").0, TempDir::new("n").0);
    }

    #[test]
    fn text_is_the_same_for_a_seed() {
        assert_eq!(text(7, 50), text(7, 50));
        assert_ne!(text(7, 50), text(8, 50));
        assert_eq!(text(1, 3).split(' ').count(), 3);
    }

    #[test]
    fn a_test_that_finishes_gives_its_result() {
        assert_eq!(within(Duration::from_secs(5), || 6 * 7), 42);
    }

    #[test]
    #[should_panic(expected = "a wait where none may be")]
    fn a_test_that_hangs_fails_at_the_limit() {
        within(Duration::from_millis(50), || {
            std::thread::sleep(Duration::from_secs(3600));
        });
    }

    #[test]
    #[should_panic(expected = "its own failure")]
    fn a_test_that_fails_fails_with_its_own_panic() {
        within(Duration::from_secs(5), || panic!("its own failure"));
    }
}
