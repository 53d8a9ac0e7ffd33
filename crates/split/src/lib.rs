//! The origin pass split by bucket range on timely dataflow worker threads
//! in one process (issue 40; docs/algorithms.md §3.3).
//!
//! Each worker owns one contiguous bucket range of the one table (a
//! [`Shard`]: together they take the table's memory, not a table each) and
//! a share of the documents (round robin). Documents go in epochs, an epoch
//! a timestamp. A document's owner sends each unit's lookup to the worker
//! whose range holds the key's bucket; once the frontier has passed an
//! epoch, a shard applies the epoch's lookups in (document, position)
//! order, the sequential pass's order restricted to its range, and sends
//! each answer (the hit, whether the key was sampled) back to the owner.
//! Once the owner's frontier has passed the epoch it holds every answer of
//! its documents there, and labels them as `OriginPass::process` does
//! ([`Labeller`]). The caller's thread hands documents out and gets their
//! labels back in document order.
//!
//! Lucky is not split: its scores follow each document's estimates, which
//! the next document's lookups read, so it runs the sequential pass on the
//! caller's thread (as does an unbounded table, which has no buckets).

use std::cell::RefCell;
use std::collections::VecDeque;
use std::fmt;
use std::rc::Rc;
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::Thread;

use lineage_origin::align::OriginKeys;
use lineage_origin::table::{Hit, Ranges, Shard, Slot, Table, TableError};
use lineage_origin::{Eviction, Labeller, OriginPass, Params, TableSize, Unit};
use timely::communication::WorkerGuards;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::{Capability, Operator, Probe};
use timely::dataflow::{InputHandle, ProbeHandle};
use timely::worker::Worker;

/// Earlier versions' shingle keys, for alignment: shared by the owners,
/// which read them, and the caller, which adds each document's before
/// handing it over (a document's hits name only earlier ones).
pub type Origins = Arc<Mutex<dyn OriginKeys + Send>>;

/// How the pass is split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Worker threads: each owns a bucket range and a share of the
    /// documents (no more ranges than a growing table's live buckets).
    pub workers: usize,
    /// An epoch closes once its documents hold this many units (a
    /// document is never cut): large enough that the progress round of an
    /// epoch is small beside its lookups.
    pub epoch_units: usize,
    /// Epochs in flight at most: past this the caller waits for the
    /// oldest one's labels, so memory holds a few epochs, not the text.
    pub window: usize,
}

/// Units an epoch holds per worker.
const EPOCH_UNITS_PER_WORKER: usize = 1 << 15;
/// Enough epochs in flight that workers lookup one while the next is
/// being sent and the last labelled.
const WINDOW: usize = 4;

impl Options {
    /// `workers` threads (at least one), epochs and window by default.
    pub fn new(workers: usize) -> Options {
        let workers = workers.max(1);
        Options {
            workers,
            epoch_units: EPOCH_UNITS_PER_WORKER * workers,
            window: WINDOW,
        }
    }
}

/// Why the split pass failed.
#[derive(Debug)]
pub enum SplitError {
    /// The table could not be split.
    Table(TableError),
    /// The worker threads could not be started.
    Start(String),
    /// A worker stopped (a panic: a bug).
    Worker(String),
}

impl fmt::Display for SplitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SplitError::Table(e) => write!(f, "{e}"),
            SplitError::Start(e) => write!(f, "the pass's workers could not start: {e}"),
            SplitError::Worker(e) => write!(f, "a worker of the pass stopped: {e}"),
        }
    }
}

impl std::error::Error for SplitError {}

impl From<TableError> for SplitError {
    fn from(e: TableError) -> SplitError {
        SplitError::Table(e)
    }
}

/// A document's labels, given back in document order with what the caller
/// handed over with it.
pub struct Labelled<'a, T> {
    pub id: u32,
    pub units: Vec<Unit>,
    /// The estimated origin of each unit, as `OriginPass::process` gives it.
    pub labels: &'a [u32],
    pub payload: T,
}

/// The pass over documents handed over in order: split by bucket range on
/// worker threads, or (Lucky, an unbounded table) the sequential pass.
pub struct SplitPass<T> {
    run: Run<T>,
}

enum Run<T> {
    Sequential {
        pass: Box<OriginPass>,
        origins: Origins,
    },
    Split(Box<Dataflow<T>>),
}

impl<T> SplitPass<T> {
    /// The pass of `params` continuing from `table` (built with
    /// `params.table_params()`, fresh or restored), split over
    /// `options.workers` threads; `origins` as [`Origins`] says.
    pub fn new(
        params: Params,
        table: Table,
        options: Options,
        origins: Origins,
    ) -> Result<SplitPass<T>, SplitError> {
        let run = if splits(&params) {
            Run::Split(Box::new(Dataflow::start(params, table, options, origins)?))
        } else {
            Run::Sequential {
                pass: Box::new(OriginPass::resume(params, table)),
                origins,
            }
        };
        Ok(SplitPass { run })
    }

    /// Whether the pass runs split (else sequentially, on this thread).
    pub fn is_split(&self) -> bool {
        matches!(self.run, Run::Split(_))
    }

    /// Hand over document `id` (later than every one before it) with its
    /// selected units; `done` gets the labels of the documents that are
    /// ready, in order (this one's later, unless the pass is sequential).
    /// Its keys must be in `origins` already when the settings align.
    pub fn push<E: From<SplitError>>(
        &mut self,
        id: u32,
        units: Vec<Unit>,
        payload: T,
        mut done: impl FnMut(Labelled<'_, T>) -> Result<(), E>,
    ) -> Result<(), E> {
        match &mut self.run {
            Run::Sequential { pass, origins } => {
                let mut o = origins.lock().unwrap_or_else(PoisonError::into_inner);
                let labels = pass.process(id, &units, &mut *o);
                drop(o);
                done(Labelled {
                    id,
                    labels,
                    units,
                    payload,
                })
            }
            Run::Split(d) => d.push(id, units, payload, &mut done),
        }
    }

    /// The labels of every document still in flight, in order, to `done`;
    /// then the table the sequential pass would have left.
    pub fn finish<E: From<SplitError>>(
        self,
        mut done: impl FnMut(Labelled<'_, T>) -> Result<(), E>,
    ) -> Result<Table, E> {
        match self.run {
            Run::Sequential { pass, .. } => Ok(pass.into_table()),
            Run::Split(d) => d.finish(&mut done),
        }
    }
}

/// Whether `params`' table is split by bucket range: every eviction but
/// Lucky, a bounded table.
pub fn splits(params: &Params) -> bool {
    params.eviction != Eviction::Lucky && params.table_size != TableSize::Unbounded
}

/// What the caller sends a worker.
enum Msg {
    /// A document it owns: its place in the run, id and keys.
    Doc { seq: u32, id: u32, keys: Vec<u64> },
    /// The epoch is over.
    End,
}

/// A lookup on its way to a shard: (seq << 32 | position, key, document id,
/// the insert's offset, previous and next bytes).
type Lookup = (u64, u64, u32, u32);

/// An answer on its way to the owner: (seq << 32 | position, answer as
/// [`pack`] writes it), 16 bytes; the owner is seq's. Position [`EVICTED`]
/// says the shard first evicted during document seq, the answer then the
/// owner it goes to (every owner gets one).
type Answer = (u64, u64);

const EVICTED: u32 = u32::MAX;
const FOUND: u64 = 1 << 63;
const UNSAMPLED: u64 = 1 << 62;

fn pack(hit: Option<Hit>, slot: Slot) -> u64 {
    let sampled = if slot.sampled() { 0 } else { UNSAMPLED };
    hit.map_or(sampled, |h| {
        FOUND
            | sampled
            | u64::from(h.origin) << 24
            | u64::from(h.offset) << 16
            | u64::from(h.prev) << 8
            | u64::from(h.next)
    })
}

fn unpack(a: u64) -> (Option<Hit>, Slot) {
    let hit = (a & FOUND != 0).then_some(Hit {
        origin: (a >> 24) as u32,
        offset: (a >> 16) as u8,
        prev: (a >> 8) as u8,
        next: a as u8,
    });
    (hit, Slot::of_sample(a & UNSAMPLED == 0))
}

fn pack_insert(h: Hit) -> u32 {
    u32::from(h.offset) << 16 | u32::from(h.prev) << 8 | u32::from(h.next)
}

fn unpack_insert(id: u32, ins: u32) -> Hit {
    Hit {
        origin: id,
        offset: (ins >> 16) as u8,
        prev: (ins >> 8) as u8,
        next: ins as u8,
    }
}

/// A document in flight on the caller's side.
struct Pending<T> {
    id: u32,
    units: Vec<Unit>,
    payload: T,
    labels: Option<Vec<u32>>,
}

/// The caller's side of the split pass: workers to send to, labels to
/// gather, documents in flight.
struct Dataflow<T> {
    senders: Vec<Sender<Msg>>,
    threads: Vec<Thread>,
    labels: Receiver<(u32, Vec<u32>)>,
    guards: Option<WorkerGuards<Option<Shard>>>,
    /// Documents handed over and not yet given back, from seq `first`.
    pending: VecDeque<Pending<T>>,
    first: u32,
    /// Where each closed epoch in flight ends (a seq).
    ends: VecDeque<u32>,
    /// Units in the open epoch.
    units: usize,
    options: Options,
}

impl<T> Dataflow<T> {
    fn start(
        params: Params,
        table: Table,
        options: Options,
        origins: Origins,
    ) -> Result<Dataflow<T>, SplitError> {
        let workers = options.workers.max(1);
        // Alignment's "has the table lost keys" holds from the start when
        // the table it continues had evicted.
        let evicted_before = table.counters().evictions > 0;
        let shards = table.split(workers)?;
        drop(table);
        let ranges = Ranges::of(&shards);
        let mut shards: Vec<Option<Shard>> = shards.into_iter().map(Some).collect();
        shards.resize_with(workers, || None);
        let (senders, receivers): (Vec<_>, Vec<_>) = (0..workers).map(|_| mpsc::channel()).unzip();
        let (labelled, labels) = mpsc::channel();
        // Each worker takes its own: the closure is shared by all.
        let shards = Mutex::new(shards);
        let receivers = Mutex::new(receivers.into_iter().map(Some).collect::<Vec<_>>());
        let labelled = Mutex::new(labelled);
        let guards = timely::execute(timely::Config::process(workers), move |worker| {
            let i = worker.index();
            let shard = take(&shards, i);
            let rx = take(&receivers, i);
            let tx = labelled
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone();
            let rx = rx.expect("one receiver a worker");
            let view = Shared {
                origins: origins.clone(),
                buf: Vec::new(),
            };
            work(
                worker,
                shard,
                ranges.clone(),
                params,
                evicted_before,
                rx,
                tx,
                view,
            )
        })
        .map_err(SplitError::Start)?;
        let threads = guards.guards().iter().map(|g| g.thread().clone()).collect();
        Ok(Dataflow {
            senders,
            threads,
            labels,
            guards: Some(guards),
            pending: VecDeque::new(),
            first: 0,
            ends: VecDeque::new(),
            units: 0,
            options,
        })
    }

    fn send(&self, worker: usize, msg: Msg) {
        // A worker gone has panicked: the caller learns it from the labels.
        let _ = self.senders[worker].send(msg);
        self.threads[worker].unpark();
    }

    fn push<E: From<SplitError>>(
        &mut self,
        id: u32,
        units: Vec<Unit>,
        payload: T,
        done: &mut dyn FnMut(Labelled<'_, T>) -> Result<(), E>,
    ) -> Result<(), E> {
        let seq = self.first + self.pending.len() as u32;
        let keys = units.iter().map(|u| u.key).collect();
        self.units += units.len();
        self.send(
            seq as usize % self.senders.len(),
            Msg::Doc { seq, id, keys },
        );
        self.pending.push_back(Pending {
            id,
            units,
            payload,
            labels: None,
        });
        if self.units >= self.options.epoch_units {
            self.end_epoch();
        }
        self.give_back(false, done)?;
        while self.ends.len() > self.options.window {
            self.give_back(true, done)?;
        }
        Ok(())
    }

    fn end_epoch(&mut self) {
        for w in 0..self.senders.len() {
            self.send(w, Msg::End);
        }
        self.ends.push_back(self.first + self.pending.len() as u32);
        self.units = 0;
    }

    /// Gather the labels the workers sent (waiting for one if `wait`) and
    /// give back the documents ready, in order.
    fn give_back<E: From<SplitError>>(
        &mut self,
        wait: bool,
        done: &mut dyn FnMut(Labelled<'_, T>) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut next = if wait {
            let got = self.labels.recv();
            Some(got.map_err(|_| SplitError::Worker("its labels stopped".into()))?)
        } else {
            None
        };
        loop {
            if let Some((seq, labels)) = next.take() {
                let at = (seq - self.first) as usize;
                if let Some(p) = self.pending.get_mut(at) {
                    p.labels = Some(labels);
                }
            }
            match self.labels.try_recv() {
                Ok(got) => next = Some(got),
                Err(TryRecvError::Empty | TryRecvError::Disconnected) => break,
            }
        }
        while self.pending.front().is_some_and(|p| p.labels.is_some()) {
            let Some(p) = self.pending.pop_front() else {
                break;
            };
            self.first += 1;
            done(Labelled {
                id: p.id,
                units: p.units,
                labels: p.labels.as_deref().unwrap_or_default(),
                payload: p.payload,
            })?;
        }
        while self.ends.front().is_some_and(|&end| end <= self.first) {
            self.ends.pop_front();
        }
        Ok(())
    }

    fn finish<E: From<SplitError>>(
        mut self,
        done: &mut dyn FnMut(Labelled<'_, T>) -> Result<(), E>,
    ) -> Result<Table, E> {
        // Closed inputs end the last epoch.
        self.close();
        while !self.pending.is_empty() {
            self.give_back(true, done)?;
        }
        let guards = self
            .guards
            .take()
            .ok_or(SplitError::Worker("joined".into()))?;
        let mut shards = Vec::new();
        for r in guards.join() {
            shards.extend(r.map_err(SplitError::Worker)?);
        }
        Table::join(shards)
            .ok_or_else(|| SplitError::Worker("the shards do not join".into()).into())
    }

    fn close(&mut self) {
        self.senders.clear();
        for t in &self.threads {
            t.unpark();
        }
    }
}

impl<T> Drop for Dataflow<T> {
    /// Not finished (the caller failed): the workers end their epochs and
    /// stop; a panic of theirs is not raised again here.
    fn drop(&mut self) {
        self.close();
        if let Some(g) = self.guards.take() {
            let _ = g.join();
        }
    }
}

/// Worker `i`'s own of what the workers share out.
fn take<X>(v: &Mutex<Vec<Option<X>>>, i: usize) -> Option<X> {
    let mut v = v.lock().unwrap_or_else(PoisonError::into_inner);
    v.get_mut(i).and_then(Option::take)
}

/// [`Origins`] as one owner reads them: a key list is copied out under the
/// lock.
struct Shared {
    origins: Origins,
    buf: Vec<u64>,
}

impl OriginKeys for Shared {
    fn keys(&mut self, id: u32) -> Option<&[u64]> {
        let mut o = self.origins.lock().unwrap_or_else(PoisonError::into_inner);
        let keys = o.keys(id)?;
        self.buf.clear();
        self.buf.extend_from_slice(keys);
        Some(&self.buf)
    }
}

/// A document its owner waits on: its answers fill in as they come.
struct Owned {
    epoch: u64,
    seq: u32,
    id: u32,
    keys: Vec<u64>,
    hits: Vec<Option<Hit>>,
    slots: Vec<Slot>,
}

/// An owner's documents in flight, oldest first, and the first document
/// during which any shard had evicted.
#[derive(Default)]
struct Owner {
    docs: VecDeque<Owned>,
    evicted_from: Option<u32>,
}

impl Owner {
    fn take(&mut self, (order, answer): Answer, peers: usize) {
        let (seq, pos) = ((order >> 32) as u32, order as u32);
        if pos == EVICTED {
            self.evicted_from = Some(self.evicted_from.map_or(seq, |e| e.min(seq)));
            return;
        }
        // An owner's documents are every peers-th from its first.
        let Some(front) = self.docs.front() else {
            return;
        };
        let at = (seq - front.seq) as usize / peers;
        if let Some(d) = self.docs.get_mut(at) {
            let (hit, slot) = unpack(answer);
            d.hits[pos as usize] = hit;
            d.slots[pos as usize] = slot;
        }
    }
}

/// One worker: its shard's operator, its documents' owner, and the loop
/// that takes documents from the caller and gives their labels back.
#[allow(clippy::too_many_arguments)]
fn work(
    worker: &mut Worker,
    shard: Option<Shard>,
    ranges: Ranges,
    params: Params,
    evicted_before: bool,
    rx: Receiver<Msg>,
    tx: Sender<(u32, Vec<u32>)>,
    mut origins: Shared,
) -> Option<Shard> {
    let peers = worker.peers();
    let shard = Rc::new(RefCell::new(shard));
    let owner = Rc::new(RefCell::new(Owner {
        evicted_from: evicted_before.then_some(0),
        ..Owner::default()
    }));
    let mut input = InputHandle::<u64, CapacityContainerBuilder<Vec<Lookup>>>::new();
    let probe = ProbeHandle::new();
    worker.dataflow::<u64, _, _>(|scope| {
        let (in_shard, in_owner) = (shard.clone(), owner.clone());
        let route = move |l: &Lookup| ranges.shard(l.1) as u64;
        input
            .to_stream(scope)
            .unary_frontier::<CapacityContainerBuilder<Vec<Answer>>, _, _, _>(
                Exchange::new(route),
                "Shard",
                move |_, _| {
                    let mut stash: Vec<(Capability<u64>, Vec<Lookup>)> = Vec::new();
                    let mut evicted = evicted_before;
                    move |(input, frontier), output| {
                        input.for_each_stamp(|cap, data| {
                            let Some(cap) = cap.retain_least(0) else {
                                return;
                            };
                            let at = match stash.iter().position(|(c, _)| c.time() == cap.time()) {
                                Some(at) => at,
                                None => {
                                    stash.push((cap, Vec::new()));
                                    stash.len() - 1
                                }
                            };
                            for batch in data {
                                stash[at].1.append(batch);
                            }
                        });
                        // Whole epochs, oldest first; in each, (document,
                        // position) order: the sequential pass's.
                        stash.sort_by_key(|(c, _)| *c.time());
                        let ready = stash
                            .iter()
                            .take_while(|(c, _)| !frontier.less_equal(c.time()))
                            .count();
                        let mut shard = in_shard.borrow_mut();
                        let Some(shard) = shard.as_mut() else {
                            return;
                        };
                        for (cap, mut lookups) in stash.drain(..ready) {
                            lookups.sort_unstable_by_key(|l| l.0);
                            let mut session = output.session(&cap);
                            let first_eviction = shard.lookup_sorted(
                                &lookups,
                                |&(_, key, id, ins)| (key, unpack_insert(id, ins)),
                                |&(order, ..), hit, slot| session.give((order, pack(hit, slot))),
                            );
                            if let Some(at) = first_eviction.filter(|_| !evicted) {
                                evicted = true;
                                let seq = lookups[at].0 >> 32;
                                for w in 0..peers as u64 {
                                    session.give((seq << 32 | u64::from(EVICTED), w));
                                }
                            }
                        }
                    }
                },
            )
            .unary::<CapacityContainerBuilder<Vec<()>>, _, _, _>(
                Exchange::new(move |&(order, answer): &Answer| {
                    if order as u32 == EVICTED {
                        answer
                    } else {
                        (order >> 32) % peers as u64
                    }
                }),
                "Owner",
                move |_, _| {
                    move |input, _| {
                        input.for_each(|_, data| {
                            let mut o = in_owner.borrow_mut();
                            for a in data.drain(..) {
                                o.take(a, peers);
                            }
                        });
                    }
                },
            )
            .probe_with(&probe);
    });

    let mut labeller = Labeller::new(params);
    let mut input = Some(input);
    let mut lookups: Vec<Lookup> = Vec::new();
    loop {
        // What the caller sent.
        while let Some(open) = input.as_mut() {
            match rx.try_recv() {
                Ok(Msg::Doc { seq, id, keys }) => {
                    lookups.clear();
                    lookups.extend(keys.iter().enumerate().map(|(i, &key)| {
                        let ins = pack_insert(Hit::of_unit(id, &keys, i));
                        (u64::from(seq) << 32 | i as u64, key, id, ins)
                    }));
                    open.send_batch(&mut lookups);
                    let n = keys.len();
                    owner.borrow_mut().docs.push_back(Owned {
                        epoch: *open.time(),
                        seq,
                        id,
                        keys,
                        hits: vec![None; n],
                        slots: vec![Slot::of_sample(true); n],
                    });
                }
                Ok(Msg::End) => {
                    let next = *open.time() + 1;
                    open.advance_to(next);
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => input = None,
            }
        }
        // Parked until timely has work or the caller sends.
        let running = worker.step_or_park(None);
        // Label the documents whose epoch every shard has answered.
        loop {
            let mut o = owner.borrow_mut();
            let evicted_from = o.evicted_from;
            if o.docs.front().is_none_or(|d| probe.less_equal(&d.epoch)) {
                break;
            }
            let Some(d) = o.docs.pop_front() else {
                break;
            };
            drop(o);
            let incomplete =
                || evicted_from.is_some_and(|e| e <= d.seq) || d.slots.iter().any(|s| !s.sampled());
            let labels = labeller.label(d.id, &d.keys, &d.hits, &d.slots, incomplete, &mut origins);
            // The caller gone (it failed): the epochs still run out.
            let _ = tx.send((d.seq, labels.to_vec()));
        }
        if !running {
            break;
        }
    }
    shard.borrow_mut().take()
}
