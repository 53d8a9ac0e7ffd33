//! Where documents come from: walking a root, choosing files by include and
//! exclude patterns and `.gitignore` files, and reading them with a reason for
//! every file left out; a root's documents read and prepared in parallel, in
//! order (`corpus`). The root is only ever read.
#![warn(missing_docs)]

pub mod corpus;
mod gitignore;
pub mod history;
mod inclusion;
pub mod name;
pub(crate) mod order;
mod poll;
pub mod watch;

pub use order::{Order, sort};

use std::fmt;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use walkdir::WalkDir;

use inclusion::{Kind, Rules, Verdict};

/// Default include patterns (docs/formats.md §1): text-like files.
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

/// An include or exclude pattern that is not a glob.
#[derive(Debug, thiserror::Error)]
#[error("invalid pattern '{pattern}': {source}")]
pub struct PatternError {
    /// The pattern as given (all of them, space-separated, when only the
    /// set fails).
    pub pattern: String,
    /// What globset found wrong with it.
    #[source]
    pub source: globset::Error,
}

/// Which files under a root are documents. Patterns match the path relative
/// to the root with `/` separators; `*` also crosses `/`, so `*.md` matches
/// `a/b.md`. Include patterns ignore case.
pub struct Filter {
    include: GlobSet,
    exclude: GlobSet,
}

impl Filter {
    /// A filter of these include and exclude patterns; the first that is
    /// not a glob is an error.
    pub fn new(include: &[String], exclude: &[String]) -> Result<Filter, PatternError> {
        let build = |patterns: &[String], case_insensitive: bool| {
            let mut b = GlobSetBuilder::new();
            for p in patterns {
                let glob = GlobBuilder::new(p)
                    .case_insensitive(case_insensitive)
                    .literal_separator(false)
                    .build()
                    .map_err(|source| PatternError {
                        pattern: p.clone(),
                        source,
                    })?;
                b.add(glob);
            }
            b.build().map_err(|source| PatternError {
                pattern: patterns.join(" "),
                source,
            })
        };
        Ok(Filter {
            include: build(include, true)?,
            exclude: build(exclude, false)?,
        })
    }

    /// The default filter of docs/formats.md §1.
    pub fn default_patterns() -> Filter {
        let s = |v: &[&str]| v.iter().map(|p| p.to_string()).collect::<Vec<_>>();
        Filter::new(&s(DEFAULT_INCLUDE), &s(DEFAULT_EXCLUDE)).expect("valid default patterns")
    }

    pub(crate) fn is_excluded(&self, rel: &str) -> bool {
        self.exclude.is_match(rel)
    }

    pub(crate) fn is_document(&self, rel: &str) -> bool {
        self.include.is_match(rel) && !self.exclude.is_match(rel)
    }
}

/// A document file found by a walk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileEntry {
    /// Path relative to the root, `/`-separated.
    pub path: String,
    /// The path it is read by: under the root (a followed link's target).
    pub abs: PathBuf,
    /// Its size in bytes when walked.
    pub size: u64,
    /// Its modification time when walked (the epoch where none is given).
    pub mtime: SystemTime,
    /// Its status change time when walked, nanoseconds since the epoch (0
    /// where the platform has none): a rewrite that puts size and mtime
    /// back (`cp -p`, `tar x`, `rsync -t`) still moves it.
    pub ctime_ns: i64,
    /// Which file this is, whatever its name: see `file_id`.
    pub file_id: u64,
    /// How many names (hard links) the file has: another name's document
    /// changes with this one's content.
    pub links: u64,
}

/// How many names (hard links) the file of `m` has; 1 where the platform
/// does not say.
pub(crate) fn links(m: &fs::Metadata) -> u64 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        m.nlink()
    }
    #[cfg(not(unix))]
    {
        let _ = m;
        1
    }
}

/// Nanoseconds since the Unix epoch of `t` (negative before it), as the
/// index stores a file's times and a cluster's check hashes them.
pub fn time_ns(t: SystemTime) -> i64 {
    let ns = |d: std::time::Duration| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX);
    match t.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => ns(d),
        Err(e) => -ns(e.duration()),
    }
}

/// The status change time of `m`, nanoseconds since the epoch; 0 where the
/// platform has none.
pub fn ctime_ns(m: &fs::Metadata) -> i64 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        m.ctime()
            .saturating_mul(1_000_000_000)
            .saturating_add(m.ctime_nsec())
    }
    #[cfg(not(unix))]
    {
        let _ = m;
        0
    }
}

/// A file's identity across renames: its device and inode, and its birth
/// time where the file system records one (so an inode freed and reused
/// for a new file within one batch is not taken for the old file). 0 where
/// the platform has no inodes.
pub(crate) fn file_id(m: &fs::Metadata) -> u64 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let born = m
            .created()
            .ok()
            .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as u64);
        // A fixed mix (murmur3's finaliser step): ids are stored in the index
        // and compared across runs and Rust versions.
        let mut h = 0x9E37_79B9_7F4A_7C15u64;
        for v in [m.dev(), m.ino(), born] {
            h = (h ^ v).wrapping_mul(0xff51_afd7_ed55_8ccd);
            h ^= h >> 33;
        }
        h.max(1)
    }
    #[cfg(not(unix))]
    {
        let _ = m;
        0
    }
}

/// Why a file is not a document of the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SkipReason {
    /// A NUL byte in its first 8 KiB.
    Binary,
    /// Larger than `max_file_size`: not read at all.
    TooLarge {
        /// Its size in bytes.
        size: u64,
        /// The `max_file_size` in force.
        max: u64,
    },
    /// The OS refused (permission denied, I/O error).
    Unreadable(String),
    /// Gone between the walk and the read.
    Vanished,
    /// A symbolic link; links are not followed.
    Symlink,
    /// A symbolic link that leads back into itself (followed links only).
    SymlinkLoop,
    /// A symbolic link to somewhere outside the root (followed links only).
    OutsideRoot,
    /// A FIFO, a device or a socket: never opened for reading (a FIFO with
    /// no writer would block the reader forever, a device never ends).
    NotRegular(&'static str),
    /// A git submodule (its pages are another repository's).
    Submodule,
    /// A Git LFS pointer: the file itself is not in the repository.
    LfsPointer,
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipReason::Binary => f.write_str("binary"),
            SkipReason::TooLarge { size, max } => write!(
                f,
                "too large: {size} bytes (max_file_size {})",
                lineage_core::bytesize::format_bytes(*max)
            ),
            SkipReason::Unreadable(e) => write!(f, "unreadable: {e}"),
            SkipReason::Vanished => f.write_str("vanished while being read"),
            SkipReason::Symlink => f.write_str("symlink (not followed)"),
            SkipReason::SymlinkLoop => f.write_str("symlink loop"),
            SkipReason::OutsideRoot => f.write_str("symlink to outside the root"),
            SkipReason::NotRegular(kind) => write!(f, "not a regular file ({kind})"),
            SkipReason::Submodule => f.write_str("a git submodule (not read)"),
            SkipReason::LfsPointer => f.write_str("a Git LFS pointer (its file is not in git)"),
        }
    }
}

/// A file left out, with the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// Path relative to the root, `/`-separated.
    pub path: String,
    /// Why it is not a document.
    pub reason: SkipReason,
}

/// The result of walking a root: document files (unsorted) and files left out.
#[derive(Debug, Default)]
pub struct Walk {
    /// The document files found, in no order.
    pub files: Vec<FileEntry>,
    /// The files left out, each with its reason.
    pub skipped: Vec<Skipped>,
}

/// Why a root cannot be walked.
#[derive(Debug, thiserror::Error)]
pub enum RootError {
    /// The root is missing, or the OS refused to stat or list it.
    #[error("cannot read root {}: {source}", path.display())]
    Unreadable {
        /// The root as given.
        path: PathBuf,
        /// The OS's error.
        #[source]
        source: io::Error,
    },
    /// The root is not a folder (a file, a device, …).
    #[error("root {} is not a directory", .0.display())]
    NotADirectory(PathBuf),
}

impl RootError {
    fn unreadable(root: &Path) -> impl Fn(io::Error) -> RootError + '_ {
        move |source| RootError::Unreadable {
            path: root.to_path_buf(),
            source,
        }
    }
}

/// How a walk treats `.gitignore` files and symbolic links.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WalkOptions {
    /// Leave out what the `.gitignore` files of the root and its folders name.
    pub gitignore: bool,
    /// Follow symbolic links that stay inside the root; loops are detected.
    pub follow_symlinks: bool,
}

impl Default for WalkOptions {
    fn default() -> WalkOptions {
        WalkOptions {
            gitignore: true,
            follow_symlinks: false,
        }
    }
}

/// Walk `root` with the default [`WalkOptions`].
#[cfg(test)]
pub(crate) fn walk(root: &Path, filter: &Filter) -> Result<Walk, RootError> {
    walk_with(root, filter, WalkOptions::default())
}

/// Whether `root` is a folder that can be read, and which one: its device
/// and inode (0 where there are none), so a watcher can tell a root that was
/// replaced or moved away from the one it watches.
pub fn check_root(root: &Path) -> Result<(u64, u64), RootError> {
    let cannot = RootError::unreadable(root);
    let meta = fs::metadata(root).map_err(&cannot)?;
    if !meta.is_dir() {
        return Err(RootError::NotADirectory(root.to_path_buf()));
    }
    fs::read_dir(root).map_err(cannot)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Ok((meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    Ok((0, 0))
}

/// Walk `root` and list its document files. Unreadable folders and files
/// inside are reported under `skipped`; an unreadable root is an error.
pub fn walk_with(root: &Path, filter: &Filter, opts: WalkOptions) -> Result<Walk, RootError> {
    let cannot = RootError::unreadable(root);
    check_root(root)?;
    let canonical_root = fs::canonicalize(root).map_err(cannot)?;
    let rules = Rules {
        root,
        filter,
        gitignore: opts.gitignore,
    };
    let mut out = Walk::default();
    let mut ignores = gitignore::IgnoreStack::default();
    if opts.gitignore {
        ignores.enter(root, 0);
    }
    // Links that lead outside the root, listed after the rest.
    let mut outside = Vec::new();
    let mut entries = WalkDir::new(root)
        .follow_links(opts.follow_symlinks)
        .sort_by_file_name()
        .into_iter();
    while let Some(entry) = entries.next() {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                let path = e.path().map(|p| rel_path(root, p)).unwrap_or_default();
                if let Some(p) = e.path() {
                    ignores.leave_to(e.depth());
                    if rules.left_out(&path, p, false, &ignores) {
                        continue;
                    }
                }
                let reason = if e.loop_ancestor().is_some() || e.io_error().is_some_and(is_loop) {
                    SkipReason::SymlinkLoop
                } else {
                    SkipReason::Unreadable(
                        e.io_error()
                            .map_or_else(|| e.to_string(), |io| io.to_string()),
                    )
                };
                out.skipped.push(Skipped { path, reason });
                continue;
            }
        };
        let rel = rel_path(root, entry.path());
        let kind = Kind::of(entry.file_type());
        let verdict = if entry.depth() == 0 {
            rules.kept(&rel, kind)
        } else {
            ignores.leave_to(entry.depth());
            rules.decide(&rel, entry.path(), kind, &ignores)
        };
        // A followed link must lead to somewhere inside the root.
        let leads_out = || {
            opts.follow_symlinks
                && entry.path_is_symlink()
                && fs::canonicalize(entry.path()).is_ok_and(|c| !c.starts_with(&canonical_root))
        };
        if verdict == Verdict::LeftOut || leads_out() {
            if verdict != Verdict::LeftOut {
                outside.push(Skipped {
                    path: rel,
                    reason: SkipReason::OutsideRoot,
                });
            }
            if entry.file_type().is_dir() {
                entries.skip_current_dir();
            }
            continue;
        }
        match verdict {
            // The root's `.gitignore` is read above.
            Verdict::Folder if opts.gitignore && entry.depth() > 0 => {
                ignores.enter(entry.path(), entry.depth())
            }
            Verdict::LeftOut | Verdict::Folder | Verdict::NotDocument => {}
            Verdict::Skip(reason) => out.skipped.push(Skipped { path: rel, reason }),
            Verdict::Document => {
                // Read a followed link's target by its own path, checked
                // above to be inside the root.
                let abs = if entry.path_is_symlink() {
                    fs::canonicalize(entry.path()).unwrap_or_else(|_| entry.path().to_path_buf())
                } else {
                    entry.path().to_path_buf()
                };
                match entry.metadata() {
                    Ok(m) => out.files.push(FileEntry {
                        path: rel,
                        abs,
                        size: m.len(),
                        mtime: m.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                        ctime_ns: ctime_ns(&m),
                        file_id: file_id(&m),
                        links: links(&m),
                    }),
                    Err(e) => out.skipped.push(Skipped {
                        path: rel,
                        reason: SkipReason::Unreadable(e.to_string()),
                    }),
                }
            }
        }
    }
    out.skipped.extend(outside);
    Ok(out)
}

/// Whether an I/O error says "too many levels of symbolic links".
fn is_loop(e: &io::Error) -> bool {
    #[cfg(target_os = "linux")]
    {
        e.raw_os_error() == Some(libc::ELOOP)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = e;
        false
    }
}

/// Read a document's bytes, or say why it is left out. Only a regular file
/// is read: the path is opened without blocking and without following a
/// link (what is there now may not be what the walk saw: a FIFO or a link
/// to a device swapped in), and the opened handle is checked. A file over
/// `max` bytes is not read; whether it is binary is decided from its first
/// block, before the rest is read; a file that grows past `max` while it is
/// read is caught too.
pub fn read(file: &FileEntry, max: u64) -> Result<Vec<u8>, SkipReason> {
    if file.size > max {
        return Err(SkipReason::TooLarge {
            size: file.size,
            max,
        });
    }
    read_file(&file.abs, max)
}

/// The bytes of the regular file at `path` ([`read`] without a walk's stat).
pub fn read_file(path: &Path, max: u64) -> Result<Vec<u8>, SkipReason> {
    let (mut f, size) = open_regular(path)?;
    if size > max {
        return Err(SkipReason::TooLarge { size, max });
    }
    read_checked(&mut f, size, max)
}

/// Open `path` for reading if it is a regular file, never blocking; with
/// its size, from the same `fstat`.
fn open_regular(path: &Path) -> Result<(fs::File, u64), SkipReason> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    // Never block on a FIFO or a device, never follow a link.
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW);
    }
    let f = options.open(path).map_err(|e| {
        if is_loop(&e) {
            SkipReason::Symlink
        } else {
            classify_io(e)
        }
    })?;
    let meta = f.metadata().map_err(classify_io)?;
    if !meta.is_file() {
        return Err(SkipReason::NotRegular(kind_of(meta.file_type())));
    }
    Ok((f, meta.len()))
}

/// The first block, checked for binary content, then the rest: at most
/// `max` bytes in all.
pub(crate) fn read_checked(f: &mut impl Read, size: u64, max: u64) -> Result<Vec<u8>, SkipReason> {
    const BLOCK: u64 = 8192;
    let mut bytes = Vec::with_capacity(size.min(max) as usize + 1);
    f.take(BLOCK).read_to_end(&mut bytes).map_err(classify_io)?;
    if lineage_core::text::looks_binary(&bytes) {
        return Err(SkipReason::Binary);
    }
    if bytes.starts_with(history::LFS_POINTER) {
        return Err(SkipReason::LfsPointer);
    }
    let left = (max + 1).saturating_sub(bytes.len() as u64);
    f.take(left).read_to_end(&mut bytes).map_err(classify_io)?;
    if bytes.len() as u64 > max {
        return Err(SkipReason::TooLarge {
            size: bytes.len() as u64,
            max,
        });
    }
    Ok(bytes)
}

/// What kind of file that is not regular this is.
fn kind_of(ft: fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "fifo";
        }
        if ft.is_char_device() {
            return "character device";
        }
        if ft.is_block_device() {
            return "block device";
        }
        if ft.is_socket() {
            return "socket";
        }
    }
    if ft.is_dir() {
        "folder"
    } else if ft.is_symlink() {
        "symlink"
    } else {
        "special file"
    }
}

/// Why an I/O error on a file leaves it out.
pub(crate) fn classify_io(e: io::Error) -> SkipReason {
    match e.kind() {
        io::ErrorKind::NotFound => SkipReason::Vanished,
        _ if is_loop(&e) => SkipReason::SymlinkLoop,
        _ => SkipReason::Unreadable(e.to_string()),
    }
}

/// `path` relative to `root`, with `/` separators: its [`name`].
pub fn rel_path(root: &Path, path: &Path) -> String {
    // Most names are their own: taken whole, a walk of 100,000 files spends
    // a tenth of its time less here.
    match plain_rel(root, path) {
        Some(s) => s.to_string(),
        None => rel_path_by_components(root, path),
    }
}

/// [`rel_path`] the long way: component by component, each named.
fn rel_path_by_components(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let parts: Vec<_> = rel
        .components()
        .map(|c| name::of_os(c.as_os_str()))
        .collect();
    parts.join("/")
}

/// `path` relative to `root` when its bytes start with the root's and the
/// rest is its own name (`Path::strip_prefix` compares component by
/// component).
#[cfg(unix)]
fn plain_rel<'a>(root: &Path, path: &'a Path) -> Option<&'a str> {
    use std::os::unix::ffi::OsStrExt;
    let (r, p) = (root.as_os_str().as_bytes(), path.as_os_str().as_bytes());
    let rest = p.strip_prefix(r)?.strip_prefix(b"/")?;
    std::str::from_utf8(rest).ok().filter(|s| is_plain(s))
}

#[cfg(not(unix))]
fn plain_rel<'a>(_: &Path, _: &'a Path) -> Option<&'a str> {
    None
}

/// Whether `rel` is its own name: no escape to add, and its components
/// joined by `/` give it back (no empty or `.` component, not absolute).
#[cfg_attr(not(unix), allow(dead_code))]
fn is_plain(rel: &str) -> bool {
    !rel.is_empty()
        && !rel.contains(name::ESCAPE)
        && rel.split('/').all(|c| !c.is_empty() && c != ".")
}

#[cfg(test)]
mod tests {
    use super::*;
    use lineage_testing::TempDir;

    proptest::proptest! {
        #[test]
        fn shortcuts_name_a_path_as_its_components_do(
            root in proptest::sample::select(vec!["/r", "/r/", "/", "r", "/r/s"]),
            parts in proptest::collection::vec(
                proptest::sample::select(vec!["a", "é", ".", "..", "", "/", "x.md", "\u{10FFFE}", "r"]),
                0..8,
            ),
        ) {
            let path = format!("{root}/{}", parts.concat());
            let (root, path) = (Path::new(root), Path::new(&path));
            proptest::prop_assert_eq!(rel_path(root, path), rel_path_by_components(root, path));
        }
    }

    #[test]
    fn a_pattern_that_is_not_a_glob_is_named() {
        let e = Filter::new(&["*.md".into(), "a[b".into()], &[])
            .err()
            .unwrap();
        assert_eq!(e.pattern, "a[b");
        assert!(e.to_string().starts_with("invalid pattern 'a[b': "), "{e}");
        let e = Filter::new(&[], &["{x".into()]).err().unwrap();
        assert_eq!(e.pattern, "{x");
    }

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

    fn paths(w: &Walk) -> Vec<&str> {
        let mut v: Vec<&str> = w.files.iter().map(|f| f.path.as_str()).collect();
        v.sort();
        v
    }

    fn skips(w: &Walk) -> Vec<(String, SkipReason)> {
        let mut v: Vec<_> = w
            .skipped
            .iter()
            .map(|s| (s.path.clone(), s.reason.clone()))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }

    fn entry(root: &Path, rel: &str) -> FileEntry {
        FileEntry {
            path: rel.into(),
            abs: root.join(rel),
            size: fs::metadata(root.join(rel)).map_or(0, |m| m.len()),
            mtime: SystemTime::UNIX_EPOCH,
            ctime_ns: 0,
            file_id: 0,
            links: 1,
        }
    }

    #[test]
    fn gitignore_files_apply_below_their_folder_deepest_first() {
        let t = TempDir::new("gi");
        t.write(
            ".gitignore",
            "build/\n*.log.md\ndrafts/*.md\n!drafts/keep.md\n",
        );
        t.write("a.md", "a");
        t.write("x.log.md", "x");
        t.write("build/b.md", "b");
        t.write("drafts/d.md", "d");
        t.write("drafts/keep.md", "k");
        t.write("sub/.gitignore", "local.md\n!x.log.md\n");
        t.write("sub/local.md", "l");
        t.write("sub/x.log.md", "re-included by the deeper file");
        t.write("sub/c.md", "c");
        t.write("other/local.md", "not ignored here");
        let f = Filter::default_patterns();
        let w = walk(&t.0, &f).unwrap();
        assert_eq!(
            paths(&w),
            [
                "a.md",
                "drafts/keep.md",
                "other/local.md",
                "sub/c.md",
                "sub/x.log.md"
            ]
        );
        let off = WalkOptions {
            gitignore: false,
            ..WalkOptions::default()
        };
        assert_eq!(walk_with(&t.0, &f, off).unwrap().files.len(), 9);
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_are_skipped_or_followed_inside_the_root_only() {
        use std::os::unix::fs::symlink;
        let t = TempDir::new("links");
        let outside = TempDir::new("links-outside");
        outside.write("secret.md", "outside the root");
        t.write("docs/a.md", "a");
        symlink(t.0.join("docs"), t.0.join("alias")).unwrap(); // a folder inside
        symlink(&t.0, t.0.join("docs/up")).unwrap(); // a loop
        symlink(t.0.join("docs/a.md"), t.0.join("b.md")).unwrap(); // a file inside
        symlink(t.0.join("loop2.md"), t.0.join("loop1.md")).unwrap();
        symlink(t.0.join("loop1.md"), t.0.join("loop2.md")).unwrap();
        symlink(&outside.0, t.0.join("out")).unwrap();
        symlink(outside.0.join("secret.md"), t.0.join("s.md")).unwrap();
        let f = Filter::default_patterns();

        let w = walk(&t.0, &f).unwrap();
        assert_eq!(paths(&w), ["docs/a.md"]);
        let links: Vec<_> = skips(&w);
        assert_eq!(
            links,
            [
                ("b.md".into(), SkipReason::Symlink),
                ("loop1.md".into(), SkipReason::Symlink),
                ("loop2.md".into(), SkipReason::Symlink),
                ("s.md".into(), SkipReason::Symlink),
            ]
        );

        let follow = WalkOptions {
            follow_symlinks: true,
            ..WalkOptions::default()
        };
        let w = walk_with(&t.0, &f, follow).unwrap();
        assert_eq!(paths(&w), ["alias/a.md", "b.md", "docs/a.md"]);
        // Followed links are read by their target's path, inside the root.
        let canonical = fs::canonicalize(&t.0).unwrap();
        assert!(w.files.iter().all(|f| f.abs.starts_with(&canonical)));
        let reasons = skips(&w);
        assert_eq!(
            reasons,
            [
                ("alias/up".into(), SkipReason::SymlinkLoop),
                ("docs/up".into(), SkipReason::SymlinkLoop),
                ("loop1.md".into(), SkipReason::SymlinkLoop),
                ("loop2.md".into(), SkipReason::SymlinkLoop),
                ("out".into(), SkipReason::OutsideRoot),
                ("s.md".into(), SkipReason::OutsideRoot),
            ]
        );
    }

    #[test]
    fn a_file_removed_before_its_read_is_vanished() {
        let t = TempDir::new("vanish");
        t.write("a.md", "text");
        let e = entry(&t.0, "a.md");
        assert_eq!(read(&e, 1 << 20).unwrap(), b"text");
        fs::remove_file(t.0.join("a.md")).unwrap();
        assert_eq!(read(&e, 1 << 20), Err(SkipReason::Vanished));
    }

    #[test]
    fn permission_denied_is_unreadable_with_the_reason() {
        // Tests run as root, for whom chmod 000 does not block reads, so the
        // classification of the OS error is tested on its own.
        let e = io::Error::from(io::ErrorKind::PermissionDenied);
        match classify_io(e) {
            SkipReason::Unreadable(msg) => assert!(msg.contains("permission denied"), "{msg}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            classify_io(io::Error::from(io::ErrorKind::NotFound)),
            SkipReason::Vanished
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn fifos_devices_and_links_swapped_in_are_never_read() {
        // A regression here would block, not fail.
        lineage_testing::within(std::time::Duration::from_secs(30), || {
            let t = TempDir::new("fifo");
            t.write("a.md", "text");
            let e = entry(&t.0, "a.md");
            fs::remove_file(t.0.join("a.md")).unwrap();
            let c = std::ffi::CString::new(t.0.join("a.md").to_str().unwrap()).unwrap();
            // SAFETY: mkfifo with a NUL-terminated path and a mode.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
            // No writer: a blocking open would never return.
            assert_eq!(read(&e, 1 << 20), Err(SkipReason::NotRegular("fifo")));
            fs::remove_file(t.0.join("a.md")).unwrap();
            std::os::unix::fs::symlink("/dev/zero", t.0.join("a.md")).unwrap();
            assert_eq!(read(&e, 1 << 20), Err(SkipReason::Symlink), "not followed");
            // A walk lists a FIFO as skipped, with the reason, without opening it.
            fs::remove_file(t.0.join("a.md")).unwrap();
            // SAFETY: as above.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
            let w = walk(&t.0, &Filter::default_patterns()).unwrap();
            assert_eq!(skips(&w), [("a.md".into(), SkipReason::NotRegular("fifo"))]);
        });
    }

    #[test]
    fn binary_is_decided_from_the_first_block_before_the_rest_is_read() {
        /// Zeros without end, counting what is read.
        struct Zeros(u64);
        impl Read for Zeros {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                buf.fill(0);
                self.0 += buf.len() as u64;
                Ok(buf.len())
            }
        }
        let mut z = Zeros(0);
        assert_eq!(
            read_checked(&mut z, 10 << 30, 20 << 30),
            Err(SkipReason::Binary)
        );
        assert!(z.0 <= 8192, "read {} bytes", z.0);
        let mut text = io::Cursor::new(b"words ".repeat(3000));
        assert_eq!(
            read_checked(&mut text, 18000, 1 << 20).unwrap().len(),
            18000
        );
        let mut grown = io::Cursor::new(b"words ".repeat(3000));
        assert!(matches!(
            read_checked(&mut grown, 100, 10000),
            Err(SkipReason::TooLarge { size: 10001, .. })
        ));
    }

    #[test]
    fn a_sparse_gigabyte_is_too_large_without_being_read() {
        let t = TempDir::new("sparse");
        let f = fs::File::create(t.0.join("big.txt")).unwrap();
        f.set_len(1 << 30).unwrap();
        let e = entry(&t.0, "big.txt");
        // The reported size is the stat's, not a count of bytes read (a read
        // would stop at max + 1).
        assert_eq!(
            read(&e, 32 << 20),
            Err(SkipReason::TooLarge {
                size: 1 << 30,
                max: 32 << 20
            })
        );
    }
}
