//! Every pane at 80×24 and 120×40, with its styles (the buffer's Debug form
//! lists each change of style); light and NO_COLOR themes too.

use std::sync::Arc;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{Event, KeyCode};

use super::fixture;
use super::{app, engine, keys, press};
use crate::App;
use crate::app::{Msg, update};
use crate::layout;
use crate::panes::draw;
use crate::theme::Theme;
use lineage_config::ThemeName;
use lineage_engine::Update;

fn screen(app: &App, theme: &Theme) -> String {
    let mut t = Terminal::new(TestBackend::new(app.size.width, app.size.height)).unwrap();
    t.draw(|f| draw(app, theme, f)).unwrap();
    format!("{:?}", t.backend().buffer())
}

fn dark() -> Theme {
    Theme::new(ThemeName::Dark, false)
}

/// The app at `w`×`h` showing each pane with the fixture's state in it.
fn documents(w: u16, h: u16) -> App {
    let mut a = app(w, h);
    press(&mut a, KeyCode::Down);
    a
}

/// Documents filtered by two words: their matched characters marked.
fn filtered(w: u16, h: u16) -> App {
    let mut a = app(w, h);
    keys(&mut a, "/v2 inst");
    press(&mut a, KeyCode::Enter);
    a
}

fn origin(w: u16, h: u16) -> App {
    let mut a = app(w, h);
    a.origin.open(fixture::V2_INSTALL);
    a.tab = crate::app::Tab::Origin;
    engine(
        &mut a,
        Update::Origin(Arc::new(fixture::origin_view(false))),
    );
    keys(&mut a, "nn");
    a
}

/// A search typed in the Origin pane: matches marked, the current one most.
fn search(w: u16, h: u16) -> App {
    let mut a = origin(w, h);
    keys(&mut a, "/tidewater");
    a
}

/// A path copied: the footer says which.
fn copied(w: u16, h: u16) -> App {
    let mut a = app(w, h);
    keys(&mut a, "jy");
    a
}

/// The export's file name being typed in the footer.
fn exporting(w: u16, h: u16) -> App {
    let mut a = app(w, h);
    keys(&mut a, "X");
    a
}

/// A rescan asked, not yet answered.
fn rescan(w: u16, h: u16) -> App {
    let mut a = app(w, h);
    keys(&mut a, "r");
    a
}

fn clusters(w: u16, h: u16) -> App {
    let mut a = app(w, h);
    keys(&mut a, "3");
    press(&mut a, KeyCode::Enter);
    press(&mut a, KeyCode::Enter);
    engine(&mut a, Update::Compare(Arc::new(fixture::compare_view())));
    a
}

fn table(w: u16, h: u16) -> App {
    let mut a = app(w, h);
    keys(&mut a, "4");
    a
}

fn tune(w: u16, h: u16) -> App {
    let mut a = app(w, h);
    keys(&mut a, "5");
    press(&mut a, KeyCode::Down);
    press(&mut a, KeyCode::Right);
    keys(&mut a, "a");
    let live = a.snapshot.as_ref().unwrap().params;
    let tuned = a.tune.tuned(&live).unwrap();
    engine(
        &mut a,
        Update::Shadow(fixture::shadow_compare(1, live, tuned)),
    );
    a
}

fn sweep(w: u16, h: u16) -> App {
    let mut a = app(w, h);
    keys(&mut a, "5");
    keys(&mut a, "w");
    let s = fixture::snapshot();
    engine(
        &mut a,
        Update::Shadow(fixture::shadow_sweep(1, s.params, s.shingles)),
    );
    a
}

fn events(w: u16, h: u16) -> App {
    let mut a = app(w, h);
    keys(&mut a, "6");
    press(&mut a, KeyCode::Down);
    a
}

macro_rules! panes {
    ($($pane:ident),*) => {$(
        #[test]
        fn $pane() {
            for (w, h) in [(60, 20), (80, 24), (120, 40)] {
                let a = super::$pane(w, h);
                insta::assert_snapshot!(format!("{}_{w}x{h}", stringify!($pane)), screen(&a, &dark()));
            }
        }
    )*};
}

mod pane {
    use super::{dark, screen};
    panes!(
        documents, filtered, origin, search, rescan, copied, exporting, clusters, table, tune,
        sweep, events
    );
}

#[test]
fn light_theme() {
    let a = origin(80, 24);
    insta::assert_snapshot!(screen(&a, &Theme::new(ThemeName::Light, false)));
}

#[test]
fn no_color_has_no_colours() {
    let a = origin(80, 24);
    let s = screen(&a, &Theme::new(ThemeName::Dark, true));
    // Styles are modifiers only: every fg and bg is Reset.
    for line in s.lines().filter(|l| l.contains("fg:")) {
        assert!(line.contains("fg: Reset, bg: Reset"), "{line}");
    }
    assert!(s.contains("REVERSED") && s.contains("UNDERLINED"));
    insta::assert_snapshot!(s);
}

#[test]
fn help_overlay_and_filter_input() {
    let mut a = app(80, 24);
    keys(&mut a, "/inst");
    insta::assert_snapshot!("filter_typing", screen(&a, &dark()));
    press(&mut a, KeyCode::Enter);
    keys(&mut a, "?");
    insta::assert_snapshot!("help", screen(&a, &dark()));
    // A small terminal scrolls the help down to the terms.
    let mut small = app(40, 12);
    keys(&mut small, "?");
    press(&mut small, KeyCode::End);
    insta::assert_snapshot!("help_40x12_end", screen(&small, &dark()));
}

#[test]
fn a_bottom_k_table_says_how_many_lookups_were_outside_the_sample() {
    let mut s = fixture::snapshot();
    s.params.eviction = lineage_origin::Eviction::BottomK;
    s.params.estimation = lineage_origin::Estimation::Nb;
    // Its entries are 8 bytes and keep 32 bits of the key: 510 buckets of
    // 64 (and a 2-byte fill count each) in the same 256 KiB.
    s.table.entry_bytes = 8;
    s.table.buckets = Some(510);
    s.table.capacity = Some(510 * 64);
    s.table.false_match = Some(64.0 / 2f64.powi(32));
    // Lookups are hits, inserts, or outside the sample: 10,000 here.
    s.table.inserts = s.table.lookups - s.table.hits - 10_000;
    s.table.regime = lineage_origin::Regime::Sampling {
        distinct: 98_123,
        held: 32_640,
    };
    for (w, h) in [(80, 24), (120, 40)] {
        let mut a = app(w, h);
        engine(&mut a, Update::Snapshot(Arc::new(s.clone())));
        keys(&mut a, "4");
        let shown = screen(&a, &dark());
        assert!(
            shown.contains("not sampled")
                && shown.contains("10,000 (19.2%)")
                && shown.contains("1.5e-8")
                && shown.contains("sampling about 1 in 3.0 of ~98,123 distinct")
                && (w < 120 || shown.contains("selected units: the smallest keys of each bucket")),
            "{shown}"
        );
        insta::assert_snapshot!(format!("table_bottom_k_{w}x{h}"), shown);
    }
}

#[test]
fn a_table_that_holds_everything_says_the_answer_is_exact() {
    let mut s = fixture::snapshot();
    s.params.selector = lineage_origin::Selector::All;
    s.params.estimation = lineage_origin::Estimation::Nb;
    s.table.evictions = 0;
    s.table.regime = lineage_origin::Regime::Holds { distinct: 11_201 };
    for (w, h) in [(60, 20), (80, 24), (120, 40)] {
        let mut a = app(w, h);
        engine(&mut a, Update::Snapshot(Arc::new(s.clone())));
        keys(&mut a, "4");
        let shown = screen(&a, &dark());
        assert!(
            shown.contains("holds all 11,201 distinct shingles: exact"),
            "{shown}"
        );
    }
    // Every shingle with bridging labels fresh ones copied: held, not exact.
    s.params.estimation = lineage_origin::Estimation::Be;
    let mut a = app(120, 40);
    engine(&mut a, Update::Snapshot(Arc::new(s.clone())));
    keys(&mut a, "4");
    let shown = screen(&a, &dark());
    assert!(
        shown.contains("holds all 11,201 distinct shingles") && !shown.contains("exact"),
        "{shown}"
    );
    // Another selector holds its units, which is not the exact answer.
    s.params.selector = lineage_origin::Selector::NHs;
    let mut a = app(120, 40);
    engine(&mut a, Update::Snapshot(Arc::new(s)));
    keys(&mut a, "4");
    let shown = screen(&a, &dark());
    assert!(
        shown.contains("holds all 11,201 distinct selected units") && !shown.contains("exact"),
        "{shown}"
    );
}

#[test]
fn a_sweep_as_a_table_of_numbers() {
    for (w, h) in [(80, 24), (120, 40)] {
        let mut a = sweep(w, h);
        keys(&mut a, "t");
        press(&mut a, KeyCode::PageDown);
        let shown = screen(&a, &dark());
        assert!(
            shown.contains("overall") && shown.contains("every-4"),
            "{shown}"
        );
        insta::assert_snapshot!(format!("sweep_table_{w}x{h}"), shown);
    }
}

#[test]
fn adopt_asks_first() {
    for (w, h) in [(80, 24), (120, 40)] {
        let mut a = app(w, h);
        a.tune.config_file = Some("/home/ana/.config/lineage/config.toml".into());
        a.tune.folder = "/home/ana/docs".into();
        a.tune.started = a.snapshot.as_ref().unwrap().params;
        a.tune.flags = vec!["table_size", "selector"];
        keys(&mut a, "5");
        // The selector, one choice on.
        keys(&mut a, "j");
        press(&mut a, KeyCode::Right);
        keys(&mut a, "A");
        let shown = screen(&a, &dark());
        assert!(shown.contains("Make these the live settings?"), "{shown}");
        // What is saved, for which folder, and the flag that outranks it
        // (not --table-size: the size is not saved).
        let flat = shown.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat.contains("save selector for /home/ana/docs in"),
            "{shown}"
        );
        assert!(flat.contains("--selector outranks"), "{shown}");
        assert!(!flat.contains("--table-size"), "{shown}");
        insta::assert_snapshot!(format!("adopt_{w}x{h}"), shown);
    }
}

/// A page of one version: its list offers nothing to open or compare.
#[test]
fn the_versions_of_a_page_with_one_say_so() {
    let mut view = fixture::versions_view();
    view.versions.truncate(1);
    for (w, h) in [(120, 40), (80, 24), (60, 20)] {
        let mut a = app(w, h);
        a.origin.open(fixture::V2_INSTALL);
        a.tab = crate::app::Tab::Origin;
        engine(&mut a, Update::Origin(Arc::new(view.clone())));
        keys(&mut a, "v");
        let text = rows(&a).join("\n");
        assert!(text.contains("the only version"), "{w}: {text}");
        assert!(!text.contains("compare with"), "{w}: {text}");
        // Its earlier versions, in a version folder, are its predecessors.
        assert!(
            text.contains("d what it changed since its predecessor · esc close")
                || text.contains("d changes since its predecessor · esc close")
                || (w < 80 && text.contains("d changes · esc close")),
            "{w}: {text}"
        );
    }
}

/// A page read from a repository's history: each version by its commit
/// and the day it was written, its subject among the notes, escaped.
#[test]
fn versions_read_from_a_history_show_their_commits() {
    let mut view = fixture::versions_view();
    for (i, v) in view.versions.iter_mut().enumerate() {
        v.commit = Some(lineage_source::history::CommitInfo {
            id: format!("{i}e466d447b7937f1da416626e96e2ccfae9c9671"),
            author: "Ada".into(),
            time: 1_577_836_800 + 86_400 * i as i64,
            subject: format!("Edit {i} \u{1b}[2J"),
        });
    }
    // The legend's origins too, by commit and day.
    view.legend[0].commit = view.versions[0].commit.clone();
    for (w, h) in [(120, 40), (80, 24)] {
        let mut a = app(w, h);
        a.origin.open(fixture::V2_INSTALL);
        a.tab = crate::app::Tab::Origin;
        engine(&mut a, Update::Origin(Arc::new(view.clone())));
        let legend = rows(&a).join("\n");
        // The day where the legend has room for it.
        let commit = if w == 120 {
            "0e466d4 2020-01-01"
        } else {
            "0e466d4"
        };
        assert!(legend.contains(commit), "{w}: {legend}");
        keys(&mut a, "v");
        let text = rows(&a).join("\n");
        for i in 0..3 {
            let day = lineage_core::civil::date(1_577_836_800 + 86_400 * i);
            assert!(text.contains(&format!("{i}e466d4 {day}")), "{w}: {text}");
        }
        assert!(!text.contains("seen "), "{w}: {text}");
        assert!(
            text.contains("Edit 2 \\x1b[2J") || text.contains("Edit 2 \\u{1b}"),
            "{w}: {text}"
        );
        assert!(!text.contains('\u{1b}'), "{w}: {text}");
        if w == 120 {
            insta::assert_snapshot!("versions_of_commits_120x40", screen(&a, &dark()));
        }
    }
}

#[test]
fn versions_of_a_replaced_page() {
    let view = fixture::versions_view();
    let seen = |i: usize| view.versions[i].seen_ms.unwrap();
    let today = seen(1).div_euclid(86_400_000);
    for (w, h) in [(120, 40), (80, 24), (60, 20)] {
        let mut a = app(w, h);
        a.today = Some(today);
        a.origin.open(fixture::V2_INSTALL);
        a.tab = crate::app::Tab::Origin;
        engine(&mut a, Update::Origin(Arc::new(view.clone())));
        let shown = screen(&a, &dark());
        assert!(shown.contains("replaced by v3"), "{shown}");
        keys(&mut a, "v");
        let shown = screen(&a, &dark());
        assert!(
            shown.contains("text not kept") && shown.contains("current"),
            "{shown}"
        );
        // Each version when lineage saw it, as Events and the status bar
        // tell it: today's by the clock, another day's with its date; the
        // file's mtime only where an older index kept nothing else.
        let text = rows(&a).join("\n");
        let at = |ms: i64| crate::panes::events::when(ms, Some(today));
        let mtime_ms = |i: usize| view.versions[i].mtime_ns.div_euclid(1_000_000);
        for expected in [at(mtime_ms(0)), at(seen(1)), at(seen(2))] {
            assert!(
                text.contains(&format!("seen {expected}")),
                "{expected}: {text}"
            );
        }
        assert!(!text.contains(&at(mtime_ms(2))), "{text}");
        insta::assert_snapshot!(format!("versions_{w}x{h}"), shown);
    }
    // In exact mode the list says its figures are the estimates.
    let mut a = app(120, 40);
    a.tab = crate::app::Tab::Origin;
    a.origin.exact = true;
    a.origin.open(fixture::V2_INSTALL);
    let mut v = fixture::versions_view();
    v.exact = true;
    engine(&mut a, Update::Origin(Arc::new(v)));
    keys(&mut a, "v");
    assert!(screen(&a, &dark()).contains("% new: the live settings' estimate"));
}

/// Neighbours that differ only in a middle folder keep it, at 80 and 120
/// columns: the file name's middle goes first.
#[test]
fn neighbours_keep_the_folder_that_tells_them_apart() {
    for (w, h) in [(80, 24), (120, 40)] {
        let mut a = app(w, h);
        let mut s = (**a.snapshot.as_ref().unwrap()).clone();
        let mut docs: Vec<_> = s.documents.iter().cloned().collect();
        for (d, year) in docs.iter_mut().zip([2023, 2024]) {
            d.path =
                format!("product/release-{year}/guide/installation-and-upgrade-guide.md").into();
        }
        s.documents = fixture::documents(docs);
        s.seq += 1;
        engine(&mut a, Update::Snapshot(Arc::new(s)));
        let shown = screen(&a, &dark());
        for year in [2023, 2024] {
            let row = shown
                .lines()
                .find(|l| l.contains(&format!("release-{year}/")));
            assert!(
                row.is_some_and(|r| r.contains(".md")),
                "{w}: {year}\n{shown}"
            );
        }
    }
}

/// A list that dropped its oldest events says how many there were.
#[test]
fn a_capped_event_list_says_so() {
    let mut a = app(120, 40);
    let mut s = (**a.snapshot.as_ref().unwrap()).clone();
    let newest = s.events[0].n;
    let mut events: Vec<_> = s.events.to_vec();
    events[0].n = 4_212;
    s.events = events.into();
    s.seq += 1;
    engine(&mut a, Update::Snapshot(Arc::new(s)));
    a.tab = crate::app::Tab::Events;
    let n = a.events_len();
    assert!(newest as usize <= n, "the fixture keeps every event");
    let shown = screen(&a, &dark());
    assert!(
        shown.contains(&format!("Events (the newest {n} of 4,212)")),
        "{shown}"
    );
}

/// A history being read shows in Events as a bar once its rate is
/// measured: how far, how fast and how long still, in the status bar too.
#[test]
fn an_import_under_way_is_a_bar_over_the_events() {
    for (w, h) in [(120, 40), (80, 24)] {
        let mut a = app(w, h);
        let mut s = (**a.snapshot.as_ref().unwrap()).clone();
        s.progress = Some(lineage_engine::Progress {
            what: "reading history".into(),
            done: 600,
            total: 2_336,
            per_sec: Some(800),
        });
        s.seq += 1;
        engine(&mut a, Update::Snapshot(Arc::new(s.clone())));
        a.tab = crate::app::Tab::Events;
        let shown = screen(&a, &dark());
        assert!(
            shown.contains("reading history 600/2,336 (26%) · 800/s · about 3 s left"),
            "{shown}"
        );
        insta::assert_snapshot!(format!("events_reading_history_{w}x{h}"), shown);
        // Not yet measured: no bar, the list as it was.
        s.progress.as_mut().unwrap().per_sec = None;
        s.seq += 1;
        engine(&mut a, Update::Snapshot(Arc::new(s)));
        assert!(!screen(&a, &dark()).contains("left"));
    }
}

/// One table size reads the same in the status bar and the Table pane
/// (`2419KiB` in one and `2.36MiB` in another read as two sizes).
#[test]
fn a_table_size_reads_the_same_everywhere() {
    let mut a = app(120, 40);
    let mut s = (**a.snapshot.as_ref().unwrap()).clone();
    s.params.table_size = lineage_origin::TableSize::Bytes(2419 << 10);
    s.seq += 1;
    engine(&mut a, Update::Snapshot(Arc::new(s)));
    a.tab = crate::app::Tab::Table;
    let shown = screen(&a, &dark());
    assert!(shown.contains("of 2.36MiB"), "status bar: {shown}");
    let size = shown.lines().find(|l| l.contains("size ")).unwrap();
    assert!(size.contains("2.36MiB"), "{size}");
    assert!(!shown.contains("2419KiB"), "{shown}");
}

/// A page whose dominant origin is its own earlier version says so: its
/// bare path read as the page itself.
#[test]
fn an_earlier_version_of_the_page_is_named_so_as_its_origin() {
    let mut a = app(120, 40);
    let mut s = (**a.snapshot.as_ref().unwrap()).clone();
    let mut docs: Vec<_> = s.documents.iter().cloned().collect();
    let (first, earlier) = (docs[0].path.clone(), docs[1].id);
    docs[0].dominant_path = Some(first.clone());
    docs[0].dominant_origin = Some(earlier);
    s.documents = fixture::documents(docs);
    s.seq += 1;
    engine(&mut a, Update::Snapshot(Arc::new(s)));
    let shown = screen(&a, &dark());
    let row = shown.lines().find(|l| l.contains(&*first)).unwrap();
    assert!(row.contains("(an earlier version)"), "{row}");
}

#[test]
fn copies_of_a_page() {
    for (w, h) in [(120, 40), (80, 24), (60, 20)] {
        let mut a = app(w, h);
        a.tab = crate::app::Tab::Origin;
        a.origin.open(fixture::V1_INSTALL);
        engine(&mut a, Update::Origin(Arc::new(fixture::v1_view())));
        keys(&mut a, "C");
        assert!(screen(&a, &dark()).contains("finding the pages"));
        engine(&mut a, Update::Copies(Arc::new(fixture::copies_view())));
        let shown = screen(&a, &dark());
        let text = rows(&a).join("\n");
        assert!(
            text.contains("Copies of v1/installation.md v1: 2 pages, by share"),
            "{text}"
        );
        assert!(text.contains("45 of 893 tokens, 1 passage"), "{text}");
        // By share: v2's page (most of it taken from here) first; the
        // other order one key away, the key shown.
        let v2 = text.find("96.2 %").unwrap();
        assert!(v2 < text.find("5.0 %").unwrap(), "{text}");
        assert!(text.contains("s newest first"), "{text}");
        insta::assert_snapshot!(format!("copies_{w}x{h}"), shown);
        keys(&mut a, "s");
        let text = rows(&a).join("\n");
        assert!(text.contains("2 pages, newest first"), "{text}");
        assert!(text.contains("s by share"), "{text}");
        let v2 = text.find("96.2 %").unwrap();
        assert!(v2 > text.find("5.0 %").unwrap(), "{text}");
        // Nothing cut at the right edge without a `…`.
        for line in rows(&a) {
            assert!(
                line.ends_with(' ')
                    || line.ends_with('│')
                    || line.ends_with('┐')
                    || line.ends_with('┘'),
                "{line}"
            );
        }
    }
    let mut a = app(80, 24);
    a.tab = crate::app::Tab::Origin;
    a.origin.open(fixture::V1_INSTALL);
    engine(&mut a, Update::Origin(Arc::new(fixture::v1_view())));
    keys(&mut a, "C");
    let mut none = fixture::copies_view();
    none.copies.clear();
    engine(&mut a, Update::Copies(Arc::new(none)));
    assert!(screen(&a, &dark()).contains("No other live page copies from it."));
    // Two copies named alike but for their folder keep the folder at 60
    // columns (both read `insta…ation.md v1`).
    let mut a = app(60, 20);
    a.tab = crate::app::Tab::Origin;
    a.origin.open(fixture::V1_INSTALL);
    engine(&mut a, Update::Origin(Arc::new(fixture::v1_view())));
    keys(&mut a, "C");
    let mut v = fixture::copies_view();
    let mut v3 = v.copies[1].clone();
    (v3.id, v3.path) = (fixture::V3_INSTALL, "v3/installation.md".into());
    v.copies.push(v3);
    engine(&mut a, Update::Copies(Arc::new(v)));
    let text = rows(&a);
    let row = |folder: &str| {
        text.iter()
            .any(|l| l.contains(&format!("│  96.2 %  {folder}/")))
    };
    assert!(row("v2") && row("v3"), "{}", text.join("\n"));
}

/// Every line ends in a space, a border or a `…`: nothing cut mid-word
/// and left ragged.
fn ends_cleanly<'a>(lines: impl Iterator<Item = &'a String>) {
    for line in lines {
        assert!(
            line.ends_with(' ')
                || line.ends_with('│')
                || line.ends_with('┐')
                || line.ends_with('┘')
                || line.ends_with('…'),
            "{line}"
        );
    }
}

/// Which pages carry the text of the page shown (P from Origin), most of
/// it first, with the selected page's passages and their words under the
/// list, at every size.
#[test]
fn pages_sharing_the_text_of_a_page() {
    for (w, h) in [(120, 40), (80, 24), (60, 20)] {
        let mut a = app(w, h);
        a.tab = crate::app::Tab::Origin;
        a.origin.open(fixture::V1_INSTALL);
        engine(&mut a, Update::Origin(Arc::new(fixture::v1_view())));
        keys(&mut a, "P");
        assert!(rows(&a).join("\n").contains("Shared: finding the pages"));
        engine(&mut a, Update::Shared(Arc::new(fixture::shared_view())));
        let shown = screen(&a, &dark());
        let text = rows(&a).join("\n");
        assert!(
            text.contains("Shared with v1/installation.md v1: 3 pages"),
            "{text}"
        );
        assert!(
            w < 80 || text.contains("3 pages, most of it first"),
            "{text}"
        );
        let at = |s: &str| text.find(s).unwrap_or_else(|| panic!("{s}: {text}"));
        assert!(
            at("v2/installation.md") < at("v3/installation.md"),
            "{text}"
        );
        assert!(at("v3/installation.md") < at("faq.md"), "{text}");
        assert!(text.contains("45 tokens, 1 passage"), "{text}");
        // The selected page's passages, with the page's words.
        let view = fixture::shared_view();
        let p = view.shares[0].passages[0];
        let range = format!("  {}–{}", p.page.0, p.page.1);
        assert!(text.contains(&range), "{text}");
        let words = {
            let v1 = fixture::v1_view();
            let b = crate::panes::token_bytes(&v1.spans, p.page.0..p.page.1).unwrap();
            fixture::V1_TEXT[b]
                .split_whitespace()
                .next()
                .unwrap()
                .to_string()
        };
        assert!(text.contains(&format!("│ {words}")), "{words}: {text}");
        assert!(text.contains("enter open"), "{text}");
        ends_cleanly(rows(&a).iter());
        insta::assert_snapshot!(format!("shared_{w}x{h}"), shown);
        // The FAQ's one passage when it is selected.
        keys(&mut a, "jj");
        let text = rows(&a).join("\n");
        assert!(text.contains("shared with z-support/faq.md:"), "{text}");
        assert!(text.contains("  165–210 │ "), "{text}");
    }
    let mut a = app(80, 24);
    a.tab = crate::app::Tab::Origin;
    a.origin.open(fixture::V1_INSTALL);
    engine(&mut a, Update::Origin(Arc::new(fixture::v1_view())));
    keys(&mut a, "P");
    let mut none = fixture::shared_view();
    none.shares.clear();
    engine(&mut a, Update::Shared(Arc::new(none)));
    assert!(screen(&a, &dark()).contains("No other live page shares its text."));
    // The key in the footer and in the help, the Origin pane's keys first.
    let mut a = origin(120, 40);
    assert!(rows(&a).last().unwrap().contains(" P shared "));
    keys(&mut a, "?");
    let help = rows(&a).join("\n");
    let pane = help.find("Origin pane").unwrap();
    let every = help.find("Every key").unwrap();
    let shared = help.find("  P  shared").unwrap_or_else(|| panic!("{help}"));
    assert!(pane < shared && shared < every, "{help}");
}

/// The stale copies (o): over the folder from Documents, one row per
/// passage, the selected one's words on both sides under the list with the
/// changed words marked; from Origin, of the page shown; at every size.
#[test]
fn stale_copies_over_the_folder_and_of_a_page() {
    for (w, h) in [(120, 40), (80, 24), (60, 20)] {
        let mut a = documents(w, h);
        assert_eq!(
            keys(&mut a, "o"),
            [lineage_engine::Command::Stale { id: None }]
        );
        assert!(rows(&a).join("\n").contains("Stale copies: finding them"));
        engine(&mut a, Update::Stale(Arc::new(fixture::stale_view())));
        let shown = screen(&a, &dark());
        let text = rows(&a).join("\n");
        assert!(
            text.contains("Stale copies: 2 passages in 2 pages"),
            "{text}"
        );
        let at = |s: &str| text.find(s).unwrap_or_else(|| panic!("{s}: {text}"));
        assert!(at("v2/installation.md") < at("z-support/faq.md"), "{text}");
        assert!(
            w < 80 || text.contains("changed in v1/installation.md v2"),
            "{text}"
        );
        // The selected passage's two sides, the origin's words marked new.
        assert!(
            text.contains("here  │ ") && text.contains("there │ "),
            "{text}"
        );
        assert!(text.contains("[-installer-]"), "{text}");
        assert!(text.contains("{+signed package+}"), "{text}");
        // The popup's lines (the footer below it is the pane's).
        ends_cleanly(rows(&a).iter().rev().skip(1));
        insta::assert_snapshot!(format!("stale_{w}x{h}"), shown);
        // The FAQ's fix made here only: the page's words are the new ones.
        keys(&mut a, "j");
        let text = rows(&a).join("\n");
        assert!(
            text.contains("{+LINEAGE_HOME+}") && text.contains("[-HOME-]"),
            "{text}"
        );
        // Enter opens the page at the passage, in Origin.
        let out = press(&mut a, KeyCode::Enter);
        assert_eq!(
            out,
            [lineage_engine::Command::Origin {
                id: fixture::FAQ,
                exact: false
            }]
        );
        assert!(a.stale.is_none() && a.tab == crate::app::Tab::Origin);
    }
    // From Origin: the page shown's, and none.
    let mut a = origin(80, 24);
    let id = a.origin.id().unwrap();
    assert_eq!(
        keys(&mut a, "o"),
        [lineage_engine::Command::Stale { id: Some(id) }]
    );
    let mut none = fixture::stale_view();
    none.only = Some(id);
    none.passages.clear();
    engine(&mut a, Update::Stale(Arc::new(none)));
    let text = rows(&a).join("\n");
    assert!(
        text.contains("Stale copies in the page shown: none"),
        "{text}"
    );
    assert!(
        text.contains("every passage it copied is as its origin has it now"),
        "{text}"
    );
    // An answer to another question is not taken.
    engine(&mut a, Update::Stale(Arc::new(fixture::stale_view())));
    let text = rows(&a).join("\n");
    assert!(
        text.contains("Stale copies in the page shown: none"),
        "{text}"
    );
    assert!(!text.contains("2 passages in 2 pages"), "{text}");
    keys(&mut a, "o");
    assert!(a.stale.is_none(), "o closes it");
}

/// What the page shown changed since its predecessor (d from Origin): the
/// predecessor and the counts, a row per passage, the selected one's words
/// under the list; enter opens a removed passage in the predecessor, a new
/// one in the page; at every size.
#[test]
fn what_the_page_shown_changed_since_its_predecessor() {
    for (w, h) in [(120, 40), (80, 24), (60, 20)] {
        let mut a = origin(w, h);
        let id = a.origin.id().unwrap();
        assert_eq!(
            keys(&mut a, "d"),
            [lineage_engine::Command::Diff {
                id,
                basis: lineage_config::Basis::Predecessor
            }]
        );
        assert!(rows(&a).join("\n").contains("Changed: comparing"));
        let mut v = fixture::diff_view();
        v.id = id;
        engine(&mut a, Update::Diff(Arc::new(v)));
        let shown = screen(&a, &dark());
        let text = rows(&a).join("\n");
        assert!(
            w < 80 || text.contains("since v1/installation.md v1"),
            "{text}"
        );
        assert!(
            text.contains("180 kept, 12 removed, 25 new, 30 moved"),
            "{text}"
        );
        assert!(
            w < 120 || text.contains("(previous version folder)"),
            "{text}"
        );
        let at = |s: &str| text.find(s).unwrap_or_else(|| panic!("{s}: {text}"));
        assert!(at(" removed line 7") < at(" new     lines 9–10"), "{text}");
        assert!(
            at(" new     lines 9–10") < at(" moved   lines 15–17"),
            "{text}"
        );
        // The selected (removed) passage's words, on one line each.
        assert!(
            text.contains("  - │ Run the installer as root, then reboot the station."),
            "{text}"
        );
        ends_cleanly(rows(&a).iter().rev().skip(1));
        insta::assert_snapshot!(format!("diff_{w}x{h}"), shown);
        // Enter on the removed passage opens the predecessor at it.
        let out = press(&mut a, KeyCode::Enter);
        assert_eq!(
            out,
            [lineage_engine::Command::Origin {
                id: fixture::V1_INSTALL,
                exact: false
            }]
        );
        assert!(a.diff.is_none());
        // The new one opens in the page.
        let mut a = origin(w, h);
        keys(&mut a, "d");
        let mut v = fixture::diff_view();
        v.id = id;
        engine(&mut a, Update::Diff(Arc::new(v)));
        keys(&mut a, "j");
        let out = press(&mut a, KeyCode::Enter);
        assert_eq!(out, [lineage_engine::Command::Origin { id, exact: false }]);
    }
}

#[test]
fn a_long_event_opens_in_full() {
    let mut a = app(40, 12);
    let mut s = (**a.snapshot.as_ref().unwrap()).clone();
    let long = "index /home/ana/.local/share/lineage/roots/3f2a: adopting new settings: \
                k=8 selector=win-8 table=12KiB bucket=64 eviction=lucky ties=oldest \
                estimation=be bridge=30 seed=0 (replaying 29 versions from cached fingerprints)";
    s.events = vec![lineage_engine::Event {
        n: 9,
        at_ms: 0,
        kind: lineage_engine::EventKind::Notice(long.into()),
    }]
    .into();
    engine(&mut a, Update::Snapshot(std::sync::Arc::new(s)));
    keys(&mut a, "6");
    press(&mut a, KeyCode::Enter);
    let shown = screen(&a, &dark());
    assert!(shown.contains("(replaying 29"), "{shown}");
    insta::assert_snapshot!(shown);
}

#[test]
fn an_engine_failure_and_no_snapshot_yet() {
    let mut a = App::new(
        crate::keymap::Keymap::default(),
        Box::new(crate::filter::Fuzzy::default()),
        80,
        24,
    );
    engine(
        &mut a,
        Update::Fatal(std::sync::Arc::new(lineage_engine::Failure::Index(
            lineage_store::index::IndexError::Location(
                "the index is locked by another lineage (pid 4242)".into(),
            ),
        ))),
    );
    insta::assert_snapshot!(screen(&a, &dark()));
}

#[test]
fn a_tiny_terminal_does_not_panic() {
    let mut a = origin(80, 24);
    for (w, h) in [(1, 1), (10, 3), (20, 6), (0, 0)] {
        update(&mut a, Msg::Input(Event::Resize(w, h)));
        for tab in "123456".chars() {
            keys(&mut a, &tab.to_string());
            screen(&a, &dark());
        }
    }
}

/// Without colours, many origins in one text: each legend entry shows its
/// style on a word, the same style as its blocks in the text, and no two
/// origins share one while the palette lasts (styles go by rank on the
/// page, not by id: two ids could hash alike); past it, one shared style
/// and an "N more" entry.
#[test]
fn no_color_tells_many_origins_apart() {
    let plain = Theme::new(ThemeName::Dark, true);
    for n in [7, plain.palette.len() + 2] {
        let ids: Vec<u32> = (0..29u32)
            .filter(|&id| id != fixture::V2_INSTALL)
            .take(n)
            .collect();
        for (w, h) in [(80, 24), (120, 40)] {
            let mut a = app(w, h);
            a.origin.open(fixture::V2_INSTALL);
            a.tab = crate::app::Tab::Origin;
            let view = fixture::many_origins_view(&ids);
            engine(&mut a, Update::Origin(Arc::new(view.clone())));
            let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
            t.draw(|f| draw(&a, &plain, f)).unwrap();
            let buf = t.backend().buffer().clone();
            // Each legend swatch has the style of its origin's text.
            let legend =
                crate::layout::inner(crate::layout::origin(crate::layout::screen(a.size).body).1);
            let mut swatches = Vec::new();
            for k in 0..view.legend.len() {
                let y = legend.y + 2 * k as u16;
                if y >= legend.bottom() {
                    break;
                }
                swatches.push(buf[(legend.x, y)].modifier);
            }
            let own = |m: &ratatui::style::Modifier| *m == plain.base.add_modifier;
            let others: Vec<_> = swatches.iter().filter(|m| !own(m)).collect();
            let mut distinct = others.clone();
            distinct.sort_by_key(|m| m.bits());
            distinct.dedup();
            assert_eq!(
                distinct.len(),
                others.len(),
                "{n} origins at {w}x{h}: {swatches:?}"
            );
            let screen_text: String = buf.content().iter().map(|c| c.symbol()).collect();
            let more = n > plain.palette.len();
            assert_eq!(
                screen_text.contains("2 more origins"),
                more && h >= 40,
                "{n} at {w}x{h}"
            );
            if n == 7 {
                insta::assert_snapshot!(format!("no_color_origins_{w}x{h}"), format!("{buf:?}"));
            }
        }
    }
}

/// Names with emoji ZWJ sequences, flags and combining marks, drawn as a
/// terminal sees consecutive frames: only the cells ratatui finds changed
/// are written, onto a screen where a wide glyph covers the cell after it
/// and writing over either half of it blanks the other. After the rows move,
/// the screen must equal a fresh drawing of the new frame: no glyph of an
/// old one left behind.
#[test]
fn wide_and_combined_glyphs_leave_nothing_behind() {
    let names = [
        "👩‍💻/notes.md",
        "cafe\u{301}/menu\u{301}.md",
        "👨‍👩‍👧‍👦 family/🏳️‍🌈 pride/a very long name that will be cut 👩‍💻👩‍💻👩‍💻.md",
        "a\u{301}\u{302}\u{303}/x.md",
        "🇫🇷/flags 🇩🇪🇯🇵.md",
        "日本語/ファイル名.md",
    ];
    for (w, h) in [(80, 24), (120, 40), (50, 12)] {
        let mut a = app(w, h);
        let mut s = (**a.snapshot.as_ref().unwrap()).clone();
        let mut docs: Vec<_> = s.documents.iter().cloned().collect();
        for (i, n) in names.iter().enumerate() {
            docs[2 * i].path = (*n).into();
            docs[2 * i + 1].dominant_path = Some((*n).into());
        }
        s.documents = fixture::documents(docs);
        s.seq += 1;
        engine(&mut a, Update::Snapshot(Arc::new(s)));
        let theme = dark();
        let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
        let mut prev = t.draw(|f| draw(&a, &theme, f)).unwrap().buffer.clone();
        let mut screen = Screen::new(w, h);
        screen.apply(&ratatui::buffer::Buffer::empty(prev.area), &prev);
        for step in ["j", "s", "S", "jjj", "s", "G", "g", "/👩", "\u{1b}"] {
            if step == "\u{1b}" {
                press(&mut a, KeyCode::Esc);
            } else {
                keys(&mut a, step);
            }
            let next = t.draw(|f| draw(&a, &theme, f)).unwrap().buffer.clone();
            screen.apply(&prev, &next);
            assert_eq!(
                screen.rows(),
                Screen::of(&next).rows(),
                "after {step} at {w}x{h}"
            );
            prev = next;
        }
    }
}

/// A terminal's cells: a glyph, or "" where the wide glyph before covers it.
struct Screen {
    w: u16,
    cells: Vec<String>,
}

impl Screen {
    fn new(w: u16, h: u16) -> Screen {
        Screen {
            w,
            cells: vec![" ".into(); w as usize * h as usize],
        }
    }

    /// The screen showing `buf` on a blank terminal.
    fn of(buf: &ratatui::buffer::Buffer) -> Screen {
        let mut s = Screen::new(buf.area.width, buf.area.height);
        s.apply(&ratatui::buffer::Buffer::empty(buf.area), buf);
        s
    }

    /// Write what ratatui sends to go from `prev` to `next`.
    fn apply(&mut self, prev: &ratatui::buffer::Buffer, next: &ratatui::buffer::Buffer) {
        for (x, y, cell) in prev.diff(next) {
            let i = y as usize * self.w as usize + x as usize;
            let width = crate::glyphs::width(cell.symbol()).max(1);
            let row_end = (y as usize + 1) * self.w as usize;
            for j in i..(i + width).min(row_end) {
                self.blank_around(j, row_end);
            }
            self.cells[i] = cell.symbol().to_string();
            for j in i + 1..(i + width).min(row_end) {
                self.cells[j] = String::new();
            }
        }
    }

    /// Writing at `j` destroys the wide glyph it is part of.
    fn blank_around(&mut self, j: usize, row_end: usize) {
        let mut head = j;
        while self.cells[head].is_empty() && !head.is_multiple_of(self.w as usize) {
            head -= 1;
        }
        let mut k = head + 1;
        if self.cells[head].is_empty() || crate::glyphs::width(&self.cells[head]) > 1 {
            self.cells[head] = " ".into();
            while k < row_end && self.cells[k].is_empty() {
                self.cells[k] = " ".into();
                k += 1;
            }
        }
    }

    fn rows(&self) -> Vec<String> {
        self.cells
            .chunks(self.w as usize)
            .map(|r| r.concat())
            .collect()
    }
}

/// The status bar says what the engine does now: indexing, adopting
/// settings, a shadow run, rescanning, or watching since the last change.
#[test]
fn the_status_bar_says_what_the_engine_is_doing() {
    use lineage_engine::Watching;
    for (w, h) in [(80, 24), (120, 40)] {
        let mut lines = Vec::new();
        let mut shot = |a: &App, what: &str| {
            let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
            t.draw(|f| draw(a, &dark(), f)).unwrap();
            let b = t.backend().buffer();
            let row: String = (0..w).map(|x| b[(x, 0)].symbol().to_string()).collect();
            lines.push(format!("{what:>10}: {row}"));
            row
        };
        let mut a = app(w, h);
        assert!(shot(&a, "indexing").contains("indexing 27/29 (93%)"));
        // Done indexing: watching, since the newest version's change.
        let mut s = fixture::snapshot();
        s.progress = None;
        s.seq += 1;
        engine(&mut a, Update::Snapshot(Arc::new(s.clone())));
        let row = shot(&a, "watching");
        let last = match w {
            80 => "watching · last change 22:43:20 v2/installation.md",
            _ => "watching · last change 22:43:20 v2/installation.md",
        };
        for part in ["tidewater-docs", "29 docs", last] {
            assert!(row.contains(part), "{part:?} in {row}");
        }
        // A shadow run under way.
        keys(&mut a, "5");
        press(&mut a, KeyCode::Down);
        press(&mut a, KeyCode::Right);
        keys(&mut a, "a");
        assert!(shot(&a, "shadow").contains("shadow run starting"));
        let live = s.params;
        let tuned = a.tune.tuned(&live).unwrap();
        let mut u = fixture::shadow_compare(1, live, tuned);
        (u.done, u.finished) = (1, false);
        engine(&mut a, Update::Shadow(u));
        assert!(shot(&a, "shadow").contains("shadow run 1/2"));
        engine(
            &mut a,
            Update::Shadow(fixture::shadow_compare(1, live, tuned)),
        );
        // Adopting (asked, then confirmed): until the settings are live and
        // nothing is replayed.
        keys(&mut a, "A");
        assert!(
            !shot(&a, "asking").contains("adopting"),
            "not before the yes"
        );
        press(&mut a, KeyCode::Enter);
        assert!(shot(&a, "adopting").contains("adopting settings…"));
        let mut replaying = s.clone();
        replaying.seq += 1;
        replaying.params = tuned;
        replaying.progress = Some(lineage_engine::Progress {
            what: "replaying".into(),
            done: 12,
            total: 29,
            per_sec: None,
        });
        engine(&mut a, Update::Snapshot(Arc::new(replaying.clone())));
        assert!(shot(&a, "adopting").contains("adopting settings… replaying 12/29"));
        replaying.seq += 1;
        replaying.progress = None;
        engine(&mut a, Update::Snapshot(Arc::new(replaying.clone())));
        assert!(shot(&a, "adopted").contains("watching ·"));
        // Timed rescans, with their reason.
        replaying.seq += 1;
        replaying.watching = Watching::Rescanning("OS events lost".into());
        engine(&mut a, Update::Snapshot(Arc::new(replaying)));
        assert!(shot(&a, "rescanning").contains("rescanning (OS events lost)"));
        insta::assert_snapshot!(format!("status_activity_{w}x{h}"), lines.join("\n"));
    }
}

/// At 60 columns the status bar keeps the root and the count (the last
/// change's path goes first), and the sweep's table keeps whole headers (the
/// table % column goes first).
#[test]
fn sixty_columns_keep_the_root_the_count_and_whole_headers() {
    let mut a = app(60, 20);
    let mut s = fixture::snapshot();
    s.progress = None;
    s.seq += 1;
    engine(&mut a, Update::Snapshot(Arc::new(s)));
    let mut t = Terminal::new(TestBackend::new(60, 20)).unwrap();
    t.draw(|f| draw(&a, &dark(), f)).unwrap();
    let b = t.backend().buffer();
    let row: String = (0..60).map(|x| b[(x, 0)].symbol().to_string()).collect();
    for part in ["tidewater-docs", "29 docs", "watching · changed 22:43:20"] {
        assert!(row.contains(part), "{part:?} in {row}");
    }
    let mut a = sweep(60, 20);
    keys(&mut a, "t");
    let text = screen(&a, &dark());
    for part in ["every-4", "overall", "nhs"] {
        assert!(text.contains(&format!(" {part}")), "{part:?} in {text}");
    }
    assert!(!text.contains("table %"), "{text}");
}

#[test]
fn a_search_of_every_page() {
    for (w, h) in [(80, 24), (120, 40)] {
        let mut a = app(w, h);
        keys(&mut a, "Fservice");
        let shown = screen(&a, &dark());
        assert!(shown.contains("search every page for service"), "{shown}");
        press(&mut a, KeyCode::Enter);
        assert!(screen(&a, &dark()).contains("reading the pages"));
        // Part way: the pages found so far, and how far it got.
        let mut part = fixture::search_view(1, "service");
        part.hits.truncate(1);
        (part.pages, part.matches, part.searched, part.done) = (1, 2, 12, false);
        engine(&mut a, Update::Search(Arc::new(part)));
        let shown = screen(&a, &dark());
        assert!(
            shown.contains("1 page, 2 matches in 12 of 29 pages…"),
            "{shown}"
        );
        engine(
            &mut a,
            Update::Search(Arc::new(fixture::search_view(1, "service"))),
        );
        let shown = screen(&a, &dark());
        assert!(
            shown.contains("Search “service”: 2 pages, 5 matches"),
            "{shown}"
        );
        assert!(shown.contains("tidewaterd.service"), "{shown}");
        insta::assert_snapshot!(format!("search_{w}x{h}"), shown);
    }
    let mut a = app(80, 24);
    keys(&mut a, "Fzz");
    press(&mut a, KeyCode::Enter);
    let mut none = fixture::search_view(1, "zz");
    none.unread = 3;
    engine(&mut a, Update::Search(Arc::new(none)));
    let shown = screen(&a, &dark());
    assert!(shown.contains("No live page holds these words."), "{shown}");
    assert!(shown.contains("3 pages could not be read"), "{shown}");
}

/// A list over the pane keeps its selection among the rows it draws (the
/// copies and versions lists counted rows of the whole screen, three more
/// than they draw).
#[test]
fn a_long_copies_list_keeps_its_selection_in_view() {
    let mut a = app(80, 24);
    a.tab = crate::app::Tab::Origin;
    a.origin.open(fixture::V1_INSTALL);
    engine(&mut a, Update::Origin(Arc::new(fixture::v1_view())));
    keys(&mut a, "C");
    let mut v = fixture::copies_view();
    let one = v.copies[0].clone();
    v.copies = (1..=30)
        .map(|n| lineage_engine::PageCopy {
            version: n,
            ..one.clone()
        })
        .collect();
    engine(&mut a, Update::Copies(Arc::new(v)));
    for _ in 0..17 {
        press(&mut a, KeyCode::Down);
    }
    let shown = screen(&a, &dark());
    assert!(
        shown.contains(" v18 "),
        "the selected row is drawn: {shown}"
    );
    // The same for the pages a search found.
    press(&mut a, KeyCode::Esc);
    keys(&mut a, "Fservice");
    press(&mut a, KeyCode::Enter);
    let mut v = fixture::search_view(1, "service");
    let one = v.hits[0].clone();
    v.hits = (1..=30)
        .map(|n| lineage_engine::SearchHit {
            version: n,
            ..one.clone()
        })
        .collect();
    engine(&mut a, Update::Search(Arc::new(v)));
    for _ in 0..17 {
        press(&mut a, KeyCode::Down);
    }
    let shown = screen(&a, &dark());
    assert!(
        shown.contains(" v18 "),
        "the selected row is drawn: {shown}"
    );
    // The same for a page's versions (the list opens on the one shown).
    press(&mut a, KeyCode::Esc);
    keys(&mut a, "2");
    let mut v = fixture::versions_view();
    let one = v.versions[0].clone();
    v.id = one.id;
    v.versions = (1..=30)
        .map(|n| lineage_engine::VersionInfo {
            version: n,
            id: if n == 1 { one.id } else { 1000 + n },
            ..one.clone()
        })
        .collect();
    a.origin.open(one.id);
    engine(&mut a, Update::Origin(Arc::new(v)));
    keys(&mut a, "v");
    for _ in 0..17 {
        press(&mut a, KeyCode::Down);
    }
    let shown = screen(&a, &dark());
    assert!(
        shown.contains(" v18 "),
        "the selected version is drawn: {shown}"
    );
}

#[test]
fn clusters_sorted_and_filtered() {
    for (w, h) in [(80, 24), (120, 40)] {
        let mut a = app(w, h);
        keys(&mut a, "3sS/alerts");
        let shown = screen(&a, &dark());
        assert!(shown.contains("words of a page's path"), "{shown}");
        press(&mut a, KeyCode::Enter);
        let shown = screen(&a, &dark());
        let title = if w > 80 {
            "Clusters 1 of 2 · by size reversed · /alerts"
        } else {
            "1/2 · size rev. · /alerts"
        };
        assert!(shown.contains(title), "{shown}");
        assert!(shown.contains("#2"), "a cluster keeps its number: {shown}");
        insta::assert_snapshot!(format!("clusters_filtered_{w}x{h}"), shown);
    }
}

/// Text as written: a heading's underline, a literal block, AsciiDoc's
/// attribute and continuation lines keep their lines; a joined line's
/// indentation is not drawn and `one-` `minute` joins whole; HTML's blocks
/// are lines.
#[test]
fn origin_shows_text_as_written() {
    for (w, h) in [(80, 24), (120, 40)] {
        let mut a = app(w, h);
        a.tab = crate::app::Tab::Origin;
        a.origin.open(fixture::V2_INSTALL);
        engine(&mut a, Update::Origin(Arc::new(fixture::as_written_view())));
        let shown = screen(&a, &dark());
        for line in [
            "│Abstract ",
            "│======== ",
            "│Tidewater reads the gauges every one-minute and",
            "│    $ tidectl check",
            "│[verse] ",
            "│+ ",
            "│Alerts ",
            "│An alert watches one sensor.",
            "│above ",
        ] {
            assert!(shown.contains(line), "{line:?} in {shown}");
        }
        // At its end, HTML's <pre> as written between fences.
        press(&mut a, KeyCode::End);
        let end = screen(&a, &dark());
        for line in ["│```", "│[[alert]] ", "│id = \"high\" "] {
            assert!(end.contains(line), "{line:?} in {end}");
        }
        insta::assert_snapshot!(format!("as_written_{w}x{h}"), shown);
    }
}

/// A time of another day than today shows its date (after a restart the
/// versions' times are their files' dates); the status bar's last change
/// is drawn by the same `when`.
#[test]
fn times_of_another_day_show_their_date() {
    for (w, h) in [(80, 24), (120, 40)] {
        let mut a = app(w, h);
        keys(&mut a, "6");
        let at = a.snapshot.as_ref().unwrap().events[0].at_ms;
        let day = at.div_euclid(86_400_000);
        let clock = crate::panes::events::clock(at);
        a.today = Some(day);
        let shown = screen(&a, &dark());
        assert!(shown.contains(&format!("│{clock} ")), "{shown}");
        a.today = Some(day + 3);
        let shown = screen(&a, &dark());
        let date = crate::panes::events::date_time(at * 1_000_000);
        assert!(shown.contains(&format!("│{date} ")), "Events: {shown}");
        insta::assert_snapshot!(format!("events_other_day_{w}x{h}"), shown);
    }
}

/// Zero-width and format characters in names: shown as escapes
/// in the rows, in a saved filter in the title and in the Events, where a
/// newline in a name would cut the line; none reaches the screen raw.
#[test]
fn hidden_characters_in_names_show_escaped() {
    use lineage_engine::EventKind;
    let (zwsp, rlo) = ("read\u{200b}me.md", "invoice\u{202e}dm.exe");
    let mut a = app(80, 24);
    let mut s = (**a.snapshot.as_ref().unwrap()).clone();
    let mut docs: Vec<_> = s.documents.iter().cloned().collect();
    docs[0].path = zwsp.into();
    docs[1].path = rlo.into();
    docs[2].dominant_path = Some(zwsp.into());
    s.documents = fixture::documents(docs);
    let mut event = s.events[0].clone();
    event.kind = EventKind::Deleted {
        path: "a\nb\u{feff}.md".into(),
    };
    s.events = std::iter::once(event)
        .chain(s.events.iter().cloned())
        .collect();
    s.seq += 1;
    engine(&mut a, Update::Snapshot(Arc::new(s)));
    let text = |a: &App| {
        let mut t = Terminal::new(TestBackend::new(80, 24)).unwrap();
        t.draw(|f| draw(a, &dark(), f)).unwrap();
        let b = t.backend().buffer();
        (
            b.content.iter().map(|c| c.symbol()).collect::<String>(),
            screen(a, &dark()),
        )
    };
    let (plain, debug) = text(&a);
    for shown in ["read\\u{200b}me.md", "invoice\\u{202e}dm.exe"] {
        assert!(plain.contains(shown), "{shown} not in\n{debug}");
    }
    insta::assert_snapshot!("hidden_characters_documents", debug);
    // The filter the view was left with, as the next start loads it.
    let h = a.docs_height();
    a.docs.set_filter("\u{202e}", h);
    let (plain, debug) = text(&a);
    assert!(plain.contains("filter /\\u{202e}"), "{debug}");
    insta::assert_snapshot!("hidden_characters_filter", debug);
    keys(&mut a, "6");
    let (plain, debug) = text(&a);
    assert!(plain.contains("a\\nb\\u{feff}.md"), "{debug}");
    insta::assert_snapshot!("hidden_characters_events", debug);
    for (_, c) in [
        ("zwsp", '\u{200b}'),
        ("rlo", '\u{202e}'),
        ("bom", '\u{feff}'),
    ] {
        assert!(!plain.contains(c));
    }
}

/// The text of a screen, row by row.
fn rows(app: &App) -> Vec<String> {
    let mut t = Terminal::new(TestBackend::new(app.size.width, app.size.height)).unwrap();
    t.draw(|f| draw(app, &dark(), f)).unwrap();
    let b = t.backend().buffer();
    (0..b.area.height)
        .map(|y| (0..b.area.width).map(|x| b[(x, y)].symbol()).collect())
        .collect()
}

/// Issue 41: at 60 columns the results' numbers were cut from the left
/// (DO 100 read `0.00`, 98.97 read `8.97`). Every number is whole at every
/// size; a column that does not fit is not shown, and the pane says which.
#[test]
fn tune_results_drop_a_column_rather_than_cut_a_number() {
    for (w, h, hidden) in [
        (120, 40, None),
        (80, 24, None),
        (60, 20, Some("not shown: evictions, secs")),
    ] {
        let mut a = tune(w, h);
        let live = a.snapshot.as_ref().unwrap().params;
        let tuned = a.tune.tuned(&live).unwrap();
        let mut u = fixture::shadow_compare(1, live, tuned);
        u.results[0].dominant_origin = 100.0;
        u.results[1].dominant_origin = 98.97;
        u.results[0].evictions = 4_100_000;
        engine(&mut a, Update::Shadow(u));
        let rows = rows(&a);
        let row = |name: &str| {
            rows.iter()
                .find(|r| r.starts_with(&format!("│{name} ")))
                .unwrap_or_else(|| panic!("{name} in {rows:#?}"))
                .clone()
        };
        let (l, t) = (row("live"), row("tuned"));
        for (r, x) in [(&l, "100.00"), (&t, "98.97"), (&l, "88.00"), (&l, "79.50")] {
            assert!(r.contains(&format!(" {x} ")), "{x} in {r}");
        }
        let text = rows.join("\n");
        match hidden {
            None => {
                assert!(l.contains(" 4,100,000 ") && l.contains(" 0.4│"), "{l}");
                assert!(!text.contains("not shown"), "{text}");
            }
            Some(note) => assert!(text.contains(note), "{text}"),
        }
        insta::assert_snapshot!(format!("tune_results_{w}x{h}"), screen(&a, &dark()));
    }
}

/// A sweep of `all` aligned and not beside the live selector: three series
/// do not fit 80 columns. The last go whole and are named; no number is cut.
#[test]
fn a_sweep_table_hides_whole_series_that_do_not_fit() {
    use crate::tune::{RunKind, Series};
    use lineage_origin::Selector;
    for (w, h, hidden) in [
        (120, 40, ""),
        (80, 24, "nhs"),
        (60, 20, "all unaligned, nhs"),
    ] {
        let mut a = sweep(w, h);
        keys(&mut a, "t");
        let series = vec![
            Series {
                selector: Selector::All,
                align: true,
            },
            Series {
                selector: Selector::All,
                align: false,
            },
            Series {
                selector: Selector::NHs,
                align: true,
            },
        ];
        let Some(RunKind::Sweep { sizes, .. }) = a.tune.kind.clone() else {
            panic!("a sweep");
        };
        let mut u = fixture::shadow_sweep(1, a.snapshot.as_ref().unwrap().params, 1000);
        let one = u.results[0].clone();
        u.results = (0..sizes.len() * 3)
            .map(|i| lineage_engine::ShadowResult {
                dominant_origin: if i % 2 == 0 { 100.0 } else { 98.97 },
                token_freshness: 100.0,
                overall: 100.0,
                table_fraction: Some(100.0),
                ..one.clone()
            })
            .collect();
        a.tune.kind = Some(RunKind::Sweep { sizes, series });
        engine(&mut a, Update::Shadow(u));
        let rows = rows(&a);
        let text = rows.join("\n");
        // Every figure drawn is whole: a cell is `100.0` or `99.0`, never
        // `00.0` or `9.0` after a space.
        let sized = |r: &&String| {
            let first = r.trim_start_matches('│').split(' ').next().unwrap_or("");
            r.starts_with('│') && first.ends_with("iB")
        };
        for r in rows.iter().filter(sized) {
            for cell in r.trim_matches('│').split_whitespace().skip(1) {
                assert!(["100.0", "99.0"].contains(&cell), "{cell:?} in {r}");
            }
        }
        if hidden.is_empty() {
            assert!(!text.contains("not shown"), "{text}");
        } else {
            assert!(text.contains(&format!("not shown: {hidden} ")), "{text}");
        }
        insta::assert_snapshot!(format!("sweep_three_series_{w}x{h}"), screen(&a, &dark()));
    }
}

/// Issue 41: flat names of several releases (`00282_v13_llvm_…_LangImpl01
/// .rst.txt`). Where a name is cut, the extension every row shares goes
/// before the part that names the page: each row keeps its `ImplNN`, in
/// Documents, the cluster list and the pairs, at 120, 80 and 60 columns.
#[test]
fn names_keep_what_tells_them_apart() {
    let name = |i: usize| {
        format!(
            "{:05}_v{}_llvm_docs_tutorial_MyFirstLanguageFrontend_LangImpl{i:02}.rst.txt",
            8 + 37 * i,
            13 + i % 3
        )
    };
    for (w, h) in [(120, 40), (80, 24), (60, 20)] {
        let mut a = app(w, h);
        let mut s = (**a.snapshot.as_ref().unwrap()).clone();
        let mut docs: Vec<_> = s.documents.iter().cloned().collect();
        docs.sort_by_key(|d| d.id);
        for (i, d) in docs.iter_mut().enumerate() {
            d.path = name(i).into();
            d.dominant_path = None;
        }
        s.documents = fixture::documents(docs);
        s.seq += 1;
        engine(&mut a, Update::Snapshot(Arc::new(s)));
        // Each name drawn cut names its page: `Impl` and its number.
        let check = |rows: &[String], from: usize, to: usize, what: &str| {
            let mut seen = 0;
            for r in rows.iter().filter(|r| r.starts_with('│')) {
                let r: String = r.chars().skip(from).take(to - from).collect();
                for part in r.split(['│', '↔']).filter(|p| p.contains('…')) {
                    seen += 1;
                    let named = part.split("Impl").nth(1).is_some_and(|rest| {
                        rest.chars().take(2).filter(char::is_ascii_digit).count() == 2
                    });
                    assert!(named, "{what} {w}: {part}");
                }
            }
            assert!(seen > 0, "{what} {w}: {rows:#?}");
        };
        let shown = rows(&a);
        check(&shown, 0, w as usize, "Documents");
        insta::assert_snapshot!(format!("names_documents_{w}x{h}"), shown.join("\n"));
        keys(&mut a, "3");
        let shown = rows(&a);
        let list = layout::clusters(layout::screen(a.size).body).list;
        check(&shown, 0, (list.x + list.width) as usize, "Clusters");
        check(&shown, (list.x + list.width) as usize, w as usize, "Pairs");
        insta::assert_snapshot!(format!("names_clusters_{w}x{h}"), shown.join("\n"));
    }
}

/// Issue 41: `/00008`, enter opened row 2, the row selected before, which
/// matched too. A filter selects its best match, and the title says the
/// rows are in match order, not "by copied %".
#[test]
fn a_filter_selects_its_best_match_and_says_its_order() {
    for (w, h) in [(120, 40), (80, 24), (60, 20)] {
        let mut a = app(w, h);
        keys(&mut a, "s");
        while a.docs.selected().unwrap().path.as_ref() != "v3/installation.md" {
            press(&mut a, KeyCode::Down);
        }
        keys(&mut a, "/inst");
        press(&mut a, KeyCode::Enter);
        assert_eq!(a.docs.cursor.selected, 0, "{w}");
        assert_eq!(a.docs.row(0).path.as_ref(), "v1/installation.md", "{w}");
        let shown = rows(&a).join("\n");
        assert!(shown.contains("· best match first ·"), "{shown}");
        assert!(!shown.contains("by fresh"), "{shown}");
        insta::assert_snapshot!(format!("filter_best_match_{w}x{h}"), shown);
        let asked = press(&mut a, KeyCode::Enter);
        assert!(
            asked.iter().any(|c| matches!(
                c,
                lineage_engine::Command::Origin { id, .. } if *id == fixture::V1_INSTALL
            )),
            "{w}: {asked:?}"
        );
        // Cleared, the list keeps the row that was opened.
        keys(&mut a, "1");
        press(&mut a, KeyCode::Esc);
        assert_eq!(a.docs.selected().unwrap().id, fixture::V1_INSTALL, "{w}");
        assert!(rows(&a).join("\n").contains("· by fresh %"), "{w}");
    }
}

/// A snapshot whose clusters are #4 and #9 (numbers the engine kept while
/// others came and went).
fn renumbered(w: u16, h: u16) -> App {
    let mut s = fixture::snapshot();
    s.clusters = (s.clusters.iter())
        .zip([4, 9])
        .map(|(c, number)| {
            Arc::new(lineage_engine::Cluster {
                number,
                ..(**c).clone()
            })
        })
        .collect();
    let mut a = App::new(
        crate::keymap::Keymap::default(),
        Box::new(crate::filter::Fuzzy::default()),
        w,
        h,
    );
    engine(&mut a, Update::Snapshot(Arc::new(s)));
    a
}

/// Issue 41, item 7: the Clusters list and Documents' cluster column show
/// each cluster's own number, not its place in the list.
#[test]
fn clusters_show_their_own_numbers() {
    for (w, h) in [(120, 40), (80, 24), (60, 20)] {
        let mut a = renumbered(w, h);
        let docs = rows(&a).join("\n");
        assert!(docs.contains("#4") && docs.contains("#9"), "{w}: {docs}");
        assert!(
            !docs.contains("#1 ") && !docs.contains("#2 "),
            "{w}: {docs}"
        );
        keys(&mut a, "3");
        let shown = rows(&a).join("\n");
        assert!(shown.contains("#4") && shown.contains("#9"), "{w}: {shown}");
        insta::assert_snapshot!(format!("cluster_numbers_{w}x{h}"), shown);
    }
}

/// Issue 41: the light theme's status separators (and every muted word)
/// were ANSI light grey on a light background.
#[test]
fn the_light_themes_separators_read_on_a_light_background() {
    use ratatui::style::Color;
    let dark_enough = |c: Color| match c {
        Color::Rgb(r, g, b) => (u32::from(r) + u32::from(g) + u32::from(b)) / 3 < 128,
        Color::Black | Color::Blue | Color::Red | Color::Magenta | Color::DarkGray => true,
        _ => false,
    };
    for (w, h) in [(120, 40), (80, 24), (60, 20)] {
        let a = origin(w, h);
        let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
        t.draw(|f| draw(&a, &Theme::new(ThemeName::Light, false), f))
            .unwrap();
        let b = t.backend().buffer();
        let seps: Vec<Color> = (0..w)
            .map(|x| &b[(x, 0)])
            .filter(|c| c.symbol() == "│")
            .map(|c| c.fg)
            .collect();
        assert!(!seps.is_empty(), "{w}: no separator in the status line");
        assert!(seps.into_iter().all(dark_enough), "{w}");
    }
}

/// The Origin pane's bottom border (its footer).
fn origin_footer(a: &App) -> String {
    let shown = rows(a);
    let text = layout::origin(a.body()).0;
    shown[(text.y + text.height - 1) as usize].clone()
}

/// Issue 41: the Origin footer said nothing of the block selected.
#[test]
fn the_origin_footer_names_the_selected_block() {
    for (w, h) in [(120, 40), (80, 24), (60, 20)] {
        let mut a = origin(w, h);
        let view = a.origin.view.clone().unwrap();
        let copied = view.runs.iter().filter(|r| r.origin.is_some()).count();
        let footer = origin_footer(&a);
        assert!(
            footer.contains(&format!("block 2/{copied}")),
            "{w}: {footer}"
        );
        let origin = view.runs[a.origin.block.unwrap()].origin.unwrap();
        let e = view.legend.iter().find(|e| e.origin == origin).unwrap();
        if w >= 80 {
            assert!(
                footer.contains(&format!("from {} ·", e.path)),
                "{w}: {footer}"
            );
        }
        // No block selected: no block named.
        press(&mut a, KeyCode::Esc);
        a.origin.block = None;
        assert!(!origin_footer(&a).contains("block"), "{w}");
    }
}

/// Issue 41: another page's search stayed (`no match · 87/416`).
#[test]
fn a_search_stays_with_its_page() {
    for (w, h) in [(120, 40), (80, 24), (60, 20)] {
        let mut a = search(w, h);
        press(&mut a, KeyCode::Enter);
        assert!(origin_footer(&a).contains("match"), "{w}");
        a.origin.open(fixture::V1_INSTALL);
        engine(&mut a, Update::Origin(Arc::new(fixture::v1_view())));
        assert!(a.origin.search.is_none(), "{w}");
        let footer = origin_footer(&a);
        assert!(!footer.contains("match"), "{w}: {footer}");
    }
}

/// Issue 41: `?` listed every key for every pane; the pane's own keys come
/// first now, as lazygit shows them.
#[test]
fn help_shows_the_panes_own_keys_first() {
    for (w, h) in [(120, 40), (80, 24), (60, 20)] {
        for (pane, own) in [("2", "next block"), ("3", "pairs/compare")] {
            let mut a = origin(w, h);
            keys(&mut a, pane);
            keys(&mut a, "?");
            let shown = rows(&a);
            let title = crate::app::TABS[pane.parse::<usize>().unwrap() - 1].title();
            let at = |s: &str| shown.iter().position(|l| l.contains(s));
            let head = at(&format!("{title} pane")).expect("the pane's section");
            assert!(at(own).is_some_and(|o| o > head), "{w} {pane}: {shown:#?}");
            assert!(head <= 3, "{w}: first");
            if h >= 24 {
                assert!(at("Every key").is_some_and(|e| e > head), "{w}");
            }
        }
    }
    // Origin's keys the footer has no room for are in its section too,
    // before every key.
    let mut a = origin(120, 40);
    keys(&mut a, "2?");
    let shown = rows(&a);
    let at = |s: &str| shown.iter().position(|l| l.contains(s));
    let every = at("Every key").expect("every key");
    for what in [
        "previous block",
        "next search match",
        "previous search match",
    ] {
        assert!(at(what).is_some_and(|o| o < every), "{what}: {shown:#?}");
    }
    // Issue 55: so are Clusters' S and right, Tune's left/right, t and T.
    for (pane, own) in [
        ("3", &["reverse the clusters' order", "to the pairs"][..]),
        (
            "5",
            &[
                "previous choice of the field",
                "next choice of the field",
                "the sweep as a chart or a table",
                "take the table row's size",
            ],
        ),
    ] {
        let mut a = origin(120, 40);
        keys(&mut a, pane);
        keys(&mut a, "?");
        let shown = rows(&a);
        let at = |s: &str| shown.iter().position(|l| l.contains(s));
        let every = at("Every key").expect("every key");
        for what in own {
            assert!(
                at(what).is_some_and(|o| o < every),
                "{pane} {what}: {shown:#?}"
            );
        }
    }
}

/// Issue 41: two versions of a page compared from Origin opened inside
/// Clusters, under an unrelated cluster's list and pairs; they take the
/// whole pane now, and a pair compared in Clusters still shows its list.
#[test]
fn a_version_comparison_is_of_no_cluster() {
    use fixture::{V2_INSTALL, VERSION_3};
    for (w, h) in [(120, 40), (80, 24), (60, 20)] {
        let mut a = app(w, h);
        a.origin.open(V2_INSTALL);
        a.tab = crate::app::Tab::Origin;
        engine(&mut a, Update::Origin(Arc::new(fixture::versions_view())));
        keys(&mut a, "vjc");
        let mut c = fixture::compare_view();
        (c.a.id, c.b.id) = (V2_INSTALL, VERSION_3);
        engine(&mut a, Update::Compare(Arc::new(c)));
        let shown = rows(&a).join("\n");
        assert!(
            !shown.contains("Pairs (") && !shown.contains("docs 0."),
            "{w}: {shown}"
        );
        assert!(!shown.contains("#1 "), "{w}: {shown}");
        let body = a.body();
        let left = a.clusters_layout().left;
        assert_eq!((left.y, left.height), (body.y, body.height), "{w}");
        insta::assert_snapshot!(format!("version_compare_{w}x{h}"), shown);
        // Closed, and a cluster's pair compared: the list is back above it.
        press(&mut a, KeyCode::Esc);
        let mut a = clusters(w, h);
        assert!(a.clusters.compare.is_some());
        assert!(rows(&a).join("\n").contains("Pairs ("), "{w}");
        keys(&mut a, "x");
    }
}

/// Issue 41: the sweep's six lines differed only by colour. Each line's
/// points have a mark of their own, the legend shows it, and the marks
/// show without colour.
#[test]
fn the_sweeps_lines_have_marks_of_their_own() {
    for (w, h) in [(120, 40), (80, 24), (60, 20)] {
        let a = sweep(w, h);
        let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
        t.draw(|f| draw(&a, &Theme::new(ThemeName::Dark, true), f))
            .unwrap();
        let b = t.backend().buffer();
        let text: Vec<String> = (0..h)
            .map(|y| (0..w).map(|x| b[(x, y)].symbol()).collect())
            .collect();
        let title = text.iter().position(|l| l.contains("Sweep (%)")).unwrap();
        let plot: String = text[title + 1..].concat();
        let seen: Vec<char> = "●○■□".chars().filter(|&m| plot.contains(m)).collect();
        assert!(seen.len() >= 3, "{w}: {seen:?}\n{}", text.join("\n"));
        // The legend whole (at 80 columns it ran off as `□⠒ TF ever┐`):
        // shorter where narrow, every series named.
        let legend = &text[title];
        let short = legend.contains("DO and TF: ●○ nhs  ■□ every-4");
        assert!(legend.contains("●⠒ DO") || short, "{w}: {legend}");
        assert!(legend.contains("every-4  ─"), "{w}: {legend}");
        assert_eq!(short, w == 60, "{w}: {legend}");
    }
}

/// Issue 41: a search or copies list asked while the index is closed waited
/// on "reading the pages…" forever; the engine's error ends the wait.
#[test]
fn a_query_of_a_closed_index_says_so() {
    let closed = || {
        Update::Events(Arc::from(vec![lineage_engine::Event {
            n: 99,
            at_ms: 0,
            kind: lineage_engine::EventKind::Error(format!(
                "{} (disk full); try again when it can be written",
                lineage_engine::INDEX_CLOSED
            )),
        }]))
    };
    for (w, h) in [(120, 40), (80, 24), (60, 20)] {
        let mut a = app(w, h);
        keys(&mut a, "Fservice");
        press(&mut a, KeyCode::Enter);
        engine(&mut a, closed());
        let shown = rows(&a).join("\n");
        assert!(!shown.contains("reading the pages"), "{w}: {shown}");
        assert!(
            shown.contains("not searched") && shown.contains("closed"),
            "{w}: {shown}"
        );
        insta::assert_snapshot!(format!("closed_search_{w}x{h}"), shown);
        let mut a = app(w, h);
        a.tab = crate::app::Tab::Origin;
        a.origin.open(fixture::V1_INSTALL);
        engine(&mut a, Update::Origin(Arc::new(fixture::v1_view())));
        keys(&mut a, "C");
        engine(&mut a, closed());
        let shown = rows(&a).join("\n");
        assert!(!shown.contains("finding the pages"), "{w}: {shown}");
        assert!(shown.contains("index is closed"), "{w}: {shown}");
        // The same for the pages that share its text.
        let mut a = app(w, h);
        a.tab = crate::app::Tab::Origin;
        a.origin.open(fixture::V1_INSTALL);
        engine(&mut a, Update::Origin(Arc::new(fixture::v1_view())));
        keys(&mut a, "P");
        engine(&mut a, closed());
        let shown = rows(&a).join("\n");
        assert!(!shown.contains("finding the pages"), "{w}: {shown}");
        assert!(shown.contains("Shared: not found"), "{w}: {shown}");
        assert!(shown.contains("index is closed"), "{w}: {shown}");
        // An answer already under way is not undone by the error.
        let mut a = app(w, h);
        keys(&mut a, "Fservice");
        press(&mut a, KeyCode::Enter);
        engine(
            &mut a,
            Update::Search(Arc::new(fixture::search_view(1, "service"))),
        );
        engine(&mut a, closed());
        assert!(a.find.as_ref().unwrap().failed.is_none(), "{w}");
    }
}

/// Issue 41 at 60x20: nothing is cut where the edge falls. The tab bar
/// showed a stray `6 `, the Documents header `dominant orig`, the charts'
/// titles `hit rate · last 4`, an event ran off its row without `…`, and a
/// pair's names had 11 columns each (`v1/in…on.md ↔ v2/in…on.md`).
#[test]
fn sixty_columns_cut_nothing_silently() {
    let a = documents(60, 20);
    let text = rows(&a);
    assert_eq!(
        text[1].trim_end(),
        " 1 Documents 2 Origin 3 Clusters 4 Table 5 Tune 6 Events"
    );
    assert!(text[3].contains(" dom. origin "), "{}", text[3]);
    // The bar as wide as its room: its labels spaced out again at 80.
    let a = documents(80, 24);
    assert!(rows(&a)[1].starts_with(" 1 Documents   2 Origin "));

    let a = table(60, 20);
    let text = rows(&a).join("\n");
    assert!(text.contains("┌ hit rate 49.5% ─"), "{text}");
    assert!(text.contains("┌ evictions 64.8% ─"), "{text}");
    let a = table(120, 40);
    let text = rows(&a).join("\n");
    assert!(text.contains("┌ hit rate · last 49.5% ─"), "{text}");

    let a = events(60, 20);
    let text = rows(&a);
    let version = text.iter().find(|l| l.contains(" version ")).unwrap();
    assert!(
        version.contains("v2/installation.md v2: 12.5% fresh, …"),
        "{version}"
    );
    // Where there is room the origin is named, its name fitted.
    let a = events(80, 24);
    let text = rows(&a);
    let version = text.iter().find(|l| l.contains(" version ")).unwrap();
    assert!(version.contains(", mostly from v1/"), "{version}");
    assert!(
        version.trim_end_matches([' ', '│']).ends_with(".md"),
        "{version}"
    );

    for (w, h) in [(60, 20), (80, 24)] {
        let mut a = app(w, h);
        keys(&mut a, "3");
        let text = rows(&a).join("\n");
        assert!(text.contains("0.912 {v1 ↔ v2}/installation.md"), "{text}");
    }

    // The footer's keys stay whole after a long message or a prompt.
    let a = copied(60, 20);
    let foot = rows(&a).pop().unwrap();
    assert!(
        foot.contains("…") && foot.contains("? keys  q quit"),
        "{foot}"
    );
    let a = exporting(60, 20);
    let foot = rows(&a).pop().unwrap();
    assert!(foot.contains("enter write  esc cancel"), "{foot}");

    // What the focused field trades, in the form's border, ends in `…`.
    let a = tune(60, 20);
    let text = rows(&a);
    let trade = text
        .iter()
        .find(|l| l.starts_with("└ which shingles"))
        .unwrap();
    assert!(trade.ends_with("…┘"), "{trade}");
}

/// Issue 55: the Origin title said "estimated" when the table holds every
/// shingle under settings that make the estimate exact (the Table pane's
/// regime `exact`); it says "exact" then, and "estimated" otherwise.
#[test]
fn the_origin_title_says_exact_where_the_estimate_is_the_exact_answer() {
    let title = |a: &App| rows(a)[2].clone();
    let mut a = origin(120, 40);
    assert!(title(&a).contains("v2 · estimated"), "{}", title(&a));
    let mut snap = (**a.snapshot.as_ref().unwrap()).clone();
    snap.table.regime = lineage_origin::Regime::Holds { distinct: 1000 };
    snap.params.selector = lineage_origin::Selector::All;
    snap.params.estimation = lineage_origin::Estimation::Nb;
    a.snapshot = Some(Arc::new(snap.clone()));
    assert!(title(&a).contains("v2 · exact"), "{}", title(&a));
    // Held, but bridging labels unfound shingles: still an estimate.
    snap.params.estimation = lineage_origin::Estimation::Be;
    a.snapshot = Some(Arc::new(snap));
    assert!(title(&a).contains("v2 · estimated"), "{}", title(&a));
}

/// Issue 55, item 8: the shares "changed" and "removed" have a column at
/// every size: at 60 columns the one sorted by stands in for "fresh", the
/// title names the order and the basis.
#[test]
fn changed_and_removed_have_a_column_at_every_size() {
    for (w, h) in [(120, 40), (80, 24), (60, 20)] {
        let mut a = app(w, h);
        // path → fresh → copied → changed → removed.
        keys(&mut a, "sss");
        for (label, column) in [("changed %", "changed"), ("removed %", "removed")] {
            let shown = rows(&a);
            assert!(
                shown[2].contains(&format!("by {label}")) && shown[2].contains("vs predecessor"),
                "{w}: {}",
                shown[2]
            );
            let header = &shown[3];
            assert!(header.contains(column), "{w}: {header}");
            if w == 60 {
                assert!(!header.contains("fresh"), "{header}");
            }
            // Every row's share shows in it: a number or a dash, not cut.
            let at = header.find(column).unwrap();
            let cell = |r: &String| {
                r.chars()
                    .skip(header[..at].chars().count())
                    .take(7)
                    .collect::<String>()
            };
            assert!(
                shown[4..9]
                    .iter()
                    .all(|r| cell(r).trim().parse::<f64>().is_ok() || cell(r).contains('–')),
                "{w}: {:?}",
                shown[4..9].iter().map(cell).collect::<Vec<_>>()
            );
            keys(&mut a, "s");
        }
    }
}

/// Issue 55, item 1: at 60x20 Documents showed `…/JestPlatform.md`,
/// `MockFunctionAPI.md`: pages of four version folders read alike. Every
/// row keeps its version folder at 120, 80 and 60 columns, the name cut.
#[test]
fn every_row_keeps_its_version_folder() {
    const VERSIONS: [&str; 4] = ["29.7", "30.0", "30.4", "next"];
    const NAMES: [&str; 5] = [
        "JestPlatform.md",
        "MockFunctionAPI.md",
        "TestEnvironment.md",
        "_TypeScriptExamplesNote.md",
        "api/reference/CodeTransformation.md",
    ];
    for (w, h) in [(120, 40), (80, 24), (60, 20)] {
        let mut a = app(w, h);
        let mut s = (**a.snapshot.as_ref().unwrap()).clone();
        let mut docs: Vec<_> = s.documents.iter().cloned().collect();
        docs.sort_by_key(|d| d.id);
        for (i, d) in docs.iter_mut().enumerate() {
            d.path = format!("{}/{}", VERSIONS[i % 4], NAMES[i / 4 % 5]).into();
            d.dominant_path = None;
        }
        s.documents = fixture::documents(docs);
        s.seq += 1;
        engine(&mut a, Update::Snapshot(Arc::new(s)));
        let shown = rows(&a);
        let listed: Vec<&String> = (shown.iter())
            .filter(|r| r.starts_with('│') && !r.starts_with("│path"))
            .filter(|r| !r.trim_matches(['│', ' ']).is_empty())
            .collect();
        assert!(listed.len() >= 8, "{w}: {shown:#?}");
        for r in listed {
            let cell = r.trim_start_matches('│');
            assert!(
                VERSIONS.iter().any(|v| cell.starts_with(&format!("{v}/"))),
                "{w}: {r}"
            );
        }
    }
}
