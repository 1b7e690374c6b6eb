//! Why an operation was refused, as classes every implementation (git's messages, our
//! errors, the model's faults) is mapped to.

use serde::{Deserialize, Serialize};

use crate::model::Fault;

/// Why an operation was refused, in classes every implementation can be mapped to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrClass {
    /// Invalid ref name, pseudoref, or invalid symref target.
    BadName,
    /// Two updates of one ref.
    Duplicate,
    /// Directory/file conflict.
    DfConflict,
    /// Old value does not match.
    OldValue,
    /// New value names a missing object.
    MissingObject,
    /// Non-commit object on a branch.
    NonCommit,
    /// A lock is held by someone else.
    Lock,
    /// The stack changed on disk while the command ran (a concurrent writer): git's
    /// compaction and reflog expiry give up rather than reload.
    Outdated,
    /// `reflog expire` / `reflog delete` on a ref without a reflog (or that does not resolve).
    NoReflog,
    /// A record too large for the table's block size.
    EntryTooLarge,
    /// `git branch -m/-c` of a branch that does not exist (`git refs rename`: of a ref).
    NoBranch,
    /// `git branch -m/-c` onto an existing branch without force (`git refs rename`: ref).
    BranchExists,
    /// `git branch -m/-c` of a symref (the backend cannot move one).
    SymrefNotMovable,
}

impl ErrClass {
    /// The transaction fault this class reports, if it is one.
    pub fn fault(self) -> Option<Fault> {
        Some(match self {
            ErrClass::BadName => Fault::BadName,
            ErrClass::Duplicate => Fault::Duplicate,
            ErrClass::DfConflict => Fault::DfConflict,
            ErrClass::OldValue => Fault::OldValue,
            ErrClass::MissingObject => Fault::MissingObject,
            ErrClass::NonCommit => Fault::NonCommit,
            ErrClass::Lock
            | ErrClass::Outdated
            | ErrClass::NoReflog
            | ErrClass::EntryTooLarge
            | ErrClass::NoBranch
            | ErrClass::BranchExists
            | ErrClass::SymrefNotMovable => return None,
        })
    }

    /// The class of a fault.
    pub fn of_fault(f: Fault) -> ErrClass {
        match f {
            Fault::BadName => ErrClass::BadName,
            Fault::Duplicate => ErrClass::Duplicate,
            Fault::DfConflict => ErrClass::DfConflict,
            Fault::OldValue => ErrClass::OldValue,
            Fault::MissingObject => ErrClass::MissingObject,
            Fault::NonCommit => ErrClass::NonCommit,
        }
    }
}

/// The class of our library's error, if it is a refusal git also makes.
pub fn of_ours(e: &reftable::Error) -> Option<ErrClass> {
    if let Some(f) = crate::model::library_fault(e) {
        return Some(ErrClass::of_fault(f));
    }
    if let Some(reftable::Refusal::SymrefNotMovable { .. }) = e.refusal() {
        return Some(ErrClass::SymrefNotMovable);
    }
    match e.kind() {
        reftable::ErrorKind::Lock => Some(ErrClass::Lock),
        reftable::ErrorKind::Outdated => Some(ErrClass::Outdated),
        reftable::ErrorKind::EntryTooBig => Some(ErrClass::EntryTooLarge),
        _ => None,
    }
}
