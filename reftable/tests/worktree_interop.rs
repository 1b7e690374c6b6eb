//! A linked worktree's refs against real git: git writes refs in a repository and in a
//! worktree `git worktree add` made, `WorktreeRefDb` reads them as git does in each
//! worktree (`for-each-ref`, `rev-parse` through `main-worktree/` and `worktrees/<id>/`,
//! `symbolic-ref`, reflogs); then the same transactions through `git update-ref --stdin` in
//! one copy and through `WorktreeRefDb` in another give byte-identical tables in both
//! stacks, and git reads what we wrote.
//!
//! git comes from `REFTABLE_TEST_GIT`, else `git` on PATH (reftable-testkit's hermetic
//! driver); without a reftable-capable git the tests print `SKIPPED`, and fail under
//! `REFTABLE_REQUIRE_GIT=1`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use reftable::refdb::{
    Expected, ObjectKind, ObjectLookup, RefDb, RefDbOptions, RefUpdate, WorktreeRefDb,
};
use reftable::{ObjectId, RefValue, StackOptions};
use reftable::{Signature, TzOffset};
use reftable_testkit::git::{Git, BASE_TIME};
use reftable_testkit::tables::stack_tables;

/// One repository with a linked worktree `wt`, and the clock of its git commands.
struct Repo {
    _tmp: tempfile::TempDir,
    main: PathBuf,
    wt: PathBuf,
    time: u64,
}

impl Repo {
    fn common(&self) -> PathBuf {
        self.main.join(".git")
    }

    fn wt_git_dir(&self) -> PathBuf {
        self.common().join("worktrees/wt")
    }

    /// Run git in `dir`, one tick later than the last command.
    fn git(&mut self, git: &Git, dir: &Path, args: &[&str], stdin: &str) -> (bool, String) {
        self.time += 60;
        let o = git.run(dir, self.time, args, stdin);
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        (o.status.success(), text)
    }

    fn ok(&mut self, git: &Git, dir: &Path, args: &[&str]) -> String {
        let (ok, out) = self.git(git, dir, args, "");
        assert!(ok, "git {args:?} failed");
        out.trim_end().to_string()
    }

    fn opts() -> RefDbOptions {
        RefDbOptions::default().stack(StackOptions::default().auto_compaction(false).fsync(false))
    }

    fn open_worktree(&self) -> WorktreeRefDb {
        WorktreeRefDb::open(self.common(), self.wt_git_dir(), Self::opts()).unwrap()
    }
}

/// A repository made by git: two commits on `main`, `git worktree add ../wt -b wtb`, then
/// refs written by git in both worktrees. The same every time it is made.
fn make_repo(git: &Git) -> (Repo, Vec<ObjectId>) {
    let tmp = tempfile::tempdir().unwrap();
    let (main, wt) = (tmp.path().join("main"), tmp.path().join("wt"));
    let mut r = Repo {
        _tmp: tmp,
        main: main.clone(),
        wt: wt.clone(),
        time: BASE_TIME,
    };
    let top = r._tmp.path().to_path_buf();
    r.ok(
        git,
        &top,
        &["init", "-q", "--ref-format=reftable", "-b", "main", "main"],
    );
    for m in ["one", "two", "three"] {
        r.ok(git, &main, &["commit", "-q", "--allow-empty", "-m", m]);
    }
    let ids: Vec<ObjectId> = ["HEAD~2", "HEAD~1", "HEAD"]
        .iter()
        .map(|rev| ObjectId::from_hex(&r.ok(git, &main, &["rev-parse", rev])).unwrap())
        .collect();
    r.ok(
        git,
        &main,
        &["worktree", "add", "-q", "../wt", "-b", "wtb", "HEAD~1"],
    );
    let (c0, c1, c2) = (ids[0].to_string(), ids[1].to_string(), ids[2].to_string());
    for args in [
        vec!["update-ref", "refs/bisect/x", c0.as_str()],
        vec!["update-ref", "refs/worktree/y", c1.as_str()],
        vec!["update-ref", "-m", "moved in wt", "HEAD", c2.as_str()],
        vec![
            "update-ref",
            "-m",
            "branch from wt",
            "refs/heads/br",
            c1.as_str(),
        ],
    ] {
        r.ok(git, &wt, &args);
    }
    r.ok(git, &main, &["update-ref", "refs/bisect/m", c1.as_str()]);
    (r, ids)
}

struct Objects(HashMap<ObjectId, ObjectKind>);

impl ObjectLookup for Objects {
    fn lookup(&self, id: &ObjectId) -> Result<ObjectKind, reftable::refdb::LookupError> {
        Ok(self.0.get(id).copied().unwrap_or(ObjectKind::Missing))
    }
}

fn s(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `git for-each-ref` as we see it: `<name> <resolved id>` for names under `refs/`.
fn our_listing(names: impl Iterator<Item = Vec<u8>>, resolve: impl Fn(&[u8]) -> String) -> String {
    names
        .filter(|n| n.starts_with(b"refs/"))
        .map(|n| format!("{} {}", s(&n), resolve(&n)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `git log -g` of `name` in `dir` as `<new id> <message>` lines, or `None` when it shows
/// no entry.
fn git_reflog(git: &Git, r: &mut Repo, dir: &Path, name: &str) -> Option<String> {
    let (ok, out) = r.git(git, dir, &["log", "-g", "--format=%H %gs", name, "--"], "");
    let out = out.trim_end();
    (ok && !out.is_empty()).then(|| out.to_string())
}

fn our_reflog(wt: &WorktreeRefDb, name: &str) -> Option<String> {
    if !wt.reflog_exists(name.as_bytes()).unwrap() {
        return None;
    }
    let lines: Vec<String> = wt
        .reflog(name.as_bytes())
        .unwrap()
        .map(|l| {
            let l = l.unwrap();
            let u = l.update().unwrap();
            format!(
                "{} {}",
                u.new_id,
                s(u.message.strip_suffix(b"\n").unwrap_or(&u.message))
            )
            .trim_end()
            .to_string()
        })
        .collect();
    (!lines.is_empty()).then(|| lines.join("\n"))
}

#[test]
fn we_read_what_git_wrote_in_both_worktrees() {
    let Some(git) = Git::require() else {
        return;
    };
    let (mut r, ids) = make_repo(&git);
    let wt = r.open_worktree();
    let wt_dir = r.wt.clone();
    let main_dir = r.main.clone();

    // The split: per-worktree refs in the worktree's stack only, branches in the common one.
    let own: Vec<String> = wt
        .own()
        .refs()
        .unwrap()
        .map(|x| s(&x.unwrap().refname))
        .collect();
    for name in ["HEAD", "refs/bisect/x", "refs/worktree/y"] {
        assert!(own.contains(&name.to_string()), "{name} not in {own:?}");
    }
    assert!(own.iter().all(|n| !n.starts_with("refs/heads/")), "{own:?}");

    // for-each-ref in the worktree: its own refs and the shared ones, not main's bisect ref.
    let resolve = |n: &[u8]| {
        wt.resolve(n)
            .unwrap()
            .map(|i| i.to_string())
            .unwrap_or_default()
    };
    let ours = our_listing(wt.refs().unwrap().map(|x| x.unwrap().refname), resolve);
    let theirs = r.ok(
        &git,
        &wt_dir,
        &["for-each-ref", "--format=%(refname) %(objectname)"],
    );
    assert_eq!(ours, theirs);
    assert!(!ours.contains("refs/bisect/m"));

    // ... and in the main worktree, the plain RefDb on the common stack.
    let common = RefDb::open(r.common().join("reftable"), Repo::opts()).unwrap();
    let resolve = |n: &[u8]| {
        common
            .resolve(n)
            .unwrap()
            .map(|i| i.to_string())
            .unwrap_or_default()
    };
    let ours = our_listing(common.refs().unwrap().map(|x| x.unwrap().refname), resolve);
    let theirs = r.ok(
        &git,
        &main_dir,
        &["for-each-ref", "--format=%(refname) %(objectname)"],
    );
    assert_eq!(ours, theirs);

    // rev-parse through every kind of name, from the worktree.
    for name in [
        "HEAD",
        "refs/heads/wtb",
        "refs/heads/br",
        "refs/bisect/x",
        "refs/worktree/y",
        "refs/bisect/m",
        "main-worktree/HEAD",
        "main-worktree/refs/bisect/m",
        "main-worktree/refs/bisect/x",
        "worktrees/wt/HEAD",
        "worktrees/wt/refs/bisect/x",
        "worktrees/wt/refs/worktree/y",
        "worktrees/nope/HEAD",
        "worktrees/../HEAD",
    ] {
        let (ok, out) = r.git(&git, &wt_dir, &["rev-parse", "--verify", "-q", name], "");
        let theirs = ok.then(|| ObjectId::from_hex(out.trim()).unwrap());
        assert_eq!(
            wt.resolve(name.as_bytes()).unwrap(),
            theirs,
            "rev-parse {name}"
        );
    }
    assert_eq!(wt.resolve(b"HEAD").unwrap(), Some(ids[2]));
    for (name, target) in [
        ("HEAD", "refs/heads/wtb"),
        ("main-worktree/HEAD", "refs/heads/main"),
    ] {
        let git_target = r.ok(&git, &wt_dir, &["symbolic-ref", name]);
        assert_eq!(git_target, target);
        let rec = wt.read_ref(name.as_bytes()).unwrap().unwrap();
        assert_eq!(
            rec.value,
            RefValue::Symref(target.as_bytes().to_vec()),
            "{name}"
        );
    }

    // Reflogs: HEAD's in the worktree is the worktree's; the main one's through its name.
    for name in [
        "HEAD",
        "refs/heads/wtb",
        "refs/heads/br",
        "refs/bisect/x",
        "main-worktree/HEAD",
        "worktrees/wt/HEAD",
    ] {
        assert_eq!(
            our_reflog(&wt, name),
            git_reflog(&git, &mut r, &wt_dir, name),
            "{name}"
        );
    }
    let (ok, listed) = r.git(&git, &wt_dir, &["reflog", "list"], "");
    if ok {
        let ours: Vec<String> = wt.reflog_names().unwrap().map(|n| s(&n.unwrap())).collect();
        assert_eq!(ours.join("\n"), listed.trim_end());
    }
}

/// Two identical repositories: git writes in one, we write in the other.
struct Twins {
    git: Git,
    theirs: Repo,
    ours: Repo,
    db: WorktreeRefDb,
    objects: Objects,
    ids: Vec<ObjectId>,
    step: usize,
}

impl Twins {
    fn new() -> Option<Twins> {
        let git = Git::require()?;
        let (theirs, ids) = make_repo(&git);
        let (ours, ids2) = make_repo(&git);
        assert_eq!(ids, ids2, "the two repositories differ");
        let objects = Objects(ids.iter().map(|&i| (i, ObjectKind::Commit)).collect());
        let db = ours.open_worktree();
        let t = Twins {
            git,
            theirs,
            ours,
            db,
            objects,
            ids,
            step: 0,
        };
        t.compare("set-up");
        Some(t)
    }

    fn committer(&self) -> Signature {
        Signature {
            name: b"C O Mitter".to_vec(),
            email: b"committer@example.com".to_vec(),
            time: self.theirs.time,
            tz_offset: TzOffset::from_hhmm(-700),
        }
    }

    /// One transaction in the worktree on both sides: same outcome, same tables.
    fn txn(&mut self, updates: &[RefUpdate], msg: &str) -> bool {
        self.step += 1;
        let mut stdin = String::from("start\n");
        for u in updates {
            stdin.push_str(&u.update_ref_command().expect("expressible update"));
        }
        stdin.push_str("commit\n");
        let mut args = vec!["update-ref", "-m", msg, "--stdin"];
        if updates.iter().any(|u| u.create_reflog) {
            args.push("--create-reflog");
        }
        let wt_dir = self.theirs.wt.clone();
        let (git_ok, _) = self.theirs.git(&self.git, &wt_dir, &args, &stdin);
        self.ours.time = self.theirs.time;
        let updates: Vec<RefUpdate> = updates.iter().map(|u| u.clone().message(msg)).collect();
        let me = self.committer();
        let ours = self.db.transaction(&updates, &me, &self.objects);
        assert_eq!(
            git_ok,
            ours.is_ok(),
            "step {}: ours {ours:?}\n{stdin}",
            self.step
        );
        self.compare(&stdin);
        git_ok
    }

    /// Both stacks of both repositories, table by table.
    fn compare(&self, what: &str) {
        for (stack, sub) in [
            ("common", "reftable"),
            ("worktree", "worktrees/wt/reftable"),
        ] {
            let theirs = stack_tables(&self.theirs.common().join(sub));
            let ours = stack_tables(&self.ours.common().join(sub));
            let names = |t: &[(String, Vec<u8>)]| t.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
            assert_eq!(
                names(&ours),
                names(&theirs),
                "step {}: {stack} tables\n{what}",
                self.step
            );
            for ((name, a), (_, b)) in ours.iter().zip(&theirs) {
                assert!(
                    a == b,
                    "step {}: {stack} table {name} differs\n{what}",
                    self.step
                );
            }
        }
    }
}

#[test]
fn our_worktree_transactions_write_gits_tables() {
    let Some(mut t) = Twins::new() else {
        return;
    };
    let [c0, c1, c2] = [t.ids[0], t.ids[1], t.ids[2]];
    // One transaction, two stacks: a table in each.
    let before = stack_tables(&t.ours.common().join("reftable")).len();
    assert!(t.txn(
        &[
            RefUpdate::create("refs/bisect/new", c1),
            RefUpdate::create("refs/heads/new", c2)
        ],
        "both stacks",
    ));
    assert_eq!(
        stack_tables(&t.ours.common().join("reftable")).len(),
        before + 1
    );
    // Through HEAD: the branch in the common stack, HEAD's entry in the worktree's.
    assert!(t.txn(&[RefUpdate::update("HEAD", c0, Some(c2))], "through HEAD"));
    // The branch HEAD points to, named directly: HEAD's stack is locked only for its log.
    assert!(t.txn(
        &[RefUpdate::update("refs/heads/wtb", c1, Some(c0))],
        "branch of HEAD"
    ));
    // Per-worktree refs only; a forced reflog; a deletion with its reflog.
    assert!(t.txn(
        &[RefUpdate::create("refs/worktree/z", c0).create_reflog()],
        "forced log"
    ));
    assert!(t.txn(&[RefUpdate::delete("refs/bisect/x", Some(c0))], "delete"));
    assert!(t.txn(
        &[RefUpdate::delete("refs/worktree/z", None)],
        "delete with log"
    ));
    // D/F checks across the stacks: the worktree's own refs and the shared ones count, the
    // main worktree's per-worktree refs do not.
    assert!(!t.txn(&[RefUpdate::create("refs/bisect/new/sub", c0)], "d/f own"));
    assert!(!t.txn(&[RefUpdate::create("refs/heads/new/sub", c0)], "d/f common"));
    assert!(!t.txn(&[RefUpdate::create("refs/worktree", c0)], "f/d own"));
    assert!(t.txn(
        &[RefUpdate::create("refs/bisect/m/sub", c0)],
        "main's ref is not ours"
    ));
    // Wrong old values on either side refuse the whole transaction.
    assert!(!t.txn(
        &[
            RefUpdate::update("refs/bisect/new", c0, Some(c1)),
            RefUpdate::update("refs/heads/new", c0, Some(c0))
        ],
        "bad old",
    ));
    // HEAD moved to another branch (no-deref), then a commit-like update through it.
    assert!(t.txn(
        &[RefUpdate::symref_update("HEAD", "refs/heads/new", Expected::Any).no_deref()],
        "checkout new",
    ));
    assert!(t.txn(&[RefUpdate::update("HEAD", c1, None)], "commit on new"));
    // Verifying only locks, writes nothing.
    assert!(t.txn(&[RefUpdate::verify("refs/heads/new", Some(c1))], "verify"));

    // git reads our stacks as its own, in the worktree and in the main worktree.
    for dir in [t.theirs.wt.clone(), t.theirs.main.clone()] {
        let rel = dir
            .strip_prefix(t.theirs._tmp.path())
            .unwrap()
            .to_path_buf();
        let ours_dir = t.ours._tmp.path().join(&rel);
        let (git, theirs, ours) = (&t.git, &mut t.theirs, &mut t.ours);
        for args in [
            &[
                "for-each-ref",
                "--format=%(refname) %(objectname) %(symref)",
            ][..],
            &[
                "rev-parse",
                "HEAD",
                "main-worktree/HEAD",
                "worktrees/wt/HEAD",
                "worktrees/wt/refs/bisect/new",
            ],
            &["log", "-g", "--format=%H %gs", "HEAD", "--"],
            &["log", "-g", "--format=%H %gs", "refs/heads/wtb", "--"],
        ] {
            assert_eq!(
                ours.ok(git, &ours_dir, args),
                theirs.ok(git, &dir, args),
                "{args:?}"
            );
        }
    }

    // pack-refs in the worktree compacts the worktree's stack only.
    let wt_dir = t.theirs.wt.clone();
    t.theirs.ok(&t.git, &wt_dir, &["pack-refs"]);
    t.db.pack_refs(false).unwrap();
    t.compare("pack-refs");
    assert_eq!(stack_tables(&t.ours.wt_git_dir().join("reftable")).len(), 1);
    t.db.reload().unwrap();
    assert!(t.db.common().stack().tables().len() > 1);
}
