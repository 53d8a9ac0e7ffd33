//! Saving adopted settings into the config file a person keeps: the keys the
//! person changed go into the folder's `[folders."/abs/path"]` table (the
//! settings are that folder's, see `folders`); every comment, blank line,
//! order and other key stays as written (toml_edit keeps the layout).
//! The result is checked as `Config::load` would check it before anything
//! is written, and written atomically (a symlinked file, as dotfile managers
//! make, is written through its link, which stays).

use std::path::{Path, PathBuf};

use toml_edit::{DocumentMut, Item, Table, value};

use super::{Basis, Config, ConfigError};
use lineage_origin::Params;

/// The settings as config keys and TOML values, in the config's order.
fn entries(p: &Params) -> [(&'static str, Item); 10] {
    let int = |n: u64| value(n as i64);
    [
        ("k", int(p.k as u64)),
        ("selector", value(p.selector.to_string())),
        ("table_size", value(p.table_size.to_string())),
        ("bucket_entries", int(u64::from(p.bucket_entries))),
        ("eviction", value(p.eviction.to_string())),
        ("eviction_ties", value(p.ties.to_string())),
        ("estimation", value(p.estimation.to_string())),
        ("bridge_limit", int(u64::from(p.bridge_limit))),
        ("seed", value(p.seed as i64)),
        ("align", value(p.align)),
    ]
}

/// The config keys whose values differ between `was` and `now`, in the
/// config's order: what a person changed.
pub fn changed(was: &Params, now: &Params) -> Vec<&'static str> {
    (entries(was).iter().zip(entries(now)))
        .filter(|((_, a), (_, b))| a.to_string() != b.to_string())
        .map(|((k, _), _)| *k)
        .collect()
}

/// `keys` of `p` as lines of TOML.
fn lines(p: &Params, keys: &[&str]) -> String {
    (entries(p).iter())
        .filter(|(k, _)| keys.contains(k))
        .map(|(k, v)| format!("{k} = {}\n", v.to_string().trim()))
        .collect()
}

/// The lines to paste into a config file for `keys` of these settings,
/// under the folder's table header.
pub fn snippet(folder: &Path, p: &Params, keys: &[&str]) -> String {
    let mut header = Table::new();
    header.set_implicit(true);
    let mut doc = DocumentMut::new();
    doc.insert("folders", Item::Table(header));
    let name = folder.to_string_lossy();
    doc["folders"][name.as_ref()] = Item::Table(Table::new());
    format!("{doc}{}", lines(p, keys))
}

/// Write `keys` of `p` into the `[folders]` table of `folder` in the config
/// file at `path` (each created if missing), keeping everything else in it.
/// Returns the file written.
pub fn save_params(
    path: &Path,
    folder: &Path,
    p: &Params,
    keys: &[&str],
) -> Result<PathBuf, ConfigError> {
    let items = entries(p).into_iter().filter(|(k, _)| keys.contains(k));
    save(path, folder, items.collect())
}

/// Write `basis` into the `[folders]` table of `folder` in the config file
/// at `path`, as [`save_params`] writes settings. Returns the file written.
pub fn save_basis(path: &Path, folder: &Path, basis: Basis) -> Result<PathBuf, ConfigError> {
    save(path, folder, vec![("basis", value(basis.to_string()))])
}

/// Write `items` into the `[folders]` table of `folder` in the config
/// file at `path`, keeping everything else in it.
fn save(path: &Path, folder: &Path, items: Vec<(&str, Item)>) -> Result<PathBuf, ConfigError> {
    let invalid = |message: String| ConfigError::Invalid {
        path: path.to_path_buf(),
        message,
    };
    // A link is written through: the file it names changes, the link stays.
    let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let text = if target.exists() {
        let bytes =
            lineage_source::read_file(&target, 1 << 20).map_err(|reason| ConfigError::Read {
                path: path.to_path_buf(),
                reason,
            })?;
        String::from_utf8(bytes).map_err(|_| ConfigError::NotText(path.to_path_buf()))?
    } else {
        String::new()
    };
    let mut doc: DocumentMut = text.parse().map_err(|e| invalid(format!("{e}")))?;
    let name = folder
        .to_str()
        .ok_or_else(|| invalid("the folder's name is not UTF-8, as a config key must be".into()))?;
    let folders = doc.entry("folders").or_insert_with(|| {
        let mut t = Table::new();
        t.set_implicit(true);
        Item::Table(t)
    });
    let folders =
        (folders.as_table_like_mut()).ok_or_else(|| invalid("folders is not a table".into()))?;
    // The table naming this folder, however spelled, or a new one.
    let spelled = (folders.iter())
        .map(|(k, _)| k.to_string())
        .find(|k| super::folders::names(k, folder))
        .unwrap_or_else(|| name.to_string());
    let table = (folders.entry(&spelled))
        .or_insert(Item::Table(Table::new()))
        .as_table_like_mut()
        .ok_or_else(|| invalid(format!("folders.\"{spelled}\" is not a table")))?;
    for (key, item) in items {
        match table.get_mut(key).and_then(Item::as_value_mut) {
            // The value alone: the key's comments and spacing stay.
            Some(v) => {
                let decor = v.decor().clone();
                *v = item.into_value().expect("a value");
                *v.decor_mut() = decor;
            }
            None => {
                table.insert(key, item);
            }
        }
    }
    let new = doc.to_string();
    Config::from_toml(&new).map_err(|e| invalid(e.to_string()))?;
    if let Some(dir) = target.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| invalid(format!("cannot create its folder: {e}")))?;
    }
    lineage_core::fsio::write_atomic(&target, |w| std::io::Write::write_all(w, new.as_bytes()))
        .map_err(|e| invalid(format!("cannot write it: {e}")))?;
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lineage_origin::{Selector, TableSize};
    use lineage_testing::TempDir;

    fn tuned() -> Params {
        Params {
            selector: Selector::Win(8),
            table_size: TableSize::Bytes(12 << 10),
            k: 6,
            ..Params::default()
        }
    }

    /// The keys of [`tuned`] that differ from the defaults.
    const TUNED: [&str; 3] = ["k", "selector", "table_size"];

    #[test]
    fn only_the_changed_keys_are_saved_in_the_folders_table_and_the_rest_stays() {
        assert_eq!(changed(&Params::default(), &tuned()), TUNED);
        assert!(changed(&tuned(), &tuned()).is_empty());
        let tmp = TempDir::new("save-keep");
        let dir = tmp.path();
        std::fs::create_dir_all(dir.join("docs")).unwrap();
        let folder = super::super::canonical(&dir.join("docs"));
        let path = dir.join("config.toml");
        let before = "# my lineage settings\n\n\
                      # small table for the laptop\n\
                      table_size = \"1MiB\"   # was 64MiB\n\
                      order = \"path\"\n\n\
                      [watch]\n\
                      # quiet editor\n\
                      debounce_ms = 500\n";
        std::fs::write(&path, before).unwrap();
        save_params(&path, &folder, &tuned(), &["selector", "table_size"]).unwrap();
        let after = std::fs::read_to_string(&path).unwrap();
        assert!(
            after.starts_with(before),
            "the person's lines stay:\n{after}"
        );
        let mut c = Config::from_toml(&after).unwrap();
        assert_eq!(
            c.table_size,
            TableSize::Bytes(1 << 20),
            "top level untouched"
        );
        assert_eq!(c.watch.debounce_ms, 500);
        c.for_folder(&folder);
        let want = Params {
            k: Params::default().k,
            ..tuned()
        };
        assert_eq!(c.params(), want, "only the keys asked for, in that folder");
        assert!(!after.contains("\nk ="), "{after}");
        // Saving again changes nothing; a change to a saved key keeps its line.
        save_params(&path, &folder, &tuned(), &["selector", "table_size"]).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), after);
        let bigger = Params {
            table_size: TableSize::Bytes(1 << 30),
            ..tuned()
        };
        save_params(&path, &folder, &bigger, &["table_size", "k"]).unwrap();
        let again = std::fs::read_to_string(&path).unwrap();
        assert_eq!(again.matches("[folders.").count(), 1, "{again}");
        let mut c = Config::from_toml(&again).unwrap();
        c.for_folder(&folder);
        assert_eq!(c.params(), bigger);
    }

    /// The basis is the folder's: saved beside its settings, read back for
    /// it alone, a second save replacing the first.
    #[test]
    fn a_basis_is_saved_for_its_folder_only() {
        let tmp = TempDir::new("save-basis");
        let dir = tmp.path();
        std::fs::create_dir_all(dir.join("docs")).unwrap();
        let folder = super::super::canonical(&dir.join("docs"));
        let path = dir.join("config.toml");
        std::fs::write(&path, "basis = \"predecessor\"  # mine\n").unwrap();
        save_params(&path, &folder, &tuned(), &["k"]).unwrap();
        save_basis(&path, &folder, Basis::Folder).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with("basis = \"predecessor\"  # mine\n"),
            "{text}"
        );
        let c = Config::from_toml(&text).unwrap();
        assert_eq!(c.basis, Basis::Predecessor, "the top level stays");
        let mut here = c.clone();
        here.for_folder(&folder);
        assert_eq!((here.basis, here.k), (Basis::Folder, 6));
        let mut elsewhere = c;
        elsewhere.for_folder(dir);
        assert_eq!(elsewhere.basis, Basis::Predecessor);
        save_basis(&path, &folder, Basis::Predecessor).unwrap();
        let again = std::fs::read_to_string(&path).unwrap();
        assert_eq!(again.matches("basis =").count(), 2, "{again}");
        let mut c = Config::from_toml(&again).unwrap();
        c.for_folder(&folder);
        assert_eq!(c.basis, Basis::Predecessor);
        assert!(Config::from_toml("basis = \"tag\"\n").is_err());
    }

    #[test]
    fn a_missing_file_and_its_folder_are_created_and_a_link_stays_a_link() {
        let tmp = TempDir::new("save-new");
        let dir = tmp.path();
        let path = dir.join("lineage").join("config.toml");
        let folder = Path::new("/srv/docs");
        save_params(&path, folder, &tuned(), &TUNED).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, snippet(folder, &tuned(), &TUNED));
        assert!(text.starts_with("[folders.\"/srv/docs\"]\n"), "{text}");
        let mut c = Config::from_toml(&text).unwrap();
        c.for_folder(folder);
        assert_eq!(c.params(), tuned());
        #[cfg(unix)]
        {
            let link = dir.join("link.toml");
            std::os::unix::fs::symlink(&path, &link).unwrap();
            save_params(&link, folder, &Params::default(), &TUNED).unwrap();
            assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
            let mut c = Config::load(Some(&path)).unwrap();
            c.for_folder(folder);
            assert_eq!(c.params(), Params::default());
        }
    }

    #[test]
    fn a_file_lineage_would_refuse_is_not_written() {
        let tmp = TempDir::new("save-bad");
        let dir = tmp.path();
        let path = dir.join("config.toml");
        for bad in ["k = [", "no_such_key = 1\n", "folders = 3\n"] {
            std::fs::write(&path, bad).unwrap();
            assert!(
                save_params(&path, Path::new("/d"), &tuned(), &TUNED).is_err(),
                "{bad}"
            );
            assert_eq!(std::fs::read_to_string(&path).unwrap(), bad, "untouched");
        }
    }
}
