//! `LINEAGE_BENCH_SCALE=100000 cargo bench --bench scale`: the issue-15
//! figures on a generated tree of N pages of ~300 words (near-duplicate
//! families and copied passages: `benches/common/mod.rs`), the release
//! binary and the default settings (64 MiB table):
//!
//! - `index`: `lineage index ROOT --json` from scratch (wall time, peak RSS
//!   from `/usr/bin/time -f %M`, the index's size on disk);
//! - `reopen`: the same on the unchanged folder, `files_read == 0` asserted,
//!   median of 7;
//! - `json`: `lineage watch ROOT --json`, spawn to the line of a page
//!   written right after the spawn (the first time on the index: every
//!   page's sketch and near-duplicate pairs are computed and stored; then
//!   again, restored); one existing page changed to its line on stdout;
//!   idle CPU ticks in 20 s; VmHWM;
//! - `tui`: `lineage watch ROOT` in a 120×40 tmux terminal: spawn to the
//!   Documents pane listing pages; one page changed to the status bar
//!   naming it (`last change … PATH`); idle ticks; VmHWM;
//! - `engine`: in process, as `benches/index.rs` does: `Command::Changed`
//!   with the path (the debounced event, as the watcher sends it) to the
//!   published snapshot holding the new version;
//! - `pairs`: `lineage pairs ROOT --min-similarity 0.5 --json` (killed after
//!   `LINEAGE_BENCH_SCALE_PAIRS_TIMEOUT` seconds, default 900).
//!
//! Without `LINEAGE_BENCH_SCALE` it only says how to run it. The tree is
//! made once in `LINEAGE_BENCH_SCALE_DIR` (default `$TMPDIR/lineage-scale-N`)
//! and kept for the next run (a `manifest` beside `root/` names it); the
//! index is rebuilt there by the `index` step. `LINEAGE_BENCH_SCALE_ONLY=
//! index,reopen,json,tui,engine,pairs` runs some steps (later steps then use
//! the index as it is). Pages the benchmark edits or adds are put back as
//! they were when it ends, a failure included; tmux servers and watchers it
//! started are killed.
//!
//! `LINEAGE_BENCH_SCALE_SHAPE=copies` or `windows` runs the same steps on
//! the issue-23 shapes (`benches/common/mod.rs`: N copies of one page, N
//! overlapping windows of one text, ~10 copies of each), where the first `watch` start's target
//! is 3 × the `index` step's time and the peak RSS 200 MiB (copies) or
//! 1 GiB (windows); their tree is `$TMPDIR/lineage-scale-SHAPE-N`.
//!
//! `cargo bench --bench scale -- generate DIR [N [SEED [SHAPE]]]` only
//! writes a tree.
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

mod common;

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

use common::{Shape, Spec};
use lineage_config::Config;
use lineage_engine::{self as engine, Engine, Options, Update};

const SEED: u64 = 15;
const BIN: &str = env!("CARGO_BIN_EXE_lineage");
/// The default table, for the RSS target (the table plus 512 MiB).
const TABLE_MIB: u64 = 64;
/// Quiet window of the watchers here: the change timings include it.
const DEBOUNCE_MS: u64 = 10;
const EDITS: usize = 9;
/// More than the engine's quiet time before it saves the table (10 s).
const CHECKPOINT: Duration = Duration::from_secs(12);

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    if args.first().map(String::as_str) == Some("generate") {
        let dir = PathBuf::from(args.get(1).expect("generate DIR [N [SEED]]"));
        let n = args.get(2).map_or(100_000, |v| v.parse().expect("N"));
        let seed = args.get(3).map_or(SEED, |v| v.parse().expect("SEED"));
        let shape = args
            .get(4)
            .map_or(Shape::Pages, |v| Shape::parse(v).expect("SHAPE"));
        let spec = Spec::shaped(shape, n, seed);
        let t = Instant::now();
        let made = common::generate(&dir, &spec);
        println!(
            "{}{made:?}\nin {:.1} s",
            spec.manifest(),
            t.elapsed().as_secs_f64()
        );
        return;
    }
    let Some(n) = std::env::var("LINEAGE_BENCH_SCALE")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
    else {
        println!(
            "scale: skipped (minutes long); LINEAGE_BENCH_SCALE=100000 cargo bench --bench scale"
        );
        return;
    };
    let only = std::env::var("LINEAGE_BENCH_SCALE_ONLY").ok();
    let step = |s: &str| only.as_deref().is_none_or(|o| o.split(',').any(|x| x == s));
    let shape = std::env::var("LINEAGE_BENCH_SCALE_SHAPE").map_or(Shape::Pages, |v| {
        Shape::parse(&v).expect("LINEAGE_BENCH_SCALE_SHAPE: pages, copies or windows")
    });
    let base = std::env::var_os("LINEAGE_BENCH_SCALE_DIR").map_or_else(
        || {
            std::env::temp_dir().join(match shape {
                Shape::Pages => format!("lineage-scale-{n}"),
                other => format!("lineage-scale-{}-{n}", other.name()),
            })
        },
        PathBuf::from,
    );
    let root = base.join("root");
    let index = base.join("index");
    let home = base.join("home");
    fs::create_dir_all(home.join("config")).unwrap();
    let spec = Spec::shaped(shape, n, SEED);
    let manifest = base.join("manifest");
    if fs::read_to_string(&manifest).ok().as_deref() != Some(&spec.manifest()) {
        let _ = fs::remove_dir_all(&root);
        let _ = fs::remove_file(&manifest);
        let t = Instant::now();
        let made = common::generate(&root, &spec);
        fs::write(&manifest, spec.manifest()).unwrap();
        println!("generated in {:.1} s: {made:?}", t.elapsed().as_secs_f64());
    }
    let (files, bytes) = tree_size(&root);
    println!(
        "machine: {} cores, load average {}; tree: {} ({files} files, {:.1} MB); {}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        loadavg(),
        root.display(),
        bytes as f64 / 1e6,
        spec.manifest().trim()
    );
    let mut env = Env {
        docs: n,
        shape,
        indexed: None,
        home,
        root,
        index,
    };
    // Everything edited is put back when this ends, however it ends.
    let mut restore = Restore(Vec::new());
    let mut rows: Vec<[String; 3]> = Vec::new();

    if step("index") {
        let _ = fs::remove_dir_all(&env.index);
        let (took, rss, v) = env.index_run();
        assert_eq!(v["files_read"], n as u64, "{v}");
        env.indexed = Some(took);
        let (db, total) = index_size(&env.index);
        rows.push([
            "`lineage index ROOT` from scratch".into(),
            format!("{:.1} s, peak RSS {} MiB", took.as_secs_f64(), rss / 1024),
            format!(
                "RSS < {} MiB: {}",
                TABLE_MIB + 512,
                yes(rss / 1024 < TABLE_MIB + 512)
            ),
        ]);
        rows.push([
            "index on disk".into(),
            format!(
                "{:.0} MB (index.db {:.0} MB, table.snapshot {:.0} MB)",
                total as f64 / 1e6,
                db as f64 / 1e6,
                (total - db) as f64 / 1e6
            ),
            String::new(),
        ]);
        print_last(&rows, 2);
    }
    if step("reopen") {
        if !step("index") {
            env.index_run();
        }
        let mut times: Vec<Duration> = (0..7)
            .map(|_| {
                let (took, _, v) = env.index_run();
                assert_eq!(v["files_read"], 0, "an unchanged folder is not read: {v}");
                took
            })
            .collect();
        let m = median(&mut times);
        rows.push([
            "reopen of the unchanged index (`lineage index ROOT --json`, `files_read == 0`), median of 7".into(),
            spread(&times),
            format!("< 1 s: {}", yes(m < Duration::from_secs(1))),
        ]);
        print_last(&rows, 1);
    }
    if step("json") {
        json_watch(&env, &mut restore, &mut rows);
    }
    if step("tui") {
        tui(&env, &mut restore, &mut rows);
    }
    if step("engine") {
        engine_edits(&env, &mut restore, &mut rows);
    }
    if step("pairs") {
        pairs(&env, &mut rows);
    }
    drop(restore);
    println!("\nload average at the end: {}\n", loadavg());
    println!("| measure ({n} pages) | ours | target |");
    println!("| --- | --- | --- |");
    for r in &rows {
        println!("| {} | {} | {} |", r[0], r[1], r[2]);
    }
}

struct Env {
    docs: usize,
    shape: Shape,
    /// The `index` step's time, when it ran.
    indexed: Option<Duration>,
    home: PathBuf,
    root: PathBuf,
    index: PathBuf,
}

impl Env {
    /// The binary with a home of its own: no config of the person running.
    fn lineage(&self) -> Command {
        let mut c = Command::new(BIN);
        self.vars(&mut c);
        c
    }

    fn vars(&self, c: &mut Command) {
        c.env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join("config"))
            .env("XDG_DATA_HOME", self.home.join("data"));
    }

    /// `lineage index ROOT --json`: wall time, peak RSS in KiB, the JSON.
    fn index_run(&self) -> (Duration, u64, serde_json::Value) {
        let mut c = Command::new("/usr/bin/time");
        let rss = self.home.join("time.out");
        c.arg("-f").arg("%M").arg("-o").arg(&rss).arg(BIN);
        self.vars(&mut c);
        c.args(["index", self.root.to_str().unwrap(), "--json", "--index"])
            .arg(&self.index);
        let t = Instant::now();
        let out = c.output().expect("/usr/bin/time and the binary");
        let took = t.elapsed();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let kib = fs::read_to_string(&rss)
            .unwrap()
            .trim()
            .parse()
            .unwrap_or(0);
        (took, kib, serde_json::from_slice(&out.stdout).unwrap())
    }

    /// The first `watch` start's bound: 30 s on pages; on the other shapes
    /// 3 × `index` from scratch (issue 23), when that step ran.
    fn start_limit(&self) -> Option<Duration> {
        match self.shape {
            Shape::Pages => Some(Duration::from_secs(30)),
            _ => self.indexed.map(|t| 3 * t),
        }
    }

    /// A watcher's peak RSS bound, MiB.
    fn rss_limit(&self) -> u64 {
        match self.shape {
            Shape::Pages => TABLE_MIB + 512,
            Shape::Copies => 200,
            Shape::Windows => 1024,
        }
    }

    /// The path of a page, relative to the root (the `i % docs`-th).
    fn page(&self, i: usize) -> String {
        let i = i % self.docs;
        format!("f{:04}/p{i:06}.md", i / 100)
    }
}

/// A page's bytes and mtime before the benchmark changed it (None: added).
type Before = Option<(Vec<u8>, SystemTime)>;

/// Pages changed or added by the benchmark, put back on drop.
struct Restore(Vec<(PathBuf, Before)>);

impl Restore {
    /// Change an existing page (a sentence added), or add a new one.
    fn write(&mut self, path: &Path, text: &str) {
        if !self.0.iter().any(|(p, _)| p == path) {
            let old = fs::read(path)
                .ok()
                .map(|b| (b, fs::metadata(path).unwrap().modified().unwrap()));
            self.0.push((path.to_path_buf(), old));
        }
        fs::write(path, text).unwrap();
    }

    fn edit(&mut self, path: &Path, what: &str) {
        let mut text = fs::read_to_string(path).unwrap();
        text.push_str(&format!("\nAn edit, {what}, new words.\n"));
        self.write(path, &text);
    }
}

impl Drop for Restore {
    fn drop(&mut self) {
        for (p, old) in self.0.drain(..) {
            match old {
                Some((bytes, mtime)) => {
                    let _ = fs::write(&p, bytes);
                    if let Ok(f) = fs::File::options().write(true).open(&p) {
                        let _ = f.set_modified(mtime);
                    }
                }
                None => {
                    let _ = fs::remove_file(&p);
                }
            }
        }
    }
}

/// A child process killed on drop, with its own children (`/usr/bin/time`
/// runs lineage as its child).
struct Kill(Child);

impl Drop for Kill {
    fn drop(&mut self) {
        let pid = self.0.id();
        let children =
            fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
        for c in children.split_whitespace() {
            let _ = Command::new("kill").args(["-KILL", c]).status();
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `watch --json`, with the default debounce window (200 ms) or another.
fn spawn_json(env: &Env, debounce_ms: Option<u64>) -> Kill {
    let mut c = env.lineage();
    c.args(["watch", env.root.to_str().unwrap(), "--json", "--index"])
        .arg(&env.index);
    if let Some(ms) = debounce_ms {
        c.args(["--debounce-ms", &ms.to_string()]);
    }
    Kill(
        c.stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    )
}

/// Lines of a child's stdout, read on a thread.
fn lines(child: &mut Kill) -> mpsc::Receiver<String> {
    let out = child.0.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for l in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    rx
}

fn wait_line(rx: &mpsc::Receiver<String>, what: &str, limit: Duration) {
    let end = Instant::now() + limit;
    loop {
        let left = end.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(l) if l.contains(what) => return,
            Ok(_) => {}
            Err(e) => panic!("no line naming {what} within {limit:?}: {e}"),
        }
    }
}

/// `watch --json`: start (first time on the index, then restored), idle
/// CPU and VmHWM of the last one started (default settings); one changed
/// page to its line, on a watcher with a debounce window of 10 ms.
fn json_watch(env: &Env, restore: &mut Restore, rows: &mut Vec<[String; 3]>) {
    let mut starts = Vec::new();
    let mut hwm = 0;
    let mut kept = None;
    for run in 0..4 {
        drop(kept.take());
        let t = Instant::now();
        let mut child = spawn_json(env, None);
        let probe = env.root.join(format!("f0000/probe{run}.md"));
        restore.write(&probe, &format!("a probe page, number {run}, new words"));
        let rx = lines(&mut child);
        wait_line(&rx, &format!("probe{run}.md"), Duration::from_secs(3600));
        starts.push(t.elapsed());
        println!("json start {run}: {:.2} s", starts[run].as_secs_f64());
        hwm = hwm.max(vm_hwm(child.0.id()));
        // Killed after its idle checkpoint, so the next start finds the
        // table saved (an interrupted `watch --json` saves nothing).
        std::thread::sleep(CHECKPOINT);
        kept = Some((child, rx));
    }
    let first = starts.remove(0);
    rows.push([
        "`watch --json` start, first time on the index (every page's sketch and links computed and stored): spawn to the line of a page written right after the spawn".into(),
        format!("{:.1} s", first.as_secs_f64()),
        env.start_limit().map_or("(no `index` step to compare with)".into(), |limit| {
            format!("< {:.1} s: {}", limit.as_secs_f64(), yes(first < limit))
        }),
    ]);
    let m = median(&mut starts);
    rows.push([
        "`watch --json` start again (restored), median of 3".into(),
        spread(&starts),
        format!("< 30 s: {}", yes(m < Duration::from_secs(30))),
    ]);
    print_last(rows, 2);
    let (child, _rx) = kept.unwrap();
    let ticks = idle(child.0.id());
    hwm = hwm.max(vm_hwm(child.0.id()));
    drop(child);
    rows.push([
        "`watch --json` idle (default settings): CPU ticks (1/100 s) in 20 s".into(),
        ticks.to_string(),
        format!("≤ 10: {}", yes(ticks <= 10)),
    ]);
    print_last(rows, 1);

    let mut child = spawn_json(env, Some(DEBOUNCE_MS));
    let rx = lines(&mut child);
    let probe = env.root.join("f0000/probe-ready.md");
    restore.write(&probe, "a probe page, ready, new words");
    wait_line(&rx, "probe-ready.md", Duration::from_secs(600));
    std::thread::sleep(Duration::from_secs(2));
    let mut times = Vec::new();
    for e in 0..EDITS {
        let rel = env.page(1_000 + e * 9_871);
        let path = env.root.join(&rel);
        let t = Instant::now();
        restore.edit(&path, &format!("json {e}"));
        wait_line(&rx, &rel, Duration::from_secs(60));
        times.push(t.elapsed());
        std::thread::sleep(Duration::from_millis(300));
    }
    hwm = hwm.max(vm_hwm(child.0.id()));
    change_rows(
        env,
        rows,
        format!(
            "`watch --json --debounce-ms {DEBOUNCE_MS}`: one page changed (written and closed) to its line on stdout, median of {EDITS}"
        ),
        &mut times,
        "`watch --json` peak RSS (VmHWM), the most of any watcher above",
        hwm,
    );
}

/// The rows of one change to screen (`times`) and of the watcher's peak
/// RSS (`hwm`, KiB), against their targets; printed as they are made.
fn change_rows(
    env: &Env,
    rows: &mut Vec<[String; 3]>,
    change: String,
    times: &mut [Duration],
    rss: &str,
    hwm: u64,
) {
    let m = median(times);
    rows.push([
        change,
        spread(times),
        format!(
            "< 50 ms after the debounced event: {} (this includes the {DEBOUNCE_MS} ms window)",
            yes(m < Duration::from_millis(50 + DEBOUNCE_MS))
        ),
    ]);
    rows.push([
        rss.into(),
        format!("{} MiB", hwm / 1024),
        format!(
            "< {} MiB: {}",
            env.rss_limit(),
            yes(hwm / 1024 < env.rss_limit())
        ),
    ]);
    print_last(rows, 2);
}

/// CPU ticks (user + system) of `pid` in 20 s, after its idle checkpoint
/// (the table is saved after 10 quiet seconds).
fn idle(pid: u32) -> u64 {
    std::thread::sleep(CHECKPOINT);
    let before = ticks(pid);
    std::thread::sleep(Duration::from_secs(20));
    ticks(pid) - before
}

fn ticks(pid: u32) -> u64 {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let f: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

/// Peak resident set, KiB.
fn vm_hwm(pid: u32) -> u64 {
    fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// A tmux server of its own (a private socket), killed on drop.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn ok(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux");
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn screen(&self) -> String {
        self.ok(&["capture-pane", "-p", "-t", "s"])
    }

    /// The pane's process: lineage itself (started with `exec`).
    fn pid(&self) -> Option<u32> {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(["display-message", "-p", "-t", "s", "#{pane_pid}"])
            .output()
            .ok()?;
        String::from_utf8_lossy(&out.stdout).trim().parse().ok()
    }

    /// Poll the screen until `want`; the time it was first seen.
    fn wait(&self, what: &str, limit: Duration, want: impl Fn(&str) -> bool) -> Instant {
        let end = Instant::now() + limit;
        loop {
            let s = self.screen();
            if want(&s) {
                return Instant::now();
            }
            assert!(Instant::now() < end, "no {what} within {limit:?}:\n{s}");
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let pid = self.pid();
        // Quit as a person does (`q`: the table is saved), then the server.
        let _ = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(["send-keys", "-t", "s", "q"])
            .output();
        if let Some(pid) = pid {
            let end = Instant::now() + Duration::from_secs(30);
            while Path::new(&format!("/proc/{pid}")).exists() && Instant::now() < end {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        let _ = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
        // The index is free once lineage has exited (it saves the table
        // when its terminal goes away).
        if let Some(pid) = pid {
            let end = Instant::now() + Duration::from_secs(30);
            while Path::new(&format!("/proc/{pid}")).exists() && Instant::now() < end {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
}

/// The TUI in a 120×40 tmux terminal.
fn start_tui(env: &Env, run: usize, debounce_ms: Option<u64>) -> (Tmux, Instant) {
    let t = Tmux {
        socket: format!("lineage-scale-{}-{run}", std::process::id()),
    };
    // `exec`: the pane's process is lineage itself (its pid for /proc).
    let debounce = debounce_ms.map_or(String::new(), |ms| format!("--debounce-ms {ms}"));
    let command = format!(
        "exec {BIN} watch {} --index {} {debounce} 2>{}",
        env.root.display(),
        env.index.display(),
        env.home.join("tui-stderr").display()
    );
    let var = |k: &str, v: &Path| format!("{k}={}", v.display());
    let (h, c, d) = (
        var("HOME", &env.home),
        var("XDG_CONFIG_HOME", &env.home.join("config")),
        var("XDG_DATA_HOME", &env.home.join("data")),
    );
    let started = Instant::now();
    t.ok(&[
        "-f",
        "/dev/null",
        "new-session",
        "-d",
        "-s",
        "s",
        "-x",
        "120",
        "-y",
        "40",
        "-e",
        &h,
        "-e",
        &c,
        "-e",
        &d,
        &command,
    ]);
    (t, started)
}

/// A row of the Documents pane naming a page.
fn lists_pages(s: &str) -> bool {
    s.lines()
        .any(|l| l.starts_with('│') && l.contains("/p0") && l.contains(".md"))
}

fn tui(env: &Env, restore: &mut Restore, rows: &mut Vec<[String; 3]>) {
    let mut starts = Vec::new();
    let mut kept = None;
    for run in 0..3 {
        // The previous one first quits (it holds the index).
        drop(kept.take());
        let (t, started) = start_tui(env, run, None);
        let seen = t.wait("pages listed", Duration::from_secs(3600), lists_pages);
        starts.push(seen - started);
        println!("tui start {run}: {:.2} s", starts[run].as_secs_f64());
        kept = Some(t);
    }
    let m = median(&mut starts);
    rows.push([
        "TUI (`lineage watch ROOT` in tmux, 120×40): spawn to the Documents pane listing pages, median of 3".into(),
        spread(&starts),
        format!("< 30 s: {}", yes(m < Duration::from_secs(30))),
    ]);
    print_last(rows, 1);
    let t = kept.unwrap();
    let pid = t.pid().expect("the TUI's pid");
    let ticks = idle(pid);
    let mut hwm = vm_hwm(pid);
    drop(t);
    rows.push([
        "TUI idle (default settings): CPU ticks in 20 s".into(),
        ticks.to_string(),
        format!("≤ 10: {}", yes(ticks <= 10)),
    ]);
    print_last(rows, 1);

    let (t, _) = start_tui(env, 9, Some(DEBOUNCE_MS));
    t.wait("pages listed", Duration::from_secs(600), lists_pages);
    t.wait("watching", Duration::from_secs(600), |s| {
        // Rescanning every 2 s instead (the OS's inotify limits reached,
        // by other processes too): the timings would not be those of events.
        assert!(!s.contains("cannot watch"), "not watching:\n{s}");
        s.contains("watching")
    });
    let pid = t.pid().expect("the TUI's pid");
    std::thread::sleep(Duration::from_secs(2));
    let mut times = Vec::new();
    for e in 0..EDITS {
        let rel = env.page(2_000 + e * 9_871);
        let path = env.root.join(&rel);
        let t0 = Instant::now();
        restore.edit(&path, &format!("tui {e}"));
        let seen = t.wait(
            "the change in the status bar",
            Duration::from_secs(60),
            |s| {
                s.lines()
                    .any(|l| l.contains("last change") && l.contains(&rel))
            },
        );
        times.push(seen - t0);
        std::thread::sleep(Duration::from_millis(300));
    }
    hwm = hwm.max(vm_hwm(pid));
    change_rows(
        env,
        rows,
        format!(
            "TUI, `--debounce-ms {DEBOUNCE_MS}`: one page changed (written and closed) to the status bar naming it (`last change … PATH`, polled with `tmux capture-pane` every ~2 ms), median of {EDITS}"
        ),
        &mut times,
        "TUI peak RSS (VmHWM), the most of the two TUIs above",
        hwm,
    );
}

/// In process: the debounced event (`Command::Changed`) to the snapshot.
fn engine_edits(env: &Env, restore: &mut Restore, rows: &mut Vec<[String; 3]>) {
    let mut config = Config::default();
    // No events of its own: a poller that never ticks.
    config.watch.poll = true;
    config.watch.rescan_secs = 3600;
    let (tx, rx) = mpsc::channel();
    let t = Instant::now();
    // What the binary sets first thing (watch asks leases).
    lineage_source::watch::ignore_lease_signal();
    let engine = Engine::start(
        Options {
            root: env.root.clone(),
            index_dir: env.index.clone(),
            config,
            memory: Default::default(),
        },
        move |u| {
            let _ = tx.send(u);
        },
    );
    let mut last = loop {
        match rx.recv().expect("engine") {
            Update::Snapshot(s) if s.progress.is_none() && !s.documents.is_empty() => break s,
            Update::Fatal(m) => panic!("{m}"),
            _ => {}
        }
    };
    println!(
        "engine start (in process): {:.2} s",
        t.elapsed().as_secs_f64()
    );
    let root = fs::canonicalize(&env.root).unwrap();
    let version = |s: &engine::Snapshot, rel: &str| {
        s.documents
            .iter()
            .find(|d| *d.path == *rel)
            .map_or(0, |d| d.version)
    };
    let mut times = Vec::new();
    for e in 0..EDITS {
        let rel = env.page(3_000 + e * 9_871);
        let path = root.join(&rel);
        let before = version(&last, &rel);
        restore.edit(&path, &format!("engine {e}"));
        let t = Instant::now();
        engine.send(engine::Command::Changed(vec![path]));
        last = loop {
            match rx.recv().expect("engine") {
                Update::Snapshot(s) if version(&s, &rel) > before => break s,
                Update::Fatal(m) => panic!("{m}"),
                _ => {}
            }
        };
        times.push(t.elapsed());
    }
    drop(engine);
    let m = median(&mut times);
    rows.push([
        format!(
            "engine, in process: the debounced event (`Command::Changed` with the path) to the published snapshot holding the new version, median of {EDITS}"
        ),
        spread(&times),
        format!("< 50 ms: {}", yes(m < Duration::from_millis(50))),
    ]);
    print_last(rows, 1);
}

fn pairs(env: &Env, rows: &mut Vec<[String; 3]>) {
    let limit = std::env::var("LINEAGE_BENCH_SCALE_PAIRS_TIMEOUT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(900);
    let out = env.home.join("pairs.json");
    let rss = env.home.join("pairs-time.out");
    let mut c = Command::new("/usr/bin/time");
    c.arg("-f").arg("%M").arg("-o").arg(&rss).arg(BIN);
    env.vars(&mut c);
    c.args([
        "pairs",
        env.root.to_str().unwrap(),
        "--min-similarity",
        "0.5",
        "--json",
    ])
    .stdout(fs::File::create(&out).unwrap())
    .stderr(Stdio::null());
    let t = Instant::now();
    let mut child = Kill(c.spawn().unwrap());
    let end = t + Duration::from_secs(limit);
    let status = loop {
        if let Some(s) = child.0.try_wait().unwrap() {
            break Some(s);
        }
        if Instant::now() > end {
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let took = t.elapsed();
    let row = match status {
        Some(s) => {
            assert!(s.success(), "pairs failed");
            let v: serde_json::Value = serde_json::from_slice(&fs::read(&out).unwrap()).unwrap();
            let kib: u64 = fs::read_to_string(&rss)
                .unwrap()
                .trim()
                .parse()
                .unwrap_or(0);
            println!("pairs stats: {}", v["stats"]);
            format!(
                "{:.1} s, {} pairs in {} clusters, peak RSS {} MiB",
                took.as_secs_f64(),
                v["pairs"].as_array().map_or(0, Vec::len),
                v["clusters"].as_array().map_or(0, Vec::len),
                kib / 1024
            )
        }
        None => format!("not done in {limit} s (killed)"),
    };
    rows.push([
        "`lineage pairs ROOT --min-similarity 0.5 --json` (the default method: minhash LSH, verified)".into(),
        row,
        format!(
            "< 10 s: {}",
            yes(status.is_some() && took < Duration::from_secs(10))
        ),
    ]);
    print_last(rows, 1);
    let _ = fs::remove_file(&out);
}

fn yes(b: bool) -> &'static str {
    if b { "yes" } else { "**no**" }
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// "median (min–max)", of sorted times.
fn spread(v: &[Duration]) -> String {
    let f = |d: Duration| {
        if d < Duration::from_secs(1) {
            format!("{:.0} ms", d.as_secs_f64() * 1e3)
        } else {
            format!("{:.2} s", d.as_secs_f64())
        }
    };
    format!(
        "**{}** ({}–{})",
        f(v[v.len() / 2]),
        f(v[0]),
        f(v[v.len() - 1])
    )
}

fn print_last(rows: &[[String; 3]], k: usize) {
    for r in &rows[rows.len() - k..] {
        println!("| {} | {} | {} |", r[0], r[1], r[2]);
    }
}

fn loadavg() -> String {
    fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split(' ')
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Files and bytes under `dir`.
fn tree_size(dir: &Path) -> (u64, u64) {
    let mut files = 0;
    let mut bytes = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let m = e.metadata().unwrap();
            if m.is_dir() {
                stack.push(e.path());
            } else {
                files += 1;
                bytes += m.len();
            }
        }
    }
    (files, bytes)
}

/// index.db's size and the whole index folder's.
fn index_size(dir: &Path) -> (u64, u64) {
    let db = fs::metadata(dir.join("index.db")).map_or(0, |m| m.len());
    (db, tree_size(dir).1)
}
