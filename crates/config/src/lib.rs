//! Configuration: built-in defaults, then the config file, then command-line
//! flags. The file is `config.toml` in the platform config directory
//! (`directories`), or the one `--config FILE` names. Every key is optional;
//! `config.example.toml` documents them all.
//!
//! Above the algorithm crates, whose own parameter types it holds, and below
//! the engine (docs/architecture.md, "Crates").

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod check;
mod folders;
mod predecessor;
mod save;

use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Deserializer};

pub use folders::FolderConfig;
pub use folders::canonical;
use lineage_core::bytesize::Bytes;
use lineage_core::fingerprint::polynomial::Polynomial;
use lineage_origin::{Estimation, Eviction, Params, Selector, TableSize, Ties};
use lineage_similar::fuzzy::LangChoice;
pub use lineage_source::history::Mode as HistoryMode;
use lineage_source::{DEFAULT_EXCLUDE, DEFAULT_INCLUDE, Order, SkipReason, WalkOptions};
pub use predecessor::{Basis, PredecessorRule, follows, tag_matches};
pub use save::{changed, save_basis, save_params, snippet};

/// The most threads an origin pass is split over: every pair of workers
/// has a channel, so thousands would only spend memory.
pub const MAX_WORKERS: u16 = 1024;

/// Everything configurable, with its default.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Shingle length in tokens, 1 to 64 (Abdel-Hamid et al. 2009 uses 8).
    pub k: usize,
    /// Shingle selection (docs/formats.md §5): `all`, `every-L`, `mod-L`, `win-W`,
    /// `hb-P`, `dct-P`, `hs` and the no-complete-overlap variants.
    #[serde(deserialize_with = "parsed")]
    pub selector: Selector,
    /// Memory of the fixed-size fingerprint table, in bytes, or unbounded.
    #[serde(deserialize_with = "parsed")]
    pub table_size: TableSize,
    /// Entries per table bucket, 1 to 1024.
    pub bucket_entries: u16,
    /// Eviction when a bucket is full: random, lru, cc, lucky or bottom-k.
    #[serde(deserialize_with = "parsed")]
    pub eviction: Eviction,
    /// Which of the entries tied for eviction goes (cc and lucky): oldest or newest.
    #[serde(deserialize_with = "parsed")]
    pub eviction_ties: Ties,
    /// Estimation of the origins of units not found in the table: nb (none),
    /// e (expansion), b (bridging) or be (both).
    #[serde(deserialize_with = "parsed")]
    pub estimation: Estimation,
    /// Longest bridge, in selected units (the paper's T); at least 1.
    pub bridge_limit: u32,
    /// Seed of random eviction (runs are reproducible).
    pub seed: u64,
    /// Align where the table samples (docs/algorithms.md §3.2).
    pub align: bool,
    /// Seed of the polynomial token fingerprints are taken under.
    pub fingerprint_seed: u64,
    /// Processing order: modification time (ties by path), path, version, or
    /// a list of globs, earliest first (the rest after, in version order).
    #[serde(deserialize_with = "order_setting")]
    pub order: Order,
    /// Where versions come from: auto (a git repository's history where
    /// the root is in one, else the folder), git or folder.
    #[serde(deserialize_with = "parsed")]
    pub history: HistoryMode,
    /// Which page a page's first version follows, for layouts the
    /// version-folder rule does not read (`[[predecessor]]`, first match).
    pub predecessor: Vec<PredecessorRule>,
    /// What the "changed" and "removed" shares are measured against: the
    /// predecessor, the previous version folder or the last release.
    #[serde(deserialize_with = "parsed")]
    pub basis: Basis,
    /// The tags of a git history that are releases (the `release` basis):
    /// a pattern, `*` within a `/`-separated part of the name, `**` across.
    pub release_tags: String,
    /// Where a first import starts: a commit (any revision git names) or a
    /// date (`YYYY-MM-DD`, UTC); empty: the first commit.
    pub history_since: String,
    /// Files larger than this, in bytes, are skipped without being read.
    #[serde(deserialize_with = "parsed")]
    pub max_file_size: Bytes,
    /// Bytes the index keeps of past versions, their compressed texts (so
    /// their passages can be shown) and the fingerprints of replaced and
    /// deleted ones (so they stay origins) together: past it the oldest texts
    /// go first, then the oldest replaced and deleted versions whole; 0 keeps
    /// none.
    #[serde(deserialize_with = "parsed")]
    pub history_budget: Bytes,
    /// Globs over the path relative to the root (`/` separators; `*` also
    /// crosses folders) that select the documents, ignoring case.
    pub include: Vec<String>,
    /// Globs of the files and folders left out (default: hidden ones).
    pub exclude: Vec<String>,
    /// Language of fuzzy fingerprints' prefix classes: auto, en or de.
    #[serde(deserialize_with = "parsed")]
    pub lang: LangChoice,
    /// Leave out what `.gitignore` files name.
    pub gitignore: bool,
    /// Follow symbolic links that stay inside the root.
    pub follow_symlinks: bool,
    /// Folder holding the indexes (one subfolder per root); empty: the
    /// platform data directory's `indexes/`.
    pub index_dir: String,
    /// Threads of the origin pass of `scan`, `index` and `watch` (split by
    /// bucket range; 1: the sequential pass), and of the replays of `sweep`
    /// and Tune (which split a run only where the runs leave threads idle);
    /// 0: see [`Config::pass_workers`].
    pub workers: u16,
    /// `[sweep]`: the grid `lineage sweep` runs when no flags name one.
    pub sweep: SweepConfig,
    /// `[watch]`: how `lineage watch` notices changes.
    pub watch: WatchConfig,
    /// `[tui]`: the full-screen view's look.
    pub tui: TuiConfig,
    /// `[keys]`: the full-screen view's key bindings.
    pub keys: KeysConfig,
    /// `[check]`: the policies of `lineage check`.
    pub check: check::CheckConfig,
    /// Engine settings of single folders, by absolute path (`[folders."/a/b"]`).
    pub folders: std::collections::BTreeMap<String, FolderConfig>,
    /// The file these settings are read from, or would be if it existed
    /// (where adopted settings are saved); None without a config folder.
    #[serde(skip)]
    pub file: Option<PathBuf>,
    /// Engine settings given as command-line flags, which outrank the file.
    #[serde(skip)]
    pub flags: Vec<&'static str>,
    /// The folder read (canonical), once [`Config::for_folder`] took its
    /// settings: adopted settings are saved for it.
    #[serde(skip)]
    pub folder: Option<PathBuf>,
}

/// The TUI's look (`lineage watch` without `--json`).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TuiConfig {
    /// The colours: `dark` or `light`, for the terminal's background.
    #[serde(deserialize_with = "parsed")]
    pub theme: ThemeName,
}

impl Default for TuiConfig {
    fn default() -> TuiConfig {
        TuiConfig {
            theme: ThemeName::Dark,
        }
    }
}

/// Colours for a dark or a light terminal background.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThemeName {
    /// For a dark terminal background (the default).
    Dark,
    /// For a light terminal background.
    Light,
}

impl FromStr for ThemeName {
    type Err = String;
    fn from_str(s: &str) -> Result<ThemeName, String> {
        match s.to_ascii_lowercase().as_str() {
            "dark" => Ok(ThemeName::Dark),
            "light" => Ok(ThemeName::Light),
            _ => Err(format!("unknown theme '{s}' (expected dark or light)")),
        }
    }
}

/// The TUI's key bindings: per action, its keys separated by spaces (`"q"`,
/// `"down j"`, `"ctrl-n"`). The TUI checks the key names and that no key is
/// bound twice.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct KeysConfig {
    /// Leave the view.
    pub quit: String,
    /// Show or hide the list of keys.
    pub help: String,
    /// Next pane.
    pub next_tab: String,
    /// Previous pane.
    pub prev_tab: String,
    /// Go to the Documents pane.
    pub documents: String,
    /// Go to the Origin pane.
    pub origin: String,
    /// Go to the Clusters pane.
    pub clusters: String,
    /// Go to the Table pane.
    pub table: String,
    /// Go to the Tune pane.
    pub tune: String,
    /// Go to the Events pane.
    pub events: String,
    /// Move the selection or scroll up.
    pub up: String,
    /// Move the selection or scroll down.
    pub down: String,
    /// Clusters: to the cluster list; Tune: the previous choice of a field.
    pub left: String,
    /// Clusters: to the pair list; Tune: the next choice of a field.
    pub right: String,
    /// A page up.
    pub page_up: String,
    /// A page down.
    pub page_down: String,
    /// To the top.
    pub top: String,
    /// To the bottom.
    pub bottom: String,
    /// Open the selected document's origins, jump to a copied block's origin,
    /// compare a pair, edit a Tune field.
    pub select: String,
    /// Close the help, clear a filter or comparison, return from a jump.
    pub back: String,
    /// Documents: type a fuzzy filter over paths; Origin: search the
    /// document's text, ignoring case.
    pub filter: String,
    /// Documents: the next sort key (path, fresh %, copied %, modification time).
    pub sort: String,
    /// Documents: reverse the order.
    pub reverse: String,
    /// Origin: switch between the live settings' estimate and the exact origins.
    pub exact: String,
    /// Origin: the next copied block; Compare: each side to its next shared passage.
    pub next_block: String,
    /// Origin: the previous copied block; Compare: each side to its previous
    /// shared passage.
    pub prev_block: String,
    /// Origin: the next passage new in the page (no origin).
    pub next_new: String,
    /// Origin: the previous passage new in the page.
    pub prev_new: String,
    /// Origin: the next match of a search.
    pub next_match: String,
    /// Origin: the previous match of a search.
    pub prev_match: String,
    /// Tune: replay the history with the form's settings beside the live ones.
    pub apply: String,
    /// Tune: sweep table sizes.
    pub sweep: String,
    /// Tune: make the form's settings live.
    pub adopt: String,
    /// Walk the folder now.
    pub rescan: String,
    /// Origin: list the shown page's versions.
    pub versions: String,
    /// Origin, in the list of versions: compare the selected version with the
    /// one shown.
    pub compare_version: String,
    /// Origin: the live pages of other paths that copy from the page shown.
    pub copies: String,
    /// Origin: the live pages of other paths that carry the page's text,
    /// whoever had it first (`lineage shared`).
    pub shared: String,
    /// Origin: what the page changed since its predecessor (`lineage diff`).
    pub diff: String,
    /// Origin: the page's stale copies; elsewhere, every page's (`lineage
    /// stale`).
    pub stale: String,
    /// Documents: measure changed and removed against the next basis (the
    /// predecessor, the previous version folder), saved for the folder.
    pub basis: String,
    /// Any pane: search the text of every live page, ignoring case.
    pub find: String,
    /// Documents or Origin: the page's near-duplicate cluster in Clusters.
    pub cluster: String,
    /// Tune, after a sweep: switch its chart for a table of the numbers.
    pub sweep_view: String,
    /// Tune, in the sweep's table: put the selected row's table size and best
    /// selector into the form.
    pub take_point: String,
    /// Copy the document's full path to the clipboard (OSC 52).
    pub copy: String,
    /// Open the document in `$VISUAL`, `$EDITOR` or vi.
    pub edit: String,
    /// Export the pane's rows to a file (CSV, or JSON for a `.json` name).
    pub export: String,
}

impl KeysConfig {
    /// (action name, its keys) for every action, in the order of the help.
    pub fn bindings(&self) -> [(&'static str, &str); 48] {
        [
            ("quit", &self.quit),
            ("help", &self.help),
            ("next_tab", &self.next_tab),
            ("prev_tab", &self.prev_tab),
            ("documents", &self.documents),
            ("origin", &self.origin),
            ("clusters", &self.clusters),
            ("table", &self.table),
            ("tune", &self.tune),
            ("events", &self.events),
            ("up", &self.up),
            ("down", &self.down),
            ("left", &self.left),
            ("right", &self.right),
            ("page_up", &self.page_up),
            ("page_down", &self.page_down),
            ("top", &self.top),
            ("bottom", &self.bottom),
            ("select", &self.select),
            ("back", &self.back),
            ("filter", &self.filter),
            ("sort", &self.sort),
            ("reverse", &self.reverse),
            ("exact", &self.exact),
            ("next_block", &self.next_block),
            ("prev_block", &self.prev_block),
            ("next_new", &self.next_new),
            ("prev_new", &self.prev_new),
            ("next_match", &self.next_match),
            ("prev_match", &self.prev_match),
            ("apply", &self.apply),
            ("sweep", &self.sweep),
            ("adopt", &self.adopt),
            ("rescan", &self.rescan),
            ("versions", &self.versions),
            ("compare_version", &self.compare_version),
            ("copies", &self.copies),
            ("shared", &self.shared),
            ("diff", &self.diff),
            ("stale", &self.stale),
            ("basis", &self.basis),
            ("find", &self.find),
            ("cluster", &self.cluster),
            ("sweep_view", &self.sweep_view),
            ("take_point", &self.take_point),
            ("copy", &self.copy),
            ("edit", &self.edit),
            ("export", &self.export),
        ]
    }
}

impl Default for KeysConfig {
    fn default() -> KeysConfig {
        let k = |s: &str| s.to_string();
        KeysConfig {
            quit: k("q"),
            help: k("?"),
            next_tab: k("tab"),
            prev_tab: k("backtab"),
            documents: k("1"),
            origin: k("2"),
            clusters: k("3"),
            table: k("4"),
            tune: k("5"),
            events: k("6"),
            up: k("up k"),
            down: k("down j"),
            left: k("left h"),
            right: k("right l"),
            page_up: k("pageup"),
            page_down: k("pagedown space"),
            top: k("home g"),
            bottom: k("end G"),
            select: k("enter"),
            back: k("esc backspace"),
            filter: k("/"),
            sort: k("s"),
            reverse: k("S"),
            exact: k("x"),
            next_block: k("n"),
            prev_block: k("N"),
            next_new: k("}"),
            prev_new: k("{"),
            // n and N are the copied blocks'.
            next_match: k("]"),
            prev_match: k("["),
            apply: k("a"),
            sweep: k("w"),
            adopt: k("A"),
            rescan: k("r"),
            versions: k("v"),
            compare_version: k("c"),
            copies: k("C"),
            shared: k("P"),
            diff: k("d"),
            stale: k("o"),
            basis: k("b"),
            find: k("F"),
            cluster: k("#"),
            sweep_view: k("t"),
            take_point: k("T"),
            copy: k("y"),
            edit: k("e"),
            // x is `exact`.
            export: k("X"),
        }
    }
}

/// How `lineage watch` notices changes.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WatchConfig {
    /// Poll the folder instead of asking the OS for events.
    pub poll: bool,
    /// Quiet time, in milliseconds, that ends a burst of events.
    pub debounce_ms: u64,
    /// Seconds between rescans when polling or when OS events fail; also how
    /// often the root is checked and an index that could not be written is
    /// retried.
    pub rescan_secs: u64,
    /// Seconds a changed table may stay unsaved while changes keep coming
    /// (a quiet folder saves it after 10 s): what a crash can cost to replay.
    pub checkpoint_secs: u64,
    /// Jaccard resemblance of k-shingle sets at which two live documents are
    /// in one near-duplicate cluster.
    pub min_similarity: f64,
}

impl Default for WatchConfig {
    fn default() -> WatchConfig {
        WatchConfig {
            poll: false,
            debounce_ms: 200,
            rescan_secs: 2,
            checkpoint_secs: 60,
            min_similarity: 0.5,
        }
    }
}

/// The grid `lineage sweep` runs when no flags name one.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SweepConfig {
    /// Table sizes; empty: eight sizes at the paper's table fractions.
    #[serde(deserialize_with = "parsed_list")]
    pub sizes: Vec<TableSize>,
    /// Selectors of the grid (names as for `selector`).
    #[serde(deserialize_with = "parsed_list")]
    pub selectors: Vec<Selector>,
    /// Evictions of the grid (names as for `eviction`).
    #[serde(deserialize_with = "parsed_list")]
    pub evictions: Vec<Eviction>,
    /// Estimations of the grid (names as for `estimation`).
    #[serde(deserialize_with = "parsed_list")]
    pub estimations: Vec<Estimation>,
}

impl Default for Config {
    fn default() -> Config {
        let p = Params::default();
        Config {
            k: p.k,
            selector: p.selector,
            table_size: p.table_size,
            bucket_entries: p.bucket_entries,
            eviction: p.eviction,
            eviction_ties: p.ties,
            estimation: p.estimation,
            bridge_limit: p.bridge_limit,
            seed: p.seed,
            align: p.align,
            fingerprint_seed: lineage_core::fingerprint::polynomial::DEFAULT_SEED,
            order: Order::Mtime,
            history: HistoryMode::Auto,
            predecessor: Vec::new(),
            basis: Basis::Predecessor,
            release_tags: "*".into(),
            history_since: String::new(),
            max_file_size: Bytes(32 << 20),
            history_budget: Bytes(512 << 20),
            include: DEFAULT_INCLUDE.iter().map(|s| s.to_string()).collect(),
            exclude: DEFAULT_EXCLUDE.iter().map(|s| s.to_string()).collect(),
            lang: LangChoice::Auto,
            gitignore: true,
            follow_symlinks: false,
            index_dir: String::new(),
            workers: 0,
            sweep: SweepConfig::default(),
            watch: WatchConfig::default(),
            tui: TuiConfig::default(),
            keys: KeysConfig::default(),
            check: check::CheckConfig::default(),
            folders: Default::default(),
            file: None,
            flags: Vec::new(),
            folder: None,
        }
    }
}

impl Default for SweepConfig {
    fn default() -> SweepConfig {
        SweepConfig {
            sizes: Vec::new(),
            selectors: vec![Selector::NHs, Selector::NWin(8), Selector::Every(4)],
            evictions: vec![Eviction::Lucky, Eviction::Cc],
            estimations: vec![Estimation::Be],
        }
    }
}

impl Config {
    /// Whether the order was asked for (a flag, or the file's setting), not
    /// the default: an index built in another refuses it (see
    /// `Index::settle_order`), where a default takes the index's own.
    pub fn order_asked(&self) -> bool {
        self.flags.contains(&"order") || self.order != Order::default()
    }

    /// The polynomial of `fingerprint_seed`, drawn (in microseconds) by
    /// whoever fingerprints: no process-wide one.
    pub fn polynomial(&self) -> Polynomial {
        Polynomial::from_seed(self.fingerprint_seed)
    }

    /// The engine settings this configuration names.
    pub fn params(&self) -> Params {
        Params {
            k: self.k,
            selector: self.selector,
            table_size: self.table_size,
            bucket_entries: self.bucket_entries,
            eviction: self.eviction,
            ties: self.eviction_ties,
            estimation: self.estimation,
            bridge_limit: self.bridge_limit,
            seed: self.seed,
            align: self.align,
        }
    }

    /// Take `p` as the engine settings (the inverse of [`Config::params`]).
    pub fn set_params(&mut self, p: &Params) {
        self.k = p.k;
        self.selector = p.selector;
        self.table_size = p.table_size;
        self.bucket_entries = p.bucket_entries;
        self.eviction = p.eviction;
        self.eviction_ties = p.ties;
        self.estimation = p.estimation;
        self.bridge_limit = p.bridge_limit;
        self.seed = p.seed;
        self.align = p.align;
    }

    /// How walks treat `.gitignore` files and symbolic links.
    pub fn walk_options(&self) -> WalkOptions {
        WalkOptions {
            gitignore: self.gitignore,
            follow_symlinks: self.follow_symlinks,
        }
    }

    /// The threads of the origin pass: `workers`, where 0 is the cores
    /// available where there are 8 or more, else 1. Each lookup crosses an
    /// exchange and a sort, so one worker is 1.4-2.2x slower than the
    /// sequential pass and two are no faster; on 16 cores 4 workers beat
    /// it and 16 take `scan` 2x faster (BENCHMARKS.md, "The pass split by
    /// bucket range"). Below 8 cores the reading threads need the rest.
    pub fn pass_workers(&self) -> usize {
        match self.workers {
            0 => {
                let cores = std::thread::available_parallelism().map_or(1, usize::from);
                if cores >= 8 { cores } else { 1 }
            }
            n => usize::from(n),
        }
    }

    /// Check values that parse but make no sense.
    pub fn validate(&self) -> Result<(), ConfigError> {
        for r in &self.predecessor {
            r.check().map_err(ConfigError::Value)?;
        }
        if self.k == 0 || self.k > 64 {
            return Err(ConfigError::Value(format!(
                "k must be between 1 and 64, not {}",
                self.k
            )));
        }
        if self.bucket_entries == 0 || self.bucket_entries > 1024 {
            return Err(ConfigError::Value(format!(
                "bucket_entries must be between 1 and 1024, not {}",
                self.bucket_entries
            )));
        }
        if self.max_file_size.0 == 0 {
            return Err(ConfigError::Value(
                "max_file_size must be at least 1 byte".into(),
            ));
        }
        if self.bridge_limit == 0 {
            return Err(ConfigError::Value("bridge_limit must be at least 1".into()));
        }
        if self.workers > MAX_WORKERS {
            return Err(ConfigError::Value(format!(
                "workers must be between 0 (the cores available) and {MAX_WORKERS}, not {}",
                self.workers
            )));
        }
        let w = &self.watch;
        if !(1..=86_400).contains(&w.rescan_secs) {
            return Err(ConfigError::Value(format!(
                "watch.rescan_secs must be between 1 and 86400, not {}",
                w.rescan_secs
            )));
        }
        if !(1..=86_400).contains(&w.checkpoint_secs) {
            return Err(ConfigError::Value(format!(
                "watch.checkpoint_secs must be between 1 and 86400, not {}",
                w.checkpoint_secs
            )));
        }
        if !(10..=60_000).contains(&w.debounce_ms) {
            return Err(ConfigError::Value(format!(
                "watch.debounce_ms must be between 10 and 60000, not {}",
                w.debounce_ms
            )));
        }
        let m = self.watch.min_similarity;
        if !(m > 0.0 && m <= 1.0) {
            return Err(ConfigError::Value(format!(
                "watch.min_similarity must be above 0 and at most 1, not {m}"
            )));
        }
        Ok(())
    }

    /// Parse a config file's text.
    pub fn from_toml(text: &str) -> Result<Config, ConfigError> {
        let c: Config = toml::from_str(text).map_err(|e| {
            ConfigError::Value(
                e.to_string()
                    .lines()
                    .filter(|l| !l.trim().is_empty())
                    .collect::<Vec<_>>()
                    .join("; "),
            )
        })?;
        c.validate()?;
        c.validate_folders()?;
        Ok(c)
    }

    /// Load `explicit` (which must exist), or else the platform config file if
    /// there is one, or else the defaults.
    pub fn load(explicit: Option<&Path>) -> Result<Config, ConfigError> {
        let path = match explicit {
            Some(p) => p.to_path_buf(),
            // Whatever stands at the platform path is the person's config:
            // a FIFO or a folder there is an error to tell, not a default.
            None => match default_path() {
                Some(p) if p.symlink_metadata().is_ok() => p,
                other => {
                    return Ok(Config {
                        file: other,
                        ..Config::default()
                    });
                }
            },
        };
        // The person's own file: a link (a dotfile manager's) is followed,
        // as saving writes through it; what it leads to must be a regular
        // file of at most 1 MiB (not a FIFO, not /dev/zero).
        let target = match path.symlink_metadata() {
            Ok(m) if m.file_type().is_symlink() => {
                std::fs::canonicalize(&path).map_err(|_| ConfigError::Dangling(path.clone()))?
            }
            _ => path.clone(),
        };
        let bytes =
            lineage_source::read_file(&target, MAX_CONFIG).map_err(|reason| match reason {
                // Not found when opened: no file there (not one that went away).
                SkipReason::Vanished => ConfigError::Missing(path.clone()),
                // Its own words: a document's reason would name `max_file_size`,
                // which has nothing to do with a config file.
                SkipReason::TooLarge { size, .. } => ConfigError::TooLarge {
                    path: path.clone(),
                    size,
                },
                reason => ConfigError::Read {
                    path: path.clone(),
                    reason,
                },
            })?;
        let Ok(text) = String::from_utf8(bytes) else {
            return Err(ConfigError::NotText(path));
        };
        let mut c = Config::from_toml(&text).map_err(|e| ConfigError::Invalid {
            path: path.clone(),
            message: e.to_string(),
        })?;
        c.file = Some(path);
        Ok(c)
    }
}

/// The largest config file read: settings are a few lines, and a bigger
/// file (or `/dev/zero` behind a link) is not one.
const MAX_CONFIG: u64 = 1 << 20;

/// Why settings cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file cannot be read (not a regular file, unreadable).
    #[error("cannot read config {}: {reason}", path.display())]
    Read {
        /// The config file.
        path: PathBuf,
        /// Why it cannot be read.
        reason: SkipReason,
    },
    /// The file is larger than a config file can be (1 MiB).
    #[error(
        "config {}: {size} bytes; a config file holds at most 1 MiB of settings",
        path.display()
    )]
    TooLarge {
        /// The config file.
        path: PathBuf,
        /// Its size in bytes.
        size: u64,
    },
    /// There is no file at its path.
    #[error("config {}: no such file", .0.display())]
    Missing(PathBuf),
    /// The file is a symbolic link to nothing.
    #[error("config {}: a link to nothing", .0.display())]
    Dangling(PathBuf),
    /// The file is not UTF-8 text.
    #[error("config {}: not UTF-8 text", .0.display())]
    NotText(PathBuf),
    /// The file parses badly or holds a value out of range.
    #[error("config {}: {message}", path.display())]
    Invalid {
        /// The config file.
        path: PathBuf,
        /// What is wrong, and where.
        message: String,
    },
    /// A value out of range, from the file or a flag.
    #[error("{0}")]
    Value(String),
}

/// `config.toml` in the platform config directory (e.g. `~/.config/lineage/`).
pub(crate) fn default_path() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "lineage").map(|d| d.config_dir().join("config.toml"))
}

fn parsed<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: FromStr<Err = String>,
{
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum StrOrInt {
        S(String),
        I(u64),
    }
    let s = match StrOrInt::deserialize(d)? {
        StrOrInt::S(s) => s,
        StrOrInt::I(i) => i.to_string(),
    };
    s.parse().map_err(serde::de::Error::custom)
}

/// `order`: a rule's name, or a list of globs earliest first.
fn order_setting<'de, D: Deserializer<'de>>(d: D) -> Result<Order, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum RuleOrList {
        Rule(String),
        List(Vec<String>),
    }
    match RuleOrList::deserialize(d)? {
        RuleOrList::Rule(s) => s.parse(),
        RuleOrList::List(globs) => Order::listed(globs),
    }
    .map_err(serde::de::Error::custom)
}

fn parsed_list<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: FromStr<Err = String>,
{
    Vec::<String>::deserialize(d)?
        .iter()
        .map(|s| s.parse().map_err(serde::de::Error::custom))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A config over 1 MiB says so in its own words, not a document's
    /// (`max_file_size`).
    #[test]
    fn a_config_over_one_mib_says_so() {
        let dir = lineage_testing::TempDir::new("config-big");
        let file = dir.0.join("config.toml");
        let mut text = "# padding\n".repeat((MAX_CONFIG as usize) / 10 + 1);
        text.push_str("k = 5\n");
        std::fs::write(&file, &text).unwrap();
        let e = Config::load(Some(&file)).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "config {}: {} bytes; a config file holds at most 1 MiB of settings",
                file.display(),
                text.len()
            )
        );
        assert!(!e.contains("max_file_size"), "{e}");
    }

    #[test]
    fn empty_file_is_the_defaults() {
        assert_eq!(Config::from_toml("").unwrap(), Config::default());
    }

    #[test]
    fn the_example_file_documents_the_defaults() {
        let example = include_str!("../../../config.example.toml");
        assert_eq!(Config::from_toml(example).unwrap(), Config::default());
        // Every key of the config appears in the example.
        for key in [
            "k",
            "selector",
            "table_size",
            "bucket_entries",
            "eviction",
            "eviction_ties",
            "estimation",
            "bridge_limit",
            "seed",
            "align",
            "fingerprint_seed",
            "order",
            "max_file_size",
            "history_budget",
            "include",
            "exclude",
            "gitignore",
            "follow_symlinks",
            "index_dir",
            "workers",
            "sizes",
            "selectors",
            "evictions",
            "estimations",
            "theme",
            "max_copied",
            "max_copied_from_one",
            "min_passage",
            "near_duplicate",
            "allow",
            "deny",
        ]
        .into_iter()
        .chain(KeysConfig::default().bindings().map(|(name, _)| name))
        {
            assert!(
                example.lines().any(|l| l.starts_with(&format!("{key} ="))),
                "{key} missing from config.example.toml"
            );
        }
    }

    /// `[[predecessor]]` rules read in order; one naming more wildcards
    /// than it matches does not validate; a folder's replace the top level's.
    #[test]
    fn predecessor_rules_are_read_in_order_and_checked() {
        let c = Config::from_toml(
            "[[predecessor]]\npage = \"docs/*.md\"\nfollows = \"v1/*.md\"\n\
             [[predecessor]]\npage = \"**\"\nfollows = \"old/**\"\n",
        )
        .unwrap();
        assert_eq!(c.predecessor.len(), 2);
        assert_eq!(
            follows(&c.predecessor, "docs/a.md").as_deref(),
            Some("v1/a.md")
        );
        assert_eq!(
            follows(&c.predecessor, "x/a.md").as_deref(),
            Some("old/x/a.md")
        );
        assert!(c.validate().is_ok());
        let bad = Config::from_toml("[[predecessor]]\npage = \"a\"\nfollows = \"*\"\n");
        assert!(bad.is_err_and(|e| e.to_string().contains("more wildcards")));
        assert!(
            Config::from_toml("[[predecessor]]\npage = \"a\"\n").is_err(),
            "follows is needed"
        );
        let dir = std::env::temp_dir();
        let key = canonical(&dir);
        let c = Config::from_toml(&format!(
            "[[predecessor]]\npage = \"a\"\nfollows = \"b\"\n\
             [folders.{:?}]\npredecessor = [{{ page = \"c\", follows = \"d\" }}]\n",
            key.display().to_string()
        ))
        .unwrap();
        let mut here = c.clone();
        here.for_folder(&dir);
        assert_eq!(follows(&here.predecessor, "c").as_deref(), Some("d"));
        assert_eq!(follows(&here.predecessor, "a"), None);
    }

    /// `order` is a rule's name or a list of globs, earliest first; a glob
    /// that does not parse is an error naming it.
    #[test]
    fn order_is_a_rule_or_a_list_of_globs() {
        let c = Config::from_toml("order = [\"website/versioned_docs/version-*\", \"docs\"]\n")
            .unwrap();
        assert_eq!(
            c.order.to_string(),
            r#"["website/versioned_docs/version-*", "docs"]"#
        );
        assert!(c.order_asked());
        let c = Config::from_toml("order = \"version\"\n").unwrap();
        assert_eq!(c.order, Order::Version);
        let e = Config::from_toml("order = [\"a[\"]\n").unwrap_err();
        assert!(e.to_string().contains("a["), "{e}");
        assert!(Config::from_toml("order = []\n").is_err());
    }

    #[test]
    fn keys_parse_with_the_cli_spellings() {
        let c = Config::from_toml(
            "k = 6\ntable_size = \"20MB\"\neviction = \"cc\"\nestimation = \"B\"\n\
             order = \"path\"\nmax_file_size = \"1MiB\"\n[sweep]\nsizes = [\"1MB\", \"unbounded\"]\n",
        )
        .unwrap();
        assert_eq!(c.k, 6);
        assert_eq!(c.table_size, TableSize::Bytes(20_000_000));
        assert_eq!(c.eviction, Eviction::Cc);
        assert_eq!(c.estimation, Estimation::B);
        assert_eq!(c.order, Order::Path);
        assert_eq!(c.max_file_size, Bytes(1 << 20));
        assert_eq!(
            c.sweep.sizes,
            vec![TableSize::Bytes(1_000_000), TableSize::Unbounded]
        );
    }

    #[test]
    fn unknown_keys_and_bad_values_are_errors() {
        assert!(
            Config::from_toml("colour = 1")
                .unwrap_err()
                .to_string()
                .contains("colour")
        );
        assert!(
            Config::from_toml("eviction = \"fifo\"")
                .unwrap_err()
                .to_string()
                .contains("fifo")
        );
        assert!(Config::from_toml("k = 0").is_err());
        for bad in ["0", "86401"] {
            let e = Config::from_toml(&format!("[watch]\ncheckpoint_secs = {bad}")).unwrap_err();
            assert!(
                e.to_string()
                    .contains("checkpoint_secs must be between 1 and 86400")
            );
        }
        assert!(Config::from_toml("[watch]\ncheckpoint_secs = 86400").is_ok());
        assert!(Config::from_toml("[tui]\ntheme = \"blue\"").is_err());
        assert!(Config::from_toml("[keys]\nqiut = \"q\"").is_err());
    }

    #[test]
    fn keys_and_theme_override_only_what_they_name() {
        let c = Config::from_toml("[tui]\ntheme = \"light\"\n[keys]\nquit = \"ctrl-q\"\n").unwrap();
        assert_eq!(c.tui.theme, ThemeName::Light);
        assert_eq!(c.keys.quit, "ctrl-q");
        assert_eq!(c.keys.help, KeysConfig::default().help);
    }
}
