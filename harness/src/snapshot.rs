//! Normalized ref and reflog state, taken from each implementation and compared.

use std::collections::BTreeMap;
use std::path::Path;

use reftable::refdb::RefDb;
use reftable::{LogValue, ObjectId, RefValue};

use crate::refs_model::{MEntry, MValue, Model};

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

/// Whether `hex` is `id` in lower-case hex.
fn is_hex_of(hex: &str, id: &ObjectId) -> bool {
    let mut buf = [0u8; 64];
    id.hex_into(&mut buf) == hex
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
    /// [`Snapshot::of_model`]`(m)`, without making either: a run compares after every step,
    /// and makes the model's snapshot only to show a difference.
    pub fn agrees_with(&self, m: &Model) -> bool {
        let value = |a: &SValue, b: &MValue| match (a, b) {
            (SValue::Oid(x, _), MValue::Oid(y)) => is_hex_of(x, y),
            (SValue::Symref(x), MValue::Symref(y)) => x == y,
            _ => false,
        };
        let entry = |a: &SLog, e: &MEntry| {
            is_hex_of(&a.old, &e.old)
                && is_hex_of(&a.new, &e.new)
                && a.message == String::from_utf8_lossy(&e.message)
                && a.time == e.time
        };
        let log = |a: &Vec<SLog>, b: &Vec<MEntry>| {
            // The entries `of_model` leaves out (git hides them) are skipped.
            let mut shown = b.iter().filter(|e| !(e.old.is_null() && e.new.is_null()));
            a.iter().all(|x| shown.next().is_some_and(|e| entry(x, e))) && shown.next().is_none()
        };
        self.refs.len() == m.refs.len()
            && (self.refs.iter().zip(&m.refs)).all(|((n, a), (k, b))| n == k && value(a, b))
            && self.logs.len() == m.logs.len()
            && (self.logs.iter().zip(&m.logs)).all(|((n, a), (k, b))| n == k && log(a, b))
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
    use crate::ops::LogRefsOpt;

    fn id(hex: char) -> ObjectId {
        ObjectId::from_hex(&hex.to_string().repeat(40)).unwrap()
    }

    fn model_entry(old: char, new: char, time: u64) -> MEntry {
        let (old, new, message) = (id(old), id(new), b"m\n".to_vec());
        MEntry {
            old,
            new,
            message,
            time,
        }
    }

    fn stored_entry(old: char, new: char) -> SLog {
        SLog {
            old: old.to_string().repeat(40),
            new: new.to_string().repeat(40),
            message: "m\n".into(),
            time: 7,
            tz: Some(100),
            who: Some(("C O Mitter".into(), "committer@example.com".into())),
        }
    }

    #[test]
    fn agreeing_with_the_model_ignores_what_the_model_does_not_know() {
        let mut stored = Snapshot::default();
        let peeled = SValue::Oid("a".repeat(40), Some("b".repeat(40)));
        stored.refs.insert("refs/tags/t".into(), peeled);
        let log = vec![stored_entry('0', '1')];
        stored.logs.insert("refs/tags/t".into(), log);
        let mut model = Model::new(id('0'), LogRefsOpt::True, 4096);
        model
            .refs
            .insert("refs/tags/t".into(), MValue::Oid(id('a')));
        // An entry with both ids null is hidden, as git hides it.
        let log = vec![model_entry('0', '1', 7), model_entry('0', '0', 6)];
        model.logs.insert("refs/tags/t".into(), log);
        assert!(stored.agrees_with(&model));
        assert_eq!(stored.as_model_sees(), Snapshot::of_model(&model));
        let differ = |change: &dyn Fn(&mut Model)| {
            let mut other = model.clone();
            change(&mut other);
            assert!(!stored.agrees_with(&other));
            assert_ne!(stored.as_model_sees(), Snapshot::of_model(&other));
        };
        differ(&|m| m.logs.get_mut("refs/tags/t").unwrap()[0].time = 8);
        differ(&|m| m.logs.get_mut("refs/tags/t").unwrap()[0].new = id('2'));
        differ(&|m| m.logs.get_mut("refs/tags/t").unwrap()[0].message = b"n\n".to_vec());
        differ(&|m| {
            m.logs
                .get_mut("refs/tags/t")
                .unwrap()
                .push(model_entry('1', '2', 5))
        });
        differ(&|m| m.logs.get_mut("refs/tags/t").unwrap().clear());
        differ(&|m| drop(m.logs.insert("refs/heads/x".into(), Vec::new())));
        differ(&|m| {
            drop(
                m.refs
                    .insert("refs/heads/x".into(), MValue::Symref("y".into())),
            )
        });
        differ(&|m| drop(m.refs.insert("refs/tags/t".into(), MValue::Oid(id('c')))));
        differ(&|m| {
            drop(
                m.refs
                    .insert("refs/tags/t".into(), MValue::Symref("x".into())),
            )
        });
    }
}
