//! What the engine publishes (docs/architecture.md, "Threads"): immutable snapshots of the
//! live state, and the answers to queries. Plain data, shared by `Arc`, so a
//! reader (the TUI, a test, `watch --json`) never waits on the engine.

use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

pub use super::documents::Documents;
use lineage_origin::{Params, Run};

// The live clusters' own type, published as they build it (each shared
// by `Arc` with the snapshots it is unchanged in).
pub use lineage_similar::live::Cluster;

/// The live state after the engine's latest step.
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// Increases with every snapshot published.
    pub seq: u64,
    /// The canonical root.
    pub root: PathBuf,
    /// The live settings.
    pub params: Params,
    /// Live documents (the current version of every path), in processing
    /// order (by version id), with the cluster of each.
    pub documents: Documents,
    /// Near-duplicate clusters of live documents (two members or more), by
    /// [`Cluster::number`]; each shared with the snapshots it is unchanged in.
    pub clusters: Arc<[Arc<Cluster>]>,
    /// The table now.
    pub table: TableStats,
    /// Recent table statistics, oldest first (one sample per processed batch,
    /// at most `HISTORY`), for sparklines.
    pub table_history: Arc<[TableStats]>,
    /// `bucket_fill[f]`: buckets holding `f` entries (`0..=bucket_entries`);
    /// empty for an unbounded table.
    pub bucket_fill: Arc<[u64]>,
    /// Watch events, skipped files, errors and notices, newest first (at most `EVENTS`).
    pub events: Arc<[Event]>,
    /// The events numbered up to this one happened before this process
    /// started, read back from the index (a restart's Events): none of them
    /// is a change this run saw.
    pub before_start: u64,
    /// Versions in the history.
    pub versions: u64,
    /// Files left out (skipped).
    pub skipped: u64,
    /// Shingles of all versions in the history (table fractions are of this).
    pub shingles: u64,
    /// Indexing under way, if any.
    pub progress: Option<Progress>,
    /// How changes are noticed.
    pub watching: Watching,
}

/// Samples kept in [`Snapshot::table_history`].
pub(crate) const HISTORY: usize = 120;
/// How the error event told of a query asked while the index is closed
/// begins: the query has no answer coming (issue 41: the TUI waited on it).
pub const INDEX_CLOSED: &str = "the index is closed";

/// Events kept in [`Snapshot::events`].
pub(crate) const EVENTS: usize = 1000;

/// One live document.
#[derive(Clone, Debug, PartialEq)]
pub struct DocRow {
    /// Its current version's id (processing order; origins name these).
    pub id: u32,
    /// Shared with the version's other rows (the engine's, the index's).
    pub path: Arc<str>,
    /// 1 for a path's first version.
    pub version: u32,
    /// Tokens in its text.
    pub tokens: u32,
    /// Percent of tokens not copied (estimated, live settings).
    pub fresh_percent: f64,
    /// The dominant origin's version id, if the document has one (the
    /// document itself when it is mostly new).
    pub dominant_origin: Option<u32>,
    /// The dominant origin's path.
    pub dominant_path: Option<Arc<str>>,
    /// Modification time, nanoseconds since the Unix epoch.
    pub mtime_ns: i64,
}

/// The fixed-size table's counters and shape.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TableStats {
    /// Keys looked up.
    pub lookups: u64,
    /// Lookups that found their key.
    pub hits: u64,
    /// Keys stored.
    pub inserts: u64,
    /// Entries evicted to make room.
    pub evictions: u64,
    /// Entries held now.
    pub occupied: u64,
    /// Entries the table can hold (None for an unbounded table).
    pub capacity: Option<u64>,
    /// Buckets (None for an unbounded table).
    pub buckets: Option<u64>,
    /// Bytes per entry.
    pub entry_bytes: u64,
    /// At most how many false matches a lookup makes (None: unbounded).
    pub false_match: Option<f64>,
    /// Whether the table holds every distinct key it was given.
    pub regime: lineage_origin::Regime,
    /// Versions processed when sampled.
    pub versions: u64,
}

/// Something that happened, for the Events pane and `watch`'s lines.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// Events are numbered from 1 in the order they happen.
    pub n: u64,
    /// Milliseconds since the Unix epoch.
    pub at_ms: i64,
    /// What happened.
    pub kind: EventKind,
}

/// What an [`Event`] tells of.
#[derive(Clone, Debug, PartialEq)]
pub enum EventKind {
    /// A new version was processed (or an older content came back).
    Version {
        /// The document's path.
        path: String,
        /// 1 for a path's first version.
        version: u32,
        /// The version's id.
        id: u32,
        /// Percent of its tokens not copied (estimated, live settings).
        fresh_percent: f64,
        /// Its dominant origin's path, if it has one.
        dominant_path: Option<String>,
        /// Its origins with the units each gave, most first (itself for new text).
        origins: Vec<OriginShare>,
    },
    /// A file was deleted; its versions stay in the history as origins.
    Deleted {
        /// The file's path.
        path: String,
    },
    /// A file was moved or renamed: its versions moved with it (`id`: its
    /// latest). A changed content follows as a `Version`.
    Renamed {
        /// The old path.
        from: String,
        /// The new path.
        to: String,
        /// The latest version's id.
        id: u32,
    },
    /// A file was left out, with the reason.
    Skipped {
        /// The file's path.
        path: String,
        /// Why it was left out (docs/formats.md §1).
        reason: String,
    },
    /// Something failed; the engine goes on.
    Error(String),
    /// A repair, a rebuild, a mode change: worth telling, not a failure.
    Notice(String),
}

/// One origin of a version.
#[derive(Clone, Debug, PartialEq)]
pub struct OriginShare {
    /// The origin's version id.
    pub id: u32,
    /// The origin's path.
    pub path: String,
    /// The origin's version number of its path (1 for the first).
    pub version: u32,
    /// Selected units labelled with this origin.
    pub units: u32,
}

/// `done` of `total` items of a long step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Progress {
    /// What is under way, in words.
    pub what: String,
    /// Items done.
    pub done: u64,
    /// Items in all.
    pub total: u64,
    /// Items a second since the step began; None before it is measured
    /// (its first half second).
    pub per_sec: Option<u64>,
}

/// How file changes reach the engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Watching {
    /// Not yet started.
    Starting,
    /// OS file events.
    Events,
    /// `--poll`: the folder is polled.
    Polling,
    /// The OS watch failed or lost events: timed rescans (the reason).
    Rescanning(String),
    /// The root is gone (its documents are marked deleted); watching again
    /// when a folder is back at its path.
    RootGone,
}

/// One document's text with its origins: the answer to [`super::Command::Origin`].
#[derive(Clone, Debug, PartialEq)]
pub struct OriginView {
    /// The version shown.
    pub id: u32,
    /// Its path, relative to the root.
    pub path: String,
    /// 1 for a path's first version.
    pub version: u32,
    /// Whether this version is its page's current one, replaced or deleted.
    pub status: VersionStatus,
    /// Every version of its path, oldest first (this one among them).
    pub versions: Vec<VersionInfo>,
    /// The exact result (docs/formats.md §3) rather than the live settings' estimate.
    pub exact: bool,
    /// The prepared text (docs/formats.md §1), or why it cannot be shown (the file
    /// changed or vanished since this version).
    pub text: Result<String, String>,
    /// Byte span of every token in `text` (empty without text).
    pub spans: Vec<(u32, u32)>,
    /// Runs over token indices covering the document, fresh (`origin: None`) or copied.
    pub runs: Vec<Run>,
    /// Where each run's passage is in its origin (same index as `runs`; None
    /// for fresh runs or when not found).
    pub targets: Vec<Option<Target>>,
    /// The origins with their shares, most first; the document itself for new text.
    pub legend: Vec<LegendEntry>,
}

/// Where a version stands in its page's history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VersionStatus {
    /// The page's current content.
    Live,
    /// An earlier version: the page has a later one (`latest`, its number).
    Replaced {
        /// The page's latest version number.
        latest: u32,
    },
    /// The page's last version; its file is gone.
    Deleted,
}

impl VersionStatus {
    /// How version `version` of its page stands, in words: `replaced by v4`
    /// (the next version, which a page's versions are numbered by), with the
    /// latest when later (`replaced by v4, now v10`); None when live.
    pub fn describe(self, version: u32) -> Option<String> {
        match self {
            VersionStatus::Live => None,
            VersionStatus::Replaced { latest } => {
                let next = version + 1;
                Some(match latest > next {
                    true => format!("replaced by v{next}, now v{latest}"),
                    false => format!("replaced by v{latest}"),
                })
            }
            VersionStatus::Deleted => Some("deleted".into()),
        }
    }
}

/// One version of a page, for the list of its versions.
#[derive(Clone, Debug, PartialEq)]
pub struct VersionInfo {
    /// The version's id.
    pub id: u32,
    /// 1 for a path's first version.
    pub version: u32,
    /// Tokens in its text.
    pub tokens: u32,
    /// Percent of its tokens not copied (estimated, live settings).
    pub fresh_percent: f64,
    /// Its text can be shown (kept by the index, or on disk).
    pub text_kept: bool,
    /// The file's modification time when this version was seen,
    /// nanoseconds since the Unix epoch.
    pub mtime_ns: i64,
    /// When lineage recorded this version, milliseconds since the epoch
    /// (None: an index from before it kept that).
    pub seen_ms: Option<i64>,
    /// The commit it was read from (a repository's history); None for a
    /// version read from a file.
    pub commit: Option<lineage_source::history::CommitInfo>,
}

impl VersionInfo {
    /// When lineage saw this version, milliseconds since the epoch: as it
    /// recorded it, or the file's modification time where an older index
    /// did not (as the Events pane dates the versions before a start).
    pub fn seen_or_mtime_ms(&self) -> i64 {
        (self.seen_ms).unwrap_or(self.mtime_ns.div_euclid(1_000_000))
    }
}

/// Live pages whose text holds a phrase: the answer to
/// [`super::Command::Search`], sent as the search goes and once done.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchView {
    /// The search this answers ([`super::Command::Search`]'s `generation`).
    pub generation: u64,
    /// The words searched for.
    pub query: String,
    /// Live pages searched so far, of `total`.
    pub searched: usize,
    /// Live pages to search.
    pub total: usize,
    /// Pages with a match, in path order (at most the first 1,000).
    pub hits: Vec<SearchHit>,
    /// Pages with a match, listed or not, and the matches in them.
    pub pages: usize,
    /// Matches in all pages found (listed or not).
    pub matches: usize,
    /// Pages whose text could be read neither from the index nor the file.
    pub unread: usize,
    /// The search is over: this is the last answer to it.
    pub done: bool,
}

/// A page with a match.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchHit {
    /// Its live version.
    pub id: u32,
    /// Its path, relative to the root.
    pub path: Arc<str>,
    /// 1 for a path's first version.
    pub version: u32,
    /// Matches in its text.
    pub matches: u32,
    /// The first match, as bytes of the page's text (as Origin shows it).
    pub first: std::ops::Range<usize>,
    /// Its line around it (whitespace runs as one space), and where the
    /// match is in that.
    pub context: String,
    /// Where the match is in `context`, as bytes.
    pub marked: std::ops::Range<usize>,
}

/// Who copies a page: the answer to [`super::Command::Copies`].
#[derive(Clone, Debug, PartialEq)]
pub struct CopiesView {
    /// The page's version asked about.
    pub id: u32,
    /// Its path, relative to the root.
    pub path: String,
    /// 1 for a path's first version.
    pub version: u32,
    /// Newest first.
    pub copies: Vec<PageCopy>,
}

/// Which pages carry a page's text: the answer to
/// [`super::Command::Shared`] (`query::shared`).
#[derive(Clone, Debug, PartialEq)]
pub struct SharedView {
    /// The page's version asked about.
    pub id: u32,
    /// Its path, relative to the root.
    pub path: String,
    /// 1 for a path's first version.
    pub version: u32,
    /// Tokens in its text.
    pub tokens: u32,
    /// Most of the page first.
    pub shares: Vec<PageShare>,
}

/// A later page that copies from another: the reverse of an origin, for
/// "who copies this page" (`lineage copies`).
#[derive(Clone, Debug, PartialEq)]
pub struct PageCopy {
    /// The copy's current version id.
    pub id: u32,
    /// Its path, relative to the root.
    pub path: String,
    /// 1 for a path's first version.
    pub version: u32,
    /// Tokens in its text.
    pub tokens: u32,
    /// Its passages whose origin is the page (one of its versions up to the
    /// one asked about), in order.
    pub passages: Vec<Run>,
    /// Where each passage starts in its origin, when known.
    pub targets: Vec<Option<Target>>,
}

impl PageCopy {
    /// Tokens of the copy taken from the page.
    pub fn copied(&self) -> u32 {
        self.passages.iter().map(|r| r.end - r.start).sum()
    }

    /// Percent of the copy's tokens taken from the page.
    pub fn percent(&self) -> f64 {
        if self.tokens == 0 {
            0.0
        } else {
            100.0 * f64::from(self.copied()) / f64::from(self.tokens)
        }
    }
}

/// A live page of another path that carries text of a page, whoever had it
/// first: "which pages carry this text" (`lineage shared`), where
/// [`PageCopy`] credits each passage to its earliest origin only.
#[derive(Clone, Debug, PartialEq)]
pub struct PageShare {
    /// The other page's current version id.
    pub id: u32,
    /// Its path, relative to the root.
    pub path: String,
    /// 1 for a path's first version.
    pub version: u32,
    /// Tokens in its text.
    pub tokens: u32,
    /// Tokens of the page asked about that it carries too (each counted
    /// once, however often it repeats them).
    pub page_tokens: u32,
    /// Percent of the page's tokens that it carries: the rank.
    pub page_percent: f64,
    /// Its own tokens that the page has too.
    pub shared_tokens: u32,
    /// Percent of its own tokens that the page has too.
    pub percent: f64,
    /// The shared passages, in its order.
    pub passages: Vec<SharedPassage>,
}

/// A passage two pages share: token ranges `start..end` holding the same
/// words (as shingle keys) in each, at least a shingle long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SharedPassage {
    /// In the page asked about.
    pub page: (u32, u32),
    /// In the other page.
    pub there: (u32, u32),
}

/// A passage in an origin document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    /// The origin's version id.
    pub id: u32,
    /// The token index where the passage starts in that version.
    pub token: u32,
}

/// One origin of a document shown, with its share: a line of the Origin
/// pane's legend.
#[derive(Clone, Debug, PartialEq)]
pub struct LegendEntry {
    /// Version id (the document itself for its new text).
    pub origin: u32,
    /// The origin's path.
    pub path: String,
    /// The origin's version number of its path (1 for the first).
    pub version: u32,
    /// Percent of the document's tokens.
    pub percent: f64,
    /// The commit the origin was read from (a repository's history).
    pub commit: Option<lineage_source::history::CommitInfo>,
}

/// Two documents side by side: the answer to [`super::Command::Compare`].
#[derive(Clone, Debug, PartialEq)]
pub struct CompareView {
    /// The left document.
    pub a: Side,
    /// The right document.
    pub b: Side,
    /// Jaccard resemblance of their k-shingle sets.
    pub similarity: f64,
}

/// One document of a [`CompareView`].
#[derive(Clone, Debug, PartialEq)]
pub struct Side {
    /// The version shown.
    pub id: u32,
    /// Its path, relative to the root.
    pub path: String,
    /// 1 for a path's first version.
    pub version: u32,
    /// The prepared text, or why it cannot be shown.
    pub text: Result<String, String>,
    /// Byte span of every token in `text` (empty without text).
    pub spans: Vec<(u32, u32)>,
    /// Token ranges covered by shingles the other document also has.
    pub shared: Vec<(u32, u32)>,
}

/// Progress or results of a shadow run: the answer to [`super::Command::Shadow`].
#[derive(Clone, Debug, PartialEq)]
pub struct ShadowUpdate {
    /// The run this answers ([`super::Command::Shadow`]'s `generation`).
    pub generation: u64,
    /// Runs finished of all runs asked for.
    pub done: u64,
    /// Runs asked for.
    pub total: u64,
    /// Results so far, in the order asked.
    pub results: Vec<ShadowResult>,
    /// No more updates of this generation follow.
    pub finished: bool,
    /// Why the run failed, if it did.
    pub error: Option<String>,
}

/// One replay of the whole history, scored against the exact result (docs/formats.md §4).
#[derive(Clone, Debug, PartialEq)]
pub struct ShadowResult {
    /// The settings replayed with.
    pub params: Params,
    /// Selected shingle rate, percent.
    pub ssr: f64,
    /// Dominant origin score (DO), percent.
    pub dominant_origin: f64,
    /// Token freshness score (TF), percent.
    pub token_freshness: f64,
    /// (DO + TF) / 2.
    pub overall: f64,
    /// Table capacity in percent of all shingles (None when unbounded).
    pub table_fraction: Option<f64>,
    /// Lookups that found their key.
    pub hits: u64,
    /// Entries evicted.
    pub evictions: u64,
    /// Seconds the replay took.
    pub seconds: f64,
}

/// The byte range of tokens `start..end` in a view's text, whose token
/// `spans` it carries (the Origin pane and `explain` mark passages by it).
pub fn token_bytes(spans: &[(u32, u32)], tokens: Range<u32>) -> Option<Range<usize>> {
    if tokens.start >= tokens.end {
        return None;
    }
    let a = spans.get(tokens.start as usize)?.0 as usize;
    let b = spans.get(tokens.end as usize - 1)?.1 as usize;
    Some(a..b)
}

#[cfg(test)]
mod tests {
    use super::VersionStatus;

    #[test]
    fn a_replaced_version_names_the_one_after_it_and_the_latest() {
        let replaced = |latest| VersionStatus::Replaced { latest };
        assert_eq!(
            replaced(10).describe(3).as_deref(),
            Some("replaced by v4, now v10")
        );
        assert_eq!(replaced(4).describe(3).as_deref(), Some("replaced by v4"));
        assert_eq!(
            VersionStatus::Deleted.describe(3).as_deref(),
            Some("deleted")
        );
        assert_eq!(VersionStatus::Live.describe(3), None);
    }
}
