//! One update of a transaction: which ref, its new value (or a deletion, or none: a check
//! only), what it must be now, and the flags git's `update-ref --stdin` takes.

use crate::hash::ObjectId;
use crate::target::Target;

/// What an update does to a ref: set it, or delete it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum NewValue {
    /// Point the ref at an object, or make it a symbolic ref to the named ref.
    Set(Target),
    /// Delete the ref (and its reflog).
    Delete,
}

/// What an update expects the ref to be before it applies (git's "old value").
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Expected {
    /// No check.
    #[default]
    Any,
    /// The ref must not exist.
    Absent,
    /// The ref must be this: at this object (resolved through symrefs, unless
    /// `no_deref`), or a symref to the named ref.
    Is(Target),
}

fn set_object(id: ObjectId) -> Option<NewValue> {
    Some(NewValue::Set(Target::Object(id)))
}

fn set_symref(target: &[u8]) -> Option<NewValue> {
    Some(NewValue::Set(Target::Symref(target.to_vec())))
}

fn is_object(old: Option<ObjectId>, otherwise: Expected) -> Expected {
    old.map_or(otherwise, |id| Expected::Is(Target::Object(id)))
}

fn is_symref(old: Option<&[u8]>, otherwise: Expected) -> Expected {
    old.map_or(otherwise, |t| Expected::Is(Target::Symref(t.to_vec())))
}

/// One update of a transaction, in the terms of `git update-ref --stdin`.
///
/// ```
/// use reftable::refdb::{Expected, NewValue, RefUpdate};
/// use reftable::{ObjectId, Target};
/// let id = ObjectId::from_hex("1c2a7e431f340e344b233e7a96a11e55310b1471").unwrap();
/// let u = RefUpdate::create("refs/heads/topic", id).message("branch: Created from main");
/// assert_eq!(u.new, Some(NewValue::Set(Target::Object(id))));
/// assert_eq!(u.expected, Expected::Absent);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RefUpdate {
    /// The ref to update.
    pub refname: Vec<u8>,
    /// The new value; `None` only checks [`RefUpdate::expected`] (`verify`).
    pub new: Option<NewValue>,
    /// What the ref must be now.
    pub expected: Expected,
    /// Update a symref itself rather than the ref it points to.
    pub no_deref: bool,
    /// Write a reflog entry even when `core.logAllRefUpdates` would not.
    pub create_reflog: bool,
    /// The reflog message (normalized as git does: whitespace runs become one space).
    pub message: Vec<u8>,
}

fn show(name: &[u8]) -> String {
    String::from_utf8_lossy(name).into_owned()
}

impl RefUpdate {
    /// An update of `refname` to `new` (or a check, with `None`) expecting `expected`.
    pub fn new(refname: impl AsRef<[u8]>, new: Option<NewValue>, expected: Expected) -> RefUpdate {
        RefUpdate {
            refname: refname.as_ref().to_vec(),
            new,
            expected,
            no_deref: false,
            create_reflog: false,
            message: Vec::new(),
        }
    }

    /// `update <ref> <new> [<old>]`.
    pub fn update(refname: impl AsRef<[u8]>, new: ObjectId, old: Option<ObjectId>) -> RefUpdate {
        RefUpdate::new(refname, set_object(new), is_object(old, Expected::Any))
    }

    /// `create <ref> <new>`: fails if the ref exists.
    pub fn create(refname: impl AsRef<[u8]>, new: ObjectId) -> RefUpdate {
        RefUpdate::new(refname, set_object(new), Expected::Absent)
    }

    /// `delete <ref> [<old>]`.
    pub fn delete(refname: impl AsRef<[u8]>, old: Option<ObjectId>) -> RefUpdate {
        RefUpdate::new(
            refname,
            Some(NewValue::Delete),
            is_object(old, Expected::Any),
        )
    }

    /// `verify <ref> [<old>]`: without `old`, the ref must not exist.
    pub fn verify(refname: impl AsRef<[u8]>, old: Option<ObjectId>) -> RefUpdate {
        RefUpdate::new(refname, None, is_object(old, Expected::Absent))
    }

    /// `symref-create <ref> <target>`: fails if the ref exists.
    pub fn symref_create(refname: impl AsRef<[u8]>, target: impl AsRef<[u8]>) -> RefUpdate {
        RefUpdate::new(refname, set_symref(target.as_ref()), Expected::Absent)
    }

    /// `symref-update <ref> <target> [ref <old-target> | oid <old-oid>]`.
    pub fn symref_update(
        refname: impl AsRef<[u8]>,
        target: impl AsRef<[u8]>,
        expected: Expected,
    ) -> RefUpdate {
        RefUpdate::new(refname, set_symref(target.as_ref()), expected)
    }

    /// `symref-delete <ref> [<old-target>]` (always without dereferencing).
    pub fn symref_delete(refname: impl AsRef<[u8]>, old_target: Option<&[u8]>) -> RefUpdate {
        let expected = is_symref(old_target, Expected::Any);
        RefUpdate::new(refname, Some(NewValue::Delete), expected).no_deref()
    }

    /// `symref-verify <ref> [<old-target>]`: without a target, the ref must not exist.
    pub fn symref_verify(refname: impl AsRef<[u8]>, old_target: Option<&[u8]>) -> RefUpdate {
        RefUpdate::new(refname, None, is_symref(old_target, Expected::Absent)).no_deref()
    }

    /// Set the reflog message.
    pub fn message(mut self, msg: impl AsRef<[u8]>) -> RefUpdate {
        self.message = msg.as_ref().to_vec();
        self
    }

    /// Update a symref itself (`option no-deref`).
    pub fn no_deref(mut self) -> RefUpdate {
        self.no_deref = true;
        self
    }

    /// Force a reflog entry (`--create-reflog`).
    pub fn create_reflog(mut self) -> RefUpdate {
        self.create_reflog = true;
        self
    }

    /// Whether the update deletes its ref.
    pub fn deletes(&self) -> bool {
        self.new == Some(NewValue::Delete)
    }

    /// The `git update-ref --stdin` line(s) for this update (without the message, which
    /// `update-ref` takes from `-m`): `option no-deref` first when set. `None` for the
    /// combinations update-ref cannot express: a new object id with an old symref target, a
    /// deletion expecting no ref, and a check of nothing.
    ///
    /// ```
    /// use reftable::refdb::RefUpdate;
    /// use reftable::ObjectId;
    /// let id = ObjectId::from_hex("1c2a7e431f340e344b233e7a96a11e55310b1471").unwrap();
    /// assert_eq!(RefUpdate::create("refs/heads/x", id).update_ref_command().unwrap(),
    ///            format!("create refs/heads/x {id}\n"));
    /// assert_eq!(RefUpdate::symref_delete("HEAD", Some(b"refs/heads/main"))
    ///                .update_ref_command().unwrap(),
    ///            "option no-deref\nsymref-delete HEAD refs/heads/main\n");
    /// ```
    pub fn update_ref_command(&self) -> Option<String> {
        let name = show(&self.refname);
        let mut out = String::new();
        if self.no_deref {
            out.push_str("option no-deref\n");
        }
        use Target::{Object, Symref};
        let line = match (&self.new, &self.expected) {
            (Some(NewValue::Set(Object(n))), Expected::Absent) => format!("create {name} {n}"),
            (Some(NewValue::Set(Object(n))), Expected::Is(Object(o))) => {
                format!("update {name} {n} {o}")
            }
            (Some(NewValue::Set(Object(n))), Expected::Any) => format!("update {name} {n}"),
            // An object id with an old symref target has no update-ref syntax.
            (Some(NewValue::Set(Object(_))), Expected::Is(Symref(_))) => return None,
            (Some(NewValue::Delete), Expected::Is(Symref(t))) => {
                format!("symref-delete {name} {}", show(t))
            }
            (Some(NewValue::Delete), Expected::Is(Object(o))) => format!("delete {name} {o}"),
            // update-ref refuses a zero old value for `delete`.
            (Some(NewValue::Delete), Expected::Absent) => return None,
            (Some(NewValue::Delete), Expected::Any) => format!("delete {name}"),
            (Some(NewValue::Set(Symref(t))), Expected::Absent) => {
                format!("symref-create {name} {}", show(t))
            }
            (Some(NewValue::Set(Symref(t))), Expected::Is(Object(o))) => {
                format!("symref-update {name} {} oid {o}", show(t))
            }
            (Some(NewValue::Set(Symref(t))), Expected::Is(Symref(o))) => {
                format!("symref-update {name} {} ref {}", show(t), show(o))
            }
            (Some(NewValue::Set(Symref(t))), Expected::Any) => {
                format!("symref-update {name} {}", show(t))
            }
            (None, Expected::Is(Symref(t))) => format!("symref-verify {name} {}", show(t)),
            (None, Expected::Is(Object(o))) => format!("verify {name} {o}"),
            (None, Expected::Absent) => format!("verify {name}"),
            // A check of nothing: `verify` without an old value checks for absence.
            (None, Expected::Any) => return None,
        };
        out.push_str(&line);
        out.push('\n');
        Some(out)
    }
}
