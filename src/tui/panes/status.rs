//! The frame around the panes: status bar, tab bar, key hints, help overlay.

use ratatui::Frame;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use super::{block, count, fit_left};
use crate::engine::Watching;
use crate::tui::app::{App, Input, TABS, Tab};
use crate::tui::keymap::{Action, Keymap};
use crate::tui::theme::Theme;

/// Root, documents, versions, indexing, table, live settings, watch mode.
pub fn render(app: &App, theme: &Theme, area: Rect, f: &mut Frame) {
    let sep = || Span::styled(" │ ", theme.muted);
    let mut spans = vec![Span::styled(" lineage", theme.title)];
    if let Some(e) = &app.fatal {
        spans.push(sep());
        spans.push(Span::styled(format!("stopped: {e}"), theme.error));
    }
    match &app.snapshot {
        None if app.fatal.is_none() => {
            spans.push(sep());
            spans.push(Span::styled("starting…", theme.muted));
        }
        None => {}
        Some(s) => {
            let p = &s.params;
            let root = s.root.display().to_string();
            spans.push(sep());
            spans.push(Span::raw(fit_left(&root, (area.width / 4) as usize)));
            spans.push(sep());
            spans.push(Span::raw(format!(
                "{} docs",
                count(s.documents.len() as u64)
            )));
            spans.push(Span::styled(
                format!(" {} versions", count(s.versions)),
                theme.muted,
            ));
            if let Some(pr) = &s.progress {
                spans.push(sep());
                let pct = pr.done as f64 * 100.0 / pr.total.max(1) as f64;
                spans.push(Span::styled(
                    format!(
                        "{} {}/{} ({pct:.0}%)",
                        pr.what,
                        count(pr.done),
                        count(pr.total)
                    ),
                    theme.warning,
                ));
            }
            spans.push(sep());
            spans.push(Span::raw(match s.table.capacity {
                Some(c) => format!(
                    "table {:.1}% of {}",
                    s.table.occupied as f64 * 100.0 / c.max(1) as f64,
                    p.table_size
                ),
                None => format!("table {} entries", count(s.table.occupied)),
            }));
            spans.push(sep());
            spans.push(Span::raw(format!(
                "{} {} {} k={}",
                p.selector, p.eviction, p.estimation, p.k
            )));
            spans.push(sep());
            spans.push(match &s.watching {
                Watching::Starting => Span::styled("starting", theme.muted),
                Watching::Events => Span::styled("watching", theme.good),
                Watching::Polling => Span::styled("polling", theme.good),
                Watching::Rescanning(why) => {
                    Span::styled(format!("rescanning ({why})"), theme.warning)
                }
            });
        }
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// The tab labels with their keys, and each one's start column.
fn labels(keymap: &Keymap) -> Vec<(Tab, String, u16)> {
    let mut x = 0;
    TABS.iter()
        .map(|&t| {
            let label = format!(" {} {} ", keymap.first(t.action()), t.title());
            let at = x;
            x += label.chars().count() as u16 + 1;
            (t, label, at)
        })
        .collect()
}

pub fn tabs(app: &App, theme: &Theme, area: Rect, f: &mut Frame) {
    let mut spans = Vec::new();
    for (t, label, _) in labels(&app.keymap) {
        let style = if t == app.tab {
            theme.tab_active
        } else {
            theme.tab
        };
        spans.push(Span::styled(label, style));
        spans.push(Span::raw(" "));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// The tab whose label is at column `x` of the tab bar.
pub fn tab_at(keymap: &Keymap, x: u16) -> Option<Tab> {
    labels(keymap)
        .into_iter()
        .find(|(_, label, at)| (*at..*at + label.chars().count() as u16).contains(&x))
        .map(|(t, _, _)| t)
}

/// The hints of a pane: its own actions first, then help and quit.
fn hints(tab: Tab) -> &'static [(Action, &'static str)] {
    match tab {
        Tab::Documents => &[
            (Action::Select, "origins"),
            (Action::Filter, "filter"),
            (Action::Sort, "sort"),
            (Action::Reverse, "reverse"),
        ],
        Tab::Origin => &[
            (Action::NextBlock, "next block"),
            (Action::Select, "jump to origin"),
            (Action::Back, "back"),
            (Action::Exact, "exact/estimate"),
        ],
        Tab::Clusters => &[
            (Action::Select, "pairs/compare"),
            (Action::Left, "clusters"),
            (Action::PageDown, "scroll"),
            (Action::Back, "close"),
        ],
        Tab::Table => &[(Action::Rescan, "rescan")],
        Tab::Tune => &[
            (Action::Select, "edit"),
            (Action::Apply, "apply"),
            (Action::Sweep, "sweep"),
            (Action::Adopt, "adopt"),
        ],
        Tab::Events => &[(Action::Select, "origins")],
    }
}

pub fn footer(app: &App, theme: &Theme, area: Rect, f: &mut Frame) {
    let mut spans = Vec::new();
    let mut hint = |key: String, what: &str| {
        spans.push(Span::styled(format!(" {key}"), theme.key));
        spans.push(Span::styled(format!(" {what} "), theme.muted));
    };
    match &app.input {
        Some(Input::Filter(_)) => {
            hint("type".into(), "fuzzy filter");
            hint("enter".into(), "keep");
            hint("esc".into(), "clear");
        }
        Some(Input::Field(field, _)) => {
            hint("type".into(), field.label());
            hint("enter".into(), "set");
            hint("esc".into(), "cancel");
        }
        None => {
            for &(action, what) in hints(app.tab).iter().chain(&[
                (Action::NextTab, "pane"),
                (Action::Help, "keys"),
                (Action::Quit, "quit"),
            ]) {
                hint(app.keymap.first(action), what);
            }
        }
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// Every binding, from the keymap, over the middle of the screen.
pub fn help(app: &App, theme: &Theme, area: Rect, f: &mut Frame) {
    let rows = app.keymap.help();
    let keys_w = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
    let lines: Vec<Line> = rows
        .iter()
        .map(|(keys, what)| {
            Line::from(vec![
                Span::styled(format!(" {keys:>keys_w$} "), theme.key),
                Span::raw(format!(" {what}")),
            ])
        })
        .collect();
    let w = (keys_w as u16 + 36).min(area.width);
    let h = (lines.len() as u16 + 2).min(area.height);
    let [popup] = Layout::horizontal([Constraint::Length(w)])
        .flex(Flex::Center)
        .areas(area);
    let [popup] = Layout::vertical([Constraint::Length(h)])
        .flex(Flex::Center)
        .areas(popup);
    f.render_widget(Clear, popup);
    let title = format!(
        " Keys ({} or {} to close) ",
        app.keymap.first(Action::Help),
        app.keymap.first(Action::Back)
    );
    f.render_widget(
        Paragraph::new(lines)
            .block(block(theme, title, true))
            .style(theme.base),
        popup,
    );
}
