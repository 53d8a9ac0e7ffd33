//! `lineage scan ROOT`: every document's origins under one setting.

use std::io::Write;

use clap::Args;
use serde::Serialize;

use super::{CommonEngineArgs, Fatal, PathJson, SourceArgs, load, report_skipped, skipped_json};
use crate::config::Config;
use crate::corpus::Corpus;
use crate::origin::history::{Keyed, ReplayStats};
use crate::origin::{Estimation, Eviction, Outcome, Params, Selector, TableSize};

#[derive(Args, Debug)]
pub(super) struct ScanArgs {
    #[command(flatten)]
    source: SourceArgs,
    /// Print the JSON of docs/formats.md §6 report instead of a summary.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    estimated: EstimatedArgs,
    #[command(flatten)]
    common: CommonEngineArgs,
}

/// The settings of an estimated run beyond [`CommonEngineArgs`].
#[derive(Args, Debug)]
pub(super) struct EstimatedArgs {
    /// Shingle selection: all, every-L, mod-L, win-W, hb-P, dct-P, hs, nmod-L,
    /// nwin-W, nhs (or the paper's 4th, M3, W8, Hb3, Dct8, NM3, NW8, NHs) [default: nhs].
    #[arg(long, value_name = "SELECTOR")]
    selector: Option<Selector>,
    /// Table memory, e.g. 20MB, 64MiB, 512KiB, or unbounded [default: 64MiB].
    #[arg(long, value_name = "SIZE")]
    table_size: Option<TableSize>,
    /// Eviction: random, lru, cc (copy count) or lucky [default: lucky].
    #[arg(long, value_name = "POLICY")]
    eviction: Option<Eviction>,
    /// Estimation: nb, e (expansion), b (bridging) or be [default: be].
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
    let mut corpus = load(&args.source.root, &config)?;
    let keyed = Keyed::new(corpus.take_fps(), params.k);
    let units = keyed.select(params.selector);
    let mut outcomes = Vec::with_capacity(keyed.len());
    let stats = keyed.replay(&units, params, |o| outcomes.push(o))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    if args.json {
        let report = Report {
            format: "lineage-report/1",
            params: ParamsJson::new(&params, &config),
            documents: outcomes.iter().map(|o| DocJson::new(o, &corpus)).collect(),
            table: TableJson::new(&stats),
            skipped: skipped_json(&corpus),
        };
        serde_json::to_writer(&mut out, &report)?;
        writeln!(out)?;
    } else {
        report_skipped(&corpus);
        summary(&mut out, &corpus, &outcomes, &params, &stats)?;
    }
    out.flush()?;
    Ok(())
}

#[derive(Serialize)]
struct Report {
    format: &'static str,
    params: ParamsJson,
    documents: Vec<DocJson>,
    table: TableJson,
    skipped: Vec<super::SkippedJson>,
}

#[derive(Serialize)]
struct ParamsJson {
    k: usize,
    selector: String,
    table_size: String,
    eviction: String,
    eviction_ties: String,
    estimation: String,
    bridge_limit: u32,
    bucket_entries: u16,
    seed: u64,
    order: String,
}

impl ParamsJson {
    fn new(p: &Params, c: &Config) -> ParamsJson {
        ParamsJson {
            k: p.k,
            selector: p.selector.to_string(),
            table_size: p.table_size.to_string(),
            eviction: p.eviction.to_string(),
            eviction_ties: p.ties.to_string(),
            estimation: p.estimation.to_string(),
            bridge_limit: p.bridge_limit,
            bucket_entries: p.bucket_entries,
            seed: p.seed,
            order: c.order.to_string(),
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
    fn new(o: &Outcome, corpus: &Corpus) -> DocJson {
        DocJson {
            id: o.id,
            path: PathJson::new(&corpus.docs[o.id as usize].path),
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
}

impl TableJson {
    pub(super) fn new(s: &ReplayStats) -> TableJson {
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
        }
    }
}

/// The readable report: totals, the table, and the documents that copy most.
fn summary(
    out: &mut impl Write,
    corpus: &Corpus,
    outcomes: &[Outcome],
    p: &Params,
    s: &ReplayStats,
) -> std::io::Result<()> {
    let tokens: u64 = outcomes.iter().map(|o| u64::from(o.tokens)).sum();
    let shingles: u64 = outcomes.iter().map(|o| u64::from(o.shingles)).sum();
    let selected: u64 = outcomes.iter().map(|o| u64::from(o.selected)).sum();
    let fresh: u64 = outcomes.iter().map(|o| u64::from(o.fresh_tokens())).sum();
    writeln!(
        out,
        "{} documents, {tokens} tokens, {shingles} shingles; {selected} selected by {} (ssr {:.1}%)",
        outcomes.len(),
        p.selector,
        pct(selected, shingles)
    )?;
    writeln!(
        out,
        "fresh: {:.1}% of tokens; copied: {:.1}%",
        pct(fresh, tokens),
        100.0 - pct(fresh, tokens)
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
    let mut copied: Vec<&Outcome> = outcomes
        .iter()
        .filter(|o| o.top_origin != o.id && o.tokens > 0)
        .collect();
    // Least fresh first; ties by path.
    copied.sort_by(|a, b| {
        let share = |o: &Outcome| f64::from(o.fresh_tokens()) / f64::from(o.tokens);
        share(a).total_cmp(&share(b)).then_with(|| {
            corpus.docs[a.id as usize]
                .path
                .cmp(&corpus.docs[b.id as usize].path)
        })
    });
    if !copied.is_empty() {
        writeln!(
            out,
            "\n{} documents copy most from another one:",
            copied.len()
        )?;
        writeln!(out, "  {:>6}  {:<40}  from", "fresh", "document")?;
        for o in copied.iter().take(20) {
            writeln!(
                out,
                "  {:>5.1}%  {:<40}  {}",
                pct(u64::from(o.fresh_tokens()), u64::from(o.tokens)),
                super::show::show(&corpus.docs[o.id as usize].path),
                super::show::show(&corpus.docs[o.top_origin as usize].path)
            )?;
        }
        if copied.len() > 20 {
            writeln!(out, "  … and {} more (--json lists all)", copied.len() - 20)?;
        }
    }
    if !corpus.skipped.is_empty() {
        writeln!(
            out,
            "\n{} files skipped (listed on stderr)",
            corpus.skipped.len()
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
