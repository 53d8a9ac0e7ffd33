//! One process per index: an exclusive OS lock on `DIR/lock`, held for the
//! index's life and released by the OS when the process ends, however it ends
//! (so a killed run leaves no stale lock behind). The holder writes its PID
//! in the file, so the one refused can name it.

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::{self, Write};
use std::path::Path;

use super::IndexError;

pub(crate) const FILE: &str = "lock";

/// The held lock; dropping it releases it.
#[derive(Debug)]
pub(crate) struct Lock {
    _file: File,
}

/// Take the index's lock, or say that another process has it.
pub(crate) fn acquire(dir: &Path) -> Result<Lock, IndexError> {
    let path = dir.join(FILE);
    let file = match open(&path) {
        Ok(f) => Ok(f),
        // The index folder is ours: anything but a regular file at the
        // lock's name (a FIFO, whose open would wait for a reader, a socket,
        // a device, a link) is damage, replaced. No lineage can hold a lock
        // on it, since none opens it.
        Err(_) if fs::symlink_metadata(&path).is_ok_and(|m| !m.is_file()) => {
            let _ = fs::remove_file(&path);
            open(&path)
        }
        Err(e) => Err(e),
    }
    .map_err(|source| IndexError::Io {
        what: "cannot open",
        path: path.clone(),
        source,
    })?;
    match try_lock(&file, &path) {
        Ok(()) => {
            // Best effort: the PID is for a message, the lock is the lock.
            let mut f = &file;
            let _ = f
                .set_len(0)
                .and_then(|()| f.write_all(format!("{}\n", std::process::id()).as_bytes()));
            Ok(Lock { _file: file })
        }
        Err(TryLockError::WouldBlock) => Err(IndexError::Locked(dir.to_path_buf(), pid(&path))),
        Err(TryLockError::Error(source)) => Err(IndexError::Io {
            what: "cannot lock",
            path,
            source,
        }),
    }
}

/// Lock `file`, waiting a moment where its holder is this very process: a
/// lock just released by it can still be held by a child process another
/// thread is starting (between its fork and its exec the child holds every
/// open file, its lock too), as when tests run `git` beside an index that
/// is closed and opened again. Another process's lock is refused at once.
fn try_lock(file: &File, path: &Path) -> Result<(), TryLockError> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    loop {
        match file.try_lock() {
            Err(TryLockError::WouldBlock)
                if pid(path) == Some(std::process::id())
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            r => return r,
        }
    }
}

/// Whether the index in `dir` is free to open: `Locked` if another process
/// holds it now; nothing is created (a missing folder or lock is free).
pub fn check_free(dir: &Path) -> Result<(), IndexError> {
    let path = dir.join(FILE);
    if !fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
        return Ok(());
    }
    match open(&path).map(|f| f.try_lock()) {
        Ok(Err(TryLockError::WouldBlock)) => Err(IndexError::Locked(dir.to_path_buf(), pid(&path))),
        _ => Ok(()),
    }
}

/// The PID the holder wrote in the lock file.
fn pid(path: &Path) -> Option<u32> {
    let bytes = lineage_core::fsio::read_bounded(path, 32).ok()?;
    std::str::from_utf8(&bytes).ok()?.trim().parse().ok()
}

/// ` (PID n)` when the holder is known.
pub(crate) fn holder(pid: Option<u32>) -> String {
    pid.map_or_else(String::new, |p| format!(" (PID {p})"))
}

/// The lock file, created if missing: opened without blocking and without
/// following a link, and only if it is a regular file.
fn open(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.create(true).truncate(false).write(true);
    // libc is a dependency on Linux only, as in `fsio::read_bounded`.
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW);
    }
    let file = options.open(path)?;
    if !file.metadata()?.is_file() {
        return Err(lineage_core::fsio::not_regular(path));
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_until_the_first_is_dropped() {
        let dir = std::env::temp_dir().join(format!("lineage-lock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let first = acquire(&dir).unwrap();
        // A second open file description conflicts even within one process;
        // the refusal names the holder's PID, the check before opening too.
        let me = Some(std::process::id());
        assert!(matches!(acquire(&dir), Err(IndexError::Locked(_, p)) if p == me));
        assert!(matches!(check_free(&dir), Err(IndexError::Locked(_, p)) if p == me));
        assert!(check_free(&dir.join("nowhere")).is_ok());
        drop(first);
        assert!(check_free(&dir).is_ok());
        acquire(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A lock this process released, held a moment longer by a child (as
    /// between a fork and its exec), is waited for: the index opens once the
    /// child lets it go (it was refused, "in use by … (PID self)").
    #[cfg(target_os = "linux")]
    #[test]
    fn a_lock_held_a_moment_by_a_child_of_this_process_is_waited_for() {
        let dir = std::env::temp_dir().join(format!("lineage-lock-child-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        drop(acquire(&dir).unwrap());
        // flock(1) holds the file's lock for 0.3 s; the file still names us.
        let mut child = std::process::Command::new("flock")
            .arg("-n")
            .arg(dir.join(FILE))
            .args(["sleep", "0.3"])
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert!(
            matches!(check_free(&dir), Err(IndexError::Locked(..))),
            "the child holds it"
        );
        acquire(&dir).unwrap();
        child.wait().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A FIFO at the lock's name made every command wait forever for a
    /// reader; a link or a device is no lock either. Each is replaced by a
    /// regular file, and the link's target is left alone.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_fifo_a_link_or_a_device_at_the_lock_is_replaced_without_waiting() {
        // A regression here would block, not fail.
        lineage_testing::within(std::time::Duration::from_secs(30), || {
            let dir = std::env::temp_dir().join(format!("lineage-lock-odd-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            let path = dir.join(FILE);
            let target = dir.join("target");
            std::fs::write(&target, "kept").unwrap();
            let plant: [&dyn Fn(); 3] = [
                &|| {
                    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
                    // SAFETY: mkfifo with a NUL-terminated path and a mode.
                    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
                },
                &|| std::os::unix::fs::symlink(&target, &path).unwrap(),
                &|| std::os::unix::fs::symlink("/dev/null", &path).unwrap(),
            ];
            for plant in plant {
                plant();
                let lock = acquire(&dir).unwrap();
                assert!(std::fs::symlink_metadata(&path).unwrap().is_file());
                assert!(matches!(acquire(&dir), Err(IndexError::Locked(..))));
                drop(lock);
                std::fs::remove_file(&path).unwrap();
            }
            assert_eq!(std::fs::read_to_string(&target).unwrap(), "kept");
            std::fs::remove_dir_all(&dir).unwrap();
        });
    }
}
