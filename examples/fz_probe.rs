use lineage::tui::filter::{Fuzzy, Matcher};
use std::time::Instant;
fn main() {
    let paths: Vec<String> = (0..100_000)
        .map(|i| {
            format!(
                "site/section-{:03}/topic-{:02}/page-{i:06}.md",
                i % 997,
                i % 61
            )
        })
        .collect();
    let m = Fuzzy::default();
    for p in [
        "s", "se", "sec", "sec4", "sec42", "sec42p", "sec42pg", "sec42pg7",
    ] {
        let t = Instant::now();
        let n = paths.iter().filter(|x| m.score(p, x).is_some()).count();
        println!("{p}: {n} {:?}", t.elapsed());
    }
}
