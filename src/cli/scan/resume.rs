//! `scan --checkpoint-dir DIR [--checkpoint-every N] [--resume]`: a run
//! over many processes that survives a lost one (README, "On a cluster").
//! The files are `lineage_split`'s (each shard's state) and, at process 0,
//! [`super::journal`]'s (the report so far).

use std::path::{Path, PathBuf};

use clap::Args;

use super::Fatal;

/// Documents between checkpoints, by default. A checkpoint took about
/// 90 ms with 12-15 MB of table state a process (about 6 ms a MB, 2 cores;
/// README, "Checkpoints and `--resume`"): every 100,000 documents, 40 s of
/// a run at 2,500 documents a second, that is under 1 % even for a 64 MiB
/// table's whole share, and a loss costs at most that many documents again.
const EVERY: u64 = 100_000;

#[derive(Args, Debug)]
pub(super) struct CheckpointArgs {
    /// With --hosts: write this process's checkpoints to DIR (created if missing;
    /// never inside ROOT; one run a folder, or one folder shared by every process
    /// of a run): its share of the table at an epoch's end every --checkpoint-every
    /// documents, and at process 0 the report so far; the newest three kept, all
    /// removed once the run completes. After a lost process (or a stop), start every
    /// process again as before with --resume.
    #[arg(long, value_name = "DIR", requires = "hosts")]
    checkpoint_dir: Option<PathBuf>,
    /// With --checkpoint-dir: a checkpoint at the first epoch's end at or past
    /// every N documents of the run (an epoch is 16 documents a worker of every
    /// process) [default: 100000].
    #[arg(long, value_name = "N", requires = "checkpoint_dir",
          value_parser = clap::value_parser!(u64).range(1..))]
    checkpoint_every: Option<u64>,
    /// With --checkpoint-dir: continue from the newest checkpoint every process
    /// holds (they agree on it as they connect; none in common, or one of other
    /// settings or files, is refused, exit status 2). The report, on standard
    /// output or to -o FILE, is the whole run's, byte for byte an uninterrupted
    /// run's: its documents before the checkpoint are written again from it.
    #[arg(long, requires = "checkpoint_dir")]
    resume: bool,
}

/// What the flags ask, checked.
pub(super) struct Plan {
    pub(super) dir: PathBuf,
    pub(super) every: u64,
    pub(super) resume: bool,
}

impl CheckpointArgs {
    /// The plan, its folder made (never inside `root`: lineage only reads
    /// the folder it scans); `None` without --checkpoint-dir.
    pub(super) fn plan(&self, root: &Path) -> Result<Option<Plan>, Fatal> {
        let Some(dir) = &self.checkpoint_dir else {
            return Ok(None);
        };
        let shown = super::super::show::show(&dir.display().to_string()).into_owned();
        let cannot =
            |why: &dyn std::fmt::Display| Fatal(format!("--checkpoint-dir {shown}: {why}"));
        let at = lineage_core::fsio::resolve(dir).map_err(|e| cannot(&e))?;
        if let Ok(root) = std::fs::canonicalize(root)
            && at.starts_with(&root)
        {
            return Err(cannot(
                &"inside ROOT; lineage only reads the folder it scans: keep checkpoints elsewhere",
            ));
        }
        std::fs::create_dir_all(dir).map_err(|e| cannot(&e))?;
        if !std::fs::metadata(dir).is_ok_and(|m| m.is_dir()) {
            return Err(cannot(&"not a folder"));
        }
        Ok(Some(Plan {
            dir: dir.clone(),
            every: self.checkpoint_every.unwrap_or(EVERY),
            resume: self.resume,
        }))
    }
}
