//! What a version changed since its predecessor, token by token
//! (docs/algorithms.md §12): the tokens kept, those
//! removed and those inserted (Myers' diff: the fewest tokens removed and
//! inserted), and the runs moved within the page, a removed run of at least
//! [`MOVE_MIN`] tokens that comes back inside an inserted one.

use std::collections::{HashMap, HashSet};
use std::hash::Hash;
use std::ops::Range;
use std::time::{Duration, Instant};

/// Shortest run of tokens taken for a move: the shingle length's default,
/// so that a move is a passage, not a common phrase ("of the", "in order to")
/// that a removal and an insertion happen to share.
pub const MOVE_MIN: u32 = 8;

/// How long the diff may search for the shortest edit: past it (two long
/// pages with little in common), it finishes with a longer but still exact
/// one (every token kept is the same on both sides).
const DEADLINE: Duration = Duration::from_secs(5);

/// Candidates tried for each window of an inserted run: a page that repeats
/// one phrase many times costs no more than this.
const CANDIDATES: usize = 64;

/// One step of the diff, in order along both sides.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Edit {
    /// Tokens the same on both sides.
    Kept {
        /// In the predecessor.
        old: Range<u32>,
        /// In the page.
        new: Range<u32>,
    },
    /// The predecessor's tokens that are not in the page here.
    Removed {
        /// In the predecessor.
        old: Range<u32>,
    },
    /// The page's tokens that are not in the predecessor here.
    Inserted {
        /// In the page.
        new: Range<u32>,
    },
}

/// A run of removed tokens that is back, the same tokens, in an inserted run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Move {
    /// Where it was in the predecessor (inside a [`Edit::Removed`]).
    pub old: Range<u32>,
    /// Where it is in the page (inside an [`Edit::Inserted`]).
    pub new: Range<u32>,
}

/// The diff of a predecessor's tokens and a page's.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Changes {
    /// Kept, removed and inserted runs in order: the kept and removed runs
    /// are the predecessor's tokens, the kept and inserted ones the page's.
    pub edits: Vec<Edit>,
    /// The moved runs, in the page's order.
    pub moves: Vec<Move>,
}

/// The changes from `old` (the predecessor's token keys) to `new` (the page's).
pub fn changes<T: Hash + Eq + Ord>(old: &[T], new: &[T]) -> Changes {
    // A token the other side lacks is in no common subsequence: Myers runs
    // on the rest (an LCS of those is one of the whole), so its O(ND) pays
    // for the differences in what both sides share, not for a section
    // written anew (GNU diff discards such lines too).
    let (in_old, in_new): (HashSet<&T>, HashSet<&T>) = (old.iter().collect(), new.iter().collect());
    let shared = |side: &[T], other: &HashSet<&T>| -> Vec<u32> {
        (0..side.len() as u32)
            .filter(|&i| other.contains(&side[i as usize]))
            .collect()
    };
    let (oi, ni) = (shared(old, &in_new), shared(new, &in_old));
    let ops = similar::capture_diff_slices_deadline(
        similar::Algorithm::Myers,
        &pick(old, &oi),
        &pick(new, &ni),
        Some(Instant::now() + DEADLINE),
    );
    let mut edits: Vec<Edit> = Vec::new();
    // Between two kept tokens, the predecessor's are removed and the page's
    // inserted; kept tokens next to each other on both sides are one run.
    let gap = |edits: &mut Vec<Edit>, old: Range<u32>, new: Range<u32>| {
        if !old.is_empty() {
            edits.push(Edit::Removed { old });
        }
        if !new.is_empty() {
            edits.push(Edit::Inserted { new });
        }
    };
    let (mut o, mut n) = (0u32, 0u32);
    for op in ops {
        let similar::DiffOp::Equal {
            old_index,
            new_index,
            len,
        } = op
        else {
            continue;
        };
        for j in 0..len {
            let (x, y) = (oi[old_index + j], ni[new_index + j]);
            if (x, y) != (o, n) || !matches!(edits.last(), Some(Edit::Kept { .. })) {
                gap(&mut edits, o..x, n..y);
                edits.push(Edit::Kept {
                    old: x..x + 1,
                    new: y..y + 1,
                });
            } else if let Some(Edit::Kept { old, new }) = edits.last_mut() {
                old.end += 1;
                new.end += 1;
            }
            (o, n) = (x + 1, y + 1);
        }
    }
    gap(&mut edits, o..old.len() as u32, n..new.len() as u32);
    let moves = moves(old, new, &edits);
    Changes { edits, moves }
}

/// The diff's token keys of a text: the tokens shingles are made of
/// (lineage_core::text), each by its key's hash.
pub fn token_keys(text: &str) -> Vec<u64> {
    let mut out = Vec::new();
    lineage_core::text::for_each_token(text, |_, key| {
        out.push(lineage_core::fsio::xxh64::xxh64(key.as_bytes()));
    });
    out
}

/// The tokens of `side` at `at`.
fn pick<'a, T>(side: &'a [T], at: &[u32]) -> Vec<&'a T> {
    at.iter().map(|&i| &side[i as usize]).collect()
}

/// A change inside an aligned run: the predecessor's tokens `old` (empty
/// where only an insertion was made) and what stands there now, `new`
/// (empty where they were removed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replaced {
    /// In the predecessor.
    pub old: Range<u32>,
    /// In the page.
    pub new: Range<u32>,
}

/// Where a run of the predecessor's tokens stands in the page.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Aligned {
    /// The page's tokens from the first to the last the run became (empty,
    /// where the run stood, when all of it was removed).
    pub new: Range<u32>,
    /// The run's tokens kept.
    pub kept: u32,
    /// The changes inside the run, in order.
    pub changes: Vec<Replaced>,
}

/// Where the predecessor's tokens `r` stand in the page by the edits of
/// `c`. A removal inside `r` takes the insertion that follows it (a
/// replacement); an insertion counts only strictly inside `r`, as one at
/// either end is not part of the run.
pub fn align(c: &Changes, r: Range<u32>) -> Aligned {
    let mut out = Aligned::default();
    if r.is_empty() {
        return out;
    }
    let (mut at_old, mut at_new) = (0u32, 0u32);
    let mut open: Option<Replaced> = None;
    let mut bounds: Option<Range<u32>> = None;
    let reach = |b: &mut Option<Range<u32>>, x: Range<u32>| {
        *b = Some(match b.take() {
            Some(b) => b.start.min(x.start)..b.end.max(x.end),
            None => x,
        });
    };
    let overlap = |x: &Range<u32>| x.start.max(r.start)..x.end.min(r.end);
    for e in &c.edits {
        match e {
            Edit::Kept { old, new } => {
                out.changes.extend(open.take());
                let o = overlap(old);
                if !o.is_empty() {
                    out.kept += o.end - o.start;
                    let s = new.start + (o.start - old.start);
                    reach(&mut bounds, s..s + (o.end - o.start));
                }
                (at_old, at_new) = (old.end, new.end);
            }
            Edit::Removed { old } => {
                let o = overlap(old);
                if o.is_empty() {
                    out.changes.extend(open.take());
                } else {
                    let x = open.get_or_insert(Replaced {
                        old: o.start..o.start,
                        new: at_new..at_new,
                    });
                    x.old.end = o.end;
                    reach(&mut bounds, at_new..at_new);
                }
                at_old = old.end;
            }
            Edit::Inserted { new } => {
                if let Some(x) = open.as_mut() {
                    x.new.end = new.end;
                    reach(&mut bounds, new.clone());
                } else if r.start < at_old && at_old < r.end {
                    open = Some(Replaced {
                        old: at_old..at_old,
                        new: new.clone(),
                    });
                    reach(&mut bounds, new.clone());
                }
                at_new = new.end;
            }
        }
    }
    out.changes.extend(open);
    out.new = bounds.unwrap_or(at_new..at_new);
    out
}

/// One passage of the diff.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Hunk {
    /// The same on both sides.
    Kept {
        /// In the predecessor.
        old: Range<u32>,
        /// In the page.
        new: Range<u32>,
    },
    /// The predecessor's, not in the page.
    Removed {
        /// In the predecessor.
        old: Range<u32>,
    },
    /// The page's, not in the predecessor.
    New {
        /// In the page.
        new: Range<u32>,
    },
    /// Here at `new`, from `old` in the predecessor.
    Moved {
        /// In the predecessor.
        old: Range<u32>,
        /// In the page.
        new: Range<u32>,
    },
}

/// The edits as passages: removed and inserted runs split where a move
/// took part of them, each move once, where it now stands.
pub fn hunks(c: &Changes) -> Vec<Hunk> {
    let mut out = Vec::new();
    for e in &c.edits {
        match e {
            Edit::Kept { old, new } => out.push(Hunk::Kept {
                old: old.clone(),
                new: new.clone(),
            }),
            Edit::Removed { old } => {
                let away =
                    (c.moves.iter()).filter(|m| old.start <= m.old.start && m.old.end <= old.end);
                let mut cuts: Vec<Range<u32>> = away.map(|m| m.old.clone()).collect();
                cuts.sort_by_key(|r| r.start);
                for r in outside(old, &cuts) {
                    out.push(Hunk::Removed { old: r });
                }
            }
            Edit::Inserted { new } => {
                let mut at = new.start;
                for m in
                    (c.moves.iter()).filter(|m| new.start <= m.new.start && m.new.end <= new.end)
                {
                    if m.new.start > at {
                        out.push(Hunk::New {
                            new: at..m.new.start,
                        });
                    }
                    out.push(Hunk::Moved {
                        old: m.old.clone(),
                        new: m.new.clone(),
                    });
                    at = m.new.end;
                }
                if new.end > at {
                    out.push(Hunk::New { new: at..new.end });
                }
            }
        }
    }
    out
}

/// Tokens kept, removed, new and moved of the changes (kept + removed +
/// moved: the predecessor's; kept + new + moved: the page's).
pub fn counts(c: &Changes) -> [u32; 4] {
    let mut out = [0; 4];
    for h in hunks(c) {
        let (i, r) = match &h {
            Hunk::Kept { new, .. } => (0, new),
            Hunk::Removed { old } => (1, old),
            Hunk::New { new } => (2, new),
            Hunk::Moved { new, .. } => (3, new),
        };
        out[i] += r.len() as u32;
    }
    out
}

/// The parts of `r` outside `cuts` (sorted, inside `r`, disjoint).
fn outside(r: &Range<u32>, cuts: &[Range<u32>]) -> Vec<Range<u32>> {
    let mut out = Vec::new();
    let mut at = r.start;
    for c in cuts {
        if c.start > at {
            out.push(at..c.start);
        }
        at = c.end;
    }
    if r.end > at {
        out.push(at..r.end);
    }
    out
}

/// The moved runs of `edits`: along each inserted run, the longest run of
/// removed tokens (not yet taken by a move) starting at the same
/// [`MOVE_MIN`] tokens, taken greedily from the left.
fn moves<T: Hash + Eq>(old: &[T], new: &[T], edits: &[Edit]) -> Vec<Move> {
    let min = MOVE_MIN as usize;
    // Each removed token's run end (0: kept), and the runs' windows.
    let mut run_end = vec![0usize; old.len()];
    let mut windows: HashMap<&[T], Vec<usize>> = HashMap::new();
    for e in edits {
        if let Edit::Removed { old: o } = e {
            let (s, t) = (o.start as usize, o.end as usize);
            run_end[s..t].fill(t);
            for i in s..(t + 1).saturating_sub(min) {
                windows.entry(&old[i..i + min]).or_default().push(i);
            }
        }
    }
    let mut taken = vec![false; old.len()];
    let mut out = Vec::new();
    for e in edits {
        let Edit::Inserted { new: n } = e else {
            continue;
        };
        let (mut j, end) = (n.start as usize, n.end as usize);
        while j + min <= end {
            let mut best: Option<(usize, usize)> = None;
            for &i in windows
                .get(&new[j..j + min])
                .into_iter()
                .flatten()
                .take(CANDIDATES)
            {
                let mut len = 0;
                while i + len < run_end[i]
                    && j + len < end
                    && !taken[i + len]
                    && old[i + len] == new[j + len]
                {
                    len += 1;
                }
                if len >= min && best.is_none_or(|(_, l)| len > l) {
                    best = Some((i, len));
                }
            }
            match best {
                Some((i, len)) => {
                    taken[i..i + len].fill(true);
                    out.push(Move {
                        old: i as u32..(i + len) as u32,
                        new: j as u32..(j + len) as u32,
                    });
                    j += len;
                }
                None => j += 1,
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn words(s: &str) -> Vec<&str> {
        s.split_whitespace().collect()
    }

    /// The tokens of `side` that `edits` name, in order: kept and removed
    /// for the predecessor (`old`), kept and inserted for the page.
    fn side<'a>(edits: &[Edit], old: &[&'a str], new: &[&'a str], of_old: bool) -> Vec<&'a str> {
        let mut out = Vec::new();
        let mut reach = 0;
        for e in edits {
            let r = match (e, of_old) {
                (Edit::Kept { old: r, .. } | Edit::Removed { old: r }, true) => r,
                (Edit::Kept { new: r, .. } | Edit::Inserted { new: r }, false) => r,
                _ => continue,
            };
            assert_eq!(r.start, reach, "runs follow one another: {edits:?}");
            reach = r.end;
            let t = if of_old { old } else { new };
            out.extend(&t[r.start as usize..r.end as usize]);
        }
        out
    }

    #[test]
    fn a_moved_paragraph_is_a_move_and_an_edit_is_not() {
        let old = words("a b c d e f g h i j k l m n o p q r s t");
        // a..h moved to the end, "m" changed to "M".
        let new = words("i j k l M n o p q r s t a b c d e f g h");
        let c = changes(&old, &new);
        assert_eq!(
            c.moves,
            [Move {
                old: 0..8,
                new: 12..20
            }]
        );
        assert!(c.edits.contains(&Edit::Removed { old: 12..13 }));
        assert!(c.edits.contains(&Edit::Inserted { new: 4..5 }));
    }

    #[test]
    fn a_run_shorter_than_a_move_is_removed_and_inserted() {
        let old = words("x1 x2 x3 a b c d e f g");
        let new = words("a b c d e f g x1 x2 x3");
        let c = changes(&old, &new);
        assert!(c.moves.is_empty(), "{c:?}");
        assert_eq!(side(&c.edits, &old, &new, true), old);
    }

    #[test]
    fn a_replacement_inside_a_run_is_one_change_and_the_ends_are_not_taken() {
        let old = words("a b c d e f g h");
        let new = words("x a b C d e f g h y");
        let c = changes(&old, &new);
        let a = align(&c, 1..7);
        assert_eq!(a.new, 2..8, "{a:?}");
        assert_eq!(a.kept, 5);
        assert_eq!(
            a.changes,
            [Replaced {
                old: 2..3,
                new: 3..4
            }]
        );
        // All of it removed: an empty place where it stood.
        let c = changes(&words("a b c d"), &words("a d"));
        assert_eq!(align(&c, 1..3).new, 1..1);
    }

    #[test]
    fn a_move_splits_its_removed_and_inserted_runs() {
        let c = Changes {
            edits: vec![
                Edit::Removed { old: 0..20 },
                Edit::Kept {
                    old: 20..30,
                    new: 0..10,
                },
                Edit::Inserted { new: 10..25 },
            ],
            moves: vec![Move {
                old: 5..13,
                new: 12..20,
            }],
        };
        assert_eq!(
            hunks(&c),
            [
                Hunk::Removed { old: 0..5 },
                Hunk::Removed { old: 13..20 },
                Hunk::Kept {
                    old: 20..30,
                    new: 0..10
                },
                Hunk::New { new: 10..12 },
                Hunk::Moved {
                    old: 5..13,
                    new: 12..20
                },
                Hunk::New { new: 20..25 },
            ]
        );
    }

    proptest! {
        /// A run's tokens with each change's old tokens replaced by its new
        /// ones spell the page's tokens where the run now stands; the
        /// tokens kept and changed add up to the run.
        #[test]
        fn an_aligned_run_spells_where_it_stands(
            old in proptest::collection::vec(0u8..5, 0..60),
            new in proptest::collection::vec(0u8..5, 0..60),
            a in 0u32..60,
            len in 0u32..60,
        ) {
            let c = changes(&old, &new);
            let r = a.min(old.len() as u32)..(a + len).min(old.len() as u32);
            let x = align(&c, r.clone());
            let changed: u32 = x.changes.iter().map(|c| c.old.end - c.old.start).sum();
            prop_assert_eq!(x.kept + changed, r.end - r.start);
            let mut spelt: Vec<u8> = Vec::new();
            let mut at = r.start;
            for ch in &x.changes {
                prop_assert!(ch.old.start >= at && ch.old.end <= r.end);
                spelt.extend(&old[at as usize..ch.old.start as usize]);
                spelt.extend(&new[ch.new.start as usize..ch.new.end as usize]);
                at = ch.old.end;
            }
            spelt.extend(&old[at as usize..r.end as usize]);
            if !r.is_empty() {
                prop_assert_eq!(&spelt[..], &new[x.new.start as usize..x.new.end as usize]);
            }
        }

        /// Removed and kept are the predecessor's tokens, inserted and kept
        /// the page's, in order; kept runs are equal on both sides; a move's
        /// tokens are equal, inside a removed and an inserted run.
        #[test]
        fn the_edits_spell_both_sides_and_moves_are_real(
            old in proptest::collection::vec(0u8..6, 0..80),
            new in proptest::collection::vec(0u8..6, 0..80),
            block in proptest::collection::vec(10u8..40, 0..20),
            at in 0usize..80,
        ) {
            // A block of rarer tokens moved: at the start of old, at `at` in new.
            let old: Vec<u8> = block.iter().chain(&old).copied().collect();
            let mut new = new;
            new.splice(at.min(new.len())..at.min(new.len()), block.iter().copied());
            let c = changes(&old, &new);
            let name = |v: &[u8]| v.iter().map(|t| t.to_string()).collect::<Vec<_>>();
            let (o, n) = (name(&old), name(&new));
            let (o, n): (Vec<&str>, Vec<&str>) =
                (o.iter().map(String::as_str).collect(), n.iter().map(String::as_str).collect());
            prop_assert_eq!(side(&c.edits, &o, &n, true), o.clone());
            prop_assert_eq!(side(&c.edits, &o, &n, false), n.clone());
            for e in &c.edits {
                if let Edit::Kept { old: a, new: b } = e {
                    prop_assert_eq!(&old[a.start as usize..a.end as usize], &new[b.start as usize..b.end as usize]);
                }
            }
            let within = |r: &Range<u32>, removed: bool| c.edits.iter().any(|e| match (e, removed) {
                (Edit::Removed { old: x }, true) | (Edit::Inserted { new: x }, false) => {
                    x.start <= r.start && r.end <= x.end
                }
                _ => false,
            });
            for m in &c.moves {
                prop_assert!(m.old.end - m.old.start >= MOVE_MIN);
                prop_assert_eq!(&old[m.old.start as usize..m.old.end as usize], &new[m.new.start as usize..m.new.end as usize]);
                prop_assert!(within(&m.old, true) && within(&m.new, false));
            }
            for (a, b) in c.moves.iter().zip(c.moves.iter().skip(1)) {
                prop_assert!(a.new.end <= b.new.start);
            }
        }
    }
}
