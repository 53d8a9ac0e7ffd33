//! An epoch's lookups at a shard in the sequential pass's order.
//!
//! A document's lookups all come from the one worker it was handed to, in
//! position order, and each message keeps its sender's order. So an epoch's
//! messages are runs of whole or partial documents, each already sorted:
//! the epoch is put in order by sorting those runs by their first lookup
//! and copying them, once, rather than sorting every lookup (a merge of as
//! many runs as messages, 10% of the workers' instructions at 16
//! workers).

use crate::Lookup;

/// Where a run of one document's items lies: its first item's order key,
/// the message, and the run's start and end in it.
type Run = (u64, usize, usize, usize);

/// The items of `messages` in order, into `out` (cleared first): each
/// message's runs of one document sorted by their first item and copied.
/// Should a message not be sorted after all, the whole is sorted, so the
/// order holds whatever arrives; `runs` is scratch kept between epochs.
pub(crate) fn in_order(messages: &[Vec<Lookup>], runs: &mut Vec<Run>, out: &mut Vec<Lookup>) {
    runs.clear();
    for (m, items) in messages.iter().enumerate() {
        let mut start = 0;
        while let Some(first) = items.get(start) {
            // A run ends where its document does: found by bisection, the
            // message being sorted (where it is not, the check below sorts).
            let seq = first.0 >> 32;
            let end = start + items[start..].partition_point(|l| l.0 >> 32 == seq);
            runs.push((first.0, m, start, end));
            start = end;
        }
    }
    runs.sort_unstable_by_key(|r| r.0);
    out.clear();
    out.reserve(messages.iter().map(Vec::len).sum());
    for &(_, m, start, end) in runs.iter() {
        out.extend_from_slice(&messages[m][start..end]);
    }
    if !out.is_sorted_by_key(|l| l.0) {
        out.sort_by_key(|l| l.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    type L = Lookup;

    fn lookup(seq: u32, pos: u32) -> L {
        (
            u64::from(seq) << 32 | u64::from(pos),
            u64::from(pos) * 7,
            seq,
            0,
        )
    }

    /// The messages `workers` senders send one shard: document `seq` is
    /// sender seq % workers's, its lookups (those of `lens[seq]` that fall
    /// in this shard) cut into messages of `cap`, the senders' messages
    /// interleaved as `mix` says.
    fn messages(lens: &[u32], workers: usize, cap: usize, mix: &[usize]) -> Vec<Vec<L>> {
        let mut streams: Vec<Vec<L>> = vec![Vec::new(); workers];
        for (seq, &len) in lens.iter().enumerate() {
            let seq = seq as u32;
            streams[seq as usize % workers].extend((0..len).map(|p| lookup(seq, p)));
        }
        let mut queues: Vec<Vec<Vec<L>>> = streams
            .into_iter()
            .map(|s| s.chunks(cap).map(<[L]>::to_vec).rev().collect())
            .collect();
        let mut out = Vec::new();
        let mut m = 0;
        while queues.iter().any(|q| !q.is_empty()) {
            let w = mix.get(m).copied().unwrap_or(m) % workers;
            m += 1;
            if let Some(msg) = queues[w].pop() {
                out.push(msg);
            }
        }
        out
    }

    #[test]
    fn runs_of_many_senders_come_out_in_order() {
        let msgs = messages(&[3, 0, 5, 2, 4], 2, 2, &[1, 1, 0, 1, 0, 0]);
        let (mut runs, mut out) = (Vec::new(), Vec::new());
        in_order(&msgs, &mut runs, &mut out);
        let order: Vec<(u64, u64)> = out.iter().map(|l| (l.0 >> 32, l.0 & 0xffff)).collect();
        let want: Vec<(u64, u64)> = [(0, 3), (2, 5), (3, 2), (4, 4)]
            .iter()
            .flat_map(|&(s, n)| (0..n).map(move |p| (s, p)))
            .collect();
        assert_eq!(order, want);
    }

    #[test]
    fn an_unsorted_message_is_still_put_in_order() {
        let msgs = vec![vec![lookup(1, 1), lookup(1, 0)], vec![lookup(0, 0)]];
        let (mut runs, mut out) = (Vec::new(), Vec::new());
        in_order(&msgs, &mut runs, &mut out);
        assert_eq!(out, vec![lookup(0, 0), lookup(1, 0), lookup(1, 1)]);
    }

    proptest! {
        /// The same as sorting every lookup, whatever the senders, message
        /// sizes and interleaving.
        #[test]
        fn same_as_a_sort(
            lens in proptest::collection::vec(0u32..40, 0..30),
            workers in 1usize..6,
            cap in 1usize..50,
            mix in proptest::collection::vec(0usize..6, 0..200),
        ) {
            let msgs = messages(&lens, workers, cap, &mix);
            let mut want: Vec<L> = msgs.concat();
            want.sort_by_key(|l| l.0);
            let (mut runs, mut out) = (Vec::new(), vec![lookup(9, 9)]);
            in_order(&msgs, &mut runs, &mut out);
            prop_assert_eq!(out, want);
        }
    }
}
