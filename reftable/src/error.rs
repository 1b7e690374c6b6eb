//! The library's one error type.
//!
//! Every failure carries an [`ErrorKind`] that mirrors the error codes of git's reftable
//! library (so callers and the conformance harness can compare error classes with git), plus
//! where it happened: the file and the byte offset when they are known.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use crate::hash::ObjectId;
use crate::target::Target;

/// What went wrong, in the classes git's reftable library uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Reading or writing a file failed (git: `REFTABLE_IO_ERROR`).
    Io,
    /// The bytes are not a valid reftable (git: `REFTABLE_FORMAT_ERROR`, "corrupt reftable file").
    Format,
    /// A file that should exist does not (git: `REFTABLE_NOT_EXIST_ERROR`).
    NotExist,
    /// A lock is held by someone else (git: `REFTABLE_LOCK_ERROR`).
    Lock,
    /// The API was used wrongly: unsorted keys, empty key, update index out of limits,
    /// multi-line log message… (git: `REFTABLE_API_ERROR`).
    Api,
    /// Compressed log data could not be inflated (git: `REFTABLE_ZLIB_ERROR`).
    Zlib,
    /// A writer was closed without any record (git: `REFTABLE_EMPTY_TABLE_ERROR`).
    EmptyTable,
    /// A reference name is invalid or conflicts with another (git: `REFTABLE_REFNAME_ERROR`).
    Refname,
    /// A record does not fit into a block (git: `REFTABLE_ENTRY_TOO_BIG_ERROR`).
    EntryTooBig,
    /// The on-disk stack changed since it was loaded (git: `REFTABLE_OUTDATED_ERROR`).
    Outdated,
    /// A ref transaction was refused because names conflict: a D/F conflict (`a` and
    /// `a/b`) or several updates of one ref (git's ref layer: `TRANSACTION_NAME_CONFLICT`).
    NameConflict,
    /// A ref transaction was refused because a ref's current value is not the expected old
    /// value (git: "cannot lock ref …: is at … but expected …").
    OldValueMismatch,
    /// A ref transaction was refused because a new value names a missing object, or a
    /// non-commit for a branch.
    InvalidObject,
    /// The caller's object lookup (`refdb::ObjectLookup`) failed (its error is the source).
    ObjectLookup,
}

impl ErrorKind {
    /// git's own wording for this class of error (`reftable_error_str`).
    pub fn git_str(self) -> &'static str {
        match self {
            ErrorKind::Io => "I/O error",
            ErrorKind::Format => "corrupt reftable file",
            ErrorKind::NotExist => "file does not exist",
            ErrorKind::Lock => "data is locked",
            ErrorKind::Api => "misuse of the reftable API",
            ErrorKind::Zlib => "zlib failure",
            ErrorKind::EmptyTable => "wrote empty table",
            ErrorKind::Refname => "invalid refname",
            ErrorKind::EntryTooBig => "entry too large",
            ErrorKind::Outdated => "data concurrently modified",
            ErrorKind::NameConflict => "reference name conflict",
            ErrorKind::OldValueMismatch => "reference has an unexpected value",
            ErrorKind::InvalidObject => "invalid object for reference",
            ErrorKind::ObjectLookup => "object lookup failed",
        }
    }

    /// git's numeric error code for this class (negative, as in `reftable-error.h`).
    pub fn git_code(self) -> i32 {
        match self {
            ErrorKind::Io => -2,
            ErrorKind::Format => -3,
            ErrorKind::NotExist => -4,
            ErrorKind::Lock => -5,
            ErrorKind::Api => -6,
            ErrorKind::Zlib => -7,
            ErrorKind::EmptyTable => -8,
            ErrorKind::Refname => -10,
            ErrorKind::EntryTooBig => -11,
            ErrorKind::Outdated => -12,
            // Errors of git's ref layer, which reports them all as a failed transaction.
            ErrorKind::NameConflict
            | ErrorKind::OldValueMismatch
            | ErrorKind::InvalidObject
            | ErrorKind::ObjectLookup => -1,
        }
    }
}

/// What a ref is or holds, as a refusal reports it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RefState {
    /// No such ref (or, for an expectation, "must not exist").
    Absent,
    /// A ref with this value: an object (for a symref that is dereferenced: the object it
    /// resolves to) or, where a symref itself was expected or found, its target.
    Is(Target),
    /// A symref that cannot be resolved (too deep, or its chain is broken).
    Unresolvable,
}

/// Why a ref transaction was refused, with the fields a caller needs to act on it. Carried by
/// the [`Error`] (see [`Error::refusal`]); each variant goes with one [`ErrorKind`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Refusal {
    /// An invalid ref name, a pseudoref, or an invalid symref target
    /// ([`ErrorKind::Refname`]).
    BadName {
        /// The name.
        name: Vec<u8>,
        /// What is wrong with it.
        why: &'static str,
    },
    /// Two updates of one ref ([`ErrorKind::NameConflict`]).
    Duplicate {
        /// The ref updated twice.
        name: Vec<u8>,
        /// The symref (or `HEAD`) the second update came through, if any.
        via: Option<Vec<u8>>,
    },
    /// A directory/file conflict: `name` and `existing` cannot both exist
    /// ([`ErrorKind::NameConflict`]).
    DirectoryConflict {
        /// The ref being created.
        name: Vec<u8>,
        /// The ref in the way.
        existing: Vec<u8>,
        /// Whether `existing` is another update of the same transaction rather than a ref
        /// in the database.
        in_transaction: bool,
    },
    /// The ref does not have the value the update expects ([`ErrorKind::OldValueMismatch`]).
    OldValue {
        /// The ref, as the update named it.
        name: Vec<u8>,
        /// What the update expected.
        expected: RefState,
        /// What the ref is.
        actual: RefState,
    },
    /// A no-deref update expecting no ref found a dangling symref, which it would have
    /// overwritten ([`ErrorKind::OldValueMismatch`]; git 2.52 and later).
    DanglingSymref {
        /// The symref.
        name: Vec<u8>,
    },
    /// The new value names an object that does not exist ([`ErrorKind::InvalidObject`]).
    MissingObject {
        /// The ref.
        name: Vec<u8>,
        /// The object.
        id: ObjectId,
    },
    /// A non-commit object for a branch or `HEAD` ([`ErrorKind::InvalidObject`]).
    NonCommit {
        /// The branch.
        name: Vec<u8>,
        /// The object.
        id: ObjectId,
    },
    /// A rename or copy of a symref, which git's backend cannot move with its reflog
    /// ([`ErrorKind::Api`]).
    SymrefNotMovable {
        /// The symref.
        name: Vec<u8>,
    },
}

impl Refusal {
    /// The error kind this refusal is reported with.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Refusal::BadName { .. } => ErrorKind::Refname,
            Refusal::Duplicate { .. } | Refusal::DirectoryConflict { .. } => {
                ErrorKind::NameConflict
            }
            Refusal::OldValue { .. } | Refusal::DanglingSymref { .. } => {
                ErrorKind::OldValueMismatch
            }
            Refusal::MissingObject { .. } | Refusal::NonCommit { .. } => ErrorKind::InvalidObject,
            Refusal::SymrefNotMovable { .. } => ErrorKind::Api,
        }
    }
}

/// The error type of every fallible operation in this crate.
///
/// `{}` shows the file, the offset and what failed; an error caused by another one (an I/O
/// error, the caller's object lookup) returns it from [`source`](std::error::Error::source)
/// and does not repeat its text, so that chain printers (anyhow, eyre) show each cause
/// once. `{:#}` appends the causes, as anyhow's `{:#}` does: `what: cause: cause...`.
///
/// ```
/// use reftable::{Error, ErrorKind};
/// let err = Error::new(ErrorKind::Format, "bad magic").at_offset(0).in_file("t.ref");
/// assert_eq!(err.kind(), ErrorKind::Format);
/// assert_eq!(err.to_string(), "t.ref: offset 0: bad magic");
///
/// let denied = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "denied");
/// let err = Error::io(denied, "open table").in_file("t.ref");
/// assert_eq!(err.to_string(), "t.ref: open table");
/// assert_eq!(format!("{err:#}"), "t.ref: open table: denied");
/// ```
pub struct Error(Box<Inner>);

/// What an [`Error`] holds, behind one pointer: a `Result` of the crate is then one word
/// bigger than its value, which the per-record paths return at every level.
struct Inner {
    kind: ErrorKind,
    message: String,
    file: Option<PathBuf>,
    offset: Option<u64>,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
    refusal: Option<Box<Refusal>>,
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = &self.0;
        f.debug_struct("Error")
            .field("kind", &e.kind)
            .field("message", &e.message)
            .field("file", &e.file)
            .field("offset", &e.offset)
            .field("source", &e.source)
            .field("refusal", &e.refusal)
            .finish()
    }
}

impl Error {
    /// A new error of `kind` with a message saying what was expected and what was found.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error(Box::new(Inner {
            kind,
            message: message.into(),
            file: None,
            offset: None,
            source: None,
            refusal: None,
        }))
    }

    /// A refused ref transaction: the error of `refusal`'s kind, with `message`.
    pub fn refused(refusal: Refusal, message: impl Into<String>) -> Error {
        let mut e = Error::new(refusal.kind(), message);
        e.0.refusal = Some(Box::new(refusal));
        e
    }

    /// An error from outside the crate (such as an object lookup), kept as the source:
    /// the message says what failed (`what`), the source why.
    pub fn wrap(
        kind: ErrorKind,
        what: impl Into<String>,
        source: Box<dyn std::error::Error + Send + Sync>,
    ) -> Error {
        let mut e = Error::new(kind, what);
        e.0.source = Some(source);
        e
    }

    /// A format error ("corrupt reftable file") with a message.
    pub fn format(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Format, message)
    }

    /// An API misuse error with a message.
    pub fn api(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Api, message)
    }

    /// An I/O error: the message says what failed (`what`), the underlying error, kept as
    /// the source, why. `NotFound` becomes [`ErrorKind::NotExist`].
    pub fn io(err: io::Error, what: impl Into<String>) -> Error {
        let kind = if err.kind() == io::ErrorKind::NotFound {
            ErrorKind::NotExist
        } else {
            ErrorKind::Io
        };
        Error::wrap(kind, what, Box::new(err))
    }

    /// Attach the file this error is about (kept if one is already set).
    pub fn in_file(mut self, file: impl AsRef<Path>) -> Error {
        if self.0.file.is_none() {
            self.0.file = Some(file.as_ref().to_path_buf());
        }
        self
    }

    /// Attach the byte offset in the file where the problem is (kept if one is already set).
    pub fn at_offset(mut self, offset: u64) -> Error {
        if self.0.offset.is_none() {
            self.0.offset = Some(offset);
        }
        self
    }

    /// The class of the error.
    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }

    /// The message, without file, offset and source.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// The file the error is about, if known.
    pub fn file(&self) -> Option<&Path> {
        self.0.file.as_deref()
    }

    /// The byte offset in the file, if known.
    pub fn offset(&self) -> Option<u64> {
        self.0.offset
    }

    /// Why a ref transaction was refused, when it was.
    ///
    /// ```
    /// use reftable::{Error, Refusal, RefState, Target};
    /// let e = Error::refused(
    ///     Refusal::OldValue { name: b"refs/heads/x".to_vec(), expected: RefState::Absent, actual: RefState::Is(Target::Symref(b"refs/heads/y".to_vec())) },
    ///     "cannot lock ref 'refs/heads/x': reference already exists",
    /// );
    /// assert!(matches!(e.refusal(), Some(Refusal::OldValue { expected: RefState::Absent, .. })));
    /// ```
    pub fn refusal(&self) -> Option<&Refusal> {
        self.0.refusal.as_deref()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.0.file {
            write!(f, "{}: ", file.display())?;
        }
        if let Some(offset) = self.0.offset {
            write!(f, "offset {offset}: ")?;
        }
        f.write_str(&self.0.message)?;
        if f.alternate() {
            let mut cause = std::error::Error::source(self);
            while let Some(c) = cause {
                write!(f, ": {c}")?;
                cause = c.source();
            }
        }
        Ok(())
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0
            .source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    /// A wrapped I/O error: `Display` says what failed without the I/O error's text, which
    /// comes once as the source; `{:#}` and a chain printer show it after the message.
    #[test]
    fn the_message_does_not_repeat_the_source() {
        let io_err = io::Error::new(io::ErrorKind::PermissionDenied, "no entry for you");
        let e = Error::io(io_err, "open table").in_file("t.ref");
        assert_eq!(e.kind(), ErrorKind::Io);
        assert_eq!(e.to_string(), "t.ref: open table");
        assert!(!e.to_string().contains("no entry for you"));
        assert_eq!(e.message(), "open table");
        assert_eq!(e.source().unwrap().to_string(), "no entry for you");
        assert_eq!(format!("{e:#}"), "t.ref: open table: no entry for you");
        // What a chain printer (anyhow's "{:#}", eyre) writes: each cause once.
        let mut chain = vec![e.to_string()];
        let mut cause = e.source();
        while let Some(c) = cause {
            chain.push(c.to_string());
            cause = c.source();
        }
        assert_eq!(chain.join(": "), "t.ref: open table: no entry for you");
        let lookup = Error::wrap(ErrorKind::ObjectLookup, "looking up x", "odb gone".into());
        assert_eq!(
            (lookup.to_string(), format!("{lookup:#}")),
            (
                "looking up x".to_string(),
                "looking up x: odb gone".to_string()
            )
        );
        assert_eq!(format!("{:#}", Error::format("bad")), "bad");
    }

    /// Each kind maps to the number and the sentence git's reftable library gives the
    /// same class of error; the ref layer's refusals all share git's generic failure.
    #[test]
    fn kinds_report_gits_error_code_and_wording() {
        let cases = [
            (ErrorKind::Io, -2, "I/O error"),
            (ErrorKind::Format, -3, "corrupt reftable file"),
            (ErrorKind::NotExist, -4, "file does not exist"),
            (ErrorKind::Lock, -5, "data is locked"),
            (ErrorKind::Api, -6, "misuse of the reftable API"),
            (ErrorKind::Zlib, -7, "zlib failure"),
            (ErrorKind::EmptyTable, -8, "wrote empty table"),
            (ErrorKind::Refname, -10, "invalid refname"),
            (ErrorKind::EntryTooBig, -11, "entry too large"),
            (ErrorKind::Outdated, -12, "data concurrently modified"),
        ];
        for (kind, code, text) in cases {
            assert_eq!((kind.git_code(), kind.git_str()), (code, text), "{kind:?}");
        }
        for kind in [
            ErrorKind::NameConflict,
            ErrorKind::OldValueMismatch,
            ErrorKind::InvalidObject,
            ErrorKind::ObjectLookup,
        ] {
            assert_eq!(kind.git_code(), -1, "{kind:?}");
        }
    }
}
