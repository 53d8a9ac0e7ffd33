//! The watched folder as the engine sees it: which folder stands at the
//! root's path, how changes in it are noticed (OS events, the poller, timed
//! rescans), and which files are still being written. No index here; the
//! engine decides what a change of folder means for the documents.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use super::Watching;
use super::run::Input;
use lineage_config::WatchConfig;
use lineage_source::watch as watcher;
use lineage_source::{self as source, Filter, RootError};

/// The root, its watch, and the state shown as [`Watching`].
pub(super) struct Folder {
    root: PathBuf,
    /// Device and inode of the folder watched; `None` while it is gone.
    id: Option<(u64, u64)>,
    /// The OS watch (or poller); none while the root is gone or unwatchable.
    watch: Option<watcher::Watcher>,
    /// Where the watcher's batches go.
    events: Sender<Input>,
    poll: bool,
    debounce: Duration,
    /// Timed rescans and root checks, this often.
    pub(super) every: Duration,
    pub(super) watching: Watching,
    /// Which of its files are documents.
    pub(super) filter: Filter,
    /// Timed rescans put off in a row for files still being written.
    pub(super) settling: u32,
}

/// What a root check found.
#[derive(Debug)]
pub(super) enum Check {
    /// The same folder as before (or still none).
    Same,
    /// A folder is at the path again: back after it was gone, or (`replaced`)
    /// another than the one watched. It is watched now.
    Back { replaced: bool },
    /// The folder is gone; nothing is watched until one is back.
    Gone(RootError),
}

impl Folder {
    pub(super) fn new(
        root: PathBuf,
        filter: Filter,
        w: &WatchConfig,
        events: Sender<Input>,
    ) -> Folder {
        Folder {
            root,
            filter,
            settling: 0,
            id: None,
            watch: None,
            events,
            poll: w.poll,
            debounce: Duration::from_millis(w.debounce_ms),
            every: Duration::from_secs(w.rescan_secs.clamp(1, 86_400)),
            watching: Watching::Starting,
        }
    }

    pub(super) fn root(&self) -> &Path {
        &self.root
    }

    /// Watch the root (again): OS events, the poller, or, when neither can
    /// be had, timed rescans; the error says why.
    pub(super) fn attach(&mut self) -> Result<(), String> {
        self.watch = None;
        let events = self.events.clone();
        let started = watcher::start(&self.root, self.poll, self.debounce, self.every, move |b| {
            let _ = events.send(Input::Files(b));
        });
        match started {
            Ok(watch) => {
                self.watch = Some(watch);
                self.watching = if self.poll {
                    Watching::Polling
                } else {
                    Watching::Events
                };
                Ok(())
            }
            Err(e) => {
                let why = format!(
                    "cannot watch {} ({e}); rescanning every {} s instead",
                    self.root.display(),
                    self.every.as_secs()
                );
                self.watching = Watching::Rescanning(why.clone());
                Err(why)
            }
        }
    }

    /// Whether the folder at the root's path is still the one watched; a
    /// folder back or replaced is watched from now on.
    pub(super) fn check(&mut self) -> Check {
        match source::check_root(&self.root) {
            Ok(id) if Some(id) == self.id => Check::Same,
            Ok(id) => {
                let replaced = self.id.is_some();
                self.id = Some(id);
                // A watch that fails falls back to rescans, shown as such.
                let _ = self.attach();
                Check::Back { replaced }
            }
            Err(_) if self.id.is_none() => Check::Same,
            Err(e) => {
                self.watch = None;
                self.id = None;
                self.watching = Watching::RootGone;
                Check::Gone(e)
            }
        }
    }

    /// The watcher lost events: from now on the folder is rescanned every
    /// tick. The reason, the first time only.
    pub(super) fn lost_events(&mut self) -> Option<String> {
        if matches!(self.watching, Watching::Rescanning(_) | Watching::RootGone) {
            return None;
        }
        let why = format!(
            "events may be lost; rescanning every {} s from now on",
            self.every.as_secs()
        );
        self.watching = Watching::Rescanning(why.clone());
        Some(why)
    }

    /// Watch folders made where notify does not add them (see
    /// `Watcher::adopt`).
    pub(super) fn adopt(&mut self, paths: &[PathBuf]) {
        if let Some(w) = &mut self.watch {
            w.adopt(paths);
        }
    }

    /// Whether folders that could not be watched can be now (see
    /// `Watcher::retry_denied`): what they hold is to be read.
    pub(super) fn retry_denied(&mut self) -> bool {
        self.watch
            .as_mut()
            .is_some_and(watcher::Watcher::retry_denied)
    }

    /// Whether ticks rescan the whole folder (no events to be had).
    pub(super) fn rescanning(&self) -> bool {
        matches!(self.watching, Watching::Rescanning(_))
    }

    /// When the watcher next releases files whose writers went quiet.
    pub(super) fn next_release(&self) -> Option<Instant> {
        self.watch.as_ref().and_then(|w| w.next_release())
    }

    /// The files released now.
    pub(super) fn released(&self) -> Vec<PathBuf> {
        self.watch
            .as_ref()
            .map(|w| w.released())
            .unwrap_or_default()
    }

    /// Hold back files just walked that may still be written.
    pub(super) fn hold_recent(&self, files: &[source::FileEntry]) {
        if let Some(w) = &self.watch {
            w.hold_recent(files);
        }
    }

    /// Hold back paths found gone while files are being written (absolute):
    /// one of them may be where a gone one went.
    pub(super) fn hold_gone(&self, paths: &[PathBuf]) {
        if let Some(w) = &self.watch {
            w.hold_gone(paths);
        }
    }

    /// The files held back (being written), relative to the root.
    pub(super) fn held(&self) -> HashSet<String> {
        self.watch.as_ref().map_or_else(HashSet::new, |w| {
            w.held()
                .iter()
                .filter(|p| p.starts_with(&self.root))
                .map(|p| source::rel_path(&self.root, p))
                .collect()
        })
    }

    /// Of [`Folder::held`], the paths held back as gone and still gone.
    pub(super) fn held_gone(&self) -> HashSet<String> {
        self.watch.as_ref().map_or_else(HashSet::new, |w| {
            w.held_gone()
                .iter()
                .filter(|p| p.starts_with(&self.root))
                .map(|p| source::rel_path(&self.root, p))
                .collect()
        })
    }

    /// Whether the folder is gone (nothing to walk).
    pub(super) fn gone(&self) -> bool {
        self.id.is_none()
    }

    /// Watch the folder found at start (its identity already checked).
    pub(super) fn start(&mut self, id: (u64, u64)) -> Result<(), String> {
        self.found(id);
        self.attach()
    }

    /// The folder at the root's path is `id`, to be walked; not watched
    /// (changes come as commands, or from [`Folder::attach`]).
    pub(super) fn found(&mut self, id: (u64, u64)) {
        self.id = Some(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lineage_testing::TempDir;
    use std::sync::mpsc::channel;

    fn config(poll: bool) -> WatchConfig {
        WatchConfig {
            poll,
            rescan_secs: 1,
            ..WatchConfig::default()
        }
    }

    #[test]
    fn a_root_that_goes_and_comes_back_is_watched_again() {
        let tmp = TempDir::new("folder-back");
        let root = tmp.path();
        let (tx, _rx) = channel();
        let mut f = Folder::new(
            root.to_path_buf(),
            Filter::default_patterns(),
            &config(false),
            tx,
        );
        assert!(matches!(f.check(), Check::Back { replaced: false }));
        assert_eq!(f.watching, Watching::Events);
        assert!(matches!(f.check(), Check::Same));
        std::fs::remove_dir_all(root).unwrap();
        assert!(matches!(f.check(), Check::Gone(_)));
        assert_eq!(f.watching, Watching::RootGone);
        assert!(f.gone() && f.held().is_empty());
        // Still gone: nothing new to say.
        assert!(matches!(f.check(), Check::Same));
        std::fs::create_dir_all(root).unwrap();
        assert!(matches!(f.check(), Check::Back { replaced: false }));
        assert_eq!(f.watching, Watching::Events);
    }

    #[test]
    fn another_folder_at_the_path_is_a_replacement() {
        let tmp = TempDir::new("folder-replaced");
        let root = tmp.0.join("root");
        std::fs::create_dir_all(&root).unwrap();
        let moved = root.with_extension("old");
        let (tx, _rx) = channel();
        let mut f = Folder::new(root.clone(), Filter::default_patterns(), &config(true), tx);
        assert!(matches!(f.check(), Check::Back { replaced: false }));
        assert_eq!(f.watching, Watching::Polling);
        std::fs::rename(&root, &moved).unwrap();
        std::fs::create_dir_all(&root).unwrap();
        assert!(matches!(f.check(), Check::Back { replaced: true }));
    }

    #[test]
    fn lost_events_switch_to_rescans_once() {
        let root = TempDir::new("folder-lost");
        let (tx, _rx) = channel();
        let mut f = Folder::new(
            root.0.clone(),
            Filter::default_patterns(),
            &config(false),
            tx,
        );
        f.check();
        assert!(!f.rescanning());
        let why = f.lost_events().unwrap();
        assert!(why.contains("rescanning every 1 s"), "{why}");
        assert!(f.rescanning());
        assert!(f.lost_events().is_none(), "said once");
    }
}
