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
    process_in(None, root, hosts, i, extra)
}

/// [`process`] started in folder `cwd` (a relative `root` is then its own).
fn process_in(cwd: Option<&Path>, root: &Path, hosts: &str, i: usize, extra: &[&str]) -> Child {
    let home = std::env::temp_dir().join("lineage-test-empty-config");
    std::fs::create_dir_all(&home).unwrap();
    let mut c = Command::new(env!("CARGO_BIN_EXE_lineage"));
    c.args(["scan", root.to_str().unwrap(), "--hosts", hosts])
        .args(["--process", &i.to_string()])
        .args(extra)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(cwd) = cwd {
        c.current_dir(cwd);
    }
    c.spawn().unwrap()
}

/// `child`'s output once it ends, within `limit`: past it the child is
/// killed and the test fails (no test waits forever).
fn bounded(mut child: Child, limit: Duration) -> Output {
    use std::io::Read;
    let drain = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut r) = r {
                r.read_to_end(&mut bytes).unwrap();
            }
            bytes
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|r| Box::new(r) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|r| Box::new(r) as Box<dyn Read + Send>),
    );
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            let err = String::from_utf8_lossy(&err.join().unwrap()).into_owned();
            panic!("still running after {limit:?}; stderr: {err}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// Enough text that a run over two processes lasts several seconds (a
/// debug build on two cores).
fn long_run() -> TempDir {
    let root = TempDir::new("cluster-long-docs");
    for d in 0..800u64 {
        root.write(&format!("d{d:03}.md"), common::text(d % 150, 6000));
    }
    root
}

/// Wait (60 s at most) until `child`'s report reaches its standard output
/// (past the first 64 KiB it buffers: mid-run); what it writes in all is
/// the thread's to give.
fn until_report_begins(child: &mut Child) -> std::thread::JoinHandle<Vec<u8>> {
    use std::io::Read;
    let mut stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let (mut all, mut buf) = (Vec::new(), vec![0u8; 1 << 16]);
        loop {
            let n = stdout.read(&mut buf).unwrap();
            if n == 0 {
                return all;
            }
            all.extend_from_slice(&buf[..n]);
            let _ = tx.send(());
        }
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("the report began within 60 s");
    reader
}

/// Wait (60 s at most) until a file in `dir` holds something: a report
/// written there has begun.
fn until_file_begins(dir: &Path) {
    let started = Instant::now();
    while !std::fs::read_dir(dir)
        .unwrap()
        .any(|e| e.unwrap().metadata().unwrap().len() > 0)
    {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no report begun"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[cfg(unix)]
fn signal(child: &Child, sig: &str) {
    let pid = child.id().to_string();
    let ok = Command::new("kill").args([sig, &pid]).status().unwrap();
    assert!(ok.success(), "kill {sig} {pid}");
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

/// The same host:port on two lines: the second process cannot listen
/// there and the first would wait for it; every process refuses at once,
/// naming the lines.
#[test]
fn a_host_named_twice_is_refused_by_every_process_at_once() {
    let book = fixture("rust-book");
    let dir = TempDir::new("cluster-twice");
    let hosts = lineage_testing::free_ports(2);
    let file = dir.write(
        "hosts",
        format!("{}\n{}\n{}\n", hosts[0], hosts[1], hosts[0]),
    );
    let file = file.to_str().unwrap();
    let args = ["--connect-timeout", "60"];
    let children: Vec<Child> = (0..3).map(|i| process(&book, file, i, &args)).collect();
    for c in children {
        let line = fails_with_one_line(&bounded(c, Duration::from_secs(15)));
        assert!(
            line.contains("line 3") && line.contains("line 1") && line.contains(&hosts[0]),
            "{line}"
        );
    }
}

/// Another seed of the token fingerprints is another answer: refused, as
/// every setting that can change an answer is (the settings' own test:
/// `cli::scan::agreement`).
#[test]
fn processes_with_another_fingerprint_seed_are_refused() {
    let book = fixture("rust-book");
    let dir = TempDir::new("cluster-seed");
    let (file, _) = hosts(&dir, 2);
    let args = ["--connect-timeout", "30", "--json"];
    let a = process(&book, &file, 0, &args);
    let b = process(
        &book,
        &file,
        1,
        &[&args[..], &["--fingerprint-seed", "7"]].concat(),
    );
    for c in [a, b] {
        let line = fails_with_one_line(&bounded(c, Duration::from_secs(60)));
        assert!(line.contains("other settings"), "{line}");
    }
}

/// One ROOT name, two folders (each process in its own working folder):
/// the same paths and sizes, other words and times, is refused in words
/// that say what to do; a copy that kept its times is the same run. (The
/// words alone are not compared: each process reads only its share.)
#[test]
fn the_same_root_name_over_other_files_is_refused() {
    let (a, b, copy) = (
        TempDir::new("cluster-same-a"),
        TempDir::new("cluster-same-b"),
        TempDir::new("cluster-same-copy"),
    );
    for d in 0..30u64 {
        let text = common::text(d % 7, 300);
        let name = format!("docs/d{d:02}.md");
        let original = a.write(&name, &text);
        let other = b.write(&name, text.replace('a', "e"));
        let copied = copy.write(&name, &text);
        // Files written within one clock tick share their time to the
        // nanosecond: the other folder's are a nanosecond later.
        let mtime = std::fs::metadata(&original).unwrap().modified().unwrap();
        for (f, t) in [(other, mtime + Duration::from_nanos(1)), (copied, mtime)] {
            let f = std::fs::File::options().write(true).open(f).unwrap();
            f.set_modified(t).unwrap();
        }
    }
    let docs = Path::new("docs");
    let dir = TempDir::new("cluster-same");
    let (file, _) = hosts(&dir, 2);
    let args = ["--connect-timeout", "30", "--json", "--workers", "1"];
    let p0 = process_in(Some(a.path()), docs, &file, 0, &args);
    let p1 = process_in(Some(b.path()), docs, &file, 1, &args);
    for c in [p0, p1] {
        let line = fails_with_one_line(&bounded(c, Duration::from_secs(60)));
        assert!(
            line.contains("modification times") && line.contains("rsync -a"),
            "{line}"
        );
    }
    let p0 = process_in(Some(a.path()), docs, &file, 0, &args);
    let p1 = process_in(Some(copy.path()), docs, &file, 1, &args);
    let (o0, o1) = (
        bounded(p0, Duration::from_secs(60)),
        bounded(p1, Duration::from_secs(60)),
    );
    assert!(o0.status.success() && o1.status.success(), "{o0:?} {o1:?}");
    let one = lineage(&["scan", a.path().join("docs").to_str().unwrap(), "--json"]);
    assert!(
        o0.stdout == one.stdout,
        "a copy with its times is the same run"
    );
}

/// A process stopped (SIGSTOP) mid-run answers nothing but its socket
/// stays open: the other ends within the progress timeout, naming it.
#[cfg(unix)]
#[test]
fn a_stopped_process_is_named_within_the_progress_timeout() {
    let root = long_run();
    let dir = TempDir::new("cluster-stop");
    let (file, hosts) = hosts(&dir, 2);
    let args = [
        "--workers",
        "1",
        "--connect-timeout",
        "20",
        "--progress-timeout",
        "2",
        "--json",
    ];
    let mut a = process(root.path(), &file, 0, &args);
    let b = process(root.path(), &file, 1, &args);
    let report = until_report_begins(&mut a);
    signal(&b, "-STOP");
    let started = Instant::now();
    let out = bounded(a, Duration::from_secs(30));
    assert!(!report.join().unwrap().is_empty());
    let waited = started.elapsed();
    signal(&b, "-CONT");
    let mut b = b;
    let _ = b.kill();
    bounded(b, Duration::from_secs(10));
    let line = fails_with_one_line(&out);
    assert!(
        line.contains("process 1")
            && line.contains(&hosts[1])
            && line.contains("stopped answering within 2 s"),
        "{line}"
    );
    assert!(
        line.contains("the report on standard output is incomplete"),
        "{line}"
    );
    assert!(waited < Duration::from_secs(15), "{waited:?}");
}

/// A run far longer than the progress timeout, with process 0's reader
/// pausing longer than it (the processes then send each other nothing):
/// not cut, since the heartbeats go on.
#[test]
fn a_paused_reader_does_not_cut_a_run_longer_than_the_progress_timeout() {
    let root = long_run();
    let dir = TempDir::new("cluster-pause");
    let (file, _) = hosts(&dir, 2);
    let args = ["--workers", "1", "--progress-timeout", "1", "--json"];
    let a = process(root.path(), &file, 0, &args);
    let b = process(root.path(), &file, 1, &args);
    // The report fills the pipe long before: process 0 waits on it.
    std::thread::sleep(Duration::from_secs(4));
    let (a, b) = (
        bounded(a, Duration::from_secs(120)),
        bounded(b, Duration::from_secs(120)),
    );
    for o in [&a, &b] {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let report: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    assert_eq!(report["documents"].as_array().unwrap().len(), 800);
}

/// A process killed mid-run: process 0's last line says its report on
/// standard output is incomplete; with -o FILE there is no FILE after,
/// and no temp file beside it.
#[test]
fn a_lost_process_leaves_no_report_but_says_so() {
    let root = long_run();
    let dir = TempDir::new("cluster-lost");
    let (file, hosts) = hosts(&dir, 2);
    let report = dir.path().join("out").join("report.json");
    std::fs::create_dir_all(report.parent().unwrap()).unwrap();
    let report_arg = report.to_str().unwrap();
    for extra in [&[][..], &["-o", report_arg]] {
        let args = [
            &["--workers", "1", "--connect-timeout", "20", "--json"][..],
            extra,
        ]
        .concat();
        let mut a = process(root.path(), &file, 0, &args);
        let mut b = process(root.path(), &file, 1, &args);
        let begun = if extra.is_empty() {
            Some(until_report_begins(&mut a))
        } else {
            until_file_begins(report.parent().unwrap());
            None
        };
        b.kill().unwrap();
        b.wait().unwrap();
        let out = bounded(a, Duration::from_secs(60));
        let line = fails_with_one_line(&out);
        assert!(
            line.contains("process 1") && line.contains(&hosts[1]),
            "{line}"
        );
        if let Some(report) = begun {
            assert!(
                line.contains("the report on standard output is incomplete"),
                "{line}"
            );
            let report = report.join().unwrap();
            assert!(!report.is_empty(), "the report had begun");
            assert!(serde_json::from_slice::<serde_json::Value>(&report).is_err());
        } else {
            assert!(line.contains("no report written"), "{line}");
            assert!(out.stdout.is_empty());
            let left: Vec<_> = std::fs::read_dir(report.parent().unwrap())
                .unwrap()
                .collect();
            assert!(left.is_empty(), "{left:?}");
        }
    }
}

/// -o FILE holds what standard output would: over one process and two.
#[test]
fn a_complete_runs_file_is_its_report() {
    let book = book_with_skips();
    let root = book.path().to_str().unwrap();
    let dir = TempDir::new("cluster-file");
    let one = lineage(&["scan", root, "--json"]);
    assert!(one.status.success());
    let alone = dir.path().join("alone.json");
    let out = lineage(&["scan", root, "--json", "-o", alone.to_str().unwrap()]);
    assert!(out.status.success() && out.stdout.is_empty(), "{out:?}");
    assert!(std::fs::read(&alone).unwrap() == one.stdout);
    // Readable too, over a file that was there.
    let summary = lineage(&["scan", root]);
    let out = lineage(&["scan", root, "--output", alone.to_str().unwrap()]);
    assert!(out.status.success());
    assert!(std::fs::read(&alone).unwrap() == summary.stdout);
    let many = dir.path().join("many.json");
    let outs = run(book.path(), 2, &["--json", "-o", many.to_str().unwrap()]);
    assert!(
        outs.iter()
            .all(|o| o.status.success() && o.stdout.is_empty()),
        "{outs:?}"
    );
    assert!(std::fs::read(&many).unwrap() == one.stdout);
}

/// -o FILE never writes through what stands at FILE (a link, a FIFO, a
/// folder) nor inside ROOT, and says so before reading anything.
#[cfg(unix)]
#[test]
fn a_report_file_is_never_written_through_or_inside_the_root() {
    let book = book_with_skips();
    let root = book.path().to_str().unwrap();
    let dir = TempDir::new("cluster-file-bad");
    let target = dir.write("target", "mine");
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let fifo = dir.path().join("fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let inside = book.path().join("sub").join("report.json");
    std::fs::create_dir_all(inside.parent().unwrap()).unwrap();
    for (at, says) in [
        (link.clone(), "a link"),
        (fifo.clone(), "not a regular file"),
        (dir.path().to_path_buf(), "a folder"),
        (inside.clone(), "inside ROOT"),
        (
            book.path()
                .join("..")
                .join(book.path().file_name().unwrap())
                .join("r.json"),
            "inside ROOT",
        ),
    ] {
        let mut c = common::command(
            &std::env::temp_dir().join("lineage-test-empty-config"),
            &["scan", root, "--json", "-o", at.to_str().unwrap()],
        );
        c.stdout(Stdio::piped()).stderr(Stdio::piped());
        let out = bounded(c.spawn().unwrap(), Duration::from_secs(30));
        let line = fails_with_one_line(&out);
        assert!(line.contains(says), "{at:?}: {line}");
        assert!(out.stdout.is_empty());
    }
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "mine");
    assert!(
        std::fs::read_dir(inside.parent().unwrap())
            .unwrap()
            .next()
            .is_none()
    );
}

/// The checkpoint files in `dir`, by name.
fn checkpoints_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".ckpt"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The epochs of the shard checkpoints in `dir`, oldest first.
fn shard_epochs(dir: &Path) -> Vec<u64> {
    let mut epochs: Vec<u64> = checkpoints_in(dir)
        .iter()
        .filter_map(|n| n.rsplit_once("-e")?.1.strip_suffix(".ckpt")?.parse().ok())
        .collect();
    epochs.sort_unstable();
    epochs.dedup();
    epochs
}

/// Wait (60 s at most) until `dir` holds the `n`th shard checkpoint of a
/// [`Resumable`] run (epoch 2n: an epoch is 32 documents, one a checkpoint
/// every 64), or a later one.
fn until_checkpoints(dir: &Path, n: u64) {
    let started = Instant::now();
    while shard_epochs(dir).last().is_none_or(|&e| e < 2 * n) {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no checkpoint {n} in {dir:?}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A run over two processes that checkpoints every 64 documents (two
/// epochs of one worker each), each process into its own folder.
struct Resumable {
    root: TempDir,
    dir: TempDir,
    hosts: String,
    settings: Vec<String>,
}

impl Resumable {
    fn new(settings: &[&str]) -> Resumable {
        let dir = TempDir::new("cluster-resume");
        let (hosts, _) = hosts(&dir, 2);
        Resumable {
            root: long_run(),
            dir,
            hosts,
            settings: settings.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn folder(&self, i: usize) -> std::path::PathBuf {
        self.dir.path().join(format!("ck{i}"))
    }

    /// Process `i`, with `extra` after the settings.
    fn start(&self, i: usize, extra: &[&str]) -> Child {
        let folder = self.folder(i);
        let mut args: Vec<&str> = self.settings.iter().map(String::as_str).collect();
        args.extend([
            "--workers",
            "1",
            "--table-size",
            "256KiB",
            "--connect-timeout",
            "30",
            "--checkpoint-every",
            "64",
            "--checkpoint-dir",
            folder.to_str().unwrap(),
        ]);
        args.extend(extra);
        process(self.root.path(), &self.hosts, i, &args)
    }

    /// Every process started with `extra`, to their ends.
    fn run(&self, extra: &[&[&str]; 2]) -> [Output; 2] {
        let children = [self.start(0, extra[0]), self.start(1, extra[1])];
        children.map(|c| bounded(c, Duration::from_secs(120)))
    }

    /// The report of one process with the same settings.
    fn alone(&self) -> Vec<u8> {
        let mut args = vec!["scan", self.root.path().to_str().unwrap()];
        args.extend(self.settings.iter().map(String::as_str));
        args.extend(["--workers", "1", "--table-size", "256KiB"]);
        let out = lineage(&args);
        assert!(out.status.success());
        out.stdout
    }
}

/// Where a resumed process says it continued from.
fn resumed_at(out: &Output) -> u64 {
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err
        .lines()
        .find(|l| l.contains("resuming after"))
        .unwrap_or_else(|| panic!("no resuming line: {err}"));
    line.rsplit_once("(epoch ")
        .and_then(|(_, e)| e.strip_suffix(')'))
        .and_then(|e| e.parse().ok())
        .unwrap_or_else(|| panic!("{line}"))
}

/// A process killed with SIGKILL at several points (before any
/// checkpoint, just after one, late in the run; the other process, or
/// process 0 itself), then every process started again with --resume: the
/// report is an uninterrupted run's, byte for byte, as JSON on standard
/// output, to -o FILE, and readable; the checkpoints are gone once it is
/// whole.
#[test]
fn a_run_killed_anywhere_resumes_to_the_uninterrupted_report() {
    let json = Resumable::new(&["--json"]);
    let want = json.alone();
    let report = json.dir.path().join("report.json");
    let o = report.to_str().unwrap();
    let none: &[&str] = &[];
    // (which process, after how many of its checkpoints, process 0's -o)
    for (killed, after, to_file) in [(1, 0, false), (1, 1, false), (0, 4, true), (1, 8, false)] {
        let what = format!("process {killed} killed after {after} checkpoints");
        let out0: &[&str] = if to_file { &["-o", o] } else { none };
        let mut children = [json.start(0, out0), json.start(1, none)];
        if after > 0 {
            until_checkpoints(&json.folder(killed), after);
        } else {
            // Connected (process 0 begins its part of the checkpoints
            // once every process has said hello), before any checkpoint.
            let started = Instant::now();
            while !checkpoints_in(&json.folder(0)).contains(&"report.ckpt".to_string()) {
                assert!(
                    started.elapsed() < Duration::from_secs(60),
                    "never connected"
                );
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        children[killed].kill().unwrap();
        let [a, b] = children.map(|c| bounded(c, Duration::from_secs(60)));
        let other = if killed == 0 { b } else { a };
        let line = fails_with_one_line(&other);
        assert!(
            line.contains(&format!("process {killed}")),
            "{what}: {line}"
        );
        let resume0 = [out0, &["--resume"]].concat();
        let [a, b] = json.run(&[&resume0, &["--resume"]]);
        for o in [&a, &b] {
            assert!(
                o.status.success(),
                "{what}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        assert_eq!(resumed_at(&a), resumed_at(&b), "{what}: the same epoch");
        if after >= 4 {
            assert!(resumed_at(&a) > 0, "{what}: from a checkpoint");
        }
        let got = if to_file {
            std::fs::read(&report).unwrap()
        } else {
            a.stdout
        };
        assert!(got == want, "{what}: the report differs");
        for i in 0..2 {
            let left = checkpoints_in(&json.folder(i));
            assert!(left.is_empty(), "{what}: {left:?}");
        }
    }
    // Readable: the summary of the whole run, not of its rest.
    let readable = Resumable::new(&[]);
    let mut children = [readable.start(0, none), readable.start(1, none)];
    until_checkpoints(&readable.folder(1), 4);
    children[1].kill().unwrap();
    drop(children.map(|c| bounded(c, Duration::from_secs(60))));
    let [a, b] = readable.run(&[&["--resume"], &["--resume"]]);
    assert!(a.status.success() && b.status.success(), "{a:?} {b:?}");
    assert!(resumed_at(&a) > 0);
    assert!(a.stdout == readable.alone(), "the readable report differs");
}

/// Checkpoints of other settings (here another fingerprint seed, on every
/// process: they agree with each other, not with their checkpoints) are
/// refused by every process, each in one line; a torn newest checkpoint
/// falls back to the one before it, with the same report; where no epoch
/// is held by both (one process started without --resume, or its folder
/// lost), both say so, and a mistaken start leaves the checkpoints be.
#[test]
fn foreign_torn_and_lost_checkpoints_are_refused_or_fall_back() {
    let r = Resumable::new(&["--json"]);
    let none: &[&str] = &[];
    let killed_late = || {
        // The last run's files gone first, so that its checkpoints are not
        // taken for this one's.
        for i in 0..2 {
            let _ = std::fs::remove_dir_all(r.folder(i));
        }
        let mut children = [r.start(0, none), r.start(1, none)];
        // Past 2 (window + 1) = 10 epochs of checkpoints: each has removed
        // some, so it no longer holds the start.
        until_checkpoints(&r.folder(1), 9);
        children[1].kill().unwrap();
        drop(children.map(|c| bounded(c, Duration::from_secs(60))));
    };
    killed_late();
    let seed = ["--resume", "--fingerprint-seed", "7"];
    for out in r.run(&[&seed, &seed]) {
        let line = fails_with_one_line(&out);
        assert!(
            line.contains("other settings") && line.contains(".ckpt"),
            "{line}"
        );
    }

    // The newest of process 1's torn: both go back to the one before,
    // which process 0 holds too.
    killed_late();
    let epochs = shard_epochs(&r.folder(1));
    let newest = *epochs.last().unwrap();
    let torn = std::fs::read_dir(r.folder(1))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_str().unwrap().ends_with(&format!("-e{newest}.ckpt")))
        .unwrap();
    let bytes = std::fs::read(&torn).unwrap();
    std::fs::write(&torn, &bytes[..bytes.len() - 100]).unwrap();
    let [a, b] = r.run(&[&["--resume"], &["--resume"]]);
    assert!(a.status.success() && b.status.success(), "{a:?} {b:?}");
    let at = resumed_at(&a);
    assert!(at > 0 && at < newest, "epoch {at}, torn {newest}");
    assert!(a.stdout == r.alone(), "the report differs");

    // Process 1 started without --resume by mistake: it holds only the
    // start, which process 0 (having removed some) no longer does;
    // both refuse, and process 1 keeps its files for the next try.
    killed_late();
    for out in r.run(&[&["--resume"], &[]]) {
        let line = fails_with_one_line(&out);
        assert!(
            line.contains("no checkpoint that every process holds"),
            "{line}"
        );
    }
    let [a, b] = r.run(&[&["--resume"], &["--resume"]]);
    assert!(a.status.success() && b.status.success(), "{a:?} {b:?}");
    assert!(resumed_at(&a) > 0);
    assert!(a.stdout == r.alone(), "the report differs");

    // Process 1's folder lost: the same, said plainly.
    killed_late();
    std::fs::remove_dir_all(r.folder(1)).unwrap();
    for out in r.run(&[&["--resume"], &["--resume"]]) {
        let line = fails_with_one_line(&out);
        assert!(
            line.contains("no checkpoint that every process holds")
                && line.contains("process 1")
                && line.contains("the start")
                && line.contains("without --resume"),
            "{line}"
        );
    }
}

/// Checkpoints inside ROOT are refused before anything is read: lineage
/// only reads the folder it scans.
#[test]
fn checkpoints_inside_the_root_are_refused() {
    let book = book_with_skips();
    let dir = TempDir::new("cluster-ck-inside");
    let (file, _) = hosts(&dir, 2);
    let inside = book.path().join("ck");
    let out = process(
        book.path(),
        &file,
        0,
        &["--checkpoint-dir", inside.to_str().unwrap()],
    );
    let line = fails_with_one_line(&bounded(out, Duration::from_secs(30)));
    assert!(
        line.contains("--checkpoint-dir") && line.contains("inside ROOT"),
        "{line}"
    );
    assert!(!inside.exists());
}
