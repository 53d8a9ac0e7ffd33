//! Earlier versions' shingle keys for alignment, from the index's cache of
//! token fingerprints (no file is read): the pass of `index`, `watch` and a
//! replay aligns with the same keys a one-pass `scan` reads again from the
//! files, so both give the same answer.

use rusqlite::Connection;

use super::schema;
use crate::fingerprint::ShingleRoller;
use crate::origin::align::{OriginKeys, Recent};

pub(super) struct CachedKeys<'c> {
    conn: &'c Connection,
    roller: ShingleRoller,
    recent: Recent,
}

impl<'c> CachedKeys<'c> {
    pub(super) fn new(conn: &'c Connection, k: usize) -> CachedKeys<'c> {
        CachedKeys {
            conn,
            roller: ShingleRoller::new(k),
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
