use std::sync::Arc;

use ratatui::crossterm::event::{
    Event, KeyCode, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};

use super::fixture::{self, V1_INSTALL, V1_TEXT, V2_INSTALL};
use super::{app, engine, keys, press, press_with, with_keys};
use crate::app::{Input, Msg, Tab, update};
use crate::documents::DocList;
use crate::filter::Fuzzy;
use crate::keymap::Keymap;
use crate::layout;
use crate::origin::wrap;
use crate::tune::{FIELDS, Field, RunKind};
use lineage_config::{Config, KeysConfig};
use lineage_engine::{Command, Update};
use lineage_origin::{Eviction, Selector, TableSize};

fn paths(app: &crate::App) -> Vec<String> {
    (0..app.docs.len())
        .map(|i| app.docs.row(i).path.to_string())
        .collect()
}

fn click(app: &mut crate::App, column: u16, row: u16) -> Vec<Command> {
    update(
        app,
        Msg::Input(Event::Mouse(MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column,
            row,
            modifiers: KeyModifiers::NONE,
        })),
    )
}

/// A click on a tab's label selects it at every width: at 60 columns the
/// labels sit closer, and the click follows them.
#[test]
fn a_click_on_a_tab_label_follows_the_labels_width() {
    for (w, h, events_at) in [(60, 20, 51), (80, 24, 58)] {
        let mut a = app(w, h);
        click(&mut a, events_at, 1);
        assert_eq!(a.tab, Tab::Events, "{w}");
        click(&mut a, 3, 1);
        assert_eq!(a.tab, Tab::Documents, "{w}");
    }
}

#[test]
fn the_filter_narrows_rows_as_typed_and_esc_clears_it() {
    let mut a = app(80, 24);
    assert_eq!(a.docs.len(), 29);
    keys(&mut a, "/inst");
    assert!(matches!(a.input, Some(Input::Filter(_))));
    assert_eq!(
        paths(&a),
        [
            "v1/installation.md",
            "v2/installation.md",
            "v3/installation.md"
        ]
    );
    // Narrowed from the previous rows, it equals filtering from scratch.
    press(&mut a, KeyCode::Backspace);
    press(&mut a, KeyCode::Backspace);
    keys(&mut a, "g");
    let mut fresh = DocList::new(Box::new(Fuzzy::default()));
    fresh.set_docs(a.snapshot.as_ref().unwrap().documents.clone(), 10);
    fresh.set_filter("ing", 10);
    let expected: Vec<String> = (0..fresh.len())
        .map(|i| fresh.row(i).path.to_string())
        .collect();
    assert_eq!(paths(&a), expected);
    assert!(expected.len() > 3 && expected.len() < 29, "{expected:?}");
    // Enter keeps the filter; back clears it.
    press(&mut a, KeyCode::Enter);
    assert_eq!(a.input, None);
    assert_eq!(a.docs.filter(), "ing");
    press(&mut a, KeyCode::Esc);
    assert_eq!(a.docs.len(), 29);
    // `/` again starts a new filter, not the old one to append to.
    keys(&mut a, "/inst");
    press(&mut a, KeyCode::Enter);
    keys(&mut a, "/");
    assert_eq!(a.input, Some(Input::Filter(String::new())));
    assert_eq!((a.docs.filter(), a.docs.len()), ("", 29));
    keys(&mut a, "faq");
    assert_eq!(paths(&a), ["z-support/faq.md"]);
}

#[test]
fn sort_keys_order_the_rows() {
    let mut a = app(80, 24);
    let fresh = |a: &crate::App| -> Vec<f64> {
        (0..a.docs.len())
            .map(|i| a.docs.row(i).fresh_percent)
            .collect()
    };
    assert!(paths(&a).is_sorted());
    keys(&mut a, "s");
    let f = fresh(&a);
    assert!(
        f.windows(2).all(|w| w[0] >= w[1]),
        "fresh % descending: {f:?}"
    );
    keys(&mut a, "s");
    let f = fresh(&a);
    assert!(f.windows(2).all(|w| w[0] <= w[1]), "copied % first: {f:?}");
    keys(&mut a, "S");
    assert!(fresh(&a).windows(2).all(|w| w[0] >= w[1]), "reversed");
    // By the shares against the basis, most first, those not known last.
    for (key, share) in [
        (
            "changed %",
            lineage_engine::PageChange::changed_percent as fn(&_) -> _,
        ),
        ("removed %", lineage_engine::PageChange::removed_percent),
    ] {
        keys(&mut a, "s");
        assert_eq!(a.docs.sort().0.label(), key);
        let v: Vec<Option<f64>> = (0..a.docs.len())
            .map(|i| a.docs.shares.get(a.docs.row(i).id).and_then(share))
            .collect();
        let known = v.iter().take_while(|x| x.is_some()).count();
        assert!(
            known > 10 && v[known..].iter().all(Option::is_none),
            "{key}: {v:?}"
        );
        let v: Vec<f64> = v.into_iter().flatten().collect();
        assert!(
            v.windows(2).all(|w| w[0] >= w[1]),
            "{key} descending: {v:?}"
        );
    }
    keys(&mut a, "s");
    // By modification time, newest first (the fixture's last id is newest).
    assert_eq!(&*a.docs.row(0).path, "z-support/faq.md");
    assert_eq!(&*a.docs.row(28).path, "v1/alerts.md");
}

/// A filter's bounds on shares keep the rows within them, beside its words;
/// the basis key measures against the other basis, drops the shares of the
/// last one, asks the engine and saves it for the folder.
#[test]
fn a_filter_bounds_the_shares_and_the_basis_key_asks_again() {
    let mut a = app(120, 40);
    let h = a.docs_height();
    let shown =
        |a: &crate::App| -> Vec<u32> { (0..a.docs.len()).map(|i| a.docs.row(i).id).collect() };
    let changed = |a: &crate::App, id| a.docs.shares.changed(id);
    a.docs.set_filter("changed>20 removed<=11", h);
    let got = shown(&a);
    let want: Vec<u32> = (0..29)
        .filter(|&id| {
            changed(&a, id).is_some_and(|c| c > 20.0)
                && a.docs.shares.removed(id).is_some_and(|r| r <= 11.0)
        })
        .collect();
    assert!(!want.is_empty() && want.len() < 20, "{want:?}");
    let mut sorted = got.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, want, "in path order: {got:?}");
    assert!(!a.docs.ranked(), "no words: the order stays");
    // Words and a bound: the words rank, the bound keeps.
    a.docs.set_filter("v3 changed>=30", h);
    let got = shown(&a);
    assert!(!got.is_empty());
    for id in &got {
        assert!(fixture::PATHS[*id as usize].starts_with("v3/"));
        assert!(changed(&a, *id).unwrap() >= 30.0);
    }
    // A wider bound after a narrower one finds rows the narrower left out.
    a.docs.set_filter("changed<1", h);
    let few = a.docs.len();
    a.docs.set_filter("changed<10", h);
    assert!(a.docs.len() > few, "{few} then {}", a.docs.len());
    // Not a bound: a path's word.
    a.docs.set_filter("changed>x", h);
    assert_eq!(a.docs.len(), 0);
    a.docs.set_filter("", h);
    let asked = keys(&mut a, "b");
    assert_eq!(
        asked,
        [Command::Shares {
            basis: lineage_config::Basis::Folder
        }]
    );
    assert_eq!(a.docs.shares.basis, lineage_config::Basis::Folder);
    assert!(
        a.docs.shares.get(fixture::V2_INSTALL).is_none(),
        "the last basis's shares go"
    );
    assert!(matches!(
        a.effects.last(),
        Some(crate::effects::Effect::SaveBasis(
            lineage_config::Basis::Folder
        ))
    ));
    // An update of the other basis, late, is not taken.
    engine(&mut a, Update::Shares(Arc::new(fixture::shares())));
    assert!(a.docs.shares.get(fixture::V2_INSTALL).is_none());
    // `b` goes on to the last release, then back round to the folder.
    for next in [
        lineage_config::Basis::Release,
        lineage_config::Basis::Predecessor,
        lineage_config::Basis::Folder,
    ] {
        assert_eq!(keys(&mut a, "b"), [Command::Shares { basis: next }]);
        assert_eq!(a.docs.shares.basis, next);
    }
    // The diff asks against the basis shown.
    a.origin.open(fixture::V2_INSTALL);
    a.tab = crate::app::Tab::Origin;
    engine(
        &mut a,
        Update::Origin(Arc::new(fixture::origin_view(false))),
    );
    let asked = keys(&mut a, "d");
    assert_eq!(
        asked,
        [Command::Diff {
            id: fixture::V2_INSTALL,
            basis: lineage_config::Basis::Folder
        }]
    );
}

#[test]
fn a_new_order_starts_at_its_top() {
    let mut a = app(80, 24);
    // Far enough down that the list has scrolled.
    for _ in 0..25 {
        press(&mut a, KeyCode::Down);
    }
    assert!(a.docs.cursor.offset > 0);
    keys(&mut a, "s");
    assert_eq!((a.docs.cursor.selected, a.docs.cursor.offset), (0, 0));
    for _ in 0..25 {
        press(&mut a, KeyCode::Down);
    }
    keys(&mut a, "S");
    assert_eq!((a.docs.cursor.selected, a.docs.cursor.offset), (0, 0));
}

#[test]
fn tabs_switch_by_key_number_and_click() {
    let mut a = app(80, 24);
    assert_eq!(a.tab, Tab::Documents);
    press(&mut a, KeyCode::Tab);
    assert_eq!(a.tab, Tab::Origin);
    keys(&mut a, "3");
    assert_eq!(a.tab, Tab::Clusters);
    press_with(&mut a, KeyCode::BackTab, KeyModifiers::SHIFT);
    assert_eq!(a.tab, Tab::Origin);
    press_with(&mut a, KeyCode::BackTab, KeyModifiers::SHIFT);
    press_with(&mut a, KeyCode::BackTab, KeyModifiers::SHIFT);
    assert_eq!(a.tab, Tab::Events);
    // The tab bar is the second line: " 1 Documents  2 Origin  3 Clusters …"
    let tabs_row = layout::screen(a.size).tabs.y;
    click(&mut a, 16, tabs_row);
    assert_eq!(a.tab, Tab::Origin);
    click(&mut a, 2, tabs_row);
    assert_eq!(a.tab, Tab::Documents);
}

#[test]
fn clicks_select_rows_and_the_wheel_moves() {
    let mut a = app(80, 24);
    let (_, rows) = layout::table_rows(layout::screen(a.size).body);
    click(&mut a, 10, rows.y + 4);
    assert_eq!(&*a.docs.selected().unwrap().path, fixture::PATHS[4]);
    update(
        &mut a,
        Msg::Input(Event::Mouse(MouseEvent {
            kind: MouseEventKind::ScrollDown,
            column: 10,
            row: rows.y,
            modifiers: KeyModifiers::NONE,
        })),
    );
    assert_eq!(a.docs.cursor.selected, 7);
}

#[test]
fn enter_on_a_document_asks_for_its_origins() {
    let mut a = app(80, 24);
    press(&mut a, KeyCode::Down);
    let out = press(&mut a, KeyCode::Enter);
    assert_eq!(
        out,
        [Command::Origin {
            id: 1,
            exact: false
        }]
    );
    assert_eq!(a.tab, Tab::Origin);
}

/// Down from the top of Documents to v2/installation.md.
fn select_v2(a: &mut crate::App) {
    let v2 = fixture::PATHS
        .iter()
        .position(|p| *p == "v2/installation.md")
        .unwrap();
    for _ in 0..v2 {
        press(a, KeyCode::Down);
    }
}

/// Open v2/installation.md in the Origin pane.
fn open_v2(a: &mut crate::App) {
    select_v2(a);
    assert_eq!(
        press(a, KeyCode::Enter),
        [Command::Origin {
            id: V2_INSTALL,
            exact: false
        }]
    );
    engine(a, Update::Origin(Arc::new(fixture::origin_view(false))));
    assert_eq!(a.origin.id(), Some(V2_INSTALL));
}

#[test]
fn enter_on_a_copied_block_jumps_to_its_passage_in_the_origin() {
    let mut a = app(80, 24);
    open_v2(&mut a);
    keys(&mut a, "n");
    assert_eq!(a.origin.block, Some(0));
    keys(&mut a, "n");
    assert_eq!(a.origin.block, Some(2), "the fresh run is skipped");
    keys(&mut a, "N");
    keys(&mut a, "nn");
    assert_eq!(a.origin.block, Some(3));
    let view = fixture::origin_view(false);
    let run = view.runs[3];
    let target = view.targets[3].unwrap();
    assert_eq!(
        press(&mut a, KeyCode::Enter),
        [Command::Origin {
            id: V1_INSTALL,
            exact: false
        }]
    );
    // An answer for another document (a late one) changes nothing.
    engine(
        &mut a,
        Update::Origin(Arc::new(fixture::origin_view(false))),
    );
    assert_eq!(a.origin.mark, None);
    engine(&mut a, Update::Origin(Arc::new(fixture::v1_view())));
    assert_eq!(a.origin.id(), Some(V1_INSTALL));
    let len = run.end - run.start;
    assert_eq!(a.origin.mark, Some(target.token..target.token + len));
    // Scrolled so the passage's first token is on the third visible line.
    let width = layout::inner(layout::origin(layout::screen(a.size).body).0).width;
    let lines = wrap(V1_TEXT, width as usize);
    let byte = a.origin.view.as_ref().unwrap().spans[target.token as usize].0 as usize;
    let line = lines
        .iter()
        .position(|l| l.start <= byte && byte <= l.end)
        .unwrap();
    assert!(line > 2, "the passage is not at the top: {line}");
    assert_eq!(a.origin.scroll, line - 2);
    // Back returns to the copy, where it was.
    let scroll_before = {
        let mut b = app(80, 24);
        open_v2(&mut b);
        keys(&mut b, "nnnn");
        b.origin.scroll
    };
    assert_eq!(
        press(&mut a, KeyCode::Esc),
        [Command::Origin {
            id: V2_INSTALL,
            exact: false
        }]
    );
    engine(
        &mut a,
        Update::Origin(Arc::new(fixture::origin_view(false))),
    );
    assert_eq!(a.origin.scroll, scroll_before);
    assert!(scroll_before > 0);
    // With the block left selected: `n` goes on after it, not from the top.
    assert_eq!(a.origin.block, Some(3));
    let next = (4..view.runs.len()).find(|&i| view.runs[i].origin.is_some());
    keys(&mut a, "n");
    assert_eq!(a.origin.block, next.or(Some(3)), "{:?}", view.runs);
}

#[test]
fn a_click_selects_the_block_under_it() {
    let mut a = app(80, 24);
    open_v2(&mut a);
    let text = layout::inner(layout::origin(layout::screen(a.size).body).0);
    click(&mut a, text.x + 2, text.y);
    assert_eq!(a.origin.block, Some(0));
    assert_eq!(
        press(&mut a, KeyCode::Enter),
        [Command::Origin {
            id: V1_INSTALL,
            exact: false
        }]
    );
}

#[test]
fn exact_toggles_and_drops_the_other_kind_of_answer() {
    let mut a = app(80, 24);
    open_v2(&mut a);
    // An answer marked so a stale one would show.
    let stale = |exact| {
        let mut v = fixture::origin_view(exact);
        v.path = "STALE".into();
        Update::Origin(Arc::new(v))
    };
    assert_eq!(
        keys(&mut a, "x"),
        [Command::Origin {
            id: V2_INSTALL,
            exact: true
        }]
    );
    engine(&mut a, stale(false));
    assert_eq!(a.origin.view.as_ref().unwrap().path, "v2/installation.md");
    engine(&mut a, Update::Origin(Arc::new(fixture::origin_view(true))));
    assert!(a.origin.view.as_ref().unwrap().exact);
    assert_eq!(
        keys(&mut a, "x"),
        [Command::Origin {
            id: V2_INSTALL,
            exact: false
        }]
    );
    engine(&mut a, stale(true));
    assert_eq!(a.origin.view.as_ref().unwrap().path, "v2/installation.md");
    engine(
        &mut a,
        Update::Origin(Arc::new(fixture::origin_view(false))),
    );
    assert!(!a.origin.view.as_ref().unwrap().exact);
}

#[test]
fn apply_runs_live_beside_tuned_and_stale_generations_are_dropped() {
    let mut a = app(80, 24);
    keys(&mut a, "5");
    assert_eq!(a.tab, Tab::Tune);
    let live = a.snapshot.as_ref().unwrap().params;
    // eviction: lucky → bottom-k
    for _ in 0..3 {
        press(&mut a, KeyCode::Down);
    }
    press(&mut a, KeyCode::Right);
    let tuned = lineage_origin::Params {
        eviction: Eviction::BottomK,
        ..live
    };
    assert_eq!(
        keys(&mut a, "a"),
        [Command::Shadow {
            generation: 1,
            runs: vec![live, tuned]
        }]
    );
    assert_eq!(keys(&mut a, "a").len(), 1);
    assert_eq!(a.tune.generation, 2);
    engine(
        &mut a,
        Update::Shadow(fixture::shadow_compare(1, live, tuned)),
    );
    assert_eq!(a.tune.update, None, "generation 1 is stale");
    engine(
        &mut a,
        Update::Shadow(fixture::shadow_compare(2, live, tuned)),
    );
    assert_eq!(a.tune.update.as_ref().unwrap().results[1].params, tuned);
    assert!(!a.tune.running());
}

/// Esc stops a sweep under way: the engine is told, later updates of it
/// are dropped, and the pane says where it stopped.
#[test]
fn esc_stops_a_running_sweep() {
    let mut a = app(80, 24);
    keys(&mut a, "5");
    let out = keys(&mut a, "w");
    let Some(Command::Shadow { generation, .. }) = out.first().cloned() else {
        panic!("a sweep asked: {out:?}");
    };
    let progress = |done, finished| lineage_engine::ShadowUpdate {
        generation,
        done,
        total: 40,
        results: Vec::new(),
        finished,
        error: None,
    };
    engine(&mut a, Update::Shadow(progress(12, false)));
    assert!(a.tune.running());
    assert_eq!(
        press(&mut a, KeyCode::Esc),
        [Command::Cancel { generation }]
    );
    assert!(!a.tune.running());
    assert_eq!(a.tune.message.as_deref(), Some("sweep stopped at 12/40"));
    // A late update of the stopped run changes nothing; esc again neither.
    engine(&mut a, Update::Shadow(progress(13, false)));
    assert!(!a.tune.running() && a.tune.update.is_none());
    assert_eq!(press(&mut a, KeyCode::Esc), []);
}

#[test]
fn sweep_asks_the_paper_sizes_for_two_selectors() {
    let mut a = app(80, 24);
    keys(&mut a, "5");
    let out = keys(&mut a, "w");
    let [
        Command::Shadow {
            generation: 1,
            runs,
        },
    ] = &out[..]
    else {
        panic!("{out:?}")
    };
    let sizes = lineage_origin::table::paper_sizes(fixture::snapshot().shingles);
    assert_eq!(runs.len(), 16);
    assert!(
        runs[..8]
            .iter()
            .zip(&sizes)
            .all(|(r, s)| r.selector == Selector::NHs && r.table_size == *s)
    );
    assert!(runs[8..].iter().all(|r| r.selector == Selector::Every(4)));
    assert!(matches!(a.tune.kind, Some(RunKind::Sweep { .. })));
}

/// With `all` in the form (and alignment on), the sweep runs it aligned
/// and unaligned beside the live selector: three series of the paper's sizes.
#[test]
fn sweep_of_all_shows_it_aligned_and_unaligned() {
    use crate::tune::Series;
    let mut a = app(80, 24);
    keys(&mut a, "5");
    let at = FIELDS.iter().position(|&f| f == Field::Selector).unwrap();
    a.tune.values[at] = "all".into();
    let out = keys(&mut a, "w");
    let [Command::Shadow { runs, .. }] = &out[..] else {
        panic!("{out:?}")
    };
    let n = lineage_origin::table::paper_sizes(fixture::snapshot().shingles).len();
    assert_eq!(runs.len(), 3 * n);
    let kinds: Vec<(Selector, bool)> = runs.iter().map(|r| (r.selector, r.align)).collect();
    assert!(kinds[..n].iter().all(|&k| k == (Selector::All, true)));
    assert!(kinds[n..2 * n].iter().all(|&k| k == (Selector::All, false)));
    assert!(kinds[2 * n..].iter().all(|&(s, _)| s == Selector::NHs));
    let Some(RunKind::Sweep { series, .. }) = &a.tune.kind else {
        panic!("{:?}", a.tune.kind)
    };
    let names: Vec<String> = series.iter().map(Series::to_string).collect();
    assert_eq!(names, ["all", "all unaligned", "nhs"]);
}

#[test]
fn a_sweeps_table_row_goes_into_the_form() {
    let mut a = app(80, 24);
    keys(&mut a, "5w");
    let s = fixture::snapshot();
    engine(
        &mut a,
        Update::Shadow(fixture::shadow_sweep(1, s.params, s.shingles)),
    );
    let sizes = lineage_origin::table::paper_sizes(s.shingles);
    // Page keys move the form's focus until the table is shown.
    press(&mut a, KeyCode::PageDown);
    assert_eq!((a.tune.point, a.tune.focus), (0, FIELDS.len() - 1));
    // The form's selector elsewhere first, so taking the point must set it.
    keys(&mut a, "gjl");
    assert_eq!(a.tune.value(crate::tune::Field::Selector), "hs");
    keys(&mut a, "gt");
    assert!(a.tune.sweep_table);
    press(&mut a, KeyCode::PageDown);
    press(&mut a, KeyCode::PageDown);
    assert_eq!((a.tune.point, a.tune.focus), (2, 0), "the form stays put");
    keys(&mut a, "T");
    // NHs scores best there (the fixture's overall is higher for it).
    assert_eq!(
        a.tune.value(crate::tune::Field::TableSize),
        sizes[2].to_string()
    );
    assert_eq!(a.tune.value(crate::tune::Field::Selector), "nhs");
    assert!(a.tune.message.as_ref().unwrap().contains("in the form"));
    for _ in 0..20 {
        press(&mut a, KeyCode::PageDown);
    }
    assert_eq!(a.tune.point, sizes.len() - 1, "clamped to the last size");
    keys(&mut a, "t");
    assert!(!a.tune.sweep_table, "t goes back to the chart");
}

/// The Tune form with `size` typed into its table size.
fn tune_with_size(size: &str) -> crate::App {
    let mut a = app(80, 24);
    keys(&mut a, "5");
    press(&mut a, KeyCode::Enter);
    for _ in 0..10 {
        press(&mut a, KeyCode::Backspace);
    }
    keys(&mut a, size);
    press(&mut a, KeyCode::Enter);
    a
}

#[test]
fn adopt_asks_then_sends_the_typed_settings_and_not_invalid_ones() {
    let mut a = tune_with_size("1MiB");
    let live = a.snapshot.as_ref().unwrap().params;
    let tuned = lineage_origin::Params {
        table_size: TableSize::Bytes(1 << 20),
        ..live
    };
    // A asks; esc (or n) leaves everything as it was.
    assert_eq!(keys(&mut a, "A"), []);
    assert_eq!(a.tune.confirm, Some(tuned));
    assert_eq!(press(&mut a, KeyCode::Esc), []);
    assert_eq!((a.tune.confirm, a.tab), (None, Tab::Tune));
    // Keys other than the answers do nothing while it asks.
    keys(&mut a, "A");
    assert_eq!(keys(&mut a, "jq"), []);
    assert!(!a.quit && a.tune.confirm.is_some());
    assert_eq!(press(&mut a, KeyCode::Enter), [Command::Adopt(tuned)]);
    assert!(a.tune.save.is_none(), "enter adopts without saving");
    assert!(a.tune.message.as_ref().unwrap().contains("this session"));
    press(&mut a, KeyCode::Enter);
    press(&mut a, KeyCode::End);
    keys(&mut a, "X");
    press(&mut a, KeyCode::Enter);
    assert!(
        a.tune.error.as_ref().unwrap().contains("size"),
        "{:?}",
        a.tune.error
    );
    assert_eq!(keys(&mut a, "A"), []);
    assert_eq!(a.tune.confirm, None, "invalid settings are not asked about");
    // Esc while typing leaves the field as it was (end: the reopened
    // value kept, not replaced).
    press(&mut a, KeyCode::Enter);
    press(&mut a, KeyCode::End);
    keys(&mut a, "zz");
    press(&mut a, KeyCode::Esc);
    assert_eq!(a.tune.values[0], "1MiBX");
}

#[test]
fn clusters_compare_a_pair_and_close_it() {
    let mut a = app(80, 24);
    keys(&mut a, "3");
    press(&mut a, KeyCode::Enter);
    assert!(a.clusters.on_pairs);
    press(&mut a, KeyCode::Down);
    assert_eq!(
        press(&mut a, KeyCode::Enter),
        [Command::Compare {
            a: V2_INSTALL,
            b: 22
        }]
    );
    // An answer to another question is dropped.
    engine(&mut a, Update::Compare(Arc::new(fixture::compare_view())));
    assert!(a.clusters.compare.is_none());
    press(&mut a, KeyCode::Up);
    assert_eq!(
        press(&mut a, KeyCode::Enter),
        [Command::Compare {
            a: V1_INSTALL,
            b: V2_INSTALL
        }]
    );
    engine(&mut a, Update::Compare(Arc::new(fixture::compare_view())));
    assert!(a.clusters.compare.is_some());
    press(&mut a, KeyCode::PageDown);
    assert!(a.clusters.scroll[0] > 0 && a.clusters.scroll[0] == a.clusters.scroll[1]);
    press(&mut a, KeyCode::Home);
    press(&mut a, KeyCode::Esc);
    assert!(a.clusters.compare.is_none());
}

/// The Clusters pane with the fixture's comparison (its first pair) open.
fn comparing() -> crate::App {
    let mut a = app(80, 24);
    keys(&mut a, "3");
    press(&mut a, KeyCode::Enter);
    press(&mut a, KeyCode::Enter);
    engine(&mut a, Update::Compare(Arc::new(fixture::compare_view())));
    a
}

/// Every move scrolls an open comparison, never past the last page of a
/// side (paging past the end blanked both sides, and the lines moved the
/// hidden pairs list).
#[test]
fn a_comparison_takes_every_move_and_stops_at_its_last_page() {
    let mut a = comparing();
    assert!(a.clusters.compare.is_some());
    let pair = a.clusters.pairs.selected;
    let c = crate::layout::clusters(a.body());
    let page = crate::layout::inner(c.left).height as usize;
    let last = a
        .clusters
        .lines
        .clone()
        .map(|l| l.len().saturating_sub(page));
    assert!(last[0] > 0, "the fixture's sides are longer than a page");
    for _ in 0..50 {
        press(&mut a, KeyCode::PageDown);
    }
    assert_eq!(a.clusters.scroll, last);
    press(&mut a, KeyCode::PageUp);
    assert_eq!(a.clusters.scroll, last.map(|l| l.saturating_sub(page)));
    keys(&mut a, "g");
    assert_eq!(a.clusters.scroll, [0, 0]);
    keys(&mut a, "j");
    assert_eq!(a.clusters.scroll, [1, 1]);
    keys(&mut a, "G");
    assert_eq!(a.clusters.scroll, last);
    assert_eq!(
        a.clusters.pairs.selected, pair,
        "the pairs list did not move"
    );
}

#[test]
fn events_open_the_origins_of_a_version() {
    let mut a = app(80, 24);
    keys(&mut a, "6");
    assert_eq!(
        press(&mut a, KeyCode::Enter),
        [Command::Origin {
            id: V2_INSTALL,
            exact: false
        }]
    );
    assert_eq!(a.tab, Tab::Origin);
}

#[test]
fn any_other_event_opens_in_full_and_closes() {
    let mut a = app(80, 24);
    keys(&mut a, "6");
    // The second row is the notice.
    press(&mut a, KeyCode::Down);
    assert!(press(&mut a, KeyCode::Enter).is_empty());
    assert_eq!(
        a.event_detail.as_deref(),
        Some("notice: table snapshot written")
    );
    assert_eq!(a.tab, Tab::Events);
    keys(&mut a, "3");
    assert_eq!(a.tab, Tab::Events, "keys go to the open event");
    press(&mut a, KeyCode::Esc);
    assert!(a.event_detail.is_none());
}

#[test]
fn rebound_keys_from_the_config_file() {
    let cfg =
        Config::from_toml("[keys]\nquit = \"ctrl-q\"\nnext_tab = \"ctrl-n tab\"\nfilter = \"f\"\n")
            .unwrap();
    let mut a = with_keys(Keymap::from_config(&cfg.keys).unwrap(), 80, 24);
    keys(&mut a, "q");
    assert!(!a.quit);
    press_with(&mut a, KeyCode::Char('n'), KeyModifiers::CONTROL);
    assert_eq!(a.tab, Tab::Origin);
    keys(&mut a, "f");
    assert!(matches!(a.input, Some(Input::Filter(_))));
    press(&mut a, KeyCode::Esc);
    keys(&mut a, "/");
    assert_eq!(a.input, None, "'/' is unbound now");
    press_with(&mut a, KeyCode::Char('q'), KeyModifiers::CONTROL);
    assert!(a.quit);
    assert!(
        Keymap::from_config(&KeysConfig {
            sort: "q".into(),
            ..KeysConfig::default()
        })
        .is_err()
    );
}

#[test]
fn help_opens_and_closes_and_ctrl_c_always_quits() {
    let mut a = app(80, 24);
    keys(&mut a, "?");
    assert!(a.help);
    keys(&mut a, "3");
    assert_eq!(a.tab, Tab::Documents, "keys go to the help while it shows");
    press(&mut a, KeyCode::Esc);
    assert!(!a.help);
    // It scrolls, and not past its last page: one key up from the end moves.
    keys(&mut a, "?");
    press(&mut a, KeyCode::End);
    let last = a.help_scroll;
    assert!(last > 0 && last == crate::help::max_scroll(&a, a.size));
    press(&mut a, KeyCode::Up);
    assert_eq!(a.help_scroll, last - 1);
    press(&mut a, KeyCode::Home);
    assert_eq!(a.help_scroll, 0);
    keys(&mut a, "?");
    keys(&mut a, "/ab");
    press_with(&mut a, KeyCode::Char('c'), KeyModifiers::CONTROL);
    assert!(a.quit);
}

#[test]
fn a_resize_re_wraps_the_text_keeping_its_place() {
    let mut a = app(80, 24);
    open_v2(&mut a);
    press(&mut a, KeyCode::PageDown);
    let top = a.origin.lines[a.origin.scroll].start;
    update(&mut a, Msg::Input(Event::Resize(120, 40)));
    let text = layout::inner(layout::origin(layout::screen(a.size).body).0);
    assert_eq!(a.origin.width, text.width);
    let line = &a.origin.lines[a.origin.scroll];
    assert!(line.start <= top && top <= line.end);
}

#[test]
fn keys_typed_in_one_batch_filter_once_and_later_keys_see_the_result() {
    use ratatui::crossterm::event::KeyEvent;
    let mut a = app(80, 24);
    let k = |c| Msg::Input(Event::Key(KeyEvent::new(c, KeyModifiers::NONE)));
    let batch = vec![
        k(KeyCode::Char('/')),
        k(KeyCode::Char('i')),
        k(KeyCode::Char('n')),
        k(KeyCode::Char('s')),
        k(KeyCode::Char('t')),
        k(KeyCode::Enter),
        k(KeyCode::Down),
        k(KeyCode::Enter),
    ];
    let out = crate::update_all(&mut a, batch);
    assert_eq!(a.docs.filter(), "inst");
    // The second row of the filtered list: v2/installation.md.
    assert_eq!(
        out,
        [Command::Origin {
            id: V2_INSTALL,
            exact: false
        }]
    );
}

#[test]
fn a_table_larger_than_memory_is_the_tune_forms_error() {
    let mut a = app(120, 40);
    let live = a.snapshot.as_ref().unwrap().params;
    a.tune.values[0] = "1000GB".into();
    let err = a.tune.tuned(&live).unwrap_err();
    assert!(err.contains("more than this machine's memory"), "{err}");
    a.tune.values[0] = "1MiB".into();
    assert!(a.tune.tuned(&live).is_ok());
}

/// C lists who copies the page shown; enter opens a copy on its first
/// passage from the page, marked; back returns to the page.
#[test]
fn copies_of_the_page_shown_open_at_their_passage_and_back_returns() {
    use super::fixture::{FAQ, copies_view, origin_view, v1_view};
    let mut a = app(80, 24);
    a.tab = Tab::Origin;
    a.origin.open(V1_INSTALL);
    engine(&mut a, Update::Origin(Arc::new(v1_view())));
    assert_eq!(keys(&mut a, "C"), [Command::Copies { id: V1_INSTALL }]);
    // An answer about another page is not this one.
    let mut stale = copies_view();
    stale.id = FAQ;
    engine(&mut a, Update::Copies(Arc::new(stale)));
    assert!(a.copies.as_ref().is_some_and(|c| c.view.is_none()));
    engine(&mut a, Update::Copies(Arc::new(copies_view())));
    // By share: v2's page (most of it from here) before the FAQ, though
    // the FAQ is newer.
    let ids = |a: &crate::App| -> Vec<u32> {
        let v = a.copies.as_ref().and_then(|c| c.view.clone()).unwrap();
        v.copies.iter().map(|c| c.id).collect()
    };
    assert_eq!(ids(&a), [V2_INSTALL, FAQ]);
    // s: newest first, the selection kept on v2's page; s again by share.
    assert!(keys(&mut a, "s").is_empty());
    assert_eq!(ids(&a), [FAQ, V2_INSTALL]);
    assert_eq!(a.copies.as_ref().unwrap().cursor.selected, 1);
    keys(&mut a, "s");
    assert_eq!(ids(&a), [V2_INSTALL, FAQ]);
    assert_eq!(a.copies.as_ref().unwrap().cursor.selected, 0);
    // Newest first again, the FAQ selected: down to v2's page, open it.
    keys(&mut a, "sk");
    press(&mut a, KeyCode::Down);
    assert_eq!(
        press(&mut a, KeyCode::Enter),
        [Command::Origin {
            id: V2_INSTALL,
            exact: false
        }]
    );
    assert!(a.copies.is_none());
    engine(&mut a, Update::Origin(Arc::new(origin_view(false))));
    let first = copies_view().copies[1].passages[0];
    assert_eq!(a.origin.mark, Some(first.start..first.end));
    assert_eq!(
        press(&mut a, KeyCode::Esc),
        [Command::Origin {
            id: V1_INSTALL,
            exact: false
        }]
    );
    // Esc or C again closes the list; q quits from it.
    keys(&mut a, "C");
    press(&mut a, KeyCode::Esc);
    assert!(a.copies.is_none());
    keys(&mut a, "CC");
    assert!(a.copies.is_none());
    keys(&mut a, "Cq");
    assert!(a.quit);
}

/// P lists the pages that carry the text of the page shown (whoever had
/// it first); enter opens one on its first shared passage, marked; back
/// returns to the page.
#[test]
fn pages_sharing_the_text_shown_open_at_their_passage_and_back_returns() {
    use super::fixture::{FAQ, origin_view, shared_view, v1_view};
    let mut a = app(80, 24);
    // Not from another pane: the list is of the page Origin shows.
    assert!(keys(&mut a, "P").is_empty());
    assert!(a.shared.is_none());
    a.tab = Tab::Origin;
    a.origin.open(V1_INSTALL);
    engine(&mut a, Update::Origin(Arc::new(v1_view())));
    assert_eq!(keys(&mut a, "P"), [Command::Shared { id: V1_INSTALL }]);
    // An answer about another page is not this one.
    let mut stale = shared_view();
    stale.id = FAQ;
    engine(&mut a, Update::Shared(Arc::new(stale)));
    assert!(a.shared.as_ref().is_some_and(|s| s.view.is_none()));
    engine(&mut a, Update::Shared(Arc::new(shared_view())));
    assert!(a.shared.as_ref().is_some_and(|s| s.view.is_some()));
    // Down and up (the list moves), then open v2's page, the first.
    keys(&mut a, "jj");
    assert_eq!(a.shared.as_ref().unwrap().cursor.selected, 2);
    keys(&mut a, "g");
    assert_eq!(
        press(&mut a, KeyCode::Enter),
        [Command::Origin {
            id: V2_INSTALL,
            exact: false
        }]
    );
    assert!(a.shared.is_none());
    engine(&mut a, Update::Origin(Arc::new(origin_view(false))));
    let first = shared_view().shares[0].passages[0].there;
    assert_eq!(a.origin.mark, Some(first.0..first.1));
    assert_eq!(
        press(&mut a, KeyCode::Esc),
        [Command::Origin {
            id: V1_INSTALL,
            exact: false
        }]
    );
    engine(&mut a, Update::Origin(Arc::new(v1_view())));
    // Esc or P again closes the list; q quits from it.
    keys(&mut a, "P");
    press(&mut a, KeyCode::Esc);
    assert!(a.shared.is_none());
    keys(&mut a, "PP");
    assert!(a.shared.is_none());
    keys(&mut a, "Pq");
    assert!(a.quit);
}

#[test]
fn versions_open_an_earlier_one_or_compare_it_and_come_back() {
    use super::fixture::{VERSION_1, VERSION_3, versions_view};
    let mut a = app(80, 24);
    open_v2(&mut a);
    let compare = fixture::compare_view;
    engine(&mut a, Update::Origin(Arc::new(versions_view())));
    keys(&mut a, "v");
    assert_eq!(a.versions.map(|c| c.selected), Some(1), "on the one shown");
    // Up to version 1 and open it; back returns to version 2.
    press(&mut a, KeyCode::Up);
    assert_eq!(
        press(&mut a, KeyCode::Enter),
        [Command::Origin {
            id: VERSION_1,
            exact: false
        }]
    );
    assert!(a.versions.is_none());
    assert_eq!(a.origin.back.last().map(|b| b.0), Some(V2_INSTALL));
    // Enter on the version shown only closes the list.
    engine(&mut a, Update::Origin(Arc::new(versions_view())));
    a.origin.open(V2_INSTALL);
    engine(&mut a, Update::Origin(Arc::new(versions_view())));
    keys(&mut a, "v");
    assert!(press(&mut a, KeyCode::Enter).is_empty());
    // Version 3 beside the one shown, the older on the left; esc comes back.
    keys(&mut a, "vj");
    assert_eq!(
        keys(&mut a, "c"),
        [Command::Compare {
            a: V2_INSTALL.min(VERSION_3),
            b: V2_INSTALL.max(VERSION_3)
        }]
    );
    assert_eq!(a.tab, Tab::Clusters);
    let mut c = compare();
    (c.a.id, c.b.id) = (V2_INSTALL.min(VERSION_3), V2_INSTALL.max(VERSION_3));
    engine(&mut a, Update::Compare(Arc::new(c)));
    assert!(a.clusters.compare.is_some());
    press(&mut a, KeyCode::Esc);
    assert_eq!(a.tab, Tab::Origin, "back where the comparison was asked");
    assert!(a.clusters.compare.is_none());
    // A comparison asked in Clusters closes into Clusters.
    keys(&mut a, "v");
    press(&mut a, KeyCode::Esc);
    assert!(a.versions.is_none(), "esc closes the list");
}

#[test]
fn s_saves_what_was_changed_for_this_folder_and_a_failed_save_shows_what_to_paste() {
    let mut a = tune_with_size("12KiB");
    a.tune.config_file = Some("/home/ana/.config/lineage/config.toml".into());
    a.tune.folder = "/home/ana/docs".into();
    // The view started with a table size from a flag: changing only the
    // eviction saves only the eviction.
    let started = a.snapshot.as_ref().unwrap().params;
    a.tune.started = started;
    a.tune.flags = vec!["table_size"];
    a.tune.fill(&started);
    a.tune.values[Field::Eviction as usize] = "cc".into();
    keys(&mut a, "A");
    let out = keys(&mut a, "s");
    let Some(Command::Adopt(p)) = out.first().cloned() else {
        panic!("{out:?}")
    };
    assert_eq!(p.table_size, started.table_size);
    assert_eq!(
        a.tune.save,
        Some((p, vec!["eviction"])),
        "the UI loop saves it"
    );
    update(
        &mut a,
        Msg::Saved(Ok("/home/ana/dotfiles/lineage.toml".into())),
    );
    let m = a.tune.message.clone().unwrap();
    assert!(
        m.contains("saved eviction for /home/ana/docs in /home/ana/dotfiles/lineage.toml"),
        "{m}"
    );
    assert!(
        !m.contains("--table-size"),
        "the flag is not about what was saved: {m}"
    );
    assert!(a.tune.save.is_none() && a.event_detail.is_none());
    // The size changed too: saved, and the flag that outranks it named.
    a.tune.values[Field::TableSize as usize] = "12KiB".into();
    keys(&mut a, "A");
    keys(&mut a, "s");
    let Some((p, saved)) = a.tune.save.clone() else {
        panic!("nothing to save")
    };
    assert_eq!(saved, ["table_size", "eviction"]);
    assert_eq!(p.table_size, TableSize::Bytes(12 << 10));
    update(&mut a, Msg::Saved(Ok("/c.toml".into())));
    assert!(
        a.tune
            .message
            .as_ref()
            .unwrap()
            .contains("--table-size outranks")
    );
    // Not saved: why, and the lines to paste instead, opened in full.
    keys(&mut a, "A");
    keys(&mut a, "s");
    update(&mut a, Msg::Saved(Err("cannot write it: disk full".into())));
    assert!(
        a.tune
            .message
            .as_ref()
            .unwrap()
            .contains("not saved: cannot write it")
    );
    let detail = a.event_detail.clone().unwrap();
    assert!(detail.contains("[folders.\"/home/ana/docs\"]"), "{detail}");
    assert!(detail.contains("table_size = \"12KiB\""), "{detail}");
    assert!(
        !detail.contains("selector ="),
        "only what changed: {detail}"
    );
    // Back to the settings it started with: nothing to save.
    press(&mut a, KeyCode::Esc);
    assert!(a.event_detail.is_none());
    a.tune.fill(&started);
    keys(&mut a, "A");
    keys(&mut a, "s");
    assert!(a.tune.save.is_none());
    assert!(a.tune.message.as_ref().unwrap().contains("nothing to save"));
}

#[test]
fn a_page_shown_that_stops_being_live_is_asked_again() {
    let mut a = app(80, 24);
    open_v2(&mut a);
    a.origin.scroll_by(5, 10);
    // The same snapshot again: nothing to ask.
    let same = (**a.snapshot.as_ref().unwrap()).clone();
    assert_eq!(engine(&mut a, Update::Snapshot(Arc::new(same.clone()))), []);
    // v2/installation.md gone from the live documents: asked again.
    let mut s = same;
    s.documents = fixture::documents(
        s.documents
            .iter()
            .filter(|d| d.id != V2_INSTALL)
            .cloned()
            .collect(),
    );
    let out = engine(&mut a, Update::Snapshot(Arc::new(s.clone())));
    assert_eq!(
        out,
        [Command::Origin {
            id: V2_INSTALL,
            exact: false
        }]
    );
    // Its answer says deleted and keeps the place.
    let mut v = fixture::origin_view(false);
    v.status = lineage_engine::VersionStatus::Deleted;
    engine(&mut a, Update::Origin(Arc::new(v)));
    assert_eq!(a.origin.scroll, 5);
    // Once known not to be live, later snapshots ask nothing.
    assert_eq!(engine(&mut a, Update::Snapshot(Arc::new(s))), []);
}

#[test]
fn slash_in_origin_searches_its_text_and_steps_through_the_matches() {
    let mut a = app(80, 24);
    open_v2(&mut a);
    let h = a.origin_text().height as usize;
    // From the middle of the text: the first match at or after the top line.
    press(&mut a, KeyCode::PageDown);
    press(&mut a, KeyCode::PageDown);
    let top = a.origin.lines[a.origin.scroll].start;
    keys(&mut a, "/TideWater");
    assert_eq!(a.input, Some(Input::Search("TideWater".into())));
    assert_eq!(a.tab, Tab::Origin, "the pane stays");
    let text = fixture::V2_TEXT;
    let s = a.origin.search.clone().unwrap();
    let expected: Vec<usize> = text
        .to_ascii_lowercase()
        .match_indices("tidewater")
        .map(|m| m.0)
        .collect();
    assert_eq!(
        s.matches.iter().map(|m| m.start).collect::<Vec<_>>(),
        expected
    );
    assert!(
        s.matches
            .iter()
            .all(|m| text[m.clone()].eq_ignore_ascii_case("tidewater"))
    );
    let c = s.current.unwrap();
    assert!(s.matches[c].start >= top && (c == 0 || s.matches[c - 1].start < top));
    let in_view = |a: &crate::App| {
        let s = a.origin.search.as_ref().unwrap();
        let at = s.matches[s.current.unwrap()].start;
        let line = a.origin.lines.iter().position(|l| l.end >= at).unwrap();
        (a.origin.scroll..a.origin.scroll + h).contains(&line)
    };
    assert!(in_view(&a));
    // Enter ends typing, the matches stay; the match keys step and wrap.
    press(&mut a, KeyCode::Enter);
    assert_eq!(a.input, None);
    keys(&mut a, "]");
    assert_eq!(a.origin.search.as_ref().unwrap().current, Some(c + 1));
    assert!(in_view(&a));
    // Round the start to the last, and on round the end back.
    for _ in 0..=c + 1 {
        keys(&mut a, "[");
    }
    assert_eq!(
        a.origin.search.as_ref().unwrap().current,
        Some(expected.len() - 1)
    );
    assert!(in_view(&a));
    keys(&mut a, "]");
    assert_eq!(a.origin.search.as_ref().unwrap().current, Some(0));
    assert!(in_view(&a));
    // n still selects copied blocks.
    keys(&mut a, "n");
    assert!(a.origin.block.is_some());
    // Esc clears the search (and only that).
    press(&mut a, KeyCode::Esc);
    assert_eq!(a.origin.search, None);
    assert_eq!(a.origin.id(), Some(V2_INSTALL));
}

#[test]
fn passage_keys_bring_each_side_of_a_comparison_to_its_next_shared_passage() {
    let mut a = comparing();
    let v = a.clusters.compare.clone().unwrap();
    let c = layout::clusters(layout::screen(a.size).body);
    let (l, r) = (layout::inner(c.left), layout::inner(c.right));
    // Where the second passage (from token 48) starts on each side, as wrapped.
    let line_of = |side: &lineage_engine::Side, width: u16| {
        let text = side.text.as_ref().unwrap();
        let byte = side.spans[48].0 as usize;
        wrap(text, width as usize)
            .iter()
            .position(|line| line.end >= byte)
            .unwrap()
    };
    let second = [line_of(&v.a, l.width), line_of(&v.b, r.width)];
    assert!(second[0] > 0 && second[1] > 0);
    keys(&mut a, "n");
    assert_eq!(a.clusters.scroll, second);
    // No passage after the last: it stays; back to the first, at the top.
    keys(&mut a, "n");
    assert_eq!(a.clusters.scroll, second);
    keys(&mut a, "N");
    assert_eq!(a.clusters.scroll, [0, 0]);
    // The wrapped sides are kept, and wrapped again for a new size.
    let text = v.a.text.as_ref().unwrap();
    assert_eq!(a.clusters.lines[0], wrap(text, l.width as usize));
    update(&mut a, Msg::Input(Event::Resize(120, 40)));
    let c = layout::clusters(layout::screen(a.size).body);
    let w = layout::inner(c.left).width;
    assert_ne!(w, l.width);
    assert_eq!(a.clusters.lines[0], wrap(text, w as usize));
}

#[test]
fn a_rescan_shows_as_asked_until_a_snapshot_without_indexing() {
    let mut a = app(80, 24);
    assert_eq!(keys(&mut a, "r"), [Command::Rescan]);
    let asked = a.snapshot.as_ref().unwrap().seq;
    assert_eq!(a.rescan, Some(asked));
    // Indexing under way: still asked.
    let mut s = fixture::snapshot();
    s.seq = asked + 1;
    engine(&mut a, Update::Snapshot(Arc::new(s.clone())));
    assert!(a.rescan.is_some());
    s.seq = asked + 2;
    s.progress = None;
    engine(&mut a, Update::Snapshot(Arc::new(s)));
    assert_eq!(a.rescan, None);
    // No answer at all (nothing new was found): the UI loop's quiet tick ends it.
    keys(&mut a, "r");
    update(&mut a, Msg::Tick);
    assert_eq!(a.rescan, None);
}

#[test]
fn y_copies_the_documents_full_path_through_the_terminal() {
    use crate::effects::Effect;
    let mut a = app(80, 24);
    let root = "/home/ana/tidewater-docs";
    press(&mut a, KeyCode::Down);
    let name = a.docs.selected().unwrap().path.clone();
    keys(&mut a, "y");
    let want = format!("{root}/{name}");
    assert_eq!(a.effects, [Effect::Copy(want.clone().into_bytes())]);
    assert_eq!(
        a.message.as_deref(),
        Some(format!("copied {want}").as_str())
    );
    // The message lasts until the next key.
    a.effects.clear();
    press(&mut a, KeyCode::Down);
    assert_eq!(a.message, None);
    // Origin: the document shown.
    press(&mut a, KeyCode::Home);
    open_v2(&mut a);
    keys(&mut a, "y");
    assert_eq!(
        a.effects,
        [Effect::Copy(
            format!("{root}/v2/installation.md").into_bytes()
        )]
    );
    // Clusters: one side of the pair, then the other.
    a.effects.clear();
    keys(&mut a, "3");
    press(&mut a, KeyCode::Enter);
    keys(&mut a, "yy");
    assert_eq!(
        a.effects,
        [
            Effect::Copy(format!("{root}/v1/installation.md").into_bytes()),
            Effect::Copy(format!("{root}/v2/installation.md").into_bytes()),
        ]
    );
    // Nothing to copy on the Table pane.
    a.effects.clear();
    keys(&mut a, "4y");
    assert!(a.effects.is_empty());
}

#[test]
fn e_asks_for_the_editor_at_the_files_line_of_the_block_or_the_top() {
    use crate::effects::Effect;
    let mut a = app(80, 24);
    a.editor = "code -w".into();
    let file = "/home/ana/tidewater-docs/v2/installation.md";
    open_v2(&mut a);
    let text = fixture::V2_TEXT;
    // The line of the file that holds `byte`, counted in the file's own lines.
    let line_of = |byte: usize| {
        let mut at = 0;
        for (n, l) in text.split_inclusive('\n').enumerate() {
            if byte < at + l.len() {
                return n + 1;
            }
            at += l.len();
        }
        unreachable!()
    };
    let edit = |a: &mut crate::App| -> Vec<String> {
        a.effects.clear();
        keys(a, "e");
        match a.effects.as_slice() {
            [Effect::Edit(c)] => {
                assert_eq!(c.program, "code");
                c.args
                    .iter()
                    .map(|s| s.to_string_lossy().into_owned())
                    .collect()
            }
            other => panic!("{other:?}"),
        }
    };
    // No block selected: the top line shown.
    press(&mut a, KeyCode::PageDown);
    let top = a.origin.lines[a.origin.scroll].start;
    assert_eq!(edit(&mut a), ["-w", &format!("+{}", line_of(top)), file]);
    assert!(line_of(top) > 1);
    // A copied block selected: its first line.
    keys(&mut a, "nn");
    let v = a.origin.view.clone().unwrap();
    let run = v.runs[a.origin.block.unwrap()];
    let start = v.spans[run.start as usize].0 as usize;
    assert_eq!(edit(&mut a), ["-w", &format!("+{}", line_of(start)), file]);
    assert!(a.message.as_deref().unwrap().starts_with("edited"));
    // From Documents: the selected document at its top.
    keys(&mut a, "1");
    assert_eq!(edit(&mut a)[1], "+1");
}

/// Issue 55: `s` while a filter's words rank the matches sorts the
/// matches by the key shown (then the next key), and the title says so;
/// a cleared filter ranks again the next time.
#[test]
fn s_sorts_the_filtered_rows_and_the_title_says_the_order() {
    let mut a = app(80, 24);
    keys(&mut a, "/md");
    press(&mut a, KeyCode::Enter);
    assert!(a.docs.ranked());
    let ranked = paths(&a);
    let mut by_path = ranked.clone();
    by_path.sort();
    assert_ne!(ranked, by_path, "ranked: the shorter paths first");
    keys(&mut a, "s");
    assert!(!a.docs.ranked());
    assert_eq!(
        a.docs.sort().0,
        crate::documents::SortKey::Path,
        "the key shown first"
    );
    assert_eq!(paths(&a), by_path);
    keys(&mut a, "s");
    assert_eq!(a.docs.sort().0, crate::documents::SortKey::Fresh);
    let fresh: Vec<f64> = (0..a.docs.len())
        .map(|i| a.docs.row(i).fresh_percent)
        .collect();
    assert!(fresh.windows(2).all(|w| w[0] >= w[1]), "{fresh:?}");
    assert_eq!(paths(&a).len(), ranked.len(), "still the filter's rows");
    // Refined, the filter keeps the order asked; cleared and set again, it ranks.
    keys(&mut a, "/");
    press(&mut a, KeyCode::Esc);
    keys(&mut a, "/md");
    press(&mut a, KeyCode::Enter);
    assert!(a.docs.ranked());
    let lens: Vec<usize> = paths(&a).iter().map(String::len).collect();
    assert!(
        lens.windows(2).all(|w| w[0] <= w[1]),
        "ranked again: {:?}",
        paths(&a)
    );
}

#[test]
fn x_with_an_html_name_asks_the_engine_for_the_report_and_says_what_became_of_it() {
    let mut a = app(80, 24);
    // A folder that is there (the report's is checked before it is asked).
    let start = lineage_core::fsio::resolve(&std::env::temp_dir()).unwrap();
    a.start_dir = start.clone();
    keys(&mut a, "X");
    for _ in 0.."csv".len() {
        press(&mut a, KeyCode::Backspace);
    }
    keys(&mut a, "HTML");
    let out = press(&mut a, KeyCode::Enter);
    let want = start.join("lineage-documents.HTML");
    assert_eq!(out, [Command::Report { path: want.clone() }]);
    assert!(a.effects.is_empty(), "no rows written: {:?}", a.effects);
    assert!(
        a.message
            .as_deref()
            .unwrap()
            .starts_with("writing the report to")
    );
    let figures = lineage_engine::html::Figures {
        pages: 12,
        bytes: 2_500_000,
        ..Default::default()
    };
    engine(
        &mut a,
        Update::Report {
            path: want.clone(),
            result: Ok(figures),
        },
    );
    let said = a.message.clone().unwrap();
    assert!(
        said.starts_with("report of 12 pages written to") && said.contains("2.5 MB"),
        "{said}"
    );
    engine(
        &mut a,
        Update::Report {
            path: want,
            result: Err("disk full".into()),
        },
    );
    assert!(a.message.as_deref().unwrap().ends_with(": disk full"));
    // Inside the watched folder: refused here, nothing asked.
    keys(&mut a, "X");
    let typed = "lineage-documents.csv".len();
    for _ in 0..typed {
        press(&mut a, KeyCode::Backspace);
    }
    keys(&mut a, "/home/ana/tidewater-docs/r.html");
    let out = press(&mut a, KeyCode::Enter);
    assert!(out.is_empty(), "{out:?}");
    assert!(
        a.message
            .as_deref()
            .unwrap()
            .contains("inside the watched folder"),
        "{:?}",
        a.message
    );
}

#[test]
fn x_exports_the_rows_as_shown_to_csv_or_json() {
    use crate::effects::Effect;
    let mut a = app(80, 24);
    a.start_dir = "/work/out".into();
    keys(&mut a, "/inst");
    press(&mut a, KeyCode::Enter);
    keys(&mut a, "S");
    let shown = paths(&a);
    keys(&mut a, "X");
    assert_eq!(a.input, Some(Input::Export("lineage-documents.csv".into())));
    press(&mut a, KeyCode::Enter);
    let [
        Effect::Export {
            path,
            root,
            bytes,
            rows,
        },
    ] = a.effects.as_slice()
    else {
        panic!("{:?}", a.effects);
    };
    assert_eq!(
        path,
        std::path::Path::new("/work/out/lineage-documents.csv")
    );
    assert_eq!(root, std::path::Path::new("/home/ana/tidewater-docs"));
    assert_eq!(*rows, 3);
    let csv = String::from_utf8(bytes.clone()).unwrap();
    let lines: Vec<&str> = csv.split("\r\n").collect();
    assert_eq!(
        lines[0],
        "path,version,tokens,fresh_percent,changed_percent,removed_percent,dominant_origin,cluster",
        "{csv}"
    );
    // The shares against the basis, as the pane shows them.
    let row = lines
        .iter()
        .find(|l| l.starts_with("v2/installation.md,"))
        .unwrap();
    let cell = |v: Option<f64>| ((v.unwrap() * 100.0).round() / 100.0).to_string();
    let (c, r) = (
        a.docs.shares.changed(V2_INSTALL),
        a.docs.shares.removed(V2_INSTALL),
    );
    assert!(row.contains(&format!(",{},{},", cell(c), cell(r))), "{row}");
    let got: Vec<&str> = lines[1..4]
        .iter()
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(got, shown, "filtered and in the order shown");
    // A .json name writes JSON; the Origin pane exports its runs.
    a.effects.clear();
    press(&mut a, KeyCode::Esc);
    keys(&mut a, "S");
    open_v2(&mut a);
    keys(&mut a, "X");
    for _ in 0..3 {
        press(&mut a, KeyCode::Backspace);
    }
    keys(&mut a, "json");
    press(&mut a, KeyCode::Enter);
    let [
        Effect::Export {
            path, bytes, rows, ..
        },
    ] = a.effects.as_slice()
    else {
        panic!("{:?}", a.effects);
    };
    assert_eq!(path, std::path::Path::new("/work/out/lineage-origin.json"));
    let v: serde_json::Value = serde_json::from_slice(bytes).unwrap();
    let runs = a.origin.view.as_ref().unwrap().runs.clone();
    assert_eq!(
        (*rows, v.as_array().unwrap().len()),
        (runs.len(), runs.len())
    );
    assert_eq!(v[0]["origin"], "v1/installation.md");
    assert_eq!(v[1]["origin"], serde_json::Value::Null, "new text");
    assert_eq!(v[2]["first_token"], runs[2].start);
    // Esc cancels; the Tune pane has nothing to export.
    a.effects.clear();
    keys(&mut a, "X");
    press(&mut a, KeyCode::Esc);
    keys(&mut a, "5X");
    assert!(a.effects.is_empty() && a.input.is_none());
    assert!(a.message.is_some());
}

#[test]
fn each_tune_field_says_what_it_trades_within_an_80_column_border() {
    for f in FIELDS {
        let t = f.trade();
        assert!(!t.is_empty() && t.chars().count() + 4 <= 78, "{f:?}: {t}");
    }
    let mut a = app(80, 24);
    keys(&mut a, "5j");
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(80, 24)).unwrap();
    t.draw(|f| {
        crate::panes::draw(
            &a,
            &crate::theme::Theme::new(lineage_config::ThemeName::Dark, false),
            f,
        )
    })
    .unwrap();
    let shown = format!("{:?}", t.backend().buffer());
    assert!(
        shown.contains(crate::tune::Field::Selector.trade()),
        "{shown}"
    );
}

#[test]
fn a_search_of_every_page_opens_one_at_its_match_and_comes_back() {
    use super::fixture::search_view;
    let mut a = app(80, 24);
    // F from any pane, the words typed, enter asks the engine.
    keys(&mut a, "Fservice");
    assert_eq!(
        press(&mut a, KeyCode::Enter),
        [Command::Search {
            generation: 1,
            query: "service".into()
        }]
    );
    // An answer to an older search is not this one's.
    engine(&mut a, Update::Search(Arc::new(search_view(0, "install"))));
    assert!(a.find.as_ref().is_some_and(|f| f.view.is_none()));
    let v = search_view(1, "service");
    engine(&mut a, Update::Search(Arc::new(v.clone())));
    // The second page found (v2's), opened at its first match.
    press(&mut a, KeyCode::Down);
    assert_eq!(
        press(&mut a, KeyCode::Enter),
        [Command::Origin {
            id: V2_INSTALL,
            exact: false
        }]
    );
    assert_eq!(a.tab, Tab::Origin);
    assert!(!crate::find::is_open(&a));
    engine(
        &mut a,
        Update::Origin(Arc::new(fixture::origin_view(false))),
    );
    let s = a
        .origin
        .search
        .clone()
        .expect("the words searched in the page");
    let current = s.matches[s.current.expect("a current match")].clone();
    assert_eq!(current, v.hits[1].first);
    let h = a.origin_text().height as usize;
    let line = a
        .origin
        .lines
        .iter()
        .position(|l| l.contains(&current.start));
    assert!(
        line.is_some_and(|l| (a.origin.scroll..a.origin.scroll + h).contains(&l)),
        "the match is in view"
    );
    // ] steps to the page's next match.
    keys(&mut a, "]");
    let s = a.origin.search.as_ref().unwrap();
    assert!(s.matches[s.current.unwrap()].start > current.start);
    // F with the same words brings the list back as it was, no new search.
    keys(&mut a, "F");
    assert_eq!(press(&mut a, KeyCode::Enter), []);
    assert!(crate::find::is_open(&a));
    assert_eq!(a.find.as_ref().unwrap().cursor.selected, 1);
    // Esc closes a finished list and keeps it.
    assert_eq!(press(&mut a, KeyCode::Esc), []);
    assert!(a.find.is_some() && !crate::find::is_open(&a));
    // Other words: a new search; closing it before it is done stops it.
    keys(&mut a, "F");
    for _ in 0.."service".len() {
        press(&mut a, KeyCode::Backspace);
    }
    keys(&mut a, "tide");
    assert_eq!(
        press(&mut a, KeyCode::Enter),
        [Command::Search {
            generation: 2,
            query: "tide".into()
        }]
    );
    assert_eq!(
        press(&mut a, KeyCode::Esc),
        [Command::Search {
            generation: 2,
            query: String::new()
        }]
    );
    assert!(a.find.is_none());
    // Empty words ask nothing.
    keys(&mut a, "F  ");
    assert_eq!(press(&mut a, KeyCode::Enter), []);
    assert!(a.find.is_none());
}

#[test]
fn a_page_shows_its_cluster_and_back_returns_to_the_page() {
    let mut a = app(80, 24);
    // From Documents: v2/installation.md (the last of the first cluster).
    select_v2(&mut a);
    // The clusters sorted by similarity, reversed: the pair (0.655) first.
    keys(&mut a, "3ssS");
    assert_eq!(a.cluster().unwrap().members, [0, 8]);
    keys(&mut a, "1");
    assert_eq!(keys(&mut a, "#"), []);
    assert_eq!(a.tab, Tab::Clusters);
    assert!(a.cluster().unwrap().members.contains(&V2_INSTALL));
    assert_eq!(a.clusters.list.selected, 1, "its row in the order shown");
    press(&mut a, KeyCode::Esc);
    assert_eq!(a.tab, Tab::Documents, "back to the page");
    // From Origin, past a filter that hides its cluster.
    keys(&mut a, "3/alerts");
    press(&mut a, KeyCode::Enter);
    assert_eq!(a.clusters_len(), 1);
    assert_eq!(a.cluster().unwrap().members, [0, 8]);
    keys(&mut a, "1");
    press(&mut a, KeyCode::Home);
    open_v2(&mut a);
    keys(&mut a, "#");
    assert_eq!(a.tab, Tab::Clusters);
    assert!(a.clusters.filter.is_empty(), "the filter hid it");
    assert!(a.cluster().unwrap().members.contains(&V2_INSTALL));
    press(&mut a, KeyCode::Esc);
    assert_eq!(a.tab, Tab::Origin);
    // A page in no cluster says so and stays.
    keys(&mut a, "1");
    press(&mut a, KeyCode::Home);
    press(&mut a, KeyCode::Down);
    keys(&mut a, "#");
    assert_eq!(a.tab, Tab::Documents);
    assert!(
        a.message
            .as_ref()
            .unwrap()
            .contains("v1/api.md is in no cluster")
    );
}

#[test]
fn clusters_sort_and_filter_and_esc_clears_the_filter() {
    let mut a = app(80, 24);
    keys(&mut a, "3");
    assert_eq!(a.clusters.order, [0, 1], "as numbered");
    keys(&mut a, "s");
    assert_eq!(a.clusters.sort, crate::clusters::ClusterSort::Size);
    assert_eq!(a.clusters.order, [0, 1], "three pages before two");
    keys(&mut a, "S");
    assert_eq!(a.clusters.order, [1, 0]);
    keys(&mut a, "ss");
    assert_eq!(a.clusters.sort, crate::clusters::ClusterSort::Path);
    assert_eq!(
        a.clusters.order,
        [1, 0],
        "v1/alerts.md before v1/installation.md"
    );
    // The filter: every word in some page's path, ignoring case.
    keys(&mut a, "/INSTALL v3");
    assert_eq!(a.clusters.order, [0]);
    keys(&mut a, "x");
    assert!(a.clusters.order.is_empty());
    press(&mut a, KeyCode::Backspace);
    press(&mut a, KeyCode::Enter);
    assert_eq!(
        (a.clusters.filter.as_str(), a.pairs_len()),
        ("INSTALL v3", 3)
    );
    // A new snapshot keeps the order and the filter.
    let s = (**a.snapshot.as_ref().unwrap()).clone();
    engine(&mut a, Update::Snapshot(Arc::new(s)));
    assert_eq!(a.clusters.order, [0]);
    press(&mut a, KeyCode::Esc);
    assert!(a.clusters.filter.is_empty());
    assert_eq!(a.clusters.order, [1, 0]);
}

/// A paste of a megabyte into a prompt: kept to the prompt's length (the
/// footer says so), acted on once, and the keys after it answer. As one
/// bracketed paste and as keys (a terminal without bracketed paste), both
/// in one batch as the UI loop drains them.
#[test]
fn a_pasted_megabyte_fills_a_prompt_once_and_the_keys_after_it_answer() {
    use crate::input::{MAX_INPUT, full_prompt};
    use ratatui::crossterm::event::KeyEvent;
    let k = |c| Msg::Input(Event::Key(KeyEvent::new(c, KeyModifiers::NONE)));
    let big = "é".repeat(1 << 20);
    let filter = |a: &crate::App| match &a.input {
        Some(Input::Filter(t)) => t.clone(),
        other => panic!("{other:?}"),
    };

    // Bracketed: one event.
    let mut a = app(80, 24);
    keys(&mut a, "/");
    update(&mut a, Msg::Input(Event::Paste(big.clone())));
    assert_eq!(filter(&a).chars().count(), MAX_INPUT);
    assert_eq!(a.message, Some(full_prompt()));
    assert_eq!(
        (a.docs.filter().chars().count(), a.docs.len()),
        (MAX_INPUT, 0)
    );
    press(&mut a, KeyCode::Esc);
    assert_eq!((a.input.clone(), a.docs.len()), (None, 29));

    // As keys, and Enter after them in the same batch.
    let mut batch = vec![k(KeyCode::Char('/'))];
    batch.extend(big.chars().take(100_000).map(|c| k(KeyCode::Char(c))));
    crate::update_all(&mut a, batch);
    assert_eq!(filter(&a), "é".repeat(MAX_INPUT));
    assert_eq!(a.message, Some(full_prompt()));
    crate::update_all(&mut a, [k(KeyCode::Char('é')), k(KeyCode::Enter)]);
    assert_eq!(a.input, None);
    assert_eq!(a.docs.filter(), "é".repeat(MAX_INPUT));
    // q quits at once.
    keys(&mut a, "q");
    assert!(a.quit);
}

/// A paste is text, never keys: its line end does not press enter, and
/// with no prompt open it does nothing (a pasted `q` does not quit).
#[test]
fn a_paste_is_one_edit_of_the_prompt_and_nothing_outside_one() {
    let mut a = app(80, 24);
    update(&mut a, Msg::Input(Event::Paste("q/x".into())));
    assert!(!a.quit);
    assert_eq!((a.input.clone(), a.tab), (None, Tab::Documents));
    keys(&mut a, "/");
    update(&mut a, Msg::Input(Event::Paste("inst\n".into())));
    assert_eq!(a.input, Some(Input::Filter("inst".into())));
    assert_eq!(paths(&a).len(), 3);
    update(&mut a, Msg::Input(Event::Paste("a\tl\r\nl".into())));
    assert_eq!(a.input, Some(Input::Filter("insta l  l".into())));
    // The Clusters filter and the search of every page take pastes too.
    press(&mut a, KeyCode::Esc);
    a.tab = Tab::Clusters;
    keys(&mut a, "/");
    update(&mut a, Msg::Input(Event::Paste("faq".into())));
    assert_eq!(a.clusters.filter, "faq");
    press(&mut a, KeyCode::Enter);
    keys(&mut a, "F");
    update(&mut a, Msg::Input(Event::Paste("gauge".into())));
    assert_eq!(a.input, Some(Input::Find("gauge".into())));
}

/// Issue 41, item 7: a new snapshot in which a new cluster lists before
/// the selected one (or one before it goes) keeps the selection on the
/// same cluster, by its number.
#[test]
fn the_selected_cluster_stays_selected_when_others_come_and_go() {
    for (w, h) in [(120, 40), (80, 24), (60, 20)] {
        let mut a = app(w, h);
        keys(&mut a, "3j");
        assert_eq!(a.cluster().map(|c| c.number), Some(2));
        let mut s = fixture::snapshot();
        let mut list: Vec<Arc<lineage_engine::Cluster>> = s.clusters.to_vec();
        list.remove(0);
        s.clusters = list.into();
        engine(&mut a, Update::Snapshot(Arc::new(s)));
        assert_eq!(a.cluster().map(|c| c.number), Some(2), "{w}: #1 went");
        let mut s = fixture::snapshot();
        let mut list: Vec<Arc<lineage_engine::Cluster>> = s.clusters.to_vec();
        list.insert(
            0,
            Arc::new(lineage_engine::Cluster {
                number: 0,
                members: vec![1, 2],
                pairs: vec![(1, 2, 0.7)],
            }),
        );
        s.clusters = list.into();
        engine(&mut a, Update::Snapshot(Arc::new(s)));
        assert_eq!(
            a.cluster().map(|c| c.number),
            Some(2),
            "{w}: one came before"
        );
        assert_eq!(a.clusters.list.selected, 2, "{w}");
    }
}

/// Issue 55, item 2: a prompt reopened with its last text selects it, so
/// typing replaces it (not `Gives one event loop turnthe`), backspace
/// clears it and a paste replaces it; ctrl-u and ctrl-w kill as readline
/// does with the cursor at the end.
#[test]
fn a_reopened_prompt_selects_its_text_and_ctrl_u_and_ctrl_w_kill() {
    for (w, h) in [(120, 40), (80, 24), (60, 20)] {
        let mut a = app(w, h);
        keys(&mut a, "Fgauge");
        press(&mut a, KeyCode::Enter);
        engine(
            &mut a,
            Update::Search(Arc::new(fixture::search_view(1, "gauge"))),
        );
        press(&mut a, KeyCode::Esc); // its list
        keys(&mut a, "F");
        assert_eq!(a.input, Some(Input::Find("gauge".into())), "{w}");
        assert!(a.selected);
        keys(&mut a, "the");
        assert_eq!(a.input, Some(Input::Find("the".into())), "{w}");
        assert!(!a.selected, "the first key ends the selection");
        press(&mut a, KeyCode::Enter);
        engine(
            &mut a,
            Update::Search(Arc::new(fixture::search_view(2, "the"))),
        );
        press(&mut a, KeyCode::Esc);
        // Backspace clears a selection; then it deletes a character.
        keys(&mut a, "F");
        press(&mut a, KeyCode::Backspace);
        assert_eq!(a.input, Some(Input::Find(String::new())), "{w}");
        // Readline's kills.
        keys(&mut a, "one two  ");
        press_with(&mut a, KeyCode::Char('w'), KeyModifiers::CONTROL);
        assert_eq!(a.input, Some(Input::Find("one ".into())), "{w}");
        keys(&mut a, "tw");
        press(&mut a, KeyCode::Backspace);
        press_with(&mut a, KeyCode::Char('w'), KeyModifiers::CONTROL);
        press_with(&mut a, KeyCode::Char('w'), KeyModifiers::CONTROL);
        assert_eq!(a.input, Some(Input::Find(String::new())), "{w}");
        keys(&mut a, "a b");
        press_with(&mut a, KeyCode::Char('u'), KeyModifiers::CONTROL);
        assert_eq!(a.input, Some(Input::Find(String::new())), "{w}");
        // A key that is no edit keeps the selected text, typing appends;
        // a paste replaces a selection.
        press(&mut a, KeyCode::Esc);
        a.tab = Tab::Clusters;
        keys(&mut a, "/faq");
        press(&mut a, KeyCode::Enter);
        keys(&mut a, "/");
        assert!(a.selected);
        update(&mut a, Msg::Input(Event::Paste("v1".into())));
        assert_eq!(a.clusters.filter, "v1", "{w}");
        press(&mut a, KeyCode::Enter);
        keys(&mut a, "/");
        press(&mut a, KeyCode::End);
        keys(&mut a, "x");
        assert_eq!(a.input, Some(Input::ClusterFilter("v1x".into())), "{w}");
        // The help says so, at every width.
        let theme = crate::theme::Theme::new(lineage_config::ThemeName::Dark, true);
        let help: Vec<String> = (crate::help::lines(&a, &theme, usize::from(w) - 4).iter())
            .map(ToString::to_string)
            .collect();
        let at = help.iter().position(|l| l == "While typing").unwrap();
        assert!(help[at..].iter().any(|l| l.contains("ctrl-w")), "{help:#?}");
    }
}

/// The cursor moves inside the line as readline's does, and every edit
/// (a character, a paste, backspace, delete, the kills) is made where it
/// stands; the line drawn shows it there, at every size.
#[test]
fn the_cursor_moves_inside_the_line_and_edits_are_made_there() {
    let ctrl = KeyModifiers::CONTROL;
    let alt = KeyModifiers::ALT;
    for (w, h) in [(120, 40), (80, 24), (60, 20)] {
        let mut a = app(w, h);
        let find = |a: &crate::App| match &a.input {
            Some(Input::Find(t)) => t.clone(),
            other => panic!("{other:?}"),
        };
        keys(&mut a, "Fone two");
        press(&mut a, KeyCode::Left);
        press(&mut a, KeyCode::Left);
        keys(&mut a, "X");
        assert_eq!(find(&a), "one tXwo", "{w}");
        press_with(&mut a, KeyCode::Char('a'), ctrl);
        keys(&mut a, "é");
        assert_eq!(find(&a), "éone tXwo");
        // A character of two bytes is one step.
        press(&mut a, KeyCode::Left);
        press(&mut a, KeyCode::Delete);
        assert_eq!(find(&a), "one tXwo");
        press_with(&mut a, KeyCode::Char('f'), alt);
        update(&mut a, Msg::Input(Event::Paste("!".into())));
        assert_eq!(find(&a), "one! tXwo");
        press_with(&mut a, KeyCode::Char('f'), alt);
        press_with(&mut a, KeyCode::Char('b'), alt);
        press(&mut a, KeyCode::Backspace);
        assert_eq!(find(&a), "one!tXwo", "backspace takes the blank before");
        press(&mut a, KeyCode::Right);
        press_with(&mut a, KeyCode::Char('k'), ctrl);
        assert_eq!(find(&a), "one!t");
        press(&mut a, KeyCode::Home);
        press(&mut a, KeyCode::Right);
        press(&mut a, KeyCode::Right);
        press_with(&mut a, KeyCode::Char('u'), ctrl);
        assert_eq!(find(&a), "e!t", "ctrl-u kills to the start");
        press(&mut a, KeyCode::End);
        keys(&mut a, " go");
        press_with(&mut a, KeyCode::Left, KeyModifiers::NONE);
        press_with(&mut a, KeyCode::Char('w'), ctrl);
        assert_eq!(find(&a), "e!t o", "ctrl-w kills the word before the cursor");
        // Drawn where it stands.
        let theme = crate::theme::Theme::new(lineage_config::ThemeName::Dark, true);
        let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(w, h)).unwrap();
        t.draw(|f| crate::panes::draw(&a, &theme, f)).unwrap();
        let screen = format!("{:?}", t.backend().buffer());
        assert!(screen.contains("e!t ▏o"), "{screen}");
        // A prompt opens with the cursor at its end.
        press(&mut a, KeyCode::Esc);
        keys(&mut a, "/");
        keys(&mut a, "ab");
        press(&mut a, KeyCode::Left);
        keys(&mut a, "c");
        assert_eq!(a.input, Some(Input::Filter("acb".into())), "{w}");
        t.draw(|f| crate::panes::draw(&a, &theme, f)).unwrap();
        let screen = format!("{:?}", t.backend().buffer());
        assert!(screen.contains("/ac▏b"), "{screen}");
        press(&mut a, KeyCode::Esc);
        keys(&mut a, "/");
        keys(&mut a, "z");
        assert_eq!(a.input, Some(Input::Filter("z".into())), "{w}");
    }
}

/// `}` and `{` walk the passages new in the page (no origin), as `n` and
/// `N` walk the copied blocks, from whichever run is selected; the text's
/// border says which new passage of how many.
#[test]
fn braces_walk_the_new_passages_and_the_border_counts_them() {
    for (w, h) in [(120, 40), (80, 24), (60, 20)] {
        let mut a = app(w, h);
        open_v2(&mut a);
        let view = fixture::origin_view(false);
        let new: Vec<usize> = (0..view.runs.len())
            .filter(|&i| view.runs[i].origin.is_none())
            .collect();
        assert!(!new.is_empty(), "{:?}", view.runs);
        keys(&mut a, "}");
        assert_eq!(a.origin.block, Some(new[0]), "{w}");
        let theme = crate::theme::Theme::new(lineage_config::ThemeName::Dark, true);
        let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(w, h)).unwrap();
        t.draw(|f| crate::panes::draw(&a, &theme, f)).unwrap();
        let screen = format!("{:?}", t.backend().buffer());
        assert!(
            screen.contains(&format!(" new 1/{} ", new.len())),
            "{screen}"
        );
        // From a copied block on: the first new passage after it.
        keys(&mut a, "n");
        let block = a.origin.block.unwrap();
        assert!(view.runs[block].origin.is_some());
        keys(&mut a, "}");
        let after = new.iter().copied().find(|&i| i > block);
        assert_eq!(a.origin.block, after.or(Some(block)), "{w}");
        let at = a.origin.block.unwrap();
        keys(&mut a, "{");
        let before = new.iter().copied().rev().find(|&i| i < at);
        assert_eq!(a.origin.block, before.or(Some(at)), "{w}");
    }
}

/// Two versions of a page compared (`v`, `c`) walk their changes with the
/// passage keys, both sides brought to the same change (where one side
/// lacks the text, to where it would stand), counted at the bottom; a pair
/// of two pages walks its shared passages as before.
#[test]
fn two_versions_compared_walk_their_changes_in_step() {
    use super::fixture::{VERSION_3, versions_view};
    for (w, h) in [(120, 40), (80, 24), (60, 20)] {
        let mut a = app(w, h);
        open_v2(&mut a);
        engine(&mut a, Update::Origin(Arc::new(versions_view())));
        keys(&mut a, "vj");
        keys(&mut a, "c");
        // Shared 0..40 and 48..2/3 on both: changes at 40 and at 2/3.
        let mut c = fixture::compare_view();
        (c.a.id, c.b.id) = (V2_INSTALL.min(VERSION_3), V2_INSTALL.max(VERSION_3));
        let ends = [
            c.a.spans.len() as u32 * 2 / 3,
            c.b.spans.len() as u32 * 2 / 3,
        ];
        engine(&mut a, Update::Compare(Arc::new(c.clone())));
        let cl = layout::clusters(layout::screen(a.size).body);
        let (l, r) = (layout::inner(cl.left), layout::inner(cl.right));
        let height = l.height as usize;
        // The line token `t` of a side is on, as wrapped, kept in the page.
        let line_of = |side: &lineage_engine::Side, width: u16, t: u32| {
            let text = side.text.as_ref().unwrap();
            let lines = wrap(text, width as usize);
            let byte = side.spans[t as usize].0 as usize;
            let at = lines.iter().position(|line| line.end >= byte).unwrap();
            at.min(lines.len().saturating_sub(height))
        };
        let first = [line_of(&c.a, l.width, 40), line_of(&c.b, r.width, 40)];
        let second = [
            line_of(&c.a, l.width, ends[0]),
            line_of(&c.b, r.width, ends[1]),
        ];
        assert_ne!(first, second, "{w}");
        keys(&mut a, "n");
        assert_eq!(a.clusters.scroll, first, "{w}");
        let theme = crate::theme::Theme::new(lineage_config::ThemeName::Dark, true);
        let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(w, h)).unwrap();
        t.draw(|f| crate::panes::draw(&a, &theme, f)).unwrap();
        let screen = format!("{:?}", t.backend().buffer());
        assert!(screen.contains(" change 1/2 · "), "{w}: {screen}");
        keys(&mut a, "n");
        assert_eq!(a.clusters.scroll, second, "{w}");
        keys(&mut a, "n");
        assert_eq!(a.clusters.scroll, second, "{w}: no change after the last");
        assert_eq!(a.clusters.change, Some(1));
        keys(&mut a, "N");
        assert_eq!(a.clusters.scroll, first, "{w}");
        // A page key leaves the walk: the count goes, and n goes on from the
        // lines shown.
        press(&mut a, KeyCode::Home);
        assert_eq!((a.clusters.scroll, a.clusters.change), ([0, 0], None));
        keys(&mut a, "n");
        assert_eq!(a.clusters.scroll, first, "{w}");
        // Back in Origin, and a pair of Clusters walks shared passages.
        press(&mut a, KeyCode::Esc);
        assert_eq!(a.tab, Tab::Origin);
    }
    let mut a = comparing();
    assert!(!a.clusters.walk_changes);
    keys(&mut a, "n");
    assert_eq!(a.clusters.change, None);
}
