//! An in-memory model of git's ref semantics: a map of refs and a map of reflogs, with no
//! tables, stack or update indexes. It decides on its own which transactions git accepts and
//! what refs and reflogs result, as a third opinion beside git and the library.

use std::collections::BTreeMap;

use reftable::refname::{autocreates_reflog, is_pseudoref, is_safe_refname, is_valid_refname};
use reftable::ObjectId;

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

/// Why the model refuses a transaction (the classes the gate compares).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Invalid ref name.
    Name,
    /// D/F conflict or duplicate update.
    Conflict,
    /// Old value mismatch.
    Mismatch,
    /// Missing object or non-commit on a branch.
    Object,
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
}

fn normalize(msg: &str) -> Vec<u8> {
    reftable::refdb::normalize_message(msg.as_bytes())
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

    /// Follow symrefs; `None` for dangling or too deep.
    pub fn resolve(&self, name: &str) -> Option<ObjectId> {
        let mut name = name.to_string();
        for _ in 0..=5 {
            match self.refs.get(&name)? {
                MValue::Oid(id) => return Some(*id),
                MValue::Symref(t) => name = t.clone(),
            }
        }
        None
    }

    /// Follow symrefs like git does for updates: a dangling chain resolves to the null id,
    /// only a chain deeper than 5 fails.
    fn resolve_lenient(&self, name: &str) -> Option<ObjectId> {
        let mut name = name.to_string();
        for _ in 0..=5 {
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
            LogRefsOpt::True if autocreates_reflog(name.as_bytes()) => true,
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
        for u in updates {
            let new_is_value = match &u.new {
                Some(Value::Oid(h)) => ObjectId::from_hex(h).is_some_and(|i| !i.is_null()),
                Some(Value::Symref(_)) => true,
                None => false,
            };
            let ok = if new_is_value {
                is_valid_refname(u.refname.as_bytes(), true)
            } else {
                is_safe_refname(u.refname.as_bytes())
            };
            if !ok || is_pseudoref(u.refname.as_bytes()) {
                return Err(Refusal::Name);
            }
        }
        let mut affected: Vec<String> = updates.iter().map(|u| u.refname.clone()).collect();
        affected.sort();
        if affected.windows(2).any(|w| w[0] == w[1]) {
            return Err(Refusal::Conflict);
        }
        let head = match self.refs.get("HEAD") {
            Some(MValue::Symref(t)) => Some(t.clone()),
            _ => None,
        };
        let mut steps: Vec<Step> = updates
            .iter()
            .map(|u| Step {
                name: u.refname.clone(),
                new: u.new.clone(),
                old: u.old.clone(),
                log_only: false,
                via_head: false,
                no_deref: u.no_deref,
                force_reflog: create_reflog && u.takes_create_reflog(),
            })
            .collect();
        // (step, current value) of the steps that write something.
        let mut writes: Vec<(usize, ObjectId)> = Vec::new();
        let mut i = 0;
        while i < steps.len() {
            let s = steps[i].clone();
            if let Some(Value::Oid(h)) = &s.new {
                let id = ObjectId::from_hex(h).expect("hex");
                if !id.is_null() && !s.log_only {
                    match objects.is_commit(&id) {
                        None => return Err(Refusal::Object),
                        Some(false) if s.name.starts_with("refs/heads/") || s.name == "HEAD" => {
                            return Err(Refusal::Object)
                        }
                        _ => {}
                    }
                }
            }
            if head.as_deref() == Some(s.name.as_str()) && !s.log_only && !s.via_head {
                if affected.iter().any(|a| a == "HEAD") {
                    return Err(Refusal::Conflict);
                }
                let as_oid = |v: &Option<Value>| {
                    v.as_ref().map(|v| match v {
                        Value::Oid(h) => Value::Oid(h.clone()),
                        Value::Symref(_) => Value::Oid(self.null.to_string()),
                    })
                };
                steps.push(Step {
                    name: "HEAD".into(),
                    new: as_oid(&s.new),
                    old: as_oid(&s.old),
                    log_only: true,
                    via_head: s.via_head,
                    no_deref: true,
                    force_reflog: s.force_reflog,
                });
                affected.push("HEAD".into());
                affected.sort();
            }
            let expects_existing = match &s.old {
                Some(Value::Oid(h)) => ObjectId::from_hex(h).is_some_and(|i| !i.is_null()),
                Some(Value::Symref(_)) => true,
                None => false,
            };
            let Some(current) = self.refs.get(&s.name).cloned() else {
                if expects_existing {
                    return Err(Refusal::Mismatch);
                }
                if !self.available(&s.name, &affected) {
                    return Err(Refusal::Conflict);
                }
                let deletes = matches!(&s.new, Some(Value::Oid(h)) if ObjectId::from_hex(h).is_some_and(|i| i.is_null()));
                if s.new.is_some() && !deletes {
                    writes.push((i, self.null));
                }
                i += 1;
                continue;
            };
            let cur;
            let mut is_symref = false;
            let mut referent = String::new();
            match &current {
                MValue::Oid(id) => cur = *id,
                MValue::Symref(t) => {
                    is_symref = true;
                    referent = t.clone();
                    let resolved = self.resolve_lenient(&s.name);
                    cur = resolved.unwrap_or(self.null);
                    if s.no_deref && s.old.is_some() && resolved.is_none() {
                        return Err(Refusal::Mismatch);
                    }
                    if !s.no_deref {
                        steps.push(Step {
                            name: t.clone(),
                            new: s.new.clone(),
                            old: s.old.clone(),
                            log_only: s.log_only,
                            via_head: s.via_head || s.name == "HEAD",
                            no_deref: false,
                            force_reflog: s.force_reflog,
                        });
                        let st = &mut steps[i];
                        st.log_only = true;
                        st.no_deref = true;
                        if matches!(st.old, Some(Value::Oid(_))) {
                            st.old = None;
                        }
                        if affected.iter().any(|a| a == t) {
                            return Err(Refusal::Conflict);
                        }
                        affected.push(t.clone());
                        affected.sort();
                    }
                }
            }
            let st = &steps[i];
            match &st.old {
                Some(Value::Symref(t)) if !is_symref || &referent != t => {
                    return Err(Refusal::Mismatch);
                }
                Some(Value::Oid(h)) if ObjectId::from_hex(h).expect("hex") != cur => {
                    return Err(Refusal::Mismatch)
                }
                _ => {}
            }
            let changes = match &st.new {
                Some(Value::Oid(h)) => ObjectId::from_hex(h).expect("hex") != cur,
                Some(Value::Symref(_)) => !cur.is_null(),
                None => false,
            };
            if is_symref || st.log_only || changes {
                writes.push((i, cur));
            }
            i += 1;
        }

        // Apply: reflog decisions use the state before the transaction.
        let before = self.clone();
        let mut msg = normalize(message);
        msg.truncate(self.max_message);
        msg.push(b'\n');
        for &(i, current) in &writes {
            let s = &steps[i];
            let is_symref = matches!(before.refs.get(&s.name), Some(MValue::Symref(_)));
            let deletes = matches!(&s.new, Some(Value::Oid(h)) if ObjectId::from_hex(h).is_some_and(|i| i.is_null()));
            if s.new.is_some() && !is_symref && deletes {
                self.logs.remove(&s.name);
            } else if s.new.is_some() && (s.force_reflog || before.should_log(&s.name)) {
                let new = match s.new.as_ref().expect("checked") {
                    Value::Oid(h) => Some(ObjectId::from_hex(h).expect("hex")),
                    Value::Symref(t) => before.resolve(t),
                };
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
        Ok(())
    }

    /// `reflog expire` / `reflog delete` on `name`: drop entries for which `prune` says yes
    /// (oldest first); with `rewrite`, re-chain old ids. The reflog stays (maybe empty).
    pub fn expire(
        &mut self,
        name: &str,
        prune: &mut dyn FnMut(usize, &MEntry) -> bool,
        rewrite: bool,
    ) {
        let Some(entries) = self.logs.get_mut(name) else {
            return;
        };
        let mut kept: Vec<MEntry> = Vec::new();
        let mut last_new: Option<ObjectId> = None;
        for (idx, e) in entries.iter().enumerate().rev() {
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
