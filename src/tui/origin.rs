//! The Origin pane's state: the document shown, its text wrapped to the
//! pane's width, the scroll position, the selected copied block, and the
//! jump history.

use std::ops::Range;
use std::sync::Arc;

use unicode_width::UnicodeWidthChar;

use super::search::Search;
use crate::engine::{Command, OriginView};

/// Where to put the view of a document being opened.
#[derive(Clone, Debug, PartialEq)]
enum Landing {
    /// On a passage (marked): a jump to an origin.
    Passage(Range<u32>),
    /// On a line: back to where a jump started.
    Line(usize),
}

#[derive(Default)]
pub struct OriginState {
    pub view: Option<Arc<OriginView>>,
    /// What was asked last (id, exact); other answers are stale.
    pub requested: Option<(u32, bool)>,
    /// Show the exact result instead of the estimate.
    pub exact: bool,
    /// The text's visual lines at `width`, as byte ranges.
    pub lines: Vec<Range<usize>>,
    pub width: u16,
    pub scroll: usize,
    /// The selected run (a copied one).
    pub block: Option<usize>,
    /// Tokens to mark in the view: the passage a jump landed on.
    pub mark: Option<Range<u32>>,
    /// Where a jump is to land once its view arrives.
    pending: Option<(u32, Landing)>,
    /// Documents jumped from (id, scroll), for `back`.
    pub back: Vec<(u32, usize)>,
    /// A search of the text; it stays when another document opens.
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
        if let Some(query) = self.search.take().map(|s| s.query) {
            self.search = Some(Search::new(&query, self.text()));
        }
        let landing = self.pending.take().filter(|p| Some(p.0) == self.id());
        if let Some((_, landing)) = landing {
            self.block = None;
            match landing {
                Landing::Passage(tokens) => {
                    self.scroll = self.line_of_token(tokens.start).saturating_sub(2);
                    self.mark = Some(tokens);
                }
                Landing::Line(line) => {
                    self.scroll = line;
                    self.mark = None;
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
        let Some(view) = &self.view else { return };
        let copied = |i: &usize| view.runs[*i].origin.is_some();
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
        self.back.push((view.id, self.scroll));
        let cmd = self.open(target.id);
        let passage = target.token..target.token + (run.end - run.start);
        self.pending = Some((target.id, Landing::Passage(passage)));
        Some(cmd)
    }

    /// Back to the document jumped from, if any.
    pub(crate) fn go_back(&mut self) -> Option<Command> {
        let (id, scroll) = self.back.pop()?;
        let cmd = self.open(id);
        self.pending = Some((id, Landing::Line(scroll)));
        Some(cmd)
    }

    /// The run a click at visual `line`, display column `col` falls in.
    pub(crate) fn run_at(&self, line: usize, col: u16) -> Option<usize> {
        let view = self.view.as_ref()?;
        let text = view.text.as_ref().ok()?;
        let range = self.lines.get(line)?;
        let mut w = 0u16;
        let mut byte = None;
        for (i, c) in text[range.clone()].char_indices() {
            w += char_width(c) as u16;
            if w > col {
                byte = Some(range.start + i);
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

/// Display width of a character as the pane draws it (tabs and other
/// control characters as one space).
pub(crate) fn char_width(c: char) -> usize {
    if c.is_control() {
        1
    } else {
        c.width().unwrap_or(0)
    }
}

/// Break `text` into lines at newlines and, to fit `width` columns, after the
/// last space that fits (or anywhere in a longer word). Ranges exclude the
/// newline.
pub(crate) fn wrap(text: &str, width: usize) -> Vec<Range<usize>> {
    let mut lines = Vec::new();
    let mut offset = 0;
    for para in text.split('\n') {
        let mut start = 0;
        let mut w = 0;
        let mut space = None;
        for (i, c) in para.char_indices() {
            let cw = char_width(c);
            if w + cw > width && i > start {
                let cut = space.filter(|&s| s > start).unwrap_or(i);
                lines.push(offset + start..offset + cut);
                w = para[cut..i].chars().map(char_width).sum();
                start = cut;
                space = None;
            }
            w += cw;
            if c == ' ' {
                space = Some(i + 1);
            }
        }
        lines.push(offset + start..offset + para.len());
        offset += para.len() + 1;
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
