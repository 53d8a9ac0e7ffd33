//! The origin pass split by bucket range on timely dataflow workers: threads
//! of one process, or processes on many machines (docs/algorithms.md §3.3,
//! docs/architecture.md "Beyond one machine").
//!
//! Each worker owns one contiguous bucket range of the one table (a
//! [`Shard`]: together they take the table's memory, not a table each).
//! Documents go in epochs, an epoch a timestamp, each at a place in the run
//! (its seq). The worker a document is handed to sends each unit's lookup
//! to the worker whose range holds the key's bucket, and the document
//! itself to its owner (seq modulo the workers of a process, among process
//! 0's workers). Once the frontier has passed an epoch, a shard applies the
//! epoch's lookups in (seq, position) order, the sequential pass's order
//! restricted to its range, and sends each answer (the hit, whether the key
//! was sampled) to the owner. Once the owner's frontier has passed the
//! epoch it holds every answer of its documents there, and labels them as
//! `OriginPass::process` does ([`Labeller`]), keeping each document's keys
//! for alignment as it arrives (a document's hits name only earlier ones,
//! which have all arrived by then). The caller's thread hands documents
//! out and gets their labels back in document order ([`SplitPass`]), or,
//! where the earlier documents' keys are the caller's alone (the index's,
//! in a transaction), gets the table's answers back and labels them itself
//! ([`SplitLookups`]).
//!
//! Over many processes ([`Cluster`]) every process walks the same files and
//! hands out the documents it reads (every n-th), passing over the others;
//! epochs close every so many documents, the same in every process, so the
//! (epoch, seq) order is the run's. Process 0 owns every document, so it
//! labels them all and gets them back; the shards' counters and estimates
//! are gathered there at the end, where a table is never joined.
//!
//! Lucky is not split: its scores follow each document's estimates, which
//! the next document's lookups read, so it runs the sequential pass on the
//! caller's thread (as does an unbounded table, which has no buckets).

// `deny`, not `forbid`: the one `unsafe` (TCP keepalive, `cluster.rs`) is allowed
// where it stands, with its SAFETY comment.
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod checkpoint;
mod cluster;
mod order;
mod resume;
mod route;
mod sweep;

use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::Thread;
use std::time::Duration;

use lineage_origin::align::OriginKeys;
use lineage_origin::history::ReplayStats;
use lineage_origin::table::{Counters, Hit, Ranges, Shard, Slot, Table, TableError};
use lineage_origin::{Eviction, Labeller, OriginPass, Params, Regime, TableSize, Unit};
use timely::communication::WorkerGuards;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::operators::{Capability, Operator, Probe};
use timely::dataflow::{InputHandle, ProbeHandle};
use timely::worker::Worker;
use timely::{ExchangeData, WorkerConfig};

pub use checkpoint::{CheckpointError, Checkpoints, epoch_of, read_shard, shard_path};
pub use cluster::Cluster;
use resume::Held;
pub use resume::Point;
pub use sweep::SplitReplay;

/// What comes back with a document's labels: sent between workers (and
/// processes) with the document.
pub trait Payload: ExchangeData + Clone {}

impl<T: ExchangeData + Clone> Payload for T {}

/// Earlier documents' shingle keys, for alignment: the pass keeps each
/// document's as it arrives, and its labelling reads them.
pub type Origins = Arc<Mutex<dyn KeyStore>>;

/// Where the pass keeps the keys alignment reads.
pub trait KeyStore: OriginKeys + Send {
    /// Keep document `id`'s keys: called in document order, only when the
    /// settings align. An error (no room) ends the run with its text.
    fn keep(&mut self, id: u32, keys: Vec<u64>) -> Result<(), String>;
}

/// How the pass is split.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Worker threads of this process: each owns a bucket range and hands
    /// out a share of the documents (no more ranges than a growing table's
    /// live buckets).
    pub workers: usize,
    /// An epoch closes once its documents hold this many units (a
    /// document is never cut): large enough that the progress round of an
    /// epoch is small beside its lookups. Over many processes, which do not
    /// see each other's units, an epoch is [`EPOCH_DOCS_PER_WORKER`]
    /// documents a worker instead.
    pub epoch_units: usize,
    /// Epochs in flight at most: past this the caller waits for the
    /// oldest one's answers, so memory holds a few epochs, not the text.
    pub window: usize,
    /// The processes of a run over many (`None`: this process alone).
    pub cluster: Option<Cluster>,
    /// Each shard's state written every so many epochs (`None`: never).
    pub checkpoints: Option<Checkpoints>,
}

/// Units an epoch holds per worker.
const EPOCH_UNITS_PER_WORKER: usize = 1 << 15;
/// Documents an epoch holds per worker over many processes.
pub const EPOCH_DOCS_PER_WORKER: usize = 16;
/// Enough epochs in flight that workers lookup one while the next is
/// being sent and the last labelled.
const WINDOW: usize = 4;
/// Records a message between workers holds (24 KiB of lookups, 16 KiB of
/// answers): fewer, larger messages than timely's 8 KiB.
const MESSAGE_RECORDS: usize = 1024;
/// Documents a message to their owners holds (each with its units).
const MESSAGE_DOCUMENTS: usize = 64;

impl Options {
    /// `workers` threads (at least one) in this process alone, epochs and
    /// window by default.
    pub fn new(workers: usize) -> Options {
        let workers = workers.max(1);
        Options {
            workers,
            epoch_units: EPOCH_UNITS_PER_WORKER * workers,
            window: WINDOW,
            cluster: None,
            checkpoints: None,
        }
    }

    /// Which documents this process reads: those whose place in the run is
    /// `index` modulo `count`.
    pub fn share(&self) -> (usize, usize) {
        self.cluster
            .as_ref()
            .map_or((0, 1), |c| (c.process, c.hosts.len()))
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
    /// The processes of a run could not connect.
    Connect(String),
    /// A process of the run was lost.
    Lost(String),
    /// Not split, so not runnable over many processes.
    Unsplit(&'static str),
    /// The keys for alignment could not be kept.
    Keys(String),
    /// A checkpoint could not be written.
    Checkpoint(String),
    /// The run could not be resumed (no epoch every process holds, a
    /// checkpoint of other settings or files, one that would not read).
    Resume(String),
}

impl fmt::Display for SplitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SplitError::Table(e) => write!(f, "{e}"),
            SplitError::Start(e) => write!(f, "the pass's workers could not start: {e}"),
            SplitError::Worker(e) => write!(f, "a worker of the pass stopped: {e}"),
            SplitError::Connect(e) => write!(f, "the processes could not connect: {e}"),
            SplitError::Lost(e) | SplitError::Keys(e) => f.write_str(e),
            SplitError::Resume(e) => write!(f, "cannot resume: {e}"),
            SplitError::Checkpoint(e) => write!(f, "a checkpoint could not be written: {e}"),
            SplitError::Unsplit(why) => write!(
                f,
                "a run over many processes needs a split table, and {why} is not split"
            ),
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
    /// The document's id, as handed over.
    pub id: u32,
    /// Its selected units, as handed over.
    pub units: Vec<Unit>,
    /// The estimated origin of each unit, as `OriginPass::process` gives it.
    pub labels: &'a [u32],
    /// What was handed over with it.
    pub payload: T,
    /// Where this document ends an epoch the shards checkpoint at: that
    /// epoch. The caller keeps its own part of the run there (process 0:
    /// the report so far), to resume from.
    pub checkpoint: Option<Point>,
}

/// What is left once the pass is over.
pub enum Ended {
    /// The table the sequential pass would have left.
    Table(Table),
    /// Process 0 of many: what the table over every process shows (its
    /// shards are never joined: together they may not fit one machine).
    Stats(ReplayStats),
    /// Another process of many: process 0 has the run's results.
    Elsewhere,
}

impl Ended {
    /// The table's figures, where this process has them.
    pub fn stats(&self, params: &Params) -> Option<ReplayStats> {
        match self {
            Ended::Table(t) => Some(ReplayStats::of_table(t, params)),
            Ended::Stats(s) => Some(*s),
            Ended::Elsewhere => None,
        }
    }

    /// The table, where one process ran the whole pass.
    pub fn table(self) -> Option<Table> {
        match self {
            Ended::Table(t) => Some(t),
            Ended::Stats(_) | Ended::Elsewhere => None,
        }
    }
}

/// The pass over documents handed over in order: split by bucket range on
/// timely workers, or (Lucky, an unbounded table) the sequential pass.
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

impl<T: Payload> SplitPass<T> {
    /// The pass of `params` continuing from `table` (built with
    /// `params.table_params()`, fresh or restored), split as `options`
    /// says; `origins` keeps the keys alignment reads (see [`Origins`]).
    pub fn new(
        params: Params,
        table: Table,
        options: Options,
        origins: Origins,
    ) -> Result<SplitPass<T>, SplitError> {
        let run = if splits(&params) {
            Run::Split(Box::new(Dataflow::start(
                params,
                table,
                options,
                Some(origins),
            )?))
        } else if options.cluster.is_some() {
            return Err(unsplit(&params));
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

    /// Where the run continues: the start, or (with
    /// [`Checkpoints::resume`]) the newest epoch every process holds,
    /// its shards restored. The caller hands over (or passes over) the
    /// documents from its places on, having restored its own part there.
    pub fn resumed(&self) -> Point {
        match &self.run {
            Run::Sequential { .. } => Point::START,
            Run::Split(d) => d.from,
        }
    }

    /// Hand over document `id` (later than every one before it) with its
    /// selected units; `done` gets the labels of the documents that are
    /// ready, in order (this one's later, unless the pass is sequential).
    pub fn push<E: From<SplitError>>(
        &mut self,
        id: u32,
        units: Vec<Unit>,
        payload: T,
        mut done: impl FnMut(Labelled<'_, T>) -> Result<(), E>,
    ) -> Result<(), E> {
        match &mut self.run {
            Run::Sequential { pass, origins } => {
                let aligns = pass.params().aligns();
                let mut o = origins.lock().unwrap_or_else(PoisonError::into_inner);
                let labels = pass.process(id, &units, &mut *o);
                if aligns {
                    o.keep(id, units.iter().map(|u| u.key).collect())
                        .map_err(SplitError::Keys)?;
                }
                drop(o);
                done(Labelled {
                    id,
                    labels,
                    units,
                    payload,
                    checkpoint: None,
                })
            }
            Run::Split(d) => d.push(Some((id, units, payload)), &mut |r| r.labelled(&mut done)),
        }
    }

    /// Over many processes: the next document is read by another process
    /// (it takes its place in the run here too).
    pub fn pass_over<E: From<SplitError>>(
        &mut self,
        mut done: impl FnMut(Labelled<'_, T>) -> Result<(), E>,
    ) -> Result<(), E> {
        match &mut self.run {
            Run::Sequential { .. } => Ok(()),
            Run::Split(d) => d.push(None, &mut |r| r.labelled(&mut done)),
        }
    }

    /// The labels of every document still in flight, in order, to `done`;
    /// then what the table shows.
    pub fn finish<E: From<SplitError>>(
        self,
        mut done: impl FnMut(Labelled<'_, T>) -> Result<(), E>,
    ) -> Result<Ended, E> {
        match self.run {
            Run::Sequential { pass, .. } => Ok(Ended::Table(pass.into_table())),
            Run::Split(d) => d.finish(&mut |r| r.labelled(&mut done)),
        }
    }
}

/// A document's answers from the table, given back in document order for
/// the caller to label (`Labeller::label` with these arguments), where the
/// earlier documents' keys are the caller's to read (the index's, from a
/// transaction).
pub struct Answered<T> {
    /// The document's id, as handed over.
    pub id: u32,
    /// Its selected units, as handed over.
    pub units: Vec<Unit>,
    /// Each unit's hit, as `Table::lookup_document` gives them.
    pub hits: Vec<Option<Hit>>,
    /// Each unit's slot, as `Table::lookup_document` gives them (labelling
    /// reads whether its key was sampled).
    pub slots: Vec<Slot>,
    /// Whether the table had lost or left out keys by the end of the
    /// document's lookups (false where the settings do not align).
    pub incomplete: bool,
    /// What was handed over with it.
    pub payload: T,
}

/// The lookups of the pass split by bucket range, labelled by the caller:
/// [`SplitPass`]'s table and order, on one process's workers, for a caller
/// that hands documents over a batch at a time and must have every answer
/// of a batch before the next ([`SplitLookups::flush`]). The table stays
/// split from one batch to the next and is joined once, at the end.
pub struct SplitLookups<T> {
    flow: Box<Dataflow<T>>,
}

impl<T: Payload> SplitLookups<T> {
    /// `workers` threads over `table` (built with `params.table_params()`,
    /// fresh or restored); refused where the table does not split
    /// ([`splits`]).
    pub fn new(
        params: Params,
        table: Table,
        workers: usize,
    ) -> Result<SplitLookups<T>, SplitError> {
        if !splits(&params) {
            return Err(unsplit(&params));
        }
        let flow = Dataflow::start(params, table, Options::new(workers), None)?;
        Ok(SplitLookups {
            flow: Box::new(flow),
        })
    }

    /// Hand over document `id` (later than every one before it) with its
    /// selected units; `done` gets the documents answered so far, in order.
    pub fn push<E: From<SplitError>>(
        &mut self,
        id: u32,
        units: Vec<Unit>,
        payload: T,
        mut done: impl FnMut(Answered<T>) -> Result<(), E>,
    ) -> Result<(), E> {
        self.flow
            .push(Some((id, units, payload)), &mut |r| done(r.answered()))
    }

    /// Every document handed over to `done`, in order.
    pub fn flush<E: From<SplitError>>(
        &mut self,
        mut done: impl FnMut(Answered<T>) -> Result<(), E>,
    ) -> Result<(), E> {
        self.flow.flush(&mut |r| done(r.answered()))
    }

    /// The table the sequential pass would have left, once every document
    /// handed over has been given back ([`SplitLookups::flush`]).
    pub fn finish(self) -> Result<Table, SplitError> {
        let left = |_| Err(SplitError::Worker("a document was left unanswered".into()));
        match self.flow.finish(&mut |r: Ready<T>| left(r.id))? {
            Ended::Table(t) => Ok(t),
            Ended::Stats(_) | Ended::Elsewhere => unreachable!("one process joins its table"),
        }
    }
}

/// Why `params`' table is not split (see [`splits`]).
fn unsplit(params: &Params) -> SplitError {
    SplitError::Unsplit(if params.eviction == Eviction::Lucky {
        "lucky eviction"
    } else {
        "an unbounded table"
    })
}

/// Whether `params`' table is split by bucket range: every eviction but
/// Lucky, a bounded table.
pub fn splits(params: &Params) -> bool {
    params.eviction != Eviction::Lucky && params.table_size != TableSize::Unbounded
}

/// What the caller sends a worker.
enum Msg<T> {
    /// A document to hand out: its place in the run, id, units and what
    /// comes back with its labels.
    Doc {
        seq: u32,
        id: u32,
        units: Vec<Unit>,
        payload: T,
    },
    /// The epoch is over, after this many places in the run.
    End(u64),
}

/// A lookup on its way to a shard: (seq << 32 | position, key, document id,
/// the insert's offset, previous and next bytes).
type Lookup = (u64, u64, u32, u32);

/// A document on its way to its owner: seq, id, units, payload.
type Record<T> = (u32, u32, Vec<Unit>, T);

/// An answer on its way to the owner: (seq << 32 | position, answer as
/// [`pack`] writes it), 16 bytes; the owner is seq's. Position [`EVICTED`]
/// says the shard first evicted during document seq, the answer then the
/// owner it goes to (every owner gets one).
type Answer = (u64, u64);

/// A shard's figures at the end of a run over many processes: its first
/// bucket, counters (lookups, hits, inserts, evictions, occupied) and, for
/// bottom-k, its buckets' distinct estimates ([`Shard::distinct_terms`]).
type Summary = (u64, [u64; 5], Vec<f64>);

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

/// A document answered (and, where its owner labels, labelled), on its way
/// back to the caller.
struct Ready<T> {
    seq: u32,
    id: u32,
    units: Vec<Unit>,
    given: Given,
    payload: T,
    /// The epoch it ends, where the shards checkpoint there.
    checkpoint: Option<Point>,
}

/// What the owner gives back of a document.
enum Given {
    /// Its labels, where the owner labels ([`SplitPass`]).
    Labels(Vec<u32>),
    /// The table's answers, where the caller labels ([`SplitLookups`]).
    Answers(Answers),
}

impl<T> Ready<T> {
    fn answered(self) -> Answered<T> {
        let Given::Answers(a) = self.given else {
            unreachable!("the owners of split lookups give answers back")
        };
        Answered {
            id: self.id,
            units: self.units,
            hits: a.hits,
            slots: a.slots,
            incomplete: a.incomplete,
            payload: self.payload,
        }
    }

    /// To `done` as the owner labelled it.
    fn labelled<E>(self, done: &mut impl FnMut(Labelled<'_, T>) -> Result<(), E>) -> Result<(), E> {
        let Given::Labels(labels) = self.given else {
            unreachable!("the owners of the split pass label")
        };
        done(Labelled {
            id: self.id,
            units: self.units,
            labels: &labels,
            payload: self.payload,
            checkpoint: self.checkpoint,
        })
    }
}

/// The table's answers to a document's lookups, for the caller to label
/// with (see [`Answered`]).
struct Answers {
    hits: Vec<Option<Hit>>,
    slots: Vec<Slot>,
    incomplete: bool,
}

/// What the workers tell the caller beside the labels.
struct Progress {
    /// Epochs before this one are answered everywhere.
    passed: AtomicU64,
    /// Workers that stopped by a panic.
    stopped: AtomicUsize,
    /// Workers whose work is over, by a panic or not (their threads then
    /// end without waiting on anyone).
    ended: AtomicUsize,
    /// Why a checkpoint could not be written: the run ends with it.
    unwritten: Mutex<Option<String>>,
    caller: Thread,
}

/// Counts a worker's panic for the caller, who may be waiting on it.
struct Watch(Arc<Progress>);

impl Drop for Watch {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.stopped.fetch_add(1, Ordering::SeqCst);
        }
        self.0.ended.fetch_add(1, Ordering::SeqCst);
        self.0.caller.unpark();
    }
}

/// The caller's side of the split pass: workers to send to, labels to
/// gather, documents in flight.
struct Dataflow<T> {
    senders: Vec<Sender<Msg<T>>>,
    threads: Vec<Thread>,
    ready: Receiver<Result<Ready<T>, String>>,
    guards: Option<WorkerGuards<Option<Shard>>>,
    progress: Arc<Progress>,
    /// Places in the run handed out or passed over.
    next: u32,
    /// Labelled documents not yet given back, from seq `given` (process 0).
    early: VecDeque<Option<Ready<T>>>,
    given: u32,
    /// Epochs closed, and what the open one holds.
    epochs: u64,
    units: usize,
    docs: usize,
    /// Over many processes: documents an epoch holds; this process's
    /// place; the shards' figures, gathered at worker 0; the figures of
    /// the table as it started.
    epoch_docs: Option<usize>,
    cluster: Option<Cluster>,
    gathered: Arc<Mutex<Vec<Summary>>>,
    fresh: ReplayStats,
    bottom_k: bool,
    options: Options,
    /// Where the run continued from (the start, or a checkpoint).
    from: Point,
    /// Checkpointed epochs whose documents are not all given back yet, and
    /// the places at the last epoch's end.
    marks: VecDeque<Point>,
    last_end: u64,
}

impl<T: Payload> Dataflow<T> {
    /// `origins`: where the owners keep and read the keys for alignment,
    /// as they label; `None` where the caller labels.
    fn start(
        params: Params,
        table: Table,
        mut options: Options,
        origins: Option<Origins>,
    ) -> Result<Dataflow<T>, SplitError> {
        let (process, processes) = options.share();
        // Alignment's "has the table lost keys" holds from the start when
        // the table it continues had evicted.
        let evicted_before = table.counters().evictions > 0;
        let fresh = ReplayStats::of_table(&table, &params);
        // Every process splits the same table the same way and keeps its
        // own ranges.
        let shards = table.split(most_threads(&options) * processes)?;
        drop(table);
        let workers = threads(&options, shards.len());
        let peers = workers * processes;
        // Epochs the size of the threads there are, not of those asked for.
        options.epoch_units = options.epoch_units.min(EPOCH_UNITS_PER_WORKER * workers);
        let ranges = Ranges::of(&shards);
        let mut shards: Vec<Option<Shard>> = shards.into_iter().map(Some).collect();
        shards.resize_with(peers, || None);
        let mut shards: Vec<Option<Shard>> = shards
            .drain(process * workers..(process + 1) * workers)
            .collect();
        // Where to continue from: agreed in the hello over many processes,
        // before timely takes the connections.
        let (held, foreign) = held_here(options.checkpoints.as_ref(), &shards)?;
        let (allocators, from) = match &options.cluster {
            None => (
                None,
                resume::newest_common(&[held], &|_| "this process".into()),
            ),
            Some(c) => match cluster::allocators(c, workers, &held) {
                Ok((a, from)) => (Some(a), Ok(from)),
                Err(SplitError::Resume(e)) => (None, Err(e)),
                Err(e) => return Err(e),
            },
        };
        // This process's own checkpoint of other settings is said as such.
        let from = match (from, foreign) {
            (Ok(from), _) => from,
            (Err(_), Some(f)) => return Err(SplitError::Resume(f.to_string())),
            (Err(e), None) => return Err(SplitError::Resume(e)),
        };
        if let Some(c) = &options.checkpoints {
            restore(c, from, &mut shards)?;
        }
        let evicted_before = evicted_before || from.evicted;
        let (senders, receivers): (Vec<_>, Vec<_>) = (0..workers).map(|_| mpsc::channel()).unzip();
        let (labelled, ready) = mpsc::channel();
        let progress = Arc::new(Progress {
            passed: AtomicU64::new(from.epoch),
            stopped: AtomicUsize::new(0),
            ended: AtomicUsize::new(0),
            unwritten: Mutex::new(None),
            caller: std::thread::current(),
        });
        let gathered = Arc::new(Mutex::new(Vec::new()));
        let aligns = params.aligns();
        let keys = origins.map(|store| {
            Arc::new(Mutex::new(Arriving {
                store,
                next: from.places as u32,
                early: BTreeMap::new(),
            }))
        });
        // Each worker takes its own: the closure is shared by all.
        let shards = Mutex::new(shards);
        let receivers = Mutex::new(receivers.into_iter().map(Some).collect::<Vec<_>>());
        let labelled = Mutex::new(labelled);
        let (p, g) = (progress.clone(), gathered.clone());
        let many = options.cluster.is_some();
        let checkpoints = options.checkpoints.clone();
        let window = options.window;
        let func = move |worker: &mut Worker| {
            let local = worker.index() % workers;
            let shard = take(&shards, local);
            let rx = take(&receivers, local).expect("one receiver a worker");
            let tx = labelled
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone();
            let view = keys.clone().map(|keys| Shared {
                keys,
                buf: Vec::new(),
            });
            let _watch = Watch(p.clone());
            let w = Work {
                ranges: ranges.clone(),
                params,
                evicted_before,
                owners: workers,
                aligns,
                progress: p.clone(),
                checkpoints: checkpoints.clone(),
                from,
                window,
            };
            let shard = w.run(worker, shard, rx, tx, view);
            if many {
                gather(
                    worker,
                    shard.as_ref(),
                    params.eviction == Eviction::BottomK,
                    &g,
                );
            }
            shard
        };
        let guards = match allocators {
            None => timely::execute(timely::Config::process(workers), func),
            Some((builders, others)) => {
                timely::execute::execute_from(builders, others, WorkerConfig::default(), func)
            }
        }
        .map_err(SplitError::Start)?;
        let threads = guards.guards().iter().map(|g| g.thread().clone()).collect();
        Ok(Dataflow {
            senders,
            threads,
            ready,
            guards: Some(guards),
            progress,
            next: from.places as u32,
            early: VecDeque::new(),
            given: from.places as u32,
            epochs: from.epoch,
            units: 0,
            docs: 0,
            epoch_docs: many.then_some(EPOCH_DOCS_PER_WORKER * peers),
            cluster: options.cluster.clone(),
            gathered,
            fresh,
            bottom_k: params.eviction == Eviction::BottomK,
            options,
            from,
            marks: VecDeque::new(),
            last_end: from.places,
        })
    }

    /// Whether this process gets the labels back (process 0, or alone).
    fn gives_back(&self) -> bool {
        self.cluster.as_ref().is_none_or(|c| c.process == 0)
    }

    /// Queue `msg` for `worker` without waking it: a document's lookups
    /// wait for its epoch's end anyway, so a worker is woken once an epoch
    /// ([`Dataflow::end_epoch`]), not once a document.
    fn send(&self, worker: usize, msg: Msg<T>) {
        // A worker gone has panicked: the caller learns it from the labels.
        let _ = self.senders[worker].send(msg);
    }

    /// Hand a document out (or, read elsewhere, pass over its place).
    fn push<E: From<SplitError>>(
        &mut self,
        doc: Option<(u32, Vec<Unit>, T)>,
        done: &mut dyn FnMut(Ready<T>) -> Result<(), E>,
    ) -> Result<(), E> {
        let seq = self.next;
        self.next += 1;
        if let Some((id, units, payload)) = doc {
            self.units += units.len();
            self.send(
                seq as usize % self.senders.len(),
                Msg::Doc {
                    seq,
                    id,
                    units,
                    payload,
                },
            );
        }
        self.docs += 1;
        let full = match self.epoch_docs {
            Some(docs) => self.docs >= docs,
            None => self.units >= self.options.epoch_units,
        };
        if full {
            self.end_epoch();
        }
        self.give_back(false, done)?;
        while self
            .epochs
            .saturating_sub(self.progress.passed.load(Ordering::SeqCst))
            > self.options.window as u64
        {
            self.check()?;
            std::thread::park_timeout(Duration::from_millis(50));
            self.give_back(false, done)?;
        }
        Ok(())
    }

    /// Every document handed out given back (ending the open epoch).
    fn flush<E: From<SplitError>>(
        &mut self,
        done: &mut dyn FnMut(Ready<T>) -> Result<(), E>,
    ) -> Result<(), E> {
        if self.docs > 0 {
            self.end_epoch();
        }
        while self.given < self.next {
            self.give_back(true, done)?;
        }
        Ok(())
    }

    fn end_epoch(&mut self) {
        for w in 0..self.senders.len() {
            self.send(w, Msg::End(u64::from(self.next)));
            self.threads[w].unpark();
        }
        // The shards checkpoint at this epoch (they follow the same rule):
        // the caller keeps its part once its documents are given back.
        let places = u64::from(self.next);
        if let Some(c) = &self.options.checkpoints
            && checkpoint::is_due(c.every, self.last_end, places)
            && self.gives_back()
        {
            self.marks.push_back(Point {
                epoch: self.epochs + 1,
                places,
                evicted: false,
            });
        }
        self.last_end = places;
        self.epochs += 1;
        self.units = 0;
        self.docs = 0;
    }

    /// A worker's panic, or a lost process, as an error.
    fn check(&self) -> Result<(), SplitError> {
        if let Some(lost) = self.cluster.as_ref().and_then(cluster::lost) {
            return Err(SplitError::Lost(lost));
        }
        if self.progress.stopped.load(Ordering::SeqCst) > 0 {
            return Err(SplitError::Worker("it panicked".into()));
        }
        let unwritten = self.progress.unwritten.lock();
        if let Some(e) = unwritten.unwrap_or_else(PoisonError::into_inner).as_ref() {
            return Err(SplitError::Checkpoint(e.clone()));
        }
        Ok(())
    }

    /// Gather the labels the workers sent (waiting for one if `wait`) and
    /// give back the documents ready, in order.
    fn give_back<E: From<SplitError>>(
        &mut self,
        wait: bool,
        done: &mut dyn FnMut(Ready<T>) -> Result<(), E>,
    ) -> Result<(), E> {
        if !self.gives_back() {
            return Ok(());
        }
        let mut next = if wait {
            // Checked between waits: a worker that panicked leaves the
            // others waiting on it, still holding their senders.
            loop {
                match self.ready.recv_timeout(Duration::from_millis(50)) {
                    Ok(got) => break Some(got),
                    Err(RecvTimeoutError::Timeout) => self.check()?,
                    Err(RecvTimeoutError::Disconnected) => return Err(self.stopped().into()),
                }
            }
        } else {
            None
        };
        loop {
            if let Some(r) = next.take() {
                let r = r.map_err(SplitError::Keys)?;
                let at = (r.seq - self.given) as usize;
                if self.early.len() <= at {
                    self.early.resize_with(at + 1, || None);
                }
                self.early[at] = Some(r);
            }
            match self.ready.try_recv() {
                Ok(got) => next = Some(got),
                Err(TryRecvError::Empty | TryRecvError::Disconnected) => break,
            }
        }
        while self.early.front().is_some_and(Option::is_some) {
            let Some(Some(mut r)) = self.early.pop_front() else {
                break;
            };
            self.given += 1;
            if self
                .marks
                .front()
                .is_some_and(|m| m.places == u64::from(self.given))
            {
                r.checkpoint = self.marks.pop_front();
            }
            done(r)?;
        }
        Ok(())
    }

    /// Why the labels stopped coming.
    fn stopped(&self) -> SplitError {
        match self.check() {
            Err(e) => e,
            Ok(()) => SplitError::Worker("its labels stopped".into()),
        }
    }

    fn finish<E: From<SplitError>>(
        mut self,
        done: &mut dyn FnMut(Ready<T>) -> Result<(), E>,
    ) -> Result<Ended, E> {
        // Closed inputs end the last epoch.
        self.close();
        if self.gives_back() {
            while self.given < self.next {
                self.give_back(true, done)?;
            }
        }
        // A worker panicked: the others may wait on it forever, so they are
        // not joined (`Drop` leaves them to the process's end).
        if self.cluster.is_none()
            && let Some(g) = &self.guards
            && !all_ended(g, &self.progress)
        {
            return Err(self.stopped().into());
        }
        let guards = self
            .guards
            .take()
            .ok_or(SplitError::Worker("joined".into()))?;
        // A lost connection panics the network thread that timely joins
        // when its guards go: that panic is the loss, said below.
        let joined = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| guards.join()));
        self.check()?;
        let joined = joined.map_err(|_| SplitError::Worker("its network stopped".into()))?;
        let mut shards = Vec::new();
        for r in joined {
            shards.extend(r.map_err(SplitError::Worker)?);
        }
        // The run is whole: its checkpoints are of no more use.
        if let Some(c) = &self.options.checkpoints {
            for s in &shards {
                checkpoint::remove(&c.dir, s.range().start, None);
            }
        }
        match &self.cluster {
            None => Table::join(shards)
                .map(Ended::Table)
                .ok_or_else(|| SplitError::Worker("the shards do not join".into()).into()),
            Some(c) if c.process == 0 => Ok(Ended::Stats(self.stats())),
            Some(_) => Ok(Ended::Elsewhere),
        }
    }

    /// What the shards over every process show, as the joined table would.
    fn stats(&self) -> ReplayStats {
        let mut shards = self
            .gathered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        shards.sort_by_key(|s| s.0);
        let mut c = Counters::default();
        for (_, [lookups, hits, inserts, evictions, occupied], _) in &shards {
            c.lookups += lookups;
            c.hits += hits;
            c.inserts += inserts;
            c.evictions += evictions;
            c.occupied += occupied;
        }
        let terms = self
            .bottom_k
            .then(|| shards.iter().flat_map(|s| s.2.iter().copied()));
        ReplayStats {
            counters: c,
            regime: Regime::of(c, terms),
            ..self.fresh
        }
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
    /// stop; a panic of theirs is not raised again here. Where one
    /// panicked, the others, who may wait on it forever, are left to the
    /// process's end, as they are over many processes: the others may be
    /// gone, and timely's network threads panic when joined then.
    fn drop(&mut self) {
        self.senders.clear();
        for t in &self.threads {
            t.unpark();
        }
        if let Some(g) = self.guards.take() {
            if self.cluster.is_none() && all_ended(&g, &self.progress) {
                let _ = g.join();
            } else {
                std::mem::forget(g);
            }
        }
    }
}

/// Waits until every worker's work is over (true), or one has panicked
/// (false): the others may then wait on it forever, and joining them would
/// too.
fn all_ended(guards: &WorkerGuards<Option<Shard>>, progress: &Progress) -> bool {
    loop {
        if progress.stopped.load(Ordering::SeqCst) > 0 {
            return false;
        }
        if progress.ended.load(Ordering::SeqCst) >= guards.guards().len() {
            return true;
        }
        // A worker unparks the caller as its work ends (`Watch`).
        std::thread::park_timeout(Duration::from_millis(50));
    }
}

/// Threads of one process: as many as asked, but no more than the table has
/// bucket ranges or the machine has cores, whichever is more, and never
/// more than [`MOST_THREADS`] beyond the cores. Every pair of workers has
/// channels: a thousand on a fresh table, which splits into 16 to 31
/// ranges, took 1.7 GB and 10 s for 20 pages, and on a table that had
/// filled (an index catching up), 1.6 GB and 15 s for one changed page.
/// Threads beyond the cores only take turns; a few are allowed so that a
/// split over more workers than cores runs, and is tested, on a small
/// machine. Over many processes every process must count the same, and the
/// machines' cores may differ: no more than its share of the ranges, which
/// every process splits alike. `ranges` is what the table split into, for
/// [`most_threads`] at most, so every range has its worker.
fn threads(options: &Options, ranges: usize) -> usize {
    let asked = most_threads(options);
    let (_, processes) = options.share();
    if options.cluster.is_some() {
        return asked.min(ranges.div_ceil(processes).max(1));
    }
    asked.min(ranges.max(cores()))
}

/// The threads asked for, at most [`MOST_THREADS`] beyond the cores (over
/// many processes, as asked: every process must count the same).
fn most_threads(options: &Options) -> usize {
    let asked = options.workers.max(1);
    match options.cluster {
        Some(_) => asked,
        None => asked.min(cores().max(MOST_THREADS)),
    }
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// Threads of one process at most, where the machine has fewer cores.
const MOST_THREADS: usize = 64;

/// What this process holds to continue from, and, where its checkpoints
/// are of other settings or files, its own line for it (it still says
/// hello, so that every other process refuses too, naming it).
fn held_here(
    c: Option<&Checkpoints>,
    shards: &[Option<Shard>],
) -> Result<(Held, Option<CheckpointError>), SplitError> {
    let firsts: Vec<usize> = shards.iter().flatten().map(|s| s.range().start).collect();
    let Some(c) = c.filter(|c| c.resume) else {
        return Ok((Held::Points(vec![Point::START]), None));
    };
    let held = match checkpoint::held(c, &firsts) {
        Ok(held) => held,
        Err(e @ CheckpointError::Foreign(_)) => return Ok((Held::Foreign, Some(e))),
        Err(CheckpointError::Unusable(e)) => return Err(SplitError::Resume(e)),
    };
    Ok((
        match &c.caller_holds {
            Some(points) => held.within(points),
            None => held,
        },
        None,
    ))
}

/// This process's shards as their checkpoints at `from` hold them, and the
/// files of later epochs removed: the run writes them again as it goes.
/// Only once every process has agreed: a process started without
/// `--resume` by mistake, and refused, keeps its files for the next try.
fn restore(c: &Checkpoints, from: Point, shards: &mut [Option<Shard>]) -> Result<(), SplitError> {
    // A fresh run: old checkpoints of another run would only mislead a
    // later resume (this process's own go below).
    if !c.resume {
        for path in checkpoint::foreign_in(&c.dir, c.check) {
            let _ = std::fs::remove_file(path);
        }
    }
    for shard in shards.iter_mut().flatten() {
        let first = shard.range().start;
        if from.epoch > 0 {
            let path = checkpoint::shard_path(&c.dir, first, from.epoch);
            let places =
                read_shard(c, &path, shard).map_err(|e| SplitError::Resume(e.to_string()))?;
            if places != from.places {
                return Err(SplitError::Resume(format!(
                    "checkpoint {} holds {places} places, where the processes agreed on {}",
                    path.display(),
                    from.places
                )));
            }
        }
        checkpoint::remove(&c.dir, first, Some(from.epoch));
    }
    Ok(())
}

/// Worker `i`'s own of what the workers share out.
fn take<X>(v: &Mutex<Vec<Option<X>>>, i: usize) -> Option<X> {
    let mut v = v.lock().unwrap_or_else(PoisonError::into_inner);
    v.get_mut(i).and_then(Option::take)
}

/// The keys of documents as they arrive at their owners, kept in document
/// order: a document that arrives before an earlier one waits here.
struct Arriving {
    store: Origins,
    next: u32,
    early: BTreeMap<u32, (u32, Vec<u64>)>,
}

impl Arriving {
    fn keep(&mut self, seq: u32, id: u32, keys: Vec<u64>) -> Result<(), String> {
        self.early.insert(seq, (id, keys));
        let mut store = self.store.lock().unwrap_or_else(PoisonError::into_inner);
        while let Some((id, keys)) = self.early.remove(&self.next) {
            store.keep(id, keys)?;
            self.next += 1;
        }
        Ok(())
    }
}

/// The kept keys as one owner reads them: a key list is copied out under
/// the lock. (Every document before the one labelled has been kept: all
/// of its epoch and the ones before have arrived.)
struct Shared {
    keys: Arc<Mutex<Arriving>>,
    buf: Vec<u64>,
}

impl OriginKeys for Shared {
    fn keys(&mut self, id: u32) -> Option<&[u64]> {
        let a = self.keys.lock().unwrap_or_else(PoisonError::into_inner);
        let mut o = a.store.lock().unwrap_or_else(PoisonError::into_inner);
        let keys = o.keys(id)?;
        self.buf.clear();
        self.buf.extend_from_slice(keys);
        Some(&self.buf)
    }
}

/// A document its owner waits on: its record and answers fill in as they
/// come, in either order.
struct Owned<T> {
    /// The record's epoch, id, units and payload.
    record: Option<(u64, u32, Vec<Unit>, T)>,
    hits: Vec<Option<Hit>>,
    slots: Vec<Slot>,
}

impl<T> Owned<T> {
    fn new() -> Owned<T> {
        Owned {
            record: None,
            hits: Vec::new(),
            slots: Vec::new(),
        }
    }

    fn fit(&mut self, n: usize) {
        if self.hits.len() < n {
            self.hits.resize(n, None);
            self.slots.resize(n, Slot::of_sample(true));
        }
    }
}

/// An owner's documents in flight, from seq `next` every `step`-th, and
/// the first document during which any shard had evicted.
struct Owner<T> {
    docs: VecDeque<Owned<T>>,
    next: u32,
    step: u32,
    evicted_from: Option<u32>,
    /// Keeping the keys failed: the run ends with this.
    failed: Option<String>,
}

impl<T> Owner<T> {
    fn at(&mut self, seq: u32) -> Option<&mut Owned<T>> {
        let at = (seq.checked_sub(self.next)? / self.step) as usize;
        if self.docs.len() <= at {
            self.docs.resize_with(at + 1, Owned::new);
        }
        self.docs.get_mut(at)
    }

    /// A message of answers, a run of one document's at a time: a shard
    /// answers in (seq, position) order, so the runs are long and each
    /// document is found once a run, not once an answer.
    fn take(&mut self, answers: &[Answer]) {
        let mut rest = answers;
        while let Some(&(order, _)) = rest.first() {
            let seq = (order >> 32) as u32;
            if order as u32 == EVICTED {
                self.evicted_from = Some(self.evicted_from.map_or(seq, |e| e.min(seq)));
                rest = &rest[1..];
                continue;
            }
            let run = rest
                .iter()
                .take_while(|&&(o, _)| o >> 32 == order >> 32 && o as u32 != EVICTED)
                .count();
            let (mine, next) = rest.split_at(run);
            rest = next;
            if let Some(d) = self.at(seq) {
                let last = mine.iter().map(|&(o, _)| o as u32).max().unwrap_or(0);
                d.fit(last as usize + 1);
                for &(o, a) in mine {
                    let pos = o as u32 as usize;
                    (d.hits[pos], d.slots[pos]) = unpack(a);
                }
            }
        }
    }

    fn arrive(&mut self, epoch: u64, (seq, id, units, payload): Record<T>) {
        if let Some(d) = self.at(seq) {
            d.fit(units.len());
            d.record = Some((epoch, id, units, payload));
        }
    }
}

/// The first place from `places` on that worker `index` owns, as owners
/// take every `owners`-th place.
fn first_owned(places: u64, index: usize, owners: usize) -> u32 {
    let owners = owners.max(1) as u64;
    let gap = (index as u64 % owners + owners - places % owners) % owners;
    (places + gap) as u32
}

/// What every worker runs with.
struct Work {
    ranges: Ranges,
    params: Params,
    evicted_before: bool,
    /// Process 0's workers, who own the documents.
    owners: usize,
    aligns: bool,
    progress: Arc<Progress>,
    checkpoints: Option<Checkpoints>,
    /// Where the run continues from.
    from: Point,
    /// Epochs in flight at most ([`Options::window`]).
    window: usize,
}

impl Work {
    /// One worker: its shard's operator, its documents' owner, and the loop
    /// that takes documents from the caller and gives their labels back.
    fn run<T: Payload>(
        self,
        worker: &mut Worker,
        shard: Option<Shard>,
        rx: Receiver<Msg<T>>,
        tx: Sender<Result<Ready<T>, String>>,
        mut origins: Option<Shared>,
    ) -> Option<Shard> {
        let Work {
            ranges,
            params,
            evicted_before,
            owners,
            aligns,
            progress,
            checkpoints,
            from,
            window,
        } = self;
        // The epochs to checkpoint at, by the count of epochs completed, with
        // the places they hold: learned as each epoch ends (the caller's
        // `Msg::End`), before the frontier can pass it; taken as written.
        let due = Rc::new(RefCell::new(BTreeMap::<u64, u64>::new()));
        let mut last_end = from.places;
        let (at_end, failed) = (due.clone(), progress.clone());
        let checkpoints_due = checkpoints.clone();
        let index = worker.index();
        let shard = Rc::new(RefCell::new(shard));
        let owner = Rc::new(RefCell::new(Owner::<T> {
            docs: VecDeque::new(),
            next: first_owned(from.places, index, owners),
            step: owners as u32,
            evicted_from: evicted_before.then_some(0),
            failed: None,
        }));
        let mut lookup_in = InputHandle::<u64, CapacityContainerBuilder<Vec<Lookup>>>::new();
        let mut record_in = InputHandle::<u64, CapacityContainerBuilder<Vec<Record<T>>>>::new();
        // A resumed run's first epoch is the one after its checkpoint.
        lookup_in.advance_to(from.epoch);
        record_in.advance_to(from.epoch);
        let probe = ProbeHandle::new();
        let arriving = origins.as_ref().map(|o| o.keys.clone());
        worker.dataflow::<u64, _, _>(|scope| {
            let (in_shard, in_owner, at_owner) = (shard.clone(), owner.clone(), owner.clone());
            let route = move |l: &Lookup| ranges.shard(l.1);
            lookup_in
                .to_stream(scope)
                .unary_frontier::<CapacityContainerBuilder<Vec<Answer>>, _, _, _>(
                    route::pact(route, MESSAGE_RECORDS),
                    "Shard",
                    move |_, _| {
                        // Each epoch's messages as they came, until it ends.
                        let mut stash: Vec<(Capability<u64>, Vec<Vec<Lookup>>)> = Vec::new();
                        let (mut runs, mut lookups) = (Vec::new(), Vec::new());
                        let mut evicted = evicted_before;
                        // The epochs of this shard's files, oldest first.
                        let first = in_shard.borrow().as_ref().map(|s| s.range().start);
                        let mut kept: VecDeque<u64> = match (&checkpoints, first) {
                            (Some(c), Some(first)) => {
                                checkpoint::kept(&c.dir, first, from.epoch).into()
                            }
                            _ => VecDeque::new(),
                        };
                        // Whether it has removed one (then it no longer holds
                        // the start), carried over a resume.
                        let mut past_start = match (&checkpoints, first) {
                            (Some(c), Some(first)) if from.epoch > 0 => {
                                checkpoint::past_start(c, first, from.epoch)
                            }
                            _ => false,
                        };
                        // The shard's state after the epochs due exactly:
                        // before any later one is applied. An epoch with no
                        // lookups here changes nothing, so the state holds
                        // from its last applied epoch to the frontier.
                        let mut write = move |shard: &Shard, upto: u64| {
                            let Some(c) = checkpoints.as_ref() else {
                                return;
                            };
                            loop {
                                let next = at_end.borrow().first_key_value().map(|(&e, &p)| (e, p));
                                let Some((epoch, places)) = next.filter(|&(e, _)| e <= upto) else {
                                    return;
                                };
                                at_end.borrow_mut().remove(&epoch);
                                kept.push_back(epoch);
                                past_start |= checkpoint::prunes(kept.make_contiguous(), window);
                                let written =
                                    checkpoint::write_shard(c, epoch, places, shard, past_start);
                                if let Err(e) = written {
                                    let mut u = failed
                                        .unwritten
                                        .lock()
                                        .unwrap_or_else(PoisonError::into_inner);
                                    u.get_or_insert_with(|| e.to_string());
                                }
                                while checkpoint::prunes(kept.make_contiguous(), window) {
                                    if let Some(old) = kept.pop_front() {
                                        let _ = std::fs::remove_file(checkpoint::shard_path(
                                            &c.dir,
                                            shard.range().start,
                                            old,
                                        ));
                                    }
                                }
                            }
                        };
                        move |(input, frontier), output| {
                            input.for_each_stamp(|cap, data| {
                                let Some(cap) = cap.retain_least(0) else {
                                    return;
                                };
                                let at =
                                    match stash.iter().position(|(c, _)| c.time() == cap.time()) {
                                        Some(at) => at,
                                        None => {
                                            stash.push((cap, Vec::new()));
                                            stash.len() - 1
                                        }
                                    };
                                for message in data {
                                    stash[at].1.push(std::mem::take(message));
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
                            for (cap, messages) in stash.drain(..ready) {
                                write(shard, *cap.time());
                                order::in_order(&messages, &mut runs, &mut lookups);
                                drop(messages);
                                // The epoch's answers go as one container (the
                                // route cuts it into messages), not a call each.
                                let mut answers = Vec::with_capacity(lookups.len() + owners);
                                let first_eviction = shard.lookup_sorted(
                                    &lookups,
                                    |&(_, key, id, ins)| (key, unpack_insert(id, ins)),
                                    |&(order, ..), hit, slot| {
                                        answers.push((order, pack(hit, slot)))
                                    },
                                );
                                if let Some(at) = first_eviction.filter(|_| !evicted) {
                                    evicted = true;
                                    let seq = lookups[at].0 >> 32;
                                    for w in 0..owners as u64 {
                                        answers.push((seq << 32 | u64::from(EVICTED), w));
                                    }
                                }
                                output.session(&cap).give_container(&mut answers);
                            }
                            // Epochs passed with nothing for this shard.
                            if let Some(&f) = frontier.frontier().iter().min() {
                                write(shard, f);
                            }
                        }
                    },
                )
                .unary::<CapacityContainerBuilder<Vec<()>>, _, _, _>(
                    route::pact(
                        move |&(order, answer): &Answer| {
                            if order as u32 == EVICTED {
                                answer as usize
                            } else {
                                ((order >> 32) % owners as u64) as usize
                            }
                        },
                        MESSAGE_RECORDS,
                    ),
                    "Owner",
                    move |_, _| {
                        move |input, _| {
                            input.for_each(|_, data| in_owner.borrow_mut().take(data));
                        }
                    },
                )
                .probe_with(&probe);
            record_in
                .to_stream(scope)
                .unary::<CapacityContainerBuilder<Vec<()>>, _, _, _>(
                    route::pact(
                        move |r: &Record<T>| r.0 as usize % owners,
                        MESSAGE_DOCUMENTS,
                    ),
                    "Arrive",
                    move |_, _| {
                        move |input, _| {
                            input.for_each(|cap, data| {
                                let Some(&epoch) = cap.least() else {
                                    return;
                                };
                                let mut o = at_owner.borrow_mut();
                                for r in data.drain(..) {
                                    // Kept as it arrives: before the epoch
                                    // passes, so before any later document
                                    // is labelled.
                                    if let Some(arriving) =
                                        arriving.as_ref().filter(|_| aligns && o.failed.is_none())
                                    {
                                        let doc_keys = r.2.iter().map(|u| u.key).collect();
                                        let mut k =
                                            arriving.lock().unwrap_or_else(PoisonError::into_inner);
                                        if let Err(e) = k.keep(r.0, r.1, doc_keys) {
                                            o.failed = Some(e);
                                        }
                                    }
                                    o.arrive(epoch, r);
                                }
                            });
                        }
                    },
                )
                .probe_with(&probe);
        });

        let mut labeller = Labeller::new(params);
        let mut inputs = Some((lookup_in, record_in));
        let mut lookups: Vec<Lookup> = Vec::new();
        let mut keys = Vec::new();
        loop {
            // What the caller sent.
            while let Some((lookup_in, record_in)) = inputs.as_mut() {
                match rx.try_recv() {
                    Ok(Msg::Doc {
                        seq,
                        id,
                        units,
                        payload,
                    }) => {
                        keys.clear();
                        keys.extend(units.iter().map(|u| u.key));
                        lookups.clear();
                        lookups.extend(keys.iter().enumerate().map(|(i, &key)| {
                            let ins = pack_insert(Hit::of_unit(id, &keys, i));
                            (u64::from(seq) << 32 | i as u64, key, id, ins)
                        }));
                        lookup_in.send_batch(&mut lookups);
                        record_in.send((seq, id, units, payload));
                    }
                    Ok(Msg::End(places)) => {
                        if let Some(c) = &checkpoints_due
                            && checkpoint::is_due(c.every, last_end, places)
                        {
                            due.borrow_mut().insert(*lookup_in.time() + 1, places);
                        }
                        last_end = places;
                        let next = *lookup_in.time() + 1;
                        lookup_in.advance_to(next);
                        record_in.advance_to(next);
                    }
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => inputs = None,
                }
            }
            // Parked until timely has work or the caller sends.
            let running = worker.step_or_park(None);
            // Label the documents whose epoch every shard has answered.
            loop {
                let mut o = owner.borrow_mut();
                if let Some(e) = o.failed.take() {
                    // The caller gone (it failed): the epochs still run out.
                    let _ = tx.send(Err(e));
                }
                let evicted_from = o.evicted_from;
                let passed = |d: &Owned<T>| {
                    d.record
                        .as_ref()
                        .is_some_and(|(epoch, ..)| !probe.less_equal(epoch))
                };
                if !o.docs.front().is_some_and(passed) {
                    break;
                }
                let seq = o.next;
                o.next += o.step;
                let Some(Owned {
                    record: Some((_, id, units, payload)),
                    hits,
                    slots,
                }) = o.docs.pop_front()
                else {
                    break;
                };
                drop(o);
                let incomplete =
                    || evicted_from.is_some_and(|e| e <= seq) || slots.iter().any(|s| !s.sampled());
                let given = match origins.as_mut() {
                    Some(origins) => {
                        keys.clear();
                        keys.extend(units.iter().map(|u| u.key));
                        let labels = labeller.label(id, &keys, &hits, &slots, incomplete, origins);
                        Given::Labels(labels.to_vec())
                    }
                    None => Given::Answers(Answers {
                        incomplete: aligns && incomplete(),
                        hits,
                        slots,
                    }),
                };
                let _ = tx.send(Ok(Ready {
                    seq,
                    id,
                    units,
                    given,
                    payload,
                    checkpoint: None,
                }));
            }
            // The first worker of each process tells its caller, waking it
            // only when an epoch has passed: a caller waits on epochs (its
            // window), never on one document's labels, which it takes as
            // they come (a wake-up a document was a futex call a document,
            // a trap to the sandbox under gVisor).
            if index.is_multiple_of(owners) {
                let passed = probe.with_frontier(|f| f.iter().min().copied().unwrap_or(u64::MAX));
                if progress.passed.fetch_max(passed, Ordering::SeqCst) < passed {
                    progress.caller.unpark();
                }
            }
            if !running {
                break;
            }
        }
        shard.borrow_mut().take()
    }
}

/// Over many processes: every shard's figures to worker 0 (of process 0),
/// which keeps them in `gathered`.
fn gather(
    worker: &mut Worker,
    shard: Option<&Shard>,
    bottom_k: bool,
    gathered: &Mutex<Vec<Summary>>,
) {
    let mut input = InputHandle::<u64, CapacityContainerBuilder<Vec<Summary>>>::new();
    let got = Rc::new(RefCell::new(Vec::new()));
    let into = got.clone();
    worker.dataflow::<u64, _, _>(|scope| {
        input
            .to_stream(scope)
            .unary::<CapacityContainerBuilder<Vec<()>>, _, _, _>(
                // One summary a shard, each sent as it is given.
                route::pact(|_: &Summary| 0, 1),
                "Gather",
                move |_, _| {
                    move |input, _| {
                        input.for_each(|_, data| into.borrow_mut().extend(data.drain(..)));
                    }
                },
            );
    });
    if let Some(s) = shard {
        let c = s.counters();
        let terms = if bottom_k {
            s.distinct_terms()
        } else {
            Vec::new()
        };
        input.send((
            s.range().start as u64,
            [c.lookups, c.hits, c.inserts, c.evictions, c.occupied],
            terms,
        ));
    }
    drop(input);
    while worker.step_or_park(None) {}
    if worker.index() == 0 {
        let mut g = gathered.lock().unwrap_or_else(PoisonError::into_inner);
        g.extend(got.borrow_mut().drain(..));
    }
}
