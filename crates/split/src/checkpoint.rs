//! Checkpoints of a run over many processes (issue 50): each shard's state
//! at an epoch boundary, in a file of its own, written whole or not at all
//! (a temp file renamed over it), tied to the run's check so that a
//! checkpoint of other settings or files is refused, not resumed.
//!
//! A file: the magic, the run's check, the epochs completed, the places
//! (documents handed out or passed over) they hold, each a u64
//! little-endian; then [`Shard::write_state`]'s bytes; then the XXH64 of
//! everything before it. A torn or damaged file fails its hash: the caller
//! falls back to an earlier epoch.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use lineage_core::fsio::xxh64::xxh64;
use lineage_origin::table::Shard;

/// Where and how often a run checkpoints.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkpoints {
    /// The folder the files go to (never inside the run's root: the
    /// caller's to ensure).
    pub dir: PathBuf,
    /// Every this many epochs (at least one).
    pub every: u64,
    /// The run's settings and files, as [`crate::Cluster::check`] holds them.
    pub check: u64,
}

const MAGIC: &[u8; 16] = b"lineage-ckpt/1\0\0";
const HEADER: usize = 16 + 3 * 8;

/// Why a checkpoint could not be read.
#[derive(Debug)]
pub enum CheckpointError {
    /// Torn, damaged or missing: an earlier epoch's may do.
    Unusable(String),
    /// Whole, but of other settings or files: never resumed.
    Foreign(PathBuf),
}

impl std::fmt::Display for CheckpointError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CheckpointError::Unusable(e) => f.write_str(e),
            CheckpointError::Foreign(p) => write!(
                f,
                "checkpoint {} is of other settings or other files: not resumed (remove it, or run without --resume)",
                p.display()
            ),
        }
    }
}

/// The file of the shard whose range starts at bucket `first`, at `epoch`.
pub fn shard_path(dir: &Path, first: usize, epoch: u64) -> PathBuf {
    dir.join(format!("shard-{first}-e{epoch}.ckpt"))
}

/// Write `shard`'s state after `epoch` epochs (`places` places) atomically:
/// a temp file, synced, renamed over the name, and the folder synced.
pub fn write_shard(c: &Checkpoints, epoch: u64, places: u64, shard: &Shard) -> io::Result<PathBuf> {
    let mut bytes = Vec::with_capacity(HEADER + 4096);
    bytes.extend_from_slice(MAGIC);
    for w in [c.check, epoch, places] {
        bytes.extend_from_slice(&w.to_le_bytes());
    }
    shard.write_state(&mut bytes)?;
    let sum = xxh64(&bytes);
    bytes.extend_from_slice(&sum.to_le_bytes());
    let path = shard_path(&c.dir, shard.range().start, epoch);
    let tmp = path.with_extension("ckpt.tmp");
    let mut f = fs::File::create(&tmp)?;
    f.write_all(&bytes)?;
    f.sync_all()?;
    drop(f);
    fs::rename(&tmp, &path)?;
    // The rename itself lasts once the folder is synced.
    fs::File::open(&c.dir)?.sync_all()?;
    Ok(path)
}

/// Read the checkpoint at `path` into `shard` (fresh from the run's split):
/// the places its epochs hold.
pub fn read_shard(c: &Checkpoints, path: &Path, shard: &mut Shard) -> Result<u64, CheckpointError> {
    let unusable = |why: &dyn std::fmt::Display| {
        CheckpointError::Unusable(format!("checkpoint {}: {why}", path.display()))
    };
    let bytes = fs::read(path).map_err(|e| unusable(&e))?;
    if bytes.len() < HEADER + 8 || &bytes[..16] != MAGIC {
        return Err(unusable(&"not a checkpoint, or torn"));
    }
    let (body, sum) = bytes.split_at(bytes.len() - 8);
    if xxh64(body).to_le_bytes() != sum {
        return Err(unusable(&"torn or damaged (its hash differs)"));
    }
    let word = |at: usize| u64::from_le_bytes(body[at..at + 8].try_into().unwrap_or([0; 8]));
    if word(16) != c.check {
        return Err(CheckpointError::Foreign(path.to_path_buf()));
    }
    shard
        .read_state(&mut &body[HEADER..])
        .map_err(|e| unusable(&e))?;
    Ok(word(32))
}

/// The epoch of a checkpoint file's name, if it is one of `first`'s.
pub fn epoch_of(name: &str, first: usize) -> Option<u64> {
    name.strip_prefix(&format!("shard-{first}-e"))?
        .strip_suffix(".ckpt")?
        .parse()
        .ok()
}
