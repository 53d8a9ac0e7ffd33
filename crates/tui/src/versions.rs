//! The versions of the page shown in Origin, listed over it: open an
//! earlier version (its text is kept by the index), or compare one with the
//! version shown.

use super::app::{App, Tab};
use super::keymap::Action;
use super::scroll::{Cursor, Move};
use lineage_engine::Command;

/// Open the list on the version shown.
pub(crate) fn open(app: &mut App) {
    let Some(view) = &app.origin.view else { return };
    let at = view.versions.iter().position(|v| v.id == view.id);
    let mut c = Cursor::default();
    c.apply(
        Move::To(at.unwrap_or(0)),
        view.versions.len(),
        app.list_rows(),
    );
    app.versions = Some(c);
}

/// A key while the list is open.
pub(crate) fn key(app: &mut App, action: Action, out: &mut Vec<Command>) {
    let (Some(mut c), Some(view)) = (app.versions, app.origin.view.clone()) else {
        app.versions = None;
        return;
    };
    let n = view.versions.len();
    let h = app.list_rows();
    let chosen = view.versions.get(c.selected).map(|v| v.id);
    if let Some(m) = Move::of(action) {
        c.apply(m, n, h);
        app.versions = Some(c);
        return;
    }
    match action {
        Action::Select => {
            app.versions = None;
            if let Some(id) = chosen.filter(|&id| id != view.id) {
                app.origin
                    .back
                    .push((view.id, app.origin.scroll, app.origin.block));
                out.push(app.origin.open(id));
            }
            return;
        }
        Action::CompareVersion => {
            app.versions = None;
            if let Some(id) = chosen.filter(|&id| id != view.id) {
                // Older on the left.
                let (a, b) = (id.min(view.id), id.max(view.id));
                out.push(app.clusters.compare(a, b));
                app.clusters.return_to = Some(Tab::Origin);
                app.clusters.walk_changes = true;
                app.tab = Tab::Clusters;
            }
            return;
        }
        Action::Back | Action::Versions => {
            app.versions = None;
            return;
        }
        Action::Quit => app.quit = true,
        _ => {}
    }
    app.versions = Some(c);
}
