//! What the page shown changed since its predecessor, over the Origin
//! pane: one row per passage removed, new or moved, with its lines and
//! first words; under the list the selected passage's words.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::{cut_end, first_fitting};
use crate::app::App;
use crate::diff::{list_height, words_lines};
use crate::keymap::Action;
use crate::paths;
use crate::theme::Theme;
use lineage_engine::{DiffKind, DiffPassage, DiffView, How};

pub(crate) fn render(app: &App, theme: &Theme, area: Rect, f: &mut Frame) {
    let Some(state) = &app.diff else {
        return;
    };
    let frame = super::ListFrame::over(area);
    let (rows, inner) = (frame.rows, frame.inner);
    let k = |a| app.keymap.first(a);
    let (select, back) = (k(Action::Select), k(Action::Back));
    let keys = [
        format!(" {select} open it where it stands · {back} close"),
        format!(" {select} open · {back} close"),
    ];
    let (title, lines) = match &state.view {
        None => crate::help::waiting(
            "Changed",
            state.failed.as_deref(),
            "comparing",
            "diffing the page's tokens with its predecessor's",
            inner,
            theme,
        ),
        Some(v) => {
            let mut lines = vec![Line::styled(first_fitting(&since(v), inner), theme.muted)];
            if let Some(why) = &v.failed {
                lines.extend(crate::help::failed_lines(why, inner, theme));
            }
            let height = list_height(rows).saturating_sub(1);
            let window = state.cursor.window(v.passages.len(), height);
            for i in window.clone() {
                let line = row(&v.passages[i], theme, inner);
                lines.push(match i == state.cursor.selected {
                    true => line.style(theme.selected),
                    false => line,
                });
            }
            if v.passages.is_empty() && v.failed.is_none() {
                lines.push(Line::styled(" Nothing changed.", theme.muted));
            } else if let Some(p) = v.passages.get(state.cursor.selected) {
                let room = rows.saturating_sub(lines.len()).max(words_lines(rows));
                lines.extend(words(p, room, inner));
            }
            let afters = [format!(" v{} changed ", v.version), " ".to_string()];
            let title = super::titled(" ", &v.path, "", &afters, inner);
            (title, lines)
        }
    };
    frame.draw(f, theme, title, lines, &keys);
}

/// The line naming the predecessor and the counts, longest first (the
/// last, cut to fit, keeps the counts).
fn since(v: &DiffView) -> Vec<String> {
    let [kept, removed, new, moved] = v.counts.map(|n| super::count(u64::from(n)));
    let counts = format!("{kept} kept, {removed} removed, {new} new, {moved} moved");
    match &v.predecessor {
        None => vec![format!(
            " no predecessor: a first version, all {new} tokens new"
        )],
        Some((_, path, version, how)) => {
            let why = match how {
                How::Earlier | How::Renamed { .. } => "previous version".into(),
                How::Folder => "previous version folder".into(),
                How::Rule => "[[predecessor]] rule".into(),
                How::Release { tag, .. } => format!("release {}", paths::shown(tag)),
            };
            let name = format!("{} v{version}", paths::shown(path));
            vec![
                format!(" since {name} ({why}): {counts}"),
                format!(" since {name}: {counts}"),
                format!(" {counts} since {name}"),
            ]
        }
    }
}

/// A passage's row: its kind, lines and first words.
fn row<'a>(p: &DiffPassage, theme: &Theme, inner: usize) -> Line<'a> {
    let (kind, style) = match p.kind {
        DiffKind::Removed => ("removed", theme.warning),
        DiffKind::New => ("new", theme.good),
        DiffKind::Moved => ("moved", theme.key),
    };
    let [a, b] = p.lines;
    let at = match a == b {
        true => format!("line {a}"),
        false => format!("lines {a}–{b}"),
    };
    let head = format!(" {kind:<7} {at:<13} │ ");
    let room = inner.saturating_sub(crate::glyphs::str_width(&head));
    Line::from(vec![
        Span::styled(head, style),
        Span::raw(cut_end(&flat(&p.words), room)),
    ])
}

/// The selected passage's words, wrapped, in `height` lines.
fn words<'a>(p: &DiffPassage, height: usize, inner: usize) -> Vec<Line<'a>> {
    let mark = match p.kind {
        DiffKind::Removed => "-",
        DiffKind::New => "+",
        DiffKind::Moved => "~",
    };
    let width = inner.saturating_sub(5);
    let mut wrapped = crate::help::wrap(&flat(&p.words), width);
    if wrapped.len() > height {
        wrapped.truncate(height);
        if let Some(last) = wrapped.last_mut() {
            *last = cut_end(&format!("{last} …"), width);
        }
    }
    (wrapped.into_iter())
        .map(|l| Line::raw(format!("  {mark} │ {l}")))
        .collect()
}

/// Words on one line, shown as names are (control characters escaped).
fn flat(s: &str) -> String {
    paths::shown(&s.split_whitespace().collect::<Vec<_>>().join(" ")).into_owned()
}

#[cfg(test)]
mod tests {
    /// Counts are written as every count on screen is, with separators
    /// (`10410 kept` beside `11,945 tokens` read as another kind of number).
    #[test]
    fn the_counts_have_separators() {
        let mut v = crate::tests::fixture::diff_view();
        v.counts = [10_410, 802, 1_496, 39];
        let lines = super::since(&v);
        assert!(
            lines[0].contains("10,410 kept, 802 removed, 1,496 new, 39 moved"),
            "{lines:?}"
        );
    }
}
