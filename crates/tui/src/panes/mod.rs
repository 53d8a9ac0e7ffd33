//! Drawing: one file per pane, each a pure function of the state. The whole
//! screen is the status bar, the tab bar, the current pane, the key hints,
//! and the help overlay on top when open.

pub(crate) mod clusters;
pub(crate) mod copies;
pub(crate) mod diff;
pub(crate) mod documents;
pub(crate) mod events;
pub(crate) mod find;
pub(crate) mod origin;
pub(crate) mod shared;
pub(crate) mod stale;
pub(crate) mod status;
pub mod table;
pub(crate) mod tune;
pub(crate) mod versions;

use std::ops::Range;

use ratatui::Frame;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders};

use super::app::{App, Tab};
use super::layout;
use super::theme::Theme;

/// Draw the whole screen.
pub fn draw(app: &App, theme: &Theme, f: &mut Frame) {
    let s = layout::screen(f.area());
    status::render(app, theme, s.status, f);
    status::tabs(app, theme, s.tabs, f);
    match app.tab {
        Tab::Documents => documents::render(app, theme, s.body, f),
        Tab::Origin => origin::render(app, theme, s.body, f),
        Tab::Clusters => clusters::render(app, theme, s.body, f),
        Tab::Table => table::render(app, theme, s.body, f),
        Tab::Tune => tune::render(app, theme, s.body, f),
        Tab::Events => events::render(app, theme, s.body, f),
    }
    status::footer(app, theme, s.footer, f);
    if app.versions.is_some() {
        versions::render(app, theme, s.body, f);
    }
    if app.copies.is_some() {
        copies::render(app, theme, s.body, f);
    }
    if app.shared.is_some() {
        shared::render(app, theme, s.body, f);
    }
    if app.stale.is_some() {
        stale::render(app, theme, s.body, f);
    }
    if app.diff.is_some() {
        diff::render(app, theme, s.body, f);
    }
    if crate::find::is_open(app) {
        find::render(app, theme, s.body, f);
    }
    if app.tune.confirm.is_some() {
        tune::confirm(app, theme, s.body, f);
    }
    if let Some(text) = &app.event_detail {
        events::detail(text, theme, f.area(), f);
    }
    if app.help {
        status::help(app, theme, f.area(), f);
    }
}

/// A list drawn over the pane: its popup, the rows inside for the list
/// (above its blank line and line of keys), and its inner width.
pub(crate) struct ListFrame {
    popup: ratatui::layout::Rect,
    pub(crate) rows: usize,
    pub(crate) inner: usize,
}

impl ListFrame {
    pub(crate) fn over(area: ratatui::layout::Rect) -> ListFrame {
        let popup = crate::help::list_popup(area);
        ListFrame {
            popup,
            rows: crate::help::list_rows(popup),
            inner: popup.width.saturating_sub(2) as usize,
        }
    }

    /// Draw `title` and `lines`, then a blank line and the first of `keys`
    /// that fits.
    pub(crate) fn draw(
        &self,
        f: &mut Frame,
        theme: &Theme,
        title: String,
        mut lines: Vec<Line>,
        keys: &[String],
    ) {
        lines.push(Line::default());
        lines.push(Line::styled(first_fitting(keys, self.inner), theme.muted));
        overlay(f, theme, self.popup, title, lines);
    }
}

/// A table size as people read it, the same in every pane: its exact
/// spelling when that is three digits or fewer (`64MiB`), else to three
/// digits (`2.36MiB`, not `2419KiB` here and `2.36MiB` there). The Tune form
/// keeps the exact spelling, as it is typed.
pub(crate) fn size_label(s: &lineage_origin::TableSize) -> String {
    match s {
        lineage_origin::TableSize::Bytes(b) => {
            let exact = lineage_core::bytesize::format_bytes(*b);
            let digits = exact.chars().take_while(char::is_ascii_digit).count();
            if digits <= 3 {
                exact
            } else {
                lineage_core::bytesize::approx_bytes(*b)
            }
        }
        lineage_origin::TableSize::Unbounded => "unbounded".into(),
    }
}

/// `lines` in a bordered box at the top of `popup`, as tall as they need,
/// over what is under it.
pub(crate) fn overlay(
    f: &mut Frame,
    theme: &Theme,
    popup: ratatui::layout::Rect,
    title: String,
    lines: Vec<Line>,
) {
    let h = (lines.len() as u16 + 2).min(popup.height);
    let popup = ratatui::layout::Rect { height: h, ..popup };
    f.render_widget(ratatui::widgets::Clear, popup);
    f.render_widget(
        ratatui::widgets::Paragraph::new(lines)
            .block(block(theme, title, true))
            .style(theme.base),
        popup,
    );
}

/// A bordered block with a title; the border marks focus.
pub(crate) fn block<'a>(theme: &Theme, title: impl Into<Line<'a>>, focused: bool) -> Block<'a> {
    Block::new()
        .borders(Borders::ALL)
        .border_style(if focused { theme.key } else { theme.border })
        .title(title.into().style(theme.title))
}

/// `n` with thousands separators.
pub(crate) fn count(n: u64) -> String {
    lineage_core::bytesize::grouped(n)
}

/// `n` with thousands separators if that fits in `width` columns, else
/// short with a unit (`4.7M`, `12M`, `3.1G`), which always fits in 5.
pub(crate) fn count_in(n: u64, width: usize) -> String {
    let full = count(n);
    if full.len() <= width {
        return full;
    }
    // Thresholds where the smaller unit would round up to 1000.
    let (v, unit) = match n {
        0..999_500 => (n as f64 / 1e3, "k"),
        999_500..999_500_000 => (n as f64 / 1e6, "M"),
        _ => (n as f64 / 1e9, "G"),
    };
    if v < 9.95 {
        format!("{v:.1}{unit}")
    } else {
        format!("{v:.0}{unit}")
    }
}

/// `s` with spaces after it up to `width` columns: the columns after it
/// line up.
pub(crate) fn padded(mut s: String, width: usize) -> String {
    let w = crate::glyphs::str_width(&s);
    s.extend(std::iter::repeat_n(' ', width.saturating_sub(w)));
    s
}

/// `s` in at most `width` columns: whole if it fits, else its start and
/// `…` (a cut that shows it is one, where the edge would cut silently).
pub(crate) fn cut_end(s: &str, width: usize) -> String {
    use unicode_segmentation::UnicodeSegmentation;
    if crate::glyphs::str_width(s) <= width {
        return s.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for g in s.graphemes(true) {
        let w = crate::glyphs::width(g);
        if used + w + 1 > width {
            break;
        }
        used += w;
        out.push_str(g);
    }
    if width > 0 {
        out.push('…');
    }
    out
}

/// The first of `choices` (longest first) that fits in `width` columns,
/// else the last cut with `…`: a line of keys says less before it is cut.
pub(crate) fn first_fitting(choices: &[String], width: usize) -> String {
    (choices.iter())
        .find(|c| crate::glyphs::str_width(c) <= width)
        .cloned()
        .unwrap_or_else(|| cut_end(choices.last().map_or("", |c| c), width))
}

/// A list's title in `width` columns: `before`, the page's name with
/// `suffix` (` v2`), then the first of `afters` (longest first) that leaves
/// the name whole, else the last with the name cut in its middle.
pub(crate) fn titled(
    before: &str,
    path: &str,
    suffix: &str,
    afters: &[String],
    width: usize,
) -> String {
    let whole = crate::glyphs::str_width(&crate::paths::shown(path)) + suffix.len();
    let w = crate::glyphs::str_width;
    let room = |after: &str| width.saturating_sub(w(before) + w(after));
    let after = (afters.iter())
        .find(|a| room(a) >= whole)
        .or(afters.last())
        .map_or("", |a| a.as_str());
    let name = crate::paths::fit(path, suffix, room(after), 1);
    format!("{before}{name}{after}")
}

pub(crate) use lineage_engine::token_bytes;

/// One visual line `line` of `text`, styled by `overlays` (byte ranges, in
/// order of precedence: later ones patch earlier ones). Control characters
/// show as spaces so the width matches the wrap; what a paragraph's join
/// does not draw (`origin::joined`) is left out, as the wrap leaves it out.
pub(crate) fn styled_line<'a>(
    text: &'a str,
    line: Range<usize>,
    base: Style,
    overlays: &[(Range<usize>, Style)],
) -> Line<'a> {
    let unseen = crate::origin::unseen_in(text, line.clone());
    let mut cuts = vec![line.start, line.end];
    let bounds = overlays.iter().map(|(r, _)| r).chain(&unseen);
    for r in bounds {
        for p in [r.start, r.end] {
            if line.start < p && p < line.end && text.is_char_boundary(p) {
                cuts.push(p);
            }
        }
    }
    cuts.sort_unstable();
    cuts.dedup();
    let drawn = |w: &&[usize]| !unseen.iter().any(|u| u.start <= w[0] && w[0] < u.end);
    let spans = cuts.windows(2).filter(drawn).map(|w| {
        let style = overlays
            .iter()
            .filter(|(r, _)| r.start <= w[0] && w[0] < r.end)
            .fold(base, |s, (_, o)| s.patch(*o));
        let piece = &text[w[0]..w[1]];
        // Control and bidirectional formatting characters are drawn as
        // spaces: raw, they would move the cursor or reorder the line.
        let inert = |c: char| c.is_control() || lineage_source::name::is_bidi_control(c);
        if piece.chars().any(inert) {
            let clean: String = piece
                .chars()
                .map(|c| if inert(c) { ' ' } else { c })
                .collect();
            Span::styled(clean, style)
        } else {
            Span::styled(piece, style)
        }
    });
    Line::from(spans.collect::<Vec<_>>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_fit_their_column() {
        assert_eq!(count_in(4_718_592, 9), "4,718,592");
        assert_eq!(count_in(4_718_592, 7), "4.7M");
        assert_eq!(count_in(47_185_920, 7), "47M");
        assert_eq!(count_in(999_999, 6), "1.0M");
        assert_eq!(count_in(12_345, 5), "12k");
        assert_eq!(count_in(3_100_000_000, 7), "3.1G");
        for n in [
            0u64,
            9,
            999,
            12_345,
            999_999,
            4_718_592,
            u64::from(u32::MAX),
        ] {
            assert!(count_in(n, 5).len() <= 5, "{n}: {}", count_in(n, 5));
        }
    }

    #[test]
    fn cut_end_marks_the_cut() {
        assert_eq!(cut_end("current", 7), "current");
        assert_eq!(cut_end("text not kept", 8), "text no…");
        assert_eq!(cut_end("日本語", 4), "日…");
        assert_eq!(cut_end("abc", 0), "");
    }

    #[test]
    fn counts_and_cut_paths() {
        assert_eq!(count(0), "0");
        assert_eq!(count(1234567), "1,234,567");
        assert_eq!(count(100), "100");
    }

    #[test]
    fn overlays_split_a_line_and_patch_in_order() {
        let t = "ab\tcdef";
        let red = Style::new().fg(ratatui::style::Color::Red);
        let bold = Style::new().add_modifier(ratatui::style::Modifier::BOLD);
        let l = styled_line(t, 0..7, Style::new(), &[(1..5, red), (4..9, bold)]);
        let parts: Vec<(String, Style)> = l
            .spans
            .iter()
            .map(|s| (s.content.to_string(), s.style))
            .collect();
        assert_eq!(
            parts,
            [
                ("a".to_string(), Style::new()),
                ("b c".to_string(), red),
                ("d".to_string(), red.patch(bold)),
                ("ef".to_string(), bold),
            ]
        );
    }
}
