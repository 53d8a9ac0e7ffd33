//! The list of the shown page's versions, over the Origin pane.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::{count, overlay};
use crate::app::App;
use crate::keymap::Action;
use crate::theme::Theme;
use lineage_engine::VersionStatus;

pub(crate) fn render(app: &App, theme: &Theme, area: Rect, f: &mut Frame) {
    let (Some(c), Some(view)) = (app.versions, &app.origin.view) else {
        return;
    };
    let popup = crate::help::popup(area);
    let height = crate::help::list_rows(popup);
    let latest = view.versions.last().map(|v| v.id);
    let rows = c.window(view.versions.len(), height).map(|i| {
        let v = &view.versions[i];
        let mut note = Vec::new();
        if v.id == view.id {
            note.push("shown");
        }
        if Some(v.id) == latest {
            note.push(match view.status {
                VersionStatus::Deleted => "deleted",
                _ => "current",
            });
        }
        if !v.text_kept {
            note.push("text not kept");
        }
        let line = Line::from(vec![
            Span::styled(format!(" v{:<4}", v.version), theme.key),
            Span::raw(format!(
                "{:>9} tokens {:>6.1}% new  {}  ",
                count(u64::from(v.tokens)),
                v.fresh_percent,
                super::events::date_time(v.mtime_ns)
            )),
            Span::styled(note.join(", "), theme.muted),
        ]);
        if i == c.selected {
            line.style(theme.selected)
        } else {
            line
        }
    });
    let k = |a| app.keymap.first(a);
    let mut lines: Vec<Line> = rows.collect();
    lines.push(Line::default());
    if view.exact {
        // The versions' figures are the recorded estimates; the exact result
        // is computed for the page shown only.
        lines.push(Line::styled(
            " % new: the live settings' estimate (the exact result is the page shown's)",
            theme.muted,
        ));
    }
    lines.push(Line::styled(
        format!(
            " {} open · {} compare with v{} · {} close",
            k(Action::Select),
            k(Action::CompareVersion),
            view.version,
            k(Action::Back)
        ),
        theme.muted,
    ));
    let title = format!(
        " Versions of {} ({}) ",
        crate::paths::shown(&view.path),
        view.versions.len()
    );
    overlay(f, theme, popup, title, lines);
}
