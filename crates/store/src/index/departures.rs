//! Pages that went away or moved, and when: the history keeps every
//! version, so the Events pane rebuilds its versions after a restart, but
//! not that a page was deleted or renamed, nor when. The engine notes each
//! deletion and rename it tells of here; the newest [`KEPT`] are kept.
//!
//! The table, `departures`, is created on first use rather than in the
//! schema (as `near_sketches` is), so an index of any schema version takes
//! it without a migration; an index without it has told of none.

use rusqlite::{OptionalExtension, params};

use super::{Index, IndexError};

/// Departures kept at most (the Events pane lists 1,000 events).
pub(crate) const KEPT: i64 = 1000;

const DDL: &str = "CREATE TABLE IF NOT EXISTS departures (
    seq   INTEGER PRIMARY KEY,
    at_ms INTEGER NOT NULL,
    path  TEXT    NOT NULL,
    dest  TEXT,
    id    INTEGER
)";

/// A page deleted (`to` None) or renamed, at `at_ms` (milliseconds since the
/// epoch, when it was seen).
#[derive(Clone, Debug, PartialEq)]
pub struct Departure {
    pub at_ms: i64,
    pub path: String,
    pub to: Option<String>,
    /// A renamed page's latest version.
    pub id: Option<u32>,
}

impl Index {
    /// Note `departures`, oldest first, dropping all but the newest `KEPT`.
    pub fn note_departures(&mut self, departures: &[Departure]) -> Result<(), IndexError> {
        if departures.is_empty() {
            return Ok(());
        }
        let tx = self.db.transaction()?;
        tx.execute(DDL, [])?;
        {
            let mut put = tx.prepare_cached(
                "INSERT INTO departures (at_ms, path, dest, id) VALUES (?1, ?2, ?3, ?4)",
            )?;
            for d in departures {
                put.execute(params![d.at_ms, d.path, d.to, d.id])?;
            }
        }
        tx.execute(
            "DELETE FROM departures WHERE seq <= (SELECT max(seq) FROM departures) - ?1",
            [KEPT],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// The newest `n` departures, newest first (none when the table was
    /// never made).
    pub fn departures(&self, n: usize) -> Result<Vec<Departure>, IndexError> {
        let c = self.db.conn();
        let made: Option<i64> = c
            .query_row(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'departures'",
                [],
                |r| r.get(0),
            )
            .optional()?;
        if made.is_none() {
            return Ok(Vec::new());
        }
        let mut st =
            c.prepare("SELECT at_ms, path, dest, id FROM departures ORDER BY seq DESC LIMIT ?1")?;
        let rows = st.query_map([n as i64], |r| {
            Ok(Departure {
                at_ms: r.get(0)?,
                path: r.get(1)?,
                to: r.get(2)?,
                id: r.get(3)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
