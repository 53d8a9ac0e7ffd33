//! Process 0's part of a checkpoint: the report so far, kept so that a
//! resumed run writes the whole report, byte for byte an uninterrupted
//! run's (README, "On a cluster").
//!
//! What is kept is what the pass gave back, document by document, in
//! order, not the report's bytes: replayed through the same writer, it
//! gives the same JSON or summary, and the same ids, skipped files and
//! keys for alignment, wherever the report goes (standard output or `-o
//! FILE`), and whether the lost run wrote JSON or not. Once every document
//! of an epoch the shards checkpoint at is in, a mark follows, and the file
//! is synced: a resumed run replays up to the mark of the epoch every
//! process agreed on, cuts the file there and goes on writing.
//!
//! The file, `report.ckpt` in the checkpoint folder: 16 bytes of magic and
//! the run's check (a u64 little-endian), as every `*.ckpt` file there
//! begins (`lineage_split`'s checkpoints); then records, each a tag byte:
//! `D` a document (id, tokens, shingles, the path's length and bytes, the
//! units' count; 1 and each unit's key where the run aligns, else 0; each
//! unit's start, as the change from the one before, and its length; the
//! labels as runs of one origin: origin and length),
//! `S` a file left out (the path's and the reason's lengths and bytes), `M`
//! a mark (epochs completed, places, then the XXH64 of every byte of the
//! file before it). Numbers are little-endian, lengths and ids u32, keys
//! and a mark's numbers u64; a unit's start and length and the runs are
//! LEB128 varints (the start's change zigzagged), a byte or two each: a
//! document takes about its keys' 8 bytes a unit, and 2 without them. A
//! mark whose hash differs, and all after it, is torn: not held.

use std::fs;
use std::io::{self, BufReader, BufWriter, Read, Seek, Write};
use std::path::{Path, PathBuf};

use lineage_core::fsio::xxh64::Xxh64;
use lineage_origin::Unit;
use lineage_split::Point;

use super::Fatal;
use super::writer::Entry;

/// The file's name in the checkpoint folder.
const NAME: &str = "report.ckpt";
const MAGIC: &[u8; 16] = b"lineage-report/1";
const HEADER: u64 = 24;

/// What the pass gave back at one place of the run.
pub(super) enum Record {
    /// A document: its entry of the report (labels as ids) and path.
    Doc(Entry, String),
    /// A file left out: its path, and why.
    Skipped(String, String),
}

/// The journal, open for writing at its end.
pub(super) struct Journal {
    out: BufWriter<fs::File>,
    /// Of every byte written so far.
    hash: Xxh64,
    scratch: Vec<u8>,
    /// Whether documents' keys are kept (the run aligns: a resumed run's
    /// alignment reads the earlier ones').
    keys: bool,
}

fn path(dir: &Path) -> PathBuf {
    dir.join(NAME)
}

impl Journal {
    /// A new journal in `dir` for the run of `check`, replacing any.
    fn create(dir: &Path, check: u64, keys: bool) -> io::Result<Journal> {
        let f = fs::File::create(path(dir))?;
        let mut j = Journal {
            out: BufWriter::with_capacity(1 << 20, f),
            hash: Xxh64::default(),
            scratch: Vec::new(),
            keys,
        };
        let mut head = MAGIC.to_vec();
        head.extend_from_slice(&check.to_le_bytes());
        j.put(&head)?;
        j.sync()?;
        Ok(j)
    }

    /// The epochs the journal in `dir` holds whole, for the run of `check`;
    /// none where there is no journal, it is another run's (refused by
    /// the split pass, which checks every `*.ckpt` file), or it is torn
    /// before its first mark.
    pub(super) fn held(dir: &Path, check: u64) -> Vec<Point> {
        let Some(mut r) = Reader::open(dir, check) else {
            return Vec::new();
        };
        let mut marks = Vec::new();
        while let Some(item) = r.next() {
            if let Item::Mark(p) = item {
                marks.push(p);
            }
        }
        marks
    }

    /// Continue the journal in `dir` from `from`: each record before its
    /// mark to `each`, in order, then the file cut after it and open for
    /// writing there, keeping documents' keys where `keys`. From the start,
    /// a new journal.
    pub(super) fn resume(
        dir: &Path,
        check: u64,
        keys: bool,
        from: Point,
        mut each: impl FnMut(Record) -> Result<(), Fatal>,
    ) -> Result<Journal, Fatal> {
        let shown = path(dir).display().to_string();
        let cannot = |e: &dyn std::fmt::Display| Fatal(format!("checkpoint {shown}: {e}"));
        if from.epoch == 0 {
            return Journal::create(dir, check, keys).map_err(|e| cannot(&e));
        }
        let lacks = || cannot(&format_args!("torn before epoch {}", from.epoch));
        let mut r = Reader::open(dir, check).ok_or_else(lacks)?;
        let mut places = 0u64;
        loop {
            match r.next().ok_or_else(lacks)? {
                Item::Record(rec) => {
                    places += 1;
                    each(rec)?;
                }
                Item::Mark(p) if p.epoch == from.epoch && p.places == from.places => break,
                Item::Mark(_) => {}
            }
        }
        if places != from.places {
            return Err(cannot(&format_args!(
                "{places} places before epoch {}, where the processes agreed on {}",
                from.epoch, from.places
            )));
        }
        let (at, hash) = (r.at, r.hash);
        let mut f = fs::OpenOptions::new()
            .write(true)
            .open(path(dir))
            .map_err(|e| cannot(&e))?;
        f.set_len(at).map_err(|e| cannot(&e))?;
        f.seek(io::SeekFrom::Start(at)).map_err(|e| cannot(&e))?;
        Ok(Journal {
            out: BufWriter::with_capacity(1 << 20, f),
            hash,
            scratch: Vec::new(),
            keys,
        })
    }

    /// The run is whole: its journal is of no more use.
    pub(super) fn remove(dir: &Path) {
        let _ = fs::remove_file(path(dir));
    }

    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.hash.update(bytes);
        self.out.write_all(bytes)
    }

    fn sync(&mut self) -> io::Result<()> {
        self.out.flush()?;
        self.out.get_ref().sync_data()
    }

    /// A document of the report, as the writer is given it.
    pub(super) fn doc(&mut self, entry: &Entry, path: &str) -> io::Result<()> {
        let Entry::Labelled {
            id,
            tokens,
            shingles,
            units,
            labels,
        } = entry
        else {
            // The sequential pass is never checkpointed.
            return Ok(());
        };
        let mut b = std::mem::take(&mut self.scratch);
        b.clear();
        b.push(b'D');
        for w in [*id, *tokens, *shingles] {
            b.extend_from_slice(&w.to_le_bytes());
        }
        bytes(&mut b, path.as_bytes());
        b.extend_from_slice(&(units.len() as u32).to_le_bytes());
        b.push(u8::from(self.keys));
        if self.keys {
            for u in units {
                b.extend_from_slice(&u.key.to_le_bytes());
            }
        }
        let mut start = 0i64;
        for u in units {
            let change = i64::from(u.start) - start;
            start = i64::from(u.start);
            varint(&mut b, ((change << 1) ^ (change >> 63)) as u64);
            varint(&mut b, u64::from(u.end.saturating_sub(u.start)));
        }
        for run in labels.chunk_by(|a, b| a == b) {
            varint(&mut b, u64::from(run[0]));
            varint(&mut b, run.len() as u64);
        }
        let put = self.put(&b);
        self.scratch = b;
        put
    }

    /// A file left out.
    pub(super) fn skipped(&mut self, path: &str, reason: &str) -> io::Result<()> {
        let mut b = vec![b'S'];
        bytes(&mut b, path.as_bytes());
        bytes(&mut b, reason.as_bytes());
        self.put(&b)
    }

    /// Every document of epoch `at` is in: marked, and synced.
    pub(super) fn mark(&mut self, at: Point) -> io::Result<()> {
        let mut b = vec![b'M'];
        b.extend_from_slice(&at.epoch.to_le_bytes());
        b.extend_from_slice(&at.places.to_le_bytes());
        self.put(&b)?;
        let digest = self.hash.finish();
        self.put(&digest.to_le_bytes())?;
        self.sync()
    }
}

/// `v` as LEB128: seven bits a byte, low first, the top bit set on all but
/// the last.
fn varint(b: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        b.push(v as u8 | 0x80);
        v >>= 7;
    }
    b.push(v as u8);
}

fn bytes(b: &mut Vec<u8>, s: &[u8]) {
    b.extend_from_slice(&(s.len() as u32).to_le_bytes());
    b.extend_from_slice(s);
}

/// What [`Reader::next`] reads.
enum Item {
    Record(Record),
    Mark(Point),
}

/// A journal read from its start, its hash kept as it goes.
struct Reader {
    r: BufReader<fs::File>,
    hash: Xxh64,
    /// Bytes read.
    at: u64,
}

/// The most a length in a record may say: a path, a reason or a
/// document's units (a torn or damaged file is not allocated for).
const MOST: u32 = 1 << 28;

impl Reader {
    /// The journal in `dir`, if it is one of the run of `check`.
    fn open(dir: &Path, check: u64) -> Option<Reader> {
        let f = fs::File::open(path(dir)).ok()?;
        let mut r = Reader {
            r: BufReader::with_capacity(1 << 20, f),
            hash: Xxh64::default(),
            at: 0,
        };
        let head = r.take(HEADER as usize).ok()?;
        (head[..16] == MAGIC[..] && head[16..] == check.to_le_bytes()).then_some(r)
    }

    fn take(&mut self, n: usize) -> io::Result<Vec<u8>> {
        let mut b = vec![0u8; n];
        self.r.read_exact(&mut b)?;
        self.hash.update(&b);
        self.at += n as u64;
        Ok(b)
    }

    fn u32(&mut self) -> io::Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> io::Result<u64> {
        let b = self.take(8)?;
        let mut w = [0u8; 8];
        w.copy_from_slice(&b);
        Ok(u64::from_le_bytes(w))
    }

    fn varint(&mut self) -> io::Result<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.take(1)?[0];
            v |= u64::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                return Ok(v);
            }
        }
        Err(io::ErrorKind::InvalidData.into())
    }

    fn varint_u32(&mut self) -> io::Result<u32> {
        u32::try_from(self.varint()?).map_err(|_| io::ErrorKind::InvalidData.into())
    }

    fn text(&mut self) -> io::Result<String> {
        let n = self.u32()?;
        if n > MOST {
            return Err(io::ErrorKind::InvalidData.into());
        }
        String::from_utf8(self.take(n as usize)?).map_err(|_| io::ErrorKind::InvalidData.into())
    }

    /// The next record or mark; `None` at the end, or where the file is
    /// torn or damaged (a mark's hash differs).
    fn next(&mut self) -> Option<Item> {
        let tag = self.take(1).ok()?[0];
        match tag {
            b'D' => self.doc().ok().map(Item::Record),
            b'S' => {
                let path = self.text().ok()?;
                let reason = self.text().ok()?;
                Some(Item::Record(Record::Skipped(path, reason)))
            }
            b'M' => {
                let epoch = self.u64().ok()?;
                let places = self.u64().ok()?;
                let want = self.hash.finish();
                (self.u64().ok()? == want).then_some(Item::Mark(Point {
                    epoch,
                    places,
                    evicted: false,
                }))
            }
            _ => None,
        }
    }

    fn doc(&mut self) -> io::Result<Record> {
        let (id, tokens, shingles) = (self.u32()?, self.u32()?, self.u32()?);
        let path = self.text()?;
        let n = self.u32()?;
        if n > MOST {
            return Err(io::ErrorKind::InvalidData.into());
        }
        let with_keys = self.take(1)?[0] == 1;
        let mut units = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let key = if with_keys { self.u64()? } else { 0 };
            units.push(Unit {
                key,
                start: 0,
                end: 0,
            });
        }
        let mut start = 0i64;
        for u in &mut units {
            let z = self.varint()?;
            start += (z >> 1) as i64 ^ -((z & 1) as i64);
            u.start = u32::try_from(start).map_err(|_| io::ErrorKind::InvalidData)?;
            u.end = u.start.saturating_add(self.varint_u32()?);
        }
        let mut labels = Vec::with_capacity(n as usize);
        while labels.len() < n as usize {
            let (origin, run) = (self.varint_u32()?, self.varint()?);
            if run == 0 || labels.len() as u64 + run > u64::from(n) {
                return Err(io::ErrorKind::InvalidData.into());
            }
            labels.extend(std::iter::repeat_n(origin, run as usize));
        }
        let entry = Entry::Labelled {
            id,
            tokens,
            shingles,
            units,
            labels,
        };
        Ok(Record::Doc(entry, path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A document with units that overlap, restart and jump, and labels
    /// in runs and not.
    fn entry(id: u32) -> Entry {
        let spans = [(0, 8), (1, 9), (5, 13), (2, 4), (400_000, 400_008)];
        Entry::Labelled {
            id,
            tokens: 10 + id,
            shingles: 3,
            units: (spans.iter().enumerate())
                .map(|(i, &(start, end))| Unit {
                    key: (u64::from(id) << 40) ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                    start,
                    end,
                })
                .collect(),
            labels: vec![id, id, 0, id / 2, id / 2],
        }
    }

    /// An entry as text, to compare.
    fn shown(e: &Entry, keys: bool) -> String {
        match e {
            Entry::Labelled {
                id,
                tokens,
                shingles,
                units,
                labels,
            } => {
                let units: Vec<_> = (units.iter())
                    .map(|u| (if keys { u.key } else { 0 }, u.start, u.end))
                    .collect();
                format!("{id} {tokens} {shingles} {units:?} {labels:?}")
            }
            Entry::Done(_) => unreachable!(),
        }
    }

    fn at(epoch: u64, places: u64) -> Point {
        Point {
            epoch,
            places,
            evicted: false,
        }
    }

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("lineage-journal-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    /// Replayed to a mark: the records before it, in order and as written
    /// (with their keys or without), the file cut there and written on;
    /// the marks after a torn byte are not held.
    #[test]
    fn a_journal_replays_to_its_mark_and_goes_on_from_there() {
        for keys in [true, false] {
            let d = dir(&format!("replay-{keys}"));
            let mut j = Journal::create(&d, 7, keys).unwrap();
            j.doc(&entry(0), "a.md").unwrap();
            j.skipped("b.bin", "binary").unwrap();
            j.doc(&entry(3), "c.md").unwrap();
            j.mark(at(1, 3)).unwrap();
            j.doc(&entry(4), "d.md").unwrap();
            j.mark(at(2, 4)).unwrap();
            j.doc(&entry(5), "e.md").unwrap();
            drop(j);
            assert_eq!(Journal::held(&d, 7), [at(1, 3), at(2, 4)]);
            assert!(Journal::held(&d, 8).is_empty(), "another run's");

            let mut seen = Vec::new();
            let mut j = Journal::resume(&d, 7, keys, at(1, 3), |r| {
                seen.push(match r {
                    Record::Doc(e, p) => format!("{p}: {}", shown(&e, keys)),
                    Record::Skipped(p, why) => format!("{p}: {why}"),
                });
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{}", e.0));
            let want = [
                format!("a.md: {}", shown(&entry(0), keys)),
                "b.bin: binary".into(),
                format!("c.md: {}", shown(&entry(3), keys)),
            ];
            assert_eq!(seen, want);
            // Written on from the mark: the later marks are gone, new ones
            // hold.
            j.doc(&entry(4), "d.md").unwrap();
            j.mark(at(2, 4)).unwrap();
            drop(j);
            assert_eq!(Journal::held(&d, 7), [at(1, 3), at(2, 4)]);

            // A byte flipped in the second epoch: its mark is not held.
            let mut bytes = fs::read(path(&d)).unwrap();
            let n = bytes.len();
            bytes[n - 20] ^= 1;
            fs::write(path(&d), &bytes).unwrap();
            assert_eq!(Journal::held(&d, 7), [at(1, 3)]);
            // Torn half-way through the mark: the same.
            fs::write(path(&d), &bytes[..n - 10]).unwrap();
            assert_eq!(Journal::held(&d, 7), [at(1, 3)]);
            assert!(Journal::resume(&d, 7, keys, at(2, 4), |_| Ok(())).is_err());
            fs::remove_dir_all(&d).unwrap();
        }
    }

    /// Every `*.ckpt` file begins with 16 bytes of magic and the run's
    /// check: the split pass refuses a folder with another run's.
    #[test]
    fn the_journal_begins_as_every_checkpoint_does() {
        let d = dir("head");
        drop(Journal::create(&d, 0x0102_0304_0506_0708, true).unwrap());
        let bytes = fs::read(path(&d)).unwrap();
        assert_eq!(bytes.len(), HEADER as usize);
        assert_eq!(&bytes[16..24], &0x0102_0304_0506_0708u64.to_le_bytes());
        assert!(NAME.ends_with(".ckpt"));
        fs::remove_dir_all(&d).unwrap();
    }
}
