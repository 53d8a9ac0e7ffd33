//! Where documents come from: walking a root, choosing files by include and
//! exclude patterns, and reading them with a reason for every file left out.
//! The root is only ever read.

use std::fmt;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use walkdir::WalkDir;

/// Default include patterns (CONTRACT §1): text-like files.
pub const DEFAULT_INCLUDE: &[&str] = &[
    "*.txt",
    "*.md",
    "*.markdown",
    "*.rst",
    "*.adoc",
    "*.asciidoc",
    "*.org",
    "*.tex",
    "*.html",
    "*.htm",
];

/// Default exclude patterns: hidden files and folders (any path component
/// starting with a dot, such as `.git/`).
pub const DEFAULT_EXCLUDE: &[&str] = &[".*", "**/.*"];

/// Which files under a root are documents. Patterns match the path relative
/// to the root with `/` separators; `*` also crosses `/`, so `*.md` matches
/// `a/b.md`. Include patterns ignore case.
pub struct Filter {
    include: GlobSet,
    exclude: GlobSet,
}

impl Filter {
    pub fn new(include: &[String], exclude: &[String]) -> Result<Filter, String> {
        let build = |patterns: &[String], case_insensitive: bool| {
            let mut b = GlobSetBuilder::new();
            for p in patterns {
                let glob = GlobBuilder::new(p)
                    .case_insensitive(case_insensitive)
                    .literal_separator(false)
                    .build()
                    .map_err(|e| format!("invalid pattern '{p}': {e}"))?;
                b.add(glob);
            }
            b.build().map_err(|e| e.to_string())
        };
        Ok(Filter {
            include: build(include, true)?,
            exclude: build(exclude, false)?,
        })
    }

    /// The default filter of CONTRACT §1.
    pub fn default_patterns() -> Filter {
        let s = |v: &[&str]| v.iter().map(|p| p.to_string()).collect::<Vec<_>>();
        Filter::new(&s(DEFAULT_INCLUDE), &s(DEFAULT_EXCLUDE)).expect("valid default patterns")
    }

    pub fn is_excluded(&self, rel: &str) -> bool {
        self.exclude.is_match(rel)
    }

    pub fn is_document(&self, rel: &str) -> bool {
        self.include.is_match(rel) && !self.exclude.is_match(rel)
    }
}

/// A document file found by a walk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileEntry {
    /// Path relative to the root, `/`-separated.
    pub path: String,
    pub abs: PathBuf,
    pub size: u64,
    pub mtime: SystemTime,
}

/// Why a file is not a document of the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SkipReason {
    /// A NUL byte in its first 8 KiB.
    Binary,
    /// Larger than `max_file_size`: not read at all.
    TooLarge { size: u64, max: u64 },
    /// The OS refused (permission denied, I/O error).
    Unreadable(String),
    /// Gone between the walk and the read.
    Vanished,
    /// A symbolic link; links are not followed.
    Symlink,
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipReason::Binary => f.write_str("binary"),
            SkipReason::TooLarge { size, max } => write!(
                f,
                "too large: {size} bytes (max_file_size {})",
                crate::origin::table::format_bytes(*max)
            ),
            SkipReason::Unreadable(e) => write!(f, "unreadable: {e}"),
            SkipReason::Vanished => f.write_str("vanished while being read"),
            SkipReason::Symlink => f.write_str("symlink (not followed)"),
        }
    }
}

/// A file left out, with the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    pub path: String,
    pub reason: SkipReason,
}

/// The result of walking a root: document files (unsorted) and files left out.
#[derive(Debug, Default)]
pub struct Walk {
    pub files: Vec<FileEntry>,
    pub skipped: Vec<Skipped>,
}

/// A root that cannot be walked at all.
#[derive(Debug)]
pub struct RootError(pub String);

impl fmt::Display for RootError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Walk `root` and list its document files. Unreadable folders and files
/// inside are reported under `skipped`; an unreadable root is an error.
pub fn walk(root: &Path, filter: &Filter) -> Result<Walk, RootError> {
    let meta = fs::metadata(root)
        .map_err(|e| RootError(format!("cannot read root {}: {}", root.display(), e)))?;
    if !meta.is_dir() {
        return Err(RootError(format!(
            "root {} is not a directory",
            root.display()
        )));
    }
    fs::read_dir(root)
        .map_err(|e| RootError(format!("cannot read root {}: {}", root.display(), e)))?;
    let mut out = Walk::default();
    let walker = WalkDir::new(root)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !filter.is_excluded(&rel_path(root, e.path())));
    for entry in walker {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                let path = e.path().map(|p| rel_path(root, p)).unwrap_or_default();
                let msg = e
                    .io_error()
                    .map_or_else(|| e.to_string(), |io| io.to_string());
                out.skipped.push(Skipped {
                    path,
                    reason: SkipReason::Unreadable(msg),
                });
                continue;
            }
        };
        let rel = rel_path(root, entry.path());
        let ft = entry.file_type();
        if ft.is_dir() || !filter.is_document(&rel) {
            continue;
        }
        if ft.is_symlink() {
            out.skipped.push(Skipped {
                path: rel,
                reason: SkipReason::Symlink,
            });
            continue;
        }
        if !ft.is_file() {
            continue;
        }
        match entry.metadata() {
            Ok(m) => out.files.push(FileEntry {
                path: rel,
                abs: entry.path().to_path_buf(),
                size: m.len(),
                mtime: m.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            }),
            Err(e) => out.skipped.push(Skipped {
                path: rel,
                reason: SkipReason::Unreadable(e.to_string()),
            }),
        }
    }
    Ok(out)
}

/// Read a document's bytes, or say why it is left out. A file over `max` bytes
/// is not read (its size is checked first and again while reading, so a file
/// that grows is caught too).
pub fn read(file: &FileEntry, max: u64) -> Result<Vec<u8>, SkipReason> {
    if file.size > max {
        return Err(SkipReason::TooLarge {
            size: file.size,
            max,
        });
    }
    let f = fs::File::open(&file.abs).map_err(classify_io)?;
    let mut bytes = Vec::with_capacity(file.size as usize);
    f.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(classify_io)?;
    if bytes.len() as u64 > max {
        return Err(SkipReason::TooLarge {
            size: bytes.len() as u64,
            max,
        });
    }
    if crate::text::looks_binary(&bytes) {
        return Err(SkipReason::Binary);
    }
    Ok(bytes)
}

fn classify_io(e: io::Error) -> SkipReason {
    match e.kind() {
        io::ErrorKind::NotFound => SkipReason::Vanished,
        _ => SkipReason::Unreadable(e.to_string()),
    }
}

/// `path` relative to `root`, with `/` separators.
pub fn rel_path(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_filter_takes_text_and_skips_hidden() {
        let f = Filter::default_patterns();
        assert!(f.is_document("a.md"));
        assert!(f.is_document("docs/guide/INDEX.HTML"));
        assert!(f.is_document("notes.txt"));
        assert!(!f.is_document("logo.png"));
        assert!(!f.is_document(".hidden.md"));
        assert!(!f.is_document("a/.git/notes.md"));
        assert!(!f.is_document(".git/x.txt"));
        assert!(f.is_excluded(".git"));
        assert!(f.is_excluded("a/.cache"));
        assert!(!f.is_excluded("a/b"));
    }

    #[test]
    fn bad_pattern_is_an_error() {
        assert!(Filter::new(&["a[".into()], &[]).is_err());
    }
}
