//! A snapshot's live documents: their rows by version id, in chunks shared
//! with the snapshot before, and the cluster of each. A change copies the
//! chunks it touches; copying every row (two reference counts each, both
//! cache misses) was half the time from an edit to the screen at 100,000
//! documents, and the reader then dropped every old row again.

use std::sync::Arc;

use super::DocRow;

/// Rows of a chunk built whole. An edit splits a chunk that grows past
/// twice this; chunks that shrink are gathered again when they average
/// under a quarter of it.
const CHUNK: usize = 1024;

/// Live documents, by version id.
#[derive(Clone, Debug, Default)]
pub struct Documents {
    rows: Arc<Rows>,
    /// (version id, index into [`super::Snapshot::clusters`]), by id: the
    /// cluster numbers change with every list, the rows need not.
    clusters: Arc<[(u32, u32)]>,
}

#[derive(Debug, Default)]
struct Rows {
    /// Each non-empty, by id, every id above those of the chunk before.
    chunks: Vec<Arc<[DocRow]>>,
    /// The position of each chunk's first row, then the number of rows.
    starts: Vec<usize>,
}

impl Rows {
    fn new(chunks: Vec<Arc<[DocRow]>>) -> Rows {
        let mut starts = Vec::with_capacity(chunks.len() + 1);
        let mut at = 0;
        for c in &chunks {
            debug_assert!(!c.is_empty() && c.is_sorted_by(|a, b| a.id < b.id));
            starts.push(at);
            at += c.len();
        }
        starts.push(at);
        debug_assert!(
            chunks
                .windows(2)
                .all(|w| w[0].last().is_some_and(|l| l.id < w[1][0].id))
        );
        Rows { chunks, starts }
    }
}

/// `rows` (by id) cut into chunks.
fn chunked(rows: Vec<DocRow>) -> Vec<Arc<[DocRow]>> {
    rows.chunks(CHUNK).map(Arc::from).collect()
}

impl Documents {
    /// `rows`, by id, with the cluster of each in `clusters` ((id, cluster), by id).
    pub fn new(rows: Vec<DocRow>, clusters: Vec<(u32, u32)>) -> Documents {
        Documents {
            rows: Arc::new(Rows::new(chunked(rows))),
            clusters: clusters.into(),
        }
    }

    /// These documents without the versions `gone` (ascending) and with the
    /// rows `new` (by id), clusters as `clusters` says. Chunks that neither
    /// touches are shared.
    pub fn edited(&self, gone: &[u32], new: Vec<DocRow>, clusters: Vec<(u32, u32)>) -> Documents {
        let old = &self.rows.chunks;
        let mut chunks = Vec::with_capacity(old.len() + 1);
        let mut new = new.into_iter().peekable();
        for (k, c) in old.iter().enumerate() {
            // Chunk k takes the new rows below the next chunk's first id.
            let below = old.get(k + 1).map_or(u32::MAX, |n| n[0].id);
            let mut added = Vec::new();
            while let Some(d) = new.next_if(|d| d.id < below || k + 1 == old.len()) {
                added.push(d);
            }
            let (first, last) = (c[0].id, c[c.len() - 1].id);
            let from = gone.partition_point(|&g| g < first);
            let hit = gone.get(from).is_some_and(|&g| g <= last);
            if !hit && added.is_empty() {
                chunks.push(c.clone());
                continue;
            }
            let mut rows: Vec<DocRow> = c
                .iter()
                .filter(|d| gone.binary_search(&d.id).is_err())
                .cloned()
                .collect();
            rows.extend(added);
            rows.sort_by_key(|d| d.id);
            if rows.len() > 2 * CHUNK {
                chunks.extend(chunked(rows));
            } else if !rows.is_empty() {
                chunks.push(rows.into());
            }
        }
        // No chunk to take them: none was there.
        chunks.extend(chunked(new.collect()));
        let len: usize = chunks.iter().map(|c| c.len()).sum();
        if chunks.len() > 1 && chunks.len() > 4 * len / CHUNK {
            let all = chunks.iter().flat_map(|c| c.iter().cloned()).collect();
            chunks = chunked(all);
        }
        Documents {
            rows: Arc::new(Rows::new(chunks)),
            clusters: clusters.into(),
        }
    }

    /// How many live documents there are.
    pub fn len(&self) -> usize {
        self.rows.starts.last().copied().unwrap_or(0)
    }

    /// Whether there are no live documents.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every row, by id.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &DocRow> + Clone {
        self.rows.chunks.iter().flat_map(|c| c.iter())
    }

    /// The row at position `at` (by id); panics past the end, as a slice does.
    pub fn at(&self, at: usize) -> &DocRow {
        let s = &self.rows.starts;
        let k = s.partition_point(|&x| x <= at) - 1;
        &self.rows.chunks[k][at - s[k]]
    }

    /// The position of version `id`'s row.
    pub fn position(&self, id: u32) -> Option<usize> {
        let chunks = &self.rows.chunks;
        let k = chunks.partition_point(|c| c[0].id <= id).checked_sub(1)?;
        let i = chunks[k].binary_search_by_key(&id, |d| d.id).ok()?;
        Some(self.rows.starts[k] + i)
    }

    /// Version `id`'s row, if it is live.
    pub fn get(&self, id: u32) -> Option<&DocRow> {
        self.position(id).map(|at| self.at(at))
    }

    /// Version `id`'s cluster (an index into the snapshot's clusters).
    pub fn cluster(&self, id: u32) -> Option<u32> {
        let c = &self.clusters;
        c.binary_search_by_key(&id, |&(d, _)| d)
            .ok()
            .map(|i| c[i].1)
    }

    /// Whether `other` is these very documents (not only equal ones).
    pub fn same(&self, other: &Documents) -> bool {
        Arc::ptr_eq(&self.rows, &other.rows) && Arc::ptr_eq(&self.clusters, &other.clusters)
    }

    /// The chunks, by id, each with its first row's position.
    pub fn chunks(&self) -> impl Iterator<Item = (usize, &Arc<[DocRow]>)> {
        self.rows.starts.iter().copied().zip(&self.rows.chunks)
    }
}

impl PartialEq for Documents {
    fn eq(&self, other: &Documents) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter()) && self.clusters == other.clusters
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn row(id: u32) -> DocRow {
        DocRow {
            id,
            path: format!("p{id}").into(),
            version: 1,
            tokens: id,
            fresh_percent: 0.0,
            dominant_origin: None,
            dominant_path: None,
            mtime_ns: 0,
        }
    }

    proptest! {
        /// Edits give what building the rows whole gives, find every row by
        /// id and position, and share the chunks they do not touch.
        #[test]
        fn edits_keep_every_row_and_share_the_rest(
            start in 0u32..5_000,
            steps in prop::collection::vec(
                (prop::collection::vec(any::<prop::sample::Index>(), 0..40), 0u32..300, 0u32..40),
                1..8,
            ),
        ) {
            let mut live: Vec<u32> = (0..start).map(|i| i * 2).collect();
            let mut docs = Documents::new(live.iter().map(|&i| row(i)).collect(), Vec::new());
            let mut next = start * 2;
            for (picks, appended, redone) in steps {
                let mut gone: Vec<u32> = picks
                    .iter()
                    .filter(|_| !live.is_empty())
                    .map(|p| *p.get(&live))
                    .collect();
                gone.sort_unstable();
                gone.dedup();
                // Some gone rows come back under their own id (a row built
                // again), the others leave; new ids are the newest.
                let back: Vec<u32> = gone.iter().copied().take(redone as usize).collect();
                let mut new: Vec<DocRow> = back.iter().map(|&i| row(i)).collect();
                new.extend((0..appended).map(|k| row(next + k)));
                live.retain(|i| gone.binary_search(i).is_err() || back.contains(i));
                live.extend((0..appended).map(|k| next + k));
                next += appended;
                let clusters: Vec<(u32, u32)> = live.iter().step_by(7).map(|&i| (i, i % 3)).collect();
                let before = docs.clone();
                docs = docs.edited(&gone, new, clusters.clone());
                let whole = Documents::new(live.iter().map(|&i| row(i)).collect(), clusters.clone());
                prop_assert_eq!(&docs, &whole);
                prop_assert_eq!(docs.len(), live.len());
                for (at, &id) in live.iter().enumerate() {
                    prop_assert_eq!(docs.position(id), Some(at));
                    prop_assert_eq!(docs.at(at).id, id);
                }
                prop_assert_eq!(docs.get(u32::MAX), None);
                for &(id, c) in &clusters {
                    prop_assert_eq!(docs.cluster(id), Some(c));
                }
                // Untouched chunks are the same allocation.
                let touched = |c: &Arc<[DocRow]>| {
                    let (first, last) = (c[0].id, c[c.len() - 1].id);
                    gone.iter().any(|&g| (first..=last).contains(&g))
                };
                let kept: Vec<_> = before.chunks().map(|(_, c)| c).filter(|c| !touched(c)).collect();
                // The last chunk takes the new rows. Gathering small chunks
                // again copies them all; it cannot happen while the chunks,
                // with the at most two an edit of 300 new rows splits off,
                // are few for the rows (whole chunks otherwise passed for
                // a gathering, and the check could not fail).
                let last = before.rows.chunks.last();
                let may_gather = before.rows.chunks.len() + 2 > 4 * docs.len() / CHUNK;
                prop_assert!(
                    may_gather
                        || kept.iter().all(|c| last.is_some_and(|l| Arc::ptr_eq(l, c)) || docs.chunks().any(|(_, d)| Arc::ptr_eq(c, d))),
                    "an untouched chunk was copied"
                );
            }
        }
    }

    #[test]
    fn an_empty_list_takes_new_rows() {
        let docs = Documents::default().edited(&[], vec![row(3), row(5)], vec![(5, 0)]);
        assert_eq!(docs.iter().map(|d| d.id).collect::<Vec<_>>(), [3, 5]);
        assert_eq!(docs.cluster(5), Some(0));
        assert_eq!(docs.cluster(3), None);
        let none = docs.edited(&[3, 5], Vec::new(), Vec::new());
        assert!(none.is_empty());
        assert_eq!(none.position(3), None);
    }
}
