//! git's t0610 (reftable basics) transaction, reflog and pack-refs cases, on the library.

use std::time::Duration;

use reftable::refdb::{AssumeCommits, Expected, LogRefs, RefDb, RefDbOptions, RefUpdate};
use reftable::{ErrorKind, ObjectId, StackOptions, Target};
use reftable::{Signature, TzOffset};

fn id(b: u8) -> ObjectId {
    ObjectId::from_bytes(&[b; 20]).unwrap()
}

fn me() -> Signature {
    Signature {
        name: b"C O Mitter".to_vec(),
        email: b"committer@example.com".to_vec(),
        time: 1_112_911_993,
        tz_offset: TzOffset::from_hhmm(-700),
    }
}

fn db(dir: &std::path::Path, auto: bool) -> RefDb {
    RefDb::open(
        dir,
        RefDbOptions::default()
            .stack(
                StackOptions::default()
                    .auto_compaction(auto)
                    .lock_timeout(Some(Duration::ZERO))
                    .fsync(false),
            )
            .log_refs(LogRefs::Normal),
    )
    .unwrap()
}

fn tx(db: &mut RefDb, u: &[RefUpdate]) -> reftable::Result<()> {
    db.transaction(u, &me(), &AssumeCommits).map(drop)
}

/// Objects where `id(2)` is an annotated tag of `id(9)` and every other id a commit.
struct Tags;

impl reftable::refdb::ObjectLookup for Tags {
    fn lookup(
        &self,
        oid: &ObjectId,
    ) -> Result<reftable::refdb::ObjectKind, reftable::refdb::LookupError> {
        Ok(if *oid == id(2) {
            reftable::refdb::ObjectKind::Tag { peeled: id(9) }
        } else {
            reftable::refdb::ObjectKind::Commit
        })
    }
}

fn log(d: &RefDb, name: &[u8]) -> Vec<reftable::LogRecord> {
    d.reflog(name)
        .unwrap()
        .collect::<reftable::Result<_>>()
        .unwrap()
}

fn live(d: &RefDb) -> Vec<reftable::RefRecord> {
    d.refs().unwrap().collect::<reftable::Result<_>>().unwrap()
}

fn kind(r: reftable::Result<()>) -> ErrorKind {
    r.unwrap_err().kind()
}

#[test]
fn empty_transaction_in_empty_repository() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = db(dir.path(), true);
    tx(&mut d, &[]).unwrap();
    assert!(d.stack().tables().is_empty());
    // A no-op deletion of a missing ref writes nothing either.
    tx(&mut d, &[RefUpdate::delete("refs/heads/none", None)]).unwrap();
    assert!(d.stack().tables().is_empty());
}

#[test]
fn refused_transactions() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = db(dir.path(), false);
    tx(&mut d, &[RefUpdate::create("refs/heads/main", id(1))]).unwrap();
    // D/F conflicts both ways.
    assert_eq!(
        kind(tx(&mut d, &[RefUpdate::create("refs/heads/main/x", id(1))])),
        ErrorKind::NameConflict
    );
    assert_eq!(
        kind(tx(&mut d, &[RefUpdate::create("refs/heads", id(1))])),
        ErrorKind::NameConflict
    );
    // The same ref twice.
    let twice = [
        RefUpdate::update("refs/heads/x", id(1), None),
        RefUpdate::update("refs/heads/x", id(2), None),
    ];
    assert_eq!(kind(tx(&mut d, &twice)), ErrorKind::NameConflict);
    // Invalid names, also for deletion.
    assert_eq!(
        kind(tx(&mut d, &[RefUpdate::create("refs/heads/a..b", id(1))])),
        ErrorKind::Refname
    );
    assert_eq!(
        kind(tx(&mut d, &[RefUpdate::delete("refs/heads/../x", None)])),
        ErrorKind::Refname
    );
    // Deletion with a wrong old value fails, with the right one succeeds.
    assert_eq!(
        kind(tx(
            &mut d,
            &[RefUpdate::delete("refs/heads/main", Some(id(2)))]
        )),
        ErrorKind::OldValueMismatch
    );
    tx(&mut d, &[RefUpdate::delete("refs/heads/main", Some(id(1)))]).unwrap();
    assert!(d.read_ref(b"refs/heads/main").unwrap().is_none());
    // Nothing refused wrote anything: 2 tables.
    assert_eq!(d.stack().tables().len(), 2);
}

#[test]
fn symref_self_reference_and_no_deref() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = db(dir.path(), false);
    tx(
        &mut d,
        &[RefUpdate::symref_create(
            "refs/heads/self",
            "refs/heads/self",
        )],
    )
    .unwrap();
    // Deleting through the symref cannot resolve it; without dereferencing it goes.
    tx(&mut d, &[RefUpdate::symref_delete("refs/heads/self", None)]).unwrap();
    assert!(d.read_ref(b"refs/heads/self").unwrap().is_none());
    // A symref whose target would be a D/F conflict is refused.
    tx(&mut d, &[RefUpdate::create("refs/heads/a", id(1))]).unwrap();
    assert_eq!(
        kind(tx(
            &mut d,
            &[RefUpdate::symref_create("refs/heads/a/b", "refs/heads/a")]
        )),
        ErrorKind::NameConflict
    );
    // Updating through a symref moves its target and logs both.
    tx(&mut d, &[RefUpdate::symref_create("HEAD", "refs/heads/a")]).unwrap();
    tx(
        &mut d,
        &[RefUpdate::update("HEAD", id(2), Some(id(1))).message("via HEAD")],
    )
    .unwrap();
    assert_eq!(d.resolve(b"refs/heads/a").unwrap(), Some(id(2)));
    assert_eq!(log(&d, b"HEAD")[0].update().unwrap().message, b"via HEAD\n");
    assert_eq!(
        log(&d, b"refs/heads/a")[0].update().unwrap().message,
        b"via HEAD\n"
    );
    // Old symref target checks.
    let wrong = RefUpdate::symref_update(
        "HEAD",
        "refs/heads/b",
        Expected::Is(Target::Symref(b"refs/heads/x".to_vec())),
    )
    .no_deref();
    assert_eq!(kind(tx(&mut d, &[wrong])), ErrorKind::OldValueMismatch);
}

#[test]
fn lock_held_refuses_writes() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = db(dir.path(), false);
    std::fs::write(dir.path().join("tables.list.lock"), "").unwrap();
    let e = tx(&mut d, &[RefUpdate::create("refs/heads/x", id(1))]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Lock);
    assert!(e.to_string().contains("cannot lock references"), "{e}");
    // The message says the lock may be stale and what to do about it.
    assert!(e.to_string().contains("reftable clean-stale"), "{e}");
    assert_eq!(d.pack_refs(false).unwrap_err().kind(), ErrorKind::Lock);
    // Once the stale lock is removed, writers go on.
    let opts = reftable::stale::StaleOptions::default().min_age(Duration::ZERO);
    let r = reftable::stale::remove_stale(dir.path(), &opts).unwrap();
    assert_eq!(r.removed.len(), 1);
    tx(&mut d, &[RefUpdate::create("refs/heads/x", id(1))]).unwrap();
}

#[test]
fn reflogs_existence_expiry_and_deletion() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = db(dir.path(), false);
    for v in 1..=3 {
        tx(
            &mut d,
            &[RefUpdate::update("refs/heads/m", id(v), None).message(format!("m{v}"))],
        )
        .unwrap();
    }
    // Delete one entry.
    let second = log(&d, b"refs/heads/m")[1].update_index;
    d.expire_reflog(
        b"refs/heads/m",
        &mut |l| l.update_index == second,
        false,
        false,
    )
    .unwrap();
    assert_eq!(log(&d, b"refs/heads/m").len(), 2);
    // Expiry empties the reflog but it still exists.
    d.expire_reflog(b"refs/heads/m", &mut |_| true, false, false)
        .unwrap();
    assert!(log(&d, b"refs/heads/m").is_empty());
    assert!(d.reflog_exists(b"refs/heads/m").unwrap());
    // An empty reflog can be created for a ref that logs nothing by default.
    d.create_reflog(b"refs/custom/x").unwrap();
    assert!(d.reflog_exists(b"refs/custom/x").unwrap());
    tx(&mut d, &[RefUpdate::create("refs/custom/x", id(4))]).unwrap();
    assert_eq!(log(&d, b"refs/custom/x").len(), 1);
    // The reflog can be deleted.
    d.delete_reflog(b"refs/custom/x").unwrap();
    assert!(!d.reflog_exists(b"refs/custom/x").unwrap());
    let names: Vec<Vec<u8>> = d.reflog_names().unwrap().map(Result::unwrap).collect();
    assert_eq!(names, [b"refs/heads/m".to_vec()]);
}

/// `reflog expire --updateref`: the ref takes the newest kept entry's new id, peeled when
/// the lookup says it is a tag; a symref and an expiry that keeps nothing leave refs alone.
#[test]
fn expiry_updates_the_ref() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = db(dir.path(), false);
    for v in 1..=3 {
        tx(&mut d, &[RefUpdate::update("refs/heads/m", id(v), None)]).unwrap();
    }
    let newest = log(&d, b"refs/heads/m")[0].update_index;
    let prune_newest = &mut |l: &reftable::LogRecord| l.update_index == newest;
    d.expire_reflog_update_ref(b"refs/heads/m", prune_newest, false, &Tags)
        .unwrap();
    let r = d.read_ref(b"refs/heads/m").unwrap().unwrap();
    assert_eq!(r.value_id(), Some(&id(2)));
    assert_eq!(r.peeled_id(), Some(&id(9)));
    // Nothing kept: the ref stays.
    d.expire_reflog_update_ref(b"refs/heads/m", &mut |_| true, false, &Tags)
        .unwrap();
    assert_eq!(
        d.read_ref(b"refs/heads/m").unwrap().unwrap().value_id(),
        Some(&id(2))
    );
    // The newest entry kept records a deletion (new id null): the ref stays.
    d.stack_mut()
        .add(|w, ui| {
            w.set_limits(ui, ui)?;
            w.add_log(&reftable::LogRecord {
                refname: b"refs/heads/m".to_vec(),
                update_index: ui,
                value: reftable::LogValue::Update(reftable::LogUpdate {
                    old_id: id(2),
                    new_id: ObjectId::null(reftable::HashId::Sha1),
                    committer: Signature::new(
                        b"C".to_vec(),
                        b"c@example.com".to_vec(),
                        1,
                        TzOffset::from_hhmm(0),
                    ),
                    message: b"gone\n".to_vec(),
                }),
            })
        })
        .unwrap();
    d.expire_reflog_update_ref(b"refs/heads/m", &mut |_| false, false, &Tags)
        .unwrap();
    assert_eq!(
        d.read_ref(b"refs/heads/m").unwrap().unwrap().value_id(),
        Some(&id(2))
    );
    // HEAD, a symref, stays one.
    let head = RefUpdate::symref_update("HEAD", "refs/heads/m", Expected::Any).no_deref();
    tx(&mut d, &[head.message("to m")]).unwrap();
    tx(&mut d, &[RefUpdate::update("HEAD", id(4), None)]).unwrap();
    d.expire_reflog_update_ref(b"HEAD", &mut |_| false, false, &Tags)
        .unwrap();
    assert!(matches!(
        d.read_ref(b"HEAD").unwrap().unwrap().value,
        reftable::RefValue::Symref(_)
    ));
}

#[test]
fn pack_refs_compacts_prunes_and_keeps_other_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = db(dir.path(), false);
    for i in 0..5u8 {
        tx(
            &mut d,
            &[RefUpdate::create(format!("refs/heads/b{i}"), id(i + 1))],
        )
        .unwrap();
    }
    tx(&mut d, &[RefUpdate::delete("refs/heads/b0", None)]).unwrap();
    assert_eq!(d.stack().tables().len(), 6);
    let stale = dir
        .path()
        .join("0x000000000001-0x000000000001-0badc0de.ref");
    std::fs::copy(dir.path().join(&d.stack().table_names()[0]), &stale).unwrap();
    std::fs::write(dir.path().join("keep.txt"), "not a table").unwrap();
    d.pack_refs(false).unwrap();
    assert_eq!(d.stack().tables().len(), 1);
    assert!(!stale.exists());
    assert!(dir.path().join("keep.txt").exists());
    // Tombstones are gone after packing, and every live ref survived.
    let t = &d.stack().tables()[0];
    assert!(t
        .refs()
        .unwrap()
        .all(|r| !reftable::table::Record::is_deletion(&r.unwrap())));
    assert_eq!(live(&d).len(), 4);
    // Auto-compaction keeps a growing stack small.
    let dir2 = tempfile::tempdir().unwrap();
    let mut a = db(dir2.path(), true);
    for i in 0..30u8 {
        tx(
            &mut a,
            &[RefUpdate::create(format!("refs/heads/c{i}"), id(i + 1))],
        )
        .unwrap();
    }
    assert!(
        a.stack().tables().len() <= 5,
        "{} tables",
        a.stack().tables().len()
    );
}

/// git reads at most five refs while resolving a name (refs.c `refs_resolve_ref_unsafe`
/// counts `symref_count < SYMREF_MAXDEPTH` with one read per step): a chain of four symrefs
/// resolves, a chain of five does not.
#[test]
fn symref_chains_resolve_as_deep_as_gits() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = db(dir.path(), false);
    let mut updates = vec![RefUpdate::create("refs/heads/direct", id(1))];
    // s1 -> s2 -> s3 -> s4 -> s5 -> direct
    for i in 1..=5 {
        let target = if i == 5 {
            "refs/heads/direct".to_string()
        } else {
            format!("refs/heads/s{}", i + 1)
        };
        updates.push(RefUpdate::symref_create(format!("refs/heads/s{i}"), target));
    }
    tx(&mut d, &updates).unwrap();
    assert_eq!(
        d.resolve(b"refs/heads/s2").unwrap(),
        Some(id(1)),
        "4 symrefs"
    );
    assert_eq!(
        d.resolve(b"refs/heads/s5").unwrap(),
        Some(id(1)),
        "1 symref"
    );
    assert_eq!(d.resolve(b"refs/heads/s1").unwrap(), None, "5 symrefs");
}

/// git 2.52 refuses a no-deref update that expects no ref when the ref is a dangling symref
/// (450fc2bace "refs: do not clobber dangling symrefs"); 2.45 to 2.51 overwrite the symref.
#[test]
fn dangling_symrefs_are_protected_unless_told_otherwise() {
    for protect in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let mut d = RefDb::open(
            dir.path(),
            RefDbOptions::default()
                .stack(StackOptions::default().fsync(false))
                .protect_dangling_symrefs(protect),
        )
        .unwrap();
        tx(
            &mut d,
            &[RefUpdate::symref_create(
                "refs/heads/sym",
                "refs/heads/nowhere",
            )],
        )
        .unwrap();
        let create = RefUpdate::create("refs/heads/sym", id(2)).no_deref();
        let r = tx(&mut d, &[create]);
        if protect {
            let e = r.unwrap_err();
            assert_eq!(e.kind(), ErrorKind::OldValueMismatch);
            assert!(
                e.message().contains("dangling symref already exists"),
                "{e}"
            );
            assert!(d
                .read_ref(b"refs/heads/sym")
                .unwrap()
                .unwrap()
                .symref_target()
                .is_some());
        } else {
            r.unwrap();
            assert_eq!(d.resolve(b"refs/heads/sym").unwrap(), Some(id(2)));
        }
        // Through the symref (no no-deref), the create lands on the missing target.
        tx(&mut d, &[RefUpdate::create("refs/heads/other", id(3))]).unwrap();
    }
}

/// Deleting the symref `HEAD` points at, expecting its target: the `HEAD` entry the
/// transaction adds carries no old id, which git before 2.51.1 holds against `HEAD` (it
/// resolves to something: "reference already exists") and later gits do not check
/// (046c67325c).
#[test]
fn log_only_old_values_are_checked_only_when_told() {
    for check in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let mut d = RefDb::open(
            dir.path(),
            RefDbOptions::default()
                .stack(StackOptions::default().fsync(false))
                .check_log_only_old_values(check),
        )
        .unwrap();
        tx(&mut d, &[RefUpdate::create("refs/heads/a", id(1))]).unwrap();
        tx(
            &mut d,
            &[RefUpdate::symref_create("refs/heads/s", "refs/heads/a")],
        )
        .unwrap();
        tx(&mut d, &[RefUpdate::symref_create("HEAD", "refs/heads/s")]).unwrap();
        let delete = RefUpdate::symref_delete("refs/heads/s", Some(b"refs/heads/a".as_slice()));
        let r = tx(&mut d, &[delete]);
        if check {
            let e = r.unwrap_err();
            assert_eq!(e.kind(), ErrorKind::OldValueMismatch);
            assert!(
                e.message() == "cannot lock ref 'HEAD': reference already exists",
                "{e}"
            );
            assert!(d.read_ref(b"refs/heads/s").unwrap().is_some());
        } else {
            r.unwrap();
            assert!(d.read_ref(b"refs/heads/s").unwrap().is_none());
        }
    }
}

/// `reflog expire --updateref` moves a ref that holds an annotated tag (stored with its
/// peeled value) as it moves one that holds a commit: git asks
/// `reftable_ref_record_val1()`, which both have.
#[test]
fn expiry_updates_a_ref_that_holds_a_tag() {
    let dir = tempfile::tempdir().unwrap();
    let opts = RefDbOptions::default()
        .stack(StackOptions::default().auto_compaction(false).fsync(false))
        .log_refs(LogRefs::Always);
    let mut d = RefDb::open(dir.path(), opts).unwrap();
    let t = b"refs/tags/t";
    d.transaction(&[RefUpdate::create("refs/tags/t", id(3))], &me(), &Tags)
        .unwrap();
    d.transaction(
        &[RefUpdate::update("refs/tags/t", id(2), None)],
        &me(),
        &Tags,
    )
    .unwrap();
    assert_eq!(d.read_ref(t).unwrap().unwrap().peeled_id(), Some(&id(9)));
    let newest = log(&d, t)[0].update_index;
    d.expire_reflog_update_ref(t, &mut |l| l.update_index == newest, false, &Tags)
        .unwrap();
    let r = d.read_ref(t).unwrap().unwrap();
    assert_eq!((r.value_id(), r.peeled_id()), (Some(&id(3)), None));
}

/// A copy of the branch `HEAD` points at logs nothing to `HEAD`; a rename does (git's
/// `write_copy_table` writes `HEAD`'s entry only when it deletes the old ref).
#[test]
fn only_a_rename_of_heads_branch_logs_to_head() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = db(dir.path(), false);
    let head = RefUpdate::symref_create("HEAD", "refs/heads/main").no_deref();
    tx(&mut d, &[head]).unwrap();
    tx(&mut d, &[RefUpdate::create("refs/heads/main", id(1))]).unwrap();
    let before = log(&d, b"HEAD").len();
    d.copy_ref(b"refs/heads/main", b"refs/heads/copy", b"copied", &me())
        .unwrap();
    assert_eq!(log(&d, b"HEAD").len(), before, "a copy logged to HEAD");
    d.rename_ref(b"refs/heads/main", b"refs/heads/moved", b"moved", &me())
        .unwrap();
    let head = log(&d, b"HEAD");
    assert_eq!(head.len(), before + 1, "a rename logs to HEAD");
    // HEAD's entry is the deletion's (old id to null, at the deletion's update index), the
    // index below the new name's creation.
    let moved = log(&d, b"refs/heads/moved");
    let deletion = moved
        .iter()
        .find(|l| l.update().unwrap().new_id.is_null())
        .expect("the new name logs the deletion");
    assert_eq!(head[0].update_index, deletion.update_index);
    assert_eq!(head[0].update_index + 1, moved[0].update_index);
    assert!(head[0].update().unwrap().new_id.is_null());
}

fn refusal(r: reftable::Result<()>) -> reftable::Refusal {
    r.unwrap_err()
        .refusal()
        .expect("a structured refusal")
        .clone()
}

/// A rename's directory/file check leaves the renamed ref out in both directions
/// (`write_copy_table` skips the old name): `a/b` becomes `a`, and `a` becomes `a/b`. A third
/// ref in the way still refuses it.
#[test]
fn a_rename_into_its_own_directory_or_parent() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = db(dir.path(), false);
    tx(&mut d, &[RefUpdate::create("refs/heads/a/b", id(1))]).unwrap();
    d.rename_ref(b"refs/heads/a/b", b"refs/heads/a", b"up", &me())
        .unwrap();
    d.rename_ref(b"refs/heads/a", b"refs/heads/a/c", b"down", &me())
        .unwrap();
    let names: Vec<_> = live(&d).into_iter().map(|r| r.refname).collect();
    assert_eq!(names, [b"refs/heads/a/c".to_vec()]);
    tx(&mut d, &[RefUpdate::create("refs/heads/x/y", id(1))]).unwrap();
    let e = d
        .rename_ref(b"refs/heads/a/c", b"refs/heads/x", b"in the way", &me())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NameConflict, "{e}");
}

/// Each update of one transaction logs its own message (`ref_transaction_add_update`
/// normalizes each), also when two messages are the same length.
#[test]
fn each_update_of_a_transaction_logs_its_own_message() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = db(dir.path(), false);
    let names = [
        "refs/heads/a",
        "refs/heads/b",
        "refs/heads/c",
        "refs/heads/d",
    ];
    let messages = ["set a", "set b", "set  b", "set a"];
    let updates: Vec<_> = names
        .iter()
        .zip(messages)
        .map(|(n, m)| RefUpdate::create(n, id(1)).message(m))
        .collect();
    tx(&mut d, &updates).unwrap();
    for (n, want) in names
        .iter()
        .zip(["set a\n", "set b\n", "set b\n", "set a\n"])
    {
        let got = log(&d, n.as_bytes())[0].update().unwrap().message.clone();
        assert_eq!(String::from_utf8_lossy(&got), want, "{n}");
    }
}

/// Only a commit goes to a branch, and `HEAD` counts as one (`ref_transaction_update`'s
/// `is_branch`): detached, or updated through as a symref, the refusal names `HEAD`. Other
/// refs take any object.
#[test]
fn non_commits_are_refused_for_branches_and_head() {
    use reftable::Refusal;
    let dir = tempfile::tempdir().unwrap();
    let mut d = db(dir.path(), false);
    let with_tags = |d: &mut RefDb, u: &[RefUpdate]| d.transaction(u, &me(), &Tags).map(drop);
    for name in ["HEAD", "refs/heads/x"] {
        let r = with_tags(&mut d, &[RefUpdate::create(name, id(2))]);
        match refusal(r) {
            Refusal::NonCommit { name: n, id: i } => assert_eq!((n, i), (name.into(), id(2))),
            other => panic!("{name}: {other:?}"),
        }
    }
    with_tags(&mut d, &[RefUpdate::create("refs/tags/t", id(2))]).unwrap();
    tx(
        &mut d,
        &[RefUpdate::symref_create("HEAD", "refs/heads/main")],
    )
    .unwrap();
    tx(&mut d, &[RefUpdate::create("refs/heads/main", id(1))]).unwrap();
    let e = with_tags(&mut d, &[RefUpdate::update("HEAD", id(2), Some(id(1)))]).unwrap_err();
    assert!(
        matches!(e.refusal(), Some(Refusal::NonCommit { name, .. }) if name == b"HEAD"),
        "{e}"
    );
    assert!(e.to_string().contains("to branch 'HEAD'"), "{e}");
}

/// Directory/file conflicts among the updates of one transaction, also when one side is
/// reached through a symref (as git 2.47.3 refuses them: "'refs/heads/a' exists; cannot
/// create 'refs/heads/a/b'" and "cannot process 'refs/heads/x' and 'refs/heads/x/y' at the
/// same time"). Nothing is written.
#[test]
fn directory_conflicts_through_symrefs_within_one_transaction() {
    use reftable::Refusal;
    let dir = tempfile::tempdir().unwrap();
    let mut d = db(dir.path(), false);
    tx(
        &mut d,
        &[
            RefUpdate::create("refs/heads/a", id(1)),
            RefUpdate::symref_create("HEAD", "refs/heads/a"),
        ],
    )
    .unwrap();
    let tables = d.stack().tables().len();
    // HEAD reaches refs/heads/a, which exists; refs/heads/a/b cannot be created beside it.
    let r = refusal(tx(
        &mut d,
        &[
            RefUpdate::update("HEAD", id(2), None),
            RefUpdate::create("refs/heads/a/b", id(2)),
        ],
    ));
    assert_eq!(
        r,
        Refusal::DirectoryConflict {
            name: b"refs/heads/a/b".to_vec(),
            existing: b"refs/heads/a".to_vec(),
            in_transaction: false,
        }
    );
    // Deleting refs/heads/a in the same transaction does not make room (git checks against
    // the refs as they are).
    let r = refusal(tx(
        &mut d,
        &[
            RefUpdate::delete("refs/heads/a", None),
            RefUpdate::create("refs/heads/a/b", id(2)),
        ],
    ));
    assert!(
        matches!(&r, Refusal::DirectoryConflict { existing, .. } if existing == b"refs/heads/a"),
        "{r:?}"
    );
    // HEAD is repointed to a dangling refs/heads/x/y; writing through HEAD creates it, which
    // conflicts with refs/heads/x created by the same transaction.
    tx(
        &mut d,
        &[RefUpdate::symref_update("HEAD", "refs/heads/x/y", Expected::Any).no_deref()],
    )
    .unwrap();
    let tables_after_repoint = d.stack().tables().len();
    let r = refusal(tx(
        &mut d,
        &[
            RefUpdate::update("HEAD", id(3), None),
            RefUpdate::create("refs/heads/x", id(3)),
        ],
    ));
    match &r {
        Refusal::DirectoryConflict {
            name,
            existing,
            in_transaction,
        } => {
            let mut pair = [name.clone(), existing.clone()];
            pair.sort();
            assert_eq!(pair, [b"refs/heads/x".to_vec(), b"refs/heads/x/y".to_vec()]);
            assert!(in_transaction, "{r:?}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(d.stack().tables().len(), tables_after_repoint);
    assert!(tables_after_repoint > tables);
    assert!(d.read_ref(b"refs/heads/x").unwrap().is_none());
    assert!(d.read_ref(b"refs/heads/x/y").unwrap().is_none());
}

/// Deleting or verifying a missing ref with an expected old value is refused with what the
/// ref is (git: "cannot lock ref 'refs/heads/missing': unable to resolve reference"); without
/// an old value the deletion is a no-op that writes nothing.
#[test]
fn deleting_a_missing_ref_with_an_old_value() {
    use reftable::{RefState, Refusal};
    let dir = tempfile::tempdir().unwrap();
    let mut d = db(dir.path(), false);
    tx(&mut d, &[RefUpdate::create("refs/heads/other", id(1))]).unwrap();
    let tables = d.stack().tables().len();
    for u in [
        RefUpdate::delete("refs/heads/missing", Some(id(1))),
        RefUpdate::verify("refs/heads/missing", Some(id(1))),
    ] {
        let r = refusal(tx(&mut d, &[u]));
        assert_eq!(
            r,
            Refusal::OldValue {
                name: b"refs/heads/missing".to_vec(),
                expected: RefState::Is(Target::Object(id(1))),
                actual: RefState::Absent,
            }
        );
    }
    // Alongside an update that would succeed: the whole transaction is refused.
    let r = tx(
        &mut d,
        &[
            RefUpdate::create("refs/heads/new", id(2)),
            RefUpdate::delete("refs/heads/missing", Some(id(1))),
        ],
    );
    assert_eq!(kind(r), ErrorKind::OldValueMismatch);
    assert!(d.read_ref(b"refs/heads/new").unwrap().is_none());
    tx(&mut d, &[RefUpdate::delete("refs/heads/missing", None)]).unwrap();
    assert_eq!(d.stack().tables().len(), tables);
    assert!(log(&d, b"refs/heads/missing").is_empty());
}

/// What a caller reads back: the options it opened with, refusals that name the ref, and
/// a reload that brings in what another writer committed.
#[test]
fn options_messages_and_reload() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = db(dir.path(), false);
    assert_eq!(d.options().log_refs, LogRefs::Normal);
    assert!(!d.options().stack.auto_compaction);
    let twice = [
        RefUpdate::update("refs/heads/twice", id(1), None),
        RefUpdate::update("refs/heads/twice", id(2), None),
    ];
    let e = tx(&mut d, &twice).unwrap_err();
    assert!(e.message().contains("'refs/heads/twice'"), "{e}");
    let e = tx(&mut d, &[RefUpdate::create("refs/heads/a..b", id(1))]).unwrap_err();
    assert!(e.message().contains("refs/heads/a..b"), "{e}");

    let mut other = db(dir.path(), false);
    tx(&mut other, &[RefUpdate::create("refs/heads/new", id(3))]).unwrap();
    assert!(d
        .stack()
        .merged()
        .read_ref(b"refs/heads/new")
        .unwrap()
        .is_none());
    d.reload().unwrap();
    assert!(d
        .stack()
        .merged()
        .read_ref(b"refs/heads/new")
        .unwrap()
        .is_some());
}

/// Reads a caller relies on: tombstones and refs past a prefix are not live refs, the D/F
/// check as a query, names earlier in a transaction that conflict, expiry counts, and
/// reflog existence markers in a SHA-256 stack.
#[test]
fn live_refs_name_checks_and_expiry_counts() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = db(dir.path(), false);
    tx(
        &mut d,
        &[
            RefUpdate::create("refs/heads/a", id(1)),
            RefUpdate::create("refs/heads/b", id(2)),
            RefUpdate::create("refs/tags/t", id(3)),
        ],
    )
    .unwrap();
    tx(&mut d, &[RefUpdate::delete("refs/heads/a", None)]).unwrap();
    let names = |r: Vec<reftable::RefRecord>| -> Vec<Vec<u8>> {
        r.into_iter().map(|r| r.refname).collect()
    };
    assert_eq!(
        names(live(&d)),
        [b"refs/heads/b".to_vec(), b"refs/tags/t".to_vec()]
    );
    let heads: Vec<_> = d
        .refs_with_prefix(b"refs/heads/")
        .unwrap()
        .collect::<reftable::Result<_>>()
        .unwrap();
    assert_eq!(names(heads), [b"refs/heads/b".to_vec()]);

    assert_eq!(
        kind(d.check_name_available(b"refs/heads/b/x")),
        ErrorKind::NameConflict
    );
    assert_eq!(
        kind(d.check_name_available(b"refs/heads")),
        ErrorKind::NameConflict
    );
    d.check_name_available(b"refs/heads/a").unwrap();
    d.check_name_available(b"refs/heads/c").unwrap();

    // A D/F conflict between two new names, with other names sorting before them.
    let e = tx(
        &mut d,
        &[
            RefUpdate::create("refs/heads/0", id(4)),
            RefUpdate::create("refs/heads/n/x", id(4)),
            RefUpdate::create("refs/heads/n", id(4)),
        ],
    );
    assert_eq!(kind(e), ErrorKind::NameConflict);
    // The shorter name first: it is the one refused, for the longer one queued after it.
    let e = tx(
        &mut d,
        &[
            RefUpdate::create("refs/heads/0", id(4)),
            RefUpdate::create("refs/heads/q", id(4)),
            RefUpdate::create("refs/heads/q/x", id(4)),
        ],
    );
    match refusal(e) {
        reftable::Refusal::DirectoryConflict {
            name,
            existing,
            in_transaction,
        } => assert_eq!(
            (name, existing, in_transaction),
            (b"refs/heads/q".to_vec(), b"refs/heads/q/x".to_vec(), true)
        ),
        other => panic!("{other:?}"),
    }

    for v in 1..=3 {
        tx(
            &mut d,
            &[RefUpdate::update("refs/heads/b", id(v + 4), None)],
        )
        .unwrap();
    }
    let counts = d
        .expire_reflog(
            b"refs/heads/b",
            &mut |l| {
                l.update()
                    .is_some_and(|u| u.new_id == id(5) || u.new_id == id(7))
            },
            false,
            false,
        )
        .unwrap();
    assert_eq!(counts.pruned + counts.kept, 4);
    assert_eq!(counts.pruned, 2, "{counts:?}");

    let dir = tempfile::tempdir().unwrap();
    let mut opts = *d.options();
    opts.stack.write.hash = reftable::HashId::Sha256;
    let mut d = RefDb::open(dir.path(), opts).unwrap();
    d.create_reflog(b"refs/custom/x").unwrap();
    assert!(d.reflog_exists(b"refs/custom/x").unwrap());
    let raw: Vec<reftable::LogRecord> = d
        .stack()
        .merged()
        .logs()
        .unwrap()
        .collect::<reftable::Result<_>>()
        .unwrap();
    assert_eq!(raw.len(), 1);
    assert_eq!(raw[0].update().unwrap().new_id.len(), 32);
}

/// A symref's new target and its expected old target must both be valid ref names.
#[test]
fn symref_targets_must_be_valid_names() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = db(dir.path(), false);
    tx(&mut d, &[RefUpdate::create("refs/heads/main", id(1))]).unwrap();
    tx(
        &mut d,
        &[RefUpdate::symref_create("refs/s", "refs/heads/main")],
    )
    .unwrap();
    let bad_new = RefUpdate::symref_create("refs/t", "refs/heads/a..b");
    let bad_old = RefUpdate::symref_update(
        "refs/s",
        "refs/heads/main",
        Expected::Is(Target::Symref(b"refs/heads/x..y".to_vec())),
    );
    for (u, target) in [
        (bad_new, &b"refs/heads/a..b"[..]),
        (bad_old, b"refs/heads/x..y"),
    ] {
        match refusal(tx(&mut d, &[u])) {
            reftable::Refusal::BadName { name, why } => {
                assert_eq!(
                    (name.as_slice(), why),
                    (target, "not a valid symref target")
                )
            }
            other => panic!("{other:?}"),
        }
    }
}

/// A prepared transaction shows what it will write before it is committed; refusals carry
/// what was expected and which object is missing; ids of the other hash are an API error.
#[test]
fn prepared_transactions_and_structured_refusals() {
    use reftable::refdb::{LookupError, ObjectKind, ObjectLookup};
    let dir = tempfile::tempdir().unwrap();
    let mut d = db(dir.path(), false);
    tx(&mut d, &[RefUpdate::create("refs/heads/main", id(1))]).unwrap();
    {
        let p = d
            .prepare(
                &[
                    RefUpdate::create("refs/heads/b", id(2)),
                    RefUpdate::create("refs/heads/a", id(3)),
                ],
                &me(),
                &AssumeCommits,
            )
            .unwrap();
        assert_eq!(p.update_index(), 2);
        assert_eq!((p.ref_records(), p.log_records()), (2, 2));
        assert!(!p.is_empty());
    }
    // Dropped without commit: the table it had written is gone and nothing changed.
    let files = |d: &std::path::Path| {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    assert_eq!(files(dir.path()).len(), 2, "{:?}", files(dir.path()));
    assert!(d.read_ref(b"refs/heads/a").unwrap().is_none());
    {
        let checks_only = [RefUpdate::verify("refs/heads/main", Some(id(1)))];
        let p = d.prepare(&checks_only, &me(), &AssumeCommits).unwrap();
        assert!(p.is_empty());
    }
    // "Must not exist" on an existing ref.
    match refusal(tx(
        &mut d,
        &[RefUpdate::update(
            "refs/heads/main",
            id(2),
            Some(ObjectId::null(reftable::HashId::Sha1)),
        )],
    )) {
        reftable::Refusal::OldValue {
            expected, actual, ..
        } => assert_eq!(
            (expected, actual),
            (
                reftable::RefState::Absent,
                reftable::RefState::Is(Target::Object(id(1)))
            )
        ),
        other => panic!("{other:?}"),
    }
    struct Nothing;
    impl ObjectLookup for Nothing {
        fn lookup(&self, _: &ObjectId) -> Result<ObjectKind, LookupError> {
            Ok(ObjectKind::Missing)
        }
    }
    let r = d.transaction(&[RefUpdate::create("refs/heads/n", id(9))], &me(), &Nothing);
    match refusal(r.map(drop)) {
        reftable::Refusal::MissingObject { name, id: missing } => {
            assert_eq!((name, missing), (b"refs/heads/n".to_vec(), id(9)))
        }
        other => panic!("{other:?}"),
    }
    let long = ObjectId::from_bytes(&[7; 32]).unwrap();
    assert_eq!(
        kind(tx(&mut d, &[RefUpdate::create("refs/heads/l", long)])),
        ErrorKind::Api
    );
    assert_eq!(
        kind(tx(
            &mut d,
            &[RefUpdate::update("refs/heads/main", id(2), Some(long))]
        )),
        ErrorKind::Api
    );
}

/// Expecting a symref where the ref holds an object is an old-value refusal that says both.
#[test]
fn expecting_a_symref_on_a_plain_ref() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = db(dir.path(), false);
    tx(&mut d, &[RefUpdate::create("refs/heads/main", id(1))]).unwrap();
    let u = RefUpdate::symref_verify("refs/heads/main", Some(&b"refs/heads/x"[..]));
    match refusal(tx(&mut d, &[u])) {
        reftable::Refusal::OldValue {
            expected, actual, ..
        } => assert_eq!(
            (expected, actual),
            (
                reftable::RefState::Is(Target::Symref(b"refs/heads/x".to_vec())),
                reftable::RefState::Is(Target::Object(id(1)))
            )
        ),
        other => panic!("{other:?}"),
    }
}

/// Reflog messages end in one newline, and are cut to half the block size as git cuts them.
#[test]
fn reflog_messages_newline_and_length() {
    assert!(RefUpdate::delete("refs/heads/x", None).deletes());
    assert!(!RefUpdate::create("refs/heads/x", id(1)).deletes());
    assert!(!RefUpdate::verify("refs/heads/x", None).deletes());
    let dir = tempfile::tempdir().unwrap();
    let mut opts = *db(dir.path(), false).options();
    opts.stack.write.block_size = 1024;
    let mut d = RefDb::open(dir.path(), opts).unwrap();
    tx(
        &mut d,
        &[RefUpdate::create("refs/heads/a", id(1)).message("plain")],
    )
    .unwrap();
    tx(
        &mut d,
        &[RefUpdate::create("refs/heads/b", id(1)).message("ends\n")],
    )
    .unwrap();
    tx(
        &mut d,
        &[RefUpdate::create("refs/heads/c", id(1)).message("m".repeat(1000))],
    )
    .unwrap();
    let msg = |name: &[u8]| log(&d, name)[0].update().unwrap().message.clone();
    assert_eq!(msg(b"refs/heads/a"), b"plain\n");
    assert_eq!(msg(b"refs/heads/b"), b"ends\n");
    assert_eq!(msg(b"refs/heads/c").len(), 512 + 1);
}

/// One ref updated twice in a transaction, once through a symref, is refused as a
/// duplicate that names the symref (also when both updates come through symrefs, and for
/// `HEAD` updated beside the branch it points at, whose update logs to `HEAD`). An id of
/// the other hash is refused whether it is the new or the expected value.
#[test]
fn duplicates_through_symrefs_and_ids_of_the_other_hash() {
    use reftable::Refusal;
    let dir = tempfile::tempdir().unwrap();
    let mut d = db(dir.path(), false);
    tx(
        &mut d,
        &[
            RefUpdate::create("refs/heads/main", id(1)),
            RefUpdate::create("refs/heads/t", id(1)),
            RefUpdate::symref_create("HEAD", "refs/heads/main"),
            RefUpdate::symref_create("refs/heads/s1", "refs/heads/t"),
            RefUpdate::symref_create("refs/heads/s2", "refs/heads/t"),
        ],
    )
    .unwrap();
    let tables = d.stack().tables().len();
    // Both through symrefs to refs/heads/t; through HEAD and directly to refs/heads/main.
    for (first, second, twice) in [
        ("refs/heads/s1", "refs/heads/s2", &b"refs/heads/t"[..]),
        ("HEAD", "refs/heads/main", b"refs/heads/main"),
    ] {
        let updates = [
            RefUpdate::update(first, id(2), None),
            RefUpdate::update(second, id(3), None),
        ];
        let r = refusal(tx(&mut d, &updates));
        assert!(
            matches!(&r, Refusal::Duplicate { name, via: Some(_) } if name == twice),
            "{r:?}"
        );
    }
    let r = refusal(tx(
        &mut d,
        &[
            RefUpdate::update("HEAD", id(2), None).no_deref(),
            RefUpdate::update("refs/heads/main", id(3), None),
        ],
    ));
    assert_eq!(
        r,
        Refusal::Duplicate {
            name: b"HEAD".to_vec(),
            via: Some(b"refs/heads/main".to_vec()),
        }
    );
    let sha256 = ObjectId::from_bytes(&[1; 32]).unwrap();
    for u in [
        RefUpdate::create("refs/heads/x", sha256),
        RefUpdate::update("refs/heads/t", id(2), Some(sha256)),
    ] {
        let e = tx(&mut d, &[u]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Api, "{e}");
        assert!(e.message().contains("wrong hash"), "{e}");
    }
    assert_eq!(d.stack().tables().len(), tables, "nothing written");
}

/// `symref-update` turns a plain ref into a symref: the update is written, not skipped as
/// one that changes nothing.
#[test]
fn a_plain_ref_becomes_a_symref() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = db(dir.path(), false);
    tx(
        &mut d,
        &[
            RefUpdate::create("refs/heads/main", id(1)),
            RefUpdate::create("refs/heads/alias", id(2)),
        ],
    )
    .unwrap();
    tx(
        &mut d,
        &[RefUpdate::symref_update(
            "refs/heads/alias",
            "refs/heads/main",
            Expected::Is(Target::Object(id(2))),
        )
        .no_deref()],
    )
    .unwrap();
    let alias = live(&d)
        .into_iter()
        .find(|r| r.refname == b"refs/heads/alias")
        .unwrap();
    assert_eq!(
        alias.value,
        reftable::RefValue::Symref(b"refs/heads/main".to_vec())
    );
}

/// Shapes no other library test tried (the mutation pass's survivors): `transaction_iter`
/// commits; updates with different messages in one transaction keep their own; an update
/// that writes a ref and no reflog is not an empty transaction; a deletion's log
/// tombstones are counted; a tombstone under `name/` does not block creating `name`.
#[test]
fn transaction_shapes_the_mutation_pass_found_untried() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = db(dir.path(), false);
    let updates = vec![
        RefUpdate::create("refs/heads/a", id(1)).message("first"),
        RefUpdate::create("refs/heads/b", id(2)).message("second"),
        RefUpdate::create("refs/heads/c", id(3)).message("first"),
    ];
    d.transaction_iter(updates, &me(), &AssumeCommits).unwrap();
    let message = |d: &RefDb, name: &[u8]| match &log(d, name)[..] {
        [reftable::LogRecord {
            value: reftable::LogValue::Update(u),
            ..
        }] => u.message.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(message(&d, b"refs/heads/a"), b"first\n");
    assert_eq!(message(&d, b"refs/heads/b"), b"second\n");
    assert_eq!(message(&d, b"refs/heads/c"), b"first\n");

    // refs/custom/ gets no reflog under LogRefs::Normal: one ref record, no log record.
    let p = d
        .prepare(
            &[RefUpdate::create("refs/custom/x", id(4))],
            &me(),
            &AssumeCommits,
        )
        .unwrap();
    assert_eq!((p.ref_records(), p.log_records()), (1, 0));
    assert!(!p.is_empty());
    p.commit().unwrap();
    assert_eq!(
        d.read_ref(b"refs/custom/x").unwrap().unwrap().refname,
        b"refs/custom/x"
    );

    // Deleting refs/heads/a: its ref tombstone and one log tombstone per reflog entry.
    tx(
        &mut d,
        &[RefUpdate::update("refs/heads/a", id(5), None).message("again")],
    )
    .unwrap();
    let entries = log(&d, b"refs/heads/a").len();
    assert_eq!(entries, 2);
    let p = d
        .prepare(
            &[RefUpdate::delete("refs/heads/a", None)],
            &me(),
            &AssumeCommits,
        )
        .unwrap();
    assert_eq!((p.ref_records(), p.log_records()), (1, entries));
    p.commit().unwrap();

    tx(&mut d, &[RefUpdate::create("refs/heads/dir/sub", id(6))]).unwrap();
    tx(&mut d, &[RefUpdate::delete("refs/heads/dir/sub", None)]).unwrap();
    assert!(
        d.stack().tables().len() > 1,
        "the tombstone is not compacted away"
    );
    tx(&mut d, &[RefUpdate::create("refs/heads/dir", id(7))]).unwrap();
    assert!(d.read_ref(b"refs/heads/dir").unwrap().is_some());
}

/// The ref database opens as its stack does: a missing directory is refused by the plain
/// open and made by the creating one, and the options given are the ones it keeps.
#[test]
fn only_the_creating_open_makes_a_missing_ref_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("reftable");
    let opts = RefDbOptions::default()
        .stack(StackOptions::default().lock_timeout(Some(Duration::ZERO)))
        .log_refs(LogRefs::Always);
    let e = RefDb::open(&path, opts).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::NotExist);
    assert!(!path.exists());
    let mut d = RefDb::open_or_create(&path, opts).unwrap();
    assert!(path.is_dir());
    assert_eq!(d.options().log_refs, LogRefs::Always);
    tx(&mut d, &[RefUpdate::create("refs/tags/t", id(1))]).unwrap();
    assert_eq!(log(&d, b"refs/tags/t").len(), 1);
}

/// Creating a reflog that exists already, even as only an existence marker, writes nothing;
/// deleting it and creating it again writes a fresh marker.
#[test]
fn creating_an_existing_reflog_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = db(dir.path(), false);
    d.create_reflog(b"refs/tags/t").unwrap();
    assert!(d.reflog_exists(b"refs/tags/t").unwrap());
    assert_eq!(d.stack().tables().len(), 1);
    d.create_reflog(b"refs/tags/t").unwrap();
    assert_eq!(d.stack().tables().len(), 1);
    tx(&mut d, &[RefUpdate::create("refs/heads/b", id(1))]).unwrap();
    let tables = d.stack().tables().len();
    d.create_reflog(b"refs/heads/b").unwrap();
    assert_eq!(d.stack().tables().len(), tables);
    d.delete_reflog(b"refs/tags/t").unwrap();
    assert!(!d.reflog_exists(b"refs/tags/t").unwrap());
    d.create_reflog(b"refs/tags/t").unwrap();
    assert!(d.reflog_exists(b"refs/tags/t").unwrap());
}

/// An update that leaves `HEAD`'s branch at its value writes no ref record and nothing to the
/// branch's reflog, but `HEAD` still logs it (the log-only update git queues for `HEAD` when
/// its branch is updated), so the prepared transaction is not empty and its commit adds a
/// table.
#[test]
fn a_no_op_update_of_heads_branch_only_logs_in_head() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = db(dir.path(), false);
    tx(&mut d, &[RefUpdate::create("refs/heads/main", id(1))]).unwrap();
    tx(
        &mut d,
        &[RefUpdate::symref_create("HEAD", "refs/heads/main")],
    )
    .unwrap();
    let same = [RefUpdate::update("refs/heads/main", id(1), None).message("again")];
    let p = d.prepare(&same, &me(), &AssumeCommits).unwrap();
    assert_eq!((p.ref_records(), p.log_records()), (0, 1));
    assert!(!p.is_empty());
    p.commit().unwrap();
    assert_eq!(d.stack().tables().len(), 3);
    assert_eq!(log(&d, b"refs/heads/main").len(), 1);
    let head = log(&d, b"HEAD");
    assert_eq!(head.len(), 2);
    let u = head[0].update().expect("an update");
    assert_eq!((u.old_id, u.new_id), (id(1), id(1)));
    assert_eq!(u.message, b"again\n");
}

/// A ref and a ref under it in one transaction conflict as file and directory, as they do
/// across transactions (git's availability check counts the transaction's other names,
/// `refs_verify_refname_available` with the affected names as extras).
#[test]
fn a_ref_and_one_under_it_in_one_transaction_conflict() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = db(dir.path(), false);
    for pair in [
        ["refs/heads/a", "refs/heads/a/b"],
        ["refs/heads/c/d/e", "refs/heads/c"],
    ] {
        let both: Vec<_> = pair.iter().map(|n| RefUpdate::create(n, id(1))).collect();
        assert_eq!(kind(tx(&mut d, &both)), ErrorKind::NameConflict, "{pair:?}");
    }
    assert!(live(&d).is_empty());
    // The transaction's other names count even when they name no ref (a deletion of a
    // missing one), above the written name or below it.
    let above = [
        RefUpdate::delete("refs/heads/x", None),
        RefUpdate::create("refs/heads/x/y", id(1)),
    ];
    assert_eq!(kind(tx(&mut d, &above)), ErrorKind::NameConflict);
    let below = [
        RefUpdate::delete("refs/heads/y/z", None),
        RefUpdate::create("refs/heads/y", id(1)),
    ];
    assert_eq!(kind(tx(&mut d, &below)), ErrorKind::NameConflict);
    // Names that only share a prefix of characters do not conflict.
    let apart = [
        RefUpdate::create("refs/heads/a", id(1)),
        RefUpdate::create("refs/heads/a-b/c", id(1)),
    ];
    tx(&mut d, &apart).unwrap();
}

/// A dry run of reflog expiry says what it would prune and writes nothing: no table, the
/// reflog as it was.
#[test]
fn a_dry_run_of_reflog_expiry_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = db(dir.path(), false);
    for n in 1..=3 {
        tx(&mut d, &[RefUpdate::update("refs/heads/main", id(n), None)]).unwrap();
    }
    let tables = d.stack().table_names().to_vec();
    let before = log(&d, b"refs/heads/main");
    let mut all = |_: &reftable::LogRecord| true;
    let out = d
        .expire_reflog(b"refs/heads/main", &mut all, false, true)
        .unwrap();
    assert_eq!((out.pruned, out.kept), (3, 0));
    d.reload().unwrap();
    assert_eq!(d.stack().table_names(), tables.as_slice());
    assert_eq!(log(&d, b"refs/heads/main"), before);
    let out = d
        .expire_reflog(b"refs/heads/main", &mut all, false, false)
        .unwrap();
    assert_eq!((out.pruned, out.kept), (3, 0));
    assert!(log(&d, b"refs/heads/main").is_empty());
}
