//! Table: the fixed-size table's counters, hit-rate and eviction-rate
//! sparklines over recent batches, and how full its buckets are.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Bar, BarChart, BarGroup, Paragraph, Sparkline};

use super::{block, count};
use crate::app::App;
use crate::layout;
use crate::theme::Theme;
use lineage_engine::TableStats;

/// Per sample, in per mille: hits per lookup and evictions per insert since
/// the sample before (the counters are cumulative).
pub(crate) fn rates(history: &[TableStats]) -> (Vec<u64>, Vec<u64>) {
    let per_mille = |n: u64, d: u64| (n * 1000).checked_div(d).unwrap_or(0);
    history
        .windows(2)
        .map(|w| {
            let (a, b) = (&w[0], &w[1]);
            let d = |f: fn(&TableStats) -> u64| f(b).saturating_sub(f(a));
            (
                per_mille(d(|s| s.hits), d(|s| s.lookups)),
                per_mille(d(|s| s.evictions), d(|s| s.inserts)),
            )
        })
        .unzip()
}

/// " (73/KiB)": entries the table holds per KiB of its size.
fn per_kib(t: &TableStats, p: &lineage_origin::Params) -> String {
    match (t.capacity, p.table_size) {
        (Some(c), lineage_origin::TableSize::Bytes(b)) if b > 0 => {
            format!(" ({:.0}/KiB)", c as f64 * 1024.0 / b as f64)
        }
        _ => String::new(),
    }
}

pub(crate) fn render(app: &App, theme: &Theme, area: Rect, f: &mut Frame) {
    let Some(s) = &app.snapshot else {
        f.render_widget(
            Paragraph::new(Line::styled("waiting for the engine", theme.muted))
                .block(block(theme, " Table ", true)),
            area,
        );
        return;
    };
    let t = &s.table;
    let pct = |n: u64, d: u64| {
        if d == 0 {
            String::new()
        } else {
            format!(" ({:.1}%)", n as f64 * 100.0 / d as f64)
        }
    };
    let row = |name: &str, value: String, note: String| {
        Line::from(vec![
            Span::styled(format!("{name:<12}"), theme.header),
            Span::raw(format!("{value:>14}")),
            Span::styled(note, theme.muted),
        ])
    };
    let capacity = t.capacity.map_or("unbounded".into(), count);
    let mut lines = vec![
        row(
            "size",
            super::size_label(&s.params.table_size),
            String::new(),
        ),
        row("lookups", count(t.lookups), String::new()),
        row("hits", count(t.hits), pct(t.hits, t.lookups)),
        row("inserts", count(t.inserts), String::new()),
        row("evictions", count(t.evictions), pct(t.evictions, t.inserts)),
        row(
            "occupied",
            count(t.occupied),
            t.capacity.map_or(String::new(), |c| pct(t.occupied, c)),
        ),
        row("capacity", capacity, String::new()),
        row(
            "buckets",
            t.buckets.map_or("—".into(), count),
            String::new(),
        ),
        // What a byte of table buys, and what a stored 48-bit key risks.
        row(
            "entry bytes",
            t.entry_bytes.to_string(),
            per_kib(t, &s.params),
        ),
        row(
            "false match",
            t.false_match
                .map_or("none".into(), |f| format!("≤ {f:.1e}")),
            " per lookup".into(),
        ),
        row("versions", count(t.versions), String::new()),
    ];
    if s.params.eviction == lineage_origin::Eviction::BottomK {
        // Bottom-k answers some lookups without a look: keys outside the sample.
        let outside = t.lookups.saturating_sub(t.hits + t.inserts);
        lines.insert(
            4,
            row("not sampled", count(outside), pct(outside, t.lookups)),
        );
    }
    let a = layout::table(area, lines.len() as u16);
    // Whether the answer is the exact one: first, across the pane, since it
    // says what the counters below are worth.
    let every = s.params.selector == lineage_origin::Selector::All;
    f.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(" table ", theme.header),
            Span::raw(t.regime.describe(every, s.params.exact_when_held(), count)),
        ])),
        a.regime,
    );
    f.render_widget(
        Paragraph::new(lines).block(block(theme, " Table ", true)),
        a.counters,
    );

    let (hits, evictions) = rates(&s.table_history);
    let last = |v: &[u64]| {
        v.last()
            .map_or("—".into(), |x| format!("{:.1}%", *x as f64 / 10.0))
    };
    for (data, names, style, area) in [
        (&hits, ["hit rate", "hits"], theme.hit, a.hits),
        (
            &evictions,
            ["evictions per insert", "evictions"],
            theme.eviction,
            a.evictions,
        ),
    ] {
        // The newest samples that fit, right-aligned like a moving chart.
        let w = layout::inner(area).width as usize;
        let data = &data[data.len().saturating_sub(w)..];
        // Shorter where the chart is narrow (60 columns), never cut: the
        // number last.
        let titles = [
            format!(" {} · last {} ", names[0], last(data)),
            format!(" {} {} ", names[0], last(data)),
            format!(" {} {} ", names[1], last(data)),
            format!(" {} ", last(data)),
        ];
        let title = super::first_fitting(&titles, w);
        f.render_widget(
            Sparkline::default()
                .data(data)
                .max(1000)
                .style(style)
                .block(block(theme, title, false)),
            area,
        );
    }

    let fill = &s.bucket_fill;
    let title = if fill.is_empty() {
        " Bucket fill (unbounded table: no buckets) ".to_string()
    } else {
        format!(
            " Bucket fill: buckets holding 0…{} entries ",
            fill.len() - 1
        )
    };
    let w = layout::inner(a.fill).width.max(1) as usize;
    // Neighbouring fill levels share a bar when there are more than columns.
    let per_bar = fill.len().div_ceil(w).max(1);
    let bars: Vec<Bar> = fill
        .chunks(per_bar)
        .map(|c| Bar::new(c.iter().sum::<u64>()).text_value(""))
        .collect();
    // …and fewer levels than columns get wider bars.
    let bar_width = (w / bars.len().max(1)).clamp(1, u16::MAX as usize) as u16;
    f.render_widget(
        BarChart::default()
            .data(BarGroup::new(bars))
            .bar_width(bar_width)
            .bar_gap(0)
            .bar_style(theme.bar)
            .block(block(theme, title, false)),
        a.fill,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_of_the_deltas_between_samples() {
        let s = |lookups, hits, inserts, evictions| TableStats {
            lookups,
            hits,
            inserts,
            evictions,
            ..TableStats::default()
        };
        let (h, e) = rates(&[
            s(100, 10, 90, 0),
            s(300, 110, 190, 50),
            s(300, 110, 190, 50),
        ]);
        // 100 hits of 200 lookups; 50 evictions of 100 inserts; then nothing.
        assert_eq!(h, [500, 0]);
        assert_eq!(e, [500, 0]);
    }
}
