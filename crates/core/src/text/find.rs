//! Finding a phrase in a text, ignoring case (Unicode lower case, so `É`
//! finds `é`): the byte ranges of its occurrences, in order and not
//! overlapping, each starting and ending on whole characters of the text.
//! It streams over the text, holding one query's length of folded
//! characters, so a search over a whole folder costs no copy of each page;
//! an ASCII text (most pages) is searched byte by byte, where case folding
//! is one byte to one byte.

use std::collections::VecDeque;
use std::ops::Range;

/// The occurrences of `query` in `text` (none for an empty query).
pub fn find<'a>(text: &'a str, query: &str) -> Matches<'a> {
    let folded: Vec<char> = query.chars().flat_map(char::to_lowercase).collect();
    // In an ASCII text only an ASCII query can match, byte for byte.
    let ascii = text.is_ascii().then(|| {
        (folded.iter().all(char::is_ascii)).then(|| folded.iter().map(|&c| c as u8).collect())
    });
    Matches {
        text,
        ascii: ascii.map(|q| (0, q)),
        query: folded,
        chars: text.char_indices(),
        pending: VecDeque::new(),
        window: VecDeque::new(),
        before: None,
    }
}

/// See [`find`].
pub struct Matches<'a> {
    text: &'a str,
    /// An ASCII text: where to go on from, and the folded query's bytes
    /// (None: a query that cannot match it).
    ascii: Option<(usize, Option<Vec<u8>>)>,
    query: Vec<char>,
    chars: std::str::CharIndices<'a>,
    /// Folded characters of the text's current character not yet in the
    /// window (one character may fold to several).
    pending: VecDeque<(usize, char)>,
    /// The folded characters under the query, and one more to tell whether
    /// a match would end inside a character's folding.
    window: VecDeque<(usize, char)>,
    /// The byte offset of the folded character just before the window.
    before: Option<usize>,
}

impl Matches<'_> {
    /// The next match in an ASCII text, from byte `from`.
    fn next_ascii(text: &[u8], from: &mut usize, q: &[u8]) -> Option<Range<usize>> {
        let first = q.first()?;
        while *from + q.len() <= text.len() {
            let at = *from + memchr::memchr2(*first, first.to_ascii_uppercase(), &text[*from..])?;
            if text.get(at..at + q.len())?.eq_ignore_ascii_case(q) {
                *from = at + q.len();
                return Some(at..at + q.len());
            }
            *from = at + 1;
        }
        None
    }

    /// The next folded character with the offset of the one it came from.
    fn next_folded(&mut self) -> Option<(usize, char)> {
        if self.pending.is_empty() {
            let (i, c) = self.chars.next()?;
            self.pending.extend(c.to_lowercase().map(|l| (i, l)));
        }
        self.pending.pop_front()
    }
}

impl Iterator for Matches<'_> {
    type Item = Range<usize>;

    fn next(&mut self) -> Option<Range<usize>> {
        if let Some((from, q)) = &mut self.ascii {
            return Self::next_ascii(self.text.as_bytes(), from, q.as_deref()?);
        }
        let m = self.query.len();
        if m == 0 {
            return None;
        }
        loop {
            while self.window.len() <= m {
                match self.next_folded() {
                    Some(f) => self.window.push_back(f),
                    None => break,
                }
            }
            if self.window.len() < m {
                return None;
            }
            let start = self.window[0].0;
            let last = self.window[m - 1].0;
            let whole_start = self.before != Some(start);
            let whole_end = self.window.get(m).is_none_or(|f| f.0 != last);
            let same = (self.window.iter().take(m).map(|f| f.1)).eq(self.query.iter().copied());
            if whole_start && whole_end && same {
                self.window.drain(..m);
                self.before = Some(last);
                let end = last + self.text[last..].chars().next().map_or(0, char::len_utf8);
                return Some(start..end);
            }
            self.before = self.window.pop_front().map(|f| f.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The plain way: fold the whole text first, then compare at each place.
    fn reference(text: &str, query: &str) -> Vec<Range<usize>> {
        let q: Vec<char> = query.chars().flat_map(char::to_lowercase).collect();
        if q.is_empty() {
            return Vec::new();
        }
        let folded: Vec<(usize, char)> = text
            .char_indices()
            .flat_map(|(i, c)| c.to_lowercase().map(move |l| (i, l)))
            .collect();
        let mut out = Vec::new();
        let mut i = 0;
        while i + q.len() <= folded.len() {
            let j = i + q.len();
            let last = folded[j - 1].0;
            let whole = (i == 0 || folded[i - 1].0 != folded[i].0)
                && (j == folded.len() || folded[j].0 != last);
            if whole && folded[i..j].iter().map(|f| f.1).eq(q.iter().copied()) {
                let end = last + text[last..].chars().next().map_or(0, char::len_utf8);
                out.push(folded[i].0..end);
                i = j;
            } else {
                i += 1;
            }
        }
        out
    }

    #[test]
    fn matches_ignore_case_and_stay_on_whole_characters() {
        let t = "Install it. INSTALL again; reinstall. Édition édition";
        let found: Vec<&str> = find(t, "install").map(|r| &t[r]).collect();
        assert_eq!(found, ["Install", "INSTALL", "install"]);
        let found: Vec<&str> = find(t, "éDITION").map(|r| &t[r]).collect();
        assert_eq!(found, ["Édition", "édition"]);
        assert_eq!(find(t, "").count(), 0);
        assert_eq!(find(t, "zz").count(), 0);
        assert_eq!(find("aaaa", "aa").collect::<Vec<_>>(), [0..2, 2..4]);
        // İ folds to two characters: "i" alone is not half of it.
        assert_eq!(find("İx ix", "i").next(), Some(4..5));
        assert_eq!(find("İx ix", "i").count(), 1);
        assert_eq!(find("İx", "i\u{307}x").next(), Some(0..3));
    }

    proptest! {
        #[test]
        fn streaming_finds_what_folding_the_whole_text_finds(
            text in "[aAbİi\u{307}é É]{0,40}",
            query in "[aAbİi\u{307}éÉ]{1,3}",
        ) {
            prop_assert_eq!(find(&text, &query).collect::<Vec<_>>(), reference(&text, &query));
        }

        #[test]
        fn an_ascii_text_is_searched_as_any_other(
            text in "[aAbB \n]{0,40}",
            query in "[aAbBİK\u{212a} ]{1,3}",
        ) {
            prop_assert_eq!(find(&text, &query).collect::<Vec<_>>(), reference(&text, &query));
        }
    }
}
