//! Every version's text, so that an origin can be shown after its file
//! changed or went (docs/formats.md, "Files lineage writes"). A version's
//! file bytes are stored zstd-compressed, once per content (XXH64 and
//! length: a page that goes back to an earlier text, or a copy of another
//! page, shares the stored copy), and referenced from `versions.text`. A
//! byte budget bounds the store: past it, the texts whose newest version is
//! oldest go first, those of live documents (which are still on disk) last.
//!
//! ```sql
//! texts    (id INTEGER PRIMARY KEY, checksum, size, stored, zstd BLOB)
//! versions.text: texts.id; NULL never stored, 0 dropped for the budget,
//!                -1 forgotten (index/history.rs)
//! ```

use rusqlite::{Connection, OptionalExtension, params};

use super::IndexError;
use lineage_core::fsio::xxh64::xxh64;

/// zstd's default level: about 3.5x on prose at a few hundred MB/s a core.
const LEVEL: i32 = 3;

/// The budget when none is configured (`history_budget`).
pub(crate) const DEFAULT_BUDGET: u64 = 512 << 20;

thread_local! {
    /// A compression context a thread keeps: making one for each text cost
    /// an eighth of compressing a page's.
    static COMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Compressor<'static>>> =
        const { std::cell::RefCell::new(None) };
}

/// A file's bytes, compressed and identified, ready to store.
#[derive(Debug)]
pub(crate) struct Packed {
    checksum: u64,
    size: u64,
    zstd: Vec<u8>,
}

impl Packed {
    pub(crate) fn new(bytes: &[u8]) -> Packed {
        Packed {
            checksum: xxh64(bytes),
            size: bytes.len() as u64,
            zstd: COMPRESSOR.with_borrow_mut(|c| {
                let c = c.get_or_insert_with(|| {
                    zstd::bulk::Compressor::new(LEVEL).expect("a zstd context in memory")
                });
                // Compressing into memory fails only if memory does.
                c.compress(bytes).expect("zstd compresses into memory")
            }),
        }
    }
}

/// What the store has of a version.
#[derive(Debug, PartialEq, Eq)]
pub enum Kept {
    /// Its file's bytes.
    Text(Vec<u8>),
    /// Stored once, dropped to keep the store within its budget.
    Dropped,
    /// Never stored (indexed by an older lineage, or with the budget at 0).
    Never,
}

/// Make `p` the text of version `id`, sharing a stored copy of the same
/// content. Returns the bytes the store grew by.
pub(crate) fn put(c: &Connection, id: u32, p: &Packed) -> rusqlite::Result<u64> {
    let existing: Option<i64> = c
        .prepare_cached("SELECT id FROM texts WHERE checksum = ?1 AND size = ?2")?
        .query_row(params![p.checksum as i64, p.size as i64], |r| r.get(0))
        .optional()?;
    let (text, grew) = match existing {
        Some(t) => (t, 0),
        None => {
            c.prepare_cached(
                "INSERT INTO texts (checksum, size, stored, zstd) VALUES (?1, ?2, ?3, ?4)",
            )?
            .execute(params![
                p.checksum as i64,
                p.size as i64,
                p.zstd.len() as i64,
                p.zstd
            ])?;
            (c.last_insert_rowid(), p.zstd.len() as u64)
        }
    };
    c.prepare_cached("UPDATE versions SET text = ?2 WHERE id = ?1")?
        .execute(params![id, text])?;
    Ok(grew)
}

/// The text of version `id`, checked against its identity.
pub(crate) fn get(c: &Connection, id: u32) -> Result<Kept, IndexError> {
    // versions.text, and the stored text it names: zstd, size, checksum.
    type Row = (Option<i64>, Option<Vec<u8>>, Option<i64>, Option<i64>);
    let row: Option<Row> = c
        .prepare_cached(
            "SELECT v.text, t.zstd, t.size, t.checksum
             FROM versions v LEFT JOIN texts t ON t.id = v.text WHERE v.id = ?1",
        )?
        .query_row([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .optional()?;
    let damaged = || IndexError::Damaged(format!("the stored text of version {id} is damaged"));
    match row {
        None => Err(IndexError::Missing(id)),
        Some((None, ..)) => Ok(Kept::Never),
        // 0: dropped for the budget; -1: forgotten with its fingerprints
        // (index/history.rs).
        Some((Some(t), ..)) if t <= 0 => Ok(Kept::Dropped),
        Some((Some(_), Some(zstd), Some(size), Some(checksum))) => {
            let bytes = zstd::bulk::decompress(&zstd, size as usize).map_err(|_| damaged())?;
            if bytes.len() as i64 != size || xxh64(&bytes) as i64 != checksum {
                return Err(damaged());
            }
            Ok(Kept::Text(bytes))
        }
        Some((Some(_), ..)) => Err(damaged()),
    }
}

/// Whether the store has the text of version `id`.
pub(crate) fn has(c: &Connection, id: u32) -> rusqlite::Result<bool> {
    c.prepare_cached("SELECT text > 0 FROM versions WHERE id = ?1")?
        .query_row([id], |r| r.get::<_, Option<bool>>(0))
        .optional()
        .map(|t| t.flatten().unwrap_or(false))
}

/// Bytes the store holds (compressed). Read at every open: the index
/// `texts_stored` covers it, so the blobs themselves are not scanned.
pub(crate) fn total(c: &Connection) -> rusqlite::Result<u64> {
    c.query_row("SELECT coalesce(sum(stored), 0) FROM texts", [], |r| {
        r.get::<_, i64>(0)
    })
    .map(|n| n as u64)
}

/// Drop texts until the store holds at most `budget` bytes: first those no
/// live version has, the one whose newest version is oldest first, then
/// those of live documents in the same order. Once over, it goes down to
/// 15/16 of the budget, so a full store is not sorted again at every batch.
/// `total` is the store's size before and after. Returns how many were
/// dropped.
pub(crate) fn enforce(c: &Connection, budget: u64, total: &mut u64) -> rusqlite::Result<u64> {
    if *total <= budget {
        return Ok(0);
    }
    let budget = budget - budget / 16;
    let victims: Vec<(i64, u64)> = {
        let mut st = c.prepare(
            "SELECT t.id, t.stored FROM texts t JOIN versions v ON v.text = t.id
             GROUP BY t.id ORDER BY max(v.status = 0), max(v.id)",
        )?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)))?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    let mut dropped = 0;
    for (id, stored) in victims {
        if *total <= budget {
            break;
        }
        c.prepare_cached("UPDATE versions SET text = 0 WHERE text = ?1")?
            .execute([id])?;
        c.prepare_cached("DELETE FROM texts WHERE id = ?1")?
            .execute([id])?;
        *total = total.saturating_sub(stored);
        dropped += 1;
    }
    Ok(dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db() -> Connection {
        let c = Connection::open_in_memory().unwrap();
        c.execute_batch(
            "CREATE TABLE versions (id INTEGER PRIMARY KEY, status INTEGER NOT NULL, text INTEGER);
             CREATE TABLE texts (id INTEGER PRIMARY KEY, checksum INTEGER NOT NULL,
                 size INTEGER NOT NULL, stored INTEGER NOT NULL, zstd BLOB NOT NULL);
             CREATE UNIQUE INDEX texts_content ON texts (checksum, size);
             CREATE INDEX texts_stored ON texts (stored);",
        )
        .unwrap();
        c
    }

    fn version(c: &Connection, id: u32, status: i64) {
        c.execute(
            "INSERT INTO versions (id, status) VALUES (?1, ?2)",
            params![id, status],
        )
        .unwrap();
    }

    #[test]
    fn a_text_round_trips_and_equal_contents_are_stored_once() {
        let c = db();
        let text = "a page of text that repeats itself. ".repeat(200);
        for id in 0..3 {
            version(&c, id, 1);
        }
        let grew = put(&c, 0, &Packed::new(text.as_bytes())).unwrap();
        assert!(grew > 0 && grew < text.len() as u64 / 10, "{grew}");
        assert_eq!(put(&c, 1, &Packed::new(text.as_bytes())).unwrap(), 0);
        assert_eq!(total(&c).unwrap(), grew);
        assert_eq!(get(&c, 1).unwrap(), Kept::Text(text.clone().into_bytes()));
        assert_eq!(get(&c, 2).unwrap(), Kept::Never);
        assert!(has(&c, 1).unwrap() && !has(&c, 2).unwrap() && !has(&c, 9).unwrap());
        assert!(matches!(get(&c, 9), Err(IndexError::Missing(9))));
        // An empty file is a text too.
        put(&c, 2, &Packed::new(b"")).unwrap();
        assert_eq!(get(&c, 2).unwrap(), Kept::Text(Vec::new()));
    }

    #[test]
    fn damage_is_told_not_shown() {
        let c = db();
        version(&c, 0, 0);
        put(&c, 0, &Packed::new(b"the original words")).unwrap();
        c.execute("UPDATE texts SET checksum = checksum + 1", [])
            .unwrap();
        assert!(matches!(get(&c, 0), Err(IndexError::Damaged(_))));
        c.execute("UPDATE texts SET zstd = x'00010203'", [])
            .unwrap();
        assert!(matches!(get(&c, 0), Err(IndexError::Damaged(_))));
    }

    #[test]
    fn the_budget_drops_old_replaced_texts_first_and_live_ones_last() {
        let c = db();
        // Versions 0..4: 0 and 2 replaced, 1 live, 3 deleted; each its own text.
        let texts: Vec<String> = (0..4)
            .map(|i| format!("text number {i} ").repeat(100 + i))
            .collect();
        let mut sum = 0;
        for (i, status) in [1, 0, 1, 2].into_iter().enumerate() {
            version(&c, i as u32, status);
            sum += put(&c, i as u32, &Packed::new(texts[i].as_bytes())).unwrap();
        }
        let mut t = total(&c).unwrap();
        assert_eq!(t, sum);
        // Room for all: nothing goes.
        assert_eq!(enforce(&c, t, &mut t).unwrap(), 0);
        // Room for about two: the replaced 0 and 2 go, deleted 3 and live 1 stay.
        let keep = t - 1 - (sum / 4);
        let dropped = enforce(&c, keep, &mut t).unwrap();
        assert!(t <= keep);
        assert_eq!(t, total(&c).unwrap());
        let state: Vec<bool> = (0..4)
            .map(|i| matches!(get(&c, i).unwrap(), Kept::Text(_)))
            .collect();
        assert_eq!(dropped, 2, "{state:?}");
        assert_eq!(state, [false, true, false, true]);
        assert_eq!(get(&c, 0).unwrap(), Kept::Dropped);
        // A budget of nothing: the live text goes last, but goes.
        enforce(&c, 0, &mut t).unwrap();
        assert_eq!((t, total(&c).unwrap()), (0, 0));
        assert_eq!(get(&c, 1).unwrap(), Kept::Dropped);
    }
}
