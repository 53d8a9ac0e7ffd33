//! Where `scan` and `report` write: standard output, or `-o FILE` written
//! whole or not at all.
//!
//! FILE is written through [`AtomicFile`], renamed over FILE only once the
//! report is complete and synced: a run that fails (a process lost, a full
//! disk) leaves FILE as it was and no temp file. Whatever
//! stands at FILE and is not a regular file (a link, a FIFO, a folder) is
//! refused, never written through, and so is a FILE inside ROOT: lineage
//! only ever reads the folder it looks at.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::Fatal;
use lineage_core::fsio::AtomicFile;

/// The report's destination, until it is complete.
pub(crate) struct Output {
    /// `-o FILE`: FILE as given, and its file until committed.
    file: Option<(PathBuf, AtomicFile)>,
}

impl Output {
    /// Standard output, or `target` (checked before anything is read).
    pub(crate) fn open(
        target: Option<&Path>,
        root: &Path,
    ) -> Result<(Output, Box<dyn Write + Send>), Fatal> {
        let Some(target) = target else {
            return Ok((Output { file: None }, Box::new(io::stdout())));
        };
        let shown = super::show::show(&target.display().to_string()).into_owned();
        let cannot = |why: &dyn std::fmt::Display| Fatal(format!("-o {shown}: {why}"));
        if let Ok(m) = fs::symlink_metadata(target)
            && !m.is_file()
        {
            let what = if m.is_symlink() {
                "a link"
            } else if m.is_dir() {
                "a folder"
            } else {
                "not a regular file (a FIFO, a device or a socket)"
            };
            return Err(cannot(&format!(
                "{what} stands there; lineage writes only a regular file of its own, never through another"
            )));
        }
        let at = lineage_core::fsio::resolve(target).map_err(|e| cannot(&e))?;
        if let Ok(root) = fs::canonicalize(root)
            && at.starts_with(&root)
        {
            return Err(cannot(
                &"inside ROOT; lineage only reads the folder it scans: write the report elsewhere",
            ));
        }
        if target.file_name().is_none() {
            return Err(cannot(&"not a file name"));
        }
        let atomic = AtomicFile::create(target).map_err(|e| cannot(&e))?;
        let file = atomic.file().map_err(|e| cannot(&e))?;
        let out = Output {
            file: Some((target.to_path_buf(), atomic)),
        };
        Ok((out, Box::new(file)))
    }

    /// The report is complete (`written`, flushed): FILE takes its place.
    pub(crate) fn commit(self) -> Result<(), Fatal> {
        let Some((target, atomic)) = self.file else {
            return Ok(());
        };
        atomic.commit().map_err(|e| {
            Fatal(format!(
                "-o {}: {e}",
                super::show::show(&target.display().to_string())
            ))
        })
    }

    /// A run's error `e`, said with what became of the report.
    pub(crate) fn failed(&self, json: bool, e: Fatal) -> Fatal {
        match &self.file {
            Some((target, ..)) => Fatal(format!(
                "no report written, {} is left as it was: {}",
                super::show::show(&target.display().to_string()),
                e.0
            )),
            None if json => Fatal(format!(
                "the report on standard output is incomplete: {}",
                e.0
            )),
            None => e,
        }
    }
}
