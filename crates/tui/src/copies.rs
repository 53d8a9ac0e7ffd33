//! Who copies the page shown in Origin: the live pages of other paths that
//! took passages from it, listed over the pane by the share of each taken
//! from the page (the sort key switches to newest first and back); Enter
//! opens one at its first such passage (back returns to the page).

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
    /// Newest first instead of by share (the sort key switches).
    pub(crate) newest: bool,
}

/// `view`'s copies newest first (as the engine sends them: the latest
/// version ids first), or by share, ties newest first.
fn arrange(view: &mut CopiesView, newest: bool) {
    view.copies.sort_by_key(|c| std::cmp::Reverse(c.id));
    if !newest {
        lineage_engine::query::by_share(&mut view.copies);
    }
}

/// Ask who copies the page shown, and open the list.
pub(crate) fn open(app: &mut App) -> Option<Command> {
    let id = app.origin.id()?;
    app.copies = Some(CopiesState {
        requested: id,
        view: None,
        failed: None,
        cursor: Cursor::default(),
        newest: false,
    });
    Some(Command::Copies { id })
}

/// Take an answer, if it is the one asked for.
pub(crate) fn receive(app: &mut App, view: Arc<CopiesView>) {
    if let Some(c) = app.copies.as_mut().filter(|c| c.requested == view.id) {
        let mut view = Arc::unwrap_or_clone(view);
        arrange(&mut view, c.newest);
        c.cursor = Cursor::default();
        c.view = Some(Arc::new(view));
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
        // By share ↔ newest first, the selected page kept selected.
        Action::Sort => {
            state.newest = !state.newest;
            if let Some(v) = state.view.as_mut() {
                let chosen = v.copies.get(state.cursor.selected).map(|c| c.id);
                let v = Arc::make_mut(v);
                arrange(v, state.newest);
                let at = v.copies.iter().position(|c| Some(c.id) == chosen);
                state.cursor.apply(Move::To(at.unwrap_or(0)), n, h);
            }
        }
        Action::Back | Action::Copies => app.copies = None,
        Action::Quit => app.quit = true,
        _ => {}
    }
}
