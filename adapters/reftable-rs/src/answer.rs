//! The protocol's four answers (`done`, `refused`, `unsupported`, `error`), and how the
//! library's errors map onto the refusal reasons the gate compares with git's.

use reftable::{Error, ErrorKind, Refusal};
use serde_json::{Map, Value};

/// One answer to one request.
#[derive(Debug)]
pub enum Answer {
    /// The verb did what was asked; the fields go into the answer object.
    Done(Map<String, Value>),
    /// Declined as git declines a transaction.
    Refused {
        /// One of `old-value`, `df-conflict`, `missing`, `name`, `lock`, `other`.
        reason: &'static str,
        /// A finer class, when there is one.
        detail: Option<&'static str>,
        /// The ref refused, when known.
        refname: Option<String>,
        /// The library's message.
        message: String,
    },
    /// The verb or an option of it is not offered.
    Unsupported(String),
    /// The library failed.
    Error(String),
}

impl Answer {
    /// `done` with no fields.
    pub fn done() -> Answer {
        Answer::Done(Map::new())
    }

    /// `done` with the fields of `fields` (a JSON object; anything else adds none).
    pub fn done_with(fields: Value) -> Answer {
        match fields {
            Value::Object(m) => Answer::Done(m),
            _ => Answer::done(),
        }
    }

    /// `error` with `message`.
    pub fn error(message: impl Into<String>) -> Answer {
        Answer::Error(message.into())
    }

    /// `unsupported` with `message`.
    pub fn unsupported(message: impl Into<String>) -> Answer {
        Answer::Unsupported(message.into())
    }

    /// The answer for a library error: a refusal where git refuses the same way, else an
    /// `error`.
    pub fn from_error(e: &Error) -> Answer {
        let message = format!("{e:#}");
        match classify(e) {
            Some((reason, detail, refname)) => Answer::Refused {
                reason,
                detail,
                refname,
                message,
            },
            None => Answer::Error(message),
        }
    }

    /// The answer as a JSON object, `id` echoed when the request had one.
    pub fn into_json(self, id: Option<&Value>) -> Value {
        let mut out = Map::new();
        if let Some(id) = id {
            out.insert("id".into(), id.clone());
        }
        let kind = match self {
            Answer::Done(fields) => {
                out.extend(fields);
                "done"
            }
            Answer::Refused {
                reason,
                detail,
                refname,
                message,
            } => {
                out.insert("reason".into(), reason.into());
                if let Some(d) = detail {
                    out.insert("detail".into(), d.into());
                }
                if let Some(r) = refname {
                    out.insert("ref".into(), r.into());
                }
                out.insert("message".into(), message.into());
                "refused"
            }
            Answer::Unsupported(m) => {
                out.insert("message".into(), m.into());
                "unsupported"
            }
            Answer::Error(m) => {
                out.insert("message".into(), m.into());
                "error"
            }
        };
        out.insert("answer".into(), kind.into());
        Value::Object(out)
    }
}

/// A refusal's reason, detail and ref.
type Class = (&'static str, Option<&'static str>, Option<String>);

/// The refusal class of `e`, or `None` when it is a failure rather than a refusal.
fn classify(e: &Error) -> Option<Class> {
    if let Some(r) = e.refusal() {
        return Some(of_refusal(r));
    }
    let reason: (&'static str, Option<&'static str>) = match e.kind() {
        ErrorKind::Lock => ("lock", None),
        ErrorKind::Outdated => ("lock", Some("outdated")),
        ErrorKind::Refname => ("name", None),
        ErrorKind::NameConflict => ("df-conflict", None),
        ErrorKind::OldValueMismatch => ("old-value", None),
        ErrorKind::InvalidObject => ("missing", None),
        // git refuses a record its block size cannot hold ("entry too large").
        ErrorKind::EntryTooBig => ("other", Some("entry-too-large")),
        // A ref that does not exist (a rename's source), not a file that vanished.
        ErrorKind::NotExist if e.file().is_none() => ("missing", None),
        _ => return None,
    };
    Some((reason.0, reason.1, None))
}

/// The class of one of the library's refusals.
fn of_refusal(r: &Refusal) -> Class {
    let show = |n: &[u8]| Some(String::from_utf8_lossy(n).into_owned());
    match r {
        Refusal::BadName { name, .. } => ("name", None, show(name)),
        Refusal::Duplicate { name, .. } => ("name", Some("duplicate"), show(name)),
        Refusal::DirectoryConflict { name, .. } => ("df-conflict", None, show(name)),
        Refusal::OldValue { name, .. } => ("old-value", None, show(name)),
        Refusal::DanglingSymref { name } => ("old-value", Some("dangling-symref"), show(name)),
        Refusal::MissingObject { name, .. } => ("missing", None, show(name)),
        Refusal::NonCommit { name, .. } => ("other", Some("non-commit"), show(name)),
        Refusal::SymrefNotMovable { name } => ("other", Some("symref-not-movable"), show(name)),
        _ => ("other", None, None),
    }
}
