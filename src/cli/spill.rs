//! Earlier versions' shingle keys for alignment in a one-pass `scan`,
//! which holds no history: in memory up to a budget, then in a temporary
//! file read back by offset (docs/reference.md, "Memory"). The file is removed as soon
//! as it is open (Unix), so nothing is left behind, whatever ends the
//! process.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use lineage_origin::align::OriginKeys;

/// Keys held in memory before the file takes the rest: 48 MiB. `scan`'s
/// goal is the table plus 128 MiB, and the two batches in flight (text,
/// units and their keys) took up to 63 MiB beside 64 MiB of keys on 420 MB
/// of pages (BENCHMARKS.md, "Alignment under a binding budget").
pub(crate) const MEMORY_KEYS: usize = 6 << 20;

/// The keys of versions `0..n`, in order.
pub(crate) struct KeySpill {
    /// The first versions' keys, a slice each (no copy as they grow).
    memory: Vec<Box<[u64]>>,
    held: usize,
    budget: usize,
    dir: PathBuf,
    file: Option<File>,
    /// Where each later version's keys start in the file, and at `[d + 1]`
    /// where they end, in keys.
    starts: Vec<u64>,
    bytes: Vec<u8>,
    buf: Vec<u64>,
}

impl KeySpill {
    /// A spill that keeps `budget` keys in memory and writes the rest to a
    /// file in `dir`.
    pub(crate) fn new(dir: &Path, budget: usize) -> KeySpill {
        KeySpill {
            memory: Vec::new(),
            held: 0,
            budget,
            dir: dir.to_path_buf(),
            file: None,
            starts: vec![0],
            bytes: Vec::new(),
            buf: Vec::new(),
        }
    }

    /// Add the next version's keys (collected by the caller, off the
    /// pass's thread).
    pub(crate) fn push(&mut self, keys: Box<[u64]>) -> io::Result<()> {
        let n = keys.len();
        if self.file.is_none() && self.held + n <= self.budget {
            self.memory.push(keys);
            self.held += n;
            return Ok(());
        }
        self.bytes.clear();
        self.bytes.extend(keys.iter().flat_map(|k| k.to_le_bytes()));
        let file = match &mut self.file {
            Some(f) => f,
            None => self.file.insert(create(&self.dir)?),
        };
        file.write_all(&self.bytes)?;
        let end = self.starts.last().copied().unwrap_or(0) + n as u64;
        self.starts.push(end);
        Ok(())
    }

    /// Versions held.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.memory.len() + self.starts.len() - 1
    }
}

impl OriginKeys for KeySpill {
    fn keys(&mut self, id: u32) -> Option<&[u64]> {
        let d = id as usize;
        if let Some(keys) = self.memory.get(d) {
            return Some(keys);
        }
        let at = d - self.memory.len();
        let (start, end) = (*self.starts.get(at)?, *self.starts.get(at + 1)?);
        let file = self.file.as_ref()?;
        self.bytes.resize(8 * (end - start) as usize, 0);
        read_at(file, &mut self.bytes, 8 * start).ok()?;
        self.buf.clear();
        self.buf.extend(
            self.bytes
                .chunks_exact(8)
                .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes"))),
        );
        Some(&self.buf)
    }
}

/// A new file of our own in `dir`, opened for reading and writing, and
/// (on Unix) already unlinked. A name taken, by anything, is passed over.
fn create(dir: &Path) -> io::Result<File> {
    let mut n = 0u32;
    loop {
        let path = dir.join(format!("lineage-keys-{}-{n}", std::process::id()));
        match OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(f) => {
                #[cfg(unix)]
                std::fs::remove_file(&path)?;
                return Ok(f);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < 64 => n += 1,
            Err(e) => {
                return Err(io::Error::new(
                    e.kind(),
                    format!("cannot write the alignment spill in {}: {e}", dir.display()),
                ));
            }
        }
    }
}

#[cfg(unix)]
fn read_at(f: &File, buf: &mut [u8], at: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(f, buf, at)
}

#[cfg(not(unix))]
fn read_at(mut f: &File, buf: &mut [u8], at: u64) -> io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    f.seek(SeekFrom::Start(at))?;
    f.read_exact(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn versions() -> Vec<Vec<u64>> {
        (0..7u64)
            .map(|d| {
                (0..(d * 5 + 1))
                    .map(|i| (i * 1_000_003) ^ (d << 40))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn versions_past_the_budget_come_back_from_the_file_as_they_went_in() {
        let mut spill = KeySpill::new(&std::env::temp_dir(), 20);
        let versions = versions();
        for v in &versions {
            spill.push(v[..].into()).unwrap();
        }
        assert_eq!(spill.len(), 7);
        assert!(spill.file.is_some() && (1..7).contains(&spill.memory.len()));
        for (d, v) in versions.iter().enumerate().rev() {
            assert_eq!(spill.keys(d as u32), Some(&v[..]), "version {d}");
        }
        assert_eq!(spill.keys(7), None);
    }

    #[test]
    fn an_unwritable_folder_is_a_clear_error_only_once_memory_is_full() {
        let dir = Path::new("/nonexistent/lineage-spill");
        let mut spill = KeySpill::new(dir, 4);
        spill.push(Box::new([1, 2, 3])).unwrap();
        let e = spill.push(Box::new([4, 5])).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("cannot write the alignment spill in /nonexistent/lineage-spill"),
            "{e}"
        );
    }
}
