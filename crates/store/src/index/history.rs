//! The history budget as a whole. `history_budget` bounds what the index
//! keeps of the past: the kept texts (index/texts.rs, checked at every
//! batch) and the token fingerprints of replaced and deleted versions
//! (checked here, at every checkpoint). Past it, the oldest such versions
//! are *forgotten*: their fingerprints are emptied and their texts dropped.
//! A forgotten version keeps its row and its recorded outcome (history and
//! `explain` still name it, and origins that point at it stand), but it can
//! no longer be an origin of what a replay, an exact outcome or a shadow
//! run computes from the cached fingerprints: to those it has no tokens. A live
//! document is never forgotten (its fingerprints are the content).
//!
//! ```sql
//! versions.text = -1      -- forgotten: its fingerprints row deleted (its
//!                         -- pages go back to SQLite for new rows), the
//!                         -- text dropped unless another version has it
//! ```

use std::collections::{HashMap, HashSet};

use rusqlite::{Connection, OptionalExtension, params};

/// `versions.text` of a forgotten version.
pub(crate) const FORGOTTEN: i64 = -1;

/// Bytes of the fingerprints of versions that are not live and not
/// forgotten: 8 a token, from the index `versions_past` (schema.rs) on
/// the versions that are not live, without a scan of every version row (a
/// checkpoint of a 100,000-version index: 40-470 ms for the scan, 0.1 ms
/// through the index); no fingerprint is read.
pub(crate) fn past_fingerprint_bytes(c: &Connection) -> rusqlite::Result<u64> {
    c.query_row(
        "SELECT coalesce(sum(tokens), 0) FROM versions
         WHERE status > 0 AND coalesce(text, 0) != ?1",
        [FORGOTTEN],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| 8 * n as u64)
}

/// Forget the oldest replaced and deleted versions until their
/// fingerprints and the kept texts (`texts_total`, kept up to date) come
/// to at most `budget`; once over, down to 15/16 of it, so a full history
/// is not walked again at every checkpoint. A text another version still
/// names is kept for it. Returns the versions forgotten.
pub(crate) fn forget(
    c: &Connection,
    budget: u64,
    texts_total: &mut u64,
) -> rusqlite::Result<Vec<u32>> {
    let mut total = *texts_total + past_fingerprint_bytes(c)?;
    let mut done = Vec::new();
    if total <= budget {
        return Ok(done);
    }
    let target = budget - budget / 16;
    let victims: Vec<(u32, u64, Option<i64>)> = {
        let mut st = c.prepare(
            "SELECT id, tokens, text FROM versions
             WHERE status > 0 AND coalesce(text, 0) != ?1 ORDER BY id",
        )?;
        let mut rows = st.query([FORGOTTEN])?;
        // The fingerprints alone say how far to go; texts freed on the way
        // only make it sooner.
        let (mut v, mut freed) = (Vec::new(), 0);
        while total - freed > target
            && let Some(r) = rows.next()?
        {
            let fps = 8 * r.get::<_, i64>(1)? as u64;
            freed += fps;
            v.push((r.get(0)?, fps, r.get(2)?));
        }
        v
    };
    // How many versions name each of the victims' texts: one walk of the
    // version rows (`versions.text` has no index), not one a victim.
    let theirs: HashSet<i64> = victims
        .iter()
        .filter_map(|v| v.2)
        .filter(|&t| t > 0)
        .collect();
    let mut names: HashMap<i64, u32> = HashMap::new();
    if !theirs.is_empty() {
        let mut st = c.prepare("SELECT text FROM versions WHERE text > 0")?;
        for t in st.query_map([], |r| r.get::<_, i64>(0))? {
            let t = t?;
            if theirs.contains(&t) {
                *names.entry(t).or_default() += 1;
            }
        }
    }
    for (id, fps, text) in victims {
        if total <= target {
            break;
        }
        c.prepare_cached("DELETE FROM fingerprints WHERE id = ?1")?
            .execute([id])?;
        c.prepare_cached("UPDATE versions SET text = ?2 WHERE id = ?1")?
            .execute(params![id, FORGOTTEN])?;
        total -= fps;
        if let Some(t) = text
            && let Some(n) = names.get_mut(&t)
        {
            *n -= 1;
            if *n == 0 {
                let stored: Option<i64> = c
                    .prepare_cached("SELECT stored FROM texts WHERE id = ?1")?
                    .query_row([t], |r| r.get(0))
                    .optional()?;
                let stored = stored.unwrap_or_default() as u64;
                c.prepare_cached("DELETE FROM texts WHERE id = ?1")?
                    .execute([t])?;
                *texts_total = texts_total.saturating_sub(stored);
                total = total.saturating_sub(stored);
            }
        }
        done.push(id);
    }
    Ok(done)
}
