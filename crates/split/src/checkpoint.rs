//! Checkpoints of a run over many processes (issue 50): each shard's state
//! at an epoch boundary, in a file of its own, written whole or not at all
//! (a temp file renamed over it), tied to the run's check so that a
//! checkpoint of other settings or files is refused, not resumed.
//!
//! A file: the magic, the run's check, the epochs completed, the places
//! (documents handed out or passed over) they hold, flags (1: the shard had
//! evicted by then; 2: it has removed an earlier checkpoint by the time
//! this one is its newest, so it no longer holds the start), each a u64
//! little-endian; then
//! [`Shard::write_state`]'s bytes; then the XXH64 of everything before it.
//! A torn or damaged file fails its hash: the caller falls back to an
//! earlier epoch.
//!
//! Every file of the folder named `*.ckpt` begins alike, shards' and the
//! caller's own (process 0's report so far): 16 bytes of magic, then the
//! run's check. So a resume refuses a folder that holds any of another
//! run, whatever its name, and a fresh run removes them.
//!
//! Which epochs: the first epoch end at or past each multiple of
//! [`Checkpoints::every`] places ([`is_due`]). Epochs end at the same
//! places in every process and in every run of the same settings and files
//! (over many processes, every so many places; in one, every so many
//! units), so a run resumed from a checkpoint writes the same ones after it.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use lineage_core::fsio::xxh64::xxh64;
use lineage_origin::table::Shard;

use crate::resume::{Held, Point};

/// Where and how often a run checkpoints, and whether it resumes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkpoints {
    /// The folder the files go to (never inside the run's root: the
    /// caller's to ensure).
    pub dir: PathBuf,
    /// A checkpoint at the first epoch end at or past each multiple of this
    /// many places (documents handed out or passed over; at least one).
    pub every: u64,
    /// The run's settings and files, as [`crate::Cluster::check`] holds them.
    pub check: u64,
    /// Continue from the newest epoch every process holds whole
    /// ([`crate::SplitPass::resumed`] says which), instead of from the
    /// start (then this process's old checkpoints are removed first).
    pub resume: bool,
    /// The epochs at which the caller holds a part of the run of its own
    /// (process 0: the report so far), besides the start; `None`: the
    /// caller keeps nothing, any epoch will do.
    pub caller_holds: Option<Vec<Point>>,
}

const MAGIC: &[u8; 16] = b"lineage-ckpt/2\0\0";
const HEADER: usize = 16 + 4 * 8;

/// How many checkpoints each shard keeps at least: the newest three, so
/// that processes an epoch or two apart (one killed while the others wrote
/// theirs) still hold one in common ([`prunes`] keeps more where they are
/// close together).
pub(crate) const KEEP: usize = 3;

/// Whether a shard that keeps the checkpoints of epochs `kept` (oldest
/// first) removes its oldest, in a run of `window` epochs in flight.
///
/// Beyond the newest [`KEEP`], every one of the last `2 (window + 1)`
/// epochs is kept too. The caller's own part (process 0's report) can be
/// behind the shards: stalled (a slow reader of the report), it stops
/// ending epochs, but the shards go on through the `window` epochs it has
/// ended, and its newest mark can be a checkpoint older still. Three
/// checkpoints every epoch would then all be newer than its newest;
/// checkpoints as far apart as the window and more span it with three.
pub(crate) fn prunes(kept: &[u64], window: usize) -> bool {
    let (Some(&oldest), Some(&newest)) = (kept.first(), kept.last()) else {
        return false;
    };
    kept.len() > KEEP && oldest + 2 * (window as u64 + 1) < newest
}

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

/// Whether the epoch that ends after `after` places, the one before it
/// having ended after `before`, is one to checkpoint at: it is the first to
/// reach a multiple of `every` places.
pub(crate) fn is_due(every: u64, before: u64, after: u64) -> bool {
    let every = every.max(1);
    after / every > before / every
}

/// The file of the shard whose range starts at bucket `first`, at `epoch`.
pub fn shard_path(dir: &Path, first: usize, epoch: u64) -> PathBuf {
    dir.join(format!("shard-{first}-e{epoch}.ckpt"))
}

const EVICTED: u64 = 1;
const PAST_START: u64 = 2;

/// Write `shard`'s state after `epoch` epochs (`places` places) atomically:
/// a temp file, synced, renamed over the name, and the folder synced.
/// `past_start`: the shard has removed an earlier checkpoint, or will once
/// this one is written.
pub fn write_shard(
    c: &Checkpoints,
    epoch: u64,
    places: u64,
    shard: &Shard,
    past_start: bool,
) -> io::Result<PathBuf> {
    let mut bytes = Vec::with_capacity(HEADER + 4096);
    bytes.extend_from_slice(MAGIC);
    let mut flags = if shard.counters().evictions > 0 {
        EVICTED
    } else {
        0
    };
    if past_start {
        flags |= PAST_START;
    }
    for w in [c.check, epoch, places, flags] {
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

/// A checkpoint's header, read back.
struct Head {
    point: Point,
    past_start: bool,
}

/// The checkpoint at `path`, whole and of this run: its header, and the
/// bytes of the shard's state.
fn verified(c: &Checkpoints, path: &Path) -> Result<(Head, Vec<u8>), CheckpointError> {
    let unusable = |why: &dyn std::fmt::Display| {
        CheckpointError::Unusable(format!("checkpoint {}: {why}", path.display()))
    };
    let mut bytes = fs::read(path).map_err(|e| unusable(&e))?;
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
    let head = Head {
        point: Point {
            epoch: word(24),
            places: word(32),
            evicted: word(40) & EVICTED != 0,
        },
        past_start: word(40) & PAST_START != 0,
    };
    bytes.truncate(bytes.len() - 8);
    bytes.drain(..HEADER);
    Ok((head, bytes))
}

/// Whether shard `first`'s checkpoint at `epoch` says it no longer holds
/// the start (a resumed run's shard goes on from there).
pub(crate) fn past_start(c: &Checkpoints, first: usize, epoch: u64) -> bool {
    verified(c, &shard_path(&c.dir, first, epoch)).is_ok_and(|(h, _)| h.past_start)
}

/// Read the checkpoint at `path` into `shard` (fresh from the run's split):
/// the places its epochs hold.
pub fn read_shard(c: &Checkpoints, path: &Path, shard: &mut Shard) -> Result<u64, CheckpointError> {
    let (head, state) = verified(c, path)?;
    shard
        .read_state(&mut &state[..])
        .map_err(|e| CheckpointError::Unusable(format!("checkpoint {}: {e}", path.display())))?;
    Ok(head.point.places)
}

/// The epoch of a checkpoint file's name, if it is one of `first`'s.
pub fn epoch_of(name: &str, first: usize) -> Option<u64> {
    name.strip_prefix(&format!("shard-{first}-e"))?
        .strip_suffix(".ckpt")?
        .parse()
        .ok()
}

/// The epochs of the files of shard `first` in `dir`, whatever they hold;
/// a temp file of its left by a process killed mid-write is removed.
fn named(dir: &Path, first: usize) -> io::Result<Vec<u64>> {
    let mut epochs = Vec::new();
    for e in fs::read_dir(dir)? {
        let e = e?;
        let name = e.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        if let Some(epoch) = epoch_of(name, first) {
            epochs.push(epoch);
        } else if name
            .strip_suffix(".tmp")
            .and_then(|n| epoch_of(n, first))
            .is_some()
        {
            let _ = fs::remove_file(e.path());
        }
    }
    epochs.sort_unstable();
    Ok(epochs)
}

/// The `*.ckpt` files in `dir` whose header names another check than
/// `check`: another run's (other settings or files). One too short for a
/// header is torn, not another run's.
pub(crate) fn foreign_in(dir: &Path, check: u64) -> Vec<PathBuf> {
    use std::io::Read;
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut foreign = Vec::new();
    for e in entries.flatten() {
        let path = e.path();
        if path.extension().is_none_or(|x| x != "ckpt") {
            continue;
        }
        let mut head = [0u8; 24];
        let read = fs::File::open(&path).and_then(|mut f| f.read_exact(&mut head));
        if read.is_ok() && head[16..24] != check.to_le_bytes() {
            foreign.push(path);
        }
    }
    foreign.sort();
    foreign
}

/// The epochs at which this process holds every one of its shards (those
/// starting at `firsts`) whole: each epoch whose files all read back, with
/// its places and whether any of them had evicted. The start (epoch 0)
/// counts while no shard's files say it has removed one: a process that
/// has holds only its newest ones, so that one that lost its folder is not
/// taken, silently, for one that holds the start. A torn or damaged file is passed over (an earlier
/// epoch's will do); one of another run is an error.
pub(crate) fn held(c: &Checkpoints, firsts: &[usize]) -> Result<Held, CheckpointError> {
    if let Some(path) = foreign_in(&c.dir, c.check).into_iter().next() {
        return Err(CheckpointError::Foreign(path));
    }
    let mut common: Option<BTreeMap<u64, Point>> = None;
    let mut removed_some = false;
    for &first in firsts {
        let epochs = named(&c.dir, first).map_err(|e| {
            CheckpointError::Unusable(format!("checkpoint folder {}: {e}", c.dir.display()))
        })?;
        let mut whole = BTreeMap::new();
        for epoch in epochs {
            match verified(c, &shard_path(&c.dir, first, epoch)) {
                Ok((h, _)) if h.point.epoch == epoch => {
                    removed_some |= h.past_start;
                    whole.insert(epoch, h.point);
                }
                Ok(_) | Err(CheckpointError::Unusable(_)) => {}
                Err(e @ CheckpointError::Foreign(_)) => return Err(e),
            }
        }
        common = Some(match common {
            None => whole,
            Some(before) => before
                .into_iter()
                .filter_map(|(e, p)| {
                    let q = whole.get(&e)?;
                    let both = Point {
                        evicted: p.evicted || q.evicted,
                        ..p
                    };
                    (q.places == p.places).then_some((e, both))
                })
                .collect(),
        });
    }
    let Some(mut points) = common else {
        // No shard here (more processes than the table has ranges): any
        // epoch will do.
        return Ok(Held::Any);
    };
    if !removed_some {
        points.insert(0, Point::START);
    }
    Ok(Held::Points(points.into_values().collect()))
}

/// Remove shard `first`'s checkpoint files: all (`after: None`), or those
/// of epochs past `after` (a resumed run writes them again).
pub(crate) fn remove(dir: &Path, first: usize, after: Option<u64>) {
    for epoch in named(dir, first).unwrap_or_default() {
        if after.is_none_or(|a| epoch > a) {
            let _ = fs::remove_file(shard_path(dir, first, epoch));
        }
    }
}

/// The epochs of shard `first`'s files up to `upto`, oldest first: those
/// it keeps as it goes on writing.
pub(crate) fn kept(dir: &Path, first: usize, upto: u64) -> Vec<u64> {
    let mut epochs = named(dir, first).unwrap_or_default();
    epochs.retain(|&e| e <= upto && e > 0);
    epochs
}

#[cfg(test)]
mod tests {
    use super::is_due;

    /// The newest three, and every one of the last 2 (window + 1) epochs.
    #[test]
    fn a_shard_keeps_three_checkpoints_and_the_windows_worth() {
        use super::prunes;
        assert!(!prunes(&[10, 20, 30], 4));
        assert!(prunes(&[10, 20, 30, 40], 4));
        assert!(!prunes(&[1, 2, 3, 4], 4), "close together: kept");
        assert!(!prunes(&(1..=11).collect::<Vec<_>>(), 4));
        assert!(prunes(&(1..=12).collect::<Vec<_>>(), 4));
        assert!(!prunes(&[], 4));
    }

    /// A checkpoint at the first epoch end at or past each multiple.
    #[test]
    fn checkpoints_fall_at_the_first_epoch_end_past_each_multiple() {
        assert!(is_due(10, 0, 10));
        assert!(!is_due(10, 0, 9));
        assert!(is_due(10, 9, 12));
        assert!(!is_due(10, 10, 19));
        assert!(is_due(10, 19, 45), "past several multiples: one");
        assert!(is_due(1, 4, 5), "every epoch");
        assert!(is_due(0, 4, 5), "zero is one");
    }
}
