//! One document through the origin pass: its keys and selected units, which
//! depend on the document alone (so they run in parallel), then the
//! sequential pass. The one place a document's token fingerprints become
//! what a selector reads: for the index and watcher (one version at a time),
//! `scan` and sweeps (a batch of documents at a time) and `Keyed` (a whole
//! history).

use super::align::OriginKeys;
use super::outcome::Outcome;
use super::select::{DocKeys, Unit};
use super::{OriginPass, Params};
use lineage_core::fingerprint::polynomial::Polynomial;
use lineage_core::fingerprint::{ShingleRoller, token_hashes};

/// A document's token hashes and k-shingle keys, from its token fingerprints.
pub(crate) fn keys(roller: &ShingleRoller, fps: &[u64]) -> (Vec<u64>, Vec<u64>) {
    let (mut hashes, mut keys) = (Vec::new(), Vec::new());
    token_hashes(fps, &mut hashes);
    roller.keys(fps, &mut keys);
    (hashes, keys)
}

/// Computes a version's selected units under fixed parameters.
pub struct Preparer {
    params: Params,
    roller: ShingleRoller,
}

/// A version ready for the pass.
pub struct Prepared {
    /// The version's tokens.
    pub tokens: u32,
    /// Its k-shingles (none when shorter than k tokens).
    pub shingles: u32,
    /// Its selected units, in document order.
    pub units: Vec<Unit>,
}

impl Preparer {
    /// The preparer of `params` under `poly`.
    pub fn new(params: Params, poly: &Polynomial) -> Preparer {
        Preparer {
            params,
            roller: ShingleRoller::new(poly, params.k),
        }
    }

    /// The k-shingle roller of these parameters.
    pub fn roller(&self) -> &ShingleRoller {
        &self.roller
    }

    /// Shingle keys and selected units of a version's token fingerprints.
    pub fn prepare(&self, fps: &[u64]) -> Prepared {
        self.prepare_keeping_keys(fps).0
    }

    /// [`Preparer::prepare`], and the version's k-shingle keys in document
    /// order, which it rolls anyway (what a near-duplicate sketch is made of).
    pub fn prepare_keeping_keys(&self, fps: &[u64]) -> (Prepared, Vec<u64>) {
        let (hashes, keys) = keys(&self.roller, fps);
        let mut units = Vec::new();
        let doc = DocKeys {
            token_fps: fps,
            token_hashes: &hashes,
            shingle_keys: &keys,
            k: self.params.k,
            mix: self.roller.mix(),
        };
        self.params.selector.select(&doc, &mut units);
        let prepared = Prepared {
            tokens: fps.len() as u32,
            shingles: keys.len() as u32,
            units,
        };
        (prepared, keys)
    }
}

/// Process version `id` (later than every version before it); `origins`
/// gives earlier versions' keys to align with.
pub fn run(pass: &mut OriginPass, id: u32, p: &Prepared, origins: &mut dyn OriginKeys) -> Outcome {
    let labels = pass.process(id, &p.units, origins);
    Outcome::new(
        id,
        p.tokens,
        p.shingles,
        p.units.iter().map(|u| (u.start, u.end)),
        labels,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::Keyed;
    use lineage_core::fingerprint::polynomial::standard;

    #[test]
    fn equals_a_replay_over_the_same_documents() {
        let params = Params {
            table_size: crate::TableSize::Bytes(1 << 16),
            ..Params::default()
        };
        let docs: Vec<Vec<u64>> = (0..20u64)
            .map(|d| {
                (0..200u64)
                    .map(|t| (t * 7 + d / 3) % 97 + (d % 4) * 1000)
                    .collect()
            })
            .collect();
        let keyed = Keyed::new(standard(), docs.clone(), params.k);
        let units = keyed.select(params.selector);
        let mut want = Vec::new();
        keyed.replay(&units, params, |o| want.push(o)).unwrap();
        let prep = Preparer::new(params, standard());
        let mut pass = OriginPass::new(params).unwrap();
        let origins: Vec<Vec<u64>> = docs.iter().map(|d| keys(prep.roller(), d).1).collect();
        let got: Vec<Outcome> = docs
            .iter()
            .enumerate()
            .map(|(i, d)| run(&mut pass, i as u32, &prep.prepare(d), &mut &origins[..]))
            .collect();
        assert_eq!(got, want);
    }
}
