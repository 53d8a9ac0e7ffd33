//! The frame of every binary file lineage writes (the table snapshot, the
//! pocket index, the sample store's two files), so that each format says only
//! what its payload is (docs/formats.md, "Files lineage writes").
//!
//! | bytes | field |
//! | --- | --- |
//! | 8 | magic: which format |
//! | 4 | format version, u32 LE |
//! | 4 | reserved, 0 |
//! | 8 | payload length, u64 LE |
//! | 8 | XXH64 of the magic, version and reserved words, the payload, then the length |
//! | … | payload |
//!
//! The length is hashed last so the payload can be streamed (a table of
//! gigabytes is never held twice) and the length and checksum patched in at
//! the end. Written atomically ([`super::write_atomic`]: temp file, file and
//! folder synced); read only whole, bounded, and checked before any payload
//! byte is trusted.

use std::io::{self, Seek, SeekFrom, Write};
use std::path::Path;

use super::xxh64::Xxh64;

/// Bytes before the payload.
pub const HEADER: usize = 32;

/// One of lineage's binary formats.
#[derive(Clone, Copy, Debug)]
pub struct Format {
    /// The first 8 bytes of every such file: which format it is.
    pub magic: &'static [u8; 8],
    /// Bumped whenever the payload's layout changes.
    pub version: u32,
    /// What a person calls such a file, for messages ("table snapshot").
    pub name: &'static str,
    /// Larger files are refused unread.
    pub largest: u64,
}

/// Why a file cannot be read as its format.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// Reading the file failed, or it is not a regular file of at most
    /// `largest` bytes.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// Its magic is not the format's (the format's name).
    #[error("not a lineage {0}")]
    Foreign(&'static str),
    #[error("{name} format {found} (this lineage reads {supported})")]
    /// Another version of the format.
    Version {
        /// The format's name.
        name: &'static str,
        /// The version in the file.
        found: u32,
        /// The version this lineage reads.
        supported: u32,
    },
    #[error("{name} is truncated or padded: {found} payload bytes, its header says {expected}")]
    /// The payload is not as long as the header says (0 and 0: shorter
    /// than a header).
    Length {
        /// The format's name.
        name: &'static str,
        /// Payload bytes in the file.
        found: u64,
        /// Payload bytes the header gives.
        expected: u64,
    },
    /// The checksum does not match the bytes, or the reserved word is not 0
    /// (the format's name).
    #[error("{0} is damaged (checksum mismatch)")]
    Checksum(&'static str),
}

impl Format {
    /// Write `path` atomically: the frame around what `payload` writes.
    /// Returns the file's size.
    pub fn write(
        &self,
        path: &Path,
        payload: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    ) -> io::Result<u64> {
        super::write_atomic(path, |out| {
            let head = self.head();
            out.write_all(&head)?;
            out.write_all(&[0; 16])?;
            let mut w = Hashing {
                inner: &mut *out,
                hash: Xxh64::default(),
                len: 0,
            };
            w.hash.update(&head);
            payload(&mut w)?;
            let (len, mut hash) = (w.len, w.hash);
            hash.update(&len.to_le_bytes());
            out.seek(SeekFrom::Start(16))?;
            out.write_all(&len.to_le_bytes())?;
            out.write_all(&hash.finish().to_le_bytes())
        })
    }

    /// A whole file's bytes around `payload`, as [`Format::write`] writes them.
    pub fn frame(&self, payload: &[u8]) -> Vec<u8> {
        let head = self.head();
        let len = payload.len() as u64;
        let mut h = Xxh64::default();
        h.update(&head);
        h.update(payload);
        h.update(&len.to_le_bytes());
        let mut out = Vec::with_capacity(HEADER + payload.len());
        out.extend_from_slice(&head);
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&h.finish().to_le_bytes());
        out.extend_from_slice(payload);
        out
    }

    /// The payload of the file at `path`, checked.
    pub fn read(&self, path: &Path) -> Result<Payload, FrameError> {
        self.open(super::read_bounded(path, self.largest)?)
    }

    /// The payload of a whole file's bytes, checked: magic, version, length
    /// and checksum, in that order.
    pub fn open(&self, bytes: Vec<u8>) -> Result<Payload, FrameError> {
        if bytes.len() < 8 || &bytes[..8] != self.magic {
            return Err(FrameError::Foreign(self.name));
        }
        let Some(head) = bytes.get(..HEADER) else {
            return Err(FrameError::Length {
                name: self.name,
                found: 0,
                expected: 0,
            });
        };
        let word = |i: usize| u32::from_le_bytes([head[i], head[i + 1], head[i + 2], head[i + 3]]);
        let dword = |i: usize| u64::from(word(i)) | u64::from(word(i + 4)) << 32;
        let (version, reserved, expected, checksum) = (word(8), word(12), dword(16), dword(24));
        if version != self.version {
            return Err(FrameError::Version {
                name: self.name,
                found: version,
                supported: self.version,
            });
        }
        let found = (bytes.len() - HEADER) as u64;
        if found != expected {
            return Err(FrameError::Length {
                name: self.name,
                found,
                expected,
            });
        }
        let mut h = Xxh64::default();
        h.update(&head[..16]);
        h.update(&bytes[HEADER..]);
        h.update(&expected.to_le_bytes());
        if h.finish() != checksum || reserved != 0 {
            return Err(FrameError::Checksum(self.name));
        }
        Ok(Payload(bytes))
    }

    /// Magic, version and the reserved word.
    fn head(&self) -> [u8; 16] {
        let mut h = [0; 16];
        h[..8].copy_from_slice(self.magic);
        h[8..12].copy_from_slice(&self.version.to_le_bytes());
        h
    }
}

/// A checked file's payload, read in place: moving it out from behind its
/// header was a copy of the whole file (55 MB for a table of 100,000 pages).
#[derive(Debug)]
pub struct Payload(Vec<u8>);

impl std::ops::Deref for Payload {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0[HEADER..]
    }
}

impl std::ops::DerefMut for Payload {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.0[HEADER..]
    }
}

/// A writer that hashes and counts what passes through it.
struct Hashing<W> {
    inner: W,
    hash: Xxh64,
    len: u64,
}

impl<W: Write> Write for Hashing<W> {
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

    const TEST: Format = Format {
        magic: b"LINTESTF",
        version: 3,
        name: "test file",
        largest: 1 << 20,
    };

    fn dir() -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!(
            "lineage-framed-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_payload_comes_back_as_written() {
        let d = dir();
        let p = d.join("f");
        let size = TEST.write(&p, |w| w.write_all(b"hello frame")).unwrap();
        assert_eq!(size, (HEADER + 11) as u64);
        assert_eq!(std::fs::read(&p).unwrap(), TEST.frame(b"hello frame"));
        assert_eq!(&*TEST.read(&p).unwrap(), b"hello frame");
        // An empty payload is a payload.
        TEST.write(&p, |_| Ok(())).unwrap();
        assert_eq!(&*TEST.read(&p).unwrap(), b"");
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn every_damage_is_named() {
        let d = dir();
        let p = d.join("f");
        TEST.write(&p, |w| w.write_all(&[7; 100])).unwrap();
        let good = std::fs::read(&p).unwrap();
        let open = |b: Vec<u8>| TEST.open(b).unwrap_err().to_string();
        assert_eq!(open(b"LINOTHER".repeat(5)), "not a lineage test file");
        let mut v = good.clone();
        v[8] = 4;
        assert_eq!(open(v), "test file format 4 (this lineage reads 3)");
        assert!(open(good[..good.len() - 1].to_vec()).contains("truncated"));
        assert!(open(good[..20].to_vec()).contains("truncated"));
        let mut padded = good.clone();
        padded.push(0);
        assert!(open(padded).contains("truncated or padded"));
        // Any one changed byte after the magic is caught.
        for at in 8..good.len() {
            let mut v = good.clone();
            v[at] ^= 0x10;
            assert!(TEST.open(v).is_err(), "byte {at}");
        }
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn a_failed_payload_leaves_the_old_file() {
        let d = dir();
        let p = d.join("f");
        TEST.write(&p, |w| w.write_all(b"old")).unwrap();
        let e = TEST.write(&p, |w| {
            w.write_all(b"half")?;
            Err(io::Error::other("disk full"))
        });
        assert!(e.is_err());
        assert_eq!(&*TEST.read(&p).unwrap(), b"old");
        assert_eq!(
            std::fs::read_dir(&d).unwrap().count(),
            1,
            "no temp file left"
        );
        std::fs::remove_dir_all(d).unwrap();
    }
}
