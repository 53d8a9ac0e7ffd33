//! Text measured as the terminal draws it: by grapheme cluster (a ZWJ emoji
//! sequence, a flag, a letter with its combining marks is one glyph), with
//! ratatui's own widths, so that where we cut, pad and wrap agrees with the
//! cells it fills. Measured char by char, `👩‍💻` is 4 columns and may be cut
//! between its parts; drawn, it is one glyph of 2.

use ratatui::buffer::CellWidth;
use unicode_segmentation::UnicodeSegmentation;

/// Columns of one grapheme cluster; a control or bidirectional formatting
/// character counts one (a page's text draws it as a space; a name shows
/// it escaped, `paths::shown`).
pub(crate) fn width(g: &str) -> usize {
    if g.starts_with(|c: char| c.is_control() || lineage_source::name::is_bidi_control(c)) {
        g.chars().count()
    } else {
        usize::from(g.cell_width())
    }
}

/// Columns of `s`.
pub(crate) fn str_width(s: &str) -> usize {
    s.graphemes(true).map(width).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clusters_are_one_glyph_each() {
        assert_eq!(str_width("👩‍💻"), 2);
        assert_eq!(str_width("cafe\u{301}"), 4);
        assert_eq!(str_width("🇫🇷🇩🇪"), 4);
        assert_eq!(str_width("日本"), 4);
        assert_eq!(str_width("a\tb"), 3);
    }
}
