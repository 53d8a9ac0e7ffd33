//! The frame around the panes: status bar, tab bar, key hints, help overlay.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use super::{block, count};
use crate::activity::{self, Tone};
use crate::app::{App, Input, TABS, Tab};
use crate::keymap::{Action, Keymap};
use crate::theme::Theme;
use crate::{glyphs, help, paths};

/// The fewest columns the root is cut to before other parts are left out.
const ROOT: u16 = 14;

/// Root, documents, versions, indexing, table, live settings, watch mode;
/// on a narrow terminal the root is cut, then the least telling parts are
/// left out.
pub(crate) fn render(app: &App, theme: &Theme, area: Rect, f: &mut Frame) {
    // (importance, text, style): 0 always shows, higher goes first.
    let mut parts: Vec<(u8, String, Style)> = vec![(6, "lineage".into(), theme.title)];
    // The root in full and as shown, to cut it from the full path.
    let mut root: Option<(String, String)> = None;
    if let Some(e) = &app.fatal {
        parts.push((0, format!("stopped: {e}"), theme.error));
    }
    if app.rescan.is_some() {
        parts.push((0, "rescan asked…".into(), theme.warning));
    }
    match &app.snapshot {
        None if app.fatal.is_none() => parts.push((0, "starting…".into(), theme.muted)),
        None => {}
        Some(s) => {
            let p = &s.params;
            // Raw (exact) here: `fit` escapes it as it cuts.
            let full = lineage_source::name::of_os(s.root.as_os_str()).into_owned();
            let shown = paths::fit(&full, "", (area.width / 4).max(ROOT) as usize, 1);
            let docs = format!("{} docs", count(s.documents.len() as u64));
            // The last change's path gets what the shortest root and the
            // count leave ("watching · last change hh:mm:ss " and the
            // separators, three columns each: 41).
            let room = (area.width as usize)
                .saturating_sub(ROOT as usize + docs.len() + 41)
                .min((area.width / 4).max(12) as usize);
            parts.push((1, shown.clone(), theme.base));
            root = Some((full, shown));
            parts.push((1, docs, theme.base));
            parts.push((5, format!("{} versions", count(s.versions)), theme.muted));
            // What the engine does now, in the place that always shows.
            if let Some((text, tone)) = activity::activity(app, room) {
                let style = match tone {
                    Tone::Busy => theme.warning,
                    Tone::Idle => theme.good,
                    Tone::Waiting => theme.muted,
                    Tone::Failed => theme.error,
                };
                parts.push((0, text, style));
            }
            let table = match s.table.capacity {
                Some(c) => format!(
                    "table {:.0}% of {}",
                    s.table.occupied as f64 * 100.0 / c.max(1) as f64,
                    super::size_label(&p.table_size)
                ),
                None => format!("table {} entries", count(s.table.occupied)),
            };
            parts.push((3, table, theme.base));
            let live = format!("{} {} {} k={}", p.selector, p.eviction, p.estimation, p.k);
            parts.push((4, live, theme.base));
        }
    }
    let width = |parts: &[(u8, String, Style)]| -> usize {
        parts
            .iter()
            .map(|p| glyphs::str_width(&p.1) + 3)
            .sum::<usize>()
    };
    while width(&parts) > area.width as usize {
        let excess = width(&parts) - area.width as usize;
        let least = (0..parts.len())
            .filter(|&i| parts[i].0 > 0)
            .max_by_key(|&i| parts[i].0);
        // Before the root or the count goes, the root is cut, down to its
        // last ROOT columns.
        if least.is_some_and(|i| parts[i].0 <= 1)
            && let Some((full, shown)) = root.as_mut()
            && let Some(part) = (parts.iter_mut()).find(|p| p.1 == *shown)
            && glyphs::str_width(shown) > ROOT as usize
        {
            let to = glyphs::str_width(shown)
                .saturating_sub(excess)
                .max(ROOT as usize);
            *shown = paths::fit(full, "", to, 1);
            part.1 = shown.clone();
            continue;
        }
        let Some(least) = least else { break };
        parts.remove(least);
    }
    let mut spans = Vec::new();
    for (i, (_, text, style)) in parts.into_iter().enumerate() {
        spans.push(Span::styled(if i == 0 { " " } else { " │ " }, theme.muted));
        spans.push(Span::styled(text, style));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// The tab labels with their keys, and each one's start column, in
/// `width` columns (the current tab is `current`): padded and spaced where
/// they fit, else closer (60 columns), else the other tabs by their keys
/// alone. A label is never cut (at 60 columns `6 Events` read `6 `).
fn labels(keymap: &Keymap, current: Tab, width: u16) -> Vec<(Tab, String, u16)> {
    let forms: [&dyn Fn(Tab) -> (String, u16); 3] = [
        &|t| (format!(" {} {} ", keymap.first(t.action()), t.title()), 1),
        &|t| (format!(" {} {}", keymap.first(t.action()), t.title()), 0),
        &|t| match t == current {
            true => (format!(" {} {} ", keymap.first(t.action()), t.title()), 0),
            false => (format!(" {} ", keymap.first(t.action())), 0),
        },
    ];
    let place = |form: &dyn Fn(Tab) -> (String, u16)| {
        let mut x = 0;
        let placed: Vec<(Tab, String, u16)> = (TABS.iter())
            .map(|&t| {
                let (label, gap) = form(t);
                let at = x;
                x += label.chars().count() as u16 + gap;
                (t, label, at)
            })
            .collect();
        let end = placed
            .last()
            .map_or(0, |(_, l, at)| at + l.chars().count() as u16);
        (placed, end)
    };
    let mut last = Vec::new();
    for form in forms {
        let (placed, end) = place(form);
        if end <= width {
            return placed;
        }
        last = placed;
    }
    last
}

pub(crate) fn tabs(app: &App, theme: &Theme, area: Rect, f: &mut Frame) {
    let mut spans = Vec::new();
    let mut x = 0;
    for (t, label, at) in labels(&app.keymap, app.tab, area.width) {
        let style = if t == app.tab {
            theme.tab_active
        } else {
            theme.tab
        };
        if at > x {
            spans.push(Span::raw(" ".repeat(usize::from(at - x))));
        }
        x = at + label.chars().count() as u16;
        spans.push(Span::styled(label, style));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// The tab whose label is at column `x` of a tab bar `width` wide.
pub(crate) fn tab_at(keymap: &Keymap, current: Tab, width: u16, x: u16) -> Option<Tab> {
    labels(keymap, current, width)
        .into_iter()
        .find(|(_, label, at)| (*at..*at + label.chars().count() as u16).contains(&x))
        .map(|(t, _, _)| t)
}

/// The hints of a pane: its own actions first, then help and quit.
pub(crate) fn hints(tab: Tab) -> &'static [(Action, &'static str)] {
    match tab {
        Tab::Documents => &[
            (Action::Select, "origins"),
            (Action::Filter, "filter"),
            (Action::Sort, "sort"),
            (Action::Reverse, "reverse"),
            (Action::Cluster, "cluster"),
        ],
        Tab::Origin => &[
            (Action::NextBlock, "next block"),
            (Action::Filter, "search"),
            (Action::Select, "jump to origin"),
            (Action::Back, "back"),
            (Action::Versions, "versions"),
            (Action::Copies, "copies"),
            (Action::Shared, "shared"),
            (Action::Exact, "exact"),
            (Action::Cluster, "cluster"),
        ],
        Tab::Clusters => &[
            (Action::Select, "pairs/compare"),
            (Action::Left, "clusters"),
            (Action::Filter, "filter"),
            (Action::Sort, "sort"),
            (Action::PageDown, "scroll"),
            (Action::NextBlock, "next passage"),
            (Action::Back, "back"),
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

pub(crate) fn footer(app: &App, theme: &Theme, area: Rect, f: &mut Frame) {
    let mut spans = Vec::new();
    if let Some(m) = &app.message {
        // Its middle gives way to the keys always shown (at 60 columns a
        // copied path pushed `? keys` off the edge).
        let keys = [Action::NextTab, Action::Help, Action::Quit];
        let tail: usize = (keys.iter())
            .map(|&a| glyphs::str_width(&app.keymap.first(a)) + 7)
            .sum();
        let room = (area.width as usize).saturating_sub(tail + 3);
        let m = crate::paths::typed(m, room);
        spans.push(Span::styled(format!(" {m} "), theme.good));
        spans.push(Span::styled("│", theme.muted));
    }
    let used: usize = spans.iter().map(|s| glyphs::str_width(&s.content)).sum();
    let hint = |spans: &mut Vec<Span>, key: &str, what: &str| {
        spans.push(Span::styled(format!(" {key}"), theme.key));
        spans.push(Span::styled(format!(" {what} "), theme.muted));
    };
    // What is typed, after what it is for; reversed while selected (the
    // next character typed replaces it).
    let input = typed_style(app, theme);
    let typed = |spans: &mut Vec<Span>, before: &str, text: &str| {
        spans.push(Span::styled(before.to_string(), theme.muted));
        let width = usize::from(area.width / 2);
        let (head, tail) = crate::paths::typed_at(text, app.caret, width);
        spans.push(Span::styled(head, input));
        spans.push(Span::styled("▏", theme.input));
        spans.push(Span::styled(tail, input));
        spans.push(Span::raw(" "));
    };
    // While something is typed: what enter and esc do with it, last.
    let ends = match &app.input {
        Some(Input::Filter(_)) => {
            hint(&mut spans, "type", "fuzzy filter");
            Some(("keep", "clear"))
        }
        Some(Input::ClusterFilter(_)) => {
            hint(&mut spans, "type", "words of a page's path");
            Some(("keep", "clear"))
        }
        Some(Input::Field(field, _)) => {
            hint(&mut spans, "type", field.label());
            Some(("set", "cancel"))
        }
        Some(Input::Export(name)) => {
            typed(&mut spans, " export to ", name);
            Some(("write (.json: JSON, .html: the report, else CSV)", "cancel"))
        }
        Some(Input::Find(query)) => {
            typed(&mut spans, " search every page for ", query);
            Some(("search", "cancel"))
        }
        Some(Input::Search(query)) => {
            spans.push(Span::styled(" /", theme.input));
            let width = usize::from(area.width / 2);
            let (head, tail) = crate::paths::typed_at(query, app.caret, width);
            spans.push(Span::styled(head, input));
            spans.push(Span::styled("▏", theme.input));
            spans.push(Span::styled(tail, input));
            spans.push(Span::raw(" "));
            if let Some(s) = &app.origin.search {
                spans.push(Span::styled(format!("{} ", s.position()), theme.muted));
            }
            Some(("keep", "clear"))
        }
        None => {
            // The pane's hints, in order, while they fit whole, then the
            // three always there (a hint cut at the edge read as a key with
            // no meaning, and the way to the keys went first).
            let width = |k: &str, what: &str| glyphs::str_width(k) + glyphs::str_width(what) + 3;
            let tail = [
                (Action::NextTab, "pane"),
                (Action::Help, "keys"),
                (Action::Quit, "quit"),
            ]
            .map(|(a, what)| (app.keymap.first(a), what));
            // The last hint's closing space may fall off the edge.
            let mut room = (area.width as usize + 1)
                .saturating_sub(used + tail.iter().map(|(k, w)| width(k, w)).sum::<usize>());
            for &(action, what) in hints(app.tab) {
                let key = app.keymap.first(action);
                let w = width(&key, what);
                if w > room {
                    break;
                }
                room -= w;
                hint(&mut spans, &key, what);
            }
            for (key, what) in tail {
                hint(&mut spans, &key, what);
            }
            None
        }
    };
    if let Some((enter, esc)) = ends {
        // What enter does, in its first word where the whole does not fit.
        let used: usize = spans.iter().map(|s| glyphs::str_width(&s.content)).sum();
        let need = |enter: &str| glyphs::str_width(enter) + esc.len() + "  enter    esc ".len();
        let enter = match used + need(enter) > area.width as usize + 1 {
            true => enter.split(' ').next().unwrap_or(enter),
            false => enter,
        };
        hint(&mut spans, "enter", enter);
        hint(&mut spans, "esc", esc);
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// Every binding and every term, over the middle of the screen, scrolled.
pub(crate) fn help(app: &App, theme: &Theme, area: Rect, f: &mut Frame) {
    let popup = help::popup(area);
    let inner_h = popup.height.saturating_sub(2) as usize;
    let lines = help::lines(app, theme, popup.width.saturating_sub(2) as usize);
    let top = app.help_scroll.min(lines.len().saturating_sub(inner_h));
    f.render_widget(Clear, popup);
    let k = |a| app.keymap.first(a);
    let title = format!(
        " Keys and terms ({} or {} to close) ",
        k(Action::Help),
        k(Action::Back)
    );
    let position = format!(
        " {}–{} of {} ",
        top + 1,
        (top + inner_h).min(lines.len()),
        lines.len()
    );
    let shown: Vec<Line> = lines.into_iter().skip(top).take(inner_h).collect();
    f.render_widget(
        Paragraph::new(shown)
            .block(block(theme, title, true).title_bottom(Line::from(position).right_aligned()))
            .style(theme.base),
        popup,
    );
}

/// The style of a prompt's text: reversed while it is selected.
pub(crate) fn typed_style(app: &App, theme: &Theme) -> Style {
    if app.selected {
        theme.input.add_modifier(Modifier::REVERSED)
    } else {
        theme.input
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tab bar's labels at every width: whole, within the width where
    /// any form fits, the current tab always named.
    #[test]
    fn tab_labels_fit_or_shorten_whole() {
        let keys = Keymap::default();
        for (width, expect) in [
            (80, " 1 Documents   2 Origin "),
            (60, " 1 Documents 2 Origin 3 Clusters"),
            (40, " 1  2 Origin  3  4 "),
        ] {
            let placed = labels(&keys, Tab::Origin, width);
            let mut bar = String::new();
            for (_, label, at) in &placed {
                while bar.chars().count() < usize::from(*at) {
                    bar.push(' ');
                }
                bar.push_str(label);
            }
            assert!(bar.chars().count() <= usize::from(width), "{width}: {bar}");
            assert!(bar.starts_with(expect), "{width}: {bar:?}");
            assert!(bar.contains("2 Origin"), "{width}: {bar}");
            // A click on a label's first column finds its tab.
            for (t, _, at) in &placed {
                assert_eq!(tab_at(&keys, Tab::Origin, width, *at), Some(*t));
            }
        }
    }
}
