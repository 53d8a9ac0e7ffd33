//! Entering and leaving the full-screen terminal. The terminal is restored on
//! every way out: a normal return, an error (the guard's drop), a panic on
//! any thread (the hook, before the previous hook prints the message on the
//! normal screen; the UI loop then stops, see [`active`]).

use std::io::{self, Stdout};
use std::sync::atomic::{AtomicBool, Ordering};

use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};

/// Whether the terminal is in full-screen mode now (so restoring twice,
/// from the hook and the guard, does nothing the second time).
static ACTIVE: AtomicBool = AtomicBool::new(false);

pub(crate) type Term = Terminal<CrosstermBackend<Stdout>>;

/// Restores the terminal when dropped.
pub(crate) struct Guard {
    pub terminal: Term,
}

impl Drop for Guard {
    fn drop(&mut self) {
        restore();
    }
}

/// Raw mode, the alternate screen, mouse capture, bracketed paste (a paste
/// arrives as one event, not as keys: its line ends do not press enter); and
/// the panic hook.
pub(crate) fn enter() -> Result<Guard, String> {
    install_panic_hook();
    let setup = || -> io::Result<Term> {
        enable_raw_mode()?;
        ACTIVE.store(true, Ordering::SeqCst);
        screen_on()?;
        let mut t = Terminal::new(CrosstermBackend::new(io::stdout()))?;
        t.hide_cursor()?;
        t.clear()?;
        Ok(t)
    };
    match setup() {
        Ok(terminal) => Ok(Guard { terminal }),
        Err(e) => {
            restore();
            Err(format!("cannot set up the terminal: {e}"))
        }
    }
}

/// Whether the terminal is still in full-screen mode: false once a panic on
/// any thread restored it, after which the UI must stop drawing.
pub(crate) fn active() -> bool {
    ACTIVE.load(Ordering::SeqCst)
}

/// Leave full-screen mode; errors are ignored, as there is nothing better
/// to do on the way out.
pub(crate) fn restore() {
    if ACTIVE.swap(false, Ordering::SeqCst) {
        let _ = screen_off();
        let _ = disable_raw_mode();
    }
}

/// Hand the terminal to another program (an editor): the normal screen,
/// cooked mode, no mouse capture nor bracketed paste, the cursor shown. Full-screen mode still
/// counts as active: [`resume`] comes back to it.
pub(crate) fn suspend() -> io::Result<()> {
    screen_off()?;
    disable_raw_mode()
}

/// Back to full-screen mode after [`suspend`], the whole screen to redraw.
pub(crate) fn resume(t: &mut Term) -> io::Result<()> {
    enable_raw_mode()?;
    screen_on()?;
    t.hide_cursor()?;
    t.clear()
}

/// The alternate screen, mouse capture and bracketed paste (raw mode is
/// the caller's): what [`enter`] and [`resume`] set.
fn screen_on() -> io::Result<()> {
    execute!(
        io::stdout(),
        EnterAlternateScreen,
        EnableMouseCapture,
        EnableBracketedPaste
    )
}

/// [`screen_on`] undone, the cursor shown: what [`restore`] and
/// [`suspend`] set.
fn screen_off() -> io::Result<()> {
    execute!(
        io::stdout(),
        DisableBracketedPaste,
        DisableMouseCapture,
        LeaveAlternateScreen,
        ratatui::crossterm::cursor::Show
    )
}

fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
    });
}
