//! `lineage pairs ROOT`: near-duplicate pairs and clusters (docs/formats.md §6).

use std::io::Write;
use std::time::Instant;

use clap::Args;
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::{Fatal, SkippedJson, SourceArgs};
use lineage_config::Config;
use lineage_core::fingerprint::polynomial::Polynomial;
use lineage_similar::docs::{Similar, load_similar};
use lineage_similar::simhash::{self, Backend};
use lineage_similar::{Method, Pair, SimDoc, cluster, exact, fuzzy, minhash, sample};
use lineage_source::Filter;

/// The threshold when none is given: Broder's "roughly the same" is about
/// 0.9; 0.8 also catches lightly edited copies.
pub(crate) const DEFAULT_MIN_SIMILARITY: f64 = 0.8;

#[derive(Args, Debug)]
pub(super) struct PairsArgs {
    #[command(flatten)]
    pub(super) source: SourceArgs,
    /// Print the JSON of docs/formats.md §6 instead of a summary.
    #[arg(long)]
    json: bool,
    /// How pairs are found: minhash (MinHash LSH, bands tuned to the
    /// threshold), simhash, fuzzy, sample or exact (the ground truth: every
    /// pair's Jaccard resemblance) [default: minhash]. minhash and simhash
    /// verify their candidates by exact Jaccard.
    #[arg(long, value_name = "METHOD")]
    method: Option<Method>,
    /// Least Jaccard resemblance of the documents' k-shingle sets, above 0 and
    /// at most 1 [default: 0.8].
    #[arg(long, value_name = "S")]
    min_similarity: Option<f64>,
    /// Shingle length in tokens [default: 8].
    #[arg(short = 'k', value_name = "K")]
    k: Option<usize>,
    /// Simhash: sketch width, 64 or 128 [default: 64].
    #[arg(long, value_name = "BITS")]
    bits: Option<u32>,
    /// Simhash: largest Hamming distance of a candidate pair [default: from
    /// --min-similarity and --bits, 16 for 0.8 at 64 bits; 9 with --no-verify].
    #[arg(long, value_name = "H")]
    hamming_distance: Option<u32>,
    /// Simhash: report every pair within the distance with its estimated
    /// similarity, without computing the exact Jaccard of candidates.
    #[arg(long)]
    no_verify: bool,
    /// Simhash: index memory (multi-index hashing) or sqlite (the sliced Hamming table's
    /// sliced table) [default: memory].
    #[arg(long, value_name = "INDEX")]
    simhash_index: Option<Backend>,
    /// Minhash: most hash values per document (bins = bands × rows, 1 to
    /// 4096); the bands and rows are the steepest S-curve within it that
    /// still examines a pair at --min-similarity with probability ≥ 0.999
    /// [default: 256].
    #[arg(long, value_name = "N")]
    hashes: Option<u32>,
    /// Minhash: LSH bands, with --rows instead of the choice from --hashes
    /// (bands × rows at most 4096).
    #[arg(long, value_name = "B", requires = "rows")]
    bands: Option<u32>,
    /// Minhash: rows (hash values) per band, with --bands.
    #[arg(long, value_name = "R", requires = "bands")]
    rows: Option<u32>,
}

pub(super) fn run(args: PairsArgs, mut config: Config) -> Result<(), Fatal> {
    let start = Instant::now();
    args.source.apply(&mut config);
    super::set(&mut config.k, args.k);
    config.validate()?;
    let method = args.method.unwrap_or(Method::Minhash);
    let min = args.min_similarity.unwrap_or(DEFAULT_MIN_SIMILARITY);
    if !(min > 0.0 && min <= 1.0) {
        return Err(Fatal(format!(
            "--min-similarity must be above 0 and at most 1, not {min}"
        )));
    }
    let simhash = simhash_options(&args, method, min)?;
    let minhash = minhash_options(&args, method, min)?;
    let filter = Filter::new(&config.include, &config.exclude)?;
    let poly = config.polynomial();
    let loaded = load_similar(
        &args.source.root,
        &filter,
        config.walk_options(),
        config.max_file_size.0,
        config.order,
        &poly,
        config.k,
        method == Method::Fuzzy,
    )?;
    let (pairs, method_stats) = match method {
        Method::Exact => {
            let (p, s) = exact::pairs_with_stats(&loaded.docs, min);
            (p, serde_json::to_value(s)?)
        }
        Method::Simhash => {
            let o = simhash.expect("simhash options");
            let (p, s) = simhash::pairs(&loaded.docs, min, &o)?;
            (p, serde_json::to_value(s)?)
        }
        Method::Minhash => {
            let o = minhash.expect("minhash options");
            let (p, s) = minhash::pairs(&loaded.docs, min, &o);
            (p, serde_json::to_value(s)?)
        }
        Method::Fuzzy => {
            let p = fuzzy::FuzzyParams {
                lang: config.lang,
                ..fuzzy::FuzzyParams::default()
            };
            (
                fuzzy::pairs_with(&loaded.docs, min, &p),
                json!({"lang": config.lang.to_string()}),
            )
        }
        Method::Sample => sample_pairs(&loaded.docs, &poly, min)?,
    };
    let paths = &loaded.paths;
    let clusters = cluster::clusters(loaded.docs.len(), &pairs, |i| paths[i as usize].as_bytes());
    let mut stats = common_stats(&loaded);
    if let Value::Object(m) = method_stats {
        stats.extend(m);
    }
    stats.insert("total_seconds".into(), json!(start.elapsed().as_secs_f64()));
    let pairs = by_path(&pairs, paths);
    let mut out = std::io::stdout().lock();
    if args.json {
        let report = Report {
            format: "lineage-pairs/1",
            method: method.to_string(),
            params: ParamsJson {
                k: config.k,
                min_similarity: min,
                order: config.order.to_string(),
            },
            pairs: pairs
                .iter()
                .map(|&(a, b, similarity)| PairJson { a, b, similarity })
                .collect(),
            clusters: clusters
                .iter()
                .map(|c| c.iter().map(|&i| paths[i as usize].as_str()).collect())
                .collect(),
            stats,
            skipped: loaded.skipped.iter().map(SkippedJson::new).collect(),
        };
        super::show::json(&mut out, &report)?;
        writeln!(out)?;
    } else {
        for s in &loaded.skipped {
            super::skipped_line(&s.path, &s.reason.to_string());
        }
        summary(&mut out, method, min, &loaded, &pairs, &clusters, &stats)?;
    }
    Ok(())
}

/// Fuzzy fingerprints and Koala samples are built on another branch.
/// Heintze's sample store: candidates by match count, verified by exact
/// Jaccard; its stats are the store's shape and the probes per search.
fn sample_pairs(docs: &[SimDoc], poly: &Polynomial, min: f64) -> Result<(Vec<Pair>, Value), Fatal> {
    let p = sample::SampleParams::default();
    let run = sample::run(docs, poly, &p)?;
    let pairs = fuzzy::verify(docs, &run.candidates(min - p.slack), min);
    let s = &run.stats;
    let stats = json!({
        "entries": s.entries,
        "blocks": s.blocks,
        "block_file_bytes": s.block_file_bytes,
        "avg_chain": s.avg_chain,
        "max_chain": s.max_chain,
        "probes_per_search": s.probes_per_search,
    });
    Ok((pairs, stats))
}

/// The simhash settings, checked before anything is read; `None` for other
/// methods, which take no simhash flags.
fn simhash_options(
    args: &PairsArgs,
    method: Method,
    min: f64,
) -> Result<Option<simhash::Options>, Fatal> {
    if method != Method::Simhash {
        if args.bits.is_some()
            || args.hamming_distance.is_some()
            || args.no_verify
            || args.simhash_index.is_some()
        {
            return Err(Fatal(format!(
                "--bits, --hamming-distance, --no-verify and --simhash-index apply to --method simhash, not {method}"
            )));
        }
        return Ok(None);
    }
    let bits = args.bits.unwrap_or(64);
    if bits != 64 && bits != 128 {
        return Err(Fatal(format!("--bits must be 64 or 128, not {bits}")));
    }
    let mut o = simhash::Options::new(min, bits, !args.no_verify);
    if let Some(h) = args.hamming_distance {
        if h > bits / 2 {
            return Err(Fatal(format!(
                "--hamming-distance must be at most {} for {bits} bits, not {h}",
                bits / 2
            )));
        }
        o.distance = h;
    }
    o.backend = args.simhash_index.unwrap_or_default();
    Ok(Some(o))
}

/// The minhash settings, checked before anything is read; `None` for other
/// methods, which take no minhash flags.
fn minhash_options(
    args: &PairsArgs,
    method: Method,
    min: f64,
) -> Result<Option<minhash::Options>, Fatal> {
    if method != Method::Minhash {
        if args.hashes.is_some() || args.bands.is_some() || args.rows.is_some() {
            return Err(Fatal(format!(
                "--hashes, --bands and --rows apply to --method minhash, not {method}"
            )));
        }
        return Ok(None);
    }
    let max = minhash::MAX_HASHES;
    if let (Some(b), Some(r)) = (args.bands, args.rows) {
        if args.hashes.is_some() {
            return Err(Fatal(
                "--hashes chooses the bands and rows; give it or --bands and --rows, not both"
                    .into(),
            ));
        }
        if b == 0 || r == 0 || u64::from(b) * u64::from(r) > u64::from(max) {
            return Err(Fatal(format!(
                "--bands and --rows must be at least 1 with bands × rows at most {max}, not {b} × {r}"
            )));
        }
        return Ok(Some(minhash::Options {
            banding: minhash::Banding { bands: b, rows: r },
        }));
    }
    let n = args.hashes.unwrap_or(minhash::DEFAULT_HASHES);
    if !(1..=max).contains(&n) {
        return Err(Fatal(format!("--hashes must be 1 to {max}, not {n}")));
    }
    Ok(Some(minhash::Options::new(min, n)))
}

/// Stats every method shares: the documents and the cached shingle keys.
fn common_stats(l: &Similar) -> Map<String, Value> {
    let n = l.docs.len();
    let shingles: usize = l.docs.iter().map(|d| d.shingles.len()).sum();
    let empty = l.docs.iter().filter(|d| d.shingles.is_empty()).count();
    let mut m = Map::new();
    m.insert("documents".into(), json!(n));
    m.insert("documents_without_shingles".into(), json!(empty));
    m.insert("shingles".into(), json!(shingles));
    m.insert(
        "shingle_key_bytes_per_document".into(),
        json!(8.0 * shingles as f64 / n.max(1) as f64),
    );
    m
}

/// Pairs as paths, `a < b` bytewise, sorted by (a, b).
fn by_path<'a>(pairs: &[Pair], paths: &'a [String]) -> Vec<(&'a str, &'a str, f64)> {
    let mut out: Vec<(&str, &str, f64)> = pairs
        .iter()
        .map(|p| {
            let (a, b) = (&paths[p.a as usize], &paths[p.b as usize]);
            let (a, b) = if a.as_bytes() <= b.as_bytes() {
                (a, b)
            } else {
                (b, a)
            };
            (a.as_str(), b.as_str(), p.similarity)
        })
        .collect();
    out.sort_by(|x, y| (x.0.as_bytes(), x.1.as_bytes()).cmp(&(y.0.as_bytes(), y.1.as_bytes())));
    out
}

#[derive(Serialize)]
struct Report<'a> {
    format: &'static str,
    method: String,
    params: ParamsJson,
    pairs: Vec<PairJson<'a>>,
    clusters: Vec<Vec<&'a str>>,
    stats: Map<String, Value>,
    skipped: Vec<SkippedJson>,
}

#[derive(Serialize)]
struct ParamsJson {
    k: usize,
    min_similarity: f64,
    order: String,
}

#[derive(Serialize)]
struct PairJson<'a> {
    a: &'a str,
    b: &'a str,
    similarity: f64,
}

/// "1 pair", "2 pairs".
fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// The readable report: totals, what the method did, the largest clusters and
/// the most similar pairs.
fn summary(
    out: &mut impl Write,
    method: Method,
    min: f64,
    l: &Similar,
    pairs: &[(&str, &str, f64)],
    clusters: &[Vec<u32>],
    stats: &Map<String, Value>,
) -> std::io::Result<()> {
    let num = |k: &str| stats.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    writeln!(
        out,
        "{} documents, {} with Jaccard ≥ {min} by {method}, in {}",
        l.docs.len(),
        count(pairs.len(), "pair"),
        count(clusters.len(), "cluster")
    )?;
    match method {
        Method::Simhash => {
            let verify = stats.get("verify").and_then(Value::as_bool) == Some(true);
            writeln!(
                out,
                "simhash: {} bits, Hamming distance ≤ {}, {} index of {} slices searched within {}; {}",
                num("bits"),
                num("hamming_distance"),
                stats.get("index").and_then(Value::as_str).unwrap_or("?"),
                num("slices"),
                num("slice_radius"),
                if verify {
                    "candidates verified by exact Jaccard"
                } else {
                    "unverified: similarity estimated from the distance"
                }
            )?;
            writeln!(
                out,
                "  {} probes, {} candidates, {} within distance, {} verified",
                num("probes"),
                num("candidates"),
                num("within_distance"),
                if verify {
                    num("verified").to_string()
                } else {
                    "not".into()
                }
            )?;
            writeln!(
                out,
                "  per document: {} B of sketch and {:.0} B of index, beside {:.0} B of shingle keys",
                num("sketch_bytes_per_document"),
                num("index_bytes_per_document"),
                num("shingle_key_bytes_per_document")
            )?;
        }
        Method::Minhash => {
            writeln!(
                out,
                "minhash: {} hashes a page, in {} bands of {} rows; two pages whose band agrees in full are a candidate pair (at Jaccard {min}, with probability {:.4}), verified by exact Jaccard",
                num("hashes"),
                num("bands"),
                num("rows"),
                num("candidate_probability_at_threshold"),
            )?;
            writeln!(
                out,
                "  {} documents with shingles, {} distinct sets, {} shared buckets (largest {}), {} candidates, {} verified",
                num("documents_with_shingles"),
                num("distinct_sets"),
                num("shared_buckets"),
                num("largest_bucket"),
                num("candidates"),
                num("verified")
            )?;
            writeln!(
                out,
                "  per document: {} B of band keys (its sketch), beside {:.0} B of shingle keys",
                num("sketch_bytes_per_document"),
                num("shingle_key_bytes_per_document")
            )?;
        }
        Method::Exact => {
            writeln!(
                out,
                "exact: {} shared shingle keys (longest posting list {}), {} intersections counted, {} candidate pairs",
                num("shared_keys"),
                num("longest_posting"),
                num("intersections"),
                num("candidates")
            )?;
            writeln!(
                out,
                "  per document: inverted index {:.0} B, beside {:.0} B of shingle keys",
                num("index_bytes") / l.docs.len().max(1) as f64,
                num("shingle_key_bytes_per_document")
            )?;
        }
        _ => {}
    }
    writeln!(out, "  {:.2} s", num("total_seconds"))?;
    if !clusters.is_empty() {
        writeln!(out, "\nlargest clusters:")?;
        for c in clusters.iter().take(10) {
            let names: Vec<_> = c
                .iter()
                .take(6)
                .map(|&i| super::show::show(&l.paths[i as usize]))
                .collect();
            let more = if c.len() > 6 {
                format!(", … {} more", c.len() - 6)
            } else {
                String::new()
            };
            writeln!(out, "  {:>4}  {}{more}", c.len(), names.join(", "))?;
        }
        if clusters.len() > 10 {
            writeln!(
                out,
                "  … and {} more (--json lists all)",
                clusters.len() - 10
            )?;
        }
    }
    if !pairs.is_empty() {
        let mut top: Vec<&(&str, &str, f64)> = pairs.iter().collect();
        top.sort_by(|x, y| y.2.total_cmp(&x.2));
        writeln!(out, "\nmost similar pairs:")?;
        for (a, b, s) in top.iter().take(20) {
            let (a, b) = (super::show::show(a), super::show::show(b));
            writeln!(out, "  {s:.3}  {a}  {b}")?;
        }
        if pairs.len() > 20 {
            writeln!(out, "  … and {} more (--json lists all)", pairs.len() - 20)?;
        }
    }
    if !l.skipped.is_empty() {
        writeln!(
            out,
            "\n{} files skipped (listed on stderr)",
            l.skipped.len()
        )?;
    }
    Ok(())
}
