//! lineage's own files (the table snapshot, pocket files, the sample store):
//! written atomically through a temp file nobody can plant, read only if
//! they are regular files of a sane size.
//!
//! A write goes to a new file in the target's folder, created exclusively
//! (`O_EXCL`, and no link followed) under an unpredictable name, synced,
//! renamed over the target, and the folder synced; on any error the temp
//! file is removed, so a full disk leaves nothing behind. A target that
//! exists and is not a regular file (a device, a FIFO, a folder) is refused:
//! renaming over it would destroy it.

pub mod framed;
pub mod xxh64;

use std::fs::{self, File, OpenOptions};
use std::hash::{BuildHasher, RandomState};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Temp files of this process start with this, end with `.tmp`.
const PREFIX: &str = ".lineage-";

/// Write `target` atomically with what `fill` writes; the bytes written.
pub fn write_atomic(
    target: &Path,
    fill: impl FnOnce(&mut io::BufWriter<File>) -> io::Result<()>,
) -> io::Result<u64> {
    let atomic = AtomicFile::create(target)?;
    let mut w = io::BufWriter::with_capacity(1 << 20, atomic.file()?);
    fill(&mut w)?;
    let n = w
        .into_inner()
        .map_err(|e| e.into_error())?
        .metadata()?
        .len();
    atomic.commit()?;
    Ok(n)
}

/// A file written whole or not at all, for a writer that streams: a temp
/// file beside `target` (whatever stands at `target` and is not a regular
/// file is refused), renamed over it by [`AtomicFile::commit`] once synced;
/// dropped uncommitted (a failed run), the temp file goes and `target` is
/// as it was.
#[derive(Debug)]
pub struct AtomicFile {
    target: PathBuf,
    tmp: PathBuf,
    file: Option<File>,
}

impl AtomicFile {
    /// Begin writing `target`.
    pub fn create(target: &Path) -> io::Result<AtomicFile> {
        refuse_special(target)?;
        let (tmp, file) = create_temp(&parent(target))?;
        Ok(AtomicFile {
            target: target.to_path_buf(),
            tmp,
            file: Some(file),
        })
    }

    /// A handle to write the temp file through.
    pub fn file(&self) -> io::Result<File> {
        self.file.as_ref().expect("until committed").try_clone()
    }

    /// Sync what was written and put it at the target.
    pub fn commit(mut self) -> io::Result<()> {
        let file = self.file.take().expect("committed once");
        file.sync_all()?;
        drop(file);
        fs::rename(&self.tmp, &self.target)?;
        // Renamed: nothing for the drop to remove.
        self.tmp = PathBuf::new();
        sync_dir(&parent(&self.target))
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.tmp.as_os_str().is_empty() {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

/// The folder `target` lies in (`.` for a bare name).
fn parent(target: &Path) -> PathBuf {
    match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Append `bytes` to `path` (created if missing; a link is not followed)
/// and sync them; the file's length after. On an error the file is cut back
/// to its length before, so a full disk leaves no torn tail.
pub fn append_synced(path: &Path, bytes: &[u8]) -> io::Result<u64> {
    use std::io::Write;
    refuse_special(path)?;
    let mut options = OpenOptions::new();
    options.append(true).create(true);
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let mut f = options.open(path)?;
    let meta = f.metadata()?;
    if !meta.is_file() {
        return Err(not_regular(path));
    }
    let before = meta.len();
    let done = f.write_all(bytes).and_then(|()| f.sync_data());
    if let Err(e) = done {
        let _ = f.set_len(before);
        return Err(e);
    }
    if before == 0 {
        match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => sync_dir(d)?,
            _ => sync_dir(Path::new("."))?,
        }
    }
    Ok(before + bytes.len() as u64)
}

/// `p` made absolute with symlinks resolved as far as it exists: where a
/// file lineage writes would really land (is it inside the watched folder?).
pub fn resolve(p: &Path) -> io::Result<PathBuf> {
    let abs = std::path::absolute(p)?;
    let mut existing = abs.as_path();
    let mut rest = Vec::new();
    while !existing.exists() {
        rest.push(existing.file_name().unwrap_or_default().to_os_string());
        existing = match existing.parent() {
            Some(parent) => parent,
            None => break,
        };
    }
    let mut out = fs::canonicalize(existing)?;
    out.extend(rest.iter().rev());
    Ok(out)
}

/// Remove temp files an earlier process left in `dir` (killed mid-write).
pub fn remove_stale_temps(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with(PREFIX) && name.ends_with(".tmp") {
            let _ = fs::remove_file(e.path());
        }
    }
}

/// The bytes of `path` if it is a regular file of at most `max` bytes:
/// opened without blocking (a FIFO) and never read past `max` (a device).
pub fn read_bounded(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    read_whole(open_checked(path, max, true)?, max, path)
}

/// [`read_bounded`] for a file of lineage's own, in a folder of its own: a
/// link at its name is damage, never read through.
pub fn read_own(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    read_whole(open_checked(path, max, false)?, max, path)
}

/// A file of lineage's own opened to read, with its length, for a reader
/// that streams it: a regular file of at most `max` bytes, no link followed.
/// A larger one (a sparse file of terabytes) is refused unread
/// ([`io::ErrorKind::FileTooLarge`]), never allocated.
pub fn open_own(path: &Path, max: u64) -> io::Result<(File, u64)> {
    open_checked(path, max, false)
}

fn open_checked(path: &Path, max: u64, follow: bool) -> io::Result<(File, u64)> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let nofollow = if follow { 0 } else { libc::O_NOFOLLOW };
        options.custom_flags(libc::O_NONBLOCK | nofollow);
    }
    #[cfg(not(target_os = "linux"))]
    if !follow && fs::symlink_metadata(path)?.file_type().is_symlink() {
        return Err(not_regular(path));
    }
    let f = match options.open(path) {
        Ok(f) => f,
        // O_NOFOLLOW on a link: ELOOP, which says nothing to a person.
        Err(_) if !follow && fs::symlink_metadata(path).is_ok_and(|m| m.is_symlink()) => {
            return Err(not_regular(path));
        }
        Err(e) => return Err(e),
    };
    let meta = f.metadata()?;
    if !meta.is_file() {
        return Err(not_regular(path));
    }
    if meta.len() > max {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!(
                "{} is {} bytes, more than it can be ({max} at most)",
                path.display(),
                meta.len()
            ),
        ));
    }
    Ok((f, meta.len()))
}

fn read_whole((f, len): (File, u64), max: u64, path: &Path) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::with_capacity(len as usize);
    f.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("{} grew past {max} bytes", path.display()),
        ));
    }
    Ok(bytes)
}

fn refuse_special(target: &Path) -> io::Result<()> {
    match fs::symlink_metadata(target) {
        Ok(m) if !m.is_file() => Err(not_regular(target)),
        _ => Ok(()),
    }
}

/// In a folder of ours, whatever stands at a file's name and is not a
/// regular file (a FIFO, a link, a device) is damage: removed, so the file
/// can be written there. A folder stays (it is not ours to remove).
pub fn clear_special(path: &Path) {
    if fs::symlink_metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        let _ = fs::remove_file(path);
    }
}

/// [`clear_special`] for a file only lineage writes, which must be written
/// now (the table snapshot and journal): a folder at its name is moved
/// aside to `NAME.aside-N` in the same folder, kept whole (its contents are
/// not ours to remove) and out of the way. Returns where a folder went.
pub fn clear_own(path: &Path) -> io::Result<Option<PathBuf>> {
    let Ok(m) = fs::symlink_metadata(path) else {
        return Ok(None);
    };
    if m.is_file() {
        return Ok(None);
    }
    if !m.is_dir() {
        fs::remove_file(path)?;
        return Ok(None);
    }
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".aside-");
    for n in 1..1000u32 {
        let mut aside = name.clone();
        aside.push(n.to_string());
        let aside = path.with_file_name(aside);
        // A rename onto an empty folder would replace it: only a free name.
        if fs::symlink_metadata(&aside).is_err() {
            fs::rename(path, &aside)?;
            return Ok(Some(aside));
        }
    }
    Err(not_regular(path))
}

/// The error for a path of ours that holds something other than a regular
/// file.
pub fn not_regular(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{} exists and is not a regular file", path.display()),
    )
}

/// A new file in `dir` under a name no one can guess ahead.
fn create_temp(dir: &Path) -> io::Result<(PathBuf, File)> {
    static N: AtomicU64 = AtomicU64::new(0);
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW).mode(0o644);
    }
    loop {
        // RandomState is seeded from the OS's randomness once per process
        // and differs in each; the counter makes each name new.
        let n = N.fetch_add(1, Ordering::Relaxed);
        let r = RandomState::new().hash_one((std::process::id(), n));
        let path = dir.join(format!("{PREFIX}{r:016x}.tmp"));
        match options.open(&path) {
            Ok(f) => return Ok((path, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    File::open(dir)?.sync_all()?;
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    struct Tmp(PathBuf);

    impl Tmp {
        fn new(tag: &str) -> Tmp {
            let p = std::env::temp_dir().join(format!("lineage-fsio-{tag}-{}", std::process::id()));
            let _ = fs::remove_dir_all(&p);
            fs::create_dir_all(&p).unwrap();
            Tmp(p)
        }

        fn names(&self) -> Vec<String> {
            let mut v: Vec<String> = fs::read_dir(&self.0)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            v.sort();
            v
        }
    }

    impl Drop for Tmp {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn a_failed_write_leaves_the_target_and_no_temp_file() {
        let t = Tmp::new("fail");
        let target = t.0.join("out.bin");
        fs::write(&target, b"old").unwrap();
        let n = write_atomic(&target, |w| w.write_all(b"new!")).unwrap();
        assert_eq!((n, fs::read(&target).unwrap()), (4, b"new!".to_vec()));
        let err = write_atomic(&target, |w| {
            w.write_all(b"half")?;
            Err(io::Error::other("disk full"))
        });
        assert!(err.is_err());
        assert_eq!(fs::read(&target).unwrap(), b"new!");
        assert_eq!(t.names(), ["out.bin"], "no temp file left");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn planted_links_and_special_targets_are_never_written_through() {
        // A regression here would block, not fail.
        lineage_testing::within(std::time::Duration::from_secs(30), || {
            let t = Tmp::new("plant");
            let victim = t.0.join("victim");
            fs::write(&victim, b"precious").unwrap();
            // The old predictable temp name, planted as a link to the victim.
            std::os::unix::fs::symlink(&victim, t.0.join("out.bin.tmp")).unwrap();
            write_atomic(&t.0.join("out.bin"), |w| w.write_all(b"data")).unwrap();
            assert_eq!(fs::read(&victim).unwrap(), b"precious");
            // A FIFO as the target is refused and stays a FIFO.
            let fifo = t.0.join("pipe");
            let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
            // SAFETY: mkfifo with a NUL-terminated path and a mode.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
            let err = write_atomic(&fifo, |w| w.write_all(b"x")).unwrap_err();
            assert!(err.to_string().contains("not a regular file"), "{err}");
            use std::os::unix::fs::FileTypeExt;
            assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
            // Reading one does not block, nor does a device's read go on.
            assert!(read_bounded(&fifo, 1 << 20).is_err());
            assert!(read_bounded(Path::new("/dev/zero"), 1 << 20).is_err());
            assert_eq!(read_bounded(&victim, 100).unwrap(), b"precious");
            assert!(read_bounded(&victim, 3).is_err(), "over the bound");
        });
    }

    #[test]
    fn temp_names_are_not_predictable_and_stale_ones_are_swept() {
        let t = Tmp::new("names");
        let (a, _) = create_temp(&t.0).unwrap();
        let (b, _) = create_temp(&t.0).unwrap();
        assert_ne!(a, b);
        fs::write(t.0.join("keep.md"), b"x").unwrap();
        remove_stale_temps(&t.0);
        assert_eq!(t.names(), ["keep.md"]);
    }
}
