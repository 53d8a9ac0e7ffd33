//! Helpers shared by the end-to-end tests: temp folders and the binary.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

// The temp folder (removed on drop) and the text generator every crate's
// tests use; not every test binary uses both (`dead_code` does not cover a use).
#[allow(unused_imports)]
pub use lineage_testing::{TempDir, text};

/// The binary with an empty config home and `HOME`/`XDG_DATA_HOME` under
/// `home` (so no test can touch a real data directory).
pub fn command(home: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lineage"));
    c.args(args);
    at_home(c, home)
}

fn at_home(mut c: Command, home: &Path) -> Command {
    c.env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_DATA_HOME", home.join("data"));
    c
}

/// [`command`] as a user whom `chmod 000` stops: the tests' own user, or
/// `nobody` through `setpriv` when they run as root (whom it does not).
/// The folders it writes must be open to that user.
#[cfg(target_os = "linux")]
pub fn command_unprivileged(home: &Path, args: &[&str]) -> Command {
    use std::os::unix::fs::MetadataExt;
    if std::fs::metadata("/proc/self").unwrap().uid() != 0 {
        return command(home, args);
    }
    let mut c = Command::new("setpriv");
    c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_lineage"))
        .args(args);
    at_home(c, home)
}

pub fn run(home: &Path, args: &[&str]) -> Output {
    command(home, args).output().expect("run lineage")
}

/// Run, expect success, parse stdout; stderr returned beside it.
pub fn run_json(home: &Path, args: &[&str]) -> (serde_json::Value, String) {
    let out = run(home, args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "lineage {args:?} failed: {stderr}");
    (
        serde_json::from_slice(&out.stdout).expect("JSON on stdout"),
        stderr,
    )
}

/// Expect exit status 2 with exactly one line on stderr; return it.
pub fn fails_with_one_line(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

/// Run the binary with an empty, shared config home, so a developer's own
/// config file cannot change results.
pub fn lineage(args: &[&str]) -> Output {
    let home = std::env::temp_dir().join("lineage-test-empty-config");
    std::fs::create_dir_all(&home).unwrap();
    run(&home, args)
}

/// Run and parse stdout as JSON, asserting success.
pub fn lineage_json(args: &[&str]) -> serde_json::Value {
    let out = lineage(args);
    assert!(
        out.status.success(),
        "lineage {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

/// `lineage index ROOT --json --documents --index INDEX`: the index's
/// report with every version's stored summary under `"history"`.
pub fn index_documents(root: &Path, index: &Path) -> serde_json::Value {
    lineage_json(&[
        "index",
        root.to_str().unwrap(),
        "--json",
        "--documents",
        "--index",
        index.to_str().unwrap(),
    ])
}

/// A fixture the repository owns (`tests/fixtures/`, see its README).
pub fn fixture(name: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    assert!(p.exists(), "test fixture {} is missing", p.display());
    p
}

/// A deterministic xorshift64 stream (tests only need repeatable choices).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// Uniform in `lo..hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi - lo) as u64) as usize
    }
    /// `n` made-up words (`word0`..`word2999`).
    pub fn words(&mut self, n: usize) -> Vec<String> {
        (0..n)
            .map(|_| format!("word{}", self.next() % 3000))
            .collect()
    }
    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
}

/// A short-answer plagiarism corpus in the style of Clough and Stevenson's,
/// generated: five sources (500 words from five `rust-book` chapters), then
/// 95 answers of 19 writers that copy their task's source verbatim (`cut`, the
/// source's first paragraph),
/// lightly edited (`light`), heavily edited and reordered (`heavy`), or not at
/// all (`non`). Files are named in order (`--order path`).
pub fn answers() -> TempDir {
    const CHAPTERS: [&str; 5] = [
        "00294_current__ch03-01-variables-and-mutability.md",
        "00298_current__ch03-05-control-flow.md",
        "00300_current__ch04-01-what-is-ownership.md",
        "00304_current__ch05-01-defining-structs.md",
        "00308_current__ch06-01-defining-an-enum.md",
    ];
    const KINDS: [&str; 4] = ["non", "cut", "light", "heavy"];
    let dir = TempDir::new("answers");
    let sources: Vec<Vec<String>> = CHAPTERS
        .iter()
        .map(|c| {
            let text = std::fs::read_to_string(fixture("rust-book").join(c)).unwrap();
            let words: Vec<String> = text.split_whitespace().map(str::to_owned).collect();
            words[40..540].to_vec()
        })
        .collect();
    for (t, words) in sources.iter().enumerate() {
        let task = (b'a' + t as u8) as char;
        dir.write(
            &format!("{:05}_orig_task{task}.txt", t + 1),
            words.join(" "),
        );
    }
    let mut rng = Rng::new(95);
    let mut order = 6;
    for writer in 0..19 {
        for (t, src) in sources.iter().enumerate() {
            let kind = KINDS[(writer + t) % 4];
            // A line of the writer's own, except in verbatim copies.
            let n = if kind == "cut" { 0 } else { rng.range(10, 30) };
            let mut out = rng.words(n);
            match kind {
                "non" => out.extend(rng.words(200)),
                // Writers answer the same question from the same paragraph,
                // so cut answers of one task are near duplicates of each other.
                "cut" => {
                    let (at, len) = (rng.range(0, 8), rng.range(140, 160));
                    out.extend_from_slice(&src[at..at + len]);
                    let n = rng.range(0, 6);
                    out.extend(rng.words(n));
                }
                "light" | "heavy" => {
                    let (len, p) = if kind == "light" {
                        (180, 0.08)
                    } else {
                        (220, 0.25)
                    };
                    let at = rng.range(0, src.len() - len);
                    let mut chunks: Vec<Vec<String>> = src[at..at + len]
                        .chunks(12)
                        .map(<[String]>::to_vec)
                        .collect();
                    if kind == "heavy" {
                        for i in (1..chunks.len()).rev() {
                            chunks.swap(i, rng.range(0, i + 1));
                        }
                        chunks.retain(|_| !rng.chance(0.15));
                    }
                    for w in chunks.into_iter().flatten() {
                        out.push(if rng.chance(p) {
                            rng.words(1).remove(0)
                        } else {
                            w
                        });
                    }
                }
                _ => unreachable!(),
            }
            let task = (b'a' + t as u8) as char;
            dir.write(
                &format!("{order:05}_w{writer:02}_task{task}_{kind}.txt"),
                out.join(" "),
            );
            order += 1;
        }
    }
    dir
}

/// `lineage watch ROOT --json` running, its lines parsed as they come.
pub struct Watch {
    pub child: Child,
    /// None until [`Watch::read`]: stdout is left unread (a stalled reader).
    lines: Option<Receiver<serde_json::Value>>,
}

impl Watch {
    /// Start the watcher and read its lines as they come.
    pub fn start(root: &std::path::Path, index: &std::path::Path, extra: &[&str]) -> Watch {
        let mut w = Watch::spawn(root, index, extra);
        w.read();
        w
    }

    /// Start the watcher with nobody reading its stdout yet.
    pub fn spawn(root: &std::path::Path, index: &std::path::Path, extra: &[&str]) -> Watch {
        Watch::spawn_with(command, root, index, extra)
    }

    /// [`Watch::start`] through [`command_unprivileged`].
    #[cfg(target_os = "linux")]
    pub fn start_unprivileged(
        root: &std::path::Path,
        index: &std::path::Path,
        extra: &[&str],
    ) -> Watch {
        let mut w = Watch::spawn_with(command_unprivileged, root, index, extra);
        w.read();
        w
    }

    fn spawn_with(
        command: fn(&Path, &[&str]) -> Command,
        root: &std::path::Path,
        index: &std::path::Path,
        extra: &[&str],
    ) -> Watch {
        let home = root.parent().unwrap().join("home");
        let child = command(
            &home,
            &["watch", root.to_str().unwrap(), "--json", "--index"],
        )
        .arg(index)
        .args(if extra.contains(&"--debounce-ms") {
            &[][..]
        } else {
            &["--debounce-ms", "100"][..]
        })
        .args(["--rescan-secs", "1"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
        Watch { child, lines: None }
    }

    /// Read the watcher's lines from now on.
    pub fn read(&mut self) {
        let stdout = self.child.stdout.take().expect("read once");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let v: serde_json::Value = serde_json::from_str(&line).expect("every line is JSON");
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        self.lines = Some(rx);
    }

    fn lines(&self) -> &Receiver<serde_json::Value> {
        self.lines.as_ref().expect("Watch::read first")
    }

    /// The first line matching `want` within 30 s (generous: a loaded CI
    /// machine is slow, and a line that never comes fails all the same).
    pub fn expect(
        &self,
        what: &str,
        want: impl Fn(&serde_json::Value) -> bool,
    ) -> serde_json::Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines().recv_timeout(left) {
                Ok(v) if want(&v) => return v,
                Ok(_) => {}
                Err(_) => panic!("no {what} within 30 s"),
            }
        }
    }
}

impl Watch {
    /// The lines come so far, without waiting.
    pub fn drain(&self) -> Vec<serde_json::Value> {
        self.lines().try_iter().collect()
    }

    /// Wait until no line has come for `quiet` (at most `max`); the lines seen.
    pub fn until_quiet(&self, quiet: Duration, max: Duration) -> Vec<serde_json::Value> {
        let deadline = Instant::now() + max;
        let mut seen = Vec::new();
        while let Ok(v) = self.lines().recv_timeout(quiet) {
            seen.push(v);
            assert!(
                Instant::now() < deadline,
                "lines still coming after {max:?}"
            );
        }
        seen
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A mail folder of the kind that made linear shingle keys collide: MIME
/// headers and boundaries, quoted-printable HTML parts full of hex colours
/// and small numbers (`<font color=3D"#ffffff" size=3D"5">`), replies quoting
/// earlier mails. Two of them carry the issue's own pair of short-token
/// endings, `3d 5 8` and `3d 3 b`, whose raw Rabin differences cancel
/// through x^64 + x^4 + x^3 + x + 1. Deterministic; `n` mails of ~200 tokens.
pub fn mails(n: usize) -> TempDir {
    let dir = TempDir::new("mails");
    let mut r = Rng::new(0x6d61_696c);
    let mut bodies: Vec<String> = Vec::new();
    let hex = |r: &mut Rng| format!("{:06x}", r.next() & 0xff_ffff);
    for i in 0..n {
        let mut m = format!(
            "From: user{}@example.org\nTo: list@example.org\nSubject: re {}\n\
             Message-ID: <{:016x}@mail.example.org>\nMIME-Version: 1.0\n\
             Content-Type: multipart/alternative; boundary=\"=_{:012x}\"\n\n\
             --=_{:012x}\nContent-Type: text/plain; charset=us-ascii\n\n",
            r.range(0, 40),
            r.words(3).join(" "),
            r.next(),
            r.next() & 0xffff_ffff_ffff,
            r.next() & 0xffff_ffff_ffff,
        );
        let len = r.range(20, 60);
        m.push_str(&r.words(len).join(" "));
        if i > 0 && r.chance(0.5) {
            // A reply quotes part of an earlier mail.
            let quoted = &bodies[r.range(0, bodies.len())];
            let cut: Vec<&str> = quoted.split(' ').take(40).collect();
            m.push_str("\n> ");
            m.push_str(&cut.join(" "));
        }
        m.push_str(
            "\n\n--=_boundary\nContent-Type: text/html; charset=quoted-printable\n\
                    Content-Transfer-Encoding: quoted-printable\n\n",
        );
        for _ in 0..r.range(4, 10) {
            let (colour, size, len) = (hex(&mut r), r.range(1, 8), r.range(2, 6));
            let words = r.words(len).join(" ");
            let (bg, width) = (hex(&mut r), r.range(1, 100));
            m.push_str(&format!(
                "<font color=3D\"#{colour}\" size=3D\"{size}\">{words}</font>=\n\
                 <td bgcolor=3D\"#{bg}\" width=3D{width}>\n"
            ));
        }
        if i == n / 3 {
            m.push_str("<font color=3D\"#ffffff\" size=3D\"5 8\">\n");
        }
        if i == 2 * n / 3 {
            m.push_str("<font color=3D\"#ffffff\" size=3D\"3 b\">\n");
        }
        dir.write(&format!("mail-{i:04}.txt"), &m);
        bodies.push(m);
    }
    dir
}

/// The largest resident memory of the children this test binary has
/// waited for so far, in KiB.
#[cfg(target_os = "linux")]
pub fn largest_child_rss_kib() -> i64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes the struct it is given, which outlives the call.
    let usage = unsafe {
        assert_eq!(
            libc::getrusage(libc::RUSAGE_CHILDREN, usage.as_mut_ptr()),
            0
        );
        usage.assume_init()
    };
    usage.ru_maxrss
}

/// The files of folder `from` (not its folders) into `to`, made if needed.
pub fn copy_files(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// `n` pages `p0000.md`… in `root` (made if needed): one of forty shared
/// passages each, then a tail of its own, so copies run throughout.
pub fn pages_that_copy(root: &Path, n: usize) {
    std::fs::create_dir_all(root).unwrap();
    for i in 0..n as u64 {
        let page = format!("{} {}", text(i % 40, 80), text(1000 + i, 20));
        std::fs::write(root.join(format!("p{i:04}.md")), page).unwrap();
    }
}

/// Run lineage with `home` as its home; its stdout, asserting it succeeded.
pub fn stdout_of(home: &Path, args: &[&str]) -> String {
    let out = command(home, args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The length of the longest common subsequence of `a` and `b`: the plain
/// O(n·m) table, the reference for the token diffs' kept tokens.
pub fn lcs(a: &[&str], b: &[&str]) -> u32 {
    let mut row = vec![0u32; b.len() + 1];
    for x in a {
        let mut diag = 0;
        for (j, y) in b.iter().enumerate() {
            let up = row[j + 1];
            row[j + 1] = if x == y { diag + 1 } else { up.max(row[j]) };
            diag = up;
        }
    }
    row[b.len()]
}

/// A folder a test writes, each file at the time it gives, with its index
/// in a home of its own (so the folder is only read).
pub struct Folder {
    pub dir: TempDir,
    pub home: TempDir,
    /// The index folder, for `--index`.
    pub ix: String,
}

impl Folder {
    pub fn new(tag: &str) -> Folder {
        let home = TempDir::new(&format!("{tag}-home"));
        let ix = home.path().join("ix").to_str().unwrap().to_string();
        Folder {
            dir: TempDir::new(tag),
            home,
            ix,
        }
    }

    /// Write `body` to `name`, modified `secs` seconds after a fixed time
    /// (the processing order: the earlier is the origin).
    pub fn put(&self, name: &str, body: &str, secs: u64) {
        let p = self.dir.write(name, body);
        let t = std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000 + secs);
        std::fs::File::options()
            .write(true)
            .open(p)
            .unwrap()
            .set_modified(t)
            .unwrap();
    }
}
