//! Paths cut to a width so that what tells them apart stays visible: the
//! file name, the folders that distinguish a path from its neighbours in the
//! same list, the first folder, and a version suffix, which is never cut.
//! What goes is the middle, shown as `…`. Widths are terminal columns.

use unicode_segmentation::UnicodeSegmentation;

use super::glyphs;

/// For each path, how many of its last components (the file name is one)
/// tell it apart from every other path of `paths`.
pub(crate) fn tails(paths: &[&str]) -> Vec<usize> {
    let split: Vec<Vec<&str>> = paths.iter().map(|p| p.split('/').collect()).collect();
    let ends_with = |a: &[&str], b: &[&str], k: usize| {
        a.len() >= k && b.len() >= k && a[a.len() - k..] == b[b.len() - k..]
    };
    split
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let mut k = 1;
            while k < a.len()
                && split
                    .iter()
                    .enumerate()
                    .any(|(j, b)| j != i && b != a && ends_with(a, b, k))
            {
                k += 1;
            }
            k
        })
        .collect()
}

/// A fitted path glyph by glyph (grapheme clusters: a path is never cut
/// inside one), each with its byte offset in the shown path (None for the
/// `…` and the suffix), so marks on the path survive the cut.
type Traced<'a> = Vec<(&'a str, Option<usize>)>;

fn width_of(t: &[(&str, Option<usize>)]) -> usize {
    t.iter().map(|(g, _)| glyphs::width(g)).sum()
}

/// A name as the TUI draws it, as the CLI prints it
/// ([`lineage_source::name::escaped`]): control and format characters as
/// visible escapes (`\u{200b}`), bytes that are not UTF-8 as `\xNN`. Drawn
/// raw, U+202E would reorder the rest of the row (`invoice\u{202e}dm.exe`
/// shown as `invoiceexe.md`), U+200B would make `read\u{200b}me.md` look
/// like `readme.md`, and a zero-width character would take a cell ratatui
/// and the terminal count differently (the row shifted, stale glyphs left).
pub(crate) fn shown(path: &str) -> std::borrow::Cow<'_, str> {
    lineage_source::name::escaped(path)
}

/// A file system path (a config file, an export) as [`shown`] draws a
/// name: its bytes exact, nothing hidden.
pub(crate) fn shown_path(path: &std::path::Path) -> String {
    let name = lineage_source::name::of_os(path.as_os_str());
    shown(&name).into_owned()
}

/// Text typed into a prompt as it is drawn: shown as a name is ([`shown`]),
/// in at most `width` columns, its middle cut (its end, where the cursor
/// is, stays): a prompt holds up to `input::MAX_INPUT` characters.
pub(crate) fn typed(text: &str, width: usize) -> String {
    let shown = shown(text);
    let glyphs: Traced = shown.graphemes(true).map(|g| (g, None)).collect();
    cut_middle(&glyphs, width)
        .into_iter()
        .map(|t| t.0)
        .collect()
}

/// [`typed`] with a caret at byte `caret` of `text` (None: its end): the
/// text before it and after it, which share `width` where both do not fit,
/// so the caret stays in sight.
pub(crate) fn typed_at(text: &str, caret: Option<usize>, width: usize) -> (String, String) {
    let Some(c) = caret.filter(|&c| c < text.len() && text.is_char_boundary(c)) else {
        return (typed(text, width), String::new());
    };
    let (before, after) = text.split_at(c);
    if glyphs::str_width(&shown(text)) <= width {
        return (shown(before).into_owned(), shown(after).into_owned());
    }
    let half = width / 2;
    (typed(before, width - half), typed(after, half))
}

/// `path` (shown with its control characters escaped) and then `suffix`
/// (e.g. ` v2`) in at most `width` columns. Keeps the last `keep`
/// components (at least the file name) whole, then the first folder, then
/// the folders nearest the file; what does not fit is one `…`. A tail too
/// wide on its own is cut in its middle, keeping its end (the extension).
pub(crate) fn fit(path: &str, suffix: &str, width: usize, keep: usize) -> String {
    fit_among(path, suffix, width, keep, &Shared::default())
}

/// [`fit`] for a path among others on screen: where its file name must be
/// cut, what the names share goes first ([`Shared`]).
pub(crate) fn fit_among(
    path: &str,
    suffix: &str,
    width: usize,
    keep: usize,
    shared: &Shared,
) -> String {
    let shown = shown(path);
    traced(&shown, suffix, width, keep, shared)
        .into_iter()
        .map(|t| t.0)
        .collect()
}

/// What the file names on screen have in common: a prefix ending at a
/// separator (`00_`, `llvm-`) and the extension (`.rst.txt`). Cutting those
/// first keeps what tells the names apart: `00282_v13_llvm_…_LangImpl01…`
/// rather than `00282_v13_llv…Impl01.rst.txt`, which every row ends with.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Shared {
    prefix: String,
    ext: String,
}

impl Shared {
    /// Something of the names to cut first.
    fn cuts(&self) -> bool {
        !self.prefix.is_empty() || !self.ext.is_empty()
    }

    /// What the file names of `paths` (as shown) share; nothing for fewer
    /// than two names.
    pub(crate) fn of<'a>(paths: impl IntoIterator<Item = &'a str>) -> Shared {
        let names: Vec<String> = (paths.into_iter())
            .map(|p| {
                let shown = shown(p);
                shown.rsplit('/').next().unwrap_or("").to_string()
            })
            .collect();
        let Some((first, rest)) = names.split_first() else {
            return Shared::default();
        };
        if rest.is_empty() {
            return Shared::default();
        }
        let ext = |n: &str| {
            (n.char_indices())
                .skip(1)
                .find(|c| c.1 == '.')
                .map_or(n.len(), |c| c.0)
        };
        // The prefix is of the stems: names the same but for their folders
        // keep their names.
        let mut prefix = &first[..ext(first)];
        for n in rest {
            let n = &n[..ext(n)];
            let common = (prefix.char_indices())
                .zip(n.chars())
                .find(|((_, a), b)| a != b)
                .map_or(prefix.len().min(n.len()), |((i, _), _)| i);
            prefix = &prefix[..common];
        }
        // Up to its last separator: `LangImpl0` of LangImpl01 and
        // LangImpl02 tells them apart as much as the rest.
        let cut = prefix.rfind(['_', '-', ' ', '.']).map_or(0, |i| i + 1);
        let e = &first[ext(first)..];
        let same = rest.iter().all(|n| &n[ext(n)..] == e);
        Shared {
            prefix: prefix[..cut].to_string(),
            ext: if same { e.to_string() } else { String::new() },
        }
    }
}

/// [`fit`] in runs of marked and unmarked text: `marked` holds the byte
/// offsets in `path` of characters to mark (a filter's matches, ascending).
/// A path shown escaped is not marked: its offsets differ from the name's.
pub(crate) fn fit_marked(
    path: &str,
    suffix: &str,
    width: usize,
    keep: usize,
    marked: &[usize],
    shared: &Shared,
) -> Vec<(String, bool)> {
    let shown = shown(path);
    let marks = if matches!(shown, std::borrow::Cow::Borrowed(_)) {
        marked
    } else {
        &[]
    };
    let mut runs: Vec<(String, bool)> = Vec::new();
    for (g, at) in traced(&shown, suffix, width, keep, shared) {
        // A glyph is marked when any of its chars matched.
        let m = at.is_some_and(|b| {
            let i = marks.partition_point(|&m| m < b);
            marks.get(i).is_some_and(|&m| m < b + g.len())
        });
        match runs.last_mut() {
            Some((s, lm)) if *lm == m => s.push_str(g),
            _ => runs.push((g.to_string(), m)),
        }
    }
    runs
}

/// Columns a file name keeps when a folder that tells it apart is kept
/// whole beside it.
const NAME_LEAST: usize = 6;

fn traced<'a>(
    shown: &'a str,
    suffix: &'a str,
    width: usize,
    keep: usize,
    shared: &Shared,
) -> Traced<'a> {
    let chars: Traced<'a> = (shown.grapheme_indices(true))
        .map(|(i, g)| (g, Some(i)))
        .collect();
    let suffix: Traced<'a> = suffix.graphemes(true).map(|g| (g, None)).collect();
    let with_suffix = |mut t: Traced<'a>| -> Traced<'a> {
        t.extend(suffix.iter().copied());
        t
    };
    let room = width.saturating_sub(width_of(&suffix));
    if width_of(&chars) <= room {
        return with_suffix(chars);
    }
    if room == 0 {
        return cut_middle(&suffix, width);
    }
    // Components as ranges of `chars` (between the slashes).
    let mut comps = Vec::new();
    let mut from = 0;
    for (i, (g, _)) in chars.iter().enumerate() {
        if *g == "/" {
            comps.push(from..i);
            from = i + 1;
        }
    }
    comps.push(from..chars.len());
    let n = comps.len();
    let keep = keep.clamp(1, n);
    let ellipsis = ("…", None);
    // The first `front` components, `…`, the components from `back` on.
    let render = |front: usize, back: usize| -> Traced<'a> {
        if front >= back {
            return chars.clone();
        }
        let mut t = chars[..comps[front].start].to_vec();
        t.push(ellipsis);
        t.extend_from_slice(&chars[comps[back].start - 1..]);
        t
    };
    let mut back = n - keep;
    let mut best = render(0, back);
    // The first folder of a relative path (`30.4/`, `v2/`: which version)
    // and the file name outlast the folders between: where both do not fit
    // whole, the name's middle goes, down to NAME_LEAST columns. (Whether
    // the rows on screen share it says nothing: a list in path order shows
    // one version's pages at a time, and a row without its folder reads as
    // another's.)
    let first_and_name = || -> Option<Traced<'a>> {
        let worth = keep == 1 && n > 1 && !comps[0].is_empty();
        if !worth || width_of(&render(1, back)) <= room {
            return None;
        }
        let mut t = chars[..comps[1].start].to_vec();
        if back > 1 {
            t.extend([ellipsis, chars[comps[back].start - 1]]);
        }
        let left = room
            .checked_sub(width_of(&t))
            .filter(|&l| l >= NAME_LEAST)?;
        t.extend(cut_name(&chars[comps[n - 1].start..], left, shared));
        Some(t)
    };
    if width_of(&best) > room {
        // The tail's first folder is what differs from the neighbours: keep
        // it and the file name, drop the folders between them; then the
        // name's middle goes before any of that folder (two paths under
        // `release-2023/` and `release-2024/` read the same otherwise).
        let name = &chars[comps[n - 1].start..];
        let folder = match keep {
            1 => Vec::new(),
            2 => chars[comps[back].start..comps[n - 1].start].to_vec(),
            _ => {
                let mut t = chars[comps[back].start..=comps[back].end].to_vec();
                t.extend([ellipsis, chars[comps[n - 1].start - 1]]);
                t
            }
        };
        if !folder.is_empty() && width_of(&folder) + NAME_LEAST <= room {
            let mut t = folder;
            let left = room - width_of(&t);
            t.extend(cut_name(name, left, shared));
            return with_suffix(t);
        }
        if let Some(t) = first_and_name() {
            return with_suffix(t);
        }
        if keep == 1 && shared.cuts() {
            return with_suffix(cut_name(name, room, shared));
        }
        let squeezed = match keep {
            1 => chars[comps[n - 1].start..].to_vec(),
            2 => chars[comps[back].start..].to_vec(),
            _ => {
                let mut t = chars[comps[back].start..=comps[back].end].to_vec();
                t.push(ellipsis);
                t.extend_from_slice(&chars[comps[n - 1].start - 1..]);
                t
            }
        };
        return with_suffix(cut_middle(&squeezed, room));
    }
    if let Some(t) = first_and_name() {
        return with_suffix(t);
    }
    let mut front = 0;
    // The first folder of a relative path (an absolute one starts with `/`).
    if back > 0 && !comps[0].is_empty() && width_of(&render(1, back)) <= room {
        front = 1;
        best = render(1, back);
    }
    while back > front && width_of(&render(front, back - 1)) <= room {
        back -= 1;
        best = render(front, back);
    }
    with_suffix(best)
}

/// A file name in at most `width` columns: its stem's middle cut, its
/// extension (from the first dot after the first glyph) whole while the
/// stem keeps two columns.
fn cut_name<'a>(name: &[(&'a str, Option<usize>)], width: usize, shared: &Shared) -> Traced<'a> {
    if width_of(name) <= width {
        return name.to_vec();
    }
    // Glyphs of the name in what the names on screen share.
    let text: String = name.iter().map(|g| g.0).collect();
    let glyphs = |part: &str| part.graphemes(true).count();
    // A part of three glyphs or fewer (`.md`) saves too little beside the
    // `…` that stands for it.
    let worth = |part: &str| glyphs(part) > 3;
    let p = if text.starts_with(&shared.prefix) && worth(&shared.prefix) {
        glyphs(&shared.prefix)
    } else {
        0
    };
    let s = if text.ends_with(&shared.ext) && worth(&shared.ext) {
        glyphs(&shared.ext)
    } else {
        0
    };
    if (p > 0 || s > 0) && p + s < name.len() {
        let end = name.len() - s;
        let ellipsis = ("…", None);
        // The extension goes first, then the prefix, then the middle of
        // what is left; each `…` says where.
        let mut t = name[..end].to_vec();
        if s > 0 {
            t.push(ellipsis);
        }
        if width_of(&t) <= width {
            return t;
        }
        let marks = usize::from(p > 0) + usize::from(s > 0);
        if width > marks + 1 {
            let mut t = Vec::new();
            if p > 0 {
                t.push(ellipsis);
            }
            // Up to half to its start, in whole words (a cut `0008` of
            // `00082` reads as another number), the rest to its end, where
            // a page's name (`LangImpl05`) is.
            let (room, core) = (width - marks, &name[p..end]);
            let sep = |g: &str| matches!(g, "_" | "-" | " " | ".");
            let (mut left, mut used) = (0, 0);
            for (i, (g, _)) in core.iter().enumerate() {
                used += glyphs::width(g);
                if used > (room - 1) / 2 {
                    break;
                }
                if sep(g) || core.get(i + 1).is_some_and(|n| sep(n.0)) {
                    left = used;
                }
            }
            t.extend(cut_after(core, room, left));
            if s > 0 {
                t.push(ellipsis);
            }
            return t;
        }
    }
    let dot = name.iter().skip(1).position(|g| g.0 == ".").map(|i| i + 1);
    match dot {
        Some(d) if width_of(&name[d..]) + 2 <= width && width_of(name) > width => {
            let ext = &name[d..];
            let mut t = cut_middle(&name[..d], width - width_of(ext));
            t.extend_from_slice(ext);
            t
        }
        _ => cut_middle(name, width),
    }
}

/// `s` in at most `width` columns, its middle replaced by `…`; the end gets
/// the larger half.
fn cut_middle<'a>(s: &[(&'a str, Option<usize>)], width: usize) -> Traced<'a> {
    cut_after(s, width, width.saturating_sub(1) / 2)
}

/// `s` in at most `width` columns: `left` columns of its start, `…`, and
/// its end in the rest.
fn cut_after<'a>(s: &[(&'a str, Option<usize>)], width: usize, left: usize) -> Traced<'a> {
    if width_of(s) <= width {
        return s.to_vec();
    }
    if width == 0 {
        return Vec::new();
    }
    let left = left.min(width - 1);
    let right = width - 1 - left;
    let mut head = Vec::new();
    let mut used = 0;
    for &(g, at) in s {
        let w = glyphs::width(g);
        if used + w > left {
            break;
        }
        used += w;
        head.push((g, at));
    }
    let mut tail = Vec::new();
    let mut used = 0;
    for &(g, at) in s.iter().rev() {
        let w = glyphs::width(g);
        if used + w > right {
            break;
        }
        used += w;
        tail.push((g, at));
    }
    tail.reverse();
    head.push(("…", None));
    head.extend(tail);
    head
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn bidirectional_controls_in_a_name_are_drawn_inert() {
        let name = "invoice\u{202e}dm.exe";
        let shown = fit(name, " v1", 40, 1);
        assert_eq!(shown, "invoice\\u{202e}dm.exe v1");
        assert!(
            fit_marked(name, "", 40, 1, &[0], &Shared::default())
                .iter()
                .all(|(t, _)| !t.contains('\u{202e}'))
        );
        assert_eq!(fit("plain.md", "", 40, 1), "plain.md");
    }

    #[test]
    fn what_differs_stays_visible() {
        let a = "llvm/docs/ClangCommandLineReference.rst.txt";
        let b = "clang/docs/ClangCommandLineReference.rst.txt";
        let k = tails(&[a, b]);
        assert_eq!(k, [3, 3]);
        // The first folder is what differs; the file name is kept whole.
        assert_eq!(
            fit(a, " v1", 43, k[0]),
            "llvm/…/ClangCommandLineReference.rst.txt v1"
        );
        assert_eq!(
            fit(b, " v1", 44, k[1]),
            "clang/…/ClangCommandLineReference.rst.txt v1"
        );
        // Narrower: the differing folder and the name's end survive.
        let narrow = fit(b, " v1", 24, k[1]);
        assert!(
            narrow.starts_with("clang/…") && narrow.ends_with(".rst.txt v1"),
            "{narrow}"
        );
        // Two versions of one page: the version folder decides.
        let (p, q) = ("v1/guide/LangImpl01.rst.txt", "v2/guide/LangImpl01.rst.txt");
        assert_eq!(tails(&[p, q]), [3, 3]);
        assert_eq!(fit(p, "", 24, 3), "v1/…/LangImpl01.rst.txt");
        assert_eq!(fit(p, "", 23, 1), "v1/…/LangImpl01.rst.txt");
        assert_eq!(fit(p, "", 22, 1), "v1/…/Lang…pl01.rst.txt");
    }

    /// Issue 55: at 60 columns, pages of four version folders read alike
    /// (`…/JestPlatform.md`). The version folder and the name outlast the
    /// middle, the name cut first, whatever the other rows on screen.
    #[test]
    fn the_version_folder_outlasts_the_names_middle() {
        let p = "30.4/JestPlatform.md";
        assert_eq!(fit(p, "", 20, 1), p);
        assert_eq!(fit(p, "", 17, 1), "30.4/Jest…form.md");
        assert_eq!(fit(p, " v2", 19, 1), "30.4/Jes…form.md v2");
        let deep = "30.4/api/reference/TestEnvironment.md";
        assert_eq!(fit(deep, "", 25, 1), "30.4/…/TestEnvironment.md");
        assert_eq!(fit(deep, "", 24, 1), "30.4/…/TestEn…ronment.md");
        assert_eq!(fit(deep, "", 20, 1), "30.4/…/Test…nment.md");
        // Too little room for the folder and six columns of the name: the
        // name alone, cut.
        assert_eq!(fit(p, "", 10, 1), "Jest…rm.md");
        // Rows on screen that share the folder keep it all the same: each
        // row reads alone.
        let docs = ["docs/guide/installation.md", "docs/api/configuration.md"];
        let shared = Shared::of(docs);
        assert_eq!(
            fit_among(docs[0], "", 19, 1, &shared),
            "docs/…/inst…tion.md"
        );
        // An absolute path keeps no empty first folder.
        assert_eq!(
            fit("/srv/x/installation.md", "", 18, 1),
            "…/installation.md"
        );
    }

    #[test]
    fn a_short_list_needs_only_file_names() {
        assert_eq!(tails(&["a/x.md", "b/y.md", "c/d/z.md"]), [1, 1, 1]);
        assert_eq!(tails(&["a/x.md", "b/c/x.md"]), [2, 2]);
        // The same path twice is not a reason to show more of it.
        assert_eq!(tails(&["a/x.md", "a/x.md"]), [1, 1]);
    }

    #[test]
    fn the_middle_goes_first_and_the_version_never() {
        let p = "docs/guide/reference/installation.md";
        assert_eq!(
            fit(p, " v3", 80, 1),
            "docs/guide/reference/installation.md v3"
        );
        assert_eq!(fit(p, " v3", 35, 1), "docs/…/reference/installation.md v3");
        assert_eq!(fit(p, " v3", 25, 1), "docs/…/installation.md v3");
        assert_eq!(fit(p, " v3", 20, 1), "docs/…/ins…ion.md v3");
        assert_eq!(fit(p, " v3", 12, 1), "inst…n.md v3");
        assert_eq!(fit(p, " v3", 3, 1), " v3");
        assert_eq!(fit(p, " v3", 2, 1), "…3");
    }

    /// Two pages that differ in a middle folder: the folder stays whole and
    /// the file name's middle goes, at 80 columns' room and less.
    #[test]
    fn the_folder_that_tells_paths_apart_outlasts_the_names_middle() {
        let a = "product/release-2023/guide/installation-and-upgrade-guide.md";
        let b = "product/release-2024/guide/installation-and-upgrade-guide.md";
        let keep = tails(&[a, b]);
        assert_eq!(keep, [3, 3]);
        for width in [30, 24, 22] {
            let (fa, fb) = (fit(a, "", width, keep[0]), fit(b, "", width, keep[1]));
            assert_ne!(fa, fb, "{width}: {fa}");
            assert!(
                fa.starts_with("release-2023/…/") && fa.ends_with(".md"),
                "{fa}"
            );
            assert!(glyphs::str_width(&fa) <= width, "{fa}");
        }
        // Two levels: the folder and the name.
        let got = fit("burst/a-very-long-file-name-indeed.md", "", 24, 2);
        assert!(got.starts_with("burst/") && got.ends_with("ed.md"), "{got}");
        // Too little room for both: the old squeeze.
        assert_eq!(fit(a, "", 12, 3).chars().count(), 12);
    }

    #[test]
    fn wide_characters_count_as_two_columns() {
        let p = "文档/指南/安装说明.md";
        let got = fit(p, "", 12, 1);
        assert!(glyphs::str_width(&got) <= 12, "{got}");
        assert!(got.ends_with(".md"), "{got}");
    }

    #[test]
    fn glyphs_are_measured_whole_and_never_cut_apart() {
        // 2 + 1 + 8 columns: it fits in 11 as drawn (4 + 1 + 8 char by char).
        assert_eq!(fit("👩‍💻/notes.md", "", 11, 1), "👩‍💻/notes.md");
        let family = "👨‍👩‍👧‍👦";
        let name = format!("{family}{family}{family}{family}.md");
        for width in 1..12 {
            let got = fit(&name, "", width, 1);
            assert!(glyphs::str_width(&got) <= width, "{got}");
            // Whole families only, around the `…`.
            let rest = got.replace(family, "").replace('…', "").replace(".md", "");
            assert!(
                ["", "d", "md", "m"].contains(&rest.as_str()),
                "{width}: {got:?}"
            );
        }
        let accents = "a\u{301}\u{302}b\u{301}c\u{301}d\u{301}e\u{301}f.md";
        let got = fit(accents, "", 6, 1);
        assert!(
            !got.contains("…\u{301}") && !got.contains("…\u{302}"),
            "{got:?}"
        );
    }

    #[test]
    fn marks_follow_their_characters_through_the_cut() {
        let p = "docs/guide/reference/installation.md";
        // "inst" in the file name, "d" of docs.
        let marked = [0, 21, 22, 23, 24];
        let runs = fit_marked(p, "", 25, 1, &marked, &Shared::default());
        let text: String = runs.iter().map(|r| r.0.as_str()).collect();
        assert_eq!(text, "docs/…/installation.md");
        let on: Vec<&str> = runs.iter().filter(|r| r.1).map(|r| r.0.as_str()).collect();
        assert_eq!(on, ["d", "inst"]);
        // Cut inside the name: marks on what is left stay, none on the `…`.
        let runs = fit_marked(p, "", 9, 1, &marked, &Shared::default());
        let on: Vec<&str> = runs.iter().filter(|r| r.1).map(|r| r.0.as_str()).collect();
        assert_eq!(on, ["inst"]);
    }

    /// Issue 41: flat names that differ in their middle, all ending in
    /// `.rst.txt`. The shared extension and prefix go before what tells
    /// the names apart.
    #[test]
    fn what_the_names_share_goes_first() {
        let names = [
            "00282_v13_llvm_docs_tutorial_LangImpl01.rst.txt",
            "00283_v13_llvm_docs_tutorial_LangImpl02.rst.txt",
            "00388_v14_clang_docs_UsersManual.rst.txt",
        ];
        let shared = Shared::of(names);
        assert_eq!(
            shared,
            Shared {
                prefix: "".into(),
                ext: ".rst.txt".into()
            }
        );
        let got = fit_among(names[0], "", 28, 1, &shared);
        assert_eq!(got, "00282_v13_…orial_LangImpl01…");
        assert!(glyphs::str_width(&got) <= 28);
        // Without a list, the extension stays, as before.
        assert!(fit(names[0], "", 28, 1).ends_with(".rst.txt"));
        // A prefix shared to a separator goes too, the extension first.
        let v = [
            "llvm_docs_LangImpl01.rst.txt",
            "llvm_docs_LangImpl02.rst.txt",
        ];
        let shared = Shared::of(v);
        assert_eq!(shared.prefix, "llvm_docs_");
        assert_eq!(fit_among(v[0], "", 21, 1, &shared), "llvm_docs_LangImpl01…");
        assert_eq!(fit_among(v[0], "", 12, 1, &shared), "…LangImpl01…");
        assert_eq!(fit_among(v[1], " v2", 15, 1, &shared), "…LangImpl02… v2");
        // One name alone shares nothing.
        assert_eq!(Shared::of([v[0]]), Shared::default());
    }

    proptest! {
        #[test]
        fn never_wider_than_asked_and_the_suffix_stays(
            parts in proptest::collection::vec("[a-zé文]{1,12}", 1..6),
            width in 0usize..60,
            keep in 1usize..4,
        ) {
            let path = parts.join("/");
            let got = fit(&path, " v2", width, keep);
            prop_assert!(glyphs::str_width(&got) <= width, "{}", got);
            if width >= 3 {
                prop_assert!(got.ends_with(" v2"), "{}", got);
            }
            let name = parts.last().unwrap();
            // The file name is whole whenever it fits beside the suffix,
            // but for the first folder kept.
            let got = fit(&path, " v2", width, 1);
            let first = format!("{}/", parts[0]);
            if glyphs::str_width(name) + 3 + 2 <= width {
                prop_assert!(
                    got.ends_with(&format!("{name} v2")) || got.starts_with(&first),
                    "{}", got
                );
            }
            // The first folder is kept whenever it fits with six columns
            // of the name.
            let between = if parts.len() > 2 { 2 } else { 0 };
            if parts.len() > 1 && glyphs::str_width(&first) + between + 6 + 3 <= width {
                prop_assert!(got.starts_with(&first), "{}", got);
            }
        }
    }
}
