//! `lineage scan ROOT`: every document's origins under one setting.
//!
//! Documents stream through: a batch is read, tokenized, keyed and selected
//! in parallel, then goes through the origin pass in order, and each
//! document's result is written as it comes. What stays is the table, one
//! batch, and a path and a few numbers a document for the summary, so memory
//! does not grow with the text (README, "Memory").

use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};

use clap::Args;
use serde::Serialize;

use super::spill::{self, KeySpill};
use super::{CommonEngineArgs, Fatal, PathJson, SourceArgs, report_skipped, skipped_json, stream};
use lineage_core::fingerprint::token_fps;
use lineage_engine::config::Config;
use lineage_origin::history::ReplayStats;
use lineage_origin::prepare::{self, Prepared, Preparer};
use lineage_origin::table::Table;
use lineage_origin::{
    Estimation, Eviction, OriginPass, Outcome, Params, Regime, Selector, TableSize,
};
use lineage_source::{FileEntry, Filter, Skipped};
use lineage_split::{Labelled, Options, SplitPass};

#[derive(Args, Debug)]
pub(super) struct ScanArgs {
    #[command(flatten)]
    pub(super) source: SourceArgs,
    /// Print the JSON of docs/formats.md §6 report instead of a summary.
    #[arg(long)]
    json: bool,
    /// Threads of the origin pass, each owning a range of the table's buckets
    /// (the same answers for any number; 1: the sequential pass) [default: the
    /// cores available where there are 8 or more, else 1].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    workers: Option<u16>,
    #[command(flatten)]
    estimated: EstimatedArgs,
    #[command(flatten)]
    common: CommonEngineArgs,
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
    config.validate()?;
    let params = config.params();
    // Fail on an impossible table before reading anything.
    params.table_params().validate()?;
    let filter = Filter::new(&config.include, &config.exclude)?;
    let poly = config.polynomial();
    let preparer = Preparer::new(params, &poly);
    let workers = args.workers.map_or_else(default_workers, usize::from);
    // The sequential pass's table is built on a thread of its own while
    // the first files are read; the split pass's shards start small.
    let sequential = (workers <= 1).then(|| Building::start(params));
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    // The report's object is written around the documents, its fields in
    // the order they had as one struct: format, params, documents, table,
    // skipped.
    if args.json {
        write!(out, "{{\"format\":\"lineage-report/1\",\"params\":")?;
        super::show::json(
            &mut out,
            &super::show::ParamsJson::new(&params, &poly, Some(config.order)),
        )?;
        write!(out, ",\"documents\":[")?;
    }
    let mut seen = Seen::default();
    let origins = KeySpill::new(&std::env::temp_dir(), spill::MEMORY_KEYS);
    let aligns = params.aligns();
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
    // Each document's outcome, in order: into the report and the summary.
    let mut emit = |o: &Outcome, path: &str| -> Result<(), Fatal> {
        if args.json {
            if o.id > 0 {
                out.write_all(b",")?;
            }
            super::show::json(&mut out, &DocJson::new(o, path))?;
        }
        seen.add(o, path);
        Ok(())
    };
    let run = Run {
        root: &args.source.root,
        filter: &filter,
        config: &config,
        aligns,
    };
    let (skipped, stats) = match sequential {
        Some(pass) => run.sequential(pass, origins, prepare, &mut emit)?,
        None => run.split(params, workers, origins, prepare, &mut emit)?,
    };
    if args.json {
        write!(out, "],\"table\":")?;
        super::show::json(&mut out, &TableJson::new(&stats, params.exact_when_held()))?;
        write!(out, ",\"skipped\":")?;
        super::show::json(&mut out, &skipped_json(&skipped))?;
        writeln!(out, "}}")?;
    } else {
        report_skipped(&skipped);
        summary(&mut out, &seen, skipped.len(), &params, &stats)?;
    }
    out.flush()?;
    Ok(())
}

/// `--workers`' default: the cores this process may run on, where there
/// are enough for the split pass to pay. Each lookup crosses an exchange
/// and a sort, so one worker is 2.3x slower than the sequential pass and
/// two are still slower; on 16 cores, 4 workers about break even with it
/// and 8 take `scan` 1.7-1.9x faster (BENCHMARKS.md, "The pass split by
/// bucket range"). Below 8 cores the reading threads need the rest.
fn default_workers() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    if cores >= 8 { cores } else { 1 }
}

/// Where the documents come from, for either pass.
struct Run<'a> {
    root: &'a std::path::Path,
    filter: &'a Filter,
    config: &'a Config,
    aligns: bool,
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
        emit: &mut dyn FnMut(&Outcome, &str) -> Result<(), Fatal>,
    ) -> Result<(Vec<Skipped>, ReplayStats), Fatal> {
        let mut id = 0u32;
        let skipped = stream(
            self.root,
            self.filter,
            self.config,
            prepare,
            |file, (prepared, keys)| {
                let o = prepare::run(pass.get()?, id, &prepared, &mut origins);
                id += 1;
                if self.aligns {
                    keep_keys(&mut origins, keys)?;
                }
                emit(&o, &file.path)
            },
        )?;
        Ok((skipped, ReplayStats::of(pass.get()?)))
    }

    /// The pass split by bucket range over `workers` threads
    /// (`lineage-split`): a document's keys are kept for alignment before
    /// it is handed over (its hits name only earlier documents), and its
    /// outcome comes back in order a few epochs later.
    fn split(
        &self,
        params: Params,
        workers: usize,
        origins: KeySpill,
        prepare: impl Fn(&FileEntry, &str) -> Read + Sync,
        emit: &mut dyn FnMut(&Outcome, &str) -> Result<(), Fatal>,
    ) -> Result<(Vec<Skipped>, ReplayStats), Fatal> {
        let origins = Arc::new(Mutex::new(origins));
        let table = Table::new(params.table_params())?;
        let mut pass = SplitPass::new(params, table, Options::new(workers), origins.clone())?;
        let mut done = |l: Labelled<'_, (String, u32, u32)>| {
            let (path, tokens, shingles) = l.payload;
            let spans = l.units.iter().map(|u| (u.start, u.end));
            emit(
                &Outcome::new(l.id, tokens, shingles, spans, l.labels),
                &path,
            )
        };
        let mut id = 0u32;
        let skipped = stream(
            self.root,
            self.filter,
            self.config,
            prepare,
            |file, (prepared, keys)| {
                if self.aligns {
                    let mut o = origins.lock().unwrap_or_else(PoisonError::into_inner);
                    keep_keys(&mut o, keys)?;
                }
                let Prepared {
                    tokens,
                    shingles,
                    units,
                } = prepared;
                pass.push(id, units, (file.path.clone(), tokens, shingles), &mut done)?;
                id += 1;
                Ok(())
            },
        )?;
        let table = pass.finish(&mut done)?;
        Ok((skipped, ReplayStats::of_table(&table, &params)))
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
    writeln!(
        out,
        "{} documents, {} tokens, {} shingles; {} selected by {} (ssr {:.1}%)",
        seen.paths.len(),
        seen.tokens,
        seen.shingles,
        seen.selected,
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
        .map_or_else(|| "unbounded".to_string(), |c| format!("{c} entries"));
    writeln!(
        out,
        "table: {} ({cap} of {} B, {} eviction, {} estimation): {} lookups, {} hits ({:.1}%), {} inserts, {} evictions, {} occupied",
        p.table_size,
        s.entry_bytes,
        p.eviction,
        p.estimation,
        c.lookups,
        c.hits,
        pct(c.hits, c.lookups),
        c.inserts,
        c.evictions,
        c.occupied
    )?;
    writeln!(
        out,
        "table {}",
        s.regime
            .describe(p.selector == Selector::All, p.exact_when_held(), |n| n
                .to_string())
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
        writeln!(
            out,
            "\n{} documents copy most from another one:",
            copied.len()
        )?;
        writeln!(out, "  {:>6}  {:<40}  from", "fresh", "document")?;
        for &&(fresh, tokens, id, top) in copied.iter().take(20) {
            writeln!(
                out,
                "  {:>5.1}%  {:<40}  {}",
                pct(u64::from(fresh), u64::from(tokens)),
                path(id),
                path(top)
            )?;
        }
        if copied.len() > 20 {
            writeln!(out, "  … and {} more (--json lists all)", copied.len() - 20)?;
        }
    }
    if skipped > 0 {
        writeln!(out, "\n{skipped} files skipped (listed on stderr)")?;
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
