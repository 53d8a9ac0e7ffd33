//! Earlier versions' shingle keys for alignment, from the index's cache of
//! token fingerprints (no file is read): the pass of `index`, `watch` and a
//! replay aligns with the same keys a one-pass `scan` kept of the documents
//! gone by (`cli/spill.rs`), so both give the same answer.

use rusqlite::Connection;

use super::schema;
use lineage_core::fingerprint::ShingleRoller;
use lineage_origin::align::OriginKeys;

pub(super) struct CachedKeys<'c> {
    conn: &'c Connection,
    roller: &'c ShingleRoller,
    recent: Recent,
}

impl<'c> CachedKeys<'c> {
    /// Earlier versions' keys from their cached fingerprints, rolled as
    /// `roller` rolls (the preparer's).
    pub(super) fn new(conn: &'c Connection, roller: &'c ShingleRoller) -> CachedKeys<'c> {
        CachedKeys {
            conn,
            roller,
            recent: Recent::default(),
        }
    }
}

impl OriginKeys for CachedKeys<'_> {
    /// A version whose fingerprints are missing or damaged gives none: its
    /// runs keep their sampled hits (the damage is reported where the
    /// index is checked, not here).
    fn keys(&mut self, id: u32) -> Option<&[u64]> {
        let (conn, roller) = (self.conn, &self.roller);
        self.recent.get_or(id, || {
            let fps = schema::fingerprints(conn, id, id + 1).ok()?.pop()?;
            let mut keys = Vec::new();
            roller.keys(&fps, &mut keys);
            Some(keys)
        })
    }
}

/// The last few versions' keys read from the database:
/// a document's copies mostly come from a few earlier versions, named again
/// by the versions after it.
#[derive(Default)]
struct Recent {
    /// (version, keys), the most recently used last.
    kept: Vec<(u32, Vec<u64>)>,
}

impl Recent {
    const KEPT: usize = 8;

    /// Version `id`'s keys, from those kept or else from `load`.
    fn get_or(&mut self, id: u32, load: impl FnOnce() -> Option<Vec<u64>>) -> Option<&[u64]> {
        if let Some(i) = self.kept.iter().position(|(v, _)| *v == id) {
            let hit = self.kept.remove(i);
            self.kept.push(hit);
        } else {
            let keys = load()?;
            if self.kept.len() == Self::KEPT {
                self.kept.remove(0);
            }
            self.kept.push((id, keys));
        }
        self.kept.last().map(|(_, k)| &k[..])
    }
}
