//! Sending each record to the worker a function names, in messages of a
//! set size.
//!
//! timely's `Exchange` hashes each record, builds its message through a
//! container builder and asks after every record whether a message is
//! full: 68 instructions a record at 16 workers (callgrind, the split
//! bench), more than a tenth of what the table's lookup costs. Here a
//! record is one push onto its worker's vector, and a message goes once it
//! holds [`Route`]'s `capacity`: 38 a record, the answers' routing included
//! (BENCHMARKS.md, "What a lookup costs a worker, by instructions").

use timely::communication::Push;
use timely::dataflow::channels::Message;
use timely::dataflow::channels::pact::DistributorPact;
use timely::dataflow::channels::pushers::exchange::Distributor;
use timely::progress::Stamp;

/// Records to the worker `to` names (below the number of workers), in
/// messages of `capacity` records; the records of one sender keep their
/// order.
pub(crate) struct Route<D, F> {
    to: F,
    capacity: usize,
    outs: Vec<Vec<D>>,
}

/// The pact that sends each record where `to` says, `capacity` at a time.
pub(crate) fn pact<D, F>(
    to: F,
    capacity: usize,
) -> DistributorPact<impl FnOnce(usize) -> Route<D, F>>
where
    F: FnMut(&D) -> usize + 'static,
{
    DistributorPact(move |peers| Route {
        to,
        capacity: capacity.max(1),
        outs: (0..peers).map(|_| Vec::new()).collect(),
    })
}

impl<D, F: FnMut(&D) -> usize> Distributor<Vec<D>> for Route<D, F> {
    fn partition<T: Clone, P: Push<Message<T, Vec<D>>>>(
        &mut self,
        container: &mut Vec<D>,
        stamp: &Stamp<T>,
        pushers: &mut [P],
    ) {
        for record in container.drain(..) {
            let to = (self.to)(&record);
            let out = &mut self.outs[to];
            if out.capacity() == 0 {
                out.reserve_exact(self.capacity);
            }
            out.push(record);
            if out.len() >= self.capacity {
                send(out, stamp, &mut pushers[to]);
            }
        }
    }

    fn flush<T: Clone, P: Push<Message<T, Vec<D>>>>(
        &mut self,
        stamp: &Stamp<T>,
        pushers: &mut [P],
    ) {
        for (out, pusher) in self.outs.iter_mut().zip(pushers) {
            if !out.is_empty() {
                send(out, stamp, pusher);
            }
        }
    }
}

/// `out` as a message to `pusher`, leaving it empty (a message the pusher
/// hands back is reused).
fn send<T: Clone, D, P: Push<Message<T, Vec<D>>>>(
    out: &mut Vec<D>,
    stamp: &Stamp<T>,
    pusher: &mut P,
) {
    Message::push_at(out, stamp.clone(), pusher);
    out.clear();
}
