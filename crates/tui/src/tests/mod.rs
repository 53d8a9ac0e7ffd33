//! The TUI driven without a terminal: update-level tests inject keys, clicks
//! and engine updates and check the state and the commands; render tests
//! snapshot every pane (text and styles) on a test backend.

pub(crate) mod fixture;
mod render;
mod update;

use std::sync::Arc;

use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};

use super::app::{App, Msg, update};
use super::filter::Fuzzy;
use super::keymap::Keymap;
use lineage_engine::{Command, Update};

/// An app of `w`×`h` that has had the fixture's snapshot.
pub(crate) fn app(w: u16, h: u16) -> App {
    with_keys(Keymap::default(), w, h)
}

fn with_keys(keymap: Keymap, w: u16, h: u16) -> App {
    let mut app = App::new(keymap, Box::new(Fuzzy::default()), w, h);
    let asked = engine(&mut app, Update::Snapshot(Arc::new(fixture::snapshot())));
    assert!(asked.contains(&Command::Shares {
        basis: lineage_config::Basis::Predecessor
    }));
    engine(&mut app, Update::Shares(Arc::new(fixture::shares())));
    app
}

fn engine(app: &mut App, u: Update) -> Vec<Command> {
    update(app, Msg::Engine(u))
}

fn press_with(app: &mut App, code: KeyCode, mods: KeyModifiers) -> Vec<Command> {
    update(app, Msg::Input(Event::Key(KeyEvent::new(code, mods))))
}

fn press(app: &mut App, code: KeyCode) -> Vec<Command> {
    press_with(app, code, KeyModifiers::NONE)
}

/// Type characters (shift for capitals, as terminals report them).
fn keys(app: &mut App, s: &str) -> Vec<Command> {
    let mut out = Vec::new();
    for c in s.chars() {
        let mods = if c.is_ascii_uppercase() {
            KeyModifiers::SHIFT
        } else {
            KeyModifiers::NONE
        };
        out.extend(press_with(app, KeyCode::Char(c), mods));
    }
    out
}
