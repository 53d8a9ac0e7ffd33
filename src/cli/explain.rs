//! `lineage explain ROOT PATH`: one document's origin breakdown from the
//! index, as the Origin pane shows it: its passages in order, each new or
//! copied from an earlier version, with the origin's own words.
//!
//! The index is brought up to date first (a walk: unchanged files are not
//! read), with the settings it was built with; if a running lineage holds
//! it, that process keeps it current and explain reads what it committed.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;
use serde::Serialize;

use super::diff::{Base, PredecessorJson, how_text};
use super::index::Stderr;
use super::show::{ParamsJson, show};
use super::{CommitJson, Fatal, IndexAt, PathJson, SourceArgs};
use lineage_config::Config;
use lineage_core::bytesize::grouped;
use lineage_core::fingerprint::polynomial::Polynomial;
use lineage_engine::query::{self, Row};
use lineage_engine::{Indexer, OriginView, VersionStatus};
use lineage_origin::Selector;
use lineage_source::{self as source, Filter};
use lineage_store::index::{self, IndexError, Read, ReadOnly};

#[derive(Args, Debug)]
pub(super) struct ExplainArgs {
    #[command(flatten)]
    pub(super) source: SourceArgs,
    /// The document: its path under ROOT (as `scan` and the TUI name it),
    /// or a path to it from here. A deleted page is found by its old path.
    path: PathBuf,
    /// Which of its versions (1 is its first) [default: the latest].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    version: Option<u32>,
    /// The exact origins (the earliest version holding each shingle) instead
    /// of the estimate the index recorded with its settings.
    #[arg(long)]
    exact: bool,
    /// Print `lineage-explain/2` JSON (docs/formats.md §6) instead of text.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    store: IndexAt,
}

pub(super) fn run(args: ExplainArgs, config: Config) -> Result<(), Fatal> {
    let rules = config.predecessor.clone();
    let (ix, rows, id) = read_page(&args.source, &args.store, config, &args.path, args.version)?;
    let view = query::origin_view(&ix, &rows, id, args.exact)?;
    let predecessor = lineage_engine::predecessor(&ix, &rows, id, &rules)?.map(Base::from);
    let explained = Explained::new(&ix, &rows, &view, predecessor);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if args.json {
        super::show::json(&mut out, &explained.json(&ix))?;
        writeln!(out)?;
    } else {
        explained.text(&ix, &mut out)?;
    }
    out.flush()?;
    Ok(())
}

/// The settings from `source` and `store`, the root's index read (see
/// [`read_index`]), and the version id of `path`'s version `version` (the
/// latest if None).
pub(super) fn read_page(
    source: &SourceArgs,
    store: &IndexAt,
    mut config: Config,
    path: &Path,
    version: Option<u32>,
) -> Result<(ReadOnly, Vec<Row>, u32), Fatal> {
    source.apply(&mut config);
    config.validate()?;
    let root = source.root.as_path();
    let (ix, rows, _) = read_index(root, store, &config)?;
    let id = pick(&rows, &document_name(root, path), version)?;
    Ok((ix, rows, id))
}

/// The index of `root`, brought up to date (unless a running lineage holds
/// it and keeps it so), opened to read, with every version's row and, where
/// this process brought it up to date, its table's regime. It is not made
/// where none is, as a mistyped --index would.
pub(super) fn read_index(
    root: &Path,
    store: &IndexAt,
    config: &Config,
) -> Result<(ReadOnly, Vec<Row>, Option<TableRegime>), Fatal> {
    open_index(root, store, config, false)
}

/// [`read_index`], making the index where none is when `make` says so
/// (`check`, which a fresh clone in CI runs first).
pub(super) fn open_index(
    root: &Path,
    store: &IndexAt,
    config: &Config,
    make: bool,
) -> Result<(ReadOnly, Vec<Row>, Option<TableRegime>), Fatal> {
    source::check_root(root)?;
    let dir = store.dir(root, config)?;
    if !make && !index::exists(&dir) {
        // Raw, exact names: the message is escaped where it is printed.
        let raw = |p: &Path| source::name::of_os(p.as_os_str()).into_owned();
        let flag = match &store.index {
            Some(d) => format!(" --index {}", raw(d)),
            None => String::new(),
        };
        return Err(Fatal(format!(
            "no index of {} in {}: `lineage index {}{flag}` makes one",
            raw(root),
            raw(&dir),
            raw(root),
        )));
    }
    let poly = config.polynomial();
    let mut regime = None;
    match update(root, &dir, config, &poly) {
        Ok(r) => regime = Some(r),
        Err(IndexError::Locked(..)) => {}
        // A folder that cannot be written (a read-only file system, a
        // colleague's index) is read as it was last written.
        Err(e) if e.unwritable() => super::stale_notice(&dir, &e),
        Err(e) => return Err(e.into()),
    }
    let ix = ReadOnly::open(&dir, &poly)?;
    let rows = query::rows(&ix)?;
    Ok((ix, rows, regime))
}

/// The index's table after the catch-up: whether it holds every key (the
/// answers read from the outcomes are then exact, or as estimated as the
/// settings make them) or samples.
pub(super) struct TableRegime {
    /// As the JSON formats name it (`table.regime`).
    pub(super) name: &'static str,
    /// As `scan` says it.
    pub(super) sentence: String,
}

/// Bring the index of `root` up to date with the settings it has (a new
/// index: the configured ones), so nothing is re-processed.
fn update(
    root: &Path,
    dir: &Path,
    config: &Config,
    poly: &Polynomial,
) -> Result<TableRegime, IndexError> {
    let params = ReadOnly::open(dir, poly).map_or(config.params(), |r| *r.params());
    let filter = Filter::new(&config.include, &config.exclude)
        .map_err(|e| IndexError::Location(e.to_string()))?;
    let mut obs = Stderr::new();
    let workers = config.pass_workers();
    let mut ix = Indexer::open_with(root, dir, params, poly, workers, &mut obs)?;
    // A command that reads forgets nothing: the catch-up keeps every text
    // (`index` and `watch` hold the history to its budget).
    ix.index_mut().set_history_budget(u64::MAX)?;
    let walk = source::walk_with(root, &filter, config.walk_options())
        .map_err(|e| IndexError::Location(e.to_string()))?;
    super::catch_up(&mut ix, walk, config, &filter, &mut obs)?;
    obs.clear();
    // From the table's counters where they settle it: a catch-up with no
    // change does not make the table.
    let (p, regime) = (*ix.index().params(), ix.regime()?);
    // A table made again from the history (its snapshot made none) is
    // written: nothing when the table was not made, or was the snapshot's.
    ix.checkpoint()?;
    for n in ix.index_mut().take_notices() {
        lineage_store::index::Observer::notice(&mut obs, &n);
    }
    let exact = p.exact_when_held();
    Ok(TableRegime {
        name: regime.name(exact),
        sentence: regime.describe(p.selector == Selector::All, exact, grouped),
    })
}

/// The document's name in the index: `path` relative to the root, whether
/// given from the root or from here (an existing file under the root).
pub(super) fn document_name(root: &Path, path: &Path) -> String {
    let inside = std::fs::canonicalize(path)
        .ok()
        .zip(std::fs::canonicalize(root).ok())
        .and_then(|(p, r)| p.strip_prefix(&r).ok().map(Path::to_path_buf));
    let rel = inside.unwrap_or_else(|| {
        path.components()
            .filter(|c| !matches!(c, std::path::Component::CurDir))
            .collect()
    });
    source::name::of_os(rel.as_os_str()).into_owned()
}

/// The version id of `name`'s version `version` (the latest if None).
pub(super) fn pick(rows: &[Row], name: &str, version: Option<u32>) -> Result<u32, Fatal> {
    if name.is_empty() {
        return Err(Fatal(
            "that path is the root folder itself, not a document in it".into(),
        ));
    }
    let versions: Vec<(u32, u32)> = (rows.iter().enumerate())
        .filter(|(_, r)| r.path == name)
        .map(|(id, r)| (id as u32, r.version))
        .collect();
    // Raw: the message is escaped where it is printed.
    let shown = name;
    let Some(&(latest, last)) = versions.iter().max_by_key(|v| v.1) else {
        let near = nearest(rows.iter().map(|r| r.path.as_str()), name);
        let guess = match near.as_slice() {
            [] => String::new(),
            [one] => format!("; did you mean {one}?"),
            [first @ .., last] => format!("; did you mean {} or {last}?", first.join(", ")),
        };
        return Err(Fatal(format!(
            "{shown} is not a document of this index{guess} (see `lineage index ROOT --documents`)"
        )));
    };
    match version {
        None => Ok(latest),
        Some(n) => versions
            .iter()
            .find(|v| v.1 == n)
            .map(|v| v.0)
            .ok_or_else(|| Fatal(format!("{shown} has versions 1 to {last}, not {n}"))),
    }
}

/// Up to three of `names` that `name` was probably meant to be, equally
/// alike: those that end with it after a `/` (the folder left out), else
/// those fewest edits from it (a typo; one in three characters at most).
fn nearest<'a>(names: impl Iterator<Item = &'a str>, name: &str) -> Vec<&'a str> {
    let names: std::collections::BTreeSet<&str> = names.collect();
    let want: Vec<char> = name.chars().collect();
    let bound = (want.len() / 3).max(2);
    let tail = format!("/{name}");
    let mut near: Vec<(bool, usize, &str)> = (names.into_iter())
        .filter_map(|n| {
            if n.ends_with(&tail) {
                return Some((false, 0, n));
            }
            let d = edits(&want, n, bound)?;
            Some((true, d, n))
        })
        .collect();
    near.sort_unstable();
    // The best alike only: `b.md` for `b.mdd`, not `a.md` beside it.
    let best = near.first().map(|n| (n.0, n.1));
    (near.into_iter())
        .take_while(|n| Some((n.0, n.1)) == best)
        .take(3)
        .map(|(_, _, n)| n)
        .collect()
}

/// The Levenshtein distance from `a` to `b` in characters, if at most `bound`.
fn edits(a: &[char], b: &str, bound: usize) -> Option<usize> {
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > bound {
        return None;
    }
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let up = row[j + 1];
            row[j + 1] = (diag + usize::from(ca != cb)).min(up + 1).min(row[j] + 1);
            diag = up;
        }
        if row.iter().min().is_some_and(|&m| m > bound) {
            return None;
        }
    }
    row.last().copied().filter(|&d| d <= bound)
}

/// The index's settings, as `scan` writes its run's (`lineage-report/1`),
/// without the processing order, which an index does not keep.
pub(super) fn params_json(ix: &impl Read) -> ParamsJson {
    ParamsJson::new(ix.params(), ix.polynomial(), None)
}

/// A document's passages with their origins' words.
struct Explained<'a> {
    view: &'a OriginView,
    rows: &'a [Row],
    passages: Vec<Passage>,
    /// What `diff` compares it with (docs/algorithms.md §12).
    predecessor: Option<Base>,
}

struct Passage {
    tokens: (u32, u32),
    text: Option<String>,
    /// Version id of the origin; None for new text.
    origin: Option<u32>,
    origin_text: Option<String>,
}

impl<'a> Explained<'a> {
    fn new(
        ix: &impl Read,
        rows: &'a [Row],
        view: &'a OriginView,
        predecessor: Option<Base>,
    ) -> Explained<'a> {
        let mut origins = Words::new(ix, rows);
        let passages = (view.runs.iter().zip(&view.targets))
            .map(|(r, target)| {
                let origin = r.origin.filter(|&o| o != view.id);
                let origin_text =
                    target.and_then(|t| origins.of(t.id, t.token, t.token + (r.end - r.start)));
                Passage {
                    tokens: (r.start, r.end),
                    text: view
                        .text
                        .as_deref()
                        .ok()
                        .and_then(|t| slice(t, &view.spans, r.start, r.end)),
                    origin,
                    origin_text,
                }
            })
            .collect();
        Explained {
            view,
            rows,
            passages,
            predecessor,
        }
    }

    fn name(&self, id: u32) -> String {
        let r = &self.rows[id as usize];
        format!("{} v{}", show(&r.path), r.version)
    }

    /// [`Explained::name`], and the commit it was read from where it was.
    fn name_at(&self, ix: &impl Read, id: u32) -> String {
        match ix.commit_of(id).ok().flatten() {
            Some(c) => format!("{} ({})", self.name(id), super::commit_line(&c)),
            None => self.name(id),
        }
    }

    fn text(&self, ix: &impl Read, out: &mut impl Write) -> std::io::Result<()> {
        let v = self.view;
        let status = v
            .status
            .describe(v.version)
            .unwrap_or_else(|| "live".into());
        let p = ix.params();
        let how = if v.exact {
            "exact".to_string()
        } else {
            format!(
                "estimated ({} {} {} {} k={})",
                p.selector, p.table_size, p.eviction, p.estimation, p.k
            )
        };
        let tokens = v
            .spans
            .len()
            .max(self.passages.last().map_or(0, |p| p.tokens.1 as usize));
        writeln!(
            out,
            "{}, version {} ({status}), {tokens} tokens, {how}",
            show(&v.path),
            v.version
        )?;
        match &self.predecessor {
            Some(b) => writeln!(
                out,
                "predecessor: {} ({})",
                self.name_at(ix, b.id),
                how_text(b.how.as_ref())
            )?,
            None => writeln!(out, "predecessor: none (a first version)")?,
        }
        if let Err(why) = &v.text {
            writeln!(out, "text not shown: {}", show(why))?;
        }
        writeln!(out, "origins:")?;
        for e in &v.legend {
            let who = if e.origin == v.id {
                "new text".to_string()
            } else {
                self.name_at(ix, e.origin)
            };
            writeln!(out, "  {:5.1} %  {who}", e.percent)?;
        }
        for p in &self.passages {
            let from = match p.origin {
                Some(o) => format!("from {}", self.name_at(ix, o)),
                None => "new".to_string(),
            };
            writeln!(out, "\ntokens {}–{} {from}", p.tokens.0, p.tokens.1)?;
            for line in p.text.as_deref().unwrap_or("").lines() {
                writeln!(out, "  │ {}", show(line))?;
            }
        }
        Ok(())
    }

    fn json(&self, ix: &impl Read) -> ExplainJson {
        let v = self.view;
        let version_json = |id: u32| VersionJson::of(self.rows, id).with_commit(ix, id);
        ExplainJson {
            format: "lineage-explain/2",
            path: PathJson::new(&v.path),
            version: v.version,
            status: status_name(v.status),
            exact: v.exact,
            params: params_json(ix),
            text_error: v.text.as_ref().err().cloned(),
            predecessor: (self.predecessor.as_ref()).map(|b| PredecessorJson::of(ix, self.rows, b)),
            origins: (v.legend.iter())
                .map(|e| OriginJson {
                    origin: (e.origin != v.id).then(|| version_json(e.origin)),
                    percent: e.percent,
                })
                .collect(),
            passages: (self.passages.iter())
                .map(|p| PassageJson {
                    tokens: [p.tokens.0, p.tokens.1],
                    text: p.text.clone(),
                    origin: p.origin.map(version_json),
                    origin_text: p.origin_text.clone(),
                })
                .collect(),
        }
    }
}

/// Versions' words by token range, each text read once.
pub(super) struct Words<'a, R> {
    ix: &'a R,
    rows: &'a [Row],
    /// Each version read: its text (None when not kept) and token spans.
    read: HashMap<u32, Text>,
}

type Text = (Option<String>, Vec<(u32, u32)>);

impl<'a, R: Read> Words<'a, R> {
    pub(super) fn new(ix: &'a R, rows: &'a [Row]) -> Words<'a, R> {
        Words {
            ix,
            rows,
            read: HashMap::new(),
        }
    }

    /// Tokens `start..end` of version `id`, as written there (None when its
    /// text is not kept).
    pub(super) fn of(&mut self, id: u32, start: u32, end: u32) -> Option<String> {
        let (ix, rows) = (self.ix, self.rows);
        let (text, spans) = self.read.entry(id).or_insert_with(|| {
            let (text, spans) = query::text_of(ix, rows, id);
            (text.ok(), spans)
        });
        slice(text.as_deref()?, spans, start, end)
    }
}

/// Tokens `start..end` of a text with token `spans`, as written there.
fn slice(text: &str, spans: &[(u32, u32)], start: u32, end: u32) -> Option<String> {
    let range = lineage_engine::token_bytes(spans, start..end)?;
    text.get(range).map(str::to_string)
}

#[derive(Serialize)]
struct ExplainJson {
    format: &'static str,
    #[serde(flatten)]
    path: PathJson,
    version: u32,
    status: &'static str,
    exact: bool,
    params: ParamsJson,
    /// Why the text cannot be shown (passages then carry no text).
    #[serde(skip_serializing_if = "Option::is_none")]
    text_error: Option<String>,
    /// What `diff` compares it with; None for a first version.
    predecessor: Option<PredecessorJson>,
    origins: Vec<OriginJson>,
    passages: Vec<PassageJson>,
}

#[derive(Serialize)]
pub(super) struct VersionJson {
    #[serde(flatten)]
    path: PathJson,
    version: u32,
    /// The commit it was read from (a repository's history).
    #[serde(skip_serializing_if = "Option::is_none")]
    commit: Option<CommitJson>,
}

impl VersionJson {
    /// Version `id`, by path and number.
    pub(super) fn of(rows: &[Row], id: u32) -> VersionJson {
        let r = &rows[id as usize];
        VersionJson {
            path: PathJson::new(&r.path),
            version: r.version,
            commit: None,
        }
    }

    /// With the commit version `id` was read from, where it was.
    pub(super) fn with_commit(mut self, ix: &impl Read, id: u32) -> VersionJson {
        self.commit = ix.commit_of(id).ok().flatten().map(|c| CommitJson::of(&c));
        self
    }
}

/// A version's status as the JSON formats name it.
pub(super) fn status_name(s: VersionStatus) -> &'static str {
    match s {
        VersionStatus::Live => "live",
        VersionStatus::Replaced { .. } => "replaced",
        VersionStatus::Deleted => "deleted",
    }
}

#[derive(Serialize)]
struct OriginJson {
    /// None for the document's own new text.
    origin: Option<VersionJson>,
    percent: f64,
}

#[derive(Serialize)]
struct PassageJson {
    tokens: [u32; 2],
    text: Option<String>,
    origin: Option<VersionJson>,
    origin_text: Option<String>,
}
