//! Stein's fuzzy fingerprints (Potthast, docs/algorithms.md §7): a document's
//! distribution of index terms over prefix classes, compared with the
//! language's expected distribution and fuzzified into a few hash codes. Two
//! documents are candidates iff they share a code; `pocket` stores the codes in
//! Potthast's minimal-perfect-hash index.
//!
//! Construction, per document:
//! 1. index terms: its tokens less the language's stop words and tokens that
//!    start with a digit (the reference tables know no numbers);
//! 2. `pf_i`: the share of its index-term occurrences in prefix class i (a term
//!    belongs to the class of its longest listed prefix, else to the catch-all
//!    class `*`);
//! 3. `δ_i = (pf_i − e_i) / e_i` against the expected share `e_i` of the
//!    language (`assets/prefix-classes-LANG.tsv`, from wordfreq);
//! 4. each fuzzification scheme ρ (r = 3 intervals: below −ε, within ±ε, above
//!    +ε) gives the code `Σ_i ρ(δ_i)·3^i`, hashed to 64 bits together with the
//!    scheme's number and the language, so only codes of the same scheme and
//!    language can meet.
//!
//! The language is fixed or detected per document from stop words (`detect`).

pub mod pocket;

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

use rayon::prelude::*;

use super::{Pair, SimDoc};
use lineage_core::fingerprint::fmix64;
use lineage_core::fingerprint::polynomial::Polynomial;

/// A language with shipped reference tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lang {
    /// English.
    En,
    /// German.
    De,
}

impl Lang {
    #[cfg(test)]
    pub(crate) const ALL: [Lang; 2] = [Lang::En, Lang::De];

    /// The ISO 639-1 code.
    pub fn as_str(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::De => "de",
        }
    }

    /// The reference model: stop words and prefix classes.
    pub(crate) fn model(self) -> &'static Model {
        static EN: OnceLock<Model> = OnceLock::new();
        static DE: OnceLock<Model> = OnceLock::new();
        match self {
            Lang::En => EN.get_or_init(|| {
                Model::parse(
                    Lang::En,
                    include_str!("../../../../assets/stopwords-en.txt"),
                    include_str!("../../../../assets/prefix-classes-en.tsv"),
                )
                .expect("shipped English tables parse")
            }),
            Lang::De => DE.get_or_init(|| {
                Model::parse(
                    Lang::De,
                    include_str!("../../../../assets/stopwords-de.txt"),
                    include_str!("../../../../assets/prefix-classes-de.tsv"),
                )
                .expect("shipped German tables parse")
            }),
        }
    }
}

impl fmt::Display for Lang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a document's language is chosen: detected per document, or fixed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LangChoice {
    /// Detected per document from its stop words (`detect`).
    #[default]
    Auto,
    /// This language for every document.
    Fixed(Lang),
}

impl FromStr for LangChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<LangChoice, String> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Ok(LangChoice::Auto),
            "en" | "english" => Ok(LangChoice::Fixed(Lang::En)),
            "de" | "german" | "deutsch" => Ok(LangChoice::Fixed(Lang::De)),
            _ => Err(format!("unknown language '{s}' (expected auto, en or de)")),
        }
    }
}

impl fmt::Display for LangChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LangChoice::Auto => f.write_str("auto"),
            LangChoice::Fixed(l) => l.fmt(f),
        }
    }
}

/// A language's stop words and prefix classes with their expected shares.
#[derive(Debug)]
pub struct Model {
    /// The language the tables are of.
    pub lang: Lang,
    stop: HashSet<String>,
    /// Listed prefix → class index; the catch-all class is the last one.
    prefixes: HashMap<String, usize>,
    longest_prefix: usize,
    /// Class names: the listed prefixes' classes in order, the catch-all `*`
    /// last.
    pub classes: Vec<String>,
    /// The expected share `e_i` of each class, in the order of `classes`.
    pub expected: Vec<f64>,
}

/// Longest prefix a class may have, in characters.
const MAX_PREFIX: usize = 8;

/// More classes than this would overflow the `u128` code (3^80 < 2^127).
const MAX_CLASSES: usize = 80;

impl Model {
    /// Parse the shipped tables: stop words one per line, classes as
    /// `prefix<TAB>share` with the catch-all `*`; `#` starts a comment line.
    pub fn parse(lang: Lang, stopwords: &str, classes: &str) -> Result<Model, String> {
        let stop: HashSet<String> = content_lines(stopwords).map(String::from).collect();
        let mut names = Vec::new();
        let mut expected = Vec::new();
        let mut catch_all = None;
        for l in content_lines(classes) {
            let (p, e) = l
                .split_once('\t')
                .ok_or_else(|| format!("bad prefix-class line '{l}'"))?;
            let e: f64 = e
                .trim()
                .parse()
                .map_err(|_| format!("bad share in line '{l}'"))?;
            if !(e > 0.0 && e < 1.0) {
                return Err(format!("share out of (0, 1) in line '{l}'"));
            }
            if p == "*" {
                catch_all = Some(e);
            } else {
                names.push(p.to_owned());
                expected.push(e);
            }
        }
        let catch_all = catch_all.ok_or("no catch-all class '*'")?;
        names.push("*".to_owned());
        expected.push(catch_all);
        if names.len() > MAX_CLASSES {
            return Err(format!("{} classes, at most {MAX_CLASSES}", names.len()));
        }
        let total: f64 = expected.iter().sum();
        if (total - 1.0).abs() > 0.01 {
            return Err(format!("expected shares sum to {total}, not 1"));
        }
        let prefixes: HashMap<String, usize> = names[..names.len() - 1]
            .iter()
            .enumerate()
            .map(|(i, p)| (p.clone(), i))
            .collect();
        let longest_prefix = prefixes
            .keys()
            .map(|p| p.chars().count())
            .max()
            .unwrap_or(0);
        if longest_prefix > MAX_PREFIX {
            return Err(format!("a prefix is longer than {MAX_PREFIX} characters"));
        }
        Ok(Model {
            lang,
            stop,
            prefixes,
            longest_prefix,
            classes: names,
            expected,
        })
    }

    pub(crate) fn is_stop_word(&self, term: &str) -> bool {
        self.stop.contains(term)
    }

    /// The prefix class of `term`, or `None` if it is no index term (a stop
    /// word, or it starts with a digit).
    pub(crate) fn class_of(&self, term: &str) -> Option<usize> {
        let first = term.chars().next()?;
        if first.is_numeric() || self.stop.contains(term) {
            return None;
        }
        // The byte ends of the first `longest_prefix` characters, then the
        // longest listed prefix among them.
        let mut ends = [0usize; MAX_PREFIX];
        let mut n = 0;
        for (i, c) in term.char_indices().take(self.longest_prefix) {
            ends[n] = i + c.len_utf8();
            n += 1;
        }
        ends[..n]
            .iter()
            .rev()
            .find_map(|&end| self.prefixes.get(&term[..end]).copied())
            .or(Some(self.classes.len() - 1))
    }

    /// `pf`: the share of the index-term occurrences of `terms` in each class,
    /// and the number of index-term occurrences; `None` when there are none.
    pub(crate) fn prefix_frequencies<S: AsRef<str>>(
        &self,
        terms: &[S],
    ) -> Option<(Vec<f64>, usize)> {
        let mut counts = vec![0usize; self.classes.len()];
        let mut n = 0;
        for t in terms {
            if let Some(c) = self.class_of(t.as_ref()) {
                counts[c] += 1;
                n += 1;
            }
        }
        (n > 0).then(|| (counts.iter().map(|&c| c as f64 / n as f64).collect(), n))
    }

    /// One code per scheme (none without index terms).
    pub fn codes<S: AsRef<str>>(&self, terms: &[S], schemes: &[Scheme]) -> Vec<u64> {
        match self.deviations(terms) {
            Some(d) => schemes
                .iter()
                .enumerate()
                .map(|(i, s)| code(s.raw_code(&d), i, self.lang))
                .collect(),
            None => Vec::new(),
        }
    }

    /// `Δ`: the relative deviations `(pf_i − e_i)/e_i`; `None` without index terms.
    pub(crate) fn deviations<S: AsRef<str>>(&self, terms: &[S]) -> Option<Vec<f64>> {
        let (pf, _) = self.prefix_frequencies(terms)?;
        Some(
            pf.iter()
                .zip(&self.expected)
                .map(|(p, e)| (p - e) / e)
                .collect(),
        )
    }
}

/// The non-empty, non-comment lines of a table, trimmed.
fn content_lines(s: &str) -> impl Iterator<Item = &str> {
    s.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
}

/// The document's language by stop words: the language whose own stop words
/// (those not also in the other list, such as "in" or "so") occur more often;
/// English on a tie, including when neither occurs.
pub(crate) fn detect<S: AsRef<str>>(terms: &[S]) -> Lang {
    let (en, de) = (Lang::En.model(), Lang::De.model());
    let (mut n_en, mut n_de) = (0usize, 0usize);
    for t in terms {
        let t = t.as_ref();
        match (en.is_stop_word(t), de.is_stop_word(t)) {
            (true, false) => n_en += 1,
            (false, true) => n_de += 1,
            _ => {}
        }
    }
    if n_de > n_en { Lang::De } else { Lang::En }
}

/// A fuzzification scheme with r = 3 intervals: δ < −ε → 0, −ε ≤ δ ≤ ε → 1,
/// δ > ε → 2. Schemes differ in ε, which shifts the interval borders so that a
/// deviation near one scheme's border sits inside another's interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scheme {
    /// ε: how far δ may deviate from 0 and still fall in the middle interval.
    pub epsilon: f64,
}

impl Scheme {
    /// ρ(δ): the interval of a deviation.
    pub(crate) fn interval(self, delta: f64) -> u8 {
        if delta < -self.epsilon {
            0
        } else if delta > self.epsilon {
            2
        } else {
            1
        }
    }

    /// `Σ_i ρ(δ_i)·3^i` over the deviations (at most 80 classes).
    pub(crate) fn raw_code(self, deviations: &[f64]) -> u128 {
        assert!(deviations.len() <= MAX_CLASSES);
        deviations
            .iter()
            .rev()
            .fold(0u128, |c, &d| c * 3 + u128::from(self.interval(d)))
    }
}

/// The hash code of one scheme: the raw code mixed with the scheme's number and
/// the language (`fmix64` is a bijection, so distinct inputs of a half never
/// collide before the final xor).
pub(crate) fn code(raw: u128, scheme: usize, lang: Lang) -> u64 {
    let tag = (scheme as u64) << 8 | lang as u64;
    fmix64((raw as u64) ^ fmix64((raw >> 64) as u64 ^ fmix64(tag ^ 0x9e37_79b9_7f4a_7c15)))
}

/// Fuzzy-fingerprint settings.
#[derive(Clone, Debug, PartialEq)]
pub struct FuzzyParams {
    /// Which language's tables a document is compared with.
    pub lang: LangChoice,
    /// The fuzzification schemes, one code each.
    pub schemes: Vec<Scheme>,
}

impl Default for FuzzyParams {
    /// Two schemes, ε = 0.35 and 0.7: with the 26 shipped classes they found
    /// 98.8% of the rust-book pairs at J ≥ 0.9 where docs/algorithms.md §7's 0.25 and
    /// 0.5 found 91.7% (docs/fuzzy-and-sample.md).
    fn default() -> FuzzyParams {
        FuzzyParams {
            lang: LangChoice::Auto,
            schemes: vec![Scheme { epsilon: 0.35 }, Scheme { epsilon: 0.7 }],
        }
    }
}

/// A document's fuzzy fingerprint: its language and one code per scheme (no
/// codes when it has no index terms).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fingerprint {
    /// The language it was fingerprinted in (given or detected).
    pub lang: Lang,
    /// One hash code per scheme, in the order of the schemes.
    pub codes: Vec<u64>,
}

/// The fuzzy fingerprint of a token sequence.
pub fn fingerprint<S: AsRef<str>>(terms: &[S], p: &FuzzyParams) -> Fingerprint {
    let lang = match p.lang {
        LangChoice::Auto => detect(terms),
        LangChoice::Fixed(l) => l,
    };
    Fingerprint {
        lang,
        codes: lang.model().codes(terms, &p.schemes),
    }
}

/// Candidate pairs `(a, b)`, `a < b`, sorted: documents sharing at least one
/// code. No verification.
pub(crate) fn candidates(docs: &[SimDoc], p: &FuzzyParams) -> Vec<(u32, u32)> {
    let prints: Vec<Fingerprint> = docs.par_iter().map(|d| fingerprint(&d.terms, p)).collect();
    candidates_of(&prints)
}

/// Candidate pairs of precomputed fingerprints.
pub fn candidates_of(prints: &[Fingerprint]) -> Vec<(u32, u32)> {
    let mut buckets: HashMap<u64, Vec<u32>> = HashMap::new();
    for (id, f) in prints.iter().enumerate() {
        for &c in &f.codes {
            buckets.entry(c).or_default().push(id as u32);
        }
    }
    let mut out = Vec::new();
    for ids in buckets.values() {
        for (i, &a) in ids.iter().enumerate() {
            out.extend(ids[i + 1..].iter().map(|&b| (a, b)));
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Near-duplicate pairs by fuzzy fingerprints under `p`: candidates sharing
/// a code, kept iff the exact Jaccard resemblance of their shingle sets is
/// at least `min_similarity`.
pub fn pairs_with(docs: &[SimDoc], min_similarity: f64, p: &FuzzyParams) -> Vec<Pair> {
    verify(docs, &candidates(docs, p), min_similarity)
}

/// Keep the candidates whose exact Jaccard is at least `min_similarity`.
pub fn verify(docs: &[SimDoc], candidates: &[(u32, u32)], min_similarity: f64) -> Vec<Pair> {
    candidates
        .par_iter()
        .filter_map(|&(a, b)| {
            let s = jaccard(&docs[a as usize].shingles, &docs[b as usize].shingles);
            (s >= min_similarity).then_some(Pair {
                a,
                b,
                similarity: s,
            })
        })
        .collect()
}

pub use super::exact::jaccard;

/// The [`SimDoc`] of a prepared text, with its token texts, under `poly`.
pub fn sim_doc(text: &str, poly: &Polynomial, k: usize) -> SimDoc {
    let roller = lineage_core::fingerprint::ShingleRoller::new(poly, k);
    super::docs::sim_doc(text, poly, &roller, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lineage_core::fingerprint::polynomial::standard;

    /// Near-duplicate pairs by fuzzy fingerprints with the default settings.
    fn pairs(docs: &[SimDoc], min_similarity: f64) -> Vec<Pair> {
        pairs_with(docs, min_similarity, &FuzzyParams::default())
    }

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn shipped_tables_parse_and_sum_to_one() {
        for lang in Lang::ALL {
            let m = lang.model();
            assert!(m.classes.len() >= 26 && m.classes.len() <= MAX_CLASSES);
            assert_eq!(m.classes.last().map(String::as_str), Some("*"));
            let total: f64 = m.expected.iter().sum();
            assert!((total - 1.0).abs() < 1e-3, "{lang}: {total}");
            assert!(m.stop.len() >= 50);
        }
        assert!(Lang::En.model().is_stop_word("the"));
        assert!(Lang::De.model().is_stop_word("und"));
    }

    #[test]
    fn class_is_longest_listed_prefix() {
        let m = Model::parse(Lang::En, "the\n", "a\t0.3\nab\t0.2\nabc\t0.1\n*\t0.4\n").unwrap();
        assert_eq!(m.class_of("apple"), Some(0));
        assert_eq!(m.class_of("abbey"), Some(1));
        assert_eq!(m.class_of("abcissa"), Some(2));
        assert_eq!(m.class_of("ab"), Some(1));
        assert_eq!(m.class_of("zebra"), Some(3), "unlisted prefix: catch-all");
        assert_eq!(m.class_of("über"), Some(3));
        assert_eq!(m.class_of("the"), None, "stop word");
        assert_eq!(m.class_of("42nd"), None, "starts with a digit");
        assert_eq!(m.class_of(""), None);
    }

    #[test]
    fn tables_reject_nonsense() {
        assert!(
            Model::parse(Lang::En, "", "a\t0.5\n").is_err(),
            "no catch-all"
        );
        assert!(
            Model::parse(Lang::En, "", "a\t0.5\n*\t0.2\n").is_err(),
            "sum"
        );
        assert!(
            Model::parse(Lang::En, "", "a 0.5\n*\t0.5\n").is_err(),
            "no tab"
        );
        assert!(
            Model::parse(Lang::En, "", "a\t0\n*\t1\n").is_err(),
            "zero share"
        );
    }

    /// Known deviations give known codes: the code is Σ ρ(δ_i)·3^i.
    #[test]
    fn known_deviations_give_known_codes() {
        let s = Scheme { epsilon: 0.25 };
        // δ: −0.5 → 0, 0 → 1, +0.5 → 2, −0.25 → 1 (border inside), 0.26 → 2.
        let d = [-0.5, 0.0, 0.5, -0.25, 0.26];
        // Σ ρ(δ_i)·3^i = 0·1 + 1·3 + 2·9 + 1·27 + 2·81.
        assert_eq!(s.raw_code(&d), 3 + 18 + 27 + 162);
        assert_eq!(s.raw_code(&[]), 0);
        // 80 classes all "above" still fit: 3^80 − 1.
        let all_above = [1.0; 80];
        assert_eq!(s.raw_code(&all_above), 3u128.pow(80) - 1);
    }

    /// The two default schemes put the borders at ±0.25 and ±0.5: a deviation
    /// between them lands in different intervals, one far from both in the same.
    #[test]
    fn borders_shift_between_schemes() {
        let [s1, s2] = [Scheme { epsilon: 0.25 }, Scheme { epsilon: 0.5 }];
        for (d, a, b) in [
            (0.3, 2, 1),
            (-0.3, 0, 1),
            (0.6, 2, 2),
            (-0.6, 0, 0),
            (0.1, 1, 1),
            (0.5, 2, 1),
        ] {
            assert_eq!((s1.interval(d), s2.interval(d)), (a, b), "δ = {d}");
        }
        // A document near a ±0.25 border: a small shift flips scheme 1's code
        // but not scheme 2's, so the pair still shares a code.
        let x = [0.24, -0.1, 0.0];
        let y = [0.27, -0.1, 0.0];
        assert_ne!(s1.raw_code(&x), s1.raw_code(&y));
        assert_eq!(s2.raw_code(&x), s2.raw_code(&y));
    }

    #[test]
    fn codes_differ_by_scheme_and_language() {
        let raw = 12345u128;
        let c = code(raw, 0, Lang::En);
        assert_ne!(c, code(raw, 1, Lang::En));
        assert_ne!(c, code(raw, 0, Lang::De));
        assert_ne!(c, code(raw + 1, 0, Lang::En));
        assert_ne!(c, code(raw | 1 << 70, 0, Lang::En), "high half counts");
        assert_eq!(c, code(raw, 0, Lang::En));
    }

    #[test]
    fn deviations_follow_the_definition() {
        let m = Model::parse(Lang::En, "the\n", "a\t0.5\nb\t0.25\n*\t0.25\n").unwrap();
        // Index terms: apple, ant, bee, cat (the and 7up are not).
        let d = m
            .deviations(&words("the apple ant bee cat 7up the"))
            .unwrap();
        assert_eq!(d, vec![(0.5 - 0.5) / 0.5, (0.25 - 0.25) / 0.25, 0.0]);
        let d = m.deviations(&words("apple apple apple bee")).unwrap();
        assert_eq!(d, vec![(0.75 - 0.5) / 0.5, 0.0, -1.0]);
        assert_eq!(m.deviations(&words("the the 42")), None);
    }

    #[test]
    fn identical_documents_have_identical_fingerprints() {
        let text = "The borrow checker compares scopes to determine whether all \
                    borrows are valid. Rust ownership rules keep memory safe without \
                    a garbage collector, and references must always be valid.";
        let a = sim_doc(text, standard(), 8);
        let b = sim_doc(&text.to_uppercase(), standard(), 8);
        let p = FuzzyParams::default();
        let (fa, fb) = (fingerprint(&a.terms, &p), fingerprint(&b.terms, &p));
        assert_eq!(fa, fb);
        assert_eq!(fa.codes.len(), 2);
        assert_eq!(fa.lang, Lang::En);
        assert_ne!(fa.codes[0], fa.codes[1]);
        // Word order does not matter to pf; a different text does.
        let shuffled: Vec<String> = a.terms.iter().rev().cloned().collect();
        assert_eq!(fingerprint(&shuffled, &p), fa);
        let other = sim_doc(
            "Zebras quietly graze yonder; quixotic yaks zigzag.",
            standard(),
            8,
        );
        assert_ne!(fingerprint(&other.terms, &p).codes, fa.codes);
        // No index terms, no codes (rather than one code shared by all such docs).
        assert!(fingerprint(&words("the and of 42"), &p).codes.is_empty());
    }

    #[test]
    fn detects_english_and_german() {
        let en = words("this is the house that we have built and it is ours");
        let de = words("das ist das haus das wir gebaut haben und es ist unseres");
        assert_eq!(detect(&en), Lang::En);
        assert_eq!(detect(&de), Lang::De);
        assert_eq!(detect::<String>(&[]), Lang::En, "tie → English");
        // "in" and "so" are stop words of both: they decide nothing.
        assert_eq!(detect(&words("in so in so die")), Lang::De);
        let p = FuzzyParams::default();
        assert_eq!(fingerprint(&de, &p).lang, Lang::De);
        let fixed = FuzzyParams {
            lang: LangChoice::Fixed(Lang::En),
            ..p
        };
        assert_eq!(fingerprint(&de, &fixed).lang, Lang::En);
        assert_eq!("DE".parse(), Ok(LangChoice::Fixed(Lang::De)));
        assert_eq!("auto".parse(), Ok(LangChoice::Auto));
        assert!("fr".parse::<LangChoice>().is_err());
    }

    #[test]
    fn jaccard_of_sorted_sets() {
        assert_eq!(jaccard(&[1, 2, 3], &[2, 3, 4]), 0.5);
        assert_eq!(jaccard(&[1, 2], &[1, 2]), 1.0);
        assert_eq!(jaccard(&[1], &[2]), 0.0);
        assert_eq!(jaccard(&[], &[]), 0.0);
        assert_eq!(jaccard(&[], &[1]), 0.0);
    }

    #[test]
    fn pairs_are_candidates_verified_by_jaccard() {
        let base = "Ownership is a set of rules that govern how a Rust program manages \
                    memory. All programs have to manage the way they use a computer's \
                    memory while running. Some languages have garbage collection that \
                    regularly looks for no-longer-used memory as the program runs.";
        let docs = vec![
            sim_doc(base, standard(), 8),
            sim_doc(&format!("{base} Ownership rules apply."), standard(), 8),
            sim_doc(
                "Zebras quietly graze yonder; quixotic yaks zigzag over hills.",
                standard(),
                8,
            ),
            sim_doc(base, standard(), 8),
        ];
        let p = FuzzyParams::default();
        let cand = candidates(&docs, &p);
        assert!(cand.contains(&(0, 3)), "identical docs share every code");
        assert!(cand.iter().all(|&(a, b)| a < b));
        let got = pairs(&docs, 0.8);
        assert!(
            got.iter()
                .any(|q| (q.a, q.b) == (0, 3) && q.similarity == 1.0)
        );
        assert!(got.iter().all(|q| q.similarity >= 0.8));
        assert!(!got.iter().any(|q| q.a == 2 || q.b == 2));
        for q in &got {
            let j = jaccard(&docs[q.a as usize].shingles, &docs[q.b as usize].shingles);
            assert_eq!(q.similarity, j);
        }
    }
}
