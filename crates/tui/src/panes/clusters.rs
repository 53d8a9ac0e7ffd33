//! Clusters: near-duplicate clusters, the selected one's pairs with their
//! similarity, and two members side by side with shared passages marked.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use unicode_width::UnicodeWidthStr;

use super::{block, styled_line, token_bytes};
use crate::app::App;
use lineage_engine::Side;
use std::borrow::Cow;

use crate::clusters::{changes, side_lines};
use crate::paths;
use crate::theme::Theme;
use crate::{glyphs, layout};

/// Columns a cluster's first page needs to be recognisable.
const MIN_NAME: usize = 12;

pub(crate) fn render(app: &App, theme: &Theme, area: Rect, f: &mut Frame) {
    let versions = app.clusters.return_to == Some(crate::app::Tab::Origin);
    let c = layout::clusters_or_versions(area, versions);
    let clusters = app.snapshot.as_ref().map_or(&[][..], |s| &s.clusters[..]);
    let st = &app.clusters;
    let path = |id: u32| app.doc(id).map_or(format!("#{id}"), |d| d.path.to_string());

    let w = layout::inner(c.list).width as usize;
    let height = layout::rows_height(c.list, 0);
    let window = st.list.window(st.order.len(), height);
    let first = |row: usize| clusters[st.order[row]].members.first().map(|&m| path(m));
    // What the first pages on screen share is cut before what tells them
    // apart (issue 41: `00282_v13_llv…Impl01.rst.txt` on every row).
    let firsts: Vec<String> = window.clone().filter_map(first).collect();
    let shared = paths::Shared::of(firsts.iter().map(String::as_str));
    let rows: Vec<Line> = window
        .map(|row| {
            let i = st.order[row];
            let cl = &clusters[i];
            let (lo, hi) = cl
                .pairs
                .iter()
                .fold((1.0f64, 0.0f64), |(lo, hi), p| (lo.min(p.2), hi.max(p.2)));
            let mut head = format!(
                "#{:<3} {:>3} docs {:.2}–{:.2} ",
                cl.number,
                cl.members.len(),
                lo,
                hi
            );
            // Narrow: a short head, so the cluster's first page shows.
            if w.saturating_sub(glyphs::str_width(&head)) < MIN_NAME {
                head = format!("#{} {}× {:.2} ", cl.number, cl.members.len(), hi);
            }
            let first = first(row).unwrap_or_default();
            let room = w.saturating_sub(glyphs::str_width(&head));
            let line = Line::from(vec![
                Span::raw(head),
                Span::styled(paths::fit_among(&first, "", room, 1, &shared), theme.muted),
            ]);
            if row == st.list.selected {
                line.style(theme.selected)
            } else {
                line
            }
        })
        .collect();
    // The whole title while it fits in the border, else a short one.
    let filter = match st.filter.as_str() {
        "" => String::new(),
        f => format!("· /{} ", paths::shown(f)),
    };
    let (n, all, by) = (st.order.len(), clusters.len(), st.sort.label());
    let order = if st.reverse { " reversed" } else { "" };
    let mut title = format!(" Clusters {n} of {all} · by {by}{order} {filter}");
    if glyphs::str_width(&title) + 2 > c.list.width as usize {
        let order = if st.reverse { " rev." } else { "" };
        title = format!(" {n}/{all} · {by}{order} {filter}");
    }
    let list = if clusters.is_empty() {
        Paragraph::new(Line::styled("no near-duplicate clusters", theme.muted))
    } else if st.order.is_empty() {
        Paragraph::new(Line::styled(
            "no cluster has a page whose path holds these words",
            theme.muted,
        ))
    } else {
        Paragraph::new(rows)
    };
    f.render_widget(list.block(block(theme, title, !st.on_pairs)), c.list);

    let w = layout::inner(c.pairs).width as usize;
    let height = layout::rows_height(c.pairs, 0);
    let pairs = app.cluster().map_or(&[][..], |c| &c.pairs[..]);
    let room = w.saturating_sub(9) / 2;
    let window = st.pairs.window(pairs.len(), height);
    let names: Vec<String> = (window.clone())
        .flat_map(|i| [path(pairs[i].0), path(pairs[i].1)])
        .collect();
    let shared = paths::Shared::of(names.iter().map(String::as_str));
    let rows: Vec<Line> = window
        .map(|i| {
            let (a, b, sim) = pairs[i];
            let (a, b) = (path(a), path(b));
            // What tells the two apart stays on both sides.
            let keep = paths::tails(&[&a, &b]);
            let whole = |p: &str| glyphs::str_width(&paths::shown(p)) <= room;
            let mut spans = vec![Span::styled(format!("{sim:.3} "), theme.key)];
            match braced(&a, &b, w.saturating_sub(6)) {
                // Cut, the names would lose what they share and what tells
                // them apart alike: the part that differs, braced, once.
                Some(parts) if !(whole(&a) && whole(&b)) => {
                    let [before, left, right, after] = parts;
                    spans.push(Span::raw(format!("{before}{{{left}")));
                    spans.push(Span::styled(" ↔ ", theme.muted));
                    spans.push(Span::raw(format!("{right}}}{after}")));
                }
                _ => {
                    spans.push(Span::raw(paths::fit_among(&a, "", room, keep[0], &shared)));
                    spans.push(Span::styled(" ↔ ", theme.muted));
                    spans.push(Span::raw(paths::fit_among(&b, "", room, keep[1], &shared)));
                }
            }
            let line = Line::from(spans);
            if i == st.pairs.selected && st.on_pairs {
                line.style(theme.selected)
            } else {
                line
            }
        })
        .collect();
    let title = format!(" Pairs ({}) ", pairs.len());
    f.render_widget(
        Paragraph::new(rows).block(block(theme, title, st.on_pairs)),
        c.pairs,
    );

    match &st.compare {
        None => {
            let hint = Paragraph::new(Line::styled(
                "select a pair and press enter to compare its documents",
                theme.muted,
            ))
            .block(block(theme, " Compare ", false));
            f.render_widget(hint, c.left.union(c.right));
        }
        Some(v) => {
            // Both sides' paths keep what tells them apart.
            let keep = paths::tails(&[&v.a.path, &v.b.path]);
            // Two versions walked change by change: which one, of how many.
            let change = (st.walk_changes.then(|| changes(&v.a, &v.b)).flatten())
                .zip(st.change)
                .map(|(all, j)| format!("change {}/{} · ", j + 1, all.len()));
            for (i, (side_of, area)) in [(&v.a, c.left), (&v.b, c.right)].into_iter().enumerate() {
                let w = layout::inner(area).width;
                // The wrapped lines kept for this width, or wrapped now.
                let lines = if st.widths[i] == w {
                    Cow::Borrowed(&st.lines[i])
                } else {
                    Cow::Owned(side_lines(side_of, w))
                };
                let title = side_title(side_of, v.similarity, keep[i], w as usize);
                let at = Shown {
                    side: side_of,
                    lines: &lines,
                    scroll: st.scroll[i],
                    change: change.as_deref(),
                };
                side(at, title, theme, area, f);
            }
        }
    }
}

/// A comparison side's title: its path and version, then the similarity;
/// the word "similarity" goes before the figure, the path's middle last.
fn side_title(s: &Side, similarity: f64, keep: usize, room: usize) -> String {
    let long = format!(" · similarity {similarity:.3} ");
    let version = format!(" v{}", s.version);
    let shown = crate::paths::shown(&s.path);
    let whole = 1 + shown.width() + version.len() + long.len();
    let sim = if whole <= room {
        long
    } else {
        format!(" · {similarity:.3} ")
    };
    let suffix = format!("{version}{sim}");
    format!(
        " {}",
        paths::fit(&s.path, &suffix, room.saturating_sub(1), keep)
    )
}

/// A comparison side as drawn.
struct Shown<'a> {
    side: &'a Side,
    /// Its text wrapped at the side's width.
    lines: &'a [std::ops::Range<usize>],
    /// The first line shown.
    scroll: usize,
    /// The change it was brought to (`change 2/5 · `).
    change: Option<&'a str>,
}

/// One document of a comparison, shared passages marked.
fn side(at: Shown, title: String, theme: &Theme, area: Rect, f: &mut Frame) {
    let Shown {
        side: s,
        lines,
        scroll,
        change,
    } = at;
    let inner = layout::inner(area);
    let mut position = String::new();
    let body = match &s.text {
        Err(why) => Paragraph::new(Line::styled(why.as_str(), theme.error)),
        Ok(text) => {
            // Shared passages in their colour; what the other lacks in bold.
            let changed = theme.base.add_modifier(Modifier::BOLD);
            let shared: Vec<_> = changed_ranges(&s.shared, s.spans.len() as u32)
                .into_iter()
                .map(|r| (r, changed))
                .chain(s.shared.iter().map(|&(a, b)| (a..b, theme.shared)))
                .filter_map(|(r, style)| Some((token_bytes(&s.spans, r)?, style)))
                .collect();
            if !lines.is_empty() {
                let line = (scroll + 1).min(lines.len());
                position = format!(" {}{line}/{} ", change.unwrap_or(""), lines.len());
            }
            let lines: Vec<Line> = (lines.iter())
                .skip(scroll)
                .take(inner.height as usize)
                .map(|l| styled_line(text, l.clone(), theme.base, &shared))
                .collect();
            Paragraph::new(lines)
        }
    };
    let bottom = Line::from(position).right_aligned();
    f.render_widget(
        body.block(block(theme, title, false).title_bottom(bottom)),
        area,
    );
}

/// The token ranges of `0..tokens` outside the (sorted, merged) `shared`.
fn changed_ranges(shared: &[(u32, u32)], tokens: u32) -> Vec<std::ops::Range<u32>> {
    let mut out = Vec::new();
    let mut at = 0;
    for &(a, b) in shared {
        if a > at {
            out.push(at..a.min(tokens));
        }
        at = at.max(b);
    }
    if at < tokens {
        out.push(at..tokens);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::changed_ranges;

    #[test]
    fn changed_is_what_is_not_shared() {
        assert_eq!(
            changed_ranges(&[(2, 5), (5, 7), (9, 10)], 12),
            [0..2, 7..9, 10..12]
        );
        assert_eq!(changed_ranges(&[], 3), vec![0..3]);
        assert_eq!(changed_ranges(&[(0, 3)], 3), []);
        assert_eq!(changed_ranges(&[], 0), []);
    }
}

/// Two names as git writes a rename (`docs/{v1 => v2}/guide.md`): the
/// folders they share before and after, and each one's part that differs,
/// as shown; None when they share no folder or name, or when that does not
/// fit in `width` columns with the ` ↔ ` and the braces.
fn braced(a: &str, b: &str, width: usize) -> Option<[String; 4]> {
    let (a, b) = (paths::shown(a), paths::shown(b));
    let (ca, cb): (Vec<&str>, Vec<&str>) = (a.split('/').collect(), b.split('/').collect());
    let front = ca.iter().zip(&cb).take_while(|(x, y)| x == y).count();
    let most = ca.len().min(cb.len()) - front.min(ca.len().min(cb.len()));
    let back = (ca.iter().rev().zip(cb.iter().rev()))
        .take(most)
        .take_while(|(x, y)| x == y)
        .count();
    let (ma, mb) = (&ca[front..ca.len() - back], &cb[front..cb.len() - back]);
    if (front == 0 && back == 0) || ma.is_empty() || mb.is_empty() {
        return None;
    }
    let before = ca[..front]
        .iter()
        .map(|c| format!("{c}/"))
        .collect::<String>();
    let after = ca[ca.len() - back..]
        .iter()
        .map(|c| format!("/{c}"))
        .collect::<String>();
    let mut parts = [before, ma.join("/"), mb.join("/"), after];
    let used: usize = parts.iter().map(|p| glyphs::str_width(p)).sum::<usize>() + 5;
    if used <= width {
        return Some(parts);
    }
    // Too wide: the shared end (the page's name) cut in its middle, while
    // it keeps a few columns: `{29.7 ↔ 30.0}/Archi…re.md` still says which
    // two versions of which page.
    let tail = glyphs::str_width(&parts[3]);
    let room = width.checked_sub(used - tail)?;
    if tail == 0 || room < MIN_TAIL {
        return None;
    }
    parts[3] = format!("/{}", paths::fit(&parts[3][1..], "", room - 1, 1));
    Some(parts)
}

/// Columns the shared end of a braced pair keeps, its `/` included.
const MIN_TAIL: usize = 8;

#[cfg(test)]
mod braced_tests {
    use super::braced;

    #[test]
    fn pairs_brace_what_differs_as_git_writes_a_rename() {
        let b = |a, b, w| braced(a, b, w).map(|p| p.concat());
        assert_eq!(
            b("v1/installation.md", "v2/installation.md", 40),
            Some("v1v2/installation.md".into())
        );
        let parts = braced("docs/v1/guide/a.md", "docs/v2/guide/a.md", 40).unwrap();
        assert_eq!(
            parts,
            ["docs/", "v1", "v2", "/guide/a.md"].map(String::from)
        );
        let parts = braced("v1/installation.md", "v1/upgrading.md", 40).unwrap();
        assert_eq!(
            parts,
            ["v1/", "installation.md", "upgrading.md", ""].map(String::from)
        );
        // Nothing shared, or one inside the other, or too wide: not braced.
        assert_eq!(b("a/x.md", "b/y.md", 40), None);
        assert_eq!(b("v1/a.md", "v1/x/a.md", 40), None);
        // Too wide: the shared end cut, while it keeps eight columns.
        assert_eq!(
            b("v1/installation.md", "v2/installation.md", 24),
            Some("v1v2/instal…tion.md".into())
        );
        assert_eq!(b("v1/installation.md", "v2/installation.md", 14), None);
        assert_eq!(b("v1/installation.md", "v1/upgrading.md", 20), None);
    }
}
