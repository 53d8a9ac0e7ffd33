//! One process per index: an exclusive OS lock on `DIR/lock`, held for the
//! index's life and released by the OS when the process ends, however it ends
//! (so a killed run leaves no stale lock behind).

use std::fs::{File, OpenOptions, TryLockError};
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
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|source| IndexError::Io {
            what: "cannot open",
            path: path.clone(),
            source,
        })?;
    match file.try_lock() {
        Ok(()) => Ok(Lock { _file: file }),
        Err(TryLockError::WouldBlock) => Err(IndexError::Locked(dir.to_path_buf())),
        Err(TryLockError::Error(source)) => Err(IndexError::Io {
            what: "cannot lock",
            path,
            source,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_until_the_first_is_dropped() {
        let dir = std::env::temp_dir().join(format!("lineage-lock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let first = acquire(&dir).unwrap();
        // A second open file description conflicts even within one process.
        assert!(matches!(acquire(&dir), Err(IndexError::Locked(_))));
        drop(first);
        acquire(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
