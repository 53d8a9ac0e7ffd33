//! A document as the near-duplicate methods see it: sorted k-shingle keys
//! and, when a method needs them, the tokens' key texts. Folders are read by
//! `corpus::load_similar`.

use super::SimDoc;
use lineage_core::fingerprint::polynomial::Polynomial;
use lineage_core::fingerprint::{ShingleRoller, token_fp};
use lineage_core::text::for_each_token;

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
