//! The near-duplicate state kept beside the document log: each live
//! version's MinHash sketch (its LSH band keys and set digest, as
//! `similar::minhash::lsh::Sketch::to_bytes` writes them) and the verified
//! links of the clusters (`similar/live.rs`), for the settings `meta.near` names, so a re-open need not compare
//! every document again. A change of settings (k, threshold, banding) resets
//! both.
//!
//! The sketches live in `near_sketches (id INTEGER PRIMARY KEY, sketch BLOB)`,
//! the links in `near (a, b, similarity)` (schema.rs).

use std::collections::HashMap;

use rusqlite::params;

use super::schema::{self, Db};
use super::{Index, IndexError};

/// Stored sketches and pairs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Near {
    /// Sketch bytes by version id.
    pub sketches: HashMap<u32, Vec<u8>>,
    /// (a, b, Jaccard), a < b.
    pub pairs: Vec<(u32, u32, f64)>,
}

/// One version's sketch (empty: no shingles, nothing indexed) and the pairs
/// it was found in.
pub type NearRow = (u32, Vec<u8>, Vec<(u32, u32, f64)>);

impl Index {
    /// The stored state, if it was computed with `settings`.
    pub fn near(&self, settings: &str) -> Result<Option<Near>, IndexError> {
        let db: &Db = &self.db;
        if db.meta("near")?.as_deref() != Some(settings) {
            return Ok(None);
        }
        let c = db.conn();
        let mut near = Near::default();
        let mut st = c.prepare("SELECT id, sketch FROM near_sketches")?;
        for r in st.query_map([], |r| Ok((r.get::<_, u32>(0)?, r.get::<_, Vec<u8>>(1)?)))? {
            let (id, s) = r?;
            near.sketches.insert(id, s);
        }
        let mut st = c.prepare("SELECT a, b, similarity FROM near")?;
        for r in st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))? {
            near.pairs.push(r?);
        }
        Ok(Some(near))
    }

    /// Forget the stored state; what follows is for `settings`.
    pub fn reset_near(&mut self, settings: &str) -> Result<(), IndexError> {
        let tx = self.db.transaction()?;
        tx.execute("DELETE FROM near_sketches", [])?;
        tx.execute("DELETE FROM near", [])?;
        schema::set_meta(&tx, "near", settings)?;
        tx.commit()?;
        Ok(())
    }

    /// Record versions' sketches and pairs and other `pairs`, and forget
    /// the stored pairs `forget` (a, b) and the sketches of versions no
    /// longer live `dead`, in one transaction.
    pub fn put_near(
        &mut self,
        rows: &[NearRow],
        pairs: &[(u32, u32, f64)],
        forget: &[(u32, u32)],
        dead: &[u32],
    ) -> Result<(), IndexError> {
        if rows.is_empty() && pairs.is_empty() && forget.is_empty() && dead.is_empty() {
            return Ok(());
        }
        let tx = self.db.transaction()?;
        {
            let mut sk =
                tx.prepare_cached("INSERT OR REPLACE INTO near_sketches VALUES (?1, ?2)")?;
            let mut pr = tx.prepare_cached("INSERT OR REPLACE INTO near VALUES (?1, ?2, ?3)")?;
            for (id, sketch, pairs) in rows {
                sk.execute(params![id, sketch])?;
                for (a, b, j) in pairs {
                    pr.execute(params![a, b, j])?;
                }
            }
            for (a, b, j) in pairs {
                pr.execute(params![a, b, j])?;
            }
            let mut gone = tx.prepare_cached("DELETE FROM near WHERE a = ?1 AND b = ?2")?;
            for (a, b) in forget {
                gone.execute(params![a, b])?;
            }
            let mut dead_sketch = tx.prepare_cached("DELETE FROM near_sketches WHERE id = ?1")?;
            for id in dead {
                dead_sketch.execute([id])?;
            }
        }
        tx.commit()?;
        Ok(())
    }
}
