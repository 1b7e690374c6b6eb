//! The library's one error type.
//!
//! Every failure carries an [`ErrorKind`] that mirrors the error codes of git's reftable
//! library (so callers and the conformance harness can compare error classes with git), plus
//! where it happened: the file and the byte offset when they are known.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

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
            ErrorKind::NameConflict | ErrorKind::OldValueMismatch | ErrorKind::InvalidObject => -1,
        }
    }
}

/// The error type of every fallible operation in this crate.
///
/// ```
/// use reftable::{Error, ErrorKind};
/// let err = Error::new(ErrorKind::Format, "bad magic").at_offset(0).in_file("t.ref");
/// assert_eq!(err.kind(), ErrorKind::Format);
/// assert_eq!(err.to_string(), "t.ref: offset 0: bad magic");
/// ```
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    file: Option<PathBuf>,
    offset: Option<u64>,
    source: Option<io::Error>,
}

impl Error {
    /// A new error of `kind` with a message saying what was expected and what was found.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
            file: None,
            offset: None,
            source: None,
        }
    }

    /// A format error ("corrupt reftable file") with a message.
    pub fn format(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Format, message)
    }

    /// An API misuse error with a message.
    pub fn api(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Api, message)
    }

    /// An I/O error, keeping the underlying error as the source. `NotFound` becomes
    /// [`ErrorKind::NotExist`].
    pub fn io(err: io::Error, what: impl Into<String>) -> Error {
        let kind = if err.kind() == io::ErrorKind::NotFound {
            ErrorKind::NotExist
        } else {
            ErrorKind::Io
        };
        Error {
            kind,
            message: format!("{}: {}", what.into(), err),
            file: None,
            offset: None,
            source: Some(err),
        }
    }

    /// Attach the file this error is about (kept if one is already set).
    pub fn in_file(mut self, file: impl AsRef<Path>) -> Error {
        if self.file.is_none() {
            self.file = Some(file.as_ref().to_path_buf());
        }
        self
    }

    /// Attach the byte offset in the file where the problem is (kept if one is already set).
    pub fn at_offset(mut self, offset: u64) -> Error {
        if self.offset.is_none() {
            self.offset = Some(offset);
        }
        self
    }

    /// The class of the error.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message, without file and offset.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The file the error is about, if known.
    pub fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// The byte offset in the file, if known.
    pub fn offset(&self) -> Option<u64> {
        self.offset
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{}: ", file.display())?;
        }
        if let Some(offset) = self.offset {
            write!(f, "offset {offset}: ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_ref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
