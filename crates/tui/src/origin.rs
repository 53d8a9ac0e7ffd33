//! The Origin pane's state: the document shown, its text wrapped to the
//! pane's width, the scroll position, the selected copied block, and the
//! jump history.

use std::ops::Range;
use std::sync::Arc;

use unicode_segmentation::UnicodeSegmentation;

use super::glyphs;

use super::search::Search;
use lineage_engine::{Command, OriginView};

/// Where to put the view of a document being opened.
#[derive(Clone, Debug, PartialEq)]
enum Landing {
    /// On a passage (marked): a jump to an origin.
    Passage(Range<u32>),
    /// On a line with a block selected: back to where a jump started, so
    /// the next block is the one after the block left.
    Line(usize, Option<usize>),
    /// On the search match at this byte of the text (a search of every page).
    Match(usize),
}

#[derive(Default)]
pub(crate) struct OriginState {
    pub view: Option<Arc<OriginView>>,
    /// What was asked last (id, exact); other answers are stale.
    pub(crate) requested: Option<(u32, bool)>,
    /// Show the exact result instead of the estimate.
    pub exact: bool,
    /// The text's visual lines at `width`, as byte ranges.
    pub lines: Vec<Range<usize>>,
    pub width: u16,
    pub(crate) scroll: usize,
    /// The selected run (a copied one).
    pub block: Option<usize>,
    /// Tokens to mark in the view: the passage a jump landed on.
    pub mark: Option<Range<u32>>,
    /// Where a jump is to land once its view arrives.
    pending: Option<(u32, Landing)>,
    /// Documents jumped from (id, scroll, the block selected), for `back`.
    pub back: Vec<(u32, usize, Option<usize>)>,
    /// A search of the text; it goes when another document opens (but one
    /// a search of every page opens on its match).
    pub search: Option<Search>,
}

impl OriginState {
    /// Ask for document `id`'s origins.
    pub fn open(&mut self, id: u32) -> Command {
        self.requested = Some((id, self.exact));
        self.pending = None;
        Command::Origin {
            id,
            exact: self.exact,
        }
    }

    /// Ask again for the document shown (its answer keeps the scroll).
    pub(crate) fn refresh(&mut self) -> Option<Command> {
        let id = self.id()?;
        self.requested = Some((id, self.exact));
        Some(Command::Origin {
            id,
            exact: self.exact,
        })
    }

    pub(crate) fn toggle_exact(&mut self) -> Option<Command> {
        self.exact = !self.exact;
        let (id, _) = self.requested?;
        self.requested = Some((id, self.exact));
        Some(Command::Origin {
            id,
            exact: self.exact,
        })
    }

    /// Take an answer; answers to anything but the latest question are dropped.
    pub(crate) fn receive(&mut self, view: Arc<OriginView>, width: u16, height: usize) -> bool {
        if self.requested != Some((view.id, view.exact)) {
            return false;
        }
        let same_doc = self.view.as_ref().is_some_and(|v| v.id == view.id);
        self.view = Some(view);
        self.wrap(width);
        let landing = self.pending.take().filter(|p| Some(p.0) == self.id());
        // A search belongs to its page (issue 41: `no match` for another
        // page's search): another page drops it, unless a search of every
        // page opened it on its match.
        if !same_doc && !matches!(landing, Some((_, Landing::Match(_)))) {
            self.search = None;
        }
        if let Some(query) = self.search.take().map(|s| s.query) {
            self.search = Some(Search::new(&query, self.text()));
        }
        if let Some((_, landing)) = landing {
            self.block = None;
            match landing {
                Landing::Passage(tokens) => {
                    self.scroll = self.line_of_token(tokens.start).saturating_sub(2);
                    self.mark = Some(tokens);
                }
                Landing::Line(line, block) => {
                    self.scroll = line;
                    self.mark = None;
                    let runs = self.view.as_ref().map_or(0, |v| v.runs.len());
                    self.block = block.filter(|&b| b < runs);
                }
                Landing::Match(at) => {
                    self.mark = None;
                    if let Some(s) = &mut self.search {
                        s.first_from(at);
                    }
                    self.scroll = 0;
                    self.show_match(height);
                }
            }
        } else if !same_doc {
            self.scroll = 0;
            self.mark = None;
            self.block = None;
        }
        self.clamp(height);
        true
    }

    pub(crate) fn id(&self) -> Option<u32> {
        self.view.as_ref().map(|v| v.id)
    }

    /// Re-wrap for a new width, keeping the top line's text in view.
    pub(crate) fn resize(&mut self, width: u16, height: usize) {
        if width != self.width {
            let top = self.lines.get(self.scroll).map(|l| l.start);
            self.wrap(width);
            if let Some(top) = top {
                self.scroll = self.line_of_byte(top);
            }
            self.clamp(height);
        }
    }

    pub(crate) fn scroll_by(&mut self, d: isize, height: usize) {
        self.scroll = self.scroll.saturating_add_signed(d);
        self.clamp(height);
    }

    pub(crate) fn scroll_to(&mut self, line: usize, height: usize) {
        self.scroll = line;
        self.clamp(height);
    }

    fn clamp(&mut self, height: usize) {
        self.scroll = self
            .scroll
            .min(self.lines.len().saturating_sub(height.max(1)));
    }

    /// Select the next (or previous) copied block and scroll to it.
    pub(crate) fn step_block(&mut self, forward: bool, height: usize) {
        self.step_to(forward, height, |r| r.origin.is_some());
    }

    /// Select the next (or previous) run new in the page, one no earlier
    /// page holds, into view.
    pub(crate) fn step_new(&mut self, forward: bool, height: usize) {
        self.step_to(forward, height, |r| r.origin.is_none());
    }

    /// Select the next (or previous) run `wanted` takes, from the one
    /// selected (from the start, or the end, where none is), into view.
    fn step_to(
        &mut self,
        forward: bool,
        height: usize,
        wanted: impl Fn(&lineage_origin::Run) -> bool,
    ) {
        let Some(view) = &self.view else { return };
        let copied = |i: &usize| wanted(&view.runs[*i]);
        let next = match (self.block, forward) {
            (None, true) => (0..view.runs.len()).find(copied),
            (None, false) => (0..view.runs.len()).rev().find(copied),
            (Some(b), true) => (b + 1..view.runs.len()).find(copied),
            (Some(b), false) => (0..b).rev().find(copied),
        };
        if let Some(b) = next {
            self.block = Some(b);
            let line = self.line_of_token(view.runs[b].start);
            if line < self.scroll || line >= self.scroll + height {
                self.scroll = line.saturating_sub(2);
                self.clamp(height);
            }
        }
    }

    /// Search for `query` from the top line shown on; its first match there
    /// (or the first of all) comes into view.
    pub(crate) fn search(&mut self, query: &str, height: usize) {
        let mut s = Search::new(query, self.text());
        s.first_from(self.lines.get(self.scroll).map_or(0, |l| l.start));
        self.search = Some(s);
        self.show_match(height);
    }

    /// The next (or previous) match, into view.
    pub(crate) fn step_match(&mut self, forward: bool, height: usize) {
        if let Some(s) = &mut self.search {
            s.step(forward);
            self.show_match(height);
        }
    }

    fn show_match(&mut self, height: usize) {
        let Some(m) = self
            .search
            .as_ref()
            .and_then(|s| Some(s.matches[s.current?].start))
        else {
            return;
        };
        let line = self.line_of_byte(m);
        if line < self.scroll || line >= self.scroll + height {
            self.scroll = line.saturating_sub(2);
            self.clamp(height);
        }
    }

    /// The text shown ("" without one).
    fn text(&self) -> &str {
        match self.view.as_ref().map(|v| &v.text) {
            Some(Ok(t)) => t,
            _ => "",
        }
    }

    /// `Enter` on the selected block: ask for its origin, to land on the
    /// passage it was copied from.
    pub(crate) fn jump(&mut self) -> Option<Command> {
        let view = self.view.as_ref()?;
        let b = self.block?;
        let target = (*view.targets.get(b)?)?;
        let run = view.runs[b];
        Some(self.open_at(
            target.id,
            target.token..target.token + (run.end - run.start),
        ))
    }

    /// Open document `id` on the passage `tokens` (marked), remembering
    /// where the one shown was, for `back`.
    pub(crate) fn open_at(&mut self, id: u32, tokens: Range<u32>) -> Command {
        self.jump_to(id, Landing::Passage(tokens))
    }

    /// Open document `id` to land at `landing`, remembering where the one
    /// shown was, for `back`.
    fn jump_to(&mut self, id: u32, landing: Landing) -> Command {
        if let Some(v) = &self.view {
            self.back.push((v.id, self.scroll, self.block));
        }
        let cmd = self.open(id);
        self.pending = Some((id, landing));
        cmd
    }

    /// Open document `id` searched for `query`, on its match at byte `at`
    /// of the text (a search of every page found it there), remembering
    /// where the one shown was, for `back`.
    pub(crate) fn open_found(&mut self, id: u32, query: &str, at: usize) -> Command {
        let cmd = self.jump_to(id, Landing::Match(at));
        // The view's answer searches its text for the query (see `receive`).
        self.search = Some(Search::new(query, ""));
        cmd
    }

    /// Back to the document jumped from, if any.
    pub(crate) fn go_back(&mut self) -> Option<Command> {
        let (id, scroll, block) = self.back.pop()?;
        let cmd = self.open(id);
        self.pending = Some((id, Landing::Line(scroll, block)));
        Some(cmd)
    }

    /// The run a click at visual `line`, display column `col` falls in.
    pub(crate) fn run_at(&self, line: usize, col: u16) -> Option<usize> {
        let view = self.view.as_ref()?;
        let text = view.text.as_ref().ok()?;
        let range = self.lines.get(line)?;
        let mut w = 0u16;
        let mut byte = None;
        for (i, g) in drawn(text, range.clone()) {
            w += glyphs::width(g) as u16;
            if w > col {
                byte = Some(i);
                break;
            }
        }
        let byte = byte? as u32;
        let token = view.spans.partition_point(|s| s.1 <= byte);
        let span = view.spans.get(token)?;
        if span.0 > byte {
            return None;
        }
        view.runs
            .iter()
            .position(|r| (r.start..r.end).contains(&(token as u32)))
    }

    fn line_of_token(&self, token: u32) -> usize {
        let Some(view) = &self.view else { return 0 };
        let byte = view.spans.get(token as usize).map_or(0, |s| s.0 as usize);
        self.line_of_byte(byte)
    }

    fn line_of_byte(&self, byte: usize) -> usize {
        self.lines
            .partition_point(|l| l.end < byte)
            .min(self.lines.len().saturating_sub(1))
    }

    fn wrap(&mut self, width: u16) {
        self.width = width;
        self.lines = match self.view.as_ref().map(|v| &v.text) {
            Some(Ok(text)) => wrap(text, width.max(1) as usize),
            _ => Vec::new(),
        };
    }
}

/// Break `text` into lines of at most `width` columns: after the last space
/// that fits (or anywhere in a longer word), and at newlines, except that a
/// newline inside a paragraph is a space ([`soft_breaks`]): source texts are
/// often wrapped at 72–80 columns, and keeping those breaks in a narrower
/// pane leaves one-word orphan lines. Ranges index `text` itself (spans are
/// its byte offsets), so a line may hold a paragraph's newline (drawn as a
/// space); a hard newline, and a space or newline where a line breaks, is in
/// no range.
pub(crate) fn wrap(text: &str, width: usize) -> Vec<Range<usize>> {
    let mut soft = soft_breaks(text).into_iter().peekable();
    let mut lines = Vec::new();
    let (mut start, mut w, mut space) = (0, 0, None);
    // Bytes a join does not draw (see `joined`) end here.
    let mut unseen = 0;
    // By grapheme cluster, so a glyph is never split between two lines. A
    // newline is one (`\r\n` too: its `\r` stays in the line, drawn blank).
    for (i, g) in text.grapheme_indices(true) {
        let i = if g == "\r\n" { i + 1 } else { i };
        let g = if g == "\r\n" { "\n" } else { g };
        let flows = g == "\n" && soft.next_if_eq(&i).is_some();
        if g == "\n" && !flows {
            // One blank line stands for a run of them (HTML's markup
            // leaves many).
            let blank = text[start..i].trim().is_empty();
            if !(blank
                && lines
                    .last()
                    .is_some_and(|l: &Range<usize>| text[l.clone()].trim().is_empty()))
            {
                lines.push(start..i);
            }
            (start, w, space) = (i + 1, 0, None);
            continue;
        }
        if flows {
            let j = joined(text, i);
            unseen = j.end;
            if j.start == i {
                // A hyphen's join: no space, nowhere to break.
                continue;
            }
        } else if i < unseen {
            continue;
        }
        let blank = g == " " || flows;
        // After a blank, the next line starts past what a join hides.
        let next = if flows { unseen } else { i + 1 };
        let cw = glyphs::width(g);
        if w + cw > width && i > start {
            if blank {
                // The blank that does not fit is the break itself.
                lines.push(start..i);
                (start, w, space) = (next, 0, None);
                continue;
            }
            let cut = space.filter(|&s| s > start).unwrap_or(i);
            lines.push(start..cut);
            w = glyphs::str_width(&text[cut..i]);
            start = cut;
            space = None;
            if w + cw > width && i > start {
                // What followed the space does not fit beside a wide char.
                lines.push(start..i);
                (start, w) = (i, 0);
            }
        }
        w += cw;
        if blank {
            space = Some(next);
        }
    }
    lines.push(start..text.len());
    lines
}

/// What a join at the soft newline `nl` does not draw: the next line's
/// indentation (the newline is drawn as one space), or, after a word broken
/// at a hyphen (`one-` then `minute`), the newline too (`one-minute`).
/// Returned as the range from the first byte not drawn (the newline's, or
/// the one after it) to the next line's text.
pub(crate) fn joined(text: &str, nl: usize) -> Range<usize> {
    let after = nl + 1;
    let rest = &text[after..];
    let indent = rest.len() - rest.trim_start_matches([' ', '\t']).len();
    let before = text[..nl].chars().rev();
    let hyphen = {
        let mut b = before;
        b.next() == Some('-') && b.next().is_some_and(char::is_alphabetic)
    };
    let next_letter = rest[indent..].starts_with(char::is_alphabetic);
    if hyphen && next_letter {
        nl..after + indent
    } else {
        after..after + indent
    }
}

/// The bytes of visual line `line` of `text` that are not drawn: a newline
/// inside a line is a paragraph's join (a hard one ends a line), see
/// [`joined`].
pub(crate) fn unseen_in(text: &str, line: Range<usize>) -> Vec<Range<usize>> {
    (text[line.clone()].match_indices('\n'))
        .map(|(p, _)| joined(text, line.start + p))
        .map(|r| r.start..r.end.min(line.end))
        .filter(|r| !r.is_empty())
        .collect()
}

/// The glyphs of visual line `line` of `text` that are drawn, with their
/// byte offsets in `text` (what [`unseen_in`] leaves).
pub(crate) fn drawn(text: &str, line: Range<usize>) -> impl Iterator<Item = (usize, &str)> {
    let unseen = unseen_in(text, line.clone());
    (text[line.clone()].grapheme_indices(true))
        .map(move |(i, g)| (line.start + i, g))
        .filter(move |(i, _)| !unseen.iter().any(|u| u.contains(i)))
}

/// The newlines of `text` that join two lines of one paragraph. A break
/// stays before a blank line, a list item (`- `, `* `, `+ `, `1. `), a
/// heading, a block quote, a table row, indented or fenced code, and after
/// a line ending in two spaces (Markdown's hard break), a heading, a table
/// row or code. reStructuredText's too: a heading's underline (or any rule,
/// `=====`, `+---+`) stands alone, and after a line ending in `::` or a code
/// directive (`.. code-block:: console`, [`code_directive`]) and a blank
/// line, the lines indented more than it are a literal block, kept as
/// written, as are a directive's options (`:linenos:`). AsciiDoc's `term::`
/// is followed at once by its description, which is prose however indented
/// (git's docs indent it with a tab).
pub(crate) fn soft_breaks(text: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut fenced = false;
    // The indentation of the line that opened a literal block, and of a
    // line just before that may open one (after a blank line).
    let mut literal: Option<usize> = None;
    let mut opening: Option<usize> = None;
    // The indentation of a directive just before, whose options may follow.
    let mut directive: Option<usize> = None;
    // The indentation of the term whose description this is.
    let mut description: Option<usize> = None;
    let mut after_term = false;
    // The newline ending the previous line, if that line may flow on.
    let mut open: Option<usize> = None;
    let mut offset = 0;
    for line in text.split('\n') {
        let fence = {
            let t = line.trim_start_matches(' ');
            line.len() - t.len() <= 3 && (t.starts_with("```") || t.starts_with("~~~"))
        };
        let indent = line.len() - line.trim_start().len();
        let blank = line.trim().is_empty();
        if literal.is_some_and(|base| !blank && indent <= base) {
            literal = None;
        }
        if description.is_some_and(|base| blank || indent <= base) {
            description = None;
        }
        // A directive's options come between it and the blank line.
        let option = directive
            .is_some_and(|base| !blank && indent > base && line.trim_start().starts_with(':'));
        if !option {
            // A literal block begins after a blank line; a term's
            // description (not a directive's content) at once.
            literal = literal.or(opening.filter(|_| blank));
            description = description
                .or(opening.filter(|&base| directive.is_none() && !blank && indent > base));
            opening = None;
            directive = None;
        }
        let in_literal = literal.is_some();
        if !fenced && literal.is_none() && !option {
            let body_is_code = code_directive(line);
            if body_is_code.is_some() {
                directive = Some(indent);
            }
            if body_is_code == Some(true) || line.trim_end().ends_with("::") {
                opening = Some(indent);
            }
        }
        let indented_code = description.is_none() && is_indented_code(line);
        let code = fenced || fence || in_literal || option || indented_code || is_rule(line);
        fenced ^= fence;
        // Terms of one description (`-v::`, `--verbose::`) stay apart.
        let term = line.trim_end().ends_with("::");
        if let Some(nl) = open
            && !code
            && continues(line)
            && !(term && after_term)
        {
            out.push(nl);
        }
        let ends = offset + line.len();
        open = (!code && flows_on(line)).then_some(ends);
        after_term = term;
        offset = ends + 1;
    }
    out
}

/// Whether `line` is a reStructuredText directive (`.. NAME:: ARGS`): `Some`
/// of whether its body is code, shown as written like a literal block,
/// whatever its arguments (`.. code-block:: console`).
fn code_directive(line: &str) -> Option<bool> {
    let rest = line.trim_start().strip_prefix(".. ")?;
    let (name, _) = rest.split_once("::")?;
    let word = |c: char| c.is_alphanumeric() || "-_:.+".contains(c);
    (!name.is_empty() && name.chars().all(word))
        .then(|| ["code-block", "code", "sourcecode", "parsed-literal"].contains(&name))
}

fn is_indented_code(line: &str) -> bool {
    line.starts_with("    ") || line.starts_with('\t')
}

/// A line that stands alone though it is not blank: punctuation only — a
/// heading's underline or overline (`=====`, `-----`), a rule, a table's
/// border (`+----+----+`, `=====  =====`), AsciiDoc's list continuation
/// (`+`) — or a block's attribute line (`[verse]`, `[[anchor]]`,
/// `[source,sh]`).
fn is_rule(line: &str) -> bool {
    let t = line.trim();
    let marks = t.chars().any(|c| !c.is_whitespace());
    let punctuation = marks && t.chars().all(|c| c.is_ascii_punctuation() || c == ' ');
    let attribute = t.len() > 2 && t.starts_with('[') && t.ends_with(']') && !t.contains(' ');
    punctuation || attribute
}

/// Whether a paragraph may go on after `line`.
fn flows_on(line: &str) -> bool {
    let t = line.trim_start();
    !t.is_empty() && !line.ends_with("  ") && !t.starts_with('#') && !t.starts_with('|')
}

/// Whether `line` goes on with the paragraph before it.
fn continues(line: &str) -> bool {
    let t = line.trim_start();
    let ordered = {
        let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        digits > 0 && (t[digits..].starts_with(". ") || t[digits..].starts_with(") "))
    };
    !t.is_empty()
        && !ordered
        && !["- ", "* ", "+ ", "#", ">", "|"]
            .iter()
            .any(|p| t.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    use proptest::prelude::*;
    use ratatui::style::Style;

    use crate::panes::styled_line;

    fn shown(t: &str, width: usize) -> Vec<&str> {
        wrap(t, width).into_iter().map(|r| &t[r]).collect()
    }

    #[test]
    fn a_paragraph_wrapped_at_80_columns_flows_into_a_narrower_pane() {
        let t = "Tidewater runs on any Linux system with systemd and a\n\
                 64-bit or 32-bit ARM processor.\n";
        assert_eq!(
            shown(t, 40),
            [
                "Tidewater runs on any Linux system with ",
                "systemd and a\n64-bit or 32-bit ARM ",
                "processor.",
                ""
            ]
        );
    }

    #[test]
    fn breaks_stay_before_blocks_and_after_hard_breaks() {
        let t = "Intro line\nstill intro\n\n- item one\n  goes on\n* item two\n1. three\n\
                 # Head\nafter head\n> quote\n| a | b |\n| c | d |\n    code\nplain  \nhard\n\
                 ```\nfenced\nlines\n```\nend";
        let soft: Vec<&str> = soft_breaks(t)
            .into_iter()
            .map(|nl| {
                let a = t[..nl].rfind('\n').map_or(0, |p| p + 1);
                &t[a..nl]
            })
            .collect();
        // Only these lines flow into the next one.
        assert_eq!(soft, ["Intro line", "- item one"]);
    }

    #[test]
    fn a_join_draws_one_space_or_none_after_a_broken_word() {
        let t = "the cost of\n   clean water is a one-\nminute walk, and-\n 42 more";
        let lines = wrap(t, 80);
        assert_eq!(lines.len(), 1);
        let drawn: String = styled_line(t, lines[0].clone(), Style::new(), &[])
            .spans
            .iter()
            .map(|s| s.content.as_ref())
            .collect();
        // Not `of   clean` nor `one- minute`; a hyphen before a number stays a dash.
        assert_eq!(
            drawn,
            "the cost of clean water is a one-minute walk, and- 42 more"
        );
        // The wrap measures what is drawn: at its width it is one line still.
        assert_eq!(wrap(t, glyphs::str_width(&drawn)).len(), 1);
        assert_eq!(wrap(t, glyphs::str_width(&drawn) - 1).len(), 2);
    }

    #[test]
    fn restructured_text_keeps_its_headings_tables_and_literal_blocks() {
        let t = "Abstract\n========\nThe text goes\non here::\n\n   $ tidectl check\n   \
                 $ tidectl run\n\nBack to prose\nthat flows.\n\n+----+----+\n| a  | b  |\n\
                 +----+----+\n.. note::\n\n   Indented note\n   lines\nend\n[verse]\nA line\n+\nmore\n\n\
                 term::\n  its description\n  flows on";
        assert_eq!(
            shown(t, 60),
            [
                "Abstract",
                "========",
                "The text goes\non here::",
                "",
                "   $ tidectl check",
                "   $ tidectl run",
                "",
                "Back to prose\nthat flows.",
                "",
                "+----+----+",
                "| a  | b  |",
                "+----+----+",
                ".. note::",
                "",
                "   Indented note",
                "   lines",
                "end",
                "[verse]",
                "A line",
                "+",
                "more",
                "",
                "term::\n  its description\n  flows on"
            ]
        );
    }

    #[test]
    fn restructured_text_code_directives_keep_their_bodies_as_written() {
        // LLVM's clang/docs/ClangFormat.rst.
        let t = ":program:`clang-format` is located in `clang/tools/clang-format` and can be used\n\
                 to format C/C++/Java/JavaScript/JSON/Objective-C/Protobuf/C# code.\n\n\
                 .. code-block:: console\n\n  $ clang-format -help\n  \
                 OVERVIEW: A tool to format C/C++/Java/JavaScript/JSON/Objective-C/Protobuf/C# code.\n\n  \
                 If no arguments are specified, it formats the code from standard input\n  \
                 and writes the result to the standard output.\n\n\
                 When the desired code formatting style is different from the available options,\n\
                 the style can be customized.\n";
        assert_eq!(
            shown(t, 200),
            [
                ":program:`clang-format` is located in `clang/tools/clang-format` and can be used\n\
                 to format C/C++/Java/JavaScript/JSON/Objective-C/Protobuf/C# code.",
                "",
                ".. code-block:: console",
                "",
                "  $ clang-format -help",
                "  OVERVIEW: A tool to format C/C++/Java/JavaScript/JSON/Objective-C/Protobuf/C# code.",
                "",
                "  If no arguments are specified, it formats the code from standard input",
                "  and writes the result to the standard output.",
                "",
                "When the desired code formatting style is different from the available options,\n\
                 the style can be customized.",
                ""
            ]
        );
        // The other code directives, with options before the body; a
        // directive of prose keeps its options as written too.
        for d in [
            ".. code:: c++",
            ".. sourcecode:: c++",
            ".. parsed-literal::",
        ] {
            let t = format!("{d}\n   :linenos:\n   :caption: A\n\n   int a;\n   int b;\nEnd\nhere");
            let want = [
                d,
                "   :linenos:",
                "   :caption: A",
                "",
                "   int a;",
                "   int b;",
                "End\nhere",
            ];
            assert_eq!(shown(&t, 80), want, "{d}");
        }
        let t = ".. note:: Some words\n   :class: aside\n\n   more words\n   on two lines";
        assert_eq!(
            shown(t, 80),
            [
                ".. note:: Some words",
                "   :class: aside",
                "",
                "   more words\n   on two lines"
            ]
        );
    }

    #[test]
    fn asciidoc_descriptions_indented_with_a_tab_are_prose() {
        // git's Documentation/git-commit.txt.
        let t = "-v::\n--verbose::\n\tBe more verbose.\n\n--dry-run::\n\
                 \tDo not create a commit, but show a list of paths that are\n\
                 \tto be committed, paths with local changes that will be left\n\
                 \tuncommitted and paths that are untracked.\n\n\
                 \t$ git commit --dry-run\n";
        assert_eq!(
            shown(t, 60),
            [
                "-v::",
                "--verbose::\n\tBe more verbose.",
                "",
                "--dry-run::\n\tDo not create a commit, but show a list of paths",
                "that are\n\tto be committed, paths with local changes that will",
                "be left\n\tuncommitted and paths that are untracked.",
                "",
                // After a blank line, tab-indented lines are code again.
                "\t$ git commit --dry-run",
                ""
            ]
        );
    }

    #[test]
    fn wrapping_breaks_after_spaces_and_inside_long_words() {
        let t = "the quick brown fox\n\nabcdefghij";
        let lines: Vec<&str> = wrap(t, 10).into_iter().map(|r| &t[r]).collect();
        assert_eq!(lines, ["the quick ", "brown fox", "", "abcdefghij"]);
        let lines: Vec<&str> = wrap("abcdefghijkl", 5)
            .into_iter()
            .map(|r| &"abcdefghijkl"[r])
            .collect();
        assert_eq!(lines, ["abcde", "fghij", "kl"]);
        // A run of blank lines shows as one.
        assert_eq!(shown("a\n\n  \n\n\nb\n", 10), ["a", "", "b", ""]);
    }

    proptest! {
        #[test]
        fn every_byte_is_shown_once_or_is_a_break_and_lines_fit(
            parts in proptest::collection::vec(
                prop_oneof![
                    "[a-zé]{1,14}", Just(" ".to_string()), Just("\n".to_string()),
                    Just("\n- ".to_string()), Just("\n# ".to_string()), Just("  \n".to_string()),
                    Just("\n```\n".to_string()), Just("\n    ".to_string()), Just("文字".to_string()),
                    Just("-\n".to_string()), Just("\n  ".to_string()), Just("::\n".to_string()),
                    Just("\n===\n".to_string()), Just("\n\t".to_string()),
                    Just("\n.. code:: c\n".to_string()),
                    Just("👩\u{200d}💻".to_string()), Just("e\u{301}".to_string()),
                ],
                0..60,
            ),
            width in 1usize..30,
        ) {
            let t: String = parts.concat();
            let lines = wrap(&t, width);
            // No glyph is split between lines.
            let mut bounds: Vec<usize> = t.grapheme_indices(true).map(|g| g.0).collect();
            bounds.push(t.len());
            for l in &lines {
                prop_assert!(bounds.contains(&l.start) && bounds.contains(&l.end), "{:?} in {:?}", l, t);
            }
            let mut covered = vec![0u8; t.len()];
            let mut last_end = 0;
            for l in &lines {
                prop_assert!(l.start >= last_end && l.start <= l.end, "{:?}", lines);
                last_end = l.end;
                for b in l.clone() {
                    covered[b] += 1;
                }
                let line = &t[l.clone()];
                // Measured as drawn: without what a join does not draw.
                let w: usize = drawn(&t, l.clone()).map(|(_, g)| glyphs::width(g)).sum();
                prop_assert!(w <= width || line.graphemes(true).count() == 1, "{:?} at {}", line, width);
                for hard in ["\n\n", "\n- ", "\n#", "  \n", "\n```", "```\n", "\n==="] {
                    prop_assert!(!line.contains(hard), "{:?} joined in {:?}", hard, line);
                }
                // Indented lines are code, but in a term's description (`a::\n  b`).
                if !t.contains("::\n ") {
                    for hard in ["\n    ", "\n\t"] {
                        prop_assert!(!line.contains(hard), "{:?} joined in {:?}", hard, line);
                    }
                }
            }
            // Blank lines after a blank one (spaces or tabs) are not shown.
            for (b, n) in covered.iter().enumerate() {
                prop_assert!(*n == 1 || (*n == 0 && matches!(t.as_bytes()[b], b' ' | b'\t' | b'\n')),
                    "byte {} of {:?} shown {} times", b, t, n);
            }
        }
    }
}
