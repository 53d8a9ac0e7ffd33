//! Where everything goes on a screen of a given size. Render draws into these
//! areas and update uses the same ones for page sizes and mouse clicks, so
//! the two never disagree.

use ratatui::layout::{Constraint, Layout, Margin, Rect};

/// The frame: status bar, tab bar, the pane, key hints.
pub(crate) struct Screen {
    pub status: Rect,
    pub(crate) tabs: Rect,
    pub body: Rect,
    pub footer: Rect,
}

pub(crate) fn screen(area: Rect) -> Screen {
    let [status, tabs, body, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(1),
    ])
    .areas(area);
    Screen {
        status,
        tabs,
        body,
        footer,
    }
}

/// Inside a bordered block.
pub(crate) fn inner(area: Rect) -> Rect {
    area.inner(Margin::new(1, 1))
}

/// A bordered table: its header line and its rows.
pub(crate) fn table_rows(area: Rect) -> (Rect, Rect) {
    let [header, rows] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(inner(area));
    (header, rows)
}

/// Origin pane: the text and the legend beside it.
pub(crate) fn origin(body: Rect) -> (Rect, Rect) {
    let legend = (body.width / 3).clamp(20, 40);
    let [text, legend] =
        Layout::horizontal([Constraint::Min(0), Constraint::Length(legend)]).areas(body);
    (text, legend)
}

/// Clusters pane: the cluster list, the selected cluster's pairs, and the
/// two sides of a comparison.
pub(crate) struct Clusters {
    pub list: Rect,
    pub pairs: Rect,
    pub left: Rect,
    pub right: Rect,
}

/// The tests' (the view asks [`crate::App::clusters_layout`]).
#[cfg(test)]
pub(crate) fn clusters(body: Rect) -> Clusters {
    clusters_or_versions(body, false)
}

/// The Clusters pane's areas, or for two versions of a page (`versions`) the comparison
/// alone: no cluster list or pairs above it, as it is of no cluster.
pub(crate) fn clusters_or_versions(body: Rect, versions: bool) -> Clusters {
    let top = if versions { 0 } else { 40 };
    let [top, bottom] =
        Layout::vertical([Constraint::Percentage(top), Constraint::Min(0)]).areas(body);
    let [list, pairs] =
        Layout::horizontal([Constraint::Percentage(45), Constraint::Min(0)]).areas(top);
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(bottom);
    Clusters {
        list,
        pairs,
        left,
        right,
    }
}

/// Table pane: the regime line, counters, the two sparklines, the
/// bucket-fill histogram.
pub(crate) struct TablePane {
    pub regime: Rect,
    pub counters: Rect,
    pub hits: Rect,
    pub evictions: Rect,
    pub fill: Rect,
}

/// Table pane: a line across, `rows` counter lines with the sparklines
/// beside them, bucket fill below.
pub(crate) fn table(body: Rect, rows: u16) -> TablePane {
    let [regime, top, fill] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(rows + 2),
        Constraint::Min(0),
    ])
    .areas(body);
    let [counters, sparks] =
        Layout::horizontal([Constraint::Length(40), Constraint::Min(0)]).areas(top);
    let [hits, evictions] =
        Layout::vertical([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(sparks);
    TablePane {
        regime,
        counters,
        hits,
        evictions,
        fill,
    }
}

/// Tune pane: the form, the progress bar, the results (table or chart).
pub(crate) struct Tune {
    pub form: Rect,
    pub progress: Rect,
    pub results: Rect,
}

/// Rows of the Tune form (its fields), inside its border.
pub(crate) const FORM_ROWS: u16 = 7;

pub(crate) fn tune(body: Rect) -> Tune {
    let [top, progress, results] = Layout::vertical([
        Constraint::Length(FORM_ROWS + 2),
        Constraint::Length(1),
        Constraint::Min(0),
    ])
    .areas(body);
    Tune {
        form: top,
        progress,
        results,
    }
}

/// Rows of a list drawn in `area` with a border (and `header` lines).
pub(crate) fn rows_height(area: Rect, header: u16) -> usize {
    inner(area).height.saturating_sub(header) as usize
}

/// The row of `rows` that screen position (x, y) falls on, if any.
pub(crate) fn row_at(rows: Rect, x: u16, y: u16) -> Option<usize> {
    rows.contains(ratatui::layout::Position::new(x, y))
        .then(|| (y - rows.y) as usize)
}
