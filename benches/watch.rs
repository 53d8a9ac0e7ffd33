//! `cargo bench --bench watch`: `lineage watch --json` left running on
//! generated trees of 10,000 and 50,000 small pages (100 per folder).
//!
//! - start: from spawning `watch` on an up-to-date index to the line of a
//!   page written right after the spawn (open, walk, watch, one event),
//!   median of 5, beside `find ROOT -type f` over the same tree (the walk
//!   alone) run in alternation;
//! - idle: CPU ticks (user + system, 1/100 s) the watcher uses in 20 s with
//!   nothing changing, after its idle checkpoint, and the syscalls it makes.
//!
//! `LINEAGE_BENCH_WATCH=10000,50000` sets the tree sizes.
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn main() {
    let sizes: Vec<usize> = std::env::var("LINEAGE_BENCH_WATCH")
        .unwrap_or_else(|_| "10000,50000".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    println!(
        "machine: {} cores\n",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!(
        "| pages | start, median (min–max) | find, median | start / find | idle ticks in 20 s |"
    );
    println!("| --- | --- | --- | --- | --- |");
    for n in sizes {
        let base =
            std::env::temp_dir().join(format!("lineage-bench-watch-{n}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&base);
        let root = base.join("root");
        let index = base.join("index");
        generate(&root, n);
        let status = lineage(&base)
            .args(["index", root.to_str().unwrap(), "--json", "--index"])
            .arg(&index)
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
        let mut starts = Vec::new();
        let mut finds = Vec::new();
        for run in 0..5 {
            starts.push(start(&base, &root, &index, run));
            let t = Instant::now();
            let out = Command::new("find")
                .arg(&root)
                .args(["-type", "f"])
                .output()
                .unwrap();
            assert!(out.status.success());
            finds.push(t.elapsed());
        }
        let ticks = idle(&base, &root, &index);
        let (s, f) = (median(&mut starts), median(&mut finds));
        println!(
            "| {n} | {:.2} s ({:.2}–{:.2}) | {:.3} s | {:.1} × | {ticks} |",
            s.as_secs_f64(),
            starts[0].as_secs_f64(),
            starts[starts.len() - 1].as_secs_f64(),
            f.as_secs_f64(),
            s.as_secs_f64() / f.as_secs_f64()
        );
        let _ = fs::remove_dir_all(&base);
    }
}

fn lineage(base: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lineage"));
    c.env("HOME", base)
        .env("XDG_CONFIG_HOME", base.join("config"))
        .env("XDG_DATA_HOME", base.join("data"));
    c
}

fn watch(base: &Path, root: &Path, index: &Path) -> Child {
    lineage(base)
        .args(["watch", root.to_str().unwrap(), "--json", "--index"])
        .arg(index)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Spawn to the line of a page written right after the spawn.
fn start(base: &Path, root: &Path, index: &Path, run: usize) -> Duration {
    let t = Instant::now();
    let mut child = watch(base, root, index);
    let probe = format!("probe{run}.md");
    fs::write(
        root.join(&probe),
        format!("a probe page, number {run}, new words"),
    )
    .unwrap();
    let lines = BufReader::new(child.stdout.take().unwrap()).lines();
    for line in lines {
        if line.unwrap().contains(&probe) {
            break;
        }
    }
    let took = t.elapsed();
    let _ = child.kill();
    let _ = child.wait();
    took
}

/// CPU ticks in 20 idle seconds, after the first walk and the checkpoint.
fn idle(base: &Path, root: &Path, index: &Path) -> u64 {
    let mut child = watch(base, root, index);
    std::thread::sleep(Duration::from_secs(15));
    let before = ticks(child.id());
    std::thread::sleep(Duration::from_secs(20));
    let used = ticks(child.id()) - before;
    let _ = child.kill();
    let _ = child.wait();
    used
}

fn ticks(pid: u32) -> u64 {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let f: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// `n` pages of ~60 words, 100 to a folder.
fn generate(root: &Path, n: usize) -> PathBuf {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for i in 0..n {
        let dir = root.join(format!("d{:04}", i / 100));
        if i % 100 == 0 {
            fs::create_dir_all(&dir).unwrap();
        }
        let words: Vec<String> = (0..60)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                format!("w{}", x % 20_000)
            })
            .collect();
        fs::write(dir.join(format!("p{i:06}.md")), words.join(" ")).unwrap();
    }
    root.to_path_buf()
}
