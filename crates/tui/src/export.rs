//! `X`: the current pane's data to a file, as shown (Documents filtered and
//! sorted): CSV (RFC 4180), or JSON when the name ends in `.json`; a name
//! ending in `.html` asks the engine for the HTML report of every page
//! (`lineage report`), which it writes off its thread. The table
//! is built in `update` (pure); writing it is the UI loop's, atomically
//! ([`lineage_core::fsio::write_atomic`]), and never inside the watched folder,
//! which lineage only reads.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::app::{App, Tab};
use super::paths::shown_path;
use lineage_engine::EventKind;

/// One value: text, or a number (unquoted in JSON).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value {
    Text(String),
    Int(i64),
    Num(f64),
    Empty,
}

impl Value {
    /// `x` to `decimals` places: a measure's float carries digits nobody
    /// measured (issue 41: `30.402750491159136`).
    pub(crate) fn rounded(x: f64, decimals: i32) -> Value {
        let scale = 10f64.powi(decimals);
        Value::Num((x * scale).round() / scale)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Text(s.to_string())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::Text(s)
    }
}

impl From<u64> for Value {
    fn from(n: u64) -> Value {
        Value::Int(n as i64)
    }
}

impl From<u32> for Value {
    fn from(n: u32) -> Value {
        Value::Int(i64::from(n))
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    pub header: Vec<&'static str>,
    pub rows: Vec<Vec<Value>>,
}

/// The file a pane exports to unless another is typed.
pub(crate) fn default_name(tab: Tab) -> String {
    format!("lineage-{}.csv", tab.title().to_ascii_lowercase())
}

/// The current pane's rows, or why there are none to export.
pub(crate) fn table(app: &App) -> Result<Table, String> {
    let snap = app
        .snapshot
        .as_ref()
        .ok_or("the engine has not reported yet")?;
    let t = match app.tab {
        Tab::Documents => Table {
            header: vec![
                "path",
                "version",
                "tokens",
                "fresh_percent",
                "changed_percent",
                "removed_percent",
                "dominant_origin",
                "cluster",
            ],
            rows: (0..app.docs.len())
                .map(|i| {
                    let d = app.docs.row(i);
                    // Against the basis the title names; empty where not
                    // measured yet, or with no base to remove from.
                    let share = |v: Option<f64>| v.map_or(Value::Empty, |v| Value::rounded(v, 2));
                    vec![
                        (&*d.path).into(),
                        d.version.into(),
                        d.tokens.into(),
                        Value::rounded(d.fresh_percent, 2),
                        share(app.docs.shares.changed(d.id)),
                        share(app.docs.shares.removed(d.id)),
                        d.dominant_path
                            .as_deref()
                            .map_or(Value::Empty, |p| Value::Text(p.to_string())),
                        app.cluster_number(d.id).map_or(Value::Empty, Value::from),
                    ]
                })
                .collect(),
        },
        Tab::Origin => {
            let v = app.origin.view.as_ref().ok_or("no document is open")?;
            let origin = |id: Option<u32>| {
                let e = id.and_then(|id| v.legend.iter().find(|e| e.origin == id));
                match e {
                    Some(e) => (e.path.as_str().into(), e.version.into()),
                    None => (Value::Empty, Value::Empty),
                }
            };
            Table {
                header: vec![
                    "document",
                    "version",
                    "result",
                    "first_token",
                    "end_token",
                    "origin",
                    "origin_version",
                ],
                rows: (v.runs.iter())
                    .map(|r| {
                        let (path, version) = origin(r.origin);
                        vec![
                            v.path.as_str().into(),
                            v.version.into(),
                            (if v.exact { "exact" } else { "estimated" }).into(),
                            r.start.into(),
                            r.end.into(),
                            path,
                            version,
                        ]
                    })
                    .collect(),
            }
        }
        Tab::Clusters => {
            let path = |id: u32| {
                app.doc(id)
                    .map_or(Value::Int(i64::from(id)), |d| (&*d.path).into())
            };
            Table {
                header: vec!["cluster", "a", "b", "similarity"],
                // As listed: filtered and in the pane's order.
                rows: (app.clusters.order.iter())
                    .filter_map(|&i| snap.clusters.get(i))
                    .flat_map(|c| {
                        c.pairs
                            .iter()
                            .map(move |&(a, b, sim)| (c.number, a, b, sim))
                    })
                    .map(|(n, a, b, sim)| vec![n.into(), path(a), path(b), Value::rounded(sim, 4)])
                    .collect(),
            }
        }
        Tab::Events => {
            let plain = super::theme::Theme::new(lineage_config::ThemeName::Dark, true);
            Table {
                header: vec!["n", "at_ms", "kind", "text"],
                rows: (snap.events.iter())
                    .map(|e| {
                        let (kind, _, text) = super::panes::events::describe(&e.kind, &plain);
                        let kind = match &e.kind {
                            EventKind::Version { .. } => "version",
                            _ => kind,
                        };
                        vec![e.n.into(), Value::Int(e.at_ms), kind.into(), text.into()]
                    })
                    .collect(),
            }
        }
        Tab::Table => {
            let t = &snap.table;
            let opt = |v: Option<u64>| v.map_or(Value::Empty, Value::from);
            Table {
                header: vec!["counter", "value"],
                rows: vec![
                    vec!["size".into(), snap.params.table_size.to_string().into()],
                    vec!["lookups".into(), t.lookups.into()],
                    vec!["hits".into(), t.hits.into()],
                    vec!["inserts".into(), t.inserts.into()],
                    vec!["evictions".into(), t.evictions.into()],
                    vec!["occupied".into(), t.occupied.into()],
                    vec!["capacity".into(), opt(t.capacity)],
                    vec!["buckets".into(), opt(t.buckets)],
                    vec!["entry_bytes".into(), t.entry_bytes.into()],
                    vec!["versions".into(), t.versions.into()],
                ],
            }
        }
        Tab::Tune => return Err("the Tune pane has nothing to export".into()),
    };
    Ok(t)
}

/// `t` as the file `name` asks: JSON for `.json` (any case), else CSV.
pub(crate) fn render(t: &Table, name: &Path) -> Vec<u8> {
    let json = name
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    if json { to_json(t) } else { to_csv(t) }
}

/// RFC 4180: CRLF line ends; a field with a comma, a quote, CR or LF is in
/// quotes, its quotes doubled.
pub(crate) fn to_csv(t: &Table) -> Vec<u8> {
    let field = |s: &str| {
        if s.contains([',', '"', '\r', '\n']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.to_string()
        }
    };
    let mut out = String::new();
    let line = |cells: Vec<String>, out: &mut String| {
        out.push_str(&cells.join(","));
        out.push_str("\r\n");
    };
    line(t.header.iter().map(|h| field(h)).collect(), &mut out);
    for row in &t.rows {
        let cells = row
            .iter()
            .map(|v| match v {
                Value::Text(s) => field(s),
                Value::Int(n) => n.to_string(),
                Value::Num(x) => x.to_string(),
                Value::Empty => String::new(),
            })
            .collect();
        line(cells, &mut out);
    }
    out.into_bytes()
}

/// An array of objects, keys in the header's order.
pub(crate) fn to_json(t: &Table) -> Vec<u8> {
    let mut out = String::from("[");
    for (i, row) in t.rows.iter().enumerate() {
        out.push_str(if i == 0 { "\n  {" } else { ",\n  {" });
        for (j, (k, v)) in t.header.iter().zip(row).enumerate() {
            if j > 0 {
                out.push_str(", ");
            }
            let v = match v {
                Value::Text(s) => serde_json::Value::from(s.as_str()),
                Value::Int(n) => serde_json::Value::from(*n),
                Value::Num(x) => serde_json::Value::from(*x),
                Value::Empty => serde_json::Value::Null,
            };
            out.push_str(&format!("{}: {v}", serde_json::Value::from(*k)));
        }
        out.push('}');
    }
    out.push_str(if t.rows.is_empty() { "]\n" } else { "\n]\n" });
    out.into_bytes()
}

/// Where a typed name goes: `~` and `~/…` under `home`, as a shell expands
/// them; other relative names under `start` (the directory lineage was
/// started from).
pub(crate) fn target(start: &Path, home: Option<&Path>, typed: &str) -> PathBuf {
    let typed = typed.trim();
    match (home, typed.strip_prefix('~')) {
        (Some(home), Some(rest)) if rest.is_empty() || rest.starts_with('/') => {
            home.join(rest.trim_start_matches('/'))
        }
        _ => start.join(typed),
    }
}

/// Write `bytes` to `target` atomically where [`writable`] allows: never
/// inside `root` (the watched folder: lineage only reads it), never through
/// a symbolic link under the name itself (`lineage-documents.csv ->
/// ~/.bashrc` would have the export replace what it points to). Links among
/// the folders above are followed (they are where the person keeps things).
pub(crate) fn write(target: &Path, root: &Path, bytes: &[u8]) -> Result<(), String> {
    let full = writable(target, root)?;
    lineage_core::fsio::write_atomic(&full, |w| w.write_all(bytes))
        .map(|_| ())
        .map_err(|e: io::Error| format!("cannot export to {}: {e}", shown_path(&full)))
}

/// Whether a typed name asks for the HTML report (`.html` or `.htm`, any
/// case) rather than the pane's rows.
pub(crate) fn is_report(typed: &str) -> bool {
    let lower = typed.trim().to_ascii_lowercase();
    lower.ends_with(".html") || lower.ends_with(".htm")
}

/// What the footer says of a report the engine wrote, or could not.
pub(crate) fn reported(
    path: &Path,
    result: Result<lineage_engine::html::Figures, String>,
) -> String {
    match result {
        Ok(f) => format!(
            "report of {} pages written to {} ({:.1} MB): open it in a browser",
            f.pages,
            shown_path(path),
            f.bytes as f64 / 1e6
        ),
        Err(e) => format!("no report written to {}: {e}", shown_path(path)),
    }
}

/// `target` resolved, if an export may write it: not inside `root` (the
/// watched folder: lineage only reads it), not itself a symbolic link.
pub(crate) fn writable(target: &Path, root: &Path) -> Result<PathBuf, String> {
    if target.file_name().is_none() {
        return Err(format!("{} names no file", shown_path(target)));
    }
    if std::fs::symlink_metadata(target).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(format!(
            "not exported: {} is a symbolic link (not followed); give another name",
            shown_path(target)
        ));
    }
    let resolve = |p: &Path| lineage_core::fsio::resolve(p).unwrap_or_else(|_| p.to_path_buf());
    let (full, root) = (resolve(target), resolve(root));
    if full.starts_with(&root) {
        return Err(format!(
            "not exported: {} is inside the watched folder, which lineage only reads",
            shown_path(&full)
        ));
    }
    // Said plainly, not as the system's "No such file or directory".
    if let Some(folder) = (full.parent()).filter(|p| !p.as_os_str().is_empty() && !p.is_dir()) {
        return Err(format!(
            "not exported: there is no folder {}; make it first, or give another name",
            shown_path(folder)
        ));
    }
    Ok(full)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table {
        Table {
            header: vec!["path", "tokens", "share"],
            rows: vec![
                vec!["a, \"b\"\nc.md".into(), 12u64.into(), Value::Num(0.5)],
                vec!["plain.md".into(), Value::Empty, Value::Num(1.0)],
            ],
        }
    }

    #[test]
    fn csv_quotes_commas_quotes_and_newlines() {
        let csv = String::from_utf8(to_csv(&table())).unwrap();
        assert_eq!(
            csv,
            "path,tokens,share\r\n\"a, \"\"b\"\"\nc.md\",12,0.5\r\nplain.md,,1\r\n"
        );
    }

    /// Issue 41: a percentage to two places, a similarity to four, in CSV
    /// and JSON alike.
    #[test]
    fn numbers_are_written_to_the_places_measured() {
        let t = Table {
            header: vec!["fresh_percent", "similarity"],
            rows: vec![vec![
                Value::rounded(30.402750491159136, 2),
                Value::rounded(0.912345678, 4),
            ]],
        };
        let csv = String::from_utf8(to_csv(&t)).unwrap();
        assert_eq!(csv, "fresh_percent,similarity\r\n30.4,0.9123\r\n");
        let json = String::from_utf8(to_json(&t)).unwrap();
        assert!(json.contains("30.4,") && json.contains("0.9123}"), "{json}");
        // The Documents export rounds its percentages.
        let mut a = crate::tests::app(80, 24);
        let mut s = (**a.snapshot.as_ref().unwrap()).clone();
        let mut rows: Vec<_> = s.documents.iter().cloned().collect();
        rows[0].fresh_percent = 30.402750491159136;
        s.documents = crate::tests::fixture::documents(rows);
        crate::app::update(
            &mut a,
            crate::app::Msg::Engine(lineage_engine::Update::Snapshot(std::sync::Arc::new(s))),
        );
        let csv = String::from_utf8(to_csv(&super::table(&a).unwrap())).unwrap();
        assert!(csv.contains(",30.4,") && !csv.contains("30.4027"), "{csv}");
    }

    #[test]
    fn json_keeps_the_columns_in_order_and_types() {
        let json = to_json(&table());
        let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
        assert_eq!(v[0]["path"], "a, \"b\"\nc.md");
        assert_eq!(v[0]["tokens"], 12);
        assert_eq!(v[1]["tokens"], serde_json::Value::Null);
        let text = String::from_utf8(json).unwrap();
        assert!(text.find("\"path\"") < text.find("\"tokens\""));
        assert_eq!(render(&table(), Path::new("x.JSON")), to_json(&table()));
        assert_eq!(render(&table(), Path::new("x.txt")), to_csv(&table()));
    }

    #[test]
    fn nothing_is_written_inside_the_watched_folder() {
        let base = std::env::temp_dir().join(format!("lineage-export-{}", std::process::id()));
        let root = base.join("watched");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        for inside in [
            root.join("out.csv"),
            root.join("sub/out.csv"),
            base.join("watched/../watched/x.csv"),
        ] {
            let e = write(&inside, &root, b"x").unwrap_err();
            assert!(e.contains("inside the watched folder"), "{e}");
            assert!(!inside.exists());
        }
        #[cfg(unix)]
        {
            // A link beside the root that leads into it.
            std::os::unix::fs::symlink(&root, base.join("link")).unwrap();
            let e = write(&base.join("link/out.csv"), &root, b"x").unwrap_err();
            assert!(e.contains("inside the watched folder"), "{e}");
            assert!(!root.join("out.csv").exists());
        }
        let outside = base.join("out.csv");
        write(&outside, &root, b"a,b\r\n").unwrap();
        assert_eq!(std::fs::read(&outside).unwrap(), b"a,b\r\n");
        #[cfg(unix)]
        {
            // A link planted under the offered name, to a file of the person's.
            let victim = base.join("bashrc");
            std::fs::write(&victim, b"precious").unwrap();
            let planted = base.join("lineage-documents.csv");
            std::os::unix::fs::symlink(&victim, &planted).unwrap();
            let e = write(&planted, &root, b"path,version\r\n").unwrap_err();
            assert!(e.contains("is a symbolic link (not followed)"), "{e}");
            assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
            assert!(
                std::fs::symlink_metadata(&planted)
                    .unwrap()
                    .file_type()
                    .is_symlink()
            );
        }
        // A folder that is not there is said plainly, and nothing is made.
        let e = write(&base.join("no-such/out.csv"), &root, b"x").unwrap_err();
        assert!(
            e.contains("there is no folder") && e.contains("no-such"),
            "{e}"
        );
        assert!(!base.join("no-such").exists());
        std::fs::remove_dir_all(&base).unwrap();
    }

    /// Issue 55, item 2: `~` is the home folder, as a shell expands it.
    #[test]
    fn a_name_from_home_is_under_home_and_others_under_the_start() {
        let (start, home) = (Path::new("/work/out"), Some(Path::new("/home/me")));
        let t = |typed: &str| target(start, home, typed);
        assert_eq!(t("~/r.html"), Path::new("/home/me/r.html"));
        assert_eq!(t(" ~/a/r.csv "), Path::new("/home/me/a/r.csv"));
        assert_eq!(t("r.csv"), Path::new("/work/out/r.csv"));
        assert_eq!(t("/tmp/r.csv"), Path::new("/tmp/r.csv"));
        // `~user` is not expanded (no user database read): a plain name.
        assert_eq!(t("~bob/r.csv"), Path::new("/work/out/~bob/r.csv"));
        assert_eq!(
            target(start, None, "~/r.csv"),
            Path::new("/work/out/~/r.csv")
        );
    }
}
