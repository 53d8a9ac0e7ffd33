//! A selection in a list of `len` rows of which `height` are visible: every
//! list pane keeps one, and `offset` is what render starts drawing from.

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cursor {
    pub selected: usize,
    pub offset: usize,
}

/// A move of the selection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Move {
    By(isize),
    Page(isize),
    Top,
    Bottom,
    To(usize),
}

impl Move {
    /// The move a list key makes: up, down, a page either way, first, last.
    pub(crate) fn of(action: super::keymap::Action) -> Option<Move> {
        use super::keymap::Action;
        Some(match action {
            Action::Up => Move::By(-1),
            Action::Down => Move::By(1),
            Action::PageUp => Move::Page(-1),
            Action::PageDown => Move::Page(1),
            Action::Top => Move::Top,
            Action::Bottom => Move::Bottom,
            _ => return None,
        })
    }
}

impl Cursor {
    /// Apply `m`, clamped to `0..len`, and scroll so the selection shows.
    pub(crate) fn apply(&mut self, m: Move, len: usize, height: usize) {
        let last = len.saturating_sub(1);
        let page = height.max(1) as isize;
        self.selected = match m {
            Move::By(d) => self.selected.saturating_add_signed(d),
            Move::Page(d) => self.selected.saturating_add_signed(d * page),
            Move::Top => 0,
            Move::Bottom => last,
            Move::To(i) => i,
        }
        .min(last);
        self.show(len, height);
    }

    /// Keep the selection inside the window and the window inside the list.
    pub(crate) fn show(&mut self, len: usize, height: usize) {
        let height = height.max(1);
        self.selected = self.selected.min(len.saturating_sub(1));
        if self.selected < self.offset {
            self.offset = self.selected;
        } else if self.selected >= self.offset + height {
            self.offset = self.selected + 1 - height;
        }
        self.offset = self.offset.min(len.saturating_sub(height));
    }

    /// The visible rows `offset..end`.
    pub(crate) fn window(&self, len: usize, height: usize) -> std::ops::Range<usize> {
        let start = self.offset.min(len);
        start..(start + height).min(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_selection_stays_visible_and_in_range() {
        let mut c = Cursor::default();
        c.apply(Move::By(12), 100, 10);
        assert_eq!((c.selected, c.offset), (12, 3));
        c.apply(Move::Page(-1), 100, 10);
        assert_eq!((c.selected, c.offset), (2, 2));
        c.apply(Move::Bottom, 100, 10);
        assert_eq!((c.selected, c.offset), (99, 90));
        c.apply(Move::By(5), 100, 10);
        assert_eq!(c.selected, 99);
        // The list shrinks under the selection.
        c.show(4, 10);
        assert_eq!((c.selected, c.offset), (3, 0));
        assert_eq!(c.window(4, 10), 0..4);
        c.apply(Move::Top, 0, 10);
        assert_eq!((c.selected, c.offset), (0, 0));
    }
}
