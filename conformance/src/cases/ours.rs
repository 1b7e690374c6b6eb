//! Our library's side of one generated operation, written once for the executor (which runs
//! it beside git and the model) and for the faults mode's worker process (which runs it alone
//! under injected system-call faults): the command's own checks in git's order, then the
//! library's call.

use reftable::refdb::{Expected, LogRefs, ObjectKind, RefDb, RefDbOptions, RefUpdate};

use reftable::refname::is_valid_refname;
use reftable::Signature;
use reftable::{Committed, ObjectId, RefValue, StackOptions, WriteOptions};

use crate::cases::unreachable::reach;
use crate::cases::verdict::Refused;
use crate::err_class::ErrClass;
use crate::git::profile::GitRules;
use crate::model::SYMREF_READS;
use crate::ops::{CaseOptions, Expire, Op, Update, Value};
use crate::setup::pool::{Pool, PoolObjects};

/// Our ref database's options for a case: its table options, auto-compaction as the case
/// has it, the transaction rules of the git's version (its profile's [`GitRules`]), fsync
/// as asked (off in the generated mode, where no power is lost).
pub fn refdb_options(opts: &CaseOptions, rules: GitRules, fsync: bool) -> RefDbOptions {
    RefDbOptions::default()
        .stack(
            StackOptions::default()
                .write(
                    WriteOptions::default()
                        .block_size(opts.block_size)
                        .restart_interval(opts.restart_interval)
                        .index_objects(opts.index_objects)
                        .hash(opts.hash()),
                )
                .auto_compaction(opts.auto_compaction)
                .fsync(fsync),
        )
        .log_refs(opts.log_refs.to_lib())
        .protect_dangling_symrefs(rules.dangling_symref_protected)
        .check_log_only_old_values(rules.log_only_old_checked)
}

/// Our refusal of an operation.
pub(crate) fn our_refusal(e: &reftable::Error) -> Refused {
    Refused {
        class: crate::err_class::of_ours(e),
        message: format!("{e:#}"),
    }
}

pub(crate) fn refused(class: ErrClass, message: &str) -> Refused {
    Refused {
        class: Some(class),
        message: message.into(),
    }
}

/// The reflog message `git branch -m/-c` writes.
pub(crate) fn branch_message(oldref: &str, newref: &str, copy: bool) -> String {
    format!(
        "Branch: {} {oldref} to {newref}",
        if copy { "copied" } else { "renamed" }
    )
}

/// `git reflog expire`'s cutoff: entries older than it go.
pub(crate) fn expire_cutoff(expire: &Expire) -> u64 {
    match expire {
        Expire::All => u64::MAX,
        Expire::Before(t) => *t,
        Expire::Never => 0,
    }
}

/// Run `op` on `db` alone, as the executor runs our side of it, with the committer clock
/// `committer` (the one git's process of the same step runs with): the warning of a
/// transaction whose work after its commit point failed (it is committed all the same).
pub fn apply(
    db: &mut RefDb,
    op: &Op,
    committer: &Signature,
    objects: &PoolObjects<'_>,
) -> Result<Option<String>, Refused> {
    let warned = |c: Committed| c.warning.map(|e| format!("{e:#}"));
    let committed = match op {
        Op::Txn {
            updates,
            message,
            create_reflog,
        }
        | Op::RefsCommand {
            updates,
            message,
            create_reflog,
        }
        | Op::Tag {
            updates,
            message,
            create_reflog,
        } => txn_committed(db, updates, message, *create_reflog, committer, objects),
        Op::Push { updates } => {
            txn_committed(db, updates, Op::PUSH_MESSAGE, false, committer, objects)
        }
        Op::Fetch { updates, messages } => {
            let messages: Vec<&str> = messages.iter().map(String::as_str).collect();
            txn_logged(db, updates, &messages, false, committer, objects)
        }
        other => return apply_other(db, other, committer, objects).map(|()| None),
    };
    committed.map(warned)
}

/// [`apply`] of an operation other than a transaction.
fn apply_other(
    db: &mut RefDb,
    op: &Op,
    committer: &Signature,
    objects: &PoolObjects<'_>,
) -> Result<(), Refused> {
    match op {
        Op::Txn { updates, .. }
        | Op::RefsCommand { updates, .. }
        | Op::Tag { updates, .. }
        | Op::Push { updates }
        | Op::Fetch { updates, .. } => Err(Refused {
            class: None,
            message: format!(
                "{} updates: a transaction, applied by `apply`",
                updates.len()
            ),
        }),
        Op::BatchTxn {
            updates,
            message,
            create_reflog,
        } => batch(db, updates, message, *create_reflog, committer, objects).map(drop),
        Op::SymbolicRef {
            name,
            target,
            message,
        } => symbolic_ref(db, name, target, message, committer, objects),
        // Only `conformance run` makes worktree cases; the modes that run our side alone
        // (faults) take their cases from `generate`, which makes none.
        Op::WorktreeTxn { .. } => Err(Refused {
            class: None,
            message: "a worktree transaction outside `conformance run`".into(),
        }),
        Op::ReflogExpire {
            refname,
            expire,
            update_ref,
            unreachable,
        } => on_log(db, refname, |db, t| {
            let cutoff = expire_cutoff(expire);
            expire_log(
                db,
                t,
                cutoff,
                *unreachable,
                update_ref.then_some(objects),
                objects.0,
            )
        }),
        Op::ReflogDelete {
            refname,
            index,
            rewrite,
            update_ref,
        } => on_log(db, refname, |db, t| {
            delete_log_entry(db, t, *index, *rewrite, update_ref.then_some(objects))
        }),
        Op::ReflogDrop { refname } => on_log(db, refname, |db, t| {
            db.delete_reflog(t.as_bytes()).map(drop)
        }),
        Op::PackRefs { auto } => db.pack_refs(*auto).map_err(|e| our_refusal(&e)),
        Op::MaintenancePackRefs => db.pack_refs(true).map_err(|e| our_refusal(&e)),
        Op::Orphan { branch } => {
            let plan = orphan_check(db, branch, objects)?;
            orphan(db, branch, &plan, committer, objects)
        }
        Op::Branch {
            old,
            new,
            refs_rename: Some(message),
            ..
        } => {
            let (oldref, newref) = (format!("refs/heads/{old}"), format!("refs/heads/{new}"));
            refs_rename(db, &oldref, &newref, message, committer)
        }
        Op::Branch {
            old,
            new,
            copy,
            force,
            ..
        } => {
            let (oldref, newref) = (format!("refs/heads/{old}"), format!("refs/heads/{new}"));
            let message = branch_message(&oldref, &newref, *copy);
            let names = BranchNames {
                old: &oldref,
                new: &newref,
            };
            branch(db, names, *copy, *force, &message, committer, objects)
        }
    }
}

/// `f` on the reflog git's name rules find for `refname`; none found is a refusal.
fn on_log(
    db: &mut RefDb,
    refname: &str,
    f: impl FnOnce(&mut RefDb, &str) -> reftable::Result<()>,
) -> Result<(), Refused> {
    match dwim_log(db, refname) {
        None => Err(refused(ErrClass::NoReflog, "no reflog")),
        Some(t) => f(db, &t).map_err(|e| our_refusal(&e)),
    }
}

/// The transaction, after the names check of update-ref's parser.
pub(crate) fn txn(
    db: &mut RefDb,
    updates: &[Update],
    message: &str,
    create_reflog: bool,
    committer: &Signature,
    objects: &PoolObjects<'_>,
) -> Result<(), Refused> {
    txn_committed(db, updates, message, create_reflog, committer, objects).map(drop)
}

/// [`txn`], with what its commit says.
fn txn_committed(
    db: &mut RefDb,
    updates: &[Update],
    message: &str,
    create_reflog: bool,
    committer: &Signature,
    objects: &PoolObjects<'_>,
) -> Result<Committed, Refused> {
    let messages = vec![message; updates.len()];
    txn_logged(db, updates, &messages, create_reflog, committer, objects)
}

/// [`txn_committed`] where each update logs its own message (`messages[i]` for
/// `updates[i]`).
pub(crate) fn txn_logged(
    db: &mut RefDb,
    updates: &[Update],
    messages: &[&str],
    create_reflog: bool,
    committer: &Signature,
    objects: &PoolObjects<'_>,
) -> Result<Committed, Refused> {
    parser_check(updates)?;
    let upd: Vec<_> = updates
        .iter()
        .zip(messages)
        .map(|(u, m)| u.to_ref_update(m, create_reflog))
        .collect();
    db.transaction(&upd, committer, objects)
        .map_err(|e| our_refusal(&e))
}

/// `update-ref --batch-updates` on `db`: the library has no batch mode, so each update goes
/// through update-ref's parser check and the library's checks on its own (prepared and
/// dropped: nothing is listed), and those that pass are one transaction. The rejected
/// updates (index and refusal), or the refusal of the transaction of the others.
///
/// git writes one table for the whole batch. A record too large for the first block of an
/// update's own table (after the file header) may fit a later block of the batch's, so such
/// an update is rejected only when the batch's table cannot be written with it.
pub(crate) fn batch(
    db: &mut RefDb,
    updates: &[Update],
    message: &str,
    create_reflog: bool,
    committer: &Signature,
    objects: &PoolObjects<'_>,
) -> Result<Vec<(usize, Refused)>, Refused> {
    let mut rejected = Vec::new();
    let (mut passed, mut too_large) = (Vec::new(), Vec::new());
    for (i, u) in updates.iter().enumerate() {
        let checked = parser_check(std::slice::from_ref(u)).map_err(|r| (false, r));
        let checked = checked.and_then(|()| {
            let upd = u.to_ref_update(message, create_reflog);
            db.prepare(std::slice::from_ref(&upd), committer, objects)
                .map(drop)
                .map_err(|e| {
                    (
                        e.kind() == reftable::ErrorKind::EntryTooBig,
                        our_refusal(&e),
                    )
                })
        });
        match checked {
            Ok(()) => passed.push(i),
            Err((big, r)) => {
                if big {
                    too_large.push(i);
                }
                rejected.push((i, r));
            }
        }
    }
    // Records too large for their update's own table: the batch's table may hold them.
    if !too_large.is_empty() {
        let mut all = [passed.as_slice(), too_large.as_slice()].concat();
        all.sort_unstable();
        let upd: Vec<_> = all
            .iter()
            .map(|&i| updates[i].to_ref_update(message, create_reflog))
            .collect();
        if db.prepare(&upd, committer, objects).is_ok() {
            rejected.retain(|(i, _)| !too_large.contains(i));
            passed = all;
        }
    }
    let kept: Vec<Update> = passed.iter().map(|&i| updates[i].clone()).collect();
    txn(db, &kept, message, create_reflog, committer, objects)?;
    Ok(rejected)
}

/// The update `git symbolic-ref name target` makes: `name` becomes a symref to `target`,
/// without following `name` (refs.c `refs_update_symref`: `REF_NO_DEREF`, no old value).
pub(crate) fn symbolic_ref_update(name: &str, target: &str) -> Update {
    Update {
        refname: name.to_string(),
        new: Some(Value::Symref(target.to_string())),
        old: None,
        no_deref: true,
    }
}

/// `git symbolic-ref`'s own checks before its update: `HEAD` only into `refs/`, a target
/// with a valid name (builtin/symbolic-ref.c).
pub(crate) fn symbolic_ref_check(name: &str, target: &str) -> Result<(), Refused> {
    if name == "HEAD" && !target.starts_with("refs/") {
        return Err(refused(
            ErrClass::BadName,
            "HEAD outside refs/ (git symbolic-ref)",
        ));
    }
    if !is_valid_refname(target.as_bytes(), true) {
        return Err(refused(
            ErrClass::BadName,
            "invalid target (git symbolic-ref)",
        ));
    }
    // git checks the name only for safety (known defect symbolic-ref-writes-invalid-name);
    // our library refuses a name git's format refuses.
    if !is_valid_refname(name.as_bytes(), true) {
        return Err(refused(
            ErrClass::BadName,
            "invalid ref name (git symbolic-ref)",
        ));
    }
    Ok(())
}

/// `git symbolic-ref [-m message] name target`: its checks, then its update.
pub(crate) fn symbolic_ref(
    db: &mut RefDb,
    name: &str,
    target: &str,
    message: &str,
    committer: &Signature,
    objects: &PoolObjects<'_>,
) -> Result<(), Refused> {
    symbolic_ref_check(name, target)?;
    let update = symbolic_ref_update(name, target);
    txn(db, &[update], message, false, committer, objects)
}

/// update-ref's parser: it refuses invalid names (refs and symref targets) before the ref
/// layer sees them.
pub(crate) fn parser_check(updates: &[Update]) -> Result<(), Refused> {
    let names_ok = updates.iter().all(|u| {
        is_valid_refname(u.refname.as_bytes(), true)
            && [&u.new, &u.old].into_iter().flatten().all(|v| match v {
                Value::Symref(t) => is_valid_refname(t.as_bytes(), true),
                _ => true,
            })
    });
    if !names_ok {
        // update-ref's parser refuses invalid names before the ref layer.
        return Err(refused(
            ErrClass::BadName,
            "invalid name (update-ref's parser)",
        ));
    }
    Ok(())
}

/// What `git checkout -l --orphan <branch>` does once its checks passed.
pub(crate) struct OrphanPlan {
    /// The reflog message of `HEAD`'s update.
    pub message: String,
    /// It switches from `HEAD`'s commit (and may create the branch's reflog), rather than
    /// from an unborn branch (which only moves `HEAD`).
    pub switches: bool,
}

/// `git checkout -l --orphan <branch>`'s own checks, in its order (a valid branch name, no
/// such branch, then `HEAD`: unborn, or naming a commit), and what it does then. From an
/// unborn branch (`HEAD` a symref to no ref) it only points `HEAD` at the new branch, with
/// the message `checkout -b`; from a commit it creates the reflog where the config would
/// not, and logs `checkout: moving from <old> to <branch>`, `<old>` the branch `HEAD`
/// points at, or the commit it names (a tag peeled) when it is detached or points outside
/// `refs/heads/`.
pub(crate) fn orphan_check(
    db: &RefDb,
    branch: &str,
    objects: &PoolObjects<'_>,
) -> Result<OrphanPlan, Refused> {
    let refname = format!("refs/heads/{branch}");
    if branch == "HEAD" || branch.starts_with('-') || !is_valid_refname(refname.as_bytes(), true) {
        return Err(refused(
            ErrClass::BadName,
            "not a valid branch name (git checkout)",
        ));
    }
    if db.resolve(refname.as_bytes()).ok().flatten().is_some() {
        return Err(refused(
            ErrClass::BranchExists,
            "a branch already exists (git checkout)",
        ));
    }
    let unborn = || {
        refused(
            ErrClass::NoBranch,
            "on a branch yet to be born (git checkout)",
        )
    };
    let head_is_symref = matches!(
        db.read_ref(b"HEAD"),
        Ok(Some(reftable::RefRecord {
            value: RefValue::Symref(_),
            ..
        }))
    );
    let Some(id) = db.resolve(b"HEAD").ok().flatten() else {
        if head_is_symref {
            return Ok(OrphanPlan {
                message: "checkout -b".into(),
                switches: false,
            });
        }
        return Err(unborn());
    };
    let commit = match objects.kind(&id) {
        ObjectKind::Commit => id,
        ObjectKind::Tag { peeled } if objects.kind(&peeled) == ObjectKind::Commit => peeled,
        _ => return Err(unborn()),
    };
    let mut end = b"HEAD".to_vec();
    for _ in 0..SYMREF_READS {
        match db.read_ref(&end) {
            Ok(Some(reftable::RefRecord {
                value: RefValue::Symref(t),
                ..
            })) => end = t,
            _ => break,
        }
    }
    let old = match end.strip_prefix(b"refs/heads/") {
        Some(b) if end != b"HEAD" => String::from_utf8_lossy(b).into_owned(),
        _ => commit.to_string(),
    };
    Ok(OrphanPlan {
        message: format!("checkout: moving from {old} to {branch}"),
        switches: true,
    })
}

/// `git checkout -l --orphan <branch>` past its checks (`plan`): when it switches from a
/// commit under `core.logAllRefUpdates=false` (which would not create it) the branch's
/// reflog is created empty; then `HEAD` points at the branch.
pub(crate) fn orphan(
    db: &mut RefDb,
    branch: &str,
    plan: &OrphanPlan,
    committer: &Signature,
    objects: &PoolObjects<'_>,
) -> Result<(), Refused> {
    let refname = format!("refs/heads/{branch}");
    let message = plan.message.as_str();
    if plan.switches && db.options().log_refs == LogRefs::None {
        db.create_reflog(refname.as_bytes())
            .map_err(|e| our_refusal(&e))?;
    }
    let update = symbolic_ref_update("HEAD", &refname);
    txn(db, &[update], message, false, committer, objects)
}

/// The full names of a branch rename or copy.
#[derive(Clone, Copy)]
pub(crate) struct BranchNames<'a> {
    pub old: &'a str,
    pub new: &'a str,
}

/// `git branch -m/-M/-c/-C`: the command's own checks (in its order), the library's rename
/// or copy, and for a rename of `HEAD`'s branch the symref update of `HEAD` that follows it.
pub(crate) fn branch(
    db: &mut RefDb,
    names: BranchNames<'_>,
    copy: bool,
    force: bool,
    message: &str,
    committer: &Signature,
    objects: &PoolObjects<'_>,
) -> Result<(), Refused> {
    let exists = |db: &RefDb, n: &str| db.resolve(n.as_bytes()).ok().flatten().is_some();
    if !exists(db, names.old) {
        return Err(refused(ErrClass::NoBranch, "no branch named (git branch)"));
    }
    if !is_valid_refname(names.new.as_bytes(), true) {
        return Err(refused(
            ErrClass::BadName,
            "not a valid branch name (git branch)",
        ));
    }
    if exists(db, names.new) && !force {
        return Err(refused(
            ErrClass::BranchExists,
            "a branch already exists (git branch)",
        ));
    }
    let head_follows = !copy
        && matches!(
            db.read_ref(b"HEAD"),
            Ok(Some(reftable::RefRecord { value: RefValue::Symref(ref t), .. })) if t == names.old.as_bytes()
        );
    let (old, new) = (names.old.as_bytes(), names.new.as_bytes());
    let r = if copy {
        db.copy_ref(old, new, message.as_bytes(), committer)
    } else {
        db.rename_ref(old, new, message.as_bytes(), committer)
    };
    r.map_err(|e| our_refusal(&e))?;
    if head_follows {
        let u = RefUpdate::symref_update("HEAD", names.new, Expected::Any)
            .no_deref()
            .message(message);
        db.transaction(&[u], committer, objects)
            .map_err(|e| our_refusal(&e))?;
    }
    Ok(())
}

/// `git refs rename [--message=<message>] <old> <new>` (full names): the command's checks
/// in its order (both names' format, `old` resolves, `new` does not), then the library's
/// rename. `HEAD` stays as it is, even when it named `old`.
pub(crate) fn refs_rename(
    db: &mut RefDb,
    old: &str,
    new: &str,
    message: &str,
    committer: &Signature,
) -> Result<(), Refused> {
    if [old, new]
        .iter()
        .any(|n| !is_valid_refname(n.as_bytes(), false))
    {
        return Err(refused(
            ErrClass::BadName,
            "invalid ref format (git refs rename)",
        ));
    }
    let exists = |n: &str| db.resolve(n.as_bytes()).ok().flatten().is_some();
    if !exists(old) {
        return Err(refused(
            ErrClass::NoBranch,
            "reference does not exist (git refs rename)",
        ));
    }
    if exists(new) {
        return Err(refused(
            ErrClass::BranchExists,
            "reference already exists (git refs rename)",
        ));
    }
    db.rename_ref(
        old.as_bytes(),
        new.as_bytes(),
        message.as_bytes(),
        committer,
    )
    .map(drop)
    .map_err(|e| our_refusal(&e))
}

/// `git reflog expire --expire=… --expire-unreachable=now|never` on the reflog `target`
/// (`unreachable`: now, reachability as [`crate::cases::unreachable`] has it, from the
/// refs `db` holds). With `update_ref` (`--updateref`, the objects to peel with) the ref
/// takes the newest kept entry's new id.
pub(crate) fn expire_log(
    db: &mut RefDb,
    target: &str,
    cutoff: u64,
    unreachable: bool,
    update_ref: Option<&PoolObjects<'_>>,
    pool: &Pool,
) -> reftable::Result<()> {
    let reach = if unreachable {
        Some(reach(pool, target, &direct_ids(db)?))
    } else {
        None
    };
    let prune = &mut |l: &reftable::LogRecord| {
        l.update().is_some_and(|u| {
            u.committer.time < cutoff || reach.is_some_and(|r| r.prunes(pool, &u.old_id, &u.new_id))
        })
    };
    match update_ref {
        Some(objects) => db.expire_reflog_update_ref(target.as_bytes(), prune, false, objects),
        None => db.expire_reflog(target.as_bytes(), prune, false, false),
    }
    .map(drop)
}

/// Every live ref of `db` with its direct id (`None` for a symref).
fn direct_ids(db: &RefDb) -> reftable::Result<Vec<(String, Option<ObjectId>)>> {
    let mut out = Vec::new();
    let mut refs = db.refs()?;
    while let Some(r) = refs.next_record()? {
        let id = match &r.value {
            RefValue::Object(id) | RefValue::Peeled { object: id, .. } => Some(*id),
            RefValue::Symref(_) => None,
            RefValue::Deletion => continue,
        };
        out.push((String::from_utf8_lossy(&r.refname).into_owned(), id));
    }
    Ok(out)
}

/// `git reflog delete [--rewrite] [--updateref] target@{index}` (0 = newest).
pub(crate) fn delete_log_entry(
    db: &mut RefDb,
    target: &str,
    index: usize,
    rewrite: bool,
    update_ref: Option<&PoolObjects<'_>>,
) -> reftable::Result<()> {
    let target_ui = db
        .reflog(target.as_bytes())
        .ok()
        .and_then(|mut e| e.nth(index))
        .and_then(|l| l.ok())
        .map(|l| l.update_index);
    let prune = &mut |l: &reftable::LogRecord| Some(l.update_index) == target_ui;
    match update_ref {
        Some(objects) => db.expire_reflog_update_ref(target.as_bytes(), prune, rewrite, objects),
        None => db.expire_reflog(target.as_bytes(), prune, rewrite, false),
    }
    .map(drop)
}

/// git's `dwim_log` for a full ref name: the ref must resolve, and the reflog is its own
/// or, failing that, the one of the ref it resolves to.
pub(crate) fn dwim_log(db: &RefDb, name: &str) -> Option<String> {
    db.resolve(name.as_bytes()).ok()??;
    if db.reflog_exists(name.as_bytes()).ok()? {
        return Some(name.to_string());
    }
    let mut n = name.to_string();
    for _ in 0..SYMREF_READS {
        match db.read_ref(n.as_bytes()).ok()??.value {
            RefValue::Symref(t) => n = String::from_utf8_lossy(&t).into_owned(),
            _ => break,
        }
    }
    (n != name && db.reflog_exists(n.as_bytes()).ok()?).then_some(n)
}
