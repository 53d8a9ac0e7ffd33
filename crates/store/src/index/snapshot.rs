//! The fixed-size table's state as a file beside the database, so a re-open
//! continues the origin pass without replaying the history.
//!
//! A framed file ([`lineage_core::fsio::framed`], magic `LINTABLE`) whose payload is
//! the parameters (u32 length + UTF-8), the database's instance id u64, the
//! document versions covered u64, the content hash of the last covered
//! version u64, the length u64 of [`Table::write_state`]'s bytes (all
//! little-endian), then those bytes compressed (one zstd frame): the entries
//! the table holds and a fill word a bucket, whose zeros compress away, so
//! the file follows the table's content, not its size. Written atomically: a
//! crash leaves the old snapshot or the new one.
//!
//! A checkpoint between snapshots appends what changed to `table.journal`
//! instead: magic `LINJRNL1`, then records of a u32 length, the xxh64 of
//! the payload and the payload: the database's instance id, the versions
//! and last content hash the record follows on (5 × u64 with the next two),
//! the versions and last hash it brings the table to, the length u64 of
//! [`Table::write_changes`]'s bytes and those bytes compressed (the changed
//! buckets whole). A record applies only where the one before it (or the
//! snapshot) left off, so a journal beside a newer snapshot is ignored, and
//! a torn last record (a crash mid-append) ends the journal: the history
//! after it is replayed from the database, and the next checkpoint writes
//! the snapshot whole (a record after the torn one would never be read). When the journal outgrows the
//! snapshot, the next checkpoint writes a snapshot and removes it.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use lineage_core::fsio::framed::{Format, FrameError};
use lineage_origin::TableSize;
use lineage_origin::table::{Counters, Table, TableParams};

pub(crate) const FILE: &str = "table.snapshot";
pub(crate) const JOURNAL: &str = "table.journal";
const JOURNAL_MAGIC: &[u8; 8] = b"LINJRNL1";
/// A record's fixed fields: instance, from (versions, hash), to (versions,
/// hash), the raw changes' length.
const RECORD_FIELDS: usize = 6 * 8;
/// Bump the version when the payload or [`Table::write_state`]'s bytes change,
/// or the keys in them (3: shingle keys of mixed token fingerprints; 4: only
/// occupied entries, compressed; 5: the live buckets of a growing table).
const FORMAT: Format = Format {
    magic: b"LINTABLE",
    version: 5,
    name: "table snapshot",
    largest: 1 << 40,
};
/// Parameter strings are short; a longer length field is corruption.
const MAX_PARAMS: usize = 4096;
/// A journal record's header: its payload's length (u32) and xxh64 (u64).
const RECORD_HEAD: usize = 12;

/// The most bytes the state of a table of `size` can take: the table's
/// memory and a little (a bounded table), or an entry of 15 bytes for each
/// of `tokens` (an unbounded one holds at most a key a token of the
/// history it saw).
fn largest_state(size: TableSize, tokens: impl FnOnce() -> u64) -> u64 {
    match size {
        TableSize::Bytes(b) => b.saturating_add(4096),
        TableSize::Unbounded => tokens().saturating_mul(15).saturating_add(1 << 20),
    }
}

/// zstd's bound on what `n` bytes compress to.
fn compressed_bound(n: u64) -> u64 {
    let n = usize::try_from(n).unwrap_or(usize::MAX / 2);
    zstd::zstd_safe::compress_bound(n) as u64
}

/// The largest snapshot a table of `size` makes: its frame, the parameters,
/// the four words and its state compressed. A larger file (a sparse one of
/// gigabytes) is damage, never read.
fn largest_snapshot(size: TableSize, tokens: impl FnOnce() -> u64) -> u64 {
    let head = (lineage_core::fsio::framed::HEADER + 4 + MAX_PARAMS + 32) as u64;
    head.saturating_add(compressed_bound(largest_state(size, tokens)))
}

/// The largest journal record of a table of `size`: the changes are at
/// most the table's memory and a few bytes a bucket (an unbounded table has
/// no journal: 0).
fn largest_changes(size: TableSize) -> u64 {
    match size {
        TableSize::Bytes(b) => b.saturating_mul(2).saturating_add(4096),
        TableSize::Unbounded => 0,
    }
}

/// The largest journal a table of `size` makes: records are appended only
/// while the journal is smaller than the snapshot, so at most a snapshot's
/// worth and one record more.
fn largest_journal(size: TableSize) -> u64 {
    match size {
        TableSize::Bytes(_) => {
            let record =
                (RECORD_HEAD + RECORD_FIELDS) as u64 + compressed_bound(largest_changes(size));
            (JOURNAL_MAGIC.len() as u64)
                .saturating_add(largest_snapshot(size, || 0))
                .saturating_add(record)
        }
        TableSize::Unbounded => JOURNAL_MAGIC.len() as u64,
    }
}
/// zstd's fastest levels: a checkpoint is written often, and the bytes that
/// matter (keys) are random.
const ZSTD_LEVEL: i32 = 1;

/// What a snapshot says it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Header {
    /// The engine parameters' canonical string (`index::params_key`).
    pub params: String,
    /// The random id of the database the snapshot goes with (`meta.instance`):
    /// a snapshot left beside a rebuilt database never matches it.
    pub instance: u64,
    /// Document versions 0..versions the table has processed.
    pub versions: u64,
    /// Content hash of version `versions - 1` (0 if none): ties the snapshot
    /// to the document log it was written with.
    pub(crate) last_hash: u64,
}

/// Why a snapshot cannot be used.
#[derive(Debug)]
pub(crate) enum Unusable {
    Missing,
    /// Written by a lineage before the common frame (format 1).
    Older,
    /// Written with other engine parameters (the header's).
    OtherParams(String),
    /// Unreadable, truncated, bad checksum, other format: a one-line reason.
    Corrupt(String),
    /// The snapshot is sound but its journal is not (not a regular file,
    /// larger than the table can make it, not a journal): a one-line reason.
    Journal(String),
}

/// Whether `path` is a snapshot of lineage 0.1's first format (magic
/// `LINEAGETABLE`, before the frame).
fn written_before_frames(path: &Path) -> bool {
    let mut magic = [0; 12];
    lineage_core::fsio::open_own(path, u64::MAX)
        .and_then(|(mut f, _)| f.read_exact(&mut magic))
        .is_ok_and(|()| &magic == b"LINEAGETABLE")
}

/// The files behind a table read or written: their sizes in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct OnDisk {
    pub snapshot: u64,
    /// 0 when there is no journal.
    pub journal: u64,
    /// The journal ends in bytes no record applied from (torn, foreign): a
    /// record appended after them would never be read, so the next
    /// checkpoint writes the snapshot whole.
    pub tail: bool,
}

/// A writer that only counts the bytes written to it.
struct Counted(u64);

impl Write for Counted {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Write `table` with `header` atomically as `dir/table.snapshot` and
/// remove the journal the snapshot now includes; the snapshot's size. A
/// folder in the way is moved aside: `aside` gains where from and to.
pub(crate) fn write(
    dir: &Path,
    header: &Header,
    table: &Table,
    aside: &mut Vec<(PathBuf, PathBuf)>,
) -> io::Result<u64> {
    let target = dir.join(FILE);
    // The index folder is ours: whatever is in the way (a link, a FIFO, a
    // folder) is damage, never written through; the snapshot takes its place.
    if let Some(to) = lineage_core::fsio::clear_own(&target)? {
        aside.push((target.clone(), to));
    }
    FORMAT
        .write(&target, |w| {
            w.write_all(&(header.params.len() as u32).to_le_bytes())?;
            w.write_all(header.params.as_bytes())?;
            // The state is streamed through the compressor, never held
            // whole (it is as large as the table is full): a first pass
            // only counts its bytes, for the header before it.
            let mut counted = Counted(0);
            table.write_state(&mut counted)?;
            for x in [
                header.instance,
                header.versions,
                header.last_hash,
                counted.0,
            ] {
                w.write_all(&x.to_le_bytes())?;
            }
            let mut z = zstd::stream::write::Encoder::new(w, ZSTD_LEVEL)?;
            z.set_pledged_src_size(Some(counted.0))?;
            let mut z = io::BufWriter::with_capacity(1 << 16, z);
            table.write_state(&mut z)?;
            z.into_inner().map_err(|e| e.into_error())?.finish()?;
            Ok(())
        })
        .and_then(|n| {
            let journal = dir.join(JOURNAL);
            if let Some(to) = lineage_core::fsio::clear_own(&journal)? {
                aside.push((journal.clone(), to));
            }
            match std::fs::remove_file(journal) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
                _ => Ok(n),
            }
        })
}

/// Append the changes of `table` since it was last written (see
/// [`Table::write_changes`]) as a record taking the table from `from` to
/// `to`; the journal's size after, or None for a table written only whole.
pub(crate) fn append(
    dir: &Path,
    instance: u64,
    from: (u64, u64),
    to: (u64, u64),
    table: &Table,
) -> io::Result<Option<u64>> {
    let mut changes = Vec::new();
    if !table.write_changes(&mut changes)? {
        return Ok(None);
    }
    let path = dir.join(JOURNAL);
    // Something else at its name (a link, a folder) is never appended
    // through: the snapshot written whole replaces it.
    if std::fs::symlink_metadata(&path).is_ok_and(|m| !m.is_file()) {
        return Ok(None);
    }
    let mut payload = Vec::with_capacity(RECORD_FIELDS + changes.len() / 2);
    for x in [instance, from.0, from.1, to.0, to.1, changes.len() as u64] {
        payload.extend_from_slice(&x.to_le_bytes());
    }
    payload.extend_from_slice(&zstd::bulk::compress(&changes, ZSTD_LEVEL)?);
    let len = u32::try_from(payload.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "a journal record over 4 GiB"))?;
    let mut record = Vec::with_capacity(payload.len() + 20);
    if std::fs::symlink_metadata(&path).map_or(true, |m| m.len() == 0) {
        record.extend_from_slice(JOURNAL_MAGIC);
    }
    record.extend_from_slice(&len.to_le_bytes());
    record.extend_from_slice(&lineage_core::fsio::xxh64::xxh64(&payload).to_le_bytes());
    record.extend_from_slice(&payload);
    lineage_core::fsio::append_synced(&path, &record).map(Some)
}

/// The journal's records that follow on from `header`, each as its
/// changes compressed and their length: `header` ends as the last one's.
/// Returns them, the journal's size (0: none) and whether bytes are left
/// after the last record taken: records after a torn or foreign one are
/// left out. Read a record at a time; each record's checksum and place in
/// the chain are checked here, its changes where they are applied.
fn read_journal(dir: &Path, header: &mut Header, size: TableSize) -> Result<Journal, Unusable> {
    let path = dir.join(JOURNAL);
    let corrupt = |e: &dyn std::fmt::Display| Unusable::Journal(e.to_string());
    let (file, len) = match lineage_core::fsio::open_own(&path, largest_journal(size)) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((Vec::new(), 0, false)),
        Err(e) if e.kind() == io::ErrorKind::FileTooLarge => {
            return Err(corrupt(&format_args!(
                "{len} bytes, more than a table of {size} can make it",
                len = std::fs::metadata(&path).map_or(0, |m| m.len())
            )));
        }
        Err(e) => return Err(corrupt(&e)),
    };
    let mut r = io::BufReader::with_capacity(1 << 16, file.take(len));
    let mut magic = [0; JOURNAL_MAGIC.len()];
    if r.read_exact(&mut magic).is_err() || &magic != JOURNAL_MAGIC {
        return Err(corrupt(&"not a lineage table journal"));
    }
    let word = |b: &[u8], i: usize| u64::from_le_bytes(b[8 * i..8 * i + 8].try_into().expect("8"));
    let most = largest_changes(size);
    let mut taken = JOURNAL_MAGIC.len() as u64;
    let mut records = Vec::new();
    loop {
        let mut head = [0; RECORD_HEAD];
        let left = len - taken;
        if left < RECORD_HEAD as u64 || r.read_exact(&mut head).is_err() {
            break;
        }
        let n = u32::from_le_bytes(head[..4].try_into().expect("4")) as usize;
        let sum = u64::from_le_bytes(head[4..].try_into().expect("8"));
        // A length past the file's end is a torn record, not an allocation.
        if n < RECORD_FIELDS || (RECORD_HEAD + n) as u64 > left {
            break;
        }
        let mut payload = vec![0; n];
        if r.read_exact(&mut payload).is_err() || lineage_core::fsio::xxh64::xxh64(&payload) != sum
        {
            break;
        }
        let follows = word(&payload, 0) == header.instance
            && (word(&payload, 1), word(&payload, 2)) == (header.versions, header.last_hash);
        if !follows {
            break;
        }
        let raw = word(&payload, 5);
        if raw > most {
            return Err(corrupt(&"a record's length"));
        }
        (header.versions, header.last_hash) = (word(&payload, 3), word(&payload, 4));
        payload.drain(..RECORD_FIELDS);
        records.push((payload, raw));
        taken += (RECORD_HEAD + n) as u64;
    }
    Ok((records, len, taken < len))
}

/// A journal's records (changes compressed, their length), its size and
/// whether bytes are left after them ([`read_journal`]).
type Journal = (Vec<(Vec<u8>, u64)>, u64, bool);

/// A snapshot and its journal read and checked, the table not yet made
/// from them: the frame's checksum, the header and each journal record's
/// checksum and place were checked on reading, the state and the records'
/// changes are decompressed and applied by [`Pending::restore`]. A command
/// that finds nothing to process (a catch-up with no change) never pays
/// for the table: most of an open's time, and all of its memory.
pub struct Pending {
    params: TableParams,
    payload: lineage_core::fsio::framed::Payload,
    /// Where the compressed state starts in the payload, and its length
    /// decompressed.
    state: (usize, u64),
    records: Vec<(Vec<u8>, u64)>,
}

impl Pending {
    /// The table the snapshot and its journal hold.
    pub fn restore(self) -> Result<Table, Unusable> {
        let corrupt = |e: io::Error| Unusable::Corrupt(format!("table state: {e}"));
        let (at, state_len) = self.state;
        // Decompressed as it is read, never held whole.
        let mut z =
            zstd::stream::read::Decoder::with_buffer(&self.payload[at..]).map_err(corrupt)?;
        let mut r = (&mut z).take(state_len);
        let mut table =
            Table::read_state(self.params, &mut r).map_err(|e| Unusable::Corrupt(e.to_string()))?;
        if r.limit() != 0 {
            return Err(Unusable::Corrupt(format!(
                "{} bytes of the table state left unread",
                r.limit()
            )));
        }
        if z.read(&mut [0u8; 1]).map_err(corrupt)? != 0 {
            return Err(Unusable::Corrupt("bytes after the table state".into()));
        }
        let journal = |e: &dyn std::fmt::Display| Unusable::Journal(e.to_string());
        for (bytes, raw) in &self.records {
            let changes = zstd::bulk::decompress(bytes, *raw as usize).map_err(|e| journal(&e))?;
            let mut c = &changes[..];
            table.apply_changes(&mut c).map_err(|e| journal(&e))?;
            if !c.is_empty() {
                return Err(journal(&"bytes after a record's changes"));
            }
        }
        table.clear_changes();
        Ok(table)
    }

    /// The table's counters, without making it: the last journal record's
    /// (each begins with them), else the state's first words.
    pub fn counters(&self) -> Result<Counters, Unusable> {
        let journal = |e: &dyn std::fmt::Display| Unusable::Journal(e.to_string());
        match self.records.last() {
            Some((bytes, raw)) => {
                let changes =
                    zstd::bulk::decompress(bytes, *raw as usize).map_err(|e| journal(&e))?;
                Counters::read(&mut &changes[..]).map_err(|e| journal(&e))
            }
            None => {
                let (at, _) = self.state;
                let corrupt = |e: io::Error| Unusable::Corrupt(format!("table state: {e}"));
                let mut z = zstd::stream::read::Decoder::with_buffer(&self.payload[at..])
                    .map_err(corrupt)?;
                Counters::read(&mut z).map_err(corrupt)
            }
        }
    }
}

/// The table a snapshot and its journal hold, with the header of the last
/// record applied and the files' sizes (the open makes it later, from
/// [`read_pending`]).
#[cfg(test)]
pub fn read(
    dir: &Path,
    key: &str,
    params: TableParams,
    tokens: impl FnOnce() -> u64,
) -> Result<(Header, Table, OnDisk), Unusable> {
    let (header, pending, disk) = read_pending(dir, key, params, tokens)?;
    Ok((header, pending.restore()?, disk))
}

/// [`read`], the table left to make ([`Pending::restore`]).
pub fn read_pending(
    dir: &Path,
    key: &str,
    params: TableParams,
    tokens: impl FnOnce() -> u64,
) -> Result<(Header, Pending, OnDisk), Unusable> {
    let path = dir.join(FILE);
    let largest = largest_snapshot(params.size, tokens);
    let bytes = lineage_core::fsio::read_own(&path, largest).map_err(FrameError::Io);
    let payload = bytes.and_then(|b| FORMAT.open(b)).map_err(|e| match e {
        FrameError::Io(e) if e.kind() == io::ErrorKind::NotFound => Unusable::Missing,
        FrameError::Io(e) if e.kind() == io::ErrorKind::FileTooLarge => Unusable::Corrupt(format!(
            "{} bytes, more than a table of {} can make it",
            std::fs::metadata(&path).map_or(0, |m| m.len()),
            params.size
        )),
        FrameError::Foreign(_) if written_before_frames(&path) => Unusable::Older,
        FrameError::Version { found, .. } if found < FORMAT.version => Unusable::Older,
        e => Unusable::Corrupt(e.to_string()),
    })?;
    let bad = || Unusable::Corrupt("bad header".into());
    let len = u32::from_le_bytes(
        payload
            .get(..4)
            .ok_or_else(bad)?
            .try_into()
            .map_err(|_| bad())?,
    );
    let len = len as usize;
    if len > MAX_PARAMS {
        return Err(bad());
    }
    // After the params: instance, versions, last hash, the state's length.
    let words_end = 4 + len + 8 * 4;
    let fields = payload.get(4..words_end).ok_or_else(bad)?;
    let params_text = std::str::from_utf8(&fields[..len]).map_err(|_| bad())?;
    let u = |i: usize| {
        let at = len + 8 * i;
        let mut b = [0; 8];
        b.copy_from_slice(&fields[at..at + 8]);
        u64::from_le_bytes(b)
    };
    let header = Header {
        params: params_text.to_string(),
        instance: u(0),
        versions: u(1),
        last_hash: u(2),
    };
    if header.params != key {
        return Err(Unusable::OtherParams(header.params));
    }
    let compressed = &payload[words_end..];
    // The state is at most the table's memory (a bounded table) or a few
    // bytes an entry beyond its compressed size (an unbounded one, whose
    // keys do not compress): a larger length is damage, not an allocation.
    let state_len = u(3);
    let most = match params.size {
        TableSize::Bytes(b) => b.saturating_add(4096),
        TableSize::Unbounded => (compressed.len() as u64).saturating_mul(64) + (1 << 20),
    };
    if state_len > most {
        return Err(bad());
    }
    let mut header = header;
    let (records, journal, tail) = read_journal(dir, &mut header, params.size)?;
    let snapshot = std::fs::metadata(&path).map_or(0, |m| m.len());
    let disk = OnDisk {
        snapshot,
        journal,
        tail,
    };
    let pending = Pending {
        params,
        state: (words_end, state_len),
        payload,
        records,
    };
    Ok((header, pending, disk))
}

#[cfg(test)]
mod tests {
    use super::*;
    use lineage_origin::{Params, TableSize};
    use lineage_testing::TempDir;
    use std::fs;

    /// More keys into `t`, as the next versions would look them up.
    fn more(t: &mut Table, from: u64, n: u64) {
        for k in from..from + n {
            let ins = lineage_origin::table::Hit {
                origin: (k % 11) as u32,
                offset: 1,
                prev: 2,
                next: 3,
            };
            t.lookup(k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 2, ins);
        }
    }

    /// A table of `size` bytes given 500 keys.
    fn filled(size: u64) -> (TableParams, Table) {
        let p = Params {
            table_size: TableSize::Bytes(size),
            ..Params::default()
        };
        let tp = p.table_params();
        let mut t = Table::new(tp).unwrap();
        more(&mut t, 0, 500);
        (tp, t)
    }

    fn sample() -> (TableParams, Table, Header) {
        let (tp, t) = filled(64 << 10);
        let h = Header {
            params: "k=8 test".into(),
            instance: 0x1234_5678,
            versions: 7,
            last_hash: 42,
        };
        (tp, t, h)
    }

    fn state(t: &Table) -> Vec<u8> {
        let mut v = Vec::new();
        t.write_state(&mut v).unwrap();
        v
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_fifo_in_place_of_the_snapshot_is_damage_not_a_wait() {
        // A regression here would block, not fail.
        lineage_testing::within(std::time::Duration::from_secs(30), || {
            let tmp = TempDir::new("snap-fifo");
            let d = tmp.0.clone();
            let c = std::ffi::CString::new(d.join(FILE).to_str().unwrap()).unwrap();
            // SAFETY: mkfifo with a NUL-terminated path and a mode.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
            let (tp, t, h) = sample();
            assert!(matches!(
                read(&d, "k=8 test", tp, || 0),
                Err(Unusable::Corrupt(_))
            ));
            // The index folder is ours: the FIFO is replaced by a snapshot.
            write(&d, &h, &t, &mut Vec::new()).unwrap();
            assert!(read(&d, "k=8 test", tp, || 0).is_ok());
        });
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_fifo_in_place_of_the_journal_is_damage_not_a_wait() {
        // A regression here would block, not fail.
        lineage_testing::within(std::time::Duration::from_secs(30), || {
            let tmp = TempDir::new("snap-jfifo");
            let d = tmp.0.clone();
            let (tp, t, h) = sample();
            write(&d, &h, &t, &mut Vec::new()).unwrap();
            let c = std::ffi::CString::new(d.join(JOURNAL).to_str().unwrap()).unwrap();
            // SAFETY: mkfifo with a NUL-terminated path and a mode.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
            assert!(matches!(
                read(&d, "k=8 test", tp, || 0),
                Err(Unusable::Journal(_))
            ));
            // Never appended to: the caller writes the snapshot whole instead.
            assert!(matches!(
                append(&d, h.instance, (7, 42), (8, 1), &t),
                Ok(None)
            ));
            // A snapshot written whole removes it.
            write(&d, &h, &t, &mut Vec::new()).unwrap();
            assert!(fs::symlink_metadata(d.join(JOURNAL)).is_err());
            assert!(read(&d, "k=8 test", tp, || 0).is_ok());
        });
    }

    /// A folder or a link at a table file's name was read
    /// through (a link) or made every start replay and every checkpoint
    /// fail (a folder): damage, never read or written through, and the next
    /// snapshot takes its place (a folder moved aside whole).
    #[cfg(unix)]
    #[test]
    fn a_folder_or_link_in_place_of_a_table_file_is_damage_and_replaced() {
        let tmp = TempDir::new("snap-jdir");
        let d = tmp.0.clone();
        let (tp, t, h) = sample();
        let victim = d.join("victim");
        for name in [JOURNAL, FILE] {
            // A journal that would apply, and a snapshot that would read,
            // behind a link: not read through.
            write(&d, &h, &t, &mut Vec::new()).unwrap();
            let mut t2 = Table::read_state(tp, &mut &state(&t)[..]).unwrap();
            more(&mut t2, 40_000, 30);
            append(&d, h.instance, (7, 42), (8, 80), &t2)
                .unwrap()
                .unwrap();
            fs::rename(d.join(name), &victim).unwrap();
            std::os::unix::fs::symlink(&victim, d.join(name)).unwrap();
            let kept = fs::read(&victim).unwrap();
            let r = read(&d, "k=8 test", tp, || 0).map(|(h, _, _)| h);
            assert!(
                matches!(&r, Err(Unusable::Journal(e) | Unusable::Corrupt(e)) if e.contains("not a regular file")),
                "{name}: {r:?}"
            );
            if name == JOURNAL {
                assert!(matches!(
                    append(&d, h.instance, (7, 42), (8, 1), &t),
                    Ok(None)
                ));
            }
            write(&d, &h, &t, &mut Vec::new()).unwrap();
            assert_eq!(fs::read(&victim).unwrap(), kept, "{name}: written through");
            assert!(!fs::symlink_metadata(d.join(name)).is_ok_and(|m| m.is_symlink()));
            let (h2, _, _) = read(&d, "k=8 test", tp, || 0).unwrap();
            assert_eq!(h2.versions, 7);
            fs::remove_file(&victim).unwrap();
        }
        // A folder, with something in it: moved aside whole.
        for name in [JOURNAL, FILE] {
            write(&d, &h, &t, &mut Vec::new()).unwrap();
            let _ = fs::remove_file(d.join(name));
            fs::create_dir(d.join(name)).unwrap();
            fs::write(d.join(name).join("keep"), b"mine").unwrap();
            let r = read(&d, "k=8 test", tp, || 0).map(|(h, _, _)| h);
            assert!(
                matches!(&r, Err(Unusable::Journal(e) | Unusable::Corrupt(e)) if e.contains("not a regular file")),
                "{name}: {r:?}"
            );
            let mut moved = Vec::new();
            write(&d, &h, &t, &mut moved).unwrap();
            let aside = d.join(format!("{name}.aside-1"));
            assert_eq!(moved, [(d.join(name), aside.clone())], "said where it went");
            assert_eq!(fs::read(aside.join("keep")).unwrap(), b"mine");
            assert!(read(&d, "k=8 test", tp, || 0).is_ok(), "{name}");
            if name == JOURNAL {
                assert!(fs::symlink_metadata(d.join(JOURNAL)).is_err());
            }
            fs::remove_dir_all(aside).unwrap();
        }
    }

    /// A sparse journal or snapshot of 30 GiB aborted every start: an
    /// allocation of its size. A file larger than its
    /// table can make it is damage, named, never read; a journal of the
    /// right size but holey after its records ends where they do.
    #[test]
    fn a_sparse_table_file_is_damage_not_an_allocation() {
        let tmp = TempDir::new("snap-sparse");
        let d = tmp.0.clone();
        let (tp, mut t, h) = sample();
        write(&d, &h, &t, &mut Vec::new()).unwrap();
        let good = fs::read(d.join(FILE)).unwrap();
        let huge = 30u64 << 30;
        for name in [JOURNAL, FILE] {
            let f = fs::File::options()
                .write(true)
                .create(true)
                .truncate(false)
                .open(d.join(name))
                .unwrap();
            f.set_len(huge).unwrap();
            drop(f);
            let r = read(&d, "k=8 test", tp, || 0).map(|(h, _, _)| h);
            assert!(
                matches!(&r, Err(Unusable::Journal(e) | Unusable::Corrupt(e)) if e.contains("32212254720 bytes, more than a table of 64KiB")),
                "{name}: {r:?}"
            );
            write(&d, &h, &t, &mut Vec::new()).unwrap();
            assert!(read(&d, "k=8 test", tp, || 0).is_ok());
        }
        // Within the bound: a record, then a hole, read only as far as the
        // record goes (the hole is a torn tail).
        t.clear_changes();
        more(&mut t, 50_000, 30);
        let len = append(&d, h.instance, (7, 42), (8, 80), &t)
            .unwrap()
            .unwrap();
        let j = fs::File::options()
            .write(true)
            .open(d.join(JOURNAL))
            .unwrap();
        j.set_len(len + (60 << 10)).unwrap();
        drop(j);
        let (h2, back, disk) = read(&d, "k=8 test", tp, || 0).unwrap();
        assert_eq!((h2.versions, disk.tail), (8, true));
        assert_eq!(state(&back), state(&t));
        // An unbounded table's snapshot is bounded by the history's tokens.
        let p = Params {
            table_size: TableSize::Unbounded,
            ..Params::default()
        };
        let mut u = Table::new(p.table_params()).unwrap();
        more(&mut u, 0, 500);
        write(&d, &h, &u, &mut Vec::new()).unwrap();
        assert!(read(&d, "k=8 test", p.table_params(), || 500).is_ok());
        let f = fs::File::options().write(true).open(d.join(FILE)).unwrap();
        f.set_len(huge).unwrap();
        drop(f);
        assert!(matches!(
            read(&d, "k=8 test", p.table_params(), || 500),
            Err(Unusable::Corrupt(_))
        ));
        let _ = good;
    }

    #[test]
    fn a_snapshot_of_the_first_format_is_named_as_such() {
        let tmp = TempDir::new("snap-old");
        let d = tmp.0.clone();
        let (tp, _, _) = sample();
        fs::write(d.join(FILE), b"LINEAGETABLE\x01\0\0\0rest").unwrap();
        assert!(matches!(
            read(&d, "k=8 test", tp, || 0),
            Err(Unusable::Older)
        ));
    }

    #[test]
    fn a_snapshot_of_an_earlier_framed_format_is_older_and_a_later_one_damage() {
        let tmp = TempDir::new("snap-v2");
        let d = tmp.0.clone();
        let (tp, t, h) = sample();
        write(&d, &h, &t, &mut Vec::new()).unwrap();
        let mut bytes = fs::read(d.join(FILE)).unwrap();
        // The format version is the word after the magic; the checksum is
        // not looked at before the version is.
        for (v, older) in [(2u32, true), (4, true), (FORMAT.version + 1, false)] {
            bytes[8..12].copy_from_slice(&v.to_le_bytes());
            fs::write(d.join(FILE), &bytes).unwrap();
            let r = read(&d, "k=8 test", tp, || 0).map(|(h, _, _)| h);
            assert_eq!(matches!(r, Err(Unusable::Older)), older, "version {v}");
            assert!(r.is_err());
        }
    }

    #[test]
    fn round_trips() {
        let tmp = TempDir::new("snap-rt");
        let d = tmp.0.clone();
        let (tp, t, h) = sample();
        write(&d, &h, &t, &mut Vec::new()).unwrap();
        let names: Vec<_> = fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, [FILE], "no temp file left");
        let (h2, t2, _) = read(&d, "k=8 test", tp, || 0).unwrap();
        assert!(matches!(
            read(&d, "k=9 test", tp, || 0),
            Err(Unusable::OtherParams(p)) if p == "k=8 test"
        ));
        assert_eq!(h2, h);
        assert_eq!(state(&t2), state(&t));
    }

    #[test]
    fn a_checkpoint_appends_what_changed_and_a_read_applies_it() {
        let tmp = TempDir::new("snap-journal");
        let d = tmp.0.clone();
        // Grown whole first: a table that grows is written whole.
        let (tp, mut t) = filled(1 << 20);
        let mut h = sample().2;
        write(&d, &h, &t, &mut Vec::new()).unwrap();
        t.clear_changes();
        let mut from = (h.versions, h.last_hash);
        while !t.grown() {
            let next = 1_000_000 + t.counters().lookups;
            more(&mut t, next, 1000);
            let to = (from.0 + 1, from.1 + 1);
            if append(&d, h.instance, from, to, &t).unwrap().is_none() {
                (h.versions, h.last_hash) = to;
                write(&d, &h, &t, &mut Vec::new()).unwrap();
            }
            t.clear_changes();
            from = to;
        }
        (h.versions, h.last_hash) = from;
        let base = write(&d, &h, &t, &mut Vec::new()).unwrap();
        t.clear_changes();
        // Three checkpoints of 20 new keys each: records of the buckets
        // those keys changed, not the table.
        let mut from = (h.versions, h.last_hash);
        let first = from;
        let mut sizes = Vec::new();
        for i in 0..3u64 {
            more(&mut t, 10_000 + 100 * i, 20);
            let to = (from.0 + 1, 100 + i);
            sizes.push(append(&d, h.instance, from, to, &t).unwrap().unwrap());
            t.clear_changes();
            from = to;
        }
        // (20 of the table's 2,040 buckets, each written whole.)
        assert!(
            sizes[0] * 20 < base,
            "a record of 20 keys: {sizes:?} (snapshot {base})"
        );
        assert!(sizes[2] < 3 * sizes[0] + 1024);
        let (h2, back, disk) = read(&d, "k=8 test", tp, || 0).unwrap();
        assert_eq!(state(&back), state(&t));
        assert_eq!(back.counters(), t.counters());
        assert_eq!((h2.versions, h2.last_hash), (first.0 + 3, 102));
        assert_eq!(
            disk,
            OnDisk {
                snapshot: base,
                journal: sizes[2],
                tail: false
            }
        );
        // What was read has no changes pending: the next record is empty
        // of buckets (and applies).
        let empty = append(&d, h.instance, from, (from.0 + 1, 7), &back)
            .unwrap()
            .unwrap();
        assert!(empty - sizes[2] < 200);
        // A snapshot written whole takes the journal with it.
        write(&d, &h2, &back, &mut Vec::new()).unwrap();
        assert!(!d.join(JOURNAL).exists());
    }

    #[test]
    fn a_torn_or_foreign_journal_record_ends_the_journal() {
        let tmp = TempDir::new("snap-torn");
        let d = tmp.0.clone();
        let (tp, mut t) = filled(1 << 20);
        let h = sample().2;
        write(&d, &h, &t, &mut Vec::new()).unwrap();
        t.clear_changes();
        more(&mut t, 20_000, 30);
        let first = append(&d, h.instance, (7, 42), (8, 80), &t)
            .unwrap()
            .unwrap();
        t.clear_changes();
        let after_first = state(&t);
        more(&mut t, 30_000, 30);
        append(&d, h.instance, (8, 80), (9, 90), &t)
            .unwrap()
            .unwrap();
        // A crash mid-append: the second record is cut short.
        let j = d.join(JOURNAL);
        let bytes = fs::read(&j).unwrap();
        fs::write(&j, &bytes[..bytes.len() - 5]).unwrap();
        let (h2, back, disk) = read(&d, "k=8 test", tp, || 0).unwrap();
        assert_eq!((h2.versions, h2.last_hash), (8, 80));
        assert_eq!(state(&back), after_first);
        assert!(disk.tail, "a record after the torn one would never be read");
        // A record that does not follow on from the state (another
        // instance, or a journal left beside a newer snapshot): ignored.
        fs::write(&j, &bytes[..first as usize]).unwrap();
        let foreign = Header {
            instance: 99,
            ..h.clone()
        };
        write(&d, &foreign, &back, &mut Vec::new()).unwrap();
        fs::write(&j, &bytes[..first as usize]).unwrap();
        let (h3, _, _) = read(&d, "k=8 test", tp, || 0).unwrap();
        assert_eq!((h3.instance, h3.versions), (99, 7));
        // A flipped byte inside a record: its checksum fails, it is left out.
        let mut flipped = bytes[..first as usize].to_vec();
        let at = flipped.len() - 3;
        flipped[at] ^= 0x40;
        write(&d, &h, &back, &mut Vec::new()).unwrap();
        fs::write(&j, &flipped).unwrap();
        let (h4, _, _) = read(&d, "k=8 test", tp, || 0).unwrap();
        assert_eq!(h4.versions, 7);
        // Not a journal at all: damage, so the history is replayed.
        fs::write(&j, b"something else").unwrap();
        assert!(matches!(
            read(&d, "k=8 test", tp, || 0),
            Err(Unusable::Journal(_))
        ));
    }

    #[test]
    fn a_big_table_holding_little_is_a_small_file() {
        let tmp = TempDir::new("snap-small");
        let d = tmp.0.clone();
        let (tp, t) = filled(64 << 20);
        let h = sample().2;
        write(&d, &h, &t, &mut Vec::new()).unwrap();
        // 500 entries of 8 bytes and 130,561 zero fill words, compressed:
        // not the 64 MiB the table spans.
        let size = fs::metadata(d.join(FILE)).unwrap().len();
        assert!(size < 16 << 10, "{size} bytes");
        let (_, back, _) = read(&d, "k=8 test", tp, || 0).unwrap();
        assert_eq!(state(&back), state(&t));
        assert_eq!(back.counters(), t.counters());
    }

    #[test]
    fn a_state_length_beyond_the_table_is_damage_not_an_allocation() {
        let tmp = TempDir::new("snap-len");
        let d = tmp.0.clone();
        let (tp, t, h) = sample();
        write(&d, &h, &t, &mut Vec::new()).unwrap();
        let framed = fs::read(d.join(FILE)).unwrap();
        let mut payload = FORMAT.open(framed).unwrap();
        // The state's length is the header's last word, after the params.
        let at = 4 + h.params.len() + 24;
        payload[at..at + 8].copy_from_slice(&(1u64 << 40).to_le_bytes());
        fs::write(d.join(FILE), FORMAT.frame(&payload)).unwrap();
        assert!(matches!(
            read(&d, "k=8 test", tp, || 0),
            Err(Unusable::Corrupt(_))
        ));
    }

    #[test]
    fn any_flipped_byte_or_truncation_is_caught() {
        let tmp = TempDir::new("snap-flip");
        let d = tmp.0.clone();
        let (tp, t, h) = sample();
        write(&d, &h, &t, &mut Vec::new()).unwrap();
        let good = fs::read(d.join(FILE)).unwrap();
        // Every byte of the header and a spread of payload bytes.
        let positions = (0..90).chain((80..good.len()).step_by(97));
        for i in positions {
            let mut bad = good.clone();
            bad[i] ^= 0x20;
            fs::write(d.join(FILE), &bad).unwrap();
            assert!(
                matches!(read(&d, "k=8 test", tp, || 0), Err(Unusable::Corrupt(_))),
                "flip at {i} not caught"
            );
        }
        for cut in [0, 5, 19, 40, good.len() / 2, good.len() - 1] {
            fs::write(d.join(FILE), &good[..cut]).unwrap();
            assert!(matches!(
                read(&d, "k=8 test", tp, || 0),
                Err(Unusable::Corrupt(_))
            ));
        }
        fs::remove_file(d.join(FILE)).unwrap();
        assert!(matches!(
            read(&d, "k=8 test", tp, || 0),
            Err(Unusable::Missing)
        ));
    }
}
