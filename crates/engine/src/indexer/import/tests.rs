//! A repository's history against the same commits written out as files:
//! an import must give the versions, renames and outcomes that syncing a
//! folder after each commit's changes gives, and resume where it stopped.

use std::fs;
use std::path::Path;

use proptest::prelude::*;

use super::*;
use crate::indexer::Indexer;
use lineage_core::fingerprint::polynomial::standard;
use lineage_origin::{Params, TableSize};
use lineage_source::history::Repo;
use lineage_source::{Filter, WalkOptions};
use lineage_store::index::{HistoryRow, Quiet, Read};
use lineage_testing::{Git, TempDir, text};

const MAX: u64 = 1 << 20;

fn params() -> Params {
    Params {
        table_size: TableSize::Bytes(48 << 10),
        ..Params::default()
    }
}

fn open(root: &Path, dir: &Path) -> Indexer {
    Indexer::open(root, dir, params(), standard(), &mut Quiet).unwrap()
}

fn import(root: &Path, dir: &Path) -> (Indexer, Imported) {
    let mut ix = open(root, dir);
    let repo = Repo::discover(root).unwrap().expect("a repository");
    let done = ix
        .import(&repo, &Filter::default_patterns(), MAX, &mut Quiet)
        .unwrap();
    (ix, done)
}

/// Sync the folder at `root` whole, new files in path order (as an import
/// takes a commit's).
fn sync(ix: &mut Indexer, root: &Path) {
    let walk = lineage_source::walk_with(root, &Filter::default_patterns(), WalkOptions::default())
        .unwrap();
    ix.sync(walk, &Scope::default(), MAX, Order::Path, &mut Quiet)
        .unwrap();
}

/// What must agree: every version, its content, status and outcome.
fn rows(ix: &Indexer) -> Vec<(String, u32, String, u64, u32, Option<u32>)> {
    let ix = ix.index();
    ix.history()
        .unwrap()
        .into_iter()
        .map(|h: HistoryRow| {
            (
                h.path,
                h.version,
                h.status.name().to_string(),
                h.hash,
                h.fresh_tokens,
                h.dominant_origin,
            )
        })
        .collect()
}

/// One change of a commit: to a page by its number among the live ones.
#[derive(Clone, Debug)]
enum Op {
    /// Words added at its end.
    Edit(usize, u64),
    /// A new page: fresh words, or a copy of page `.1` with words added.
    Add(u64, Option<usize>),
    /// Renamed, words added or not (git still takes it for a rename).
    Rename(usize, bool),
    Delete(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..8usize, 0..1000u64).prop_map(|(i, s)| Op::Edit(i, s)),
        (0..1000u64, proptest::option::of(0..8usize)).prop_map(|(s, c)| Op::Add(s, c)),
        (0..8usize, any::<bool>()).prop_map(|(i, e)| Op::Rename(i, e)),
        (0..8usize).prop_map(Op::Delete),
    ]
}

/// Apply `commits` to the work tree of `git` (committing each) and to the
/// folder `plain` (syncing `ix` after each): the same operations, renames
/// as renames. Each page is touched at most once a commit, and a copy's
/// source is neither renamed nor deleted in its commit, so git's rewrite
/// tracking sees what the file system did.
fn play(git: &Git, plain: &Path, ix: &mut Indexer, commits: &[Vec<Op>]) {
    let mut live: Vec<String> = Vec::new();
    let mut named = 0;
    for (c, ops) in commits.iter().enumerate() {
        let mut touched = std::collections::HashSet::new();
        let mut gone = Vec::new();
        // A page removed in a commit that adds or renames another is left
        // alone: git may take the two for a rename (similar content, or
        // identical pages that a rename could be from), which the folder,
        // telling by file identity, cannot.
        let names = ops
            .iter()
            .any(|o| matches!(o, Op::Add(..) | Op::Rename(..)));
        for op in ops {
            let pick = |i: usize, touched: &std::collections::HashSet<String>| {
                (!live.is_empty())
                    .then(|| live[i % live.len()].clone())
                    .filter(|p| !touched.contains(p))
            };
            let both = |rel: &str, content: &str| {
                git.write(rel, content);
                fs::write(plain.join(rel), content).unwrap();
            };
            match *op {
                Op::Edit(i, seed) => {
                    if let Some(p) = pick(i, &touched) {
                        let t = fs::read_to_string(plain.join(&p)).unwrap();
                        both(&p, &format!("{t} {}", text(seed, 12)));
                        touched.insert(p);
                    }
                }
                Op::Add(seed, copy) => {
                    named += 1;
                    let p = format!("p{named:02}.md");
                    let body = match copy.and_then(|i| pick(i, &touched)) {
                        Some(src) => {
                            touched.insert(src.clone());
                            let t = fs::read_to_string(plain.join(&src)).unwrap();
                            format!("{t} {}", text(seed, 8))
                        }
                        None => text(seed, 150),
                    };
                    both(&p, &body);
                    touched.insert(p.clone());
                    live.push(p);
                }
                Op::Rename(i, edit) => {
                    if let Some(p) = pick(i, &touched) {
                        named += 1;
                        let to = format!("p{named:02}.md");
                        git.run(&["mv", &p, &to]);
                        fs::rename(plain.join(&p), plain.join(&to)).unwrap();
                        if edit {
                            let t = fs::read_to_string(plain.join(&to)).unwrap();
                            both(&to, &format!("{t} {}", text(c as u64, 10)));
                        }
                        touched.insert(p.clone());
                        touched.insert(to.clone());
                        live.retain(|l| *l != p);
                        live.push(to);
                    }
                }
                Op::Delete(i) => {
                    if let Some(p) = pick(i, &touched).filter(|_| !names) {
                        touched.insert(p.clone());
                        gone.push(p);
                    }
                }
            }
        }
        for p in gone {
            fs::remove_file(git.dir.join(&p)).unwrap();
            fs::remove_file(plain.join(&p)).unwrap();
            live.retain(|l| *l != p);
        }
        git.commit(&format!("commit {c}"));
        sync(ix, plain);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// The property: an import of the history gives the versions, renames
    /// and outcomes of the folder synced after each commit.
    #[test]
    fn an_import_gives_the_versions_of_the_commits_written_out_one_by_one(
        commits in proptest::collection::vec(proptest::collection::vec(op(), 1..5), 1..7)
    ) {
        let t = TempDir::new("import-prop");
        let (repo, plain) = (t.0.join("repo"), t.0.join("plain"));
        fs::create_dir_all(&plain).unwrap();
        let git = Git::init(&repo);
        let mut folder = open(&plain, &t.0.join("ix-plain"));
        play(&git, &plain, &mut folder, &commits);
        let (history, done) = import(&repo, &t.0.join("ix-git"));
        prop_assert_eq!(done.commits, commits.len() as u64);
        prop_assert_eq!(rows(&history), rows(&folder));
        for id in 0..history.index().versions() {
            prop_assert_eq!(history.index().outcome(id).unwrap(), folder.index().outcome(id).unwrap());
        }
    }
}

/// A rename is followed, each version is stamped with its commit, and a
/// second import with no new commit reads nothing; one new commit reads it
/// alone.
#[test]
fn versions_carry_their_commits_and_a_later_import_reads_only_the_new_ones() {
    let t = TempDir::new("import-stamps");
    let root = t.0.join("repo");
    let git = Git::init(&root);
    git.write("a.md", text(1, 200));
    git.write("b.md", text(2, 200));
    let first = git.commit("two pages");
    git.run(&["mv", "a.md", "docs.md"]);
    let moved = git.commit("a moved");
    git.write("b.md", format!("{} {}", text(2, 200), text(3, 30)));
    let edited = git.commit("b grows");
    let dir = t.0.join("ix");
    let (ix, done) = import(&root, &dir);
    assert_eq!((done.commits, done.changed), (3, 3));
    assert_eq!((done.report.new_versions, done.report.renamed), (3, 1));
    let at = |path: &str, version: u32| {
        let h = ix.index().history().unwrap();
        let id = h
            .iter()
            .find(|r| r.path == path && r.version == version)
            .unwrap_or_else(|| panic!("{path} v{version} in {h:?}"))
            .id;
        ix.index().commit_of(id).unwrap().map(|c| c.id)
    };
    // The moved page keeps its one version, of the commit that wrote it.
    assert_eq!(at("docs.md", 1), Some(first.clone()));
    assert_eq!(at("b.md", 1), Some(first));
    assert_eq!(at("b.md", 2), Some(edited.clone()));
    assert_ne!(at("docs.md", 1), Some(moved));
    assert_eq!(ix.index().history_head().unwrap(), Some(edited));
    drop(ix);
    let (ix, again) = import(&root, &dir);
    assert_eq!((again.commits, again.report.files_read), (0, 0));
    drop(ix);
    git.write("c.md", text(4, 100));
    git.commit("c");
    let (ix, more) = import(&root, &dir);
    assert_eq!((more.commits, more.report.new_versions), (1, 1));
    assert_eq!(ix.index().counts().versions, 4);
}

/// Stopped between commits (a signal), the next import goes on from the
/// last commit recorded whole and ends as one import would have.
#[test]
fn an_import_stopped_half_way_resumes_to_the_same_index() {
    struct StopAfter(std::cell::Cell<u32>);
    impl Observer for StopAfter {
        fn notice(&mut self, _: &str) {}
        fn stopped(&self) -> bool {
            let n = self.0.get();
            self.0.set(n.saturating_sub(1));
            n == 0
        }
    }
    let t = TempDir::new("import-stop");
    let root = t.0.join("repo");
    let git = Git::init(&root);
    for c in 0..6u64 {
        git.write(&format!("p{}.md", c % 3), text(c, 120 + c as usize));
        git.commit(&format!("c{c}"));
    }
    let (whole, _) = import(&root, &t.0.join("whole"));
    let dir = t.0.join("stopped");
    let repo = Repo::discover(&root).unwrap().unwrap();
    let mut ix = open(&root, &dir);
    let stop = ix.import(
        &repo,
        &Filter::default_patterns(),
        MAX,
        &mut StopAfter(3.into()),
    );
    assert!(matches!(stop, Err(IndexError::Stopped)), "{stop:?}");
    let held = ix.index().counts().versions;
    assert!(held > 0 && held < 6, "{held} versions after the stop");
    drop(ix);
    let (resumed, done) = import(&root, &dir);
    assert_eq!(done.commits, 3);
    assert_eq!(rows(&resumed), rows(&whole));
}

/// History rewritten under the index (a reset and a new commit, as a
/// force-push leaves it): said, and read from the last commit both share.
#[test]
fn a_rewritten_history_is_read_from_the_last_commit_both_share() {
    let t = TempDir::new("import-rewrite");
    let root = t.0.join("repo");
    let git = Git::init(&root);
    git.write("a.md", text(1, 150));
    let base = git.commit("base");
    git.write("a.md", text(2, 150));
    git.commit("to be dropped");
    let dir = t.0.join("ix");
    drop(import(&root, &dir));
    git.run(&["reset", "-q", "--hard", &base]);
    git.write("a.md", text(3, 150));
    let new = git.commit("instead");
    let (ix, done) = import(&root, &dir);
    assert!(done.rewritten);
    assert_eq!((done.commits, done.report.new_versions), (1, 1));
    assert_eq!(ix.index().history_head().unwrap(), Some(new));
}

/// A root below the top of the work tree reads its own subtree: a page
/// moved in from outside is new there, one moved out is gone.
#[test]
fn a_root_inside_the_work_tree_reads_only_its_folder() {
    let t = TempDir::new("import-sub");
    let top = t.0.join("repo");
    let git = Git::init(&top);
    git.write("docs/a.md", text(1, 150));
    git.write("other/b.md", text(2, 150));
    git.commit("pages");
    git.run(&["mv", "other/b.md", "docs/b.md"]);
    git.run(&["mv", "docs/a.md", "other/a.md"]);
    git.commit("swap");
    let (ix, done) = import(&top.join("docs"), &t.0.join("ix"));
    assert_eq!(done.changed, 2);
    let h: Vec<_> = rows(&ix).into_iter().map(|r| (r.0, r.2)).collect();
    assert_eq!(
        h,
        [
            ("a.md".into(), "deleted".into()),
            ("b.md".into(), "live".into())
        ]
    );
}
