//! `lineage sweep ROOT`: the exact result once, then every combination of
//! settings scored against it (DO, TF, ssr), replaying selected units. The
//! folder's fingerprints are selected a batch of documents at a time and
//! freed; the replays hold only the units and the exact result
//! (docs/reference.md, "Memory"). With `--workers N` the threads the runs
//! leave idle split runs by bucket range (`lineage_split::SplitReplay`).

use std::io::Write;

use clap::Args;
use serde::Serialize;

use super::scan::pct;
use super::{
    CommonEngineArgs, Fatal, SourceArgs, WorkersArgs, on_off, report_skipped, skipped_json, stream,
};
use lineage_config::Config;
use lineage_core::fingerprint::token_fps;
use lineage_origin::sweep::{self, BATCH_DOCUMENTS, Control, Plan, Selecting, Sweep};
use lineage_origin::table::paper_sizes;
use lineage_origin::{Estimation, Eviction, Params, Selector, TableSize};
use lineage_source::Filter;
use lineage_split::SplitReplay;

#[derive(Args, Debug)]
pub(super) struct SweepArgs {
    #[command(flatten)]
    pub(super) source: SourceArgs,
    /// Print the JSON of docs/formats.md §6 instead of a table.
    #[arg(long)]
    json: bool,
    /// Comma-separated table sizes (e.g. 16KiB,1MB,unbounded) [default: eight
    /// sizes at the paper's table fractions 0.1% … 34.2% of all shingles].
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    sizes: Vec<TableSize>,
    /// Comma-separated selectors [default: nhs,nwin-8,every-4].
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    selectors: Vec<Selector>,
    /// Comma-separated evictions [default: lucky,cc].
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    evictions: Vec<Eviction>,
    /// Comma-separated estimations [default: be].
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    estimations: Vec<Estimation>,
    /// Comma-separated alignments of the runs of --selector all, to compare
    /// them: on, off or on,off [default: the --align setting, on].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = on_off)]
    aligns: Vec<bool>,
    #[command(flatten)]
    workers: WorkersArgs,
    #[command(flatten)]
    common: CommonEngineArgs,
}

#[derive(Serialize)]
struct SweepJson {
    format: &'static str,
    exact: ExactJson,
    runs: Vec<RunJson>,
    skipped: Vec<super::SkippedJson>,
}

#[derive(Serialize)]
struct ExactJson {
    documents: u64,
    with_dominant_origin: u64,
    fresh_token_percent: f64,
    shingles: u64,
}

#[derive(Serialize, Clone)]
struct RunJson {
    selector: String,
    table_size: String,
    eviction: String,
    estimation: String,
    align: bool,
    ssr: f64,
    #[serde(rename = "do")]
    dominant_origin: f64,
    tf: f64,
    overall: f64,
    table_fraction: Option<f64>,
    selected_fraction: Option<f64>,
    capacity_entries: Option<u64>,
    entry_bytes: u64,
    lookups: u64,
    hits: u64,
    evictions: u64,
    seconds: f64,
}

pub(super) fn run(args: SweepArgs, mut config: Config) -> Result<(), Fatal> {
    args.source.apply(&mut config);
    args.common.apply(&mut config);
    args.workers.apply(&mut config);
    config.validate()?;
    let selectors: Vec<Selector> = pick(&args.selectors, &config.sweep.selectors);
    let evictions: Vec<Eviction> = pick(&args.evictions, &config.sweep.evictions);
    let estimations: Vec<Estimation> = pick(&args.estimations, &config.sweep.estimations);
    let sizes: Vec<TableSize> = pick(&args.sizes, &config.sweep.sizes);
    let base = config.params();
    let aligns = pick(&args.aligns, &[base.align]);

    // Alignment changes only the runs whose units are the shingles.
    let combinations = |sizes: &[TableSize]| -> Vec<Params> {
        sweep::combinations(base, &selectors, &evictions, &estimations, sizes)
            .into_iter()
            .flat_map(|p| {
                let variants = if p.selector == Selector::All {
                    aligns.clone()
                } else {
                    vec![p.align]
                };
                variants.into_iter().map(move |align| Params { align, ..p })
            })
            .collect()
    };
    // Fail on an impossible table before reading anything (the paper's
    // sizes are known only once the shingles are counted).
    sweep::validate(&combinations(&sizes))?;
    // Read as `scan` does: the reading thread keys and selects the next
    // files while this one runs the exact pass over a batch of documents,
    // so a document's fingerprints and keys live only until its selections
    // are made.
    let filter = Filter::new(&config.include, &config.exclude)?;
    let poly = config.polynomial();
    let selecting = Selecting::new(&poly, base.k, selectors.iter().copied());
    let mut selected = selecting.start();
    let mut batch = Vec::with_capacity(BATCH_DOCUMENTS);
    let skipped = stream(
        &args.source.root,
        &filter,
        &config,
        |_, text| selecting.select(&token_fps(&poly, text).fps),
        |_, doc| {
            batch.push(doc);
            if batch.len() == BATCH_DOCUMENTS {
                selected.push(std::mem::take(&mut batch));
            }
            Ok(())
        },
    )?;
    selected.push(batch);
    let shingles = selected.total_shingles();
    let sizes = if sizes.is_empty() {
        paper_sizes(shingles)
    } else {
        sizes
    };
    let asked = combinations(&sizes);
    // Runs that leave threads idle are split over them (the rule:
    // lineage_split::SplitReplay; one worker: the sequential replays).
    let split = SplitReplay::new(config.pass_workers());
    let ctl = Control {
        replayer: Some(&split),
        ..Control::default()
    };
    let Sweep { exact, runs } = Plan::new(selected, &asked)?
        .run(&ctl)
        .ok_or_else(|| Fatal("the sweep stopped before its end".into()))?;
    let runs: Vec<RunJson> = runs
        .iter()
        .map(|r| {
            let p = r.params;
            let (score, c) = (r.score, r.counters);
            RunJson {
                selector: p.selector.to_string(),
                table_size: p.table_size.to_string(),
                eviction: p.eviction.to_string(),
                estimation: p.estimation.to_string(),
                align: p.aligns(),
                ssr: score.ssr(),
                dominant_origin: score.dominant_origin(),
                tf: score.token_freshness(),
                overall: score.overall(),
                table_fraction: r.capacity.map(|cap| pct(cap, shingles)),
                selected_fraction: r.capacity.map(|cap| pct(cap, r.selected_keys)),
                capacity_entries: r.capacity,
                entry_bytes: r.entry_bytes,
                lookups: c.lookups,
                hits: c.hits,
                evictions: c.evictions,
                seconds: r.seconds,
            }
        })
        .collect();

    let exact_json = ExactJson {
        documents: exact.len() as u64,
        with_dominant_origin: exact.iter().filter(|o| o.dominant_origin.is_some()).count() as u64,
        fresh_token_percent: pct(
            exact.iter().map(|o| u64::from(o.fresh_tokens())).sum(),
            exact.iter().map(|o| u64::from(o.tokens)).sum(),
        ),
        shingles,
    };
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    if args.json {
        let report = SweepJson {
            format: "lineage-sweep/1",
            exact: exact_json,
            runs,
            skipped: skipped_json(&skipped),
        };
        super::show::json(&mut out, &report)?;
        writeln!(out)?;
    } else {
        report_skipped(&skipped);
        let self_dominant = exact
            .iter()
            .filter(|o| o.dominant_origin == Some(o.id))
            .count();
        writeln!(
            out,
            "exact: {} documents, {} shingles; {} with a dominant origin ({} themselves: DO baseline {:.1}%); {:.1}% of tokens fresh (TF baseline)",
            exact_json.documents,
            shingles,
            exact_json.with_dominant_origin,
            self_dominant,
            pct(self_dominant as u64, exact_json.with_dominant_origin),
            exact_json.fresh_token_percent
        )?;
        writeln!(
            out,
            "{:<9} {:<8} {:<4} {:<5} {:>10} {:>8} {:>6} {:>6} {:>6} {:>8} {:>8}",
            "selector",
            "evict",
            "est",
            "align",
            "size",
            "fraction",
            "ssr",
            "DO",
            "TF",
            "overall",
            "seconds"
        )?;
        for r in &runs {
            writeln!(
                out,
                "{:<9} {:<8} {:<4} {:<5} {:>10} {:>7}% {:>6.1} {:>6.1} {:>6.1} {:>8.1} {:>8.3}",
                r.selector,
                r.eviction,
                r.estimation,
                match (r.selector == "all", r.align) {
                    (false, _) => "-",
                    (true, true) => "on",
                    (true, false) => "off",
                },
                r.table_size,
                r.table_fraction
                    .map_or_else(|| "-".to_string(), |f| format!("{f:.2}")),
                r.ssr,
                r.dominant_origin,
                r.tf,
                r.overall,
                r.seconds
            )?;
        }
    }
    out.flush()?;
    Ok(())
}

/// The flag's list if one was given, else the config's.
fn pick<T: Clone>(flag: &[T], conf: &[T]) -> Vec<T> {
    if flag.is_empty() {
        conf.to_vec()
    } else {
        flag.to_vec()
    }
}
