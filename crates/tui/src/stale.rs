//! The copies that went stale (`lineage stale`): passages a page copied
//! from another page that has changed them since, and fixes made in one
//! copy only. Listed over the pane, one row per passage, most stale pages
//! first: from Origin of the page shown, elsewhere of every page. Under the
//! list the selected passage's words on both sides; Enter opens the page
//! at the passage (back returns).

use std::sync::Arc;

use super::app::{App, Tab};
use super::asked::Asked;
use super::keymap::Action;
use super::scroll::Move;
use lineage_engine::{Command, StaleView};

/// The list, open: what was asked is the page shown in Origin, or every
/// page (None).
pub(crate) type StaleState = Asked<Option<u32>, StaleView>;

/// Rows of the list when `rows` fit in the popup: the rest shows the
/// selected passage's words (a line naming it, then the two sides of each
/// difference). The keys and the drawing count by it alike.
pub(crate) fn list_height(rows: usize) -> usize {
    rows - words_lines(rows)
}

/// Lines under the list for the selected passage: a third of the popup's
/// rows, at least three (the line naming it and the two sides).
pub(crate) fn words_lines(rows: usize) -> usize {
    if rows < 6 { 0 } else { (rows / 3).max(3) }
}

/// Ask which copies went stale (of the page shown in Origin, else of
/// every page), and open the list.
pub(crate) fn open(app: &mut App) -> Option<Command> {
    let id = match app.tab {
        Tab::Origin => Some(app.origin.id()?),
        _ => None,
    };
    app.stale = Some(StaleState::new(id));
    Some(Command::Stale { id })
}

/// Take an answer, if it is the one asked for.
pub(crate) fn receive(app: &mut App, view: Arc<StaleView>) {
    if let Some(s) = app.stale.as_mut() {
        let to = view.only;
        s.receive(&to, view);
    }
}

/// A key while the list is open.
pub(crate) fn key(app: &mut App, action: Action, out: &mut Vec<Command>) {
    let h = list_height(app.list_rows());
    let Some(state) = app.stale.as_mut() else {
        return;
    };
    let n = state.view.as_ref().map_or(0, |v| v.passages.len());
    if let Some(m) = Move::of(action) {
        return state.cursor.apply(m, n, h);
    }
    match action {
        Action::Select => {
            let chosen = (state.view.as_ref())
                .and_then(|v| v.passages.get(state.cursor.selected))
                .map(|p| (p.id, p.tokens.clone()));
            if let Some((id, tokens)) = chosen {
                app.stale = None;
                out.push(app.origin.open_at(id, tokens));
                app.tab = Tab::Origin;
            }
        }
        Action::Back | Action::Stale => app.stale = None,
        Action::Quit => app.quit = true,
        _ => {}
    }
}
