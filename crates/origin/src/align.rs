//! Alignment where the table samples (docs/algorithms.md §3.2), our
//! addition to the paper. A sampled hit says a shingle came from version
//! `o`; the shingles around it, which the sample left out, most likely came
//! from `o` too. Rather than guess from neighbours, the origins the
//! document's hits name are read (their shingle keys: the index's cache,
//! or `scan`'s spill) and every unlabelled shingle one of them holds is
//! labelled with it. So a copied run is found to its exact edges, a gap
//! between two runs of one origin is filled where its shingles are the
//! origin's and stays fresh where they were edited, and a shingle is
//! labelled copied only when an earlier version holds it: alignment never
//! calls copied a token the exact answer calls fresh.
//!
//! The exact answer's rules where they meet: a unit a hit labelled keeps
//! its label (the table's word), and of two origins holding a shingle the
//! earlier version wins. What no hit points to (a copy from a version none
//! of the sampled shingles names) stays fresh.

use super::table::{Hit, KeyMap};

/// Where alignment reads an earlier version's shingle keys.
pub trait OriginKeys {
    /// The k-shingle keys of version `id`, in order; `None` when they
    /// cannot be had (that origin's shingles are then not looked for).
    fn keys(&mut self, id: u32) -> Option<&[u64]>;
}

/// Versions' keys in memory, version `d`'s at `[d]`.
impl<T: AsRef<[u64]>> OriginKeys for &[T] {
    fn keys(&mut self, id: u32) -> Option<&[u64]> {
        self.get(id as usize).map(AsRef::as_ref)
    }
}

/// Versions' keys as the units of `Selector::All` (a unit a shingle), over
/// each version's selected units indexed by its id, borrowed or shared
/// (a split replay's workers hold them by `Arc`).
pub struct UnitKeys<U> {
    units: U,
    buf: Vec<u64>,
}

impl<U: AsRef<[Vec<super::Unit>]>> UnitKeys<U> {
    /// Over `units`, each version's selected units indexed by its id.
    pub fn new(units: U) -> UnitKeys<U> {
        UnitKeys {
            units,
            buf: Vec::new(),
        }
    }
}

impl<U: AsRef<[Vec<super::Unit>]>> OriginKeys for UnitKeys<U> {
    fn keys(&mut self, id: u32) -> Option<&[u64]> {
        let units = self.units.as_ref().get(id as usize)?;
        self.buf.clear();
        self.buf.extend(units.iter().map(|u| u.key));
        Some(&self.buf)
    }
}

/// No version's keys: nothing is aligned (the tests' pass without history).
#[cfg(test)]
pub(crate) struct NoKeys;

#[cfg(test)]
impl OriginKeys for NoKeys {
    fn keys(&mut self, _: u32) -> Option<&[u64]> {
        None
    }
}

/// The keys alignment may read for one document: this many times its own
/// shingles, plus a floor. A page quoting a thousand earlier pages does not
/// read them all: the origins past the budget keep their sampled hits only.
const BUDGET_PER_SHINGLE: usize = 16;
const BUDGET_FLOOR: usize = 1 << 16;

/// Scratch space of alignment, reused from document to document.
#[derive(Default)]
pub(crate) struct Aligner {
    /// The origins of the hits on other versions, one per hit, sorted.
    hit_origins: Vec<u32>,
    /// Each origin once with its hits, in the order they are read.
    ranked: Vec<(u32, u32)>,
    /// A key of an unlabelled unit → the first such unit; `next` chains
    /// the others with that key (`u32::MAX` ends a chain).
    first: KeyMap<u32>,
    next: Vec<u32>,
    /// One unit of each chain (its last), a distinct open key each: a
    /// chain is labelled whole, so any of its units tells its label.
    chains: Vec<u32>,
    /// The origins the budget left unread, sorted.
    unread: Vec<u32>,
    /// One bit per value of a key's low bits, set for the keys in `first`:
    /// most of an origin's keys are not the document's, and a bit test
    /// turns them away for less than a map lookup.
    filter: Vec<u64>,
}

impl Aligner {
    /// Label the units of document `doc` (shingle keys `keys`, one unit a
    /// shingle, the table's answers `hits`) that the origins of its hits
    /// hold, each with the earliest such origin read, reading their keys
    /// from `origins`. `labels[i] == doc` marks a unit nothing labelled
    /// yet; hits keep their labels.
    ///
    /// Origins are read by how many of the document's hits name them, most
    /// first (docs/algorithms.md §3.2): a hit names the earliest version
    /// holding its shingle, so the hits are a sample of the exact answer's
    /// origins, and where the budget cannot read them all it reads those
    /// the document took most from. Whatever the order, a unit takes the
    /// earliest origin read that holds it, so while the budget reads every
    /// origin the answer is the same as reading them earliest first.
    pub(crate) fn align(
        &mut self,
        doc: u32,
        keys: &[u64],
        hits: &[Option<Hit>],
        labels: &mut [u32],
        origins: &mut dyn OriginKeys,
    ) {
        debug_assert_eq!(keys.len(), hits.len());
        debug_assert_eq!(keys.len(), labels.len());
        self.unread.clear();
        self.hit_origins.clear();
        self.hit_origins.extend(
            hits.iter()
                .flatten()
                .map(|h| h.origin)
                .filter(|&o| o != doc),
        );
        if self.hit_origins.is_empty() {
            return;
        }
        self.hit_origins.sort_unstable();
        self.ranked.clear();
        self.ranked.extend(
            self.hit_origins
                .chunk_by(|a, b| a == b)
                .map(|run| (run[0], run.len() as u32)),
        );
        // Most hits first; of two with as many, the earlier.
        self.ranked
            .sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        // The units still open, by key (built backwards so each chain runs
        // in document order).
        self.first.clear();
        self.next.clear();
        self.next.resize(keys.len(), u32::MAX);
        self.chains.clear();
        // 16 bits a key: about one origin key in 16 passes by chance.
        let mask = (16 * keys.len()).next_power_of_two().max(1 << 12) as u64 - 1;
        self.filter.clear();
        self.filter.resize(mask as usize / 64 + 1, 0);
        for j in (0..keys.len()).rev() {
            if hits[j].is_none() && labels[j] == doc {
                let b = keys[j] & mask;
                self.filter[(b >> 6) as usize] |= 1 << (b & 63);
                if let Some(f) = self.first.insert(keys[j], j as u32) {
                    self.next[j] = f;
                } else {
                    self.chains.push(j as u32);
                }
            }
        }
        let mut open = self.chains.len();
        let mut budget = BUDGET_PER_SHINGLE * keys.len() + BUDGET_FLOOR;
        for &(origin, _) in &self.ranked {
            if open == 0 {
                // Every open key is labelled: an origin can only take a key
                // from a later one, and none is later than this.
                let latest = self.chains.iter().map(|&j| labels[j as usize]).max();
                if latest.is_none_or(|l| l <= origin) {
                    continue;
                }
            }
            let Some(theirs) = origins.keys(origin) else {
                continue;
            };
            let Some(left) = budget.checked_sub(theirs.len()) else {
                self.unread.push(origin);
                continue;
            };
            budget = left;
            for key in theirs {
                let b = key & mask;
                if self.filter[(b >> 6) as usize] >> (b & 63) & 1 == 0 {
                    continue;
                }
                let Some(&head) = self.first.get(key) else {
                    continue;
                };
                // Open units carry `doc`, later than every origin.
                let was = labels[head as usize];
                if was <= origin {
                    continue;
                }
                open -= usize::from(was == doc);
                let mut j = head;
                while j != u32::MAX {
                    labels[j as usize] = origin;
                    j = self.next[j as usize];
                }
            }
        }
        self.unread.sort_unstable();
    }

    /// Whether the last [`Aligner::align`]'s budget left `origin` unread:
    /// what it holds of the document is unknown, not fresh.
    pub(crate) fn unread(&self, origin: u32) -> bool {
        self.unread.binary_search(&origin).is_ok()
    }

    /// Whether the last [`Aligner::align`]'s budget left an origin unread.
    pub(crate) fn any_unread(&self) -> bool {
        !self.unread.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(origin: u32) -> Option<Hit> {
        Some(Hit {
            origin,
            offset: 0,
            prev: 0,
            next: 0,
        })
    }

    /// Labels of document `doc` after alignment, from its keys and hits at
    /// the given units.
    fn aligned(doc: u32, keys: &[u64], at: &[(usize, u32)], versions: &[Vec<u64>]) -> Vec<u32> {
        let mut hits = vec![None; keys.len()];
        for &(i, o) in at {
            hits[i] = hit(o);
        }
        let mut labels: Vec<u32> = hits.iter().map(|h| h.map_or(doc, |h| h.origin)).collect();
        Aligner::default().align(doc, keys, &hits, &mut labels, &mut &versions[..]);
        labels
    }

    #[test]
    fn one_hit_in_an_identical_copy_labels_the_whole_copy() {
        let v0: Vec<u64> = (100..140).collect();
        let labels = aligned(1, &v0, &[(17, 0)], std::slice::from_ref(&v0));
        assert_eq!(labels, vec![0; 40]);
    }

    #[test]
    fn a_copy_is_labelled_to_its_edges_and_an_edit_stays_fresh() {
        let v0: Vec<u64> = (100..140).collect();
        let mut v1 = v0.clone();
        v1[0] = 7;
        v1[39] = 8;
        v1[20] = 9;
        let labels = aligned(1, &v1, &[(5, 0), (30, 0)], std::slice::from_ref(&v0));
        let mut want = vec![0; 40];
        want[0] = 1;
        want[20] = 1;
        want[39] = 1;
        assert_eq!(labels, want);
    }

    #[test]
    fn a_shifted_copy_is_found_where_it_sits() {
        let v0: Vec<u64> = (100..140).collect();
        // Five new shingles, then v0's 10..30.
        let v1: Vec<u64> = (1..6).chain(110..130).collect();
        let labels = aligned(1, &v1, &[(12, 0)], std::slice::from_ref(&v0));
        let want: Vec<u32> = [vec![1; 5], vec![0; 20]].concat();
        assert_eq!(labels, want);
    }

    #[test]
    fn the_earlier_origin_wins_and_hits_keep_their_label() {
        // v0 and v1 both hold 200..220; v2 copies it. The table's hit at 3
        // says v1 (a sample may name either); at 15 it says v0.
        let v0: Vec<u64> = (200..220).collect();
        let v1: Vec<u64> = (1..4).chain(200..220).collect();
        let v2: Vec<u64> = (200..220).collect();
        let labels = aligned(2, &v2, &[(3, 1), (15, 0)], &[v0, v1]);
        let mut want = vec![0; 20];
        want[3] = 1;
        assert_eq!(labels, want);
    }

    #[test]
    fn origins_are_read_most_hits_first_and_the_earlier_still_wins() {
        // v1 holds all of v2 and is named by three hits, v0 holds the first
        // half and is named by one: v1 is read first, then v0 takes back
        // the half it held first.
        let v0: Vec<u64> = (200..210).collect();
        let v1: Vec<u64> = (200..220).collect();
        let v2: Vec<u64> = (200..220).collect();
        let labels = aligned(2, &v2, &[(2, 0), (12, 1), (15, 1), (18, 1)], &[v0, v1]);
        let want: Vec<u32> = [vec![0; 10], vec![1; 10]].concat();
        assert_eq!(labels, want);
    }

    /// Keys of origins that are read, for a test to see what was read.
    struct Counted<'a> {
        versions: &'a [Vec<u64>],
        read: Vec<u32>,
    }

    impl OriginKeys for Counted<'_> {
        fn keys(&mut self, id: u32) -> Option<&[u64]> {
            self.read.push(id);
            self.versions.get(id as usize).map(|v| &v[..])
        }
    }

    #[test]
    fn a_binding_budget_reads_the_origins_the_page_took_most_from() {
        // Forty old versions of 2,000 keys, each named by one hit, and the
        // newest, of which the page is a copy, named by twenty: the budget
        // (16 × 1,000 + 65,536) reads 40 of the 41 origins, and the newest
        // is among them.
        let mut versions: Vec<Vec<u64>> = (0..40u64)
            .map(|v| (0..2000).map(|i| v << 32 | i).collect())
            .collect();
        let page: Vec<u64> = (0..1000).map(|i| 99 << 32 | i).collect();
        versions.push(page.clone());
        let mut hits = vec![None; page.len()];
        for (v, h) in hits.iter_mut().take(40).enumerate() {
            *h = hit(v as u32);
        }
        for i in 0..20 {
            hits[100 + 40 * i] = hit(40);
        }
        let mut labels: Vec<u32> = hits.iter().map(|h| h.map_or(41, |h| h.origin)).collect();
        let mut origins = Counted {
            versions: &versions,
            read: Vec::new(),
        };
        Aligner::default().align(41, &page, &hits, &mut labels, &mut origins);
        assert_eq!(origins.read[0], 40);
        assert!(labels[40..].iter().all(|&l| l == 40));
    }

    #[test]
    fn an_origin_without_keys_or_holding_none_of_the_page_labels_nothing() {
        let doc: Vec<u64> = (100..140).collect();
        let mut hits = vec![None; 40];
        hits[3] = hit(0);
        let mut labels: Vec<u32> = hits.iter().map(|h| h.map_or(1, |h| h.origin)).collect();
        let want = labels.clone();
        Aligner::default().align(1, &doc, &hits, &mut labels, &mut NoKeys);
        assert_eq!(labels, want);
        // An origin holding none of the page's shingles (the hit a false
        // match of the table's stored bits) labels nothing either.
        let other: Vec<u64> = (500..540).collect();
        let labels = aligned(1, &doc, &[(3, 0)], &[other]);
        assert_eq!(labels, want);
    }

    #[test]
    fn a_hit_on_the_document_itself_is_no_anchor() {
        let v0: Vec<u64> = (100..140).collect();
        let labels = aligned(1, &v0, &[(3, 1)], std::slice::from_ref(&v0));
        assert_eq!(labels, vec![1; 40]);
    }
}
