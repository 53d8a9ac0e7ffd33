//! `scan`'s documents written on a thread of their own: the thread of the
//! pass hands each one over and goes on, while this one builds its outcome
//! (where the split pass gave labels), writes its JSON and keeps what the
//! summary needs. With many workers the thread of the pass is the one that
//! runs alone, and these were most of its work (BENCHMARKS.md, "The pass
//! split by bucket range").
//!
//! Over many processes with checkpoints, process 0's writer also keeps the
//! journal of what the pass gave back ([`Journal`]): it sees every
//! document in order already, and the thread of the pass stays free.

use std::io::{BufWriter, Write};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread::JoinHandle;

use lineage_origin::{Outcome, Unit};
use lineage_split::Point;

use super::journal::Journal;
use super::{DocJson, Fatal, Seen};

/// A document of the report, in document order.
pub(super) enum Entry {
    /// From the sequential pass.
    Done(Outcome),
    /// From the split pass: its units and each one's origin.
    Labelled {
        id: u32,
        tokens: u32,
        shingles: u32,
        units: Vec<Unit>,
        labels: Vec<u32>,
    },
}

/// Documents handed over and not yet written, at most: enough to ride out
/// a slow write, few enough that memory stays a batch's.
const IN_FLIGHT: usize = 256;

/// Where the report goes: standard output or `-o FILE`'s temp file.
pub(super) type Sink = BufWriter<Box<dyn Write + Send>>;

type Written = Result<(Sink, Seen), Fatal>;

/// What the writer is handed, in order.
enum Item {
    /// A document of the report, and its path.
    Doc(Entry, String),
    /// A file the pass left out (path, why): in the journal only, the
    /// report lists them at its end.
    Skipped(String, String),
    /// Every document of a checkpointed epoch is in: said back once
    /// synced.
    Mark(Point, SyncSender<()>),
    /// The journal to keep from here on (what came before is in it).
    Keep(Journal),
}

/// The thread that writes the documents.
pub(super) struct Writer {
    tx: Option<SyncSender<Item>>,
    thread: Option<JoinHandle<Written>>,
}

impl Writer {
    /// Write each document to `out` as JSON (where `json`, after the report's
    /// opening written there already), and keep the summary's figures.
    pub(super) fn start(out: Sink, json: bool) -> Writer {
        let (tx, rx) = mpsc::sync_channel(IN_FLIGHT);
        Writer {
            tx: Some(tx),
            thread: Some(std::thread::spawn(move || write(out, json, rx))),
        }
    }

    /// Hand over the next document; where the writing has failed, its error.
    pub(super) fn send(&mut self, doc: Entry, path: String) -> Result<(), Fatal> {
        self.hand(Item::Doc(doc, path))
    }

    /// A file the pass left out, for the journal.
    pub(super) fn skipped(&mut self, path: String, reason: String) -> Result<(), Fatal> {
        self.hand(Item::Skipped(path, reason))
    }

    /// Every document of checkpointed epoch `at` has been handed over:
    /// back once the journal holds them, synced. The pass waits here, once
    /// a checkpoint, so that the journal keeps up with the shards' files:
    /// each keeps only its newest few, and a journal the documents in
    /// flight behind (hundreds) could hold none of the same epochs.
    pub(super) fn mark(&mut self, at: Point) -> Result<(), Fatal> {
        let (ack, synced) = mpsc::sync_channel(1);
        self.hand(Item::Mark(at, ack))?;
        match synced.recv() {
            Ok(()) => Ok(()),
            Err(_) => Err(self.finish().err().unwrap_or_else(gone)),
        }
    }

    /// Keep `journal` of every document handed over from now on.
    pub(super) fn keep(&mut self, journal: Journal) -> Result<(), Fatal> {
        self.hand(Item::Keep(journal))
    }

    fn hand(&mut self, item: Item) -> Result<(), Fatal> {
        if self.tx.as_ref().is_some_and(|tx| tx.send(item).is_ok()) {
            return Ok(());
        }
        // The thread ends early only on an error: that is the one to give.
        Err(self.finish().err().unwrap_or_else(gone))
    }

    /// Wait for every document to be written; the output and the figures.
    pub(super) fn finish(&mut self) -> Written {
        drop(self.tx.take());
        let thread = self.thread.take();
        thread.ok_or_else(gone)?.join().map_err(|_| gone())?
    }
}

fn gone() -> Fatal {
    Fatal("the report's writer stopped".into())
}

fn write(mut out: Sink, json: bool, rx: Receiver<Item>) -> Written {
    let mut seen = Seen::default();
    let mut journal: Option<Journal> = None;
    let unkept =
        |e: std::io::Error| Fatal(format!("the report's checkpoint could not be written: {e}"));
    for item in rx {
        let (doc, path) = match item {
            Item::Doc(doc, path) => {
                if let Some(j) = journal.as_mut() {
                    j.doc(&doc, &path).map_err(unkept)?;
                }
                (doc, path)
            }
            Item::Skipped(path, reason) => {
                if let Some(j) = journal.as_mut() {
                    j.skipped(&path, &reason).map_err(unkept)?;
                }
                continue;
            }
            Item::Mark(at, ack) => {
                if let Some(j) = journal.as_mut() {
                    j.mark(at).map_err(unkept)?;
                }
                let _ = ack.send(());
                continue;
            }
            Item::Keep(j) => {
                journal = Some(j);
                continue;
            }
        };
        let o = match doc {
            Entry::Done(o) => o,
            Entry::Labelled {
                id,
                tokens,
                shingles,
                units,
                labels,
            } => Outcome::new(
                id,
                tokens,
                shingles,
                units.iter().map(|u| (u.start, u.end)),
                &labels,
            ),
        };
        if json {
            if o.id > 0 {
                out.write_all(b",")?;
            }
            super::super::show::json(&mut out, &DocJson::new(&o, &path))?;
        }
        seen.add(&o, &path);
    }
    Ok((out, seen))
}
