//! The estimation phase (Abdel-Hamid et al. 2009 §2.3, docs/algorithms.md §4): from the hits of a
//! document's selected units, guess an origin for every selected unit.

use std::fmt;
use std::str::FromStr;

use super::table::{Hit, KeyMap, Slot};
use lineage_core::fingerprint::top_byte;

/// How origins of units not found in the table are guessed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Estimation {
    /// No bridging: only found units get their stored origin.
    Nb,
    /// Expansion: a found unit's neighbours whose top byte matches the stored one.
    E,
    /// Bridging: units between two anchors on the same diagonal of one origin.
    B,
    /// Bridging with the neighbour checks (e), (f), plus expansion.
    Be,
}

impl Estimation {
    /// Whether table entries must carry the unit's offset in its origin.
    pub(crate) fn needs_offset(self) -> bool {
        matches!(self, Estimation::B | Estimation::Be)
    }

    /// Whether table entries must carry the neighbours' top bytes.
    pub(crate) fn needs_neighbours(self) -> bool {
        matches!(self, Estimation::E | Estimation::Be)
    }
}

/// Reusable scratch space of the estimation phase.
#[derive(Default)]
pub(crate) struct Estimator {
    /// Last anchor per (origin, diagonal), keyed by [`diagonal_key`].
    last: KeyMap<usize>,
}

/// (origin, diagonal) as one well-mixed u64 (multiplying by an odd constant is
/// a bijection), so the map need not hash it.
#[inline]
fn diagonal_key(origin: u32, diag: u8) -> u64 {
    ((u64::from(origin) << 8) | u64::from(diag)).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

impl Estimator {
    /// Labels for the units of document `doc`, whose keys are `keys` and whose
    /// table answers are `hits`. `labels[i]` is the guessed origin of unit i
    /// (`doc` itself when nothing points elsewhere).
    pub(crate) fn estimate(
        &mut self,
        est: Estimation,
        doc: u32,
        keys: &[u64],
        hits: &[Option<Hit>],
        bridge_limit: u32,
        labels: &mut Vec<u32>,
    ) {
        debug_assert_eq!(keys.len(), hits.len());
        labels.clear();
        let mut anchors = false;
        labels.extend(hits.iter().map(|h| match h {
            Some(h) => {
                anchors |= h.origin != doc;
                h.origin
            }
            None => doc,
        }));
        // Bridges and expansion start from anchors: without one, nothing to do.
        if !anchors {
            return;
        }
        match est {
            Estimation::Nb => {}
            Estimation::E => expand(doc, keys, hits, labels),
            Estimation::B => self.bridge(false, doc, keys, hits, bridge_limit, labels),
            Estimation::Be => {
                self.bridge(true, doc, keys, hits, bridge_limit, labels);
                expand(doc, keys, hits, labels);
            }
        }
    }

    /// Bridging (Abdel-Hamid et al. 2009 conditions (a)–(d), and (e), (f) when `checked`): two
    /// anchors i < j of one origin whose offsets differ as their positions do
    /// (the same diagonal, mod 256), with j − i < T and no consistent partner in
    /// between, label the unfound units between them.
    fn bridge(
        &mut self,
        checked: bool,
        doc: u32,
        keys: &[u64],
        hits: &[Option<Hit>],
        limit: u32,
        labels: &mut [u32],
    ) {
        self.last.clear();
        for (j, h) in hits.iter().enumerate() {
            let Some(hj) = anchor(doc, h) else { continue };
            let diag = (j as u8).wrapping_sub(hj.offset);
            let key = diagonal_key(hj.origin, diag);
            if let Some(&i) = self.last.get(&key) {
                let hi = hits[i].expect("an anchor");
                let consistent = !checked
                    || (top_byte(keys[i + 1]) == hi.next && top_byte(keys[j - 1]) == hj.prev);
                if j - i < limit as usize && consistent {
                    for m in i + 1..j {
                        if hits[m].is_none() {
                            labels[m] = hj.origin;
                        }
                    }
                }
            }
            self.last.insert(key, j);
        }
    }
}

/// A hit that points to another document.
#[inline]
fn anchor(doc: u32, h: &Option<Hit>) -> Option<Hit> {
    h.filter(|h| h.origin != doc)
}

/// Expansion: each anchor labels its unfound, still unlabelled neighbours whose
/// top byte matches what the origin stored; left to right, first label wins.
fn expand(doc: u32, keys: &[u64], hits: &[Option<Hit>], labels: &mut [u32]) {
    let n = hits.len();
    for i in 0..n {
        let Some(h) = anchor(doc, &hits[i]) else {
            continue;
        };
        if i + 1 < n
            && hits[i + 1].is_none()
            && labels[i + 1] == doc
            && top_byte(keys[i + 1]) == h.next
        {
            labels[i + 1] = h.origin;
        }
        if i > 0 && hits[i - 1].is_none() && labels[i - 1] == doc && top_byte(keys[i - 1]) == h.prev
        {
            labels[i - 1] = h.origin;
        }
    }
}

/// Units outside their bucket's sample (bottom-k) were neither found nor
/// stored: each still unlabelled one takes the label of its nearest sampled
/// unit (the left one on a tie), so a copied passage seen through a sparse
/// sample is labelled whole and fresh text stays fresh.
pub(crate) fn interpolate(doc: u32, slots: &[Slot], labels: &mut [u32]) {
    interpolate_where(doc, slots, labels, |_| true);
}

/// [`interpolate`], taking only the labels `take` accepts: a unit whose
/// nearest sampled unit's label is refused stays unlabelled.
pub(crate) fn interpolate_where(
    doc: u32,
    slots: &[Slot],
    labels: &mut [u32],
    take: impl Fn(u32) -> bool,
) {
    let n = labels.len();
    let mut left: Option<usize> = None;
    let mut i = 0;
    while i < n {
        if slots[i].sampled() {
            left = Some(i);
            i += 1;
            continue;
        }
        let end = (i..n).find(|&j| slots[j].sampled()).unwrap_or(n);
        let right = (end < n).then_some(end);
        for m in i..end {
            if labels[m] != doc {
                continue;
            }
            let nearest = match (left, right) {
                (Some(l), Some(r)) => Some(if m - l <= r - m { l } else { r }),
                (l, r) => l.or(r),
            };
            if let Some(j) = nearest.filter(|&j| take(labels[j])) {
                labels[m] = labels[j];
            }
        }
        i = end;
    }
}

/// The lucky-score increment of every unit after its document (docs/algorithms.md §4.3
/// rules (b)–(d); rule (a)'s +1 for found units included): `incs[i]` for unit i.
pub(crate) fn lucky_increments(
    doc: u32,
    hits: &[Option<Hit>],
    labels: &[u32],
    incs: &mut Vec<u32>,
) {
    let n = labels.len();
    incs.clear();
    incs.extend(hits.iter().map(|h| u32::from(h.is_some())));
    // (b) the ends of every copied block.
    let mut s = 0;
    while s < n {
        let mut e = s + 1;
        while e < n && labels[e] == labels[s] {
            e += 1;
        }
        if labels[s] != doc {
            let bonus = ((e - s).saturating_sub(2) as f64).sqrt() as u32;
            incs[s] += bonus;
            if e - 1 != s {
                incs[e - 1] += bonus;
            }
        }
        s = e;
    }
    // (c) the first and last unit of the document; (d) every 7th unit.
    for (i, inc) in incs.iter_mut().enumerate() {
        if i == 0 || i == n - 1 {
            *inc += 3;
        }
        if i % 7 == 0 {
            *inc += 1;
        }
    }
}

impl FromStr for Estimation {
    type Err = String;
    fn from_str(s: &str) -> Result<Estimation, String> {
        match s.to_ascii_lowercase().as_str() {
            "nb" => Ok(Estimation::Nb),
            "e" => Ok(Estimation::E),
            "b" => Ok(Estimation::B),
            "be" => Ok(Estimation::Be),
            _ => Err(format!(
                "unknown estimation '{s}' (expected nb, e, b or be)"
            )),
        }
    }
}

impl fmt::Display for Estimation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Estimation::Nb => "nb",
            Estimation::E => "e",
            Estimation::B => "b",
            Estimation::Be => "be",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: u32 = 9;

    /// A key whose top byte is `t`.
    fn k(t: u8) -> u64 {
        u64::from(t) << 54
    }

    fn hit(origin: u32, offset: u8, prev: u8, next: u8) -> Option<Hit> {
        Some(Hit {
            origin,
            offset,
            prev,
            next,
        })
    }

    fn run(est: Estimation, keys: &[u64], hits: &[Option<Hit>], limit: u32) -> Vec<u32> {
        let mut labels = vec![];
        Estimator::default().estimate(est, D, keys, hits, limit, &mut labels);
        labels
    }

    #[test]
    fn nb_labels_only_anchors() {
        let keys = [k(1), k(2), k(3)];
        let hits = [hit(4, 0, 0, 0), None, hit(D, 0, 0, 0)];
        assert_eq!(run(Estimation::Nb, &keys, &hits, 30), vec![4, D, D]);
    }

    #[test]
    fn expansion_checks_the_stored_bytes() {
        // Unit 1 matches anchor 0's next byte; unit 3 does not match anchor 4's prev.
        let keys = [k(10), k(11), k(12), k(13), k(14)];
        let hits = [hit(2, 0, 0, 11), None, None, None, hit(3, 9, 99, 0)];
        assert_eq!(run(Estimation::E, &keys, &hits, 30), vec![2, 2, D, D, 3]);
        let hits = [hit(2, 0, 0, 11), None, None, None, hit(3, 9, 13, 0)];
        assert_eq!(run(Estimation::E, &keys, &hits, 30), vec![2, 2, D, 3, 3]);
    }

    #[test]
    fn expansion_first_label_wins() {
        let keys = [k(1), k(2), k(3)];
        let hits = [hit(5, 0, 0, 2), None, hit(6, 0, 2, 0)];
        assert_eq!(run(Estimation::E, &keys, &hits, 30), vec![5, 5, 6]);
    }

    #[test]
    fn bridging_needs_the_same_diagonal_and_limit() {
        let keys: Vec<u64> = (0..8).map(|i| k(i as u8)).collect();
        let mut hits = vec![None; 8];
        hits[1] = hit(3, 41, 0, 0);
        hits[6] = hit(3, 46, 0, 0);
        let l = run(Estimation::B, &keys, &hits, 30);
        assert_eq!(l, vec![D, 3, 3, 3, 3, 3, 3, D]);
        // Offsets that do not differ as the positions do: no bridge.
        hits[6] = hit(3, 47, 0, 0);
        assert_eq!(run(Estimation::B, &keys, &hits, 30)[2..6], [D; 4]);
        // j - i = 5 is not below a limit of 5.
        hits[6] = hit(3, 46, 0, 0);
        assert_eq!(run(Estimation::B, &keys, &hits, 5)[2..6], [D; 4]);
        assert_eq!(run(Estimation::B, &keys, &hits, 6)[2..6], [3; 4]);
    }

    #[test]
    fn bridging_never_overwrites_a_hit() {
        let keys: Vec<u64> = (0..5).map(|i| k(i as u8)).collect();
        let hits = [
            hit(3, 0, 0, 0),
            None,
            hit(D, 7, 0, 0),
            None,
            hit(3, 4, 0, 0),
        ];
        assert_eq!(run(Estimation::B, &keys, &hits, 30), vec![3, 3, D, 3, 3]);
    }

    #[test]
    fn bridge_with_expansion_checks_e_and_f() {
        let keys: Vec<u64> = (0..6).map(|i| k(i as u8 + 20)).collect();
        let mut hits = vec![None; 6];
        // (e): the unit after i has top byte 21; (f): the unit before j has 24.
        hits[0] = hit(3, 10, 0, 21);
        hits[5] = hit(3, 15, 24, 0);
        assert_eq!(run(Estimation::Be, &keys, &hits, 30), vec![3; 6]);
        hits[5] = hit(3, 15, 99, 0);
        // No bridge; expansion still labels unit 1 from anchor 0.
        assert_eq!(
            run(Estimation::Be, &keys, &hits, 30),
            vec![3, 3, D, D, D, 3]
        );
    }

    #[test]
    fn bridges_chain_to_the_nearest_partner() {
        let keys: Vec<u64> = (0..7).map(|i| k(i as u8)).collect();
        let mut hits = vec![None; 7];
        hits[0] = hit(1, 0, 0, 0);
        hits[3] = hit(1, 3, 0, 0);
        hits[6] = hit(1, 6, 0, 0);
        assert_eq!(run(Estimation::B, &keys, &hits, 4), vec![1; 7]);
    }

    #[test]
    fn lucky_increments_follow_rules_b_to_d() {
        // Units 0..10; a block of origin 4 over units 2..=7 (size 6, bonus 2).
        let mut labels = vec![D; 10];
        let mut hits = vec![None; 10];
        for (i, l) in labels.iter_mut().enumerate().take(8).skip(2) {
            *l = 4;
            hits[i] = hit(4, 0, 0, 0);
        }
        let mut incs = vec![];
        lucky_increments(D, &hits, &labels, &mut incs);
        // (a) +1 found; (b) +2 at 2 and 7; (c) +3 at 0 and 9; (d) +1 at 0 and 7.
        assert_eq!(incs, vec![4, 0, 3, 1, 1, 1, 1, 4, 0, 3]);
    }

    /// Sampled (`s`) or not (`-`), as a bottom-k table answers.
    fn slots(pattern: &str) -> Vec<Slot> {
        pattern
            .chars()
            .map(|c| {
                if c == 's' {
                    Slot::UNKNOWN
                } else {
                    Slot::UNSAMPLED
                }
            })
            .collect()
    }

    #[test]
    fn unsampled_units_take_their_nearest_sampled_label() {
        // Sampled: 1 (origin 4), 5 (D: a miss), 8 (origin 6). Unit 3 is
        // nearer 1, unit 4 nearer 5; 6 is nearer 5, 7 nearer 8; 0 and 9
        // have a sampled unit on one side only.
        let mut labels = vec![D, 4, D, D, D, D, D, D, 6, D];
        interpolate(D, &slots("-s---s--s-"), &mut labels);
        assert_eq!(labels, [4, 4, 4, 4, D, D, D, 6, 6, 6]);
        // A tie goes left; a label set by bridging is kept.
        let mut labels = vec![4, D, 7, D, 6];
        interpolate(D, &slots("s---s"), &mut labels);
        assert_eq!(labels, [4, 4, 7, 6, 6]);
        // Nothing sampled: nothing to go by.
        let mut labels = vec![D, D];
        interpolate(D, &slots("--"), &mut labels);
        assert_eq!(labels, [D, D]);
    }
}
