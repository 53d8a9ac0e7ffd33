//! The list of stale copies over the pane, one row per passage, most stale
//! pages first; under it the selected passage's words on both sides, the
//! changed ones marked as `lineage stale` marks them (`[-old-]`, `{+new+}`).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::{cut_end, padded};
use crate::app::App;
use crate::keymap::Action;
use crate::paths;
use crate::stale::{list_height, words_lines};
use crate::theme::Theme;
use lineage_engine::{StaleKind, StaleLine, StaleView};

/// Columns a page's name keeps whatever the row's account of the passage
/// needs, and the columns that account keeps before the name is cut.
const NAME_LEAST: usize = 18;
const WHAT_LEAST: usize = 24;

pub(crate) fn render(app: &App, theme: &Theme, area: Rect, f: &mut Frame) {
    let Some(state) = &app.stale else {
        return;
    };
    let frame = super::ListFrame::over(area);
    let (rows, inner) = (frame.rows, frame.inner);
    let k = |a| app.keymap.first(a);
    let (select, back) = (k(Action::Select), k(Action::Back));
    let keys = [
        format!(" {select} open the page at the passage · {back} close"),
        format!(" {select} open · {back} close"),
    ];
    let (title, lines) = match &state.view {
        None => crate::help::waiting(
            "Stale copies",
            state.failed.as_deref(),
            "finding them",
            "looking up each copied passage in its origin's newest version",
            inner,
            theme,
        ),
        Some(v) => {
            let title = title(v, inner);
            let window = state.cursor.window(v.passages.len(), list_height(rows));
            // The names in one column as wide as the widest shown needs.
            let names = (window.clone())
                .map(|i| crate::glyphs::str_width(&name(&v.passages[i], usize::MAX)))
                .max()
                .unwrap_or(0);
            let mut lines: Vec<Line> = (window.clone())
                .map(|i| {
                    let line = row(&v.passages[i], theme, inner, names);
                    if i == state.cursor.selected {
                        line.style(theme.selected)
                    } else {
                        line
                    }
                })
                .collect();
            if lines.is_empty() {
                let none = match v.only {
                    Some(_) => " None: every passage it copied is as its origin has it now.",
                    None => " None: every copied passage is as its origin has it now.",
                };
                lines.push(Line::styled(none, theme.muted));
            } else if let Some(p) = v.passages.get(state.cursor.selected) {
                let room = rows.saturating_sub(lines.len()).max(words_lines(rows));
                lines.extend(words(p, theme, room, inner));
            }
            (title, lines)
        }
    };
    frame.draw(f, theme, title, lines, &keys);
}

/// The list's title: what was asked and how many passages.
fn title(v: &StaleView, inner: usize) -> String {
    let n = v.passages.len();
    let pages = {
        let mut ids: Vec<u32> = v.passages.iter().map(|p| p.id).collect();
        ids.dedup();
        ids.len()
    };
    let counted = match (n, pages) {
        (1, _) => "1 passage".to_string(),
        (n, 1) => format!("{n} passages"),
        (n, p) => format!("{n} passages in {p} pages"),
    };
    let afters = [format!(": {counted} "), " ".to_string()];
    match (v.only, v.passages.first()) {
        (Some(_), Some(p)) => super::titled(
            " Stale copies in ",
            &p.path,
            &format!(" v{}", p.version),
            &afters,
            inner,
        ),
        (Some(_), None) => " Stale copies in the page shown: none ".into(),
        (None, _) => cut_end(&format!(" Stale copies{}", afters[0]), inner),
    }
}

/// A passage's page and lines in at most `width` columns: the lines go
/// first where the page's name would be cut.
fn name(p: &StaleLine, width: usize) -> String {
    let at = match p.lines {
        [0, _] => String::new(),
        [a, b] if a == b => format!(" line {a}"),
        [a, b] => format!(" lines {a}–{b}"),
    };
    let version = format!(" v{}", p.version);
    let full = format!("{}{version}{at}", paths::shown(&p.path));
    if crate::glyphs::str_width(&full) <= width {
        return full;
    }
    paths::fit(&p.path, &version, width, 1)
}

/// A passage's row: its stale tokens, its page (in a column of `names`
/// columns where they fit), and what happened where.
fn row<'a>(p: &StaleLine, theme: &Theme, inner: usize, names: usize) -> Line<'a> {
    let figure = format!(" {:>5} ", p.stale_tokens);
    let (origin, v) = (&p.origin.0, p.origin.1);
    let what = match (p.kind, p.changed_in) {
        (StaleKind::Removed, Some(n)) => format!("removed in {} v{n}", paths::shown(origin)),
        (StaleKind::Changed, Some(n)) => format!("changed in {} v{n}", paths::shown(origin)),
        (_, n) => format!(
            "changed here{}, {} v{v} has it as copied",
            n.map_or(String::new(), |n| format!(" in v{n}")),
            paths::shown(origin)
        ),
    };
    let room = inner.saturating_sub(figure.chars().count());
    let what_w = crate::glyphs::str_width(&what) + 2;
    let name_room =
        (names.min(room.saturating_sub(what_w.min(WHAT_LEAST)))).max(NAME_LEAST.min(room));
    let name = padded(name(p, name_room), name_room);
    let rest = room.saturating_sub(crate::glyphs::str_width(&name));
    Line::from(vec![
        Span::styled(figure, theme.key),
        Span::raw(name),
        Span::styled(cut_end(&format!("  {what}"), rest), theme.muted),
    ])
}

/// The selected passage in `height` lines: a line naming it, then each
/// difference's two sides, as many as fit.
fn words<'a>(p: &StaleLine, theme: &Theme, height: usize, inner: usize) -> Vec<Line<'a>> {
    if height == 0 {
        return Vec::new();
    }
    let shown = (height.saturating_sub(1) / 2).min(p.differences.len());
    let n = p.differences.len();
    let of = match shown < n {
        true => format!(" ({shown} of {n} differences)"),
        false => String::new(),
    };
    let (origin, v) = (&p.origin.0, p.origin.1);
    let head = format!(
        " {} against {} v{v}{of}:",
        paths::shown(&p.path),
        paths::shown(origin)
    );
    let mut out = vec![Line::styled(cut_end(&head, inner), theme.title)];
    if p.differences.is_empty() {
        out.push(Line::styled(
            "  its words are not kept (history_budget)",
            theme.muted,
        ));
    }
    // The side that moved on is marked new, the other old.
    let origin_moved = matches!(p.kind, StaleKind::Changed | StaleKind::Removed);
    let (here, there) = match origin_moved {
        true => (OLD, NEW),
        false => (NEW, OLD),
    };
    let (old_style, new_style) = (theme.warning, theme.good);
    let style = |m: [&str; 2]| if m == OLD { old_style } else { new_style };
    for d in &p.differences[..shown] {
        for (label, side, marks) in [("here ", &d[0], here), ("there", &d[1], there)] {
            let at = format!("  {label} │ ");
            let room = inner.saturating_sub(at.chars().count());
            let mut spans = vec![Span::styled(at, theme.muted)];
            spans.extend(marked(side, marks, style(marks), room));
            out.push(Line::from(spans));
        }
    }
    out
}

/// How the words of the side that did not change are marked, and of the
/// one that did, as `lineage stale` and `git diff --word-diff` mark them.
const OLD: [&str; 2] = ["[-", "-]"];
const NEW: [&str; 2] = ["{+", "+}"];

/// One side's words on one line in `room` columns: the changed words
/// between `marks` in `style`, whole if they fit, the context either side
/// cut to what is left (the context before keeps its end).
fn marked<'a>(side: &[String; 3], marks: [&str; 2], style: Style, room: usize) -> Vec<Span<'a>> {
    let flat =
        |s: &str| paths::shown(&s.split_whitespace().collect::<Vec<_>>().join(" ")).into_owned();
    let lead = |s: &str| {
        if s.starts_with(char::is_whitespace) {
            " "
        } else {
            ""
        }
    };
    let trail = |s: &str| {
        if s.ends_with(char::is_whitespace) {
            " "
        } else {
            ""
        }
    };
    let before = format!("{}{}", flat(&side[0]), trail(&side[0]));
    let mid = format!("{}{}{}", marks[0], flat(&side[1]), marks[1]);
    let after = format!("{}{}", lead(&side[2]), flat(&side[2]));
    let w = crate::glyphs::str_width;
    if w(&mid) >= room {
        return vec![Span::styled(cut_end(&mid, room), style)];
    }
    let left = room - w(&mid);
    let (bw, aw) = (w(&before), w(&after));
    let (bw, aw) = if bw + aw <= left {
        (bw, aw)
    } else if bw <= left / 2 {
        (bw, left - bw)
    } else if aw <= left - left / 2 {
        (left - aw, aw)
    } else {
        (left / 2, left - left / 2)
    };
    vec![
        Span::raw(cut_start(&before, bw)),
        Span::styled(mid, style),
        Span::raw(cut_end(&after, aw)),
    ]
}

/// `s` in at most `width` columns: whole if it fits, else `…` and its end.
fn cut_start(s: &str, width: usize) -> String {
    use unicode_segmentation::UnicodeSegmentation;
    let w = crate::glyphs::str_width;
    if w(s) <= width {
        return s.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let mut kept: Vec<&str> = Vec::new();
    let mut used = 1;
    for g in s.graphemes(true).rev() {
        if used + w(g) > width {
            break;
        }
        used += w(g);
        kept.push(g);
    }
    kept.reverse();
    format!("…{}", kept.concat())
}
