//! Winnowing (Schleimer, Wilkerson, Aiken 2003; Abdel-Hamid et al. 2009 §2.1): the minimum key
//! of every window of w consecutive shingles, each distinct position once.
//!
//! Plain winnowing breaks ties to the rightmost minimum (the seed's rule). Robust
//! winnowing keeps the previous window's choice while it is still in the window
//! and still minimal, so runs of equal keys (repeated text) select one shingle per
//! w instead of every one.

/// Plain winnowing: selected shingle positions, increasing, into `out` (cleared
/// first). A document with fewer than w shingles is one window over all of them.
#[cfg(test)]
pub(crate) fn winnow(keys: &[u64], w: usize, out: &mut Vec<u32>) {
    out.clear();
    winnow_with(keys, w, false, &mut Vec::new(), |i| out.push(i as u32));
}

/// Robust winnowing (ties keep the previous choice); otherwise as [`winnow`].
#[cfg(test)]
pub(crate) fn robust_winnow(keys: &[u64], w: usize, out: &mut Vec<u32>) {
    out.clear();
    winnow_with(keys, w, true, &mut Vec::new(), |i| out.push(i as u32));
}

/// Winnowing, calling `emit` once per distinct selected position, in increasing
/// order (a window's choice is never left of the previous window's).
///
/// Window minima with a monotone deque of positions, kept in `ring` (scratch, a
/// ring buffer of a power-of-two size ≥ w). Plain mode pops equal keys too, so
/// the deque is strictly increasing and its front is the rightmost minimum. Robust
/// mode keeps equal keys, so every position holding the window minimum is in the
/// deque, at its front.
pub(crate) fn winnow_with(
    keys: &[u64],
    w: usize,
    robust: bool,
    ring: &mut Vec<u32>,
    mut emit: impl FnMut(usize),
) {
    assert!(w >= 1, "winnowing needs w >= 1");
    let n = keys.len();
    if n == 0 {
        return;
    }
    let w = w.min(n);
    let cap = w.next_power_of_two();
    let mask = cap - 1;
    ring.clear();
    ring.resize(cap, 0);
    // Deque = ring[head & mask .. tail & mask], as positions (u32 suffices: token
    // positions are u32 throughout).
    let (mut head, mut tail) = (0usize, 0usize);
    let mut last = usize::MAX;
    for (e, &x) in keys.iter().enumerate() {
        // Expire first, so the deque never holds more than w positions. Positions
        // enter in order, so at most the front can have left the window.
        if e >= w && (ring[head & mask] as usize) < e + 1 - w {
            head += 1;
        }
        while tail > head {
            let back = keys[ring[(tail - 1) & mask] as usize];
            if back > x || (!robust && back == x) {
                tail -= 1;
            } else {
                break;
            }
        }
        ring[tail & mask] = e as u32;
        tail += 1;
        if e + 1 < w {
            continue;
        }
        let start = e + 1 - w;
        let front = ring[head & mask] as usize;
        let chosen = if !robust {
            front
        } else {
            let m = keys[front];
            if last != usize::MAX && last >= start && keys[last] == m {
                last
            } else {
                // Rightmost of the minima at the deque's front. A new strict
                // minimum is alone there; otherwise the previous choice left the
                // window, which happens at most once per w windows, so the
                // whole pass stays O(n).
                let mut j = head;
                while j + 1 < tail && keys[ring[(j + 1) & mask] as usize] == m {
                    j += 1;
                }
                ring[j & mask] as usize
            }
        };
        if chosen != last {
            emit(chosen);
            last = chosen;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const PAPER: [u64; 17] = [
        77, 72, 42, 17, 98, 50, 17, 98, 8, 88, 67, 39, 77, 72, 42, 17, 98,
    ];

    /// The definition: one window at a time, O(nw).
    fn naive(keys: &[u64], w: usize, robust: bool) -> Vec<u32> {
        let n = keys.len();
        let mut out: Vec<u32> = vec![];
        if n == 0 {
            return out;
        }
        let w = w.min(n);
        let mut last: Option<usize> = None;
        for s in 0..=n - w {
            let win = &keys[s..s + w];
            let m = *win.iter().min().unwrap();
            let rightmost = s + win.iter().rposition(|&x| x == m).unwrap();
            let chosen = match last {
                Some(p) if robust && p >= s && keys[p] == m => p,
                _ => rightmost,
            };
            if last != Some(chosen) {
                out.push(chosen as u32);
            }
            last = Some(chosen);
        }
        out
    }

    #[test]
    fn winnowing_paper_example() {
        let mut out = vec![];
        winnow(&PAPER, 4, &mut out);
        assert_eq!(out, [3, 6, 8, 11, 15]);
        let values: Vec<u64> = out.iter().map(|&i| PAPER[i as usize]).collect();
        assert_eq!(values, [17, 17, 8, 39, 17]);
        // No ties among any window's minima here, so robust agrees.
        robust_winnow(&PAPER, 4, &mut out);
        assert_eq!(out, [3, 6, 8, 11, 15]);
    }

    #[test]
    fn winnowing_constant_sequence() {
        let keys = [5u64; 10];
        let mut out = vec![];
        winnow(&keys, 4, &mut out);
        assert_eq!(out, (3..=9).collect::<Vec<u32>>());
        robust_winnow(&keys, 4, &mut out);
        assert_eq!(out, [3, 7]);
    }

    #[test]
    fn winnowing_short_documents() {
        let mut out = vec![];
        winnow(&[], 4, &mut out);
        assert!(out.is_empty());
        // Fewer than w shingles: one window over all of them.
        winnow(&[9, 2, 7], 8, &mut out);
        assert_eq!(out, [1]);
        winnow(&[2, 9, 2], 8, &mut out);
        assert_eq!(out, [2], "rightmost minimum");
        robust_winnow(&[2, 9, 2], 8, &mut out);
        assert_eq!(out, [2], "the first window has no previous choice");
        // w = 1 selects every shingle.
        winnow(&[3, 3, 1], 1, &mut out);
        assert_eq!(out, [0, 1, 2]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn winnowing_matches_naive(
            keys in prop_oneof![
                prop::collection::vec(0u64..3, 0..100),
                prop::collection::vec(any::<u64>(), 0..100),
            ],
            w in 1usize..=12,
        ) {
            let mut out = vec![];
            winnow(&keys, w, &mut out);
            prop_assert_eq!(&out, &naive(&keys, w, false));
            robust_winnow(&keys, w, &mut out);
            prop_assert_eq!(&out, &naive(&keys, w, true));
        }
    }
}
