//! What transactions ask about objects. The crate has no object database: the caller answers
//! through [`ObjectLookup`], and may fail (the transaction then fails with
//! [`ErrorKind::ObjectLookup`](crate::ErrorKind::ObjectLookup), the lookup's error as its
//! source).

use crate::hash::ObjectId;

/// What the object database says about an object id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectKind {
    /// No such object.
    Missing,
    /// A commit.
    Commit,
    /// An annotated tag that peels to `peeled` (the final non-tag object).
    Tag {
        /// The fully peeled object.
        peeled: ObjectId,
    },
    /// A tree or blob.
    Other,
}

/// An object lookup's own error.
pub type LookupError = Box<dyn std::error::Error + Send + Sync>;

/// Answers object questions for transactions: existence (git refuses to point refs at
/// missing objects and branches at non-commits) and peeling (annotated tags are stored with
/// their peeled value).
///
/// ```
/// use reftable::refdb::{LookupError, ObjectKind, ObjectLookup};
/// use reftable::ObjectId;
///
/// struct Commits(Vec<ObjectId>);
/// impl ObjectLookup for Commits {
///     fn lookup(&self, id: &ObjectId) -> Result<ObjectKind, LookupError> {
///         Ok(if self.0.contains(id) { ObjectKind::Commit } else { ObjectKind::Missing })
///     }
/// }
/// ```
pub trait ObjectLookup {
    /// What `id` is.
    fn lookup(&self, id: &ObjectId) -> Result<ObjectKind, LookupError>;
}

/// An [`ObjectLookup`] that takes every object for an existing commit: no verification and
/// no peeled values.
#[derive(Clone, Copy, Debug, Default)]
pub struct AssumeCommits;

impl ObjectLookup for AssumeCommits {
    fn lookup(&self, _id: &ObjectId) -> Result<ObjectKind, LookupError> {
        Ok(ObjectKind::Commit)
    }
}
