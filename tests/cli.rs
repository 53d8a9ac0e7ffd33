//! End-to-end tests of `lineage scan` and `lineage sweep` against docs/formats.md §2–6,
//! driving the real binary.
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

mod common;

use std::collections::HashMap;

use common::{TempDir, answers, fails_with_one_line, fixture, lineage, lineage_json, mails, run};
use serde_json::Value;

/// The exact result of docs/formats.md §2 computed the slow, obvious way: shingles as
/// token strings, origins by search over earlier documents.
struct Reference {
    docs: Vec<RefDoc>,
}

#[derive(Debug)]
struct RefDoc {
    path: String,
    tokens: usize,
    shingles: usize,
    origins: Vec<(u64, u64)>,
    dominant: Option<u64>,
    top: u64,
    fresh: Vec<[u64; 2]>,
    copied: Vec<(u64, u64, u64)>,
}

fn reference(root: &std::path::Path, paths: &[String], k: usize) -> Reference {
    let mut first: HashMap<Vec<String>, u64> = HashMap::new();
    let mut docs = vec![];
    for (id, path) in paths.iter().enumerate() {
        let id = id as u64;
        let bytes = std::fs::read(root.join(path)).unwrap();
        let text = lineage_core::text::prepare(&bytes, lineage_core::text::Format::from_path(path));
        let toks: Vec<String> = lineage_core::text::tokens(&text)
            .into_iter()
            .map(|t| t.key)
            .collect();
        let n = toks.len();
        let shingles: Vec<Vec<String>> = if n >= k {
            (0..=n - k).map(|i| toks[i..i + k].to_vec()).collect()
        } else {
            vec![]
        };
        let origin: Vec<u64> = shingles
            .iter()
            .map(|s| *first.entry(s.clone()).or_insert(id))
            .collect();
        let mut counts: HashMap<u64, u64> = HashMap::new();
        for &o in &origin {
            *counts.entry(o).or_default() += 1;
        }
        let mut origins: Vec<(u64, u64)> = counts.into_iter().collect();
        origins.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let (c1, c2) = (
            origins.first().map_or(0, |o| o.1),
            origins.get(1).map_or(0, |o| o.1),
        );
        let dominant = (c1 > 0 && 10 * c1 >= 11 * c2).then(|| origins[0].0);
        let top = if origins.iter().any(|&(o, c)| o == id && c == c1) || origins.is_empty() {
            id
        } else {
            origins[0].0
        };
        // Token label: the origin of the earliest copied shingle covering it.
        let mut label: Vec<Option<u64>> = vec![None; n];
        for (i, &o) in origin.iter().enumerate() {
            if o != id {
                for l in label.iter_mut().skip(i).take(k) {
                    if l.is_none() {
                        *l = Some(o);
                    }
                }
            }
        }
        let (mut fresh, mut copied) = (vec![], vec![]);
        let mut s = 0;
        while s < n {
            let mut e = s + 1;
            while e < n && label[e] == label[s] {
                e += 1;
            }
            match label[s] {
                None => fresh.push([s as u64, e as u64]),
                Some(o) => copied.push((s as u64, e as u64, o)),
            }
            s = e;
        }
        docs.push(RefDoc {
            path: path.clone(),
            tokens: n,
            shingles: shingles.len(),
            origins,
            dominant,
            top,
            fresh,
            copied,
        });
    }
    Reference { docs }
}

/// The exact baselines of `tests/fixtures/rust-book` (its README), which the
/// string-based reference above reproduces document by document.
const WITH_DOMINANT: usize = 66;
const SELF_DOMINANT: usize = 39;
const FRESH_PERCENT: f64 = 40.8;

fn scan_exact(root: &std::path::Path) -> Value {
    scan_exact_with(&[], root)
}

/// [`scan_exact`] with options before the command (`--fingerprint-seed`).
fn scan_exact_with(global: &[&str], root: &std::path::Path) -> Value {
    let mut args = global.to_vec();
    args.extend([
        "scan",
        root.to_str().unwrap(),
        "--json",
        "--order",
        "path",
        "--selector",
        "all",
        "--table-size",
        "unbounded",
        "--estimation",
        "nb",
    ]);
    lineage_json(&args)
}

fn assert_matches_reference(report: &Value, root: &std::path::Path) {
    let docs = report["documents"].as_array().unwrap();
    let paths: Vec<String> = docs
        .iter()
        .map(|d| d["path"].as_str().unwrap().to_string())
        .collect();
    let mut sorted = paths.clone();
    sorted.sort();
    assert_eq!(paths, sorted, "--order path processes paths bytewise");
    let r = reference(root, &paths, 8);
    for (d, e) in docs.iter().zip(&r.docs) {
        let ctx = &e.path;
        assert_eq!(d["tokens"], e.tokens, "{ctx}");
        assert_eq!(d["shingles"], e.shingles, "{ctx}");
        assert_eq!(d["selected"], e.shingles, "{ctx}");
        let origins: Vec<(u64, u64)> = d["origins"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| (o["id"].as_u64().unwrap(), o["shingles"].as_u64().unwrap()))
            .collect();
        assert_eq!(origins, e.origins, "{ctx}");
        assert_eq!(d["dominant_origin"].as_u64(), e.dominant, "{ctx}");
        assert_eq!(d["top_origin"].as_u64().unwrap(), e.top, "{ctx}");
        let fresh: Vec<[u64; 2]> = serde_json::from_value(d["fresh"].clone()).unwrap();
        assert_eq!(fresh, e.fresh, "{ctx}");
        let copied: Vec<(u64, u64, u64)> = d["copied"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["tokens"][0].as_u64().unwrap(),
                    c["tokens"][1].as_u64().unwrap(),
                    c["origin"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(copied, e.copied, "{ctx}");
        let fresh_tokens: u64 = e.fresh.iter().map(|r| r[1] - r[0]).sum();
        assert_eq!(d["fresh_tokens"], fresh_tokens, "{ctx}");
    }
}

const BASE: &str = "The quick brown fox jumps over the lazy dog while the cat sleeps on the warm mat \
and nobody in the house notices anything at all until the evening comes";

#[test]
fn exact_scan_equals_the_reference_on_a_crafted_folder() {
    let dir = TempDir::new("exact");
    dir.write("a.md", BASE);
    // b copies the middle of a, adds fresh text, and repeats a phrase of its own.
    dir.write(
        "b.md",
        "Completely new words open this note. fox jumps over the lazy dog while the cat sleeps on \
         the warm mat and then something else happens here again and again and again and again",
    );
    // c mixes a and b, with different case, accents in NFD and NFC, and HTML.
    dir.write(
        "c.html",
        "<p>THE QUICK BROWN FOX <b>jumps</b> over the lazy dog</p><script>var x = 1;</script> \
         something else happens here again and again and again caf\u{e9} cafe\u{301} &amp; more",
    );
    dir.write("d.txt", "short");
    dir.write("sub/e.md", BASE);
    let report = scan_exact(dir.path());
    assert_eq!(report["documents"].as_array().unwrap().len(), 5);
    assert_matches_reference(&report, dir.path());
    // e is a verbatim copy of a: dominant origin a (id 0), no fresh token.
    let e = &report["documents"][4];
    assert_eq!(e["path"], "sub/e.md");
    assert_eq!(e["dominant_origin"], 0);
    assert_eq!(e["fresh_tokens"], 0);
}

#[test]
fn exact_scan_equals_the_reference_on_mail_markup() {
    // Markup of short tokens (hex, numbers, `3d`) is where shingle keys
    // composed linearly from raw token fingerprints collided.
    let dir = mails(80);
    let report = scan_exact(dir.path());
    assert_eq!(report["documents"].as_array().unwrap().len(), 80);
    assert_matches_reference(&report, dir.path());
}

#[test]
fn the_fingerprint_seed_draws_the_polynomial_and_exact_scans_do_not_depend_on_it() {
    // `bhellowoa` and `chellowoz` share a fingerprint under the old fixed
    // sparse P: b would have copied a's middle.
    let dir = TempDir::new("seeded");
    dir.write("a.md", format!("{BASE} bhellowoa {BASE}"));
    dir.write("b.md", format!("{BASE} chellowoz {BASE}"));
    let mut polynomials = Vec::new();
    for seed in [None, Some("7"), Some("18446744073709551615")] {
        let global = seed.map_or(vec![], |s| vec!["--fingerprint-seed", s]);
        let report = scan_exact_with(&global, dir.path());
        assert_matches_reference(&report, dir.path());
        let params = &report["params"];
        assert_eq!(params["fingerprint_seed"].to_string(), seed.unwrap_or("0"));
        polynomials.push(params["polynomial"].as_str().unwrap().to_string());
    }
    assert_eq!(polynomials[0], "0xe255b237b8bb18fb", "the default is fixed");
    polynomials.dedup();
    assert_eq!(polynomials.len(), 3, "{polynomials:?}");
    let root = dir.path().to_str().unwrap();
    let out = lineage(&["--fingerprint-seed", "-1", "scan", root]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn an_index_keeps_its_polynomial_and_refuses_another_seed() {
    let dir = TempDir::new("seeded-root");
    dir.write("a.md", BASE);
    let home = TempDir::new("seeded-home");
    let ix = home.path().join("ix");
    let (root, ix) = (dir.path().to_str().unwrap(), ix.to_str().unwrap());
    let index = |extra: &[&str]| {
        let mut args = extra.to_vec();
        args.extend(["index", root, "--json", "--index", ix]);
        run(home.path(), &args)
    };
    assert!(index(&["--fingerprint-seed", "7"]).status.success());
    let refused = fails_with_one_line(&index(&[]));
    assert!(
        refused.contains("was built with --fingerprint-seed 7, not 0"),
        "{refused}"
    );
    let out = index(&["--fingerprint-seed", "7"]);
    assert!(out.status.success());
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (&report["versions"], &report["files_read"]),
        (&Value::from(1), &Value::from(0)),
        "kept whole: {report}"
    );
}

#[test]
fn exact_scan_equals_the_reference_on_answers_and_the_rust_book() {
    let answers = answers();
    for root in [answers.path().to_path_buf(), fixture("rust-book")] {
        assert_matches_reference(&scan_exact(&root), &root);
    }
}

#[test]
fn rust_book_exact_baselines_match_the_fixture_notes() {
    // tests/fixtures/README.md: 66 of 74 documents have a dominant origin,
    // 39 of them themselves; 40.8 % of tokens are fresh.
    let report = scan_exact(&fixture("rust-book"));
    let docs = report["documents"].as_array().unwrap();
    assert_eq!(docs.len(), 74);
    let with_dom = docs
        .iter()
        .filter(|d| !d["dominant_origin"].is_null())
        .count();
    let self_dom = docs
        .iter()
        .filter(|d| d["dominant_origin"] == d["id"])
        .count();
    assert_eq!((with_dom, self_dom), (WITH_DOMINANT, SELF_DOMINANT));
    let tokens: u64 = docs.iter().map(|d| d["tokens"].as_u64().unwrap()).sum();
    let fresh: u64 = docs
        .iter()
        .map(|d| d["fresh_tokens"].as_u64().unwrap())
        .sum();
    let pct = 100.0 * fresh as f64 / tokens as f64;
    assert!((pct - FRESH_PERCENT).abs() < 0.05, "fresh {pct}");
}

/// DO and TF of a scan report against an exact report, per docs/formats.md §4.
fn score(est: &Value, exact: &Value) -> (f64, f64, f64) {
    let (mut with_dom, mut found, mut tokens, mut agree, mut sh, mut sel) = (0, 0, 0, 0, 0, 0);
    let fresh_set = |d: &Value| {
        let mut v = vec![false; d["tokens"].as_u64().unwrap() as usize];
        for r in d["fresh"].as_array().unwrap() {
            for t in r[0].as_u64().unwrap()..r[1].as_u64().unwrap() {
                v[t as usize] = true;
            }
        }
        v
    };
    for (e, x) in est["documents"]
        .as_array()
        .unwrap()
        .iter()
        .zip(exact["documents"].as_array().unwrap())
    {
        assert_eq!(e["path"], x["path"]);
        if !x["dominant_origin"].is_null() {
            with_dom += 1;
            found += u64::from(e["top_origin"] == x["dominant_origin"]);
        }
        let (fe, fx) = (fresh_set(e), fresh_set(x));
        tokens += fe.len() as u64;
        agree += fe.iter().zip(&fx).filter(|(a, b)| a == b).count() as u64;
        sh += e["shingles"].as_u64().unwrap();
        sel += e["selected"].as_u64().unwrap();
    }
    let p = |a: u64, b: u64| 100.0 * a as f64 / b as f64;
    (p(sel, sh), p(found, with_dom), p(agree, tokens))
}

#[test]
fn sweep_figures_equal_scored_scans() {
    let answers = answers();
    let root = answers.path().to_str().unwrap();
    let sweep = lineage_json(&[
        "sweep",
        root,
        "--json",
        "--order",
        "path",
        "--sizes",
        "8KiB,40KiB",
        "--selectors",
        "nhs,4th",
        "--evictions",
        "lucky,lru",
        "--estimations",
        "be,nb",
    ]);
    let runs = sweep["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 16);
    let exact = scan_exact(std::path::Path::new(root));
    for r in runs.iter().step_by(3) {
        let scan = lineage_json(&[
            "scan",
            root,
            "--json",
            "--order",
            "path",
            "--selector",
            r["selector"].as_str().unwrap(),
            "--table-size",
            r["table_size"].as_str().unwrap(),
            "--eviction",
            r["eviction"].as_str().unwrap(),
            "--estimation",
            r["estimation"].as_str().unwrap(),
        ]);
        let (ssr, dom, tf) = score(&scan, &exact);
        let ctx = r.to_string();
        assert!((r["ssr"].as_f64().unwrap() - ssr).abs() < 1e-9, "{ctx}");
        assert!((r["do"].as_f64().unwrap() - dom).abs() < 1e-9, "{ctx}");
        assert!((r["tf"].as_f64().unwrap() - tf).abs() < 1e-9, "{ctx}");
        assert_eq!(r["lookups"], scan["table"]["lookups"], "{ctx}");
        assert_eq!(r["hits"], scan["table"]["hits"], "{ctx}");
        assert_eq!(r["evictions"], scan["table"]["evictions"], "{ctx}");
    }
}

/// `lineage sweep` of the rust-book fixture in path order: NHs with one
/// eviction and one estimation, at the default sizes.
fn sweep_nhs(eviction: &str, estimation: &str) -> Value {
    let root = fixture("rust-book");
    lineage_json(&[
        "sweep",
        root.to_str().unwrap(),
        "--json",
        "--order",
        "path",
        "--selectors",
        "nhs",
        "--evictions",
        eviction,
        "--estimations",
        estimation,
    ])
}

#[test]
fn nhs_lucky_be_degrades_smoothly_and_beats_the_baselines() {
    let sweep = sweep_nhs("lucky", "be");
    let runs = sweep["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 8, "eight default sizes");
    // Baselines from the exact result: every document its own origin; every token fresh.
    let exact = &sweep["exact"];
    assert_eq!(exact["documents"], 74);
    let self_do = 100.0 * SELF_DOMINANT as f64 / WITH_DOMINANT as f64;
    let all_fresh = exact["fresh_token_percent"].as_f64().unwrap();
    let mut prev: Option<(f64, f64)> = None;
    for r in runs {
        let (dom, tf) = (r["do"].as_f64().unwrap(), r["tf"].as_f64().unwrap());
        // At 128 entries (0.1 % of 128k shingles) DO may only tie the baseline.
        assert!(dom >= self_do && tf > all_fresh, "{r}");
        if let Some((pd, pt)) = prev {
            // Sizes grow: accuracy may only rise, up to noise of 1.5 points.
            assert!(dom >= pd - 1.5 && tf >= pt - 1.5, "not smooth at {r}");
        }
        prev = Some((dom, tf));
    }
    let best = runs.last().unwrap();
    assert!(best["do"].as_f64().unwrap() >= 95.0, "{best}");
    assert!(best["tf"].as_f64().unwrap() >= 90.0, "{best}");
    let first = runs.first().unwrap()["table_fraction"].as_f64().unwrap();
    let last = runs.last().unwrap()["table_fraction"].as_f64().unwrap();
    assert!(
        first < 0.2 && last > 30.0,
        "fractions span the paper's range: {first} {last}"
    );
}

#[test]
fn a_bottom_k_sample_beats_lucky_where_the_table_is_small() {
    let root = fixture("rust-book");
    let root = root.to_str().unwrap();
    let runs = |s: Value| s["runs"].as_array().unwrap().clone();
    let (lucky, bottom_k) = (
        runs(sweep_nhs("lucky", "be")),
        runs(sweep_nhs("bottom-k", "nb")),
    );
    for (l, b) in lucky.iter().zip(&bottom_k) {
        assert_eq!(l["table_size"], b["table_size"]);
        let (l, b) = (
            l["overall"].as_f64().unwrap(),
            b["overall"].as_f64().unwrap(),
        );
        // Far ahead where the table is small, never behind where it is not.
        if l < 80.0 {
            assert!(b > l + 10.0, "{l} {b}");
        }
        assert!(b >= l - 0.1, "{l} {b}");
    }
    // Every lookup is a hit, an insert or outside the sample; the scan of
    // the smallest size agrees with the sweep's replay.
    let small = bottom_k[0]["table_size"].as_str().unwrap();
    let scan = lineage_json(&[
        "scan",
        root,
        "--json",
        "--order",
        "path",
        "--table-size",
        small,
        "--selector",
        "nhs",
        "--eviction",
        "bottom-k",
        "--estimation",
        "nb",
    ]);
    let t = &scan["table"];
    let n = |k: &str| t[k].as_u64().unwrap();
    assert!(n("not_sampled") > n("lookups") / 2, "{t}");
    assert_eq!(n("lookups"), n("hits") + n("inserts") + n("not_sampled"));
    assert_eq!(bottom_k[0]["hits"], t["hits"]);
    assert_eq!(bottom_k[0]["lookups"], t["lookups"]);
    let lucky_scan = lineage_json(&[
        "scan",
        root,
        "--json",
        "--table-size",
        small,
        "--eviction",
        "lucky",
    ]);
    assert_eq!(lucky_scan["table"]["not_sampled"], 0);
}

/// A table the process cannot get (here: under an address-space limit of
/// 3 GB) is one line and exit 2, for `scan` and `index` alike, not an
/// allocation failure's abort.
#[cfg(target_os = "linux")]
#[test]
fn a_table_that_cannot_be_allocated_is_one_line() {
    let dir = TempDir::new("nomem");
    dir.write(
        "docs/a.md",
        "a page of a few words that do not matter here at all",
    );
    let root = dir.path().join("docs");
    let root = root.to_str().unwrap();
    let index = dir.path().join("index");
    let bin = env!("CARGO_BIN_EXE_lineage");
    for cmd in [
        format!("{bin} scan {root} --table-size 4GiB"),
        format!(
            "{bin} index {root} --table-size 4GiB --index {}",
            index.display()
        ),
    ] {
        let out = std::process::Command::new("bash")
            .args(["-c", &format!("ulimit -v 3000000 && exec {cmd}")])
            .output()
            .unwrap();
        let line = common::fails_with_one_line(&out);
        assert!(line.contains("4GiB"), "{line}");
    }
}

/// A `--config` that names no file says so (it said `vanished while being
/// read`).
#[test]
fn a_config_that_is_not_there_is_named_missing() {
    let dir = TempDir::new("noconfig");
    let root = dir.path().to_str().unwrap();
    let out = lineage(&["scan", root, "--config", "/nonexistent/lineage/config.toml"]);
    let line = common::fails_with_one_line(&out);
    assert!(
        line.contains("/nonexistent/lineage/config.toml: no such file"),
        "{line}"
    );
}

/// A config file is the person's own: a link to it (a dotfile manager's)
/// is followed, at the platform path and with `--config`; whatever else
/// stands at the platform path (a FIFO, a folder, a link to a device or to
/// nothing) is one line and exit 2, not silently the defaults.
#[cfg(target_os = "linux")]
#[test]
fn a_linked_config_is_read_and_anything_else_there_is_one_line() {
    let dir = TempDir::new("linkconfig");
    let home = dir.path().join("home");
    let conf = home.join("config/lineage");
    std::fs::create_dir_all(&conf).unwrap();
    let real = dir.path().join("dotfiles-config.toml");
    std::fs::write(&real, "k = 5\n").unwrap();
    let at = conf.join("config.toml");
    std::os::unix::fs::symlink(&real, &at).unwrap();
    let fixture = common::fixture("rust-book");
    let root = fixture.to_str().unwrap();
    let k_of = |args: &[&str]| -> u64 {
        let out = common::run(&home, args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["params"]["k"].as_u64().unwrap()
    };
    assert_eq!(k_of(&["scan", root, "--json"]), 5);
    assert_eq!(
        k_of(&["scan", root, "--json", "--config", at.to_str().unwrap()]),
        5
    );
    std::fs::remove_file(&at).unwrap();
    let fifo = std::ffi::CString::new(at.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo with a NUL-terminated path and a mode.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    let says = |what: &str| {
        let line = common::fails_with_one_line(&common::run(&home, &["scan", root]));
        assert!(
            line.contains(&at.display().to_string()) && line.contains(what),
            "{line}"
        );
    };
    says("not a regular file (fifo)");
    std::fs::remove_file(&at).unwrap();
    std::fs::create_dir(&at).unwrap();
    says("not a regular file (folder)");
    std::fs::remove_dir(&at).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &at).unwrap();
    says("not a regular file (character device)");
    std::fs::remove_file(&at).unwrap();
    std::os::unix::fs::symlink(dir.path().join("gone.toml"), &at).unwrap();
    says("a link to nothing");
}

/// A `[folders."/abs/path"]` table holds one folder's settings: they outrank
/// the top level for that folder only (however the folder is spelled on the
/// command line), and a flag outranks them.
#[test]
fn a_folders_table_sets_that_folder_only_and_flags_outrank_it() {
    let dir = TempDir::new("folderconfig");
    let fixture = common::fixture("rust-book");
    let other = dir.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("a.md"), "one page of its own\n").unwrap();
    let config = dir.path().join("config.toml");
    let canonical = fixture.canonicalize().unwrap();
    std::fs::write(
        &config,
        format!(
            "k = 5\n[folders.\"{}\"]\nk = 7\ntable_size = \"18KiB\"\n",
            canonical.display()
        ),
    )
    .unwrap();
    let params = |root: &std::path::Path, extra: &[&str]| -> serde_json::Value {
        let mut args = vec!["scan", root.to_str().unwrap(), "--json", "--config"];
        args.push(config.to_str().unwrap());
        args.extend(extra);
        let out = common::run(dir.path(), &args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["params"].clone()
    };
    let p = params(&fixture.join(".").join("..").join("rust-book"), &[]);
    assert_eq!(
        (p["k"].as_u64(), p["table_size"].as_str()),
        (Some(7), Some("18KiB"))
    );
    let p = params(&other, &[]);
    assert_eq!(
        (p["k"].as_u64(), p["table_size"].as_str()),
        (Some(5), Some("64MiB"))
    );
    let p = params(&fixture, &["-k", "9"]);
    assert_eq!(
        (p["k"].as_u64(), p["table_size"].as_str()),
        (Some(9), Some("18KiB"))
    );
    // A table that names a folder by a relative path is refused, with why.
    std::fs::write(&config, "[folders.\"docs\"]\nk = 6\n").unwrap();
    let line = common::fails_with_one_line(&common::run(
        dir.path(),
        &[
            "scan",
            fixture.to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
        ],
    ));
    assert!(line.contains("absolute path"), "{line}");
}

#[test]
fn bad_values_exit_2_with_one_line() {
    let dir = TempDir::new("badargs");
    let root = dir.path().to_str().unwrap();
    for args in [
        vec!["scan", root, "-k", "0"],
        vec!["scan", "/nonexistent/lineage/root"],
        vec!["scan", root, "--config", "/nonexistent/config.toml"],
        // A table the machine cannot hold: an answer, not an abort.
        vec!["scan", root, "--table-size", "1000GB"],
        vec![
            "index",
            root,
            "--table-size",
            "1000GB",
            "--index",
            "/nonexistent/ix",
        ],
        vec!["sweep", root, "--sizes", "1KiB,1000GB"],
        // Settings files that would never end or never open.
        vec!["scan", root, "--config", "/dev/zero"],
    ] {
        let out = lineage(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("lineage: "), "{err}");
        assert!(!err.contains("panicked") && !err.contains("memory allocation"));
        assert!(out.stdout.is_empty());
    }
    let out = lineage(&["scan", root, "--table-size", "1000GB"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("more than this machine's memory"));
}

#[test]
fn usage_errors_print_clap_whole_message_and_exit_2() {
    let dir = TempDir::new("usage");
    let root = dir.path().to_str().unwrap();
    for (args, says) in [
        (vec!["scan"], "<ROOT>"),
        (
            vec!["scan", root, "--selector", "bogus"],
            "unknown selector 'bogus'",
        ),
        (vec!["scan", root, "--eviction", "fifo"], "--eviction"),
        (
            vec!["scan", root, "--table-size", "12 parsecs"],
            "--table-size",
        ),
        (vec!["frobnicate"], "unrecognized subcommand"),
        (vec!["sweep", root, "--sizes", "1KiB,x"], "invalid size 'x'"),
        (
            vec!["scan", root, "--bucket-entries", "100000"],
            "not in 1..=1024",
        ),
        (vec!["scan", root, "--bridge-limit", "0"], "not in 1.."),
        (
            vec!["watch", root, "--rescan-secs", "18446744073709551615"],
            "not in 1..=86400",
        ),
        (
            vec!["watch", root, "--debounce-ms", "0"],
            "not in 10..=60000",
        ),
        (vec!["sacn", root], "similar"),
    ] {
        let out = lineage(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(err.contains("--help"), "the way to more: {err}");
        assert!(out.stdout.is_empty());
    }
    // `lineage` alone: the commands.
    let out = lineage(&[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    for c in ["scan", "sweep", "pairs", "pocket", "index", "watch"] {
        assert!(err.contains(&format!("  {c} ")), "{c}: {err}");
    }
}

/// stdout or stderr full (or closed) is an exit status, never a panic.
#[cfg(target_os = "linux")]
#[test]
fn a_full_stdout_or_stderr_is_no_panic() {
    use std::process::Stdio;
    let dir = TempDir::new("full");
    dir.write("a.md", BASE);
    let root = dir.path().to_str().unwrap();
    // Enough documents that the report fills its buffer while they are
    // still being written (on the writer's thread, not at the end).
    let many = TempDir::new("full-many");
    for i in 0..600 {
        many.write(&format!("d{i:03}.md"), format!("{BASE} number {i}"));
    }
    let many = many.path().to_str().unwrap();
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    let home = std::env::temp_dir().join("lineage-test-empty-config");
    for (args, out_full, err_full) in [
        (vec!["scan", root, "--json"], true, false),
        (vec!["scan", many, "--json"], true, false),
        (vec!["scan", many, "--json", "--workers", "2"], true, false),
        (vec!["scan", root], true, true),
        (vec!["scan", "/nonexistent"], false, true),
        (vec!["scan"], false, true),
        (vec!["scan", root, "--selector", "x"], true, true),
    ] {
        let mut c = common::command(&home, &args);
        c.stdout(if out_full {
            Stdio::from(full())
        } else {
            Stdio::piped()
        });
        c.stderr(if err_full {
            Stdio::from(full())
        } else {
            Stdio::piped()
        });
        let out = c.output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        if out_full && !err_full {
            assert!(err.contains("No space left on device"), "{args:?}: {err}");
        }
    }
}

/// Names that would move the cursor, retitle or clear the terminal are
/// shown escaped in every readable output.
#[cfg(unix)]
#[test]
fn control_characters_in_names_are_shown_escaped() {
    let dir = TempDir::new("ctrl");
    dir.write("docs/esc\x1b]0;pwned\x07.md", BASE);
    dir.write("docs/copy\nof.md", format!("{BASE} and more"));
    dir.write("docs/bin\x1b[2J.txt", b"\0binary".as_slice());
    let docs = dir.path().join("docs");
    let root = docs.to_str().unwrap();
    let ix = dir.path().join("ix");
    for args in [
        vec!["scan", root, "--order", "path"],
        vec!["pairs", root, "--min-similarity", "0.3"],
        vec![
            "index",
            root,
            "--documents",
            "--index",
            ix.to_str().unwrap(),
        ],
    ] {
        let out = lineage(&args);
        assert!(out.status.success(), "{args:?}");
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            !all.contains('\x1b') && !all.contains('\x07'),
            "{args:?}: {all:?}"
        );
        assert!(
            all.contains(r"esc\x1b]0;pwned\x07.md") && all.contains(r"copy\nof.md"),
            "{args:?}: {all}"
        );
        assert!(all.contains(r"bin\x1b[2J.txt: binary"), "{args:?}: {all}");
    }
}

/// Bidirectional overrides and isolates in a name would show it reordered
/// (`invoice\u{202e}dm.exe` as `invoiceexe.md`): readable output escapes
/// them, JSON writes them as `\u202e`, the same string to a JSON reader.
#[test]
fn bidirectional_controls_in_names_reach_no_terminal() {
    let dir = TempDir::new("bidi");
    let name = "invoice\u{202e}dm.exe.md";
    dir.write(&format!("docs/{name}"), BASE);
    dir.write("docs/copy \u{2066}x\u{2069}.md", format!("{BASE} and more"));
    let docs = dir.path().join("docs");
    let root = docs.to_str().unwrap();
    let ix = dir.path().join("ix");
    let ix = ix.to_str().unwrap();
    let raw = |c: &str| c.contains(['\u{202e}', '\u{2066}', '\u{2069}']);
    for args in [
        vec!["scan", root, "--order", "path"],
        vec!["pairs", root, "--min-similarity", "0.3"],
        vec!["index", root, "--documents", "--index", ix],
    ] {
        let out = lineage(&args);
        assert!(out.status.success(), "{args:?}");
        let all = String::from_utf8(out.stdout).unwrap();
        assert!(!raw(&all), "{args:?}: {all:?}");
        assert!(all.contains(r"invoice\u{202e}dm.exe.md"), "{args:?}: {all}");
    }
    for args in [
        vec!["scan", root, "--json"],
        vec!["pairs", root, "--min-similarity", "0.3", "--json"],
        vec!["index", root, "--documents", "--json", "--index", ix],
    ] {
        let out = lineage(&args);
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(!raw(&text), "{args:?}: {text:?}");
        assert!(text.contains(r"invoice\u202edm.exe.md"), "{args:?}: {text}");
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert!(
            v.to_string().contains(name),
            "{args:?}: the same string decoded"
        );
    }
}

/// Zero-width and format characters, DEL and C1 controls in names (issue
/// 39): readable output shows them escaped (`read\u{200b}me.md` does not
/// look like `readme.md`); JSON writes them as `\uXXXX`, DEL and U+009B
/// too, valid and the same strings decoded; a message escapes a name once.
#[test]
fn format_characters_in_names_are_shown_escaped_and_messages_escape_once() {
    let dir = TempDir::new("format");
    let names = [
        "read\u{200b}me.md",
        "soft\u{ad}hy\u{2060}phen\u{feff}.md",
        "del\x7f c1\u{9b}.md",
        "tag\u{e0001}\u{202e}.md",
        "tab\there.md",
    ];
    for (i, n) in names.iter().enumerate() {
        dir.write(&format!("docs/{n}"), format!("{BASE} and page {i}"));
    }
    let docs = dir.path().join("docs");
    let root = docs.to_str().unwrap();
    let ix = dir.path().join("ix");
    let ix = ix.to_str().unwrap();
    let hidden = [
        '\u{200b}',
        '\u{ad}',
        '\u{2060}',
        '\u{feff}',
        '\x7f',
        '\u{9b}',
        '\u{e0001}',
        '\u{202e}',
        '\t',
    ];
    for args in [
        vec!["scan", root, "--order", "path"],
        vec!["pairs", root, "--min-similarity", "0.3"],
        vec!["index", root, "--documents", "--index", ix],
    ] {
        let out = lineage(&args);
        assert!(out.status.success(), "{args:?}");
        let all = String::from_utf8(out.stdout).unwrap();
        assert!(!all.contains(hidden), "{args:?}: {all:?}");
        for shown in [
            r"read\u{200b}me.md",
            r"soft\u{ad}hy\u{2060}phen\u{feff}.md",
            r"del\x7f c1\u{9b}.md",
            r"tag\u{e0001}\u{202e}.md",
        ] {
            assert!(all.contains(shown), "{args:?}: {shown} not in {all}");
        }
    }
    for args in [
        vec!["scan", root, "--json"],
        vec!["index", root, "--documents", "--json", "--index", ix],
    ] {
        let out = lineage(&args);
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(!text.contains(hidden), "{args:?}: {text:?}");
        for escaped in [
            r"read\u200bme.md",
            r"del\u007f c1\u009b.md",
            r"tag\udb40\udc01\u202e.md",
        ] {
            assert!(text.contains(escaped), "{args:?}: {escaped} not in {text}");
        }
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        fn strings(v: &Value, out: &mut Vec<String>) {
            match v {
                Value::String(s) => out.push(s.clone()),
                Value::Array(a) => a.iter().for_each(|v| strings(v, out)),
                Value::Object(o) => o.values().for_each(|v| strings(v, out)),
                _ => {}
            }
        }
        let mut all = Vec::new();
        strings(&v, &mut all);
        for n in names {
            assert!(all.iter().any(|s| s == n), "{args:?}: {n:?} decoded");
        }
    }
    // Messages: the name escaped once (`tab\there.md`, not `tab\\there.md`).
    let page = docs.join("tab\there.md");
    let out = lineage(&[
        "explain",
        root,
        page.to_str().unwrap(),
        "--version",
        "9",
        "--index",
        ix,
    ]);
    let line = fails_with_one_line(&out);
    assert_eq!(
        line.trim_end(),
        r"lineage: tab\there.md has versions 1 to 1, not 9"
    );
    let out = lineage(&["explain", root, "x.md", "--index", &format!("{ix}\tnone")]);
    let line = fails_with_one_line(&out);
    assert!(
        line.contains(r"--index ") && line.contains(r"\tnone"),
        "{line}"
    );
    assert!(!line.contains(r"\\t"), "escaped twice: {line}");
}

#[test]
fn bad_files_are_skipped_with_a_reason_and_the_run_goes_on() {
    let dir = TempDir::new("skip");
    dir.write("good.md", BASE);
    dir.write("bin.txt", b"abc\0def".as_slice());
    dir.write("big.md", "word ".repeat(400));
    // Invalid UTF-8 is decoded, not skipped: \xff becomes U+FFFD and splits words.
    dir.write(
        "latin1.txt",
        b"caf\xe9 society and more words here".as_slice(),
    );
    dir.write("image.png", b"\x89PNG\r\n\x1a\n\0\0".as_slice());
    std::os::unix::fs::symlink(dir.path(), dir.path().join("loop.md")).unwrap();
    std::os::unix::fs::symlink(dir.path(), dir.path().join("loopdir")).unwrap();
    dir.write(".git/HEAD.txt", "hidden");
    let report = lineage_json(&[
        "scan",
        dir.path().to_str().unwrap(),
        "--json",
        "--max-file-size",
        "1KiB",
    ]);
    let paths: Vec<&str> = report["documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["path"].as_str().unwrap())
        .collect();
    let mut sorted = paths.clone();
    sorted.sort();
    assert_eq!(sorted, vec!["good.md", "latin1.txt"]);
    let latin = report["documents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["path"] == "latin1.txt")
        .unwrap();
    assert_eq!(latin["tokens"], 6, "caf, society, and, more, words, here");
    let skipped: HashMap<String, String> = report["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["path"].as_str().unwrap().into(),
                s["reason"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(skipped["bin.txt"], "binary");
    assert!(skipped["big.md"].starts_with("too large"), "{skipped:?}");
    assert!(skipped["loop.md"].starts_with("symlink"), "{skipped:?}");
    assert_eq!(skipped.len(), 3, "{skipped:?}");
}

#[test]
fn readable_summary_names_the_copier_and_its_source() {
    let dir = TempDir::new("summary");
    dir.write("a.md", BASE);
    dir.write("b.md", format!("{BASE} plus a short new ending"));
    let out = lineage(&["scan", dir.path().to_str().unwrap(), "--order", "path"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("2 documents"), "{text}");
    let line = text
        .lines()
        .find(|l| l.contains("b.md"))
        .expect("b.md listed");
    assert!(line.trim_end().ends_with("a.md"), "{line}");
}

/// The peak resident memory of one run of the binary, in KiB (its own
/// `ru_maxrss`, from `wait4` on its pid, not of all children).
#[cfg(target_os = "linux")]
fn peak_rss_kib(args: &[&str]) -> i64 {
    let home = std::env::temp_dir().join("lineage-test-empty-config");
    std::fs::create_dir_all(&home).unwrap();
    // Reaped by `wait4` below, not by `Child::wait`.
    #[allow(clippy::zombie_processes)]
    let child = common::command(&home, args)
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("run lineage");
    // SAFETY: rusage is plain integers, for which all zeros are valid.
    let (mut status, mut usage) = (0, unsafe { std::mem::zeroed::<libc::rusage>() });
    // SAFETY: waits for our own child, writing into the two locals.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{args:?}"
    );
    usage.ru_maxrss
}

/// A table far bigger than the folder maps the pages its lookups land in,
/// 4 KiB each, and not 2 MiB huge pages (which took 2 GiB here).
#[cfg(target_os = "linux")]
#[test]
fn a_huge_table_over_a_small_folder_maps_little() {
    let demo = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/demo");
    let kib = peak_rss_kib(&["scan", demo, "--json", "--table-size", "2GiB"]);
    assert!(kib < 256 << 10, "peak RSS {kib} KiB");
}

/// The readable `scan`: counts with thousands separators, and the list of
/// documents that copy most in columns, the origins lined up however long
/// the names shown (the newcomer's long paths pushed them out of line).
#[test]
fn the_readable_scan_groups_digits_and_lines_up_its_columns() {
    let dir = TempDir::new("readable-scan");
    let text = common::text(5, 300);
    // A name of 56 characters: past the 40 the column had.
    for name in [
        "a.md",
        "b-copy.md",
        "deep/folder/with/a/much/longer/name/than/forty/c-copy.md",
    ] {
        dir.write(name, &text);
    }
    let out = lineage(&["scan", dir.path().to_str().unwrap(), "--order", "path"]);
    assert!(out.status.success());
    let shown = String::from_utf8(out.stdout).unwrap();
    assert!(shown.starts_with("3 documents, 900 tokens"), "{shown}");
    assert!(shown.contains("(8,355,904 entries of 8 B"), "{shown}");
    let rows: Vec<&str> = shown
        .lines()
        .skip_while(|l| !l.contains("copy most"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(rows.len(), 3, "{shown}");
    let from = |row: &str| row.find(" from").or_else(|| row.find(" a.md"));
    let at: Vec<Option<usize>> = rows.iter().map(|r| from(r)).collect();
    assert!(at.iter().all(|&a| a.is_some() && a == at[0]), "{shown}");
}

/// `--order version`: `v9/` before `v10/` (bytewise, `v10` came first and
/// `v9/CLI.md` was reported copied from it), and the order is in the
/// report's settings.
#[test]
fn version_order_takes_v9_before_v10() {
    let dir = TempDir::new("order-version");
    let page = "The command line takes a folder and prints, for every page, \
                where each of its passages was copied from and what is new.";
    dir.write("v9/CLI.md", page);
    dir.write("v10/CLI.md", format!("{page} Version ten adds a flag."));
    let root = dir.path().to_str().unwrap();
    for (order, first) in [("path", "v10/CLI.md"), ("version", "v9/CLI.md")] {
        let report = lineage_json(&["scan", root, "--json", "--order", order]);
        assert_eq!(report["params"]["order"], order);
        let docs = report["documents"].as_array().unwrap();
        assert_eq!(docs[0]["path"], first, "{order}: {report}");
        assert_eq!(docs[1]["dominant_origin"], 0, "{order}: {report}");
    }
}

/// The config's `order = [globs]`: the version folders first, in version
/// order, then `docs/` (the next release), as a Jest-like repository keeps
/// them; by path, `docs/` came first and was the origin of every version.
#[test]
fn a_listed_order_takes_the_version_folders_then_next() {
    let dir = TempDir::new("order-listed");
    let page = "Jest's command line runs the tests of a project and reports, \
                for every file, which tests passed and which failed.";
    dir.write("repo/website/versioned_docs/version-29.7/CLI.md", page);
    dir.write(
        "repo/website/versioned_docs/version-30.0/CLI.md",
        format!("{page} Version thirty adds sharding."),
    );
    dir.write(
        "repo/docs/CLI.md",
        format!("{page} Version thirty adds sharding. Next drops a flag."),
    );
    dir.write(
        "lineage.toml",
        "order = [\"website/versioned_docs/version-*\", \"docs\"]\n",
    );
    let (root, config) = (dir.path().join("repo"), dir.path().join("lineage.toml"));
    let (root, config) = (root.to_str().unwrap(), config.to_str().unwrap());
    let report = lineage_json(&["scan", root, "--json", "--config", config]);
    let paths: Vec<&str> = (report["documents"].as_array().unwrap().iter())
        .map(|d| d["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            "website/versioned_docs/version-29.7/CLI.md",
            "website/versioned_docs/version-30.0/CLI.md",
            "docs/CLI.md"
        ]
    );
    // The oldest version is all its own; next takes 30.0's addition from it.
    let docs = &report["documents"];
    assert_eq!(docs[0]["fresh_tokens"], docs[0]["tokens"], "{report}");
    let from_30: Vec<&Value> = (docs[2]["copied"].as_array().unwrap().iter())
        .filter(|c| c["origin"] == 1)
        .collect();
    assert_eq!(from_30.len(), 1, "{report}");
}
