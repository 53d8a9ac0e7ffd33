//! The pages a search of every page found, over the pane: per page its
//! matches, its path and the line of its first match, the match marked.

use std::ops::Range;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use unicode_segmentation::UnicodeSegmentation;

use super::{count, overlay, padded, styled_line};
use crate::app::App;
use crate::glyphs;
use crate::keymap::Action;
use crate::paths;
use crate::theme::Theme;
use lineage_engine::SearchHit;

/// Columns of the path, at most, on a screen under 85 columns (two fifths
/// of a wider one; the context takes the rest).
const PATH_AT_MOST: usize = 34;

pub(crate) fn render(app: &App, theme: &Theme, area: Rect, f: &mut Frame) {
    let Some(state) = &app.find else {
        return;
    };
    let popup = crate::help::list_popup(area);
    let height = crate::help::list_rows(popup);
    let inner = popup.width.saturating_sub(2) as usize;
    let k = |a| app.keymap.first(a);
    let words = paths::shown(&state.query).into_owned();
    let (title, mut lines) = match &state.view {
        None if state.failed.is_some() => (
            format!(" Search “{words}”: not searched "),
            crate::help::failed_lines(state.failed.as_deref().unwrap_or_default(), inner, theme),
        ),
        None => (
            format!(" Search “{words}”: reading the pages… "),
            Vec::new(),
        ),
        Some(v) => {
            let found = match (v.pages, v.matches) {
                (1, 1) => "1 page, 1 match".to_string(),
                (1, m) => format!("1 page, {} matches", count(m as u64)),
                (p, m) => format!("{} pages, {} matches", count(p as u64), count(m as u64)),
            };
            let title = if v.done {
                format!(" Search “{words}”: {found} ")
            } else {
                format!(
                    " Search “{words}”: {found} in {} of {} pages… ",
                    count(v.searched as u64),
                    count(v.total as u64)
                )
            };
            let window = state.cursor.window(v.hits.len(), height);
            let in_view = &v.hits[window.clone()];
            let w = (in_view.iter())
                .map(|h| h.matches.to_string().len())
                .max()
                .unwrap_or(1);
            // The paths' column as wide as the longest in view needs.
            let path_w = (in_view.iter())
                .map(|h| glyphs::str_width(&paths::shown(&h.path)) + label(h).len())
                .max()
                .unwrap_or(0)
                .min(PATH_AT_MOST.max(inner * 2 / 5));
            let shared = paths::Shared::of(in_view.iter().map(|h| &*h.path));
            let rows = window.map(|i| {
                let line = row(&v.hits[i], (w, path_w), inner, &shared, theme);
                if i == state.cursor.selected {
                    line.style(theme.selected)
                } else {
                    line
                }
            });
            let mut lines: Vec<Line> = rows.collect();
            if lines.is_empty() && v.done {
                lines.push(Line::styled(
                    " No live page holds these words.",
                    theme.muted,
                ));
            }
            (title, lines)
        }
    };
    let listed = state.view.as_ref().map_or(0, |v| v.hits.len());
    let mut notes = Vec::new();
    if state.view.as_ref().is_some_and(|v| v.pages > listed) {
        notes.push(format!("the first {} listed", count(listed as u64)));
    }
    if let Some(v) = state.view.as_ref().filter(|v| v.unread > 0) {
        notes.push(format!(
            "{} pages could not be read",
            count(v.unread as u64)
        ));
    }
    lines.push(Line::default());
    let mut foot = format!(
        " {} open at the match · {} close",
        k(Action::Select),
        k(Action::Back)
    );
    if !notes.is_empty() {
        foot.push_str(&format!(" · {}", notes.join(", ")));
    }
    lines.push(Line::styled(foot, theme.muted));
    overlay(f, theme, popup, title, lines);
}

/// ` v2` after a page's path.
fn label(hit: &SearchHit) -> String {
    format!(" v{}", hit.version)
}

/// One page found: its matches, its path and version, the context; `w` is
/// the widths of the matches' and the paths' columns.
fn row<'a>(
    hit: &'a SearchHit,
    w: (usize, usize),
    inner: usize,
    shared: &paths::Shared,
    theme: &Theme,
) -> Line<'a> {
    let matches = format!(" {:>1$}× ", hit.matches, w.0);
    let room = inner.saturating_sub(matches.chars().count());
    let path_w = w.1.min(room / 2);
    let path = padded(
        paths::fit_among(&hit.path, &label(hit), path_w, 1, shared),
        path_w,
    );
    let rest = room.saturating_sub(path_w + 2);
    let cut = visible(&hit.context, hit.marked.clone(), rest);
    let marked = (hit.marked.start.max(cut.start))..(hit.marked.end.min(cut.end));
    let more = if cut.start > 0 { "…" } else { "" };
    let context = styled_line(&hit.context, cut, theme.base, &[(marked, theme.found)]);
    let mut spans = vec![
        Span::styled(matches, theme.key),
        Span::raw(path),
        Span::raw("  "),
        Span::styled(more, theme.muted),
    ];
    spans.extend(context.spans);
    Line::from(spans)
}

/// The bytes of `context` drawn in `width` columns with the match in view:
/// the whole words before it that fit in a third of the room (a `…` before
/// them when the line goes on to the left), then on from there.
fn visible(context: &str, marked: Range<usize>, width: usize) -> Range<usize> {
    let lead = width / 3;
    let mut start = marked.start;
    let mut used = 0;
    for (i, g) in context[..marked.start].grapheme_indices(true).rev() {
        used += glyphs::width(g);
        if used + 1 > lead {
            break;
        }
        start = i;
    }
    // Not from inside a word: from the next one.
    if start > 0 && !context[..start].ends_with(char::is_whitespace) {
        let word = context[start..marked.start].find(char::is_whitespace);
        start = word.map_or(marked.start, |w| start + w + 1);
    }
    let width = width.saturating_sub(usize::from(start > 0));
    let mut end = start;
    let mut used = 0;
    for (i, g) in context[start..].grapheme_indices(true) {
        used += glyphs::width(g);
        if used > width {
            break;
        }
        end = start + i + g.len();
    }
    start..end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_match_stays_in_view_with_words_before_it() {
        let context = format!("{} needle {}", "a".repeat(60), "b".repeat(60));
        let at = context.find("needle").unwrap();
        let cut = visible(&context, at..at + 6, 30);
        assert!(cut.start <= at && at + 6 <= cut.end, "{cut:?}");
        // No word cut: the a's are one word, so none of it (after a `…`).
        assert_eq!(cut.start, at);
        assert_eq!(cut.len(), 29, "a column for the `…`");
        let words = "one two three four five six needle and more words after it";
        let at = words.find("needle").unwrap();
        let cut = visible(words, at..at + 6, 30);
        assert_eq!(&words[cut], "five six needle and more word");
        // At the start of the line, nothing before it.
        assert_eq!(visible("needle and more", 0..6, 8), 0..8);
        // A wide glyph counts two columns.
        assert_eq!(visible("語 needle", 4..10, 12), 0..10);
        assert_eq!(visible("語 needle", 4..10, 9), 4..10);
    }
}
