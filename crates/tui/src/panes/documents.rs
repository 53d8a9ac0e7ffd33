//! Documents: path, tokens, % fresh, dominant origin, cluster; filtered and
//! sorted rows, of which only the visible ones are built.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Row, Table};

use super::{block, count, count_in};
use crate::app::{App, Input};
use crate::documents::SortKey;
use crate::layout;
use crate::theme::Theme;
use crate::{glyphs, paths};
use lineage_config::Basis;

const NUMBERS: [u16; 3] = [8, 7, 7];

/// Width of a share column ("changed", "removed").
const SHARE: u16 = 7;

/// From this width of rows on, both share columns show beside "fresh";
/// from [`ONE_SHARE`] one, the one sorted by (else "changed"); narrower,
/// the one sorted by in place of "fresh", else none.
const BOTH_SHARES: u16 = 100;
const ONE_SHARE: u16 = 72;

/// The columns of numbers after the path: "tokens", then these.
fn share_columns(width: u16, sort: SortKey) -> Vec<SortKey> {
    let sorted = matches!(sort, SortKey::Changed | SortKey::Removed);
    if width >= BOTH_SHARES {
        vec![SortKey::Fresh, SortKey::Changed, SortKey::Removed]
    } else if width >= ONE_SHARE {
        vec![SortKey::Fresh, if sorted { sort } else { SortKey::Changed }]
    } else {
        vec![if sorted { sort } else { SortKey::Fresh }]
    }
}

pub(crate) fn render(app: &App, theme: &Theme, area: Rect, f: &mut Frame) {
    let docs = &app.docs;
    let (sort, reverse) = docs.sort();
    // A filter ranks its matches best first (the order breaks ties only).
    let order = if !docs.ranked() {
        format!(
            "by {}{}",
            sort.label(),
            if reverse { " (reversed)" } else { "" }
        )
    } else {
        "best match first".to_string()
    };
    let shares = &docs.shares;
    let against = match shares.basis {
        Basis::Predecessor => "predecessor",
        Basis::Folder => "previous folder",
        Basis::Release => "last release",
    };
    let measuring = match shares.running {
        Some((done, total)) if total > 0 => {
            format!(" ({}/{})", count(done as u64), count(total as u64))
        }
        _ => String::new(),
    };
    let (_, rows_area) = layout::table_rows(area);
    let columns = share_columns(rows_area.width, docs.sort().0);
    let head = format!(
        " Documents {} of {} · {order} ",
        count(docs.len() as u64),
        count(docs.all().len() as u64),
    );
    // What the shares are measured against, where they show: shorter where
    // the long form does not fit (60 columns).
    let basis = format!("· changed vs {against}{measuring} ");
    let short = format!("· vs {against}{measuring} ");
    let shown = columns.iter().any(|&k| k != SortKey::Fresh);
    let mut title = vec![Span::raw(head)];
    let typing = matches!(app.input, Some(Input::Filter(_)));
    if typing || !docs.filter().is_empty() {
        title.push(Span::raw("· filter "));
        let cursor = if typing { "▏" } else { "" };
        let style = if typing { theme.input } else { theme.key };
        let caret = if typing { app.caret } else { None };
        let (head, tail) = paths::typed_at(docs.filter(), caret, usize::from(area.width / 3));
        title.push(Span::styled(format!("/{head}{cursor}{tail}"), style));
        title.push(Span::raw(" "));
    }
    let used: usize = title.iter().map(|t| glyphs::str_width(&t.content)).sum();
    let fits = |b: &str| used + glyphs::str_width(b) + 2 <= usize::from(area.width);
    if let Some(b) = [basis, short]
        .into_iter()
        .find(|b| fits(b))
        .filter(|_| shown)
    {
        title.push(Span::raw(b));
    }
    let height = rows_area.height as usize;
    let n = columns.len() as u16 - 1;
    // The path and dominant-origin columns share what the numbers leave.
    let rest = rows_area
        .width
        .saturating_sub(NUMBERS.iter().sum::<u16>() + 4 + n * (SHARE + 1));
    let path_w = rest * 3 / 5;
    let origin_w = rest - path_w;
    let window = docs.cursor.window(docs.len(), height);
    // What the names on screen share is cut before what tells them apart.
    let shared = paths::Shared::of(window.clone().map(|i| &*docs.row(i).path));
    let origins =
        paths::Shared::of((window.clone()).filter_map(|i| docs.row(i).dominant_path.as_deref()));
    let rows = window.map(|i| {
        let d = docs.row(i);
        // The folders that tell the row from the rows beside it stay.
        let beside: Vec<&str> = [i.checked_sub(1), Some(i), Some(i + 1)]
            .into_iter()
            .flatten()
            .filter(|&j| j < docs.len())
            .map(|j| &*docs.row(j).path)
            .collect();
        let keep = paths::tails(&beside)[usize::from(i > 0)];
        let origin = match (&d.dominant_path, d.dominant_origin) {
            (_, Some(o)) if o == d.id => Span::styled("(itself)", theme.muted),
            // Its own earlier version: the bare path read as the page itself.
            (Some(p), Some(_)) if *p == d.path => {
                let said = ["(an earlier version)", "(earlier version)", "(earlier)"];
                let said = said.map(String::from);
                Span::styled(super::first_fitting(&said, origin_w as usize), theme.muted)
            }
            // The folders that tell the origin from the page itself stay.
            (Some(p), _) => {
                let keep = paths::tails(&[&d.path, p])[1];
                Span::raw(paths::fit_among(p, "", origin_w as usize, keep, &origins))
            }
            (None, _) => Span::styled("—", theme.muted),
        };
        let version = if d.version > 1 {
            format!(" v{}", d.version)
        } else {
            String::new()
        };
        // The characters the filter matched stand out.
        let path = paths::fit_marked(
            &d.path,
            "",
            (path_w as usize).saturating_sub(glyphs::str_width(&version)),
            keep,
            &docs.matches(i),
            &shared,
        );
        let mut path: Vec<Span> = (path.into_iter())
            .map(|(s, m)| {
                if m {
                    Span::styled(s, theme.matched)
                } else {
                    Span::raw(s)
                }
            })
            .collect();
        path.push(Span::styled(version, theme.muted));
        let change = shares.get(d.id);
        let share = |key: SortKey| {
            if key == SortKey::Fresh {
                return Cell::from(Line::from(format!("{:.1}", d.fresh_percent)).right_aligned());
            }
            let v = match key {
                SortKey::Removed => change.map(|c| (c.counts.is_some(), c.removed_percent())),
                _ => change.map(|c| (c.counts.is_some(), c.changed_percent())),
            };
            let said = match v {
                Some((_, Some(p))) => Span::raw(format!("{p:.1}")),
                // No base: nothing of it to remove.
                Some((true, None)) => Span::styled("—", theme.muted),
                // The fingerprints are no longer kept.
                Some((false, _)) => Span::styled("?", theme.muted),
                None => Span::styled("…", theme.muted),
            };
            Cell::from(Line::from(said).right_aligned())
        };
        let mut cells = vec![
            Cell::from(Line::from(path)),
            Cell::from(
                Line::from(count_in(u64::from(d.tokens), NUMBERS[0] as usize)).right_aligned(),
            ),
        ];
        cells.extend(columns.iter().map(|&k| share(k)));
        cells.extend([
            Cell::from(origin),
            Cell::from(
                Line::from((app.cluster_number(d.id)).map_or(String::new(), |n| format!("#{n}")))
                    .right_aligned(),
            ),
        ]);
        let row = Row::new(cells);
        if i == docs.cursor.selected {
            row.style(theme.selected)
        } else {
            row
        }
    });
    let right = |h: &'static str| Cell::from(Line::from(h).right_aligned());
    let mut header = vec![Cell::from("path"), right("tokens")];
    header.extend(columns.iter().map(|&k| {
        right(match k {
            SortKey::Fresh => "fresh %",
            SortKey::Removed => "removed",
            _ => "changed",
        })
    }));
    header.extend([
        // Shortened, not cut, where the column is narrow (60 columns).
        Cell::from(if origin_w >= 15 {
            "dominant origin"
        } else {
            "dom. origin"
        }),
        right("cluster"),
    ]);
    let header = Row::new(header).style(theme.header);
    let mut widths = vec![Constraint::Length(path_w), Constraint::Length(NUMBERS[0])];
    widths.extend((columns.iter()).map(|&k| {
        Constraint::Length(if k == SortKey::Fresh {
            NUMBERS[1]
        } else {
            SHARE
        })
    }));
    widths.extend([Constraint::Length(origin_w), Constraint::Length(NUMBERS[2])]);
    let table = Table::new(rows, widths)
        .header(header)
        .column_spacing(1)
        .block(block(theme, Line::from(title), true));
    f.render_widget(table, area);
    if docs.is_empty() {
        let msg = if docs.all().is_empty() {
            "no documents yet"
        } else {
            "no document matches the filter"
        };
        f.render_widget(Line::styled(msg, theme.muted), rows_area);
    }
}
