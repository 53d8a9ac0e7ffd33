//! The index as the engine holds it: open, or closed after a write failed
//! (a full disk, a damaged file under it) until it can be opened again and
//! caught up. Which errors close it, and that the closing is said once.

use lineage_store::index::{Index, IndexError};

pub(super) struct Store {
    /// `None` while closed.
    pub(super) ix: Option<Index>,
    /// Why it is closed (or was, until it is caught up).
    down: Option<String>,
}

impl Store {
    pub(super) fn new(ix: Index) -> Store {
        Store {
            ix: Some(ix),
            down: None,
        }
    }

    /// Why the index is closed, if it is.
    pub(super) fn down(&self) -> Option<&str> {
        self.down.as_deref()
    }

    /// An index error; what to tell a person, if anything. A failed write
    /// (the database's error, or a transaction left half done) closes the
    /// index, to be retried; said once until it is caught up. Anything else
    /// is told and the index stays open.
    pub(super) fn failed(&mut self, e: IndexError) -> Option<String> {
        if !matches!(e, IndexError::Poisoned | IndexError::Db(_)) {
            return Some(e.to_string());
        }
        self.ix = None;
        let first = self.down.is_none();
        self.down = Some(e.to_string());
        first.then(|| {
            format!("the index cannot be written ({e}); changes are caught up when it can be")
        })
    }

    /// Close the index to reopen it at the next tick, for `why`.
    pub(super) fn reopen(&mut self, why: String) {
        self.ix = None;
        self.down = Some(why);
    }

    /// The reopened index has caught up with the folder: it is no longer
    /// down. Whether it was.
    pub(super) fn caught_up(&mut self) -> bool {
        self.ix.is_some() && self.down.take().is_some()
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

    fn open(tag: &str) -> (Index, std::path::PathBuf) {
        let base = std::env::temp_dir().join(format!("lineage-store-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(base.join("root")).unwrap();
        let params = Params {
            table_size: lineage_origin::TableSize::Bytes(64 << 10),
            ..Params::default()
        };
        let ix = Index::open(
            &base.join("root"),
            &base.join("ix"),
            params,
            standard(),
            &mut Quiet,
        )
        .unwrap();
        (ix, base)
    }

    #[test]
    fn a_failed_write_closes_the_index_and_is_told_once() {
        let (ix, base) = open("closes");
        let mut s = Store::new(ix);
        // Not a write: told, still open.
        assert_eq!(
            s.failed(IndexError::Missing(3)).as_deref(),
            Some("version 3 has no outcome in the index")
        );
        assert!(s.ix.is_some() && s.down().is_none());
        let told = s.failed(IndexError::Poisoned).unwrap();
        assert!(told.starts_with("the index cannot be written"), "{told}");
        assert!(s.ix.is_none());
        assert!(s.down().unwrap().contains("unusable"));
        // Closed already: nothing new to say, the reason kept fresh.
        assert_eq!(s.failed(IndexError::Poisoned), None);
        assert!(!s.caught_up(), "not open yet");
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_reopened_index_that_caught_up_is_no_longer_down() {
        let (ix, base) = open("reopen");
        let mut s = Store::new(ix);
        s.failed(IndexError::Poisoned);
        drop(s.ix.take());
        let params = Params {
            table_size: lineage_origin::TableSize::Bytes(64 << 10),
            ..Params::default()
        };
        s.ix = Some(
            Index::open(
                &base.join("root"),
                &base.join("ix"),
                params,
                standard(),
                &mut Quiet,
            )
            .unwrap(),
        );
        assert!(s.caught_up());
        assert!(s.down().is_none());
        assert!(!s.caught_up(), "said once");
        std::fs::remove_dir_all(&base).unwrap();
    }
}
