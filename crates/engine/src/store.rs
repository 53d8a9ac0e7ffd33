//! The index as the engine holds it: open, or closed after a write failed
//! (a full disk, a damaged file under it) until it can be opened again and
//! caught up. Which errors close it.

use crate::indexer::Indexer;
use lineage_store::index::IndexError;

// One per engine: boxing the index would save nothing.
#[allow(clippy::large_enum_variant)]
pub(super) enum Store {
    Open(Indexer),
    /// Closed, for the reason given; reopened at a tick, and open again
    /// once it has caught up with the folder.
    Closed {
        why: String,
    },
}

/// Whether `e` is a failed write (the database's error, a full disk, or a
/// transaction left half done): the index is closed, to be retried.
pub(super) fn closes(e: &IndexError) -> bool {
    matches!(
        e,
        IndexError::Poisoned
            | IndexError::Db(_)
            | IndexError::DiskFull { .. }
            | IndexError::Fault(_)
    )
}

/// What to tell of `e`: for a failed write, that the index is closed and
/// catches up when it can be written.
pub(super) fn told(e: &IndexError) -> String {
    if let IndexError::Fault(_) = e {
        format!("{e}: reopening it")
    } else if closes(e) {
        format!("the index cannot be written ({e}); changes are caught up when it can be")
    } else {
        e.to_string()
    }
}

impl Store {
    /// The open index, if it is open.
    #[cfg(test)]
    pub(super) fn open(&self) -> Option<&Indexer> {
        match self {
            Store::Open(ix) => Some(ix),
            Store::Closed { .. } => None,
        }
    }

    /// Why the index is closed, if it is.
    #[cfg(test)]
    pub(super) fn down(&self) -> Option<&str> {
        match self {
            Store::Open(_) => None,
            Store::Closed { why } => Some(why),
        }
    }

    /// An index error; what to tell a person. A failed write closes the
    /// index (told once: a closed index is not written to again until it
    /// has caught up); anything else is told and the index stays open.
    pub(super) fn failed(&mut self, e: IndexError) -> Option<String> {
        if !closes(&e) {
            return Some(e.to_string());
        }
        let was_open = matches!(self, Store::Open(_));
        let message = was_open.then(|| told(&e));
        *self = Store::Closed { why: e.to_string() };
        message
    }

    /// Close the index (its lock released) for `why`, to be reopened.
    pub(super) fn close(&mut self, why: String) {
        *self = Store::Closed { why };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lineage_core::fingerprint::polynomial::standard;
    use lineage_origin::Params;
    use lineage_store::index::Observer;

    struct Quiet;
    impl Observer for Quiet {
        fn notice(&mut self, _: &str) {}
    }

    #[test]
    fn a_failed_write_closes_the_index_and_is_told_once() {
        let tmp = lineage_testing::TempDir::new("store");
        let base = tmp.path();
        std::fs::create_dir_all(base.join("root")).unwrap();
        let params = Params {
            table_size: lineage_origin::TableSize::Bytes(64 << 10),
            ..Params::default()
        };
        let ix = Indexer::open(
            &base.join("root"),
            &base.join("ix"),
            params,
            standard(),
            &mut Quiet,
        )
        .unwrap();
        let mut s = Store::Open(ix);
        // Not a write: told, still open.
        assert_eq!(
            s.failed(IndexError::Missing(3)).as_deref(),
            Some("version 3 has no outcome in the index")
        );
        assert!(s.open().is_some() && s.down().is_none());
        let told = s.failed(IndexError::Poisoned).unwrap();
        assert!(told.starts_with("the index cannot be written"), "{told}");
        assert!(s.open().is_none());
        assert!(s.down().unwrap().contains("unusable"));
        // Closed already: nothing new to say.
        assert_eq!(s.failed(IndexError::Poisoned), None);
        s.close("reopening".into());
        assert_eq!(s.down(), Some("reopening"));
    }
}
