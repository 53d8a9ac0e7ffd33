//! The TUI's state and its one transition, [`update`]: a message in (a key,
//! a click, an engine update), engine commands out. No I/O, so tests drive
//! it with made-up events and updates.

use std::sync::Arc;

use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::Rect;

use super::clusters::ClusterState;
use super::documents::DocList;
use super::effects::Effect;
use super::filter::Matcher;
use super::input;
use super::keymap::{Action, Keymap};
use super::layout;
use super::origin::OriginState;
use super::scroll::Cursor;
use super::tune::{Field, TuneState};
use lineage_engine::{Command, DocRow, Snapshot, Update, VersionStatus};

/// What the UI loop receives, from the input thread or the engine.
#[derive(Debug)]
pub enum Msg {
    /// A terminal event (a key, the mouse, a paste, a resize).
    Input(Event),
    /// What the engine published (a snapshot, a notice, its failure).
    Engine(Update),
    /// Nothing happened, but look again (the input thread's wake-up after a
    /// panic elsewhere restored the terminal, or the UI loop's after a quiet
    /// while with a rescan asked).
    Tick,
    /// Adopted settings were saved in the config file (the file), or not.
    Saved(Result<std::path::PathBuf, String>),
    /// A stop signal (SIGINT, SIGTERM, SIGHUP): quit as `q` does.
    Stop,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tab {
    Documents,
    Origin,
    Clusters,
    Table,
    Tune,
    Events,
}

pub(crate) const TABS: [Tab; 6] = [
    Tab::Documents,
    Tab::Origin,
    Tab::Clusters,
    Tab::Table,
    Tab::Tune,
    Tab::Events,
];

impl Tab {
    pub(crate) fn title(self) -> &'static str {
        match self {
            Tab::Documents => "Documents",
            Tab::Origin => "Origin",
            Tab::Clusters => "Clusters",
            Tab::Table => "Table",
            Tab::Tune => "Tune",
            Tab::Events => "Events",
        }
    }

    pub(crate) fn action(self) -> Action {
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
pub(crate) enum Input {
    Filter(String),
    Field(Field, String),
    /// A search of the Origin pane's text.
    Search(String),
    /// Words to search every page's text for.
    Find(String),
    /// Words a cluster's page path must hold (the Clusters pane's filter).
    ClusterFilter(String),
    /// The file to export the current pane to.
    Export(String),
}

impl Input {
    /// The text typed so far.
    pub(crate) fn text_mut(&mut self) -> &mut String {
        match self {
            Input::Filter(t)
            | Input::Field(_, t)
            | Input::Search(t)
            | Input::Find(t)
            | Input::ClusterFilter(t)
            | Input::Export(t) => t,
        }
    }
}

/// Everything the view shows and remembers; [`update`] changes it, the
/// panes draw it.
pub struct App {
    /// The keys bound to each action.
    pub keymap: Keymap,
    /// The terminal's size.
    pub size: Rect,
    /// The engine's latest snapshot; None until the first.
    pub snapshot: Option<Arc<Snapshot>>,
    /// Why the engine stopped, if it could not go on.
    pub fatal: Option<Arc<lineage_engine::Failure>>,
    pub(crate) tab: Tab,
    /// The help overlay is open.
    pub help: bool,
    /// First line of the help overlay shown (it scrolls).
    pub(crate) help_scroll: usize,
    /// An event opened in full (a notice or an error too long for its row).
    pub(crate) event_detail: Option<String>,
    /// The list of the shown page's versions, when open.
    pub versions: Option<Cursor>,
    /// The list of pages that copy the page shown, when open.
    pub(crate) copies: Option<super::copies::CopiesState>,
    /// The list of pages that carry the text of the page shown, when open.
    pub(crate) shared: Option<super::shared::SharedState>,
    /// What the page shown changed, when open.
    pub(crate) diff: Option<super::diff::DiffState>,
    /// The list of stale copies, when open.
    pub(crate) stale: Option<super::stale::StaleState>,
    /// The last search of every page, and whether its list is open.
    pub(crate) find: Option<super::find::FindState>,
    pub(crate) input: Option<Input>,
    /// The prompt reopened with its last text, selected: the first key
    /// that edits replaces it (typing, a paste) or clears it (backspace),
    /// any other key keeps it (see [`super::input::open_prompt`]).
    pub(crate) selected: bool,
    /// Where the caret stands in the prompt's text, a byte offset; None at
    /// its end (where a prompt opens).
    pub(crate) caret: Option<usize>,
    /// Text typed into a prompt that acts as it is typed (the filters, the
    /// Origin search) and not yet acted on (see [`update_all`]).
    pub(super) retyped: bool,
    /// The Documents pane: its rows, filter, order and cursor.
    pub docs: DocList,
    pub(crate) origin: OriginState,
    pub(crate) clusters: ClusterState,
    /// The Events pane's cursor.
    pub events: Cursor,
    pub(crate) tune: TuneState,
    /// A rescan was asked and not yet seen through: the `seq` of the
    /// snapshot shown when it was asked.
    pub rescan: Option<u64>,
    /// What the UI loop is to do with the terminal, in order.
    pub(crate) effects: Vec<Effect>,
    /// A line for the footer until the next key (`copied …`).
    pub message: Option<String>,
    /// The editor command (`$VISUAL`, `$EDITOR` or `vi`; see `tui::editor`).
    pub editor: String,
    /// The directory lineage was started from: exports go there by default.
    pub(crate) start_dir: std::path::PathBuf,
    /// Today, in days since the epoch (UTC), as of the last frame: times of
    /// another day show their date. None (tests): every time is today's.
    pub(crate) today: Option<i64>,
    /// Set by `q` or a stop signal: the UI loop ends.
    pub quit: bool,
    /// The Documents' shares were asked of the engine (at its first
    /// snapshot).
    pub(crate) shares_asked: bool,
}

impl App {
    /// A view of `width` by `height` cells on the Documents pane, with no
    /// snapshot yet; `matcher` is the Documents filter's.
    pub fn new(keymap: Keymap, matcher: Box<dyn Matcher>, width: u16, height: u16) -> App {
        App {
            keymap,
            size: Rect::new(0, 0, width, height),
            snapshot: None,
            fatal: None,
            tab: Tab::Documents,
            help: false,
            help_scroll: 0,
            event_detail: None,
            versions: None,
            copies: None,
            shared: None,
            stale: None,
            diff: None,
            find: None,
            input: None,
            selected: false,
            caret: None,
            retyped: false,
            docs: DocList::new(matcher),
            origin: OriginState::default(),
            clusters: ClusterState::default(),
            events: Cursor::default(),
            tune: TuneState::default(),
            rescan: None,
            effects: Vec::new(),
            message: None,
            editor: "vi".into(),
            today: None,
            start_dir: ".".into(),
            quit: false,
            shares_asked: false,
        }
    }

    /// A live document by version id (snapshots list them in id order).
    pub(crate) fn doc(&self, id: u32) -> Option<&DocRow> {
        self.docs.all().get(id)
    }

    pub(super) fn body(&self) -> Rect {
        layout::screen(self.size).body
    }

    /// Rows of a list over the pane (versions, copies, pages found), as
    /// they are drawn over the body.
    pub(super) fn list_rows(&self) -> usize {
        super::help::list_rows(super::help::popup(self.body()))
    }

    pub(super) fn docs_height(&self) -> usize {
        layout::rows_height(self.body(), 1)
    }

    pub(super) fn events_height(&self) -> usize {
        layout::rows_height(self.body(), 1)
    }

    /// The Origin pane's text area (inside its border).
    pub(super) fn origin_text(&self) -> Rect {
        layout::inner(layout::origin(self.body()).0)
    }

    /// The Clusters pane's areas: a comparison of two versions of a page
    /// (asked from Origin) takes the whole pane (issue 41: it opened under
    /// an unrelated cluster).
    pub(crate) fn clusters_layout(&self) -> layout::Clusters {
        let versions = self.clusters.return_to == Some(Tab::Origin);
        layout::clusters_or_versions(self.body(), versions)
    }

    /// The text widths of the two sides of a comparison.
    pub(super) fn compare_widths(&self) -> [u16; 2] {
        let c = self.clusters_layout();
        [layout::inner(c.left).width, layout::inner(c.right).width]
    }

    /// Clusters listed (those the filter lets through).
    pub(super) fn clusters_len(&self) -> usize {
        self.clusters.order.len()
    }

    /// The selected cluster.
    pub(crate) fn cluster(&self) -> Option<&lineage_engine::Cluster> {
        let i = self.clusters.selected()?;
        Some(self.snapshot.as_ref()?.clusters.get(i)?)
    }

    /// The number of version `id`'s cluster, if it is in one.
    pub(crate) fn cluster_number(&self, id: u32) -> Option<u32> {
        let i = self.docs.all().cluster(id)?;
        Some(self.snapshot.as_ref()?.clusters.get(i as usize)?.number)
    }

    pub(super) fn pairs_len(&self) -> usize {
        self.cluster().map_or(0, |c| c.pairs.len())
    }

    /// List the clusters again (new clusters, order or filter), the
    /// selection kept in view.
    pub(super) fn arrange_clusters(&mut self) {
        let Some(s) = &self.snapshot else { return };
        let docs = self.docs.all();
        self.clusters
            .arrange(&s.clusters, |id| docs.get(id).map(|d| d.path.clone()));
        self.show_clusters();
    }

    /// List the clusters again from their first row (another order or
    /// filter).
    pub(super) fn relist_clusters(&mut self) {
        self.clusters.list = Cursor::default();
        self.clusters.select_cluster();
        self.arrange_clusters();
    }

    /// Keep the selected cluster and pair in view.
    pub(super) fn show_clusters(&mut self) {
        let (list, pairs) = (self.clusters_len(), self.pairs_len());
        let c = self.clusters_layout();
        self.clusters
            .list
            .show(list, layout::rows_height(c.list, 0));
        self.clusters
            .pairs
            .show(pairs, layout::rows_height(c.pairs, 0));
    }

    pub(super) fn events_len(&self) -> usize {
        self.snapshot.as_ref().map_or(0, |s| s.events.len())
    }
}

/// Apply one message; return what to ask of the engine.
pub fn update(app: &mut App, msg: Msg) -> Vec<Command> {
    update_all(app, std::iter::once(msg))
}

/// Apply messages received together. Text typed or pasted into a prompt in
/// one batch acts once, after the last of it (or before any other message):
/// a paste arrives as thousands of keys, and filtering 10,000 rows or
/// searching a page once per key of it kept the view from answering.
pub fn update_all(app: &mut App, msgs: impl IntoIterator<Item = Msg>) -> Vec<Command> {
    let mut out = Vec::new();
    for msg in msgs {
        if !typing(app, &msg) {
            settle(app);
        }
        apply(app, msg, &mut out);
    }
    settle(app);
    out
}

fn typing(app: &App, msg: &Msg) -> bool {
    let typed = |k: &KeyEvent| {
        matches!(k.code, KeyCode::Char(_) | KeyCode::Backspace)
            && !k
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
    };
    app.input.is_some()
        && match msg {
            Msg::Input(Event::Key(k)) => typed(k),
            Msg::Input(Event::Paste(_)) => true,
            _ => false,
        }
}

/// Act on the text typed so far: filter the rows, list the clusters, search
/// the page.
fn settle(app: &mut App) {
    if !std::mem::take(&mut app.retyped) {
        return;
    }
    let (docs_h, text_h) = (app.docs_height(), app.origin_text().height as usize);
    match &app.input {
        Some(Input::Filter(t)) => app.docs.set_filter(t, docs_h),
        Some(Input::Search(t)) => app.origin.search(t, text_h),
        Some(Input::ClusterFilter(t)) if app.clusters.filter != *t => {
            app.clusters.filter = t.clone();
            app.relist_clusters();
        }
        _ => {}
    }
}

fn apply(app: &mut App, msg: Msg, out: &mut Vec<Command>) {
    match msg {
        Msg::Input(Event::Key(k)) if k.kind != KeyEventKind::Release => input::key(app, k, out),
        Msg::Input(Event::Mouse(m)) => input::mouse(app, m, out),
        Msg::Input(Event::Resize(w, h)) => resize(app, w, h),
        Msg::Input(Event::Paste(text)) => input::paste(app, &text),
        Msg::Input(_) => {}
        Msg::Engine(u) => engine(app, u, out),
        // A rescan the engine could not answer (its index closed): after
        // a quiet while it is no longer shown as asked.
        Msg::Tick => app.rescan = None,
        Msg::Stop => app.quit = true,
        Msg::Saved(r) => {
            if let Some((p, keys)) = app.tune.save.take() {
                app.event_detail = app.tune.saved(r, &p, &keys);
            }
        }
    }
}

fn engine(app: &mut App, u: Update, out: &mut Vec<Command>) {
    match u {
        Update::Snapshot(s) => {
            // The page shown stopped being live (deleted, or a new version):
            // ask again, so its title says what it is now.
            let shown = app
                .origin
                .view
                .as_ref()
                .filter(|v| v.status == VersionStatus::Live);
            let gone = shown.is_some_and(|v| s.documents.get(v.id).is_none());
            let ask = (gone && app.origin.requested.map(|r| r.0) == app.origin.id())
                .then(|| app.origin.refresh())
                .flatten();
            snapshot(app, s);
            out.extend(ask);
            if !app.shares_asked {
                app.shares_asked = true;
                let basis = app.docs.shares.basis;
                out.push(Command::Shares { basis });
            }
        }
        Update::Origin(v) => {
            let text = app.origin_text();
            app.origin.receive(v, text.width, text.height as usize);
        }
        Update::Copies(v) => super::copies::receive(app, v),
        Update::Shared(v) => super::shared::receive(app, v),
        Update::Stale(v) => super::stale::receive(app, v),
        Update::Diff(v) => super::diff::receive(app, v),
        Update::Shares(u) => {
            let h = app.docs_height();
            app.docs.receive_shares(&u, h);
        }
        Update::Search(v) => super::find::receive(app, v),
        Update::Report { path, result } => {
            app.message = Some(super::export::reported(&path, result))
        }
        Update::Compare(v) => {
            let widths = app.compare_widths();
            app.clusters.receive(v, widths);
        }
        Update::Shadow(u) => {
            app.tune.receive(u);
        }
        Update::Fatal(e) => app.fatal = Some(e),
        // Every snapshot carries the newest events; a query asked while
        // the index is closed is answered by an error among them only.
        Update::Events(events) => refused(app, &events),
    }
}

/// A search, copies or shared list still waiting on its first answer when the
/// engine says the index is closed: it says so instead of waiting forever.
fn refused(app: &mut App, events: &[lineage_engine::Event]) {
    let Some(why) = events.iter().rev().find_map(|e| match &e.kind {
        lineage_engine::EventKind::Error(t) if t.starts_with(lineage_engine::INDEX_CLOSED) => {
            Some(t.clone())
        }
        _ => None,
    }) else {
        return;
    };
    if let Some(f) = app.find.as_mut().filter(|f| f.view.is_none()) {
        f.failed = Some(why.clone());
    }
    if let Some(c) = app.copies.as_mut().filter(|c| c.view.is_none()) {
        c.failed = Some(why.clone());
    }
    if let Some(s) = app.shared.as_mut().filter(|s| s.view.is_none()) {
        s.failed = Some(why.clone());
    }
    if let Some(s) = app.stale.as_mut() {
        s.refuse(&why);
    }
    if let Some(s) = app.diff.as_mut() {
        s.refuse(&why);
    }
}

fn snapshot(app: &mut App, s: Arc<Snapshot>) {
    if !app.tune.filled {
        app.tune.fill(&s.params);
        app.tune.filled = true;
    }
    app.tune.seen(&s);
    // A later snapshot with no indexing under way: the rescan is done.
    if app.rescan.is_some_and(|asked| s.seq > asked) && s.progress.is_none() {
        app.rescan = None;
    }
    let h = app.docs_height();
    app.docs.set_docs(s.documents.clone(), h);
    let selected = app.cluster().map(|c| c.number);
    app.snapshot = Some(s);
    app.arrange_clusters();
    // The selection follows its cluster (by its number) to its new row.
    if let Some(s) = &app.snapshot
        && let Some(row) = (app.clusters.order.iter())
            .position(|&i| s.clusters.get(i).map(|c| c.number) == selected)
    {
        app.clusters.list.selected = row;
        app.show_clusters();
    }
    let (n, h) = (app.events_len(), app.events_height());
    app.events.show(n, h);
}

fn resize(app: &mut App, w: u16, h: u16) {
    app.size = Rect::new(0, 0, w, h);
    let text = app.origin_text();
    app.origin.resize(text.width, text.height as usize);
    let widths = app.compare_widths();
    app.clusters.wrap(widths);
    let h = app.docs_height();
    let n = app.docs.len();
    app.docs.cursor.show(n, h);
    let (n, h) = (app.events_len(), app.events_height());
    app.events.show(n, h);
}
