//! The benchmarks' generated trees (`scale`, `watch`): pages of Zipf-drawn
//! words, 100 to a folder, deterministic from a seed, with near-duplicate
//! families and copied passages.
//!
//! - Words come from a vocabulary of 30,000 pronounceable words drawn with a
//!   Zipf–Mandelbrot law (rank r with weight 1 / (r + 2.7)), so frequent
//!   words repeat as in prose and shingles of k words are mostly distinct.
//! - Every eighth original page heads a family. A page is, with probability
//!   `variants`, an edited copy of an earlier head: each word replaced with
//!   probability `1 − (2J / (1 + J))^(1/8)`, so that the two pages' k = 8
//!   shingle sets have a Jaccard resemblance of about J, for J drawn from
//!   0.3, 0.5, 0.7, 0.8, 0.9 and 0.95.
//! - Otherwise, with probability `copies`, one of its paragraphs is copied
//!   from an earlier page (any, uniformly): the copied passages.
//! - Page i is `f{i / 100:04}/p{i:06}.md` with mtime 1,600,000,000 + i s,
//!   so `--order mtime` takes the pages in the order they were made.
//!
//! Two other shapes stress the near-duplicate clusters (issue 23), where
//! every pair inside a group would be quadratic: [`Shape::Copies`], `docs`
//! copies of one 100-word page (a docs tree holding every release of a
//! page), and [`Shape::Windows`], `docs` overlapping 60-word windows of a
//! text of `docs / 10 + 59` words, window i starting at its word
//! i mod `docs / 10`: each window has ~10 copies and resembles the ~17
//! windows either side at J ≥ 0.5 (pages kept in many near versions).
#![allow(dead_code)]

use std::fs;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, SystemTime};

/// What to generate.
#[derive(Clone, Debug)]
pub struct Spec {
    pub shape: Shape,
    pub docs: usize,
    /// Words a page, on average (paragraphs of 40 to 80 words, a title).
    pub words: usize,
    pub seed: u64,
    /// Share of pages that are edited copies of a family head.
    pub variants: f64,
    /// Share of the other pages with a paragraph copied from an earlier one.
    pub copies: f64,
}

impl Spec {
    /// The issue's tree: `docs` pages of about 300 words, a quarter of them
    /// near duplicates, a third of the rest with a copied paragraph.
    pub fn pages(docs: usize, seed: u64) -> Spec {
        Spec {
            shape: Shape::Pages,
            docs,
            words: 300,
            seed,
            variants: 0.25,
            copies: 0.3,
        }
    }

    /// A tree of another shape, `docs` pages from `seed`.
    pub fn shaped(shape: Shape, docs: usize, seed: u64) -> Spec {
        Spec {
            shape,
            ..Spec::pages(docs, seed)
        }
    }

    /// One line naming the tree (written beside it, to know it again).
    pub fn manifest(&self) -> String {
        let shape = match self.shape {
            Shape::Pages => String::new(),
            other => format!(" shape={}", other.name()),
        };
        format!(
            "lineage bench tree v1: docs={} words={} seed={} variants={} copies={}{shape}\n",
            self.docs, self.words, self.seed, self.variants, self.copies
        )
    }
}

/// The kinds of tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Pages with near-duplicate families and copied passages.
    Pages,
    /// Copies of one 100-word page.
    Copies,
    /// Overlapping 60-word windows of one text, one word apart, ~10 of each.
    Windows,
}

impl Shape {
    pub fn name(self) -> &'static str {
        match self {
            Shape::Pages => "pages",
            Shape::Copies => "copies",
            Shape::Windows => "windows",
        }
    }

    pub fn parse(s: &str) -> Option<Shape> {
        [Shape::Pages, Shape::Copies, Shape::Windows]
            .into_iter()
            .find(|x| x.name() == s)
    }
}

/// What was generated.
#[derive(Debug, Default)]
pub struct Made {
    pub bytes: u64,
    pub words: u64,
    pub heads: usize,
    /// Variants by target Jaccard, in the order of [`LEVELS`].
    pub variants: [usize; 6],
    pub copied: usize,
}

/// Target resemblances of a family's variants to their head.
pub const LEVELS: [f64; 6] = [0.3, 0.5, 0.7, 0.8, 0.9, 0.95];

const VOCABULARY: usize = 30_000;

/// splitmix64.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x6A09_E667_F3BC_C909)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in [lo, hi).
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi - lo) as u64) as usize
    }
}

/// The vocabulary and its Zipf–Mandelbrot cumulative weights.
struct Words {
    words: Vec<String>,
    cdf: Vec<f64>,
}

impl Words {
    fn new() -> Words {
        const ONSETS: [&str; 16] = [
            "b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "th",
        ];
        const VOWELS: [&str; 5] = ["a", "e", "i", "o", "u"];
        let syllable = |n: usize| format!("{}{}", ONSETS[n % 16], VOWELS[n / 16 % 5]);
        // Bijective base 80: 80 words of one syllable, then 6,400 of two, …
        let words: Vec<String> = (0..VOCABULARY)
            .map(|r| {
                let mut n = r + 1;
                let mut w = String::new();
                while n > 0 {
                    n -= 1;
                    w.insert_str(0, &syllable(n % 80));
                    n /= 80;
                }
                w
            })
            .collect();
        let mut total = 0.0;
        let cdf = (0..VOCABULARY)
            .map(|r| {
                total += 1.0 / (r as f64 + 2.7);
                total
            })
            .collect::<Vec<f64>>()
            .into_iter()
            .map(|c| c / total)
            .collect();
        Words { words, cdf }
    }

    fn draw(&self, rng: &mut Rng) -> u32 {
        let u = rng.unit();
        self.cdf.partition_point(|&c| c < u).min(VOCABULARY - 1) as u32
    }
}

/// A page: its title's words and its paragraphs' words.
#[derive(Clone)]
struct Page {
    title: Vec<u32>,
    paragraphs: Vec<Vec<u32>>,
}

/// Write the tree of `spec` under `root` (created; files there are
/// overwritten, nothing is removed).
pub fn generate(root: &Path, spec: &Spec) -> Made {
    match spec.shape {
        Shape::Pages => {}
        Shape::Copies => return generate_text(root, spec, 100, 100, |_| 0),
        Shape::Windows => {
            let starts = (spec.docs / 10).max(1);
            return generate_text(root, spec, starts + 59, 60, |i| i % starts);
        }
    }
    let words = Words::new();
    let mut rng = Rng::new(spec.seed);
    let mut pages: Vec<Page> = Vec::with_capacity(spec.docs);
    let mut heads: Vec<usize> = Vec::new();
    let mut made = Made::default();
    let mut originals = 0usize;
    for i in 0..spec.docs {
        let page = if !heads.is_empty() && rng.unit() < spec.variants {
            let head = heads[rng.range(0, heads.len())];
            let level = rng.range(0, LEVELS.len());
            made.variants[level] += 1;
            let j = LEVELS[level];
            let p = 1.0 - (2.0 * j / (1.0 + j)).powf(1.0 / 8.0);
            let mut page = pages[head].clone();
            for w in page.paragraphs.iter_mut().flatten() {
                if rng.unit() < p {
                    *w = words.draw(&mut rng);
                }
            }
            page
        } else {
            let mut page = Page {
                title: (0..rng.range(2, 6)).map(|_| words.draw(&mut rng)).collect(),
                paragraphs: Vec::new(),
            };
            let mut left = spec.words as i64 - page.title.len() as i64;
            while left > 20 {
                let n = rng.range(40, 81).min(left as usize + 10);
                page.paragraphs
                    .push((0..n).map(|_| words.draw(&mut rng)).collect());
                left -= n as i64;
            }
            if i > 0 && rng.unit() < spec.copies {
                let from = &pages[rng.range(0, i)];
                let src = from.paragraphs[rng.range(0, from.paragraphs.len())].clone();
                let at = rng.range(0, page.paragraphs.len());
                page.paragraphs[at] = src;
                made.copied += 1;
            }
            if originals.is_multiple_of(8) {
                heads.push(i);
                made.heads += 1;
            }
            originals += 1;
            page
        };
        let text = render(&page, &words.words, i);
        write_page(root, i, &text);
        made.bytes += text.len() as u64;
        made.words +=
            (page.title.len() + page.paragraphs.iter().map(Vec::len).sum::<usize>()) as u64;
        pages.push(page);
    }
    made
}

/// `spec.docs` pages, page i the `width` words of a text of `len` words
/// from its word `start(i)`.
fn generate_text(
    root: &Path,
    spec: &Spec,
    len: usize,
    width: usize,
    start: impl Fn(usize) -> usize,
) -> Made {
    let words = Words::new();
    let mut rng = Rng::new(spec.seed);
    let text: Vec<&str> = (0..len)
        .map(|_| words.words[words.draw(&mut rng) as usize].as_str())
        .collect();
    let mut made = Made::default();
    for i in 0..spec.docs {
        let from = start(i);
        let page = text[from..from + width].join(" ") + "\n";
        write_page(root, i, &page);
        made.bytes += page.len() as u64;
        made.words += width as u64;
    }
    made
}

/// Page `i` of a tree: its path, its mtime.
fn write_page(root: &Path, i: usize, text: &str) {
    let path = root.join(format!("f{:04}/p{i:06}.md", i / 100));
    if i.is_multiple_of(100) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
    }
    let mut f = fs::File::create(&path).unwrap();
    f.write_all(text.as_bytes()).unwrap();
    f.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(1_600_000_000 + i as u64))
        .unwrap();
}

/// Markdown: a title, then paragraphs of sentences of 6 to 17 words.
fn render(page: &Page, words: &[String], i: usize) -> String {
    let mut s = String::with_capacity(2400);
    s.push_str("# ");
    for (n, &w) in page.title.iter().enumerate() {
        if n > 0 {
            s.push(' ');
        }
        s.push_str(&words[w as usize]);
    }
    s.push('\n');
    // Sentence lengths from the page number, so an edited copy keeps its
    // head's punctuation where its words are kept (punctuation is not a token).
    let mut rng = Rng::new(i as u64);
    for para in &page.paragraphs {
        s.push('\n');
        let mut until = rng.range(6, 18);
        for (n, &w) in para.iter().enumerate() {
            if n > 0 {
                s.push(' ');
            }
            s.push_str(&words[w as usize]);
            until -= 1;
            if until == 0 || n + 1 == para.len() {
                s.push('.');
                until = rng.range(6, 18);
            }
        }
        s.push('\n');
    }
    s
}
