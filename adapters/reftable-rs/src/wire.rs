//! The protocol's types (adapters/PROTOCOL.md, "Types") read from requests and written into
//! answers: object ids, ref values, identities, ref objects and reflog entries.

use crate::plant::{planted, Plant};
use reftable::refdb::{Expected, NewValue};
use reftable::{HashId, LogUpdate, ObjectId, RefRecord, RefValue, Signature, Target, TzOffset};
use serde_json::{json, Value};

use crate::answer::Answer;

/// Bytes from the library shown as a JSON string (U+FFFD for bytes that are not UTF-8).
pub fn show(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The string field `key` of `req`, or an `error` answer naming it.
pub fn str_field<'a>(req: &'a Value, key: &str) -> Result<&'a str, Answer> {
    req.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| Answer::error(format!("missing string field '{key}'")))
}

/// The boolean field `key` of `req`; absent or `null` is `false`.
pub fn bool_field(req: &Value, key: &str) -> Result<bool, Answer> {
    match req.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(Answer::error(format!("field '{key}' must be a boolean"))),
    }
}

/// An object id of the repository's hash: lowercase hex of the right length.
pub fn parse_oid(s: &str, hash: HashId) -> Result<ObjectId, Answer> {
    let want = ObjectId::null(hash).len() * 2;
    let lower = s
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    if s.len() != want || !lower {
        return Err(Answer::error(format!(
            "'{s}' is not a lowercase hex object id of {want} digits"
        )));
    }
    ObjectId::from_hex(s).ok_or_else(|| Answer::error(format!("bad object id '{s}'")))
}

/// A `{"symref": target}` object's target, if `v` is one.
fn symref_of(v: &Value) -> Option<&str> {
    v.as_object()?.get("symref")?.as_str()
}

/// An update's `new` field: `None` when absent (a check only).
pub fn parse_new(v: Option<&Value>, hash: HashId) -> Result<Option<NewValue>, Answer> {
    let Some(v) = v else { return Ok(None) };
    if v.is_null() {
        return Ok(Some(NewValue::Delete));
    }
    if let Some(t) = symref_of(v) {
        return Ok(Some(NewValue::Set(Target::Symref(t.as_bytes().to_vec()))));
    }
    let s = v
        .as_str()
        .ok_or_else(|| Answer::error("'new' must be an object id, null or {\"symref\": ...}"))?;
    let id = parse_oid(s, hash)?;
    Ok(Some(if id.is_null() {
        NewValue::Delete
    } else {
        NewValue::Set(Target::Object(id))
    }))
}

/// An update's `old` field. `"present"` has no counterpart in the library (nor in git's ref
/// API): an `unsupported` answer.
pub fn parse_old(v: Option<&Value>, hash: HashId) -> Result<Expected, Answer> {
    let v = match v {
        None | Some(Value::Null) => return Ok(Expected::Any),
        Some(v) => v,
    };
    if let Some(t) = symref_of(v) {
        return Ok(Expected::Is(Target::Symref(t.as_bytes().to_vec())));
    }
    match v.as_str() {
        Some("any") => Ok(Expected::Any),
        Some("absent") => Ok(Expected::Absent),
        Some("present") => Err(Answer::unsupported(
            "old value \"present\": the library (like git's ref API) has no must-exist check",
        )),
        Some(s) => {
            let id = parse_oid(s, hash)?;
            Ok(if id.is_null() {
                Expected::Absent
            } else {
                Expected::Is(Target::Object(id))
            })
        }
        None => Err(Answer::error("'old' must be a string or {\"symref\": ...}")),
    }
}

/// An `ident` object as the library's [`Signature`].
pub fn parse_ident(v: Option<&Value>) -> Result<Signature, Answer> {
    let v = v.ok_or_else(|| Answer::error("missing field 'committer'"))?;
    let text = |k: &str| str_field(v, k).map(|s| s.as_bytes().to_vec());
    let time = v.get("time").and_then(Value::as_u64);
    let tz = v
        .get("tz")
        .and_then(Value::as_i64)
        .and_then(|t| i16::try_from(t).ok());
    let (Some(time), Some(tz_offset)) = (time, tz) else {
        return Err(Answer::error("committer needs integer 'time' and 'tz'"));
    };
    Ok(Signature {
        name: text("name")?,
        email: text("email")?,
        time,
        tz_offset: TzOffset::from_hhmm(tz_offset),
    })
}

/// A `ref` object; `resolved` is what a symref's chain resolves to.
pub fn ref_json(rec: &RefRecord, resolved: Option<ObjectId>) -> Value {
    let hex = |id: &ObjectId| id.to_string();
    let (oid, symref, peeled) = match &rec.value {
        RefValue::Object(id) => (Some(hex(id)), None, None),
        RefValue::Peeled { object, peeled } => (Some(hex(object)), None, Some(hex(peeled))),
        RefValue::Symref(_) if planted(Plant::DropSymrefTarget) => {
            (resolved.as_ref().map(hex), None, None)
        }
        RefValue::Symref(t) => (resolved.as_ref().map(hex), Some(show(t)), None),
        RefValue::Deletion => (None, None, None),
    };
    json!({"name": show(&rec.refname), "oid": oid, "symref": symref, "peeled": peeled})
}

/// A `log_entry` object: the message with its one trailing newline removed.
pub fn log_json(u: &LogUpdate) -> Value {
    let msg = u.message.strip_suffix(b"\n").unwrap_or(&u.message);
    let old = if planted(Plant::ReflogWrongOld) {
        &u.new_id
    } else {
        &u.old_id
    };
    json!({
        "old": old.to_string(),
        "new": u.new_id.to_string(),
        "name": show(&u.committer.name),
        "email": show(&u.committer.email),
        "time": u.committer.time,
        "tz": u.committer.tz_offset.hhmm(),
        "message": show(msg),
    })
}
