//! Normalized ref and reflog state, taken from each implementation and compared.

use std::collections::BTreeMap;
use std::path::Path;

use reftable::refdb::RefDb;
use reftable::{LogValue, RefValue};

use crate::refs_model::{MValue, Model};

/// A ref's value as compared: object id, peeled id when stored, or symref target.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SValue {
    /// An object id, and the peeled id when the store has one.
    Oid(String, Option<String>),
    /// A symref target.
    Symref(String),
}

impl SValue {
    /// A stored value as compared; `None` for a tombstone.
    pub fn of(v: &RefValue) -> Option<SValue> {
        Some(match v {
            RefValue::Object(id) => SValue::Oid(id.to_string(), None),
            RefValue::Peeled { object, peeled } => {
                SValue::Oid(object.to_string(), Some(peeled.to_string()))
            }
            RefValue::Symref(t) => SValue::Symref(lossy(t)),
            RefValue::Deletion => return None,
        })
    }
}

/// One reflog entry as compared.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct SLog {
    /// Old id.
    pub old: String,
    /// New id.
    pub new: String,
    /// Message (as stored, with its newline).
    pub message: String,
    /// Committer time.
    pub time: u64,
    /// Time zone (stored decimal ±HHMM), `None` where the source has none (model).
    pub tz: Option<i16>,
    /// Committer name and email, `None` where the source has none (model).
    pub who: Option<(String, String)>,
}

impl SLog {
    /// A stored reflog entry as compared.
    pub fn of(u: &reftable::LogUpdate) -> SLog {
        SLog {
            old: u.old_id.to_string(),
            new: u.new_id.to_string(),
            message: lossy(&u.message),
            time: u.committer.time,
            tz: Some(u.committer.tz_offset.hhmm()),
            who: Some((lossy(&u.committer.name), lossy(&u.committer.email))),
        }
    }
}

/// Refs and reflogs of one implementation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// Live refs.
    pub refs: BTreeMap<String, SValue>,
    /// Reflogs (newest first), without tombstones and existence markers; a name with an
    /// empty list has a reflog with only an existence marker.
    pub logs: BTreeMap<String, Vec<SLog>>,
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

impl Snapshot {
    /// Read a ref database.
    pub fn of_refdb(db: &RefDb) -> reftable::Result<Snapshot> {
        let mut s = Snapshot::default();
        let mut refs = db.refs()?;
        while let Some(r) = refs.next_record()? {
            if let Some(v) = SValue::of(&r.value) {
                s.refs.insert(lossy(&r.refname), v);
            }
        }
        // One pass over the merged logs (name order, newest first per name) instead of a
        // seek per reflog: the same records `RefDb::reflog` returns for each name.
        let mut it = db.stack().merged().logs()?;
        while let Some(l) = it.next_record()? {
            let LogValue::Update(u) = &l.value else {
                continue;
            };
            let entries = s.logs.entry(lossy(&l.refname)).or_default();
            if l.is_existence_marker() {
                continue;
            }
            entries.push(SLog::of(u));
        }
        Ok(s)
    }

    /// Read the stack in `dir` with our reader.
    pub fn of_stack_dir(
        dir: &Path,
        opts: reftable::refdb::RefDbOptions,
    ) -> reftable::Result<Snapshot> {
        let db = RefDb::open_or_create(dir, opts)?;
        Snapshot::of_refdb(&db)
    }

    /// The model's state (no peeled values, time zones or identities).
    pub fn of_model(m: &Model) -> Snapshot {
        let mut s = Snapshot::default();
        for (k, v) in &m.refs {
            let v = match v {
                MValue::Oid(id) => SValue::Oid(id.to_string(), None),
                MValue::Symref(t) => SValue::Symref(t.clone()),
            };
            s.refs.insert(k.clone(), v);
        }
        for (k, entries) in &m.logs {
            s.logs.insert(
                k.clone(),
                entries
                    .iter()
                    // git hides entries whose old and new ids are both null (they look like
                    // existence markers).
                    .filter(|e| !(e.old.is_null() && e.new.is_null()))
                    .map(|e| SLog {
                        old: e.old.to_string(),
                        new: e.new.to_string(),
                        message: String::from_utf8_lossy(&e.message).into_owned(),
                        time: e.time,
                        tz: None,
                        who: None,
                    })
                    .collect(),
            );
        }
        s
    }

    /// This snapshot with peeled values, time zones and identities dropped (what the model
    /// knows).
    pub fn as_model_sees(&self) -> Snapshot {
        let mut s = self.clone();
        for v in s.refs.values_mut() {
            if let SValue::Oid(_, p) = v {
                *p = None;
            }
        }
        for l in s.logs.values_mut().flatten() {
            l.tz = None;
            l.who = None;
        }
        s
    }

    /// Whether this snapshot, as the model sees it ([`Snapshot::as_model_sees`]), equals
    /// `model`, without making that copy.
    pub fn agrees_with_model(&self, model: &Snapshot) -> bool {
        let value = |a: &SValue, b: &SValue| match (a, b) {
            (SValue::Oid(x, _), SValue::Oid(y, None)) => x == y,
            _ => a == b,
        };
        let log = |a: &SLog, b: &SLog| {
            (a.old == b.old && a.new == b.new && a.message == b.message && a.time == b.time)
                && b.tz.is_none()
                && b.who.is_none()
        };
        self.refs.len() == model.refs.len()
            && (self.refs.iter().zip(&model.refs)).all(|((n, a), (m, b))| n == m && value(a, b))
            && self.logs.len() == model.logs.len()
            && (self.logs.iter().zip(&model.logs)).all(|((n, a), (m, b))| {
                n == m && a.len() == b.len() && a.iter().zip(b).all(|(x, y)| log(x, y))
            })
    }

    /// Differences to `other`, one line each (at most `limit`).
    pub fn diff(&self, other: &Snapshot, limit: usize) -> Vec<String> {
        let mut out = Vec::new();
        let names: std::collections::BTreeSet<&String> =
            self.refs.keys().chain(other.refs.keys()).collect();
        for n in names {
            match (self.refs.get(n), other.refs.get(n)) {
                (Some(a), Some(b)) if a != b => out.push(format!("ref {n}: {a:?} vs {b:?}")),
                (Some(a), None) => out.push(format!("ref {n}: {a:?} vs missing")),
                (None, Some(b)) => out.push(format!("ref {n}: missing vs {b:?}")),
                _ => {}
            }
        }
        let names: std::collections::BTreeSet<&String> =
            self.logs.keys().chain(other.logs.keys()).collect();
        for n in names {
            match (self.logs.get(n), other.logs.get(n)) {
                (Some(a), Some(b)) if a != b => {
                    out.push(format!("reflog {n}: {} vs {} entries", a.len(), b.len()));
                    for (i, (x, y)) in a.iter().zip(b).enumerate() {
                        if x != y {
                            out.push(format!("  {n}@{{{i}}}: {x:?} vs {y:?}"));
                            break;
                        }
                    }
                }
                (Some(a), None) => out.push(format!("reflog {n}: {} entries vs none", a.len())),
                (None, Some(b)) => out.push(format!("reflog {n}: none vs {} entries", b.len())),
                _ => {}
            }
        }
        out.truncate(limit);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(tz: Option<i16>) -> SLog {
        SLog {
            old: "0".repeat(40),
            new: "1".repeat(40),
            message: "m\n".into(),
            time: 7,
            tz,
            who: tz.map(|_| ("C O Mitter".into(), "committer@example.com".into())),
        }
    }

    #[test]
    fn agreeing_with_the_model_ignores_what_the_model_does_not_know() {
        let mut stored = Snapshot::default();
        let peeled = SValue::Oid("a".into(), Some("b".into()));
        stored.refs.insert("refs/tags/t".into(), peeled);
        stored
            .logs
            .insert("refs/tags/t".into(), vec![entry(Some(100))]);
        let mut model = Snapshot::default();
        model
            .refs
            .insert("refs/tags/t".into(), SValue::Oid("a".into(), None));
        model.logs.insert("refs/tags/t".into(), vec![entry(None)]);
        assert!(stored.agrees_with_model(&model));
        assert_eq!(stored.as_model_sees(), model);
        let mut other = model.clone();
        other.logs.get_mut("refs/tags/t").unwrap()[0].time = 8;
        assert!(!stored.agrees_with_model(&other));
        let mut other = model.clone();
        other
            .refs
            .insert("refs/heads/x".into(), SValue::Symref("y".into()));
        assert!(!stored.agrees_with_model(&other));
        let mut other = model.clone();
        other
            .refs
            .insert("refs/tags/t".into(), SValue::Oid("c".into(), None));
        assert!(!stored.agrees_with_model(&other));
        let mut other = model;
        other.logs.insert("refs/heads/x".into(), Vec::new());
        assert!(!stored.agrees_with_model(&other));
    }
}
