//! The read verbs: `refs`, `ref`, `reflog`, `reflogs`.

use reftable::{RefDb, RefRecord, RefValue};
use serde_json::{json, Value};

use crate::answer::Answer;
use crate::wire::{log_json, ref_json, show, str_field};

/// A ref record as a `ref` object, a symref's chain resolved.
fn ref_object(db: &RefDb, rec: &RefRecord) -> reftable::Result<Value> {
    let resolved = match rec.value {
        RefValue::Symref(_) => db.resolve(&rec.refname)?,
        _ => None,
    };
    Ok(ref_json(rec, resolved))
}

/// `refs`: every live ref in name order.
pub fn refs(db: &RefDb) -> reftable::Result<Answer> {
    let mut out = Vec::new();
    let mut it = db.refs()?;
    while let Some(rec) = it.next_record()? {
        let rec = rec.clone();
        out.push(ref_object(db, &rec)?);
    }
    Ok(Answer::done_with(json!({ "refs": out })))
}

/// `ref`: one ref, `null` when it does not exist.
pub fn one_ref(db: &RefDb, req: &Value) -> Result<Answer, Answer> {
    let name = str_field(req, "name")?;
    let rec = db
        .read_ref(name.as_bytes())
        .map_err(|e| Answer::from_error(&e))?;
    let value = match rec {
        Some(rec) => ref_object(db, &rec).map_err(|e| Answer::from_error(&e))?,
        None => Value::Null,
    };
    Ok(Answer::done_with(json!({ "ref": value })))
}

/// `reflog`: one ref's entries, newest first, and whether its reflog exists.
pub fn reflog(db: &RefDb, req: &Value) -> Result<Answer, Answer> {
    let name = str_field(req, "name")?.as_bytes();
    let run = || -> reftable::Result<Answer> {
        let exists = db.reflog_exists(name)?;
        let mut entries = Vec::new();
        for rec in db.reflog(name)? {
            if let Some(u) = rec?.update() {
                entries.push(log_json(u));
            }
        }
        Ok(Answer::done_with(
            json!({ "exists": exists, "entries": entries }),
        ))
    };
    run().map_err(|e| Answer::from_error(&e))
}

/// `reflogs`: the names with a reflog, in name order.
pub fn reflogs(db: &RefDb) -> reftable::Result<Answer> {
    let mut names = Vec::new();
    let mut it = db.reflog_names()?;
    while let Some(n) = it.next_record()? {
        names.push(show(n));
    }
    Ok(Answer::done_with(json!({ "names": names })))
}
