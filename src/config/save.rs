//! Saving adopted settings into the config file a person keeps: the keys of
//! the engine settings get the new values; every comment, blank line, order
//! and other key stays as written (toml_edit keeps the document's layout).
//! The result is checked as `Config::load` would check it before anything
//! is written, and written atomically (a symlinked file, as dotfile managers
//! make, is written through its link, which stays).

use std::path::{Path, PathBuf};

use toml_edit::{DocumentMut, Item, value};

use super::{Config, ConfigError};
use crate::origin::Params;

/// The settings as config keys and TOML values, in the config's order.
fn entries(p: &Params) -> [(&'static str, Item); 9] {
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
    ]
}

/// The lines to paste into a config file for these settings.
pub(crate) fn snippet(p: &Params) -> String {
    entries(p)
        .iter()
        .map(|(k, v)| format!("{k} = {}\n", v.to_string().trim()))
        .collect()
}

/// Write `p` into the config file at `path` (created, with its folder, if
/// missing), keeping everything else in it. Returns the file written.
pub(crate) fn save_params(path: &Path, p: &Params) -> Result<PathBuf, ConfigError> {
    let invalid = |message: String| ConfigError::Invalid {
        path: path.to_path_buf(),
        message,
    };
    // A link is written through: the file it names changes, the link stays.
    let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let text = if target.exists() {
        let bytes =
            crate::source::read_file(&target, 1 << 20).map_err(|reason| ConfigError::Read {
                path: path.to_path_buf(),
                reason,
            })?;
        String::from_utf8(bytes).map_err(|_| ConfigError::NotText(path.to_path_buf()))?
    } else {
        String::new()
    };
    let mut doc: DocumentMut = text.parse().map_err(|e| invalid(format!("{e}")))?;
    for (key, item) in entries(p) {
        match doc.get_mut(key).and_then(Item::as_value_mut) {
            // The value alone: the key's comments and spacing stay.
            Some(v) => {
                let decor = v.decor().clone();
                *v = item.into_value().expect("a value");
                *v.decor_mut() = decor;
            }
            None => {
                doc.insert(key, item);
            }
        }
    }
    let new = doc.to_string();
    Config::from_toml(&new).map_err(|e| invalid(e.to_string()))?;
    if let Some(dir) = target.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| invalid(format!("cannot create its folder: {e}")))?;
    }
    crate::fsio::write_atomic(&target, |w| std::io::Write::write_all(w, new.as_bytes()))
        .map_err(|e| invalid(format!("cannot write it: {e}")))?;
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::origin::{Selector, TableSize};

    fn tuned() -> Params {
        Params {
            selector: Selector::Win(8),
            table_size: TableSize::Bytes(12 << 10),
            k: 6,
            ..Params::default()
        }
    }

    fn temp(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("lineage-save-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn settings_change_and_the_persons_file_stays_as_written() {
        let dir = temp("keep");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("config.toml");
        let before = "# my lineage settings\n\n\
                      # small table for the laptop\n\
                      table_size = \"1MiB\"   # was 64MiB\n\
                      order = \"path\"\n\n\
                      [watch]\n\
                      # quiet editor\n\
                      debounce_ms = 500\n";
        std::fs::write(&path, before).unwrap();
        save_params(&path, &tuned()).unwrap();
        let after = std::fs::read_to_string(&path).unwrap();
        for kept in [
            "# my lineage settings\n",
            "# small table for the laptop\ntable_size = \"12KiB\"",
            "order = \"path\"",
            "[watch]\n# quiet editor\ndebounce_ms = 500\n",
        ] {
            assert!(after.contains(kept), "{kept:?} in:\n{after}");
        }
        let c = Config::from_toml(&after).unwrap();
        assert_eq!(c.params(), tuned());
        assert_eq!(c.watch.debounce_ms, 500);
        // New keys sit before the first table, where TOML reads them as top level.
        assert!(after.find("selector").unwrap() < after.find("[watch]").unwrap());
        // Saving again changes nothing.
        save_params(&path, &tuned()).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), after);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_missing_file_and_its_folder_are_created_and_a_link_stays_a_link() {
        let dir = temp("new");
        let path = dir.join("lineage").join("config.toml");
        save_params(&path, &tuned()).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, snippet(&tuned()));
        assert_eq!(Config::from_toml(&text).unwrap().params(), tuned());
        #[cfg(unix)]
        {
            let link = dir.join("link.toml");
            std::os::unix::fs::symlink(&path, &link).unwrap();
            save_params(&link, &Params::default()).unwrap();
            assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
            let c = Config::load(Some(&path)).unwrap();
            assert_eq!(c.params(), Params::default());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_file_lineage_would_refuse_is_not_written() {
        let dir = temp("bad");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("config.toml");
        for bad in ["k = [", "no_such_key = 1\n"] {
            std::fs::write(&path, bad).unwrap();
            assert!(save_params(&path, &tuned()).is_err(), "{bad}");
            assert_eq!(std::fs::read_to_string(&path).unwrap(), bad, "untouched");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
