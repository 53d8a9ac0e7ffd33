//! Which pages carry the text of the page shown in Origin, whoever had it
//! first (`lineage shared`): the live pages of other paths sharing passages
//! with it, most of it first, listed over the pane with the selected page's
//! shared passages under the list; Enter opens one at its first shared
//! passage (back returns to the page).

use std::sync::Arc;

use super::app::App;
use super::keymap::Action;
use super::scroll::{Cursor, Move};
use lineage_engine::{Command, SharedView};

/// The list, open.
pub(crate) struct SharedState {
    /// The version asked about; answers about another are stale.
    pub(crate) requested: u32,
    /// None until the engine answers.
    pub view: Option<Arc<SharedView>>,
    /// Why no answer is coming (the index is closed).
    pub failed: Option<String>,
    pub cursor: Cursor,
}

/// Rows of the list when `rows` fit in the popup: the rest shows the
/// selected page's passages (a line naming them, then one per passage).
/// The keys and the drawing count by it alike.
pub(crate) fn list_height(rows: usize) -> usize {
    rows - passage_lines(rows)
}

/// Lines under the list for the selected page's passages: a fourth of
/// the popup's rows, at least two (the line naming them and a passage).
pub(crate) fn passage_lines(rows: usize) -> usize {
    if rows < 4 { 0 } else { (rows / 4).max(2) }
}

/// Ask which pages carry the text of the page shown, and open the list.
pub(crate) fn open(app: &mut App) -> Option<Command> {
    let id = app.origin.id()?;
    app.shared = Some(SharedState {
        requested: id,
        view: None,
        failed: None,
        cursor: Cursor::default(),
    });
    Some(Command::Shared { id })
}

/// Take an answer, if it is the one asked for.
pub(crate) fn receive(app: &mut App, view: Arc<SharedView>) {
    if let Some(s) = app.shared.as_mut().filter(|s| s.requested == view.id) {
        s.cursor = Cursor::default();
        s.view = Some(view);
    }
}

/// A key while the list is open.
pub(crate) fn key(app: &mut App, action: Action, out: &mut Vec<Command>) {
    let h = list_height(app.list_rows());
    let Some(state) = app.shared.as_mut() else {
        return;
    };
    let n = state.view.as_ref().map_or(0, |v| v.shares.len());
    if let Some(m) = Move::of(action) {
        return state.cursor.apply(m, n, h);
    }
    match action {
        Action::Select => {
            let chosen = (state.view.as_ref())
                .and_then(|v| v.shares.get(state.cursor.selected))
                .and_then(|s| Some((s.id, s.passages.first()?.there)));
            if let Some((id, (start, end))) = chosen {
                app.shared = None;
                out.push(app.origin.open_at(id, start..end));
            }
        }
        Action::Back | Action::Shared => app.shared = None,
        Action::Quit => app.quit = true,
        _ => {}
    }
}
