//! What the view showed when it was left: its pane and the Documents' and
//! Clusters' order and filter, kept beside the root's index (`view.json`) so the next
//! `watch` of the folder opens on them. Remembering is a convenience: a file
//! that cannot be read or written is a view that starts afresh, never an
//! error.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::app::{App, TABS, Tab};
use super::clusters::ClusterSort;
use super::documents::SortKey;
use lineage_engine::VIEW_FILE;

#[derive(Serialize, Deserialize, Debug, Default, PartialEq)]
struct Saved {
    pane: String,
    sort: String,
    reverse: bool,
    filter: String,
    /// The Clusters pane's (absent from a file of an earlier lineage).
    #[serde(default)]
    clusters: ClustersSaved,
}

#[derive(Serialize, Deserialize, Debug, Default, PartialEq)]
struct ClustersSaved {
    sort: String,
    reverse: bool,
    filter: String,
}

/// The view as `dir`'s file left it, onto `app` (nothing when there is none).
pub(crate) fn load(dir: &Path, app: &mut App) {
    let Ok(bytes) = lineage_core::fsio::read_bounded(&dir.join(VIEW_FILE), 64 << 10) else {
        return;
    };
    let Ok(s) = serde_json::from_slice::<Saved>(&bytes) else {
        return;
    };
    // No document is open after a restart: Origin opens on Documents.
    if let Some(&tab) = TABS.iter().find(|t| t.title() == s.pane) {
        app.tab = if tab == Tab::Origin {
            Tab::Documents
        } else {
            tab
        };
    }
    let h = app.docs_height();
    if let Some(sort) = SortKey::ALL.into_iter().find(|k| k.label() == s.sort) {
        app.docs.set_sort(sort, s.reverse, h);
    }
    app.docs.set_filter(&s.filter, h);
    let c = &mut app.clusters;
    if let Some(sort) = (ClusterSort::ALL.into_iter()).find(|k| k.label() == s.clusters.sort) {
        c.sort = sort;
    }
    c.reverse = s.clusters.reverse;
    c.filter = s.clusters.filter;
}

/// Keep `app`'s view in `dir`, if `dir` is there to hold it.
pub(crate) fn save(dir: &Path, app: &App) {
    let (sort, reverse) = app.docs.sort();
    let s = Saved {
        pane: app.tab.title().into(),
        sort: sort.label().into(),
        reverse,
        filter: app.docs.filter().into(),
        clusters: ClustersSaved {
            sort: app.clusters.sort.label().into(),
            reverse: app.clusters.reverse,
            filter: app.clusters.filter.clone(),
        },
    };
    if dir.is_dir() {
        let _ = lineage_core::fsio::write_atomic(&dir.join(VIEW_FILE), |w| {
            serde_json::to_writer(&mut *w, &s).map_err(std::io::Error::other)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::app;

    #[test]
    fn the_view_left_is_the_view_found() {
        let dir = std::env::temp_dir().join(format!("lineage-view-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut a = app(120, 40);
        a.tab = Tab::Events;
        a.docs.set_sort(SortKey::Copied, true, 10);
        a.docs.set_filter("install", 10);
        a.clusters.sort = ClusterSort::Similarity;
        a.clusters.reverse = true;
        a.clusters.filter = "alerts".into();
        save(&dir, &a);
        let mut b = app(120, 40);
        load(&dir, &mut b);
        assert_eq!(b.tab, Tab::Events);
        assert_eq!(b.docs.sort(), (SortKey::Copied, true));
        assert_eq!(b.docs.filter(), "install");
        assert_eq!(b.docs.len(), a.docs.len(), "the same rows shown");
        let c = &b.clusters;
        assert_eq!((c.sort, c.reverse), (ClusterSort::Similarity, true));
        assert_eq!(c.filter, "alerts");
        // A file of an earlier lineage, without the Clusters', still reads.
        std::fs::write(
            dir.join(VIEW_FILE),
            br#"{"pane":"Table","sort":"path","reverse":false,"filter":"x"}"#,
        )
        .unwrap();
        let mut e = app(120, 40);
        load(&dir, &mut e);
        assert_eq!((e.tab, e.clusters.sort), (Tab::Table, ClusterSort::Number));
        // Origin reopens on Documents; garbage is a fresh view.
        a.tab = Tab::Origin;
        save(&dir, &a);
        let mut c = app(120, 40);
        load(&dir, &mut c);
        assert_eq!(c.tab, Tab::Documents);
        std::fs::write(dir.join(VIEW_FILE), b"{\"pane\": 7").unwrap();
        let mut d = app(120, 40);
        load(&dir, &mut d);
        assert_eq!((d.tab, d.docs.filter()), (Tab::Documents, ""));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
