//! `lineage watch ROOT`: keep the folder's index up to date as files change,
//! and say what each change did (with `--json`, docs/formats.md §6: one object per
//! line). Runs until interrupted; the index is consistent at every instant.
//! The work is the engine's (`lineage_engine`): at a terminal this opens the
//! TUI (`lineage_tui`); otherwise it prints the engine's events.

use std::io::{IsTerminal, Write};
use std::sync::mpsc;

use clap::Args;
use serde_json::json;

use super::scan::EstimatedArgs;
use super::{CommonEngineArgs, Fatal, SourceArgs, StoreArgs, WorkersArgs};
use lineage_config::Config;
use lineage_engine::{self as engine, Engine, Event, EventKind, Update};

#[derive(Args, Debug)]
pub(super) struct WatchArgs {
    #[command(flatten)]
    pub(super) source: SourceArgs,
    /// Print one JSON object per line (docs/formats.md §6) instead of opening the
    /// full-screen view (which opens only when stdin and stdout are a
    /// terminal; otherwise readable lines are printed).
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    store: StoreArgs,
    /// Poll the folder instead of asking the OS for events (network and
    /// virtual file systems) [config: watch.poll].
    #[arg(long)]
    poll: bool,
    /// Quiet time that ends a burst of file events, in milliseconds, 10 to
    /// 60000 [default: 200].
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(10..=60_000))]
    debounce_ms: Option<u64>,
    /// Seconds between rescans when polling or when OS events are
    /// unavailable, and between checks of the root, retries of an index
    /// that could not be written and checks of a git history's HEAD for a
    /// commit that changed no file; 1 to 86400 [default: 2].
    #[arg(long, value_name = "S", value_parser = clap::value_parser!(u64).range(1..=86_400))]
    rescan_secs: Option<u64>,
    /// While changes keep coming, save the table at least this often, in
    /// seconds (a quiet folder saves it after 10 s): a crash replays at most
    /// this much; 1 to 86400 [config: watch.checkpoint_secs; default: 60].
    #[arg(long, value_name = "S", value_parser = clap::value_parser!(u64).range(1..=86_400))]
    checkpoint_secs: Option<u64>,
    /// Jaccard resemblance (0 to 1) at which two documents are near
    /// duplicates, in one cluster [config: watch.min_similarity; default: 0.5].
    #[arg(long, value_name = "J")]
    min_similarity: Option<f64>,
    #[command(flatten)]
    workers: WorkersArgs,
    #[command(flatten)]
    estimated: EstimatedArgs,
    #[command(flatten)]
    common: CommonEngineArgs,
}

/// Updates waiting for the line writer at most.
const UPDATES_QUEUED: usize = 64;

pub(super) fn run(args: WatchArgs, mut config: Config) -> Result<(), Fatal> {
    args.source.apply(&mut config);
    args.common.apply(&mut config);
    args.estimated.apply(&mut config);
    args.store.apply(&mut config);
    args.workers.apply(&mut config);
    config.watch.poll |= args.poll;
    super::set(&mut config.watch.debounce_ms, args.debounce_ms);
    super::set(&mut config.watch.rescan_secs, args.rescan_secs);
    super::set(&mut config.watch.checkpoint_secs, args.checkpoint_secs);
    super::set(&mut config.watch.min_similarity, args.min_similarity);
    config.validate()?;
    lineage_source::Filter::new(&config.include, &config.exclude)?;
    let root = args.source.root.as_path();
    lineage_source::check_root(root)?;
    let index_dir = args.store.dir(root, &config)?;
    let opts = engine::Options {
        root: root.to_path_buf(),
        index_dir,
        config,
        memory: crate::memory::SWEEPS,
    };
    // A person at a terminal gets the full-screen view; pipes and --json get lines.
    if !args.json && std::io::stdout().is_terminal() && std::io::stdin().is_terminal() {
        // An index in use is one line and exit 2 before the screen opens
        // (the engine would say so inside it only).
        lineage_store::index::check_free(&opts.index_dir).map_err(|e| Fatal(e.to_string()))?;
        return lineage_tui::run(opts, super::signals::on_stop).map_err(Fatal::from);
    }
    // A reader of stdout that stops reading stops the engine here: events
    // wait in a short queue (nothing is lost) instead of piling up without
    // bound; progress snapshots, which only feed the progress line, are
    // dropped while the queue is full.
    let (tx, rx) = mpsc::sync_channel(UPDATES_QUEUED);
    let engine = Engine::start(opts, move |u| match u {
        Update::Events(_) | Update::Fatal(_) => {
            let _ = tx.send(u);
        }
        _ => {
            let _ = tx.try_send(u);
        }
    });
    super::signals::on_stop(engine.quitter());
    let mut out = Lines {
        json: args.json,
        progress: std::io::stderr().is_terminal(),
    };
    for update in rx {
        match update {
            Update::Events(events) => {
                for e in events.iter() {
                    out.event(e)?;
                }
            }
            Update::Snapshot(s) => out.progress(s.progress.as_ref()),
            Update::Fatal(e) => return Err(Fatal::of(&*e)),
            _ => {}
        }
    }
    Err(Fatal(super::ENGINE_STOPPED.into()))
}

/// Writes one line per event, flushed at once (a consumer reads as we go);
/// notices and progress go to stderr.
struct Lines {
    json: bool,
    /// Show indexing progress on stderr (a terminal).
    progress: bool,
}

impl Lines {
    fn event(&mut self, e: &Event) -> Result<(), Fatal> {
        match &e.kind {
            EventKind::Version {
                path,
                version,
                id,
                fresh_percent,
                dominant_path,
                origins,
            } => {
                let origins: Vec<_> = origins
                    .iter()
                    .map(|o| names(json!({"path": o.path, "version": o.version, "id": o.id, "shingles": o.units})))
                    .collect();
                let from = match (dominant_path, origins.first()) {
                    (Some(p), _) if p != path => format!(", mostly from {p}"),
                    _ => String::new(),
                };
                self.line(
                    json!({
                        "event": "version", "path": path, "version": version, "id": id,
                        "fresh_percent": fresh_percent, "dominant_origin": dominant_path,
                        "origins": origins,
                    }),
                    format!("{path}, version {version}: {fresh_percent:.1}% fresh{from}"),
                )
            }
            EventKind::Skipped { path, reason } => self.line(
                json!({"event": "skipped", "path": path, "reason": reason}),
                format!("skipped {path}: {reason}"),
            ),
            EventKind::Renamed { from, to, id } => self.line(
                json!({"event": "renamed", "from": from, "path": to, "id": id}),
                format!("renamed {from} -> {to} (its versions moved with it)"),
            ),
            EventKind::Deleted { path } => self.line(
                json!({"event": "deleted", "path": path}),
                format!("deleted {path} (its versions stay in the history)"),
            ),
            EventKind::Error(message) => self.line(
                json!({"event": "error", "message": message}),
                format!("error: {message}"),
            ),
            EventKind::Notice(message) => {
                self.progress(None);
                super::show::note(&format!("lineage: {}", super::show::show(message)));
                Ok(())
            }
        }
    }

    fn progress(&mut self, p: Option<&engine::Progress>) {
        if !self.progress {
            return;
        }
        match p {
            Some(p) if p.total > 0 => {
                super::show::progress(&format!("{} {}/{}", p.what, p.done, p.total))
            }
            _ => super::show::progress(""),
        }
    }

    fn line(&mut self, json: serde_json::Value, text: String) -> Result<(), Fatal> {
        let json = names(json);
        self.progress(None);
        let mut out = std::io::stdout().lock();
        if self.json {
            super::show::json(&mut out, &json)?;
            writeln!(out)?;
        } else {
            writeln!(out, "{}", super::show::show(&text))?;
        }
        out.flush()?;
        Ok(())
    }
}

/// Document names in an event's JSON for people, with the exact bytes of a
/// name that is not UTF-8 beside it (`path_hex`, `from_hex`, `dominant_origin_hex`).
fn names(mut v: serde_json::Value) -> serde_json::Value {
    use lineage_source::name;
    if let Some(m) = v.as_object_mut() {
        for key in ["path", "from", "dominant_origin"] {
            let Some(n) = m.get(key).and_then(|p| p.as_str()).map(str::to_string) else {
                continue;
            };
            if let Some(hex) = name::hex(&n) {
                m.insert(key.into(), name::display(&n).into());
                m.insert(format!("{key}_hex"), hex.into());
            }
        }
    }
    v
}
