//! `scan`'s documents written on a thread of their own: the thread of the
//! pass hands each one over and goes on, while this one builds its outcome
//! (where the split pass gave labels), writes its JSON and keeps what the
//! summary needs. With many workers the thread of the pass is the one that
//! runs alone, and these were most of its work (BENCHMARKS.md, "The pass
//! split by bucket range").

use std::io::{BufWriter, Write};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread::JoinHandle;

use lineage_origin::{Outcome, Unit};

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

/// The thread that writes the documents.
pub(super) struct Writer {
    tx: Option<SyncSender<(Entry, String)>>,
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
        let sent = self.tx.as_ref().map(|tx| tx.send((doc, path)));
        match sent {
            Some(Ok(())) => Ok(()),
            // The thread ends early only on an error: that is the one to give.
            _ => Err(self.finish().err().unwrap_or_else(gone)),
        }
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

fn write(mut out: Sink, json: bool, rx: Receiver<(Entry, String)>) -> Written {
    let mut seen = Seen::default();
    for (doc, path) in rx {
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
