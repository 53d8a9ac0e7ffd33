//! The fixed-size table's state as a file beside the database, so a re-open
//! continues the origin pass without replaying the history.
//!
//! A framed file ([`crate::fsio::framed`], magic `LINTABLE`) whose payload is
//! the parameters (u32 length + UTF-8), the database's instance id u64, the
//! document versions covered u64, the content hash of the last covered
//! version u64 (all little-endian), then [`Table::write_state`]'s bytes.
//! Written atomically: a crash leaves the old snapshot or the new one.

use std::io;
use std::path::Path;

use crate::fsio::framed::{Format, FrameError};
use crate::origin::table::{Table, TableParams};

pub(crate) const FILE: &str = "table.snapshot";
/// Bump the version when the payload or [`Table::write_state`]'s bytes change,
/// or the keys in them (3: shingle keys of mixed token fingerprints).
const FORMAT: Format = Format {
    magic: b"LINTABLE",
    version: 3,
    name: "table snapshot",
    largest: 1 << 40,
};
/// Parameter strings are short; a longer length field is corruption.
const MAX_PARAMS: usize = 4096;

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
    pub last_hash: u64,
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
}

/// Whether `path` is a snapshot of lineage 0.1's first format (magic
/// `LINEAGETABLE`, before the frame).
fn written_before_frames(path: &Path) -> bool {
    crate::fsio::read_bounded(path, FORMAT.largest).is_ok_and(|b| b.starts_with(b"LINEAGETABLE"))
}

/// Write `table` with `header` atomically as `dir/table.snapshot`.
pub(crate) fn write(dir: &Path, header: &Header, table: &Table) -> io::Result<()> {
    // The index folder is ours: whatever else stands at the snapshot's name
    // (a FIFO, a link) is damage, replaced.
    let target = dir.join(FILE);
    if std::fs::symlink_metadata(&target).is_ok_and(|m| !m.is_file()) {
        let _ = std::fs::remove_file(&target);
    }
    FORMAT
        .write(&target, |mut w| {
            w.write_all(&(header.params.len() as u32).to_le_bytes())?;
            w.write_all(header.params.as_bytes())?;
            for x in [header.instance, header.versions, header.last_hash] {
                w.write_all(&x.to_le_bytes())?;
            }
            table.write_state(&mut w)
        })
        .map(|_| ())
}

pub fn read(dir: &Path, key: &str, params: TableParams) -> Result<(Header, Table), Unusable> {
    let path = dir.join(FILE);
    let payload = FORMAT.read(&path).map_err(|e| match e {
        FrameError::Io(e) if e.kind() == io::ErrorKind::NotFound => Unusable::Missing,
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
    let fields = payload.get(4..4 + len + 24).ok_or_else(bad)?;
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
    let mut r = &payload[4 + len + 24..];
    let table = Table::read_state(params, &mut r).map_err(|e| Unusable::Corrupt(e.to_string()))?;
    if !r.is_empty() {
        return Err(Unusable::Corrupt(format!(
            "{} bytes after the table state",
            r.len()
        )));
    }
    Ok((header, table))
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
    fn a_snapshot_of_the_first_format_is_named_as_such() {
        let d = dir("old");
        let (tp, _, _) = sample();
        fs::write(d.join(FILE), b"LINEAGETABLE\x01\0\0\0rest").unwrap();
        assert!(matches!(read(&d, "k=8 test", tp), Err(Unusable::Older)));
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_snapshot_of_an_earlier_framed_format_is_older_and_a_later_one_damage() {
        let d = dir("v2");
        let (tp, t, h) = sample();
        write(&d, &h, &t).unwrap();
        let mut bytes = fs::read(d.join(FILE)).unwrap();
        // The format version is the word after the magic; the checksum is
        // not looked at before the version is.
        for (v, older) in [(2u32, true), (FORMAT.version + 1, false)] {
            bytes[8..12].copy_from_slice(&v.to_le_bytes());
            fs::write(d.join(FILE), &bytes).unwrap();
            let r = read(&d, "k=8 test", tp);
            assert_eq!(matches!(r, Err(Unusable::Older)), older, "version {v}");
            assert!(r.is_err());
        }
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
