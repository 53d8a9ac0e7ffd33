//! `scan --hosts FILE --process I`: processes on localhost, each reading
//! every n-th file and owning a range of the table's buckets, give the
//! report of one process byte for byte; a process missing, different or
//! killed ends the run with one line naming it, and nothing hangs.
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

mod common;

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{TempDir, fails_with_one_line, fixture, lineage};

/// A host file of `n` free ports on localhost.
fn hosts(dir: &TempDir, n: usize) -> (String, Vec<String>) {
    let hosts = lineage_testing::free_ports(n);
    let file = dir.write("hosts", hosts.join("\n") + "\n");
    (file.to_str().unwrap().to_string(), hosts)
}

fn process(root: &Path, hosts: &str, i: usize, extra: &[&str]) -> Child {
    let home = std::env::temp_dir().join("lineage-test-empty-config");
    std::fs::create_dir_all(&home).unwrap();
    Command::new(env!("CARGO_BIN_EXE_lineage"))
        .args(["scan", root.to_str().unwrap(), "--hosts", hosts])
        .args(["--process", &i.to_string()])
        .args(extra)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Every process of a run; their outputs, process 0 first.
fn run(root: &Path, n: usize, extra: &[&str]) -> Vec<Output> {
    let dir = TempDir::new("cluster");
    let (file, _) = hosts(&dir, n);
    let children: Vec<Child> = (0..n).map(|i| process(root, &file, i, extra)).collect();
    children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect()
}

/// The book with files left out at its start and in its middle, so that
/// each process sees only some of the skips.
fn book_with_skips() -> TempDir {
    let dir = TempDir::new("cluster-book");
    common::copy_files(&fixture("rust-book"), dir.path());
    let binary: Vec<u8> = (0..4096u32).map(|i| (i * 7 % 256) as u8).collect();
    dir.write("aa-binary.md", &binary);
    dir.write("ch05-binary.md", &binary);
    dir
}

#[test]
fn two_and_three_processes_write_the_report_of_one() {
    let book = book_with_skips();
    for settings in [
        &["--workers", "1"][..],
        &["--workers", "2", "--table-size", "64KiB"],
        &[
            "--workers",
            "1",
            "--table-size",
            "64KiB",
            "--eviction",
            "lru",
        ],
    ] {
        let mut args = vec!["scan", book.path().to_str().unwrap(), "--json"];
        args.extend(settings);
        let one = lineage(&args);
        assert!(one.status.success());
        let report: serde_json::Value = serde_json::from_slice(&one.stdout).unwrap();
        assert_eq!(report["skipped"].as_array().unwrap().len(), 2);
        for n in [2, 3] {
            let mut extra = vec!["--json"];
            extra.extend(settings);
            let outs = run(book.path(), n, &extra);
            for (i, o) in outs.iter().enumerate() {
                let err = String::from_utf8_lossy(&o.stderr);
                assert!(
                    o.status.success(),
                    "{settings:?}, process {i} of {n}: {err}"
                );
                if i > 0 {
                    assert!(o.stdout.is_empty(), "only process 0 writes");
                    assert!(err.contains("process 0"), "{err}");
                }
            }
            assert!(
                outs[0].stdout == one.stdout,
                "{settings:?}: {n} processes differ from one"
            );
        }
    }
}

#[test]
fn a_process_that_is_not_started_is_named_at_the_deadline() {
    let book = fixture("rust-book");
    let dir = TempDir::new("cluster-missing");
    let (file, hosts) = hosts(&dir, 2);
    let out = process(&book, &file, 0, &["--connect-timeout", "1"])
        .wait_with_output()
        .unwrap();
    let line = fails_with_one_line(&out);
    assert!(
        line.contains("process 1") && line.contains(&hosts[1]),
        "{line}"
    );
}

#[test]
fn processes_with_other_settings_are_refused() {
    let book = fixture("rust-book");
    let dir = TempDir::new("cluster-differ");
    let (file, _) = hosts(&dir, 2);
    let a = process(&book, &file, 0, &["--connect-timeout", "30"]);
    let b = process(
        &book,
        &file,
        1,
        &["--connect-timeout", "30", "--table-size", "1MiB"],
    );
    for out in [a.wait_with_output().unwrap(), b.wait_with_output().unwrap()] {
        let line = fails_with_one_line(&out);
        assert!(line.contains("other settings"), "{line}");
    }
}

#[test]
fn bad_host_files_and_places_are_clear_errors() {
    let book = fixture("rust-book");
    let book = book.to_str().unwrap();
    let dir = TempDir::new("cluster-bad");
    let (file, _) = hosts(&dir, 2);
    let line = fails_with_one_line(&lineage(&[
        "scan",
        book,
        "--hosts",
        &file,
        "--process",
        "2",
    ]));
    assert!(
        line.contains("--process 2") && line.contains("2 processes"),
        "{line}"
    );
    let bad = dir.write("bad", "localhost\n");
    let line = fails_with_one_line(&lineage(&[
        "scan",
        book,
        "--hosts",
        bad.to_str().unwrap(),
        "--process",
        "0",
    ]));
    assert!(line.contains("host:port"), "{line}");
    let line = fails_with_one_line(&lineage(&[
        "scan",
        book,
        "--hosts",
        &file,
        "--process",
        "0",
        "--eviction",
        "lucky",
    ]));
    assert!(line.contains("lucky"), "{line}");
    // A FIFO named as the host file is refused, not waited on.
    let fifo = dir.path().join("fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let line = fails_with_one_line(&lineage(&[
        "scan",
        book,
        "--hosts",
        fifo.to_str().unwrap(),
        "--process",
        "0",
    ]));
    assert!(line.contains("--hosts"), "{line}");
}

/// A process killed mid-run: the other ends at once with a line naming it
/// (timely has no fault tolerance), instead of waiting forever.
#[test]
fn a_process_killed_mid_run_ends_the_other_with_its_name() {
    let dir = TempDir::new("cluster-kill");
    let root = TempDir::new("cluster-kill-docs");
    // Enough text that the run lasts several seconds on two cores (four
    // on this one, in a debug build; killed at 0.7 s).
    for d in 0..800u64 {
        root.write(&format!("d{d:03}.md"), common::text(d % 150, 6000));
    }
    let (file, hosts) = hosts(&dir, 2);
    let args = ["--workers", "1", "--connect-timeout", "20"];
    let a = process(root.path(), &file, 0, &args);
    let mut b = process(root.path(), &file, 1, &args);
    std::thread::sleep(Duration::from_millis(700));
    b.kill().unwrap();
    b.wait().unwrap();
    let started = Instant::now();
    let out = a.wait_with_output().unwrap();
    assert!(started.elapsed() < Duration::from_secs(60), "no hang");
    let line = fails_with_one_line(&out);
    assert!(
        line.contains("process 1") && line.contains(&hosts[1]),
        "{line}"
    );
}

/// A thousand workers asked of each of two processes: no more threads
/// than a process's share of the table's ranges (each took 1.6 GB and
/// 36 s for the 20-page demo), and the report of one process.
#[cfg(target_os = "linux")]
#[test]
fn a_thousand_workers_a_process_cost_what_the_table_can_use() {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo");
    let outs = run(&demo, 2, &["--json", "--workers", "1024"]);
    assert!(outs.iter().all(|o| o.status.success()), "{outs:?}");
    let one = lineage(&["scan", demo.to_str().unwrap(), "--json"]);
    assert!(outs[0].stdout == one.stdout);
    let rss = common::largest_child_rss_kib();
    assert!(rss < 512 << 10, "{rss} KiB");
}
