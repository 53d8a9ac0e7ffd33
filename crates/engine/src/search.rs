//! Searching every live page for a phrase, ignoring case, in a thread of its
//! own (a read-only connection to the index, a cancel flag, progress), so a
//! large folder's search never holds the engine. A page's text is the one the
//! Origin pane shows (its kept bytes, else its file, prepared), so a match's
//! byte offset is where that pane finds it.

use std::ops::Range;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::{SearchHit, SearchView};
use lineage_core::text::find::find;
use lineage_core::text::{Format, prepare};
use lineage_source as source;
use lineage_store::index::{History, Kept};

/// Pages listed at most (the counts go on past them).
pub(crate) const SEARCH_HITS: usize = 1000;

/// Progress is reported at most this often.
const PROGRESS_EVERY: Duration = Duration::from_millis(100);

/// Characters of context shown before a match, and after it.
const BEFORE: usize = 40;
const AFTER: usize = 80;

/// A live page to search.
pub(crate) struct Page {
    pub id: u32,
    pub path: Arc<str>,
    pub version: u32,
}

/// A search's job: `pages` in the order they are listed.
pub(crate) struct Job {
    pub generation: u64,
    pub query: String,
    pub pages: Vec<Page>,
    /// Where the pages' files are, and the largest read when a page's text
    /// was not kept.
    pub root: std::path::PathBuf,
    pub max_file_size: u64,
    pub cancel: Arc<AtomicBool>,
}

/// Search `job`'s pages, calling `report` with progress and, last, the whole
/// answer (`done`); returns early, without it, when cancelled.
pub(crate) fn run(history: &History, job: &Job, mut report: impl FnMut(SearchView)) {
    let mut view = SearchView {
        generation: job.generation,
        query: job.query.clone(),
        searched: 0,
        total: job.pages.len(),
        hits: Vec::new(),
        pages: 0,
        matches: 0,
        unread: 0,
        done: false,
    };
    let mut last = Instant::now();
    for page in &job.pages {
        if job.cancel.load(Ordering::Relaxed) {
            return;
        }
        match bytes(history, &job.root, page, job.max_file_size) {
            Some(bytes) => {
                // Borrowed where the bytes are the text (UTF-8, not HTML).
                let text = prepare(&bytes, Format::from_path(&page.path));
                let mut found = find(&text, &job.query);
                if let Some(first) = found.next() {
                    let matches = 1 + found.count();
                    view.pages += 1;
                    view.matches += matches;
                    if view.hits.len() < SEARCH_HITS {
                        let (context, marked) = context(&text, first.clone());
                        view.hits.push(SearchHit {
                            id: page.id,
                            path: page.path.clone(),
                            version: page.version,
                            matches: matches as u32,
                            first,
                            context,
                            marked,
                        });
                    }
                }
            }
            None => view.unread += 1,
        }
        view.searched += 1;
        if last.elapsed() >= PROGRESS_EVERY {
            last = Instant::now();
            report(view.clone());
        }
    }
    view.done = true;
    report(view);
}

/// The page's bytes: kept by the index, else its file's (a live page's file
/// holds it, or a newer version on its way); None when neither reads.
fn bytes(history: &History, root: &Path, page: &Page, max: u64) -> Option<Vec<u8>> {
    match history.text(page.id) {
        Ok(Kept::Text(bytes)) => Some(bytes),
        _ => source::read_file(&source::name::path(root, &page.path), max).ok(),
    }
}

/// The match's line around it, at most [`BEFORE`] characters before and
/// [`AFTER`] after (whitespace runs as one space), with the match's place in it.
fn context(text: &str, hit: Range<usize>) -> (String, Range<usize>) {
    // Read no further than shown either way (a page may be one long line).
    let from = (text[..hit.start].char_indices().rev())
        .take(BEFORE)
        .take_while(|&(_, c)| c != '\n')
        .last()
        .map_or(hit.start, |(i, _)| i);
    let before = &text[from..hit.start];
    let after: String = (text[hit.end..].chars())
        .take(AFTER)
        .take_while(|&c| c != '\n')
        .collect();
    let squeeze = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut shown = squeeze(before);
    if before.ends_with(char::is_whitespace) && !shown.is_empty() {
        shown.push(' ');
    }
    let start = shown.len();
    shown.push_str(&squeeze(&text[hit]));
    let end = shown.len();
    if after.starts_with(char::is_whitespace) {
        shown.push(' ');
    }
    shown.push_str(&squeeze(&after));
    (shown, start..end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_is_the_line_around_the_match_with_its_place() {
        let text = "first line\nsome   words before the Needle and after\nlast";
        let at = text.find("Needle").unwrap();
        let (shown, marked) = context(text, at..at + 6);
        assert_eq!(shown, "some words before the Needle and after");
        assert_eq!(&shown[marked], "Needle");
        // A long line is cut to the characters either side.
        let long = format!("{}é needle {}", "a".repeat(100), "b".repeat(200));
        let at = long.find("needle").unwrap();
        let (shown, marked) = context(&long, at..at + 6);
        assert_eq!(&shown[marked.clone()], "needle");
        assert_eq!(shown[..marked.start].chars().count(), BEFORE);
        assert_eq!(shown[marked.end..].chars().count(), AFTER);
    }
}
