//! `assets/demo` (the README's first command) shows origins and clusters.
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

mod common;

use common::lineage_json;

fn demo() -> String {
    format!("{}/assets/demo", env!("CARGO_MANIFEST_DIR"))
}

/// The flags of the README's first command (`cargo run --release -- watch
/// assets/demo FLAGS`).
fn readme_flags() -> Vec<String> {
    let readme =
        std::fs::read_to_string(format!("{}/README.md", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let command = readme
        .lines()
        .find(|l| l.starts_with("cargo run --release -- watch assets/demo"))
        .expect("the README's first command");
    command
        .split_whitespace()
        .skip(6)
        .map(String::from)
        .collect()
}

#[test]
fn the_demo_shows_copied_pages_and_their_earliest_sources() {
    let r = lineage_json(&["scan", &demo(), "--json", "--order", "path"]);
    let docs = r["documents"].as_array().unwrap();
    let path = |id: &serde_json::Value| {
        docs[id.as_u64().unwrap() as usize]["path"]
            .as_str()
            .unwrap()
    };
    let copiers: Vec<(&str, &str)> = docs
        .iter()
        .filter(|d| d["top_origin"] != d["id"])
        .map(|d| (d["path"].as_str().unwrap(), path(&d["top_origin"])))
        .collect();
    assert!(copiers.len() >= 10, "{copiers:?}");
    // Every copier copies from an earlier version of a page.
    for (doc, from) in &copiers {
        assert!(from < doc, "{doc} from {from}");
    }
    // v3 brings back v1's calibration page, which v2 had dropped.
    let cal = docs
        .iter()
        .find(|d| d["path"] == "v3/calibration.md")
        .unwrap();
    assert_eq!(path(&cal["dominant_origin"]), "v1/calibration.md");
    assert!(r["skipped"].as_array().unwrap().is_empty());
}

#[test]
fn the_demo_has_near_duplicate_clusters() {
    let r = lineage_json(&["pairs", &demo(), "--json", "--min-similarity", "0.5"]);
    let clusters = r["clusters"].as_array().unwrap();
    assert!(clusters.len() >= 6, "{clusters:?}");
    assert!(
        clusters
            .iter()
            .any(|c| c.as_array().unwrap().iter().any(|p| p == "v3/api.html"))
    );
}

/// The README's first command runs the demo with a small table: evictions
/// and hits are at work from the first screen, and the origins stay nearly
/// those of the exact result.
#[test]
fn the_readme_settings_show_eviction_with_origins_intact() {
    let flags = readme_flags();
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    assert!(flags.contains(&"--table-size"), "{flags:?}");
    let root = demo();
    let mut args = vec![
        "sweep",
        &root,
        "--json",
        "--selectors",
        "nhs",
        "--evictions",
        "lucky",
    ];
    let size = flags[flags.iter().position(|&f| f == "--table-size").unwrap() + 1];
    args.extend(["--sizes", size]);
    if let Some(i) = flags.iter().position(|&f| f == "--order") {
        args.extend(["--order", flags[i + 1]]);
    }
    let r = lineage_json(&args);
    let run = &r["runs"][0];
    assert!(run["evictions"].as_u64().unwrap() > 100, "{run}");
    assert!(run["hits"].as_u64().unwrap() > 100, "{run}");
    assert!(run["do"].as_f64().unwrap() >= 90.0, "{run}");
    assert!(run["tf"].as_f64().unwrap() >= 90.0, "{run}");
}

/// In the README's order the demo's folders are versions: a page of v2 is
/// diffed against the same page of v1, which is what its Documents row's
/// changed and removed shares count.
#[test]
fn in_the_readme_order_a_page_of_v2_follows_the_same_page_of_v1() {
    let flags = readme_flags();
    let order = &flags[flags.iter().position(|f| f == "--order").unwrap() + 1];
    let home = common::TempDir::new("demo-order");
    let ix = home.path().join("ix");
    let (root, ix) = (demo(), ix.to_str().unwrap().to_string());
    let at = ["--index", &ix, "--order", order];
    common::stdout_of(home.path(), &[&["index", &root][..], &at].concat());
    let args = [&["diff", &root, "v2/api.md", "--json"][..], &at[..2]].concat();
    let d: serde_json::Value =
        serde_json::from_str(&common::stdout_of(home.path(), &args)).unwrap();
    assert_eq!(d["predecessor"]["path"], "v1/api.md", "{d}");
    assert_eq!(d["predecessor"]["how"], "folder");
    assert!(
        d["new"].as_u64().unwrap() > 0 && d["kept"].as_u64().unwrap() > 0,
        "{d}"
    );
}

/// The README's `check` example on the demo: its versions copy each other
/// by design, so the check fails without the README's allow rule and
/// passes with it.
#[test]
fn the_readme_check_passes_the_demo_with_its_allow_rule_and_fails_without() {
    let readme =
        std::fs::read_to_string(format!("{}/README.md", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let line = readme
        .lines()
        .find(|l| l.starts_with("cargo run --release -- check assets/demo --allow"))
        .expect("the README's check example");
    let rule = line.split('\'').nth(1).expect("a quoted rule");
    let home = common::TempDir::new("demo-check");
    let ix = home.path().join("ix");
    let ix = ix.to_str().unwrap();
    let check = |extra: &[&str]| {
        let root = demo();
        let args = [&["check", &root, "--index", ix][..], extra].concat();
        common::command(home.path(), &args).output().unwrap()
    };
    let without = check(&[]);
    assert_eq!(without.status.code(), Some(1));
    let text = String::from_utf8(without.stdout).unwrap();
    assert!(text.starts_with("lineage check: failed: "), "{text}");
    let with = check(&["--allow", rule]);
    let text = String::from_utf8(with.stdout).unwrap();
    assert_eq!(with.status.code(), Some(0), "{text}");
    assert!(
        text.starts_with("lineage check: passed: 29 pages"),
        "{text}"
    );
}
