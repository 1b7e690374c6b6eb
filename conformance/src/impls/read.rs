//! An implementation's reading of a stack, through its adapter, as a [`Snapshot`] to set
//! against git's, and the differences per check.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use crate::impls::check::ImplCheck;
use crate::impls::process::{Adapter, Failure};
use crate::impls::wire::Answer;
use crate::snapshot::{SLog, SValue, Snapshot};

/// What went wrong asking: a failure of the adapter, or an answer that was not `done`.
#[derive(Clone, Debug)]
pub enum AskError {
    /// The adapter crashed or hung.
    Failed(Failure),
    /// It answered `error` (or refused a read).
    Answered(String),
    /// It does not offer the verb.
    Unsupported(String),
}

/// `request`'s `done` fields.
pub fn done(a: &mut Adapter, request: &Value) -> Result<Value, AskError> {
    match a.ask(request).map_err(AskError::Failed)? {
        Answer::Done(v) => Ok(v),
        Answer::Unsupported(m) => Err(AskError::Unsupported(m)),
        Answer::Error(m) => Err(AskError::Answered(m)),
        Answer::Refused(r) => Err(AskError::Answered(format!("refused a read: {}", r.message))),
    }
}

/// A ref object of the protocol as compared; `peeled` kept only where claimed.
fn svalue(r: &Value, peeled: bool) -> Option<SValue> {
    if let Some(t) = r.get("symref").and_then(Value::as_str) {
        return Some(SValue::Symref(t.to_string()));
    }
    let oid = r.get("oid").and_then(Value::as_str)?.to_string();
    let p = r.get("peeled").and_then(Value::as_str).filter(|_| peeled);
    Some(SValue::Oid(oid, p.map(String::from)))
}

/// A log entry of the protocol as compared (its message without the newline git stores, as
/// [`comparable`] leaves git's).
fn slog(e: &Value) -> SLog {
    let text = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let tz = e.get("tz").and_then(Value::as_i64).unwrap_or(0);
    SLog {
        old: text("old"),
        new: text("new"),
        message: text("message"),
        time: e.get("time").and_then(Value::as_u64).unwrap_or(0),
        tz: i16::try_from(tz).ok(),
        who: Some((text("name"), text("email"))),
    }
}

/// The implementation's refs and the reflogs of `names` (and of every name it lists).
pub fn read_all(a: &mut Adapter, names: &BTreeSet<String>) -> Result<Snapshot, AskError> {
    let peeled = a.hello.claims("peeled");
    let mut s = Snapshot::default();
    let refs = done(a, &json!({"verb": "refs"}))?;
    for r in refs
        .get("refs")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let name = r
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if let Some(v) = svalue(r, peeled) {
            s.refs.insert(name, v);
        }
    }
    let mut all = names.clone();
    if a.hello.offers("reflogs") {
        let listed = done(a, &json!({"verb": "reflogs"}))?;
        let listed = listed.get("names").and_then(Value::as_array).cloned();
        all.extend(
            listed
                .into_iter()
                .flatten()
                .filter_map(|n| n.as_str().map(String::from)),
        );
    }
    for n in all {
        let log = done(a, &json!({"verb": "reflog", "name": n}))?;
        if log.get("exists").and_then(Value::as_bool) != Some(true) {
            continue;
        }
        let entries = log.get("entries").and_then(Value::as_array);
        s.logs
            .insert(n, entries.into_iter().flatten().map(slog).collect());
    }
    Ok(s)
}

/// `git`'s state as the implementation can be asked to match it: peeled ids dropped where it
/// claims none, messages without the one newline the protocol leaves out.
pub fn comparable(git: &Snapshot, a: &Adapter) -> Snapshot {
    let mut s = git.clone();
    for e in s.logs.values_mut().flatten() {
        if e.message.ends_with('\n') {
            e.message.pop();
        }
    }
    if !a.hello.claims("peeled") {
        for v in s.refs.values_mut() {
            if let SValue::Oid(_, p) = v {
                *p = None;
            }
        }
    }
    s
}

/// The differences between what the implementation read (`got`) and git's state (`want`),
/// by check; the first few of each.
pub fn differences(got: &Snapshot, want: &Snapshot) -> Vec<(ImplCheck, String)> {
    let mut out = Vec::new();
    let names: BTreeSet<&String> = got.refs.keys().chain(want.refs.keys()).collect();
    for n in names {
        let (g, w) = (got.refs.get(n), want.refs.get(n));
        if g == w {
            continue;
        }
        let check = match (g, w) {
            (Some(SValue::Symref(_)), _) | (_, Some(SValue::Symref(_))) => ImplCheck::Symrefs,
            (Some(SValue::Oid(a, _)), Some(SValue::Oid(b, _))) if a == b => ImplCheck::Peeled,
            _ => ImplCheck::RefValues,
        };
        out.push((check, format!("{n}: read {g:?}, git has {w:?}")));
    }
    let names: BTreeSet<&String> = got.logs.keys().chain(want.logs.keys()).collect();
    for n in names {
        match (got.logs.get(n), want.logs.get(n)) {
            (Some(a), Some(b)) if a != b => out.push((ImplCheck::Reflogs, log_diff(n, a, b))),
            (Some(_), None) => {
                out.push((ImplCheck::ReflogNames, format!("{n}: a reflog git has not")))
            }
            (None, Some(b)) => out.push((
                ImplCheck::ReflogNames,
                format!("{n}: no reflog, git has one of {} entries", b.len()),
            )),
            _ => {}
        }
    }
    out
}

/// The first entry where two reflogs differ.
fn log_diff(n: &str, got: &[SLog], want: &[SLog]) -> String {
    let at = (got.iter().zip(want)).position(|(a, b)| a != b);
    match at {
        Some(i) => format!("{n}@{{{i}}}: read {:?}, git has {:?}", got[i], want[i]),
        None => format!("{n}: {} entries read, git has {}", got.len(), want.len()),
    }
}
