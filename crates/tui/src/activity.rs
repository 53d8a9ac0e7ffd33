//! What the engine is doing now, in a few words for the status bar: from the
//! snapshot (indexing, the watch mode, the last change) and the Tune state
//! (adopting settings, a shadow run under way).

use super::app::App;
use super::panes::{count, events::when};
use super::paths;
use super::tune::RunKind;
use lineage_engine::{EventKind, Progress, Watching};

/// How the status bar marks an activity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tone {
    /// Work under way.
    Busy,
    /// Watching, all done.
    Idle,
    /// Waiting for something to happen first.
    Waiting,
    Failed,
}

/// The least room a path in the status bar is given; less, and it is left
/// out.
const PATH_ROOM: usize = 12;

/// A step's progress in words: how far, and how fast once measured.
pub(crate) fn progress_text(p: &Progress) -> String {
    let pct = p.done as f64 * 100.0 / p.total.max(1) as f64;
    let mut text = format!(
        "{} {}/{} ({pct:.0}%)",
        p.what,
        count(p.done),
        count(p.total)
    );
    if let Some(rate) = p.per_sec {
        text += &format!(" · {}/s", count(rate));
    }
    text
}

/// The one thing the engine is busy with, most pressing first; a path in it
/// takes at most `room` columns, and with less than [`PATH_ROOM`] the last
/// change is only its time.
pub(crate) fn activity(app: &App, room: usize) -> Option<(String, Tone)> {
    let s = app.snapshot.as_ref()?;
    let progress = s.progress.as_ref().map(progress_text);
    if app.tune.adopting.is_some() {
        let text = match progress {
            Some(p) => format!("adopting settings… {p}"),
            None => "adopting settings…".into(),
        };
        return Some((text, Tone::Busy));
    }
    if let Some(p) = progress {
        return Some((p, Tone::Busy));
    }
    if app.tune.running() {
        let what = match app.tune.kind {
            Some(RunKind::Sweep { .. }) => "sweep",
            _ => "shadow run",
        };
        let text = match &app.tune.update {
            Some(u) => format!("{what} {}/{}", count(u.done), count(u.total)),
            None => format!("{what} starting"),
        };
        return Some((text, Tone::Busy));
    }
    let mode = match &s.watching {
        Watching::Starting => return Some(("starting".into(), Tone::Waiting)),
        Watching::Rescanning(why) => return Some((format!("rescanning ({why})"), Tone::Busy)),
        Watching::RootGone => return Some(("root gone, waiting".into(), Tone::Failed)),
        Watching::Events => "watching",
        Watching::Polling => "polling",
    };
    // Events are newest first: the last change to a document this run saw
    // (a restart's Events begin with the history's, changes of before).
    let mut this_run = s.events.iter().take_while(|e| e.n > s.before_start);
    let last = this_run.find_map(|e| match &e.kind {
        EventKind::Version { path, .. } | EventKind::Deleted { path } => Some((e.at_ms, path)),
        EventKind::Renamed { to, .. } => Some((e.at_ms, to)),
        _ => None,
    });
    let text = match last {
        Some((at, _)) if room < PATH_ROOM => format!("{mode} · changed {}", when(at, app.today)),
        Some((at, path)) => format!(
            "{mode} · last change {} {}",
            when(at, app.today),
            paths::fit(path, "", room, 1)
        ),
        None => format!("{mode} · no change since start"),
    };
    Some((text, Tone::Idle))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::tests::app;

    /// Right after a restart every event is the history's: no change is
    /// claimed until this run sees one.
    #[test]
    fn the_last_change_is_one_this_run_saw() {
        let mut a = app(120, 40);
        let mut s = (**a.snapshot.as_ref().unwrap()).clone();
        s.progress = None;
        // The fixture's events are numbered 1 to 5; the newest, 5, a version.
        s.before_start = 5;
        a.snapshot = Some(Arc::new(s.clone()));
        let idle = |t: &str| Some((t.to_string(), Tone::Idle));
        assert_eq!(activity(&a, 40), idle("watching · no change since start"));
        s.before_start = 4;
        a.snapshot = Some(Arc::new(s));
        let at = when(a.snapshot.as_ref().unwrap().events[0].at_ms, a.today);
        let last = format!("watching · last change {at} v2/installation.md");
        assert_eq!(activity(&a, 40), idle(&last));
    }
}
