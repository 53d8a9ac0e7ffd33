//! The TUI as a person sees it: the real binary in a real terminal (tmux),
//! on a temp folder. A new file that copies a paragraph must show its source
//! in the origin pane; resizing redraws; quitting restores the terminal.
//! `scripts/test` (the README's test command) installs tmux when missing.
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{TempDir, text};

const GUIDE: &str = "# Calibration\n\nBefore the first season, hang the gauge from the \
pier at low water and mark the datum on the staff. Read the staff and the sensor together \
every ten minutes through one full tide, then fit the offset by least squares and write it \
into the station file so that every later reading is corrected before it is stored.\n";

/// A tmux server of its own (a private socket), killed on drop.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn cmd(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux is installed (scripts/test installs it)")
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.cmd(args);
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn screen(&self) -> String {
        self.ok(&["capture-pane", "-p", "-t", "s"])
    }

    fn format(&self, f: &str) -> String {
        self.ok(&["display-message", "-p", "-t", "s", f])
            .trim()
            .to_string()
    }

    /// Wait until the screen satisfies `want`; the last screen in the panic.
    fn wait(&self, what: &str, want: impl Fn(&str) -> bool) -> String {
        let end = Instant::now() + Duration::from_secs(15);
        loop {
            let s = self.screen();
            if want(&s) {
                return s;
            }
            assert!(Instant::now() < end, "no {what} within 15 s; screen:\n{s}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "s"];
        args.extend_from_slice(keys);
        self.ok(&args);
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]);
    }
}

fn start(root: &Path, home: &Path) -> Tmux {
    start_with(root, home, "origin", &[], "")
}

/// `name`: tests run side by side, each with a tmux server of its own;
/// `vars` go to lineage's environment, `extra` to its command line.
fn start_with(root: &Path, home: &Path, name: &str, vars: &[(&str, &str)], extra: &str) -> Tmux {
    let t = Tmux {
        socket: format!("lineage-test-{}-{name}", std::process::id()),
    };
    let bin = env!("CARGO_BIN_EXE_lineage");
    let index = home.join("index");
    // Path order unless the test names one.
    let order = if extra.contains("--order") {
        ""
    } else {
        "--order path"
    };
    let command = format!(
        // The shell says when lineage has exited, and keeps the terminal
        // open to read its state (a dead pane's last output can race its exit).
        "{bin} watch {} --index {} {order} --debounce-ms 100 {extra} 2>{}; \
         echo lineage exited $?; sleep 60",
        root.display(),
        index.display(),
        home.join("stderr").display()
    );
    let env = |k: &str, v: &Path| format!("{k}={}", v.display());
    let (h, c, d) = (
        env("HOME", home),
        env("XDG_CONFIG_HOME", &home.join("config")),
        env("XDG_DATA_HOME", &home.join("data")),
    );
    let env_vars: Vec<String> = vars.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let mut args = vec![
        "-f",
        "/dev/null",
        "new-session",
        "-d",
        "-s",
        "s",
        "-x",
        "100",
        "-y",
        "30",
        "-e",
        &h,
        "-e",
        &c,
        "-e",
        &d,
        "-e",
        "NO_COLOR=",
    ];
    for e in &env_vars {
        args.extend(["-e", e.as_str()]);
    }
    args.push(&command);
    t.ok(&args);
    t
}

#[test]
fn the_origin_pane_names_the_source_of_a_new_copy() {
    let dir = TempDir::new("tmux");
    let root = dir.path().join("docs");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(root.join("calibration.md"), GUIDE).unwrap();
    std::fs::write(
        root.join("alerts.md"),
        "# Alerts\n\nAn alert fires when the water rises faster than the threshold.\n",
    )
    .unwrap();
    let t = start(&root, &home);
    t.wait("the documents", |s| {
        s.contains("calibration.md") && s.contains("alerts.md")
    });
    assert_eq!(
        t.format("#{alternate_on}"),
        "1",
        "the view uses the alternate screen"
    );

    // A FAQ quoting the guide's paragraph, written while the view is open.
    let paragraph = GUIDE.split("\n\n").nth(1).unwrap();
    std::fs::write(
        root.join("faq.md"),
        format!("# FAQ\n\nHow do I calibrate the gauge? From the guide:\n\n{paragraph}\n"),
    )
    .unwrap();
    // A row of the list (the status bar names the last change too).
    let row_of = |s: &str| {
        s.lines()
            .find(|l| l.starts_with('│') && l.contains("faq.md"))
            .map(str::to_string)
    };
    let s = t.wait("faq.md in the list", |s| row_of(s).is_some());
    let row = row_of(&s).unwrap();
    assert!(
        row.contains("calibration.md"),
        "dominant origin in the row: {row}"
    );

    // Sorted by path, faq.md is the last row: select it, open its origins.
    t.keys(&["G", "Enter"]);
    let s = t.wait("the origin pane of faq.md", |s| {
        s.contains("faq.md v1") && s.contains("Origins")
    });
    let legend: Vec<&str> = s
        .lines()
        .filter_map(|l| l.rsplit('│').nth(1))
        .filter(|l| l.contains("calibration.md"))
        .collect();
    assert!(!legend.is_empty(), "the legend names the source:\n{s}");

    // The reverse: n selects the copied block, enter jumps to the guide;
    // C asks who copies the guide, enter opens the FAQ on the passage.
    t.keys(&["n", "Enter"]);
    t.wait("the guide's origin pane", |s| {
        s.contains("calibration.md v1 ·")
    });
    t.keys(&["C"]);
    let s = t.wait("who copies the guide", |s| {
        s.contains("Copies of calibration.md v1: 1 page")
    });
    assert!(
        s.lines()
            .any(|l| l.contains("faq.md v1") && l.contains("1 passage")),
        "{s}"
    );
    t.keys(&["Enter"]);
    t.wait("the FAQ again, the list closed", |s| {
        s.contains("faq.md v1 ·") && !s.contains("Copies of")
    });

    // P asks which pages carry the FAQ's text, whoever had it first: the
    // guide, with the shared passage in the FAQ's words; enter opens the
    // guide on it, back returns to the FAQ.
    t.keys(&["P"]);
    let s = t.wait("the pages sharing the FAQ's text", |s| {
        s.contains("Shared with faq.md v1: 1 page")
    });
    assert!(
        s.lines()
            .any(|l| l.contains("calibration.md v1") && l.contains("1 passage")),
        "{s}"
    );
    assert!(
        s.lines()
            .any(|l| l.contains(" │ Before the first season, hang the gauge")),
        "the passage's words: {s}"
    );
    t.keys(&["Enter"]);
    t.wait("the guide, the list closed", |s| {
        s.contains("calibration.md v1 ·") && !s.contains("Shared with")
    });
    t.keys(&["Escape"]);
    t.wait("back on the FAQ", |s| s.contains("faq.md v1 ·"));

    // A walk: back from the origin, the block left is selected again, so
    // the walk goes on from it; `{` to the new passage before it.
    t.keys(&["n"]);
    t.wait("the copied block", |s| {
        s.contains(" block 1/1 from calibration.md")
    });
    t.keys(&["Enter"]);
    t.wait("its origin", |s| s.contains("calibration.md v1 ·"));
    t.keys(&["Escape"]);
    t.wait("the block left, selected again", |s| {
        s.contains("faq.md v1 ·") && s.contains(" block 1/1 from calibration.md")
    });
    t.keys(&["{"]);
    t.wait("the new passage before it", |s| s.contains(" new 1/"));

    // Resize: the view redraws at the new size.
    t.ok(&["resize-window", "-t", "s", "-x", "80", "-y", "24"]);
    let s = t.wait("a redraw at 80 columns", |s| {
        let lines: Vec<&str> = s.lines().collect();
        lines.len() == 24
            && lines[1].starts_with(" 1 Documents")
            && lines
                .iter()
                .any(|l| l.trim_end().ends_with('┐') && l.chars().count() == 80)
    });
    assert!(s.contains("faq.md"), "{s}");

    // Quit: the program ends well and leaves the terminal as it found it.
    t.keys(&["q"]);
    t.wait("lineage's exit", |s| s.contains("lineage exited 0"));
    assert_eq!(t.format("#{alternate_on}"), "0", "back on the main screen");
    assert_eq!(t.format("#{cursor_flag}"), "1", "cursor shown again");
    assert_eq!(t.format("#{mouse_any_flag}"), "0", "mouse reporting off");
    assert!(!t.screen().contains("Documents"), "the view is gone");
    assert!(
        t.screen().starts_with("lineage exited 0"),
        "the shell writes where the view began"
    );
    let stderr = std::fs::read_to_string(home.join("stderr")).unwrap();
    assert!(stderr.is_empty(), "stderr: {stderr}");
}

#[test]
fn e_opens_the_editor_at_the_line_in_view_and_the_view_comes_back() {
    let dir = TempDir::new("tmux-editor");
    let root = dir.path().join("docs");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    // Sixty list items: one line each in the file and on screen.
    let text: String = (1..=60)
        .map(|i| format!("- step {i} of the tide gauge setup\n"))
        .collect();
    std::fs::write(root.join("guide.md"), text).unwrap();
    // An "editor" that writes down its arguments and exits.
    let args = home.join("editor-args");
    let script = home.join("editor.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\nprintf '%s\\n' \"$@\" > '{}'\n", args.display()),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let editor = script.display().to_string();
    let t = start_with(
        &root,
        &home,
        "editor",
        &[("VISUAL", ""), ("EDITOR", &editor)],
        "",
    );
    t.wait("the document", |s| s.contains("guide.md"));
    t.keys(&["Enter"]);
    t.wait("its text", |s| s.contains("step 1 of the tide"));
    // Five lines down: the top line shown is the file's sixth.
    t.keys(&["j", "j", "j", "j", "j"]);
    t.wait("the scrolled view", |s| s.contains("│- step 6 of"));
    t.keys(&["e"]);
    let end = Instant::now() + Duration::from_secs(15);
    while !args.exists() {
        assert!(
            Instant::now() < end,
            "the editor did not run:\n{}",
            t.screen()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(200));
    let got = std::fs::read_to_string(&args).unwrap();
    let file = root.canonicalize().unwrap().join("guide.md");
    assert_eq!(got, format!("+6\n{}\n", file.display()));
    // The view is back, redrawn, and still answers keys.
    let s = t.wait("the view again", |s| {
        s.contains("Origins") && s.contains("│- step 6 of") && s.contains("edited")
    });
    assert_eq!(t.format("#{alternate_on}"), "1", "full screen again: {s}");
    t.keys(&["1"]);
    t.wait("the Documents pane", |s| s.contains("Documents 1 of 1"));
    t.keys(&["q"]);
    t.wait("lineage's exit", |s| s.contains("lineage exited 0"));
    let stderr = std::fs::read_to_string(home.join("stderr")).unwrap();
    assert!(stderr.is_empty(), "stderr: {stderr}");
}

#[test]
fn adopted_settings_saved_in_the_config_are_there_after_a_restart() {
    let dir = TempDir::new("tmux-adopt");
    let root = dir.path().join("docs");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(root.join("calibration.md"), GUIDE).unwrap();
    let config = home.join("my-lineage.toml");
    let mine = "# my settings, kept by hand\n\n[watch]\n# a slow editor\ndebounce_ms = 300\n";
    std::fs::write(&config, mine).unwrap();
    let extra = format!("--config {}", config.display());
    let t = start_with(&root, &home, "adopt", &[], &extra);
    t.wait("the status bar", |s| s.contains("of 64MiB"));

    // Tune: type a table size, adopt it, and save it.
    t.keys(&["5", "Enter"]);
    t.keys(&["BSpace"; 10]);
    t.keys(&["16KiB", "Enter", "A"]);
    let s = t.wait("adopt's question", |s| {
        s.contains("Make these the live settings?")
    });
    assert!(s.contains("64MiB → 16KiB"), "{s}");
    t.keys(&["s"]);
    let s = t.wait("the saved message", |s| {
        s.contains("adopted; saved table_size for")
    });
    assert!(!s.contains("outrank"), "no flag outranks the file:\n{s}");
    t.wait("the new table live", |s| s.contains("of 16KiB"));
    t.keys(&["q"]);
    t.wait("lineage's exit", |s| s.contains("lineage exited 0"));

    // The file keeps the person's lines and gains the settings.
    let saved = std::fs::read_to_string(&config).unwrap();
    for kept in [
        "# my settings, kept by hand",
        "[watch]\n# a slow editor\ndebounce_ms = 300",
    ] {
        assert!(saved.contains(kept), "{kept:?} in:\n{saved}");
    }
    // Only what was changed, for this folder only.
    let folder = root.canonicalize().unwrap();
    let table = format!(
        "[folders.\"{}\"]\ntable_size = \"16KiB\"\n",
        folder.display()
    );
    assert!(saved.ends_with(&table), "{saved}");
    drop(t);

    // A restart with the same command: the saved settings are live at once.
    // (A server of another name: the first one's may still be shutting down.)
    // It opens on Tune, the pane it was left on.
    let t = start_with(&root, &home, "adopt-again", &[], &extra);
    let s = t.wait("the view as it was left", |s| s.contains("┌ Tune"));
    t.wait("the saved table at start", |s| s.contains("of 16KiB"));
    assert!(!s.contains("of 64MiB"), "{s}");
    t.keys(&["1"]);
    t.wait("the documents", |s| s.contains("calibration.md"));
}

#[test]
fn a_second_watch_on_an_index_in_use_names_the_holder_and_exits_at_once() {
    let dir = TempDir::new("tmux-held");
    let root = dir.path().join("docs");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(home.join("config")).unwrap();
    std::fs::write(root.join("guide.md"), GUIDE).unwrap();
    // The holder: a watcher printing lines, on the same index.
    let mut holder = Command::new(env!("CARGO_BIN_EXE_lineage"))
        .args(["watch", "--json", "--index"])
        .arg(home.join("index"))
        .arg(&root)
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    use std::io::BufRead;
    std::io::BufReader::new(holder.stdout.as_mut().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.contains("guide.md"), "{first}");
    let t = start_with(&root, &home, "held", &[], "");
    // Before any screen: one line naming the holder, exit 2.
    t.wait("the exit", |s| s.contains("lineage exited 2"));
    let err = std::fs::read_to_string(home.join("stderr")).unwrap();
    assert_eq!(
        err.trim(),
        format!(
            "lineage: index {} is in use by another lineage process (PID {}); queries (explain, \
             copies, shared, diff, stale, check, report) read it meanwhile, and a second watch \
             or index needs its own --index",
            home.join("index").display(),
            holder.id()
        )
    );
    holder.kill().unwrap();
    holder.wait().unwrap();
}

/// A view on two pages (the second made while it runs, so the table holds
/// work not yet saved); the temp folder, the root, the home.
fn view_of_two_pages(name: &str) -> (TempDir, std::path::PathBuf, std::path::PathBuf, Tmux) {
    let dir = TempDir::new(&format!("tmux-{name}"));
    let root = dir.path().join("docs");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(home.join("config")).unwrap();
    std::fs::write(root.join("calibration.md"), GUIDE).unwrap();
    let t = start_with(&root, &home, name, &[], "");
    t.wait("the document", |s| s.contains("calibration.md"));
    // Before the 10 quiet seconds that would save the table.
    std::fs::write(root.join("copy.md"), GUIDE).unwrap();
    t.wait("the copy", |s| s.contains("copy.md"));
    (dir, root, home, t)
}

/// A `pkill`/`pgrep` pattern for this view itself: not the shell that
/// started it, nor another test's view.
fn view_pattern(home: &Path) -> String {
    format!(
        "^{} watch .*--index {}",
        env!("CARGO_BIN_EXE_lineage"),
        home.join("index").display()
    )
}

/// The view saved its work: the next run replays nothing (it would say so
/// on stderr).
fn assert_nothing_to_replay(root: &Path, home: &Path) {
    let out = Command::new(env!("CARGO_BIN_EXE_lineage"))
        .args(["index", "--index"])
        .arg(home.join("index"))
        .arg(root)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

#[test]
fn sigint_quits_the_view_as_q_does_with_the_table_saved() {
    let (_dir, root, home, t) = view_of_two_pages("sigint");
    let ok = Command::new("pkill")
        .args(["-INT", "-f", &view_pattern(&home)])
        .status()
        .unwrap()
        .success();
    assert!(ok, "pkill found the view");
    t.wait("the exit", |s| s.contains("lineage exited 130"));
    assert_eq!(t.format("#{alternate_on}"), "0", "the terminal restored");
    let err = std::fs::read_to_string(home.join("stderr")).unwrap();
    assert_eq!(
        err.trim(),
        "lineage: stopped by SIGINT; what was done is saved"
    );
    assert_nothing_to_replay(&root, &home);
}

#[test]
fn a_view_whose_terminal_goes_away_saves_and_exits() {
    let (_dir, root, home, t) = view_of_two_pages("hangup");
    let view = view_pattern(&home);
    let running = || {
        Command::new("pgrep")
            .args(["-f", &view])
            .output()
            .unwrap()
            .status
            .success()
    };
    assert!(running(), "pgrep finds the view");
    // The window closes: its terminal hangs up. (crossterm's reader then
    // spun at 100 % for ever, and the view never exited.)
    drop(t);
    let end = Instant::now() + Duration::from_secs(10);
    while running() {
        assert!(
            Instant::now() < end,
            "the view still runs 10 s after its terminal went away"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let err = std::fs::read_to_string(home.join("stderr")).unwrap();
    assert!(
        !err.contains("Failed"),
        "no complaint about the gone terminal: {err}"
    );
    assert_nothing_to_replay(&root, &home);
}

/// A paste of 64 KB into a prompt, as keys (tmux brackets a paste only
/// with -p) and as a bracketed paste: the prompt keeps its length and
/// says so, and Esc and q after it answer at once. (crossterm's default
/// reader read 1 KiB a wake-up of an edge-triggered poll: the rest of the
/// paste, and the keys after it, waited for a key that never came.)
#[test]
fn keys_after_a_long_paste_answer_at_once() {
    let dir = TempDir::new("tmux-paste");
    let root = dir.path().join("docs");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(root.join("calibration.md"), GUIDE).unwrap();
    let t = start_with(&root, &home, "paste", &[], "");
    t.wait("the document", |s| s.contains("calibration.md"));
    let buffer = home.join("paste");
    std::fs::write(&buffer, "x".repeat(64 << 10)).unwrap();
    t.ok(&["load-buffer", buffer.to_str().unwrap()]);
    let prompt = "search every page for";
    for bracketed in [false, true] {
        t.keys(&["F"]);
        t.wait("the prompt", |s| s.contains(prompt));
        let mut paste = vec!["paste-buffer", "-t", "s"];
        if bracketed {
            paste.push("-p");
        }
        t.ok(&paste);
        t.wait("the paste, cut to the prompt's length", |s| {
            s.contains("a prompt holds 1024 characters")
        });
        t.keys(&["Escape"]);
        t.wait("the prompt closed by Esc", |s| {
            !s.contains(prompt) && s.contains("q quit")
        });
    }
    t.keys(&["q"]);
    t.wait("lineage's exit", |s| s.contains("lineage exited 0"));
}

/// A view of a folder holding `files` at 120x40, once the first is shown:
/// the temp folder and the root.
fn view_at_120x40(name: &str, files: &[(&str, &str)]) -> (TempDir, std::path::PathBuf, Tmux) {
    let dir = TempDir::new(&format!("tmux-{name}"));
    let root = dir.path().join("docs");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(home.join("config")).unwrap();
    for (file, body) in files {
        std::fs::write(root.join(file), body).unwrap();
    }
    let t = start_with(&root, &home, name, &[], "");
    t.ok(&["resize-window", "-t", "s", "-x", "120", "-y", "40"]);
    t.wait("the first page", |s| s.contains(files[0].0));
    (dir, root, t)
}

/// Resize to 80x24, then 60x20, each time waiting for a redraw at that
/// size showing every one of `markers` (a frame is captured as it is drawn:
/// the size alone can come before the lines); each screen with its width.
fn at_smaller_sizes(t: &Tmux, markers: &[&str]) -> Vec<(&'static str, String)> {
    [("80", "24"), ("60", "20")]
        .into_iter()
        .map(|(w, h)| {
            t.ok(&["resize-window", "-t", "s", "-x", w, "-y", h]);
            let s = t.wait("the list redrawn", |s| {
                s.lines().count() == h.parse::<usize>().unwrap()
                    && s.lines()
                        .any(|l| l.chars().count() == w.parse::<usize>().unwrap())
                    && markers.iter().all(|m| s.contains(m))
            });
            (w, s)
        })
        .collect()
}

/// `o` lists the copies that went stale: the copy of the guide's paragraph
/// after the guide changed two words of it (its clock an hour on, as an
/// edit made later is), with both sides' words marked, at 120x40, 80x24 and
/// 60x20; enter opens the copy at the passage.
#[test]
fn o_lists_a_copy_whose_origin_changed_at_every_size() {
    let copy = GUIDE.replace("# Calibration", "# Copied notes");
    let files = [("calibration.md", GUIDE), ("notes.md", copy.as_str())];
    let (_dir, root, t) = view_at_120x40("stale", &files);
    t.wait("both pages", |s| s.contains("notes.md"));
    let guide = root.join("calibration.md");
    std::fs::write(&guide, GUIDE.replace("least squares", "a robust fit")).unwrap();
    let later = std::time::SystemTime::now() + Duration::from_secs(3600);
    let f = std::fs::File::options().write(true).open(&guide).unwrap();
    f.set_modified(later).unwrap();
    t.wait("the guide's new version", |s| {
        s.contains("calibration.md v2")
    });
    t.keys(&["o"]);
    let s = t.wait("the stale copy", |s| s.contains("Stale copies: 1 passage"));
    assert!(
        s.lines()
            .any(|l| l.contains("notes.md v1") && l.contains("changed in calibration.md v2")),
        "{s}"
    );
    assert!(
        s.contains("[-least squares-]") && s.contains("{+a robust fit+}"),
        "{s}"
    );
    for (w, s) in at_smaller_sizes(&t, &["Stale copies: 1 passage", "[-least"]) {
        assert!(
            s.contains("notes.md v1") && s.contains("[-least"),
            "{w}: {s}"
        );
    }
    t.keys(&["Enter"]);
    t.wait("the copy in Origin, the list closed", |s| {
        s.contains("notes.md v1 ·") && !s.contains("Stale copies")
    });
    t.keys(&["q"]);
    t.wait("lineage's exit", |s| s.contains("lineage exited 0"));
}

/// `d` in Origin lists what the page changed since its previous version:
/// a sentence replaced is one passage removed and one new, with their
/// words, at 120x40, 80x24 and 60x20; enter on the removed one opens the
/// page's first version at it.
#[test]
fn d_lists_what_a_page_changed_at_every_size() {
    let (_dir, root, t) = view_at_120x40("diff", &[("calibration.md", GUIDE)]);
    let edited = GUIDE.replace("least squares", "a robust fit");
    std::fs::write(root.join("calibration.md"), edited).unwrap();
    t.wait("its second version", |s| s.contains("calibration.md v2"));
    t.keys(&["Enter"]);
    t.wait("the page in Origin", |s| s.contains("calibration.md v2 ·"));
    t.keys(&["d"]);
    let s = t.wait("what it changed", |s| {
        s.contains("calibration.md v2 changed")
    });
    assert!(
        s.contains("since calibration.md v1 (previous version)"),
        "{s}"
    );
    assert!(
        s.lines()
            .any(|l| l.contains(" removed ") && l.contains("least squares")),
        "{s}"
    );
    assert!(
        s.lines()
            .any(|l| l.contains(" new ") && l.contains("a robust fit")),
        "{s}"
    );
    for (w, s) in at_smaller_sizes(&t, &["v2 changed", "  - │ least squares"]) {
        assert!(s.contains("  - │ least squares"), "{w}: {s}");
    }
    t.keys(&["Enter"]);
    t.wait("the first version in Origin, the list closed", |s| {
        s.contains("calibration.md v1 ·") && !s.contains("v2 changed")
    });
    t.keys(&["q"]);
    t.wait("lineage's exit", |s| s.contains("lineage exited 0"));
}

/// Documents' changed and removed shares at 120x40, as a plain LCS of the
/// two pages' words says; `b` measures against the previous version folder
/// (saved in the config file), so an edit to v2's page keeps what v2
/// changed against v1 where the predecessor shows the edit alone; sorted by
/// changed at 80x24 and 60x20, the column stays.
#[test]
fn documents_show_what_each_page_changed_against_its_basis_at_every_size() {
    let dir = TempDir::new("tmux-shares");
    let root = dir.path().join("docs");
    let home = dir.path().join("home");
    for d in ["v1", "v2"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    std::fs::create_dir_all(home.join("config")).unwrap();
    let [x, y, z, w] = [41, 42, 43, 44].map(|s| text(s, 40));
    let old = format!("{x}\n\n{y}\n");
    let first = format!("{x}\n\n{z}\n");
    let edited = format!("{first}\n{w}\n");
    std::fs::write(root.join("v1/a.md"), &old).unwrap();
    std::fs::write(root.join("v2/a.md"), &first).unwrap();
    // (changed, removed) as shown: new ÷ the page, removed ÷ the basis.
    let shares = |old: &str, new: &str| {
        let (o, n) = (
            old.split_whitespace().collect::<Vec<_>>(),
            new.split_whitespace().collect::<Vec<_>>(),
        );
        let kept = common::lcs(&o, &n) as f64;
        let (o, n) = (o.len() as f64, n.len() as f64);
        (
            format!("{:.1}", 100.0 * (n - kept) / n),
            format!("{:.1}", 100.0 * (o - kept) / o),
        )
    };
    let t = start_with(&root, &home, "shares", &[], "--order version");
    t.ok(&["resize-window", "-t", "s", "-x", "120", "-y", "40"]);
    let row = |s: &str, page: &str| -> String {
        // A row of the pane, not the status bar's last change.
        (s.lines())
            .find(|l| l.starts_with('│') && l.contains(page))
            .unwrap_or_default()
            .to_string()
    };
    let (c, r) = shares(&old, &first);
    let s = t.wait("v2's shares against v1", |s| {
        let l = row(s, "v2/a.md");
        l.contains(&format!(" {c} ")) && l.contains(&format!(" {r} "))
    });
    assert!(s.contains("changed vs predecessor"), "{s}");
    assert!(s.contains(" changed removed "), "{s}");
    // v1's page: all new, nothing before it to remove from.
    assert!(row(&s, "v1/a.md").contains("  100.0       — "), "{s}");
    std::fs::write(root.join("v2/a.md"), &edited).unwrap();
    let (c, r) = shares(&first, &edited);
    t.wait("the edit alone against its predecessor", |s| {
        let l = row(s, "v2/a.md v2");
        l.contains(&format!(" {c} ")) && l.contains(&format!(" {r} "))
    });
    t.keys(&["b"]);
    let (c, r) = shares(&old, &edited);
    let s = t.wait("v2 against v1 again", |s| {
        let l = row(s, "v2/a.md v2");
        s.contains("changed vs previous folder")
            && l.contains(&format!(" {c} "))
            && l.contains(&format!(" {r} "))
    });
    assert!(s.contains(" basis: previous folder, sa"), "{s}");
    let config = std::fs::read_to_string(home.join("config/lineage/config.toml")).unwrap();
    assert!(config.contains("basis = \"folder\""), "{config}");
    t.keys(&["s", "s", "s"]);
    t.wait("sorted by changed", |s| s.contains("by changed %"));
    for (w, s) in at_smaller_sizes(&t, &["by changed %", " changed "]) {
        let l = row(&s, "v2/a.md");
        assert!(l.contains(&format!(" {c} ")), "{w}: {s}");
        // Most changed first: v1's page, all new, then v2's.
        let rows: Vec<&str> = s.lines().filter(|l| l.starts_with('│')).collect();
        let at = |p: &str| rows.iter().position(|l| l.contains(p)).unwrap();
        assert!(at("v1/a.md") < at("v2/a.md"), "{w}: {s}");
    }
    t.keys(&["q"]);
    t.wait("lineage's exit", |s| s.contains("lineage exited 0"));
}

/// `X` with a `.html` name writes the HTML report of every page, as
/// `lineage report` does, off the engine's thread: the footer says when
/// it is written, and the file is the whole report.
#[test]
fn x_with_an_html_name_writes_the_report() {
    let other = GUIDE.replace("Calibration", "Drift");
    let (dir, _root, t) =
        view_at_120x40("report", &[("calibration.md", GUIDE), ("drift.md", &other)]);
    t.wait("both pages", |s| s.contains("drift.md"));
    let report = dir.path().join("home").join("team report.html");
    t.keys(&["X"]);
    t.wait("the export's prompt", |s| {
        s.contains("export to lineage-documents.csv")
    });
    for _ in 0.."lineage-documents.csv".len() {
        t.keys(&["BSpace"]);
    }
    t.keys(&["-l", &report.display().to_string()]);
    t.keys(&["Enter"]);
    let s = t.wait("the report written", |s| {
        s.contains("report of 2 pages written to")
    });
    assert!(
        s.contains("report.html (0.0 MB): open it in a browser"),
        "{s}"
    );
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
    assert!(html.contains("\"path\":\"drift.md\"") && html.contains("\"path\":\"calibration.md\""));
    t.keys(&["q"]);
    t.wait("lineage's exit", |s| s.contains("lineage exited 0"));
}

/// Issue 55, item 2, at the terminal: the Origin search reopened selects
/// its words, so typing replaces them; ctrl-w and ctrl-u kill as readline
/// does.
#[test]
fn a_reopened_prompt_is_retyped_and_edited_where_the_cursor_is() {
    let (_dir, _root, t) = view_at_120x40("prompt", &[("calibration.md", GUIDE)]);
    t.keys(&["2"]);
    t.wait("the page's text", |s| s.contains("hang the gauge"));
    t.keys(&["/"]);
    t.keys(&["-l", "gauge"]);
    t.wait("the search typed", |s| s.contains(" /gauge▏"));
    t.keys(&["Enter"]);
    t.wait("the prompt closed", |s| !s.contains(" /gauge▏"));
    t.keys(&["/"]);
    t.wait("its words again", |s| s.contains(" /gauge▏"));
    t.keys(&["-l", "tide"]);
    t.wait("replaced, not appended", |s| s.contains(" /tide▏"));
    t.keys(&["-l", " one two"]);
    t.wait("typed on", |s| s.contains(" /tide one two▏"));
    t.keys(&["C-w"]);
    t.wait("ctrl-w: the word before", |s| s.contains(" /tide one ▏"));
    // The cursor inside the line: the terminal's arrows, home, alt-b.
    t.keys(&["Left", "Left"]);
    t.keys(&["-l", "X"]);
    t.wait("typed where the cursor is", |s| s.contains(" /tide onX▏e "));
    t.keys(&["Home"]);
    t.keys(&["-l", "@"]);
    t.wait("at the start", |s| s.contains(" /@▏tide onXe "));
    t.keys(&["End"]);
    t.keys(&["M-b"]);
    t.keys(&["C-k"]);
    t.wait("alt-b, then ctrl-k to the end", |s| s.contains(" /@tide ▏"));
    t.keys(&["C-u"]);
    t.wait("ctrl-u: the whole line", |s| s.contains(" /▏"));
    // Apart: an escape and a key at once read as alt and the key.
    t.keys(&["Escape"]);
    t.wait("the prompt closed", |s| !s.contains(" /▏"));
    t.keys(&["q"]);
    t.wait("lineage's exit", |s| s.contains("lineage exited 0"));
}
