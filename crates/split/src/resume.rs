//! Where a resumed run continues: every process says which epochs it holds
//! whole (its shards' checkpoints, and process 0's report so far), in its
//! hello, and every process takes the newest epoch all of them hold. Each
//! process computes it from every hello, so all agree without another
//! round; where none is held by all, every process says so and stops.

/// An epoch boundary a run can continue from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Point {
    /// Epochs completed.
    pub epoch: u64,
    /// Places in the run (documents handed out or passed over) by then.
    pub places: u64,
    /// Whether any shard had evicted by then: alignment's "has the table
    /// lost keys" holds from the start of the resumed run.
    pub evicted: bool,
}

impl Point {
    /// The start of the run: held by anyone who kept nothing.
    pub const START: Point = Point {
        epoch: 0,
        places: 0,
        evicted: false,
    };
}

/// What one process holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Held {
    /// Nothing of its own to restore: any epoch will do.
    Any,
    /// These epochs, oldest first.
    Points(Vec<Point>),
    /// Checkpoints of other settings or files: it refuses to resume.
    Foreign,
}

/// Epochs one hello carries at most, the newest: more than a shard keeps
/// ([`crate::checkpoint::prunes`]) under any window but a huge one.
pub(crate) const MOST: usize = 64;
const ANY: u64 = u64::MAX;
const FOREIGN: u64 = u64::MAX - 1;
const EVICTED: u64 = 1 << 63;

impl Held {
    /// Only the epochs `also` holds too (places alike), with the start.
    pub(crate) fn within(self, also: &[Point]) -> Held {
        let keep = |p: &Point| {
            p.epoch == 0 || (also.iter()).any(|q| q.epoch == p.epoch && q.places == p.places)
        };
        match self {
            Held::Any => {
                let mut points: Vec<Point> = also.to_vec();
                if !points.iter().any(|p| p.epoch == 0) {
                    points.push(Point::START);
                }
                points.sort_by_key(|p| p.epoch);
                Held::Points(points)
            }
            Held::Points(mut points) => {
                points.retain(keep);
                Held::Points(points)
            }
            Held::Foreign => Held::Foreign,
        }
    }

    /// As a hello carries it: a count (or a tag), then two words a point,
    /// the newest [`MOST`] at most.
    pub(crate) fn words(&self) -> Vec<u64> {
        match self {
            Held::Any => vec![ANY],
            Held::Foreign => vec![FOREIGN],
            Held::Points(points) => {
                let newest = &points[points.len().saturating_sub(MOST)..];
                let mut w = vec![newest.len() as u64];
                for p in newest {
                    w.push(p.epoch);
                    w.push(p.places | if p.evicted { EVICTED } else { 0 });
                }
                w
            }
        }
    }

    /// How many words follow a hello's first one, `None` if it is neither
    /// a count nor a tag.
    pub(crate) fn words_after(first: u64) -> Option<usize> {
        match first {
            ANY | FOREIGN => Some(0),
            n if n as usize <= MOST => Some(2 * n as usize),
            _ => None,
        }
    }

    /// A hello's words back (`None`: not a count or a tag, or short).
    pub(crate) fn of_words(w: &[u64]) -> Option<Held> {
        let first = *w.first()?;
        if w.len() != 1 + Held::words_after(first)? {
            return None;
        }
        match first {
            ANY => Some(Held::Any),
            FOREIGN => Some(Held::Foreign),
            n => Some(Held::Points(
                (0..n as usize)
                    .map(|i| Point {
                        epoch: w[1 + 2 * i],
                        places: w[2 + 2 * i] & !EVICTED,
                        evicted: w[2 + 2 * i] & EVICTED != 0,
                    })
                    .collect(),
            )),
        }
    }

    fn describe(&self) -> String {
        match self {
            Held::Any => "any (no shard of its own)".into(),
            Held::Foreign => "checkpoints of other settings or other files".into(),
            Held::Points(p) if p.is_empty() => "none".into(),
            Held::Points(p) => {
                let epochs: Vec<String> = p
                    .iter()
                    .map(|p| match p.epoch {
                        0 => "the start".to_string(),
                        e => e.to_string(),
                    })
                    .collect();
                format!("epochs {}", epochs.join(", "))
            }
        }
    }
}

/// The newest epoch every process holds (`all[i]` is process i's), or why
/// there is none, naming each process with `name`.
pub(crate) fn newest_common(all: &[Held], name: &dyn Fn(usize) -> String) -> Result<Point, String> {
    if let Some(i) = all.iter().position(|h| *h == Held::Foreign) {
        return Err(format!(
            "{} holds checkpoints of other settings or other files (they changed since): not resumed; remove them, or run every process without --resume",
            name(i)
        ));
    }
    let mut common: Option<Vec<Point>> = None;
    for h in all {
        let Held::Points(points) = h else {
            continue;
        };
        common = Some(match common {
            None => points.clone(),
            Some(before) => before
                .into_iter()
                .filter_map(|p| {
                    let q = points
                        .iter()
                        .find(|q| q.epoch == p.epoch && q.places == p.places)?;
                    Some(Point {
                        evicted: p.evicted || q.evicted,
                        ..p
                    })
                })
                .collect(),
        });
    }
    let Some(common) = common else {
        return Ok(Point::START);
    };
    common.into_iter().max_by_key(|p| p.epoch).ok_or_else(|| {
        let each: Vec<String> = (all.iter().enumerate())
            .map(|(i, h)| format!("{} holds {}", name(i), h.describe()))
            .collect();
        format!(
            "no checkpoint that every process holds (each keeps only its newest): {}; run every process without --resume to start over",
            each.join("; ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(epoch: u64) -> Point {
        Point {
            epoch,
            places: epoch * 32,
            evicted: false,
        }
    }

    fn name(i: usize) -> String {
        format!("process {i}")
    }

    /// The newest epoch all hold, not the newest of any: a process killed
    /// while the others wrote theirs holds one fewer.
    #[test]
    fn the_newest_epoch_every_process_holds_is_taken() {
        let a = Held::Points(vec![at(3), at(6), at(9)]);
        let b = Held::Points(vec![at(6), at(9), at(12)]);
        let c = Held::Points(vec![at(0), at(3), at(6)]);
        assert_eq!(newest_common(&[a.clone(), b.clone()], &name), Ok(at(9)));
        assert_eq!(newest_common(&[a, b, c.clone()], &name), Ok(at(6)));
        assert_eq!(newest_common(&[Held::Any, c], &name), Ok(at(6)));
        assert_eq!(newest_common(&[Held::Any], &name), Ok(Point::START));
    }

    /// Evicted anywhere by then is evicted for every owner.
    #[test]
    fn an_eviction_anywhere_holds_for_all() {
        let mut e = at(6);
        e.evicted = true;
        let a = Held::Points(vec![at(3), e]);
        let b = Held::Points(vec![at(3), at(6)]);
        assert_eq!(newest_common(&[b, a], &name), Ok(e));
    }

    /// None in common, or a process of other settings: every process says
    /// so, naming each.
    #[test]
    fn none_in_common_is_said_plainly() {
        let a = Held::Points(vec![at(12), at(15), at(18)]);
        let b = Held::Points(vec![at(0)]);
        let e = newest_common(&[a.clone(), b], &name).unwrap_err();
        assert!(
            e.contains("process 0 holds epochs 12, 15, 18")
                && e.contains("process 1 holds epochs the start")
                && e.contains("without --resume"),
            "{e}"
        );
        let e = newest_common(&[a, Held::Foreign], &name).unwrap_err();
        assert!(
            e.contains("process 1") && e.contains("other settings"),
            "{e}"
        );
        // Other places at one epoch are not the same epoch.
        let c = Held::Points(vec![Point { places: 5, ..at(3) }]);
        let d = Held::Points(vec![at(3)]);
        assert!(newest_common(&[c, d], &name).is_err());
    }

    /// A hello carries the newest epochs held, and they come back.
    #[test]
    fn held_epochs_cross_in_a_hello() {
        let mut e = at(9);
        e.evicted = true;
        for h in [
            Held::Any,
            Held::Foreign,
            Held::Points(vec![]),
            Held::Points(vec![at(0), at(3), at(6), e]),
        ] {
            assert_eq!(Held::of_words(&h.words()), Some(h));
        }
        let many = Held::Points((0..100).map(at).collect());
        assert_eq!(
            Held::of_words(&many.words()),
            Some(Held::Points((100 - MOST as u64..100).map(at).collect()))
        );
        assert_eq!(Held::of_words(&[2, 0, 0]), None, "short");
        assert_eq!(Held::of_words(&[1000]), None);
    }

    /// The caller's own part (process 0's report) narrows what its shards
    /// hold; with no shard, it is all that is held.
    #[test]
    fn the_callers_part_narrows_the_epochs() {
        let shards = Held::Points(vec![at(0), at(3), at(6)]);
        assert_eq!(shards.within(&[at(3)]), Held::Points(vec![at(0), at(3)]));
        assert_eq!(
            Held::Any.within(&[at(3)]),
            Held::Points(vec![Point::START, at(3)])
        );
    }
}
