//! What a ref points at: an object, or another ref (a symbolic ref). The one type for it
//! everywhere: an update's new value ([`crate::refdb::NewValue::Set`]), what it expects
//! ([`crate::refdb::Expected::Is`]), what a refusal found ([`crate::RefState::Is`]), what a
//! record or a read holds ([`crate::RefValue::target`]) and a files-backend ref.

use crate::hash::ObjectId;

/// An object id or a symref target.
///
/// ```
/// use reftable::{ObjectId, RefRecord, RefValue, Target};
/// let id = ObjectId::from_hex("1c2a7e431f340e344b233e7a96a11e55310b1471").unwrap();
/// let r = RefRecord::new("refs/heads/main", 1, RefValue::from(Target::Object(id)));
/// assert_eq!(r.value.target(), Some(Target::Object(id)));
/// let head = RefRecord::new("HEAD", 1, Target::Symref(b"refs/heads/main".to_vec()).into());
/// assert_eq!(head.value.target().unwrap().symref(), Some(&b"refs/heads/main"[..]));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// The ref points at this object.
    Object(ObjectId),
    /// The ref is a symbolic ref to the named ref.
    Symref(Vec<u8>),
}

impl Target {
    /// The object id, for a direct ref.
    pub fn object(&self) -> Option<&ObjectId> {
        match self {
            Target::Object(id) => Some(id),
            Target::Symref(_) => None,
        }
    }

    /// The name pointed at, for a symref.
    pub fn symref(&self) -> Option<&[u8]> {
        match self {
            Target::Object(_) => None,
            Target::Symref(t) => Some(t),
        }
    }
}
