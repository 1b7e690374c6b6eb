//! Transactions in two phases, as git's ref backends run them: [`RefDb::prepare`] locks the
//! stack, checks every update and writes the records into a new table, unlisted;
//! [`PreparedTransaction::commit`] lists it in `tables.list`. Dropping a prepared transaction
//! deletes the table and releases the lock.
//!
//! Checks, in git 2.47's order (later gits report some faults in another order; the set of
//! refused transactions is the same):
//!
//! 1. names: every ref name and symref target valid, no pseudorefs;
//! 2. duplicates among the named refs;
//! 3. per update, in order, with the updates symrefs and `HEAD` add appended as they are
//!    found: objects (missing, non-commit on a branch), `HEAD` following its branch, the
//!    current value (missing but expected, D/F conflict when created), symrefs split onto
//!    their referent, and the expected old value.

use crate::stack::{Committed, Outdated};
use std::collections::HashMap;
use std::rc::Rc;

use crate::codec::record::{LogRecord, LogUpdate, LogValue, RefRecord, RefValue};
use crate::error::{Error, ErrorKind, RefState, Refusal, Result};
use crate::hash::{HashId, ObjectId};
use crate::merged::MergedIter;
use crate::refname::{
    is_pseudoref, is_safe_refname, is_valid_refname, parse_worktree_ref, WorktreeRef,
};
use crate::stack::{Addition, Stack, TableWriter};
use crate::target::Target;

use super::objects::{ObjectKind, ObjectLookup};
use super::read::{SortedNames, View};
use super::reflog::normalize_message;
use super::update::{Expected, NewValue, RefUpdate};
use super::{show, LogRefs, RefDb, RefDbOptions};
use crate::signature::{Signature, TzOffset};

/// One update being prepared: git's `struct ref_update` with its flags spelled out.
#[derive(Clone, Debug)]
pub(crate) struct Work {
    refname: Vec<u8>,
    /// The name the caller gave, when it differs (updates split off a symref or `HEAD`).
    original: Option<Vec<u8>>,
    new: Option<Target>,
    old: Option<Target>,
    no_deref: bool,
    log_only: bool,
    via_head: bool,
    create_reflog: bool,
    /// Normalized; shared by the updates of one message (a big transaction usually has one).
    message: Rc<[u8]>,
    /// The ref is currently a symref.
    is_symref: bool,
}

/// Normalized messages, each kept once: consecutive updates with the same message share it.
#[derive(Default)]
struct Messages {
    last: Option<(Vec<u8>, Rc<[u8]>)>,
}

impl Messages {
    fn normalized(&mut self, raw: &[u8]) -> Rc<[u8]> {
        match &self.last {
            Some((r, n)) if r.as_slice() == raw => n.clone(),
            _ => {
                let n: Rc<[u8]> = normalize_message(raw).into();
                self.last = Some((raw.to_vec(), n.clone()));
                n
            }
        }
    }
}

impl Work {
    fn from_update(u: RefUpdate, null: ObjectId, messages: &mut Messages) -> Work {
        // Inside the planner the null id stands for "deleted" (as a new value) and "must
        // not exist" (as an old one), as in git.
        let new = u.new.map(|v| match v {
            NewValue::Set(t) => t,
            NewValue::Delete => Target::Object(null),
        });
        let old = match u.expected {
            Expected::Any => None,
            Expected::Absent => Some(Target::Object(null)),
            Expected::Is(t) => Some(t),
        };
        Work {
            message: messages.normalized(&u.message),
            refname: u.refname,
            original: None,
            new,
            old,
            no_deref: u.no_deref,
            log_only: false,
            via_head: false,
            create_reflog: u.create_reflog,
            is_symref: false,
        }
    }

    /// The name the caller gave.
    fn original(&self) -> &[u8] {
        self.original.as_deref().unwrap_or(&self.refname)
    }

    fn new_is_null(&self) -> bool {
        matches!(&self.new, Some(Target::Object(id)) if id.is_null())
    }

    fn expects_existing(&self) -> bool {
        match &self.old {
            Some(Target::Object(id)) => !id.is_null(),
            Some(Target::Symref(_)) => true,
            None => false,
        }
    }

    fn expected_state(&self) -> RefState {
        match &self.old {
            Some(Target::Object(id)) if id.is_null() => RefState::Absent,
            Some(t) => RefState::Is(t.clone()),
            None => RefState::Absent,
        }
    }
}

fn oid_state(id: ObjectId) -> RefState {
    if id.is_null() {
        RefState::Absent
    } else {
        RefState::Is(Target::Object(id))
    }
}

/// A transaction whose checks passed, holding the stack's lock until it is committed or
/// dropped. Its table is already written (not yet listed in `tables.list`, so no reader
/// sees it): records went to the writer as they were produced, never all held at once.
#[derive(Debug)]
pub struct PreparedTransaction<'a> {
    addition: Addition<'a>,
    update_index: u64,
    refs: usize,
    logs: usize,
}

impl PreparedTransaction<'_> {
    /// The update index the transaction's table gets.
    pub fn update_index(&self) -> u64 {
        self.update_index
    }

    /// How many ref records it writes (tombstones for deletions).
    pub fn ref_records(&self) -> usize {
        self.refs
    }

    /// How many log records it writes (entries and tombstones).
    pub fn log_records(&self) -> usize {
        self.logs
    }

    /// Whether it writes nothing (every update a no-op or a check): committing adds no
    /// table.
    pub fn is_empty(&self) -> bool {
        self.refs == 0 && self.logs == 0
    }

    /// Publish the table in `tables.list` (auto-compacting afterwards unless the stack's
    /// options say not to).
    pub fn commit(self) -> Result<Committed> {
        self.addition.commit()
    }
}

/// A name, symref targets and object ids of one update, before anything is locked.
fn check_names(u: &RefUpdate, hash: HashId) -> Result<()> {
    let needs_format = matches!(&u.new, Some(NewValue::Set(_)));
    let ok = if needs_format {
        is_valid_refname(&u.refname, true)
    } else {
        is_safe_refname(&u.refname)
    };
    let bad = |why: &'static str, msg: String| {
        Err(Error::refused(
            Refusal::BadName {
                name: u.refname.clone(),
                why,
            },
            msg,
        ))
    };
    if !ok {
        return bad(
            "not a valid ref name",
            format!(
                "refusing to update ref with bad name '{}'",
                show(&u.refname)
            ),
        );
    }
    if is_pseudoref(&u.refname) {
        return bad(
            "a pseudoref",
            format!("refusing to update pseudoref '{}'", show(&u.refname)),
        );
    }
    let targets = [
        match &u.new {
            Some(NewValue::Set(Target::Symref(t))) => Some(t),
            _ => None,
        },
        match &u.expected {
            Expected::Is(Target::Symref(t)) => Some(t),
            _ => None,
        },
    ];
    for t in targets.into_iter().flatten() {
        if !is_valid_refname(t, true) {
            return Err(Error::refused(
                Refusal::BadName {
                    name: t.clone(),
                    why: "not a valid symref target",
                },
                format!("invalid symref target '{}'", show(t)),
            ));
        }
    }
    let ids = [
        match &u.new {
            Some(NewValue::Set(Target::Object(id))) => Some(id),
            _ => None,
        },
        match &u.expected {
            Expected::Is(Target::Object(id)) => Some(id),
            _ => None,
        },
    ];
    if ids.into_iter().flatten().any(|id| id.hash() != hash) {
        return Err(Error::api("object id of the wrong hash"));
    }
    Ok(())
}

/// Refuse a write in a linked worktree through `main-worktree/<name>` or
/// `worktrees/<id>/<name>`. git's reftable backend routes such an update to the right stack
/// but writes the record under the prefixed name, where no read finds it (2.45 to at least
/// 2.55; its files backend writes `<name>`); git's own commands write another worktree's
/// refs through that worktree's ref store, as a caller of this crate does by opening it.
pub(crate) fn writable_in_worktree(name: &[u8]) -> Result<()> {
    match parse_worktree_ref(name) {
        WorktreeRef::Current(_) | WorktreeRef::Shared(_) => Ok(()),
        WorktreeRef::Main(_) | WorktreeRef::Other { .. } => Err(prefixed_refusal(name)),
    }
}

/// The refusal of a write through another worktree's name.
pub(crate) fn prefixed_refusal(name: &[u8]) -> Error {
    Error::refused(
        Refusal::BadName {
            name: name.to_vec(),
            why: "another worktree's ref: write it through that worktree's store",
        },
        format!(
            "refusing to update '{}' through another worktree's name",
            show(name)
        ),
    )
}

/// Object lookups of one transaction, each id asked once.
struct Objects<'o> {
    lookup: &'o dyn ObjectLookup,
    seen: HashMap<ObjectId, ObjectKind>,
}

impl Objects<'_> {
    fn kind(&mut self, id: &ObjectId) -> Result<ObjectKind> {
        if let Some(k) = self.seen.get(id) {
            return Ok(*k);
        }
        let k = self
            .lookup
            .lookup(id)
            .map_err(|e| Error::wrap(ErrorKind::ObjectLookup, format!("looking up {id}"), e))?;
        self.seen.insert(*id, k);
        Ok(k)
    }
}

/// The checks of one transaction, over the stack as loaded under the lock.
struct Planner<'v, 'o> {
    view: View<'v>,
    null: ObjectId,
    protect_dangling: bool,
    /// Whether log-only updates have their old value checked (git before 2.51.1).
    check_log_only_old: bool,
    objects: Objects<'o>,
    work: Vec<Work>,
    /// Every ref the transaction touches, as indexes into `work` sorted by name (for
    /// duplicate and D/F checks; names are not copied).
    affected: Vec<usize>,
    /// (index into `work`, current value) of the updates that write something.
    queued: Vec<(usize, ObjectId)>,
    /// The D/F check's scan of `name/`, re-seeked for every name checked.
    df_scan: Option<MergedIter<RefRecord>>,
}

/// The names of a transaction's updates in name order, for the D/F check.
struct Affected<'w> {
    work: &'w [Work],
    order: &'w [usize],
}

impl SortedNames for Affected<'_> {
    fn len(&self) -> usize {
        self.order.len()
    }

    fn name(&self, i: usize) -> &[u8] {
        &self.work[self.order[i]].refname
    }
}

impl Planner<'_, '_> {
    fn affected(&self) -> Affected<'_> {
        Affected {
            work: &self.work,
            order: &self.affected,
        }
    }

    /// Whether an update of `name` is part of the transaction.
    fn is_affected(&self, name: &[u8]) -> bool {
        self.affected().contains(name)
    }

    /// Add the last update of `work` (one the planner appended) to the affected names.
    fn affect_last(&mut self) {
        let last = self.work.len() - 1;
        let name = &self.work[last].refname;
        let work = &self.work;
        if let Err(at) = self
            .affected
            .binary_search_by(|&x| work[x].refname.as_slice().cmp(name))
        {
            self.affected.insert(at, last);
        }
    }

    /// Sort the caller's updates by name into `affected`, refusing a name given twice.
    fn duplicates(&mut self) -> Result<()> {
        let work = &self.work;
        let mut order: Vec<usize> = (0..work.len()).collect();
        order.sort_by(|&a, &b| work[a].refname.cmp(&work[b].refname));
        if let Some(d) = order
            .windows(2)
            .find(|w| work[w[0]].refname == work[w[1]].refname)
        {
            let name = &work[d[0]].refname;
            return Err(Error::refused(
                Refusal::Duplicate {
                    name: name.clone(),
                    via: None,
                },
                format!("multiple updates for ref '{}' not allowed", show(name)),
            ));
        }
        self.affected = order;
        Ok(())
    }

    fn check_object(&mut self, u: &Work) -> Result<()> {
        let Some(Target::Object(id)) = &u.new else {
            return Ok(());
        };
        if id.is_null() || u.log_only {
            return Ok(());
        }
        match self.objects.kind(id)? {
            ObjectKind::Missing => Err(Error::refused(
                Refusal::MissingObject {
                    name: u.refname.clone(),
                    id: *id,
                },
                format!(
                    "trying to write ref '{}' with nonexistent object {id}",
                    show(&u.refname)
                ),
            )),
            ObjectKind::Commit => Ok(()),
            _ if u.refname.starts_with(b"refs/heads/") || u.refname == b"HEAD" => {
                Err(Error::refused(
                    Refusal::NonCommit {
                        name: u.refname.clone(),
                        id: *id,
                    },
                    format!(
                        "trying to write non-commit object {id} to branch '{}'",
                        show(&u.refname)
                    ),
                ))
            }
            _ => Ok(()),
        }
    }

    /// Updating the branch `HEAD` points to also logs to `HEAD`.
    fn follow_head(&mut self, u: &Work) -> Result<()> {
        if self.is_affected(b"HEAD") {
            return Err(Error::refused(
                Refusal::Duplicate {
                    name: b"HEAD".to_vec(),
                    via: Some(u.refname.clone()),
                },
                format!(
                    "multiple updates for 'HEAD' (including one via its referent '{}') are not allowed",
                    show(&u.refname)
                ),
            ));
        }
        let null = self.null;
        let as_oid = |t: &Option<Target>| {
            t.as_ref().map(|t| match t {
                Target::Object(id) => Target::Object(*id),
                Target::Symref(_) => Target::Object(null),
            })
        };
        self.work.push(Work {
            refname: b"HEAD".to_vec(),
            original: Some(u.original().to_vec()),
            new: as_oid(&u.new),
            old: as_oid(&u.old),
            no_deref: true,
            log_only: true,
            via_head: u.via_head,
            create_reflog: u.create_reflog,
            message: u.message.clone(),
            is_symref: false,
        });
        self.affect_last();
        Ok(())
    }

    /// Split an update of symref `u` (pointing at `target`) onto the target; `u` itself only
    /// logs.
    fn split_symref(&mut self, i: usize, target: &[u8]) -> Result<()> {
        if self.view.worktree.is_some() {
            writable_in_worktree(target)?;
        }
        let u = self.work[i].clone();
        self.work.push(Work {
            refname: target.to_vec(),
            original: Some(u.original().to_vec()),
            new: u.new.clone(),
            old: u.old.clone(),
            no_deref: u.no_deref,
            log_only: u.log_only,
            via_head: u.via_head || u.refname == b"HEAD",
            create_reflog: u.create_reflog,
            message: u.message.clone(),
            is_symref: false,
        });
        let w = &mut self.work[i];
        w.log_only = true;
        w.no_deref = true;
        // The old value is checked on the referent; an old *target* stays.
        if matches!(w.old, Some(Target::Object(_))) {
            w.old = None;
        }
        if self.is_affected(target) {
            return Err(Error::refused(
                Refusal::Duplicate {
                    name: target.to_vec(),
                    via: Some(u.refname.clone()),
                },
                format!(
                    "multiple updates for '{}' (including one via symref '{}') are not allowed",
                    show(target),
                    show(&u.refname)
                ),
            ));
        }
        self.affect_last();
        Ok(())
    }

    /// The expected old value of `work[i]` against what the ref is.
    fn check_old(&self, i: usize, cur_oid: ObjectId, referent: &[u8]) -> Result<()> {
        let w = &self.work[i];
        let lock_err = |r: Refusal, what: String| {
            Err(Error::refused(
                r,
                format!("cannot lock ref '{}': {what}", show(&w.refname)),
            ))
        };
        match &w.old {
            Some(Target::Symref(expected)) if !w.is_symref => lock_err(
                Refusal::OldValue {
                    name: w.original().to_vec(),
                    expected: RefState::Is(Target::Symref(expected.clone())),
                    actual: oid_state(cur_oid),
                },
                format!(
                    "expected symref with target '{}': but is a regular ref",
                    show(expected)
                ),
            ),
            Some(Target::Symref(expected)) if referent != expected.as_slice() => lock_err(
                Refusal::OldValue {
                    name: w.original().to_vec(),
                    expected: RefState::Is(Target::Symref(expected.clone())),
                    actual: RefState::Is(Target::Symref(referent.to_vec())),
                },
                format!(
                    "is at '{}' but expected '{}'",
                    show(referent),
                    show(expected)
                ),
            ),
            Some(Target::Object(expected))
                if self.protect_dangling
                    && !w.log_only
                    && w.no_deref
                    && w.is_symref
                    && expected.is_null()
                    && cur_oid.is_null() =>
            {
                lock_err(
                    Refusal::DanglingSymref {
                        name: w.original().to_vec(),
                    },
                    "dangling symref already exists".to_string(),
                )
            }
            Some(Target::Object(_)) if w.log_only && !self.check_log_only_old => Ok(()),
            Some(Target::Object(expected)) if *expected != cur_oid => {
                let msg = if expected.is_null() {
                    "reference already exists".to_string()
                } else if cur_oid.is_null() {
                    format!("reference is missing but expected {expected}")
                } else {
                    format!("is at {cur_oid} but expected {expected}")
                };
                lock_err(
                    Refusal::OldValue {
                        name: w.original().to_vec(),
                        expected: w.expected_state(),
                        actual: oid_state(cur_oid),
                    },
                    msg,
                )
            }
            _ => Ok(()),
        }
    }

    /// Check `work[i]` and queue it if it writes something; may append updates.
    fn plan(&mut self, i: usize, head_target: Option<&[u8]>) -> Result<()> {
        let u = self.work[i].clone();
        self.check_object(&u)?;
        if head_target == Some(u.refname.as_slice())
            && !u.log_only
            && !u.via_head
            && !defect!(DroppedReflogEntry)
        {
            self.follow_head(&u)?;
        }
        let Some(current) = self.view.raw_ref(&u.refname)? else {
            if u.expects_existing() && (self.check_log_only_old || !u.log_only) {
                return Err(Error::refused(
                    Refusal::OldValue {
                        name: u.original().to_vec(),
                        expected: u.expected_state(),
                        actual: RefState::Absent,
                    },
                    format!(
                        "cannot lock ref '{}': unable to resolve reference '{}'",
                        show(u.original()),
                        show(&u.refname)
                    ),
                ));
            }
            let mut scan = self.df_scan.take();
            let r = self
                .view
                .check_available(&u.refname, &self.affected(), &mut scan);
            self.df_scan = scan;
            r?;
            if u.new.is_some() && !u.new_is_null() {
                self.queued.push((i, self.null));
            }
            return Ok(());
        };
        let mut cur_oid = current.value_id().copied().unwrap_or(self.null);
        let mut referent = Vec::new();
        if let RefValue::Symref(t) = &current.value {
            self.work[i].is_symref = true;
            referent = t.clone();
            let resolved = self.view.resolve_ref(&u.refname, false)?;
            cur_oid = resolved.unwrap_or(self.null);
            if !u.no_deref {
                self.split_symref(i, t)?;
            } else if u.old.is_some() && resolved.is_none() {
                return Err(Error::refused(
                    Refusal::OldValue {
                        name: u.original().to_vec(),
                        expected: u.expected_state(),
                        actual: RefState::Unresolvable,
                    },
                    format!(
                        "cannot lock ref '{}': error reading reference",
                        show(&u.refname)
                    ),
                ));
            }
        }
        self.check_old(i, cur_oid, &referent)?;
        let w = &self.work[i];
        // A symref update carries no object id: git compares the null id with the current
        // value, so it always writes unless the ref resolves to nothing.
        let changes = match &w.new {
            Some(Target::Object(id)) => *id != cur_oid,
            Some(Target::Symref(_)) => !cur_oid.is_null(),
            None => false,
        };
        if w.is_symref || w.log_only || changes {
            self.queued.push((i, cur_oid));
        }
        Ok(())
    }

    /// Put the queued updates in name order and decide, with the stack's view, what each
    /// writes to the log section: everything [`write_records`] needs without the view, so
    /// the table can be written while the addition is borrowed mutably.
    fn plan_logs(&mut self, log_refs: LogRefs) -> Result<Output> {
        let mut queued = std::mem::take(&mut self.queued);
        let work = &self.work;
        queued.sort_by(|a, b| work[a.0].refname.cmp(&work[b.0].refname));
        let mut logs = Vec::with_capacity(queued.len());
        let mut extra = HashMap::new();
        for (q, &(i, _)) in queued.iter().enumerate() {
            let u = &self.work[i];
            let plan = if u.new.is_some() && !u.is_symref && u.new_is_null() {
                // Deleting a ref deletes its reflog, entry by entry.
                let entries: Vec<u64> = self
                    .view
                    .live_logs(&u.refname)?
                    .iter()
                    .map(|l| l.update_index)
                    .collect();
                extra.insert(q, LogExtra::Tombstones(entries));
                true
            } else if u.new.is_some()
                && (u.create_reflog || self.view.should_write_log(log_refs, &u.refname)?)
            {
                match &u.new {
                    Some(Target::Object(_)) => true,
                    Some(Target::Symref(t)) => match self.view.resolve_ref(t, true)? {
                        Some(id) => {
                            extra.insert(q, LogExtra::Resolved(id));
                            true
                        }
                        None => false,
                    },
                    None => false,
                }
            } else {
                false
            };
            logs.push(plan);
        }
        Ok(Output {
            queued,
            logs,
            extra,
        })
    }
}

/// What a transaction writes, decided: the queued updates (index into the planner's work,
/// current value) in name order, whether each writes to the log section, and the rare
/// details (a symref's resolved new id, the entries a deletion removes).
struct Output {
    queued: Vec<(usize, ObjectId)>,
    logs: Vec<bool>,
    extra: HashMap<usize, LogExtra>,
}

enum LogExtra {
    Resolved(ObjectId),
    /// Update indexes of the live entries of a deleted ref, newest first.
    Tombstones(Vec<u64>),
}

/// Everything a transaction's table is made of, besides the decided [`Output`].
struct TableInput<'a> {
    work: &'a [Work],
    null: ObjectId,
    update_index: u64,
    committer: &'a Signature,
    max_message: usize,
    /// Which refs this table holds (in a worktree, those of one of its two stacks).
    keep: &'a dyn Fn(&[u8]) -> bool,
}

/// Write the records of `out` into `w` as they are produced (refs, then logs, both in key
/// order), holding one record at a time; returns how many refs and logs were written.
fn write_records(
    w: &mut TableWriter,
    input: &TableInput<'_>,
    out: &Output,
    objects: &mut Objects<'_>,
) -> Result<(usize, usize)> {
    let (work, update_index) = (input.work, input.update_index);
    w.set_limits(update_index, update_index)?;
    // One record of each kind, refilled for every update: no allocation per record.
    let mut rec = RefRecord::new(Vec::new(), update_index, RefValue::Deletion);
    let mut refs = 0;
    for &(i, _) in &out.queued {
        let u = &work[i];
        if u.log_only || !(input.keep)(&u.refname) {
            continue;
        }
        rec.value = match &u.new {
            Some(Target::Symref(t)) => RefValue::Symref(t.clone()),
            Some(Target::Object(id)) if id.is_null() => RefValue::Deletion,
            Some(Target::Object(id)) => match objects.kind(id)? {
                ObjectKind::Tag { peeled } => RefValue::Peeled {
                    object: *id,
                    peeled,
                },
                _ => RefValue::Object(*id),
            },
            None => continue,
        };
        rec.refname.clear();
        rec.refname.extend_from_slice(&u.refname);
        w.add_ref(&rec)?;
        refs += 1;
    }
    let mut committer = input.committer.clone();
    if defect!(LostTzSign) {
        committer.tz_offset = TzOffset::from_hhmm(committer.tz_offset.hhmm().abs());
    }
    let null = input.null;
    let mut tombstone = LogRecord {
        refname: Vec::new(),
        update_index,
        value: LogValue::Deletion,
    };
    let mut entry = LogRecord {
        refname: Vec::new(),
        update_index,
        value: LogValue::Update(LogUpdate {
            old_id: null,
            new_id: null,
            committer,
            message: Vec::new(),
        }),
    };
    let mut logs = 0;
    for (q, &(i, current)) in out.queued.iter().enumerate() {
        let u = &work[i];
        if !out.logs[q] || !(input.keep)(&u.refname) {
            continue;
        }
        let new_id = match (out.extra.get(&q), &u.new) {
            (Some(LogExtra::Tombstones(entries)), _) => {
                tombstone.refname.clear();
                tombstone.refname.extend_from_slice(&u.refname);
                for &update_index in entries {
                    tombstone.update_index = update_index;
                    w.add_log(&tombstone)?;
                    logs += 1;
                }
                continue;
            }
            (Some(LogExtra::Resolved(id)), _) => *id,
            (None, Some(Target::Object(id))) => *id,
            (None, _) => continue,
        };
        entry.refname.clear();
        entry.refname.extend_from_slice(&u.refname);
        let LogValue::Update(e) = &mut entry.value else {
            unreachable!("built as an update above")
        };
        e.old_id = current;
        e.new_id = new_id;
        e.message.clear();
        e.message
            .extend_from_slice(&u.message[..u.message.len().min(input.max_message)]);
        if e.message.last() != Some(&b'\n') {
            e.message.push(b'\n');
        }
        w.add_log(&entry)?;
        logs += 1;
    }
    Ok((refs, logs))
}

/// The caller's updates as the planner's entries, each checked for its names first.
pub(crate) fn to_work(
    updates: impl IntoIterator<Item = RefUpdate>,
    hash: HashId,
) -> Result<Vec<Work>> {
    let null = ObjectId::null(hash);
    let mut messages = Messages::default();
    let mut work = Vec::new();
    for u in updates {
        check_names(&u, hash)?;
        work.push(Work::from_update(u, null, &mut messages));
    }
    Ok(work)
}

/// Lock `stack` for a transaction (reloading it when it changed), in git's words on failure.
pub(crate) fn lock_stack(stack: &mut Stack) -> Result<Addition<'_>> {
    stack.new_addition(Outdated::Reload).map_err(|e| {
        if e.kind() == ErrorKind::Lock {
            Error::new(ErrorKind::Lock, format!("cannot lock references: {e:#}"))
        } else {
            e
        }
    })
}

/// A transaction checked against a view and decided: the updates (the caller's and those
/// the planner added) and what each writes. Nothing is written yet.
pub(crate) struct Planned<'o> {
    work: Vec<Work>,
    out: Output,
    objects: Objects<'o>,
}

/// Check `work` against `view` with git's rules, in git's order, and decide the records.
pub(crate) fn plan_updates<'o>(
    view: View<'_>,
    work: Vec<Work>,
    opts: &RefDbOptions,
    objects: &'o dyn ObjectLookup,
) -> Result<Planned<'o>> {
    let mut p = Planner {
        view,
        null: ObjectId::null(view.hash),
        protect_dangling: opts.protect_dangling_symrefs,
        check_log_only_old: opts.check_log_only_old_values,
        objects: Objects {
            lookup: objects,
            seen: HashMap::new(),
        },
        work,
        affected: Vec::new(),
        queued: Vec::new(),
        df_scan: None,
    };
    p.duplicates()?;
    let head_target = match view.raw_ref(b"HEAD")? {
        Some(RefRecord {
            value: RefValue::Symref(t),
            ..
        }) => Some(t),
        _ => None,
    };
    let mut i = 0;
    while i < p.work.len() {
        p.plan(i, head_target.as_deref())?;
        i += 1;
    }
    let out = p.plan_logs(opts.log_refs)?;
    Ok(Planned {
        work: p.work,
        out,
        objects: p.objects,
    })
}

impl Planned<'_> {
    /// The names of the refs that get records, in name order.
    pub(crate) fn written_names(&self) -> impl Iterator<Item = &[u8]> {
        self.out
            .queued
            .iter()
            .map(|&(i, _)| self.work[i].refname.as_slice())
    }

    /// Write the records of the refs `keep` selects into `addition`'s table (none when it
    /// selects nothing), under the stack's next update index.
    pub(crate) fn write_table<'a>(
        &mut self,
        mut addition: Addition<'a>,
        committer: &Signature,
        keep: &dyn Fn(&[u8]) -> bool,
    ) -> Result<PreparedTransaction<'a>> {
        let next = addition.next_update_index();
        let update_index = planted!(WrongUpdateIndex, next, next + 1);
        let block_size = addition.stack().options().write.block_size;
        let max_message = (if block_size == 0 { 4096 } else { block_size } / 2) as usize;
        let input = TableInput {
            work: &self.work,
            null: ObjectId::null(addition.stack().options().hash()),
            update_index,
            committer,
            max_message,
            keep,
        };
        let mut written = (0, 0);
        if self.written_names().any(keep) {
            let (out, objects) = (&self.out, &mut self.objects);
            addition.add_table(|w, _| {
                written = write_records(w, &input, out, objects)?;
                Ok(())
            })?;
        }
        Ok(PreparedTransaction {
            addition,
            update_index,
            refs: written.0,
            logs: written.1,
        })
    }
}

impl RefDb {
    /// Check `updates` as one transaction with git's rules and write its table, holding
    /// `tables.list.lock` (the stack is reloaded under it when it changed). No reader sees
    /// anything until [`PreparedTransaction::commit`] lists the table.
    ///
    /// Errors: [`ErrorKind::Refname`] for invalid names, [`ErrorKind::NameConflict`] for
    /// D/F conflicts and duplicate updates, [`ErrorKind::OldValueMismatch`] when an old
    /// value does not match, [`ErrorKind::InvalidObject`] for missing objects or
    /// non-commits on branches; each with a [`Refusal`] saying which ref and
    /// what was expected and found ([`Error::refusal`]). [`ErrorKind::Lock`] when the stack
    /// is locked, [`ErrorKind::ObjectLookup`] when `objects` fails.
    pub fn prepare<'a>(
        &'a mut self,
        updates: &[RefUpdate],
        committer: &Signature,
        objects: &dyn ObjectLookup,
    ) -> Result<PreparedTransaction<'a>> {
        self.prepare_iter(updates.iter().cloned(), committer, objects)
    }

    /// [`RefDb::prepare`] taking the updates by value: a caller that generates them (say,
    /// a million creates) need not hold them twice. The transaction keeps one compact entry
    /// per update for its checks; the records themselves go to the table as they are made.
    pub fn prepare_iter<'a>(
        &'a mut self,
        updates: impl IntoIterator<Item = RefUpdate>,
        committer: &Signature,
        objects: &dyn ObjectLookup,
    ) -> Result<PreparedTransaction<'a>> {
        let work = to_work(updates, self.stack.options().hash())?;
        let opts = self.opts;
        let addition = lock_stack(&mut self.stack)?;
        let hash = opts.stack.hash();
        let view = View::of(addition.stack().merged(), hash);
        let mut planned = plan_updates(view, work, &opts, objects)?;
        planned.write_table(addition, committer, &|_| true)
    }

    /// [`RefDb::prepare`] and [`PreparedTransaction::commit`] in one: apply `updates`
    /// atomically as one table, or refuse them all.
    ///
    /// ```
    /// use reftable::refdb::{AssumeCommits, RefDb, RefDbOptions, RefUpdate};
    /// use reftable::{Signature, TzOffset};
    /// use reftable::{ErrorKind, ObjectId, Refusal};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let mut db = RefDb::open(dir.path(), RefDbOptions::default()).unwrap();
    /// let me = Signature::new("C O Mitter", "c@example.com", 1700000000, TzOffset::from_hhmm(100));
    /// let id = ObjectId::from_hex("1c2a7e431f340e344b233e7a96a11e55310b1471").unwrap();
    /// db.transaction(&[RefUpdate::create("refs/heads/main", id).message("first")], &me, &AssumeCommits).unwrap();
    /// // A second create of the same ref is refused, and the error says why.
    /// let e = db.transaction(&[RefUpdate::create("refs/heads/main", id)], &me, &AssumeCommits).unwrap_err();
    /// assert_eq!(e.kind(), ErrorKind::OldValueMismatch);
    /// assert!(matches!(e.refusal(), Some(Refusal::OldValue { .. })));
    /// ```
    pub fn transaction(
        &mut self,
        updates: &[RefUpdate],
        committer: &Signature,
        objects: &dyn ObjectLookup,
    ) -> Result<Committed> {
        self.prepare(updates, committer, objects)?.commit()
    }

    /// [`RefDb::transaction`] taking the updates by value (see [`RefDb::prepare_iter`]).
    ///
    /// ```
    /// use reftable::refdb::{AssumeCommits, RefDb, RefDbOptions, RefUpdate};
    /// use reftable::{Signature, TzOffset};
    /// use reftable::ObjectId;
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let mut db = RefDb::open(dir.path(), RefDbOptions::default()).unwrap();
    /// let me = Signature::new("C O Mitter", "c@example.com", 1700000000, TzOffset::from_hhmm(100));
    /// let id = ObjectId::from_hex("1c2a7e431f340e344b233e7a96a11e55310b1471").unwrap();
    /// let tags = (0..1000).map(|i| RefUpdate::create(format!("refs/tags/t-{i:04}"), id));
    /// db.transaction_iter(tags, &me, &AssumeCommits).unwrap();
    /// assert!(db.read_ref(b"refs/tags/t-0999").unwrap().is_some());
    /// ```
    pub fn transaction_iter(
        &mut self,
        updates: impl IntoIterator<Item = RefUpdate>,
        committer: &Signature,
        objects: &dyn ObjectLookup,
    ) -> Result<Committed> {
        self.prepare_iter(updates, committer, objects)?.commit()
    }
}
