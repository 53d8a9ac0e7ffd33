//! `lineage report ROOT -o FILE`: one self-contained HTML file a colleague
//! opens in a browser (docs/reference.md, "Report"): the documents with
//! their shares and dominant origins, each page's passages by origin
//! linked to where the origin holds them, the near-duplicate clusters side
//! by side, the settings and the table's regime. The index is made where
//! none is, and caught up first.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::output::Output;
use super::{Fatal, SourceArgs, StoreArgs};
use lineage_config::Config;

#[derive(Args, Debug)]
pub(super) struct ReportArgs {
    #[command(flatten)]
    pub(super) source: SourceArgs,
    /// Write the report to FILE (HTML), whole or not at all: not inside
    /// ROOT (lineage only reads it), never through a link or a FIFO.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: PathBuf,
    /// Jaccard resemblance at which two pages are near duplicates, in one
    /// cluster, above 0 and at most 1 [config: watch.min_similarity;
    /// default: 0.5].
    #[arg(long, value_name = "S", value_parser = similarity)]
    min_similarity: Option<f64>,
    #[command(flatten)]
    store: StoreArgs,
}

fn similarity(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 1.0 => Ok(v),
        _ => Err(format!("a resemblance above 0 and at most 1, not {s:?}")),
    }
}

pub(super) fn run(args: ReportArgs, mut config: Config) -> Result<(), Fatal> {
    args.source.apply(&mut config);
    args.store.apply(&mut config);
    super::set(&mut config.watch.min_similarity, args.min_similarity);
    config.validate()?;
    let root = args.source.root.as_path();
    // Checked before anything is read: a FILE that cannot be is said at once.
    let (output, sink) = Output::open(Some(&args.output), root)?;
    let (ix, rows, regime) = super::explain::open_index(root, &args.store.at, &config, true)?;
    let title = lineage_engine::html::title_of(root);
    let mut out = std::io::BufWriter::with_capacity(1 << 20, sink);
    let sentence = regime.as_ref().map(|r| r.sentence.as_str());
    let figures =
        lineage_engine::html::write_report(&ix, &rows, &config, &title, sentence, &mut out)
            .map_err(|e| output.failed(false, e.into()))?;
    out.flush().map_err(|e| output.failed(false, e.into()))?;
    drop(out);
    output.commit()?;
    super::show::note(&format!(
        "lineage report: {}: {} pages, {} earlier versions their passages came from, {} distinct texts, {} near-duplicate pairs in {} clusters; {:.1} MB",
        super::show::show(&args.output.display().to_string()),
        figures.pages,
        figures.origins,
        figures.texts,
        figures.pairs,
        figures.clusters,
        figures.bytes as f64 / 1e6
    ));
    Ok(())
}
