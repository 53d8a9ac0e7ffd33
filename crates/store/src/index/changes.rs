//! What each page changed against a base (the Documents pane's changed and
//! removed shares): the token counts of a (version, base) pair, kept so
//! that a session diffs only the pairs no session has (the engine's shares
//! run). A pair never changes; each row names the two versions' file
//! hashes, so a pair whose version was replaced under its id (an index
//! repaired from its files) is not read, and a row sum, so a damaged row is
//! diffed again rather than believed.
//!
//! `changes (id, base, id_hash, base_hash, kept, removed, new, moved, sum)`
//! (schema.rs): `base` -1 for none (the page is all new).

use rusqlite::params;

use super::schema::Db;
use super::{Index, IndexError};

/// A pair's counts: (version, its base, tokens kept, removed, new, moved).
pub type PairCounts = (u32, Option<u32>, [u32; 4]);

/// Every kept pair whose versions are still the ones it was measured on
/// (see [`super::Read::changes`]).
pub(crate) fn kept(db: &Db) -> Result<Vec<PairCounts>, IndexError> {
    let c = db.conn();
    let mut st = c.prepare(
        "SELECT c.id, c.base, c.kept, c.removed, c.new, c.moved FROM changes c
         JOIN versions v ON v.id = c.id
         LEFT JOIN versions b ON b.id = c.base
         WHERE c.id_hash = v.hash AND (c.base < 0 OR c.base_hash = b.hash)
           AND c.sum IS lineage_row(c.id, c.base, c.id_hash, c.base_hash, c.kept, c.removed,
                                    c.new, c.moved)",
    )?;
    let rows = st.query_map([], |r| {
        let base: i64 = r.get(1)?;
        Ok((
            r.get(0)?,
            u32::try_from(base).ok(),
            [r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?],
        ))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

impl Index {
    /// Keep `pairs` (replacing a pair kept before), each with its versions'
    /// file hashes; a pair naming a version the index lacks is left out.
    pub fn put_changes(&mut self, pairs: &[PairCounts]) -> Result<(), IndexError> {
        if pairs.is_empty() {
            return Ok(());
        }
        let tx = self.db.transaction()?;
        {
            let mut st = tx.prepare_cached(
                "INSERT OR REPLACE INTO changes
                 SELECT ?1, ?2, v.hash, coalesce(b.hash, 0), ?3, ?4, ?5, ?6,
                        lineage_row(?1, ?2, v.hash, coalesce(b.hash, 0), ?3, ?4, ?5, ?6)
                 FROM versions v LEFT JOIN versions b ON b.id = ?2
                 WHERE v.id = ?1 AND (?2 < 0 OR b.id IS NOT NULL)",
            )?;
            for &(id, base, [kept, removed, new, moved]) in pairs {
                let base = base.map_or(-1, i64::from);
                st.execute(params![id, base, kept, removed, new, moved])?;
            }
        }
        tx.commit()?;
        Ok(())
    }
}
