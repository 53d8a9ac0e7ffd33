//! When the engine acts without being asked: the periodic tick, the
//! watcher's releases of files whose writers went quiet, and the table
//! checkpoint. Deadlines, not timeouts: inputs arriving often (a person
//! scrolling) must not put any of them off. Pure: every call is given the
//! time, so the rules are tested without a clock.

use std::time::{Duration, Instant};

/// Quiet time after which the table snapshot is saved.
pub(super) const CHECKPOINT_IDLE: Duration = Duration::from_secs(10);

/// What is due, in the order it is served when several are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Due {
    /// Save the table snapshot.
    Checkpoint,
    /// Retry a closed index, check the root, rescan when events are not to
    /// be had.
    Tick,
    /// The watcher releases files whose writers went quiet.
    Release,
}

#[derive(Debug)]
pub(super) struct Schedule {
    /// Ticks this often.
    every: Duration,
    /// The longest the table goes unsaved while it keeps changing: what a
    /// crash may cost to replay.
    most: Duration,
    next_tick: Instant,
    /// When the table first and last changed without being saved since.
    unsaved: Option<(Instant, Instant)>,
}

impl Schedule {
    /// A schedule starting at `now`, the table not yet saved.
    pub(super) fn new(now: Instant, every: Duration, most: Duration) -> Schedule {
        Schedule {
            every,
            most,
            next_tick: now + every,
            unsaved: Some((now, now)),
        }
    }

    /// When the table is next to be saved: quiet for [`CHECKPOINT_IDLE`],
    /// or changing for longer than `most`.
    fn save_at(&self) -> Option<Instant> {
        (self.unsaved).map(|(first, last)| (last + CHECKPOINT_IDLE).min(first + self.most))
    }

    /// What is due at `now`, the watcher's next release being `release`;
    /// else the time to wait until.
    pub(super) fn due(&self, now: Instant, release: Option<Instant>) -> Result<Due, Instant> {
        let save_at = self.save_at();
        if save_at.is_some_and(|s| now >= s) {
            return Ok(Due::Checkpoint);
        }
        if now >= self.next_tick {
            return Ok(Due::Tick);
        }
        if release.is_some_and(|r| now >= r) {
            return Ok(Due::Release);
        }
        Err([Some(self.next_tick), save_at, release]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(self.next_tick))
    }

    /// A tick was served at `now`: the next is one period on.
    pub(super) fn ticked(&mut self, now: Instant) {
        self.next_tick = now + self.every;
    }

    /// The table changed at `now`.
    pub(super) fn changed(&mut self, now: Instant) {
        self.unsaved.get_or_insert((now, now)).1 = now;
    }

    /// The table was saved.
    pub(super) fn saved(&mut self) {
        self.unsaved = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);

    #[test]
    fn the_first_checkpoint_comes_after_a_quiet_spell() {
        let t0 = Instant::now();
        let s = Schedule::new(t0, 60 * S, 300 * S);
        assert_eq!(s.due(t0, None), Err(t0 + CHECKPOINT_IDLE));
        assert_eq!(s.due(t0 + CHECKPOINT_IDLE, None), Ok(Due::Checkpoint));
    }

    #[test]
    fn changes_put_the_checkpoint_off_but_not_past_the_bound() {
        let t0 = Instant::now();
        let mut s = Schedule::new(t0, 3600 * S, 30 * S);
        s.saved();
        assert_eq!(s.due(t0, None), Err(t0 + 3600 * S), "saved: only the tick");
        // A change every 5 s: never quiet for 10 s, saved 30 s after the first.
        for i in 1..=6 {
            let now = t0 + 5 * i * S;
            s.changed(now);
            let want = (now + CHECKPOINT_IDLE).min(t0 + 35 * S);
            assert_eq!(s.due(now, None), Err(want), "change {i}");
        }
        assert_eq!(s.due(t0 + 35 * S, None), Ok(Due::Checkpoint));
        s.saved();
        assert_eq!(s.due(t0 + 35 * S, None), Err(t0 + 3600 * S));
    }

    #[test]
    fn ticks_keep_their_period_and_checkpoints_come_first() {
        let t0 = Instant::now();
        let mut s = Schedule::new(t0, 10 * S, 300 * S);
        // Both due: the checkpoint is served first, then the tick.
        assert_eq!(s.due(t0 + 10 * S, None), Ok(Due::Checkpoint));
        s.saved();
        assert_eq!(s.due(t0 + 10 * S, None), Ok(Due::Tick));
        s.ticked(t0 + 10 * S);
        assert_eq!(s.due(t0 + 12 * S, None), Err(t0 + 20 * S));
    }

    #[test]
    fn a_release_is_served_when_nothing_else_is_due() {
        let t0 = Instant::now();
        let mut s = Schedule::new(t0, 10 * S, 300 * S);
        s.saved();
        let r = t0 + 2 * S;
        assert_eq!(s.due(t0, Some(r)), Err(r), "the earliest deadline");
        assert_eq!(s.due(r, Some(r)), Ok(Due::Release));
        assert_eq!(s.due(t0 + 10 * S, Some(r)), Ok(Due::Tick));
    }
}
