//! The list of pages that copy the page shown, over the Origin pane: by
//! share, or newest first.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::{count, overlay, padded};
use crate::app::App;
use crate::keymap::Action;
use crate::paths;
use crate::theme::Theme;

pub(crate) fn render(app: &App, theme: &Theme, area: Rect, f: &mut Frame) {
    let Some(state) = &app.copies else {
        return;
    };
    let popup = crate::help::list_popup(area);
    let height = crate::help::list_rows(popup);
    let inner = popup.width.saturating_sub(2) as usize;
    let k = |a| app.keymap.first(a);
    let (title, mut lines) = match &state.view {
        None => crate::help::waiting(
            "Copies",
            state.failed.as_deref(),
            "finding the pages",
            "reading every page's origins",
            inner,
            theme,
        ),
        Some(v) => {
            let order = if state.newest {
                "newest first"
            } else {
                "by share"
            };
            let after = match v.copies.len() {
                1 => vec![": 1 page ".to_string()],
                n => vec![format!(": {n} pages, {order} ")],
            };
            let version = format!(" v{}", v.version);
            let title = super::titled(" Copies of ", &v.path, &version, &after, inner);
            let window = state.cursor.window(v.copies.len(), height);
            let shared = paths::Shared::of(window.clone().map(|i| &*v.copies[i].path));
            // The folders that tell a row from the others shown stay
            // (`v2/insta…` and `v3/insta…`, not `insta…` twice).
            let names: Vec<&str> = window.clone().map(|i| &*v.copies[i].path).collect();
            let tails = paths::tails(&names);
            let first = window.start;
            let rows = window.map(|i| {
                let c = &v.copies[i];
                let passages = c.passages.len();
                let figures = format!(
                    "  {} of {} tokens, {passages} passage{}",
                    count(u64::from(c.copied())),
                    count(u64::from(c.tokens)),
                    if passages == 1 { "" } else { "s" }
                );
                let version = format!(" v{}", c.version);
                let room = inner.saturating_sub(10 + figures.chars().count());
                let line = Line::from(vec![
                    Span::styled(format!(" {:5.1} %  ", c.percent()), theme.key),
                    Span::raw(padded(
                        paths::fit_among(&c.path, &version, room, tails[i - first], &shared),
                        room,
                    )),
                    Span::styled(figures, theme.muted),
                ]);
                if i == state.cursor.selected {
                    line.style(theme.selected)
                } else {
                    line
                }
            });
            let mut lines: Vec<Line> = rows.collect();
            if lines.is_empty() {
                lines.push(Line::styled(
                    " No other live page copies from it.",
                    theme.muted,
                ));
            }
            (title, lines)
        }
    };
    lines.push(Line::default());
    let other = if state.newest {
        "by share"
    } else {
        "newest first"
    };
    let (select, sort, back) = (k(Action::Select), k(Action::Sort), k(Action::Back));
    let keys = [
        format!(" {select} open at its first passage from here · {sort} {other} · {back} close"),
        format!(" {select} open · {sort} {other} · {back} close"),
    ];
    lines.push(Line::styled(
        super::first_fitting(&keys, inner),
        theme.muted,
    ));
    overlay(f, theme, popup, title, lines);
}
