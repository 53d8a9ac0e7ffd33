//! Where `scan` writes its report: standard output, or `-o FILE` written
//! whole or not at all.
//!
//! FILE is written as a temp file in its folder, created exclusively under
//! a name no one can guess (no link followed), and renamed over FILE only
//! once the report is complete and synced: a run that fails (a process
//! lost, a full disk) leaves FILE as it was and no temp file. Whatever
//! stands at FILE and is not a regular file (a link, a FIFO, a folder) is
//! refused, never written through, and so is a FILE inside ROOT: lineage
//! only ever reads the folder it looks at.

use std::fs::{self, File, OpenOptions};
use std::hash::{BuildHasher, RandomState};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::Fatal;

/// The report's destination, until it is complete.
pub(super) struct Output {
    /// `-o FILE`: FILE as given, its temp file and a handle to sync it.
    file: Option<(PathBuf, PathBuf, File)>,
}

impl Output {
    /// Standard output, or `target` (checked before anything is read).
    pub(super) fn open(
        target: Option<&Path>,
        root: &Path,
    ) -> Result<(Output, Box<dyn Write + Send>), Fatal> {
        let Some(target) = target else {
            return Ok((Output { file: None }, Box::new(io::stdout())));
        };
        let shown = super::super::show::show(&target.display().to_string()).into_owned();
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
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = target
            .file_name()
            .ok_or_else(|| cannot(&"not a file name"))?;
        let (tmp, file) = create_temp(&dir, name).map_err(|e| cannot(&e))?;
        let sync = file.try_clone().map_err(|e| cannot(&e))?;
        let out = Output {
            file: Some((target.to_path_buf(), tmp, sync)),
        };
        Ok((out, Box::new(file)))
    }

    /// The report is complete (`written`, flushed): FILE takes its place.
    pub(super) fn commit(mut self) -> Result<(), Fatal> {
        let Some((target, tmp, file)) = self.file.take() else {
            return Ok(());
        };
        let done = (|| {
            file.sync_all()?;
            drop(file);
            fs::rename(&tmp, &target)?;
            let dir = tmp.parent().unwrap_or(Path::new("."));
            File::open(dir)?.sync_all()
        })();
        if let Err(e) = done {
            let _ = fs::remove_file(&tmp);
            return Err(Fatal(format!(
                "-o {}: {e}",
                super::super::show::show(&target.display().to_string())
            )));
        }
        Ok(())
    }

    /// A run's error `e`, said with what became of the report.
    pub(super) fn failed(&self, json: bool, e: Fatal) -> Fatal {
        match &self.file {
            Some((target, ..)) => Fatal(format!(
                "no report written, {} is left as it was: {}",
                super::super::show::show(&target.display().to_string()),
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

impl Drop for Output {
    /// Not committed: the temp file goes.
    fn drop(&mut self) {
        if let Some((_, tmp, _)) = self.file.take() {
            let _ = fs::remove_file(tmp);
        }
    }
}

/// A new file in `dir` beside `name`, under a name no one can guess ahead.
fn create_temp(dir: &Path, name: &std::ffi::OsStr) -> io::Result<(PathBuf, File)> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW).mode(0o644);
    }
    for n in 0u32.. {
        // RandomState is seeded from the OS's randomness, anew each process.
        let r = RandomState::new().hash_one((std::process::id(), n));
        let mut tmp = std::ffi::OsString::from(".");
        tmp.push(name);
        tmp.push(format!(".lineage-{r:016x}.tmp"));
        let path = dir.join(tmp);
        match options.open(&path) {
            Ok(f) => return Ok((path, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other("no free temp name"))
}
