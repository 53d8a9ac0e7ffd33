//! `lineage index ROOT`: bring the persistent index of a folder up to date
//! and exit.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use clap::Args;
use serde::Serialize;

use super::scan::EstimatedArgs;
use super::show::{self, show};
use super::{CommonEngineArgs, Fatal, PathJson, SourceArgs, StoreArgs, WorkersArgs};
use lineage_config::Config;
use lineage_engine::Indexer;
use lineage_source::{self as source, Filter};
use lineage_store::index::{HistoryRow, Observer, Read, Report};

#[derive(Args, Debug)]
pub(super) struct IndexArgs {
    #[command(flatten)]
    pub(super) source: SourceArgs,
    /// Print `lineage-index/1` JSON instead of a summary.
    #[arg(long)]
    json: bool,
    /// Also list every version in the history with its stored outcome summary
    /// (id, path, version, status, tokens, fresh tokens, top and dominant
    /// origin, origin counts); with --json under "history".
    #[arg(long)]
    documents: bool,
    #[command(flatten)]
    store: StoreArgs,
    #[command(flatten)]
    workers: WorkersArgs,
    #[command(flatten)]
    estimated: EstimatedArgs,
    #[command(flatten)]
    common: CommonEngineArgs,
}

pub(super) fn run(args: IndexArgs, mut config: Config) -> Result<(), Fatal> {
    args.source.apply(&mut config);
    args.common.apply(&mut config);
    args.estimated.apply(&mut config);
    args.store.apply(&mut config);
    args.workers.apply(&mut config);
    config.validate()?;
    let params = config.params();
    let filter = Filter::new(&config.include, &config.exclude)?;
    let root = &args.source.root;
    let dir = args.store.dir(root, &config)?;
    let started = Instant::now();
    let mut obs = Stderr::new();
    // The folder is walked while the index opens (its checks and the
    // table's restore take about as long as the walk on a large folder).
    let (ix, walk) = std::thread::scope(|s| {
        let walk = s.spawn(|| source::walk_with(root, &filter, config.walk_options()));
        let poly = config.polynomial();
        let ix = Indexer::open_with(root, &dir, params, &poly, config.pass_workers(), &mut obs);
        (ix, walk.join())
    });
    let mut ix = match ix {
        // The listing is a query: a folder that cannot be written (a
        // read-only file system) answers it as last written.
        Err(e) if e.unwritable() && args.documents => {
            super::stale_notice(&dir, &e);
            return documents_as_written(&dir, &config, args.json);
        }
        ix => ix?,
    };
    ix.index_mut().set_history_budget(config.history_budget.0)?;
    let walk = walk.unwrap_or_else(|p| std::panic::resume_unwind(p))?;
    let (imported, report) = super::catch_up(&mut ix, walk, &config, &filter, &mut obs)?;
    obs.clear();
    let ix = ix.index();
    let history = if args.documents {
        Some(ix.history()?)
    } else {
        None
    };
    let counts = ix.counts();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if args.json {
        let json = IndexJson {
            format: "lineage-index/1",
            documents: counts.documents,
            versions: counts.versions,
            skipped: counts.skipped,
            files_read: report.files_read,
            run: ChangesJson::of(&report),
            git_history: imported.as_ref().map(GitJson::of),
            texts_bytes: ix.texts_bytes(),
            history_bytes: ix.history_bytes()?,
            dropped_versions: ix.dropped_versions(),
            history: history
                .as_deref()
                .map(|h| h.iter().map(|v| VersionJson::new(ix, v)).collect())
                .transpose()?,
        };
        super::show::json(&mut out, &json)?;
        writeln!(out)?;
    } else {
        for (path, s) in ix.skipped() {
            super::skipped_line(path, &s.reason);
        }
        writeln!(
            out,
            "{}: {} documents, {} versions in the history, {} skipped",
            show(&ix.root().display().to_string()),
            counts.documents,
            counts.versions,
            counts.skipped
        )?;
        if let Some(h) = &imported {
            history_summary(&mut out, h)?;
        }
        summary(&mut out, &report, started.elapsed())?;
        writeln!(
            out,
            "index: {} (history kept: {} of {})",
            show(&ix.dir().display().to_string()),
            lineage_core::bytesize::approx_bytes(ix.history_bytes()?),
            lineage_core::bytesize::approx_bytes(config.history_budget.0)
        )?;
        if let Some(h) = &history {
            listing(&mut out, ix, h)?;
        }
    }
    out.flush()?;
    Ok(())
}

/// `index --documents` of an index that cannot be written: its figures and
/// every version, as the database holds them (nothing read from the folder).
fn documents_as_written(dir: &std::path::Path, config: &Config, json: bool) -> Result<(), Fatal> {
    let ix = lineage_store::index::ReadOnly::open(dir, &config.polynomial())?;
    let (counts, texts_bytes, history_bytes) = ix.stored_figures()?;
    let history = ix.history()?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if json {
        let json = IndexJson {
            format: "lineage-index/1",
            documents: counts.documents,
            versions: counts.versions,
            skipped: counts.skipped,
            files_read: 0,
            run: ChangesJson::of(&Report::default()),
            git_history: None,
            texts_bytes,
            history_bytes,
            dropped_versions: 0,
            history: Some(
                history
                    .iter()
                    .map(|v| VersionJson::new(&ix, v))
                    .collect::<Result<_, _>>()?,
            ),
        };
        super::show::json(&mut out, &json)?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "{}: {} documents, {} versions in the history, {} skipped (as last written)",
            show(&ix.root().display().to_string()),
            counts.documents,
            counts.versions,
            counts.skipped
        )?;
        writeln!(
            out,
            "index: {} (history kept: {})",
            show(&dir.display().to_string()),
            lineage_core::bytesize::approx_bytes(history_bytes),
        )?;
        listing(&mut out, &ix, &history)?;
    }
    out.flush()?;
    Ok(())
}

/// What the import of the git history did, in one line.
fn history_summary(out: &mut impl Write, h: &lineage_engine::Imported) -> std::io::Result<()> {
    let Some(head) = &h.head else {
        return writeln!(out, "git history: none yet (an empty repository)");
    };
    if h.commits == 0 {
        let short = head.get(..7).unwrap_or(head);
        return writeln!(out, "git history: up to date at {short}");
    }
    writeln!(
        out,
        "git history: {} commits read, {} of them touching pages; {}",
        h.commits,
        h.changed,
        changes(&h.report)
    )
}

fn summary(out: &mut impl Write, r: &Report, took: Duration) -> std::io::Result<()> {
    writeln!(
        out,
        "this run: {} files read, {} unchanged; {} ({:.2} s)",
        r.files_read,
        r.unchanged,
        changes(r),
        took.as_secs_f64()
    )
}

/// What a sync (or an import's) did to the documents, in words.
fn changes(r: &Report) -> String {
    let mut parts = vec![format!("{} new versions", r.new_versions)];
    if r.touched > 0 {
        parts.push(format!("{} with unchanged content", r.touched));
    }
    if r.revived > 0 {
        parts.push(format!("{} back with their last content", r.revived));
    }
    if r.renamed > 0 {
        parts.push(format!("{} renamed (their versions with them)", r.renamed));
    }
    if r.deleted > 0 {
        parts.push(format!("{} deleted", r.deleted));
    }
    parts.join(", ")
}

/// One line per version: id, version, status, % fresh, dominant origin;
/// the commit it was read from first where the history holds commits.
fn listing(out: &mut impl Write, ix: &impl Read, h: &[HistoryRow]) -> Result<(), Fatal> {
    let commits = h
        .iter()
        .map(|v| ix.commit_of(v.id))
        .collect::<Result<Vec<_>, _>>()?;
    let any = commits.iter().any(Option::is_some);
    writeln!(out)?;
    writeln!(
        out,
        "{:>6}  {:<40} {:>4}  {:<8} {:>6}  {}dominant origin",
        "id",
        "path",
        "ver",
        "status",
        "fresh",
        if any { "commit   " } else { "" }
    )?;
    for (v, c) in h.iter().zip(&commits) {
        let commit = match c {
            Some(c) => format!("{:<7}  ", c.id.get(..7).unwrap_or(&c.id)),
            None if any => format!("{:<7}  ", "-"),
            None => String::new(),
        };
        let fresh = super::scan::pct(u64::from(v.fresh_tokens), u64::from(v.tokens));
        let dominant = match v.dominant_origin {
            None => "-".to_string(),
            Some(o) if o == v.id => "itself".to_string(),
            Some(o) => h
                .get(o as usize)
                .map_or_else(|| format!("#{o}"), |d| format!("#{o} {}", show(&d.path))),
        };
        writeln!(
            out,
            "{:>6}  {:<40} {:>4}  {:<8} {:>5.1}%  {commit}{dominant}",
            v.id,
            show(&v.path),
            v.version,
            v.status.name(),
            fresh
        )?;
    }
    Ok(())
}

#[derive(Serialize)]
struct IndexJson {
    format: &'static str,
    documents: u64,
    versions: u64,
    skipped: u64,
    files_read: u64,
    /// What this run's read of the files did.
    run: ChangesJson,
    /// What this run's read of a repository's history did; absent where
    /// the index's versions come from the folder.
    #[serde(skip_serializing_if = "Option::is_none")]
    git_history: Option<GitJson>,
    /// Compressed bytes of the kept texts.
    texts_bytes: u64,
    /// The texts and the fingerprints of replaced and deleted versions:
    /// at most history_budget after a run.
    history_bytes: u64,
    /// Versions of the history a rebuild from the files dropped (a
    /// damaged database: its replaced and deleted pages).
    dropped_versions: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    history: Option<Vec<VersionJson>>,
}

/// What a sync did to the index, counted.
#[derive(Serialize)]
struct ChangesJson {
    new_versions: u64,
    renamed: u64,
    deleted: u64,
    revived: u64,
}

impl ChangesJson {
    fn of(r: &Report) -> ChangesJson {
        ChangesJson {
            new_versions: r.new_versions,
            renamed: r.renamed,
            deleted: r.deleted,
            revived: r.revived,
        }
    }
}

/// What an import of a repository's history did ([`history_summary`]).
#[derive(Serialize)]
struct GitJson {
    /// Commits read, those that touched no page included.
    commits: u64,
    /// Of them, those that touched a page.
    touching_pages: u64,
    /// HEAD's full id; null in an empty repository.
    head: Option<String>,
    shallow: bool,
    rewritten: bool,
    #[serde(flatten)]
    changes: ChangesJson,
}

impl GitJson {
    fn of(h: &lineage_engine::Imported) -> GitJson {
        GitJson {
            commits: h.commits,
            touching_pages: h.changed,
            head: h.head.clone(),
            shallow: h.shallow,
            rewritten: h.rewritten,
            changes: ChangesJson::of(&h.report),
        }
    }
}

#[derive(Serialize)]
struct OriginJson {
    id: u32,
    shingles: u32,
}

#[derive(Serialize)]
struct VersionJson {
    id: u32,
    #[serde(flatten)]
    path: PathJson,
    version: u32,
    status: &'static str,
    /// Rabin-64 of the file's bytes, 16 hex digits.
    hash: String,
    tokens: u32,
    shingles: u32,
    selected: u32,
    fresh_tokens: u32,
    top_origin: u32,
    dominant_origin: Option<u32>,
    origins: Vec<OriginJson>,
    /// When lineage recorded the version, milliseconds since the epoch
    /// (null: an index from before it kept that).
    seen_ms: Option<i64>,
    /// The commit it was read from (a repository's history).
    #[serde(skip_serializing_if = "Option::is_none")]
    commit: Option<super::CommitJson>,
}

impl VersionJson {
    fn new(ix: &impl Read, v: &HistoryRow) -> Result<VersionJson, Fatal> {
        Ok(VersionJson {
            id: v.id,
            path: PathJson::new(&v.path),
            version: v.version,
            status: v.status.name(),
            hash: format!("{:016x}", v.hash),
            tokens: v.tokens,
            shingles: v.shingles,
            selected: v.selected,
            fresh_tokens: v.fresh_tokens,
            top_origin: v.top_origin,
            dominant_origin: v.dominant_origin,
            origins: v
                .origins
                .iter()
                .map(|&(id, shingles)| OriginJson { id, shingles })
                .collect(),
            seen_ms: v.seen_ms,
            commit: ix.commit_of(v.id)?.map(|c| super::CommitJson::of(&c)),
        })
    }
}

/// Notices as `lineage: …` lines; progress as one `\r` line, only on a terminal.
pub(super) struct Stderr {
    tty: bool,
    shown: bool,
    last: Option<Instant>,
}

impl Stderr {
    pub(super) fn new() -> Stderr {
        Stderr {
            tty: std::io::stderr().is_terminal(),
            shown: false,
            last: None,
        }
    }

    pub(super) fn clear(&mut self) {
        if self.shown {
            show::progress("");
            self.shown = false;
        }
    }
}

impl Observer for Stderr {
    fn stopped(&self) -> bool {
        super::signals::received().is_some()
    }

    fn notice(&mut self, message: &str) {
        self.clear();
        show::note(&format!("lineage: {}", show(message)));
    }

    fn progress(&mut self, what: &str, done: u64, total: u64) {
        const WIDTH: u64 = 30;
        if !self.tty || total == 0 {
            return;
        }
        // At most 20 redraws a second.
        let now = Instant::now();
        if done < total
            && self
                .last
                .is_some_and(|t| now - t < Duration::from_millis(50))
        {
            return;
        }
        self.last = Some(now);
        let filled = (WIDTH * done / total) as usize;
        show::progress(&format!(
            "{what} [{}{}] {done}/{total}",
            "#".repeat(filled),
            ".".repeat(WIDTH as usize - filled)
        ));
        self.shown = true;
    }
}
