//! Potthast's "Wikipedia in the Pocket" index (Potthast, docs/algorithms.md §7–8): a
//! minimal perfect hash function (MPHF) maps every fuzzy-fingerprint code of the
//! collection to a slot; a slot holds the code's postings (document ids) and a
//! 16-bit checksum of the code. An MPHF sends unknown codes to arbitrary slots,
//! and the checksum turns almost all of those away: a false match has
//! probability 2^-16, without storing the codes themselves.
//!
//! The MPHF is `ph`'s FMPHGO (`fmph::GOFunction`, about 2.1 bits per key) with
//! our own seeded hash of the codes, so a file stays readable whatever hash `ph`
//! defaults to in another build.
//!
//! The file is framed ([`lineage_core::fsio::framed`], magic `LINPOCKT`, version 2);
//! its payload, little-endian: `k` (u32), language choice (u8: 0 auto, 1 en, 2 de), number of
//! schemes (u8) and each ε (f64), the id of the reference tables (u64), the
//! root (string), the documents (u32 count; per document its language u8 and
//! path), the slots (u32 count n; n checksums u16; n+1 posting offsets u32; the
//! postings u32), and the MPHF (u32 length, then `GOFunction::write`). Strings
//! are a u32 length and UTF-8 bytes.

use std::fmt;
use std::hash::Hasher;
use std::io;
use std::path::Path;

use ph::BuildSeededHasher;
use ph::fmph::{GOBuildConf, GOConf, GOFunction, TwoToPowerBitsStatic};

use super::{FuzzyParams, Lang, LangChoice, Scheme};
use lineage_core::fingerprint::fmix64;
use lineage_core::fsio::framed::{Format, FrameError};

/// `ph`'s default FMPHGO configuration (16-bit groups, 4-bit seeds) over our hash.
type Mphf = GOFunction<TwoToPowerBitsStatic<4>, TwoToPowerBitsStatic<2>, CodeHash>;

/// A seeded hash family for the codes, fixed by this crate: `ph`'s default
/// follows its cargo features and `std`'s `DefaultHasher`, neither of which is
/// promised to stay the same between builds.
#[derive(Clone, Copy, Default)]
pub(crate) struct CodeHash;

pub(crate) struct CodeHasher(u64);

impl Hasher for CodeHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = fmix64(self.0 ^ x);
    }
    fn finish(&self) -> u64 {
        fmix64(self.0)
    }
}

impl BuildSeededHasher for CodeHash {
    type Hasher = CodeHasher;
    fn build_hasher(&self, seed: u64) -> CodeHasher {
        CodeHasher(fmix64(seed ^ 0x243f_6a88_85a3_08d3))
    }
}

/// The 16-bit checksum stored per slot: bits of a hash independent of the
/// MPHF's (another constant before the same bijective mixer).
#[inline]
pub fn checksum(code: u64) -> u16 {
    (fmix64(code ^ 0xb7e1_5162_8aed_2a6a) >> 48) as u16
}

/// The in-memory index: MPHF, checksums and postings.
pub struct Pocket {
    mphf: Option<Mphf>,
    checksums: Vec<u16>,
    /// Postings of slot s: `postings[offsets[s]..offsets[s + 1]]`.
    offsets: Vec<u32>,
    postings: Vec<u32>,
}

impl fmt::Debug for Pocket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pocket")
            .field("slots", &self.slots())
            .field("postings", &self.postings.len())
            .finish()
    }
}

impl Pocket {
    /// Index the codes of each document (document id = position).
    pub fn build(codes: &[Vec<u64>]) -> Pocket {
        let mut entries: Vec<(u64, u32)> = codes
            .iter()
            .enumerate()
            .flat_map(|(d, cs)| cs.iter().map(move |&c| (c, d as u32)))
            .collect();
        entries.sort_unstable();
        entries.dedup();
        let mut keys: Vec<u64> = entries.iter().map(|e| e.0).collect();
        keys.dedup();
        if keys.is_empty() {
            return Pocket {
                mphf: None,
                checksums: Vec::new(),
                offsets: vec![0],
                postings: Vec::new(),
            };
        }
        let conf = GOConf::hash_bps_bpg(
            CodeHash,
            TwoToPowerBitsStatic::<2>,
            TwoToPowerBitsStatic::<4>,
        );
        let mphf = Mphf::from_slice_with_conf(&keys, GOBuildConf::new(conf));
        // Slot sizes, then offsets, then fill: a counting sort by slot.
        let n = keys.len();
        let slot_of = |c: &u64| mphf.get(c).expect("a built key has a slot") as usize;
        let mut checksums = vec![0u16; n];
        let mut sizes = vec![0u32; n + 1];
        for (c, _) in &entries {
            let s = slot_of(c);
            checksums[s] = checksum(*c);
            sizes[s + 1] += 1;
        }
        let mut offsets = sizes;
        for s in 0..n {
            offsets[s + 1] += offsets[s];
        }
        let mut fill = offsets.clone();
        let mut postings = vec![0u32; entries.len()];
        // Entries are sorted by (code, doc), so each posting list is ascending.
        for (c, d) in &entries {
            let s = slot_of(c);
            postings[fill[s] as usize] = *d;
            fill[s] += 1;
        }
        Pocket {
            mphf: Some(mphf),
            checksums,
            offsets,
            postings,
        }
    }

    /// The documents (ascending) with `code`; empty if the code is unknown, up
    /// to a false match with probability 2^-16 per unknown code.
    pub fn lookup(&self, code: u64) -> &[u32] {
        let Some(mphf) = &self.mphf else { return &[] };
        match mphf.get(&code) {
            Some(s) if self.checksums[s as usize] == checksum(code) => {
                let s = s as usize;
                &self.postings[self.offsets[s] as usize..self.offsets[s + 1] as usize]
            }
            _ => &[],
        }
    }

    /// Whether the MPHF gives `code` a slot at all (before the checksum test),
    /// for measuring the checksum's rejection rate.
    pub fn has_slot(&self, code: u64) -> bool {
        self.mphf.as_ref().is_some_and(|m| m.get(&code).is_some())
    }

    /// Number of distinct codes (= slots).
    pub fn slots(&self) -> usize {
        self.checksums.len()
    }

    /// Number of (code, document) postings.
    pub fn postings(&self) -> usize {
        self.postings.len()
    }

    /// Serialized size of the index proper (slots, postings, MPHF), without the
    /// document log.
    pub fn bytes(&self) -> usize {
        4 + 2 * self.slots() + 4 * (self.slots() + 1) + 4 * self.postings() + 4 + self.mphf_bytes()
    }

    /// Serialized size of the MPHF in bytes.
    pub fn mphf_bytes(&self) -> usize {
        self.mphf.as_ref().map_or(0, Mphf::write_bytes)
    }

    /// Bits per key of the serialized MPHF.
    pub fn mphf_bits_per_key(&self) -> f64 {
        if self.slots() == 0 {
            0.0
        } else {
            self.mphf_bytes() as f64 * 8.0 / self.slots() as f64
        }
    }

    fn write(&self, out: &mut Vec<u8>) -> io::Result<()> {
        put_u32(out, len_u32(self.slots())?);
        for &c in &self.checksums {
            out.extend_from_slice(&c.to_le_bytes());
        }
        for &o in &self.offsets {
            put_u32(out, o);
        }
        for &p in &self.postings {
            put_u32(out, p);
        }
        let mut mphf = Vec::with_capacity(self.mphf_bytes());
        if let Some(m) = &self.mphf {
            m.write(&mut mphf)?;
        }
        put_u32(out, len_u32(mphf.len())?);
        out.extend_from_slice(&mphf);
        Ok(())
    }

    fn read(r: &mut Reader<'_>, docs: u32) -> Result<Pocket, String> {
        let n = r.u32()? as usize;
        let checksums = (0..n).map(|_| r.u16()).collect::<Result<Vec<_>, _>>()?;
        let offsets = (0..=n).map(|_| r.u32()).collect::<Result<Vec<_>, _>>()?;
        if offsets[0] != 0 || offsets.windows(2).any(|w| w[0] > w[1]) {
            return Err("posting offsets out of order".into());
        }
        let total = offsets[n] as usize;
        let postings = (0..total).map(|_| r.u32()).collect::<Result<Vec<_>, _>>()?;
        if postings.iter().any(|&d| d >= docs) {
            return Err("posting names an unknown document".into());
        }
        let len = r.u32()? as usize;
        let mut bytes = r.take(len)?;
        let mphf = if n == 0 {
            None
        } else {
            let m = Mphf::read_with_hasher(&mut bytes, CodeHash)
                .map_err(|e| format!("bad minimal perfect hash: {e}"))?;
            if m.len() != n {
                return Err("minimal perfect hash and slots disagree".into());
            }
            Some(m)
        };
        Ok(Pocket {
            mphf,
            checksums,
            offsets,
            postings,
        })
    }
}

/// One indexed document in the file's document log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexedDoc {
    /// Its path as the corpus loader gave it.
    pub path: String,
    /// The language of its fingerprint.
    pub lang: Lang,
    /// How many codes it has: one per scheme, none for a document without
    /// index terms.
    pub codes: u8,
}

/// A pocket index file: the settings it was built with, its documents and the
/// index.
#[derive(Debug)]
pub struct PocketFile {
    /// Shingle length, for the Jaccard of a query with an indexed file.
    pub k: u32,
    /// The fingerprint settings, which a query must use too.
    pub params: FuzzyParams,
    /// The root the documents were read from, as given to `build`.
    pub root: String,
    /// The document log: entry i is document id i of the postings.
    pub docs: Vec<IndexedDoc>,
    /// The codes' index.
    pub pocket: Pocket,
}

/// The pocket file's frame; version 2 moved to the common frame (XXH64).
pub(crate) const FORMAT: Format = Format {
    magic: b"LINPOCKT",
    version: 2,
    name: "pocket index",
    largest: 4 << 30,
};

/// Why a pocket file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PocketError {
    /// Reading the file failed, or its frame did (magic, version, length,
    /// checksum).
    #[error(transparent)]
    Frame(#[from] FrameError),
    /// It was built with reference tables other than these (the id differs),
    /// so its codes mean something else.
    #[error("pocket index was built with other prefix-class tables; rebuild it")]
    Tables,
    /// The payload does not parse: what is wrong with it.
    #[error("pocket index is corrupt: {0}")]
    Corrupt(String),
}

impl From<io::Error> for PocketError {
    fn from(e: io::Error) -> PocketError {
        PocketError::Frame(FrameError::Io(e))
    }
}

/// The content of a version 1 file (the same 32-byte header, FNV-1a 64 of
/// the content as its checksum), checked; `None` if `bytes` is not one.
fn version_1(bytes: &[u8]) -> Option<Result<&[u8], PocketError>> {
    let head = bytes.get(..32)?;
    if &head[..8] != FORMAT.magic || head[8..16] != [1, 0, 0, 0, 0, 0, 0, 0] {
        return None;
    }
    let dword = |i: usize| u64::from_le_bytes(head[i..i + 8].try_into().unwrap_or_default());
    let content = &bytes[32..];
    let intact = dword(16) == content.len() as u64 && dword(24) == fnv1a64(content);
    Some(if intact {
        Ok(content)
    } else {
        Err(PocketError::Frame(FrameError::Checksum(FORMAT.name)))
    })
}

/// FNV-1a 64: any single changed byte changes it (each step is a bijection
/// of the state for a fixed byte).
pub(crate) fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The id of the shipped reference tables: a query must use the tables the
/// index was built with, or its codes mean nothing.
pub(crate) fn tables_id() -> u64 {
    fnv1a64(
        [
            include_str!("../../../../assets/stopwords-en.txt"),
            include_str!("../../../../assets/prefix-classes-en.tsv"),
            include_str!("../../../../assets/stopwords-de.txt"),
            include_str!("../../../../assets/prefix-classes-de.tsv"),
        ]
        .concat()
        .as_bytes(),
    )
}

impl PocketFile {
    /// The frame's payload.
    fn content(&self) -> io::Result<Vec<u8>> {
        let mut c = Vec::new();
        put_u32(&mut c, self.k);
        c.push(match self.params.lang {
            LangChoice::Auto => 0,
            LangChoice::Fixed(Lang::En) => 1,
            LangChoice::Fixed(Lang::De) => 2,
        });
        c.push(u8::try_from(self.params.schemes.len()).map_err(io::Error::other)?);
        for s in &self.params.schemes {
            c.extend_from_slice(&s.epsilon.to_le_bytes());
        }
        c.extend_from_slice(&tables_id().to_le_bytes());
        put_str(&mut c, &self.root)?;
        put_u32(&mut c, len_u32(self.docs.len())?);
        for d in &self.docs {
            c.push(lang_byte(d.lang));
            c.push(d.codes);
            put_str(&mut c, &d.path)?;
        }
        self.pocket.write(&mut c)?;
        Ok(c)
    }

    /// The file's bytes: frame and content.
    #[cfg(test)]
    pub(crate) fn to_bytes(&self) -> io::Result<Vec<u8>> {
        Ok(FORMAT.frame(&self.content()?))
    }

    /// Write atomically (temp file, synced, renamed). Returns the number of
    /// bytes written.
    pub fn write(&self, path: &Path) -> io::Result<u64> {
        let content = self.content()?;
        FORMAT.write(path, |w| w.write_all(&content))
    }

    /// Read a pocket file: a regular file of at most 4 GiB.
    pub fn read(path: &Path) -> Result<PocketFile, PocketError> {
        PocketFile::from_bytes(&lineage_core::fsio::read_bounded(path, FORMAT.largest)?)
    }

    /// Parse and check a file's bytes: the frame before anything else is
    /// trusted.
    pub(crate) fn from_bytes(bytes: &[u8]) -> Result<PocketFile, PocketError> {
        if let Some(content) = version_1(bytes) {
            return PocketFile::parse(content?);
        }
        PocketFile::parse(&FORMAT.open(bytes.to_vec())?)
    }

    fn parse(content: &[u8]) -> Result<PocketFile, PocketError> {
        let mut r = Reader(content);
        let corrupt = PocketError::Corrupt;
        let k = r.u32().map_err(corrupt)?;
        let lang = match r.u8().map_err(corrupt)? {
            0 => LangChoice::Auto,
            b => LangChoice::Fixed(lang_of(b).map_err(corrupt)?),
        };
        let n = r.u8().map_err(corrupt)?;
        let mut schemes = Vec::new();
        for _ in 0..n {
            schemes.push(Scheme {
                epsilon: f64::from_le_bytes(r.array().map_err(corrupt)?),
            });
        }
        if u64::from_le_bytes(r.array().map_err(corrupt)?) != tables_id() {
            return Err(PocketError::Tables);
        }
        let root = r.string().map_err(corrupt)?;
        let n_docs = r.u32().map_err(corrupt)?;
        let mut docs = Vec::new();
        for _ in 0..n_docs {
            let lang = lang_of(r.u8().map_err(corrupt)?).map_err(corrupt)?;
            let codes = r.u8().map_err(corrupt)?;
            let path = r.string().map_err(corrupt)?;
            docs.push(IndexedDoc { path, lang, codes });
        }
        let pocket = Pocket::read(&mut r, n_docs).map_err(corrupt)?;
        if !r.0.is_empty() {
            return Err(PocketError::Corrupt("trailing bytes".into()));
        }
        Ok(PocketFile {
            k,
            params: FuzzyParams { lang, schemes },
            root,
            docs,
            pocket,
        })
    }
}

fn lang_byte(l: Lang) -> u8 {
    match l {
        Lang::En => 1,
        Lang::De => 2,
    }
}

fn lang_of(b: u8) -> Result<Lang, String> {
    match b {
        1 => Ok(Lang::En),
        2 => Ok(Lang::De),
        _ => Err(format!("unknown language byte {b}")),
    }
}

fn len_u32(n: usize) -> io::Result<u32> {
    u32::try_from(n).map_err(|_| io::Error::other("pocket index too large (over 2^32 items)"))
}

fn put_u32(out: &mut Vec<u8>, x: u32) {
    out.extend_from_slice(&x.to_le_bytes());
}

fn put_str(out: &mut Vec<u8>, s: &str) -> io::Result<()> {
    put_u32(out, len_u32(s.len())?);
    out.extend_from_slice(s.as_bytes());
    Ok(())
}

/// A cursor over content bytes whose every read is bounds-checked.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if n > self.0.len() {
            return Err("content ends early".into());
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N], String> {
        Ok(self.take(N)?.try_into().expect("N bytes"))
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.array::<1>()?[0])
    }
    fn u16(&mut self) -> Result<u16, String> {
        Ok(u16::from_le_bytes(self.array()?))
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    fn string(&mut self) -> Result<String, String> {
        let n = self.u32()? as usize;
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| "a string is not UTF-8".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_file() -> PocketFile {
        let codes = vec![vec![1, 2], vec![2, 3], vec![], vec![3, 1]];
        PocketFile {
            k: 8,
            params: FuzzyParams::default(),
            root: "/tmp/root".into(),
            docs: (0..4)
                .map(|i| IndexedDoc {
                    path: format!("d{i}.md"),
                    lang: if i == 1 { Lang::De } else { Lang::En },
                    codes: codes[i].len() as u8,
                })
                .collect(),
            pocket: Pocket::build(&codes),
        }
    }

    #[test]
    fn lookup_returns_postings() {
        let f = sample_file();
        assert_eq!(f.pocket.lookup(1), &[0, 3]);
        assert_eq!(f.pocket.lookup(2), &[0, 1]);
        assert_eq!(f.pocket.lookup(3), &[1, 3]);
        assert_eq!(f.pocket.slots(), 3);
        assert_eq!(f.pocket.postings(), 6);
    }

    #[test]
    fn empty_index_works() {
        let p = Pocket::build(&[vec![], vec![]]);
        assert_eq!(p.slots(), 0);
        assert!(p.lookup(7).is_empty());
        let f = PocketFile {
            k: 8,
            params: FuzzyParams::default(),
            root: String::new(),
            docs: vec![],
            pocket: p,
        };
        let back = PocketFile::from_bytes(&f.to_bytes().unwrap()).unwrap();
        assert_eq!(back.pocket.slots(), 0);
    }

    #[test]
    fn file_round_trips() {
        let f = sample_file();
        let bytes = f.to_bytes().unwrap();
        let g = PocketFile::from_bytes(&bytes).unwrap();
        assert_eq!(g.k, 8);
        assert_eq!(g.params, f.params);
        assert_eq!(g.root, f.root);
        assert_eq!(g.docs, f.docs);
        for c in 0..10 {
            assert_eq!(g.pocket.lookup(c), f.pocket.lookup(c), "code {c}");
        }
        assert_eq!(g.to_bytes().unwrap(), bytes, "stable encoding");
        let mut slots = Vec::new();
        f.pocket.write(&mut slots).unwrap();
        assert_eq!(f.pocket.bytes(), slots.len());
    }

    #[test]
    fn every_corrupted_byte_is_detected() {
        let bytes = sample_file().to_bytes().unwrap();
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x20;
            assert!(
                PocketFile::from_bytes(&b).is_err(),
                "flipped byte {i} went unnoticed"
            );
        }
        for n in [0, 7, 8, 31, 32, bytes.len() - 1] {
            assert!(
                PocketFile::from_bytes(&bytes[..n]).is_err(),
                "truncated to {n}"
            );
        }
        let mut v = bytes.clone();
        v[8] = 9;
        assert!(matches!(
            PocketFile::from_bytes(&v),
            Err(PocketError::Frame(FrameError::Version { found: 9, .. }))
        ));
        assert!(matches!(
            PocketFile::from_bytes(b"PK\x03\x04 a zip file, not ours......"),
            Err(PocketError::Frame(FrameError::Foreign(_)))
        ));
    }

    #[test]
    fn checksum_and_mphf_hash_are_stable() {
        // Pinned: a change here makes every existing file unreadable.
        assert_eq!(checksum(0), (fmix64(0xb7e1_5162_8aed_2a6a) >> 48) as u16);
        let mut h = CodeHash.build_hasher(1);
        h.write_u64(42);
        assert_eq!(
            h.finish(),
            fmix64(fmix64(fmix64(1 ^ 0x243f_6a88_85a3_08d3) ^ 42))
        );
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
#[cfg(test)]
mod golden {
    use super::*;

    /// A file written by format version 1 (codes {1,2}, {2,3}, {}, {3,1}).
    /// If this stops reading, files on users' disks stop reading too: a new
    /// `ph` serialization or new reference tables need a new VERSION (or a
    /// rebuild message), not just new bytes here.
    const V1: &str = "4c494e504f434b5401000000000000009200000000000000ddffedbd1de78a62080000000002666666666666d63f666666666666e63facb76fd3b53128c5020000002f7204000000010202000000643001020200000064310100020000006432010202000000643303000000ab6e295005c700000000020000000400000006000000000000000100000000000000030000000100000003000000140000001001040008010000000002040000000000000000";

    #[test]
    fn version_1_files_stay_readable() {
        let bytes: Vec<u8> = (0..V1.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&V1[i..i + 2], 16).unwrap())
            .collect();
        let f = PocketFile::from_bytes(&bytes).unwrap();
        assert_eq!(f.root, "/r");
        assert_eq!(f.docs.len(), 4);
        assert_eq!(f.pocket.lookup(1), &[0, 3]);
        assert_eq!(f.pocket.lookup(2), &[0, 1]);
        assert_eq!(f.pocket.lookup(3), &[1, 3]);
        assert!(f.pocket.lookup(4).is_empty());
    }
}
