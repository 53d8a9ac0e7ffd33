//! A document as the near-duplicate methods see it: sorted k-shingle keys
//! and, when a method needs them, the tokens' key texts; a folder read as
//! such documents ([`load_similar`], through `lineage_source::corpus`).

use std::path::Path;

use super::SimDoc;
use lineage_core::fingerprint::polynomial::Polynomial;
use lineage_core::fingerprint::{ShingleRoller, token_fp};
use lineage_core::text::for_each_token;
use lineage_source::corpus::load_with;
use lineage_source::{Filter, Order, RootError, Skipped, WalkOptions};

/// One prepared text as a `SimDoc`: tokens fingerprinted under `poly`,
/// shingles rolled by `roller` (of the same polynomial).
pub fn sim_doc(text: &str, poly: &Polynomial, roller: &ShingleRoller, terms: bool) -> SimDoc {
    let mut fps = Vec::with_capacity(text.len() / 6);
    let mut words = Vec::new();
    for_each_token(text, |_, key_text| {
        fps.push(token_fp(poly, key_text.as_bytes()));
        if terms {
            words.push(key_text.to_string());
        }
    });
    let mut shingles = Vec::new();
    roller.keys(&fps, &mut shingles);
    shingles.sort_unstable();
    shingles.dedup();
    shingles.shrink_to_fit();
    SimDoc {
        shingles,
        terms: words,
    }
}

/// Documents in processing order (index = document id) with their paths, and
/// the files left out.
#[derive(Debug, Default)]
pub struct Similar {
    /// Each document's path relative to the root, by id.
    pub paths: Vec<String>,
    /// Each document's k-shingle set, by id.
    pub docs: Vec<SimDoc>,
    /// The files left out, each with its reason.
    pub skipped: Vec<Skipped>,
}

/// Walk `root`, read every document (in parallel), order them (docs/formats.md §2)
/// and compute their k-shingle sets under `poly`; keep token texts only if
/// `terms`.
#[allow(clippy::too_many_arguments)] // the walk's five settings, the shingles' three
pub fn load_similar(
    root: &Path,
    filter: &Filter,
    opts: WalkOptions,
    max_file_size: u64,
    order: Order,
    poly: &Polynomial,
    k: usize,
    terms: bool,
) -> Result<Similar, RootError> {
    let roller = ShingleRoller::new(poly, k);
    let c = load_with(root, filter, opts, max_file_size, order, |f, text| {
        (f.path.clone(), sim_doc(text, poly, &roller, terms))
    })?;
    let (paths, docs) = c.docs.into_iter().unzip();
    Ok(Similar {
        paths,
        docs,
        skipped: c.skipped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use lineage_core::fingerprint::polynomial::standard;
    use lineage_core::fingerprint::{shingle_keys, token_fps};

    #[test]
    fn sim_doc_is_the_sorted_set_of_shingle_keys() {
        let text = "a b c d a b c d a b c d e";
        let roller = ShingleRoller::new(standard(), 3);
        let d = sim_doc(text, standard(), &roller, true);
        let mut expected = Vec::new();
        let p = standard();
        shingle_keys(p, &token_fps(p, text).fps, 3, &mut expected);
        assert_eq!(expected.len(), 11);
        expected.sort_unstable();
        expected.dedup();
        // abc bcd cda dab and cde.
        assert_eq!(expected.len(), 5);
        assert_eq!(d.shingles, expected);
        assert_eq!(d.terms.len(), 13);
        assert_eq!(d.terms[12], "e");
        assert!(sim_doc(text, standard(), &roller, false).terms.is_empty());
        assert!(
            sim_doc("a b", standard(), &roller, false)
                .shingles
                .is_empty()
        );
    }
}
