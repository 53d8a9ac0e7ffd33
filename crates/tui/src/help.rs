//! The `?` overlay: the current pane's keys, then every key from the keymap,
//! then what the words on screen mean, wrapped to the overlay and scrolled
//! with the movement keys.

use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::{Line, Span};

use super::app::{App, Tab};
use super::keymap::Action;
use super::theme::Theme;

/// The terms the panes use, defined where a person can find them.
pub(crate) const GLOSSARY: &[(&str, &str)] = &[
    (
        "origin",
        "the earliest page, in processing order, that holds a passage (a shingle of k words); a page is its own origin for what is new in it.",
    ),
    (
        "dominant origin",
        "the origin that holds the most of a page's shingles, at least 10 % more than the next; \"—\" when the top two are closer than that (no dominant origin, as in `scan`), \"(itself)\" when most of the page is new.",
    ),
    (
        "fresh % / new text",
        "tokens that no copied shingle covers: written in this page, not taken from an earlier one.",
    ),
    (
        "copied",
        "a passage whose shingles were found in an earlier page; coloured by that page in Origin.",
    ),
    (
        "selector",
        "which shingles are looked up in the table (nhs: Hailstorm with no complete overlap, win-W: winnowing, mod-L, every-L, hb-P, dct-P, all).",
    ),
    (
        "selection rate (ssr)",
        "selected shingles / all shingles; fewer means a smaller table suffices but less is seen.",
    ),
    (
        "table",
        "the fixed-size fingerprint table: buckets of entries, each a shingle's fingerprint and its origin. Its size is the memory the table may use.",
    ),
    (
        "hit",
        "a selected shingle found in the table: its origin is known.",
    ),
    (
        "eviction",
        "a full bucket drops an entry to make room (random, lru, cc: copy count, lucky: Abdel-Hamid et al.'s lucky scores, bottom-k: each bucket keeps its smallest keys, a sample that stays put, and shingles outside it take the origin of their nearest sampled neighbour); a dropped shingle's origin is lost.",
    ),
    (
        "estimation",
        "guessing the origin of shingles the table lost from their found neighbours (nb: none, e: expansion, b: bridging between two hits of one origin, be: both).",
    ),
    (
        "bridge limit (T)",
        "the longest run of unfound shingles a bridge may span.",
    ),
    (
        "table %",
        "the table's entries / all shingles of all pages, in percent: the paper's table fraction.",
    ),
    (
        "exact",
        "the answer with every shingle and an unbounded table: the truth the estimates are scored against.",
    ),
    (
        "DO",
        "dominant origins found: of the pages with a dominant origin in the exact answer, the percent whose estimated top origin is that page.",
    ),
    (
        "TF",
        "token freshness: the percent of tokens labelled fresh or copied as the exact answer labels them.",
    ),
    ("overall", "(DO + TF) / 2."),
];

/// Where the overlay goes on a screen of `area`.
pub(crate) fn popup(area: Rect) -> Rect {
    let [popup] = Layout::horizontal([Constraint::Length(area.width.min(78))])
        .flex(Flex::Center)
        .areas(area);
    let [popup] = Layout::vertical([Constraint::Length(area.height.saturating_sub(2).max(3))])
        .flex(Flex::Center)
        .areas(popup);
    popup
}

/// A list over the pane (the pages a search found, a page's copies): as
/// [`popup`], the screen's width wide, for the names and their context.
pub(crate) fn list_popup(area: Rect) -> Rect {
    Rect {
        x: area.x,
        width: area.width,
        ..popup(area)
    }
}

/// Why a list over a pane has no answer (`why`, the engine's error), as
/// the list's lines: wrapped to `inner` columns, indented, in the error
/// colour.
pub(crate) fn failed_lines(why: &str, inner: usize, theme: &Theme) -> Vec<Line<'static>> {
    wrap(why, inner.saturating_sub(2))
        .into_iter()
        .map(|l| Line::styled(format!(" {l}"), theme.error))
        .collect()
}

/// The title and lines of a list over a pane waiting on the engine's
/// answer: why none is coming (`failed`), else what is being done
/// (`doing` in the title, `how` under it). `name` is the list's.
pub(crate) fn waiting(
    name: &str,
    failed: Option<&str>,
    doing: &str,
    how: &str,
    inner: usize,
    theme: &Theme,
) -> (String, Vec<Line<'static>>) {
    match failed {
        Some(why) => (
            format!(" {name}: not found "),
            failed_lines(why, inner, theme),
        ),
        None => (
            format!(" {name}: {doing}… "),
            vec![Line::styled(format!(" {how}"), theme.muted)],
        ),
    }
}

/// Rows of a list over `popup` (inside its border, above its blank line and
/// its line of keys): the lists over a pane (versions, copies, pages found)
/// count their rows by it, as they draw them.
pub(crate) fn list_rows(popup: Rect) -> usize {
    popup.height.saturating_sub(4) as usize
}

/// A pane's keys that its footer has no room for, listed in its section
/// of the overlay after the footer's.
/// The keys of a prompt (a filter, a search, a file name, a field): fixed,
/// as a terminal's line editing is, not the keymap's.
const TYPING: [(&str, &str); 10] = [
    ("enter", "act on the text (keep, search, set, write)"),
    ("esc", "cancel (a filter: clear it)"),
    (
        "backspace",
        "delete the character before the cursor; a reopened prompt's text is selected (reversed): backspace clears it, typing or a paste replaces it, any other key keeps it",
    ),
    ("delete", "delete the character after the cursor"),
    ("← →", "move the cursor a character"),
    (
        "home end",
        "to the line's start, its end (also ctrl-a, ctrl-e)",
    ),
    ("alt-b alt-f", "a word back, a word on"),
    ("ctrl-u", "delete to the line's start"),
    ("ctrl-k", "delete to the line's end"),
    ("ctrl-w", "delete the word before the cursor"),
];

fn beyond_the_footer(tab: Tab) -> &'static [(Action, &'static str)] {
    match tab {
        Tab::Origin => &[
            (Action::PrevBlock, "previous block"),
            (Action::NextNew, "next passage new here"),
            (Action::PrevNew, "previous passage new here"),
            (Action::NextMatch, "next search match"),
            (Action::PrevMatch, "previous search match"),
        ],
        Tab::Clusters => &[
            (Action::Reverse, "reverse the clusters' order"),
            (Action::Right, "to the pairs"),
        ],
        Tab::Tune => &[
            (Action::Left, "previous choice of the field"),
            (Action::Right, "next choice of the field"),
            (Action::SweepView, "the sweep as a chart or a table"),
            (Action::TakePoint, "take the table row's size and selector"),
        ],
        _ => &[],
    }
}

/// The overlay's lines at `width` columns (inside its border).
pub(crate) fn lines(app: &App, theme: &Theme, width: usize) -> Vec<Line<'static>> {
    let rows = app.keymap.help();
    // The pane's own keys first, as lazygit shows them: what a person
    // looks for is what this pane does, not all 40 actions (issue 41).
    let pane: Vec<(String, &str)> = (super::panes::status::hints(app.tab).iter())
        .chain(beyond_the_footer(app.tab))
        .map(|&(action, what)| {
            let keys: Vec<String> = (app.keymap.keys_of(action).iter())
                .map(super::keymap::Key::label)
                .collect();
            (keys.join(" "), what)
        })
        .collect();
    let keys_w = (rows.iter().chain(&pane))
        .map(|r| r.0.chars().count())
        .max()
        .unwrap_or(0);
    let keys_w = keys_w.min(width / 3);
    let mut out = Vec::new();
    let section = |title: String, rows: Vec<(String, &str)>, out: &mut Vec<Line<'static>>| {
        out.push(Line::styled(title, theme.title));
        for (keys, what) in rows {
            let what_w = width.saturating_sub(keys_w + 3).max(1);
            for (i, part) in wrap(what, what_w).into_iter().enumerate() {
                let k = if i == 0 { keys.as_str() } else { "" };
                out.push(Line::from(vec![
                    Span::styled(format!(" {k:>keys_w$} "), theme.key),
                    Span::raw(format!(" {part}")),
                ]));
            }
        }
        out.push(Line::raw(""));
    };
    section(format!("{} pane", app.tab.title()), pane, &mut out);
    section("Every key".into(), rows, &mut out);
    let typing = TYPING.iter().map(|&(k, w)| (k.to_string(), w)).collect();
    section("While typing".into(), typing, &mut out);
    out.push(Line::styled("Terms", theme.title));
    for (term, meaning) in GLOSSARY {
        out.push(Line::styled(format!(" {term}"), theme.key));
        for part in wrap(meaning, width.saturating_sub(3).max(1)) {
            out.push(Line::raw(format!("   {part}")));
        }
    }
    out
}

/// The last first line worth scrolling to on a screen of `area` (styles do
/// not change the count).
pub(crate) fn max_scroll(app: &App, area: Rect) -> usize {
    let p = popup(area);
    let inner_h = p.height.saturating_sub(2) as usize;
    let plain = Theme::new(lineage_config::ThemeName::Dark, true);
    lines(app, &plain, p.width.saturating_sub(2) as usize)
        .len()
        .saturating_sub(inner_h)
}

/// `text` in lines of at most `width` characters, broken at spaces (a word
/// longer than a line is cut).
pub(crate) fn wrap(text: &str, width: usize) -> Vec<String> {
    // Each line of the text on its own: the lines of a config snippet to
    // paste stay lines (they ran together as `k = 8selector = …`).
    text.split('\n').flat_map(|l| wrap_line(l, width)).collect()
}

/// [`wrap`] of one line; an empty line stays (as one empty line).
fn wrap_line(text: &str, width: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let mut word = word.to_string();
        while word.chars().count() > width {
            if !line.is_empty() {
                out.push(std::mem::take(&mut line));
            }
            let head: String = word.chars().take(width).collect();
            word = word.chars().skip(width).collect();
            out.push(head);
        }
        let need = line.chars().count() + usize::from(!line.is_empty()) + word.chars().count();
        if need > width && !line.is_empty() {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&word);
    }
    if !line.is_empty() || out.is_empty() {
        out.push(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_stay_lines_when_wrapped() {
        let text = "Not saved (disk full). Put these lines:\n\nk = 8\nselector = \"nhs\"";
        assert_eq!(
            wrap(text, 30),
            [
                "Not saved (disk full). Put",
                "these lines:",
                "",
                "k = 8",
                "selector = \"nhs\""
            ]
        );
        assert_eq!(wrap("a b c", 3), ["a b", "c"]);
    }

    #[test]
    fn wrap_keeps_words_and_width() {
        assert_eq!(wrap("the quick brown fox", 9), ["the quick", "brown fox"]);
        assert_eq!(wrap("abcdefghij k", 4), ["abcd", "efgh", "ij k"]);
        for w in 1..30 {
            for line in wrap(GLOSSARY[1].1, w) {
                assert!(line.chars().count() <= w, "{w}: {line}");
            }
        }
    }

    #[test]
    fn every_term_the_issue_names_is_defined() {
        let terms: Vec<&str> = GLOSSARY.iter().map(|g| g.0).collect();
        for t in [
            "dominant origin",
            "selector",
            "eviction",
            "estimation",
            "table %",
            "DO",
            "TF",
            "overall",
        ] {
            assert!(terms.iter().any(|x| x.contains(t)), "{t}");
        }
    }
}
