//! The engine thread: open the index, watch, apply changes in order, answer
//! commands, publish snapshots. The thread only waits; what it waited for
//! is one [`Step`] of [`Run`], given the time: state + input + now → new
//! state, and the updates it publishes.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use super::live::Live;
use super::report::{Publish, Reporter, send};
use super::schedule::{Due, Schedule};
use super::store::{self, Store};
use super::*;
use crate::indexer::Indexer;
use lineage_source::watch::{Batch, Stated};
use lineage_source::{self as source, Filter};
use lineage_store::index::{IndexError, Observer};

/// What reaches the engine thread: commands, and file events from the watcher.
pub(super) enum Input {
    Command(Command),
    Files(Batch),
    /// Pairs the shares run diffed, to keep in the index.
    Measured(Vec<lineage_store::index::PairCounts>),
}

/// One step of the engine.
pub(super) enum Step {
    /// Inputs that arrived together, oldest first.
    Inputs(Vec<Input>),
    /// A deadline of the [`Schedule`] passed.
    Due(Due),
}

/// Whether the engine goes on after a step.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Flow {
    Go,
    /// Asked to quit (or nobody is left to ask): the table is saved.
    Stop,
}

/// The engine's state: the index, open or closed, the live state beside
/// it, and when it next acts unasked.
pub(super) struct Run {
    pub(super) store: Store,
    pub(super) live: Live,
    pub(super) schedule: Schedule,
}

/// The engine thread's body.
pub(super) fn main(opts: Options, rx: Receiver<Input>, tx: Sender<Input>, publish: Publish) {
    let fatal = |e: Failure| send(&publish, Update::Fatal(Arc::new(e)));
    let (mut run, root_id) = match Run::open(opts, tx, publish.clone(), Instant::now()) {
        Ok(opened) => opened,
        Err(e) => return fatal(e),
    };
    // Watch first, then walk: a change made during the walk is then in the
    // walk or in an event (or both, which is harmless).
    if let Err(why) = run.live.folder.start(root_id) {
        run.live.rep.error(why);
    }
    run.sync(None);
    run.publish();
    loop {
        let now = Instant::now();
        let step = match run.schedule.due(now, run.live.folder.next_release()) {
            Ok(due) => Step::Due(due),
            Err(deadline) => match rx.recv_timeout(deadline.saturating_duration_since(now)) {
                Ok(first) => Step::Inputs(std::iter::once(first).chain(rx.try_iter()).collect()),
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => {
                    Step::Inputs(vec![Input::Command(Command::Quit)])
                }
            },
        };
        // Inputs are stamped when they arrived, not when the wait began: a
        // change puts the checkpoint off from its own time.
        let now = match step {
            Step::Inputs(_) => Instant::now(),
            Step::Due(_) => now,
        };
        if run.step(step, now) == Flow::Stop {
            return;
        }
    }
}

impl Run {
    /// Open the root's index and load the live state, telling how through
    /// `publish`; the root's identity, to watch it by. The folder is not
    /// watched yet, nor walked.
    pub(super) fn open(
        opts: Options,
        events: Sender<Input>,
        publish: Publish,
        now: Instant,
    ) -> Result<(Run, (u64, u64)), Failure> {
        let first = Snapshot {
            seq: 0,
            root: opts.root.clone(),
            params: opts.config.params(),
            documents: Documents::default(),
            clusters: Arc::from([]),
            table: TableStats::default(),
            table_history: Arc::from([]),
            bucket_fill: Arc::from([]),
            events: Arc::from([]),
            before_start: 0,
            versions: 0,
            skipped: 0,
            shingles: 0,
            progress: Some(Progress {
                what: "opening the index".into(),
                done: 0,
                total: 0,
                per_sec: None,
            }),
            watching: Watching::Starting,
        };
        let mut rep = Reporter {
            publish,
            events: std::collections::VecDeque::new(),
            fresh: Vec::new(),
            next_n: 0,
            before_start: 0,
            last: Arc::new(first.clone()),
            last_progress: Instant::now(),
            step: None,
        };
        rep.publish(first);
        let filter = Filter::new(&opts.config.include, &opts.config.exclude)?;
        let mut ix = open_index(&opts, opts.config.params(), &mut rep)?;
        let root_id = source::check_root(ix.root())?;
        let most = Duration::from_secs(opts.config.watch.checkpoint_secs);
        let live = Live::new(opts, filter, &mut ix, rep, events)?;
        let schedule = Schedule::new(now, live.folder.every, most);
        let run = Run {
            store: Store::Open(ix),
            live,
            schedule,
        };
        Ok((run, root_id))
    }

    /// One step at `now`: what was due, or the inputs that arrived.
    pub(super) fn step(&mut self, step: Step, now: Instant) -> Flow {
        match step {
            Step::Due(Due::Checkpoint) => {
                self.checkpoint();
                self.schedule.saved();
            }
            Step::Due(Due::Tick) => {
                self.schedule.ticked(now);
                if self.tick() {
                    self.schedule.changed(now);
                    self.publish();
                }
            }
            Step::Due(Due::Release) => {
                let paths = self.live.folder.released();
                if !paths.is_empty() && self.sync(Some(Stated::new(paths))) {
                    self.schedule.changed(now);
                    self.publish();
                }
            }
            Step::Inputs(inputs) => return self.inputs(inputs, now),
        }
        Flow::Go
    }

    /// Inputs that arrived together: commands answered in order, file
    /// events gathered into one sync.
    fn inputs(&mut self, inputs: Vec<Input>, now: Instant) -> Flow {
        let mut paths: Vec<PathBuf> = Vec::new();
        let mut full = false;
        let mut changed = false;
        for input in inputs {
            match input {
                Input::Command(Command::Quit) => {
                    self.checkpoint();
                    return Flow::Stop;
                }
                Input::Command(Command::Changed(p)) => paths.extend(p),
                Input::Measured(pairs) => {
                    if let Store::Open(ix) = &mut self.store
                        && let Err(e) = ix.index_mut().put_changes(&pairs)
                    {
                        self.failed(e);
                        changed = true;
                    }
                }
                Input::Command(c) => changed |= self.command(c),
                Input::Files(Batch::Changed { paths: p, rescan }) => {
                    self.live.folder.adopt(&p);
                    paths.extend(p);
                    full |= rescan;
                }
                Input::Files(Batch::Failed(errors)) => {
                    for e in errors {
                        self.live.rep.error(format!("watching: {e}"));
                    }
                    if let Some(why) = self.live.folder.lost_events() {
                        self.live.rep.error(why);
                    }
                    full = true;
                    // Told now, not with the walk (which files still being
                    // written may put off for a few ticks).
                    changed = true;
                }
            }
        }
        if full || !paths.is_empty() {
            // Each path stat'ed once, for both: paths an event found gone
            // wait for the files being written (once: not when they are
            // released), and the sync reads the others.
            let paths = Stated::new(paths);
            self.live.folder.hold_gone(&paths.gone());
            changed |= self.sync((!full).then_some(paths));
        }
        if changed {
            // A checkpoint with nothing new to save is a no-op.
            self.schedule.changed(now);
            self.publish();
        }
        Flow::Go
    }

    /// Every period: retry a closed index, check the root, rescan when
    /// events are not to be had. True if a snapshot is due.
    fn tick(&mut self) -> bool {
        let Store::Open(ix) = &mut self.store else {
            return self.recover();
        };
        if ix.index().log_removed() {
            return self.save_removed_log();
        }
        // A run of the shares put off for a burst of edits starts now.
        self.live.start_shares(ix.index());
        match self.live.check_root(ix) {
            Ok(Some(due)) => return due,
            Ok(None) => {}
            Err(e) => {
                self.failed(e);
                return true;
            }
        }
        // Unreadable folders that became readable are walked now (a
        // folder among the paths of a sync is a walk of the root anyway).
        let back = self.live.folder.retry_denied();
        if !(back || self.live.folder.rescanning())
            && ix.history_moved(self.live.history_failed.as_deref())
        {
            // A commit that changed no file under the root (its files saved
            // before, or the root a folder of the work tree, whose `.git`
            // is not watched): read now, no file to walk.
            return self.sync(Some(Stated::new(Vec::new())));
        }
        (back || self.live.folder.rescanning()) && self.sync(None)
    }

    /// Bring the open index up to the folder (see [`Live::sync`]); true if a
    /// snapshot is due. Nothing while the index is closed: a full walk
    /// catches up when it opens.
    fn sync(&mut self, paths: Option<Stated>) -> bool {
        let events = self.live.rep.next_n;
        let Store::Open(ix) = &mut self.store else {
            return false;
        };
        match self.live.sync(ix, paths) {
            Ok(due) => due,
            Err(e) => {
                self.failed(e);
                self.live.due(events)
            }
        }
    }

    /// An index error: a failed write closes the index, to be reopened and
    /// caught up by a full walk when it can be written again (a full disk);
    /// anything else is reported and the engine goes on.
    fn failed(&mut self, e: IndexError) {
        if let Some(message) = self.store.failed(e) {
            self.live.rep.error(message);
        }
    }

    /// `index.db-wal` was removed while the index is open: copy the history
    /// it holds (the file is still open here) into `index.db` now, then
    /// reopen the index at the next tick, which makes a new log. Without
    /// this, the history since the last checkpoint went with the process.
    fn save_removed_log(&mut self) -> bool {
        self.checkpoint();
        let why = "index.db-wal was removed while in use";
        if let Store::Open(ix) = &self.store {
            let saved = ix.index().checkpoint_wal();
            self.live.rep.error(match saved {
                Ok(()) => format!("{why}: the history it held is copied into index.db"),
                Err(e) => format!("{why}, and copying the history it held failed: {e}"),
            });
        }
        self.store.close(why.to_string());
        true
    }

    /// Reopen a closed index and catch up with the folder; true if it
    /// opened. It is open again once caught up; until then a failed write
    /// keeps it closed without a word (it was told when it closed). What
    /// opening it repairs is told once it is open (not at every try).
    fn recover(&mut self) -> bool {
        let params = self.live.opts.config.params();
        let mut notes = Notes::default();
        let Ok(mut ix) = open_index(&self.live.opts, params, &mut notes) else {
            return false;
        };
        let caught_up = self
            .live
            .load(&mut ix)
            .and_then(|()| self.live.sync(&mut ix, None));
        match caught_up {
            Err(e) if store::closes(&e) => {
                self.store.close(e.to_string());
                return true;
            }
            Err(e) => self.live.rep.error(e.to_string()),
            Ok(_) => {}
        }
        self.store = Store::Open(ix);
        for n in notes.0 {
            self.live.rep.notice(&n);
        }
        self.live
            .rep
            .notice("the index can be written again: caught up with the folder");
        true
    }

    /// Save the table snapshot if it is behind.
    fn checkpoint(&mut self) {
        let Store::Open(ix) = &mut self.store else {
            return;
        };
        if let Err(e) = ix.checkpoint() {
            self.live
                .rep
                .error(format!("saving the table snapshot: {e}"));
        }
        for n in ix.index_mut().take_notices() {
            self.live.rep.notice(&n);
        }
    }

    /// Answer a command; true if the live state changed.
    fn command(&mut self, c: Command) -> bool {
        if let Command::Cancel { generation } = c {
            self.live.cancel(generation);
            return false;
        }
        // Kept while the index is closed: the run starts when it opens.
        if let Command::Shares { basis } = c {
            self.live.want_shares(basis);
            if let Store::Open(ix) = &self.store {
                self.live.start_shares(ix.index());
            }
            return false;
        }
        let ix = match &self.store {
            Store::Open(ix) => ix,
            Store::Closed { why } => {
                self.live.rep.error(format!(
                    "{} ({why}); try again when it can be written",
                    super::INDEX_CLOSED
                ));
                return true;
            }
        };
        match c {
            Command::Adopt(params) => {
                let mut config = self.live.opts.config.clone();
                config.set_params(&params);
                let valid = config.validate().map_err(|e| e.to_string());
                if let Err(e) =
                    valid.and_then(|_| params.table_params().validate().map_err(|e| e.to_string()))
                {
                    self.live
                        .rep
                        .error(format!("cannot adopt these settings: {e}"));
                    return true;
                }
                self.live.rep.notice(&format!(
                    "adopting new settings: {}",
                    lineage_store::index::params_key(&params)
                ));
                self.reopen(params);
                true
            }
            // Asked for: always answered with a snapshot, even when the
            // walk found nothing new (the TUI waits for it).
            Command::Rescan => {
                self.sync(None);
                true
            }
            c => {
                self.live.query(ix.index(), c);
                false
            }
        }
    }

    /// Reopen the index with `params` (replaying cached fingerprints when
    /// they differ from its own); on failure, with the settings it had;
    /// failing that, closed, retried every tick (see [`Run::recover`]).
    fn reopen(&mut self, params: Params) {
        self.checkpoint();
        let old = self.live.opts.config.params();
        // Its lock released before it is opened again.
        self.store.close("reopening".into());
        let (opts, rep) = (&self.live.opts, &mut self.live.rep);
        let mut opened = open_index(opts, params, rep).map(|ix| (ix, params));
        if let Err(e) = &opened {
            rep.error(format!("reopening the index: {e}"));
            opened = open_index(opts, old, rep).map(|ix| (ix, old));
        }
        match opened {
            Ok((mut ix, p)) => {
                self.live.opts.config.set_params(&p);
                let loaded = self.live.load(&mut ix);
                self.store = Store::Open(ix);
                if let Err(e) = loaded {
                    self.failed(e);
                }
            }
            Err(e) => {
                let told = store::told(&e);
                self.store.close(e.to_string());
                self.live.rep.error(told);
            }
        }
    }

    /// Publish the step's events and snapshot.
    fn publish(&mut self) {
        match &self.store {
            Store::Open(ix) => self.live.publish(ix),
            Store::Closed { .. } => self.live.publish_closed(),
        }
    }
}

/// Notices kept back, for an index that may not open after all.
#[derive(Default)]
struct Notes(Vec<String>);

impl Observer for Notes {
    fn notice(&mut self, message: &str) {
        self.0.push(message.to_string());
    }
}

/// Open the root's index for `params`, its texts within the configured budget.
fn open_index(
    opts: &Options,
    params: Params,
    obs: &mut dyn Observer,
) -> Result<Indexer, IndexError> {
    let mut ix = Indexer::open_with(
        &opts.root,
        &opts.index_dir,
        params,
        &opts.config.polynomial(),
        opts.config.pass_workers(),
        obs,
    )?;
    ix.index_mut()
        .set_history_budget(opts.config.history_budget.0)?;
    // The Table pane shows it from the first frame.
    ix.make_table()?;
    for n in ix.index_mut().take_notices() {
        obs.notice(&n);
    }
    // Another order than the index holds, asked for, ends the start here.
    (ix.index_mut()).settle_order(opts.config.order, opts.config.order_asked())?;
    // The repository's commits since the last read, before the first walk
    // (the work tree's changes are the newest versions).
    let filter = Filter::new(&opts.config.include, &opts.config.exclude)
        .map_err(|e| IndexError::Location(e.to_string()))?;
    ix.read_history(
        opts.config.history,
        &opts.config.history_since,
        &filter,
        opts.config.max_file_size.0,
        obs,
    )?;
    Ok(ix)
}

#[cfg(test)]
mod tests;
