//! What keys and clicks do, pane by pane: the input half of [`update`].
//!
//! [`update`]: super::app::update

use ratatui::crossterm::event::{
    KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};

use super::app::{App, Input, TABS, Tab};
use super::effects::Effect;
use super::keymap::Action;
use super::layout;
use super::scroll::{Cursor, Move};
use super::tune::FIELDS;
use lineage_engine::{Command, EventKind};

pub(super) fn key(app: &mut App, k: KeyEvent, out: &mut Vec<Command>) {
    if k.code == KeyCode::Char('c') && k.modifiers.contains(KeyModifiers::CONTROL) {
        app.quit = true;
        return;
    }
    app.message = None;
    if let Some(input) = app.input.take() {
        app.input = typing(app, input, k, out);
        // The first key ends a selection, whatever it did.
        app.selected = false;
        return;
    }
    // Adopt asks first: enter or y adopts, s adopts and saves, esc or n not.
    if app.tune.confirm.is_some() {
        let (adopt, save) = match k.code {
            KeyCode::Enter | KeyCode::Char('y') => (true, false),
            KeyCode::Char('s') => (true, true),
            KeyCode::Esc | KeyCode::Char('n') => (false, false),
            _ => return,
        };
        let seen = (app.snapshot.as_ref())
            .and_then(|s| s.events.first())
            .map_or(0, |e| e.n);
        out.extend(app.tune.answer(adopt, save, seen));
        if let Some((p, keys)) = &app.tune.save {
            let save = super::effects::Effect::Save(*p, keys.clone());
            app.effects.push(save);
        }
        return;
    }
    let Some(action) = app.keymap.action(&k) else {
        return;
    };
    if app.event_detail.is_some() {
        match action {
            Action::Back | Action::Select => app.event_detail = None,
            Action::Quit => app.quit = true,
            _ => {}
        }
        return;
    }
    if app.versions.is_some() {
        return super::versions::key(app, action, out);
    }
    if app.copies.is_some() {
        return super::copies::key(app, action, out);
    }
    if app.shared.is_some() {
        return super::shared::key(app, action, out);
    }
    if app.stale.is_some() {
        return super::stale::key(app, action, out);
    }
    if app.diff.is_some() {
        return super::diff::key(app, action, out);
    }
    if super::find::is_open(app) {
        return super::find::key(app, action, out);
    }
    if app.help {
        let s = &mut app.help_scroll;
        match action {
            Action::Help | Action::Back => app.help = false,
            Action::Quit => app.quit = true,
            Action::Down => *s += 1,
            Action::Up => *s = s.saturating_sub(1),
            Action::PageDown => *s += 10,
            Action::PageUp => *s = s.saturating_sub(10),
            Action::Top => *s = 0,
            Action::Bottom => *s = usize::MAX,
            _ => {}
        }
        app.help_scroll = app.help_scroll.min(super::help::max_scroll(app, app.size));
        return;
    }
    act(app, action, out);
}

/// The most characters a prompt holds. A filter, a search or a file name
/// is one line; a pasted megabyte would otherwise be kept, matched and drawn
/// whole.
pub(crate) const MAX_INPUT: usize = 1024;

/// What the footer says when text was left out of a full prompt.
pub(crate) fn full_prompt() -> String {
    format!("a prompt holds {MAX_INPUT} characters: the rest was left out")
}

/// A key while text is typed; the input goes on unless it ends here.
fn typing(app: &mut App, input: Input, k: KeyEvent, out: &mut Vec<Command>) -> Option<Input> {
    let (mut text, field) = match input {
        Input::Filter(t) => (t, None),
        Input::Field(f, t) => (t, Some(f)),
        Input::Search(t) => return searching(app, t, k),
        Input::Find(t) => return finding(app, t, k, out),
        Input::ClusterFilter(t) => return filtering_clusters(app, t, k),
        Input::Export(t) => return exporting(app, t, k, out),
    };
    match k.code {
        KeyCode::Enter => {
            if let Some(f) = field {
                app.tune.set(f, text);
            }
            return None;
        }
        KeyCode::Esc => {
            if field.is_none() {
                let h = app.docs_height();
                app.docs.set_filter("", h);
            }
            return None;
        }
        _ => {
            // The filter acts once per batch of keys (`app::update_all`).
            let changed = edit_text(app, &mut text, &k) == Edit::Changed;
            app.retyped |= changed && field.is_none();
        }
    }
    Some(match field {
        Some(f) => Input::Field(f, text),
        None => Input::Filter(text),
    })
}

/// What a key did to the text typed.
#[derive(PartialEq)]
enum Edit {
    /// It was no edit (an arrow, a key with ctrl or alt).
    None,
    /// An edit that changed nothing (backspace on nothing, a full prompt).
    Same,
    Changed,
}

/// Open `input` again, its last text selected so the first character
/// typed replaces it and backspace clears it.
pub(super) fn open_prompt(app: &mut App, mut input: Input) {
    app.selected = !input.text_mut().is_empty();
    app.caret = None;
    app.input = Some(input);
}

/// Backspace or a character (without ctrl or alt) edits `text` at the
/// caret, which the arrows, home and end (ctrl-a, ctrl-e) and alt-b, alt-f
/// (a word back, on) move; delete takes the character after it; and
/// readline's kills: ctrl-u to the line's start, ctrl-k to its end, ctrl-w
/// the word before the caret (and the blanks after that word).
fn edit_text(app: &mut App, text: &mut String, k: &KeyEvent) -> Edit {
    let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
    let alt = k.modifiers.contains(KeyModifiers::ALT);
    let at = caret(app, text);
    // Remove `range`, the caret at its start.
    let cut = |app: &mut App, text: &mut String, range: std::ops::Range<usize>| {
        app.caret = (range.end < text.len()).then_some(range.start);
        if range.is_empty() {
            Edit::Same
        } else {
            text.replace_range(range, "");
            Edit::Changed
        }
    };
    // Move the caret to `to`.
    let to = |app: &mut App, text: &String, to: usize| {
        app.caret = (to < text.len()).then_some(to);
        Edit::Same
    };
    match k.code {
        KeyCode::Backspace if app.selected => cut(app, text, 0..text.len()),
        KeyCode::Char('u') if ctrl => cut(app, text, 0..at),
        KeyCode::Char('k') if ctrl => cut(app, text, at..text.len()),
        KeyCode::Char('w') if ctrl => cut(app, text, word_back(text, at)..at),
        KeyCode::Backspace => cut(app, text, char_back(text, at)..at),
        KeyCode::Delete => cut(app, text, at..char_on(text, at)),
        KeyCode::Left => to(app, text, char_back(text, at)),
        KeyCode::Right => to(app, text, char_on(text, at)),
        KeyCode::Home => to(app, text, 0),
        KeyCode::End => to(app, text, text.len()),
        KeyCode::Char('a') if ctrl => to(app, text, 0),
        KeyCode::Char('e') if ctrl => to(app, text, text.len()),
        KeyCode::Char('b') if alt => to(app, text, word_back(text, at)),
        KeyCode::Char('f') if alt => to(app, text, word_on(text, at)),
        KeyCode::Char(c) if !ctrl && !alt => {
            let replaced = app.selected && !text.is_empty();
            if app.selected {
                text.clear();
                app.caret = None;
            }
            let mut buf = [0; 4];
            match insert(app, text, c.encode_utf8(&mut buf)) {
                Edit::Same if replaced => Edit::Changed,
                e => e,
            }
        }
        _ => Edit::None,
    }
}

/// Where the caret stands in `text`: a byte offset on a character's
/// boundary (the end where none is set).
fn caret(app: &App, text: &str) -> usize {
    let at = app.caret.map_or(text.len(), |c| c.min(text.len()));
    (0..=at)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0)
}

/// The character boundary before `at` (0 at the start).
fn char_back(text: &str, at: usize) -> usize {
    text[..at].char_indices().next_back().map_or(0, |(i, _)| i)
}

/// The character boundary after `at` (the end at the end).
fn char_on(text: &str, at: usize) -> usize {
    text[at..].chars().next().map_or(at, |c| at + c.len_utf8())
}

/// Where the word before `at` starts, past the blanks before `at`.
fn word_back(text: &str, at: usize) -> usize {
    let word = text[..at].trim_end_matches(char::is_whitespace);
    word.trim_end_matches(|c: char| !c.is_whitespace()).len()
}

/// Where the word after `at` ends, past the blanks after `at`.
fn word_on(text: &str, at: usize) -> usize {
    let rest = &text[at..];
    let word = rest.trim_start_matches(char::is_whitespace);
    let tail = word.trim_start_matches(|c: char| !c.is_whitespace());
    text.len() - tail.len()
}

/// Put `s` into `text` at the caret, up to [`MAX_INPUT`] characters (the
/// footer says when some were left out); control characters (a pasted
/// line's end, a tab) as spaces: a prompt is one line.
fn insert(app: &mut App, text: &mut String, s: &str) -> Edit {
    let before = text.len();
    // Characters are counted only when they may be too many (never more
    // than bytes): a paste that arrives as keys (no bracketed paste) comes
    // here once per character.
    let room = if before + s.len() <= MAX_INPUT {
        usize::MAX
    } else {
        MAX_INPUT.saturating_sub(text.chars().count())
    };
    let mut chars = s.chars();
    let put: String = (chars.by_ref().take(room))
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let at = caret(app, text);
    text.insert_str(at, &put);
    if app.caret.is_some() {
        app.caret = Some(at + put.len());
    }
    if chars.next().is_some() {
        app.message = Some(full_prompt());
    }
    if text.len() == before {
        Edit::Same
    } else {
        Edit::Changed
    }
}

/// Pasted text (the terminal's bracketed paste): into the prompt open, as
/// one edit; acted on as typed keys are ([`super::app::update_all`]). With
/// no prompt open it does nothing: pasted text is not keys to obey.
pub(super) fn paste(app: &mut App, pasted: &str) {
    let Some(mut input) = app.input.take() else {
        return;
    };
    app.message = None;
    let text = pasted.trim_end_matches(['\r', '\n']);
    let replaced = std::mem::take(&mut app.selected) && !input.text_mut().is_empty();
    if replaced {
        input.text_mut().clear();
        app.caret = None;
    }
    let changed = insert(app, input.text_mut(), text) == Edit::Changed || replaced;
    app.retyped |= changed
        && matches!(
            input,
            Input::Filter(_) | Input::Search(_) | Input::ClusterFilter(_)
        );
    app.input = Some(input);
}

/// A key while a search of the Origin text is typed: the text is searched
/// once per batch of keys (`app::update_all`).
fn searching(app: &mut App, mut text: String, k: KeyEvent) -> Option<Input> {
    match k.code {
        KeyCode::Enter => return None,
        KeyCode::Esc => {
            app.origin.search = None;
            return None;
        }
        _ => app.retyped |= edit_text(app, &mut text, &k) == Edit::Changed,
    }
    Some(Input::Search(text))
}

/// A key while the Clusters filter is typed: they are listed again once per
/// batch of keys (`app::update_all`); enter keeps it, esc clears it.
fn filtering_clusters(app: &mut App, mut text: String, k: KeyEvent) -> Option<Input> {
    match k.code {
        KeyCode::Enter => None,
        KeyCode::Esc => {
            if !app.clusters.filter.is_empty() {
                app.clusters.filter.clear();
                app.relist_clusters();
            }
            None
        }
        _ => {
            app.retyped |= edit_text(app, &mut text, &k) == Edit::Changed;
            Some(Input::ClusterFilter(text))
        }
    }
}

/// A key while the words of a search of every page are typed; enter asks.
fn finding(app: &mut App, mut text: String, k: KeyEvent, out: &mut Vec<Command>) -> Option<Input> {
    match k.code {
        KeyCode::Enter => {
            out.extend(super::find::ask(app, text));
            None
        }
        KeyCode::Esc => None,
        _ => {
            edit_text(app, &mut text, &k);
            Some(Input::Find(text))
        }
    }
}

/// A key while the export's file name is typed; enter exports.
fn exporting(
    app: &mut App,
    mut text: String,
    k: KeyEvent,
    out: &mut Vec<Command>,
) -> Option<Input> {
    match k.code {
        // A `.html` name: the report of every page, which the engine writes.
        KeyCode::Enter if super::export::is_report(&text) => {
            let snap = app.snapshot.clone()?;
            let path =
                super::export::target(&app.start_dir, std::env::home_dir().as_deref(), &text);
            app.message = Some(match super::export::writable(&path, &snap.root) {
                Ok(path) => {
                    let shown = super::paths::shown_path(&path);
                    out.push(Command::Report { path });
                    format!("writing the report to {shown}…")
                }
                Err(e) => e,
            });
            return None;
        }
        KeyCode::Enter => {
            let (Some(snap), Ok(table)) = (app.snapshot.clone(), super::export::table(app)) else {
                return None;
            };
            let path =
                super::export::target(&app.start_dir, std::env::home_dir().as_deref(), &text);
            app.effects.push(Effect::Export {
                bytes: super::export::render(&table, &path),
                rows: table.rows.len(),
                root: snap.root.clone(),
                path,
            });
            return None;
        }
        KeyCode::Esc => return None,
        _ => {
            edit_text(app, &mut text, &k);
        }
    }
    Some(Input::Export(text))
}

fn act(app: &mut App, action: Action, out: &mut Vec<Command>) {
    if let Some(&tab) = TABS.iter().find(|t| t.action() == action) {
        return switch(app, tab, out);
    }
    if let Some(m) = Move::of(action) {
        return step(app, m);
    }
    let at = TABS.iter().position(|&t| t == app.tab).unwrap_or(0);
    match action {
        Action::Quit => app.quit = true,
        Action::Help => {
            app.help = true;
            app.help_scroll = 0;
        }
        Action::NextTab => switch(app, TABS[(at + 1) % TABS.len()], out),
        Action::PrevTab => switch(app, TABS[(at + TABS.len() - 1) % TABS.len()], out),
        Action::Rescan => {
            out.push(Command::Rescan);
            app.rescan = Some(app.snapshot.as_ref().map_or(0, |s| s.seq));
        }
        Action::Find => {
            // The last words again: enter brings their list back.
            let last = app.find.as_ref().map(|f| f.query.clone());
            open_prompt(app, Input::Find(last.unwrap_or_default()));
        }
        Action::Stale => out.extend(super::stale::open(app)),
        Action::Copy => copy(app),
        Action::Edit => edit(app),
        Action::Export => match super::export::table(app) {
            // A default name, not a last answer: not selected, edited in place.
            Ok(_) => {
                app.caret = None;
                app.input = Some(Input::Export(super::export::default_name(app.tab)));
            }
            Err(e) => app.message = Some(e),
        },
        Action::Filter if app.tab == Tab::Origin && app.origin.view.is_some() => {
            let query = app.origin.search.as_ref().map(|s| s.query.clone());
            open_prompt(app, Input::Search(query.unwrap_or_default()));
        }
        Action::Filter if app.tab == Tab::Clusters && app.clusters.compare.is_none() => {
            open_prompt(app, Input::ClusterFilter(app.clusters.filter.clone()));
        }
        Action::Cluster => show_cluster(app),
        Action::Filter => {
            // A new filter each time (the last one is not appended to).
            app.tab = Tab::Documents;
            let h = app.docs_height();
            app.docs.set_filter("", h);
            open_prompt(app, Input::Filter(String::new()));
        }
        _ => match app.tab {
            Tab::Documents => documents_action(app, action, out),
            Tab::Origin => origin_action(app, action, out),
            Tab::Clusters => clusters_action(app, action, out),
            Tab::Tune => tune_action(app, action, out),
            Tab::Events => {
                if action == Action::Select {
                    open_event(app, out);
                }
            }
            Tab::Table => {}
        },
    }
}

fn switch(app: &mut App, tab: Tab, out: &mut Vec<Command>) {
    app.tab = tab;
    // The Origin pane shows the selected document until something else is asked.
    let selected = app.docs.selected().map(|d| d.id);
    if let (Tab::Origin, None, Some(id)) = (tab, app.origin.requested, selected) {
        out.push(app.origin.open(id));
    }
}

/// Move the current pane's selection (or scroll its text).
fn step(app: &mut App, m: Move) {
    match app.tab {
        Tab::Documents => {
            let h = app.docs_height();
            app.docs.move_cursor(m, h);
        }
        Tab::Origin => {
            let h = app.origin_text().height as usize;
            match m {
                Move::By(d) => app.origin.scroll_by(d, h),
                Move::Page(d) => app.origin.scroll_by(d * h.max(1) as isize, h),
                Move::Top => app.origin.scroll_to(0, h),
                Move::Bottom => app.origin.scroll_to(usize::MAX, h),
                Move::To(i) => app.origin.scroll_to(i, h),
            }
        }
        Tab::Clusters => {
            let c = app.clusters_layout();
            if app.clusters.compare.is_some() {
                // A comparison on screen takes every move (the lists are
                // hidden behind it).
                let height = layout::inner(c.left).height as usize;
                let widths = app.compare_widths();
                app.clusters.scroll_sides(m, widths, height);
            } else if app.clusters.on_pairs {
                let n = app.pairs_len();
                app.clusters
                    .pairs
                    .apply(m, n, layout::rows_height(c.pairs, 0));
            } else {
                let (n, before) = (app.clusters_len(), app.clusters.list.selected);
                app.clusters
                    .list
                    .apply(m, n, layout::rows_height(c.list, 0));
                if app.clusters.list.selected != before {
                    app.clusters.select_cluster();
                }
            }
        }
        // Page keys pick a row of a sweep's table; other moves the field.
        Tab::Tune if app.tune.sweep_table && matches!(m, Move::Page(_)) => {
            if let Move::Page(d) = m {
                app.tune.move_point(d);
            }
        }
        Tab::Tune => {
            let mut c = Cursor {
                selected: app.tune.focus,
                offset: 0,
            };
            c.apply(m, FIELDS.len(), FIELDS.len());
            app.tune.focus = c.selected;
        }
        Tab::Events => {
            let (n, h) = (app.events_len(), app.events_height());
            app.events.apply(m, n, h);
        }
        Tab::Table => {}
    }
}

fn documents_action(app: &mut App, action: Action, out: &mut Vec<Command>) {
    let h = app.docs_height();
    let (sort, rev) = app.docs.sort();
    match action {
        Action::Select => {
            if let Some(id) = app.docs.selected().map(|d| d.id) {
                out.push(app.origin.open(id));
                app.origin.back.clear();
                app.tab = Tab::Origin;
            }
        }
        Action::Back => app.docs.set_filter("", h),
        // Matches ranked best first: the first `s` sorts them by the key
        // shown; the next goes on to the next key.
        Action::Sort if app.docs.ranked() => app.docs.set_sort(sort, rev, h),
        Action::Sort => app.docs.set_sort(sort.next(), false, h),
        Action::Reverse => app.docs.set_sort(sort, !rev, h),
        Action::Basis => {
            let basis = app.docs.shares.basis.next();
            app.docs.set_basis(basis, h);
            out.push(Command::Shares { basis });
            app.effects.push(super::effects::Effect::SaveBasis(basis));
        }
        _ => {}
    }
}

fn origin_action(app: &mut App, action: Action, out: &mut Vec<Command>) {
    let h = app.origin_text().height as usize;
    let cmd = match action {
        Action::Select => app.origin.jump(),
        Action::Back if app.origin.search.is_some() => {
            app.origin.search = None;
            None
        }
        Action::Back => app.origin.go_back(),
        Action::Exact => app.origin.toggle_exact(),
        Action::Versions => {
            super::versions::open(app);
            None
        }
        Action::Copies => super::copies::open(app),
        Action::Shared => super::shared::open(app),
        Action::Diff => super::diff::open(app),
        Action::NextNew | Action::PrevNew => {
            app.origin.step_new(action == Action::NextNew, h);
            None
        }
        Action::NextBlock | Action::PrevBlock => {
            app.origin.step_block(action == Action::NextBlock, h);
            None
        }
        Action::NextMatch | Action::PrevMatch => {
            app.origin.step_match(action == Action::NextMatch, h);
            None
        }
        _ => None,
    };
    out.extend(cmd);
}

/// `#` on a page (Documents' selected one, Origin's): its cluster, in
/// Clusters; back returns.
fn show_cluster(app: &mut App) {
    let id = match app.tab {
        Tab::Documents => app.docs.selected().map(|d| d.id),
        Tab::Origin => app.origin.id(),
        _ => None,
    };
    let (Some(id), Some(snap)) = (id, app.snapshot.clone()) else {
        return;
    };
    let Some(index) = snap.documents.cluster(id) else {
        let name = app.doc(id).map(|d| d.path.to_string()).unwrap_or_default();
        app.message = Some(format!(
            "{} is in no cluster: no live page resembles it",
            super::paths::shown(&name)
        ));
        return;
    };
    let index = index as usize;
    if !app.clusters.order.contains(&index) {
        // The filter hides it.
        app.clusters.filter.clear();
        app.arrange_clusters();
    }
    if app.clusters.select(index) {
        app.clusters.compare = None;
        app.clusters.came_from = Some(app.tab);
        app.tab = Tab::Clusters;
        app.show_clusters();
    }
}

fn clusters_action(app: &mut App, action: Action, out: &mut Vec<Command>) {
    match action {
        Action::Sort if app.clusters.compare.is_none() => {
            app.clusters.sort = app.clusters.sort.next();
            app.clusters.reverse = false;
            app.relist_clusters();
        }
        Action::Reverse if app.clusters.compare.is_none() => {
            app.clusters.reverse = !app.clusters.reverse;
            app.relist_clusters();
        }
        Action::Left => app.clusters.on_pairs = false,
        Action::Right => app.clusters.on_pairs = app.pairs_len() > 0,
        Action::Select if !app.clusters.on_pairs => app.clusters.on_pairs = app.pairs_len() > 0,
        Action::Select => {
            let pair = (app.cluster())
                .and_then(|c| c.pairs.get(app.clusters.pairs.selected))
                .copied();
            if let Some((a, b, _)) = pair {
                out.push(app.clusters.compare(a, b));
            }
        }
        Action::Back if app.clusters.compare.is_some() => {
            if let Some(tab) = app.clusters.close() {
                app.tab = tab;
            }
        }
        // Back to the page whose cluster this is, else the filter cleared.
        Action::Back if app.clusters.came_from.is_some() => {
            app.tab = app.clusters.came_from.take().unwrap_or(Tab::Clusters);
        }
        Action::Back if !app.clusters.filter.is_empty() => {
            app.clusters.filter.clear();
            app.relist_clusters();
        }
        Action::NextBlock | Action::PrevBlock if app.clusters.compare.is_some() => {
            let c = app.clusters_layout();
            let height = layout::inner(c.left).height as usize;
            let forward = action == Action::NextBlock;
            let widths = app.compare_widths();
            app.clusters.step_passage(forward, widths, height);
        }
        Action::Back => app.clusters.on_pairs = false,
        _ => {}
    }
}

fn tune_action(app: &mut App, action: Action, out: &mut Vec<Command>) {
    let field = app.tune.field();
    match action {
        Action::Back if app.tune.running() => out.extend(app.tune.cancel()),
        Action::Left => app.tune.cycle(-1),
        Action::Right => app.tune.cycle(1),
        Action::Select if field.choices().is_some() => app.tune.cycle(1),
        Action::Select => {
            open_prompt(app, Input::Field(field, app.tune.value(field).to_string()));
        }
        Action::SweepView => app.tune.sweep_table = !app.tune.sweep_table,
        Action::TakePoint => app.tune.take_point(),
        Action::Apply | Action::Sweep | Action::Adopt => {
            let Some(snap) = app.snapshot.clone() else {
                app.tune.error = Some("the engine has not reported yet".into());
                return;
            };
            let cmd = match action {
                Action::Apply => app.tune.compare(&snap),
                Action::Sweep => app.tune.sweep(&snap),
                _ => {
                    app.tune.adopt(&snap);
                    None
                }
            };
            out.extend(cmd);
        }
        _ => {}
    }
}

/// Put the document's path on the clipboard: the selected one (Documents),
/// the one shown (Origin), a side of the selected or compared pair (Clusters:
/// again for the other side).
fn copy(app: &mut App) {
    let Some(snap) = app.snapshot.clone() else {
        return;
    };
    let name = match app.tab {
        Tab::Documents => app.docs.selected().map(|d| d.path.to_string()),
        Tab::Origin => app.origin.view.as_ref().map(|v| v.path.clone()),
        Tab::Clusters => {
            let pair = match &app.clusters.compare {
                Some(v) => Some((v.a.path.clone(), v.b.path.clone())),
                None => (app.cluster())
                    .and_then(|c| c.pairs.get(app.clusters.pairs.selected))
                    .and_then(|&(a, b, _)| {
                        Some((app.doc(a)?.path.to_string(), app.doc(b)?.path.to_string()))
                    }),
            };
            let second = app.clusters.copy_second;
            app.clusters.copy_second = !second;
            pair.map(|(a, b)| if second { b } else { a })
        }
        _ => None,
    };
    let Some(name) = name else {
        app.message = Some("no document here to copy".into());
        return;
    };
    let path = lineage_source::name::path(&snap.root, &name);
    app.effects
        // The path's bytes as the OS has them (a name need not be UTF-8).
        .push(Effect::Copy(path.as_os_str().as_encoded_bytes().to_vec()));
    app.message = Some(format!("copied {}", super::paths::shown_path(&path)));
}

/// Open the editor on the document shown in Origin (at the selected copied
/// block, else at the top line shown) or selected in Documents (at its top).
fn edit(app: &mut App) {
    let Some(snap) = app.snapshot.clone() else {
        return;
    };
    let (name, line) = match (app.tab, &app.origin.view) {
        (Tab::Origin, Some(v)) => {
            let o = &app.origin;
            let block = (o.block.and_then(|b| v.runs.get(b)))
                .and_then(|r| super::panes::token_bytes(&v.spans, r.start..r.end));
            let at =
                block.map_or_else(|| o.lines.get(o.scroll).map_or(0, |l| l.start), |b| b.start);
            let html =
                lineage_core::text::Format::from_path(&v.path) == lineage_core::text::Format::Html;
            let line = match &v.text {
                Ok(t) => super::editor::file_line(t, at, html),
                Err(_) => Some(1),
            };
            (v.path.clone(), line)
        }
        (Tab::Documents, _) => match app.docs.selected() {
            Some(d) => (d.path.to_string(), Some(1)),
            None => return,
        },
        _ => {
            app.message = Some("no document here to edit".into());
            return;
        }
    };
    let file = lineage_source::name::path(&snap.root, &name);
    match super::editor::call(&app.editor, line.unwrap_or(1), &file) {
        Ok(call) => {
            let shown = super::paths::shown_path(&file);
            app.message = Some(match line {
                Some(l) => format!("edited {shown} at line {l}"),
                None => {
                    format!("edited {shown} at line 1: an HTML file's lines are not its text's")
                }
            });
            app.effects.push(Effect::Edit(call));
        }
        Err(e) => app.message = Some(e),
    }
}

/// Enter on an event: a version (or a rename) opens its origins; any other
/// event opens in full.
fn open_event(app: &mut App, out: &mut Vec<Command>) {
    let Some(kind) = app
        .snapshot
        .as_ref()
        .and_then(|s| s.events.get(app.events.selected))
        .map(|e| e.kind.clone())
    else {
        return;
    };
    match kind {
        EventKind::Version { id, .. } | EventKind::Renamed { id, .. } => {
            out.push(app.origin.open(id));
            app.origin.back.clear();
            app.tab = Tab::Origin;
        }
        other => {
            let plain = super::theme::Theme::new(lineage_config::ThemeName::Dark, true);
            let (what, _, text) = super::panes::events::describe(&other, &plain);
            app.event_detail = Some(format!("{what}: {text}"));
        }
    }
}

pub(super) fn mouse(app: &mut App, m: MouseEvent, out: &mut Vec<Command>) {
    let screen = layout::screen(app.size);
    match m.kind {
        MouseEventKind::ScrollUp => step(app, Move::By(-3)),
        MouseEventKind::ScrollDown => step(app, Move::By(3)),
        MouseEventKind::Down(MouseButton::Left) if m.row == screen.tabs.y => {
            if let Some(tab) =
                super::panes::status::tab_at(&app.keymap, app.tab, app.size.width, m.column)
            {
                switch(app, tab, out);
            }
        }
        MouseEventKind::Down(MouseButton::Left) => click(app, m.column, m.row),
        _ => {}
    }
}

/// Select what was clicked in the current pane.
fn click(app: &mut App, x: u16, y: u16) {
    let body = app.body();
    match app.tab {
        Tab::Documents => {
            let (_, rows) = layout::table_rows(body);
            if let Some(r) = layout::row_at(rows, x, y) {
                let i = app.docs.cursor.offset + r;
                if i < app.docs.len() {
                    let h = app.docs_height();
                    app.docs.move_cursor(Move::To(i), h);
                }
            }
        }
        Tab::Origin => {
            let text = app.origin_text();
            if let Some(r) = layout::row_at(text, x, y) {
                let run = app.origin.run_at(app.origin.scroll + r, x - text.x);
                let copied = |b: &usize| {
                    app.origin
                        .view
                        .as_ref()
                        .is_some_and(|v| v.runs[*b].origin.is_some())
                };
                if let Some(b) = run.filter(copied) {
                    app.origin.block = Some(b);
                }
            }
        }
        Tab::Clusters => {
            let c = app.clusters_layout();
            if let Some(r) = layout::row_at(layout::inner(c.list), x, y) {
                let i = app.clusters.list.offset + r;
                if i < app.clusters_len() {
                    app.clusters.on_pairs = false;
                    if i != app.clusters.list.selected {
                        app.clusters.list.selected = i;
                        app.clusters.select_cluster();
                    }
                }
            } else if let Some(r) = layout::row_at(layout::inner(c.pairs), x, y) {
                let i = app.clusters.pairs.offset + r;
                if i < app.pairs_len() {
                    app.clusters.on_pairs = true;
                    app.clusters.pairs.selected = i;
                }
            }
        }
        Tab::Tune => {
            let form = layout::inner(layout::tune(body).form);
            if let Some(r) = layout::row_at(form, x, y).filter(|&r| r < FIELDS.len()) {
                app.tune.focus = r;
            }
        }
        Tab::Events => {
            let (_, rows) = layout::table_rows(body);
            if let Some(r) = layout::row_at(rows, x, y) {
                let i = app.events.offset + r;
                if i < app.events_len() {
                    app.events.selected = i;
                }
            }
        }
        Tab::Table => {}
    }
}
