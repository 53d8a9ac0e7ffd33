//! The full-screen view of `lineage watch` (docs/architecture.md, "Threads"). The
//! only place that knows ratatui and crossterm.
//!
//! Three kinds of threads meet in one channel: the input thread forwards
//! terminal events, the engine publishes updates, and the UI loop blocks on
//! the channel, applies everything pending with [`app::update_all`] (which
//! returns the commands to send the engine) and draws at most ~60 times a
//! second. It never waits on the engine.
#![warn(missing_docs)]

pub(crate) mod activity;
pub(crate) mod app;
pub(crate) mod asked;
pub(crate) mod clusters;
pub(crate) mod copies;
pub(crate) mod diff;
pub(crate) mod documents;
pub(crate) mod editor;
pub(crate) mod effects;
pub(crate) mod export;
pub mod filter;
pub(crate) mod find;
pub(crate) mod glyphs;
mod hangup;
pub(crate) mod help;
pub(crate) mod input;
pub mod keymap;
pub(crate) mod layout;
pub(crate) mod origin;
pub mod panes;
pub(crate) mod paths;
pub(crate) mod remember;
pub(crate) mod scroll;
pub(crate) mod search;
pub(crate) mod shared;
pub(crate) mod stale;
pub(crate) mod terminal;
pub mod theme;
pub(crate) mod tune;
pub(crate) mod versions;

#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use ratatui::crossterm::event;

pub use app::{App, Msg, update, update_all};

use lineage_engine::{Engine, Options};

/// The shortest time between two frames.
const FRAME: Duration = Duration::from_millis(16);
/// How long a rescan with no answer shows as asked: the engine answers
/// every rescan with a snapshot, unless its index is closed (a full disk).
const RESCAN_QUIET: Duration = Duration::from_secs(3);

/// Whether `NO_COLOR` asks for no colours (set and not empty, per no-color.org).
pub(crate) fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

/// Run the TUI on `opts` until the user quits; the terminal is restored
/// however it ends. Returns the engine's fatal error, if it stopped on one,
/// so the caller can print it on the normal screen. `on_stop` registers
/// what a stop signal does (the binary owns the process's signals): here,
/// quit as `q` does.
pub fn run(opts: Options, on_stop: impl FnOnce(Box<dyn FnOnce() + Send>)) -> Result<(), Error> {
    let keymap = keymap::Keymap::from_config(&opts.config.keys)?;
    let theme = theme::Theme::new(opts.config.tui.theme, no_color());
    let mut guard = terminal::enter()?;
    let size = guard.terminal.size().map_err(|e| e.to_string())?;
    let mut app = App::new(
        keymap,
        Box::new(filter::Fuzzy::default()),
        size.width,
        size.height,
    );
    // The configured settings until the engine reports the live ones.
    app.tune.fill(&opts.config.params());
    app.tune.config_file = opts.config.file.clone();
    app.tune.flags = opts.config.flags.clone();
    app.tune.started = opts.config.params();
    app.tune.folder =
        (opts.config.folder.clone()).unwrap_or_else(|| lineage_config::canonical(&opts.root));
    let h = app.docs_height();
    app.docs.set_basis(opts.config.basis, h);

    let dir = opts.index_dir.clone();
    remember::load(&dir, &mut app);
    app.editor = editor::from_env();
    app.start_dir = std::env::current_dir().unwrap_or_else(|_| ".".into());

    let (tx, rx) = mpsc::channel::<Msg>();
    let stop = Arc::new(AtomicBool::new(false));
    let pause = Pause::default();
    let input = {
        let (tx, stop, pause) = (tx.clone(), stop.clone(), pause.clone());
        std::thread::Builder::new()
            .name("lineage-input".into())
            .spawn(move || read_input(tx, stop, pause))
            .map_err(|e| e.to_string())?
    };
    let on_signal = tx.clone();
    on_stop(Box::new(move || {
        let _ = on_signal.send(Msg::Stop);
    }));
    let on_hangup = tx.clone();
    hangup::on_hangup(move || {
        let _ = on_hangup.send(Msg::Stop);
    });
    let engine = Engine::start(opts, move |u| {
        let _ = tx.send(Msg::Engine(u));
    });

    let result = ui_loop(&mut app, &theme, &mut guard.terminal, &rx, &engine, &pause);
    stop.store(true, Ordering::SeqCst);
    remember::save(&dir, &app);
    // Leave the full screen first: stopping the engine saves the table.
    let hung_up = hangup::happened();
    if hung_up {
        // Nothing to restore on a terminal that is gone (the guard's
        // writes would only fail, and ratatui would say so on stderr).
        terminal::restore();
        std::mem::forget(guard);
    } else {
        drop(guard);
    }
    drop(engine);
    // After a hang-up the input thread may never return (see `hangup`);
    // the process's exit ends it.
    if !hung_up {
        let _ = input.join();
    }
    result?;
    match app.fatal {
        Some(e) => Err(Error::Engine(e)),
        None => Ok(()),
    }
}

/// Why the view ended other than by a person's `q`.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The terminal could not be set up or drawn on, a `[keys]` entry is
    /// refused, or a thread could not start.
    #[error("{0}")]
    View(String),
    /// The engine stopped on a failure (shown in the view, then returned).
    #[error(transparent)]
    Engine(Arc<lineage_engine::Failure>),
}

impl From<String> for Error {
    fn from(e: String) -> Error {
        Error::View(e)
    }
}

fn ui_loop(
    app: &mut App,
    theme: &theme::Theme,
    terminal: &mut terminal::Term,
    rx: &mpsc::Receiver<Msg>,
    engine: &Engine,
    pause: &Pause,
) -> Result<(), String> {
    let mut dirty = true;
    let mut last_draw = Instant::now() - FRAME;
    loop {
        if dirty && last_draw.elapsed() >= FRAME {
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
            app.today = now.ok().map(|d| (d.as_secs() / 86_400) as i64);
            terminal
                .draw(|f| panes::draw(app, theme, f))
                .map_err(|e| format!("cannot draw: {e}"))?;
            last_draw = Instant::now();
            dirty = false;
        }
        // Wait for the next message, or until the next frame is due.
        let first = if dirty {
            match rx.recv_timeout(FRAME.saturating_sub(last_draw.elapsed())) {
                Ok(m) => Some(m),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => return Ok(()),
            }
        } else if app.rescan.is_some() {
            match rx.recv_timeout(RESCAN_QUIET) {
                Ok(m) => Some(m),
                Err(RecvTimeoutError::Timeout) => Some(Msg::Tick),
                Err(RecvTimeoutError::Disconnected) => return Ok(()),
            }
        } else {
            match rx.recv() {
                Ok(m) => Some(m),
                Err(_) => return Ok(()),
            }
        };
        let batch: Vec<Msg> = first
            .into_iter()
            .chain(std::iter::from_fn(|| rx.try_recv().ok()))
            .collect();
        dirty |= !batch.is_empty();
        for c in update_all(app, batch) {
            engine.send(c);
        }
        for e in std::mem::take(&mut app.effects) {
            effect(app, terminal, pause, e)?;
        }
        if app.quit {
            return Ok(());
        }
        if !terminal::active() {
            return Err("stopped after a panic (its message is above)".into());
        }
    }
}

/// Do what a key asked of the terminal.
fn effect(
    app: &mut App,
    terminal: &mut terminal::Term,
    pause: &Pause,
    e: effects::Effect,
) -> Result<(), String> {
    use std::io::Write;
    match e {
        effects::Effect::Save(p, keys) => {
            let r = match &app.tune.config_file {
                Some(file) => lineage_config::save_params(file, &app.tune.folder, &p, &keys)
                    .map_err(|e| e.to_string()),
                None => Err("no config folder (HOME is not set); use --config FILE".into()),
            };
            update(app, Msg::Saved(r));
            Ok(())
        }
        effects::Effect::SaveBasis(basis) => {
            let said = match basis {
                lineage_config::Basis::Predecessor => "each page's predecessor",
                lineage_config::Basis::Folder => "previous folder",
                lineage_config::Basis::Release => "last release",
            };
            let saved = match &app.tune.config_file {
                Some(file) => lineage_config::save_basis(file, &app.tune.folder, basis)
                    .map(|f| format!("saved in {}", paths::shown_path(&f)))
                    .unwrap_or_else(|e| format!("not saved: {e}")),
                None => "not saved: no config folder (HOME is not set)".into(),
            };
            app.message = Some(format!("basis: {said}, {saved}"));
            Ok(())
        }
        effects::Effect::Copy(bytes) => {
            let out = terminal.backend_mut();
            let seq = ratatui::crossterm::style::Print(effects::osc52(&bytes));
            ratatui::crossterm::queue!(out, seq)
                .and_then(|()| out.flush())
                .map_err(|e| format!("cannot write to the terminal: {e}"))
        }
        effects::Effect::Export {
            path,
            root,
            bytes,
            rows,
        } => {
            app.message = Some(match export::write(&path, &root, &bytes) {
                Ok(()) => format!(
                    "exported {rows} {} to {}",
                    if rows == 1 { "row" } else { "rows" },
                    paths::shown_path(&path)
                ),
                Err(e) => e,
            });
            Ok(())
        }
        effects::Effect::Edit(call) => {
            // The editor reads the keys now: the input thread must not.
            pause.hold();
            let ran = terminal::suspend().and_then(|()| {
                std::process::Command::new(&call.program)
                    .args(&call.args)
                    .status()
            });
            let back = terminal::resume(terminal);
            pause.release();
            back.map_err(|e| format!("cannot restore the terminal: {e}"))?;
            match ran {
                Ok(s) if s.success() => {}
                Ok(s) => app.message = Some(format!("{} ended with {s}", call.program)),
                Err(e) => app.message = Some(format!("cannot run {}: {e}", call.program)),
            }
            Ok(())
        }
    }
}

/// Tells the input thread to stop reading the terminal while another
/// program has it, and hears that it has.
#[derive(Clone, Default)]
struct Pause {
    asked: Arc<AtomicBool>,
    idle: Arc<AtomicBool>,
}

impl Pause {
    /// Ask, and wait (a poll's length at most) until the input thread rests.
    fn hold(&self) {
        self.idle.store(false, Ordering::SeqCst);
        self.asked.store(true, Ordering::SeqCst);
        let end = Instant::now() + Duration::from_millis(500);
        while !self.idle.load(Ordering::SeqCst) && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn release(&self) {
        self.asked.store(false, Ordering::SeqCst);
    }

    /// The input thread: whether to rest now.
    fn resting(&self) -> bool {
        let asked = self.asked.load(Ordering::SeqCst);
        self.idle.store(asked, Ordering::SeqCst);
        asked
    }
}

/// Forward terminal events until told to stop (polling, so it notices), or
/// until a panic restored the terminal (then wake the UI loop to stop).
fn read_input(tx: mpsc::Sender<Msg>, stop: Arc<AtomicBool>, pause: Pause) {
    while !stop.load(Ordering::SeqCst) {
        if pause.resting() {
            std::thread::sleep(Duration::from_millis(10));
            continue;
        }
        if !terminal::active() {
            let _ = tx.send(Msg::Tick);
            return;
        }
        match event::poll(Duration::from_millis(100)) {
            Ok(true) => match event::read() {
                Ok(e) => {
                    if tx.send(Msg::Input(e)).is_err() {
                        return;
                    }
                }
                Err(_) => return,
            },
            Ok(false) => {}
            Err(_) => return,
        }
    }
}
