//! `lineage scan ROOT`: every document's origins under one setting.
//!
//! Documents stream through: a batch is read, tokenized, keyed and selected
//! in parallel, then goes through the origin pass in order, and each
//! document's result is written as it comes. What stays is the table, one
//! batch, and a path and a few numbers a document for the summary, so memory
//! does not grow with the text (docs/reference.md, "Memory").

use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};

use clap::Args;
use serde::Serialize;

use super::spill::{self, KeySpill};
use super::{CommonEngineArgs, Fatal, PathJson, SourceArgs, WorkersArgs};
use lineage_config::Config;
use lineage_core::bytesize::grouped;
use lineage_core::fingerprint::token_fps;
use lineage_origin::history::ReplayStats;
use lineage_origin::prepare::{self, Prepared, Preparer};
use lineage_origin::table::Table;
use lineage_origin::{
    Estimation, Eviction, OriginPass, Outcome, Params, Regime, Selector, TableSize,
};
use lineage_source::corpus::{self, Part, Share};
use lineage_source::{FileEntry, Filter};
use lineage_split::{Checkpoints, Cluster, Labelled, Options, SplitPass};

mod agreement;
mod journal;

mod resume;
mod writer;

use super::output::Output;
use agreement::agreement;
use journal::{Journal, Record};
use writer::{Entry, Writer};

#[derive(Args, Debug)]
pub(super) struct ScanArgs {
    #[command(flatten)]
    pub(super) source: SourceArgs,
    /// Print the JSON of docs/formats.md §6 report instead of a summary.
    #[arg(long)]
    json: bool,
    /// Write the report (what standard output would show) to FILE, whole or not at
    /// all: a temp file in FILE's folder renamed over it once complete; a link, FIFO
    /// or folder at FILE, or a FILE inside ROOT, is refused.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<std::path::PathBuf>,
    #[command(flatten)]
    workers: WorkersArgs,
    #[command(flatten)]
    many: ManyArgs,
    #[command(flatten)]
    checkpoints: resume::CheckpointArgs,
    #[command(flatten)]
    estimated: EstimatedArgs,
    #[command(flatten)]
    common: CommonEngineArgs,
}

/// A run over many processes, on one machine or many (README, "On a
/// cluster").
#[derive(Args, Debug)]
struct ManyArgs {
    /// Run as one of many processes: FILE lists every process's host:port, one a
    /// line, process 0 first. Start every process with the same ROOT, files, settings
    /// and FILE, each with its --process; each reads every n-th file and owns a
    /// range of the table's buckets (--table-size is the total), and process 0
    /// writes the report.
    #[arg(long, value_name = "FILE", requires = "process")]
    hosts: Option<std::path::PathBuf>,
    /// This process's line in --hosts, from 0.
    #[arg(long, value_name = "I", requires = "hosts")]
    process: Option<usize>,
    /// Seconds to wait for the other processes of --hosts to connect [default: 60].
    #[arg(long, value_name = "SECS", requires = "hosts",
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    connect_timeout: Option<u64>,
    /// Seconds another process of --hosts may stay silent (each sends a heartbeat
    /// several times within them while it runs, however long its work) before
    /// every process ends, naming it: one stopped, or its machine or network down
    /// [default: 60].
    #[arg(long, value_name = "SECS", requires = "hosts",
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    progress_timeout: Option<u64>,
}

impl ManyArgs {
    /// The processes named, with this one's place (the check is set once
    /// the files are walked).
    fn cluster(&self) -> Result<Option<Cluster>, Fatal> {
        let (Some(file), Some(process)) = (&self.hosts, self.process) else {
            return Ok(None);
        };
        let shown = super::show::show(&file.display().to_string()).into_owned();
        // A regular file of at most 1 MiB: a FIFO or a device named here
        // is refused, not waited on.
        let cannot =
            |e: &dyn std::error::Error| Fatal(format!("--hosts {shown}: {}", super::one_line(e)));
        let bytes = lineage_core::fsio::read_bounded(file, 1 << 20).map_err(|e| cannot(&e))?;
        let text = String::from_utf8(bytes).map_err(|e| cannot(&e))?;
        let hosts =
            Cluster::parse_hosts(&text).map_err(|e| Fatal(format!("--hosts {shown}: {e}")))?;
        if process >= hosts.len() {
            return Err(Fatal(format!(
                "--process {process}: {shown} lists {} processes (0 to {})",
                hosts.len(),
                hosts.len() - 1
            )));
        }
        Ok(Some(Cluster {
            hosts,
            process,
            check: 0,
            wait: std::time::Duration::from_secs(self.connect_timeout.unwrap_or(60)),
            progress_timeout: std::time::Duration::from_secs(self.progress_timeout.unwrap_or(60)),
        }))
    }
}

/// The settings of an estimated run beyond [`CommonEngineArgs`].
#[derive(Args, Debug)]
pub(super) struct EstimatedArgs {
    /// Shingle selection: all, every-L, mod-L, win-W, hb-P, dct-P, hs, nmod-L,
    /// nwin-W, nhs (or the paper's 4th, M3, W8, Hb3, Dct8, NM3, NW8, NHs) [default: all:
    /// every shingle, exact while the table holds them].
    #[arg(long, value_name = "SELECTOR")]
    selector: Option<Selector>,
    /// Table memory, e.g. 20MB, 64MiB, 512KiB, or unbounded; committed as the table
    /// fills (cc and lucky: at once) [default: 64MiB].
    #[arg(long, value_name = "SIZE")]
    table_size: Option<TableSize>,
    /// Eviction: random, lru, cc (copy count), lucky or bottom-k (each bucket keeps
    /// the smallest keys it was given) [default: bottom-k].
    #[arg(long, value_name = "POLICY")]
    eviction: Option<Eviction>,
    /// Estimation: nb (as found), e (expansion), b (bridging) or be [default: nb].
    #[arg(long, value_name = "ALGORITHM")]
    estimation: Option<Estimation>,
}

impl EstimatedArgs {
    pub(super) fn apply(&self, c: &mut Config) {
        super::flag(c, "selector", self.selector, |c| &mut c.selector);
        super::flag(c, "table_size", self.table_size, |c| &mut c.table_size);
        super::flag(c, "eviction", self.eviction, |c| &mut c.eviction);
        super::flag(c, "estimation", self.estimation, |c| &mut c.estimation);
    }
}

pub(super) fn run(args: ScanArgs, mut config: Config) -> Result<(), Fatal> {
    args.source.apply(&mut config);
    args.common.apply(&mut config);
    args.estimated.apply(&mut config);
    args.workers.apply(&mut config);
    config.validate()?;
    let params = config.params();
    // Fail on an impossible table before reading anything.
    params.table_params().validate()?;
    let filter = Filter::new(&config.include, &config.exclude)?;
    let poly = config.polynomial();
    let preparer = Preparer::new(params, &poly);
    let workers = config.pass_workers();
    let many = args.many.cluster()?;
    let plan = args.checkpoints.plan(&args.source.root)?;
    // Process 0 of many (or the only one) writes the report.
    let writes = many.as_ref().is_none_or(|c| c.process == 0);
    let journal_dir = plan.as_ref().filter(|_| writes).map(|p| p.dir.clone());
    // The sequential pass's table is built on a thread of its own while
    // the first files are read; the split pass's shards start small.
    let sequential = (workers <= 1 && many.is_none()).then(|| Building::start(params));
    // Only process 0 writes: the others leave -o FILE alone.
    let (output, sink) =
        Output::open(args.output.as_deref().filter(|_| writes), &args.source.root)?;
    let json = args.json && writes;
    // The report is written inside: its error is then said with what
    // became of the report.
    let written = (move || -> Result<(), Fatal> {
        let mut out = std::io::BufWriter::with_capacity(1 << 16, sink);
        // The report's object is written around the documents, its fields in
        // the order they had as one struct: format, params, documents, table,
        // skipped.
        if args.json && writes {
            write!(out, "{{\"format\":\"lineage-report/1\",\"params\":")?;
            super::show::json(
                &mut out,
                &super::show::ParamsJson::new(&params, &poly, Some(config.order)),
            )?;
            write!(out, ",\"documents\":[")?;
        }
        let origins = KeySpill::new(&std::env::temp_dir(), spill::MEMORY_KEYS);
        let aligns = params.aligns();
        // Each document, in order: into the report and the summary.
        let mut emit = Writer::start(out, args.json);
        let run = Run {
            root: &args.source.root,
            filter: &filter,
            config: &config,
            aligns,
            checkpoints: plan.as_ref(),
        };
        let (skipped, stats) = match sequential {
            Some(pass) => {
                let prepare = |_: &FileEntry, text: &str| {
                    let prepared = preparer.prepare(&token_fps(&poly, text).fps);
                    // What alignment may read later, collected on the reading threads.
                    let keys: Box<[u64]> = if aligns {
                        prepared.units.iter().map(|u| u.key).collect()
                    } else {
                        Box::new([])
                    };
                    (prepared, keys)
                };
                let (skipped, stats) = run.sequential(pass, origins, prepare, &mut emit)?;
                (skipped, Some(stats))
            }
            None => {
                let prepare =
                    |_: &FileEntry, text: &str| preparer.prepare(&token_fps(&poly, text).fps);
                run.split(params, workers, many.clone(), origins, prepare, &mut emit)?
            }
        };
        let (mut out, seen) = emit.finish()?;
        let Some(stats) = stats else {
            if let Some(c) = &many {
                super::show::note(&format!(
                    "process {} of {}: done; process 0 ({}) writes the report",
                    c.process,
                    c.hosts.len(),
                    c.hosts[0]
                ));
            }
            return Ok(());
        };
        if args.json {
            write!(out, "],\"table\":")?;
            super::show::json(&mut out, &TableJson::new(&stats, params.exact_when_held()))?;
            write!(out, ",\"skipped\":")?;
            let skipped: Vec<super::SkippedJson> = skipped
                .iter()
                .map(|(path, reason)| super::SkippedJson {
                    path: PathJson::new(path),
                    reason: reason.clone(),
                })
                .collect();
            super::show::json(&mut out, &skipped)?;
            writeln!(out, "}}")?;
        } else {
            for (path, reason) in &skipped {
                super::skipped_line(path, reason);
            }
            summary(&mut out, &seen, skipped.len(), &params, &stats)?;
        }
        out.flush()?;
        Ok(())
    })();
    match written {
        Ok(()) => {
            output.commit()?;
            // The report is out: the checkpoint of it is of no more use.
            if let Some(dir) = &journal_dir {
                Journal::remove(dir);
            }
            Ok(())
        }
        Err(e) => Err(output.failed(json, e)),
    }
}

/// Where the documents come from, for either pass.
struct Run<'a> {
    root: &'a std::path::Path,
    filter: &'a Filter,
    config: &'a Config,
    aligns: bool,
    /// `--checkpoint-dir` and its kin (over many processes only).
    checkpoints: Option<&'a resume::Plan>,
}

/// A document's preparation on the reading threads: its units, and its
/// keys for alignment (none when the settings do not align).
type Read = (Prepared, Box<[u64]>);

impl Run<'_> {
    /// The sequential pass on this thread, each document as it comes.
    fn sequential(
        &self,
        mut pass: Building,
        mut origins: KeySpill,
        prepare: impl Fn(&FileEntry, &str) -> Read + Sync,
        emit: &mut Writer,
    ) -> Result<(Vec<(String, String)>, ReplayStats), Fatal> {
        let (walk, mut skipped) = self.walk()?;
        let mut bar = Bar::new("scanning", walk.files.len());
        let mut id = 0u32;
        corpus::stream_files(
            &walk.files,
            self.config.max_file_size.0,
            Share::ALL,
            prepare,
            |file, part| -> Result<(), Fatal> {
                bar.step();
                match part {
                    Part::Read((prepared, keys)) => {
                        let o = prepare::run(pass.get()?, id, &prepared, &mut origins);
                        id += 1;
                        if self.aligns {
                            keep_keys(&mut origins, keys)?;
                        }
                        emit.send(Entry::Done(o), file.path.clone())
                    }
                    Part::Skipped(reason) => {
                        skipped.push((file.path.clone(), reason.to_string()));
                        Ok(())
                    }
                    Part::Elsewhere => Ok(()),
                }
            },
        )?;
        bar.done();
        skipped.sort_by(|a, b| a.0.cmp(&b.0));
        Ok((skipped, ReplayStats::of(pass.get()?)))
    }

    /// The files in processing order, and those the walk left out (path,
    /// why).
    fn walk(&self) -> Result<(lineage_source::Walk, Vec<(String, String)>), Fatal> {
        let c = self.config;
        let mut walk = corpus::walk_sorted(self.root, self.filter, c.walk_options(), c.order)?;
        let skipped = std::mem::take(&mut walk.skipped)
            .into_iter()
            .map(|s| (s.path, s.reason.to_string()))
            .collect();
        Ok((walk, skipped))
    }

    /// The pass split by bucket range (`lineage-split`) over `workers`
    /// threads, of this process or of each of `many`. A document's place
    /// in the walk is its id in the pass (a skipped file's too, so that
    /// every process agrees on them, though each sees only its own skips);
    /// its outcome comes back in order a few epochs later, numbered among
    /// the documents read, as the sequential pass numbers them. Returns the
    /// files left out and, where this process writes the report, the
    /// table's figures.
    #[allow(clippy::type_complexity)]
    fn split(
        &self,
        params: Params,
        workers: usize,
        many: Option<Cluster>,
        origins: KeySpill,
        prepare: impl Fn(&FileEntry, &str) -> Prepared + Sync,
        emit: &mut Writer,
    ) -> Result<(Vec<(String, String)>, Option<ReplayStats>), Fatal> {
        let c = self.config;
        let (walk, mut skipped) = self.walk()?;
        let mut bar = Bar::new(
            &many.as_ref().map_or_else(
                || "scanning".to_string(),
                |m| format!("scanning (process {} of {})", m.process, m.hosts.len()),
            ),
            walk.files.len(),
        );
        let mut options = Options::new(workers);
        let (process, processes) = many.as_ref().map_or((0, 1), |m| (m.process, m.hosts.len()));
        let check = agreement(self.root, c, &params, workers, &walk.files);
        options.cluster = many.map(|m| Cluster { check, ..m });
        let writes = process == 0;
        options.checkpoints = self.checkpoints.map(|plan| Checkpoints {
            dir: plan.dir.clone(),
            every: plan.every,
            check,
            resume: plan.resume,
            // Process 0's own part: the report so far.
            caller_holds: (writes && plan.resume).then(|| Journal::held(&plan.dir, check)),
        });
        let origins = Arc::new(Mutex::new(origins));
        let table = Table::new(params.table_params())?;
        let mut pass = SplitPass::new(params, table, options, origins.clone())?;
        let from = pass.resumed();
        let mut left: Vec<(String, String)> = Vec::new();
        // Each place's id among the documents read (skipped: none).
        let mut ids: Vec<u32> = Vec::new();
        if let Some(plan) = self.checkpoints {
            if plan.resume {
                super::show::note(&format!(
                    "process {process} of {processes}: resuming after {} documents (epoch {})",
                    grouped(from.places),
                    from.epoch
                ));
            }
            // Process 0: the report up to there again, from its journal,
            // which then goes on from there.
            if writes {
                let aligns = self.aligns;
                let journal = Journal::resume(&plan.dir, check, aligns, from, |record| {
                    let keys = match record {
                        Record::Doc(entry, path) => {
                            let Entry::Labelled { id, units, .. } = &entry else {
                                return Err(Fatal("a journal of the sequential pass".into()));
                            };
                            ids.push(*id);
                            let keys = units.iter().map(|u| u.key).collect();
                            emit.send(entry, path)?;
                            keys
                        }
                        Record::Skipped(path, reason) => {
                            ids.push(u32::MAX);
                            left.push((path, reason));
                            Box::default()
                        }
                    };
                    // The keys alignment reads, as the owners keep them.
                    if aligns {
                        let mut o = origins.lock().unwrap_or_else(PoisonError::into_inner);
                        keep_keys(&mut o, keys)?;
                    }
                    Ok(())
                })?;
                emit.keep(journal)?;
            }
        }
        let mut done = |l: Labelled<'_, Doc>| {
            let Doc {
                path,
                tokens,
                shingles,
                skipped,
            } = l.payload;
            if let Some(reason) = skipped {
                ids.push(u32::MAX);
                left.push((path.clone(), reason.clone()));
                emit.skipped(path, reason)?;
            } else {
                let id = ids.len() as u32 - left.len() as u32;
                ids.push(id);
                let labels = l.labels.iter().map(|&place| ids[place as usize]).collect();
                let entry = Entry::Labelled {
                    id,
                    tokens,
                    shingles,
                    units: l.units,
                    labels,
                };
                emit.send(entry, path)?;
            }
            match l.checkpoint {
                Some(at) => emit.mark(at),
                None => Ok(()),
            }
        };
        // The files from the place the run continues at: the share of each
        // is by its place in the run, not in what is left.
        let first = (from.places as usize).min(walk.files.len());
        let share = Share {
            index: (process + processes - first % processes) % processes,
            count: processes,
        };
        bar.skip(first);
        let mut place = first as u32;
        corpus::stream_files(
            &walk.files[first..],
            c.max_file_size.0,
            share,
            prepare,
            |file, part| -> Result<(), Fatal> {
                bar.step();
                let doc = |tokens, shingles, skipped| Doc {
                    path: file.path.clone(),
                    tokens,
                    shingles,
                    skipped,
                };
                match part {
                    Part::Read(Prepared {
                        tokens,
                        shingles,
                        units,
                    }) => pass.push(place, units, doc(tokens, shingles, None), &mut done)?,
                    Part::Skipped(reason) => {
                        let skipped = doc(0, 0, Some(reason.to_string()));
                        pass.push(place, Vec::new(), skipped, &mut done)?;
                    }
                    Part::Elsewhere => pass.pass_over(&mut done)?,
                }
                place += 1;
                Ok(())
            },
        )?;
        let ended = pass.finish(&mut done)?;
        bar.done();
        skipped.extend(left);
        skipped.sort_by(|a, b| a.0.cmp(&b.0));
        Ok((skipped, ended.stats(&params)))
    }
}

/// Files gone through, as a bar on stderr where it is a terminal (a long
/// run over many processes shows each one's).
struct Bar {
    stderr: super::index::Stderr,
    what: String,
    done: u64,
    total: u64,
}

impl Bar {
    fn new(what: &str, total: usize) -> Bar {
        Bar {
            stderr: super::index::Stderr::new(),
            what: what.to_string(),
            done: 0,
            total: total as u64,
        }
    }

    fn step(&mut self) {
        use lineage_store::index::Observer;
        self.done += 1;
        self.stderr.progress(&self.what, self.done, self.total);
    }

    /// `n` files done before (a resumed run's).
    fn skip(&mut self, n: usize) {
        self.done += n as u64;
    }

    fn done(&mut self) {
        self.stderr.clear();
    }
}

/// A document through the split pass: what its outcome needs beside its
/// labels, or why it was left out.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
struct Doc {
    path: String,
    tokens: u32,
    shingles: u32,
    skipped: Option<String>,
}

impl lineage_split::KeyStore for KeySpill {
    fn keep(&mut self, _id: u32, keys: Vec<u64>) -> Result<(), String> {
        keep_keys(self, keys.into_boxed_slice()).map_err(|Fatal(e)| e)
    }
}

/// Keep a document's keys for alignment.
fn keep_keys(origins: &mut KeySpill, keys: Box<[u64]>) -> Result<(), Fatal> {
    origins.push(keys).map_err(|e| {
        Fatal(format!(
            "{} (set TMPDIR to a folder with room, or give --align off)",
            super::one_line(&e)
        ))
    })
}

/// The pass, its table built and its memory mapped on a thread of its own
/// beside the walk and the first reads (a 64 MiB table's page faults took
/// ~0.15 s of the pass); the first document waits for it.
struct Building {
    started: Option<std::thread::JoinHandle<Result<OriginPass, lineage_origin::table::TableError>>>,
    built: Option<OriginPass>,
}

impl Building {
    fn start(params: Params) -> Building {
        Building {
            started: Some(std::thread::spawn(move || OriginPass::new_touched(params))),
            built: None,
        }
    }

    fn get(&mut self) -> Result<&mut OriginPass, Fatal> {
        let failed = || Fatal("the table could not be built".into());
        if let Some(h) = self.started.take() {
            self.built = Some(h.join().map_err(|_| failed())??);
        }
        self.built.as_mut().ok_or_else(failed)
    }
}

/// What the readable summary needs of the documents gone by: their paths
/// (to name origins), totals, and which copy most from another one.
#[derive(Default)]
struct Seen {
    paths: Vec<String>,
    tokens: u64,
    shingles: u64,
    selected: u64,
    fresh: u64,
    /// (fresh tokens, tokens, id, top origin) of documents whose top origin
    /// is another document.
    copied: Vec<(u32, u32, u32, u32)>,
}

impl Seen {
    fn add(&mut self, o: &Outcome, path: &str) {
        self.paths.push(path.to_string());
        self.tokens += u64::from(o.tokens);
        self.shingles += u64::from(o.shingles);
        self.selected += u64::from(o.selected);
        self.fresh += u64::from(o.fresh_tokens());
        if o.top_origin != o.id && o.tokens > 0 {
            self.copied
                .push((o.fresh_tokens(), o.tokens, o.id, o.top_origin));
        }
    }
}

#[derive(Serialize)]
struct OriginJson {
    id: u32,
    shingles: u32,
}

#[derive(Serialize)]
struct CopiedJson {
    tokens: [u32; 2],
    origin: u32,
}

#[derive(Serialize)]
struct DocJson {
    id: u32,
    #[serde(flatten)]
    path: PathJson,
    tokens: u32,
    shingles: u32,
    selected: u32,
    origins: Vec<OriginJson>,
    dominant_origin: Option<u32>,
    top_origin: u32,
    fresh_tokens: u32,
    fresh: Vec<[u32; 2]>,
    copied: Vec<CopiedJson>,
}

impl DocJson {
    fn new(o: &Outcome, path: &str) -> DocJson {
        DocJson {
            id: o.id,
            path: PathJson::new(path),
            tokens: o.tokens,
            shingles: o.shingles,
            selected: o.selected,
            origins: o
                .origins
                .iter()
                .map(|&(id, shingles)| OriginJson { id, shingles })
                .collect(),
            dominant_origin: o.dominant_origin,
            top_origin: o.top_origin,
            fresh_tokens: o.fresh_tokens(),
            fresh: o.fresh().map(|(a, b)| [a, b]).collect(),
            copied: o
                .copied()
                .map(|(a, b, origin)| CopiedJson {
                    tokens: [a, b],
                    origin,
                })
                .collect(),
        }
    }
}

#[derive(Serialize)]
pub(super) struct TableJson {
    capacity_entries: Option<u64>,
    entry_bytes: u64,
    buckets: Option<u64>,
    /// At most how many false matches one lookup makes (null: unbounded).
    false_match_per_lookup: Option<f64>,
    lookups: u64,
    hits: u64,
    inserts: u64,
    evictions: u64,
    occupied: u64,
    /// Lookups outside a bottom-k sample: neither found nor stored.
    not_sampled: u64,
    /// "exact" (the table holds every distinct key it was given, and that
    /// is the exact answer), "holds" (it holds them, but the answer is
    /// estimated), "sampling" (bottom-k past its capacity) or "evicting".
    regime: &'static str,
    /// Distinct keys given to the table: counted while it holds them all,
    /// estimated while it samples, null while it evicts.
    distinct_keys: Option<u64>,
    /// Distinct keys per key kept: 1 while it holds them all.
    sampled_one_in: Option<f64>,
}

impl TableJson {
    pub(super) fn new(s: &ReplayStats, exact_when_held: bool) -> TableJson {
        let c = s.counters;
        TableJson {
            capacity_entries: s.capacity,
            entry_bytes: s.entry_bytes,
            buckets: s.buckets,
            false_match_per_lookup: s.false_match,
            lookups: c.lookups,
            hits: c.hits,
            inserts: c.inserts,
            evictions: c.evictions,
            occupied: c.occupied,
            not_sampled: c.lookups - c.hits - c.inserts,
            regime: s.regime.name(exact_when_held),
            distinct_keys: match s.regime {
                Regime::Holds { distinct } | Regime::Sampling { distinct, .. } => Some(distinct),
                Regime::Evicting { .. } => None,
            },
            sampled_one_in: s.regime.one_in().map(|x| (x * 100.0).round() / 100.0),
        }
    }
}

/// The readable report: totals, the table, and the documents that copy most.
fn summary(
    out: &mut impl Write,
    seen: &Seen,
    skipped: usize,
    p: &Params,
    s: &ReplayStats,
) -> std::io::Result<()> {
    let n = grouped;
    writeln!(
        out,
        "{} documents, {} tokens, {} shingles; {} selected by {} (ssr {:.1}%)",
        n(seen.paths.len() as u64),
        n(seen.tokens),
        n(seen.shingles),
        n(seen.selected),
        p.selector,
        pct(seen.selected, seen.shingles)
    )?;
    writeln!(
        out,
        "fresh: {:.1}% of tokens; copied: {:.1}%",
        pct(seen.fresh, seen.tokens),
        100.0 - pct(seen.fresh, seen.tokens)
    )?;
    let c = s.counters;
    let cap = s
        .capacity
        .map_or_else(|| "unbounded".to_string(), |c| format!("{} entries", n(c)));
    writeln!(
        out,
        "table: {} ({cap} of {} B, {} eviction, {} estimation): {} lookups, {} hits ({:.1}%), {} inserts, {} evictions, {} occupied",
        p.table_size,
        s.entry_bytes,
        p.eviction,
        p.estimation,
        n(c.lookups),
        n(c.hits),
        pct(c.hits, c.lookups),
        n(c.inserts),
        n(c.evictions),
        n(c.occupied)
    )?;
    writeln!(
        out,
        "table {}",
        s.regime
            .describe(p.selector == Selector::All, p.exact_when_held(), grouped)
    )?;
    let path = |id: u32| super::show::show(&seen.paths[id as usize]);
    let mut copied: Vec<&(u32, u32, u32, u32)> = seen.copied.iter().collect();
    // Least fresh first; ties by path.
    let share = |c: &(u32, u32, u32, u32)| f64::from(c.0) / f64::from(c.1);
    copied.sort_by(|a, b| {
        let by_path = || seen.paths[a.2 as usize].cmp(&seen.paths[b.2 as usize]);
        share(a).total_cmp(&share(b)).then_with(by_path)
    });
    if !copied.is_empty() {
        let shown = &copied[..copied.len().min(20)];
        // The document column as wide as its longest name shown (at most
        // 60 characters; a longer name pushes only its own row's origin).
        let width = (shown.iter())
            .map(|c| path(c.2).chars().count())
            .max()
            .unwrap_or(0)
            .clamp(8, 60);
        writeln!(
            out,
            "\n{} documents copy most from another one:",
            n(copied.len() as u64)
        )?;
        writeln!(out, "  {:>6}  {:<width$}  from", "fresh", "document")?;
        for &&(fresh, tokens, id, top) in shown {
            writeln!(
                out,
                "  {:>5.1}%  {:<width$}  {}",
                pct(u64::from(fresh), u64::from(tokens)),
                path(id),
                path(top)
            )?;
        }
        if copied.len() > 20 {
            writeln!(
                out,
                "  … and {} more (--json lists all)",
                n(copied.len() as u64 - 20)
            )?;
        }
    }
    if skipped > 0 {
        writeln!(
            out,
            "\n{} files skipped (listed on stderr)",
            n(skipped as u64)
        )?;
    }
    Ok(())
}

pub(super) fn pct(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        100.0 * a as f64 / b as f64
    }
}
