//! README is the front door: the defaults it quotes are read beside the
//! binary's `--help` (which the config's defaults feed, and
//! config.example.toml is checked against those), and every flag it names
//! is one a command takes. A default changed in the code and not in README,
//! or a flag renamed, fails here.
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

mod common;

use std::collections::BTreeMap;

const README: &str = include_str!("../README.md");

/// Every command's `--help`, by command.
fn helps() -> BTreeMap<&'static str, String> {
    let home = common::TempDir::new("readme");
    [
        "scan", "sweep", "pairs", "index", "explain", "diff", "copies", "shared", "stale", "check",
        "report", "watch",
    ]
    .into_iter()
    .map(|c| (c, vec![c]))
    .chain([
        ("pocket build", vec!["pocket", "build"]),
        ("pocket query", vec!["pocket", "query"]),
    ])
    .map(|(name, args)| {
        let mut args = args.clone();
        args.push("--help");
        let out = common::command(home.path(), &args).output().unwrap();
        assert!(out.status.success(), "{name} --help");
        (name, String::from_utf8(out.stdout).unwrap())
    })
    .collect()
}

/// The default `help` gives `flag`: the `default:` of its entry (the
/// lines from the flag to the next one), its first word.
fn default_of(help: &str, flag: &str) -> Option<String> {
    let lines: Vec<&str> = help.lines().collect();
    let at = lines.iter().position(|l| {
        let t = l.trim_start();
        t.starts_with(&format!("{flag} ")) || t.contains(&format!(", {flag} "))
    })?;
    let mut entry = lines[at].to_string();
    for l in &lines[at + 1..] {
        if l.trim_start().starts_with('-') {
            break;
        }
        entry.push(' ');
        entry.push_str(l.trim());
    }
    let d = entry.split("default: ").nth(1)?;
    Some(d.split([']', ',', ' ', ';']).next()?.to_string())
}

/// Defaults README quotes: its words, the command, the flag and the
/// default as `--help` writes it.
const QUOTED: &[(&str, &str, &str, &str)] = &[
    ("the default 64 MiB table", "scan", "--table-size", "64MiB"),
    ("the default 64 MiB table", "watch", "--table-size", "64MiB"),
    (
        "`--history-budget`, 512 MiB by default",
        "index",
        "--history-budget",
        "512MiB",
    ),
    (
        "the default is the files' modification\ntimes",
        "index",
        "--order",
        "mtime",
    ),
    (
        "at resemblance 0.8 by default",
        "pairs",
        "--min-similarity",
        "0.8",
    ),
    (
        "`--min-similarity 0.5` as `watch`'s clusters",
        "watch",
        "--min-similarity",
        "0.5",
    ),
    ("MinHash by default", "pairs", "--method", "minhash"),
    ("`max_copied` (50 %)", "check", "--max-copied", "50"),
    ("`near_duplicate` (0.9)", "check", "--near-duplicate", "0.9"),
    (
        "`--connect-timeout` seconds (60)",
        "scan",
        "--connect-timeout",
        "60",
    ),
    (
        "`--progress-timeout` seconds (60)",
        "scan",
        "--progress-timeout",
        "60",
    ),
    (
        "At the default, every 100,000 documents",
        "scan",
        "--checkpoint-every",
        "100000",
    ),
];

#[test]
fn the_defaults_readme_quotes_are_the_binarys() {
    let helps = helps();
    for &(words, command, flag, default) in QUOTED {
        assert!(
            README.contains(words),
            "README no longer says {words:?}: update it and this list together"
        );
        let help = &helps[command];
        assert_eq!(
            default_of(help, flag).as_deref(),
            Some(default),
            "README says {words:?}; `lineage {command} --help` gives {flag} another default"
        );
    }
}

/// Flags README names that belong to other tools (cargo, git).
const NOT_OURS: &[&str] = &[
    "--release",
    "--bench",
    "--locked",
    "--all-targets",
    "--git",
    "--check",
    "--name-only",
    "--path",
];

#[test]
fn every_flag_readme_names_is_one_a_command_takes() {
    let helps = helps();
    let mut flags: Vec<&str> = Vec::new();
    for (i, _) in README.match_indices("--") {
        let rest = &README[i + 2..];
        let len = rest
            .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'))
            .unwrap_or(rest.len());
        // A flag starts with a letter (not `---`, `-->`).
        if len > 0 && rest.starts_with(|c: char| c.is_ascii_lowercase()) {
            flags.push(&README[i..i + 2 + len]);
        }
    }
    flags.sort_unstable();
    flags.dedup();
    assert!(flags.len() > 20, "{flags:?}");
    for flag in flags.into_iter().filter(|f| !NOT_OURS.contains(f)) {
        let taken = helps.values().any(|h| {
            h.lines().any(|l| {
                let t = l.trim_start();
                t.starts_with(&format!("{flag} ")) || t.contains(&format!(", {flag} "))
            })
        });
        assert!(
            taken,
            "README names {flag}, which no command's --help lists"
        );
    }
}

#[test]
fn a_help_entry_is_read_to_its_default() {
    let help = "  -k <K>  Shingle length [default: 8]\n      --table-size <SIZE>  How big\n          \
                the table is [config: table_size; default: 64MiB]\n      --x  No default\n";
    assert_eq!(default_of(help, "--table-size").as_deref(), Some("64MiB"));
    assert_eq!(default_of(help, "-k").as_deref(), Some("8"));
    assert_eq!(default_of(help, "--x"), None);
    assert_eq!(default_of(help, "--absent"), None);
}
