//! The baseline: the copies a team has accepted, by content, so only new
//! ones fail (`--baseline FILE`, `--update-baseline`, `--baseline-from
//! REV`). A copy is known by its page, its origin and its passage's hash
//! (its words, not their lines: the same after a reflow or a move), with a
//! count, so a second verbatim copy of an accepted passage is new. The file
//! is `lineage-baseline/1` JSON (docs/formats.md §6), sorted, so a change to
//! it reads as a diff in review.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::super::Fatal;
use super::super::show::show;
use lineage_engine::check::{Checked, Rule};
use lineage_engine::query::Row;

/// The largest baseline read: a copy is a line of JSON, and a file past
/// this is not one.
const MAX_FILE: u64 = 256 << 20;

const FORMAT: &str = "lineage-baseline/1";

/// The accepted copies and near-duplicate pairs.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Baseline {
    /// (page, origin, passage hash) → how many times accepted.
    copies: HashMap<(String, String, u64), u32>,
    /// (later page, earlier page).
    near: HashSet<(String, String)>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    format: String,
    /// The lineage that wrote it.
    lineage: String,
    /// The shingle length and the fingerprints' seed: the passage hashes
    /// are of their keys.
    k: usize,
    fingerprint_seed: u64,
    copies: Vec<CopyEntry>,
    near_duplicates: Vec<NearEntry>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CopyEntry {
    path: String,
    origin: String,
    hash: String,
    count: u32,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct NearEntry {
    path: String,
    other: String,
}

/// The settings a baseline's hashes depend on.
pub(super) struct Settings {
    pub(super) k: usize,
    pub(super) fingerprint_seed: u64,
}

impl Baseline {
    /// Everything `checked` holds: every counted copy, every near-duplicate
    /// pair, accepted.
    pub(super) fn of(checked: &Checked, rows: &[Row]) -> Baseline {
        let path = |id: u32| rows[id as usize].path.clone();
        let mut b = Baseline::default();
        for (page, copies) in &checked.copies {
            for c in copies {
                *b.copies
                    .entry((path(*page), path(c.origin), c.hash))
                    .or_default() += 1;
            }
        }
        for f in &checked.findings {
            if let (Rule::NearDuplicate, Some(other)) = (f.rule, f.other) {
                b.near.insert((path(f.page), path(other)));
            }
        }
        b
    }

    /// The copies of `checked` that the baseline does not accept, as (page,
    /// first token): per page, per origin and passage, the first as many
    /// as it accepts are accepted, in the page's order.
    pub(super) fn new_copies(&self, checked: &Checked, rows: &[Row]) -> HashSet<(u32, u32)> {
        let path = |id: u32| rows[id as usize].path.clone();
        let mut left = self.copies.clone();
        let mut out = HashSet::new();
        for (page, copies) in &checked.copies {
            for c in copies {
                match left.get_mut(&(path(*page), path(c.origin), c.hash)) {
                    Some(n) if *n > 0 => *n -= 1,
                    _ => {
                        out.insert((*page, c.tokens.start));
                    }
                }
            }
        }
        out
    }

    /// Whether the near-duplicate pair (`page` later, `other` earlier) is
    /// accepted.
    pub(super) fn accepts_near(&self, page: &str, other: &str) -> bool {
        self.near.contains(&(page.to_string(), other.to_string()))
    }

    /// The pages it names.
    fn pages(&self) -> HashSet<&str> {
        (self.copies.keys().map(|(p, _, _)| p.as_str()))
            .chain(self.near.iter().map(|(p, _)| p.as_str()))
            .collect()
    }

    /// Read `file`: refused in one line where it is damaged, of another
    /// lineage or other settings, or of another folder (none of its pages
    /// is among `live`) — never read as "nothing accepted".
    pub(super) fn read(
        file: &Path,
        settings: &Settings,
        live: &HashSet<&str>,
    ) -> Result<Baseline, Fatal> {
        let name = show(&file.display().to_string()).into_owned();
        let refused = |why: String| Fatal(format!("--baseline {name}: {why}"));
        let anew = "record it anew with --update-baseline";
        let bytes = lineage_core::fsio::read_bounded(file, MAX_FILE).map_err(|e| {
            refused(match e.kind() {
                std::io::ErrorKind::NotFound => {
                    "no such file; --update-baseline records one".to_string()
                }
                _ => e.to_string(),
            })
        })?;
        let f: File = serde_json::from_slice(&bytes)
            .map_err(|e| refused(format!("damaged, not a lineage baseline ({e}); {anew}")))?;
        if f.format != FORMAT {
            return Err(refused(format!(
                "format {:?}, not {FORMAT}; {anew}",
                f.format
            )));
        }
        let ours = env!("CARGO_PKG_VERSION");
        if f.lineage != ours {
            return Err(refused(format!(
                "recorded by lineage {}, this is {ours}; {anew}",
                f.lineage
            )));
        }
        if (f.k, f.fingerprint_seed) != (settings.k, settings.fingerprint_seed) {
            return Err(refused(format!(
                "recorded with k = {} and fingerprint_seed = {}, the index has k = {} and fingerprint_seed = {}; {anew}",
                f.k, f.fingerprint_seed, settings.k, settings.fingerprint_seed
            )));
        }
        let mut b = Baseline::default();
        for c in f.copies {
            let hash = u64::from_str_radix(&c.hash, 16)
                .ok()
                .filter(|_| c.hash.len() == 16 && c.count > 0)
                .ok_or_else(|| {
                    refused(format!(
                        "damaged: a copy of {} has hash {:?} and count {}; {anew}",
                        show(&c.path),
                        show(&c.hash),
                        c.count
                    ))
                })?;
            *b.copies.entry((c.path, c.origin, hash)).or_default() += c.count;
        }
        b.near = (f.near_duplicates.into_iter())
            .map(|n| (n.path, n.other))
            .collect();
        let pages = b.pages();
        if !pages.is_empty() && !pages.iter().any(|p| live.contains(p)) {
            return Err(refused(format!(
                "of another folder: none of the {} pages it names is here; {anew}",
                pages.len()
            )));
        }
        Ok(b)
    }

    /// Write it to `file` whole or not at all (whatever stands there and is
    /// not a regular file, a link or a FIFO, is refused, not written
    /// through).
    pub(super) fn write(&self, file: &Path, settings: &Settings) -> Result<(), Fatal> {
        let mut copies: Vec<CopyEntry> = (self.copies.iter())
            .map(|((path, origin, hash), &count)| CopyEntry {
                path: path.clone(),
                origin: origin.clone(),
                hash: format!("{hash:016x}"),
                count,
            })
            .collect();
        copies.sort_by(|a, b| {
            (a.path.as_bytes(), a.origin.as_bytes(), &a.hash).cmp(&(
                b.path.as_bytes(),
                b.origin.as_bytes(),
                &b.hash,
            ))
        });
        let mut near: Vec<NearEntry> = (self.near.iter())
            .map(|(path, other)| NearEntry {
                path: path.clone(),
                other: other.clone(),
            })
            .collect();
        near.sort_by(|a, b| {
            (a.path.as_bytes(), a.other.as_bytes()).cmp(&(b.path.as_bytes(), b.other.as_bytes()))
        });
        let f = File {
            format: FORMAT.into(),
            lineage: env!("CARGO_PKG_VERSION").into(),
            k: settings.k,
            fingerprint_seed: settings.fingerprint_seed,
            copies,
            near_duplicates: near,
        };
        let name = show(&file.display().to_string()).into_owned();
        lineage_core::fsio::write_atomic(file, |w| {
            use std::io::Write;
            serde_json::to_writer_pretty(&mut *w, &f)?;
            writeln!(w)
        })
        .map_err(|e| Fatal(format!("--baseline {name}: {e}")))?;
        Ok(())
    }

    /// Accepted copies and pairs, for the summary.
    pub(super) fn len(&self) -> (u32, usize) {
        (self.copies.values().sum(), self.near.len())
    }
}
