//! Origin: the document's text, copied blocks in their origin's colour, new
//! text plain; the selected block and a jump's landing passage marked; a
//! legend of origins with their shares.

use std::collections::HashMap;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{block, styled_line, token_bytes};
use crate::app::App;
use crate::glyphs;
use crate::layout;
use crate::paths;
use crate::theme::Theme;
use lineage_engine::OriginView;

/// Columns an origin's name needs in the footer to be worth showing.
const MIN_NAME: usize = 8;

/// The selected run: its place among the copied blocks (from 1), or among
/// the passages new in the page, their count, and a copied block's
/// origin's name (with its version where the origin is a version of this
/// very page); None for a new passage.
fn selected_block(
    view: &OriginView,
    block: Option<usize>,
) -> Option<(usize, usize, Option<String>)> {
    let b = block?;
    let origin = view.runs.get(b)?.origin;
    let alike = |r: &&lineage_origin::Run| r.origin.is_some() == origin.is_some();
    let at = view.runs[..=b].iter().filter(alike).count();
    let of = view.runs.iter().filter(alike).count();
    let name = origin.map(
        |origin| match view.legend.iter().find(|e| e.origin == origin) {
            Some(e) if e.path == view.path => format!("{} v{}", paths::shown(&e.path), e.version),
            Some(e) => paths::shown(&e.path).into_owned(),
            None => format!("#{origin}"),
        },
    );
    Some((at, of, name))
}

pub(crate) fn render(app: &App, theme: &Theme, area: Rect, f: &mut Frame) {
    let (text_area, legend_area) = layout::origin(area);
    let o = &app.origin;
    let Some(view) = &o.view else {
        let msg = if o.requested.is_some() {
            "loading…"
        } else {
            "select a document (Documents pane, enter)"
        };
        f.render_widget(
            Paragraph::new(Line::styled(msg, theme.muted)).block(block(theme, " Origin ", true)),
            area,
        );
        return;
    };
    // The estimate is the exact answer where the table holds every shingle
    // and the settings make it so (the Table pane's regime says `exact`).
    let held = (app.snapshot.as_ref()).is_some_and(|s| {
        matches!(s.table.regime, lineage_origin::Regime::Holds { .. }) && s.params.exact_when_held()
    });
    let exact = view.exact || held;
    let mode = if exact { "exact" } else { "estimated" };
    // An earlier version or a deleted page says so: its text is from the index.
    let status = (view.status.describe(view.version)).map_or(String::new(), |s| format!(" · {s}"));
    // The page's name gives way to what the title says of it (at 60
    // columns `replaced by v3` was cut to `replaced by v`): its middle goes,
    // and the estimate, the default, is not named where room is short.
    let room = text_area.width.saturating_sub(2) as usize;
    let suffix = format!(" v{}", view.version);
    let mut mode = format!(" · {mode} ");
    let used = |mode: &str| 1 + glyphs::str_width(&status) + glyphs::str_width(mode);
    // The label of the live estimate gives way first, where "estimated"
    // would (so the name keeps the room it had: an estimate titled
    // `exact` takes no more); the exact origins asked with `x` keep theirs.
    if !view.exact && used(" · estimated ") + MIN_NAME + suffix.len() > room {
        mode = " ".into();
    }
    let name = paths::fit(&view.path, &suffix, room.saturating_sub(used(&mode)), 1);
    let title = Line::from(vec![
        Span::raw(format!(" {name}")),
        Span::styled(status, theme.warning),
        Span::raw(mode),
    ]);
    let inner = layout::inner(text_area);
    let style_of = styles(theme, view);
    let body = match &view.text {
        Err(why) => Paragraph::new(Line::styled(why.as_str(), theme.error)),
        Ok(text) => {
            // Copied runs as byte ranges (in text order), then the marks on top.
            let copied: Vec<(std::ops::Range<usize>, ratatui::style::Style)> = (view.runs.iter())
                .filter_map(|r| {
                    let bytes = token_bytes(&view.spans, r.start..r.end)?;
                    Some((bytes, *style_of.get(&r.origin?)?))
                })
                .collect();
            let mut marks = Vec::new();
            let selected = o.block.and_then(|b| view.runs.get(b));
            if let Some(r) = selected.and_then(|r| token_bytes(&view.spans, r.start..r.end)) {
                marks.push((r, theme.block_selected));
            }
            if let Some(r) = o.mark.clone().and_then(|m| token_bytes(&view.spans, m)) {
                marks.push((r, theme.block_selected));
            }
            // Search matches on top of everything, the current one the most.
            let found: Vec<_> = o
                .search
                .iter()
                .flat_map(|s| {
                    s.matches.iter().enumerate().map(move |(i, m)| {
                        let style = if Some(i) == s.current {
                            theme.current_match
                        } else {
                            theme.found
                        };
                        (m.clone(), style)
                    })
                })
                .collect();
            let lines = o.lines.iter().skip(o.scroll).take(inner.height as usize);
            let lines = lines.map(|line| {
                // The copied runs that reach into this line.
                let first = copied.partition_point(|(r, _)| r.end <= line.start);
                let last = copied.partition_point(|(r, _)| r.start < line.end);
                let mut overlays = copied[first..last.max(first)].to_vec();
                overlays.extend(marks.iter().cloned());
                let first = found.partition_point(|(r, _)| r.end <= line.start);
                let last = found.partition_point(|(r, _)| r.start < line.end);
                overlays.extend_from_slice(&found[first..last.max(first)]);
                styled_line(text, line.clone(), theme.base, &overlays)
            });
            Paragraph::new(lines.collect::<Vec<_>>())
        }
    };
    let mut position = if o.lines.is_empty() {
        String::new()
    } else {
        format!(" {}/{} ", (o.scroll + 1).min(o.lines.len()), o.lines.len())
    };
    if let Some(at) = o
        .search
        .as_ref()
        .map(|s| s.position())
        .filter(|p| !p.is_empty())
    {
        position = format!(" {at} ·{position}");
    }
    if let Some((at, of, name)) = selected_block(view, o.block) {
        // Which block `n`/`N` (or new passage `}`/`{`) is on, and a
        // block's origin's name in what is left.
        let head = match name {
            Some(_) => format!(" block {at}/{of}"),
            None => format!(" new {at}/{of}"),
        };
        let used = glyphs::str_width(&head) + glyphs::str_width(&position) + 4;
        let room = (inner.width as usize).saturating_sub(used + " from ·".len());
        position = match name {
            Some(name) if room >= MIN_NAME => {
                format!("{head} from {} ·{position}", paths::fit(&name, "", room, 1))
            }
            _ => format!("{head} ·{position}"),
        };
    }
    f.render_widget(
        body.block(block(theme, title, true).title_bottom(Line::from(position).right_aligned())),
        text_area,
    );

    let w = layout::inner(legend_area).width as usize;
    let styled = theme.palette.len();
    // Origins past the palette share one style, and one entry: "N more".
    let (listed, more): (Vec<_>, Vec<_>) = (view.legend.iter().enumerate())
        .partition(|&(rank, e)| e.origin == view.id || rank_of(view, rank) < styled);
    // Each origin's path shows what tells it from the others listed.
    let names: Vec<&str> = listed.iter().map(|(_, e)| e.path.as_str()).collect();
    let keep = paths::tails(&names);
    // Two lines an origin: its colour and share, then its path.
    let mut legend: Vec<Line> = listed
        .iter()
        .zip(keep)
        .flat_map(|((_, e), keep)| {
            let width = w.saturating_sub(1);
            let path = if e.origin == view.id {
                "new text".to_string()
            } else {
                paths::fit(&e.path, &format!(" v{}", e.version), width, keep)
            };
            [
                Line::from(vec![
                    Span::styled(
                        theme.swatch,
                        style_of.get(&e.origin).copied().unwrap_or(theme.muted),
                    ),
                    Span::raw(format!(" {:.1}%", e.percent)),
                    // Where it was written, in a repository's history: the
                    // commit, and its day where the legend is wide enough.
                    Span::styled(
                        e.commit.as_ref().map_or_else(String::new, |c| {
                            let id = c.id.get(..7).unwrap_or(&c.id);
                            match w >= 1 + 7 + 20 {
                                true => format!("  {id} {}", lineage_core::civil::date(c.time)),
                                false => format!("  {id}"),
                            }
                        }),
                        theme.muted,
                    ),
                ]),
                Line::from(format!(" {path}")),
            ]
        })
        .collect();
    if !more.is_empty() {
        let percent: f64 = more.iter().map(|(_, e)| e.percent).sum();
        legend.push(Line::from(vec![
            Span::styled(theme.swatch, theme.muted),
            Span::raw(format!(" {percent:.1}%")),
        ]));
        legend.push(Line::from(format!(" {} more origins", more.len())));
    }
    f.render_widget(
        Paragraph::new(legend).block(block(theme, " Origins ", false)),
        legend_area,
    );
}

/// Entry `rank` of the legend among the origins (the page's own new text,
/// listed among them, takes no style).
fn rank_of(view: &OriginView, rank: usize) -> usize {
    let own = view.legend[..rank].iter().any(|e| e.origin == view.id);
    rank - usize::from(own)
}

/// Each origin of the page a style of its own while the palette lasts, by
/// rank (the legend is largest share first), so no two on screen look
/// alike; the rest share the muted style. The page's own text is plain.
fn styles(theme: &Theme, view: &OriginView) -> HashMap<u32, Style> {
    (view.legend.iter().enumerate())
        .map(|(rank, e)| {
            let style = match e.origin == view.id {
                true => theme.base,
                false => *theme
                    .palette
                    .get(rank_of(view, rank))
                    .unwrap_or(&theme.muted),
            };
            (e.origin, style)
        })
        .collect()
}
