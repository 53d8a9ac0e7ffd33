//! HTML to text: tags, comments and `<script>`/`<style>` elements each become one
//! space — a newline for the tags of blocks (`<p>`, `<h2>`, `<li>`, `<br>`, …)
//! and a fence line (three backticks) for `<pre>`'s, so the text keeps its
//! paragraphs, headings, items and code as lines (whitespace and backticks
//! are no token: the tokens are the same); character entities are decoded.
//!
//! A small forward scanner after the HTML tokenizer's rules, not a parser: it
//! never looks back, so it runs in linear time on any input. What starts markup:
//! `<` + ASCII letter (start tag), `</` + ASCII letter (end tag), `</>`, `<!`
//! (comment, doctype, CDATA — all "bogus comments" up to `>` unless `<!--`) and
//! `<?` (processing instruction). Any other `<` is text. Markup left open at the
//! end of the input runs to the end, as in a browser.

use std::borrow::Cow;

/// Strip markup from `html` (already decoded text).
pub(crate) fn strip(html: &str) -> String {
    let bytes = html.as_bytes();
    let mut out = String::with_capacity(html.len());
    let mut text_start = 0;
    let mut i = 0;
    while let Some(offset) = find(bytes, i, b'<') {
        let lt = i + offset;
        match markup_end(bytes, lt) {
            Some(end) => {
                out.push_str(&html[text_start..lt]);
                out.push_str(separator(bytes, lt));
                text_start = end;
                i = end;
            }
            None => i = lt + 1,
        }
    }
    out.push_str(&html[text_start..]);
    // Entities are decoded after the markup is gone, so `&lt;b&gt;` stays text.
    if let Cow::Owned(decoded) = html_escape::decode_html_entities(&out) {
        return decoded;
    }
    out
}

/// Where each piece of [`strip`]'s output comes from: (its start in the
/// output, the source line it starts on), one mark for each stretch of
/// text and each separator, in order. The same scan as `strip`'s, so the
/// offsets are its output's (exact unless an entity straddles a tag).
pub(crate) fn line_marks(html: &str) -> Vec<(usize, u32)> {
    let bytes = html.as_bytes();
    let mut marks = Vec::new();
    let (mut out, mut line, mut seen) = (0usize, 1u32, 0usize);
    let mut at = |to: usize, line: &mut u32| {
        *line += bytes[seen..to].iter().filter(|&&b| b == b'\n').count() as u32;
        seen = to;
    };
    let decoded = |s: &str| html_escape::decode_html_entities(s).len();
    let (mut text_start, mut i) = (0, 0);
    while let Some(offset) = find(bytes, i, b'<') {
        let lt = i + offset;
        match markup_end(bytes, lt) {
            Some(end) => {
                at(text_start, &mut line);
                marks.push((out, line));
                out += decoded(&html[text_start..lt]);
                at(lt, &mut line);
                marks.push((out, line));
                out += separator(bytes, lt).len();
                text_start = end;
                i = end;
            }
            None => i = lt + 1,
        }
    }
    at(text_start, &mut line);
    marks.push((out, line));
    marks
}

/// Elements that start a line of their own in a browser.
const BLOCKS: [&[u8]; 32] = [
    b"address",
    b"article",
    b"aside",
    b"blockquote",
    b"body",
    b"br",
    b"dd",
    b"div",
    b"dl",
    b"dt",
    b"figcaption",
    b"figure",
    b"footer",
    b"h1",
    b"h2",
    b"h3",
    b"h4",
    b"h5",
    b"h6",
    b"header",
    b"hr",
    b"li",
    b"main",
    b"nav",
    b"ol",
    b"p",
    b"section",
    b"table",
    b"title",
    b"tr",
    b"ul",
    b"html",
];

/// What the markup at `lt` becomes: a space, a newline for a block's tag,
/// a fence line for `<pre>`'s (its lines are kept as written, as a fenced
/// block's are; backticks are no token, so the tokens stay the same).
fn separator(bytes: &[u8], lt: usize) -> &'static str {
    let from = if bytes.get(lt + 1) == Some(&b'/') {
        lt + 2
    } else {
        lt + 1
    };
    let rest = &bytes[from.min(bytes.len())..];
    let name = &rest[..rest
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric())
        .count()];
    if name.eq_ignore_ascii_case(b"pre") {
        "\n```\n"
    } else if BLOCKS.iter().any(|b| name.eq_ignore_ascii_case(b)) {
        "\n"
    } else {
        " "
    }
}

/// Offset of the first `needle` in `bytes[from..]`.
#[inline]
fn find(bytes: &[u8], from: usize, needle: u8) -> Option<usize> {
    bytes.get(from..)?.iter().position(|&b| b == needle)
}

/// The end (exclusive) of the markup starting with the `<` at `lt`, or `None` if
/// this `<` is text.
fn markup_end(bytes: &[u8], lt: usize) -> Option<usize> {
    let len = bytes.len();
    let at = |i: usize| bytes.get(i).copied();
    match at(lt + 1)? {
        b'!' if bytes[lt + 2..].starts_with(b"--") => Some(comment_end(bytes, lt + 2)),
        b'!' | b'?' => Some(find(bytes, lt + 2, b'>').map_or(len, |p| lt + 2 + p + 1)),
        b'/' => match at(lt + 2)? {
            b'>' => Some(lt + 3),
            c if c.is_ascii_alphabetic() => Some(tag_end(bytes, lt + 2)),
            _ => None,
        },
        c if c.is_ascii_alphabetic() => {
            let name_start = lt + 1;
            let name_end = bytes[name_start..]
                .iter()
                .position(|&b| is_space(b) || b == b'/' || b == b'>')
                .map_or(len, |p| name_start + p);
            let name = &bytes[name_start..name_end];
            let end = tag_end(bytes, name_end);
            if name.eq_ignore_ascii_case(b"script") || name.eq_ignore_ascii_case(b"style") {
                // Raw text: nothing inside is markup until the matching end tag
                // (even after `<script/>`, as browsers do).
                Some(raw_text_end(bytes, end, name))
            } else {
                Some(end)
            }
        }
        _ => None,
    }
}

/// HTML's ASCII whitespace in tags (tab, LF, FF, CR, space).
#[inline]
fn is_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | b'\x0C' | b'\r' | b' ')
}

/// End of a comment whose `--` opener starts at `from`: after the first `-->`
/// or `--!>` from there, so `<!-->` and `<!--->` close at once, as in HTML.
fn comment_end(bytes: &[u8], from: usize) -> usize {
    let mut i = from;
    while let Some(p) = find(bytes, i, b'-') {
        let dash = i + p;
        let rest = &bytes[dash..];
        if rest.starts_with(b"-->") {
            return dash + 3;
        }
        if rest.starts_with(b"--!>") {
            return dash + 4;
        }
        i = dash + 1;
    }
    bytes.len()
}

/// End of a tag whose name ends before `from`: after the first `>` that is not
/// inside a quoted attribute value.
fn tag_end(bytes: &[u8], from: usize) -> usize {
    let len = bytes.len();
    let mut i = from;
    while i < len {
        match bytes[i] {
            b'>' => return i + 1,
            b'=' => {
                i += 1;
                while i < len && is_space(bytes[i]) {
                    i += 1;
                }
                if i < len && (bytes[i] == b'"' || bytes[i] == b'\'') {
                    match find(bytes, i + 1, bytes[i]) {
                        Some(p) => i += 1 + p + 1,
                        None => return len,
                    }
                }
            }
            _ => i += 1,
        }
    }
    len
}

/// End of a `<script>`/`<style>` element whose content starts at `from`: after
/// the end tag `</name` (any case) followed by whitespace, `/` or `>`.
fn raw_text_end(bytes: &[u8], from: usize, name: &[u8]) -> usize {
    let mut i = from;
    while let Some(p) = find(bytes, i, b'<') {
        let lt = i + p;
        let name_end = lt + 2 + name.len();
        if bytes.get(lt + 1) == Some(&b'/')
            && bytes
                .get(lt + 2..name_end)
                .is_some_and(|n| n.eq_ignore_ascii_case(name))
            && bytes
                .get(name_end)
                .is_some_and(|&b| is_space(b) || b == b'/' || b == b'>')
        {
            return tag_end(bytes, name_end);
        }
        i = lt + 1;
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_marks_put_the_stripped_text_on_its_source_lines() {
        let html = "<html>\n<head><title>T</title></head>\n<body>\n<p>one\ntwo &amp; <b\nclass=x>three</b></p>\n<!-- a\nb -->four</body>";
        let out = strip(html);
        let marks = line_marks(html);
        let line = |word: &str| {
            let at = out.find(word).unwrap();
            let i = marks.partition_point(|m| m.0 <= at) - 1;
            marks[i].1 as usize + out[marks[i].0..at].matches('\n').count()
        };
        let source = |word: &str| html[..html.find(word).unwrap()].matches('\n').count() + 1;
        for w in ["T", "one", "two", "three", "four"] {
            assert_eq!(line(w), source(w), "{w} in {out:?}");
        }
        assert_eq!(
            marks.last().unwrap().0,
            out.len(),
            "the offsets are the output's: {out:?}"
        );
    }
    use crate::text::{Format, prepare, tokens};

    fn keys(text: &str) -> Vec<String> {
        tokens(text).into_iter().map(|t| t.key).collect()
    }

    #[test]
    fn tag_becomes_one_space_and_a_blocks_one_newline() {
        assert_eq!(strip("a<b>c"), "a c");
        assert_eq!(keys(&strip("a<b>c")), ["a", "c"]);
        assert_eq!(strip("<p>x</p>"), "\nx\n");
        assert_eq!(strip("a<br/>b<BR >c"), "a\nb\nc");
        assert_eq!(strip("<a href=\"/x\" class='y'>link</a>"), " link ");
        assert_eq!(strip("<H2>T</H2><li>i<b2>"), "\nT\n\ni ");
        // A `<pre>` is fenced, its lines as written.
        assert_eq!(
            strip("<p>a</p><Pre>x\n  y</pre>"),
            "\na\n\n```\nx\n  y\n```\n"
        );
        // The same tokens as with spaces.
        let page = "<h1>T</h1><p>One <em>two</em></p><ul><li>three</li></ul><pre>x = 1;</pre>";
        let spaced = strip(page).replace(['\n', '`'], " ");
        assert_eq!(tokens(&strip(page)), tokens(&spaced));
    }

    #[test]
    fn quoted_gt_stays_inside_the_tag() {
        assert_eq!(strip("<a title=\"x > y\">t</a>"), " t ");
        assert_eq!(strip("<a title = 'x > y' b=c>t</a>"), " t ");
        // A quote that is not an attribute value does not open one.
        assert_eq!(strip("<a b\"c>t"), " t");
    }

    #[test]
    fn lone_lt_is_text() {
        assert_eq!(strip("a < b"), "a < b");
        assert_eq!(strip("1<2 and 3 <= 4"), "1<2 and 3 <= 4");
        assert_eq!(strip("x <"), "x <");
        assert_eq!(strip("x </ y"), "x </ y");
        assert_eq!(strip("x </3"), "x </3");
        assert_eq!(strip("x </>y"), "x  y");
        assert_eq!(strip("<<b>>"), "< >");
    }

    #[test]
    fn comments_doctype_and_pi() {
        assert_eq!(strip("a<!-- x <b> y -->b"), "a b");
        assert_eq!(strip("a<!---->b<!-->c<!--->d"), "a b c d");
        assert_eq!(strip("a<!-- x --!>b"), "a b");
        assert_eq!(strip("a<!-- x -- y -->b"), "a b");
        assert_eq!(strip("<!DOCTYPE html><html>t"), " \nt");
        assert_eq!(strip("<?xml version=\"1.0\"?>t"), " t");
        // CDATA outside foreign content is a bogus comment: it ends at the first `>`.
        assert_eq!(strip("a<![CDATA[x]]>b"), "a b");
        // Unterminated: to the end.
        assert_eq!(strip("a<!-- never closed <b>x</b>"), "a ");
        assert_eq!(strip("a<!doctype"), "a ");
        assert_eq!(strip("a<p class=\"x>y"), "a\n");
        assert_eq!(strip("a<p"), "a\n");
    }

    #[test]
    fn script_and_style_are_dropped_whole() {
        let html = "a<script type=\"x\">if (a < b && c > d) { s = '</div>'; }</script>b";
        assert_eq!(strip(html), "a b");
        assert_eq!(strip("a<STYLE>p { x: y }</Style >b"), "a b");
        assert_eq!(strip("a<style media=screen>x</style\n>b"), "a b");
        // `</scripts>` is not the end tag; `<scripted>` is not a script.
        assert_eq!(strip("a<script>x</scripts>y</script>b"), "a b");
        assert_eq!(strip("a<scripted>x</scripted>b"), "a x b");
        // Unterminated: to the end.
        assert_eq!(strip("a<script>var x = 1; <p>text"), "a ");
        assert_eq!(strip("a<script"), "a ");
        assert!(keys(&strip("<script>hidden</script><style>gone</style>shown")) == ["shown"]);
    }

    #[test]
    fn entities() {
        assert_eq!(strip("caf&eacute;"), "caf\u{e9}");
        assert_eq!(strip("a &amp; b"), "a & b");
        assert_eq!(strip("&#65;&#x41;&#X42;"), "AAB");
        assert_eq!(strip("&lt;b&gt;"), "<b>");
        assert_eq!(strip("&amp;lt;"), "&lt;");
        assert_eq!(strip("a&nbsp;b"), "a\u{a0}b");
        // Unknown or unterminated references stay as they are.
        assert_eq!(strip("&bogus; &amp"), "&bogus; &amp");
        // An entity cut by a tag is not an entity.
        assert_eq!(strip("&am<b>p;"), "&am p;");
        assert_eq!(
            keys(&strip("<p>Caf&eacute; &amp; cr&egrave;me</p>")),
            ["caf\u{e9}", "cr\u{e8}me"]
        );
        assert_eq!(keys(&strip("na&#xEF;ve")), ["na\u{ef}ve"]);
    }

    #[test]
    fn prepare_strips_html_only() {
        let bytes = b"<p>Caf&eacute;</p><script>x</script>";
        assert_eq!(prepare(bytes, Format::Html), "\nCaf\u{e9}\n ");
        assert_eq!(
            prepare(bytes, Format::Plain),
            String::from_utf8_lossy(bytes)
        );
        assert_eq!(Format::from_path("a/B.HTM"), Format::Html);
        assert_eq!(Format::from_path("a/b.html.md"), Format::Plain);
    }

    #[test]
    fn non_ascii_survives() {
        assert_eq!(strip("<b>日本</b>é<i>ü</i>"), " 日本 é ü ");
    }

    #[test]
    fn linear_on_adversarial_input() {
        // Many openers with no closers would be quadratic if each rescanned.
        let n = 200_000;
        for unit in [
            "<a", "<!--", "<script>", "&a", "<a b='", "</", "<!-- --", "< ",
        ] {
            let input = unit.repeat(n);
            let start = std::time::Instant::now();
            let out = strip(&input);
            assert!(out.len() <= input.len());
            assert!(
                start.elapsed() < std::time::Duration::from_secs(2),
                "{unit:?} took {:?}",
                start.elapsed()
            );
        }
        let scripts = "<script></scrip".repeat(n);
        assert_eq!(strip(&scripts), " ");
    }
}
