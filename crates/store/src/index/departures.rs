//! Pages that went away or moved, and when: the history keeps every
//! version, so the Events pane rebuilds its versions after a restart, but
//! not that a page was deleted or renamed, nor when. The engine notes each
//! deletion and rename it tells of here; the newest [`KEPT`] are kept.
//!
//! The table, `departures`, is in the schema (schema.rs) since version 8.

use rusqlite::params;

use super::{Index, IndexError};

/// Departures kept at most (the Events pane lists 1,000 events).
pub(crate) const KEPT: i64 = 1000;

/// A page deleted (`to` None) or renamed, at `at_ms` (milliseconds since the
/// epoch, when it was seen).
#[derive(Clone, Debug, PartialEq)]
pub struct Departure {
    /// When it was seen, milliseconds since the Unix epoch.
    pub at_ms: i64,
    /// The page's path before it went.
    pub path: String,
    /// The new path of a renamed page; None for a deleted one.
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

    /// The newest `n` departures, newest first.
    pub fn departures(&self, n: usize) -> Result<Vec<Departure>, IndexError> {
        newest(self.db.conn(), n, false)
    }
}

/// The newest `n` departures of the database `c`, newest first (only the
/// renames where `renames`).
pub(crate) fn newest(
    c: &rusqlite::Connection,
    n: usize,
    renames: bool,
) -> Result<Vec<Departure>, IndexError> {
    let mut st = c.prepare(
        "SELECT at_ms, path, dest, id FROM departures WHERE dest IS NOT NULL OR NOT ?2
         ORDER BY seq DESC LIMIT ?1",
    )?;
    let rows = st.query_map(params![n as i64, renames], |r| {
        Ok(Departure {
            at_ms: r.get(0)?,
            path: r.get(1)?,
            to: r.get(2)?,
            id: r.get(3)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}
