//! The one owner of the live state (docs/architecture.md, "Threads"): in its own thread it
//! opens the root's index, applies file changes in order, answers queries and
//! runs shadow replays, and publishes immutable [`Snapshot`]s. Whoever shows
//! the state (the TUI, `watch --json`, tests) sends [`Command`]s and receives
//! [`Update`]s through a callback; it never waits on the engine.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod changed;
pub mod check;
mod diff;
mod documents;
mod folder;
pub mod html;
mod indexer;
mod job;
mod live;
mod predecessor;
pub mod query;
mod report;
mod run;
mod schedule;
mod search;
mod shadow;
mod shares;
mod stale;
mod state;
mod store;
mod view;

use std::path::PathBuf;

pub use changed::{
    Aligned, Changes, Edit, Hunk, MOVE_MIN, Move, Replaced, align, changes, hunks, token_keys,
};
pub use diff::{DiffKind, DiffPassage, DiffView, diff_view};
pub use indexer::{Imported, Indexer, SPLIT_FILES, Sink};
pub use predecessor::{How, Lineage, Predecessor, name_then, predecessor};
pub use shares::{PageChange, SharesUpdate, change as shares_change};
pub use stale::{
    CONTEXT, Difference, Stale, StaleKind, StaleLine, StalePage, StalePassage, StaleView, Text,
    Texts, stale, stale_view,
};
pub use state::*;

/// Where the full-screen view keeps how it was left: beside the index.
pub use lineage_store::index::VIEW_FILE;

use lineage_config::{Basis, Config};
use lineage_origin::Params;

/// Asks of the engine; each is answered by an [`Update`] (or several).
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// A document's text and origins → [`Update::Origin`]; `exact` for the
    /// exact result instead of the live settings' estimate.
    Origin {
        /// The version asked about.
        id: u32,
        /// The exact origins rather than the estimate.
        exact: bool,
    },
    /// Two documents side by side with their shared passages → [`Update::Compare`].
    Compare {
        /// The left document's version id.
        a: u32,
        /// The right document's version id.
        b: u32,
    },
    /// The live pages that copy from version `id`'s page → [`Update::Copies`].
    Copies {
        /// The version asked about.
        id: u32,
    },
    /// The live pages of other paths that carry version `id`'s text,
    /// whoever had it first → [`Update::Shared`].
    Shared {
        /// The version asked about.
        id: u32,
    },
    /// What version `id` changed against its base → [`Update::Diff`].
    Diff {
        /// The version asked about.
        id: u32,
        /// What it is compared with.
        basis: Basis,
    },
    /// Measure every live page's change against its base under `basis`,
    /// now and after each change to the documents → [`Update::Shares`].
    Shares {
        /// What the pages are compared with.
        basis: Basis,
    },
    /// The copies that went stale, of every live page or of the page
    /// whose newest version is `id` → [`Update::Stale`].
    Stale {
        /// The page's newest version, or None for every page.
        id: Option<u32>,
    },
    /// Replay the whole history once per `runs` entry and score each against
    /// the exact result → [`Update::Shadow`] (progress at most every 50 ms,
    /// then the results). A new `Shadow` cancels the run under way.
    Shadow {
        /// Names this run in its updates and in [`Command::Cancel`].
        generation: u64,
        /// The settings to replay with, one run each.
        runs: Vec<Params>,
    },
    /// Stop shadow run `generation` (a newer `Shadow` also does).
    Cancel {
        /// The run to stop.
        generation: u64,
    },
    /// Every live page whose text holds `query`, ignoring case →
    /// [`Update::Search`] (progress at most every 100 ms, then the answer).
    /// A newer search stops an older one; an empty query only stops it.
    Search {
        /// Names this search in its answers.
        generation: u64,
        /// The words searched for, as typed.
        query: String,
    },
    /// Write the HTML report of the live pages (`html::write_report`) to
    /// `path`, whole or not at all, on a thread of its own →
    /// [`Update::Report`]. The caller has checked `path` is not inside the
    /// root.
    Report {
        /// The file to write.
        path: PathBuf,
    },
    /// Make these the live settings: the index is re-processed from its
    /// cached fingerprints, then a snapshot follows.
    Adopt(Params),
    /// These files or folders (absolute paths under the root) changed: what
    /// the watcher says after a debounced burst; for callers with their own
    /// source of events.
    Changed(Vec<PathBuf>),
    /// Walk the root now.
    Rescan,
    /// Save the table snapshot and stop.
    Quit,
}

/// What the engine publishes.
#[derive(Clone, Debug)]
pub enum Update {
    /// The live state after a step.
    Snapshot(std::sync::Arc<Snapshot>),
    /// Events of the latest step, oldest first, all of them (a snapshot
    /// keeps only the newest `EVENTS`); sent before the step's snapshot.
    Events(std::sync::Arc<[Event]>),
    /// The answer to [`Command::Origin`].
    Origin(std::sync::Arc<OriginView>),
    /// The answer to [`Command::Compare`].
    Compare(std::sync::Arc<CompareView>),
    /// The answer to [`Command::Copies`].
    Copies(std::sync::Arc<CopiesView>),
    /// The answer to [`Command::Shared`].
    Shared(std::sync::Arc<SharedView>),
    /// The answer to [`Command::Diff`].
    Diff(std::sync::Arc<DiffView>),
    /// The answer to [`Command::Stale`].
    Stale(std::sync::Arc<StaleView>),
    /// What became of [`Command::Report`]: what went into the file, or
    /// why it was not written.
    Report {
        /// The file asked for.
        path: PathBuf,
        /// The report's figures, or the error.
        result: Result<html::Figures, String>,
    },
    /// What [`Command::Shares`] found since its last update.
    Shares(std::sync::Arc<SharesUpdate>),
    /// The progress or answer of [`Command::Search`].
    Search(std::sync::Arc<SearchView>),
    /// The progress or results of [`Command::Shadow`].
    Shadow(ShadowUpdate),
    /// The engine cannot go on (the index is locked by another process, the
    /// root vanished at start-up); it has stopped.
    Fatal(std::sync::Arc<Failure>),
}

/// Why the engine stopped, its cause kept for whoever reports it.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// The include or exclude patterns do not parse.
    #[error(transparent)]
    Patterns(#[from] lineage_source::PatternError),
    /// The index cannot be opened or used.
    #[error(transparent)]
    Index(#[from] lineage_store::index::IndexError),
    /// The root is not a folder that can be read.
    #[error(transparent)]
    Root(#[from] lineage_source::RootError),
}

/// What the engine is to watch and how.
#[derive(Clone, Debug)]
pub struct Options {
    /// The folder to watch.
    pub root: PathBuf,
    /// The root's index folder (see [`lineage_store::index::location`]).
    pub index_dir: PathBuf,
    /// Live settings, source filters, `[watch]` (cluster threshold included).
    pub config: Config,
    /// What the process does with its allocator around Tune's sweeps.
    pub memory: Memory,
}

/// The process's allocator around Tune's sweeps, which free large tables
/// from several threads at once: a process setting, so the binary's to give
/// (the engine never tunes the process it runs in). None: nothing is done.
#[derive(Clone, Copy, Debug, Default)]
pub struct Memory {
    /// Called before each sweep.
    pub before_sweep: Option<fn()>,
    /// Called after each sweep, its tables freed.
    pub after_sweep: Option<fn()>,
}

/// The running engine; dropping it stops the thread (after saving the table).
pub struct Engine {
    commands: std::sync::mpsc::Sender<run::Input>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Engine {
    /// Start the engine thread on `opts`; everything it has to say goes to
    /// `publish`, called from the engine's threads. Returns at once: opening
    /// the index and the first walk are reported through snapshots
    /// (`progress`) or [`Update::Fatal`].
    pub fn start(opts: Options, publish: impl FnMut(Update) + Send + 'static) -> Engine {
        let (commands, rx) = std::sync::mpsc::channel();
        let tx = commands.clone();
        let publish: report::Publish =
            std::sync::Arc::new(std::sync::Mutex::new(Box::new(publish)));
        let thread = std::thread::Builder::new()
            .name("lineage-engine".into())
            .spawn(move || run::main(opts, rx, tx, publish))
            .expect("spawn the engine thread");
        Engine {
            commands,
            thread: Some(thread),
        }
    }

    /// What asks the engine to stop (saving the table first), from any
    /// thread.
    pub fn quitter(&self) -> impl FnOnce() + Send + 'static {
        let commands = self.commands.clone();
        move || {
            let _ = commands.send(run::Input::Command(Command::Quit));
        }
    }

    /// Ask something of the engine; ignored once it has stopped.
    pub fn send(&self, c: Command) {
        let _ = self.commands.send(run::Input::Command(c));
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.send(Command::Quit);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
