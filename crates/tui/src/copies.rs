//! Who copies the page shown in Origin: the live pages of other paths that
//! took passages from it, listed over the pane, newest first; Enter opens
//! one at its first such passage (back returns to the page).

use std::sync::Arc;

use super::app::App;
use super::keymap::Action;
use super::scroll::{Cursor, Move};
use lineage_engine::{Command, CopiesView};

/// The list, open.
pub(crate) struct CopiesState {
    /// The version asked about; answers about another are stale.
    pub(crate) requested: u32,
    /// None until the engine answers.
    pub view: Option<Arc<CopiesView>>,
    /// Why no answer is coming (the index is closed).
    pub failed: Option<String>,
    pub cursor: Cursor,
}

/// Ask who copies the page shown, and open the list.
pub(crate) fn open(app: &mut App) -> Option<Command> {
    let id = app.origin.id()?;
    app.copies = Some(CopiesState {
        requested: id,
        view: None,
        failed: None,
        cursor: Cursor::default(),
    });
    Some(Command::Copies { id })
}

/// Take an answer, if it is the one asked for.
pub(crate) fn receive(app: &mut App, view: Arc<CopiesView>) {
    if let Some(c) = app.copies.as_mut().filter(|c| c.requested == view.id) {
        c.cursor = Cursor::default();
        c.view = Some(view);
    }
}

/// A key while the list is open.
pub(crate) fn key(app: &mut App, action: Action, out: &mut Vec<Command>) {
    let h = app.list_rows();
    let Some(state) = app.copies.as_mut() else {
        return;
    };
    let n = state.view.as_ref().map_or(0, |v| v.copies.len());
    if let Some(m) = Move::of(action) {
        return state.cursor.apply(m, n, h);
    }
    match action {
        Action::Select => {
            let chosen = (state.view.as_ref())
                .and_then(|v| v.copies.get(state.cursor.selected))
                .and_then(|copy| Some((copy.id, *copy.passages.first()?)));
            if let Some((id, p)) = chosen {
                app.copies = None;
                out.push(app.origin.open_at(id, p.start..p.end));
            }
        }
        Action::Back | Action::Copies => app.copies = None,
        Action::Quit => app.quit = true,
        _ => {}
    }
}
