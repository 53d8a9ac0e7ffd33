//! The fixed-size table's state as a file beside the database, so a re-open
//! continues the origin pass without replaying the history.
//!
//! Layout (little-endian): magic `LINEAGETABLE` (12 bytes), format
//! version u32, parameters (u32 length + UTF-8), the database's instance id
//! u64, document versions covered u64, content hash of the last covered
//! version u64, payload length u64,
//! checksum u64 (XXH64 of the fields before the length, the payload, then the
//! length), then the payload of [`Table::write_state`]. Written to a temp file, fsynced,
//! renamed over the old one, and the folder fsynced: a crash leaves the old
//! snapshot or the new one, never a mix.

use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;

use super::checksum::Xxh64;
use crate::origin::table::{Table, TableParams};

pub const FILE: &str = "table.snapshot";
const MAGIC: &[u8; 12] = b"LINEAGETABLE";
/// Bump when the layout or [`Table::write_state`]'s bytes change.
pub const FORMAT: u32 = 1;
/// Parameter strings are short; a longer length field is corruption.
const MAX_PARAMS: usize = 4096;

/// What a snapshot says it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// The engine parameters' canonical string (`index::params_key`).
    pub params: String,
    /// The random id of the database the snapshot goes with (`meta.instance`):
    /// a snapshot left beside a rebuilt database never matches it.
    pub instance: u64,
    /// Document versions 0..versions the table has processed.
    pub versions: u64,
    /// Content hash of version `versions - 1` (0 if none): ties the snapshot
    /// to the document log it was written with.
    pub last_hash: u64,
}

/// Why a snapshot cannot be used.
#[derive(Debug)]
pub enum Unusable {
    Missing,
    /// Written with other engine parameters (the header's).
    OtherParams(String),
    /// Unreadable, truncated, bad checksum, other format: a one-line reason.
    Corrupt(String),
}

/// Write `table` with `header` atomically as `dir/table.snapshot`.
pub fn write(dir: &Path, header: &Header, table: &Table) -> io::Result<()> {
    let mut head = Vec::with_capacity(64 + header.params.len());
    head.extend_from_slice(MAGIC);
    head.extend_from_slice(&FORMAT.to_le_bytes());
    head.extend_from_slice(&(header.params.len() as u32).to_le_bytes());
    head.extend_from_slice(header.params.as_bytes());
    head.extend_from_slice(&header.instance.to_le_bytes());
    head.extend_from_slice(&header.versions.to_le_bytes());
    head.extend_from_slice(&header.last_hash.to_le_bytes());
    let len_at = head.len() as u64;
    head.extend_from_slice(&[0; 16]); // payload length and checksum, patched below

    // The index folder is ours: whatever else stands at the snapshot's name
    // (a FIFO, a link) is damage, replaced.
    let target = dir.join(FILE);
    if std::fs::symlink_metadata(&target).is_ok_and(|m| !m.is_file()) {
        let _ = std::fs::remove_file(&target);
    }
    crate::fsio::write_atomic(&target, |out| {
        let mut w = HashingWriter {
            inner: &mut *out,
            hash: Xxh64::default(),
            len: 0,
        };
        w.inner.write_all(&head)?;
        w.hash.update(&head[..head.len() - 16]);
        table.write_state(&mut w)?;
        let (payload_len, mut hash) = (w.len, w.hash);
        hash.update(&payload_len.to_le_bytes());
        out.seek(SeekFrom::Start(len_at))?;
        out.write_all(&payload_len.to_le_bytes())?;
        out.write_all(&hash.finish().to_le_bytes())
    })
    .map(|_| ())
}

pub fn read(dir: &Path, key: &str, params: TableParams) -> Result<(Header, Table), Unusable> {
    let mut bytes = Vec::new();
    open(dir)?.read_to_end(&mut bytes).map_err(corrupt)?;
    let short = || Unusable::Corrupt("truncated".into());
    let params_len = check_prefix(bytes.get(..20).ok_or_else(short)?)?;
    let head_len = 20 + params_len + 40;
    let head = bytes.get(..head_len).ok_or_else(short)?;
    let (header, payload_len, checksum) = parse_rest(head, params_len)?;
    let payload = &bytes[head_len..];
    if payload.len() as u64 != payload_len {
        return Err(Unusable::Corrupt(format!(
            "payload of {} bytes, header says {payload_len}",
            payload.len()
        )));
    }
    let mut h = Xxh64::default();
    h.update(&head[..head_len - 16]);
    h.update(payload);
    h.update(&payload_len.to_le_bytes());
    if h.finish() != checksum {
        return Err(Unusable::Corrupt("checksum mismatch".into()));
    }
    if header.params != key {
        return Err(Unusable::OtherParams(header.params));
    }
    let mut r = payload;
    let table = Table::read_state(params, &mut r).map_err(corrupt)?;
    if !r.is_empty() {
        return Err(Unusable::Corrupt(format!(
            "{} bytes after the table state",
            r.len()
        )));
    }
    Ok((header, table))
}

/// The snapshot's bytes: a regular file no larger than a table can be (a
/// FIFO or a device put there is damage, not something to wait on).
fn open(dir: &Path) -> Result<std::io::Cursor<Vec<u8>>, Unusable> {
    const LARGEST: u64 = 1 << 40;
    crate::fsio::read_bounded(&dir.join(FILE), LARGEST)
        .map(std::io::Cursor::new)
        .map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => Unusable::Missing,
            _ => corrupt(e),
        })
}

fn corrupt(e: io::Error) -> Unusable {
    Unusable::Corrupt(e.to_string())
}

/// Check magic and format; the length of the parameter string.
fn check_prefix(head: &[u8]) -> Result<usize, Unusable> {
    if &head[..12] != MAGIC {
        return Err(Unusable::Corrupt("not a table snapshot".into()));
    }
    let format = u32::from_le_bytes(head[12..16].try_into().expect("4 bytes"));
    if format != FORMAT {
        return Err(Unusable::Corrupt(format!(
            "snapshot format {format}, this lineage writes {FORMAT}"
        )));
    }
    let len = u32::from_le_bytes(head[16..20].try_into().expect("4 bytes")) as usize;
    if len > MAX_PARAMS {
        return Err(Unusable::Corrupt("bad header".into()));
    }
    Ok(len)
}

/// The header after the prefix: (header, payload length, checksum).
fn parse_rest(head: &[u8], params_len: usize) -> Result<(Header, u64, u64), Unusable> {
    let params = std::str::from_utf8(&head[20..20 + params_len])
        .map_err(|_| Unusable::Corrupt("bad header".into()))?
        .to_string();
    let u = |i: usize| {
        let at = 20 + params_len + 8 * i;
        u64::from_le_bytes(head[at..at + 8].try_into().expect("8 bytes"))
    };
    Ok((
        Header {
            params,
            instance: u(0),
            versions: u(1),
            last_hash: u(2),
        },
        u(3),
        u(4),
    ))
}

struct HashingWriter<W> {
    inner: W,
    hash: Xxh64,
    len: u64,
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hash.update(&buf[..n]);
        self.len += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::origin::{Params, TableSize};
    use std::fs;

    fn dir(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("lineage-snap-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    fn sample() -> (TableParams, Table, Header) {
        let p = Params {
            table_size: TableSize::Bytes(64 << 10),
            ..Params::default()
        };
        let tp = p.table_params();
        let mut t = Table::new(tp).unwrap();
        for k in 0..500u64 {
            let ins = crate::origin::table::Hit {
                origin: (k % 7) as u32,
                offset: 0,
                prev: 0,
                next: 0,
            };
            t.lookup(k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 2, ins);
        }
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
        let d = dir("fifo");
        let c = std::ffi::CString::new(d.join(FILE).to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a NUL-terminated path and a mode.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let (tp, t, h) = sample();
        assert!(matches!(
            read(&d, "k=8 test", tp),
            Err(Unusable::Corrupt(_))
        ));
        // The index folder is ours: the FIFO is replaced by a snapshot.
        write(&d, &h, &t).unwrap();
        assert!(read(&d, "k=8 test", tp).is_ok());
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn round_trips() {
        let d = dir("rt");
        let (tp, t, h) = sample();
        write(&d, &h, &t).unwrap();
        let names: Vec<_> = fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, [FILE], "no temp file left");
        let (h2, t2) = read(&d, "k=8 test", tp).unwrap();
        assert!(matches!(
            read(&d, "k=9 test", tp),
            Err(Unusable::OtherParams(p)) if p == "k=8 test"
        ));
        assert_eq!(h2, h);
        assert_eq!(state(&t2), state(&t));
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn any_flipped_byte_or_truncation_is_caught() {
        let d = dir("flip");
        let (tp, t, h) = sample();
        write(&d, &h, &t).unwrap();
        let good = fs::read(d.join(FILE)).unwrap();
        // Every byte of the header and a spread of payload bytes.
        let positions = (0..90).chain((80..good.len()).step_by(97));
        for i in positions {
            let mut bad = good.clone();
            bad[i] ^= 0x20;
            fs::write(d.join(FILE), &bad).unwrap();
            assert!(
                matches!(read(&d, "k=8 test", tp), Err(Unusable::Corrupt(_))),
                "flip at {i} not caught"
            );
        }
        for cut in [0, 5, 19, 40, good.len() / 2, good.len() - 1] {
            fs::write(d.join(FILE), &good[..cut]).unwrap();
            assert!(matches!(
                read(&d, "k=8 test", tp),
                Err(Unusable::Corrupt(_))
            ));
        }
        fs::remove_file(d.join(FILE)).unwrap();
        assert!(matches!(read(&d, "k=8 test", tp), Err(Unusable::Missing)));
        fs::remove_dir_all(&d).unwrap();
    }
}
