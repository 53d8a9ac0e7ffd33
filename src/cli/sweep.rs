//! `lineage sweep ROOT`: the exact result once, then every combination of
//! settings scored against it (DO, TF, ssr), replaying cached keys.

use std::io::Write;
use std::time::Instant;

use clap::Args;
use rayon::prelude::*;
use serde::Serialize;

use super::scan::pct;
use super::{CommonEngineArgs, Fatal, SourceArgs, load, report_skipped, skipped_json};
use crate::config::Config;
use crate::origin::history::Keyed;
use crate::origin::metrics::Score;
use crate::origin::table::{Counters, DistinctKeys, paper_sizes};
use crate::origin::{Estimation, Eviction, Params, Selector, TableSize};

#[derive(Args, Debug)]
pub(super) struct SweepArgs {
    #[command(flatten)]
    source: SourceArgs,
    /// Print the CONTRACT's JSON instead of a table.
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
    config.validate()?;
    let selectors: Vec<Selector> = pick(&args.selectors, &config.sweep.selectors);
    let evictions: Vec<Eviction> = pick(&args.evictions, &config.sweep.evictions);
    let estimations: Vec<Estimation> = pick(&args.estimations, &config.sweep.estimations);
    let sizes: Vec<TableSize> = pick(&args.sizes, &config.sweep.sizes);
    let base = config.params();

    let mut corpus = load(&args.source.root, &config)?;
    let keyed = Keyed::new(corpus.take_fps(), base.k);
    let shingles = keyed.total_shingles();
    let sizes = if sizes.is_empty() {
        paper_sizes(shingles)
    } else {
        sizes
    };

    // The exact result is one sequential pass: the other thread meanwhile
    // selects, once per selector (selection depends only on the selector).
    let (exact, selections) = rayon::join(
        || keyed.exact(),
        || {
            selectors
                .par_iter()
                .map(|&s| {
                    let units = keyed.select(s);
                    let n = units.iter().map(Vec::len).sum();
                    let keys = DistinctKeys::of(units.iter().flatten().map(|u| u.key), n);
                    (s, units, keys)
                })
                .collect::<Vec<(Selector, Vec<Vec<_>>, DistinctKeys)>>()
        },
    );
    let mut combos = Vec::new();
    for (si, (selector, _, _)) in selections.iter().enumerate() {
        for &eviction in &evictions {
            for &estimation in &estimations {
                for &table_size in &sizes {
                    let p = Params {
                        selector: *selector,
                        eviction,
                        estimation,
                        table_size,
                        ..base
                    };
                    p.table_params().validate()?;
                    combos.push((si, p));
                }
            }
        }
    }
    // A run whose table never evicts finds each key from its second lookup on,
    // whatever its size and eviction policy (so long as no two keys share the
    // table's 48-bit fingerprint): all such runs of one selector and
    // estimation have the same figures, and only the first is replayed.
    let never: Vec<bool> = combos
        .par_iter()
        .map(|&(si, p)| {
            let d = &selections[si].2;
            d.fingerprints_distinct && p.table_params().never_evicts(&d.keys)
        })
        .collect();
    let mut same_as: Vec<Option<usize>> = vec![None; combos.len()];
    for (i, &(si, p)) in combos.iter().enumerate() {
        if !never[i] {
            continue;
        }
        same_as[i] = (0..i)
            .find(|&j| never[j] && combos[j].0 == si && combos[j].1.estimation == p.estimation);
    }
    // Longest runs first (cost grows with the units replayed; Lucky's second
    // pass over them costs extra), handed out one at a time, so that both
    // threads stay busy until the end.
    let cost = |&(si, p): &(usize, Params)| {
        let units: usize = selections[si].1.iter().map(Vec::len).sum();
        units * if p.eviction == Eviction::Lucky { 4 } else { 3 }
    };
    let mut order: Vec<usize> = (0..combos.len())
        .filter(|&i| same_as[i].is_none())
        .collect();
    order.sort_by_key(|&i| std::cmp::Reverse(cost(&combos[i])));
    let mut replayed: Vec<(usize, Score, Counters, f64)> = order
        .into_iter()
        .par_bridge()
        .map(|i| {
            let (si, p) = combos[i];
            let start = Instant::now();
            let mut score = Score::default();
            let mut counts = Vec::new();
            let stats = keyed
                .replay_labels(&selections[si].1, p, |d, units, labels| {
                    let shingles = keyed.shingle_keys[d].len() as u32;
                    score.add_labels(&exact[d], shingles, units, labels, &mut counts);
                })
                .expect("validated table");
            (i, score, stats.counters, start.elapsed().as_secs_f64())
        })
        .collect();
    replayed.sort_unstable_by_key(|r| r.0);
    let runs: Vec<RunJson> = combos
        .iter()
        .enumerate()
        .map(|(i, &(si, p))| {
            let from = same_as[i].unwrap_or(i);
            let (_, score, c, seconds) = replayed[replayed.partition_point(|r| r.0 < from)];
            let tp = p.table_params();
            let capacity = tp.capacity();
            RunJson {
                selector: p.selector.to_string(),
                table_size: p.table_size.to_string(),
                eviction: p.eviction.to_string(),
                estimation: p.estimation.to_string(),
                ssr: score.ssr(),
                dominant_origin: score.dominant_origin(),
                tf: score.token_freshness(),
                overall: score.overall(),
                table_fraction: capacity.map(|cap| pct(cap, shingles)),
                selected_fraction: capacity.map(|cap| pct(cap, selections[si].2.keys.len() as u64)),
                capacity_entries: capacity,
                entry_bytes: tp.layout.entry_bytes(),
                lookups: c.lookups,
                hits: c.hits,
                evictions: c.evictions,
                // A shared run's time is that of the replay that gave it.
                seconds,
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
            skipped: skipped_json(&corpus),
        };
        serde_json::to_writer(&mut out, &report)?;
        writeln!(out)?;
    } else {
        report_skipped(&corpus);
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
            "{:<9} {:<7} {:<4} {:>10} {:>8} {:>6} {:>6} {:>6} {:>8} {:>8}",
            "selector", "evict", "est", "size", "fraction", "ssr", "DO", "TF", "overall", "seconds"
        )?;
        for r in &runs {
            writeln!(
                out,
                "{:<9} {:<7} {:<4} {:>10} {:>7}% {:>6.1} {:>6.1} {:>6.1} {:>8.1} {:>8.3}",
                r.selector,
                r.eviction,
                r.estimation,
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
