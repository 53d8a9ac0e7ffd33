//! `lineage watch ROOT`: keep the folder's index up to date as files change,
//! and say what each change did (with `--json`, CONTRACT §6: one object per
//! line). Runs until interrupted; the index is consistent at every instant.
//!
//! Every debounced batch of file events triggers a walk of the root (a stat
//! of every file; only changed files are read), so renames, editors'
//! write-and-rename saves, folder moves and bursts need no special cases. When
//! the OS cannot watch (the inotify limit, say) or drops events, it rescans on
//! a timer instead and says so.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use clap::Args;
use notify::{PollWatcher, RecursiveMode};
use notify_debouncer_full::{
    DebounceEventResult, RecommendedCache, new_debouncer, new_debouncer_opt,
};
use serde_json::json;

use super::index::Stderr;
use super::scan::EstimatedArgs;
use super::{CommonEngineArgs, Fatal, SourceArgs};
use crate::config::Config;
use crate::index::{self, Change, Index};
use crate::origin::Outcome;
use crate::source::{self, Filter};

/// Quiet time after which the table snapshot is written.
const CHECKPOINT_IDLE: Duration = Duration::from_secs(10);

#[derive(Args, Debug)]
pub(super) struct WatchArgs {
    #[command(flatten)]
    source: SourceArgs,
    /// Print one JSON object per line (CONTRACT §6) instead of readable lines.
    #[arg(long)]
    json: bool,
    /// This root's index folder [default: as `lineage index`].
    #[arg(long, value_name = "DIR")]
    index: Option<PathBuf>,
    /// Poll the folder instead of asking the OS for events (network and
    /// virtual file systems) [config: watch.poll].
    #[arg(long)]
    poll: bool,
    /// Quiet time that ends a burst of file events, in milliseconds [default: 200].
    #[arg(long, value_name = "MS")]
    debounce_ms: Option<u64>,
    /// Seconds between rescans when polling or when OS events are unavailable
    /// [default: 2].
    #[arg(long, value_name = "S")]
    rescan_secs: Option<u64>,
    #[command(flatten)]
    estimated: EstimatedArgs,
    #[command(flatten)]
    common: CommonEngineArgs,
}

pub(super) fn run(args: WatchArgs, mut config: Config) -> Result<(), Fatal> {
    args.source.apply(&mut config);
    args.common.apply(&mut config);
    args.estimated.apply(&mut config);
    config.watch.poll |= args.poll;
    super::set(&mut config.watch.debounce_ms, args.debounce_ms);
    super::set(&mut config.watch.rescan_secs, args.rescan_secs);
    config.validate()?;
    let filter = Filter::new(&config.include, &config.exclude)?;
    let root = args.source.root.as_path();
    let base = (!config.index_dir.is_empty()).then(|| PathBuf::from(&config.index_dir));
    let dir = index::location(root, args.index.as_deref(), base.as_deref())?;
    let mut obs = Stderr::new();
    let mut ix = Index::open(root, &dir, config.params(), &mut obs)?;
    let mut out = Lines { json: args.json };

    let rescan = |ix: &mut Index, obs: &mut Stderr, out: &mut Lines| -> Result<usize, Fatal> {
        let walk = source::walk_with(root, &filter, config.walk_options())?;
        let (_, changes) = ix.sync(walk, config.max_file_size.0, config.order, obs)?;
        obs.clear();
        for c in &changes {
            out.change(ix, c)?;
        }
        Ok(changes.len())
    };
    // Watch first, then scan: a change made while the first scan runs is
    // then either in the scan or in an event (or both, which is harmless).
    let (tx, rx) = mpsc::channel::<DebounceEventResult>();
    let w = &config.watch;
    let every = Duration::from_secs(w.rescan_secs.max(1));
    let (watcher, mut timed) = match start(root, w.poll, w.debounce_ms, every, tx) {
        // The poll watcher is a timer itself, and its events are debounced
        // like OS events: timed rescans are only for when watching failed.
        Ok(d) => (Some(d), false),
        Err(e) => {
            out.error(&format!(
                "cannot watch {} ({e}); rescanning every {} s instead",
                root.display(),
                every.as_secs()
            ))?;
            (None, true)
        }
    };
    rescan(&mut ix, &mut obs, &mut out)?;
    loop {
        let batch = rx.recv_timeout(if timed { every } else { CHECKPOINT_IDLE });
        match batch {
            Err(RecvTimeoutError::Timeout) if !timed => {
                // Quiet: save the table, so a restart need not replay.
                if let Err(e) = ix.checkpoint() {
                    out.error(&format!("saving the table snapshot: {e}"))?;
                }
                continue;
            }
            Ok(Ok(_)) | Err(RecvTimeoutError::Timeout) => {}
            Ok(Err(errors)) => {
                for e in errors {
                    out.error(&format!("watching: {e}"))?;
                }
                if !timed {
                    out.error(&format!(
                        "events may be lost; rescanning every {} s from now on",
                        every.as_secs()
                    ))?;
                    timed = true;
                }
            }
            Err(RecvTimeoutError::Disconnected) if watcher.is_some() => {
                return Err(Fatal("the file watcher stopped".into()));
            }
            Err(RecvTimeoutError::Disconnected) => {}
        }
        match rescan(&mut ix, &mut obs, &mut out) {
            // A quiet tick of timed rescans: save the table (a no-op if saved).
            Ok(0) if timed => {
                if let Err(e) = ix.checkpoint() {
                    out.error(&format!("saving the table snapshot: {e}"))?;
                }
            }
            Ok(_) => {}
            // A failed rescan (the root gone, a disk error) is reported; the
            // next event or tick tries again.
            Err(Fatal(e)) => out.error(&e)?,
        }
    }
}

/// Start watching `root`; the debouncer must live as long as the watch.
fn start(
    root: &Path,
    poll: bool,
    debounce_ms: u64,
    every: Duration,
    tx: mpsc::Sender<DebounceEventResult>,
) -> notify::Result<Box<dyn std::any::Any>> {
    let timeout = Duration::from_millis(debounce_ms);
    if poll {
        let config = notify::Config::default().with_poll_interval(every);
        let mut d = new_debouncer_opt::<_, PollWatcher, _>(
            timeout,
            None,
            tx,
            RecommendedCache::new(),
            config,
        )?;
        d.watch(root, RecursiveMode::Recursive)?;
        Ok(Box::new(d))
    } else {
        let mut d = new_debouncer(timeout, None, tx)?;
        d.watch(root, RecursiveMode::Recursive)?;
        Ok(Box::new(d))
    }
}

/// Writes one line per change, flushed at once (a consumer reads as we go).
struct Lines {
    json: bool,
}

impl Lines {
    fn change(&mut self, ix: &Index, c: &Change) -> Result<(), Fatal> {
        match c {
            Change::Version {
                path,
                version,
                outcome,
            } => self.version(ix, path, *version, outcome),
            Change::Revived { path, id } => match (ix.outcome(*id)?, ix.version_of(*id)?) {
                (Some(o), Some((_, v))) => self.version(ix, path, v, &o),
                _ => Ok(()),
            },
            Change::Skipped { path, reason } => self.line(
                json!({"event": "skipped", "path": path, "reason": reason}),
                format!("skipped {path}: {reason}"),
            ),
            Change::Deleted { path } => self.line(
                json!({"event": "deleted", "path": path}),
                format!("deleted {path} (its versions stay in the history)"),
            ),
        }
    }

    fn version(&mut self, ix: &Index, path: &str, version: u32, o: &Outcome) -> Result<(), Fatal> {
        let version_of = |id: u32| -> Result<(String, u32), Fatal> {
            Ok(ix.version_of(id)?.unwrap_or_else(|| (format!("#{id}"), 0)))
        };
        let path_of = |id: u32| version_of(id).map(|v| v.0);
        let fresh = if o.tokens == 0 {
            100.0
        } else {
            100.0 * f64::from(o.fresh_tokens()) / f64::from(o.tokens)
        };
        let dominant = o.dominant_origin.map(path_of).transpose()?;
        let origins = o
            .origins
            .iter()
            .map(|&(id, n)| {
                let (p, v) = version_of(id)?;
                Ok(json!({"path": p, "version": v, "id": id, "shingles": n}))
            })
            .collect::<Result<Vec<_>, Fatal>>()?;
        let from = match (&dominant, o.dominant_origin) {
            (Some(p), Some(d)) if d != o.id => format!(", mostly from {p}"),
            _ => String::new(),
        };
        self.line(
            json!({
                "event": "version", "path": path, "version": version, "id": o.id,
                "fresh_percent": fresh, "dominant_origin": dominant, "origins": origins,
            }),
            format!("v{version} {path}: {fresh:.1}% fresh{from}"),
        )
    }

    fn error(&mut self, message: &str) -> Result<(), Fatal> {
        self.line(
            json!({"event": "error", "message": message}),
            format!("error: {message}"),
        )
    }

    fn line(&mut self, json: serde_json::Value, text: String) -> Result<(), Fatal> {
        let mut out = std::io::stdout().lock();
        if self.json {
            writeln!(out, "{json}")?;
        } else {
            writeln!(out, "{text}")?;
        }
        out.flush()?;
        Ok(())
    }
}
