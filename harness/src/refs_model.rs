//! An in-memory model of git's ref semantics: a map of refs and a map of reflogs, with no
//! tables, stack or update indexes. It decides on its own which transactions git accepts and
//! what refs and reflogs result, as a third opinion beside git and the library.

use std::collections::BTreeMap;

use reftable::ObjectId;

use serde::{Deserialize, Serialize};

use crate::git_rules::{
    model_autocreates_reflog, model_pseudoref, model_reflog_message, model_refname_ok,
    model_refname_safe,
};
use crate::ops::{LogRefsOpt, Update, Value};

/// A ref's value in the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MValue {
    /// Points at an object.
    Oid(ObjectId),
    /// Points at another ref.
    Symref(String),
}

/// A reflog entry in the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MEntry {
    /// Old id.
    pub old: ObjectId,
    /// New id.
    pub new: ObjectId,
    /// Message as stored (normalized, with its newline).
    pub message: Vec<u8>,
    /// Committer time.
    pub time: u64,
}

/// How many refs git reads while resolving a name (`SYMREF_MAXDEPTH`).
pub const SYMREF_READS: usize = 5;

impl MEntry {
    /// Both ids null: git takes such an entry for an existence marker and hides it.
    pub fn looks_like_marker(&self) -> bool {
        self.old.is_null() && self.new.is_null()
    }
}

/// One reason a transaction must be refused. A transaction can have several; which one git
/// reports first depends on its version (the order of its checks changed over time), so the
/// model names all of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fault {
    /// An invalid ref name, a pseudoref, or an invalid symref target.
    BadName,
    /// Two updates of one ref (directly, or one through a symref or through `HEAD`).
    Duplicate,
    /// A directory/file conflict with an existing ref or another update.
    DfConflict,
    /// An old value (object id, absence, or symref target) that does not match.
    OldValue,
    /// A new value naming an object that does not exist.
    MissingObject,
    /// A non-commit object written to a branch (or `HEAD`).
    NonCommit,
}

impl Fault {
    /// Every fault, in declaration order.
    pub const ALL: [Fault; 6] = [
        Fault::BadName,
        Fault::Duplicate,
        Fault::DfConflict,
        Fault::OldValue,
        Fault::MissingObject,
        Fault::NonCommit,
    ];

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// A set of [`Fault`]s.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Faults(u8);

impl Faults {
    /// Add `f`.
    pub fn insert(&mut self, f: Fault) {
        self.0 |= f.bit();
    }

    /// Whether `f` is in the set.
    pub fn contains(self, f: Fault) -> bool {
        self.0 & f.bit() != 0
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The faults in the set.
    pub fn iter(self) -> impl Iterator<Item = Fault> {
        Fault::ALL.into_iter().filter(move |f| self.contains(*f))
    }
}

impl FromIterator<Fault> for Faults {
    fn from_iter<I: IntoIterator<Item = Fault>>(iter: I) -> Faults {
        let mut s = Faults::default();
        for f in iter {
            s.insert(f);
        }
        s
    }
}

impl std::fmt::Display for Faults {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<String> = self.iter().map(|x| format!("{x:?}")).collect();
        write!(f, "{{{}}}", names.join(", "))
    }
}

/// Why the model refuses a transaction: every fault that applies, and the one git 2.47's
/// order of checks meets first (the order this crate's `RefDb` follows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// Every fault of the transaction.
    pub faults: Faults,
    /// The first fault in git 2.47's order of checks.
    pub first: Fault,
}

/// The fault a `RefDb` transaction error stands for, from its [`reftable::Refusal`] (`None`
/// for errors that are no refusal of the transaction's content, such as a held lock).
pub fn library_fault(e: &reftable::Error) -> Option<Fault> {
    use reftable::Refusal;
    Some(match e.refusal()? {
        Refusal::BadName { .. } => Fault::BadName,
        Refusal::Duplicate { .. } => Fault::Duplicate,
        Refusal::DirectoryConflict { .. } => Fault::DfConflict,
        Refusal::OldValue { .. } | Refusal::DanglingSymref { .. } => Fault::OldValue,
        Refusal::MissingObject { .. } => Fault::MissingObject,
        Refusal::NonCommit { .. } => Fault::NonCommit,
        _ => return None,
    })
}

/// Faults noted while a transaction is checked.
#[derive(Default)]
struct FaultLog {
    faults: Faults,
    first: Option<Fault>,
}

impl FaultLog {
    fn add(&mut self, f: Fault) {
        self.faults.insert(f);
        self.first.get_or_insert(f);
    }
}

/// What the model knows about objects.
pub trait Objects {
    /// `Some(true)` commit, `Some(false)` other existing object, `None` missing.
    fn is_commit(&self, id: &ObjectId) -> Option<bool>;
}

/// The model.
#[derive(Clone, Debug)]
pub struct Model {
    null: ObjectId,
    /// Live refs.
    pub refs: BTreeMap<String, MValue>,
    /// Reflogs (newest first); present with no entries = existence marker only.
    pub logs: BTreeMap<String, Vec<MEntry>>,
    log_refs: LogRefsOpt,
    max_message: usize,
    /// Refuse no-deref updates expecting no ref of a dangling symref (git 2.52+).
    pub protect_dangling_symrefs: bool,
    /// Log-only steps (`HEAD`'s, a symref's) have their old object id checked, as before git
    /// 2.51.1; later gits check none.
    pub log_only_old_checked: bool,
}

/// A checked transaction: its steps, and the (step, current value) of those that write.
type Plan = (Vec<Step>, Vec<(usize, ObjectId)>);

/// A transaction the model accepted and has not applied (see [`Model::prepare_logged`]):
/// trying one on a copy of the model cost a copy of every ref and reflog.
#[derive(Clone, Debug)]
pub struct Pending {
    steps: Vec<Step>,
    writes: Vec<(usize, ObjectId)>,
    messages: Vec<String>,
    time: u64,
}

#[derive(Clone, Debug)]
struct Step {
    name: String,
    new: Option<Value>,
    old: Option<Value>,
    log_only: bool,
    via_head: bool,
    no_deref: bool,
    force_reflog: bool,
    /// The update the step comes from (its message is that update's).
    update: usize,
}

/// A transaction being checked: its steps so far, the names they touch (sorted), the
/// (step, current value) of the steps that write, and the faults met.
struct Checking {
    steps: Vec<Step>,
    affected: Vec<String>,
    writes: Vec<(usize, ObjectId)>,
    log: FaultLog,
}

/// Whether an update names an invalid ref or pseudoref, or an invalid symref target.
fn has_bad_name(u: &Update) -> bool {
    let new_is_value = match &u.new {
        Some(Value::Oid(h)) => ObjectId::from_hex(h).is_some_and(|i| !i.is_null()),
        Some(Value::Symref(_)) => true,
        None => false,
    };
    let ok = if new_is_value {
        model_refname_ok(u.refname.as_bytes(), true)
    } else {
        model_refname_safe(u.refname.as_bytes())
    };
    let targets_ok = [&u.new, &u.old].into_iter().flatten().all(|v| match v {
        Value::Symref(t) => model_refname_ok(t.as_bytes(), true),
        Value::Oid(_) => true,
    });
    !ok || !targets_ok || model_pseudoref(u.refname.as_bytes())
}

/// One step per update, as given.
fn first_steps(updates: &[Update], create_reflog: bool) -> Vec<Step> {
    updates
        .iter()
        .enumerate()
        .map(|(update, u)| Step {
            name: u.refname.clone(),
            new: u.new.clone(),
            old: u.old.clone(),
            log_only: false,
            via_head: false,
            no_deref: u.no_deref,
            force_reflog: create_reflog && u.takes_create_reflog(),
            update,
        })
        .collect()
}

/// Fault a step that writes a missing object, or a non-commit into a branch or `HEAD`.
fn check_new_object(s: &Step, objects: &dyn Objects, log: &mut FaultLog) {
    if let Some(Value::Oid(h)) = &s.new {
        let id = ObjectId::from_hex(h).expect("hex");
        if !id.is_null() && !s.log_only {
            match objects.is_commit(&id) {
                None => log.add(Fault::MissingObject),
                Some(false) if s.name.starts_with("refs/heads/") || s.name == "HEAD" => {
                    log.add(Fault::NonCommit)
                }
                _ => {}
            }
        }
    }
}

fn normalize(msg: &str) -> Vec<u8> {
    model_reflog_message(msg.as_bytes())
}

impl Model {
    /// An empty model; `HEAD` is added by [`Model::init`].
    pub fn new(null: ObjectId, log_refs: LogRefsOpt, block_size: u32) -> Model {
        Model {
            null,
            refs: BTreeMap::new(),
            logs: BTreeMap::new(),
            log_refs,
            max_message: block_size as usize / 2,
            protect_dangling_symrefs: true,
            log_only_old_checked: false,
        }
    }

    /// `git init`: HEAD → `refs/heads/<branch>`.
    pub fn init(&mut self, branch: &str) {
        self.refs.insert(
            "HEAD".into(),
            MValue::Symref(format!("refs/heads/{branch}")),
        );
    }

    fn val(&self, v: &Value) -> MValue {
        match v {
            Value::Oid(h) => MValue::Oid(ObjectId::from_hex(h).expect("hex")),
            Value::Symref(t) => MValue::Symref(t.clone()),
        }
    }

    /// Follow symrefs; `None` for dangling or too deep (git reads at most five refs while
    /// resolving a name: a chain of four symrefs resolves, one of five does not).
    pub fn resolve(&self, name: &str) -> Option<ObjectId> {
        let mut name = name.to_string();
        for _ in 0..SYMREF_READS {
            match self.refs.get(&name)? {
                MValue::Oid(id) => return Some(*id),
                MValue::Symref(t) => name = t.clone(),
            }
        }
        None
    }

    /// Follow symrefs like git does for updates: a dangling chain resolves to the null id,
    /// only a chain of more than four symrefs fails.
    fn resolve_lenient(&self, name: &str) -> Option<ObjectId> {
        let mut name = name.to_string();
        for _ in 0..SYMREF_READS {
            match self.refs.get(&name) {
                None => return Some(self.null),
                Some(MValue::Oid(id)) => return Some(*id),
                Some(MValue::Symref(t)) => name = t.clone(),
            }
        }
        None
    }

    fn should_log(&self, name: &str) -> bool {
        match self.log_refs {
            LogRefsOpt::Always => true,
            LogRefsOpt::True if model_autocreates_reflog(name.as_bytes()) => true,
            _ => self.logs.contains_key(name),
        }
    }

    fn available(&self, name: &str, extras: &[String]) -> bool {
        let dir = format!("{name}/");
        let prefix_taken = name.match_indices('/').any(|(i, _)| {
            self.refs.contains_key(&name[..i]) || extras.iter().any(|e| e == &name[..i])
        });
        let below = self
            .refs
            .range(dir.clone()..)
            .next()
            .is_some_and(|(k, _)| k.starts_with(&dir))
            || extras.iter().any(|e| e.starts_with(&dir));
        !prefix_taken && !below
    }

    /// Apply one transaction; on refusal nothing changes.
    pub fn transaction(
        &mut self,
        updates: &[Update],
        message: &str,
        create_reflog: bool,
        time: u64,
        objects: &dyn Objects,
    ) -> Result<(), Refusal> {
        let messages = vec![message; updates.len()];
        self.transaction_logged(updates, &messages, create_reflog, time, objects)
    }

    /// [`Model::transaction`] where each update logs its own message (`messages[i]` for
    /// `updates[i]`, and for the steps it leads to: `HEAD` for its branch, a symref's
    /// referent), as `git fetch --atomic` logs each ref with what it did to it.
    pub fn transaction_logged(
        &mut self,
        updates: &[Update],
        messages: &[&str],
        create_reflog: bool,
        time: u64,
        objects: &dyn Objects,
    ) -> Result<(), Refusal> {
        let pending = self.prepare_logged(updates, messages, create_reflog, time, objects)?;
        self.commit(&pending);
        Ok(())
    }

    /// Decide on [`Model::transaction_logged`] without applying it: what it would apply,
    /// for [`Model::commit`] once the caller knows it wants it (say, when git applied the
    /// same transaction), with nothing changed in the model meanwhile.
    pub fn prepare_logged(
        &self,
        updates: &[Update],
        messages: &[&str],
        create_reflog: bool,
        time: u64,
        objects: &dyn Objects,
    ) -> Result<Pending, Refusal> {
        assert_eq!(updates.len(), messages.len(), "a message per update");
        let (steps, writes) = self.plan(updates, create_reflog, objects)?;
        let messages = messages.iter().map(|m| m.to_string()).collect();
        Ok(Pending {
            steps,
            writes,
            messages,
            time,
        })
    }

    /// Apply a transaction [`Model::prepare_logged`] accepted in this state.
    pub fn commit(&mut self, p: &Pending) {
        let messages: Vec<&str> = p.messages.iter().map(String::as_str).collect();
        self.apply(&p.steps, &p.writes, &messages, p.time);
    }

    /// Why the model would refuse `updates` in its current state (`None`: it would accept
    /// them), without changing anything.
    pub fn refusal(&self, updates: &[Update], objects: &dyn Objects) -> Option<Refusal> {
        self.plan(updates, false, objects).err()
    }

    /// `update-ref --batch-updates`: the updates git rejects one by one (index and every
    /// fault of each), each checked on its own against the state before the batch; the
    /// others are one [`Model::transaction`]. Only for batches of updates whose checks do
    /// not depend on each other: distinct names, none a directory of another, none a symref
    /// or `HEAD` (whose updates git splits into more updates), which is what the gate
    /// generates.
    pub fn batch_rejections(
        &self,
        updates: &[Update],
        objects: &dyn Objects,
    ) -> Vec<(usize, Faults)> {
        updates
            .iter()
            .enumerate()
            .filter_map(|(i, u)| {
                let r = self.refusal(std::slice::from_ref(u), objects)?;
                Some((i, r.faults))
            })
            .collect()
    }

    /// The checks of a transaction: its steps (symrefs and `HEAD` followed) and the (step,
    /// current value) of those that write, or every fault that refuses it.
    fn plan(
        &self,
        updates: &[Update],
        create_reflog: bool,
        objects: &dyn Objects,
    ) -> Result<Plan, Refusal> {
        let mut log = FaultLog::default();
        for u in updates {
            if has_bad_name(u) {
                log.add(Fault::BadName);
            }
        }
        let mut affected: Vec<String> = updates.iter().map(|u| u.refname.clone()).collect();
        affected.sort();
        if affected.windows(2).any(|w| w[0] == w[1]) {
            log.add(Fault::Duplicate);
        }
        let head = match self.refs.get("HEAD") {
            Some(MValue::Symref(t)) => Some(t.clone()),
            _ => None,
        };
        let mut c = Checking {
            steps: first_steps(updates, create_reflog),
            affected,
            writes: Vec::new(),
            log,
        };
        // Checking a step may queue more (for `HEAD`, for a symref's referent).
        let mut i = 0;
        while i < c.steps.len() {
            self.check_step(&mut c, i, head.as_deref(), objects);
            i += 1;
        }
        if let Some(first) = c.log.first {
            return Err(Refusal {
                faults: c.log.faults,
                first,
            });
        }
        Ok((c.steps, c.writes))
    }

    /// Check step `i`: its new object, the `HEAD` step it queues when it updates `HEAD`'s
    /// branch, its current value (through a symref, queueing a step for the referent) and
    /// its expected old value; note it in the writes when it writes.
    fn check_step(&self, c: &mut Checking, i: usize, head: Option<&str>, objects: &dyn Objects) {
        let s = c.steps[i].clone();
        check_new_object(&s, objects, &mut c.log);
        self.queue_head_step(c, &s, head);
        let Some(current) = self.refs.get(&s.name).cloned() else {
            self.check_missing_ref(c, i, &s);
            return;
        };
        let (cur, referent) = match &current {
            MValue::Oid(id) => (*id, None),
            MValue::Symref(t) => (self.follow_symref(c, i, &s, t), Some(t.as_str())),
        };
        let st = &c.steps[i];
        self.check_old_value(st, cur, referent, &mut c.log);
        let changes = match &st.new {
            Some(Value::Oid(h)) => ObjectId::from_hex(h).expect("hex") != cur,
            Some(Value::Symref(_)) => !cur.is_null(),
            None => false,
        };
        if referent.is_some() || st.log_only || changes {
            c.writes.push((i, cur));
        }
    }

    /// A step that updates the branch `HEAD` points at also logs in `HEAD`'s reflog: queue
    /// that log-only `HEAD` step, or fault a duplicate when `HEAD` is updated already.
    fn queue_head_step(&self, c: &mut Checking, s: &Step, head: Option<&str>) {
        let updates_head = head == Some(s.name.as_str()) && !s.log_only && !s.via_head;
        if updates_head && c.affected.iter().any(|a| a == "HEAD") {
            c.log.add(Fault::Duplicate);
        } else if updates_head {
            let as_oid = |v: &Option<Value>| {
                v.as_ref().map(|v| match v {
                    Value::Oid(h) => Value::Oid(h.clone()),
                    Value::Symref(_) => Value::Oid(self.null.to_string()),
                })
            };
            c.steps.push(Step {
                name: "HEAD".into(),
                new: as_oid(&s.new),
                old: as_oid(&s.old),
                log_only: true,
                via_head: s.via_head,
                no_deref: true,
                force_reflog: s.force_reflog,
                update: s.update,
            });
            c.affected.push("HEAD".into());
            c.affected.sort();
        }
    }

    /// Step `i` names no existing ref: fault an expected old value or a directory/file
    /// conflict; a creation writes (from the null id).
    fn check_missing_ref(&self, c: &mut Checking, i: usize, s: &Step) {
        let expects_existing = match &s.old {
            Some(Value::Oid(_)) if s.log_only && !self.log_only_old_checked => false,
            Some(Value::Oid(h)) => ObjectId::from_hex(h).is_some_and(|i| !i.is_null()),
            Some(Value::Symref(_)) => true,
            None => false,
        };
        if expects_existing {
            c.log.add(Fault::OldValue);
            return;
        }
        if !self.available(&s.name, &c.affected) {
            c.log.add(Fault::DfConflict);
        }
        let deletes = matches!(&s.new, Some(Value::Oid(h)) if ObjectId::from_hex(h).is_some_and(|i| i.is_null()));
        if s.new.is_some() && !deletes {
            c.writes.push((i, self.null));
        }
    }

    /// Step `i` names the symref `s.name` pointing at `target`: returns the id it resolves
    /// to (null when dangling). Unless the step is no-deref, the update moves to a step
    /// queued for `target` (a duplicate when `target` is updated already) and step `i` only
    /// logs.
    fn follow_symref(&self, c: &mut Checking, i: usize, s: &Step, target: &str) -> ObjectId {
        let resolved = self.resolve_lenient(&s.name);
        let cur = resolved.unwrap_or(self.null);
        if s.no_deref && s.old.is_some() && resolved.is_none() {
            c.log.add(Fault::OldValue);
        }
        if !s.no_deref && c.affected.iter().any(|a| a == target) {
            // Not queued again: a symref loop would never end.
            c.log.add(Fault::Duplicate);
        } else if !s.no_deref {
            c.steps.push(Step {
                name: target.to_owned(),
                new: s.new.clone(),
                old: s.old.clone(),
                log_only: s.log_only,
                via_head: s.via_head || s.name == "HEAD",
                no_deref: false,
                force_reflog: s.force_reflog,
                update: s.update,
            });
            let st = &mut c.steps[i];
            st.log_only = true;
            st.no_deref = true;
            if matches!(st.old, Some(Value::Oid(_))) {
                st.old = None;
            }
            c.affected.push(target.to_owned());
            c.affected.sort();
        }
        cur
    }

    /// Fault a step whose expected old value does not match `cur`, the id its ref resolves
    /// to (`referent`: the target when the ref is a symref).
    fn check_old_value(
        &self,
        st: &Step,
        cur: ObjectId,
        referent: Option<&str>,
        log: &mut FaultLog,
    ) {
        match &st.old {
            Some(Value::Symref(t)) if referent != Some(t.as_str()) => {
                log.add(Fault::OldValue);
            }
            Some(Value::Oid(h))
                if self.protect_dangling_symrefs
                    && !st.log_only
                    && st.no_deref
                    && referent.is_some()
                    && cur.is_null()
                    && ObjectId::from_hex(h).is_some_and(|i| i.is_null()) =>
            {
                log.add(Fault::OldValue);
            }
            Some(Value::Oid(_)) if st.log_only && !self.log_only_old_checked => {}
            Some(Value::Oid(h)) if ObjectId::from_hex(h).expect("hex") != cur => {
                log.add(Fault::OldValue);
            }
            _ => {}
        }
    }

    /// Write what a checked transaction changes: `writes` are (step, current value) of the
    /// steps that write. Reflog decisions use the state before the transaction.
    fn apply(
        &mut self,
        steps: &[Step],
        writes: &[(usize, ObjectId)],
        messages: &[&str],
        time: u64,
    ) {
        // What each write sees of the state before the transaction (its own symref-ness,
        // whether it logs, what a new symref resolves to), taken before anything changes:
        // a copy of the whole model per transaction made long runs quadratic.
        let before: Vec<(bool, bool, Option<ObjectId>)> = writes
            .iter()
            .map(|&(i, _)| {
                let s = &steps[i];
                let is_symref = matches!(self.refs.get(&s.name), Some(MValue::Symref(_)));
                let logs = s.force_reflog || self.should_log(&s.name);
                let new = match &s.new {
                    Some(Value::Oid(h)) => Some(ObjectId::from_hex(h).expect("hex")),
                    Some(Value::Symref(t)) => self.resolve(t),
                    None => None,
                };
                (is_symref, logs, new)
            })
            .collect();
        // Each distinct message normalized once (a transaction's updates mostly share one).
        let mut distinct: Vec<(&str, Vec<u8>)> = Vec::new();
        let which: Vec<usize> = messages
            .iter()
            .map(|m| {
                distinct
                    .iter()
                    .position(|(d, _)| d == m)
                    .unwrap_or_else(|| {
                        let mut msg = normalize(m);
                        msg.truncate(self.max_message);
                        msg.push(b'\n');
                        distinct.push((m, msg));
                        distinct.len() - 1
                    })
            })
            .collect();
        for (&(i, current), &(is_symref, logs, new)) in writes.iter().zip(&before) {
            let s = &steps[i];
            let msg = &distinct[which[s.update]].1;
            let deletes = matches!(&s.new, Some(Value::Oid(h)) if ObjectId::from_hex(h).is_some_and(|i| i.is_null()));
            if s.new.is_some() && !is_symref && deletes {
                self.logs.remove(&s.name);
            } else if s.new.is_some() && logs {
                if let Some(new) = new {
                    self.logs.entry(s.name.clone()).or_default().insert(
                        0,
                        MEntry {
                            old: current,
                            new,
                            message: msg.clone(),
                            time,
                        },
                    );
                }
            }
            if s.log_only {
                continue;
            }
            match &s.new {
                Some(v @ Value::Symref(_)) => {
                    self.refs.insert(s.name.clone(), self.val(v));
                }
                Some(Value::Oid(h)) => {
                    let id = ObjectId::from_hex(h).expect("hex");
                    if id.is_null() {
                        self.refs.remove(&s.name);
                    } else {
                        self.refs.insert(s.name.clone(), MValue::Oid(id));
                    }
                }
                None => {}
            }
        }
    }

    /// `git branch -m` / `-c` of `old` to `new` (full names) once git's checks passed: the
    /// reftable backend's rename or copy (the new ref gets the old value; its reflog two
    /// fresh entries for a rename, one for a copy, over the old reflog, which a rename
    /// removes; a rename of `HEAD`'s branch logs to `HEAD` too), then for a rename of
    /// `HEAD`'s branch, with `follow_head` (`git branch`, not `git refs rename`), the symref
    /// update that points `HEAD` at `new`. An existing `new` is overwritten (`-M` / `-C`);
    /// its own reflog is assumed absent.
    pub fn move_branch(
        &mut self,
        old: &str,
        new: &str,
        copy: bool,
        follow_head: bool,
        message: &str,
        time: u64,
    ) {
        let Some(value) = self.refs.get(old).cloned() else {
            return;
        };
        let Some(id) = self.resolve(old) else { return };
        let null = self.null;
        let mut msg = normalize(message);
        msg.truncate(self.max_message);
        msg.push(b'\n');
        let entry = |old, new| MEntry {
            old,
            new,
            message: msg.clone(),
            time,
        };
        let head_follows = !copy && self.refs.get("HEAD") == Some(&MValue::Symref(old.to_string()));
        let mut log = vec![entry(null, id)];
        if !copy {
            log.push(entry(id, null));
        }
        log.extend(self.logs.get(old).cloned().unwrap_or_default());
        self.logs.insert(new.to_string(), log);
        self.refs.insert(new.to_string(), value);
        if copy {
            return;
        }
        self.refs.remove(old);
        self.logs.remove(old);
        if head_follows {
            self.logs
                .entry("HEAD".into())
                .or_default()
                .insert(0, entry(id, null));
            if !follow_head {
                return;
            }
            // The symref update: HEAD dangled (its branch is gone), so its entry starts from
            // the null id; HEAD has a reflog now, so it is logged whatever the config.
            self.refs
                .insert("HEAD".into(), MValue::Symref(new.to_string()));
            if self.should_log("HEAD") {
                self.logs
                    .entry("HEAD".into())
                    .or_default()
                    .insert(0, entry(null, id));
            }
        }
    }

    /// The entries of `name`'s reflog git shows (and counts for `@{n}`): all but those whose
    /// old and new ids are both null, which look like existence markers to git.
    pub fn visible_entries(&self, name: &str) -> usize {
        self.logs
            .get(name)
            .map_or(0, |e| e.iter().filter(|e| !e.looks_like_marker()).count())
    }

    /// `reflog expire --updateref` after [`Model::expire`]: a ref holding an object id takes
    /// the new id of its newest remaining entry (entries that look like markers aside) when
    /// that is not null.
    pub fn update_ref_from_reflog(&mut self, name: &str) {
        let newest = self
            .logs
            .get(name)
            .and_then(|e| e.iter().find(|e| !e.looks_like_marker()))
            .map(|e| e.new);
        if let (Some(id), Some(MValue::Oid(v))) = (newest, self.refs.get_mut(name)) {
            if !id.is_null() {
                *v = id;
            }
        }
    }

    /// `refs_create_reflog` of `name`: an empty reflog (an existence marker) unless it has
    /// one.
    pub fn create_reflog(&mut self, name: &str) {
        self.logs.entry(name.to_string()).or_default();
    }

    /// `reflog drop` of `name` (a name git found a reflog for): the reflog is gone.
    pub fn drop_reflog(&mut self, name: &str) {
        self.logs.remove(name);
    }

    /// `reflog expire` / `reflog delete` on `name`: drop entries for which `prune` says yes
    /// (oldest first; the index is the entry's `@{n}`); with `rewrite`, re-chain old ids. The
    /// reflog stays (maybe empty). Entries with both ids null are markers to git: its expiry
    /// neither counts, prunes nor re-chains them.
    pub fn expire(
        &mut self,
        name: &str,
        prune: &mut dyn FnMut(usize, &MEntry) -> bool,
        rewrite: bool,
    ) {
        let visible = self.visible_entries(name);
        let Some(entries) = self.logs.get_mut(name) else {
            return;
        };
        let mut kept: Vec<MEntry> = Vec::new();
        let mut last_new: Option<ObjectId> = None;
        let mut idx = visible;
        for e in entries.iter().rev() {
            if e.looks_like_marker() {
                kept.push(e.clone());
                continue;
            }
            idx -= 1;
            if prune(idx, e) {
                continue;
            }
            let mut e = e.clone();
            if rewrite {
                if let Some(prev) = last_new {
                    e.old = prev;
                }
            }
            last_new = Some(e.new);
            kept.push(e);
        }
        kept.reverse();
        *entries = kept;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(b: u8) -> ObjectId {
        ObjectId::from_bytes(&[b; 20]).unwrap()
    }

    fn entry(old: u8, new: u8) -> MEntry {
        MEntry {
            old: id(old),
            new: id(new),
            message: b"m\n".to_vec(),
            time: 1,
        }
    }

    /// A rename of `HEAD`'s branch logs to `HEAD` (the backend does), and only `git branch`
    /// then points `HEAD` at the new name; after `git refs rename` it names the old one.
    #[test]
    fn head_follows_a_renamed_branch_only_for_git_branch() {
        for follow_head in [true, false] {
            let mut m = Model::new(id(0), LogRefsOpt::True, 4096);
            m.refs.insert("refs/heads/a".into(), MValue::Oid(id(1)));
            m.refs
                .insert("HEAD".into(), MValue::Symref("refs/heads/a".into()));
            m.move_branch("refs/heads/a", "refs/heads/b", false, follow_head, "mv", 5);
            let head = if follow_head {
                "refs/heads/b"
            } else {
                "refs/heads/a"
            };
            assert_eq!(m.refs["HEAD"], MValue::Symref(head.into()));
            assert_eq!(m.refs["refs/heads/b"], MValue::Oid(id(1)));
            assert!(!m.refs.contains_key("refs/heads/a"));
            let logged: Vec<(ObjectId, ObjectId)> =
                m.logs["HEAD"].iter().map(|e| (e.old, e.new)).collect();
            let mut want = vec![(id(1), id(0))];
            if follow_head {
                want.insert(0, (id(0), id(1)));
            }
            assert_eq!(logged, want, "follow_head {follow_head}");
        }
    }

    /// Entries with both ids null look like existence markers to git: `reflog delete` does
    /// not count them for `@{n}`, and `--rewrite` neither keeps them in the chain nor
    /// changes them (found by the gate, seed 500 case 0).
    #[test]
    fn expiry_skips_entries_that_look_like_markers() {
        let mut m = Model::new(id(0), LogRefsOpt::True, 4096);
        // Newest first: X -> 0, then a null/null entry, then 0 -> X.
        m.logs
            .insert("HEAD".into(), vec![entry(1, 0), entry(0, 0), entry(0, 1)]);
        assert_eq!(m.visible_entries("HEAD"), 2);
        // @{1} is the oldest visible entry, 0 -> X.
        m.expire("HEAD", &mut |i, _| i == 1, true);
        let left = &m.logs["HEAD"];
        assert_eq!(left.len(), 2);
        // The null/null entry stays as it was, and does not become the newest's predecessor.
        assert_eq!((left[0].old, left[0].new), (id(1), id(0)));
        assert!(left[1].looks_like_marker());
        // Nothing at @{5}: nothing changes.
        let before = m.logs.clone();
        m.expire("HEAD", &mut |i, _| i == 5, true);
        assert_eq!(m.logs, before);
    }
}
