//! The TUI's state and its one transition, [`update`]: a message in (a key,
//! a click, an engine update), engine commands out. No I/O, so tests drive
//! it with made-up events and updates.

use std::collections::HashMap;
use std::sync::Arc;

use ratatui::crossterm::event::{
    Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::layout::Rect;

use super::clusters::ClusterState;
use super::documents::DocList;
use super::filter::Matcher;
use super::keymap::{Action, Keymap};
use super::layout;
use super::origin::OriginState;
use super::scroll::{Cursor, Move};
use super::tune::{FIELDS, Field, TuneState};
use crate::engine::{Command, DocRow, EventKind, Snapshot, Update};

/// What the UI loop receives, from the input thread or the engine.
#[derive(Debug)]
pub enum Msg {
    Input(Event),
    Engine(Update),
    /// Nothing happened, but look again (the input thread's wake-up after a
    /// panic elsewhere restored the terminal).
    Tick,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tab {
    Documents,
    Origin,
    Clusters,
    Table,
    Tune,
    Events,
}

pub const TABS: [Tab; 6] = [
    Tab::Documents,
    Tab::Origin,
    Tab::Clusters,
    Tab::Table,
    Tab::Tune,
    Tab::Events,
];

impl Tab {
    pub fn title(self) -> &'static str {
        match self {
            Tab::Documents => "Documents",
            Tab::Origin => "Origin",
            Tab::Clusters => "Clusters",
            Tab::Table => "Table",
            Tab::Tune => "Tune",
            Tab::Events => "Events",
        }
    }

    pub fn action(self) -> Action {
        match self {
            Tab::Documents => Action::Documents,
            Tab::Origin => Action::Origin,
            Tab::Clusters => Action::Clusters,
            Tab::Table => Action::Table,
            Tab::Tune => Action::Tune,
            Tab::Events => Action::Events,
        }
    }
}

/// Text being typed: a key goes to it rather than to the keymap.
#[derive(Clone, Debug, PartialEq)]
pub enum Input {
    Filter(String),
    Field(Field, String),
}

pub struct App {
    pub keymap: Keymap,
    /// The terminal's size.
    pub size: Rect,
    pub snapshot: Option<Arc<Snapshot>>,
    /// Version id → index in the snapshot's documents (built when clusters
    /// need it).
    pub by_id: HashMap<u32, u32>,
    pub fatal: Option<String>,
    pub tab: Tab,
    pub help: bool,
    pub input: Option<Input>,
    /// A filter typed but not yet applied (see [`update_all`]).
    pending_filter: Option<String>,
    pub docs: DocList,
    pub origin: OriginState,
    pub clusters: ClusterState,
    pub events: Cursor,
    pub tune: TuneState,
    pub quit: bool,
}

impl App {
    pub fn new(keymap: Keymap, matcher: Box<dyn Matcher>, width: u16, height: u16) -> App {
        App {
            keymap,
            size: Rect::new(0, 0, width, height),
            snapshot: None,
            by_id: HashMap::new(),
            fatal: None,
            tab: Tab::Documents,
            help: false,
            input: None,
            pending_filter: None,
            docs: DocList::new(matcher),
            origin: OriginState::default(),
            clusters: ClusterState::default(),
            events: Cursor::default(),
            tune: TuneState::default(),
            quit: false,
        }
    }

    /// A live document by version id.
    pub fn doc(&self, id: u32) -> Option<&DocRow> {
        let i = *self.by_id.get(&id)?;
        self.docs.all().get(i as usize)
    }

    fn body(&self) -> Rect {
        layout::screen(self.size).body
    }

    fn docs_height(&self) -> usize {
        layout::rows_height(self.body(), 1)
    }

    fn events_height(&self) -> usize {
        layout::rows_height(self.body(), 1)
    }

    /// The Origin pane's text area (inside its border).
    fn origin_text(&self) -> Rect {
        layout::inner(layout::origin(self.body()).0)
    }

    fn clusters_len(&self) -> usize {
        self.snapshot.as_ref().map_or(0, |s| s.clusters.len())
    }

    fn pairs_len(&self) -> usize {
        self.snapshot
            .as_ref()
            .and_then(|s| s.clusters.get(self.clusters.list.selected))
            .map_or(0, |c| c.pairs.len())
    }

    fn events_len(&self) -> usize {
        self.snapshot.as_ref().map_or(0, |s| s.events.len())
    }
}

/// Apply one message; return what to ask of the engine.
pub fn update(app: &mut App, msg: Msg) -> Vec<Command> {
    update_all(app, std::iter::once(msg))
}

/// Apply messages received together. Keys typed into the filter in one batch
/// filter the rows once, after the last of them (or before any other message).
pub fn update_all(app: &mut App, msgs: impl IntoIterator<Item = Msg>) -> Vec<Command> {
    let mut out = Vec::new();
    for msg in msgs {
        if !typing_filter(app, &msg) {
            settle(app);
        }
        apply(app, msg, &mut out);
    }
    settle(app);
    out
}

fn typing_filter(app: &App, msg: &Msg) -> bool {
    let typed = |k: &KeyEvent| {
        matches!(k.code, KeyCode::Char(_) | KeyCode::Backspace)
            && !k
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
    };
    matches!(app.input, Some(Input::Filter(_)))
        && matches!(msg, Msg::Input(Event::Key(k)) if typed(k))
}

/// Filter the rows by the pattern typed so far.
fn settle(app: &mut App) {
    if let Some(pattern) = app.pending_filter.take() {
        let h = app.docs_height();
        app.docs.set_filter(&pattern, h);
    }
}

fn apply(app: &mut App, msg: Msg, out: &mut Vec<Command>) {
    match msg {
        Msg::Input(Event::Key(k)) if k.kind != KeyEventKind::Release => key(app, k, out),
        Msg::Input(Event::Mouse(m)) => mouse(app, m, out),
        Msg::Input(Event::Resize(w, h)) => resize(app, w, h),
        Msg::Input(_) => {}
        Msg::Engine(u) => engine(app, u),
        Msg::Tick => {}
    }
}

fn engine(app: &mut App, u: Update) {
    match u {
        Update::Snapshot(s) => snapshot(app, s),
        Update::Origin(v) => {
            let text = app.origin_text();
            app.origin.receive(v, text.width, text.height as usize);
        }
        Update::Compare(v) => {
            app.clusters.receive(v);
        }
        Update::Shadow(u) => {
            app.tune.receive(u);
        }
        Update::Fatal(e) => app.fatal = Some(e),
    }
}

fn snapshot(app: &mut App, s: Arc<Snapshot>) {
    if !app.tune.filled {
        app.tune.fill(&s.params);
        app.tune.filled = true;
    }
    let h = app.docs_height();
    app.docs.set_docs(s.documents.clone(), h);
    app.by_id.clear();
    if !s.clusters.is_empty() {
        app.by_id = (s.documents.iter().enumerate())
            .map(|(i, d)| (d.id, i as u32))
            .collect();
    }
    app.snapshot = Some(s);
    let (list, pairs) = (app.clusters_len(), app.pairs_len());
    let c = layout::clusters(app.body());
    app.clusters.list.show(list, layout::rows_height(c.list, 0));
    app.clusters
        .pairs
        .show(pairs, layout::rows_height(c.pairs, 0));
    let (n, h) = (app.events_len(), app.events_height());
    app.events.show(n, h);
}

fn resize(app: &mut App, w: u16, h: u16) {
    app.size = Rect::new(0, 0, w, h);
    let text = app.origin_text();
    app.origin.resize(text.width, text.height as usize);
    let h = app.docs_height();
    let n = app.docs.len();
    app.docs.cursor.show(n, h);
    let (n, h) = (app.events_len(), app.events_height());
    app.events.show(n, h);
}

fn key(app: &mut App, k: KeyEvent, out: &mut Vec<Command>) {
    if k.code == KeyCode::Char('c') && k.modifiers.contains(KeyModifiers::CONTROL) {
        app.quit = true;
        return;
    }
    if let Some(input) = app.input.take() {
        app.input = typing(app, input, k);
        return;
    }
    let Some(action) = app.keymap.action(&k) else {
        return;
    };
    if app.help {
        match action {
            Action::Help | Action::Back => app.help = false,
            Action::Quit => app.quit = true,
            _ => {}
        }
        return;
    }
    act(app, action, out);
}

/// A key while text is typed; the input goes on unless it ends here.
fn typing(app: &mut App, input: Input, k: KeyEvent) -> Option<Input> {
    let (mut text, field) = match input {
        Input::Filter(t) => (t, None),
        Input::Field(f, t) => (t, Some(f)),
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
        KeyCode::Backspace => {
            text.pop();
        }
        KeyCode::Char(c)
            if !k
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
        {
            text.push(c)
        }
        _ => {}
    }
    match field {
        Some(f) => Some(Input::Field(f, text)),
        None => {
            app.pending_filter = Some(text.clone());
            Some(Input::Filter(text))
        }
    }
}

fn act(app: &mut App, action: Action, out: &mut Vec<Command>) {
    if let Some(&tab) = TABS.iter().find(|t| t.action() == action) {
        return switch(app, tab, out);
    }
    let at = TABS.iter().position(|&t| t == app.tab).unwrap_or(0);
    match action {
        Action::Quit => app.quit = true,
        Action::Help => app.help = true,
        Action::NextTab => switch(app, TABS[(at + 1) % TABS.len()], out),
        Action::PrevTab => switch(app, TABS[(at + TABS.len() - 1) % TABS.len()], out),
        Action::Rescan => out.push(Command::Rescan),
        Action::Up => step(app, Move::By(-1)),
        Action::Down => step(app, Move::By(1)),
        Action::PageUp => step(app, Move::Page(-1)),
        Action::PageDown => step(app, Move::Page(1)),
        Action::Top => step(app, Move::Top),
        Action::Bottom => step(app, Move::Bottom),
        Action::Filter => {
            app.tab = Tab::Documents;
            app.input = Some(Input::Filter(app.docs.filter().to_string()));
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
            let c = layout::clusters(app.body());
            if let (Move::Page(d), Some(_)) = (m, &app.clusters.compare) {
                // Pages scroll the comparison; lines move in the lists.
                let page = layout::inner(c.left).height.max(1) as isize;
                app.clusters.scroll = app.clusters.scroll.saturating_add_signed(d * page);
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
        Action::Sort => app.docs.set_sort(sort.next(), false, h),
        Action::Reverse => app.docs.set_sort(sort, !rev, h),
        _ => {}
    }
}

fn origin_action(app: &mut App, action: Action, out: &mut Vec<Command>) {
    let h = app.origin_text().height as usize;
    let cmd = match action {
        Action::Select => app.origin.jump(),
        Action::Back => app.origin.go_back(),
        Action::Exact => app.origin.toggle_exact(),
        Action::NextBlock | Action::PrevBlock => {
            app.origin.step_block(action == Action::NextBlock, h);
            None
        }
        _ => None,
    };
    out.extend(cmd);
}

fn clusters_action(app: &mut App, action: Action, out: &mut Vec<Command>) {
    match action {
        Action::Left => app.clusters.on_pairs = false,
        Action::Right => app.clusters.on_pairs = app.pairs_len() > 0,
        Action::Select if !app.clusters.on_pairs => app.clusters.on_pairs = app.pairs_len() > 0,
        Action::Select => {
            let pair = app
                .snapshot
                .as_ref()
                .and_then(|s| s.clusters.get(app.clusters.list.selected))
                .and_then(|c| c.pairs.get(app.clusters.pairs.selected))
                .copied();
            if let Some((a, b, _)) = pair {
                out.push(app.clusters.compare(a, b));
            }
        }
        Action::Back if app.clusters.compare.is_some() => app.clusters.close(),
        Action::Back => app.clusters.on_pairs = false,
        _ => {}
    }
}

fn tune_action(app: &mut App, action: Action, out: &mut Vec<Command>) {
    let field = app.tune.field();
    match action {
        Action::Left => app.tune.cycle(-1),
        Action::Right => app.tune.cycle(1),
        Action::Select if field.choices().is_some() => app.tune.cycle(1),
        Action::Select => {
            app.input = Some(Input::Field(field, app.tune.value(field).to_string()));
        }
        Action::Apply | Action::Sweep | Action::Adopt => {
            let Some(snap) = app.snapshot.clone() else {
                app.tune.error = Some("the engine has not reported yet".into());
                return;
            };
            let cmd = match action {
                Action::Apply => app.tune.compare(&snap),
                Action::Sweep => app.tune.sweep(&snap),
                _ => app.tune.adopt(&snap),
            };
            out.extend(cmd);
        }
        _ => {}
    }
}

fn open_event(app: &mut App, out: &mut Vec<Command>) {
    let id = app
        .snapshot
        .as_ref()
        .and_then(|s| match &s.events.get(app.events.selected)?.kind {
            EventKind::Version { id, .. } => Some(*id),
            _ => None,
        });
    if let Some(id) = id {
        out.push(app.origin.open(id));
        app.origin.back.clear();
        app.tab = Tab::Origin;
    }
}

fn mouse(app: &mut App, m: MouseEvent, out: &mut Vec<Command>) {
    let screen = layout::screen(app.size);
    match m.kind {
        MouseEventKind::ScrollUp => step(app, Move::By(-3)),
        MouseEventKind::ScrollDown => step(app, Move::By(3)),
        MouseEventKind::Down(MouseButton::Left) if m.row == screen.tabs.y => {
            if let Some(tab) = super::panes::status::tab_at(&app.keymap, m.column) {
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
            let c = layout::clusters(body);
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
