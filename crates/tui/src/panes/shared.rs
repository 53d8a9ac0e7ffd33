//! The list of pages that carry the text of the page shown, over the Origin
//! pane, most of it first; under it the selected page's shared passages,
//! with their words as the page shown has them.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::{count, cut_end, padded};
use crate::app::App;
use crate::keymap::Action;
use crate::paths;
use crate::shared::{list_height, passage_lines};
use crate::theme::Theme;
use lineage_engine::{PageShare, SharedView};

/// Columns a page's name keeps before its figures give way.
const NAME_LEAST: usize = 18;

pub(crate) fn render(app: &App, theme: &Theme, area: Rect, f: &mut Frame) {
    let Some(state) = &app.shared else {
        return;
    };
    let frame = super::ListFrame::over(area);
    let (rows, inner) = (frame.rows, frame.inner);
    let k = |a| app.keymap.first(a);
    let (select, back) = (k(Action::Select), k(Action::Back));
    let mut keys = vec![
        format!(" {select} open at its first shared passage · {back} close"),
        format!(" {select} open · {back} close"),
    ];
    let (title, lines) = match &state.view {
        None => crate::help::waiting(
            "Shared",
            state.failed.as_deref(),
            "finding the pages",
            "comparing the shingles of every live page",
            inner,
            theme,
        ),
        Some(v) => {
            let after = match v.shares.len() {
                1 => vec![": 1 page ".to_string()],
                n => vec![
                    format!(": {n} pages, most of it first "),
                    format!(": {n} pages "),
                ],
            };
            let version = format!(" v{}", v.version);
            let title = super::titled(" Shared with ", &v.path, &version, &after, inner);
            let window = state.cursor.window(v.shares.len(), list_height(rows));
            let names = paths::Shared::of(window.clone().map(|i| &*v.shares[i].path));
            // The folders that tell a row from the others shown stay.
            let shown: Vec<&str> = window.clone().map(|i| &*v.shares[i].path).collect();
            let tails = paths::tails(&shown);
            let first = window.start;
            // The other page's own share goes first where the name would
            // get too few columns; the line of keys says so.
            let widest = |full: bool| {
                (window.clone())
                    .map(|i| figures(&v.shares[i], full).chars().count())
                    .max()
                    .unwrap_or(0)
            };
            let full = inner.saturating_sub(10 + widest(true)) >= NAME_LEAST;
            if !full {
                keys = keys
                    .iter()
                    .map(|k| format!(" not shown: % of its own ·{k}"))
                    .chain(keys.iter().cloned())
                    .collect();
            }
            let mut lines: Vec<Line> = (window.clone())
                .map(|i| {
                    let s = &v.shares[i];
                    let figures = figures(s, full);
                    let version = format!(" v{}", s.version);
                    let room = inner.saturating_sub(10 + figures.chars().count());
                    let line = Line::from(vec![
                        Span::styled(format!(" {:5.1} %  ", s.page_percent), theme.key),
                        Span::raw(padded(
                            paths::fit_among(&s.path, &version, room, tails[i - first], &names),
                            room,
                        )),
                        Span::styled(figures, theme.muted),
                    ]);
                    if i == state.cursor.selected {
                        line.style(theme.selected)
                    } else {
                        line
                    }
                })
                .collect();
            if lines.is_empty() {
                lines.push(Line::styled(
                    " No other live page shares its text.",
                    theme.muted,
                ));
            } else if let Some(s) = v.shares.get(state.cursor.selected) {
                // What the list leaves (at least its share of the rows).
                let room = rows.saturating_sub(lines.len()).max(passage_lines(rows));
                lines.extend(passages(app, theme, v, s, room, inner));
            }
            (title, lines)
        }
    };
    frame.draw(f, theme, title, lines, &keys);
}

/// What a row says of a page after its name: the page's tokens it carries
/// and in how many passages, and (`full`) its own share.
fn figures(s: &PageShare, full: bool) -> String {
    let n = s.passages.len();
    let plural = if n == 1 { "" } else { "s" };
    let here = format!(
        "  {} tokens, {n} passage{plural}",
        count(u64::from(s.page_tokens))
    );
    if full {
        format!(
            "{here}; {:.1} % of its {}",
            s.percent,
            count(u64::from(s.tokens))
        )
    } else {
        here
    }
}

/// The selected page's passages in `height` lines: a line naming them,
/// then each with the words the page shown has there (from the Origin
/// view, when it is the page asked about), cut with `…` to the width.
fn passages<'a>(
    app: &App,
    theme: &Theme,
    v: &SharedView,
    s: &PageShare,
    height: usize,
    inner: usize,
) -> Vec<Line<'a>> {
    if height == 0 {
        return Vec::new();
    }
    let shown = height.saturating_sub(1).min(s.passages.len());
    let n = s.passages.len();
    let of = match shown < n {
        true => format!(" ({shown} of {n})"),
        false => String::new(),
    };
    let head = format!(" shared with {}{of}:", paths::shown(&s.path));
    let mut out = vec![Line::styled(cut_end(&head, inner), theme.title)];
    let text = (app.origin.view.as_ref())
        .filter(|o| o.id == v.id)
        .and_then(|o| Some((o.text.as_ref().ok()?, &o.spans)));
    // The page's token ranges, their bars in one column.
    let ranges: Vec<String> = (s.passages[..shown].iter())
        .map(|p| format!("{}–{}", p.page.0, p.page.1))
        .collect();
    let w = ranges.iter().map(|r| r.chars().count()).max().unwrap_or(0);
    for (p, range) in s.passages[..shown].iter().zip(&ranges) {
        let at = format!("  {range:<w$} │ ");
        let words = text
            .and_then(|(t, spans)| {
                let bytes = super::token_bytes(spans, p.page.0..p.page.1)?;
                t.get(bytes)
            })
            .map(|w| w.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_default();
        let room = inner.saturating_sub(at.chars().count());
        out.push(Line::from(vec![
            Span::styled(at, theme.muted),
            Span::raw(cut_end(&paths::shown(&words), room)),
        ]));
    }
    out
}
