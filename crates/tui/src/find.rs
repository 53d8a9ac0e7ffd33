//! Searching every live page's text from any pane: the words are typed, the
//! engine searches in a thread of its own, and the pages found are listed
//! over the pane as they come, each with the line of its first match; Enter
//! opens one in Origin at that match (its other matches a step away). The
//! last list stays: asked again with the same words, it comes back as it was.

use std::sync::Arc;

use super::app::{App, Tab};
use super::keymap::Action;
use super::scroll::{Cursor, Move};
use lineage_engine::{Command, SearchView};

/// The last search, and whether its list is open.
pub(crate) struct FindState {
    pub generation: u64,
    pub query: String,
    /// None until the engine's first answer.
    pub view: Option<Arc<SearchView>>,
    /// Why no answer is coming (the index is closed).
    pub failed: Option<String>,
    pub cursor: Cursor,
    pub open: bool,
}

/// The typed words: search for them, or open the last list again when they
/// are its words.
pub(crate) fn ask(app: &mut App, query: String) -> Option<Command> {
    let query = query.trim().to_string();
    if query.is_empty() {
        return None;
    }
    if let Some(f) = app.find.as_mut().filter(|f| f.query == query) {
        f.open = true;
        return None;
    }
    let generation = app.find.as_ref().map_or(0, |f| f.generation) + 1;
    app.find = Some(FindState {
        generation,
        query: query.clone(),
        view: None,
        failed: None,
        cursor: Cursor::default(),
        open: true,
    });
    Some(Command::Search { generation, query })
}

/// Take an answer, if it is to the search asked last.
pub(crate) fn receive(app: &mut App, view: Arc<SearchView>) {
    if let Some(f) = app
        .find
        .as_mut()
        .filter(|f| f.generation == view.generation)
    {
        f.view = Some(view);
    }
}

/// Whether the list is on screen.
pub(crate) fn is_open(app: &App) -> bool {
    app.find.as_ref().is_some_and(|f| f.open)
}

/// A key while the list is open.
pub(crate) fn key(app: &mut App, action: Action, out: &mut Vec<Command>) {
    let h = app.list_rows();
    let Some(state) = app.find.as_mut() else {
        return;
    };
    let n = state.view.as_ref().map_or(0, |v| v.hits.len());
    if let Some(m) = Move::of(action) {
        return state.cursor.apply(m, n, h);
    }
    match action {
        Action::Select => {
            let chosen = (state.view.as_ref())
                .and_then(|v| v.hits.get(state.cursor.selected))
                .map(|hit| (hit.id, hit.first.start));
            if let Some((id, at)) = chosen {
                state.open = false;
                let query = state.query.clone();
                out.push(app.origin.open_found(id, &query, at));
                app.tab = Tab::Origin;
            }
        }
        Action::Back | Action::Find => {
            state.open = false;
            // A search still going is stopped (its list is not kept whole).
            if state.view.as_ref().is_none_or(|v| !v.done) {
                out.push(Command::Search {
                    generation: state.generation,
                    query: String::new(),
                });
                app.find = None;
            }
        }
        Action::Quit => app.quit = true,
        _ => {}
    }
}
