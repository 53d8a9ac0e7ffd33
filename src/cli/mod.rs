//! The command line: thin wrappers over the engine that print JSON
//! (`--json`) or a readable summary. Bad arguments or an unreadable root: one
//! line on stderr and exit status 2.

mod check;
mod copies;
mod diff;
mod explain;
mod index;
mod output;
mod pairs;
mod pocket;
mod report;
mod scan;
mod shared;
mod show;
pub(crate) mod signals;
mod spill;
mod stale;
mod sweep;
mod watch;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use lineage_config::Config;
use lineage_core::bytesize::Bytes;
use lineage_origin::Ties;
use lineage_source::{FileEntry, Filter, Order, Skipped};
use lineage_store::index::IndexError;

#[derive(Parser, Debug)]
#[command(
    name = "lineage",
    version,
    arg_required_else_help = true,
    about = "What in a folder of documents is copied from where",
    long_about = "lineage finds, for every document of a folder, which earlier document each \
passage came from and what is new, with the origin-detection algorithms of Abdel-Hamid, \
Behzadi, Christoph and Henzinger (WWW 2009): shingle selection (Hailstorm, winnowing, ...), \
a fixed-size table with eviction (Lucky, Copy-Count, ...) and estimation (bridging, expansion).\n\n\
Settings come from the built-in defaults, then the config file (config.toml in the platform \
config directory, or --config FILE), then the file's [folders.\"/abs/path\"] table for the folder \
read, then these flags."
)]
struct Cli {
    /// Read settings from this TOML file instead of the platform config file.
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Seed of the irreducible polynomial that token fingerprints are taken
    /// under: another seed, another polynomial (an index keeps the one it was
    /// built with) [config: fingerprint_seed; default: 0].
    #[arg(long, global = true, value_name = "N")]
    fingerprint_seed: Option<u64>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Detect the origin of every document's passages, in processing order.
    Scan(scan::ScanArgs),
    /// Score many settings against the exact result, replaying cached keys.
    ///
    /// The scores, in percent (docs/formats.md §4): ssr, the selected
    /// shingle rate (selected / all shingles); DO, dominant origin (of the
    /// documents with an exact dominant origin, those whose estimated top
    /// origin is it); TF, token freshness (tokens whose estimated new/copied
    /// label is the exact one); overall, (DO + TF) / 2.
    Sweep(sweep::SweepArgs),
    /// Near-duplicate pairs and their clusters (Jaccard resemblance of shingle sets).
    Pairs(pairs::PairsArgs),
    /// Potthast's pocket index of fuzzy fingerprints: build one, query it.
    Pocket(pocket::PocketArgs),
    /// Bring the persistent index of a folder up to date, then exit.
    Index(index::IndexArgs),
    /// One document's passages, each new or copied from an earlier version
    /// (with the origin's words), from the index; any version, deleted pages
    /// too.
    Explain(explain::ExplainArgs),
    /// What a page changed since its predecessor (its previous version, or
    /// the same page in the previous version folder): passages new here
    /// (and where each was copied from), removed (with their words), moved
    /// within the page; from the index.
    Diff(diff::DiffArgs),
    /// Who copies a page: every live page of another path that took
    /// passages from it, most copied first, one line each (--passages lists
    /// the passages; the reverse of explain).
    Copies(copies::CopiesArgs),
    /// Which pages carry a page's text: every live page of another path
    /// sharing passages with it, whoever had them first, most of the page
    /// first, one line each (--passages lists them on both sides).
    Shared(shared::SharedArgs),
    /// Copies that went stale: the passages each page copied from another
    /// page whose words have since changed there (with the origin's words
    /// now), and those a page changed that its origin still holds as they
    /// were (a fix made in one place only); most stale first, from the index.
    Stale(stale::StaleArgs),
    /// The gate for CI and pre-commit: every live page judged by the
    /// [check] policies (the share copied from other pages, from one page,
    /// denied pairs, near duplicates); exit 0 when all hold, 1 when one
    /// fails, 2 when the check could not run.
    Check(check::CheckArgs),
    /// One self-contained HTML file a colleague opens in a browser: the
    /// documents with fresh, changed and dominant origin (sortable,
    /// filterable), each page's passages coloured by origin and linked to
    /// the origin's passage, the clusters side by side, the settings.
    Report(report::ReportArgs),
    /// Watch a folder: the full-screen view of documents, origins, clusters,
    /// the table and tuning at a terminal; one line per change otherwise.
    ///
    /// In the view, `?` lists the keys and `q` quits. The config file's
    /// `[keys]` table rebinds keys and `[tui] theme` picks "dark" or "light"
    /// colours; the NO_COLOR environment variable turns colours off.
    Watch(watch::WatchArgs),
}

impl Command {
    /// The folder the command reads, whose `[folders]` settings apply (the
    /// pocket index takes no engine settings).
    fn root(&self) -> Option<&std::path::Path> {
        let source = match self {
            Command::Scan(a) => &a.source,
            Command::Sweep(a) => &a.source,
            Command::Pairs(a) => &a.source,
            Command::Index(a) => &a.source,
            Command::Explain(a) => &a.source,
            Command::Diff(a) => &a.source,
            Command::Copies(a) => &a.source,
            Command::Shared(a) => &a.source,
            Command::Stale(a) => &a.source,
            Command::Check(a) => &a.source,
            Command::Report(a) => &a.source,
            Command::Watch(a) => &a.source,
            Command::Pocket(_) => return None,
        };
        Some(&source.root)
    }
}

/// Where documents come from and in which order they are processed.
#[derive(Args, Debug, Clone)]
struct SourceArgs {
    /// The folder to read (it is only ever read).
    root: PathBuf,
    /// Processing order: mtime (modification time, ties by path), path (bytewise), or
    /// version (folder and file names compared as versions: v9 < v10, 29.7 < 30.0); a
    /// list of globs earliest first goes in the config file (order = ["v*", "docs"])
    /// [config: order; default: mtime].
    #[arg(long, value_name = "ORDER")]
    order: Option<Order>,
    /// Files larger than this are skipped unread [default: 32MiB].
    #[arg(long, value_name = "SIZE")]
    max_file_size: Option<Bytes>,
    /// Glob of files to read (repeatable; replaces the default text-file list).
    #[arg(long, value_name = "GLOB")]
    include: Vec<String>,
    /// Glob of files or folders to leave out (repeatable; replaces the default,
    /// which leaves out hidden files and folders).
    #[arg(long, value_name = "GLOB")]
    exclude: Vec<String>,
    /// Read files that .gitignore files leave out.
    #[arg(long)]
    no_gitignore: bool,
    /// Follow symbolic links that stay inside the root (loops are detected).
    #[arg(long)]
    follow_symlinks: bool,
}

/// The threads of the origin pass split by bucket range.
#[derive(Args, Debug, Clone)]
struct WorkersArgs {
    /// Threads of the origin pass, each owning a range of the table's buckets
    /// (the same answers for any number; 1: the sequential pass; at most 1024;
    /// a process starts no more than the table has ranges or it has cores,
    /// whichever is more, nor more than 64 where it has fewer cores; sweep
    /// splits a run only where the runs are at most half the threads, each
    /// then getting N / runs) [default: config `workers`, else the cores
    /// available where there are 8 or more, else 1].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    workers: Option<u16>,
}

impl WorkersArgs {
    /// Into `config`, where given.
    fn apply(&self, config: &mut Config) {
        if let Some(n) = self.workers {
            config.workers = n;
        }
    }
}

/// Settings shared by every run of the engine.
#[derive(Args, Debug, Clone)]
struct CommonEngineArgs {
    /// Shingle length in tokens [default: 8].
    #[arg(short = 'k', value_name = "K")]
    k: Option<usize>,
    /// Which of the entries tied for eviction goes: oldest or newest [default: oldest].
    #[arg(long, value_name = "RULE")]
    eviction_ties: Option<Ties>,
    /// Longest bridge, in selected units (T), at least 1 [default: 30].
    #[arg(long, value_name = "T", value_parser = clap::value_parser!(u32).range(1..))]
    bridge_limit: Option<u32>,
    /// Entries per table bucket, 1 to 1024 [default: 64].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    bucket_entries: Option<u16>,
    /// Seed of random eviction [default: 0].
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// Where the table samples, label every shingle that an earlier page
    /// named by the page's sampled shingles holds, with the earliest such
    /// page: on or off (with --selector all) [default: on].
    #[arg(long, value_name = "ON|OFF", value_parser = on_off)]
    align: Option<bool>,
}

/// "on" or "off", as a flag's value.
pub(super) fn on_off(s: &str) -> Result<bool, String> {
    match s {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("expected on or off, not {s:?}")),
    }
}

/// Where a root's persistent index is (every command that reads one).
#[derive(Args, Debug, Clone)]
struct IndexAt {
    /// This root's index folder [default: indexes/HASH, HASH a hash of the
    /// root's path, in the platform data directory, or in the configured
    /// index_dir].
    #[arg(long, value_name = "DIR")]
    index: Option<PathBuf>,
}

/// Where a root's persistent index is, and what it keeps (index, watch).
/// Commands that only read (explain, copies, shared) take [`IndexAt`]: a read
/// forgets nothing.
#[derive(Args, Debug, Clone)]
struct StoreArgs {
    #[command(flatten)]
    at: IndexAt,
    /// Bytes of history the index keeps: compressed texts (so passages can
    /// be shown) and the fingerprints of replaced and deleted versions (so
    /// they stay origins in a rebuild); past it the oldest go first; 0 keeps
    /// none [config: history_budget; default: 512MiB].
    #[arg(long, value_name = "SIZE")]
    history_budget: Option<Bytes>,
    /// Where versions come from: git (the first-parent history of HEAD, each
    /// commit's pages as new versions, then the files as they are), folder
    /// (the files as they are), or auto (git where the folder is in a git
    /// work tree) [config: history; default: auto].
    #[arg(long, value_name = "SOURCE")]
    history: Option<lineage_config::HistoryMode>,
    /// Where the first import of a git history starts: a commit (any
    /// revision git names: v1.0, HEAD~100) or a date (YYYY-MM-DD, UTC, the
    /// first commit of that day or after); earlier commits are not read
    /// [config: history_since; default: the first commit].
    #[arg(long, value_name = "REV|DATE")]
    since: Option<String>,
}

impl StoreArgs {
    fn apply(&self, c: &mut Config) {
        set(&mut c.history_budget, self.history_budget);
        set(&mut c.history, self.history);
        set(&mut c.history_since, self.since.clone());
    }

    /// The index folder of `root`.
    fn dir(&self, root: &std::path::Path, c: &Config) -> Result<PathBuf, Fatal> {
        self.at.dir(root, c)
    }
}

impl IndexAt {
    /// The index folder of `root`.
    fn dir(&self, root: &std::path::Path, c: &Config) -> Result<PathBuf, Fatal> {
        let base = (!c.index_dir.is_empty()).then(|| PathBuf::from(&c.index_dir));
        Ok(lineage_store::index::location(
            root,
            self.index.as_deref(),
            base.as_deref(),
        )?)
    }
}

impl SourceArgs {
    fn apply(&self, c: &mut Config) {
        flag(c, "order", self.order, |c| &mut c.order);
        set(&mut c.max_file_size, self.max_file_size);
        if !self.include.is_empty() {
            c.include = self.include.clone();
        }
        if !self.exclude.is_empty() {
            c.exclude = self.exclude.clone();
        }
        c.gitignore &= !self.no_gitignore;
        c.follow_symlinks |= self.follow_symlinks;
    }
}

impl CommonEngineArgs {
    fn apply(&self, c: &mut Config) {
        flag(c, "k", self.k, |c| &mut c.k);
        flag(c, "eviction_ties", self.eviction_ties, |c| {
            &mut c.eviction_ties
        });
        flag(c, "bridge_limit", self.bridge_limit, |c| {
            &mut c.bridge_limit
        });
        flag(c, "bucket_entries", self.bucket_entries, |c| {
            &mut c.bucket_entries
        });
        flag(c, "seed", self.seed, |c| &mut c.seed);
        flag(c, "align", self.align, |c| &mut c.align);
    }
}

fn set<T>(slot: &mut T, value: Option<T>) {
    if let Some(v) = value {
        *slot = v;
    }
}

/// [`set`] an engine setting, noting that a flag gave it (it outranks the
/// config file, where the TUI saves adopted settings).
fn flag<T>(c: &mut Config, name: &'static str, value: Option<T>, slot: fn(&mut Config) -> &mut T) {
    if let Some(v) = value {
        *slot(c) = v;
        c.flags.push(name);
    }
}

/// A failure that ends the command: one line on stderr, exit status 2.
struct Fatal(String);

/// What `?` makes of any error: see [`Fatal::of`].
impl<E: std::error::Error> From<E> for Fatal {
    fn from(e: E) -> Fatal {
        Fatal::of(&e)
    }
}

impl Fatal {
    /// A typed error from the crates below, its causes in the one line.
    fn of(e: &dyn std::error::Error) -> Fatal {
        Fatal(one_line(e))
    }
}

/// An error and its causes in one line: each cause whose text the line
/// does not hold already (most messages name their cause) follows a colon.
/// Say, in one line, that the index in `dir` is read as it was last
/// written, not caught up with the folder, because `why` (it cannot be
/// written).
fn stale_notice(dir: &std::path::Path, why: &dyn std::error::Error) {
    show::note(&format!(
        "lineage: the index {} cannot be written ({}): answering from it as last written, without the folder's changes since",
        show::show(&dir.display().to_string()),
        one_line(why)
    ));
}

fn one_line(e: &dyn std::error::Error) -> String {
    let mut line = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !line.contains(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
        cause = c.source();
    }
    line
}

pub fn run() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            // clap's whole message: what is wrong, the usage line, a
            // suggestion; `lineage` alone prints the help with the commands.
            let _ = e.print();
            let asked = matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion);
            return if asked {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(2)
            };
        }
    };
    // Long runs save what they did on SIGINT, SIGTERM and SIGHUP.
    if matches!(cli.command, Command::Index(_) | Command::Watch(_)) {
        signals::take();
    }
    // A check that ran and found a policy failing: exit 1.
    let mut failed = false;
    let result = Config::load(cli.config.as_deref())
        .map_err(Fatal::from)
        .map(|mut config| {
            set(&mut config.fingerprint_seed, cli.fingerprint_seed);
            // The folder's own settings, before any flag (which outranks them).
            if let Some(root) = cli.command.root() {
                config.for_folder(root);
            }
            config
        })
        .and_then(|config| match cli.command {
            Command::Scan(args) => scan::run(args, config),
            Command::Sweep(args) => sweep::run(args, config),
            Command::Pairs(args) => pairs::run(args, config),
            Command::Pocket(args) => pocket::run(args, config),
            Command::Index(args) => index::run(args, config),
            Command::Explain(args) => explain::run(args, config),
            Command::Diff(args) => diff::run(args, config),
            Command::Copies(args) => copies::run(args, config),
            Command::Shared(args) => shared::run(args, config),
            Command::Stale(args) => stale::run(args, config),
            Command::Check(args) => check::run(args, config).map(|passed| failed = !passed),
            Command::Report(args) => report::run(args, config),
            Command::Watch(args) => watch::run(args, config),
        });
    if let Some(sig) = signals::received() {
        // The engine stopping, or the index stopping between batches, is
        // what the signal asked for; another failure is still told.
        if let Err(Fatal(msg)) = &result
            && msg != ENGINE_STOPPED
            && msg != &IndexError::Stopped.to_string()
        {
            show::note(&format!("lineage: {}", show::show(msg)));
        }
        show::note(&format!(
            "lineage: stopped by {}; what was done is saved",
            signals::name(sig)
        ));
        return ExitCode::from(128 + sig as u8);
    }
    match result {
        Ok(()) if failed => ExitCode::from(1),
        Ok(()) => ExitCode::SUCCESS,
        Err(Fatal(msg)) => {
            show::note(&format!("lineage: {}", show::show(&msg)));
            ExitCode::from(2)
        }
    }
}

/// `watch`'s last word when its engine ended without saying why (it was
/// asked to stop).
const ENGINE_STOPPED: &str = "the engine stopped";

/// Read the root's documents (those `filter` names) as the configuration
/// says, in order, a batch at a time (`corpus::stream_with`): `f` on the
/// reading threads, `each` in order on this one; the files left out are
/// returned.
fn stream<T: Send>(
    root: &std::path::Path,
    filter: &Filter,
    c: &Config,
    f: impl Fn(&FileEntry, &str) -> T + Sync,
    each: impl FnMut(&FileEntry, T) -> Result<(), Fatal>,
) -> Result<Vec<Skipped>, Fatal> {
    let (opts, max, order) = (c.walk_options(), c.max_file_size.0, c.order);
    lineage_source::corpus::stream_with(root, filter, opts, max, order, f, each)
}

/// A document's name in JSON: `path` for people (bytes that are not UTF-8
/// as U+FFFD), and where the name is not UTF-8 its exact bytes in hex as
/// `path_hex` (see [`lineage_source::name`]).
#[derive(serde::Serialize)]
struct PathJson {
    path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    path_hex: Option<String>,
}

impl PathJson {
    fn new(name: &str) -> PathJson {
        PathJson {
            path: lineage_source::name::display(name).into_owned(),
            path_hex: lineage_source::name::hex(name),
        }
    }
}

/// Bring an open index up to its root: the order it holds settled, the
/// commits of its git history since the last read (where its versions come
/// from one), then `walk`, the files as they are. What the history's import
/// did, and what the walk's sync did.
fn catch_up(
    ix: &mut lineage_engine::Indexer,
    walk: lineage_source::Walk,
    config: &Config,
    filter: &lineage_source::Filter,
    obs: &mut dyn lineage_store::index::Observer,
) -> Result<
    (
        Option<lineage_engine::Imported>,
        lineage_store::index::Report,
    ),
    lineage_store::index::IndexError,
> {
    let order = (ix.index_mut()).settle_order(config.order, config.order_asked())?;
    let max = config.max_file_size.0;
    let imported = ix.read_history(config.history, &config.history_since, filter, max, obs)?;
    let report = ix.reconcile(walk, max, order, obs)?;
    Ok((imported, report))
}

/// JSON of the commit a version was read from (docs/formats.md).
#[derive(serde::Serialize)]
struct CommitJson {
    id: String,
    author: String,
    /// Author time, seconds since the epoch.
    time: i64,
    subject: String,
}

impl CommitJson {
    fn of(c: &lineage_source::history::CommitInfo) -> CommitJson {
        CommitJson {
            id: c.id.clone(),
            author: c.author.clone(),
            time: c.time,
            subject: c.subject.clone(),
        }
    }
}

/// A commit as one line names it: short id, date (UTC), author and
/// subject, escaped for the terminal.
fn commit_line(c: &lineage_source::history::CommitInfo) -> String {
    format!(
        "{} {} {}: {}",
        c.id.get(..7).unwrap_or(&c.id),
        lineage_core::civil::date(c.time),
        show::show(&c.author),
        show::show(&c.subject)
    )
}

/// JSON of a skipped file.
#[derive(serde::Serialize)]
struct SkippedJson {
    #[serde(flatten)]
    path: PathJson,
    reason: String,
}

impl SkippedJson {
    fn new(s: &lineage_source::Skipped) -> SkippedJson {
        SkippedJson {
            path: PathJson::new(&s.path),
            reason: s.reason.to_string(),
        }
    }
}

fn skipped_json(skipped: &[Skipped]) -> Vec<SkippedJson> {
    skipped.iter().map(SkippedJson::new).collect()
}

/// Print a readable line per skipped file on stderr.
fn report_skipped(skipped: &[Skipped]) {
    for s in skipped {
        skipped_line(&s.path, &s.reason.to_string());
    }
}

/// The readable line of a file left out (on stderr).
fn skipped_line(path: &str, reason: &str) {
    show::note(&format!(
        "skipped {}: {}",
        show::show(path),
        show::show(reason)
    ));
}

#[cfg(test)]
mod tests {
    use super::{Fatal, one_line};
    use std::fmt;

    /// An error saying `text`, caused by `cause`.
    #[derive(Debug)]
    struct Said(&'static str, Option<Box<Said>>);

    impl fmt::Display for Said {
        fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Said {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|c| c as _)
        }
    }

    #[test]
    fn an_errors_causes_follow_it_once_in_one_line() {
        let disk = Said("No space left on device", None);
        let write = Said("writing index.db", Some(Box::new(disk)));
        let stopped = Said("the engine stopped", Some(Box::new(write)));
        assert_eq!(
            one_line(&stopped),
            "the engine stopped: writing index.db: No space left on device"
        );
        // A message that names its cause already does not name it twice.
        let disk = Said("No space left on device", None);
        let named = Said(
            "writing index.db: No space left on device",
            Some(Box::new(disk)),
        );
        assert_eq!(
            one_line(&named),
            "writing index.db: No space left on device"
        );
    }

    #[test]
    fn an_error_that_ends_a_command_keeps_its_causes() {
        fn fails() -> Result<(), Said> {
            let disk = Said("No space left on device", None);
            Err(Said("saving the table snapshot", Some(Box::new(disk))))
        }
        let run = || -> Result<(), Fatal> { Ok(fails()?) };
        let Err(Fatal(line)) = run() else {
            panic!("it fails")
        };
        assert_eq!(line, "saving the table snapshot: No space left on device");
    }
}
