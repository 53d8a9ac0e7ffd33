//! `lineage check` end to end: the exit status (0 pass, 1 a policy failed,
//! 2 could not run), each policy on a folder written here (a copy over the
//! share, from one page, a denied pair, a near duplicate, an allowed pair
//! passing), what is no copy now (an origin changed or gone), the places
//! on both sides as file and lines, and each format CI reads.
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

mod common;

use common::{Folder, TempDir, command, fails_with_one_line, text};
use serde_json::Value;
use std::process::Output;

impl Folder {
    fn check(&self, extra: &[&str]) -> Output {
        let root = self.dir.path().to_str().unwrap();
        let mut a = vec![
            "check",
            root,
            "--index",
            self.ix.as_str(),
            "--history",
            "folder",
        ];
        a.extend(extra);
        command(self.home.path(), &a).output().unwrap()
    }

    /// The `lineage-check/1` JSON, asserting the exit status.
    fn json(&self, extra: &[&str], status: i32) -> Value {
        let mut e = extra.to_vec();
        e.extend(["--format", "json"]);
        let out = self.check(&e);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(status), "{extra:?}: {stderr}");
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

/// `words` words of `text(seed)`, ten to a line.
fn lines_of(seed: u64, words: usize) -> String {
    let t = text(seed, words);
    let w: Vec<&str> = t.split(' ').collect();
    let mut s = w
        .chunks(10)
        .map(|c| c.join(" "))
        .collect::<Vec<_>>()
        .join("\n");
    s.push('\n');
    s
}

fn findings<'a>(v: &'a Value, rule: &str) -> Vec<&'a Value> {
    (v["findings"].as_array().unwrap().iter())
        .filter(|f| f["rule"] == rule)
        .collect()
}

/// a.md (the origin), then b.md: 40 lines of its own, then a.md's first
/// 60 lines (600 words of 1,000: 60 % of b).
fn copied_folder(tag: &str) -> (Folder, String) {
    let f = Folder::new(tag);
    let a = lines_of(1, 1000);
    let taken: String = a.lines().take(60).map(|l| format!("{l}\n")).collect();
    f.put("a.md", &a, 0);
    f.put("b.md", &format!("{}{taken}", lines_of(2, 400)), 10);
    (f, a)
}

#[test]
fn a_page_copying_over_max_copied_fails_and_its_origin_does_not() {
    let (f, _) = copied_folder("check-max");
    let v = f.json(&["--near-duplicate", "0"], 1);
    assert_eq!(v["format"], "lineage-check/1");
    assert_eq!(v["passed"], false);
    assert_eq!(v["pages"], 2);
    let over = findings(&v, "max_copied");
    assert_eq!(over.len(), 1, "{v:#}");
    let x = over[0];
    assert_eq!(x["path"], "b.md", "the copy fails, never its origin");
    let percent = x["percent"].as_f64().unwrap();
    assert!((percent - 60.0).abs() < 1.0, "{percent}");
    assert_eq!(x["limit"], 50.0);
    // The passage on both sides, as lines of the files: b's lines 41-100
    // are a's 1-60.
    let p = &x["passages"][0];
    assert_eq!(p["origin"], "a.md");
    assert_eq!(p["lines"], serde_json::json!([41, 100]));
    assert_eq!(p["origin_lines"], serde_json::json!([1, 60]));
    assert_eq!(v["counts"]["max_copied"], 1);
    // Under a looser limit it passes, exit 0.
    let v = f.json(&["--near-duplicate", "0", "--max-copied", "61"], 0);
    assert_eq!(v["passed"], true);
    assert_eq!(v["findings"], serde_json::json!([]));
    // From one page: 60 % from a.md alone.
    let v = f.json(&["--max-copied", "100", "--max-copied-from-one", "30"], 1);
    let one = findings(&v, "max_copied_from_one");
    assert_eq!(one.len(), 1, "{v:#}");
    assert_eq!(one[0]["other"], "a.md");
}

#[test]
fn allowed_pairs_pass_and_denied_ones_fail_whatever_the_share() {
    let (f, _) = copied_folder("check-pairs");
    let v = f.json(&["--allow", "b.md <- *.md"], 0);
    assert_eq!(v["policy"]["allow"][0], "b.md <- *.md");
    // The direction counts: a rule for a.md copying b.md allows nothing here.
    f.json(&["--allow", "a.md <- b.md"], 1);
    // deny outranks allow, and fails under any share.
    let v = f.json(
        &[
            "--allow",
            "** <- **",
            "--deny",
            "b.md <- a.md",
            "--max-copied",
            "100",
        ],
        1,
    );
    let denied = findings(&v, "deny");
    assert_eq!(denied.len(), 1, "{v:#}");
    assert!(
        denied[0]["message"]
            .as_str()
            .unwrap()
            .contains("b.md <- a.md"),
        "{v:#}"
    );
    assert!(findings(&v, "max_copied").is_empty());
}

#[test]
fn a_copy_whose_origin_changed_or_went_is_no_duplicate_now() {
    let (f, a) = copied_folder("check-gone");
    f.json(&["--near-duplicate", "0"], 1);
    // The origin rewrites the lines b took: b holds the only copy now.
    let rest: String = a.lines().skip(60).map(|l| format!("{l}\n")).collect();
    f.put("a.md", &format!("{}{rest}", lines_of(3, 600)), 20);
    let v = f.json(&["--near-duplicate", "0"], 0);
    assert_eq!(v["passed"], true, "{v:#}");
    // The origin deleted: b holds the only copy.
    let (g, _) = copied_folder("check-gone2");
    std::fs::remove_file(g.dir.path().join("a.md")).unwrap();
    let v = g.json(&[], 0);
    assert_eq!(v["pages"], 1);
}

#[test]
fn near_duplicates_fail_outside_allowed_pairs() {
    let f = Folder::new("check-near");
    let a = lines_of(5, 500);
    f.put("a.md", &a, 0);
    // One word changed in 500: resemblance about 0.97.
    f.put("v2/a.md", &a.replacen("w", "x", 1), 10);
    f.put("c.md", &lines_of(6, 500), 20);
    let v = f.json(&["--max-copied", "100"], 1);
    let near = findings(&v, "near_duplicate");
    assert_eq!(near.len(), 1, "{v:#}");
    assert_eq!(near[0]["path"], "v2/a.md", "the later page fails");
    assert_eq!(near[0]["other"], "a.md");
    assert!(near[0]["percent"].as_f64().unwrap() >= 90.0);
    f.json(&["--max-copied", "100", "--allow", "v2/** <- **"], 0);
    f.json(&["--max-copied", "100", "--near-duplicate", "0"], 0);
}

#[test]
fn policies_come_from_the_config_and_bad_ones_exit_2_naming_key_and_line() {
    let (f, _) = copied_folder("check-config");
    let config = f.home.path().join("c.toml");
    std::fs::write(&config, "[check]\nmax_copied = 70\nnear_duplicate = 0\n").unwrap();
    let c = config.to_str().unwrap();
    let v = f.json(&["--config", c], 0);
    assert_eq!(v["policy"]["max_copied"], 70.0);
    // A flag outranks the file.
    f.json(&["--config", c, "--max-copied", "10"], 1);
    // A folder's own table outranks the top level there.
    let root = f.dir.path().canonicalize().unwrap();
    std::fs::write(
        &config,
        format!(
            "[check]\nmax_copied = 70\nnear_duplicate = 0\n[folders.\"{}\".check]\nmax_copied = 20\n",
            root.display()
        ),
    )
    .unwrap();
    f.json(&["--config", c], 1);
    for (bad, says) in [
        ("[check]\n\nmax_copied = 150\n", "line 3"),
        ("[check]\nallow = [\"docs/**\"]\n", "PAGES <- ORIGINS"),
        ("[check]\nmax_copy = 5\n", "max_copy"),
    ] {
        std::fs::write(&config, bad).unwrap();
        let line = fails_with_one_line(&f.check(&["--config", c]));
        assert!(line.contains(says), "{bad:?}: {line}");
    }
    for bad in [
        &["--max-copied", "101"][..],
        &["--near-duplicate", "-1"],
        &["--allow", "a.md"],
        &["--format", "xml"],
    ] {
        let out = f.check(bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
    }
}

#[test]
fn a_check_that_cannot_run_exits_2_never_1() {
    let (f, _) = copied_folder("check-cannot");
    f.json(&[], 1);
    // A damaged index is rebuilt from the files (said on stderr), and
    // the check still finds the copy: never "nothing copied".
    std::fs::write(
        std::path::Path::new(&f.ix).join("index.db"),
        b"not a database",
    )
    .unwrap();
    let out = f.check(&[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("rebuilding it"));
    // An index where none can be: exit 2, one line.
    let file = f.home.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let root = f.dir.path().to_str().unwrap();
    let out = command(
        f.home.path(),
        &["check", root, "--index", file.to_str().unwrap()],
    )
    .output()
    .unwrap();
    fails_with_one_line(&out);
    let home = TempDir::new("check-noroot");
    let out = command(home.path(), &["check", "/nonexistent/lineage-root"])
        .output()
        .unwrap();
    fails_with_one_line(&out);
}

#[test]
fn sarif_gitlab_github_and_junit_point_at_both_sides() {
    let (f, _) = copied_folder("check-formats");
    let root = f
        .dir
        .path()
        .to_str()
        .unwrap()
        .trim_start_matches('/')
        .to_string();
    let run = |format: &str| {
        let out = f.check(&["--format", format, "--near-duplicate", "0"]);
        assert_eq!(out.status.code(), Some(1), "{format}");
        String::from_utf8(out.stdout).unwrap()
    };
    let sarif: Value = serde_json::from_str(&run("sarif")).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    let r = &sarif["runs"][0];
    assert_eq!(r["tool"]["driver"]["name"], "lineage");
    let rules: Vec<&str> = (r["tool"]["driver"]["rules"].as_array().unwrap().iter())
        .map(|x| x["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        rules,
        [
            "max_copied",
            "max_copied_from_one",
            "deny",
            "near_duplicate"
        ]
    );
    let results = r["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "one result per passage");
    let x = &results[0];
    assert_eq!(x["ruleId"], "max_copied");
    let loc = &x["locations"][0]["physicalLocation"];
    assert!(
        loc["artifactLocation"]["uri"]
            .as_str()
            .unwrap()
            .ends_with("/b.md")
    );
    assert_eq!(loc["region"]["startLine"], 41);
    assert_eq!(loc["region"]["endLine"], 100);
    let rel = &x["relatedLocations"][0]["physicalLocation"];
    assert!(
        rel["artifactLocation"]["uri"]
            .as_str()
            .unwrap()
            .ends_with("/a.md")
    );
    assert_eq!(rel["region"]["startLine"], 1);
    assert_eq!(
        x["partialFingerprints"]["lineageFinding/v1"]
            .as_str()
            .unwrap()
            .len(),
        16
    );

    let gitlab: Value = serde_json::from_str(&run("gitlab")).unwrap();
    let issue = &gitlab[0];
    assert_eq!(issue["check_name"], "max_copied");
    assert_eq!(issue["location"]["lines"]["begin"], 41);
    assert!(issue["location"]["path"].as_str().unwrap().contains(&root));
    assert_eq!(
        issue["fingerprint"],
        x["partialFingerprints"]["lineageFinding/v1"]
    );

    let github = run("github");
    let first = github.lines().next().unwrap();
    assert!(first.starts_with("::error file=/"), "{first}");
    assert!(
        first.contains("/b.md,line=41,endLine=100,title=lineage max_copied::"),
        "{first}"
    );
    assert!(first.contains("60.0 %25"), "a % is encoded: {first}");
    assert!(
        github
            .lines()
            .last()
            .unwrap()
            .starts_with("::error title=lineage check::lineage check: failed")
    );

    let junit = run("junit");
    assert!(junit.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites"));
    assert!(junit.contains("<testcase classname=\"lineage.check.max_copied\" name=\"b.md\""));
    assert_eq!(junit.matches("<failure ").count(), 1);
    assert_eq!(junit.matches("</testcase>").count(), 1);

    let text = run("text");
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with("lineage check: failed: 1 finding in 1 of 2 pages (max_copied 1, "),
        "the summary first: {first}"
    );
    // Two runs print the same bytes.
    assert_eq!(run("text"), text);
}

#[test]
fn names_and_words_ci_would_misread_are_escaped() {
    let f = Folder::new("check-names");
    let a = lines_of(7, 300);
    f.put("a.md", &format!("<script>alert(1)</script>\n{a}"), 0);
    f.put("x,y:z.md", &format!("<script>alert(1)</script>\n{a}"), 10);
    let out = f.check(&["--format", "github", "--near-duplicate", "0"]);
    assert_eq!(out.status.code(), Some(1));
    let gh = String::from_utf8(out.stdout).unwrap();
    assert!(gh.contains("/x%2Cy%3Az.md,line=1"), "{gh}");
    let out = f.check(&["--format", "junit", "--near-duplicate", "0"]);
    let junit = String::from_utf8(out.stdout).unwrap();
    assert!(junit.contains("name=\"x,y:z.md\""), "{junit}");
    assert!(!junit.contains("<script>"), "{junit}");
    let out = f.check(&["--format", "sarif", "--near-duplicate", "0"]);
    let sarif: Value = serde_json::from_slice(&out.stdout).unwrap();
    let uri = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        .as_str()
        .unwrap();
    assert!(uri.ends_with("/x%2Cy%3Az.md"), "{uri}");
}

#[test]
fn a_passage_is_known_by_its_words_not_their_lines() {
    let (f, a) = copied_folder("check-reflow");
    let hash = |v: &Value| findings(v, "max_copied")[0]["passages"][0]["hash"].clone();
    let before = f.json(&["--near-duplicate", "0"], 1);
    // b reflowed: the same words, other line breaks, moved to the top.
    let taken: Vec<&str> = a.lines().take(60).collect();
    let reflowed = taken.join(" ").replace(' ', "\n");
    f.put("b.md", &format!("{reflowed}\n{}", lines_of(2, 400)), 30);
    let after = f.json(&["--near-duplicate", "0"], 1);
    assert_eq!(hash(&before), hash(&after), "{after:#}");
    assert_ne!(
        findings(&before, "max_copied")[0]["passages"][0]["lines"],
        findings(&after, "max_copied")[0]["passages"][0]["lines"]
    );
}

/// `check` of `f` with the baseline `file`.
fn with_baseline<'a>(file: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec!["--near-duplicate", "0", "--baseline", file];
    a.extend(extra);
    a
}

#[test]
fn a_baseline_accepts_what_it_recorded_and_a_second_copy_is_new() {
    let (f, a) = copied_folder("check-baseline");
    let file = f.home.path().join("baseline.json");
    let file = file.to_str().unwrap();
    // Recorded: exit 0, the file says what it accepted.
    let v = f.json(&with_baseline(file, &["--update-baseline"]), 0);
    assert_eq!(v["accepted"], 1, "{v:#}");
    let recorded: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    assert_eq!(recorded["format"], "lineage-baseline/1");
    assert_eq!(recorded["copies"][0]["path"], "b.md");
    assert_eq!(recorded["copies"][0]["origin"], "a.md");
    assert_eq!(recorded["copies"][0]["count"], 1);
    let v = f.json(&with_baseline(file, &[]), 0);
    assert_eq!(v["passed"], true);
    assert!(
        v["summary"]
            .as_str()
            .unwrap()
            .ends_with("1 finding accepted by the baseline")
    );
    // The same words reflowed and moved: still accepted.
    let taken: Vec<&str> = a.lines().take(60).collect();
    let reflowed = taken.join(" ").replace(' ', "\n");
    f.put("b.md", &format!("{reflowed}\n{}", lines_of(2, 400)), 20);
    f.json(&with_baseline(file, &[]), 0);
    // A second verbatim copy of the accepted passage is new.
    let twice = format!("{reflowed}\n{}{}\n", lines_of(2, 400), taken.join("\n"));
    f.put("b.md", &twice, 30);
    let v = f.json(&with_baseline(file, &[]), 1);
    let x = findings(&v, "max_copied")[0];
    let new: Vec<&Value> = (x["passages"].as_array().unwrap().iter())
        .map(|p| &p["new"])
        .collect();
    assert_eq!(new, [&Value::Bool(false), &Value::Bool(true)], "{v:#}");
    // SARIF tells the new copy only.
    let out = f.check(&with_baseline(file, &["--format", "sarif"]));
    let sarif: Value = serde_json::from_slice(&out.stdout).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{sarif:#}");
    let region = &results[0]["locations"][0]["physicalLocation"]["region"];
    assert!(region["startLine"].as_u64().unwrap() > 100, "{region}");
    // A copy into another page is new too.
    f.put("b.md", &format!("{reflowed}\n{}", lines_of(2, 400)), 40);
    f.put(
        "d.md",
        &format!("{}{}\n", lines_of(9, 300), taken.join("\n")),
        50,
    );
    let v = f.json(&with_baseline(file, &[]), 1);
    let paths: Vec<&Value> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| &x["path"])
        .collect();
    assert_eq!(paths, ["d.md"], "{v:#}");
}

#[test]
fn a_baseline_damaged_foreign_or_of_other_settings_is_refused_with_exit_2() {
    let (f, _) = copied_folder("check-baseline-bad");
    let file = f.home.path().join("baseline.json");
    let name = file.to_str().unwrap();
    let missing = fails_with_one_line(&f.check(&with_baseline(name, &[])));
    assert!(missing.contains("no such file"), "{missing}");
    f.json(&with_baseline(name, &["--update-baseline"]), 0);
    let good = std::fs::read_to_string(&file).unwrap();
    for (bad, says) in [
        (good[..good.len() / 2].to_string(), "damaged"),
        (
            good.replace("lineage-baseline/1", "lineage-baseline/9"),
            "format",
        ),
        (
            good.replace("\"lineage\": \"", "\"lineage\": \"0.0.0-"),
            "recorded by lineage 0.0.0-",
        ),
        (good.replace("\"k\": 8", "\"k\": 6"), "k = 6"),
        (
            good.replace("\"b.md\"", "\"elsewhere/b.md\""),
            "of another folder",
        ),
        (good.replace("\"count\": 1", "\"count\": 0"), "damaged"),
        (
            good.replace("\"count\": 1", "\"count\": 1, \"extra\": 2"),
            "damaged",
        ),
    ] {
        std::fs::write(&file, bad).unwrap();
        let line = fails_with_one_line(&f.check(&with_baseline(name, &[])));
        assert!(line.contains(says), "{says}: {line}");
        assert!(line.contains("--update-baseline"), "{line}");
    }
    // What stands at FILE and is not a regular file is not written through.
    let target = f.home.path().join("target.json");
    std::fs::write(&target, "keep").unwrap();
    let link = f.home.path().join("link.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let l = link.to_str().unwrap();
    fails_with_one_line(&f.check(&with_baseline(l, &["--update-baseline"])));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
    let fifo = f.home.path().join("fifo.json");
    lineage_testing::mkfifo(&fifo);
    let p = fifo.to_str().unwrap();
    fails_with_one_line(&f.check(&with_baseline(p, &["--update-baseline"])));
    // Read, a FIFO is refused too, without blocking.
    fails_with_one_line(&f.check(&with_baseline(p, &[])));
    // --update-baseline needs --baseline.
    assert_eq!(f.check(&["--update-baseline"]).status.code(), Some(2));
}

/// `check ROOT --index IX` with JSON out and no near duplicates, then `extra`.
fn json_check<'a>(root: &'a str, ix: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec!["check", root, "--index", ix, "--near-duplicate", "0"];
    a.extend(["--format", "json"]);
    a.extend(extra);
    a
}

/// A repository whose first commit writes `{dir}a.md` and `{dir}b.md`
/// (60 % a's first 60 lines), then `{dir}c.md` (a's next 35 lines) left
/// uncommitted; with a home for lineage.
fn copied_repo(tag: &str, dir: &str) -> (TempDir, TempDir, lineage_testing::Git) {
    let t = TempDir::new(tag);
    let home = TempDir::new(&format!("{tag}-home"));
    let git = lineage_testing::Git::init(&t.path().join("repo"));
    let a = lines_of(1, 1000);
    let lines: Vec<&str> = a.lines().collect();
    let with = |own: String, taken: &[&str]| format!("{own}{}\n", taken.join("\n"));
    git.write(&format!("{dir}a.md"), &a);
    git.write(&format!("{dir}b.md"), with(lines_of(2, 400), &lines[..60]));
    git.commit("Write a, copy it into b");
    git.write(
        &format!("{dir}c.md"),
        with(lines_of(3, 300), &lines[60..95]),
    );
    (t, home, git)
}

#[test]
fn a_baseline_from_a_revision_accepts_what_was_there_then() {
    let (_t, home, git) = copied_repo("check-rev", "");
    git.commit("Copy more of a into c");
    let root = git.dir.to_str().unwrap();
    let ix = home.path().join("ix");
    let ix = ix.to_str().unwrap();
    let check = |extra: &[&str]| {
        let args = json_check(root, ix, extra);
        command(home.path(), &args).output().unwrap()
    };
    let json = |o: &Output| -> Value { serde_json::from_slice(&o.stdout).unwrap() };
    let out = check(&[]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(json(&out)["findings"].as_array().unwrap().len(), 2);
    // As of the first commit, b's copy was there: only c's is new.
    let out = check(&["--baseline-from", "HEAD~1"]);
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out);
    let paths: Vec<&Value> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| &x["path"])
        .collect();
    assert_eq!(paths, ["c.md"], "{v:#}");
    assert_eq!(v["accepted"], 1);
    assert_eq!(check(&["--baseline-from", "HEAD"]).status.code(), Some(0));
    for bad in ["no-such-rev", "HEAD~5"] {
        fails_with_one_line(&check(&["--baseline-from", bad]));
    }
    let other = TempDir::new("check-rev-plain");
    other.write("a.md", "x");
    let out = command(
        home.path(),
        &[
            "check",
            other.path().to_str().unwrap(),
            "--index",
            &format!("{ix}2"),
            "--baseline-from",
            "HEAD",
        ],
    )
    .output()
    .unwrap();
    let line = fails_with_one_line(&out);
    assert!(line.contains("not in a git work tree"), "{line}");
}

#[test]
fn only_pages_changed_since_a_revision_are_judged_with_origins_from_all() {
    // Uncommitted: a new page copying the unchanged a.md.
    let (_t, home, git) = copied_repo("check-since", "docs/");
    let root = git.dir.join("docs");
    let root = root.to_str().unwrap();
    let ix = home.path().join("ix");
    let ix = ix.to_str().unwrap();
    let check = |extra: &[&str], stdin: &str| {
        use std::io::Write;
        let args = json_check(root, ix, extra);
        // Run from the repository's top, as a CI job is.
        let mut child = command(home.path(), &args)
            .current_dir(&git.dir)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    let paths = |o: &Output| -> Vec<String> {
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        (v["findings"].as_array().unwrap().iter())
            .map(|x| x["path"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(paths(&check(&[], "")), ["b.md", "c.md"]);
    let since = check(&["--changed-since", "HEAD"], "");
    assert_eq!(since.status.code(), Some(1));
    assert_eq!(
        paths(&since),
        ["c.md"],
        "a changed page copying an unchanged one is found"
    );
    let v: Value = serde_json::from_slice(&since.stdout).unwrap();
    assert_eq!(v["pages"], 1);
    // The same from a list on stdin, named from the repository's top as
    // `git diff --name-only` names them, or under ROOT; unknown ones left out.
    let out = check(&["--changed-from", "-"], "docs/b.md\nnot/a/page.md\n");
    assert_eq!(paths(&out), ["b.md"]);
    let out = check(&["--changed-from", "-"], "a.md\n");
    assert_eq!(out.status.code(), Some(0), "a.md copies nothing");
}

#[test]
fn an_html_page_is_placed_on_its_own_lines_not_its_stripped_texts() {
    let f = Folder::new("check-html");
    let a = lines_of(1, 400);
    let taken: Vec<&str> = a.lines().take(30).collect();
    f.put("a.md", &a, 0);
    // The copy in HTML: a head, tags that span lines, a comment, entities.
    let mut html = String::from(
        "<!DOCTYPE html>\n<html>\n<head>\n<title>t</title>\n<style>\np { x: 1 }\n</style>\n</head>\n<body>\n<!-- a\ncomment -->\n<p\n  class=\"x\">",
    );
    for (i, l) in taken.iter().enumerate() {
        html.push_str(l);
        html.push_str(if i % 3 == 0 { " &amp;\n" } else { "<br>\n" });
    }
    html.push_str("</p>\n</body>\n</html>\n");
    f.put("b.html", &html, 10);
    let v = f.json(&["--near-duplicate", "0"], 1);
    let x = findings(&v, "max_copied")[0];
    assert_eq!(x["path"], "b.html");
    let p = &x["passages"][0];
    // Where the first and last copied words stand in the file itself.
    let line_of = |w: &str| html[..html.find(w).unwrap()].matches('\n').count() + 1;
    let first = taken[0].split(' ').next().unwrap();
    let last = taken[29].rsplit(' ').next().unwrap();
    assert_eq!(
        p["lines"],
        serde_json::json!([line_of(first), line_of(&format!("{last}<br>"))]),
        "{x:#}"
    );
    assert_eq!(p["origin_lines"], serde_json::json!([1, 30]));
    assert_eq!(x["lines"], p["lines"]);
}

/// The hook `.pre-commit-hooks.yaml` gives, run as pre-commit runs it
/// (its entry, then its args, from the repository's top, no file names):
/// a commit bringing a copy fails, one allowing it passes.
#[test]
fn the_pre_commit_hook_runs_the_check_as_written() {
    let hooks = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/.pre-commit-hooks.yaml"
    ))
    .unwrap();
    let field = |key: &str| {
        (hooks.lines())
            .find_map(|l| l.trim().strip_prefix(key))
            .unwrap_or_else(|| panic!("{key} in the hook"))
            .trim()
            .to_string()
    };
    assert_eq!(field("pass_filenames:"), "false");
    let entry = field("entry:");
    let mut words: Vec<String> = entry.split_whitespace().map(String::from).collect();
    assert_eq!(words.remove(0), "lineage", "{entry}");
    let args = field("args:");
    let args: Vec<String> = (args.trim_matches(|c| c == '[' || c == ']').split(','))
        .map(|a| a.trim().trim_matches('"').to_string())
        .collect();
    words.extend(args);
    let (f, _) = copied_folder("check-hook");
    let run = |config: &str| {
        let c = f.home.path().join("config.toml");
        std::fs::write(&c, config).unwrap();
        let mut a: Vec<&str> = words.iter().map(String::as_str).collect();
        a.extend(["--config", c.to_str().unwrap(), "--index", &f.ix]);
        command(f.home.path(), &a)
            .current_dir(f.dir.path())
            .output()
            .unwrap()
    };
    assert_eq!(run("").status.code(), Some(1));
    let allowed = run("[check]\nallow = [\"b.md <- a.md\"]\n");
    assert_eq!(
        allowed.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&allowed.stdout)
    );
}

/// Names that are not UTF-8, or hold escape and bidi characters: the
/// terminal's text and JUnit show them escaped, SARIF names the exact
/// bytes, JSON keeps the name as JSON does.
#[test]
fn hostile_names_are_escaped_for_people_and_exact_for_machines() {
    use std::os::unix::ffi::OsStrExt;
    let f = Folder::new("check-hostile");
    let a = lines_of(1, 400);
    f.put("a.md", &a, 0);
    let copy = format!(
        "{}{}\n",
        lines_of(2, 100),
        a.lines().take(30).collect::<Vec<_>>().join("\n")
    );
    let raw = std::ffi::OsStr::from_bytes(b"x\xff\x1b[31m\xe2\x80\xaeb.md");
    let p = f.dir.path().join(raw);
    std::fs::write(&p, &copy).unwrap();
    let t = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_010);
    std::fs::File::options()
        .write(true)
        .open(&p)
        .unwrap()
        .set_modified(t)
        .unwrap();
    let run = |format: &str| {
        let out = f.check(&["--format", format, "--near-duplicate", "0"]);
        assert_eq!(out.status.code(), Some(1), "{format}");
        out.stdout
    };
    let text = String::from_utf8(run("text")).unwrap();
    assert!(
        !text.contains('\x1b') && !text.contains('\u{202e}'),
        "{text:?}"
    );
    assert!(text.contains("x\\xff\\x1b[31m\\u{202e}b.md"), "{text}");
    let junit = String::from_utf8(run("junit")).unwrap();
    assert!(
        !junit.contains('\x1b') && !junit.contains('\u{202e}'),
        "{junit:?}"
    );
    let sarif: Value = serde_json::from_slice(&run("sarif")).unwrap();
    let uri = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        .as_str()
        .unwrap();
    assert!(uri.ends_with("/x%FF%1B%5B31m%E2%80%AEb.md"), "{uri}");
    let v = f.json(&["--near-duplicate", "0"], 1);
    assert_eq!(v["findings"][0]["path"], "x\u{fffd}\u{1b}[31m\u{202e}b.md");
}

/// The SARIF authors' validator (Microsoft's SARIF Multitool, MIT) and the
/// published SARIF 2.1.0 schema it ships, which scripts/test fetches from
/// the npm registry (pinned) and names in `LINEAGE_SARIF_MULTITOOL`.
fn sarif_multitool() -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = std::env::var_os("LINEAGE_SARIF_MULTITOOL")
        .map(std::path::PathBuf::from)
        .expect("LINEAGE_SARIF_MULTITOOL: run the tests with scripts/test, which fetches the SARIF Multitool");
    let (tool, schema) = (dir.join("Sarif.Multitool"), dir.join("sarif-2.1.0.json"));
    assert!(
        tool.is_file() && schema.is_file(),
        "no Multitool in {dir:?}"
    );
    (tool, schema)
}

/// What the validator finds in `sarif`: (level, rule id, where) of each
/// result, "error" for a schema violation or a rule SARIF calls an error.
fn validated(sarif: &[u8], at: &TempDir) -> Vec<(String, String, String)> {
    let (tool, schema) = sarif_multitool();
    let (input, report) = (at.path().join("in.sarif"), at.path().join("out.sarif"));
    std::fs::write(&input, sarif).unwrap();
    let _ = std::fs::remove_file(&report);
    let out = std::process::Command::new(tool)
        .arg("validate")
        .arg("--json-schema")
        .arg(schema)
        .arg("--output")
        .arg(&report)
        .arg(&input)
        .env("HOME", at.path())
        .env("DOTNET_CLI_TELEMETRY_OPTOUT", "1")
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && report.is_file(),
        "the Multitool failed: {log}"
    );
    let v: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    (v["runs"][0]["results"].as_array().unwrap().iter())
        .map(|r| {
            let level = r["level"].as_str().unwrap_or("warning").to_string();
            let id = r["ruleId"].as_str().unwrap().to_string();
            (level, id, r["message"]["arguments"].to_string())
        })
        .collect()
}

#[test]
fn the_sarif_is_valid_to_the_published_schema_and_the_sarif_validator() {
    // Every rule's result, a name SARIF must encode, an absolute root.
    let (f, a) = copied_folder("check-sarif");
    f.put("c d#é.md", &format!("{a}one line more\n"), 20);
    f.put("x/e.md", &lines_of(3, 300), 30);
    f.put("y/e.md", &lines_of(3, 300), 40);
    let at = TempDir::new("check-sarif-validate");
    let out = f.check(&[
        "--format",
        "sarif",
        "--max-copied-from-one",
        "80",
        "--deny",
        "y/** <- x/**",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let sarif: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rules: std::collections::BTreeSet<&str> = (sarif["runs"][0]["results"].as_array())
        .unwrap()
        .iter()
        .map(|r| r["ruleId"].as_str().unwrap())
        .collect();
    assert_eq!(rules.len(), 4, "a result of every rule: {rules:?}");
    // Nothing but SARIF2005's warning: lineage has no home page to name
    // as the tool's informationUri.
    let found = validated(&out.stdout, &at);
    assert!(found.iter().all(|r| r.1 == "SARIF2005"), "{found:#?}");

    // A root named from here: relative references, valid as well.
    let parent = f.dir.path().parent().unwrap();
    let name = f.dir.path().file_name().unwrap().to_str().unwrap();
    let out = command(
        f.home.path(),
        &["check", name, "--index", &f.ix, "--format", "sarif"],
    )
    .current_dir(parent)
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let uri =
        serde_json::from_slice::<Value>(&out.stdout).unwrap()["runs"][0]["results"][0]["locations"]
            [0]["physicalLocation"]["artifactLocation"]["uri"]
            .clone();
    assert!(
        uri.as_str().unwrap().starts_with(&format!("{name}/")),
        "{uri}"
    );
    let found = validated(&out.stdout, &at);
    assert!(found.iter().all(|r| r.1 == "SARIF2005"), "{found:#?}");

    // The validator is no rubber stamp: a line 0 breaks the schema, a
    // reference that begins with `/` breaks SARIF's rule.
    let mut bad = sarif.clone();
    let loc = &mut bad["runs"][0]["results"][0]["locations"][0]["physicalLocation"];
    loc["region"]["startLine"] = 0.into();
    loc["artifactLocation"]["uri"] = "/b.md".into();
    let found = validated(&serde_json::to_vec(&bad).unwrap(), &at);
    let ids: Vec<&str> = (found.iter().filter(|r| r.0 == "error"))
        .map(|r| r.1.as_str())
        .collect();
    assert!(
        ids.contains(&"JSON1008"),
        "below the schema's minimum: {found:#?}"
    );
    assert!(ids.contains(&"SARIF1004"), "{found:#?}");
}
