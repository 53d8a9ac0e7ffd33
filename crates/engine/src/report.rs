//! How the engine speaks: events, notices and progress gathered per step,
//! then sent as [`Update`]s with the step's snapshot.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use super::*;
use lineage_store::index::Observer;

/// The receiver of updates, shared with shadow-run threads.
pub(super) type Publish = Arc<Mutex<Box<dyn FnMut(Update) + Send>>>;

pub(super) fn send(p: &Publish, u: Update) {
    // A panicking receiver poisons the lock; the engine still goes on.
    let mut f = p.lock().unwrap_or_else(|e| e.into_inner());
    f(u);
}

/// How long a step runs before its rate is said: sooner, a first
/// batch's few items say nothing.
const RATE_AFTER: f64 = 0.5;

/// Progress snapshots at most this often.
const PROGRESS_EVERY: Duration = Duration::from_millis(50);

/// Events, notices and progress on their way out. Also the index's
/// [`Observer`], so repairs and indexing progress show while they happen.
pub(super) struct Reporter {
    pub(super) publish: Publish,
    /// Newest first, at most [`EVENTS`].
    pub(super) events: VecDeque<Event>,
    /// This step's events, oldest first.
    pub(super) fresh: Vec<Event>,
    pub(super) next_n: u64,
    /// The events numbered up to this one were read back from the index
    /// ([`Snapshot::before_start`]).
    pub(super) before_start: u64,
    pub(super) last: Arc<Snapshot>,
    pub(super) last_progress: Instant,
    /// The step under way: what, when it began and how far it was then.
    pub(super) step: Option<(String, Instant, u64)>,
}

impl Reporter {
    /// Tell of `kind`; returns when it was told (milliseconds since the epoch).
    pub(super) fn push(&mut self, kind: EventKind) -> i64 {
        self.next_n += 1;
        let at_ms = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        let e = Event {
            n: self.next_n,
            at_ms,
            kind,
        };
        self.fresh.push(e.clone());
        self.events.push_front(e);
        self.events.truncate(EVENTS);
        at_ms
    }

    pub(super) fn error(&mut self, message: impl Into<String>) {
        self.push(EventKind::Error(message.into()));
    }

    /// Send this step's events, then `s` as the new snapshot.
    pub(super) fn publish(&mut self, mut s: Snapshot) {
        self.send_events();
        s.seq = self.last.seq + 1;
        // The events change by a push (a new newest number) or not at all
        // (once, at the start, they are read back): where the newest and the
        // count are the last snapshot's, so are the events, and they are
        // shared, not copied (up to EVENTS of them, for every progress tick).
        let last = &self.last.events;
        let same = last.len() == self.events.len()
            && last.first().map(|e| e.n) == self.events.front().map(|e| e.n);
        s.events = if same {
            last.clone()
        } else {
            self.events.iter().cloned().collect()
        };
        s.before_start = self.before_start;
        self.last = Arc::new(s);
        send(&self.publish, Update::Snapshot(self.last.clone()));
    }

    /// Send the events since the last send, ahead of the snapshot that
    /// will hold them: a line reader learns of a change without waiting
    /// for every row and cluster to be built again.
    pub(super) fn send_events(&mut self) {
        if !self.fresh.is_empty() {
            let fresh: Arc<[Event]> = std::mem::take(&mut self.fresh).into();
            send(&self.publish, Update::Events(fresh));
        }
    }

    /// The last snapshot again with other progress.
    pub(super) fn progress_snapshot(&mut self, progress: Option<Progress>) {
        let s = Snapshot {
            progress,
            ..(*self.last).clone()
        };
        self.publish(s);
    }
}

impl Observer for Reporter {
    fn notice(&mut self, message: &str) {
        self.push(EventKind::Notice(message.to_string()));
    }

    fn progress(&mut self, what: &str, done: u64, total: u64) {
        if done < total && self.last_progress.elapsed() < PROGRESS_EVERY {
            return;
        }
        let now = Instant::now();
        self.last_progress = now;
        let step = match self.step.take() {
            Some(s) if s.0 == what && s.2 <= done => s,
            _ => (what.to_string(), now, done),
        };
        let secs = now.duration_since(step.1).as_secs_f64();
        let per_sec = (secs >= RATE_AFTER).then(|| ((done - step.2) as f64 / secs) as u64);
        self.step = (done < total).then_some(step);
        self.progress_snapshot(Some(Progress {
            what: what.to_string(),
            done,
            total,
            per_sec,
        }));
    }
}
