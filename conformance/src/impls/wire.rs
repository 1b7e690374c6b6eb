//! The adapter protocol's messages as the gate sends and reads them (`adapters/PROTOCOL.md`,
//! version 1): requests made from the case's operations, answers read into types. Written
//! apart from the reference adapter's side, so that the two check each other.

use serde_json::{json, Value};

use crate::ops::{Update, Value as OpValue};

/// The protocol version the gate speaks.
pub const PROTOCOL: u64 = 1;

/// What an adapter answered.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// Done, with the answer's fields.
    Done(Value),
    /// Declined as git declines a transaction.
    Refused(Refusal),
    /// A verb or option the implementation does not offer (never a finding).
    Unsupported(String),
    /// The implementation failed.
    Error(String),
}

/// A refusal: the protocol's reason, the implementation's words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// `old-value`, `df-conflict`, `missing`, `name`, `lock` or `other`.
    pub reason: String,
    /// The finer class an adapter may add (`duplicate`, `outdated`, `non-commit`, ...).
    pub detail: Option<String>,
    /// The implementation's message.
    pub message: String,
}

impl Answer {
    /// An answer line read into its kind; a line that is not one is the adapter's fault.
    pub fn parse(line: &str) -> Result<Answer, String> {
        let v: Value = serde_json::from_str(line).map_err(|e| format!("not JSON ({e}): {line}"))?;
        let text = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        match v.get("answer").and_then(Value::as_str) {
            Some("done") => Ok(Answer::Done(v)),
            Some("refused") => Ok(Answer::Refused(Refusal {
                reason: text("reason"),
                detail: v.get("detail").and_then(Value::as_str).map(String::from),
                message: text("message"),
            })),
            Some("unsupported") => Ok(Answer::Unsupported(text("message"))),
            Some("error") => Ok(Answer::Error(text("message"))),
            _ => Err(format!("no answer kind: {line}")),
        }
    }
}

/// What an adapter says of itself in `hello`.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Hello {
    /// The implementation's name.
    pub implementation: String,
    /// Its version (a release or a checkout's commit).
    pub version: String,
    /// The verbs it answers.
    pub verbs: Vec<String>,
    /// What it claims (`peeled`, `reflogs_written`, `byte_identical_tables`, ...).
    pub claims: Vec<String>,
    /// The object formats it handles.
    pub hashes: Vec<String>,
}

impl Hello {
    /// `hello`'s answer read; one that names no implementation is an error.
    pub fn of(v: &Value) -> Result<Hello, String> {
        let list = |k: &str| -> Vec<String> {
            let items = v
                .get(k)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            items
                .iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        };
        let text = |k: &str| v.get(k).and_then(Value::as_str).map(String::from);
        Ok(Hello {
            implementation: text("implementation").ok_or("hello names no implementation")?,
            version: text("version").unwrap_or_default(),
            verbs: list("verbs"),
            claims: list("claims"),
            hashes: list("hashes"),
        })
    }

    /// Whether it answers `verb`.
    pub fn offers(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == verb)
    }

    /// Whether it claims `claim`.
    pub fn claims(&self, claim: &str) -> bool {
        self.claims.iter().any(|c| c == claim)
    }
}

/// A committer identity and date.
pub fn ident(c: &reftable::Signature) -> Value {
    json!({
        "name": String::from_utf8_lossy(&c.name),
        "email": String::from_utf8_lossy(&c.email),
        "time": c.time,
        "tz": c.tz_offset.hhmm(),
    })
}

/// One update of a case's transaction as the protocol's update.
pub fn update(u: &Update, message: &str, create_reflog: bool) -> Value {
    let mut o = serde_json::Map::new();
    o.insert("name".into(), json!(u.refname));
    if let Some(new) = &u.new {
        o.insert("new".into(), value(new, true));
    }
    if let Some(old) = &u.old {
        o.insert("old".into(), value(old, false));
    }
    if u.no_deref {
        o.insert("no_deref".into(), json!(true));
    }
    if create_reflog && u.takes_create_reflog() {
        o.insert("create_reflog".into(), json!(true));
    }
    o.insert("message".into(), json!(message));
    Value::Object(o)
}

/// A value as the protocol writes it: an object id, or a symref target; the null id is
/// `null` as a new value (delete) and `"absent"` as an old one.
fn value(v: &OpValue, new: bool) -> Value {
    match v {
        OpValue::Oid(h) if h.bytes().all(|b| b == b'0') => {
            if new {
                Value::Null
            } else {
                json!("absent")
            }
        }
        OpValue::Oid(h) => json!(h),
        OpValue::Symref(t) => json!({ "symref": t }),
    }
}

/// A `transaction` request.
pub fn transaction(
    updates: &[Update],
    message: &str,
    create_reflog: bool,
    c: &reftable::Signature,
) -> Value {
    let ups: Vec<Value> = (updates.iter())
        .map(|u| update(u, message, create_reflog))
        .collect();
    json!({"verb": "transaction", "committer": ident(c), "updates": ups})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_read_by_kind() {
        let r = Answer::parse(r#"{"answer":"refused","reason":"old-value","message":"m"}"#);
        let Ok(Answer::Refused(r)) = r else {
            panic!("{r:?}")
        };
        assert_eq!((r.reason.as_str(), r.detail), ("old-value", None));
        assert!(matches!(
            Answer::parse(r#"{"answer":"unsupported","message":"no"}"#),
            Ok(Answer::Unsupported(_))
        ));
        assert!(Answer::parse("{}").is_err());
        assert!(Answer::parse("garbage").is_err());
    }

    #[test]
    fn null_ids_are_deletions_and_absences() {
        let null = "0".repeat(40);
        let u = Update {
            refname: "refs/heads/a".into(),
            new: Some(OpValue::Oid(null.clone())),
            old: Some(OpValue::Oid(null)),
            no_deref: true,
        };
        let v = update(&u, "m", true);
        assert_eq!(v["new"], Value::Null);
        assert_eq!(v["old"], json!("absent"));
        assert_eq!(v["no_deref"], json!(true));
        assert!(
            v.get("create_reflog").is_none(),
            "a deletion takes no --create-reflog"
        );
    }
}
