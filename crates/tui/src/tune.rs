//! The Tune pane's state: a form of engine settings, parsed with the
//! project's own `FromStr`s, and the shadow runs it asks for. Only the
//! latest generation's updates are kept; older ones are stale.

use lineage_engine::{Command, ShadowUpdate, Snapshot};
use lineage_origin::table::paper_sizes;
use lineage_origin::{Estimation, Eviction, Params, Selector, TableSize};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Field {
    TableSize,
    Selector,
    Parameter,
    Eviction,
    Estimation,
    BridgeLimit,
    K,
}

pub(crate) const FIELDS: [Field; 7] = [
    Field::TableSize,
    Field::Selector,
    Field::Parameter,
    Field::Eviction,
    Field::Estimation,
    Field::BridgeLimit,
    Field::K,
];

const SELECTORS: [&str; 10] = [
    "nhs", "hs", "all", "every", "mod", "win", "hb", "dct", "nmod", "nwin",
];
const EVICTIONS: [&str; 5] = ["lucky", "bottom-k", "cc", "lru", "random"];
const ESTIMATIONS: [&str; 4] = ["be", "b", "e", "nb"];

impl Field {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Field::TableSize => "table size",
            Field::Selector => "selector",
            Field::Parameter => "parameter",
            Field::Eviction => "eviction",
            Field::Estimation => "estimation",
            Field::BridgeLimit => "bridge limit",
            Field::K => "k",
        }
    }

    /// What the field trades, in one line (shown under the form).
    pub(crate) fn trade(self) -> &'static str {
        match self {
            Field::TableSize => "more memory holds more shingles: fewer evictions, truer origins",
            Field::Selector => {
                "which shingles are kept: more finds more copies, fills the table sooner"
            }
            Field::Parameter => {
                "the selector's rate: smaller keeps more (higher ssr), bigger saves room"
            }
            Field::Eviction => {
                "which entry a full bucket drops: bottom-k keeps a fixed sample, lucky hits"
            }
            Field::Estimation => {
                "how unmatched stretches get an origin: b bridges gaps, e expands, be both"
            }
            Field::BridgeLimit => {
                "longest gap, in selected units, bridged between units of one origin"
            }
            Field::K => "shingle length: longer makes fewer chance matches, misses short copies",
        }
    }

    /// The values a choice field cycles through; None for typed fields.
    pub(crate) fn choices(self) -> Option<&'static [&'static str]> {
        match self {
            Field::Selector => Some(&SELECTORS),
            Field::Eviction => Some(&EVICTIONS),
            Field::Estimation => Some(&ESTIMATIONS),
            _ => None,
        }
    }
}

/// What the current generation asked for.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum RunKind {
    /// [live, tuned].
    Compare,
    /// Table sizes × series, sizes varying fastest.
    Sweep {
        sizes: Vec<TableSize>,
        series: Vec<Series>,
    },
}

/// One line of a sweep: a selector, aligned or not (alignment acts on
/// `all` only, so only `all` is swept both ways).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Series {
    pub selector: Selector,
    pub align: bool,
}

impl std::fmt::Display for Series {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.selector == Selector::All && !self.align {
            write!(f, "{} unaligned", self.selector)
        } else {
            write!(f, "{}", self.selector)
        }
    }
}

#[derive(Default)]
pub(crate) struct TuneState {
    /// Text of each field, in [`FIELDS`] order.
    pub values: [String; 7],
    pub(crate) focus: usize,
    /// Why the form does not parse, or why a run could not start.
    pub error: Option<String>,
    /// The form holds the live settings or edits (the first snapshot fills
    /// it unless the user got there first; later ones leave it alone).
    pub filled: bool,
    pub generation: u64,
    pub kind: Option<RunKind>,
    /// The latest update of the current generation.
    pub update: Option<ShadowUpdate>,
    /// Settings to adopt once the person says yes.
    pub(crate) confirm: Option<Params>,
    /// Adopted settings to save into the config file, and the keys to save
    /// (the UI loop does it and answers with [`super::app::Msg::Saved`]).
    pub save: Option<(Params, Vec<&'static str>)>,
    /// What the last adopt did, for the form's status line.
    pub message: Option<String>,
    /// The config file adopted settings are saved in (None: no config folder).
    pub(crate) config_file: Option<std::path::PathBuf>,
    /// The folder they are saved for (its `[folders]` table).
    pub folder: std::path::PathBuf,
    /// The settings the view started with (file, folder table, flags): a
    /// save writes only the keys that differ from them.
    pub started: Params,
    /// Engine settings given as flags: they outrank the saved file.
    pub flags: Vec<&'static str>,
    /// A sweep's results as a table of numbers instead of the chart.
    pub(crate) sweep_table: bool,
    /// The table size picked in that table (an index into the sizes).
    pub point: usize,
    /// Settings asked to become live, and the newest event number then
    /// (a later "cannot adopt" error ends the wait too).
    pub adopting: Option<(Params, u64)>,
}

impl TuneState {
    pub(crate) fn fill(&mut self, p: &Params) {
        let sel = p.selector.to_string();
        let (name, param) = sel.split_once('-').unwrap_or((&sel, ""));
        let param = if param.is_empty() { "8" } else { param };
        self.values = [
            p.table_size.to_string(),
            name.to_string(),
            param.to_string(),
            p.eviction.to_string(),
            p.estimation.to_string(),
            p.bridge_limit.to_string(),
            p.k.to_string(),
        ];
    }

    pub(crate) fn field(&self) -> Field {
        FIELDS[self.focus]
    }

    pub(crate) fn value(&self, f: Field) -> &str {
        &self.values[f as usize]
    }

    /// Whether the selector field's choice takes a parameter.
    pub(crate) fn has_parameter(&self) -> bool {
        !matches!(self.value(Field::Selector), "nhs" | "hs" | "all")
    }

    /// Cycle a choice field by `d`.
    pub(crate) fn cycle(&mut self, d: isize) {
        let f = self.field();
        if let Some(choices) = f.choices() {
            let at = choices
                .iter()
                .position(|c| *c == self.value(f))
                .unwrap_or(0);
            let n = choices.len() as isize;
            let next = (at as isize + d).rem_euclid(n) as usize;
            self.values[f as usize] = choices[next].to_string();
            self.filled = true;
            self.error = self.tuned(&Params::default()).err();
        }
    }

    pub(crate) fn set(&mut self, f: Field, text: String) {
        self.values[f as usize] = text;
        self.filled = true;
        self.error = self.tuned(&Params::default()).err();
    }

    /// The form's settings: `live` with every field replaced.
    pub(crate) fn tuned(&self, live: &Params) -> Result<Params, String> {
        let v = |f| self.value(f).trim();
        let selector = if self.has_parameter() {
            format!("{}-{}", v(Field::Selector), v(Field::Parameter))
        } else {
            v(Field::Selector).to_string()
        };
        let number = |f: Field, max: u64| -> Result<u64, String> {
            match v(f).parse::<u64>() {
                Ok(n) if (1..=max).contains(&n) => Ok(n),
                _ => Err(format!("{}: a whole number from 1 to {max}", f.label())),
            }
        };
        let p = Params {
            table_size: v(Field::TableSize)
                .parse::<TableSize>()
                .map_err(|e| format!("table size: {e}"))?,
            selector: selector.parse::<Selector>()?,
            eviction: v(Field::Eviction).parse::<Eviction>()?,
            estimation: v(Field::Estimation).parse::<Estimation>()?,
            bridge_limit: number(Field::BridgeLimit, u32::MAX as u64)? as u32,
            k: number(Field::K, 64)? as usize,
            ..*live
        };
        // A table that cannot be built (larger than the machine's memory)
        // is the form's error, before anything runs.
        p.table_params().validate().map_err(|e| e.to_string())?;
        Ok(p)
    }

    /// Replay the history with the live and the tuned settings.
    pub(crate) fn compare(&mut self, snap: &Snapshot) -> Option<Command> {
        let tuned = self.checked(snap)?;
        Some(self.start(RunKind::Compare, vec![snap.params, tuned]))
    }

    /// Replay the paper's table sizes with two selectors: the tuned and the
    /// live one, or NHs and every-4 when they are the same; `all` aligned
    /// (when the settings align) and unaligned, so the two can be compared.
    pub(crate) fn sweep(&mut self, snap: &Snapshot) -> Option<Command> {
        let tuned = self.checked(snap)?;
        if snap.shingles == 0 {
            self.error = Some("nothing indexed yet to sweep over".into());
            return None;
        }
        let sizes = paper_sizes(snap.shingles);
        let selectors = if tuned.selector != snap.params.selector {
            vec![tuned.selector, snap.params.selector]
        } else if tuned.selector != Selector::NHs {
            vec![tuned.selector, Selector::NHs]
        } else {
            vec![Selector::NHs, Selector::Every(4)]
        };
        let series: Vec<Series> = selectors
            .iter()
            .flat_map(|&selector| {
                let both = selector == Selector::All && tuned.align;
                let aligns = if both {
                    vec![true, false]
                } else {
                    vec![tuned.align]
                };
                aligns
                    .into_iter()
                    .map(move |align| Series { selector, align })
            })
            .collect();
        let runs = series
            .iter()
            .flat_map(|&Series { selector, align }| {
                sizes.iter().map(move |&table_size| Params {
                    selector,
                    align,
                    table_size,
                    ..tuned
                })
            })
            .collect();
        Some(self.start(RunKind::Sweep { sizes, series }, runs))
    }

    /// Ask before adopting: the form's settings wait for a yes.
    pub(crate) fn adopt(&mut self, snap: &Snapshot) {
        self.confirm = self.checked(snap);
        self.message = None;
    }

    /// The person's answer to [`TuneState::adopt`]: adopt (and save), or
    /// not. `seen` is the newest event number now (see [`TuneState::seen`]).
    pub(crate) fn answer(&mut self, adopt: bool, save: bool, seen: u64) -> Option<Command> {
        let p = self.confirm.take()?;
        if !adopt {
            return None;
        }
        self.adopting = Some((p, seen));
        let keys = self.to_save(&p);
        self.message = Some(if save && keys.is_empty() {
            "adopted; nothing to save (the settings the view started with)".to_string()
        } else if save {
            self.save = Some((p, keys));
            "adopted; saving…".to_string()
        } else {
            match &self.config_file {
                Some(f) => format!(
                    "adopted for this session (not saved in {})",
                    crate::paths::shown_path(f)
                ),
                None => "adopted for this session".to_string(),
            }
        });
        Some(Command::Adopt(p))
    }

    /// The folder saved settings are for, as the TUI draws a name.
    pub(crate) fn folder_shown(&self) -> String {
        crate::paths::shown_path(&self.folder)
    }

    /// The keys a save would write now, with the form's settings.
    pub(crate) fn to_save(&self, p: &Params) -> Vec<&'static str> {
        lineage_config::changed(&self.started, p)
    }

    /// "--table-size outranks" (or "--k --seed outrank"): the flags given
    /// for `keys`, which the saved file cannot override; None without any.
    pub(crate) fn outranking(&self, keys: &[&str]) -> Option<String> {
        let flags: Vec<String> = (self.flags.iter())
            .filter(|f| keys.contains(f))
            .map(|f| format!("--{}", f.replace('_', "-")))
            .collect();
        match flags.len() {
            0 => None,
            1 => Some(format!("{} outranks", flags[0])),
            _ => Some(format!("{} outrank", flags.join(" "))),
        }
    }

    /// The save's outcome; on failure, the lines to paste instead.
    pub(crate) fn saved(
        &mut self,
        r: Result<std::path::PathBuf, String>,
        p: &Params,
        keys: &[&'static str],
    ) -> Option<String> {
        match r {
            Ok(file) => {
                let mut m = format!(
                    "adopted; saved {} for {} in {}",
                    keys.join(", "),
                    self.folder_shown(),
                    crate::paths::shown_path(&file)
                );
                if let Some(flags) = self.outranking(keys) {
                    m.push_str(&format!(" (but {flags} the file: start without)"));
                }
                self.message = Some(m);
                None
            }
            Err(e) => {
                self.message = Some(format!("adopted; not saved: {e}"));
                Some(format!(
                    "Not saved ({e}). To keep these settings for this folder, put these \
                     lines in a config file:\n\n{}",
                    lineage_config::snippet(&self.folder, p, keys)
                ))
            }
        }
    }

    /// Move the picked row of a sweep's table by `d`.
    pub(crate) fn move_point(&mut self, d: isize) {
        if let Some(RunKind::Sweep { sizes, .. }) = &self.kind {
            let last = sizes.len().saturating_sub(1);
            self.point = self.point.saturating_add_signed(d).min(last);
        }
    }

    /// The picked sweep row into the form: its table size and the selector
    /// with the best overall score there (the first of the tied: an aligned
    /// `all` before the unaligned one, which the form does not set).
    pub(crate) fn take_point(&mut self) {
        let (Some(RunKind::Sweep { sizes, series }), Some(u)) = (&self.kind, &self.update) else {
            return;
        };
        let Some(&size) = sizes.get(self.point) else {
            return;
        };
        let best = (series.iter().enumerate())
            .filter_map(|(j, s)| Some((s.selector, u.results.get(j * sizes.len() + self.point)?)))
            .reduce(|a, b| if b.1.overall > a.1.overall { b } else { a });
        let Some((selector, _)) = best else {
            self.error = Some("that point has not been replayed yet".into());
            return;
        };
        let live = self.tuned(&Params::default()).unwrap_or_default();
        self.fill(&Params {
            table_size: size,
            selector,
            ..live
        });
        self.filled = true;
        self.error = None;
        let shown = crate::panes::size_label(&size);
        self.message = Some(format!("in the form: {selector} at {shown} ({size})"));
    }

    /// A new snapshot: adopting is over once its settings are live and
    /// nothing is replayed, or the engine refused them.
    pub(crate) fn seen(&mut self, snap: &Snapshot) {
        let Some((p, seen)) = self.adopting else {
            return;
        };
        let live = snap.params == p && snap.progress.is_none();
        let refused = snap.events.iter().take_while(|e| e.n > seen).any(|e| {
            matches!(&e.kind, lineage_engine::EventKind::Error(m) if m.starts_with("cannot adopt"))
        });
        if live || refused {
            self.adopting = None;
        }
    }

    /// Keep an update of the current generation; drop older ones.
    pub(crate) fn receive(&mut self, u: ShadowUpdate) -> bool {
        if u.generation != self.generation || self.kind.is_none() {
            return false;
        }
        self.update = Some(u);
        true
    }

    /// Stop the run under way: the engine is told, its later updates are
    /// dropped, and the pane says so.
    pub(crate) fn cancel(&mut self) -> Option<Command> {
        if !self.running() {
            return None;
        }
        let what = match self.kind.take() {
            Some(RunKind::Sweep { .. }) => "sweep",
            _ => "shadow run",
        };
        let (done, total) = self.update.take().map_or((0, 0), |u| (u.done, u.total));
        let count = super::panes::count;
        self.message = Some(format!(
            "{what} stopped at {}/{}",
            count(done),
            count(total)
        ));
        Some(Command::Cancel {
            generation: self.generation,
        })
    }

    pub(crate) fn running(&self) -> bool {
        self.kind.is_some() && !self.update.as_ref().is_some_and(|u| u.finished)
    }

    fn checked(&mut self, snap: &Snapshot) -> Option<Params> {
        let r = self.tuned(&snap.params);
        self.error = r.as_ref().err().cloned();
        r.ok()
    }

    fn start(&mut self, kind: RunKind, runs: Vec<Params>) -> Command {
        self.message = None;
        self.point = 0;
        self.generation += 1;
        self.kind = Some(kind);
        self.update = None;
        Command::Shadow {
            generation: self.generation,
            runs,
        }
    }
}
