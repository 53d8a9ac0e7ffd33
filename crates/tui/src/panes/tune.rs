//! Tune: the form of settings beside the live ones, the shadow run's
//! progress, and its results: tuned against live, or DO and TF against table
//! size for a sweep.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Cell, Chart, Dataset, Gauge, GraphType, Paragraph, Row, Table};

use super::{block, count, count_in, size_label};
use crate::app::{App, Input};
use crate::keymap::Action;
use crate::theme::Theme;
use crate::tune::{FIELDS, Field, RunKind, Series};
use crate::{glyphs, layout};
use lineage_engine::ShadowResult;
use lineage_origin::{Params, TableSize};

pub(crate) fn render(app: &App, theme: &Theme, area: Rect, f: &mut Frame) {
    let a = layout::tune(area);
    let t = &app.tune;
    let live = app.snapshot.as_ref().map(|s| &s.params);
    let live_value = |field: Field| live.map_or(String::new(), |p| setting(p, field));
    let lines: Vec<Line> = FIELDS
        .iter()
        .enumerate()
        .map(|(i, &field)| {
            let value = match &app.input {
                Some(Input::Field(f, text)) if *f == field => {
                    let (head, tail) = crate::paths::typed_at(text, app.caret, 40);
                    let style = super::status::typed_style(app, theme);
                    Span::styled(format!("{head}▏{tail}"), style)
                }
                _ if field == Field::Parameter && !t.has_parameter() => {
                    Span::styled("—", theme.muted)
                }
                _ if field.choices().is_some() => Span::raw(format!("‹ {} ›", t.value(field))),
                _ => Span::raw(t.value(field).to_string()),
            };
            let pad = 16usize.saturating_sub(value.width());
            let line = Line::from(vec![
                Span::styled(format!(" {:<13}", field.label()), theme.header),
                value,
                Span::raw(" ".repeat(pad)),
                Span::styled(format!("live: {}", live_value(field)), theme.muted),
            ]);
            if i == t.focus {
                line.style(theme.selected)
            } else {
                line
            }
        })
        .collect();
    let k = |a| app.keymap.first(a);
    let title = format!(
        " Tune · {} apply · {} sweep · {} adopt ",
        k(Action::Apply),
        k(Action::Sweep),
        k(Action::Adopt)
    );
    // What the focused field trades, in the form's bottom border.
    let room = a.form.width.saturating_sub(2) as usize;
    let trade = super::cut_end(&format!(" {} ", t.field().trade()), room);
    let trade = Line::styled(trade, theme.muted);
    f.render_widget(
        Paragraph::new(lines).block(block(theme, title, true).title_bottom(trade)),
        a.form,
    );

    let update = t.update.as_ref();
    if let Some(e) = t.error.as_ref().or(update.and_then(|u| u.error.as_ref())) {
        f.render_widget(Line::styled(format!(" {e}"), theme.error), a.progress);
    } else if let Some(m) = &t.message {
        f.render_widget(Line::styled(format!(" {m}"), theme.good), a.progress);
    } else if t.kind.is_some() {
        let (done, total) = update.map_or((0, 1), |u| (u.done, u.total.max(1)));
        let state = if t.running() { "replaying" } else { "done" };
        let mut label = format!("generation {} · {state} {done}/{total}", t.generation);
        if t.running() {
            label += &format!(" · {} stops it", app.keymap.first(Action::Back));
        }
        f.render_widget(
            Gauge::default()
                .ratio((done as f64 / total as f64).clamp(0.0, 1.0))
                .label(label)
                .gauge_style(theme.gauge),
            a.progress,
        );
    }

    let results = update.map_or(&[][..], |u| &u.results[..]);
    match &t.kind {
        // Wrapped where it is narrow, not cut.
        None => f.render_widget(
            Paragraph::new(Line::styled(
                "apply: replay the whole history with these settings beside the live ones",
                theme.muted,
            ))
            .wrap(ratatui::widgets::Wrap { trim: true })
            .block(block(theme, " Results ", false)),
            a.results,
        ),
        Some(RunKind::Compare) => compare(results, theme, a.results, f),
        Some(RunKind::Sweep { sizes, series }) if t.sweep_table => {
            let k = |a| app.keymap.first(a);
            let keys = format!(
                " {}/{} pick a row · {} into the form · {} chart ",
                k(Action::PageUp),
                k(Action::PageDown),
                k(Action::TakePoint),
                k(Action::SweepView)
            );
            sweep_table(results, sizes, series, t.point, &keys, theme, a.results, f)
        }
        Some(RunKind::Sweep { sizes, series }) => {
            let keys = format!(" {} numbers ", app.keymap.first(Action::SweepView));
            sweep(results, sizes, series, &keys, theme, a.results, f)
        }
    }
}

/// What `p` sets for a field of the form, as written (the selector whole,
/// with its parameter; the parameter field itself says nothing more).
fn setting(p: &Params, field: Field) -> String {
    match field {
        Field::TableSize => p.table_size.to_string(),
        Field::Selector => p.selector.to_string(),
        Field::Parameter => String::new(),
        Field::Eviction => p.eviction.to_string(),
        Field::Estimation => p.estimation.to_string(),
        Field::BridgeLimit => p.bridge_limit.to_string(),
        Field::K => p.k.to_string(),
    }
}

/// Adopt's question over the pane: what changes, what it costs, the keys.
pub(crate) fn confirm(app: &App, theme: &Theme, area: Rect, f: &mut Frame) {
    let (Some(p), Some(snap)) = (&app.tune.confirm, &app.snapshot) else {
        return;
    };
    let live = &snap.params;
    let mut lines = vec![Line::styled(" Make these the live settings?", theme.title)];
    let mut any = false;
    for field in FIELDS {
        let (was, now) = (setting(live, field), setting(p, field));
        if was == now {
            continue;
        }
        any = true;
        lines.push(Line::from(vec![
            Span::styled(format!("   {:<13}", field.label()), theme.header),
            Span::styled(was, theme.muted),
            Span::raw(" → "),
            Span::styled(now, theme.key),
        ]));
    }
    if !any {
        lines.push(Line::styled(
            "   (the same as the live settings)",
            theme.muted,
        ));
    }
    lines.push(Line::raw(format!(
        " The index's {} versions are re-processed with them from cached \
         fingerprints; no file is read.",
        count(snap.versions)
    )));
    lines.push(Line::default());
    let file = app.tune.config_file.as_ref().map_or_else(
        || "a config file (none found)".to_string(),
        |f| crate::paths::shown_path(f),
    );
    // A save writes what the person changed, for this folder only.
    let keys = app.tune.to_save(p);
    let save = if keys.is_empty() {
        " adopt (nothing to save: the settings the view started with)   ".to_string()
    } else {
        format!(
            " adopt and save {} for {} in {file}   ",
            keys.join(", "),
            app.tune.folder_shown()
        )
    };
    lines.push(Line::from(vec![
        Span::styled(" enter", theme.key),
        Span::raw(" adopt   "),
        Span::styled("s", theme.key),
        Span::raw(save),
        Span::styled("esc", theme.key),
        Span::raw(" cancel"),
    ]));
    if let Some(flags) = app.tune.outranking(&keys) {
        lines.push(Line::styled(
            format!(" Given on the command line, {flags} the file."),
            theme.warning,
        ));
    }
    let popup = crate::help::popup(area);
    let width = popup.width.saturating_sub(2) as usize;
    let wrapped: Vec<Line> = lines
        .into_iter()
        .flat_map(|l| {
            if l.width() <= width {
                vec![l]
            } else {
                let text: String = l.spans.iter().map(|s| s.content.as_ref()).collect();
                crate::help::wrap(&text, width.max(1))
                    .into_iter()
                    .map(|t| Line::styled(t, l.style))
                    .collect()
            }
        })
        .collect();
    let h = (wrapped.len() as u16 + 2).min(popup.height);
    let popup = Rect { height: h, ..popup };
    f.render_widget(ratatui::widgets::Clear, popup);
    f.render_widget(
        Paragraph::new(wrapped)
            .block(block(theme, " Adopt ", true))
            .style(theme.base),
        popup,
    );
}

/// A run's settings, the selector and size (what sweeps vary) first.
fn settings(p: &Params) -> String {
    format!(
        "{} {} {} {} T={} k={}",
        p.selector,
        size_label(&p.table_size),
        p.eviction,
        p.estimation,
        p.bridge_limit,
        p.k
    )
}

/// Widths of the results' hits and evictions columns.
const HITS: usize = 8;
const EVICTIONS: usize = 9;
/// Columns the settings keep while they are shown (whole words only).
const SETTINGS_LEAST: usize = 12;

/// A column of the comparison: its header, width, what a row shows, and
/// its rank: where the width runs short the highest ranks are hidden first
/// (a cut number read `0.00` for `100.00`), and the pane says which, as
/// htop and bottom drop a column.
struct Column {
    header: &'static str,
    width: usize,
    rank: usize,
    value: fn(&ShadowResult) -> String,
}

const COLUMNS: [Column; 7] = [
    Column {
        header: "ssr %",
        width: 6,
        rank: 3,
        value: |r| format!("{:.2}", r.ssr),
    },
    Column {
        header: "DO %",
        width: 6,
        rank: 0,
        value: |r| format!("{:.2}", r.dominant_origin),
    },
    Column {
        header: "TF %",
        width: 6,
        rank: 1,
        value: |r| format!("{:.2}", r.token_freshness),
    },
    Column {
        header: "overall",
        width: 7,
        rank: 2,
        value: |r| format!("{:.2}", r.overall),
    },
    // Shortened with a unit where the separators do not fit (a cut
    // number read `,311,234`).
    Column {
        header: "hits",
        width: HITS,
        rank: 4,
        value: |r| count_in(r.hits, HITS),
    },
    Column {
        header: "evictions",
        width: EVICTIONS,
        rank: 5,
        value: |r| count_in(r.evictions, EVICTIONS),
    },
    Column {
        header: "secs",
        width: 6,
        rank: 6,
        value: |r| format!("{:.1}", r.seconds),
    },
];
/// How many of [`COLUMNS`] (by rank) are always shown: DO, TF, overall.
const ALWAYS: usize = 3;

/// `s` in `width` columns by whole words, `…` for the rest: a setting's
/// figure is never cut (`256KiB l` read as a size of 256KiB and more).
fn words_in(s: &str, width: usize) -> String {
    if crate::glyphs::str_width(s) <= width {
        return s.to_string();
    }
    let mut out = String::new();
    for w in s.split(' ') {
        let next = if out.is_empty() {
            w.to_string()
        } else {
            format!("{out} {w}")
        };
        if crate::glyphs::str_width(&next) + 1 > width {
            break;
        }
        out = next;
    }
    out + "…"
}

/// Live and tuned side by side: the row's name and DO, TF and overall
/// always; the settings, ssr, hits, evictions and seconds while they fit.
fn compare(results: &[ShadowResult], theme: &Theme, area: Rect, f: &mut Frame) {
    let room = area.width.saturating_sub(2) as usize;
    let names = 5;
    let kept = |n: usize| COLUMNS.iter().filter(move |c| c.rank < n);
    let used = |n: usize| names + kept(n).map(|c| c.width + 1).sum::<usize>();
    // The most columns that fit; the settings get what they leave, when
    // that is enough for their first words.
    let mut shown = COLUMNS.len();
    while shown > ALWAYS && used(shown) + 1 + SETTINGS_LEAST > room {
        shown -= 1;
    }
    let settings_w = room.saturating_sub(used(shown) + 1);
    let with_settings = settings_w >= SETTINGS_LEAST;
    let right = |s: String| Cell::from(Line::from(s).right_aligned());
    let mut header = vec![Cell::from("")];
    if with_settings {
        header.push(Cell::from("settings"));
    }
    header.extend(kept(shown).map(|c| right(c.header.to_string())));
    let rows = results.iter().zip(["live", "tuned"]).map(|(r, name)| {
        let mut cells = vec![Cell::from(Span::styled(name, theme.key))];
        if with_settings {
            cells.push(Cell::from(words_in(&settings(&r.params), settings_w)));
        }
        cells.extend(kept(shown).map(|c| right((c.value)(r))));
        Row::new(cells)
    });
    let mut widths = vec![Constraint::Length(names as u16)];
    if with_settings {
        widths.push(Constraint::Length(settings_w as u16));
    }
    widths.extend(kept(shown).map(|c| Constraint::Length(c.width as u16)));
    let mut hidden: Vec<&str> = (COLUMNS.iter())
        .filter(|c| c.rank >= shown)
        .map(|c| c.header)
        .collect();
    if !with_settings {
        hidden.insert(0, "settings");
    }
    let mut block = block(theme, " Results: tuned beside live ", false);
    if !hidden.is_empty() {
        block = block.title_bottom(
            Line::styled(format!(" not shown: {} ", hidden.join(", ")), theme.muted)
                .right_aligned(),
        );
    }
    f.render_widget(
        Table::new(rows, widths)
            .header(Row::new(header).style(theme.header))
            .block(block),
        area,
    );
}

/// A sweep's numbers: one row per table size (its share of all shingles),
/// DO, TF and overall per series; the picked row marked.
#[allow(clippy::too_many_arguments)]
fn sweep_table(
    results: &[ShadowResult],
    sizes: &[TableSize],
    series: &[Series],
    point: usize,
    keys: &str,
    theme: &Theme,
    area: Rect,
    f: &mut Frame,
) {
    // Two header lines: the selector over its three columns.
    let cell = |top: String, bottom: &str| {
        let lines = vec![Line::from(top), Line::from(bottom.to_string())];
        Cell::from(ratatui::text::Text::from(lines).right_aligned())
    };
    // Each selector's three columns as wide as its name and the headers;
    // where they do not all fit, the table % column goes first (a cut
    // header read `very-4` for every-4, `verall` for overall).
    let group = |sel: &Series| (sel.to_string().len() as u16).max(7);
    let needed = |series: &[Series]| 9 + series.iter().map(|s| group(s) + 6 + 7 + 3).sum::<u16>();
    let room = area.width.saturating_sub(2);
    let with_fraction = 9 + needed(series) <= room;
    // Then the last series go, whole, and the border names them: a number
    // cut from the left reads as another number.
    let mut fits = series.len();
    while fits > 1 && needed(&series[..fits]) > room {
        fits -= 1;
    }
    let hidden: Vec<String> = series[fits..].iter().map(Series::to_string).collect();
    let series = &series[..fits];
    let keys = if hidden.is_empty() {
        keys.to_string()
    } else {
        let note = format!(" not shown: {} ", hidden.join(", "));
        // The note before the keys, which the footer and help also give.
        if note.len() + keys.len() < usize::from(room) {
            format!("{note}·{keys}")
        } else {
            note
        }
    };
    let mut head = vec![Cell::from(ratatui::text::Text::from(vec![
        Line::raw(""),
        Line::raw("size"),
    ]))];
    if with_fraction {
        head.push(cell(String::new(), "table %"));
    }
    for sel in series {
        head.push(cell(sel.to_string(), "DO"));
        head.push(cell(String::new(), "TF"));
        head.push(cell(String::new(), "overall"));
    }
    let num = |x: Option<f64>| {
        Cell::from(Line::from(x.map_or("…".into(), |x| format!("{x:.1}"))).right_aligned())
    };
    let rows = sizes.iter().enumerate().map(|(i, s)| {
        let at = |j: usize| results.get(j * sizes.len() + i);
        let fraction = (0..series.len()).find_map(|j| at(j)?.table_fraction);
        let mut cells = vec![Cell::from(size_label(s))];
        if with_fraction {
            cells.push(num(fraction));
        }
        for j in 0..series.len() {
            let r = at(j);
            cells.push(num(r.map(|r| r.dominant_origin)));
            cells.push(num(r.map(|r| r.token_freshness)));
            cells.push(num(r.map(|r| r.overall)));
        }
        Row::new(cells)
    });
    let mut widths = vec![Constraint::Length(9)];
    if with_fraction {
        widths.push(Constraint::Length(8));
    }
    for sel in series {
        widths.extend([
            Constraint::Length(group(sel)),
            Constraint::Length(6),
            Constraint::Length(7),
        ]);
    }
    // The picked row stays in view: the table scrolls to it.
    let mut state = ratatui::widgets::TableState::default().with_selected(Some(point));
    f.render_stateful_widget(
        Table::new(rows, widths)
            .header(Row::new(head).height(2).style(theme.header))
            .row_highlight_style(theme.selected)
            .block(
                block(theme, " Sweep: DO, TF, overall (%) by table size ", false)
                    .title_bottom(Line::styled(keys.to_string(), theme.muted).right_aligned()),
            ),
        area,
        &mut state,
    );
}

/// Each series' marks on the sweep chart: DO filled, TF hollow, a shape a
/// series.
const SWEEP_MARKS: [[char; 2]; 4] = [['●', '○'], ['■', '□'], ['▲', '△'], ['◆', '◇']];

/// DO and TF (percent) against the table size (log scale), per series;
/// the legend in the title, where it fits at any size.
fn sweep(
    results: &[ShadowResult],
    sizes: &[TableSize],
    series: &[Series],
    keys: &str,
    theme: &Theme,
    area: Rect,
    f: &mut Frame,
) {
    let x = |s: &TableSize| match s {
        TableSize::Bytes(b) => (*b as f64).max(1.0).log2(),
        TableSize::Unbounded => 40.0,
    };
    // Results arrive in the order asked: sizes vary fastest.
    type Points = Vec<(f64, f64)>;
    let lines: Vec<(String, Points, Points)> = series
        .iter()
        .enumerate()
        .map(|(j, sel)| {
            let mine = results.iter().skip(j * sizes.len()).take(sizes.len());
            let (d, t) = mine
                .zip(sizes)
                .map(|(r, s)| ((x(s), r.dominant_origin), (x(s), r.token_freshness)))
                .unzip();
            (sel.to_string(), d, t)
        })
        .collect();
    let styles = [theme.hit, theme.bar, theme.eviction, theme.warning];
    // Each line's measured points in a mark of its own, drawn over every
    // line: six lines that cross or overlap were told apart by colour only
    // (issue 41), which no-colour terminals and many eyes do not see.
    let mark = |j: usize, k: usize| SWEEP_MARKS[j % SWEEP_MARKS.len()][k];
    let mut datasets = Vec::new();
    let mut marks = Vec::new();
    for (j, (name, d, t)) in lines.iter().enumerate() {
        for (k, (metric, points)) in [("DO", d), ("TF", t)].into_iter().enumerate() {
            let style = styles[(j * 2 + k) % styles.len()];
            datasets.push(
                Dataset::default()
                    .name(format!("{metric} {name}"))
                    .marker(Marker::Braille)
                    .graph_type(GraphType::Line)
                    .style(style)
                    .data(points),
            );
            marks.push(
                Dataset::default()
                    .marker(Marker::Custom(mark(j, k)))
                    .graph_type(GraphType::Scatter)
                    .style(style)
                    .data(points),
            );
        }
    }
    datasets.extend(marks);
    let (lo, hi) = match (sizes.first(), sizes.last()) {
        (Some(a), Some(b)) => (x(a), x(b).max(x(a) + 1.0)),
        _ => (0.0, 1.0),
    };
    let label = |s: Option<&TableSize>| Span::raw(s.map_or(String::new(), size_label));
    // The same marks and styles as the datasets, in their order; where the
    // legend does not fit, shorter (each series' two marks, DO's then
    // TF's, before its name), then the series that fit and `…`.
    let style = |j: usize, k: usize| styles[(j * 2 + k) % styles.len()];
    let full: Vec<Vec<Span>> = (lines.iter().enumerate())
        .flat_map(|(j, (name, ..))| {
            ["DO", "TF"]
                .into_iter()
                .enumerate()
                .map(move |(k, metric)| {
                    vec![
                        Span::styled(format!("{}⠒", mark(j, k)), style(j, k)),
                        Span::raw(format!(" {metric} {name}  ")),
                    ]
                })
        })
        .collect();
    let short: Vec<Vec<Span>> = (lines.iter().enumerate())
        .map(|(j, (name, ..))| {
            vec![
                Span::styled(mark(j, 0).to_string(), style(j, 0)),
                Span::styled(mark(j, 1).to_string(), style(j, 1)),
                Span::raw(format!(" {name}  ")),
            ]
        })
        .collect();
    let room = area.width.saturating_sub(2) as usize;
    let width = |spans: &[Span]| {
        spans
            .iter()
            .map(|s| glyphs::str_width(&s.content))
            .sum::<usize>()
    };
    let forms = [
        (" Sweep (%) against table size: ", &full),
        (" Sweep (%): ", &full),
        (" Sweep (%), DO and TF: ", &short),
    ];
    let legend = |(head, entries): (&str, &Vec<Vec<Span<'static>>>)| {
        let mut t = vec![Span::raw(head.to_string())];
        t.extend(entries.iter().flatten().cloned());
        t
    };
    let title = match forms.iter().map(|&f| legend(f)).find(|t| width(t) <= room) {
        Some(t) => t,
        None => {
            let mut t = vec![Span::raw(" Sweep (%), DO and TF: ")];
            for entry in &short {
                if width(&t) + width(entry) + 2 > room {
                    t.push(Span::raw("… "));
                    break;
                }
                t.extend(entry.iter().cloned());
            }
            t
        }
    };
    let chart = Chart::new(datasets)
        .hidden_legend_constraints((Constraint::Length(0), Constraint::Length(0)))
        .block(
            block(theme, Line::from(title), false)
                .title_bottom(Line::styled(keys.to_string(), theme.muted).right_aligned()),
        )
        .x_axis(
            Axis::default()
                .title("table size")
                .style(theme.muted)
                .bounds([lo, hi])
                .labels([
                    label(sizes.first()),
                    label(sizes.get(sizes.len() / 2)),
                    label(sizes.last()),
                ]),
        )
        .y_axis(
            Axis::default()
                .style(theme.muted)
                .bounds([0.0, 100.0])
                .labels(["0", "50", "100"]),
        );
    f.render_widget(chart, area);
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    #[test]
    fn counts_too_wide_for_their_column_are_shortened_not_cut() {
        let r = ShadowResult {
            params: Params::default(),
            ssr: 1.0,
            dominant_origin: 90.0,
            token_freshness: 90.0,
            overall: 90.0,
            table_fraction: None,
            hits: 1_311_234,
            evictions: 123_456_789,
            seconds: 0.5,
        };
        let theme = Theme::new(lineage_config::ThemeName::Dark, true);
        let mut t = Terminal::new(TestBackend::new(100, 5)).unwrap();
        let frame = t
            .draw(|f| compare(&[r.clone(), r], &theme, f.area(), f))
            .unwrap();
        let text: String = frame.buffer.content().iter().map(|c| c.symbol()).collect();
        assert!(text.contains(" 1.3M"), "{text}");
        assert!(text.contains(" 123M"), "{text}");
        assert!(!text.contains(",311,234"), "{text}");
    }
}
