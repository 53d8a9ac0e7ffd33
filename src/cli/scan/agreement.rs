//! What every process of a run over many must agree on, as one hash each
//! process trades in its hello (`lineage_split::Cluster::check`).
//!
//! The settings are the whole [`Config`] and the [`Params`], in their Debug
//! form, with only what cannot change `scan`'s answer reset (a short list,
//! each with its reason, that the tests below hold to every key of
//! `config.example.toml`): a setting added later is in the check unless
//! someone says it does not change an answer.

use lineage_config::Config;
use lineage_core::fsio::xxh64::Xxh64;
use lineage_origin::Params;
use lineage_source::FileEntry;

/// The check of a run: the settings that can change its answer, the root
/// as named, and the files walked (path, size and modification time to the
/// nanosecond), hashed (XXH64, the same on every machine). Content is not
/// in it: each process reads only its share of the files, so no process
/// could compare another's without reading them all; times kept by the
/// copy (rsync -a, cp -p) stand for it, as they do for rsync itself.
pub(super) fn agreement(
    root: &std::path::Path,
    c: &Config,
    p: &Params,
    workers: usize,
    files: &[FileEntry],
) -> u64 {
    let mut h = Xxh64::default();
    h.update(format!("{p:?}\n{:?}\n{}\n", answering(c, workers), root.display()).as_bytes());
    for f in files {
        h.update(f.path.as_bytes());
        h.update(&[0]);
        h.update(&f.size.to_le_bytes());
        h.update(&lineage_source::time_ns(f.mtime).to_le_bytes());
    }
    h.finish()
}

/// `c` with what cannot change `scan`'s answer reset to the defaults, and
/// the workers as resolved (0 is the cores, which differ from machine to
/// machine; every process must run as many, for timely).
fn answering(c: &Config, workers: usize) -> Config {
    let d = Config::default();
    Config {
        workers: u16::try_from(workers).unwrap_or(u16::MAX),
        // `index` and `watch` only: scan keeps no history.
        history_budget: d.history_budget,
        // Where an index's versions come from: scan reads the files.
        history: d.history,
        history_since: d.history_since,
        // Fuzzy fingerprints only (`pairs --method fuzzy`, `pocket`).
        lang: d.lang,
        // Where indexes lie: scan reads none.
        index_dir: d.index_dir,
        // What diff and explain compare a first version with.
        predecessor: d.predecessor,
        // What diff and the Documents pane measure a change against.
        basis: d.basis,
        release_tags: d.release_tags,
        // `sweep`'s grid, `watch`'s noticing, the full-screen view.
        sweep: d.sweep,
        watch: d.watch,
        tui: d.tui,
        keys: d.keys,
        // The gate's policies judge scan's answer; they are not in it.
        check: d.check,
        // A folder's own settings are in the fields above already
        // (`Config::for_folder`); the table of every folder's is not.
        folders: d.folders,
        // Where the settings came from, not what they are.
        file: d.file,
        flags: d.flags,
        folder: d.folder,
        ..c.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    /// Keys of `config.example.toml` (`section.key` below a `[section]`)
    /// that do not change scan's answer, and why: the only ones a process
    /// may differ in.
    const NO_ANSWER: &[(&str, &str)] = &[
        ("history_budget", "index and watch only"),
        (
            "history",
            "scan reads the files as they are, never a history",
        ),
        ("history_since", "scan reads no history either"),
        (
            "basis",
            "what diff and the Documents pane measure a change against",
        ),
        (
            "release_tags",
            "which tags the release basis takes, no answer of scan",
        ),
        ("lang", "fuzzy fingerprints only: pairs, pocket"),
        ("index_dir", "scan reads no index"),
        ("sweep.", "sweep's grid"),
        ("watch.", "how watch notices changes"),
        ("tui.", "the full-screen view"),
        ("keys.", "the full-screen view"),
        ("check.", "the policies `check` judges the answer by"),
    ];

    /// Fields of [`Config`] that no key of the example sets, and why they
    /// cannot change an answer.
    const NOT_KEYS: &[(&str, &str)] = &[
        (
            "folders",
            "each folder's settings, applied before the check",
        ),
        ("file", "where the settings were read"),
        ("flags", "which settings came as flags"),
        ("folder", "the folder whose settings were applied"),
        (
            "predecessor",
            "what diff and explain compare a first version with (an array of tables, shown as a comment), no answer of scan",
        ),
    ];

    fn files() -> Vec<FileEntry> {
        (0..3)
            .map(|i| FileEntry {
                path: format!("d{i}.md"),
                abs: format!("/r/d{i}.md").into(),
                size: 100 + i,
                mtime: UNIX_EPOCH + Duration::new(1_700_000_000 + i, 5),
                ctime_ns: 0,
                file_id: i,
                links: 1,
            })
            .collect()
    }

    fn check(c: &Config) -> u64 {
        agreement(
            std::path::Path::new("docs"),
            c,
            &c.params(),
            c.pass_workers(),
            &files(),
        )
    }

    /// Other values of a key's value in the example, to try in turn.
    fn others(value: &str) -> Vec<String> {
        const WORDS: &[&str] = &[
            "path", "hs", "1MiB", "lru", "newest", "be", "light", "de", "ctrl-z", "git", "folder",
            "a <- b",
        ];
        let quoted = || WORDS.iter().map(|w| format!("{w:?}"));
        match value {
            "true" => vec!["false".into()],
            "false" => vec!["true".into()],
            "[]" => quoted().map(|w| format!("[{w}]")).collect(),
            v if v.starts_with('[') => vec!["[]".into()],
            v if v.starts_with('"') => quoted().collect(),
            v => match (v.parse::<u64>(), v.parse::<f64>()) {
                // Up, or down where up is out of range (a percentage at 100).
                (Ok(n), _) => vec![(n + 2).to_string(), (n / 2).to_string()],
                (_, Ok(x)) => vec![(x / 2.0).to_string()],
                _ => panic!("a value of the example this test cannot change: {v}"),
            },
        }
    }

    /// Every key of the example file, changed: the check changes unless
    /// the key is one of [`NO_ANSWER`], so a setting added to the config
    /// reaches the check unless someone names it there, with its reason.
    #[test]
    fn every_setting_that_can_change_an_answer_is_in_the_check() {
        let example = include_str!("../../../config.example.toml");
        let base = check(&Config::default());
        let mut section = String::new();
        let mut keys = Vec::new();
        for line in example.lines().map(str::trim) {
            if let Some(s) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                section = format!("{s}.");
                continue;
            }
            let Some((key, value)) = line.split_once(" = ") else {
                continue;
            };
            if line.starts_with('#') {
                continue;
            }
            let name = format!("{section}{key}");
            let changed = others(value.trim())
                .into_iter()
                .filter_map(|v| {
                    let head = section.strip_suffix('.').map(|s| format!("[{s}]\n"));
                    Config::from_toml(&format!("{}{key} = {v}\n", head.unwrap_or_default())).ok()
                })
                .find(|c| *c != Config::default())
                .unwrap_or_else(|| panic!("no other value of {name} parses"));
            let ignored = NO_ANSWER
                .iter()
                .any(|(k, _)| name == *k || (k.ends_with('.') && name.starts_with(k)));
            if ignored {
                assert_eq!(check(&changed), base, "{name} changes no answer");
            } else {
                assert_ne!(check(&changed), base, "{name} is not in the check");
            }
            keys.push(name);
        }
        assert!(keys.len() > 60, "{keys:?}");
        // Every field of the settings is a key of the example (or a
        // section of them), or one of NOT_KEYS.
        let debug = format!("{:#?}", Config::default());
        for field in debug
            .lines()
            .filter_map(|l| l.strip_prefix("    "))
            .filter(|l| !l.starts_with(' '))
            .filter_map(|l| l.split_once(':').map(|(f, _)| f))
        {
            let in_example = keys
                .iter()
                .any(|k| k == field || k.starts_with(&format!("{field}.")));
            let named = NOT_KEYS.iter().any(|(k, _)| *k == field);
            assert!(
                in_example || named,
                "the setting {field} is neither in config.example.toml nor named in NOT_KEYS"
            );
        }
        // Those that are not keys change nothing either.
        let mut c = Config::default();
        c.folders.insert("/elsewhere".into(), Default::default());
        c.file = Some("/home/a/config.toml".into());
        c.flags = vec!["k"];
        c.folder = Some("/docs".into());
        c.predecessor = vec![lineage_config::PredecessorRule {
            page: "docs/*".into(),
            follows: "v1/*".into(),
        }];
        assert_eq!(check(&c), base);
    }

    /// The files: another path, size or modification time (by a
    /// nanosecond) is another run; so is another root, as named.
    #[test]
    fn the_files_and_their_times_are_in_the_check() {
        let c = Config::default();
        let p = c.params();
        let at = |root: &str, files: &[FileEntry]| {
            agreement(std::path::Path::new(root), &c, &p, 1, files)
        };
        let base = at("docs", &files());
        let changes: [&dyn Fn(&mut FileEntry); 3] =
            [&|f| f.path.push('x'), &|f| f.size += 1, &|f| {
                f.mtime += Duration::from_nanos(1)
            }];
        for change in changes {
            let mut other = files();
            change(&mut other[1]);
            assert_ne!(at("docs", &other), base);
        }
        assert_ne!(at("other", &files()), base);
        // The file's number and its links are this machine's.
        let mut other = files();
        other[0].file_id = 99;
        other[0].abs = "/elsewhere/d0.md".into();
        assert_eq!(at("docs", &other), base);
    }
}
