//! Damaged cached fingerprints repaired in place: a version's
//! token fingerprints are a function of its file's bytes, so where those
//! bytes are kept (its text, index/texts.rs) or still on disk (a live page
//! whose file has its content hash), they are recomputed as the version was
//! first read; the table and the outcomes, made from the sound ones, stand.
//! A version with neither is forgotten as `history_budget` forgets
//! (index/history.rs): its recorded outcome stands, but it has no tokens
//! for what is computed from the fingerprints. Nothing else is dropped: no
//! rebuild from the files, which would lose every replaced and deleted
//! version.

use std::path::Path;

use rusqlite::{OptionalExtension, params};

use super::schema::{self, Db, Status};
use super::{IndexError, Observer, history, texts};
use lineage_core::fingerprint::polynomial::Polynomial;
use lineage_core::fingerprint::token_fps;
use lineage_core::text::{Format, prepare};
use lineage_source as source;

/// Versions whose fingerprints were forgotten, having nothing to be
/// recomputed from.
pub(crate) type Forgotten = Vec<u32>;

/// Repair the fingerprints of versions `ids` of the index of `root` (taken
/// under `poly`), in one transaction, and say what was done in one line.
pub(crate) fn fingerprints(
    db: &mut Db,
    dir: &Path,
    root: &Path,
    poly: &Polynomial,
    ids: &[u32],
    obs: &mut dyn Observer,
) -> Result<Forgotten, IndexError> {
    let tx = db.transaction()?;
    let mut forgotten = Vec::new();
    for &id in ids {
        match recomputed(&tx, root, poly, id)? {
            Some(fps) => schema::put_fingerprints(&tx, id, &fps)?,
            None => {
                tx.prepare_cached("DELETE FROM fingerprints WHERE id = ?1")?
                    .execute([id])?;
                tx.prepare_cached("UPDATE versions SET text = ?2 WHERE id = ?1")?
                    .execute(params![id, history::FORGOTTEN])?;
                forgotten.push(id);
            }
        }
    }
    tx.commit()?;
    let (n, gone) = (ids.len(), forgotten.len());
    let plural = |n: usize, one: &'static str, many: &'static str| if n == 1 { one } else { many };
    let mut line = format!(
        "index {}: the cached fingerprints of {n} {} were damaged: ",
        dir.display(),
        plural(n, "version", "versions")
    );
    if gone == 0 {
        line.push_str("recomputed from the kept texts");
    } else {
        line.push_str(&format!(
            "{} recomputed from the kept texts, {gone} forgotten (no text of {} kept; \
             the recorded outcomes stand)",
            n - gone,
            plural(gone, "it", "them")
        ));
    }
    obs.notice(&line);
    Ok(forgotten)
}

/// Version `id`'s fingerprints from its kept text, else from its file if
/// it is live and the file still has its content; checked against the
/// version's content hash and token count. None: nothing to recompute from.
fn recomputed(
    c: &rusqlite::Connection,
    root: &Path,
    poly: &Polynomial,
    id: u32,
) -> Result<Option<Vec<u64>>, IndexError> {
    let row: Option<(String, i64, i64, i64, u32)> = c
        .prepare_cached("SELECT path, hash, size, status, tokens FROM versions WHERE id = ?1")?
        .query_row([id], |r| {
            let name = schema::name_at(r, 0)?;
            Ok((name, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .optional()?;
    let Some((name, hash, size, status, tokens)) = row else {
        return Ok(None);
    };
    let bytes = match texts::get(c, id) {
        Ok(texts::Kept::Text(bytes)) => Some(bytes),
        _ if status == Status::Live as i64 => {
            source::read_file(&source::name::path(root, &name), size as u64).ok()
        }
        _ => None,
    };
    let fps = bytes
        .filter(|b| poly.fingerprint(b, 1) == hash as u64)
        .map(|b| token_fps(poly, &prepare(&b, Format::from_path(&name))).fps)
        .filter(|fps| fps.len() == tokens as usize);
    Ok(fps)
}
