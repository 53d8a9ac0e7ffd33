//! `lineage report` in a real browser: Debian's headless Chromium (which
//! `scripts/test` installs where it is missing) opens the report of a
//! folder written here and the test reads the page it drew (`--dump-dom`):
//! the rows, a passage's link to its origin and the passage it lands on,
//! the sort and filter, page text shown as text (`<script>` too), no
//! request leaving the file; a screenshot at two widths is kept in
//! `target/test-artifacts/`.
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

mod common;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::{Folder, command, fails_with_one_line, text};

/// The headless browser, or a failure that says how to get one.
fn browser() -> PathBuf {
    for name in ["chromium-headless-shell", "chromium", "chromium-browser"] {
        for dir in ["/usr/bin", "/usr/local/bin", "/usr/lib/chromium"] {
            let p = Path::new(dir).join(name);
            if p.exists() {
                return p;
            }
        }
    }
    panic!("no headless Chromium: `apt-get install chromium-headless-shell` (scripts/test does)");
}

/// Chromium with nothing of its own going out (the flags a closed network
/// needs), a profile of its own, and `extra`.
fn chromium(profile: &Path, extra: &[&str]) -> Command {
    let mut c = Command::new(browser());
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--virtual-time-budget=5000",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .args(extra);
    c
}

/// The page as the browser drew it at `fragment`.
fn dom(report: &Path, profile: &Path, fragment: &str, extra: &[&str]) -> String {
    let url = format!("file://{}#{fragment}", report.display());
    let out = chromium(profile, extra)
        .args(["--dump-dom", &url])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The text of every element `open` starts, in order (`open` up to `>`).
fn texts_of<'a>(dom: &'a str, open: &str) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut rest = dom;
    while let Some(i) = rest.find(open) {
        let after = &rest[i + open.len()..];
        let start = after.find('>').unwrap() + 1;
        let end = after[start..].find("</").unwrap();
        out.push(&after[start..start + end]);
        rest = &after[start + end..];
    }
    out
}

/// `lineage report` of `f`'s folder into the home's report.html; what it
/// said on stderr.
fn report_of(f: &Folder) -> (PathBuf, String) {
    let report = f.home.path().join("report.html");
    let root = f.dir.path().to_str().unwrap();
    let to = report.to_str().unwrap();
    let args = [
        "report",
        root,
        "-o",
        to,
        "--index",
        &f.ix,
        "--history",
        "folder",
    ];
    let out = command(f.home.path(), &args).output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{said}");
    (report, said)
}

/// The place of `path` in the report's list (`#page=N`).
fn page_of<'a>(list: &'a str, path: &str) -> &'a str {
    let before = &list[..list.find(&format!(">{path}</a>")).unwrap()];
    before
        .rsplit("#page=")
        .next()
        .unwrap()
        .trim_end_matches('"')
}

/// The fragment the first copied passage of `page` links to.
fn first_passage(page: &str) -> String {
    let open = "<a class=\"run c0\" href=\"#";
    let href = &page[page.find(open).expect("a copied passage") + open.len()..];
    href[..href.find('"').unwrap()].replace("&amp;", "&")
}

/// a.md, then b.md taking a.md's middle paragraph (three quarters of b), then c.md holding
/// markup that must show as text; its report.
fn reported(tag: &str) -> (Folder, PathBuf, String) {
    let f = Folder::new(tag);
    let taken = text(2, 120);
    f.put(
        "a.md",
        &format!("{}\n\n{taken}\n\n{}\n", text(1, 200), text(3, 100)),
        0,
    );
    f.put("b.md", &format!("{}\n\n{taken}\n", text(4, 40)), 10);
    f.put(
        "c.md",
        &format!(
            "<script>alert(1)</script> </script><!-- x & y\n\n{}\n",
            text(5, 200)
        ),
        20,
    );
    let (report, said) = report_of(&f);
    assert!(said.contains("3 pages"), "{said}");
    (f, report, taken)
}

#[test]
fn the_report_lists_the_pages_and_a_passage_links_to_where_its_origin_holds_it() {
    let (f, report, taken) = reported("report-links");
    let profile = f.home.path().join("profile");
    let list = dom(&report, &profile, "documents", &[]);
    assert!(list.contains("<title>lineage report: "), "{list}");
    assert!(
        list.contains("id=\"regime\">table: "),
        "the regime line: {list}"
    );
    let rows = texts_of(&list, "<td class=\"path\"><a href=\"#page=");
    assert_eq!(rows, ["a.md", "b.md", "c.md"], "{list}");
    assert!(list.contains("3 of 3 pages"));
    // b.md's dominant origin is a.md.
    let b_row = &list[list.find(">b.md</a>").unwrap()..];
    let b_row = &b_row[..b_row.find("</tr>").unwrap()];
    assert!(b_row.contains(">a.md</a>"), "{b_row}");

    // b.md's copied passage is a link to a.md at the passage.
    let b = page_of(&list, "b.md");
    let page = dom(&report, &profile, &format!("page={b}"), &[]);
    let href = first_passage(&page);
    assert!(href.contains("&at="), "{href}");
    let linked = texts_of(&page, "<a class=\"run c0\"").concat();
    assert_eq!(
        linked.split_whitespace().collect::<Vec<_>>(),
        taken.split_whitespace().collect::<Vec<_>>()
    );
    // Followed, it opens a.md with that passage marked.
    let there = dom(&report, &profile, &href, &[]);
    assert!(there.contains("<h2>a.md</h2>"), "{there}");
    let marked = texts_of(&there, "<mark id=\"target\"");
    assert_eq!(marked, [taken.as_str()], "{there}");
}

#[test]
fn the_list_sorts_and_filters_from_its_address() {
    let (f, report, _) = reported("report-sort");
    let profile = f.home.path().join("profile");
    let rows = |fragment: &str| -> Vec<String> {
        let d = dom(&report, &profile, fragment, &[]);
        texts_of(&d, "<td class=\"path\"><a href=\"#page=")
            .into_iter()
            .map(String::from)
            .collect()
    };
    // Tokens: a.md 420, c.md about 207, b.md 160.
    assert_eq!(rows("sort=-tokens"), ["a.md", "c.md", "b.md"]);
    assert_eq!(rows("sort=tokens"), ["b.md", "c.md", "a.md"]);
    assert_eq!(rows("sort=-path"), ["c.md", "b.md", "a.md"]);
    assert_eq!(rows("filter=b."), ["b.md"]);
    assert_eq!(rows("filter=fresh%3C90"), ["b.md"], "b.md is mostly a.md's");
    let d = dom(&report, &profile, "filter=fresh%3C90", &[]);
    assert!(d.contains("1 of 3 pages"), "{d}");
}

#[test]
fn page_text_is_text_and_nothing_leaves_the_file() {
    let (f, report, _) = reported("report-safe");
    let html = std::fs::read_to_string(&report).unwrap();
    // The page's markup is in the data block with every `<` escaped.
    assert!(!html.contains("<script>alert(1)"), "raw markup in the file");
    assert_eq!(
        html.matches("</script>").count(),
        2,
        "the file's own two scripts only"
    );
    assert!(html.contains("Content-Security-Policy\" content=\"default-src 'none'"));
    for attr in ["src=", "http://", "https://", "@import", "url("] {
        let at = html.find("<script id=\"data\"").unwrap();
        assert!(!html[..at].contains(attr), "{attr} before the data");
        let after = &html[html.rfind("</script>").unwrap()..];
        assert!(!after.contains(attr), "{attr} after the scripts");
    }
    // Any request the page made would reach this proxy: none does.
    let proxy = TcpListener::bind("127.0.0.1:0").unwrap();
    proxy.set_nonblocking(true).unwrap();
    let via = format!("--proxy-server=http://{}", proxy.local_addr().unwrap());
    let profile = f.home.path().join("profile");
    let c = "c.md";
    let list = dom(&report, &profile, "documents", &[&via]);
    let id = page_of(&list, c);
    let page = dom(&report, &profile, &format!("page={id}"), &[&via]);
    assert!(
        page.contains("&lt;script&gt;alert(1)&lt;/script&gt; &lt;/script&gt;&lt;!-- x &amp; y"),
        "{page}"
    );
    assert!(!page.contains("<script>alert"), "{page}");
    std::thread::sleep(Duration::from_millis(100));
    assert!(proxy.accept().is_err(), "the report made a request");

    // A screenshot at two widths, kept for a person to look at.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("..")
        .join("test-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    for width in [1280, 480] {
        let shot = dir.join(format!("report-{width}.png"));
        let _ = std::fs::remove_file(&shot);
        let url = format!("file://{}#page={id}", report.display());
        let out = chromium(&profile, &[&format!("--window-size={width},900")])
            .arg(format!("--screenshot={}", shot.display()))
            .arg(&url)
            .output()
            .unwrap();
        assert!(out.status.success());
        let png = std::fs::read(&shot).unwrap();
        assert!(png.starts_with(b"\x89PNG"), "{}", shot.display());
    }
}

#[test]
fn a_report_inside_the_folder_or_through_a_link_is_refused() {
    let (f, report, _) = reported("report-refused");
    let root = f.dir.path().to_str().unwrap();
    let run = |to: &Path| {
        command(
            f.home.path(),
            &["report", root, "-o", to.to_str().unwrap(), "--index", &f.ix],
        )
        .output()
        .unwrap()
    };
    let inside = fails_with_one_line(&run(&f.dir.path().join("report.html")));
    assert!(inside.contains("inside ROOT"), "{inside}");
    assert!(!f.dir.path().join("report.html").exists());
    let link = f.home.path().join("link.html");
    std::os::unix::fs::symlink(&report, &link).unwrap();
    let before = std::fs::read(&report).unwrap();
    fails_with_one_line(&run(&link));
    assert_eq!(
        std::fs::read(&report).unwrap(),
        before,
        "not written through the link"
    );
    let fifo = f.home.path().join("fifo.html");
    lineage_testing::mkfifo(&fifo);
    fails_with_one_line(&run(&fifo));
}

#[test]
fn an_origin_that_is_an_earlier_version_is_in_the_report_with_its_text() {
    let f = Folder::new("report-earlier");
    let taken = text(2, 120);
    f.put("a.md", &format!("{}\n\n{taken}\n", text(1, 100)), 0);
    f.put("b.md", &format!("{}\n\n{taken}\n", text(4, 40)), 10);
    let root = f.dir.path().to_str().unwrap();
    let index = ["index", root, "--index", &f.ix, "--history", "folder"];
    assert!(
        command(f.home.path(), &index)
            .output()
            .unwrap()
            .status
            .success()
    );
    // a.md drops the passage b.md took: b.md's origin is a.md's first version.
    f.put("a.md", &format!("{}\n", text(1, 100)), 20);
    let (report, _) = report_of(&f);
    let profile = f.home.path().join("profile");
    let list = dom(&report, &profile, "documents", &[]);
    let b = page_of(&list, "b.md");
    let page = dom(&report, &profile, &format!("page={b}"), &[]);
    let there = dom(&report, &profile, &first_passage(&page), &[]);
    assert!(
        there.contains("<h2>a.md v1 (an earlier version, or a deleted page)</h2>"),
        "{there}"
    );
    assert_eq!(texts_of(&there, "<mark id=\"target\""), [taken.as_str()]);
}

/// A report onto a full disk (a small tmpfs, root only; elsewhere the test
/// says so and passes): one line, exit 2, the file as it was and no temp
/// file left; the folder's index is untouched, and the next report there
/// with room is whole.
#[test]
fn a_report_onto_a_full_disk_leaves_nothing_behind() {
    let (f, _, _) = reported("report-full");
    let mnt = f.home.path().join("mnt");
    let Some(_mounted) = lineage_testing::small_tmpfs(&mnt, "16k") else {
        eprintln!("cannot mount a tmpfs here: test not run");
        return;
    };
    let to = mnt.join("r.html");
    std::fs::write(&to, "the report before").unwrap();
    let root = f.dir.path().to_str().unwrap();
    let args = ["report", root, "-o", to.to_str().unwrap(), "--index", &f.ix];
    let line = fails_with_one_line(&command(f.home.path(), &args).output().unwrap());
    assert!(line.contains("No space left on device"), "{line}");
    assert!(line.contains("left as it was"), "{line}");
    assert_eq!(std::fs::read_to_string(&to).unwrap(), "the report before");
    let names: Vec<_> = std::fs::read_dir(&mnt)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["r.html"], "no temp file");
    let (again, _) = report_of(&f);
    assert!(
        std::fs::read_to_string(again)
            .unwrap()
            .trim_end()
            .ends_with("</html>")
    );
}
