//! Heintze's fixed-size sample store (Koala; seed 000, ALGORITHMS §6): every
//! document keeps its 100 lowest-hash substrings, a search looks up 1000, and
//! the match ratio says how much of a stored document the query contains.
//!
//! Substrings are the document's k-shingles and their "hash" for selection is
//! the shingle key. Koala's refinement avoids substrings with common starts:
//! [OURS, ALGORITHMS §6] a shingle whose first five letters (of its tokens'
//! key texts, concatenated) make up more than `common_prefix_share` of all
//! shingles of the collection ranks after every other shingle; among equals the
//! lowest key wins. The rule needs the shingles' text, so it applies to a
//! document only when its `terms` give back exactly its `shingles` under the
//! configured k; otherwise that document falls back to plain lowest-hash
//! selection.
//!
//! The block file is the seed's: a 28-bit hash per substring; its top 16 bits
//! index a directory of 65536 pointers to 256-word blocks; a block's word 0 is
//! the overflow pointer, word 1 the count, words 2..256 hold 254 entries; an
//! entry is one word, the low 12 hash bits (in bits 20..32) and a 20-bit
//! document id (bits 0..20), so at most 2^20 documents. Pointers are block
//! numbers counted from the file's start; the directory fills blocks 0..256, so
//! pointer 0 means "none". [OURS] A full block is not appended to: a new block
//! becomes the head of the chain and points to the full one, so an insert never
//! walks the chain. A chain of m entries has ⌈m/254⌉ blocks either way.
//!
//! [OURS] The 28-bit hash is `fmix64(key ^ salt) >> 36`, not the key's top
//! bits: the selected keys are the lowest of their documents, so their top
//! bits would crowd the first directory slots.

use std::collections::HashMap;
use std::fmt;
use std::io::{self, Read, Write};
use std::path::Path;

use rayon::prelude::*;

use super::fuzzy::pocket::fnv1a64;
use super::{Pair, SimDoc};
use crate::fingerprint::{fmix64, shingle_keys, token_fp};

/// Substrings stored per document.
pub const STORED: usize = 100;
/// Substrings looked up per search.
pub const SEARCHED: usize = 1000;
/// Width of the substring hash.
pub const HASH_BITS: u32 = 28;
/// Directory slots: the top 16 of the 28 hash bits.
pub const DIRECTORY_SLOTS: usize = 1 << 16;
pub const BLOCK_WORDS: usize = 256;
/// Entries per block: all words but the overflow pointer and the count.
pub const BLOCK_ENTRIES: usize = BLOCK_WORDS - 2;
/// Document ids have 20 bits.
pub const MAX_DOCS: u32 = 1 << 20;
/// Blocks the directory occupies at the start of the file.
const DIRECTORY_BLOCKS: usize = DIRECTORY_SLOTS / BLOCK_WORDS;

/// The 28-bit substring hash of a shingle key.
#[inline]
pub fn substring_hash(key: u64) -> u32 {
    (fmix64(key ^ 0x1319_8a2e_0370_7344) >> (64 - HASH_BITS)) as u32
}

/// What can go wrong with the store.
#[derive(Debug)]
pub enum SampleError {
    /// A document id that does not fit the entry's 20 bits.
    TooManyDocuments {
        id: u32,
    },
    HashTooWide(u32),
    Io(io::Error),
    Corrupt(String),
}

impl fmt::Display for SampleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SampleError::TooManyDocuments { id } => write!(
                f,
                "document id {id} does not fit the sample store's 20-bit ids \
                 (at most {MAX_DOCS} documents)"
            ),
            SampleError::HashTooWide(h) => write!(f, "substring hash {h:#x} is wider than 28 bits"),
            SampleError::Io(e) => write!(f, "{e}"),
            SampleError::Corrupt(m) => write!(f, "sample store is corrupt: {m}"),
        }
    }
}

impl From<io::Error> for SampleError {
    fn from(e: io::Error) -> SampleError {
        SampleError::Io(e)
    }
}

/// Heintze's block file as a vector of 32-bit words, laid out exactly as on disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockFile {
    words: Vec<u32>,
}

impl Default for BlockFile {
    fn default() -> BlockFile {
        BlockFile::new()
    }
}

impl BlockFile {
    /// An empty file: the directory only.
    pub fn new() -> BlockFile {
        BlockFile {
            words: vec![0; DIRECTORY_SLOTS],
        }
    }

    /// Store one substring of document `doc`.
    pub fn insert(&mut self, hash: u32, doc: u32) -> Result<(), SampleError> {
        if doc >= MAX_DOCS {
            return Err(SampleError::TooManyDocuments { id: doc });
        }
        if hash >> HASH_BITS != 0 {
            return Err(SampleError::HashTooWide(hash));
        }
        let slot = (hash >> 12) as usize;
        let mut head = self.words[slot] as usize;
        if head == 0 || self.words[head * BLOCK_WORDS + 1] as usize == BLOCK_ENTRIES {
            let new = self.words.len() / BLOCK_WORDS;
            let new_u32 = u32::try_from(new)
                .map_err(|_| SampleError::Corrupt("more than 2^32 blocks".into()))?;
            self.words.resize(self.words.len() + BLOCK_WORDS, 0);
            self.words[new * BLOCK_WORDS] = head as u32;
            self.words[slot] = new_u32;
            head = new;
        }
        let base = head * BLOCK_WORDS;
        let n = self.words[base + 1] as usize;
        self.words[base + 2 + n] = (hash & 0xfff) << 20 | doc;
        self.words[base + 1] += 1;
        Ok(())
    }

    /// Calls `f(doc)` for every entry with this hash; returns the blocks read
    /// (Heintze's disk probes).
    pub fn lookup(&self, hash: u32, mut f: impl FnMut(u32)) -> u32 {
        let low = hash & 0xfff;
        let mut block = self.words[(hash >> 12) as usize & (DIRECTORY_SLOTS - 1)] as usize;
        let mut probes = 0;
        while block != 0 {
            probes += 1;
            let base = block * BLOCK_WORDS;
            let n = self.words[base + 1] as usize;
            for &e in &self.words[base + 2..base + 2 + n] {
                if e >> 20 == low {
                    f(e & (MAX_DOCS - 1));
                }
            }
            block = self.words[base] as usize;
        }
        probes
    }

    /// The words, directory first, as written to disk.
    pub fn words(&self) -> &[u32] {
        &self.words
    }

    /// Blocks after the directory.
    pub fn blocks(&self) -> usize {
        self.words.len() / BLOCK_WORDS - DIRECTORY_BLOCKS
    }

    /// Blocks in the chain of directory slot `slot`.
    pub fn chain_len(&self, slot: usize) -> u32 {
        let mut block = self.words[slot] as usize;
        let mut n = 0;
        while block != 0 {
            n += 1;
            block = self.words[block * BLOCK_WORDS] as usize;
        }
        n
    }

    /// Entries stored.
    pub fn entries(&self) -> u64 {
        (DIRECTORY_BLOCKS..self.words.len() / BLOCK_WORDS)
            .map(|b| u64::from(self.words[b * BLOCK_WORDS + 1]))
            .sum()
    }

    /// The document id of every entry.
    pub fn docs(&self) -> impl Iterator<Item = u32> + '_ {
        (DIRECTORY_BLOCKS..self.words.len() / BLOCK_WORDS).flat_map(move |b| {
            let base = b * BLOCK_WORDS;
            let n = self.words[base + 1] as usize;
            self.words[base + 2..base + 2 + n]
                .iter()
                .map(|e| e & (MAX_DOCS - 1))
        })
    }

    /// Check a file's words: whole blocks, pointers to data blocks, counts of
    /// at most 254, chains that only point back (so they end).
    pub fn from_words(words: Vec<u32>) -> Result<BlockFile, SampleError> {
        let bad = |m: String| Err(SampleError::Corrupt(m));
        if words.len() < DIRECTORY_SLOTS || !words.len().is_multiple_of(BLOCK_WORDS) {
            return bad(format!(
                "{} words is not a directory plus whole blocks",
                words.len()
            ));
        }
        let blocks = words.len() / BLOCK_WORDS;
        let ok_ptr = |p: u32| p == 0 || (p as usize >= DIRECTORY_BLOCKS && (p as usize) < blocks);
        if let Some(s) = words[..DIRECTORY_SLOTS].iter().position(|&p| !ok_ptr(p)) {
            return bad(format!("directory slot {s} points outside the file"));
        }
        for b in DIRECTORY_BLOCKS..blocks {
            let (next, count) = (words[b * BLOCK_WORDS], words[b * BLOCK_WORDS + 1]);
            if !ok_ptr(next) || (next != 0 && next as usize >= b) {
                return bad(format!("block {b} has a bad overflow pointer {next}"));
            }
            if count as usize > BLOCK_ENTRIES {
                return bad(format!("block {b} claims {count} entries"));
            }
        }
        Ok(BlockFile { words })
    }

    /// Write the words little-endian.
    pub fn write(&self, w: &mut impl Write) -> io::Result<()> {
        let mut buf = Vec::with_capacity(self.words.len() * 4);
        for &x in &self.words {
            buf.extend_from_slice(&x.to_le_bytes());
        }
        w.write_all(&buf)
    }

    pub fn read(r: &mut impl Read) -> Result<BlockFile, SampleError> {
        let mut buf = Vec::new();
        r.read_to_end(&mut buf)?;
        if !buf.len().is_multiple_of(4) {
            return Err(SampleError::Corrupt("length is not whole words".into()));
        }
        let words = buf
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
            .collect();
        BlockFile::from_words(words)
    }
}

/// A document of the log: Heintze keeps id, date, URL and contact; we keep the
/// path and how many substrings were stored (the match ratio's denominator).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogEntry {
    pub path: String,
    pub stored: u16,
}

/// Settings of the store and its search.
#[derive(Clone, Debug, PartialEq)]
pub struct SampleParams {
    /// Shingle length, to recover shingle texts for the prefix refinement.
    pub k: usize,
    pub stored: usize,
    pub searched: usize,
    /// A query substring found in this many other documents is common...
    pub common_docs: usize,
    /// ...and ignored, for at most this many substrings per search.
    pub max_ignored: usize,
    /// Five-letter prefixes above this share of all shingles are common; 0 or
    /// less turns the refinement off, the default: on our corpora it changed
    /// nothing measurable and made runs slower (docs/fuzzy-and-sample.md).
    pub common_prefix_share: f64,
    /// A pair is a candidate iff its Jaccard estimate (`Matched`) is at least
    /// `min_similarity − slack`.
    pub slack: f64,
}

impl Default for SampleParams {
    fn default() -> SampleParams {
        SampleParams {
            k: 8,
            stored: STORED,
            searched: SEARCHED,
            common_docs: 4,
            max_ignored: 10,
            common_prefix_share: 0.0,
            slack: 0.1,
        }
    }
}

/// The store: block file and document log.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SampleStore {
    pub blocks: BlockFile,
    pub log: Vec<LogEntry>,
}

/// The outcome of one search.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Search {
    /// (document, matches), most matches first, then by id.
    pub matches: Vec<(u32, u32)>,
    /// Query substrings ignored as common.
    pub ignored: u32,
    /// Blocks read.
    pub probes: u64,
}

impl SampleStore {
    /// Log a document and store its selected substring hashes; returns its id.
    pub fn add(&mut self, path: &str, hashes: &[u32]) -> Result<u32, SampleError> {
        let id = u32::try_from(self.log.len()).unwrap_or(u32::MAX);
        if id >= MAX_DOCS {
            return Err(SampleError::TooManyDocuments { id });
        }
        // Check first, so a refused document leaves nothing behind.
        if let Some(&h) = hashes.iter().find(|&&h| h >> HASH_BITS != 0) {
            return Err(SampleError::HashTooWide(h));
        }
        for &h in hashes {
            self.blocks.insert(h, id)?;
        }
        self.log.push(LogEntry {
            path: path.to_owned(),
            stored: u16::try_from(hashes.len()).unwrap_or(u16::MAX),
        });
        Ok(id)
    }

    /// Look up the query's substring hashes in rank order. A substring found in
    /// at least `common_docs` documents (other than `exclude`, the query's own
    /// id when it is stored too) is ignored, up to `max_ignored` of them.
    pub fn search(&self, query: &[u32], exclude: Option<u32>, p: &SampleParams) -> Search {
        let mut counts: HashMap<u32, u32> = HashMap::new();
        let mut out = Search::default();
        let mut found = Vec::new();
        for &h in query {
            found.clear();
            out.probes += u64::from(self.blocks.lookup(h, |d| found.push(d)));
            found.retain(|&d| Some(d) != exclude);
            found.sort_unstable();
            found.dedup();
            if found.len() >= p.common_docs && (out.ignored as usize) < p.max_ignored {
                out.ignored += 1;
                continue;
            }
            for &d in &found {
                *counts.entry(d).or_default() += 1;
            }
        }
        out.matches = counts.into_iter().collect();
        out.matches
            .sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        out
    }

    /// The match ratio of `matches` against stored document `doc`: matches
    /// over its stored substrings (100, or fewer for a short document).
    pub fn ratio(&self, doc: u32, matches: u32) -> f64 {
        let stored = self.log[doc as usize].stored;
        if stored == 0 {
            0.0
        } else {
            f64::from(matches) / f64::from(stored)
        }
    }

    /// Write the block file to `blocks` and the document log to `log`. The log
    /// carries the magic, version, and checksums of both files.
    pub fn write(&self, blocks: &Path, log: &Path) -> io::Result<()> {
        let mut bf = Vec::new();
        self.blocks.write(&mut bf)?;
        crate::fsio::write_atomic(blocks, |w| w.write_all(&bf))?;
        let mut content = Vec::new();
        content.extend_from_slice(&(self.log.len() as u32).to_le_bytes());
        for e in &self.log {
            content.extend_from_slice(&e.stored.to_le_bytes());
            content.extend_from_slice(&(e.path.len() as u32).to_le_bytes());
            content.extend_from_slice(e.path.as_bytes());
        }
        let mut out = Vec::new();
        out.extend_from_slice(LOG_MAGIC);
        out.extend_from_slice(&LOG_VERSION.to_le_bytes());
        out.extend_from_slice(&fnv1a64(&bf).to_le_bytes());
        out.extend_from_slice(&fnv1a64(&content).to_le_bytes());
        out.extend_from_slice(&content);
        crate::fsio::write_atomic(log, |w| w.write_all(&out)).map(|_| ())
    }

    pub fn read(blocks: &Path, log: &Path) -> Result<SampleStore, SampleError> {
        let bf = crate::fsio::read_bounded(blocks, 4 << 30)?;
        let lf = crate::fsio::read_bounded(log, 4 << 30)?;
        let corrupt = |m: &str| SampleError::Corrupt(m.to_owned());
        if lf.len() < 28 || &lf[..8] != LOG_MAGIC {
            return Err(corrupt("the document log has no sample-store magic"));
        }
        let word = |b: &[u8], i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4"));
        let dword = |i: usize| u64::from_le_bytes(lf[i..i + 8].try_into().expect("8"));
        if word(&lf, 8) != LOG_VERSION {
            return Err(corrupt("unsupported document-log version"));
        }
        if dword(12) != fnv1a64(&bf) {
            return Err(corrupt("block file checksum mismatch"));
        }
        let content = &lf[28..];
        if dword(20) != fnv1a64(content) {
            return Err(corrupt("document log checksum mismatch"));
        }
        let blocks = BlockFile::read(&mut &bf[..])?;
        if content.len() < 4 {
            return Err(corrupt("log ends early"));
        }
        let n = word(content, 0) as usize;
        let mut at = 4;
        let mut log = Vec::with_capacity(n.min(MAX_DOCS as usize));
        for _ in 0..n {
            let head = content
                .get(at..at + 6)
                .ok_or_else(|| corrupt("log ends early"))?;
            let stored = u16::from_le_bytes([head[0], head[1]]);
            let len = word(head, 2) as usize;
            let path = content
                .get(at + 6..at + 6 + len)
                .ok_or_else(|| corrupt("log ends early"))?;
            let path = String::from_utf8(path.to_vec()).map_err(|_| corrupt("path not UTF-8"))?;
            log.push(LogEntry { path, stored });
            at += 6 + len;
        }
        if blocks.docs().any(|d| d as usize >= log.len()) {
            return Err(corrupt("an entry names a document the log lacks"));
        }
        Ok(SampleStore { blocks, log })
    }
}

const LOG_MAGIC: &[u8; 8] = b"LINKOALA";
const LOG_VERSION: u32 = 1;

/// The first `n` keys of `keys` (distinct) in rank order: not common before
/// common, then by key ascending. With nothing common this is the n lowest.
pub fn select(keys: &[u64], common: impl Fn(u64) -> bool, n: usize) -> Vec<u64> {
    let mut ranked: Vec<(bool, u64)> = keys.iter().map(|&k| (common(k), k)).collect();
    if ranked.len() > n {
        ranked.select_nth_unstable(n);
        ranked.truncate(n);
    }
    ranked.sort_unstable();
    ranked.into_iter().map(|(_, k)| k).collect()
}

/// The first five letters of the shingle starting at token `i` (of its tokens'
/// key texts, concatenated), zero-padded.
fn prefix5<S: AsRef<str>>(terms: &[S], i: usize) -> [char; 5] {
    let mut out = ['\0'; 5];
    let chars = terms[i..].iter().flat_map(|t| t.as_ref().chars());
    for (o, c) in out.iter_mut().zip(chars) {
        *o = c;
    }
    out
}

/// The collection's five-letter-prefix table, and which shingles of each
/// document start with a common prefix.
pub struct PrefixTable {
    counts: HashMap<[char; 5], u64>,
    total: u64,
}

impl PrefixTable {
    /// Count the prefixes of every shingle position of every document (the
    /// documents whose terms do not give back their shingles are left out).
    pub fn build(docs: &[SimDoc], k: usize) -> PrefixTable {
        let mut counts: HashMap<[char; 5], u64> = HashMap::new();
        let mut total = 0;
        for d in docs {
            if let Some(keys) = shingles_in_order(d, k) {
                for i in 0..keys.len() {
                    *counts.entry(prefix5(&d.terms, i)).or_default() += 1;
                    total += 1;
                }
            }
        }
        PrefixTable { counts, total }
    }

    /// The share of all shingles whose prefix is common at `cutoff`.
    pub fn common_fraction(&self, cutoff: f64) -> f64 {
        let limit = cutoff * self.total as f64;
        let common: u64 = self.counts.values().filter(|&&c| c as f64 > limit).sum();
        common as f64 / self.total.max(1) as f64
    }

    /// The share of all shingles that start with `prefix`.
    pub fn share(&self, prefix: &[char; 5]) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.counts.get(prefix).copied().unwrap_or(0) as f64 / self.total as f64
        }
    }
}

/// The keys of `d`'s shingles in token order if its terms give back exactly its
/// shingle set under `k`, else `None`.
fn shingles_in_order(d: &SimDoc, k: usize) -> Option<Vec<u64>> {
    let fps: Vec<u64> = d.terms.iter().map(|t| token_fp(t.as_bytes())).collect();
    let mut keys = Vec::new();
    shingle_keys(&fps, k, &mut keys);
    let mut set = keys.clone();
    set.sort_unstable();
    set.dedup();
    (set == d.shingles).then_some(keys)
}

/// A document's substrings in rank order, the first `n`.
pub fn ranked(d: &SimDoc, table: Option<&PrefixTable>, p: &SampleParams, n: usize) -> Vec<u64> {
    let refined = table
        .filter(|_| p.common_prefix_share > 0.0)
        .and_then(|t| Some((t, shingles_in_order(d, p.k)?)));
    let common: HashMap<u64, bool> = match refined {
        Some((t, keys)) => keys
            .iter()
            .enumerate()
            .map(|(i, &key)| (key, t.share(&prefix5(&d.terms, i)) > p.common_prefix_share))
            .collect(),
        None => HashMap::new(),
    };
    select(&d.shingles, |k| common.get(&k).copied().unwrap_or(false), n)
}

/// Statistics of a store and of the searches run against it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SampleStats {
    pub documents: usize,
    pub entries: u64,
    /// Data blocks (after the directory).
    pub blocks: usize,
    /// Bytes of the block file, directory included.
    pub block_file_bytes: u64,
    /// Directory slots with a chain.
    pub used_slots: usize,
    /// Blocks per used slot.
    pub avg_chain: f64,
    pub max_chain: u32,
    pub searches: usize,
    /// Blocks read per search (Heintze's disk probes).
    pub probes_per_search: f64,
    pub ignored_per_search: f64,
}

impl SampleStore {
    /// The store's shape (no searches).
    pub fn stats(&self) -> SampleStats {
        let chains: Vec<u32> = (0..DIRECTORY_SLOTS)
            .map(|s| self.blocks.chain_len(s))
            .collect();
        let used = chains.iter().filter(|&&c| c > 0).count();
        SampleStats {
            documents: self.log.len(),
            entries: self.blocks.entries(),
            blocks: self.blocks.blocks(),
            block_file_bytes: self.blocks.words().len() as u64 * 4,
            used_slots: used,
            avg_chain: if used == 0 {
                0.0
            } else {
                self.blocks.blocks() as f64 / used as f64
            },
            max_chain: chains.iter().copied().max().unwrap_or(0),
            ..SampleStats::default()
        }
    }
}

/// A pair of documents that matched at all: `a < b`, the match ratio of each
/// direction (`ratio_ab`: how much of b's sample a's search found, an estimate
/// of |A∩B|/|B|, and `ratio_ba` the other way round) and the Jaccard estimate
/// from the two.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Matched {
    pub a: u32,
    pub b: u32,
    pub ratio_ab: f64,
    pub ratio_ba: f64,
}

impl Matched {
    /// [OURS] With c₁ = |A∩B|/|B| and c₂ = |A∩B|/|A|, the Jaccard resemblance
    /// is 1/(1/c₁ + 1/c₂ − 1); 0 if either direction found nothing.
    pub fn jaccard_estimate(&self) -> f64 {
        if self.ratio_ab <= 0.0 || self.ratio_ba <= 0.0 {
            0.0
        } else {
            (1.0 / (1.0 / self.ratio_ab + 1.0 / self.ratio_ba - 1.0)).min(1.0)
        }
    }
}

/// Everything one run of the method produces.
#[derive(Clone, Debug, Default)]
pub struct SampleRun {
    /// Every pair with at least one match, sorted by (a, b).
    pub matched: Vec<Matched>,
    pub stats: SampleStats,
}

impl SampleRun {
    /// The unverified candidates: pairs whose Jaccard estimate is at least
    /// `min_estimate`.
    pub fn candidates(&self, min_estimate: f64) -> Vec<(u32, u32)> {
        self.matched
            .iter()
            .filter(|m| m.jaccard_estimate() >= min_estimate)
            .map(|m| (m.a, m.b))
            .collect()
    }
}

/// Store every document, search with every document, and collect the match
/// ratios of all pairs that matched at all.
pub fn run(docs: &[SimDoc], p: &SampleParams) -> Result<SampleRun, SampleError> {
    let table = (p.common_prefix_share > 0.0).then(|| PrefixTable::build(docs, p.k));
    let searched: Vec<Vec<u32>> = docs
        .par_iter()
        .map(|d| {
            ranked(d, table.as_ref(), p, p.searched)
                .into_iter()
                .map(substring_hash)
                .collect()
        })
        .collect();
    let mut store = SampleStore::default();
    for (i, s) in searched.iter().enumerate() {
        // The stored substrings are the first of the same ranking.
        store.add(&i.to_string(), &s[..s.len().min(p.stored)])?;
    }
    let searches: Vec<Search> = searched
        .par_iter()
        .enumerate()
        .map(|(a, q)| store.search(q, Some(a as u32), p))
        .collect();
    let mut pairs: HashMap<(u32, u32), Matched> = HashMap::new();
    for (q, s) in searches.iter().enumerate() {
        let q = q as u32;
        for &(d, m) in &s.matches {
            let r = store.ratio(d, m);
            let (a, b) = (q.min(d), q.max(d));
            let e = pairs.entry((a, b)).or_insert(Matched {
                a,
                b,
                ratio_ab: 0.0,
                ratio_ba: 0.0,
            });
            // The search by q found part of d's sample.
            if q == a {
                e.ratio_ab = r;
            } else {
                e.ratio_ba = r;
            }
        }
    }
    let mut matched: Vec<Matched> = pairs.into_values().collect();
    matched.sort_unstable_by_key(|m| (m.a, m.b));
    let mut stats = store.stats();
    stats.searches = searches.len();
    if !searches.is_empty() {
        let n = searches.len() as f64;
        stats.probes_per_search = searches.iter().map(|s| s.probes).sum::<u64>() as f64 / n;
        stats.ignored_per_search =
            searches.iter().map(|s| u64::from(s.ignored)).sum::<u64>() as f64 / n;
    }
    Ok(SampleRun { matched, stats })
}

/// Near-duplicate pairs by Heintze's sample store with the default settings:
/// candidates whose Jaccard estimate from the two match ratios is at least
/// `min_similarity − slack`, kept iff the exact Jaccard resemblance is at least
/// `min_similarity`.
///
/// Panics with more than 2^20 documents (the block file's id width); use
/// [`run`] to get the error instead.
pub fn pairs(docs: &[SimDoc], min_similarity: f64) -> Vec<Pair> {
    pairs_with(docs, min_similarity, &SampleParams::default()).expect("at most 2^20 documents")
}

/// [`pairs`] with explicit settings.
pub fn pairs_with(
    docs: &[SimDoc],
    min_similarity: f64,
    p: &SampleParams,
) -> Result<Vec<Pair>, SampleError> {
    let run = run(docs, p)?;
    let cand = run.candidates(min_similarity - p.slack);
    Ok(super::fuzzy::verify(docs, &cand, min_similarity))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_holds_254_entries_and_chains_grow_by_blocks() {
        let mut f = BlockFile::new();
        let slot = 0xabcd;
        let hash = |i: u32| slot << 12 | (i & 0xfff);
        for i in 0..254 {
            f.insert(hash(i), i).unwrap();
        }
        assert_eq!(f.blocks(), 1);
        assert_eq!(f.chain_len(slot as usize), 1);
        let head = f.words()[slot as usize] as usize;
        assert_eq!(
            head, 256,
            "the first data block follows the 256-block directory"
        );
        assert_eq!(f.words()[head * 256], 0, "no overflow yet");
        assert_eq!(f.words()[head * 256 + 1], 254);
        // Entry layout: low 12 hash bits over a 20-bit document id.
        assert_eq!(f.words()[head * 256 + 2 + 7], 7 << 20 | 7);
        f.insert(hash(254), 254).unwrap();
        assert_eq!(f.blocks(), 2);
        assert_eq!(f.chain_len(slot as usize), 2);
        let new_head = f.words()[slot as usize] as usize;
        assert_eq!(
            f.words()[new_head * 256],
            head as u32,
            "new head overflows to the full block"
        );
        assert_eq!(f.words()[new_head * 256 + 1], 1);
        for i in 255..254 * 3 + 1 {
            f.insert(hash(i), i).unwrap();
        }
        assert_eq!(f.chain_len(slot as usize), 4, "⌈763/254⌉ blocks");
        assert_eq!(f.entries(), 254 * 3 + 1);
        // Other slots are untouched.
        assert_eq!(f.chain_len(slot as usize + 1), 0);
        // Lookup reads the whole chain and finds each entry by its low bits.
        let mut found = vec![];
        assert_eq!(f.lookup(hash(5), |d| found.push(d)), 4);
        found.sort();
        // hash(i) has low bits i, so only entry 5 has low bits 5.
        assert_eq!(found, vec![5]);
        assert_eq!(f.lookup(0x0000_0001, |_| panic!("empty slot")), 0);
    }

    #[test]
    fn document_ids_have_20_bits() {
        let mut f = BlockFile::new();
        assert!(f.insert(1, MAX_DOCS - 1).is_ok());
        let e = f.insert(1, MAX_DOCS).unwrap_err();
        assert!(matches!(e, SampleError::TooManyDocuments { id } if id == 1 << 20));
        assert!(e.to_string().contains("at most 1048576 documents"), "{e}");
        assert!(matches!(
            f.insert(1 << 28, 0),
            Err(SampleError::HashTooWide(_))
        ));
        let mut found = vec![];
        f.lookup(1, |d| found.push(d));
        assert_eq!(
            found,
            vec![MAX_DOCS - 1],
            "the rejected insert left nothing"
        );
    }

    #[test]
    fn the_store_refuses_the_document_past_2_pow_20() {
        let mut s = SampleStore {
            log: vec![
                LogEntry {
                    path: String::new(),
                    stored: 0
                };
                MAX_DOCS as usize
            ],
            ..SampleStore::default()
        };
        assert!(matches!(
            s.add("one too many", &[1]),
            Err(SampleError::TooManyDocuments { id }) if id == MAX_DOCS
        ));
    }

    #[test]
    fn selection_keeps_the_lowest() {
        let keys: Vec<u64> = (0..5000u64).map(|i| fmix64(i) >> 2).collect();
        let got = select(&keys, |_| false, 100);
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(got, sorted[..100]);
        assert_eq!(
            select(&keys[..30], |_| false, 100).len(),
            30,
            "short documents keep all"
        );
        // Common keys rank after all others, and fill in only when needed.
        let common = |k: u64| k < sorted[50];
        let got = select(&keys, common, 100);
        assert_eq!(got, sorted[50..150]);
        let got = select(&sorted[..60], common, 100);
        assert_eq!(got[..10], sorted[50..60]);
        assert_eq!(got[10..], sorted[..50]);
    }

    /// Koala's refinement: shingles starting with a common five-letter prefix
    /// rank after all others.
    #[test]
    fn common_prefixes_rank_last() {
        // Every other token is "ofthe": half the shingles start with it.
        let text: String = (0..300).map(|i| format!("ofthe w{i} ")).collect();
        let d = crate::similar::fuzzy::sim_doc(&text, 8);
        let docs = vec![d.clone()];
        let table = PrefixTable::build(&docs, 8);
        let starts_common = |key: u64| {
            let keys = shingles_in_order(&d, 8).unwrap();
            let i = keys.iter().position(|&k| k == key).unwrap();
            d.terms[i] == "ofthe"
        };
        assert!((table.common_fraction(0.01) - 0.5).abs() < 0.01);
        let on = SampleParams {
            common_prefix_share: 0.01,
            ..SampleParams::default()
        };
        let got = ranked(&d, Some(&table), &on, 100);
        assert_eq!(got.len(), 100);
        assert!(
            got.iter().all(|&k| !starts_common(k)),
            "no common start selected"
        );
        let mut uncommon: Vec<u64> = d
            .shingles
            .iter()
            .copied()
            .filter(|&k| !starts_common(k))
            .collect();
        uncommon.sort();
        assert_eq!(got, uncommon[..100]);
        // Off: plain lowest keys, and about half of them start with "ofthe".
        let off = SampleParams::default();
        let plain = ranked(&d, Some(&table), &off, 100);
        assert_eq!(plain, d.shingles[..100]);
        let n = plain.iter().filter(|&&k| starts_common(k)).count();
        assert!((30..70).contains(&n), "{n}");
        // A document whose terms do not give back its shingles (another k)
        // falls back to plain selection.
        let other_k = crate::similar::fuzzy::sim_doc(&text, 5);
        assert_eq!(
            ranked(&other_k, Some(&table), &on, 100),
            other_k.shingles[..100]
        );
    }

    fn store_with(docs: &[&[u32]]) -> SampleStore {
        let mut s = SampleStore::default();
        for (i, d) in docs.iter().enumerate() {
            s.add(&format!("d{i}"), d).unwrap();
        }
        s
    }

    #[test]
    fn common_substrings_are_ignored_up_to_ten() {
        let p = SampleParams::default();
        // Substring 1 is in 4 documents (common), 2 in 3 (not), 3 in 1.
        let s = store_with(&[&[1, 2, 3], &[1, 2], &[1, 2], &[1], &[9]]);
        let r = s.search(&[1, 2, 3], None, &p);
        assert_eq!(r.ignored, 1);
        assert_eq!(r.matches, vec![(0, 2), (1, 1), (2, 1)]);
        // The query's own copy does not count toward "common".
        let r = s.search(&[1, 2, 3], Some(0), &p);
        assert_eq!(r.ignored, 0, "1 is in only 3 other documents");
        assert_eq!(r.matches, vec![(1, 2), (2, 2), (3, 1)]);
        // Twelve common substrings: ten are ignored, the last two count.
        let common: Vec<u32> = (100..112).collect();
        let mut docs: Vec<Vec<u32>> = vec![common.clone(); 4];
        docs.push(vec![7]);
        let refs: Vec<&[u32]> = docs.iter().map(|d| &d[..]).collect();
        let s = store_with(&refs);
        let r = s.search(&common, None, &p);
        assert_eq!(r.ignored, 10);
        assert_eq!(r.matches, vec![(0, 2), (1, 2), (2, 2), (3, 2)]);
        assert_eq!(s.ratio(0, 2), 2.0 / 12.0);
    }

    #[test]
    fn identical_documents_match_fully() {
        let text: String = (0..400).map(|i| format!("w{} ", i * 7919 % 1000)).collect();
        let d = crate::similar::fuzzy::sim_doc(&text, 8);
        assert!(d.shingles.len() > 300);
        let docs = vec![d.clone(), d];
        let run = run(&docs, &SampleParams::default()).unwrap();
        assert_eq!(
            run.matched,
            vec![Matched {
                a: 0,
                b: 1,
                ratio_ab: 1.0,
                ratio_ba: 1.0
            }]
        );
        assert_eq!(run.matched[0].jaccard_estimate(), 1.0);
        assert_eq!(run.stats.entries, 200);
        assert_eq!(run.stats.documents, 2);
        let got = pairs(&docs, 0.9);
        assert_eq!(
            got,
            vec![Pair {
                a: 0,
                b: 1,
                similarity: 1.0
            }]
        );
    }

    #[test]
    fn block_file_round_trips_and_checks() {
        let mut s = SampleStore::default();
        for d in 0..50u32 {
            let hs: Vec<u32> = (0..100u64)
                .map(|i| substring_hash(u64::from(d) * 1000 + i))
                .collect();
            s.add(&format!("doc {d}.md"), &hs).unwrap();
        }
        let dir = std::env::temp_dir().join(format!("lineage-sample-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (bp, lp) = (dir.join("blocks"), dir.join("log"));
        s.write(&bp, &lp).unwrap();
        let bytes = std::fs::read(&bp).unwrap();
        assert_eq!(bytes.len(), (65536 + s.blocks.blocks() * 256) * 4);
        assert_eq!(SampleStore::read(&bp, &lp).unwrap(), s);
        let mut bad = bytes.clone();
        bad[65536 * 4 + 5] ^= 1;
        std::fs::write(&bp, &bad).unwrap();
        assert!(SampleStore::read(&bp, &lp).is_err());
        // A cyclic chain is refused even without the log's checksum.
        let mut words = s.blocks.words().to_vec();
        let head = words[0..65536].iter().copied().find(|&p| p != 0).unwrap() as usize;
        words[head * 256] = head as u32;
        assert!(BlockFile::from_words(words).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
