//! The sliced Hamming index (Manku et al.'s) as a database table: a sketch
//! cut into h + 1 slices, one indexed INTEGER column each. A sketch within distance h
//! of the query equals it on at least one slice (pigeonhole), so the query is
//! one index lookup per column, combined by UNION (an OR of the columns may
//! drive the planner to a full scan; a UNION of indexed equalities cannot),
//! and every row returned is checked by popcount(x ⊕ q) ≤ h, with x rebuilt
//! from its slices. Documents are inserted and deleted live.

use std::marker::PhantomData;
use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params, params_from_iter};

use super::{Sketch, Slices};

/// The `simhash` table of one database.
pub struct SqlIndex<S: Sketch> {
    conn: Connection,
    slices: Slices,
    h: u32,
    select: String,
    insert: String,
    _sketch: PhantomData<S>,
}

impl<S: Sketch> SqlIndex<S> {
    /// A fresh index in an in-memory database.
    pub fn open_in_memory(h: u32) -> rusqlite::Result<SqlIndex<S>> {
        SqlIndex::new(Connection::open_in_memory()?, h)
    }

    /// The index in a database file, created if missing; an index of another
    /// width or distance there is an error.
    pub fn open(path: &Path, h: u32) -> rusqlite::Result<SqlIndex<S>> {
        SqlIndex::new(Connection::open(path)?, h)
    }

    fn new(conn: Connection, h: u32) -> rusqlite::Result<SqlIndex<S>> {
        let slices = Slices::pigeonhole(S::BITS, h);
        let cols: Vec<String> = (0..slices.len()).map(|i| format!("s{i}")).collect();
        conn.execute_batch("CREATE TABLE IF NOT EXISTS simhash_layout (bits INTEGER NOT NULL, h INTEGER NOT NULL);")?;
        let layout: Option<(u32, u32)> = conn
            .query_row("SELECT bits, h FROM simhash_layout", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()?;
        match layout {
            Some(l) if l != (S::BITS, h) => {
                return Err(rusqlite::Error::InvalidParameterName(format!(
                    "the database holds a {}-bit index for distance {}, not {}-bit for {h}",
                    l.0,
                    l.1,
                    S::BITS
                )));
            }
            Some(_) => {}
            None => {
                let mut ddl = format!(
                    "CREATE TABLE simhash (doc INTEGER PRIMARY KEY, {});",
                    cols.iter()
                        .map(|c| format!("{c} INTEGER NOT NULL"))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                for c in &cols {
                    ddl += &format!("CREATE INDEX simhash_{c} ON simhash({c});");
                }
                conn.execute_batch(&ddl)?;
                conn.execute(
                    "INSERT INTO simhash_layout (bits, h) VALUES (?1, ?2)",
                    params![S::BITS, h],
                )?;
            }
        }
        let all = cols.join(", ");
        let select = cols
            .iter()
            .enumerate()
            .map(|(i, c)| format!("SELECT doc, {all} FROM simhash WHERE {c} = ?{}", i + 1))
            .collect::<Vec<_>>()
            .join(" UNION ");
        let marks = (1..=cols.len() + 1)
            .map(|i| format!("?{i}"))
            .collect::<Vec<_>>()
            .join(", ");
        let insert = format!("INSERT OR REPLACE INTO simhash (doc, {all}) VALUES ({marks})");
        Ok(SqlIndex {
            conn,
            slices,
            h,
            select,
            insert,
            _sketch: PhantomData,
        })
    }

    /// The h + 1 slices, one column each.
    pub fn slices(&self) -> &Slices {
        &self.slices
    }

    /// Slice values as stored: SQLite integers are signed 64-bit, so the
    /// bits are reinterpreted, not converted.
    fn columns(&self, s: S) -> Vec<i64> {
        self.slices.values(s).map(|v| v as i64).collect()
    }

    /// Add (or replace) a document's sketch.
    pub fn insert(&self, doc: u32, s: S) -> rusqlite::Result<()> {
        let mut values = vec![i64::from(doc)];
        values.extend(self.columns(s));
        self.conn
            .prepare_cached(&self.insert)?
            .execute(params_from_iter(values))?;
        Ok(())
    }

    /// Remove a document; false if it was not there.
    #[cfg(test)]
    pub(crate) fn remove(&self, doc: u32) -> rusqlite::Result<bool> {
        let n = self
            .conn
            .prepare_cached("DELETE FROM simhash WHERE doc = ?1")?
            .execute([doc])?;
        Ok(n > 0)
    }

    /// Documents in the table.
    pub fn len(&self) -> rusqlite::Result<u64> {
        let n: i64 = self
            .conn
            .query_row("SELECT count(*) FROM simhash", [], |r| r.get(0))?;
        Ok(n as u64)
    }
    /// Whether the table holds no document.
    pub fn is_empty(&self) -> rusqlite::Result<bool> {
        Ok(self.len()? == 0)
    }

    /// Every document within distance h of `q`, with its distance, sorted by
    /// document, into `out` (cleared first). Returns the rows the UNION gave
    /// (the candidates examined).
    pub(crate) fn query(&self, q: S, out: &mut Vec<(u32, u32)>) -> rusqlite::Result<u64> {
        out.clear();
        let mut stmt = self.conn.prepare_cached(&self.select)?;
        let mut rows = stmt.query(params_from_iter(self.columns(q)))?;
        let mut candidates = 0;
        while let Some(row) = rows.next()? {
            candidates += 1;
            let doc: u32 = row.get(0)?;
            let mut values = Vec::with_capacity(self.slices.len());
            for i in 0..self.slices.len() {
                values.push(row.get::<_, i64>(i + 1)? as u64);
            }
            let dist = self.slices.join::<S>(values).hamming(q);
            if dist <= self.h {
                out.push((doc, dist));
            }
        }
        out.sort_unstable();
        Ok(candidates)
    }

    /// Bytes of the database (table and indices): pages × page size.
    pub fn file_bytes(&self) -> rusqlite::Result<u64> {
        let pages: i64 = self.conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
        let size: i64 = self.conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
        Ok((pages * size) as u64)
    }

    /// SQLite's plan for the query, one line per step (`EXPLAIN QUERY PLAN`).
    #[cfg(test)]
    pub(crate) fn query_plan(&self) -> rusqlite::Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare(&format!("EXPLAIN QUERY PLAN {}", self.select))?;
        let values = self.columns(S::zero());
        let rows = stmt.query_map(params_from_iter(values), |r| r.get::<_, String>(3))?;
        rows.collect()
    }

    /// Run `f` in one transaction (bulk loads are much faster so).
    pub fn in_transaction<R>(
        &self,
        f: impl FnOnce(&Self) -> rusqlite::Result<R>,
    ) -> rusqlite::Result<R> {
        self.conn.execute_batch("BEGIN")?;
        match f(self) {
            Ok(r) => {
                self.conn.execute_batch("COMMIT")?;
                Ok(r)
            }
            Err(e) => {
                let _ = self.conn.execute_batch("ROLLBACK");
                Err(e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    #[test]
    fn the_plan_looks_up_every_column_index() {
        let idx = SqlIndex::<u64>::open_in_memory(3).unwrap();
        let plan = idx.query_plan().unwrap().join("\n");
        for c in 0..4 {
            assert!(
                plan.contains(&format!("USING INDEX simhash_s{c} (s{c}=?)")),
                "{plan}"
            );
        }
        assert!(!plan.contains("SCAN simhash"), "{plan}");
    }

    #[test]
    fn insert_query_delete() {
        let idx = SqlIndex::<u64>::open_in_memory(3).unwrap();
        idx.insert(1, 0).unwrap();
        idx.insert(2, 0b111).unwrap();
        idx.insert(3, 0b1111).unwrap();
        // Negative as i64: the top bit survives the round trip.
        idx.insert(4, u64::MAX).unwrap();
        idx.insert(5, 1 << 63).unwrap();
        let mut out = Vec::new();
        idx.query(0, &mut out).unwrap();
        assert_eq!(out, [(1, 0), (2, 3), (5, 1)]);
        idx.query(u64::MAX ^ 1, &mut out).unwrap();
        assert_eq!(out, [(4, 1)]);
        idx.query(1 << 63 | 1, &mut out).unwrap();
        assert_eq!(out, [(1, 2), (2, 3), (5, 1)]);
        assert!(idx.remove(2).unwrap());
        assert!(!idx.remove(2).unwrap());
        idx.query(0, &mut out).unwrap();
        assert_eq!(out, [(1, 0), (5, 1)]);
        // Re-inserting a document replaces its sketch.
        idx.insert(1, u64::MAX).unwrap();
        idx.query(0, &mut out).unwrap();
        assert_eq!(out, [(5, 1)]);
        assert_eq!(idx.len().unwrap(), 4);
        assert!(idx.file_bytes().unwrap() > 0);
    }

    #[test]
    fn a_file_keeps_its_layout() {
        let dir = std::env::temp_dir().join(format!("lineage-sql-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("simhash.sqlite");
        {
            let idx = SqlIndex::<u128>::open(&path, 5).unwrap();
            idx.insert(7, 12345).unwrap();
        }
        let idx = SqlIndex::<u128>::open(&path, 5).unwrap();
        let mut out = Vec::new();
        idx.query(12344, &mut out).unwrap();
        assert_eq!(out, [(7, 1)]);
        drop(idx);
        assert!(SqlIndex::<u128>::open(&path, 4).is_err());
        assert!(SqlIndex::<u64>::open(&path, 5).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn finds_exactly_the_documents_within_h(
            ops in prop::collection::vec(
                (any::<bool>(), 0u32..25, 0usize..3, prop::collection::vec(0u32..64, 0..10)),
                0..50,
            ),
            queries in prop::collection::vec((0usize..3, prop::collection::vec(0u32..64, 0..10)), 1..6),
            h in 0u32..12,
        ) {
            let centre = |c: usize, flips: &[u32]| {
                let x = [0u64, u64::MAX, 0x0f0f_0f0f_0f0f_0f0f][c];
                flips.iter().fold(x, |x, &b| x ^ (1 << b))
            };
            let idx = SqlIndex::<u64>::open_in_memory(h).unwrap();
            let mut live: HashMap<u32, u64> = HashMap::new();
            idx.in_transaction(|idx| {
                for (insert, d, c, flips) in &ops {
                    if *insert {
                        let s = centre(*c, flips);
                        idx.insert(*d, s)?;
                        live.insert(*d, s);
                    } else {
                        assert_eq!(idx.remove(*d)?, live.remove(d).is_some());
                    }
                }
                Ok(())
            }).unwrap();
            prop_assert_eq!(idx.len().unwrap(), live.len() as u64);
            let mut out = Vec::new();
            for (c, flips) in queries {
                let q = centre(c, &flips);
                idx.query(q, &mut out).unwrap();
                let mut expected: Vec<(u32, u32)> = live
                    .iter()
                    .map(|(&d, &s)| (d, s.hamming(q)))
                    .filter(|&(_, dist)| dist <= h)
                    .collect();
                expected.sort_unstable();
                prop_assert_eq!(&out, &expected);
            }
        }
    }
}
