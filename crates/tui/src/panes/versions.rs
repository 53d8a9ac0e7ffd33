//! The list of the shown page's versions, over the Origin pane.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::{count, overlay};
use crate::app::App;
use crate::keymap::Action;
use crate::theme::Theme;
use lineage_engine::VersionStatus;

pub(crate) fn render(app: &App, theme: &Theme, area: Rect, f: &mut Frame) {
    let (Some(c), Some(view)) = (app.versions, &app.origin.view) else {
        return;
    };
    let popup = crate::help::popup(area);
    let height = crate::help::list_rows(popup);
    let latest = view.versions.last().map(|v| v.id);
    let notes = |v: &lineage_engine::VersionInfo| {
        let mut note = Vec::new();
        if v.id == view.id {
            note.push("shown");
        }
        if Some(v.id) == latest {
            note.push(match view.status {
                VersionStatus::Deleted => "deleted",
                _ => "current",
            });
        }
        if !v.text_kept {
            note.push("text not kept");
        }
        // A commit's subject says why the version is.
        let subject = v.commit.as_ref().map(|c| crate::paths::shown(&c.subject));
        note.extend(subject.as_deref());
        note.join(", ")
    };
    // The tokens go first where a row does not fit (60 columns), and the
    // list says so; a note still too long ends in `…`.
    let inner = popup.width.saturating_sub(2) as usize;
    let window = c.window(view.versions.len(), height);
    let widest = (window.clone())
        .map(|i| crate::glyphs::str_width(&notes(&view.versions[i])))
        .max()
        .unwrap_or(0);
    const FIXED: usize = 6 + 7 + 4 + 2 + 5 + 16 + 2;
    const TOKENS: usize = 16;
    let with_tokens = FIXED + TOKENS + widest <= inner;
    let rows = window.map(|i| {
        let v = &view.versions[i];
        let tokens = match with_tokens {
            true => format!("{:>9} tokens", count(u64::from(v.tokens))),
            false => String::new(),
        };
        // When lineage saw it, as the status bar and Events tell it (not
        // the file's mtime, which a copy or a checkout moves); a version
        // read from a repository's history: its commit and the day it was
        // written, in as many columns.
        let when = match &v.commit {
            Some(c) => format!(
                "{} {:<13}",
                c.id.get(..7).unwrap_or(&c.id),
                lineage_core::civil::date(c.time)
            ),
            None => format!(
                "seen {:<16}",
                super::events::when(v.seen_or_mtime_ms(), app.today)
            ),
        };
        let figures = format!("{tokens} {:>6.1}% new  {when}  ", v.fresh_percent);
        let room = inner.saturating_sub(6 + figures.chars().count());
        let line = Line::from(vec![
            Span::styled(format!(" v{:<4}", v.version), theme.key),
            Span::raw(figures),
            Span::styled(super::cut_end(&notes(v), room), theme.muted),
        ]);
        if i == c.selected {
            line.style(theme.selected)
        } else {
            line
        }
    });
    let k = |a| app.keymap.first(a);
    let mut lines: Vec<Line> = rows.collect();
    lines.push(Line::default());
    if view.exact {
        // The versions' figures are the recorded estimates; the exact result
        // is computed for the page shown only.
        lines.push(Line::styled(
            " % new: the live settings' estimate (the exact result is the page shown's)",
            theme.muted,
        ));
    }
    // One version: nothing to open or compare it with.
    let keys = if view.versions.len() > 1 {
        format!(
            " {} open · {} compare with v{} · {} close",
            k(Action::Select),
            k(Action::CompareVersion),
            view.version,
            k(Action::Back)
        )
    } else {
        // A page of a version folder has one version a path: its earlier
        // ones are its predecessors, which the diff names.
        let (d, esc) = (k(Action::Diff), k(Action::Back));
        let choices = [
            format!(
                " the only version of this path · {d} what it changed since its predecessor · {esc} close"
            ),
            format!(" the only version · {d} changes since its predecessor · {esc} close"),
            format!(" the only version · {d} changes · {esc} close"),
        ];
        super::first_fitting(&choices, inner)
    };
    lines.push(Line::styled(keys, theme.muted));
    let count = match with_tokens {
        true => view.versions.len().to_string(),
        false => format!("{}; tokens not shown", view.versions.len()),
    };
    let room = inner.saturating_sub(16 + count.len());
    let title = format!(
        " Versions of {} ({count}) ",
        crate::paths::fit(&view.path, "", room, 1)
    );
    overlay(f, theme, popup, title, lines);
}
