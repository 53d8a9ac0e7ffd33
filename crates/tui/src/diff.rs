//! What the page shown in Origin changed since its predecessor (`lineage
//! diff`): its passages removed, new and moved, listed over the pane, the
//! selected one's words under the list; enter opens it where it stands (a
//! removed passage in the predecessor; back returns).

use std::sync::Arc;

use super::app::App;
use super::asked::Asked;
use super::keymap::Action;
use super::scroll::Move;
use lineage_engine::{Command, DiffKind, DiffView};

/// The list, open: what was asked is the version shown.
pub(crate) type DiffState = Asked<u32, DiffView>;

/// Rows of the list when `rows` fit in the popup: the rest shows the
/// selected passage's words (a third, at least two lines).
pub(crate) fn list_height(rows: usize) -> usize {
    rows - words_lines(rows)
}

pub(crate) fn words_lines(rows: usize) -> usize {
    if rows < 5 { 0 } else { (rows / 3).max(2) }
}

/// Ask what the page shown changed, and open the list.
pub(crate) fn open(app: &mut App) -> Option<Command> {
    let id = app.origin.id()?;
    app.diff = Some(DiffState::new(id));
    let basis = app.docs.shares.basis;
    Some(Command::Diff { id, basis })
}

/// Take an answer, if it is the one asked for.
pub(crate) fn receive(app: &mut App, view: Arc<DiffView>) {
    if let Some(s) = app.diff.as_mut() {
        let to = view.id;
        s.receive(&to, view);
    }
}

/// A key while the list is open.
pub(crate) fn key(app: &mut App, action: Action, out: &mut Vec<Command>) {
    let h = list_height(app.list_rows());
    let Some(state) = app.diff.as_mut() else {
        return;
    };
    let n = state.view.as_ref().map_or(0, |v| v.passages.len());
    if let Some(m) = Move::of(action) {
        return state.cursor.apply(m, n, h);
    }
    match action {
        Action::Select => {
            let chosen = (state.view.as_ref()).and_then(|v| {
                let p = v.passages.get(state.cursor.selected)?;
                let id = match p.kind {
                    DiffKind::Removed => v.predecessor.as_ref()?.0,
                    DiffKind::New | DiffKind::Moved => v.id,
                };
                Some((id, p.tokens.clone()))
            });
            if let Some((id, tokens)) = chosen {
                app.diff = None;
                out.push(app.origin.open_at(id, tokens));
            }
        }
        Action::Back | Action::Diff => app.diff = None,
        Action::Quit => app.quit = true,
        _ => {}
    }
}
