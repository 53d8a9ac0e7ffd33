//! Events: new versions, deletions, skipped files, errors and notices,
//! newest first.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Clear, Gauge, Paragraph, Row, Table};

use super::{block, count};
use crate::app::App;
use crate::theme::Theme;
use crate::{glyphs, layout, paths};
use lineage_engine::{EventKind, Progress};

/// `HH:MM:SS` (UTC) of a time in milliseconds since the epoch.
pub(crate) fn clock(ms: i64) -> String {
    let s = ms.div_euclid(1000).rem_euclid(86_400);
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// When `ms` (milliseconds since the epoch) was, as short as tells it:
/// [`clock`] on `today` (days since the epoch, UTC; None takes every time
/// for today's), else [`date_time`] (a time read from a file's date after
/// a restart may be of any day).
pub(crate) fn when(ms: i64, today: Option<i64>) -> String {
    match today {
        Some(day) if ms.div_euclid(86_400_000) != day => date_time(ms.saturating_mul(1_000_000)),
        _ => clock(ms),
    }
}

pub(crate) use lineage_core::civil::date_time;

/// A version taken mostly from its own page's earlier versions says so.
const OWN: &str = "an earlier version";

/// An event's kind, its style, and what it says in full; names, and
/// messages that hold them raw, as the TUI draws them ([`paths::shown`]: a
/// newline in a name does not cut the line).
pub(crate) fn describe(kind: &EventKind, theme: &Theme) -> (&'static str, Style, String) {
    let shown = |p: &str| paths::shown(p).into_owned();
    match kind {
        EventKind::Version {
            path,
            version,
            fresh_percent,
            dominant_path,
            ..
        } => (
            "version",
            theme.good,
            format!(
                "{} v{version}: {fresh_percent:.1}% fresh{}",
                shown(path),
                match dominant_path.as_deref() {
                    None => String::new(),
                    // Its own earlier version, as Documents says.
                    Some(d) if d == path => format!(", mostly from {OWN}"),
                    Some(d) => format!(", mostly from {}", shown(d)),
                }
            ),
        ),
        EventKind::Deleted { path } => ("deleted", theme.warning, shown(path)),
        EventKind::Renamed { from, to, .. } => (
            "renamed",
            theme.title,
            format!("{} → {}", shown(from), shown(to)),
        ),
        EventKind::Skipped { path, reason } => (
            "skipped",
            theme.muted,
            format!("{}: {}", shown(path), shown(reason)),
        ),
        EventKind::Error(m) => ("error", theme.error, shown(m)),
        EventKind::Notice(m) => ("notice", theme.title, shown(m)),
    }
}

/// [`describe`]'s text in `width` columns: whole where it fits, else the
/// names cut in their middle (what tells them apart kept, as everywhere)
/// and what is left cut with `…`; enter opens the event in full.
fn described_in(kind: &EventKind, text: String, width: usize) -> String {
    let w = glyphs::str_width;
    if w(&text) <= width {
        return text;
    }
    let fitted = match kind {
        EventKind::Version {
            path,
            version,
            fresh_percent,
            dominant_path,
            ..
        } => {
            let mid = format!(": {fresh_percent:.1}% fresh");
            let suffix = format!(" v{version}");
            match dominant_path {
                None => {
                    let name = paths::fit(path, &suffix, width.saturating_sub(w(&mid)), 1);
                    format!("{name}{mid}")
                }
                Some(d) if d == path => {
                    let name = paths::fit(path, &suffix, width.saturating_sub(w(&mid) + 3), 1);
                    let left = |joint: &str| width.saturating_sub(w(&name) + w(&mid) + joint.len());
                    match [", mostly from ", ", from "]
                        .into_iter()
                        .find(|j| left(j) >= OWN.len())
                    {
                        Some(joint) => format!("{name}{mid}{joint}{OWN}"),
                        None => format!("{name}{mid}, …"),
                    }
                }
                Some(d) => {
                    // The page's name first, whole if it can be; its origin
                    // in what is left, or `…` where too little is.
                    const ORIGIN_LEAST: usize = 10;
                    let room = width.saturating_sub(w(&mid) + ", …".len());
                    let name = paths::fit(path, &suffix, room, 1);
                    let left = |joint: &str| width.saturating_sub(w(&name) + w(&mid) + joint.len());
                    // The folders that tell it from the page stay.
                    let keep = paths::tails(&[path, d])[1];
                    match [", mostly from ", ", from "]
                        .into_iter()
                        .find(|j| left(j) >= ORIGIN_LEAST)
                    {
                        Some(joint) => {
                            let origin = paths::fit(d, "", left(joint), keep);
                            format!("{name}{mid}{joint}{origin}")
                        }
                        None => format!("{name}{mid}, …"),
                    }
                }
            }
        }
        EventKind::Renamed { from, to, .. } => {
            let room = width.saturating_sub(3);
            let from = paths::fit(from, "", room / 2, 1);
            let to = paths::fit(to, "", room.saturating_sub(w(&from)), 1);
            format!("{from} → {to}")
        }
        EventKind::Deleted { path } => paths::fit(path, "", width, 1),
        _ => text,
    };
    super::cut_end(&fitted, width)
}

/// An event's whole text over the middle of the screen, wrapped.
pub(crate) fn detail(text: &str, theme: &Theme, area: Rect, f: &mut Frame) {
    let popup = crate::help::popup(area);
    let width = popup.width.saturating_sub(2) as usize;
    let lines: Vec<Line> = crate::help::wrap(text, width.max(1))
        .into_iter()
        .map(Line::raw)
        .collect();
    let h = (lines.len() as u16 + 2).min(popup.height);
    let popup = Rect { height: h, ..popup };
    f.render_widget(Clear, popup);
    f.render_widget(
        Paragraph::new(lines)
            .block(block(theme, " Event (esc to close) ", true))
            .style(theme.base),
        popup,
    );
}

/// A time to wait, as a person says it.
fn seconds(s: u64) -> String {
    match s {
        0..90 => format!("{s} s"),
        90..5400 => format!("{} min", s.div_ceil(60)),
        _ => format!("{} h", s.div_ceil(3600)),
    }
}

/// `p` as a bar, its words on it, and the time left at its rate.
fn gauge(p: &Progress, theme: &Theme, area: Rect, f: &mut Frame) {
    let mut label = crate::activity::progress_text(p);
    if let Some(rate) = p.per_sec.filter(|&r| r > 0) {
        let left = p.total.saturating_sub(p.done).div_ceil(rate);
        label += &format!(" · about {} left", seconds(left));
    }
    f.render_widget(
        Gauge::default()
            .ratio((p.done as f64 / p.total.max(1) as f64).clamp(0.0, 1.0))
            .label(label)
            .gauge_style(theme.gauge),
        area,
    );
}

pub(crate) fn render(app: &App, theme: &Theme, area: Rect, f: &mut Frame) {
    let events = app.snapshot.as_ref().map_or(&[][..], |s| &s.events[..]);
    // A long step (a repository's history read, a first index) as a bar
    // over the list, once its rate is measured: how far, how fast, how
    // long still.
    let step = app.snapshot.as_ref().and_then(|s| s.progress.as_ref());
    let area = match step.filter(|p| p.per_sec.is_some() && area.height > 6) {
        Some(p) => {
            let [bar, rest] =
                Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(area);
            gauge(p, theme, bar, f);
            rest
        }
        None => area,
    };
    let (_, rows_area) = layout::table_rows(area);
    let window = app.events.window(events.len(), rows_area.height as usize);
    // The time column as wide as the rows shown need (a date takes more).
    let times: Vec<String> = (events[window.clone()].iter())
        .map(|e| when(e.at_ms, app.today))
        .collect();
    let time_w = times.iter().map(|t| t.len()).max().unwrap_or(0).max(8);
    // The text's column: what the time and the kind leave, and their gaps.
    let what_w = (rows_area.width as usize).saturating_sub(time_w + 7 + 2);
    let rows = window.zip(times).map(|(i, time)| {
        let e = &events[i];
        let (kind, style, what) = describe(&e.kind, theme);
        let what = described_in(&e.kind, what, what_w);
        let row = Row::new([
            Cell::from(Span::styled(time, theme.muted)),
            Cell::from(Span::styled(kind, style)),
            Cell::from(what),
        ]);
        if i == app.events.selected {
            row.style(theme.selected)
        } else {
            row
        }
    });
    // Events are numbered as they happen: the newest's number says how many
    // there were, and whether older ones left the list.
    let (kept, all) = (events.len() as u64, events.first().map_or(0, |e| e.n));
    let title = if all > kept {
        format!(" Events (the newest {} of {}) ", count(kept), count(all))
    } else {
        format!(" Events ({}, newest first) ", count(kept))
    };
    let table = Table::new(
        rows,
        [
            Constraint::Length(time_w as u16),
            Constraint::Length(7),
            Constraint::Min(10),
        ],
    )
    .header(Row::new(["time", "what", ""].map(Cell::from)).style(theme.header))
    .block(block(theme, title, true));
    f.render_widget(table, area);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A new version taken mostly from the page's own earlier one says so,
    /// as Documents does, rather than naming the page as its own origin.
    #[test]
    fn a_version_mostly_from_its_own_page_says_an_earlier_version() {
        let theme = Theme::new(lineage_config::ThemeName::Dark, true);
        let event = |dominant: &str| EventKind::Version {
            path: "aws/iam/create-user.rst".into(),
            version: 2,
            id: 9,
            fresh_percent: 12.0,
            dominant_path: Some(dominant.into()),
            origins: Vec::new(),
        };
        let (_, _, text) = describe(&event("aws/iam/create-user.rst"), &theme);
        assert_eq!(
            text,
            "aws/iam/create-user.rst v2: 12.0% fresh, mostly from an earlier version"
        );
        // Fitted to a narrow row: the words kept whole, or `…`.
        let own = event("aws/iam/create-user.rst");
        let (_, _, text) = describe(&own, &theme);
        for width in [40, 60] {
            let fitted = described_in(&own, text.clone(), width);
            assert!(
                fitted.ends_with("from an earlier version") || fitted.ends_with(", …"),
                "{fitted}"
            );
            assert!(glyphs::str_width(&fitted) <= width, "{width}: {fitted}");
        }
        // Room for the shorter joint: the words, not the page's own path.
        let fitted = described_in(&own, text.clone(), 66);
        assert!(fitted.ends_with(", from an earlier version"), "{fitted}");
        let (_, _, text) = describe(&event("aws/iam/get-user.rst"), &theme);
        assert!(text.ends_with("mostly from aws/iam/get-user.rst"), "{text}");
    }

    #[test]
    fn clock_is_utc_time_of_day() {
        assert_eq!(super::clock(0), "00:00:00");
        assert_eq!(super::clock(1_700_000_000_123), "22:13:20");
        // Another day than today shows its date.
        let day = 1_700_000_000_123 / 86_400_000;
        assert_eq!(super::when(1_700_000_000_123, Some(day)), "22:13:20");
        assert_eq!(super::when(1_700_000_000_123, None), "22:13:20");
        assert_eq!(
            super::when(1_700_000_000_123, Some(day + 2)),
            "2023-11-14 22:13"
        );
    }

    /// A name's bidirectional controls reach no event line (they would
    /// reorder it), as in every other pane.
    #[test]
    fn names_in_events_are_drawn_inert() {
        let theme = Theme::new(lineage_config::ThemeName::Dark, true);
        let name = "invoice\u{202e}dm.exe.md".to_string();
        for kind in [
            EventKind::Deleted { path: name.clone() },
            EventKind::Skipped {
                path: name.clone(),
                reason: "binary".into(),
            },
        ] {
            let (_, _, what) = describe(&kind, &theme);
            assert!(what.starts_with("invoice\\u{202e}dm.exe.md"), "{what}");
        }
    }

    /// A newline or a zero-width space in a name, or in a message naming
    /// a file, shows escaped: it neither cuts the line nor hides.
    #[test]
    fn hidden_characters_in_events_show_escaped() {
        let theme = Theme::new(lineage_config::ThemeName::Dark, true);
        let name = "a\nb\u{200b}.md".to_string();
        for kind in [
            EventKind::Deleted { path: name.clone() },
            EventKind::Skipped {
                path: name.clone(),
                reason: format!("cannot read {name}"),
            },
            EventKind::Error(format!("cannot read {name}")),
            EventKind::Notice(format!("cannot read {name}")),
        ] {
            let (_, _, what) = describe(&kind, &theme);
            assert!(what.contains("a\\nb\\u{200b}.md"), "{what}");
            assert!(!what.contains(['\n', '\u{200b}']), "{what}");
        }
    }

    /// A name that is not UTF-8 reads as it does in Documents (its bytes
    /// as `\xNN`), not as the Latin-1 letters of its lossless key.
    #[test]
    fn names_that_are_not_utf8_read_as_in_documents() {
        let theme = Theme::new(lineage_config::ThemeName::Dark, true);
        let name = lineage_source::name::encode(b"caf\xe9.md");
        let (_, _, what) = describe(&EventKind::Deleted { path: name.clone() }, &theme);
        assert_eq!(what, "caf\\xe9.md");
        assert_eq!(what, crate::paths::shown(&name));
    }
}
