//! Heintze's store as data: the block file and the document log.
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
use std::io;

use lineage_core::fingerprint::fmix64;

/// Substrings stored per document.
pub const STORED: usize = 100;
/// Substrings looked up per search.
pub const SEARCHED: usize = 1000;
/// Width of the substring hash.
pub const HASH_BITS: u32 = 28;
/// Directory slots: the top 16 of the 28 hash bits.
pub const DIRECTORY_SLOTS: usize = 1 << 16;
/// Words (u32) per block, 1 KiB.
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
        /// The id given.
        id: u32,
    },
    /// A substring hash wider than [`HASH_BITS`].
    HashTooWide(u32),
    /// Reading or writing the store failed.
    Io(io::Error),
    /// The store's data is inconsistent: what is wrong.
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

impl std::error::Error for SampleError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SampleError::Io(e) => Some(e),
            _ => None,
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
    pub(crate) fn words(&self) -> &[u32] {
        &self.words
    }

    /// Blocks after the directory.
    pub(crate) fn blocks(&self) -> usize {
        self.words.len() / BLOCK_WORDS - DIRECTORY_BLOCKS
    }

    /// Blocks in the chain of directory slot `slot`.
    pub(crate) fn chain_len(&self, slot: usize) -> u32 {
        let mut block = self.words[slot] as usize;
        let mut n = 0;
        while block != 0 {
            n += 1;
            block = self.words[block * BLOCK_WORDS] as usize;
        }
        n
    }

    /// Entries stored.
    pub(crate) fn entries(&self) -> u64 {
        (DIRECTORY_BLOCKS..self.words.len() / BLOCK_WORDS)
            .map(|b| u64::from(self.words[b * BLOCK_WORDS + 1]))
            .sum()
    }
}

/// A document of the log: Heintze keeps id, date, URL and contact; we keep the
/// path and how many substrings were stored (the match ratio's denominator).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogEntry {
    /// The document's path.
    pub path: String,
    /// Substrings stored for it (at most [`STORED`]).
    pub stored: u16,
}

/// Settings of the store and its search.
#[derive(Clone, Debug, PartialEq)]
pub struct SampleParams {
    /// Shingle length, to recover shingle texts for the prefix refinement.
    pub k: usize,
    /// Substrings stored per document ([`STORED`]).
    pub stored: usize,
    /// Substrings looked up per search ([`SEARCHED`]).
    pub searched: usize,
    /// A query substring found in this many other documents is common...
    pub(crate) common_docs: usize,
    /// ...and ignored, for at most this many substrings per search.
    pub(crate) max_ignored: usize,
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
    /// The substrings' hashes and document ids.
    pub blocks: BlockFile,
    /// The documents, indexed by id.
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
    pub(crate) fn ratio(&self, doc: u32, matches: u32) -> f64 {
        let stored = self.log[doc as usize].stored;
        if stored == 0 {
            0.0
        } else {
            f64::from(matches) / f64::from(stored)
        }
    }
}

/// Statistics of a store and of the searches run against it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SampleStats {
    /// Documents in the log.
    pub documents: usize,
    /// Entries in the block file: one per stored substring.
    pub entries: u64,
    /// Data blocks (after the directory).
    pub blocks: usize,
    /// Bytes of the block file, directory included.
    pub block_file_bytes: u64,
    /// Directory slots with a chain.
    pub used_slots: usize,
    /// Blocks per used slot.
    pub avg_chain: f64,
    /// Blocks of the longest chain.
    pub max_chain: u32,
    /// Searches run against the store.
    pub searches: usize,
    /// Blocks read per search (Heintze's disk probes).
    pub probes_per_search: f64,
    /// Query substrings ignored as common, per search.
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
