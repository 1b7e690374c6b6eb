//! The ref database against real git: the same transactions through `git update-ref --stdin`
//! and through `RefDb` give byte-identical tables, the same accepted/rejected outcomes, and
//! stacks each side reads.
//!
//! git comes from `REFTABLE_TEST_GIT`, else `git` on PATH, and must support reftable (2.45+);
//! without one the tests print `SKIPPED`, and fail under `REFTABLE_REQUIRE_GIT=1` (CI), as
//! every test of the workspace does (reftable-testkit's skip policy).

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use reftable::refdb::{
    Expected, LogRefs, ObjectKind, ObjectLookup, RefDb, RefDbOptions, RefUpdate,
};
use reftable::{HashId, ObjectId, StackOptions, Table, Target};
use reftable::{Signature, TzOffset};
use reftable_testkit::tables::stack_tables;

const DATE: &str = "1112911993 -0700";

/// The test git (reftable-testkit's hermetic driver, the clock at `DATE`).
struct Git(reftable_testkit::git::Git);

impl Git {
    fn find() -> Option<Git> {
        reftable_testkit::git::Git::require().map(Git)
    }

    fn cmd(&self, dir: &Path) -> Command {
        self.0.command(dir, reftable_testkit::git::BASE_TIME)
    }

    fn run(&self, dir: &Path, args: &[&str], stdin: &str) -> (bool, String) {
        let out = self
            .0
            .run(dir, reftable_testkit::git::BASE_TIME, args, stdin);
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        (out.status.success(), text)
    }

    fn out(&self, dir: &Path, args: &[&str], stdin: &str) -> String {
        let (ok, text) = self.run(dir, args, stdin);
        assert!(ok, "git {args:?}: {text}");
        text.trim().to_string()
    }
}

struct Objects(HashMap<ObjectId, ObjectKind>);

impl ObjectLookup for Objects {
    fn lookup(&self, id: &ObjectId) -> Result<ObjectKind, reftable::refdb::LookupError> {
        Ok(self.0.get(id).copied().unwrap_or(ObjectKind::Missing))
    }
}

fn committer() -> Signature {
    Signature {
        name: b"C O Mitter".to_vec(),
        email: b"committer@example.com".to_vec(),
        time: 1_112_911_993,
        tz_offset: TzOffset::from_hhmm(-700),
    }
}

struct Pair {
    git: Git,
    repo: tempfile::TempDir,
    ours: tempfile::TempDir,
    db: RefDb,
    objects: Objects,
    ids: Vec<ObjectId>,
    tag: ObjectId,
    step: usize,
}

impl Pair {
    fn new(log_refs: LogRefs) -> Option<Pair> {
        let git = Git::find()?;
        let repo = tempfile::tempdir().unwrap();
        git.out(
            repo.path(),
            &["init", "-q", "--ref-format=reftable", "-b", "main", "."],
            "",
        );
        let cfg = match log_refs {
            LogRefs::None => "false",
            LogRefs::Normal => "true",
            LogRefs::Always => "always",
        };
        git.out(repo.path(), &["config", "core.logAllRefUpdates", cfg], "");
        let tree = git.out(repo.path(), &["mktree"], "");
        let mut objects = HashMap::new();
        let mut ids = Vec::new();
        let mut parent: Option<String> = None;
        for i in 0..4 {
            let mut args = vec!["commit-tree", tree.as_str()];
            if let Some(p) = &parent {
                args.extend(["-p", p.as_str()]);
            }
            let c = git.out(repo.path(), &args, &format!("commit {i}\n"));
            let id = ObjectId::from_hex(&c).unwrap();
            objects.insert(id, ObjectKind::Commit);
            ids.push(id);
            parent = Some(c);
        }
        let tag_text = format!(
            "object {}\ntype commit\ntag v1\ntagger C O Mitter <committer@example.com> {DATE}\n\nannotated\n",
            ids[0]
        );
        let tag = ObjectId::from_hex(&git.out(repo.path(), &["mktag"], &tag_text)).unwrap();
        objects.insert(tag, ObjectKind::Tag { peeled: ids[0] });
        objects.insert(ObjectId::from_hex(&tree).unwrap(), ObjectKind::Other);

        // Start from the table `git init` wrote (HEAD -> refs/heads/main).
        let ours = tempfile::tempdir().unwrap();
        let git_stack = repo.path().join(".git/reftable");
        for entry in std::fs::read_dir(&git_stack).unwrap() {
            let p = entry.unwrap().path();
            std::fs::copy(&p, ours.path().join(p.file_name().unwrap())).unwrap();
        }
        let db = RefDb::open(
            ours.path(),
            RefDbOptions::default()
                .stack(StackOptions::default().auto_compaction(false).fsync(false))
                .log_refs(log_refs),
        )
        .unwrap();
        Some(Pair {
            git,
            repo,
            ours,
            db,
            objects: Objects(objects),
            ids,
            tag,
            step: 0,
        })
    }

    fn git_stack(&self) -> PathBuf {
        self.repo.path().join(".git/reftable")
    }

    /// Run one transaction on both sides; both must agree on success, and the stacks on
    /// bytes afterwards.
    fn txn(&mut self, updates: &[RefUpdate], msg: &str) -> bool {
        self.step += 1;
        let mut stdin = String::from("start\n");
        for u in updates {
            stdin.push_str(&u.update_ref_command().expect("expressible update"));
        }
        stdin.push_str("commit\n");
        // --create-reflog applies to the whole update-ref process.
        let mut args = vec!["update-ref", "-m", msg, "--stdin"];
        if updates.iter().any(|u| u.create_reflog) {
            assert!(updates.iter().all(|u| u.create_reflog));
            args.push("--create-reflog");
        }
        let (git_ok, git_out) = self.git.run(self.repo.path(), &args, &stdin);
        let updates: Vec<RefUpdate> = updates.iter().map(|u| u.clone().message(msg)).collect();
        let ours = self.db.transaction(&updates, &committer(), &self.objects);
        assert_eq!(
            git_ok,
            ours.is_ok(),
            "step {}: git {} ({git_out}), ours {ours:?}\nstdin:\n{stdin}",
            self.step,
            if git_ok { "accepted" } else { "rejected" },
        );
        self.compare(&stdin);
        git_ok
    }

    fn compare(&self, what: &str) {
        let theirs = stack_tables(&self.git_stack());
        let ours = stack_tables(self.ours.path());
        let names = |t: &[(String, Vec<u8>)]| t.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
        assert_eq!(
            names(&ours),
            names(&theirs),
            "step {}: table names\n{what}",
            self.step
        );
        for ((name, a), (_, b)) in ours.iter().zip(&theirs) {
            if a != b {
                let ta = Table::from_bytes("ours", a.clone()).unwrap();
                let tb = Table::from_bytes("git", b.clone()).unwrap();
                let ra: Vec<_> = ta.refs().unwrap().map(|r| r.unwrap()).collect();
                let rb: Vec<_> = tb.refs().unwrap().map(|r| r.unwrap()).collect();
                let la: Vec<_> = ta.logs().unwrap().map(|r| r.unwrap()).collect();
                let lb: Vec<_> = tb.logs().unwrap().map(|r| r.unwrap()).collect();
                assert_eq!(ra, rb, "step {}: {name}: refs differ\n{what}", self.step);
                assert_eq!(la, lb, "step {}: {name}: logs differ\n{what}", self.step);
                panic!(
                    "step {}: {name}: same records, bytes differ\n{what}",
                    self.step
                );
            }
        }
    }

    fn null(&self) -> ObjectId {
        ObjectId::null(HashId::Sha1)
    }
}

#[test]
fn transactions_match_git_byte_for_byte() {
    let Some(mut p) = Pair::new(LogRefs::Normal) else {
        return;
    };
    let [c0, c1, c2, c3] = [p.ids[0], p.ids[1], p.ids[2], p.ids[3]];
    // Branch creation through HEAD's branch logs HEAD too; tags get no reflog; peeled tag.
    assert!(p.txn(
        &[
            RefUpdate::create("refs/heads/main", c0),
            RefUpdate::create("refs/heads/topic", c1),
            RefUpdate::create("refs/tags/v1", p.tag),
            RefUpdate::create("refs/custom/x", c0),
        ],
        "initial  refs\twith   spaces ",
    ));
    assert!(p.txn(
        &[RefUpdate::update("refs/heads/main", c1, Some(c0))],
        "advance"
    ));
    // A no-op update of HEAD's branch still logs to HEAD.
    assert!(p.txn(&[RefUpdate::update("refs/heads/main", c1, None)], "noop"));
    // Wrong old value, creating an existing ref, D/F conflicts, duplicates: rejected.
    assert!(!p.txn(
        &[RefUpdate::update("refs/heads/main", c2, Some(c0))],
        "bad old"
    ));
    assert!(!p.txn(&[RefUpdate::create("refs/heads/topic", c2)], "exists"));
    assert!(!p.txn(&[RefUpdate::create("refs/heads/topic/sub", c2)], "d/f"));
    assert!(!p.txn(&[RefUpdate::create("refs/heads", c2)], "f/d"));
    assert!(!p.txn(
        &[
            RefUpdate::create("refs/heads/new", c2),
            RefUpdate::create("refs/heads/new/sub", c2),
        ],
        "d/f in one transaction"
    ));
    assert!(!p.txn(
        &[
            RefUpdate::update("refs/heads/topic", c2, None),
            RefUpdate::delete("refs/heads/topic", None),
        ],
        "duplicate"
    ));
    assert!(!p.txn(&[RefUpdate::verify("refs/heads/topic", Some(c3))], "verify"));
    assert!(p.txn(
        &[RefUpdate::verify("refs/heads/topic", Some(c1))],
        "verify ok"
    ));
    // Symrefs: create, update through it (deref), retarget, delete.
    assert!(p.txn(
        &[RefUpdate::symref_create(
            "refs/heads/sym",
            "refs/heads/topic"
        )],
        "symref create"
    ));
    assert!(p.txn(
        &[RefUpdate::update("refs/heads/sym", c2, Some(c1))],
        "through symref"
    ));
    assert!(p.txn(
        &[RefUpdate::symref_update(
            "refs/heads/sym",
            "refs/heads/main",
            Expected::Is(Target::Symref(b"refs/heads/topic".to_vec()))
        )
        .no_deref()],
        "retarget"
    ));
    assert!(p.txn(
        &[
            RefUpdate::symref_update("refs/heads/sym", "refs/heads/missing", Expected::Any)
                .no_deref()
        ],
        "dangling"
    ));
    assert!(p.txn(
        &[RefUpdate::symref_delete(
            "refs/heads/sym",
            Some(b"refs/heads/missing")
        )],
        "symref delete"
    ));
    // Deletion writes log tombstones for every entry.
    assert!(p.txn(
        &[RefUpdate::delete("refs/heads/topic", Some(c2))],
        "delete topic"
    ));
    // Mass create, delete, recreate.
    let names: Vec<String> = (0..60).map(|i| format!("refs/heads/b/{i:03}")).collect();
    let create: Vec<RefUpdate> = names.iter().map(|n| RefUpdate::create(n, c3)).collect();
    assert!(p.txn(&create, "mass create"));
    let delete: Vec<RefUpdate> = names[..40]
        .iter()
        .map(|n| RefUpdate::delete(n, Some(c3)))
        .collect();
    assert!(p.txn(&delete, "mass delete"));
    let recreate: Vec<RefUpdate> = names[..10]
        .iter()
        .map(|n| RefUpdate::create(n, c2))
        .collect();
    assert!(p.txn(&recreate, "recreate"));
    // Long and non-ASCII messages: git truncates to half the block size.
    let long = "x".repeat(3000);
    assert!(p.txn(&[RefUpdate::update("refs/heads/main", c2, None)], &long));
    assert!(p.txn(
        &[RefUpdate::update("refs/heads/main", c3, None)],
        "héllo wörld ✓"
    ));
    // A ref below a deleted directory is fine again.
    assert!(p.txn(
        &[RefUpdate::create("refs/heads/topic/sub", c0)],
        "d/f after delete"
    ));
    // Missing object and a tag on a branch: rejected.
    assert!(!p.txn(
        &[RefUpdate::create(
            "refs/heads/ghost",
            ObjectId::from_bytes(&[7; 20]).unwrap()
        )],
        "missing object"
    ));
    assert!(!p.txn(
        &[RefUpdate::create("refs/heads/tagged", p.tag)],
        "tag on a branch"
    ));
    // Deleting HEAD's branch logs HEAD with a null new id.
    assert!(p.txn(&[RefUpdate::delete("refs/heads/main", None)], "delete main"));
    let _ = p.null();
}

#[test]
fn reflog_settings_match_git() {
    for log_refs in [LogRefs::None, LogRefs::Always] {
        let Some(mut p) = Pair::new(log_refs) else {
            return;
        };
        let [c0, c1] = [p.ids[0], p.ids[1]];
        assert!(p.txn(
            &[
                RefUpdate::create("refs/heads/main", c0),
                RefUpdate::create("refs/custom/y", c0),
            ],
            "one"
        ));
        assert!(p.txn(
            &[RefUpdate::update("refs/custom/y", c1, None).create_reflog()],
            "forced reflog"
        ));
        assert!(p.txn(
            &[RefUpdate::update("refs/custom/y", c0, None)],
            "kept reflog"
        ));
    }
}

impl Pair {
    /// Run a git command on git's side and `ours` on ours, then compare the stacks.
    fn both(&mut self, args: &[&str], ours: impl FnOnce(&mut RefDb)) {
        self.step += 1;
        let out = self.git.out(self.repo.path(), args, "");
        ours(&mut self.db);
        self.compare(&format!("git {args:?}: {out}"));
    }
}

#[test]
fn reflog_expire_delete_and_pack_refs_match_git() {
    let Some(mut p) = Pair::new(LogRefs::Normal) else {
        return;
    };
    let [c0, c1, c2, c3] = [p.ids[0], p.ids[1], p.ids[2], p.ids[3]];
    assert!(p.txn(&[RefUpdate::create("refs/heads/main", c0)], "one"));
    for (i, c) in [c1, c2, c3, c0, c1].into_iter().enumerate() {
        assert!(p.txn(
            &[
                RefUpdate::update("refs/heads/main", c, None),
                RefUpdate::update("refs/heads/lo", c, None),
            ],
            &format!("step {i}")
        ));
    }
    // git reflog delete lo@{1}: the second newest entry becomes a tombstone.
    // `lo@{n}` is the n-th newest entry.
    let delete_nth = |db: &mut RefDb, n: usize, rewrite: bool| {
        let ui = db
            .reflog(b"refs/heads/lo")
            .unwrap()
            .nth(n)
            .unwrap()
            .unwrap()
            .update_index;
        db.expire_reflog(
            b"refs/heads/lo",
            &mut |l| l.update_index == ui,
            rewrite,
            false,
        )
        .unwrap();
    };
    p.both(&["reflog", "delete", "refs/heads/lo@{1}"], |db| {
        delete_nth(db, 1, false)
    });
    p.both(
        &["reflog", "delete", "--rewrite", "refs/heads/lo@{2}"],
        |db| delete_nth(db, 2, true),
    );
    // Expire everything: tombstones plus an existence marker.
    p.both(
        &["reflog", "expire", "--expire=all", "refs/heads/lo"],
        |db| {
            db.expire_reflog(b"refs/heads/lo", &mut |_| true, false, false)
                .unwrap();
        },
    );
    assert!(p.db.reflog_exists(b"refs/heads/lo").unwrap());
    assert!(p.db.reflog(b"refs/heads/lo").unwrap().next().is_none());
    // The existence marker keeps the reflog going under logAllRefUpdates=false rules too.
    assert!(p.txn(
        &[RefUpdate::update("refs/heads/lo", c2, None)],
        "after expire"
    ));
    // An explicit existence marker for a ref without reflog.
    assert!(p.txn(&[RefUpdate::create("refs/tags/t", c0)], "tag"));
    p.both(
        &[
            "update-ref",
            "--create-reflog",
            "refs/tags/t2",
            &c1.to_string(),
        ],
        |db| {
            db.transaction(
                &[RefUpdate::update("refs/tags/t2", c1, None).create_reflog()],
                &committer(),
                &p_objects(&[c1]),
            )
            .unwrap();
        },
    );
    // pack-refs: everything in one table, tombstones gone; messages re-normalized.
    p.both(&["pack-refs"], |db| db.pack_refs(false).unwrap());
    assert_eq!(stack_tables(&p.git_stack()).len(), 1);
    assert!(p.txn(&[RefUpdate::delete("refs/heads/lo", None)], "delete lo"));
    p.both(&["pack-refs"], |db| db.pack_refs(false).unwrap());
}

fn p_objects(commits: &[ObjectId]) -> Objects {
    Objects(commits.iter().map(|c| (*c, ObjectKind::Commit)).collect())
}

#[test]
fn auto_compaction_matches_git() {
    let Some(mut p) = Pair::new(LogRefs::Normal) else {
        return;
    };
    // git compacts after every transaction unless told not to.
    let mut opts = *p.db.stack().options();
    opts.auto_compaction = true;
    p.db.stack_mut().set_options(opts).unwrap();
    let auto = |git: &Git, dir: &Path, stdin: &str, msg: &str| {
        let mut c = git.cmd(dir);
        c.env_remove("GIT_TEST_REFTABLE_AUTOCOMPACTION");
        c.args(["update-ref", "-m", msg, "--stdin"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null());
        let mut child = c.spawn().unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        assert!(child.wait().unwrap().success());
    };
    for i in 0..40u64 {
        let u = RefUpdate::update(format!("refs/heads/b{i:02}"), p.ids[(i % 4) as usize], None);
        let stdin = format!("start\n{}commit\n", u.update_ref_command().unwrap());
        let msg = format!("auto {i}");
        auto(&p.git, p.repo.path(), &stdin, &msg);
        p.db.transaction(&[u.message(&msg)], &committer(), &p.objects)
            .unwrap();
        p.step += 1;
        p.compare(&stdin);
    }
    assert!(stack_tables(&p.git_stack()).len() < 8);
}
